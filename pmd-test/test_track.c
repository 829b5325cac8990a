/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tracked operations on an 8-node torus:
 *  atomics: every node does fetch-adds on one word of node 0: the exact sum, every old value
 *           distinct; a compare-and-swap lock protects a read-modify-write counter;
 *  done:    a put or FIFO message that asked for a verdict completes once its data is in the
 *           target's memory;
 *  errors:  bad key, out of bounds, no access, missing FIFO, misaligned atomic, a read of an
 *           unregistered range: each completes at the origin with its status, nothing is
 *           written, and the node keeps working;
 *  full:    verdicts into a full reception FIFO are refused and come again, failures made at
 *           the origin wait in the engine: each outcome delivered once there is room, in order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 5000000
#define NODES      8
#define RF         3 /* reception FIFO of the outcomes */

static struct trd_net *net;
static struct trd_node *nd[NODES];

static struct trd_msg *
outcome(unsigned int a)
{
	struct trd_msg *m = NULL;

	if (trd_rec_fifo_wait(trd_rec_fifo(nd[a], RF), &m, TIMEOUT_US) != 0) {
		for (unsigned int i = 0; i < NODES; i++) {
			struct trd_node_stats st;

			trd_node_stats_get(nd[i], &st);
			for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
				if (st.drop[c])
					fprintf(stderr, "node %u: %s %" PRIu64 "\n", i,
						trd_drop_name(c), st.drop[c]);
		}
		T_ASSERT(0, "no outcome at node %u", a);
	}
	T_EQ(m->len, 0);
	return m;
}

/* Post a tracked descriptor from a and return its outcome's status. */
static int
tracked(unsigned int a, struct trd_desc *d, uint64_t *result, uint64_t cookie)
{
	struct trd_msg *m;
	uint32_t id;
	int st, rc;

	T_EQ(trd_track_open(nd[a], RF, cookie, result, &id), 0);
	d->flags |= TRD_DF_ACKREQ;
	d->aux = id;
	while ((rc = trd_inject(trd_inj_fifo(nd[a], 0), d)) == -ENOBUFS)
		trd_node_progress(nd[a]);
	T_EQ(rc, 0);
	m = outcome(a);
	T_EQ(m->user, cookie);
	st = m->status;
	trd_msg_free(m);
	return st;
}

static void
test_fadd(uint64_t *word, struct trd_mr *mr)
{
	enum { PER = 10000, WIN = 64 };
	static uint64_t result[NODES][WIN];
	uint8_t *seen = calloc(NODES * PER, 1);
	unsigned int posted[NODES] = {0}, done[NODES] = {0}, total = 0;
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	*word = 0;
	T_ASSERT(seen != NULL, "calloc");
	while (total < NODES * PER) {
		T_ASSERT(trd_time_us() < deadline, "fetch-adds stalled at %u", total);
		for (unsigned int a = 0; a < NODES; a++) {
			struct trd_msg *m[32];
			int k;

			while (posted[a] < PER && posted[a] - done[a] < WIN) {
				struct trd_desc d;
				uint32_t id;
				unsigned int slot = posted[a] % WIN;

				T_EQ(trd_track_open(nd[a], RF, posted[a], &result[a][slot], &id),
				     0);
				trd_desc_atomic(&d, trd_node_coord(nd[0]), TRD_ATOMIC_FADD,
						trd_mr_key(mr), 0, 1, 0);
				d.flags |= TRD_DF_ACKREQ;
				d.aux = id;
				if (trd_inject(trd_inj_fifo(nd[a], 0), &d) != 0) {
					trd_track_close(nd[a], id);
					break;
				}
				posted[a]++;
			}
			k = trd_rec_fifo_poll(trd_rec_fifo(nd[a], RF), m, 32);
			for (int i = 0; i < k; i++) {
				uint64_t old = result[a][m[i]->user % WIN];

				T_EQ(m[i]->status, 0);
				T_ASSERT(old < NODES * PER, "old value %" PRIu64, old);
				T_ASSERT(!seen[old], "old value %" PRIu64 " seen twice", old);
				seen[old] = 1;
				trd_msg_free(m[i]);
				done[a]++;
				total++;
			}
		}
		trd_node_progress(nd[0]);
	}
	T_EQ(__atomic_load_n(word, __ATOMIC_ACQUIRE), NODES * PER);
	free(seen);
	printf("fetch-add: %u from %u nodes, sum exact, every old value once\n", NODES * PER,
	       NODES);
}

