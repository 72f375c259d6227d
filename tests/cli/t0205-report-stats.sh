#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace report --stats: the CPU time of each stage of the analysis, per
# event too, on stderr; the report itself is unchanged. The events counted
# are the records read, of every buffer, as check counts them. No tracing needed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'a synthetic trace, and its report without --stats' '
	$SYNTH full s.dat && $KMT report s.dat > plain 2> plain.err &&
	{ $KMT check s.dat > chk || true; } &&
	sed -n "\$s/^s.dat: \([0-9,]*\) events in .*/\1/p" chk > events && [ -s events ]
'

test_expect_success 'report --stats: the same report on stdout' '
	$KMT report --stats s.dat > out 2> err && cmp plain out
'

test_expect_success 'the first line: events, wall and CPU time, the rate' '
	head -n 1 err > first &&
	grep -Eq "^stats: $(cat events) events in [0-9]+\.[0-9]{3} s, [0-9]+\.[0-9]{3} s CPU \([0-9]+\.[0-9]{2} CPUs busy\): [0-9]+\.[0-9]{2} M events/s$" first ||
	{ cat err; false; }
'

test_expect_success 'one line per stage, in order, with CPU s, ns/event and where it ran' '
	sed -n 2p err > head && [ "$(cat head)" = "  stage            CPU s  ns/event   where" ] &&
	sed -n "3,\$p" err | cut -c 1-15 | sed "s/ *\$//" > names &&
	printf "  read+inflate\n  stream merge\n  decode\n  model\n  output\n  waiting\n  other\n" > want &&
	cmp want names &&
	sed -n "3,\$p" err | cut -c 16- | grep -Evc "^ +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]   [a-z]" > bad ||
	[ "$(cat bad)" = 0 ]
'

test_expect_success 'where each stage ran: merge and decode on the producer, serial' '
	grep -q "^  stream merge .*   producer thread: serial$" err &&
	grep -q "^  decode .*   producer thread: serial$" err &&
	grep -Eq "^  model .*   (model|producer) thread: serial$" err &&
	grep -q "^  output .*   main thread: serial$" err
'

test_expect_success 'one thread (KMT_NO_THREADS): inflating and the model on the stream thread' '
	KMT_NO_THREADS=1 $KMT report --stats s.dat > out1 2> err1 && cmp plain out1 &&
	grep -q "^  read+inflate .*   in the stream.s thread: serial$" err1 &&
	grep -q "^  model .*   producer thread: serial$" err1 &&
	grep -q "^  waiting  *0\.000  *0\.0   asleep in hand-overs" err1
'

test_expect_success 'with --json: the same document, stats on stderr only' '
	$KMT report --json s.dat > j1 && $KMT report --json --stats s.dat > j2 2> err2 &&
	cmp j1 j2 && [ "$(wc -l < err2)" = 9 ]
'

test_expect_success 'report --help lists --stats' '
	$KMT report --help | has -- "--stats"
'

test_expect_success 'check --stats: the same findings, the one pass'"'"'s stages and records' '
	{ $KMT check s.dat > c1 || true; } && { $KMT check --stats s.dat > c2 2> cerr || true; } &&
	cmp c1 c2 && cat cerr && head -n 1 cerr | has "^stats: $(cat events) events in " &&
	sed -n "3,\$p" cerr | cut -c 1-15 | sed "s/ *\$//" > cnames && cmp want cnames &&
	$KMT check --help | has -- "--stats"
'

test_expect_success 'check --stats --no-model: nothing timed, and says so' '
	{ $KMT check --stats --no-model s.dat > /dev/null 2> nerr || true; } &&
	[ "$(cat nerr)" = "stats: no one pass ran (--no-model): nothing timed" ]
'

test_done
