#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: what kernel stacks cost (record --stack, --stack-sample N),
# each against its own floor: the same events and the same stacktrace
# trigger on in a private instance, nobody reading. Paired rounds as in
# record.sh; the workload is timed from inside by bench/wl.sh. Prints a
# markdown section on stdout; progress on stderr.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
BUF_KB=${BUF_KB:-65536}
SAMPLES=${SAMPLES:-8 64}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM
WL=("$here/wl.sh" $WORKLOAD)
ALLOCS="kmem/kmalloc kmem/kmem_cache_alloc kmem/mm_page_alloc percpu/percpu_alloc_percpu"

declare -A W C TOT EV SZ

# The floor with the stacktrace trigger on the allocation events; $1: 0
# (none) or 1 (every allocation). --stack-sample N has no floor of its own:
# its stacks come from a thread switching the instance's stacktrace option
# on and off, which only the recorder does; it is held to the no-stack floor.
floor_stack_on() {
	local n=$1 e f
	floor_on "$BUF_KB" || return 1
	[ "$n" = 0 ] && return 0
	for e in $ALLOCS; do
		f=$T/instances/$FLOOR_INSTANCE/events/$e/trigger
		[ -f "$f" ] && echo stacktrace > "$f"
	done
}

floor_stack_off() {
	local e f
	for e in $ALLOCS; do
		f=$T/instances/$FLOOR_INSTANCE/events/$e/trigger
		[ -f "$f" ] && echo '!stacktrace' > "$f" 2> /dev/null
	done
	floor_off
}

run_cfg() {	# cfg round
	local cfg=$1 i=$2 n t0 t1
	case $cfg in
	floor-*)
		n=${cfg#floor-}
		floor_stack_on "$n"
		"${WL[@]}" 3> "$tmp/t"
		EV[$cfg,$i]=$(floor_stats)
		floor_stack_off ;;
	rec-*)
		n=${cfg#rec-}
		rm -f "$tmp/k.dat"
		t0=$(now)
		case $n in
		0) "$KMT" record -q -b "$BUF_KB" -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t" ;;
		1) "$KMT" record -q -b "$BUF_KB" --stack -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t" ;;
		*) "$KMT" record -q -b "$BUF_KB" --stack-sample "$n" -o "$tmp/k.dat" -- "${WL[@]}" 3> "$tmp/t" ;;
		esac
		t1=$(now)
		TOT[$cfg,$i]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		EV[$cfg,$i]=$("$KMT" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $2 }')
		EV[$cfg,$i]="${EV[$cfg,$i]} lost $("$KMT" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $5 }')"
		SZ[$cfg,$i]=$(stat -c %s "$tmp/k.dat") ;;
	esac
	read -r W[$cfg,$i] C[$cfg,$i] < "$tmp/t"
}

CFGS="floor-0 rec-0 floor-1 rec-1"
for n in $SAMPLES; do CFGS="$CFGS rec-$n"; done
paired_rounds stack "$CFGS"

name() { case $1 in 0) echo "no stacks" ;; 1) echo "--stack" ;; *) echo "--stack-sample $1" ;; esac; }
cat <<MD
### Kernel stacks: \`record --stack\` and \`--stack-sample N\` on \`$WORKLOAD\` — $ROUNDS paired rounds

Each recording against its own floor (the same events and stacktrace trigger
on, nobody reading) and against the floor without stacks; \`--stack-sample N\`
has no floor of its own (a thread of the recorder switches stacks on in
slices of time), so it is held to the no-stack floor only.

| stacks | floor wall s | floor × no-stack floor | record: workload wall s | × its floor | × no-stack floor | whole command × its floor | events (last round) | MiB on disk |
|---|---|---|---|---|---|---|---|---|
MD
for n in 0 1 $SAMPLES; do
	f=floor-$n
	[ "$n" -gt 1 ] && f=floor-0
	printf '| %s | %s | %s | %.3f | %s | %s | %s | %s | %.1f |\n' "$(name "$n")" \
		"$([ "$n" -gt 1 ] && echo – || col $f W | median | awk '{ printf "%.3f", $1 }')" \
		"$([ "$n" -gt 1 ] && echo – || fmt "$(pratio $f floor-0 W)")" \
		"$(col rec-$n W | median)" "$([ "$n" -gt 1 ] && echo – || fmt "$(pratio rec-$n $f W)")" \
		"$(fmt "$(pratio rec-$n floor-0 W)")" \
		"$(for i in $(seq 1 "$ROUNDS"); do ratio "${TOT[rec-$n,$i]}" "${W[$f,$i]}"; echo; done | median)" \
		"${EV[rec-$n,$ROUNDS]}" "$(col rec-$n SZ | median | awk '{ print $1 / 1048576 }')"
done
cat <<MD

- A sample of 1 in N: the recorder switches the instance's stacktrace option
  on in random slices of time, as many events off as N - 1 times the events
  on (counted from the ring buffers' stats), so every call site gets its share;
  while on, every event has a stack, frees too. "whole command" for it is over
  the no-stack floor.
MD
