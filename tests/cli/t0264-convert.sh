#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace convert on the committed real recordings and kmt-synth's
# traces: every way round between v6 and v7 (none, zstd, zlib), info and
# report --json count the same, trace-cmd report reads the same lines, and
# the committed files come back byte for byte; each option (--level,
# --strip-kallsyms, -B, -o) with exact results; what it refuses (a bad
# value, a missing, foreign or damaged input, an output that is not a
# trace) and what it keeps (a trace it replaces, as FILE.old). No root, no
# tracefs.
. "$(dirname "$0")/lib.sh"
DATA=$ROOT/tests/data/traces
command -v jq > /dev/null || test_skip_all "jq is not installed"

# The lines of a file's kallsyms, as trace-cmd reads them.
syms() { trace-cmd dump --kallsyms "$1" 2> /dev/null | grep -v -e "^	\[" -e "^$"; }
# What info counts (events, pages, losses per CPU; records per event type),
# and report --json but for the file's name and version.
counts() {	# file
	$KMT info "$1" > c.info && sed -n "/^CPU  /,\$p" c.info &&
	$KMT report --json -n 0 "$1" > c.json && jq -S "del(.file, .file_version)" c.json
}
# The targets: v6, and v7 uncompressed, zstd (the default) and zlib.
TARGETS="v6:--file-version=6 none:--compression=none zstd: zlib:--compression=zlib"

