#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: two builds of kmemtrace's analysis against each other, paired
# and repeated: report at -j 1, 2, 4 and 8, export to pprof and Perfetto on
# one recording, and top's own CPU per event under a workload at -j 1, 2
# and 4. Which change cost the analysis its time.
#
#   KMT_A=old/build/kmemtrace KMT_B=build/kmemtrace bench/analyse-ab.sh
#   CASES="report-j4 top-j2" ROUNDS=15 ...   (some of them, more rounds)
#
# Each round runs A and B in a fresh random order. The file commands are
# timed from outside (wall, and the CPU the machine was busy); top's CPU
# is its own, from its snapshots (cpu_pct over each interval), per event
# it analysed. Prints a markdown section: B over A, paired medians.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT_A=${KMT_A:?give KMT_A, the binary to compare with}
KMT_B=${KMT_B:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-2000}
TOP_WL=${TOP_WL:-hackbench -g 4 -l 300}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench-ab.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM

echo "analyse-ab bench: recording hackbench -g 4 -l $LOOPS" >&2
"$KMT_B" record -q -o "$tmp/k.dat" -- hackbench -g 4 -l "$LOOPS" > /dev/null 2>&1 || exit 1
ev=$("$KMT_B" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $2 }')

declare -A W C
CASES=${CASES:-report-j1 report-j2 report-j4 report-j8 pprof perfetto top-j1 top-j2 top-j4}

# top's own CPU seconds per event, from its snapshots.
top_ns() {	# binary jobs
	rm -f "$tmp/s.json"
	"$1" top --json -i 1 -j "$2" --snapshots "$tmp/s.json" -- $TOP_WL > /dev/null 2>&1
	awk '{ match($0, /"events":[0-9]+/); e += substr($0, RSTART + 9, RLENGTH - 9)
	       match($0, /"interval_s":[0-9.]+/); i = substr($0, RSTART + 13, RLENGTH - 13)
	       match($0, /"cpu_pct":[0-9.]+/); c += substr($0, RSTART + 10, RLENGTH - 10) * i / 100 }
	     END { printf "%.2f 0\n", e ? c * 1e9 / e : 0 }' "$tmp/s.json"
}

run_one() {	# case binary -> "wall cpu", or "ns/event 0" for top
	local k=$2
	case $1 in
	report-j*) timed "$k" report -j "${1#report-j}" "$tmp/k.dat" ;;
	pprof|perfetto) timed "$k" export --format "$1" -o "$tmp/out.$1" "$tmp/k.dat" ;;
	top-j*) top_ns "$k" "${1#top-j}" ;;
	esac
}

run_cfg() {	# cfg round
	local cfg=$1 i=$2 c k
	[ "$cfg" = A ] && k=$KMT_A || k=$KMT_B
	for c in $CASES; do
		read -r W[$c$cfg,$i] C[$c$cfg,$i] < <(run_one "$c" "$k")
	done
}

paired_rounds analyse-ab "A B"

cat <<MD
### The analysis, two builds — $ROUNDS paired rounds

A: \`$("$KMT_A" --version) ($KMT_A)\`; B: \`$("$KMT_B" --version) ($KMT_B)\`.
Files: \`hackbench -g 4 -l $LOOPS\` recorded system-wide ($ev events); top under \`$TOP_WL\`.

| what | A (median) | B (median) | B / A (paired median) |
|---|---|---|---|
MD
for c in $CASES; do
	case $c in
	top-*) printf '| %s, top'"'"'s CPU ns per event | %s | %s | %s |\n' "$c" "$(col ${c}A W | median)" \
		"$(col ${c}B W | median)" "$(pratio ${c}B ${c}A W)" ;;
	*) printf '| %s, wall s | %s | %s | %s |\n| %s, machine CPU s | %s | %s | %s |\n' \
		"$c" "$(col ${c}A W | median)" "$(col ${c}B W | median)" "$(pratio ${c}B ${c}A W)" \
		"$c" "$(col ${c}A C | median)" "$(col ${c}B C | median)" "$(pratio ${c}B ${c}A C)" ;;
	esac
done
