#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: the outputs built on report, each against the text report of
# the same file in the same round (paired): report --html and --json, diff
# of two recordings, and export to pprof, folded, perfetto and sqlite
# (objects/s for sqlite). One hackbench recording; ROUNDS paired rounds in
# a random order each. Prints a markdown section.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
LOOPS=${LOOPS:-2000}
. "$here/lib.sh"
trap - EXIT INT TERM

tmp=$(mktemp -d /tmp/kmt-bench-outputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
W="hackbench -g 4 -l $LOOPS"

echo "outputs bench: recording $W twice" >&2
"$KMT" record -q -o "$tmp/k.dat" -- $W > /dev/null 2>&1
"$KMT" record -q -o "$tmp/k2.dat" -- $W > /dev/null 2>&1
ev=$("$KMT" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $2 }')

# sqlite's own floor for the export: the same object rows copied inside
# sqlite (no analysis, no binding of values), into a table of the same
# columns, with the same pragmas and indexes, in one transaction.
"$KMT" export -f sqlite -o "$tmp/ref.sqlite" "$tmp/k.dat" > /dev/null 2>&1
{
	echo "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
	echo "PRAGMA threads = 2;"
	sqlite3 "$tmp/ref.sqlite" "SELECT sql FROM sqlite_master WHERE name = 'object_rows'" |
		sed 's/CREATE TABLE object_rows/CREATE TABLE copy/'
	echo ";"
	echo "BEGIN; INSERT INTO copy SELECT * FROM object_rows ORDER BY id;"
	echo "CREATE INDEX copy_site ON copy (alloc_site); CREATE INDEX copy_ptr ON copy (ptr, alloc_time);"
	echo "COMMIT;"
} > "$tmp/floor.sql"

# Each command writes a new file, and the previous command's output is
# written back first: no command pays for another's writeback or for
# freeing the file it replaces (as record.sh does between configurations).
t() {	# cmd... -> seconds (wall)
	rm -f "$tmp"/r.txt "$tmp"/r.html "$tmp"/r.json "$tmp"/d.txt "$tmp"/k.pb.gz "$tmp"/k.folded "$tmp"/k.pftrace
	sync
	/usr/bin/time -f "%e" -o "$tmp/t" "$@" > /dev/null 2>&1
	cat "$tmp/t"
}
names="text html json diff pprof folded perfetto sqlite sqlfloor"
declare -A runs ratios
for i in $(seq 1 "$ROUNDS"); do
	echo "outputs bench: round $i/$ROUNDS" >&2
	declare -A this=()
	for c in $(printf '%s\n' $names | shuf); do
		case $c in
		text) s=$(t "$KMT" report -o "$tmp/r.txt" "$tmp/k.dat");;
		html) s=$(t "$KMT" report --html -o "$tmp/r.html" "$tmp/k.dat")
		      html_kb=$(($(stat -c %s "$tmp/r.html") / 1024));;
		json) s=$(t "$KMT" report --json -o "$tmp/r.json" "$tmp/k.dat");;
		diff) s=$(t "$KMT" diff -o "$tmp/d.txt" "$tmp/k.dat" "$tmp/k2.dat");;
		pprof) s=$(t "$KMT" export -f pprof -o "$tmp/k.pb.gz" "$tmp/k.dat");;
		folded) s=$(t "$KMT" export -f folded -o "$tmp/k.folded" "$tmp/k.dat");;
		perfetto) s=$(t "$KMT" export -f perfetto -o "$tmp/k.pftrace" "$tmp/k.dat");;
		sqlite) rm -f "$tmp/k.sqlite"; s=$(t "$KMT" export -f sqlite -o "$tmp/k.sqlite" "$tmp/k.dat");;
		sqlfloor) cp "$tmp/ref.sqlite" "$tmp/f.sqlite"
		      s=$(t sh -c "sqlite3 '$tmp/f.sqlite' < '$tmp/floor.sql'"); rm -f "$tmp/f.sqlite";;
		esac
		this[$c]=$s
		runs[$c]="${runs[$c]:-} $s"
	done
	for c in $names; do
		ratios[$c]="${ratios[$c]:-} $(ratio "${this[$c]}" "${this[text]}")"
	done
	vsfloor="${vsfloor:-} $(ratio "${this[sqlite]}" "${this[sqlfloor]}")"
	unset this
