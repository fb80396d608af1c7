#!/usr/bin/env bash
# Late join by Cboe Spin from the command line (make recovery-short):
# wb-recoveryd --service spin's usage and refusals, its answers on the wire
# (a bad login 'N', an image for another sequence 'O', the spin and Spin
# Finished), spin lines of recovery.conf, and wirebookd joining half way
# through the day against a Spin server that answers (the books whole),
# drops the session half way through the spin (aborted, retried, whole in
# the end), answers 'O' and then 'S' (counted, asked again, whole in the
# end), sends an Image Available before its Login Response (one bad packet,
# whole) or refuses the login (retried, BZX alone stale, Nasdaq not held up,
# given up in the end).
. "$(dirname "$0")/recovery-lib.sh" spin

# serve PCAP [ARGS...]: wb-recoveryd --service spin for bzx on a free port, sets $port
serve() {
	start_recoveryd --service spin --pcap "$1" --venue bzx --feeds "$FEEDS" "${@:2}"
}

# run NAME PCAP CONF: wirebookd's books, output in $T/NAME.out
run() {
	timeout 60 "$WBD" --pcap "$2" --feeds "$FEEDS" --shm "wb-rec-spin-$$-$1" --force --no-pin \
		--exit-at-eof --recovery "$3" > "$T/$1.out" 2> "$T/$1.err" ||
		bad "wirebookd $1: exit $?: $(tail -2 "$T/$1.err")"
}
vsum() { sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/$1.out"; }

# ---- usage and refusals
expect_exit "spin for an ITCH venue" 2 "which --service grp cannot serve" \
	$SRV --service spin --pcap x --venue nasdaq --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "--unit without spin" 2 "--unit is for --service spin" \
	$SRV --service grp --pcap x --venue bzx --listen 127.0.0.1:0 --reply-to 127.0.0.1:9 --unit 1
expect_exit "--unit 256" 2 "--unit" \
	$SRV --service spin --pcap x --venue bzx --listen 127.0.0.1:0 --unit 256
expect_exit "spin user of 6 characters" 2 "at most 4 characters for grp and spin" \
	$SRV --service spin --pcap x --venue bzx --listen 127.0.0.1:0 --user WB0001
$SRV --help | grep -q -- '--service spin: the Cboe Spin server' && ok || bad "--help says nothing of spin"

# BZX alone, so that its books are the venue books compared; with Nasdaq
# (joined late, no recovery for it) for the refused login.
gen=(-q -p day -n 30000 --symbols 50 -s 3 --ab --feeds $FEEDS)
"$B/wb-gen" "${gen[@]}" --venues bzx -o "$T/day.pcap"
"$B/wb-gen" "${gen[@]}" --venues nasdaq,bzx -o "$T/both.pcap"
python3 scripts/pitch-cut.py "$T/both.pcap" "$T/both-late.pcap" > /dev/null
read -r unit join < <(python3 scripts/pitch-cut.py "$T/day.pcap" "$T/late.pcap")
[ -n "${join:-}" ] || { bad "pitch-cut found no mid-day"; exit 1; }
expect_exit "--snapshot-at past the unit" 2 "unit $unit ends at" \
	$SRV --service spin --pcap "$T/day.pcap" --venue bzx --listen 127.0.0.1:0 --feeds $FEEDS \
	--snapshot-at 99999999
expect_exit "--unit the capture lacks" 2 "no message of that --unit" \
	$SRV --service spin --pcap "$T/day.pcap" --venue bzx --listen 127.0.0.1:0 --feeds $FEEDS \
	--unit $((unit + 1))

for c in "nasdaq spin 127.0.0.1:1 unit=1|which a spin service cannot serve" \
	 "bzx spin 127.0.0.1:1|a spin service needs unit=N" \
	 "bzx spin 127.0.0.1:1 unit=256|unit= wants a PITCH unit" \
	 "bzx grp 127.0.0.1:1 gap=127.0.0.1:2 unit=1|only a spin service takes unit=" \
	 "bzx spin 127.0.0.1:1 unit=1 user=WB0001|user= has at most 4 characters" \
	 "bzx spin 127.0.0.1:1 unit=1
bzx spin 127.0.0.1:2 unit=1|a second snapshot service"; do
	printf '%s\n' "${c%|*}" > "$T/recovery.conf"
	expect_exit "recovery.conf: ${c%|*}" 2 "${c#*|}" \
		$WBD --pcap "$T/late.pcap" --feeds $FEEDS --recovery "$T/recovery.conf" --no-pin --exit-at-eof
done

# ---- the server on the wire: 'N', the image, 'O', the spin and Spin Finished
at=$((join + 100))
serve "$T/day.pcap" --service spin --snapshot-at $at --user WB01 --password sp || exit 1
wire=$(python3 - "$port" "$at" <<'PY'
import socket, struct, sys
port, at = int(sys.argv[1]), int(sys.argv[2])

def frame(mtype, body):
    return struct.pack("<HBBI", 10 + len(body), 1, 0, 0) + bytes([2 + len(body), mtype]) + body

def login(user, password):
    return frame(0x01, b"0001" + user.ljust(4).encode() + b"  " + password.ljust(10).encode())

def frames(s, until_type):
    """Messages off the session until one of until_type (or the end)."""
    buf, out = b"", []
    while True:
        while len(buf) >= 2 and len(buf) >= buf[0] | buf[1] << 8:
            n = buf[0] | buf[1] << 8
            f, buf = buf[:n], buf[n:]
            off = 8
            for _ in range(f[2]):
                out.append(f[off:off + f[off]])
                if f[off + 1] == until_type:
                    return out
                off += f[off]
        got = s.recv(65536)
        if not got:
            return out
        buf += got

s = socket.create_connection(("127.0.0.1", port))
s.sendall(login("WB01", "bad"))
m = frames(s, 0x02)
print("bad-login", m[-1].hex() if m else "none", "closed" if s.recv(1) == b"" else "open")
s = socket.create_connection(("127.0.0.1", port))
s.sendall(login("WB01", "sp"))
m = frames(s, 0x80)
print("login", m[0].hex(), "image", m[-1].hex())
s.sendall(frame(0x81, struct.pack("<I", at + 1)))
m = frames(s, 0x82)
print("other", m[-1].hex())
s.sendall(frame(0x81, struct.pack("<I", at)))
m = frames(s, 0x83)
resp = [x for x in m if x[1] == 0x82][0]
adds = sum(1 for x in m if x[1] in (0x21, 0x2F))
print("spin", resp[:6].hex(), resp[10:].decode(), struct.unpack_from("<I", resp, 6)[0] == adds,
      adds, m[-1].hex())
PY
)
le() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
grep -qx "bad-login 03024e closed" <<< "$wire" && ok || bad "a bad login: $(grep bad-login <<< "$wire")"
grep -qx "login 030241 image 0680$(le $at)" <<< "$wire" && ok || bad "login and image: $wire"
grep -qx "other 0b82$(le $((at + 1)))000000004f" <<< "$wire" && ok || bad "another sequence: $wire"
grep -qx "spin 0b82$(le $at) A True [1-9][0-9]* 0683$(le $at)" <<< "$wire" && ok ||
	bad "the spin: $(grep '^spin' <<< "$wire")"

# ---- the spin answered: the venue books of the whole day
"$WBD" --pcap "$T/day.pcap" --feeds "$FEEDS" --shm "wb-rec-spin-$$-whole" --force --no-pin \
	--exit-at-eof > "$T/whole.out" 2> "$T/whole.err" || bad "the whole day's run failed"
printf 'bzx spin 127.0.0.1:%s unit=%s user=WB01 password=sp\n' "$port" "$unit" > "$T/good.conf"
run good "$T/late.pcap" "$T/good.conf"
if grep -q "^recovery bzx unit $unit snapshot (spin .*; snapshots 1, messages [1-9]" "$T/good.out"; then ok
else bad "no spin taken: $(grep '^recovery' "$T/good.out")"; fi
[ -n "$(vsum good)" ] && [ "$(vsum good)" = "$(vsum whole)" ] && ok ||
	bad "late join by spin: venue books $(vsum good), the whole day's $(vsum whole)"

# ---- dropped half way: aborted, retried, whole in the end (the real time
# decoded after the abort is past the image: the hole between them is
# filled by the GRP)
gap_port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log="$T/grp.log"
"$SRV" --service grp --pcap "$T/day.pcap" --venue bzx --listen 127.0.0.1:0 --feeds "$FEEDS" \
	--reply-to "127.0.0.1:$gap_port" 2> "$log" &
servers+=($!)
for _ in $(seq 100); do
	grp_port=$(sed -n 's/.*serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log" 2>/dev/null)
	[ -n "$grp_port" ] && break
	sleep 0.05
done
serve "$T/day.pcap" --snapshot-at $at --hangup-after 300 || exit 1
printf 'bzx grp 127.0.0.1:%s gap=127.0.0.1:%s\nbzx spin 127.0.0.1:%s unit=%s\n' "$grp_port" \
	"$gap_port" "$port" "$unit" > "$T/broken.conf"
run broken "$T/late.pcap" "$T/broken.conf"
if grep -q "^recovery bzx unit $unit snapshot (.*; snapshots [12], messages [0-9]*, orders announced [0-9]*, aborted 1,.*hangups 1," \
	"$T/broken.out"; then ok
else bad "--hangup-after: $(grep '^recovery bzx unit' "$T/broken.out")"; fi
[ "$(vsum broken)" = "$(vsum whole)" ] && ok || bad "--hangup-after: books differ from the whole day's"

# standin MODE: a Spin stand-in in front of the real server ($port), which
# sets $standin to its port. MODE refusals: the first session answers 'O',
# the second 'S' (with sequence 0, as in BATS's capture), later ones go
# through; early: every session gets an Image Available before anything
# else, then goes through.
standin() {
	local log="$T/standin-$1.log"
	python3 - "$1" "$port" "$at" 2> "$log" <<'PY' &
import socket, struct, sys, threading
mode, real, at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def frame(mtype, body):
    return struct.pack("<HBBI", 10 + len(body), 1, 0, 0) + bytes([2 + len(body), mtype]) + body
def refuse(c, n):
    c.recv(64)                                     # the Login
    c.sendall(frame(0x02, b"A") + frame(0x80, struct.pack("<I", at)))
    req = b""
    while len(req) < 14:
        req += c.recv(64)
    asked = struct.unpack_from("<I", req, 10)[0]
    c.sendall(frame(0x82, struct.pack("<IIB", asked if n == 0 else 0, 0,
                                      ord("O") if n == 0 else ord("S"))))
    while c.recv(64):
        pass
def pipe(a, b):
    while True:
        d = a.recv(65536)
        if not d:
            b.shutdown(socket.SHUT_WR)
            return
        b.sendall(d)
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4)
print("stand-in: serving on 127.0.0.1:%d" % ls.getsockname()[1], file=sys.stderr, flush=True)
n = 0
while True:
    c, _ = ls.accept()
    if mode == "refusals" and n < 2:
        refuse(c, n)
    else:
        if mode == "early":
            c.sendall(frame(0x80, struct.pack("<I", at)))  # before any login
        r = socket.create_connection(("127.0.0.1", real))
        threading.Thread(target=pipe, args=(r, c), daemon=True).start()
        threading.Thread(target=pipe, args=(c, r), daemon=True).start()
    n += 1
PY
	servers+=($!)
	standin=
	for _ in $(seq 100); do
		standin=$(sed -n 's/.*serving on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log" 2>/dev/null)
		[ -n "$standin" ] && break
		sleep 0.05
	done
}

# ---- 'O' and 'S': counted, asked again on a new session; the stand-in
# answers the first two sessions and hands the third to the real server
serve "$T/day.pcap" --snapshot-at $at || exit 1
standin refusals
printf 'bzx spin 127.0.0.1:%s unit=%s\n' "$standin" "$unit" > "$T/refusals.conf"
run refusals "$T/late.pcap" "$T/refusals.conf"
if grep -q "^recovery bzx unit $unit snapshot (.*; snapshots 1,.*requests 3, refused out of range 1, in progress 1, other 0;.* connects 3," \
	"$T/refusals.out"; then ok
else bad "'O' and 'S': $(grep '^recovery bzx unit' "$T/refusals.out")"; fi
[ "$(vsum refusals)" = "$(vsum good)" ] && ok || bad "'O' and 'S': books differ from the answered spin's"

# ---- an Image Available before the Login Response: one bad packet, the
# session goes on (it used to stop reading there and count the same frame
# again on every poll, never reaching the Login Response behind it)
serve "$T/day.pcap" --snapshot-at $at || exit 1
standin early
printf 'bzx spin 127.0.0.1:%s unit=%s\n' "$standin" "$unit" > "$T/early.conf"
run early "$T/late.pcap" "$T/early.conf"
if grep -q "^recovery bzx unit $unit snapshot (.*; snapshots 1,.* connects 1,.*bad packets 1;" "$T/early.out"; then ok
else bad "an early Image Available: $(grep '^recovery bzx unit' "$T/early.out")"; fi
[ "$(vsum early)" = "$(vsum good)" ] && ok || bad "an early Image Available: books differ from the answered spin's"

# ---- a unit no spin line serves, with no gap fill: lost at once, no fill
printf 'bzx spin 127.0.0.1:1 unit=%s\n' $((unit + 1)) > "$T/other-unit.conf"
run other-unit "$T/late.pcap" "$T/other-unit.conf"
if grep -q "^recovery bzx (spin .*; gaps 1, filled 0, unrecoverable 1, .*lost [1-9].*(0 fills)" \
	"$T/other-unit.out" && grep -q "^recovery bzx unit $((unit + 1)) snapshot (.*connects 0," \
	"$T/other-unit.out"; then ok
else bad "a unit no spin line serves: $(grep '^recovery bzx' "$T/other-unit.out")"; fi

# ---- a refused login: retried with backoff, BZX alone RECOVERING (Nasdaq
# goes on), the spin given up in the end and the day goes on
serve "$T/both.pcap" --user WB01 --password right || exit 1
printf 'bzx spin 127.0.0.1:%s unit=%s user=WB01 password=wrong retries=6\n' "$port" "$unit" \
	> "$T/refused.conf"
"$WBD" --pcap "$T/both-late.pcap" --feeds "$FEEDS" --shm "wb-rec-spin-$$-refused" --force --no-pin \
	--exit-at-eof --recovery "$T/refused.conf" > "$T/refused.out" 2> "$T/refused.err" &
wbd=$!
watch_recovering "wb-rec-spin-$$-refused" "$T/refused.book"
timeout 30 tail --pid=$wbd -f /dev/null
wait $wbd || bad "wirebookd with a refused login: exit $?"
# BZX is venue 2 (enum wb_venue): bit 2 alone.
[ "$state" = "RECOVERING: venues 0x4" ] && ok || bad "refused login: not BZX alone recovering: '$state'"
if grep -q "^recovery bzx unit $unit snapshot (.*; snapshots 0,.* given up 1;.* logins refused [2-9]" "$T/refused.out"; then ok
else bad "refused login: $(grep '^recovery bzx unit' "$T/refused.out")"; fi
grep -q "refused the login 'WB01' (status N)" "$T/refused.err" && ok || bad "refused login not said on stderr"
awk '$2 == "nasdaq" && $6 > 0 { found = 1 } END { exit !found }' "$T/refused.out" && ok ||
	bad "Nasdaq decoded nothing while BZX waited: $(grep nasdaq "$T/refused.out")"

echo "recovery-spin-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
