"""wb-export's DBN and hftbacktest files against its CSV events of the same
day, event for event, each side decoded independently:

  check_formats.py CSV_DIR DBN_DIR HBT_DIR

The order actions each events.csv row should become are worked out here
from the rows alone (an order's side, price and size from its own add, as
docs/specs/dbn.md maps them); the MBO file must hold exactly those. The
MBP-1, MBP-10 and trades files must be what books rebuilt from the MBO
records say; each hftbacktest asset's L3 and L2 arrays what its MBO
records say (docs/specs/hftbacktest.md). Prints PASS/FAIL lines."""
import ast
import csv
import os
import struct
import sys
import zipfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbn_read  # noqa: E402

UNDEF = dbn_read.UNDEF_PRICE
PUBLISHER = {'NASDAQ': 2, 'BX': 3, 'PSX': 4, 'BZX': 5, 'BYX': 6, 'EDGA': 7, 'EDGX': 8,
             'NYSE': 9, 'NATIONAL': 10, 'AMERICAN': 11, 'TEXAS': 12, 'MEMX': 15, 'MIAX': 16,
             'ARCA': 43}
VENUE_OF = {v: k for k, v in PUBLISHER.items()}
fails = 0


def check(ok, what):
    global fails
    print(('PASS ' if ok else 'FAIL ') + what)
    if not ok:
        fails += 1


def price8(text):
    return int(Decimal(text) * 100000000) if text else 0


def px9(p8):
    return UNDEF if p8 is None else p8 * 10


def opposite(side):
    return {'B': 'A', 'A': 'B'}.get(side, 'N')


def expected_mbo(rows):
    """(venue, symbol, action, side, price 1e-9, size, order_id, ts_event, ts_recv, seq, line)"""
    orders = {}
    out = []
    for r in rows:
        kind, venue = r['kind'], r['venue']
        oid, qty = int(r['order_id'] or 0), int(r['qty'] or 0)
        px = price8(r['price'])
        key = (venue, oid)
        common = (int(r['exch_ts']), int(r['recv_ts']), int(r['seq']) & 0xffffffff,
                  int(r['line']) & 0xff)

        def emit(action, side, p8, size, order_id):
            out.append((venue, r['symbol'], action, side, px9(p8), size, order_id) + common)

        o = orders.get(key)
        side = o[0] if o else {'B': 'B', 'S': 'A'}.get(r['side'], 'N')
        # the resting price: the order's own, else the one the feed states
        # (a replace's or modify's price is the new one)
        rest = o[1] if o else (px or None) if kind in ('EXEC', 'REDUCE', 'DELETE') else None
        left = o[2] if o else 0
        if kind == 'ADD':
            orders[key] = [side, px, qty]
            emit('A', side, px, qty, oid)
        elif kind in ('EXEC', 'EXECP', 'REDUCE'):
            if kind != 'REDUCE':
                tpx = px if kind == 'EXECP' else rest
                emit('T', opposite(side), tpx, qty, 0)
                emit('F', side, tpx, qty, oid)
            emit('C', side, rest, qty, oid)
            if o:
                o[2] -= qty
                if o[2] <= 0:
                    del orders[key]
        elif kind == 'DELETE':
            emit('C', side, rest, left, oid)
            orders.pop(key, None)
        elif kind == 'REPLACE':
            new = int(r['ref'])
            emit('C', side, rest, left, oid)
            emit('A', side, px, qty, new)
            orders.pop(key, None)
            if o:
                orders[(venue, new)] = [side, px, qty]
        elif kind == 'MODIFY':
            emit('M', side, px, qty, oid)
            if o:
                o[1], o[2] = px, qty
        elif kind == 'TRADE':
            emit('T', {'B': 'B', 'S': 'A'}.get(r['side'], 'N'), px, qty, 0)
    return out


