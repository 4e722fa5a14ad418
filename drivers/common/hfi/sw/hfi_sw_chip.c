/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The software HFI's bring-up CSRs (a struct sw_csr_block of the model):
 * the CCE, ASIC, MISC, DC and TXE registers that hfi_chip.c programs, with
 * the chip's reset values and semantics (read-only status, write 1 to
 * clear, self-clearing commands, the ASIC mutex), and an 8051 that answers
 * host commands as hfi1's functional simulator implementation code expects:
 * always ready, no firmware to load, configuration fields in its data RAM,
 * a link that goes from Polling to LinkUp on its own.
 *
 * Also here: the model's CSR-write trace and open hook (sw/hfi_fault.h),
 * and the bring-up faults (an 8051 that stops answering, a link that stays
 * in Polling).
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_fault.h"
#include "hfi_sw_priv.h"

/* CCE_REVISION2 of the model: HFI 0, hfi1's functional simulator, revision 1. */
#define SW_ICODE		3	/* ICODE_FUNCTIONAL_SIMULATOR */
#define SW_IREV			1
#define SW_SDMA_MEM_SIZE	UINT64_C(0x20000)	/* 128 KiB: the chip's is not in hfi1 */
#define SW_HCMD_FAILED		1	/* return code for a command the model refuses */
#define SW_TRACE_MAX		(1u << 20)

enum sw_reg_kind {
	R_RW,		/* holds what is written */
	R_STATUS,	/* read-only, bits the model sets */
	R_CLEAR,	/* write 1 to clear bits of the R_STATUS at .peer; reads 0 */
	R_CONST,	/* read-only value .reset */
	R_SPECIAL,	/* its own semantics (sw_chip_read/write switch) */
};

struct sw_reg {
	uint32_t off;
	uint8_t n;		/* consecutive CSRs */
	uint8_t kind;
	uint32_t peer;		/* R_CLEAR: its status CSR */
	uint64_t reset;
};

