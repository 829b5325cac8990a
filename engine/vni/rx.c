/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: receives. The protocol messages from the reception FIFO, checked and decoded
 * (svc_rx_protocol), and the requests among them: an eager message is delivered into a posted
 * receive or held in staging; a request to send is granted (into a posted receive or into
 * staging) or refused with a NAK; a FIN completes a grant; an ABORT ends one. Replies go to
 * proto_tx.c; grants and staging are in grant.c.
 */
#include <errno.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_random.h>

#include "service_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* posted receives */

struct vif *
svc_vif_find(struct trd_vni_svc *s, uint32_t app, uint32_t proc)
{
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead && v->app == app && v->proc == proc)
			return v;
	}
	return NULL;
}

static struct vrecv *
posted_take(struct vif *v, uint32_t app, uint32_t proc, uint64_t tag)
{
	struct vrecv *r;

	TAILQ_FOREACH(r, &v->posted, q)
	if (svc_recv_match(r, app, proc, tag)) {
		TAILQ_REMOVE(&v->posted, r, q);
		return r;
	}
	return NULL;
}

/* @p n bytes of a message into receive @p r of @p v, from a packet or, if @p staged, from
 * staging: a copy into the pool, or a write into the process's own memory through its mem
 * descriptor, checked mapped and writable first (vmem.c). 0, or the fault (-EFAULT,
 * -ECONNRESET) that fails this receive only. */
int
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
 * (send.c). A write that fails fails the receive, at the FIN; the rest are skipped. */
void
svc_rx_data(struct trd_vni_svc *s, struct vrx *x, uint64_t off, const void *data, uint32_t n)
{
	struct vrecv *r = x->recv;

	if (x->fault != 0 || x->vif->dead || r == NULL || n == 0)
		return;
	x->fault = svc_recv_copy(s, x->vif, &(struct vrecv){.vaddr = true, .buf = r->buf + off},
				 data, n, false);
}

void
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

/* The header of the answer @p type to request @p req: addressed back to its sender, naming
 * its message (id, key echoed), grant, length and tag. */
void
svc_rep_hdr(struct trd_vw_hdr *r, uint8_t type, const struct trd_vw_hdr *req, int status)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->status = status;
	r->src_app = req->dst_app;
	r->src_proc = req->dst_proc;
	r->dst_app = req->src_app;
	r->dst_proc = req->src_proc;
	r->msg_id = req->msg_id;
	r->key = req->key;
	r->grant_id = req->grant_id;
	r->len = req->len;
	r->tag = req->tag;
}

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
	TAILQ_INSERT_TAIL(&dv->uq, x, uq);
	x->in_uq = true;
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
	struct vrecv *rv = posted_take(dv, v->app, v->proc, tag);
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

/* The eager message is delivered or staged (true: accepted), or refused (false). */
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
		nak(s, src, h, -ECONNREFUSED);
		return false;
	}
	rv = posted_take(v, h->src_app, h->src_proc, h->tag);
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
	/* no receive yet: hold it, if the staging bound allows */
	x = svc_rx_alloc(s, v);
	off = x == NULL ? -1 : svc_stage_alloc(s, v, h->len);
	if (off < 0) {
		if (x != NULL) {
			x->len = 0;
			svc_rx_release(s, x);
		}
		nak(s, src, h, -ENOSPC);
		return false;
	}
	svc_rx_fill(x, src_rank, src, h);
	x->soff = off;
	if (h->len != 0)
		memcpy(s->stage_mem + off, data, h->len);
	ST(s, COPY_STAGE_IN) += h->len;
	x->state = RX_STAGED;
	TAILQ_INSERT_TAIL(&v->uq, x, uq);
	x->in_uq = true;
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
 * staged after that, as before. Only messages this engine's own table names, with their
 * key. */
static bool
hold_at_sender(struct trd_vni_svc *s, uint32_t src_rank, const struct vif *v,
	       const struct trd_vw_hdr *h)
{
	struct vtx *t;

	if (src_rank != s->rank || h->len < SVC_CMA_MIN || v->cma_off || v->mem_fd < 0)
		return false;
	t = svc_tx_lookup(s, h->msg_id);
	if (t == NULL || t->key != h->key || !t->uaddr || t->parent != NULL)
		return false;
	/* an ordered message with others of its pair behind it is staged as before: held, it
	 * would keep them (parked behind it) from a receive the process may wait on first; it is
	 * asked again after its back-off, and staged then if others came meanwhile */
	if (t->opair != NULL && (t->opair->n_open > 1 || !TAILQ_EMPTY(&t->opair->held)))
		return false;
	if (t->held_since == 0)
		t->held_since = s->now | 1; /* may be s->now + 1 */
	return s->now < t->held_since || s->now - t->held_since < s->conf.cma_hold_us;
}