class Books:
    """Books rebuilt from MBO records, Databento's way: T and F change nothing."""

    def __init__(self):
        self.orders = {}   # (pub, inst, order_id) -> [side, price, size]
        self.levels = {}   # (pub, inst, side) -> {price: [size, count]}

    def side_levels(self, pub, inst, side):
        return self.levels.setdefault((pub, inst, side), {})

    def _level(self, pub, inst, side, price, dsize, dcount):
        lv = self.side_levels(pub, inst, side)
        s = lv.setdefault(price, [0, 0])
        s[0] += dsize
        s[1] += dcount
        if s[0] <= 0 and s[1] <= 0:
            del lv[price]
        return price

    def apply(self, r):
        """Apply one record; returns the (side, price) levels it changed."""
        pub, inst, a = r['publisher_id'], r['instrument_id'], r['action']
        key = (pub, inst, r['order_id'])
        o = self.orders.get(key)
        changed = []
        if a == 'A' and r['side'] in 'BA':
            self.orders[key] = [r['side'], r['price'], r['size']]
            self._level(pub, inst, r['side'], r['price'], r['size'], 1)
            changed.append((r['side'], r['price']))
        elif a == 'C' and o:
            o[2] -= r['size']
            gone = o[2] <= 0
            self._level(pub, inst, o[0], o[1], -r['size'], -1 if gone else 0)
            if gone:
                del self.orders[key]
            changed.append((o[0], o[1]))
        elif a == 'M' and o:
            self._level(pub, inst, o[0], o[1], -o[2], -1)
            changed.append((o[0], o[1]))
            o[1], o[2] = r['price'], r['size']
            if o[2] <= 0:  # nothing left displayed: gone
                del self.orders[key]
                return changed
            self._level(pub, inst, o[0], o[1], o[2], 1)
            if (o[0], o[1]) not in changed:
                changed.append((o[0], o[1]))
        elif a == 'R':
            for k in [k for k in self.orders if k[0] == pub and k[1] == inst]:
                del self.orders[k]
            for s in 'BA':
                self.levels.pop((pub, inst, s), None)
        return changed

    def top(self, pub, inst, n):
        bids = sorted(self.side_levels(pub, inst, 'B').items(), key=lambda kv: -kv[0])[:n]
        asks = sorted(self.side_levels(pub, inst, 'A').items(), key=lambda kv: kv[0])[:n]
        out = []
        for i in range(n):
            b = bids[i] if i < len(bids) else (UNDEF, [0, 0])
            a = asks[i] if i < len(asks) else (UNDEF, [0, 0])
            out.append((b[0], a[0], b[1][0], a[1][0], b[1][1], a[1][1]))
        return out

    def better(self, pub, inst, side, price):
        lv = self.side_levels(pub, inst, side)
        return sum(1 for p in lv if (p > price if side == 'B' else p < price))


def expected_mbp(mbo, n):
    """The MBP-n records the MBO records call for (docs/specs/dbn.md)."""
    books, out = Books(), []
    for r in mbo:
        pub, inst, a = r['publisher_id'], r['instrument_id'], r['action']
        if a == 'F':
            continue
        if a == 'T':  # the book the trade met: before its cancel
            rest = opposite(r['side'])
            depth = 0 if rest == 'N' or r['price'] == UNDEF else \
                min(books.better(pub, inst, rest, r['price']), n)
            out.append((r, depth, books.top(pub, inst, n)))
            continue
        books.apply(r)
        if r['side'] == 'N' or r['price'] == UNDEF:
            depth, within = 0, True
        else:
            better = books.better(pub, inst, r['side'], r['price'])
            depth, within = min(better, n), better < n
        if within:
            out.append((r, depth, books.top(pub, inst, n)))
    return out


def same_head(rec, mbo_rec):
    keys = ('publisher_id', 'instrument_id', 'ts_event', 'ts_recv', 'price', 'size', 'action',
            'side', 'sequence')
    return all(rec[k] == mbo_rec[k] for k in keys)


def flags_ok(recs):
    """F_LAST on each instrument's last record of each packet (run of equal
    channel and ts_recv), on no other."""
    bad = 0
    i = 0
    while i < len(recs):
        j = i
        key = (recs[i].get('channel_id', recs[i].get('group')), recs[i]['ts_recv'])
        while j < len(recs) and (recs[j].get('channel_id', recs[j].get('group')),
                                 recs[j]['ts_recv']) == key:
            j += 1
        seen = set()
        for k in range(j - 1, i - 1, -1):
            last = recs[k]['instrument_id'] not in seen
            seen.add(recs[k]['instrument_id'])
            if bool(recs[k]['flags'] & dbn_read.F_LAST) != last:
                bad += 1
        i = j
    return bad


