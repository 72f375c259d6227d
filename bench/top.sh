#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: what kmemtrace top costs the workload, paired with the ftrace
# floor and with kmemtrace record in every round (bench/record.sh's method:
# a fresh random order each round, ratios per round, then the median). top
# runs --batch -i 1 with every row, its snapshots to a file; the events it
# lost are its last snapshot's lost_events (from --json). top runs at its
# default -j (the CPUs online: a feed thread takes, merges and decodes the
# pages, the model runs on top's thread) and at -j 1 (all on top's thread).
# Then, with perf, each of top's threads' user CPU per event (cpu-clock
# samples by thread name), -j 1, -j 2 and the model in $SHARDS shards (-j 8)
# in turn: what bounds the events/s top's analysis can follow on a machine
# with cores to spare. Prints a
# markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
BUF_KB=${BUF_KB:-65536}
SHARDS=${SHARDS:-3}		# the model's shards in the threads' measure with shards (-j 8)
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench-top.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM
WL=("$here/wl.sh" $WORKLOAD)

declare -A W C
declare -A LOST CPU EV

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
	top|top1)
		local j=(); [ "$cfg" = top1 ] && j=(-j 1)
		"$KMT" top "${j[@]}" --json -i 1 -r 5 -b "$BUF_KB" -- "${WL[@]}" 3> "$tmp/t" > "$tmp/snaps"
		LOST[$cfg]+="$(tail -n1 "$tmp/snaps" | jq .lost_events) "
		EV[$cfg]+="$(jq .events "$tmp/snaps" | awk '{ s += $1 } END { print s }') "
		CPU[$cfg]+="$(jq .cpu_pct "$tmp/snaps" | median) " ;;
	esac
	read -r W[$cfg,$i] C[$cfg,$i] < "$tmp/t"
}

paired_rounds top "floor record top top1"

# Each thread's user CPU per event: perf's cpu-clock samples (2000 Hz) by thread name.
declare -A NS
if command -v perf > /dev/null; then
	for i in $(seq 1 "$ROUNDS"); do
		for j in 1 2 s; do
			echo "top bench: threads, round $i/$ROUNDS, -j $j" >&2
			opt=(-j $j) env=()
			[ $j = s ] && opt=(-j 8) env=(KMT_MODEL_SHARDS=$SHARDS)
			env "${env[@]}" perf record -q -e cpu-clock -F 2000 -o "$tmp/p.data" -- \
				"$KMT" top "${opt[@]}" --json -i 1 -r 1 -b "$BUF_KB" -- $WORKLOAD > "$tmp/snaps" 2> /dev/null
			ev=$(grep '^{' "$tmp/snaps" | jq .events | awk '{ s += $1 } END { print s }')
			while read -r th ns; do NS[$j,$th]+="$ns "; done < <(perf report -i "$tmp/p.data" --sort comm,dso \
				-F sample,comm,dso 2> /dev/null | awk -v ev="$ev" '$2 ~ /^(kmemtrace|kmt-feed|kmt-shard)$/ &&
				$3 != "[kernel.kallsyms]" { u[$2] += $1 } END { for (c in u) print c, u[c] * 500000 / ev }')
		done
	done
fi
nsmed() { printf '%s\n' ${NS[$1]:-} | median | xargs printf '%.1f'; }
per_s() { awk -v a="$1" -v b="${2:-0}" -v c="${3:-0}" 'BEGIN { m = (a > b) ? a : b; m = (m > c) ? m : c
	if (m > 0) printf "%.1f", 1e3 / m; else printf "-" }'; }

share() { awk -v t="$(nsmed s,kmt-shard)" -v n=$((SHARDS - 1)) 'BEGIN { printf "%.1f", t / n }'; }

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
$(row top "**kmemtrace top --json -i 1** (-j: the CPUs online)")
$(row top1 "kmemtrace top --json -i 1 -j 1")

- top analysed $(med ${EV[top]}) events per run (median) and lost ${LOST[top]}(per round);
  its own CPU, median of its snapshots: $(med ${CPU[top]})% of one CPU. At -j 1: $(med ${EV[top1]}) events,
  lost ${LOST[top1]}, $(med ${CPU[top1]})% of one CPU.
- User CPU per event of top's threads ($ROUNDS rounds each, medians; perf cpu-clock samples by
  thread): -j 1, top's thread $(nsmed 1,kmemtrace) ns; -j 2, top's thread (the model)
  $(nsmed 2,kmemtrace) ns and the feed thread (take, merge, decode) $(nsmed 2,kmt-feed) ns. With
  cores to spare, what top can follow is one thread's bound: 1e9 / $(nsmed 1,kmemtrace) =
  $(per_s "$(nsmed 1,kmemtrace)") M events/s at -j 1,
  1e9 / max($(nsmed 2,kmemtrace), $(nsmed 2,kmt-feed)) = $(per_s "$(nsmed 2,kmemtrace)" "$(nsmed 2,kmt-feed)") M events/s at -j 2
  (measured under the workload, which shares these 2 CPUs: an idle core runs faster).
- The model in $SHARDS shards (-j 8, \`KMT_MODEL_SHARDS=$SHARDS\`): top's thread (shard 0: it routes
  every event, takes the pages, per-CPU and vmalloc areas, and draws the snapshots)
  $(nsmed s,kmemtrace) ns, the feed thread $(nsmed s,kmt-feed) ns, the other shards together
  $(nsmed s,kmt-shard) ns per event ($((SHARDS - 1)) threads, each about 1/$((SHARDS - 1)) of it: the slab
  objects by address). With a core each, top follows 1e9 / max(top's thread, feed, the shards'
  share): $(per_s "$(nsmed s,kmemtrace)" "$(nsmed s,kmt-feed)" "$(share)") M events/s, the shards' share
  $(share) ns with these $((SHARDS - 1)).
- top reads each CPU's buffer with read() into memory and feeds the report's model in time
  order as it goes; on a machine the workload saturates (hackbench on 2 CPUs) that analysis
  competes with the workload for CPU, which record defers until the workload has ended.
MD
