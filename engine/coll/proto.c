/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collective protocol (docs/collectives.md). Every collective is a set of byte streams
 * along the edges of a binary tree of ranks: up from the children (reduce, gather), down from
 * the parent (broadcast, scatter), or both (allreduce, allgather, barrier). A stream of at
 * most eager_max bytes is one message (EAGER); a longer one is cut into segments that the
 * sender puts into the receiver's scratch slots once the receiver has granted them (GRANT,
 * carrying the scratch key), announcing each with a NOTIFY that follows the put. The
 * receiver consumes segments in order, reducing or copying them, grants the freed slots again,
 * and a node forwards a segment as soon as it is ready: large buffers flow through the tree as
 * a pipeline.
 *
 * Everything here runs inside trd_advance() of the object's context: in the completion
 * callbacks of the object's operations, in the receive callback, and in the callback of a
 * fence to this task (the "kick") that starts a collective posted from outside.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "coll_pvt.h"

static inline struct coll_op *
head_op(struct trd_coll *c)
{
	return c->op_head == c->op_tail ? NULL : &c->ops[c->op_head % c->conf.max_ops];
}

uint32_t
coll_sub_size(uint32_t n, uint32_t v)
{
	uint64_t lo = v, hi = v;
	uint32_t count = 0;

	while (lo < n) {
		count += (uint32_t)(RTE_MIN(hi, (uint64_t)n - 1) - lo + 1);
		lo = 2 * lo + 1;
		hi = 2 * hi + 2;
	}
	return count;
}

/* ---- stream arithmetic ---- */

static inline uint32_t
seg_len(const struct coll_stream *s, uint32_t i)
{
	uint64_t off = (uint64_t)i * s->segsz;

	return (uint32_t)RTE_MIN((uint64_t)s->segsz, s->total - off);
}

static inline uint64_t
slot_off(const struct trd_coll *c, unsigned int ch, uint32_t i)
{
	return ((uint64_t)ch * c->conf.slots + i % c->conf.slots) * c->conf.seg_size;
}

static inline bool
in_complete(const struct coll_stream *s)
{
	return !s->used || s->done == s->nseg;
}

/* Bytes of an incoming stream consumed so far (a prefix). */
static inline uint64_t
in_bytes(const struct coll_stream *s)
{
	if (!s->used)
		return 0;
	return s->done >= s->nseg ? s->total : (uint64_t)s->done * s->segsz;
}

/* Segments of an outgoing stream covered by a ready prefix of @p bytes. */
static inline uint32_t
segs_of_bytes(const struct coll_stream *s, uint64_t bytes)
{
	return bytes >= s->total ? s->nseg : (uint32_t)(bytes / s->segsz);
}

static inline bool
up_complete(const struct coll_op *op)
{
	return in_complete(&op->in[E_C0]) && in_complete(&op->in[E_C1]);
}

/* Offset of child j's part in this task's subtree stream (own block first, preorder). */
static inline uint64_t
child_off(const struct coll_op *op, int e)
{
	return op->len + (e == E_C1 ? (uint64_t)op->sub[0] * op->len : 0);
}

/* Segments of the accumulator that every child has been folded into. */
static inline uint32_t
reduced_segs(const struct coll_op *op, uint32_t nseg)
{
	if (op->in[E_C1].used)
		return op->in[E_C1].done;
	if (op->in[E_C0].used)
		return op->in[E_C0].done;
	return nseg;
}

static uint64_t
gathered_bytes(const struct coll_op *op)
{
	return op->len + in_bytes(&op->in[E_C0]) +
	       (in_complete(&op->in[E_C0]) ? in_bytes(&op->in[E_C1]) : 0);
}

