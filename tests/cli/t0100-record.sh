#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace record on the real kernel: the file, its readers, the options.
. "$(dirname "$0")/lib.sh"
need_tracing
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT

test_expect_success 'record a command: file written, mode 0600, instance gone' '
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g 10 $F > out &&
	grep -q "kmt-gt pid" out &&
	[ "$(stat -c %a gt.dat)" = 600 ] &&
	no_own_instances &&
	[ ! -e gt.dat.spool ]
'

test_expect_success 'the file is trace.dat v7 with zstd, our reader reads it' '
	$KMT info gt.dat > info &&
	grep -q "trace.dat v7" info && grep -q "zstd" info &&
	grep -q "kmem:kmalloc" info && grep -q "sched:sched_process_exec" info
'

test_expect_success 'trace-cmd reads it and finds it valid' '
	command -v trace-cmd > /dev/null || { echo "trace-cmd missing"; exit 1; }
	trace-cmd dump -v gt.dat 2>&1 | has "is a valid trace-cmd file" &&
	trace-cmd report gt.dat > report 2>&1 &&
	grep -q "kmt-gt-.*kmalloc:.*do_getxattr" report
'

test_expect_success 'both readers agree on the number of events' '
	ours=$($KMT info gt.dat | awk "\$1 == \"all\" { print \$2 }" | tr -d ,) &&
	theirs=$(trace-cmd report gt.dat 2>/dev/null | grep -cE "^ +.*\[[0-9]{3}\]") &&
	echo "ours $ours trace-cmd $theirs" && [ "$ours" -eq "$theirs" ] && [ "$ours" -gt 0 ]
'

test_expect_success 'the command exit status is passed on' '
	rc=0; $KMT record -q -o x.dat -- sh -c "exit 7" || rc=$?; [ $rc -eq 7 ] &&
	rc=0; $KMT record -q -o x.dat -- false || rc=$?; [ $rc -eq 1 ]
'

test_expect_success 'a command that cannot run: clear error, exit 127, nothing left' '
	rm -f x.dat; rc=0; $KMT record -q -o x.dat -- /no/such/cmd 2> err || rc=$?;
	cat err; [ $rc -eq 127 ] && grep -q "cannot run ./no/such/cmd." err &&
	[ ! -e x.dat ] && [ ! -e x.dat.spool ] && no_own_instances
'

test_expect_success '-d records for a while without a command' '
	$KMT record -q -d 0.5 -o d.dat && $KMT info d.dat | has "trace.dat v7"
'

test_expect_success '-e chooses events; naming events are added' '
	$KMT record -q -e kmem:kmalloc -o e.dat -- $WL/kmt-gt -g 5 $F > /dev/null &&
	$KMT info e.dat | awk "/^event/ { on = 1; next } on { print \$1 }" | sort > events &&
	cat events &&
	grep -q "^kmem:kmalloc$" events && ! grep -q "kmem:kfree" events &&
	! grep -qv -e "^kmem:kmalloc$" -e "^sched:" -e "^task:" events
'

test_expect_success '-e with a wildcard and a system name' '
	$KMT record -q -e "vmalloc,kmem:kmalloc*" -o w.dat -- true &&
	$KMT info w.dat | has "formats:" &&
	trace-cmd dump --events w.dat 2>/dev/null | has "alloc_vmap_area"
'

test_expect_success 'an event the kernel lacks: one clear line, exit 1, nothing left' '
	rc=0; $KMT record -q -e kmem:no_such_event -o n.dat -- true 2> err || rc=$?;
	[ $rc -eq 1 ] && grep -q "no event .kmem:no_such_event." err &&
	[ ! -e n.dat ] && [ ! -e n.dat.spool ] && no_own_instances
'

test_expect_success '--filter keeps only matching allocations' '
	$KMT record -q --filter "bytes_req > 1300" -e kmem:kmalloc -o f.dat -- $WL/kmt-gt -g 20 $F > /dev/null &&
	$KMT dump f.dat > dump && small=$(awk "/ kmalloc / { for (i = 1; i <= NF; i++) if (\$i ~ /^req=/) { split(\$i, a, \"=\"); if (a[2] <= 1300) n++ } } END { print n + 0 }" dump) &&
	big=$(grep -c "do_getxattr.*req=1337" dump) && echo "small $small big $big" &&
	[ "$small" -eq 0 ] && [ "$big" -eq 20 ]
'

test_expect_success 'a filter no event can take is refused' '
	rc=0; $KMT record -q --filter "nonsense_field > 1" -o f2.dat -- true 2> err || rc=$?;
	[ $rc -eq 1 ] && grep -q "names fields" err && no_own_instances
'

test_expect_success '-p restricts to a process and its children' '
	mkfifo go || exit 1;
	sh -c "read x < go; $WL/kmt-gt -g 7 $F > /dev/null; touch gt.done" & p=$!;
	rc=0; $KMT record -q -p $p -o p.dat -- sh -c "echo > go; for i in \$(seq 600); do [ -e gt.done ] && break; sleep 0.05; done" || rc=$?;
	[ $rc -eq 0 ] || timeout 2 sh -c "echo > go";
	wait $p && [ $rc -eq 0 ] &&
	$KMT dump p.dat > dump && grep -c "do_getxattr+.*req=1337" dump | has -x 7 &&
	! grep -q " sleep-" dump
'

test_expect_success '-F follows only the command and its children' '
	$KMT record -q -F -o ff.dat -- sh -c "$WL/kmt-gt -g 3 $F > /dev/null" &&
	$KMT dump -a ff.dat | awk "!/^#/ { print \$3 }" | sed "s/-[0-9]*$//" | sort -u > comms &&
	cat comms && ! grep -qv -e "^sh$" -e "^kmt-gt$" -e "^kmemtrace$" comms
