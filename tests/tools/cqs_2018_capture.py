#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
"""Write a CQS capture of 2018 (CTA block version 0, sizes in round lots)
built from the worked example of the spec (docs/specs/cqs-uqdf-notes.md, Captures; the OMI
Siac/Cqs.Cta.v1.91/LongQuoteMessage.pcap values), whose bytes are not in
this tree: STOR from NYSE Arca, bid 29.45 x 1, offer 29.47 x 1, National
BBO Indicator U, long appendages NBB BZX 29.46 x 3 and NBO BZX 29.47 x 2,
Message Length 123; a Start of Day and a Line Integrity around it.

  cqs_2018_capture.py OUT.pcap GROUP PORT
"""
import socket
import struct
import sys

T = 1522677600  # 2018-04-02 10:00 ET


def block(seq, messages, version=0, sip_ns=42):
    body = b"".join(messages)
    size = 20 + len(body)
    pad = b"\x00" if size & 1 else b""
    head = struct.pack(">BHccIBII", version, size + len(pad), b"Q", b"O", seq, len(messages),
                       T, sip_ns)
    data = head + b"\x00\x00" + body + pad
    return data[:18] + struct.pack(">H", (sum(data) - data[18] - data[19]) & 0xffff) + data[20:]


def header(length, cat, typ, who, ident):
    return struct.pack(">H2sc", length, cat + typ, who) + struct.pack(">IIBIq", T, 1000, ident, 0, 0)


def long_quote():
    m = header(123, b"Q", b"L", b"P", 1)
    m += b"STOR       " + b"0" + b"R" + b" "
    m += struct.pack(">QIQI", 29450000, 1, 29470000, 1)
    m += b" " * 7 + b" " + struct.pack(">II", 0, 0)      # RII .. FINRA BBO ind, Timestamp 2
    m += b" P0   U"                                        # SSR listing FSI SIP-gen LULD NBBO-LULD NBBO
    m += bytes.fromhex("5a52" "0000000001c18620" "00000003" "20202020")
    m += bytes.fromhex("5a52" "0000000001c1ad30" "00000002" "20202020")
    assert len(m) == 123
    return m


def frame(payload, group, port):
    dst = socket.inet_aton(group)
    udp = struct.pack(">HHHH", 40001, port, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     socket.inet_aton("10.9.9.9"), dst)
    csum = sum(struct.unpack(">10H", ip))
    csum = (csum & 0xffff) + (csum >> 16)
    ip = ip[:10] + struct.pack(">H", ~csum & 0xffff) + ip[12:]
    mac = b"\x01\x00\x5e" + bytes([dst[1] & 0x7f, dst[2], dst[3]])
    return mac + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + ip + udp


def main():
    out, group, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    blocks = [block(0, [header(26, b"C", b"A", b"S", 1)]),
              block(1, [long_quote()]),
              block(1, [header(26, b"C", b"T", b"S", 1)])]
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, b in enumerate(blocks):
            fr = frame(b, group, port)
            f.write(struct.pack("<IIII", T + i, 0, len(fr), len(fr)) + fr)


main()