/* How many segments of out[e] may be sent now. */
static uint32_t
ready_segs(const struct coll_op *op, int e)
{
	const struct coll_stream *s = &op->out[e];
	const struct coll_stream *from_parent = &op->in[E_PARENT];
	bool root = op->vrank == 0;

	switch (op->kind) {
	case CK_BARRIER:
		if (e == E_PARENT || root)
			return up_complete(op) ? 1 : 0;
		return from_parent->done;
	case CK_BCAST:
		return root ? s->nseg : from_parent->done;
	case CK_REDUCE:
	case CK_ALLREDUCE:
		if (e == E_PARENT || root)
			return reduced_segs(op, s->nseg);
		return from_parent->done;
	case CK_GATHER:
	case CK_ALLGATHER:
		if (e == E_PARENT)
			return segs_of_bytes(s, gathered_bytes(op));
		if (root)
			return op->mapped ? s->nseg : 0;
		return from_parent->done;
	case CK_SCATTER: {
		uint64_t off = child_off(op, e), have;

		if (root)
			return s->nseg;
		have = in_bytes(from_parent);
		return segs_of_bytes(s, have > off ? have - off : 0);
	}
	default:
		return 0;
	}
}

/* May segment @p i of in[e] be consumed now? */
static bool
can_consume(const struct coll_op *op, int e, uint32_t i)
{
	if ((op->kind == CK_REDUCE || op->kind == CK_ALLREDUCE) && e == E_C1 && op->in[E_C0].used)
		return op->in[E_C0].done > i; /* fold in a fixed order: own, child 0, child 1 */
	if (op->kind == CK_ALLREDUCE && e == E_PARENT && op->out[E_PARENT].used)
		return op->out[E_PARENT].done > i; /* our part of rbuf has gone up */
	return true;
}

static void
consume_seg(struct coll_op *op, int e, uint32_t i, const uint8_t *data, uint32_t len)
{
	uint64_t off = (uint64_t)i * op->in[e].segsz;

	if (len == 0)
		return;
	switch (op->kind) {
	case CK_BCAST:
		memcpy(op->rbuf + off, data, len);
		break;
	case CK_REDUCE:
	case CK_ALLREDUCE:
		if (e == E_PARENT)
			memcpy(op->rbuf + off, data, len);
		else
			op->fn(op->acc + off, data, len / trd_coll_type_size(op->type));
		break;
	case CK_GATHER:
	case CK_ALLGATHER:
		if (e == E_PARENT)
			memcpy(op->rbuf + off, data, len);
		else
			memcpy(op->T + child_off(op, e) + off, data, len);
		break;
	case CK_SCATTER:
		memcpy(op->T + off, data, len);
		break;
	default:
		break;
	}
}

/* ---- tickets: one per messaging operation in flight ---- */

static void tk_done(struct trd_context *ctx, void *cookie, int status);

static struct coll_ticket *
tk_get(struct trd_coll *c, uint8_t kind, uint64_t seq, int edge, uint32_t arg)
{
	struct coll_ticket *t = c->tk_free;

	if (t == NULL)
		return NULL;
	c->tk_free = t->next;
	t->next = NULL;
	t->kind = kind;
	t->seq = seq;
	t->edge = (uint8_t)edge;
	t->arg = arg;
	t->retry = false;
	c->tk_out++;
	return t;
}

static void
tk_put(struct trd_coll *c, struct coll_ticket *t)
{
	t->kind = TK_FREE;
	t->retry = false;
	t->next = c->tk_free;
	c->tk_free = t;
	c->tk_out--;
}

static void
tk_retry(struct trd_coll *c, struct coll_ticket *t)
{
	t->retry = true;
	t->next = NULL;
	if (c->retry_tail != NULL)
		c->retry_tail->next = t;
	else
		c->retry = t;
	c->retry_tail = t;
}

