/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives in the engine (include/toroid/comb.h) on an in-process 3x3x3 torus (argument
 * "27"; "8" for 2x2x2), ring links, reliable sessions, one engine lcore serving every node.
 * The main thread posts every node's part and then only reads counters: no progress call is
 * ever made for a node, so everything after the post is the engines'.
 *
 *  allreduce: int64 sum of random values (exact, with wrap-around) at 8 B, one piece
 *      (1432 B), several pieces (40 000 B: 28 pieces, pipelined) and 1 MiB, then 100 000 B and
 *      72 000 B on other trees (in the buffers the 1 MiB one left); every op on int64
 *      and uint64 (exact, against a reference computed here); double sum of random values
 *      three times: within a bound of the long-double reference, and bit-identical on every
 *      node and in every run;
 *  sleeping: an inner node's application thread posts and then sleeps on a semaphore (it
 *      calls nothing) while every other node posts and completes; its own result is then
 *      already there;
 *  reduce: result at a non-zero root only; broadcast from a non-zero root, byte-exact;
 *  barrier: no node completes it while one node has not posted;
 *  group: an allreduce on the root's z plane only (dims 3), the other nodes posting nothing;
 *      a broadcast along the root's x line (dims 1);
 *  queue: TRD_COMB_DEPTH collectives posted back to back (the next one: -EBUSY);
 *  out of order: at a leaf, an allreduce then reduces that end before it: the post that
 *      would take the allreduce's slot is -EBUSY (not failed), and the group goes on;
 *  errors: argument checks of trd_comb_post();
 *  malformed: hand-made COMB frames (bad phase, word, piece length, offset, not from a tree
 *      neighbour, a duplicate piece) are dropped and counted by cause; early pieces of
 *      collectives never posted hold a bounded part of the heap, aborts none;
 *  no memory: a post that finds no heap for its buffers fails on every node of the group;
 *  dead member: an inner node receives nothing any more; the allreduce the others post fails
 *      on every one of them (counter failed, -EHOSTUNREACH) in bounded time.
 * Every node must end with no drop but those the malformed part makes.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <rte_malloc.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdlib.h>

#include <toroid/comb.h>
#include <toroid/testing.h>
#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "test_common.h"

#define MAXN       27
#define TIMEOUT_US 20000000
#define BIGLEN     TRD_COMB_MAX_LEN

static unsigned int N, worker;
static struct trd_net *net;
static struct trd_torus torus;
static struct trd_node *nd[MAXN];
static uint16_t ctr[MAXN];
static uint8_t *sbuf[MAXN], *dbuf[MAXN]; /* BIGLEN each, in one registered region */
static uint64_t seed = 0xC0B1C0B1;

static struct trd_coord
coord_of(unsigned int r)
{
	struct trd_coord c;

	T_EQ(trd_torus_coord(&torus, r, &c), 0);
	return c;
}

static void
post(unsigned int r, uint8_t kind, uint8_t op, uint8_t dtype, uint32_t count, unsigned int root,
     uint8_t dims)
{
	struct trd_comb_req rq = {
		.kind = kind,
		.op = op,
		.dtype = dtype,
		.dims = dims,
		.root = coord_of(root),
		.counter = ctr[r],
		.count = count,
		.src = sbuf[r],
		.dst = dbuf[r],
	};
	int rc;

	if (kind == TRD_COMB_REDUCE && r != root)
		rq.dst = NULL;
	if (kind == TRD_COMB_BCAST && r == root)
		rq.dst = NULL;
	if (kind == TRD_COMB_BARRIER)
		rq.src = rq.dst = NULL;
	rc = trd_comb_post(nd[r], &rq);
	T_ASSERT(rc == 0, "post on %u: %d", r, rc);
}

/* Wait for node @p r's counter to reach zero (bounded). */
static void
wait_done(unsigned int r, const char *what)
{
	int rc = trd_counter_wait(nd[r], ctr[r], TIMEOUT_US);

	if (rc != 0) {
		struct trd_comb_stats st;

		for (unsigned int k = 0; k < N; k++) {
			int64_t v;

			trd_comb_stats(nd[k], &st);
			trd_counter_read(nd[k], ctr[k], &v);
			fprintf(stderr,
				"node %u: ctr %" PRId64 " posted %" PRIu64 " completed %" PRIu64
				" failed %" PRIu64 " rx %" PRIu64 " tx %" PRIu64 " early %" PRIu64
				"\n",
				k, v, st.posted, st.completed, st.failed, st.rx_pieces,
				st.tx_pieces, st.early);
		}
	}
	T_ASSERT(rc == 0, "%s: node %u: %d", what, r, rc);
}

/* One collective on every member of the group, posted in a random order; @p skip is a node
 * that does not take part here (UINT32_MAX: none). */
