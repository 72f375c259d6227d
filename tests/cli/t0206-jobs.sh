#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -j N: the analysis reads with N threads, and says the same for every N.
# Synthetic traces built to stress it (48 CPUs of many chunks with
# cross-CPU frees, losses, older objects and double frees; two CPUs with
# misuse, stacks, windows and filters), and a real recording where the
# machine can trace: every output of report, check, kmap, export and diff
# is compared byte for byte with -j 1. And the line a long read shows on
# a terminal.
. "$(dirname "$0")/lib.sh"

JOBS="2 3 4 8"

# Each output of @file at -j 1 and at every N of $JOBS, compared with cmp.
# The command is a string: J stands for the -j value, F for the file.
same_for_every_j() {	# name command
	local j
	eval "${2//J/1}" > "$1.1" || return 1
	[ -s "$1.1" ] || { echo "$1: no output"; return 1; }
	for j in $JOBS; do
		eval "${2//J/$j}" > "$1.$j" || return 1
		cmp "$1.1" "$1.$j" || { echo "$1 differs at -j $j"; diff "$1.1" "$1.$j" | head; return 1; }
	done
}

every_output() {	# file
	local f=$1
	same_for_every_j report "\$KMT report -j J -n 0 --stacks 5 $f" &&
	same_for_every_j json "\$KMT report -j J --json $f" &&
	same_for_every_j csv "\$KMT report -j J --csv callsites $f" &&
	same_for_every_j csv-misuse "\$KMT report -j J --csv misuse $f" &&
	same_for_every_j window "\$KMT report -j J --time 0.3,0.9 -s waste $f" &&
	{ same_for_every_j check "\$KMT check -j J $f"; true; } &&
	{ same_for_every_j check-json "\$KMT check -j J --json $f"; true; } &&
	same_for_every_j kmap "\$KMT kmap -j J $f" &&
	same_for_every_j kmap-json "\$KMT kmap -j J --json $f" &&
	same_for_every_j folded "\$KMT export -j J -f folded -o - $f" &&
	same_for_every_j pprof "\$KMT export -j J -f pprof -o - $f | zcat" &&
	same_for_every_j perfetto "\$KMT export -j J -f perfetto -o - $f" &&
	same_for_every_j sqlite "rm -f x.db && \$KMT export -j J -f sqlite -o x.db $f >/dev/null && sqlite3 x.db .dump" &&
	same_for_every_j diff "\$KMT diff -j J --json $f $f"
}

test_expect_success 'a trace of 48 CPUs, many chunks each' '
	$SYNTH wide w.dat && $KMT info w.dat > info &&
	grep -q "^CPUs: *48$" info && $SYNTH full s.dat
'

test_expect_success '48 CPUs: every output the same for -j 1 to 8' '
	every_output w.dat
'

test_expect_success 'two CPUs with losses, misuse, stacks, accesses: the same for every -j' '
	every_output s.dat
'

test_expect_success 'the 48 CPUs as v6 (no compression: nothing to inflate) and as zlib: the same for every -j' '
	$KMT convert --file-version 6 w.dat w6.dat && $KMT convert --compression zlib w.dat wz.dat 2> /dev/null &&
	same_for_every_j v6 "\$KMT report -j J --json w6.dat" &&
	same_for_every_j zlib "\$KMT report -j J --json wz.dat" &&
	same_for_every_j v6-check "\$KMT check -j J w6.dat" &&
	$KMT report -j 8 --stats -o /dev/null w6.dat 2> e6 && grep -q "in the stream.s thread: serial" e6
'

test_expect_success 'filters (-p, --comm, --cache) and a window: the same for every -j' '
	same_for_every_j pid "\$KMT report -j J -p 101 s.dat" &&
	same_for_every_j comm "\$KMT report -j J --json --comm make w.dat" &&
	same_for_every_j cache "\$KMT report -j J --json --cache filp w.dat" &&
	same_for_every_j time "\$KMT kmap -j J --time 0.1,0.2 w.dat"
'

test_expect_success 'a damaged file: the same output, warnings and exit status for every -j' '
	size=$(stat -c %s w.dat) && head -c $((size * 2 / 3)) w.dat > cut.dat &&
	same_for_every_j cut "\$KMT report -j J --json cut.dat 2>&1; echo rc=\$?" &&
	grep -q "^rc=1$" cut.1 && grep -q "is damaged" cut.1