/* A lock word and a plain counter at node 0; the counter is read and written back with
 * remote operations while the lock is held. */
static void
test_cas_lock(uint64_t *words, struct trd_mr *mr, uint8_t *local[NODES], struct trd_mr *lmr[NODES])
{
	enum { PER = 100 };
	uint16_t ctr[NODES];

	words[0] = 0; /* lock */
	words[1] = 0; /* counter */
	for (unsigned int a = 0; a < NODES; a++)
		T_EQ(trd_counter_alloc(nd[a], &ctr[a]), 0);
	/* every node in turn, interleaved: take, read, write, release */
	for (unsigned int it = 0; it < PER; it++)
		for (unsigned int a = 0; a < NODES; a++) {
			struct trd_desc d, c;
			uint64_t old = 1, v;

			while (old != 0) {
				trd_desc_atomic(&d, trd_node_coord(nd[0]), TRD_ATOMIC_CAS,
						trd_mr_key(mr), 0, a + 1, 0);
				T_EQ(tracked(a, &d, &old, 1), 0);
			}
			/* read the counter into local memory (RDMA read) */
			trd_desc_put(&c, trd_node_coord(nd[a]), NULL, 8, trd_mr_key(lmr[a]), 0, 0,
				     ctr[a]);
			c.flags = TRD_DF_SRC_MR;
			c.src_key = trd_mr_key(mr);
			c.src = 8;
			trd_desc_rget(&d, trd_node_coord(nd[0]), TRD_ENGINE_FIFO, &c, 1);
			T_EQ(trd_counter_set(nd[a], ctr[a], 8), 0);
			T_EQ(trd_inject(trd_inj_fifo(nd[a], 0), &d), 0);
			T_EQ(trd_counter_wait(nd[a], ctr[a], TIMEOUT_US), 0);
			memcpy(&v, local[a], 8);
			v++;
			memcpy(local[a] + 8, &v, 8);
			/* write it back and wait until it is there */
			trd_desc_put(&d, trd_node_coord(nd[0]), local[a] + 8, 8, trd_mr_key(mr), 8,
				     0, 0);
			T_EQ(tracked(a, &d, NULL, 2), 0);
			trd_desc_atomic(&d, trd_node_coord(nd[0]), TRD_ATOMIC_SWAP, trd_mr_key(mr),
					0, 0, 0);
			T_EQ(tracked(a, &d, &old, 3), 0);
			T_EQ(old, a + 1); /* we held it */
		}
	T_EQ(words[1], NODES * PER);
	printf("compare-and-swap lock: %u increments under the lock, none lost\n", NODES * PER);
}

