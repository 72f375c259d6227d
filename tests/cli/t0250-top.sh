#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace top: --json snapshots of the ground-truth workload add up to
# its exact counts, and to report's numbers for the same session kept with
# -o; --batch stops after -n; the interactive view driven in tmux (every
# key, a resize, the terminal put back after q and after SIGTERM); signals;
# tracefs as it was; bad input.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
S=kmt-top-$$
trap 'tmux kill-session -t $S 2>/dev/null; tmux kill-session -t $S-h 2>/dev/null; rm -f "$F"; cleanup_work' EXIT
G=40 X=5 L=2

test_expect_success '--json -F: snapshots of two runs of the workload add up to both' '
	$KMT top --json -i 0.25 -r 0 -o s.dat -F -- sh -c \
		"$WL/kmt-gt -g $G -x $X -l $L $F > /dev/null; sleep 0.8; $WL/kmt-gt -g $G $F > /dev/null" > snaps &&
	wc -l < snaps && [ $(wc -l < snaps) -ge 3 ] &&
	jq -e .snapshot snaps > /dev/null &&
	n=$(jq "[.rows[] | select(.name | test(\"^do_getxattr\\\\+\")) | .allocs] | add // 0" snaps | awk "{ s += \$1 } END { print s }") &&
	echo "do_getxattr allocs over the snapshots: $n" && [ "$n" = $((2 * G + L)) ] &&
	n=$(jq "[.rows[] | select(.name | test(\"^vmemdup_user\\\\+\")) | .frees] | add // 0" snaps | awk "{ s += \$1 } END { print s }") &&
	[ "$n" = $X ]
'

test_expect_success 'the session kept with -o: report says the same as the snapshots' '
	$KMT report --json s.dat > s.json &&
	[ "$(jq .allocs snaps | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.allocs s.json)" ] &&
	[ "$(jq .frees snaps | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.frees s.json)" ] &&
	[ "$(tail -1 snaps | jq .live_bytes)" -ge "$(jq .summary.live_bytes s.json)" ] &&
	[ "$(tail -1 snaps | jq .lost_events)" = "$(jq .summary.lost_events s.json)" ] &&
	$KMT info s.dat | has "clock: *mono"
'