'

test_expect_success '--stats: N threads inflate, never more than asked; with one model, N less 2' '
	$KMT report -j 1 --stats -o /dev/null w.dat 2> e1 &&
	grep -q "^  read+inflate .*   in the stream.s thread: serial$" e1 &&
	$KMT report -j 2 --stats -o /dev/null w.dat 2> e2 &&
	grep -q "^  read+inflate .*   in the stream.s thread: serial$" e2 &&
	grep -q "^  model .*   model thread: serial$" e2 &&
	$KMT report -j 3 --stats -o /dev/null w.dat 2> e3 &&
	grep -q "^  read+inflate .*   1 thread (-j): parallel$" e3 &&
	for j in 4 8; do
		$KMT report -j $j --stats -o /dev/null w.dat 2> e$j &&
		grep -q "^  read+inflate .*   $j threads (-j): parallel$" e$j || { cat e$j; exit 1; }
	done
'

test_expect_success 'export perfetto: from -j 3 the events are written on a thread of their own, said by --stats' '
	$SYNTH wide w3.dat 20000 &&
	$KMT export -f perfetto -j 2 --stats -o /dev/null w3.dat 2> s2 && ! grep -q "^  writer " s2 &&
	$KMT export -f perfetto -j 3 --stats -o /dev/null w3.dat 2> s3 && cat s3 &&
	grep -q "^  writer  .*the format'"'"'s events, writer thread: serial" s3
'

test_expect_success 'two CPUs of data: two threads inflate, whatever -j says' '
	$KMT report -j 8 --stats -o /dev/null s.dat 2> e &&
	grep -Eq "^  read\+inflate .*   [12] threads? \(-j\): parallel$" e || { cat e; false; }
'

test_expect_success 'the default is the CPUs it may run on, as nproc counts (at most 64)' '
	n=$(nproc) && [ $n -le 64 ] || n=64 &&
	$KMT report --stats -o /dev/null w.dat 2> e && $KMT report --help > help &&
	case $n in
	1|2) grep -q "in the stream.s thread" e ;;
	3) grep -q " 1 thread (-j)" e ;;
	*) grep -q " $n threads (-j)" e ;;
	esac &&
	grep -q "the CPUs it may run on, as nproc counts" help &&
	# Under taskset, one CPU: one thread, as -j 1 (no model thread to hand over to).
	taskset -c 0 $KMT report --stats -o /dev/null w.dat 2> e1 &&
	grep -q "^  model .*   producer thread: serial$" e1 &&
	taskset -c 0 $KMT kmap --stats w.dat 2> e1 > /dev/null &&
	grep -q "^  model .*   producer thread: serial$" e1 &&
	{ [ "$(nproc)" -lt 2 ] || ! grep -q "^  model .*producer thread: serial$" e; }
'

test_expect_success '-j takes 1 to 1024, and says so' '
	for bad in 0 x 1025 -1; do
		rc=0 && $KMT report -j "$bad" w.dat > o 2> e || rc=$? &&
		[ $rc = 2 ] && grep -q "bad number of jobs" e || { cat e; exit 1; }
	done
'

test_expect_success 'every analysing command takes -j; dump and info do not' '
	for c in report check kmap export diff; do $KMT $c --help | has -- "-j, --jobs N" || exit 1; done &&
	for c in dump info; do $KMT $c --help > h && ! grep -- "--jobs" h || exit 1; done
'

# A long read says how far it is, on a terminal only (script(1) gives one);
# KMT_PROGRESS_AFTER_MS=0 shows it at once rather than after a second.
test_expect_success 'on a terminal: "reading FILE: N%" on stderr, erased at the end; the output unchanged' '
	command -v script > /dev/null || { echo "no script(1)"; exit 1; } &&
	$SYNTH wide big.dat 400000 && $KMT report -o plain.txt big.dat 2> e &&
	[ "$(cat e)" = "kmemtrace report: wrote plain.txt" ] &&
	KMT_PROGRESS_AFTER_MS=0 script -qec "$KMT report -j 1 -o tty.txt big.dat" /dev/null > pty &&
	cmp plain.txt tty.txt &&
	grep -q "kmemtrace report: reading big.dat: [0-9]*%" pty &&
	tr -d "\n" < pty | od -An -c | tr -d " \n" | has -F "033[Kkmemtracereport:wrotetty.txt"