static void
test_errors(uint8_t *mem, struct trd_mr *mr, struct trd_mr *ro)
{
	static uint8_t buf[3000], guard[4096];
	struct trd_desc d, c;
	uint64_t res = 7;
	struct trd_coord t = trd_node_coord(nd[5]);

	test_fill(buf, sizeof(buf), 9);
	memset(mem, 0, 4096);
	/* a put that asks for a verdict: done means in memory */
	trd_desc_put(&d, t, buf, sizeof(buf), trd_mr_key(mr), 100, 0, 0);
	T_EQ(tracked(2, &d, NULL, 10), 0);
	T_ASSERT(memcmp(mem + 100, buf, sizeof(buf)) == 0, "data in memory at its DONE");
	memset(mem, 0, 4096);
	memcpy(guard, mem, 4096);

	trd_desc_put(&d, t, buf, 100, trd_mr_key(mr) ^ (1ULL << 33), 0, 0, 0);
	T_EQ(tracked(2, &d, NULL, 11), -ENOKEY);
	trd_desc_put(&d, t, buf, sizeof(buf), trd_mr_key(mr), 4096 - 100, 0, 0);
	T_EQ(tracked(2, &d, NULL, 12), -ERANGE);
	trd_desc_put(&d, t, buf, 16, trd_mr_key(ro), 0, 0, 0);
	T_EQ(tracked(2, &d, NULL, 13), -EACCES);
	trd_desc_fifo(&d, t, 40, buf, 16, 0, 0);
	T_EQ(tracked(2, &d, NULL, 14), -ENOENT);
	trd_desc_atomic(&d, t, TRD_ATOMIC_FADD, trd_mr_key(mr), 4, 1, 0);
	T_EQ(tracked(2, &d, &res, 15), -EACCES); /* no remote read on this region */
	T_EQ(res, 7);
	/* a read of a range the target does not have: the error comes back, nothing lands */
	trd_desc_put(&c, trd_node_coord(nd[2]), NULL, 64, 0, 0, 0, 0);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(ro);
	c.src = 4096 - 10;
	c.rkey = trd_mr_key(mr); /* never reached */
	{
		uint32_t id;
		struct trd_msg *m;

		T_EQ(trd_track_open(nd[2], RF, 16, NULL, &id), 0);
		c.flags |= TRD_DF_ACKREQ;
		c.aux = id;
		trd_desc_rget(&d, t, TRD_ENGINE_FIFO, &c, 1);
		d.flags |= TRD_DF_ACKREQ;
		d.aux = id;
		T_EQ(trd_inject(trd_inj_fifo(nd[2], 0), &d), 0);
		m = outcome(2);
		T_EQ(m->user, 16);
		T_EQ(m->status, -ERANGE);
		T_EQ(m->cause, TRD_DROP_OUT_OF_BOUNDS);
		trd_msg_free(m);
		/* and a remote get to a FIFO that does not exist */
		T_EQ(trd_track_open(nd[2], RF, 17, NULL, &id), 0);
		c.src = 0;
		c.aux = id;
		trd_desc_rget(&d, t, 50, &c, 1);
		d.flags |= TRD_DF_ACKREQ;
		d.aux = id;
		T_EQ(trd_inject(trd_inj_fifo(nd[2], 0), &d), 0);
		m = outcome(2);
		T_EQ(m->user, 17);
		T_EQ(m->status, -ENOENT);
		trd_msg_free(m);
	}
	T_ASSERT(memcmp(mem, guard, 4096) == 0, "a refused operation wrote something");
	/* still working */
	trd_desc_put(&d, t, buf, 64, trd_mr_key(mr), 0, 0, 0);
	T_EQ(tracked(2, &d, NULL, 18), 0);
	T_EQ(trd_node_cpl_pending(nd[2]), 0);
	/* bad tracked descriptors are refused at posting */
	trd_desc_atomic(&d, t, TRD_ATOMIC_FADD, trd_mr_key(mr), 0, 1, 0);
	T_EQ(trd_inject(trd_inj_fifo(nd[2], 0), &d), -EINVAL); /* untracked atomic */
	d.flags = TRD_DF_ACKREQ;
	d.aux = 1;
	d.fifo = 9;
	T_EQ(trd_inject(trd_inj_fifo(nd[2], 0), &d), -EINVAL); /* no such atomic */
	T_EQ(trd_track_open(nd[2], 200, 0, NULL, &(uint32_t){0}), -EINVAL);
	printf("errors as completions: bad key, bounds, access, FIFO, read range, remote FIFO\n");
}

