#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace dump on files whose contents are known: every event of the
# committed real recordings, field by field, as trace-cmd report reads
# them; the stacks, losses and process-naming events of kmt-synth's full
# trace, as its source makes them and trace-cmd reads them; each option
# (-p, --comm, --time, --raw-ip, --hash-pointers, -a) with exact counts;
# a missing, foreign, cut or damaged file (what can be read, then where
# data is missing; exit 1). No root, no tracefs.
. "$(dirname "$0")/lib.sh"
DATA=$ROOT/tests/data/traces

# The lines of a file's kallsyms, as trace-cmd reads them.
syms() { trace-cmd dump --kallsyms "$1" 2> /dev/null | grep -v -e "^	\[" -e "^$"; }

# trace-cmd report -t (nanoseconds) as kmemtrace dump prints it: times from
# the first event, CPU, task, kind, call site, then the fields of the kind.
# Memory events only; with all=1 the process-naming events too.
TC2DUMP='
function f(name,  i) { for (i = 5; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
/^ *cpus=/ { next }
{
	cpu = $2; gsub(/[][]/, "", cpu); ts = $3; sub(/:$/, "", ts); kind = $4; sub(/:$/, "", kind)
	split(ts, p, "."); t = p[1] * 1000000000 + p[2]
	if (!started) { t0 = t; started = 1 }
	line = sprintf("%6d.%06d [%03d] %s %s", int((t - t0) / 1000000000), int((t - t0) / 1000) % 1000000, cpu, $1, kind)
	site = f("call_site"); ptr = f("ptr"); if (ptr == "(nil)") ptr = "0x0"
	if (kind == "kmalloc" || kind == "kmem_cache_alloc" || kind == "percpu_alloc_percpu")
		line = line " " site " ptr=" ptr " req=" (kind == "percpu_alloc_percpu" ? f("size") : f("bytes_req")) \
			" alloc=" f("bytes_alloc") " gfp=" f("gfp_flags")
	else if (kind == "kfree" || kind == "kmem_cache_free")
		line = line " " site " ptr=" ptr
	else if (kind == "percpu_free_percpu")
		line = line " ptr=" ptr
	else if (kind == "mm_page_alloc")
		line = line " pfn=" f("pfn") " order=" f("order") " gfp=" f("gfp_flags") " migratetype=" f("migratetype")
	else if (kind == "mm_page_free" || kind == "mm_page_free_batched")
		line = line " pfn=" f("pfn") " order=" f("order")
	else if (all && kind == "task_rename")
		line = line " pid=" f("pid") " name=" f("newcomm")
	else if (all && kind == "sched_process_exec")
		line = line " pid=" f("pid") " name=" f("filename")
	else if (all && kind == "sched_process_exit")
		line = line " pid=" f("pid") " name=" f("comm")
	else
		next
	if (f("name") != "") line = line " cache=" f("name")
	if (f("node") != "" && f("node") >= 0) line = line " node=" f("node")
	print line
}'
# trace-cmd names no address past the last symbol of the file's kallsyms;
# kmemtrace names one up to 1 MiB after it (src/lib/event/symbols.c), as
# that function's: so does this, with the symbol and offset computed here.
tc_dump() {	# file [all]
	local last a off
	trace-cmd report -t "$1" 2> /dev/null | awk -v all="${2:-0}" "$TC2DUMP" > tc.dump &&
	last=$(syms "$1" | sort | tail -n 1) && [ -n "$last" ] || return 1
	for a in $(awk '$5 ~ /^0xffffffff/ { print $5 }' tc.dump | sort -u); do
		off=$((a - 0x${last%% *}))
		[ $off -ge 0 ] && [ $off -lt 1048576 ] || { echo "$a is not past ${last##* }"; return 1; }
		sed -i "s/ $a / ${last##* }+$(printf 0x%x $off) /" tc.dump
	done
	cat tc.dump
}

test_expect_success 'the inputs' '
	command -v trace-cmd > /dev/null || { echo "trace-cmd is missing (make deps)"; exit 1; }
	cp $DATA/*.dat . && cp real-v7-zstd.dat real.dat && cp tracecmd-extract-v7.dat tc.dat &&
	$SYNTH full synth.dat
'

test_expect_success 'every memory event, field by field, as trace-cmd report reads it' '
	for f in real.dat real-v6.dat real-v7-none.dat tc.dat; do
		tc_dump $f > theirs && $KMT dump $f > ours && tail -n +2 ours > ours.ev &&
		echo "$f: $(wc -l < ours.ev) events" && diff -u theirs ours.ev && mv ours.ev ours.$f || exit 1
	done &&
	[ $(wc -l < ours.real.dat) = 547 ] && [ $(wc -l < ours.tc.dat) = 347 ] &&
	[ $(grep -c " mas_store_gfp+0x41c ptr=" ours.real.dat) = 3 ]
'

test_expect_success 'the first line: the file, and its first event'"'"'s time in the trace clock' '
	for f in real.dat tc.dat; do
		t=$(trace-cmd report -t $f 2> /dev/null | sed -n "2s/.*\] *\([0-9]*\.[0-9]\{6\}\).*/\1/p") && [ -n "$t" ] &&
		$KMT dump $f | sed -n 1p > first && cat first &&
		[ "$(cat first)" = "# $f: times are seconds from the trace'"'"'s first event, at $t s of the local clock" ] || exit 1
	done &&
	[ "$t" = 148.572727 ]
'

test_expect_success '-a: the process-naming events too, as trace-cmd reads them' '
	tc_dump real.dat 1 > theirs && $KMT dump -a real.dat | tail -n +2 > ours &&
	diff -u theirs ours && [ $(wc -l < ours) = 550 ] &&
	grep -v " kmalloc \| kfree \| kmem_cache_\| mm_page_\| percpu_" ours | cut -c 15- > naming && cat naming &&
	printf "%s\n" "[000] kmt-gt-1390 task_rename pid=1390 name=kmt-gt" \
		"[000] kmt-gt-1390 sched_process_exec pid=1390 name=./build/workloads/kmt-gt" \
		"[000] kmt-gt-1390 sched_process_exit pid=1390 name=kmt-gt" | diff - naming
'

test_expect_success 'dump: stacks with -a only, as its help says' '
	$KMT dump --help | has -- "-a, --all .*stacks" &&
	$KMT dump synth.dat > plain && ! grep -q "=>\|kernel_stack" plain &&
	$KMT dump -a synth.dat > all && grep -q "=>" all && grep -q " kernel_stack of " all
'

# kmt-synth full (tests/tools/kmt-synth.c): 1,404 allocations, each with a
# stack of 6 frames (the tracepoint, the allocator, the site and 3 callers)
# but those of load_elf_binary (200), which have 2 callers: 8,224 frames.
# Its functions are 64 KiB apart: a frame's offset is its address's low 16 bits.
test_expect_success '-a: every stack frame as trace-cmd reads it; each stack given to the allocation before it' '
	$KMT dump -a synth.dat > all &&
	grep "^	=> " all | sed "s/^	=> //" > ours &&
	trace-cmd report synth.dat 2> /dev/null | sed -n "s/^=> \([^ ]*\) (\(.*\))$/\1 \2/p" |
		sed "s/ .*\(....\)$/ \1/; s/ 0*\([0-9a-f]\)/+0x\1/" > theirs &&
	[ $(wc -l < ours) = 8224 ] && diff -u theirs ours &&
	[ $(grep -c " kernel_stack of " all) = 1404 ] && [ $(grep -c "load_elf_binary+0x40" ours) = 200 ] &&
	awk "/ kernel_stack of / { want = \$(NF - 1) \" \" \$NF
			if (want != last[\$2]) { print \"stack at \" \$1 \" on \" \$2 \": of \" want \", after \" last[\$2]; bad = 1 }
			next }
		/^ / && / ptr=/ { for (i = 1; i <= NF; i++) if (\$i ~ /^ptr=/) last[\$2] = \$4 \" \" \$i }
		END { exit bad }" all
'

test_expect_success 'losses: one line, where trace-cmd says the events were dropped' '
	$KMT dump synth.dat > d && grep -n "LOST" d > lost && cat lost &&
	[ "$(cut -d: -f2- lost)" = "CPU 1: LOST 250 EVENTS" ] &&
	sed -n "$(($(cut -d: -f1 lost) - 1))p" d | has -x "     0.600000 \[000\] bash-100 mm_page_alloc pfn=0x10960 order=2 gfp=GFP_KERNEL migratetype=0" &&
	trace-cmd report synth.dat 2> /dev/null | grep -v "^=>\|kernel_stack:" | grep -B1 "DROPPED" > tc.lost &&
	sed -n 1p tc.lost | has "0.601000: mm_page_alloc: .* pfn=0x10960 order=2 " &&
	sed -n 2p tc.lost | has -x " *CPU:1 \[250 EVENTS DROPPED\]"
'

# -p takes 1 and up: the idle task (pid 0) is --comm "<idle>".
test_expect_success '-p PID, --comm NAME: exactly the events of that task, as trace-cmd counts them' '
	for f in real.dat tc.dat; do
		tc_dump $f > theirs.$f &&
		for p in $(awk "{ sub(/.*-/, \"\", \$3); print \$3 }" theirs.$f | sort -u | grep -vx 0); do
			$KMT dump -p $p $f | tail -n +2 > ours && awk -v p="-$p\$" "\$3 ~ p" theirs.$f | diff - ours || exit 1
			echo "$f: pid $p: $(wc -l < ours)"
		done
	done &&
	$KMT dump -p 15 real.dat | tail -n +2 | awk "{ print \$3 }" | tr "\n" " " | has -x "rcu_preempt-15 rcu_preempt-15 " &&
	$KMT dump --comm kmt-gt real.dat | tail -n +2 > c && [ $(wc -l < c) = 544 ] && ! grep -v " kmt-gt-1390 " c &&
	$KMT dump -p 1390 real.dat | tail -n +2 | cmp - c &&
	$KMT dump --comm ls tc.dat | tail -n +2 > ls && grep " ls-[0-9]* " theirs.tc.dat | diff - ls && [ $(wc -l < ls) = 192 ] &&
	$KMT dump --comm "<idle>" tc.dat | tail -n +2 > idle && [ $(wc -l < idle) = 22 ] &&
	grep " <idle>-0 " theirs.tc.dat | diff - idle
'

# Times from the first event, counted in trace-cmd's nanoseconds: real.dat
# has 164 events in [300, 400] us (one of them task_rename), two (rcu_preempt's
# frees) in [223,561, 228,724] ns, one at each end.
test_expect_success '--time START,END: the events inside, both ends included; either end may be empty' '
	trace-cmd report -t real.dat 2> /dev/null | awk "NR > 1 { split(\$3, p, \".\"); t = p[1] * 1000000000 + p[2]
		if (NR == 2) t0 = t; print t - t0 }" > ns &&
	inwin() { awk -v a=$1 -v b=$2 "\$1 >= a && \$1 <= b" ns | wc -l; } &&
	[ $(wc -l < ns) = 550 ] &&
	for w in "0.0003,0.0004 300000 400000" "0.0005, 500000 1e18" ",0.0001 0 100000" "0.001337,0.001338 1337000 1338000" \
		 "0.000223561,0.000228724 223561 228724"; do
		set -- $w && $KMT dump -a --time $1 real.dat > w && n=$(tail -n +2 w | wc -l) &&
		echo "--time $1: $n events; trace-cmd: $(inwin $2 $3)" && [ $n = $(inwin $2 $3) ] || exit 1
	done &&
	$KMT dump -a --time 0.0003,0.0004 real.dat | tail -n +2 > w && [ $(wc -l < w) = 164 ] &&
	awk "\$1 < 0.0003 || \$1 > 0.0004 { exit 1 }" w &&
	$KMT dump --time 0.0003,0.0004 real.dat | tail -n +2 > w && [ $(wc -l < w) = 163 ] &&
	$KMT dump -a --time 0.000223561,0.000228724 real.dat | tail -n +2 | awk "{ print \$3 }" | tr "\n" " " |
		has -x "rcu_preempt-15 rcu_preempt-15 "
'

# The symbol and offset dump prints, and the address --raw-ip prints in
# its place, agree with the file's kallsyms as trace-cmd reads it.
test_expect_success '--raw-ip: each call site as the address its symbol+offset names' '
	$KMT dump real.dat | tail -n +2 > named && $KMT dump --raw-ip real.dat | tail -n +2 > raw &&
	[ $(wc -l < raw) = 547 ] &&
	awk "{ \$5 = \"\" } 1" named > a && awk "{ \$5 = \"\" } 1" raw > b && cmp a b &&
	awk "{ print \$5 }" named > n5 && awk "{ print \$5 }" raw > r5 && paste -d " " n5 r5 | grep "+0x" | sort -u > pairs &&
	[ $(wc -l < pairs) = $(grep "+0x" n5 | sort -u | wc -l) ] &&
	[ $(wc -l < pairs) = $(paste -d " " n5 r5 | grep "+0x" | cut -d " " -f 2 | sort -u | wc -l) ] &&
	syms real.dat > ks && while read -r site addr; do
		fn=${site%+0x*} off=${site##*+}
		sym=$(awk -v f="$fn" "\$3 == f { print \$1; exit }" ks) && [ -n "$sym" ] &&
		[ $((0x$sym + off)) = $((addr)) ] || { echo "$site is not $addr"; exit 1; }
	done < pairs && echo "$(wc -l < pairs) call sites" && [ $(wc -l < pairs) = 71 ] &&
	! cut -d " " -f 2 pairs | grep -v "^0xffffffff[0-9a-f]\{8\}$"
'

test_expect_success '--hash-pointers=KEY: every pointer and pfn a keyed hash, one to one; the same key, the same hashes' '
	$KMT dump real.dat | tail -n +2 > plain &&
	$KMT dump --hash-pointers=k1 real.dat | tail -n +2 > h1 && $KMT dump --hash-pointers=k1 real.dat | tail -n +2 | cmp - h1 &&
	$KMT dump --hash-pointers=k2 real.dat | tail -n +2 > h2 &&
	vals() { grep -o " \(ptr\|pfn\)=[^ ]*" "$1" | sed "s/.*=//"; } &&
	vals plain > v0 && vals h1 > v1 && vals h2 > v2 && [ $(wc -l < v0) = 547 ] &&
	! grep -v "^h:[0-9a-f]\{16\}$" v1 && ! grep -v "^h:[0-9a-f]\{16\}$" v2 &&
	[ $(sort -u v0 | wc -l) = $(sort -u v1 | wc -l) ] && [ $(paste v0 v1 | sort -u | wc -l) = $(sort -u v0 | wc -l) ] &&
	[ $(paste v1 v2 | awk "\$1 == \$2" | wc -l) = 0 ] &&
	sed "s/ \(ptr\|pfn\)=[^ ]*//" plain > p0 && sed "s/ \(ptr\|pfn\)=[^ ]*//" h1 | cmp - p0 &&
	! grep "0xffff" h1 && grep -q "getname_flags.part.0+0x24 ptr=h:" h1
'

test_expect_success '--hash-pointers with no key: a new key each run; with --raw-ip, call sites hashed too' '
	$KMT dump --hash-pointers real.dat | tail -n +2 > r1 && $KMT dump --hash-pointers real.dat | tail -n +2 > r2 &&
	! cmp -s r1 r2 && sed "s/ \(ptr\|pfn\)=[^ ]*//" r1 > s1 && sed "s/ \(ptr\|pfn\)=[^ ]*//" r2 | cmp - s1 &&
	$KMT dump --raw-ip --hash-pointers=k1 real.dat | tail -n +2 > rh && [ $(wc -l < rh) = 547 ] &&
	! grep "0xffff" rh && awk "\$5 !~ /^h:[0-9a-f]+\$/ && \$4 != \"percpu_free_percpu\" && \$4 !~ /^mm_page/" rh > odd &&
	cat odd && [ ! -s odd ] && paste -d " " <(awk "{ print \$5 }" rh) <(awk "{ print \$5 }" raw) | grep "^h:" | sort -u > hp &&
	[ $(wc -l < hp) = $(cut -d " " -f 1 hp | sort -u | wc -l) ] && [ $(wc -l < hp) = $(cut -d " " -f 2 hp | sort -u | wc -l) ]
'

test_expect_success 'FILE defaults to kmemtrace.dat; -h is --help; one FILE only (exit 2)' '
	mkdir def.d && cp real.dat def.d/kmemtrace.dat && (cd def.d && $KMT dump > ../def) &&
	sed -n 1p def | has "^# kmemtrace.dat: times are" && $KMT dump real.dat | tail -n +2 | cmp - <(tail -n +2 def) &&
	test_expect_code 1 $KMT dump > out 2> err && [ ! -s out ] &&
	[ "$(cat err)" = "kmemtrace dump: cannot open '"'"'kmemtrace.dat'"'"': No such file or directory" ] &&
	$KMT dump -h > h1 && $KMT dump --help > h2 && cmp h1 h2 && sed -n 1p h1 | has -x "usage: kmemtrace dump \[options\] \[FILE\]" &&
	test_expect_code 2 $KMT dump real.dat real.dat > out 2> err && [ ! -s out ] &&
	printf "%s\n" "kmemtrace dump: too many arguments" "see '"'"'kmemtrace dump --help'"'"'" | diff - err
'

test_expect_success 'missing, not a trace, empty: one line naming the file (and the offset), exit 1, no output' '
	echo "not a trace" > junk.dat && : > empty.dat &&
	while IFS="|" read -r f msg; do
		test_expect_code 1 $KMT dump $f > out 2> err && cat err && [ ! -s out ] &&
		[ "$(cat err)" = "kmemtrace dump: $msg" ] || exit 1
	done <<-EOF
	no.dat|cannot open '"'"'no.dat'"'"': No such file or directory
	junk.dat|junk.dat: file header at offset 0 (0x0): not a trace.dat file (bad magic)
	empty.dat|empty.dat: file header at offset 0 (0x0): the file is empty
	EOF
'

# Cut where CPU 1's data starts (16384, trace-cmd dump says): CPU 0's
# events are whole.
test_expect_success 'a cut file: every event before the cut, the byte it ends at, exit 1' '
	head -c 16384 real.dat > c1.dat && test_expect_code 1 $KMT dump c1.dat > out 2> err && cat err &&
	$KMT dump real.dat | grep "^ .* \[000\] " > cpu0 &&
	grep -v "^#" out > got && [ "$(grep -vc "^ .* \[000\] " got)" = 1 ] &&
	grep -qx "OTHER CPUS: DATA MISSING (the file ends at byte 16384)" got &&
	grep -v "^OTHER CPUS" got | diff - cpu0 && [ $(wc -l < cpu0) = 544 ] &&
	grep -qx "kmemtrace dump: warning: c1.dat: the data of any CPU after byte 16384 is missing" err &&
	tail -n 1 err | has -x "kmemtrace dump: c1.dat is damaged: the output above leaves out what could not be read"
'

# Chunk 5 of CPU 1 holds 142 of its memory events, one after the other
# (its watchpoint samples, in a buffer of their own, are all there).
test_expect_success 'a chunk that does not inflate: a line where it was, every other event, exit 1' '
	cp synth.dat bad.dat && off=$(chunk_offset synth.dat 1 5) && end=$(chunk_offset synth.dat 1 6) &&
	break_chunk bad.dat $off && test_expect_code 1 $KMT dump bad.dat > out 2> err && cat err &&
	grep -n "DAMAGED" out > at && [ "$(cut -d: -f2- at)" = "CPU 1: DAMAGED DATA SKIPPED HERE (bytes $off-$end)" ] &&
	$KMT dump synth.dat | tail -n +2 > whole && tail -n +2 out | grep -v "DAMAGED" > rest &&
	test_expect_code 1 diff whole rest > delta && grep "^[<>]" delta | cut -c 3- > lost && ! grep -v "^ .* \[001\] " lost &&
	[ $(wc -l < lost) = 142 ] && [ $(wc -l < whole) = 2345 ] &&
	grep " \[001\] " whole | grep -v " access " | grep -A 141 -xF "$(sed -n 1p lost)" | diff - lost &&
	grep -qxF "kmemtrace dump: warning: bad.dat: CPU 1 data: skipped 1 chunk at bytes $off-$end ($(printf "0x%x-0x%x" $off $end)): chunk 5 of 8 does not inflate to 16384 bytes" err
'

# report, kmap and export, whose -p, --comm and --time are declared once
# with dump's (src/report/input.h), warn of a filter that matches nothing
# and refuse a window past the end, as the manual says (EXIT STATUS).
test_expect_success '-p, --comm matching nothing: a warning, exit 0, as report says it' '
	$KMT dump -p 99999 real.dat > out 2> err && cat err && [ "$(grep -vc "^#" out)" = 0 ] &&
	[ "$(cat err)" = "kmemtrace dump: warning: real.dat: no task with pid 99999 is in the trace: nothing to report" ] &&
	$KMT dump --comm nosuch real.dat > out 2> err && [ $(wc -l < err) = 1 ] && grep -q "warning: real.dat: no task" err
'

# An event 32,185 ns after the first: 0.000032185 * 1e9 is 32184.999...,
# which a window's end cut to the nanosecond would leave the event out of
# (kmt_window_at() rounds it).
test_expect_success '--time: an END given to the nanosecond of an event keeps it in (seconds rounded, not cut, to ns)' '
	trace-cmd report -t real.dat 2> /dev/null | sed -n 14p | has "\[000\] *4153.938824217: mm_page_alloc: " &&
	trace-cmd report -t real.dat 2> /dev/null | sed -n 2p | has "\[000\] *4153.938792032: " &&
	$KMT dump -a --time 0.000032,0.000032185 real.dat | tail -n +2 > w && cat w &&
	[ $(wc -l < w) = 1 ] && has " mm_page_alloc pfn=0x12b9e2 " < w
'

test_expect_success '--time past the end of the trace: one line, exit 1, as report says it' '
	test_expect_code 1 $KMT dump --time 100,200 real.dat > out 2> err && cat err &&
	[ "$(cat err)" = "kmemtrace dump: real.dat: the window starts at 100.000000 s, but the trace ends at 0.001338 s" ]
'

test_done
