#!/usr/bin/env bash
# Install the Debian packages wirebook needs, only those missing.
#
#   scripts/deps.sh [--for check|demo|build] [--list]
#
# --for says what they are for: 'build' (compile everything user space),
# 'demo' (build and run the demo: the same), 'check' (the default: also the
# unit tests, fuzzers, service tests, and the kernel module tests in qemu,
# which need kernels, headers and qemu). --list prints the packages that
# purpose needs and changes nothing. Runs as root (apt-get); prints what it
# would install otherwise.
set -euo pipefail

purpose=check list=0
while [ $# -gt 0 ]; do
	case "$1" in
	--for) purpose=${2:-}; shift 2 ;;
	--for=*) purpose=${1#--for=}; shift ;;
	--list) list=1; shift ;;
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "deps: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

# help2man makes the tools' man pages from their --help.
# libzstd-dev: wb-export --format dbn writes .dbn.zst (without it, plain .dbn).
# libdeflate-dev: wb-export deflates HDF5 chunks faster and a little smaller
# (without it, with zlib: the same values, read alike).
build=(build-essential pkg-config libpcap-dev libnuma-dev libhwloc-dev zlib1g-dev libzstd-dev python3 help2man
       libdeflate-dev)
# What the tests add: sanitizers and fuzzers (clang), Check, tcpreplay and
# iproute2 (veth, namespaces), gnuplot (latency plots), curl-free HTTP via
# python3, abidiff (abigail-tools: libwirebook's ABI check), libhdf5 and
# h5py (wb-export --format hdf5 and its test; without them wb-export
# writes CSV only); zstd and numpy (wb-export's DBN and hftbacktest files read
# back; the Python package's arrays and their test); the VM test's kernels,
# headers, qemu and initramfs tools; libnats-dev and nats-server (wirebookd
# --publish/--source nats:// and nats-test; without libnats, wirebookd builds
# without them and says so).
check=(clang check tcpreplay iproute2 gnuplot-nox abigail-tools libhdf5-dev python3-h5py zstd python3-numpy
       linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static cpio kmod xz-utils
       libnats-dev nats-server)
case "$purpose" in
build|demo) pkgs=("${build[@]}") ;;
check) pkgs=("${build[@]}" "${check[@]}") ;;
*) echo "deps: --for '$purpose': expected check, demo or build" >&2; exit 2 ;;
esac

if [ "$purpose" = check ]; then
	# The VM test boots every installed kernel: add Debian 12's 6.12
	# (security suite) where apt knows it, to catch kernel API drift;
	# skipped otherwise. A fresh machine's package lists may be empty:
	# refresh them once to look.
	kernel612=(linux-image-6.12-amd64 linux-headers-6.12-amd64)
	if [ "$list" -eq 0 ] &&
	   ! dpkg-query -W -f='${Status}' "${kernel612[0]}" 2>/dev/null | grep -q 'install ok installed' &&
	   ! apt-cache show "${kernel612[0]}" >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq || true
	fi
	for p in "${kernel612[@]}"; do
		if apt-cache show "$p" >/dev/null 2>&1; then
			pkgs+=("$p")
		elif [ "$list" -eq 0 ]; then
			echo "deps: $p not available from apt: the VM test runs on the installed kernels only"
		fi
	done
fi

if [ "$list" -eq 1 ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps ($purpose): installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: not root; install these yourself: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