/* Every CSR of the block, in address order. */
static const struct sw_reg sw_regs[] = {
	{ CCE_REVISION2, 1, R_SPECIAL, 0, 0 },
	{ CCE_CTRL, 1, R_SPECIAL, 0, 0 },
	{ CCE_STATUS, 1, R_STATUS, 0, 0 },
	{ CCE_SCRATCH, CCE_NUM_SCRATCH, R_RW, 0, 0 },
	{ CCE_DC_CTRL, 1, R_RW, 0, CCE_DC_CTRL_DC_RESET },	/* the DC powers up in reset */
	{ CCE_INT_STATUS, CCE_NUM_INT_CSRS, R_STATUS, 0, 0 },
	{ CCE_INT_MASK, CCE_NUM_INT_CSRS, R_RW, 0, 0 },
	{ CCE_INT_CLEAR, CCE_NUM_INT_CSRS, R_CLEAR, CCE_INT_STATUS, 0 },
	{ ASIC_CFG_SCRATCH, 1, R_RW, 0, 0 },
	{ ASIC_CFG_MUTEX, 1, R_SPECIAL, 0, 0 },
	{ ASIC_QSFP1_OUT, 1, R_RW, 0, 0 },
	{ ASIC_QSFP2_OUT, 1, R_RW, 0, 0 },
	{ MISC_CFG_FW_CTRL, 1, R_SPECIAL, 0, 0 },
	{ MISC_ERR_STATUS, 1, R_STATUS, 0, 0 },
	{ MISC_ERR_MASK, 1, R_RW, 0, 0 },
	{ MISC_ERR_CLEAR, 1, R_CLEAR, MISC_ERR_STATUS, 0 },
	{ DCC_CFG_RESET, 1, R_RW, 0, 0 },
	/* LinkState is the fabric port's logical state (sw_chip_read/write) */
	{ DCC_CFG_PORT_CONFIG, 1, R_SPECIAL, 0, 0 },
	/* TargetDLID becomes the port's LID on a fabric run by a subnet manager */
	{ DCC_CFG_PORT_CONFIG1, 1, R_SPECIAL, 0, 0 },
	{ DCC_CFG_SC_VL_TABLE_15_0, 2, R_RW, 0, 0 },
	{ DCC_CFG_LED_CNTRL, 1, R_RW, 0, 0 },
	{ DCC_ERR_FLG_EN, 1, R_RW, 0, 0 },
	{ DC_DC8051_CFG_RAM_ACCESS_SETUP, 1, R_RW, 0, 0 },
	{ DC_DC8051_CFG_RAM_ACCESS_CTRL, 1, R_SPECIAL, 0, 0 },
	{ DC_DC8051_CFG_RAM_ACCESS_WR_DATA, 1, R_SPECIAL, 0, 0 },
	{ DC_DC8051_CFG_RAM_ACCESS_STATUS, 1, R_STATUS, 0, 0 },
	{ DC_DC8051_CFG_RAM_ACCESS_RD_DATA, 1, R_STATUS, 0, 0 },
	{ DC_DC8051_CFG_HOST_CMD_0, 1, R_SPECIAL, 0, 0 },
	{ DC_DC8051_CFG_HOST_CMD_1, 1, R_STATUS, 0, 0 },
	{ DC_DC8051_CFG_LOCAL_GUID, 1, R_SPECIAL, 0, 0 },
	{ DC_DC8051_STS_CUR_STATE, 1, R_SPECIAL, 0, 0 },
	{ DC_DC8051_CFG_RST, 1, R_RW, 0, 0 },	/* a simulator's 8051 runs from power-up */
	{ DC_DC8051_DBG_ERR_INFO_SET_BY_8051, 1, R_STATUS, 0, 0 },
	{ DC_DC8051_ERR_FLG, 1, R_SPECIAL, 0, 0 },
	{ DC_DC8051_ERR_CLR, 1, R_CLEAR, DC_DC8051_ERR_FLG, 0 },
	{ DC_DC8051_ERR_EN, 1, R_RW, 0, 0 },
	{ SEND_CTRL, 1, R_RW, 0, 0 },
	{ SEND_DMA_MEM_SIZE, 1, R_CONST, 0, SW_SDMA_MEM_SIZE },
	{ SEND_DMA_ERR_STATUS, 1, R_STATUS, 0, 0 },
	{ SEND_DMA_ERR_MASK, 1, R_RW, 0, 0 },
	{ SEND_DMA_ERR_CLEAR, 1, R_CLEAR, SEND_DMA_ERR_STATUS, 0 },
	{ SEND_EGRESS_ERR_STATUS, 1, R_STATUS, 0, 0 },
	{ SEND_EGRESS_ERR_MASK, 1, R_RW, 0, 0 },
	{ SEND_EGRESS_ERR_CLEAR, 1, R_CLEAR, SEND_EGRESS_ERR_STATUS, 0 },
	{ SEND_SC2VLT0, 4, R_RW, 0, 0 },
	{ SEND_LEN_CHECK0, 2, R_RW, 0, 0 },
	{ SEND_CM_TIMER_CTRL, 1, R_RW, 0, 0 },
	{ SEND_CM_LOCAL_AU_TABLE0_TO3, 2, R_RW, 0, 0 },
};

#define SW_NREGS	(sizeof(sw_regs) / sizeof(sw_regs[0]))
#define SW_NVALS	128	/* room for the CSRs of all the entries above */

struct sw_trace {
	struct hfi_csr_write *w;
	size_t n;
	size_t cap;
};

