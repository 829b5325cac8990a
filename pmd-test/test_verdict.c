/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nothing the parser accepts can wedge a session (issue 25, item 5): the answer the engine
 * sends to any frame trd_wire_parse() accepts is itself accepted by trd_wire_parse() at the
 * other end. A frame whose verdict the peer's parser refused would be resent in its session
 * until the session is declared dead, and everything behind it would wait.
 *
 * Property: many generated frames of every type (puts, memory-FIFO messages, remote gets
 * carrying descriptors, atomics, bundles, verdicts, acks), their fields drawn from the values
 * that matter (real and wrong keys, offsets at and beyond the region, ACKREQ and CPL with ids
 * including 0, every flag), are handed to a node (1x... of a 2x1x1 torus, unreliable so that
 * it answers each frame at once and alone) when the parser accepts them. Every frame the node
 * sends in answer (DONE, atomic reply, acks, the puts of carried descriptors), built by the
 * engine's own builder, is read on the far end of its cable and must parse. The test also
 * checks that enough of each kind of answer was made for the property to mean something.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <toroid/testing.h>
#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "test_common.h"

#define ITER 40000
#define REG  65536

static struct trd_node *node;
static struct trd_link *far;
static uint64_t key;
static uint64_t rnd = 0x2545f4914f6cdd1dULL;
static uint64_t answers[TRD_PKT_MAX], refused;

static uint64_t
r(uint64_t n)
{
	return test_rand(&rnd) % n;
}

/* Read what the node sent; each frame must parse. */
static void
check_answers(void)
{
	struct rte_mbuf *pkts[32];
	uint8_t buf[2048];
	uint16_t nb;

	while ((nb = rte_eth_rx_burst((uint16_t)trd_link_port(far), 0, pkts, 32)) != 0)
		for (uint16_t i = 0; i < nb; i++) {
			uint32_t len = RTE_MIN(pkts[i]->pkt_len, (uint32_t)sizeof(buf));
			const uint8_t *f = rte_pktmbuf_read(pkts[i], 0, len, buf);
			struct trd_pkt p;
			int rc = trd_wire_parse(f, len, &p);

			if (rc != 0) {
				trd_wire_parse(f, len, &p); /* decoded enough to say what */
				fprintf(stderr,
					"answer type %u flags %#x aux %u key %" PRIu64
					" len %u refused: %s\n",
					f[TRD_ETH_HLEN + 1], (unsigned int)p.flags, p.aux, p.key,
					len, trd_drop_name((unsigned int)rc));
				refused++;
			} else {
				answers[p.type]++;
			}
			rte_pktmbuf_free(pkts[i]);
		}
}

static uint32_t
pick_aux(void)
{
	switch (r(4)) {
	case 0:
		return 0;
	case 1:
		return 1 + (uint32_t)r(4096);
	case 2:
		return (uint32_t)test_rand(&rnd);
	default:
		return 1;
	}
}

static uint64_t
pick_off(void)
{
	switch (r(4)) {
	case 0:
		return 0;
	case 1:
		return r(REG) & ~7ull;
	case 2:
		return REG - r(16);
	default:
		return test_rand(&rnd);
	}
}

