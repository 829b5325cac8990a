/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the public API on nodes without ports (loopback only): every call refuses bad
 * input with a negative errno, counters, regions and keys, FIFO-full back-pressure with no
 * loss, reception-FIFO overflow counted, zero-copy accounting, posts whose descriptors and
 * inline data wrap around the FIFO's ring, from two threads at once, shared payloads (one
 * buffer, referenced by several packets, freed after the last).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <toroid/toroid.h>

#include "../../pmd-test/test_common.h"

#define TIMEOUT_US 5000000

static struct trd_node *
mknode(unsigned int x, unsigned int y, unsigned int z, struct trd_node_conf *c)
{
	struct trd_node_conf def = {0};
	struct trd_node *n;

	if (c == NULL)
		c = &def;
	trd_torus_init(&c->torus, x, y, z);
	n = trd_node_create(c);
	T_ASSERT(n != NULL, "node: %s", rte_strerror(rte_errno));
	return n;
}

static void
test_bad_input(void)
{
	struct trd_node_conf c = {0};
	struct trd_node *n, *n2;
	struct trd_desc d, cs[16];
	struct trd_coord self = {0, 0, 0}, far = {1, 0, 0};
	uint8_t buf[16];
	uint16_t ctr;

	T_ASSERT(trd_node_create(NULL) == NULL && rte_errno == EINVAL, "NULL conf");
	c.torus.dim[0] = 65;
	c.torus.dim[1] = c.torus.dim[2] = 1;
	T_ASSERT(trd_node_create(&c) == NULL && rte_errno == EINVAL, "dimension 65");
	trd_torus_init(&c.torus, 2, 2, 2);
	c.coord.x = 2;
	T_ASSERT(trd_node_create(&c) == NULL && rte_errno == EINVAL, "coordinate outside");
	c.coord.x = 0;
	c.n_inj_fifos = 65;
	T_ASSERT(trd_node_create(&c) == NULL && rte_errno == EINVAL, "too many FIFOs");
	c.n_inj_fifos = 0;
	c.inline_max = 961;
	T_ASSERT(trd_node_create(&c) == NULL && rte_errno == EINVAL, "inline_max");

	n = mknode(1, 1, 1, NULL);
	T_ASSERT(trd_inj_fifo(n, 4) == NULL && trd_inj_fifo(NULL, 0) == NULL, "fifo index");
	T_ASSERT(trd_rec_fifo(n, 4) == NULL, "rec fifo index");
	trd_desc_put(&d, self, buf, sizeof(buf), 1, 0, 0, 0);
	T_EQ(trd_inject(NULL, &d), -EINVAL);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), NULL), -EINVAL);
	d.op = 0;
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	d.op = 9;
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	trd_desc_put(&d, self, buf, sizeof(buf), 1, 0, 0, 0);
	d.flags = 0x08; /* TRD_DF_REMOTE (engine/core/core_pvt.h): only the engine sets it */
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	trd_desc_put(&d, far, buf, sizeof(buf), 1, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* outside a 1x1x1 torus */
	trd_desc_put(&d, self, buf, sizeof(buf), 1, 0, 5, 0);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* counter 5 not allocated */
	trd_desc_put(&d, self, NULL, 9, 1, 0, 0, 0);
	d.flags = TRD_DF_IMM;
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* immediate > 8 bytes */
	trd_desc_put(&d, self, NULL, 10, 1, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* no source */
	memset(cs, 0, sizeof(cs));
	for (int i = 0; i < 16; i++) {
		trd_desc_put(&cs[i], self, NULL, 8, 1, 0, 0, 0);
		cs[i].flags = TRD_DF_IMM;
	}
	trd_desc_rget(&d, self, TRD_ENGINE_FIFO, cs, 16);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* more than 15 carried */
	trd_desc_rget(&d, self, TRD_ENGINE_FIFO, cs, 0);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	cs[0].flags = 0;
	cs[0].src = (uintptr_t)buf;
	trd_desc_rget(&d, self, TRD_ENGINE_FIFO, cs, 1);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* carried raw address */
	cs[0].flags = TRD_DF_IMM | TRD_DF_COPY;
	cs[0].src = 0;
	trd_desc_rget(&d, self, TRD_ENGINE_FIFO, cs, 1);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL); /* TRD_DF_COPY is local only */
	trd_desc_put(&d, self, buf, sizeof(buf), 1, 0, 0, 0);
	d.flags = TRD_DF_COPY;
	T_EQ(trd_inject(trd_inj_fifo(n, 3), &d), 0); /* a local descriptor may carry it */
	/* TRD_DF_PAYLOAD is trd_inject_payload()'s: its src_key is an mbuf the engine frees, so a
	 * descriptor that names one of its own is refused, alone or in a burst */
	trd_desc_put(&d, self, buf, 8, 1, 0, 0, 0);
	d.flags = TRD_DF_PAYLOAD;
	d.src_key = (uint64_t)(uintptr_t)buf;
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	T_EQ(trd_inject_bulk(trd_inj_fifo(n, 0), &d, 1), -EINVAL);
	T_EQ(trd_inject_bulk(trd_inj_fifo(n, 0), NULL, 1), -EINVAL);
	T_EQ(trd_inject_bulk(trd_inj_fifo(n, 0), cs, 0), 0);
	/* a burst of puts alike but for their own fields: each one's own fields are still
	 * checked (a region offset that wraps, no source), and a refused burst posts nothing */
	{
		struct trd_inj_fifo *f = trd_inj_fifo(n, 0);
		unsigned int room = trd_inj_fifo_free_count(f);

		for (int i = 0; i < 4; i++)
			trd_desc_put(&cs[i], self, buf, 8, 1, (uint64_t)i * 8, 0, 0);
		cs[2].roff = UINT64_MAX - 3;
		T_EQ(trd_inject_bulk(f, cs, 4), -EINVAL);
		cs[2].roff = 16;
		cs[3].src = 0;
		T_EQ(trd_inject_bulk(f, cs, 4), -EINVAL);
		T_EQ(trd_inj_fifo_free_count(f), room);
		cs[3].src = (uintptr_t)buf;
		cs[1].flags = TRD_DF_ACKREQ; /* and no verdict id: the whole check again */
		T_EQ(trd_inject_bulk(f, cs, 4), -EINVAL);
		T_EQ(trd_inj_fifo_free_count(f), room);
		cs[1].flags = 0;
		T_EQ(trd_inject_bulk(f, cs, 4), 0);
		T_EQ(trd_inj_fifo_free_count(f), room - 8); /* a descriptor and a slot each */
	}
	/* a descriptor of a kind that is always checked whole (an atomic), followed by one whose
	 * first 16 bytes are the first's with its counters and length inverted (counter 0xffff,
	 * length 0xfffffff7; its compare word, its source, not 0): trd_inject() refuses the
	 * second, so the burst posts nothing */
	{
		struct trd_inj_fifo *f = trd_inj_fifo(n, 0);
		unsigned int room = trd_inj_fifo_free_count(f);
		uint64_t w;

		trd_desc_atomic(&cs[0], self, TRD_ATOMIC_FADD, 1, 0, 2, 5);
		cs[0].flags |= TRD_DF_ACKREQ;
		cs[0].aux = 1;
		cs[1] = cs[0];
		memcpy(&w, (uint8_t *)&cs[1] + 8, sizeof(w));
		w = ~w;
		memcpy((uint8_t *)&cs[1] + 8, &w, sizeof(w));
		T_EQ(trd_inject(f, &cs[1]), -EINVAL);
		T_EQ(trd_inject_bulk(f, cs, 2), -EINVAL);
		T_EQ(trd_inj_fifo_free_count(f), room);
		cs[1] = cs[0]; /* two like atomics: each checked whole, both posted */
		T_EQ(trd_inject_bulk(f, cs, 2), 0);
		T_EQ(trd_inj_fifo_free_count(f), room - 2);
	}

	T_EQ(trd_counter_alloc(NULL, &ctr), -EINVAL);
	T_EQ(trd_counter_alloc(n, NULL), -EINVAL);
	T_EQ(trd_counter_set(n, 0, 1), -EINVAL);
	T_EQ(trd_counter_set(n, 60000, 1), -EINVAL);
	T_EQ(trd_counter_wait(n, 7, 10), -EINVAL);
	T_EQ(trd_rec_fifo_poll(NULL, NULL, 0), -EINVAL);
	T_EQ(trd_rec_fifo_wait(trd_rec_fifo(n, 0), NULL, 10), -EINVAL);
	T_ASSERT(trd_mr_register(NULL, buf, 16, 0) == NULL && rte_errno == EINVAL, "mr NULL");
	T_ASSERT(trd_mr_register(n, NULL, 16, 0) == NULL && rte_errno == EINVAL, "mr addr");
	T_ASSERT(trd_mr_register(n, buf, 16, TRD_ACCESS_MASK + 1u) == NULL && rte_errno == EINVAL,
		 "mr access");
	T_EQ(trd_mr_deregister(NULL), -EINVAL);
	T_EQ(trd_node_add_link(n, NULL, TRD_DIR_XP), -EINVAL);
	T_EQ(trd_node_poll(NULL), -EINVAL);
	T_EQ(trd_lcore_launch(rte_get_main_lcore(), &n, 1), -EINVAL);
	T_EQ(trd_lcore_stop(RTE_MAX_LCORE), -EINVAL);
	T_ASSERT(trd_net_create(NULL) == NULL && rte_errno == EINVAL, "net NULL");

	/* A 2x1x1 node without links cannot reach its neighbour: fail fast. */
	n2 = mknode(2, 1, 1, NULL);
	trd_desc_put(&d, far, buf, sizeof(buf), 1, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(n2, 0), &d), -EHOSTUNREACH);
	T_EQ(trd_node_route_hops(n2, far), -EHOSTUNREACH);
	T_EQ(trd_node_route_hops(n2, self), 0);
	{
		/* a link for a direction the torus does not have */
		struct trd_link *a, *b;

		T_EQ(trd_link_ring_pair("t", 0, 0, &a, &b), 0);
		T_EQ(trd_node_add_link(n2, a, TRD_DIR_YP), -EINVAL);
		T_EQ(trd_node_add_link(n2, a, TRD_DIR_XP), 0);
		T_EQ(trd_node_add_link(n2, b, TRD_DIR_XP), -EEXIST);
		T_EQ(trd_node_route_hops(n2, far), 1);
		trd_link_free(b);
	}
	trd_node_free(n2);
	trd_node_free(n);
	trd_node_free(NULL);
	/* a counter the frame may not name is its own cause, and the origin's -EACCES still */
	T_EQ(trd_cause_errno(TRD_DROP_NO_ACCESS), -EACCES);
	T_EQ(trd_cause_errno(TRD_DROP_CTR_DENIED), -EACCES);
	T_EQ(trd_cause_errno(TRD_DROP_MAX), -EIO);
}

