/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_REGS_H
#define HFI_REGS_H

/*
 * The hfi1 ("Wolf River") chip contract used by this layer: BAR0 CSR offsets,
 * bit fields, the per-buffer control word (PBC), SDMA descriptors, receive
 * header flags (RHF) and RcvArray entries. Names follow the hfi1 register
 * names. All CSRs are 64-bit little-endian.
 */

#include <stdint.h>

#define HFI_BIT(n)			(UINT64_C(1) << (n))

/* ---- PCI ---- */
#define HFI_PCI_VENDOR_INTEL		0x8086
#define HFI_PCI_DEVICE_WFR_DISCRETE	0x24f0
#define HFI_PCI_DEVICE_WFR_INTEGRATED	0x24f1
#define HFI_BAR0_SIZE			(UINT64_C(64) << 20)

/* ---- chip resources ---- */
#define HFI_CHIP_SDMA_ENGINES		16
#define HFI_CHIP_RCV_CONTEXTS		160
#define HFI_MAX_EAGER_ENTRIES		2048
#define HFI_RSM_RULES			4
#define HFI_RSM_MAP_ENTRIES		256
#define HFI_PKEY_TABLE_SIZE		16

/* ---- CSR regions ---- */
#define HFI_CCE				UINT32_C(0x0000000)
#define HFI_RXE				UINT32_C(0x1000000)
#define HFI_TXE				UINT32_C(0x1800000)

#define CCE_REVISION			(HFI_CCE + 0x0)
#define CCE_REVISION_CHIP_REV_MINOR_SHIFT 0
#define CCE_REVISION_CHIP_REV_MAJOR_SHIFT 8
#define CCE_REVISION_CHIP_REV_MASK	0xffu
#define CCE_ERR_STATUS			(HFI_CCE + 0x40)
#define CCE_ERR_MASK			(HFI_CCE + 0x48)
#define CCE_ERR_CLEAR			(HFI_CCE + 0x50)
#define CCE_ERR_STATUS_CCE_CSR_READ_BAD_ADDR_ERR	HFI_BIT(1)
#define CCE_ERR_STATUS_CCE_CSR_WRITE_BAD_ADDR_ERR	HFI_BIT(2)

/* TXE block errors */
#define SEND_ERR_STATUS			(HFI_TXE + 0xe0)
#define SEND_ERR_MASK			(HFI_TXE + 0xe8)
#define SEND_ERR_CLEAR			(HFI_TXE + 0xf0)
#define SEND_ERR_STATUS_SEND_CSR_READ_BAD_ADDR_ERR	HFI_BIT(1)
#define SEND_ERR_STATUS_SEND_CSR_WRITE_BAD_ADDR_ERR	HFI_BIT(2)
#define SEND_CONTEXTS			(HFI_TXE + 0x10)
#define SEND_DMA_ENGINES		(HFI_TXE + 0x18)

/* ---- PBC (per-buffer control), LE u64 in front of every SDMA packet ---- */
#define PBC_LENGTH_DWS_MASK		UINT64_C(0xfff)
#define PBC_VL_SHIFT			12
#define PBC_VL_MASK			UINT64_C(0xf)
#define PBC_FECN			HFI_BIT(22)
#define PBC_TEST_BAD_ICRC		HFI_BIT(23)
#define PBC_INSERT_BYPASS_ICRC		HFI_BIT(24)
#define PBC_CREDIT_RETURN		HFI_BIT(25)
#define PBC_INSERT_HCRC_SHIFT		26
#define PBC_IHCRC_NONE			UINT64_C(2)
#define PBC_PACKET_BYPASS		HFI_BIT(28)
#define PBC_TEST_EBP			HFI_BIT(29)
#define PBC_DC_INFO			HFI_BIT(30)
#define PBC_INTR			HFI_BIT(31)
#define PBC_SIZE			8

