#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
"""Write the seed corpus of the vema_em fuzz target (record format: fuzz_vema_em.c).

Seeds are agent answers of every kind the EM reads (ClassPortInfo, VeswPortInfo
for a missing and for a configured vport, interface MAC list pages, MAC-table
windows) and traps, as answers to the request in flight (op bit 0x04), with step
boundaries (0x80) between rounds. Usage: gen_corpus_vema_em.py OUTDIR
"""
import os
import struct
import sys

MAD = 2048
HDR = 40
STEP = b'\x80'
RELOAD = b'\xc0'


def mad(data):
    """A 2048-byte MAD whose header the target fills in (an answer)."""
    return bytes(HDR) + data + bytes(MAD - HDR - len(data))


def answer(lid, data, clock=0):
    op = (lid - 1) | 0x04 | (clock << 3)
    return bytes([op]) + struct.pack('>H', MAD) + mad(data)


def cpi(trap_lid=0, sl=0):
    d = bytearray(80)
    d[0] = d[1] = 0x80
    struct.pack_into('>H', d, 2, 0xff01)
    struct.pack_into('>I', d, 4, 18)
    struct.pack_into('>I', d, 60, trap_lid)
    d[76] = sl << 3
    return bytes(d)


def la_mac(fabric, vesw, lid):
    return bytes([((fabric & 0x3f) << 2) | 2, ((vesw & 0xf) << 4) | (fabric >> 6),
                  vesw >> 4, lid & 0xff, (lid >> 8) & 0xff, lid >> 16])


def vpi(link=0, vesw=0, fabric=0, lid=0, state=1, digest=0, gen=0):
    d = bytearray(280)
    struct.pack_into('>HH', d, 0, fabric, vesw)
    if vesw:
        struct.pack_into('>H', d, 14, 0x8001)
        struct.pack_into('>I', d, 20, 0xf00000)
    struct.pack_into('>H', d, 148, 1500)
    p = 152
    struct.pack_into('>I', d, p, (lid << 8) if vesw else 0)
    d[p + 4] = link
    if vesw:
        d[p + 8:p + 14] = la_mac(fabric, vesw, lid)
    d[p + 14] = state
    d[p + 15] = state
    struct.pack_into('>HHI', d, p + 16, 2048, 256, digest)
    struct.pack_into('>I', d, p + 28, lid if vesw else 0)
    struct.pack_into('>HH', d, p + 116, gen, gen)
    return bytes(d)


def iface(start, total, n, gen=1, tag=0):
    d = bytearray(struct.pack('>HHHH', start, n, total, gen))
    for i in range(n):
        d += bytes([0, 0, 0x5e, tag, (start + i) >> 8, (start + i) & 0xff])
    return bytes(d)


def mactbl(offset, num, digest):
    return struct.pack('>HHI', offset, num, digest)


def trap(lid, index, opcode):
    d = bytearray(MAD)
    d[0:4] = bytes([0x80, 0x34, 0x80, 0x05])
    struct.pack_into('>H', d, 16, 0x0002)
    d[37:40] = bytes([0x00, 0x06, 0x6a])
    n = HDR
    d[n] = 0x08
    d[n + 1:n + 4] = bytes([0x00, 0x06, 0x6a])
    struct.pack_into('>I', d, n + 8, lid)
    d[n + 32 + 10] = index
    d[n + 32 + 11] = opcode
    return bytes([lid - 1]) + struct.pack('>H', 272) + bytes(d[:272])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    lids = (1, 2, 3)
    bringup = b''.join(answer(l, cpi()) for l in lids) + STEP
    bringup += b''.join(answer(l, cpi(0x100)) for l in lids) + STEP
    bringup += b''.join(answer(l, vpi()) for l in lids) + STEP
    bringup += b''.join(answer(l, vpi(1, 1, 0, l, 3, 0, 1)) for l in lids) + STEP
    seeds = {
        'bringup': bringup,
        'lists': bringup + b''.join(answer(l, iface(0, 400, 333, 1, l)) for l in lids) + STEP
        + b''.join(answer(l, iface(333, 400, 67, 2, l)) for l in lids) + STEP,
        'mac_windows': bringup + answer(1, mactbl(0, 125, 0xffffffff)) + STEP
        + answer(1, mactbl(125, 3, 0x1234)) + STEP,
        'traps': bringup + trap(1, 0, 1) + trap(2, 0, 2) + trap(3, 1, 3) + trap(2, 9, 3) + STEP,
        'timeouts': bringup + answer(2, vpi(1, 1, 0, 2, 3, 7), 15) + STEP
        + answer(1, vpi(), 15) + STEP,
        'reload': bringup + RELOAD + b''.join(answer(l, vpi(2)) for l in lids) + STEP + RELOAD,
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
