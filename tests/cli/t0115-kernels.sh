#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every kernel's event layout: for each kernel in tests/data/formats/ (4.18
# to 6.8 from their sources, Debian's from the kernels themselves), a trace
# in its formats with a known workload (kmt-synth kernel: kmalloc and, where
# the kernel has them, kmalloc_node and kmem_cache_alloc_node, 4-byte or
# 8-byte gfp flags, cache names on no event, on frees, or on both, the old
# per-CPU layout, a batched page free), read back exactly by report, check,
# kmap and dump, and by trace-cmd as a second reader. No root needed.
. "$(dirname "$0")/lib.sh"
D=$ROOT/tests/data/formats
kernels=$(cd $D && for k in */; do [ -e "$k/kmem_kmalloc.format" ] && echo "${k%/}"; done)
[ -n "$kernels" ] || test_skip_all "no kernel formats in $D"
have_tc=; command -v trace-cmd > /dev/null && have_tc=1

for k in $kernels; do
	test_expect_success "$k: report, check, kmap and dump give the workload exactly" '
		$SYNTH kernel '"$k"' k.dat &&
		$KMT report --json k.dat > k.json &&
		jq -c "[.summary.allocs, .summary.frees, .summary.page_allocs, .summary.pages_allocated, .summary.page_frees, .summary.percpu_allocs, .summary.percpu_frees]" k.json > got &&
		echo "summary: $(cat got)" && [ "$(cat got)" = "[22,22,2,4,2,1,1]" ] &&
		jq -c "[.caches[] | [.name, .allocs, .frees, .live_objects]]" k.json > got &&
		echo "caches: $(cat got)" &&
		[ "$(cat got)" = "[[\"filp\",7,7,0],[\"kmalloc-128\",10,10,0],[\"kmalloc-256\",5,5,0]]" ] &&
		[ "$(jq -c "[.processes[] | .comm] | unique" k.json)" = "[\"worker\"]" ] &&
		[ "$(jq ".misuse | length" k.json)" = 0 ] &&
		$KMT check k.dat > ck && grep -q ": 0 errors, 0 warnings$" ck &&
		[ "$($KMT kmap k.dat | grep -c ",\"worker\",")" = 22 ] &&
		$KMT dump -a k.dat > d && [ "$(grep -vc "^#" d)" = 52 ] &&
		! grep -q "undecoded\|?" d
	'
	test_expect_success "$k: report, JSON and info say what the kernel lacks, and what stands in for it" '
		$SYNTH kernel '"$k"' k.dat && $KMT report --json k.dat > k.json &&
		jq -r ".kernel_lacks[]" k.json > lacks && cat lacks &&
		if grep -q "field:__data_loc char\[\] name;" '"$D/$k"'/kmem_kmem_cache_free.format; then
			grep -q "^kmem_cache_alloc names no cache (before 6.18): an object is named by its free, its slab page or its size$" lacks
		else
			grep -q "^no event names a cache (before 5.12): caches are named by size from the kernel.s slab list$" lacks
		fi &&
		if grep -q "field:unsigned long call_site;" '"$D/$k"'/percpu_percpu_alloc_percpu.format; then
			! grep -q "per-CPU" lacks
		else
			grep -q "^per-CPU allocations carry no call site or gfp flags (before 5.19)$" lacks
		fi &&
		$KMT report --sections summary k.dat | has "^  kernel lacks  " &&
		$KMT info k.dat | has "^lacks: "
	'
	if [ -n "$have_tc" ]; then
		test_expect_success "$k: trace-cmd reads the same events and names the same gfp flags" '
			$SYNTH kernel '"$k"' k.dat && trace-cmd report k.dat > tc 2> /dev/null &&
			[ "$(grep -c ": kmalloc\(_node\)\?: " tc)" = 15 ] &&
			[ "$(grep -c ": kmem_cache_alloc\(_node\)\?: " tc)" = 7 ] &&
			if [ -e '"$D/$k"'/kmem_kmalloc_node.format ]; then
				[ "$(grep -c ": kmalloc_node: " tc)" = 5 ] && [ "$(grep -c ": kmem_cache_alloc_node: " tc)" = 3 ]
			fi &&
			theirs=$(grep -m1 ": kmalloc: " tc | sed "s/.*gfp_flags=\([^ ]*\).*/\1/") &&
			$KMT dump k.dat > d &&
			ours=$(grep -m1 " kmalloc " d | sed "s/.*gfp=\([^ ]*\).*/\1/") &&
			echo "gfp: ours $ours, trace-cmd $theirs" && [ -n "$ours" ] && [ "$ours" = "$theirs" ]
		'
	fi
done

test_done
