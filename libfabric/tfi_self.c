/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages an endpoint sends to itself (docs/libfabric.md, "Messages to itself").
 *
 * An MPI rank that sends to itself (MPI_Sendrecv with itself as its neighbour on a periodic
 * grid, a master that is its own worker) would otherwise cross to the engine and back: a
 * poll round of the engine's thread each way, and on a host with fewer CPUs than processes a
 * scheduling round. Here the provider matches such messages itself, as Open MPI's self BTL
 * does: a receive from itself is never given to the engine (ep->srx), and a send to itself is
 * copied into the receive that matches it or, when none does, onto the heap (ep->sq) until a
 * receive or a probe takes it.
 *
 * Order is MPI's: a message takes the earliest posted receive that matches it, whether that
 * receive names itself or any source (op->seq; ep->srx and ep->any are both in posting
 * order), and a receive takes the earliest queued message. A receive from any source is
 * given to the engine as well, for the messages of others. When a message to itself should
 * go to one the engine holds, the provider withdraws it (trd_vni_cancel) and the message
 * waits (ep->sp), with every later message to itself, until the engine answers: withdrawn,
 * the receive takes the message here; completed by a message from elsewhere, the waiting
 * message is matched again. A receive from any source that the provider still holds
 * (tfi_txq.c) is simply taken off its queue.
 *
 * Probes (FI_PEEK, FI_CLAIM, FI_DISCARD) look at the queued messages first; a probe of itself
 * alone is answered here. A send to itself completes when posted: its bytes were copied.
 * Queued messages take at most TFI_SELF_QUEUE_MAX bytes (a send beyond: -FI_EAGAIN).
 * FI_TOROID_SELF=0 sends them through the engine like any other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tfi.h"

struct tfi_smsg {
	struct tfi_smsg *next;
	uint64_t vtag, data;
	bool has_data;
	void *claim_ctx; /* in ep->sclaimed: the context of the FI_PEEK | FI_CLAIM that took it */
	size_t len;
	struct tfi_op *sop; /* kept in the sender's buffer: the send (its iovs); else in buf */
	uint8_t buf[];
};

bool
tfi_self_is(const struct tfi_ep *ep, struct trd_vni_addr a)
{
	return tfi_params.self && a.app == ep->info.self.app && a.proc == ep->info.self.proc;
}

static bool
from_self(const struct tfi_ep *ep, struct trd_vni_addr src)
{
	return src.app == ep->info.self.app && src.proc == ep->info.self.proc;
}

/* May a receive or probe from @p src take a message to itself (the path on; from itself, or
 * from any source)? @p mine: from itself by name. */
static bool
rx_may_self(const struct tfi_ep *ep, struct trd_vni_addr src, bool *mine)
{
	*mine = from_self(ep, src);
	return tfi_params.self && (*mine || src.app == TRD_VNI_ANY);
}

/* Does receive @p op (its tag in vtag, its ignore mask in data) take a message tagged @p vtag? */
static bool
rx_takes(const struct tfi_op *op, uint64_t vtag)
{
	return (vtag & ~op->data) == op->vtag;
}

static void
smsg_append(struct tfi_smsg **head, struct tfi_smsg **tail, struct tfi_smsg *m)
{
	m->next = NULL;
	if (*tail != NULL)
		(*tail)->next = m;
	else
		*head = m;
	*tail = m;
}

/* Take @p m (behind @p prev, NULL: the head) off a queue. */
static void
smsg_unlink(struct tfi_smsg **head, struct tfi_smsg **tail, struct tfi_smsg *prev,
	    struct tfi_smsg *m)
{
	if (prev != NULL)
		prev->next = m->next;
	else
		*head = m->next;
	if (*tail == m)
		*tail = prev;
	m->next = NULL;
}

/* The first queued message that a receive with @p vtag and @p ignore takes, and the one
 * before it in *prev. */
static struct tfi_smsg *
sq_find(const struct tfi_ep *ep, uint64_t vtag, uint64_t ignore, struct tfi_smsg **prev)
{
	*prev = NULL;
	for (struct tfi_smsg *m = ep->sq_head; m != NULL; *prev = m, m = m->next)
		if ((m->vtag & ~ignore) == vtag)
			return m;
	return NULL;
}

