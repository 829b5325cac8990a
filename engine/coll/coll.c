/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective objects: creation (scratch region, tickets, the tree's preorder), the registry
 * that finds an object from a received message (context, object id), the entry points that
 * queue collectives, test/wait and the blocking wrappers.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_spinlock.h>

#include "coll_pvt.h"

RTE_LOG_REGISTER(trd_coll_logtype, toroid.coll, INFO);

static const char *const coll_stat_names[] = {
#define TRD_COLL_STAT_NAME_(e, n) n,
	TRD_COLL_STATS(TRD_COLL_STAT_NAME_)
#undef TRD_COLL_STAT_NAME_
};
_Static_assert(RTE_DIM(coll_stat_names) == TRD_COLL_STAT_MAX, "a name per statistic");

#define COLL_DEFAULT_SEG        65536u
#define COLL_DEFAULT_SLOTS      4u
#define COLL_MAX_SLOTS          32u
#define COLL_DEFAULT_EAGER      8192u
#define COLL_DEFAULT_OPS        16u
#define COLL_MAX_OPS            1024u
#define COLL_DEFAULT_TIMEOUT_US 30000000ull

/* ---- registry: context -> objects by id, and messages for objects not created yet ---- */

#define COLL_MAX_CONTEXTS 1024

struct coll_reg {
	struct trd_context *ctx;
	struct trd_coll *coll[COLL_MAX_IDS];
	unsigned int n_colls;
	struct coll_pend *orphans, *orphans_tail;
};

static struct coll_reg *regs[COLL_MAX_CONTEXTS];
static rte_spinlock_t reg_lock = RTE_SPINLOCK_INITIALIZER;

/* The context's record; made on demand if @p make. Under reg_lock. */
static struct coll_reg *
reg_find(struct trd_context *ctx, bool make)
{
	int free_slot = -1;

	for (int i = 0; i < COLL_MAX_CONTEXTS; i++) {
		if (regs[i] != NULL && regs[i]->ctx == ctx)
			return regs[i];
		if (regs[i] == NULL && free_slot < 0)
			free_slot = i;
	}
	if (!make || free_slot < 0)
		return NULL;
	regs[free_slot] = calloc(1, sizeof(struct coll_reg));
	if (regs[free_slot] != NULL)
		regs[free_slot]->ctx = ctx;
	return regs[free_slot];
}

static void
reg_release(struct coll_reg *r)
{
	if (r->n_colls != 0 || r->orphans != NULL)
		return;
	for (int i = 0; i < COLL_MAX_CONTEXTS; i++)
		if (regs[i] == r)
			regs[i] = NULL;
	free(r);
}

int
trd_coll_dispatch(struct trd_context *ctx, const struct trd_msg *m)
{
	struct trd_coll *c;
	struct coll_reg *r;
	unsigned int id;

	if (ctx == NULL || m == NULL || COLL_HDR_MAGIC(m->user) != COLL_MAGIC)
		return 0;
	id = COLL_HDR_ID(m->user);
	rte_spinlock_lock(&reg_lock);
	r = reg_find(ctx, true);
	c = r != NULL ? r->coll[id] : NULL;
	if (c == NULL && r != NULL) {
		/* an object another task has made and this one not yet: keep it for creation */
		struct coll_pend *p = malloc(sizeof(*p) + m->len);

		if (p != NULL) {
			p->next = NULL;
			p->src = m->src;
			p->type = (uint8_t)COLL_HDR_TYPE(m->user);
			p->id = (uint8_t)id;
			p->seq = COLL_HDR_SEQ(m->user);
			p->arg = COLL_HDR_ARG(m->user);
			p->len = m->len;
			if (m->len != 0)
				memcpy(p->data, m->data, m->len);
			if (r->orphans_tail != NULL)
				r->orphans_tail->next = p;
			else
				r->orphans = p;
			r->orphans_tail = p;
		} else {
			COLL_LOG(ERR, "no memory for a message of object %u (lost)", id);
		}
	}
	rte_spinlock_unlock(&reg_lock);
	if (c != NULL)
		coll_rx(c, m);
	return 1;
}

void
trd_coll_recv(struct trd_context *ctx, void *arg, const struct trd_msg *msg)
{
	RTE_SET_USED(arg);
	if (trd_coll_dispatch(ctx, msg) == 0)
		COLL_LOG(DEBUG,
			 "context %u: dropped a message that is not a collective's (user "
			 "%#" PRIx64 ")",
			 trd_context_offset(ctx), msg->user);
}

/* ---- objects ---- */

static int
conf_resolve(const struct trd_coll_conf *in, struct trd_coll_conf *c)
{
	static const struct trd_coll_conf defaults;

	*c = in != NULL ? *in : defaults;
	if (c->seg_size == 0)
		c->seg_size = COLL_DEFAULT_SEG;
	if (c->slots == 0)
		c->slots = COLL_DEFAULT_SLOTS;
	if (in == NULL || in->eager_max == 0)
		c->eager_max = RTE_MIN(COLL_DEFAULT_EAGER, c->seg_size);
	if (c->max_ops == 0)
		c->max_ops = COLL_DEFAULT_OPS;
	if (c->timeout_us == 0)
		c->timeout_us = COLL_DEFAULT_TIMEOUT_US;
	if (c->seg_size < 1024 || c->seg_size > (1u << 20) || c->seg_size % 64 != 0 ||
	    c->slots > COLL_MAX_SLOTS || c->eager_max > c->seg_size || c->max_ops > COLL_MAX_OPS)
		return -EINVAL;
	return 0;
}

static void
coll_free(struct trd_coll *c)
{
	if (c == NULL)
		return;
	if (c->mr != NULL)
		trd_mr_deregister(c->mr);
	while (c->pend != NULL) {
		struct coll_pend *p = c->pend;

		c->pend = p->next;
		free(p);
	}
	for (int e = 0; e < E_MAX; e++)
		free(c->hold[e]);
	/* (memory the engine reaches: a block of the region on a node handle) */
	trd_mem_free(trd_context_node(c->ctx), c->scratch);
	trd_mem_free(trd_context_node(c->ctx), c->work);
	free(c->ops);
	free(c->tickets);
	free(c->task_of);
	free(c->pre);
	free(c);
}

/* The preorder of the heap-ordered tree over virtual ranks 0..n-1: the order of the blocks of
 * a gathered (or scattered) stream, which carries a subtree as own block, then the first
 * child's subtree, then the second's. */
static void
preorder(uint32_t n, uint32_t *pre)
{
	uint32_t stack[80], sp = 0, k = 0;

	stack[sp++] = 0;
	while (sp != 0) {
		uint32_t v = stack[--sp];

		pre[k++] = v;
		if ((uint64_t)2 * v + 2 < n)
			stack[sp++] = 2 * v + 2;
		if ((uint64_t)2 * v + 1 < n)
			stack[sp++] = 2 * v + 1;
	}
}

struct trd_coll *
trd_coll_create(struct trd_client *client, struct trd_context *ctx,
		const struct trd_coll_conf *conf)
{
	struct trd_node *node = trd_context_node(ctx);
	const struct trd_torus *torus;
	struct trd_coll *c;
	struct coll_reg *r;
	uint32_t n, n_nodes, n_tk;
	int me, err = ENOMEM;

	if (client == NULL || ctx == NULL || node == NULL ||
	    trd_client_context(client, trd_context_offset(ctx)) != ctx) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (conf_resolve(conf, &c->conf) != 0) {
		err = EINVAL;
		goto fail;
	}
	c->client = client;
	c->ctx = ctx;
	c->ctx_off = trd_context_offset(ctx);
	n = trd_client_n_tasks(client);
	torus = trd_node_torus(node);
	n_nodes = trd_torus_size(torus);
	c->n = n;

	/* tasks by node: this task, and the sender of every message */
	c->task_of = malloc(sizeof(*c->task_of) * n_nodes);
	c->pre = malloc(sizeof(*c->pre) * n);
	if (c->task_of == NULL || c->pre == NULL)
		goto fail;
	memset(c->task_of, 0xff, sizeof(*c->task_of) * n_nodes);
	for (uint32_t t = 0; t < n; t++) {
		struct trd_ep ep;
		int rank;

		if (trd_endpoint(client, t, c->ctx_off, &ep) != 0 ||
		    (rank = trd_torus_rank(torus, ep.coord)) < 0) {
			err = EINVAL;
			goto fail;
		}
		c->task_of[rank] = t;
	}
	me = trd_torus_rank(torus, trd_node_coord(node));
	if (me < 0 || c->task_of[me] == UINT32_MAX) {
		err = ENOENT;
		goto fail;
	}
	c->rank = c->task_of[me];
	if (trd_endpoint(client, c->rank, c->ctx_off, &c->self) != 0 || c->self.recv_fifo < 0) {
		COLL_LOG(ERR, "context %u has no receive FIFO: collectives cannot reach it",
			 c->ctx_off);
		err = EINVAL;
		goto fail;
	}
	preorder(n, c->pre);

	/* scratch slots: 3 channels (from the parent, from child 0, from child 1) */
	c->scratch_len = (size_t)3 * c->conf.slots * c->conf.seg_size;
	c->scratch = trd_mem_alloc(node, c->scratch_len);
	if (c->scratch == NULL)
		goto fail;
	c->mr = trd_mr_register(node, c->scratch, c->scratch_len, TRD_ACCESS_REMOTE_WRITE);
	if (c->mr == NULL) {
		err = rte_errno;
		goto fail;
	}
	c->key = rte_cpu_to_be_64(trd_mr_key(c->mr)); /* as the grants carry it */
	for (int e = 0; e < E_MAX; e++) {
		c->hold[e] = aligned_alloc(64, RTE_ALIGN_CEIL(c->conf.eager_max + 1, 64u));
		if (c->hold[e] == NULL)
			goto fail;
	}
	c->ops = calloc(c->conf.max_ops, sizeof(*c->ops));
	/* per edge: a window of segments (a put and a notification each, or one eager
	 * message) out, two grants in */
	n_tk = 6 * c->conf.slots + 8;
	c->tickets = calloc(n_tk, sizeof(*c->tickets));
	if (c->ops == NULL || c->tickets == NULL)
		goto fail;
	for (uint32_t i = 0; i < n_tk; i++) {
		c->tickets[i].coll = c;
		c->tickets[i].next = i + 1 < n_tk ? &c->tickets[i + 1] : NULL;
	}
	c->tk_free = &c->tickets[0];
	c->next_seq = 1;

	/* an id on the context: the lowest free one, the same on every task */
	rte_spinlock_lock(&reg_lock);
	r = reg_find(ctx, true);
	if (r == NULL) {
		rte_spinlock_unlock(&reg_lock);
		goto fail;
	}
	for (unsigned int id = 0; id < COLL_MAX_IDS; id++) {
		if (r->coll[id] != NULL)
			continue;
		c->id = (uint8_t)id;
		c->reg = r;
		r->coll[id] = c;
		r->n_colls++;
		break;
	}
	if (c->reg == NULL) {
		rte_spinlock_unlock(&reg_lock);
		err = ENOSPC;
		goto fail;
	}
	/* adopt what arrived for it before it existed */
	{
		struct coll_pend *list = r->orphans, *p;

		r->orphans = r->orphans_tail = NULL;
		while ((p = list) != NULL) {
			list = p->next;
			p->next = NULL;
			if (p->id == c->id) {
				if (c->pend_tail != NULL)
					c->pend_tail->next = p;
				else
					c->pend = p;
				c->pend_tail = p;
				c->stat[TRD_COLL_STAT_RX_MSGS]++;
				c->stat[TRD_COLL_STAT_UNEXPECTED]++;
			} else {
				if (r->orphans_tail != NULL)
					r->orphans_tail->next = p;
				else
					r->orphans = p;
				r->orphans_tail = p;
			}
		}
	}
	rte_spinlock_unlock(&reg_lock);
	return c;

fail:
	coll_free(c);
	rte_errno = err;
	return NULL;
}

int
trd_coll_destroy(struct trd_coll *c)
{
	if (c == NULL)
		return 0;
	if (c->in_progress || c->op_head != c->op_tail || c->tk_out != 0 || c->kick_posted)
		return -EBUSY;
	rte_spinlock_lock(&reg_lock);
	c->reg->coll[c->id] = NULL;
	c->reg->n_colls--;
	reg_release(c->reg);
	rte_spinlock_unlock(&reg_lock);
	coll_free(c);
	return 0;
}

unsigned int
trd_coll_rank(const struct trd_coll *c)
{
	return c == NULL ? 0 : c->rank;
}

unsigned int
trd_coll_size(const struct trd_coll *c)
{
	return c == NULL ? 0 : c->n;
}

struct trd_context *
trd_coll_context(const struct trd_coll *c)
{
	return c == NULL ? NULL : c->ctx;
}

int
trd_coll_stats_get(const struct trd_coll *c, uint64_t *out)
{
	if (c == NULL || out == NULL)
		return -EINVAL;
	memcpy(out, c->stat, sizeof(c->stat));
	return 0;
}

const char *
trd_coll_stat_name(unsigned int stat)
{
	return stat < TRD_COLL_STAT_MAX ? coll_stat_names[stat] : NULL;
}

/* ---- starting collectives ---- */

/* A stream of @p bytes must fit the 20-bit segment numbers of the protocol. */
static bool
stream_fits(const struct trd_coll *c, uint64_t bytes)
{
	return bytes <= c->conf.eager_max ||
	       (bytes + c->conf.seg_size - 1) / c->conf.seg_size < COLL_MAX_SEGS;
}

/* Queue @p t (kind, buffers, root filled in). */
static int
op_post(struct trd_coll *c, struct coll_op *t, trd_coll_done_fn cb, void *cookie, uint64_t *handle)
{
	struct coll_op *op;
	int rc;

	if (c->op_tail - c->op_head >= c->conf.max_ops)
		return -ENOBUFS;
	if (c->op_head == c->op_tail) {
		/* nothing running: begin it from inside trd_advance() */
		if (c->in_progress)
			c->again = true;
		else if ((rc = coll_kick(c)) != 0)
			return rc;
	}
	t->seq = c->next_seq++;
	t->begun = false;
	t->cb = cb;
	t->cookie = cookie;
	op = &c->ops[c->op_tail % c->conf.max_ops];
	*op = *t;
	c->op_tail++;
	c->stat[TRD_COLL_STAT_STARTED]++;
	if (handle != NULL)
		*handle = t->seq;
	return 0;
}

int
trd_coll_barrier(struct trd_coll *c, trd_coll_done_fn cb, void *cookie, uint64_t *handle)
{
	struct coll_op t = {.kind = CK_BARRIER};

	if (c == NULL)
		return -EINVAL;
	return op_post(c, &t, cb, cookie, handle);
}

int
trd_coll_broadcast(struct trd_coll *c, unsigned int root, void *buf, size_t len,
		   trd_coll_done_fn cb, void *cookie, uint64_t *handle)
{
	struct coll_op t = {.kind = CK_BCAST, .root = root, .sbuf = buf, .rbuf = buf, .len = len};

	if (c == NULL || root >= c->n || (buf == NULL && len != 0) || !stream_fits(c, len))
		return -EINVAL;
	return op_post(c, &t, cb, cookie, handle);
}

static int
reduce_args(struct trd_coll *c, struct coll_op *t, size_t count, enum trd_coll_type type,
	    enum trd_coll_op rop, bool need_rbuf)
{
	size_t esz = trd_coll_type_size(type);

	t->fn = coll_reduce_fn_of(rop, type);
	if (t->fn == NULL || count > SIZE_MAX / esz)
		return -EINVAL;
	t->count = count;
	t->len = count * esz;
	t->type = (uint8_t)type;
	t->rop = (uint8_t)rop;
	if (t->len != 0 && (t->sbuf == NULL || (need_rbuf && t->rbuf == NULL)))
		return -EINVAL;
	return stream_fits(c, t->len) ? 0 : -EINVAL;
}

int
trd_coll_reduce(struct trd_coll *c, unsigned int root, const void *sbuf, void *rbuf, size_t count,
		enum trd_coll_type type, enum trd_coll_op op, trd_coll_done_fn cb, void *cookie,
		uint64_t *handle)
{
	struct coll_op t = {.kind = CK_REDUCE, .root = root, .sbuf = sbuf, .rbuf = rbuf};
	int rc;

	if (c == NULL || root >= c->n)
		return -EINVAL;
	rc = reduce_args(c, &t, count, type, op, c->rank == root);
	return rc != 0 ? rc : op_post(c, &t, cb, cookie, handle);
}

int
trd_coll_allreduce(struct trd_coll *c, const void *sbuf, void *rbuf, size_t count,
		   enum trd_coll_type type, enum trd_coll_op op, trd_coll_done_fn cb, void *cookie,
		   uint64_t *handle)
{
	struct coll_op t = {.kind = CK_ALLREDUCE, .root = 0, .sbuf = sbuf, .rbuf = rbuf};
	int rc;

	if (c == NULL)
		return -EINVAL;
	rc = reduce_args(c, &t, count, type, op, true);
	return rc != 0 ? rc : op_post(c, &t, cb, cookie, handle);
}

/* Checks shared by gather, scatter and allgather: n * len bytes cross the root's edges. */
static int
blocks_args(const struct trd_coll *c, size_t len)
{
	if (len > SIZE_MAX / c->n || !stream_fits(c, (uint64_t)len * c->n))
		return -EINVAL;
	return 0;
}

int
trd_coll_gather(struct trd_coll *c, unsigned int root, const void *sbuf, void *rbuf, size_t len,
		trd_coll_done_fn cb, void *cookie, uint64_t *handle)
{
	struct coll_op t = {
		.kind = CK_GATHER, .root = root, .sbuf = sbuf, .rbuf = rbuf, .len = len};

	if (c == NULL || root >= c->n || blocks_args(c, len) != 0 ||
	    (len != 0 && (sbuf == NULL || (c->rank == root && rbuf == NULL))))
		return -EINVAL;
	return op_post(c, &t, cb, cookie, handle);
}

int
trd_coll_scatter(struct trd_coll *c, unsigned int root, const void *sbuf, void *rbuf, size_t len,
		 trd_coll_done_fn cb, void *cookie, uint64_t *handle)
{
	struct coll_op t = {
		.kind = CK_SCATTER, .root = root, .sbuf = sbuf, .rbuf = rbuf, .len = len};

	if (c == NULL || root >= c->n || blocks_args(c, len) != 0 ||
	    (len != 0 && (rbuf == NULL || (c->rank == root && sbuf == NULL))))
		return -EINVAL;
	return op_post(c, &t, cb, cookie, handle);
}

int
trd_coll_allgather(struct trd_coll *c, const void *sbuf, void *rbuf, size_t len,
		   trd_coll_done_fn cb, void *cookie, uint64_t *handle)
{
	struct coll_op t = {
		.kind = CK_ALLGATHER, .root = 0, .sbuf = sbuf, .rbuf = rbuf, .len = len};

	if (c == NULL || blocks_args(c, len) != 0 || (len != 0 && (sbuf == NULL || rbuf == NULL)))
		return -EINVAL;
	return op_post(c, &t, cb, cookie, handle);
}

/* ---- completion ---- */

int
trd_coll_test(const struct trd_coll *c, uint64_t handle)
{
	if (c == NULL || handle == 0 || handle >= c->next_seq)
		return -EINVAL;
	if (handle > c->done_seq)
		return -EINPROGRESS;
	if (c->done_seq - handle < RTE_DIM(c->status))
		return c->status[handle % RTE_DIM(c->status)];
	return 0;
}

int
trd_coll_wait(struct trd_coll *c, uint64_t handle, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;
	int rc;

	while ((rc = trd_coll_test(c, handle)) == -EINPROGRESS) {
		int k = trd_advance(c->ctx, 0);

		if (k < 0)
			return k;
		if (trd_time_us() > deadline)
			return -ETIMEDOUT;
		if (k == 0 && c->conf.yield)
			sched_yield();
	}
	return rc;
}

static int
sync_wait(struct trd_coll *c, int rc, const uint64_t *h)
{
	return rc != 0 ? rc : trd_coll_wait(c, *h, c->conf.timeout_us);
}

int
trd_coll_barrier_sync(struct trd_coll *c)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_barrier(c, NULL, NULL, &h), &h);
}

