#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Tiny recordings are tiny: a trace keeps only the lines of /proc/kallsyms
# that name what its events point at (each function holding a call site,
# a stack frame or a watchpoint instruction, its aliases, the symbol after
# it, its namesakes), and every reader names every address as with the
# whole table. --full-kallsyms keeps it all; convert --strip-kallsyms cuts
# an older file the same way, and a recording's cut is convert's.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
command -v trace-cmd > /dev/null || test_skip_all "trace-cmd is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=40 X=7 R=3 L=2

# The lines of a file's kallsyms section, as trace-cmd reads them.
syms() { trace-cmd dump --kallsyms "$1" 2> /dev/null | grep -v -e "^	\[" -e "^$"; }

# -F: only true'"'"'s own events, whatever else the machine does meanwhile.
test_expect_success 'record -F -- true: kilobytes, not the megabyte of /proc/kallsyms' '
	$KMT record -q -F -o t.dat -- true && $KMT record -q -F --full-kallsyms -o tf.dat -- true &&
	n=$(syms t.dat | wc -l) && all=$(syms tf.dat | wc -l) && proc=$(wc -l < /proc/kallsyms) &&
	echo "record -F -- true: $(stat -c %s t.dat) bytes, $n kallsyms lines; --full-kallsyms: $(stat -c %s tf.dat) bytes, $all lines (/proc/kallsyms: $proc)" &&
	[ $(stat -c %s t.dat) -lt 65536 ] && [ $(stat -c %s tf.dat) -gt 524288 ] &&
	[ $n -gt 10 ] && [ $((n * 20)) -lt $all ] && [ $((all * 100)) -ge $((proc * 99)) ] &&
	! syms t.dat | grep -vxFf /proc/kallsyms &&
	$KMT check t.dat > /dev/null && trace-cmd report t.dat > /dev/null 2>&1
'

test_expect_success 'a stripped copy: every reader'"'"'s output byte for byte the whole table'"'"'s' '
	$KMT record -q --stack --full-kallsyms -o full.dat -- $WL/kmt-gt -g $G -x $X -r $R -l $L $F > /dev/null &&
	$KMT convert --strip-kallsyms full.dat cut.dat &&
	echo "kallsyms lines: $(syms cut.dat | wc -l) of $(syms full.dat | wc -l)" &&
	mkdir a b && cp full.dat a/x.dat && cp cut.dat b/x.dat &&
	for c in "report --json -n 0" "report -n 0 --stacks 100" "report --html" "kmap --pages" \
		 "export -f folded -o -" "export -f folded --value objects -o -" "dump -a" "check"; do
		(cd a && $KMT $c x.dat > ../a.out) && (cd b && $KMT $c x.dat > ../b.out) &&
		echo "$c: $(wc -c < a.out) bytes, the same" && cmp a.out b.out || exit 1
	done &&
	trace-cmd report full.dat > a.tc 2>&1 && trace-cmd report cut.dat > b.tc 2>&1 && cmp a.tc b.tc &&
	grep -q "call_site=do_getxattr+0x" b.tc
'

test_expect_success 'a recording'"'"'s cut is convert'"'"'s; it names the ground truth as the whole table does' '
	rm -f $F && touch $F &&
	$KMT record -q --stack -o r.dat -- $WL/kmt-gt -g $G -x $X -r $R -l $L $F > /dev/null &&
	$KMT convert --strip-kallsyms r.dat r2.dat && syms r.dat > r.syms && syms r2.dat > r2.syms &&
	echo "recording: $(wc -l < r.syms) kallsyms lines" && [ -s r.syms ] && cmp r.syms r2.syms &&
	q=".callsites[] | select(.function == \"do_getxattr\" or .function == \"simple_xattr_alloc\") | [.callsite, .allocs]" &&
	$KMT report --json --comm kmt-gt -n 0 full.dat | jq -c "$q" | sort > full.sites &&
	$KMT report --json --comm kmt-gt -n 0 r.dat | jq -c "$q" | sort > r.sites && cat r.sites &&
	[ -s r.sites ] && cmp full.sites r.sites &&
	$KMT report --json -n 0 r.dat | jq -r ".callsites[].callsite" > all.sites &&
	! grep -q "^0x" all.sites && $KMT check r.dat > /dev/null
'

test_expect_success 'diff of two stripped files says what diff of the whole ones says' '
	rm -f $F && touch $F &&
	$KMT record -q --stack --full-kallsyms -o full2.dat -- $WL/kmt-gt -g 5 $F > /dev/null &&
	$KMT convert --strip-kallsyms full2.dat cut2.dat &&
	cp full.dat a/1.dat && cp full2.dat a/2.dat && cp cut.dat b/1.dat && cp cut2.dat b/2.dat &&
	(cd a && $KMT diff -n 0 1.dat 2.dat > ../a.diff && $KMT diff --json -n 0 1.dat 2.dat > ../a.json) &&
	(cd b && $KMT diff -n 0 1.dat 2.dat > ../b.diff && $KMT diff --json -n 0 1.dat 2.dat > ../b.json) &&
	sed -n 4p b.diff && grep -q "matched by function+offset: the same kernel build" b.diff &&
	cmp a.diff b.diff && cmp a.json b.json
'

tracefs_check
test_done
