#!/usr/bin/env python3
"""The simulator (wirebookd --lockstep) with the example strategy
(examples/join_bid), on generated days of every direct-feed protocol:

  - determinism: two runs of the same day give the same fills table and
    the same report, byte for byte (the virtual ids aside, which are
    unique per run); with a seeded jitter too;
  - the reference: the orders the strategy placed and cancelled (at the
    stream positions its --trace gives) are replayed through the FIFO
    model of tests/queue/queue_ref.py, which puts each one behind the
    queue at the first event the lockstep lets it in (after the packet the
    strategy reacted to; with --lockstep-delay D, the first event received
    D later): every fill (the packet it came in, the shares filled so
    far) and every order's final state must be the model's;
  - with tests/sim/sim_probe (tests/sim/probe.py), a strategy on any
    symbol with detail: its fills and end states, and the orders at every
    level at random steps and at the end, against the model on the
    generated days and on every direct-feed capture of pcaps/; with a
    sampled delay (--lockstep-delay-file), two runs identical and the
    model given the same draws agrees.

  B=build python3 tests/sim/sim_test.py
"""
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "queue"))
import queue_ref  # noqa: E402  (the model, shared)
import probe  # noqa: E402  (tests/sim/sim_probe's runs and checks)

B = os.environ.get("B", "build")
FEEDS = os.path.join(REPO, "feeds.conf")
MESSAGES = 20000
SYMBOLS = 40
DELAY_NS = 50000


def venue_names():
    """enum wb_venue's numbers -> the feeds.conf words wb-dump prints."""
    text = open(os.path.join(REPO, "include", "wirebook", "event.h")).read()
    return {int(v): name for v, name in re.findall(r'X\(\w+, (\d+), "(\w+)"\)', text)}


def simulate(tmp, pcap, tag, extra):
    """One lockstep run: wirebookd and join_bid --trace; (trace lines, fills CSV, report)."""
    shm = "wb-sim-test-%d-%s" % (os.getpid(), tag)
    fills = os.path.join(tmp, tag + ".csv")
    err = open(os.path.join(tmp, tag + ".wbd.err"), "w")
    wbd = subprocess.Popen([os.path.join(B, "wirebookd"), "--pcap", pcap, "--feeds", FEEDS, "--shm", shm,
                            "--no-pin", "--order-detail", "all", "--expected-orders", "65536", "--exit-at-eof", "--lockstep", "detail"] + extra,
                           stdout=open(os.path.join(tmp, tag + ".wbd.out"), "w"), stderr=err)
    try:
        out = subprocess.run([os.path.join(B, "examples", "join_bid"), "--book", shm, "--trace", "--fills", fills],
                             stdout=subprocess.PIPE, universal_newlines=True, timeout=120, check=True).stdout
    finally:
        if wbd.wait(timeout=60) != 0:
            raise SystemExit("sim-test: wirebookd %s exited %s" % (tag, wbd.returncode))
    trace = [l for l in out.splitlines() if l[:2] in ("E ", "P ", "C ", "F ", "S ")]
    report = [l for l in out.splitlines() if l[:2] not in ("E ", "P ", "C ", "F ", "S ")]
    return trace, open(fills).read(), report


def without_ids(csv_text, report):
    """The fills and report with the per-run virtual ids cut out."""
    rows = [",".join(r.split(",")[:1] + r.split(",")[2:]) for r in csv_text.splitlines()]
    rep = [" ".join(l.split()[:1] + l.split()[2:]) if l[:1].isdigit() else l for l in report]
    return rows, rep