static void
test_counters_regions(void)
{
	struct trd_node_conf c = {.n_counters = 8, .n_regions = 4};
	struct trd_node *n = mknode(1, 1, 1, &c);
	struct trd_mr *mr[5];
	uint16_t ids[8];
	uint8_t mem[4][64];
	int64_t v;
	uint64_t t0;
	int i;

	for (i = 0; i < 7; i++)
		T_EQ(trd_counter_alloc(n, &ids[i]), 0);
	T_EQ(trd_counter_alloc(n, &ids[7]), -ENOSPC);
	T_EQ(trd_counter_free(n, ids[3]), 0);
	T_EQ(trd_counter_free(n, ids[3]), -EINVAL);
	T_EQ(trd_counter_alloc(n, &ids[7]), 0);
	T_EQ(ids[7], ids[3]);
	T_EQ(trd_counter_set(n, ids[0], 100), 0);
	T_EQ(trd_counter_add(n, ids[0], -40), 0);
	T_EQ(trd_counter_read(n, ids[0], &v), 0);
	T_EQ(v, 60);
	t0 = trd_time_us();
	T_EQ(trd_counter_wait(n, ids[0], 20000), -ETIMEDOUT);
	T_ASSERT(trd_time_us() - t0 >= 20000 && trd_time_us() - t0 < 2000000, "bounded wait");
	T_EQ(trd_counter_set(n, ids[0], -1), 0);
	T_EQ(trd_counter_wait(n, ids[0], 1000), -ERANGE);
	T_EQ(trd_counter_set(n, ids[0], 0), 0);
	T_EQ(trd_counter_wait(n, ids[0], 0), 0);

	for (i = 0; i < 4; i++) {
		mr[i] = trd_mr_register(n, mem[i], sizeof(mem[i]), TRD_ACCESS_ALL);
		T_ASSERT(mr[i] != NULL, "register %d", i);
		T_ASSERT(trd_mr_key(mr[i]) >> 16 != 0, "random part of the key");
		T_EQ(trd_mr_addr(mr[i]), mem[i]);
		T_EQ(trd_mr_len(mr[i]), 64);
	}
	T_ASSERT(trd_mr_register(n, mem[0], 8, 0) == NULL && rte_errno == ENOSPC, "table full");
	for (i = 0; i < 4; i++)
		for (int j = 0; j < i; j++)
			T_ASSERT(trd_mr_key(mr[i]) != trd_mr_key(mr[j]), "distinct keys");
	{
		/* a put to a deregistered region is dropped as bad_key, nothing written */
		uint64_t old = trd_mr_key(mr[2]);
		struct trd_desc d;
		struct trd_node_stats st;
		uint8_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8};

		memset(mem[2], 0, 64);
		T_EQ(trd_mr_deregister(mr[2]), 0);
		T_EQ(trd_mr_deregister(mr[2]), -EINVAL);
		trd_desc_put(&d, (struct trd_coord){0, 0, 0}, src, 8, old, 0, 0, 0);
		T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
		for (i = 0; i < 10; i++)
			trd_node_poll(n);
		T_EQ(trd_node_stats_get(n, &st), 0);
		T_EQ(st.drop[TRD_DROP_BAD_KEY], 1);
		for (i = 0; i < 64; i++)
			T_EQ(mem[2][i], 0);
		mr[4] = trd_mr_register(n, mem[2], 64, TRD_ACCESS_ALL);
		T_ASSERT(mr[4] != NULL && trd_mr_key(mr[4]) != old, "slot reused with a new key");
	}
	trd_node_free(n);
}

