#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
"""Write the seed corpus of the mgmt_rx fuzz target (input format: fuzz_mgmt_rx.c).

Seeds are 9B UD datagrams a host's management contexts take: SMPs on VL15
(LID-routed and directed-route Gets, a GetResp, on each management P_Key and
on 0x8001) and GSI MADs on VL0 (a VEMA Get, an SA GetTable) with QP1's
Q_Key. Usage: gen_corpus_mgmt_rx.py OUTDIR
"""
import os
import struct
import sys

GSI_QKEY = 0x80010000


def mad(base, cls, cv, method, attr, length=256):
    m = struct.pack('>BBBBHBBQHHI', base, cls, cv, method, 0, 0, 0, 1, attr, 0, 0)
    return m + bytes(length - len(m))


def ud(sc, dlid, slid, pkey, dqp, sqp, qkey, payload, sl=0):
    words = (8 + 12 + 8 + len(payload) + 4) // 4      # LRH to ICRC
    lrh = struct.pack('>BBHHH', (sc & 0xf) << 4, (sl << 4) | 2, dlid, words & 0x7ff, slid)
    bth = struct.pack('>BBHII', 0x64, 0, pkey, dqp & 0xffffff, 0)
    deth = struct.pack('>II', qkey, sqp & 0xffffff)
    return lrh + bth + deth + payload


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {}
    for name, pkey in (('full', 0xffff), ('lim', 0x7fff), ('data', 0x8001)):
        seeds['smp_lr_get_' + name] = b'\x01' + ud(15, 2, 1, pkey, 0, 0, 0,
                                                    mad(0x80, 0x01, 0x80, 0x01, 0x0011))
    dr = bytearray(mad(0x80, 0x81, 0x80, 0x01, 0x0011))
    dr[32:40] = b'\xff' * 8
    seeds['smp_dr_get'] = b'\x03' + ud(15, 0xffff, 0xffff, 0xffff, 0, 0, 0, bytes(dr))
    seeds['smp_getresp'] = b'\x01' + ud(15, 2, 1, 0x7fff, 0, 0, 0,
                                        mad(0x80, 0x01, 0x80, 0x81, 0x0011))
    seeds['gsi_vema_get'] = b'\x00' + ud(0, 2, 1, 0xffff, 1, 1, GSI_QKEY,
                                         mad(0x80, 0x0b, 0x80, 0x01, 0x0017))
    seeds['gsi_sa_gettable'] = b'\x00' + ud(0, 2, 1, 0x7fff, 1, 1, GSI_QKEY,
                                            mad(0x80, 0x03, 0x80, 0x12, 0x0011, 176))
    for name, data in seeds.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
