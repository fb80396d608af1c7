#!/usr/bin/env python3
"""ITCH-over-MoldUDP64 captures for the recovery tests (scripts/recovery.sh).

  itch-pcap.py points PCAP            the sequences of the day's landmarks:
                                      "system_S Q M halt resume last" (0: none)
  itch-pcap.py cut PCAP OUT SEQ [PORT]
                                      the capture from the first packet whose
                                      sequence is SEQ or more (a process started
                                      then sees that; A and B lines alike); with
                                      PORT, the first such packet to that UDP port
                                      (one Mold stream of several: UQDF beside ITCH)
  itch-pcap.py last PCAP PORT         the last sequence of the Mold stream to PORT
  itch-pcap.py head PCAP OUT SEQ      the capture before that packet (the rest of
                                      what cut leaves out)
  itch-pcap.py halt PCAP OUT AT RESUME
                                      the day with one symbol's Trading Action
                                      'H' (halted) inserted after message AT and
                                      'T' (trading) after RESUME, later sequences
                                      moved up (wb-gen's days have no halt)
  itch-pcap.py newsession PCAP OUT SEQ
                                      the capture before the first ITCH packet
                                      whose sequence is SEQ or more, then that
                                      packet again under a new MoldUDP64 session
                                      (its sequence 1): the venue's books start
                                      over (wb-gen's days keep one session)

Reads classic little-endian pcap of Ethernet/IPv4/UDP, as wb-gen writes it;
packets that are not MoldUDP64 (other venues' feeds) are passed through.
"""
import struct
import sys


def records(path):
    src = open(path, "rb").read()
    out, off = [], 24
    while off + 16 <= len(src):
        n = struct.unpack_from("<I", src, off + 8)[0]
        out.append(bytearray(src[off:off + 16 + n]))
        off += 16 + n
    return src[:24], out


def mold(rec):
    """(payload offset, seq, count) of a record's MoldUDP64 packet, or None."""
    ihl = (rec[16 + 14] & 0x0F) * 4
    at = 16 + 14 + ihl + 8
    if len(rec) < at + 20:
        return None
    seq, count = struct.unpack_from(">QH", rec, at + 10)
    if count not in (0, 0xFFFF):
        # Another feed's packet (PITCH beside ITCH) does not parse as blocks that fill it.
        off = at + 20
        for _ in range(count):
            if off + 2 > len(rec):
                return None
            off += 2 + struct.unpack_from(">H", rec, off)[0]
        if off != len(rec):
            return None
    elif len(rec) != at + 20:
        return None
    return at, seq, count


def messages(rec):
    at, seq, count = mold(rec)
    off = at + 20
    if count in (0, 0xFFFF):
        return
    for i in range(count):
        n = struct.unpack_from(">H", rec, off)[0]
        yield seq + i, bytes(rec[off + 2:off + 2 + n])
        off += 2 + n


def points(path):
    _, recs = records(path)
    seen, sys_s, q, m, halt, resume, last = set(), 0, 0, 0, 0, 0, 0
    for r in recs:
        if not mold(r):
            continue
        for seq, msg in messages(r):
            if seq in seen:
                continue
            seen.add(seq)
            last = max(last, seq)
            if msg[:1] == b"S":
                code = chr(msg[11])
                sys_s = sys_s or (seq if code == "S" else 0)
                q = q or (seq if code == "Q" else 0)
                m = m or (seq if code == "M" else 0)
            elif msg[:1] == b"H":
                if chr(msg[19]) == "H" and not halt:
                    halt = seq
                elif chr(msg[19]) == "T" and halt and not resume:
                    resume = seq
    print(sys_s, q, m, halt, resume, last)


def dst_port(rec):
    ip = 16 + 14
    ihl = (rec[ip] & 0x0F) * 4
    return struct.unpack_from(">H", rec, ip + ihl + 2)[0]


def cut(path, out, seq, before=False, port=None):
    head, recs = records(path)
    with open(out, "wb") as f:
        f.write(head)
        started = False
        for r in recs:
            mo = mold(r)
            started = started or (mo and mo[2] not in (0, 0xFFFF) and mo[1] >= seq and
                                  (port is None or dst_port(r) == port))
            if started != before:
                f.write(r)


