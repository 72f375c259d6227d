#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The memory budget (issue 26 item 4): by default record, top and watch
# size their ring buffers, hold and top's prefault by the machine's RAM,
# never by its CPU count: 1/32 of RAM and at most 1 GiB in all. The
# expected numbers are computed here from /proc/meminfo and the CPUs
# online by the man page's formula (MEMORY), and every place must say
# exactly them: --help, the instances' buffer_size_kb, the record summary,
# info, and what top faults in. -b and -m given override.
. "$(dirname "$0")/lib.sh"
need_tracing
tracefs_snapshot

ram=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
ncpu=$(getconf _NPROCESSORS_ONLN)
total=$(( ram / 32 < (1 << 30) ? ram / 32 : (1 << 30) ))
ring=$(( total / 2 / ncpu / 1024 / 4 * 4 ))
ring=$(( ring < 64 ? 64 : ring > 16384 ? 16384 : ring ))
# The kernel's pages: 4080 bytes of data each, and one more for the reader.
pages=$(( (ring * 1024 + 4079) / 4080 + 1 ))
shown=$(( (pages - 1) * 4080 / 1024 ))	# what buffer_size_kb says
rest=$(( total - pages * 4096 * ncpu ))
hold=$(( rest >> 20 ))
prefault=$(( rest / 2 / ncpu ))
# watch: its control instance's ring (1/16 of the ring, 64 KiB to 1 MiB) and a 64-page perf ring per CPU.
ctl=$(( ring / 16 / 4 * 4 )); ctl=$(( ctl < 64 ? 64 : ctl > 1024 ? 1024 : ctl ))
ctlpages=$(( (ctl * 1024 + 4079) / 4080 + 1 ))
whold=$(( (rest - (ctlpages + 65) * 4096 * ncpu) >> 20 ))
echo "# RAM $((ram >> 20)) MiB, $ncpu CPUs: budget $((total >> 20)) MiB, ring $ring KiB per CPU, hold $hold MiB, prefault $((prefault >> 20)) MiB per CPU"
export T

test_expect_success 'the rule stays under 1/32 of RAM and 1 GiB in all' '
	[ $(( pages * 4096 * ncpu + rest )) -le $(( ram / 32 )) ] &&
	[ $(( pages * 4096 * ncpu + rest )) -le $(( 1 << 30 )) ] &&
	[ $(( pages * 4096 * ncpu + prefault * ncpu )) -le $total ]
'

test_expect_success 'record, top and watch --help: the rule, and what it gives here' '
	for c in record top watch; do
		$KMT $c --help > h.$c &&
		grep -q "^Memory: by default kmemtrace takes at most 1/32 of RAM and 1 GiB in all:$" h.$c &&
		grep -qx "Here: $((total >> 20)) MiB of $((ram >> 20)) MiB of RAM: ring buffers $ncpu x $ring KiB, the rest $hold MiB." h.$c &&
		grep -q -- "--buffer-size KB     ring buffer per CPU (default: half the memory$" h.$c || { echo "$c"; cat h.$c; return 1; }
	done
'

test_expect_success 'record: the ring buffers and hold of the budget; the summary and info say them' '
	$KMT record -o r.dat -- sh -c "cat \$T/instances/kmemtrace-\$PPID/per_cpu/cpu*/buffer_size_kb | sort -u > kb" 2> r.err &&
	cat r.err && echo "per CPU: $(cat kb)" && [ "$(cat kb)" = "$shown" ] &&
	grep -qx "  memory: ring buffers $ncpu x $ring KiB, hold $hold MiB (budget $((total >> 20)) MiB: 1/32 of RAM, at most 1 GiB)" r.err &&
	$KMT info r.dat | grep "^settings:" | has "; buffer $ring KiB per CPU; hold $hold MiB;"
'

test_expect_success 'record -b and -m override: the instance, the summary and info' '
	$KMT record -b 1024 -m 100 -o o.dat -- sh -c "cat \$T/instances/kmemtrace-\$PPID/per_cpu/cpu*/buffer_size_kb | sort -u > kb" 2> o.err &&
	[ "$(cat kb)" = $(( (1024 * 1024 + 4079) / 4080 * 4080 / 1024 )) ] &&
	grep -qx "  memory: ring buffers $ncpu x 1024 KiB, hold 100 MiB (budget $((total >> 20)) MiB: 1/32 of RAM, at most 1 GiB)" o.err &&
	$KMT info o.dat | grep "^settings:" | has "; buffer 1024 KiB per CPU; hold 100 MiB;"
'

test_expect_success 'top: the same ring buffers, half the rest faulted in before tracing, the rest its queue' '
	rss() { awk "/^VmRSS/ { print \$2 * 1024 }" /proc/$1/status; } &&
	{ $KMT top --json -i 5 -o t.dat > t.snaps & pid=$!; } &&
	wait_tracing $pid &&
	kb=$(cat $T/instances/kmemtrace-$pid/per_cpu/cpu*/buffer_size_kb | sort -u) && r=$(rss $pid) &&
	kill -TERM $pid && wait $pid &&
	echo "top: $kb KiB per CPU, RSS $((r >> 20)) MiB, prefault $((prefault * ncpu >> 20)) MiB" &&
	[ "$kb" = "$shown" ] && [ "$r" -ge $(( prefault * ncpu )) ] &&
	# Not the whole hold: the prefault and what the queue and the model took
	# since tracing started (7-20 MiB here, 68 once after a busy test).
	[ "$r" -lt $(( prefault * ncpu + (128 << 20) )) ] && [ $(( prefault * ncpu + (128 << 20) )) -lt $(( hold << 20 )) ] &&
	$KMT info t.dat | grep "^settings:" | has "; buffer $ring KiB per CPU; queue $hold MiB;"
'

test_expect_success 'watch: the same ring buffers; its control instance and sample rings come out of its hold' '
	KMT_TEST_HWBP=skip $KMT watch -q --cache kmalloc-64 -o w.dat -- sh -c \
		"cat \$T/instances/kmemtrace-\$PPID/per_cpu/cpu*/buffer_size_kb | sort -u > kb;
		 cat \$T/instances/kmemtrace-\$PPID-ctl/per_cpu/cpu*/buffer_size_kb | sort -u > ctl" &&
	echo "watch: $(cat kb) KiB per CPU, control $(cat ctl) KiB per CPU, hold $whold MiB" &&
	[ "$(cat kb)" = "$shown" ] && [ "$(cat ctl)" = $(( (ctlpages - 1) * 4080 / 1024 )) ] &&
	[ $(( pages * 4096 * ncpu + (ctlpages + 65) * 4096 * ncpu + (whold << 20) )) -le $total ] &&
	$KMT info w.dat | grep "^settings:" | has "; buffer $ring KiB per CPU; hold $whold MiB;"
'

tracefs_check
test_done