/* Fill an injection FIFO: -ENOBUFS at exactly its capacity, then everything arrives. */
static void
test_backpressure(void)
{
	struct trd_node_conf c = {.inj_fifo_size = 32, .rec_fifo_size = 64, .inline_max = 64};
	struct trd_node *n = mknode(1, 1, 1, &c);
	struct trd_inj_fifo *f = trd_inj_fifo(n, 0);
	struct trd_coord self = {0, 0, 0};
	uint8_t payload[64];
	unsigned int posted = 0, got = 0;
	struct trd_desc d;
	struct trd_msg *m;
	int rc;

	T_EQ(trd_inj_fifo_free_count(f), 32);
	memset(payload, 0x5a, sizeof(payload));
	/* 64-byte messages are inline: a descriptor and one data slot each */
	for (;;) {
		trd_desc_fifo(&d, self, 0, payload, 64, posted, 0);
		rc = trd_inject(f, &d);
		if (rc == -ENOBUFS)
			break;
		T_EQ(rc, 0);
		posted++;
	}
	T_EQ(posted, 16);
	T_EQ(trd_inj_fifo_free_count(f), 0);
	/* the engine drains it; what was posted arrives, in order */
	while (got < posted) {
		trd_node_poll(n);
		while (trd_rec_fifo_poll(trd_rec_fifo(n, 0), &m, 1) == 1) {
			T_EQ(m->user, got);
			T_EQ(m->len, 64);
			trd_msg_free(m);
			got++;
		}
	}
	T_EQ(trd_inj_fifo_free_count(f), 32);

	/* a reception FIFO that nobody drains: the overflow is counted, not silent */
	{
		struct trd_node_conf c2 = {.rec_fifo_size = 4};
		struct trd_node *n2 = mknode(1, 1, 1, &c2);
		struct trd_node_stats st;

		for (int i = 0; i < 6; i++) {
			trd_desc_fifo(&d, self, 1, payload, 8, (uint64_t)i, 0);
			T_EQ(trd_inject(trd_inj_fifo(n2, 0), &d), 0);
		}
		for (int i = 0; i < 10; i++)
			trd_node_poll(n2);
		T_EQ(trd_node_stats_get(n2, &st), 0);
		T_EQ(st.stat[TRD_STAT_MSGS_DELIVERED], 4);
		T_EQ(st.drop[TRD_DROP_FIFO_FULL], 2);
		trd_node_free(n2);
	}
	trd_node_free(n);
}

