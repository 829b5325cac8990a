/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every operation between every pair of an 8-node (2x2x2) torus, random sizes and offsets,
 * byte-exact, with counters checked; then all nodes at once. Argument: "ring" (engine ring
 * links) or "ethdev" (net_ring ethdev ports, 24 of them).
 */
#include <errno.h>
#include <inttypes.h>

#include <rte_malloc.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define REGION     (4u << 20)
#define TIMEOUT_US 20000000
#define GUARD      0xA5

struct tnode {
	struct trd_node *n;
	uint8_t *mem; /* remote-writable and readable region */
	struct trd_mr *mr;
	uint16_t inj, rec;
};

static struct tnode tn[8];
static uint8_t *src_buf;
static uint64_t seed = 12345;

static uint32_t
rand_size(void)
{
	uint64_t r = test_rand(&seed);

	switch (r % 8) {
	case 0:
		return 0;
	case 1:
		return 1 + (uint32_t)(r >> 8) % 64;
	case 2:
		return 1 + (uint32_t)(r >> 8) % 1500;
	case 3:
		return 1440 + (uint32_t)(r >> 8) % 10; /* around one packet's payload */
	case 4:
		return (uint32_t)(r >> 8) % (1u << 20); /* up to 1 MiB */
	default:
		return 1 + (uint32_t)(r >> 8) % 65536;
	}
}

static void
check_guards(const uint8_t *mem, uint32_t off, uint32_t len)
{
	if (off > 0)
		T_ASSERT(mem[off - 1] == GUARD, "byte before the put was written");
	if (off + len < REGION)
		T_ASSERT(mem[off + len] == GUARD, "byte after the put was written");
}

static void
do_put(unsigned int a, unsigned int b, uint32_t len)
{
	struct trd_desc d;
	uint32_t soff = (uint32_t)(test_rand(&seed) % 4096);
	uint32_t roff = (uint32_t)(test_rand(&seed) % (REGION - len));
	int64_t v;

	memset(tn[b].mem, GUARD, REGION);
	test_fill(src_buf + soff, len, test_rand(&seed));
	T_EQ(trd_counter_set(tn[a].n, tn[a].inj, len), 0);
	T_EQ(trd_counter_set(tn[b].n, tn[b].rec, len), 0);
	trd_desc_put(&d, trd_node_coord(tn[b].n), src_buf + soff, len, trd_mr_key(tn[b].mr), roff,
		     tn[a].inj, tn[b].rec);
	T_EQ(trd_inject(trd_inj_fifo(tn[a].n, 0), &d), 0);
	T_EQ(trd_counter_wait(tn[a].n, tn[a].inj, TIMEOUT_US), 0);
	T_ASSERT(trd_counter_wait(tn[b].n, tn[b].rec, TIMEOUT_US) == 0, "put %u->%u len %u", a, b,
		 len);
	T_EQ(trd_counter_read(tn[b].n, tn[b].rec, &v), 0);
	T_EQ(v, 0);
	T_ASSERT(memcmp(tn[b].mem + roff, src_buf + soff, len) == 0, "put %u->%u len %u data", a, b,
		 len);
	check_guards(tn[b].mem, roff, len);
}

static void
do_fifo(unsigned int a, unsigned int b, uint32_t len)
{
	struct trd_desc d;
	struct trd_msg *m = NULL;
	uint8_t fifo = (uint8_t)(test_rand(&seed) % 4);
	uint64_t user = test_rand(&seed);
	struct trd_coord ca = trd_node_coord(tn[a].n);

	test_fill(src_buf, len, test_rand(&seed));
	T_EQ(trd_counter_set(tn[a].n, tn[a].inj, len), 0);
	trd_desc_fifo(&d, trd_node_coord(tn[b].n), fifo, src_buf, len, user, tn[a].inj);
	T_EQ(trd_inject(trd_inj_fifo(tn[a].n, 1), &d), 0);
	T_EQ(trd_counter_wait(tn[a].n, tn[a].inj, TIMEOUT_US), 0);
	T_ASSERT(trd_rec_fifo_wait(trd_rec_fifo(tn[b].n, fifo), &m, TIMEOUT_US) == 0,
		 "fifo %u->%u len %u", a, b, len);
	T_EQ(m->len, len);
	T_EQ(m->user, user);
	T_EQ(m->fifo, fifo);
	T_ASSERT(m->src.x == ca.x && m->src.y == ca.y && m->src.z == ca.z, "source coordinate");
	T_ASSERT(memcmp(m->data, src_buf, len) == 0, "fifo %u->%u len %u data", a, b, len);
	trd_msg_free(m);
}

