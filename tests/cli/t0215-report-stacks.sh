#!/usr/bin/env bash
# Slab allocation stacks (record --stack): each call site's allocations by
# the stack of its callers, exact against the ground-truth workload, cut by
# --stack-depth, the same in text, JSON and CSV, absent without --stack.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=60 X=9 L=2

test_expect_success 'record the ground truth with stacks, and without' '
	$KMT record -q --stack -o st.dat -- $WL/kmt-gt -g $G -x $X -l $L $F > /dev/null &&
	$KMT record -q -o plain.dat -- $WL/kmt-gt -g 5 $F > /dev/null &&
	$KMT report --json --comm kmt-gt st.dat > st.json &&
	$KMT report --json --comm kmt-gt --stack-depth 1 st.dat > d1.json
'

# Sum of a stacks field over the call sites of one function.
stacks() { jq "[.callsites[] | select(.function == \"$2\") | .stacks[].$3] | add // 0" $1; }
want() { v=$(stacks $1 $2 $3); echo "$2 stacks $3 = $v (want $4)"; [ "$v" = "$4" ]; }

test_expect_success 'do_getxattr: its stacks hold every allocation, bytes, frees' '
	want st.json do_getxattr allocs $((G + L)) &&
	want st.json do_getxattr frees $((G + L)) &&
	want st.json do_getxattr bytes_req $((G * 1337 + L * 20000)) &&
	want st.json do_getxattr bytes_alloc $((G * 2048 + L * 32768)) &&
	want st.json do_getxattr live_objects 0
'

test_expect_success 'the callers are getxattr'"'"'s, from the system call; setxattr'"'"'s keep theirs live' '
	jq -r ".callsites[] | select(.function == \"do_getxattr\") | .stacks[] | .frames | \"\(.[0]) \(.[-1])\"" \
		st.json | sort -u > ends && cat ends &&
	[ -s ends ] && ! grep -v "^[a-z_.]*getxattr[a-z_.]*+0x[0-9a-f]* entry_SYSCALL" ends &&
	want st.json simple_xattr_alloc allocs $X && want st.json simple_xattr_alloc live_objects $X &&
	jq -r ".callsites[] | select(.function == \"vmemdup_user\") | .stacks[].frames[0]" st.json |
		grep -v setxattr | { ! grep .; }
'

test_expect_success 'every call site: its stacks add up to its allocations, frees and live objects' '
	jq -c "[.callsites[] | select(.allocs > 0) | select(.allocs != ([.stacks[].allocs] | add) or
		.frees != ([.stacks[].frees] | add) or .live_objects != ([.stacks[].live_objects] | add) or
		.bytes_alloc != ([.stacks[].bytes_alloc] | add)) | .callsite]" st.json > bad &&
	cat bad && [ "$(cat bad)" = "[]" ] &&
	[ "$(jq "[.callsites[].stacks[].allocs] | add" st.json)" = "$(jq .summary.allocs st.json)" ]
'

test_expect_success '--stack-depth 1: one caller per stack, the same totals, fewer or as many stacks' '
	[ "$(jq "[.callsites[].stacks[].frames | length] | max" d1.json)" = 1 ] &&
	want d1.json do_getxattr allocs $((G + L)) &&
	[ "$(jq "[.callsites[].stacks[]] | length" d1.json)" -le "$(jq "[.callsites[].stacks[]] | length" st.json)" ] &&
	[ "$(jq "[.callsites[].stacks[].allocs] | add" d1.json)" = "$(jq .summary.allocs st.json)" ]
'

test_expect_success 'CSV callsite_stacks: the same rows and numbers as JSON' '
	$KMT report --comm kmt-gt --csv callsite_stacks st.dat > st.csv &&
	head -1 st.csv | grep -qx "callsite,function,stack,allocs,frees,bytes_req,bytes_alloc,live_objects,live_bytes" &&
	[ $(($(wc -l < st.csv) - 1)) = "$(jq "[.callsites[].stacks[]] | length" st.json)" ] &&
	awk -F, "NR > 1 && \$2 == \"\\\"do_getxattr\\\"\" { n += \$(NF - 5) } END { print n }" st.csv > n &&
	[ "$(cat n)" = $((G + L)) ]
'

test_expect_success 'text: the top stacks under each call site, --stacks N of them' '
	$KMT report --comm kmt-gt --sections callsites -n 0 st.dat > st.txt &&
	grep -q "under each, its top stacks" st.txt &&
	awk "/^  do_getxattr\\+/ { getline; print; exit }" st.txt | grep -E "^ +[0-9.]+% +[0-9,]+ .* <- [a-z_.]*getxattr" &&
	$KMT report --comm kmt-gt --sections callsites -n 0 --stacks 0 st.dat > none.txt &&
	! grep -q " <- " none.txt &&
	$KMT report --comm kmt-gt --sections callsites -n 0 --stacks 1 st.dat > one.txt &&
	[ $(grep -c " <- " one.txt) -le $(grep -c "^  [a-z_]" one.txt) ]
'

test_expect_success 'without --stack: no stacks anywhere' '
	$KMT report --json plain.dat > plain.json &&
	[ "$(jq "[.callsites[] | select(has(\"stacks\"))] | length" plain.json)" = 0 ] &&
	$KMT report plain.dat | { ! grep -q "under each, its top stacks"; }
'

test_expect_success 'a bad --stack-depth is one line and a usage error' '
	{ $KMT report --stack-depth 0 st.dat 2> err; [ $? = 2 ]; } &&
	[ $(wc -l < err) -le 2 ] && grep -q "bad stack depth" err
'

tracefs_check
test_done
