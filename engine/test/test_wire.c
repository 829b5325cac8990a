/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the wire codec: round trips, checksum, and every parser verdict; and the
 * SipHash-2-4 the wire layer offers the others (api/siphash.h). No EAL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toroid/wire.h>

#include "siphash.h" /* engine/wire/api */

#define T_ASSERT(c)                                                                                \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);               \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static uint8_t frame[2048];

static struct trd_pkt
sample(uint8_t type)
{
	struct trd_pkt p = {
		.version = TRD_WIRE_VERSION,
		.type = type,
		.flags = TRD_HF_ALL,
		.src = {1, 2, 3},
		.hops = 9,
		.dst = {4, 5, 6},
		.fifo = 7,
		.counter = 0x1234,
		.key = 0x0102030405060708ULL,
		.offset = 0,
		.msg_len = 64,
		.pay_len = 64,
		.msg_id = 0xdeadbeef,
		.epoch = 0x1234,
		.seq = 11,
		.ack = 12,
		.aux = 0,
	};
	return p;
}

static uint32_t
build(const struct trd_pkt *p)
{
	memset(frame, 0, sizeof(frame));
	frame[12] = 0x88;
	frame[13] = 0xB5;
	trd_wire_encode(frame + TRD_ETH_HLEN, p);
	return TRD_FRAME_HLEN + p->pay_len;
}

static int
parse(uint32_t len, struct trd_pkt *out)
{
	return trd_wire_parse(frame, len, out);
}

/* trd_siphash24(), the engine's secrets and the libfabric provider's keys, against the
 * reference vectors of the SipHash paper and its reference code (key 00 01 .. 0f, message
 * 00 01 .. of each length). */
static void
siphash_vectors(void)
{
	const uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
	static const struct {
		size_t len;
		uint64_t out;
	} vec[] = {
		{0, 0x726fdb47dd0e0e31ULL},  /* reference code, vectors_sip64[0] */
		{1, 0x74f839c593dc67fdULL},  /* [1] */
		{15, 0xa129ca6149be45e5ULL}, /* the paper's appendix A */
	};
	uint8_t msg[16];

	for (unsigned int i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (unsigned int i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		uint64_t h = trd_siphash24(k0, k1, msg, vec[i].len);

		if (h != vec[i].out)
			fprintf(stderr, "siphash of %zu bytes: %016llx, want %016llx\n", vec[i].len,
				(unsigned long long)h, (unsigned long long)vec[i].out);
		T_ASSERT(h == vec[i].out);
	}
	/* the key matters, each half of it */
	T_ASSERT(trd_siphash24(k0 ^ 1, k1, msg, 15) != vec[2].out);
	T_ASSERT(trd_siphash24(k0, k1 ^ 1, msg, 15) != vec[2].out);
}

/* ARP for IPv4 over Ethernet, byte-exact against RFC 826's layout, and every check. */
static void
arp_frames(void)
{
	static const uint8_t want_req[TRD_ARP_FRAME_LEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, /* MACs */
		0x08, 0x06,                         /* EtherType ARP */
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, /* Ethernet, IPv4, lengths */
		0x00, 0x01,                         /* request */
		0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 10,   1,    0,    2, /* sender */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 10,   1,    0,    1, /* target */
									 /* zero padding to 60 */
	};
	static const uint8_t want_rep_head[42] = {
		0x02, 0x66, 0x77, 0x88, 0x99, 0xaa, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55,
		10,   1,    0,    2,    0x02, 0x66, 0x77, 0x88, 0x99, 0xaa, 10,   1,    0,    1,
	};
	const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t gw[6] = {0x02, 0x66, 0x77, 0x88, 0x99, 0xaa};
	struct trd_arp a = {.op = TRD_ARP_REQUEST,
			    .sha = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55},
			    .spa = 0x0a010002,
			    .tpa = 0x0a010001};
	struct trd_arp b;
	uint8_t f[TRD_ARP_FRAME_LEN + 4];

	memset(f, 0xee, sizeof(f));
	T_ASSERT(trd_wire_arp_build(f, sizeof(f), bc, &a) == TRD_ARP_FRAME_LEN);
	T_ASSERT(memcmp(f, want_req, sizeof(want_req)) == 0);
	T_ASSERT(f[TRD_ARP_FRAME_LEN] == 0xee); /* nothing written past the frame */
	memset(&b, 0x55, sizeof(b));
	T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_FRAME_LEN, &b) == 0);
	T_ASSERT(b.op == a.op && memcmp(b.sha, a.sha, 6) == 0 && b.spa == a.spa &&
		 memcmp(b.tha, a.tha, 6) == 0 && b.tpa == a.tpa);
	T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_MIN_LEN, &b) == 0); /* unpadded */
	/* a reply */
	a.op = TRD_ARP_REPLY;
	memcpy(a.tha, gw, 6);
	a.tpa = 0x0a010001;
	T_ASSERT(trd_wire_arp_build(f, sizeof(f), gw, &a) == TRD_ARP_FRAME_LEN);
	T_ASSERT(memcmp(f, want_rep_head, sizeof(want_rep_head)) == 0);
	T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_FRAME_LEN, &b) == 0 && b.op == TRD_ARP_REPLY &&
		 b.spa == 0x0a010002 && b.tpa == 0x0a010001 && memcmp(b.tha, gw, 6) == 0);
	/* bad arguments */
	T_ASSERT(trd_wire_arp_build(NULL, sizeof(f), bc, &a) == -EINVAL);
	T_ASSERT(trd_wire_arp_build(f, TRD_ARP_FRAME_LEN - 1, bc, &a) == -ENOSPC);
	a.op = 3;
	T_ASSERT(trd_wire_arp_build(f, sizeof(f), bc, &a) == -EINVAL);
	a.op = TRD_ARP_REQUEST;
	T_ASSERT(trd_wire_arp_parse(NULL, 60, &b) == -EINVAL);
	T_ASSERT(trd_wire_arp_parse(f, 60, NULL) == -EINVAL);
	/* every field checked: each change makes a valid frame malformed */
	{
		static const struct {
			unsigned int off;
			uint8_t val;
		} bad[] = {
			{12, 0x88}, /* EtherType */
			{15, 6},    /* hardware type 6 (IEEE 802) */
			{16, 0x86}, /* protocol IPv6 */
			{18, 8},    /* hardware length */
			{19, 16},   /* protocol length */
			{21, 3},    /* op RARP */
			{21, 0},    /* op 0 */
			{22, 0x03}, /* sender multicast */
			{27, 0x56}, /* sender not the Ethernet source */
		};

		for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			T_ASSERT(trd_wire_arp_build(f, sizeof(f), bc, &a) == TRD_ARP_FRAME_LEN);
			T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_FRAME_LEN, &b) == 0);
			f[bad[i].off] = bad[i].val;
			if (trd_wire_arp_parse(f, TRD_ARP_FRAME_LEN, &b) != -EBADMSG)
				fprintf(stderr, "ARP with byte %u = %u accepted\n", bad[i].off,
					bad[i].val);
			T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_FRAME_LEN, &b) == -EBADMSG);
		}
		/* an all-zero sender (and Ethernet source) */
		T_ASSERT(trd_wire_arp_build(f, sizeof(f), bc, &a) == TRD_ARP_FRAME_LEN);
		memset(f + 6, 0, 6);
		memset(f + 22, 0, 6);
		T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_FRAME_LEN, &b) == -EBADMSG);
		/* short */
		T_ASSERT(trd_wire_arp_build(f, sizeof(f), bc, &a) == TRD_ARP_FRAME_LEN);
		T_ASSERT(trd_wire_arp_parse(f, TRD_ARP_MIN_LEN - 1, &b) == -EBADMSG);
	}
}

