#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every source file says its license on its first lines (SPDX): the library
# (include/kmemtrace, src/lib) LGPL-2.1-or-later, everything else
# GPL-2.0-only; the texts are in LICENSES/. No root needed.
. "$(dirname "$0")/lib.sh"
git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1 || test_skip_all "not a git checkout: which files are the source is not known"

test_expect_success 'every source file has an SPDX line, with its part'"'"'s license' '
	(cd "$ROOT" && git ls-files -c -o --exclude-standard) |
	grep -E "\.(c|h|S|js|css|sh|py|proto|1)$|(^|/)(Makefile|rules|init|run)$" |
	grep -v "^tests/data/\|^tests/golden/expected/\|^fuzz/corpus/\|^fuzz/crashes/" > files &&
	[ "$(wc -l < files)" -gt 200 ] &&
	while read -r f; do
		case $f in include/kmemtrace/*|src/lib/*) want=LGPL-2.1-or-later ;; *) want=GPL-2.0-only ;; esac
		head -n 3 "$ROOT/$f" | has "SPDX-License-Identifier: $want\( \|\*\|$\)" ||
			{ echo "$f: no SPDX line for $want"; exit 1; }
	done < files &&
	[ -s "$ROOT/LICENSES/GPL-2.0-only.txt" ] && [ -s "$ROOT/LICENSES/LGPL-2.1-or-later.txt" ] &&
	grep -q "^License: LGPL-2.1-or-later" "$ROOT/debian/copyright"
'

test_done
