#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace report's options on a real recording: -p/--comm filter every
# count and say when nothing matched; -n and -s apply to every table in
# every format; where allocations went (allocs = frees + live + uncertain +
# unseen frees); exact median ages; one time base; the --filter wording;
# the event list's columns.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=40 X=7 R=2 L=3

test_expect_success 'record the ground truth system-wide, and a busier trace' '
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g $G -x $X -r $R -l $L $F > out &&
	sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out > pid && [ -s pid ] &&
	$KMT dump gt.dat > dump &&
	$KMT record -q -o hb.dat -- hackbench -g 1 -l 50 > /dev/null
'

# Raw events of the workload, by kind, as our dump shows them.
raw() { awk -v p="-$(cat pid)\$" -v k="$1" "\$3 ~ p && \$4 == k" dump | wc -l; }
# Page frees that concern the workload: of pages it allocated, or by it.
# A page a batch frees is traced by mm_page_free and mm_page_free_batched: one free.
page_frees() {
	awk -v p="-$(cat pid)\$" "\$4 == \"mm_page_alloc\" && \$3 ~ p { live[\$5] = 1 }
		\$4 == \"mm_page_free\" { if (\$3 ~ p || (\$5 in live)) n++; delete live[\$5] }
		END { print n + 0 }" dump
}

test_expect_success '-p PID: every count is that task'"'"'s, page and per-CPU events too' '
	$KMT report --json -p $(cat pid) gt.dat > p.json &&
	jq -c ".summary | {events, events_by_kind, page_allocs, page_frees, percpu_allocs, percpu_frees, filtered, filter_matched}" p.json &&
	[ "$(jq .summary.events_by_kind.kmalloc p.json)" -eq $(raw kmalloc) ] &&
	[ "$(jq .summary.events_by_kind.kmem_cache_alloc p.json)" -eq $(raw kmem_cache_alloc) ] &&
	[ "$(jq .summary.page_allocs p.json)" -eq $(raw mm_page_alloc) ] &&
	[ "$(jq "[.summary.events_by_kind[]] | add" p.json)" -eq "$(jq .summary.events p.json)" ] &&
	[ "$(jq .summary.filter_matched p.json)" = true ] &&
	$KMT report --json gt.dat > all.json &&
	[ "$(jq .summary.page_frees p.json)" -eq $(page_frees) ] &&
	$KMT report --json --comm kmt-gt gt.dat > c.json &&
	[ "$(jq ".summary.allocs" c.json)" -gt 0 ] &&
	[ "$(jq ".summary.allocs" c.json)" -le "$(jq ".summary.allocs" p.json)" ] &&
	[ "$(jq "[.summary.events_by_kind[]] | add" c.json)" -eq "$(jq .summary.events c.json)" ]
'

test_expect_success '-p of a task not in the trace: all zero, and it says so' '
	$KMT report --json -p 999999 gt.dat > none.json 2> err && cat err &&
	grep -q "no task with pid 999999 is in the trace" err &&
	[ "$(jq -c ".summary | [.events, .allocs, .page_frees, .percpu_allocs, .percpu_frees, .filter_matched]" none.json)" = "[0,0,0,0,0,false]" ] &&
	$KMT report --comm no-such-comm gt.dat > /dev/null 2> err && grep -q "no task named .no-such-comm." err
'

test_expect_success '-n cuts every table in JSON and CSV too (all rows without it)' '
	[ "$(jq ".callsites | length" all.json)" -gt 20 ] &&
	[ "$($KMT report --json -n 2 gt.dat | jq "[.callsites, .caches, .processes] | map(length)" -c)" = \
	  "$(jq "[.callsites, .caches, .processes] | map([length, 2] | min)" -c all.json)" ] &&
	[ $($KMT report --csv caches -n 3 gt.dat | wc -l) -eq 4 ]
'

# Column @2 (by header name) of CSV @1, rows in order.
csvcol() { awk -F, -v c="$2" "NR == 1 { for (i = 1; i <= NF; i++) if (\$i == c) k = i; next } { print \$k }" "$1"; }
sorted_desc() { sort -nr "$1" | cmp -s - "$1"; }

test_expect_success '-s sorts every table that has the key, in every format' '
	$KMT report --csv caches gt.dat > caches.csv && csvcol caches.csv bytes_alloc > k && sorted_desc k &&
	$KMT report --csv caches -s allocs gt.dat > caches.csv && csvcol caches.csv allocs > k && sorted_desc k &&
	$KMT report --csv processes -s pages gt.dat > procs.csv && csvcol procs.csv pages > k && sorted_desc k &&
	$KMT report --json -s pages gt.dat | jq ".processes[].pages" > k && sorted_desc k &&
	$KMT report -s pages --sections processes -n 1 gt.dat > t && cat t &&
	[ "$(awk "/^  comm  *pid/ { getline; print \$2; exit }" t)" = "$(head -n 1 k | xargs -I{} sh -c "jq -r \".processes[] | select(.pages == {}) | .pid\" all.json" | sed -n 1p)" ] &&
	rc=0; $KMT report -s nosuch gt.dat 2> err || rc=$?; [ $rc -eq 2 ] && grep -q "keys: .*pages" err
