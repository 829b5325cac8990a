/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Remote gets from a process's own injection FIFO (issue 24; docs/vni.md, "Messaging-unit
 * objects"): an RDMA read by an attached process, with no application code running at the
 * target. A 3x1x1 torus of in-process engines over ring links, the VNI service on node 0 (and
 * on node 1); the processes are forked children that use libtoroid_vni only.
 *
 *   test_vni_mu_rma read    A reads 32 KiB of B's region (both on node 0) with one remote get
 *                            that carries a put from B's region and an immediate put: both land
 *                            in A's region byte-exact and A's counter reaches 0; then ten remote
 *                            gets in one post (more than a stage takes: the core copies the
 *                            carried descriptors of 4 at a time) read ten 1 KiB pieces; the
 *                            library refuses 16 carried descriptors, a length that is not whole
 *                            descriptors and a source flag on the remote get; B's region is
 *                            unchanged and nothing else of A's is written
 *   test_vni_mu_rma read2   the same with B attached to node 1's engine
 *   test_vni_mu_rma hostile A posts, past the library, 16 remote gets that break a rule (a
 *                            carried memory-FIFO message to the node's FIFO 0 or to a process's
 *                            FIFO not A's own, completion or verdict flag, injection
 *                            counter, raw source address, wrapping offset, a carried put to
 *                            another node; 16 carried, a length that is not whole descriptors,
 *                            slots that do not match it, a flag on the remote get, a counter not
 *                            its own, a destination outside the torus, a target FIFO that is not
 *                            the engine's: node 1's FIFO 0, its VNI service's request FIFO):
 *                            each dropped and counted,
 *                            its counter failed, no remote get sent or received, A's region
 *                            untouched; then a good one lands
 *   test_vni_mu_rma wrap    A, with a ring of 64 slots, posts 40 remote gets of 1 to 15 carried
 *                            reads each followed by a 100-byte inline put (carried descriptors
 *                            and inline data straddle the ring's end at ever other places), then
 *                            6 small remote gets and 6 puts in one post (more than a stage
 *                            takes, sharing frames): every byte lands where it should, its
 *                            counter counts each, nothing is refused
 *   test_vni_mu_rma race    A posts 2000 remote gets of one carried immediate put while a thread
 *                            of it flips that put's op between put and memory-FIFO message in
 *                            the ring: each is taken or refused as a whole (taken + refused =
 *                            2000, A's counter counts exactly 8 bytes per one taken) and node 1
 *                            sends no memory-FIFO message
 *   test_vni_mu_rma reflect  A puts 4 KiB into B's region (node 1) and, ordered behind it, a
 *                            remote get to node 2 (its neighbour, no process there) carrying
 *                            8 immediate bytes back to A's counter: reflection completion by
 *                            counter; when it is 0, the data's injection counter is 0 already
 *   test_vni_mu_rma atomic   A (node 0) adds 3 to a word of B's region (node 1) 200 times in
 *                            one post (more than the 64 a process may have waiting: the rest
 *                            wait in its FIFO): the old values, written into A's region, are
 *                            100, 103, ... each once, the word ends at 700 and A's counter at 0;
 *                            a compare-and-swap that matches and one that does not, a swap;
 *                            7 atomics that break a rule dropped and counted; one the target
 *                            refuses (a misaligned word) fails A's counter
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "vni_mu_test.h"
#include "vni_test.h"

#define REGION (64u * 1024)
#define READ   (32u * 1024) /* the first read */
#define PIECE  1024u        /* the burst's reads */
#define PIECES 10u
#define OFF2   (40u * 1024) /* where the burst's pieces land in A's region */
#define IMMOFF READ         /* where the first read's immediate lands */
#define IMM    0x0123456789abcdefULL
#define CTR    1 /* A's reception counter */
#define IC     2 /* A's injection counter */
#define CWAIT  8000000
#define N_BAD  16

/* What B tells A: where to read. */
struct target {
	uint64_t key;
	uint8_t node[3];
	uint8_t pad[5];
};

static int p_b2a[2], p_a2b[2];
static bool b_on_n1;
static uint32_t a_slots = 256; /* A's ring */

static struct trd_vni *
mu_open(uint32_t proc, bool n1)
{
	struct trd_vni_conf c = {.socket = n1 ? sock_n1 : sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .mu_fifos = 1,
				 .mu_fifo_slots = proc == 0 ? a_slots : 256,
				 .mu_region = REGION};

	return trd_vni_open(&c);
}

static uint8_t
pat(unsigned int i)
{
	return (uint8_t)(i * 13 + 5);
}

/* Node @p r's statistic @p k. */
static uint64_t
nstat(unsigned int r, enum trd_node_stat k)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(nd[r], &st), 0);
	return st.stat[k];
}

/* B: its region filled with pat(), handed to A; held until A is done, then its region must be
 * as it was. */
static int
target_b(void *arg)
{
	struct trd_vni *v = mu_open(1, b_on_n1);
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct target t = {0};
	uint8_t done;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0)
		return 10;
	for (unsigned int i = 0; i < REGION; i++)
		((uint8_t *)mi.region)[i] = pat(i);
	t.key = mi.region_key;
	memcpy(t.node, vi.node, 3);
	if (write(p_b2a[1], &t, sizeof(t)) != sizeof(t))
		return 11;
	if (child_read(p_a2b[0], &done, 1) != 0)
		return 12;
	for (unsigned int i = 0; i < REGION; i++)
		if (((const uint8_t *)mi.region)[i] != pat(i))
			return 13;
	trd_vni_close(v);
	return 0;
}