/* The PBC of a VNIC packet: bypass, ICRC inserted, no HCRC, credit return. */
#define PBC_VNIC_FLAGS	(PBC_PACKET_BYPASS | PBC_INSERT_BYPASS_ICRC | PBC_CREDIT_RETURN | \
			 (PBC_IHCRC_NONE << PBC_INSERT_HCRC_SHIFT))

/* ---- SDMA descriptors (2 x LE u64) ---- */
#define SDMA_DESC0_PHY_ADDR_MASK	UINT64_C(0xffffffffffff)
#define SDMA_DESC0_BYTE_COUNT_SHIFT	48
#define SDMA_DESC0_BYTE_COUNT_MASK	UINT64_C(0x3fff)
#define SDMA_DESC0_LAST_DESC_FLAG	HFI_BIT(62)
#define SDMA_DESC0_FIRST_DESC_FLAG	HFI_BIT(63)
#define SDMA_DESC1_HEAD_TO_HOST_FLAG	HFI_BIT(0)
#define SDMA_DESC1_INT_REQ_FLAG		HFI_BIT(1)
#define SDMA_DESC1_GENERATION_SHIFT	2
#define SDMA_DESC1_GENERATION_MASK	UINT64_C(0x3)

#define SDMA_MAX_DESC_PER_PKT		64
#define SDMA_MAX_PKT_SIZE		16383	/* bytes, PBC included */
#define SDMA_MIN_RING			64
#define SDMA_MAX_RING			32768

/* ---- SDMA per-engine CSRs: TXE + 0x200000 + 0x100 * engine ---- */
#define SEND_DMA_BASE			(HFI_TXE + 0x200000)
#define SEND_DMA_STRIDE			0x100
#define SEND_DMA_CSR(e, reg)		(SEND_DMA_BASE + SEND_DMA_STRIDE * (uint32_t)(e) + (reg))

#define SEND_DMA_CTRL			0x00
#define SEND_DMA_CTRL_SDMA_ENABLE	HFI_BIT(0)
#define SEND_DMA_CTRL_SDMA_HALT		HFI_BIT(1)
#define SEND_DMA_CTRL_SDMA_CLEANUP	HFI_BIT(2)
#define SEND_DMA_CTRL_SDMA_INT_ENABLE	HFI_BIT(3)
#define SEND_DMA_STATUS			0x08
#define SEND_DMA_STATUS_ENG_HALTED	HFI_BIT(56)
#define SEND_DMA_STATUS_ENG_CLEANED_UP	HFI_BIT(57)
#define SEND_DMA_BASE_ADDR		0x10
#define SEND_DMA_LEN_GEN		0x18
#define SEND_DMA_LEN_GEN_LENGTH_SHIFT	6
#define SEND_DMA_LEN_GEN_GENERATION_SHIFT 16
#define SEND_DMA_LEN_GEN_GEN_LOAD	UINT64_C(4)	/* MSB of the generation: check + load */
#define SEND_DMA_TAIL			0x20
#define SEND_DMA_HEAD			0x28
#define SEND_DMA_HEAD_ADDR		0x30
#define SEND_DMA_PRIORITY_THLD		0x38
#define SEND_DMA_IDLE_CNT		0x40
#define SEND_DMA_RELOAD_CNT		0x48
#define SEND_DMA_DESC_CNT		0x50
#define SEND_DMA_DESC_FETCHED_CNT	0x58
#define SEND_DMA_ENG_ERR_STATUS		0x60
#define SEND_DMA_ENG_ERR_MASK		0x68
#define SEND_DMA_ENG_ERR_CLEAR		0x70
#define SEND_DMA_CHECK_ENABLE		0x80
#define SEND_DMA_CHECK_VL		0x88
#define SEND_DMA_CHECK_JOB_KEY		0x90
#define SEND_DMA_CHECK_PARTITION_KEY	0x98
#define SEND_DMA_CHECK_SLID		0xa0
#define SEND_DMA_CHECK_OPCODE		0xa8
#define SEND_DMA_MEMORY			0xb0