static void
run(uint8_t kind, uint8_t op, uint8_t dtype, uint32_t count, unsigned int root, uint8_t dims,
    const bool *member, const char *what)
{
	unsigned int order[MAXN];

	for (unsigned int i = 0; i < N; i++)
		order[i] = i;
	for (unsigned int i = N - 1; i > 0; i--) {
		unsigned int j = (unsigned int)(test_rand(&seed) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (unsigned int i = 0; i < N; i++)
		if (member == NULL || member[order[i]]) {
			T_EQ(trd_counter_set(nd[order[i]], ctr[order[i]], 1), 0);
			post(order[i], kind, op, dtype, count, root, dims);
		}
	for (unsigned int r = 0; r < N; r++)
		if (member == NULL || member[r])
			wait_done(r, what);
}

/* ---- references ---- */

static uint64_t
ref_u64(uint64_t a, uint64_t b, uint8_t op, bool sgn)
{
	switch (op) {
	case TRD_COMB_SUM:
		return a + b;
	case TRD_COMB_MIN:
		return sgn ? (uint64_t)RTE_MIN((int64_t)a, (int64_t)b) : RTE_MIN(a, b);
	case TRD_COMB_MAX:
		return sgn ? (uint64_t)RTE_MAX((int64_t)a, (int64_t)b) : RTE_MAX(a, b);
	case TRD_COMB_BAND:
		return a & b;
	case TRD_COMB_BOR:
		return a | b;
	default:
		return a ^ b;
	}
}

static void
fill_random(uint32_t count, bool small)
{
	for (unsigned int r = 0; r < N; r++) {
		uint64_t *s = (uint64_t *)sbuf[r];

		for (uint32_t i = 0; i < count; i++)
			s[i] = small ? test_rand(&seed) % 2001 : test_rand(&seed);
		memset(dbuf[r], 0xE7, (size_t)count * 8 + 8);
	}
}

/* Integer allreduce of @p count elements with @p op, checked element by element. */
static void
check_int(uint8_t op, uint8_t dtype, uint32_t count, unsigned int root)
{
	bool sgn = dtype == TRD_COMB_I64;
	char what[96];

	snprintf(what, sizeof(what), "allreduce op %u type %u count %u root %u", op, dtype, count,
		 root);
	fill_random(count, false);
	run(TRD_COMB_ALLREDUCE, op, dtype, count, root, TRD_COMB_TORUS, NULL, what);
	for (uint32_t i = 0; i < count; i++) {
		uint64_t want = ((uint64_t *)sbuf[0])[i];

		for (unsigned int r = 1; r < N; r++)
			want = ref_u64(want, ((uint64_t *)sbuf[r])[i], op, sgn);
		for (unsigned int r = 0; r < N; r++)
			T_ASSERT(((uint64_t *)dbuf[r])[i] == want, "%s: node %u element %u", what,
				 r, i);
	}
	for (unsigned int r = 0; r < N; r++)
		T_ASSERT(dbuf[r][count * 8] == 0xE7, "%s: node %u wrote past the end", what, r);
}

/* Double sums, three runs of the same data: bits equal on every node and in every run, and
 * the value within the bound of a sum of N terms of the long-double reference. */
static void
check_double(uint32_t count)
{
	uint8_t *first = malloc((size_t)count * 8);
	char what[64];

	T_ASSERT(first != NULL, "malloc");
	snprintf(what, sizeof(what), "double sum count %u", count);
	for (unsigned int r = 0; r < N; r++) {
		double *s = (double *)sbuf[r];

		for (uint32_t i = 0; i < count; i++) {
			/* magnitudes spread over 2^-20 .. 2^20, both signs: order matters */
			double m = (double)(test_rand(&seed) >> 11) / 9007199254740992.0;
			int e = (int)(test_rand(&seed) % 41) - 20;

			s[i] = ldexp(test_rand(&seed) & 1 ? -m : m, e);
		}
	}
	for (unsigned int run_i = 0; run_i < 3; run_i++) {
		for (unsigned int r = 0; r < N; r++)
			memset(dbuf[r], 0, (size_t)count * 8);
		run(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_DOUBLE, count, 0, TRD_COMB_TORUS,
		    NULL, what);
		for (unsigned int r = 1; r < N; r++)
			T_ASSERT(memcmp(dbuf[r], dbuf[0], (size_t)count * 8) == 0,
				 "%s: node %u's bits differ from node 0's", what, r);
		if (run_i == 0)
			memcpy(first, dbuf[0], (size_t)count * 8);
		else
			T_ASSERT(memcmp(first, dbuf[0], (size_t)count * 8) == 0,
				 "%s: run %u's bits differ from run 0's", what, run_i);
	}
	for (uint32_t i = 0; i < count; i++) {
		long double sum = 0, abs = 0;
		double got = ((double *)dbuf[0])[i];

		for (unsigned int r = 0; r < N; r++) {
			sum += ((double *)sbuf[r])[i];
			abs += fabs(((double *)sbuf[r])[i]);
		}
		T_ASSERT(fabsl((long double)got - sum) <= (long double)N * DBL_EPSILON * abs,
			 "%s: element %u: %.17g vs %.17Lg", what, i, got, sum);
	}
	free(first);
}

/* ---- the sleeping inner node ---- */

static sem_t sleeper_posted, sleeper_wake;
static unsigned int sleeper;

static void *
sleeper_main(void *arg)
{
	(void)arg;
	T_EQ(trd_counter_set(nd[sleeper], ctr[sleeper], 1), 0);
	post(sleeper, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, 5000, 0, TRD_COMB_TORUS);
	sem_post(&sleeper_posted);
	/* asleep: this application calls nothing until the others have all completed */
	while (sem_wait(&sleeper_wake) != 0)
		;
	return NULL;
}

static void
check_sleeping(void)
{
	const uint32_t count = 5000;
	struct trd_comb_stats st;
	pthread_t th;
	int64_t v;

	/* an inner node of the tree rooted at rank 0: (1, 1, 0) has (1, 1, 1) and (1, 1, 2)
	 * below it on 3x3x3; on 2x2x2, (0, 1, 0) has (0, 1, 1) */
	sleeper = N == 27 ? 4 : 2;
	fill_random(count, false);
	T_EQ(sem_init(&sleeper_posted, 0, 0), 0);
	T_EQ(sem_init(&sleeper_wake, 0, 0), 0);
	T_EQ(pthread_create(&th, NULL, sleeper_main, NULL), 0);
	while (sem_wait(&sleeper_posted) != 0)
		;
	for (unsigned int r = 0; r < N; r++)
		if (r != sleeper) {
			T_EQ(trd_counter_set(nd[r], ctr[r], 1), 0);
			post(r, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, count, 0,
			     TRD_COMB_TORUS);
		}
	for (unsigned int r = 0; r < N; r++)
		if (r != sleeper)
			wait_done(r, "sleeping inner node");
	/* the sleeper's engine sent the result to its children before they had it: its own
	 * part is complete already, without its application */
	T_EQ(trd_counter_read(nd[sleeper], ctr[sleeper], &v), 0);
	T_ASSERT(v == 0, "sleeping node's counter %" PRId64, v);
	T_EQ(trd_comb_stats(nd[sleeper], &st), 0);
	T_ASSERT(st.rx_pieces > 0 && st.tx_pieces > 0, "the sleeper's engine combined");
	for (uint32_t i = 0; i < count; i++) {
		uint64_t want = 0;

		for (unsigned int r = 0; r < N; r++)
			want += ((uint64_t *)sbuf[r])[i];
		for (unsigned int r = 0; r < N; r++)
			T_ASSERT(((uint64_t *)dbuf[r])[i] == want, "sleeping: node %u element %u",
				 r, i);
	}
	sem_post(&sleeper_wake);
	T_EQ(pthread_join(th, NULL), 0);
	sem_destroy(&sleeper_posted);
	sem_destroy(&sleeper_wake);
}

/* ---- reduce, broadcast, barrier, group ---- */

static void
check_reduce_bcast(void)
{
	const uint32_t count = 3000;
	unsigned int root = N - 2;

	fill_random(count, false);
	run(TRD_COMB_REDUCE, TRD_COMB_BXOR, TRD_COMB_U64, count, root, TRD_COMB_TORUS, NULL,
	    "reduce");
	for (uint32_t i = 0; i < count; i++) {
		uint64_t want = 0;

		for (unsigned int r = 0; r < N; r++)
			want ^= ((uint64_t *)sbuf[r])[i];
		T_ASSERT(((uint64_t *)dbuf[root])[i] == want, "reduce: element %u", i);
	}
	for (unsigned int r = 0; r < N; r++)
		if (r != root)
			T_ASSERT(dbuf[r][0] == 0xE7 && dbuf[r][count * 8 - 1] == 0xE7,
				 "reduce: node %u got a result", r);

	root = N == 27 ? 23 : 5; /* (2, 1, 2) and (1, 0, 1) */
	fill_random(count, false);
	run(TRD_COMB_BCAST, 0, TRD_COMB_U64, count, root, TRD_COMB_TORUS, NULL, "broadcast");
	for (unsigned int r = 0; r < N; r++)
		if (r != root) {
			T_ASSERT(memcmp(dbuf[r], sbuf[root], count * 8) == 0,
				 "broadcast: node %u differs", r);
			T_ASSERT(dbuf[r][count * 8] == 0xE7, "broadcast: node %u past the end", r);
		}
}

static void
check_barrier(void)
{
	for (unsigned int last = 0; last < N; last += N / 3 + 1) {
		uint64_t t_end;

		for (unsigned int r = 0; r < N; r++) {
			T_EQ(trd_counter_set(nd[r], ctr[r], 1), 0);
			if (r != last)
				post(r, TRD_COMB_BARRIER, 0, 0, 0, 0, TRD_COMB_TORUS);
		}
		/* not a synchronisation: a window in which nothing may complete */
		t_end = trd_time_us() + 20000;
		while (trd_time_us() < t_end)
			for (unsigned int r = 0; r < N; r++) {
				int64_t v;

				T_EQ(trd_counter_read(nd[r], ctr[r], &v), 0);
				T_ASSERT(v == 1, "barrier: node %u done before node %u posted", r,
					 last);
			}
		post(last, TRD_COMB_BARRIER, 0, 0, 0, 0, TRD_COMB_TORUS);
		for (unsigned int r = 0; r < N; r++)
			wait_done(r, "barrier");
	}
}

static void
check_group(void)
{
	const uint32_t count = 2000;
	unsigned int root = N == 27 ? 13 : 4; /* (1, 1, 1) / (0, 0, 1) */
	struct trd_coord rc = coord_of(root);
	bool member[MAXN];
	struct trd_comb_req rq = {
		.kind = TRD_COMB_ALLREDUCE,
		.op = TRD_COMB_SUM,
		.dtype = TRD_COMB_I64,
		.dims = 3,
		.root = rc,
		.count = 1,
	};

	for (unsigned int r = 0; r < N; r++)
		member[r] = coord_of(r).z == rc.z;
	fill_random(count, false);
	run(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, count, root, 3, member, "plane");
	for (uint32_t i = 0; i < count; i++) {
		uint64_t want = 0;

		for (unsigned int r = 0; r < N; r++)
			if (member[r])
				want += ((uint64_t *)sbuf[r])[i];
		for (unsigned int r = 0; r < N; r++)
			T_ASSERT(member[r] ? ((uint64_t *)dbuf[r])[i] == want
					   : dbuf[r][i * 8] == 0xE7,
				 "plane: node %u element %u", r, i);
	}
	/* a broadcast along the root's x line (dims 1): each node on the way keeps the pieces
	 * and passes them on */
	root = N == 27 ? 5 : 1; /* (2, 1, 0) / (1, 0, 0) */
	rc = coord_of(root);
	for (unsigned int r = 0; r < N; r++)
		member[r] = coord_of(r).y == rc.y && coord_of(r).z == rc.z;
	fill_random(count, false);
	run(TRD_COMB_BCAST, 0, TRD_COMB_U64, count, root, 1, member, "line broadcast");
	for (unsigned int r = 0; r < N; r++)
		if (r != root)
			T_ASSERT(member[r] ? memcmp(dbuf[r], sbuf[root], count * 8) == 0
					   : dbuf[r][0] == 0xE7,
				 "line broadcast: node %u", r);
	rq.dims = 3;
	rc = coord_of(N == 27 ? 13 : 4);
	rq.root = rc;
	for (unsigned int r = 0; r < N; r++)
		member[r] = coord_of(r).z == rc.z;
	/* a node off the plane is no member */
	for (unsigned int r = 0; r < N; r++)
		if (!member[r]) {
			rq.counter = ctr[r];
			rq.src = sbuf[r];
			rq.dst = dbuf[r];
			T_EQ(trd_comb_post(nd[r], &rq), -EINVAL);
			break;
		}
}

static void
check_queue(void)
{
	struct trd_comb_req rq = {.kind = TRD_COMB_BARRIER, .counter = ctr[0]};

	/* TRD_COMB_DEPTH barriers posted back to back by every node, in a random order */
	for (unsigned int r = 0; r < N; r++)
		T_EQ(trd_counter_set(nd[r], ctr[r], TRD_COMB_DEPTH), 0);
	for (unsigned int k = 0; k < TRD_COMB_DEPTH; k++)
		for (unsigned int i = 0; i < N; i++) {
			unsigned int r = (k % 2) ? N - 1 - i : i;

			post(r, TRD_COMB_BARRIER, 0, 0, 0, 0, TRD_COMB_TORUS);
			if (k == TRD_COMB_DEPTH - 1 && i == 0) {
				/* one more on a node: refused while the others are outstanding,
				 * unless they completed meanwhile (not before the others post) */
				rq.counter = ctr[r];
				rq.root = coord_of(0);
				T_EQ(trd_comb_post(nd[r], &rq), -EBUSY);
			}
		}
	for (unsigned int r = 0; r < N; r++)
		wait_done(r, "queue");
}

/* Wait (bounded) until node @p r's counter reads @p want. */
static void
wait_value(unsigned int r, int64_t want, const char *what)
{
	uint64_t t_end = trd_time_us() + TIMEOUT_US;
	int64_t v;

	do
		T_EQ(trd_counter_read(nd[r], ctr[r], &v), 0);
	while (v != want && trd_time_us() < t_end);
	T_ASSERT(v == want, "%s: node %u's counter %" PRId64 ", not %" PRId64, what, r, v, want);
}

/* Collectives of a group end out of order: at a leaf, an allreduce (it waits for the root)
 * then TRD_COMB_DEPTH - 1 reduces (each ends when its piece went up). The allreduce still
 * holds the slot a next post would take: that post is -EBUSY, not taken and failed. Once the
 * others post and the allreduce ends, posts go on and the group works. */
static void
check_out_of_order(void)
{
	const unsigned int leaf = N - 1; /* (2, 2, 2) / (1, 1, 1): no child in rank 0's tree */
	struct trd_comb_req rq = {
		.kind = TRD_COMB_ALLREDUCE,
		.op = TRD_COMB_SUM,
		.dtype = TRD_COMB_I64,
		.root = coord_of(0),
		.counter = ctr[leaf],
		.count = 1,
		.src = sbuf[leaf],
		.dst = dbuf[leaf],
	};

	fill_random(300, false);
	T_EQ(trd_counter_set(nd[leaf], ctr[leaf], TRD_COMB_DEPTH), 0);
	post(leaf, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, 1, 0, TRD_COMB_TORUS);
	for (unsigned int k = 1; k < TRD_COMB_DEPTH; k++)
		post(leaf, TRD_COMB_REDUCE, TRD_COMB_SUM, TRD_COMB_I64, 1, 0, TRD_COMB_TORUS);
	wait_value(leaf, 1, "out of order: the reduces at the leaf");
	T_EQ(trd_comb_post(nd[leaf], &rq), -EBUSY);
	wait_value(leaf, 1, "out of order: the refused post");
	for (unsigned int r = 0; r < N; r++) {
		if (r == leaf)
			continue;
		T_EQ(trd_counter_set(nd[r], ctr[r], TRD_COMB_DEPTH), 0);
		post(r, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, 1, 0, TRD_COMB_TORUS);
		for (unsigned int k = 1; k < TRD_COMB_DEPTH; k++)
			post(r, TRD_COMB_REDUCE, TRD_COMB_SUM, TRD_COMB_I64, 1, 0, TRD_COMB_TORUS);
	}
	for (unsigned int r = 0; r < N; r++)
		wait_done(r, "out of order");
	/* the group goes on: one more allreduce, exact everywhere */
	check_int(TRD_COMB_SUM, TRD_COMB_I64, 300, 0);
}

static void
check_errors(void)
{
	struct trd_comb_req ok = {
		.kind = TRD_COMB_ALLREDUCE,
		.op = TRD_COMB_SUM,
		.dtype = TRD_COMB_I64,
		.root = coord_of(0),
		.counter = ctr[0],
		.count = 4,
		.src = sbuf[0],
		.dst = dbuf[0],
	};
	struct trd_comb_req rq;
	uint64_t unreg[4];

	T_EQ(trd_comb_post(NULL, &ok), -EINVAL);
	T_EQ(trd_comb_post(nd[0], NULL), -EINVAL);
	rq = ok, rq.dtype = TRD_COMB_DOUBLE, rq.op = TRD_COMB_BXOR;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.kind = 9;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.op = 7;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.count = 0;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.count = TRD_COMB_MAX_LEN / 8 + 1;
	T_EQ(trd_comb_post(nd[0], &rq), -EMSGSIZE);
	rq = ok, rq.src = unreg;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.dst = NULL;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.dst = sbuf[0] + 8; /* partly over the source */
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.src = dbuf[0] + 24;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.dst = dbuf[0] + 4;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.counter = 0;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.root.x = 200;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.dims = 9;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL);
	rq = ok, rq.kind = TRD_COMB_BARRIER;
	T_EQ(trd_comb_post(nd[0], &rq), -EINVAL); /* a barrier has no elements */
}

/* ---- malformed frames (the lcore stopped, the node trusting unsequenced frames) ---- */

static uint32_t
make_comb(uint8_t *f, struct trd_coord src, struct trd_coord dst, uint8_t phase, uint16_t word,
	  uint64_t seq, uint32_t root, uint32_t msg_len, uint64_t off, uint16_t pay)
{
	struct trd_pkt p = {
		.version = TRD_WIRE_VERSION,
		.type = TRD_PKT_COMB,
		.flags = TRD_HF_ALL,
		.src = {src.x, src.y, src.z},
		.hops = 4,
		.dst = {dst.x, dst.y, dst.z},
		.fifo = phase,
		.counter = word,
		.key = seq,
		.offset = off,
		.msg_len = msg_len,
		.pay_len = pay,
		.msg_id = 77,
		.aux = root,
	};

	memset(f, 0, TRD_FRAME_HLEN);
	f[12] = TRD_ETHERTYPE >> 8;
	f[13] = TRD_ETHERTYPE & 0xff;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	memset(f + TRD_FRAME_HLEN, 0x5A, pay);
	return TRD_FRAME_HLEN + pay;
}

static uint64_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;

	T_EQ(rte_malloc_get_socket_stats((int)rte_socket_id(), &st), 0);
	return st.heap_allocsz_bytes;
}