struct sw_chip {
	pthread_mutex_t lock;			/* the block, the 8051, the trace */
	uint16_t slot[SW_NREGS];		/* first value of each entry in val[] */
	uint64_t val[SW_NVALS];
	/* the 8051 */
	uint32_t phys;				/* physical link state, PLS_* */
	bool lni;				/* Polling: training under way */
	uint32_t ram_addr;			/* next auto-incremented write */
	uint8_t dram[HFI_8051_DATA_MEM_SIZE];	/* its data RAM: configuration fields */
	bool fault_stuck;
	bool fault_polling;
	/* trace */
	atomic_bool tracing;
	struct sw_trace trace;
};

static int
reg_index(uint32_t off, unsigned int *elem)
{
	unsigned int i;

	for (i = 0; i < SW_NREGS; i++)
		if (off >= sw_regs[i].off && off < sw_regs[i].off + 8u * sw_regs[i].n &&
		    (off - sw_regs[i].off) % 8 == 0) {
			*elem = (off - sw_regs[i].off) / 8;
			return (int)i;
		}
	return -1;
}

static uint64_t *
reg_val(struct sw_chip *c, uint32_t off)
{
	unsigned int e;
	int i = reg_index(off, &e);

	return &c->val[c->slot[i] + e];
}

static bool
chip_claims(const struct hfi_sw *sw, uint32_t off)
{
	unsigned int e;

	(void)sw;
	return reg_index(off, &e) >= 0;
}

int
sw_chip_init(struct hfi_sw *sw)
{
	struct sw_chip *c = calloc(1, sizeof(*c));
	unsigned int i, k, n = 0;

	if (c == NULL)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	for (i = 0; i < SW_NREGS; i++) {
		if (n + sw_regs[i].n > SW_NVALS) {
			free(c);
			return -E2BIG;	/* SW_NVALS is too small for sw_regs[] */
		}
		c->slot[i] = (uint16_t)n;
		for (k = 0; k < sw_regs[i].n; k++)
			c->val[n++] = sw_regs[i].reset;
	}
	c->phys = PLS_OFFLINE;
	sw->chip = c;
	return 0;
}

void
sw_chip_fini(struct hfi_sw *sw)
{
	struct sw_chip *c = sw->chip;

	if (c == NULL)
		return;
	free(c->trace.w);
	pthread_mutex_destroy(&c->lock);
	free(c);
	sw->chip = NULL;
}

/* ---- the 8051 ---- */

static bool
dc_running(struct sw_chip *c)
{
	return !(*reg_val(c, CCE_DC_CTRL) & CCE_DC_CTRL_DC_RESET) &&
	       !(*reg_val(c, DC_DC8051_CFG_RST) & DC_DC8051_CFG_RST_M8051W);
}

/* Where a configuration field lives in the data RAM (read_8051_config's layout). */
static int
field_addr(uint32_t field, uint32_t lane)
{
	uint32_t addr = lane < 4 ? 4 * HFI_8051_NUM_GENERAL_FIELDS +
				   lane * 4 * HFI_8051_NUM_LANE_FIELDS : 0;

	addr += 4 * field;
	return addr + 4 <= HFI_8051_DATA_MEM_SIZE ? (int)addr : -1;
}

/*
 * Link training as a functional simulator does it: Polling, then LinkUp
 * (the logical state Init, in the fabric port) with the LinkUp message,
 * when the fabric port's link is up and no fault holds the link in Polling.
 * The driver sees it on its next look at the 8051's status.
 */
static void
lni_step(struct hfi_sw *sw, struct sw_chip *c)
{
	if (!c->lni || c->fault_polling ||
	    atomic_load(&sw->port->link) != HFI_LINK_UP)
		return;
	c->lni = false;
	c->phys = PLS_LINKUP;
	fab_port_trained(sw->fab, sw->slot, true);
	*reg_val(c, DC_DC8051_DBG_ERR_INFO_SET_BY_8051) |= HFI_8051_LINKUP_ACHIEVED;
	*reg_val(c, DC_DC8051_ERR_FLG) |= DC_DC8051_ERR_FLG_SET_BY_8051;
}

