#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Ground truth: kmt-gt makes kernel allocations we know exactly (see
# tests/workloads/kmt-gt.c). Record it, then count them in the file with
# our reader (kmemtrace dump) and, independently, with trace-cmd report.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v trace-cmd > /dev/null || test_skip_all "trace-cmd is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=137 X=23 R=9 L=4

test_expect_success 'record the ground-truth workload' '
	$KMT record -q -o gt.dat -- $WL/kmt-gt -g $G -s 1337 -x $X -v 1500 -r $R -l $L $F > out &&
	sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out > pid && [ -s pid ] &&
	$KMT dump gt.dat > ours && trace-cmd report gt.dat > theirs 2>/dev/null
'

# Events of the workload's pid, as "KIND FUNCTION REQ ALLOC" from both readers.
ours() { awk -v pid="-$(cat pid)" '$3 ~ pid"$" {
	fn = $5; sub(/\+0x[0-9a-f]+$/, "", fn); req = alloc = "";
	kind = $4;
	for (i = 6; i <= NF; i++) { if ($i ~ /^req=/) req = substr($i, 5); if ($i ~ /^alloc=/) alloc = substr($i, 7)
		if ($i == "ptr=0x0") kind = kind "(NULL)" }
	print kind, fn, req, alloc }' ours; }
theirs() { awk -v pid="-$(cat pid)" '$1 ~ pid"$" {
	kind = $4; sub(/:$/, "", kind); fn = req = alloc = "";
	for (i = 5; i <= NF; i++) {
		if ($i ~ /^call_site=/) { fn = substr($i, 11); sub(/\+0x[0-9a-f]+$/, "", fn) }
		if ($i ~ /^bytes_req=/) req = substr($i, 11); if ($i ~ /^bytes_alloc=/) alloc = substr($i, 13)
		if ($i == "ptr=(nil)" || $i == "ptr=0x0") kind = kind "(NULL)" }
	print kind, fn, req, alloc }' theirs; }

expect() {	# reader "KIND FUNCTION REQ ALLOC" count
	n=$($1 | grep -cx "$2" || true)
	echo "$1: '$2' x $n (want $3)"
	[ "$n" -eq "$3" ]
}

for reader in ours theirs; do
	test_expect_success "$reader: $G getxattr kmallocs of 1337 -> 2048 in do_getxattr, all freed there" '
		expect $reader "kmalloc do_getxattr 1337 2048" $G &&
		expect $reader "kfree do_getxattr  " $((G + L))
	'
	test_expect_success "$reader: $X setxattr values copied (1500 -> 2048) and freed" '
		expect $reader "kmalloc vmemdup_user 1500 2048" $X &&
		expect $reader "kfree path_setxattrat  " $X
	'
	test_expect_success "$reader: $X xattrs kept (1540 -> 2048) with their names (13 -> 16)" '
		expect $reader "kmalloc simple_xattr_alloc 1540 2048" $X &&
		expect $reader "kmalloc simple_xattr_set 13 16" $X
	'
	test_expect_success "$reader: $R removed: value and name freed" '
		expect $reader "kfree shmem_xattr_handler_set  " $R &&
		expect $reader "kfree(NULL) shmem_xattr_handler_set  " $X &&
		expect $reader "kfree simple_xattr_free  " $R
	'
	test_expect_success "$reader: $L large getxattr: kmalloc_large traced twice each" '
		expect $reader "kmalloc do_getxattr 20000 32768" $L &&
		expect $reader "kmalloc __kvmalloc_node_noprof 20000 32768" $L
	'
done

# Without kfree in the recording (-e kmem:kmalloc), an address that comes
# again is a new allocation (its free was not recorded), not the second event
# of a large kmalloc: every getxattr counts, and only the large ones merge.
test_expect_success 'kmalloc alone: every allocation counts; only the large kmallocs are merged' '
	rm -f $F.k && touch $F.k &&
	$KMT record -q -e kmem:kmalloc -o k.dat -- $WL/kmt-gt -g $G -s 1337 -x $X -v 1500 -r $R -l $L $F.k > /dev/null &&
	rm -f $F.k && $KMT report --json --comm kmt-gt k.dat > k.json &&
	jq -e ".summary.kmalloc_large_merged == $L" k.json &&
	n=$(jq "[.callsites[] | select(.function == \"do_getxattr\") | .allocs] | add" k.json) &&
	echo "do_getxattr allocs $n (want $((G + L)))" && [ "$n" -eq $((G + L)) ]