'

test_expect_success 'check shows it with -q, not between findings on the terminal' '
	KMT_PROGRESS_AFTER_MS=0 script -qec "$KMT check -q big.dat" /dev/null > pty.q &&
	grep -q "kmemtrace check: reading big.dat: [0-9]*%" pty.q &&
	KMT_PROGRESS_AFTER_MS=0 script -qec "$KMT check w.dat" /dev/null > pty.all &&
	! grep -q "reading w.dat" pty.all && grep -q "^w.dat: [0-9,]* events in" pty.all
'

# The model in shards (-j 4 and more: -j less 2; $KMT_MODEL_SHARDS says how
# many): each output with 2, 3, 5 and 8 shards compared with one model.
same_for_every_shards() {	# name command
	local n
	eval "KMT_MODEL_SHARDS=1 $2" > "$1.s1" || return 1
	[ -s "$1.s1" ] || { echo "$1: no output"; return 1; }
	for n in 2 3 5 8; do
		eval "KMT_MODEL_SHARDS=$n $2" > "$1.s$n" || return 1
		cmp "$1.s1" "$1.s$n" || { echo "$1 differs with $n shards"; diff "$1.s1" "$1.s$n" | head; return 1; }
	done
}

sharded_outputs() {	# file
	local f=$1
	same_for_every_shards sh-report "\$KMT report -j 2 -n 0 --stacks 5 $f" &&
	same_for_every_shards sh-json "\$KMT report -j 2 --json $f" &&
	same_for_every_shards sh-misuse "\$KMT report -j 2 --csv misuse $f" &&
	same_for_every_shards sh-window "\$KMT report -j 2 --time 0.01,0.04 -s waste $f" &&
	same_for_every_shards sh-html "\$KMT report -j 2 --html -o - $f" &&
	same_for_every_shards sh-html-window "\$KMT report -j 2 --html --time 0.02,0.05 -o - $f" &&
	same_for_every_shards sh-folded "\$KMT export -j 2 -f folded -o - $f" &&
	same_for_every_shards sh-pprof "\$KMT export -j 2 -f pprof -o - $f | zcat" &&
	same_for_every_shards sh-kmap "\$KMT kmap -j 2 --pages --preexisting $f" &&
	same_for_every_shards sh-kmap-json "\$KMT kmap -j 2 --json --pages $f" &&
	same_for_every_shards sh-kmap-live "\$KMT kmap -j 2 --json --live $f" &&
	same_for_every_shards sh-kmap-window "\$KMT kmap -j 2 --time 0.01,0.04 --hash-pointers=k $f" &&
	{ same_for_every_shards sh-check "\$KMT check -j 2 $f 2>&1"; true; } &&
	{ same_for_every_shards sh-check-json "\$KMT check -j 2 --json $f"; true; } &&
	same_for_every_shards sh-diff "\$KMT diff -j 4 --json $f w.dat"
}

test_expect_success 'in shards: what shard 0 decides for the others (kmt-synth shards) the same for 1 to 8 shards' '
	$SYNTH shards x.dat &&
	KMT_MODEL_SHARDS=3 $KMT report -j 2 --stats -o /dev/null x.dat 2> e &&
	grep -q "^  model .*   3 shards on threads (-j): parallel$" e &&
	grep -q "^    shard 0 .*   routes every event: serial$" e &&
	grep -q "^  read+decode .*   2 part threads (-j): parallel$" e &&
	grep -q "^  merge .*   producer thread, of the parts: serial$" e &&
	sharded_outputs x.dat
'

# Kernels before 6.18: a cache is named by a free, or by the page an object
# lies in, which only the shard of that page's objects sees.
test_expect_success 'in shards: caches named by frees and pages (kmt-synth unnamed) the same for 1 to 8 shards' '
	$SYNTH unnamed u.dat && sharded_outputs u.dat &&
	$KMT report --json u.dat > u.json &&
	jq -c "[.caches[] | [.name, .allocs, .frees, .live_objects]]" u.json > got && cat got &&
	[ "$(cat got)" = "[[\"names_cache\",1,1,0],[\"dentry\",3,1,2],[\"filp\",3,1,2],[\"cache(size=256)\",2,0,2],[\"cache(size=192: dentry|filp)\",1,0,1]]" ] &&
	[ "$(jq ".misuse | length" u.json)" = 0 ]
