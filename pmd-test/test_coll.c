/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives (include/toroid/coll.h) on an in-process torus: argument "8" (2x2x2) or "27"
 * (3x3x3), ring links, one engine lcore serving every node. One client, one context and one
 * collective object per rank; the main thread starts each collective on every rank (in a
 * random order) and drives all ranks' progress round-robin with trd_advance(), so nothing in
 * the collectives may block.
 *
 *  reduce/allreduce: every operation on every type it applies to (bitwise ones on integers
 *      only: -EINVAL on floats), every root on 8 nodes (a sample on 27), 0 B, 8 B, 1000 B and
 *      64 KiB + 1000 B; 4 MiB for sum/double and bxor/int64. Checked against a serial
 *      reduction in rank order: integers exactly; min and max of floats exactly; sums of
 *      floats within n * eps * sum(|x_i|) (see check_reduce()); allreduce results are also
 *      bit-identical on every rank;
 *  broadcast, gather, scatter, allgather: every root (a sample on 27), the same sizes (and a
 *      4 MiB broadcast), byte-exact, with guard bytes around every receive buffer;
 *  barrier: no rank completes it until the last rank has started it, for every last rank;
 *  queue: several collectives started back to back on every rank before any progress (some
 *      ranks run ahead: messages for collectives not begun yet are kept and replayed);
 *  sync: (8 only) one thread per rank uses the blocking wrappers; the threads share the main
 *      lcore's CPU and yield when idle, so at most two CPUs are busy;
 *  errors: argument checks, a full queue (-ENOBUFS), destroying a busy object (-EBUSY).
 * Every object must end with no protocol error, and every node with no drop.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <toroid/coll.h>
#include <toroid/msg.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define MAXN       27
#define TIMEOUT_US 20000000
#define GUARD      64
#define GUARD_BYTE 0xE7
#define BIG        (4u << 20)
#define MID        (65536u + 1000u)

static unsigned int N;
static struct trd_net *net;
static struct trd_client *cl[MAXN];
static struct trd_context *cx[MAXN];
static struct trd_coll *co[MAXN];
static uint8_t *sbuf[MAXN], *rbuf[MAXN]; /* GUARD bytes before and after the usable part */
static size_t rlen;                      /* usable bytes of each rbuf */
static int done[MAXN];
static uint64_t seed = 0xC011EC7;
static uint64_t n_colls;
static bool tiny; /* reception FIFOs of 8 messages, work queues of 8 operations */

static const size_t sizes[] = {0, 8, 1000, MID};

/* ---- helpers ---- */

static void
dump_state(void)
{
	for (unsigned int r = 0; r < N; r++) {
		uint64_t st[TRD_COLL_STAT_MAX];

		trd_coll_stats_get(co[r], st);
		fprintf(stderr,
			"rank %u: done %d, context pending %u, started %" PRIu64
			", completed %" PRIu64 ", unexpected %" PRIu64 ", proto errors %" PRIu64
			"\n",
			r, done[r], trd_context_pending(cx[r]), st[TRD_COLL_STAT_STARTED],
			st[TRD_COLL_STAT_COMPLETED], st[TRD_COLL_STAT_UNEXPECTED],
			st[TRD_COLL_STAT_PROTO_ERRORS]);
	}
}

static void
cb_done(struct trd_coll *c, void *cookie, int status)
{
	(void)c;
	*(int *)cookie = status == 0 ? 1 : status;
}

/* Advance every rank until @p count callbacks of done[] are set; each must be a success. */
static void
drive(const char *what)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	for (;;) {
		unsigned int k = 0;

		for (unsigned int r = 0; r < N; r++) {
			T_ASSERT(trd_advance(cx[r], 0) >= 0, "advance");
			k += done[r] != 0;
		}
		if (k == N)
			break;
		if (trd_time_us() > deadline) {
			dump_state();
			T_ASSERT(0, "%s: timed out", what);
		}
	}
	for (unsigned int r = 0; r < N; r++)
		T_ASSERT(done[r] == 1, "%s: rank %u completed with %d", what, r, done[r]);
	n_colls++;
}

static void
advance_all(void)
{
	for (unsigned int r = 0; r < N; r++)
		T_ASSERT(trd_advance(cx[r], 0) >= 0, "advance");
}

/* Start a collective on rank @p r; -ENOBUFS (a full work queue: the tiny run) means advance
 * and try again. */
