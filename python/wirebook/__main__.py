"""python3 -m wirebook [--book NAME] COMMAND ...

  symbols               the book's tickers, one a line
  top SYMBOL...         best bid and ask, consolidated
  nbbo SYMBOL...        the NBBO with the venues at each side
  depth SYMBOL [N]      N levels a side (default 5)
  health                live, stale, retired or recovering, and the heartbeat's age
  recovery              gap recovery per stream (wirebookd --recovery): state and counts
  events [N]            wirebookd's event stream, one event a line, as they come (N: stop
                        after N; else when wirebookd ends), then the counts
"""
import argparse
import sys

import wirebook


def fmt(p):
    if p is None:  # an empty side
        return "-"
    return f"{p:.4f}" if isinstance(p, float) else str(p)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m wirebook",
                                 description="Read wirebookd's live order books.",
                                 epilog=__doc__.split("\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--book", metavar="NAME", help="the book's name (wirebookd --shm; default wirebook)")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    sub.add_parser("symbols")
    for c in ("top", "nbbo"):
        sub.add_parser(c).add_argument("symbol", nargs="+")
    d = sub.add_parser("depth")
    d.add_argument("symbol")
    d.add_argument("n", nargs="?", type=int, default=5)
    sub.add_parser("health")
    sub.add_parser("recovery")
    sub.add_parser("events").add_argument("count", nargs="?", type=int, default=0)
    a = ap.parse_args(argv)
    if a.cmd == "events":
        return events(a.book, a.count)

    try:
        with wirebook.open(a.book) as book:
            if a.cmd == "symbols":
                print("\n".join(book.symbols()))
            elif a.cmd == "top":
                for s in a.symbol:
                    t = book.top(s)
                    print(f"{s} {t.bid_qty} @ {fmt(t.bid)} / {t.ask_qty} @ {fmt(t.ask)}"
                          f" {t.state} updates {t.updates}")
            elif a.cmd == "nbbo":
                for s in a.symbol:
                    n = book.nbbo(s)
                    print(f"{s} {fmt(n.bid)} x {fmt(n.ask)} ({n.bid_qty} x {n.ask_qty})"
                          f" bid {','.join(n.bid_venues) or '-'} ask {','.join(n.ask_venues) or '-'}")
            elif a.cmd == "depth":
                bids, asks = book.depth(a.symbol, a.n)
                for i in range(max(len(bids), len(asks))):
                    b = f"{bids[i].qty:>8} {fmt(bids[i].price):>12}" if i < len(bids) else " " * 21
                    k = f"{fmt(asks[i].price):<12} {asks[i].qty:<8}" if i < len(asks) else ""
                    print(f"{b} | {k}".rstrip())
            elif a.cmd == "recovery":
                for r in book.recovery():
                    print(f"{r.venue} channel {r.channel} unit {r.unit}: {r.state}"
                          f"{f' since {r.since_ns}' if r.since_ns else ''}; gaps {r.gaps}, filled"
                          f" {r.filled}, unrecoverable {r.unrecoverable}, messages {r.messages},"
                          f" lost {r.lost}, snapshots {r.snapshots}; fill p50"
                          f" {r.fill_p50_ns / 1e3:.0f} us p99 {r.fill_p99_ns / 1e3:.0f} us max"
                          f" {r.fill_max_ns / 1e3:.0f} us ({r.fills} fills)")
            elif a.cmd == "health":
                h = book.health()
                print(f"{h.state} heartbeat age {h.age_ns / 1e6:.1f} ms pid {h.writer_pid}")
    except wirebook.WirebookError as e:
        print(f"wirebook: {e.strerror}", file=sys.stderr)
        return 1
    except OSError as e:  # the library itself missing
        print(f"wirebook: {e}", file=sys.stderr)
        return 1
    return 0


def events(name, count):
    try:
        with wirebook.events(name=name or wirebook.WB_SHM_DEFAULT_NAME) as ev:
            n = 0
            for e in ev:
                print(e.seq, e.kind, e.venue, f"i={e.instrument}", "recv", e.recv_ts, flush=False)
                n += 1
                if count and n >= count:
                    break
            c = ev.counts()
        print(f"wirebook: {n} events, {c.dropped} dropped", file=sys.stderr)
    except wirebook.WirebookError as e:
        print(f"wirebook: {e.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
