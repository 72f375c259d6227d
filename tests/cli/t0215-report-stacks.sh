#!/usr/bin/env bash
# Slab allocation stacks (record --stack): each call site's allocations by
# the stack of its callers, exact against the ground-truth workload, cut by
# --stack-depth, the same in text, JSON and CSV, absent without --stack;
# --stack-sample 8 keeps exactly the stacks of allocations whose page
# number has its low 3 bits zero.
. "$(dirname "$0")/lib.sh"
need_tracing
command -v jq > /dev/null || test_skip_all "jq is not installed"
tracefs_snapshot
F=$(gt_file)
trap 'rm -f "$F"; cleanup_work' EXIT
G=60 X=9 L=2

test_expect_success 'record the ground truth with stacks, and without' '
	$KMT record -q --stack -o st.dat -- $WL/kmt-gt -g $G -x $X -l $L $F > /dev/null &&
	$KMT record -q -o plain.dat -- $WL/kmt-gt -g 5 $F > /dev/null &&
	$KMT report --json --comm kmt-gt st.dat > st.json &&
	$KMT report --json --comm kmt-gt --stack-depth 1 st.dat > d1.json
'

# Sum of a stacks field over the call sites of one function.
stacks() { jq "[.callsites[] | select(.function == \"$2\") | .stacks[].$3] | add // 0" $1; }
want() { v=$(stacks $1 $2 $3); echo "$2 stacks $3 = $v (want $4)"; [ "$v" = "$4" ]; }

test_expect_success 'do_getxattr: its stacks hold every allocation, bytes, frees' '
	want st.json do_getxattr allocs $((G + L)) &&
	want st.json do_getxattr frees $((G + L)) &&
	want st.json do_getxattr bytes_req $((G * 1337 + L * 20000)) &&
	want st.json do_getxattr bytes_alloc $((G * 2048 + L * 32768)) &&
	want st.json do_getxattr live_objects 0
'

test_expect_success 'the callers are getxattr'"'"'s, from the system call; setxattr'"'"'s keep theirs live' '
	jq -r ".callsites[] | select(.function == \"do_getxattr\") | .stacks[] | .frames | \"\(.[0]) \(.[-1])\"" \
		st.json | sort -u > ends && cat ends &&
	[ -s ends ] && ! grep -v "^[a-z_.]*getxattr[a-z_.]*+0x[0-9a-f]* entry_SYSCALL" ends &&
	want st.json simple_xattr_alloc allocs $X && want st.json simple_xattr_alloc live_objects $X &&
	jq -r ".callsites[] | select(.function == \"vmemdup_user\") | .stacks[].frames[0]" st.json |
		grep -v setxattr | { ! grep .; }
'

test_expect_success 'every call site: its stacks add up to its allocations, frees and live objects' '
	jq -c "[.callsites[] | select(.allocs > 0) | select(.allocs != ([.stacks[].allocs] | add) or
		.frees != ([.stacks[].frees] | add) or .live_objects != ([.stacks[].live_objects] | add) or
		.bytes_alloc != ([.stacks[].bytes_alloc] | add)) | .callsite]" st.json > bad &&
	cat bad && [ "$(cat bad)" = "[]" ] &&
	[ "$(jq "[.callsites[].stacks[].allocs] | add" st.json)" = "$(jq .summary.allocs st.json)" ]
'

test_expect_success '--stack-depth 1: one caller per stack, the same totals, fewer or as many stacks' '
	[ "$(jq "[.callsites[].stacks[].frames | length] | max" d1.json)" = 1 ] &&
	want d1.json do_getxattr allocs $((G + L)) &&
	[ "$(jq "[.callsites[].stacks[]] | length" d1.json)" -le "$(jq "[.callsites[].stacks[]] | length" st.json)" ] &&
	[ "$(jq "[.callsites[].stacks[].allocs] | add" d1.json)" = "$(jq .summary.allocs st.json)" ]
'

test_expect_success 'CSV callsite_stacks: the same rows and numbers as JSON' '
	$KMT report --comm kmt-gt --csv callsite_stacks st.dat > st.csv &&
	head -1 st.csv | grep -qx "callsite,function,stack,allocs,frees,bytes_req,bytes_alloc,live_objects,live_bytes" &&
	[ $(($(wc -l < st.csv) - 1)) = "$(jq "[.callsites[].stacks[]] | length" st.json)" ] &&
	awk -F, "NR > 1 && \$2 == \"\\\"do_getxattr\\\"\" { n += \$(NF - 5) } END { print n }" st.csv > n &&
	[ "$(cat n)" = $((G + L)) ]
'

test_expect_success 'text: the top stacks under each call site, --stacks N of them' '
	$KMT report --comm kmt-gt --sections callsites -n 0 st.dat > st.txt &&
	grep -q "under each, its top stacks" st.txt &&
	awk "/^  do_getxattr\\+/ { getline; print; exit }" st.txt | grep -E "^ +[0-9.]+% +[0-9,]+ .* <- [a-z_.]*getxattr" &&
	$KMT report --comm kmt-gt --sections callsites -n 0 --stacks 0 st.dat > none.txt &&
	! grep -q " <- " none.txt &&
	$KMT report --comm kmt-gt --sections callsites -n 0 --stacks 1 st.dat > one.txt &&
	[ $(grep -c " <- " one.txt) -le $(grep -c "^  [a-z_]" one.txt) ]