/* A carried put of @p len bytes from B's region at @p src to A's region at @p roff. */
static void
carried_read(struct trd_desc *c, struct trd_coord me, const struct trd_vni_mu_info *mi,
	     uint64_t bkey, uint64_t src, uint32_t len, uint64_t roff, uint16_t ctr)
{
	trd_desc_put(c, me, NULL, len, mi->region_key, roff, 0, ctr);
	c->flags = TRD_DF_SRC_MR;
	c->src_key = bkey;
	c->src = src;
}

/* 0 when A's region holds the first read, the immediate and the burst's pieces, zeros else. */
static int
read_check(const uint8_t *r)
{
	uint64_t imm = IMM;

	for (unsigned int i = 0; i < REGION; i++) {
		uint8_t want = 0;

		if (i < READ)
			want = pat(i);
		else if (i >= IMMOFF && i < IMMOFF + 8)
			want = ((const uint8_t *)&imm)[i - IMMOFF];
		else if (i >= OFF2 && i < OFF2 + PIECES * PIECE)
			want = pat(i - OFF2 +
				   100); /* piece k came from B's offset k * PIECE + 100 */
		if (r[i] != want) {
			fprintf(stderr, "A: byte %u is %#x, want %#x\n", i, r[i], want);
			return -1;
		}
	}
	return 0;
}

static int
read_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_desc c[TRD_RGET_MAX_DESCS + 1], d[PIECES], cp[PIECES];
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct trd_coord me;
	uint16_t ctr;
	struct target t;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 20;
	me = coord_of(vi.node);
	ctr = trd_vni_counter_id(v, CTR);
	/* one remote get: 32 KiB of B's region and 8 immediate bytes, counted on CTR */
	carried_read(&c[0], me, &mi, t.key, 0, READ, 0, ctr);
	trd_desc_put(&c[1], me, NULL, 8, mi.region_key, IMMOFF, 0, ctr);
	c[1].flags = TRD_DF_IMM;
	c[1].user = IMM;
	trd_desc_rget(&d[0], coord_of(t.node), TRD_ENGINE_FIFO, c, 2);
	d[0].inj_ctr = IC;
	if (trd_vni_counter_set(v, CTR, READ + 8) != 0 || trd_vni_counter_set(v, IC, 128) != 0)
		return 21;
	if (trd_vni_inject(v, 0, d, 1) != 0)
		return 22;
	memset(c, 0, sizeof(c)); /* copied at post time */
	if (trd_vni_counter_wait(v, CTR, CWAIT) != 0 || trd_vni_counter_wait(v, IC, CWAIT) != 0)
		return 23;
	/* ten in one post: each reads PIECE bytes from B's offset k * PIECE + 100 */
	for (unsigned int k = 0; k < PIECES; k++) {
		carried_read(&cp[k], me, &mi, t.key, k * PIECE + 100, PIECE, OFF2 + k * PIECE, ctr);
		trd_desc_rget(&d[k], coord_of(t.node), TRD_ENGINE_FIFO, &cp[k], 1);
	}
	if (trd_vni_counter_set(v, CTR, PIECES * PIECE) != 0 ||
	    trd_vni_inject(v, 0, d, PIECES) != 0)
		return 24;
	if (trd_vni_counter_wait(v, CTR, CWAIT) != 0)
		return 25;
	/* the library's own refusals: nothing posted */
	for (unsigned int i = 0; i <= TRD_RGET_MAX_DESCS; i++)
		c[i] = cp[0];
	trd_desc_rget(&d[0], coord_of(t.node), TRD_ENGINE_FIFO, c, TRD_RGET_MAX_DESCS + 1);
	if (trd_vni_inject(v, 0, d, 1) != -EMSGSIZE)
		return 26;
	d[0].len = 100;
	if (trd_vni_inject(v, 0, d, 1) != -EINVAL)
		return 27;
	trd_desc_rget(&d[0], coord_of(t.node), TRD_ENGINE_FIFO, c, 1);
	d[0].flags = TRD_DF_SRC_MR;
	if (trd_vni_inject(v, 0, d, 1) != -EINVAL)
		return 28;
	trd_desc_rget(&d[0], coord_of(t.node), 0, c, 1); /* a node FIFO of the target's */
	if (trd_vni_inject(v, 0, d, 1) != -EINVAL)
		return 32;
	if (read_check(mi.region) != 0)
		return 29;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.descs != 1 + PIECES || mi.bad_descs != 0)
		return 30;
	if (write(p_a2b[1], "x", 1) != 1)
		return 31;
	trd_vni_close(v);
	return 0;
}