/* SEND_DMA_ENG_ERR_STATUS bits */
#define SDMA_ERR_WRONG_DW		HFI_BIT(0)
#define SDMA_ERR_GEN_MISMATCH		HFI_BIT(1)
#define SDMA_ERR_TOO_LONG		HFI_BIT(2)
#define SDMA_ERR_TAIL_OUT_OF_BOUNDS	HFI_BIT(3)
#define SDMA_ERR_FIRST_DESC		HFI_BIT(4)
#define SDMA_ERR_MEM_READ		HFI_BIT(5)
#define SDMA_ERR_HALT			HFI_BIT(6)
#define SDMA_ERR_LENGTH_MISMATCH	HFI_BIT(7)
#define SDMA_ERR_PACKET_DESC_OVERFLOW	HFI_BIT(8)
#define SDMA_ERR_TIMEOUT		HFI_BIT(13)

/* ---- receive: global CSRs at RXE ---- */
#define RCV_CTRL			(HFI_RXE + 0x0)
#define RCV_CTRL_RCV_PORT_ENABLE	HFI_BIT(0)
#define RCV_CTRL_RCV_QP_MAP_ENABLE	HFI_BIT(1)
#define RCV_CTRL_RCV_PARTITION_KEY_ENABLE HFI_BIT(2)
#define RCV_CTRL_RCV_BYPASS_ENABLE	HFI_BIT(4)
#define RCV_CTRL_RCV_RSM_ENABLE		HFI_BIT(5)
#define RCV_CTRL_RX_RBUF_INIT		HFI_BIT(9)
#define RCV_STATUS			(HFI_RXE + 0x8)
#define RCV_STATUS_RX_RBUF_INIT_DONE	HFI_BIT(9)
#define RCV_CONTEXTS			(HFI_RXE + 0x10)
#define RCV_ARRAY_CNT			(HFI_RXE + 0x18)
#define RCV_BYPASS			(HFI_RXE + 0x38)
#define RCV_BYPASS_CONTEXT_MASK		UINT64_C(0xff)
#define RCV_BYPASS_HDR_SIZE_SHIFT	16
#define RCV_BYPASS_HDR_SIZE_MASK	UINT64_C(0x1f)
/* hfi1 keeps 16 bytes (4 DWs) of a bypass packet in the header queue. */
#define HFI_BYPASS_HDR_DWS		4
#define RCV_ERR_STATUS			(HFI_RXE + 0x60)
#define RCV_ERR_MASK			(HFI_RXE + 0x68)
#define RCV_ERR_CLEAR			(HFI_RXE + 0x70)
#define RCV_ERR_STATUS_RX_CSR_READ_BAD_ADDR_ERR		HFI_BIT(61)
#define RCV_ERR_STATUS_RX_CSR_WRITE_BAD_ADDR_ERR	HFI_BIT(62)
/* 16 P_Keys, four per CSR (16 bits each, A in bits 0-15 ... D in 48-63). */
#define RCV_PARTITION_KEY		(HFI_RXE + 0x200)
#define RCV_PARTITION_KEY_PER_CSR	4
#define RCV_PARTITION_KEY_B_SHIFT	16

