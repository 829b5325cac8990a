-- SPDX-License-Identifier: BSD-3-Clause
--
-- Wireshark dissector for toroid torus frames: Ethernet II, EtherType 0x88B5, a 56-byte
-- big-endian header (include/toroid/wire.h), then the payload. For Wireshark 4.0 / Lua 5.2.
--
--   wireshark -X lua_script:tools/wireshark/toroid.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/toroid.lua -r capture.pcap -Y toroid
--   or copy this file to ~/.local/lib/wireshark/plugins/
--
-- Every header field has a display-filter name (toroid.type, toroid.src.x, toroid.key, ...).
-- The header checksum is verified (expert info "toroid.csum.bad" when it is wrong). Remote-get
-- payloads are decoded as 64-byte descriptors (struct trd_desc, in the sender's byte order:
-- little-endian on every machine toroid runs on), atomics as their operation and operands,
-- DONE and ATOMIC_REPLY verdicts by drop-cause name. See docs/capture-and-decode.md.

-- Loaded twice (the copy the packages install in Wireshark's plugin folder, and -X lua_script:
-- this file), the first one decodes and the second stops here: Proto() refuses a second
-- protocol of the same name with an error on every run.
local loaded, toroid = pcall(Proto, "toroid", "toroid torus messaging")
if not loaded then
	return
end

local HDR_LEN = 56
local DESC_LEN = 64
local ENTRY_LEN = 24

-- Packet types: keep in step with TRD_PKT_TYPES in include/toroid/wire.h (the dissector test
-- compares this table with `toroid-dump --list-types`).
-- BEGIN TYPES
local TYPES = {
	[1] = "put",
	[2] = "fifo",
	[3] = "rget",
	[4] = "ack",
	[5] = "done",
	[6] = "atomic",
	[7] = "atomic_reply",
	[8] = "bundle",
	[9] = "comb",
}
-- END TYPES

-- Header flag bits: TRD_HDR_FLAGS in include/toroid/wire.h (test_dissector.sh compares them
-- with `toroid-dump --list-flags`).
-- BEGIN FLAGS
local FLAGS = {
	{ bit = 0x0001, letter = "F", name = "first" },
	{ bit = 0x0002, letter = "L", name = "last" },
	{ bit = 0x0004, letter = "C", name = "cpl" },
	{ bit = 0x0008, letter = "A", name = "ackreq" },
	{ bit = 0x0010, letter = "K", name = "crc" },
	{ bit = 0x0020, letter = "P", name = "probe" },
	{ bit = 0x0040, letter = "H", name = "challenge" },
	{ bit = 0x0080, letter = "E", name = "echo" },
	{ bit = 0x0100, letter = "T", name = "proof" },
	{ bit = 0x0200, letter = "N", name = "lane" },
}
local HF_CRC = 0x0010
local HF_PROOF = 0x0100
-- END FLAGS

-- Drop causes (TRD_DROP_CAUSES, 0 = none): the verdict of DONE and ATOMIC_REPLY packets.
-- BEGIN DROPS
local DROPS = {
	[0] = "ok",
	[1] = "short_frame",
	[2] = "bad_ethertype",
	[3] = "bad_version",
	[4] = "bad_type",
	[5] = "bad_checksum",
	[6] = "bad_length",
	[7] = "bad_field",
	[8] = "unknown_node",
	[9] = "not_for_us",
	[10] = "hop_limit",
	[11] = "no_route",
	[12] = "fwd_full",
	[13] = "bad_key",
	[14] = "out_of_bounds",
	[15] = "no_access",
	[16] = "unknown_counter",
	[17] = "unknown_fifo",
	[18] = "fifo_full",
	[19] = "reassembly",
	[20] = "no_memory",
	[21] = "bad_desc",
	[22] = "bad_dst",
	[23] = "unknown_completion",
	[24] = "bad_align",
	[25] = "reply_full",
	[26] = "bad_crc",
	[27] = "duplicate",
	[28] = "window_exceeded",
	[29] = "bad_session",
	[30] = "peer_down",
	[31] = "bad_encap",
	[32] = "unsequenced",
	[33] = "bad_proof",
	[34] = "bad_combine",
	[35] = "bad_lane",
	[36] = "ctr_denied",
}
-- END DROPS

