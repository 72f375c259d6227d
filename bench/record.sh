#!/usr/bin/env bash
# Benchmark: the cost of recording, paired and repeated on one workload.
#
#   untraced | floor (the same events on in a private instance, no reader) |
#   kmemtrace record | perf kmem record
#
# Each round runs the four in turn, so each comparison is paired; the
# table gives medians over the rounds and ratios against the floor. The
# workload's own time is measured from inside (bash's time around it, the
# same wrapper in every configuration); CPU is the busy time of the whole
# machine over each command, so it includes the recorder's threads, kernel
# writeback and (for kmemtrace) the compression after the workload.
# Prints a markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
BUF_KB=${BUF_KB:-65536}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM

run() {	# run "$@", then print "workload-seconds wall-seconds cpu-seconds"
	local t0 c0 t1 c1
	c0=$(cpu_busy); t0=$(now)
	"$@" > "$tmp/out" 2> "$tmp/err"
	t1=$(now); c1=$(cpu_busy)
	awk -v w="$(tail -n1 "$tmp/wl")" -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" \
		'BEGIN { printf "%.4f %.4f %.4f\n", w, b - a, d - c }'
}
# The workload, timed from inside; its seconds go to $tmp/wl.
wl_cmd=(bash -c 'TIMEFORMAT=%R; { time '"$WORKLOAD"' > /dev/null 2>&1; } 2> '"$tmp"'/wl')

for cfg in un fl km pf; do
	eval "W_$cfg=(); T_$cfg=(); C_$cfg=()"
done
EV_fl=(); EV_km=(); LOST_km=(); RAW_km=(); Z_km=(); EV_pf=(); LOST_pf=(); SZ_pf=()

for i in $(seq 1 "$ROUNDS"); do
	echo "record bench: round $i/$ROUNDS" >&2
	read -r w t c < <(run "${wl_cmd[@]}")
	W_un+=("$w"); T_un+=("$t"); C_un+=("$c")

	floor_on "$BUF_KB"
	read -r w t c < <(run "${wl_cmd[@]}")
	W_fl+=("$w"); T_fl+=("$t"); C_fl+=("$c"); EV_fl+=("$(floor_stats)")
	floor_off

	rm -f "$tmp/k.dat"
	read -r w t c < <(run "$KMT" record -q -b "$BUF_KB" -o "$tmp/k.dat" -- "${wl_cmd[@]}")
	W_km+=("$w"); T_km+=("$t"); C_km+=("$c")
	"$KMT" info "$tmp/k.dat" > "$tmp/info"
	EV_km+=("$(awk '$1 == "all" { print $2 }' "$tmp/info")")
	LOST_km+=("$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 { l += ($5 > $6 + $7 ? $5 : $6 + $7) } END { print l + 0 }' "$tmp/info")")
	RAW_km+=("$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 { p += $3 } END { print p * 4096 }' "$tmp/info")")
	Z_km+=("$(stat -c %s "$tmp/k.dat")")

	rm -f "$tmp/perf.data"
	read -r w t c < <(run perf kmem record -o "$tmp/perf.data" -- "${wl_cmd[@]}")
	W_pf+=("$w"); T_pf+=("$t"); C_pf+=("$c")
	# "Processed N samples and lost P%!" (when perf lost any)
	pl=$(grep -o 'lost [0-9.]*%' "$tmp/err" | head -n1 | tr -dc '0-9.')
	ps=$(grep -o '([0-9]* samples)' "$tmp/err" | tr -dc '0-9')
	EV_pf+=("${ps:-0}"); LOST_pf+=("${pl:-0}"); SZ_pf+=("$(stat -c %s "$tmp/perf.data" 2>/dev/null || echo 0)")
done

med() { printf '%s\n' "$@" | median; }
mw_un=$(med "${W_un[@]}"); mw_fl=$(med "${W_fl[@]}"); mw_km=$(med "${W_km[@]}"); mw_pf=$(med "${W_pf[@]}")
mt_km=$(med "${T_km[@]}")
mc_un=$(med "${C_un[@]}"); mc_fl=$(med "${C_fl[@]}"); mc_km=$(med "${C_km[@]}"); mc_pf=$(med "${C_pf[@]}")
# Paired ratios: per round, then the median of those.
pr() { local -n a=$1 b=$2; local k; for k in "${!a[@]}"; do ratio "${a[$k]}" "${b[$k]}"; echo; done | median; }
ev_km=$(med "${EV_km[@]}"); ev_fl=$(med "${EV_fl[@]}")
raw=$(med "${RAW_km[@]}"); z=$(med "${Z_km[@]}")

cat <<MD
### Recording: \`$WORKLOAD\`, $ROUNDS paired rounds, buffer ${BUF_KB} KiB/CPU

| configuration | workload s (median) | × floor (paired median) | CPU s (machine) | CPU × floor | events recorded | events lost |
|---|---|---|---|---|---|---|
| untraced | $(fmt "$mw_un") | $(pr W_un W_fl) | $(fmt "$mc_un") | $(pr C_un C_fl) | – | – |
| floor (events on, no reader) | $(fmt "$mw_fl") | 1.000 | $(fmt "$mc_fl") | 1.000 | ${ev_fl} written | – |
| kmemtrace record | $(fmt "$mw_km") | **$(pr W_km W_fl)** | $(fmt "$mc_km") | $(pr C_km C_fl) | ${ev_km} | $(printf '%s ' "${LOST_km[@]}") |
| perf kmem record | $(fmt "$mw_pf") | $(pr W_pf W_fl) | $(fmt "$mc_pf") | $(pr C_pf C_fl) | $(med "${EV_pf[@]}") samples | $(printf '%s%% ' "${LOST_pf[@]}") |

- kmemtrace record, whole command (recording + writing the file): $(fmt "$mt_km") s median; the
  workload column is the workload's own time inside the recording.
- On disk: raw pages $(awk -v r="$raw" -v e="$ev_km" 'BEGIN { printf "%.1f", r / e }') bytes/event,
  trace.dat with zstd $(awk -v r="$z" -v e="$ev_km" 'BEGIN { printf "%.2f", r / e }') bytes/event
  ($(awk -v z="$z" 'BEGIN { printf "%.1f MiB", z / 1048576 }') for ${ev_km} events, metadata included);
  perf.data $(awk -v s="$(med "${SZ_pf[@]}")" -v e="$(med "${EV_pf[@]}")" 'BEGIN { if (e) printf "%.1f", s / e; else print "-" }') bytes/sample.
- Events lost are listed per round (page-header counts or ring-buffer overrun, the larger).
MD
