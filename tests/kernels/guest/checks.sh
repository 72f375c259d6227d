#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The checks each guest runs on its kernel (busybox sh, jq): kmemtrace
# recording the ground-truth workload kmt-gt with record's modes, check on
# a system-wide recording, the outputs, cache names, top, watch's
# self-test, --recover after a SIGKILL, and tracefs left clean.
#
#   sh /checks.sh all      every check, each under a timeout (kmt.timeout=S on
#                          the kernel command line, 120 s), a check's failure
#                          stopping no other; one line per check on standard
#                          output: "KMT-CHECK NAME ok|FAIL|skip SECONDS", then
#                          "KMT-DETAIL NAME ..." (what it found) and, for a
#                          FAIL, "KMT-LOG NAME ..." (the end of its log)
#   sh /checks.sh NAME     one check: its log on standard output, exit 0 ok,
#                          1 FAIL, 77 skip
#
# Files (traces, reports, logs, the kernel's log) go to /out, which the
# host reads back.
# kmt.sabotage=1 on the kernel command line makes every check expect 1000
# more than it should: each must then FAIL (tests/kernels/README.md).
set -u
K=/kmt/kmemtrace WL=/kmt/workloads T=/sys/kernel/tracing OUT=/out
CHECKS="gt gt-F gt-stack gt-sample outputs caches cgroups check top watch recover tracefs kernel"
G=137	# getxattr calls of 1337 bytes: as many kmallocs, freed at once
N=300	# opens of /dev/null: a struct filename and a struct file each
SAB=$(sed -n 's/.*kmt\.sabotage=\([0-9]*\).*/\1/p' /proc/cmdline)
SAB=$((${SAB:-0} * 1000))
# kmt.checks=a,b: only those checks. kmt.settle=S: seconds a recording goes
# on after kmt-gt, for the frees deferred to RCU (default 2).
ONLY=$(sed -n 's/.*kmt\.checks=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
SETTLE=$(sed -n 's/.*kmt\.settle=\([0-9.]*\).*/\1/p' /proc/cmdline)
SETTLE=${SETTLE:-2}
# kmt.timeout=S: seconds a check may take (default 120; they take 1 to 25).
LIMIT=$(sed -n 's/.*kmt\.timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
LIMIT=${LIMIT:-120}
# What the kernel says when something is wrong (its log, not the console's).
KERNEL_BAD='BUG:|WARNING:|Oops|soft lockup|hung_task|blocked for more than|rcu_.*stall|Call Trace|general protection'
F=/mnt/x/gt
grep -q " /mnt/x " /proc/mounts || F=/tmp/gt
export LD_LIBRARY_PATH=/lib COLUMNS=
unset COLUMNS

# ---- helpers: each prints what it compares; "detail:" lines are forwarded.

detail() { echo "detail: $*"; }
want() {	# label got expected: got == expected (+ the sabotage)
	echo "$1 = $2 (want $(($3 + SAB)))"
	[ "$2" -eq $(($3 + SAB)) ]
}
want_ge() {	# label got minimum
	echo "$1 = $2 (want >= $(($3 + SAB)))"
	[ "$2" -ge $(($3 + SAB)) ]
}
pid_of() { sed -n 's/^kmt-gt pid \([0-9]*\):.*/\1/p' "$OUT/$1.out"; }
# Sum of a callsites field over the call sites whose function matches a regex.
sites() {	# json regex field
	jq "[.callsites[] | select(.function | test(\"$2\")) | .$3] | add // 0" "$1"
}
# The functions of those call sites, with their allocs/frees.
site_names() {	# json regex
	jq -r "[.callsites[] | select(.allocs > 0 and (.function | test(\"$2\"))) |
		\"\(.function) \(.allocs)/\(.frees)\"] | join(\", \")" "$1"
}
# Slab allocations of a dump (one task's) at functions matching a regex.
dump_allocs() {	# dump regex
	awk -v re="$2" '($4 == "kmalloc" || $4 == "kmem_cache_alloc" || $4 ~ /_node$/) {
		fn = $5; sub(/\+0x[0-9a-f]+$/, "", fn); if (fn ~ re) n++ } END { print n + 0 }' "$1"
}

# Frees, by any task, of the objects task PID allocated at functions
# matching a regex (the whole file's events, in order): what the kernel did.
dump_frees_of() {	# file pid regex
	$K dump $1 | awk -v p="-$2" -v re="$3" '
		($4 == "kmalloc" || $4 == "kmem_cache_alloc" || $4 ~ /_node$/) && $3 ~ p"$" {
			fn = $5; sub(/\+0x[0-9a-f]+$/, "", fn)
			for (i = 6; i <= NF; i++) if ($i ~ /^ptr=/) ptr = substr($i, 5)
			if (fn ~ re) mine[ptr] = 1; else delete mine[ptr]
		}
		($4 == "kfree" || $4 == "kmem_cache_free") {
			for (i = 6; i <= NF; i++) if ($i ~ /^ptr=/ && (substr($i, 5) in mine)) { n++; delete mine[substr($i, 5)] }
		}
		END { print n + 0 }'
}

# The call sites of the workload, by function, on every version: the
# struct filename of a path (names_cache), the struct file of an open
# (filp: __alloc_file before 5.19, alloc_empty_file after).
RE_NAME='^getname_flags([.].*)?$'
RE_FILP='^(alloc_empty_file|__alloc_file)([.].*)?$'

# Record kmt-gt (-g G -s 1337 -o N) into NAME.dat with record's OPTIONS,
# then sleep a second so that the frees the kernel defers to RCU (struct
# file before 6.7) come before the recording ends.
gt_record() {	# name [option...]
	local name=$1
	shift
	rm -f "$F" && touch "$F" || return 1
	$K record -q "$@" -o $OUT/$name.dat -- \
		sh -c "$WL/kmt-gt -g $G -s 1337 -o $N $F && sleep $SETTLE" > $OUT/$name.out 2> $OUT/$name.err
	local rc=$?
	cat $OUT/$name.out $OUT/$name.err
	echo "record $* exit $rc"
	[ $rc -eq 0 ] && [ -n "$(pid_of $name)" ]
}

# The ground truth in NAME.dat, event by event (dump: the decoder) and per
# call site (report --json: the model), for kmt-gt's pid. FREES_FILP=no
# when struct file's frees need not be there (-F: RCU frees them later, in
# another task). Leaves NAME.json (-p pid), NAME.all.json (the whole file).
# A command that fails (a file it calls damaged) fails the check, and the
# counts are still taken from what it printed.
gt_verify() {	# name frees_filp
	local name=$1 ff=$2 pid d j fn a f ra rf da na nf fa ffr bad=0 rc
	pid=$(pid_of $name)
	d=$OUT/$name.dump j=$OUT/$name.json
	$K dump -p $pid $OUT/$name.dat > $d || { rc=$?; echo "dump exit $rc"; detail "dump exit $rc"; bad=1; }
	$K report --json -p $pid $OUT/$name.dat > $j || { rc=$?; echo "report exit $rc"; detail "report exit $rc"; bad=1; }
	$K report --json $OUT/$name.dat > $OUT/$name.all.json || { echo "report (all) exit $?"; bad=1; }
	[ -s $j ] || { echo "no report"; return 1; }
	# The 1337-byte kmallocs and the frees of those very objects.
	set -- $(awk '$4 ~ /^kmalloc/ {
			req = ptr = ""
			for (i = 6; i <= NF; i++) { if ($i ~ /^req=/) req = substr($i, 5); if ($i ~ /^ptr=/) ptr = substr($i, 5) }
			if (req == 1337) { live[ptr] = 1; n++; fn = $5; sub(/\+0x[0-9a-f]+$/, "", fn); site[fn]++ }
		}
		$4 == "kfree" { for (i = 6; i <= NF; i++) if ($i ~ /^ptr=/ && live[substr($i, 5)]) { delete live[substr($i, 5)]; f++ } }
		END { s = ""; for (k in site) s = s (s ? "," : "") k; print n + 0, f + 0, (s ? s : "-") }' $d)
	a=$1 f=$2 fn=$3
	detail "the ${G} getxattr(1337) kmallocs: $a allocated, $f freed, at $fn"
	want "dump: kmallocs of 1337 bytes" $a $G && want "dump: of them freed" $f $G || bad=1
	if [ "$fn" = - ] || [ "$fn" != "${fn#*,}" ]; then
		echo "not one call site: $fn"
		bad=1
	else
		echo "$fn" > $OUT/$name.site
		ra=$(sites $j "^$fn\$" allocs) rf=$(sites $j "^$fn\$" frees) da=$(dump_allocs $d "^$fn\$")
		detail "report: $fn allocs $ra frees $rf (dump: $da allocations there)"
		want "report: $fn allocs" $ra $da && want "report: $fn frees" $rf $ra && want_ge "report: $fn allocs" $ra $G ||
			bad=1
	fi
	# Opens: a struct filename for every path (the opens, the getxattrs,
	# exec's), all freed; a struct file for every open.
	na=$(sites $j "$RE_NAME" allocs) nf=$(sites $j "$RE_NAME" frees)
	fa=$(sites $j "$RE_FILP" allocs) ffr=$(sites $j "$RE_FILP" frees)
	detail "opens: names $(site_names $j "$RE_NAME"); files $(site_names $j "$RE_FILP") (allocs/frees)"
	want_ge "report: getname allocs" $na $((N + G)) && want "report: getname frees" $nf $na &&
		want "report: getname allocs as dump" $na $(dump_allocs $d "$RE_NAME") || bad=1
	want_ge "report: struct file allocs" $fa $N &&
		want "report: struct file allocs as dump" $fa $(dump_allocs $d "$RE_FILP") || bad=1
	# The kernel frees a struct file through RCU, later: each free the file
	# has counted, whether or not the kernel got to all of them in time.
	if [ "$ff" = no ]; then
		detail "struct file frees $ffr of $fa (not required: RCU frees them in other tasks)"
	elif ! want "report: struct file frees as the file has them" $ffr $(dump_frees_of $OUT/$name.dat $pid "$RE_FILP"); then
		bad=1
		# Which were not seen freed, and when each CPU's events end.
		$K kmap -p $pid $OUT/$name.dat | awk -F, -v re="$RE_FILP" '{ f = $1; sub(/\+.*/, "", f) }
			f ~ re && $6 == 0 { n++; if (n <= 3) printf "unfreed %s at %.6f s\n", $3, $5 / 1e9 }'
		$K dump $OUT/$name.dat | awk '{ last[$2] = $1 } END { for (c in last) printf "CPU %s last event %s s\n", c, last[c] }'
	fi
	return $bad
}

# ---- the checks

check_gt() {
	gt_record gt && gt_verify gt yes
}

check_gt_F() {
	gt_record gtF -F && gt_verify gtF no
}

check_gt_stack() {
	local j=$OUT/gtS.json fn a s bad
	gt_record gtS --stack && gt_verify gtS yes || return 1
	# Every call site's stacks add up to its allocations.
	bad=$(jq -c "[.callsites[] | select(.allocs > 0) | select(.allocs != ([.stacks[]?.allocs] | add)) |
		\"\(.callsite) \(.allocs) \([.stacks[]?.allocs] | add)\"]" $j)
	a=$(jq "[.callsites[].allocs] | add" $j) s=$(jq "[.callsites[].stacks[]?.allocs] | add // 0" $j)
	detail "stacks: $s of $a slab allocations of kmt-gt have one; sites whose stacks do not add up: $bad"
	want "allocations with a stack" $s $a && [ "$bad" = "[]" ] || return 1
	fn=$(jq -r "[.callsites[] | select(.function | test(\"$RE_NAME\")) | .stacks[]?.frames[-1]] | first // \"\"" $j)
	detail "a getname stack ends in: $fn"
}

check_gt_sample() {
	local j=$OUT/gtP.json a s n try
	# Stacks are taken in time slices: in an emulated guest the sampler's
	# thread can miss a workload this short altogether (0 of about 1,300
	# allocations, in about one kernel's run of ten). Up to three
	# recordings, each held to the same exact counts.
	for try in 1 2 3; do
		gt_record gtP --stack-sample 16 && gt_verify gtP yes || return 1
		n=$(jq .summary.stack_sample $j)
		a=$(jq "[.callsites[].allocs] | add" $j) s=$(jq "[.callsites[].stacks[]?.allocs] | add // 0" $j)
		detail "stack_sample $n: $s of $a slab allocations of kmt-gt have a stack (recording $try)"
		[ "$s" -gt 0 ] && break
	done
	want "summary.stack_sample" $n 16 && want_ge "allocations with a stack" $s 1 &&
		[ "$s" -le "$a" ] && $K info $OUT/gtP.dat | grep "stacks 1 in 16"
}

# Whose memory: kmt-gt in a cgroup of its own (cgroup v2, mounted if it is
# not), and per call site what asked for a memory cgroup charge: its pipes'
# and System V queue's kmallocs (GFP_KERNEL_ACCOUNT: the event's gfp flags,
# or its accounted field), not its getxattr buffers; every count exact.
check_cgroups() {
	local cg=/sys/fs/cgroup d=$OUT/cg bad=0
	grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg || { echo "cannot mount cgroup2"; return 1; }
	mkdir -p $cg/kmt-a && rm -f "$F" && touch "$F" || return 1
	$K record -q -o $d.dat -- sh -c "echo \$\$ > $cg/kmt-a/cgroup.procs && exec $WL/kmt-gt -g 10 -P 5 -q 3 $F" \
		> $d.out 2> $d.err || { cat $d.err; rmdir $cg/kmt-a; return 1; }
	rmdir $cg/kmt-a
	$K info $d.dat | grep "^cgroups:" && $K report --csv cgroup_sites $d.dat > $d.csv || return 1
	# Columns: cgroup memcg callsite function allocs bytes_alloc live_bytes accounted unaccounted unknown irq kthread.
	col() {	# function-regex column: summed over /kmt-a's call sites in functions matching
		awk -F, -v re="$1" -v c=$2 '{ gsub(/"/, "") } $1 == "/kmt-a" && $4 ~ re { s += $c } END { print s + 0 }' $d.csv
	}
	# The getxattr buffer's call site: do_getxattr, or kvmalloc where it is not inlined (arm64).
	x='getxattr|^(__)?kvmalloc'
	detail "getxattr $(col "$x" 5) allocs, pipes $(col '^alloc_pipe_info' 5), queues $(col '^newque' 5)"
	want "getxattr allocs in /kmt-a" $(col "$x" 5) 10 && want "their bytes (2048 each)" $(col "$x" 6) 20480 &&
		want "their accounted bytes" $(col "$x" 8) 0 && want "their unaccounted bytes" $(col "$x" 9) 20480 || bad=1
	want "pipe allocs (2 per pipe)" $(col '^alloc_pipe_info' 5) 10 &&
		want "their accounted bytes" $(col '^alloc_pipe_info' 8) $(col '^alloc_pipe_info' 6) || bad=1
	want "queue allocs" $(col '^newque' 5) 3 && want "their accounted bytes" $(col '^newque' 8) $(col '^newque' 6) || bad=1
	return $bad
}

# Text, kmap, folded and pprof of gt.dat: the same counts as the JSON. A
# command that fails fails the check; its output is still counted.
check_outputs() {
	local j=$OUT/gt.json pid fn ra rf t k kf fo bad=0
	[ -s $j ] && [ -s $OUT/gt.site ] || { echo "no gt.json: the gt check did not get that far"; return 1; }
	pid=$(pid_of gt) fn=$(cat $OUT/gt.site)
	ra=$(sites $j "^$fn\$" allocs) rf=$(sites $j "^$fn\$" frees)
	$K report -p $pid --sections callsites -n 0 $OUT/gt.dat > $OUT/gt.txt || { echo "report (text) exit $?"; bad=1; }
	t=$(awk -v f="$fn" 'index($1, f "+") == 1 { n += $2 } END { print n + 0 }' $OUT/gt.txt)
	$K kmap -p $pid $OUT/gt.dat > $OUT/gt.kmap || { echo "kmap exit $?"; bad=1; }
	k=$(grep -c "^$fn+" $OUT/gt.kmap)
	kf=$(grep "^$fn+" $OUT/gt.kmap | awk -F, '$6 != 0 { n++ } END { print n + 0 }')
	$K export -f folded --value objects -p $pid -o $OUT/gt.folded $OUT/gt.dat || { echo "export folded exit $?"; bad=1; }
	fo=$(awk -v f="$fn" '{ n = split($0, p, ";"); for (i = 1; i <= n; i++) if (index(p[i], f "+") == 1) { s += $NF; break } }
		END { print s + 0 }' $OUT/gt.folded)
	# (A relative name: the profile's comment names the file, and the host
	# compares its own export of it byte for byte.)
	(cd $OUT && $K export -f pprof -o gt.pb.gz gt.dat) || { echo "export pprof exit $?"; bad=1; }
	detail "$fn: JSON $ra allocs $rf frees; text $t; kmap $k records, $kf freed; folded $fo;" \
		"pprof $(wc -c < $OUT/gt.pb.gz) bytes"
	want "text allocs" $t $ra && want "kmap records" $k $ra && want "kmap freed" $kf $rf &&
		want "folded objects" $fo $ra || bad=1
	[ "$(od -An -tx1 -N2 $OUT/gt.pb.gz | tr -d ' \n')" = 1f8b ] || { echo "pprof: not gzip"; bad=1; }
	return $bad
}

# Every slab cache of the workload (gt.json: kmt-gt's pid) is named, or
# where nothing can name it, its candidates are: kmem_cache_alloc names
# none before 6.18, its free from 5.12, so a free, the object's slab page
# or its sizes name it, and an object never freed, of sizes several caches
# have, in a page nothing named, is "cache(size=960: mm_struct|...)" —
# never a bare "cache(size=N)" with nothing said. Where frees name caches
# (6.x), the workload's own: every struct filename in names_cache and every
# struct file in filp, by name.
check_caches() {
	local j=$OUT/gt.json all=$OUT/gt.all.json bare names nc fc
	[ -s $j ] || { echo "no gt.json: the gt check did not get that far"; return 1; }
	names=$(jq -r '.kernel_lacks // [] | join(" ")' $j)
	bare=$(jq '[.caches[] | select(.name | test("^cache\\(size=[0-9]*\\)$"))] | length' $j)
	detail "kmt-gt's caches: $(jq -r '[.caches[] | "\(.name) x\(.allocs)"][:8] | join(", ")' $j)"
	detail "the whole file's by size: $(jq -r '[.caches[] | select(.name | test("^cache\\(size=")) |
		"\(.name) x\(.allocs)"][:6] | join(", ")' $all)"
	want "kmt-gt's caches by size with nothing said" $bare 0 || return 1
	case $names in
	*"no event names a cache"*) ;;
	*)	nc=$(jq '[.caches[] | select(.name == "names_cache") | .allocs] | add // 0' $j)
		fc=$(jq '[.caches[] | select(.name == "filp") | .allocs] | add // 0' $j)
		want_ge "names_cache allocations (every path)" $nc $((N + G)) &&
			want_ge "filp allocations (every open)" $fc $N ;;
	esac
}

