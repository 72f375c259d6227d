#!/usr/bin/env bash
# Benchmark: kmemtrace watch. (1) Its cost on a workload, paired and
# repeated like the recording benchmark: untraced | floor (kmemtrace
# record's events on in a private instance, no reader) | kmemtrace record |
# kmemtrace watch --scan on the workload's busiest cache; with the samples
# captured per second. (2) How coverage grows: one longer watch of a steady
# workload, then objects, offsets and (object, offset) pairs with samples
# in the first 1, 2, 4, ... seconds of the file. Prints a markdown section.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
ROUNDS=${ROUNDS:-5}
WORKLOAD=${WORKLOAD:-hackbench -g 4 -l 1000}
CACHE=${CACHE:-skbuff_head_cache}
TYPE=${TYPE:-sk_buff}
LONG=${LONG:-16}
. "$here/lib.sh"

tmp=$(mktemp -d /tmp/kmt-bench-watch.XXXXXX)
trap 'bench_cleanup; rm -rf "$tmp"' EXIT INT TERM
WL=("$here/wl.sh" $WORKLOAD)
declare -A W C
samples=() objects=() walls=()

run_cfg() {
	local cfg=$1 i=$2
	case $cfg in
	untraced) "${WL[@]}" 3> "$tmp/t" ;;
	floor) floor_on 65536; "${WL[@]}" 3> "$tmp/t"; floor_off ;;
	record) rm -f "$tmp/r.dat"; "$KMT" record -q -o "$tmp/r.dat" -- "${WL[@]}" 3> "$tmp/t" ;;
	watch)
		rm -f "$tmp/w.dat"
		"$KMT" watch -o "$tmp/w.dat" --cache "$CACHE" --scan --type "$TYPE" -- "${WL[@]}" \
			3> "$tmp/t" > /dev/null 2> "$tmp/w.err"
		samples+=("$(sed -n 's/.*: \([0-9]*\) samples recorded.*/\1/p' "$tmp/w.err")")
		objects+=("$(sed -n 's/.*: watched \([0-9]*\) of.*/\1/p' "$tmp/w.err")") ;;
	esac
	read -r W[$cfg,$i] C[$cfg,$i] < "$tmp/t"
	[ "$cfg" = watch ] && walls+=("${W[$cfg,$i]}")
}

CFGS="untraced floor record watch"
paired_rounds watch "$CFGS"

row() {	# cfg label
	printf '| %s | %.3f | %.3f | %.3f | %.2f | %.3f |\n' "$2" "$(col "$1" W | median)" \
		"$(pratio "$1" untraced W)" "$(pratio "$1" floor W)" "$(col "$1" C | median)" "$(pratio "$1" floor C)"
}
rates=$(for i in "${!samples[@]}"; do awk -v s="${samples[$i]}" -v w="${walls[$i]}" 'BEGIN { printf "%.0f\n", s / w }'; done | median)

# (2) coverage over time, from one long watch of a steady workload.
echo "watch bench: coverage, $LONG s of a steady workload" >&2
cat > "$tmp/steady.sh" <<'SH'
#!/bin/sh
end=$(( $(date +%s) + $1 ))
while [ "$(date +%s)" -lt "$end" ]; do hackbench -g 2 -l 200 > /dev/null 2>&1; done
SH
chmod +x "$tmp/steady.sh"
"$KMT" watch -o "$tmp/long.dat" --cache "$CACHE" --scan --type "$TYPE" -- "$tmp/steady.sh" "$LONG" \
	> /dev/null 2> "$tmp/long.err"
coverage=$(for t in 1 2 4 8 16 32 64; do
	[ "$t" -le "$LONG" ] || continue
	"$KMT" kmap --accessed --time "0,$t" --json "$tmp/long.dat" | jq -r --arg t "$t" '
		[.[] | . as $o | .accesses[] | {obj: $o.ptr, atime: $o.alloc_time, off: .offset,
		 n: (.reads + .writes)}] as $a |
		"| \($t) | \([.[]] | length) | \([$a[] | .off] | unique | length) | \([$a[] | "\(.obj)/\(.atime)/\(.off)"] | unique | length) | \([$a[] | .n] | add // 0) |"'
done)
hits_long=$("$KMT" report --json --sections access "$tmp/long.dat" | jq '.access.writes + .access.reads')

cat <<MD
### kmemtrace watch: cost, samples, coverage

Cost on \`$WORKLOAD\`, $ROUNDS paired rounds; watch follows \`$CACHE\` with \`--scan --type $TYPE\`
(two 8-byte words at a time on every CPU, moved on each free and every 100 ms), and records
that cache's allocations and every free besides.

| configuration | workload wall s (median) | × untraced | × floor (paired median) | machine CPU s | CPU × floor |
|---|---|---|---|---|---|
$(row untraced "untraced")
$(row floor "floor: record's events on, no reader")
$(row record "kmemtrace record")
$(row watch "**kmemtrace watch**")

- Samples captured by watch: $(med "${samples[@]}") per run (median), $rates per second of
  workload; objects watched per run: $(med "${objects[@]}") (median).

Coverage over time: \`$CACHE\` watched with \`--scan\` for $LONG s while \`hackbench -g 2 -l 200\`
runs back to back ($hits_long samples kept in all); counted from the file with
\`kmemtrace kmap --accessed --time 0,T\`:

| first T s | objects with samples | offsets with samples | (object, offset) pairs | samples |
|---|---|---|---|---|
$coverage
MD
