/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Malformed input: for every header field, frames with boundary and invalid values (and the
 * valid neighbours of each), written to a pcap with libpcap and replayed with net_pcap
 * rx_pcap= into node (0,0,0) of a 3x1x1 torus. The expectation is computed here, frame by
 * frame, from the wire format (docs/wire-format.md) and the node's set-up, not by the parser:
 *  - no crash, every frame received once;
 *  - every drop counted once under its expected cause, every valid frame counted once as
 *    delivered (put, FIFO packet, remote get, atomic, ack, completion, forward);
 *  - the region holds exactly what the valid puts and atomics wrote, the read-only region and
 *    the guard pages around both are untouched, counters hold exactly what they were owed.
 * Set TRD_MALFORMED_LIST=1 to print every frame with its expectation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus_vdev.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>

#include <toroid/testing.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 10000000
#define MAXF       1024
#define FMAX       2048
#define PAGE       4096u
#define REG        (2 * PAGE) /* the rw region */
#define ROLEN      512u       /* the read-only region */
#define ARENA      (5 * PAGE) /* guard | rw (2 pages) | guard | read-only + guard | */
#define RW_OFF     PAGE
#define RO_OFF     (4 * PAGE)
#define N_CTR      8 /* counters: ids 1..7, 3 left unallocated */
#define N_REC      4
#define N_INJ      2
#define RF_TRACK   3 /* outcomes of tracked operations */
#define ATOM_OFF   0 /* atomics work on the words at 0..63 of the region */

/* Which statistic a frame moves when the node takes it (besides its drop, if any). */
enum acc {
	A_NONE = 0,
	A_PUT,  /* rx_put */
	A_FIFO, /* rx_fifo */
	A_RGET, /* rx_rget */
	A_ATOM, /* atomics */
	A_ACK,  /* rx_acks */
	A_CTL,  /* rx_ctl: a completion of a tracked operation */
	A_FWD,  /* fwd_pkts */
	A_MAX
};
static const unsigned int acc_stat[A_MAX] = {
	[A_PUT] = TRD_STAT_RX_PUT,   [A_FIFO] = TRD_STAT_RX_FIFO, [A_RGET] = TRD_STAT_RX_RGET,
	[A_ATOM] = TRD_STAT_ATOMICS, [A_ACK] = TRD_STAT_RX_ACKS,  [A_CTL] = TRD_STAT_RX_CTL,
	[A_FWD] = TRD_STAT_FWD_PKTS,
};

struct tcase {
	uint32_t len;
	uint8_t cause; /* expected drop cause, 0 if taken */
	uint8_t acc;   /* enum acc */
	uint8_t ctl;   /* replies the node sends for it (DONE, atomic reply) */
	uint8_t held;  /* sequenced ahead of a hole: held (counted as reordered) first */
	char what[56];
};

static uint8_t frames[MAXF][FMAX];
static struct tcase cs[MAXF];
static unsigned int nf;
static char dir[] = "/tmp/toroid-malformed-XXXXXX";

/* what the node must end up with */
static uint8_t *arena, *snap, *model; /* model: the rw region as the valid frames leave it */
static int64_t ctr_want[N_CTR];
static unsigned int msgs_want[N_REC];
static uint64_t track_result, track_result_want;

static struct trd_node *node;
static struct trd_mr *mr_rw, *mr_ro;
static uint64_t K_RW, K_RO;
/* the node's session secret, set so that the capture can answer its challenges */
#define SK0  0x0123456789abcdefULL
#define SK1  0xfedcba9876543210ULL
#define PEER 1 /* rank of (1,0,0), the sender of the capture's frames */
static uint32_t track_done_id, track_atom_id;
/* the token of the peer's session @p e: its echo tells it, its sequenced frames carry it */
#define TOK(e) (0x70c3e5d1a2b49f00ULL ^ (uint64_t)(e))
/* add(): a sequenced frame or echo carries TOK(epoch), unless proof_none (no trailer) or
 * proof_tok (that token instead) says otherwise */
static bool proof_none;
static uint64_t proof_tok;

static struct trd_pkt
base(uint8_t type)
{
	struct trd_pkt p;

	memset(&p, 0, sizeof(p));
	p.version = TRD_WIRE_VERSION;
	p.type = type;
	p.flags = TRD_HF_ALL;
	p.src[0] = 1; /* from the neighbour on the pcap link */
	p.hops = 3;
	return p; /* to (0,0,0) */
}

static void
payload(uint8_t *pay, unsigned int n)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * (nf + 1);

	for (unsigned int i = 0; i < n; i++)
		pay[i] = (uint8_t)(test_rand(&s) >> 16);
}

/* Encode frame nf: Ethernet, header (pay_len = n), payload, a good CRC32C trailer when the
 * header says so, @p pad zero bytes. Returns its index; the caller may still spoil it. */
static unsigned int
add(struct trd_pkt p, const void *pay, uint16_t n, unsigned int pad, int cause, enum acc acc,
    const char *what)
{
	uint8_t *f = frames[nf];
	uint32_t len = TRD_FRAME_HLEN + n;

	T_ASSERT(nf < MAXF && len + 4 + TRD_PROOF_LEN + pad <= FMAX, "frame table");
	if ((p.seq != 0 || (p.flags & TRD_HF_ECHO)) && !proof_none)
		p.flags |= TRD_HF_PROOF;
	if ((p.flags & TRD_HF_ECHO) && (p.flags & TRD_HF_PROOF))
		p.msg_id = trd_wire_token_check(proof_tok != 0 ? proof_tok : TOK(p.epoch));
	memset(f, 0, FMAX);
	memset(f, 0xff, 6);
	f[6] = 0x02, f[11] = 0x01;
	f[12] = TRD_ETHERTYPE >> 8, f[13] = TRD_ETHERTYPE & 0xff;
	p.pay_len = n;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	if (n != 0)
		memcpy(f + TRD_FRAME_HLEN, pay, n);
	if (p.flags & TRD_HF_CRC) {
		uint32_t c = trd_wire_crc(f + TRD_FRAME_HLEN, n, 0xffffffff);

		f[len++] = (uint8_t)(c >> 24), f[len++] = (uint8_t)(c >> 16);
		f[len++] = (uint8_t)(c >> 8), f[len++] = (uint8_t)c;
	}
	if (p.flags & TRD_HF_PROOF) {
		uint64_t t = proof_tok != 0 ? proof_tok : TOK(p.epoch);

		for (int b = 56; b >= 0; b -= 8)
			f[len++] = (uint8_t)(t >> b);
	}
	len += pad;
	cs[nf].len = len;
	cs[nf].cause = (uint8_t)cause;
	cs[nf].acc = (uint8_t)acc;
	cs[nf].ctl = 0;
	cs[nf].held = 0;
	snprintf(cs[nf].what, sizeof(cs[nf].what), "%s", what);
	return nf++;
}

/* Re-checksum frame @p i after its header was edited. */
static void
resum(unsigned int i)
{
	uint8_t *h = frames[i] + TRD_ETH_HLEN;
	uint16_t c;

	h[14] = h[15] = 0;
	c = trd_wire_hdr_verify(h); /* ~sum with csum 0 is the checksum */
	memcpy(h + 14, &c, 2);
}