static unsigned int
change_phy_state(struct hfi_sw *sw, struct sw_chip *c, uint32_t state)
{
	uint64_t *info = reg_val(c, DC_DC8051_DBG_ERR_INFO_SET_BY_8051);

	switch (state) {
	case PLS_POLLING:
		/* LNI errors are cleared only when polling starts. */
		*info &= ~(HFI_8051_FAILED_LNI << DC_DC8051_DBG_ERR_INFO_SET_BY_8051_ERROR_SHIFT);
		c->phys = PLS_POLLING;
		c->lni = true;
		return HCMD_SUCCESS;
	case PLS_OFFLINE:
	case PLS_DISABLED:
		c->phys = state;
		c->lni = false;
		fab_port_trained(sw->fab, sw->slot, false);
		return HCMD_SUCCESS;
	default:
		return SW_HCMD_FAILED;	/* loopback and quick link-up are not modelled */
	}
}

/* One host command; the 8051 clears its host messages on every command. */
static uint64_t
run_command(struct hfi_sw *sw, struct sw_chip *c, uint64_t cmd0)
{
	uint32_t type = (uint32_t)((cmd0 >> DC_DC8051_CFG_HOST_CMD_0_REQ_TYPE_SHIFT) &
				   DC_DC8051_CFG_HOST_CMD_0_REQ_TYPE_MASK);
	uint64_t data = (cmd0 >> DC_DC8051_CFG_HOST_CMD_0_REQ_DATA_SHIFT) &
			DC_DC8051_CFG_HOST_CMD_0_REQ_DATA_MASK;
	uint64_t *info = reg_val(c, DC_DC8051_DBG_ERR_INFO_SET_BY_8051);
	uint64_t rsp = 0;
	unsigned int code = HCMD_SUCCESS;
	uint32_t v;
	int addr;

	*info = (*info & ~DC_DC8051_DBG_ERR_INFO_SET_BY_8051_HOST_MSG_MASK) |
		HFI_8051_HOST_REQ_DONE;
	switch (type) {
	case HCMD_LOAD_CONFIG_DATA:
	case HCMD_READ_CONFIG_DATA:
		addr = field_addr((uint32_t)(data >> LOAD_DATA_FIELD_ID_SHIFT) & 0xff,
				  (uint32_t)(data >> LOAD_DATA_LANE_ID_SHIFT) & 0xff);
		if (addr < 0) {
			code = SW_HCMD_FAILED;
		} else if (type == HCMD_LOAD_CONFIG_DATA) {
			v = (uint32_t)(data & LOAD_DATA_DATA_MASK);
			memcpy(&c->dram[addr], &v, sizeof(v));
		} else {
			memcpy(&v, &c->dram[addr], sizeof(v));
			rsp = v;
		}
		break;
	case HCMD_CHANGE_PHY_STATE:
		code = change_phy_state(sw, c, (uint32_t)(data & 0xff));
		break;
	case HCMD_INTERFACE_TEST:
		rsp = data;
		break;
	default:
		code = SW_HCMD_FAILED;
		break;
	}
	return DC_DC8051_CFG_HOST_CMD_1_COMPLETED |
	       (uint64_t)code << DC_DC8051_CFG_HOST_CMD_1_RETURN_CODE_SHIFT |
	       (rsp & DC_DC8051_CFG_HOST_CMD_1_RSP_DATA_MASK) <<
	       DC_DC8051_CFG_HOST_CMD_1_RSP_DATA_SHIFT;
}

/*
 * HOST_CMD_0: REQ_NEW going high starts a command, which a running 8051
 * completes in HOST_CMD_1; the host clearing REQ_NEW clears HOST_CMD_1.
 */
