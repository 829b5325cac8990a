/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf: the messaging-layer tests (contexts, work queues, advance: fences, atomics) and
 * the allreduces, software and engine. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <toroid/coll.h>
#include <toroid/comb.h>
#include <toroid/msg.h>
#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#include "../common/app_common.h"
#include "../common/latency.h"
#include "inproc.h"

/* ---- messaging layer (contexts, work queue, advance) ---- */

static struct trd_context *perf_mctx;
static struct trd_ep perf_mep; /* node b */

/* A client with one context on a (its own injection FIFO 1, outcomes in FIFO 3). */
static int
perf_msg_ctx(void)
{
	struct trd_context_conf cc = {
		.node = px.a, .inj_fifo = 1, .cpl_fifo = 3, .recv_fifo = TRD_NO_FIFO};
	struct trd_client *cl;

	if (perf_mctx != NULL)
		return 0;
	cl = trd_client_create("toroid-perf", NULL);
	if (cl == NULL || (perf_mctx = trd_context_create(cl, &cc)) == NULL)
		return -rte_errno;
	return trd_endpoint(cl, (uint32_t)trd_torus_rank(trd_node_torus(px.a), px.cb), 0,
			    &perf_mep);
}

static void
perf_msg_done(struct trd_context *ctx, void *cookie, int status)
{
	RTE_SET_USED(ctx);
	*(int *)cookie = status == 0 ? 1 : status;
}

/* Advance until the operation whose callback writes @p flag completes. */
static int
perf_msg_wait(volatile int *flag)
{
	uint64_t dl = deadline_in(PERF_TIMEOUT_US);

	while (*flag == 0)
		if (trd_advance(perf_mctx, 0) < 0 || expired(dl))
			return -ETIMEDOUT;
	return *flag == 1 ? 0 : *flag;
}

/* A put of r->size bytes a->b, then a fence on b: until the fence callback ran (the put is
 * complete in b's memory: its DONE came back). */
int
fence_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	int rc = perf_msg_ctx();

	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc();
		volatile int done = 0;

		rc = trd_put(perf_mctx, px.abuf, &perf_mep, px.boff, trd_mr_key(px.bmr), r->size,
			     NULL, NULL);
		if (rc == 0)
			rc = trd_fence(perf_mctx, &perf_mep, perf_msg_done, (void *)&done);
		if (rc == 0)
			rc = perf_msg_wait(&done);
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	return rc;
}

/* A fetch-and-add on a word of b through the context, until its callback (old value back). */
int
atomic_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	int rc = perf_msg_ctx();
	uint64_t old;

	RTE_SET_USED(r);
	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc();
		volatile int done = 0;

		rc = trd_atomic(perf_mctx, &perf_mep, trd_mr_key(px.bmr), px.boff, TRD_ATOMIC_FADD,
				1, 0, &old, perf_msg_done, (void *)&done);
		if (rc == 0)
			rc = perf_msg_wait(&done);
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	return rc;
}

/* ---- collectives: allreduce and barrier on 8 (2x2x2) and 64 (4x4x4) nodes, by the software
 * collectives (docs/collectives.md) and by the engines (comb.h), on the same net; and one
 * link's put, the measure of the engine allreduce's bandwidth ---- */

#define AR_MAX 64

struct perf_ar_net {
	struct trd_net *net;
	unsigned int n;
	struct trd_context *ctx[AR_MAX];
	struct trd_coll *coll[AR_MAX];
	uint16_t ctr[AR_MAX];
	struct trd_mr *mr[AR_MAX];
	double *src[AR_MAX], *dst[AR_MAX];
	size_t len;
};

static struct perf_ar_net perf_ar[2]; /* 2x2x2, 4x4x4 */

/* What coll_loop() times (enum perf_coll_variant); main.c runs them in turn. */
unsigned int perf_ar_variant;

static void
perf_ar_done(struct trd_coll *coll, void *cookie, int status)
{
	RTE_SET_USED(coll);
	*(int *)cookie = status == 0 ? 1 : status;
}