/* RSM: three CSRs per rule at base + 8 * rule, map table of 32 CSRs x 8 contexts */
#define RCV_RSM_CFG			(HFI_RXE + 0x600)
#define RCV_RSM_CFG_OFFSET_SHIFT	32
#define RCV_RSM_CFG_PACKET_TYPE_SHIFT	60
#define RCV_RSM_SELECT			(HFI_RXE + 0x700)
#define RCV_RSM_SELECT_FIELD1_OFFSET_SHIFT 0
#define RCV_RSM_SELECT_FIELD2_OFFSET_SHIFT 16
#define RCV_RSM_SELECT_INDEX1_OFFSET_SHIFT 32
#define RCV_RSM_SELECT_INDEX1_WIDTH_SHIFT 44
#define RCV_RSM_SELECT_INDEX2_OFFSET_SHIFT 48
#define RCV_RSM_SELECT_INDEX2_WIDTH_SHIFT 60
#define RCV_RSM_SELECT_OFFSET_MASK	UINT64_C(0xfff)
#define RCV_RSM_SELECT_WIDTH_MASK	UINT64_C(0xf)
#define RCV_RSM_MATCH			(HFI_RXE + 0x800)
#define RCV_RSM_MATCH_MASK1_SHIFT	0
#define RCV_RSM_MATCH_VALUE1_SHIFT	8
#define RCV_RSM_MATCH_MASK2_SHIFT	16
#define RCV_RSM_MATCH_VALUE2_SHIFT	24
#define RCV_RSM_MAP_TABLE		(HFI_RXE + 0x900)

/* ---- receive: per-context "kernel" CSRs, RXE + 0x100000 + 0x100 * ctxt ---- */
#define RCV_CTXT_BASE			(HFI_RXE + 0x100000)
#define RCV_CTXT_STRIDE			0x100
#define RCV_CTXT_CSR(c, reg)		(RCV_CTXT_BASE + RCV_CTXT_STRIDE * (uint32_t)(c) + (reg))

#define RCV_CTXT_CTRL			0x00
#define RCV_CTXT_CTRL_ENABLE		HFI_BIT(0)
#define RCV_CTXT_CTRL_ONE_PACKET_PER_EGR_BUFFER HFI_BIT(1)
#define RCV_CTXT_CTRL_DONT_DROP_EGR_FULL HFI_BIT(2)
#define RCV_CTXT_CTRL_DONT_DROP_RHQ_FULL HFI_BIT(3)
#define RCV_CTXT_CTRL_TID_FLOW_ENABLE	HFI_BIT(4)
#define RCV_CTXT_CTRL_INTR_AVAIL	HFI_BIT(5)
#define RCV_CTXT_CTRL_TAIL_UPD		HFI_BIT(6)
#define RCV_CTXT_CTRL_EGR_BUF_SIZE_SHIFT 8
#define RCV_CTXT_CTRL_EGR_BUF_SIZE_MASK	UINT64_C(0x7)
#define RCV_CTXT_STATUS			0x08
/*
 * hfi1 names no RCV_CTXT_STATUS fields; the software HFI reports the errors
 * that stop a context here (doc/guides/software_hfi.md): an eager RcvArray
 * entry it cannot use (invalid, reserved bits, size code other than the
 * context's EgrBufSize), and a DMA address outside registered memory. The
 * context drops everything until it is disabled and enabled again.
 */
#define RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR HFI_BIT(0)
#define RCV_CTXT_STATUS_SW_DMA_ERR	HFI_BIT(1)
/* Enabled with a header queue size or entry size code the chip has not: left disabled. */
#define RCV_CTXT_STATUS_SW_CONFIG_ERR	HFI_BIT(2)
#define RCV_EGR_CTRL			0x10
#define RCV_EGR_CTRL_EGR_BASE_INDEX_MASK UINT64_C(0x1fff)	/* in units of 8 entries */
#define RCV_EGR_CTRL_EGR_CNT_SHIFT	32
#define RCV_EGR_CTRL_EGR_CNT_MASK	UINT64_C(0x1ff)		/* in units of 8 entries */
#define RCV_TID_CTRL			0x18
#define RCV_KEY_CTRL			0x20
#define RCV_HDR_ADDR			0x28
#define RCV_HDR_CNT			0x30	/* entries >> 5 */
#define RCV_HDR_CNT_MASK		UINT64_C(0x1ff)
#define RCV_HDR_ENT_SIZE		0x38	/* code: 2 DW -> 1, 16 DW -> 2, 32 DW -> 4 */
#define RCV_HDR_SIZE			0x40	/* header DWs copied into an entry (9B packets) */
#define HFI_RCV_HDR_SIZE_DWS		9	/* hfi1's DEFAULT_RCVHDRSIZE */
#define RCV_HDR_TAIL_ADDR		0x48
#define RCV_AVAIL_TIME_OUT		0x50
#define RCV_HDR_OVFL_CNT		0x58

