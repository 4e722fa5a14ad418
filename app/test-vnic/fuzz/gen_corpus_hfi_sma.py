#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
"""Write the seed corpus of the hfi_sma fuzz target (record format: fuzz_hfi_sma.c).

Seeds are what a subnet manager sends an HFI's SMA: opa-fm's IB-format probe,
LID-routed and directed-route Gets of every attribute, the Set PortInfo
sequence that takes a port from Init to Active, a P_KeyTable Set and an
Aggregate, after a link-up event. Usage: gen_corpus_hfi_sma.py OUTDIR
"""
import os
import struct
import sys

LINK_UP, NEIGH, PRESET = b'\xf0', b'\xf2', b'\xf6'
ATTRS = [0x0010, 0x0011, 0x0015, 0x0016, 0x0017, 0x0018, 0x0031, 0x0032, 0x0082,
         0x0084, 0x0085, 0x0087, 0x008a]


def hdr(cls, method, attr, am, base=0x80, cv=0x80, tid=1):
    return struct.pack('>BBBBHBBQHHI', base, cls, cv, method, 0, 0, 0, tid, attr, 0, am)


def lr(method, attr, am, data=b'', tid=1):
    m = hdr(0x01, method, attr, am, tid=tid) + bytes(8) + data
    return m + bytes(-len(m) % 8)


def dr(method, attr, am, data=b'', tid=1):
    route = struct.pack('>II', 0xffffffff, 0xffffffff) + bytes(64 + 64 + 8)
    m = hdr(0x81, method, attr, am, tid=tid) + bytes(8) + route + data
    return m + bytes(-len(m) % 8)


def rec(mad, op=0):
    return bytes([op]) + struct.pack('>H', len(mad)) + mad


def port_info(state, sm_lid=1):
    d = bytearray(242)
    struct.pack_into('>I', d, 0, 0x10)
    d[19] = state
    struct.pack_into('>I', d, 108, sm_lid)
    return bytes(d)


seeds = {
    'probe': LINK_UP + rec(struct.pack('>BBBBHBBQHHIQHH', 1, 0x81, 1, 1, 0, 0, 0, 7, 0x11,
                                       0, 0, 0, 0xffff, 0xffff) + bytes(256 - 36)),
    'gets_lr': LINK_UP + b''.join(rec(lr(1, a, 0x01000000, tid=i))
                                  for i, a in enumerate(ATTRS)),
    'gets_dr': LINK_UP + b''.join(rec(dr(1, a, 0x01000000, tid=i), op=4)
                                  for i, a in enumerate(ATTRS)),
    'activate': LINK_UP + NEIGH + rec(lr(1, 0x15, 0x01000200)) +
                rec(lr(2, 0x15, 0x01000000, port_info(3))) +
                rec(lr(2, 0x15, 0x01000000, port_info(4))),
    'pkeys': PRESET + LINK_UP + rec(lr(2, 0x16, 0x01000000,
                                       struct.pack('>HHH', 0xffff, 0x7fff, 0x8001) + bytes(58))),
    'aggregate': LINK_UP + rec(lr(1, 0x80, 2, struct.pack('>HHI', 0x10, 0, 0) + bytes(64) +
                                  struct.pack('>HHI', 0x15, 31, 0x01000201) + bytes(248))),
}
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