-- Descriptor operations and flags (enum trd_op, TRD_DF_* in include/toroid/toroid.h).
local OPS = { [0] = "none", [1] = "put", [2] = "fifo", [3] = "rget", [4] = "atomic" }
local DESC_FLAGS = {
	{ bit = 0x01, name = "src_mr" },
	{ bit = 0x02, name = "imm" },
	{ bit = 0x04, name = "ordered" },
	{ bit = 0x08, name = "remote" },
	{ bit = 0x10, name = "cpl" },
	{ bit = 0x20, name = "ackreq" },
}
-- Engine collectives (COMB frames, docs/collectives.md): the header's fifo is the phase, its
-- counter the collective's word (kind, op, group's axes, element type), key its number, aux
-- the root's rank (enum trd_comb_* in include/toroid/wire.h).
local COMB_PHASES = { [1] = "up", [2] = "down", [3] = "abort" }
local COMB_KINDS = { [1] = "allreduce", [2] = "reduce", [3] = "broadcast", [4] = "barrier" }
local COMB_OPS = { [0] = "-", [1] = "sum", [2] = "min", [3] = "max", [4] = "band", [5] = "bor",
	[6] = "bxor" }
local COMB_TYPES = { [0] = "-", [1] = "int64", [2] = "uint64", [3] = "double" }
local COMB_PIECE = 1432 -- TRD_COMB_PIECE of include/toroid/wire.h
local ATOMIC_OPS = { [1] = "fetch_add", [2] = "compare_swap", [3] = "swap" }
local CSUM_STATUS = { [0] = "bad", [1] = "good" }

local f = {}
f.version = ProtoField.uint8("toroid.version", "Version", base.DEC)
f.type = ProtoField.uint8("toroid.type", "Type", base.DEC, TYPES)
f.flags = ProtoField.uint16("toroid.flags", "Flags", base.HEX)
f.flag = {}
for _, fl in ipairs(FLAGS) do
	f.flag[fl.name] = ProtoField.bool("toroid.flags." .. fl.name, fl.name, 16, nil, fl.bit)
