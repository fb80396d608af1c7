#!/usr/bin/env python3
"""Regenerate the fixture logs in tests/fixtures (committed; run by hand).

The stage deltas below are the ones whose statistics test_latency_scripts.py
checks against hand-computed values. Each packet: (seq, line, recv->ring,
ring->book, book->published) in ns; None = the stage was not timed (its
timestamp is 0 in the log), while recv and published are still present.

fixtures/rates/ is a multi-rate measurement as scripts/latency.sh --rates
leaves it (one directory per rate and path: run.meta, the replay's and the
daemon's output, the logs), for latency-scripts/rates and plot --rates.
"""
import os
import struct

BASE_NS = 1763700000 * 1000000000
CREATED_NS = BASE_NS - 1000
VENUE = {"nasdaq": 1, "bzx": 2}

PACKETS = {
    # recv->ring, ring->book, book->pub; e2e in the comment
    "nasdaq": [
        (101, 0, 300, 700, 300),    # 1300
        (102, 1, 100, 400, 200),    # 700
        (103, 0, 1200, 2000, 10000),  # 13200
        (104, 1, 200, 500, 300),    # 1000
        (105, 0, 100, None, 800),   # book not timed; e2e 900
        (106, 1, 500, 900, 400),    # 1800
        (107, 0, 100, 400, 100),    # 600
        (108, 1, 300, 800, 400),    # 1500
        (109, 0, 200, 600, 300),    # 1100
        (110, 1, 400, 500, 200),    # 1100
    ],
    "bzx": [  # recorded out of sequence order on purpose
        (9, 0, 300, 1200, 1500),    # 3000
        (7, 0, 100, 400, 500),      # 1000
        (10, 0, 400, 1600, 2000),   # 4000
        (8, 0, 200, 800, 1000),     # 2000
    ],
}


def sample(feed, seq, line, d1, d2, d3):
    recv = BASE_NS + seq * 1000000
    ring = recv + d1
    book = 0 if d2 is None else ring + d2
    pub = ring + (d2 or 0) + d3
    return struct.pack("<QQQQQHB5x", recv, ring, book, pub, seq, line, VENUE[feed])


def write_log(path, feed, packets):
    header = struct.pack("<8sIIIB3xQ", b"WBLATLOG", 1, 32, 48, VENUE[feed], CREATED_NS)
    with open(path, "wb") as f:
        f.write(header)
        for p in packets:
            f.write(sample(feed, *p))


# Packets spread over three seconds (seq = ms after BASE_NS), end to end
# 1000 3000 | 2000 | 5000 7000 by second: for latency against time.
SPREAD = [(100, 0, 100, 400, 500), (500, 0, 1000, 1000, 1000), (1200, 0, 500, 500, 1000),
          (2700, 0, 1000, 2000, 2000), (2900, 0, 1000, 3000, 3000)]

TCPREPLAY = """Actual: {sent} packets ({bytes} bytes) sent in {secs:.2f} seconds
Rated: {bps:.1f} Bps, {mbps:.2f} Mbps, {pps:.2f} pps
Flows: 7 flows, 0.70 fps, {sent} unique flow packets, 0 unique non-flow packets
Statistics for network device: wbtx
\tSuccessful packets:        {sent}
\tFailed packets:            {failed}
\tTruncated packets:         0
\tRetried packets (ENOBUFS): 0
\tRetried packets (EAGAIN):  0
"""

WIREBOOKD = """wirebookd: afpacket wbrx -> /dev/shm/wirebook-latency-1, subscribed '*'
--- wirebookd stats at 11.0s (source afpacket: {frames} frames, 0 not on a feed{kdrops})
line   venue   proto      packets     messages       events     filtered     gaps ring-drops   errors   gap-msgs
A      nasdaq  itch      {half:>8}        30000        30000            0        0 {rd1:>10}        0          0
A:1    nyse    xdp       {half:>8}        30000        30000            0        0 {rd2:>10}        0          0
books: events 60000, live orders 900 (peak 1000), unknown order ids 0, levels 300; ring batches 900, ring drops {rd3}, queue-full waits 0
super-book: updates 60000, publishes 900, trades 10, gaps 0, bad updates 0; threads on cpu 0,1 (node 0)
books: checksum venue books 0123456789abcdef, super-book 0123456789abcdef
latency samples: {written} written, {sdrop} dropped
"""