# -j: with 2 and more a feed thread takes, merges and decodes the pages
# (the default here, 2 CPUs); with 1 all runs on top's thread. Both give
# the workload's exact counts, and the same as report on the session kept.
for j in 1 3; do
test_expect_success "-j $j: the snapshots add up to the workload, and to report on the session" '
	rm -f "$F" && touch "$F" &&
	$KMT top -j '$j' --json -i 0.25 -r 0 -o s'$j'.dat -F -- sh -c \
		"$WL/kmt-gt -g $G -x $X -l $L $F > /dev/null; sleep 0.5; $WL/kmt-gt -g $G $F > /dev/null" > snaps'$j' &&
	n=$(jq "[.rows[] | select(.name | test(\"^do_getxattr\\\\+\")) | .allocs] | add // 0" snaps'$j' | awk "{ s += \$1 } END { print s }") &&
	echo "-j '$j': do_getxattr allocs over the snapshots: $n" && [ "$n" = $((2 * G + L)) ] &&
	n=$(jq "[.rows[] | select(.name | test(\"^vmemdup_user\\\\+\")) | .frees] | add // 0" snaps'$j' | awk "{ s += \$1 } END { print s }") &&
	[ "$n" = $X ] &&
	$KMT report --json s'$j'.dat > s'$j'.json &&
	[ "$(jq .allocs snaps'$j' | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.allocs s'$j'.json)" ] &&
	[ "$(jq .frees snaps'$j' | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.frees s'$j'.json)" ] &&
	[ "$(jq .events snaps'$j' | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.events s'$j'.json)" ] &&
	[ "$(tail -1 snaps'$j' | jq .behind_bytes)" = 0 ] &&
	if [ '$j' = 1 ]; then [ "$(jq "has(\"feed_cpu_pct\")" snaps'$j' | sort -u)" = false ]
	else jq -c "[.cpu_pct, .feed_cpu_pct]" snaps'$j' && [ "$(jq ".feed_cpu_pct >= 0" snaps'$j' | sort -u)" = true ]; fi
'
done

# From -j 4 the model runs in shards (KMT_MODEL_SHARDS sets how many):
# each snapshot adds up the shards' rows by call site, cache or task. The
# rows over all snapshots add up to report's on the session kept, row by
# row, for any number of shards (1: one model).
# Processes by pid: top names a task as it was when it allocated (the
# workload's child is "kmemtrace" until its exec), report on a file as its
# saved names say ("sh" throughout, if the fork came before the trace).
top_rows() {	# snapshots -> per row: name, allocs, frees, bytes_alloc, bytes_req over all of them
	jq -s -c '[.[].rows[] | if $v == "process" then .name |= sub("^.* "; "") else . end] | group_by(.name)
		| map({name: .[0].name, allocs: (map(.allocs) | add),
		frees: (map(.frees) | add), bytes_alloc: (map(.bytes_alloc) | add), bytes_req: (map(.bytes_req) | add)})
		| map(select(.allocs > 0)) | sort_by(.name) | .[]' --arg v "$2" "$1"
}
report_rows() {	# view report.json -> the same, from report
	case $1 in
	callsite) q='.callsites[] | {name: .callsite, allocs, frees, bytes_alloc, bytes_req}';;
	process) q='[.processes[]] | group_by(.pid)[] | {name: "\(.[0].pid)", allocs: (map(.allocs) | add),
		frees: (map(.frees) | add), bytes_alloc: (map(.bytes_alloc) | add), bytes_req: (map(.bytes_req) | add)}';;
	cache) q='.caches[] | {name, allocs, frees, bytes_alloc, bytes_req}';;
	esac
	jq -s -c "[.[0] | $q] | map(select(.allocs > 0)) | sort_by(.name) | .[]" "$2"
}
for spec in 1:callsite 2:callsite 3:callsite 3:process 3:cache 5:callsite 8:callsite; do
	n=${spec%:*} v=${spec#*:}
test_expect_success "$n model shards, by $v: the rows over the snapshots add up to report's, row by row" '
	rm -f "$F" && touch "$F" &&
	KMT_MODEL_SHARDS='$n' $KMT top -j 8 --json -i 0.25 -r 0 --view '$v' -o m'$n$v'.dat -F -- sh -c \
		"$WL/kmt-gt -g $G -x $X -l $L $F > /dev/null; sleep 0.3; $WL/kmt-gt -g $G $F > /dev/null" > m'$n$v' &&
	[ "$(jq .model_shards m'$n$v' | sort -u)" = '$n' ] &&
	$KMT report --json m'$n$v'.dat > m'$n$v'.json &&
	[ "$(jq .allocs m'$n$v' | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.allocs m'$n$v'.json)" ] &&
	[ "$(jq .frees m'$n$v' | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.frees m'$n$v'.json)" ] &&
	[ "$(jq .events m'$n$v' | awk "{ s += \$1 } END { print s }")" = "$(jq .summary.events m'$n$v'.json)" ] &&
	top_rows m'$n$v' '$v' | sed "s/ (+[^\"]*\"/\"/" > top.rows && report_rows '$v' m'$n$v'.json > report.rows &&
	echo "'$n' shards, by '$v': $(wc -l < top.rows) rows" && [ -s top.rows ] && diff top.rows report.rows &&
	if [ '$v' = callsite ]; then
		n=$(jq "[.rows[] | select(.name | test(\"^do_getxattr\\\\+\")) | .allocs] | add // 0" m'$n$v' |
			awk "{ s += \$1 } END { print s }") && [ "$n" = $((2 * G + L)) ]
	fi
'
done

test_expect_success '--view cache and --sort: the rows, their order' '
	$KMT top --json -i 0.25 -r 0 --view cache -s allocs -F -- sh -c "$WL/kmt-gt -g $G $F > /dev/null" > c.snaps &&
	[ "$(jq -r .view c.snaps | sort -u)" = cache ] &&
	n=$(jq "[.rows[] | select(.name == \"kmalloc-2k\") | .allocs] | add // 0" c.snaps | awk "{ s += \$1 } END { print s }") &&
	[ "$n" -ge $G ] &&
	jq -c "[.rows[].allocs]" c.snaps | while read -r a; do jq -e ". == (sort | reverse)" <<< "$a" > /dev/null || exit 1; done
'

test_expect_success '--batch -n 3: three snapshots, then exit 0' '
	$KMT top --batch -i 0.2 -n 3 > b.out && cat b.out | sed -n 1,12p &&
	[ $(grep -c "^kmemtrace top" b.out) = 3 ] && grep -q "allocs/s" b.out && grep -q "top.s CPU" b.out
'

# hackbench saturates both CPUs: the analysis falls behind (it takes its
# share of the CPU, no more), but the ticker stops it and lends it its
# priority when a snapshot is due, so each comes on time: the k-th at
# k * 0.5 s, less than 0.3 s late (0.010-0.016 s measured here; before the
# ticker 0.1-1.1 s). The last one comes when the command ends.
if command -v hackbench > /dev/null; then
test_expect_success 'a saturated machine: snapshots every interval, saying how far behind the analysis is' '
	$KMT top --json -i 0.5 -r 1 -- sh -c "hackbench -g 4 -l 1000 > /dev/null" > h.snaps 2> h.err &&
	jq -c "[.time_s, .interval_s, .events, .behind_bytes]" h.snaps &&
	[ $(wc -l < h.snaps) -ge 4 ] &&
	head -n -1 h.snaps | jq .time_s | awk "{ k++; late = \$1 - k * 0.5 }
		late < -0.05 || late >= 0.3 { print \"snapshot \" k \" at \" \$1 \" s\"; bad = 1 } END { exit bad }" &&
	head -n -1 h.snaps | jq -e "select(.behind_bytes > 0)" > /dev/null &&
	[ "$(tail -1 h.snaps | jq .behind_bytes)" = 0 ] &&
	[ "$(tail -1 h.snaps | jq .lost_events)" = 0 ]
'
else
	test_skip 'a saturated machine: snapshots every interval' 'hackbench is not installed'
fi

test_expect_success 'SIGTERM and SIGINT: a last snapshot, the instance removed' '
	{ $KMT top --json -i 5 > t.snaps & pid=$!; } &&
	wait_tracing $pid &&
	kill -TERM $pid && wait $pid && [ $(wc -l < t.snaps) = 1 ] && [ ! -d "$T/instances/kmemtrace-$pid" ] &&
	{ $KMT top --batch -i 5 > i.out & pid=$!; } &&
	wait_tracing $pid &&
	kill -INT $pid && wait $pid && grep -q "^kmemtrace top" i.out && [ ! -d "$T/instances/kmemtrace-$pid" ]
'

test_expect_success '--prefault: the pages for the queue are in before tracing starts; 0: none' '
	ncpu=$(grep -c ^processor /proc/cpuinfo) &&
	rss() { awk "/^VmRSS/ { print int(\$2 / 1024) }" /proc/$1/status; } &&
	for mb in 48 0; do
		{ $KMT top --json -i 5 --prefault $mb > p.snaps & pid=$!; } &&
		wait_tracing $pid &&
		r=$(rss $pid) && echo "prefault $mb MB per CPU on $ncpu CPUs: RSS $r MB" &&
		kill -TERM $pid && wait $pid || return 1
		if [ $mb = 0 ]; then [ "$r" -lt 48 ] || return 1; else [ "$r" -ge $((mb * ncpu)) ] || return 1; fi
	done
'

# --- the interactive view, in tmux ---
screen() { tmux capture-pane -p -t $S; }
wait_for() {	# text: until the screen shows it (5 s)
	for i in $(seq 50); do screen | has -- "$1" && return 0; sleep 0.1; done
	screen; return 1
}

test_expect_success 'tmux: the view, every key, a resize, q puts the terminal back' '
	command -v tmux > /dev/null || { echo "tmux missing (make deps)"; exit 1; }
	tmux new-session -d -s $S -x 130 -y 40 "bash --norc --noprofile" &&
	tmux send-keys -t $S "stty -a | grep -o \"icanon\" > before; sh -c \"echo \\\$\\\$ > toppid1; exec $KMT top -i 0.3\"; stty -a | grep -o \"[-]*icanon\" > after; echo TOP-\"\"ENDED" Enter &&
	wait_for "every 0.3 s" && wait_for "bytes/s" && wait_for "call site" &&
	screen | has " q quit" &&
	tmux send-keys -t $S k && wait_for "by cache" &&
	tmux send-keys -t $S p && wait_for "by process" &&
	tmux send-keys -t $S g && wait_for "by cgroup" &&
	tmux send-keys -t $S c && wait_for "by call site" &&
	tmux send-keys -t $S s && wait_for "sort allocs/s" &&
	tmux send-keys -t $S k "/" && wait_for "filter:" &&
	tmux send-keys -t $S "kmalloc" Enter && wait_for "filter kmalloc" &&
	! screen | sed -n "6,35p" | grep -v "kmalloc\|^ *$\|no row" | has "[a-z]" &&
	tmux send-keys -t $S " " && wait_for "\[paused\]" && tmux send-keys -t $S " " &&
	tmux resize-window -t $S -x 70 -y 20 &&
	narrow() { [ $(screen | awk "{ if (length(\$0) > m) m = length(\$0) } END { print m }") -le 70 ] &&
		screen | tail -1 | has "c/k/p/g view .* q quit"; } &&
	for i in $(seq 50); do narrow && break; sleep 0.1; done && narrow &&
	tmux send-keys -t $S q && wait_for TOP-ENDED &&
	[ "$(cat $WORK/before)" = icanon ] && [ "$(cat $WORK/after)" = icanon ] &&
	! screen | has "every 0.3 s"
'

test_expect_success 'tmux: SIGTERM puts the terminal back too' '
	tmux send-keys -t $S "clear; sh -c \"echo \\\$\\\$ > toppid; exec $KMT top -i 0.3\"; stty -a | grep -o \"[-]*icanon\" > after2; echo DONE\"\"2" Enter &&
	wait_for "every 0.3 s" && pid=$(cat toppid) && [ -n "$pid" ] && kill -TERM $pid &&
	wait_for DONE2 && [ "$(cat $WORK/after2)" = icanon ] &&
	! [ -d "$T/instances/kmemtrace-$pid" ]
'

# A short window, with a workload running: every matching row that fits
# is drawn (at 8 lines or less it said "no row matches the filter"; at 9 it
# drew 1 of 2). Paused, the rows stay put: a height shows the first rows
# of the taller screen, the same lines.
S2=$S-h
start_top() {	# session height: top -i 0.3 in a new pane of 100 columns
	tmux new-session -d -s $S2 -x 100 -y $1 "bash --norc --noprofile" &&
	tmux send-keys -t $S2 "sh -c \"echo \\\$\\\$ > toppid2; exec $KMT top -i 0.3\"; echo TOP2-\"\"ENDED" Enter &&
	S=$S2 wait_for "every 0.3 s"
}
pane() { tmux capture-pane -p -t $S2; }
rows() { pane | awk "/allocs\\/s .*growth/ { t = 1; next } t" | head -n -1 | grep -v "^ *$"; }
drawn() {	# lines: the pane is top's frame of that height (title on top, help line at the bottom)
	[ $(pane | wc -l) = $1 ] && pane | sed -n 1p | has "^kmemtrace top" && pane | tail -1 | has "q quit"
}
height() {	# resize, and wait for the redraw (tmux keeps the old frame's bottom or top)
	tmux resize-window -t $S2 -x 100 -y $1 &&
	for i in $(seq 50); do drawn $1 && break; sleep 0.1; done && drawn $1
}
workload() {	# in the background until $WORK/wl.run goes (60 s at most)
	touch $WORK/wl.run
	for i in $(seq 600); do [ -e $WORK/wl.run ] || break; $WL/kmt-gt -g 20 $F; sleep 0.1; done > /dev/null 2>&1 &
}

test_expect_success 'tmux, heights 24, 9, 8, 6: every matching row that fits is drawn' '
	workload && start_top 24 &&
	tmux send-keys -t $S2 k "/" && S=$S2 wait_for "filter:" &&
	tmux send-keys -t $S2 "kmalloc" Enter && S=$S2 wait_for "filter kmalloc" &&
	for i in $(seq 50); do [ $(rows | wc -l) -ge 4 ] && break; sleep 0.1; done &&
	tmux send-keys -t $S2 " " && S=$S2 wait_for "\[paused\]" && sleep 0.7 && height 24 &&
	rows > all && n=$(wc -l < all) && cat all && echo "$n rows match" && [ $n -ge 4 ] && [ $n -le 18 ] &&
	! grep -v kmalloc all &&
	for hr in 9:3 8:3 6:2 24:$n; do
		h=${hr%:*} r=${hr#*:}
		height $h && pane && rows > got && echo "height $h: $(wc -l < got) rows, want $r" &&
		! pane | has "no row matches" && [ $(wc -l < got) = $r ] &&
		head -n $r all | diff - got || exit 1
		[ $r = $n ] || pane | has "cache ($r of $n)" || exit 1
	done &&
	pane | has "^kmemtrace top .*filter kmalloc" && pane | has "^events .*lost"
'

test_expect_success 'tmux: / then Esc clears the filter (an arrow key does not); ^U erases the text; Enter on none clears it' '
	pane | has "filter kmalloc" &&
	tmux send-keys -t $S2 "/" && S=$S2 wait_for "filter: kmalloc_ .*Esc clear" &&
	tmux send-keys -t $S2 Escape && for i in $(seq 50); do pane | sed -n 1p | has "filter" || break; sleep 0.1; done &&
	! pane | sed -n 1p | has "filter" && rows | has -v kmalloc &&
	tmux send-keys -t $S2 "/" "kmalloc" Enter && S=$S2 wait_for "filter kmalloc" &&
	tmux send-keys -t $S2 "/" Left Up Enter && sleep 0.5 && pane | sed -n 1p | has "filter kmalloc" &&
	tmux send-keys -t $S2 "/" C-u && S=$S2 wait_for "filter: _ " && tmux send-keys -t $S2 Enter &&
	for i in $(seq 50); do pane | sed -n 1p | has "filter" || break; sleep 0.1; done &&
	! pane | sed -n 1p | has "filter" &&
	tmux send-keys -t $S2 "/" "KMALLOC-2" Enter && S=$S2 wait_for "filter KMALLOC-2" &&
	rows | has "kmalloc-2k" && ! rows | has -v "kmalloc-2"
'

# The help line lists exactly the keys that work: each one it shows is
# pressed, and does what it says.
test_expect_success 'tmux: every key the help line shows has its effect' '
	tmux send-keys -t $S2 "/" C-u Enter && sleep 0.3 && pane | tail -1 > foot && cat foot &&
	sed "s/^ *//; s/ *$//; s/   */\n/g" foot > keys && cat keys &&
	while read -r k what; do
		case "$k $what" in
		"c call sites") tmux send-keys -t $S2 k && S=$S2 wait_for "by cache" && tmux send-keys -t $S2 c &&
			S=$S2 wait_for "by call site";;
		"k caches") tmux send-keys -t $S2 k && S=$S2 wait_for "by cache";;
		"p processes") tmux send-keys -t $S2 p && S=$S2 wait_for "by process";;
		"g cgroups") tmux send-keys -t $S2 g && S=$S2 wait_for "by cgroup";;
		"s sort") was=$(pane | sed -n 1p | sed "s/.*sort \([^,]*\).*/\1/") && tmux send-keys -t $S2 s &&
			for i in $(seq 50); do [ "$(pane | sed -n 1p | sed "s/.*sort \([^,]*\).*/\1/")" != "$was" ] && break; sleep 0.1; done &&
			[ "$(pane | sed -n 1p | sed "s/.*sort \([^,]*\).*/\1/")" != "$was" ];;
		"/ filter") tmux send-keys -t $S2 "/" && S=$S2 wait_for "filter: " && pane | tail -1 > efoot &&
			sed "s/^filter: [^ ]* *//; s/   */\n/g" efoot | while read -r e ewhat; do
				case "$e $ewhat" in
				"Enter apply") tmux send-keys -t $S2 k m a l Enter && S=$S2 wait_for "filter kmal";;
				"Esc clear") tmux send-keys -t $S2 "/" Escape && sleep 0.5 && ! pane | sed -n 1p | has filter;;
				"^U erase") tmux send-keys -t $S2 "/" a b C-u && S=$S2 wait_for "filter: _ " && tmux send-keys -t $S2 Escape;;
				*) echo "the prompt shows a key the test does not know: $e $ewhat"; exit 1;;
				esac || exit 1
			done;;
		"space pause") tmux send-keys -t $S2 " " && S=$S2 wait_for "\[paused\]" && S=$S2 wait_for "space resume" &&
			tmux send-keys -t $S2 " " && S=$S2 wait_for "space pause" && ! pane | has "\[paused\]";;
		"space resume") tmux send-keys -t $S2 " " && S=$S2 wait_for "space pause";;
		"q quit") ;;
		*) echo "the help line shows a key the test does not know: $k $what"; exit 1;;
		esac || { echo "key $k ($what) had no effect"; exit 1; }
	done < keys &&
	grep -q "q quit" keys && tmux send-keys -t $S2 q && S=$S2 wait_for TOP2-ENDED
