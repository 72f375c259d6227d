#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace report on real recordings: the ground-truth workload's numbers
# come back exact through --json; a file written by trace-cmd extract (v7
# and, converted, v6) gives the same per-call-site counts as trace-cmd
# report lists; a clean trace shows no misuse error. A damaged file gives
# the report of what can be read, says what it could not, and exits 1.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
INST=kmt-test-extract-$$
trap 'rmdir $T/instances/$INST 2>/dev/null; rm -f "$F"; cleanup_work' EXIT
G=211 X=17 R=5 L=3

test_expect_success 'record the ground-truth workload' '
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g $G -s 1337 -x $X -v 1500 -r $R -l $L $F > /dev/null &&
	$KMT report --json --comm kmt-gt gt.dat > gt.json && jq -e .summary gt.json > /dev/null
'

# Sum a field over the call sites of one function.
site() { jq "[.callsites[] | select(.function == \"$1\") | .$2] | add // 0" gt.json; }
want() { v=$(site $1 $2); echo "$1.$2 = $v (want $3)"; [ "$v" = "$3" ]; }

test_expect_success 'do_getxattr: every getxattr buffer, large ones counted once' '
	want do_getxattr allocs $((G + L)) && want do_getxattr frees $((G + L)) &&
	want do_getxattr bytes_req $((G * 1337 + L * 20000)) &&
	want do_getxattr bytes_alloc $((G * 2048 + L * 32768)) &&
	want do_getxattr live_objects 0 && want __kvmalloc_node_noprof allocs 0 &&
	[ "$(jq .summary.kmalloc_large_merged gt.json)" = $L ]
'

test_expect_success 'vmemdup_user: setxattr copies, all freed' '
	want vmemdup_user allocs $X && want vmemdup_user frees $X &&
	want vmemdup_user bytes_req $((X * 1500)) && want vmemdup_user bytes_alloc $((X * 2048))
'

test_expect_success 'simple_xattr_alloc and simple_xattr_set: kept unless removed' '
	want simple_xattr_alloc allocs $X && want simple_xattr_alloc frees $R &&
	want simple_xattr_alloc live_objects $((X - R)) &&
	want simple_xattr_alloc live_bytes $(((X - R) * 2048)) &&
	want simple_xattr_set allocs $X && want simple_xattr_set live_objects $((X - R)) &&
	want simple_xattr_set live_bytes $(((X - R) * 16))
'

test_expect_success 'outstanding lists the kept xattrs exactly' '
	o=$(jq -c ".outstanding[] | select(.function == \"simple_xattr_alloc\") | [.objects, .bytes_alloc]" gt.json) &&
	echo "$o" && [ "$o" = "[$((X - R)),$(((X - R) * 2048))]" ]
'

