#!/usr/bin/env bash
# kmemtrace check: clean files pass with exit 0, broken ones give one line
# per finding with CPU, offset and time and exit 1, unreadable ones exit 2.
. "$(dirname "$0")/lib.sh"
SEEDS=$ROOT/fuzz/corpus/file

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

test_done
