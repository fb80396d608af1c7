#!/usr/bin/env python3
"""A simulation's research output (issue 25): the fills and queue tables of
a run beside wb-export's, checked against the CSV the run wrote.

  - examples/join_bid against wirebookd --lockstep detail on a generated
    PITCH day writes --fills and --queue; wb-export --sim-fills --sim-queue
    puts them into the day's HDF5 export: every row and every column of
    the fills and queue datasets equals the CSV's (prices exactly, in
    1e-8 dollars), with wb-export's types (ids uint64, prices and times
    int64, fixed strings) and its chunking and filters;
  - the same as CSV tables (wb-export's fills.csv, queue.csv) say the same
    values, and read back through --sim-fills as the same HDF5 rows;
  - wirebook.simulate() with a Python strategy: sim.export() gives the
    tables of sim.fills and sim.queue, and wirebook.read(table="fills")
    reads them;
  - a file that is not the table (wrong header, a field of the wrong type)
    and a format without tables are refused with exit 2.

  B=build python3 tests/simout/simout_test.py
"""
import csv
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
B = os.environ.get("B", "build")
FEEDS = os.path.join(REPO, "feeds.conf")

# the columns and HDF5 types the tables must have (docs/simulate.md)
FILLS = [("order", "u4"), ("virtual_id", "u8"), ("event", "u8"), ("symbol", "S9"), ("venue", "S12"),
         ("side", "S1"), ("price", "i8"), ("fill_qty", "u8"), ("filled_qty", "u8"), ("left_qty", "u8"),
         ("fill_exch_ts", "i8"), ("fill_recv_ts", "i8"), ("fill_seq", "u8"), ("state", "S16")]
QUEUE = [("order", "u4"), ("event", "u8"), ("state", "S16"), ("shares_ahead", "u8"), ("orders_ahead", "u4"),
         ("shares_behind", "u8"), ("orders_behind", "u4"), ("level_qty", "u8"), ("level_orders", "u4"),
         ("left_qty", "u8"), ("filled_qty", "u8")]

bad = 0


def check(ok, what):
    global bad
    print("simout: %s: %s" % (what, "ok" if ok else "FAILED"))
    bad += not ok


def csv_rows(path):
    """A CSV's header and rows, wb-export's comment line skipped."""
    with open(path, newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.reader(lines))
    return rows[0], rows[1:]


def value(text, kind):
    """A CSV field as the HDF5 column holds it."""
    if kind == "price":
        return int(Decimal(text or "0") * 10**8)
    if kind[0] in "ui":
        return int(text)
    return text.encode()


def same_as_csv(ds, path, columns, what):
    """Every row and column of dataset ds equals the CSV's; the types are wb-export's."""
    header, rows = csv_rows(path)
    want_dtype = [(n, "<" + t if t[0] != "S" else "|" + t) for n, t in columns]
    got_dtype = [(n, ds.dtype.fields[n][0].str) for n in ds.dtype.names]
    ok = header == [n for n, _ in columns] and got_dtype == want_dtype
    if not ok:
        print("  %s: header %s, dtype %s" % (what, header, got_dtype))
    data = ds[:]
    ok = ok and len(data) == len(rows) and len(rows) > 0
    for i, (r, d) in enumerate(zip(rows, data)):
        for (name, t), text in zip(columns, r):
            want = value(text, "price" if name == "price" else t)
            got = d[name].item() if t[0] != "S" else bytes(d[name])
            if got != want:
                if ok:
                    print("  %s row %d column %s: file %r, CSV %r" % (what, i, name, got, want))
                ok = False
    check(ok, "%s: %d rows, every column equal to %s" % (what, len(rows), os.path.basename(path)))


def same_layout(g, name):
    """Chunked, shuffled and deflated as wb-export's own tables are."""
    ds, ev = g[name], g["events"]
    ok = (ds.chunks is not None and ds.compression == ev.compression == "gzip" and ds.shuffle and
          ds.maxshape == (None,))
    check(ok, "%s: chunks %s, %s, shuffle %s, as the events table" % (name, ds.chunks, ds.compression, ds.shuffle))


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)


