#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace export: the ground truth's exact numbers through each format's
# own reader — go tool pprof, protoc --decode against the published
# messages (proto/), sqlite3, a sum of folded lines — on our recordings and
# on a file trace-cmd extracted; outputs complete or absent; bad input; a
# damaged file exported from what can be read, and said so.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
INST=kmt-test-export-$$
trap 'rmdir $T/instances/$INST 2>/dev/null; rm -f "$F"; cleanup_work' EXIT
G=90 X=7 R=3 L=2

test_expect_success 'record the ground truth with stacks, and without' '
	$KMT record -q --stack -o st.dat -- $WL/kmt-gt -g $G -x $X -r $R -l $L $F > /dev/null &&
	rm -f $F && touch $F &&
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g $G -x $X -r $R -l $L $F > /dev/null &&
	$KMT report --json --comm kmt-gt st.dat > st.json && $KMT report --json --comm kmt-gt gt.dat > gt.json &&
	$KMT report --json st.dat > sta.json
'

# report's numbers for a function (summed over its call sites): field.
rep() { jq "[.callsites[] | select(.function == \"$2\") | .$3] | add // 0" $1; }

# --- folded ---
test_expect_success 'folded: the lines add up to the report, per value and per function' '
	$KMT export -f folded --comm kmt-gt -o st.folded st.dat &&
	$KMT export -f folded --comm kmt-gt --value objects -o sto.folded st.dat &&
	$KMT export -f folded --comm kmt-gt --value live-bytes -o - st.dat > stl.folded &&
	echo "report: allocs, bytes, live bytes, lost: $(jq -c "[.summary.allocs, .summary.bytes_alloc, .summary.live_bytes, .summary.lost_events]" st.json)" &&
	echo "folded: bytes, objects, live bytes: $(awk "{ s += \$NF } END { print s }" st.folded) $(awk "{ s += \$NF } END { print s }" sto.folded) $(awk "{ s += \$NF } END { print s + 0 }" stl.folded)" &&
	[ "$(awk "{ s += \$NF } END { print s }" st.folded)" = "$(jq .summary.bytes_alloc st.json)" ] &&
	[ "$(awk "{ s += \$NF } END { print s }" sto.folded)" = "$(jq .summary.allocs st.json)" ] &&
	[ "$(awk "{ s += \$NF } END { print s + 0 }" stl.folded)" = "$(jq .summary.live_bytes st.json)" ] &&
	[ "$(awk "\$1 ~ /;do_getxattr\\+0x[0-9a-f]+\$/ { s += \$NF } END { print s }" st.folded)" = "$(rep st.json do_getxattr bytes_alloc)" ] &&
	grep -q "^entry_SYSCALL_64[^ ]*;.*getxattr.*;do_getxattr+0x[0-9a-f]* [0-9]*$" st.folded
'

test_expect_success 'folded without stacks: call site;cache;comm' '
	$KMT export -f folded --comm kmt-gt -o gt.folded gt.dat &&
	grep -q "^do_getxattr+0x[0-9a-f]*;kmalloc-2k;kmt-gt $((G * 2048))$" gt.folded &&
	[ "$(awk "{ s += \$NF } END { print s }" gt.folded)" = "$(jq .summary.bytes_alloc gt.json)" ]
'

# --- pprof ---
test_expect_success 'pprof: decoded against proto/profile.proto, the eight sample types, exact totals' '
	command -v protoc > /dev/null || { echo "protoc missing (make deps)"; exit 1; }
	$KMT export -f pprof --comm kmt-gt -o st.pb.gz st.dat &&
	gzip -dc st.pb.gz | protoc --decode=perftools.profiles.Profile -I $ROOT/proto $ROOT/proto/profile.proto > st.pb.txt &&
	grep -q "string_table: \"alloc_space\"" st.pb.txt && grep -q "string_table: \"inuse_objects\"" st.pb.txt &&
	grep -q "string_table: \"page_alloc_space\"" st.pb.txt && grep -q "string_table: \"page_inuse_objects\"" st.pb.txt &&
	grep -q "string_table: \"\\[kernel.kallsyms\\]\"" st.pb.txt &&
	[ $(grep -c "^sample_type {" st.pb.txt) = 8 ]
'

