#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The text of report and diff fits the terminal, or $COLUMNS when set
# (into a pipe or a file too): optional columns left out in a fixed order,
# names cut with "…" keeping a call site's offset, stacks cut at the edge,
# prose wrapped, and a last line saying so; --wide prints everything; a
# pipe or a file without COLUMNS keeps every column. A terminal is made
# with script(1). No root, no tracefs.
. "$(dirname "$0")/lib.sh"
command -v script > /dev/null || test_skip_all "script (util-linux) is not installed"

# The widest line of a file, in columns ("…" is one).
cols() { LC_ALL=C.UTF-8 wc -L < "$1"; }
# Run kmemtrace on a terminal of $1 columns, its output into $2; with the
# environment $TTY_ENV (the shell script(1) runs sets COLUMNS to the
# terminal's width after stty, as any bash does).
TTY_ENV=
on_tty() {
	local w=$1 out=$2
	shift 2
	script -qec "stty cols $w rows 50; $TTY_ENV $KMT $*" /dev/null < /dev/null | tr -d '\r' > "$out"
}

# A site's stacks that share their inner callers: cut to fit, they keep
# where they differ (the shared middle goes, as "..."), not look alike.
test_expect_success 'stacks that share their inner callers lose the shared middle, not where they differ' '
	$SYNTH deep deep.dat && COLUMNS=80 $KMT report --stacks 5 --sections callsites deep.dat > deep.txt &&
	grep "<- \.\.\. <-" deep.txt && [ "$(grep -c "^ *33\.3% .* <- \.\.\. <- " deep.txt)" = 3 ] &&
	for f in do_sys_open load_elf_bi sock_alloc_; do grep -q "<- \.\.\. <- $f" deep.txt || exit 1; done &&
	$KMT report --stacks 5 --sections callsites deep.dat | has "<- __x64_sys_openat+0x18 <- do_syscall_64"
'

test_expect_success 'the inputs: a synthetic trace with stacks, a real one, a trace-cmd one' '
	$SYNTH full synth.dat &&
	cp $ROOT/tests/data/traces/real-v7-zstd.dat real.dat &&
	cp $ROOT/tests/data/traces/tracecmd-extract-v7.dat tc.dat
'

test_expect_success 'into a pipe without COLUMNS: every column at its usual width' '
	$KMT report -n 0 synth.dat > pipe.txt &&
	[ $(cols pipe.txt) -gt 120 ] &&
	grep -q "^  call site  .* x-cpu .* unseen$" pipe.txt &&
	! grep -q "…" pipe.txt && ! grep -q "cut to fit" pipe.txt
'

test_expect_success 'COLUMNS=80: every line fits, and the last says what gave' '
	COLUMNS=80 $KMT report -n 0 synth.dat > c80.txt &&
	[ $(cols c80.txt) -le 80 ] &&
	grep -q "^  call site  *allocs  *frees  *requested  *allocated live bytes$" c80.txt &&
	! grep -q " unseen$" c80.txt &&
	grep -q "^      100.0% .*<- .*…$" c80.txt &&
	tail -n 2 c80.txt > last && cat last &&
	tr -s "\n " "  " < last | has "^(cut to fit 80 columns: some columns left out, names cut, stacks cut; --wide shows everything) $"
'

test_expect_success 'COLUMNS=120 and 60: the same, more or fewer columns' '
	COLUMNS=120 $KMT report -n 0 synth.dat > c120.txt && [ $(cols c120.txt) -le 120 ] &&
	grep -q "^  call site .* x-cpu .* live bytes$" c120.txt &&
	COLUMNS=60 $KMT report -n 0 synth.dat > c60.txt && [ $(cols c60.txt) -le 60 ] &&
	grep -q "^  call site  *allocs  *allocated live bytes$" c60.txt
'

test_expect_success 'a call site cut to fit keeps its offset' '
	COLUMNS=50 $KMT report --sections callsites -n 0 real.dat > cut.txt && cat cut.txt &&
	grep -q "^  getname_flags.part…+0x24 " cut.txt
'

test_expect_success 'the column -s sorts by is never left out' '
	COLUMNS=80 $KMT report -s waste --sections callsites synth.dat > w.txt &&
	grep -q "^  call site .* waste" w.txt && [ $(cols w.txt) -le 80 ]
'

test_expect_success '--wide: everything, as into a pipe' '
	COLUMNS=80 $KMT report --wide -n 0 synth.dat > wide.txt &&
	cmp pipe.txt wide.txt
'

test_expect_success 'a terminal: its own width; COLUMNS over it' '
	on_tty 80 t80.txt report -n 0 synth.dat && [ $(cols t80.txt) -le 80 ] &&
	grep -q "cut to fit 80 columns" t80.txt &&
	on_tty 200 t200.txt report -n 0 synth.dat && [ $(cols t200.txt) -le 200 ] &&
	grep -q "^  call site  .* x-cpu .* unseen$" t200.txt &&
	! grep -q "cut to fit" t200.txt &&
	TTY_ENV=COLUMNS=100 && on_tty 200 t100.txt report -n 0 synth.dat &&
	[ $(cols t100.txt) -le 100 ] && grep -q "cut to fit 100 columns" t100.txt
'

test_expect_success 'a file (-o): COLUMNS, never the terminal' '
	on_tty 80 o.log report -n 0 -o o.txt synth.dat && cmp pipe.txt o.txt &&
	COLUMNS=80 $KMT report -n 0 -o o80.txt synth.dat && cmp c80.txt o80.txt
'

test_expect_success 'JSON and CSV do not change with the width' '
	$KMT report --json synth.dat > a.json && COLUMNS=40 $KMT report --json synth.dat > b.json &&
	cmp a.json b.json &&
	$KMT report --csv callsites synth.dat > a.csv && COLUMNS=40 $KMT report --csv callsites synth.dat > b.csv &&
	cmp a.csv b.csv
'

test_expect_success 'diff: COLUMNS=80 fits, the first field whole; --wide has every delta' '
	$KMT diff -n 0 synth.dat real.dat > dpipe.txt && [ $(cols dpipe.txt) -gt 150 ] &&
	COLUMNS=80 $KMT diff -n 0 synth.dat real.dat > d80.txt && cat d80.txt && [ $(cols d80.txt) -le 80 ] &&
	grep -q "^  function  *old\*  *new  *delta  *change$" d80.txt &&
	grep -q "cut to fit 80 columns" d80.txt &&
	COLUMNS=80 $KMT diff --wide -n 0 synth.dat real.dat > dwide.txt && cmp dpipe.txt dwide.txt
'

test_expect_success 'diff: a TOTAL first, the lower bound said once, no mark on the numbers' '
	sed -n "/^TOTAL/,/^\$/p" dpipe.txt > total && cat total &&
	grep -q "^  *old\*  *new  *delta  *change$" total &&
	grep -q "^  slab objects allocated  *1,404  *135  *-1,269  *-90.4%$" total &&
	grep -q "^  pages allocated " total &&
	[ $(grep -c "lower bounds" dpipe.txt) = 1 ] && ! grep -q "[0-9]\*" dpipe.txt
'

test_expect_success 'diff: a file against itself is one line' '
	$KMT diff real.dat real.dat > same.txt && cat same.txt &&
	[ $(wc -l < same.txt) = 1 ] && grep -q "^real.dat and real.dat do not differ: " same.txt &&
	$KMT diff --json real.dat real.dat | has "\"differs\": false"
'

test_done
