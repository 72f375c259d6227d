#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The recorder stopped by signals: SIGINT, SIGTERM and SIGHUP end the
# recording with a valid file and no instance left. SIGKILL loses nothing
# the kernel still holds: the instance left behind keeps the events not yet
# read, its tracing stopped at once by the recorder's watchdog, --recover
# takes them into the file with the spool's, and so does the next recorder
# (into the spool, saying so) before it removes the instance; with -m 0
# the spool is never more than a second behind.
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

# A recorder following a command that runs kmt-gt -g N, then sleeps (a
# quiet task: nothing more is recorded) until end_child ends it. Returns
# once kmt-gt is done.
start_gt_recorder() {	# name N [record option...]
	local name=$1 n=$2 i
	shift 2
	$KMT record -q -F -o $name.dat "$@" -- sh -c "echo \$\$ > $name.child; $WL/kmt-gt -g $n $F > /dev/null;
		touch $name.done; exec sleep 60" > /dev/null 2> $name.err &
	echo $! > $name.pid
	for i in $(seq 200); do
		[ -e $name.done ] && return 0
		sleep 0.05
	done
	echo "kmt-gt did not finish"; cat $name.err
	kill -TERM $(cat $name.pid); wait $(cat $name.pid); end_child $name; return 1
}

# The sleeping command of start_gt_recorder, ended (by its pid, if it is
# still that sleep).
end_child() {	# name
	local c
	c=$(cat $1.child 2> /dev/null) || return 0
	[ "$(cat /proc/$c/comm 2> /dev/null)" = sleep ] && kill $c 2> /dev/null
	return 0
}

# After a test of start_gt_recorder NAME, however it ended: its command
# ended, its recorder too if it still runs, and its instance stopped and
# removed if a failure left it (with the spool's note, instance.h).
cleanup_gt() {	# name
	local p
	end_child $1
	p=$(cat $1.pid 2> /dev/null) || return 0
	kill -TERM $p 2> /dev/null && wait $p 2> /dev/null
	if [ -d $T/instances/kmemtrace-$p ]; then
		echo "left behind: instance kmemtrace-$p, removed"
		echo 0 > $T/instances/kmemtrace-$p/tracing_on
		rmdir $T/instances/kmemtrace-$p
	fi
	rm -f /run/kmemtrace/kmemtrace-$p
}

# SIGKILL, as the OOM killer sends it: no clean-up at all.
kill_recorder() {	# name
	kill -KILL $(cat $1.pid) && { wait $(cat $1.pid) 2> /dev/null || true; }
}

# Process PID has exited (a zombie is: its parent has not asked yet).
gone() {	# pid
	! kill -0 $1 2> /dev/null || awk "{ exit \$3 != \"Z\" }" /proc/$1/stat 2> /dev/null
}

# The watchdog of recorder PID stopped its instance: tracing off, within 2 s.
wait_stopped() {	# pid
	local i d=$T/instances/kmemtrace-$1
	for i in $(seq 40); do
		[ "$(cat $d/tracing_on 2> /dev/null)" = 0 ] && [ -e /run/kmemtrace/kmemtrace-$1.died ] && return 0
		sleep 0.05
	done
	echo "instance kmemtrace-$1: tracing_on $(cat $d/tracing_on), no death noted"; return 1
}

# A field of the per-CPU stats of instance directory $1, summed over CPUs.
stat_sum() {	# instance-dir field
	cat $1/per_cpu/cpu*/stats | awk -v f="$2:" 'index($0, f) == 1 { n += $NF } END { print n + 0 }'
}

# A trace file's events and losses in all, from kmemtrace info.
info_all() {	# file
	$KMT info $1 | tr -d , | awk '$1 == "all" { print $2, $5 }'
}

# Events a recovered file says died with its recorder, all CPUs (kmemtrace info).
info_died() {	# file
	$KMT info $1 | tr -d , | awk '/events* lost when the recorder died/ { n += $3 } END { print n + 0 }'
}

# Events read out of the ring buffers, all CPUs: the stats stored in the
# file, as trace-cmd reads them.
tc_read() {	# file
	trace-cmd report --stat -i $1 2> /dev/null | awk '/^read events:/ { n += $3 } END { print n + 0 }'
}

