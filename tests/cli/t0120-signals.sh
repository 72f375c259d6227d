#!/usr/bin/env bash
# The recorder stopped by signals: SIGINT, SIGTERM and SIGHUP end the
# recording with a valid file and no instance left; after SIGKILL the next
# recorder removes the orphaned instance and --recover turns the spool
# into a valid trace.
. "$(dirname "$0")/lib.sh"
need_tracing
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT

# Start a recorder in the background with default signal handling (a
# non-interactive shell would have it ignore SIGINT), wait until it traces.
start_recorder() {	# output-file
	env --default-signal=INT,TERM,HUP $KMT record -q -o "$1" > /dev/null 2> "$1.err" &
	echo $! > "$1.pid"
	wait_tracing $(cat "$1.pid") || { cat "$1.err"; return 1; }
}

for sig in INT TERM HUP; do
	test_expect_success "SIG$sig: recording stops, the file is valid, the instance is gone" '
		start_recorder $sig.dat &&
		{ $WL/kmt-gt -g 5 $F > /dev/null || { echo "kmt-gt failed"; false; }; } &&
		{ kill -$sig $(cat $sig.dat.pid) || { echo "the recorder was gone"; cat $sig.dat.err; false; }; } &&
		rc=0 && { wait $(cat $sig.dat.pid) || rc=$?; } &&
		echo "recorder exit $rc" && cat $sig.dat.err && [ $rc -eq 0 ] &&
		! ls $T/instances | grep -q "kmemtrace-$(cat $sig.dat.pid)" &&
		[ ! -e $sig.dat.spool ] &&
		n=$($KMT dump $sig.dat | grep -c "do_getxattr+.*req=1337" || true) && echo "getxattr events $n" &&
		{ [ "$n" = 5 ] || { $KMT info $sig.dat; $KMT check $sig.dat | tail -n 3;
			$KMT dump $sig.dat | grep -E "getxattr|lost" | tail -n 12; false; }; } &&
		$KMT check -q $sig.dat &&
		trace-cmd dump -v $sig.dat 2>&1 | grep -q "is a valid trace-cmd file" &&
		trace-cmd report $sig.dat > /dev/null 2>&1
	'
done

test_expect_success 'SIGTERM to the recorder ends its command too' '
	env --default-signal=TERM $KMT record -q -o c.dat -- sleep 30 > /dev/null 2>&1 & p=$!;
	for i in $(seq 1 200); do pgrep -x -P $p sleep > /dev/null && break; sleep 0.05; done;
	kill -TERM $p; rc=0; wait $p || rc=$?; echo "rc $rc";
	[ $rc -eq 143 ] && ! pgrep -P $p > /dev/null && $KMT info c.dat > /dev/null
'

test_expect_success 'SIGKILL leaves an instance and a spool behind' '
	start_recorder k.dat &&
	$WL/kmt-gt -g 11 $F > /dev/null && sleep 0.3 &&
	kill -KILL $(cat k.dat.pid); wait $(cat k.dat.pid) || true;
	ls $T/instances | grep -q "kmemtrace-$(cat k.dat.pid)" && [ -d k.dat.spool ]
'

test_expect_success 'the next recorder removes the dead one'"'"'s instance' '
	$KMT record -o next.dat -- true 2> err; cat err &&
	grep -q "removed instances left by dead recorders: kmemtrace-$(cat k.dat.pid)" err &&
	! ls $T/instances | grep -q "kmemtrace-$(cat k.dat.pid)"
'

test_expect_success 'a spool left behind blocks a new recording to the same file, clearly' '
	rc=0; $KMT record -q -o k.dat -- true 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && grep -q "recover" err
'

test_expect_success '--recover turns the spool into a valid, truncated-marked trace' '
	$KMT record --recover k.dat.spool 2> err; cat err &&
	[ -e k.dat ] && [ "$(stat -c %a k.dat)" = 600 ] &&
	$KMT info k.dat | grep -q "recording truncated" &&
	$KMT check k.dat | grep -q "recording truncated" && $KMT check -q k.dat &&
	trace-cmd dump -v k.dat 2>&1 | grep -q "is a valid trace-cmd file"
'

test_expect_success 'a running recorder'"'"'s instance is never reaped' '
	start_recorder live.dat &&
	$KMT record -q -o other.dat -- true &&
	ls $T/instances | grep -q "kmemtrace-$(cat live.dat.pid)" &&
	kill -INT $(cat live.dat.pid) && wait $(cat live.dat.pid)
'

test_expect_success 'two recorders at once both get complete data' '
	start_recorder a.dat &&
	$KMT record -q -o b.dat -- $WL/kmt-gt -g 13 $F > /dev/null &&
	kill -INT $(cat a.dat.pid) && wait $(cat a.dat.pid) &&
	$KMT dump a.dat | grep -c "do_getxattr+.*req=1337" | grep -qx 13 &&
	$KMT dump b.dat | grep -c "do_getxattr+.*req=1337" | grep -qx 13
'

tracefs_check
test_done