/* Posts are written straight into the ring: inline data of 1 to 15 slots, single and bulk
 * posts, wrapping around a small FIFO many times, from the main thread and a second thread at
 * once. Every message arrives byte-exact, and a bulk pair arrives together and in order. */
#define WRAP_MSGS 2000

struct poster {
	struct trd_inj_fifo *f;
	uint8_t rf; /* reception FIFO this poster's messages go to */
	unsigned int posted;
	int err;
};

static uint32_t
wrap_len(unsigned int i)
{
	return 1 + (i * 131u) % 960u; /* 1 .. 960 bytes: 1 to 15 inline slots */
}

/* One post attempt of the next message (every third one with the next, in one bulk post):
 * 0, -ENOBUFS (the FIFO is full: try again) or another error. */
static int
wrap_post_one(struct poster *p)
{
	struct trd_coord self = {0, 0, 0};
	uint8_t buf[2][960];
	struct trd_desc d[2];
	unsigned int k = (p->posted % 3 == 0 && p->posted + 1 < WRAP_MSGS) ? 2 : 1;
	int rc;

	for (unsigned int j = 0; j < k; j++) {
		unsigned int i = p->posted + j;

		test_fill(buf[j], wrap_len(i), (uint64_t)p->rf << 32 | i);
		trd_desc_fifo(&d[j], self, p->rf, buf[j], wrap_len(i), i, 0);
	}
	rc = k == 1 ? trd_inject(p->f, d) : trd_inject_bulk(p->f, d, k);
	if (rc == 0)
		p->posted += k;
	return rc;
}