# name: (meta, feeds and their packets, tcpreplay facts, wirebookd facts)
RUNS = {
    # kept up: the nasdaq fixture packets
    "r1000-rtc": ({"rate_mps": 1000, "path": "rtc", "path_order": 0, "pps": 345},
                  {"nasdaq": PACKETS["nasdaq"]},
                  dict(sent=3450, pps=344.9, failed=0), dict(frames=3450)),
    # kept up with losses under 0.1%: a kernel drop and a packet short
    "r1000-pipeline": ({"rate_mps": 1000, "path": "pipeline", "path_order": 1, "pps": 345},
                       {"bzx": PACKETS["bzx"]},
                       dict(sent=3450, pps=345.0, failed=0), dict(frames=3449, kdrops=1)),
    "r10000-rtc": ({"rate_mps": 10000, "path": "rtc", "path_order": 0, "pps": 3448},
                   {"nasdaq": SPREAD},
                   dict(sent=34480, pps=3448.3, failed=0), dict(frames=34480)),
    # the replay fell short: 200000 pps x 2.9 = 580k msg/s of 1M
    "r1000000-rtc": ({"rate_mps": 1000000, "path": "rtc", "path_order": 0, "pps": 344828},
                     {"nasdaq": PACKETS["nasdaq"]},
                     dict(sent=344828, pps=200000.0, failed=0), dict(frames=344828)),
    # the rate was reached, the receiver dropped
    "r1000000-pipeline": ({"rate_mps": 1000000, "path": "pipeline", "path_order": 1,
                           "pps": 344828},
                          {"nasdaq": PACKETS["nasdaq"]},
                          dict(sent=344828, pps=344000.0, failed=0),
                          dict(frames=339828, kdrops=5000, rd1=7, rd2=3, rd3=2, sdrop=40)),
}


def write_runs(out):
    for name, (meta, feeds, rep, dae) in RUNS.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        meta = dict(meta, seconds=10, messages_per_packet="2.90",
                    clock="software receive (AF_PACKET)",
                    clock_note="wbrx: a veth pair, no NIC timestamps",
                    capture="1000000 messages, 2.90 per packet (wb-gen --pitch --xdp)")
        meta["placement"] = ("sender on cpu 0, wirebookd --cpus 0" if meta["path"] == "rtc"
                             else "sender on cpu 0, wirebookd --cpus 0,1")
        with open(os.path.join(d, "run.meta"), "w") as f:
            f.write("".join(f"{k}={v}\n" for k, v in meta.items()))
        secs = rep["sent"] / rep["pps"]
        with open(os.path.join(d, "tcpreplay.log"), "w") as f:
            f.write(TCPREPLAY.format(bytes=rep["sent"] * 200, secs=secs, bps=rep["pps"] * 200,
                                     mbps=rep["pps"] * 200 * 8 / 1e6, **rep))
        kd = dae.get("kdrops", 0)
        with open(os.path.join(d, "wirebookd.log"), "w") as f:
            f.write(WIREBOOKD.format(frames=dae["frames"], half=dae["frames"] // 2,
                                     kdrops=f", {kd} kernel drops" if kd else "",
                                     rd1=dae.get("rd1", 0), rd2=dae.get("rd2", 0),
                                     rd3=dae.get("rd3", 0), sdrop=dae.get("sdrop", 0),
                                     written=sum(len(p) for p in feeds.values())))
        for feed, packets in feeds.items():
            write_log(os.path.join(d, f"latency_{feed}.bin"), feed, packets)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    os.makedirs(out, exist_ok=True)
    for feed, packets in PACKETS.items():
        write_log(os.path.join(out, f"latency_{feed}.bin"), feed, packets)
    write_runs(os.path.join(out, "rates"))


if __name__ == "__main__":
    main()