static void
do_rget(unsigned int a, unsigned int b, uint32_t len)
{
	struct trd_desc d, c;
	uint32_t toff = (uint32_t)(test_rand(&seed) % (REGION - len));
	uint32_t loff = (uint32_t)(test_rand(&seed) % (REGION - len));

	test_fill(tn[b].mem + toff, len, test_rand(&seed));
	memset(tn[a].mem, GUARD, REGION);
	/* The descriptor the target executes: a put of its region back to us. */
	trd_desc_put(&c, trd_node_coord(tn[a].n), NULL, len, trd_mr_key(tn[a].mr), loff, 0,
		     tn[a].rec);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(tn[b].mr);
	c.src = toff;
	T_EQ(trd_counter_set(tn[a].n, tn[a].rec, len), 0);
	trd_desc_rget(&d, trd_node_coord(tn[b].n), TRD_ENGINE_FIFO, &c, 1);
	T_EQ(trd_inject(trd_inj_fifo(tn[a].n, 2), &d), 0);
	T_ASSERT(trd_counter_wait(tn[a].n, tn[a].rec, TIMEOUT_US) == 0, "rget %u<-%u len %u", a, b,
		 len);
	T_ASSERT(memcmp(tn[a].mem + loff, tn[b].mem + toff, len) == 0, "rget data");
	check_guards(tn[a].mem, loff, len);
}

/* All nodes put to all others at once, into disjoint slices. */
static void
all_at_once(void)
{
	const uint32_t slice = REGION / 8;
	uint8_t *bufs[8];

	for (unsigned int b = 0; b < 8; b++) {
		memset(tn[b].mem, 0, REGION);
		T_EQ(trd_counter_set(tn[b].n, tn[b].rec, 7 * (int64_t)(slice / 2)), 0);
	}
	for (unsigned int a = 0; a < 8; a++) {
		bufs[a] = malloc(slice / 2);
		T_ASSERT(bufs[a] != NULL, "malloc");
		test_fill(bufs[a], slice / 2, 1000 + a);
		T_EQ(trd_counter_set(tn[a].n, tn[a].inj, 7 * (int64_t)(slice / 2)), 0);
	}
	for (unsigned int a = 0; a < 8; a++)
		for (unsigned int b = 0; b < 8; b++) {
			struct trd_desc d;
			int rc;

			if (a == b)
				continue;
			trd_desc_put(&d, trd_node_coord(tn[b].n), bufs[a], slice / 2,
				     trd_mr_key(tn[b].mr), a * slice, tn[a].inj, tn[b].rec);
			while ((rc = trd_inject(trd_inj_fifo(tn[a].n, b % 4), &d)) == -ENOBUFS)
				trd_node_progress(tn[a].n);
			T_EQ(rc, 0);
		}
	for (unsigned int a = 0; a < 8; a++) {
		T_EQ(trd_counter_wait(tn[a].n, tn[a].inj, TIMEOUT_US), 0);
		T_EQ(trd_counter_wait(tn[a].n, tn[a].rec, TIMEOUT_US), 0);
	}
	for (unsigned int b = 0; b < 8; b++)
		for (unsigned int a = 0; a < 8; a++)
			if (a != b)
				T_ASSERT(memcmp(tn[b].mem + a * slice, bufs[a], slice / 2) == 0,
					 "concurrent put %u->%u", a, b);
	for (unsigned int a = 0; a < 8; a++)
		free(bufs[a]);
}

