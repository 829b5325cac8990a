/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, receive: the receive state machine. The protocol messages from the reception FIFO,
 * checked and decoded (dispatch.c), and the requests among them: an eager message is delivered into
 * a posted receive or held in staging; a request to send is granted (into a posted receive or into
 * staging) or refused with a NAK; a FIN completes a grant; an ABORT ends one. Replies go to
 * proto_tx.c; grants and staging are in rx_grant.c. The receive commands are here too: a
 * receive posted (matched against the unexpected messages, or granted from a hint), cancelled,
 * probed, claimed (docs/vni.md, "Claim and discard"), and the answers to CMA requests.
 */
#include <errno.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_random.h>

#include "iface_pvt.h"
#include "order_pvt.h"
#include "proto_pvt.h"
#include "rx_pvt.h"
#include "tx_pvt.h"
#include "vmem_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* The first unexpected message of @p v that receive @p r matches, in arrival order. */
static struct vrx *
uq_find(struct trd_vni_svc *s, struct vif *v, const struct vrecv *r)
{
	struct vrx *x;

	if (r->src_app != TRD_VNI_ANY && r->src_proc != TRD_VNI_ANY) {
		TAILQ_FOREACH(x, svc_uq_list(v, r->src_app, r->src_proc), us)
		{
			ST(s, MATCH_WALKED)++;
			if (svc_recv_match(r, x->src_app, x->src_proc, x->tag))
				return x;
		}
		return NULL;
	}
	TAILQ_FOREACH(x, &v->uq, uq)
	{
		ST(s, MATCH_WALKED)++;
		if (svc_recv_match(r, x->src_app, x->src_proc, x->tag))
			return x;
	}
	return NULL;
}

/* posted receives */

/* Receive @p r of @p v posted: after all others. */
static void
posted_add(struct vif *v, struct vrecv *r)
{
	r->pseq = ++v->post_seq;
	TAILQ_INSERT_TAIL(svc_posted_list(v, r), r, pq);
	r->posted = true;
	v->n_posted++;
}

/* Receive @p r, just taken by posted_take(), put back in its place. */
static void
posted_put_back(struct vif *v, struct vrecv *r)
{
	struct vrecv_list *l = svc_posted_list(v, r);
	struct vrecv *it;

	TAILQ_FOREACH(it, l, pq)
	if (it->pseq > r->pseq)
		break;
	if (it != NULL)
		TAILQ_INSERT_BEFORE(it, r, pq);
	else
		TAILQ_INSERT_TAIL(l, r, pq);
	r->posted = true;
	v->n_posted++;
}

/* The receive of @p v that a message from (@p app, @p proc) with @p tag takes: the first
 * posted that matches it, taken out of the lists; or NULL. */
static struct vrecv *
posted_take(struct trd_vni_svc *s, struct vif *v, uint32_t app, uint32_t proc, uint64_t tag)
{
	struct vrecv *r, *from = NULL, *any = NULL;

	TAILQ_FOREACH(r, &v->posted_src[svc_src_hash(app, proc)], pq)
	{
		ST(s, MATCH_WALKED)++;
		if (svc_recv_match(r, app, proc, tag)) {
			from = r;
			break;
		}
	}
	/* an any-source receive posted before it goes first */
	TAILQ_FOREACH(r, &v->posted_any, pq)
	{
		if (from != NULL && r->pseq > from->pseq)
			break;
		ST(s, MATCH_WALKED)++;
		if (svc_recv_match(r, app, proc, tag)) {
			any = r;
			break;
		}
	}
	r = any != NULL ? any : from;
	if (r != NULL)
		svc_posted_del(v, r);
	return r;
}

/* @p n bytes of a message into receive @p r of @p v, from a packet or, if @p staged, from
 * staging: a copy into the pool, or a write into the process's own memory through its mem
 * descriptor, checked mapped and writable first (vmem.c). 0, or the fault (-EFAULT,
 * -ECONNRESET) that fails this receive only. */
static int
svc_recv_copy(struct trd_vni_svc *s, struct vif *v, const struct vrecv *r, const void *data,
	      uint32_t n, bool staged)
{
	int rc;

	if (n == 0)
		return 0;
	if (!r->vaddr) {
		memcpy(v->pool + r->buf, data, n);
		s->stat[staged ? TRD_VNI_SVC_STAT_COPY_STAGE_OUT : TRD_VNI_SVC_STAT_COPY_RX_POOL] +=
			n;
		return 0;
	}
	rc = svc_vmem_write(v, data, r->buf, n);
	if (rc != 0) {
		if (rc == -ECONNRESET || rc == -ENOMEM)
			return rc; /* the process is gone; the engine is short of memory */
		ST(s, MSG_FAULTS)++;
		return -EFAULT;
	}
	s->stat[staged ? TRD_VNI_SVC_STAT_COPY_STAGE_OUT : TRD_VNI_SVC_STAT_COPY_RX_USER] += n;
	return 0;
}

