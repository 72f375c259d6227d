#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The kernel matrix: boot Debian's stock kernels (tests/kernels/kernels.list)
# under qemu with kmemtrace, run the guest's checks (guest/checks.sh) in
# each, analyse each guest's trace files again here, on x86-64, and end
# with a table kernel x check and the line "N passed, N failed".
#
#   tests/kernels/run.sh [ID...]          (root; make kernels)
#
#   KMT_BUILD            the x86-64 build (build): kmemtrace and workloads
#   KMT_BUILD_ARM64      the arm64 cross build (build-arm64)
#   KMT_KERNEL_CACHE     where the kernels are kept (/var/cache/kmemtrace-kernels)
#   KMT_MATRIX_OUT       each guest's console, files and logs ($KMT_BUILD/kernels)
#   KMT_BOOT_TIMEOUT     seconds a guest may take in all (600)
#   KMT_CHECK_TIMEOUT    seconds one of its checks may take (120)
#   KMT_CHECKS           "gt check ...": only those of the guest's checks
#   KMT_SETTLE           seconds a ground-truth recording goes on after the
#                        workload, for the frees the kernel defers to RCU (1)
#   KMT_TCG_THREAD       qemu's TCG threads: single (default) or multi. With
#                        multi, Debian's 6.1 x86-64 guest locked up in 1 run of
#                        3 (a CPU stuck at the mm_page_alloc tracepoint's jump
#                        label in __alloc_pages while events were switched on:
#                        code patched under another vCPU); never with single
#   KMT_MATRIX_SABOTAGE  1: every check expects 1000 more than it should, and
#                        must fail (a check that cannot fail is worthless)
#   KMT_SAVE_FORMATS     1: copy each kernel's event formats to
#                        tests/data/formats/ID/
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD HERE=$PWD/tests/kernels
B=${KMT_BUILD:-build} B64=${KMT_BUILD_ARM64:-build-arm64}
case $B in /*) ;; *) B=$ROOT/$B;; esac
case $B64 in /*) ;; *) B64=$ROOT/$B64;; esac
CACHE=${KMT_KERNEL_CACHE:-/var/cache/kmemtrace-kernels}
OUTD=${KMT_MATRIX_OUT:-$B/kernels}
TIMEOUT=${KMT_BOOT_TIMEOUT:-600}
SAB=${KMT_MATRIX_SABOTAGE:-0}
CMDLINE="kmt.sabotage=$SAB kmt.timeout=${KMT_CHECK_TIMEOUT:-120}${KMT_CHECKS:+ kmt.checks=${KMT_CHECKS// /,}}${KMT_SETTLE:+ kmt.settle=$KMT_SETTLE}"
export KMT_KERNEL_CACHE=$CACHE
unset COLUMNS

# The rows: the boot, the guest's checks in its order, the host's.
GUEST_CHECKS=$(sed -n 's/^CHECKS="\(.*\)"$/\1/p' "$HERE/guest/checks.sh")
ROWS="boot ${KMT_CHECKS:-$GUEST_CHECKS} host"

declare -A arch res secs
ids=()
while read -r id a _; do
	case $id in ''|'#'*) continue;; esac
	[ $# -eq 0 ] || [[ " $* " == *" $id "* ]] || continue
	ids+=("$id") arch[$id]=$a
done < "$HERE/kernels.list"
[ ${#ids[@]} -gt 0 ] || { echo "no kernel named $* in tests/kernels/kernels.list"; echo "0 passed, 1 failed"; exit 1; }

echo "kernel matrix: ${ids[*]}"
echo "kernels cached in $CACHE; guests' files in $OUTD"
[ "$SAB" = 0 ] || echo "SABOTAGE: every check expects 1000 more than it should; every cell but boot must FAIL"
"$HERE/fetch.sh" "${ids[@]}" || echo "fetch: some kernels could not be fetched (their column fails)"

# ---- the host's check: the guest's files analysed here.

# report --json of FILE here, with OPTIONS, against the guest's JSON:
# the summary, the call sites' counts and the caches must be the same.
same_report() {	# guest-json file [option...]
	local gj=$1 f=$2 filt
	shift 2
	filt='{summary: .summary, callsites: [.callsites[] | [.callsite, .allocs, .frees, .bytes_req, .bytes_alloc, .live_objects]],
		caches: [.caches[] | [.name, .allocs, .frees]]}'
	# (A file report calls damaged exits 1 after its whole output: the
	# guest's checks fail for that; here the numbers are compared.)
	"$B/kmemtrace" report --json "$@" "$f" > "$f.host.json" 2> "$f.host.err" ||
		[ $? -eq 1 ] && [ -s "$f.host.json" ] || { cat "$f.host.err"; return 1; }
	jq -S "$filt | .summary.allocs += $((SAB * 1000))" "$f.host.json" > "$f.host.cmp" &&
		jq -S "$filt" "$gj" > "$f.guest.cmp" || return 1
	if cmp -s "$f.host.cmp" "$f.guest.cmp"; then
		echo "${f##*/} $*: the same report here ($(jq .summary.allocs "$gj") allocations, $(jq .summary.frees "$gj") frees)"
	else
		echo "${f##*/} $*: report here differs from the guest's:"
		diff "$f.guest.cmp" "$f.host.cmp" | head -n 20
		return 1
	fi
}

