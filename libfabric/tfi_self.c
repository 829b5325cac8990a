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
	while (a != NULL && !rx_takes(a, vtag))
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
 * buffer was not writable): truncated to its room (FI_ETRUNC), or FI_EFAULT. */
static void
rx_end(struct tfi_ep *ep, struct tfi_op *op, bool fault, size_t len, uint64_t vtag, bool has_data,
       uint64_t data)
{
	int st = fault ? -EFAULT : len > op->len ? -EMSGSIZE : 0;

	ep->self_msgs++;
	tfi_op_done(ep, op, st, len, ep->info.self, vtag, has_data ? &data : NULL);
	if (ep->rxcq != NULL)
		tfi_cq_kick(ep->rxcq);
}

/* Deliver a message of @p len bytes at @p src (the provider's memory) into receive @p op and
 * complete it. */
static void
rx_deliver(struct tfi_ep *ep, struct tfi_op *op, const void *src, size_t len, uint64_t vtag,
	   bool has_data, uint64_t data)
{
	size_t k = len < op->len ? len : op->len;
	bool fault = false;

	if (k > 0) {
		if (op->bounce != NULL)
			memcpy(op->bounce, src, k); /* scattered by the completion */
		else
			fault = tfi_scatter(op->iov, op->iov_n, src, k) != 0;
	}
	rx_end(ep, op, fault, len, vtag, has_data, data);
}

/* A send of @p n iovs (@p total bytes) straight into local receive @p rx, which it completes:
 * one copy. 0, or -FI_EFAULT when the send's own buffer is not readable (@p rx untouched in
 * its lists, perhaps written). */
