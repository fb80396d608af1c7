#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
"""Rewrite a MoldUDP64 capture the way the anonymized Nasdaq BX samples
that circulate publicly are: MoldUDP64 session of zero bytes, sequence
number 0, UDP destination port 0 (and no UDP checksum); the VLAN tag of
the input is kept (pcaps/itch50 captures carry one). Messages and message
counts stay as they were, so a decoder that reads them must print the
same messages as from the input.

  anonymized_mold_capture.py IN.pcap OUT.pcap
"""
import struct
import sys


def anonymize(frame):
    pkt = bytearray(frame)
    eth_type_at = 12
    while struct.unpack_from(">H", pkt, eth_type_at)[0] in (0x8100, 0x88A8):
        eth_type_at += 4
    if struct.unpack_from(">H", pkt, eth_type_at)[0] != 0x0800:
        return bytes(pkt)
    ip = eth_type_at + 2
    if pkt[ip + 9] != 17:
        return bytes(pkt)
    udp = ip + (pkt[ip] & 15) * 4
    struct.pack_into(">H", pkt, udp + 2, 0)  # destination port 0
    struct.pack_into(">H", pkt, udp + 6, 0)  # no checksum
    mold = udp + 8
    pkt[mold:mold + 18] = bytes(18)  # session (10) and sequence number (8)
    return bytes(pkt)


def main():
    src = open(sys.argv[1], "rb").read()
    out = bytearray(src[:24])
    off = 24
    while off + 16 <= len(src):
        ts_s, ts_u, incl, orig = struct.unpack_from("<IIII", src, off)
        frame = src[off + 16:off + 16 + incl]
        off += 16 + incl
        out += struct.pack("<IIII", ts_s, ts_u, incl, orig) + anonymize(frame)
    open(sys.argv[2], "wb").write(out)


if __name__ == "__main__":
    main()
