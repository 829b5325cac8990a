/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, transmit: sends. One vtx per message and destination (a multicast has a parent and
 * one child per destination), named on the wire by msg_id = index | generation << 16 and a random
 * key its replies must echo. Its states (enum tx_state) put it on its interface's ready queue
 * or on one of the service's lists (timer, drain, wait). The scheduler injects one packet per
 * turn, two-level round-robin (interfaces, then their messages). Replies from the receiving
 * engine (CTS, NAK, ACK, DONE, CANCEL) move it on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>

#include <rte_common.h>
#include <rte_random.h>

#include "iface_pvt.h"
#include "order_pvt.h"
#include "proto_pvt.h"
#include "rma_pvt.h"
#include "tx_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* the send table */

/* A message's key: unpredictable (the kernel's CSPRNG, 1024 keys at a time), so that who did
 * not see a request cannot answer it, even after watching earlier ones. */
static uint32_t
msg_key(struct trd_vni_svc *s)
{
	if (s->n_keys == 0) {
		if (getrandom(s->keys, sizeof(s->keys), GRND_NONBLOCK) != (ssize_t)sizeof(s->keys))
			for (unsigned int i = 0; i < RTE_DIM(s->keys); i++)
				s->keys[i] = (uint32_t)rte_rand(); /* seeded from getentropy() */
		s->n_keys = RTE_DIM(s->keys);
	}
	return s->keys[--s->n_keys];
}

static bool
ready_state(uint8_t st)
{
	return st == TX_REQ || st == TX_DATA || st == TX_FIN || st == TX_ABORT;
}

static enum list_kind
state_list(uint8_t st)
{
	switch (st) {
	case TX_BACKOFF:
	case TX_CMA:
		return L_TIMER;
	case TX_DRAIN:
		return L_DRAIN;
	case TX_WAIT:
	case TX_WAIT_DONE:
	case TX_PENDING:
		return L_WAIT;
	default:
		return L_NONE;
	}
}

static void
rq_remove(struct trd_vni_svc *s, struct vtx *t)
{
	struct vif *v = t->vif;

	if (!t->in_rq)
		return;
	TAILQ_REMOVE(&v->rq, t, rq);
	t->in_rq = false;
	if (TAILQ_EMPTY(&v->rq) && v->in_rr) {
		TAILQ_REMOVE(&s->rr, v, rr);
		v->in_rr = false;
		s->n_rr--;
	}
}

/* Not yet accepted by the receiving engine (no ACK or CTS yet): an ordered message in these
 * states keeps its place in its pair's window (order.c). */
static bool
unaccepted(uint8_t st)
{
	return st == TX_REQ || st == TX_WAIT || st == TX_BACKOFF || st == TX_HOLD;
}

void
svc_tx_set_state(struct trd_vni_svc *s, struct vtx *t, uint8_t st)
{
	enum list_kind lk;

	if (t->opair != NULL && !unaccepted(st))
		svc_ord_tx_done(s, t); /* accepted or ended: the next ones may go */
	lk = state_list(st);

	if (t->lkind != lk) {
		if (t->lkind != L_NONE)
			TAILQ_REMOVE(&s->lists[t->lkind], t, lq);
		if (lk != L_NONE)
			TAILQ_INSERT_TAIL(&s->lists[lk], t, lq);
		t->lkind = (uint8_t)lk;
	}
	if (ready_state(st) && !t->in_rq) {
		struct vif *v = t->vif;

		TAILQ_INSERT_TAIL(&v->rq, t, rq);
		t->in_rq = true;
		if (!v->in_rr) {
			TAILQ_INSERT_TAIL(&s->rr, v, rr);
			v->in_rr = true;
			s->n_rr++;
		}
	} else if (!ready_state(st)) {
		rq_remove(s, t);
	}
	t->state = st;
}