#define RCV_HDR_CNT_SHIFT		5
#define RCV_EGR_UNIT_SHIFT		3

/* ---- receive: per-context "user" CSRs, RXE + 0x300000 + 0x1000 * ctxt ---- */
#define RCV_USER_BASE			(HFI_RXE + 0x300000)
#define RCV_USER_STRIDE			0x1000
#define RCV_USER_CSR(c, reg)		(RCV_USER_BASE + RCV_USER_STRIDE * (uint32_t)(c) + (reg))

#define RCV_HDR_TAIL			0x00
#define RCV_HDR_HEAD			0x08
#define RCV_HDR_HEAD_HEAD_MASK		UINT64_C(0x7ffff)	/* in DWs */
#define RCV_HDR_HEAD_COUNTER_SHIFT	32
#define RCV_EGR_INDEX_HEAD		0x18
#define RCV_EGR_INDEX_HEAD_HEAD_MASK	UINT64_C(0x7ff)

/* ---- RcvArray: u64 per entry at RXE + 0x200000 + 8 * index ---- */
#define RCV_ARRAY			(HFI_RXE + 0x200000)
#define RCV_ARRAY_RT_ADDR_MASK		UINT64_C(0xfffffffff)	/* PA >> 12 */
#define RCV_ARRAY_RT_ADDR_SHIFT		12
#define RCV_ARRAY_RT_BUF_SIZE_SHIFT	36
#define RCV_ARRAY_RT_BUF_SIZE_MASK	UINT64_C(0xf)
#define RCV_ARRAY_RT_WRITE_ENABLE	HFI_BIT(63)

/*
 * An eager buffer is 4 KiB aligned (only PA >> 12 is stored), a power of two
 * from 4 KiB to 256 KiB; its size code is log2(size / 4 KiB) + 1 (1..7), the
 * same code as RCV_CTXT_CTRL's EgrBufSize. Bits 40..62 are reserved (0).
 */
#define RCV_ARRAY_RT_BUF_SIZE_MIN	1
#define RCV_ARRAY_RT_BUF_SIZE_MAX	7
#define RCV_ARRAY_RT_RESERVED_MASK	UINT64_C(0x7fffff0000000000)	/* bits 40..62 */
#define HFI_EGR_BUF_MIN			4096
#define HFI_EGR_BUF_MAX			(256 * 1024)
/* Packets share a multi-packet eager buffer at offsets in these units (RCV_BUF_BLOCK_SIZE). */
#define HFI_RCV_BUF_BLOCK		64

/* ---- RHF (receive header flags), LE u64 in the last two DWs of an hdrq entry ---- */
#define RHF_PKT_LEN_MASK		UINT64_C(0xfff)		/* DWs */
#define RHF_RCV_TYPE_SHIFT		12
#define RHF_RCV_TYPE_MASK		UINT64_C(0x7)
#define RHF_USE_EGR_BFR			HFI_BIT(15)
#define RHF_EGR_INDEX_SHIFT		16
#define RHF_EGR_INDEX_MASK		UINT64_C(0x7ff)
#define RHF_DC_INFO			HFI_BIT(27)
#define RHF_SEQ_SHIFT			28
#define RHF_SEQ_MASK			UINT64_C(0xf)
#define RHF_EGR_OFFSET_SHIFT		32
#define RHF_EGR_OFFSET_MASK		UINT64_C(0xfff)
#define RHF_HDRQ_OFFSET_SHIFT		44
#define RHF_HDRQ_OFFSET_MASK		UINT64_C(0x1ff)
#define RHF_K_HDR_LEN_ERR		HFI_BIT(53)
#define RHF_DC_UNC_ERR			HFI_BIT(54)
#define RHF_DC_ERR			HFI_BIT(55)
#define RHF_RCV_TYPE_ERR_SHIFT		56
#define RHF_RCV_TYPE_ERR_MASK		UINT64_C(0x7)
#define RHF_TID_ERR			HFI_BIT(59)
#define RHF_LEN_ERR			HFI_BIT(60)
#define RHF_ECC_ERR			HFI_BIT(61)
#define RHF_VCRC_ERR			HFI_BIT(62)
#define RHF_ICRC_ERR			HFI_BIT(63)
#define RHF_ERROR_MASK			UINT64_C(0xffe0000000000000)	/* bits 53..63 */

