#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark: does the recorder's memory stay flat over a long recording?
# A steady workload (short hackbench runs back to back with a pause between
# them) is recorded for DURATION seconds (default 600) at default settings.
# Every STEP seconds the recorder's resident memory (VmRSS of the kmemtrace
# process, all threads) and the machine's MemAvailable are sampled; the
# drop in MemAvailable covers what the recorder holds in the kernel (pages
# in its holding pipes), which RSS does not show. Prints a markdown section.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KMT=${KMT:-$here/../build/kmemtrace}
DURATION=${DURATION:-600}
STEP=${STEP:-30}
. "$here/lib.sh"
trap - EXIT INT TERM

tmp=$(mktemp -d /tmp/kmt-bench-memflat.XXXXXX)
pid= kpid=
cleanup() { [ -n "$kpid" ] && kill -TERM "$kpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

cat > "$tmp/steady.sh" <<'SH'
#!/bin/sh
end=$(( $(date +%s) + $1 ))
while [ "$(date +%s)" -lt "$end" ]; do
	hackbench -g 1 -l 50 > /dev/null 2>&1
	sleep 0.5
done
SH
chmod +x "$tmp/steady.sh"

sync; echo 1 > /proc/sys/vm/drop_caches
a0=$(avail)
echo "memflat bench: recording a steady workload for $DURATION s" >&2
/usr/bin/time -f %M -o "$tmp/peak" "$KMT" record -q -o "$tmp/k.dat" -- "$tmp/steady.sh" "$DURATION" \
	> /dev/null 2> "$tmp/err" &
pid=$!
sleep 1
kpid=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null | awk '{ print $1 }')
[ -n "$kpid" ] || { echo "memflat bench: cannot find the recorder" >&2; exit 1; }
samples=()
t=0
while kill -0 "$pid" 2>/dev/null && [ "$t" -le "$DURATION" ]; do
	sleep "$STEP"; t=$((t + STEP))
	r=$(rss "$kpid"); [ -n "$r" ] || break
	a=$(avail)
	samples+=("$t $r $((a0 - a))")
	echo "memflat bench: ${t}s rss ${r} kB, MemAvailable -$(( (a0 - a) / 1024 )) MiB" >&2
done
wait "$pid"; rc=$?
kpid=
peak=$(cat "$tmp/peak")
pid=
ev=$("$KMT" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $2 }')
lost=$("$KMT" info "$tmp/k.dat" | tr -d , | awk '$1 == "all" { print $5 }')
size=$(stat -c %s "$tmp/k.dat")

cat <<MD
### Memory over a long recording — $DURATION s of a steady workload

\`kmemtrace record\` at default settings around \`hackbench -g 1 -l 50\` run back to back
(0.5 s apart) for $DURATION s: $ev events ($(awk -v e="$ev" -v d="$DURATION" 'BEGIN { printf "%.0f", e / d }')/s), $lost lost, exit status $rc,
$(awk -v s="$size" 'BEGIN { printf "%.0f MiB", s / 1048576 }') written (zstd). Sampled every $STEP s:

| time s | recorder RSS kB | MemAvailable drop MiB (holding pipes, page cache dirt) |
|---|---|---|
$(for s in "${samples[@]}"; do set -- $s; echo "| $1$([ "$1" -ge "$DURATION" ] && echo ' (writing the file)') | $2 | $(( $3 / 1024 )) |"; done)

- RSS while recording: $(for s in "${samples[@]}"; do set -- $s; [ "$1" -lt "$DURATION" ] && echo "$2"; done | sort -n | sed -n '1p;$p' | paste -sd- | sed 's/-/ to /') kB.
- Peak RSS over the whole run, writing the compressed file included: ${peak:-?} kB.
MD