int
main(void)
{
	struct trd_pkt p, q;

	siphash_vectors();
	arp_frames();
	uint32_t len;

	/* Layout: the offsets docs/wire-format.md gives. */
	T_ASSERT(sizeof(struct trd_hdr) == 56);
	T_ASSERT(__builtin_offsetof(struct trd_hdr, key) == 16);
	T_ASSERT(__builtin_offsetof(struct trd_hdr, msg_id) == 40);
	T_ASSERT(__builtin_offsetof(struct trd_hdr, aux) == 52);

	/* Round trip of every type, and big-endian encoding. */
	for (uint8_t t = 1; t < TRD_PKT_MAX; t++) {
		p = sample(t);
		if (t == TRD_PKT_ACK || t == TRD_PKT_DONE)
			p.msg_len = p.pay_len = 0;
		if (t == TRD_PKT_ACK)
			p.seq = 0; /* acks are not sequenced */
		if (t == TRD_PKT_ATOMIC)
			p.msg_len = p.pay_len = 24;
		if (t == TRD_PKT_ATOMIC_REPLY)
			p.msg_len = p.pay_len = 8;
		if (t == TRD_PKT_DONE || t == TRD_PKT_ATOMIC || t == TRD_PKT_ATOMIC_REPLY) {
			p.aux = 3;
			p.key = t == TRD_PKT_ATOMIC ? p.key : TRD_DROP_BAD_KEY;
		}
		if (t == TRD_PKT_BUNDLE) {
			/* names no region, counter or FIFO; aux counts its entries */
			p.fifo = 0, p.counter = 0, p.key = 0, p.aux = 2;
		}
		if (t == TRD_PKT_COMB) {
			/* the one piece of an allreduce of 64 B, rooted at rank 3 */
			p.fifo = TRD_COMB_UP, p.aux = 3;
			p.counter =
				trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, 7, TRD_COMB_I64);
		}
		len = build(&p);
		T_ASSERT(parse(len, &q) == 0);
		p.csum = q.csum;
		T_ASSERT(memcmp(&p, &q, sizeof(p)) == 0);
		T_ASSERT(trd_pkt_type_name(t) != NULL);
	}
	p = sample(TRD_PKT_PUT);
	build(&p);
	T_ASSERT(frame[14 + 12] == 0x12 && frame[14 + 13] == 0x34);
	T_ASSERT(frame[14 + 16] == 0x01 && frame[14 + 23] == 0x08);
	T_ASSERT(trd_wire_hdr_verify(frame + 14) == 0);

	/* Ethernet padding after the payload is allowed. */
	p = sample(TRD_PKT_PUT);
	p.msg_len = p.pay_len = 0;
	len = build(&p);
	T_ASSERT(parse(len + 20, &q) == 0);

	/* Every verdict. */
	T_ASSERT(trd_wire_parse(NULL, 100, &q) == TRD_DROP_SHORT_FRAME);
	p = sample(TRD_PKT_PUT);
	len = build(&p);
	T_ASSERT(parse(TRD_FRAME_HLEN - 1, &q) == TRD_DROP_SHORT_FRAME);
	T_ASSERT(parse(len - 1, &q) == TRD_DROP_BAD_LENGTH);
	frame[12] = 0x08;
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_ETHERTYPE);
	p.version = 0;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_VERSION);
	p = sample(0);
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_TYPE);
	p = sample(TRD_PKT_MAX);
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_TYPE);
	p = sample(TRD_PKT_PUT);
	len = build(&p);
	for (unsigned int bit = 0; bit < 56 * 8; bit++) {
		/* any single flipped bit in the header is caught (or is a version/type error) */
		frame[14 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		T_ASSERT(parse(len, &q) != 0);
		frame[14 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	p.flags = 0x400;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD);
	p = sample(TRD_PKT_PUT);
	p.epoch = 0; /* a sequenced packet names its session */
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD);
	p.seq = 0;
	len = build(&p);
	T_ASSERT(parse(len, &q) == 0);
	p = sample(TRD_PKT_PUT);
	p.offset = UINT64_MAX - 10;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH);
	p = sample(TRD_PKT_FIFO);
	p.offset = 10;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH); /* 10 + 64 > 64 */
	p = sample(TRD_PKT_FIFO);
	p.msg_len = 1000;
	p.pay_len = 0;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH); /* empty fragment of a message */
	p = sample(TRD_PKT_RGET);
	p.msg_len = p.pay_len = 65;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH); /* not whole descriptors */
	p = sample(TRD_PKT_RGET);
	p.flags = TRD_HF_FIRST;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH); /* a remote get is one packet */
	p = sample(TRD_PKT_ACK);
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH); /* acks carry no payload */

	/* aux is only meaningful on completions */
	p = sample(TRD_PKT_PUT);
	p.aux = 5;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD);
	p.flags |= TRD_HF_CPL;
	len = build(&p);
	T_ASSERT(parse(len, &q) == 0 && q.aux == 5);
	/* ... and where one belongs, an id: a verdict would carry aux 0, which is refused */
	p.aux = 0;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD);
	p.flags = (uint16_t)((p.flags & ~TRD_HF_CPL) | TRD_HF_ACKREQ);
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD);
	p.aux = 7;
	len = build(&p);
	T_ASSERT(parse(len, &q) == 0 && q.aux == 7);
	p = sample(TRD_PKT_RGET);
	p.flags |= TRD_HF_CPL;
	p.aux = 1;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH); /* a remote get is never a completion */

	/* control packets: exact lengths, an operation id, a verdict that is a drop cause */
	p = sample(TRD_PKT_DONE);
	p.msg_len = p.pay_len = 0;
	p.aux = 0;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH);
	p.aux = 1;
	p.key = TRD_DROP_MAX;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD);
	p.key = TRD_DROP_MAX - 1; /* the last cause is a verdict still */
	len = build(&p);
	T_ASSERT(parse(len, &q) == 0 && q.key == TRD_DROP_MAX - 1);
	p = sample(TRD_PKT_ATOMIC);
	p.aux = 1; /* 64 bytes of payload instead of 24 */
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_LENGTH);
	p = sample(TRD_PKT_PUT);
	p.flags |= TRD_HF_CPL | TRD_HF_ACKREQ;
	p.aux = 1;
	len = build(&p);
	T_ASSERT(parse(len, &q) == TRD_DROP_BAD_FIELD); /* one meaning for aux at a time */

	/* names */
	T_ASSERT(strcmp(trd_drop_name(TRD_DROP_BAD_KEY), "bad_key") == 0);
	T_ASSERT(strcmp(trd_drop_name(TRD_DROP_CTR_DENIED), "ctr_denied") == 0);
	T_ASSERT(trd_drop_name(TRD_DROP_MAX) == NULL);
	T_ASSERT(trd_pkt_type_name(0) == NULL && trd_pkt_type_name(200) == NULL);
	printf("wire: all checks passed\n");
	return 0;
}