static void
any_unlink(struct tfi_ep *ep, struct tfi_op *op)
{
	if (!op->in_any)
		return;
	if (op->aprev != NULL)
		op->aprev->anext = op->anext;
	else
		ep->any_head = op->anext;
	if (op->anext != NULL)
		op->anext->aprev = op->aprev;
	else
		ep->any_tail = op->aprev;
	op->anext = op->aprev = NULL;
	op->in_any = false;
}

void
tfi_self_any_add(struct tfi_ep *ep, struct tfi_op *op)
{
	if (!tfi_params.self || op->in_any)
		return;
	op->aprev = ep->any_tail;
	op->anext = NULL;
	if (ep->any_tail != NULL)
		ep->any_tail->anext = op;
	else
		ep->any_head = op;
	ep->any_tail = op;
	op->in_any = true;
}

static void
srx_unlink(struct tfi_ep *ep, struct tfi_op *op)
{
	struct tfi_op *prev = NULL;

	for (struct tfi_op *o = ep->srx_head; o != NULL; prev = o, o = o->next) {
		if (o != op)
			continue;
		if (prev != NULL)
			prev->next = op->next;
		else
			ep->srx_head = op->next;
		if (ep->srx_tail == op)
			ep->srx_tail = prev;
		break;
	}
	op->next = NULL;
	op->txq = TFI_TXQ_NONE;
}

/* The earliest posted receive that takes a message tagged @p vtag, or NULL. */
static struct tfi_op *
first_rx(const struct tfi_ep *ep, uint64_t vtag)
{
	struct tfi_op *s = ep->srx_head, *a = ep->any_head;

	while (s != NULL && !rx_takes(s, vtag))
		s = s->next;
	while (a != NULL && (a->ucancel || !rx_takes(a, vtag))) /* (withdrawn by fi_cancel) */
		a = a->anext;
	if (a == NULL || (s != NULL && s->seq < a->seq))
		return s;
	return a;
}

/* May the provider end receive @p op itself: kept here, or held in the receive queue? */
static bool
rx_local(const struct tfi_op *op)
{
	return op->txq == TFI_SELF_RX || op->txq == TFI_RXQ_HELD;
}

/* Take local receive @p op off the lists it is in. */
static void
rx_take(struct tfi_ep *ep, struct tfi_op *op)
{
	if (op->txq == TFI_SELF_RX)
		srx_unlink(ep, op);
	else
		tfi_rxq_remove(ep, op);
	any_unlink(ep, op);
}

/* Complete receive @p op with a message of @p len bytes (its bytes in place, @p fault: its
 * buffer, or the sender's, could not be accessed): truncated to its room (FI_ETRUNC), or
 * FI_EFAULT. (tfi_op_done wakes a thread asleep on its CQ.) */
static void
rx_end(struct tfi_ep *ep, struct tfi_op *op, bool fault, size_t len, uint64_t vtag, bool has_data,
       uint64_t data)
{
	int st = fault ? -EFAULT : len > op->len ? -EMSGSIZE : 0;

	tfi_op_done(ep, op, st, len, ep->info.self, vtag, has_data ? &data : NULL);
}

/* Is every byte of @p n iovs readable? Looked at only after a copy failed: in pieces. */
static bool
readable(const struct iovec *iov, size_t n)
{
	uint8_t b[4096];

	for (size_t i = 0; i < n; i++)
		for (size_t o = 0; o < iov[i].iov_len; o += sizeof(b)) {
			size_t k = iov[i].iov_len - o < sizeof(b) ? iov[i].iov_len - o : sizeof(b);

			if (tfi_copy_in(b, (const uint8_t *)iov[i].iov_base + o, k) != 0)
				return false;
		}
	return true;
}

/* Copy @p len bytes of the send in @p n iovs into receive @p rx (its pool buffer, or its own
 * iovs): 0, or -FI_EFAULT with *sender_fault telling whose buffer could not be accessed. */