/* What a node's early collectives (pieces before its post) may hold: one of the largest
 * (comb.c COMB_EARLY_MAX), plus the allocator's headers. */
#define EARLY_BOUND                                                                                \
	((uint64_t)TRD_COMB_MAX_LEN * 7 + 2 * (TRD_COMB_MAX_LEN / TRD_COMB_PIECE + 1) + 64 * 1024)

/* One child of node 0 sends the first piece of 1 MiB allreduces of every slot of three
 * groups node 0 never posts to (z line, xz and yz planes through it, rooted at it): the early
 * state they make is bounded (the rest dropped as no_memory, for now); aborts of collectives
 * not posted make no buffers, and free those of an early one. */
static void
check_early_bound(void)
{
	static uint8_t f[TRD_FRAME_HLEN + TRD_COMB_PIECE];
	struct trd_coord me = coord_of(0), ch = coord_of(N == 27 ? 9 : 4); /* (0, 0, 1) */
	struct trd_node_stats before, after;
	struct trd_comb_stats s0, s1;
	unsigned int taken = 0, refused = 0;
	uint64_t h0 = heap_used(), h1;

	for (uint8_t g = 4; g <= 6; g++)
		for (uint64_t seq = 0; seq < TRD_COMB_DEPTH; seq++) {
			uint16_t w =
				trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, g, TRD_COMB_I64);

			T_EQ(trd_comb_stats(nd[0], &s0), 0);
			T_EQ(trd_node_stats_get(nd[0], &before), 0);
			T_EQ(trd_node_rx_frame(nd[0], f,
					       make_comb(f, ch, me, TRD_COMB_UP, w, seq, 0,
							 TRD_COMB_MAX_LEN, 0, TRD_COMB_PIECE),
					       0),
			     0);
			T_EQ(trd_comb_stats(nd[0], &s1), 0);
			T_EQ(trd_node_stats_get(nd[0], &after), 0);
			if (s1.early == s0.early + 1) {
				taken++;
			} else {
				T_EQ(after.drop[TRD_DROP_NO_MEMORY],
				     before.drop[TRD_DROP_NO_MEMORY] + 1);
				refused++;
			}
		}
	h1 = heap_used();
	printf("early pieces: %u kept, %u refused for now, heap +%" PRIu64 " KiB\n", taken, refused,
	       (h1 - h0) / 1024);
	T_ASSERT(taken >= 1 && refused >= 1, "%u kept, %u refused", taken, refused);
	T_ASSERT(h1 - h0 <= EARLY_BOUND, "early pieces hold %" PRIu64 " bytes", h1 - h0);
	/* an abort of each of those collectives, the refused ones first (the early state is
	 * still full): kept (the failure is remembered) without a buffer, never refused; those
	 * that were kept free theirs */
	for (uint8_t g = 6; g >= 4; g--)
		for (uint64_t seq = TRD_COMB_DEPTH; seq-- > 0;) {
			uint16_t w =
				trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, g, TRD_COMB_I64);

			T_EQ(trd_comb_stats(nd[0], &s0), 0);
			T_EQ(trd_node_rx_frame(nd[0], f,
					       make_comb(f, ch, me, TRD_COMB_ABORT, w, seq, 0,
							 TRD_COMB_MAX_LEN, 0, 0),
					       0),
			     0);
			T_EQ(trd_comb_stats(nd[0], &s1), 0);
			T_EQ(s1.rx_pieces, s0.rx_pieces + 1);
		}
	T_EQ(trd_node_stats_get(nd[0], &before), 0);
	T_EQ(before.drop[TRD_DROP_NO_MEMORY], after.drop[TRD_DROP_NO_MEMORY]);
	h1 = heap_used();
	T_ASSERT(h1 <= h0 + 64 * 1024, "aborts hold %" PRIu64 " bytes", h1 - h0);
}

