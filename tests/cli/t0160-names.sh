#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Tasks by their names, as the kernel's own trace output gives them: work
# done in interrupts on an idle CPU (block I/O completions allocating and
# freeing bios) belongs to pid 0, "<idle>", in dump, report, kmap and the
# exports; never "<...>". A synthetic trace: no kernel needed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'a trace with the idle task allocating and freeing' '
	$SYNTH idle idle.dat
'

test_expect_success 'dump names pid 0 <idle>, and --comm takes that name' '
	$KMT dump idle.dat > dump && cat dump &&
	[ "$(grep -c " <idle>-0 kmem_cache_" dump)" = 6 ] && ! grep -q "<\.\.\.>-0" dump &&
	[ "$($KMT dump --comm "<idle>" idle.dat | grep -c " <idle>-0 ")" = 6 ]
'

test_expect_success 'report, kmap and the exports name it <idle> too' '
	$KMT report --json idle.dat > r.json &&
	[ "$(jq -r ".processes[] | select(.pid == 0) | \"\(.comm) \(.allocs) \(.frees)\"" r.json)" = "<idle> 3 3" ] &&
	$KMT kmap idle.dat > kmap && [ "$(grep -c ",0,0x.*,\"<idle>\",\"bio-184\"$" kmap)" = 3 ] &&
	$KMT export -f sqlite -o idle.db idle.dat &&
	if command -v sqlite3 > /dev/null; then
		[ "$(sqlite3 idle.db "SELECT count(*) FROM objects WHERE comm = '"'"'<idle>'"'"'")" = 3 ]
	fi
'

test_done