def join_bid_run(tmp, pcap):
    """wirebookd --lockstep and join_bid --fills --queue: the two CSV paths."""
    shm = "wb-simout-test-%d" % os.getpid()
    fills, queue = os.path.join(tmp, "fills.csv"), os.path.join(tmp, "queue.csv")
    wbd = subprocess.Popen([os.path.join(B, "wirebookd"), "--pcap", pcap, "--feeds", FEEDS, "--shm", shm, "--no-pin",
                            "--order-detail", "all", "--expected-orders", "65536", "--exit-at-eof",
                            "--lockstep", "detail"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        subprocess.run([os.path.join(B, "examples", "join_bid"), "--book", shm, "--fills", fills, "--queue", queue],
                       stdout=subprocess.DEVNULL, timeout=120, check=True)
    finally:
        if wbd.wait(timeout=60) != 0:
            raise SystemExit("simout-test: wirebookd exited %s" % wbd.returncode)
    return fills, queue


def python_run(pcap, h5):
    """wirebook.simulate() with a small strategy, exported: (fills CSV, queue CSV) it wrote."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.environ.setdefault("WIREBOOK_LIB", os.path.join(B, "libwirebook.so"))
    os.environ.setdefault("WIREBOOKD", os.path.join(B, "wirebookd"))
    os.environ.setdefault("WB_EXPORT", os.path.join(B, "wb-export"))
    import wirebook
    with wirebook.simulate(pcap, feeds=FEEDS, args=["--expected-orders", "65536"]) as sim:
        for x in sim:
            if isinstance(x, wirebook.Fill):
                continue
            if x.kind != "ADD" or x.side != "B" or sim.live(x.instrument) or len(sim._mine) >= 60:
                continue
            lv = sim.orders.levels(sim.ticker(x.instrument), x.venue, "B")
            if lv:
                sim.place(x.instrument, x.venue, "B", lv[0].price, 100)
    sim.export(h5)
    fills, queue = h5 + ".fills.csv", h5 + ".queue.csv"
    sim.write_fills(fills)
    sim.write_queue(queue)
    return wirebook, sim, fills, queue


def main():
    import h5py
    tmp = tempfile.mkdtemp(prefix="wb-simout-test.")
    pcap = os.path.join(tmp, "day.pcap")
    run([os.path.join(B, "wb-gen"), "-n", "20000", "--symbols", "40", "--feeds", FEEDS, "--until", "09:30:08",
         "--venues", "bzx,byx,edgx,edga", "-o", pcap], check=True)
    fills, queue = join_bid_run(tmp, pcap)
    export = [os.path.join(B, "wb-export"), "--quiet", "--feeds", FEEDS]

    # HDF5: the day's tables and the run's in one file
    h5 = os.path.join(tmp, "day.h5")
    r = run(export + ["--format", "hdf5", "--sim-fills", fills, "--sim-queue", queue, pcap, h5])
    check(r.returncode == 0, "wb-export --format hdf5 --sim-fills --sim-queue exits 0 (%s)" % r.stderr.strip())
    with h5py.File(h5, "r") as f:
        (date,) = list(f)
        g = f[date]
        check("events" in g and "fills" in g and "queue" in g, "%s holds events, fills and queue" % date)
        same_as_csv(g["fills"], fills, FILLS, "hdf5 fills")
        same_as_csv(g["queue"], queue, QUEUE, "hdf5 queue")
        same_layout(g, "fills")
        same_layout(g, "queue")
        join_rows = (g["fills"][:], g["queue"][:])

    # CSV: fills.csv and queue.csv beside the day's, the same values; and
    # read back through --sim-fills, the same HDF5 rows
    out = os.path.join(tmp, "csv")
    r = run(export + ["--sim-fills", fills, "--sim-queue", queue, pcap, out])
    check(r.returncode == 0, "wb-export (csv) --sim-fills --sim-queue exits 0 (%s)" % r.stderr.strip())
    for name, src, cols in (("fills", fills, FILLS), ("queue", queue, QUEUE)):
        h_out, rows_out = csv_rows(os.path.join(out, name + ".csv"))
        h_src, rows_src = csv_rows(src)
        norm = [[value(x, "price" if n == "price" else t) for (n, t), x in zip(cols, r)] for r in rows_out]
        want = [[value(x, "price" if n == "price" else t) for (n, t), x in zip(cols, r)] for r in rows_src]
        check(h_out == h_src and norm == want, "csv %s.csv: %d rows, the values of the run's CSV" % (name, len(norm)))
    h5b = os.path.join(tmp, "again.h5")
    r = run(export + ["--format", "hdf5", "--sim-fills", os.path.join(out, "fills.csv"),
                      "--sim-queue", os.path.join(out, "queue.csv"), pcap, h5b])
    with h5py.File(h5b, "r") as f:
        g = f[list(f)[0]]
        check(r.returncode == 0 and (g["fills"][:] == join_rows[0]).all() and (g["queue"][:] == join_rows[1]).all(),
              "wb-export's fills.csv and queue.csv read back: the same HDF5 rows")

    # Python: wirebook.simulate(), sim.export(), wirebook.read()
    h5p = os.path.join(tmp, "python.h5")
    wirebook, sim, pf, pq = python_run(pcap, h5p)
    with h5py.File(h5p, "r") as f:
        g = f[list(f)[0]]
        same_as_csv(g["fills"], pf, FILLS, "python sim.export fills")
        same_as_csv(g["queue"], pq, QUEUE, "python sim.export queue")
    rd = wirebook.read(h5p, table="fills")
    check(len(rd) == len(sim.fills) and [int(x) for x in rd["virtual_id"]] == [f.virtual_id for f in sim.fills] and
          [int(x) for x in rd["price"]] == [round(f.price * 10**8) for f in sim.fills],
          "wirebook.read(table='fills'): sim.fills' ids and prices")

    # refused: not the table, a field of the wrong type, a format without tables
    wrong = os.path.join(tmp, "wrong.csv")
    with open(wrong, "w") as f:
        f.write(open(fills).read().replace("fill_qty,", "qty,", 1))
    r = run(export + ["--format", "hdf5", "--sim-fills", wrong, pcap, os.path.join(tmp, "w.h5")])
    check(r.returncode == 2 and "header" in r.stderr, "a fills CSV with another header: exit 2 (%s)" % r.stderr.strip())
    finer = os.path.join(tmp, "finer.csv")
    lines = open(fills).read().splitlines()
    cells = lines[1].split(",")
    cells[6] = "1.123456789"
    with open(finer, "w") as f:
        f.write("\n".join([lines[0], ",".join(cells)]) + "\n")
    r = run(export + ["--format", "hdf5", "--sim-fills", finer, pcap, os.path.join(tmp, "f.h5")])
    check(r.returncode == 2 and "column price" in r.stderr and ":2:" in r.stderr,
          "a price finer than 1e-8: exit 2 naming line and column (%s)" % r.stderr.strip())
    r = run(export + ["--format", "dbn", "--sim-queue", queue, pcap, os.path.join(tmp, "dbn")])
    check(r.returncode == 2, "--format dbn --sim-queue: exit 2")

    if bad:
        print("simout-test: FAILED (kept %s)" % tmp)
        sys.exit(1)
    subprocess.run(["rm", "-rf", tmp])
    print("simout-test: ok")


if __name__ == "__main__":
    main()