# check on a short system-wide recording of a busy system: exit 0, no error.
check_check() {
	local rc e
	(for i in 1 2 3; do ls -R / > /dev/null 2>&1; cat /proc/slabinfo > /dev/null; done) &
	$K record -q -d 2 -o $OUT/sys.dat || { echo "record -d 2 failed"; wait; return 1; }
	wait
	rc=0
	$K check $OUT/sys.dat > $OUT/sys.check 2>&1 || rc=$?
	tail -n 12 $OUT/sys.check
	e=$(sed -n 's/.*: \([0-9,]*\) errors*, [0-9,]* warnings*$/\1/p' $OUT/sys.check | tr -d ,)
	detail "$(tail -n 1 $OUT/sys.check); exit $rc"
	[ -n "$e" ] || { echo "no summary line"; return 1; }
	want "check exit status" $rc 0 && want "check errors" $e 0
}

check_top() {
	local rc=0 n
	$K top --batch -i 0.5 -n 2 > $OUT/top.out 2>&1 || rc=$?
	head -n 8 $OUT/top.out
	n=$(grep -c "^kmemtrace top" $OUT/top.out)
	detail "top --batch -n 2: $n snapshots, exit $rc"
	want "top exit status" $rc 0 && want "snapshots" $n 2
}

# watch --self-test: exit 0 and "fire on this machine: N CPUs", or exit 1
# and one line that they never fire (the man page's two answers).
check_watch() {
	local rc=0 cpus
	$K watch --self-test > $OUT/watch.out 2> $OUT/watch.err || rc=$?
	cat $OUT/watch.out $OUT/watch.err
	detail "exit $rc: $(cat $OUT/watch.out $OUT/watch.err | head -n 2 | tr '\n' ' ')"
	cpus=$(nproc)
	case $rc in
	0) cpus=$(sed -n 's/^hardware watchpoints fire on this machine: \([0-9]*\) CPUs*, [0-9]* of [0-9]* writes counted$/\1/p' \
		$OUT/watch.out)
	   want "CPUs whose watchpoints fire" "${cpus:-0}" $(nproc);;
	1) want "lines on standard error" $(wc -l < $OUT/watch.err) 1 && grep -q "never fire" $OUT/watch.err;;
	*) return 1;;
	esac
}

