#!/usr/bin/env python3
"""Order detail and queue tracking through wirebookd's control socket.

A generated ITCH day is cut in two by a pause of its capture clock: the
second half is stamped a day later, so wirebookd --speed 1 replays the
first half and then waits, its books still, its builder taking requests.
In that pause, with --order-detail none and --control SOCKET:
  - wb-subscribe detail add SYM turns detail on: the Python reader
    (python/wirebook, another process, libwirebook) sees it and reads the
    orders at a price equal to a FIFO model of the first half
    (tests/queue/queue_ref.py); detail list names it;
  - wb-subscribe track / position give a resting order's queue position,
    equal field for field to what wb_queue_position reports to the Python
    reader, and to the model's;
  - untrack ends it (position: not tracked), detail del turns detail off;
  - the errors say why: an unknown symbol, no --daemon (the module keeps no
    books), a bad venue (usage, exit 2), a wirebookd without
    --order-detail, and one whose source has ended.

  B=build python3 tests/queue/control_test.py
"""
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import queue_ref  # noqa: E402

B = queue_ref.B
REPO = queue_ref.REPO
FEEDS = queue_ref.FEEDS
PAUSE_S = 86400
WAIT_S = 30     # the most any step may take on a busy machine (not a measured time)


def split_pcap(src, first_half, paused):
    """first_half: the first half of src's records; paused: all of them, the
    first half at the first record's time, the rest PAUSE_S later."""
    data = open(src, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(end + "IIII", data[off:off + 16])
        recs.append((sec, frac, data[off + 16:off + 16 + incl], orig))
        off += 16 + incl
    half = len(recs) // 2
    t0 = recs[0][:2]
    with open(first_half, "wb") as a, open(paused, "wb") as b:
        a.write(data[:24])
        b.write(data[:24])
        for i, (sec, frac, pkt, orig) in enumerate(recs):
            hdr = struct.pack(end + "IIII", sec, frac, len(pkt), orig)
            if i < half:
                a.write(hdr + pkt)
                b.write(struct.pack(end + "IIII", t0[0], t0[1], len(pkt), orig) + pkt)
            else:
                b.write(struct.pack(end + "IIII", sec + PAUSE_S, frac, len(pkt), orig) + pkt)


def model_of(pcap):
    """The FIFO model after the day in pcap, and the tickers by symbol index."""
    dump = queue_ref.run([os.path.join(B, "wb-dump"), "--feeds", FEEDS, pcap], stderr=subprocess.DEVNULL)
    m, tickers = queue_ref.Model(), {}
    for n, ev in enumerate((e for e in (queue_ref.parse(l) for l in dump.splitlines()) if e), 1):
        if ev[3] == "SYMBOL" and "ticker" in ev[4]:
            tickers[ev[2]] = ev[4]["ticker"]
        m.apply(n, ev, lambda *a: None)
    return m, tickers


def choose(m, tickers):
    """A resting order with orders ahead of it and behind it: (venue, id, ticker, side, price)."""
    best = None
    for (venue, sym, side, price), lvl in m.levels.items():
        ids = list(lvl)
        if len(ids) >= 3 and sym in tickers and (best is None or len(ids) > best[0]):
            best = (len(ids), venue, ids[len(ids) // 2], tickers[sym], side, price)
    if best is None:
        raise SystemExit("control-test: no level with three orders in the first half")
    return best[1:]


def wbs(sock, *args, expect=0):
    p = subprocess.run([os.path.join(B, "wb-subscribe")] + (["--daemon", sock] if sock else []) + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != expect:
        raise SystemExit("control-test: wb-subscribe %s exited %d, not %d: %s%s" % (
            " ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p.stdout, p.stderr


def start(pcap, shm, sock, extra, marker="waiting"):
    wbd = subprocess.Popen([os.path.join(B, "wirebookd"), "--pcap", pcap, "--speed", "1", "--feeds", FEEDS,
                            "--shm", shm, "--no-pin", "--control", sock] + extra,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
    # The pace says, once, that it waits for the second half: the first is decoded.
    for line in wbd.stderr:
        if marker in line:
            return wbd
    raise SystemExit("control-test: wirebookd ended before saying '%s' (%s)" % (marker, wbd.wait()))


def stop(wbd):
    wbd.terminate()
    wbd.wait()


def until(what, f):
    deadline = time.monotonic() + WAIT_S
    while True:
        v = f()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.05)


def check(ok, what):
    print("%s: %s" % (what, "yes" if ok else "NO"), file=sys.stdout)
    return 0 if ok else 1


def main():
    sys.path.insert(0, os.path.join(REPO, "python"))
    os.environ.setdefault("WIREBOOK_LIB", os.path.join(B, "libwirebook.so"))
    import wirebook

    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        day, first, paused = (os.path.join(tmp, n) for n in ("day.pcap", "first.pcap", "paused.pcap"))
        queue_ref.run([os.path.join(B, "wb-gen"), "-n", "4000", "--symbols", "8", "--feeds", FEEDS,
                       "--until", "09:30:08", "--venues", "nasdaq", "-o", day], stderr=subprocess.DEVNULL)
        split_pcap(day, first, paused)
        m, tickers = model_of(first)
        venue, oid, ticker, side, price = choose(m, tickers)
        want = m.position(venue, oid)   # ahead shares, ahead orders, behind shares, behind orders, level, orders, qty
        shm = "wb-control-test-%d" % os.getpid()
        sock = os.path.join(tmp, "ctl.sock")

        wbd = start(paused, shm, sock, ["--order-detail", "none"])
        try:
            o = wirebook.orders(shm, raw=True)
            out, _ = wbs(sock, "detail", "list")
            bad += check(out == "", "detail list with --order-detail none: empty")
            out, _ = wbs(sock, "detail", "add", ticker)
            bad += check("order detail on" in out and o.has_detail(ticker),
                         "detail add %s: the reader sees detail" % ticker)
            out, _ = wbs(sock, "detail", "list")
            bad += check(out.split()[:1] == [ticker], "detail list: %s" % ticker)
            sym = [s for s, t in tickers.items() if t == ticker][0]
            model_ids = list(m.levels[(venue, sym, side, price)])
            raw_price = int(queue_ref.Decimal(price) * wirebook._lib.PRICE_SCALE)
            same = until("the level", lambda: [x.order_id for x in o.at(ticker, venue, side, raw_price)] == model_ids)
            bad += check(same, "the orders at %s %s %s %s through the reader: the model's" % (
                ticker, venue, side, price))

            wbs(sock, "track", venue, str(oid))
            fields = {}

            def position():
                out, _ = wbs(sock, "position", venue, str(oid))
                fields.clear()
                fields.update(kv.split("=", 1) for kv in out.split()[2:])
                return fields["state"] == "resting" and (
                    int(fields["shares_ahead"]), int(fields["orders_ahead"]), int(fields["shares_behind"]),
                    int(fields["orders_behind"]), int(fields["level_qty"]), int(fields["level_orders"]),
                    int(fields["qty"])) == want
            bad += check(until("the position", position), "position %s %d through the socket: the model's %s" % (
                venue, oid, want))
            p = o.position(venue, oid)
            api = {"state": p.state, "side": p.side, "sym": str(p.sym), "qty": str(p.qty),
                   "filled": str(p.filled_qty), "shares_ahead": str(p.shares_ahead),
                   "orders_ahead": str(p.orders_ahead), "shares_behind": str(p.shares_behind),
                   "orders_behind": str(p.orders_behind), "level_qty": str(p.level_qty),
                   "level_orders": str(p.level_orders), "version": str(p.version)}
            sock_fields = {k: v for k, v in fields.items() if k != "price"}
            bad += check(sock_fields == api and
                         queue_ref.Decimal(fields["price"]) * wirebook._lib.PRICE_SCALE == p.price,
                         "wb-subscribe position equals wb_queue_position (%d fields)" % len(fields))

            wbs(sock, "untrack", venue, str(oid))
            _, err = wbs(sock, "position", venue, str(oid), expect=1)
            bad += check("not tracked" in err, "untrack: position says not tracked")
            out, _ = wbs(sock, "detail", "del", ticker)
            bad += check("order detail off" in out and not o.has_detail(ticker),
                         "detail del %s: the reader sees none" % ticker)

            _, err = wbs(sock, "detail", "add", "NOSUCH", expect=1)
            bad += check("unknown symbol" in err, "detail add NOSUCH: unknown symbol (%s)" % err.strip())
            _, err = wbs(None, "detail", "list", expect=1)
            bad += check("module keeps no books" in err, "without --daemon: the module keeps no books")
            _, err = wbs(sock, "track", "nowhere", "1", expect=2)
            bad += check("no exchange venue" in err, "track nowhere 1: a usage error")
            o.close()
        finally:
            stop(wbd)

        wbd = start(paused, shm + "-off", sock, [])
        try:
            _, err = wbs(sock, "detail", "add", ticker, expect=1)
            bad += check("not enabled" in err, "without --order-detail: not enabled (%s)" % err.strip())
        finally:
            stop(wbd)

        wbd = start(first, shm + "-ended", sock, ["--order-detail", "none"], marker="source ended")
        try:
            _, err = wbs(sock, "detail", "add", ticker, expect=1)
            bad += check("source has ended" in err, "after the source ended: said (%s)" % err.strip())
        finally:
            stop(wbd)
    print("control-test: %s" % ("passed" if not bad else "%d FAILED" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
