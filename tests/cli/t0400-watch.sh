#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace watch on the real kernel. Ground truth (tests/workloads/
# kmt-watch-gt.c): an eventfd context written and read N times; a watch on
# its count and flags words must attribute exactly N writes and N reads of
# count to eventfd_write and to eventfd_read, N reads and no write of flags.
# Then --scan, kmap of the samples, signals (watchpoints and both instances
# gone, a killed watcher's instances reaped), and bad input.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
[ -r /sys/kernel/btf/vmlinux ] || test_skip_all "no kernel BTF (/sys/kernel/btf/vmlinux)"
tracefs_snapshot
N=100
GT="$WL/kmt-watch-gt"

# Do watchpoints fire here? Some hypervisors (seen on AMD EPYC hosts) accept
# them and never fire them: there the tests that need samples skip, and the
# refusal is tested as it is; elsewhere the refusal is forced with
# KMT_TEST_HWBP=decoy (the probe then watches a word nobody writes).
# Set-up, signal and clean-up tests run everywhere, with KMT_TEST_HWBP=skip
# where the probe would refuse. KMT_TEST_WATCH_NOFIRE=1 (t0401) runs them as
# on a machine whose watchpoints never fire, on one where they do: the
# refusal forced with the decoy, the rest with the probe skipped.
nofire="watchpoints never fire on this machine"
rc=0; why=$($KMT watch --self-test 2>&1) || rc=$?
if [ $rc -gt 2 ]; then
	# A crash is no answer: not a machine without watchpoints.
	echo "# watch --self-test: exit $rc: $why"
	test_expect_success 'watch --self-test says whether watchpoints fire (exit 0, or 1 saying why)' "[ $rc -le 2 ]"
	test_done
fi
if [ $rc = 0 ]; then
	fire=yes refuse_env=decoy run_env=
	[ "${KMT_TEST_WATCH_NOFIRE:-}" = 1 ] && fire=no run_env=skip why="$why (run as if they never fired)" \
		nofire="run as on a machine whose watchpoints never fire"
else
	[ "${KMT_TEST_WATCH_NOFIRE:-}" = 1 ] &&
		test_skip_all "watchpoints never fire here: t0400-watch runs that path itself"
	fire=no refuse_env= run_env=skip
	case $why in
	*"never fire"*) ;;
	*) test_skip_all "no hardware data watchpoints here: $why";;
	esac
fi
echo "# watchpoints: $why"
export KMT_TEST_HWBP=$run_env

# A test that needs watchpoints that fire.
test_expect_fire() {	# description body
	if [ $fire = yes ]; then
		test_expect_success "$1" "$2"
	else
		test_skip "$1" "$nofire"
	fi
}

test_expect_success 'where watchpoints never fire: one clear line, exit 1, nothing created' '
	rc=0; KMT_TEST_HWBP=$refuse_env $KMT watch -o no.dat --callsite do_eventfd \
		--offset eventfd_ctx.count -F -- $GT -n 5 > out 2> err || rc=$?
	cat out err && [ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] &&
	grep -q "^kmemtrace watch: hardware watchpoints are accepted here but never fire (CPU [0-9]* counted 0 of [0-9]* writes" err &&
	grep -q "record, report and kmap still work$" err &&
	! grep -q kmt-watch-gt out && [ ! -e no.dat ] && [ ! -e no.dat.spool ] &&
	no_own_instances
'

test_expect_success 'watch --self-test and record --list say whether watchpoints fire' '
	rc=0; KMT_TEST_HWBP=$refuse_env $KMT watch --self-test > out 2> err || rc=$?
	cat out err && [ $rc -eq 1 ] && grep -q "never fire" err &&
	KMT_TEST_HWBP=$refuse_env $KMT record --list > list && tail -n 1 list &&
	tail -n 1 list | has "^kmemtrace watch cannot work here: hardware watchpoints are accepted here but never fire" &&
	if [ $fire = yes ]; then
		KMT_TEST_HWBP= $KMT watch --self-test > out && cat out &&
		grep -q "^hardware watchpoints fire on this machine: $(nproc) CPUs*, [0-9]* of [0-9]* writes counted$" out &&
		KMT_TEST_HWBP= $KMT record --list | tail -n 1 | has "^kmemtrace watch can work here"
	fi
'

# Sum writes or reads of the access rows of a field and functions (regex).
acc() {	# json field function-regex writes|reads
	jq "[.access.rows[] | select(.field == \"$2\" and (.function | test(\"^($3)\$\"))) | .$4] | add // 0" "$1"
}
want() { v=$(acc "$@"); echo "$2 $3 $4 = $v (want $5)"; [ "$v" = "$5" ]; }

