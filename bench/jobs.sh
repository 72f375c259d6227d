#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: -j and the one-pass check (issue 26). Two files: a hackbench
# recording of this machine (2 CPUs of data) and a synthetic trace of 48
# CPUs (kmt-synth wide, about 6 M events), which this machine cannot
# record. In shuffled paired rounds:
#   report -j 1, -j 2 (the default here), and under taskset -c 0 (one core);
#   check (one pass) beside report;
#   with BASE=an older kmemtrace binary, its report and check too (before
#   -j: a thread per CPU of the file inflates; check read the data twice).
# Wall and CPU seconds (user+sys), peak RSS and context switches from
# time(1); medians and paired ratios. Then memory: report's peak RSS on
# kmt-synth churn traces (LIVE objects kept, then STEPS allocations each
# freed at once) — per live object, and whether events add any. Prints a
# markdown section.
#   FILE=x.dat BASE=old/kmemtrace bench/jobs.sh   (default: record hackbench -g 4 -l $LOOPS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
SYNTH=${SYNTH:-$here/../build/tests/kmt-synth}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-1000}
STEPS=${STEPS:-2000000}
. "$here/lib.sh"
trap - EXIT INT TERM

tmp=$(mktemp -d /tmp/kmt-bench-jobs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
hb=$(bench_trace jobs) || exit 1
echo "jobs bench: a 48-CPU trace of $STEPS steps" >&2
KMT_TESTDATA=${KMT_TESTDATA:-$here/../tests/data} "$SYNTH" wide "$tmp/wide.dat" "$STEPS" || exit 1
wide=$tmp/wide.dat
ev() { "$KMT" check -q "$1" 2>/dev/null | sed -n 's/.*: \([0-9,]*\) events in.*/\1/p' | tr -d ,; }
ev_hb=$(ev "$hb") ev_wide=$(ev "$wide")

# config -> the command, FILE for the file
cmd() {
	case $1 in
	j1) echo "$KMT report -j 1 -o /dev/null FILE";;
	j2) echo "$KMT report -j 2 -o /dev/null FILE";;
	core0) echo "taskset -c 0 $KMT report -o /dev/null FILE";;
	check) echo "$KMT check -q FILE";;
	base) echo "$BASE report -o /dev/null FILE";;
	basecheck) echo "$BASE check -q FILE";;
	esac
}
configs="j1 j2 core0 check"
[ -n "${BASE:-}" ] && configs="$configs base basecheck"
load0=$(cut -d' ' -f1 /proc/loadavg)
for i in $(seq 1 "$ROUNDS"); do
	echo "jobs bench: round $i/$ROUNDS" >&2
	for f in hb wide; do
		for c in $(printf '%s\n' $configs | shuf); do
			file=$hb; [ $f = wide ] && file=$wide
			# shellcheck disable=SC2046
			/usr/bin/time -f "%e %U %S %M %c %w" -o "$tmp/t" $(cmd $c | sed "s|FILE|$file|") > /dev/null 2>&1
			read -r w u s m ci vo < "$tmp/t"
			echo "$w" >> "$tmp/$f.$c.wall"
			awk -v u="$u" -v s="$s" 'BEGIN { print u + s }' >> "$tmp/$f.$c.cpu"
			echo "$m" >> "$tmp/$f.$c.rss"
			echo $((ci + vo)) >> "$tmp/$f.$c.cs"
		done
		# Paired ratios, this round.
		r() { ratio "$(tail -n1 "$tmp/$f.$1.$3")" "$(tail -n1 "$tmp/$f.$2.$3")" >> "$tmp/$f.$1-$2.$3"; }
		r j2 j1 wall; r j1 core0 wall; r j2 core0 wall; r check j2 wall; r check j2 cpu
		if [ -n "${BASE:-}" ]; then
			r j2 base wall; r j2 base cpu; r check basecheck wall; r check basecheck cpu
		fi
	done
done
load1=$(cut -d' ' -f1 /proc/loadavg)
m() { median < "$tmp/$1"; }

echo "### -j and the one-pass check: $ROUNDS paired rounds"
echo
echo "Files: a hackbench -g 4 -l $LOOPS recording ($ev_hb events, 2 CPUs of data) and kmt-synth"
echo "wide ($ev_wide events, 48 CPUs of data); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"
echo "$(nproc) CPUs online; load average $load0 at the start, $load1 at the end."
echo
echo "| file | run | wall s | M events/s | CPU s | peak RSS MiB | context switches |"
echo "|---|---|---|---|---|---|---|"
for f in hb wide; do
	e=$ev_hb; [ $f = wide ] && e=$ev_wide
	for c in $configs; do
		w=$(m $f.$c.wall)
		echo "| $f | \`$(cmd $c | sed "s|$KMT|kmemtrace|; s|${BASE:-@@}|base|; s| -o /dev/null||; s| FILE||")\` | $w |" \
			"$(awk -v e="$e" -v w="$w" 'BEGIN { printf "%.2f", e / w / 1e6 }') | $(m $f.$c.cpu) |" \
			"$(awk -v k="$(m $f.$c.rss)" 'BEGIN { printf "%.1f", k / 1024 }') | $(m $f.$c.cs) |"
	done
done
echo
echo "Paired medians (A/B of the same round):"
echo
for f in hb wide; do
	echo "- $f: -j 2 / -j 1 wall $(m $f.j2-j1.wall); -j 1 / one core $(m $f.j1-core0.wall);" \
		"-j 2 / one core $(m $f.j2-core0.wall) (so two cores are $(awk -v r="$(m $f.j2-core0.wall)" 'BEGIN { printf "%.2f", 1 / r }')x one);" \
		"check / report: wall $(m $f.check-j2.wall), CPU $(m $f.check-j2.cpu)"
	if [ -n "${BASE:-}" ]; then
		echo "  - against the base: report wall $(m $f.j2-base.wall), CPU $(m $f.j2-base.cpu);" \
			"check wall $(m $f.check-basecheck.wall), CPU $(m $f.check-basecheck.cpu)"
	fi
done

echo
echo "Memory (report's peak RSS, one run each; kmt-synth churn: LIVE objects kept, then STEPS"
echo "allocations each freed a step later, 2 events a step):"
echo
echo "| live objects | events | peak RSS MiB |"
echo "|---|---|---|"
for a in "0 2000000" "0 8000000" "1000000 2000000" "2000000 2000000" "2000000 8000000"; do
	set -- $a
	KMT_TESTDATA=${KMT_TESTDATA:-$here/../tests/data} "$SYNTH" churn "$tmp/ch.dat" "$1" "$2" || exit 1
	/usr/bin/time -f "%M" -o "$tmp/t" "$KMT" report -o /dev/null "$tmp/ch.dat" > /dev/null 2>&1
	echo "$1 $(( $1 + 2 * $2 )) $(cat "$tmp/t")" >> "$tmp/mem"
	echo "| $1 | $(( $1 + 2 * $2 )) | $(awk -v k="$(cat "$tmp/t")" 'BEGIN { printf "%.1f", k / 1024 }') |"
done
awk 'NR == 3 { a = $3 } NR == 4 { b = $3 } END { printf "\n- Per live object: %.0f bytes (2 M live against 1 M, the same events).\n", (b - a) * 1024 / 1e6 }' "$tmp/mem"
awk 'NR == 1 { a = $3 } NR == 2 { b = $3 } NR == 4 { c = $3 } NR == 5 { d = $3 } END {
	printf "- Per event: %+.1f MiB for 12 M more events with nothing live, %+.1f MiB with 2 M live.\n", (b - a) / 1024, (d - c) / 1024 }' "$tmp/mem"