/* Hand the ticket's message to the context. 0, -ENOBUFS (work queue full), or an error. */
static int
tk_post(struct trd_coll *c, const struct coll_op *op, struct coll_ticket *t)
{
	const struct coll_stream *s;
	uint32_t len;
	int rc;

	switch (t->kind) {
	case TK_EAGER:
		s = &op->out[t->edge];
		rc = trd_send(c->ctx, &s->ep, s->total != 0 ? s->base : NULL, s->total,
			      coll_hdr(CM_EAGER, c->id, op->seq, 0), tk_done, t);
		if (rc == 0) {
			c->stat[TRD_COLL_STAT_EAGER_TX]++;
			c->stat[TRD_COLL_STAT_TX_BYTES] += s->total;
		}
		return rc;
	case TK_PUT:
		s = &op->out[t->edge];
		len = seg_len(s, t->arg);
		rc = trd_put(c->ctx, s->base + (uint64_t)t->arg * s->segsz, &s->ep,
			     slot_off(c, s->ch, t->arg), s->rkey, len, tk_done, t);
		if (rc == 0) {
			c->stat[TRD_COLL_STAT_PUTS]++;
			c->stat[TRD_COLL_STAT_TX_BYTES] += len;
		}
		return rc;
	case TK_NOTIFY:
		s = &op->out[t->edge];
		rc = trd_send(c->ctx, &s->ep, NULL, 0, coll_hdr(CM_NOTIFY, c->id, op->seq, t->arg),
			      tk_done, t);
		if (rc == 0)
			c->stat[TRD_COLL_STAT_NOTIFY_TX]++;
		return rc;
	case TK_GRANT:
		s = &op->in[t->edge];
		rc = trd_send(c->ctx, &s->ep, &c->key, sizeof(c->key),
			      coll_hdr(CM_GRANT, c->id, op->seq, t->arg), tk_done, t);
		if (rc == 0)
			c->stat[TRD_COLL_STAT_GRANT_TX]++;
		return rc;
	default:
		return -EINVAL;
	}
}

static void
coll_fail(struct trd_coll *c, int status)
{
	if (c->error == 0) {
		COLL_LOG(ERR, "object %u on task %u: collective failed: %s", c->id, c->rank,
			 strerror(-status));
		c->error = status;
	}
	c->again = true;
}

/* Part of segment @p i of an outgoing stream is complete (its put, or its notification, or the
 * eager message: both parts). A segment is done, its bytes free, when both are: the prefix
 * advances. Parts may complete out of order. */
static void
out_part_done(struct coll_stream *s, uint32_t i, bool put, bool notify)
{
	uint64_t bit = 1ull << (i - s->done);

	if (put)
		s->pmask |= bit;
	if (notify)
		s->nmask |= bit;
	while (s->pmask & s->nmask & 1) {
		s->pmask >>= 1;
		s->nmask >>= 1;
		s->done++;
	}
}

static bool
tk_current(struct trd_coll *c, const struct coll_ticket *t, struct coll_op **opp)
{
	struct coll_op *op = head_op(c);

	*opp = op;
	return op != NULL && op->begun && op->seq == t->seq && c->error == 0;
}

static void
tk_done(struct trd_context *ctx, void *cookie, int status)
{
	struct coll_ticket *t = cookie;
	struct trd_coll *c = t->coll;
	struct coll_op *op;

	RTE_SET_USED(ctx);
	if (!tk_current(c, t, &op)) {
		/* a grant that outlived its collective, or anything after a failure */
		tk_put(c, t);
		coll_progress(c);
		return;
	}
	if (status == -ENOBUFS && t->kind != TK_PUT) {
		/* the receiver's FIFO was full: send it again */
		c->stat[TRD_COLL_STAT_RETRIES]++;
		tk_retry(c, t);
		coll_progress(c);
		return;
	}
	if (status != 0) {
		tk_put(c, t);
		coll_fail(c, status);
		coll_progress(c);
		return;
	}
	switch (t->kind) {
	case TK_EAGER:
		out_part_done(&op->out[t->edge], 0, true, true);
		break;
	case TK_PUT:
		out_part_done(&op->out[t->edge], t->arg, true, false);
		break;
	case TK_NOTIFY:
		out_part_done(&op->out[t->edge], t->arg, false, true);
		break;
	case TK_GRANT:
		op->in[t->edge].grants_inflight--;
		break;
	default:
		break;
	}
	tk_put(c, t);
	coll_progress(c);
}