static int
copy_send(struct tfi_op *rx, const struct iovec *iov, size_t n, size_t len, bool *sender_fault)
{
	struct iovec b = {.iov_base = rx->bounce, .iov_len = len};
	int rc = rx->bounce != NULL ? tfi_copy_iov(&b, 1, iov, n, len)
				    : tfi_copy_iov(rx->iov, rx->iov_n, iov, n, len);

	*sender_fault = rc != 0 && !readable(iov, n);
	return rc;
}

/* End the send @p op kept for a message to itself (status @p st): now, or at the next progress
 * (tfi_self_progress) when its CQ has no room or when @p later: while the engine's completions
 * are handled, each may write one entry (the room was counted for them), so the receive's
 * entry is all that one writes. */
static void
send_end(struct tfi_ep *ep, struct tfi_op *op, int st, bool later)
{
	if (later || (op->comp && ep->txcq != NULL && tfi_cq_room(ep->txcq) == 0)) {
		op->vop = st; /* (ended by tfi_self_progress) */
		tfi_opq_append(&ep->sdone_head, &ep->sdone_tail, op);
		return;
	}
	op->txq = TFI_TXQ_NONE;
	tfi_op_done(ep, op, st, 0, ep->info.self, 0, NULL);
}

/* Deliver waiting message @p m (off its queue) into receive @p rx (off its lists) and free it;
 * a kept send ends too (at the next progress if @p later, see send_end). The caller made sure
 * of room for @p rx's entry. */
static void
msg_deliver(struct tfi_ep *ep, struct tfi_op *rx, struct tfi_smsg *m, bool later)
{
	size_t k = m->len < rx->len ? m->len : rx->len;
	bool fault = false, sfault = false;

	if (m->sop != NULL) {
		fault = k > 0 && copy_send(rx, m->sop->iov, m->sop->iov_n, k, &sfault) != 0;
	} else if (k > 0 && rx->bounce != NULL) {
		memcpy(rx->bounce, m->buf, k); /* scattered by the completion */
	} else if (k > 0) {
		fault = tfi_scatter(rx->iov, rx->iov_n, m->buf, k) != 0;
	}
	rx_end(ep, rx, fault, m->len, m->vtag, m->has_data, m->data);
	if (m->sop != NULL)
		send_end(ep, m->sop, sfault ? -EFAULT : 0, later);
	else
		ep->sq_bytes -= m->len;
	free(m);
}

/* Drop waiting message @p m (off its queue): FI_DISCARD. */
static void
msg_drop(struct tfi_ep *ep, struct tfi_smsg *m)
{
	if (m->sop != NULL)
		send_end(ep, m->sop, 0, false);
	else
		ep->sq_bytes -= m->len;
	free(m);
}

/* Ask the engine to withdraw receive @p op for the waiting messages. */
static void
withdraw(struct tfi_ep *ep, struct tfi_op *op)
{
	int rc = trd_vni_cancel(ep->vni, (uint64_t)(uintptr_t)op);

	ep->self_cancel = op;
	/* -ENOENT: it completed already, its completion is on its way; -ECONNRESET: the flush
	 * of the dead interface completes it */
	ep->self_cancel_owed = rc == -EAGAIN;
	if (rc == -ECONNRESET)
		ep->dead = true;
}

/* A send to itself, as tfi_self_send and tfi_self_start give it. */
struct self_tx {
	const struct iovec *iov;
	size_t n, total;
	uint64_t vtag;
	const uint64_t *data;
	bool copy;         /* its buffer is free on return (an inject): always copied */
	bool tx_entry;     /* completed now, it writes a tx CQ entry */
	struct tfi_op *op; /* a held send (tfi_txq.c), else NULL */
	bool tagged, comp; /* (for the operation a kept send needs) */
	void *context;
};

