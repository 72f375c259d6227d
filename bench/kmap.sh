#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: kmap in shards (issue 26 item 1). kmap writes a record per
# object, most of its CPU; each shard writes its own objects' records
# and one thread at a time puts each batch's in order ("write out",
# analyse-sink.c). Paired rounds, shuffled:
#   one    KMT_MODEL_SHARDS=1 -j 4: the one model writes every record
#   shards -j 4: 2 shards (on this 2-CPU machine; the default -j 2 is one model)
# and kmap --stats with 3 shards under taskset -c 0 (one core: each stage
# timed alone) and on every core, for the Amdahl prediction of the
# design notes: rate with C cores = min(1e9 / the slowest serial stage,
# C x 1e9 / the CPU per event of all stages). Prints a markdown section.
#   FILE=x.dat bench/kmap.sh    (default: record hackbench -g 4 -l $LOOPS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-1000}
. "$here/lib.sh"
trap - EXIT INT TERM

tmp=$(mktemp -d /tmp/kmt-bench-kmap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
f=$(bench_trace kmap) || exit 1
cpus=$(getconf _NPROCESSORS_ONLN)

# Each stage's ns/event of kmap --stats into $tmp/PREFIX.STAGE.
stages() {	# prefix command...
	local p=$1
	shift
	"$@" kmap --stats ${JOBS:+-j $JOBS} "$f" > /dev/null 2> "$tmp/s" || return 1
	sed -n 's/^stats: \([0-9,]*\) events.*/\1/p' "$tmp/s" | tr -d , > "$tmp/events"
	sed -n '3,12p' "$tmp/s" | sed 's/^    shard 0/  shard-0/; s/^  write out/  write-out/; s/^  stream merge/  stream-merge/' |
		while read -r name _ ns _; do echo "$ns" >> "$tmp/$p.$name"; done
}

for i in $(seq 1 "$ROUNDS"); do
	echo "kmap bench: round $i/$ROUNDS" >&2
	for c in $(printf '%s\n' one shards | shuf); do
		case $c in
		one) set -- env KMT_MODEL_SHARDS=1 "$KMT";;
		shards) set -- "$KMT";;
		esac
		/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" kmap -j 4 "$f" > /dev/null || exit 1
		awk '{ print $1 }' "$tmp/t" >> "$tmp/$c.wall"
		awk '{ print $2 + $3 }' "$tmp/t" >> "$tmp/$c.cpu"
	done
	JOBS=4 stages core0 env KMT_MODEL_SHARDS=3 taskset -c 0 "$KMT" || exit 1
	JOBS=4 stages all env KMT_MODEL_SHARDS=3 "$KMT" || exit 1
	JOBS= stages single env KMT_NO_THREADS=1 "$KMT" || exit 1
done
r() { median < "$tmp/$1"; }
ev=$(cat "$tmp/events")
# The slowest serial stage: the merge of the parts, shard 0, the write-out.
bound() { awk -v a="$(r "$1.merge")" -v b="$(r "$1.shard-0")" -v c="$(r "$1.write-out")" \
	'BEGIN { m = a > b ? a : b; print (m > c ? m : c) }'; }
# All stages' CPU per event with S shards: the 3 measured, and 2.5 ns for each shard more.
total() { awk -v s="$2" -v a="$(r "$1.read+inflate")" -v b="$(r "$1.read+decode")" -v c="$(r "$1.merge")" \
	-v d="$(r "$1.model")" -v e="$(r "$1.write-out")" 'BEGIN { printf "%.1f", a + b + c + d + e + 2.5 * (s - 3) }'; }
rate() { awk -v c="$2" -v t="$(total "$1" "$3")" -v b="$(bound "$1")" \
	'BEGIN { x = c * 1000 / t; y = 1000 / b; printf "%.0f", x < y ? x : y }'; }
echo "## kmap in shards (issue 26 item 1)"
echo
echo "$(basename "$f"), $ev events, $ROUNDS paired rounds, medians. kmap -j 4 on this machine ($cpus CPUs):"
echo "the one model writing every record $(fmt "$(r one.wall)") s, in 2 shards $(fmt "$(r shards.wall)") s"
echo "(wall, **$(ratio "$(r shards.wall)" "$(r one.wall)")×**); CPU $(fmt "$(r one.cpu)") and $(fmt "$(r shards.cpu)") s."
echo
echo "| kmap --stats, ns per event | read+inflate | read+decode | merge | model (all shards) | shard 0 | write out |"
echo "|---|---|---|---|---|---|---|"
for p in core0 all; do
	echo "| 3 shards, $([ $p = core0 ] && echo "one core (taskset -c 0)" || echo "all $cpus cores") | $(r $p.read+inflate) | $(r $p.read+decode) | $(r $p.merge) | $(r $p.model) | $(r $p.shard-0) | $(r $p.write-out) |"
done
echo
echo "One thread (KMT_NO_THREADS=1): read+inflate $(r single.read+inflate), merge $(r single.stream-merge),"
echo "decode $(r single.decode), model and its records $(r single.model) ns per event: the one model's"
echo "thread alone binds at 1e9 / $(r single.model) = $(awk -v m="$(r single.model)" 'BEGIN { printf "%.1f", 1000 / m }') M events/s, however many cores."
echo
echo "Prediction from the one-core row (serial bound 1e9 / $(bound core0) = $(awk -v p="$(bound core0)" 'BEGIN { printf "%.0f", 1000 / p }') M events/s):"
echo "16 cores (14 shards): $(total core0 14) ns of CPU per event, **$(rate core0 16 14) M events/s**;"
echo "64 cores (32 shards): $(total core0 32) ns, **$(rate core0 64 32) M events/s**."
echo "From the all-cores row (serial bound 1e9 / $(bound all)): $(rate all 16 14) and $(rate all 64 32) M events/s."
