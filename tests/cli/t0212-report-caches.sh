#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Slab caches by their names: the kernel merges caches of one size and
# flags and its events name them all by one (TCP's skbuff_fclone_cache is
# reported as another cache on 6.18). A recording keeps the groups it
# found; report (text, JSON aliases, CSV), kmap and the exports name a
# merged cache "NAME (+ALIAS, ...)", and --cache takes any of its names
# (report, export, kmap, top, watch), as it takes kmalloc-2048 for the
# kernel's kmalloc-2k. A cache's object size comes from its allocations.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
[ -L /sys/kernel/slab/skbuff_fclone_cache ] ||
	test_skip_all "skbuff_fclone_cache is not a merged cache on this kernel"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
N=100 G=30

# The names merged with skbuff_fclone_cache, by the kernel's sysfs; the one
# its events carry is the one /proc/slabinfo lists.
target=$(readlink /sys/kernel/slab/skbuff_fclone_cache)
group() {
	for l in /sys/kernel/slab/*; do
		if [ -L "$l" ] && [ "$(readlink "$l")" = "$target" ]; then basename "$l"; fi
	done | sort
}
reported() { group | while read n; do if grep -q "^$n " /proc/slabinfo; then echo "$n"; fi; done; }

test_expect_success 'record a loopback TCP transfer and getxattr calls' '
	$KMT record -q -F -o tcp.dat -- $WL/kmt-gt -g $G -t $N $F > out &&
	grep -q "$N tcp" out &&
	group > names && reported > name && cat names name &&
	[ $(wc -l < names) -ge 2 ] && [ $(wc -l < name) = 1 ]
'

test_expect_success 'JSON: the merged cache by the name its events carry, its aliases beside it' '
	$KMT report --json -n 0 tcp.dat > tcp.json &&
	jq -r ".caches[] | select(.name == \"$(cat name)\") | .aliases[]" tcp.json > aliases &&
	grep -vx "$(cat name)" names > want && diff want aliases &&
	[ "$(jq "[.caches[] | select(.name == \"$(cat name)\")][0].allocs" tcp.json)" -gt 0 ] &&
	[ "$(jq "[.caches[] | select(.aliases | length == 0)] | length" tcp.json)" -gt 0 ]
'

label() { echo "$(cat name) (+$(grep -vx "$(cat name)" names | paste -sd, | sed "s/,/, /g"))"; }

test_expect_success 'text, CSV, kmap and the exports: "NAME (+ALIAS, ...)"' '
	label > label && cat label &&
	$KMT report --sections caches -n 0 tcp.dat > tcp.txt &&
	grep -qxF "    $(cat label)" tcp.txt &&
	$KMT report --csv caches tcp.dat > tcp.csv &&
	grep -F "\"$(cat label)\"" tcp.csv | has ",\"$(grep -vx "$(cat name)" names | paste -sd " ")\"," &&
	$KMT kmap tcp.dat | has -F "\"$(cat label)\"" &&
	$KMT export -f folded -o tcp.folded tcp.dat && grep -qF ";$(cat label);" tcp.folded &&
	$KMT export -f sqlite -o tcp.db tcp.dat &&
	if command -v sqlite3 > /dev/null; then
		[ "$(sqlite3 tcp.db "SELECT count(*) FROM objects WHERE cache = '"'"'$(cat label)'"'"'")" -gt 0 ]
	fi
'

test_expect_success '--cache ALIAS selects the merged cache, and says it is merged (report, export, kmap)' '
	$KMT report --json --cache skbuff_fclone_cache tcp.dat > sel.json 2> sel.err &&
	cat sel.err && grep -q "note: cache .skbuff_fclone_cache. is merged" sel.err &&
	[ "$(jq ".caches | length" sel.json)" = 1 ] &&
	[ "$(jq -r ".caches[0].name" sel.json)" = "$(cat name)" ] &&
	[ "$(jq ".summary.allocs" sel.json)" = "$(jq "[.caches[] | select(.name == \"$(cat name)\")][0].allocs" tcp.json)" ] &&
	[ "$(jq ".summary.page_allocs" sel.json)" = 0 ] &&
	$KMT kmap --cache skbuff_fclone_cache tcp.dat > sel.kmap 2> kmap.err &&
	[ -s sel.kmap ] && ! grep -v "^#" sel.kmap | grep -vF "\"$(cat label)\"" && grep -q "is merged" kmap.err &&
	$KMT export -f folded --value objects --cache skbuff_fclone_cache -o sel.folded tcp.dat 2> /dev/null &&
	[ "$(awk "{ s += \$NF } END { print s }" sel.folded)" = "$(jq ".summary.allocs" sel.json)" ]
'

test_expect_success '--cache kmalloc-2048 is the kernel'"'"'s kmalloc-2k; a name it does not have warns' '
	$KMT report --json --cache kmalloc-2048 tcp.dat > k2.json 2> k2.err &&
	grep -q "the kernel.s .kmalloc-2k." k2.err &&
	[ "$(jq -r "[.caches[].name] | join(\" \")" k2.json)" = kmalloc-2k ] &&
	[ "$(jq "[.callsites[] | select(.function == \"do_getxattr\") | .allocs] | add" k2.json)" = $G ] &&
	$KMT report --json --cache kmalloc-2k tcp.dat > k2b.json 2> /dev/null && cmp k2.json k2b.json &&
	$KMT report --cache nosuch tcp.dat > /dev/null 2> none.err &&
	grep -q "no object of cache .nosuch. is in the trace" none.err
'

test_expect_success 'top and watch check a cache name as the kernel has it, and take an alias' '
	{ $KMT top --batch -n 1 -i 0.2 --cache nosuch > /dev/null 2> top.err; [ $? = 1 ]; } &&
	grep -q "no slab cache .nosuch." top.err &&
	{ $KMT watch --cache nosuch -d 1 -o w.dat > /dev/null 2> watch.err; [ $? = 1 ]; } &&
	grep -q "no slab cache .nosuch." watch.err && [ ! -e w.dat ] &&
	$KMT top --json -n 1 -i 0.3 --cache skbuff_fclone_cache > top.json 2> top.err &&
	grep -q "note: cache .skbuff_fclone_cache. is merged" top.err &&
	$KMT top --json -n 1 -i 5 --cache kmalloc-2048 -- sh -c "$WL/kmt-gt -g 200 $F > /dev/null" \
		> topk.json 2> /dev/null &&
	jq -r ".rows[].name" topk.json > topk.names && cat topk.names &&
	[ "$(cat topk.names)" = kmalloc-2k ] && [ "$(jq ".rows[0].allocs" topk.json)" -ge 200 ]
'

test_expect_success 'a cache named first by a free has its size from its allocations' '
	$KMT report --json -n 0 tcp.dat |
		jq -r ".caches[] | select(.allocs > 0 and .kind == \"slab\" and .object_size == 0) | .name" > nosize &&
	[ ! -s nosize ]
'

tracefs_check
test_done