'

test_expect_success 'a filtered recording says so, and the report draws no wrong conclusion from it' '
	$KMT info ff.dat | has "^recorder: *kmemtrace .* (partial: allocations frees)" &&
	$KMT report --json ff.dat > ff.json &&
	[ "$(jq .summary.partial_allocs ff.json)" = true ] && [ "$(jq .summary.partial_frees ff.json)" = true ] &&
	[ "$(jq "[.misuse[] | select(.kind == \"double_free\")] | length" ff.json)" = 0 ] &&
	$KMT record -q -o full.dat -- true && $KMT info full.dat | grep "^recorder:" | has -v partial &&
	$KMT record -q -e kmem:kmalloc -o nofree.dat -- true &&
	$KMT info nofree.dat | has "(partial: frees)"
'

test_expect_success '--stack names who allocated pages: each large getxattr buffer in do_getxattr' '
	$KMT record -q --stack -e kmem:mm_page_alloc -o ps.dat -- $WL/kmt-gt -g 0 -l 3 $F > /dev/null &&
	$KMT report --json --sections pages ps.dat > ps.json &&
	jq -c ".pages.functions[] | {function, allocs, bytes_alloc}" ps.json &&
	[ "$(jq -c ".pages.functions[] | select(.function == \"do_getxattr\") | [.allocs, .bytes_alloc]" ps.json)" = "[3,98304]" ]
'

test_expect_success '--stack adds kernel stacks to allocations' '
	$KMT record -q --stack -e kmem:kmalloc -o s.dat -- $WL/kmt-gt -g 3 $F > /dev/null &&
	$KMT info s.dat | has "ftrace:kernel_stack" &&
	$KMT dump -a s.dat | grep -A9 "do_getxattr+.*req=1337" | has "=> filename_getxattr" &&
	$KMT dump s.dat > plain && ! grep "=>" plain
'

test_expect_success '--no-compress writes raw pages that trace-cmd reads' '
	$KMT record -q --no-compress -o raw.dat -- $WL/kmt-gt -g 3 $F > /dev/null &&
	$KMT info raw.dat | has "compression none" &&
	trace-cmd report raw.dat 2>/dev/null | has "do_getxattr"
'

test_expect_success '--list shows the memory events and their fields' '
	$KMT record --list > list && grep -q "^\* kmem:kmalloc .*bytes_req" list &&
	grep -q "percpu:percpu_alloc_percpu" list
'

test_expect_success 'KMT_TIMES=1: each step of the recording and its wall time, in order' '
	KMT_TIMES=1 $KMT record -q -o times.dat -- true 2> times &&
	cat times && [ "$(awk "{ print \$4 }" times | tr "\n" " ")" = \
		"prepare mkdir configure metadata sized readers tracing-on cgroups workload drain file teardown exit " ] &&
	! grep -qv "^kmemtrace record: time: [a-z-]* *[0-9]*\.[0-9][0-9][0-9] ms$" times &&
	$KMT record -q -o times.dat -- true 2> quiet && [ ! -s quiet ]
'

test_expect_success 'the recorder excludes its own threads' '
	$KMT record -q -o self.dat -- $WL/kmt-gt -g 1 $F > /dev/null &&
	$KMT dump -a self.dat > all && ! grep "kmemtrace/" all
'

test_expect_success 'another reader names a task by its latest name in time, not in the file'"'"'s order' '
	[ "$(nproc)" -ge 2 ] || { echo "one CPU: nothing to order"; exit 0; }
	$KMT record -q -o cm.dat -- taskset -c 1 sh -c "taskset -c 0 $WL/kmt-gt -g 200 $F" > out &&
	p=$(sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out) && [ -n "$p" ] &&
	trace-cmd report cm.dat 2> /dev/null | awk -v p="$p" "{ n = split(\$1, a, \"-\"); if (a[n] == p) print \$1 }" |
		sort | uniq -c > names && cat names &&
	[ "$(awk "{ print \$2 }" names)" = "kmt-gt-$p" ] && [ "$(awk "{ print \$1 }" names)" -ge 200 ]
'

tracefs_check
# A recording's own --filter is said in JSON (the analysis's -p/--comm is
# summary.filtered), and the frees of what it left out are accounted for.
test_expect_success 'record --filter: JSON says what the recording kept; frees of what it left out are counted apart' '
	rm -f $F.rf && touch $F.rf &&
	$KMT record -q --filter "bytes_req > 4096" -o rf.dat -- $WL/kmt-gt -g 5 -l 3 $F.rf > /dev/null && rm -f $F.rf &&
	$KMT report --json rf.dat > rf.json &&
	[ "$(jq -r .recording_filter rf.json)" = "bytes_req > 4096" ] &&
	[ "$(jq .summary.filtered rf.json)" = false ] && [ "$(jq .summary.partial_allocs rf.json)" = true ] &&
	[ "$(jq ".summary.frees + .summary.preexisting_frees + .summary.unseen_allocs" rf.json)" = "$(jq ".summary.events_by_kind.kfree + .summary.events_by_kind.kmem_cache_free - .summary.null_frees" rf.json)" ] &&
	$KMT report --wide --sections summary rf.dat | tr -s "\n " "  " | has "slab frees [0-9,]* of them; [0-9,]* of objects allocated before the trace or excluded by the recording.s filter; [0-9,]* of addresses freed again, allocated where the recording did not look" &&
	$KMT report --json rf.dat | jq -e ".callsites | all(.allocs == .frees + .live_objects + .uncertain + .unseen_frees)" > /dev/null &&
	{ [ ! -e gt.dat ] || [ "$($KMT report --json gt.dat 2> /dev/null | jq .recording_filter)" = null ]; }
'

test_done