static void
write_host_cmd(struct hfi_sw *sw, struct sw_chip *c, uint64_t v)
{
	uint64_t *cmd0 = reg_val(c, DC_DC8051_CFG_HOST_CMD_0);
	uint64_t *cmd1 = reg_val(c, DC_DC8051_CFG_HOST_CMD_1);
	uint64_t old = *cmd0;

	*cmd0 = v;
	if (!(v & DC_DC8051_CFG_HOST_CMD_0_REQ_NEW))
		*cmd1 = 0;
	else if (!(old & DC_DC8051_CFG_HOST_CMD_0_REQ_NEW))
		*cmd1 = dc_running(c) && !c->fault_stuck ? run_command(sw, c, v) : 0;
}

/*
 * RAM access: a read of the data RAM completes at once into RD_DATA; a
 * write goes to the address set with WRITE_ENA, auto-incremented if asked.
 * The model has no code RAM (a functional simulator runs no 8051 firmware):
 * code writes complete and are dropped, code reads return 0.
 */
static void
write_ram_ctrl(struct sw_chip *c, uint64_t v)
{
	bool code = *reg_val(c, DC_DC8051_CFG_RAM_ACCESS_SETUP) &
		    DC_DC8051_CFG_RAM_ACCESS_SETUP_RAM_SEL;
	uint32_t addr = (uint32_t)(v & DC_DC8051_CFG_RAM_ACCESS_CTRL_ADDRESS_MASK) & ~7u;
	uint64_t *status = reg_val(c, DC_DC8051_CFG_RAM_ACCESS_STATUS);
	uint64_t rd = 0;

	*reg_val(c, DC_DC8051_CFG_RAM_ACCESS_CTRL) = v;
	*status = 0;
	if (v & DC_DC8051_CFG_RAM_ACCESS_CTRL_READ_ENA) {
		if (!code && addr + 8 <= HFI_8051_DATA_MEM_SIZE)
			memcpy(&rd, &c->dram[addr], sizeof(rd));
		*reg_val(c, DC_DC8051_CFG_RAM_ACCESS_RD_DATA) = rd;
		*status = DC_DC8051_CFG_RAM_ACCESS_STATUS_ACCESS_COMPLETED;
	}
	if (v & DC_DC8051_CFG_RAM_ACCESS_CTRL_WRITE_ENA)
		c->ram_addr = addr;
}

static void
write_ram_data(struct sw_chip *c, uint64_t v)
{
	uint64_t setup = *reg_val(c, DC_DC8051_CFG_RAM_ACCESS_SETUP);

	if (!(*reg_val(c, DC_DC8051_CFG_RAM_ACCESS_CTRL) & DC_DC8051_CFG_RAM_ACCESS_CTRL_WRITE_ENA))
		return;
	if (!(setup & DC_DC8051_CFG_RAM_ACCESS_SETUP_RAM_SEL) &&
	    c->ram_addr + 8 <= HFI_8051_DATA_MEM_SIZE)
		memcpy(&c->dram[c->ram_addr], &v, sizeof(v));
	if (setup & DC_DC8051_CFG_RAM_ACCESS_SETUP_AUTO_INCR_ADDR)
		c->ram_addr += 8;
	*reg_val(c, DC_DC8051_CFG_RAM_ACCESS_STATUS) =
		DC_DC8051_CFG_RAM_ACCESS_STATUS_ACCESS_COMPLETED;
}

/* ---- the block ---- */