/* ---- puts: the model of the region ---- */

static uint32_t put_next = 64; /* a fresh 16-byte slot per valid put, after the atomics' words */

static uint32_t
slot(void)
{
	uint32_t o = put_next;

	put_next += 16;
	T_ASSERT(put_next <= REG - 64, "region model");
	return o;
}

/* A put of @p n bytes at @p off that the node must take (and the model applies). */
static unsigned int
put_ok(struct trd_pkt p, uint64_t off, uint16_t n, const char *what)
{
	uint8_t pay[256];

	payload(pay, n);
	p.type = TRD_PKT_PUT;
	p.key = K_RW;
	p.offset = off;
	if (p.msg_len == 0)
		p.msg_len = n;
	memcpy(model + off, pay, n);
	if (p.counter != 0)
		ctr_want[p.counter] -= n;
	return add(p, pay, n, 0, 0, A_PUT, what);
}

/* A put of @p n bytes that must be refused with @p cause (the region must not change). */
static unsigned int
put_bad(struct trd_pkt p, uint64_t off, uint16_t n, int cause, const char *what)
{
	uint8_t pay[256];

	payload(pay, n);
	p.type = TRD_PKT_PUT;
	if (p.key == 0)
		p.key = K_RW;
	p.offset = off;
	if (p.msg_len == 0)
		p.msg_len = n;
	return add(p, pay, n, 0, cause, A_NONE, what);
}

static void
atomic_apply(uint64_t off, uint8_t op, uint64_t operand, uint64_t compare)
{
	uint64_t w;

	memcpy(&w, model + off, 8);
	if (op == TRD_ATOMIC_FADD)
		w += operand;
	else if (op == TRD_ATOMIC_SWAP || (op == TRD_ATOMIC_CAS && w == compare))
		w = operand;
	memcpy(model + off, &w, 8);
}

static unsigned int
atomic(uint64_t key, uint64_t off, uint8_t op, uint64_t operand, int cause, const char *what)
{
	struct trd_pkt p = base(TRD_PKT_ATOMIC);
	struct trd_wire_atomic a;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.op = op;
	a.operand = rte_cpu_to_be_64(operand);
	p.key = key;
	p.offset = off;
	p.msg_len = sizeof(a);
	p.aux = 77;
	i = add(p, &a, sizeof(a), 0, cause, cause == 0 ? A_ATOM : A_NONE, what);
	cs[i].ctl = 1; /* answered either way */
	if (cause == 0)
		atomic_apply(off, op, operand, 0);
	return i;
}

static void
fifo_msg(uint8_t fifo, uint16_t n, int cause, const char *what)
{
	struct trd_pkt p = base(TRD_PKT_FIFO);
	uint8_t pay[256];

	payload(pay, n);
	p.fifo = fifo;
	p.msg_len = n;
	p.key = 1000 + nf;
	add(p, pay, n, 0, cause, cause == 0 ? A_FIFO : A_NONE, what);
	if (cause == 0)
		msgs_want[fifo]++;
}

/* ---- the cases, field by field ---- */

static void
cases_ethernet_and_length(void)
{
	struct trd_pkt p = base(TRD_PKT_PUT);
	unsigned int i;
	uint8_t pay[16];
	char w[56];

	i = put_bad(p, slot(), 16, TRD_DROP_BAD_ETHERTYPE, "ethertype 0x0800");
	frames[i][12] = 0x08, frames[i][13] = 0x00;
	i = put_bad(p, slot(), 16, TRD_DROP_BAD_ETHERTYPE, "ethertype 0x88b6");
	frames[i][13] = 0xb6;
	/* truncated frames: every length from 0 to a whole 16-byte put */
	payload(pay, 16);
	p.key = K_RW, p.offset = slot(), p.msg_len = 16;
	for (uint32_t len = 0; len <= TRD_FRAME_HLEN + 16; len++) {
		int cause = len < TRD_FRAME_HLEN        ? TRD_DROP_SHORT_FRAME
			    : len < TRD_FRAME_HLEN + 16 ? TRD_DROP_BAD_LENGTH
							: 0;

		snprintf(w, sizeof(w), "truncated to %u bytes", len);
		i = add(p, pay, 16, 0, cause, cause == 0 ? A_PUT : A_NONE, w);
		cs[i].len = len;
	}
	memcpy(model + p.offset, pay, 16);
	/* Ethernet padding after the payload is allowed */
	p = base(TRD_PKT_PUT), p.key = K_RW, p.offset = slot(), p.msg_len = 8;
	payload(pay, 8);
	add(p, pay, 8, 30, 0, A_PUT, "padded by 30 bytes");
	memcpy(model + p.offset, pay, 8);
	/* the checksum: one bit off, and a header whose checksum field is 0 */
	i = put_bad(base(0), slot(), 16, TRD_DROP_BAD_CHECKSUM, "checksum: one bit flipped");
	frames[i][TRD_ETH_HLEN + 30] ^= 0x10;
	i = put_bad(base(0), slot(), 16, TRD_DROP_BAD_CHECKSUM, "checksum field 0");
	frames[i][TRD_ETH_HLEN + 14] = frames[i][TRD_ETH_HLEN + 15] = 0;
}

