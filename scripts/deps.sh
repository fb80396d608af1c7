#!/usr/bin/env bash
# Install the Debian packages wirebook needs, only those missing.
# Runs as root (apt-get); prints what it would install otherwise.
set -euo pipefail

pkgs=(build-essential clang pkg-config libpcap-dev libnuma-dev libhwloc-dev
      check zlib1g-dev tcpreplay iproute2 python3 gnuplot-nox
      linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static cpio kmod xz-utils
      valgrind)

# The VM test boots every installed kernel: add Debian 12's 6.12 (security
# suite) where apt knows it, to catch kernel API drift; skipped otherwise.
# A fresh machine's package lists may be empty: refresh them once to look.
kernel612=(linux-image-6.12-amd64 linux-headers-6.12-amd64)
if ! dpkg-query -W -f='${Status}' "${kernel612[0]}" 2>/dev/null | grep -q 'install ok installed' &&
   ! apt-cache show "${kernel612[0]}" >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
	apt-get update -qq || true
fi
for p in "${kernel612[@]}"; do
	if apt-cache show "$p" >/dev/null 2>&1; then
		pkgs+=("$p")
	else
		echo "deps: $p not available from apt: the VM test runs on the installed kernels only"
	fi
done

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: not root; install these yourself: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
