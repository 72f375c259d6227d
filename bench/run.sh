#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run benchmarks and rebuild bench/RESULTS.md. Each benchmark writes its own
# section to bench/results/NAME.md (stamped with date, machine, versions);
# RESULTS.md is those sections in a fixed order, so one benchmark can be
# re-run without losing the others; what follows a line "<!-- kept by hand -->"
# in a section's file is carried over when it is rewritten. Needs root
# (tracefs), hackbench, perf.
#   bench/run.sh [record] [record-ab (KMT_A=OLD_BINARY)] [analyse-ab (KMT_A=OLD_BINARY)] [defaults] [bufsize] [percpu] [wcpus] [stack] [report] [stages] [jobs] [shards] [kmap] [outputs] [top] [memflat] [watch] [cgroups] [house]  (default: record report outputs)
#   (house: OLD=/path/to/old/kmemtrace, the binary before a change that should change nothing)
#   bench/run.sh --assemble                             (only rebuild RESULTS.md)
set -u
here=$(cd "$(dirname "$0")" && pwd)
export KMT=${KMT:-$here/../build/kmemtrace}
. "$here/lib.sh"
trap - EXIT INT TERM
[ "$(id -u)" -eq 0 ] || { echo "bench/run.sh: needs root (tracefs)" >&2; exit 1; }
ORDER="record record-ab analyse-ab defaults bufsize percpu wcpus stack report stages jobs shards kmap outputs top memflat watch cgroups house fuzz"
which=${*:-record report outputs}
[ "$which" = --assemble ] && which=
mkdir -p "$here/results"
for b in $which; do
	[ -x "$here/$b.sh" ] || { echo "bench/run.sh: no benchmark '$b' (have: $ORDER)" >&2; exit 1; }
	tmp=$(mktemp /tmp/kmt-results.XXXXXX)
	if "$here/$b.sh" > "$tmp"; then
		{
			echo
			echo "_Run $(date -u '+%Y-%m-%d %H:%M UTC'); $(machine); kmemtrace $("$KMT" --version | awk '{ print $2 }'), $(perf --version 2>/dev/null || echo 'no perf')._"
		} >> "$tmp"
		# What follows the marker in the old file is kept by hand: carried over.
		[ -f "$here/results/$b.md" ] && sed -n '/^<!-- kept by hand -->$/,$p' "$here/results/$b.md" >> "$tmp"
		mv "$tmp" "$here/results/$b.md"
	else
		echo "bench/run.sh: $b failed; results/$b.md left as it was" >&2
		rm -f "$tmp"
	fi
done
out=$here/RESULTS.md
{
	echo "# kmemtrace benchmark results"
	echo
	echo "Assembled by \`bench/run.sh\` from bench/results/*.md; each section says when and where"
	echo "it ran. The machine is a shared VM (steal time is visible in /proc/stat): compare ratios"
	echo "from paired rounds, not absolute times across runs."
	for b in $ORDER; do
		[ -f "$here/results/$b.md" ] || continue
		echo
		cat "$here/results/$b.md"
	done
} > "$out.tmp" && mv "$out.tmp" "$out"
echo "wrote $out"
