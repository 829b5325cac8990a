/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf: the messaging-layer tests (contexts, work queues, advance: fences, atomics) and
 * the allreduce. */
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

/* ---- collectives: an allreduce over the 8 nodes of a 2x2x2 torus (docs/collectives.md) ---- */

static struct {
	struct trd_net *net;
	struct trd_context *ctx[8];
	struct trd_coll *coll[8];
	double *src[8], *dst[8];
	size_t len;
} perf_ar;

static void
perf_ar_done(struct trd_coll *coll, void *cookie, int status)
{
	RTE_SET_USED(coll);
	*(int *)cookie = status == 0 ? 1 : status;
}

/* The 8 nodes (cabled like the two of the other tests), a client, a context and a collective
 * object per rank, buffers of @p len bytes. */
static int
perf_ar_setup(size_t len)
{
	if (perf_ar.net == NULL) {
		struct trd_net_conf nc = {.links = perf_opt.links};

		trd_torus_init(&nc.torus, 2, 2, 2);
		perf_ar.net = trd_net_create(&nc);
		if (perf_ar.net == NULL)
			return -rte_errno;
		for (unsigned int q = 0; q < 8; q++) {
			struct trd_context_conf cc = {.node = trd_net_node(perf_ar.net, q),
						      .recv_fifo = 1,
						      .recv = trd_coll_recv};
			struct trd_client *cl = trd_client_create("toroid-perf-coll", NULL);

			if (cl == NULL || (perf_ar.ctx[q] = trd_context_create(cl, &cc)) == NULL ||
			    (perf_ar.coll[q] = trd_coll_create(cl, perf_ar.ctx[q], NULL)) == NULL)
				return -rte_errno;
		}
	}
	if (len > perf_ar.len) {
		for (unsigned int q = 0; q < 8; q++) {
			free(perf_ar.src[q]);
			free(perf_ar.dst[q]);
			perf_ar.src[q] = calloc(1, len);
			perf_ar.dst[q] = calloc(1, len);
			if (perf_ar.src[q] == NULL || perf_ar.dst[q] == NULL)
				return -ENOMEM;
			for (size_t i = 0; i < len / sizeof(double); i++)
				perf_ar.src[q][i] = q + (double)i;
		}
		perf_ar.len = len;
	}
	return 0;
}

/* An allreduce (sum of r->size / 8 doubles) on every rank, the main lcore advancing all eight
 * contexts round-robin, until every rank's callback ran; the engine lcore serves the nodes. */
int
allreduce_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	size_t count = r->size / sizeof(double);
	int rc = perf_ar_setup(RTE_MAX(count, (size_t)1) * sizeof(double)), done[8];
	bool launched = false;

	engine_stop();
	if (rc == 0 && px.worker < RTE_MAX_LCORE && !perf_opt.inline_poll)
		launched = (rc = trd_net_launch(perf_ar.net, &px.worker, 1)) == 0;
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc(), dl = deadline_in(PERF_TIMEOUT_US);
		unsigned int k = 0;

		memset(done, 0, sizeof(done));
		for (unsigned int q = 0; q < 8 && rc == 0; q++)
			rc = trd_coll_allreduce(perf_ar.coll[q], perf_ar.src[q], perf_ar.dst[q],
						count, TRD_COLL_DOUBLE, TRD_COLL_SUM, perf_ar_done,
						&done[q], NULL);
		while (rc == 0 && k < 8) {
			k = 0;
			for (unsigned int q = 0; q < 8; q++) {
				if (trd_advance(perf_ar.ctx[q], 0) < 0 || done[q] < 0)
					rc = -EIO;
				k += done[q] != 0;
			}
			if (expired(dl))
				rc = -ETIMEDOUT;
		}
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	if (launched)
		trd_net_stop(perf_ar.net);
	return rc;
}
