#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace check: clean files pass with exit 0, broken ones give one line
# per finding with CPU, offset and time and exit 1, unreadable ones exit 2.
# Damaged files (cut short, a chunk that does not inflate, a broken
# kallsyms section) are read as far as they can be, as report reads them.
. "$(dirname "$0")/lib.sh"
SEEDS=$ROOT/tests/data/traces

test_expect_success 'the seed files are clean (ours v6/v7 none/zstd/zlib, trace-cmd v7)' '
	for f in $SEEDS/*.dat; do $KMT check -q $f || exit 1; done
'

test_expect_success '--json says clean, with counts' '
	$KMT check --json $SEEDS/real-v7-zstd.dat > c.json &&
	grep -q "\"clean\": true" c.json && grep -q "\"events\": 550" c.json
'

test_expect_success 'a page whose commit runs past it: an error with CPU and offset, exit 1' '
	cp $SEEDS/real-v7-none.dat bad.dat &&
	off=$($KMT info bad.dat | sed -n "s/.*CPU 0 data: offset \(0x[0-9a-f]*\),.*/\1/p") &&
	[ -n "$off" ] &&
	printf "\377\377\000\000" | dd of=bad.dat bs=1 seek=$((off + 8)) conv=notrunc 2>/dev/null &&
	rc=0; $KMT check bad.dat > out || rc=$?; cat out; [ $rc -eq 1 ] &&
	grep -q "^error .*CPU0 .*0x$(printf %x $off) .*commit" out
'

test_expect_success 'time going backwards inside a page: an error' '
	cp $SEEDS/real-v7-none.dat back.dat &&
	off=$($KMT info back.dat | sed -n "s/.*CPU 0 data: offset \(0x[0-9a-f]*\),.*/\1/p") &&
	[ -n "$off" ] &&
	printf "\377\377\377\377\377\377\377\177" | dd of=back.dat bs=1 seek=$((off + 4096)) conv=notrunc 2>/dev/null &&
	rc=0; $KMT check back.dat > out || rc=$?; cat out; [ $rc -eq 1 ] &&
	grep -q "^error .*before the previous page" out
'

test_expect_success 'not a trace file: exit 2, the reason names file and offset' '
	echo "hello" > junk.dat &&
	rc=0; $KMT check junk.dat 2> err || rc=$?; cat err; [ $rc -eq 2 ] && grep -q "junk.dat: file header at offset 0" err &&
	rc=0; $KMT check --json junk.dat > j.json 2>/dev/null || rc=$?; [ $rc -eq 2 ] && grep -q "\"readable\": false" j.json
'

test_expect_success 'a truncated file: exit 2 or findings, never a crash' '
	for n in 10 100 1000 4096 20000 40000; do
		head -c $n $SEEDS/real-v7-zstd.dat > t.dat;
		rc=0; $KMT check -q t.dat > /dev/null 2>&1 || rc=$?;
		[ $rc -le 2 ] || { echo "cut at $n: exit $rc"; exit 1; };
	done
'

test_expect_success 'a record that does not fit its format: every reader exits 1 naming file and offset' '
	f=$KMT_TESTDATA/corrupt/record-past-format.dat &&
	for c in check report kmap dump; do
		rc=0; $KMT $c $f > out 2> err || rc=$?; echo "$c: exit $rc: $(cat err)";
		[ $rc -eq 1 ] || exit 1;
		if [ $c = check ]; then grep -q "^error .*CPU0 *0x2004.*does not fit its format" out || exit 1;
		else grep -q "record-past-format.dat.*offset [0-9]" err || exit 1; fi;
	done
'

test_expect_success 'a file cut at 99.4%, 50% or 100 bytes says "truncated at byte N of M (section S)"' '
	$SYNTH full s.dat && size=$(stat -c %s s.dat) &&
	for frac in 0.994 0.5; do
		cut_at s.dat $frac cut.dat && n=$(stat -c %s cut.dat) &&
		rc=0; $KMT check cut.dat > out 2> err || rc=$?; cat out err;
		[ $rc = 1 ] || exit 1;
		grep -q "^error .*truncated at byte $n of [0-9]* (section '"'"'[a-z ]*'"'"')" out || exit 1;
		grep -q "cut.dat: [1-9][0-9,]* events in" out || exit 1;
	done &&
	head -c 100 s.dat > cut.dat &&
	rc=0; $KMT check cut.dat 2> err || rc=$?; cat err; [ $rc = 2 ] &&
	grep -q "^kmemtrace check: cut.dat: truncated at byte 100 of 228 (section '"'"'headers'"'"')" err
'