struct vtx *
svc_tx_alloc(struct trd_vni_svc *s, struct vif *v)
{
	struct vtx *t;

	if (s->n_tx_free == 0)
		return NULL;
	t = &s->tx[s->tx_free[--s->n_tx_free]];
	t->state = TX_FREE;
	t->lkind = L_NONE;
	t->eager = t->rts_sent = t->in_rq = t->uaddr = t->fifo = t->hold_nak = false;
	t->vif = v;
	t->parent = NULL;
	t->off = 0;
	t->cut = 0;
	t->grant = 0;
	t->ctr = 0;
	t->status = 0;
	t->n_left = 0;
	t->pay = NULL;
	t->pay_off = 0;
	t->rma = 0;
	t->refused = false;
	t->aop = t->acked = t->inflight = 0;
	t->aseq_held = false;
	t->opair = NULL;
	t->laddr = t->operand = t->compare = t->old = 0;
	t->held_since = 0;
	t->key = msg_key(s);
	t->backoff = s->conf.retry_us;
	TAILQ_INSERT_TAIL(&v->txs, t, oq);
	v->refs++;
	return t;
}

void
svc_tx_free(struct trd_vni_svc *s, struct vtx *t)
{
	struct vif *v = t->vif;

	svc_tx_set_state(s, t, TX_FREE);
	if (t->aseq_held)
		svc_atom_close(s, t);
	trd_payload_free(t->pay); /* packets still holding it keep it alive */
	t->pay = NULL;
	TAILQ_REMOVE(&v->txs, t, oq);
	t->gen++;
	s->tx_free[s->n_tx_free++] = t->idx;
	v->refs--;
	svc_vif_release_maybe(s, v);
}

static inline uint32_t
tx_id(const struct vtx *t)
{
	return t->idx | (uint32_t)t->gen << 16;
}

uint32_t
svc_tx_id(const struct vtx *t)
{
	return tx_id(t);
}

struct vtx *
svc_tx_lookup(struct trd_vni_svc *s, uint32_t id)
{
	struct vtx *t;

	if ((id & 0xffff) >= SVC_N_TX) /* a wire value: 16 bits, the table is smaller */
		return NULL;
	t = &s->tx[id & 0xffff];
	if (t->state == TX_FREE || t->gen != (uint16_t)(id >> 16))
		return NULL;
	return t;
}

/* ------------------------------------------------------------------------------------------ */
/* completion */

/* The send context's completion (a unicast tx, or a multicast parent). */
void
svc_tx_cqe(struct trd_vni_svc *s, struct vtx *t)
{
	struct vif *v = t->vif;

	if (t->rma != 0)
		svc_vif_cqe(s, v, t->rma, t->ctx, t->status, t->status == 0 ? t->len : 0, 0,
			    t->dst_app, t->dst_proc, (t->sflags & TRD_VNI_F_DOORBELL) != 0,
			    t->doorbell, t->status == 0 ? t->old : 0,
			    t->rma == TRD_VNI_CPL_ATOMIC && t->status == 0 ? TRD_VNI_CQE_DATA : 0);
	else /* the message's whole length, also when the receive took fewer bytes */
		svc_vif_cqe(s, v, TRD_VNI_CPL_SEND, t->ctx, t->status,
			    t->status == 0 ? t->len + t->cut : 0, t->tag, t->dst_app, t->dst_proc,
			    (t->sflags & TRD_VNI_F_DOORBELL) != 0, t->doorbell, 0, 0);
	if (t->ctx < v->n_send)
		v->sbusy[t->ctx] = 0;
}

static void
svc_tx_complete(struct trd_vni_svc *s, struct vtx *t)
{
	struct vtx *p = t->parent;

	if (t->ctr != 0) {
		trd_counter_free(s->node, t->ctr);
		t->ctr = 0;
	}
	if (p == NULL) {
		svc_tx_cqe(s, t);
		svc_tx_free(s, t);
		return;
	}
	if (t->status != 0 && p->status == 0)
		p->status = t->status;
	svc_tx_free(s, t);
	if (--p->n_left == 0) {
		svc_tx_cqe(s, p);
		svc_tx_free(s, p);
	}
}