/* @p n bytes at @p off of message @p x, granted into a receive in its process's memory
 * (TRD_VW_F_FIFO): written there at once, by a DATA message or by the local sender
 * (tx.c). A write that fails fails the receive, at the FIN; the rest are skipped. */
void
svc_rx_data(struct trd_vni_svc *s, struct vrx *x, uint64_t off, const void *data, uint32_t n)
{
	struct vrecv *r = x->recv;

	if (x->fault != 0 || x->vif->dead || r == NULL || n == 0)
		return;
	x->fault = svc_recv_copy(s, x->vif, &(struct vrecv){.vaddr = true, .buf = r->buf + off},
				 data, n, false);
}

static void
svc_recv_complete(struct trd_vni_svc *s, struct vif *v, struct vrecv *r, int status, uint32_t len,
		  uint64_t tag, uint32_t app, uint32_t proc)
{
	svc_vif_cqe(
		s, v, TRD_VNI_CPL_RECV, r->idx, status, len, tag, app, proc,
		(r->flags & TRD_VNI_F_DOORBELL) != 0, r->doorbell,
		status == 0 || status == -EMSGSIZE ? r->data : 0,
		((status == 0 || status == -EMSGSIZE) && r->has_data ? TRD_VNI_CQE_DATA : 0) |
			((r->flags & (TRD_VNI_RF_PROBE | TRD_VNI_RF_DISCARD)) ? SVC_CQE_PROBE : 0));
	r->busy = false;
}

/* ------------------------------------------------------------------------------------------ */
/* requests from sending engines */

static void
nak(struct trd_vni_svc *s, struct trd_coord src, const struct trd_vw_hdr *h, int status)
{
	struct trd_vw_hdr r;

	svc_rep_hdr(&r, TRD_VW_NAK, h, status);
	svc_reply(s, src, &r);
	ST(s, NAK_SENT)++;
}

void
svc_rx_nak(struct trd_vni_svc *s, struct trd_coord src, const struct trd_vw_hdr *h, int status)
{
	nak(s, src, h, status);
}

/* No receive yet for a local message: held in staging as an eager one is (on_eager), its
 * sender done; the receive copies it out when it is posted. false: staging is full (the
 * caller sends it the usual way, which waits for the receive). */
static bool
rx_local_stage(struct trd_vni_svc *s, const struct vif *v, struct vif *dv, uint64_t tag,
	       const uint8_t *data, uint32_t len, bool has_data, uint64_t imm)
{
	struct trd_vw_hdr h = {.src_app = v->app,
			       .src_proc = v->proc,
			       .key = (uint32_t)rte_rand(), /* no reply names it: unguessable */
			       .tag = tag,
			       .data = imm,
			       .len = len,
			       .flags = has_data ? TRD_VW_F_DATA : 0};
	struct vrx *x = svc_rx_alloc(s, dv);
	int64_t off = x == NULL ? -1 : svc_stage_alloc(s, dv, len);

	if (off < 0) {
		if (x != NULL) {
			x->len = 0;
			svc_rx_release(s, x);
		}
		return false;
	}
	svc_rx_fill(x, s->rank, s->topo->nodes[s->rank].coord, &h);
	x->soff = off;
	if (len != 0)
		memcpy(s->stage_mem + off, data, len);
	ST(s, COPY_STAGE_IN) += len;
	ST(s, LOCAL_DIRECT)++;
	x->state = RX_STAGED;
	svc_uq_add(dv, x);
	ST(s, STAGED)++;
	ST(s, STAGED_BYTES) += len;
	return true;
}

/* A message of @p len bytes at @p data (the sender's context slot or pool) from process @p v of
 * this engine to process @p dv of it, delivered at once if @p dv has a receive posted for it,
 * else staged: one copy, no packet, no request and answer through the node (docs/vni.md,
 * "Between two processes of one engine"). Too long for the receive: its first cap bytes,
 * -EMSGSIZE, as on_eager. false: neither (the caller sends it the usual way). */
bool
svc_rx_local(struct trd_vni_svc *s, const struct vif *v, struct vif *dv, uint64_t tag,
	     const uint8_t *data, uint32_t len, bool has_data, uint64_t imm)
{
	struct vrecv *rv = posted_take(s, dv, v->app, v->proc, tag);
	uint32_t n;
	int st = 0;

	if (rv == NULL)
		return rx_local_stage(s, v, dv, tag, data, len, has_data, imm);
	n = RTE_MIN(len, rv->cap);
	if (n != 0 && !rv->vaddr) {
		memmove(dv->pool + rv->buf, data, n); /* a send to itself may overlap */
	} else if (n != 0) {
		st = svc_vmem_write(dv, data, rv->buf, n);
		if (st != 0 && st != -ECONNRESET && st != -ENOMEM) {
			ST(s, MSG_FAULTS)++;
			st = -EFAULT;
		}
	}
	if (st == 0)
		ST(s, COPY_LOCAL) += n;
	ST(s, LOCAL_DIRECT)++;
	rv->data = imm;
	rv->has_data = has_data;
	if (st == 0 && len > rv->cap)
		st = -EMSGSIZE;
	svc_recv_complete(s, dv, rv, st, len, tag, v->app, v->proc);
	return true;
}

