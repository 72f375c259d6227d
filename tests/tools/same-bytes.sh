#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Same bytes out: every output of two kmemtrace binaries on the same trace
# files, compared byte for byte (issue 25: a move changes no output).
#
#   tests/tools/same-bytes.sh OLD_BINARY NEW_BINARY FILE...
#
# Prints one line per output and file, "same" or "DIFFERS"; exits 1 if any
# differs. SQLite databases are compared by their .dump, pprof by its
# gunzipped bytes (gzip's header holds no time here, but be safe).
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD NEW FILE..." >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2"); shift 2
w=$(mktemp -d) || exit 2
[ -n "${KEEP:-}" ] || trap 'rm -rf "$w"' EXIT; echo "work: $w" >&2
differ=0

# name | command (FILE and OUT replaced)
cases=(
	"report|report FILE"
	"report-json|report --json FILE"
	"csv-summary|report --csv summary FILE"
	"csv-callsites|report --csv callsites FILE"
	"csv-caches|report --csv caches FILE"
	"csv-pages|report --csv pages FILE"
	"csv-processes|report --csv processes FILE"
	"csv-misuse|report --csv misuse FILE"
	"report-html|report --html -o OUT FILE"
	"report-wide|report --stack-depth 4 --time ,10 FILE"
	"diff|diff FILE FILE"
	"diff-json|diff --json FILE FILE"
	"kmap|kmap FILE"
	"kmap-json|kmap --json FILE"
	"dump|dump -a FILE"
	"check|check FILE"
	"info|info FILE"
	"pprof|export -f pprof -o OUT FILE"
	"perfetto|export -f perfetto -o OUT FILE"
	"folded|export -f folded -o OUT FILE"
	"sqlite|export -f sqlite -o OUT FILE"
)

run() {	# binary case file out
	local cmd=${2//FILE/$3}
	cmd=${cmd//OUT/$4}
	# shellcheck disable=SC2086
	(cd "$w" && "$1" $cmd > "$4.stdout" 2> "$4.stderr"; echo "exit $?" >> "$4.stderr")
	case $2 in
	*sqlite*) [ -e "$4" ] && sqlite3 "$4" .dump > "$4.x" ;;
	*pprof*) [ -e "$4" ] && gzip -dc < "$4" > "$4.x" ;;
	*OUT*) [ -e "$4" ] && cp "$4" "$4.x" ;;
	esac
	# The binary's own path may appear in messages: name it the same.
	sed -i "s|$1|kmemtrace|g" "$4.stdout" "$4.stderr"
}

for f in "$@"; do
	f=$(realpath "$f")
	for c in "${cases[@]}"; do
		name=${c%%|*} cmd=${c#*|}
		rm -f "$w"/a* "$w"/b*
		run "$old" "$cmd" "$f" "$w/a"
		run "$new" "$cmd" "$f" "$w/b"
		# Outputs that name themselves: the page's and the exports' paths differ (a vs b).
		for x in stdout stderr x; do
			[ -e "$w/a.$x" ] && sed -i "s|$w/a|OUT|g" "$w/a.$x"
			[ -e "$w/b.$x" ] && sed -i "s|$w/b|OUT|g" "$w/b.$x"
		done
		if cmp -s "$w/a.stdout" "$w/b.stdout" && cmp -s "$w/a.stderr" "$w/b.stderr" &&
		   { [ ! -e "$w/a.x" ] && [ ! -e "$w/b.x" ] || cmp -s "$w/a.x" "$w/b.x"; }; then
			printf '%-14s %-34s same (%s bytes)\n' "$name" "$(basename "$f")" \
				"$(cat "$w/a.stdout" "$w/a.x" 2>/dev/null | wc -c)"
		else
			printf '%-14s %-34s DIFFERS\n' "$name" "$(basename "$f")"
			differ=1
		fi
	done
done
exit $differ