static int
rx_direct(struct tfi_ep *ep, struct tfi_op *rx, const struct iovec *iov, size_t n, size_t total,
	  uint64_t vtag, const uint64_t *data)
{
	size_t k = total < rx->len ? total : rx->len;
	bool fault = false;

	if (tfi_copy_iov(rx->iov, rx->iov_n, iov, n, k) != 0) {
		/* which side: the sender's buffer, or the receiver's */
		void *tmp = malloc(total > 0 ? total : 1);

		if (tmp == NULL)
			return -FI_EAGAIN;
		fault = tfi_gather(tmp, iov, n) == 0;
		free(tmp);
		if (!fault)
			return -FI_EFAULT;
	}
	rx_take(ep, rx);
	rx_end(ep, rx, fault, total, vtag, data != NULL, data ? *data : 0);
	return 0;
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

/* A message to itself of @p n iovs with @p vtag and @p data: delivered into the receive that
 * takes it, or queued. 0, -FI_EAGAIN (no CQ room, or the queue is full), -FI_EFAULT. */
static int
self_send(struct tfi_ep *ep, const struct iovec *iov, size_t n, size_t total, uint64_t vtag,
	  const uint64_t *data)
{
	struct tfi_op *rx = NULL;
	struct tfi_smsg *m;
	int rc;

	if (ep->sp_head == NULL && ep->self_cancel == NULL)
		rx = first_rx(ep, vtag);
	if (rx != NULL && rx_local(rx)) {
		if (ep->rxcq == NULL || tfi_cq_room(ep->rxcq) == 0)
			return -FI_EAGAIN;
		return rx_direct(ep, rx, iov, n, total, vtag, data);
	}
	if (ep->sq_bytes + total > TFI_SELF_QUEUE_MAX)
		return -FI_EAGAIN;
	m = malloc(sizeof(*m) + total);
	if (m == NULL)
		return -FI_EAGAIN;
	rc = tfi_gather(m->buf, iov, n);
	if (rc != 0) {
		free(m);
		return rc;
	}
	m->vtag = vtag;
	m->has_data = data != NULL;
	m->data = data != NULL ? *data : 0;
	m->claim_ctx = NULL;
	m->len = total;
	ep->sq_bytes += total;
	if (rx == NULL && ep->sp_head == NULL && ep->self_cancel == NULL) {
		smsg_append(&ep->sq_head, &ep->sq_tail, m); /* no receive takes it yet */
		return 0;
	}
	/* an earlier message waits, or the receive that takes it is the engine's */
	smsg_append(&ep->sp_head, &ep->sp_tail, m);
	if (rx != NULL)
		withdraw(ep, rx);
	return 0;
}

ssize_t
tfi_self_send(struct tfi_ep *ep, const struct iovec *iov, size_t n, uint64_t vtag, bool tagged,
	      void *context, bool comp, const uint64_t *data)
{
	size_t total = 0;
	int rc;

	for (size_t i = 0; i < n; i++)
		total += iov[i].iov_len;
	comp = comp && ep->txcq != NULL;
	if (comp && tfi_cq_room(ep->txcq) == 0)
		return -FI_EAGAIN;
	rc = self_send(ep, iov, n, total, vtag, data);
	if (rc != 0)
		return rc;
	if (comp) {
		struct tfi_cqe e;

		memset(&e, 0, sizeof(e));
		e.e.op_context = context;
		e.e.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
		e.e.len = total;
		e.src = FI_ADDR_NOTAVAIL;
		tfi_cq_push(ep->txcq, &e);
		tfi_cq_kick(ep->txcq);
	}
	tfi_cntr_report(ep, FI_SEND, 0);
	return 0;
}

int
tfi_self_start(struct tfi_ep *ep, struct tfi_op *op)
{
	struct iovec v = {.iov_base = (void *)(uintptr_t)op->sbuf, .iov_len = op->len};
	int rc = self_send(ep, &v, op->len > 0 ? 1 : 0, op->len, op->vtag,
			   op->has_data ? &op->data : NULL);

	return rc == -FI_EAGAIN ? -EAGAIN : rc == -FI_EFAULT ? -EFAULT : rc;
}

int
tfi_self_recv(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
	      uint64_t ignore)
{
	struct tfi_smsg *m, *prev;
	bool mine = from_self(ep, src);

	op->dst = src;
	op->vtag = vtag;
	op->data = ignore;
	op->seq = ++ep->rx_seq;
	if (!tfi_params.self || (!mine && src.app != TRD_VNI_ANY))
		return 0;
	m = sq_find(ep, vtag, ignore, &prev);
	if (m != NULL) {
		if (tfi_cq_room(ep->rxcq) == 0)
			return -FI_EAGAIN;
		smsg_unlink(&ep->sq_head, &ep->sq_tail, prev, m);
		ep->sq_bytes -= m->len;
		rx_deliver(ep, op, m->buf, m->len, m->vtag, m->has_data, m->data);
		free(m);
		return 1;
	}
	if (!mine)
		return 0; /* the engine gets it, and ep->any records it */
	op->txq = TFI_SELF_RX;
	op->next = NULL;
	if (ep->srx_tail != NULL)
		ep->srx_tail->next = op;
	else
		ep->srx_head = op;
	ep->srx_tail = op;
	return 1;
}

int
tfi_self_peek(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
	      uint64_t ignore, int ck)
{
	struct tfi_smsg *m, *prev;
	bool mine = from_self(ep, src);

	if (!tfi_params.self || (!mine && src.app != TRD_VNI_ANY))
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
		ep->sq_bytes -= m->len;
		free(m);
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
	ep->sq_bytes -= m->len;
	op->claim = TFI_CLAIM_NONE;
	if (discard) /* answers like a probe */
		tfi_op_done(ep, op, 0, m->len, ep->info.self, m->vtag,
			    m->has_data ? &m->data : NULL);
	else
		rx_deliver(ep, op, m->buf, m->len, m->vtag, m->has_data, m->data);
	free(m);
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
	ep->sq_bytes -= m->len;
	rx_deliver(ep, op, m->buf, m->len, m->vtag, m->has_data, m->data);
	free(m);
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

void
tfi_self_progress(struct tfi_ep *ep)
{
	if (ep->self_cancel_owed)
		withdraw(ep, ep->self_cancel);
	while (ep->dead && ep->srx_head != NULL && tfi_cq_room(ep->rxcq) > 0) {
		struct tfi_op *op = ep->srx_head;

		srx_unlink(ep, op);
		tfi_op_fail(ep, op, -ECONNRESET);
	}
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
		ep->sq_bytes -= m->len;
		rx_take(ep, rx);
		rx_deliver(ep, rx, m->buf, m->len, m->vtag, m->has_data, m->data);
		free(m);
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