/* Keep send @p t as it is, its bytes in its buffer, until a receive takes it: @p m's send. */
static int
keep_send(struct tfi_ep *ep, const struct self_tx *t, struct tfi_smsg *m)
{
	struct tfi_op *op = t->op;

	if (op == NULL) {
		op = tfi_op_get(ep);
		if (op == NULL)
			return -FI_EAGAIN;
		op->kind = TFI_OP_SEND;
		op->tagged = t->tagged;
		op->peek = false;
		op->comp = t->comp;
		op->context = t->context;
		op->len = t->total;
		op->iov_n = t->n;
		if (t->n > 0)
			memcpy(op->iov, t->iov, t->n * sizeof(*t->iov));
	} else {
		op->iov_n = t->n;
		if (t->n > 0)
			op->iov[0] = t->iov[0];
	}
	op->txq = TFI_SELF_RX; /* (not the engine's: a dead interface's flush leaves it) */
	m->sop = op;
	return 0;
}

/* A message to itself: delivered into the receive that takes it, or queued: copied (up to
 * TFI_SELF_EAGER_MAX bytes, while less than TFI_SELF_QUEUE_MAX wait, and an inject always),
 * else kept in the sender's buffer: one copy when a receive takes it.
 * 0: done (complete the send now), 1: kept (it completes when a receive takes it),
 * -FI_EAGAIN (no CQ room, nothing to queue it with), -FI_EFAULT (an unreadable send). */
static int
self_send(struct tfi_ep *ep, const struct self_tx *t)
{
	bool same = t->tx_entry && ep->txcq == ep->rxcq, copy;
	struct tfi_op *rx = NULL;
	struct tfi_smsg *m;
	int rc;

	ep->self_sent = true;
	if (ep->sp_head == NULL && ep->self_cancel == NULL)
		rx = first_rx(ep, t->vtag);
	if (rx != NULL && rx_local(rx)) {
		size_t k = t->total < rx->len ? t->total : rx->len;
		bool sfault = false, fault = false;

		if (ep->rxcq == NULL || tfi_cq_room(ep->rxcq) < (same ? 2u : 1u))
			return -FI_EAGAIN;
		if (k > 0) /* one copy, from the sender's buffer into the receiver's */
			fault = copy_send(rx, t->iov, t->n, k, &sfault) != 0;
		if (sfault)
			return -FI_EFAULT; /* the receive stays posted */
		rx_take(ep, rx);
		rx_end(ep, rx, fault, t->total, t->vtag, t->data != NULL, t->data ? *t->data : 0);
		return 0;
	}
	copy = t->copy ||
	       (t->total <= TFI_SELF_EAGER_MAX && ep->sq_bytes + t->total <= TFI_SELF_QUEUE_MAX);
	m = malloc(sizeof(*m) + (copy ? t->total : 0));
	if (m == NULL && t->copy)
		return -FI_EAGAIN;
	if (m == NULL) { /* no room for the copy: kept in the sender's buffer */
		copy = false;
		m = malloc(sizeof(*m));
		if (m == NULL)
			return -FI_EAGAIN;
	}
	m->sop = NULL;
	rc = copy ? tfi_gather(m->buf, t->iov, t->n) : keep_send(ep, t, m);
	if (rc != 0) {
		free(m);
		return rc;
	}
	m->vtag = t->vtag;
	m->has_data = t->data != NULL;
	m->data = t->data != NULL ? *t->data : 0;
	m->claim_ctx = NULL;
	m->len = t->total;
	if (copy)
		ep->sq_bytes += t->total;
	if (rx == NULL && ep->sp_head == NULL && ep->self_cancel == NULL) {
		smsg_append(&ep->sq_head, &ep->sq_tail, m); /* no receive takes it yet */
	} else {
		/* an earlier message waits, or the receive that takes it is the engine's */
		smsg_append(&ep->sp_head, &ep->sp_tail, m);
		if (rx != NULL)
			withdraw(ep, rx);
	}
	return copy ? 0 : 1;
}

ssize_t
tfi_self_send(struct tfi_ep *ep, const struct iovec *iov, size_t n, uint64_t vtag, bool tagged,
	      void *context, bool comp, const uint64_t *data, bool copy)
{
	struct self_tx t = {.iov = iov,
			    .n = n,
			    .vtag = vtag,
			    .data = data,
			    .copy = copy,
			    .tagged = tagged,
			    .comp = comp && ep->txcq != NULL,
			    .context = context};
	int rc;

	for (size_t i = 0; i < n; i++)
		t.total += iov[i].iov_len;
	t.tx_entry = t.comp;
	if (t.comp && tfi_cq_room(ep->txcq) == 0)
		return -FI_EAGAIN;
	rc = self_send(ep, &t);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return 0; /* its completion comes when a receive takes it */
	tfi_send_posted(ep, context, tagged, t.total, t.comp);
	return 0;
}