static void
check_malformed(void)
{
	static uint8_t f[TRD_FRAME_HLEN + 2 * TRD_COMB_PIECE];
	/* node 0 is the root of rank-0 trees; its child (0, 0, 1) = rank 9 (3x3x3) / 4 */
	unsigned int child = N == 27 ? 9 : 4, far = N - 1;
	struct trd_coord me = coord_of(0), ch = coord_of(child), fr = coord_of(far);
	uint16_t w = trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_TORUS, TRD_COMB_I64);
	struct trd_node_stats before, after;
	uint64_t seq = 1000; /* far ahead of every instance */
	struct trd_comb_stats s0, s1;

	T_EQ(trd_node_trust_unsequenced(nd[0], 1), 0);
	for (unsigned int k = 0;; k++) {
		uint32_t len;
		unsigned int cause;
		const char *what;

		switch (k) {
		case 0:
			len = make_comb(f, ch, me, 4, w, 0, 0, 16, 0, 16);
			cause = TRD_DROP_BAD_FIELD, what = "phase 4";
			break;
		case 1:
			len = make_comb(f, ch, me, TRD_COMB_UP,
					trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_BXOR,
						      TRD_COMB_TORUS, TRD_COMB_DOUBLE),
					0, 0, 16, 0, 16);
			cause = TRD_DROP_BAD_FIELD, what = "bxor of doubles";
			break;
		case 2:
			len = make_comb(f, ch, me, TRD_COMB_UP, w, 0, 0, 2048, 0, 1000);
			cause = TRD_DROP_BAD_LENGTH, what = "short first piece";
			break;
		case 3:
			len = make_comb(f, ch, me, TRD_COMB_UP, w, 0, 0, 2048, 512, 1024);
			cause = TRD_DROP_BAD_LENGTH, what = "offset inside a piece";
			break;
		case 4:
			len = make_comb(f, ch, me, TRD_COMB_UP, w, 0, 0, 12, 0, 12);
			cause = TRD_DROP_BAD_LENGTH, what = "not whole elements";
			break;
		case 5:
			len = make_comb(
				f, ch, me, TRD_COMB_UP,
				trd_comb_word(TRD_COMB_BCAST, 0, TRD_COMB_TORUS, TRD_COMB_U64), 0,
				0, 16, 0, 16);
			cause = TRD_DROP_BAD_FIELD, what = "broadcast going up";
			break;
		case 6:
			len = make_comb(f, fr, me, TRD_COMB_UP, w, seq, 0, 16, 0, 16);
			cause = TRD_DROP_BAD_COMB, what = "not a child";
			break;
		case 7:
			len = make_comb(f, ch, me, TRD_COMB_DOWN, w, seq, 0, 16, 0, 16);
			cause = TRD_DROP_BAD_COMB, what = "down to the root";
			break;
		case 8:
			len = make_comb(f, ch, me, TRD_COMB_UP, w, seq, 5000, 16, 0, 16);
			cause = TRD_DROP_BAD_COMB, what = "root outside the torus";
			break;
		case 9:
			len = make_comb(f, ch, me, TRD_COMB_UP, w, 0, 0, 16, 0, 16);
			cause = TRD_DROP_BAD_COMB, what = "a collective that ended";
			break;
		case 11:
			len = make_comb(f, ch, me, TRD_COMB_ABORT, w, 0, 0, 16, 0, 16);
			cause = TRD_DROP_BAD_LENGTH, what = "an abort with a payload";
			break;
		case 10:
			len = make_comb(
				f, ch, me, TRD_COMB_UP,
				trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, 3, TRD_COMB_I64), 0,
				far, 16, 0, 16);
			cause = TRD_DROP_BAD_COMB, what = "a plane we are not in";
			break;
		default:
			len = 0, cause = 0, what = NULL;
			break;
		}
		if (what == NULL)
			break;
		T_EQ(trd_node_stats_get(nd[0], &before), 0);
		T_EQ(trd_node_rx_frame(nd[0], f, len, 0), 0);
		T_EQ(trd_node_stats_get(nd[0], &after), 0);
		T_ASSERT(after.drop[cause] == before.drop[cause] + 1, "%s: not dropped as %s", what,
			 trd_drop_name(cause));
	}
	/* a piece of the first collective of node 0's z plane (a group of mask 3 it never took
	 * part in) from its child (1, 0, 0): kept early; the same piece again is a duplicate */
	T_EQ(trd_comb_stats(nd[0], &s0), 0);
	seq = 0;
	ch = coord_of(1);
	w = trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, 3, TRD_COMB_I64);
	T_EQ(trd_node_stats_get(nd[0], &before), 0);
	T_EQ(trd_node_rx_frame(nd[0], f, make_comb(f, ch, me, TRD_COMB_UP, w, seq, 0, 16, 0, 16),
			       0),
	     0);
	T_EQ(trd_comb_stats(nd[0], &s1), 0);
	T_EQ(s1.early, s0.early + 1);
	T_EQ(s1.rx_pieces, s0.rx_pieces + 1);
	T_EQ(trd_node_rx_frame(nd[0], f, make_comb(f, ch, me, TRD_COMB_UP, w, seq, 0, 16, 0, 16),
			       0),
	     0);
	T_EQ(trd_node_stats_get(nd[0], &after), 0);
	T_EQ(after.drop[TRD_DROP_DUPLICATE], before.drop[TRD_DROP_DUPLICATE] + 1);
	T_EQ(after.stat[TRD_STAT_DROPS], before.stat[TRD_STAT_DROPS] + 1);
	/* and one too far ahead is refused for now (the sender brings it again) */
	T_EQ(trd_node_rx_frame(
		     nd[0], f,
		     make_comb(f, ch, me, TRD_COMB_UP, w, seq + TRD_COMB_DEPTH + 1, 0, 16, 0, 16),
		     0),
	     0);
	T_EQ(trd_node_stats_get(nd[0], &before), 0);
	T_EQ(before.drop[TRD_DROP_NO_MEMORY], after.drop[TRD_DROP_NO_MEMORY] + 1);
	check_early_bound();
	T_EQ(trd_node_trust_unsequenced(nd[0], 0), 0);
}