'

# On a freshly booted kernel the workload may also grow a slab cache with an
# order-3 slab (kmalloc-2k's): only the pages that hold the large buffers
# count. kmalloc_large traces the page allocation, then the kmalloc of the
# page's address; kfree traces itself, then the page free.
test_expect_success 'ours: the large buffers are order-3 page allocations, freed' '
	pid=$(cat pid) &&
	grep -- "-$pid " ours > mine &&
	a=$(grep -A1 " mm_page_alloc pfn=.* order=3 " mine | grep -c " kmalloc __kvmalloc_node_noprof+.* req=20000 " || true) &&
	f=$(grep -B1 " mm_page_free pfn=.* order=3" mine | grep -c " kfree do_getxattr+" || true) &&
	all=$(grep -c " mm_page_alloc pfn=.* order=3 " mine || true) &&
	echo "alloc $a free $f (order-3 allocations of the workload: $all)" && [ "$a" -eq $L ] && [ "$f" -eq $L ]
'

test_expect_success 'ours: each getxattr object is freed at the address it was allocated at' '
	pid=$(cat pid) &&
	grep -- "-$pid kmalloc do_getxattr+.* req=1337 " ours | sed "s/.* ptr=\([^ ]*\).*/\1/" | sort > a &&
	# The task'"'"'s own do_getxattr events only: an interrupt on its CPU may
	# allocate in between, under its pid, at other call sites.
	grep -E -- "-$pid (kmalloc|kfree) do_getxattr+" ours |
		grep -A1 -- "kmalloc do_getxattr+.* req=1337 " | grep " kfree do_getxattr" |
		sed "s/.* ptr=\([^ ]*\).*/\1/" | sort > f &&
	[ $(wc -l < a) -eq $G ] && cmp a f
'

test_expect_success 'ours: the workload is named kmt-gt (exec seen), not by pid only' '
	grep -q " kmt-gt-$(cat pid) kmalloc do_getxattr" ours
'

# A page a batch frees (release_pages(): unmapped anonymous memory) is
# traced twice, by mm_page_free and by mm_page_free_batched: one free.
P=3000
test_expect_success "$P anonymous pages unmapped: each page free counted once, not once per event" '
	rm -f $F.p && touch $F.p &&
	$KMT record -q -F -o p.dat -- $WL/kmt-gt -g 0 -p $P $F.p > out && rm -f $F.p &&
	$KMT dump p.dat > p.dump && trace-cmd report p.dat > p.theirs 2>/dev/null &&
	frees=$(grep -c " mm_page_free " p.dump) && batched=$(grep -c " mm_page_free_batched " p.dump) &&
	theirs=$(grep -c " mm_page_free: " p.theirs) &&
	$KMT report --json p.dat | jq -c ".summary | [.page_allocs, .page_frees, .pages_allocated, .pages_freed]" > got &&
	echo "mm_page_free $frees (trace-cmd $theirs), batched $batched; report: $(cat got)" &&
	[ "$frees" -eq "$theirs" ] && [ "$batched" -ge $P ] &&
	[ "$(jq ".[1]" got)" -eq "$frees" ] && [ "$(jq ".[3]" got)" -eq "$frees" ] &&
	[ "$(jq ".[0]" got)" -ge $P ]
'

# -F leaves other tasks' events out: whether an object outstanding at the
# end was freed untraced is then not known, and said so, not left blank.
test_expect_success '-F: outstanding objects'"'"' untraced? is said to be unknown' '
	rm -f $F.u && touch $F.u &&
	$KMT record -q -F -o u.dat -- $WL/kmt-gt -g 1 -x 3 $F.u > /dev/null && rm -f $F.u &&
	$KMT report --wide --sections outstanding u.dat > u.txt && grep -q "simple_xattr_alloc" u.txt &&
	tr -s "\n " "  " < u.txt | has "(untraced?: not known here: a recording that leaves events out" &&
	$KMT report --wide --sections outstanding gt.dat | tr -s "\n " "  " | has "(untraced?: in caches the kernel"
'

tracefs_check
test_done