static void
cases_version_type_flags(void)
{
	struct trd_pkt p;
	unsigned int i;
	char w[56];

	static const uint8_t versions[] = {0, 2, 255};
	for (unsigned int k = 0; k < RTE_DIM(versions); k++) {
		p = base(TRD_PKT_PUT), p.version = versions[k];
		snprintf(w, sizeof(w), "version %u", versions[k]);
		put_bad(p, slot(), 16, TRD_DROP_BAD_VERSION, w);
	}
	put_ok(base(TRD_PKT_PUT), slot(), 16, "version 1");

	/* every type value; 1..7 get a valid packet of their own kind */
	for (unsigned int t = 0; t < 256; t++) {
		snprintf(w, sizeof(w), "type %u", t);
		switch (t) {
		case TRD_PKT_PUT:
			put_ok(base(0), slot(), 16, w);
			break;
		case TRD_PKT_FIFO:
			fifo_msg(0, 16, 0, w);
			break;
		case TRD_PKT_RGET: {
			struct trd_desc d;

			trd_desc_put(&d, (struct trd_coord){1, 0, 0}, NULL, 8, 0x1234, 0, 0, 0);
			d.flags = TRD_DF_IMM, d.user = 42;
			p = base(TRD_PKT_RGET), p.fifo = TRD_ENGINE_FIFO, p.msg_len = 64;
			add(p, &d, 64, 0, 0, A_RGET, w);
			break;
		}
		case TRD_PKT_ACK:
			add(base(TRD_PKT_ACK), NULL, 0, 0, 0, A_ACK, w);
			break;
		case TRD_PKT_DONE:
			/* well formed, naming an operation that is open but never left:
			 * a verdict is taken only from the node the request went to, naming
			 * its message (docs/reliability.md) */
			p = base(TRD_PKT_DONE), p.aux = track_done_id, p.offset = 5;
			add(p, NULL, 0, 0, TRD_DROP_UNKNOWN_CPL, A_NONE, w);
			break;
		case TRD_PKT_ATOMIC:
			atomic(K_RW, ATOM_OFF, TRD_ATOMIC_FADD, 5, 0, w);
			break;
		case TRD_PKT_ATOMIC_REPLY: {
			uint64_t old = rte_cpu_to_be_64(0xfeedULL);

			p = base(TRD_PKT_ATOMIC_REPLY), p.aux = track_atom_id, p.msg_len = 8;
			add(p, &old, 8, 0, TRD_DROP_UNKNOWN_CPL, A_NONE, w);
			break;
		}
		case TRD_PKT_BUNDLE:
			/* a put's header under the bundle type: it counts no entries
			 * (test_bundle sends real bundles) */
			i = put_bad(base(0), slot(), 16, TRD_DROP_BAD_LENGTH, w);
			frames[i][TRD_ETH_HLEN + 1] = (uint8_t)t;
			resum(i);
			break;
		case TRD_PKT_COMB:
			/* a put's header under the combining type: phase (fifo) 0
			 * (test_comb sends real pieces and malformed ones) */
			i = put_bad(base(0), slot(), 16, TRD_DROP_BAD_FIELD, w);
			frames[i][TRD_ETH_HLEN + 1] = (uint8_t)t;
			resum(i);
			break;
		default:
			/* a put whose type byte says otherwise, checksum made good */
			i = put_bad(base(0), slot(), 16, TRD_DROP_BAD_TYPE, w);
			frames[i][TRD_ETH_HLEN + 1] = (uint8_t)t;
			resum(i);
			break;
		}
	}

	/* each flag bit on a put that is otherwise valid */
	for (unsigned int b = 0; b < 16; b++) {
		uint16_t bit = (uint16_t)(1u << b);

		p = base(TRD_PKT_PUT), p.flags = TRD_HF_ALL | bit;
		snprintf(w, sizeof(w), "flags FIRST|LAST|0x%04x", bit);
		if (bit == TRD_HF_FIRST || bit == TRD_HF_LAST) {
			put_ok(p, slot(), 16, w);
		} else if (bit == TRD_HF_CPL) {
			/* aux 0: a completion of no id; with one, not 8 bytes: not ours */
			put_bad(p, slot(), 16, TRD_DROP_BAD_FIELD, w);
			p.aux = 5;
			snprintf(w, sizeof(w), "flags FIRST|LAST|0x%04x, aux 5", bit);
			put_bad(p, slot(), 16, TRD_DROP_UNKNOWN_CPL, w);
		} else if (bit == TRD_HF_ACKREQ) {
			/* aux 0: its DONE would carry aux 0, which no parser takes (it would be
			 * resent for ever in its session) */
			put_bad(p, slot(), 16, TRD_DROP_BAD_FIELD, w);
			p.aux = 9;
			snprintf(w, sizeof(w), "flags FIRST|LAST|0x%04x, aux 9", bit);
			i = put_ok(p, slot(), 16, w);
			cs[i].ctl = 1; /* a DONE */
		} else if (bit == TRD_HF_LANE) {
			/* lane 1 on a node of one share: a lane it does not have */
			put_bad(p, slot(), 16, TRD_DROP_BAD_LANE, w);
		} else if (bit == TRD_HF_CRC) {
			i = put_bad(p, slot(), 16, TRD_DROP_BAD_LENGTH, w); /* no room for it */
			cs[i].len -= 4;
		} else {
			put_bad(p, slot(), 16, TRD_DROP_BAD_FIELD, w); /* PROBE, reserved */
		}
	}
	p = base(TRD_PKT_PUT), p.flags = 0;
	put_ok(p, slot(), 16, "flags 0 (a middle packet)");
	p.flags = TRD_HF_FIRST;
	put_ok(p, slot(), 16, "flags FIRST only");
	p.flags = TRD_HF_ALL | TRD_HF_CPL | TRD_HF_ACKREQ;
	put_bad(p, slot(), 16, TRD_DROP_BAD_FIELD, "flags CPL and ACKREQ");
	p.flags = TRD_HF_ACKREQ, p.aux = 9;
	put_ok(p, slot(), 16, "ACKREQ without LAST: no DONE yet");
	p = base(TRD_PKT_ACK), p.flags |= TRD_HF_PROBE;
	add(p, NULL, 0, 0, 0, A_ACK, "ack with PROBE");
	p = base(TRD_PKT_FIFO), p.flags |= TRD_HF_PROBE, p.msg_len = 4;
	add(p, "abcd", 4, 0, TRD_DROP_BAD_FIELD, A_NONE, "fifo with PROBE");
}

static void
cases_coordinates_hops(void)
{
	struct trd_pkt p;
	char w[56];

	static const uint8_t hops[] = {0, 1, 2, 255};
	for (unsigned int k = 0; k < RTE_DIM(hops); k++) {
		p = base(TRD_PKT_PUT), p.hops = hops[k];
		snprintf(w, sizeof(w), "hops %u, for us", hops[k]);
		put_ok(p, slot(), 16, w);
	}
	/* to (2,0,0): forwarded out of the other link while hops allow */
	for (unsigned int k = 0; k < RTE_DIM(hops); k++) {
		p = base(TRD_PKT_PUT), p.hops = hops[k], p.dst[0] = 2, p.key = 0x5555;
		p.offset = 0, p.msg_len = 16;
		snprintf(w, sizeof(w), "hops %u, to forward", hops[k]);
		add(p, "0123456789abcdef", 16, 0, hops[k] <= 1 ? TRD_DROP_HOP_LIMIT : 0,
		    hops[k] <= 1 ? A_NONE : A_FWD, w);
	}
	p = base(TRD_PKT_PUT), p.dst[0] = 1, p.key = 0x5555, p.msg_len = 16;
	add(p, "0123456789abcdef", 16, 0, TRD_DROP_NOT_FOR_US, A_NONE,
	    "to the sender's side of the link");
	p.dst[0] = 2, p.flags |= TRD_HF_CRC;
	add(p, "0123456789abcdef", 16, 0, 0, A_FWD, "to forward, bad CRC (the target checks)");
	frames[nf - 1][TRD_FRAME_HLEN + 16] ^= 1;

	/* source and destination at and beyond the torus (3x1x1) */
	static const uint8_t xs[] = {0, 1, 2, 3, 255};
	for (unsigned int k = 0; k < RTE_DIM(xs); k++) {
		p = base(TRD_PKT_PUT), p.src[0] = xs[k];
		snprintf(w, sizeof(w), "src x %u", xs[k]);
		if (xs[k] < 3)
			put_ok(p, slot(), 16, w);
		else
			put_bad(p, slot(), 16, TRD_DROP_UNKNOWN_NODE, w);
		p = base(TRD_PKT_PUT), p.dst[0] = xs[k];
		snprintf(w, sizeof(w), "dst x %u", xs[k]);
		if (xs[k] == 0)
			put_ok(p, slot(), 16, w);
		else if (xs[k] >= 3)
			put_bad(p, slot(), 16, TRD_DROP_UNKNOWN_NODE, w);
		/* 1 and 2 are the forwarding cases above */
	}
	for (unsigned int axis = 1; axis < 3; axis++) {
		static const uint8_t vs[] = {1, 255};

		for (unsigned int k = 0; k < RTE_DIM(vs); k++) {
			p = base(TRD_PKT_PUT), p.src[axis] = vs[k];
			snprintf(w, sizeof(w), "src %c %u", "xyz"[axis], vs[k]);
			put_bad(p, slot(), 16, TRD_DROP_UNKNOWN_NODE, w);
			p = base(TRD_PKT_PUT), p.dst[axis] = vs[k];
			snprintf(w, sizeof(w), "dst %c %u", "xyz"[axis], vs[k]);
			put_bad(p, slot(), 16, TRD_DROP_UNKNOWN_NODE, w);
		}
	}
}

