#!/usr/bin/env python3
"""Orders at a price and queue positions, checked against a separate model.

The model here is a plain FIFO per price, written from the feeds'
semantics alone (wirebook/event.h), reading the day as wb-dump prints it.
The library's side is tests/queue/queue_trace.c: the same pcap through the
venue books and the order detail, read back with libwirebook's
wb_order_levels / wb_orders_at / wb_queue_position. On generated days of
every direct-feed protocol (ITCH, PITCH, XDP) and three ways of choosing
the symbols (all; none, with orders tracked and symbols turned on mid-day;
a watch list):
  - every tracked order's queue position and state after every event
    (each change, in order), and
  - at the end of the day, every level of every symbol with detail, its
    totals and its orders in time priority (id, shares, join time,
    attribution)
must be equal. On the day with every symbol, virtual orders placed at a
few points of the day (wb_virtual_place) are followed too: the model
puts each one behind the orders at its price at placement, drops from
"ahead" any order that leaves or loses its priority, fills it by an
execution at its price beyond the shares ahead of it or whole by an
execution on its side at a worse price, refuses one marketable at
placement; its state, position and fills after every event must be the
library's. Prints the events and the positions compared; any difference
fails.

  B=build python3 tests/queue/queue_ref.py
"""
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict
from decimal import Decimal

B = os.environ.get("B", "build")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FEEDS = os.path.join(REPO, "feeds.conf")

DAYS = [
    ("itch", ["--venues", "nasdaq"]),
    ("pitch", ["--venues", "bzx,byx,edgx,edga"]),
    ("xdp", ["--venues", "nyse,arca"]),
]
MESSAGES = 20000
SYMBOLS = 40


def parse(line):
    """One wb-dump line: (time, venue, sym, kind, fields dict)."""
    tok = line.split()
    if len(tok) < 5:
        return None
    when, venue, sym, kind = tok[1], tok[2].split("/")[0], int(tok[3][2:]), tok[4]
    f = {"flags": ""}
    rest = tok[5:]
    nums = []
    i = 0
    while i < len(rest):
        t = rest[i]
        if t.startswith("ref="):
            f["id"] = int(t[4:])
        elif t.startswith("new="):
            f["new"] = int(t[4:])
        elif t.startswith("qty="):
            f["qty"] = int(t[4:])
        elif t.startswith("mpid="):
            f["mpid"] = t[5:]
        elif t.startswith("f="):
            f["flags"] = t[2:]
        elif t.startswith("key=") and kind == "SYMBOL":
            pass
        elif t == "@":
            f["price"] = rest[i + 1]
            i += 1
        elif t in ("B", "S"):
            f["side"] = t
        elif t.isdigit():
            nums.append(int(t))
        elif kind == "SYMBOL" and "ticker" not in f:
            f["ticker"] = t
        i += 1
    if kind in ("ADD", "REPLACE", "MODIFY") and nums:
        f["qty"] = nums[0]
    return when, venue, sym, kind, f