end
f.src_x = ProtoField.uint8("toroid.src.x", "Source X", base.DEC)
f.src_y = ProtoField.uint8("toroid.src.y", "Source Y", base.DEC)
f.src_z = ProtoField.uint8("toroid.src.z", "Source Z", base.DEC)
f.hops = ProtoField.uint8("toroid.hops", "Hop limit", base.DEC)
f.dst_x = ProtoField.uint8("toroid.dst.x", "Destination X", base.DEC)
f.dst_y = ProtoField.uint8("toroid.dst.y", "Destination Y", base.DEC)
f.dst_z = ProtoField.uint8("toroid.dst.z", "Destination Z", base.DEC)
f.fifo = ProtoField.uint8("toroid.fifo", "FIFO", base.DEC)
f.counter = ProtoField.uint16("toroid.counter", "Reception counter", base.DEC)
f.csum = ProtoField.uint16("toroid.csum", "Header checksum", base.HEX)
f.csum_status = ProtoField.uint8("toroid.csum.status", "Checksum status", base.DEC, CSUM_STATUS)
f.key = ProtoField.uint64("toroid.key", "Key", base.HEX)
f.offset = ProtoField.uint64("toroid.offset", "Offset", base.DEC)
f.msg_len = ProtoField.uint32("toroid.msg_len", "Message length", base.DEC)
f.pay_len = ProtoField.uint16("toroid.pay_len", "Payload length", base.DEC)
f.epoch = ProtoField.uint16("toroid.epoch", "Session epoch", base.DEC)
f.msg_id = ProtoField.uint32("toroid.msg_id", "Message id", base.DEC)
f.seq = ProtoField.uint32("toroid.seq", "Sequence number", base.DEC)
f.ack = ProtoField.uint32("toroid.ack", "Next sequence number expected", base.DEC)
f.aux = ProtoField.uint32("toroid.aux", "Completion / operation id", base.DEC)
f.verdict = ProtoField.uint64("toroid.verdict", "Verdict", base.DEC)
f.payload = ProtoField.bytes("toroid.payload", "Payload")
f.crc = ProtoField.uint32("toroid.crc", "Payload CRC32C", base.HEX)
f.crc_status = ProtoField.uint8("toroid.crc.status", "CRC status", base.DEC, CSUM_STATUS)
f.proof = ProtoField.uint64("toroid.proof", "Session token", base.HEX)
f.comb_phase = ProtoField.uint8("toroid.comb.phase", "Collective phase", base.DEC, COMB_PHASES)
f.comb_kind = ProtoField.uint8("toroid.comb.kind", "Collective", base.DEC, COMB_KINDS)
f.comb_op = ProtoField.uint8("toroid.comb.op", "Operation", base.DEC, COMB_OPS)
f.comb_dims = ProtoField.uint8("toroid.comb.dims", "Group axes (x=1 y=2 z=4)", base.HEX)
f.comb_type = ProtoField.uint8("toroid.comb.type", "Element type", base.DEC, COMB_TYPES)
f.comb_seq = ProtoField.uint64("toroid.comb.seq", "Collective number", base.DEC)
f.comb_root = ProtoField.uint32("toroid.comb.root", "Root rank", base.DEC)
f.comb_piece = ProtoField.uint32("toroid.comb.piece", "Piece", base.DEC)
f.sack = ProtoField.bytes("toroid.sack", "Selective acknowledgement bitmap")
f.sack_seq = ProtoField.uint32("toroid.sack.seq", "Held out of order", base.DEC)
-- remote-get descriptors (little-endian)
f.desc = ProtoField.bytes("toroid.desc", "Descriptor")
f.d_op = ProtoField.uint8("toroid.desc.op", "Operation", base.DEC, OPS)
f.d_flags = ProtoField.uint8("toroid.desc.flags", "Flags", base.HEX)
f.d_fifo = ProtoField.uint8("toroid.desc.fifo", "FIFO", base.DEC)
f.d_n_slots = ProtoField.uint8("toroid.desc.n_slots", "Inline slots", base.DEC)
f.d_dst_x = ProtoField.uint8("toroid.desc.dst.x", "Destination X", base.DEC)
f.d_dst_y = ProtoField.uint8("toroid.desc.dst.y", "Destination Y", base.DEC)
f.d_dst_z = ProtoField.uint8("toroid.desc.dst.z", "Destination Z", base.DEC)
f.d_inj_ctr = ProtoField.uint16("toroid.desc.inj_ctr", "Injection counter", base.DEC)
f.d_rec_ctr = ProtoField.uint16("toroid.desc.rec_ctr", "Reception counter", base.DEC)
f.d_len = ProtoField.uint32("toroid.desc.len", "Length", base.DEC)
f.d_src = ProtoField.uint64("toroid.desc.src", "Source", base.HEX)
f.d_src_key = ProtoField.uint64("toroid.desc.src_key", "Source key", base.HEX)
f.d_rkey = ProtoField.uint64("toroid.desc.rkey", "Remote key", base.HEX)
f.d_roff = ProtoField.uint64("toroid.desc.roff", "Remote offset", base.DEC)
f.d_user = ProtoField.uint64("toroid.desc.user", "User word", base.HEX)
f.d_msg_id = ProtoField.uint32("toroid.desc.msg_id", "Message id", base.DEC)
f.d_aux = ProtoField.uint32("toroid.desc.aux", "Completion / operation id", base.DEC)
-- atomics (big-endian)
f.a_op = ProtoField.uint8("toroid.atomic.op", "Atomic operation", base.DEC, ATOMIC_OPS)
f.a_operand = ProtoField.uint64("toroid.atomic.operand", "Operand", base.HEX)
f.a_compare = ProtoField.uint64("toroid.atomic.compare", "Compare", base.HEX)
f.a_old = ProtoField.uint64("toroid.atomic.old", "Old value", base.HEX)

