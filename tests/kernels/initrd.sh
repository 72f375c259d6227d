#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the initramfs of one guest: busybox and jq (their arch's, from the
# cache), kmemtrace and the ground-truth workloads of a build of that arch
# with the shared libraries they need, the modules the guest loads (the
# output disk's virtio driver, a RAM disk, ext4 and crc32c for the xattr
# file, with what they depend on, in load order, decompressed), and the
# guest's scripts (guest/init, guest/checks.sh).
#
#   tests/kernels/initrd.sh ARCH BUILD KERNEL_DIR OUT.cpio.gz
#
# ARCH amd64 or arm64; BUILD the build directory (build, build-arm64);
# KERNEL_DIR the kernel's folder in the cache (fetch.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ARCH=$1 BUILD=$2 KDIR=$3 OUT=$4
CACHE=${KMT_KERNEL_CACHE:-/var/cache/kmemtrace-kernels}
TOOLS=$CACHE/tools-$ARCH/root
case $ARCH in
amd64) TRIPLET=x86_64-linux-gnu;;
arm64) TRIPLET=aarch64-linux-gnu;;
*) echo "initrd: unknown arch $ARCH" >&2; exit 2;;
esac
# Where a library is looked for: the host's multiarch folders (the arm64
# ones come with the cross build's libraries), then the tools' packages.
LIBDIRS=(/lib/$TRIPLET /usr/lib/$TRIPLET "$TOOLS/lib/$TRIPLET" "$TOOLS/usr/lib/$TRIPLET")
# Modules the guest loads (those built in are not in the package).
MODULES="virtio_pci virtio_mmio virtio_blk brd crc32c_generic ext4"

S=$(mktemp -d "${TMPDIR:-/tmp}/kmt-initrd.XXXXXX")
trap 'rm -rf "$S"' EXIT
mkdir -p "$S"/{bin,sbin,lib,dev,proc,sys,tmp,out,mnt,kmt/workloads,modules}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*Shared library: \[\(.*\)\]/\1/p'; }
interp() { readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p'; }

# Copy a program's libraries into /lib, and its interpreter to its path.
declare -A have
copy_libs() {	# elf
	local l d i
	i=$(interp "$1")
	if [ -n "$i" ] && [ ! -e "$S$i" ]; then
		mkdir -p "$S$(dirname "$i")" && cp -L "$i" "$S$i"
	fi
	for l in $(needed "$1"); do
		[ -z "${have[$l]:-}" ] || continue
		have[$l]=1
		for d in "${LIBDIRS[@]}"; do
			if [ -e "$d/$l" ]; then
				cp -L "$d/$l" "$S/lib/$l" && copy_libs "$S/lib/$l"
				continue 2
			fi
		done
		echo "initrd: $l (needed by $1) not found for $ARCH" >&2
		return 1
	done
}

install_prog() {	# source dest
	cp -L "$1" "$S$2" && chmod 755 "$S$2" && copy_libs "$S$2"
}

install_prog "$TOOLS/bin/busybox" /bin/busybox
install_prog "$TOOLS/usr/bin/jq" /bin/jq
install_prog "$BUILD/kmemtrace" /kmt/kmemtrace
for w in "$BUILD"/workloads/*; do
	[ -x "$w" ] && install_prog "$w" "/kmt/workloads/${w##*/}"
done
cp "$HERE/guest/init" "$S/init" && cp "$HERE/guest/checks.sh" "$S/checks.sh"
chmod 755 "$S/init" "$S/checks.sh"

# The modules, dependencies first (their .modinfo "depends=" strings).
for MDIR in "$KDIR"/root/lib/modules/* "$KDIR"/root/usr/lib/modules/*; do
	[ -e "$MDIR/modules.order" ] && break
done
declare -A mpath loaded
while read -r p; do
	p=${p#kernel/../}
	for z in "" .xz .zst .gz; do [ -e "$MDIR/$p$z" ] && { p=$p$z; break; }; done
	n=${p##*/}; n=${n%%.ko*}; mpath[${n//-/_}]=$p
done < "$MDIR/modules.order"
modfile() {	# path: the module, decompressed, on stdout
	case $1 in
	*.xz) xz -dc "$MDIR/$1";;
	*.zst) zstd -dcq "$MDIR/$1";;
	*.gz) gzip -dc "$MDIR/$1";;
	*) cat "$MDIR/$1";;
	esac
}
load() {	# name
	local n=${1//-/_} d
	[ -z "${loaded[$n]:-}" ] || return 0
	loaded[$n]=1
	[ -n "${mpath[$n]:-}" ] || return 0	# built in
	for d in $(modfile "${mpath[$n]}" | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '); do
		load "$d"
	done
	modfile "${mpath[$n]}" > "$S/modules/$n.ko"
	echo "$n" >> "$S/modules/order"
}
touch "$S/modules/order"
for m in $MODULES; do load "$m"; done

(cd "$S" && find . | cpio -o -H newc --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