test_expect_success 'no misuse error in the workload, and none in the whole trace' '
	[ "$(jq "[.misuse[] | select(.severity == \"error\")] | length" gt.json)" = 0 ] &&
	$KMT report --json gt.dat > all.json &&
	jq -c ".misuse[] | select(.severity == \"error\")" all.json &&
	[ "$(jq "[.misuse[] | select(.severity == \"error\")] | length" all.json)" = 0 ]
'

test_expect_success 'the required JSON fields are there' '
	jq -e ".summary | .events, .lost_events, .bytes_req, .bytes_alloc" all.json > /dev/null &&
	jq -e ".callsites[0] | .function, .callsite, .allocs, .frees, .bytes_req, .bytes_alloc, .cross_cpu_frees, .live_objects, .live_bytes" all.json > /dev/null &&
	jq -e ".outstanding[0] | .function, .objects, .bytes_alloc" all.json > /dev/null &&
	jq -e ".caches[0] | .name, .allocs, .bytes_alloc" all.json > /dev/null &&
	jq -e "[.caches[] | select(.name == \"kmalloc-2k\")] | length == 1" all.json > /dev/null
'

test_expect_success 'text report: sections, --csv, --raw-ip, sorting, -n' '
	$KMT report gt.dat > text && grep -q "^SUMMARY" text && grep -q "^CALL SITES" text &&
	grep -q "^MISUSE" text && grep -q "^OUTSTANDING" text &&
	$KMT report --sections callsites -s allocs -n 3 gt.dat > cs && ! grep -q SUMMARY cs &&
	[ $(grep -c "+0x" cs) -le 3 ] &&
	$KMT report --csv callsites --comm kmt-gt gt.dat > cs.csv &&
	head -n 1 cs.csv | has "^callsite,function,address,allocs,frees," &&
	grep -q "^\"do_getxattr+0x[0-9a-f]*\",\"do_getxattr\",\"0x[0-9a-f]*\",$((G + L))," cs.csv &&
	$KMT report --raw-ip --csv callsites gt.dat | has "^\"0xffffffff"
'

test_expect_success '--time past the end of the trace: one clear line, exit 1' '
	rc=0; $KMT report --json --time 1000,2000 gt.dat > w.json 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "the window starts at 1000.000000 s, but the trace ends at" err
'

test_expect_success '--time: the span shown is the window, not the whole trace' '
	end=$($KMT report --json gt.dat | jq .summary.span_ns) &&
	from=$(awk -v e=$end "BEGIN { printf \"%.6f\", e / 2e9 }") &&
	$KMT report --json --time $from, gt.dat > w.json &&
	jq .summary.span_ns w.json > span && cat span &&
	[ $(cat span) -le $((end / 2 + 1000)) ]
'

test_expect_success 'usage errors are clear' '
	rc=0; $KMT report --sections nosuch gt.dat 2> err || rc=$?; [ $rc -eq 2 ] && grep -q "bad section" err &&
	rc=0; $KMT report -s sideways gt.dat 2> err || rc=$?; [ $rc -eq 2 ] &&
	rc=0; $KMT report --time 5 gt.dat 2> err || rc=$?; [ $rc -eq 2 ] &&
	rc=0; $KMT report --json --csv summary gt.dat 2> err || rc=$?; [ $rc -eq 2 ]
'

# A trace made by trace-cmd itself, from a private instance.
test_expect_success 'trace-cmd extract of a private instance' '
	command -v trace-cmd > /dev/null &&
	tc_extract_gt $INST tc.dat -g 31 -x 4 &&
	trace-cmd convert -i tc.dat -o tc6.dat --file-version 6 > /dev/null 2>&1 && [ -s tc6.dat ]
'

# Allocations per call site, "site count" lines, as trace-cmd report sees them.
# A large kmalloc is traced twice, inside __kmalloc_noprof and at its caller;
# kmemtrace counts it once, at the caller (summary.kmalloc_large_merged).
tc_sites() {
	trace-cmd report "$1" 2>/dev/null |
		sed -n "s/.* \(kmalloc\|kmem_cache_alloc\): .*call_site=\([^ ]*\) ptr=\([^ ]*\).*/\2 \3/p" |
		grep -v " (nil)$" | grep -v "^__kmalloc_noprof+\|^__kmalloc_large" | awk "{ n[\$1]++ } END { for (s in n) print s, n[s] }" | sort
}
our_sites() {	# columns by their header names
	$KMT report --csv callsites "$1" | awk -F, "NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i; next }
		\$c[\"allocs\"] > 0 { s = \$c[\"callsite\"]; gsub(/\"/, \"\", s); print s, \$c[\"allocs\"] }" | sort
}

test_expect_success 'trace-cmd v7 file: same allocations per call site as trace-cmd report' '
	tc_sites tc.dat > theirs && our_sites tc.dat > ours &&
	wc -l < theirs && [ $(wc -l < theirs) -gt 5 ] && diff -u theirs ours &&
	grep -q "^do_getxattr+0x[0-9a-f]* 31$" ours
'

test_expect_success 'trace-cmd v6 file: the same numbers' '
	$KMT info tc6.dat | has "trace.dat v6" &&
	our_sites tc6.dat > ours6 && diff -u ours ours6
'

# docs/report-json.md has a heading per table ("## callsites[]", "### pages.gfp[]",
# "## lifetimes (CSV only)") under which every column of the table is named.
test_expect_success 'docs/report-json.md names every table and column report --columns lists' '
	$KMT report --columns > cols &&
	awk "/^[a-z_]+( \\(JSON: [a-z_.]+\\))?: / { t = \$1; sub(/:\$/, \"\", t);
		if (\$2 == \"(JSON:\") { t = \$3; sub(/\\):\$/, \"\", t) } next }
		/^  in / { next }
		/^  [a-z_]+ / { print t, \$1 }" cols > pairs &&
	[ $(wc -l < pairs) -gt 100 ] &&
	while read -r t c; do
		awk -v t="$t" "/^#/ { h = \$0; sub(/^#+ /, \"\", h); sub(/\\[\\]\$/, \"\", h);
			sub(/ \\(CSV only\\)\$/, \"\", h); on = (h == t); next } on" \
			$ROOT/docs/report-json.md > part &&
		[ -s part ] || { echo "no heading for table $t"; exit 1; }
		grep -q "\`$c\`" part || { [ "$c" = lt ] && grep -q "\`lt_" part; } ||
			{ echo "$t.$c is not in docs/report-json.md"; exit 1; }
	done < pairs
'

test_expect_success 'a cut file: the report of what is left, "truncated at byte N of M", exit 1' '
	$SYNTH full s.dat &&
	for frac in 0.994 0.5; do
		cut_at s.dat $frac cut.dat && n=$(stat -c %s cut.dat) &&
		rc=0; $KMT report cut.dat > out 2> err || rc=$?; cat err;
		[ $rc = 1 ] && grep -q "^SUMMARY" out && grep -q "^MISUSE" out || exit 1;
		grep -q "warning: cut.dat: truncated at byte $n of [0-9]* (section " err || exit 1;
		tail -n 1 err | has "^kmemtrace report: cut.dat is damaged: the output above leaves out" || exit 1;
	done &&
	head -c 100 s.dat > cut.dat &&
	rc=0; $KMT report cut.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] && [ ! -s out ] &&
	grep -q "cut.dat: truncated at byte 100 of 228 (section '"'"'headers'"'"')" err
'

test_expect_success 'one chunk that does not inflate: every other chunk analysed, what was skipped said, exit 1' '
	$SYNTH full s.dat && cp s.dat bad.dat && off=$(chunk_offset s.dat 1 5) && break_chunk bad.dat $off &&
	end=$(chunk_offset s.dat 1 6) &&
	rc=0; $KMT report bad.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	grep -q "^ACCESSES" out &&
	grep -q "^kmemtrace report: warning: bad.dat: CPU 1 data: skipped 1 chunk at bytes $off-$end (.*): chunk 5 of 8 does not inflate to 16384 bytes$" err &&
	grep -q "^  damaged file  *1 part of the data could not be read" out &&
	grep -q "RESULTS ARE AFFECTED BY MISSING EVENTS" out &&
	[ "$($KMT report --json bad.dat 2>/dev/null | jq .summary.damaged_gaps)" = 1 ] || exit 1
	# The gap hides nothing as misuse: no error the whole file does not have.
	$KMT report --sections misuse s.dat | grep "^  [a-z_]*  *error " > clean.err
	$KMT report --sections misuse bad.dat 2>/dev/null | grep "^  [a-z_]*  *error " > bad.err || true
	cat bad.err && [ -s clean.err ] && ! grep -vxFf clean.err bad.err
'

test_expect_success 'a kallsyms section that does not inflate: raw addresses, a warning, exit 1' '
	$SYNTH full s.dat && cp s.dat syms.dat && off=$(section_offset s.dat 19) &&
	printf "\245\245\245\245\245\245\245\245" | dd of=syms.dat bs=1 seek=$((off + 28)) conv=notrunc 2>/dev/null &&
	rc=0; $KMT report --sections callsites syms.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	grep -q "warning: syms.dat: section '"'"'kallsyms'"'"' at offset $off .*: call sites are shown as raw addresses" err &&
	grep -q "^  0xffffffff81080040 " out && ! grep -q "sock_alloc_send_pskb" out &&
	[ "$($KMT report --json syms.dat 2>/dev/null | jq .summary.events)" = "$($KMT report --json s.dat | jq .summary.events)" ]
'

test_expect_success 'garbage inside kallsyms: its neighbourhood raw, never the function before it' '
	$SYNTH full s.dat && $KMT convert --compression none s.dat none.dat &&
	cp none.dat garb.dat && at=$(grep -bao "ffffffff81030000 T do_sys_open" none.dat | cut -d: -f1) &&
	printf "\001\033[2J\177" | dd of=garb.dat bs=1 seek=$((at + 17)) conv=notrunc 2>/dev/null &&
	rc=0; $KMT report --sections callsites garb.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	grep -qF "kallsyms: 1 line is not a symbol (the first, at byte" err &&
	grep -qF "'"'"'ffffffff81030000 \x01\x1b[2J\x7fys_open'"'"'" err && ! grep -q "[[:cntrl:]]" err &&
	grep -q "<- 0xffffffff81030018 <-" out && ! grep -q "kmem_cache_alloc_noprof+0x1" out &&
	grep -q "^  alloc_inode+0x40 " out
'

tracefs_check
test_done
