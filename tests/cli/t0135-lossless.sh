#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Lossless, proven by an independent count. While kmemtrace record -F runs
# hackbench -g 4 -l 1000 (about 6.5 million events), a control instance of
# our own with the same kernel pid filter (set_event_pid + event-fork) and a
# buffer large enough to keep everything counts the slab events of the
# workload's tasks; the recording, read back by trace-cmd, must hold exactly
# as many events for each of those tasks. The control is read as the
# kernel's own text (its "trace" file); nothing of kmemtrace's reads either.
#
# Only the workload's own tasks are compared (the command's shell, which
# execs hackbench, and every task forked from it, from the control's fork
# events): the kernel's pid filter lets events on the context-switch path
# of unrelated tasks into both instances. The command blocks on a fifo
# until the control is on; its events from before that are left out of the
# recording's count (each instance stamps an event with its own clock
# read, a microsecond apart, so the cut is 1 ms before the control's first
# event, inside the seconds the control takes to set up).
. "$(dirname "$0")/lib.sh"
need_tracing
command -v hackbench > /dev/null || test_skip_all "hackbench is not installed (rt-tests)"
command -v trace-cmd > /dev/null || test_skip_all "trace-cmd is not installed"
tracefs_snapshot
CTL=$T/instances/kmt-test-control-$$
RPID=
cleanup() {
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
	if [ -d "$CTL" ]; then
		echo 0 > "$CTL/tracing_on"
		rmdir "$CTL" || echo "cannot remove $CTL" >&2
	fi
	cleanup_work
}
trap cleanup EXIT
SLAB="kmalloc kfree kmem_cache_alloc kmem_cache_free"

# A buffer that keeps everything: 512 MiB per CPU, less on a small machine.
ctl_kb() {
	local avail ncpu
	avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	ncpu=$(ls -d $T/per_cpu/cpu* | wc -l)
	echo $(( avail / 4 / ncpu < 524288 ? avail / 4 / ncpu : 524288 ))
}

test_expect_success 'record hackbench -g 4 -l 1000 beside a control instance' '
	mkfifo go &&
	$KMT record -F -o ll.dat -- sh -c "echo \$\$ > wl.pid; read x < go; exec hackbench -g 4 -l 1000" \
		> rec.out 2> rec.err &
	RPID=$! &&
	for i in $(seq 1 200); do [ -s wl.pid ] && break; sleep 0.05; done &&
	[ -s wl.pid ] && mkdir $CTL &&
	echo 0 > $CTL/tracing_on && echo 0 > $CTL/options/overwrite &&
	echo $(ctl_kb) > $CTL/buffer_size_kb && echo local > $CTL/trace_clock &&
	echo 1 > $CTL/options/event-fork && cat wl.pid > $CTL/set_event_pid &&
	for e in $SLAB; do echo 1 > $CTL/events/kmem/$e/enable; done &&
	echo 1 > $CTL/events/sched/sched_process_fork/enable &&
	echo 1 > $CTL/tracing_on && sleep 0.1 && echo go > go &&
	wait $RPID && RPID= && cat rec.err &&
	echo 0 > $CTL/tracing_on && cat $CTL/trace > ctl.txt &&
	grep -hE "^(overrun|dropped events):" $CTL/per_cpu/cpu*/stats > ctl.stats &&
	echo 0 > $CTL/tracing_on && rmdir $CTL &&
	trace-cmd report ll.dat > rec.txt 2> /dev/null
'

test_expect_success 'the recording lost nothing, and neither did the control' '
	grep -q "^kmemtrace record: [0-9,]* events in .* on [0-9]* CPUs, 0 lost$" rec.err &&
	cat ctl.stats && ! grep -qv ": 0$" ctl.stats
'

# hackbench -g 4: 4 groups of 20 senders and 20 receivers, forked by the shell.
# Slab events per task of W (file of pids), at or after time T0: "pid count".
per_task() {	# W T0 text
	awk -v T0="$2" -v S="$SLAB" "
	BEGIN { n = split(S, s, \" \"); for (i = 1; i <= n; i++) ev[s[i] \":\"] }
	NR == FNR { W[\$1]; next }
	/^#/ { next }
	{
		for (i = 1; i <= NF && \$i !~ /^\\[[0-9]+\\]\$/; i++);
		for (j = i + 1; j <= NF && \$j !~ /^[0-9]+\\.[0-9]+:\$/; j++);
		if (j >= NF || !(\$(j + 1) in ev)) next
		p = \$(i - 1); sub(/.*-/, \"\", p)
		if ((p in W) && substr(\$j, 1, length(\$j) - 1) + 0 >= T0) c[p]++
	}
	END { for (p in c) print p, c[p] }" "$1" "$3" | sort -n
}

test_expect_success 'every slab event of the workload is in the file: exactly the control count' '
	awk -v P=$(cat wl.pid) "BEGIN { w[P] = 1 }
		/ sched_process_fork: / { for (i = 1; i <= NF; i++) {
			if (\$i ~ /^pid=/) pp = substr(\$i, 5); if (\$i ~ /^child_pid=/) c = substr(\$i, 11) }
			if (pp in w) w[c] = 1 }
		END { for (p in w) print p }" ctl.txt > W &&
	first=$(awk -v P=$(cat wl.pid) "
		/^#/ { next } { for (i = 1; i <= NF && \$i !~ /^\\[[0-9]+\\]\$/; i++);
		p = \$(i - 1); sub(/.*-/, \"\", p); if (p != P) next
		for (j = i + 1; j <= NF; j++) if (\$j ~ /^[0-9]+\\.[0-9]+:\$/) { print substr(\$j, 1, length(\$j) - 1); exit } }" ctl.txt) &&
	t0=$(awk -v t=$first "BEGIN { printf \"%.6f\", t - 0.001 }") &&
	per_task W 0 ctl.txt > c.ctl && per_task W $t0 rec.txt > c.rec &&
	ctl=$(awk "{ s += \$2 } END { print s }" c.ctl) && rec=$(awk "{ s += \$2 } END { print s }" c.rec) &&
	echo "$(wc -l < W) tasks; slab events: $rec recorded, $ctl counted by the control" &&
	[ "$(wc -l < W)" -eq 161 ] && [ "$ctl" -gt 6000000 ] &&
	diff c.ctl c.rec
'

tracefs_check
test_done
