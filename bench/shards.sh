#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: the model in shards (-j 4 and more; issue 26 item 1). Two views:
#  - the model alone (build/bench/kmt-shards: events decoded beforehand, no
#    reading): 1 to MAXSHARDS shards, a thread each, paired within each
#    round; and shard 0 alone with 1 to 16 shards ("route"): its cost per
#    event, the part of the model no number of shards spreads;
#  - the whole report (--stats, paired rounds): one model on its thread
#    against 2 shards ($KMT_MODEL_SHARDS), at the default -j.
# Prints a markdown section with the Amdahl arithmetic from these numbers.
#   FILE=x.dat EVENTS=4000000 bench/shards.sh   (default: record hackbench -g 4 -l $LOOPS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
SHARDS=${SHARDS_BIN:-$(dirname "$KMT")/bench/kmt-shards}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-1000}
EVENTS=${EVENTS:-4000000}
STEPS=${STEPS:-2000000}
SYNTH=${SYNTH:-$(dirname "$KMT")/tests/kmt-synth}
. "$here/lib.sh"
trap - EXIT INT TERM

[ -x "$SHARDS" ] || { echo "shards bench: no $SHARDS (make bench builds it)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/kmt-bench-shards.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
f=$(bench_trace shards) || exit 1
cpus=$(getconf _NPROCESSORS_ONLN)
"$SHARDS" "$f" "$EVENTS" "$ROUNDS" "$((cpus < 2 ? 2 : cpus))" > "$tmp/model" || exit 1
"$SHARDS" "$f" "$EVENTS" "$ROUNDS" 16 route > "$tmp/route" || exit 1

# The whole report: one model against two shards, in turn.
for i in $(seq 1 "$ROUNDS"); do
	for s in 1 2; do
		KMT_MODEL_SHARDS=$s /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$KMT" report --stats "$f" \
			> /dev/null 2> "$tmp/s" || exit 1
		awk '{ print $1 }' "$tmp/t" >> "$tmp/wall.$s"
		awk '{ print $2 + $3 }' "$tmp/t" >> "$tmp/cpu.$s"
		awk '$1 == "model" { print $3 }' "$tmp/s" >> "$tmp/model.$s"
		awk '$1 == "shard" { print $4 }' "$tmp/s" >> "$tmp/shard0.$s"
	done
done
# The stages with 3 shards on one core (taskset -c 0): none waits on another, each timed alone;
# on the recording ("one.") and on kmt-synth's 48-CPU trace, a stack after every allocation ("wide.").
echo "shards bench: a 48-CPU trace of $STEPS steps" >&2
KMT_TESTDATA=${KMT_TESTDATA:-$here/../tests/data} "$SYNTH" wide "$tmp/wide.dat" "$STEPS" || exit 1
for i in $(seq 1 "$ROUNDS"); do
	for w in one:$f wide:$tmp/wide.dat; do
		KMT_MODEL_SHARDS=3 taskset -c 0 "$KMT" report --stats "${w#*:}" > /dev/null 2> "$tmp/s" || exit 1
		sed -n '3,9p' "$tmp/s" | sed 's/^    shard 0/  shard-0/' |
			while read -r name _ ns _; do echo "$ns" >> "$tmp/${w%%:*}.$name"; done
		# ... and on every core: each stage's reads of what another core wrote count too.
		KMT_MODEL_SHARDS=3 "$KMT" report --stats "${w#*:}" > /dev/null 2> "$tmp/s" || exit 1
		sed -n '3,9p' "$tmp/s" | sed 's/^    shard 0/  shard-0/' |
			while read -r name _ ns _; do echo "$ns" >> "$tmp/all-${w%%:*}.$name"; done
	done
done
r() { median < "$tmp/$1"; }
w1=$(r wall.1) w2=$(r wall.2) ev=$(sed -n 's/^\([0-9]*\) events.*/\1/p' "$tmp/model")
one=$(awk '$1 == 1 { print $4 }' "$tmp/model")
r16=$(awk '$1 == 16 { print $5 }' "$tmp/route") r3=$(awk '$1 == 3 { print $5 }' "$tmp/route")
r2=$(awk '$1 == 2 { print $5 }' "$tmp/route")
echo "## The model in shards (-j; issue 26 item 1)"
echo
echo "$(basename "$f"): the model alone on $ev events decoded beforehand (kmt-shards), $ROUNDS"
echo "paired rounds, medians; a shard waits for shard 0 with sched_yield, so with more shards"
echo "than cores they contend and their CPU counts the waiting:"
echo
echo '```'
cat "$tmp/model"
echo '```'
echo
echo "Shard 0 alone (it routes every event and takes its share of the objects, none from 3 shards"
echo "on; the others' work left undone): the part of the model that more shards do not spread:"
echo
echo '```'
cat "$tmp/route"
echo '```'
echo
echo "From 3 shards on shard 0 takes no slab object: it only routes, at **$r16 ns** per event with"
echo "16 shards ($r3 with 3), against $one ns for one model (with 2 shards it takes half the objects:"
echo "$r2). The model stage alone goes no faster than 1e9 / $r16 = $(awk -v r="$r16" 'BEGIN { printf "%.0f", 1000 / r }') M events/s, however many cores."
echo
echo "The whole report on this machine ($cpus CPUs), default -j, $ROUNDS paired rounds: one model"
echo "$(fmt "$w1") s, 2 shards $(fmt "$w2") s (wall, $(ratio "$w2" "$w1")×); CPU $(fmt "$(r cpu.1)") vs"
echo "$(fmt "$(r cpu.2)") s; model ns/event $(r model.1) (one thread) vs $(r model.2) (both shards; shard 0"
echo "$(r shard0.2))."
echo
# The serial stage that binds: the larger of the merge of the parts and shard 0.
bound() { awk -v a="$(r "$1.merge")" -v b="$(r "$1.shard-0")" 'BEGIN { print (a > b ? a : b) }'; }
echo "The stages with 3 shards under taskset -c 0 (one core: no stage waits on another), medians of"
echo "$ROUNDS, ns per event: read+inflate $(r one.read+inflate), read and decode in 2 parts $(r one.read+decode)"
echo "(parallel), their merge $(r one.merge), shard 0 $(r one.shard-0), all shards $(r one.model). With enough cores the"
echo "slowest serial stage binds: 1e9 / $(bound one) = $(awk -v p="$(bound one)" 'BEGIN { printf "%.0f", 1000 / p }') M events/s for this file, whose data is 2 CPUs'."
echo
echo "The same on kmt-synth's 48-CPU trace ($STEPS steps, a stack after every allocation): read+inflate"
echo "$(r wide.read+inflate), read and decode in 2 parts $(r wide.read+decode), their merge $(r wide.merge), shard 0 $(r wide.shard-0), all"
echo "shards $(r wide.model): 1e9 / $(bound wide) = $(awk -v p="$(bound wide)" 'BEGIN { printf "%.0f", 1000 / p }') M events/s for a machine of that many CPUs."
echo
echo "The same stages on all $cpus cores (no taskset: the merge and shard 0 read what other cores"
echo "wrote, as on a big machine, and share the cores with the other stages), medians of $ROUNDS:"
echo "hackbench: merge $(r all-one.merge), shard 0 $(r all-one.shard-0): 1e9 / $(bound all-one) = $(awk -v p="$(bound all-one)" 'BEGIN { printf "%.0f", 1000 / p }') M events/s;"
echo "48 CPUs: merge $(r all-wide.merge), shard 0 $(r all-wide.shard-0): 1e9 / $(bound all-wide) = $(awk -v p="$(bound all-wide)" 'BEGIN { printf "%.0f", 1000 / p }') M events/s."
echo "Each stage's time is its work: the threads' time asleep in hand-overs (a stage that binds never"
echo "waits) is counted apart, 'waiting': $(r all-one.waiting) and $(r all-wide.waiting) ns per event on both cores, $(r one.waiting) and $(r wide.waiting) on one."
