#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where a recording goes and whose it is: sudo hands the file to the
# invoking user; -o DIR, an unwritable place or a non-trace file are refused
# before anything is recorded; a trace already there is kept as FILE.old
# (record and --recover alike; convert: t0264); what the file says about how it
# was recorded (info); vmalloc recorded by default, with an exact ground
# truth (kmt-gt -m: BPF array maps, one 139264-byte vmalloc area each).
. "$(dirname "$0")/lib.sh"
need_tracing
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

# Under sudo kmt-gt runs as the invoking user (65534 here), who cannot
# reach a checkout under root's home: it runs a copy they can reach. What
# record writes is made with their rights: in a directory of theirs (nb).
WHY_SUDO='under sudo the trace is the invoking user'"'"'s, still 0600, and they can read it'
if reachable GT $WL/kmt-gt; then
	test_expect_success "$WHY_SUDO" '
		chmod 711 . && mkdir nb && chown 65534:65534 nb &&
		SUDO_UID=65534 SUDO_GID=65534 $KMT record -q -o nb/s.dat -- $GT -g 3 $F > /dev/null &&
		[ "$(stat -c "%u:%g %a" nb/s.dat)" = "65534:65534 600" ] && [ "$(ls nb)" = s.dat ] &&
		$NOBODY $KMT report --sections summary nb/s.dat > rep && grep -q "^SUMMARY" rep &&
		cp nb/s.dat s.dat &&
		$KMT record -q -o r.dat -- true && [ "$(stat -c %u r.dat)" = 0 ]
	'
else
	test_skip "$WHY_SUDO" "user 65534 cannot run ${GT:-a copy of kmt-gt} (is /tmp noexec?)"
	(cd "$WORK" && mkdir nb && chown 65534:65534 nb && $KMT record -q -o s.dat -- $WL/kmt-gt -g 3 $F > /dev/null &&
	 $KMT record -q -o r.dat -- true)	# what the tests below read
fi

