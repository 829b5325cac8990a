/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Work queues and advance.
 *
 * Posting fills an entry (its descriptor is built now) and appends it to the context's queue.
 * trd_advance() starts entries from the head, strictly in order: each operation becomes a
 * tracked engine operation (trd_track_open(), TRD_DF_ACKREQ) whose outcome comes back as a
 * 0-byte message in the context's outcome FIFO, its user word naming the entry. A fence at
 * the head waits there, holding back everything behind it, until no operation to its target
 * (or to any target) is in flight. An RDMA read is a remote get carrying a put-back
 * descriptor whose bytes count an engine counter down from the read's length: zero is
 * success; a refusal comes back as an outcome.
 *
 * Two completion events (struct trd_op_events). A put or send with a local event carries an
 * injection counter set to its length: the engine counts it down as it lets go of the bytes
 * (a copied packet when a port takes it, a zero-copy packet when it is freed, after the peer's
 * acknowledgement if reliability is on), so zero means the source buffer is the application's
 * again. Such an entry waits in lwait until its counter is zero (local event), and its outcome,
 * if it comes first, is kept until then (remote event after it). A read's two events are its
 * completion, local then remote.
 *
 * Dispatch: a dispatching context hands each received message to the handler of the id in
 * the top 16 bits of its user word; a send to it carries (id << 48 | user).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>

#include "msg_pvt.h"

/* ---- entries ---- */

static inline uint64_t
op_cookie(const struct trd_context *x, uint32_t idx)
{
	return (uint64_t)x->ops[idx].gen << 32 | idx;
}

static struct msg_op *
op_new(struct trd_context *x, enum msg_kind kind, uint32_t rank, trd_done_fn cb, void *cookie,
       uint32_t *idx)
{
	struct msg_op *op;

	if (x->n_free == 0)
		return NULL;
	*idx = x->free_ids[--x->n_free];
	op = &x->ops[*idx];
	op->kind = (uint8_t)kind;
	op->state = MSG_QUEUED;
	op->ctr = 0;
	op->track = 0;
	op->rank = rank;
	op->fstatus = 0;
	op->ev = 0;
	op->rstatus = 0;
	op->result = NULL;
	op->cb = cb;
	op->lcb = NULL;
	op->cookie = cookie;
	return op;
}

/* An entry with two events: @p ev's remote function is its completion, its local function
 * runs before (MSG_EV_LOCAL). */
static struct msg_op *
op_new_ev(struct trd_context *x, enum msg_kind kind, uint32_t rank, const struct trd_op_events *ev,
	  uint32_t *idx)
{
	struct msg_op *op;

	if (ev == NULL)
		return op_new(x, kind, rank, NULL, NULL, idx);
	op = op_new(x, kind, rank, ev->remote_fn, ev->cookie, idx);
	if (op != NULL && ev->local_fn != NULL) {
		op->lcb = ev->local_fn;
		op->ev = MSG_EV_LOCAL;
	}
	return op;
}

static inline void
op_queue(struct trd_context *x, uint32_t idx)
{
	x->q[x->q_tail++ & x->q_mask] = idx;
	x->stat[TRD_CTX_STAT_POSTED]++;
}

/* A refusal decided by the target before it sent any data (trd_cause_errno()). */
static bool
target_verdict(int status)
{
	switch (status) {
	case -ENOKEY:
	case -ERANGE:
	case -EACCES:
	case -ENOENT:
	case -ENOBUFS:
	case -EINVAL:
	case -EPERM:
	case -ENOMEM:
		return true;
	default:
		return false;
	}
}

/* An operation towards @p rank failed: every fence still queued covers it (an operation
 * fails only once it was started, and nothing behind a queued fence starts), and reports the
 * first failure of its scope. */
static void
fences_fail(struct trd_context *x, uint32_t rank, int status)
{
	for (uint32_t i = x->q_head; i != x->q_tail; i++) {
		struct msg_op *f = &x->ops[x->q[i & x->q_mask]];

		if (f->kind == MSG_FENCE && f->fstatus == 0 &&
		    (f->rank == MSG_ALL_NODES || f->rank == rank))
			f->fstatus = status;
	}
}

/* Free the entry, then run its local event if it still has one, then its callback (which
 * may post into the entry just freed). */
