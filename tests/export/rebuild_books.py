#!/usr/bin/env python3
"""Rebuild every book of an exported day from its order-level table alone.

usage: rebuild_books.py FILE.h5 [--times N] [--seed S]

A reference written from the events table's description (tools/wb-export.c,
struct row_event), not from the builder's code: orders by (venue, order
id), levels by (venue, symbol, side, price). At N random times (and at the
end of the day) every venue's top (the bbo table) and every symbol's
consolidated book (the book table, wb-export --depth) must equal what the
events before that time rebuild. Prints one line per time, and exits 1 on
any difference.
"""
import argparse
import random
import sys

import h5py
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--times", type=int, default=10)
ap.add_argument("--seed", type=int, default=None)
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)

f = h5py.File(args.file, "r")
assert int(f.attrs["schema_version"]) >= 2, "an export of schema 2 or later"
dates = [g for g in f if isinstance(f[g], h5py.Group)]
if not dates:
    sys.exit("no trading date in the file")
bad = 0
for date in dates:
    g = f[date]
    ev = g["events"][:]
    ev = ev[np.argsort(ev["event_no"], kind="stable")]  # decode order, whatever the layout
    book = g["book"][:] if "book" in g else None
    bbo = g["bbo"][:]
    if book is None:
        sys.exit("export with --depth N for the book table")
    depth = len([n for n in book.dtype.names if n.startswith("bid_qty_")])
    kinds = {k: i for i, k in enumerate(np.unique(ev["kind"]))}
    n_clear = int((ev["kind"] == b"CLEAR").sum())

    # checkpoints: the last event_no at or before each random time, and the end
    t0, t1 = int(ev["recv_ts"][0]), int(ev["recv_ts"][-1])
    times = sorted(rng.randrange(t0, t1 + 1) for _ in range(args.times)) + [t1]
    cuts = [int(ev["event_no"][np.searchsorted(ev["recv_ts"], t, side="right") - 1]) for t in times]

    orders = {}   # (venue, id) -> [symbol, side, price, qty]
    levels = {}   # (venue, symbol, side) -> {price: [qty, orders]}
    venues_of = {}  # symbol -> venues that had a level

    def level(v, s, side):
        k = (v, s, side)
        if k not in levels:
            levels[k] = {}
            venues_of.setdefault(s, set()).add(v)
        return levels[k]

    def add(v, oid, s, side, price, qty):
        if (v, oid) in orders or side not in (b"B", b"S") or qty <= 0:
            return
        orders[(v, oid)] = [s, side, price, qty]
        L = level(v, s, side).setdefault(price, [0, 0])
        L[0] += qty
        L[1] += 1

    def take(v, oid, qty):  # qty None: the whole order
        o = orders.get((v, oid))
        if o is None:
            return None
        s, side, price, left = o
        q = left if qty is None or qty >= left else qty
        lv = level(v, s, side)
        lv[price][0] -= q
        o[3] -= q
        if o[3] <= 0:
            lv[price][1] -= 1
            del orders[(v, oid)]
        if lv[price][1] == 0:
            del lv[price]
        return o

    def clear(v, s):
        for k in [k for k in orders if k[0] == v and (s == b"" or orders[k][0] == s)]:
            del orders[k]
        for k in [k for k in levels if k[0] == v and (s == b"" or k[1] == s)]:
            levels[k] = {}

    def top(v, s, side):
        lv = levels.get((v, s, side), {})
        if not lv:
            return (0, 0, 0)
        p = max(lv) if side == b"B" else min(lv)
        return (p, lv[p][0], lv[p][1])

    def merged(s, side, n):
        tot = {}
        for v in venues_of.get(s, ()):
            for p, (q, _) in levels.get((v, s, side), {}).items():
                tot[p] = tot.get(p, 0) + q
        ps = sorted(tot, reverse=side == b"B")[:n]
        return [(p, tot[p]) for p in ps] + [(0, 0)] * (n - len(ps))

    def last_rows(table, cut, key):
        rows = table[table["event_no"] <= cut]
        keys = key(rows)
        _, first = np.unique(keys[::-1], return_index=True)  # last row per key
        return rows[::-1][first]

    cols = [ev[c].tolist() for c in ("event_no", "venue", "symbol", "kind", "side", "order_id",
                                     "price", "qty", "ref")]
    i, n = 0, len(ev)
    for t, cut in zip(times, cuts):
        while i < n and cols[0][i] <= cut:
            _, v, s, k, side, oid, price, qty, ref = (c[i] for c in cols)
            if k == b"ADD":
                add(v, oid, s, side, price, qty)
            elif k in (b"EXEC", b"EXECP", b"REDUCE"):
                take(v, oid, qty)
            elif k == b"DELETE":
                take(v, oid, None)
            elif k == b"REPLACE":
                o = take(v, oid, None)
                if o is not None:
                    add(v, ref, o[0], o[1], price, qty)
            elif k == b"MODIFY":
                o = take(v, oid, None)
                if o is not None and qty > 0:
                    add(v, oid, o[0], o[1], price, qty)
            elif k == b"CLEAR":
                clear(v, s)
            i += 1
        diffs = 0
        # every venue's top, as the bbo table last had it
        seen = set()
        for r in last_rows(bbo, cut, lambda r: np.char.add(r["symbol"], r["venue"])):
            s, v = r["symbol"], r["venue"]
            seen.add((v, s))
            want = (tuple(int(x) for x in top(v, s, b"B")), tuple(int(x) for x in top(v, s, b"S")))
            got = ((int(r["bid"]), int(r["bid_qty"]), int(r["bid_orders"])),
                   (int(r["ask"]), int(r["ask_qty"]), int(r["ask_orders"])))
            if got != want:
                diffs += 1
                if diffs <= 5:
                    print(f"  {date} bbo {s.decode()} {v.decode()} at event {cut}: table {got}, rebuilt {want}")
        for (v, s, side), lv in levels.items():  # a rebuilt book the bbo table never had
            if lv and (v, s) not in seen:
                diffs += 1
                if diffs <= 5:
                    print(f"  {date} bbo {s.decode()} {v.decode()}: rebuilt {len(lv)} levels, no bbo row")
        # every symbol's consolidated book, as the book table last had it
        books = {r["symbol"]: r for r in last_rows(book, cut, lambda r: r["symbol"])}
        for s in set(books) | set(venues_of):
            r = books.get(s)
            for side, name in ((b"B", "bid"), (b"S", "ask")):
                want = merged(s, side, depth)
                got = [(int(r[f"{name}_{j + 1}"]), int(r[f"{name}_qty_{j + 1}"])) if r is not None
                       else (0, 0) for j in range(depth)]
                if got != want:
                    diffs += 1
                    if diffs <= 5:
                        print(f"  {date} book {s.decode()} {name} at event {cut}: table {got[:3]}, rebuilt {want[:3]}")
        print(f"{date} recv_ts {t} (event {cut}): {len(seen)} venue books, {len(books)} symbol books, "
              f"{diffs} differ")
        bad += diffs
    print(f"{date}: {n} rows ({n_clear} CLEAR), {len(orders)} orders live at the end; seed {seed}")
print("ok" if bad == 0 else f"{bad} differences")
sys.exit(1 if bad else 0)
