/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame decoder and its text (decode.h): toroid-dump's decode of torus frames, plain or
 * over IPv4/UDP, their bundles and the VNI messages they carry. The verdicts are the engine's
 * own (trd_wire_parse(), trd_wire_crc_check(), trd_wire_entry_decode(), trd_vw_decode()).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toroid/toroid.h>
#include <toroid/vni_wire.h>
#include <toroid/wire.h>

#include "decode.h"

/* ---- header flag names: the one table of them (bit, letter, name) ---- */

const struct dec_flag dec_hdr_flags[] = {
#define DEC_FLAG_(e, l, n, v) {TRD_HF_##e, l, n},
	TRD_HDR_FLAGS(DEC_FLAG_)
#undef DEC_FLAG_
};

const size_t dec_n_hdr_flags = sizeof(dec_hdr_flags) / sizeof(dec_hdr_flags[0]);
#define DEC_N_HDR_FLAGS dec_n_hdr_flags

/* Descriptor flags and operations, for remote-get payloads (-v). One row per flag (clang-format
 * would pack the rows into columns). */
/* clang-format off */
static const struct dec_flag dec_desc_flags[] = {
	{TRD_DF_SRC_MR, 'M', "src_mr"},
	{TRD_DF_IMM, 'I', "imm"},
	{TRD_DF_ORDERED, 'O', "ordered"},
	{0x08, 'R', "remote"}, /* TRD_DF_REMOTE, engine-only: refused on the wire */
	{TRD_DF_CPL, 'C', "cpl"},
#ifdef TRD_DF_ACKREQ
	{TRD_DF_ACKREQ, 'A', "ackreq"},
#endif
};
/* clang-format on */

static const char *const dec_op_names[] = {"none", "put", "fifo", "rget", "atomic"};

/* ---- small decoders ---- */

uint64_t
dec_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t
dec_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

/* The header's fields as they are, for frames trd_wire_parse() refuses (display only). */
static void
dec_raw_header(const uint8_t *frame, struct trd_pkt *p)
{
	struct trd_hdr h;

	memcpy(&h, frame + TRD_ETH_HLEN, sizeof(h));
	trd_hdr_decode(&h, p);
	p->csum = trd_be16(h.csum);
}

/* The checksum the header should carry. */
static uint16_t
dec_good_csum(const uint8_t *frame)
{
	struct trd_hdr h;

	memcpy(&h, frame + TRD_ETH_HLEN, sizeof(h));
	trd_hdr_seal(&h);
	return trd_be16(h.csum);
}

/* An IPv4 datagram that claims to be ours: UDP to our port. */
static int
dec_is_ours(uint16_t udp_port, const uint8_t *f, uint32_t len)
{
	const uint8_t *ip = f + TRD_ETH_HLEN;

	/* the UDP header follows the IPv4 header's own length (IHL), options included: the
	 * destination port is read only when the frame holds it */
	return udp_port != 0 && len >= TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN &&
	       dec_be(f + 12, 2) == 0x0800 && (ip[0] >> 4) == 4 && ip[9] == 17 &&
	       len >= TRD_ETH_HLEN + (ip[0] & 15u) * 4u + 8u &&
	       dec_be(ip + (ip[0] & 15) * 4 + 2, 2) == udp_port;
}

void
dec_init(struct dec_ctx *d, FILE *out)
{
	memset(d, 0, sizeof(*d));
	d->out = out;
	d->udp_port = TRD_UDP_PORT;
}

void
dec_classify(const struct dec_ctx *d, struct dec_frame *f)
{
	f->frame = f->data;
	f->frame_len = f->len;
	f->caplen = f->wire_caplen;
	f->etype = f->len >= TRD_ETH_HLEN ? (uint16_t)dec_be(f->data + 12, 2) : 0;
	if (dec_is_ours(d->udp_port, f->data, f->len)) {
		uint32_t off = 0;

		f->cause = trd_wire_parse_any(f->data, f->len, d->udp_port, &f->p, &off);
		if (f->cause == TRD_DROP_BAD_ENCAP || f->cause == TRD_DROP_SHORT_FRAME ||
		    off != TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN) {
			f->cls = DEC_BAD_SHORT; /* a wrapper we cannot take the frame out of */
			if (f->cause == 0)
				f->cause = TRD_DROP_BAD_ENCAP;
			return;
		}
		f->encap = 1;
		f->data += TRD_UDP_ENCAP_LEN;
		f->len -= TRD_UDP_ENCAP_LEN;
		f->caplen = f->caplen > TRD_UDP_ENCAP_LEN ? f->caplen - TRD_UDP_ENCAP_LEN : 0;
	} else {
		f->cause = trd_wire_parse(f->data, f->len, &f->p);
	}
	/* the engine checks a payload CRC after the header */
	if (f->cause == 0)
		f->cause = trd_wire_crc_check(f->data, f->len, &f->p);
	if (f->cause == 0)
		f->cls = DEC_GOOD;
	else if (!f->encap && f->len >= TRD_ETH_HLEN && f->etype != TRD_ETHERTYPE)
		f->cls = DEC_NOT_TORUS;
	else if (f->len < TRD_FRAME_HLEN)
		f->cls = DEC_BAD_SHORT;
	else {
		f->cls = DEC_BAD_HDR;
		dec_raw_header(f->data, &f->p);
	}
}

