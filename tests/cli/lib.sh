# SPDX-License-Identifier: GPL-2.0-only
# Test library for the CLI tests, after git's t/test-lib.sh: each test is
#   test_expect_success 'what it checks' 'shell commands'
# run in a subshell with errexit and pipefail, so that every command of a
# pipeline counts: "$KMT report x | has y" fails when kmemtrace does.
# Output is TAP. Sourced by tests/cli/t*.sh.
#
# What follows kmemtrace in a pipeline reads all of its input (has, not
# grep -q; sed -n 1p, not head -1): a reader that leaves early kills the
# writer with SIGPIPE, which pipefail would count as its failure. A negated
# test of kmemtrace's output is written with a file between them
# ("$KMT report x > r && ! grep y r"): "! $KMT ... | grep y" passes when
# kmemtrace crashes.
set -u
TEST_NAME=$(basename "$0" .sh)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KMT_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B;; esac
KMT=$B/kmemtrace
WL=$B/workloads
SYNTH=$B/tests/kmt-synth
LIVE=$B/tests/kmt-live
T=/sys/kernel/tracing
export KMT_TESTDATA=${KMT_TESTDATA:-$ROOT/tests/data}
# Text fits $COLUMNS when it is set, even into a pipe: outputs the tests
# read have their full width unless a test asks (as git's test-lib does).
unset COLUMNS
WORK=$(mktemp -d "/tmp/kmt-$TEST_NAME.XXXXXX")
test_count=0
test_failed=0
: "${KMT_TEST_VERBOSE:=}"

PUB=
cleanup_work() { rm -rf "$WORK" ${PUB:+"$PUB"}; }
trap cleanup_work EXIT

test_skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

test_expect_success() {
	local desc=$1 body=$2 out rc
	test_count=$((test_count + 1))
	out=$( (cd "$WORK" && set -e -o pipefail && eval "$body") 2>&1 )
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $test_count - $desc"
		[ -n "$KMT_TEST_VERBOSE" ] && printf '%s\n' "$out" | sed 's/^/# /'
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/# /'
	fi
	return 0
}

# grep -q that reads to the end of its input: "... | has [-x|-v|-F] PATTERN".
has() {
	grep "$@" > /dev/null
}

# The commands "kmemtrace --help" lists, one a line; fails when it fails or
# lists none (a loop over $(commands) would pass on a crash).
commands() {
	local out
	out=$($KMT --help | awk '/^commands:/ { on = 1; next } on && !NF { on = 0 } on { print $1 }') &&
		[ -n "$out" ] && printf '%s\n' "$out"
}

# As git's: run a command, succeed if it exits with CODE (and say what it
# did otherwise). "test_expect_code 2 $KMT report -s x 2> err && grep ..."
test_expect_code() {	# code command...
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	[ $rc -eq "$want" ] || { echo "$1 exited $rc, not $want"; return 1; }
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	echo "1..$test_count"
	[ $test_failed -eq 0 ]
	exit $?
}