/* A frame "from (1,0,0)" whose fields are drawn from the values that matter; its length. */
static uint32_t
gen(uint8_t *f)
{
	static const uint8_t types[] = {TRD_PKT_PUT,    TRD_PKT_FIFO, TRD_PKT_RGET,
					TRD_PKT_ATOMIC, TRD_PKT_DONE, TRD_PKT_ATOMIC_REPLY,
					TRD_PKT_BUNDLE, TRD_PKT_ACK};
	uint8_t pay[1024];
	struct trd_pkt p;
	uint16_t n = 0;
	uint32_t len;

	memset(&p, 0, sizeof(p));
	p.version = TRD_WIRE_VERSION;
	p.type = types[r(sizeof(types))];
	p.src[0] = 1;
	p.hops = (uint8_t)(1 + r(3));
	/* mostly a whole message, with the operation flags drawn; sometimes anything */
	p.flags = TRD_HF_ALL;
	if (r(3) == 0)
		p.flags |= TRD_HF_ACKREQ;
	else if (r(6) == 0)
		p.flags |= TRD_HF_CPL;
	if (r(8) == 0)
		p.flags |= TRD_HF_CRC;
	if (r(10) == 0)
		p.flags = (uint16_t)(r(0x100) | TRD_HF_LAST);
	p.aux = pick_aux();
	p.key = r(2) ? key : test_rand(&rnd);
	p.offset = pick_off();
	p.fifo = (uint8_t)(r(8) == 0 ? r(256) : r(3));
	p.counter = (uint16_t)(r(4) == 0 ? r(8) : 0);
	p.msg_id = (uint32_t)test_rand(&rnd);
	if (r(6) == 0) {
		p.epoch = (uint16_t)test_rand(&rnd);
		p.seq = (uint32_t)r(4);
	}
	switch (p.type) {
	case TRD_PKT_PUT:
	case TRD_PKT_FIFO:
		n = (uint16_t)r(r(4) == 0 ? 1024 : 16);
		p.msg_len = n;
		if (p.type == TRD_PKT_FIFO && r(4) == 0)
			p.offset = 0;
		if (r(5) == 0)
			p.msg_len = n + (uint32_t)r(100); /* one piece of a larger message */
		test_fill(pay, n, test_rand(&rnd));
		break;
	case TRD_PKT_RGET: {
		unsigned int k = 1 + (unsigned int)r(3);
		struct trd_desc d[3];

		for (unsigned int i = 0; i < k; i++) {
			trd_desc_put(&d[i], (struct trd_coord){(uint8_t)r(2), 0, 0}, NULL, 8, key,
				     pick_off(), 0, 0);
			d[i].flags = TRD_DF_IMM;
			d[i].user = test_rand(&rnd);
			if (r(3) == 0) {
				d[i].flags = TRD_DF_SRC_MR;
				d[i].src_key = r(2) ? key : 77;
				d[i].src = pick_off();
				d[i].len = (uint32_t)r(64);
			}
			if (r(2) == 0) {
				d[i].flags |= TRD_DF_ACKREQ;
				d[i].aux = pick_aux();
			}
		}
		p.fifo = r(2) ? TRD_ENGINE_FIFO : p.fifo;
		p.offset = 0;
		n = (uint16_t)(k * TRD_WIRE_DESC_LEN);
		p.msg_len = n;
		memcpy(pay, d, n);
		break;
	}
	case TRD_PKT_ATOMIC: {
		struct trd_wire_atomic a = {
			.op = (uint8_t)r(5),
			.operand = rte_cpu_to_be_64(test_rand(&rnd)),
			.compare = rte_cpu_to_be_64(r(2)),
		};

		n = p.msg_len = 24;
		memcpy(pay, &a, 24);
		break;
	}
	case TRD_PKT_DONE:
		p.key = r(TRD_DROP_MAX);
		break;
	case TRD_PKT_ATOMIC_REPLY:
		p.key = r(TRD_DROP_MAX);
		n = p.msg_len = 8;
		memset(pay, 0, 8);
		break;
	case TRD_PKT_BUNDLE: {
		unsigned int k = 2 + (unsigned int)r(3);

		p.key = p.offset = 0;
		p.fifo = 0;
		p.counter = 0;
		p.aux = k;
		for (unsigned int i = 0; i < k; i++) {
			uint16_t l = (uint16_t)r(16);

			trd_wire_entry_encode(pay + n, r(2) ? TRD_PKT_PUT : TRD_PKT_FIFO, 0, 0, l,
					      key, 0);
			test_fill(pay + n + TRD_ENTRY_LEN, l, i);
			n = (uint16_t)(n + TRD_ENTRY_LEN + l);
		}
		p.msg_len = n;
		break;
	}
	default: /* ack */
		p.key = test_rand(&rnd);
		p.offset = r(2);
		p.aux = 0;
		break;
	}
	p.pay_len = n;
	memset(f, 0, TRD_ETH_HLEN);
	f[0] = 0x02, f[6] = 0x02;
	f[12] = TRD_ETHERTYPE >> 8, f[13] = TRD_ETHERTYPE & 0xff;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	memcpy(f + TRD_FRAME_HLEN, pay, n);
	len = TRD_FRAME_HLEN + n;
	if (p.flags & TRD_HF_CRC) {
		uint32_t c = trd_wire_crc(f + TRD_FRAME_HLEN, n, 0xffffffff);

		f[len++] = (uint8_t)(c >> 24), f[len++] = (uint8_t)(c >> 16);
		f[len++] = (uint8_t)(c >> 8), f[len++] = (uint8_t)c;
	}
	return len;
}

/* The regression of the issue: one 71-byte frame, a put with ACKREQ and aux 0 (one byte to a
 * real key). The parser refuses it, so no DONE with aux 0 is ever made. */