/* Post again what could not be posted or was refused by a full FIFO, in order. */
static void
retry_tickets(struct trd_coll *c)
{
	struct coll_ticket *list = c->retry;

	c->retry = c->retry_tail = NULL;
	while (list != NULL) {
		struct coll_ticket *t = list;
		struct coll_op *op;
		int rc;

		list = t->next;
		t->retry = false;
		if (!tk_current(c, t, &op)) {
			tk_put(c, t);
			continue;
		}
		rc = tk_post(c, op, t);
		if (rc == -ENOBUFS) {
			/* keep it and the rest, in order, for the next event */
			c->stat[TRD_COLL_STAT_STALLS]++;
			tk_retry(c, t);
			while (list != NULL) {
				t = list;
				list = t->next;
				tk_retry(c, t);
			}
			return;
		}
		if (rc != 0) {
			tk_put(c, t);
			coll_fail(c, rc);
		}
	}
}

/* ---- the kick: a fence to this task, whose callback runs inside trd_advance() ---- */

static void
kick_done(struct trd_context *ctx, void *cookie, int status)
{
	struct trd_coll *c = cookie;

	RTE_SET_USED(ctx);
	RTE_SET_USED(status);
	c->kick_posted = false;
	coll_progress(c);
}

int
coll_kick(struct trd_coll *c)
{
	int rc;

	if (c->kick_posted)
		return 0;
	rc = trd_fence(c->ctx, &c->self, kick_done, c);
	if (rc == 0)
		c->kick_posted = true;
	return rc;
}

/* ---- starting a collective ---- */

static int
work_ensure(struct trd_coll *c, size_t need)
{
	size_t len;

	if (need <= c->work_len)
		return 0;
	len = RTE_ALIGN_CEIL(need, (size_t)64);
	/* a source of puts and sends: memory the engine reaches (on a node handle, the
	 * process's region) */
	trd_mem_free(trd_context_node(c->ctx), c->work);
	c->work = trd_mem_alloc(trd_context_node(c->ctx), len);
	c->work_len = c->work != NULL ? len : 0;
	return c->work != NULL ? 0 : -ENOMEM;
}

static void
stream_init(struct trd_coll *c, struct coll_stream *s, uint32_t peer, uint64_t total,
	    unsigned int ch, const uint8_t *base)
{
	s->used = true;
	s->peer = peer;
	s->total = total;
	s->ch = (uint8_t)ch;
	s->base = base;
	if (total <= c->conf.eager_max) {
		s->eager = true;
		s->segsz = (uint32_t)total;
		s->nseg = 1;
	} else {
		s->eager = false;
		s->segsz = c->conf.seg_size;
		s->nseg = (uint32_t)((total + s->segsz - 1) / s->segsz);
	}
	trd_endpoint(c->client, peer, c->ctx_off, &s->ep);
}

static void rx_apply(struct trd_coll *c, struct coll_op *op, uint32_t src, unsigned int type,
		     uint32_t arg, const void *data, uint32_t len);

/* The bytes of scratch space (c->work) an operation of this kind needs at this task. */
static size_t
op_work_need(const struct coll_op *op, int nch)
{
	switch (op->kind) {
	case CK_REDUCE:
		return nch != 0 && op->vrank != 0 ? op->len : 0;
	case CK_GATHER:
	case CK_ALLGATHER:
	case CK_SCATTER:
		return (size_t)op->my_sub * op->len;
	default:
		return 0;
	}
}

/* The messages of this operation that came before it began, in arrival order; the others
 * stay pending, in theirs. */
static void
op_replay_pending(struct trd_coll *c, struct coll_op *op)
{
	struct coll_pend *list = c->pend, *mine = NULL, **mt = &mine;
	uint32_t seq = (uint32_t)(op->seq & COLL_SEQ_MASK);

	c->pend = c->pend_tail = NULL;
	while (list != NULL) {
		struct coll_pend *p = list;

		list = p->next;
		p->next = NULL;
		if (p->seq == seq) {
			*mt = p;
			mt = &p->next;
		} else {
			if (c->pend_tail != NULL)
				c->pend_tail->next = p;
			else
				c->pend = p;
			c->pend_tail = p;
		}
	}
	while (mine != NULL) {
		struct coll_pend *p = mine;

		mine = p->next;
		coll_rx_pending(c, p);
		free(p);
	}
}