/* The tx is over (with @p status if none yet): complete it once the engine has let go of the
 * buffer (its counter fell by every byte injected). */
void
svc_tx_finish(struct trd_vni_svc *s, struct vtx *t, int status)
{
	if (status != 0 && t->status == 0)
		t->status = status;
	if (t->ctr != 0) {
		int64_t left;

		if (trd_counter_read(s->node, t->ctr, &left) == 0 &&
		    left > (int64_t)(t->len - t->off)) {
			svc_tx_set_state(s, t, TX_DRAIN);
			return;
		}
	}
	svc_tx_complete(s, t);
}

/* ------------------------------------------------------------------------------------------ */
/* injection and the scheduler */

static void
tx_hdr(const struct trd_vni_svc *s, const struct vtx *t, uint8_t type, struct trd_vw_hdr *h)
{
	RTE_SET_USED(s);
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->src_app = t->vif->app;
	h->src_proc = t->vif->proc;
	h->dst_app = t->dst_app;
	h->dst_proc = t->dst_proc;
	h->msg_id = tx_id(t);
	h->key = t->key;
	h->grant_id = t->grant;
	h->len = t->len;
	h->tag = t->tag;
	if ((type == TRD_VW_EAGER || type == TRD_VW_RTS) && (t->sflags & TRD_VNI_SF_DATA)) {
		h->flags |= TRD_VW_F_DATA;
		h->data = t->data;
	}
	if (type == TRD_VW_EAGER || type == TRD_VW_RTS)
		svc_ord_hdr(t, h);
}

void
svc_tx_count_pkt(struct trd_vni_svc *s, struct vtx *t)
{
	struct vif *v = t->vif;

	ST(s, TX_PKTS)++;
	v->tx_pkts++;
	if (s->n_rr > 1 || (s->n_rr == 1 && !v->in_rr))
		v->tx_pkts_shared++;
	if (!v->dead)
		__atomic_store_n(&v->seg->tx_pkts, v->tx_pkts, __ATOMIC_RELAXED);
}

/* The shared payload @p t's next packet carries instead of copying (a multicast child's eager
 * message or the short last packet of its data), or NULL. */
static struct trd_payload *
shared_pay(const struct vtx *t)
{
	const struct vtx *p = t->parent;

	if (p == NULL || p->pay == NULL)
		return NULL;
	if (t->state == TX_REQ)
		return t->eager ? p->pay : NULL;
	/* not for a child whose receive took fewer bytes (a shorter CTS) */
	return !t->eager && t->len == p->len && t->off == p->pay_off ? p->pay : NULL;
}

/* A multicast child's packet: it referenced the shared payload, or its engine copied @p copied
 * bytes of data for this destination alone. */
static void
count_mcast(struct trd_vni_svc *s, const struct vtx *t, const struct trd_payload *pay,
	    uint32_t copied)
{
	if (t->parent == NULL)
		return;
	if (pay != NULL) {
		ST(s, MCAST_SHARED)++;
	} else if (copied != 0) {
		ST(s, MCAST_BUFS)++;
		ST(s, MCAST_COPY_BYTES) += copied;
	}
}

/* A short message: its data copied once, from the context slot into the packet buffer that
 * the frame references (the library's copy into the slot was the other one: docs/vni.md,
 * "Copies"). */
static int
tx_eager(struct trd_vni_svc *s, struct vtx *t, const struct trd_vw_hdr *h)
{
	struct trd_payload *pay;
	uint8_t *data;
	int rc;

	if (t->len == 0)
		return svc_vw_inject(s, s->req, t->dst, h, NULL, 0);
	rc = svc_vw_pay(s, h, t->len, &pay, &data);
	if (rc != 0)
		return rc == -ENOBUFS ? -ENOBUFS
				      : svc_vw_inject(s, s->req, t->dst, h, t->src, t->len);
	memcpy(data, t->src, t->len);
	rc = svc_vw_inject_pay(s, s->req, t->dst, h->type, pay);
	trd_payload_free(pay);
	if (rc == 0)
		ST(s, COPY_TX_SLOT) += t->len;
	return rc;
}