static void
cases_fifo_counter_key(void)
{
	struct trd_pkt p;
	unsigned int i;
	char w[56];

	/* reception FIFO ids */
	fifo_msg(0, 8, 0, "fifo 0");
	fifo_msg(N_REC - 1, 8, 0, "fifo last");
	fifo_msg(N_REC, 8, TRD_DROP_UNKNOWN_FIFO, "fifo one beyond");
	fifo_msg(255, 8, TRD_DROP_UNKNOWN_FIFO, "fifo 255");
	p = base(TRD_PKT_PUT), p.fifo = 200;
	put_ok(p, slot(), 16, "put with fifo 200 (unused field)");
	/* injection FIFO ids of a remote get */
	{
		struct trd_desc d;
		static const struct {
			uint8_t fifo;
			int cause;
		} rf[] = {{0, 0},
			  {N_INJ - 1, 0},
			  {N_INJ, TRD_DROP_UNKNOWN_FIFO},
			  {0xfe, TRD_DROP_UNKNOWN_FIFO},
			  {TRD_ENGINE_FIFO, 0}};

		trd_desc_put(&d, (struct trd_coord){1, 0, 0}, NULL, 4, 0x1234, 0, 0, 0);
		d.flags = TRD_DF_IMM;
		for (unsigned int k = 0; k < RTE_DIM(rf); k++) {
			p = base(TRD_PKT_RGET), p.fifo = rf[k].fifo, p.msg_len = 64;
			snprintf(w, sizeof(w), "rget to injection fifo %u", rf[k].fifo);
			add(p, &d, 64, 0, rf[k].cause, rf[k].cause ? A_NONE : A_RGET, w);
		}
		/* its descriptors */
		p = base(TRD_PKT_RGET), p.fifo = TRD_ENGINE_FIFO, p.msg_len = 64;
		trd_desc_put(&d, (struct trd_coord){2, 0, 0}, NULL, 4, 0x1234, 0, 0, 0);
		d.flags = TRD_DF_IMM;
		add(p, &d, 64, 0, TRD_DROP_BAD_DST, A_NONE, "rget: descriptor to a third node");
		trd_desc_put(&d, (struct trd_coord){1, 0, 0}, arena, 16, 0x1234, 0, 0, 0);
		add(p, &d, 64, 0, TRD_DROP_BAD_DESC, A_NONE, "rget: descriptor names our address");
		trd_desc_rget(&d, (struct trd_coord){1, 0, 0}, 0, &d, 1);
		d.src = 0, d.flags = TRD_DF_SRC_MR;
		add(p, &d, 64, 0, TRD_DROP_BAD_DESC, A_NONE, "rget: carries a remote get");
		{
			struct trd_desc ds[TRD_RGET_MAX_DESCS + 1];

			for (unsigned int k = 0; k <= TRD_RGET_MAX_DESCS; k++) {
				trd_desc_put(&ds[k], (struct trd_coord){1, 0, 0}, NULL, 1, 0x1234,
					     0, 0, 0);
				ds[k].flags = TRD_DF_IMM;
			}
			p.msg_len = sizeof(ds);
			add(p, ds, sizeof(ds), 0, TRD_DROP_BAD_LENGTH, A_NONE,
			    "rget: 16 descriptors");
			p.msg_len = 15 * 64;
			add(p, ds, 15 * 64, 0, 0, A_RGET, "rget: 15 descriptors");
		}
		p = base(TRD_PKT_RGET), p.fifo = TRD_ENGINE_FIFO, p.msg_len = 64,
		p.flags = TRD_HF_FIRST;
		add(p, &d, 64, 0, TRD_DROP_BAD_LENGTH, A_NONE, "rget: not FIRST|LAST");
		p.flags = TRD_HF_ALL, p.msg_len = 128;
		add(p, &d, 64, 0, TRD_DROP_BAD_LENGTH, A_NONE, "rget: msg_len 128, pay_len 64");
		p.msg_len = 32;
		add(p, &d, 32, 0, TRD_DROP_BAD_LENGTH, A_NONE, "rget: half a descriptor");
		p.msg_len = 64, p.offset = 64;
		add(p, &d, 64, 0, TRD_DROP_BAD_LENGTH, A_NONE, "rget: offset 64");
	}

	/* counters: 1..7 allocated except 3 */
	static const struct {
		uint16_t id;
		int cause;
	} cc[] = {{0, 0},
		  {1, 0},
		  {N_CTR - 1, 0},
		  {3, TRD_DROP_UNKNOWN_COUNTER},
		  {N_CTR, TRD_DROP_UNKNOWN_COUNTER},
		  {65535, TRD_DROP_UNKNOWN_COUNTER}};
	for (unsigned int k = 0; k < RTE_DIM(cc); k++) {
		p = base(TRD_PKT_PUT), p.counter = cc[k].id;
		snprintf(w, sizeof(w), "put, counter %u", cc[k].id);
		if (cc[k].cause == 0)
			put_ok(p, slot(), 16, w);
		else
			put_bad(p, slot(), 16, cc[k].cause, w);
		p = base(TRD_PKT_FIFO), p.counter = cc[k].id, p.fifo = 1, p.msg_len = 8;
		snprintf(w, sizeof(w), "fifo, counter %u", cc[k].id);
		add(p, "12345678", 8, 0, cc[k].cause, cc[k].cause ? A_NONE : A_FIFO, w);
		if (cc[k].cause == 0) {
			msgs_want[1]++;
			if (cc[k].id != 0)
				ctr_want[cc[k].id] -= 8;
		}
	}

	/* keys */
	p = base(TRD_PKT_PUT), p.key = 0;
	i = put_bad(p, slot(), 16, TRD_DROP_BAD_KEY, "key 0");
	memset(frames[i] + TRD_ETH_HLEN + 16, 0, 8); /* put_bad filled it in */
	resum(i);
	p.key = K_RW ^ (1ULL << 40);
	put_bad(p, slot(), 16, TRD_DROP_BAD_KEY, "key: right slot, wrong secret");
	p.key = (K_RW & ~0xffffULL) | 200;
	put_bad(p, slot(), 16, TRD_DROP_BAD_KEY, "key: slot beyond the table");
	p.key = (K_RW & ~0xffffULL) | 5;
	put_bad(p, slot(), 16, TRD_DROP_BAD_KEY, "key: free slot");
	p.key = UINT64_MAX;
	put_bad(p, slot(), 16, TRD_DROP_BAD_KEY, "key UINT64_MAX");
	p.key = K_RO, p.offset = 0;
	put_bad(p, 0, 16, TRD_DROP_NO_ACCESS, "key of the read-only region");
	atomic(K_RO, 0, TRD_ATOMIC_FADD, 1, TRD_DROP_NO_ACCESS, "atomic on the read-only region");
	atomic(0x77, 0, TRD_ATOMIC_FADD, 1, TRD_DROP_BAD_KEY, "atomic, bad key");
}