/* A post that finds no memory for its buffers (the DPDK heap is filled here: nothing of 4 KiB
 * is left) fails at its node, and the node tells the group: the others' posts of that
 * collective fail too (counter failed), in bounded time, and do not wait for ever. */
static void
check_post_nomem(void)
{
	enum { MAXFILL = 1 << 16 };
	void **fill = calloc(MAXFILL, sizeof(*fill));
	unsigned int nf = 0;
	uint64_t failed[MAXN];

	T_ASSERT(fill != NULL, "calloc");
	for (unsigned int r = 0; r < N; r++) {
		struct trd_comb_stats st;

		T_EQ(trd_comb_stats(nd[r], &st), 0);
		failed[r] = st.failed;
	}
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	for (size_t sz = (size_t)256 << 20; sz >= 4096; sz /= 2)
		while (nf < MAXFILL && (fill[nf] = rte_malloc(NULL, sz, 0)) != NULL)
			nf++;
	T_ASSERT(nf < MAXFILL, "the heap took %u blocks", nf);
	T_EQ(trd_counter_set(nd[0], ctr[0], 1), 0);
	post(0, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, 1024, 0, TRD_COMB_TORUS);
	T_EQ(trd_counter_wait(nd[0], ctr[0], TIMEOUT_US), -EHOSTUNREACH);
	while (nf > 0)
		rte_free(fill[--nf]);
	free(fill);
	for (unsigned int r = 1; r < N; r++) {
		T_EQ(trd_counter_set(nd[r], ctr[r], 1), 0);
		post(r, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, 1024, 0, TRD_COMB_TORUS);
	}
	for (unsigned int r = 0; r < N; r++) {
		struct trd_comb_stats st;
		int rc = trd_counter_wait(nd[r], ctr[r], TIMEOUT_US);

		T_ASSERT(rc == -EHOSTUNREACH, "no memory at node 0: node %u: %d", r, rc);
		T_EQ(trd_comb_stats(nd[r], &st), 0);
		T_EQ(st.failed, failed[r] + 1);
	}
	T_EQ(trd_net_stop(net), 0);
}

