/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: grants and staging. One vrx per message being received, granted or staged,
 * named on the wire by grant_id = index | generation << 20. A grant points the sender's puts
 * at a posted receive's buffer, or at staging: one area, shared among the interfaces attached
 * (no destination holds more than its share). Hints remember refused requests to send (a
 * bounded table), so a receive posted later grants them at once (a proactive CTS).
 */
#include <stdbool.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>

#include "iface_pvt.h"
#include "order_pvt.h"
#include "proto_pvt.h"
#include "rx_pvt.h"
#include "tx_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* the grant table */

struct vrx *
svc_rx_alloc(struct trd_vni_svc *s, struct vif *v)
{
	struct vrx *x;

	if (s->n_rx_free != 0) {
		x = &s->rx[s->rx_free[--s->n_rx_free]];
	} else if (s->rx_new < s->n_rx) {
		/* the table is allocated zeroed and its pages touched only as it is used: a
		 * large rx_max costs memory only when a flood takes it */
		x = &s->rx[s->rx_new];
		x->idx = s->rx_new++;
		x->gen = 1;
	} else {
		return NULL;
	}
	ST(s, RX_USED)++;
	if (ST(s, RX_USED) > ST(s, RX_HWM))
		ST(s, RX_HWM) = ST(s, RX_USED);
	x->state = RX_RECV;
	x->in_uq = x->discard = x->claimed = x->ungranted = x->hdr = x->fifo = x->direct = false;
	x->fault = 0;
	x->cma = SVC_CMA_NONE;
	x->vif = v;
	x->recv = NULL;
	x->soff = -1;
	v->refs++;
	v->n_rx++;
	TAILQ_INSERT_TAIL(&s->rx_active, x, aq);
	return x;
}

void
svc_hint_drop_grant(struct trd_vni_svc *s, uint32_t grant)
{
	for (unsigned int i = 0; i < SVC_N_HINTS; i++)
		if (s->hints[i].used && s->hints[i].grant == grant)
			s->hints[i].used = false;
}

/* Give back @p x's staging: true if it held some. */
static bool
stage_free(struct trd_vni_svc *s, struct vrx *x)
{
	if (x->soff < 0)
		return false;
	trd_vni_heap_free(&s->stage, (uint64_t)x->soff, x->len);
	x->vif->staged -= trd_vni_heap_round(x->len);
	x->soff = -1;
	ST(s, STAGING_USED) = s->stage.used;
	return true;
}

/* Message @p x is no longer held as its header only: granted, or ended. */
void
svc_rx_hdr_end(struct trd_vni_svc *s, struct vrx *x)
{
	if (!x->hdr)
		return;
	x->hdr = false;
	TAILQ_REMOVE(&x->vif->hdrs, x, hq);
	x->vif->n_hdr--;
	ST(s, HDR_HELD)--;
}

void
svc_rx_release(struct trd_vni_svc *s, struct vrx *x)
{
	struct vif *v = x->vif;
	bool freed;

	svc_rx_hdr_end(s, x);
	svc_hint_drop_grant(s, svc_rx_id(x));
	freed = stage_free(s, x);
	if (x->recv != NULL && x->recv->cma == x)
		x->recv->cma = NULL; /* its CMA answer, when it comes, finds nothing to do */
	if (x->in_uq)
		svc_uq_del(v, x);
	TAILQ_REMOVE(&s->rx_active, x, aq);
	x->state = RX_FREE;
	x->gen = (uint16_t)((x->gen + 1) & SVC_RX_GEN_MASK);
	s->rx_free[s->n_rx_free++] = x->idx;
	ST(s, RX_USED)--;
	v->n_rx--;
	/* room in its share again: its messages held as their header only may have it now */
	if (freed && v->n_hdr != 0)
		svc_rx_hdr_stage(s, v);
	v->refs--;
	svc_vif_release_maybe(s, v);
}

struct vrx *
svc_rx_lookup(struct trd_vni_svc *s, uint32_t id, uint32_t src_rank, uint32_t msg, uint32_t key)
{
	struct vrx *x;

	if ((id & SVC_RX_IDX_MASK) >= s->rx_new) /* a wire value: never used, or outside */
		return NULL;
	x = &s->rx[id & SVC_RX_IDX_MASK];
	if (x->state == RX_FREE || x->gen != id >> SVC_RX_IDX_BITS || x->src_rank != src_rank ||
	    x->src_msg != msg || x->src_key != key)
		return NULL;
	return x;
}

/* ------------------------------------------------------------------------------------------ */
/* staging */

/* A destination's share of staging: the staging area divided by the interfaces attached. */
static uint64_t
stage_share(const struct trd_vni_svc *s)
{
	return s->stage.size / RTE_MAX(1u, s->n_live);
}

