#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Loss is measured, never hidden: with a deliberately tiny ring buffer and
# a heavy workload events are lost; the file says how many, per CPU: the
# ring buffer's own count, stored beside the data, and where (the page
# headers' gaps). record, info, check and report give the one figure. The
# recorder says so plainly and names the option.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v hackbench > /dev/null || test_skip_all "hackbench is not installed (rt-tests)"
tracefs_snapshot

test_expect_success 'a tiny buffer under hackbench loses events, and says so' '
	$KMT record -b 8 -m 0 --rt-prio 0 -o l.dat -- hackbench -g 2 -l 300 > /dev/null 2> err; cat err &&
	grep -q "events were LOST" err && grep -q -- "-b " err
'

# The ring buffer's own count per CPU, as trace-cmd reads it from the file: "CPU LOST".
ring() {
	trace-cmd report --stat -i "$1" 2> /dev/null | awk "
		/^CPU: / { cpu = \$2 } /^overrun: / { o[cpu] = \$2 } /^dropped events: / { d[cpu] = \$3 }
		END { for (c in o) print c, o[c] + d[c] }" | sort -n
}

test_expect_success 'info: per CPU, the events the ring buffer counted lost, and the gaps' '
	$KMT info l.dat | tr -d , > info && sed -n "/^CPU/,/^all/p" info &&
	awk "\$1 ~ /^[0-9]+\$/ { print \$1, \$5 }" info | sort -n > ours && ring l.dat > theirs &&
	diff theirs ours && [ "$(awk "{ s += \$2 } END { print s }" ours)" -gt 0 ] &&
	awk "\$1 ~ /^[0-9]+\$/ && \$5 > 0 && \$6 == 0 { print \"lost without a gap: \" \$0; bad = 1 } END { exit bad }" info
'

test_expect_success 'the dump shows where on each CPU the events were lost' '
	$KMT dump l.dat | has "^CPU [0-9]*: LOST"
'

test_expect_success 'trace-cmd sees the same gaps; the ring buffer counted at least what they say' '
	pages=$(trace-cmd report l.dat 2>/dev/null | sed -n "s/.*\[\([0-9]*\) EVENTS DROPPED\].*/\1/p" | awk "{ s += \$1 } END { print s + 0 }") &&
	ours=$(awk "\$1 == \"all\" { print \$5 }" info) &&
	echo "ring $ours, page headers $pages" && [ "$pages" -gt 0 ] && [ "$ours" -ge "$pages" ]
'

test_expect_success 'one loss figure: record, info, check, report (text, JSON, page) say the same number' '
	rec=$(sed -n "s/.* on [0-9]* CPUs*, \([0-9,]*\) lost$/\1/p" err | tr -d ,) &&
	info=$(awk "\$1 == \"all\" { print \$5 }" info) &&
	$KMT check l.dat > check.out || true &&
	chk=$(sed -n "s/.* \([0-9]*\) events were lost, in .*/\1/p" check.out | awk "{ s += \$1 } END { print s + 0 }") &&
	txt=$($KMT report --sections summary l.dat | sed -n "s/^  events lost  *\([0-9,]*\).*/\1/p" | tr -d ,) &&
	$KMT report --json l.dat > l.json && js=$(jq .summary.lost_events l.json) &&
	$KMT report --html -o l.html l.dat && grep -q "\"lost_events\":$js," l.html &&
	echo "record $rec info $info check $chk text $txt json $js" &&
	[ -n "$rec" ] && [ "$rec" = "$info" ] && [ "$info" = "$chk" ] && [ "$chk" = "$txt" ] && [ "$txt" = "$js" ] &&
	[ "$(jq .summary.lost_by_ring l.json)" = true ] && [ "$(jq .summary.lost_gaps l.json)" -gt 0 ]
'

test_expect_success 'every allocation is accounted in the summary too: allocs = frees + live + uncertain + unseen' '
	jq -e ".summary | .allocs == .frees + .live_objects + .uncertain_allocs + .unseen_frees" l.json &&
	[ "$(jq .summary.uncertain_allocs l.json)" = "$(jq "[.callsites[].uncertain] | add" l.json)" ] &&
	[ "$(jq .summary.unseen_frees l.json)" = "$(jq "[.callsites[].unseen_frees] | add" l.json)" ]
'

test_expect_success 'at default settings the same workload loses nothing' '
	$KMT record -o ok.dat -- hackbench -g 2 -l 300 > /dev/null 2> err; cat err &&
	grep -q " 0 lost$" err && ! grep -q LOST err
'

tracefs_check
test_done
