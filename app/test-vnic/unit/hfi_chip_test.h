/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_CHIP_TEST_H
#define HFI_CHIP_TEST_H

/*
 * The bring-up reference (vectors/hfi-bringup.txt) and a comparison of a
 * CSR-write trace with it, shared by the bring-up and PCI backend tests.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_dev.h"
#include "hfi_fault.h"
#include "hfi_regs.h"

#define BRINGUP_REF		OPA_VNIC_VECTORS_DIR "/hfi-bringup.txt"
#define BRINGUP_NSDMA		2	/* the device the reference describes */
#define BRINGUP_NCTXT		2

struct bringup_ref {
	struct hfi_csr_write w;
	char why[128];			/* the hfi1 function, from the comment */
	int line;
};

/* Parse the reference; returns the number of writes (malloc'd *out), -1 on error. */
static inline int
bringup_ref_load(struct bringup_ref **out)
{
	FILE *f = fopen(BRINGUP_REF, "r");
	struct bringup_ref *r = NULL;
	char buf[512];
	int n = 0, cap = 0, line = 0;

	if (f == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), f) != NULL) {
		char *hash = strchr(buf, '#');
		unsigned long long off, val;

		line++;
		if (hash != NULL)
			*hash = '\0';
		if (sscanf(buf, "%llx %llx", &off, &val) != 2)
			continue;
		if (n == cap) {
			struct bringup_ref *g = realloc(r, (size_t)(cap = cap ? 2 * cap : 512) *
							   sizeof(*r));

			if (g == NULL) {
				free(r);
				fclose(f);
				return -1;
			}
			r = g;
		}
		r[n].w.off = (uint32_t)off;
		r[n].w.val = val;
		r[n].line = line;
		snprintf(r[n].why, sizeof(r[n].why), "%s",
			 hash != NULL ? hash + 1 + strspn(hash + 1, " ") : "");
		r[n].why[strcspn(r[n].why, "\n")] = '\0';
		n++;
	}
	fclose(f);
	*out = r;
	return n;
}

/*
 * Compare a trace with the reference, write for write. The P_Key table
 * the bring-up writes is the port's: set_partition_keys entries take their
 * values from pkey_csr[] (the device's table, four keys a CSR). Prints the
 * first difference; returns the number of differences.
 */
static inline int
bringup_compare(const struct hfi_csr_write *w, size_t n, const uint64_t pkey_csr[4])
{
	struct bringup_ref *ref;
	int nref = bringup_ref_load(&ref), bad = 0;
	size_t i;

	if (nref < 0) {
		fprintf(stderr, "cannot read %s\n", BRINGUP_REF);
		return 1;
	}
	for (i = 0; i < n || i < (size_t)nref; i++) {
		uint64_t want = 0;

		if (i < (size_t)nref) {
			want = ref[i].w.val;
			if (strncmp(ref[i].why, "set_partition_keys:", 19) == 0 &&
			    ref[i].w.off >= RCV_PARTITION_KEY &&
			    ref[i].w.off < RCV_PARTITION_KEY + 32)
				want = pkey_csr[(ref[i].w.off - RCV_PARTITION_KEY) / 8];
		}
		if (i < n && i < (size_t)nref && w[i].off == ref[i].w.off && w[i].val == want)
			continue;
		if (bad++ == 0) {
			fprintf(stderr, "write %zu: ", i);
			if (i < n)
				fprintf(stderr, "made 0x%07x 0x%016llx; ", w[i].off,
					(unsigned long long)w[i].val);
			else
				fprintf(stderr, "none made; ");
			if (i < (size_t)nref)
				fprintf(stderr, "hfi-bringup.txt line %d expects 0x%07x 0x%016llx "
					"(%s)\n", ref[i].line, ref[i].w.off,
					(unsigned long long)want, ref[i].why);
			else
				fprintf(stderr, "the reference has %d writes\n", nref);
		}
	}
	free(ref);
	return bad;
}

/* The four RCV_PARTITION_KEY CSRs for a device's P_Key table. */
static inline void
bringup_pkey_csrs(struct hfi_dev *dev, uint64_t csr[4])
{
	uint16_t pk[HFI_PKEY_TABLE_SIZE] = { 0 };
	int i, n = hfi_dev_pkey_table(dev, pk, HFI_PKEY_TABLE_SIZE);

	memset(csr, 0, 4 * sizeof(*csr));
	for (i = 0; i < n && i < HFI_PKEY_TABLE_SIZE; i++)
		csr[i / 4] |= (uint64_t)pk[i] << (16 * (i % 4));
}

#endif /* HFI_CHIP_TEST_H */