/* A request (RTS, or EAGER: its data is dropped here) that neither a receive nor staging can
 * take now: accepted as its header only (true), as Open MPI's ob1 rendezvous keeps an
 * unexpected RTS. Its record waits in the unexpected queue in arrival order, like a staged
 * message, and its sender is answered ACK (to an EAGER with TRD_VW_F_HDR: keep the bytes): it
 * no longer asks again, so the ordered messages behind it go on; the receive that matches it
 * sends the CTS straight into its buffer (rx_deliver). Bounded per interface (hdr_max):
 * beyond, false (refused as before). */
static bool
accept_hdr(struct trd_vni_svc *s, struct vif *v, struct vrx *x, struct trd_coord src,
	   const struct trd_vw_hdr *h)
{
	struct trd_vw_hdr r;

	if (s->conf.hdr_max < 0 || v->n_hdr >= (uint32_t)s->conf.hdr_max) {
		ST(s, HDR_REFUSED)++;
		return false;
	}
	x->hdr = x->ungranted = true;
	TAILQ_INSERT_TAIL(&v->hdrs, x, hq);
	v->n_hdr++;
	ST(s, HDR_HELD)++;
	ST(s, HDR_ONLY)++;
	svc_uq_add(v, x);
	svc_rep_hdr(&r, TRD_VW_ACK, h, 0);
	if (h->type == TRD_VW_EAGER)
		r.flags = TRD_VW_F_HDR;
	svc_reply(s, src, &r);
	return true;
}

/* The eager message is delivered, staged or kept as its header only (true: accepted), or
 * refused (false). */
static bool
on_eager(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h,
	 const uint8_t *data)
{
	struct trd_vw_hdr r;
	struct vrecv *rv;
	struct vif *v;
	struct vrx *x;
	int64_t off;

	ST(s, RX_EAGER)++;
	v = svc_vif_find(s, h->dst_app, h->dst_proc);
	if (v == NULL) {
		ST(s, NAK_NOPROC)++;
		nak(s, src, h, -ECONNREFUSED);
		return false;
	}
	rv = posted_take(s, v, h->src_app, h->src_proc, h->tag);
	if (rv != NULL) {
		/* longer than the buffer: its first cap bytes, -EMSGSIZE with the whole length;
		 * the sender succeeds (docs/vni.md, "Truncation") */
		uint32_t n = RTE_MIN(h->len, rv->cap);
		int st = svc_recv_copy(s, v, rv, data, n, false);

		rv->data = h->data;
		rv->has_data = (h->flags & TRD_VW_F_DATA) != 0;
		if (st == 0 && h->len > rv->cap)
			st = -EMSGSIZE;
		svc_recv_complete(s, v, rv, st, h->len, h->tag, h->src_app, h->src_proc);
		svc_rep_hdr(&r, TRD_VW_ACK, h, 0);
		svc_reply(s, src, &r);
		return true;
	}
	/* no receive yet: hold it, if the staging bound allows; else keep its header only, as
	 * a long one's (its sender keeps the bytes): a process that waits for it before it
	 * takes what fills its share is not kept waiting for room that never frees */
	x = svc_rx_alloc(s, v);
	if (x == NULL) {
		ST(s, NAK_NO_RX)++;
		nak(s, src, h, -ENOSPC);
		return false;
	}
	svc_rx_fill(x, src_rank, src, h);
	off = svc_stage_alloc(s, v, h->len);
	if (off < 0 && accept_hdr(s, v, x, src, h))
		return true;
	if (off < 0) {
		svc_rx_release(s, x);
		nak(s, src, h, -ENOSPC);
		return false;
	}
	x->soff = off;
	if (h->len != 0)
		memcpy(s->stage_mem + off, data, h->len);
	ST(s, COPY_STAGE_IN) += h->len;
	x->state = RX_STAGED;
	svc_uq_add(v, x);
	ST(s, STAGED)++;
	ST(s, STAGED_BYTES) += h->len;
	svc_rep_hdr(&r, TRD_VW_ACK, h, 0);
	svc_reply(s, src, &r);
	return true;
}

/* A long message from a process on this engine, in its own memory, to a process that can read
 * it itself (docs/vni.md, "One copy by the receiver"): held at its sender until its receive is
 * posted (refused, remembered as a hint: the receive grants it at once) rather than staged
 * and copied twice, but for cma_hold_us at most: two processes that each send to the other
 * before they post their receives (MPI_Send both ways) would wait on each other for ever;
 * staged after that, as before, and at once when the receiver holds one of its own to the
 * sender. Only messages this engine's own table names, with their key. */