def read_npz(path):
    """An .npz's data.npy, parsed from the .npy format: header dict, then rows."""
    with zipfile.ZipFile(path) as z:
        if z.namelist() != ['data.npy'] or z.testzip() is not None:
            raise ValueError('%s: not one sound data.npy' % path)
        raw = z.read('data.npy')
    if raw[:8] != b'\x93NUMPY\x01\x00':
        raise ValueError('%s: not .npy 1.0' % path)
    (hlen,) = struct.unpack_from('<H', raw, 8)
    header = ast.literal_eval(raw[10:10 + hlen].decode('latin1'))
    names = [f[0] for f in header['descr']]
    if [f[1] for f in header['descr']] != ['<u8', '<i8', '<i8', '<f8', '<f8', '<u8', '<i8',
                                           '<f8'] or header['fortran_order']:
        raise ValueError('%s: unexpected dtype %r' % (path, header['descr']))
    body = raw[10 + hlen:]
    if len(body) != header['shape'][0] * 64 or (10 + hlen) % 64:
        raise ValueError('%s: %d bytes for %r rows' % (path, len(body), header['shape']))
    return names, [row for row in struct.iter_unpack('<QqqddQqd', body)]


# hftbacktest's constants (docs/specs/hftbacktest.md)
EXCH, LOCAL, BUY, SELL = 1 << 31, 1 << 30, 1 << 29, 1 << 28
DEPTH, TRADE, CLEAR, ADD, CANCEL, MODIFY, FILL = 1, 2, 3, 10, 11, 12, 13


def side_bits(side):
    return BUY if side == 'B' else SELL if side == 'A' else 0


def expected_hbt(mbo):
    """{(venue, inst): (l3 rows, l2 rows)} from the MBO records."""
    books, out = Books(), {}
    held = None  # a replace's level, when its new order joins the same price
    for i, r in enumerate(mbo):
        key = (VENUE_OF.get(r['publisher_id'], '?'), r['instrument_id'])
        l3, l2 = out.setdefault(key, ([], []))
        a, px = r['action'], (0.0 if r['price'] == UNDEF else r['price'] / 1e9)
        o = books.orders.get((r['publisher_id'], r['instrument_id'], r['order_id']))
        qty = r['size']
        if a == 'A':
            kind = ADD
        elif a == 'C':
            left = (o[2] - r['size']) if o else 0
            kind, qty = (MODIFY, left) if left > 0 else (CANCEL, r['size'])
        else:
            kind = {'M': MODIFY, 'R': CLEAR, 'T': TRADE, 'F': FILL}[a]
        base = (kind | side_bits(r['side']) | EXCH | LOCAL, r['ts_event'], r['ts_recv'], px,
                float(qty))
        l3.append(base + (r['order_id'], 0, 0.0))
        if a in 'TR':
            l2.append(base + (0, 0, 0.0))
        changed = books.apply(r)
        nxt = mbo[i + 1] if i + 1 < len(mbo) else None
        if a == 'C' and o and nxt and nxt['action'] == 'A' and nxt['price'] == o[1] and all(
                nxt[k] == r[k] for k in ('publisher_id', 'instrument_id', 'ts_event', 'ts_recv',
                                         'sequence', 'side')):
            held = changed  # a replace at the same price: one level change, after the add
            continue
        if held is not None:
            changed, held = held, None
        for side, price in changed:
            lv = books.side_levels(r['publisher_id'], r['instrument_id'], side).get(price)
            l2.append((DEPTH | side_bits(side) | EXCH | LOCAL, r['ts_event'], r['ts_recv'],
                       price / 1e9, float(lv[0] if lv else 0), 0, 0, 0.0))
    return out