static void
test_read(void)
{
	unsigned int tr = b_on_n1 ? 1 : 0;
	uint64_t tx0 = nstat(0, TRD_STAT_TX_RGET), rx0 = nstat(tr, TRD_STAT_RX_RGET),
		 g0 = nstat(0, TRD_STAT_GUEST_DESCS);
	pid_t b = spawn(target_b, NULL), a = spawn(read_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(nstat(0, TRD_STAT_TX_RGET) - tx0, 1 + PIECES);
	T_EQ(nstat(tr, TRD_STAT_RX_RGET) - rx0, 1 + PIECES);
	T_EQ(nstat(0, TRD_STAT_GUEST_DESCS) - g0, 1 + PIECES);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 0);
}

/* ---- hostile ---- */

/* A remote get to @p to carrying @p n copies of @p c, its slots as its length says. */
static int
post_rget(const struct trd_vni_mu_info *mi, struct trd_coord to, const struct trd_desc *c,
	  unsigned int n, uint8_t flags, uint16_t inj)
{
	struct trd_desc cs[TRD_RGET_MAX_DESCS + 1], d;

	for (unsigned int i = 0; i < n; i++)
		cs[i] = *c;
	trd_desc_rget(&d, to, TRD_ENGINE_FIFO, cs, n);
	d.flags = flags;
	d.inj_ctr = inj;
	return raw_post(mi, &d, n, cs);
}

static int
hostile_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct trd_coord me, to, far = {.x = 2};
	struct trd_desc c, good, d;
	unsigned int n = 0;
	struct target t;
	uint16_t ctr;
	int64_t cv;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 40;
	me = coord_of(vi.node);
	to = coord_of(t.node);
	ctr = trd_vni_counter_id(v, CTR);
	trd_vni_counter_set(v, IC, 1000);
	/* the good carried put: 8 immediate bytes into A's region at 0 */
	trd_desc_put(&good, me, NULL, 8, mi.region_key, 0, 0, ctr);
	good.flags = TRD_DF_IMM;
	good.user = IMM;
	/* 1: a memory-FIFO message to the node's reception FIFO 0 (the VNI protocol's) */
	c = good;
	c.op = TRD_OP_FIFO;
	c.fifo = 0;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 1b, 1c: to a process's reception FIFO that is not A's own (A has none): only a
	 * reflection's completion back into the poster's own FIFO is carried */
	c.fifo = TRD_GUEST_RFIFO_FIRST;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	c.fifo = TRD_GUEST_RFIFO_LAST;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 2, 3: a completion (a reflection's id is the node's), a verdict */
	c = good;
	c.flags |= TRD_DF_CPL;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	c = good;
	c.flags |= TRD_DF_ACKREQ;
	c.aux = 1;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 4: an injection counter on the carried put */
	c = good;
	c.inj_ctr = 1;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 5: a raw address at the target as the source */
	c = good;
	c.flags = 0;
	c.src = 0x1000;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 6: an offset that wraps */
	c = good;
	c.roff = UINT64_MAX - 4;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 7: a carried put to another node than this one */
	c = good;
	c.dst = far;
	n += post_rget(&mi, to, &c, 1, 0, IC) == 0;
	/* 8: 16 carried */
	n += post_rget(&mi, to, &good, TRD_RGET_MAX_DESCS + 1, 0, IC) == 0;
	/* 9: a flag on the remote get other than ordered (a verdict: the engine's to ask) */
	n += post_rget(&mi, to, &good, 1, TRD_DF_ACKREQ, IC) == 0;
	/* 10: a counter not its own */
	n += post_rget(&mi, to, &good, 1, 0, 600) == 0;
	/* 11: a destination outside the torus */
	n += post_rget(&mi, (struct trd_coord){.x = 7}, &good, 1, 0, IC) == 0;
	/* 12: a length that is not whole descriptors (its 2 slots there) */
	trd_desc_rget(&d, to, TRD_ENGINE_FIFO, &good, 1);
	d.len = 100;
	d.inj_ctr = IC;
	{
		struct trd_desc two[2] = {good, good};

		n += raw_post(&mi, &d, 2, two) == 0;
		/* 13: slots that do not match its length (one slot for two descriptors: the
		 * second would be read from the next entry) */
		trd_desc_rget(&d, to, TRD_ENGINE_FIFO, two, 2);
		d.inj_ctr = IC;
		n += raw_post(&mi, &d, 1, two) == 0;
	}
	/* 14: the target node's injection FIFO 0, not its engine's: there it is the VNI
	 * service's request FIFO, whose room the service's scheduler counts as its own backlog */
	trd_desc_rget(&d, to, 0, &good, 1);
	d.inj_ctr = IC;
	n += raw_post(&mi, &d, 1, &good) == 0;
	if (n != N_BAD || judged(v, n) != 0 || trd_vni_mu_info(v, &mi) != 0)
		return 41;
	if (mi.bad_descs != n || mi.descs != 0) {
		fprintf(stderr, "bad_descs %llu descs %llu, want %u and 0\n",
			(unsigned long long)mi.bad_descs, (unsigned long long)mi.descs, n);
		return 42;
	}
	if (trd_vni_counter_read(v, IC, &cv) != 0 || cv > TRD_COUNTER_FAILED)
		return 43; /* the counter they named was failed */
	for (unsigned int i = 0; i < REGION; i++)
		if (((const uint8_t *)mi.region)[i] != 0)
			return 44; /* a refused one's carried put landed */
	/* the good one */
	trd_vni_counter_set(v, CTR, 8);
	trd_desc_rget(&d, to, TRD_ENGINE_FIFO, &good, 1);
	if (trd_vni_inject(v, 0, &d, 1) != 0 || trd_vni_counter_wait(v, CTR, CWAIT) != 0)
		return 45;
	if (memcmp(mi.region, &(uint64_t){IMM}, 8) != 0)
		return 46;
	if (write(p_a2b[1], "x", 1) != 1)
		return 47;
	trd_vni_close(v);
	return 0;
}