/* The nodes (cabled like the two of the other tests), a client, a context, a collective object
 * and a counter per rank; buffers of @p len bytes registered with each node. */
static int
perf_ar_setup(struct perf_ar_net *a, unsigned int dim, size_t len)
{
	if (a->net == NULL) {
		/* 64 nodes' 192 cables would need 384 ethdev ports: the engine's ring links */
		struct trd_net_conf nc = {.links = dim > 2 ? TRD_NET_RING : perf_opt.links};

		trd_torus_init(&nc.torus, dim, dim, dim);
		a->net = trd_net_create(&nc);
		if (a->net == NULL)
			return -rte_errno;
		a->n = trd_net_size(a->net);
		for (unsigned int q = 0; q < a->n; q++) {
			struct trd_node *nd = trd_net_node(a->net, q);
			struct trd_context_conf cc = {
				.node = nd, .recv_fifo = 1, .recv = trd_coll_recv};
			struct trd_client *cl = trd_client_create("toroid-perf-coll", NULL);

			if (cl == NULL || (a->ctx[q] = trd_context_create(cl, &cc)) == NULL ||
			    (a->coll[q] = trd_coll_create(cl, a->ctx[q], NULL)) == NULL)
				return -rte_errno;
			if (trd_counter_alloc(nd, &a->ctr[q]) != 0)
				return -ENOSPC;
		}
	}
	if (len > a->len) {
		for (unsigned int q = 0; q < a->n; q++) {
			struct trd_node *nd = trd_net_node(a->net, q);

			if (a->mr[q] != NULL)
				trd_mr_deregister(a->mr[q]);
			a->mr[q] = NULL;
			free(a->src[q]);
			/* one allocation, one region: the source, then the result */
			a->src[q] = aligned_alloc(64, RTE_ALIGN_CEIL(2 * len, 64));
			if (a->src[q] == NULL)
				return -ENOMEM;
			a->dst[q] = a->src[q] + len / sizeof(double);
			memset(a->dst[q], 0, len);
			for (size_t i = 0; i < len / sizeof(double); i++)
				a->src[q][i] = q + (double)i;
			a->mr[q] = trd_mr_register(nd, a->src[q], 2 * len, TRD_ACCESS_REMOTE_WRITE);
			if (a->mr[q] == NULL)
				return -rte_errno;
		}
		a->len = len;
	}
	return 0;
}

/* Advance every context round-robin until every rank's callback ran. */
static int
coll_soft_wait(struct perf_ar_net *a, int *done, int rc)
{
	uint64_t dl = deadline_in(PERF_TIMEOUT_US);
	unsigned int k = 0;

	while (rc == 0 && k < a->n) {
		k = 0;
		for (unsigned int q = 0; q < a->n; q++) {
			if (trd_advance(a->ctx[q], 0) < 0 || done[q] < 0)
				rc = -EIO;
			k += done[q] != 0;
		}
		if (expired(dl))
			rc = -ETIMEDOUT;
	}
	return rc;
}

/* One software allreduce (@p count doubles) or barrier (@p barrier) on every rank, the main
 * lcore advancing every context round-robin until every rank's callback ran. */
static int
coll_soft(struct perf_ar_net *a, size_t count, bool barrier)
{
	int rc = 0, done[AR_MAX];

	memset(done, 0, sizeof(done));
	for (unsigned int q = 0; q < a->n && rc == 0; q++)
		rc = barrier ? trd_coll_barrier(a->coll[q], perf_ar_done, &done[q], NULL)
			     : trd_coll_allreduce(a->coll[q], a->src[q], a->dst[q], count,
						  TRD_COLL_DOUBLE, TRD_COLL_SUM, perf_ar_done,
						  &done[q], NULL);
	return coll_soft_wait(a, done, rc);
}

/* One engine allreduce or barrier: every node posts, then the main lcore only reads the
 * counters. */
