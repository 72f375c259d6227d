#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The bash completion that kmemtrace completion bash writes from the
# program's own tables (the build's build/kmemtrace.bash): what it offers,
# held to those tables (each command's --help, the values report, diff,
# export and top accept), run the way bash runs it: COMP_WORDS and
# COMP_CWORD set, _kmemtrace called. Where make install puts it: t0010. No
# root, no tracefs.
. "$(dirname "$0")/lib.sh"
COMPLETION=$WORK/c.bash	# written by the first test
VERSION=$($KMT --version | sed 's/^kmemtrace //')

# What the completion offers for the last of WORDS (after "kmemtrace"), one a line, sorted.
offers() {	# words...
	bash --norc --noprofile -c '. "$0" || exit 1
		COMP_WORDS=(kmemtrace "$@"); COMP_CWORD=$#; COMPREPLY=()
		_kmemtrace || exit 1
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' "$COMPLETION" "$@" | sort -u
}
# The options a command's --help lists: the labels ("  -o, --output FILE",
# "      --stack"), not their help text.
help_options() {	# command
	$KMT "$1" --help | grep -E '^(  -[A-Za-z]|      --)' | sed -E 's/^ +//; s/  .*//' |
		grep -oE -- '--?[A-Za-z0-9][A-Za-z0-9-]*' | sort -u
}
# Is VALUE of OPTION accepted? Bad usage exits 2; a missing file, 1.
accepted() {	# command option value
	local rc=0
	$KMT "$1" "$2" "$3" "$WORK/no-such.dat" > /dev/null 2>&1 || rc=$?
	[ $rc -ne 2 ] || { echo "kmemtrace $1 $2 $3: refused"; return 1; }
}
# The comma-separated list in parentheses at the end of the first line of
# kmemtrace's error for a bad value, one a line, sorted.
error_list() {	# command args...
	test_expect_code 2 $KMT "$@" 2> err > /dev/null &&
	sed -n '1s/.*(\(keys: \)\{0,1\}\([^()]*\))$/\2/p' err | tr -d " " | tr , "\n" | sort
}

test_expect_success 'kmemtrace completion bash: the script the build wrote, of this version; it registers _kmemtrace' '
	$KMT completion bash > c.bash && cmp c.bash "$B/kmemtrace.bash" && bash -n c.bash &&
	sed -n 1p c.bash | has -x "# bash completion for kmemtrace $VERSION, written by .kmemtrace completion bash." &&
	bash --norc --noprofile -c ". ./c.bash && complete -p kmemtrace" > reg &&
	[ "$(cat reg)" = "complete -o bashdefault -o default -F _kmemtrace kmemtrace" ]
'

test_expect_success 'kmemtrace completion with no shell, another shell or more: its usage (exit 2), nothing on stdout' '
	for args in "" zsh fish "bash bash" --help; do
		test_expect_code 2 $KMT completion $args > out 2> err && [ ! -s out ] &&
		[ "$(cat err)" = "usage: kmemtrace completion bash" ] || { echo "completion $args"; cat err; exit 1; }
	done
'

test_expect_success 'the completion offers every command, and nothing else but --help, --version' '
	offers "" > got && { commands; echo --help; echo --version; } | sort > expect && diff -u expect got &&
	offers re > got && printf "%s\n" record report > expect && diff -u expect got
'

# It is for the build and make install, not a command of the manual.
test_expect_success 'completion itself is not offered, as --help does not list it' '
	commands > cmds && ! grep -x completion cmds && [ -z "$(offers comp)" ] &&
	offers c | tr "\n" " " | has -x "check convert "
'

test_expect_success 'every option of every command'"'"'s --help, and only those' '
	bad=0
	cmds=$(commands) && for c in $cmds; do
		help_options $c > expect.$c && [ -s expect.$c ] &&
		offers $c - > got.$c && diff -u expect.$c got.$c || bad=1
	done
	[ $bad -eq 0 ] && grep -qx -- --stack-sample expect.record && grep -qx -- -B expect.report
'

# An option whose --help label names a value ("-o, --output FILE") takes
# the next word: no option is offered there. After any other ("--json",
# "--hash-pointers[=KEY]") the command's options are.
test_expect_success 'after an option that takes a value, no option; after any other, every option' '
	n=0 && cmds=$(commands) && for c in $cmds; do
		help_options $c > all.$c &&
		$KMT $c --help | grep -E "^(  -[A-Za-z]|      --)" | sed -E "s/^ +//; s/  .*//" > labels &&
		while read -r label; do
			case $label in *" "[!-]*) arg=1 ;; *) arg=0 ;; esac
			for o in $(echo "$label" | grep -oE -- "--?[A-Za-z0-9][A-Za-z0-9-]*"); do
				offers $c $o - > got && n=$((n + 1)) &&
				if [ $arg = 1 ]; then [ ! -s got ]; else cmp -s got all.$c; fi ||
					{ echo "$c $o (takes a value: $arg): $(tr "\n" " " < got)"; exit 1; }
			done
		done < labels
	done && echo "$n options" && [ $n -gt 150 ] &&
	[ -z "$(offers convert -o -)" ] && [ -z "$(offers dump --time -)" ] &&
	offers dump --raw-ip - | has -x -- --hash-pointers
