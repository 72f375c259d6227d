#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Whose memory is it: the ground-truth workload (tests/workloads/kmt-gt.c)
# in cgroups this test makes (cgroup v2, and the v1 memory controller's
# where it is mounted), moved from one to another halfway, one nested in
# another; exact counts per cgroup and call site, what asked for a memory
# cgroup charge (pipes, System V queues) and what did not (getxattr).
# Every cgroup made here is removed, also on failure or a signal.
. "$(dirname "$0")/lib.sh"
need_tracing
[ -e /proc/self/cgroup ] || test_skip_all "the kernel has no cgroups"
# Where cgroup v2 is mounted (the whole tree, or the unified one of a hybrid layout), and v1 memory.
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
MEM=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
[ -n "$V2" ] || test_skip_all "cgroup v2 is not mounted"
tracefs_snapshot
F=$(gt_file)
A=kmt-test-cg-$$-a B=kmt-test-cg-$$-b
DIRS=("$V2/$A/n" "$V2/$A" "$V2/$B")
[ -n "$MEM" ] && DIRS+=("$MEM/$A/n" "$MEM/$A" "$MEM/$B")
cleanup_cgroups() {
	local d
	for d in "${DIRS[@]}"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	return 0
}
trap 'cleanup_cgroups; rm -f "$F"; cleanup_work' EXIT
trap 'exit 130' INT TERM
G=40 P=13 Q=7 N=11

test_expect_success 'make the cgroups: two side by side, one nested' '
	mkdir "$V2/$A" "$V2/$A/n" "$V2/$B" &&
	if [ -n "$MEM" ]; then mkdir "$MEM/$A" "$MEM/$A/n" "$MEM/$B"; fi
'

# Run "$@" in cgroup $1 (v2, and v1 memory where mounted).
cat > "$WORK/in.sh" <<EOF
#!/bin/sh
cg=\$1; shift
echo \$\$ > "$V2/\$cg/cgroup.procs" || exit 1
if [ -n "$MEM" ]; then echo \$\$ > "$MEM/\$cg/cgroup.procs" || exit 1; fi
exec "\$@"
EOF
MOVE=$V2/$B/cgroup.procs${MEM:+,$MEM/$B/cgroup.procs}

test_expect_success 'record: one workload in A moved to B halfway, one in A/n' '
	cat > wl.sh <<-EOF &&
	sh $WORK/in.sh $A $WL/kmt-gt -g $G -P $P -q $Q -M $MOVE $F > out1 &&
	sh $WORK/in.sh $A/n $WL/kmt-gt -g $N $F > out2
	EOF
	$KMT record -q -o cg.dat -- sh wl.sh &&
	sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out1 > pid1 && [ -s pid1 ] &&
	sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" out2 > pid2 && [ -s pid2 ]
'

test_expect_success 'info says the cgroups were recorded, moves traced' '
	$KMT info cg.dat > info &&
	grep "^cgroups: " info | has "tasks at the start (cgroup v2.*), moves traced (cgroup_attach_task)"
'

# "cgroup,callsite" rows of cgroup_sites: "CGROUP FUNCTION ALLOCS BYTES ACCOUNTED UNACCOUNTED".
sites() {
	$KMT report --csv cgroup_sites "$@" cg.dat > sites.csv &&
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ for (i = 1; i <= NF; i++) gsub(/"/, "", $i);
		  print $c["cgroup"], $c["function"], $c["allocs"], $c["bytes_alloc"], $c["accounted_bytes"],
			$c["unaccounted_bytes"], $c["memcg"] }' sites.csv
}
row() {	# CGROUP FUNCTION: its call sites in the function summed, the memcg of the first
	awk -v g="$1" -v f="$2" '$1 == g && $2 == f { n += $3; b += $4; a += $5; u += $6; if (!m) m = $7; k = 1 }
		END { if (k) print g, f, n, b, a, u, m }' sites.out
}

test_expect_success 'exact per cgroup and call site: getxattr in A, then in B, and in A/n' '
	sites > sites.out &&
	row /$A do_getxattr | has -x "/$A do_getxattr $((G / 2)) $((G / 2 * 2048)) 0 $((G / 2 * 2048)).*" &&
	row /$B do_getxattr | has -x "/$B do_getxattr $((G - G / 2)) $(((G - G / 2) * 2048)) 0 $(((G - G / 2) * 2048)).*" &&
	row /$A/n do_getxattr | has -x "/$A/n do_getxattr $N $((N * 2048)) 0 $((N * 2048)).*"
