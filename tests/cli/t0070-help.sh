#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Help, manual and behaviour agree: the events record records by default,
# the sort keys and sections report and diff take and the choices of diff,
# export and convert (what --help lists, what the manual lists, what the
# error message lists and what is accepted are one list), --columns'
# brackets, the x-cpu column and its key, the per-object record's columns
# (kmap's line and --json, the SQLite view objects) as the docs name them,
# and a name that matches nothing (a warning, exit 0, as report does). No
# root, no tracefs.
. "$(dirname "$0")/lib.sh"

# Command $1's section of the manual, roff dashes made plain, on one line.
man_section() {
	sed 's/\\-/-/g' $ROOT/docs/kmemtrace.1 | awk -v c="$1" '/^\.S[SH] / { on = ($0 == ".SS " c) } on' |
		tr "\n" " "
}
# The help text of option $2 of command $1, on one line.
opt_help() {
	$KMT $1 --help | awk -v o="$2" '
		/^  (-., )?--|^      --/ { on = index($0, o) > 0; if (on) { print; next } }
		on && /^                           / { print }' | tr -s "\n " "  "
}
# The words of a list "a, b (the default), c or d." one a line, sorted.
words() {
	sed "s/([^)]*)//g; s/\bor\b/,/g; s/\band\b/,/g" | tr ",. " "\n\n\n" |
		grep -x "[a-z][a-z-]*" | sort -u
}

test_expect_success 'the inputs' '
	$SYNTH full synth.dat && cp $ROOT/tests/data/traces/real-v7-zstd.dat real.dat
'

test_expect_success 'record --help lists the events it records by default, the manual too' '
	$KMT record --help | sed -n "/^Recorded by default/,/^\$/p" | tail -n +2 | tr ", " "\n\n" |
		grep . > defaults && cat defaults &&
	grep -qx vmalloc:alloc_vmap_area defaults && grep -qx vmalloc:free_vmap_area_noflush defaults &&
	grep -qx kmem:mm_page_free_batched defaults && [ $(wc -l < defaults) -ge 11 ] &&
	man_section record > man.record &&
	for e in $(grep -v _node defaults); do
		grep -q "${e#*:}" man.record || { echo "$e is not in the manual"; exit 1; }
	done
'

test_expect_success 'report -s: the keys of --help, the manual, the error message, all accepted' '
	opt_help report "--sort" | sed "s/.*keys it has://" | words > help.keys &&
	man_section report | sed "s/.*Sort every table by the keys it has://; s/\.TP.*//" | words > man.keys &&
	test_expect_code 2 $KMT report -s nosuch synth.dat 2> err &&
	sed -n "s/.*(keys: \(.*\))/\1/p" err | words > err.keys &&
	cat help.keys | tr "\n" " " && diff -u help.keys man.keys && diff -u help.keys err.keys &&
	grep -qx x-cpu help.keys && ! grep -qx pingpong help.keys &&
	for k in $(cat help.keys); do
		$KMT report -s $k -n 1 synth.dat > /dev/null || { echo "-s $k refused"; exit 1; }
	done
'

test_expect_success 'report --sections: the names of --help, the manual, all accepted' '
	opt_help report "--sections" | sed "s/--sections LIST//; s/ access: .*//" | words > help.sec &&
	man_section report | grep -o "summary, callsites, .*, or all (default)" | words > man.sec &&
	diff -u help.sec man.sec && grep -qx vmalloc help.sec &&
	for s in $(cat help.sec); do
		[ "$s" = all ] || $KMT report --sections $s synth.dat > /dev/null || { echo "$s refused"; exit 1; }
	done
'

# A choice (OT_CHOICE) is one table of names: its error message lists them,
# the completion offers them, its --help and its section of the manual name
# each, and each is accepted.
test_expect_success 'choices (diff --match, export --value, convert --compression): one list everywhere' '
	$KMT completion bash > compl &&
	for co in "diff match" "export value" "convert compression"; do
		set -- $co
		rc=0; $KMT $1 --$2 nosuch a b 2> err || rc=$?; cat err
		[ $rc = 2 ] && sed -n "s/.* .nosuch. (\(.*\))$/\1/p" err | tr -d " " | tr "," "\n" > names &&
		[ $(wc -l < names) -ge 3 ] && grep "^	$1:--$2) values=" compl > line &&
		[ $(wc -w < line) = $(( $(wc -l < names) + 2 )) ] &&
		opt_help $1 "--$2" > help && man_section $1 > man || exit 1
		for v in $(cat names); do
			grep -qw -- "$v" line && grep -qw -- "$v" help && grep -qw -- "$v" man ||
				{ echo "$1 --$2 $v: not in the completion, --help and the manual"; exit 1; }
			case $1 in
			diff) $KMT diff --match $v synth.dat real.dat ;;
			export) $KMT export -f folded --value $v -o - synth.dat ;;
			convert) $KMT convert --compression $v synth.dat c-$v.dat 2> /dev/null ;;
			esac > /dev/null || { echo "$1 --$2 $v refused"; exit 1; }
		done
	done
'

