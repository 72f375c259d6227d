#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The house: lower folders never include higher ones, no two files include
# each other in a circle, every folder is in the README, no file is too big.
# Reads the tree only: no root, no tracefs.
. "$(dirname "$0")/lib.sh"

files() { git -C "$ROOT" ls-files "$@"; }

# Each folder and the folders it may include from (its own always). The
# library's stages first, bottom up; then the program's.
rules='
lib/base
lib/tracefile	lib/base
lib/event	lib/base lib/tracefile
lib/model	lib/base lib/tracefile lib/event
lib/analyse	lib/base lib/tracefile lib/event lib/model
lib/tracefs	lib/base lib/tracefile
lib/capture	lib/base lib/tracefile lib/event lib/tracefs
lib/watch	lib/base lib/tracefile lib/event lib/tracefs lib/capture
util	lib/base
report	util lib/base lib/tracefile lib/event lib/model lib/analyse
diff	report util lib/base lib/tracefile lib/event lib/model lib/analyse
export	report util lib/base lib/tracefile lib/event lib/model lib/analyse
record	util lib/base lib/tracefile lib/event lib/tracefs lib/capture lib/watch
top	record util lib/base lib/tracefile lib/event lib/model lib/analyse lib/tracefs lib/capture
html
commands	diff export record report top util lib/base lib/tracefile lib/event lib/model lib/analyse lib/tracefs lib/capture lib/watch
'

# The folder of a file: lib/STAGE, a program folder, or "commands" (src/ itself).
folder() {
	case $1 in
	src/lib/*/*) d=${1#src/}; echo "${d%/*}" ;;
	src/*/*) d=${1#src/}; echo "${d%%/*}" ;;
	src/*) echo commands ;;
	esac
}

# FILE TARGET-FOLDER lines: every #include of a project header.
includes() {
	for f in $(files 'src/*.[ch]' 'include/*.h'); do
		from=$(folder "$f")
		[ -n "$from" ] || from=include
		sed -n 's/^#include \([<"]\)\([^>"]*\)[>"].*/\1\2/p' "$ROOT/$f" | while read -r inc; do
			case $inc in
			"<kmemtrace/"*) t=${inc#<kmemtrace/}; echo "$f lib/${t%.h}" ;;
			'"'*/*) p=${inc#\"}; d=${p%/*}
				case $d in
				base|tracefile|event|model|analyse|tracefs|capture|watch) echo "$f lib/$d" ;;
				*) echo "$f $d" ;;
				esac ;;
			'"'*) case $f in
				include/*) t=${inc#\"}; echo "$f lib/${t%.h}" ;;
				*) echo "$f $from" ;;
				esac ;;
			esac
		done
	done
}

test_expect_success 'every folder of src/ has a rule, every public header is a stage' '
	for d in $(files "src/*" | sed "s|/[^/]*\$||" | sort -u); do
		f=$(folder "$d/x.c")
		printf "%s\n" "$rules" | has "^$f\b" || { echo "no rule for $d ($f)"; exit 1; }
	done &&
	for h in $(files "include/kmemtrace/*.h"); do
		s=$(basename "$h" .h)
		printf "%s\n" "$rules" | has "^lib/$s\b" || { echo "$h is no stage"; exit 1; }
	done
'

test_expect_success 'lower folders never include higher ones' '
	includes > incs && [ -s incs ] &&
	bad=0 &&
	while read -r f t; do
		from=$(folder "$f"); [ -n "$from" ] || from=lib/$(basename "$f" .h)
		[ "$from" = "$t" ] && continue
		allowed=$(printf "%s\n" "$rules" | awk -v f="$from" "\$1 == f { \$1 = \"\"; print }")
		case " $allowed " in *" $t "*) ;; *) echo "$f ($from) includes from $t"; bad=1 ;; esac
	done < incs && [ $bad = 0 ]
'

test_expect_success 'the rules themselves only point down: no two folders in a circle' '
	printf "%s\n" "$rules" | awk "NF { for (i = 2; i <= NF; i++) print \$1, \$i }" > edges &&
	[ -s edges ] && tsort edges > order 2> err && ! [ -s err ]
'

test_expect_success 'no two files include each other in a circle' '
	# Headers resolved to files: same folder, a folder under src/, or a stage.
	files "src/*.[ch]" "include/*.h" | while read -r f; do
		dir=${f%/*}
		sed -n "s/^#include \\([<\"]\\)\\([^>\"]*\\)[>\"].*/\\1\\2/p" "$ROOT/$f" | while read -r inc; do
			case $inc in
			"<kmemtrace/"*) echo "$f include/${inc#<}" ;;
			"\""*/*) p=${inc#\"}
				if [ -e "$ROOT/src/$p" ]; then echo "$f src/$p"; elif [ -e "$ROOT/src/lib/$p" ]; then echo "$f src/lib/$p"; fi ;;
			"\""*) [ -e "$ROOT/$dir/${inc#\"}" ] && echo "$f $dir/${inc#\"}" ;;
			esac
		done
	done > file-edges && [ -s file-edges ] &&
	tsort file-edges > /dev/null 2> err && ! [ -s err ] || { cat err; false; }
'


test_expect_success 'no C, header or JS file over 800 lines' '
	bad=0 &&
	for f in $(files "src/*.c" "src/*.h" "include/*.h" "src/*.js"); do
		n=$(wc -l < "$ROOT/$f"); [ "$n" -le 800 ] || { echo "$f: $n lines"; bad=1; }
	done && [ $bad = 0 ]
'

test_expect_success 'the README lists every folder of src/ and include/, and only those' '
	files "src/*" "include/*" | sed "s|/[^/]*\$|/|" | sort -u > tree &&
	sed -n "/^<!-- folders -->/,/^<!-- end folders -->/p" "$ROOT/README.md" |
		grep -o "^- \`[a-z/]*/\`" | sed "s/^- \`//; s/\`\$//" | sort > listed &&
	[ -s listed ] && diff -u tree listed
'

test_done