'

test_expect_success 'charged: pipes (2 kmallocs each) and System V queues, all accounted, in B only' '
	row /$B alloc_pipe_info > pipes && cat pipes &&
	read -r cg fn n bytes acct unacct mcg < pipes && [ "$n" = $((2 * P)) ] && [ "$acct" = "$bytes" ] &&
	[ "$unacct" = 0 ] &&
	row /$B newque > q && cat q && read -r cg fn n bytes acct unacct mcg < q &&
	[ "$n" = $Q ] && [ "$acct" = "$bytes" ] && [ "$unacct" = 0 ] &&
	[ -z "$(row /$A alloc_pipe_info)" ] && [ -z "$(row /$A newque)" ]
'

test_expect_success 'v1 memory: each row names the memory cgroup the task was in' '
	if [ -z "$MEM" ]; then echo "no v1 memory controller: nothing to check"; exit 0; fi &&
	row /$A do_getxattr | has -x ".* /$A" && row /$B newque | has -x ".* /$B" &&
	row /$A/n do_getxattr | has -x ".* /$A/n"
'

# A row per (cgroup, memcg): between its writes to the two cgroup.procs a task is in one and not yet the other.
test_expect_success 'the CGROUPS table: one task in each, its counts the sum of its call sites' '
	$KMT report --csv cgroups cg.dat > cg.csv && cat cg.csv &&
	awk -F, "NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i; next }
		{ gsub(/\"/, \"\"); print \$c[\"cgroup\"], \$c[\"memcg\"], \$c[\"tasks\"], \$c[\"allocs\"],
			\$c[\"bytes_alloc\"], \$c[\"accounted_bytes\"], \$c[\"unaccounted_bytes\"],
			\$c[\"unknown_bytes\"] }" cg.csv > cg.out &&
	for g in /$A /$B /$A/n; do
		m=${MEM:+$g} &&
		awk -v g=$g -v m="$m" "\$1 == g && (\$2 == m || (m == \"\" && NF == 7))" cg.out > r && cat r &&
		read -r x y tasks rest < r && [ -n "$m" ] || read -r x tasks rest < r &&
		[ "$tasks" = 1 ] || { echo "$g: $tasks tasks"; exit 1; }
		awk -v g=$g "\$1 == g { a += \$4; b += \$5; c += \$6; d += \$7; e += \$8 }
			END { print a, b, c, d, e }" cg.out > t &&
		awk -v g=$g "\$1 == g { a += \$3; b += \$4; c += \$5; d += \$6 } END { print a, b, c, d, 0 }" \
			sites.out > s && diff -u t s || exit 1
	done
'

test_expect_success '-G: a cgroup and its descendants, by the v2 path or the memory one' '
	sites -G 0::/$A > ga.out && awk "{ print \$1 }" ga.out | sort -u > cgs &&
	printf "%s\n" /$A /$A/n | diff -u - cgs &&
	awk "\$2 == \"do_getxattr\" { n += \$3 } END { print n }" ga.out | has -x $((G / 2 + N)) &&
	sites -G /$A/n > gn.out && awk "{ print \$1 }" gn.out | sort -u | has -x /$A/n &&
	if [ -n "$MEM" ]; then
		sites -G memory:/$B > gm.out && awk "{ print \$1 }" gm.out | sort -u | has -x /$B
	fi &&
	$KMT report --sections summary -G /$B cg.dat > gsum && has "^  slab allocations" gsum
'

test_expect_success 'the same tables on any number of threads (-j 1, 2, 4, 8: the model in shards)' '
	for j in 1 2 4 8; do
		$KMT report -j $j --csv cgroup_sites cg.dat > s$j && $KMT report -j $j --csv cgroups cg.dat > c$j &&
		$KMT report -j $j --json --sections cgroups cg.dat > j$j || exit 1
	done &&
	for j in 2 4 8; do cmp s1 s$j && cmp c1 c$j && cmp j1 j$j || exit 1; done
'

test_expect_success '-G of a cgroup nobody was in: said, nothing reported' '
	$KMT report --sections cgroups -G /nosuch-cgroup cg.dat > out 2> err &&
	has "no task in cgroup ./nosuch-cgroup. is in the trace" err
'

test_expect_success 'top: the cgroup view (g) and -G, live' '
	$KMT top --json -i 0.3 --view cgroup -r 0 -- sh $WORK/in.sh $A $WL/kmt-gt -g $G $F > top.json &&
	has "\"view\":\"cgroup\"" top.json && grep -o "\"name\":\"[^\"]*\"" top.json | sort -u > names &&
	cat names && has "\"name\":\"/$A[\" ]" names &&
	$KMT top --json -i 0.3 --view cgroup -r 0 -G /$B -- sh $WORK/in.sh $A $WL/kmt-gt -g $G $F > topb.json &&
	! grep -o "\"name\":\"[^\"]*\"" topb.json | has "/$A"
'

test_expect_success 'record --cgroup: its tasks at the start and those moved in later, no other' '
	sh $WORK/in.sh $A $WL/kmt-gt -S 1500 -g 30 $F > bg.out & bg=$! &&
	for i in $(seq 50); do grep -qx $bg "$V2/$A/cgroup.procs" && break; sleep 0.05; done &&
	$KMT record -q --cgroup /$A -o rc.dat -- sh -c "$WL/kmt-gt -g 10 $F > o1 &&
		sh $WORK/in.sh $A $WL/kmt-gt -S 300 -g 20 $F > o2 && sleep 1.5" &&
	wait $bg && cat bg.out o1 o2 &&
	$KMT dump rc.dat | awk "\$4 == \"kmalloc\" && \$5 ~ /^do_getxattr/ { print \$3 }" | sort | uniq -c > got &&
	cat got && sed -n "s/^kmt-gt pid \([0-9]*\):.*/\1/p" bg.out o2 > want &&
	[ $(wc -l < got) = 2 ] &&
	grep -q " 30 kmt-gt-$(sed -n 1p want)\$" got && grep -q " 20 kmt-gt-$(sed -n 2p want)\$" got &&
	$KMT info rc.dat | has "^settings: .*tasks: only cgroup /$A and below it (--cgroup" &&
	$KMT report --csv cgroup_sites rc.dat | awk -F, "\$4 == \"\\\"do_getxattr\\\"\" { print \$1, \$5 }" > gx &&
	cat gx && has -x "\"/$A\" 50" gx
'

test_expect_success 'record --cgroup of a cgroup that does not exist: one line, nothing made' '
	test_expect_code 1 $KMT record --cgroup /kmt-test-no-such-$$ -o no.dat -- true 2> err && cat err &&
	[ $(wc -l < err) = 1 ] && has "no cgroup ./kmt-test-no-such-$$. (no directory " err &&
	! ls no.dat* 2> /dev/null
'

# A container's cgroup as docker's systemd driver names it: the container column, and pprof's label.
D=kmt-test-cg-$$-sys/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope
DIRS+=("$V2/$D" "$V2/${D%/*}")
test_expect_success 'a container: docker-<id>.scope named in the container column and pprof labels' '
	mkdir -p "$V2/$D" &&
	$KMT record -q -o ct.dat -- sh -c "echo \$\$ > $V2/$D/cgroup.procs && exec $WL/kmt-gt -g 5 $F > /dev/null" &&
	rmdir "$V2/$D" "$V2/${D%/*}" &&
	$KMT report --csv cgroups ct.dat > ct.csv && cat ct.csv &&
	grep "^\"/$D\"" ct.csv | has ",\"docker:0123456789ab\"," &&
	$KMT export -f pprof -o ct.pb.gz ct.dat && go tool pprof -raw ct.pb.gz > raw 2>&1 &&
	has "container:\[docker:0123456789ab\]" raw
'

test_expect_success 'a file without the cgroups record: "not recorded", never zeros; -G refused' '
	cp $KMT_TESTDATA/traces/real-v7-zstd.dat old.dat &&
	$KMT info old.dat | has "^cgroups:    not recorded" &&
	$KMT report --sections cgroups old.dat > t && has "not recorded" t &&
	$KMT report --json --sections cgroups old.dat | has "\"cgroups\": null" &&
	test_expect_code 1 $KMT report --csv cgroups old.dat 2> err && has "not recorded" err &&
	test_expect_code 1 $KMT report -G /x old.dat 2> err && has "no record of the tasks. cgroups" err
'

test_expect_success 'the cgroups this test made are removed' '
	cleanup_cgroups && for d in "${DIRS[@]}"; do [ ! -e "$d" ] || { echo "$d is left"; exit 1; }; done
'

tracefs_check
test_done