static void
test_hostile(void)
{
	uint64_t tx0 = nstat(0, TRD_STAT_TX_RGET), rx0 = nstat(1, TRD_STAT_RX_RGET);
	pid_t b = spawn(target_b, NULL), a = spawn(hostile_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), N_BAD);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_DESCS), 1);
	/* only the good one was sent, and received by B's node */
	T_EQ(nstat(0, TRD_STAT_TX_RGET) - tx0, 1);
	T_EQ(nstat(1, TRD_STAT_RX_RGET) - rx0, 1);
}

/* ---- wrap ---- */

#define WRAP_ITERS 40
#define WRAP_LEN   24           /* bytes each carried put reads */
#define WRAP_PUT   100          /* an inline put's bytes: two slots */
#define WRAP_POFF  (48u * 1024) /* where the inline puts land in A's region */
#define WRAP_BATCH 6            /* remote gets in the batch, each with a put behind it */

/* Carried descriptors of iteration @p i. */
static unsigned int
wrap_n(unsigned int i)
{
	return 1 + (i * 7) % TRD_RGET_MAX_DESCS;
}

/* B's offset that carried put @p c (numbered over the whole test) reads. */
static uint64_t
wrap_src(unsigned int c)
{
	return ((uint64_t)c * 37) % (REGION - WRAP_LEN);
}

/* Byte @p k of inline put @p i. */
static uint8_t
wrap_pat(unsigned int i, unsigned int k)
{
	return (uint8_t)(i * 31 + k * 7 + 1);
}

/* Post @p n descriptors, waiting (bounded) for room. 0 or -1. */
static int
wrap_post(struct trd_vni *v, const struct trd_desc *d, unsigned int n)
{
	uint64_t deadline = trd_time_us() + WAIT_US;
	int rc;

	while ((rc = trd_vni_inject(v, 0, d, n)) == -ENOBUFS && trd_time_us() < deadline)
		sched_yield();
	return rc == 0 ? 0 : -1;
}

/* An inline put @p i of WRAP_PUT bytes into A's own region (on its own node) into @p d. */
static void
wrap_put(struct trd_desc *d, uint8_t *buf, struct trd_coord me, const struct trd_vni_mu_info *mi,
	 unsigned int i, uint16_t ctr)
{
	for (unsigned int k = 0; k < WRAP_PUT; k++)
		buf[k] = wrap_pat(i, k);
	trd_desc_put(d, me, buf, WRAP_PUT, mi->region_key, WRAP_POFF + i * WRAP_PUT, 0, ctr);
}

