#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
"""Bad copies of packets of a software-fabric capture, for the dissector's test.

pcapng_mutate.py IN OUT FRAME... writes OUT with the interfaces of IN and,
for each FRAME (1-based number in IN):
  - truncated copies: the packet cut short at many lengths (an ERF record
    keeps its 16-byte ERF header, with lengths that match the cut packet);
    each is a packet that lies about its length, so each must show as
    malformed;
  - mutated copies: bytes overwritten with random values (fixed seed); these
    need not be malformed, only never make the dissector fail.
It prints "truncated N" and "mutated M" and the numbers of the truncated
frames in OUT (one line "truncated-frames A-B").
Only what the fabric's capture writes is read: little-endian pcapng with
section header, interface description and enhanced packet blocks.
"""

import random
import struct
import sys

SHB, IDB, EPB = 0x0A0D0D0A, 0x00000001, 0x00000006
LINKTYPE_ERF = 197
ERF_HDR = 16


def blocks(data):
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from('<II', data, off)
        if blen < 12 or off + blen > len(data):
            raise SystemExit('bad pcapng block at %d' % off)
        yield btype, data[off:off + blen]
        off += blen


def epb(ifid, ts, pkt):
    pad = (-len(pkt)) & 3
    body = struct.pack('<IIIII', ifid, ts >> 32, ts & 0xffffffff, len(pkt), len(pkt))
    body += pkt + b'\0' * pad
    total = 12 + len(body)
    return struct.pack('<II', EPB, total) + body + struct.pack('<I', total)


def cut(pkt, n, erf):
    """The first n bytes of the packet (of the 9B packet after an ERF header)."""
    if not erf:
        return pkt[:n]
    hdr = bytearray(pkt[:ERF_HDR])
    struct.pack_into('>H', hdr, 10, ERF_HDR + n)     # rlen
    struct.pack_into('>H', hdr, 14, n)               # wlen
    return bytes(hdr) + pkt[ERF_HDR:ERF_HDR + n]


def lengths(total):
    """Every length below 64, then about 40 more spread over the rest."""
    out = list(range(min(total, 64)))
    step = max(1, (total - 64) // 40)
    out += list(range(64, total, step))
    return out


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    data = open(sys.argv[1], 'rb').read()
    want = [int(a) for a in sys.argv[3:]]
    head, packets, linktypes = [], [], []
    for btype, blk in blocks(data):
        if btype in (SHB, IDB):
            head.append(blk)
            if btype == IDB:
                linktypes.append(struct.unpack_from('<H', blk, 8)[0])
        elif btype == EPB:
            ifid, hi, lo, caplen = struct.unpack_from('<IIII', blk, 8)
            packets.append((ifid, (hi << 32) | lo, blk[28:28 + caplen]))
    rng = random.Random(16)
    truncated, mutated = [], []
    for n in want:
        ifid, ts, pkt = packets[n - 1]
        erf = linktypes[ifid] == LINKTYPE_ERF
        body = len(pkt) - ERF_HDR if erf else len(pkt)
        for k in lengths(body):
            truncated.append(epb(ifid, ts, cut(pkt, k, erf)))
        start = ERF_HDR if erf else 0
        for _ in range(40):
            b = bytearray(pkt)
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(start, len(b))] = rng.randrange(256)
            mutated.append(epb(ifid, ts, bytes(b)))
    with open(sys.argv[2], 'wb') as f:
        f.write(b''.join(head) + b''.join(truncated) + b''.join(mutated))
    print('truncated %d' % len(truncated))
    print('mutated %d' % len(mutated))
    print('truncated-frames 1-%d' % len(truncated))


if __name__ == '__main__':
    main()