static void
regression_71(void)
{
	uint8_t f[128];
	struct trd_pkt p;
	struct trd_node_stats st0, st1;

	memset(&p, 0, sizeof(p));
	p.version = TRD_WIRE_VERSION;
	p.type = TRD_PKT_PUT;
	p.flags = TRD_HF_ALL | TRD_HF_ACKREQ;
	p.src[0] = 1;
	p.hops = 3;
	p.key = key;
	p.msg_len = p.pay_len = 1;
	memset(f, 0, sizeof(f));
	f[12] = TRD_ETHERTYPE >> 8, f[13] = TRD_ETHERTYPE & 0xff;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	f[TRD_FRAME_HLEN] = 0x71;
	T_EQ(trd_wire_parse(f, 71, &p), TRD_DROP_BAD_FIELD);
	T_EQ(trd_node_stats_get(node, &st0), 0);
	T_EQ(trd_node_rx_frame(node, f, 71, 0), 0);
	T_EQ(trd_node_stats_get(node, &st1), 0);
	T_EQ(st1.drop[TRD_DROP_BAD_FIELD] - st0.drop[TRD_DROP_BAD_FIELD], 1);
	T_EQ(st1.stat[TRD_STAT_TX_CTL] - st0.stat[TRD_STAT_TX_CTL], 0);
	check_answers();
	printf("71 bytes: a put with ACKREQ and aux 0 is refused by the parser (bad_field), "
	       "no DONE made\n");
}

int
main(int argc, char **argv)
{
	static uint8_t f[2048];
	struct trd_node_conf nc = {0};
	struct trd_link *l;
	struct trd_mr *mr;
	uint8_t *mem;
	uint64_t taken = 0;
	uint16_t ctr;

	(void)argc;
	test_eal_init(argv[0], NULL);
	T_EQ(trd_link_ethdev_ring_pair("verdict", 0, &l, &far), 0);
	trd_torus_init(&nc.torus, 2, 1, 1);
	nc.unreliable = true; /* every answer at once, alone, in the frame the builder made */
	nc.n_counters = 8;
	node = trd_node_create(&nc);
	T_ASSERT(node != NULL, "node");
	T_EQ(trd_node_add_link(node, l, TRD_DIR_XP), 0);
	mem = aligned_alloc(4096, REG);
	T_ASSERT(mem != NULL, "memory");
	memset(mem, 0, REG);
	mr = trd_mr_register(node, mem, REG, TRD_ACCESS_ALL);
	T_ASSERT(mr != NULL, "region");
	key = trd_mr_key(mr);
	for (int i = 0; i < 3; i++) {
		T_EQ(trd_counter_alloc(node, &ctr), 0);
		T_EQ(trd_counter_set(node, ctr, 1 << 30), 0);
	}

	for (unsigned int i = 0; i < ITER; i++) {
		uint32_t len = gen(f);
		struct trd_pkt p;

		if (trd_wire_parse(f, len, &p) != 0)
			continue;
		taken++;
		T_EQ(trd_node_rx_frame(node, f, len, 0), 0);
		trd_node_poll(node);
		trd_node_poll(node);
		check_answers();
		if (i % 64 == 0)
			T_ASSERT(trd_node_drain(node) >= 0, "drain");
	}
	for (int i = 0; i < 16; i++)
		trd_node_poll(node);
	check_answers();
	printf("verdicts: %" PRIu64 " of %u generated frames accepted by the parser; answers: "
	       "%" PRIu64 " done, %" PRIu64 " atomic replies, %" PRIu64 " puts, %" PRIu64
	       " acks; %" PRIu64 " refused by the parser\n",
	       taken, ITER, answers[TRD_PKT_DONE], answers[TRD_PKT_ATOMIC_REPLY],
	       answers[TRD_PKT_PUT], answers[TRD_PKT_ACK], refused);
	T_EQ(refused, 0);
	regression_71();
	/* enough of each to mean something */
	T_ASSERT(taken >= ITER / 10, "only %" PRIu64 " frames accepted", taken);
	T_ASSERT(answers[TRD_PKT_DONE] >= 100 && answers[TRD_PKT_ATOMIC_REPLY] >= 100 &&
			 answers[TRD_PKT_PUT] >= 20,
		 "too few answers");
	trd_node_free(node);
	trd_link_free(far);
	free(mem);
	rte_eal_cleanup();
	printf("verdict: all passed\n");
	return 0;
}