def main():
    csv_dir, dbn_dir, hbt_dir = sys.argv[1:4]
    with open(os.path.join(csv_dir, 'events.csv')) as f:
        # The table also holds what is not an order action (its '# wirebook export'
        # line first): clears, status, symbols and gaps have no MBO record of their own.
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith('#'))
                if r['kind'] not in ('CLEAR', 'STATUS', 'SYMBOL', 'GAP')]
    want = expected_mbo(rows)

    files = {}
    for schema in ('mbo', 'mbp-1', 'mbp-10', 'trades'):
        path = os.path.join(dbn_dir, schema + '.dbn.zst')
        if not os.path.exists(path):
            path = os.path.join(dbn_dir, schema + '.dbn')
        files[schema] = dbn_read.read(path)
    meta, mbo = files['mbo']
    symbol = {int(m[3]): m[0] for m in meta['mappings']}
    check(meta['version'] == 3 and meta['schema'] == 0 and meta['stype_out'] == 0 and
          sorted(meta['symbols']) == sorted(symbol.values()),
          'mbo.dbn: DBN 3 metadata, schema mbo, %d symbols mapped to instrument ids' % len(symbol))
    check(all(files[s][0]['schema'] == {'mbp-1': 1, 'mbp-10': 2, 'trades': 4}[s]
              for s in ('mbp-1', 'mbp-10', 'trades')), 'mbp-1, mbp-10, trades: their schemas')

    got = [(VENUE_OF.get(r['publisher_id'], '?'), symbol.get(r['instrument_id'], '?'),
            r['action'], r['side'], r['price'], r['size'], r['order_id'], r['ts_event'],
            r['ts_recv'], r['sequence'], r['channel_id']) for r in mbo if r['action'] != 'R']
    first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), None)
    check(len(want) > 1000 and want == got,
          'mbo.dbn: the actions of every events.csv row, in order (%d rows -> %d records)'
          % (len(rows), len(got)))
    if want != got:
        print('  first difference at %s: want %r got %r' % (
            first, want[first] if first is not None and first < len(want) else None,
            got[first] if first is not None and first < len(got) else None))
    clears = sum(1 for r in mbo if r['action'] == 'R')
    check(all(r['side'] == 'N' and r['price'] == UNDEF and r['size'] == 0
              for r in mbo if r['action'] == 'R'), 'mbo.dbn: %d cleaR records' % clears)
    bad = flags_ok(mbo)
    check(bad == 0, 'mbo.dbn: F_LAST on each instrument\'s last record of a packet (%d wrong)'
          % bad)

    trades = [r for r in mbo if r['action'] == 'T']
    tr = files['trades'][1]
    check(len(tr) == len(trades) and all(same_head(a, b) for a, b in zip(tr, trades)),
          'trades.dbn: the T records of mbo.dbn (%d)' % len(tr))

    for schema, n in (('mbp-1', 1), ('mbp-10', 10)):
        exp = expected_mbp(mbo, n)
        recs = files[schema][1]
        marks = [dict(channel_id=m['channel_id'], ts_recv=r['ts_recv'], flags=r['flags'],
                      instrument_id=r['instrument_id']) for (m, _, _), r in zip(exp, recs)]
        ok = len(exp) == len(recs)
        first = None
        for i, ((m, depth, levels), r) in enumerate(zip(exp, recs)):
            if not (same_head(r, m) and r['depth'] == depth and
                    [tuple(lv) for lv in r['levels']] == levels):
                ok, first = False, i
                break
        check(ok, '%s.dbn: a record for each change within %d level(s) and each trade, its '
              'levels those of books rebuilt from mbo.dbn (%d records)' % (schema, n, len(recs)))
        if not ok:
            print('  %d expected, %d written; first difference at %s' % (len(exp), len(recs),
                                                                         first))
            if first is not None:
                print('  want', exp[first][1], exp[first][2], '\n  got ', recs[first])
        bad = flags_ok(marks)
        check(bad == 0, '%s.dbn: F_LAST on each instrument\'s last record of a packet (%d '
              'wrong)' % (schema, bad))

    exp = expected_hbt(mbo)
    l3_ok = l2_ok = True
    assets = 0
    for (venue, inst), (l3, l2) in sorted(exp.items()):
        sym = symbol.get(inst, str(inst))
        for level, rows_want in (('l3', l3), ('l2', l2)):
            path = os.path.join(hbt_dir, '%s.%s.%s.npz' % (sym, venue, level))
            names, rows_got = read_npz(path) if os.path.exists(path) else (None, [])
            if rows_got != rows_want:
                if level == 'l3':
                    l3_ok = False
                else:
                    l2_ok = False
                print('  %s: %d rows, want %d' % (path, len(rows_got), len(rows_want)))
        assets += 1
    files_written = len([f for f in os.listdir(hbt_dir) if f.endswith('.npz')])
    check(l3_ok and files_written == 2 * assets,
          'hftbacktest L3: every asset\'s rows from its MBO records (%d assets)' % assets)
    check(l2_ok, 'hftbacktest L2: depth, trade and clear rows from books rebuilt from MBO')
    try:
        import numpy as np
    except ImportError:
        print('SKIP numpy not installed: the .npz files read with zipfile and struct only')
    else:
        dt = np.dtype([('ev', 'u8'), ('exch_ts', 'i8'), ('local_ts', 'i8'), ('px', 'f8'),
                       ('qty', 'f8'), ('order_id', 'u8'), ('ival', 'i8'), ('fval', 'f8')],
                      align=True)
        ok = True
        for f in sorted(os.listdir(hbt_dir)):
            a = np.load(os.path.join(hbt_dir, f))['data']
            ok = ok and a.dtype == dt
        check(ok, 'numpy loads every .npz as hftbacktest\'s event_dtype')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
