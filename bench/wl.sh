#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run a workload and print "WALL CPU" on fd 3 (or stderr): its wall time and
# the busy CPU time of the whole machine meanwhile (user + system + irq,
# steal excluded), in seconds. The same wrapper runs in every benchmark
# configuration, inside the recorder when there is one, so both numbers
# cover exactly the workload.
hz=$(getconf CLK_TCK)
busy() { awk -v hz="$hz" '/^cpu / { printf "%.2f\n", ($2+$3+$4+$7+$8) / hz }' /proc/stat; }
c0=$(busy); t0=$(date +%s.%N)
"$@" > /dev/null 2>&1
rc=$?
t1=$(date +%s.%N); c1=$(busy)
out=$(awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" 'BEGIN { printf "%.4f %.2f", b - a, d - c }')
if { true >&3; } 2>/dev/null; then echo "$out" >&3; else echo "$out" >&2; fi
exit $rc