/* 0 when A's region holds what the wrap test read and put, zeros else. */
static int
wrap_check(const uint8_t *r, unsigned int nc, unsigned int np)
{
	for (unsigned int i = 0; i < REGION; i++) {
		unsigned int c = i / WRAP_LEN, p = (i - WRAP_POFF) / WRAP_PUT;
		uint8_t want = 0;

		if (c < nc)
			want = pat((unsigned int)wrap_src(c) + i % WRAP_LEN);
		else if (i >= WRAP_POFF && p < np)
			want = wrap_pat(p, (i - WRAP_POFF) % WRAP_PUT);
		if (r[i] != want) {
			fprintf(stderr, "A: byte %u is %#x, want %#x\n", i, r[i], want);
			return -1;
		}
	}
	return 0;
}

static int
wrap_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_desc c[WRAP_BATCH][TRD_RGET_MAX_DESCS], d[2 * WRAP_BATCH];
	uint8_t buf[WRAP_BATCH][WRAP_PUT];
	unsigned int nc = 0, np = 0, ndesc = 0;
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct trd_coord me, to;
	struct target t;
	uint16_t ctr;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 60;
	me = coord_of(vi.node);
	to = coord_of(t.node);
	ctr = trd_vni_counter_id(v, CTR);
	/* every byte that lands counts down CTR: set it high, and check what is left */
	if (trd_vni_counter_set(v, CTR, 1 << 30) != 0)
		return 61;
	/* one at a time, then the put: 1 + n and 1 + 2 slots of a 64-slot ring, so the
	 * carried descriptors and the inline data straddle its end at ever other places */
	for (unsigned int i = 0; i < WRAP_ITERS; i++) {
		unsigned int n = wrap_n(i);

		for (unsigned int k = 0; k < n; k++, nc++)
			carried_read(&c[0][k], me, &mi, t.key, wrap_src(nc), WRAP_LEN,
				     (uint64_t)nc * WRAP_LEN, ctr);
		trd_desc_rget(&d[0], to, TRD_ENGINE_FIFO, c[0], n);
		wrap_put(&d[1], buf[0], me, &mi, np++, ctr);
		if (wrap_post(v, &d[0], 1) != 0 || wrap_post(v, &d[1], 1) != 0)
			return 62;
		ndesc += 2;
	}
	/* more remote gets than a stage takes (4), small enough to share a frame (a bundle
	 * that goes on into the next stage, whose copies reuse the buffers), then as many puts,
	 * in one post */
	for (unsigned int b = 0; b < WRAP_BATCH; b++) {
		unsigned int n = 1 + b % 2;

		for (unsigned int k = 0; k < n; k++, nc++)
			carried_read(&c[b][k], me, &mi, t.key, wrap_src(nc), WRAP_LEN,
				     (uint64_t)nc * WRAP_LEN, ctr);
		trd_desc_rget(&d[b], to, TRD_ENGINE_FIFO, c[b], n);
		wrap_put(&d[WRAP_BATCH + b], buf[b], me, &mi, np++, ctr);
	}
	if ((uint64_t)nc * WRAP_LEN > WRAP_POFF || wrap_post(v, d, 2 * WRAP_BATCH) != 0)
		return 63;
	ndesc += 2 * WRAP_BATCH;
	{
		int64_t want = (1 << 30) - (int64_t)nc * WRAP_LEN - (int64_t)np * WRAP_PUT, cv = 0;
		uint64_t deadline = trd_time_us() + WAIT_US;

		while (trd_vni_counter_read(v, CTR, &cv) == 0 && cv > want &&
		       trd_time_us() < deadline)
			sched_yield();
		if (cv != want) {
			fprintf(stderr, "A: counter %lld, want %lld\n", (long long)cv,
				(long long)want);
			return 64;
		}
	}
	if (wrap_check(mi.region, nc, np) != 0)
		return 65;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.descs != ndesc || mi.bad_descs != 0)
		return 66;
	if (write(p_a2b[1], "x", 1) != 1)
		return 67;
	trd_vni_close(v);
	return 0;
}

static void
test_wrap(void)
{
	uint64_t tx0 = nstat(0, TRD_STAT_TX_RGET), rx0 = nstat(1, TRD_STAT_RX_RGET),
		 bu0 = nstat(0, TRD_STAT_TX_BUNDLES);
	pid_t b, a;

	a_slots = 64;
	b = spawn(target_b, NULL);
	a = spawn(wrap_a, NULL);
	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(nstat(0, TRD_STAT_TX_RGET) - tx0, WRAP_ITERS + WRAP_BATCH);
	T_EQ(nstat(1, TRD_STAT_RX_RGET) - rx0, WRAP_ITERS + WRAP_BATCH);
	T_ASSERT(nstat(0, TRD_STAT_TX_BUNDLES) > bu0, "the batch's messages shared frames");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 0);
}