static void *
wrap_thread(void *arg)
{
	struct poster *p = arg;
	uint64_t deadline = trd_time_us() + 60 * 1000000ull;

	while (p->posted < WRAP_MSGS && p->err == 0) {
		int rc = wrap_post_one(p);

		if (rc != 0 && rc != -ENOBUFS)
			p->err = rc;
		else if (trd_time_us() > deadline)
			p->err = -ETIMEDOUT;
	}
	return NULL;
}

static void
test_post_wrap(void)
{
	/* 64 slots, inline up to 960 bytes: a 15-slot message wraps the ring every few posts */
	struct trd_node_conf c = {.inj_fifo_size = 64, .rec_fifo_size = 4096, .inline_max = 960};
	struct trd_node *n = mknode(1, 1, 1, &c);
	struct poster p[2] = {{.f = trd_inj_fifo(n, 0), .rf = 0},
			      {.f = trd_inj_fifo(n, 0), .rf = 1}};
	unsigned int got[2] = {0, 0};
	uint8_t want[960];
	uint64_t deadline = trd_time_us() + 60 * 1000000ull;
	pthread_t th;

	T_EQ(pthread_create(&th, NULL, wrap_thread, &p[1]), 0);
	/* the main thread posts too, one attempt per round, and runs the engine */
	while (got[0] < WRAP_MSGS || got[1] < WRAP_MSGS) {
		struct trd_msg *m;

		T_ASSERT(trd_time_us() < deadline, "posts arrived: %u and %u of %u", got[0], got[1],
			 WRAP_MSGS);
		if (p[0].posted < WRAP_MSGS) {
			int rc = wrap_post_one(&p[0]);

			T_ASSERT(rc == 0 || rc == -ENOBUFS, "post: %d", rc);
		}
		trd_node_poll(n);
		for (unsigned int r = 0; r < 2; r++)
			while (trd_rec_fifo_poll(trd_rec_fifo(n, r), &m, 1) == 1) {
				unsigned int i = got[r];

				/* in order, so a bulk pair was never split by the other thread */
				T_EQ(m->user, i);
				T_EQ(m->len, wrap_len(i));
				test_fill(want, wrap_len(i), (uint64_t)r << 32 | i);
				T_ASSERT(memcmp(m->data, want, m->len) == 0,
					 "message %u of poster %u byte-exact", i, r);
				trd_msg_free(m);
				got[r]++;
			}
	}
	T_EQ(pthread_join(th, NULL), 0);
	T_EQ(p[1].err, 0);
	T_EQ(trd_inj_fifo_free_count(p[0].f), 64);
	trd_node_free(n);
}