# A program that record runs as another user (the invoking user under
# sudo, --user) must be reachable by that user, and a checkout may not be:
# root's home is 0700 on Debian. Sets the variable $1 to a copy of the
# program $2 in a directory anyone may enter (removed at the end), and
# fails if user 65534 cannot run even that (/tmp mounted noexec).
reachable() {	# var program
	[ -n "$PUB" ] || { PUB=$(mktemp -d /tmp/kmt-pub-$TEST_NAME.XXXXXX) && chmod 755 "$PUB"; } || return 1
	cp "$2" "$PUB/" && chmod 755 "$PUB/${2##*/}" || return 1
	printf -v "$1" %s "$PUB/${2##*/}"
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$PUB/${2##*/}"
}

# Skip the whole script unless we can trace: root and tracefs.
need_tracing() {
	[ "$(id -u)" -eq 0 ] || test_skip_all "needs root (tracefs)"
	if [ ! -d $T/instances ]; then
		mount -t tracefs nodev $T 2>/dev/null || test_skip_all "tracefs is not available"
	fi
	[ -d $T/events/kmem ] || test_skip_all "the kernel has no kmem events"
}

# What a test must leave as it found: instances, enabled events, triggers.
# What a test made, and only that (another recorder may run meanwhile):
# the instances of its recorders, which have KMT_TEST_RUN in their
# environment (alive) or their spool in the work directory (the note of a
# dead one), and its own kmt-test-*-PID ones; and the top-level instance,
# which kmemtrace never touches.
export KMT_TEST_RUN=$WORK
own_instance() {	# name
	local p note
	case $1 in
	kmt-test-*-$$) return 0 ;;
	kmemtrace-*) ;;
	*) return 1 ;;
	esac
	p=${1#kmemtrace-}; p=${p%%-*}
	tr "\0" "\n" < /proc/$p/environ 2> /dev/null | has -x "KMT_TEST_RUN=$WORK" && return 0
	note=$(readlink /run/kmemtrace/$1 2> /dev/null) || return 1
	case $note in "$WORK"/*|"$(realpath "$WORK")"/*) return 0 ;; esac
	return 1
}
# No instance of this test's is there (another recorder's may be).
no_own_instances() {
	local i
	for i in $(ls $T/instances 2>/dev/null); do
		own_instance $i && { echo "left: instance $i"; return 1; }
	done
	return 0
}
tracefs_state() {
	local i
	for i in $(ls $T/instances 2>/dev/null | sort); do
		own_instance $i && echo $i
	done
	grep -l 1 $T/events/kmem/*/enable $T/events/percpu/*/enable 2>/dev/null
	grep -lv '^#' $T/events/kmem/*/trigger 2>/dev/null
	cat $T/tracing_on $T/buffer_size_kb $T/set_event 2>/dev/null
}

# Wait (10 s at most) until kmemtrace PID traces. A new instance starts
# with tracing_on 1; kmemtrace switches it off, enables its events, starts
# its readers and switches it on last. So the events are read first: once
# some are enabled, a tracing_on of 1 is the last switch, not the first.
# (tracefs files have size 0: read, not test -s.) If it never does, it is
# stopped, so that no failed test leaves a tracer running.
wait_tracing() {	# pid
	local i d=$T/instances/kmemtrace-$1
	for i in $(seq 200); do
		grep -q . $d/set_event 2> /dev/null && [ "$(cat $d/tracing_on 2>/dev/null)" = 1 ] && return 0
		sleep 0.05
	done
	echo "kmemtrace $1 did not start tracing: stopped"
	kill -TERM $1 2> /dev/null; wait $1 2> /dev/null; return 1
}

# Call first: records the state; tracefs_check compares at the end.
tracefs_snapshot() { tracefs_state > "$WORK/.tracefs-before"; }
tracefs_check() {
	test_expect_success 'tracefs is left as it was found' '
		tracefs_state > .tracefs-after &&
		while IFS="|" read -r from to; do
			echo "forgiven: trace-cmd expanded the top-level buffer: $from -> $to"
			awk -v f="$from" -v t="$to" "\$0 == f { \$0 = t } 1" .tracefs-before > .b &&
			mv .b .tracefs-before
		done < <(cat .tracefs-expanded 2>/dev/null) &&
		diff -u .tracefs-before .tracefs-after
	'
}

# trace-cmd commands that open tracefs (extract) expand the top-level ring
# buffer on their first use after boot: buffer_size_kb goes from
# "7 (expanded: 1408)" to "1410". Run them through this, so tracefs_check
# forgives exactly that change, made by trace-cmd, and nothing else.
trace_cmd_tracefs() {
	local before after rc=0
	before=$(cat $T/buffer_size_kb)
	trace-cmd "$@" || rc=$?
	after=$(cat $T/buffer_size_kb)
	case $before in
	*"(expanded: "*) [ "$before" = "$after" ] || echo "$before|$after" >> "$WORK/.tracefs-expanded";;
	esac
	return $rc
}