/* The next packet of a long message that the engine copies: from the process's memory
 * (TRD_VNI_SF_VADDR) into a put, or, for a receive in process memory (TRD_VW_F_FIFO), a DATA
 * message from either. One copy into the packet buffer, which the frame references. */
static int
tx_data_copy(struct trd_vni_svc *s, struct vtx *t)
{
	struct trd_payload *pay;
	struct trd_vw_hdr h;
	struct trd_desc d;
	uint8_t *data;
	uint32_t n;
	void *buf;
	int rc;

	if (t->dst_rank == s->rank)
		return svc_tx_data_local(s, t);
	n = RTE_MIN(t->fifo ? s->rma_chunk : s->chunk, t->len - t->off);
	if (t->fifo) {
		/* the header and the data in one buffer: the receiving engine writes the data
		 * from the packet without another copy */
		tx_hdr(s, t, TRD_VW_DATA, &h);
		h.len = n;
		h.roff = t->off;
		rc = svc_vw_pay(s, &h, n, &pay, &data);
		buf = data;
	} else {
		rc = trd_payload_alloc(s->node, n, &pay, &buf);
	}
	if (rc != 0)
		return rc;
	rc = svc_tx_read(s, t, buf, n);
	if (rc != 0) {
		trd_payload_free(pay);
		return svc_tx_fault(s, t, rc);
	}
	if (t->fifo) {
		rc = svc_vw_inject_pay(s, s->req, t->dst, TRD_VW_DATA, pay);
	} else {
		trd_desc_put(&d, t->dst, NULL, 0, t->rkey, t->roff + t->off, 0, 0);
		rc = trd_inject_payload(s->req, &d, pay);
	}
	trd_payload_free(pay);
	if (rc != 0)
		return rc;
	svc_tx_count_pkt(s, t);
	count_mcast(s, t, NULL, n);
	ST(s, TX_CHUNKS)++;
	t->off += n;
	if (t->off == t->len)
		svc_tx_set_state(s, t, TX_FIN);
	return 0;
}

/* Inject one packet for @p t. 0: done (a turn used); -ENOBUFS: the FIFO is full; -EAGAIN: this
 * tx cannot go now. */