# Run a command whose exit 1 (a file it calls damaged, after its whole
# output) the guest's checks already fail for: its warnings are not shown.
ok1() { "$@" 2> /dev/null || [ $? -eq 1 ]; }

host_check() {	# id: prints the log, returns 0 if every file agrees
	local o=$OUTD/$1/out n pid ok=0 seen=0 e g h
	for n in gt gtF gtS gtP; do
		[ -s "$o/$n.dat" ] && [ -s "$o/$n.all.json" ] || continue
		seen=$((seen + 1))
		same_report "$o/$n.all.json" "$o/$n.dat" || ok=1
		pid=$(sed -n 's/^kmt-gt pid \([0-9]*\):.*/\1/p' "$o/$n.out")
		[ -n "$pid" ] && [ -s "$o/$n.json" ] && { same_report "$o/$n.json" "$o/$n.dat" -p "$pid" || ok=1; }
	done
	if [ -s "$o/gt.folded" ]; then
		pid=$(sed -n 's/^kmt-gt pid \([0-9]*\):.*/\1/p' "$o/gt.out")
		ok1 "$B/kmemtrace" export -f folded --value objects -p "$pid" -o "$o/gt.host.folded" "$o/gt.dat" &&
			cmp "$o/gt.folded" "$o/gt.host.folded" && echo "gt.folded: the same bytes here" || ok=1
	fi
	if [ -s "$o/gt.pb.gz" ]; then
		(cd "$o" && ok1 "$B/kmemtrace" export -f pprof -o gt.host.pb.gz gt.dat) &&
			cmp "$o/gt.pb.gz" "$o/gt.host.pb.gz" && echo "gt.pb.gz: the same bytes here" || ok=1
	fi
	if [ -s "$o/sys.dat" ] && [ -s "$o/sys.check" ]; then
		"$B/kmemtrace" check "$o/sys.dat" > "$o/sys.host.check" 2>&1
		g=$(tail -n 1 "$o/sys.check" | sed 's/^[^ ]*: //') h=$(tail -n 1 "$o/sys.host.check" | sed 's/^[^ ]*: //')
		echo "sys.dat: guest: $g; here: $h"
		[ "$g" = "$h" ] || ok=1
	fi
	[ $seen -gt 0 ] || { echo "no trace file of the guest's to analyse"; return 1; }
	return $ok
}

# ---- one guest

boot() {	# id
	local id=$1 d=$OUTD/$1 k=$CACHE/$1 bd qemu
	rm -rf "$d" && mkdir -p "$d"
	case ${arch[$id]} in
	amd64)	bd=$B
		qemu=(qemu-system-x86_64 -accel tcg,thread=${KMT_TCG_THREAD:-single} -cpu max -append
		      "console=ttyS0 panic=-1 softlockup_panic=1 loglevel=5 $CMDLINE");;
	arm64)	bd=$B64
		qemu=(qemu-system-aarch64 -M virt -accel tcg,thread=${KMT_TCG_THREAD:-single} -cpu max,pauth-impdef=on -append
		      "console=ttyAMA0 panic=-1 softlockup_panic=1 loglevel=5 $CMDLINE");;
	esac
	[ -s "$k/vmlinuz" ] || { echo "not fetched"; return 1; }
	[ -x "$bd/kmemtrace" ] || { echo "no $bd/kmemtrace (make CROSS_COMPILE=aarch64-linux-gnu- O=build-arm64 deps all)"; return 1; }
	"$HERE/initrd.sh" "${arch[$id]}" "$bd" "$k" "$d/initrd.gz" || { echo "initramfs failed"; return 1; }
	truncate -s 1G "$d/out.img"
	timeout -k 10 "$TIMEOUT" "${qemu[@]}" -smp 2 -m 2048 -display none -monitor none -no-reboot \
		-serial "file:$d/console.log" -kernel "$k/vmlinuz" -initrd "$d/initrd.gz" \
		-drive "file=$d/out.img,format=raw,if=none,id=out" -device virtio-blk-pci,drive=out -nic none \
		> "$d/qemu.log" 2>&1
	local rc=$?
	[ $rc -eq 124 ] && echo "timed out after $TIMEOUT s"
	tr -d '\r' < "$d/console.log" > "$d/console.txt"
	mkdir -p "$d/out" && tar -xf "$d/out.img" -C "$d/out" 2> /dev/null
	grep -q '^KMT-BOOT ' "$d/console.txt" && grep -q '^KMT-END ' "$d/console.txt" && return 0
	echo "qemu exit $rc; the console's end:"
	tail -n 25 "$d/console.txt"
	cat "$d/qemu.log"
	return 1
}