/* ---- race ---- */

#define RACE_N 2000

static bool race_stop;
static uint8_t *race_slots;

/* Flip the op of every odd slot of A's ring (a carried descriptor: each post is a remote get
 * in an even slot, its one carried put in the odd one after it) between put and memory-FIFO
 * message, as fast as it can, until told to stop. */
static void *
race_flip(void *arg)
{
	uint32_t n = *(const uint32_t *)arg;

	while (!__atomic_load_n(&race_stop, __ATOMIC_RELAXED))
		for (uint32_t i = 1; i < n; i += 2) {
			uint8_t *op = race_slots + (size_t)i * 64 + offsetof(struct trd_desc, op);
			uint8_t b = __atomic_load_n(op, __ATOMIC_RELAXED);

			if (b == TRD_OP_PUT || b == TRD_OP_FIFO)
				__atomic_store_n(op, (uint8_t)(b ^ (TRD_OP_PUT ^ TRD_OP_FIFO)),
						 __ATOMIC_RELAXED);
		}
	return NULL;
}

static int
race_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct trd_desc c, d;
	uint32_t nslots = 256;
	struct target t;
	pthread_t th;
	int64_t want, cv = 0;
	uint64_t deadline;
	int rc = 0;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 70;
	/* 8 immediate bytes into A's region at 0, counted on CTR */
	trd_desc_put(&c, coord_of(vi.node), NULL, 8, mi.region_key, 0, 0,
		     trd_vni_counter_id(v, CTR));
	c.flags = TRD_DF_IMM;
	c.user = IMM;
	trd_desc_rget(&d, coord_of(t.node), TRD_ENGINE_FIFO, &c, 1);
	if (trd_vni_counter_set(v, CTR, 1 << 30) != 0)
		return 71;
	race_slots = (uint8_t *)mi.fifos[0] + sizeof(struct rte_ring); /* its elements */
	if (pthread_create(&th, NULL, race_flip, &nslots) != 0)
		return 72;
	for (unsigned int i = 0; i < RACE_N && rc == 0; i++)
		rc = wrap_post(v, &d, 1);
	if (rc == 0)
		rc = judged(v, RACE_N);
	__atomic_store_n(&race_stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	if (rc != 0 || trd_vni_mu_info(v, &mi) != 0 || mi.descs + mi.bad_descs != RACE_N)
		return 73;
	fprintf(stderr, "A: %llu remote gets taken, %llu refused\n", (unsigned long long)mi.descs,
		(unsigned long long)mi.bad_descs);
	/* each one taken carried a put, and only a put: its 8 bytes, and only they, land */
	want = (1 << 30) - 8 * (int64_t)mi.descs;
	deadline = trd_time_us() + WAIT_US / 4;
	while (trd_vni_counter_read(v, CTR, &cv) == 0 && cv > want && trd_time_us() < deadline)
		sched_yield();
	if (cv != want) {
		fprintf(stderr, "A: counter %lld, want %lld\n", (long long)cv, (long long)want);
		return 74;
	}
	if (write(p_a2b[1], "x", 1) != 1)
		return 75;
	trd_vni_close(v);
	return 0;
}

static void
test_race(void)
{
	uint64_t f0 = nstat(1, TRD_STAT_TX_FIFO), r0 = nstat(1, TRD_STAT_RX_RGET);
	pid_t b = spawn(target_b, NULL), a = spawn(race_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	/* no carried memory-FIFO message left node 1: the copy checked is the copy sent */
	T_EQ(nstat(1, TRD_STAT_TX_FIFO) - f0, 0);
	T_EQ(nstat(1, TRD_STAT_RX_RGET) - r0, stat_of(TRD_VNI_SVC_STAT_MU_DESCS));
}

/* ---- reflect ---- */

/* A puts 4 KiB from its region into B's (the same bytes B has: its region stays as it was),
 * then, ordered behind it, a remote get to node 2 (a nearest neighbour of node 0) that
 * carries 8 immediate bytes back into A's region on counter CTR: when CTR is 0, the data's
 * injection counter must be 0 already (it had left). */
static int
reflect_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_coord me, refl = {.x = 2};
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct trd_desc d[2], c;
	struct target t;
	uint8_t *r;
	int64_t ic;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 80;
	me = coord_of(vi.node);
	r = mi.region;
	for (unsigned int i = 0; i < 4096; i++)
		r[i] = pat(i);
	trd_desc_put(&d[0], coord_of(t.node), NULL, 4096, t.key, 0, IC, 0);
	d[0].flags = TRD_DF_SRC_MR;
	d[0].src_key = mi.region_key;
	d[0].src = 0;
	trd_desc_put(&c, me, NULL, 8, mi.region_key, REGION - 8, 0, trd_vni_counter_id(v, CTR));
	c.flags = TRD_DF_IMM;
	c.user = IMM;
	trd_desc_rget(&d[1], refl, TRD_ENGINE_FIFO, &c, 1);
	d[1].flags = TRD_DF_ORDERED;
	if (trd_vni_counter_set(v, IC, 4096) != 0 || trd_vni_counter_set(v, CTR, 8) != 0 ||
	    trd_vni_inject(v, 0, d, 2) != 0)
		return 81;
	if (trd_vni_counter_wait(v, CTR, CWAIT) != 0)
		return 82;
	if (trd_vni_counter_read(v, IC, &ic) != 0 || ic != 0) {
		fprintf(stderr, "A: the reflection came back with %lld bytes not sent\n",
			(long long)ic);
		return 83;
	}
	if (memcmp(r + REGION - 8, &(uint64_t){IMM}, 8) != 0)
		return 84;
	if (write(p_a2b[1], "x", 1) != 1)
		return 85;
	trd_vni_close(v);
	return 0;
}

