#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The command line: help, version, usage errors. No tracing needed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'kmemtrace --help lists the commands' '
	$KMT --help > out &&
	grep -q "record" out && grep -q "info" out && grep -q "dump" out
'

test_expect_success 'every command has --help, exit 0, on stdout' '
	cmds=$(commands) && for c in $cmds; do
		$KMT $c --help > out 2> err && grep -q "^usage: kmemtrace $c" out && [ ! -s err ] ||
			{ echo "bad --help for $c"; exit 1; }
	done
'

test_expect_success '--version prints the version' '
	$KMT --version | has "^kmemtrace [0-9]"
'

test_expect_success 'an unknown command is a usage error (exit 2)' '
	rc=0; $KMT frobnicate 2> err || rc=$?; [ $rc -eq 2 ] &&
	grep -q "not a kmemtrace command" err
'

test_expect_success 'an unknown option: one line and a hint (exit 2), for every command' '
	cmds=$(commands) && for c in $cmds; do
		rc=0; $KMT $c --frob 2> err || rc=$?; cat err
		[ $rc -eq 2 ] && [ $(wc -l < err) -eq 2 ] &&
		grep -qx "kmemtrace $c: unknown option .--frob." err &&
		grep -qx "see .kmemtrace $c --help." err || exit 1
	done
'

test_expect_success 'a bad value is one line and a hint too, not the whole usage' '
	rc=0; $KMT report -n many 2> err || rc=$?; cat err; [ $rc -eq 2 ] && [ $(wc -l < err) -eq 2 ] &&
	rc=0; $KMT report --time 2,1 2> err || rc=$?; cat err; [ $rc -eq 2 ] && [ $(wc -l < err) -eq 2 ] &&
	rc=0; $KMT report -n 2> err || rc=$?; cat err; [ $rc -eq 2 ] && grep -q "needs a value" err &&
	rc=0; $KMT record -d 0 2> err || rc=$?; cat err; [ $rc -eq 2 ] && [ $(wc -l < err) -eq 2 ] &&
	rc=0; $KMT report --csv foo 2> err || rc=$?; cat err; [ $rc -eq 2 ] && [ $(wc -l < err) -eq 2 ] &&
	grep -q "see .kmemtrace report --help." err
'

test_expect_success 'numbers are range-checked, never cut to fit' '
	rc=0; $KMT record -b 4294967300 -- true 2> err || rc=$?; cat err; [ $rc -eq 2 ] &&
	grep -q "bad buffer size .4294967300." err &&
	rc=0; $KMT record -b -5 -- true 2> err || rc=$?; [ $rc -eq 2 ] &&
	rc=0; $KMT record --rt-prio 100 -- true 2> err || rc=$?; [ $rc -eq 2 ] &&
	rc=0; $KMT record -m 99999999999 -- true 2> err || rc=$?; [ $rc -eq 2 ] &&
	rc=0; $KMT watch --callsite x -n 0 2> err || rc=$?; [ $rc -eq 2 ] &&
	rc=0; $KMT report -p 99999999999 2> err || rc=$?; [ $rc -eq 2 ]
'