int
tfi_self_start(struct tfi_ep *ep, struct tfi_op *op)
{
	struct iovec v = {.iov_base = (void *)(uintptr_t)op->sbuf, .iov_len = op->len};
	struct self_tx t = {.iov = &v,
			    .n = op->len > 0 ? 1 : 0,
			    .total = op->len,
			    .vtag = op->vtag,
			    .data = op->has_data ? &op->data : NULL,
			    .tx_entry = op->comp,
			    .op = op};
	int rc = self_send(ep, &t);

	return rc >= 0 ? rc + 1 : rc == -FI_EAGAIN ? -EAGAIN : rc == -FI_EFAULT ? -EFAULT : rc;
}

int
tfi_self_recv(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
	      uint64_t ignore)
{
	struct tfi_smsg *m, *prev;
	bool mine;

	op->dst = src;
	op->vtag = vtag;
	op->data = ignore;
	op->seq = ++ep->rx_seq;
	if (!rx_may_self(ep, src, &mine))
		return 0;
	m = sq_find(ep, vtag, ignore, &prev);
	if (m != NULL) {
		if (tfi_cq_room(ep->rxcq) == 0)
			return -FI_EAGAIN;
		smsg_unlink(&ep->sq_head, &ep->sq_tail, prev, m);
		msg_deliver(ep, op, m, false);
		return 1;
	}
	if (!mine)
		return 0; /* the engine gets it, and ep->any records it */
	op->txq = TFI_SELF_RX;
	tfi_opq_append(&ep->srx_head, &ep->srx_tail, op);
	return 1;
}

int
tfi_self_peek(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
	      uint64_t ignore, int ck)
{
	struct tfi_smsg *m, *prev;
	bool mine;

	if (!rx_may_self(ep, src, &mine))
		return 0;
	m = sq_find(ep, vtag, ignore, &prev);
	if (m == NULL && !mine)
		return 0; /* the engine's messages */
	if (tfi_cq_room(ep->rxcq) == 0)
		return -FI_EAGAIN;
	op->claim = TFI_CLAIM_NONE; /* (no VNI claim to record) */
	if (m == NULL) {
		tfi_op_fail(ep, op, -ENOMSG);
		return 1;
	}
	if (ck == TFI_CLAIM_PEEK || ck == TFI_CLAIM_PEEK_DISCARD)
		smsg_unlink(&ep->sq_head, &ep->sq_tail, prev, m);
	m->claim_ctx = op->context; /* (op is free once completed) */
	tfi_op_done(ep, op, 0, m->len, ep->info.self, m->vtag, m->has_data ? &m->data : NULL);
	if (ck == TFI_CLAIM_PEEK) {
		m->next = ep->sclaimed;
		ep->sclaimed = m;
	} else if (ck == TFI_CLAIM_PEEK_DISCARD) {
		msg_drop(ep, m);
	}
	return 1;
}

bool
tfi_self_claim_known(const struct tfi_ep *ep, const void *context)
{
	for (const struct tfi_smsg *m = ep->sclaimed; m != NULL; m = m->next)
		if (m->claim_ctx == context)
			return true;
	return false;
}

int
tfi_self_claimed(struct tfi_ep *ep, struct tfi_op *op, bool discard)
{
	struct tfi_smsg **pp = &ep->sclaimed, *m;

	while (*pp != NULL && (*pp)->claim_ctx != op->context)
		pp = &(*pp)->next;
	m = *pp;
	if (m == NULL)
		return 0;
	if (tfi_cq_room(ep->rxcq) == 0)
		return -FI_EAGAIN;
	*pp = m->next;
	op->claim = TFI_CLAIM_NONE;
	if (discard) { /* answers like a probe */
		tfi_op_done(ep, op, 0, m->len, ep->info.self, m->vtag,
			    m->has_data ? &m->data : NULL);
		msg_drop(ep, m);
	} else {
		msg_deliver(ep, op, m, false);
	}
	return 1;
}