/* Two jobs on one group (what two applications attached to the engines would be): half the
 * nodes post their allreduce as job 1, half as job 2. Nothing of either is combined with the
 * other: the collective fails on every node (-EHOSTUNREACH) and no result is written. */
static void
check_jobs(void)
{
	const uint32_t count = 2000;
	uint64_t failed[MAXN];

	T_EQ(trd_net_launch(net, &worker, 1), 0);
	for (unsigned int r = 0; r < N; r++) {
		struct trd_comb_req rq = {
			.kind = TRD_COMB_ALLREDUCE,
			.op = TRD_COMB_SUM,
			.dtype = TRD_COMB_I64,
			.dims = TRD_COMB_TORUS,
			.root = coord_of(0),
			.counter = ctr[r],
			.count = count,
			.job = r < N / 2 ? 1 : 2,
			.src = sbuf[r],
			.dst = dbuf[r],
		};
		struct trd_comb_stats st;

		T_EQ(trd_comb_stats(nd[r], &st), 0);
		failed[r] = st.failed;
		memset(sbuf[r], (int)r + 1, count * 8);
		memset(dbuf[r], 0xAB, count * 8);
		T_EQ(trd_counter_set(nd[r], ctr[r], 1), 0);
		T_EQ(trd_comb_post(nd[r], &rq), 0);
	}
	for (unsigned int r = 0; r < N; r++) {
		struct trd_comb_stats st;
		int rc = trd_counter_wait(nd[r], ctr[r], TIMEOUT_US);

		T_ASSERT(rc == -EHOSTUNREACH, "two jobs: node %u: %d", r, rc);
		T_EQ(trd_comb_stats(nd[r], &st), 0);
		T_EQ(st.failed, failed[r] + 1);
		for (uint32_t i = 0; i < count * 8; i++)
			T_ASSERT(dbuf[r][i] == 0xAB, "two jobs: node %u wrote byte %u", r, i);
	}
	T_EQ(trd_net_stop(net), 0);
}

