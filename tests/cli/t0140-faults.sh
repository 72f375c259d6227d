#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The recorder under faults: a full disk, no permission, no tracefs, an
# unmounted tracefs, another tracer on the same events, privilege dropping
# for the command, file modes. Each: one clear line, the right exit status,
# nothing left behind.
. "$(dirname "$0")/lib.sh"
need_tracing
tracefs_snapshot
F=$(gt_file)
SMALL=$WORK/small
trap 'umount $SMALL 2>/dev/null; rm -f "$F"; cleanup_work' EXIT

test_expect_success 'disk full: clear error, recording stops, file valid and marked truncated' '
	mkdir -p $SMALL && mount -t tmpfs -o size=24m tmpfs $SMALL &&
	rc=0; $KMT record -m 0 -o $SMALL/f.dat -- hackbench -g 2 -l 300 > /dev/null 2> err || rc=$?;
	cat err; [ $rc -eq 1 ] && grep -q "No space left on device" err &&
	grep -q "recording is truncated" err &&
	rc=0; $KMT check $SMALL/f.dat > chk || rc=$?; cat chk; [ $rc -eq 0 ] &&
	grep -q "recording truncated: .*No space left" chk &&
	trace-cmd report $SMALL/f.dat > /dev/null 2>&1 &&
	[ "$(ls $SMALL)" = f.dat ] && no_own_instances
'