# A recorder killed with SIGKILL: --recover writes the file, with the
# workload's events, and no instance of ours is left.
check_recover() {
	local p i d n left rc
	rm -f $OUT/k.dat && rm -rf $OUT/k.dat.spool
	$K record -q -o $OUT/k.dat > /dev/null 2> $OUT/k.err &
	p=$!
	d=$T/instances/kmemtrace-$p
	for i in $(seq 200); do
		grep -q . $d/set_event 2> /dev/null && [ "$(cat $d/tracing_on 2> /dev/null)" = 1 ] && break
		sleep 0.05
	done
	rm -f "$F" && touch "$F" && $WL/kmt-gt -g 11 -s 1337 $F > $OUT/k.out && sleep 0.3
	kill -KILL $p
	wait $p
	[ -d $OUT/k.dat.spool ] || { echo "no spool left by the killed recorder"; cat $OUT/k.err; return 1; }
	rc=0
	$K record --recover $OUT/k.dat.spool > $OUT/k.recover 2>&1 || rc=$?
	cat $OUT/k.recover
	n=$($K dump $OUT/k.dat 2> /dev/null | grep -c " kmt-gt-.* kmalloc .* req=1337 ")
	left=$(ls $T/instances | grep -c '^kmemtrace')
	detail "--recover exit $rc; $n of 11 getxattr kmallocs in the file; instances left: $left"
	want "--recover exit status" $rc 0 && want "getxattr kmallocs recovered" $n 11 && want "instances left" $left 0
}

