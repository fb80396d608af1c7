#!/usr/bin/env bash
# Issue 14.6 (and the all-unmapped part of 14.5): Linux cooked captures
# (SLL and SLL2, what tcpdump -i any writes) and raw IPv4 read like
# Ethernet in every tool; wb-dump and wirebookd count the same frames,
# unmapped frames and per-line packets on the same capture; input that
# maps to no feed names the addresses it saw, and wirebookd --exit-at-eof
# exits non-zero on it.
. "$(dirname "$0")/lib.sh"

# Rewrite an Ethernet pcap with another link-layer header.
relink_py=$(cat <<'PY'
import struct, sys
src, dst, kind = sys.argv[1:4]
d = open(src, 'rb').read()
magic = d[:4]
e = '<' if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
lt = {'sll': 113, 'sll2': 276, 'raw': 101}[kind]
out = [d[:20] + struct.pack(e + 'I', lt)]
off = 24
while off < len(d):
    s, us, cl, ol = struct.unpack(e + 'IIII', d[off:off + 16])
    f = d[off + 16:off + 16 + cl]
    off += 16 + cl
    et, body = f[12:14], f[14:]
    if et == b'\x81\x00':          # drop one VLAN tag: cooked headers carry none
        et, body = f[16:18], f[18:]
    if kind == 'sll':             # type (multicast), ARPHRD_ETHER, addr len, addr, protocol
        h = struct.pack('>HHH8s', 2, 1, 6, f[6:12] + b'\0\0') + et
    elif kind == 'sll2':          # protocol, reserved, ifindex, ARPHRD, type, addr len, addr
        h = et + struct.pack('>HIHBB8s', 0, 3, 1, 2, 6, f[6:12] + b'\0\0')
    else:
        h = b''
    rec = h + body
    out.append(struct.pack(e + 'IIII', s, us, len(rec), len(rec) + ol - cl) + rec)
open(dst, 'wb').write(b''.join(out))
PY
)
relink() { python3 -c "$relink_py" "$@"; }

# "frames unmapped | packets of each line", as wb-dump --stats says it
dump_counts() { # CAPTURE FEEDS
	"$B/wb-dump" -q --stats --feeds "$2" "$1" 2>/dev/null | awk '
		/^# frames/ { f = $3; u = $5 }
		/^#   packets / { p = p " " $3 }
		END { print f, u, "|" p }'
}
# the same from wirebookd's final stats
wbd_counts() { # CAPTURE FEEDS
	"$B/wirebookd" --pcap "$1" --feeds "$2" --shm "$SHM" --no-pin --exit-at-eof 2>/dev/null | awk '
		/^--- wirebookd stats/ { sub(/.*source pcap: /, ""); f = $1; u = $3; p = ""; n = 1 }
		n && $1 ~ /^[AB](:[0-9]+)?$/ && $4 ~ /^[0-9]+$/ { p = p " " $4 }	# feed lines only
		END { print f, u, "|" p }'
}

printf '239.39.62.190:32001 pitch bzx A\n239.39.62.191:32001 pitch bzx B\n' >"$T/bats.conf"
"$B/wb-gen" -p demo -s 5 --pitch --ab --gap-every 60 --dup-every 35 -o "$T/gen.pcap" >/dev/null 2>&1
sets=("$T/gen.pcap $ROOT/feeds.conf"
      "$ROOT/pcaps/pitch/bats-mcastpitch_realtime_useq.pcap $T/bats.conf"
      "$ROOT/pcaps/itch50/Multiple.Packets.pcap $ROOT/feeds.conf"
      "$ROOT/pcaps/pitch/MultipleMessages.pcap $T/bats.conf")
for set in "${sets[@]}"; do
	read -r cap feeds <<<"$set"
	base=$(basename "$cap" .pcap)
	want_events=$("$B/wb-dump" --feeds "$feeds" "$cap" 2>/dev/null | md5sum)
	want=$(dump_counts "$cap" "$feeds")
	got=$(wbd_counts "$cap" "$feeds")
	[ "$want" = "$got" ] && ok "$base: wb-dump and wirebookd count alike ($want)" ||
		bad "$base: wb-dump counts '$want', wirebookd '$got'"
	for kind in sll sll2 raw; do
		relink "$cap" "$T/$base.$kind.pcap" "$kind"
		ev=$("$B/wb-dump" --feeds "$feeds" "$T/$base.$kind.pcap" 2>"$T/err" | md5sum)
		[ "$ev" = "$want_events" ] && ok "$base as $kind: wb-dump decodes the same events" ||
			{ bad "$base as $kind: wb-dump events differ"; head -2 "$T/err"; }
		c1=$(dump_counts "$T/$base.$kind.pcap" "$feeds")
		c2=$(wbd_counts "$T/$base.$kind.pcap" "$feeds")
		[ "$c1" = "$want" ] && [ "$c2" = "$want" ] && ok "$base as $kind: same counts in both tools" ||
			bad "$base as $kind: wb-dump '$c1', wirebookd '$c2', Ethernet '$want'"
	done