static void
cases_offsets_lengths(void)
{
	struct trd_pkt p = base(TRD_PKT_PUT);

	put_ok(p, 0, 16, "offset 0");
	put_ok(p, REG - 16, 16, "offset end - 16, 16 bytes");
	put_bad(p, REG - 15, 16, TRD_DROP_OUT_OF_BOUNDS, "offset end - 15, 16 bytes");
	put_ok(p, REG, 0, "offset end, 0 bytes");
	put_bad(p, REG + 1, 0, TRD_DROP_OUT_OF_BOUNDS, "offset end + 1, 0 bytes");
	put_bad(p, REG, 1, TRD_DROP_OUT_OF_BOUNDS, "offset end, 1 byte");
	put_bad(p, UINT64_MAX, 16, TRD_DROP_BAD_LENGTH, "offset UINT64_MAX, 16 bytes (wraps)");
	put_bad(p, UINT64_MAX - 15, 16, TRD_DROP_BAD_LENGTH, "offset UINT64_MAX - 15 (wraps)");
	put_bad(p, UINT64_MAX - 16, 16, TRD_DROP_OUT_OF_BOUNDS, "offset UINT64_MAX - 16");
	put_bad(p, UINT64_MAX, 0, TRD_DROP_OUT_OF_BOUNDS, "offset UINT64_MAX, 0 bytes");
	put_bad(p, 1ULL << 63, 16, TRD_DROP_OUT_OF_BOUNDS, "offset 2^63");
	/* a put's msg_len is not checked against its payload */
	p.msg_len = 8;
	put_ok(p, slot(), 16, "put: msg_len 8 < pay_len 16");
	p.msg_len = UINT32_MAX;
	put_ok(p, slot(), 16, "put: msg_len UINT32_MAX");

	/* atomics: words at and beyond the end, misaligned */
	atomic(K_RW, 8, TRD_ATOMIC_SWAP, 0x1111, 0, "atomic swap at 8");
	atomic(K_RW, 16, TRD_ATOMIC_CAS, 0x2222, 0, "atomic cas at 16 (compare 0)");
	atomic(K_RW, REG - 8, TRD_ATOMIC_FADD, 3, 0, "atomic on the last word");
	atomic(K_RW, REG - 4, TRD_ATOMIC_FADD, 3, TRD_DROP_OUT_OF_BOUNDS, "atomic across the end");
	atomic(K_RW, REG, TRD_ATOMIC_FADD, 3, TRD_DROP_OUT_OF_BOUNDS, "atomic at the end");
	atomic(K_RW, UINT64_MAX, TRD_ATOMIC_FADD, 3, TRD_DROP_OUT_OF_BOUNDS,
	       "atomic at UINT64_MAX");
	atomic(K_RW, 4, TRD_ATOMIC_FADD, 3, TRD_DROP_BAD_ALIGN, "atomic misaligned");
	atomic(K_RW, 24, 0, 3, TRD_DROP_BAD_DESC, "atomic op 0");
	atomic(K_RW, 24, 4, 3, TRD_DROP_BAD_DESC, "atomic op 4");
	{
		struct trd_pkt a = base(TRD_PKT_ATOMIC);
		uint8_t buf[24] = {1};

		a.key = K_RW, a.offset = 32, a.aux = 5, a.msg_len = 16;
		add(a, buf, 16, 0, TRD_DROP_BAD_LENGTH, A_NONE, "atomic: 16-byte payload");
		a.msg_len = 24, a.aux = 0;
		add(a, buf, 24, 0, TRD_DROP_BAD_LENGTH, A_NONE, "atomic: aux 0");
		a.aux = 5, a.flags = TRD_HF_FIRST;
		add(a, buf, 24, 0, TRD_DROP_BAD_LENGTH, A_NONE, "atomic: not FIRST|LAST");
	}

	/* memory-FIFO lengths */
	p = base(TRD_PKT_FIFO);
	p.msg_len = 8;
	add(p, "0123456789abcdef", 16, 0, TRD_DROP_BAD_LENGTH, A_NONE, "fifo: pay_len > msg_len");
	p.msg_len = 16;
	add(p, NULL, 0, 0, TRD_DROP_BAD_LENGTH, A_NONE, "fifo: empty payload of a 16-byte message");
	p.msg_len = 16, p.offset = 17, p.flags = TRD_HF_LAST;
	add(p, "x", 1, 0, TRD_DROP_BAD_LENGTH, A_NONE, "fifo: offset beyond the message");
	p.offset = 10, p.flags = TRD_HF_LAST;
	add(p, "0123456789", 10, 0, TRD_DROP_BAD_LENGTH, A_NONE, "fifo: piece beyond the message");
	p = base(TRD_PKT_FIFO), p.flags |= TRD_HF_CPL, p.msg_len = 4, p.aux = 5;
	add(p, "abcd", 4, 0, TRD_DROP_BAD_LENGTH, A_NONE, "fifo completion with data");
	p = base(TRD_PKT_FIFO), p.flags |= TRD_HF_CPL, p.aux = 5;
	add(p, NULL, 0, 0, TRD_DROP_UNKNOWN_CPL, A_NONE, "fifo completion nobody waits for");
	fifo_msg(2, 0, 0, "fifo: empty message");
	{
		/* a two-piece message, then a piece that contradicts it */
		uint8_t pay[64];

		payload(pay, 64);
		p = base(TRD_PKT_FIFO), p.fifo = 2, p.key = 9, p.msg_len = 64, p.msg_id = 900;
		p.flags = TRD_HF_FIRST;
		add(p, pay, 40, 0, 0, A_FIFO, "fifo: first piece");
		p.flags = TRD_HF_LAST, p.offset = 40;
		add(p, pay + 40, 24, 0, 0, A_FIFO, "fifo: last piece");
		msgs_want[2]++;
		p.msg_id = 901, p.offset = 0, p.flags = TRD_HF_FIRST;
		add(p, pay, 40, 0, 0, A_FIFO, "fifo: first piece of another");
		p.msg_len = 65, p.offset = 40, p.flags = TRD_HF_LAST;
		add(p, pay + 40, 24, 0, TRD_DROP_REASM, A_FIFO, "fifo: piece with another length");
		p.msg_len = 64, p.key = 10;
		add(p, pay + 40, 24, 0, TRD_DROP_REASM, A_FIFO,
		    "fifo: piece with another user word");
		p.key = 9, p.fifo = 1;
		add(p, pay + 40, 24, 0, TRD_DROP_REASM, A_FIFO, "fifo: piece for another fifo");
		p.fifo = 2, p.offset = 30;
		add(p, pay + 30, 34, 0, TRD_DROP_REASM, A_FIFO, "fifo: piece overlapping");

		/* pieces arrive in order (one path, reliable in-order delivery): a piece that
		 * overlaps what came, repeats it or leaves a gap is refused, and the message
		 * completes only with the bytes really sent */
		p = base(TRD_PKT_FIFO), p.fifo = 2, p.key = 9, p.msg_len = 64, p.msg_id = 902;
		p.flags = TRD_HF_FIRST;
		add(p, pay, 32, 0, 0, A_FIFO, "fifo: first half");
		add(p, pay + 32, 32, 0, TRD_DROP_REASM, A_FIFO,
		    "fifo: second piece at offset 0 again");
		p.flags = 0, p.offset = 40;
		add(p, pay + 40, 24, 0, TRD_DROP_REASM, A_FIFO, "fifo: piece leaving a gap");
		p.offset = 16;
		add(p, pay + 16, 24, 0, TRD_DROP_REASM, A_FIFO,
		    "fifo: piece overlapping the first");
		p.flags = TRD_HF_LAST, p.offset = 32;
		add(p, pay + 32, 32, 0, 0, A_FIFO, "fifo: second half");
		msgs_want[2]++;
		p.msg_id = 903, p.offset = 8, p.flags = 0;
		add(p, pay + 8, 8, 0, TRD_DROP_REASM, A_FIFO,
		    "fifo: a message that starts mid-way");
	}

	/* acks, completions and replies */
	{
		uint8_t sack[TRD_SACK_BYTES];

		memset(sack, 0x5a, sizeof(sack));
		p = base(TRD_PKT_ACK), p.ack = 7, p.offset = 4321, p.msg_len = TRD_SACK_BYTES;
		add(p, sack, TRD_SACK_BYTES, 0, 0, A_ACK, "ack with SACK, unknown session");
		p.msg_len = 16;
		add(p, sack, 16, 0, TRD_DROP_BAD_LENGTH, A_NONE, "ack with 16 bytes");
		p.msg_len = 0;
		add(p, sack, TRD_SACK_BYTES, 0, TRD_DROP_BAD_LENGTH, A_NONE,
		    "ack: msg_len 0, SACK");
		p = base(TRD_PKT_ACK), p.flags |= TRD_HF_ACKREQ, p.aux = 5;
		add(p, NULL, 0, 0, TRD_DROP_BAD_LENGTH, A_NONE, "ack with ACKREQ");
		p = base(TRD_PKT_ACK), p.epoch = 5, p.seq = 3;
		add(p, NULL, 0, 0, TRD_DROP_BAD_LENGTH, A_NONE, "ack with a sequence number");
	}
	p = base(TRD_PKT_DONE), p.aux = 0;
	add(p, NULL, 0, 0, TRD_DROP_BAD_LENGTH, A_NONE, "done: aux 0");
	p.aux = 4000;
	add(p, NULL, 0, 0, TRD_DROP_UNKNOWN_CPL, A_NONE, "done: nobody waits");
	p.aux = UINT32_MAX;
	add(p, NULL, 0, 0, TRD_DROP_UNKNOWN_CPL, A_NONE, "done: aux UINT32_MAX");
	p.aux = 4000, p.key = TRD_DROP_MAX;
	add(p, NULL, 0, 0, TRD_DROP_BAD_FIELD, A_NONE, "done: verdict beyond the causes");
	p.key = 0, p.msg_len = 8;
	add(p, "12345678", 8, 0, TRD_DROP_BAD_LENGTH, A_NONE, "done with a payload");
	p = base(TRD_PKT_ATOMIC_REPLY), p.aux = 4000, p.msg_len = 4;
	add(p, "1234", 4, 0, TRD_DROP_BAD_LENGTH, A_NONE, "atomic reply of 4 bytes");
	p.msg_len = 8;
	add(p, "12345678", 8, 0, TRD_DROP_UNKNOWN_CPL, A_NONE, "atomic reply nobody waits for");
	/* aux only where an operation is involved */
	p = base(TRD_PKT_PUT), p.aux = 5;
	put_bad(p, slot(), 16, TRD_DROP_BAD_FIELD, "put with aux, no flag");
	p.flags |= TRD_HF_ACKREQ;
	cs[put_ok(p, slot(), 16, "put with aux and ACKREQ")].ctl = 1;
	p = base(TRD_PKT_PUT), p.flags |= TRD_HF_CPL, p.aux = 5, p.key = K_RW;
	put_bad(p, slot(), 8, TRD_DROP_UNKNOWN_CPL, "doorbell completion nobody waits for");
}