'

test_expect_success 'without --stack: no stacks anywhere' '
	$KMT report --json plain.dat > plain.json &&
	[ "$(jq "[.callsites[] | select(has(\"stacks\"))] | length" plain.json)" = 0 ] &&
	$KMT report plain.dat | { ! grep -q "under each, its top stacks"; }
'

test_expect_success 'a bad --stack-depth is one line and a usage error' '
	{ $KMT report --stack-depth 0 st.dat 2> err; [ $? = 2 ]; } &&
	[ $(wc -l < err) -le 2 ] && grep -q "bad stack depth" err
'

# Alloc events of kmt-gt: "KIND SAMPLED STACKED" per line, SAMPLED from
# the address (bits 12-14 of a pointer, 0-2 of a pfn). A stack is the
# allocation's just before it; or, when an interrupt's events came between
# (an RCU callback's frees, or an allocation with its own stack), in the
# same task, 8 events back at most: a page allocated with only frees since,
# or else the newest slab allocation waiting whose call site is one of its
# frames. Those still waiting are printed at the end.
sampled() {
	$KMT dump -a --comm kmt-gt "$1" | awk '
	function resolve(   j, i) {
		instack = 0
		for (j = n; j >= 1 && nev - seq[j] <= 8; j--)
			if ((j == n && seq[j] == nev) ||
			    (j == n && site[j] == "" && seq[j] == lastalloc && task[j] == stask) ||
			    (site[j] != "" && task[j] == stask && index(frames " ", " " site[j] " ")))
				break
		if (j < 1 || nev - seq[j] > 8)
			return
		print kind[j], want[j], 1
		for (i = j + 1; i <= n; i++)
			print kind[i], want[i], 0
		n = j - 1
	}
	/^\t/ { if (instack) frames = frames " " $2; next }
	/^#/ { next }
	instack { resolve() }
	/ kernel_stack/ { instack = 1; frames = ""; stask = $3; next }
	{ nev++ }
	/ (kmalloc|kmem_cache_alloc|mm_page_alloc|percpu_alloc_percpu|alloc_vmap_area) / &&
	  match($0, /(ptr|pfn|addr)=0x[0-9a-f]+/) {
		f = substr($0, RSTART, RLENGTH); h = substr(f, index(f, "x") + 1)
		d = substr(h, length(h) - (f ~ /^pfn/ ? 0 : 3), 1)
		n++; kind[n] = $4; want[n] = ((index("0123456789abcdef", d) - 1) % 8 == 0); seq[n] = nev
		task[n] = $3; lastalloc = nev
		site[n] = $5 ~ /\+0x/ ? $5 : ""
	}
	END {
		if (instack) resolve()
		for (i = 1; i <= n; i++) print kind[i], want[i], 0
	}'
}

test_expect_success '--stack-sample 8: a stack exactly where the address says, and the report says so' '
	$KMT record -q --stack-sample 8 -o ss.dat -- $WL/kmt-gt -g $G $F > /dev/null &&
	$KMT info ss.dat | grep -q "stacks 1 in 8" &&
	sampled ss.dat > ss.rows && sort ss.rows | uniq -c &&
	[ "$(awk "\$2 != \$3" ss.rows | wc -l)" = 0 ] &&
	[ "$(awk "\$2 == 0" ss.rows | wc -l)" -gt 0 ] &&
	[ "$(awk "\$1 == \"kmem_cache_alloc\" || \$1 == \"kmalloc\"" ss.rows | wc -l)" -gt 20 ] &&
	sampled st.dat | awk "\$3 != 1" > all.miss && echo "without a stack in st.dat: $(wc -l < all.miss)" &&
	[ ! -s all.miss ] &&
	$KMT report --json --comm kmt-gt ss.dat > ss.json &&
	[ "$(jq .summary.stack_sample ss.json)" = 8 ] && [ "$(jq .summary.stack_sample st.json)" = 1 ] &&
	r=$(jq "[.callsites[].stacks[]?.allocs] | add // 0" ss.json) &&
	d=$(awk "\$3 == 1 && (\$1 == \"kmalloc\" || \$1 == \"kmem_cache_alloc\")" ss.rows | wc -l) &&
	echo "stacked slab allocations: report $r, dump $d" && [ "$r" = "$d" ] &&
	$KMT report --comm kmt-gt --sections callsites ss.dat | grep -q "stacks are sampled: only allocations in 1 slab page of 8"
'

test_expect_success 'a bad --stack-sample is one line and a usage error' '
	for n in 0 3 131072 x; do
		{ $KMT record --stack-sample $n -o bad.dat -- true 2> err; [ $? = 2 ]; } &&
		grep -q "bad stack sample" err && [ ! -e bad.dat ] || return 1
	done
'

tracefs_check
test_done