static int
op_begin(struct trd_coll *c, struct coll_op *op)
{
	const uint32_t n = c->n, me = c->rank, root = op->root;
	const uint32_t v = (me + n - root) % n;
	const uint64_t len = op->len;
	unsigned int child[2];
	uint32_t up_ch = 0;
	int parent, nch, rc;

	memset(op->in, 0, sizeof(op->in));
	memset(op->out, 0, sizeof(op->out));
	op->begun = true;
	op->mapped = false;
	op->vrank = v;
	parent = trd_tree_parent(n, root, me);
	nch = trd_tree_children(n, root, me, child);
	if ((parent < 0 && parent != -ENOENT) || nch < 0)
		return -EINVAL;
	op->n_child = (uint32_t)nch;
	for (int j = 0; j < 2; j++)
		op->sub[j] = j < nch ? coll_sub_size(n, 2 * v + 1 + (uint32_t)j) : 0;
	op->my_sub = coll_sub_size(n, v);
	if (parent >= 0)
		up_ch = 1 + (v - (2 * ((v - 1) / 2) + 1)); /* our channel at the parent */

	rc = work_ensure(c, op_work_need(op, nch));
	if (rc != 0)
		return rc;

	switch (op->kind) {
	case CK_BARRIER:
		if (parent >= 0) {
			stream_init(c, &op->in[E_PARENT], (uint32_t)parent, 0, 0, NULL);
			stream_init(c, &op->out[E_PARENT], (uint32_t)parent, 0, up_ch, NULL);
		}
		for (int j = 0; j < nch; j++) {
			stream_init(c, &op->in[E_C0 + j], child[j], 0, 1 + j, NULL);
			stream_init(c, &op->out[E_C0 + j], child[j], 0, 0, NULL);
		}
		break;
	case CK_BCAST:
		if (parent >= 0)
			stream_init(c, &op->in[E_PARENT], (uint32_t)parent, len, 0, NULL);
		for (int j = 0; j < nch; j++)
			stream_init(c, &op->out[E_C0 + j], child[j], len, 0, op->rbuf);
		break;
	case CK_REDUCE:
	case CK_ALLREDUCE:
		/* the accumulator starts as our own contribution: a leaf sends its sbuf up as it
		 * is; the root accumulates in rbuf, and so does an inner task of an allreduce
		 * (the result comes down into it later); an inner task of a reduce in work */
		if (v == 0 || (nch != 0 && op->kind == CK_ALLREDUCE))
			op->acc = op->rbuf;
		else if (nch == 0)
			op->acc = (uint8_t *)(uintptr_t)op->sbuf;
		else
			op->acc = c->work;
		if (op->acc != op->sbuf && len != 0)
			memmove(op->acc, op->sbuf, len);
		for (int j = 0; j < nch; j++)
			stream_init(c, &op->in[E_C0 + j], child[j], len, 1 + j, NULL);
		if (parent >= 0)
			stream_init(c, &op->out[E_PARENT], (uint32_t)parent, len, up_ch, op->acc);
		if (op->kind == CK_ALLREDUCE) {
			if (parent >= 0)
				stream_init(c, &op->in[E_PARENT], (uint32_t)parent, len, 0, NULL);
			for (int j = 0; j < nch; j++)
				stream_init(c, &op->out[E_C0 + j], child[j], len, 0, op->rbuf);
		}
		break;
	case CK_GATHER:
	case CK_ALLGATHER:
		op->T = c->work;
		if (len != 0)
			memcpy(op->T, op->sbuf, len);
		for (int j = 0; j < nch; j++)
			stream_init(c, &op->in[E_C0 + j], child[j], (uint64_t)op->sub[j] * len,
				    1 + j, NULL);
		if (parent >= 0)
			stream_init(c, &op->out[E_PARENT], (uint32_t)parent,
				    (uint64_t)op->my_sub * len, up_ch, op->T);
		if (op->kind == CK_ALLGATHER) {
			if (parent >= 0)
				stream_init(c, &op->in[E_PARENT], (uint32_t)parent,
					    (uint64_t)n * len, 0, NULL);
			for (int j = 0; j < nch; j++)
				stream_init(c, &op->out[E_C0 + j], child[j], (uint64_t)n * len, 0,
					    op->rbuf);
		}
		break;
	case CK_SCATTER:
		op->T = c->work;
		if (v == 0 && len != 0)
			/* the whole tree's stream: rank blocks in preorder of the tree */
			for (uint32_t k = 0; k < n; k++)
				memcpy(op->T + (uint64_t)k * len,
				       op->sbuf + (uint64_t)((c->pre[k] + root) % n) * len, len);
		if (parent >= 0)
			stream_init(c, &op->in[E_PARENT], (uint32_t)parent,
				    (uint64_t)op->my_sub * len, 0, NULL);
		for (int j = 0; j < nch; j++)
			stream_init(c, &op->out[E_C0 + j], child[j], (uint64_t)op->sub[j] * len, 0,
				    op->T + child_off(op, E_C0 + j));
		break;
	default:
		return -EINVAL;
	}

	op_replay_pending(c, op);
	return 0;
}

