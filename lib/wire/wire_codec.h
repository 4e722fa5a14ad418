/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef WIRE_CODEC_H
#define WIRE_CODEC_H

/*
 * Management datagrams as tables: a layout lists each field of an attribute
 * (its offset on the wire, its kind and count, where it lives in the host
 * struct), and one codec moves every field between big-endian wire bytes and
 * native host structs. SMPs (drivers/common/hfi) and VEMA MADs (lib/vema)
 * describe their attributes this way. Pure C, no allocation.
 */

#include <stdint.h>

enum wire_kind {
	WIRE_U8,
	WIRE_U16,
	WIRE_U32,
	WIRE_U64,
	WIRE_BYTES,	/* opaque bytes (MACs, GIDs, paths, descriptions, reserved) */
};

/* One field: 'count' elements of one kind ('count' bytes for WIRE_BYTES). */
struct wire_field {
	const char *name;
	uint16_t wire_off;	/* offset in the layout's wire bytes */
	uint16_t count;
	uint16_t host_off;	/* offsetof() in the host struct */
	uint8_t kind;
};

struct wire_layout {
	const char *name;
	uint16_t size;		/* wire bytes the layout spans */
	uint16_t n_fields;
	const struct wire_field *fields;
};

/* Bytes on the wire of one element of a field, and of the whole field. */
unsigned int wire_field_elem_size(const struct wire_field *f);
unsigned int wire_field_size(const struct wire_field *f);

/* Host struct -> big-endian wire bytes (only the layout's fields are written). */
void wire_encode(const struct wire_layout *layout, const void *host, uint8_t *wire);
/* Big-endian wire bytes -> host struct (every field of the layout written). */
void wire_decode(const struct wire_layout *layout, const uint8_t *wire, void *host);
/* The field covering byte 'off' of the layout, or NULL (off outside every field). */
const struct wire_field *wire_layout_field_at(const struct wire_layout *layout,
					      unsigned int off);

#endif /* WIRE_CODEC_H */
