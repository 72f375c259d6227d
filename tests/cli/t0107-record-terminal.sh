#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What record says on a terminal, and the small things a careful tool gets
# right: "Ctrl-C to stop" first when nothing else will stop it, the status
# line (thousands separators, cut to the terminal's width), exit 127 for a
# command that is not there and 126 for one that cannot run (as shells),
# stack rows with separators. A terminal is made with script(1).
. "$(dirname "$0")/lib.sh"
need_tracing
command -v script > /dev/null || test_skip_all "script (util-linux) is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT

# Run "kmemtrace $3..." on a terminal of $1 columns for about 2 s, then
# SIGTERM it (unless it ends first); what the terminal showed goes into $2,
# every redraw of the status line on a line of its own.
on_tty() {
	local w=$1 out=$2
	shift 2
	script -qec "stty cols $w rows 30; $KMT $* & p=\$!; sleep 2.2; kill -TERM \$p 2> /dev/null; wait \$p" \
		/dev/null < /dev/null | sed 's/\x1b\[K//g' | tr '\r' '\n' | grep . > "$out"
}

test_expect_success 'no command, no -d: Ctrl-C stops it, said first; the status line has separators' '
	( for i in $(seq 300); do /bin/true; done ) &
	on_tty 200 st.txt record -o s.dat && wait && cat st.txt &&
	head -n 1 st.txt | has -x "kmemtrace record: recording system-wide; Ctrl-C to stop" &&
	grep -q "^ *[0-9.]*s  system-wide  .* events .* written .* lost$" st.txt &&
	grep -q "  [0-9]\{1,3\}\(,[0-9]\{3\}\)\+ events " st.txt &&
	! grep -q "[0-9]\{4\} events" st.txt && [ -s s.dat ]
'

test_expect_success 'with -d or a command: no Ctrl-C hint' '
	on_tty 200 d.txt record -d 1 -o d.dat && cat d.txt && grep -q " events " d.txt &&
	! grep -q "Ctrl-C" d.txt &&
	on_tty 200 c.txt record -o c.dat -- sleep 1.5 && ! grep -q "Ctrl-C" c.txt
'

test_expect_success 'the status line fits a narrow terminal: cut, never wrapped; the hint whole' '
	on_tty 50 n.txt record -o n.dat && cat n.txt && grep -q "; Ctrl-C to stop$" n.txt &&
	grep "^ *[0-9.]*s  " n.txt > status && [ -s status ] &&
	[ "$(LC_ALL=C.UTF-8 wc -L < status)" -le 49 ]
'

# Run "$2..." and want exit code $1; its stderr is in err.
exits() {
	local want=$1 rc=0
	shift
	"$@" 2> err || rc=$?
	cat err
	echo "exit $rc (want $want)"
	[ $rc -eq $want ]
}

test_expect_success 'a command that is not there: exit 127; one that cannot run: 126 (as shells)' '
	exits 127 $KMT record -q -o x.dat -- /no/such/cmd &&
	grep -q "cannot run ./no/such/cmd.: No such file or directory" err && [ ! -e x.dat ] &&
	exits 127 $KMT record -q -o x.dat -- no-such-command-anywhere &&
	printf "#!/bin/sh\n" > noexec.sh && chmod 644 noexec.sh &&
	exits 126 $KMT record -q -o x.dat -- ./noexec.sh &&
	grep -q "Permission denied" err && [ ! -e x.dat ] && [ ! -e x.dat.spool ] &&
	exits 127 $KMT top --batch -n 1 -- /no/such/cmd &&
	exits 127 sh -c /no/such/cmd
'

test_expect_success 'stack rows: thousands separators' '
	$KMT record -q --stack -o big.dat -- $WL/kmt-gt -g 1200 $F > /dev/null &&
	$KMT report --sections callsites big.dat > big.txt &&
	grep "^ *[0-9.]*%  *[0-9,]* .*<- path_getxattrat+" big.txt | tee row &&
	grep -q "^ *[0-9.]*%  *1,200 .*<- " row
'

tracefs_check

test_done
