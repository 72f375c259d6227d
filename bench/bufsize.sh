#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: how small a ring buffer per CPU the readers can keep lossless
# (issue 26 item 4). kmemtrace record (system-wide, and -F), and top, run
# hackbench at each buffer size in SIZES, in a fresh random order each
# round (bench/record.sh's method); the events lost come from the file's
# own accounting (kmemtrace info: page headers and the ring buffers'
# overrun) and from top's last snapshot. The workload's wall time is paired
# with the largest size's in the same round. Prints a markdown section on
# stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
SIZES=${SIZES:-256 1024 4096 16384 65536}
MODES=${MODES:-sys F top}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench-buf.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
WL=("$here/wl.sh" $WORKLOAD)
declare -A W C LOST EV

run_cfg() {	# mode:kb round
	local mode=${1%%:*} kb=${1#*:} i=$2
	rm -f "$tmp/k.dat"
	case $mode in
	sys|F)
		"$KMT" record -q $([ "$mode" = F ] && echo -F) -b "$kb" -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t"
		"$KMT" info "$tmp/k.dat" | tr -d , > "$tmp/info"
		LOST[$1,$i]=$(awk '$1 == "all" { print $5 }' "$tmp/info" | tr -d ,)
		EV[$1,$i]=$(awk '$1 == "all" { print $2 }' "$tmp/info" | tr -d ,) ;;
	top)
		"$KMT" top --json -i 1 -r 1 -b "$kb" -- "${WL[@]}" 3> "$tmp/t" > "$tmp/snaps"
		LOST[$1,$i]=$(tail -n1 "$tmp/snaps" | jq .lost_events)
		EV[$1,$i]=$(jq .events "$tmp/snaps" | awk '{ s += $1 } END { print s }') ;;
	esac
	read -r W[$1,$i] C[$1,$i] < "$tmp/t"
}

cfgs=
for m in $MODES; do for kb in $SIZES; do cfgs="$cfgs $m:$kb"; done; done
paired_rounds bufsize "$cfgs"
big=$(printf '%s\n' $SIZES | sort -n | tail -n1)

echo "### Ring buffer per CPU vs events lost: \`$WORKLOAD\` — $ROUNDS paired rounds"
echo
echo "| reader | buffer KiB per CPU | events (median) | events lost per round | rounds with a loss | workload wall s (median) | wall × $big KiB (paired median) |"
echo "|---|---|---|---|---|---|---|"
for m in $MODES; do
	for kb in $SIZES; do
		c=$m:$kb lost= n=0
		for i in $(seq 1 "$ROUNDS"); do
			lost="$lost${LOST[$c,$i]} "
			[ "${LOST[$c,$i]:-1}" != 0 ] && n=$((n + 1))
		done
		case $m in sys) r="record (system-wide)";; F) r="record -F";; top) r="top --json";; esac
		printf '| %s | %s | %s | %s| %d/%d | %.3f | %s |\n' "$r" "$kb" \
			"$(for i in $(seq 1 "$ROUNDS"); do echo "${EV[$c,$i]}"; done | median)" "$lost" "$n" "$ROUNDS" \
			"$(col "$c" W | median)" "$(pratio "$c" "$m:$big" W)"
	done
done
echo
echo "- Load average when it ended: $(cut -d' ' -f1-3 /proc/loadavg) (other users of the machine included)."