'

test_expect_success 'every allocation is accounted: allocs = frees + live + uncertain + unseen frees' '
	for f in gt.dat hb.dat; do
		$KMT report --json $f | jq -r ".callsites[] | select(.allocs > 0) |
			select(.allocs != .frees + .live_objects + .uncertain + .unseen_frees) | .callsite" > bad &&
		[ ! -s bad ] || { echo "$f:"; cat bad; exit 1; }
	done &&
	$KMT report --json hb.dat | jq "[.callsites[].unseen_frees] | add" > n && cat n
'

test_expect_success 'outstanding median age is exact: the middle of the live objects'"'"' ages' '
	site=$(jq -r ".outstanding[] | select(.function == \"simple_xattr_alloc\") | .callsite" all.json) &&
	[ "$(jq ".outstanding[] | select(.function == \"simple_xattr_alloc\") | .objects" all.json)" -eq $((X - R)) ] &&
	end=$(jq .summary.last_ts_ns all.json) &&
	$KMT kmap --live gt.dat | awk -F, -v s="$site" -v e=$end "\$1 == s { print e - \$5 }" | sort -n > ages &&
	cat ages && [ $(wc -l < ages) -eq $((X - R)) ] &&
	[ "$(sed -n "$(( (X - R + 1) / 2 ))p" ages)" = "$(jq ".outstanding[] | select(.function == \"simple_xattr_alloc\") | .age_median_ns" all.json)" ]
'

test_expect_success 'one time base: the trace'"'"'s first event, its own time stated once' '
	[ "$(jq .kmemtrace_report all.json)" = 3 ] &&
	[ "$(jq .summary.first_ts_ns all.json)" = 0 ] && [ "$(jq .summary.start_ts_ns all.json)" -gt 0 ] &&
	[ "$(jq .summary.last_ts_ns all.json)" = "$(jq .summary.span_ns all.json)" ] &&
	head -n 2 dump | sed -n 1p | has "^# gt.dat: times are seconds from the trace.s first event, at [0-9.]* s of the local clock$" &&
	sed -n 2p dump | has "^ *0\.000000 " &&
	$KMT report --sections summary gt.dat > sum.txt &&
	grep -q "^  trace span  *[0-9.]* [mu]*s, from 0.000000 to [0-9.]* s$" sum.txt &&
	grep -q "^  trace start  *[0-9.]* s of the local clock (times count from it)$" sum.txt &&
	$KMT check gt.dat | sed -n 1p | has "^# times count from the trace.s first event" &&
	$KMT dump --time 0,0.000001 gt.dat | tail -n +2 | awk "{ if (\$1 > 0.000001) exit 1 }"
'

test_expect_success 'a --filter recording: frees of objects it left out are not called pre-existing only' '
	$KMT record -q --filter "bytes_req > 1000" -o f.dat -- $WL/kmt-gt -g 5 $F > /dev/null &&
	$KMT report --sections summary,outstanding f.dat > t && cat t &&
	tr -s "\n " "  " < t | has "allocated before the trace or excluded by the recording.s filter" &&
	! grep -q "; *$" t
'

test_expect_success 'a --filter recording: one line names the events it could not filter; no cache row of zeros' '
	$KMT record --filter "bytes_req > 1000" -o f2.dat -- $WL/kmt-gt -g 5 $F > /dev/null 2> rec.err &&
	cat rec.err && [ $(grep -c "filter not applied" rec.err) = 1 ] &&
	grep -q "filter not applied to .*kmem:kfree.*kmem:mm_page_alloc" rec.err &&
	$KMT report --json -n 0 f2.dat > f2.json &&
	jq -c ".caches[] | select(.allocs == 0 and .frees == 0 and .live_objects == 0 and .unseen_frees == 0 and .untraced == 0)" \
		f2.json > zeros && [ ! -s zeros ] && [ "$(jq ".caches | length" f2.json)" -gt 0 ]
'

test_expect_success 'what was not recorded is not zero: -e kmem:kmalloc,kmem:kfree has no pages or vmalloc' '
	$KMT record -q -e kmem:kmalloc,kmem:kfree -o km.dat -- $WL/kmt-gt -g $G $F > /dev/null &&
	$KMT report km.dat > km.txt && cat km.txt | sed -n 1,30p &&
	tr -s "\n " "  " < km.txt > km.flat &&
	grep -q " not recorded .*kmem_cache_alloc .*mm_page_alloc" km.flat &&
	grep -q "sections left out: pages vmalloc" km.flat &&
	! grep -q "^  pages  " km.txt && ! grep -q "^PAGES" km.txt && ! grep -q "^VMALLOC" km.txt &&
	grep -q "^CALL SITES" km.txt &&
	$KMT report --json km.dat > km.json &&
	[ "$(jq ".pages" km.json)" = null ] && [ "$(jq ".vmalloc" km.json)" = null ] &&
	jq -r ".summary.not_recorded[]" km.json > nr && grep -qx mm_page_alloc nr && grep -qx kmem_cache_free nr &&
	! grep -qx kmalloc nr &&
	[ "$(jq "[.callsites[] | select(.function == \"do_getxattr\") | .allocs] | add" km.json)" = $G ] &&
	{ $KMT report --csv pages km.dat > /dev/null 2> csv.err; [ $? = 1 ]; } &&
	grep -q "pages: its events were not recorded" csv.err &&
	$KMT diff gt.dat km.dat > kd.txt && grep -q "^PAGES (by order): not compared, the new file has no events for it" kd.txt &&
	$KMT diff --json gt.dat km.dat | jq -e ".pages == null and (.caches | length > 0)" > /dev/null
'

test_expect_success 'what was not recorded is not zero: -e vmalloc has no slab sections' '
	$KMT record -q -e vmalloc -o vm.dat -- $WL/kmt-gt -g 2 $F > /dev/null &&
	$KMT report vm.dat > vm.txt &&
	tr -s "\n " "  " < vm.txt | has "sections left out: callsites caches processes pages lifetimes outstanding misuse" &&
	! grep -q "^  slab allocations" vm.txt && ! grep -q "^CALL SITES\|^CACHES\|^MISUSE" vm.txt &&
	! grep -q "partial recording" vm.txt && grep -q "^VMALLOC" vm.txt &&
	$KMT report --json vm.dat | jq -e ".callsites == null and .caches == null and .misuse == null and .vmalloc != null" > /dev/null &&
	$KMT export -f sqlite -o vm.db vm.dat &&
	if command -v sqlite3 > /dev/null; then
		[ "$(sqlite3 vm.db "SELECT count(*) FROM callsites")" = 0 ] &&
		sqlite3 vm.db "SELECT value FROM meta WHERE key = '"'"'not_recorded'"'"'" | has "kmalloc kfree"
	fi
'

test_expect_success 'what the kernel allocates or frees untraced is one line per cache, never a warning' '
	$KMT record -q -o fork.dat -- sh -c "for i in \$(seq 100); do /bin/true; done" &&
	$KMT report --json -n 0 fork.dat > fork.json &&
	[ "$(jq "[.misuse[] | select(.severity == \"warning\" or .kind == \"alloc_over_live\" or .kind == \"untraced_alloc\")] | length" fork.json)" = 0 ] &&
	jq -e "[.untraced[] | select(.count != .alloc_over_live + .untraced_alloc + .reused or (.why | length) < 10)] | length == 0" fork.json &&
	$KMT report --sections misuse -n 0 fork.dat > fork.txt && cat fork.txt &&
	grep -q "^MISUSE ([0-9,]* errors*, [0-9,]* info)" fork.txt && ! grep -q "warning" fork.txt &&
	n=$(jq ".untraced | length" fork.json) &&
	[ "$(sed -n "/^  UNTRACED/,\$p" fork.txt | tail -n +5 | wc -l)" = "$n" ] &&
	$KMT check fork.dat > check.out; cat check.out | tail -n 3 &&
	tail -n 1 check.out | has ": 0 errors, 0 warnings$" &&
	[ "$(grep -c "^info .* allocated or freed without an event" check.out)" = "$n" ]
'

test_expect_success 'a recording'"'"'s own filter (-F, --filter) never yields a warning in report or check' '
	$KMT record -q -F -o ff.dat -- sh -c "for i in \$(seq 100); do /bin/true; done; cat /etc/passwd > /dev/null" &&
	$KMT record -q --filter "bytes_req > 64" -o fb.dat -- sh -c "for i in \$(seq 50); do /bin/true; done" &&
	for f in ff.dat fb.dat; do
		$KMT check $f | tail -n 1 | grep ": 0 errors, 0 warnings$" &&
		$KMT report --json $f | jq -e "[.misuse[] | select(.severity != \"info\")] | length == 0" > /dev/null || return 1
	done
'

test_expect_success 'record --list: one column for every event name, however long' '
	$KMT record --list | grep " id [0-9]" | awk "{ print index(\$0, \" id \") }" | sort -u > cols &&
	cat cols && [ $(wc -l < cols) -eq 1 ]
'

tracefs_check
test_done