def fix_lengths(r):
    """After the payload changed: pcap lengths, IPv4 length and checksum, UDP length."""
    n = len(r) - 16
    struct.pack_into("<II", r, 8, n, n)
    ip = 16 + 14
    ihl = (r[ip] & 0x0F) * 4
    struct.pack_into(">H", r, ip + 2, n - 14)
    struct.pack_into(">H", r, ip + 10, 0)
    s = sum(struct.unpack_from(">%dH" % (ihl // 2), r, ip))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into(">H", r, ip + 10, ~s & 0xFFFF)
    struct.pack_into(">HH", r, ip + ihl + 4, n - 14 - ihl, 0)


def halt(path, out, at, resume):
    head, recs = records(path)
    locate, stock, ts = None, None, {}
    for r in recs:
        if mold(r):
            for seq, msg in messages(r):
                if msg[:1] == b"R" and locate is None:
                    locate, stock = msg[1:3], msg[11:19]
                ts.setdefault(seq, msg[5:11])
    if locate is None or at >= resume:
        sys.exit("itch-pcap.py halt: no stock directory, or AT >= RESUME")

    def action(state, after):
        m = bytearray(25)
        m[0:1] = b"H"
        m[1:3] = locate
        m[5:11] = ts[after]
        m[11:19] = stock
        m[19:20] = state
        m[21:25] = b"    " if state == b"T" else b"T1  "
        return bytes(m)

    # Each goes after the packet holding its message, so packets stay whole.
    anchors = {}
    for k, state in ((at, b"H"), (resume, b"T")):
        for r in recs:
            mo = mold(r)
            if mo and mo[2] not in (0, 0xFFFF) and mo[1] <= k < mo[1] + mo[2]:
                anchors[mo[1] + mo[2] - 1] = action(state, k)
                break
    with open(out, "wb") as f:
        f.write(head)
        for r in recs:
            mo = mold(r)
            if not mo:
                f.write(r)
                continue
            at_, seq, count = mo
            struct.pack_into(">Q", r, at_ + 10, seq + sum(1 for k in anchors if k < seq))
            f.write(r)
            last = seq + count - 1
            if count not in (0, 0xFFFF) and last in anchors:
                p = bytearray(r)
                p[at_ + 20:] = struct.pack(">H", 25) + anchors[last]
                struct.pack_into(">QH", p, at_ + 10,
                                 last + 1 + sum(1 for k in anchors if k < last), 1)
                fix_lengths(p)
                f.write(p)


def newsession(path, out, seq):
    head, recs = records(path)
    with open(out, "wb") as f:
        f.write(head)
        for r in recs:
            mo = mold(r)
            if mo and mo[2] not in (0, 0xFFFF) and mo[1] >= seq:
                p = bytearray(r)
                at = mo[0]
                p[at + 9:at + 10] = b"Y" if p[at + 9:at + 10] != b"Y" else b"Z"
                struct.pack_into(">Q", p, at + 10, 1)
                f.write(p)
                return
            f.write(r)
    sys.exit("itch-pcap.py newsession: no ITCH packet at or after that sequence")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "points" and len(sys.argv) == 3:
        points(sys.argv[2])
    elif cmd == "cut" and len(sys.argv) in (5, 6):
        cut(sys.argv[2], sys.argv[3], int(sys.argv[4]),
            port=int(sys.argv[5]) if len(sys.argv) == 6 else None)
    elif cmd == "last" and len(sys.argv) == 4:
        port = int(sys.argv[3])
        print(max((mo[1] + mo[2] - 1 for r in records(sys.argv[2])[1]
                   for mo in [mold(r)] if mo and mo[2] not in (0, 0xFFFF) and
                   dst_port(r) == port), default=0))
    elif cmd == "head" and len(sys.argv) == 5:
        cut(sys.argv[2], sys.argv[3], int(sys.argv[4]), before=True)
    elif cmd == "newsession" and len(sys.argv) == 5:
        newsession(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "halt" and len(sys.argv) == 6:
        halt(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