static bool
hold_at_sender(struct trd_vni_svc *s, uint32_t src_rank, const struct vif *v,
	       const struct trd_vw_hdr *h)
{
	const struct vtx *o;
	struct vtx *t;

	if (src_rank != s->rank || h->len < SVC_CMA_MIN || v->cma_off || v->mem_fd < 0)
		return false;
	t = svc_tx_lookup(s, h->msg_id);
	if (t == NULL || t->key != h->key || !t->uaddr || t->parent != NULL)
		return false;
	/* an ordered message with others of its pair behind it is staged as before: held, it
	 * would keep them (parked behind it) from a receive the process may wait on first; held
	 * and then followed by another (order.c, open_one), it is asked again at once, and
	 * staged then */
	if (t->opair != NULL && (t->opair->n_open > 1 || !TAILQ_EMPTY(&t->opair->held)))
		return false;
	/* crossed: the receiving process has a message of its own to this sender held at it
	 * (each in a blocking send to the other before its receive, MPI's unsafe exchange).
	 * Neither posts its receive before its send completes, so a hold would only cost both
	 * its length: this one is staged now, its sender completes and posts its receive, which
	 * grants the other at once (its hint). */
	TAILQ_FOREACH(o, &v->txs, oq)
	if (o->held_since != 0 && o->dst_rank == s->rank && o->dst_app == t->vif->app &&
	    o->dst_proc == t->vif->proc && (o->state == TX_BACKOFF || o->state == TX_WAIT)) {
		ST(s, CMA_CROSSED)++;
		return false;
	}
	if (t->held_since == 0)
		t->held_since = s->now | 1; /* may be s->now + 1 */
	t->hold_nak = s->now < t->held_since || s->now - t->held_since < s->conf.cma_hold_us;
	return t->hold_nak;
}

/* The request to send is granted or accepted as its header only (true), or refused (false). */
static bool
on_rts(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h)
{
	struct vhint *hn = svc_hint_find(s, src_rank, h->msg_id, h->key);
	struct vrecv *rv;
	struct vif *v;
	struct vrx *x;
	int64_t off;

	ST(s, RX_RTS)++;
	if (hn != NULL && hn->grant != 0) {
		/* asked again after a refusal, but a receive granted it meanwhile: the same
		 * permission again (the sender keeps the first) */
		x = svc_rx_lookup(s, hn->grant, src_rank, h->msg_id, h->key);
		if (x != NULL && x->ungranted) {
			/* claimed while refused (rx.c): it waits for its receive, or was dropped
			 * unread: DONE 0 completes its sender */
			if (!x->discard) {
				nak(s, src, h, -ENOSPC);
				return false;
			}
			struct trd_vw_hdr r;

			svc_rep_hdr(&r, TRD_VW_DONE, h, 0);
			svc_reply(s, src, &r);
			svc_rx_release(s, x);
			return true;
		}
		if (x != NULL) {
			svc_send_cts(s, x);
			return true;
		}
		hn->used = false;
	}
	v = svc_vif_find(s, h->dst_app, h->dst_proc);
	if (v == NULL) {
		if (hn != NULL)
			hn->used = false;
		ST(s, NAK_NOPROC)++;
		nak(s, src, h, -ECONNREFUSED);
		return false;
	}
	/* a receive too short for it is granted its first cap bytes (a shorter CTS) */
	rv = posted_take(s, v, h->src_app, h->src_proc, h->tag);
	x = svc_rx_alloc(s, v);
	if (x == NULL) {
		if (rv != NULL)
			posted_put_back(v, rv);
		svc_hint_note(s, v, src_rank, src, h);
		ST(s, NAK_NO_RX)++;
		nak(s, src, h, -ENOSPC);
		return false;
	}
	svc_rx_fill(x, src_rank, src, h);
	if (rv != NULL) {
		svc_grant_recv(v, x, rv);
	} else if (hold_at_sender(s, src_rank, v, h)) {
		svc_rx_release(s, x);
		svc_hint_note(s, v, src_rank, src, h);
		ST(s, CMA_HELD)++;
		nak(s, src, h, -ENOSPC);
		return false;
	} else {
		off = svc_stage_alloc(s, v, h->len);
		if (off < 0 && accept_hdr(s, v, x, src, h)) {
			if (hn != NULL)
				hn->used = false;
			return true;
		}
		if (off < 0) {
			svc_rx_release(s, x);
			svc_hint_note(s, v, src_rank, src, h);
			nak(s, src, h, -ENOSPC);
			return false;
		}
		svc_rx_stage_at(s, x, off);
		svc_uq_add(v, x);
	}
	if (hn != NULL)
		hn->used = false;
	svc_send_cts(s, x);
	return true;
}

/* A request (EAGER, RTS) answered: true if it was accepted (delivered, staged or granted). */
bool
svc_rx_take(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src,
	    const struct trd_vw_hdr *h, const uint8_t *data)
{
	if (h->type == TRD_VW_EAGER)
		return on_eager(s, src_rank, src, h, data);
	return on_rts(s, src_rank, src, h);
}

