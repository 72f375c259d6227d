#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fetch the matrix's kernels (tests/kernels/kernels.list) into the cache,
# once: each kernel's package is unpacked under $KMT_KERNEL_CACHE/ID/
# (vmlinuz, the modules under root/, the package's name in "package"), and
# a later run finds it there and downloads nothing. Also the guests' tools
# of each arch (busybox-static, jq), the same way.
#
#   tests/kernels/fetch.sh [ID...]      (root; default: every kernel listed)
#
# Debian's own apt, with a private configuration under the cache (its own
# sources, lists and keyring check; the system's sources are not touched):
# the newest package of the suite whose name matches the list's pattern.
set -euo pipefail
cd "$(dirname "$0")"
CACHE=${KMT_KERNEL_CACHE:-/var/cache/kmemtrace-kernels}
MIRROR=${KMT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
APTD=$CACHE/apt

mkdir -p "$CACHE"
exec 9> "$CACHE/.lock"
flock 9

apt_opts=(-q -o Dir::Etc::SourceList="$APTD/sources.list" -o Dir::Etc::SourceParts="$APTD/none"
	-o Dir::Etc::Preferences="$APTD/none/preferences" -o Dir::Etc::PreferencesParts="$APTD/none"
	-o Dir::State="$APTD/state" -o Dir::State::status="$APTD/state/status"
	-o Dir::Cache="$APTD/cache" -o APT::Architecture=amd64
	-o APT::Architectures::=amd64 -o APT::Architectures::=arm64
	-o Acquire::Languages=none -o APT::Sandbox::User=root)
apt_ready=

# The private apt's lists of every suite the list names, fetched once a run.
apt_update() {
	[ -z "$apt_ready" ] || return 0
	local s
	mkdir -p "$APTD/state/lists/partial" "$APTD/cache/archives/partial" "$APTD/none"
	touch "$APTD/state/status"
	: > "$APTD/sources.list"
	for s in $(awk '!/^#/ && NF { print $3 }' kernels.list | sort -u) bookworm; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $s main"
	done | sort -u > "$APTD/sources.list"
	echo "fetch: apt-get update (private lists under $APTD)" >&2
	apt-get "${apt_opts[@]}" update > "$APTD/update.log" 2>&1 ||
		{ tail -n 20 "$APTD/update.log" >&2; return 1; }
	apt_ready=1
}

# "NAME VERSION" of the newest package of suite $3 and arch $2 named like $1.
newest() {	# regex arch suite
	local names
	names=$(apt-cache "${apt_opts[@]}" pkgnames | grep -E "$1" | sed "s/\$/:$2/") || return 0
	apt-cache "${apt_opts[@]}" madison $names |
		awk -F' *[|] *' -v s=" $3/main " 'index($3, s) { sub(/^ +/, "", $1); sub(/:.*/, "", $1); print $1, $2 }' |
		sort -V | tail -n 1
}

# Download NAME:ARCH=VERSION into $CACHE/debs; print the .deb's path.
download() {	# name arch version
	mkdir -p "$CACHE/debs"
	(cd "$CACHE/debs" && apt-get "${apt_opts[@]}" download "$1:$2=$3" >&2) || return 1
	ls "$CACHE/debs/$1_"*"_$2.deb" | head -n 1
}

fetch_kernel() {	# id arch suite regex
	local id=$1 arch=$2 suite=$3 re=$4 d=$CACHE/$1 pkg deb k
	if [ -s "$d/vmlinuz" ] && [ -s "$d/package" ]; then
		echo "fetch: $id: $(cat "$d/package") (cached)" >&2
		return 0
	fi
	apt_update
	pkg=$(newest "$re" "$arch" "$suite")
	[ -n "$pkg" ] || { echo "fetch: $id: no package like $re in $suite ($arch)" >&2; return 1; }
	echo "fetch: $id: $pkg" >&2
	deb=$(download ${pkg% *} "$arch" "${pkg#* }") || return 1
	rm -rf "$d.tmp" && mkdir -p "$d.tmp"
	dpkg -x "$deb" "$d.tmp/root"
	k=$(ls "$d.tmp"/root/boot/vmlinuz-* | head -n 1)
	# arm64's vmlinuz is a gzipped Image: qemu loads the Image itself.
	if [ "$(head -c 2 "$k" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
		gunzip -c "$k" > "$d.tmp/vmlinuz"
	else
		cp "$k" "$d.tmp/vmlinuz"
	fi
	basename "$k" | sed 's/^vmlinuz-//' > "$d.tmp/release"
	echo "$pkg $arch" > "$d.tmp/package"
	rm -rf "$d" && mv "$d.tmp" "$d"
	rm -f "$deb"
}

# The guest's tools for ARCH, from bookworm: busybox-static, and jq with
# its libraries, unpacked under $CACHE/tools-ARCH/root.
TOOL_PKGS="busybox-static jq libjq1 libonig5"
fetch_tools() {	# arch
	local d=$CACHE/tools-$1 p pkg deb
	[ -s "$d/packages" ] && return 0
	apt_update
	rm -rf "$d.tmp" && mkdir -p "$d.tmp"
	for p in $TOOL_PKGS; do
		pkg=$(newest "^$p\$" "$1" bookworm)
		[ -n "$pkg" ] || { echo "fetch: no $p in bookworm ($1)" >&2; return 1; }
		deb=$(download ${pkg% *} "$1" "${pkg#* }") || return 1
		dpkg -x "$deb" "$d.tmp/root" && rm -f "$deb"
		echo "$pkg" >> "$d.tmp/packages"
	done
	rm -rf "$d" && mv "$d.tmp" "$d"
}

rc=0
want=" $* "
while read -r id arch suite re; do
	case $id in ''|'#'*) continue;; esac
	[ $# -eq 0 ] || [[ $want == *" $id "* ]] || continue
	fetch_kernel "$id" "$arch" "$suite" "$re" || rc=1
	fetch_tools "$arch" || rc=1
done < kernels.list
exit $rc
