#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace diff: two ground-truth recordings with known counts give exact
# deltas; a file against itself gives all-zero deltas; a recording against
# a trace-cmd file works; --per-second, --match, CSV, -o; losses marked as
# lower bounds; bad input is one clear line and a non-zero exit.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
INST=kmt-test-diff-$$
trap 'rmdir $T/instances/$INST 2>/dev/null; rm -f "$F"; cleanup_work' EXIT
G1=50 X1=5 G2=80 X2=9 L2=2

test_expect_success 'record the ground truth twice, with known differences' '
	$KMT record -q -o a.dat -- $WL/kmt-gt -g $G1 -x $X1 $F > /dev/null &&
	rm -f $F && touch $F &&
	$KMT record -q -o b.dat -- $WL/kmt-gt -g $G2 -x $X2 -l $L2 $F > /dev/null &&
	$KMT diff --json -n 0 --comm kmt-gt a.dat b.dat > ab.json
'

# A field of the call sites of a function, summed: side (old, new, delta).
fn() { jq "[.callsites[] | select(.function == \"$1\") | .$2.$3] | add // 0" ${4:-ab.json}; }
want() { v=$(fn "$@"); echo "$1.$2.$3 = $v (want $5)"; [ "$v" = "$5" ]; }

test_expect_success 'the same kernel: call sites matched by function+offset' '
	[ "$(jq -r .match ab.json)" = function+offset ] &&
	jq -r .match_reason ab.json | has "the same kernel build"
'

test_expect_success 'do_getxattr: old, new and delta exact' '
	want do_getxattr old allocs "" $G1 && want do_getxattr new allocs "" $((G2 + L2)) &&
	want do_getxattr delta allocs "" $((G2 + L2 - G1)) &&
	want do_getxattr delta bytes_req "" $((G2 * 1337 + L2 * 20000 - G1 * 1337)) &&
	want do_getxattr delta bytes_alloc "" $((G2 * 2048 + L2 * 32768 - G1 * 2048)) &&
	want do_getxattr delta frees "" $((G2 + L2 - G1)) &&
	want do_getxattr delta live_objects "" 0
'

test_expect_success 'setxattr: copies freed, xattrs kept live: deltas of live objects and bytes' '
	want vmemdup_user delta allocs "" $((X2 - X1)) && want vmemdup_user delta live_objects "" 0 &&
	want simple_xattr_alloc delta allocs "" $((X2 - X1)) &&
	want simple_xattr_alloc delta live_objects "" $((X2 - X1)) &&
	want simple_xattr_alloc delta live_bytes "" $(((X2 - X1) * 2048)) &&
	want simple_xattr_alloc delta waste "" $(((X2 - X1) * (2048 - 1540)))
'

test_expect_success 'percent change, sorting by the bytes delta, caches and pages' '
	p=$(jq "[.callsites[] | select(.function == \"vmemdup_user\")][0].pct.allocs" ab.json) &&
	echo "pct $p" && awk -v p=$p "BEGIN { exit !(p == 100 * ($X2 - $X1) / $X1) }" &&
	jq "[.callsites[] | (.delta.bytes_alloc | fabs)]" ab.json > d && jq -e ". == (sort | reverse)" d > /dev/null &&
	k=$(jq "[.caches[] | select(.name == \"kmalloc-large\")][0] | [.only_in, .new.allocs]" -c ab.json) &&
	echo "$k" && [ "$k" = "[\"new\",$L2]" ] &&
	o=$(jq -c "[.pages[] | select(.order == 3)][0] | [.delta.allocs, .delta.pages]" ab.json) &&
	echo "$o" && [ "$o" = "[$L2,$((L2 * 8))]" ]
'

test_expect_success 'TOTAL first: the sums of the call sites, old, new and delta' '
	for s in old new delta; do
		t=$(jq ".total.$s.allocs" ab.json) &&
		c=$(jq "[.callsites[] | .$s.allocs] | add" ab.json) && echo "$s $t $c" && [ "$t" = "$c" ] || exit 1
	done &&
	[ "$(jq .total.delta.allocs ab.json)" -gt 0 ] && [ "$(jq .differs ab.json)" = true ] &&
	$KMT diff --comm kmt-gt a.dat b.dat > t.txt &&
	sed -n "/^TOTAL/,/^\$/p" t.txt > total && cat total &&
	grep -q "^  slab objects allocated  *$(jq .total.old.allocs ab.json) .* +$(jq .total.delta.allocs ab.json) " total &&
	grep -q "^  pages allocated " total && grep -q "^  slab bytes live at the end " total &&
	[ "$(grep -n "^TOTAL" t.txt | cut -d: -f1)" -lt "$(grep -n "^CALL SITES" t.txt | cut -d: -f1)" ]
'