# The options several commands share are declared once, in a group (the
# input group, src/report/input.c; the recording group, src/record/recording.c):
# the same help, errors and defaults wherever a command takes them.
test_expect_success 'shared options: one declaration, the same help, errors and defaults everywhere' '
	for c in report export kmap dump diff; do
		rc=0; $KMT $c --time 5,1 a b > out 2> err || rc=$?
		[ $rc -eq 2 ] && [ "$(head -n 1 err)" = "kmemtrace $c: bad time window '"'"'5,1'"'"' (START,END in seconds)" ] ||
			{ echo "$c:"; cat err; exit 1; }
		$KMT $c --help | grep -A 1 -- "--time START,END" > help.$c
		cmp help.report help.$c || exit 1
	done &&
	for c in report export kmap dump; do
		rc=0; $KMT $c -p 0 > out 2> err || rc=$?
		[ $rc -eq 2 ] && grep -q "^kmemtrace $c: bad pid .0. (1 to 2147483647)$" err || exit 1
	done &&
	for c in record top watch; do
		rc=0; $KMT $c -b 2 > out 2> err || rc=$?
		[ $rc -eq 2 ] && grep -q "^kmemtrace $c: bad buffer size .2. (4 to 67108864)$" err || exit 1
		$KMT $c --help | grep -A 1 -- "^  -b, --buffer-size KB     ring buffer per CPU (default: half the memory$" |
			grep -q -- "budget over the CPUs, 64 to 16384; see above)$" ||
			{ echo "$c: no default rule in the help"; exit 1; }
	done &&
	$KMT record --help | grep -A 1 -- "--rt-prio N" | has "scheduling (default 1)$" &&
	$KMT top --help | grep -A 1 -- "--buffer-percent N" | has "this full (default 25)$"
'

# report's option groups (src/report/report-opts.c): one help and one parser
# for --hash-pointers and --raw-ip, --stats, -n.
test_expect_success 'report'"'"'s option groups: the same help and errors in every command' '
	for c in report export kmap check diff; do
		$KMT $c --help > help.$c || exit 1
	done &&
	for c in export kmap; do
		grep -A 3 -- "--hash-pointers\[=KEY\]" help.$c > hash.$c &&
		grep -A 3 -- "--hash-pointers\[=KEY\]" help.report | cmp - hash.$c || exit 1
	done &&
	grep -A 1 -- "--raw-ip" help.report | cmp - <(grep -A 1 -- "--raw-ip" help.kmap) &&
	for c in export kmap check; do
		grep -A 2 -- "--stats" help.report | cmp - <(grep -A 2 -- "--stats" help.$c) || exit 1
	done &&
	grep -- "-n, --top N" help.report | cmp - <(grep -- "-n, --top N" help.diff) &&
	for c in report diff; do
		rc=0; $KMT $c -n many a b > out 2> err || rc=$?
		[ $rc -eq 2 ] && [ "$(head -n 1 err)" = "kmemtrace $c: bad row count '"'"'many'"'"'" ] || exit 1
	done
'

# Each command's section of the manual (roff dashes made plain) names every
# long option its --help lists, which the option table generates.
test_expect_success 'the manual documents every option of every command' '
	cmds=$(commands) && for c in $cmds; do
		sed "s/\\\\-/-/g" $ROOT/docs/kmemtrace.1 |
			awk -v c="$c" "/^\\.S[SH] / { on = (\$0 == \".SS \" c) } on" > man.$c
		[ -s man.$c ] || { echo "no section for $c"; bad=1; }
		opts=$($KMT $c --help | grep -E "^  (-., )?--|^      --" | grep -o -- "--[a-z][a-z-]*" | sort -u) || exit 1
		for o in $opts; do
			[ "$o" = --help ] && continue
			grep -q -- "$o" man.$c || { echo "$c $o is not in its section of docs/kmemtrace.1"; bad=1; }
		done
	done && [ -z "${bad:-}" ]
'

# The library's surface is its public header: every symbol it exports is a
# kmt_ name declared in include/kmemtrace/, and nothing private leaks.
test_expect_success 'libkmemtrace.a exports exactly what include/kmemtrace/ declares' '
	command -v nm > /dev/null || { echo "nm is missing (binutils)"; exit 1; }
	nm -g --defined-only $B/libkmemtrace.a | awk "NF == 3 { print \$3 }" |
		grep -v "^__odr_asan" > syms &&	# what AddressSanitizer adds for globals
	[ $(wc -l < syms) -gt 100 ] &&
	! grep -v "^kmt_" syms &&
	for s in $(cat syms); do
		grep -qw "$s" $ROOT/include/kmemtrace/*.h || { echo "not declared in include/kmemtrace: $s"; exit 1; }
	done
'

test_done