static uint64_t
chip_read(struct hfi_sw *sw, uint32_t off)
{
	struct sw_chip *c = sw->chip;
	unsigned int e;
	int i = reg_index(off, &e);
	uint64_t v;

	pthread_mutex_lock(&c->lock);
	v = c->val[c->slot[i] + e];
	switch (sw_regs[i].kind) {
	case R_CLEAR:
		v = 0;
		break;
	case R_SPECIAL:
		switch (off) {
		case CCE_REVISION2:
			v = (uint64_t)SW_ICODE << CCE_REVISION2_IMPL_CODE_SHIFT |
			    (uint64_t)SW_IREV << CCE_REVISION2_IMPL_REVISION_SHIFT;
			break;
		case CCE_CTRL:
			v = 0;	/* its bits are commands */
			break;
		case DC_DC8051_CFG_LOCAL_GUID:
			/* Valid once the DC is out of reset, as read_guid expects. */
			v = *reg_val(c, CCE_DC_CTRL) & CCE_DC_CTRL_DC_RESET ? 0 :
			    sw->port->guid;
			break;
		case DC_DC8051_STS_CUR_STATE:
			v = (uint64_t)DC_DC8051_STS_CUR_STATE_FIRMWARE_READY <<
			    DC_DC8051_STS_CUR_STATE_FIRMWARE_SHIFT | c->phys;
			lni_step(sw, c);
			break;
		case DC_DC8051_ERR_FLG:
			lni_step(sw, c);
			break;
		case DCC_CFG_PORT_CONFIG:
			v = (v & ~(DCC_CFG_PORT_CONFIG_LINK_STATE_MASK <<
				   DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT)) |
			    (uint64_t)atomic_load(&sw->port->lstate) <<
			    DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT;
			break;
		default:
			break;
		}
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&c->lock);
	return v;
}

static void
chip_write(struct hfi_sw *sw, uint32_t off, uint64_t val)
{
	struct sw_chip *c = sw->chip;
	unsigned int e;
	int i = reg_index(off, &e);
	uint64_t *p;

	pthread_mutex_lock(&c->lock);
	p = &c->val[c->slot[i] + e];
	switch (sw_regs[i].kind) {
	case R_RW:
		*p = val;
		break;
	case R_CLEAR:
		*reg_val(c, sw_regs[i].peer + 8 * e) &= ~val;
		break;
	case R_SPECIAL:
		switch (off) {
		case ASIC_CFG_MUTEX:
			/* Taken by writing a mask when free, released by writing 0. */
			val &= 0xff;
			if (val == 0 || *p == 0)
				*p = val;
			break;
		case MISC_CFG_FW_CTRL:
			/* The RSA status field is the engine's: idle in the model. */
			*p = val & ~(MISC_CFG_FW_CTRL_RSA_STATUS_MASK <<
				     MISC_CFG_FW_CTRL_RSA_STATUS_SHIFT);
			break;
		case DC_DC8051_CFG_HOST_CMD_0:
			write_host_cmd(sw, c, val);
			break;
		case DC_DC8051_CFG_RAM_ACCESS_CTRL:
			write_ram_ctrl(c, val);
			break;
		case DC_DC8051_CFG_RAM_ACCESS_WR_DATA:
			write_ram_data(c, val);
			break;
		case DCC_CFG_PORT_CONFIG1:
			/*
			 * The LID the chip answers to: under a subnet manager the
			 * fabric routes to the port by it from now on. hfi1 writes 0
			 * for a LID a 9B header cannot carry; the port then keeps the
			 * LID it has (the model's limit: 16 bits here).
			 */
			*p = val;
			if (fab_has_switch(sw->fab) &&
			    ((val >> DCC_CFG_PORT_CONFIG1_TARGET_DLID_SHIFT) &
			     DCC_CFG_PORT_CONFIG1_TARGET_DLID_MASK) != 0)
				(void)fab_port_set_lid(sw->fab, sw->slot,
					(uint32_t)((val >> DCC_CFG_PORT_CONFIG1_TARGET_DLID_SHIFT) &
						   DCC_CFG_PORT_CONFIG1_TARGET_DLID_MASK));
			break;
		case DCC_CFG_PORT_CONFIG:
			/*
			 * The other fields hold what is written; LinkState takes the
			 * moves hfi1's set_logical_state makes (Init -> Armed, Armed
			 * -> Active) and ignores any other value (a model choice:
			 * hfi1 writes no other, the chip's answer is not known).
			 */
			*p = val;
			fab_lstate_write(sw->fab, sw->slot,
					 (uint32_t)((val >> DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT) &
						    DCC_CFG_PORT_CONFIG_LINK_STATE_MASK));
			break;
		default:
			break;	/* read-only */
		}
		break;
	default:
		break;	/* read-only */
	}
	pthread_mutex_unlock(&c->lock);
}