void
svc_rx_on_fin(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src,
	      const struct trd_vw_hdr *h)
{
	struct vrx *x = svc_rx_lookup(s, h->grant_id, src_rank, h->msg_id, h->key);
	struct trd_vw_hdr r;
	int st = 0;

	ST(s, RX_FIN)++;
	if (x == NULL || x->ungranted) { /* no grant given: nothing may have been put */
		ST(s, BAD_WIRE)++;
		st = -EPROTO;
	} else if (x->vif->dead) {
		st = -ECONNRESET;
		svc_rx_release(s, x);
	} else if (x->discard) {
		st = 0; /* dropped unread (trd_vni_discard): the sender succeeds */
		svc_rx_release(s, x);
	} else if (x->recv != NULL) {
		struct vif *v = x->vif;
		uint32_t n = RTE_MIN(x->len, x->recv->cap); /* truncated: its first cap bytes */
		int rst = x->fault;

		if (!x->fifo && !x->direct)
			ST(s, COPY_RX_PUT) += x->soff >= 0 ? x->len : n;
		if (x->soff >= 0 && rst == 0)
			rst = svc_recv_copy(s, v, x->recv, s->stage_mem + x->soff, n, true);
		x->recv->data = x->data;
		x->recv->has_data = x->has_data;
		if (rst == 0 && x->len > x->recv->cap)
			rst = -EMSGSIZE;
		svc_recv_complete(s, v, x->recv, rst, x->len, x->tag, x->src_app, x->src_proc);
		svc_rx_release(s, x);
	} else {
		if (!x->direct)
			ST(s, COPY_RX_PUT) += x->len;
		x->state = RX_STAGED; /* whole, in staging, waiting for its receive */
		svc_hint_drop_grant(s, svc_rx_id(x));
	}
	svc_rep_hdr(&r, TRD_VW_DONE, h, st);
	svc_reply(s, src, &r);
}

/* DATA: bytes of a message granted into a receive in its process's memory. It must name a
 * live grant of that kind given to its sender (id, node, message, key) and lie inside what
 * the grant allows; anything else is dropped and counted. */
void
svc_rx_on_data(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h,
	       const uint8_t *data)
{
	struct vrx *x = svc_rx_lookup(s, h->grant_id, src_rank, h->msg_id, h->key);
	uint32_t cap;

	if (x == NULL || !x->fifo || x->recv == NULL) {
		ST(s, BAD_WIRE)++;
		return;
	}
	cap = RTE_MIN(x->len, x->recv->cap);
	if (h->roff > cap || h->len > cap - h->roff) {
		ST(s, BAD_WIRE)++;
		return;
	}
	svc_rx_data(s, x, h->roff, data, h->len);
}

void
svc_rx_on_abort(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h)
{
	struct vhint *hn = svc_hint_find(s, src_rank, h->msg_id, h->key);
	struct vrx *x = NULL, *it;

	if (hn != NULL && hn->grant == 0)
		hn->used = false;
	if (h->grant_id != 0)
		x = svc_rx_lookup(s, h->grant_id, src_rank, h->msg_id, h->key);
	if (x == NULL) /* granted, but the sender died before it heard of it */
		TAILQ_FOREACH(it, &s->rx_active, aq)
	if (it->src_rank == src_rank && it->src_msg == h->msg_id && it->src_key == h->key) {
		x = it;
		break;
	}
	if (x == NULL) {
		svc_ord_abort(s, src_rank, h); /* parked, perhaps */
		return;
	}
	if (x->recv != NULL && !x->vif->dead)
		svc_recv_complete(s, x->vif, x->recv, -ECONNRESET, 0, x->tag, x->src_app,
				  x->src_proc);
	svc_rx_release(s, x);
}

/* ------------------------------------------------------------------------------------------ */
/* peers that went down (dispatch.c's tick) */