test_expect_success '--match function: the same per-function numbers, keyed by name' '
	$KMT diff --json -n 0 --comm kmt-gt --match function a.dat b.dat > fn.json &&
	[ "$(jq -r .match fn.json)" = function ] &&
	[ "$(jq "[.callsites[] | select(.function == \"do_getxattr\")] | length" fn.json)" = 1 ] &&
	[ "$(fn do_getxattr delta bytes_alloc fn.json)" = "$(fn do_getxattr delta bytes_alloc)" ]
'

test_expect_success 'a file against itself: every delta 0, every row in both' '
	$KMT diff --json -n 0 b.dat b.dat > self.json &&
	[ "$(jq "[.callsites[], .caches[], .processes[], .pages[] | .delta[] | select(. != 0)] | length" self.json)" = 0 ] &&
	[ "$(jq "[.callsites[], .caches[], .processes[], .pages[] | select(.only_in != null)] | length" self.json)" = 0 ] &&
	[ "$(jq "[.callsites[]] | length" self.json)" -gt 10 ] && [ "$(jq .differs self.json)" = false ] &&
	$KMT diff b.dat b.dat > self.txt && cat self.txt && [ $(wc -l < self.txt) = 1 ] &&
	grep -qx "b.dat and b.dat do not differ: every call site, cache, process and page order has the same numbers" self.txt
'

test_expect_success '--per-second: each side divided by its own span' '
	$KMT diff --json -n 0 --comm kmt-gt --per-second a.dat b.dat > ps.json &&
	span=$(jq .old.span_ns ps.json) &&
	got=$(fn do_getxattr old allocs ps.json) &&
	awk -v g=$got -v s=$span "BEGIN { w = $G1 / (s / 1e9); d = g - w; if (d < 0) d = -d;
		print g, w; exit !(d <= 0.001 * w + 0.002) }"
'

# What is live at the end is a level, not a count over the span.
test_expect_success '--per-second: live bytes and objects are left as they are' '
	$KMT diff --json -n 0 --per-second a.dat b.dat > ps2.json && $KMT diff --json -n 0 a.dat b.dat > pl.json &&
	for k in live_bytes live_objects; do
		for s in old new; do
			[ "$(jq ".total.$s.$k" ps2.json)" = "$(jq ".total.$s.$k" pl.json)" ] || exit 1
		done
		[ "$(jq "[.callsites[] | .old.$k] | add" ps2.json)" = "$(jq "[.callsites[] | .old.$k] | add" pl.json)" ] || exit 1
	done &&
	[ "$(jq ".total.old.allocs" ps2.json)" != "$(jq ".total.old.allocs" pl.json)" ]
'

test_expect_success 'text and CSV: the same rows' '
	$KMT diff -n 0 --comm kmt-gt a.dat b.dat > ab.txt &&
	grep -q "call sites matched by function+offset" ab.txt &&
	grep -E "^  do_getxattr\+0x[0-9a-f]+ " ab.txt &&
	$KMT diff -n 0 --comm kmt-gt --csv callsites a.dat b.dat > ab.csv &&
	head -1 ab.csv | has "^callsite,function,only_in,bytes_alloc_old,bytes_alloc_new,bytes_alloc_delta,bytes_alloc_pct,allocs_old," &&
	[ $(($(wc -l < ab.csv) - 1)) = "$(jq ".callsites | length" ab.json)" ] &&
	$KMT diff -o out.txt a.dat b.dat && [ -s out.txt ] && ! ls out.txt.tmp* 2> /dev/null
'

test_expect_success 'a lossy file: its numbers are marked as lower bounds' '
	$SYNTH full synth.dat &&
	$KMT diff synth.dat b.dat > lb.txt &&
	grep -q "its numbers are lower bounds (old\* in the tables): it lost events" lb.txt &&
	[ $(grep -c "lower bounds" lb.txt) = 1 ] && grep -q "^  *old\*  *new  *delta  *change$" lb.txt &&
	! grep -q "[0-9]\*" lb.txt &&
	$KMT diff --json synth.dat b.dat > lb.json &&
	[ "$(jq .old.lower_bound lb.json)" = true ] && [ "$(jq .new.lower_bound lb.json)" = false ] &&
	[ "$(jq -r .match lb.json)" = function ]
'

test_expect_success 'a recording against a file trace-cmd extracted' '
	tc_extract_gt $INST tc.dat -g 31 -x 4 &&
	$KMT diff --json -n 0 --comm kmt-gt a.dat tc.dat > tc.json &&
	want do_getxattr delta allocs tc.json $((31 - G1)) &&
	[ "$(fn do_getxattr new allocs tc.json)" = 31 ] && [ "$(fn do_getxattr old allocs tc.json)" = $G1 ]
'

test_expect_success 'bad input: one clear line and exit 1' '
	rc=0; $KMT diff a.dat nosuch.dat 2> err || rc=$?; cat err; [ $rc = 1 ] && [ $(wc -l < err) = 1 ] &&
	grep -q "nosuch.dat" err &&
	$SYNTH arch arm.dat &&
	rc=0; $KMT diff a.dat arm.dat 2> err || rc=$?; cat err; [ $rc = 1 ] && [ $(wc -l < err) = 1 ] &&
	grep -q "x86_64.*aarch64" err &&
	head -c 3000 b.dat > cut.dat &&
	rc=0; $KMT diff cut.dat b.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] && [ $(wc -l < err) = 1 ] &&
	grep -q "cut.dat" err && [ ! -s out ] &&
	rc=0; $KMT diff a.dat 2> err || rc=$?; [ $rc = 2 ] && grep -q "give two trace files" err &&
	rc=0; $KMT diff --csv nosuch a.dat b.dat 2> err || rc=$?; [ $rc = 2 ] && grep -q "no table" err
'

tracefs_check
test_done