/* 64 MiB by each operation, three hops away: byte-exact, counters exact. */
static void
big(unsigned int a, unsigned int b)
{
	const uint32_t len = 64u << 20;
	uint8_t *src = malloc(len), *dst = malloc(len), *back = malloc(len);
	struct trd_mr *mr_dst, *mr_back;
	struct trd_desc d, c;
	struct trd_msg *m = NULL;

	T_ASSERT(src && dst && back, "malloc");
	test_fill(src, len, 64);
	memset(dst, 0, len);
	mr_dst = trd_mr_register(tn[b].n, dst, len, TRD_ACCESS_ALL);
	mr_back = trd_mr_register(tn[a].n, back, len, TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr_dst && mr_back, "regions");
	/* put */
	T_EQ(trd_counter_set(tn[a].n, tn[a].inj, len), 0);
	T_EQ(trd_counter_set(tn[b].n, tn[b].rec, len), 0);
	trd_desc_put(&d, trd_node_coord(tn[b].n), src, len, trd_mr_key(mr_dst), 0, tn[a].inj,
		     tn[b].rec);
	T_EQ(trd_inject(trd_inj_fifo(tn[a].n, 0), &d), 0);
	T_EQ(trd_counter_wait(tn[b].n, tn[b].rec, TIMEOUT_US), 0);
	T_EQ(trd_counter_wait(tn[a].n, tn[a].inj, TIMEOUT_US), 0);
	T_ASSERT(memcmp(dst, src, len) == 0, "64 MiB put");
	/* memory FIFO */
	trd_desc_fifo(&d, trd_node_coord(tn[b].n), 1, src, len, 77, 0);
	T_EQ(trd_inject(trd_inj_fifo(tn[a].n, 0), &d), 0);
	T_EQ(trd_rec_fifo_wait(trd_rec_fifo(tn[b].n, 1), &m, TIMEOUT_US), 0);
	T_EQ(m->len, len);
	T_EQ(m->user, 77);
	T_ASSERT(memcmp(m->data, src, len) == 0, "64 MiB memory-FIFO message");
	trd_msg_free(m);
	/* remote get: the 64 MiB come back */
	trd_desc_put(&c, trd_node_coord(tn[a].n), NULL, len, trd_mr_key(mr_back), 0, 0, tn[a].rec);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(mr_dst);
	T_EQ(trd_counter_set(tn[a].n, tn[a].rec, len), 0);
	trd_desc_rget(&d, trd_node_coord(tn[b].n), TRD_ENGINE_FIFO, &c, 1);
	T_EQ(trd_inject(trd_inj_fifo(tn[a].n, 0), &d), 0);
	T_EQ(trd_counter_wait(tn[a].n, tn[a].rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(back, src, len) == 0, "64 MiB remote get");
	T_EQ(trd_mr_deregister(mr_dst), 0);
	T_EQ(trd_mr_deregister(mr_back), 0);
	free(src);
	free(dst);
	free(back);
}

int
main(int argc, char **argv)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_net *net;
	unsigned int worker, rounds = 3;
	uint64_t total_drops = 0;

	if (argc > 1 && strcmp(argv[1], "ethdev") == 0)
		nc.links = TRD_NET_ETHDEV_RING;
	test_eal_init(argv[0], NULL);
	trd_torus_init(&nc.torus, 2, 2, 2);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "trd_net_create: %s", rte_strerror(rte_errno));
	src_buf = malloc(REGION + 4096);
	T_ASSERT(src_buf != NULL, "malloc");
	for (unsigned int i = 0; i < 8; i++) {
		tn[i].n = trd_net_node(net, i);
		tn[i].mem = malloc(REGION);
		T_ASSERT(tn[i].mem != NULL, "malloc");
		tn[i].mr = trd_mr_register(tn[i].n, tn[i].mem, REGION, TRD_ACCESS_ALL);
		T_ASSERT(tn[i].mr != NULL, "mr_register");
		T_EQ(trd_counter_alloc(tn[i].n, &tn[i].inj), 0);
		T_EQ(trd_counter_alloc(tn[i].n, &tn[i].rec), 0);
	}
	worker = test_worker_lcore();
	if (worker < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &worker, 1), 0);

	for (unsigned int r = 0; r < rounds; r++)
		for (unsigned int a = 0; a < 8; a++)
			for (unsigned int b = 0; b < 8; b++) {
				if (a == b)
					continue;
				do_put(a, b, rand_size());
				do_fifo(a, b, rand_size());
				do_rget(a, b, rand_size());
			}
	/* Lossless links, one operation at a time, one lcore serving every node: nothing may be
	 * sent twice. (A stalled lcore once made tail-loss probes resend packets whose acks the
	 * peer, served by the same lcore, had not had its turn to send.) */
	for (unsigned int i = 0; i < 8; i++) {
		struct trd_node_stats st;

		T_EQ(trd_node_stats_get(tn[i].n, &st), 0);
		T_ASSERT(st.stat[TRD_STAT_RETRANS] == 0 && st.drop[TRD_DROP_DUPLICATE] == 0,
			 "node %u: %" PRIu64 " retransmissions, %" PRIu64
			 " duplicates on lossless links",
			 i, st.stat[TRD_STAT_RETRANS], st.drop[TRD_DROP_DUPLICATE]);
	}
	/* a node talks to itself through its loopback too */
	do_put(3, 3, 5000);
	do_fifo(5, 5, 3000);
	do_rget(6, 6, 7000);
	all_at_once();
	big(0, 7);

	trd_net_stop(net);
	for (unsigned int i = 0; i < 8; i++) {
		struct trd_node_stats st;

		T_EQ(trd_node_stats_get(tn[i].n, &st), 0);
		/* a retransmission that crossed a late ack arrives twice: not a loss */
		total_drops += st.stat[TRD_STAT_DROPS] - st.drop[TRD_DROP_DUPLICATE];
		if (st.stat[TRD_STAT_RETRANS])
			fprintf(stderr, "node %u: %" PRIu64 " retransmits, %" PRIu64 " timeouts\n",
				i, st.stat[TRD_STAT_RETRANS], st.stat[TRD_STAT_RTO_EVENTS]);
		for (unsigned int c = 0; c < TRD_DROP_MAX; c++)
			if (st.drop[c])
				fprintf(stderr, "node %u drop %s = %" PRIu64 "\n", i,
					trd_drop_name(c), st.drop[c]);
	}
	T_EQ(total_drops, 0);
	printf("ops(%s): %u rounds x 56 pairs x 3 operations, then 64 MiB of each, byte-exact\n",
	       nc.links == TRD_NET_RING ? "ring" : "ethdev", rounds);
	trd_net_free(net);
	rte_eal_cleanup();
	return 0;
}