/* ---- progress ---- */

static void
consume(struct trd_coll *c, struct coll_op *op)
{
	bool moved;

	do {
		moved = false;
		for (int e = 0; e < E_MAX; e++) {
			struct coll_stream *s = &op->in[e];

			while (s->used && s->done < s->nseg) {
				uint32_t i = s->done, bit = s->eager ? 0 : i % c->conf.slots;
				const uint8_t *data;

				if (!((s->present >> bit) & 1) || !can_consume(op, e, i))
					break;
				data = s->eager ? c->hold[e] : c->scratch + slot_off(c, s->ch, i);
				consume_seg(op, e, i, data, seg_len(s, i));
				s->present &= ~(1ull << bit);
				s->done++;
				moved = true;
			}
		}
	} while (moved);

	/* gather at the root: the whole tree's stream is in, in preorder: put it in rank order */
	if ((op->kind == CK_GATHER || op->kind == CK_ALLGATHER) && op->vrank == 0 && !op->mapped &&
	    up_complete(op)) {
		for (uint32_t k = 0; k < c->n && op->len != 0; k++)
			memcpy(op->rbuf + (uint64_t)((c->pre[k] + op->root) % c->n) * op->len,
			       op->T + (uint64_t)k * op->len, op->len);
		op->mapped = true;
	}
}

/* Grant freed slots to the senders of rendezvous streams (a few at a time). */
static void
grant(struct trd_coll *c, struct coll_op *op)
{
	const uint32_t k = c->conf.slots, batch = RTE_MAX(1u, k / 2);

	for (int e = 0; e < E_MAX; e++) {
		struct coll_stream *s = &op->in[e];
		struct coll_ticket *t;
		uint32_t want;
		int rc;

		if (!s->used || s->eager)
			continue;
		want = RTE_MIN(s->nseg, s->done + k);
		if (want <= s->grant_sent || s->grants_inflight >= 2)
			continue;
		if (s->grant_sent != 0 && want < s->nseg && want - s->grant_sent < batch)
			continue;
		t = tk_get(c, TK_GRANT, op->seq, e, want);
		if (t == NULL)
			return;
		rc = tk_post(c, op, t);
		if (rc != 0) {
			tk_put(c, t);
			if (rc == -ENOBUFS)
				c->stat[TRD_COLL_STAT_STALLS]++;
			else
				coll_fail(c, rc);
			return;
		}
		s->grant_sent = want;
		s->grants_inflight++;
	}
}