int
trd_coll_broadcast_sync(struct trd_coll *c, unsigned int root, void *buf, size_t len)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_broadcast(c, root, buf, len, NULL, NULL, &h), &h);
}

int
trd_coll_reduce_sync(struct trd_coll *c, unsigned int root, const void *sbuf, void *rbuf,
		     size_t count, enum trd_coll_type type, enum trd_coll_op op)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_reduce(c, root, sbuf, rbuf, count, type, op, NULL, NULL, &h),
			 &h);
}

int
trd_coll_allreduce_sync(struct trd_coll *c, const void *sbuf, void *rbuf, size_t count,
			enum trd_coll_type type, enum trd_coll_op op)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_allreduce(c, sbuf, rbuf, count, type, op, NULL, NULL, &h), &h);
}

int
trd_coll_gather_sync(struct trd_coll *c, unsigned int root, const void *sbuf, void *rbuf,
		     size_t len)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_gather(c, root, sbuf, rbuf, len, NULL, NULL, &h), &h);
}

int
trd_coll_scatter_sync(struct trd_coll *c, unsigned int root, const void *sbuf, void *rbuf,
		      size_t len)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_scatter(c, root, sbuf, rbuf, len, NULL, NULL, &h), &h);
}

int
trd_coll_allgather_sync(struct trd_coll *c, const void *sbuf, void *rbuf, size_t len)
{
	uint64_t h = 0;

	return sync_wait(c, trd_coll_allgather(c, sbuf, rbuf, len, NULL, NULL, &h), &h);
}
