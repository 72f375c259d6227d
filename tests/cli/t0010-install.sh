#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What make install installs and where (below DESTDIR: no root, nothing
# outside $WORK): the binary, the manual of this version and the bash
# completion (what the completion offers: t0270); and the Debian
# package's version, held to the program's.
. "$(dirname "$0")/lib.sh"
D=$WORK/d
LOCAL=$D/usr/local
COMPLETION=$LOCAL/share/bash-completion/completions/kmemtrace
VERSION=$($KMT --version | sed 's/^kmemtrace //')
kmt_make() { make --no-print-directory -C "$ROOT" O="$B" "$@"; }

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

test_expect_success 'debian/changelog says the version kmemtrace says' '
	v=$(sed -n "1s/^kmemtrace (\([^)]*\)).*/\1/p" "$ROOT/debian/changelog") && echo "changelog: $v" &&
	[ "$v" = "$VERSION" ]
'

test_done