bool
tfi_self_complete(struct tfi_ep *ep, struct tfi_op *op, int status)
{
	struct tfi_smsg *m = ep->sp_head;

	any_unlink(ep, op);
	if (op != ep->self_cancel)
		return false;
	ep->self_cancel = NULL;
	ep->self_cancel_owed = false;
	/* completed by a message from elsewhere (or failed): the waiting messages are matched
	 * again at the next progress */
	if (status != -ECANCELED || m == NULL)
		return false;
	smsg_unlink(&ep->sp_head, &ep->sp_tail, NULL, m);
	msg_deliver(ep, op, m, true); /* (one of the engine's completions: its entry only) */
	return true;
}

int
tfi_self_cancel(struct tfi_ep *ep, struct tfi_op *op)
{
	if (op->txq != TFI_SELF_RX)
		return 0;
	if (ep->rxcq != NULL && tfi_cq_room(ep->rxcq) == 0)
		return -FI_EAGAIN;
	srx_unlink(ep, op);
	tfi_op_fail(ep, op, -ECANCELED);
	return 1;
}

/* The interface is dead: receives from itself fail, and sends kept in their buffers (no
 * receive can take them now). */
static void
fail_dead(struct tfi_ep *ep)
{
	struct tfi_smsg **lists[2] = {&ep->sq_head, &ep->sp_head};
	struct tfi_smsg **tails[2] = {&ep->sq_tail, &ep->sp_tail};

	while (ep->srx_head != NULL && tfi_cq_room(ep->rxcq) > 0) {
		struct tfi_op *op = ep->srx_head;

		srx_unlink(ep, op);
		tfi_op_fail(ep, op, -ECONNRESET);
	}
	for (int i = 0; i < 2; i++) {
		struct tfi_smsg *prev = NULL, *m = *lists[i];

		while (m != NULL) {
			struct tfi_smsg *next = m->next;

			if (m->sop != NULL) {
				smsg_unlink(lists[i], tails[i], prev, m);
				send_end(ep, m->sop, -ECONNRESET, false);
				free(m);
			} else {
				prev = m;
			}
			m = next;
		}
	}
}

void
tfi_self_progress(struct tfi_ep *ep)
{
	while (ep->sdone_head != NULL && tfi_cq_room(ep->txcq) > 0) {
		struct tfi_op *op = tfi_opq_pop(&ep->sdone_head, &ep->sdone_tail);

		op->txq = TFI_TXQ_NONE;
		tfi_op_done(ep, op, op->vop, 0, ep->info.self, 0, NULL);
	}
	if (ep->self_cancel_owed)
		withdraw(ep, ep->self_cancel);
	if (ep->dead) /* no receive can be posted any more */
		fail_dead(ep);
	while (ep->sp_head != NULL && ep->self_cancel == NULL) {
		struct tfi_smsg *m = ep->sp_head;
		struct tfi_op *rx = first_rx(ep, m->vtag);

		if (rx != NULL && !rx_local(rx)) {
			withdraw(ep, rx);
			break;
		}
		if (rx != NULL && (ep->rxcq == NULL || tfi_cq_room(ep->rxcq) == 0))
			break;
		smsg_unlink(&ep->sp_head, &ep->sp_tail, NULL, m);
		if (rx == NULL) { /* no receive takes it yet */
			smsg_append(&ep->sq_head, &ep->sq_tail, m);
			continue;
		}
		rx_take(ep, rx);
		msg_deliver(ep, rx, m, false);
	}
}

void
tfi_self_close(struct tfi_ep *ep)
{
	struct tfi_smsg *lists[3] = {ep->sq_head, ep->sp_head, ep->sclaimed};

	for (int i = 0; i < 3; i++)
		while (lists[i] != NULL) {
			struct tfi_smsg *m = lists[i];

			lists[i] = m->next;
			free(m);
		}
	ep->sq_head = ep->sq_tail = ep->sp_head = ep->sp_tail = ep->sclaimed = NULL;
}
