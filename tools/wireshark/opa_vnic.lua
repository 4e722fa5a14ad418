-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 dpdk-opa-vnic authors
--
-- Wireshark dissectors for what crosses a dpdk-opa-vnic fabric, as the
-- software fabric's capture writes it (doc/guides/software_hfi.md, Capture):
--   interface LINKTYPE_USER0 (147): raw OPA 16B packets, LRH .. tail;
--   interface LINKTYPE_ERF (197), ERF type 29: OPA 9B packets, LRH .. ICRC,
--     among them the MADs of the fabric's MAD channel.
-- Wireshark has no 16B dissector and stops at the VEMA vendor header, so:
--   opa16b    the 16B LRH (every field), pad, ICRC and tail
--   opa_vnic  the VNIC L4 header (vesw id); the inner frame goes to Ethernet
--   opa9b     the 9B LRH, BTH and DETH (replaces Wireshark's ERF type 29 route)
--   vema      VEMA MADs (class 0x34): every attribute, status and trap
--   opa_smp   SMPs (classes 0x01, 0x81), LID-routed and directed route
-- Other MAD classes go to Wireshark's own OPA MAD dissector.
--
-- Load it with `tshark -X lua_script:opa_vnic.lua` or copy it into the
-- personal Lua plugin folder (~/.local/lib/wireshark/plugins/). Layouts
-- follow lib/vema/vema_mad.h and drivers/common/hfi/hfi_smp.h; bad or
-- truncated packets get an expert item of group Malformed, never a Lua error.

local band, bor, rshift, lshift, bxor, bnot
if bit32 then
	band, bor, rshift, lshift, bxor, bnot =
		bit32.band, bit32.bor, bit32.rshift, bit32.lshift, bit32.bxor, bit32.bnot
else
	band, bor, rshift, lshift, bxor, bnot = bit.band, bit.bor, bit.rshift, bit.lshift,
		bit.bxor, bit.bnot
end
-- BitOp (Lua 5.4 builds) returns signed 32-bit results; make them unsigned.
local function u32(v)
	if v < 0 then
		return v + 4294967296
	end
	return v
end

local MALFORMED = expert.group.MALFORMED
local ERROR = expert.severity.ERROR

-- ---------------------------------------------------------------------------
-- CRC-32 (IEEE 802.3, reflected): the ICRC as the software HFI defines it
-- (drivers/common/hfi/hfi_icrc.h). The real OPA ICRC is not public.
local crc_table = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if band(c, 1) ~= 0 then
			c = bxor(rshift(c, 1), 0xedb88320)
		else
			c = rshift(c, 1)
		end
	end
	crc_table[i] = c
end

local function crc32(tvb, off, len)
	local c = 0xffffffff
	local bytes = tvb:bytes(off, len)
	for i = 0, len - 1 do
		c = bxor(crc_table[band(bxor(c, bytes:get_index(i)), 0xff)], rshift(c, 8))
	end
	return u32(bxor(c, 0xffffffff))
end

local icrc_status_vals = { [0] = "Unverified", [1] = "Good", [2] = "Bad" }

-- ---------------------------------------------------------------------------
-- Table-driven layouts: each entry { name, offset, kind, count, label, base/vals }.
-- kind: u8 u16 u24 u32 u64 bytes ether gid str; count > 1 repeats a scalar.

local function make_fields(prefix, fields, spec)
	for _, f in ipairs(spec) do
		local abbr = prefix .. "." .. f[1]
		local label, extra = f[5] or f[1], f[6]
		local pf
		local b = base.HEX
		local vals = nil
		if type(extra) == "table" then
			vals = extra
			b = f[7] or base.DEC
		elseif extra ~= nil then
			b = extra
		end
		if f[3] == "u8" then
			pf = ProtoField.uint8(abbr, label, b, vals)
		elseif f[3] == "u16" then
			pf = ProtoField.uint16(abbr, label, b, vals)
		elseif f[3] == "u24" then
			pf = ProtoField.uint24(abbr, label, b, vals)
		elseif f[3] == "u32" then
			pf = ProtoField.uint32(abbr, label, b, vals)
		elseif f[3] == "u64" then
			pf = ProtoField.uint64(abbr, label, b)
		elseif f[3] == "ether" then
			pf = ProtoField.ether(abbr, label)
		elseif f[3] == "gid" then
			pf = ProtoField.ipv6(abbr, label)
		elseif f[3] == "str" then
			pf = ProtoField.string(abbr, label)
		else
			pf = ProtoField.bytes(abbr, label)
		end
		f.pf = pf
		table.insert(fields, pf)
	end
	return spec
end

local kind_size = { u8 = 1, u16 = 2, u24 = 3, u32 = 4, u64 = 8, ether = 6, gid = 16 }

-- Bytes the layout spans.
local function layout_size(spec)
	local n = 0
	for _, f in ipairs(spec) do
		local sz = kind_size[f[3]]
		local e
		if sz then
			e = f[2] + sz * (f[4] or 1)
		else
			e = f[2] + (f[4] or 1)
		end
		if e > n then
			n = e
		end
	end
	return n
end

-- Add every field of spec found at tvb[off..]; those cut off by the end of
-- the data are left out. Returns true when the whole layout was there.
local function add_layout(tree, tvb, off, spec)
	local avail = tvb:len()
	local whole = true
	for _, f in ipairs(spec) do
		local sz = kind_size[f[3]]
		if sz and (f[4] or 1) > 1 then
			for i = 0, f[4] - 1 do
				local o = off + f[2] + i * sz
				if o + sz <= avail then
					tree:add(f.pf, tvb(o, sz)):prepend_text(string.format("[%d] ", i))
				else
					whole = false
				end
			end
		else
			local len = sz or f[4] or 1
			local o = off + f[2]
			if o + len <= avail then
				tree:add(f.pf, tvb(o, len))
			else
				whole = false
			end
		end
	end
	return whole
end

-- ---------------------------------------------------------------------------
-- OPA 16B (opa-vnic-spec §1.1): five little-endian 32-bit words h0..h4.

local p16 = Proto("opa16b", "Omni-Path 16B")
local l4_vals = {
	[0x00] = "Reserved", [0x08] = "FM (management)", [0x09] = "IB local",
	[0x0a] = "IB global", [0x78] = "Ethernet (VNIC)",
}
local l2_vals = { [0] = "8B", [1] = "10B", [2] = "16B", [3] = "Bypass" }
local f16 = {
	slid = ProtoField.uint24("opa16b.slid", "SLID", base.HEX),
	dlid = ProtoField.uint24("opa16b.dlid", "DLID", base.HEX),
	len = ProtoField.uint32("opa16b.len", "LEN (flits)", base.DEC, nil, 0x7ff00000),
	becn = ProtoField.bool("opa16b.becn", "BECN", 32, nil, 0x80000000),
	sc = ProtoField.uint32("opa16b.sc", "SC", base.DEC, nil, 0x01f00000),
	rc = ProtoField.uint32("opa16b.rc", "RC", base.DEC, nil, 0x0e000000),
	fecn = ProtoField.bool("opa16b.fecn", "FECN", 32, nil, 0x10000000),
	l2 = ProtoField.uint32("opa16b.l2", "L2", base.DEC, l2_vals, 0x60000000),
	lt = ProtoField.bool("opa16b.lt", "LT (head flit)", 32, nil, 0x80000000),
	l4 = ProtoField.uint8("opa16b.l4", "L4", base.HEX, l4_vals),
	pkey = ProtoField.uint16("opa16b.pkey", "P_Key", base.HEX),
	entropy = ProtoField.uint16("opa16b.entropy", "Entropy", base.HEX),
	age = ProtoField.uint8("opa16b.age", "Age", base.DEC),
	rsvd = ProtoField.uint8("opa16b.reserved", "Reserved", base.HEX),
	pad = ProtoField.bytes("opa16b.pad", "Pad"),
	pad_count = ProtoField.uint8("opa16b.pad_count", "Pad count", base.DEC),
	icrc = ProtoField.uint32("opa16b.icrc", "ICRC", base.HEX),
	icrc_status = ProtoField.uint8("opa16b.icrc.status", "ICRC status", base.DEC,
		icrc_status_vals),
	tail = ProtoField.uint8("opa16b.tail", "Tail", base.HEX),
	tail_pad = ProtoField.uint8("opa16b.tail.pad", "Pad count", base.DEC, nil, 0x07),
	tail_lt = ProtoField.uint8("opa16b.tail.lt", "LT", base.DEC, nil, 0xc0),
	payload = ProtoField.bytes("opa16b.payload", "Payload"),
	fm_dqp = ProtoField.uint32("opa16b.fm.dest_qp", "Destination QP", base.HEX, nil, 0x00ffffff),
	fm_sqp = ProtoField.uint32("opa16b.fm.src_qp", "Source QP", base.HEX, nil, 0x00ffffff),
}
local e16 = {
	malformed = ProtoExpert.new("opa16b.malformed", "Malformed 16B packet", MALFORMED, ERROR),
	icrc = ProtoExpert.new("opa16b.icrc.bad", "Bad ICRC", expert.group.CHECKSUM,
		expert.severity.WARN),
	note = ProtoExpert.new("opa16b.note", "16B note", expert.group.PROTOCOL,
		expert.severity.NOTE),
}
p16.fields = f16
p16.experts = e16
p16.prefs.check_icrc = Pref.bool("Check the ICRC", true,
	"Check the ICRC as the software HFI computes it (CRC-32 of the bytes before it); " ..
	"the real OPA ICRC is not public, so leave it off for captures of hardware")

local pvnic = Proto("opa_vnic", "Omni-Path VNIC")
local fvnic = {
	reserved = ProtoField.uint16("opa_vnic.reserved", "Reserved", base.HEX),
	l4_hdr = ProtoField.uint16("opa_vnic.l4_hdr", "L4 header", base.HEX),
	vesw_id = ProtoField.uint16("opa_vnic.vesw_id", "vesw id", base.DEC, nil, 0x0fff),
	frame_len = ProtoField.uint16("opa_vnic.frame_len", "Ethernet frame length", base.DEC),
}
local evnic = {
	malformed = ProtoExpert.new("opa_vnic.malformed", "Malformed VNIC packet", MALFORMED, ERROR),
}
pvnic.fields = fvnic
pvnic.experts = evnic

-- ---------------------------------------------------------------------------
-- OPA 9B LRH, BTH, DETH (drivers/common/hfi/hfi_9b.h), all big-endian.

local p9 = Proto("opa9b", "Omni-Path 9B")
local lnh_vals = { [0] = "Raw", [1] = "IPv6", [2] = "BTH (local)", [3] = "GRH (global)" }
local f9 = {
	sc = ProtoField.uint8("opa9b.sc", "SC[3:0] (VL field)", base.DEC, nil, 0xf0),
	lver = ProtoField.uint8("opa9b.lver", "LVer", base.DEC, nil, 0x0f),
	sl = ProtoField.uint8("opa9b.sl", "SL", base.DEC, nil, 0xf0),
	lnh = ProtoField.uint8("opa9b.lnh", "LNH", base.DEC, lnh_vals, 0x03),
	dlid = ProtoField.uint16("opa9b.dlid", "DLID", base.HEX),
	pktlen = ProtoField.uint16("opa9b.pktlen", "PktLen (DWs)", base.DEC, nil, 0x07ff),
	slid = ProtoField.uint16("opa9b.slid", "SLID", base.HEX),
	grh = ProtoField.bytes("opa9b.grh", "GRH"),
	opcode = ProtoField.uint8("opa9b.bth.opcode", "Opcode", base.HEX,
		{ [0x64] = "UD SEND_ONLY", [0x65] = "UD SEND_ONLY with immediate" }),
	se = ProtoField.bool("opa9b.bth.se", "Solicited event", 8, nil, 0x80),
	m = ProtoField.bool("opa9b.bth.m", "MigReq", 8, nil, 0x40),
	padcnt = ProtoField.uint8("opa9b.bth.padcnt", "Pad count", base.DEC, nil, 0x30),
	tver = ProtoField.uint8("opa9b.bth.tver", "TVer", base.DEC, nil, 0x0f),
	pkey = ProtoField.uint16("opa9b.bth.pkey", "P_Key", base.HEX),
	fecn = ProtoField.bool("opa9b.bth.fecn", "FECN", 8, nil, 0x80),
	becn = ProtoField.bool("opa9b.bth.becn", "BECN", 8, nil, 0x40),
	destqp = ProtoField.uint24("opa9b.bth.destqp", "Destination QP", base.HEX),
	ackreq = ProtoField.bool("opa9b.bth.ackreq", "AckReq", 8, nil, 0x80),
	psn = ProtoField.uint24("opa9b.bth.psn", "PSN", base.DEC),
	qkey = ProtoField.uint32("opa9b.deth.qkey", "Q_Key", base.HEX),
	srcqp = ProtoField.uint24("opa9b.deth.srcqp", "Source QP", base.HEX),
	payload = ProtoField.bytes("opa9b.payload", "Payload"),
	pad = ProtoField.bytes("opa9b.pad", "Pad"),
	icrc = ProtoField.uint32("opa9b.icrc", "ICRC", base.HEX),
	icrc_status = ProtoField.uint8("opa9b.icrc.status", "ICRC status", base.DEC,
		icrc_status_vals),
}
local e9 = {
	malformed = ProtoExpert.new("opa9b.malformed", "Malformed 9B packet", MALFORMED, ERROR),
	icrc = ProtoExpert.new("opa9b.icrc.bad", "Bad ICRC", expert.group.CHECKSUM,
		expert.severity.WARN),
}
p9.fields = f9
p9.experts = e9
p9.prefs.check_icrc = Pref.bool("Check the ICRC", true,
	"Check the ICRC as the software HFI computes it (CRC-32 of the bytes before it, " ..
	"little-endian); the real IB/OPA ICRC differs")
p9.prefs.builtin_smp = Pref.bool("Also decode SMPs with Wireshark's OPA MAD dissector", false,
	"Besides opa_smp, hand subnet management MADs to Wireshark's opa.mad dissector")

-- ---------------------------------------------------------------------------
-- MAD common header (24 bytes), shared by VEMA and SMP decoding.

local method_vals = {
	[0x01] = "Get", [0x02] = "Set", [0x03] = "Send", [0x05] = "Trap", [0x06] = "Report",
	[0x07] = "TrapRepress", [0x81] = "GetResp", [0x86] = "ReportResp",
}
local class_vals = {
	[0x01] = "Subnet management (LID routed)", [0x81] = "Subnet management (directed route)",
	[0x03] = "Subnet administration", [0x04] = "Performance management",
	[0x34] = "Intel Ethernet management (VEMA)",
}

-- ---------------------------------------------------------------------------
-- VEMA (lib/vema/vema_mad.h, opa-vnic-spec §4).

local pvema = Proto("vema", "Omni-Path VEMA")
local vema_attr_vals = {
	[0x0001] = "ClassPortInfo", [0x0002] = "Notice", [0x0011] = "VeswPortInfo",
	[0x0012] = "VeswPortMacEntries", [0x0013] = "IfaceUcastMacs",
	[0x0014] = "IfaceMcastMacs", [0x0015] = "DeleteVesw",
	[0x0020] = "VeswPortSummaryCounters", [0x0022] = "VeswPortErrorCounters",
}
local vema_status_vals = {
	[0x0000] = "OK", [0x0004] = "Bad version", [0x0008] = "Unsupported method",
	[0x000c] = "Unsupported method/attribute", [0x001c] = "Invalid attribute or modifier value",
}
local state_vals = { [1] = "DROP_ALL", [3] = "FORWARDING" }
local link_vals = { [0] = "Unknown", [1] = "UP", [2] = "DOWN" }
local trap_op_vals = {
	[1] = "Unicast MAC change", [2] = "Multicast MAC change",
	[3] = "Ethernet link status change",
}

local fvema = {}
local vema_hdr = make_fields("vema", fvema, {
	{ "base_version", 0, "u8", 1, "Base version" },
	{ "mgmt_class", 1, "u8", 1, "Management class" },
	{ "class_version", 2, "u8", 1, "Class version" },
	{ "method", 3, "u8", 1, "Method", method_vals, base.HEX },
	{ "status", 4, "u16", 1, "Status", vema_status_vals, base.HEX },
	{ "class_specific", 6, "u16", 1, "Class specific" },
	{ "tid", 8, "u64", 1, "Transaction id" },
	{ "attr_id", 16, "u16", 1, "Attribute id", vema_attr_vals, base.HEX },
	{ "reserved", 18, "u16", 1, "Reserved" },
	{ "attr_mod", 20, "u32", 1, "Attribute modifier" },
	{ "rmpp.version", 24, "u8", 1, "RMPP version", base.DEC },
	{ "rmpp.type", 25, "u8", 1, "RMPP type", base.DEC },
	{ "rmpp.rtime_flags", 26, "u8", 1, "RMPP RespTime/flags" },
	{ "rmpp.status", 27, "u8", 1, "RMPP status" },
	{ "rmpp.seg_num", 28, "u32", 1, "RMPP segment number", base.DEC },
	{ "rmpp.paylen_newwin", 32, "u32", 1, "RMPP payload length/new window", base.DEC },
	{ "reserved36", 36, "u8", 1, "Reserved" },
	{ "oui", 37, "u24", 1, "OUI" },
})
local vema_vport_f = ProtoField.uint32("vema.vport", "vport index", base.DEC, nil, 0x000000ff)
table.insert(fvema, vema_vport_f)

local vema_cpi = make_fields("vema.cpi", fvema, {
	{ "base_version", 0, "u8", 1, "Base version" },
	{ "class_version", 1, "u8", 1, "Class version" },
	{ "cap_mask", 2, "u16", 1, "Capability mask" },
	{ "cap_mask2_resp_time", 4, "u32", 1, "CapabilityMask2 / RespTimeValue" },
	{ "redirect_gid", 8, "gid", 1, "Redirect GID" },
	{ "redirect_tc_fl", 24, "u32", 1, "Redirect TC/FL" },
	{ "redirect_lid", 28, "u32", 1, "Redirect LID" },
	{ "redirect_sl_qp", 32, "u32", 1, "Redirect SL/QP" },
	{ "redirect_qkey", 36, "u32", 1, "Redirect Q_Key" },
	{ "trap_gid", 40, "gid", 1, "Trap GID" },
	{ "trap_tc_fl", 56, "u32", 1, "Trap TC/FL" },
	{ "trap_lid", 60, "u32", 1, "Trap LID" },
	{ "trap_hl_qp", 64, "u32", 1, "Trap HL/QP" },
	{ "trap_qkey", 68, "u32", 1, "Trap Q_Key" },
	{ "trap_pkey", 72, "u16", 1, "Trap P_Key" },
	{ "redirect_pkey", 74, "u16", 1, "Redirect P_Key" },
	{ "trap_sl_rsvd", 76, "u8", 1, "Trap SL (bits 7..3)" },
	{ "reserved", 77, "bytes", 3, "Reserved" },
})

local vema_vesw = make_fields("vema.vesw", fvema, {
	{ "fabric_id", 0, "u16", 1, "Fabric id" },
	{ "vesw_id", 2, "u16", 1, "vesw id", base.DEC },
	{ "rsvd0", 4, "bytes", 6, "Reserved" },
	{ "def_port_mask", 10, "u16", 1, "Default port mask" },
	{ "rsvd1", 12, "bytes", 2, "Reserved" },
	{ "pkey", 14, "u16", 1, "P_Key" },
	{ "rsvd2", 16, "bytes", 4, "Reserved" },
	{ "u_mcast_dlid", 20, "u32", 1, "Multicast DLID" },
	{ "u_ucast_dlid", 24, "u32", 16, "Default-port unicast DLID" },
	{ "rc", 88, "u32", 1, "Routing control" },
	{ "rsvd3", 92, "bytes", 56, "Reserved" },
	{ "eth_mtu", 148, "u16", 1, "Ethernet MTU", base.DEC },
	{ "rsvd4", 150, "bytes", 2, "Reserved" },
})
local vema_vport = make_fields("vema.vport", fvema, {
	{ "port_num", 0, "u32", 1, "Port number", base.DEC },
	{ "eth_link_status", 4, "u8", 1, "Ethernet link status", link_vals },
	{ "rsvd0", 5, "bytes", 3, "Reserved" },
	{ "base_mac", 8, "ether", 1, "Base MAC" },
	{ "config_state", 14, "u8", 1, "Config state", state_vals },
	{ "oper_state", 15, "u8", 1, "Oper state", state_vals },
	{ "max_mac_tbl_ent", 16, "u16", 1, "Max MAC table entries", base.DEC },
	{ "max_smac_ent", 18, "u16", 1, "Max source-MAC entries", base.DEC },
	{ "mac_tbl_digest", 20, "u32", 1, "MAC table digest" },
	{ "rsvd1", 24, "bytes", 4, "Reserved" },
	{ "encap_slid", 28, "u32", 1, "Encap SLID" },
	{ "pcp_to_sc_uc", 32, "u8", 8, "PCP to SC (unicast)", base.DEC },
	{ "pcp_to_vl_uc", 40, "u8", 8, "PCP to VL (unicast)", base.DEC },
	{ "pcp_to_sc_mc", 48, "u8", 8, "PCP to SC (multicast)", base.DEC },
	{ "pcp_to_vl_mc", 56, "u8", 8, "PCP to VL (multicast)", base.DEC },
	{ "non_vlan_sc_uc", 64, "u8", 1, "Untagged SC (unicast)", base.DEC },
	{ "non_vlan_vl_uc", 65, "u8", 1, "Untagged VL (unicast)", base.DEC },
	{ "non_vlan_sc_mc", 66, "u8", 1, "Untagged SC (multicast)", base.DEC },
	{ "non_vlan_vl_mc", 67, "u8", 1, "Untagged VL (multicast)", base.DEC },
	{ "rsvd2", 68, "bytes", 48, "Reserved" },
	{ "uc_macs_gen_count", 116, "u16", 1, "Unicast MACs gen count", base.DEC },
	{ "mc_macs_gen_count", 118, "u16", 1, "Multicast MACs gen count", base.DEC },
	{ "rsvd3", 120, "bytes", 8, "Reserved" },
})
local vema_mactbl = make_fields("vema.mactbl", fvema, {
	{ "offset", 0, "u16", 1, "Offset", base.DEC },
	{ "num_entries", 2, "u16", 1, "Entries", base.DEC },
	{ "digest", 4, "u32", 1, "MAC table digest" },
})
local vema_mac_entry = make_fields("vema.mactbl", fvema, {
	{ "mac", 0, "ether", 1, "MAC" },
	{ "mask", 6, "ether", 1, "MAC mask" },
	{ "dlid_sd", 12, "u32", 1, "DLID/SD" },
})
local f_mac_dlid = ProtoField.uint32("vema.mactbl.dlid", "DLID", base.HEX, nil, 0xffffff00)
local f_mac_smac = ProtoField.bool("vema.mactbl.src_mac", "Source-MAC entry", 32, nil, 0x20)
table.insert(fvema, f_mac_dlid)
table.insert(fvema, f_mac_smac)
local vema_iface = make_fields("vema.iface", fvema, {
	{ "start_idx", 0, "u16", 1, "Start index", base.DEC },
	{ "num_macs_in_msg", 2, "u16", 1, "MACs in this message", base.DEC },
	{ "tot_macs_in_lst", 4, "u16", 1, "MACs in the list", base.DEC },
	{ "gen_count", 6, "u16", 1, "Gen count", base.DEC },
})
local f_iface_mac = ProtoField.ether("vema.iface.mac", "MAC")
table.insert(fvema, f_iface_mac)

local counter_hdr = {
	{ "vp_instance", 0, "u16", 1, "vport instance", base.DEC },
	{ "vesw_id", 2, "u16", 1, "vesw id", base.DEC },
	{ "veswport_num", 4, "u32", 1, "vesw port number", base.DEC },
}
local summary = {}
for _, f in ipairs(counter_hdr) do
	table.insert(summary, { f[1], f[2], f[3], f[4], f[5], f[6] })
end
local summary_names = { "tx_errors", "rx_errors", "tx_packets", "rx_packets", "tx_bytes",
	"rx_bytes", "tx_unicast", "tx_mcastbcast", "tx_untagged", "tx_vlan", "tx_64_size",
	"tx_65_127", "tx_128_255", "tx_256_511", "tx_512_1023", "tx_1024_1518", "tx_1519_max",
	"rx_unicast", "rx_mcastbcast", "rx_untagged", "rx_vlan", "rx_64_size", "rx_65_127",
	"rx_128_255", "rx_256_511", "rx_512_1023", "rx_1024_1518", "rx_1519_max" }
for i, n in ipairs(summary_names) do
	table.insert(summary, { n, 8 * i, "u64", 1, n, base.DEC })
end
table.insert(summary, { "reserved", 232, "bytes", 128, "Reserved" })
local vema_summary = make_fields("vema.cnt", fvema, summary)

local errors = {}
for _, f in ipairs(counter_hdr) do
	table.insert(errors, { f[1], f[2], f[3], f[4], f[5], f[6] })
end
local error_names = { "tx_errors", "rx_errors", false, "tx_smac_filt", false, false, false,
	"tx_dlid_zero", false, "tx_logic", false, "tx_drop_state", "rx_bad_veswid", false,
	"rx_runt", "rx_oversize", false, "rx_eth_down", "rx_drop_state", "rx_logic", false }
for i, n in ipairs(error_names) do
	if n then
		table.insert(errors, { n, 8 * i, "u64", 1, n, base.DEC })
	end
end
local vema_errors = make_fields("vema.err", fvema, errors)

local vema_notice = make_fields("vema.notice", fvema, {
	{ "gen_type", 0, "u8", 1, "Generic/type" },
	{ "oui", 1, "u24", 1, "OUI" },
	{ "trap_num", 4, "u16", 1, "Trap number", base.DEC },
	{ "toggle_count", 6, "u16", 1, "Toggle count", base.DEC },
	{ "issuer_lid", 8, "u32", 1, "Issuer LID" },
	{ "reserved", 12, "bytes", 4, "Reserved" },
	{ "issuer_gid", 16, "gid", 1, "Issuer GID" },
	{ "fabric_id", 32, "u16", 1, "Fabric id" },
	{ "vesw_id", 34, "u16", 1, "vesw id", base.DEC },
	{ "veswport_num", 36, "u32", 1, "vesw port number", base.DEC },
	{ "opa_port_num", 40, "u16", 1, "OPA port number", base.DEC },
	{ "veswport_index", 42, "u8", 1, "vesw port index", base.DEC },
	{ "opcode", 43, "u8", 1, "Trap opcode", trap_op_vals },
	{ "trap_rsvd", 44, "bytes", 4, "Reserved" },
	{ "raw_rest", 48, "bytes", 48, "Raw data" },
})

local fv_data = ProtoField.bytes("vema.data", "Attribute data")
table.insert(fvema, fv_data)
pvema.fields = fvema
local evema = {
	malformed = ProtoExpert.new("vema.malformed", "Malformed VEMA MAD", MALFORMED, ERROR),
	status = ProtoExpert.new("vema.status.error", "VEMA error status", expert.group.RESPONSE_CODE,
		expert.severity.NOTE),
	unknown = ProtoExpert.new("vema.unknown_attr", "Unknown VEMA attribute",
		expert.group.UNDECODED, expert.severity.NOTE),
}
pvema.experts = evema

local VEMA_HDR = 40
local VEMA_MACS_MAX = 125
local VEMA_IFACE_MAX = 333

-- The attribute at tvb[40..] of a VEMA MAD with this method and id.
local function vema_attribute(tree, tvb, method, attr)
	local off = VEMA_HDR
	local data_len = tvb:len() - off
	local function need(spec, name)
		local sz = layout_size(spec)
		local t = tree:add(pvema, tvb(off, math.min(sz, data_len)), name)
		if not add_layout(t, tvb, off, spec) then
			t:add_proto_expert_info(evema.malformed,
				string.format("%s needs %d bytes, the MAD has %d", name, sz, data_len))
		end
		return t
	end
	if data_len <= 0 then
		if method ~= 0x01 then
			tree:add_proto_expert_info(evema.malformed, "No attribute data")
		end
		return
	end
	local is_get = method == 0x01
	if attr == 0x0001 and not is_get then
		need(vema_cpi, "ClassPortInfo")
	elseif attr == 0x0002 then
		need(vema_notice, "Notice")
	elseif (attr == 0x0011 and not is_get) or (attr == 0x0015 and method == 0x81) then
		need(vema_vesw, "vesw info")
		off = off + 152
		data_len = data_len - 152
		if data_len > 0 then
			need(vema_vport, "vesw port info")
		else
			tree:add_proto_expert_info(evema.malformed, "vesw port info missing")
		end
	elseif attr == 0x0012 then
		local t = need(vema_mactbl, "MAC table window")
		if is_get or tvb:len() < off + 8 then
			return
		end
		local n = tvb(off + 2, 2):uint()
		if n > VEMA_MACS_MAX then
			t:add_proto_expert_info(evema.malformed,
				string.format("%d entries: at most %d fit a MAD", n, VEMA_MACS_MAX))
			n = VEMA_MACS_MAX
		end
		for i = 0, n - 1 do
			local eo = off + 8 + 16 * i
			if eo + 16 > tvb:len() then
				t:add_proto_expert_info(evema.malformed, "MAC entries cut off")
				break
			end
			local first = tvb(off + 0, 2):uint()
			local et = t:add(pvema, tvb(eo, 16), string.format("Entry %d (slot %d): %s -> DLID 0x%x",
				i, first + i, tostring(tvb(eo, 6):ether()), rshift(tvb(eo + 12, 4):uint(), 8)))
			add_layout(et, tvb, eo, vema_mac_entry)
			et:add(f_mac_dlid, tvb(eo + 12, 4))
			et:add(f_mac_smac, tvb(eo + 12, 4))
		end
	elseif attr == 0x0013 or attr == 0x0014 then
		local t = need(vema_iface, attr == 0x0013 and "Unicast MACs" or "Multicast MACs")
		if is_get or tvb:len() < off + 8 then
			return
		end
		local n = tvb(off + 2, 2):uint()
		if n > VEMA_IFACE_MAX then
			t:add_proto_expert_info(evema.malformed,
				string.format("%d MACs: at most %d fit a MAD", n, VEMA_IFACE_MAX))
			n = VEMA_IFACE_MAX
		end
		for i = 0, n - 1 do
			local eo = off + 8 + 6 * i
			if eo + 6 > tvb:len() then
				t:add_proto_expert_info(evema.malformed, "MAC list cut off")
				break
			end
			t:add(f_iface_mac, tvb(eo, 6))
		end
	elseif attr == 0x0020 and not is_get then
		need(vema_summary, "Summary counters")
	elseif attr == 0x0022 and not is_get then
		need(vema_errors, "Error counters")
	elseif vema_attr_vals[attr] == nil then
		tree:add_proto_expert_info(evema.unknown, string.format("Attribute 0x%04x", attr))
		tree:add(fv_data, tvb(off, data_len))
	end
end

local function dissect_vema(tvb, pinfo, tree)
	local t = tree:add(pvema, tvb())
	pinfo.cols.protocol = "VEMA"
	if tvb:len() < 24 then
		add_layout(t, tvb, 0, vema_hdr)
		t:add_proto_expert_info(evema.malformed,
			string.format("MAD header cut off: %d of 24 bytes", tvb:len()))
		pinfo.cols.info = "VEMA (malformed)"
		return
	end
	add_layout(t, tvb, 0, vema_hdr)
	t:add(vema_vport_f, tvb(20, 4))
	local method = tvb(3, 1):uint()
	local status = tvb(4, 2):uint()
	local attr = tvb(16, 2):uint()
	local mod = tvb(20, 4):uint()
	local name = vema_attr_vals[attr] or string.format("0x%04x", attr)
	local info = string.format("VEMA %s %s vport %d", method_vals[method] or
		string.format("method 0x%02x", method), name, band(mod, 0xff))
	if method == 0x81 then
		info = info .. string.format(" status 0x%04x (%s)", status,
			vema_status_vals[status] or "?")
	end
	if status ~= 0 then
		t:add_proto_expert_info(evema.status, string.format("Status 0x%04x: %s", status,
			vema_status_vals[status] or "unknown"))
	end
	pinfo.cols.info = info
	t:append_text(", " .. info:sub(6))
	if tvb:len() < VEMA_HDR then
		t:add_proto_expert_info(evema.malformed,
			string.format("Vendor header cut off: %d of 40 bytes", tvb:len()))
		return
	end
	if tvb(37, 3):uint() ~= 0x00066a then
		t:add_proto_expert_info(evema.malformed, "OUI is not Intel's 00:06:6a")
	end
	vema_attribute(t, tvb, method, attr)
end

-- ---------------------------------------------------------------------------
-- SMPs (drivers/common/hfi/hfi_smp.h): header, route, attributes.

local psmp = Proto("opa_smp", "Omni-Path SMP")
local smp_attr_vals = {
	[0x0002] = "Notice", [0x0010] = "NodeDescription", [0x0011] = "NodeInfo",
	[0x0012] = "SwitchInfo", [0x0015] = "PortInfo", [0x0016] = "P_KeyTable",
	[0x0017] = "SLtoSCMappingTable", [0x0018] = "VLArbitrationTable",
	[0x0019] = "LinearForwardingTable", [0x001b] = "MulticastForwardingTable",
	[0x0020] = "SMInfo", [0x0031] = "LedInfo", [0x0032] = "CableInfo",
	[0x0080] = "Aggregate", [0x0081] = "SCtoSCMappingTable", [0x0082] = "SCtoSLMappingTable",
	[0x0083] = "SCtoVLrMappingTable", [0x0084] = "SCtoVLtMappingTable",
	[0x0085] = "SCtoVLntMappingTable", [0x0087] = "PortStateInfo",
	[0x008a] = "BufferControlTable",
}
local smp_status_vals = {
	[0x0000] = "OK", [0x0004] = "Bad version", [0x0008] = "Unsupported method",
	[0x000c] = "Unsupported method/attribute", [0x001c] = "Invalid field",
}
local port_state_vals = { [0] = "NOP", [1] = "Down", [2] = "Init", [3] = "Armed",
	[4] = "Active", [5] = "ActiveDefer" }
local phys_state_vals = { [0] = "NOP", [2] = "Polling", [3] = "Disabled", [4] = "Training",
	[5] = "LinkUp", [6] = "LinkErrorRecovery", [9] = "Offline", [11] = "Test" }
local node_type_vals = { [1] = "Channel adapter (HFI)", [2] = "Switch", [3] = "Router" }

local fsmp = {
	base_version = ProtoField.uint8("opa_smp.base_version", "Base version", base.HEX),
	mgmt_class = ProtoField.uint8("opa_smp.mgmt_class", "Management class", base.HEX,
		class_vals),
	class_version = ProtoField.uint8("opa_smp.class_version", "Class version", base.HEX),
	method = ProtoField.uint8("opa_smp.method", "Method", base.HEX, method_vals),
	status = ProtoField.uint16("opa_smp.status", "Status", base.HEX),
	direction = ProtoField.bool("opa_smp.d", "Direction (returning)", 16, nil, 0x8000),
	status_code = ProtoField.uint16("opa_smp.status.code", "Status code", base.HEX,
		smp_status_vals, 0x7fff),
	hop_ptr = ProtoField.uint8("opa_smp.hop_ptr", "Hop pointer", base.DEC),
	hop_cnt = ProtoField.uint8("opa_smp.hop_cnt", "Hop count", base.DEC),
	tid = ProtoField.uint64("opa_smp.tid", "Transaction id", base.HEX),
	attr_id = ProtoField.uint16("opa_smp.attr_id", "Attribute id", base.HEX, smp_attr_vals),
	resv = ProtoField.uint16("opa_smp.reserved", "Reserved", base.HEX),
	attr_mod = ProtoField.uint32("opa_smp.attr_mod", "Attribute modifier", base.HEX),
	am_nport = ProtoField.uint32("opa_smp.attr_mod.n", "Number of ports/blocks", base.DEC, nil,
		0xff000000),
	mkey = ProtoField.uint64("opa_smp.mkey", "M_Key", base.HEX),
	dr_slid = ProtoField.uint32("opa_smp.dr_slid", "DrSLID", base.HEX),
	dr_dlid = ProtoField.uint32("opa_smp.dr_dlid", "DrDLID", base.HEX),
	initial_path = ProtoField.bytes("opa_smp.initial_path", "Initial path"),
	return_path = ProtoField.bytes("opa_smp.return_path", "Return path"),
	dr_reserved = ProtoField.bytes("opa_smp.dr_reserved", "Reserved"),
	data = ProtoField.bytes("opa_smp.data", "Attribute data"),
	node_desc = ProtoField.string("opa_smp.node_desc", "NodeDescription"),
	port_state = ProtoField.uint8("opa_smp.port_state", "PortState", base.DEC,
		port_state_vals, 0x0f),
	phys_state = ProtoField.uint8("opa_smp.phys_state", "PortPhysicalState", base.DEC,
		phys_state_vals, 0xf0),
	lft_port = ProtoField.uint8("opa_smp.lft.port", "Egress port", base.DEC),
	map = ProtoField.uint8("opa_smp.map", "Map entry", base.DEC),
	pkey = ProtoField.uint16("opa_smp.pkey", "P_Key", base.HEX),
	mft = ProtoField.uint64("opa_smp.mft.mask", "Port mask", base.HEX),
	agg_attr = ProtoField.uint16("opa_smp.agg.attr_id", "Segment attribute id", base.HEX,
		smp_attr_vals),
	agg_err = ProtoField.bool("opa_smp.agg.error", "Segment error", 16, nil, 0x8000),
	agg_len = ProtoField.uint16("opa_smp.agg.req_len", "Segment length (8-byte units)",
		base.DEC, nil, 0x007f),
	agg_mod = ProtoField.uint32("opa_smp.agg.attr_mod", "Segment attribute modifier", base.HEX),
	bct_dedicated = ProtoField.uint16("opa_smp.bct.dedicated", "Dedicated", base.DEC),
	bct_shared = ProtoField.uint16("opa_smp.bct.shared", "Shared", base.DEC),
}
local fsmp_list = {}
for _, pf in pairs(fsmp) do
	table.insert(fsmp_list, pf)
end

local smp_node_info = make_fields("opa_smp.ni", fsmp_list, {
	{ "base_version", 0, "u8", 1, "Base version" },
	{ "class_version", 1, "u8", 1, "Class version" },
	{ "node_type", 2, "u8", 1, "Node type", node_type_vals },
	{ "num_ports", 3, "u8", 1, "Number of ports", base.DEC },
	{ "reserved", 4, "u32", 1, "Reserved" },
	{ "system_image_guid", 8, "u64", 1, "System image GUID" },
	{ "node_guid", 16, "u64", 1, "Node GUID" },
	{ "port_guid", 24, "u64", 1, "Port GUID" },
	{ "partition_cap", 32, "u16", 1, "Partition capacity", base.DEC },
	{ "device_id", 34, "u16", 1, "Device id" },
	{ "revision", 36, "u32", 1, "Revision" },
	{ "local_port_num", 40, "u8", 1, "Local port number", base.DEC },
	{ "vendor_id", 41, "u24", 1, "Vendor id" },
})
-- IB NodeInfo (base version 1): no reserved word.
local smp_ib_node_info = {
	{ "base_version", 0, "u8" }, { "class_version", 1, "u8" }, { "node_type", 2, "u8" },
	{ "num_ports", 3, "u8" }, { "system_image_guid", 4, "u64" }, { "node_guid", 12, "u64" },
	{ "port_guid", 20, "u64" }, { "partition_cap", 28, "u16" }, { "device_id", 30, "u16" },
	{ "revision", 32, "u32" }, { "local_port_num", 36, "u8" }, { "vendor_id", 37, "u24" },
}
for _, f in ipairs(smp_ib_node_info) do
	for _, g in ipairs(smp_node_info) do
		if g[1] == f[1] then
			f.pf = g.pf
		end
	end
end

local smp_port_info = make_fields("opa_smp.pi", fsmp_list, {
	{ "lid", 0, "u32", 1, "LID" },
	{ "flow_control_mask", 4, "u32", 1, "Flow control mask" },
	{ "vl_res", 8, "u8", 1, "VL reserved" },
	{ "vl_cap", 9, "u8", 1, "VL cap" },
	{ "vl_high_limit", 10, "u16", 1, "VL high limit" },
	{ "vl_preempt_limit", 12, "u16", 1, "VL preempt limit" },
	{ "vl_arb_high_cap", 14, "u8", 1, "VL arbitration high cap" },
	{ "vl_arb_low_cap", 15, "u8", 1, "VL arbitration low cap" },
	{ "ledenable_offlinereason", 17, "u8", 1, "LED/IsSMConfigurationStarted/NeighborNormal/OfflineReason" },
	{ "port_states", 19, "u8", 1, "PortPhysicalState/PortState" },
	{ "port_phys_conf", 20, "u8", 1, "Port physical configuration" },
	{ "collectivemask_multicastmask", 21, "u8", 1, "Collective/multicast mask" },
	{ "mkeyprotect_lmc", 22, "u8", 1, "M_KeyProtectBits/LMC" },
	{ "smsl", 23, "u8", 1, "Master SM SL" },
	{ "partenforce_filterraw", 24, "u8", 1, "Partition enforcement/filter raw" },
	{ "operational_vls", 25, "u8", 1, "Operational VLs", base.DEC },
	{ "pkey_8b", 26, "u16", 1, "P_Key 8B" },
	{ "pkey_10b", 28, "u16", 1, "P_Key 10B" },
	{ "mkey_violations", 30, "u16", 1, "M_Key violations", base.DEC },
	{ "pkey_violations", 32, "u16", 1, "P_Key violations", base.DEC },
	{ "qkey_violations", 34, "u16", 1, "Q_Key violations", base.DEC },
	{ "sm_trap_qp", 36, "u32", 1, "SM trap QP" },
	{ "sa_qp", 40, "u32", 1, "SA QP" },
	{ "neigh_port_num", 44, "u8", 1, "Neighbor port number", base.DEC },
	{ "link_down_reason", 45, "u8", 1, "Link down reason" },
	{ "neigh_link_down_reason", 46, "u8", 1, "Neighbor link down reason" },
	{ "clientrereg_subnettimeout", 47, "u8", 1, "ClientReregister/SubnetTimeout" },
	{ "link_speed_supported", 48, "u16", 1, "Link speed supported" },
	{ "link_speed_enabled", 50, "u16", 1, "Link speed enabled" },
	{ "link_speed_active", 52, "u16", 1, "Link speed active" },
	{ "link_width_supported", 54, "u16", 1, "Link width supported" },
	{ "link_width_enabled", 56, "u16", 1, "Link width enabled" },
	{ "link_width_active", 58, "u16", 1, "Link width active" },
	{ "port_link_mode", 68, "u16", 1, "Port link mode" },
	{ "port_ltp_crc_mode", 70, "u16", 1, "Port LTP CRC mode" },
	{ "port_mode", 72, "u16", 1, "Port mode" },
	{ "packet_format_supported", 74, "u16", 1, "Packet formats supported" },
	{ "packet_format_enabled", 76, "u16", 1, "Packet formats enabled" },
	{ "mkey_lease_period", 98, "u16", 1, "M_Key lease period", base.DEC },
	{ "buffer_units", 100, "u32", 1, "Buffer units" },
	{ "sm_lid", 108, "u32", 1, "Master SM LID" },
	{ "mkey", 112, "u64", 1, "M_Key" },
	{ "subnet_prefix", 120, "u64", 1, "Subnet prefix" },
	{ "neigh_mtu", 128, "bytes", 16, "Neighbor MTU (two VLs a byte)" },
	{ "neigh_node_guid", 208, "u64", 1, "Neighbor node GUID" },
	{ "ib_cap_mask", 216, "u32", 1, "CapabilityMask" },
	{ "opa_cap_mask", 222, "u16", 1, "CapabilityMask3" },
	{ "overall_buffer_space", 228, "u16", 1, "Overall buffer space", base.DEC },
	{ "diag_code", 232, "u16", 1, "Diagnostic code" },
	{ "port_neigh_mode", 236, "u8", 1, "Port neighbor mode" },
	{ "mtucap", 237, "u8", 1, "MTU cap", base.DEC },
	{ "resptimevalue", 238, "u8", 1, "Response time value", base.DEC },
	{ "local_port_num", 239, "u8", 1, "Local port number", base.DEC },
})
local smp_psi = make_fields("opa_smp.psi", fsmp_list, {
	{ "ledenable_offlinereason", 1, "u8", 1, "LED/IsSMConfigurationStarted/NeighborNormal/OfflineReason" },
	{ "port_states", 3, "u8", 1, "PortPhysicalState/PortState" },
	{ "lwd_tx_active", 4, "u16", 1, "Link width downgrade Tx active" },
	{ "lwd_rx_active", 6, "u16", 1, "Link width downgrade Rx active" },
})
local smp_switch_info = make_fields("opa_smp.si", fsmp_list, {
	{ "linear_fdb_cap", 0, "u32", 1, "LinearFDBCap", base.DEC },
	{ "port_group_fdb_cap", 4, "u32", 1, "PortGroupFDBCap", base.DEC },
	{ "multicast_fdb_cap", 8, "u32", 1, "MulticastFDBCap", base.DEC },
	{ "linear_fdb_top", 12, "u32", 1, "LinearFDBTop" },
	{ "multicast_fdb_top", 16, "u32", 1, "MulticastFDBTop" },
	{ "collective_cap", 20, "u32", 1, "CollectiveCap" },
	{ "collective_top", 24, "u32", 1, "CollectiveTop" },
	{ "lifetime_psc", 67, "u8", 1, "LifeTimeValue/PortStateChange" },
	{ "partition_enforcement_cap", 70, "u16", 1, "PartitionEnforcementCap", base.DEC },
	{ "port_group_cap", 72, "u8", 1, "PortGroupCap", base.DEC },
	{ "port_group_top", 73, "u8", 1, "PortGroupTop", base.DEC },
	{ "routing_mode_supported", 74, "u8", 1, "RoutingMode supported" },
	{ "routing_mode_enabled", 75, "u8", 1, "RoutingMode enabled" },
	{ "enhanced_port0", 76, "u8", 1, "EnhancedPort0" },
	{ "multicollect_mask", 77, "u8", 1, "Collective/multicast mask" },
	{ "adaptive_routing", 78, "u16", 1, "AdaptiveRouting" },
	{ "capability_mask", 80, "u16", 1, "CapabilityMask" },
	{ "capability_mask_collectives", 82, "u16", 1, "CapabilityMaskCollectives" },
})
local smp_notice = make_fields("opa_smp.notice", fsmp_list, {
	{ "generic_type", 0, "u8", 1, "IsGeneric/Type" },
	{ "prod_type", 1, "u24", 1, "Producer type" },
	{ "trap_num", 4, "u16", 1, "Trap number", base.DEC },
	{ "toggle_count", 6, "u16", 1, "Toggle/count" },
	{ "issuer_lid", 8, "u32", 1, "Issuer LID" },
	{ "reserved", 12, "u32", 1, "Reserved" },
	{ "issuer_gid", 16, "gid", 1, "Issuer GID" },
	{ "raw_data", 32, "bytes", 64, "Data details" },
})
local smp_trap144 = make_fields("opa_smp.trap144", fsmp_list, {
	{ "lid", 0, "u32", 1, "LID" },
	{ "new_cap_mask", 4, "u32", 1, "New CapabilityMask" },
	{ "cap_mask3", 10, "u16", 1, "CapabilityMask3" },
	{ "change_flags", 12, "u16", 1, "Change flags" },
})
local smp_trap256 = make_fields("opa_smp.trap256", fsmp_list, {
	{ "lid", 0, "u32", 1, "LID" },
	{ "dr_slid", 4, "u32", 1, "DrSLID" },
	{ "method", 8, "u8", 1, "Method", method_vals, base.HEX },
	{ "dr_trunc_hop", 9, "u8", 1, "DrNotice/DrPathTruncated/DrHopCount" },
	{ "attr_id", 10, "u16", 1, "Attribute id" },
	{ "attr_mod", 12, "u32", 1, "Attribute modifier" },
	{ "mkey", 16, "u64", 1, "M_Key" },
	{ "dr_rtn_path", 24, "bytes", 30, "DR return path" },
})
local smp_led = make_fields("opa_smp.led", fsmp_list, {
	{ "rsvd_led_mask", 0, "u32", 1, "LED mask (bit 31: beaconing)" },
})

psmp.fields = fsmp_list
local esmp = {
	malformed = ProtoExpert.new("opa_smp.malformed", "Malformed SMP", MALFORMED, ERROR),
	status = ProtoExpert.new("opa_smp.status.error", "SMP error status",
		expert.group.RESPONSE_CODE, expert.severity.NOTE),
}
psmp.experts = esmp

local SMP_HDR = 32
local SMP_DR_HDR = 176

-- Attribute attr with modifier am at tvb[off..off+len).
local smp_attribute
smp_attribute = function(tree, tvb, off, len, attr, am, opa, depth)
	local avail = math.min(len, tvb:len() - off)
	if avail <= 0 then
		return
	end
	local name = smp_attr_vals[attr] or string.format("Attribute 0x%04x", attr)
	local function need(spec, base_off, what)
		local sz = layout_size(spec)
		if base_off >= tvb:len() then
			tree:add_proto_expert_info(esmp.malformed, (what or name) .. " missing")
			return tree
		end
		local t = tree:add(psmp, tvb(base_off, math.min(sz, tvb:len() - base_off)), what or name)
		if not add_layout(t, tvb, base_off, spec) then
			t:add_proto_expert_info(esmp.malformed,
				string.format("%s needs %d bytes, %d left", what or name, sz,
					tvb:len() - base_off))
		end
		return t
	end
	local n = rshift(am, 24)
	if n == 0 then
		n = 1
	end
	if attr == 0x0010 then
		local sl = math.min(64, avail)
		tree:add(fsmp.node_desc, tvb(off, sl))
		if sl < 64 then
			tree:add_proto_expert_info(esmp.malformed, "NodeDescription cut off")
		end
	elseif attr == 0x0011 then
		if opa then
			need(smp_node_info, off)
		else
			need(smp_ib_node_info, off)
		end
	elseif attr == 0x0015 and opa then
		local t = need(smp_port_info, off)
		if off + 20 <= tvb:len() then
			t:add(fsmp.port_state, tvb(off + 19, 1))
			t:add(fsmp.phys_state, tvb(off + 19, 1))
		end
	elseif attr == 0x0087 and opa then
		for i = 0, n - 1 do
			local o = off + 8 * i
			if o + 8 > tvb:len() then
				tree:add_proto_expert_info(esmp.malformed, "PortStateInfo cut off")
				break
			end
			local t = need(smp_psi, o, string.format("PortStateInfo %d", i))
			t:add(fsmp.port_state, tvb(o + 3, 1))
			t:add(fsmp.phys_state, tvb(o + 3, 1))
		end
	elseif attr == 0x0016 and opa then
		local t = tree:add(psmp, tvb(off, avail), "P_KeyTable")
		for i = 0, math.min(32 * n, math.floor(avail / 2)) - 1 do
			t:add(fsmp.pkey, tvb(off + 2 * i, 2)):prepend_text(string.format("[%d] ", i))
		end
	elseif attr == 0x0017 or attr == 0x0081 or attr == 0x0082 or attr == 0x0083 or
		attr == 0x0084 or attr == 0x0085 then
		local t = tree:add(psmp, tvb(off, math.min(32, avail)), name)
		for i = 0, math.min(32, avail) - 1 do
			t:add(fsmp.map, tvb(off + i, 1)):prepend_text(string.format("[%d] ", i))
		end
		if avail < 32 then
			t:add_proto_expert_info(esmp.malformed, name .. " cut off")
		end
	elseif attr == 0x0012 and opa then
		need(smp_switch_info, off)
	elseif attr == 0x0019 then
		local t = tree:add(psmp, tvb(off, math.min(64, avail)), name)
		local first = band(am, 0x3ffff) * 64
		for i = 0, math.min(64, avail) - 1 do
			t:add(fsmp.lft_port, tvb(off + i, 1)):prepend_text(string.format("LID 0x%x: ",
				first + i))
		end
	elseif attr == 0x001b then
		local t = tree:add(psmp, tvb(off, math.min(64, avail)), name)
		for i = 0, math.floor(math.min(64, avail) / 8) - 1 do
			t:add(fsmp.mft, tvb(off + 8 * i, 8)):prepend_text(string.format("[%d] ", i))
		end
	elseif attr == 0x0031 then
		need(smp_led, off)
	elseif attr == 0x008a then
		local t = tree:add(psmp, tvb(off, math.min(132, avail)), name)
		for i = 0, 31 do
			local o = off + 4 + 4 * i
			if o + 4 > tvb:len() then
				break
			end
			t:add(fsmp.bct_dedicated, tvb(o, 2)):prepend_text(string.format("VL%d ", i))
			t:add(fsmp.bct_shared, tvb(o + 2, 2)):prepend_text(string.format("VL%d ", i))
		end
	elseif attr == 0x0002 then
		local t = need(smp_notice, off)
		if off + 32 <= tvb:len() then
			local trap = tvb(off + 4, 2):uint()
			if trap == 144 then
				need(smp_trap144, off + 32, "Trap 144 (capability mask change)")
			elseif trap == 256 then
				need(smp_trap256, off + 32, "Trap 256 (bad M_Key)")
			end
		end
	elseif attr == 0x0080 and opa and depth == 0 then
		local o = off
		local segs = band(am, 0xff)
		for i = 0, segs - 1 do
			if o + 8 > tvb:len() then
				tree:add_proto_expert_info(esmp.malformed,
					string.format("Aggregate segment %d cut off", i))
				break
			end
			local sa = tvb(o, 2):uint()
			local slen = band(tvb(o + 2, 2):uint(), 0x7f) * 8
			local t = tree:add(psmp, tvb(o, math.min(8 + slen, tvb:len() - o)),
				string.format("Segment %d: %s", i, smp_attr_vals[sa] or
					string.format("0x%04x", sa)))
			t:add(fsmp.agg_attr, tvb(o, 2))
			t:add(fsmp.agg_err, tvb(o + 2, 2))
			t:add(fsmp.agg_len, tvb(o + 2, 2))
			t:add(fsmp.agg_mod, tvb(o + 4, 4))
			if o + 8 + slen > tvb:len() then
				t:add_proto_expert_info(esmp.malformed, "Segment data cut off")
			end
			smp_attribute(t, tvb, o + 8, slen, sa, tvb(o + 4, 4):uint(), opa, depth + 1)
			o = o + 8 + slen
		end
	else
		tree:add(fsmp.data, tvb(off, avail)):prepend_text(name .. " ")
	end
end

local function dissect_smp(tvb, pinfo, tree)
	local t = tree:add(psmp, tvb())
	pinfo.cols.protocol = "OPA SMP"
	local avail = tvb:len()
	local hdr = {
		{ 0, 1, fsmp.base_version }, { 1, 1, fsmp.mgmt_class }, { 2, 1, fsmp.class_version },
		{ 3, 1, fsmp.method }, { 4, 2, fsmp.status }, { 6, 1, fsmp.hop_ptr },
		{ 7, 1, fsmp.hop_cnt }, { 8, 8, fsmp.tid }, { 16, 2, fsmp.attr_id },
		{ 18, 2, fsmp.resv }, { 20, 4, fsmp.attr_mod }, { 24, 8, fsmp.mkey },
	}
	for _, h in ipairs(hdr) do
		if h[1] + h[2] <= avail then
			t:add(h[3], tvb(h[1], h[2]))
		end
	end
	if avail < SMP_HDR then
		t:add_proto_expert_info(esmp.malformed,
			string.format("SMP header cut off: %d of 32 bytes", avail))
		pinfo.cols.info = "SMP (malformed)"
		return
	end
	local opa = tvb(0, 1):uint() == 0x80 and tvb(2, 1):uint() == 0x80
	local dr = tvb(1, 1):uint() == 0x81
	local method = tvb(3, 1):uint()
	local status = tvb(4, 2):uint()
	local attr = tvb(16, 2):uint()
	local am = tvb(20, 4):uint()
	t:add(fsmp.am_nport, tvb(20, 4))
	if dr then
		t:add(fsmp.direction, tvb(4, 2))
		t:add(fsmp.status_code, tvb(4, 2))
	end
	if band(status, 0x7fff) ~= 0 then
		t:add_proto_expert_info(esmp.status, string.format("Status 0x%04x: %s", status,
			smp_status_vals[band(status, 0x7fff)] or "unknown"))
	end
	local info = string.format("SMP %s %s %s", dr and "DR" or "LR",
		method_vals[method] or string.format("method 0x%02x", method),
		smp_attr_vals[attr] or string.format("0x%04x", attr))
	if am ~= 0 then
		info = info .. string.format(" AM 0x%08x", am)
	end
	if method == 0x81 then
		info = info .. string.format(" status 0x%04x", status)
	end
	pinfo.cols.info = info
	t:append_text(", " .. info:sub(5))
	local data_off, data_len
	if not opa then
		-- struct ib_smp: 256 bytes, data at 64 (DR: the LIDs before it, paths after)
		if dr and avail >= 36 then
			t:add(fsmp.dr_slid, tvb(32, 2))
			t:add(fsmp.dr_dlid, tvb(34, 2))
		end
		if dr and avail >= 256 then
			t:add(fsmp.initial_path, tvb(128, 64))
			t:add(fsmp.return_path, tvb(192, 64))
		end
		data_off, data_len = 64, 64
		if avail < 256 then
			t:add_proto_expert_info(esmp.malformed,
				string.format("IB SMP of %d bytes, not 256", avail))
		end
	elseif dr then
		if avail < SMP_DR_HDR then
			t:add_proto_expert_info(esmp.malformed,
				string.format("Directed-route header cut off: %d of 176 bytes", avail))
			return
		end
		t:add(fsmp.dr_slid, tvb(32, 4))
		t:add(fsmp.dr_dlid, tvb(36, 4))
		t:add(fsmp.initial_path, tvb(40, 64))
		t:add(fsmp.return_path, tvb(104, 64))
		t:add(fsmp.dr_reserved, tvb(168, 8))
		local hops = tvb(7, 1):uint()
		if hops > 63 then
			t:add_proto_expert_info(esmp.malformed,
				string.format("Hop count %d: a path holds at most 63 hops", hops))
		end
		data_off, data_len = SMP_DR_HDR, 1872
	else
		data_off, data_len = SMP_HDR, 2016
	end
	-- Get requests carry no attribute data worth showing (but Aggregate's segments).
	if method ~= 0x01 or attr == 0x0080 then
		smp_attribute(t, tvb, data_off, data_len, attr, am, opa, 0)
	end
end

-- ---------------------------------------------------------------------------
-- MAD dispatch by class.

-- As dissectors of their own, so that Wireshark files their expert items
-- under their names.
function pvema.dissector(tvb, pinfo, tree)
	dissect_vema(tvb, pinfo, tree)
	return tvb:len()
end

function psmp.dissector(tvb, pinfo, tree)
	dissect_smp(tvb, pinfo, tree)
	return tvb:len()
end

local function handle(name)
	local ok, h = pcall(Dissector.get, name)
	if ok then
		return h
	end
	return nil
end
local wireshark_mad = handle("opa.mad")
local vema_handle = handle("vema")
local smp_handle = handle("opa_smp")

local function dissect_mad(tvb, pinfo, tree, dest_qp, src_qp)
	if tvb:len() < 2 then
		dissect_vema(tvb, pinfo, tree)	-- reports the cut-off header
		return
	end
	local class = tvb(1, 1):uint()
	if class == 0x34 then
		if vema_handle then
			vema_handle:call(tvb, pinfo, tree)
		else
			dissect_vema(tvb, pinfo, tree)
		end
		return
	end
	if class == 0x01 or class == 0x81 then
		if smp_handle then
			smp_handle:call(tvb, pinfo, tree)
		else
			dissect_smp(tvb, pinfo, tree)
		end
		if not p9.prefs.builtin_smp then
			return
		end
	end
	if wireshark_mad ~= nil then
		-- Wireshark's OPA MAD dissector tells MADs by the QPs, as its 9B dissector sets them.
		local ok = pcall(function()
			pinfo.src_port = src_qp
			pinfo.dst_port = dest_qp
			wireshark_mad:call(tvb, pinfo, tree)
		end)
		if ok then
			return
		end
	end
	tree:add(f9.payload, tvb())
end

-- ---------------------------------------------------------------------------
-- 9B packets (ERF type 29).

local function icrc_check(proto_prefs, tree, tvb, covered, at, f_icrc, f_status, e_bad)
	local icrc = tvb(at, 4):le_uint()
	local it = tree:add_le(f_icrc, tvb(at, 4))
	if proto_prefs.check_icrc then
		local want = crc32(tvb, 0, covered)
		if want == icrc then
			tree:add(f_status, 1):set_generated()
		else
			tree:add(f_status, 2):set_generated()
			it:add_proto_expert_info(e_bad, string.format("Bad ICRC 0x%08x, expected 0x%08x",
				icrc, want))
		end
	else
		tree:add(f_status, 0):set_generated()
	end
end

-- BTH (+ DETH) at tvb[off..]; returns opcode, dest QP, src QP, the offset after
-- them, or nil when cut off.
local function dissect_bth(tvb, tree, off, malformed)
	if off + 12 > tvb:len() then
		tree:add_proto_expert_info(malformed, "BTH cut off")
		return nil
	end
	local bt = tree:add(p9, tvb(off, 12), "Base transport header")
	bt:add(f9.opcode, tvb(off, 1))
	bt:add(f9.se, tvb(off + 1, 1))
	bt:add(f9.m, tvb(off + 1, 1))
	bt:add(f9.padcnt, tvb(off + 1, 1))
	bt:add(f9.tver, tvb(off + 1, 1))
	bt:add(f9.pkey, tvb(off + 2, 2))
	bt:add(f9.fecn, tvb(off + 4, 1))
	bt:add(f9.becn, tvb(off + 4, 1))
	bt:add(f9.destqp, tvb(off + 5, 3))
	bt:add(f9.ackreq, tvb(off + 8, 1))
	bt:add(f9.psn, tvb(off + 9, 3))
	local opcode = tvb(off, 1):uint()
	local dqp = tvb(off + 5, 3):uint()
	local pad = rshift(band(tvb(off + 1, 1):uint(), 0x30), 4)
	off = off + 12
	local sqp = nil
	if opcode == 0x64 or opcode == 0x65 then
		if off + 8 > tvb:len() then
			tree:add_proto_expert_info(malformed, "DETH cut off")
			return nil
		end
		local dt = tree:add(p9, tvb(off, 8), "Datagram extended transport header")
		dt:add(f9.qkey, tvb(off, 4))
		dt:add(f9.srcqp, tvb(off + 5, 3))
		sqp = tvb(off + 5, 3):uint()
		off = off + 8
		if opcode == 0x65 then
			off = off + 4	-- immediate data
		end
	end
	return opcode, dqp, sqp, off, pad
end

function p9.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "OPA 9B"
	local t = tree:add(p9, tvb())
	if len < 8 then
		t:add_proto_expert_info(e9.malformed, string.format("LRH cut off: %d of 8 bytes", len))
		return len
	end
	local lt = t:add(p9, tvb(0, 8), "Local route header")
	lt:add(f9.sc, tvb(0, 1))
	lt:add(f9.lver, tvb(0, 1))
	lt:add(f9.sl, tvb(1, 1))
	lt:add(f9.lnh, tvb(1, 1))
	lt:add(f9.dlid, tvb(2, 2))
	lt:add(f9.pktlen, tvb(4, 2))
	lt:add(f9.slid, tvb(6, 2))
	local dlid, slid = tvb(2, 2):uint(), tvb(6, 2):uint()
	pinfo.cols.src = string.format("LID 0x%04x", slid)
	pinfo.cols.dst = string.format("LID 0x%04x", dlid)
	t:append_text(string.format(", SLID 0x%04x, DLID 0x%04x", slid, dlid))
	local pktlen = band(tvb(4, 2):uint(), 0x7ff) * 4
	local total = len
	if pktlen ~= len then
		t:add_proto_expert_info(e9.malformed,
			string.format("PktLen says %d bytes, the packet has %d", pktlen, len))
		if pktlen < len and pktlen >= 12 then
			total = pktlen
		end
	end
	local lnh = band(tvb(1, 1):uint(), 3)
	local off = 8
	if lnh == 3 then
		if off + 40 > total then
			t:add_proto_expert_info(e9.malformed, "GRH cut off")
			return len
		end
		t:add(f9.grh, tvb(off, 40))
		off = off + 40
	elseif lnh ~= 2 then
		if total > 12 then
			t:add(f9.payload, tvb(8, total - 12))
		end
		return len
	end
	if total < off + 4 then
		t:add_proto_expert_info(e9.malformed, "No room for the ICRC")
		return len
	end
	local body = tvb(0, total - 4):tvb()
	local opcode, dqp, sqp, poff, pad = dissect_bth(body, t, off, e9.malformed)
	if opcode == nil then
		return len
	end
	local plen = total - 4 - poff - pad
	if plen < 0 then
		t:add_proto_expert_info(e9.malformed, "Pad count exceeds the payload")
		plen = 0
	end
	if pad > 0 and poff + plen + pad <= total - 4 then
		t:add(f9.pad, tvb(poff + plen, pad))
	end
	icrc_check(p9.prefs, t, tvb, total - 4, total - 4, f9.icrc, f9.icrc_status, e9.icrc)
	if plen > 0 then
		local payload = tvb(poff, plen):tvb()
		if sqp ~= nil and (dqp <= 1 or sqp <= 1) then
			dissect_mad(payload, pinfo, tree, dqp, sqp)
		else
			t:add(f9.payload, tvb(poff, plen))
		end
	end
	return len
end

-- ---------------------------------------------------------------------------
-- 16B packets (LINKTYPE_USER0).

local eth_dissector = Dissector.get("eth_withoutfcs")

-- The VNIC L4 header (bytes 16..19 of the 16B packet) and the Ethernet frame.
local function dissect_vnic(tvb, pinfo, tree)
	local vt = tree:add(pvnic, tvb(0, 4))
	vt:add_le(fvnic.reserved, tvb(0, 2))
	vt:add_le(fvnic.l4_hdr, tvb(2, 2))
	vt:add_le(fvnic.vesw_id, tvb(2, 2))
	local vesw = band(tvb(2, 2):le_uint(), 0xfff)
	local flen = tvb:len() - 4
	vt:append_text(string.format(", vesw %d", vesw))
	vt:add(fvnic.frame_len, flen):set_generated()
	pinfo.cols.protocol = "OPA VNIC"
	pinfo.cols.info = string.format("VNIC vesw %d, %d-byte frame", vesw, flen)
	if flen < 14 then
		vt:add_proto_expert_info(evnic.malformed,
			string.format("Ethernet frame of %d bytes", flen))
	end
	if flen > 0 then
		-- Ethernet reports a frame too short for it as a Malformed Packet
		-- itself; the exception it raises ends here, not in a Lua error.
		pcall(function()
			eth_dissector:call(tvb(4, flen):tvb(), pinfo, tree)
		end)
	end
	return tvb:len()
end

function pvnic.dissector(tvb, pinfo, tree)
	return dissect_vnic(tvb, pinfo, tree)
end
local vnic_handle = handle("opa_vnic")

function p16.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "OPA 16B"
	local t = tree:add(p16, tvb())
	if len < 16 then
		t:add_proto_expert_info(e16.malformed, string.format("LRH cut off: %d of 16 bytes", len))
		return len
	end
	local h0, h1, h2 = tvb(0, 4):le_uint(), tvb(4, 4):le_uint(), tvb(8, 4):le_uint()
	local slid = bor(band(h0, 0xfffff), lshift(band(rshift(h2, 8), 0xf), 20))
	local dlid = bor(band(h1, 0xfffff), lshift(band(rshift(h2, 12), 0xf), 20))
	local flits = band(rshift(h0, 20), 0x7ff)
	local l2 = band(rshift(h1, 29), 3)
	local l4 = band(h2, 0xff)
	t:add(f16.slid, tvb(0, 3), slid)
	t:add(f16.dlid, tvb(4, 3), dlid)
	t:add_le(f16.len, tvb(0, 4))
	t:add_le(f16.becn, tvb(0, 4))
	t:add_le(f16.sc, tvb(4, 4))
	t:add_le(f16.rc, tvb(4, 4))
	t:add_le(f16.fecn, tvb(4, 4))
	t:add_le(f16.l2, tvb(4, 4))
	t:add_le(f16.lt, tvb(4, 4))
	t:add(f16.l4, tvb(8, 1))
	t:add_le(f16.pkey, tvb(10, 2))
	t:add_le(f16.entropy, tvb(12, 2))
	t:add(f16.age, tvb(14, 1))
	t:add(f16.rsvd, tvb(15, 1))
	pinfo.cols.src = string.format("LID 0x%06x", slid)
	pinfo.cols.dst = string.format("LID 0x%06x", dlid)
	t:append_text(string.format(", SLID 0x%06x, DLID 0x%06x, L4 0x%02x", slid, dlid, l4))
	pinfo.cols.info = string.format("16B L4 0x%02x, %d flits", l4, flits)
	if l2 ~= 2 then
		t:add_proto_expert_info(e16.malformed, string.format("L2 is %d, not 2 (16B)", l2))
	end
	local total = len
	if flits * 8 ~= len then
		t:add_proto_expert_info(e16.malformed,
			string.format("LEN says %d bytes (%d flits), the packet has %d", flits * 8, flits,
				len))
		if flits * 8 < len and flits * 8 >= 16 then
			total = flits * 8
		end
	end
	if total % 8 ~= 0 then
		t:add_proto_expert_info(e16.malformed,
			string.format("%d bytes are not whole flits", total))
	end
	-- The tail: ICRC (4) and tail byte (pad count) end every 16B packet.
	if total < 16 + 5 then
		t:add_proto_expert_info(e16.malformed, "No room for the ICRC and tail")
		return len
	end
	local tail = tvb(total - 1, 1):uint()
	local tt = t:add(f16.tail, tvb(total - 1, 1))
	tt:add(f16.tail_pad, tvb(total - 1, 1))
	tt:add(f16.tail_lt, tvb(total - 1, 1))
	icrc_check(p16.prefs, t, tvb, total - 5, total - 5, f16.icrc, f16.icrc_status, e16.icrc)
	if l4 == 0x78 then
		if total < 20 + 5 then
			local vt = tree:add(pvnic, tvb(16, total - 5 - 16))
			vt:add_proto_expert_info(evnic.malformed, "VNIC L4 header cut off")
			return len
		end
		local pad = band(tail, 7)
		local flen = total - 20 - pad - 5
		if band(tail, 0xf8) ~= 0 then
			tt:add_proto_expert_info(e16.note, string.format(
				"Tail byte 0x%02x: the kernel writes only the pad count (bits 2..0)", tail))
		end
		t:add(f16.pad_count, pad):set_generated()
		if flen < 0 then
			t:add_proto_expert_info(e16.malformed,
				string.format("Pad count %d leaves no room for the VNIC header", pad))
			return len
		end
		if pad > 0 then
			t:add(f16.pad, tvb(20 + flen, pad))
		end
		-- The VNIC layer: its L4 header and the frame, without pad, ICRC and tail.
		local inner = tvb(16, 4 + flen):tvb()
		if vnic_handle then
			vnic_handle:call(inner, pinfo, tree)
		else
			dissect_vnic(inner, pinfo, tree)
		end
	elseif l4 == 0x08 then
		-- FM: an 8-byte L4 header (destination and source QP), then a MAD.
		if total - 5 < 24 then
			t:add_proto_expert_info(e16.malformed, "FM L4 header cut off")
			return len
		end
		t:add(f16.fm_dqp, tvb(16, 4))
		t:add(f16.fm_sqp, tvb(20, 4))
		local mlen = total - 5 - 24
		if mlen > 0 then
			dissect_mad(tvb(24, mlen):tvb(), pinfo, tree, band(tvb(16, 4):uint(), 0xffffff),
				band(tvb(20, 4):uint(), 0xffffff))
		end
	elseif l4 == 0x09 or l4 == 0x0a then
		local off = 16
		if l4 == 0x0a then
			off = off + 40
		end
		if off > total - 5 then
			t:add_proto_expert_info(e16.malformed, "GRH cut off")
			return len
		end
		local body = tvb(0, total - 5):tvb()
		local opcode, dqp, sqp, poff, pad = dissect_bth(body, t, off, e16.malformed)
		if opcode ~= nil then
			local plen = total - 5 - poff - pad
			if plen > 0 and sqp ~= nil and (dqp <= 1 or sqp <= 1) then
				dissect_mad(tvb(poff, plen):tvb(), pinfo, tree, dqp, sqp)
			elseif plen > 0 then
				t:add(f16.payload, tvb(poff, plen))
			end
		end
	elseif total - 5 > 16 then
		t:add(f16.payload, tvb(16, total - 5 - 16))
	end
	return len
end

-- 16B packets on LINKTYPE_USER0 (wiretap encapsulation USER0), 9B on ERF type 29.
DissectorTable.get("wtap_encap"):add(wtap_encaps and wtap_encaps.USER0 or 45, p16)
DissectorTable.get("erf.types.type"):add(29, p9)
