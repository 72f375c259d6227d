#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Golden outputs: report (text, JSON, CSV), diff, kmap, dump, check, info
# and folded export of synthetic traces and two small real ones, compared
# byte for byte with tests/golden/expected, so a printer cannot drift
# unnoticed. No root, no tracefs: it runs anywhere.
#   KMT_GOLDEN_UPDATE=1 tests/run.sh t0050   rewrites the expected files
. "$(dirname "$0")/lib.sh"
G=$ROOT/tests/golden

test_expect_success 'the golden inputs' '
	$SYNTH full synth.dat && $SYNTH idle idle.dat && $SYNTH arch arch.dat && $SYNTH unnamed unnamed.dat &&
	cp $ROOT/tests/data/traces/real-v7-zstd.dat real.dat &&
	cp $ROOT/tests/data/traces/tracecmd-extract-v7.dat tc.dat
'

# Run case $1 (kmemtrace $2...) in the work directory, into $1.out.
golden_run() {
	local name=$1 rc=0
	shift
	(cd "$WORK" && TZ=UTC LC_ALL=C COLUMNS= $KMT "$@" > "$name.stdout" 2> "$name.stderr") || rc=$?
	{
		cat "$WORK/$name.stdout"
		if [ -s "$WORK/$name.stderr" ]; then echo "--- stderr"; cat "$WORK/$name.stderr"; fi
		echo "--- exit $rc"
	} > "$WORK/$name.out"
}

while IFS=$'\t' read -r name args; do
	case $name in ''|'#'*) continue ;; esac
	test_expect_success "golden: $name (kmemtrace $args)" '
		golden_run '"$name"' '"$args"' &&
		if [ -n "${KMT_GOLDEN_UPDATE:-}" ]; then
			cp '"$name"'.out '"$G"'/expected/'"$name"'
		fi &&
		diff -u '"$G"'/expected/'"$name"' '"$name"'.out
	'
done < "$G/cases"

test_expect_success 'every expected file has its case' '
	for f in $G/expected/*; do
		grep -q "^$(basename "$f")	" $G/cases || { echo "no case for $f"; exit 1; }
	done
'

test_done