-- The VNI protocol between engines (include/toroid/vni_wire.h): a 64-byte little-endian header
-- at the start of a FIFO message whose user word (the key) has TRD_VW_MAGIC in its high half.
local VW_MAGIC = 0x564e4931
local VW_TYPES = { [1] = "eager", [2] = "rts", [3] = "cts", [4] = "nak", [5] = "ack", [6] = "fin",
	[7] = "done", [8] = "abort", [9] = "cancel", [10] = "write", [11] = "write_ack", [12] = "read",
	[13] = "read_resp", [14] = "atomic", [15] = "atomic_resp" }
f.vni = ProtoField.bytes("toroid.vni", "VNI protocol header")
-- A bundle's messages (docs/wire-format.md "Bundles"): a 24-byte entry header each, then its bytes
f.entry = ProtoField.bytes("toroid.entry", "Message")
f.e_type = ProtoField.uint8("toroid.entry.type", "Type", base.DEC, TYPES)
f.e_fifo = ProtoField.uint8("toroid.entry.fifo", "Reception FIFO", base.DEC)
f.e_counter = ProtoField.uint16("toroid.entry.counter", "Reception counter", base.DEC)
f.e_len = ProtoField.uint16("toroid.entry.len", "Length", base.DEC)
f.e_key = ProtoField.uint64("toroid.entry.key", "Key or user word", base.HEX)
f.e_offset = ProtoField.uint64("toroid.entry.offset", "Offset", base.DEC)
f.e_msg_id = ProtoField.uint32("toroid.entry.msg_id", "Message id", base.DEC)
f.vni_type = ProtoField.uint8("toroid.vni.type", "VNI message", base.DEC, VW_TYPES)
f.vni_flags = ProtoField.uint8("toroid.vni.flags", "Flags", base.HEX)
f.vni_status = ProtoField.int32("toroid.vni.status", "Status", base.DEC)
f.vni_src_app = ProtoField.uint32("toroid.vni.src_app", "Source application", base.DEC)
f.vni_src_proc = ProtoField.uint32("toroid.vni.src_proc", "Source process", base.DEC)
f.vni_dst_app = ProtoField.uint32("toroid.vni.dst_app", "Destination application", base.DEC)
f.vni_dst_proc = ProtoField.uint32("toroid.vni.dst_proc", "Destination process", base.DEC)
f.vni_msg_id = ProtoField.uint32("toroid.vni.msg_id", "Message id", base.DEC)
f.vni_grant = ProtoField.uint32("toroid.vni.grant", "Grant id", base.DEC)
f.vni_len = ProtoField.uint32("toroid.vni.len", "Message length", base.DEC)
f.vni_key = ProtoField.uint32("toroid.vni.key", "Message key", base.HEX)
f.vni_tag = ProtoField.uint64("toroid.vni.tag", "Tag", base.HEX)
f.vni_rkey = ProtoField.uint64("toroid.vni.rkey", "Region key (CTS: granted; one-sided: target)", base.HEX)
f.vni_roff = ProtoField.uint64("toroid.vni.roff", "Offset (CTS) or target address (one-sided)", base.DEC)
-- EAGER, RTS with flag 0x2 (ordered, docs/vni.md "Ordered interfaces"): roff is stream << 32 | seq,
-- status the distance back to the oldest message of the stream not yet accepted
f.vni_ord_stream = ProtoField.uint32("toroid.vni.ord_stream", "Ordered stream", base.DEC)
f.vni_ord_seq = ProtoField.uint32("toroid.vni.ord_seq", "Ordered sequence number", base.DEC)
f.vni_ord_open = ProtoField.uint32("toroid.vni.ord_open", "Ordered: back to the oldest open", base.DEC)