test_expect_success 'the inputs' '
	command -v trace-cmd > /dev/null || { echo "trace-cmd is missing (make deps)"; exit 1; }
	cp $DATA/*.dat . && cp real-v7-zstd.dat real.dat && cp tracecmd-extract-v7.dat tc.dat &&
	$SYNTH full synth.dat && $SYNTH idle idle.dat
'

test_expect_success 'every way round between v6, v7 none, zstd and zlib: info and report --json count the same' '
	for src in real-v6.dat real-v7-none.dat real-v7-zlib.dat real-v7-zstd.dat tc.dat; do
		counts $src > want.$src || exit 1
		for t in $TARGETS; do
			out=${src%.dat}-to-${t%%:*}.dat
			$KMT convert ${t#*:} $src $out 2> err && counts $out > got && diff -u want.$src got &&
			case $t in v6:*) v=6 z=none ;; *) v=7 z=${t%%:*} ;; esac &&
			$KMT info $out | sed -n 2p | has "trace.dat v$v, .* compression $z" ||
				{ echo "$src -> ${t%%:*}"; cat err; exit 1; }
		done
		echo "$src: $(jq .summary.events c.json) events, the same in v6, none, zstd and zlib"
	done &&
	[ "$(jq .summary.events c.json)" = 347 ] && jq .summary.events <($KMT report --json real-v6-to-zlib.dat) | has -x 550 &&
	$KMT info real-v6-to-zlib.dat | sed -n "/^all /p" | tr -s " " | has -x "all 550 8 0.0 0 0"
'

test_expect_success 'trace-cmd report reads every conversion but zlib'"'"'s: the lines it reads in the original' '
	trace-cmd report real.dat > want.real 2> /dev/null && [ $(grep -c ": kmalloc: " want.real) = 17 ] &&
	trace-cmd report tc.dat > want.tc 2> /dev/null && [ $(grep -c ": kfree: " want.tc) = 285 ] &&
	for f in real-*-to-v6.dat real-*-to-none.dat real-*-to-zstd.dat tc-to-*.dat; do
		case $f in *-to-zlib.dat) continue ;; tc-*) w=want.tc ;; *) w=want.real ;; esac
		trace-cmd report $f > got 2> /dev/null && diff -q $w got > /dev/null || { echo "$f:"; diff $w got | head; exit 1; }
	done &&
	$KMT convert real-v7-zlib.dat fromzlib.dat 2> /dev/null && trace-cmd report fromzlib.dat 2> /dev/null | cmp - want.real
'

# The committed files are convert's own output (tests/data/traces/README):
# converting any of them gives the others, byte for byte.
test_expect_success 'convert is deterministic: the committed files come back byte for byte' '
	$KMT convert --file-version 6 real-v7-zlib.dat a6.dat && cmp a6.dat real-v6.dat &&
	$KMT convert --compression none a6.dat anone.dat && cmp anone.dat real-v7-none.dat &&
	$KMT convert --compression zlib anone.dat azlib.dat 2> /dev/null && cmp azlib.dat real-v7-zlib.dat &&
	$KMT convert azlib.dat azstd.dat && cmp azstd.dat real-v7-zstd.dat &&
	$KMT convert tc.dat tc2.dat && cmp tc2.dat tc.dat &&
	$KMT convert --file-version 6 tc.dat tc6.dat && $KMT convert tc6.dat tc7.dat && cmp tc7.dat tc.dat
'

test_expect_success 'convert follows the same rules' '
	echo "my notes" > notes.txt && mkdir outdir &&
	$KMT convert real.dat c.dat && $KMT convert tc.dat c.dat 2> err && cat err &&
	grep -q "kept as c.dat.old" err && cmp c.dat.old real.dat && cmp c.dat tc.dat &&
	rc=0; $KMT convert real.dat notes.txt 2> err || rc=$?; [ $rc -eq 1 ] && grep -q "not a trace file" err &&
	rc=0; $KMT convert real.dat outdir 2> err || rc=$?; [ $rc -eq 1 ] && grep -q "is a directory" err &&
	[ "$(cat notes.txt)" = "my notes" ] && [ -z "$(ls outdir)" ]
'

test_expect_success 'convert: v6 has no compression; zlib is not for Debian 12'"'"'s trace-cmd' '
	rc=0; $KMT convert --file-version 6 --compression zstd real.dat v6.dat 2> err || rc=$?;
	cat err; [ $rc -eq 2 ] && grep -q "v6 has no compression" err && [ ! -e v6.dat ] &&
	$KMT convert --compression zlib real.dat z.dat 2> err && cat err && grep -q "cannot read zlib" err &&
	$KMT convert --file-version 6 real.dat v6.dat && $KMT info v6.dat | has "trace.dat v6"
'

test_expect_success 'IN OUT is -o OUT IN; "wrote OUT" on stderr, nothing on stdout; the same file: its old self kept' '
	$KMT convert real-v6.dat o1.dat > out 2> err && [ ! -s out ] && [ "$(cat err)" = "kmemtrace convert: wrote o1.dat" ] &&
	$KMT convert -o o2.dat real-v6.dat 2> err && [ "$(cat err)" = "kmemtrace convert: wrote o2.dat" ] &&
	$KMT convert --output o3.dat real-v6.dat 2> /dev/null && cmp o1.dat o2.dat && cmp o1.dat o3.dat && cmp o1.dat real.dat &&
	[ "$(stat -c %a o1.dat)" = 600 ] &&
	cp real.dat same.dat && $KMT convert --file-version 6 same.dat same.dat 2> err && cat err &&
	printf "%s\n" "kmemtrace convert: the previous same.dat is kept as same.dat.old" "kmemtrace convert: wrote same.dat" |
		diff - err && cmp same.dat real-v6.dat && cmp same.dat.old real.dat
'

test_expect_success 'IN and OUT, or -o OUT and IN, and nothing else: usage errors (exit 2), nothing written' '
	while IFS="|" read -r args msg; do
		test_expect_code 2 $KMT convert $args > out 2> err && cat err && [ ! -s out ] &&
		printf "%s\n" "kmemtrace convert: $msg" "see '"'"'kmemtrace convert --help'"'"'" | diff - err || exit 1
	done <<-EOF &&
	|need IN and OUT
	real.dat|need IN and OUT
	real.dat u1.dat u2.dat|need IN and OUT
	-o u1.dat|need IN (and OUT once: -o OUT, or after IN)
	-o u1.dat real.dat u2.dat|need IN (and OUT once: -o OUT, or after IN)
	EOF
	! ls u1.dat u2.dat 2> /dev/null
'

test_expect_success '--file-version 6 or 7, --compression none, zstd or zlib: anything else a usage error' '
	while IFS="|" read -r args msg; do
		test_expect_code 2 $KMT convert $args real.dat bad.dat > out 2> err && cat err && [ ! -s out ] &&
		[ "$(sed -n 1p err)" = "kmemtrace convert: $msg" ] && [ ! -e bad.dat ] || exit 1
	done <<-EOF &&
	--file-version 5|bad file version '"'"'5'"'"' (6 or 7)
	--file-version 8|bad file version '"'"'8'"'"' (6 or 7)
	--file-version seven|bad file version '"'"'seven'"'"' (6 or 7)
	--compression lz4|bad compression '"'"'lz4'"'"' (none, zstd, zlib)
	--compression ZSTD|bad compression '"'"'ZSTD'"'"' (none, zstd, zlib)
	--file-version 6 --compression zlib|trace.dat v6 has no compression: use --file-version 7, or --compression none
	EOF
	$KMT convert --file-version 7 --compression zstd real-v6.dat seven.dat 2> /dev/null && cmp seven.dat real.dat &&
	$KMT convert --file-version 6 --compression none real.dat six.dat 2> /dev/null && cmp six.dat real-v6.dat
'

# The same events at any level; the level shows in the size of the
# compressed data (zstd -7, its fastest, makes the largest).
test_expect_success '--level: zstd -7 to 22, the same events; out of range a usage error, nothing written' '
	for l in -7 0 1 3 19 22; do
		$KMT convert --level $l real-v6.dat l$l.dat 2> /dev/null && counts l$l.dat > got &&
		diff -q want.real-v7-zstd.dat got > /dev/null || { echo "--level $l"; exit 1; }
	done &&
	cmp l1.dat real.dat && [ $(stat -c %s l-7.dat) -gt $(stat -c %s l1.dat) ] && ! cmp -s l19.dat l1.dat &&
	for l in 23 -8 x 1.5 ""; do
		test_expect_code 2 $KMT convert --level "$l" real.dat lx.dat > out 2> err && [ ! -s out ] &&
		[ "$(sed -n 1p err)" = "kmemtrace convert: bad level '"'"'$l'"'"' (zstd -7 to 22, zlib 0 to 9)" ] &&
		[ ! -e lx.dat ] || { cat err; exit 1; }
	done &&
	$KMT convert --level 5 --compression none real-v6.dat n5.dat 2> /dev/null && cmp n5.dat real-v7-none.dat
'

test_expect_success '--compression zlib --level 1 to 9: the same events; 9 is the default' '
	for l in 1 5 9; do
		$KMT convert --compression zlib --level $l real.dat z$l.dat 2> /dev/null && counts z$l.dat > got &&
		diff -q want.real-v7-zstd.dat got > /dev/null || { echo "--level $l"; exit 1; }
	done &&
	cmp z9.dat real-v7-zlib.dat && [ $(stat -c %s z1.dat) -gt $(stat -c %s z9.dat) ]
'

# zlib's levels are 0 (stored) to 9, as the message says.
test_expect_success '--compression zlib --level 10: a usage error, as --level 23 is' '
	test_expect_code 2 $KMT convert --compression zlib --level 10 real.dat zx.dat 2> err &&
	grep -qx "kmemtrace convert: bad level .10. (.*zlib 0 to 9)" err && [ ! -e zx.dat ]
'

test_expect_success '--compression zlib --level 0: stored, not compressed (zlib'"'"'s level 0)' '
	$KMT convert --compression zlib --level 0 real.dat z0.dat 2> /dev/null && counts z0.dat > got &&
	diff -q want.real-v7-zstd.dat got > /dev/null &&
	[ $(stat -c %s z0.dat) -gt $(stat -c %s real-v7-none.dat) ]
'

# kmt-synth idle (tests/tools/kmt-synth.c) names functions 4 and 7 (its
# call sites), 5 (a kmalloc) and its stack: 0, 1, 10, 11 and 12. Each is
# kept with the function after it (which bounds it): 2, 6, 8 and 13 too.
# Left out: 3, 9, 14 and 15 (do_sys_open, __x64_sys_openat,
# inode_init_once, zzz_end) of the 16.
test_expect_success '--strip-kallsyms: the functions the events name, and the one after each; readers say the same' '
	$KMT convert idle.dat whole.dat && $KMT convert --strip-kallsyms idle.dat cut.dat &&
	syms whole.dat > whole.syms && syms cut.dat > cut.syms && [ $(wc -l < whole.syms) = 16 ] &&
	awk "{ print \$3 }" cut.syms > kept && cat kept | tr "\n" " " &&
	printf "%s\n" trace_event_raw_event_kmalloc __kmalloc_noprof kmem_cache_alloc_noprof alloc_inode \
		seq_read_iter load_elf_binary kfree_sensible sock_alloc_send_pskb __x64_sys_read do_syscall_64 \
		entry_SYSCALL_64_after_hwframe array_map_alloc | diff - kept &&
	! grep -vxFf whole.syms cut.syms &&
	mkdir a b && cp whole.dat a/x.dat && cp cut.dat b/x.dat &&
	for c in "dump -a" "report --json -n 0" "kmap" "check"; do
		(cd a && $KMT $c x.dat > ../a.out) && (cd b && $KMT $c x.dat > ../b.out) && cmp a.out b.out || exit 1
	done &&
	trace-cmd report whole.dat > a.tc 2> /dev/null && trace-cmd report cut.dat > b.tc 2> /dev/null && cmp a.tc b.tc &&
	grep -q "=> __x64_sys_read (ffffffff810a0018)" b.tc &&
	$KMT convert --strip-kallsyms real.dat rs.dat 2> /dev/null && cmp rs.dat real.dat
'

# kmt-synth full has two buffers: the events, and kmemtrace watch's 150
# samples ("kmemtrace-access"). convert keeps one, as the output's main one.
test_expect_success '-B, --buffer NAME: that buffer alone, as the main one; by default the main one; no such buffer: exit 1' '
	$KMT convert synth.dat m.dat && $KMT info m.dat > m.info &&
	! grep -q "kmemtrace-access\|watchpoint samples" m.info && [ $(grep -c "^buffer:" m.info) = 1 ] &&
	sed -n "/^all /p" m.info | tr -s " " | has -x "all 3,609 59 0.2 250 1" &&
	$KMT convert -B "" synth.dat m2.dat && cmp m.dat m2.dat &&
	$KMT convert --buffer kmemtrace-access synth.dat acc.dat && $KMT info acc.dat > acc.info &&
	sed -n "/^CPU  /,\$p" acc.info | tr -s " " > got &&
	printf "%s\n" "CPU events pages data-MiB lost gaps" "0 0 0 0.0 0 0" "1 150 2 0.0 0 0" "all 150 2 0.0 0 0" "" \
		"event records" "kmemtrace:access 150" | diff -u - got &&
	$KMT dump acc.dat | grep -c " access " | has -x 150 &&
	test_expect_code 1 $KMT convert -B nosuch synth.dat x.dat > out 2> err && [ ! -s out ] && [ ! -e x.dat ] &&
	[ "$(cat err)" = "kmemtrace convert: synth.dat: no such buffer" ]
'

test_expect_success 'a missing, foreign or empty input: one line naming it (and the offset), exit 1, nothing written' '
	echo "not a trace" > junk.dat && : > empty.dat &&
	while IFS="|" read -r f msg; do
		test_expect_code 1 $KMT convert $f out.dat > out 2> err && cat err && [ ! -s out ] && [ ! -e out.dat ] &&
		[ "$(cat err)" = "kmemtrace convert: $msg" ] || exit 1
	done <<-EOF
	no.dat|cannot open '"'"'no.dat'"'"': No such file or directory
	junk.dat|junk.dat: file header at offset 0 (0x0): not a trace.dat file (bad magic)
	empty.dat|empty.dat: file header at offset 0 (0x0): the file is empty
	EOF
'

# A copy of a damaged file would look whole: convert says what is wrong
# where, and writes nothing.
test_expect_success 'a cut input, or a chunk that does not inflate: refused in two lines naming the place, exit 1' '
	head -c 16000 real.dat > cut.dat && test_expect_code 1 $KMT convert cut.dat out.dat > out 2> err && cat err &&
	printf "%s\n" "kmemtrace convert: cut.dat: truncated at byte 16000 of 16492 (section '"'"'flyrecord'"'"')" \
		"kmemtrace convert: cut.dat is damaged: not converting it (kmemtrace check lists the damage)" | diff - err &&
	[ ! -e out.dat ] && [ ! -s out ] &&
	cp synth.dat bad.dat && off=$(chunk_offset synth.dat 1 5) && break_chunk bad.dat $off &&
	test_expect_code 1 $KMT convert bad.dat out.dat > out 2> err && cat err &&
	[ "$(cat err)" = "kmemtrace convert: bad.dat: CPU 1 data at offset $off ($(printf 0x%x $off)): chunk 5 of 8 does not inflate to 16384 bytes" ] &&
	[ ! -e out.dat ]
'

test_done