# trace-cmd's own file of kmt-gt (arguments: the rest), from the private
# instance $1 with the kmem events, following the workload's pid and its
# children: `trace-cmd extract` into $2. Uses the xattr file $F.
tc_extract_gt() {
	local inst=$1 out=$2 e
	shift 2
	mkdir $T/instances/$inst || return 1
	for e in kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free; do
		echo 1 > $T/instances/$inst/events/kmem/$e/enable || return 1
	done
	echo 1 > $T/instances/$inst/options/event-fork &&
	rm -f $F && touch $F &&
	sh -c "echo \$\$ > $T/instances/$inst/set_event_pid; exec $WL/kmt-gt $* $F" > /dev/null &&
	echo 0 > $T/instances/$inst/tracing_on &&
	trace_cmd_tracefs extract -B $inst -o $out > /dev/null 2>&1
	rmdir $T/instances/$inst 2>/dev/null || true
	[ -s $out ]
}

# A tmpfs file for the xattr ground-truth workload.
gt_file() {
	local f=/dev/shm/kmt-gt-$TEST_NAME-$$
	rm -f "$f" && touch "$f" && echo "$f"
}

count() { grep -c "$@" || true; }

# A file recorded from the live kernel is whole: check's pages, order and
# losses, not the model's findings. Those can be the kernel's untraced
# traffic (slab bulk paths, sheaves): in a short trace a single sign of it
# cannot be told from a double free, so check calls it an error (CI once
# saw "double_free x1 at rcu_do_batch" in t0140). The model is not run
# here; the tests of the model use files whose allocations are known.
check_whole() {	# file
	$KMT check -q --no-model "$1" && return 0
	$KMT check --no-model "$1" | grep -v "^warning\|^info" | tail -n 12
	return 1
}

# Damaged copies of a trace file (what a bad disk or a cut copy leaves).
# The file offset of chunk N (from 1) of CPU C's compressed data in the
# main buffer of $1, from kmemtrace info and the chunk headers.
chunk_offset() {	# file cpu n
	local off i cs
	off=$($KMT info "$1" | awk -v c="CPU $2 data:" '/^buffer:/ { m = /\(main\)/ }
		m && index($0, c) { sub(/.*offset /, ""); sub(/,.*/, ""); print; exit }')
	[ -n "$off" ] || return 1
	off=$((off + 4))
	for i in $(seq 2 "$3"); do
		cs=$(od -An -tu4 -j $off -N 4 "$1" | tr -d ' ')
		off=$((off + 8 + cs))
	done
	echo $off
}

# Overwrite 16 bytes in the middle of the compressed data of the chunk at
# byte $2 of $1: it no longer inflates.
break_chunk() {	# file offset
	local cs
	cs=$(od -An -tu4 -j $2 -N 4 "$1" | tr -d ' ')
	printf '\245\245\245\245\245\245\245\245\245\245\245\245\245\245\245\245' |
		dd of="$1" bs=1 seek=$(($2 + 8 + cs / 2)) conv=notrunc 2>/dev/null
}

# $1 cut to a fraction $2 (0.994) of its size, into $3.
cut_at() {	# file fraction out
	head -c $(awk -v s=$(stat -c %s "$1") -v f=$2 'BEGIN { printf "%d", s * f }') "$1" > "$3"
}

# The offset of the first section of id $2 in the v7 file $1: after the
# 18 bytes of magic, version, endianness, long and page size, the
# compression's name and version (NUL-terminated) and the options offset,
# sections "u16 id, u16 flags, u32 string, u64 size" follow each other.
section_offset() {	# file id
	local off id size
	off=$((18 + $(head -c 82 "$1" | tail -c 64 | tr '\0' '\n' | sed -n 1,2p | wc -c) + 8))
	while id=$(od -An -tu2 -j $off -N 2 "$1" | tr -d ' ') && [ -n "$id" ]; do
		[ "$id" = "$2" ] && { echo $off; return 0; }
		size=$(od -An -tu8 -j $((off + 8)) -N 8 "$1" | tr -d ' ')
		off=$((off + 16 + size))
	done
	return 1
}
