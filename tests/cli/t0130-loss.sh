#!/usr/bin/env bash
# Loss is measured, never hidden: with a deliberately tiny ring buffer and
# a heavy workload events are lost; the file says how many, per CPU, from
# the page headers, and the count agrees with the ring buffer's own stats
# stored beside it. The recorder says so plainly and names the option.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v hackbench > /dev/null || test_skip_all "hackbench is not installed (rt-tests)"
tracefs_snapshot

test_expect_success 'a tiny buffer under hackbench loses events, and says so' '
	$KMT record -b 8 -m 0 --rt-prio 0 -o l.dat -- hackbench -g 2 -l 300 > /dev/null 2> err; cat err &&
	grep -q "events were LOST" err && grep -q -- "-b " err
'

test_expect_success 'losses are in the page headers and agree with the per-CPU stats' '
	$KMT info l.dat > info && sed -n "/^CPU/,/^all/p" info &&
	awk "\$1 ~ /^[0-9]+\$/ {
		lost = \$5; unknown = sub(/\+\$/, \"\", lost); stats = \$6 + \$7; total += lost
		if (!unknown && lost != stats) { print \"CPU \" \$1 \": pages say \" lost \", stats \" stats; bad = 1 }
		if (unknown && lost > stats) { print \"CPU \" \$1 \": more lost in pages than stats\"; bad = 1 }
	} END { if (total == 0) { print \"nothing lost\"; bad = 1 } exit bad }" info
'

test_expect_success 'the dump shows where on each CPU the events were lost' '
	$KMT dump l.dat | grep -q "^CPU [0-9]*: LOST"
'

test_expect_success 'trace-cmd sees the same losses' '
	ours=$(awk "\$1 == \"all\" { sub(/\+/, \"\", \$5); print \$5 }" info) &&
	theirs=$(trace-cmd report l.dat 2>/dev/null | sed -n "s/.*\[\([0-9]*\) EVENTS DROPPED\].*/\1/p" | awk "{ s += \$1 } END { print s + 0 }") &&
	echo "ours $ours trace-cmd $theirs" && [ "$ours" -eq "$theirs" ]
'

test_expect_success 'at default settings the same workload loses nothing' '
	$KMT record -o ok.dat -- hackbench -g 2 -l 300 > /dev/null 2> err; cat err &&
	grep -q " 0 lost$" err && ! grep -q LOST err
'

tracefs_check
test_done