static void
op_complete(struct trd_context *x, uint32_t idx, int status)
{
	struct msg_op *op = &x->ops[idx];
	trd_done_fn cb = op->cb, lcb = (op->ev & MSG_EV_LOCAL) ? op->lcb : NULL;
	void *cookie = op->cookie;

	if (op->state == MSG_INFLIGHT) {
		x->inflight--;
		x->outstanding[op->rank]--;
	}
	if (op->ctr != 0) {
		/* A read the target refused sent nothing: its counter can serve again. After a
		 * transport failure (peer down) bytes might still come: retire the counter (it
		 * stays allocated until the context is destroyed). A put's or send's injection
		 * counter is here only if the engine never took the descriptor. */
		if (op->kind != MSG_READ || status == 0 || op->state != MSG_INFLIGHT ||
		    target_verdict(status))
			x->ctrs[x->n_ctrs++] = op->ctr;
		op->ctr = 0;
	}
	if (lcb != NULL)
		x->stat[TRD_CTX_STAT_LOCAL_DONE]++;
	if (status == 0) {
		if (op->kind == MSG_PUT || op->kind == MSG_SEND)
			x->stat[TRD_CTX_STAT_PUT_BYTES] += op->d.len;
		else if (op->kind == MSG_READ)
			x->stat[TRD_CTX_STAT_READ_BYTES] += op->c.len;
	} else {
		x->stat[TRD_CTX_STAT_ERRORS]++;
		if (op->kind != MSG_FENCE)
			fences_fail(x, op->rank, status);
	}
	x->stat[TRD_CTX_STAT_COMPLETED]++;
	op->state = MSG_FREE;
	op->ev = 0;
	op->gen++;
	x->free_ids[x->n_free++] = idx;
	if (lcb != NULL)
		lcb(x, cookie, status);
	if (cb != NULL)
		cb(x, cookie, status);
}

/* An operation that could not be handed to the engine: give back what it holds. */
static void
op_fail(struct trd_context *x, uint32_t idx, int status)
{
	struct msg_op *op = &x->ops[idx];

	if (op->track != 0) {
		trd_track_close(x->node, op->track);
		op->track = 0;
	}
	op_complete(x, idx, status);
}

/* ---- posting ---- */

static int
ep_rank(const struct trd_context *x, const struct trd_ep *ep, uint32_t *rank)
{
	int r;

	if (ep == NULL)
		return -EINVAL;
	r = trd_torus_rank(&x->torus, ep->coord);
	if (r < 0)
		return -EINVAL;
	*rank = (uint32_t)r;
	return 0;
}

static int
put_post(struct trd_context *x, const void *local_addr, const struct trd_ep *ep,
	 uint64_t remote_addr, uint64_t remote_key, size_t len, const struct trd_op_events *ev)
{
	struct msg_op *op;
	uint32_t rank, idx;

	if (x == NULL || ep_rank(x, ep, &rank) != 0 || len > UINT32_MAX ||
	    (local_addr == NULL && len != 0))
		return -EINVAL;
	op = op_new_ev(x, MSG_PUT, rank, ev, &idx);
	if (op == NULL)
		return -ENOBUFS;
	trd_desc_put(&op->d, ep->coord, local_addr, (uint32_t)len, remote_key, remote_addr, 0, 0);
	op_queue(x, idx);
	return 0;
}

int
trd_put(struct trd_context *x, const void *local_addr, const struct trd_ep *ep,
	uint64_t remote_addr, uint64_t remote_key, size_t len, trd_done_fn cb, void *cookie)
{
	const struct trd_op_events ev = {.remote_fn = cb, .cookie = cookie};

	return put_post(x, local_addr, ep, remote_addr, remote_key, len, &ev);
}

int
trd_put_events(struct trd_context *x, const void *local_addr, const struct trd_ep *ep,
	       uint64_t remote_addr, uint64_t remote_key, size_t len,
	       const struct trd_op_events *ev)
{
	return put_post(x, local_addr, ep, remote_addr, remote_key, len, ev);
}