/* Up to 5 s for the next message of @p n's FIFO RF, polling @p nt. */
static struct trd_msg *
next_msg(struct trd_net *nt, struct trd_node *n)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;
	struct trd_msg *m = NULL;

	while (trd_rec_fifo_poll(trd_rec_fifo(n, RF), &m, 1) == 0 && trd_time_us() < deadline)
		trd_net_poll(nt);
	return m;
}

/* b fills a's FIFO RF (@p cap messages, user words 1000 ..): nothing refused yet. */
static void
fill(struct trd_net *nt, struct trd_node *a, struct trd_node *b, unsigned int cap)
{
	static uint8_t src[8];
	struct trd_node_stats st0, st;
	struct trd_desc d;

	T_EQ(trd_node_stats_get(a, &st0), 0);
	for (unsigned int i = 0; i < cap; i++) {
		trd_desc_fifo(&d, trd_node_coord(a), RF, src, sizeof(src), 1000 + i, 0);
		T_EQ(trd_inject(trd_inj_fifo(b, 0), &d), 0);
	}
	for (int i = 0; i < 100; i++)
		trd_net_poll(nt);
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_EQ(st.drop[TRD_DROP_FIFO_FULL], st0.drop[TRD_DROP_FIFO_FULL]);
}

/* The @p cap plain messages, then @p n outcomes with cookies @p cookie .. in order, each with
 * status @p status. */
static void
drain(struct trd_net *nt, struct trd_node *a, unsigned int cap, unsigned int n, uint64_t cookie,
      int status)
{
	for (unsigned int i = 0; i < cap + n; i++) {
		struct trd_msg *m = next_msg(nt, a);

		T_ASSERT(m != NULL, "message %u of %u did not come (an outcome lost)", i, cap + n);
		T_EQ(m->user, i < cap ? 1000 + i : cookie + i - cap);
		if (i >= cap) {
			T_EQ(m->len, 0);
			T_EQ(m->status, status);
		}
		trd_msg_free(m);
	}
}

/* Outcomes that find their FIFO full: a verdict is refused (fifo_full) and its id waits for the
 * target's next copy; a failure made at the origin waits in the engine. Each arrives once the
 * application took its messages, in order, none lost. */