# tracefs as the checks found it: no instance of ours, no kmem event on
# in the top-level buffer, no trigger left.
check_tracefs() {
	local i e t
	i=$(ls $T/instances | grep -c '^kmemtrace')
	e=$(grep -l 1 $T/events/kmem/*/enable $T/events/percpu/*/enable 2> /dev/null | wc -l)
	t=$(grep -lv '^#' $T/events/kmem/*/trigger 2> /dev/null | wc -l)
	detail "instances $(ls $T/instances | tr '\n' ' '); kmem events on $e; triggers $t"
	want "kmemtrace instances" $i 0 && want "kmem events on" $e 0 && want "triggers" $t 0
}

# The kernel's log since the checks began: no BUG, WARNING, Oops, lockup
# or stall.
check_kernel() {
	local n
	dmesg > $OUT/dmesg
	tail -n +$(($(cat /tmp/dmesg.start 2> /dev/null || echo 0) + 1)) $OUT/dmesg > /tmp/dmesg.checks
	n=$(grep -cE "$KERNEL_BAD" /tmp/dmesg.checks)
	grep -E "$KERNEL_BAD" /tmp/dmesg.checks | head -n 10
	detail "the kernel logged $n lines of trouble$( [ $n -gt 0 ] && echo ": $(grep -E "$KERNEL_BAD" /tmp/dmesg.checks | head -n 1)")"
	want "kernel lines of trouble" $n 0
}

# ---- the event formats of this kernel, for tests/data/formats.
save_formats() {
	local d=$OUT/formats f s
	mkdir -p $d
	for f in $T/events/kmem/*/format $T/events/percpu/*/format $T/events/vmalloc/*/format \
		 $T/events/sched/*/format $T/events/task/*/format $T/events/ftrace/kernel_stack/format; do
		[ -e "$f" ] || continue
		s=${f#$T/events/}; s=${s%/format}
		cat "$f" > "$d/$(echo "$s" | tr / _).format"
	done
	cat $T/events/header_page > $d/header_page
	cat $T/events/header_event > $d/header_event
	ls $T > $d/tracefs.ls
	mkdir $T/instances/kmt-formats && ls $T/instances/kmt-formats > $d/instance.ls
	rmdir $T/instances/kmt-formats
	uname -a > $d/uname
}

run_one() {
	case $1 in
	gt) check_gt;; gt-F) check_gt_F;; gt-stack) check_gt_stack;; gt-sample) check_gt_sample;;
	outputs) check_outputs;; caches) check_caches;; cgroups) check_cgroups;; check) check_check;; top) check_top;;
	watch) check_watch;; recover) check_recover;; tracefs) check_tracefs;; kernel) check_kernel;;
	*) echo "no check $1"; return 77;;
	esac
}