/* The request to send is granted (true), or refused (false). */
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
			/* claimed while refused (cmd.c): it waits for its receive, or was dropped
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
		nak(s, src, h, -ECONNREFUSED);
		return false;
	}
	/* a receive too short for it is granted its first cap bytes (a shorter CTS) */
	rv = posted_take(v, h->src_app, h->src_proc, h->tag);
	x = svc_rx_alloc(s, v);
	if (x == NULL) {
		if (rv != NULL)
			TAILQ_INSERT_HEAD(&v->posted, rv, q);
		svc_hint_note(s, v, src_rank, src, h);
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
		if (off < 0) {
			svc_rx_release(s, x);
			svc_hint_note(s, v, src_rank, src, h);
			nak(s, src, h, -ENOSPC);
			return false;
		}
		x->soff = off;
		x->rkey = trd_mr_key(s->stage_mr);
		x->roff = (uint64_t)off;
		TAILQ_INSERT_TAIL(&v->uq, x, uq);
		x->in_uq = true;
		ST(s, STAGED)++;
		ST(s, STAGED_BYTES) += h->len;
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

static void
on_fin(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h)
{
	struct vrx *x = svc_rx_lookup(s, h->grant_id, src_rank, h->msg_id, h->key);
	struct trd_vw_hdr r;
	int st = 0;

	ST(s, RX_FIN)++;
	if (x == NULL) {
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
static void
on_data(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h, const uint8_t *data)
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

static void
on_abort(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h)
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
/* the reception FIFO */

unsigned int
svc_rx_protocol(struct trd_vni_svc *s)
{
	struct trd_msg *m[SVC_RX_BURST];
	int n = trd_rec_fifo_poll(s->rf, m, SVC_RX_BURST);

	for (int i = 0; i < n; i++) {
		struct trd_vw_hdr h;
		int src_rank = trd_torus_rank(&s->topo->torus, m[i]->src);

		if ((m[i]->user >> 32) != TRD_VW_MAGIC || src_rank < 0 ||
		    trd_vw_decode(m[i]->data, m[i]->len, &h) != 0 ||
		    h.type != (m[i]->user & 0xff) ||
		    (h.type == TRD_VW_ATOMIC && m[i]->len != TRD_VW_HDR_LEN + TRD_VW_ATOMIC_LEN) ||
		    (trd_vw_has_data(h.type) && h.type != TRD_VW_ATOMIC &&
		     h.len != m[i]->len - TRD_VW_HDR_LEN) ||
		    (!trd_vw_has_data(h.type) && m[i]->len != TRD_VW_HDR_LEN)) {
			ST(s, BAD_WIRE)++;
			trd_msg_free(m[i]);
			continue;
		}
		switch (h.type) {
		case TRD_VW_EAGER:
		case TRD_VW_RTS:
			if (h.flags & TRD_VW_F_ORDERED)
				svc_ord_rx(s, (uint32_t)src_rank, m[i], &h); /* order.c */
			else
				svc_rx_take(s, (uint32_t)src_rank, m[i]->src, &h,
					    (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_FIN:
			on_fin(s, (uint32_t)src_rank, m[i]->src, &h);
			break;
		case TRD_VW_ABORT:
			on_abort(s, (uint32_t)src_rank, &h);
			break;
		case TRD_VW_DATA:
			on_data(s, (uint32_t)src_rank, &h,
				(const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_WRITE:
		case TRD_VW_READ:
		case TRD_VW_ATOMIC:
			svc_rma_serve(s, (uint32_t)src_rank, m[i]->src, &h,
				      (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_WRITE_ACK:
		case TRD_VW_READ_RESP:
		case TRD_VW_ATOMIC_RESP:
			svc_rma_reply(s, (uint32_t)src_rank, &h,
				      (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		default:
			svc_on_reply(s, (uint32_t)src_rank, &h);
			break;
		}
		trd_msg_free(m[i]);
	}
	return n > 0 ? (unsigned int)n : 0;
}