#define START(r, call)                                                                             \
	do {                                                                                       \
		uint64_t dl_ = trd_time_us() + TIMEOUT_US;                                         \
		int rc_;                                                                           \
		while ((rc_ = (call)) == -ENOBUFS) {                                               \
			advance_all();                                                             \
			T_ASSERT(trd_time_us() < dl_, "start on rank %u: no room", (r));           \
		}                                                                                  \
		T_ASSERT(rc_ == 0, "start on rank %u: %d", (r), rc_);                              \
	} while (0)

/* A random order in which to start a collective on the ranks. */
static void
shuffle(unsigned int *order)
{
	for (unsigned int i = 0; i < N; i++)
		order[i] = i;
	for (unsigned int i = N - 1; i > 0; i--) {
		unsigned int j = (unsigned int)(test_rand(&seed) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

static uint8_t *
rb(unsigned int r)
{
	return rbuf[r] + GUARD;
}

static uint8_t *
sb(unsigned int r)
{
	return sbuf[r] + GUARD;
}

/* Fill the first @p used bytes of the receive buffers and their guards with a pattern. */
static void
rbuf_reset(size_t used)
{
	for (unsigned int r = 0; r < N; r++)
		memset(rbuf[r], GUARD_BYTE, used + 2 * GUARD);
}

/* The guards are intact and nothing past @p used bytes was written. */
static void
rbuf_check_guards(unsigned int r, size_t used, const char *what)
{
	for (size_t i = 0; i < GUARD; i++) {
		T_ASSERT(rbuf[r][i] == GUARD_BYTE, "%s: rank %u wrote before its buffer", what, r);
		T_ASSERT(rbuf[r][GUARD + used + i] == GUARD_BYTE,
			 "%s: rank %u wrote past %zu bytes", what, r, used);
	}
}

static void
fill_random(uint8_t *p, size_t len, uint64_t s)
{
	size_t i = 0;

	s |= 1;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = test_rand(&s);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)test_rand(&s);
}

/* ---- reductions: inputs and the serial reference ---- */

/* Random elements: integers over their whole range, floats uniform in [-1, 1). */
static void
fill_type(uint8_t *p, size_t count, enum trd_coll_type type, uint64_t s)
{
	s |= 1;
	for (size_t i = 0; i < count; i++) {
		uint64_t v = test_rand(&s);
		double d = (double)(v >> 11) / (double)(1ull << 53) * 2.0 - 1.0;

		switch (type) {
		case TRD_COLL_INT32: {
			int32_t x = (int32_t)(uint32_t)v;
			memcpy(p + 4 * i, &x, 4);
			break;
		}
		case TRD_COLL_INT64:
		case TRD_COLL_UINT64:
			memcpy(p + 8 * i, &v, 8);
			break;
		case TRD_COLL_FLOAT: {
			float f = (float)d;
			memcpy(p + 4 * i, &f, 4);
			break;
		}
		case TRD_COLL_DOUBLE:
			memcpy(p + 8 * i, &d, 8);
			break;
		default:
			break;
		}
	}
}

/* Element @p i of a buffer as a double (floats) or as raw integer bits. */
static double
elem_d(const uint8_t *p, size_t i, enum trd_coll_type type)
{
	if (type == TRD_COLL_FLOAT) {
		float f;
		memcpy(&f, p + 4 * i, 4);
		return f;
	}
	double d;
	memcpy(&d, p + 8 * i, 8);
	return d;
}

static uint64_t
elem_u(const uint8_t *p, size_t i, enum trd_coll_type type)
{
	if (type == TRD_COLL_INT32) {
		uint32_t x;
		memcpy(&x, p + 4 * i, 4);
		return x;
	}
	uint64_t x;
	memcpy(&x, p + 8 * i, 8);
	return x;
}

/* The serial reduction in rank order 0, 1, ..., n-1 (integers: in the type's arithmetic). */
static void
serial_reduce(uint8_t *out, size_t count, enum trd_coll_type type, enum trd_coll_op op)
{
	size_t esz = trd_coll_type_size(type);

	memcpy(out, sb(0), count * esz);
	for (unsigned int r = 1; r < N; r++) {
		const uint8_t *in = sb(r);

		for (size_t i = 0; i < count; i++) {
			if (type == TRD_COLL_FLOAT || type == TRD_COLL_DOUBLE) {
				double a = elem_d(out, i, type), b = elem_d(in, i, type), v;

				v = op == TRD_COLL_SUM   ? a + b
				    : op == TRD_COLL_MIN ? (b < a ? b : a)
							 : (b > a ? b : a);
				if (type == TRD_COLL_FLOAT) {
					/* the sum of two floats, rounded to float, as the type does
					 */
					float fa = (float)a, fb = (float)b,
					      f = op == TRD_COLL_SUM ? fa + fb : (float)v;
					memcpy(out + 4 * i, &f, 4);
				} else {
					memcpy(out + 8 * i, &v, 8);
				}
				continue;
			}
			uint64_t a = elem_u(out, i, type), b = elem_u(in, i, type), v;

			switch (op) {
			case TRD_COLL_SUM:
				v = a + b;
				break;
			case TRD_COLL_MIN:
			case TRD_COLL_MAX: {
				bool less = type == TRD_COLL_INT32   ? (int32_t)b < (int32_t)a
					    : type == TRD_COLL_INT64 ? (int64_t)b < (int64_t)a
								     : b < a;
				v = (op == TRD_COLL_MIN) == less ? b : a;
				if (a == b)
					v = a;
				break;
			}
			case TRD_COLL_BAND:
				v = a & b;
				break;
			case TRD_COLL_BOR:
				v = a | b;
				break;
			default:
				v = a ^ b;
				break;
			}
			if (type == TRD_COLL_INT32) {
				uint32_t x = (uint32_t)v;
				memcpy(out + 4 * i, &x, 4);
			} else {
				memcpy(out + 8 * i, &v, 8);
			}
		}
	}
}

/*
 * Compare a result with the serial reference. Integers, and min/max of floats, are exact:
 * they do not depend on the order of the operations. A floating-point sum does: the tree adds
 * each subtree's partial sum (own value, then child 0's subtree, then child 1's), the serial
 * reference adds in rank order, and each order rounds differently. Both are within
 * gamma(n-1) * sum(|x_i|) of the exact sum (gamma(k) = k u / (1 - k u), u = eps / 2, the
 * classic bound for any order of n-1 additions), so they differ by at most
 * 2 gamma(n-1) sum(|x_i|) < n * eps * sum(|x_i|): the tolerance used.
 */
static void
check_reduce(const uint8_t *got, const uint8_t *ref, size_t count, enum trd_coll_type type,
	     enum trd_coll_op op, const char *what)
{
	bool fp = type == TRD_COLL_FLOAT || type == TRD_COLL_DOUBLE;

	if (!fp || op != TRD_COLL_SUM) {
		T_ASSERT(memcmp(got, ref, count * trd_coll_type_size(type)) == 0, "%s: differs",
			 what);
		return;
	}
	for (size_t i = 0; i < count; i++) {
		double eps = type == TRD_COLL_FLOAT ? FLT_EPSILON : DBL_EPSILON, abs_sum = 0;
		double g = elem_d(got, i, type), e = elem_d(ref, i, type);

		for (unsigned int r = 0; r < N; r++)
			abs_sum += fabs(elem_d(sb(r), i, type));
		T_ASSERT(fabs(g - e) <= N * eps * abs_sum, "%s: element %zu: %.17g vs %.17g", what,
			 i, g, e);
	}
}

static uint8_t *refbuf;

static void
one_reduce(bool all, unsigned int root, size_t count, enum trd_coll_type type, enum trd_coll_op op)
{
	size_t esz = trd_coll_type_size(type), len = count * esz;
	unsigned int order[MAXN];
	char what[128];

	snprintf(what, sizeof(what), "%s %s/%s root %u count %zu", all ? "allreduce" : "reduce",
		 trd_coll_op_name(op), trd_coll_type_name(type), root, count);
	for (unsigned int r = 0; r < N; r++)
		fill_type(sb(r), count, type, test_rand(&seed));
	serial_reduce(refbuf, count, type, op);
	rbuf_reset(len);
	memset(done, 0, sizeof(done));
	shuffle(order);
	for (unsigned int k = 0; k < N; k++) {
		unsigned int r = order[k];

		if (all)
			START(r, trd_coll_allreduce(co[r], sb(r), rb(r), count, type, op, cb_done,
						    &done[r], NULL));
		else
			START(r, trd_coll_reduce(co[r], root, sb(r), r == root ? rb(r) : NULL,
						 count, type, op, cb_done, &done[r], NULL));
	}
	drive(what);
	for (unsigned int r = 0; r < N; r++) {
		if (!all && r != root) {
			rbuf_check_guards(r, 0, what);
			continue;
		}
		rbuf_check_guards(r, len, what);
		check_reduce(rb(r), refbuf, count, type, op, what);
		if (all)
			T_ASSERT(memcmp(rb(r), rb(0), len) == 0,
				 "%s: rank %u's result is not rank 0's", what, r);
	}
}

static void
test_reduce(const unsigned int *roots, unsigned int n_roots)
{
	uint64_t t0 = trd_time_us(), before = n_colls;

	for (int type = 0; type < TRD_COLL_TYPE_MAX; type++)
		for (int op = 0; op < TRD_COLL_OP_MAX; op++) {
			if (tiny && !((type == TRD_COLL_DOUBLE && op == TRD_COLL_SUM) ||
				      (type == TRD_COLL_INT64 && op == TRD_COLL_BXOR)))
				continue;
			if (!trd_coll_op_valid(op, type)) {
				T_EQ(trd_coll_allreduce(co[0], sb(0), rb(0), 1, type, op, NULL,
							NULL, NULL),
				     -EINVAL);
				continue;
			}
			for (unsigned int s = 0; s < RTE_DIM(sizes); s++) {
				size_t count = sizes[s] / trd_coll_type_size(type);

				one_reduce(true, 0, count, type, op);
				for (unsigned int k = 0; k < n_roots; k++)
					one_reduce(false, roots[k], count, type, op);
			}
		}
	/* 4 MiB: a floating-point sum and an integer operation, pipelined in segments */
	one_reduce(true, 0, BIG / 8, TRD_COLL_DOUBLE, TRD_COLL_SUM);
	one_reduce(true, 0, BIG / 8, TRD_COLL_INT64, TRD_COLL_BXOR);
	for (unsigned int k = 0; k < n_roots; k++)
		one_reduce(false, roots[k], BIG / 8, TRD_COLL_DOUBLE, TRD_COLL_SUM);
	one_reduce(false, roots[n_roots - 1], BIG / 8, TRD_COLL_INT64, TRD_COLL_BXOR);
	printf("reduce/allreduce: %" PRIu64 " collectives (%u roots), every operation and type, "
	       "0 B .. 4 MiB (%.2f s)\n",
	       n_colls - before, n_roots, (double)(trd_time_us() - t0) / 1e6);
}

/* ---- broadcast, gather, scatter, allgather ---- */

enum blk { B_BCAST, B_GATHER, B_SCATTER, B_ALLGATHER };

static void
one_blocks(enum blk kind, unsigned int root, size_t len)
{
	static const char *const names[] = {"broadcast", "gather", "scatter", "allgather"};
	unsigned int order[MAXN];
	char what[96];

	snprintf(what, sizeof(what), "%s root %u len %zu", names[kind], root, len);
	for (unsigned int r = 0; r < N; r++)
		fill_random(sb(r), kind == B_SCATTER ? N * len : len, test_rand(&seed));
	rbuf_reset(kind == B_GATHER || kind == B_ALLGATHER ? N * len : len);
	if (kind == B_BCAST)
		memcpy(rb(root), sb(root), len);
	memset(done, 0, sizeof(done));
	shuffle(order);
	for (unsigned int k = 0; k < N; k++) {
		unsigned int r = order[k];

		switch (kind) {
		case B_BCAST:
			START(r,
			      trd_coll_broadcast(co[r], root, rb(r), len, cb_done, &done[r], NULL));
			break;
		case B_GATHER:
			START(r, trd_coll_gather(co[r], root, sb(r), r == root ? rb(r) : NULL, len,
						 cb_done, &done[r], NULL));
			break;
		case B_SCATTER:
			START(r, trd_coll_scatter(co[r], root, r == root ? sb(r) : NULL, rb(r), len,
						  cb_done, &done[r], NULL));
			break;
		default:
			START(r, trd_coll_allgather(co[r], sb(r), rb(r), len, cb_done, &done[r],
						    NULL));
			break;
		}
	}
	drive(what);
	for (unsigned int r = 0; r < N; r++) {
		switch (kind) {
		case B_BCAST:
			rbuf_check_guards(r, len, what);
			T_ASSERT(memcmp(rb(r), sb(root), len) == 0, "%s: rank %u differs", what, r);
			break;
		case B_GATHER:
			if (r != root) {
				rbuf_check_guards(r, 0, what);
				break;
			}
			rbuf_check_guards(r, N * len, what);
			for (unsigned int q = 0; q < N; q++)
				T_ASSERT(memcmp(rb(r) + q * len, sb(q), len) == 0,
					 "%s: block of rank %u differs", what, q);
			break;
		case B_SCATTER:
			rbuf_check_guards(r, len, what);
			T_ASSERT(memcmp(rb(r), sb(root) + r * len, len) == 0,
				 "%s: rank %u got the wrong block", what, r);
			break;
		default:
			rbuf_check_guards(r, N * len, what);
			for (unsigned int q = 0; q < N; q++)
				T_ASSERT(memcmp(rb(r) + q * len, sb(q), len) == 0,
					 "%s: rank %u: block of rank %u differs", what, r, q);
			break;
		}
	}
}

static void
test_blocks(const unsigned int *roots, unsigned int n_roots)
{
	uint64_t t0 = trd_time_us(), before = n_colls;

	for (unsigned int s = 0; s < RTE_DIM(sizes); s++) {
		for (unsigned int k = 0; k < n_roots; k++) {
			one_blocks(B_BCAST, roots[k], sizes[s]);
			one_blocks(B_GATHER, roots[k], sizes[s]);
			one_blocks(B_SCATTER, roots[k], sizes[s]);
		}
		one_blocks(B_ALLGATHER, 0, sizes[s]);
	}
	one_blocks(B_BCAST, roots[0], BIG);
	one_blocks(B_BCAST, roots[n_roots - 1], BIG - 3);
	printf("broadcast/gather/scatter/allgather: %" PRIu64 " collectives (%u roots), "
	       "0 B .. 4 MiB, byte-exact (%.2f s)\n",
	       n_colls - before, n_roots, (double)(trd_time_us() - t0) / 1e6);
}

/* ---- barrier ---- */

static void
test_barrier(const unsigned int *lasts, unsigned int n_lasts)
{
	for (unsigned int k = 0; k < n_lasts; k++) {
		unsigned int last = lasts[k];
		uint64_t until;

		memset(done, 0, sizeof(done));
		for (unsigned int r = 0; r < N; r++)
			if (r != last)
				T_EQ(trd_coll_barrier(co[r], cb_done, &done[r], NULL), 0);
		/* everyone but the last: nobody may get through, however long they try */
		until = trd_time_us() + 3000;
		while (trd_time_us() < until)
			for (unsigned int r = 0; r < N; r++)
				T_ASSERT(trd_advance(cx[r], 0) >= 0, "advance");
		for (unsigned int r = 0; r < N; r++)
			T_ASSERT(done[r] == 0, "barrier: rank %u passed before rank %u arrived", r,
				 last);
		T_EQ(trd_coll_barrier(co[last], cb_done, &done[last], NULL), 0);
		drive("barrier");
	}
	printf("barrier: %u barriers, none passed before its last rank arrived\n", n_lasts);
}

/* ---- several collectives queued at once ---- */

static void
test_queue(void)
{
	enum { Q = 6 };
	static double in[MAXN][Q][64], out[MAXN][Q][64];
	static int qdone[MAXN][Q];
	static uint64_t bc[MAXN][Q][4];
	uint64_t deadline = trd_time_us() + TIMEOUT_US;
	unsigned int order[MAXN];

	for (unsigned int r = 0; r < N; r++)
		for (unsigned int q = 0; q < Q; q++)
			for (unsigned int i = 0; i < 64; i++)
				in[r][q][i] = r * 1000 + q * 64 + i; /* exact sums */
	memset(qdone, 0, sizeof(qdone));
	shuffle(order);
	/* some ranks post all their collectives and advance before the others post any: their
	 * messages for collectives not begun elsewhere wait there */
	for (unsigned int k = 0; k < N; k++) {
		unsigned int r = order[k];

		for (unsigned int q = 0; q < Q; q++) {
			if (q % 2 == 0) {
				START(r, trd_coll_allreduce(co[r], in[r][q], out[r][q], 64,
							    TRD_COLL_DOUBLE, TRD_COLL_SUM, cb_done,
							    &qdone[r][q], NULL));
			} else {
				unsigned int root = (q * 7) % N;

				bc[r][q][0] = r == root ? 0xB0B0 + q : 0;
				START(r, trd_coll_broadcast(co[r], root, bc[r][q], sizeof(bc[r][q]),
							    cb_done, &qdone[r][q], NULL));
			}
		}
		if (k < N / 2)
			for (int i = 0; i < 50; i++)
				trd_advance(cx[r], 0);
	}
	for (;;) {
		unsigned int k = 0;

		for (unsigned int r = 0; r < N; r++) {
			T_ASSERT(trd_advance(cx[r], 0) >= 0, "advance");
			for (unsigned int q = 0; q < Q; q++)
				k += qdone[r][q] != 0;
		}
		if (k == N * Q)
			break;
		if (trd_time_us() > deadline) {
			dump_state();
			T_ASSERT(0, "queue: timed out");
		}
	}
	for (unsigned int r = 0; r < N; r++)
		for (unsigned int q = 0; q < Q; q++) {
			T_EQ(qdone[r][q], 1);
			if (q % 2 == 0) {
				for (unsigned int i = 0; i < 64; i++) {
					double want = 0;

					for (unsigned int p = 0; p < N; p++)
						want += p * 1000 + q * 64 + i;
					T_ASSERT(out[r][q][i] == want, "queue: allreduce %u wrong",
						 q);
				}
			} else {
				T_EQ(bc[r][q][0], 0xB0B0 + q);
			}
		}
	printf("queue: %u collectives per rank started at once, all complete and right\n", Q);
}

/* ---- blocking wrappers, one thread per rank ---- */

static int sync_failed;

static void *
sync_thread(void *arg)
{
	unsigned int r = (unsigned int)(uintptr_t)arg;
	double x[100], y[100];
	uint64_t b[8];
	uint8_t g[8 * MAXN];
	int rc;

	for (int i = 0; i < 100; i++)
		x[i] = r + i;
	rc = trd_coll_barrier_sync(co[r]);
	if (rc == 0)
		rc = trd_coll_allreduce_sync(co[r], x, y, 100, TRD_COLL_DOUBLE, TRD_COLL_MAX);
	for (int i = 0; rc == 0 && i < 100; i++)
		if (y[i] != N - 1 + i)
			rc = -EIO;
	memset(b, r == 3 % N ? 0x33 : 0, sizeof(b));
	if (rc == 0)
		rc = trd_coll_broadcast_sync(co[r], 3 % N, b, sizeof(b));
	if (rc == 0 && (b[0] != 0x3333333333333333ull || b[7] != b[0]))
		rc = -EIO;
	memset(g, 0, sizeof(g));
	if (rc == 0)
		rc = trd_coll_allgather_sync(co[r], &r, g, sizeof(uint8_t));
	for (unsigned int q = 0; rc == 0 && q < N; q++)
		if (g[q] != q)
			rc = -EIO;
	if (rc == 0)
		rc = trd_coll_barrier_sync(co[r]);
	if (rc != 0) {
		fprintf(stderr, "sync: rank %u: %d\n", r, rc);
		__atomic_store_n(&sync_failed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_sync(void)
{
	pthread_t th[MAXN];

	for (unsigned int r = 0; r < N; r++)
		T_EQ(pthread_create(&th[r], NULL, sync_thread, (void *)(uintptr_t)r), 0);
	for (unsigned int r = 0; r < N; r++)
		T_EQ(pthread_join(th[r], NULL), 0);
	T_EQ(sync_failed, 0);
	printf("sync: %u threads, blocking barrier, allreduce, broadcast, allgather\n", N);
}

/* ---- errors ---- */

static void
test_errors(void)
{
	struct trd_context_conf cc = {.node = trd_net_node(net, 0),
				      .inj_fifo = 1,
				      .cpl_fifo = 2,
				      .recv_fifo = TRD_NO_FIFO};
	struct trd_coll_conf bad = {.seg_size = 1000};
	struct trd_context *quiet;
	uint64_t h;
	double d;

	T_EQ(trd_coll_reduce(co[0], N, &d, &d, 1, TRD_COLL_DOUBLE, TRD_COLL_SUM, NULL, NULL, NULL),
	     -EINVAL);
	T_EQ(trd_coll_reduce(co[0], 0, &d, &d, 1, TRD_COLL_TYPE_MAX, TRD_COLL_SUM, NULL, NULL,
			     NULL),
	     -EINVAL);
	T_EQ(trd_coll_allreduce(co[0], &d, &d, 1, TRD_COLL_FLOAT, TRD_COLL_BXOR, NULL, NULL, NULL),
	     -EINVAL);
	T_EQ(trd_coll_allreduce(co[0], NULL, &d, 1, TRD_COLL_DOUBLE, TRD_COLL_SUM, NULL, NULL,
				NULL),
	     -EINVAL);
	T_EQ(trd_coll_broadcast(co[0], 0, NULL, 8, NULL, NULL, NULL), -EINVAL);
	T_EQ(trd_coll_gather(co[0], 0, &d, NULL, 8, NULL, NULL, NULL), -EINVAL);
	T_EQ(trd_coll_scatter(co[1], 0, NULL, NULL, 8, NULL, NULL, NULL), -EINVAL);
	T_EQ(trd_coll_test(co[0], 0), -EINVAL);
	T_EQ(trd_coll_test(co[0], 1ull << 40), -EINVAL);
	T_ASSERT(trd_coll_create(cl[0], cx[0], &bad) == NULL && rte_errno == EINVAL, "bad conf");
	quiet = trd_context_create(cl[0], &cc);
	T_ASSERT(quiet != NULL, "context");
	T_ASSERT(trd_coll_create(cl[0], quiet, NULL) == NULL && rte_errno == EINVAL,
		 "a context without a receive FIFO");
	T_ASSERT(trd_coll_create(cl[1], cx[0], NULL) == NULL && rte_errno == EINVAL,
		 "another client's context");
	/* a full queue, and a busy object: rank 0 alone cannot complete a barrier */
	for (unsigned int i = 0; i < 16; i++)
		T_EQ(trd_coll_barrier(co[0], NULL, NULL, &h), 0);
	T_EQ(trd_coll_barrier(co[0], NULL, NULL, NULL), -ENOBUFS);
	T_EQ(trd_coll_test(co[0], h), -EINPROGRESS);
	T_EQ(trd_coll_destroy(co[0]), -EBUSY);
	T_EQ(trd_coll_wait(co[0], h, 1000), -ETIMEDOUT);
	memset(done, 0, sizeof(done));
	for (unsigned int r = 1; r < N; r++)
		for (unsigned int i = 0; i < 16; i++)
			T_EQ(trd_coll_barrier(co[r], i == 15 ? cb_done : NULL, &done[r], NULL), 0);
	done[0] = 0;
	{
		uint64_t deadline = trd_time_us() + TIMEOUT_US;

		while (trd_coll_test(co[0], h) == -EINPROGRESS) {
			for (unsigned int r = 0; r < N; r++)
				trd_advance(cx[r], 0);
			T_ASSERT(trd_time_us() < deadline, "16 barriers timed out");
		}
		done[0] = 1;
		drive("16 barriers");
	}
	T_EQ(trd_coll_test(co[0], h), 0);
	T_EQ(trd_context_destroy(quiet), 0);
	printf("errors: argument checks, full queue, busy object\n");
}

/* ---- set-up ---- */

int
main(int argc, char **argv)
{
	struct trd_node_conf ndc = {0};
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = &ndc};
	unsigned int worker, roots[MAXN], n_roots = 0, dims = 2, dx = 0, dy = 0, dz = 0;
	uint64_t t0, stalls = 0, retries = 0, dups = 0;

	if (argc > 1 && strcmp(argv[1], "27") == 0)
		dims = 3;
	/* any other torus of at most 27 nodes, e.g. "5x1x1" (by hand) */
	if (argc > 1 && sscanf(argv[1], "%ux%ux%u", &dx, &dy, &dz) != 3)
		dx = dy = dz = 0;
	if (argc > 1 && strcmp(argv[1], "8tiny") == 0) {
		/* every queue small: collectives meet full work queues (posts refused, retried
		 * on their next event) and full reception FIFOs (sends refused by the target,
		 * sent again) */
		tiny = true;
		ndc.rec_fifo_size = 8;
	}
	{
		static const char *const dbg[] = {"--log-level", "toroid.coll:debug", NULL};

		test_eal_init(argv[0], getenv("COLL_DEBUG") ? dbg : NULL);
	}
	worker = test_worker_lcore();
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "SKIP: needs two lcores\n");
		return TEST_SKIP;
	}
	if (dx != 0)
		T_EQ(trd_torus_init(&nc.torus, dx, dy, dz), 0);
	else
		trd_torus_init(&nc.torus, dims, dims, dims);
	N = trd_torus_size(&nc.torus);
	T_ASSERT(N >= 1 && N <= MAXN, "at most %u nodes", MAXN);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "trd_net_create: %s", rte_strerror(rte_errno));
	rlen = RTE_MAX((size_t)BIG, (size_t)N * MID);
	refbuf = malloc(BIG);
	T_ASSERT(refbuf != NULL, "malloc");
	for (unsigned int r = 0; r < N; r++) {
		struct trd_context_conf cc = {
			.node = trd_net_node(net, r),
			.inj_fifo = 0,
			.cpl_fifo = 0,
			.recv_fifo = 1,
			.recv = trd_coll_recv,
			.wq_size = tiny ? 8 : 0,
		};

		sbuf[r] = malloc(rlen + 2 * GUARD);
		rbuf[r] = malloc(rlen + 2 * GUARD);
		T_ASSERT(sbuf[r] != NULL && rbuf[r] != NULL, "malloc");
		cl[r] = trd_client_create("coll", NULL);
		T_ASSERT(cl[r] != NULL, "client");
		cx[r] = trd_context_create(cl[r], &cc);
		T_ASSERT(cx[r] != NULL, "context: %s", rte_strerror(rte_errno));
		co[r] = trd_coll_create(cl[r], cx[r], &(struct trd_coll_conf){.yield = true});
		T_ASSERT(co[r] != NULL, "trd_coll_create: %s", rte_strerror(rte_errno));
		T_EQ(trd_coll_rank(co[r]), r);
		T_EQ(trd_coll_size(co[r]), N);
	}
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	t0 = trd_time_us();

	if (tiny) {
		roots[n_roots++] = 0;
		roots[n_roots++] = 5;
	} else if (N <= 8) {
		for (unsigned int r = 0; r < N; r++)
			roots[n_roots++] = r;
	} else {
		/* a sample: the first and last ranks, a leaf and an inner rank of the rank-0
		 * tree, the centre of the torus */
		const unsigned int sample[] = {0, N - 1, N / 2, 5};

		for (unsigned int i = 0; i < RTE_DIM(sample); i++)
			roots[n_roots++] = sample[i];
	}
	if (!tiny && N >= 2) {
		test_errors();
		test_barrier(roots, n_roots);
	}
	test_blocks(roots, n_roots);
	test_reduce(roots, n_roots);
	test_queue();
	if (N <= 8 && !tiny)
		test_sync();

	for (unsigned int r = 0; r < N; r++) {
		uint64_t st[TRD_COLL_STAT_MAX];
		struct trd_node_stats ns;

		T_EQ(trd_coll_stats_get(co[r], st), 0);
		T_ASSERT(st[TRD_COLL_STAT_PROTO_ERRORS] == 0,
			 "rank %u: %" PRIu64 " protocol errors", r, st[TRD_COLL_STAT_PROTO_ERRORS]);
		T_EQ(st[TRD_COLL_STAT_STARTED], st[TRD_COLL_STAT_COMPLETED]);
		T_EQ(st[TRD_COLL_STAT_ERRORS], 0);
		T_EQ(trd_node_stats_get(trd_net_node(net, r), &ns), 0);
		for (unsigned int k = 1; k < TRD_DROP_MAX; k++)
			if (ns.drop[k] != 0 && k != TRD_DROP_DUPLICATE)
				printf("rank %u: drop %s %" PRIu64 "\n", r, trd_drop_name(k),
				       ns.drop[k]);
		if (tiny) {
			/* full FIFOs are this run's point: refusals (sent again), not losses. A
			 * reliable engine also answers a message it refused for a full FIFO with a
			 * DONE (-ENOBUFS) and then takes its retransmission, whose DONE finds the
			 * operation complete (unknown_completion); the collectives ignore the
			 * second copy */
			T_ASSERT(ns.stat[TRD_STAT_DROPS] == ns.drop[TRD_DROP_DUPLICATE] +
								    ns.drop[TRD_DROP_FIFO_FULL] +
								    ns.drop[TRD_DROP_REPLY_FULL] +
								    ns.drop[TRD_DROP_UNKNOWN_CPL],
				 "rank %u: drops", r);
			stalls += st[TRD_COLL_STAT_STALLS];
			retries += st[TRD_COLL_STAT_RETRIES];
			dups += st[TRD_COLL_STAT_DUPLICATES];
		} else {
			T_ASSERT(ns.stat[TRD_STAT_DROPS] == ns.drop[TRD_DROP_DUPLICATE],
				 "rank %u: drops", r);
		}
		if (r == 0) {
			printf("rank 0 statistics:");
			for (unsigned int s = 0; s < TRD_COLL_STAT_MAX; s++)
				printf(" %s %" PRIu64, trd_coll_stat_name(s), st[s]);
			printf("\n");
		}
	}
	if (tiny) {
		printf("tiny queues: %" PRIu64 " posts refused by a full work queue, %" PRIu64
		       " sends refused by a full FIFO, all retried (%" PRIu64
		       " second copies ignored)\n",
		       stalls, retries, dups);
		T_ASSERT(stalls > 0, "the work queues never filled up");
	}
	for (unsigned int r = 0; r < N; r++) {
		T_EQ(trd_coll_destroy(co[r]), 0);
		T_EQ(trd_client_destroy(cl[r]), 0);
		free(sbuf[r]);
		free(rbuf[r]);
	}
	free(refbuf);
	printf("coll(%u nodes): %" PRIu64 " collectives in %.2f s\n", N, n_colls,
	       (double)(trd_time_us() - t0) / 1e6);
	trd_net_free(net);
	rte_eal_cleanup();
	return 0;
}