#define RHF_MAX_SEQ			13

#define RHF_RCV_TYPE_EXPECTED		0
#define RHF_RCV_TYPE_EAGER		1
#define RHF_RCV_TYPE_IB			2
#define RHF_RCV_TYPE_ERROR		3
#define RHF_RCV_TYPE_BYPASS		4

/* ---- PIO send contexts ---- */
/*
 * hfi1 chip_registers.h / chip.h / pio.c. A send context is a ring of 64-byte
 * blocks (its credits) in the chip's PIO memory, written by the host through
 * the write-combining PIO range of BAR0 and read out by the chip as packets.
 */
#define HFI_CHIP_SEND_CONTEXTS		160	/* TXE_NUM_CONTEXTS */

/* Global TXE CSRs of the PIO side. */
#define SEND_PIO_MEM_SIZE		(HFI_TXE + 0x20)	/* bytes of PIO memory */
#define SEND_PIO_INIT_CTXT		(HFI_TXE + 0x38)
#define SEND_PIO_INIT_CTXT_PIO_ALL_CTXT_INIT	HFI_BIT(0)
#define SEND_PIO_INIT_CTXT_PIO_SINGLE_CTXT_INIT	HFI_BIT(1)
#define SEND_PIO_INIT_CTXT_PIO_INIT_IN_PROGRESS	HFI_BIT(2)
#define SEND_PIO_INIT_CTXT_PIO_INIT_ERR		HFI_BIT(3)
#define SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_SHIFT	8
#define SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_MASK	UINT64_C(0xff)
#define SEND_PIO_ERR_STATUS		(HFI_TXE + 0x40)
#define SEND_PIO_ERR_MASK		(HFI_TXE + 0x48)
#define SEND_PIO_ERR_CLEAR		(HFI_TXE + 0x50)
#define SEND_PIO_ERR_STATUS_PIO_WRITE_BAD_CTXT_ERR	HFI_BIT(0)

/* Per-context CSRs: TXE + 0x100000 + 0x100 * context. */
#define SEND_CTXT_BASE			(HFI_TXE + 0x100000)
#define SEND_CTXT_STRIDE		0x100
#define SEND_CTXT_CSR(c, reg)		(SEND_CTXT_BASE + SEND_CTXT_STRIDE * (uint32_t)(c) + (reg))

