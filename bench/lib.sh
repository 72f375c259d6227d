# SPDX-License-Identifier: GPL-2.0-only
# Helpers for the benchmark scripts: timing, CPU accounting, medians, and
# a "floor" tracefs instance (the events enabled, nobody reading).
# Sourced; expects KMT (the kmemtrace binary) to be set.

T=/sys/kernel/tracing
FLOOR_INSTANCE=kmt-bench-floor-$$

now() { date +%s.%N; }

# Busy CPU time of the whole machine, in seconds (all CPUs, from /proc/stat).
cpu_busy() {
	awk -v hz="$(getconf CLK_TCK)" '/^cpu / { print ($2+$3+$4+$7+$8) / hz }' /proc/stat
}

# The trace a benchmark measures: $FILE, or hackbench -g 4 -l $LOOPS recorded
# now into $tmp (the caller's scratch folder). Prints its path.
bench_trace() {	# benchmark-name
	if [ -n "${FILE:-}" ]; then
		echo "$FILE"
		return
	fi
	echo "$1 bench: recording hackbench -g 4 -l $LOOPS" >&2
	"$KMT" record -q -o "$tmp/k.dat" -- hackbench -g 4 -l "$LOOPS" > /dev/null 2>&1 || return 1
	echo "$tmp/k.dat"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print 0; else if (NR % 2) printf "%.10g\n", v[(NR + 1) / 2]; else printf "%.10g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }

fmt() { awk -v v="$1" 'BEGIN { printf "%.3f", v }'; }

# The events kmemtrace records by default, for the floor instance.
floor_events() {
	for e in kmem/kmalloc kmem/kfree kmem/kmem_cache_alloc kmem/kmem_cache_free \
		 kmem/mm_page_alloc kmem/mm_page_free kmem/mm_page_free_batched \
		 percpu/percpu_alloc_percpu percpu/percpu_free_percpu \
		 sched/sched_process_fork sched/sched_process_exec sched/sched_process_exit \
		 task/task_rename task/task_newtask; do
		[ -d "$T/events/$e" ] && echo "$e"
	done
}

floor_on() {
	local kb=$1 e
	mkdir "$T/instances/$FLOOR_INSTANCE" || return 1
	echo "$kb" > "$T/instances/$FLOOR_INSTANCE/buffer_size_kb"
	for e in $(floor_events); do echo 1 > "$T/instances/$FLOOR_INSTANCE/events/$e/enable"; done
}

floor_stats() {
	cat "$T"/instances/$FLOOR_INSTANCE/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^entries:/ { e += $2 } /^overrun:/ { o += $2 } END { print e + o }'
}

floor_off() {
	[ -d "$T/instances/$FLOOR_INSTANCE" ] || return 0
	echo 0 > "$T/instances/$FLOOR_INSTANCE/tracing_on"
	echo 0 > "$T/instances/$FLOOR_INSTANCE/events/enable"
	rmdir "$T/instances/$FLOOR_INSTANCE"
}

bench_cleanup() { floor_off; }
trap bench_cleanup EXIT INT TERM

# Run "$@" and print "wall cpu" (seconds; cpu = busy time of all CPUs).
timed() {
	local t0 c0 t1 c1
	c0=$(cpu_busy); t0=$(now)
	"$@" > /dev/null 2>&1
	t1=$(now); c1=$(cpu_busy)
	awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" 'BEGIN { printf "%.4f %.4f\n", b - a, d - c }'
}

machine() {
	echo "$(uname -sr), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
}

# Run run_cfg (defined by the caller) for each configuration in $2, in a
# fresh random order each round, $ROUNDS rounds: comparisons are paired.
paired_rounds() {	# name "cfg cfg ..."
	local i cfg order
	for i in $(seq 1 "$ROUNDS"); do
		order=$(echo $2 | tr ' ' '\n' | shuf | tr '\n' ' ')
		echo "$1 bench: round $i/$ROUNDS: $order" >&2
		for cfg in $order; do sync; sleep 1; run_cfg "$cfg" "$i"; done
	done
}

med() { printf '%s\n' "$@" | median; }
# One column of a paired table: the values of configuration $1 in array $2, per round.
col() { local cfg=$1 m=$2 i; for i in $(seq 1 "$ROUNDS"); do eval echo "\${$m[$cfg,$i]}"; done; }
# The median over rounds of configuration $1's value in array $3 over $2's.
pratio() { local cfg=$1 base=$2 m=$3 i; for i in $(seq 1 "$ROUNDS"); do eval ratio "\${$m[$cfg,$i]}" "\${$m[$base,$i]}"; echo; done | median; }
