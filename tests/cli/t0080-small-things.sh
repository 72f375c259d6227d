#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Small things a careful tool gets right, on synthetic traces: "1 object",
# not "1 objects"; thousands separators in check's and info's counts; the
# SQLite export's pointers also in hex, as people read them; the clock of
# top's files and record's said where it differs. No root, no tracefs
# (record's own status line and exit codes: t0107).
. "$(dirname "$0")/lib.sh"

test_expect_success 'the inputs' '
	$SYNTH full synth.dat && $SYNTH arch arch.dat
'

test_expect_success 'one of a thing is singular' '
	$KMT report arch.dat > arch.txt &&
	grep -q "^  live at the end  *1 object, " arch.txt &&
	$KMT report synth.dat > synth.txt && { $KMT check synth.dat > check.txt || true; } &&
	! grep -h "[^0-9,.]1 \(objects\|areas\|CPUs\|events\|allocations\|frees\|pages\|errors\|warnings\|gaps\|parts\)\b" \
		arch.txt synth.txt check.txt
'

test_expect_success 'check and info count with thousands separators' '
	tail -n 1 check.txt | has "^synth.dat: 3,759 events in 61 pages on 3 CPUs: 3 errors, 2 warnings$" &&
	$KMT info synth.dat > info.txt && grep -q "^all  *3,609 " info.txt &&
	grep -q "^            CPU 0 data: offset 0x[0-9a-f]*, [0-9]\{1,3\}\(,[0-9]\{3\}\)* bytes$" info.txt
'

test_expect_success 'SQLite: the pointers in hex beside the integers' '
	command -v sqlite3 > /dev/null || { echo "sqlite3 missing (make deps)"; exit 1; }
	$KMT export -f sqlite -o s.sqlite synth.dat &&
	[ "$(sqlite3 s.sqlite "SELECT count(*) FROM objects WHERE ptr_hex IS NULL OR ptr_hex != printf('"'"'0x%x'"'"', ptr)")" = 0 ] &&
	sqlite3 s.sqlite "SELECT ptr_hex FROM objects WHERE kind != '"'"'page'"'"' LIMIT 1" | has "^0xffff[0-9a-f]\{12\}$" &&
	[ "$(sqlite3 s.sqlite "SELECT count(*) FROM accesses")" -gt 0 ] &&
	[ "$(sqlite3 s.sqlite "SELECT count(*) FROM accesses WHERE object_ptr_hex != printf('"'"'0x%x'"'"', object_ptr)")" = 0 ]
'

test_expect_success 'the clock of top -o files: said in its help and the manual' '
	$KMT top --help | grep -A2 -- "-o, --output" | tr -s "\n " "  " | has "clock is mono.*record.s is local" &&
	sed "s/\\\\-/-/g" $ROOT/docs/kmemtrace.1 | awk "/^\.SS top/,/^\.SS watch/" | tr "\n" " " |
		grep -q "Its trace clock is .B mono .*record.s files use .BR local" &&
	sed "s/\\\\-/-/g" $ROOT/docs/kmemtrace.1 | awk "/^\.SS record/,/^\.SS report/" | tr "\n" " " |
		grep -q "the .B local trace clock"
'

test_done