'

# A filter is applied where each event is taken: a slab event by its
# object's shard, the rest by shard 0 (model-merge.c). kmt-synth shards has
# tasks renamed and forked, frees by other tasks and stacks claimed past
# other caches' events.
test_expect_success 'in shards: filters by task, name, cache and window the same for 1 to 8 shards' '
	for f in x.dat w.dat; do
		same_for_every_shards "pid-$f" "\$KMT report -j 2 -n 0 --stacks 5 -p 104 $f" &&
		same_for_every_shards "comm-$f" "\$KMT report -j 2 --json --comm make $f" &&
		same_for_every_shards "cache-$f" "\$KMT report -j 2 --json --cache kmalloc-128 $f" &&
		same_for_every_shards "both-$f" "\$KMT report -j 2 -n 0 --stacks 5 --comm cc1 --cache kmalloc-64 $f" &&
		same_for_every_shards "pidw-$f" "\$KMT report -j 2 --csv misuse -p 104 --time 0.3,1.2 $f" &&
		same_for_every_shards "html-$f" "\$KMT report -j 2 --html -o - --comm make $f" &&
		same_for_every_shards "diff-$f" "\$KMT diff -j 4 --json --comm make $f w.dat" &&
		same_for_every_shards "kmap-$f" "\$KMT kmap -j 2 --comm make --cache kmalloc-128 $f" &&
		same_for_every_shards "kmapp-$f" "\$KMT kmap -j 2 --json -p 104 --time 0.3,1.2 $f" &&
		same_for_every_shards "pprof-$f" "\$KMT export -j 2 -f pprof -o - --comm make $f | zcat" || exit 1
	done
'

# kmap writes its records in the shards (analyse-sink.c): each shard's
# in order of their events, merged by stream position; the JSON array's
# commas put between them; --callsite's counts added up.
test_expect_success 'kmap in shards: every record where one model writes it' '
	$KMT kmap -j 4 --stats x.dat 2> e > /dev/null &&
	grep -q "^  model .*   2 shards on threads (-j): parallel$" e &&
	grep -q "^  write out .*   the shards. records in order: serial$" e &&
	$KMT kmap -j 2 --stats x.dat 2> e1 > /dev/null && ! grep -q "write out" e1 &&
	fn=$($KMT kmap x.dat | sed -n "101{s/+.*//;p}") && [ -n "$fn" ] &&
	same_for_every_shards kmap-fn "\$KMT kmap -j 2 --callsite $fn x.dat" &&
	[ -s kmap-fn.s1 ] && ! grep -v "^$fn+\|^#" kmap-fn.s1 &&
	same_for_every_shards kmap-none "\$KMT kmap -j 2 --json --callsite no_such_function x.dat 2>&1" &&
	grep -q "no object allocated in function .no_such_function." kmap-none.s8 &&
	same_for_every_shards kmap-pipe "\$KMT kmap -j 2 --json w.dat | cat" &&
	[ "$(sed -n "1p;\$p" kmap-pipe.s5 | tr -d "\n")" = "[]" ] &&
	[ "$(grep -c "^  {.*},\$" kmap-pipe.s5)" = "$(( $(wc -l < kmap-pipe.s5) - 3 ))" ] &&
	[ "$(wc -l < kmap-pipe.s5)" -gt 1000 ]
'

# export to pprof adds up in the shards, each its own objects, folded
# after the merge with the merged model's stack ids (kmt_model_shard_stack()).
test_expect_success 'pprof in shards: the stacks of x.dat, the same samples for 1 to 8 shards' '
	KMT_MODEL_SHARDS=3 $KMT export -j 4 --stats -f pprof -o p.pb.gz x.dat 2> e &&
	grep -q "^  model .*   3 shards on threads (-j): parallel$" e &&
	! grep -q "write out" e &&
	same_for_every_shards pp-stacks "\$KMT export -j 4 -f pprof -o - x.dat | zcat" &&
	if command -v go > /dev/null; then
		go tool pprof -traces -sample_index=alloc_objects p.pb.gz 2> /dev/null > traces &&
		grep -q "entry_SYSCALL_64_after_hwframe" traces
	fi