test_expect_success 'one chunk that does not inflate: the rest of its CPU is checked, as report reads it' '
	$SYNTH full s.dat && cp s.dat bad.dat && off=$(chunk_offset s.dat 1 5) && break_chunk bad.dat $off &&
	rc=0; $KMT check bad.dat > out || rc=$?; cat out; [ $rc = 1 ] &&
	grep -q "^error *CPU1 *0x$(printf %x $off) .*chunk 5 of 8 does not inflate to 16384 bytes; skipped up to byte" out &&
	events=$(sed -n "s/^bad.dat: \([0-9,]*\) events.*/\1/p" out | tr -d ,) &&
	test_expect_code 1 $KMT check s.dat > clean.out &&	# the synthetic misuse
	clean=$(sed -n "s/^s.dat: \([0-9,]*\) events.*/\1/p" clean.out | tr -d ,) &&
	echo "events: $events of $clean" && [ "$events" -lt "$clean" ] && [ "$events" -gt $((clean * 3 / 4)) ] &&
	test_expect_code 1 $KMT report --csv summary bad.dat > sum 2> /dev/null &&
	[ "$(sed -n "s/^events,//p" sum)" = "$events" ]
'

test_expect_success 'a kallsyms section that does not inflate: an error, and every event is checked' '
	$SYNTH full s.dat && cp s.dat syms.dat && off=$(section_offset s.dat 19) &&
	printf "\245\245\245\245\245\245\245\245" | dd of=syms.dat bs=1 seek=$((off + 28)) conv=notrunc 2>/dev/null &&
	rc=0; $KMT check syms.dat > out || rc=$?; cat out; [ $rc = 1 ] &&
	grep -q "^error .*section '"'"'kallsyms'"'"' at offset $off .*raw addresses" out &&
	test_expect_code 1 $KMT check s.dat > clean.out &&
	[ "$(sed -n "s/^syms.dat: \([0-9,]*\) events.*/\1/p" out)" = "$(sed -n "s/^s.dat: \([0-9,]*\) events.*/\1/p" clean.out)" ]
'

test_expect_success 'bytes of the file quoted in a message are escaped' '
	$SYNTH full s.dat && cp s.dat esc.dat &&
	printf "\001\033[2" | dd of=esc.dat bs=1 seek=18 conv=notrunc 2>/dev/null &&
	rc=0; $KMT check esc.dat 2> err || rc=$?; cat err; [ $rc = 2 ] &&
	grep -qF "unsupported compression '"'"'\x01\x1b[2'"'"'" err && ! grep -q "[[:cntrl:]]" err
'

# check reads the pages once, with the model (their findings kept until it
# is done), and reads a CPU again on its own only where the model's reading
# stopped. Either way it says what --no-model (pages only) says, first.
pages_then_model() {	# file
	rc1=0; $KMT check --no-model "$1" > pages || rc1=$?
	rc2=0; $KMT check "$1" > all || rc2=$?
	case $rc1$rc2 in [012][012]) ;; *) echo "$1: exit $rc1 without the model, $rc2 with"; return 1 ;; esac
	[ -s pages ] && [ $rc1 != 2 ] || [ $rc2 = 2 ] || { echo "$1: exit $rc1 without the model, $rc2 with"; return 1; }
	sed '$d' pages > pages.body && n=$(wc -l < pages.body) &&
	head -n "$n" all > all.head && cmp pages.body all.head || { echo "$1"; diff pages.body all.head | head; return 1; }
	# The same events and pages in the summary line.
	[ "$(tail -n 1 pages | cut -d: -f2 | cut -d: -f1)" = "$(tail -n 1 all | cut -d: -f2 | cut -d: -f1)" ] || {
		tail -n 1 pages all; return 1; }
}

test_expect_success 'one pass: the pages found as --no-model finds them, cut and damaged files too' '
	$SYNTH full s.dat && $SYNTH wide w.dat && pages_then_model s.dat && pages_then_model w.dat &&
	for f in s w; do
		size=$(stat -c %s $f.dat) &&
		for part in 3 5 7 9; do
			head -c $((size * part / 10)) $f.dat > cut$part$f.dat && pages_then_model cut$part$f.dat || exit 1
		done &&
		for seed in 1 2 3 4 5 6; do
			cp $f.dat flip$seed$f.dat &&
			off=$(( (size / 20) + (seed * 7919 * 131) % (size - size / 20) )) &&
			printf "\377\000\252" | dd of=flip$seed$f.dat bs=1 seek=$off conv=notrunc 2>/dev/null &&
			pages_then_model flip$seed$f.dat || exit 1
		done
	done
'

# The one pass walks no record for the page checks: a page is walked again
# only where something can be wrong (it starts back, an absolute time
# stamp, a time near 2^64, an id not decoded, a walk that fails). Each
# such page, made here in an uncompressed file, is found as --no-model
# finds it, on one thread or in parts.
test_expect_success 'one pass: time stamps, unknown ids and a page time near 2^64, as --no-model finds them' '
	off=$($KMT info $SEEDS/real-v7-none.dat | sed -n "s/.*CPU 0 data: offset \(0x[0-9a-f]*\),.*/\1/p") &&
	[ -n "$off" ] &&
	cp $SEEDS/real-v7-none.dat stamp.dat && cp $SEEDS/real-v7-none.dat id.dat && cp $SEEDS/real-v7-none.dat wrap.dat &&
	printf "\037\000\000\000\000\000\000\000" | dd of=stamp.dat bs=1 seek=$((off + 4096 + 16)) conv=notrunc 2>/dev/null &&
	printf "\377\377" | dd of=id.dat bs=1 seek=$((off + 4096 + 20)) conv=notrunc 2>/dev/null &&
	printf "\377\377\377\377\377\377\377\377" | dd of=wrap.dat bs=1 seek=$((off + 4096)) conv=notrunc 2>/dev/null &&
	for f in stamp id wrap; do
		pages_then_model $f.dat || exit 1
		for j in 1 4; do
			rc=0; $KMT check -j $j $f.dat > j$j || rc=$?
			[ $rc = 1 ] && cmp all j$j || exit 1
		done
	done &&
	{ $KMT check stamp.dat > out || true; } && cat out &&
	grep -q "^error *CPU0 .*time goes back by 4153939093899 ns (event at +8)" out &&
	grep -q "^error *CPU0 .*page starts [0-9]* ns before the previous page" out &&
	{ $KMT check id.dat > out || true; } &&
	grep -q "^error *CPU0 .*record at +0 has event id 65535, which no format describes" out &&
	{ $KMT check wrap.dat > out || true; } &&
	grep -q "^error *CPU0 .*time goes back by [0-9]* ns (event at +52)" out
'

test_done