if [ "${1:-all}" != all ]; then
	cd /tmp && run_one "$1"
	exit $?
fi

mkdir -p $OUT/logs
save_formats
dmesg | wc -l > /tmp/dmesg.start
for c in ${ONLY:-$CHECKS}; do
	t0=$(cut -d' ' -f1 /proc/uptime)
	dmesg > /tmp/dmesg.before
	timeout -s KILL $LIMIT sh /checks.sh $c > $OUT/logs/$c.log 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	case $rc in 0) s=ok;; 77) s=skip;; *) s=FAIL;; esac
	[ $rc -eq 137 ] && echo "detail: killed after $LIMIT s" >> $OUT/logs/$c.log
	# What the kernel said of trouble while the check ran.
	dmesg | tail -n +$(($(wc -l < /tmp/dmesg.before) + 1)) | grep -E "$KERNEL_BAD" | head -n 3 |
		sed 's/^/detail: kernel: /' >> $OUT/logs/$c.log
	# To the console, and to /out/results (whole, where the console may
	# have the kernel's lines in the middle of ours).
	{
		echo "KMT-CHECK $c $s $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.1f", b - a }')"
		sed -n "s/^detail: /KMT-DETAIL $c /p" $OUT/logs/$c.log
		[ $s = ok ] || grep -v '^detail: ' $OUT/logs/$c.log | tail -n 15 | sed "s/^/KMT-LOG $c /"
	} > /tmp/result
	cat /tmp/result
	cat /tmp/result >> $OUT/results
done
exit 0