static int
tx_step(struct trd_vni_svc *s, struct vtx *t)
{
	struct trd_payload *pay;
	struct trd_vw_hdr h;
	struct trd_desc d;
	uint32_t n;
	int rc;

	if (t->rma != 0)
		return svc_rma_step(s, t);
	switch (t->state) {
	case TX_REQ:
		tx_hdr(s, t, t->eager ? TRD_VW_EAGER : TRD_VW_RTS, &h);
		pay = shared_pay(t);
		if (pay != NULL)
			rc = svc_vw_inject_shared(s, s->req, t->dst, &h, pay);
		else if (t->eager)
			rc = tx_eager(s, t, &h);
		else
			rc = svc_vw_inject(s, s->req, t->dst, &h, NULL, 0);
		if (rc != 0)
			break;
		svc_tx_count_pkt(s, t);
		count_mcast(s, t, pay, t->eager ? t->len : 0);
		if (t->eager) {
			ST(s, TX_EAGER)++;
		} else {
			ST(s, TX_RTS)++;
			t->rts_sent = true;
		}
		svc_tx_set_state(s, t, TX_WAIT);
		return 0;
	case TX_DATA:
		/* from process memory, or into it, or to a process of this engine (copied
		 * straight into its grant, SVC_LOCAL_CHUNK a turn: no puts through the node's
		 * loopback, unless a capture records them). Decided at the first byte: a
		 * capture that starts or stops later leaves the message on its way (the puts'
		 * counter counts the whole message down, copies never would) */
		if (t->uaddr || t->fifo ||
		    (t->dst_rank == s->rank && t->parent == NULL &&
		     (t->off > 0 ? t->ctr == 0 : !trd_node_capturing(s->node)))) {
			rc = tx_data_copy(s, t);
			if (rc == 0 || rc == -EAGAIN)
				return rc;
			break;
		}
		if (t->ctr == 0) {
			if (trd_counter_alloc(s->node, &t->ctr) != 0)
				return -EAGAIN;
			trd_counter_set(s->node, t->ctr, t->len);
		}
		n = RTE_MIN(s->chunk, t->len - t->off);
		pay = shared_pay(t);
		if (pay != NULL) {
			trd_desc_put(&d, t->dst, NULL, 0, t->rkey, t->roff + t->off, t->ctr, 0);
			rc = trd_inject_payload(s->req, &d, pay);
		} else {
			trd_desc_put(&d, t->dst, t->src + t->off, n, t->rkey, t->roff + t->off,
				     t->ctr, 0);
			rc = trd_inject(s->req, &d);
		}
		if (rc != 0)
			break;
		svc_tx_count_pkt(s, t);
		count_mcast(s, t, pay, n <= s->conf.inline_max ? n : 0);
		ST(s, TX_CHUNKS)++;
		t->off += n;
		if (t->off == t->len)
			svc_tx_set_state(s, t, TX_FIN);
		return 0;
	case TX_FIN:
		tx_hdr(s, t, TRD_VW_FIN, &h);
		rc = svc_vw_inject(s, s->req, t->dst, &h, NULL, 0);
		if (rc != 0)
			break;
		svc_tx_count_pkt(s, t);
		ST(s, TX_FIN)++;
		svc_tx_set_state(s, t, TX_WAIT_DONE);
		return 0;
	case TX_ABORT:
		tx_hdr(s, t, TRD_VW_ABORT, &h);
		rc = svc_vw_inject(s, s->req, t->dst, &h, NULL, 0);
		if (rc != 0)
			break;
		svc_tx_count_pkt(s, t);
		ST(s, TX_ABORT)++;
		svc_tx_finish(s, t, t->status ? t->status : -ECONNRESET);
		return 0;
	default:
		return -EAGAIN;
	}
	if (rc == -ENOBUFS)
		return -ENOBUFS;
	/* no route, peer down, a bad descriptor: the message fails */
	svc_tx_finish(s, t, rc == -EHOSTUNREACH ? -EHOSTUNREACH : rc);
	return 0;
}

/* Request-FIFO slots in use: the scheduler keeps at most conf.backlog queued. */
static bool
backlog_full(struct trd_vni_svc *s)
{
	unsigned int free_now = trd_inj_fifo_free_count(s->req);

	return s->req_free0 - RTE_MIN(free_now, s->req_free0) >= s->conf.backlog;
}

/* Two-level round-robin: the interface at the head of the ring gets one packet for the
 * message at the head of its queue; both go to the back of their queues. */