class Model:
    """A FIFO per (venue, symbol, side, price); orders by (venue, id)."""

    def __init__(self):
        self.levels = {}    # (venue, sym, side, price) -> OrderedDict id -> [qty, join_event, join_time, mpid]
        self.orders = {}    # (venue, id) -> (sym, side, price)

    def add(self, venue, oid, sym, side, price, qty, n, when, mpid="-"):
        if when == "00:00:00.000000000":
            # No exchange time (a PITCH unit before its first Time message):
            # the library's join time 0 reads "unknown", as before detail began.
            when = "-"
        key = (venue, sym, side, price)
        self.levels.setdefault(key, OrderedDict())[oid] = [qty, n, when, mpid]
        self.orders[(venue, oid)] = (sym, side, price)

    def remove(self, venue, oid):
        sym, side, price = self.orders.pop((venue, oid))
        key = (venue, sym, side, price)
        q = self.levels[key].pop(oid)
        if not self.levels[key]:
            del self.levels[key]
        return q

    def entry(self, venue, oid):
        sym, side, price = self.orders[(venue, oid)]
        return self.levels[(venue, sym, side, price)][oid]

    def apply(self, n, ev, gone):
        """Apply event n; gone(venue, id, how) for each order that leaves."""
        when, venue, sym, kind, f = ev
        if "sip" in f["flags"]:
            return
        if kind == "CLEAR":
            for (v, oid), (s, _, _) in list(self.orders.items()):
                if v == venue and (sym == 0 or s == sym):
                    self.remove(v, oid)
                    gone(v, oid, "cancelled")
            return
        if kind not in ("ADD", "EXEC", "EXECP", "REDUCE", "DELETE", "REPLACE", "MODIFY"):
            return
        oid = f["id"]
        if kind == "ADD":
            if (venue, oid) in self.orders or f["qty"] == 0 or f.get("side") not in ("B", "S"):
                return
            self.add(venue, oid, sym, f["side"], f["price"], f["qty"], n, when, f.get("mpid", "-"))
            return
        if (venue, oid) not in self.orders:
            return
        e = self.entry(venue, oid)
        if kind in ("EXEC", "EXECP", "REDUCE"):
            take = min(f["qty"], e[0])
            e[0] -= take
            filled = take if kind != "REDUCE" else 0
            if e[0] == 0:
                self.remove(venue, oid)
                gone(venue, oid, "filled" if kind != "REDUCE" else "cancelled", filled)
            elif filled:
                gone(venue, oid, None, filled)
        elif kind == "DELETE":
            self.remove(venue, oid)
            gone(venue, oid, "cancelled")
        elif kind == "REPLACE":
            osym, oside, _ = self.orders[(venue, oid)]
            self.remove(venue, oid)
            gone(venue, oid, "cancelled")
            new = f["new"]
            if (new != oid and (venue, new) in self.orders) or f["qty"] == 0:
                return
            self.add(venue, new, osym, oside, f["price"], f["qty"], n, when)
        elif kind == "MODIFY":
            osym, oside, oprice = self.orders[(venue, oid)]
            if f["qty"] == 0:
                self.remove(venue, oid)
                gone(venue, oid, "cancelled")
                return
            if oprice == f["price"] and "keeps-priority" in f["flags"]:
                e[0] = f["qty"]
                return
            mpid = e[3]
            self.remove(venue, oid)
            self.add(venue, oid, osym, oside, f["price"], f["qty"], n, when, mpid)

    def position(self, venue, oid):
        sym, side, price = self.orders[(venue, oid)]
        lvl = self.levels[(venue, sym, side, price)]
        total = sum(x[0] for x in lvl.values())
        ahead_sh = ahead_n = 0
        for k, x in lvl.items():
            if k == oid:
                q = x[0]
                return ahead_sh, ahead_n, total - ahead_sh - q, len(lvl) - ahead_n - 1, total, len(lvl), q
            ahead_sh += x[0]
            ahead_n += 1
        raise AssertionError("order not on its level")


def queued_behind(events):
    """The ADDs that join a queue already there (a position worth following)."""
    m, out = Model(), []
    for n, ev in enumerate(events, 1):
        when, venue, sym, kind, f = ev
        if kind == "ADD" and (venue, sym, f.get("side"), f.get("price")) in m.levels:
            out.append((venue, f["id"]))
        m.apply(n, ev, lambda *a: None)
    return out


def choose_virtuals(events):
    """Virtual orders at a few points of the day, at prices with a queue:
    (at, venue, sym, side, price, qty, cancel_at). One joins a queue and
    is cancelled later; one is placed at the opposite side's price
    (marketable: refused)."""
    m, out, k = Model(), [], 0
    points = [len(events) * i // 10 for i in range(1, 9)]
    for n, ev in enumerate(events, 1):
        if n in points:
            keys = sorted(key for key, lvl in m.levels.items() if len(lvl) >= 2)
            if keys:
                venue, sym, side, price = keys[(k * 7) % len(keys)]
                cancel = n + len(events) // 20 if k == 1 else 0
                out.append((n, venue, sym, side, price, 100 + 37 * k, cancel))
                if k == 2:
                    out.append((n, venue, sym, "S" if side == "B" else "B", price, 50, 0))
                k += 1
        m.apply(n, ev, lambda *a: None)
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True, **kw).stdout


