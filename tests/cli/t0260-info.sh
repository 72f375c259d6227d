#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace info on files whose contents are known: the committed real
# recordings (v6, v7 none, zlib, zstd, and trace-cmd's own extract), held
# line by line to what trace-cmd dump and trace-cmd report read in them,
# and kmt-synth's traces, held to the counts their source makes. Its
# errors: a missing file, one that is not a trace, one of another version,
# one cut short (what is left is counted, the byte is named, exit 1). No
# root, no tracefs.
. "$(dirname "$0")/lib.sh"
DATA=$ROOT/tests/data/traces
REAL="real-v6.dat real-v7-none.dat real-v7-zstd.dat tracecmd-extract-v7.dat"

# What info prints of FILE's header (format to the buffers' CPU data),
# trailing blanks dropped.
info_header() {	# file
	$KMT info "$1" > info.out && sed -n '/^format:/,/^$/p' info.out | grep -v '^$' | sed 's/ *$//'
}
# The same lines, from what trace-cmd dump reads in the file: its summary
# (version, byte order, long size, page size, compression), its options
# (kernel, recorder, clock, CPU count), the formats of its events, and its
# flyrecord section (each CPU's data: offset and size).
tc_header() {	# file
	local n
	trace-cmd dump --summary "$1" > tc.sum 2>&1 && trace-cmd dump --options "$1" > tc.opt 2>&1 &&
	trace-cmd dump --flyrecord "$1" > tc.fly 2>&1 &&
	n=$(($(trace-cmd dump --events "$1" 2> /dev/null | grep -c "^name:") +
	     $(trace-cmd dump --ftrace-events "$1" 2> /dev/null | grep -c "^name:"))) &&
	awk -v n=$n '
	function comma(v,  s) { s = ""; while (v >= 1000) { s = sprintf(",%03d", v % 1000) s; v = int(v / 1000) } return v s }
	FNR == 1 { f++ }
	f == 1 && /\[Version\]/ { ver = $1 } f == 1 && /\[Little endian\]/ { endian = $1 ? "big" : "little" }
	f == 1 && /\[Bytes in a long\]/ { bits = $1 * 8 } f == 1 && /\[Page size, bytes\]/ { page = $1 }
	f == 1 && /\[Compression algorithm\]/ { alg = $1 } f == 1 && /\[Compression version\]/ { zver = $1 ~ /^\[/ ? "" : $1 }
	f == 2 && want { opt[want] = $0; want = "" }
	f == 2 && /\[Option (UNAME|VERSION|CPUCOUNT|TRACECLOCK),/ { want = $2; sub(/,$/, "", want) }
	f == 3 && /\[id, data offset and size\]$/ { off[nc + 0] = $2; size[nc++ + 0] = $3 }
	f == 3 && /\[offset, size of cpu [0-9]*\]$/ { off[nc + 0] = $1; size[nc++ + 0] = $2 }
	END {
		if (alg == "") alg = "none"
		clock = opt["TRACECLOCK"]; sub(/.*\[/, "", clock); sub(/\].*/, "", clock)
		printf "format:     trace.dat v%d, %s endian, %d-bit kernel, page %d, compression %s%s\n",
			ver, endian, bits, page, alg, zver == "" ? "" : " " zver
		print "recorder:   " opt["VERSION"]
		print "kernel:     " opt["UNAME"]
		print "clock:      " clock
		print "CPUs:       " opt["CPUCOUNT"]
		print "formats:    " n " events"
		print "cgroups:    not recorded"	# these files have no kmemtrace option 0x4b03
		printf "buffer:     \"\" (main): %d CPUs, sub-buffer %d%s\n", nc, page, alg == "none" ? "" : ", compressed"
		for (i = 0; i < nc; i++)
			printf "            CPU %d data: offset 0x%x, %s bytes\n", i, off[i], comma(size[i])
	}' tc.sum tc.opt tc.fly
}
# Records per event type, "NAME COUNT" sorted: info's (its event table),
# and trace-cmd report's.
info_events() { $KMT info "$1" > ev.out && awk '/^event  / { on = 1; next } on { sub(/.*:/, "", $1); gsub(/,/, "", $2); print $1, $2 }' ev.out | sort; }
tc_events() {
	trace-cmd report "$1" 2> /dev/null | sed -n 's/.*\] *[0-9.]*: \([a-z_0-9]*\): .*/\1/p' | sort | uniq -c |
		awk '{ print $2, $1 }'
}
# Events per CPU, "CPU COUNT": info's table, and trace-cmd report's.
info_cpus() { $KMT info "$1" > cpu.out && awk '/^CPU  / { on = 1; next } on && /^[0-9]/ { gsub(/,/, "", $2); print $1, $2 } /^all/ { exit }' cpu.out; }
tc_cpus() {
	trace-cmd report "$1" 2> /dev/null | sed -n 's/.* \[0*\([0-9][0-9]*\)\] .*/\1/p' | sort -n | uniq -c |
		awk '{ print $2, $1 }'
}

test_expect_success 'the inputs' '
	command -v trace-cmd > /dev/null || { echo "trace-cmd is missing (make deps)"; exit 1; }
	cp $DATA/*.dat . && cp real-v7-zstd.dat real.dat &&
	$SYNTH full synth.dat && $SYNTH unnamed unnamed.dat
'

test_expect_success 'format, recorder, kernel, clock, CPUs, formats, buffers: what trace-cmd dump reads' '
	for f in $REAL; do
		tc_header $f > expect && info_header $f > got && echo "$f:" && cat got &&
		diff -u expect got || exit 1
	done &&
	grep -qx "format:     trace.dat v7, little endian, 64-bit kernel, page 4096, compression zstd 1.5.4" got &&
	grep -qx "            CPU 1 data: offset 0x22000, 1,685 bytes" got
'

test_expect_success 'records per event type: what trace-cmd report counts, in every file' '
	for f in $REAL; do
		tc_events $f > expect && info_events $f > got && echo "$f: $(tr "\n" " " < got)" &&
		[ -s expect ] && diff -u expect got || exit 1
	done &&
	info_events real.dat | awk "{ n += \$2 } END { print n }" | has -x 550 &&
	info_events tracecmd-extract-v7.dat | tr "\n" " " | has -x "kfree 285 kmalloc 62 "
'

# A page of a v6 or uncompressed v7 file is its 4096 bytes of the file; a
# compressed file holds the same pages, counted once inflated.
test_expect_success 'events per CPU: what trace-cmd report counts; pages: the 4 KiB sub-buffers of the data' '
	for f in $REAL; do
		tc_cpus $f > expect && info_cpus $f > got && echo "$f: $(tr "\n" " " < got)" &&
		diff -u expect got || exit 1
	done &&
	for f in real-v6.dat real-v7-none.dat real-v7-zstd.dat real-v7-zlib.dat; do
		$KMT info $f > i && sed -n "/^CPU  /,/^all/p" i | tr -s " " > rows &&
		printf "%s\n" "CPU events pages data-MiB lost gaps" "0 547 7 0.0 0 0" "1 3 1 0.0 0 0" "all 550 8 0.0 0 0" |
			diff -u - rows || exit 1
	done &&
	trace-cmd dump --flyrecord real-v6.dat 2> /dev/null | awk "/size of cpu/ { print \$2 / 4096 }" | tr "\n" " " |
		has -x "7 1 " &&
	$KMT info tracecmd-extract-v7.dat | sed -n "/^CPU  /,/^all/p" | tr -s " " | sed -n 4p | has -x "all 347 4 0.0 0 0"
'

# trace-cmd 3.1.6 cannot read zlib: the zlib file says what the zstd one
# says, but for its name, size, compression and compressed data.
test_expect_success 'the zlib file: what the zstd file of the same recording says' '
	$KMT info real-v7-zlib.dat > z && $KMT info real-v7-zstd.dat > s &&
	grep -qx "format:     trace.dat v7, little endian, 64-bit kernel, page 4096, compression zlib 1.2.13" z &&
	grep -q "^            CPU 0 data: offset 0x2000, 4,798 bytes$" z &&
	grep -v "^file:\|^format:\|CPU . data:" z > z.rest && grep -v "^file:\|^format:\|CPU . data:" s > s.rest &&
	diff -u s.rest z.rest && [ $(wc -l < z.rest) = 26 ]
'

test_expect_success 'file: its name as given, and its size' '
	$KMT info real.dat | sed -n 1p | has -x "file:       real.dat (16.8 KiB)" &&
	[ $(stat -c %s real.dat) = 17244 ] &&
	mkdir sub && cp real-v6.dat sub/ && $KMT info sub/real-v6.dat | sed -n 1p | has -x "file:       sub/real-v6.dat (80.0 KiB)"
'

# kmt-synth full (tests/tools/kmt-synth.c), 1,000 steps of 2 ms on CPUs 0
# and 1 in turn: an allocation a step, 4 more in steps 400-499, 4 more for
# the misuse at the end (1,404), each with its stack; a free in every step
# from 2 on but every third (665) and 5 in the misuse (670: 427 kfree, 243
# kmem_cache_free); a page every 10th step (100), a vmalloc area every 50th
# (20), a fork at the start and every 100th (11); 250 events lost on CPU 1
# (one gap); 3 watchpoint samples every 20th step, all on CPU 1 (150).
test_expect_success 'kmt-synth full: the counts its source makes, losses and watchpoint samples' '
	$KMT info synth.dat > i && cat i &&
	sed -n "/^CPU  /,\$p" i | tr -s " " > got &&
	printf "%s\n" "CPU events pages data-MiB lost gaps" "0 1,856 30 0.1 0 0" "1 1,753 29 0.1 250 1" \
		"all 3,609 59 0.2 250 1" "" "event records" "ftrace:kernel_stack 1,404" \
		"sched:sched_process_fork 11" "kmem:mm_page_alloc 100" "kmem:kmem_cache_free 243" "kmem:kfree 427" \
		"kmem:kmalloc 1,002" "kmem:kmem_cache_alloc 402" "vmalloc:alloc_vmap_area 20" "" \
		"watchpoint samples: 150, lost 0 (CPU 0: 0, CPU 1: 150)" > expect &&
	diff -u expect got &&
	grep -qx "buffer:     \"kmemtrace-access\": 2 CPUs, sub-buffer 4096, compressed" i &&
	grep -qx "buffer:     \"\" (main): 2 CPUs, sub-buffer 4096, compressed" i &&
	grep -qx "recorder:   tbuild" i && grep -qx "kernel:     Linux test 6.18.0 x86_64" i &&
	grep -qx "formats:    18 events" i && ! grep -q "^lacks:" i
'

test_expect_success 'a kernel before 6.18: lacks: says what its events do not carry' '
	$KMT info unnamed.dat > i && sed -n "/^kernel:/,/^clock:/p" i > got && cat got &&
	printf "%s\n" "kernel:     Linux test 6.6.87 x86_64" \
		"lacks:      kmem_cache_alloc names no cache (before 6.18): an object is named by its free, its slab page or its size" \
		"clock:      local" | diff -u - got
'

test_expect_success 'FILE defaults to kmemtrace.dat; -h is --help; one FILE only (exit 2)' '
	mkdir d && cp real.dat d/kmemtrace.dat && (cd d && $KMT info > ../def) &&
	sed -n 1p def | has -x "file:       kmemtrace.dat (16.8 KiB)" && $KMT info real.dat | tail -n +2 | diff - <(tail -n +2 def) &&
	test_expect_code 1 $KMT info > out 2> err && [ ! -s out ] &&
	[ "$(cat err)" = "kmemtrace info: cannot open '"'"'kmemtrace.dat'"'"': No such file or directory" ] &&
	$KMT info -h > h1 && $KMT info --help > h2 && cmp h1 h2 && sed -n 1p h1 | has -x "usage: kmemtrace info \[FILE\]" &&
	grep -E "^  (-., )?--" h1 > opts && [ "$(cat opts)" = "  -h, --help               this text" ] &&
	test_expect_code 2 $KMT info real.dat real.dat > out 2> err && [ ! -s out ] &&
	printf "%s\n" "kmemtrace info: too many arguments" "see '"'"'kmemtrace info --help'"'"'" | diff - err
'

test_expect_success 'a missing trace file: one line naming it, exit 1' '
	rc=0; $KMT info /nonexistent.dat 2> err || rc=$?; [ $rc -eq 1 ] &&
	[ $(wc -l < err) -eq 1 ] && grep -q "/nonexistent.dat" err
'

test_expect_success 'a file that is not a trace: one line with file and offset' '
	echo "not a trace" > junk.dat &&
	rc=0; $KMT info junk.dat 2> err || rc=$?; [ $rc -eq 1 ] &&
	grep -q "junk.dat: file header at offset 0" err
'

test_expect_success 'empty, another version, a directory: one line each, exit 1, nothing on stdout' '
	: > empty.dat && head -c 10 real.dat > v9.dat && printf "9\0" >> v9.dat && mkdir dir.dat &&
	while IFS="|" read -r f msg; do
		test_expect_code 1 $KMT info $f > out 2> err && cat err && [ ! -s out ] &&
		[ "$(cat err)" = "kmemtrace info: $msg" ] || exit 1
	done <<-EOF
	empty.dat|empty.dat: file header at offset 0 (0x0): the file is empty
	v9.dat|v9.dat: file header at offset 0 (0x0): file version '"'"'9'"'"' (supported: 6, 7)
	dir.dat|'"'"'dir.dat'"'"' is not a regular file
	EOF
'

# The offsets trace-cmd dump gives: the headers end where the ftrace events
# start (315), the flyrecord section where the options section starts
# (16492), and CPU 1's data starts at 16384.
test_expect_success 'a cut file: what is left, counted exactly; the byte it ends at; exit 1' '
	trace-cmd dump --options real.dat 2> /dev/null | has "Option FTRACE EVENTS, 8 bytes\] @ 315$" &&
	trace-cmd dump --options real.dat 2> /dev/null | has "Section 0 @ 16492: \"options\"" &&
	trace-cmd dump --flyrecord real.dat 2> /dev/null | has "^   1 16384	104	" &&
	head -c 100 real.dat > h.dat && test_expect_code 1 $KMT info h.dat > out 2> err && [ ! -s out ] &&
	[ "$(cat err)" = "kmemtrace info: h.dat: truncated at byte 100 of 315 (section '"'"'headers'"'"'): the headers section, which the events need, is not whole" ] &&
	head -c 16384 real.dat > c1.dat && test_expect_code 1 $KMT info c1.dat > out 2> err && cat err &&
	grep -qx "            CPU 0 data: offset 0x2000, 4,723 bytes" out &&
	grep -qx "            the data of any other CPU: missing (the file ends before it)" out &&
	sed -n "/^CPU  /,/^all/p" out | tr -s " " | tail -n 2 | tr "\n" "|" | has -x "0 547 7 0.0 0 0|all 547 7 0.0 0 0|" &&
	grep -qx "kmemtrace info: warning: c1.dat: truncated at byte 16384 of 16492 (section '"'"'flyrecord'"'"')" err &&
	grep -qx "kmemtrace info: warning: c1.dat: the data of any CPU after byte 16384 is missing" err &&
	tail -n 1 err | has -x "kmemtrace info: c1.dat is damaged: the output above leaves out what could not be read"
'

# Its options section is the last thing in the file: cut there, every event
# is in, what the options said (kernel, clock, recorder) is not.
test_expect_success 'a file cut inside its options: every event, the options said lost, exit 1' '
	head -c 17000 real.dat > c2.dat && test_expect_code 1 $KMT info c2.dat > out 2> err && cat err &&
	sed -n "/^CPU  /,/^all/p" out | tr -s " " | tail -n 1 | has -x "all 550 8 0.0 0 0" &&
	grep -qx "clock:      (unknown)" out && ! grep -q "^kernel:\|^recorder:" out &&
	grep -qx "kmemtrace info: warning: c2.dat: truncated at byte 17000 of 17128 (section '"'"'options'"'"')" err
'

# Chunk 5 of CPU 1's 8 holds 4 of its 29 pages (16 KiB): 244 of its events.
test_expect_success 'a chunk that does not inflate: the rest counted, CPU and bytes named, exit 1' '
	cp synth.dat bad.dat && off=$(chunk_offset synth.dat 1 5) && end=$(chunk_offset synth.dat 1 6) &&
	break_chunk bad.dat $off && test_expect_code 1 $KMT info bad.dat > out 2> err && cat err &&
	grep -qxF "kmemtrace info: warning: bad.dat: CPU 1 data: skipped 1 chunk at bytes $off-$end ($(printf "0x%x-0x%x" $off $end)): chunk 5 of 8 does not inflate to 16384 bytes" err &&
	tail -n 1 err | has -x "kmemtrace info: bad.dat is damaged: the output above leaves out what could not be read" &&
	sed -n "/^CPU  /,/^all/p" out | tr -s " " | tail -n 3 > rows && cat rows &&
	printf "%s\n" "0 1,856 30 0.1 0 0" "1 1,509 25 0.1 250 1" "all 3,365 55 0.2 250 1" | diff - rows
'

test_expect_success 'no line of info ends in a blank (v6 and uncompressed: "compression none ")' '
	$KMT info real-v6.dat > i6 && ! grep -n " \$" i6
'

test_done