/* The answer to the node's challenge: session @p epoch of the peer starts at @p first. */
static void
echo(uint16_t epoch, uint32_t first, uint32_t gen, int cause, const char *what)
{
	struct trd_pkt p = base(TRD_PKT_ACK);

	p.flags |= TRD_HF_ECHO;
	p.epoch = epoch;
	p.aux = first;
	p.key = trd_session_cookie(SK0, SK1, PEER, gen);
	if (cause != 0)
		p.key ^= 1;
	add(p, NULL, 0, 0, cause, A_ACK, what);
}

static void
cases_sequence(void)
{
	struct trd_pkt p = base(TRD_PKT_PUT);
	unsigned int i;

	p.seq = 1;
	put_bad(p, slot(), 16, TRD_DROP_BAD_FIELD, "seq 1 with epoch 0");
	p.epoch = 100;
	p.seq = 0;
	put_ok(p, slot(), 16, "epoch 100, seq 0: unsequenced");
	p.seq = 2;
	put_bad(p, slot(), 16, TRD_DROP_BAD_SESSION, "epoch 100 starting at seq 2");
	/* a session starts only when the peer echoes the node's cookie: a first packet alone,
	 * or a forged answer, starts nothing */
	p.seq = 1;
	put_bad(p, slot(), 16, TRD_DROP_BAD_SESSION, "epoch 100 seq 1 before the echo");
	p.key = 0x5555;
	put_bad(p, slot(), 16, TRD_DROP_BAD_SESSION, "epoch 100 seq 1, bad key, no echo");
	p.key = 0;
	echo(100, 1, 0, TRD_DROP_BAD_SESSION, "echo of epoch 100, wrong cookie");
	{
		struct trd_pkt e = base(TRD_PKT_ACK);

		e.flags |= TRD_HF_ECHO, e.epoch = 100;
		add(e, NULL, 0, 0, TRD_DROP_BAD_FIELD, A_NONE, "echo without a first seq");
		e.flags = TRD_HF_ALL | TRD_HF_ECHO | TRD_HF_CHAL, e.aux = 1;
		add(e, NULL, 0, 0, TRD_DROP_BAD_FIELD, A_NONE, "echo and challenge at once");
		e = base(TRD_PKT_PUT), e.flags |= TRD_HF_CHAL;
		put_bad(e, slot(), 16, TRD_DROP_BAD_FIELD, "put with CHAL");
	}
	echo(100, 1, 0, 0, "echo of epoch 100 from seq 1");
	echo(100, 1, 0, 0, "the same echo again: nothing new");
	p.seq = 1;
	put_ok(p, slot(), 16, "epoch 100 seq 1");
	put_bad(p, slot(), 16, TRD_DROP_DUPLICATE, "epoch 100 seq 1 again");
	p.seq = 3;
	i = put_ok(p, slot(), 16, "epoch 100 seq 3: early, held until 2");
	cs[i].held = 1;
	put_bad(p, slot(), 16, TRD_DROP_DUPLICATE, "epoch 100 seq 3 again, while held");
	p.seq = 2;
	put_ok(p, slot(), 16, "epoch 100 seq 2 (then 3)");
	p.seq = 4 + 256;
	put_bad(p, slot(), 16, TRD_DROP_WINDOW, "epoch 100 seq 4 + window");
	p.seq = 4 + 255;
	i = put_bad(p, slot(), 16, 0, "epoch 100 seq 3 + window: held, never delivered");
	cs[i].held = 1;
	p.seq = 0x7fffffff;
	put_bad(p, slot(), 16, TRD_DROP_WINDOW, "epoch 100 seq 2^31 - 1");
	p.seq = 0x80000004;
	put_bad(p, slot(), 16, TRD_DROP_DUPLICATE, "epoch 100 seq 2^31 + 4 (behind)");
	p.seq = UINT32_MAX;
	put_bad(p, slot(), 16, TRD_DROP_DUPLICATE, "epoch 100 seq UINT32_MAX (behind)");
	p.seq = 4, p.ack = 12345;
	put_ok(p, slot(), 16, "epoch 100 seq 4, acks what was never sent");
	p.ack = 0;
	/* a restart: the new session is started by its echo; the old one is over */
	p.epoch = 101, p.seq = 5;
	put_bad(p, slot(), 16, TRD_DROP_BAD_SESSION, "epoch 101 starting at seq 5");
	echo(101, 1, 0, TRD_DROP_BAD_SESSION, "echo of epoch 101, cookie already used");
	echo(101, 1, 1, 0, "echo of epoch 101 from seq 1 (a restart)");
	p.seq = 1;
	put_ok(p, slot(), 16, "epoch 101 seq 1");
	p.epoch = 100, p.seq = 5;
	put_bad(p, slot(), 16, TRD_DROP_BAD_SESSION, "epoch 100 seq 5 after the restart");
	/* issue 25, item 10: the right epoch and an in-window number, without the session's
	 * token (or with another), are not the peer's: dropped, not held, and the real frame
	 * with the same number still goes in */
	p.epoch = 101, p.seq = 2;
	proof_none = true;
	put_bad(p, slot(), 16, TRD_DROP_BAD_PROOF, "epoch 101 seq 2 without its token");
	proof_none = false;
	proof_tok = TOK(100);
	put_bad(p, slot(), 16, TRD_DROP_BAD_PROOF, "epoch 101 seq 2, the old session's token");
	p.seq = 3;
	put_bad(p, slot(), 16, TRD_DROP_BAD_PROOF, "epoch 101 seq 3 (early), wrong token");
	proof_tok = 0;
	p.epoch = 101, p.seq = 2, p.flags |= TRD_HF_CRC;
	put_ok(p, slot(), 16, "epoch 101 seq 2 with CRC");
	p.seq = 3;
	i = put_bad(p, slot(), 16, TRD_DROP_BAD_CRC, "epoch 101 seq 3, CRC trailer spoilt");
	frames[i][cs[i].len - 1 - TRD_PROOF_LEN] ^= 0x80;
	put_ok(p, slot(), 16, "epoch 101 seq 3 again, good CRC");
	p.seq = 4;
	i = put_bad(p, slot(), 16, TRD_DROP_BAD_CRC, "epoch 101 seq 4, payload bit flipped");
	frames[i][TRD_FRAME_HLEN + 3] ^= 0x01;
	/* CRC on other types, unsequenced */
	p = base(TRD_PKT_FIFO), p.flags |= TRD_HF_CRC, p.fifo = 2, p.msg_len = 12;
	add(p, "hello, fifo!", 12, 0, 0, A_FIFO, "fifo with CRC");
	msgs_want[2]++;
	p = base(TRD_PKT_ACK), p.flags |= TRD_HF_CRC;
	add(p, NULL, 0, 0, 0, A_ACK, "ack with the CRC of nothing");
	p = base(TRD_PKT_PUT), p.flags |= TRD_HF_CRC;
	i = put_bad(p, slot(), 16, TRD_DROP_BAD_LENGTH, "CRC flag, 2 bytes of trailer");
	cs[i].len -= 2;
	p = base(TRD_PKT_PUT), p.flags |= TRD_HF_CRC;
	i = put_ok(p, slot(), 16, "CRC, then padding");
	cs[i].len += 20;
}

