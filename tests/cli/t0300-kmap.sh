#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace kmap on a recorded ground-truth trace: one record per object,
# exact object counts, sizes, allocation and free sites, pids and names;
# filters (--callsite, --cache, -p, --live, --time) and --json agree. A
# damaged file: every record of what can be read, then what could not be.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=53 X=19 R=7 L=2

test_expect_success 'record the ground-truth workload' '
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g $G -s 1337 -x $X -v 1500 -r $R -l $L $F > out &&
	sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out > pid && [ -s pid ]
'

# "SIZE FATE FREE_FUNCTION PID COMM CACHE" per object of one allocating function
# (the names are CSV strings: quoted).
objects() {
	$KMT kmap gt.dat --callsite "$1" | awk -F, '/^#/ { next } { f = $7; sub(/\+0x[0-9a-f]+$/, "", f)
		gsub(/"/, "", $8); gsub(/"/, "", $9)
		print $4, ($6 == 0 ? "live" : "freed"), (f == "" ? "-" : f), $2, $8, $9 }' | sort | uniq -c |
		awk '{ $1 = $1; print }' | sort
}
want() {	# function "COUNT SIZE FATE FREE PID COMM CACHE" ...
	local fn=$1; shift
	objects "$fn" > got
	printf "%s\n" "$@" | sort > want
	echo "$fn:"; cat got
	diff -u want got
}

test_expect_success 'do_getxattr: every buffer once (large ones merged), freed there' '
	p=$(cat pid) &&
	want do_getxattr "$G 2048 freed do_getxattr $p kmt-gt kmalloc-2k" \
		"$L 32768 freed do_getxattr $p kmt-gt kmalloc-large"
'

test_expect_success 'setxattr: values copied and freed, xattrs kept unless removed' '
	p=$(cat pid) &&
	want vmemdup_user "$X 2048 freed path_setxattrat $p kmt-gt kmalloc-2k" &&
	want simple_xattr_alloc "$R 2048 freed shmem_xattr_handler_set $p kmt-gt kmalloc-2k" \
		"$((X - R)) 2048 live - $p kmt-gt kmalloc-2k" &&
	want simple_xattr_set "$R 16 freed simple_xattr_free $p kmt-gt kmalloc-16" \
		"$((X - R)) 16 live - $p kmt-gt kmalloc-16"
'

test_expect_success 'records are well formed: 9 fields, times ordered, sizes as allocated' '
	$KMT kmap gt.dat > all &&
	head -n 1 all | has -x "# alloc_ip,pid,obj_va_ptr,size,alloc_time,free_time,free_ip,comm,cache" &&
	sed "1d; s/\"[^\"]*\"/Q/g" all | awk -F, "NF != 9 { print \"bad: \" \$0; bad = 1 }
		\$6 != 0 && \$6 < \$5 { print \"freed before allocated: \" \$0; bad = 1 }
		END { exit bad }"
'

test_expect_success '--live, -p and --cache select exactly' '
	p=$(cat pid) &&
	n=$($KMT kmap gt.dat --live -p $p --callsite simple_xattr_alloc | grep -vc "^#") &&
	echo "live xattrs: $n" && [ "$n" -eq $((X - R)) ] &&
	n=$($KMT kmap gt.dat -p $p --cache kmalloc-16 --callsite simple_xattr_set | grep -vc "^#") &&
	[ "$n" -eq $X ] &&
	n=$($KMT kmap gt.dat -p $p --cache kmalloc-2k --callsite simple_xattr_set | { grep -vc "^#" || :; }) &&
	[ "$n" -eq 0 ]
'

test_expect_success '--json: the same objects, with both sizes and the fate' '
	$KMT kmap gt.dat --json --callsite simple_xattr_alloc > x.json &&
	[ "$(jq length x.json)" -eq $X ] &&
	[ "$(jq "[.[] | select(.fate == \"live\")] | length" x.json)" -eq $((X - R)) ] &&
	[ "$(jq "[.[] | .bytes_req] | unique" -c x.json)" = "[1540]" ] &&
	[ "$(jq "[.[] | .bytes_alloc] | unique" -c x.json)" = "[2048]" ] &&
	[ "$(jq "[.[] | select(.fate == \"freed\") | .free_time > .alloc_time] | all" x.json)" = true ]
'

test_expect_success '--time keeps the window: no object outside it' '
	$KMT kmap gt.dat --time 0,0.000001 > early && $KMT kmap gt.dat > all2 &&
	[ "$(wc -l < early)" -lt "$(wc -l < all2)" ] &&
	awk -F, "!/^#/ && \$5 > 1000 { bad = 1 } END { exit bad }" early
'

test_expect_success '--raw-ip and --hash-pointers hide what they should' '
	$KMT kmap gt.dat --raw-ip --callsite do_getxattr | sed -n 2p | has "^0xffff" &&
	$KMT kmap gt.dat --hash-pointers=k --callsite do_getxattr > h &&
	! grep -q ",0xffff" h && grep -q ",h:" h
'

test_expect_success 'a corrupt file: a clear message, exit 1' '
	head -c 5000 gt.dat > cut.dat &&
	rc=0 && $KMT kmap cut.dat > /dev/null 2> err || rc=$? &&
	cat err && [ $rc -eq 1 ] && grep -q "cut.dat" err
'

test_expect_success 'one chunk that does not inflate: the records of every other chunk, what was skipped, exit 1' '
	$SYNTH full s.dat && cp s.dat bad.dat && off=$(chunk_offset s.dat 1 5) && break_chunk bad.dat $off &&
	$KMT kmap s.dat > clean.txt &&
	rc=0; $KMT kmap bad.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] &&
	grep -q "warning: bad.dat: CPU 1 data: skipped 1 chunk at bytes $off-" err &&
	tail -n 1 err | has "bad.dat is damaged: the output above leaves out what could not be read" &&
	n=$(grep -c "^0x\|^[a-z_]*+0x" out) && all=$(grep -c "^0x\|^[a-z_]*+0x" clean.txt) &&
	echo "records: $n of $all" && [ "$n" -lt "$all" ] && [ "$n" -gt $((all * 3 / 4)) ] || exit 1
	rc=0; $KMT kmap --json bad.dat > out.json 2>/dev/null || rc=$?; [ $rc = 1 ] && jq -e length out.json > /dev/null
'

test_expect_success 'a cut file: the records of what is left, "truncated at byte N of M", exit 1' '
	$SYNTH full s.dat && cut_at s.dat 0.5 cut.dat && n=$(stat -c %s cut.dat) &&
	rc=0; $KMT kmap cut.dat > out 2> err || rc=$?; cat err; [ $rc = 1 ] && [ -s out ] &&
	grep -q "warning: cut.dat: truncated at byte $n of [0-9]* (section " err
'

tracefs_check
test_done