unsigned int
svc_schedule(struct trd_vni_svc *s)
{
	unsigned int k = 0, stuck = 0;

	/* a round of copies between local processes (SVC_LOCAL_CHUNK a turn) ends after about
	 * SVC_LOCAL_ROUND bytes, so that the loop still receives, acks and times out often (64
	 * such turns would be 16 MiB, milliseconds of memcpy) */
	s->round_copied = 0;
	while (k < SVC_INJECT_BUDGET && !TAILQ_EMPTY(&s->rr) && !backlog_full(s) &&
	       s->round_copied < SVC_LOCAL_ROUND) {
		struct vif *v = TAILQ_FIRST(&s->rr);
		struct vtx *t = TAILQ_FIRST(&v->rq);
		int rc;

		/* the step may end the last message of a dead interface, which frees it (and t):
		 * hold it until the rotation is done */
		v->refs++;
		rc = tx_step(s, t);
		if (rc == -ENOBUFS) {
			v->refs--;
			svc_vif_release_maybe(s, v);
			break;
		}
		if (rc == -EAGAIN) {
			if (++stuck > 2 * s->n_ifs + 4) {
				v->refs--; /* the rotation's hold, as on every other way out */
				svc_vif_release_maybe(s, v);
				break;
			}
		} else {
			stuck = 0;
			k++;
		}
		/* rotate the message inside its interface (a freed one is in no queue), then the
		 * interface */
		if (t->state != TX_FREE && t->in_rq && TAILQ_NEXT(t, rq) != NULL) {
			TAILQ_REMOVE(&v->rq, t, rq);
			TAILQ_INSERT_TAIL(&v->rq, t, rq);
		}
		if (v->in_rr && TAILQ_NEXT(v, rr) != NULL) {
			TAILQ_REMOVE(&s->rr, v, rr);
			TAILQ_INSERT_TAIL(&s->rr, v, rr);
		}
		v->refs--;
		svc_vif_release_maybe(s, v);
	}
	return k;
}

/* ------------------------------------------------------------------------------------------ */
/* replies from the receiving engine */

/* The statuses a reply may carry (docs/vni.md, "Refusals"): anything else is not from an
 * engine that speaks this protocol, and never reaches an application. */
static bool
reply_status_ok(uint8_t type, int32_t st)
{
	switch (type) {
	case TRD_VW_CTS:
		return st == 0;
	case TRD_VW_NAK:
		return st == -ENOSPC || st == -ECONNREFUSED || st == -EMSGSIZE;
	case TRD_VW_ACK:
		return st == 0 || st == -EMSGSIZE;
	case TRD_VW_DONE:
		return st == 0 || st == -EMSGSIZE || st == -ECONNRESET || st == -EPROTO;
	case TRD_VW_CANCEL:
		return st == -ECONNRESET;
	default:
		return false;
	}
}

/* A reply (CTS, NAK, ACK, DONE, CANCEL) from node @p src_rank. It counts only if it names a
 * live message of ours, comes from the node and process the message was sent to, echoes the
 * message's key and carries a status the protocol defines; otherwise it is dropped and counted
 * (bad_replies). A late permission for a message that ended is a duplicate (dup_cts). */
