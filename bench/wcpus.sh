#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: finishing the file on a machine of N CPUs (issue 26 item 5).
# bench/wcpus.c writes the same 128 MiB of real ring-buffer pages (from a
# hackbench recording) as the trace.dat of N CPUs, for N from 1 to 128;
# with BASE (a kmt-wcpus built on another tree) both in a fresh random
# order each round. What grows with N is the writer's cost per CPU.
# Prints a markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
WCPUS=${WCPUS:-$here/../build/bench/kmt-wcpus}
BASE=${BASE:-}
ROUNDS=${ROUNDS:-5}
NS=${NS:-1 2 4 8 16 32 64 128}
PAGES=${PAGES:-}
. "$here/lib.sh"
tmp=$(mktemp -d /tmp/kmt-bench-wcpus.XXXXXX)
trap 'rm -rf "$tmp"; [ -n "${made:-}" ] && rm -f "$PAGES"' EXIT
trap 'exit 130' INT TERM

if [ -z "$PAGES" ]; then	# 128 MiB of CPU 0's pages of a fresh hackbench recording
	PAGES=/dev/shm/kmt-wcpus-pages-$$ made=1
	"$KMT" record -q -o "$tmp/r.dat" -- hackbench -g 4 -l 1000 > /dev/null
	"$KMT" convert --compression none "$tmp/r.dat" "$tmp/raw.dat"
	off=$("$KMT" info "$tmp/raw.dat" | tr -d , | awk '/CPU 0 data: offset/ { sub(",", "", $5); print $5 }')
	dd if="$tmp/raw.dat" of="$PAGES" bs=4096 skip=$((off / 4096)) count=32768 status=none
	rm -f "$tmp/r.dat" "$tmp/raw.dat"
fi
declare -A S
for i in $(seq 1 "$ROUNDS"); do
	echo "wcpus bench: round $i/$ROUNDS" >&2
	for n in $NS; do
		for b in $(printf 'new\n%s' "${BASE:+base}" | shuf); do
			w=$WCPUS; [ "$b" = base ] && w=$BASE
			S[$b,$n,$i]=$("$w" "$PAGES" "$n" 3 | awk '{ print $2 }')
		done
	done
done
c() { for i in $(seq 1 "$ROUNDS"); do echo "${S[$1,$2,$i]}"; done | median; }
r() { for i in $(seq 1 "$ROUNDS"); do ratio "${S[$1,$2,$i]}" "${S[$3,$4,$i]}"; echo; done | median; }
mib=$(( $(stat -c %s "$PAGES") >> 20 ))
echo "### Finishing the file on N CPUs: the same $mib MiB of pages, zstd 1 — $ROUNDS paired rounds"
echo
if [ -n "$BASE" ]; then
	echo "| CPUs | base s (median) | base × 1 CPU | new s (median) | new × 1 CPU | new / base (paired) |"
	echo "|---|---|---|---|---|---|"
	for n in $NS; do
		printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$(c base "$n")" "$(r base "$n" base 1)" \
			"$(c new "$n")" "$(r new "$n" new 1)" "$(r new "$n" base "$n")"
	done
else
	echo "| CPUs | s (median) | × 1 CPU |"
	echo "|---|---|---|"
	for n in $NS; do printf '| %s | %s | %s |\n' "$n" "$(c new "$n")" "$(r new "$n" new 1)"; done
fi
echo
echo "- The writer's threads: $(nproc) compressing (the CPUs online, at most 16)."
