/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Clients, contexts and endpoints. A client maps tasks to torus coordinates; a context owns a
 * work queue and the engine resources its operations use (an outcome FIFO, counters for its
 * RDMA reads and for the local events of its puts and sends) and, if it dispatches, a table of
 * handlers by dispatch id; an endpoint is a (task, context offset) value. Their memory is the
 * C library's: a process attached to toroid-node (no EAL) runs them on its node handle.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "msg_pvt.h"

RTE_LOG_REGISTER_SUFFIX(trd_msg_logtype, msg, INFO);

static const char *const ctx_stat_names[] = {
#define TRD_CTX_STAT_NAME_(e, n) n,
	TRD_CONTEXT_STATS(TRD_CTX_STAT_NAME_)
#undef TRD_CTX_STAT_NAME_
};
_Static_assert(RTE_DIM(ctx_stat_names) == TRD_CTX_STAT_MAX, "a name per context statistic");

/* ---- clients ---- */

struct trd_client *
trd_client_create(const char *name, const struct trd_topo *topo)
{
	struct trd_client *c;

	if (name == NULL || strlen(name) >= sizeof(c->name) ||
	    (topo != NULL && (topo->n_nodes == 0 || topo->nodes == NULL))) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	rte_spinlock_init(&c->lock);
	if (topo != NULL) {
		c->topo = topo;
		c->torus = topo->torus;
		c->n_tasks = topo->n_nodes;
	}
	return c;
}