#define SEND_CTXT_CTRL			0x00
#define SEND_CTXT_CTRL_CTXT_ENABLE	HFI_BIT(0)
#define SEND_CTXT_CTRL_CTXT_BASE_SHIFT	32	/* first block in PIO memory */
#define SEND_CTXT_CTRL_CTXT_BASE_MASK	UINT64_C(0x3fff)
#define SEND_CTXT_CTRL_CTXT_DEPTH_SHIFT	48	/* blocks (credits) */
#define SEND_CTXT_CTRL_CTXT_DEPTH_MASK	UINT64_C(0x7ff)
#define SEND_CTXT_STATUS		0x08
#define SEND_CTXT_STATUS_CTXT_HALTED	HFI_BIT(0)
#define SEND_CTXT_CREDIT_CTRL		0x10
#define SEND_CTXT_CREDIT_CTRL_THRESHOLD_MASK	UINT64_C(0x7ff)
#define SEND_CTXT_CREDIT_CTRL_EARLY_RETURN	HFI_BIT(16)
#define SEND_CTXT_CREDIT_CTRL_CREDIT_INTR	HFI_BIT(17)
#define SEND_CTXT_CREDIT_RETURN_ADDR	0x20
#define SEND_CTXT_CREDIT_RETURN_ADDR_ADDRESS_MASK UINT64_C(0xffffffffffc0)
#define SEND_CTXT_CREDIT_FORCE		0x28
#define SEND_CTXT_CREDIT_FORCE_FORCE_RETURN	HFI_BIT(0)
#define SEND_CTXT_ERR_STATUS		0x40
#define SEND_CTXT_ERR_MASK		0x48
#define SEND_CTXT_ERR_CLEAR		0x50
#define SEND_CTXT_CHECK_ENABLE		0x80
#define SEND_CTXT_CHECK_VL		0x88	/* bit per VL the context may not send on */
#define SEND_CTXT_CHECK_JOB_KEY		0x90
#define SEND_CTXT_CHECK_PARTITION_KEY	0x98
#define SEND_CTXT_CHECK_SLID		0xa0
#define SEND_CTXT_CHECK_OPCODE		0xa8

/* SEND_CTXT_ERR_STATUS: every one halts the context (chip.c sc_err_status_flags). */
#define SEND_CTXT_ERR_STATUS_PIO_INCONSISTENT_SOP_ERR	HFI_BIT(0)	/* packet dropped */
#define SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR	HFI_BIT(1)	/* packet dropped */
#define SEND_CTXT_ERR_STATUS_PIO_WRITE_CROSSES_BOUNDARY_ERR HFI_BIT(2)	/* write dropped */
#define SEND_CTXT_ERR_STATUS_PIO_WRITE_OVERFLOW_ERR	HFI_BIT(3)	/* write dropped */
#define SEND_CTXT_ERR_STATUS_PIO_WRITE_OUT_OF_BOUNDS_ERR HFI_BIT(4)	/* write dropped */
/*
 * Bits 5..63 are reserved on the chip. The software HFI reports two halts of
 * its own in the top bits (doc/guides/software_hfi.md): a credit return to an
 * address outside DMA memory, and an enable with a size or place in PIO memory
 * the chip has not (depth 0 or over 1024 blocks, past the memory, overlapping
 * another enabled context).
 */
#define SEND_CTXT_ERR_STATUS_SW_CONFIG_ERR		HFI_BIT(62)
#define SEND_CTXT_ERR_STATUS_SW_CREDIT_RETURN_ERR	HFI_BIT(63)

/* SEND_CTXT_CHECK_ENABLE (what hfi1_pkt_default_send_ctxt_mask() sets) */
#define SEND_CTXT_CHECK_ENABLE_CHECK_ENABLE			HFI_BIT(0)
#define SEND_CTXT_CHECK_ENABLE_CHECK_VL				HFI_BIT(1)
#define SEND_CTXT_CHECK_ENABLE_CHECK_JOB_KEY			HFI_BIT(2)
#define SEND_CTXT_CHECK_ENABLE_CHECK_PARTITION_KEY		HFI_BIT(3)
#define SEND_CTXT_CHECK_ENABLE_CHECK_SLID			HFI_BIT(4)
#define SEND_CTXT_CHECK_ENABLE_CHECK_OPCODE			HFI_BIT(5)
#define SEND_CTXT_CHECK_ENABLE_CHECK_VL_MAPPING			HFI_BIT(6)
#define SEND_CTXT_CHECK_ENABLE_CHECK_BYPASS_VL_MAPPING		HFI_BIT(7)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_RAW			HFI_BIT(8)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_RAW_IPV6		HFI_BIT(9)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_GRH			HFI_BIT(10)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_BYPASS			HFI_BIT(11)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_KDETH_PACKETS		HFI_BIT(12)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_NON_KDETH_PACKETS	HFI_BIT(13)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_IB_PACKETS	HFI_BIT(14)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_BYPASS_PACKETS HFI_BIT(15)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_PBC_TEST		HFI_BIT(16)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_BAD_PKT_LEN		HFI_BIT(17)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_LONG_IB_PACKETS	HFI_BIT(18)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_LONG_BYPASS_PACKETS	HFI_BIT(19)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_PBC_STATIC_RATE_CONTROL	HFI_BIT(20)
#define SEND_CTXT_CHECK_ENABLE_DISALLOW_BYPASS_BAD_PKT_LEN	HFI_BIT(21)
#define SEND_CTXT_CHECK_PARTITION_KEY_VALUE_MASK	UINT64_C(0xffff)
#define SEND_CTXT_CHECK_OPCODE_MASK_SHIFT		8