class Virtual:
    """A virtual order in the model: the ids ahead of it, what it has left and got."""

    def __init__(self, k, spec):
        self.k, self.spec = k, spec
        self.venue, self.sym, self.side, self.price, self.qty = spec[1:6]
        self.state, self.ahead, self.filled, self.fills, self.last_fill = "unknown", set(), 0, 0, 0

    def live(self):
        return self.state in ("resting", "partly-filled")

    def level(self, m):
        return m.levels.get((self.venue, self.sym, self.side, self.price), OrderedDict())

    def position(self, m):
        lvl = self.level(m)
        a = [x[0] for oid, x in lvl.items() if oid in self.ahead]
        b = [x[0] for oid, x in lvl.items() if oid not in self.ahead]
        return sum(a), len(a), sum(b), len(b), sum(a) + sum(b), len(a) + len(b)

    def place(self, m):
        other = "S" if self.side == "B" else "B"
        p = Decimal(self.price)
        for (v, s, side, price) in m.levels:
            if v == self.venue and s == self.sym and side == other and (
                    Decimal(price) <= p if self.side == "B" else Decimal(price) >= p):
                self.state, self.qty = "refused", 0
                return
        self.state = "resting"
        self.ahead = set(self.level(m))

    def execution(self, m, venue, oid, take):
        """Before the execution of take shares of (venue, oid) is applied."""
        if not self.live() or (venue, oid) not in m.orders:
            return 0
        sym, side, price = m.orders[(venue, oid)]
        if sym != self.sym or side != self.side or venue != self.venue:
            return 0
        if price == self.price:
            return min(self.qty, max(0, take - self.position(m)[0]))
        if (Decimal(price) < Decimal(self.price)) if self.side == "B" else (Decimal(price) > Decimal(self.price)):
            return self.qty
        return 0

    def fill(self, shares):
        self.qty -= shares
        self.filled += shares
        self.fills += 1
        self.last_fill = shares
        self.state = "filled" if not self.qty else "partly-filled"

    def row(self, m):
        pos = self.position(m) if self.live() else (0,) * 6
        return (self.state,) + pos + (self.qty, self.filled, self.fills, self.last_fill)


def reference(events, tracked, detail_syms, enable_at, auto, virtuals=()):
    """The model's trace: T lines as queue_trace prints them, and the end
    books of the symbols with detail. detail_syms None: all; enable_at:
    sym -> event it was turned on at; auto: symbols turn on at a tracked
    order's first appearance."""
    m = Model()
    state = {t: ["unknown", 0] for t in tracked}   # state, filled
    last = {}
    out = []
    on_since = dict(enable_at)      # sym -> first event whose joins are known
    virt = [Virtual(k, spec) for k, spec in enumerate(virtuals)]
    remove = m.remove

    def remove_leaving_queue(venue, oid):
        for v in virt:
            if v.venue == venue:
                v.ahead.discard(oid)
        return remove(venue, oid)
    m.remove = remove_leaving_queue

    def gone(venue, oid, how, filled=0):
        t = (venue, oid)
        if t in state and state[t][0] in ("resting", "partly-filled"):
            state[t][1] += filled
            if how:
                state[t][0] = how
            elif state[t][1]:
                state[t][0] = "partly-filled"

    for n, ev in enumerate(events, 1):
        for v in virt:
            if v.spec[0] == n:
                v.place(m)
            if v.spec[6] == n and v.live():
                v.state = "cancelled"
        fills = []
        when, venue, sym, kind, f = ev
        if kind in ("EXEC", "EXECP") and "sip" not in f["flags"] and (venue, f["id"]) in m.orders:
            take = min(f["qty"], m.entry(venue, f["id"])[0])
            fills = [(v, v.execution(m, venue, f["id"], take)) for v in virt]
        m.apply(n, ev, gone)
        for v, shares in fills:
            if shares:
                v.fill(shares)
        for t in tracked:
            if state[t][0] == "unknown" and t in m.orders:
                state[t][0] = "resting"
                sym = m.orders[t][0]
                if auto and detail_syms is not None and sym not in detail_syms and on_since.get(sym, n + 2) > n + 1:
                    on_since[sym] = n + 1   # seeded after this event: its joins unknown
            st = state[t]
            if st[0] in ("resting", "partly-filled"):
                pos = m.position(*t)
                row = (st[0],) + pos[:6] + (pos[6], st[1])
            else:
                row = (st[0], 0, 0, 0, 0, 0, 0, 0, st[1])
            if last.get(t) != row:
                last[t] = row
                out.append("T %d %s %d %s" % (n, t[0], t[1], " ".join(str(x) for x in row[:1] + row[1:])))
        for v in virt:
            if v.spec[0] > n:
                continue
            row = v.row(m)
            if last.get(("V", v.k)) != row:
                last[("V", v.k)] = row
                out.append("V %d %d %s" % (n, v.k, " ".join(str(x) for x in row)))
    books = {}
    for (venue, sym, side, price), lvl in m.levels.items():
        if detail_syms is not None and sym not in detail_syms and sym not in on_since:
            continue
        since = on_since.get(sym, 0)
        books[(venue, sym, side, price)] = (
            sum(x[0] for x in lvl.values()), len(lvl),
            # Seeded from the venue books, which keep neither: no join time, no attribution.
            [(oid, x[0], x[2], x[3]) if x[1] >= since else (oid, x[0], "-", "-") for oid, x in lvl.items()])
    return out, books