/* Messages above inline_max are read from application memory through external mbufs; the
 * injection counter reaches zero only when the engine no longer reads the buffer. */
static void
test_zero_copy(void)
{
	struct trd_node_conf c = {.inline_max = 128};
	struct trd_node *n = mknode(1, 1, 1, &c);
	static uint8_t big[100000], dst[100000];
	struct trd_mr *mr = trd_mr_register(n, dst, sizeof(dst), TRD_ACCESS_REMOTE_WRITE);
	struct trd_node_stats st;
	struct trd_desc d;
	uint16_t inj, rec;
	unsigned int avail0;

	T_ASSERT(mr != NULL, "mr");
	test_fill(big, sizeof(big), 3);
	T_EQ(trd_counter_alloc(n, &inj), 0);
	T_EQ(trd_counter_alloc(n, &rec), 0);
	T_EQ(trd_counter_set(n, inj, sizeof(big)), 0);
	T_EQ(trd_counter_set(n, rec, sizeof(big)), 0);
	avail0 = rte_mempool_avail_count(trd_default_pool(0));
	trd_desc_put(&d, (struct trd_coord){0, 0, 0}, big, sizeof(big), trd_mr_key(mr), 0, inj,
		     rec);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_EQ(trd_counter_wait(n, inj, TIMEOUT_US), 0);
	T_ASSERT(memcmp(big, dst, sizeof(big)) == 0, "zero-copy put data");
	T_EQ(trd_node_stats_get(n, &st), 0);
	T_ASSERT(st.stat[TRD_STAT_ZCOPY_PKTS] == (sizeof(big) + 1443) / 1444, "zcopy packets %lu",
		 (unsigned long)st.stat[TRD_STAT_ZCOPY_PKTS]);
	/* no mbuf is left behind (the node's small cache aside) */
	T_ASSERT(rte_mempool_avail_count(trd_default_pool(0)) + 64 >= avail0, "mbuf leak");
	trd_node_free(n);
}

/* A shared payload (multicast, engine/core/payload.c): copied once, referenced by every packet
 * that carries it behind its own prefix, freed when the last one is; bad input refused. */
