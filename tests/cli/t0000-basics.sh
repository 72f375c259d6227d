#!/usr/bin/env bash
# The command line: help, version, usage errors. No tracing needed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'kmemtrace --help lists the commands' '
	$KMT --help > out &&
	grep -q "record" out && grep -q "info" out && grep -q "dump" out
'

test_expect_success 'every command has --help, exit 0, on stdout' '
	for c in $($KMT --help | awk "/^commands:/ { on = 1; next } on && !NF { exit } on { print \$1 }"); do
		$KMT $c --help > out 2> err && grep -q "^usage: kmemtrace $c" out && [ ! -s err ] ||
			{ echo "bad --help for $c"; exit 1; }
	done
'

test_expect_success '--version prints the version' '
	$KMT --version | grep -q "^kmemtrace [0-9]"
'

test_expect_success 'an unknown command is a usage error (exit 2)' '
	rc=0; $KMT frobnicate 2> err || rc=$?; [ $rc -eq 2 ] &&
	grep -q "not a kmemtrace command" err
'

test_expect_success 'an unknown option is a usage error (exit 2) with the usage' '
	rc=0; $KMT record --frob 2> err || rc=$?; [ $rc -eq 2 ] && grep -q "^usage:" err
'

test_expect_success 'bad option values are refused clearly' '
	rc=0; $KMT record -b lots 2> err || rc=$?; [ $rc -eq 2 ] && grep -q "bad buffer size" err &&
	rc=0; $KMT record -d soon 2> err || rc=$?; [ $rc -eq 2 ] && grep -q "bad duration" err &&
	rc=0; $KMT record -F 2> err || rc=$?; [ $rc -eq 2 ] && grep -q "needs a COMMAND" err
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

test_done