# Every event read out of the ring buffers is in the file, or counted as
# having died with the recorder: events = read - died.
all_accounted() {	# file
	local events lost read died
	set -- $1 $(info_all $1)
	events=$2 lost=$3 read=$(tc_read $1) died=$(info_died $1)
	echo "$1: $events events, $lost lost; $read read, $died died with the recorder"
	[ $events -eq $((read - died)) ]
}

# The events --recover said it took from instance kmemtrace-PID (in err).
said_took() {	# pid
	sed -n "s/.*took \([0-9,]*\) unread events from instance kmemtrace-$1,.*/\1/p" err | tr -d ,
}

# The unread events a recorder said instance kmemtrace-PID held (in err).
said_unread() {	# pid
	sed -n "s/.*instance kmemtrace-$1 of a dead recorder hel[a-z]* \([0-9,]*\) unread.*/\1/p" err | tr -d ,
}

for sig in INT TERM HUP; do
	test_expect_success "SIG$sig: recording stops, the file is valid, the instance is gone" '
		start_recorder $sig.dat &&
		{ $WL/kmt-gt -g 5 $F > /dev/null || { echo "kmt-gt failed"; false; }; } &&
		{ kill -$sig $(cat $sig.dat.pid) || { echo "the recorder was gone"; cat $sig.dat.err; false; }; } &&
		rc=0 && { wait $(cat $sig.dat.pid) || rc=$?; } &&
		echo "recorder exit $rc" && cat $sig.dat.err && [ $rc -eq 0 ] &&
		! ls $T/instances | has "kmemtrace-$(cat $sig.dat.pid)" &&
		[ ! -e $sig.dat.spool ] &&
		n=$($KMT dump $sig.dat | grep -c "do_getxattr+.*req=1337" || true) && echo "getxattr events $n" &&
		{ [ "$n" = 5 ] || { $KMT info $sig.dat; $KMT check $sig.dat | tail -n 3;
			$KMT dump $sig.dat | grep -E "getxattr|lost" | tail -n 12; false; }; } &&
		check_whole $sig.dat &&
		trace-cmd dump -v $sig.dat 2>&1 | has "is a valid trace-cmd file" &&
		trace-cmd report $sig.dat > /dev/null 2>&1
	'
done

test_expect_success 'SIGTERM to the recorder ends its command too' '
	env --default-signal=TERM $KMT record -q -o c.dat -- sleep 30 > /dev/null 2>&1 & p=$!;
	for i in $(seq 1 200); do pgrep -x -P $p sleep > /dev/null && break; sleep 0.05; done;
	kill -TERM $p; rc=0; wait $p || rc=$?; echo "rc $rc";
	[ $rc -eq 143 ] && ! pgrep -P $p > /dev/null && $KMT info c.dat > /dev/null
'

# -m 0 writes through: a recording reaches the spool within a second, so
# a SIGKILL loses nothing the kernel no longer holds. (Before, the pages
# reached it only when a CPU's buffer passed its watermark: a quiet
# recording's spool stayed empty.)
test_expect_success 'record -m 0: a second later, everything recorded is in the spool' '
	trap "cleanup_gt m0" EXIT &&
	start_gt_recorder m0 7 -m 0 && sleep 1 && kill_recorder m0 &&
	inst=$T/instances/kmemtrace-$(cat m0.pid) &&
	unread=$(stat_sum $inst entries) && read=$(stat_sum $inst "read events") &&
	echo "unread $unread, read $read" && [ $unread -eq 0 ] && [ $read -gt 0 ] &&
	$KMT record --recover m0.dat.spool 2> err; cat err &&
	[ "$(said_took $(cat m0.pid))" = 0 ] && [ ! -d $inst ] &&
	[ "$(info_all m0.dat)" = "$read 0" ] &&
	n=$($KMT dump m0.dat | count "do_getxattr+.*req=1337") && echo "getxattr $n" && [ $n -eq 7 ]
'