const struct sw_csr_block sw_chip_block = {
	.claims = chip_claims,
	.read = chip_read,
	.write = chip_write,
};

/* ---- trace, open hook, faults ---- */

void
sw_trace_write(struct hfi_sw *sw, uint32_t off, uint64_t val)
{
	struct sw_chip *c = sw->chip;
	struct sw_trace *t = &c->trace;

	if (!atomic_load_explicit(&c->tracing, memory_order_relaxed))
		return;
	pthread_mutex_lock(&c->lock);
	if (t->n == t->cap && t->cap < SW_TRACE_MAX) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct hfi_csr_write *w = realloc(t->w, cap * sizeof(*w));

		if (w != NULL) {
			t->w = w;
			t->cap = cap;
		}
	}
	if (t->n < t->cap) {
		t->w[t->n].off = off;
		t->w[t->n].val = val;
		t->n++;
	}
	pthread_mutex_unlock(&c->lock);
}

static int
sw_target(struct hfi_dev *dev, struct hfi_sw **sw)
{
	*sw = NULL;
	if (dev == NULL || !hfi_sw_is(dev))
		return hfi_set_error(-ENOTSUP, "this needs a software HFI");
	*sw = sw_of(dev);
	return 0;
}

int
hfi_sw_csr_trace_start(struct hfi_dev *dev)
{
	struct hfi_sw *sw;
	int rc = sw_target(dev, &sw);

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&sw->chip->lock);
	sw->chip->trace.n = 0;
	atomic_store(&sw->chip->tracing, true);
	pthread_mutex_unlock(&sw->chip->lock);
	return 0;
}

int
hfi_sw_csr_trace_stop(struct hfi_dev *dev, struct hfi_csr_write **writes, size_t *n)
{
	struct hfi_sw *sw;
	struct sw_trace *t;
	int rc = sw_target(dev, &sw);

	if (rc != 0)
		return rc;
	t = &sw->chip->trace;
	pthread_mutex_lock(&sw->chip->lock);
	atomic_store(&sw->chip->tracing, false);
	*writes = t->w;
	*n = t->n;
	t->w = NULL;
	t->n = t->cap = 0;
	pthread_mutex_unlock(&sw->chip->lock);
	if (*writes == NULL && (*writes = malloc(sizeof(**writes))) == NULL)
		return hfi_set_error(-ENOMEM, "out of memory");
	return 0;
}

static _Atomic(hfi_sw_open_hook_t) open_hook;
static void *_Atomic open_hook_arg;

void
hfi_sw_set_open_hook(hfi_sw_open_hook_t hook, void *arg)
{
	atomic_store(&open_hook_arg, arg);
	atomic_store(&open_hook, hook);
}

void
sw_open_hook(struct hfi_dev *dev)
{
	hfi_sw_open_hook_t hook = atomic_load(&open_hook);

	if (hook != NULL)
		hook(dev, atomic_load(&open_hook_arg));
}

/* Set the 8051 fault flag at offset `flag` of struct sw_chip. */
static int
set_fault(struct hfi_dev *dev, size_t flag, bool on)
{
	struct hfi_sw *sw;
	int rc = sw_target(dev, &sw);

	if (rc == 0) {
		pthread_mutex_lock(&sw->chip->lock);
		*(bool *)((char *)sw->chip + flag) = on;
		pthread_mutex_unlock(&sw->chip->lock);
	}
	return rc;
}

int
hfi_fault_8051_stuck(struct hfi_dev *dev, bool on)
{
	return set_fault(dev, offsetof(struct sw_chip, fault_stuck), on);
}

int
hfi_fault_link_polling(struct hfi_dev *dev, bool on)
{
	return set_fault(dev, offsetof(struct sw_chip, fault_polling), on);
}
