#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What make install installs and where (below DESTDIR: no root, nothing
# outside $WORK): the binary, the manual of this version and the bash
# completion; what the completion offers, held to the program's own
# tables (each command's --help, the values report and export accept),
# run the way bash runs it: COMP_WORDS and COMP_CWORD set, _kmemtrace
# called; and the Debian package's version, held to the program's.
. "$(dirname "$0")/lib.sh"
D=$WORK/d
LOCAL=$D/usr/local
COMPLETION=$LOCAL/share/bash-completion/completions/kmemtrace
VERSION=$($KMT --version | sed 's/^kmemtrace //')
kmt_make() { make --no-print-directory -C "$ROOT" O="$B" "$@"; }

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

test_expect_success 'make install DESTDIR: binary, built manual, completion under /usr/local' '
	kmt_make DESTDIR="$D" install > out &&
	(cd "$D" && find . -type f -printf "%p %m\n" | sort) > files && cat files &&
	printf "%s\n" "./usr/local/bin/kmemtrace 755" \
		"./usr/local/share/bash-completion/completions/kmemtrace 644" \
		"./usr/local/share/man/man1/kmemtrace.1 644" > expect &&
	diff -u expect files &&
	cmp "$KMT" $LOCAL/bin/kmemtrace && $LOCAL/bin/kmemtrace --version | has -x "kmemtrace $VERSION"
'

test_expect_success 'the manual installed is the built one: this version, no placeholder' '
	cmp "$B/kmemtrace.1" $LOCAL/share/man/man1/kmemtrace.1 &&
	grep -v "^\.\\\\\"" $LOCAL/share/man/man1/kmemtrace.1 | sed -n 1p | has "^\.TH KMEMTRACE 1 [0-9-]* \"kmemtrace $VERSION\"" &&
	! grep -n "@[A-Z]*@" $LOCAL/share/man/man1/kmemtrace.1
'

test_expect_success 'the manual formats without a warning (as lintian checks it)' '
	command -v man > /dev/null || { echo "no man here: not checked"; exit 0; }
	LC_ALL=C.UTF-8 MANROFFSEQ= MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z \
		$LOCAL/share/man/man1/kmemtrace.1 2> warn > /dev/null; cat warn; [ ! -s warn ]
'

test_expect_success 'the completion installed is what the program writes from its tables' '
	rc=0; $KMT completion zsh 2> err || rc=$?; cat err; [ $rc -eq 2 ] &&
	$KMT completion bash > c.bash && cmp c.bash "$COMPLETION" && cmp c.bash "$B/kmemtrace.bash" &&
	bash -n "$COMPLETION"
'

if [ -r /usr/share/bash-completion/bash_completion ]; then
	test_expect_success 'bash-completion finds it where make install put it (PREFIX/share)' '
		XDG_DATA_DIRS=$LOCAL/share bash --norc --noprofile -c ". /usr/share/bash-completion/bash_completion &&
			__load_completion kmemtrace && complete -p kmemtrace" > out && cat out &&
		grep -q -- "-F _kmemtrace kmemtrace$" out
	'
else
	test_skip 'bash-completion finds it where make install put it (PREFIX/share)' 'bash-completion is not installed'
fi

test_expect_success 'PREFIX=/usr, and make uninstall removes exactly what install put' '
	kmt_make DESTDIR="$WORK/u" PREFIX=/usr install > out &&
	[ -x u/usr/bin/kmemtrace ] && [ -f u/usr/share/man/man1/kmemtrace.1 ] &&
	[ -f u/usr/share/bash-completion/completions/kmemtrace ] &&
	touch u/usr/bin/mine && kmt_make DESTDIR="$WORK/u" PREFIX=/usr uninstall > out &&
	[ "$(cd u && find . -type f)" = ./usr/bin/mine ]
'

test_expect_success 'the completion offers every command, and nothing else but --help, --version' '
	offers "" > got && { commands; echo --help; echo --version; } | sort > expect && diff -u expect got &&
	offers re > got && printf "%s\n" record report > expect && diff -u expect got
'

test_expect_success 'every option of every command'"'"'s --help, and only those' '
	bad=0
	cmds=$(commands) && for c in $cmds; do
		help_options $c > expect.$c && [ -s expect.$c ] &&
		offers $c - > got.$c && diff -u expect.$c got.$c || bad=1
	done
	[ $bad -eq 0 ] && grep -qx -- --stack-sample expect.record && grep -qx -- -B expect.report
'

test_expect_success 'report --sort: exactly the keys report accepts' '
	test_expect_code 2 $KMT report -s no-such-key 2> err &&
	sed -n "s/.*(keys: \(.*\))$/\1/p" err | tr , "\n" | sort > expect &&
	[ $(wc -l < expect) -ge 10 ] && offers report --sort "" > got && diff -u expect got &&
	offers report -s "" | diff -u expect - &&
	for k in $(cat got); do accepted report --sort $k || exit 1; done
'

test_expect_success 'report --sections: every section its --help names, and all; each accepted' '
	$KMT report --help | sed -n "/--sections LIST/,/ or all/p" | sed "s/--sections LIST//; s/^ *//" |
		tr -d "\n" | sed "s/, or all.*/,all/" | tr , "\n" > expect &&
	sort -o expect expect && [ $(wc -l < expect) -eq 11 ] &&
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

test_expect_success 'debian/changelog says the version kmemtrace says' '
	v=$(sed -n "1s/^kmemtrace (\([^)]*\)).*/\1/p" "$ROOT/debian/changelog") && echo "changelog: $v" &&
	[ "$v" = "$VERSION" ]
'

test_done
