"""The simulator against the FIFO model with tests/sim/sim_probe, a small
strategy that joins the best level of any symbol with detail (for
tests/sim/sim_test.py):

  - run(): wirebookd --lockstep and sim_probe on a day, its trace;
  - check_levels(): the orders at every level, in order (id, shares, join
    time, attribution), of every symbol with detail, as sim_probe read
    them at the steps it dumped (the builder waiting: the books after the
    step's last event; the end of the day is a step too), against tests/queue/queue_ref.py's
    model after the same event;
  - captures(): the real captures of pcaps/ (every direct-feed one: ITCH
    over MoldUDP64, PITCH, XDP), the symbols with order detail the most
    active of each capture's own, read from it at test time; every step
    dumped; every fill and end state and every level against the model;
  - draws(): a sampled latency model's draws (--lockstep-delay-file),
    given to the model as wirebookd draws them.
"""
import os
import subprocess
from collections import Counter
from decimal import Decimal

import queue_ref

ORDER_KINDS = ("ADD", "EXEC", "EXECP", "REDUCE", "DELETE", "REPLACE", "MODIFY")


def run(B, tmp, pcap, feeds, tag, detail, extra=(), dump_at=(), probe_args=()):
    """One lockstep run of sim_probe: its output lines."""
    shm = "wb-sim-probe-%d-%s" % (os.getpid(), tag)
    err = open(os.path.join(tmp, tag + ".wbd.err"), "w")
    wbd = subprocess.Popen([os.path.join(B, "wirebookd"), "--pcap", pcap, "--feeds", feeds, "--shm", shm,
                            "--no-pin", "--order-detail", detail, "--expected-orders", "65536", "--exit-at-eof",
                            "--lockstep", "detail"] + list(extra), stdout=subprocess.DEVNULL, stderr=err)
    try:
        args = [os.path.join(B, "test", "sim_probe"), "--book", shm] + list(probe_args)
        if dump_at:
            args += ["--dump-at", ",".join(str(p) for p in sorted(dump_at))]
        out = subprocess.run(args, stdout=subprocess.PIPE, universal_newlines=True, timeout=120, check=True).stdout
    finally:
        wbd.wait(timeout=60)
    return out.splitlines()


def dumps(lines):
    """The D sections: [(pos, {(venue, sym, side, price): (qty, orders, [(id, qty, join, mpid)])})]."""
    out, key = [], None
    for line in lines:
        p = line.split()
        if p[0] == "D":
            out.append((int(p[1]), {}))
        elif p[0] == "L":
            key = (int(p[1]), int(p[2]), p[3], Decimal(p[4]).normalize())
            out[-1][1][key] = (int(p[5]), int(p[6]), [])
        elif p[0] == "O":
            out[-1][1][key][2].append((int(p[1]), int(p[2]), p[3], p[4]))
        elif p[0] == "W":
            out[-1][1][("W",) + tuple(p[1:])] = "a read failed"
    return out


def check_levels(name, events, lines, venues, detail_syms):
    """Every dump against the model after the same event; (levels, orders, bad)."""
    numbers = {v: k for k, v in venues.items()}
    got = dumps(lines)
    at = {}
    for pos, book in got:
        at.setdefault(pos, []).append(book)
    m = queue_ref.Model()
    levels = orders = bad = 0
    for n in range(0, len(events) + 1):
        if n:
            m.apply(n, events[n - 1], lambda *a: None)
        if n not in at:
            continue
        want = {}
        for (venue, sym, side, price), lvl in m.levels.items():
            if detail_syms is None or sym in detail_syms:
                want[(numbers[venue], sym, side, Decimal(price).normalize())] = (
                    sum(x[0] for x in lvl.values()), len(lvl), [(oid, x[0], x[2], x[3]) for oid, x in lvl.items()])
        for book in at[n]:
            levels += len(book)
            orders += sum(len(v[2]) for v in book.values())
            for k in sorted(set(want) | set(book), key=str):
                if want.get(k) != book.get(k):
                    if bad < 5:
                        print("%s: at event %d level %s differs:\n  model   %s\n  library %s" % (
                            name, n, k, want.get(k), book.get(k)))
                    bad += 1
    if events and len(events) not in at:
        print("%s: no dump at the end (event %d)" % (name, len(events)))
        bad += 1
    return len(got), levels, orders, bad


def draws(samples, seed, count):
    """The first count delays wirebookd --lockstep-delay-file draws: xorshift64*
    from the seed (0: its default), a sample per request."""
    mask = (1 << 64) - 1
    rng = seed or 0x9e3779b97f4a7c15
    out = []
    for _ in range(count):
        rng ^= rng >> 12
        rng ^= (rng << 25) & mask
        rng ^= rng >> 27
        out.append(samples[((rng * 0x2545f4914f6cdd1d) & mask) % len(samples)])
    return out


def requests(lines):
    return sum(1 for l in lines if l[:2] in ("P ", "C ", "X "))


def day(B, tmp, pcap, feeds, name, events, venues, check_reference, seed=25):
    """sim_probe on a generated day, every symbol with detail, dumps at four
    seeded random steps and the end: fills, end states and levels."""
    import random
    rnd = random.Random(seed)
    points = sorted(rnd.randrange(1, len(events)) for _ in range(4)) + [len(events)]
    lines = run(B, tmp, pcap, feeds, name + "-probe", "all", dump_at=points)
    trace = [l for l in lines if l[:2] in ("E ", "P ", "C ", "X ", "F ", "S ", "Q ")]
    bad = check_reference(name + " sim_probe", events, trace, 0, venues)
    nd, nl, no, b = check_levels(name, events, lines, venues, None)
    print("%s sim_probe: the orders at every level at %d points (%d levels, %d orders) against the model: %s" % (
        name, nd, nl, no, "equal" if not b else "%d DIFFERENT" % b))
    return bad + (1 if b else 0)