int
trd_client_destroy(struct trd_client *c)
{
	uint32_t n;

	if (c == NULL)
		return 0;
	n = __atomic_load_n(&c->n_ctx, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (c->ctx[i] != NULL && trd_context_pending(c->ctx[i]) != 0)
			return -EBUSY;
	for (uint32_t i = 0; i < n; i++)
		if (c->ctx[i] != NULL)
			trd_context_destroy(c->ctx[i]);
	free(c);
	return 0;
}

const char *
trd_client_name(const struct trd_client *c)
{
	return c == NULL ? NULL : c->name;
}

unsigned int
trd_client_n_contexts(const struct trd_client *c)
{
	return c == NULL ? 0 : __atomic_load_n(&c->n_ctx, __ATOMIC_ACQUIRE);
}

unsigned int
trd_client_n_tasks(const struct trd_client *c)
{
	return c == NULL ? 0 : __atomic_load_n(&c->n_tasks, __ATOMIC_ACQUIRE);
}

struct trd_context *
trd_client_context(const struct trd_client *c, unsigned int offset)
{
	if (c == NULL || offset >= __atomic_load_n(&c->n_ctx, __ATOMIC_ACQUIRE))
		return NULL;
	return c->ctx[offset];
}

/* ---- contexts ---- */

static void
ctx_free(struct trd_context *x)
{
	if (x == NULL)
		return;
	for (uint32_t i = 0; i < x->n_ctrs_owned; i++)
		trd_counter_free(x->node, x->ctrs_owned[i]);
	free(x->ops);
	free(x->free_ids);
	free(x->q);
	free(x->outstanding);
	free(x->reads);
	free(x->lwait);
	free(x->dispatch);
	free(x->ctrs);
	free(x->ctrs_owned);
	free(x);
}

static bool
torus_eq(const struct trd_torus *a, const struct trd_torus *b)
{
	return memcmp(a->dim, b->dim, sizeof(a->dim)) == 0;
}

struct trd_context *
trd_context_create(struct trd_client *c, const struct trd_context_conf *conf)
{
	const struct trd_torus *t;
	struct trd_context *x;
	uint32_t size, qsize, n;

	if (c == NULL || conf == NULL || conf->node == NULL ||
	    trd_inj_fifo(conf->node, conf->inj_fifo) == NULL || conf->inj_fifo == TRD_ENGINE_FIFO ||
	    trd_rec_fifo(conf->node, conf->cpl_fifo) == NULL ||
	    (conf->recv_fifo != TRD_NO_FIFO &&
	     (conf->recv_fifo < 0 || (unsigned int)conf->recv_fifo == conf->cpl_fifo ||
	      trd_rec_fifo(conf->node, (unsigned int)conf->recv_fifo) == NULL)) ||
	    conf->wq_size > 65536 ||
	    (conf->dispatch && (conf->recv_fifo == TRD_NO_FIFO || conf->recv != NULL))) {
		rte_errno = EINVAL;
		return NULL;
	}
	t = trd_node_torus(conf->node);
	if (c->topo != NULL && !torus_eq(t, &c->torus)) {
		MSG_LOG(ERR, "client %s: node %s is not in the topology's torus", c->name,
			trd_node_name(conf->node));
		rte_errno = EINVAL;
		return NULL;
	}
	size = conf->wq_size != 0 ? conf->wq_size : TRD_CONTEXT_WQ_DEFAULT;
	qsize = rte_align32pow2(size);
	n = trd_torus_size(t);

	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	x->client = c;
	x->node = conf->node;
	x->inj = trd_inj_fifo(conf->node, conf->inj_fifo);
	x->cpl_fifo = (uint8_t)conf->cpl_fifo;
	x->cpl_rf = trd_rec_fifo(conf->node, conf->cpl_fifo);
	if (conf->recv_fifo != TRD_NO_FIFO)
		x->recv_rf = trd_rec_fifo(conf->node, (unsigned int)conf->recv_fifo);
	x->recv = conf->recv;
	x->recv_arg = conf->recv_arg;
	x->torus = *t;
	x->n_nodes = n;
	x->size = size;
	x->q_mask = qsize - 1;
	x->ops = calloc(1, sizeof(*x->ops) * size);
	x->free_ids = malloc(sizeof(uint32_t) * size);
	x->q = malloc(sizeof(uint32_t) * qsize);
	x->outstanding = calloc(1, sizeof(uint32_t) * n);
	x->reads = malloc(sizeof(uint32_t) * size);
	x->lwait = malloc(sizeof(uint32_t) * size);
	if (conf->dispatch)
		x->dispatch = calloc(1, sizeof(*x->dispatch) * TRD_DISPATCH_MAX);
	x->ctrs = malloc(sizeof(uint16_t) * size);
	x->ctrs_owned = malloc(sizeof(uint16_t) * size);
	if (x->ops == NULL || x->free_ids == NULL || x->q == NULL || x->outstanding == NULL ||
	    x->reads == NULL || x->lwait == NULL || (conf->dispatch && x->dispatch == NULL) ||
	    x->ctrs == NULL || x->ctrs_owned == NULL) {
		ctx_free(x);
		rte_errno = ENOMEM;
		return NULL;
	}
	/* hand out low entries first */
	for (uint32_t i = 0; i < size; i++)
		x->free_ids[i] = size - 1 - i;
	x->n_free = size;

	rte_spinlock_lock(&c->lock);
	if (c->n_ctx == TRD_CLIENT_MAX_CONTEXTS ||
	    (c->n_tasks != 0 && c->topo == NULL && !torus_eq(t, &c->torus))) {
		int err = c->n_ctx == TRD_CLIENT_MAX_CONTEXTS ? ENOSPC : EINVAL;

		rte_spinlock_unlock(&c->lock);
		if (err == EINVAL)
			MSG_LOG(ERR, "client %s: node %s is in another torus", c->name,
				trd_node_name(conf->node));
		ctx_free(x);
		rte_errno = err;
		return NULL;
	}
	if (c->n_tasks == 0) {
		/* the first context fixes the task mapping: the torus ranks */
		c->torus = *t;
		__atomic_store_n(&c->n_tasks, n, __ATOMIC_RELEASE);
	}
	x->offset = c->n_ctx;
	c->ctx[x->offset] = x;
	/* the id senders name: the index in this process, the FIFO's node id on a node handle
	 * (alike on every task that asked for the same ids, trd_vni_conf.mu_rfifo_first) */
	c->recv_fifo[x->offset] =
		(int16_t)(conf->recv_fifo == TRD_NO_FIFO ? TRD_NO_FIFO
							 : trd_rec_fifo_id(x->recv_rf));
	c->dispatch[x->offset] = conf->dispatch;
	__atomic_store_n(&c->n_ctx, c->n_ctx + 1, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&c->lock);
	return x;
}

int
trd_context_destroy(struct trd_context *x)
{
	struct trd_client *c;

	if (x == NULL)
		return -EINVAL;
	if (x->in_advance || trd_context_pending(x) != 0)
		return -EBUSY;
	c = x->client;
	rte_spinlock_lock(&c->lock);
	c->ctx[x->offset] = NULL;
	rte_spinlock_unlock(&c->lock);
	ctx_free(x);
	return 0;
}

unsigned int
trd_context_offset(const struct trd_context *x)
{
	return x == NULL ? 0 : x->offset;
}

struct trd_node *
trd_context_node(const struct trd_context *x)
{
	return x == NULL ? NULL : x->node;
}

unsigned int
trd_context_pending(const struct trd_context *x)
{
	return x == NULL ? 0 : x->size - x->n_free;
}

int
trd_context_stats_get(const struct trd_context *x, uint64_t *out)
{
	if (x == NULL || out == NULL)
		return -EINVAL;
	memcpy(out, x->stat, sizeof(x->stat));
	return 0;
}

const char *
trd_context_stat_name(unsigned int stat)
{
	return stat < TRD_CTX_STAT_MAX ? ctx_stat_names[stat] : NULL;
}

int
trd_dispatch_set(struct trd_context *x, unsigned int id, trd_recv_fn fn, void *arg)
{
	if (x == NULL || id >= TRD_DISPATCH_MAX)
		return -EINVAL;
	if (x->dispatch == NULL)
		return -ENOTSUP;
	x->dispatch[id].fn = fn;
	x->dispatch[id].arg = fn != NULL ? arg : NULL;
	return 0;
}

/* ---- endpoints ---- */

int
trd_endpoint(const struct trd_client *c, uint32_t task, unsigned int ctx_offset, struct trd_ep *ep)
{
	struct trd_coord coord;

	if (c == NULL || ep == NULL || task >= trd_client_n_tasks(c) ||
	    ctx_offset >= trd_client_n_contexts(c))
		return -EINVAL;
	if (c->topo != NULL)
		coord = c->topo->nodes[task].coord;
	else if (trd_torus_coord(&c->torus, task, &coord) != 0)
		return -EINVAL;
	ep->task = task;
	ep->coord = coord;
	ep->ctx = (uint8_t)ctx_offset;
	ep->recv_fifo = c->recv_fifo[ctx_offset];
	ep->dispatch = c->dispatch[ctx_offset];
	return 0;
}