# The page allocator's memory, where most of a process's kernel memory often
# is, beside the slab's: the same totals as the report, by the function
# that asked where stacks say it.
test_expect_success 'pprof and folded: page allocations, the report'"'"'s totals' '
	command -v go > /dev/null || { echo "go missing (make deps)"; exit 1; }
	ps=$(getconf PAGESIZE) && pages=$(jq .summary.pages_allocated st.json) && [ "$pages" -gt 0 ] &&
	go tool pprof -top -unit=B -sample_index=page_alloc_space st.pb.gz 2>/dev/null | grep "Total samples" > ptotal &&
	cat ptotal && grep -q "Total samples = $((pages * ps))B" ptotal &&
	$KMT export -f folded --value pages --comm kmt-gt -o - st.dat > pages.folded &&
	[ "$(awk "{ s += \$NF } END { print s }" pages.folded)" = "$pages" ] &&
	! grep -v "^page allocations;" pages.folded &&
	$KMT export -f folded --value page-bytes --comm kmt-gt -o - st.dat | awk "{ s += \$NF } END { exit s != $((pages * ps)) }" &&
	rc=0; $KMT export -f folded --value nonsense st.dat 2> err || rc=$?; [ $rc = 2 ] &&
	grep -q "bytes, objects, live-bytes, page-bytes, pages" err
'

pp() {	# file sample_index function -> pprof flat value of the function, as an integer
	local unit=
	case $2 in *_space) unit=-unit=B;; esac
	go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 $unit -sample_index=$2 "$1" 2>/dev/null |
		awk -v f="$3" "\$NF == f { v = \$1; sub(/B\$/, \"\", v); print v + 0; found = 1 } END { if (!found) print 0 }"
}

test_expect_success 'pprof: go tool pprof shows exactly the report (alloc and inuse, objects and space)' '
	command -v go > /dev/null || { echo "go missing (make deps)"; exit 1; }
	v=$(pp st.pb.gz alloc_space do_getxattr); echo "alloc_space do_getxattr $v"; [ "$v" = "$(rep st.json do_getxattr bytes_alloc)" ] &&
	v=$(pp st.pb.gz alloc_objects do_getxattr); echo "alloc_objects $v"; [ "$v" = $((G + L)) ] &&
	v=$(pp st.pb.gz inuse_space simple_xattr_alloc); echo "inuse_space $v"; [ "$v" = $(((X - R) * 2048)) ] &&
	v=$(pp st.pb.gz inuse_objects simple_xattr_alloc); echo "inuse_objects $v"; [ "$v" = $((X - R)) ] &&
	go tool pprof -top -unit=B -sample_index=alloc_space st.pb.gz 2>/dev/null | grep "Total samples" > total &&
	cat total && grep -q "Total samples = $(jq .summary.bytes_alloc st.json)B" total
'

test_expect_success 'pprof: stacks leaf first (the call site, then its callers), labels cache and comm' '
	go tool pprof -traces -sample_index=alloc_objects st.pb.gz 2>/dev/null > traces &&
	awk "/^ +[1-9][0-9]* +do_getxattr\$/ { getline; print; exit }" traces | has "^ *[a-z_.]*getxattr" &&
	grep -Eq "^ +cache: +kmalloc-2k\$" traces && grep -Eq "^ +comm: +kmt-gt\$" traces
'