/* The credit return the chip DMA-writes: one QW at CREDIT_RETURN_ADDR + 8 * (context & 7). */
#define CR_COUNTER_MASK			UINT64_C(0x7ff)	/* blocks freed, free-running */
#define CR_STATUS			HFI_BIT(11)
#define CR_CREDIT_RETURN_DUE_TO_PBC	HFI_BIT(12)
#define CR_CREDIT_RETURN_DUE_TO_THRESHOLD HFI_BIT(13)
#define CR_CREDIT_RETURN_DUE_TO_ERR	HFI_BIT(14)
#define CR_CREDIT_RETURN_DUE_TO_FORCE	HFI_BIT(15)
#define HFI_CR_GROUP			8	/* contexts sharing one 64-byte return area */

/*
 * PIO send buffers: BAR0 + 0x2000000, 32 MB, write only. Context c's blocks
 * are at + ((c & 0xff) << 16) + 64 * block; the first block of a packet is
 * written through the start-of-packet alias 16 MB above (pio_copy.c).
 */
#define HFI_PIO_BASE			(HFI_TXE + 0x800000)	/* TXE_PIO_SEND */
#define HFI_PIO_SIZE			(UINT32_C(32) << 20)
#define HFI_PIO_SOP_DISTANCE		(HFI_PIO_SIZE / 2)
#define HFI_PIO_CTXT_SHIFT		16
#define HFI_PIO_CTXT_MASK		UINT32_C(0xff)
#define HFI_PIO_ADDR(c, off, sop)	(HFI_PIO_BASE + ((sop) ? HFI_PIO_SOP_DISTANCE : 0) + \
					 (((uint32_t)(c) & HFI_PIO_CTXT_MASK) << HFI_PIO_CTXT_SHIFT) + \
					 (uint32_t)(off))
#define HFI_PIO_BLOCK			64	/* PIO_BLOCK_SIZE: one credit */
#define HFI_PIO_BLOCK_QWS		(HFI_PIO_BLOCK / 8)
#define HFI_PIO_MAX_BLOCKS		1024	/* PIO_MAX_BLOCKS: a context's largest depth */

/* ---- 9B (IB-format) packets ---- */
/*
 * The receive side of 9B packets: SC15 (VL15) packets go to the RCV_VL15
 * context; the others through RSM, then the QP map (RCV_CTRL QP map enable),
 * a table of 256 context numbers indexed by QPN[8:1] (chip.c init_qpmap_table).
 */
#define RCV_VL15			(HFI_RXE + 0x48)
#define RCV_VL15_CONTEXT_MASK		UINT64_C(0xff)
#define RCV_QP_MAP_TABLE		(HFI_RXE + 0x100)
#define HFI_QP_MAP_ENTRIES		256	/* one byte each, 8 per CSR */
#define RCV_HDR_SIZE_HDR_SIZE_MASK	UINT64_C(0x1f)
#define HFI_RCV_HDR_SIZE_MIN		2	/* hfi1's valid range for RcvHdrSize */
#define HFI_RCV_HDR_SIZE_MAX		31

#endif /* HFI_REGS_H */
