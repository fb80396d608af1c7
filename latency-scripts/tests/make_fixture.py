#!/usr/bin/env python3
"""Regenerate the fixture logs in tests/fixtures (committed; run by hand).

The stage deltas below are the ones whose statistics test_latency_scripts.py
checks against hand-computed values. Each packet: (seq, line, recv->ring,
ring->book, book->published) in ns; None = the stage was not timed (its
timestamp is 0 in the log), while recv and published are still present.
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


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    os.makedirs(out, exist_ok=True)
    for feed, packets in PACKETS.items():
        header = struct.pack("<8sIIIB3xQ", b"WBLATLOG", 1, 32, 48, VENUE[feed], CREATED_NS)
        with open(os.path.join(out, f"latency_{feed}.bin"), "wb") as f:
            f.write(header)
            for p in packets:
                f.write(sample(feed, *p))


if __name__ == "__main__":
    main()