/* Start what is ready on the outgoing streams. */
static void
send_out(struct trd_coll *c, struct coll_op *op)
{
	for (int e = 0; e < E_MAX; e++) {
		struct coll_stream *s = &op->out[e];
		uint32_t ready;

		if (!s->used)
			continue;
		ready = ready_segs(op, e);
		while (s->posted < s->nseg && s->posted < ready) {
			struct coll_ticket *t, *n;
			uint8_t kind = TK_EAGER;
			int rc;

			if (!s->eager) {
				if (!s->have_key || s->posted >= s->granted ||
				    s->posted - s->done >= c->conf.slots)
					break;
				kind = TK_PUT;
			}
			t = tk_get(c, kind, op->seq, e, s->posted);
			n = kind == TK_PUT ? tk_get(c, TK_NOTIFY, op->seq, e, s->posted) : NULL;
			if (t == NULL || (kind == TK_PUT && n == NULL)) {
				if (t != NULL)
					tk_put(c, t);
				return;
			}
			rc = tk_post(c, op, t);
			if (rc != 0) {
				tk_put(c, t);
				if (n != NULL)
					tk_put(c, n);
				if (rc == -ENOBUFS)
					c->stat[TRD_COLL_STAT_STALLS]++;
				else
					coll_fail(c, rc);
				return;
			}
			s->posted++;
			if (n == NULL)
				continue;
			/* The notification follows the put at once: both go through this context's
			 * injection FIFO to the same node, along one path, in order (and a reliable
			 * receiver takes them in order), so when it arrives the segment is in the
			 * slot. If it cannot be posted now, it is retried before anything new. */
			rc = tk_post(c, op, n);
			if (rc == -ENOBUFS) {
				c->stat[TRD_COLL_STAT_STALLS]++;
				tk_retry(c, n);
				return;
			}
			if (rc != 0) {
				tk_put(c, n);
				coll_fail(c, rc);
				return;
			}
		}
	}
}

static bool
op_finished(const struct coll_op *op)
{
	for (int e = 0; e < E_MAX; e++) {
		if (!in_complete(&op->in[e]))
			return false;
		if (op->out[e].used && op->out[e].done != op->out[e].nseg)
			return false;
	}
	if ((op->kind == CK_GATHER || op->kind == CK_ALLGATHER) && op->vrank == 0 && !op->mapped)
		return false;
	return true;
}

static void
op_complete(struct trd_coll *c, struct coll_op *op, int status)
{
	trd_coll_done_fn cb = op->cb;
	void *cookie = op->cookie;

	if (status == 0 && op->kind == CK_SCATTER && op->len != 0)
		memcpy(op->rbuf, op->T, op->len); /* our own block leads our subtree's stream */
	c->status[op->seq % RTE_DIM(c->status)] = status;
	c->done_seq = op->seq;
	c->stat[TRD_COLL_STAT_COMPLETED]++;
	if (status != 0)
		c->stat[TRD_COLL_STAT_ERRORS]++;
	c->op_head++; /* before the callback, which may start the next collective */
	if (cb != NULL)
		cb(c, cookie, status);
}

void
coll_progress(struct trd_coll *c)
{
	if (c->in_progress) {
		c->again = true;
		return;
	}
	c->in_progress = true;
	do {
		struct coll_op *op;
		int rc;

		c->again = false;
		if (c->retry != NULL)
			retry_tickets(c);
		op = head_op(c);
		if (op == NULL)
			break;
		if (c->error != 0) {
			op_complete(c, op, c->error);
			c->again = true;
			continue;
		}
		if (!op->begun) {
			rc = op_begin(c, op);
			if (rc != 0) {
				coll_fail(c, rc);
				continue;
			}
		}
		consume(c, op);
		grant(c, op);
		send_out(c, op);
		if (c->error == 0 && op_finished(op)) {
			op_complete(c, op, 0);
			c->again = true;
		}
	} while (c->again);
	c->in_progress = false;
}

/* ---- receiving ---- */

static struct coll_stream *
stream_of(struct coll_stream *set, uint32_t peer)
{
	for (int e = 0; e < E_MAX; e++)
		if (set[e].used && set[e].peer == peer)
			return &set[e];
	return NULL;
}

