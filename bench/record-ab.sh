#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: two builds of kmemtrace record against each other and the
# floor, paired and repeated on one workload (bench/record.sh's method):
# which change cost the recording its time.
#
#   KMT_A=old/build/kmemtrace KMT_B=build/kmemtrace bench/record-ab.sh
#
# Each round runs floor, A and B in a fresh random order; the workload is
# timed from inside (bench/wl.sh); the whole command from outside. Prints
# a markdown section: each build's workload wall and machine CPU over the
# floor's, its whole command over the floor's workload, and B over A,
# paired medians.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT_A=${KMT_A:?give KMT_A, the binary to compare with}
KMT_B=${KMT_B:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-9}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
BUF_KB=${BUF_KB:-65536}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM
WL=("$here/wl.sh" $WORKLOAD)

declare -A W C TOT

run_cfg() {	# cfg round
	local cfg=$1 i=$2 t0 t1 k
	case $cfg in
	floor)
		floor_on "$BUF_KB"
		"${WL[@]}" 3> "$tmp/t"
		floor_off ;;
	A|B)
		[ $cfg = A ] && k=$KMT_A || k=$KMT_B
		rm -f "$tmp/k.dat" "$tmp/k.dat.old"
		t0=$(now)
		"$k" record -q -b "$BUF_KB" -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t"
		t1=$(now)
		TOT[$cfg,$i]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ;;
	esac
	read -r W[$cfg,$i] C[$cfg,$i] < "$tmp/t"
}

paired_rounds record-ab "floor A B"

tot() { local cfg=$1 i; for i in $(seq 1 "$ROUNDS"); do ratio "${TOT[$cfg,$i]}" "${W[floor,$i]}"; echo; done | median; }
totab() { local i; for i in $(seq 1 "$ROUNDS"); do ratio "${TOT[B,$i]}" "${TOT[A,$i]}"; echo; done | median; }
cat <<MD
### kmemtrace record, two builds: \`$WORKLOAD\` — $ROUNDS paired rounds, ring buffer $BUF_KB KiB per CPU

A: \`$("$KMT_A" --version) ($KMT_A)\`; B: \`$("$KMT_B" --version) ($KMT_B)\`.

| build | workload wall × floor | machine CPU × floor | whole command × floor's workload wall |
|---|---|---|---|
| A | $(pratio A floor W) | $(pratio A floor C) | $(tot A) |
| B | $(pratio B floor W) | $(pratio B floor C) | $(tot B) |
| B / A | $(pratio B A W) | $(pratio B A C) | $(totab) |

_Run $(date -u '+%Y-%m-%d %H:%M') UTC; $(machine)._
MD