/* A send of user word @p user (a dispatched one carries its id in the top bits already). */
static int
send_post(struct trd_context *x, const struct trd_ep *ep, bool dispatch, const void *buf,
	  size_t len, uint64_t user, const struct trd_op_events *ev)
{
	struct msg_op *op;
	uint32_t rank, idx;

	if (x == NULL || ep_rank(x, ep, &rank) != 0 || len > UINT32_MAX ||
	    (buf == NULL && len != 0))
		return -EINVAL;
	/* the target reads the top bits as an id only if it dispatches: both sides must agree */
	if (ep->dispatch != dispatch)
		return -EINVAL;
	if (ep->recv_fifo < 0)
		return -ENOTSUP;
	op = op_new_ev(x, MSG_SEND, rank, ev, &idx);
	if (op == NULL)
		return -ENOBUFS;
	trd_desc_fifo(&op->d, ep->coord, (uint8_t)ep->recv_fifo, buf, (uint32_t)len, user, 0);
	op_queue(x, idx);
	return 0;
}

int
trd_send(struct trd_context *x, const struct trd_ep *ep, const void *buf, size_t len, uint64_t user,
	 trd_done_fn cb, void *cookie)
{
	const struct trd_op_events ev = {.remote_fn = cb, .cookie = cookie};

	return send_post(x, ep, false, buf, len, user, &ev);
}

int
trd_send_dispatch(struct trd_context *x, const struct trd_ep *ep, unsigned int id, const void *buf,
		  size_t len, uint64_t user, const struct trd_op_events *ev)
{
	if (id >= TRD_DISPATCH_MAX || user > TRD_DISPATCH_USER_MAX)
		return -EINVAL;
	return send_post(x, ep, true, buf, len, (uint64_t)id << TRD_DISPATCH_USER_BITS | user, ev);
}