const char *
dec_type_str(unsigned int type, char *buf, size_t n)
{
	const char *name = trd_pkt_type_name(type);

	if (name != NULL)
		return name;
	snprintf(buf, n, "type%u", type);
	return buf;
}

/* "[FL]" style: letters of known bits, +0x.. for unknown ones, "." for none. */
static const char *
dec_flags_short(uint16_t flags, char *buf, size_t n)
{
	size_t k = 0;
	uint16_t rest = flags;

	buf[k++] = '[';
	for (size_t i = 0; i < DEC_N_HDR_FLAGS; i++)
		if (flags & dec_hdr_flags[i].bit) {
			buf[k++] = dec_hdr_flags[i].letter;
			rest &= (uint16_t)~dec_hdr_flags[i].bit;
		}
	if (rest != 0)
		k += (size_t)snprintf(buf + k, n - k, "+0x%x", rest);
	else if (flags == 0)
		buf[k++] = '.';
	snprintf(buf + k, n - k, "]");
	return buf;
}

/* "first,last" style, for -v. */
static const char *
dec_flags_long(const struct dec_flag *tab, size_t nt, unsigned int flags, char *buf, size_t n)
{
	size_t k = 0;
	unsigned int rest = flags;

	buf[0] = '\0';
	for (size_t i = 0; i < nt; i++)
		if (flags & tab[i].bit) {
			k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "," : "", tab[i].name);
			rest &= ~(unsigned int)tab[i].bit;
		}
	if (rest != 0)
		k += (size_t)snprintf(buf + k, n - k, "%s0x%x", k ? "," : "", rest);
	if (k == 0)
		snprintf(buf, n, "none");
	return buf;
}

static const char *
dec_etype_name(uint16_t t)
{
	switch (t) {
	case 0x0800:
		return "IPv4";
	case 0x0806:
		return "ARP";
	case 0x86DD:
		return "IPv6";
	case 0x8100:
		return "802.1Q";
	case 0x88CC:
		return "LLDP";
	default:
		return NULL;
	}
}