def library(trace_out):
    t, books, events = [], {}, None
    key = None
    for line in trace_out.splitlines():
        p = line.split()
        if p[0] in ("T", "V"):
            t.append(line)
        elif p[0] == "L":
            key = (p[1], int(p[2]), p[3], p[4])
            books[key] = (int(p[5]), int(p[6]), [])
        elif p[0] == "O":
            books[key][2].append((int(p[1]), int(p[2]), p[3], p[4]))
        elif p[0] == "E":
            events = int(p[1])
    return t, books, events


def compare(name, events, tracked, ref, lib):
    rt, rb = ref
    lt, lb, lev = lib
    bad = 0
    if lev != len(events):
        print("%s: events: library %s, model %d" % (name, lev, len(events)))
        bad += 1
    for i, (a, b) in enumerate(zip(rt, lt)):
        if a != b:
            print("%s: queue position %d differs:\n  model   %s\n  library %s" % (name, i, a, b))
            bad += 1
            break
    if len(rt) != len(lt):
        print("%s: %d position changes in the model, %d in the library" % (name, len(rt), len(lt)))
        bad += 1
    for k in sorted(set(rb) | set(lb)):
        if rb.get(k) != lb.get(k):
            print("%s: level %s differs:\n  model   %s\n  library %s" % (name, k, rb.get(k), lb.get(k)))
            bad += 1
            if bad > 5:
                break
    # best first within a side, as the library prints them
    orders = sum(len(v[2]) for v in rb.values())
    nv = len(set(l.split()[2] for l in rt if l.startswith("V ")))
    if nv:
        final = {}
        for l in rt:
            if l.startswith("V "):
                final[l.split()[2]] = l.split()[3]
        fills = sum(1 for i, l in enumerate(rt) if l.startswith("V ") and l.split()[3] in ("partly-filled", "filled"))
        print("%s: virtual orders end %s; %d rows filled or partly" % (
            name, " ".join("%s=%d" % (st, list(final.values()).count(st)) for st in sorted(set(final.values()))), fills))
    print("%s: %d events, %d tracked orders, %d virtual orders, %d position changes, %d levels, %d orders: %s" % (
        name, len(events), len(tracked), nv, len(rt), len(rb), orders, "equal" if not bad else "DIFFERENT"))
    return bad