/* ---- replay ---- */

static void
write_pcap(const char *file)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(p, file);

	T_ASSERT(d != NULL, "pcap_dump_open %s", file);
	for (unsigned int i = 0; i < nf; i++) {
		struct pcap_pkthdr h = {.caplen = cs[i].len, .len = cs[i].len};

		h.ts.tv_sec = 1;
		h.ts.tv_usec = (suseconds_t)i;
		pcap_dump((u_char *)d, &h, frames[i]);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

static void
setup(void)
{
	struct trd_node_conf nc = {0};
	uint16_t id;

	trd_torus_init(&nc.torus, 3, 1, 1);
	nc.n_counters = N_CTR;
	nc.n_rec_fifos = N_REC;
	nc.n_inj_fifos = N_INJ;
	nc.dead_ms = 600000; /* nobody on the capture file acknowledges: never give up on it */
	node = trd_node_create(&nc);
	T_ASSERT(node != NULL, "node: %s", rte_strerror(rte_errno));
	T_EQ(trd_node_set_session_secret(node, SK0, SK1), 0);
	/* most frames here are unsequenced, to reach every receive check without a session:
	 * the node acts on them as an unreliable one would (the strict default is
	 * test_session's "unsequenced" part) */
	T_EQ(trd_node_trust_unsequenced(node, 1), 0);
	arena = aligned_alloc(PAGE, ARENA);
	snap = malloc(ARENA);
	model = calloc(1, REG);
	T_ASSERT(arena != NULL && snap != NULL && model != NULL, "memory");
	for (unsigned int i = 0; i < ARENA; i++)
		arena[i] = (uint8_t)(0xa5 ^ (i * 31) ^ (i >> 9));
	memset(arena + RW_OFF, 0, REG);
	memcpy(snap, arena, ARENA);
	mr_rw = trd_mr_register(node, arena + RW_OFF, REG, TRD_ACCESS_ALL);
	mr_ro = trd_mr_register(node, arena + RO_OFF, ROLEN, TRD_ACCESS_REMOTE_READ);
	T_ASSERT(mr_rw != NULL && mr_ro != NULL, "regions");
	K_RW = trd_mr_key(mr_rw);
	K_RO = trd_mr_key(mr_ro);
	for (unsigned int i = 1; i < N_CTR; i++) {
		T_EQ(trd_counter_alloc(node, &id), 0);
		T_EQ(id, i);
		T_EQ(trd_counter_set(node, id, 1000), 0);
		ctr_want[id] = 1000;
	}
	T_EQ(trd_counter_free(node, 3), 0);
	T_EQ(trd_track_open(node, RF_TRACK, 0xd0e, NULL, &track_done_id), 0);
	T_EQ(trd_track_open(node, RF_TRACK, 0xa70, &track_result, &track_atom_id), 0);
	/* the completion ids the cases use for "nobody waits" must not be these */
	T_ASSERT(track_done_id != 5 && track_done_id != 4000 && track_atom_id != 5 &&
			 track_atom_id != 4000,
		 "tracked ids %u %u", track_done_id, track_atom_id);
}

static uint16_t
port_of(const char *name)
{
	uint16_t port;

	T_ASSERT(rte_eth_dev_get_port_by_name(name, &port) == 0, "port %s", name);
	return port;
}

int
main(int argc, char **argv)
{
	char in[300], out[300], args[700];
	uint64_t want_drop[TRD_DROP_MAX] = {0}, want_acc[A_MAX] = {0}, want_held = 0, want_ctl = 0;
	uint64_t deadline, good = 0;
	struct trd_link *l, *fwd, *fwd_far;
	struct trd_node_stats st;
	unsigned int outcomes = 0;
	int fail = 0;

	(void)argc;
	T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
	test_eal_init(argv[0], NULL);
	setup();

	{
		/* the peer acknowledges the session the node opens towards it, so that the node
		 * may answer it (replies wait until a session is acknowledged) */
		struct trd_pkt p = base(TRD_PKT_ACK);
		uint16_t epoch;
		uint32_t isn;

		trd_session_start(SK0, SK1, PEER, &epoch, &isn);
		p.ack = isn, p.offset = epoch;
		/* (the peer never had the node's echo: it proves its ack with the token a
		 * test can compute from the known secret) */
		p.flags |= TRD_HF_PROOF;
		proof_tok = trd_session_token(SK0, SK1, PEER, epoch);
		add(p, NULL, 0, 0, 0, A_ACK, "ack of the node's session, before anything");
		proof_tok = 0;
	}
	cases_ethernet_and_length();
	cases_version_type_flags();
	cases_coordinates_hops();
	cases_fifo_counter_key();
	cases_offsets_lengths();
	cases_sequence();

	for (unsigned int i = 0; i < nf; i++) {
		if (cs[i].cause != 0)
			want_drop[cs[i].cause]++;
		else
			good++;
		want_acc[cs[i].acc]++;
		want_held += cs[i].held;
		want_ctl += cs[i].ctl;
		if (getenv("TRD_MALFORMED_LIST") != NULL)
			printf("%4u %4u %-16s %-6s %s\n", i, cs[i].len,
			       cs[i].cause ? trd_drop_name(cs[i].cause) : "taken",
			       cs[i].held ? "held" : "", cs[i].what);
	}

	snprintf(in, sizeof(in), "%s/in.pcap", dir);
	snprintf(out, sizeof(out), "%s/out.pcap", dir);
	write_pcap(in);
	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s", in, out);
	T_EQ(rte_vdev_init("net_pcap_malformed", args), 0);
	l = trd_link_ethdev(port_of("net_pcap_malformed"), NULL);
	T_ASSERT(l != NULL, "link");
	T_EQ(trd_node_add_link(node, l, TRD_DIR_XP), 0);
	/* the way on to (2,0,0), for the frames to forward */
	T_EQ(trd_link_ring_pair("malf", 0, 0, &fwd, &fwd_far), 0);
	T_EQ(trd_node_add_link(node, fwd, TRD_DIR_XM), 0);

	deadline = trd_time_us() + TIMEOUT_US;
	do {
		trd_node_poll(node);
		T_EQ(trd_node_stats_get(node, &st), 0);
	} while (st.stat[TRD_STAT_RX_PKTS] < nf && trd_time_us() < deadline);
	for (int i = 0; i < 100; i++)
		trd_node_poll(node); /* the remote gets' work, the replies */
	T_EQ(trd_node_stats_get(node, &st), 0);
	T_EQ(st.stat[TRD_STAT_RX_PKTS], nf);

	/* every frame under its cause */
	for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
		if (st.drop[c] != want_drop[c]) {
			fprintf(stderr, "FAIL drop %s: %" PRIu64 ", want %" PRIu64 "\n",
				trd_drop_name(c), st.drop[c], want_drop[c]);
			fail = 1;
		}
	for (unsigned int a = 1; a < A_MAX; a++)
		if (st.stat[acc_stat[a]] != want_acc[a]) {
			fprintf(stderr, "FAIL %s: %" PRIu64 ", want %" PRIu64 "\n",
				trd_stat_name(acc_stat[a]), st.stat[acc_stat[a]], want_acc[a]);
			fail = 1;
		}
	if (st.stat[TRD_STAT_REORDERED] != want_held || st.stat[TRD_STAT_TX_CTL] != want_ctl) {
		fprintf(stderr,
			"FAIL reordered %" PRIu64 " want %" PRIu64 ", tx_ctl %" PRIu64
			" want %" PRIu64 "\n",
			st.stat[TRD_STAT_REORDERED], want_held, st.stat[TRD_STAT_TX_CTL], want_ctl);
		fail = 1;
	}
	T_ASSERT(!fail, "counts (TRD_MALFORMED_LIST=1 lists the frames)");

	/* memory: the rw region as the model says, nothing else touched */
	for (unsigned int i = 0; i < REG; i++)
		T_ASSERT(arena[RW_OFF + i] == model[i], "rw region byte %u: %02x, want %02x", i,
			 arena[RW_OFF + i], model[i]);
	for (unsigned int i = 0; i < ARENA; i++)
		if (i < RW_OFF || i >= RW_OFF + REG)
			T_ASSERT(arena[i] == snap[i], "byte %u outside the rw region changed", i);
	for (unsigned int i = 1; i < N_CTR; i++) {
		int64_t v;

		if (i == 3)
			continue;
		T_EQ(trd_counter_read(node, (uint16_t)i, &v), 0);
		T_ASSERT(v == ctr_want[i], "counter %u: %" PRId64 ", want %" PRId64, i, v,
			 ctr_want[i]);
	}
	/* messages: each valid one once, the tracked outcomes */
	for (unsigned int f = 0; f < N_REC; f++) {
		struct trd_msg *m;
		unsigned int got = 0;

		while (trd_rec_fifo_poll(trd_rec_fifo(node, f), &m, 1) == 1) {
			if (m->user == 0xd0e || m->user == 0xa70) {
				T_EQ(f, RF_TRACK);
				T_EQ(m->status, 0);
				outcomes++;
			}
			trd_msg_free(m);
			got++;
		}
		T_ASSERT(got == msgs_want[f], "fifo %u: %u messages, want %u", f, got,
			 msgs_want[f]);
	}
	T_EQ(outcomes, 0); /* the two open operations never left: nothing completes them */
	T_EQ(track_result, track_result_want);

	trd_node_free(node);
	trd_link_free(fwd_far);
	rte_eal_cleanup();
	unlink(in);
	unlink(out);
	rmdir(dir);
	free(arena);
	free(snap);
	free(model);
	printf("malformed: %u frames replayed from a pcap, %" PRIu64 " taken, %" PRIu64
	       " dropped, each under its cause; no byte written outside the region\n",
	       nf, good, (uint64_t)nf - good);
	return 0;
}
