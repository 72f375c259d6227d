#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: the default sizes against another binary's (issue 26 item 4):
# kmemtrace record and top at their defaults, this tree's and BASE's
# (e.g. a build of the commit before the memory budget: 64 MiB per CPU,
# hold 1/8 of RAM), on the same workload, in a fresh random order each
# round: the workload's wall time, the whole command's, the events lost,
# and what each took (ring buffer per CPU and hold, from kmemtrace info;
# top's peak RSS). Prints a markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
BASE=${BASE:?set BASE to the other kmemtrace binary}
ROUNDS=${ROUNDS:-7}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
. "$here/lib.sh"
tmp=$(mktemp -d /tmp/kmt-bench-defaults.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
WL=("$here/wl.sh" $WORKLOAD)
declare -A W TOT LOST SET RSS

run_cfg() {	# cfg round
	local cfg=$1 i=$2 k=$KMT t0 t1 pid peak r
	case $cfg in base-*) k=$BASE;; esac
	rm -f "$tmp/k.dat"
	t0=$(now)
	case $cfg in
	*-record)
		"$k" record -q -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t"
		t1=$(now)
		"$k" info "$tmp/k.dat" | tr -d , > "$tmp/info"
		LOST[$cfg,$i]=$(awk '$1 == "all" { print $5 }' "$tmp/info" | tr -d ,)
		SET[$cfg]=$(grep -o 'buffer [0-9]* KiB per CPU[^;]*\(; hold [0-9]* MiB\)\?' "$tmp/info") ;;
	*-top)
		"$k" top --json -i 1 -r 1 -- "${WL[@]}" 3> "$tmp/t" > "$tmp/snaps" & pid=$!
		peak=0
		while kill -0 $pid 2> /dev/null; do
			r=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status 2> /dev/null || echo 0)
			[ "${r:-0}" -gt "$peak" ] && peak=$r
			sleep 0.1
		done
		wait $pid
		t1=$(now)
		RSS[$cfg,$i]=$((peak / 1024))
		LOST[$cfg,$i]=$(tail -n1 "$tmp/snaps" | jq .lost_events) ;;
	esac
	TOT[$cfg,$i]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	read -r W[$cfg,$i] _ < "$tmp/t"
}

paired_rounds defaults "base-record new-record base-top new-top"
row() {	# cfg label what
	local lost= i
	for i in $(seq 1 "$ROUNDS"); do lost="$lost${LOST[$1,$i]} "; done
	printf '| %s | %s | %.3f | %s | %.3f | %s | %s|\n' "$2" "$3" "$(col "$1" W | median)" \
		"$(pratio "$1" "base-${1#*-}" W)" "$(col "$1" TOT | median)" "$(pratio "$1" "base-${1#*-}" TOT)" "$lost"
}
cat <<MD
### Default sizes: \`$WORKLOAD\` — $ROUNDS paired rounds, this tree against $(basename "$(dirname "$(dirname "$BASE")")")

| command | what it took | workload wall s (median) | × base (paired) | whole command s (median) | × base (paired) | events lost per round |
|---|---|---|---|---|---|---|
$(row base-record "record, base" "${SET[base-record]}")
$(row new-record "**record, this tree**" "${SET[new-record]}")
$(row base-top "top --json, base" "peak RSS $(col base-top RSS | median) MiB")
$(row new-top "**top --json, this tree**" "peak RSS $(col new-top RSS | median) MiB")
MD
