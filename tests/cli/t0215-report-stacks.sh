#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Slab allocation stacks (record --stack): each call site's allocations by
# the stack of its callers, exact against the ground-truth workload, cut by
# --stack-depth, the same in text, JSON and CSV, absent without --stack;
# --stack-sample 16 gives every hot call site its share of stacks, in
# every run, and the outputs weigh each stack 16 times.
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
	jq -r ".callsites[] | select(.function == \"vmemdup_user\") | .stacks[].frames[0]" st.json > vm &&
	! grep -v setxattr vm
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
	head -1 st.csv | has -x "callsite,function,stack,allocs,frees,bytes_req,bytes_alloc,live_objects,live_bytes" &&
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

# Allocations and the stacks the model gave them, as dump -a shows them
# ("kernel_stack of KIND ptr=..."): "ALLOCS CLAIMED" of slab objects, of
# pages, of vmalloc areas in file $1 (options after it: dump's, e.g. --comm).
claims() {
	f=$1; shift
	$KMT dump -a "$@" "$f" | awk '
		$4 ~ /^(kmalloc|kmem_cache_alloc)$/ { sa++ } $4 == "mm_page_alloc" { pa++ } $4 == "alloc_vmap_area" { va++ }
		$4 == "percpu_alloc_percpu" { ca++ }
		$4 == "kernel_stack" && $6 ~ /^(kmalloc|kmem_cache_alloc)$/ { sc++ }
		$4 == "kernel_stack" && $6 == "mm_page_alloc" { pc++ }
		$4 == "kernel_stack" && $6 == "alloc_vmap_area" { vc++ }
		$4 == "kernel_stack" && $6 == "percpu_alloc_percpu" { cc++ }
		$4 == "kernel_stack" && $6 == "no" { nc++ }
		END { print sa + 0, sc + 0, pa + 0, pc + 0, va + 0, vc + 0, ca + 0, cc + 0, nc + 0 }'
}

test_expect_success 'every allocation of a --stack recording has its stack, in the dump as in the report' '
	set -- $(claims st.dat --comm kmt-gt) &&
	echo "kmt-gt: slab $1 allocated, $2 with a stack; pages $3, $4; vmalloc $5, $6; per-CPU $7, $8; stacks of nothing $9" &&
	[ "$1" -gt 0 ] && [ "$1" = "$2" ] && [ "$3" = "$4" ] && [ "$5" = "$6" ] && [ "$7" = "$8" ] && [ "$9" = 0 ] &&
	r=$(jq "[.callsites[].stacks[]?.allocs] | add" st.json) && a=$(jq "[.callsites[].allocs] | add" st.json) &&
	echo "report: $a slab allocations of kmt-gt, $r with a stack" && [ "$r" = "$a" ]
'

# Call sites with 2,000 allocations or more: "FUNCTION ALLOCS STACKED".
hot_sites() {
	jq -r ".callsites[] | select(.allocs >= 2000) | \"\(.function) \(.allocs) \([.stacks[]?.allocs] | add // 0)\"" "$1"
}

test_expect_success '--stack-sample 16: every hot call site gets 1/32 to 1/8 of its allocations stacked, in each of 3 runs' '
	for run in 1 2 3; do
		$KMT record -q -F --stack-sample 16 -o os$run.dat -- $WL/kmt-gt -g 0 -o 20000 $F > /dev/null &&
		$KMT report --json -n 0 os$run.dat > os$run.json &&
		hot_sites os$run.json > hot$run && cat hot$run &&
		[ $(wc -l < hot$run) -ge 2 ] &&
		grep -q "^getname_flags[.a-z0-9]* " hot$run && grep -q "^alloc_empty_file " hot$run &&
		awk "\$2 < 20000 || \$3 * 32 < \$2 || \$3 * 8 > \$2 { print \"unfair:\", \$0; bad = 1 } END { exit bad }" hot$run ||
		return 1
	done
'

test_expect_success '--stack-sample: the file, the report and the dump agree on what was sampled' '
	$KMT info os1.dat | has "stacks 1 in 16 (time slices)" &&
	[ "$(jq .summary.stack_sample os1.json)" = 16 ] && [ "$(jq .summary.stack_sample st.json)" = 1 ] &&
	$KMT report --sections callsites os1.dat | has "stacks are sampled: about 1 allocation in 16" &&
	r=$(jq "[.callsites[].stacks[]?.allocs] | add // 0" os1.json) &&
	set -- $(claims os1.dat) && d=$2 &&
	echo "stacked slab allocations: report $r, dump $d" && [ "$r" = "$d" ] &&
	$KMT dump -a os1.dat | has " kernel_stack of no allocation$" &&
	$KMT dump os1.dat > plain && ! grep kernel_stack plain
'

# Folded lines whose call site (the last frame) is in FUNCTION: "ALL NOSTACK".
folded_site() {
	awk -v f="$2" '{
		path = substr($0, 1, length($0) - length($NF) - 1); n = split(path, p, ";")
		if (index(p[n], f "+") != 1) next
		all += $NF; if (p[1] == "(no stack)") nost += $NF
	} END { print all + 0, nost + 0 }' "$1"
}

test_expect_success '--stack-sample: folded, pprof and the page count each stack 16 times, never more than its site has' '
	$KMT export -f folded --value objects -o os1.folded os1.dat &&
	while read fn allocs st; do
		set -- $(folded_site os1.folded $fn) &&
		w=$((st * 16 < allocs ? st * 16 : allocs)) &&
		echo "$fn: $allocs allocations, $st stacked; folded $1, (no stack) $2, want $((allocs - w)) or a little more" &&
		[ "$1" = "$allocs" ] && [ "$2" -ge $((allocs - w)) ] && [ "$2" -le $((allocs - w + 64)) ] || return 1
	done < hot1 &&
	$KMT export -f pprof -o os1.pb.gz os1.dat &&
	if command -v go > /dev/null; then
		go tool pprof -raw os1.pb.gz 2> /dev/null > os1.raw &&
		grep -qx "Period: 16" os1.raw && grep -q "stacks sampled, 1 in 16" os1.raw
	fi &&
	$KMT report --html -o os1.html os1.dat && grep -q "stack_sample\":16" os1.html
'

# One estimate everywhere: the text's stack lines count what folded counts
# for the same path (the sampled allocations scaled to their site's).
test_expect_success '--stack-sample: the text report gives each stack the allocations folded gives it' '
	$KMT report --wide -n 0 --stacks 50 --sections callsites os1.dat > os1.txt &&
	tr -s "\n " "  " < os1.txt | has "each stack.s share, allocations and bytes are estimates" &&
	fn=$(head -n 1 hot1 | cut -d" " -f1) &&
	awk -v f="$fn" "/^  [^ ]/ { on = index(\$1, f \"+\") == 1 }
		on && /^ +[0-9.]+% / { gsub(/,/, \"\", \$2); s += \$2 } END { print s + 0 }" os1.txt > text.sum &&
	set -- $(folded_site os1.folded $fn) &&
	echo "$fn: stacks in the text $(cat text.sum), folded $1 of which (no stack) $2" &&
	[ "$(cat text.sum)" = $(($1 - $2)) ]
'

test_expect_success 'a bad --stack-sample is one line and a usage error' '
	for n in 0 3 131072 x; do
		{ $KMT record --stack-sample $n -o bad.dat -- true 2> err; [ $? = 2 ]; } &&
		grep -q "bad stack sample" err && [ ! -e bad.dat ] || return 1
	done
'

tracefs_check
test_done