/* Staging for a message to @p v, within its share: no destination holds more, so one process
 * that never receives cannot take the room its neighbours' messages need. -1 when it does not
 * fit. */

static int64_t
stage_alloc(struct trd_vni_svc *s, struct vif *v, uint32_t len, bool count)
{
	int64_t off;

	if (v->staged + trd_vni_heap_round(len) > stage_share(s)) {
		if (count)
			ST(s, NAK_SHARE)++;
		return -1;
	}
	off = trd_vni_heap_alloc(&s->stage, len);
	if (off < 0) {
		if (count)
			ST(s, NAK_STAGING)++;
		return -1;
	}
	v->staged += trd_vni_heap_round(len);
	ST(s, STAGING_USED) = s->stage.used;
	ST(s, STAGING_HWM) = s->stage.hwm;
	return off;
}

int64_t
svc_stage_alloc(struct trd_vni_svc *s, struct vif *v, uint32_t len)
{
	return stage_alloc(s, v, len, true);
}

/* Message @p x granted staging at @p off (svc_stage_alloc()): where its sender's data goes,
 * counted as staged. */
void
svc_rx_stage_at(struct trd_vni_svc *s, struct vrx *x, int64_t off)
{
	x->soff = off;
	x->rkey = trd_mr_key(s->stage_mr);
	x->roff = (uint64_t)off;
	ST(s, STAGED)++;
	ST(s, STAGED_BYTES) += x->len;
}

/* Messages to @p v held as their header only, oldest first, granted staging once it has room
 * for them (its process received, so its share freed; a process left, so every share grew;
 * another's staging freed): a CTS into staging, as an RTS that found room at once gets, and
 * their senders complete without waiting for the receive. Otherwise a process that posts a
 * receive only once its own sends completed (a READY after its data) waits for ever on its
 * peer, which does the same (docs/vni.md, "Unexpected messages: the header only"). Each stays
 * where it was in the unexpected queue; a claimed one stays claimed. */