def check_reference(name, events, trace, delay, venues, draw=None):
    """The strategy's orders through the model; 0 when every fill and end state is the model's.
    draw(i): the sampled delay of the strategy's i-th request (P, C and X lines, in order)."""
    recv, line = {}, {}
    for l in trace:
        if l.startswith("E "):
            _, pos, ts, ln = l.split()
            recv[int(pos)], line[int(pos)] = int(ts), int(ln)
    n = len(recv)
    if n != len(events):
        print("%s: the strategy saw %d events, the dump has %d" % (name, n, len(events)))
        return 1
    # each event's packet end (the lockstep steps packet by packet)
    end = {}
    i = n
    while i >= 1:
        j = i
        while j > 1 and recv[j - 1] == recv[i] and line[j - 1] == line[i]:
            j -= 1
        for k in range(j, i + 1):
            end[k] = i
        i = j - 1

    def effective(pos, extra=0):
        """The event before which a reaction to event pos takes effect (n + 1: never)."""
        e = end[pos]
        due = recv[e] + delay + extra
        k = e + 1
        while k <= n and recv[k] < due:
            k += 1
        return k

    prices = {}
    for ev in events:
        if "price" in ev[4]:
            prices[Decimal(ev[4]["price"])] = ev[4]["price"]
    places, cancels, fills, final = {}, {}, {}, {}
    requests = 0
    for l in trace:
        p = l.split()
        extra = 0
        if p[0] in ("P", "C", "X"):
            extra = draw(requests) if draw else 0
            requests += 1
        if p[0] == "P":
            k = int(p[2])
            side = p[7] if len(p) > 7 else "B"
            places[k] = (effective(int(p[1]), extra), venues[int(p[3])], int(p[4]), side, prices[Decimal(p[5])],
                         int(p[6]))
        elif p[0] == "C":
            cancels[int(p[2])] = effective(int(p[1]), extra)
        elif p[0] == "F":
            fills.setdefault(int(p[2]), []).append((end[int(p[1])], int(p[4])))
        elif p[0] == "S":
            final[int(p[1])] = (p[2], int(p[3]), int(p[4]))
    virtuals = [places[k] + (cancels.get(k, 0),) for k in sorted(places)]
    rt, _ = queue_ref.reference(events, [], None, {}, False, virtuals)
    ref_fills, ref_final = {}, {}
    for l in rt:
        p = l.split()
        if p[0] != "V":
            continue
        at, k, state = int(p[1]), int(p[2]), p[3]
        filled, nfills = int(p[11]), int(p[12])
        if nfills and ref_final.get(k, ("", 0, 0))[2] != nfills:
            lst = ref_fills.setdefault(k, [])
            if lst and lst[-1][0] == end[at]:
                lst[-1] = (end[at], filled)   # the strategy sees a packet's fills at once
            else:
                lst.append((end[at], filled))
        ref_final[k] = (state, filled, nfills)
    bad = 0
    for k in sorted(places):
        want_final = ref_final.get(k, ("unknown", 0, 0))
        got = final.get(k)
        if got is None or got[:2] != want_final[:2] or fills.get(k, []) != ref_fills.get(k, []):
            if bad < 5:
                print("%s: virtual order %d differs:\n  model   %s %s\n  library %s %s" % (
                    name, k, want_final, ref_fills.get(k, []), got, fills.get(k, [])))
            bad += 1
    # Q rows (sim_probe): an order's place in the queue as the strategy read
    # it at a step, against the model after the step's last event
    rows = {}
    for l in rt:
        p = l.split()
        if p[0] == "V":
            rows.setdefault(int(p[2]), []).append((int(p[1]), p[3:13]))
    nq = 0
    for l in trace:
        p = l.split()
        if p[0] != "Q":
            continue
        nq += 1
        e = end[int(p[1])]
        want = [r for at, r in rows.get(int(p[2]), []) if at <= e]
        if (want[-1] if want else None) != p[3:13]:
            if bad < 5:
                print("%s: virtual order %s at event %s, its place in the queue:\n  model   %s\n  library %s" % (
                    name, p[2], p[1], want[-1] if want else None, p[3:13]))
            bad += 1
    nf = sum(len(v) for v in fills.values())
    print("%s: %d events, %d virtual orders (%d cancelled), %d fills%s, against the model: %s" % (
        name, n, len(places), len(cancels), nf, ", %d queue positions" % nq if nq else "",
        "equal" if not bad else "%d DIFFERENT" % bad))
    return 1 if bad else 0