static void
test_full(void)
{
	enum { CAP = 8, N_OPS = 3 };
	const struct trd_node_conf ndc = {.rec_fifo_size = CAP};
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = &ndc};
	static uint8_t src[64], bmem[4096];
	struct trd_node_stats st0, st;
	struct trd_node *a, *b;
	struct trd_net *nt;
	struct trd_mr *bmr;
	struct trd_desc d;
	uint32_t id;

	trd_torus_init(&nc.torus, 2, 1, 1);
	nt = trd_net_create(&nc);
	T_ASSERT(nt != NULL, "net");
	a = trd_net_node(nt, 0);
	b = trd_net_node(nt, 1);
	bmr = trd_mr_register(b, bmem, sizeof(bmem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(bmr != NULL, "region");

	/* verdicts from b: refused while the FIFO is full, every id still pending */
	fill(nt, a, b, CAP);
	T_EQ(trd_node_stats_get(a, &st0), 0);
	for (unsigned int i = 0; i < N_OPS; i++) {
		memset(src, (int)(0x40 + i), sizeof(src));
		T_EQ(trd_track_open(a, RF, 1 + i, NULL, &id), 0);
		trd_desc_put(&d, trd_node_coord(b), src, sizeof(src), trd_mr_key(bmr), 64 * i, 0,
			     0);
		d.flags |= TRD_DF_ACKREQ;
		d.aux = id;
		T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
		for (int r = 0; r < 20; r++)
			trd_net_poll(nt);
	}
	for (int i = 0; i < 300; i++)
		trd_net_poll(nt);
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_ASSERT(st.drop[TRD_DROP_FIFO_FULL] > 0, "no verdict found the FIFO full");
	T_EQ(trd_node_cpl_pending(a), N_OPS);
	drain(nt, a, CAP, N_OPS, 1, 0);
	T_EQ(trd_node_cpl_pending(a), 0);
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_EQ(st.drop[TRD_DROP_UNKNOWN_CPL], st0.drop[TRD_DROP_UNKNOWN_CPL]);
	for (unsigned int i = 0; i < N_OPS; i++)
		T_EQ(bmem[64 * i], 0x40 + i);

	/* failures made at a (a source region it does not have): kept while the FIFO is full */
	fill(nt, a, b, CAP);
	for (unsigned int i = 0; i < N_OPS; i++) {
		T_EQ(trd_track_open(a, RF, 10 + i, NULL, &id), 0);
		trd_desc_put(&d, trd_node_coord(b), NULL, 64, trd_mr_key(bmr), 0, 0, 0);
		d.flags = TRD_DF_SRC_MR | TRD_DF_ACKREQ;
		d.src_key = 0x5eed0001; /* no such region */
		d.aux = id;
		T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	}
	for (int i = 0; i < 300; i++)
		trd_net_poll(nt);
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_EQ(st.stat[TRD_STAT_CPL_FAILED], N_OPS);
	T_EQ(trd_node_cpl_pending(a), N_OPS); /* not seen yet: still pending */
	/* a failure for another FIFO is not held up behind them */
	T_EQ(trd_track_open(a, 1, 77, NULL, &id), 0);
	d.aux = id;
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	{
		uint64_t deadline = trd_time_us() + TIMEOUT_US;
		struct trd_msg *m = NULL;

		while (trd_rec_fifo_poll(trd_rec_fifo(a, 1), &m, 1) == 0 &&
		       trd_time_us() < deadline)
			trd_net_poll(nt);
		T_ASSERT(m != NULL, "a failure for FIFO 1 waited behind FIFO %u's", RF);
		T_EQ(m->user, 77);
		T_EQ(m->status, -ENOKEY);
		trd_msg_free(m);
	}
	T_EQ(trd_node_cpl_pending(a), N_OPS);
	drain(nt, a, CAP, N_OPS, 10, -ENOKEY);
	T_EQ(trd_node_cpl_pending(a), 0);
	trd_net_free(nt);
	printf("full FIFO: %u verdicts refused and %u failures kept, then each delivered in order\n",
	       N_OPS, N_OPS);
}

int
main(int argc, char **argv)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	unsigned int lc;
	uint64_t *words = aligned_alloc(64, 4096);
	uint8_t *mem = aligned_alloc(64, 4096), *ro = aligned_alloc(64, 4096);
	uint8_t *local[NODES];
	struct trd_mr *wmr, *mmr, *romr, *lmr[NODES];

	(void)argc;
	test_eal_init(argv[0], NULL);
	trd_torus_init(&nc.torus, 2, 2, 2);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	for (unsigned int i = 0; i < NODES; i++) {
		nd[i] = trd_net_node(net, i);
		local[i] = aligned_alloc(64, 64);
		lmr[i] = trd_mr_register(nd[i], local[i], 64, TRD_ACCESS_REMOTE_WRITE);
		T_ASSERT(lmr[i] != NULL, "local region");
	}
	memset(ro, 0, 4096);
	wmr = trd_mr_register(nd[0], words, 4096, TRD_ACCESS_ALL);
	mmr = trd_mr_register(nd[5], mem, 4096, TRD_ACCESS_REMOTE_WRITE);
	romr = trd_mr_register(nd[5], ro, 4096, TRD_ACCESS_REMOTE_READ);
	T_ASSERT(wmr && mmr && romr, "regions");
	lc = test_worker_lcore();
	if (lc < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &lc, 1), 0);
	test_fadd(words, wmr);
	test_cas_lock(words, wmr, local, lmr);
	test_errors(mem, mmr, romr);
	trd_net_free(net);
	test_full();
	rte_eal_cleanup();
	return 0;
}