def live(pcap, model_books):
    """wirebookd --order-detail all on the day, read through the Python
    package (wirebook.orders): its end books must be the model's (ids,
    shares, attribution, in order; join times are checked above)."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    import wirebook
    shm = "wb-queue-test-%d" % os.getpid()
    err = tempfile.TemporaryFile(mode="w+")
    wbd = subprocess.Popen([os.path.join(B, "wirebookd"), "--pcap", pcap, "--feeds", FEEDS, "--shm", shm,
                            "--no-pin", "--order-detail", "all"], stdout=subprocess.DEVNULL, stderr=err)
    try:
        for _ in range(600):
            err.seek(0)
            if "source ended" in err.read():
                break
            if wbd.poll() is not None:
                break
            subprocess.run(["sleep", "0.1"])
        else:
            print("live: wirebookd did not finish the day")
            return 1
        books = {}
        with wirebook.orders(shm, raw=True) as o, wirebook.open(shm) as book:
            venues = sorted(set(k[0] for k in model_books))
            for sym, ticker in enumerate(book.symbols(), 1):
                for v in venues:
                    for side in "BS":
                        for lvl in o.levels(ticker, v, side):
                            orders = o.at(ticker, v, side, lvl.price)
                            from decimal import Decimal as D
                            price = str((D(lvl.price) / D(100000000)).normalize())
                            books[(v, book._sym(ticker), side, price)] = (
                                lvl.qty, lvl.orders, [(x.order_id, x.qty, x.mpid or "-") for x in orders])
    finally:
        wbd.terminate()
        wbd.wait()
    want = {}
    for k, (qty, n, orders) in model_books.items():
        price = str(Decimal(k[3]).normalize())
        want[(k[0], k[1], k[2], price)] = (qty, n, [(x[0], x[1], x[3]) for x in orders])
    bad = sum(1 for k in set(want) | set(books) if want.get(k) != books.get(k))
    print("live (wirebookd --order-detail all, Python wirebook.orders): %d levels, %d orders: %s" % (
        len(books), sum(len(v[2]) for v in books.values()), "equal" if not bad else "%d levels DIFFERENT" % bad))
    return 1 if bad else 0


def main():
    tmp = tempfile.mkdtemp(prefix="wb-queue-test.")
    bad = 0
    for proto, venues in DAYS:
        pcap = os.path.join(tmp, proto + ".pcap")
        run([os.path.join(B, "wb-gen"), "-n", str(MESSAGES), "--symbols", str(SYMBOLS), "--feeds", FEEDS,
             "--until", "09:30:08", "-o", pcap] + venues, stderr=subprocess.DEVNULL)
        dump = run([os.path.join(B, "wb-dump"), "--feeds", FEEDS, pcap], stderr=subprocess.DEVNULL)
        events = [e for e in (parse(l) for l in dump.splitlines()) if e]
        adds = queued_behind(events)
        tickers = OrderedDict((e[4]["ticker"], e[2]) for e in events if e[3] == "SYMBOL")
        step = max(1, len(adds) // 12)
        tracked = list(OrderedDict.fromkeys(adds[step // 2::step]))[:12] + [(adds[0][0], 999999999)]
        track_arg = ",".join("%s:%d" % t for t in tracked)
        trace = os.path.join(B, "test", "queue_trace")
        # 1: every symbol
        virtuals = choose_virtuals(events)
        virtual_arg = ",".join("%d:%s:%d:%s:%s:%d" % v[:6] for v in virtuals)
        cancel_arg = ",".join("%d:%d" % (v[6], k) for k, v in enumerate(virtuals) if v[6])
        out = run([trace, "--feeds", FEEDS, "--detail", "all", "--track", track_arg, "--virtual", virtual_arg,
                   "--virtual-cancel", cancel_arg, pcap])
        ref = reference(events, tracked, None, {}, False, virtuals)
        bad += compare(proto + " all", events, tracked, ref, library(out))
        if proto != "xdp":  # one builder run per protocol family is enough; XDP's is the same code
            bad += live(pcap, ref[1])
        # 2: none at start; symbols turned on mid-day by request, and by tracking
        syms = sorted(set(tickers.values()))[:3]
        at = {syms[0]: len(events) // 3, syms[1]: len(events) // 2}
        few = tracked[:4]
        out = run([trace, "--feeds", FEEDS, "--detail", "none", "--track", ",".join("%s:%d" % t for t in few),
                   "--enable-at", ",".join("%d:%d" % (n, s) for s, n in at.items()), pcap])
        bad += compare(proto + " mid-day", events, few, reference(events, few, set(), at, True), library(out))
        # 3: a watch list of tickers
        watch = list(tickers)[-3:]
        out = run([trace, "--feeds", FEEDS, "--detail", ",".join(watch), pcap])
        bad += compare(proto + " watch list", events, [],
                       reference(events, [], set(tickers[t] for t in watch), {}, False), library(out))
    if bad:
        print("queue-test: FAILED (kept %s)" % tmp)
        sys.exit(1)
    subprocess.run(["rm", "-rf", tmp])
    print("queue-test: ok")


if __name__ == "__main__":
    main()
