#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: a change that should change nothing (a move, a refactor)
# against the binary before it, OLD: every output byte for byte on a fresh
# recording (tests/tools/same-bytes.sh), and, in paired rounds in random
# order, report's and record's CPU (user + sys of the command, which a busy
# machine disturbs less than wall time) and wall time. Prints a markdown
# section.  OLD=/path/to/old/kmemtrace bench/run.sh house
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
OLD=${OLD:?give OLD=/path/to/the/old/kmemtrace}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-1000}
. "$here/lib.sh"
trap - EXIT INT TERM

tmp=$(mktemp -d /tmp/kmt-bench-house.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
W="hackbench -g 4 -l $LOOPS"
echo "house bench: recording $W" >&2
"$KMT" record -q -o "$tmp/k.dat" -- $W > /dev/null 2>&1
ev=$("$KMT" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $2 }')
same=$("$here/../tests/tools/same-bytes.sh" "$OLD" "$KMT" "$tmp/k.dat" 2>/dev/null)
nsame=$(echo "$same" | grep -c " same ")
differ=$(echo "$same" | awk '/DIFFERS/ { print $1 }' | tr '\n' ' ')

t() {	# cmd... -> "cpu-seconds wall-seconds"
	/usr/bin/time -f "%U %S %e" -o "$tmp/t" "$@" > /dev/null 2>&1
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$tmp/t"
}
declare -A cpu wall
for i in $(seq 1 "$ROUNDS"); do
	echo "house bench: round $i/$ROUNDS" >&2
	for c in $(printf 'rnew\nrold\nwnew\nwold\n' | shuf); do
		case $c in
		rnew) read -r a b < <(t "$KMT" report --json "$tmp/k.dat");;
		rold) read -r a b < <(t "$OLD" report --json "$tmp/k.dat");;
		wnew) read -r a b < <(t "$KMT" record -q -o "$tmp/n.dat" -- hackbench -g 2 -l 500);;
		wold) read -r a b < <(t "$OLD" record -q -o "$tmp/o.dat" -- hackbench -g 2 -l 500);;
		esac
		cpu[$c,$i]=$a; wall[$c,$i]=$b
	done
done
row() {	# label new old
	echo "| $1 | $(col "$2" cpu | median) | $(col "$3" cpu | median) | $(pratio "$2" "$3" cpu) | $(col "$2" wall | median) | $(col "$3" wall | median) | $(pratio "$2" "$3" wall) |"
}
echo "### A change that should change nothing: ${NEW_NAME:-this binary} against \`$("$OLD" --version)\` (${OLD_NAME:-$OLD}) — $ROUNDS paired rounds"
echo
echo "- Outputs on a fresh \`$W\` recording ($ev events): $nsame same byte for byte${differ:+; differ: $differ}."
echo
echo "| command | CPU s new (median) | CPU s old | CPU new/old (paired median) | wall s new | wall s old | wall new/old |"
echo "|---|---|---|---|---|---|---|"
row "report --json ($ev events)" rnew rold
row "record -- hackbench -g 2 -l 500 (whole command)" wnew wold
echo
echo "- Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine widens the spread)."