'

# A stack counts where its allocation does: under --cache, 1,500 stacked
# allocations of kmalloc-64 and 1,500 of kmalloc-128 in kmt-synth shards
# (each stack comes after a kfree of the other cache: the event before a
# stack says nothing).
test_expect_success 'a filter counts the stacks of the allocations it chose, for every -j' '
	for j in 1 4 8; do
		$KMT report -j $j --json --cache kmalloc-64 x.dat > k64 &&
		$KMT report -j $j --json --cache kmalloc-128 x.dat > k128 &&
		grep -q "\"kernel_stack\": 1500$" k64 && grep -q "\"kernel_stack\": 1500$" k128 || exit 1
	done
'

test_expect_success 'in shards: the page of a trace of slab objects alone (shard 0 pictures nothing)' '
	$SYNTH churn c.dat 1000 20000 &&
	same_for_every_shards sh-html-slab "\$KMT report -j 2 --html -o - c.dat" &&
	same_for_every_shards sh-html-slab-window "\$KMT report -j 2 --html --time 0.005,0.015 -o - c.dat"
'

test_expect_success 'in shards: kmt-synth shards holds what it was built to show' '
	$KMT report --json x.dat > x.json &&
	grep -q "\"kmalloc_large_merged\": 750," x.json &&
	grep -q "\"null_frees\": 750," x.json &&
	grep -q "\"failures\": 750," x.json &&
	grep -q "\"lost_gaps\": 2," x.json &&
	grep -q "\"cross_cpu_frees\": 3750," x.json &&
	grep -q "\"alloc_vmap_area\": 750," x.json &&
	grep -q "\"percpu_allocs\": 750," x.json &&
	$KMT report -n 0 --stacks 5 x.dat > x.txt &&
	grep -q "52.6%  *750 .*<- entry_SYSCALL_64_after_hwframe+0x18$" x.txt
'

test_expect_success 'in shards: 48 CPUs and a damaged file the same for 1 to 8 shards' '
	sharded_outputs w.dat &&
	same_for_every_shards sh-cut "\$KMT report -j 2 --json cut.dat 2>&1; echo rc=\$?"
'

# The stream read in parts (analyse-parts.c; $KMT_PARTS says how many, 1:
# none): each part merges a share of the CPUs, the producer merges the
# parts. With more parts than -j would give, each part has fewer CPUs and
# ends at its own time: a window, a filter, a cut file, check.
same_for_every_parts() {	# name command
	local n
	eval "KMT_PARTS=1 $2" > "$1.p1" || return 1
	[ -s "$1.p1" ] || { echo "$1: no output"; return 1; }
	for n in 2 3 5 8 16; do
		eval "KMT_PARTS=$n $2" > "$1.p$n" || return 1
		cmp "$1.p1" "$1.p$n" || { echo "$1 differs with $n parts"; diff "$1.p1" "$1.p$n" | head; return 1; }
	done
}

test_expect_success 'in parts: 48 CPUs, a window, a filter, a cut file and check the same for 1 to 16 parts' '
	KMT_PARTS=5 KMT_MODEL_SHARDS=3 $KMT report -j 2 --stats -o /dev/null w.dat 2> e &&
	grep -q "^  read+decode .*   5 part threads (-j): parallel$" e &&
	export KMT_MODEL_SHARDS=3 &&
	same_for_every_parts p-json "\$KMT report -j 2 --json w.dat" &&
	same_for_every_parts p-window "\$KMT report -j 2 -n 0 --time 0.3,0.9 w.dat" &&
	same_for_every_parts p-filter "\$KMT report -j 2 --json --comm make --time 0.1,1.5 w.dat" &&
	same_for_every_parts p-cut "\$KMT report -j 2 --json cut.dat 2>&1; echo rc=\$?" &&
	same_for_every_parts p-check "\$KMT check -j 2 cut.dat 2>&1; echo rc=\$?" &&
	same_for_every_parts p-x "\$KMT report -j 2 -n 0 --stacks 5 x.dat"
'

