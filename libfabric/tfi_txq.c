/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FI_FENCE and remote CQ data on RMA writes (docs/libfabric.md, "Fences" and "Remote CQ data
 * on RMA writes").
 *
 * Fence: a transmit (send, RMA, atomic) posted with FI_FENCE while an earlier transmit of the
 * endpoint has not completed is not given to the VNI: it is held, with what starting it needs
 * (struct tfi_op's destination, buffer, remote address and key, operands), in the endpoint's
 * queue, and every transmit posted after it is held behind it, so that posting order holds.
 * Progress (tfi_ep_progress) starts the queue's head as soon as it may: a fenced transmit when
 * no earlier one is outstanding any more, the others at once.
 *
 * Remote CQ data on a write (fi_writedata, fi_inject_writedata, FI_REMOTE_CQ_DATA on
 * fi_writemsg): the VNI's one-sided write carries no data for the target's application. When
 * the write has completed (the target's engine wrote the bytes), the initiator's provider
 * sends the target endpoint a notice: a message with the VNI tag TFI_RDATA_TAG, the 64-bit
 * data as its immediate data and the write's length as its 8 bytes. The target's provider
 * keeps TFI_RDATA_RECV receives posted for that tag (no application receive can match it)
 * and turns each notice into an rx CQ entry with FI_REMOTE_CQ_DATA | FI_RMA |
 * FI_REMOTE_WRITE. The write completes at the initiator when the notice was delivered.
 */
#include <errno.h>
#include <string.h>

#include "tfi.h"

static bool
is_tx(const struct tfi_op *op)
{
	return op->kind == TFI_OP_SEND || op->kind == TFI_OP_WRITE || op->kind == TFI_OP_READ ||
	       op->kind == TFI_OP_ATOMIC;
}

/* Is a transmit of @p ep outstanding: given to the VNI and not completed? */
static bool
tx_busy(const struct tfi_ep *ep)
{
	for (unsigned int i = 0; i < tfi_op_total(ep); i++) {
		const struct tfi_op *op = tfi_op_nth(ep, i);

		if (is_tx(op) && op->txq != TFI_TXQ_HELD)
			return true;
	}
	return false;
}

bool
tfi_txq_hold(const struct tfi_ep *ep, bool fence)
{
	return ep->txq_head != NULL || (fence && tx_busy(ep));
}

void
tfi_opq_append(struct tfi_op **head, struct tfi_op **tail, struct tfi_op *op)
{
	op->next = NULL;
	if (*tail != NULL)
		(*tail)->next = op;
	else
		*head = op;
	*tail = op;
}

struct tfi_op *
tfi_opq_pop(struct tfi_op **head, struct tfi_op **tail)
{
	struct tfi_op *op = *head;

	*head = op->next;
	if (*head == NULL)
		*tail = NULL;
	op->next = NULL;
	return op;
}

void
tfi_txq_add(struct tfi_ep *ep, struct tfi_op *op, bool fence)
{
	op->txq = TFI_TXQ_HELD;
	op->fence = fence;
	tfi_opq_append(&ep->txq_head, &ep->txq_tail, op);
}

static void
txq_push_head(struct tfi_ep *ep, struct tfi_op *op)
{
	op->next = ep->txq_head;
	ep->txq_head = op;
	if (ep->txq_tail == NULL)
		ep->txq_tail = op;
}

static struct tfi_op *
txq_pop(struct tfi_ep *ep)
{
	return tfi_opq_pop(&ep->txq_head, &ep->txq_tail);
}

/* The notice of a write with remote CQ data: its length as 8 bytes, the data as immediate
 * data (copied by the VNI at posting: short). */
static int
notice_send(struct tfi_ep *ep, struct tfi_op *op)
{
	uint64_t w = op->len;

	return trd_vni_senddata(ep->vni, op->dst, TFI_RDATA_TAG, op->data, &w, sizeof(w), -1,
				(uint64_t)(uintptr_t)op);
}

int
tfi_tx_start(struct tfi_ep *ep, struct tfi_op *op)
{
	uint64_t cookie = (uint64_t)(uintptr_t)op;

	switch (op->kind) {
	case TFI_OP_SEND:
		if (tfi_self_is(ep, op->dst)) /* tfi_self.c */
			return tfi_self_start(ep, op);
		if (op->has_data)
			return trd_vni_senddata(ep->vni, op->dst, op->vtag, op->data, op->sbuf,
						op->len, -1, cookie);
		return trd_vni_send(ep->vni, op->dst, op->vtag, op->sbuf, op->len, -1, cookie);
	case TFI_OP_WRITE:
		if (op->txq == TFI_TXQ_NOTICE)
			return notice_send(ep, op);
		return trd_vni_write(ep->vni, op->dst, op->sbuf, op->len, op->raddr, op->rkey, -1,
				     cookie);
	case TFI_OP_READ:
		return trd_vni_read(ep->vni, op->dst, (void *)(uintptr_t)op->sbuf, op->len,
				    op->raddr, op->rkey, -1, cookie);
	case TFI_OP_ATOMIC:
		return trd_vni_atomic(ep->vni, op->dst, (enum trd_vni_aop)op->vop, op->asize,
				      op->operand, op->cmp, op->raddr, op->rkey, -1, cookie);
	default:
		return -EINVAL;
	}
}

int
tfi_rdata_notice(struct tfi_ep *ep, struct tfi_op *op)
{
	int rc;

	op->has_data = false; /* its next completion is the notice's */
	rc = notice_send(ep, op);
	if (rc == -EAGAIN) { /* the send ring is full: first in the queue */
		op->txq = TFI_TXQ_NOTICE;
		txq_push_head(ep, op);
		return 0;
	}
	if (rc == -ECONNRESET)
		ep->dead = true;
	return rc;
}

/* Post the notice receive @p op (its 8-byte pool buffer in op->bounce). */
static int
rdata_post(struct tfi_ep *ep, struct tfi_op *op)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};

	op->kind = TFI_OP_RECV;
	op->rdata = true;
	op->tagged = false;
	op->peek = false;
	op->comp = false;
	op->context = NULL;
	op->len = sizeof(uint64_t);
	op->iov_n = 0;
	return trd_vni_recv_mask(ep->vni, any, TFI_RDATA_TAG, 0, op->bounce, sizeof(uint64_t), -1,
				 (uint64_t)(uintptr_t)op);
}

static void
rdata_refill(struct tfi_ep *ep)
{
	while (ep->rdata_missing > 0 && !ep->dead) {
		struct tfi_op *op = tfi_op_get(ep);

		if (op == NULL)
			return;
		op->bounce = trd_vni_alloc(ep->vni, sizeof(uint64_t));
		if (op->bounce == NULL || rdata_post(ep, op) != 0) {
			tfi_op_put(ep, op);
			return;
		}
		ep->rdata_missing--;
		ep->rdata_posted++;
	}
}

void
tfi_rdata_enable(struct tfi_ep *ep)
{
	if (ep->vni == NULL || ep->rxcq == NULL || !(ep->caps & FI_RMA) ||
	    !(ep->caps & FI_REMOTE_CQ_DATA))
		return;
	/* at most an eighth of the receive contexts (FI_TOROID_CTX), at least one */
	ep->rdata_missing =
		ep->info.n_recv / 8 < TFI_RDATA_RECV ? ep->info.n_recv / 8 : TFI_RDATA_RECV;
	if (ep->rdata_missing == 0)
		ep->rdata_missing = 1;
	rdata_refill(ep);
}

void
tfi_rdata_complete(struct tfi_ep *ep, struct tfi_op *op, int status, size_t len,
		   struct trd_vni_addr peer, const uint64_t *data)
{
	if (status == 0 && data != NULL && len == sizeof(uint64_t) && ep->rxcq != NULL) {
		struct tfi_cqe e;
		uint64_t wlen;

		memcpy(&wlen, op->bounce, sizeof(wlen));
		memset(&e, 0, sizeof(e));
		e.e.flags = FI_REMOTE_CQ_DATA | FI_RMA | FI_REMOTE_WRITE;
		e.e.len = (size_t)wlen;
		e.e.data = *data;
		e.src = (ep->caps & FI_SOURCE) ? tfi_av_reverse(ep->av, peer.app, peer.proc)
					       : FI_ADDR_NOTAVAIL;
		tfi_cq_push(ep->rxcq, &e);
	} else if (status == 0 || status == -EMSGSIZE) {
		/* anyone may send to the tag: a notice not as the provider sends it is dropped */
		ep->rdata_dropped++;
		FI_INFO(&tfi_prov, FI_LOG_EP_DATA,
			"dropped a remote CQ data notice of %zu B from %u:%u\n", len, peer.app,
			peer.proc);
	}
	if (status == -ECONNRESET || ep->dead) {
		ep->rdata_posted--;
		tfi_op_put(ep, op);
		return;
	}
	if (rdata_post(ep, op) != 0) {
		ep->rdata_posted--;
		tfi_op_put(ep, op);
		ep->rdata_missing++;
	}
}

unsigned int
tfi_rx_reserve(const struct tfi_ep *ep)
{
	return ep->info.n_recv >= 64 ? 8 : ep->info.n_recv / 8;
}

void
tfi_rxq_add(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
	    uint64_t ignore)
{
	/* (a pool buffer is taken when the receive is given to the VNI: a thousand held
	 * receives would hold the pool otherwise) */
	if (op->bounce != NULL) {
		trd_vni_free(ep->vni, op->bounce);
		op->bounce = NULL;
	}
	op->dst = src;
	op->vtag = vtag;
	op->data = ignore;
	op->txq = TFI_RXQ_HELD;
	tfi_opq_append(&ep->rxq_head, &ep->rxq_tail, op);
}

static struct tfi_op *
rxq_pop(struct tfi_ep *ep)
{
	struct tfi_op *op = tfi_opq_pop(&ep->rxq_head, &ep->rxq_tail);

	op->txq = TFI_TXQ_NONE;
	return op;
}

void
tfi_rxq_progress(struct tfi_ep *ep)
{
	while (ep->rxq_head != NULL) {
		struct tfi_op *op = ep->rxq_head;
		int rc = -ECONNRESET;
		void *buf;

		if (!ep->dead) {
			if (trd_vni_recv_room(ep->vni) <= (int)tfi_rx_reserve(ep) ||
			    !tfi_rx_buf(ep, op, &buf))
				break; /* no context beyond the reserve, or no pool room yet */
			rc = trd_vni_recv_mask(ep->vni, op->dst, op->vtag, op->data, buf, op->len,
					       -1, (uint64_t)(uintptr_t)op);
			if (rc == 0) {
				rxq_pop(ep);
				continue;
			}
			if (op->bounce != NULL) {
				trd_vni_free(ep->vni, op->bounce);
				op->bounce = NULL;
			}
			if (rc == -EAGAIN)
				break;
		}
		/* a failure writes an error entry: it waits for room at the head */
		if (ep->rxcq != NULL && tfi_cq_room(ep->rxcq) == 0)
			break;
		rxq_pop(ep);
		if (rc == -ECONNRESET)
			ep->dead = true;
		tfi_op_fail(ep, op, rc);
	}
}

bool
tfi_rxq_remove(struct tfi_ep *ep, struct tfi_op *op)
{
	struct tfi_op **pp = &ep->rxq_head, *prev = NULL;

	if (op->txq != TFI_RXQ_HELD)
		return false;
	while (*pp != NULL && *pp != op) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (*pp == NULL)
		return false;
	*pp = op->next;
	if (ep->rxq_tail == op)
		ep->rxq_tail = prev;
	op->next = NULL;
	op->txq = TFI_TXQ_NONE;
	return true;
}

int
tfi_rxq_cancel(struct tfi_ep *ep, struct tfi_op *op)
{
	if (op->txq != TFI_RXQ_HELD)
		return 0;
	if (ep->rxcq != NULL && tfi_cq_room(ep->rxcq) == 0)
		return -FI_EAGAIN; /* (its entry would overwrite one not read yet) */
	if (!tfi_rxq_remove(ep, op))
		return 0;
	tfi_op_fail(ep, op, -ECANCELED);
	return 1;
}

void
tfi_txq_progress(struct tfi_ep *ep)
{
	while (ep->txq_head != NULL) {
		struct tfi_op *op = ep->txq_head;
		int rc;

		if (ep->dead) { /* fail what was held, as far as the CQ has room */
			if (ep->txcq != NULL && tfi_cq_room(ep->txcq) == 0)
				break;
			tfi_op_fail(ep, txq_pop(ep), -ECONNRESET);
			continue;
		}
		if (op->txq == TFI_TXQ_HELD && op->fence && tx_busy(ep))
			break; /* an earlier transmit is outstanding */
		if (ep->txcq != NULL && tfi_cq_room(ep->txcq) == 0)
			break; /* room for the error entry a failed start writes */
		rc = tfi_tx_start(ep, op);
		if (rc == -EAGAIN)
			break;
		txq_pop(ep);
		if (rc == 2)
			continue; /* a send to itself kept by tfi_self.c until a receive takes it */
		op->txq = TFI_TXQ_NONE;
		if (rc == 1) { /* a send to itself, delivered or queued (tfi_self.c) */
			tfi_op_done(ep, op, 0, 0, ep->info.self, 0, NULL);
			continue;
		}
		if (rc != 0) {
			if (rc == -ECONNRESET)
				ep->dead = true;
			tfi_op_fail(ep, op, rc);
		}
	}
	rdata_refill(ep);
}