static void
test_reflect(void)
{
	uint64_t rx0 = nstat(2, TRD_STAT_RX_RGET), pb0 = nstat(1, TRD_STAT_PUT_BYTES);
	pid_t b = spawn(target_b, NULL), a = spawn(reflect_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(nstat(2, TRD_STAT_RX_RGET) - rx0, 1); /* node 2 reflected, no process there */
	T_ASSERT(nstat(1, TRD_STAT_PUT_BYTES) - pb0 >= 4096, "the data reached B's node");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 0);
}

/* ---- atomic ---- */

#define N_ADD 200u
#define RES2  (N_ADD * 8) /* where the compare-and-swaps' old values land */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* B for the atomics: word 0 of its region is 100, word 1 is 7; at the end 700 and 5. */
static int
atomic_b(void *arg)
{
	struct trd_vni *v = mu_open(1, true);
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct target t = {0};
	uint64_t *w;
	uint8_t done;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0)
		return 60;
	w = mi.region;
	w[0] = 100;
	w[1] = 7;
	t.key = mi.region_key;
	memcpy(t.node, vi.node, 3);
	if (write(p_b2a[1], &t, sizeof(t)) != sizeof(t))
		return 61;
	if (child_read(p_a2b[0], &done, 1) != 0)
		return 62;
	if (__atomic_load_n(&w[0], __ATOMIC_ACQUIRE) != 100 + 3 * N_ADD ||
	    __atomic_load_n(&w[1], __ATOMIC_ACQUIRE) != 5) {
		fprintf(stderr, "B: words %llu %llu\n", (unsigned long long)w[0],
			(unsigned long long)w[1]);
		return 63;
	}
	trd_vni_close(v);
	return 0;
}

/* One atomic of A, waited for: 0, or the counter wait's error. */
static int
atomic_one(struct trd_vni *v, const struct trd_desc *d)
{
	int rc;

	if (trd_vni_counter_set(v, CTR, 8) != 0)
		return -EINVAL;
	rc = trd_vni_inject(v, 0, d, 1);
	return rc != 0 ? rc : trd_vni_counter_wait(v, CTR, CWAIT);
}

