#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: the per-CPU part of a recording's start and end (issue 26
# item 5). Two measurements, repeated ROUNDS times, medians:
#
#  1. The kernel's per-CPU steps on a private instance, each CPU on its own
#     (bash builtins only, timed with $EPOCHREALTIME: no fork in the timed
#     part): size its ring buffer to KB, open its trace_pipe_raw, read its
#     stats, shrink it to 4 KiB; and the same resize and shrink written for
#     every CPU at once, one after the other and from concurrent writers,
#     which tells whether the kernel lets them overlap. rmdir last.
#  2. kmemtrace record -- true with KMT_TIMES=1: each step's wall time, from
#     the instance's mkdir to the exit.
#  3. With BASE set (another kmemtrace binary): record -- WORKLOAD with both
#     binaries in a fresh random order each round, KMT_TIMES=1: the time
#     from the workload's end to the exit (drain + file + teardown + exit)
#     and the readers' start, paired per round.
#
# Prints a markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-9}
KBS=${KBS:-4096 16384 65536}
KB=${KB:-16384}			# record's -b
. "$here/lib.sh"
I=$T/instances/kmt-bench-percpu-$$
trap 'rmdir "$I" 2> /dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
tmp=$(mktemp -d /tmp/kmt-bench-percpu.XXXXXX)
cpus=$(ls -d $T/per_cpu/cpu* | sed 's/.*cpu//' | sort -n)
ncpu=$(echo $cpus | wc -w)
declare -A S	# step -> values, one per round, "v v v"

# The clock is read inline: a $(...) would fork inside the timed part.
put() { S[$1]="${S[$1]:-} $2"; }

kernel_round() {	# KB
	local KB=$1 t e c fd x w
	mkdir "$I" && echo 0 > "$I/tracing_on" && echo 4 > "$I/buffer_size_kb" || return 1
	for c in $cpus; do
		t=${EPOCHREALTIME/./}; echo "$KB" > "$I/per_cpu/cpu$c/buffer_size_kb"; e=${EPOCHREALTIME/./}; put "resize one CPU to $KB KiB" $((e - t))
	done
	for c in $cpus; do
		t=${EPOCHREALTIME/./}; exec {fd}< "$I/per_cpu/cpu$c/trace_pipe_raw"; e=${EPOCHREALTIME/./}; put "open trace_pipe_raw" $((e - t))
		t=${EPOCHREALTIME/./}; read -r -d '' x < "$I/per_cpu/cpu$c/stats"; e=${EPOCHREALTIME/./}; put "read stats" $((e - t))
		t=${EPOCHREALTIME/./}; exec {fd}<&-; e=${EPOCHREALTIME/./}; put "close trace_pipe_raw" $((e - t))
	done
	for c in $cpus; do
		t=${EPOCHREALTIME/./}; echo 4 > "$I/per_cpu/cpu$c/buffer_size_kb"; e=${EPOCHREALTIME/./}; put "shrink one CPU from $KB KiB" $((e - t))
	done
	t=${EPOCHREALTIME/./}; echo "$KB" > "$I/buffer_size_kb"; e=${EPOCHREALTIME/./}; put "resize all CPUs (one write), $KB KiB" $((e - t))
	t=${EPOCHREALTIME/./}; echo 4 > "$I/buffer_size_kb"; e=${EPOCHREALTIME/./}; put "shrink all CPUs (one write), $KB KiB" $((e - t))
	# Concurrent writers, one per CPU, started together.
	# Concurrent writers, one per CPU, each timing its own write; the
	# span from the first start to the last end is the step's time.
	for w in "$KB:resize" "4:shrink"; do
		for c in $cpus; do
			(s=${EPOCHREALTIME/./}; echo "${w%%:*}" > "$I/per_cpu/cpu$c/buffer_size_kb"
			 echo "$s ${EPOCHREALTIME/./}" > "$tmp/w$c") &
		done; wait
		put "${w#*:} all CPUs (a writer per CPU, concurrent), $KB KiB" \
			"$(cat "$tmp"/w* | awk 'NR == 1 || $1 < a { a = $1 } $2 > b { b = $2 } END { print b - a }')"
		rm -f "$tmp"/w*
	done
	echo "$KB" > "$I/buffer_size_kb"
	t=${EPOCHREALTIME/./}; rmdir "$I"; e=${EPOCHREALTIME/./}; put "rmdir, $KB KiB per CPU" $((e - t))
	mkdir "$I" && echo 4 > "$I/buffer_size_kb"
	t=${EPOCHREALTIME/./}; rmdir "$I"; e=${EPOCHREALTIME/./}; put "rmdir, 4 KiB per CPU" $((e - t))
}

