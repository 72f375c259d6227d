#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write the hand-made seed inputs of fuzz/corpus/decode and fuzz/corpus/model.

Run from the repository root: python3 fuzz/gen-seeds.py
(fuzz-file's seeds are the real recordings of tests/data/traces.)
The input layouts are described at the top of fuzz/fuzz-decode.c and
fuzz/fuzz-model.c. Every seed stays under 2 KB.
"""
import os
import re
import struct

FORMATS = "tests/data/formats"


def fmt(name, new_id=None, print_fmt=None):
    text = open(os.path.join(FORMATS, name)).read()
    if new_id is not None:
        text = re.sub(r"^ID: \d+", "ID: %d" % new_id, text, flags=re.M)
    if print_fmt is not None:
        text = re.sub(r"^print fmt:.*", "print fmt: " + print_fmt, text, flags=re.M | re.S)
    return text.encode()


def hdr(eid, pid=100):
    """common_type, common_flags, common_preempt_count, common_pid"""
    return struct.pack("<HBBi", eid, 0, 0, pid)


def kmalloc(eid, site, ptr, req, alloc, gfp=0xcc0, node=-1):
    return hdr(eid) + struct.pack("<QQQQQi", site, ptr, req, alloc, gfp, node) + b"\0" * 4


def cache_alloc(eid, site, ptr, name, req, alloc, gfp=0xcc0, node=0):
    # __data_loc name at 24: len << 16 | offset; the string after the fixed part (64)
    s = name.encode() + b"\0"
    rec = hdr(eid) + struct.pack("<QQIIQQQiB", site, ptr, len(s) << 16 | 64, 0, req, alloc, gfp,
                                 node, 1)
    rec = rec.ljust(64, b"\0") + s
    return rec.ljust((len(rec) + 3) // 4 * 4, b"\0")


def records(recs):
    out = b""
    for r in recs:
        assert len(r) <= 255
        out += bytes([len(r)]) + r
    return out


def decode_seed(text, recs=b"", mode=0):
    return struct.pack("<H", len(text)) + text + bytes([mode]) + recs


def page(events, ts=1_000_000, long_size=8, missed=False, size=None):
    """A ring-buffer sub-buffer with small data events (type_len 1..28)."""
    data = b""
    for delta, payload in events:
        payload = payload.ljust((len(payload) + 3) // 4 * 4, b"\0")
        tl = len(payload) // 4
        assert 1 <= tl <= 28
        data += struct.pack("<I", tl | delta << 5) + payload
    commit = len(data) | (1 << 31 if missed else 0)
    head = struct.pack("<Q", ts) + struct.pack("<Q" if long_size == 8 else "<I", commit)
    out = head + data
    if size:
        out = out.ljust(size, b"\0")
    return out


def write(dirname, name, blob):
    assert len(blob) < 2048, (name, len(blob))
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, name), "wb") as f:
        f.write(blob)


def decode_seeds():
    d = "fuzz/corpus/decode"
    site, obj = 0xffffffff81234567, 0xffff888001234500
    short_flags = ('"gfp_flags=%s", __print_flags(REC->gfp_flags, "|", '
                   '{( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | '
                   '(( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))), "GFP_KERNEL"}, '
                   '{( unsigned long)(( gfp_t)((((1UL))) << (8))), "__GFP_ZERO"}, '
                   '{( unsigned long)(( gfp_t)((((1UL))) << (11))), "__GFP_KSWAPD_RECLAIM"}, '
                   '{ 0, ((void *)0) } )')

    # A second kmalloc layout (id 700) next to the fixed 658/659 formats.
    km = fmt("6.18-kmem_kmalloc.format", 700, short_flags)
    recs = records([
        kmalloc(700, site, obj, 100, 128),
        kmalloc(658, site, obj + 0x80, 64, 64, 0x2800, 0),
        cache_alloc(659, site + 8, obj + 0x100, "filp", 232, 256),
        kmalloc(658, 0, 0, 8, 8)[:20],          # cut short
    ])
    write(d, "kmalloc-flags", decode_seed(km, recs))

    write(d, "kfree", decode_seed(fmt("6.18-kmem_kfree.format"), records([
        hdr(657) + struct.pack("<QQ", site, obj),
        hdr(657) + struct.pack("<QQ", site, 0),
    ])))
    write(d, "kfree-be", decode_seed(fmt("6.18-kmem_kfree.format"), records([
        struct.pack(">HBBiQQ", 657, 0, 0, 5, site, obj),
    ]), mode=1))

    s = b"dentry\0"
    cf = hdr(656) + struct.pack("<QQI", site, obj, len(s) << 16 | 28) + s
    bad = hdr(656) + struct.pack("<QQI", site, obj, 200 << 16 | 28) + s
    write(d, "cache-free", decode_seed(fmt("6.18-kmem_kmem_cache_free.format"),
                                       records([cf, bad])))

    st = hdr(4) + struct.pack("<iI", 3, 0) + struct.pack("<3Q", 0xffffffff81100010,
                                                         0xffffffff81300020, 0xffffffff81000000)
    write(d, "kernel-stack", decode_seed(fmt("6.18-ftrace_kernel_stack.format"), records([st])))
    st4 = hdr(4) + struct.pack("<iI", 6, 0) + struct.pack("<6I", *range(6))
    write(d, "kernel-stack-32", decode_seed(fmt("6.18-ftrace_kernel_stack.format"),
                                            records([st4]), mode=2))

    parent, child = b"bash\0", b"make\0"
    fk = hdr(366) + struct.pack("<IiIi", len(parent) << 16 | 24, 10,
                                len(child) << 16 | (24 + len(parent)), 11) + parent + child
    write(d, "fork", decode_seed(fmt("6.18-sched_sched_process_fork.format"), records([fk])))

    write(d, "old-page-alloc", decode_seed(fmt("old-kmem_mm_page_alloc.format"), records([
        hdr(406) + struct.pack("<QIIi", 0xffffea0000040000, 2, 0xcc0, 1) + b"\0" * 4,
    ])))
    write(d, "old-kmalloc-node", decode_seed(fmt("old-kmem_kmalloc_node.format"), b""))
    write(d, "pcpu-free", decode_seed(fmt("6.18-percpu_percpu_free_percpu.format"), records([
        hdr(644) + struct.pack("<QiiQ", 0xffffffff8a000000, 0, 64, 0x3c000),
    ])))
    write(d, "task-rename", decode_seed(fmt("6.18-task_task_rename.format"), b""))

    # header_page as the text; the tail is a sub-buffer in that layout.
    hp = open(os.path.join(FORMATS, "6.18-header_page"), "rb").read()
    pg = page([(10, kmalloc(658, site, obj, 32, 32)),
               (5, cache_alloc(659, site, obj + 64, "kmalloc-cg-64", 40, 64)),
               (7, hdr(657) + struct.pack("<QQ", site, obj))], size=320)
    write(d, "header-page", decode_seed(hp, pg))
    write(d, "empty", b"\0\0")


def ev(op, cpu=0, pid=1, obj=1, site=1, req=64, rule=0, name=0, gfp=1, dt=1, order=0, task=0,
       depth=0, f13=0, f14=0, last=0):
    b = bytes([op, cpu, pid, obj, site, req & 0xff, (req >> 8) & 0xff, rule | name << 2, gfp, dt,
               order, task, depth, f13, f14, last])
    assert len(b) == 16
    return b


def model_seeds():
    d = "fuzz/corpus/model"
    KM, KF, CA, CF, PA, PF, PFB, PCA, PCF, FORK, EXEC, EXIT, REN, NEW, STACK, SPECIAL = range(16)
    LOSS, LOSS_UNKNOWN, SETCOMM, ACCESS = (SPECIAL, SPECIAL | 0x10, SPECIAL | 0x20, SPECIAL | 0x30)

    write(d, "alloc-free", bytes([0x80]) + ev(KM) + ev(KF, site=2) + ev(CA, obj=2, name=1) +
          ev(CF, obj=2, name=1, cpu=1))
    write(d, "misuse", bytes([0x00]) + ev(KM, obj=3) + ev(KM, obj=3) + ev(KF, obj=3) +
          ev(KF, obj=3) + ev(CA, obj=4, name=2) + ev(CF, obj=4, name=3) + ev(KM, obj=1) +
          ev(CF, obj=1, name=1) + ev(CA, obj=2, name=3) + ev(KF, obj=2))
    write(d, "large-twin", bytes([0x00]) + ev(KM, obj=1, req=0x8010, rule=1) +
          ev(KM, obj=1, req=0x8010, rule=1, site=2))
    write(d, "losses", bytes([0x80]) + ev(KM, obj=1) + ev(LOSS, cpu=1, last=5) + ev(KF, obj=1) +
          ev(KM, obj=2) + ev(LOSS_UNKNOWN, cpu=2) + ev(KF, obj=5) + ev(KF, obj=6))
    write(d, "pages-stack", bytes([0x00]) + ev(PA, order=3, gfp=3, obj=5) +
          ev(STACK, depth=5, f13=0, f14=0) + ev(PA, obj=6, cpu=1, order=0x21) +
          ev(STACK, cpu=1, depth=8, f13=1, f14=1) + ev(PF, obj=5, order=3) +
          ev(PFB, obj=6) + ev(PA | 0x10, obj=0) + ev(PA, obj=7))
    write(d, "pcpu", bytes([0x80]) + ev(PCA, obj=1, req=24) + ev(PCA, obj=2) +
          ev(PCF, obj=1) + ev(PCF, obj=3))
    write(d, "comms-filter", bytes([0x01 | 3 << 1 | 0x10]) + ev(FORK, pid=3 | 4 << 3, task=0) +
          ev(EXEC, pid=4 | 4 << 3, task=4) + ev(KM, pid=4) + ev(REN, pid=3 | 3 << 3, task=7) +
          ev(NEW, pid=2 | 5 << 3, task=1) + ev(SETCOMM, pid=6 << 3, task=3) + ev(KM, pid=3, obj=2) +
          ev(EXIT, pid=3 | 3 << 3) + ev(ACCESS, obj=2, last=9))
    write(d, "odd-cpus", bytes([0x80]) + ev(KM, cpu=0xfc) + ev(KF, cpu=0xfd) +
          ev(LOSS, cpu=0xfe, last=1) + ev(KM, cpu=0xff) + ev(PA, cpu=0xfc))
    write(d, "times", bytes([0x80]) + ev(KM, obj=1, dt=0xf0) + ev(KM, obj=2, dt=0xff) +
          ev(KF, obj=1, dt=0xfe) + ev(CA, obj=3, name=5, dt=0) + ev(CA, obj=4, name=6) +
          ev(CF, obj=3, name=4))


if __name__ == "__main__":
    decode_seeds()
    model_seeds()
