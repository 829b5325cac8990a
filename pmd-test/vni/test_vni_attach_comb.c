/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engines' collectives on node handles (docs/vni.md "One API", docs/collectives.md
 * "Collectives in the engine"): processes 1:0, 1:1, 1:2 attached to the three nodes of a 3x1x1
 * toroid-node (test_vni_attach.sh) post with trd_comb_post() as in-process programs do, their
 * buffers in their regions, each end told by a counter of their own:
 *
 *   - allreduce (sum of 3000 I64: three pieces), reduce (max of doubles, the root's dst only),
 *     broadcast (any bytes, from node 2), barrier: every element checked;
 *   - a second collective of a group before the first ended: -EBUSY, and accepted once the
 *     counter of the first reached zero (no spurious -EBUSY after the wait); another group
 *     (dims 1) at the same time: accepted;
 *   - refused at once: a buffer outside the region (malloc), misaligned, a counter not the
 *     process's, a root outside the torus, a barrier with elements, a count over the limit;
 *     nothing posted (the next collectives still match across the nodes).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toroid/comb.h>
#include <toroid/toroid.h>

#include "attach_util.h"

#define N       3
#define COUNT   3000
#define REGION  (1 << 20)
#define WAIT_US 10000000

static struct trd_node *h[N];
static uint16_t ctr[N];
static uint8_t *mem[N]; /* 2 x COUNT x 8 bytes of each region */

static int
post(unsigned int r, struct trd_comb_req rq)
{
	rq.counter = ctr[r];
	if (trd_counter_set(h[r], ctr[r], 1) != 0)
		return -EIO;
	return trd_comb_post(h[r], &rq);
}

static void
wait_all(const char *what)
{
	for (unsigned int r = 0; r < N; r++) {
		int rc = trd_counter_wait(h[r], ctr[r], WAIT_US);

		CHECK(rc == 0, "%s: node %u's counter: %d", what, r, rc);
	}
}

static void
t_kinds(void)
{
	int64_t *s64[N], *d64[N];
	double *sd[N], *dd[N];
	unsigned int bad = 0;

	for (unsigned int r = 0; r < N; r++) {
		s64[r] = (int64_t *)(void *)mem[r];
		d64[r] = s64[r] + COUNT;
		for (unsigned int i = 0; i < COUNT; i++)
			s64[r][i] = (int64_t)(r + 1) * 1000003 - (int64_t)i * 7;
	}
	/* allreduce: three pieces of 179 elements and one shorter, combined by the engines */
	for (unsigned int r = 0; r < N; r++)
		CHECK(post(r, (struct trd_comb_req){.kind = TRD_COMB_ALLREDUCE,
						    .op = TRD_COMB_SUM,
						    .dtype = TRD_COMB_I64,
						    .count = COUNT,
						    .src = s64[r],
						    .dst = d64[r]}) == 0,
		      "allreduce post at %u", r);
	wait_all("allreduce");
	for (unsigned int r = 0; r < N; r++)
		for (unsigned int i = 0; i < COUNT; i++)
			bad += d64[r][i] != 6 * 1000003 - 3 * (int64_t)i * 7;
	CHECK(bad == 0, "allreduce: %u wrong elements", bad);

	/* reduce, max of doubles, rooted at node 1: only its dst is written */
	for (unsigned int r = 0; r < N; r++) {
		sd[r] = (double *)(void *)mem[r];
		dd[r] = sd[r] + COUNT;
		for (unsigned int i = 0; i < COUNT; i++) {
			sd[r][i] = (double)((i + r * 1000) % COUNT) / 4;
			dd[r][i] = -1;
		}
	}
	for (unsigned int r = 0; r < N; r++)
		CHECK(post(r, (struct trd_comb_req){.kind = TRD_COMB_REDUCE,
						    .op = TRD_COMB_MAX,
						    .dtype = TRD_COMB_DOUBLE,
						    .root = {1, 0, 0},
						    .count = COUNT,
						    .src = sd[r],
						    .dst = r == 1 ? dd[r] : NULL}) == 0,
		      "reduce post at %u", r);
	wait_all("reduce");
	bad = 0;
	for (unsigned int i = 0; i < COUNT; i++) {
		double want = 0;

		for (unsigned int r = 0; r < N; r++)
			if (sd[r][i] > want)
				want = sd[r][i];
		bad += dd[1][i] != want || dd[0][i] != -1 || dd[2][i] != -1;
	}
	CHECK(bad == 0, "reduce: %u wrong elements", bad);

	/* broadcast of any bytes from node 2 (the root reads, the others are written) */
	for (unsigned int r = 0; r < N; r++)
		for (unsigned int i = 0; i < COUNT * 8; i++)
			mem[r][i] = r == 2 ? (uint8_t)(i * 13 + 1) : 0;
	for (unsigned int r = 0; r < N; r++)
		CHECK(post(r, (struct trd_comb_req){.kind = TRD_COMB_BCAST,
						    .dtype = TRD_COMB_U64,
						    .root = {2, 0, 0},
						    .count = COUNT,
						    .src = r == 2 ? mem[r] : NULL,
						    .dst = r == 2 ? NULL : mem[r]}) == 0,
		      "bcast post at %u", r);
	wait_all("bcast");
	bad = 0;
	for (unsigned int r = 0; r < N; r++)
		for (unsigned int i = 0; i < COUNT * 8; i++)
			bad += mem[r][i] != (uint8_t)(i * 13 + 1);
	CHECK(bad == 0, "bcast: %u wrong bytes", bad);
	printf("kinds: allreduce of %u I64, reduce (max of doubles) at node 1, broadcast of %u "
	       "bytes from node 2: exact\n",
	       COUNT, COUNT * 8);
}

static void
t_busy(void)
{
	struct trd_comb_req bar = {.kind = TRD_COMB_BARRIER};
	struct trd_comb_req line = {.kind = TRD_COMB_BARRIER, .dims = 1};
	uint16_t c2;
	int rc;

	/* node 0 alone: its barrier cannot end before the others post */
	CHECK(post(0, bar) == 0, "first barrier at 0");
	bar.counter = ctr[0];
	rc = trd_comb_post(h[0], &bar);
	CHECK(rc == -EBUSY, "second barrier of the group before the first ended: %d", rc);
	/* another group at the same time: its own slot */
	CHECK(trd_counter_alloc(h[0], &c2) == 0 && trd_counter_set(h[0], c2, 1) == 0, "counter");
	line.counter = c2;
	CHECK(trd_comb_post(h[0], &line) == 0, "a barrier of another group (dims 1)");
	for (unsigned int r = 1; r < N; r++)
		CHECK(post(r, bar) == 0, "barrier at %u", r);
	wait_all("barrier");
	for (unsigned int r = 1; r < N; r++)
		CHECK(post(r, line) == 0, "line barrier at %u", r);
	wait_all("line barrier");
	CHECK(trd_counter_wait(h[0], c2, WAIT_US) == 0, "node 0's line barrier");
	/* ended and counted: the next one goes at once, many times over */
	for (int k = 0; k < 50; k++) {
		for (unsigned int r = 0; r < N; r++) {
			rc = post(r, (struct trd_comb_req){.kind = TRD_COMB_BARRIER});
			CHECK(rc == 0, "barrier %d at %u after the wait: %d", k, r, rc);
		}
		wait_all("barrier in a loop");
		if (failures != 0)
			break;
	}
	trd_counter_free(h[0], c2);
	/* no completion comes for a handle's collective: none counts as pending */
	for (unsigned int r = 0; r < N; r++)
		CHECK(trd_vni_pending(trd_node_vni(h[r])) == 0, "node %u: %u pending", r,
		      trd_vni_pending(trd_node_vni(h[r])));
	printf("busy: a second barrier of the group -EBUSY, another group's accepted, 50 "
	       "barriers each posted right after the last wait, none left pending\n");
}

static void
t_refused(void)
{
	int64_t *heap = malloc(COUNT * 8);
	int64_t *in = (int64_t *)(void *)mem[0];
	struct trd_comb_req rq = {.kind = TRD_COMB_ALLREDUCE,
				  .op = TRD_COMB_SUM,
				  .dtype = TRD_COMB_I64,
				  .count = 16,
				  .counter = ctr[0]};
	struct {
		const char *what;
		const void *src;
		void *dst;
		uint16_t counter;
		uint8_t rootx, kind;
		uint32_t count;
		int want;
	} c[] = {
		{"src outside the region", heap, in + 64, 0, 0, 0, 0, -EINVAL},
		{"dst outside the region", in, heap, 0, 0, 0, 0, -EINVAL},
		{"misaligned src", (uint8_t *)in + 4, in + 64, 0, 0, 0, 0, -EINVAL},
		{"past the region's end", in, mem[0] + REGION - 64, 0, 0, 0, 0, -EINVAL},
		{"a counter not the process's", in, in + 64, 1, 0, 0, 0, -EINVAL},
		{"a root outside the torus", in, in + 64, 0, 3, 0, 0, -EINVAL},
		{"a barrier with elements", NULL, NULL, 0, 0, TRD_COMB_BARRIER, 0, -EINVAL},
		{"a count over the limit", in, in + 64, 0, 0, 0, TRD_COMB_MAX_LEN / 8 + 1,
		 -EMSGSIZE},
	};

	CHECK(heap != NULL, "malloc");
	for (unsigned int i = 0; heap != NULL && i < sizeof(c) / sizeof(c[0]); i++) {
		struct trd_comb_req q = rq;
		int rc;

		q.src = c[i].src;
		q.dst = c[i].dst;
		if (c[i].counter != 0)
			q.counter = c[i].counter;
		q.root.x = c[i].rootx;
		if (c[i].kind != 0)
			q.kind = c[i].kind;
		if (c[i].count != 0)
			q.count = c[i].count;
		rc = trd_comb_post(h[0], &q);
		CHECK(rc == c[i].want, "%s: %d, want %d", c[i].what, rc, c[i].want);
	}
	free(heap);
	/* nothing was posted: the nodes' next collective still matches */
	for (unsigned int r = 0; r < N; r++)
		CHECK(post(r, (struct trd_comb_req){.kind = TRD_COMB_BARRIER}) == 0,
		      "barrier at %u after the refusals", r);
	wait_all("barrier after the refusals");
	printf("refused: %zu bad posts, each at once; the next barrier matched\n",
	       sizeof(c) / sizeof(c[0]));
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET_TEMPLATE\n", argv[0]);
		return 2;
	}
	for (unsigned int r = 0; r < N; r++) {
		if ((h[r] = attach_node(argv[1], r, 1, 64, REGION)) == NULL)
			return 1;
		mem[r] = trd_mem_alloc(h[r], 2 * COUNT * 8);
		if (mem[r] == NULL || trd_counter_alloc(h[r], &ctr[r]) != 0)
			return 1;
	}
	t_kinds();
	t_busy();
	t_refused();
	return attach_finish("test_vni_attach_comb", h, N);
}
