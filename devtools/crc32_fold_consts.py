#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
"""Folding constants of the reflected CRC-32 (polynomial 0x04C11DB7) for
drivers/common/hfi/hfi_icrc_vec.h: moving a 128-bit lane forward by D bits
multiplies its low half by x^(D+32) mod P and its high half by x^(D-32) mod P,
each remainder bit-reflected over 32 bits and shifted left by one (the
reflected carry-less multiply loses a bit). Also x^64 mod P (the 64 -> 32 bit
step). Run it to print them; --check compares them with the header."""

import re
import sys

POLY = 0x104C11DB7


def xpow_mod(n):
    """x^n mod P over GF(2)."""
    r = 1
    for _ in range(n):
        r <<= 1
        if r & (1 << 32):
            r ^= POLY
    return r


def reflected(n):
    """x^n mod P as the reflected fold uses it."""
    return int(format(xpow_mod(n), '032b')[::-1], 2) << 1


def constants():
    out = {}
    for d in (128, 256, 384, 512, 768, 1024, 1536, 2048):
        out['K%d_LO' % d] = reflected(d + 32)
        out['K%d_HI' % d] = reflected(d - 32)
    return out


def main():
    consts = constants()
    if len(sys.argv) > 2 and sys.argv[1] == '--check':
        text = open(sys.argv[2]).read()
        bad = 0
        for name, val in consts.items():
            m = re.search(r'HFI_CRC32_%s\s+UINT64_C\((0x[0-9a-fA-F]+)\)' % name, text)
            if m is None or int(m.group(1), 16) != val:
                print('%s: header has %s, expected 0x%09x' %
                      (name, m.group(1) if m else 'nothing', val))
                bad = 1
        return bad
    for name, val in consts.items():
        print('#define HFI_CRC32_%-8s UINT64_C(0x%09x)' % (name, val))
    print('x^64: 0x%09x' % reflected(64))
    return 0


if __name__ == '__main__':
    sys.exit(main())