def python_runs(pcap):
    """wirebook.simulate() with a small strategy in Python, twice: the same fills."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.environ.setdefault("WIREBOOK_LIB", os.path.join(B, "libwirebook.so"))
    os.environ.setdefault("WIREBOOKD", os.path.join(B, "wirebookd"))
    import wirebook

    def run():
        n = 0
        with wirebook.simulate(pcap, feeds=FEEDS, args=["--expected-orders", "65536"]) as sim:
            for x in sim:
                if isinstance(x, wirebook.Fill):
                    continue
                n += 1
                if x.kind != "ADD" or x.side != "B" or sim.live(x.instrument) or len(sim._mine) >= 100:
                    continue
                lv = sim.orders.levels(sim.ticker(x.instrument), x.venue, "B")
                if lv:
                    sim.place(x.instrument, x.venue, "B", lv[0].price, 100)
        return n, [f[:1] + f[2:] for f in sim.fills]   # the virtual ids aside
    a, b = run(), run()
    print("python wirebook.simulate: %d events, %d fills, two runs %s" % (
        a[0], len(a[1]), "identical" if a == b and a[1] else "DIFFERENT"))
    return 0 if a == b and a[1] else 1


def usage_errors(pcap):
    """Bad --lockstep usage is refused with exit 2, before anything runs."""
    bad = 0
    for args in (["--pcap", pcap, "--lockstep", "sometimes"],
                 ["--pcap", pcap, "--lockstep", "all", "--speed", "1"],
                 ["--pcap", pcap, "--lockstep", "all", "--source-thread"],
                 ["--pcap", pcap, "--lockstep", "all", "--events", "0"],
                 ["--pcap", pcap, "--lockstep-delay", "1000"],
                 ["--pcap", pcap, "--lockstep", "all", "--lockstep-delay-file", "/dev/null"],
                 ["--pcap", pcap, "--lockstep", "all", "--lockstep-delay-file", os.path.join(HERE, "sim_test.py")],
                 ["--pcap", pcap, "--lockstep", "all", "--lockstep-delay-file", pcap + ".none"]):
        rc = subprocess.run([os.path.join(B, "wirebookd"), "--feeds", FEEDS, "--shm", "wb-sim-test-usage"] + args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if rc != 2:
            print("usage: wirebookd %s exited %d, not 2" % (" ".join(args[2:]), rc))
            bad += 1
    print("usage: bad --lockstep combinations refused: %s" % ("yes" if not bad else "NO"))
    return bad


def lockstep_counters(tmp, tag, trace):
    """wirebookd's lockstep line at exit: steps were taken, at gates, and
    no more of them than the strategy saw distinct stream positions."""
    out = open(os.path.join(tmp, tag + ".wbd.out")).read()
    m = re.search(r"^lockstep: (\d+) steps \((\d+) at a gate, (\d+) long runs", out, re.M)
    if not m:
        print("%s: no lockstep counters in wirebookd's output" % tag)
        return 1
    steps, gates = int(m.group(1)), int(m.group(2))
    events = sum(1 for l in trace if l.startswith("E "))
    ok = 0 < gates <= steps <= events
    print("%s: lockstep counters: %d steps, %d at a gate, %d events seen: %s"
          % (tag, steps, gates, events, "ok" if ok else "WRONG"))
    return 0 if ok else 1


def main():
    tmp = tempfile.mkdtemp(prefix="wb-sim-test.")
    venues = venue_names()
    bad = 0
    for proto, vargs in queue_ref.DAYS:
        pcap = os.path.join(tmp, proto + ".pcap")
        queue_ref.run([os.path.join(B, "wb-gen"), "-n", str(MESSAGES), "--symbols", str(SYMBOLS), "--feeds", FEEDS,
                       "--until", "09:30:08", "-o", pcap] + vargs, stderr=subprocess.DEVNULL)
        dump = queue_ref.run([os.path.join(B, "wb-dump"), "--feeds", FEEDS, pcap], stderr=subprocess.DEVNULL)
        events = [e for e in (queue_ref.parse(l) for l in dump.splitlines()) if e]
        # determinism: two runs, the same fills and report
        t1, f1, r1 = simulate(tmp, pcap, proto + "-1", [])
        t2, f2, r2 = simulate(tmp, pcap, proto + "-2", [])
        same = without_ids(f1, r1) == without_ids(f2, r2) and t1 == t2
        bad += lockstep_counters(tmp, proto + "-1", t1)
        print("%s: two runs: %d fills, %s" % (proto, len(f1.splitlines()) - 1, "identical" if same else "DIFFERENT"))
        bad += not same
        bad += check_reference(proto, events, t1, 0, venues)
        # a latency model: a fixed delay against the model; a seeded jitter twice
        td, _, _ = simulate(tmp, pcap, proto + "-delay", ["--lockstep-delay", str(DELAY_NS)])
        bad += check_reference(proto + " delay %dus" % (DELAY_NS // 1000), events, td, DELAY_NS, venues)
        # the orders at every level at random steps and at the end; a strategy on both sides
        bad += probe.day(B, tmp, pcap, FEEDS, proto, events, venues, check_reference)
        if proto == "itch":
            bad += probe.sampled(B, tmp, pcap, FEEDS, proto, events, venues, check_reference)
            bad += usage_errors(pcap)
            jit = ["--lockstep-delay", "20000", "--lockstep-jitter", "60000", "--lockstep-seed", "7"]
            j1, jf1, jr1 = simulate(tmp, pcap, proto + "-jit1", jit)
            j2, jf2, jr2 = simulate(tmp, pcap, proto + "-jit2", jit)
            same = without_ids(jf1, jr1) == without_ids(jf2, jr2) and j1 == j2
            print("%s jitter: two runs: %d fills, %s" % (proto, len(jf1.splitlines()) - 1,
                                                        "identical" if same else "DIFFERENT"))
            bad += not same
            bad += python_runs(pcap)
    bad += probe.captures(B, tmp, REPO, venues, check_reference)[0]
    if bad:
        print("sim-test: FAILED (kept %s)" % tmp)
        sys.exit(1)
    subprocess.run(["rm", "-rf", tmp])
    print("sim-test: ok")


if __name__ == "__main__":
    main()