done
med() { printf '%s\n' $1 | median; }
# Perfetto's threads: --stats' ns per event of the model's thread (at -j 2
# the writing too) and, from -j 3, of the writer thread.
stage() {	# stage-name stats-file -> ns/event
	awk -v s="$1" '$1 == s { print $3 }' "$2"
}
for i in $(seq 1 "$ROUNDS"); do
	"$KMT" export -f perfetto -j 2 --stats -o "$tmp/k.pftrace" "$tmp/k.dat" 2> "$tmp/s2" > /dev/null
	"$KMT" export -f perfetto -j 3 --stats -o "$tmp/k.pftrace" "$tmp/k.dat" 2> "$tmp/s3" > /dev/null
	pm2="${pm2:-} $(stage model "$tmp/s2")"; pm3="${pm3:-} $(stage model "$tmp/s3")"
	pw3="${pw3:-} $(stage writer "$tmp/s3")"
done
objects=$(sqlite3 "$tmp/k.sqlite" "select value from meta where key = 'objects'" 2>/dev/null || echo 0)

cat <<MD
### Outputs: \`report --html\`, \`--json\`, \`diff\` and \`export\` vs the text report — $ROUNDS paired rounds

Workload \`$W\`, recorded twice: $ev events in the first file ($(awk -v s="$(stat -c %s "$tmp/k.dat")" 'BEGIN { printf "%.1f MiB", s / 1048576 }') zstd).
Each round runs every command once, in a random order; the ratio is taken within the round.

| command | wall s (median) | × text report (median of paired ratios) | note |
|---|---|---|---|
| kmemtrace report (text) | $(med "${runs[text]}") | 1.00 | |
| kmemtrace report --html | $(med "${runs[html]}") | $(med "${ratios[html]}") | page of $html_kb KiB |
| kmemtrace report --json | $(med "${runs[json]}") | $(med "${ratios[json]}") | |
| kmemtrace diff (two recordings) | $(med "${runs[diff]}") | $(med "${ratios[diff]}") | both files analysed |
| kmemtrace export -f pprof | $(med "${runs[pprof]}") | $(med "${ratios[pprof]}") | |
| kmemtrace export -f folded | $(med "${runs[folded]}") | $(med "${ratios[folded]}") | |
| kmemtrace export -f perfetto | $(med "${runs[perfetto]}") | $(med "${ratios[perfetto]}") | every event |
| kmemtrace export -f sqlite | $(med "${runs[sqlite]}") | $(med "${ratios[sqlite]}") | $objects objects, $(awk -v o="$objects" -v s="$(med "${runs[sqlite]}")" 'BEGIN { printf "%.2f M objects/s", o / s / 1e6 }'), $(med "$vsfloor")× sqlite alone (paired) |
| sqlite alone: the same rows copied inside sqlite, same indexes | $(med "${runs[sqlfloor]}") | $(med "${ratios[sqlfloor]}") | the floor for any SQLite export on this machine: $(awk -v o="$objects" -v s="$(med "${runs[sqlfloor]}")" 'BEGIN { printf "%.2f M objects/s", o / s / 1e6 }') |

- Perfetto's threads (\`--stats\`, medians of $ROUNDS runs each): at -j 2 the model's thread takes
  $(med "$pm2") ns an event (the model and the writing); at -j 3 the model's thread $(med "$pm3")
  (the model and the hand-over) and the writer thread $(med "$pw3"). With a core each, what binds:
  $(awk -v a="$(med "$pm2")" 'BEGIN { printf "%.1f", 1e3 / a }') M events/s at -j 2,
  $(awk -v a="$(med "$pm3")" -v b="$(med "$pw3")" 'BEGIN { m = a > b ? a : b; printf "%.1f", 1e3 / m }') M events/s from -j 3
  (on these 2 CPUs the three threads share two cores, so the default here stays -j 2).
MD