# sudo lets a user run kmemtrace as root: nothing it writes may land where
# that user could not write (a file of theirs in /etc, say).
test_expect_success 'under sudo, an output where the user cannot write is refused in one line, before recording' '
	chmod 711 . && mkdir -p rootonly && chmod 755 rootonly && cp s.dat rootonly/old.dat &&
	for c in "record -o rootonly/x.dat -- $WL/kmt-gt -g 1 $F" "record -o rootonly/old.dat -- $WL/kmt-gt -g 1 $F" \
		 "top --batch -n 1 -o rootonly/t.dat" "watch --cache filp -d 0.2 -o rootonly/w.dat"; do
		rc=0; SUDO_UID=65534 SUDO_GID=65534 $KMT $c > out 2> err || rc=$?
		echo "$c: rc $rc: $(cat err)"
		[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] &&
		grep -q "cannot write in .rootonly. as nobody, who ran sudo: Permission denied" err &&
		! grep -q "kmt-gt pid" out || exit 1
	done &&
	for c in "report -o rootonly/r.txt s.dat" "report --html -o rootonly/r.html s.dat" "diff -o rootonly/d.txt s.dat s.dat" \
		 "export -f pprof -o rootonly/p.pb.gz s.dat" "export -f sqlite -o rootonly/q.db s.dat" \
		 "convert s.dat rootonly/c.dat"; do
		rc=0; SUDO_UID=65534 SUDO_GID=65534 $KMT $c > out 2> err || rc=$?
		echo "$c: rc $rc: $(cat err)"
		[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "Permission denied" err || exit 1
	done &&
	[ "$(ls rootonly)" = old.dat ] && cmp s.dat rootonly/old.dat &&
	no_own_instances &&
	SUDO_UID=65534 SUDO_GID=65534 $KMT record -q -o nb/y.dat -- true && [ "$(stat -c %u nb/y.dat)" = 65534 ] &&
	$KMT record -q -o rootonly/z.dat -- true && [ "$(stat -c %u rootonly/z.dat)" = 0 ]
'

test_expect_success 'under sudo, a killed recorder'"'"'s spool is the user'"'"'s, and so is what --recover makes of it' '
	SUDO_UID=65534 SUDO_GID=65534 $KMT record -q -o nb/k.dat -- sleep 30 > /dev/null 2>&1 & p=$!
	for i in $(seq 100); do [ -e nb/k.dat.spool/cpu0 ] && break; sleep 0.1; done; sleep 0.3
	c=$(pgrep -P $p) || :; kill -9 $p; wait $p || :; [ -z "$c" ] || kill -9 $c || :
	[ -d nb/k.dat.spool ] && echo "not the user'"'"'s: $(find nb/k.dat.spool ! -user 65534)" &&
	[ -z "$(find nb/k.dat.spool ! -user 65534)" ] &&
	SUDO_UID=65534 SUDO_GID=65534 $KMT record -q --recover nb/k.dat.spool &&
	[ "$(stat -c "%u %a" nb/k.dat)" = "65534 600" ] && [ ! -e nb/k.dat.spool ]
'

test_expect_success 'under sudo, the command gets the user'"'"'s HOME, USER, LOGNAME and SHELL, as runuser -u gives them' '
	IFS=: read -r name _ _ _ _ home shell <<< "$(getent passwd 65534)" &&
	HOME=/root USER=root LOGNAME=root SHELL=/bin/bash KMT_KEEP=yes SUDO_UID=65534 SUDO_GID=65534 \
		$KMT record -q -o nb/env.dat -- env > env.out &&
	grep -qx "HOME=$home" env.out && grep -qx "USER=$name" env.out && grep -qx "LOGNAME=$name" env.out &&
	grep -qx "SHELL=$shell" env.out && grep -qx "KMT_KEEP=yes" env.out && grep -qx "SUDO_UID=65534" env.out &&
	[ $(grep -c "^HOME=" env.out) -eq 1 ] && [ $(grep -c "^USER=" env.out) -eq 1 ] &&
	$KMT record -q --user nobody -o env2.dat -- env > env2.out && grep -qx "HOME=$home" env2.out &&
	HOME=/root $KMT record -q -o env3.dat -- env > env3.out && grep -qx "HOME=/root" env3.out
'

test_expect_success 'record --list without root says to use sudo (tracefs is root'"'"'s)' '
	if [ "$(stat -c %a $T)" = 700 ]; then
		rc=0; $NOBODY $KMT record --list > out 2> err || rc=$?; cat err;
		[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "run with sudo" err
	else
		$NOBODY $KMT record --list | has "kmem:kmalloc"
	fi
'

test_expect_success '-o DIR: refused before recording, nothing left behind' '
	mkdir outdir && rc=0; $KMT record -o outdir -- $WL/kmt-gt -g 1 $F > out 2> err || rc=$?;
	cat err; [ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "is a directory" err &&
	! grep -q "kmt-gt pid" out && [ -z "$(ls outdir)" ] && [ ! -e outdir.spool ] &&
	no_own_instances
'

test_expect_success 'a file that is not a trace is never overwritten; a trace is kept as .old' '
	echo "my notes" > notes.txt && rc=0; $KMT record -q -o notes.txt -- true 2> err || rc=$?;
	cat err; [ $rc -eq 1 ] && grep -q "is not a trace file" err && [ "$(cat notes.txt)" = "my notes" ] &&
	cp s.dat keep.dat && $KMT record -o keep.dat -- true 2> err && cat err &&
	grep -q "previous keep.dat is kept as keep.dat.old" err && cmp s.dat keep.dat.old &&
	rc=0; $KMT record -o /nonexistent/dir/x.dat -- true 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && grep -q "cannot write in ./nonexistent/dir." err
'

test_expect_success 'report, export -o a pipe, a device or a link of one'"'"'s own: written through, never replaced' '
	$KMT report --html -o /dev/stdout s.dat > page.html && head -c 15 page.html | has "<!DOCTYPE html>" &&
	[ -L /dev/stdout ] && $KMT report --json -o - s.dat | jq -e .summary > /dev/null &&
	mkfifo fifo && { cat fifo > fifo.out & } && $KMT report -o fifo s.dat && wait &&
	grep -q "SUMMARY" fifo.out && [ -p fifo ] &&
	mknod nulldev c 1 3 && $KMT export -f folded -o nulldev s.dat && [ -c nulldev ] &&
	$KMT export -f pprof -o nulldev s.dat && [ -c nulldev ] && [ "$(ls | grep -c tmp-)" = 0 ] &&
	$KMT report --json s.dat > real.json && ln -s real.json link.json &&
	$KMT report --json -o link.json s.dat && [ -L link.json ] && jq -e .summary real.json > /dev/null
'

test_expect_success 'reports, pages and exports hold kernel addresses: 0600 like the trace, the sudo user'"'"'s' '
	umask 022 &&
	for c in "report --json" "report --html" "report --csv callsites" "report --raw-ip" "diff" \
		 "export -f folded" "export -f pprof" "export -f sqlite" "export -f perfetto"; do
		set -- $c; cmd=$1; shift; rm -f o.out
		$KMT $cmd "$@" -o o.out s.dat $([ $cmd = diff ] && echo s.dat) &&
		echo "$c: $(stat -c "%a %u" o.out)" && [ "$(stat -c "%a %u" o.out)" = "600 0" ] || exit 1
		rm -f nb/o.out && SUDO_UID=65534 SUDO_GID=65534 $KMT $cmd "$@" -o nb/o.out s.dat $([ $cmd = diff ] && echo s.dat) &&
		[ "$(stat -c "%a %u:%g" nb/o.out)" = "600 65534:65534" ] || exit 1
	done &&
	$NOBODY mkfifo nb/f.out && { cat nb/f.out > /dev/null & } &&
	SUDO_UID=65534 SUDO_GID=65534 $KMT report -o nb/f.out s.dat && wait &&
	[ "$(stat -c "%a %u" nb/f.out)" = "644 65534" ] && [ -p nb/f.out ]
'

# fs.protected_symlinks may be 0 (it is on Debian 12): the kernel then
# follows any link, and kmemtrace keeps the rule itself.
test_expect_success 'another user'"'"'s link is never written through: refused in one line, before recording' '
	chmod 711 . && mkdir shared open && chmod 1777 shared && chmod 777 open &&
	echo "root only" > secret && chmod 600 secret &&
	for d in shared open; do
		case $d in
		shared) why=" in a world-writable sticky directory";;
		open) why=", neither yours nor the directory owner'"'"'s";;
		esac
		$NOBODY ln -s $PWD/secret $d/r.out && [ "$(stat -c %u $d/r.out)" = 65534 ] || exit 1
		for c in "report --json" "report --html" "report --csv callsites" "report" "diff" \
			 "export -f folded" "export -f pprof" "export -f sqlite" "export -f perfetto"; do
			set -- $c; cmd=$1; shift
			rc=0; $KMT $cmd "$@" -o $d/r.out s.dat $([ $cmd = diff ] && echo s.dat) > out 2> err || rc=$?
			cat err; [ $rc -eq 1 ] && [ ! -s out ] || exit 1
			[ "$(cat err)" = "kmemtrace $cmd: '"'"'$d/r.out'"'"' is a symbolic link of uid 65534$why: not writing through it" ] || exit 1
		done
		rc=0; $KMT record -o $d/r.out -- $WL/kmt-gt -g 1 $F > out 2> err || rc=$?; cat err
		[ $rc -eq 1 ] && [ "$(cat err)" = "kmemtrace record: '"'"'$d/r.out'"'"' is a symbolic link of uid 65534$why: not writing through it" ] &&
		! grep -q "kmt-gt pid" out && [ ! -e $d/r.out.spool ] &&
		[ "$(cat secret)" = "root only" ] && [ "$(stat -c %a secret)" = 600 ] && [ -L $d/r.out ] &&
		[ "$(ls $d)" = r.out ] || exit 1
	done
'

test_expect_success 'a link of one'"'"'s own, or of the directory'"'"'s owner outside a sticky directory, is written through' '
	: > mine.json && ln -s $PWD/mine.json shared/own.json && $KMT report --json -o shared/own.json s.dat &&
	[ -L shared/own.json ] && jq -e .summary mine.json > /dev/null &&
	mkdir theirs && chown 65534 theirs && $NOBODY touch theirs/t.json &&
	$NOBODY ln -s $PWD/theirs/t.json theirs/link.json &&
	$KMT report --json -o theirs/link.json s.dat && [ -L theirs/link.json ] && jq -e .summary theirs/t.json > /dev/null
'

test_expect_success '--recover of a spool that is not there: one line, no advice to do the same' '
	rc=0; $KMT record --recover /no/such.spool 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && [ $(wc -l < err) -eq 1 ] && grep -q "/no/such.spool" err && ! grep -q -- "--recover" err
'

test_expect_success 'record says whose events it records: system-wide unless -F or -p, like the seed, unlike perf' '
	$KMT record -o sw.dat -- $WL/kmt-gt -g 2 $F > /dev/null 2> sw.err &&
	grep -qx "  tasks: system-wide (use -F for only kmt-gt and its children)" sw.err &&
	$KMT info sw.dat | has "^settings: .*tasks: system-wide (use -F for only kmt-gt and its children);" &&
	$KMT record -F -o f.dat -- $WL/kmt-gt -g 2 $F > /dev/null 2> f.err &&
	grep -qx "  tasks: only kmt-gt and its children (-F)" f.err &&
	$KMT record -p $$ -d 0.2 -o p.dat > /dev/null 2> p.err &&
	grep -qx "  tasks: only pid $$ and their children (-p)" p.err &&
	if command -v script > /dev/null; then
		script -qec "$KMT record -o st.dat -- sleep 1.3" /dev/null > st.tty 2>&1 &&
		tr "\r" "\n" < st.tty | has " 1\.[0-9]s  system-wide (use -F for only sleep and its children) .* events"
	fi
'

test_expect_success 'info says how the file was recorded: command, settings, date' '
	$KMT record -q --stack -F -b 2048 --filter "bytes_req > 1000" -o how.dat -- $WL/kmt-gt -g 2 $F > /dev/null &&
	$KMT info how.dat > info && sed -n "/^recorder/,/^recorded/p" info &&
	grep -q "^command: *kmemtrace record -q --stack -F -b 2048 --filter .bytes_req > 1000. -o how.dat -- .*kmt-gt -g 2 " info &&
	grep -q "^settings: .*tasks: only kmt-gt and its children (-F); buffer 2048 KiB per CPU; .*stacks yes; filter bytes_req > 1000" info &&
	grep -q "^recorded: *$(date +%Y-)" info &&
	trace-cmd report how.dat > /dev/null 2>&1
'

test_expect_success 'an empty file says so' '
	: > empty.dat && rc=0; $KMT report empty.dat 2> err || rc=$?; cat err;
	[ $rc -eq 1 ] && grep -q "empty.dat: .*the file is empty" err
'

# vmalloc: N BPF array maps, one area of 139264 bytes each from
# __bpf_map_area_alloc, freed by a kworker (whoever frees, by address).
M=5
test_expect_success 'vmalloc is recorded by default: the ground truth, exactly' '
	if ! $WL/kmt-gt -g 0 -m 1 $F > /dev/null 2> err; then
		cat err; echo "BPF maps cannot be created here"; exit 1
	fi
	$KMT record -q --stack -o v.dat -- $WL/kmt-gt -g 0 -m $M $F > out &&
	pid=$(sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out) &&
	$KMT report --json -p $pid --sections vmalloc v.dat > v.json &&
	jq -c ".vmalloc | {allocs, frees, live, sizes, functions}" v.json &&
	[ "$(jq -c "[.vmalloc.sizes[] | select(.size == 139264) | [.allocs, .frees, .live]]" v.json)" = "[[$M,$M,0]]" ] &&
	[ "$(jq -c "[.vmalloc.functions[] | select(.function == \"__bpf_map_area_alloc\") | [.allocs, .frees, .bytes]]" v.json)" = "[[$M,$M,$((M * 139264))]]" ] &&
	n=$(trace-cmd report v.dat 2>/dev/null | grep -c "kmt-gt-$pid .* alloc_vmap_area: .* size=139264 ") &&
	echo "trace-cmd: $n" && [ "$n" -eq $M ] &&
	$KMT report --sections vmalloc v.dat | has "__bpf_map_area_alloc  *$M  *$M "
'

tracefs_check
test_done