static int
read_post(struct trd_context *x, void *local_addr, const struct trd_ep *ep, uint64_t remote_addr,
	  uint64_t remote_key, size_t len, const struct trd_op_events *ev)
{
	struct trd_mr *mr;
	struct msg_op *op;
	uint32_t rank, idx;

	if (x == NULL || ep_rank(x, ep, &rank) != 0 || local_addr == NULL || len == 0 ||
	    len > UINT32_MAX)
		return -EINVAL;
	/* the translation: the engine names local memory by (region key, offset) */
	mr = trd_mr_find(x->node, local_addr, len, TRD_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		return -EINVAL;
	op = op_new_ev(x, MSG_READ, rank, ev, &idx);
	if (op == NULL)
		return -ENOBUFS;
	/* the put back, executed by the target's engine from its region into ours; its
	 * counter and tracking id are filled in when the read starts */
	trd_desc_put(&op->c, trd_node_coord(x->node), NULL, (uint32_t)len, trd_mr_key(mr),
		     trd_mr_remote_addr(mr, local_addr), 0, 0);
	op->c.flags = TRD_DF_SRC_MR;
	op->c.src_key = remote_key;
	op->c.src = remote_addr;
	trd_desc_rget(&op->d, ep->coord, TRD_ENGINE_FIFO, &op->c, 1);
	op_queue(x, idx);
	return 0;
}

int
trd_rdma_read(struct trd_context *x, void *local_addr, const struct trd_ep *ep,
	      uint64_t remote_addr, uint64_t remote_key, size_t len, trd_done_fn cb, void *cookie)
{
	const struct trd_op_events ev = {.remote_fn = cb, .cookie = cookie};

	return read_post(x, local_addr, ep, remote_addr, remote_key, len, &ev);
}

int
trd_rdma_read_events(struct trd_context *x, void *local_addr, const struct trd_ep *ep,
		     uint64_t remote_addr, uint64_t remote_key, size_t len,
		     const struct trd_op_events *ev)
{
	return read_post(x, local_addr, ep, remote_addr, remote_key, len, ev);
}

int
trd_atomic(struct trd_context *x, const struct trd_ep *ep, uint64_t rkey, uint64_t roff,
	   enum trd_atomic_op aop, uint64_t operand, uint64_t compare, uint64_t *result,
	   trd_done_fn cb, void *cookie)
{
	struct msg_op *op;
	uint32_t rank, idx;

	if (x == NULL || ep_rank(x, ep, &rank) != 0 ||
	    (aop != TRD_ATOMIC_FADD && aop != TRD_ATOMIC_CAS && aop != TRD_ATOMIC_SWAP))
		return -EINVAL;
	op = op_new(x, MSG_ATOMIC, rank, cb, cookie, &idx);
	if (op == NULL)
		return -ENOBUFS;
	op->result = result;
	trd_desc_atomic(&op->d, ep->coord, aop, rkey, roff, operand, compare);
	op_queue(x, idx);
	return 0;
}

int
trd_fence(struct trd_context *x, const struct trd_ep *ep, trd_done_fn cb, void *cookie)
{
	uint32_t rank = MSG_ALL_NODES, idx;

	if (x == NULL || (ep != NULL && ep_rank(x, ep, &rank) != 0))
		return -EINVAL;
	if (op_new(x, MSG_FENCE, rank, cb, cookie, &idx) == NULL)
		return -ENOBUFS;
	op_queue(x, idx);
	return 0;
}

/* ---- starting ---- */

/* A counter for a read or a local event: one this context keeps, or a new one from the node.
 * -ENOBUFS: wait, one of ours comes back as an operation completes. */
static int
ctr_get(struct trd_context *x, uint16_t *id)
{
	int rc;

	if (x->n_ctrs != 0) {
		*id = x->ctrs[--x->n_ctrs];
		return 0;
	}
	/* as many as entries at most (retired ones included): ctrs_owned has room for that */
	rc = x->n_ctrs_owned < x->size ? trd_counter_alloc(x->node, id) : -ENOSPC;
	if (rc == -ENOSPC && x->n_reads + x->n_lwait != 0)
		return -ENOBUFS;
	if (rc != 0)
		return rc;
	x->ctrs_owned[x->n_ctrs_owned++] = *id;
	return 0;
}

/*
 * Hand the entry at the head to the engine. 0: started; -ENOBUFS: not now, it stays at the
 * head (FIFO full, no tracking id or counter free yet); another negative errno: it cannot
 * start at all.
 */
static int
op_start(struct trd_context *x, uint32_t idx)
{
	struct msg_op *op = &x->ops[idx];
	int rc;

	if (op->track == 0) {
		rc = trd_track_open(x->node, x->cpl_fifo, op_cookie(x, idx),
				    op->kind == MSG_ATOMIC ? op->result : NULL, &op->track);
		if (rc != 0)
			return rc == -ENOSPC ? -ENOBUFS : rc;
	}
	if (op->kind == MSG_READ && op->ctr == 0) {
		rc = ctr_get(x, &op->ctr);
		if (rc != 0) {
			op->ctr = 0;
			return rc;
		}
		op->c.rec_ctr = op->ctr;
		op->c.flags |= TRD_DF_ACKREQ; /* reports only its own failure */
		op->c.aux = op->track;
	}
	if ((op->ev & MSG_EV_LOCAL) && op->kind != MSG_READ && op->d.len != 0) {
		/* the engine counts it down as it lets go of the source bytes */
		if (op->ctr == 0) {
			rc = ctr_get(x, &op->ctr);
			if (rc != 0) {
				op->ctr = 0;
				return rc;
			}
		}
		trd_counter_set(x->node, op->ctr, op->d.len);
		op->d.inj_ctr = op->ctr;
	}
	if (op->kind == MSG_READ)
		trd_counter_set(x->node, op->ctr, op->c.len);
	op->d.flags |= TRD_DF_ACKREQ;
	op->d.aux = op->track;
	rc = trd_inject(x->inj, &op->d);
	if (rc != 0)
		return rc;
	op->state = MSG_INFLIGHT;
	x->inflight++;
	x->outstanding[op->rank]++;
	if (op->kind == MSG_READ)
		x->reads[x->n_reads++] = idx;
	else if (op->ev & MSG_EV_LOCAL)
		x->lwait[x->n_lwait++] = idx;
	x->stat[TRD_CTX_STAT_STARTED]++;
	return 0;
}

static inline bool
fence_ready(const struct trd_context *x, const struct msg_op *op)
{
	return op->rank == MSG_ALL_NODES ? x->inflight == 0 : x->outstanding[op->rank] == 0;
}

/* Start queued entries in order; complete fences that reached the head and are satisfied. */
static unsigned int
wq_start(struct trd_context *x, unsigned int budget, unsigned int *started)
{
	unsigned int events = 0;

	while (x->q_head != x->q_tail) {
		uint32_t idx = x->q[x->q_head & x->q_mask];
		struct msg_op *op = &x->ops[idx];
		int rc;

		if (op->kind == MSG_FENCE) {
			if (!fence_ready(x, op) || events >= budget)
				break;
			x->q_head++;
			x->stat[TRD_CTX_STAT_STARTED]++;
			x->stat[TRD_CTX_STAT_FENCES]++;
			op_complete(x, idx, op->fstatus);
			events++;
			continue;
		}
		rc = op_start(x, idx);
		if (rc == -ENOBUFS) {
			x->stat[TRD_CTX_STAT_STALLS]++;
			break;
		}
		x->q_head++;
		(*started)++;
		if (rc != 0) {
			/* errors as completions: the context keeps going */
			MSG_LOG(DEBUG, "context %u: operation %u not started: %d", x->offset, idx,
				rc);
			op_fail(x, idx, rc);
			events++;
		}
	}
	return events;
}

/* ---- outcomes ---- */

static void
read_forget(struct trd_context *x, uint32_t idx)
{
	for (uint32_t i = 0; i < x->n_reads; i++)
		if (x->reads[i] == idx) {
			x->reads[i] = x->reads[--x->n_reads];
			return;
		}
}

/* One outcome message: the target's verdict on an operation in flight. Returns events. */
static unsigned int
outcome(struct trd_context *x, const struct trd_msg *m)
{
	uint32_t idx = (uint32_t)m->user;
	struct msg_op *op;

	if (idx >= x->size)
		return 0;
	op = &x->ops[idx];
	if (op->state != MSG_INFLIGHT || op->gen != (uint32_t)(m->user >> 32)) {
		MSG_LOG(DEBUG, "context %u: stale outcome for entry %u", x->offset, idx);
		return 0;
	}
	op->track = 0; /* the engine retired the id with this message */
	if (op->kind == MSG_READ) {
		if (m->status == 0)
			return 0; /* a read's success is its counter: wait for it */
		read_forget(x, idx);
	} else if (op->ev & MSG_EV_LOCAL) {
		/* the remote event waits for the local one (locals_poll()) */
		op->ev |= MSG_EV_REMOTE;
		op->rstatus = m->status;
		return 0;
	}
	op_complete(x, idx, m->status);
	return 1;
}

/*
 * Puts and sends whose injection counter reached zero: the engine let go of their bytes. Run
 * their local event, then their completion if the outcome is already here. A failed counter
 * (the bytes were not all sent) waits for the outcome, which the engine also fails, so that
 * both events get its error.
 */
static unsigned int
locals_poll(struct trd_context *x, unsigned int budget)
{
	unsigned int events = 0;
	uint32_t i = 0;

	while (i < x->n_lwait && events < budget) {
		uint32_t idx = x->lwait[i];
		struct msg_op *op = &x->ops[idx];
		int64_t v = 0;
		int status;

		if (op->ctr != 0 && trd_counter_read(x->node, op->ctr, &v) != 0)
			v = TRD_COUNTER_FAILED; /* cannot happen: the counter is ours */
		if (v > 0 || (v <= TRD_COUNTER_FAILED && !(op->ev & MSG_EV_REMOTE))) {
			i++;
			continue;
		}
		if (v == 0)
			status = 0;
		else if (v <= TRD_COUNTER_FAILED)
			status = op->rstatus < 0 ? op->rstatus : -EHOSTUNREACH;
		else
			status = -ERANGE; /* below zero: more bytes than posted, cannot happen */
		x->lwait[i] = x->lwait[--x->n_lwait];
		if (op->ctr != 0) {
			x->ctrs[x->n_ctrs++] = op->ctr;
			op->ctr = 0;
		}
		op->ev &= (uint8_t)~MSG_EV_LOCAL;
		x->stat[TRD_CTX_STAT_LOCAL_DONE]++;
		events++;
		/* the entry stays in flight while its local event runs: nothing reuses it */
		op->lcb(x, op->cookie, status);
		if (op->ev & MSG_EV_REMOTE)
			op_complete(x, idx, op->rstatus);
	}
	return events;
}

/* Reads whose counter reached zero have every byte in place. */
static unsigned int
reads_poll(struct trd_context *x, unsigned int budget)
{
	unsigned int events = 0;
	uint32_t i = 0;

	while (i < x->n_reads && events < budget) {
		uint32_t idx = x->reads[i];
		struct msg_op *op = &x->ops[idx];
		int64_t v;

		if (trd_counter_read(x->node, op->ctr, &v) != 0 || v > 0) {
			i++;
			continue;
		}
		/* Closing the id fails only if the engine already took it for an outcome:
		 * then that outcome completes the read. */
		if (op->track != 0 && trd_track_close(x->node, op->track) != 0) {
			i++;
			continue;
		}
		op->track = 0;
		x->reads[i] = x->reads[--x->n_reads];
		op_complete(x, idx, v == 0 ? 0 : -ERANGE);
		events++;
	}
	return events;
}

/* One message for a dispatching context: to its id's handler, or dropped. Returns events. */
static unsigned int
dispatch_one(struct trd_context *x, struct trd_msg *m)
{
	uint64_t id = m->user >> TRD_DISPATCH_USER_BITS;
	const struct msg_handler *h;

	if (id >= TRD_DISPATCH_MAX || x->dispatch[id].fn == NULL) {
		x->stat[TRD_CTX_STAT_DISPATCH_UNKNOWN]++;
		MSG_LOG(DEBUG,
			"context %u: %" PRIu32 "-byte message from (%u,%u,%u) for dispatch "
			"id %" PRIu64 ", which has no handler: dropped",
			x->offset, m->len, m->src.x, m->src.y, m->src.z, id);
		return 0;
	}
	h = &x->dispatch[id];
	m->user &= TRD_DISPATCH_USER_MAX;
	h->fn(x, h->arg, m);
	return 1;
}

/* Messages sent to this context, at most @p budget taken. Returns events. */
static unsigned int
recv_drain(struct trd_context *x, unsigned int budget)
{
	struct trd_msg *m[MSG_BURST];
	unsigned int events = 0, taken = 0;
	int k;

	while (taken < budget) {
		k = trd_rec_fifo_poll(x->recv_rf, m,
				      RTE_MIN((unsigned int)MSG_BURST, budget - taken));
		if (k <= 0)
			break;
		for (int i = 0; i < k; i++) {
			if (x->dispatch != NULL) {
				events += dispatch_one(x, m[i]);
			} else {
				x->recv(x, x->recv_arg, m[i]);
				events++;
			}
		}
		/* a bundle's messages come one after the other: one count per block */
		trd_msg_free_bulk(m, (unsigned int)k);
		taken += (unsigned int)k;
		if (k < MSG_BURST)
			break;
	}
	x->stat[TRD_CTX_STAT_RECEIVED] += events;
	return events;
}

int
trd_advance(struct trd_context *x, unsigned int max)
{
	unsigned int budget = max != 0 ? max : UINT32_MAX, events = 0, started = 0;
	struct trd_msg *m[MSG_BURST];
	int k;

	if (x == NULL)
		return -EINVAL;
	if (x->in_advance)
		return -EBUSY;
	x->in_advance = true;

	/* outcomes of operations in flight */
	while (events < budget) {
		k = trd_rec_fifo_poll(x->cpl_rf, m,
				      RTE_MIN((unsigned int)MSG_BURST, budget - events));
		if (k <= 0)
			break;
		for (int i = 0; i < k; i++) {
			events += outcome(x, m[i]);
			trd_msg_free(m[i]);
		}
		if (k < MSG_BURST)
			break;
	}
	if (x->n_reads != 0 && events < budget)
		events += reads_poll(x, budget - events);
	/* local events (they also give back counters the queue may need) */
	if (x->n_lwait != 0 && events < budget)
		events += locals_poll(x, budget - events);

	/* then the queue, in posting order */
	events += wq_start(x, budget > events ? budget - events : 0, &started);

	/* messages sent to this context */
	if (x->recv_rf != NULL && (x->recv != NULL || x->dispatch != NULL) && events < budget)
		events += recv_drain(x, budget - events);
	x->in_advance = false;
	if (events == 0 && started == 0)
		trd_node_progress(x->node);
	return (int)RTE_MIN(events, (unsigned int)INT32_MAX);
}