# --- perfetto ---
test_expect_success 'perfetto: decoded against proto/perfetto_trace.proto, every event counted' '
	$KMT export -f perfetto -o st.pftrace st.dat &&
	protoc --decode=perfetto.protos.Trace -I $ROOT/proto $ROOT/proto/perfetto_trace.proto < st.pftrace > st.pf.txt &&
	for k in kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free sched_process_fork; do
		want=$(jq ".summary.events_by_kind.$k // 0" sta.json); got=$(grep -c "^      $k {" st.pf.txt)
		echo "$k $got (want $want)"; [ "$got" = "$want" ] || exit 1
	done &&
	[ $(grep -c "event_name: \"percpu_alloc_percpu\"" st.pf.txt) = "$(jq ".summary.events_by_kind.percpu_alloc_percpu // 0" sta.json)" ] &&
	grep -q "name: \"live slab bytes\"" st.pf.txt && grep -q "unit: UNIT_SIZE_BYTES" st.pf.txt &&
	grep -q "process_tree" st.pf.txt && grep -q "cmdline: \"kmt-gt\"" st.pf.txt
'

# The track events of a decoded Perfetto trace, their interned ids
# resolved, a line each: name, track, call_site, cache, bytes_alloc (tabs).
pf_events() {
	awk 'function s(v) { sub(/^ *[a-z_]+: "?/, "", v); sub(/"$/, "", v); return v }
		function get(t, i) { return (t SUBSEP i) in T ? T[t, i] : "?" }
		/^  interned_data \{/ { idata = 1 }
		idata && /^    [a-z_]+ \{/ { tab = $1 }
		idata && /^      iid: / { id = $2 }
		idata && /^      (name|str): / { if ((tab, id) in T) dup[tab] = dup[tab] " " id; T[tab, id] = s($0) }
		/^  \}/ { idata = 0; te = 0 }
		/^  track_event \{/ { te = 1; ev = 1; split("", A) }
		te && /^    name_iid: / { nm = $2 }
		te && /^    track_uuid: / { tr = $2 }
		te && /^      name_iid: / { k = $2 }
		te && /^      string_value_iid: / { A[k] = "s" $2 }
		te && /^      (uint|int|pointer|bool)_value: / { A[k] = "v" $2 }
		/^\}/ && ev {	# the packet ends: its interned data (printed after the event) is known
			ev = 0; split("", R)
			for (k in A) {
				v = substr(A[k], 2)
				R[get("debug_annotation_names", k)] = A[k] ~ /^s/ ? get("debug_annotation_string_values", v) : v
			}
			print get("event_names", nm) "\t" tr "\t" R["call_site"] "\t" R["cache"] "\t" R["bytes_alloc"] }
		END { for (t in dup) print "interned twice in " t ":" dup[t] > "/dev/stderr" }' "$@"
}

# The events read by name: Perfetto's ftrace messages have numbers only (a
# call site, no cache), so each memory event is also a track event on its
# task's track, named by event and function, with the call site, cache,
# sizes and gfp flags as interned strings.
test_expect_success 'perfetto: track events by name, their function and cache interned and referred to' '
	pid=$(jq "[.processes[] | select(.comm == \"kmt-gt\")][0].pid" sta.json) && echo "kmt-gt pid $pid" &&
	pf_events st.pf.txt > ev.tsv 2> dup && ! [ -s dup ] &&
	awk -F"\t" "\$1 ~ / do_getxattr\$/ && \$2 == 65536 + $pid" ev.tsv | sort | uniq -c | sort -rn | sed -n 1,10p &&
	n=$(awk -F"\t" "\$1 == \"kmalloc do_getxattr\" && \$2 == 65536 + $pid && \$3 ~ /^do_getxattr\\+0x/ && \$4 == \"kmalloc-2k\" && \$5 == 2048" ev.tsv | wc -l) &&
	echo "kmalloc do_getxattr in kmalloc-2k: $n (want $G)" && [ "$n" = $G ] &&
	n=$(awk -F"\t" "\$1 == \"kmalloc simple_xattr_alloc\" && \$2 == 65536 + $pid && \$4 ~ /^kmalloc-/" ev.tsv | wc -l) &&
	echo "kmalloc simple_xattr_alloc: $n (want $X)" && [ "$n" = $X ] &&
	n=$(awk -F"\t" "\$1 ~ /^kfree / && \$2 == 65536 + $pid && \$4 == \"kmalloc-2k\"" ev.tsv | wc -l) &&
	echo "kfree of kmalloc-2k objects: $n (want $G or more)" && [ "$n" -ge $G ] &&
	[ $(grep -c "^      $(printf "name: \"kmalloc do_getxattr\"")\$" st.pf.txt) = 1 ] &&
	[ $(grep -c "^      str: \"kmalloc-2k\"\$" st.pf.txt) = 1 ] &&
	grep -q "^      str: \"do_getxattr+0x[0-9a-f]*\"\$" st.pf.txt &&
	grep -q "^      str: \"GFP_KERNEL" st.pf.txt &&
	awk "/^  track_descriptor \\{/ { d = 1 } d && /^      tid: $pid\$/ { found = 1 } END { exit !found }" st.pf.txt &&
	awk "/^  trusted_packet_sequence_id: 2000\$/ { s = 1 } s && /^  sequence_flags:/ { print \$2; exit }" st.pf.txt | has -x 3 &&
	[ "$(cut -f1 ev.tsv | grep -c "^kmalloc ")" = "$(jq ".summary.events_by_kind.kmalloc" sta.json)" ]
'

test_expect_success 'perfetto: the live bytes counter ends at the report'"'"'s live bytes' '
	last=$(awk "/track_uuid: 1\$/ { t = 1; next } t && /counter_value:/ { v = \$2; t = 0 } END { print v }" st.pf.txt) &&
	echo "last $last" && [ "$last" = "$(jq ".summary.live_bytes + .summary.uncertain_bytes" sta.json)" ]
'

# --- sqlite ---
test_expect_success 'sqlite: one row per object, the report'"'"'s numbers by SQL' '
	command -v sqlite3 > /dev/null || { echo "sqlite3 missing (make deps)"; exit 1; }
	$KMT export -f sqlite --comm kmt-gt -o st.sqlite st.dat &&
	q() { sqlite3 st.sqlite "$1"; } &&
	echo "sqlite: objects $(q "select count(*) from objects where kind != \"page\" and fate != \"preexisting\""), report allocs $(jq .summary.allocs st.json), do_getxattr $(q "select count(*), sum(bytes_req), sum(bytes_alloc) from objects where alloc_function = \"do_getxattr\" and kind = \"kmalloc\""), lost $(q "select value from meta where key = \"lost_events\"")" &&
	[ "$(q "select count(*) from objects where kind != \"page\" and fate != \"preexisting\"")" = "$(jq .summary.allocs st.json)" ] &&
	[ "$(q "select count(*), sum(bytes_req), sum(bytes_alloc) from objects where alloc_function = \"do_getxattr\" and kind = \"kmalloc\"")" = "$((G + L))|$((G * 1337 + L * 20000))|$((G * 2048 + L * 32768))" ] &&
	[ "$(q "select count(*) from objects where alloc_function = \"simple_xattr_alloc\" and free_time is null and fate = \"live\"")" = $((X - R)) ] &&
	[ "$(q "select count(*) from objects where alloc_function = \"do_getxattr\" and kind = \"kmalloc\" and free_time >= alloc_time and comm = \"kmt-gt\" and stack like \"%getxattr%\"")" = $((G + L)) ] &&
	[ "$(q "select count(*), sum(bytes_alloc) from objects where alloc_function = \"do_getxattr\" and kind = \"page\" and page_order = 3")" = "$L|$((L * 32768))" ] &&
	[ "$(q "select allocs from callsites where function = \"vmemdup_user\"")" = $X ] &&
	[ "$(q "select value from meta where key = \"objects\"")" -ge "$(jq .summary.allocs st.json)" ] &&
	[ "$(q "select value from meta where key = \"lost_events\"")" = 0 ] &&
	q "select count(*) from caches where name = \"kmalloc-2k\"" | has -x 1 &&
	q "PRAGMA integrity_check" | has -x ok
'

# --- --hash-pointers ---
test_expect_success '--hash-pointers: no kernel address left, the hashes report and kmap give, names kept' '
	K="--hash-pointers=some key" &&
	$KMT export -f sqlite --comm kmt-gt "$K" -o h.sqlite st.dat &&
	q() { sqlite3 $1 "$2"; } &&
	[ "$(q h.sqlite "select value from meta where key = \"hashed_pointers\"")" = 1 ] &&
	[ "$(q st.sqlite "select value from meta where key = \"hashed_pointers\"")" = 0 ] &&
	[ "$(q h.sqlite "select count(*) from object_rows")" = "$(q st.sqlite "select count(*) from object_rows")" ] &&
	all="select printf(\"%016x\", ptr) from object_rows union select printf(\"%016x\", address) from sites" &&
	q st.sqlite "$all" | sort -u > raw && q h.sqlite "$all" | sort -u > hashed &&
	[ "$(wc -l < hashed)" = "$(wc -l < raw)" ] && [ -z "$(comm -12 raw hashed)" ] &&
	$KMT kmap "$K" --comm kmt-gt st.dat | grep -v "^#" | cut -d, -f3 | sort -u > kmap.h &&
	q h.sqlite "select printf(\"h:%016x\", ptr) from objects where kind != \"page\" and fate != \"preexisting\"" |
		sort -u > sq.h && wc -l < kmap.h && cmp kmap.h sq.h &&
	$KMT report --json "$K" --comm kmt-gt -n 0 st.dat | jq -r ".callsites[] | \"\(.callsite) \(.address)\"" | sort > rep.h &&
	q h.sqlite "select callsite || \" \" || printf(\"h:%016x\", address) from sites" | sort > sites.h &&
	[ -s rep.h ] && [ -z "$(comm -23 rep.h sites.h)" ] &&
	[ "$(q h.sqlite "select callsite from sites order by 1")" = "$(q st.sqlite "select callsite from sites order by 1")" ] &&
	$KMT export -f perfetto "$K" -o h.pftrace st.dat &&
	protoc --decode=perfetto.protos.Trace -I $ROOT/proto $ROOT/proto/perfetto_trace.proto < h.pftrace > h.pf.txt &&
	for f in ptr call_site page pfn; do
		awk -v f=$f: "\$1 == f { print \$2 }" st.pf.txt | sort -u > raw.$f &&
		awk -v f=$f: "\$1 == f { print \$2 }" h.pf.txt | sort -u > h.$f &&
		echo "perfetto $f: $(wc -l < raw.$f) values, $(wc -l < h.$f) hashed" &&
		[ "$(wc -l < raw.$f)" = "$(wc -l < h.$f)" ] && [ -z "$(comm -12 raw.$f h.$f)" ] || exit 1
	done &&
	[ -s h.ptr ] && [ "$(grep -c "^      kmalloc {" h.pf.txt)" = "$(grep -c "^      kmalloc {" st.pf.txt)" ] &&
	$KMT export -f pprof --comm kmt-gt "$K" -o h.pb.gz st.dat &&
	gzip -dc h.pb.gz | protoc --decode=perftools.profiles.Profile -I $ROOT/proto $ROOT/proto/profile.proto > h.pb.txt &&
	grep -o "address: [0-9]*" st.pb.txt | sort -u > raw.a && grep -o "address: [0-9]*" h.pb.txt | sort -u > h.a &&
	[ -s h.a ] && [ "$(wc -l < h.a)" = "$(wc -l < raw.a)" ] && [ -z "$(comm -12 raw.a h.a)" ] &&
	[ "$(grep string_table h.pb.txt)" = "$(grep string_table st.pb.txt)" ] &&
	[ "$(pp h.pb.gz alloc_objects do_getxattr)" = $((G + L)) ] &&
	$KMT export -f folded --comm kmt-gt "$K" -o h.folded st.dat && cmp h.folded st.folded
'

test_expect_success 'a file trace-cmd extracted: every format, the same counts' '
	tc_extract_gt $INST tc.dat -g 37 &&
	$KMT report --json --comm kmt-gt tc.dat > tc.json &&
	$KMT export -f folded --comm kmt-gt --value objects -o - tc.dat | awk "/^do_getxattr/ { s += \$NF } END { print s }" | has -x 37 &&
	$KMT export -f pprof --comm kmt-gt -o tc.pb.gz tc.dat && [ "$(pp tc.pb.gz alloc_objects do_getxattr)" = 37 ] &&
	$KMT export -f sqlite --comm kmt-gt -o tc.sqlite tc.dat &&
	[ "$(sqlite3 tc.sqlite "select count(*) from objects where alloc_function = \"do_getxattr\" and kind != \"page\"")" = 37 ] &&
	$KMT export -f perfetto -o tc.pftrace tc.dat &&
	protoc --decode=perfetto.protos.Trace -I $ROOT/proto $ROOT/proto/perfetto_trace.proto < tc.pftrace | grep -c "^      kmalloc {" > n &&
	[ "$(cat n)" = "$(jq ".summary.events_by_kind.kmalloc" <($KMT report --json tc.dat))" ]
'

test_expect_success 'outputs: default names, never over a trace, complete or absent' '
	$KMT export -f folded st.dat && [ -s st.folded ] &&
	rc=0; $KMT export -f pprof -o gt.dat st.dat 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	grep -q "is a trace file" err && $KMT info gt.dat > /dev/null &&
	rc=0; $KMT export -f sqlite -o - st.dat 2> err || rc=$?; [ $rc = 1 ] && grep -q "give -o FILE" err &&
	rc=0; $KMT export -f sqlite -o /nonexistent/x.sqlite st.dat 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	[ $(wc -l < err) = 1 ] && ! ls /nonexistent 2> /dev/null &&
	! ls *.tmp* 2> /dev/null
'

# Killed while it writes (kill, a hangup): the temporary file goes with it.
# Each run is caught once its temporary file exists: each format, Perfetto's
# writer thread (-j 3), and convert (the library's writer of trace files).
# (Not SIGINT: a background job's is ignored where the shell has no job
# control.)
test_expect_success 'a signal while writing: no temporary file left, the signal'"'"'s status' '
	$SYNTH wide long.dat 1500000 &&
	for run in "export:-f:perfetto:-j:2 TERM" "export:-f:perfetto:-j:3 HUP" "export:-f:sqlite:-j:2 HUP" \
		   "export:-f:pprof:-j:4 TERM" "convert TERM"; do
		set -- $run; cmd=$(echo $1 | tr : " "); rm -f sig.out sig.out.tmp-* &&
		if [ "$cmd" = convert ]; then args="long.dat sig.out"; else args="-o sig.out long.dat"; fi &&
		{ $KMT $cmd $args 2> /dev/null & p=$!; } &&
		for i in $(seq 200); do ls sig.out.tmp-* > /dev/null 2>&1 && break; sleep 0.02; done &&
		ls sig.out.tmp-* > /dev/null 2>&1 || { echo "$cmd: no temporary file seen"; kill $p; exit 1; }
		kill -$2 $p; rc=0; wait $p || rc=$?; echo "$cmd: exit $rc" &&
		[ $rc -gt 128 ] && ! ls sig.out.tmp-* 2> /dev/null && [ ! -e sig.out ] || exit 1
	done
'

test_expect_success 'without -o: beside the trace, never in the current directory, and said' '
	mkdir -p rec cwd && cp gt.dat rec/gt.dat && cp gt.dat rec/trace && cd cwd &&
	for f in "folded folded" "pprof pb.gz" "perfetto perfetto-trace" "sqlite sqlite"; do
		set -- $f
		$KMT export -f $1 ../rec/gt.dat 2> ../err && cat ../err &&
		[ "$(cat ../err)" = "kmemtrace export: wrote ../rec/gt.$2" ] && [ -s ../rec/gt.$2 ] &&
		[ "$(stat -c %a ../rec/gt.$2)" = 600 ] || exit 1
	done &&
	$KMT export -f folded $PWD/../rec/trace 2> ../err &&
	[ "$(cat ../err)" = "kmemtrace export: wrote $PWD/../rec/trace.folded" ] &&
	[ -z "$(ls)" ] || { ls; exit 1; }
	$KMT export -f folded -o here.folded ../rec/gt.dat 2> ../err && [ ! -s ../err ] &&
	cmp here.folded ../rec/gt.folded
'

test_expect_success 'bad input: one clear line and exit 1; usage errors exit 2' '
	rc=0; $KMT export -f pprof -o x.pb.gz nosuch.dat 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	[ $(wc -l < err) = 1 ] && grep -q nosuch.dat err && ! ls x.pb.gz* 2> /dev/null &&
	head -c 5000 st.dat > cut.dat &&
	rc=0; $KMT export -f sqlite -o cut.sqlite cut.dat 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	[ $(wc -l < err) = 1 ] && ! ls cut.sqlite* 2> /dev/null &&
	rc=0; $KMT export st.dat 2> err || rc=$?; [ $rc = 2 ] && grep -q "give --format" err &&
	rc=0; $KMT export -f svg st.dat 2> err || rc=$?; [ $rc = 2 ] && grep -q "unknown format" err &&
	rc=0; $KMT export -f pprof --value objects st.dat 2> err || rc=$?; [ $rc = 2 ]
'

test_expect_success 'a damaged trace: exported from every intact chunk, the skip said, exit 1' '
	$SYNTH full s.dat && cp s.dat bad.dat && off=$(chunk_offset s.dat 1 5) && break_chunk bad.dat $off &&
	$KMT export -f folded -o clean.folded s.dat &&
	rc=0; $KMT export -f folded -o bad.folded bad.dat 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	grep -q "warning: bad.dat: CPU 1 data: skipped 1 chunk at bytes $off-" err &&
	tail -n 1 err | has "bad.dat is damaged: the output above leaves out what could not be read" &&
	sum() { awk "{ s += \$NF } END { print s }" "$1"; } &&
	echo "bytes: $(sum bad.folded) of $(sum clean.folded)" &&
	[ "$(sum bad.folded)" -lt "$(sum clean.folded)" ] && [ "$(sum bad.folded)" -gt 0 ] || exit 1
	rc=0; $KMT export -f sqlite -o bad.sqlite bad.dat 2>/dev/null || rc=$?; [ $rc = 1 ] &&
	[ "$(sqlite3 bad.sqlite "SELECT value FROM meta WHERE key = '"'"'damaged_gaps'"'"'")" = 1 ]
'

tracefs_check
test_done