done

# All unmapped: the addresses are named; --exit-at-eof gives a non-zero exit.
cap=$ROOT/pcaps/pitch/bats-mcastpitch_realtime_useq.pcap
relink "$cap" "$T/bats.sll2.pcap" sll2
"$B/wirebookd" --pcap "$T/bats.sll2.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin \
	--exit-at-eof >/dev/null 2>"$T/unmapped.err"
rc=$?
[ "$rc" -ne 0 ] && ok "all-unmapped input: wirebookd --exit-at-eof exits $rc" ||
	bad "all-unmapped input: wirebookd --exit-at-eof exits 0"
grep -q '239.39.62.190:32001 (375 frames)' "$T/unmapped.err" &&
	grep -q '239.39.62.191:32001 (364 frames)' "$T/unmapped.err" &&
	ok "all-unmapped input: wirebookd names the addresses seen" ||
	{ bad "all-unmapped input: no addresses in wirebookd's warning"; cat "$T/unmapped.err"; }
"$B/wb-dump" --feeds "$ROOT/feeds.conf" "$T/bats.sll2.pcap" >/dev/null 2>"$T/dump-unmapped.err"
grep -q '239.39.62.190:32001' "$T/dump-unmapped.err" && ok "all-unmapped input: wb-dump names them too" ||
	bad "all-unmapped input: wb-dump does not name the addresses"
# Anonymized capture (destination rewritten to 10.1.2.3, port 0: no feed map
# can name it): --proto decodes it in both tools, the same events and counts.
anon_py=$(cat <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read()); off = 24
while off < len(d):
    cl = struct.unpack('<I', d[off + 8:off + 12])[0]; f = off + 16
    ip = f + (18 if d[f + 12:f + 14] == b'\x81\x00' else 14)
    ihl = (d[ip] & 15) * 4
    d[ip + 16:ip + 20] = bytes([10, 1, 2, 3]); d[ip + 10:ip + 12] = b'\0\0'
    d[ip + ihl + 2:ip + ihl + 4] = b'\0\0'; d[ip + ihl + 6:ip + ihl + 8] = b'\0\0'
    off = f + cl
open(sys.argv[2], 'wb').write(bytes(d))
PY
)
cap=$ROOT/pcaps/itch50/Multiple.Packets.pcap
python3 -c "$anon_py" "$cap" "$T/anon.pcap"
printf '# nothing mapped\n' >"$T/empty.conf"
want_events=$("$B/wb-dump" --feeds "$ROOT/feeds.conf" "$cap" 2>/dev/null | md5sum)
got_events=$("$B/wb-dump" --feeds "$T/empty.conf" --proto itch:nasdaq "$T/anon.pcap" 2>/dev/null | md5sum)
[ "$got_events" = "$want_events" ] && ok "anonymized capture: wb-dump --proto decodes the same events" ||
	bad "anonymized capture: wb-dump --proto events differ"
"$B/wirebookd" --pcap "$T/anon.pcap" --proto itch --shm "$SHM" --no-pin --exit-at-eof \
	>"$T/anon.out" 2>"$T/anon.err"
rc=$?
want=$(dump_counts "$cap" "$ROOT/feeds.conf" | awk '{ print $1, $2 }')
got=$(awk '/^--- wirebookd stats/ { sub(/.*source pcap: /, ""); print $1, $3 }' "$T/anon.out" | tail -1)
[ "$rc" -eq 0 ] && [ "$got" = "$want" ] && ok "anonymized capture: wirebookd --proto takes every frame ($got)" ||
	{ bad "anonymized capture: wirebookd --proto exit $rc, frames/unmapped '$got', want '$want'"; head -3 "$T/anon.err"; }
"$B/wirebookd" --pcap "$T/anon.pcap" --proto itch:nyse --shm "$SHM" --no-pin --exit-at-eof \
	>/dev/null 2>"$T/anon-bad.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'serves nasdaq' "$T/anon-bad.err" &&
	ok "wirebookd --proto itch:nyse refused (exit 2, names the venues)" ||
	{ bad "wirebookd --proto itch:nyse: exit $rc"; cat "$T/anon-bad.err"; }
finish