/* ---- printing ---- */
static void
dec_print_mac(FILE *out, const uint8_t *m)
{
	fprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void
dec_print_ether(FILE *out, const struct dec_frame *f)
{
	dec_print_mac(out, f->frame + 6);
	fprintf(out, " > ");
	dec_print_mac(out, f->frame);
	fprintf(out, ", length %u: ", f->frame_len);
}

/* The IPv4/UDP wrapper of an encapsulated frame, tcpdump-style. */
static void
dec_print_ip(FILE *out, const struct dec_frame *f)
{
	const uint8_t *ip = f->frame + TRD_ETH_HLEN, *udp = ip + 20;

	fprintf(out, "IP %u.%u.%u.%u.%u > %u.%u.%u.%u.%u: ", ip[12], ip[13], ip[14], ip[15],
		(unsigned int)dec_be(udp, 2), ip[16], ip[17], ip[18], ip[19],
		(unsigned int)dec_be(udp + 2, 2));
}

/* The one-line decode of a torus header (good or refused). */
static void
dec_print_hdr_line(FILE *out, const struct trd_pkt *p)
{
	char tb[16], fb[32];

	fprintf(out,
		"%u,%u,%u > %u,%u,%u: %s %s fifo %u ctr %u key 0x%" PRIx64 " off %" PRIu64
		" len %u/%u msg %u seq %u ack %u hops %u",
		p->src[0], p->src[1], p->src[2], p->dst[0], p->dst[1], p->dst[2],
		dec_type_str(p->type, tb, sizeof(tb)), dec_flags_short(p->flags, fb, sizeof(fb)),
		p->fifo, p->counter, p->key, p->offset, p->pay_len, p->msg_len, p->msg_id, p->seq,
		p->ack, p->hops);
	if (p->aux != 0)
		fprintf(out, " aux %u", p->aux);
}

static void
dec_hex(FILE *out, const uint8_t *d, uint32_t n)
{
	for (uint32_t off = 0; off < n; off += 16) {
		uint32_t m = n - off < 16 ? n - off : 16;

		fprintf(out, "\t0x%04x:  ", off);
		for (uint32_t i = 0; i < 16; i++) {
			if (i < m)
				fprintf(out, "%02x", d[off + i]);
			else
				fprintf(out, "  ");
			if (i & 1)
				fprintf(out, " ");
		}
		fprintf(out, " ");
		for (uint32_t i = 0; i < m; i++)
			fputc(d[off + i] >= 0x20 && d[off + i] < 0x7f ? d[off + i] : '.', out);
		fprintf(out, "\n");
	}
}

/* An engine collective's piece (docs/collectives.md): what its header's fields mean. */
static void
dec_print_comb(FILE *out, const struct trd_pkt *p)
{
	static const char *const phases[] = {"?", "up", "down", "abort"};
	static const char *const kinds[] = {"?", "allreduce", "reduce", "broadcast", "barrier"};
	static const char *const ops[] = {"-", "sum", "min", "max", "band", "bor", "bxor"};
	static const char *const types[] = {"-", "int64", "uint64", "double"};
	unsigned int w = p->counter, k = w >> 12, op = (w >> 8) & 0xf, dims = (w >> 4) & 0xf,
		     ty = w & 0xf;
	uint32_t np = p->msg_len == 0 ? 1 : (p->msg_len + TRD_COMB_PIECE - 1) / TRD_COMB_PIECE;

	fprintf(out,
		"\tcomb %s %s %s %s group %s%s%s #%" PRIu64 " root rank %u piece %" PRIu64
		" of %u\n",
		p->fifo >= TRD_COMB_UP && p->fifo <= TRD_COMB_ABORT ? phases[p->fifo] : "?",
		k < 5 ? kinds[k] : "?", op < 7 ? ops[op] : "?", ty < 4 ? types[ty] : "?",
		dims & 1 ? "x" : "", dims & 2 ? "y" : "", dims & 4 ? "z" : "", p->key, p->aux,
		p->offset / TRD_COMB_PIECE, np);
}

#define DESC_LE(d, f) dec_le((d) + offsetof(struct trd_desc, f), sizeof(((struct trd_desc *)0)->f))

/* Payload structure, by type name (so the decoder stays independent of new type values). */
static void
dec_print_payload(FILE *out, const struct trd_pkt *p, const uint8_t *pay, uint32_t avail)
{
	const char *tn = trd_pkt_type_name(p->type);
	uint32_t n = p->pay_len < avail ? p->pay_len : avail;

	if (tn == NULL)
		return;
	if (strcmp(tn, "comb") == 0) {
		dec_print_comb(out, p);
	} else if (strcmp(tn, "rget") == 0) {
		for (uint32_t i = 0; i + TRD_WIRE_DESC_LEN <= n; i += TRD_WIRE_DESC_LEN) {
			const uint8_t *d = pay + i;
			unsigned int op = d[offsetof(struct trd_desc, op)];
			const uint8_t *c = d + offsetof(struct trd_desc, dst);
			char fb[96], ob[16];

			snprintf(ob, sizeof(ob), "op%u", op);
			fprintf(out,
				"\tdesc %u: %s flags %s fifo %u dst %u,%u,%u inj_ctr %u rec_ctr %u"
				" len %u\n",
				i / TRD_WIRE_DESC_LEN,
				op < sizeof(dec_op_names) / sizeof(dec_op_names[0])
					? dec_op_names[op]
					: ob,
				dec_flags_long(dec_desc_flags,
					       sizeof(dec_desc_flags) / sizeof(dec_desc_flags[0]),
					       d[offsetof(struct trd_desc, flags)], fb, sizeof(fb)),
				d[offsetof(struct trd_desc, fifo)], c[0], c[1], c[2],
				(unsigned int)DESC_LE(d, inj_ctr),
				(unsigned int)DESC_LE(d, rec_ctr), (unsigned int)DESC_LE(d, len));
			fprintf(out,
				"\t        src 0x%" PRIx64 " src_key 0x%" PRIx64 " rkey 0x%" PRIx64
				" roff %" PRIu64 " user 0x%" PRIx64 " aux %u\n",
				DESC_LE(d, src), DESC_LE(d, src_key), DESC_LE(d, rkey),
				DESC_LE(d, roff), DESC_LE(d, user), (unsigned int)DESC_LE(d, aux));
		}
	} else if (strcmp(tn, "atomic") == 0 && n >= 24) {
		static const char *const aop[] = {"?", "fetch_add", "compare_swap", "swap"};

		fprintf(out, "\tatomic %s operand 0x%" PRIx64 " compare 0x%" PRIx64 "\n",
			pay[0] < 4 ? aop[pay[0]] : "?", dec_be(pay + 8, 8), dec_be(pay + 16, 8));
	} else if (strcmp(tn, "atomic_reply") == 0 && n >= 8) {
		const char *v = trd_drop_name((unsigned int)p->key);

		fprintf(out, "\tverdict %s old 0x%" PRIx64 "\n", v && p->key ? v : "ok",
			dec_be(pay, 8));
	} else if (strcmp(tn, "ack") == 0 && n != 0) {
		/* selective acknowledgement: bit k (LSB first) = sequence ack + 1 + k is held */
		fprintf(out, "\tsack");
		for (uint32_t k = 0; k < n * 8; k++)
			if (pay[k / 8] & (1u << (k % 8)))
				fprintf(out, " %" PRIu64, (uint64_t)p->ack + 1 + k);
		fprintf(out, "\n");
	} else if (strcmp(tn, "done") == 0) {
		const char *v = trd_drop_name((unsigned int)p->key);

		fprintf(out, "\tverdict %s for msg %" PRIu64 "\n", v && p->key ? v : "ok",
			p->offset);
	}
}

/* The payload CRC trailer, if the header says there is one. */
static void
dec_print_crc(FILE *out, const struct dec_frame *f)
{
	const struct trd_pkt *p = &f->p;
	const uint8_t *c = f->data + TRD_FRAME_HLEN + p->pay_len;
	uint32_t crc;

	if (!(p->flags & TRD_HF_CRC))
		return;
	if ((uint32_t)TRD_FRAME_HLEN + p->pay_len + 4u > f->len) {
		fprintf(out, "\tcrc missing\n");
		return;
	}
	crc = (uint32_t)dec_be(c, 4);
	fprintf(out, "\tcrc 0x%08x (%s)\n", crc,
		f->truncated ? "not captured"
		: trd_wire_crc(f->data + TRD_FRAME_HLEN, p->pay_len, 0xffffffff) == crc
			? "correct"
			: "incorrect");
}

void
dec_print_verbose(const struct dec_ctx *d, const struct dec_frame *f)
{
	FILE *out = d->out;
	const struct trd_pkt *p = &f->p;
	char tb[16], fb[96];

	if (f->cls == DEC_GOOD || f->cls == DEC_BAD_HDR) {
		uint16_t good = dec_good_csum(f->data);

		fprintf(out, "\tversion %u type %u (%s) flags 0x%04x (%s) hops %u\n", p->version,
			p->type, dec_type_str(p->type, tb, sizeof(tb)), p->flags,
			dec_flags_long(dec_hdr_flags, DEC_N_HDR_FLAGS, p->flags, fb, sizeof(fb)),
			p->hops);
		fprintf(out, "\tsrc %u,%u,%u dst %u,%u,%u fifo %u counter %u csum 0x%04x",
			p->src[0], p->src[1], p->src[2], p->dst[0], p->dst[1], p->dst[2], p->fifo,
			p->counter,
			(unsigned int)dec_be(
				f->data + TRD_ETH_HLEN + offsetof(struct trd_hdr, csum), 2));
		if (trd_wire_hdr_verify(f->data + TRD_ETH_HLEN) == 0)
			fprintf(out, " (correct)\n");
		else
			fprintf(out, " (incorrect, should be 0x%04x)\n", good);
		fprintf(out,
			"\tkey 0x%016" PRIx64 " offset %" PRIu64
			" msg_len %u pay_len %u epoch %u\n",
			p->key, p->offset, p->msg_len, p->pay_len, p->epoch);
		fprintf(out, "\tmsg_id %u seq %u ack %u aux %u\n", p->msg_id, p->seq, p->ack,
			p->aux);
		dec_print_crc(out, f);
		if (f->cls == DEC_GOOD)
			dec_print_payload(out, p, f->data + TRD_FRAME_HLEN,
					  f->caplen > TRD_FRAME_HLEN ? f->caplen - TRD_FRAME_HLEN
								     : 0);
	}
	dec_hex(out, f->frame, f->wire_caplen < f->frame_len ? f->wire_caplen : f->frame_len);
}

/* ---- the VNI protocol (docs/vni.md): its messages ride in FIFO frames whose user word holds
 * TRD_VW_MAGIC; the long data of a message is engine puts into what its CTS granted ---- */

/* The VNI meaning of a message whose header is @p p and payload @p pay (@p avail bytes). */
static void
dec_print_vni(struct dec_ctx *d, const struct trd_pkt *p, const uint8_t *pay, uint32_t avail)
{
	FILE *out = d->out;
	struct trd_vw_hdr h;

	if (avail > p->pay_len)
		avail = p->pay_len;
	if (p->type == TRD_PKT_FIFO && (p->key >> 32) == TRD_VW_MAGIC && p->offset == 0 &&
	    trd_vw_decode(pay, avail, &h) == 0) {
		fprintf(out, " | vni %s %u:%u > %u:%u msg %u", trd_vw_type_name(h.type), h.src_app,
			h.src_proc, h.dst_app, h.dst_proc, h.msg_id);
		switch (h.type) {
		case TRD_VW_EAGER:
		case TRD_VW_RTS:
			fprintf(out, " tag 0x%" PRIx64 " len %u", h.tag, h.len);
			if (h.flags & TRD_VW_F_ORDERED) /* docs/vni.md, "Ordered interfaces" */
				fprintf(out, " ordered stream %u seq %u open %u",
					TRD_VW_ORD_STREAM(h.roff), TRD_VW_ORD_SEQ(h.roff),
					(uint32_t)h.status);
			break;
		case TRD_VW_CTS: {
			struct dec_grant *g = &d->grants[d->grant_next++ % DEC_GRANTS];

			fprintf(out, " grant %u len %u into key 0x%" PRIx64 " off %" PRIu64,
				h.grant_id, h.len, h.rkey, h.roff);
			/* the CTS goes receiver -> sender; the data comes back the other way */
			*g = (struct dec_grant){.rkey = h.rkey,
						.roff = h.roff,
						.len = h.len,
						.msg = h.msg_id,
						.grant = h.grant_id,
						.used = 1};
			memcpy(g->snd, p->dst, 3);
			memcpy(g->rcv, p->src, 3);
			break;
		}
		case TRD_VW_FIN:
		case TRD_VW_ABORT:
			fprintf(out, " grant %u", h.grant_id);
			break;
		case TRD_VW_WRITE:
		case TRD_VW_READ:
		case TRD_VW_ATOMIC:
			/* one-sided: the chunk's target address, its bytes, its place in the op */
			fprintf(out,
				" rkey 0x%" PRIx64 " at 0x%" PRIx64 " len %u (+%u of %" PRIu64 ")",
				h.rkey, h.roff, h.len, h.grant_id, h.tag);
			break;
		case TRD_VW_DATA:
			fprintf(out, " grant %u at %" PRIu64 " len %u", h.grant_id, h.roff, h.len);
			break;
		case TRD_VW_ATOMIC_RESP:
			if (h.status == 0)
				fprintf(out, " ok old 0x%" PRIx64, h.data);
			else
				fprintf(out, " status %d (%s)", h.status, strerror(-h.status));
			break;
		default: /* NAK, ACK, DONE, CANCEL, WRITE_ACK, READ_RESP: a verdict */
			if (h.status == 0)
				fprintf(out, " ok");
			else
				fprintf(out, " status %d (%s)", h.status, strerror(-h.status));
			if (h.type == TRD_VW_ACK && (h.flags & TRD_VW_F_HDR))
				fprintf(out, " header only"); /* an EAGER kept as its header */
			break;
		}
		return;
	}
	if (p->type == TRD_PKT_PUT) {
		for (unsigned int i = 0; i < DEC_GRANTS; i++) {
			const struct dec_grant *g = &d->grants[i];

			if (g->used && g->rkey == p->key && memcmp(g->snd, p->src, 3) == 0 &&
			    memcmp(g->rcv, p->dst, 3) == 0 && p->offset >= g->roff &&
			    p->offset - g->roff < g->len) {
				fprintf(out, " | vni data msg %u grant %u at %" PRIu64, g->msg,
					g->grant, p->offset - g->roff);
				return;
			}
		}
	}
}

/* The messages of a bundle, one line each ("  [i] " and the header the message would have
 * had alone), checked as the engine checks them; a malformed entry ends the list. */
static void
dec_print_bundle(struct dec_ctx *d, const struct dec_frame *f)
{
	FILE *out = d->out;
	const struct trd_pkt *p = &f->p;
	const uint8_t *pay = f->data + TRD_FRAME_HLEN;
	uint32_t avail = f->len > TRD_FRAME_HLEN ? f->len - TRD_FRAME_HLEN : 0, off = 0;

	if (avail > p->pay_len)
		avail = p->pay_len;
	for (uint32_t i = 0; i < p->aux; i++) {
		struct trd_pkt e;
		int cause = trd_wire_entry_decode(p, pay + off, avail - off, i, &e);

		fprintf(out, "\n  [%u] ", i);
		if (cause != 0) {
			fprintf(out, "malformed entry (%s)", trd_drop_name((unsigned int)cause));
			return;
		}
		dec_print_hdr_line(out, &e);
		dec_print_vni(d, &e, pay + off + TRD_ENTRY_LEN, e.pay_len);
		off += TRD_ENTRY_LEN + e.pay_len;
	}
	if (off != avail)
		fprintf(out, "\n  malformed bundle (%u bytes after its last entry)", avail - off);
}

void
dec_print_line(struct dec_ctx *d, const struct dec_frame *f, int ether)
{
	FILE *out = d->out;

	if (ether && f->frame_len >= TRD_ETH_HLEN)
		dec_print_ether(out, f);
	if (f->encap)
		dec_print_ip(out, f);
	switch (f->cls) {
	case DEC_GOOD:
		dec_print_hdr_line(out, &f->p);
		if (f->p.type == TRD_PKT_BUNDLE)
			dec_print_bundle(d, f);
		else
			dec_print_vni(d, &f->p, f->data + TRD_FRAME_HLEN,
				      f->len > TRD_FRAME_HLEN ? f->len - TRD_FRAME_HLEN : 0);
		break;
	case DEC_BAD_HDR:
		fprintf(out, "malformed (%s): ", trd_drop_name((unsigned int)f->cause));
		dec_print_hdr_line(out, &f->p);
		break;
	case DEC_BAD_SHORT:
		fprintf(out, "malformed (%s): %u-byte frame", trd_drop_name((unsigned int)f->cause),
			f->len);
		break;
	case DEC_NOT_TORUS: {
		const char *en = dec_etype_name(f->etype);

		fprintf(out, "not torus: ethertype 0x%04x%s%s%s, length %u", f->etype,
			en ? " (" : "", en ? en : "", en ? ")" : "", f->len);
		break;
	}
	}
	if (f->truncated)
		fprintf(out, " [captured %u of %u bytes]", f->wire_caplen, f->frame_len);
}

const char dec_fields_header[] =
	"#n\ttime\tcaplen\tlen\tverdict\tversion\ttype\ttype_name\tflags\tsrc_x\tsrc_y\tsrc_z\t"
	"hops\tdst_x\tdst_y\tdst_z\tfifo\tcounter\tcsum\tkey\toffset\tmsg_len\tpay_len\tepoch\t"
	"msg_id\tseq\tack\taux\n";

void
dec_print_fields(const struct dec_ctx *d, const struct dec_frame *f)
{
	FILE *out = d->out;
	const struct trd_pkt *p = &f->p;
	const char *verdict;
	char tb[16];

	if (f->cls == DEC_GOOD)
		verdict = "ok";
	else if (f->cls == DEC_NOT_TORUS)
		verdict = "not_torus";
	else
		verdict = trd_drop_name((unsigned int)f->cause);
	fprintf(out, "%u\t%u\t%s", f->wire_caplen, f->len, verdict);
	if (f->cls != DEC_GOOD && f->cls != DEC_BAD_HDR) {
		for (int i = 0; i < 23; i++)
			fprintf(out, "\t-");
		fprintf(out, "\n");
		return;
	}
	fprintf(out,
		"\t%u\t%u\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64
		"\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
		p->version, p->type, dec_type_str(p->type, tb, sizeof(tb)), p->flags, p->src[0],
		p->src[1], p->src[2], p->hops, p->dst[0], p->dst[1], p->dst[2], p->fifo, p->counter,
		(unsigned int)dec_be(f->data + TRD_ETH_HLEN + offsetof(struct trd_hdr, csum), 2),
		p->key, p->offset, p->msg_len, p->pay_len, p->epoch, p->msg_id, p->seq, p->ack,
		p->aux);
}