# The issue this answers: a SIGKILLed recorder's instance kept tracing with
# all its events, --recover wrote none of them, and the next recorder
# removed it without a word.
test_expect_success 'SIGKILL: --recover takes what the instance still held, and removes it' '
	trap "cleanup_gt k1" EXIT &&
	start_gt_recorder k1 11 && kill_recorder k1 &&
	inst=$T/instances/kmemtrace-$(cat k1.pid) && wait_stopped $(cat k1.pid) &&
	unread=$(stat_sum $inst entries) && read=$(stat_sum $inst "read events") &&
	echo "unread $unread, read $read" && [ $unread -gt 0 ] &&
	$KMT record --recover k1.dat.spool 2> err; cat err &&
	[ "$(said_took $(cat k1.pid))" = $unread ] &&
	[ ! -d $inst ] && [ ! -e /run/kmemtrace/kmemtrace-$(cat k1.pid) ] &&
	[ "$(info_all k1.dat)" = "$((unread + read)) 0" ] && all_accounted k1.dat &&
	$KMT info k1.dat > i1 && ! grep truncated i1 && check_whole k1.dat &&
	n=$($KMT dump k1.dat | count "do_getxattr+.*req=1337") && echo "getxattr $n" && [ $n -eq 11 ] &&
	n=$(trace-cmd report -i k1.dat 2> /dev/null | count "call_site=do_getxattr.*bytes_req=1337") &&
	echo "trace-cmd: getxattr $n" && [ $n -eq 11 ]
'

# Pages the recorder had read and held in memory die with it: the events
# it read (the buffer's stats) less those in its spool are marked lost on
# the first page taken after them, where they were. A 64 KiB buffer wakes
# the recorder after 4 pages; its 16 MiB pipe is never full, so never
# spooled.
test_expect_success 'SIGKILL: what the recorder held in memory is counted lost where it was' '
	trap "cleanup_gt k2" EXIT &&
	start_gt_recorder k2 300 -b 64 && kill_recorder k2 &&
	inst=$T/instances/kmemtrace-$(cat k2.pid) &&
	unread=$(stat_sum $inst entries) && read=$(stat_sum $inst "read events") &&
	echo "unread $unread, read $read" && [ $read -gt 0 ] &&
	$KMT record --recover k2.dat.spool 2> err; cat err &&
	[ "$(sed -n "s/.* \([0-9,]*\) events the recorder had read were not in its spool.*/\1/p" err |
		tr -d ,)" = $read ] &&
	set -- $(info_all k2.dat) && [ $1 -eq $unread ] && [ $(info_died k2.dat) -eq $read ] &&
	all_accounted k2.dat && $KMT check k2.dat > chk; tail -n 3 chk &&
	! grep -q "stats only" chk &&
	trace-cmd report -i k2.dat 2>&1 | grep "EVENTS DROPPED"
'

test_expect_success 'a new recorder moves a dead one'"'"'s instance into its spool, says so, removes it' '
	trap "cleanup_gt k3" EXIT &&
	start_gt_recorder k3 13 && kill_recorder k3 && p=$(cat k3.pid) &&
	unread=$(stat_sum $T/instances/kmemtrace-$p entries) && echo "unread $unread" &&
	$KMT record -o next.dat -- true 2> err; cat err &&
	grep -q "instance kmemtrace-$p of a dead recorder held [0-9,]* unread events: moved into its spool, where .kmemtrace record --recover $(realpath k3.dat.spool). takes them; instance removed" err &&
	[ "$(said_unread $p)" = $unread ] &&
	[ ! -d $T/instances/kmemtrace-$p ] && [ ! -e /run/kmemtrace/kmemtrace-$p ] &&
	$KMT record -q --recover k3.dat.spool && all_accounted k3.dat &&
	$KMT info k3.dat > i3 && ! grep truncated i3 &&
	n=$($KMT dump k3.dat | count "do_getxattr+.*req=1337") && echo "getxattr $n" && [ $n -eq 13 ]
'