# The idle flusher may fill the disk during the run (~24 MiB of spool seen
# on this tmpfs): the pages it could not write stay held, nothing is lost.
# The CPU with the most spooled goes first in the file, so that its spool's
# room is free for the others' held pages (1 run in ~30 failed with ENOSPC
# when a CPU with nothing spooled came first).
test_expect_success 'more raw pages than room on disk: the held ones go straight into the file, which is whole' '
	rm -f $SMALL/* &&
	rc=0; $KMT record -o $SMALL/g.dat -- hackbench -g 2 -l 300 > out 2> err || rc=$?;
	cat out err; [ $rc -eq 0 ] &&
	check_whole $SMALL/g.dat &&
	$KMT info $SMALL/g.dat | tr -d , > info && mib=$(awk "\$1 == \"all\" { print int(\$4) }" info) &&
	lost=$(awk "\$1 == \"all\" { print \$5 }" info) && echo "raw $mib MiB, lost $lost" &&
	[ "$mib" -gt 24 ] && [ "$lost" = 0 ] && ! grep -q truncated info &&
	[ "$(ls $SMALL)" = g.dat ]
'

# Raw pages (--no-compress) under a file size limit above any one CPU's
# spool file (~28 MiB each) and below the whole file (~56 MiB): the write
# fails partway, after some pages were read from memory and some of the
# spool freed.
test_expect_success 'the file does not fit: a clear error, no file, the rest kept, --recover works' '
	rm -rf $SMALL/* fz && mkdir fz &&
	rc=0; (ulimit -f 40000; exec $KMT record --no-compress -o fz/j.dat -- hackbench -g 2 -l 300 > /dev/null 2> err) || rc=$?;
	cat err; [ $rc -eq 1 ] && grep -q "j.dat: cannot write trace: File too large" err &&
	grep -q "MiB of pages were read and freed when writing the file failed" err &&
	grep -q -- "--recover fz/j.dat.spool" err &&
	[ "$(ls fz)" = j.dat.spool ] && no_own_instances &&
	$KMT record --recover fz/j.dat.spool 2> err; cat err &&
	check_whole fz/j.dat && $KMT info fz/j.dat | tr -d , > info &&
	grep -q "recording truncated: .* MiB of pages were read and freed" info &&
	n=$(awk "\$1 == \"all\" { print \$2 }" info) && echo "recovered $n events" && [ "$n" -gt 100000 ] &&
	trace-cmd report fz/j.dat > /dev/null 2>&1 && [ "$(ls fz)" = j.dat ]
'

test_expect_success 'no room even for the metadata: refused up front' '
	umount $SMALL && mount -t tmpfs -o size=6m tmpfs $SMALL &&
	rc=0; $KMT record -o $SMALL/h.dat -- true 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && [ -z "$(ls $SMALL)" ] &&
	no_own_instances
'

test_expect_success 'not root: one clear line, exit 1, nothing left' '
	chmod 711 . && mkdir -p open && chmod 777 open &&
	rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups $KMT record -o open/x.dat -- true 2> err || rc=$?;
	cat err; [ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "needs root" err &&
	[ -z "$(ls open)" ]
'

test_expect_success 'not root, reading a trace is fine' '
	$KMT record -q -o open/r.dat -- true && chmod 644 open/r.dat &&
	setpriv --reuid=65534 --regid=65534 --clear-groups $KMT check -q --no-model open/r.dat
'

test_expect_success 'no tracefs there: one clear line, exit 1' '
	rc=0; KMT_TRACEFS=/nonexistent $KMT record -o n.dat -- true 2> err || rc=$?;
	cat err; [ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "not a tracefs mount" err &&
	[ ! -e n.dat ] && [ ! -e n.dat.spool ]
'

test_expect_success 'tracefs not mounted: kmemtrace mounts it and records' '
	if ! umount $T 2>/dev/null; then echo "tracefs busy, cannot test"; exit 0; fi;
	rc=0; $KMT record -q -d 0.3 -o m.dat || rc=$?;
	[ -d $T/instances ] || mount -t tracefs nodev $T;
	[ $rc -eq 0 ] && check_whole m.dat
'

test_expect_success 'beside perf record on the same events, both get their data' '
	command -v perf > /dev/null || { echo "no perf"; exit 0; };
	perf record -q -e kmem:kmalloc -a -o p.data -- sh -c "touch perf.go;
		for i in \$(seq 600); do [ -e perf.stop ] && break; sleep 0.05; done" > /dev/null 2>&1 & p=$!;
	for i in $(seq 1 200); do [ -e perf.go ] && break; sleep 0.05; done;
	[ -e perf.go ] &&
	rc=0; $KMT record -q -o both.dat -- $WL/kmt-gt -g 37 $F > /dev/null || rc=$?; touch perf.stop;
	wait $p && [ $rc = 0 ] &&
	$KMT dump both.dat | grep -c "do_getxattr+.*req=1337" | has -x 37 &&
	perf script -i p.data 2>/dev/null | grep -c "bytes_req=1337" > n && cat n && [ "$(cat n)" -ge 1 ]
'

test_expect_success '--user runs the command as that user, recording as root' '
	rc=0; $KMT record -q --user nobody -o u.dat -- sh -c "id -u > /dev/shm/kmt-uid-$$" || rc=$?;
	[ $rc -eq 0 ] && [ "$(cat /dev/shm/kmt-uid-$$)" = 65534 ] && rm -f /dev/shm/kmt-uid-$$ &&
	check_whole u.dat
'

test_expect_success 'under sudo, the command runs as the invoking user' '
	chmod 711 . && mkdir nb && chown 65534 nb &&
	rc=0; SUDO_UID=65534 SUDO_GID=65534 $KMT record -q -o nb/s.dat -- sh -c "id -u > /dev/shm/kmt-uid2-$$" || rc=$?;
	[ $rc -eq 0 ] && [ "$(cat /dev/shm/kmt-uid2-$$)" = 65534 ] && rm -f /dev/shm/kmt-uid2-$$
'

test_expect_success 'an unknown --user is refused' '
	rc=0; $KMT record -q --user no-such-user-kmt -o nu.dat -- true 2> err || rc=$?;
	cat err; [ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "no such user" err &&
	[ ! -e nu.dat ] && [ ! -e nu.dat.spool ]
'

test_expect_success '-p of a process that does not exist: one clear line, exit 1' '
	sh -c "exit 0" & gone=$!; wait $gone;
	rc=0; $KMT record -q -p $gone -o np.dat -d 1 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "no such process" err && [ ! -e np.dat ] &&
	rc=0; $KMT watch -q --cache filp -p $gone -o npw.dat -d 1 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && grep -q "no such process" err && [ ! -e npw.dat ]
'

test_expect_success 'trace files and spool files are 0600, the spool directory 0700' '
	env --default-signal=INT $KMT record -q -o mode.dat > /dev/null 2>&1 & p=$!;
	for i in $(seq 1 100); do [ -e mode.dat.spool/cpu0 ] && break; sleep 0.05; done;
	stat -c "%a %n" mode.dat.spool mode.dat.spool/* > modes;
	kill -INT $p; wait $p;
	cat modes && grep -q "^700 mode.dat.spool$" modes && ! grep -v "^700 mode.dat.spool$" modes | has -v "^600 " &&
	[ "$(stat -c %a mode.dat)" = 600 ]
'

test_expect_success '--hash-pointers hides kernel addresses, keeps symbols' '
	$KMT record -q -o hp.dat -- $WL/kmt-gt -g 3 $F > /dev/null &&
	$KMT report --json --hash-pointers=shared-key hp.dat > hp.json &&
	! grep -q "0xffff" hp.json && grep -q "\"h:[0-9a-f]\{16\}\"" hp.json && grep -q "do_getxattr+0x" hp.json &&
	$KMT report --json --hash-pointers=shared-key hp.dat | cmp - hp.json &&
	$KMT dump --hash-pointers hp.dat | has "ptr=h:" &&
	$KMT dump --hash-pointers hp.dat > hp.dump && ! grep "ptr=0x" hp.dump
'

tracefs_check
test_done