def captures(B, tmp, repo, venues, check_reference):
    """Every direct-feed capture of pcaps/: the symbols with the most order
    events carry detail, every step is dumped. Returns (bad, totals)."""
    sets = [("itch50", os.path.join(repo, "feeds.conf")),
            ("pitch", os.path.join(repo, "tests", "bench", "captures.feeds.conf")),
            ("xdp", os.path.join(repo, "feeds.conf"))]
    bad = 0
    total = Counter()
    for folder, feeds in sets:
        d = os.path.join(repo, "pcaps", folder)
        for f in sorted(os.listdir(d)):
            # the Gap Request Proxy and Spin captures are TCP sessions: no feed input
            if not f.endswith(".pcap") or "_grp_" in f or "_spin_" in f:
                continue
            pcap = os.path.join(d, f)
            dump = queue_ref.run([os.path.join(B, "wb-dump"), "--feeds", feeds, pcap], stderr=subprocess.DEVNULL)
            events = [e for e in (queue_ref.parse(l) for l in dump.splitlines()) if e]
            tickers = {e[2]: e[4]["ticker"] for e in events if e[3] == "SYMBOL"}
            active = Counter(e[2] for e in events if e[3] in ORDER_KINDS and e[2] in tickers)
            chosen = [s for s, _ in active.most_common(3)]
            detail = ",".join(tickers[s] for s in chosen) if chosen else "none"
            name = "%s/%s" % (folder, f[:-5])
            lines = run(B, tmp, pcap, feeds, name.replace("/", "-"), detail, dump_at=range(1, len(events) + 1))
            trace = [l for l in lines if l[:2] in ("E ", "P ", "C ", "X ", "F ", "S ", "Q ")]
            bad += check_reference(name, events, trace, 0, venues)
            nd, nl, no, b = check_levels(name, events, lines, venues, set(chosen))
            bad += 1 if b else 0
            total.update(captures=1, events=len(events), order_events=sum(active.values()),
                         orders=sum(1 for l in trace if l[:2] == "P "),
                         fills=sum(1 for l in trace if l[:2] == "F "),
                         positions=sum(1 for l in trace if l[:2] == "Q "), dumps=nd, levels=nl, level_orders=no,
                         differences=b)
            print("%s: detail %s; %d order events; the orders at every level at %d steps (%d levels, %d orders): %s" % (
                name, detail, sum(active.values()), nd, nl, no, "equal" if not b else "%d DIFFERENT" % b))
    # The end is a step: a strategy slow to read the last books still reads them whole.
    pcap = os.path.join(repo, "pcaps", "itch50", "Multiple.Packets.pcap")
    feeds = os.path.join(repo, "feeds.conf")
    dump = queue_ref.run([os.path.join(B, "wb-dump"), "--feeds", feeds, pcap], stderr=subprocess.DEVNULL)
    events = [e for e in (queue_ref.parse(l) for l in dump.splitlines()) if e]
    lines = run(B, tmp, pcap, feeds, "linger", "all", dump_at=[len(events)], probe_args=["--linger-ms", "300"])
    nd, nl, no, b = check_levels("slow reader", events, lines, venues, None)
    print("slow reader at the end of a replay: %d levels, %d orders read after 300 ms: %s" % (
        nl, no, "equal" if not b and nd and nl else "DIFFERENT (the books went away?)"))
    bad += 1 if b or not nd or not nl else 0
    print("real captures: %(captures)d captures, %(events)d events (%(order_events)d order events of the detailed "
          "symbols), %(orders)d virtual orders, %(fills)d fills, %(positions)d queue positions, %(dumps)d level dumps (%(levels)d levels, "
          "%(level_orders)d orders), %(differences)d level differences" % total)
    return bad, total


SAMPLES = [50000, 400000, 1500000, 3000000, 6000000, 12000000, 25000000]   # ns: spread over the generated day's gaps between packets (median 2.5 ms)


def sampled(B, tmp, pcap, feeds, name, events, venues, check_reference, seed=11):
    """--lockstep-delay-file: two runs with the same seed identical; the
    model, given the same draws per request in the order they were
    posted, has every fill and end state."""
    path = os.path.join(tmp, "delays.txt")
    with open(path, "w") as f:
        f.write("# wire-to-order latencies, ns\n" + "\n".join(str(x) for x in SAMPLES) + "\n")
    extra = ["--lockstep-delay-file", path, "--lockstep-seed", str(seed)]
    runs = []
    for i in (1, 2):
        lines = run(B, tmp, pcap, feeds, "%s-sampled%d" % (name, i), "all", extra=extra)
        runs.append([l for l in lines if l[:2] in ("E ", "P ", "C ", "X ", "F ", "S ", "Q ")])
    same = runs[0] == runs[1]
    print("%s sampled delay: two runs with seed %d: %d requests, %s" % (
        name, seed, requests(runs[0]), "identical" if same else "DIFFERENT"))
    d = draws(SAMPLES, seed, requests(runs[0]))
    bad = check_reference(name + " sampled delay", events, runs[0], 0, venues, draw=lambda i: d[i])
    return bad + (0 if same else 1)