/* A dead member: one inner node's links lose everything it would receive. Its tree
 * neighbours watch it while they wait (their sessions probe it), declare it down, and fail
 * the collective; their aborts fail it on every other node: every counter fails, in bounded
 * time. */
static void
check_dead(void)
{
	const unsigned int dead = N == 27 ? 4 : 2;
	struct trd_impair_conf all = {.loss = 1.0, .seed = 7};
	uint64_t t1, el, failed[MAXN];

	for (unsigned int r = 0; r < N; r++) {
		struct trd_comb_stats st;

		T_EQ(trd_comb_stats(nd[r], &st), 0);
		failed[r] = st.failed;
	}

	T_EQ(trd_node_impair(nd[dead], &all), 0);
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	fill_random(3000, false);
	t1 = trd_time_us();
	for (unsigned int r = 0; r < N; r++)
		if (r != dead) {
			T_EQ(trd_counter_set(nd[r], ctr[r], 1), 0);
			post(r, TRD_COMB_ALLREDUCE, TRD_COMB_SUM, TRD_COMB_I64, 3000, 0,
			     TRD_COMB_TORUS);
		}
	for (unsigned int r = 0; r < N; r++)
		if (r != dead) {
			struct trd_comb_stats st;
			int rc = trd_counter_wait(nd[r], ctr[r], TIMEOUT_US);

			T_ASSERT(rc == -EHOSTUNREACH, "dead member: node %u: %d", r, rc);
			T_EQ(trd_comb_stats(nd[r], &st), 0);
			T_EQ(st.failed, failed[r] + 1);
		}
	el = trd_time_us() - t1;
	printf("dead member: the collective failed on all %u live nodes in %.1f ms\n", N - 1,
	       (double)el / 1000.0);
	T_ASSERT(el < 10000000, "dead member: %.1f s to fail", (double)el / 1e6);
	T_EQ(trd_net_stop(net), 0);
}