static void
test_payload(void)
{
	struct trd_node_conf c = {.inline_max = 256};
	struct trd_node *n = mknode(1, 1, 1, &c);
	struct trd_coord self = {0, 0, 0};
	static uint8_t data[700], want[720], dst[4 * 700];
	struct trd_mr *mr = trd_mr_register(n, dst, sizeof(dst), TRD_ACCESS_REMOTE_WRITE);
	struct trd_inj_fifo *f = trd_inj_fifo(n, 0);
	struct trd_payload *p = NULL;
	struct trd_node_stats st;
	struct trd_desc d;
	struct trd_msg *m;
	unsigned int avail0, got = 0;
	uint16_t rec;
	uint8_t pre[20], big[2000];

	T_ASSERT(mr != NULL, "mr");
	test_fill(data, sizeof(data), 5);
	memset(big, 1, sizeof(big));
	avail0 = rte_mempool_avail_count(trd_default_pool(0));
	T_EQ(trd_payload_new(NULL, data, 1, &p), -EINVAL);
	T_EQ(trd_payload_new(n, NULL, 1, &p), -EINVAL);
	T_EQ(trd_payload_new(n, data, 0, &p), -EINVAL);
	T_EQ(trd_payload_new(n, data, 1, NULL), -EINVAL);
	T_EQ(trd_payload_new(n, big, 1u << 20, &p), -EMSGSIZE);
	T_EQ(trd_payload_new(n, data, sizeof(data), &p), 0);
	T_EQ(trd_payload_len(p), sizeof(data));
	T_EQ(trd_payload_len(NULL), 0);
	trd_payload_free(NULL);
	/* refusals: no payload, a region source, an immediate, a prefix above inline_max, more
	 * than one packet, a remote get, the flag set by hand without a payload */
	trd_desc_fifo(&d, self, 0, pre, sizeof(pre), 0, 0);
	T_EQ(trd_inject_payload(f, &d, NULL), -EINVAL);
	T_EQ(trd_inject_payload(NULL, &d, p), -EINVAL);
	d.flags = TRD_DF_SRC_MR;
	T_EQ(trd_inject_payload(f, &d, p), -EINVAL);
	d.flags = TRD_DF_IMM;
	T_EQ(trd_inject_payload(f, &d, p), -EINVAL);
	d.flags = 0;
	trd_desc_fifo(&d, self, 0, big, 300, 0, 0);
	T_EQ(trd_inject_payload(f, &d, p), -EINVAL);
	trd_desc_fifo(&d, self, 0, big, 250, 0, 0);
	{
		struct trd_payload *q;

		T_EQ(trd_payload_new(n, big, 1300, &q), 0);
		T_EQ(trd_inject_payload(f, &d, q), -EMSGSIZE); /* 1550 B > 1444 */
		trd_payload_free(q);
	}
	trd_desc_rget(&d, self, 0, (const struct trd_desc *)big, 1);
	T_EQ(trd_inject_payload(f, &d, p), -EINVAL);
	trd_desc_fifo(&d, self, 0, pre, sizeof(pre), 0, 0);
	d.flags = TRD_DF_PAYLOAD; /* src_key 0 */
	T_EQ(trd_inject(f, &d), -EINVAL);
	/* three messages (a 20 B prefix each, then the payload) and four puts of it alone */
	for (unsigned int i = 0; i < 3; i++) {
		memset(pre, 'a' + (int)i, sizeof(pre));
		trd_desc_fifo(&d, self, 0, pre, sizeof(pre), i, 0);
		T_EQ(trd_inject_payload(f, &d, p), 0);
	}
	T_EQ(trd_counter_alloc(n, &rec), 0);
	T_EQ(trd_counter_set(n, rec, sizeof(dst)), 0);
	for (unsigned int i = 0; i < 4; i++) {
		trd_desc_put(&d, self, NULL, 0, trd_mr_key(mr), i * sizeof(data), 0, rec);
		T_EQ(trd_inject_payload(f, &d, p), 0);
	}
	trd_payload_free(p); /* the descriptors hold their own references */
	for (uint64_t t0 = trd_time_us(); got < 3 && trd_time_us() - t0 < TIMEOUT_US;) {
		trd_node_poll(n);
		while (trd_rec_fifo_poll(trd_rec_fifo(n, 0), &m, 1) == 1) {
			memset(want, 'a' + (int)m->user, sizeof(pre));
			memcpy(want + sizeof(pre), data, sizeof(data));
			T_EQ(m->len, sizeof(pre) + sizeof(data));
			T_ASSERT(memcmp(m->data, want, m->len) == 0, "message %u differs",
				 (unsigned int)m->user);
			trd_msg_free(m);
			got++;
		}
	}
	T_EQ(got, 3);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	for (unsigned int i = 0; i < 4; i++)
		T_ASSERT(memcmp(dst + i * sizeof(data), data, sizeof(data)) == 0, "put %u differs",
			 i);
	T_EQ(trd_node_stats_get(n, &st), 0);
	T_EQ(st.stat[TRD_STAT_PAY_BUFS], 2); /* data, and the refused 1300 B */
	T_EQ(st.stat[TRD_STAT_PAY_COPY_BYTES], sizeof(data) + 1300);
	T_EQ(st.stat[TRD_STAT_PAY_REFS], 7); /* 7 packets, no copy */
	T_EQ(st.stat[TRD_STAT_PAY_LINK_COPY_BYTES], 0);
	/* every payload and packet mbuf is back (the node's small cache aside) */
	T_ASSERT(rte_mempool_avail_count(trd_default_pool(0)) + 64 >= avail0, "mbuf leak");
	/* descriptors never sent give their references back when the node is freed (a payload
	 * is an mbuf: its reference count says who holds it) */
	T_EQ(trd_payload_new(n, data, sizeof(data), &p), 0);
	for (unsigned int i = 0; i < 5; i++) {
		trd_desc_fifo(&d, self, 0, pre, sizeof(pre), i, 0);
		T_EQ(trd_inject_payload(f, &d, p), 0);
	}
	T_EQ(rte_mbuf_refcnt_read((struct rte_mbuf *)(void *)p), 6);
	trd_node_free(n);
	T_EQ(rte_mbuf_refcnt_read((struct rte_mbuf *)(void *)p), 1);
	trd_payload_free(p);
}