void
svc_rx_hdr_stage(struct trd_vni_svc *s, struct vif *v)
{
	uint64_t share = stage_share(s);
	struct vrx *x, *xn;

	for (x = TAILQ_FIRST(&v->hdrs); x != NULL && !v->dead; x = xn) {
		int64_t off;

		xn = TAILQ_NEXT(x, hq);
		/* longer than the whole share: no staging ever takes it while this many
		 * processes are attached, it waits for its receive; the ones behind it do not
		 * wait on it (those that fit the share but not the room now do: oldest first) */
		if (trd_vni_heap_round(x->len) > share)
			continue;
		off = stage_alloc(s, v, x->len, false);
		if (off < 0)
			return;
		svc_rx_hdr_end(s, x);
		x->ungranted = false;
		svc_rx_stage_at(s, x, off);
		ST(s, HDR_STAGED)++;
		svc_send_cts(s, x);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* grants */

void
svc_rx_fill(struct vrx *x, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h)
{
	x->src_rank = src_rank;
	x->src = src;
	x->src_msg = h->msg_id;
	x->src_key = h->key;
	x->src_app = h->src_app;
	x->src_proc = h->src_proc;
	x->tag = h->tag;
	x->data = h->data;
	x->has_data = (h->flags & TRD_VW_F_DATA) != 0;
	x->len = h->len;
}

/* A reply of @p type about message @p x to its sender: the fields every such reply names. */
static void
rx_reply_hdr(struct trd_vw_hdr *r, const struct vrx *x, uint8_t type)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->src_app = x->vif->app;
	r->src_proc = x->vif->proc;
	r->dst_app = x->src_app;
	r->dst_proc = x->src_proc;
	r->msg_id = x->src_msg;
	r->key = x->src_key;
	r->tag = x->tag;
}

void
svc_send_cts(struct trd_vni_svc *s, struct vrx *x)
{
	struct trd_vw_hdr r;

	rx_reply_hdr(&r, x, TRD_VW_CTS);
	r.grant_id = svc_rx_id(x);
	/* into a receive shorter than the message: only its first cap bytes (docs/vni.md,
	 * "Truncation") */
	r.len = x->recv != NULL ? RTE_MIN(x->len, x->recv->cap) : x->len;
	r.rkey = x->rkey;
	r.roff = x->roff;
	if (x->fifo)
		r.flags = TRD_VW_F_FIFO;
	svc_reply(s, x->src, &r);
	ST(s, CTS_SENT)++;
}

/* An answer about message @p x to its sender without a grant (grant_id 0): DONE 0 (dropped
 * unread) or CANCEL -ECONNRESET (its receiver died) for one accepted as its header only. */
void
svc_rx_answer(struct trd_vni_svc *s, const struct vrx *x, uint8_t type, int status)
{
	struct trd_vw_hdr r;

	rx_reply_hdr(&r, x, type);
	r.status = status;
	r.len = x->len;
	svc_reply(s, x->src, &r);
}

/* A grant into receive @p r of @p v: the sender puts straight into a buffer in the pool; one in
 * the process's own memory, which the node cannot reach, gets DATA messages that this engine
 * writes there (TRD_VW_F_FIFO). */
void
svc_grant_recv(struct vif *v, struct vrx *x, struct vrecv *r)
{
	x->recv = r;
	x->fifo = r->vaddr;
	x->rkey = r->vaddr ? 0 : trd_mr_key(v->mr);
	x->roff = r->vaddr ? 0 : r->buf;
}

/* ------------------------------------------------------------------------------------------ */
/* hints: refused requests to send */

struct vhint *
svc_hint_find(struct trd_vni_svc *s, uint32_t src_rank, uint32_t msg, uint32_t key)
{
	for (unsigned int i = 0; i < SVC_N_HINTS; i++) {
		struct vhint *hn = &s->hints[i];

		if (hn->used && hn->src_rank == src_rank && hn->msg_id == msg && hn->key == key)
			return hn;
	}
	return NULL;
}

/* Remember a refused request to send, so a receive posted later can grant it at once. */
void
svc_hint_note(struct trd_vni_svc *s, struct vif *v, uint32_t src_rank, struct trd_coord src,
	      const struct trd_vw_hdr *h)
{
	struct vhint *hn = svc_hint_find(s, src_rank, h->msg_id, h->key), *old = NULL;

	if (hn == NULL) {
		for (unsigned int i = 0; i < SVC_N_HINTS && hn == NULL; i++) {
			struct vhint *c = &s->hints[i];

			if (!c->used)
				hn = c;
			else if (c->grant == 0 && (old == NULL || c->stamp < old->stamp))
				old = c;
		}
		if (hn == NULL && old != NULL) {
			/* forget the oldest waiting one: its sender asks again (a sender of this
			 * engine held for its receive would wait out its hold first) */
			hn = old;
			svc_tx_ask_again(s, old->src_rank, old->msg_id, old->key);
		}
		if (hn == NULL)
			return;
	}
	hn->used = true;
	hn->grant = 0;
	v->hint_maybe = true;
	svc_probe_publish(v);
	hn->src_rank = src_rank;
	hn->src = src;
	hn->msg_id = h->msg_id;
	hn->key = h->key;
	hn->src_app = h->src_app;
	hn->src_proc = h->src_proc;
	hn->len = h->len;
	hn->tag = h->tag;
	hn->data = h->data;
	hn->has_data = (h->flags & TRD_VW_F_DATA) != 0;
	hn->ordered = (h->flags & TRD_VW_F_ORDERED) != 0;
	hn->ostream = TRD_VW_ORD_STREAM(h->roff);
	hn->oseq = TRD_VW_ORD_SEQ(h->roff);
	hn->vif = v;
	hn->stamp = s->now;
}

/* A receive @p r of @p v was posted: grant at once a request to send it matches that was
 * refused for want of a receive. false: none (or no room for a grant now). */
bool
svc_grant_hinted(struct trd_vni_svc *s, struct vif *v, struct vrecv *r)
{
	for (unsigned int i = 0; i < SVC_N_HINTS; i++) {
		struct vhint *hn = &s->hints[i];
		struct trd_vw_hdr h;
		struct vrx *x;

		if (!hn->used || hn->grant != 0 || hn->vif != v ||
		    !svc_recv_match(r, hn->src_app, hn->src_proc, hn->tag))
			continue;
		x = svc_rx_alloc(s, v);
		if (x == NULL) {
			/* no grant now: its sender asks again (and is refused for room) */
			svc_tx_ask_again(s, hn->src_rank, hn->msg_id, hn->key);
			break;
		}
		memset(&h, 0, sizeof(h));
		h.msg_id = hn->msg_id;
		h.key = hn->key;
		h.src_app = hn->src_app;
		h.src_proc = hn->src_proc;
		h.tag = hn->tag;
		h.data = hn->data;
		h.flags = hn->has_data ? TRD_VW_F_DATA : 0;
		h.len = hn->len;
		svc_rx_fill(x, hn->src_rank, hn->src, &h);
		svc_grant_recv(v, x, r);
		hn->grant = svc_rx_id(x);
		svc_send_cts(s, x);
		ST(s, CTS_LATE)++;
		svc_ord_matched(s, hn); /* an ordered one: its successors may follow */
		return true;
	}
	return false;
}