test_expect_fire 'watch count and flags of the ground-truth eventfd' '
	$KMT watch -o gt.dat --callsite do_eventfd --offset eventfd_ctx.count,eventfd_ctx.flags \
		-F -- $GT -n $N > out 2> err && cat out err &&
	sed -n "s/^kmt-watch-gt pid \([0-9]*\):.*/\1/p" out > pid && [ -s pid ] &&
	grep -q "watched 1 of 1 object allocated, 2 words at a time" err &&
	$KMT report --json --sections access gt.dat > gt.json
'

test_expect_fire 'count: N reads then N writes by eventfd_write, the same by eventfd_read' '
	want gt.json count eventfd_write writes $N && want gt.json count eventfd_write reads $N &&
	want gt.json count "eventfd_read|eventfd_ctx_do_read" writes $N &&
	want gt.json count "eventfd_read|eventfd_ctx_do_read" reads $N &&
	want gt.json count ".*" writes $((2 * N)) && want gt.json count ".*" reads $((2 * N))
'

test_expect_fire 'flags: read N times by eventfd_read, never written' '
	want gt.json flags "eventfd_read|eventfd_ctx_do_read" reads $N &&
	want gt.json flags ".*" writes 0 && want gt.json flags ".*" reads $N
'

test_expect_fire 'all samples in one object, none lost; the offsets are the BTF ones' '
	[ "$(jq .access.objects gt.json)" = 1 ] && [ "$(jq .access.lost gt.json)" = 0 ] &&
	[ "$(jq "[.access.rows[] | select(.field == \"flags\") | .offset] | unique | length" gt.json)" = 1 ] &&
	c=$(jq "[.access.rows[] | select(.field == \"count\") | .offset][0]" gt.json) &&
	f=$(jq "[.access.rows[] | select(.field == \"flags\") | .offset][0]" gt.json) &&
	echo "count at $c, flags at $f" && [ $((f - c)) -eq 8 ] &&
	[ "$(jq -r "[.access.rows[] | .alloc_function] | unique | .[]" gt.json)" = do_eventfd ] &&
	[ "$(jq -r "[.access.rows[] | .cache] | unique | .[]" gt.json)" = kmalloc-64 ]
'

test_expect_fire 'a numeric --offset watches the same word' '
	c=$(jq "[.access.rows[] | select(.field == \"count\") | .offset][0]" gt.json) &&
	$KMT watch -q -o num.dat --callsite do_eventfd --offset $c -F -- $GT -n $N > /dev/null &&
	$KMT report --json --sections access num.dat > num.json &&
	w=$(jq "[.access.rows[] | select(.function == \"eventfd_write\") | .writes] | add" num.json) &&
	echo "eventfd_write writes at $c: $w" && [ "$w" = $N ]
'

test_expect_fire 'kmap: the eventfd context with its accesses, per instruction' '
	p=$(cat pid) &&
	$KMT kmap --accessed gt.dat > kmap && cat kmap &&
	[ "$(grep -vc "^  \|^#" kmap)" = 1 ] &&
	grep -q "^do_eventfd+0x[0-9a-f]*,$p,0x[0-9a-f]*,64,[0-9]*,[1-9][0-9]*,[a-z_]*+0x[0-9a-f]*,\"kmt-watch-gt\",\"kmalloc-64\"$" kmap &&
	awk -F, -v n=$N "/^  eventfd_write/ { w += \$3; r += \$4 } END { exit !(w == n && r == n) }" kmap &&
	$KMT kmap --accessed --json gt.dat > kmap.json &&
	[ "$(jq "[.[0].accesses[] | select(.field == \"flags\") | .reads] | add" kmap.json)" = $N ]
'

test_expect_fire '--scan: every word of the object gets watched, attributions stay right' '
	$KMT watch -o scan.dat --callsite do_eventfd --scan --type eventfd_ctx --dwell 20ms \
		-F -- $GT -n 400 -i 1000 -s 100 > /dev/null 2> err && cat err &&
	grep -q "8 offsets covered: 0 8 16 24 32 40 48 56" err &&
	$KMT report --json --sections access scan.dat > scan.json &&
	[ "$(jq "[.access.rows[] | .offset] | unique | length" scan.json)" -ge 4 ] &&
	want scan.json "flags|id" ".*" writes 0 &&
	writers=$(jq -r "[.access.rows[] | select(.field == \"count\" and .writes > 0) | .function] | unique | join(\" \")" scan.json) &&
	echo "count written by: $writers" &&
	{ [ "$writers" = "eventfd_read eventfd_write" ] || [ "$writers" = "eventfd_ctx_do_read eventfd_write" ]; }
'

test_expect_fire 'info counts the samples' '
	$KMT info gt.dat | grep "^watchpoint samples:" &&
	[ "$($KMT info gt.dat | sed -n "s/^watchpoint samples: \([0-9,]*\), lost.*/\1/p" | tr -d ,)" -eq \
	  $(( $(jq ".access.writes + .access.reads + .access.dropped" gt.json) )) ]
'

test_expect_fire 'trace-cmd reads the samples too' '
	n=$(trace-cmd report gt.dat 2>/dev/null | grep -c "access: *\(read\|write\) obj=") &&
	echo "trace-cmd: $n samples" &&
	[ "$n" -eq $(( $(jq ".access.writes + .access.reads + .access.dropped" gt.json) )) ]
'

test_expect_success 'no sample: the summary says why (nothing allocated at the target)' '
	$KMT watch -o none.dat --callsite do_eventfd -F -- true 2> err; cat err &&
	grep -q "no sample because nothing was allocated at the target" err
'

start_watch() {	# name
	env --default-signal=INT,TERM,HUP $KMT watch -q -o "$1.dat" --cache kmalloc-64 -d 60 \
		> /dev/null 2> "$1.err" &
	echo $! > "$1.pid"
	for i in $(seq 1 100); do
		ls $T/instances | has "kmemtrace-$(cat "$1.pid")-ctl" && return 0
		sleep 0.05
	done
	echo "watch did not start"; cat "$1.err"; return 1
}

for sig in INT TERM; do
	test_expect_success "SIG$sig: the file is valid, both instances and the watchpoints are gone" '
		start_watch $sig && $GT -n 20 -s 0 > /dev/null && sleep 0.3 &&
		kill -$sig $(cat $sig.pid) && rc=0 && { wait $(cat $sig.pid) || rc=$?; } &&
		cat $sig.err && [ $rc -eq 0 ] &&
		! ls $T/instances | has "kmemtrace-$(cat $sig.pid)" &&
		check_whole $sig.dat &&
		$KMT watch -o again.dat --callsite do_eventfd --offset eventfd_ctx.count -F -- $GT -n 1 -s 0 \
			> /dev/null 2> again.err && grep -q "2 words at a time" again.err
	'
done

test_expect_success 'SIGKILL: the next watch moves the dead one'"'"'s events to its spool, removes both instances' '
	start_watch k && kill -KILL $(cat k.pid); wait $(cat k.pid) || true;
	ls $T/instances | has "kmemtrace-$(cat k.pid)-ctl" &&
	$KMT watch -o next.dat --callsite do_eventfd -F -- true 2> err; cat err &&
	grep -q "instance kmemtrace-$(cat k.pid) of a dead recorder held .* moved into its spool" err &&
	grep -q "instance kmemtrace-$(cat k.pid)-ctl of a dead recorder held .*instance removed" err &&
	! ls $T/instances | has "kmemtrace-$(cat k.pid)" &&
	$KMT record -q --recover k.dat.spool && check_whole k.dat
'

# Run a command expected to fail with @code; its stderr is in err.
fails() {	# code command...
	local code=$1 rc=0
	shift
	"$@" > /dev/null 2> err || rc=$?
	cat err
	[ $rc -eq $code ]
}

test_expect_success 'bad input: one clear line, nothing left behind' '
	fails 2 $KMT watch -o x.dat && grep -q "cache NAME or --callsite" err &&
	fails 1 $KMT watch -o x.dat --callsite no_such_function_kmt &&
	grep -q "no function .no_such_function_kmt." err &&
	fails 1 $KMT watch -o x.dat --cache no_such_cache_kmt && grep -q "no slab cache" err &&
	fails 1 $KMT watch -o x.dat --callsite do_eventfd --offset eventfd_ctx.nope &&
	grep -q "has no member .nope." err &&
	fails 1 $KMT watch -o x.dat --callsite do_eventfd --offset 0,8,16 && grep -q "at most 2 offsets" err &&
	fails 2 $KMT watch -o x.dat --callsite do_eventfd --offset 8 --scan && grep -q "exclude each other" err &&
	[ ! -e x.dat ] && [ ! -e x.dat.spool ]
'

tracefs_check
test_done
