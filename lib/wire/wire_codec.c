/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <stdbool.h>
#include <stddef.h>

#include "wire_codec.h"

unsigned int
wire_field_elem_size(const struct wire_field *f)
{
	static const uint8_t sizes[] = {
		[WIRE_U8] = 1, [WIRE_U16] = 2, [WIRE_U32] = 4, [WIRE_U64] = 8, [WIRE_BYTES] = 1,
	};

	return sizes[f->kind];
}

unsigned int
wire_field_size(const struct wire_field *f)
{
	return wire_field_elem_size(f) * f->count;
}

/*
 * Move every field one way. Wire scalars are big-endian, host ones native
 * (and accessed bytewise: host structs need no particular alignment): an
 * element's bytes are reversed on a little-endian host. Encode and decode
 * differ only in which side is read.
 */
static void
move_fields(const struct wire_layout *layout, const uint8_t *src, uint8_t *dst, bool to_wire)
{
	const bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	unsigned int i, e, b;

	for (i = 0; i < layout->n_fields; i++) {
		const struct wire_field *f = &layout->fields[i];
		unsigned int esz = wire_field_elem_size(f);
		const uint8_t *s = src + (to_wire ? f->host_off : f->wire_off);
		uint8_t *d = dst + (to_wire ? f->wire_off : f->host_off);

		for (e = 0; e < f->count; e++, s += esz, d += esz)
			for (b = 0; b < esz; b++)
				d[b] = s[host_le ? esz - 1 - b : b];
	}
}

void
wire_encode(const struct wire_layout *layout, const void *host, uint8_t *wire)
{
	move_fields(layout, host, wire, true);
}

void
wire_decode(const struct wire_layout *layout, const uint8_t *wire, void *host)
{
	move_fields(layout, wire, host, false);
}

const struct wire_field *
wire_layout_field_at(const struct wire_layout *layout, unsigned int off)
{
	unsigned int i;

	for (i = 0; i < layout->n_fields; i++) {
		const struct wire_field *f = &layout->fields[i];

		if (off >= f->wire_off && off < f->wire_off + wire_field_size(f))
			return f;
	}
	return NULL;
}
