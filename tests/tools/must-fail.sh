#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Tests that can fail: the CLI tests run against a kmemtrace that dies of
# SIGABRT as soon as it starts, in a copy of the build with everything
# else as it was (workloads, kmt-synth, the library). Every test file that
# runs kmemtrace must then fail; the tests that still pass are listed, as
# they check nothing of kmemtrace (or check it with a pipeline or a
# negation that hides its exit status).
#
#   tests/tools/must-fail.sh [PATTERN...]   only test files matching
#
# Prints a line per test file: "fails" (with how many of its tests still
# pass), "PASSES", or "no kmemtrace" for files that never run it. Exits 1
# when a file that runs kmemtrace passes.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${KMT_BUILD:-build}
[ -x "$B/kmemtrace" ] || { echo "$0: no $B/kmemtrace: build first" >&2; exit 2; }
w=$(mktemp -d /tmp/kmt-must-fail.XXXXXX) || exit 2
trap 'rm -rf "$w"' EXIT
cp -a "$B" "$w/build" || exit 2
rm -f "$w/build/kmemtrace"
printf '#!/bin/sh\nkill -ABRT $$\n' > "$w/build/kmemtrace"
chmod 755 "$w/build/kmemtrace"
touch -r "$B/kmemtrace" "$w/build/kmemtrace"	# make install takes it as built

bad=0
for t in tests/cli/t*.sh; do
	name=$(basename "$t" .sh)
	if [ $# -gt 0 ]; then
		m=0; for p in "$@"; do case $name in *$p*) m=1;; esac; done
		[ $m -eq 1 ] || continue
	fi
	# A file that runs another (t0401 runs t0400 as on another machine) runs what it runs.
	runs="$t $(grep -o 't[0-9]\{4\}-[a-z0-9-]*\.sh' "$t" | sed "s|^|tests/cli/|" | grep -vx "$t")"
	if ! cat $runs 2> /dev/null | grep -q '\$KMT\b\|\${KMT}'; then
		printf '%-28s no kmemtrace\n' "$name"
		continue
	fi
	out=$(KMT_BUILD="$w/build" bash "$t" 2>&1)
	rc=$?
	failed=$(printf '%s\n' "$out" | grep -c '^not ok ')
	passed=$(printf '%s\n' "$out" | grep '^ok ' | grep -vc '# SKIP')
	if printf '%s\n' "$out" | grep -q '^1\.\.0 # SKIP'; then
		printf '%-28s skipped: %s\n' "$name" "$(printf '%s\n' "$out" | sed -n 's/^1\.\.0 # SKIP //p')"
	elif [ "$failed" -gt 0 ] || [ $rc -ne 0 ]; then
		printf '%-28s fails (%d failed, %d still pass)\n' "$name" "$failed" "$passed"
	else
		printf '%-28s PASSES (%d passed)\n' "$name" "$passed"
		bad=1
	fi
	printf '%s\n' "$out" | grep '^ok ' | grep -v '# SKIP' | sed 's/^/    still passes: /'
done
exit $bad