record_round() {
	KMT_TIMES=1 "$KMT" record -q -b "$KB" -o "$tmp/t.dat" -- true 2> "$tmp/times" || return 1
	while read -r _ _ _ step v _; do put "record: $step" "$(awk -v v="$v" 'BEGIN { printf "%d", v * 1000 }')"; done < "$tmp/times"
}

BASE=${BASE:-}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
declare -A END START SETUP
paired_round() {	# round
	local b k t
	for b in $(printf 'base\nnew\n' | shuf); do
		k=$KMT; [ $b = base ] && k=$BASE
		sync; sleep 0.5
		KMT_TIMES=1 "$k" record -q -o "$tmp/p.dat" -- $WORKLOAD > /dev/null 2> "$tmp/ptimes" || return 1
		END[$b,$1]=$(awk '$4 == "drain" || $4 == "file" || $4 == "teardown" || $4 == "exit" { s += $5 } END { printf "%.3f", s }' "$tmp/ptimes")
		START[$b,$1]=$(awk '$4 == "readers" { printf "%.3f", $5 }' "$tmp/ptimes")
		SETUP[$b,$1]=$(awk '$4 != "prepare" && $4 != "workload" { s += $5 } $4 == "tracing-on" { printf "%.3f", s; exit }' "$tmp/ptimes")
	done
}

for i in $(seq 1 "$ROUNDS"); do
	echo "percpu bench: round $i/$ROUNDS" >&2
	sync; sleep 0.5
	for kb in $KBS; do kernel_round "$kb" || exit 1; done
	record_round || exit 1
	[ -z "$BASE" ] || paired_round "$i" || exit 1
done

med_ms() { printf '%s\n' $1 | median | awk '{ printf "%.3f", $1 / 1000 }'; }
echo "### Per-CPU work at a recording's start and end — $ROUNDS rounds, $ncpu CPUs (record: -b $KB)"
echo
echo "| step | ms (median) | values, ms |"
echo "|---|---|---|"
keys=()
for kb in $KBS; do
	keys+=("resize one CPU to $kb KiB" "resize all CPUs (one write), $kb KiB" "resize all CPUs (a writer per CPU, concurrent), $kb KiB"
	       "shrink one CPU from $kb KiB" "shrink all CPUs (one write), $kb KiB" "shrink all CPUs (a writer per CPU, concurrent), $kb KiB"
	       "rmdir, $kb KiB per CPU")
done
keys+=("rmdir, 4 KiB per CPU" "open trace_pipe_raw" "read stats" "close trace_pipe_raw"
       "record: prepare" "record: mkdir" "record: configure" "record: metadata" "record: sized" "record: readers"
       "record: tracing-on" "record: workload" "record: drain" "record: file" "record: teardown" "record: exit")
for k in "${keys[@]}"; do
	[ -n "${S[$k]:-}" ] || continue
	printf '| %s | %s | %s |\n' "$k" "$(med_ms "${S[$k]}")" \
		"$(printf '%s\n' ${S[$k]} | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / 1000 }')"
done

if [ -n "$BASE" ]; then
	pr() { for i in $(seq 1 "$ROUNDS"); do eval ratio "\${$1[new,\$i]}" "\${$1[base,\$i]}"; echo; done | median; }
	cl() { for i in $(seq 1 "$ROUNDS"); do eval echo "\${$1[$2,\$i]}"; done; }
	echo
	echo "Paired, \`record -- $WORKLOAD\`, this tree against $BASE ($ROUNDS rounds, each in a random order):"
	echo
	echo "| | base ms (median) | new ms (median) | new / base (paired median) | base, ms | new, ms |"
	echo "|---|---|---|---|---|---|"
	for m in END SETUP START; do
		case $m in END) l="workload's end to exit";; SETUP) l="instance made to tracing on";;
			   START) l="readers started (open, threads)";; esac
		printf '| %s | %s | %s | %s | %s | %s |\n' "$l" "$(cl $m base | median)" "$(cl $m new | median)" "$(pr $m)" \
			"$(cl $m base | tr '\n' ' ')" "$(cl $m new | tr '\n' ' ')"
	done
fi