static int
atomic_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	static struct trd_desc d[N_ADD];
	struct trd_vni_mu_info mi;
	struct target t;
	struct trd_coord to, me;
	struct trd_vni_info vi;
	uint64_t *res, got[N_ADD];
	unsigned int n = 0;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 70;
	me = coord_of(vi.node);
	res = mi.region;
	to = coord_of(t.node);
	for (unsigned int k = 0; k < N_ADD; k++)
		trd_vni_desc_atomic(&d[k], to, TRD_ATOMIC_FADD, t.key, 0, 3, 0, k * 8, CTR);
	if (trd_vni_counter_set(v, CTR, 8 * N_ADD) != 0 || trd_vni_inject(v, 0, d, N_ADD) != 0)
		return 71;
	if (trd_vni_counter_wait(v, CTR, CWAIT) != 0)
		return 72;
	for (unsigned int k = 0; k < N_ADD; k++)
		got[k] = __atomic_load_n(&res[k], __ATOMIC_ACQUIRE);
	qsort(got, N_ADD, sizeof(got[0]), cmp_u64);
	for (unsigned int k = 0; k < N_ADD; k++)
		if (got[k] != 100 + 3 * k) {
			fprintf(stderr, "A: old value %u is %llu\n", k, (unsigned long long)got[k]);
			return 73;
		}
	/* compare-and-swap 7 -> 42 (matches), 7 -> 99 (does not), swap 42 -> 5 */
	trd_vni_desc_atomic(&d[0], to, TRD_ATOMIC_CAS, t.key, 8, 42, 7, RES2, CTR);
	if (atomic_one(v, &d[0]) != 0 || res[RES2 / 8] != 7)
		return 74;
	trd_vni_desc_atomic(&d[0], to, TRD_ATOMIC_CAS, t.key, 8, 99, 7, RES2 + 8, CTR);
	if (atomic_one(v, &d[0]) != 0 || res[RES2 / 8 + 1] != 42)
		return 75;
	trd_vni_desc_atomic(&d[0], to, TRD_ATOMIC_SWAP, t.key, 8, 5, 0, RES2 + 16, CTR);
	if (atomic_one(v, &d[0]) != 0 || res[RES2 / 8 + 2] != 42)
		return 76;
	/* the target refuses a misaligned word: the verdict fails the counter */
	trd_vni_desc_atomic(&d[0], to, TRD_ATOMIC_FADD, t.key, 3, 1, 0, RES2 + 24, CTR);
	if (atomic_one(v, &d[0]) != -EHOSTUNREACH)
		return 77;
	/* to its own node, on a word of its own region: through the loopback */
	res[RES2 / 8 + 8] = 10;
	trd_vni_desc_atomic(&d[0], me, TRD_ATOMIC_FADD, mi.region_key, RES2 + 64, 1, 0, RES2 + 72,
			    CTR);
	if (atomic_one(v, &d[0]) != 0 || res[RES2 / 8 + 9] != 10 || res[RES2 / 8 + 8] != 11)
		return 80;
	/* past the library: 7 that break a rule */
	trd_vni_counter_set(v, IC, 1000);
	trd_vni_desc_atomic(&d[0], to, TRD_ATOMIC_FADD, t.key, 0, 1000, 0, RES2 + 32, IC);
	d[1] = d[0];
	d[1].flags = TRD_DF_ACKREQ; /* the engine's to set */
	d[2] = d[0];
	d[2].inj_ctr = 0; /* no counter: its verdict would reach no one */
	d[3] = d[0];
	d[3].src_key = RES2 + 36; /* a result word not aligned */
	d[4] = d[0];
	d[4].src_key = REGION - 4; /* ... past the region */
	d[5] = d[0];
	d[5].fifo = 9; /* no such atomic */
	d[6] = d[0];
	d[6].len = 4;
	d[7] = d[0];
	d[7].inj_ctr = 600; /* not its counter */
	for (unsigned int i = 1; i <= 7; i++)
		n += raw_post(&mi, &d[i], 0, NULL) == 0;
	if (n != 7 || judged(v, N_ADD + 5 + 7) != 0 || trd_vni_mu_info(v, &mi) != 0 ||
	    mi.bad_descs != 7)
		return 78;
	if (write(p_a2b[1], "x", 1) != 1)
		return 79;
	trd_vni_close(v);
	return 0;
}

static void
test_atomic(void)
{
	pid_t b = spawn(atomic_b, NULL), a = spawn(atomic_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(trd_node_cpl_pending(nd[0]), 0); /* every completion id the atomics took is back */
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 7);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_DESCS), N_ADD + 5);
	T_EQ(nstat(1, TRD_STAT_ATOMICS), N_ADD + 3);
}

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc, vc1;
	struct vni_setup_opt o = {.rec_fifo_size = 1024, .n_counters = 3 * TRD_COUNTER_BLOCK};

	if (argc != 2) {
		fprintf(stderr, "usage: %s read|read2|hostile|wrap|race|atomic|reflect\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	memset(&vc1, 0, sizeof(vc1));
	vc.max_pool = vc1.max_pool = 1 << 24;
	/* B on node 1 but for "read" (the hostile one's remote gets go to node 1) */
	b_on_n1 = strcmp(argv[1], "read") != 0;
	if (b_on_n1)
		o.vc_n1 = &vc1;
	vni_setup_with("vmurma", b_on_n1 ? mu_topo_two : mu_topo_one, &o, &vc);
	T_EQ(pipe(p_b2a), 0);
	T_EQ(pipe(p_a2b), 0);
	if (strcmp(argv[1], "read") == 0 || strcmp(argv[1], "read2") == 0)
		test_read();
	else if (strcmp(argv[1], "hostile") == 0)
		test_hostile();
	else if (strcmp(argv[1], "wrap") == 0)
		test_wrap();
	else if (strcmp(argv[1], "atomic") == 0)
		test_atomic();
	else if (strcmp(argv[1], "reflect") == 0)
		test_reflect();
	else if (strcmp(argv[1], "race") == 0)
		test_race();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni mu rma %s\n", argv[1]);
	return 0;
}
