#!/usr/bin/env python3
"""Cut a PITCH capture at mid-day, as a process started then sees it.

usage: pitch-cut.py SRC DST [SECOND]

Writes DST: SRC's pcap header and its records from the first PITCH packet
whose unit's last Time message is at or past SECOND (seconds after
midnight; default halfway between the open, 09:30, and the close, 16:00).
Prints that packet's unit and sequence. Frames are Ethernet/IPv4/UDP
without VLAN tags, as wb-gen writes them; other feeds' packets are kept
but not read.
"""
import struct
import sys

OPEN, CLOSE = 9 * 3600 + 1800, 16 * 3600
UDP_PAYLOAD = 42


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip())
    src = open(sys.argv[1], "rb").read()
    second = int(sys.argv[3]) if len(sys.argv) == 4 else (OPEN + CLOSE) // 2
    off, now = 24, 0
    while off + 16 <= len(src):
        n = struct.unpack_from("<I", src, off + 8)[0]
        p = src[off + 16 + UDP_PAYLOAD:off + 16 + n]
        # A Sequenced Unit Header's length is the payload's (other feeds' are not).
        if (len(p) >= 8 and struct.unpack_from("<H", p)[0] == len(p) and p[2] and
                struct.unpack_from("<I", p, 4)[0]):
            m = 8
            for _ in range(p[2]):
                if m + 2 > len(p) or p[m] < 2:
                    break
                if p[m + 1] == 0x20 and p[m] >= 6:
                    now = struct.unpack_from("<I", p, m + 2)[0]
                m += p[m]
            if now >= second:
                open(sys.argv[2], "wb").write(src[:24] + src[off:])
                print(p[3], struct.unpack_from("<I", p, 4)[0])
                return
        off += 16 + n
    sys.exit("pitch-cut: %s never reaches second %d" % (sys.argv[1], second))


main()