test_expect_success 'a dead recorder'"'"'s instance whose spool is gone: the loss is said, even with -q' '
	trap "cleanup_gt k4" EXIT &&
	start_gt_recorder k4 3 && kill_recorder k4 && p=$(cat k4.pid) &&
	unread=$(stat_sum $T/instances/kmemtrace-$p entries) && echo "unread $unread" && rm -r k4.dat.spool &&
	$KMT record -q -o next.dat -- true 2> err; cat err &&
	grep -q "instance kmemtrace-$p of a dead recorder held [0-9,]* unread events, but its spool .*k4.dat.spool. is gone: instance removed, the events with it" err &&
	[ "$(said_unread $p)" = $unread ] && [ ! -d $T/instances/kmemtrace-$p ]
'

# System-wide, the instance left behind went on tracing the whole system
# until someone stopped it; the recorder's watchdog stops it now, keeping
# what it holds.
test_expect_success 'SIGKILL leaves an instance, its tracing stopped by the watchdog, and a spool behind' '
	start_recorder k.dat &&
	$WL/kmt-gt -g 11 $F > /dev/null && sleep 0.3 &&
	kill -KILL $(cat k.dat.pid); wait $(cat k.dat.pid) || true;
	wait_stopped $(cat k.dat.pid) && [ -d k.dat.spool ] &&
	[ "$(stat_sum $T/instances/kmemtrace-$(cat k.dat.pid) entries)" -gt 0 ]
'

test_expect_success 'the next recorder says what the dead one'"'"'s instance held, moves it, removes it' '
	$KMT record -o next.dat -- true 2> err; cat err && p=$(cat k.dat.pid) &&
	grep -q "instance kmemtrace-$p of a dead recorder held [0-9,]* unread events: moved into its spool" err &&
	said_unread $p > k.unread && [ $(cat k.unread) -gt 0 ] &&
	! ls $T/instances | has -x "kmemtrace-$p" && [ ! -e /run/kmemtrace/kmemtrace-$p ]
'

# With --stack every allocation's trigger unwinds a stack, with tracing on
# or off: the watchdog removes the triggers and disables the events too.
test_expect_success 'SIGKILL with --stack: the watchdog switches off tracing, triggers and events; --recover says when it died' '
	trap "cleanup_gt ks" EXIT &&
	start_gt_recorder ks 17 --stack && p=$(cat ks.pid) && inst=$T/instances/kmemtrace-$p &&
	grep -q "^stacktrace" $inst/events/kmem/kmalloc/trigger &&
	w=$(pgrep -x kmt-watchdog | while read -r x; do [ "$(ps -o ppid= -p $x | tr -d " ")" = $p ] && echo $x; done) &&
	[ -n "$w" ] && kill_recorder ks && wait_stopped $p &&
	! grep -v "^#" $inst/events/kmem/kmalloc/trigger | has . &&
	[ "$(cat $inst/events/kmem/kmalloc/enable)" = 0 ] && [ "$(cat $inst/events/kmem/enable)" = 0 ] &&
	for i in $(seq 20); do gone $w && break; sleep 0.05; done && gone $w &&
	$KMT record --recover ks.dat.spool 2> err; cat err &&
	grep -q "^kmemtrace record: the recorder died at $(date +%Y-%m-%d) [0-9:]* [A-Z]*; its watchdog stopped the instance.s tracing then$" err &&
	$KMT info ks.dat | has "^settings: .*recorder died $(date -u +%Y-%m-%d) [0-9:]* UTC (its watchdog stopped the tracing)" &&
	span=$(sed -n "s/.* events in \(.*\) on [0-9]* CPUs.*/\1/p" err) && echo "span: $span" &&
	[ -n "$span" ] && [ "$span" != "0 ns" ] && ! echo "$span" | has "^0\.0" &&
	n=$($KMT dump ks.dat | count "do_getxattr+.*req=1337") && echo "getxattr $n" && [ $n -eq 17 ]
'