static int
coll_engine(struct perf_ar_net *a, size_t count, bool barrier)
{
	uint64_t dl = deadline_in(PERF_TIMEOUT_US);
	unsigned int k = 0;
	int rc = 0;

	for (unsigned int q = 0; q < a->n && rc == 0; q++) {
		struct trd_node *nd = trd_net_node(a->net, q);
		struct trd_comb_req rq = {.kind = TRD_COMB_ALLREDUCE,
					  .op = TRD_COMB_SUM,
					  .dtype = TRD_COMB_DOUBLE,
					  .dims = TRD_COMB_TORUS,
					  .counter = a->ctr[q],
					  .count = (uint32_t)count,
					  .src = a->src[q],
					  .dst = a->dst[q]};

		if (barrier)
			rq = (struct trd_comb_req){.kind = TRD_COMB_BARRIER,
						   .dims = TRD_COMB_TORUS,
						   .counter = a->ctr[q]};
		rc = trd_counter_set(nd, a->ctr[q], 1);
		if (rc == 0)
			rc = trd_comb_post(nd, &rq);
	}
	while (rc == 0 && k < a->n) {
		k = 0;
		for (unsigned int q = 0; q < a->n && rc == 0; q++) {
			int64_t v = 1;

			trd_counter_read(trd_net_node(a->net, q), a->ctr[q], &v);
			if (v < 0)
				rc = -EIO;
			k += v == 0;
		}
		if (expired(dl))
			rc = -ETIMEDOUT;
	}
	return rc;
}

/* One put of @p len bytes over one link of the net (rank 0 to its x neighbour, rank 1), from
 * the post until the target's reception counter says it all arrived: the bandwidth an engine
 * allreduce's pipeline is measured against, timed the same way on the same net. */
static int
coll_link_put(struct perf_ar_net *a, size_t len)
{
	struct trd_node *from = trd_net_node(a->net, 0), *to = trd_net_node(a->net, 1);
	struct trd_inj_fifo *f = trd_inj_fifo(from, 1);
	struct trd_desc d;
	int rc;

	if (f == NULL)
		return -ENOTSUP;
	trd_desc_put(&d, trd_node_coord(to), a->src[0], (uint32_t)len, trd_mr_key(a->mr[1]), len, 0,
		     a->ctr[1]);
	rc = trd_counter_set(to, a->ctr[1], (int64_t)len);
	if (rc == 0)
		rc = trd_inject(f, &d);
	return rc == 0 ? trd_counter_wait(to, a->ctr[1], PERF_TIMEOUT_US) : rc;
}

/* What perf_ar_variant names: a collective (allreduce, sum of r->size / 8 doubles; or a
 * barrier), by the software collectives or the engines, on 2x2x2 or 4x4x4; or a put over one
 * link of the 2x2x2 net. One engine lcore serves the nodes. */
static int
coll_loop(struct perf_result *r, uint64_t n, uint64_t *s, bool barrier)
{
	unsigned int v = perf_ar_variant;
	bool link = v == PERF_COLL_LINK, eng = v == PERF_COLL_ENG || v == PERF_COLL_ENG64;
	struct perf_ar_net *a = &perf_ar[v == PERF_COLL_SOFT64 || v == PERF_COLL_ENG64];
	size_t count = barrier ? 0 : RTE_MAX(r->size / sizeof(double), (size_t)1);
	bool launched = false;
	int rc;

	if (eng && count * sizeof(double) > TRD_COMB_MAX_LEN)
		return -EMSGSIZE;
	rc = perf_ar_setup(a, a == &perf_ar[1] ? 4 : 2, RTE_MAX(count, (size_t)1) * sizeof(double));
	engine_stop();
	if (rc == 0 && px.worker < RTE_MAX_LCORE && !perf_opt.inline_poll)
		launched = (rc = trd_net_launch(a->net, &px.worker, 1)) == 0;
	else if (rc == 0 && (eng || link))
		rc = -ENOTSUP; /* the engines need their lcore: nothing else polls them */
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc();

		rc = link  ? coll_link_put(a, count * sizeof(double))
		     : eng ? coll_engine(a, count, barrier)
			   : coll_soft(a, count, barrier);
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	if (launched)
		trd_net_stop(a->net);
	return rc;
}

int
allreduce_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	return coll_loop(r, n, s, false);
}

int
barrier_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	return coll_loop(r, n, s, true);
}
