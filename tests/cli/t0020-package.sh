#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian package, built as its README says (dpkg-buildpackage -us -uc
# -b) from this checkout's files (tracked and new, not ignored ones) in
# $WORK: what it holds, that its version, binary, manual and completion
# are the program's, and what lintian says of it and of its source.
# Nothing is installed (dpkg -i touches the machine: checked by hand).
. "$(dirname "$0")/lib.sh"
command -v dpkg-buildpackage > /dev/null && command -v dh > /dev/null ||
	test_skip_all "dpkg-buildpackage or debhelper is not installed (make deps installs them)"
git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1 || test_skip_all "not a git checkout: which files are the source is not known"
VERSION=$($KMT --version | sed 's/^kmemtrace //')
ARCH=$(dpkg --print-architecture)
DEB=$WORK/kmemtrace_${VERSION}_$ARCH.deb
# Not the outer make's flags (make check DEVELOPER=1): the package builds as Debian builds it.
unset MAKEFLAGS MAKELEVEL MFLAGS

test_expect_success 'a source package, then dpkg-buildpackage -us -uc -b: the .deb, unit tests run' '
	mkdir kmemtrace &&
	(cd "$ROOT" && git ls-files -z -c -o --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2> /dev/null) | tar -C kmemtrace -xf - &&
	dpkg-source -b kmemtrace > src.log 2>&1 || { cat src.log; exit 1; }
	(cd kmemtrace && dpkg-buildpackage -us -uc -b) > build.log 2>&1 || { tail -n 40 build.log; exit 1; }
	grep -E "^[0-9]+ passed, 0 failed$" build.log && [ -f $DEB ] && [ -f kmemtrace_${VERSION}.dsc ]
'

test_expect_success 'it holds the binary, the manual and the completion under /usr; copyright, changelog' '
	dpkg-deb -c $DEB | awk "{ print \$6 }" | grep -v "/$" | grep -v "\.md\(\.gz\)\?$" > files && cat files &&
	printf "%s\n" ./usr/bin/kmemtrace ./usr/share/bash-completion/completions/kmemtrace \
		./usr/share/doc/kmemtrace/changelog.gz ./usr/share/doc/kmemtrace/copyright \
		./usr/share/man/man1/kmemtrace.1.gz > expect &&
	sort files | diff -u expect - && dpkg-deb -c $DEB | has "/usr/share/doc/kmemtrace/README.md"
'

test_expect_success 'its version is the program'"'"'s; its manual and completion are this version'"'"'s' '
	[ "$(dpkg-deb -f $DEB Package Version | tr "\n" " ")" = "Package: kmemtrace Version: $VERSION " ] &&
	dpkg-deb -x $DEB root && root/usr/bin/kmemtrace --version | has -x "kmemtrace $VERSION" &&
	zcat root/usr/share/man/man1/kmemtrace.1.gz | grep -v "^\.\\\\\"" | sed -n 1p | has "\"kmemtrace $VERSION\"" &&
	root/usr/bin/kmemtrace completion bash | cmp - root/usr/share/bash-completion/completions/kmemtrace &&
	$KMT completion bash | cmp - root/usr/share/bash-completion/completions/kmemtrace
'

# For arm64 too, cross-built (the cross build's deps: make CROSS_COMPILE=... deps).
if [ "$ARCH" != arm64 ] && command -v aarch64-linux-gnu-gcc > /dev/null &&
   dpkg -s libzstd-dev:arm64 zlib1g-dev:arm64 libsqlite3-dev:arm64 > /dev/null 2>&1; then
	test_expect_success 'dpkg-buildpackage -aarm64 -Pnocheck: an arm64 package of an aarch64 binary' '
		(cd kmemtrace && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -aarm64 -Pnocheck -us -uc -b) \
			> arm.log 2>&1 || { tail -n 30 arm.log; exit 1; }
		[ "$(dpkg-deb -f kmemtrace_${VERSION}_arm64.deb Architecture)" = arm64 ] &&
		dpkg-deb -x kmemtrace_${VERSION}_arm64.deb arm && readelf -h arm/usr/bin/kmemtrace | has "Machine: *AArch64"
	'
else
	test_skip 'dpkg-buildpackage -aarm64' "no cross toolchain and arm64 libraries (make CROSS_COMPILE=aarch64-linux-gnu- deps)"
fi

if command -v lintian > /dev/null; then
	test_expect_success 'lintian: no error, no warning, on the binary package or the source' '
		rc=0; lintian --fail-on error,warning kmemtrace_${VERSION}_$ARCH.changes kmemtrace_${VERSION}.dsc \
			> lint 2>&1 || rc=$?; cat lint; [ $rc -eq 0 ] && ! grep -E "^[EW]: " lint
	'
else
	test_skip 'lintian: no error, no warning, on the binary package or the source' 'lintian is not installed'
fi

test_done
