#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
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

# watch's floor: its two instances as it sets them up (the recording: the
# cache's allocations and frees, every kfree; the control: the cache's
# allocations, frees filtered by pointer), nobody reading, no watchpoint.
WI=$T/instances/kmt-bench-watch-$$
wfloor_on() {
	local a=$WI-rec/events/kmem b=$WI-ctl/events/kmem i
	mkdir "$WI-rec" "$WI-ctl" || return 1
	for i in "$WI-rec" "$WI-ctl"; do echo 65536 > "$i/buffer_size_kb"; echo mono > "$i/trace_clock"; done
	echo "name == \"$CACHE\"" > $a/kmem_cache_alloc/filter; echo 1 > $a/kmem_cache_alloc/enable
	echo "name == \"$CACHE\"" > $a/kmem_cache_free/filter; echo 1 > $a/kmem_cache_free/enable
	echo 1 > $a/kfree/enable
	echo "name == \"$CACHE\"" > $b/kmem_cache_alloc/filter; echo 1 > $b/kmem_cache_alloc/enable
	echo "ptr == 1" > $b/kfree/filter; echo 1 > $b/kfree/enable
	echo "ptr == 1" > $b/kmem_cache_free/filter; echo 1 > $b/kmem_cache_free/enable
}
wfloor_off() {
	local i
	for i in "$WI-rec" "$WI-ctl"; do
		[ -d "$i" ] || continue
		echo 0 > "$i/tracing_on"; echo 0 > "$i/events/enable"; rmdir "$i"
	done
}
trap 'wfloor_off; bench_cleanup; rm -rf "$tmp"' EXIT INT TERM

run_cfg() {
	local cfg=$1 i=$2
	case $cfg in
	untraced) "${WL[@]}" 3> "$tmp/t" ;;
	floor) floor_on 65536; "${WL[@]}" 3> "$tmp/t"; floor_off ;;
	wfloor) wfloor_on; "${WL[@]}" 3> "$tmp/t"; wfloor_off ;;
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

CFGS="untraced floor wfloor record watch"
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
$(row wfloor "watch's floor: its two instances, no reader, no watchpoint")
$(row watch "**kmemtrace watch**")

- watch over its own floor (paired median): $(pratio watch wfloor W)× wall, $(pratio watch wfloor C)× CPU — what
  the readers and the watchpoints cost beyond the tracing itself. The control instance is
  the expensive part: every kfree and kmem_cache_free on the machine passes its pointer filter.
- Samples captured by watch: $(med "${samples[@]}") per run (median), $rates per second of
  workload; objects watched per run: $(med "${objects[@]}") (median).

Coverage over time: \`$CACHE\` watched with \`--scan\` for $LONG s while \`hackbench -g 2 -l 200\`
runs back to back ($hits_long samples kept in all); counted from the file with
\`kmemtrace kmap --accessed --time 0,T\`:

| first T s | objects with samples | offsets with samples | (object, offset) pairs | samples |
|---|---|---|---|---|
$coverage
MD
