#!/usr/bin/env bash
# Benchmark: what kmemtrace top costs the workload, paired with the ftrace
# floor and with kmemtrace record in every round (bench/record.sh's method:
# a fresh random order each round, ratios per round, then the median). top
# runs --batch -i 1 with every row, its snapshots to a file; the events it
# lost are its last snapshot's lost_events (from --json). Prints a markdown
# section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
BUF_KB=${BUF_KB:-65536}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench-top.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM
WL=("$here/wl.sh" $WORKLOAD)

declare -A W C
lost_top=() cpu_top=() ev_top=()

run_cfg() {	# cfg round -> W[cfg,i] C[cfg,i]
	local cfg=$1 i=$2
	case $cfg in
	floor)
		floor_on "$BUF_KB"
		"${WL[@]}" 3> "$tmp/t"
		floor_off ;;
	record)
		rm -f "$tmp/k.dat"
		"$KMT" record -q -b "$BUF_KB" -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t" ;;
	top)
		"$KMT" top --json -i 1 -r 5 -b "$BUF_KB" -- "${WL[@]}" 3> "$tmp/t" > "$tmp/snaps"
		lost_top+=("$(tail -n1 "$tmp/snaps" | jq .lost_events)")
		ev_top+=("$(jq .events "$tmp/snaps" | awk '{ s += $1 } END { print s }')")
		cpu_top+=("$(jq .cpu_pct "$tmp/snaps" | median)") ;;
	esac
	read -r W[$cfg,$i] C[$cfg,$i] < "$tmp/t"
}

paired_rounds top "floor record top"

row() {	# cfg label
	printf '| %s | %.3f | %.3f | %.2f | %.3f |\n' "$2" \
		"$(col "$1" W | median)" "$(pratio "$1" floor W)" "$(col "$1" C | median)" "$(pratio "$1" floor C)"
}
cat <<MD
### Live: \`kmemtrace top\` under \`$WORKLOAD\` — $ROUNDS paired rounds, ring buffer $BUF_KB KiB per CPU

| configuration | workload wall s (median) | wall × floor (paired median) | machine CPU s (median) | CPU × floor |
|---|---|---|---|---|
$(row floor "floor: same events on, no reader")
$(row record "kmemtrace record")
$(row top "**kmemtrace top --json -i 1**")

- top analysed $(med "${ev_top[@]}") events per run (median) and lost $(printf '%s ' "${lost_top[@]}")(per round);
  its own CPU, median of its snapshots: $(med "${cpu_top[@]}")% of one CPU.
- top reads each CPU's buffer with read() into memory and feeds the report's model in time
  order as it goes; on a machine the workload saturates (hackbench on 2 CPUs) that analysis
  competes with the workload for CPU, which record defers until the workload has ended.
MD
