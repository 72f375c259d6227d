#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: the cost of recording, paired and repeated on one workload.
#
#   untraced | floor (the same events on in a private instance, no reader) |
#   kmemtrace record | perf kmem record
#
# Each round runs the four in a fresh random order, so each comparison is
# paired under the same machine conditions; ratios are per round, then the
# median. The workload is timed from inside by bench/wl.sh (the same wrapper
# in every configuration): its wall time, and the busy CPU time of the whole
# machine meanwhile (so the recorder's threads and kernel work count, steal
# does not). Prints a markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-7}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
BUF_KB=${BUF_KB:-65536}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM
WL=("$here/wl.sh" $WORKLOAD)

declare -A W C TOT
ev_km=() lost_km=() raw_km=() z_km=() tot_km=() ev_fl=() smp_pf=() lost_pf=() sz_pf=()

run_cfg() {	# cfg -> sets W[cfg,i] C[cfg,i]
	local cfg=$1 i=$2 t0 t1
	case $cfg in
	untraced)
		"${WL[@]}" 3> "$tmp/t" ;;
	floor)
		floor_on "$BUF_KB"
		"${WL[@]}" 3> "$tmp/t"
		ev_fl+=("$(floor_stats)")
		floor_off ;;
	kmemtrace)
		rm -f "$tmp/k.dat"
		t0=$(now)
		"$KMT" record -q -b "$BUF_KB" -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t"
		t1=$(now)
		tot_km+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
		TOT[kmemtrace,$i]=${tot_km[-1]}
		"$KMT" info "$tmp/k.dat" | tr -d , > "$tmp/info"
		ev_km+=("$(awk '$1 == "all" { print $2 }' "$tmp/info")")
		lost_km+=("$(awk '$1 == "all" { print $5 }' "$tmp/info")")
		raw_km+=("$(awk '$1 ~ /^[0-9]+$/ { p += $3 } END { print p * 4096 }' "$tmp/info")")
		z_km+=("$(stat -c %s "$tmp/k.dat")") ;;
	perf)
		rm -f "$tmp/perf.data"
		perf kmem record -o "$tmp/perf.data" -- "${WL[@]}" 3> "$tmp/t" 2> "$tmp/perf.err" > /dev/null
		lost_pf+=("$(grep -o 'lost [0-9.]*%' "$tmp/perf.err" | head -n1 | tr -dc '0-9.' || true)")
		smp_pf+=("$(grep -o '([0-9]* samples)' "$tmp/perf.err" | tr -dc '0-9')")
		sz_pf+=("$(stat -c %s "$tmp/perf.data" 2>/dev/null || echo 0)") ;;
	esac
	read -r W[$cfg,$i] C[$cfg,$i] < "$tmp/t"
}

CFGS="untraced floor kmemtrace perf"
command -v perf > /dev/null || CFGS="untraced floor kmemtrace"
paired_rounds record "$CFGS"

row() {	# cfg label events lost
	printf '| %s | %.3f | %.3f | %.2f | %.3f | %s | %s |\n' "$2" \
		"$(col "$1" W | median)" "$(pratio "$1" floor W)" "$(col "$1" C | median)" "$(pratio "$1" floor C)" "$3" "$4"
}
ev=$(med "${ev_km[@]}")
cat <<MD
### Recording \`$WORKLOAD\` — $ROUNDS paired rounds, ring buffer $BUF_KB KiB per CPU

| configuration | workload wall s (median) | wall × floor (paired median) | machine CPU s (median) | CPU × floor | events recorded | events lost (per round) |
|---|---|---|---|---|---|---|
$(row untraced "untraced" "–" "–")
$(row floor "floor: same events on, no reader" "$(med "${ev_fl[@]}") written" "–")
$(row kmemtrace "**kmemtrace record**" "$ev" "$(printf '%s ' "${lost_km[@]}")")
$( [ -n "${smp_pf[*]:-}" ] && row perf "perf kmem record" "$(med "${smp_pf[@]}") samples" "$(printf '%s%% ' "${lost_pf[@]}")")

- kmemtrace record, whole command (start, workload, the compressed file written, exit):
  $(med "${tot_km[@]}") s (median), **$(for i in $(seq 1 "$ROUNDS"); do ratio "${TOT[kmemtrace,$i]}" "${W[floor,$i]}"; echo; done | median)× the floor's workload wall** (paired median).
- Bytes per event on disk: raw pages $(awk -v r="$(med "${raw_km[@]}")" -v e="$ev" 'BEGIN { printf "%.1f", r / e }'),
  trace.dat (zstd, all metadata included) $(awk -v r="$(med "${z_km[@]}")" -v e="$ev" 'BEGIN { printf "%.2f", r / e }')
  ($(awk -v z="$(med "${z_km[@]}")" 'BEGIN { printf "%.1f MiB", z / 1048576 }'));
  perf.data $( [ -n "${sz_pf[*]:-}" ] && awk -v s="$(med "${sz_pf[@]}")" -v e="$(med "${smp_pf[@]}")" 'BEGIN { if (e) printf "%.1f", s / e; else print "-" }') bytes per sample kept.
- Events lost: the larger of the page-header counts and the ring buffer's overrun, summed over CPUs.
MD
# The machine is noisy: keep every run's headline so one run is never the
# whole story (bench/results/record-runs.tsv, one line per run).
runs=$here/results/record-runs.tsv
printf '%s\t%s\t%s\t%s\n' "$(date -u '+%Y-%m-%d %H:%M')" "$(pratio kmemtrace floor W)" \
	"$(pratio kmemtrace floor C)" "$(printf '%s+' "${lost_km[@]}" | sed 's/+$//')" >> "$runs"
echo "- Every run so far (UTC, wall × floor, CPU × floor, lost per round):"
awk -F'\t' '{ printf "  %s: %s, %s, lost %s;\n", $1, $2, $3, $4 }' "$runs"
