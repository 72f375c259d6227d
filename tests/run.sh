#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run every test: the cmocka unit tests (build/tests/test-*) and the CLI
# tests (tests/cli/t*.sh, which run the real binary on the real kernel),
# all as TAP. Ends with the line "N passed, N failed".
#
#   tests/run.sh [PATTERN...]     only tests whose file name matches
set -u
cd "$(dirname "$0")/.."
export KMT_BUILD=${KMT_BUILD:-build}
export KMT_TESTDATA=$PWD/tests/data
pass=0 fail=0 skip=0
failed=()

run_tap() {	# name command...
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	local p f s
	p=$(printf '%s\n' "$out" | grep -cE '^ok [0-9]+' || true)
	s=$(printf '%s\n' "$out" | grep -cE '^ok [0-9]+.*# (SKIP|skip)' || true)
	f=$(printf '%s\n' "$out" | grep -cE '^not ok [0-9]+' || true)
	# cmocka 1.1 says a skipped test is "not ok N # SKIP name": a skip, not a failure.
	local ns
	ns=$(printf '%s\n' "$out" | grep -cE '^not ok [0-9]+ # (SKIP|skip)' || true)
	p=$((p - s)); f=$((f - ns)); s=$((s + ns))
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && printf '%s\n' "$out" | grep -q '^1\.\.0 # SKIP'; then
		echo "SKIP $name: $(printf '%s\n' "$out" | sed -n 's/^1\.\.0 # SKIP //p')"
		skip=$((skip + 1))
		return
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# crashed or exited early without saying which test
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		failed+=("$name")
		echo "FAIL $name ($p passed, $f failed)"
		printf '%s\n' "$out" | sed 's/^/    /' | grep -vE '^    ok [0-9]+' | tail -n 60
	else
		echo "ok   $name ($p passed${s:+, $s skipped})"
	fi
}

match() {
	local f=$1 p
	[ $# -eq 1 ] && [ ${#PATTERNS[@]} -eq 0 ] && return 0
	for p in "${PATTERNS[@]}"; do case $f in *$p*) return 0;; esac; done
	return 1
}
PATTERNS=("$@")

for t in "$KMT_BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	match "$(basename "$t")" || continue
	run_tap "$(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
done
for t in tests/cli/t*.sh; do
	match "$(basename "$t")" || continue
	run_tap "$(basename "$t" .sh)" bash "$t"
done

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
[ "$skip" -gt 0 ] && echo "$skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
