#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: what the tasks' cgroups cost. One recording of the
# ground-truth workload in each of N cgroups (cgroup v2, made here and
# removed at the end); its report with the file's record of the cgroups,
# against the same file with that record left out (its option renamed to
# one no reader knows): the same events, the cgroups' work alone. Paired
# and repeated, the report's own CPU (user + system); and what recording
# them costs once: the snapshot of every task's cgroups (KMT_TIMES).
#
#   bench/cgroups.sh            N=1000 cgroups, G=1500 getxattr calls each
#   N=100 ROUNDS=3 bench/cgroups.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
WL=${WL:-$(dirname "$KMT")/workloads}
N=${N:-1000}
G=${G:-1500}
ROUNDS=${ROUNDS:-7}
JOBS=${JOBS:-1}
. "$here/lib.sh"

V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$V2" ] || { echo "cgroups bench: cgroup v2 is not mounted" >&2; exit 2; }
tmp=$(mktemp -d /tmp/kmt-bench-cg.XXXXXX)
base=$V2/kmt-bench-cg-$$
f=/dev/shm/kmt-bench-cg-$$
cleanup() {
	local d
	for d in "$base"/*/; do [ -d "$d" ] && rmdir "$d"; done 2> /dev/null
	[ -d "$base" ] && rmdir "$base"
	[ -n "${KEEP:-}" ] && echo "cgroups bench: kept $tmp" >&2 || rm -rf "$tmp"; rm -f "$f"
	bench_cleanup
}
trap cleanup EXIT INT TERM

mkdir "$base" && touch "$f" || exit 1
for i in $(seq 1 "$N"); do mkdir "$base/c$i" || exit 1; done
cat > "$tmp/wl.sh" <<EOF
for i in \$(seq 1 $N); do
	sh -c 'echo \$\$ > "\$1/cgroup.procs" && shift && exec "\$@"' x "$base/c\$i" $WL/kmt-gt -g $G "$f" > /dev/null || exit 1
done
EOF
echo "cgroups bench: recording kmt-gt -g $G in each of $N cgroups" >&2
KMT_TIMES=1 "$KMT" record -q --no-compress -o "$tmp/raw.dat" -- sh "$tmp/wl.sh" 2> "$tmp/times" || exit 1
snap_ms=$(awk '$4 == "cgroups" { print $5 }' "$tmp/times")
# The same file without the record: its option's id (0x4b03, little-endian, then a u32 size) renamed.
perl -0777 -pe 's/\x03\x4b(.{4})(kmemtrace-cgroups 1\n)/\x7f\x4b$1$2/s' "$tmp/raw.dat" > "$tmp/raw0.dat" || exit 1
"$KMT" convert -o "$tmp/cg.dat" "$tmp/raw.dat" > /dev/null 2>&1 &&
	"$KMT" convert -o "$tmp/none.dat" "$tmp/raw0.dat" > /dev/null 2>&1 || exit 1
"$KMT" info "$tmp/none.dat" | grep -q "^cgroups:    not recorded" || { echo "cgroups bench: the record is still there" >&2; exit 1; }
"$KMT" info "$tmp/cg.dat" | grep -q "^cgroups:    [0-9]* tasks at the start" || { echo "cgroups bench: no record in cg.dat" >&2; exit 1; }
for x in cg none; do
	"$KMT" report "$tmp/$x.dat" > "$tmp/$x.txt" 2> "$tmp/$x.err" || { echo "cgroups bench: report $x.dat failed:" >&2; cat "$tmp/$x.err" >&2; exit 1; }
done
ev=$("$KMT" info "$tmp/cg.dat" | tr -d , | awk '$1 == "all" { print $2 }')
rows=$("$KMT" report --csv cgroups "$tmp/cg.dat" | wc -l)

# The report's own CPU seconds (user + system) and wall seconds.
own() {	# file [option...]
	local TIMEFORMAT='%3U %3S %3R' t file=$1
	shift
	t=$( { time "$KMT" report -j "$JOBS" "$@" "$file" > /dev/null 2>&1; } 2>&1 )
	echo "$t" | awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }'
}

# The text report (every section; the cgroups' call sites not asked for), and JSON (with them).
# Instructions (valgrind's callgrind: exact, whatever the machine's noise), once each.
instr() {	# file [option...]
	local file=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$KMT" report -j 1 "$@" "$file" > /dev/null 2>&1 &&
		callgrind_annotate "$tmp/cg.out" 2> /dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
declare -A I
if command -v valgrind > /dev/null && [ -z "${NO_CALLGRIND:-}" ]; then
	echo "cgroups bench: counting instructions (callgrind)" >&2
	for x in cg none; do I[text$x]=$(instr "$tmp/$x.dat"); I[json$x]=$(instr "$tmp/$x.dat" --json); done
fi

declare -A C W
run_cfg() {	# cfg round
	read -r C[text$1,$2] W[text$1,$2] < <(own "$tmp/$1.dat")
	read -r C[json$1,$2] W[json$1,$2] < <(own "$tmp/$1.dat" --json)
}
paired_rounds cgroups "cg none"

cat <<MD
### What the tasks' cgroups cost — $(date -u +%F), $ROUNDS paired rounds

Machine: $(machine). \`$("$KMT" --version)\`.
File: kmt-gt -g $G run in each of $N cgroups (cgroup v2), recorded system-wide: $ev events, $((rows - 1)) rows in the cgroups table.
"none": the same file with its record of the tasks' cgroups left out. \`report -j $JOBS\`, its own CPU (user + system).

| what | with cgroups (median) | without (median) | with / without (paired median) |
|---|---|---|---|
| report (text) CPU s | $(col textcg C | median) | $(col textnone C | median) | $(pratio textcg textnone C) |
| report (text) wall s | $(col textcg W | median) | $(col textnone W | median) | $(pratio textcg textnone W) |
| report --json CPU s (each cgroup's call sites too) | $(col jsoncg C | median) | $(col jsonnone C | median) | $(pratio jsoncg jsonnone C) |
| report (text) instructions, callgrind | ${I[textcg]:--} | ${I[textnone]:--} | $(ratio "${I[textcg]:-0}" "${I[textnone]:-0}") |
| report --json instructions, callgrind | ${I[jsoncg]:--} | ${I[jsonnone]:--} | $(ratio "${I[jsoncg]:-0}" "${I[jsonnone]:-0}") |

Recording: the snapshot of every task's cgroups when tracing starts took $snap_ms ms (KMT_TIMES, once per recording).
MD