static void
rx_apply(struct trd_coll *c, struct coll_op *op, uint32_t src, unsigned int type, uint32_t arg,
	 const void *data, uint32_t len)
{
	struct coll_stream *s;
	uint64_t key;

	switch (type) {
	case CM_EAGER:
		s = stream_of(op->in, src);
		if (s != NULL && s->eager && (s->present != 0 || s->done != 0)) {
			c->stat[TRD_COLL_STAT_DUPLICATES]++; /* sent again after a refusal */
			return;
		}
		if (s == NULL || !s->eager || len != s->total)
			break;
		if (len != 0)
			memcpy(c->hold[s - op->in], data, len);
		s->present = 1;
		return;
	case CM_NOTIFY:
		s = stream_of(op->in, src);
		if (s != NULL && !s->eager &&
		    (arg < s->done ||
		     (arg < s->grant_sent && ((s->present >> (arg % c->conf.slots)) & 1)))) {
			c->stat[TRD_COLL_STAT_DUPLICATES]++;
			return;
		}
		if (s == NULL || s->eager || arg >= s->grant_sent || len != 0)
			break;
		s->present |= 1ull << (arg % c->conf.slots);
		return;
	case CM_GRANT:
		s = stream_of(op->out, src);
		if (s == NULL || s->eager || len != sizeof(key) || arg > s->nseg)
			break;
		memcpy(&key, data, sizeof(key));
		s->rkey = rte_be_to_cpu_64(key);
		s->have_key = true;
		if (arg > s->granted)
			s->granted = arg;
		return;
	default:
		break;
	}
	COLL_LOG(DEBUG, "object %u task %u: unexpected message type %u from task %u (arg %u)",
		 c->id, c->rank, type, src, arg);
	c->stat[TRD_COLL_STAT_PROTO_ERRORS]++;
}

static bool
src_task(const struct trd_coll *c, struct trd_coord coord, uint32_t *task)
{
	int r = trd_torus_rank(trd_node_torus(trd_context_node(c->ctx)), coord);

	if (r < 0 || c->task_of[r] == UINT32_MAX)
		return false;
	*task = c->task_of[r];
	return true;
}

void
coll_rx_pending(struct trd_coll *c, struct coll_pend *p)
{
	struct coll_op *op = head_op(c);
	uint32_t src;

	if (op == NULL || !src_task(c, p->src, &src)) {
		c->stat[TRD_COLL_STAT_PROTO_ERRORS]++;
		return;
	}
	rx_apply(c, op, src, p->type, p->arg, p->data, p->len);
}

void
coll_rx(struct trd_coll *c, const struct trd_msg *m)
{
	uint32_t seq = COLL_HDR_SEQ(m->user), src;
	unsigned int type = COLL_HDR_TYPE(m->user);
	struct coll_op *op = head_op(c);
	uint64_t cur;

	c->stat[TRD_COLL_STAT_RX_MSGS]++;
	if (op != NULL && op->begun && (uint32_t)(op->seq & COLL_SEQ_MASK) == seq) {
		if (src_task(c, m->src, &src))
			rx_apply(c, op, src, type, COLL_HDR_ARG(m->user), m->data, m->len);
		else
			c->stat[TRD_COLL_STAT_PROTO_ERRORS]++;
		coll_progress(c);
		return;
	}
	/* a collective we have not begun: keep the message for it. One already complete here:
	 * a message sent again after the target's FIFO refused it (the engine may deliver the
	 * first copy too), or a grant that arrived after its stream was done */
	cur = op != NULL ? op->seq : c->done_seq + 1;
	if (((seq - (uint32_t)cur) & COLL_SEQ_MASK) >= (COLL_SEQ_MASK + 1) / 2) {
		c->stat[TRD_COLL_STAT_DUPLICATES]++;
		return;
	}
	{
		struct coll_pend *p = malloc(sizeof(*p) + m->len);

		if (p == NULL) {
			coll_fail(c, -ENOMEM);
			coll_progress(c);
			return;
		}
		p->next = NULL;
		p->src = m->src;
		p->type = (uint8_t)type;
		p->id = c->id;
		p->seq = seq;
		p->arg = COLL_HDR_ARG(m->user);
		p->len = m->len;
		if (m->len != 0)
			memcpy(p->data, m->data, m->len);
		if (c->pend_tail != NULL)
			c->pend_tail->next = p;
		else
			c->pend = p;
		c->pend_tail = p;
		c->stat[TRD_COLL_STAT_UNEXPECTED]++;
	}
}