int
main(int argc, char **argv)
{
	struct trd_node_conf ndc = {0};
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = &ndc};
	unsigned int dim = 3;
	size_t rlen = 2 * (size_t)BIGLEN + 64;
	uint64_t t0;

	if (argc > 1 && strcmp(argv[1], "8") == 0)
		dim = 2;
	/* a dead member is found sooner (docs/reliability.md): a quarter of the default */
	ndc.dead_ms = 250;
	test_eal_init(argv[0], NULL);
	worker = test_worker_lcore();
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "SKIP: needs two lcores\n");
		return TEST_SKIP;
	}
	T_EQ(trd_torus_init(&nc.torus, dim, dim, dim), 0);
	torus = nc.torus;
	N = trd_torus_size(&torus);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "trd_net_create: %s", rte_strerror(rte_errno));
	for (unsigned int r = 0; r < N; r++) {
		uint8_t *buf = aligned_alloc(64, rlen);

		T_ASSERT(buf != NULL, "malloc");
		nd[r] = trd_net_node(net, r);
		T_ASSERT(trd_mr_register(nd[r], buf, rlen, 0) != NULL, "register");
		sbuf[r] = buf;
		dbuf[r] = buf + BIGLEN;
		T_EQ(trd_counter_alloc(nd[r], &ctr[r]), 0);
	}
	check_errors();
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	t0 = trd_time_us();

	for (uint8_t op = TRD_COMB_SUM; op <= TRD_COMB_BXOR; op++) {
		check_int(op, TRD_COMB_I64, 1, 0);
		check_int(op, TRD_COMB_U64, 300, N / 2);
	}
	check_int(TRD_COMB_SUM, TRD_COMB_I64, TRD_COMB_PIECE / 8, 0);
	check_int(TRD_COMB_SUM, TRD_COMB_I64, 5000, N - 1);
	{
		uint64_t t1 = trd_time_us();

		check_int(TRD_COMB_SUM, TRD_COMB_I64, BIGLEN / 8, 0);
		printf("1 MiB int64 allreduce (with checks): %.1f ms\n",
		       (double)(trd_time_us() - t1) / 1000.0);
	}
	/* collectives of 64 KiB or more after it take the buffers it left (larger than they need),
	 * on other trees (another root): still exact, guards intact */
	check_int(TRD_COMB_BXOR, TRD_COMB_U64, 100000 / 8, N / 2);
	check_int(TRD_COMB_SUM, TRD_COMB_I64, 9000, N - 1);
	printf("integer allreduce: ok\n");
	check_double(1);
	check_double(5000);
	printf("double sums: bit-identical on %u nodes, 3 runs\n", N);
	check_sleeping();
	printf("sleeping inner node: ok\n");
	check_reduce_bcast();
	check_barrier();
	check_group();
	check_queue();
	check_out_of_order();
	printf("reduce, broadcast, barrier, plane, queue, out of order: ok\n");
	T_EQ(trd_net_stop(net), 0);
	for (unsigned int r = 0; r < N; r++) {
		struct trd_node_stats s;
		struct trd_comb_stats st;

		T_EQ(trd_node_stats_get(nd[r], &s), 0);
		T_EQ(trd_comb_stats(nd[r], &st), 0);
		T_ASSERT(st.failed == 0, "node %u: %" PRIu64 " failed", r, st.failed);
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			T_ASSERT(s.drop[c] == 0, "node %u: %" PRIu64 " drops %s", r, s.drop[c],
				 trd_drop_name(c));
	}
	check_malformed();
	printf("malformed combining frames: dropped and counted\n");
	check_post_nomem();
	printf("a post without memory: failed on all %u nodes\n", N);
	check_jobs();
	printf("two jobs on one group: failed on all %u nodes, nothing combined\n", N);
	check_dead();
	printf("all in %.1f ms\n", (double)(trd_time_us() - t0) / 1000.0);
	trd_net_free(net);
	for (unsigned int r = 0; r < N; r++)
		free(sbuf[r]);
	return test_status();
}