-- ProtoField lists must be flat for registration.
local flat = {}
for k, v in pairs(f) do
	if k ~= "flag" then
		flat[#flat + 1] = v
	end
end
for _, fl in ipairs(FLAGS) do
	flat[#flat + 1] = f.flag[fl.name]
end
toroid.fields = flat

local e_csum = ProtoExpert.new("toroid.csum.bad", "Bad header checksum",
	expert.group.CHECKSUM, expert.severity.ERROR)
local e_short = ProtoExpert.new("toroid.short", "Shorter than the 56-byte torus header",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_len = ProtoExpert.new("toroid.len.bad", "Payload length past the end of the frame",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_type = ProtoExpert.new("toroid.type.unknown", "Unknown packet type",
	expert.group.MALFORMED, expert.severity.WARN)
local e_version = ProtoExpert.new("toroid.version.bad", "Unknown header version",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_crc = ProtoExpert.new("toroid.crc.bad", "Bad payload CRC32C",
	expert.group.CHECKSUM, expert.severity.ERROR)
toroid.experts = { e_csum, e_short, e_len, e_type, e_version, e_crc }

-- CRC32C (Castagnoli, reflected), initial value all ones, no final inversion: as the engine
-- computes it (rte_hash_crc).
local CRC_T = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if bit32.band(c, 1) ~= 0 then
			c = bit32.bxor(bit32.rshift(c, 1), 0x82F63B78)
		else
			c = bit32.rshift(c, 1)
		end
	end
	CRC_T[i] = c
end
local function crc32c(tvb, off, n)
	local c = 0xffffffff
	for i = off, off + n - 1 do
		c = bit32.bxor(bit32.rshift(c, 8), CRC_T[bit32.band(bit32.bxor(c, tvb(i, 1):uint()), 0xff)])
	end
	return c
end

-- RFC 1071 sum of the header; with its checksum in place a good header sums to 0xffff.
local function ones_sum(tvb, skip_csum)
	local s = 0
	for i = 0, HDR_LEN - 2, 2 do
		if not (skip_csum and i == 14) then
			s = s + tvb(i, 2):uint()
		end
	end
	while s > 0xffff do
		s = bit32.band(s, 0xffff) + bit32.rshift(s, 16)
	end
	return s
end

local function flag_letters(flags)
	local s, rest = "", flags
	for _, fl in ipairs(FLAGS) do
		if bit32.band(flags, fl.bit) ~= 0 then
			s = s .. fl.letter
			rest = bit32.band(rest, bit32.bnot(fl.bit))
		end
	end
	if rest ~= 0 then
		s = s .. string.format("+0x%x", rest)
	elseif flags == 0 then
		s = "."
	end
	return "[" .. s .. "]"
end

local function coord(tvb, off)
	return string.format("%d,%d,%d", tvb(off, 1):uint(), tvb(off + 1, 1):uint(),
		tvb(off + 2, 1):uint())
end

local function dissect_desc(tvb, tree, i)
	local t = tree:add(f.desc, tvb)
	t:set_text(string.format("Descriptor %d: %s to %s, %d bytes", i,
		OPS[tvb(0, 1):uint()] or ("op " .. tvb(0, 1):uint()), coord(tvb, 4),
		tvb(12, 4):le_uint()))
	t:add_le(f.d_op, tvb(0, 1))
	local names = {}
	for _, fl in ipairs(DESC_FLAGS) do
		if bit32.band(tvb(1, 1):uint(), fl.bit) ~= 0 then
			names[#names + 1] = fl.name
		end
	end
	t:add_le(f.d_flags, tvb(1, 1)):append_text(" [" .. table.concat(names, ",") .. "]")
	t:add_le(f.d_fifo, tvb(2, 1))
	t:add_le(f.d_n_slots, tvb(3, 1))
	t:add_le(f.d_dst_x, tvb(4, 1))
	t:add_le(f.d_dst_y, tvb(5, 1))
	t:add_le(f.d_dst_z, tvb(6, 1))
	t:add_le(f.d_inj_ctr, tvb(8, 2))
	t:add_le(f.d_rec_ctr, tvb(10, 2))
	t:add_le(f.d_len, tvb(12, 4))
	t:add_le(f.d_src, tvb(16, 8))
	t:add_le(f.d_src_key, tvb(24, 8))
	t:add_le(f.d_rkey, tvb(32, 8))
	t:add_le(f.d_roff, tvb(40, 8))
	t:add_le(f.d_user, tvb(48, 8))
	t:add_le(f.d_msg_id, tvb(56, 4))
	t:add_le(f.d_aux, tvb(60, 4))
end

-- The VNI header at the start of a memory-FIFO message whose user word's high half is @key_hi:
-- dissected under @tree; returns the text for the info column ("" if it is no VNI message).
local function dissect_vni(p, tree, key_hi)
	local len = p:len()
	local vt = len >= 64 and p(0, 1):uint() or 0
	if key_hi ~= VW_MAGIC or len < 64 or p(2, 2):le_uint() ~= 64 or not VW_TYPES[vt] then
		return ""
	end
	local vh = tree:add(f.vni, p(0, 64))
	vh:add(f.vni_type, p(0, 1))
	vh:add(f.vni_flags, p(1, 1))
	vh:add_le(f.vni_status, p(4, 4))
	vh:add_le(f.vni_src_app, p(8, 4))
	vh:add_le(f.vni_src_proc, p(12, 4))
	vh:add_le(f.vni_dst_app, p(16, 4))
	vh:add_le(f.vni_dst_proc, p(20, 4))
	vh:add_le(f.vni_msg_id, p(24, 4))
	vh:add_le(f.vni_grant, p(28, 4))
	vh:add_le(f.vni_len, p(32, 4))
	vh:add_le(f.vni_key, p(36, 4))
	vh:add_le(f.vni_tag, p(40, 8))
	vh:add_le(f.vni_rkey, p(48, 8))
	vh:add_le(f.vni_roff, p(56, 8))
	local ord = ""
	if (vt == 1 or vt == 2) and bit32.band(p(1, 1):uint(), 2) ~= 0 then
		vh:add_le(f.vni_ord_stream, p(60, 4))
		vh:add_le(f.vni_ord_seq, p(56, 4))
		vh:add_le(f.vni_ord_open, p(4, 4))
		ord = string.format(" ordered stream %d seq %d", p(60, 4):le_uint(), p(56, 4):le_uint())
	end
	return string.format(" | vni %s %d:%d > %d:%d msg %d", VW_TYPES[vt], p(8, 4):le_uint(),
		p(12, 4):le_uint(), p(16, 4):le_uint(), p(20, 4):le_uint(), p(24, 4):le_uint()) .. ord
end

function toroid.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "toroid"
	local t = tree:add(toroid, tvb(0, math.min(len, HDR_LEN)))
	if len < HDR_LEN then
		t:add_proto_expert_info(e_short)
		pinfo.cols.info = string.format("malformed: %d-byte torus header", len)
		return len
	end
	local h = tvb(0, HDR_LEN)
	local version = h(0, 1):uint()
	local ptype = h(1, 1):uint()
	local flags = h(2, 2):uint()
	local pay_len = h(36, 2):uint()
	local msg_len = h(32, 4):uint()
	local tname = TYPES[ptype] or ("type" .. ptype)

	local vi = t:add(f.version, h(0, 1))
	if version ~= 1 then
		vi:add_proto_expert_info(e_version)
	end
	local ti = t:add(f.type, h(1, 1))
	if TYPES[ptype] == nil then
		ti:add_proto_expert_info(e_type)
	end
	local fi = t:add(f.flags, h(2, 2))
	fi:append_text(" " .. flag_letters(flags))
	for _, fl in ipairs(FLAGS) do
		fi:add(f.flag[fl.name], h(2, 2))
	end
	local s = t:add(toroid, h(4, 3), "Source: " .. coord(h, 4))
	s:add(f.src_x, h(4, 1))
	s:add(f.src_y, h(5, 1))
	s:add(f.src_z, h(6, 1))
	t:add(f.hops, h(7, 1))
	local d = t:add(toroid, h(8, 3), "Destination: " .. coord(h, 8))
	d:add(f.dst_x, h(8, 1))
	d:add(f.dst_y, h(9, 1))
	d:add(f.dst_z, h(10, 1))
	t:add(f.fifo, h(11, 1))
	t:add(f.counter, h(12, 2))
	local ci = t:add(f.csum, h(14, 2))
	if ones_sum(h, false) == 0xffff then
		ci:append_text(" [correct]")
		ci:add(f.csum_status, 1):set_generated()
	else
		local want = bit32.band(bit32.bnot(ones_sum(h, true)), 0xffff)
		ci:append_text(string.format(" [incorrect, should be 0x%04x]", want))
		ci:add(f.csum_status, 0):set_generated()
		ci:add_proto_expert_info(e_csum)
	end
	t:add(f.key, h(16, 8))
	t:add(f.offset, h(24, 8))
	t:add(f.msg_len, h(32, 4))
	local pi = t:add(f.pay_len, h(36, 2))
	t:add(f.epoch, h(38, 2))
	t:add(f.msg_id, h(40, 4))
	t:add(f.seq, h(44, 4))
	t:add(f.ack, h(48, 4))
	t:add(f.aux, h(52, 4))

	local info = string.format("%s > %s %s %s off %s len %d/%d msg %d seq %d ack %d", coord(h, 4),
		coord(h, 8), tname, flag_letters(flags), tostring(h(24, 8):uint64()), pay_len, msg_len,
		h(40, 4):uint(), h(44, 4):uint(), h(48, 4):uint())
	if h(52, 4):uint() ~= 0 then
		info = info .. " aux " .. h(52, 4):uint()
	end

	-- against the frame's real length: a short snap length is no error
	local crclen = bit32.band(flags, HF_CRC) ~= 0 and 4 or 0
	local trailer = crclen + (bit32.band(flags, HF_PROOF) ~= 0 and 8 or 0)
	if pay_len + trailer > tvb:reported_len() - HDR_LEN then
		pi:add_proto_expert_info(e_len)
	elseif crclen ~= 0 and HDR_LEN + pay_len + 4 <= len then
		local ri = t:add(f.crc, tvb(HDR_LEN + pay_len, 4))
		if crc32c(tvb, HDR_LEN, pay_len) == tvb(HDR_LEN + pay_len, 4):uint() then
			ri:append_text(" [correct]")
			ri:add(f.crc_status, 1):set_generated()
		else
			ri:append_text(" [incorrect]")
			ri:add(f.crc_status, 0):set_generated()
			ri:add_proto_expert_info(e_crc)
		end
	end
	-- the session's token: after the payload and its CRC
	if bit32.band(flags, HF_PROOF) ~= 0 and HDR_LEN + pay_len + trailer <= len then
		t:add(f.proof, tvb(HDR_LEN + pay_len + crclen, 8))
	end
	pay_len = math.min(pay_len, len - HDR_LEN)
	if tname == "comb" then
		local w = h(12, 2):uint()
		local ct = t:add(f.comb_kind, h(12, 2), bit32.rshift(w, 12))
		ct:add(f.comb_phase, h(11, 1))
		ct:add(f.comb_op, h(12, 1), bit32.band(bit32.rshift(w, 8), 15))
		ct:add(f.comb_dims, h(13, 1), bit32.band(bit32.rshift(w, 4), 15))
		ct:add(f.comb_type, h(13, 1), bit32.band(w, 15))
		ct:add(f.comb_seq, h(16, 8))
		ct:add(f.comb_root, h(52, 4))
		local piece = math.floor(h(24, 8):uint64():tonumber() / COMB_PIECE)
		ct:add(f.comb_piece, h(24, 8), piece):set_generated()
		info = info .. string.format(" comb %s %s %s #%s piece %d",
			COMB_PHASES[h(11, 1):uint()] or "?", COMB_KINDS[bit32.rshift(w, 12)] or "?",
			COMB_OPS[bit32.band(bit32.rshift(w, 8), 15)] or "?",
			tostring(h(16, 8):uint64()), piece)
	end
	if tname == "done" or tname == "atomic_reply" then
		local v = h(16, 8):uint64():tonumber()
		t:add(f.verdict, h(16, 8)):append_text(" (" .. (DROPS[v] or "?") .. ")")
		info = info .. " verdict " .. (DROPS[v] or tostring(v))
	end
	if pay_len > 0 then
		local p = tvb(HDR_LEN, pay_len)
		local pt = t:add(f.payload, p)
		local vt = pay_len >= 64 and p(0, 1):uint() or 0
		if tname == "fifo" and h(24, 8):uint64():tonumber() == 0 then
			info = info .. dissect_vni(p, pt, h(16, 4):uint())
		elseif tname == "bundle" then
			local off = 0
			for i = 0, h(52, 4):uint() - 1 do
				if off + ENTRY_LEN > pay_len then
					break
				end
				local e = p(off, ENTRY_LEN)
				local elen = e(4, 2):uint()
				local etype = e(0, 1):uint()
				local n = math.min(ENTRY_LEN + elen, pay_len - off)
				local et = pt:add(f.entry, p(off, n))
				et:set_text(string.format("Message %d: %s len %d", i, TYPES[etype] or
					("type" .. etype), elen))
				et:add(f.e_type, e(0, 1))
				et:add(f.e_fifo, e(1, 1))
				et:add(f.e_counter, e(2, 2))
				et:add(f.e_len, e(4, 2))
				et:add(f.e_key, e(8, 8))
				et:add(f.e_offset, e(16, 8))
				et:add(f.e_msg_id, e(0, 1), h(40, 4):uint() + i):set_generated()
				if TYPES[etype] == "fifo" and n > ENTRY_LEN then
					info = info .. dissect_vni(p(off + ENTRY_LEN, n - ENTRY_LEN), et,
						e(8, 4):uint())
				elseif TYPES[etype] == "rget" then
					-- a remote get: its carried descriptors, as in an rget frame
					for k = 0, math.floor((n - ENTRY_LEN) / DESC_LEN) - 1 do
						dissect_desc(p(off + ENTRY_LEN + k * DESC_LEN, DESC_LEN), et, k)
					end
				end
				off = off + ENTRY_LEN + elen
			end
		elseif tname == "rget" then
			for i = 0, math.floor(pay_len / DESC_LEN) - 1 do
				dissect_desc(p(i * DESC_LEN, DESC_LEN), pt, i)
			end
		elseif tname == "atomic" and pay_len >= 24 then
			pt:add(f.a_op, p(0, 1))
			pt:add(f.a_operand, p(8, 8))
			pt:add(f.a_compare, p(16, 8))
		elseif tname == "atomic_reply" and pay_len >= 8 then
			pt:add(f.a_old, p(0, 8))
		elseif tname == "ack" then
			-- bit k (least significant first) of byte k/8: sequence ack + 1 + k is held
			local st = pt:add(f.sack, p)
			local ack = h(48, 4):uint()
			for k = 0, pay_len * 8 - 1 do
				local byte = p(math.floor(k / 8), 1):uint()
				if bit32.band(byte, bit32.lshift(1, k % 8)) ~= 0 then
					st:add(f.sack_seq, p(math.floor(k / 8), 1), ack + 1 + k)
				end
			end
		end
	end
	pinfo.cols.info = info
	return len
end

DissectorTable.get("ethertype"):add(0x88B5, toroid)
-- the same frames over IPv4/UDP (TRD_UDP_PORT, docs/wire-format.md "Over IP networks")
DissectorTable.get("udp.port"):add(34997, toroid)