# Without its watchdog (killed first), a dead recorder's instance goes on
# tracing into a buffer nobody reads: what it drops then is said apart,
# not as the recording's loss (no advice to record with a larger buffer).
# One try of the next test: 0 ok, 1 failed, 2 the recorder lost events
# while it lived (a loaded machine, a 64 KiB ring): the instance's count
# then is those and the dead's together, and the check is made again.
kd_try() {
	local p inst w dropped said notin lost before n
	cleanup_gt kd; rm -rf kd.dat kd.dat.spool kd.err err rep
	$KMT record -q -b 64 -o kd.dat -- sh -c "echo \$\$ > kd.child; exec sleep 60" > /dev/null 2> kd.err &
	echo $! > kd.pid && p=$(cat kd.pid) && inst=$T/instances/kmemtrace-$p && wait_tracing $p &&
	w=$(pgrep -x kmt-watchdog | while read -r x; do [ "$(ps -o ppid= -p $x | tr -d " ")" = $p ] && echo $x; done) &&
	kill -KILL $w && kill_recorder kd && [ "$(cat $inst/tracing_on)" = 1 ] &&
	$WL/kmt-gt -g 3000 $F > /dev/null &&
	echo 0 > $inst/tracing_on && dropped=$(($(stat_sum $inst "dropped events") + $(stat_sum $inst overrun))) &&
	echo "dropped after the death: $dropped" && [ $dropped -gt 0 ] &&
	$KMT record --recover kd.dat.spool 2> err; cat err &&
	said=$(sed -n "s/.*: \([0-9,]*\) events were dropped by the instance after the recorder died.*/\1/p" err | tr -d ,) &&
	notin=$(sed -n "s/.*: \([0-9,]*\) events the recorder had read were not in its spool.*/\1/p" err | tr -d ,) &&
	lost=$(sed -n "s/.* events in .* CPUs*, \([0-9,]*\) lost$/\1/p" err | tr -d ,) &&
	before=$((${lost:-0} - ${notin:-0} - ${said:-0})) || return 1
	if [ "$said" != $dropped ] && [ $before -gt 0 ] && [ $((said + before)) = $dropped ]; then
		echo "the recorder lost $before events while it lived: again"
		return 2
	fi
	[ "$said" = $dropped ] &&
	$KMT report --wide --sections summary kd.dat > rep && grep -A3 "events lost" rep &&
	n=$(echo $dropped | sed ":a;s/\B[0-9]\{3\}\>/,&/;ta") &&
	tr -s "\n " "  " < rep | has "$n dropped by the instance after its recorder died (nobody read it): not the recording.s" &&
	$KMT info kd.dat | has "dropped by the instance after the recorder died" &&
	if [ "$(info_died kd.dat)" = 0 ]; then ! grep -q "larger buffer" rep; fi
}

test_expect_success 'SIGKILL without the watchdog: what the full instance dropped after the death is counted apart' '
	trap "cleanup_gt kd" EXIT
	for try in 1 2 3; do
		rc=0; kd_try || rc=$?
		[ $rc = 2 ] || break
	done
	[ $rc = 0 ]
'

test_expect_success 'a spool left behind blocks a new recording to the same file, clearly' '
	rc=0; $KMT record -q -o k.dat -- true 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && grep -q "recover" err
'

test_expect_success '--recover turns the spool into a valid trace, with every event read' '
	$KMT record --recover k.dat.spool 2> err; cat err &&
	[ -e k.dat ] && [ "$(stat -c %a k.dat)" = 600 ] && all_accounted k.dat &&
	set -- $(info_all k.dat) && [ $1 -ge $(cat k.unread) ] &&
	$KMT info k.dat > i && ! grep "recording truncated" i && check_whole k.dat &&
	trace-cmd dump -v k.dat 2>&1 | has "is a valid trace-cmd file"
'

test_expect_success 'a running recorder'"'"'s instance is never reaped' '
	start_recorder live.dat &&
	$KMT record -q -o other.dat -- true &&
	ls $T/instances | has "kmemtrace-$(cat live.dat.pid)" &&
	kill -INT $(cat live.dat.pid) && wait $(cat live.dat.pid)
'

test_expect_success 'two recorders at once both get complete data' '
	start_recorder a.dat &&
	$KMT record -q -o b.dat -- $WL/kmt-gt -g 13 $F > /dev/null &&
	kill -INT $(cat a.dat.pid) && wait $(cat a.dat.pid) &&
	$KMT dump a.dat | grep -c "do_getxattr+.*req=1337" | has -x 13 &&
	$KMT dump b.dat | grep -c "do_getxattr+.*req=1337" | has -x 13
'

tracefs_check
test_done