void
svc_on_reply(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h)
{
	struct vtx *t = svc_tx_lookup(s, h->msg_id);
	uint32_t cap;

	if (t == NULL) {
		if (h->type == TRD_VW_CTS && h->status == 0)
			ST(s, DUP_CTS)++;
		else
			ST(s, BAD_REPLIES)++;
		return;
	}
	if (t->parent == NULL && t->state == TX_MCAST) {
		ST(s, BAD_REPLIES)++; /* a multicast parent is never on the wire */
		return;
	}
	if (t->key != h->key || t->dst_rank != src_rank || h->src_app != t->dst_app ||
	    h->src_proc != t->dst_proc || h->dst_app != t->vif->app ||
	    h->dst_proc != t->vif->proc || !reply_status_ok(h->type, h->status)) {
		ST(s, BAD_REPLIES)++;
		return;
	}
	switch (h->type) {
	case TRD_VW_CTS:
		if (t->eager ||
		    (t->state != TX_WAIT && t->state != TX_BACKOFF && t->state != TX_PENDING)) {
			ST(s, DUP_CTS)++; /* a permission we already have */
			return;
		}
		if (h->len > t->len) {
			ST(s, BAD_REPLIES)++;
			return;
		}
		/* a shorter permission: the receive is shorter than the message and takes its
		 * first h->len bytes (docs/vni.md, "Truncation"): only those are sent */
		t->cut = t->len - h->len;
		t->len = h->len;
		t->grant = h->grant_id;
		t->rkey = h->rkey;
		t->roff = h->roff;
		t->fifo = (h->flags & TRD_VW_F_FIFO) != 0;
		svc_tx_set_state(s, t, t->len == 0 ? TX_FIN : TX_DATA);
		return;
	case TRD_VW_NAK:
		if (t->state != TX_WAIT)
			return;
		ST(s, NAK_RECEIVED)++;
		t->vif->naks++;
		if (!t->vif->dead)
			__atomic_store_n(&t->vif->seg->naks, t->vif->naks, __ATOMIC_RELAXED);
		if (h->status == -EMSGSIZE ||
		    (h->status == -ECONNREFUSED && s->now >= t->noproc_deadline)) {
			svc_tx_finish(s, t, h->status);
			return;
		}
		/* held at its sender (rx.c, hold_at_sender): the receive grants it at once when
		 * it is posted (a hint), so it is asked again only when the hold ends, to be
		 * staged then; the engine may sleep meanwhile */
		if (t->hold_nak) {
			t->hold_nak = false;
			t->due = t->held_since + s->conf.cma_hold_us;
			if (t->opair != NULL)
				t->opair->held_tx = t; /* another of its pair asks it again */
			svc_tx_set_state(s, t, TX_BACKOFF);
			return;
		}
		/* refused for room (-ENOSPC): its receiver is there and frees room as its
		 * process receives, so it is asked again soon (at most SVC_NOSPC_BACKOFF
		 * retry_us); a process not attached (-ECONNREFUSED) backs off to 64 retry_us */
		cap = (h->status == -ENOSPC ? SVC_NOSPC_BACKOFF : 64) * s->conf.retry_us;
		t->backoff = RTE_MIN(t->backoff, cap);
		t->due = s->now + t->backoff;
		if (t->backoff < cap)
			t->backoff *= 2;
		svc_tx_set_state(s, t, TX_BACKOFF);
		return;
	case TRD_VW_ACK:
		if (t->state == TX_WAIT && t->eager && h->status == 0 &&
		    (h->flags & TRD_VW_F_HDR)) {
			/* an eager message its receiver had no room to stage, kept as its header
			 * only: the bytes stay in the context slot or pool, and go as a long
			 * message's do when the receive's CTS comes (docs/vni.md); the next
			 * ordered ones may go. A process that died meanwhile withdraws it. */
			t->eager = false;
			t->rts_sent = true;
			t->status = t->vif->dead ? -ECONNRESET : 0;
			svc_tx_set_state(s, t, t->vif->dead ? TX_ABORT : TX_PENDING);
		} else if (t->state == TX_WAIT && t->eager)
			svc_tx_finish(s, t, h->status);
		else if (t->state == TX_WAIT && t->rma == 0 && h->status == 0)
			/* a request accepted as its header only: its CTS comes when the
			 * receive is posted (docs/vni.md); the next ordered ones may go */
			svc_tx_set_state(s, t, TX_PENDING);
		return;
	case TRD_VW_DONE:
		/* or the answer to a request whose message the receiver dropped unread (a
		 * discard of a message claimed while refused: docs/vni.md) */
		if (t->state == TX_WAIT_DONE || ((t->state == TX_WAIT || t->state == TX_PENDING) &&
						 !t->eager && h->status == 0 && h->grant_id == 0))
			svc_tx_finish(s, t, h->status);
		return;
	case TRD_VW_CANCEL:
		if (t->state == TX_DATA || t->state == TX_CMA || t->state == TX_FIN) {
			t->status = h->status;
			svc_tx_set_state(s, t, TX_ABORT);
		} else if (t->state == TX_PENDING && h->grant_id != 0) {
			/* its receiver died after it granted the header staging (rx_grant.c), a
			 * CTS this one has not seen: the ABORT frees that grant */
			t->grant = h->grant_id;
			t->status = h->status;
			svc_tx_set_state(s, t, TX_ABORT);
		} else if (t->state == TX_PENDING) {
			svc_tx_finish(s, t, h->status); /* its receiver died: nothing was sent */
		}
		return;
	default:
		return;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* timers (dispatch.c's tick) */

void
svc_tx_ask_again(struct trd_vni_svc *s, uint32_t src_rank, uint32_t msg, uint32_t key)
{
	struct vtx *t = src_rank == s->rank ? svc_tx_lookup(s, msg) : NULL;

	if (t != NULL && t->key == key && t->state == TX_BACKOFF)
		t->due = s->now;
}

/* Refused requests asked again when their back-off ends, messages whose CMA request is still
 * unanswered looked at again, and sends completed once the engine no longer reads their
 * buffer. */
unsigned int
svc_tx_timers(struct trd_vni_svc *s)
{
	struct vtx *t, *tn;
	unsigned int k = 0;

	for (t = TAILQ_FIRST(&s->lists[L_TIMER]); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, lq);
		if (s->now < t->due)
			continue;
		if (t->state == TX_CMA) {
			svc_tx_set_state(s, t, TX_DATA); /* unanswered yet: looked at again */
		} else {
			ST(s, RETRIES)++;
			svc_tx_set_state(s, t, TX_REQ);
		}
		k++;
	}
	for (t = TAILQ_FIRST(&s->lists[L_DRAIN]); t != NULL; t = tn) {
		int64_t left;

		tn = TAILQ_NEXT(t, lq);
		if (trd_counter_read(s->node, t->ctr, &left) != 0 ||
		    left <= (int64_t)(t->len - t->off)) {
			svc_tx_complete(s, t);
			k++;
		}
	}
	return k;
}

/* Sends waiting for an answer from a peer that went down end with -EHOSTUNREACH; the others
 * are looked at for lost one-sided frames (rma.c). */
void
svc_tx_peer_sweep(struct trd_vni_svc *s)
{
	struct vtx *t, *tn;

	for (t = TAILQ_FIRST(&s->lists[L_WAIT]); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, lq);
		if (trd_node_peer_up(s->node, t->dst) == 0)
			svc_tx_finish(s, t, -EHOSTUNREACH);
		else
			svc_rma_stall(s, t);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* an interface that died (dispatch.c's svc_vif_gone) */

/* Its sends: stop what is not granted, give up what is, let finished data finish. */
void
svc_tx_vif_gone(struct trd_vni_svc *s, struct vif *v, struct svc_gone *n)
{
	struct vtx *t, *tn;

	for (t = TAILQ_FIRST(&v->txs); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, oq);
		if (t->rma != 0) {
			/* one-sided: nothing at the target to withdraw; late answers are dropped */
			svc_tx_finish(s, t, -ECONNRESET);
			n->tx_drop++;
			continue;
		}
		switch (t->state) {
		case TX_REQ:
		case TX_BACKOFF:
		case TX_HOLD:
			if (t->rts_sent) {
				t->status = -ECONNRESET;
				/* the receiver may hold a hint */
				svc_tx_set_state(s, t, TX_ABORT);
				n->tx_abort++;
			} else {
				svc_tx_finish(s, t, -ECONNRESET);
				n->tx_drop++;
			}
			break;
		case TX_WAIT:
			if (!t->eager) {
				t->status = -ECONNRESET;
				svc_tx_set_state(s, t, TX_ABORT); /* a CTS may be on its way */
				n->tx_abort++;
			} else {
				n->tx_finish++;
			}
			break;
		case TX_DATA:
		case TX_CMA:
		case TX_PENDING: /* the receiver holds its header: withdrawn */
			t->status = -ECONNRESET;
			svc_tx_set_state(s, t, TX_ABORT);
			n->tx_abort++;
			break;
		case TX_MCAST:
			break;
		default: /* FIN (all data injected), WAIT_DONE, DRAIN: they end by themselves */
			n->tx_finish++;
			break;
		}
	}
}
