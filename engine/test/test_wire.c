/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the wire codec: round trips, checksum, and every parser verdict; and the
 * SipHash-2-4 the wire layer offers the others (api/siphash.h). No EAL. */
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

int
main(void)
{
	struct trd_pkt p, q;

	siphash_vectors();
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
	p.flags = 0x200;
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
	T_ASSERT(trd_drop_name(TRD_DROP_MAX) == NULL);
	T_ASSERT(trd_pkt_type_name(0) == NULL && trd_pkt_type_name(200) == NULL);
	printf("wire: all checks passed\n");
	return 0;
}