'

test_expect_success 'report --sort: exactly the keys report accepts' '
	test_expect_code 2 $KMT report -s no-such-key 2> err &&
	sed -n "s/.*(keys: \(.*\))$/\1/p" err | tr , "\n" | sort > expect &&
	[ $(wc -l < expect) -ge 10 ] && offers report --sort "" > got && diff -u expect got &&
	offers report -s "" | diff -u expect - &&
	for k in $(cat got); do accepted report --sort $k || exit 1; done
'

test_expect_success 'report --sections: every section its --help names, and all; each accepted' '
	$KMT report --help | sed -n "/--sections LIST/,/(default/p" | tr -s "\n " "  " |
		sed "s/.*--sections LIST *//; s/ *(default.*//; s/ or /,/; s/ //g" | tr , "\n" | grep . > expect &&
	sort -o expect expect && [ $(wc -l < expect) -eq 12 ] &&
	offers report --sections "" > got && diff -u expect got &&
	for s in $(cat got); do accepted report --sections $s || exit 1; done &&
	! accepted report --sections no-such-section
'

test_expect_success 'export --format: the formats export knows; each accepted' '
	test_expect_code 2 $KMT export -f no-such-format 2> err &&
	sed -n "s/.*unknown format .* (\(.*\))$/\1/p" err | tr -d " " |
		tr , "\n" | sort > expect && [ $(wc -l < expect) -eq 4 ] &&
	offers export --format "" > got && diff -u expect got && offers export -f "" | diff -u expect - &&
	for f in $(cat got); do accepted export --format $f || exit 1; done
'

# diff of two files that are not there: exit 1, once the options are taken.
test_expect_success 'diff --sort and --csv: exactly the keys and tables diff accepts' '
	error_list diff -s no-such-key a.dat b.dat > expect && cat expect | tr "\n" " " && [ $(wc -l < expect) = 8 ] &&
	offers diff --sort "" | diff -u expect - && offers diff -s "" | diff -u expect - &&
	for k in $(cat expect); do test_expect_code 1 $KMT diff --sort $k no.dat no.dat 2> /dev/null || exit 1; done &&
	error_list diff --csv no-such-table a.dat b.dat > expect && [ "$(tr "\n" " " < expect)" = "caches callsites cgroups pages processes " ] &&
	offers diff --csv "" | diff -u expect - &&
	for t in $(cat expect); do test_expect_code 1 $KMT diff --csv $t no.dat no.dat 2> /dev/null || exit 1; done
'

# top traces when its options are good: a bad --interval after the value
# tried stops it, and says the value before was taken.
test_expect_success 'top --view and --sort: exactly the views and keys top accepts' '
	error_list top --view no-such-view > expect && [ "$(tr "\n" " " < expect)" = "cache callsite cgroup process " ] &&
	offers top --view "" | diff -u expect - &&
	error_list top -s no-such-key > expect && [ $(wc -l < expect) = 7 ] &&
	offers top --sort "" | diff -u expect - && offers top -s "" | diff -u expect - &&
	for v in view:$(offers top --view "" | tr "\n" ",") sort:$(offers top -s "" | tr "\n" ","); do
		o=${v%%:*} && for x in $(echo ${v#*:} | tr , " "); do
			test_expect_code 2 $KMT top --$o $x -i nonsense 2> err &&
			grep -qx "kmemtrace top: bad interval .nonsense. (0.1 to 3600 seconds)" err || { echo "top --$o $x"; cat err; exit 1; }
		done
	done
'

test_expect_success 'a value after =, whether or not = breaks words; the last item of a list' '
	[ "$(offers report --sort=wa)" = --sort=waste ] &&
	[ "$(offers report --sort = wa)" = waste ] &&
	[ "$(offers report --sort =)" = "$(offers report --sort "")" ] &&
	[ "$(offers report --sections summary,ca | tr "\n" " ")" = "summary,caches summary,callsites " ] &&
	[ "$(offers report -s bytes,x-)" = bytes,x-cpu ] &&
	[ "$(offers export --format p | tr "\n" " ")" = "perfetto pprof " ]
'

test_expect_success 'no candidates where a file, a number or a name goes (bash then offers files)' '
	[ -z "$(offers report -o "")" ] && [ -z "$(offers report -n "")" ] &&
	[ -z "$(offers report "")" ] && [ -z "$(offers no-such-command -)" ] &&
	[ -z "$(offers report --hash-pointers "")" ] &&
	offers record -- ec | has -x echo && [ -z "$(offers record -- make -)" ]
'

test_done
