#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
"""Host-side pcap helpers for the VM test (standard library only).

  pcaptool.py split IN OUT1 OUT2        first half of the records, second half
  pcaptool.py count IN                  number of records
  pcaptool.py ports IN OUT1 OUT2 P,...  frames to UDP ports P into OUT1, the rest into OUT2
  pcaptool.py addrs IN OUT1 OUT2 A,...  frames to IPv4 addresses A into OUT1, the rest into OUT2
  pcaptool.py cat OUT IN...             the records of every IN, in order
  pcaptool.py udpcsum IN OUT            every UDP checksum filled in
  pcaptool.py pad IN OUT                1..46 random bytes after every datagram
  pcaptool.py malform IN OUT [--seed N] [--corpus DIR]...
        Malformed frames to the feed addresses of IN: truncations with honest
        and with lying IP/UDP lengths, bit flips, garbage payloads, bogus IP
        headers, fragments, MoldUDP64 headers with absurd counts and lengths,
        and every fuzz-corpus file as a UDP payload.
"""
import os
import random
import struct
import sys


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        sys.exit(f"{path}: not a pcap")
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        sys.exit(f"{path}: not a little-endian classic pcap (magic {magic:#x})")
    header = data[:24]
    records, off = [], 24
    while off + 16 <= len(data):
        ts_s, ts_f, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        records.append((ts_s, ts_f, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return header, records


def write_pcap(path, header, records):
    with open(path, "wb") as f:
        f.write(header)
        for ts_s, ts_f, frame in records:
            f.write(struct.pack("<IIII", ts_s, ts_f, len(frame), len(frame)))
            f.write(frame)


def udp_parts(frame):
    """(eth, ip header, udp header, payload) of an untagged IPv4/UDP frame, or None."""
    if len(frame) < 42 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    ihl = (frame[14] & 15) * 4
    total = struct.unpack(">H", frame[16:18])[0]
    udp = 14 + ihl
    ulen = struct.unpack(">H", frame[udp + 4:udp + 6])[0]
    if ihl < 20 or ulen < 8 or udp + ulen > len(frame) or 14 + total > len(frame):
        return None
    return frame[:14], frame[14:udp], frame[udp:udp + 8], frame[udp + 8:udp + ulen]


def build(eth, ip, udp, payload, ip_total=None, udp_len=None):
    ip = bytearray(ip)
    udp = bytearray(udp)
    if ip_total is None:
        ip_total = len(ip) + 8 + len(payload)
    if udp_len is None:
        udp_len = 8 + len(payload)
    ip[2:4] = struct.pack(">H", ip_total & 0xFFFF)
    udp[4:6] = struct.pack(">H", udp_len & 0xFFFF)
    return bytes(eth) + bytes(ip) + bytes(udp) + bytes(payload)


def udp_checksum(frame):
    """The frame with its IPv4/UDP checksum filled in (UDP GRO needs one)."""
    parts = udp_parts(frame)
    if not parts:
        return frame
    eth, ip, udp, payload = parts
    ulen = 8 + len(payload)
    data = bytearray(udp) + payload
    data[6:8] = b"\0\0"
    pseudo = ip[12:20] + struct.pack(">BBH", 0, 17, ulen)
    blob = pseudo + data
    if len(blob) % 2:
        blob += b"\0"
    total = sum(struct.unpack(">%dH" % (len(blob) // 2), blob))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    csum = (~total & 0xFFFF) or 0xFFFF
    data[6:8] = struct.pack(">H", csum)
    return bytes(eth) + bytes(ip) + bytes(data) + frame[len(eth) + len(ip) + ulen:]


def malform(src, dst, seed, corpora):
    header, records = read_pcap(src)
    rng = random.Random(seed)
    feeds = [p for p in (udp_parts(r[2]) for r in records) if p and len(p[3]) > 20]
    if not feeds:
        sys.exit(f"{src}: no UDP feed packets to start from")
    out = []

    def add(frame):
        out.append((1, len(out), frame))

    for eth, ip, udp, payload in feeds[::max(1, len(feeds) // 300)][:300]:
        n = len(payload)
        # Honest lengths, payload cut anywhere (inside the MoldUDP64 header too).
        add(build(eth, ip, udp, payload[:rng.randrange(0, n)]))
        # Lying lengths: the headers claim the whole datagram, the frame is cut.
        cut = rng.randrange(0, n)
        add(build(eth, ip, udp, payload[:cut], ip_total=len(ip) + 8 + n, udp_len=8 + n))
        # UDP length beyond the IP payload, and below its own header.
        add(build(eth, ip, udp, payload, udp_len=8 + n + rng.randrange(1, 3000)))
        add(build(eth, ip, udp, payload, udp_len=rng.randrange(0, 8)))
        # Bit flips anywhere in the payload (message lengths, counts, types).
        flipped = bytearray(payload)
        for _ in range(rng.randrange(1, 8)):
            i = rng.randrange(0, n)
            flipped[i] ^= 1 << rng.randrange(0, 8)
        add(build(eth, ip, udp, flipped))
        # Absurd MoldUDP64 message count and first message length.
        bad = bytearray(payload)
        bad[18:20] = struct.pack(">H", rng.choice([0xFFFF, 0x8000, 0]))
        if n >= 22:
            bad[20:22] = struct.pack(">H", rng.choice([0xFFFF, 0, 1, n]))
        add(build(eth, ip, udp, bad))
        # Garbage payload.
        add(build(eth, ip, udp, bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 1400)))))
        # Bogus IP header length, and fragments.
        bad_ip = bytearray(ip)
        bad_ip[0] = 0x40 | rng.choice([0, 1, 4, 15])
        add(build(eth, bad_ip, udp, payload))
        frag = bytearray(ip)
        frag[6:8] = struct.pack(">H", rng.choice([0x2000, 0x2001, 0x0010, 0x1FFF]))
        add(build(eth, frag, udp, payload))
        # Runt: the frame ends inside the UDP header.
        add(bytes(eth) + bytes(ip) + bytes(udp[:rng.randrange(0, 8)]))

    # Every corpus file to every feed address: each decoder sees them all.
    addresses = {}
    for eth, ip, udp, _ in feeds:
        addresses.setdefault((bytes(ip[16:20]), bytes(udp[2:4])), (eth, ip, udp))
    for corpus in corpora:
        if not os.path.isdir(corpus):
            continue
        for name in sorted(os.listdir(corpus))[:200]:
            with open(os.path.join(corpus, name), "rb") as f:
                blob = f.read()[:1400]
            for eth, ip, udp in addresses.values():
                add(build(eth, ip, udp, blob))
    write_pcap(dst, header, out)
    print(f"pcaptool: {len(out)} malformed frames in {dst}")


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) == 5 and argv[1] == "split":
        header, records = read_pcap(argv[2])
        half = len(records) // 2
        write_pcap(argv[3], header, records[:half])
        write_pcap(argv[4], header, records[half:])
        return 0
    if len(argv) >= 4 and argv[1] == "cat":
        header, records = read_pcap(argv[3])
        for path in argv[4:]:
            records += read_pcap(path)[1]
        write_pcap(argv[2], header, records)
        return 0
    if len(argv) == 4 and argv[1] == "pad":
        # Bytes after the datagram, as Ethernet padding (or a NIC's trailer)
        # leaves them: the IP and UDP lengths, not the frame's, say where
        # the payload ends.
        header, records = read_pcap(argv[2])
        rng = random.Random(7)
        out = [(a, b, f + bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 47))))
               for a, b, f in records]
        write_pcap(argv[3], header, out)
        return 0
    if len(argv) == 4 and argv[1] == "udpcsum":
        header, records = read_pcap(argv[2])
        write_pcap(argv[3], header, [(a, b, udp_checksum(f)) for a, b, f in records])
        return 0
    if len(argv) == 6 and argv[1] == "ports":
        # Frames to the UDP ports listed (comma-separated) into one file,
        # the rest into the other, each in capture order.
        header, records = read_pcap(argv[2])
        ports = {int(p) for p in argv[5].split(",")}
        def port(frame):
            parts = udp_parts(frame)
            return parts and struct.unpack(">H", parts[2][2:4])[0]
        write_pcap(argv[3], header, [r for r in records if port(r[2]) in ports])
        write_pcap(argv[4], header, [r for r in records if port(r[2]) not in ports])
        return 0
    if len(argv) == 6 and argv[1] == "addrs":
        # Frames to the destination addresses listed (comma-separated) into
        # one file, the rest into the other, each in capture order.
        header, records = read_pcap(argv[2])
        addrs = {bytes(int(o) for o in a.split(".")) for a in argv[5].split(",")}
        def addr(frame):
            parts = udp_parts(frame)
            return parts and bytes(parts[1][16:20])
        write_pcap(argv[3], header, [r for r in records if addr(r[2]) in addrs])
        write_pcap(argv[4], header, [r for r in records if addr(r[2]) not in addrs])
        return 0
    if len(argv) == 3 and argv[1] == "count":
        print(len(read_pcap(argv[2])[1]))
        return 0
    if len(argv) >= 4 and argv[1] == "malform":
        seed, corpora, rest = 1, [], argv[4:]
        while rest:
            if rest[0] == "--seed" and len(rest) > 1:
                seed = int(rest[1])
            elif rest[0] == "--corpus" and len(rest) > 1:
                corpora.append(rest[1])
            else:
                sys.exit(f"pcaptool: unknown option {rest[0]}")
            rest = rest[2:]
        malform(argv[2], argv[3], seed, corpora)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
