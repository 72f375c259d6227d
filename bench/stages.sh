#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: where the analysis time goes, stage by stage, and what that
# predicts on a machine with more cores (issue 26, item 3). kmemtrace report
# --stats gives the CPU time of each stage (read+inflate, stream merge,
# decode, model, output, other); paired rounds, in shuffled order, run
#   threads  the default (inflating on the -j pool, the model on its own thread)
#   single   KMT_NO_THREADS=1: every stage on one thread, nothing waits
#   core0    the default under taskset -c 0 (-j as nproc counts there: 1)
# The per-stage medians of "single" (no stage shares a core with another)
# feed an Amdahl prediction: per event, serial S = merge + output + other,
# parallel P = read+inflate + decode + model (the design of issue 26 item 1:
# inflate and decode per CPU, the model sharded by object), so at N cores
# events/s = 1e9 / (S + P / N). With BASE=an older kmemtrace binary, the
# same rounds also run its report (default threads, and one thread), for
# paired before/after ratios. Prints a markdown section.
#   FILE=x.dat BASE=old/kmemtrace bench/stages.sh    (default: record hackbench -g 4 -l $LOOPS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-1000}
. "$here/lib.sh"
trap - EXIT INT TERM

tmp=$(mktemp -d /tmp/kmt-bench-stages.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
f=$(bench_trace stages) || exit 1
STAGES="read+inflate stream-merge decode model output waiting other"

one() {	# config -> appends wall, cpu and each stage's ns/event to $tmp/CONFIG.*
	local c=$1
	case $c in
	threads) set -- env KMT_MODEL_SHARDS=1 "$KMT";;	# one model (shards: bench/shards.sh)
	single) set -- env KMT_NO_THREADS=1 "$KMT";;
	core0) set -- env KMT_MODEL_SHARDS=1 taskset -c 0 "$KMT";;
	base) set -- "$BASE";;
	base1) set -- env KMT_NO_THREADS=1 "$BASE";;
	new) set -- "$KMT";;
	new1) set -- env KMT_NO_THREADS=1 "$KMT";;
	esac
	if [ "${c#base}" != "$c" ] || [ "${c#new}" != "$c" ]; then
		/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" report "$f" > /dev/null 2>&1 || return 1
		awk '{ print $1 }' "$tmp/t" >> "$tmp/$c.wall"
		awk '{ print $2 + $3 }' "$tmp/t" >> "$tmp/$c.cpu"
		return 0
	fi
	/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" report --stats "$f" > /dev/null 2> "$tmp/s" || return 1
	awk '{ print $1 }' "$tmp/t" >> "$tmp/$c.wall"
	awk '{ print $2 + $3 }' "$tmp/t" >> "$tmp/$c.cpu"
	sed -n 's/^stats: \([0-9,]*\) events.*/\1/p' "$tmp/s" | tr -d , > "$tmp/events"
	sed -n '3,9p' "$tmp/s" | grep -v '^    shard 0' | sed 's/stream merge/stream-merge/' |
		while read -r name _ ns _; do echo "$ns" >> "$tmp/$c.$name"; done
}
configs='threads single core0'
[ -n "${BASE:-}" ] && configs="$configs base new base1 new1"
load0=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq 1 "$ROUNDS"); do
	echo "stages bench: round $i/$ROUNDS" >&2
	for c in $(printf '%s\n' $configs | shuf); do
		one "$c" || { echo "stages bench: report --stats failed" >&2; exit 1; }
	done
done
ev=$(cat "$tmp/events")
load1=$(cut -d' ' -f1 /proc/loadavg)
m() { median < "$tmp/$1"; }
rate() { awk -v e="$ev" -v s="$1" 'BEGIN { printf "%.2f", e / s / 1e6 }'; }

echo "### Analysis stages: CPU ns per event (\`report --stats\`), $ROUNDS paired rounds"
echo
echo "File: $(basename "$f"), $ev events; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs online;"
echo "load average $load0 at the start, $load1 at the end (wall times suffer from it, CPU times much less)."
echo
echo "| run | wall s (median) | M events/s | CPU s (user+sys, median) | $(echo $STAGES | sed 's/ / | /g') |"
echo "|---|---|---|---|$(for s in $STAGES; do printf -- '---|'; done)"
for c in threads single core0; do
	printf '| %s | %s | %s | %s |' "$c" "$(m $c.wall)" "$(rate "$(m $c.wall)")" "$(m $c.cpu)"
	for s in $STAGES; do printf ' %s |' "$(m "$c.$s")"; done
	echo
done
echo
# Two cores against one, paired by round (issue 26 item 2 asks >= 1.8).
paste "$tmp/core0.wall" "$tmp/threads.wall" | awk '{ print $1 / $2 }' > "$tmp/speedup"
echo "- Two cores against one (\`taskset -c 0\`), paired median of the wall-time ratios: $(median < "$tmp/speedup" | awk '{ printf "%.2f", $1 }')x."
if [ -n "${BASE:-}" ]; then
	for p in "base new default" "base1 new1 one thread"; do
		set -- $p
		paste "$tmp/$1.wall" "$tmp/$2.wall" | awk '{ print $2 / $1 }' > "$tmp/rw"
		paste "$tmp/$1.cpu" "$tmp/$2.cpu" | awk '{ print $2 / $1 }' > "$tmp/rc"
		echo "- Against BASE ($(basename "$BASE")), report, ${*:3}: wall $(m $1.wall) -> $(m $2.wall) s, CPU $(m $1.cpu) -> $(m $2.cpu) s (medians); paired ratios new/base: wall $(median < "$tmp/rw" | awk '{ printf "%.3f", $1 }'), CPU $(median < "$tmp/rc" | awk '{ printf "%.3f", $1 }')."
	done
fi
echo "- Where each stage runs at the default -j on this machine ($(nproc) CPUs: below -j 4 the model is one"
echo "  thread; from -j 4 it runs in shards and the reading in parts: bench/shards.sh): read+inflate on the"
echo "  -j pool of threads (parallel); stream merge and decode on one producer thread, the model on one"
echo "  consumer thread (each serial); output and other (open, symbols, setup, the model's end) on the"
echo "  main thread; waiting is the threads asleep in hand-overs, in no stage."
awk -v i="$(m single.read+inflate)" -v mg="$(m single.stream-merge)" -v d="$(m single.decode)" \
    -v mo="$(m single.model)" -v o="$(m single.output)" -v x="$(m single.other)" 'BEGIN {
	s = mg + o + x; p = i + d + mo
	printf "- Amdahl, from the \"single\" medians (ns/event): serial S = merge %.1f + output %.1f + other %.1f = **%.1f**;\n", mg, o, x, s
	printf "  parallel P = read+inflate %.1f + decode %.1f + model %.1f = **%.1f**. Events/s = 1e9 / (S + P/N):\n", i, d, mo, p
	for (n = 1; n <= 64; n *= 2)
		if (n == 1 || n == 2 || n == 16 || n == 64)
			printf "  N = %d: 1e9 / (%.1f + %.1f/%d) = **%.1f M/s**%s\n", n, s, p, n, 1e3 / (s + p / n), n == 64 ? "." : ";"
	printf "  The limit (N -> inf) is 1e9 / S = %.1f M/s. With the model as one thread (below -j 4) the pipeline is bound by its\n", 1e3 / s
	printf "  slowest serial thread on any number of cores: 1e9 / max(merge + decode, model) = 1e9 / max(%.1f, %.1f) = %.1f M/s.\n", mg + d, mo, 1e3 / (mg + d > mo ? mg + d : mo)
}'