/* Messages arriving from a peer that went down end with -EHOSTUNREACH. */
void
svc_rx_peer_sweep(struct trd_vni_svc *s)
{
	struct vrx *x, *xn;
	bool down = false;

	/* the nodes first: with every peer up (nearly always) the walk over every receive
	 * state, which a flood of unexpected messages makes long (a cache miss each), is
	 * skipped */
	for (unsigned int r = 0; r < s->topo->n_nodes && !down; r++)
		down = r != s->rank && trd_node_peer_up(s->node, s->topo->nodes[r].coord) == 0;
	if (!down)
		return;
	for (x = TAILQ_FIRST(&s->rx_active); x != NULL; x = xn) {
		xn = TAILQ_NEXT(x, aq);
		if (x->state != RX_RECV || trd_node_peer_up(s->node, x->src) != 0)
			continue;
		if (x->recv != NULL && !x->vif->dead)
			svc_recv_complete(s, x->vif, x->recv, -EHOSTUNREACH, 0, x->tag, x->src_app,
					  x->src_proc);
		svc_rx_release(s, x);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* receive commands; claims (docs/vni.md, "Claim and discard") */

/* Give message @p x to receive @p r: copied now if it is whole in staging, at its FIN if it
 * is still arriving there, or granted straight into the buffer if it was claimed while its
 * sender was refused. Too long for the buffer: its first cap bytes, -EMSGSIZE with the whole
 * length, and its sender succeeds. @p x is in no queue. */
static void
rx_deliver(struct trd_vni_svc *s, struct vif *v, struct vrecv *r, struct vrx *x)
{
	if (x->ungranted) {
		/* its sender waits (to be asked, or for the CTS of a message accepted as its
		 * header only): a permission into the buffer now */
		x->ungranted = false;
		svc_rx_hdr_end(s, x);
		svc_grant_recv(v, x, r);
		svc_send_cts(s, x);
		ST(s, CTS_LATE)++;
		return;
	}
	if (x->state == RX_STAGED) {
		uint32_t n = RTE_MIN(x->len, r->cap); /* truncated: its first cap bytes */
		int st = svc_recv_copy(s, v, r, s->stage_mem + x->soff, n, true);

		r->data = x->data;
		r->has_data = x->has_data;
		if (st == 0 && x->len > r->cap)
			st = -EMSGSIZE;
		svc_recv_complete(s, v, r, st, x->len, x->tag, x->src_app, x->src_proc);
		svc_rx_release(s, x);
	} else {
		x->recv = r; /* still arriving into staging: copied at its FIN */
	}
}

static uint64_t
claim_handle(const struct vrx *x)
{
	return (uint64_t)x->claim_key << 32 | svc_rx_id(x);
}

/* The message of @p v that claim handle @p h names, or NULL: never claimed, another
 * interface's, or already received or dropped (its grant generation or key moved on). */
static struct vrx *
claim_find(struct trd_vni_svc *s, const struct vif *v, uint64_t h)
{
	uint32_t id = (uint32_t)h;
	struct vrx *x;

	if ((id & SVC_RX_IDX_MASK) >= s->rx_new || (h >> 32) == 0)
		return NULL;
	x = &s->rx[id & SVC_RX_IDX_MASK];
	if (x->state == RX_FREE || x->gen != id >> SVC_RX_IDX_BITS || x->vif != v || !x->claimed ||
	    x->claim_key != (uint32_t)(h >> 32))
		return NULL;
	return x;
}

/* Drop message @p x (in no queue) unread. Its sender completes as if it had been received:
 * a staged one already has; one still arriving gets DONE 0 at its FIN, one accepted as its
 * header only gets DONE 0 now, one whose sender was refused gets DONE 0 at its next request
 * (rx.c). */
static void
claim_drop(struct trd_vni_svc *s, struct vrx *x)
{
	x->claimed = false;
	ST(s, DISCARDS)++;
	if (x->hdr)
		svc_rx_answer(s, x, TRD_VW_DONE, 0);
	if (x->state == RX_STAGED || x->hdr) {
		svc_rx_release(s, x);
		return;
	}
	x->discard = true;
	svc_tx_ask_again(s, x->src_rank, x->src_msg, x->src_key); /* held: not its hold's end */
}

/* A probe that claims (PROBE|CLAIM) or drops (PROBE|DISCARD) what it finds: staged message
 * @p x, else a refused request of a sender that waits (a grant without a CTS takes it out of
 * the hints), else -ENOMSG. The answer carries the message like a probe's, and a claim's
 * handle is written in the receive context before the completion. */
static void
probe_claim(struct trd_vni_svc *s, struct vif *v, struct vrecv *r, struct vrx *x)
{
	uint64_t h;

	ST(s, PROBES)++;
	if (x != NULL) {
		svc_uq_del(v, x);
	} else {
		for (unsigned int i = 0; i < SVC_N_HINTS && x == NULL; i++) {
			struct vhint *hn = &s->hints[i];
			struct trd_vw_hdr hh;

			if (!hn->used || hn->grant != 0 || hn->vif != v ||
			    !svc_recv_match(r, hn->src_app, hn->src_proc, hn->tag))
				continue;
			x = svc_rx_alloc(s, v);
			if (x == NULL) {
				svc_recv_complete(s, v, r, -ENOBUFS, 0, r->tag, r->src_app,
						  r->src_proc);
				return;
			}
			memset(&hh, 0, sizeof(hh));
			hh.msg_id = hn->msg_id;
			hh.key = hn->key;
			hh.src_app = hn->src_app;
			hh.src_proc = hn->src_proc;
			hh.tag = hn->tag;
			hh.data = hn->data;
			hh.flags = hn->has_data ? TRD_VW_F_DATA : 0;
			hh.len = hn->len;
			svc_rx_fill(x, hn->src_rank, hn->src, &hh);
			x->ungranted = true;
			hn->grant = svc_rx_id(x); /* its next request finds x (rx.c) */
			svc_ord_matched(s, hn);   /* an ordered one: its successors may follow */
		}
		if (x == NULL) {
			svc_recv_complete(s, v, r, -ENOMSG, 0, r->tag, r->src_app, r->src_proc);
			return;
		}
	}
	r->data = x->data;
	r->has_data = x->has_data;
	if (r->flags & TRD_VNI_RF_DISCARD) {
		svc_recv_complete(s, v, r, 0, x->len, x->tag, x->src_app, x->src_proc);
		claim_drop(s, x);
		return;
	}
	if (++s->claim_seq == 0)
		s->claim_seq = 1;
	x->claimed = true;
	x->claim_key = s->claim_seq;
	h = claim_handle(x);
	ST(s, CLAIMS)++;
	/* the application's own context: it reads the handle after the completion, which
	 * cplq_put publishes with a release store */
	__atomic_store_n(&v->rctx[r->idx].claim, h, __ATOMIC_RELAXED);
	svc_recv_complete(s, v, r, 0, x->len, x->tag, x->src_app, x->src_proc);
}

/* CLAIM (receive the claimed message) or CLAIM|DISCARD (drop it) with handle @p h. */
static void
claimed_op(struct trd_vni_svc *s, struct vif *v, struct vrecv *r, uint64_t h)
{
	struct vrx *x = claim_find(s, v, h);

	if (x == NULL) {
		ST(s, BAD_CMDS)++;
		svc_recv_complete(s, v, r, -EINVAL, 0, r->tag, r->src_app, r->src_proc);
		return;
	}
	if (r->flags & TRD_VNI_RF_DISCARD) {
		r->data = x->data;
		r->has_data = x->has_data;
		svc_recv_complete(s, v, r, 0, x->len, x->tag, x->src_app, x->src_proc);
		claim_drop(s, x);
		return;
	}
	x->claimed = false;
	ST(s, LATE_MATCHES)++;
	rx_deliver(s, v, r, x);
}

/* A probe: report message @p x (the first staged one that matches), else the first refused
 * request that matches (its sender asks again), else -ENOMSG. Nothing is taken. */
static void
probe(struct trd_vni_svc *s, struct vif *v, struct vrecv *r, const struct vrx *x)
{
	ST(s, PROBES)++;
	if (x != NULL) {
		r->data = x->data;
		r->has_data = x->has_data;
		svc_recv_complete(s, v, r, 0, x->len, x->tag, x->src_app, x->src_proc);
		return;
	}
	bool hinted = false;

	for (unsigned int i = 0; i < SVC_N_HINTS; i++) {
		const struct vhint *hn = &s->hints[i];

		if (hn->used && hn->grant == 0 && hn->vif == v) {
			hinted = true;
			if (!svc_recv_match(r, hn->src_app, hn->src_proc, hn->tag))
				continue;
			r->data = hn->data;
			r->has_data = hn->has_data;
			svc_recv_complete(s, v, r, 0, hn->len, hn->tag, hn->src_app, hn->src_proc);
			return;
		}
	}
	/* every hint looked at: whether one still names this interface (trd_vni_probe_none) */
	v->hint_maybe = hinted;
	svc_probe_publish(v);
	svc_recv_complete(s, v, r, -ENOMSG, 0, r->tag, r->src_app, r->src_proc);
}

/* Withdraw receive @p idx if it still waits in the posted list (not yet bound to a message):
 * it completes with -ECANCELED. Otherwise nothing: its own completion comes. */
void
svc_rx_cancel(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct vrecv *r;

	if (idx >= v->n_recv) {
		ST(s, BAD_CMDS)++;
		return;
	}
	r = &v->recvs[idx];
	if (!r->posted)
		return;
	svc_posted_del(v, r);
	ST(s, CANCELS)++;
	svc_recv_complete(s, v, r, -ECANCELED, 0, r->tag, r->src_app, r->src_proc);
}

void
svc_rx_post(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_rctx c;
	struct vrecv *r;
	struct vrx *x;

	if (idx >= v->n_recv || v->recvs[idx].busy) {
		ST(s, BAD_CMDS)++;
		return;
	}
	svc_shared_read(&c, &v->rctx[idx], sizeof(c)); /* once: the application may change it */
	/* an older library's 0x8: the claim and the doorbell at once, as its engine read it */
	if (v->proto < 9 && (c.flags & TRD_VNI_RF_CLAIM_V8))
		c.flags |= TRD_VNI_RF_CLAIM;
	r = &v->recvs[idx];
	r->busy = true;
	r->flags = c.flags;
	r->src_app = c.src_app;
	r->src_proc = c.src_proc;
	r->cap = c.cap;
	r->tag = c.tag;
	r->ignore = (c.flags & TRD_VNI_RF_ANY_TAG) ? UINT64_MAX
		    : (c.flags & TRD_VNI_RF_MASK)  ? c.ignore
						   : 0;
	r->buf = c.buf;
	r->vaddr = (c.flags & TRD_VNI_RF_VADDR) != 0;
	r->data = 0;
	r->has_data = false;
	r->doorbell = c.doorbell;
	ST(s, RECVS)++;
	if ((c.flags &
	     ~(TRD_VNI_RF_ANY_TAG | TRD_VNI_RF_MASK | TRD_VNI_RF_PROBE | TRD_VNI_RF_CLAIM |
	       TRD_VNI_RF_DISCARD | TRD_VNI_F_DOORBELL | TRD_VNI_RF_VADDR)) ||
	    /* DISCARD goes with PROBE or with CLAIM, not both */
	    ((c.flags & TRD_VNI_RF_DISCARD) &&
	     !!(c.flags & TRD_VNI_RF_PROBE) == !!(c.flags & TRD_VNI_RF_CLAIM)) ||
	    (!r->vaddr && (c.buf > v->pool_size || c.cap > v->pool_size - c.buf)) ||
	    ((c.flags & TRD_VNI_F_DOORBELL) && c.doorbell >= v->n_db)) {
		ST(s, BAD_CMDS)++;
		r->flags &= ~TRD_VNI_F_DOORBELL;
		svc_recv_complete(s, v, r, -EINVAL, 0, c.tag, c.src_app, c.src_proc);
		return;
	}
	if (r->vaddr) {
		/* a buffer in the process's own memory: mapped and writable now, or the receive
		 * fails at once (each write checks again: vmem.c) */
		int rc = svc_vmem_check(v, c.buf, c.cap, true);

		if (rc != 0) {
			ST(s, MSG_FAULTS)++;
			svc_recv_complete(s, v, r, rc == -EPERM ? -EPERM : -EFAULT, 0, c.tag,
					  c.src_app, c.src_proc);
			return;
		}
	}
	if ((c.flags & TRD_VNI_RF_CLAIM) && !(c.flags & TRD_VNI_RF_PROBE)) {
		claimed_op(s, v, r, c.claim);
		return;
	}
	/* a message that came first */
	x = uq_find(s, v, r);
	if (c.flags & TRD_VNI_RF_PROBE) {
		if (c.flags & (TRD_VNI_RF_CLAIM | TRD_VNI_RF_DISCARD))
			probe_claim(s, v, r, x);
		else
			probe(s, v, r, x);
		return;
	}
	if (x != NULL) {
		ST(s, LATE_MATCHES)++;
		svc_uq_del(v, x);
		rx_deliver(s, v, r, x);
		return;
	}
	/* a request to send that was refused for want of a receive: grant it now */
	if (svc_grant_hinted(s, v, r))
		return;
	posted_add(v, r);
}

/* The answer to a CMA request for receive @p idx (tx.c): counted and dropped unless that
 * receive has a request waiting for its answer; the message it was for goes on to its FIN
 * (read) or the engine copies it (not read). A message that ended meanwhile (its sender
 * died) needs nothing more. */
void
svc_rx_cma_answer(struct trd_vni_svc *s, struct vif *v, uint32_t op, uint32_t idx)
{
	struct vrecv *r = idx < v->n_recv ? &v->recvs[idx] : NULL;
	struct vrx *x;

	if (r == NULL || !r->cma_out) {
		ST(s, CMA_BAD)++;
		return;
	}
	r->cma_out = false;
	v->cma_out--;
	x = r->cma;
	r->cma = NULL;
	if (op == TRD_VNI_CMD_CMA_OFF && !v->cma_off) {
		v->cma_off = true;
		ST(s, CMA_REFUSED)++;
	}
	if (x != NULL && x->cma == SVC_CMA_WAIT) {
		x->cma = op == TRD_VNI_CMD_CMA_OK ? SVC_CMA_DONE : SVC_CMA_FALLBACK;
		svc_tx_cma_answered(s, x);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* an interface that died (dispatch.c's svc_vif_gone) */

/* Its receives: posted ones vanish; staged messages are dropped; messages arriving into its
 * pool are cancelled at their sender, and the memory stays until they end. Its hints not
 * granted go. How many messages were dropped or cancelled. */
unsigned int
svc_rx_vif_gone(struct trd_vni_svc *s, struct vif *v)
{
	struct vrx *x, *xn;
	unsigned int n_rx = 0;

	svc_posted_init(v);
	for (x = TAILQ_FIRST(&s->rx_active); x != NULL; x = xn) {
		xn = TAILQ_NEXT(x, aq);
		if (x->vif != v)
			continue;
		n_rx++;
		if (x->hdr) /* its sender waits for a CTS that will not come */
			svc_rx_answer(s, x, TRD_VW_CANCEL, -ECONNRESET);
		if (x->state == RX_STAGED || x->ungranted) {
			/* staged, or claimed while its sender was refused (it asks again and
			 * finds no process) */
			svc_rx_release(s, x);
		} else {
			struct trd_vw_hdr h;

			memset(&h, 0, sizeof(h));
			h.type = TRD_VW_CANCEL;
			h.status = -ECONNRESET;
			h.msg_id = x->src_msg;
			h.key = x->src_key;
			h.grant_id = svc_rx_id(x);
			h.dst_app = x->src_app;
			h.dst_proc = x->src_proc;
			h.src_app = v->app;
			h.src_proc = v->proc;
			svc_reply(s, x->src, &h);
			/* its staging (if any) stays reserved: bytes may still arrive into it
			 * until the sender's ABORT or FIN frees it */
		}
	}
	for (unsigned int i = 0; i < SVC_N_HINTS; i++)
		if (s->hints[i].used && s->hints[i].vif == v && s->hints[i].grant == 0)
			s->hints[i].used = false;
	return n_rx;
}