for id in "${ids[@]}"; do
	d=$OUTD/$id
	echo
	echo "=== $id: $(cat "$CACHE/$id/package" 2>/dev/null || echo 'not fetched')"
	t0=$(date +%s)
	if log=$(boot "$id" 2>&1); then
		res[$id|boot]=ok
	else
		res[$id|boot]=FAIL
	fi
	secs[$id]=$(($(date +%s) - t0))
	[ -n "$log" ] && printf '%s\n' "$log" | sed 's/^/    /'
	sed -n 's/^KMT-BOOT /  boot: /p; s/^KMT-NOTE /  note: /p; s/^KMT-OUT /  out: /p; s/^KMT-END /  end: /p' \
		"$d/console.txt" 2> /dev/null
	# The results: the guest's file of them if it wrote its disk, else the
	# console's lines (a guest that died wrote no disk).
	r=$d/out/results
	[ -s "$r" ] || r=$d/console.txt
	while read -r _ c s t; do
		res[$id|$c]=$s
		printf '  %-4s %-10s %6s s\n' "$s" "$c" "$t"
		awk -v c="$c" '$1 == "KMT-CHECK" { on = ($2 == c) } on && $1 == "KMT-DETAIL" && $2 == c {
			sub(/^KMT-DETAIL [^ ]* /, "         "); print }' "$r"
		[ "$s" = ok ] || awk -v c="$c" '$1 == "KMT-CHECK" { on = ($2 == c) } on && $1 == "KMT-LOG" && $2 == c {
			sub(/^KMT-LOG [^ ]* /, "       | "); print }' "$r"
	done < <(grep '^KMT-CHECK ' "$r" 2> /dev/null)
	if [ "${res[$id|boot]}" = ok ]; then
		if hl=$(host_check "$id" 2>&1); then res[$id|host]=ok; else res[$id|host]=FAIL; fi
		printf '  %-4s %-10s (the guest'"'"'s files, analysed on this x86-64 host)\n' "${res[$id|host]}" host
		printf '%s\n' "$hl" | sed 's/^/         /'
	fi
	echo "  $id: ${secs[$id]} s"
	if [ "${KMT_SAVE_FORMATS:-0}" = 1 ] && [ -d "$d/out/formats" ]; then
		rm -rf "$ROOT/tests/data/formats/$id" && cp -r "$d/out/formats" "$ROOT/tests/data/formats/$id" &&
			cat "$CACHE/$id/package" > "$ROOT/tests/data/formats/$id/package" &&
			echo "  formats saved in tests/data/formats/$id"
	fi
done

# ---- the table
pass=0 fail=0 skip=0
echo
printf '%-10s' check
for id in "${ids[@]}"; do printf ' %-15s' "${id#debian-}"; done
echo
for r in $ROWS; do
	printf '%-10s' "$r"
	for id in "${ids[@]}"; do
		s=${res[$id|$r]:-FAIL}
		# A guest that did not boot ran nothing: its cells fail.
		case $s in ok) pass=$((pass + 1));; skip) skip=$((skip + 1));; *) s=FAIL; fail=$((fail + 1));; esac
		printf ' %-15s' "$s"
	done
	echo
done
printf '%-10s' "time"
for id in "${ids[@]}"; do printf ' %-15s' "${secs[$id]} s"; done
echo
echo "(this machine's own kernel is not in the table: tests/run.sh, make check, runs there)"
[ "$skip" -gt 0 ] && echo "$skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