# docs/diff-json.md has a heading per table ("## total", "### callsites[]")
# under which every column diff --columns lists for it is named.
test_expect_success 'docs/diff-json.md names every table and column diff --columns lists' '
	$KMT diff --columns > dcols &&
	awk "/^[a-z_]+( \\(JSON: [^)]*\\))?: / { t = \$1; sub(/:\$/, \"\", t); next }
		/^  (in|compared) / { next }
		/^  [a-z_]+ / { print t, \$1 }" dcols > dpairs &&
	[ $(wc -l < dpairs) -gt 30 ] && grep -qx "pages order" dpairs && grep -qx "total pages_allocated" dpairs &&
	while read -r t c; do
		awk -v t="$t" "/^#/ { h = \$0; sub(/^#+ /, \"\", h); sub(/\\[\\]\$/, \"\", h); on = (h == t); next } on" \
			$ROOT/docs/diff-json.md > part &&
		[ -s part ] || { echo "no heading for table $t"; exit 1; }
		grep -q "\`$c\`" part || { echo "$t.$c is not in docs/diff-json.md"; exit 1; }
	done < dpairs
'

test_expect_success 'diff -s: the keys of --help, the manual, the error message, all accepted' '
	opt_help diff "--sort" | sed "s/.*change in://" | words > dhelp.keys &&
	man_section diff | sed "s/.*Sort by the size of the change in://; s/\.TP.*//" | words > dman.keys &&
	test_expect_code 2 $KMT diff -s nosuch real.dat real.dat 2> derr &&
	sed -n "s/.*(keys: \(.*\))/\1/p" derr | words > derr.keys &&
	diff -u dhelp.keys dman.keys && diff -u dhelp.keys derr.keys &&
	for k in $(cat dhelp.keys); do
		$KMT diff -s $k synth.dat real.dat > /dev/null || { echo "-s $k refused"; exit 1; }
	done
'

test_expect_success 'report --columns: every [-s KEY] closed; x-cpu one name, title and key' '
	$KMT report --columns > cols &&
	[ "$(grep -c "\[-s " cols)" -gt 20 ] && [ "$(grep -c "\[-s [a-z-]*\]$" cols)" = "$(grep -c "\[-s " cols)" ] &&
	grep -q "^  cross_cpu_frees .*\[-s x-cpu\]$" cols && ! grep -q pingpong cols &&
	$KMT report --sections callsites synth.dat | has "^  call site .* x-cpu " &&
	$KMT report -s x-cpu --csv callsites synth.dat > x.csv &&
	awk -F, "NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"cross_cpu_frees\") c = i; next }
		{ if (prev != \"\" && \$c > prev) exit 1; prev = \$c }" x.csv
'

# The per-object record's columns (src/export/objcols.c) as the docs name them.
test_expect_success 'kmap: its line in --help, docs/kmap.md and the manual; every --json key in docs/kmap.md' '
	$KMT kmap --help | sed -n "/KMAP format:\$/{n;p}" | tr -d " " > line && cat line &&
	grep -q "^alloc_ip,pid,obj_va_ptr," line && grep -qxF "# $(cat line)" $ROOT/docs/kmap.md &&
	man_section kmap | has -F "$(cat line)" &&
	for f in $(tr , " " < line); do
		grep -q "^| \`$f\` |" $ROOT/docs/kmap.md || { echo "$f is not in docs/kmap.md"; exit 1; }
	done &&
	$KMT kmap --json real.dat | sed -n 2p | grep -o "\"[a-z_]*\":" | tr -d "\":" > keys &&
	[ $(wc -l < keys) -ge 19 ] && sed -n "/^## JSON/,\$p" $ROOT/docs/kmap.md > json.md &&
	for k in $(cat keys); do grep -q "\`$k\`" json.md || { echo "$k is not in docs/kmap.md"; exit 1; }; done
'

test_expect_success 'export sqlite: every column of the view objects in docs/export.md' '
	command -v sqlite3 > /dev/null || { echo "sqlite3 missing (make deps)"; exit 1; }
	$KMT export -f sqlite -o o.sqlite real.dat &&
	sqlite3 o.sqlite "SELECT name FROM pragma_table_info('"'"'objects'"'"')" > vcols &&
	[ $(wc -l < vcols) -ge 22 ] && grep "^| \`objects\`" $ROOT/docs/export.md > row &&
	for c in $(cat vcols); do grep -q "\`$c\`" row || { echo "objects.$c is not in docs/export.md"; exit 1; }; done
'

test_expect_success 'a name that matches nothing: a warning, no output, exit 0 (kmap as report)' '
	for args in "kmap --cache nosuch" "kmap --callsite nosuch" "report --cache nosuch" "kmap -p 99999" \
		    "kmap --callsite nosuch --json"; do
		rc=0; $KMT $args real.dat > out 2> err || rc=$?
		echo "$args: $rc $(cat err)"
		[ $rc = 0 ] && [ $(wc -l < err) = 1 ] && grep -q "warning: real.dat: no .* is in the trace: nothing to report" err ||
			exit 1
		case $args in kmap*json) [ "$(cat out)" = "[]" ] ;; kmap*) [ "$(grep -vc "^#" out)" = 0 ] ;; esac || exit 1
	done &&
	$KMT kmap --callsite do_getxattr real.dat > out 2> err && [ -s out ] && [ ! -s err ] &&
	$KMT kmap --callsite do_getxattr --live real.dat > out 2> err && [ ! -s err ] &&
	sed -n "/^\.SH EXIT STATUS/,/^\.SH/p" $ROOT/docs/kmemtrace.1 | tr "\n" " " | has "matches nothing"
'

test_done