# Records decoded on a thread of their own (with shards): one that does not
# fit its format ends the analysis with the same message as the producer's;
# check, whose page observer has then seen pages past it, reads every CPU
# again on its own and says the same.
test_expect_success 'in shards: uncompressed files with bytes flipped (100), the same output, messages and status' '
	$KMT convert --file-version 6 x.dat x6.dat && size=$(stat -c %s x6.dat) && fits=0 &&
	for seed in $(seq 1 100); do
		cp x6.dat fl.dat && off=$(( size / 20 + seed * 7919 * 131 % (size - size / 20) )) &&
		printf "\377\000\252\377" | dd of=fl.dat bs=1 seek=$off conv=notrunc 2> /dev/null &&
		{ $KMT report -j 1 --json fl.dat > a 2>&1; echo "rc=$?" >> a; } &&
		{ KMT_MODEL_SHARDS=3 $KMT report -j 2 --json fl.dat > b 2>&1; echo "rc=$?" >> b; } &&
		cmp a b || { echo "seed $seed"; diff a b | head; exit 1; }
		! grep -q "does not fit its format" a || fits=$((fits + 1))
		{ $KMT check -j 1 fl.dat > a 2>&1; echo "rc=$?" >> a; $KMT check -j 1 --json fl.dat >> a 2>&1
		  echo "rc=$?" >> a; } &&
		{ KMT_MODEL_SHARDS=3 $KMT check -j 2 fl.dat > b 2>&1; echo "rc=$?" >> b
		  KMT_MODEL_SHARDS=3 $KMT check -j 2 --json fl.dat >> b 2>&1; echo "rc=$?" >> b; } &&
		cmp a b || { echo "check, seed $seed"; diff a b | head; exit 1; }
	done &&
	echo "$fits with a record that does not fit" && [ $fits -ge 2 ]
'

# top feeds the model live, in shards from -j 4 (kmt_model_shards_new()),
# and every snapshot adds up the shards' rows: kmt-live compares those
# sums with one model after every run of events (losses between runs).
live_same() {	# file
	local n every
	for n in 2 3 5 8; do
		for every in 97 1024; do
			$LIVE "$1" $n $every > l || { cat l; return 1; }
			cat l && grep -q "points compared, all the same$" l || return 1
		done
	done
}

test_expect_success 'live, in shards (top): the sums after every run the same as one model, 2 to 8 shards' '
	live_same x.dat && live_same w.dat && live_same s.dat
'

test_expect_success 'in shards from -j 4: -j less 2 of them (at most 32), filters too; none with watchpoint samples' '
	$KMT report -j 4 --stats -o /dev/null w.dat 2> e4 && grep -q " 2 shards on threads" e4 &&
	$KMT report -j 8 --stats -o /dev/null w.dat 2> e8 && grep -q " 6 shards on threads" e8 &&
	$KMT report -j 34 --stats -o /dev/null w.dat 2> e34 && grep -q " 32 shards on threads" e34 &&
	$KMT report -j 40 --stats -o /dev/null w.dat 2> e40 && grep -q " 32 shards on threads" e40 &&
	$KMT report -j 3 --stats -o /dev/null w.dat 2> e3 && grep -q "model thread: serial" e3 &&
	$KMT report -j 8 --stats -p 101 -o /dev/null w.dat 2> ep && grep -q " 6 shards on threads" ep &&
	$KMT report -j 8 --stats --cache filp -o /dev/null w.dat 2> ec && grep -q " 6 shards on threads" ec &&
	$KMT report -j 8 --stats -o /dev/null s.dat 2> es && grep -q "model thread: serial" es &&
	$KMT report -j 8 --stats --html -o /dev/null w.dat 2> eh && grep -q " 6 shards on threads" eh
'

can_trace() {
	[ "$(id -u)" -eq 0 ] && { [ -d $T/instances ] || mount -t tracefs nodev $T 2>/dev/null; } &&
		[ -d $T/events/kmem ] && command -v hackbench > /dev/null
}

if can_trace; then
	test_expect_success 'a real recording (hackbench): every output the same for every -j' '
		$KMT record -q --stack-sample 8 -o r.dat -- hackbench -g 2 -l 200 > /dev/null 2>&1 &&
		JOBS="2 3" every_output r.dat &&
		sharded_outputs r.dat &&
		live_same r.dat
	'
else
	test_skip 'a real recording: every output the same for every -j' 'needs root, tracefs and hackbench'
fi

test_done
