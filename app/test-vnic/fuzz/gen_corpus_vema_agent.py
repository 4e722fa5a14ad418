#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
"""Write the seed corpus of the vema_agent fuzz target from the golden requests.

One seed per golden sequence: its requests as MAD records (op 0x00, big-endian
length 2048, the MAD), in order, so that the fuzzer starts from real EM
conversations. A few seeds add application events. Usage:
    gen_corpus_vema_agent.py VECTORS/vema-sequences.txt OUTDIR
"""
import os
import sys


def main():
    golden, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    seqs, name = {}, None
    with open(golden) as f:
        for line in f:
            if line.startswith('seq '):
                name = line.split()[1]
                seqs[name] = bytearray()
            elif line.startswith('req hex='):
                mad = bytes.fromhex(line[8:].strip())
                seqs[name] += b'\x00\x08\x00' + mad
    for name, data in seqs.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
    # em_bringup, then the application closes, reopens, changes its MAC and lists.
    events = bytes([0x81, 0, 0xfc, 0, 0x82, 0, 0x83, 0])
    with open(os.path.join(out, 'em_bringup_events'), 'wb') as f:
        f.write(seqs['em_bringup'] + events)


if __name__ == '__main__':
    main()