'
rm -f $WORK/wl.run

# A command's output and top's snapshots apart: --snapshots FILE.
test_expect_success '--batch -- CMD with --snapshots: the command'"'"'s output alone on stdout, the snapshots in the file' '
	$KMT top --batch -i 0.3 --snapshots snaps.txt -- sh -c "echo the command says hello; sleep 1" > cmd.out &&
	[ "$(cat cmd.out)" = "the command says hello" ] &&
	grep -c "^kmemtrace top " snaps.txt && [ "$(grep -c "^kmemtrace top " snaps.txt)" -ge 2 ] &&
	[ "$(stat -c %a snaps.txt)" = 600 ] &&
	$KMT top --json -n 1 -i 0.2 --snapshots snaps.json > none.out && [ ! -s none.out ] &&
	jq -e .rows snaps.json > /dev/null &&
	rc=0; $KMT top --snapshots x.txt -n 1 2> err || rc=$?; [ $rc = 2 ] && grep -q "for --batch or --json" err
'

test_expect_success 'bad input: usage errors, and no terminal without --batch' '
	rc=0; $KMT top -i 0 2> err || rc=$?; [ $rc = 2 ] && grep -q "bad interval" err &&
	rc=0; $KMT top --batch -F 2> err || rc=$?; [ $rc = 2 ] && grep -q "needs a COMMAND" err &&
	rc=0; $KMT top --view nosuch 2> err || rc=$?; [ $rc = 2 ] &&
	rc=0; $KMT top --prefault -1 2> err || rc=$?; [ $rc = 2 ] && grep -q "bad prefault size" err &&
	rc=0; $KMT top -j 0 2> err || rc=$?; [ $rc = 2 ] && grep -q "bad number of jobs" err &&
	rc=0; $KMT top < /dev/null > out 2> err || rc=$?; [ $rc = 1 ] && grep -q "needs a terminal" err &&
	[ $(wc -l < err) = 1 ]
'

# A top a failed test left in tmux ends with the session (SIGHUP): wait
# for it, by the pid it wrote, before tracefs is compared.
tmux kill-session -t $S 2>/dev/null
tmux kill-session -t $S2 2>/dev/null
for f in toppid1 toppid toppid2; do
	p=$(cat "$WORK/$f" 2>/dev/null) || continue
	for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
done
tracefs_check
test_done