static void
test_served(void)
{
	unsigned int w = test_worker_lcore();
	struct trd_node *n, *m, *set[3];

	if (w >= RTE_MAX_LCORE) {
		test_skip_part("served: needs a worker lcore");
		return;
	}
	n = mknode(1, 1, 1, NULL);
	m = mknode(1, 1, 1, NULL);
	/* a refused launch names the bad entry and leaves every node as it was */
	set[0] = n;
	set[1] = m;
	set[2] = NULL;
	T_EQ(trd_lcore_launch(w, set, 3), -EINVAL);
	set[0] = NULL;
	T_EQ(trd_lcore_launch(w, set, 1), -EINVAL);
	set[0] = n;
	set[1] = n;
	T_EQ(trd_lcore_launch(w, set, 2), -EBUSY);
	T_ASSERT(trd_node_poll(n) >= 0 && trd_node_poll(m) >= 0, "nodes unserved after refusals");
	set[1] = m;
	T_EQ(trd_lcore_launch(w, set, 2), 0);
	T_EQ(trd_node_poll(m), -EBUSY);
	T_EQ(trd_lcore_stop(w), 0);
	trd_node_free(m);
	T_EQ(trd_node_launch(n, w), 0);
	T_EQ(trd_node_poll(n), -EBUSY);
	T_EQ(trd_node_launch(n, w), -EBUSY);
	T_EQ(trd_lcore_stop(w), 0);
	T_ASSERT(trd_node_poll(n) >= 0, "poll after stop");
	trd_node_free(n);
}

/* Link settings for routed networks: the peer MAC and the IPv4/UDP encapsulation refuse bad
 * input and say what they change. */
static void
test_link_encap(void)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct trd_udp_encap e = {.src_ip = RTE_IPV4(10, 0, 0, 1), .dst_ip = RTE_IPV4(10, 0, 0, 2)};
	struct trd_link *a, *b;
	struct trd_node *n = mknode(2, 1, 1, NULL);
	unsigned int pay;

	T_EQ(trd_link_ring_pair("encap", 0, 1500, &a, &b), 0);
	T_EQ(trd_link_set_peer_mac(NULL, mac), -EINVAL);
	T_EQ(trd_link_set_peer_mac(a, NULL), -EINVAL);
	T_EQ(trd_link_set_peer_mac(a, mac), 0);
	T_EQ(trd_link_udp_encap(NULL, &e), -EINVAL);
	e.src_ip = 0;
	T_EQ(trd_link_udp_encap(a, &e), -EINVAL);
	e.src_ip = RTE_IPV4(10, 0, 0, 1);
	e.dscp = 64;
	T_EQ(trd_link_udp_encap(a, &e), -EINVAL);
	e.dscp = 46;
	pay = trd_link_max_payload(a);
	T_EQ(trd_link_udp_encap(a, &e), 0);
	T_EQ(trd_link_max_payload(a), pay - TRD_UDP_ENCAP_LEN); /* IPv4 and UDP headers */
	T_EQ(trd_link_udp_encap(a, &e), 0);                     /* again: no second shrink */
	T_EQ(trd_link_max_payload(a), pay - TRD_UDP_ENCAP_LEN);
	T_EQ(trd_link_udp_encap(a, NULL), 0);
	T_EQ(trd_link_max_payload(a), pay);
	T_EQ(trd_link_udp_encap(a, &e), 0);
	/* one peer address: not on a switched link */
	T_EQ(trd_node_add_link(n, a, TRD_DIR_NONE), -ENOTSUP);
	T_EQ(trd_node_add_link(n, a, TRD_DIR_XP), 0);
	T_EQ(trd_link_set_peer_mac(a, mac), -EBUSY);
	trd_node_free(n);
	trd_link_free(b);
}

int
main(int argc, char **argv)
{
	(void)argc;
	test_eal_init(argv[0], NULL);
	test_bad_input();
	test_counters_regions();
	test_backpressure();
	test_post_wrap();
	test_link_encap();
	test_zero_copy();
	test_payload();
	test_served();
	printf("api: all checks passed\n");
	rte_eal_cleanup();
	return test_status();
}
