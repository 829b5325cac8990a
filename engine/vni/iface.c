/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: commands and completions. The engine's end of an interface's shared queues
 * (rte_ring's layout, the engine's own indices), the commands taken from it (a send or a
 * receive context, read once and checked before any field takes part in an address), the
 * completions written back, and the eventfd signals to the processes that sleep.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_common.h>

#include "service_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* the shared queues and tables */

/* Copy @p n bytes (a multiple of 8, both 8-byte aligned) the application may be writing at the
 * same time: each word is read exactly once, so what is checked afterwards is what is used. */
static void
shared_read(void *dst, const void *src, size_t n)
{
	const volatile uint64_t *in = src;
	uint64_t *out = dst;

	for (size_t i = 0; i < n / 8; i++)
		out[i] = in[i];
}

/* A multicast destination list (4-byte aligned): each field read once. */
static void
shared_read_list(struct trd_vni_addr *dl, const void *src, unsigned int n)
{
	const volatile uint32_t *in = src;

	for (unsigned int i = 0; i < n; i++) {
		dl[i].app = in[2 * i];
		dl[i].proc = in[2 * i + 1];
	}
}

/* The engine's end of the queues. rte_ring's layout is kept (the application uses DPDK's
 * inline enqueue and dequeue), but the ring's size is the engine's copy and its index the
 * engine's own; from the header only the other side's index is read, once, and a count it
 * implies above the ring's capacity means the queue is broken. */
static int
cmdq_take(struct vif *v, struct trd_vni_cmd *out, unsigned int max)
{
	struct rte_ring *r = v->cmdq;
	const uint64_t *slots = (const uint64_t *)(const void *)&r[1];
	uint32_t prod = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - v->cmd_cons, mask = v->cmdq_size - 1;

	if (avail > mask) /* more than the capacity (size - 1): the header was overwritten */
		return -EPROTO;
	avail = RTE_MIN(avail, max);
	for (uint32_t i = 0; i < avail; i++) {
		uint64_t w = ((const volatile uint64_t *)slots)[(v->cmd_cons + i) & mask];

		memcpy(&out[i], &w, sizeof(w));
	}
	v->cmd_cons += avail;
	__atomic_store_n(&r->cons.head, v->cmd_cons, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cons.tail, v->cmd_cons, __ATOMIC_RELEASE);
	return (int)avail;
}

bool
svc_cmdq_pending(const struct vif *v)
{
	return __atomic_load_n(&v->cmdq->prod.tail, __ATOMIC_ACQUIRE) != v->cmd_cons;
}

static int
cplq_put(struct vif *v, const struct trd_vni_cqe *e)
{
	struct rte_ring *r = v->cplq;
	struct trd_vni_cqe *slots = (struct trd_vni_cqe *)(void *)&r[1];
	uint32_t cons = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t mask = v->cplq_size - 1;

	if (v->cpl_prod - cons >= mask) /* full (cannot be), or the header was overwritten */
		return -ENOSPC;
	slots[v->cpl_prod & mask] = *e;
	v->cpl_prod++;
	__atomic_store_n(&r->prod.head, v->cpl_prod, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod.tail, v->cpl_prod, __ATOMIC_RELEASE);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* completions */

/* An entry that is not a completion (TRD_VNI_CQE_CMA): no statistics, no doorbell. */
void
svc_vif_cqe_raw(struct trd_vni_svc *s, struct vif *v, uint16_t kind, uint32_t idx, uint32_t len,
		uint64_t tag, uint32_t app, uint32_t proc, uint64_t data)
{
	struct trd_vni_cqe e = {.kind = kind,
				.idx = idx,
				.len = len,
				.tag = tag,
				.peer_app = app,
				.peer_proc = proc,
				.data = data};

	if (v->dead)
		return;
	if (cplq_put(v, &e) != 0 && !v->broken) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: completion queue full or damaged: interface closed",
			v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR);
	}
	v->wake = true;
}

void
svc_vif_cqe(struct trd_vni_svc *s, struct vif *v, uint16_t kind, uint32_t idx, int32_t status,
	    uint32_t len, uint64_t tag, uint32_t app, uint32_t proc, bool doorbell, uint32_t db,
	    uint64_t data, unsigned int cflags)
{
	struct trd_vni_cqe e = {.kind = kind,
				.idx = idx,
				.status = status,
				.len = len,
				.tag = tag,
				.peer_app = app,
				.peer_proc = proc,
				.data = data,
				.flags = (uint16_t)(cflags & TRD_VNI_CQE_DATA)};

	if (kind == TRD_VNI_CPL_COLL) {
		/* counted by coll.c */
	} else if (kind >= TRD_VNI_CPL_WRITE) {
		ST(s, RMA_DONE)++;
	} else if (kind == TRD_VNI_CPL_SEND) {
		ST(s, TX_DONE)++;
		if (status == 0) {
			ST(s, TX_BYTES) += len;
			v->tx_msgs++;
			v->tx_bytes += len;
		}
	} else if (!(cflags & SVC_CQE_PROBE)) {
		ST(s, RX_DONE)++;
		if (status == 0) {
			ST(s, RX_BYTES) += len;
			v->rx_msgs++;
			v->rx_bytes += len;
		}
	}
	if (status != 0 && !(cflags & SVC_CQE_PROBE))
		ST(s, ERRORS)++;
	if (v->dead)
		return;
	__atomic_store_n(&v->seg->tx_msgs, v->tx_msgs, __ATOMIC_RELAXED);
	__atomic_store_n(&v->seg->tx_bytes, v->tx_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&v->seg->rx_msgs, v->rx_msgs, __ATOMIC_RELAXED);
	__atomic_store_n(&v->seg->rx_bytes, v->rx_bytes, __ATOMIC_RELAXED);
	if (doorbell && db < v->n_db)
		__atomic_store_n(&v->db[db], v->db[db] + 1, __ATOMIC_RELEASE);
	/* The queue holds one entry per context, so it cannot be full: a failure means the
	 * application broke its own queue. */
	if (cplq_put(v, &e) != 0 && !v->broken) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: completion queue full or damaged: interface closed",
			v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR); /* seen as a hang-up at the next socket look */
	}
	v->wake = true;
}

/* After a round: signal the processes that sleep and got completions. */
void
svc_vif_wake_all(struct trd_vni_svc *s)
{
	bool fenced = false;

	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		const uint64_t one = 1;

		if (v == NULL || !v->wake)
			continue;
		v->wake = false;
		if (v->dead)
			continue;
		if (!fenced) {
			/* completions were queued, then app_armed is read: pairs with the
			 * application's store of app_armed followed by its look at the queue */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			fenced = true;
		}
		if (__atomic_load_n(&v->seg->app_armed, __ATOMIC_SEQ_CST) &&
		    __atomic_exchange_n(&v->seg->app_armed, 0, __ATOMIC_SEQ_CST)) {
			if (write(v->efd, &one, sizeof(one)) == sizeof(one))
				ST(s, WAKEUPS)++;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* commands */

/* The bytes of multicast @p p that would be copied once per destination (an eager message;
 * a long one's last packet when it is at most inline_max, too short for zero-copy) copied
 * once into a shared payload that every child's packet references (docs/vni.md,
 * "Multicast"). Without one (no mbuf) the children copy as unicast sends do. */
static void
mcast_share(struct trd_vni_svc *s, struct vif *v, struct vtx *p, const uint8_t *src)
{
	uint32_t tail = p->len % s->chunk;

	if (p->len <= v->short_max)
		p->pay_off = 0;
	else if (tail != 0 && tail <= s->conf.inline_max)
		p->pay_off = p->len - tail;
	else
		return;
	if (p->len - p->pay_off == 0 ||
	    trd_payload_new(s->node, src + p->pay_off, p->len - p->pay_off, &p->pay) != 0)
		return;
	ST(s, MCAST_BUFS)++;
	ST(s, MCAST_COPY_BYTES) += p->len - p->pay_off;
}

/* A unicast message from the context slot or the pool to a process of this engine that has
 * its receive posted: delivered at once (recv.c), unless an ordered one of the pair is still
 * unaccepted (it must not be overtaken). true: delivered, and send context @p idx completed. */
static bool
local_direct(struct trd_vni_svc *s, struct vif *v, uint32_t idx, const struct trd_vni_sctx *c,
	     const uint8_t *src)
{
	int rank = trd_topo_find_proc(s->topo, c->dst_app, c->dst_proc);
	struct vtx done = {.vif = v,
			   .ctx = idx,
			   .sflags = c->flags,
			   .doorbell = c->doorbell,
			   .tag = c->tag,
			   .len = c->len,
			   .dst_app = c->dst_app,
			   .dst_proc = c->dst_proc};
	struct vif *dv;

	/* a capture of the node records every message: it goes the way of frames then */
	if (rank < 0 || (uint32_t)rank != s->rank || trd_node_capturing(s->node))
		return false;
	dv = svc_vif_find(s, c->dst_app, c->dst_proc);
	if (dv == NULL)
		return false;
	if ((c->flags & TRD_VNI_SF_ORDERED) &&
	    !svc_ord_quiet(s, v, (uint32_t)rank, c->dst_app, c->dst_proc))
		return false;
	if (!svc_rx_local(s, v, dv, c->tag, src, c->len, (c->flags & TRD_VNI_SF_DATA) != 0,
			  c->data))
		return false;
	svc_tx_cqe(s, &done);
	return true;
}

static void
cmd_send(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_addr dl[TRD_VNI_MCAST_MAX];
	struct trd_vni_sctx c;
	struct vtx *p = NULL;
	const uint8_t *src;
	unsigned int n = 1;
	int err = 0;

	if (idx >= v->n_send || v->sbusy[idx]) {
		ST(s, BAD_CMDS)++;
		return;
	}
	shared_read(&c, &v->sctx[idx], sizeof(c)); /* once: the application may change it */
	v->sbusy[idx] = 1;
	/* every field is checked before it takes part in an address */
	if ((c.flags & ~(TRD_VNI_SF_INLINE | TRD_VNI_SF_MCAST | TRD_VNI_SF_ORDERED |
			 TRD_VNI_SF_DATA | TRD_VNI_F_DOORBELL | TRD_VNI_SF_VADDR)) ||
	    ((c.flags & TRD_VNI_SF_MCAST) && (c.flags & TRD_VNI_SF_ORDERED)) ||
	    ((c.flags & TRD_VNI_SF_INLINE) && c.len > v->short_max) ||
	    /* from process memory: a long unicast message only */
	    ((c.flags & TRD_VNI_SF_VADDR) &&
	     ((c.flags & (TRD_VNI_SF_INLINE | TRD_VNI_SF_MCAST)) || c.len <= v->short_max)) ||
	    (!(c.flags & (TRD_VNI_SF_INLINE | TRD_VNI_SF_VADDR)) &&
	     (c.buf > v->pool_size || c.len > v->pool_size - c.buf)) ||
	    ((c.flags & TRD_VNI_F_DOORBELL) && c.doorbell >= v->n_db))
		err = -EINVAL;
	/* from the process's own memory: readable now, or the send fails at once (each read
	 * checks again: vmem.c) */
	if (err == 0 && (c.flags & TRD_VNI_SF_VADDR)) {
		err = svc_vmem_check(v, c.buf, c.len, false);
		if (err != 0) {
			ST(s, MSG_FAULTS)++;
			err = err == -EPERM ? -EPERM : -EFAULT;
		}
	}
	if (err == 0 && (c.flags & TRD_VNI_SF_MCAST)) {
		n = c.n_dst;
		if (n < 2 || n > TRD_VNI_MCAST_MAX || c.dst_off > v->slot ||
		    (uint64_t)n * sizeof(dl[0]) > v->slot - c.dst_off || c.dst_off % 4 != 0)
			err = -EINVAL;
		else
			shared_read_list(dl, v->ctxr + (size_t)idx * v->slot + c.dst_off, n);
	} else {
		dl[0].app = c.dst_app;
		dl[0].proc = c.dst_proc;
	}
	if (err == 0 && n > 1) {
		p = svc_tx_alloc(s, v);
		if (p == NULL)
			err = -ENOBUFS;
	}
	if (err != 0) {
		if (err != -EFAULT)
			ST(s, BAD_CMDS)++;
		struct vtx tmp = {.vif = v,
				  .ctx = idx,
				  .status = err,
				  .sflags = c.flags,
				  .doorbell = c.doorbell,
				  .tag = c.tag,
				  .dst_app = c.dst_app,
				  .dst_proc = c.dst_proc};
		svc_tx_cqe(s, &tmp);
		return;
	}
	if (c.flags & TRD_VNI_SF_INLINE)
		src = v->ctxr + (size_t)idx * v->slot;
	else if (c.flags & TRD_VNI_SF_VADDR)
		src = NULL; /* read from t->laddr */
	else
		src = v->pool + c.buf;
	s->stat[n > 1 ? TRD_VNI_SVC_STAT_MCASTS : TRD_VNI_SVC_STAT_SENDS]++;
	if (n == 1 && src != NULL && c.len <= SVC_LOCAL_DIRECT_MAX &&
	    local_direct(s, v, idx, &c, src))
		return;
	if (p != NULL) {
		p->ctx = idx;
		p->sflags = c.flags;
		p->doorbell = c.doorbell;
		p->tag = c.tag;
		p->len = c.len;
		p->dst_app = dl[0].app;
		p->dst_proc = dl[0].proc;
		p->n_left = n + 1; /* one more while the children are made */
		p->state = TX_MCAST;
		mcast_share(s, v, p, src);
	}
	for (unsigned int i = 0; i < n; i++) {
		int rank = trd_topo_find_proc(s->topo, dl[i].app, dl[i].proc);
		struct vtx *t = svc_tx_alloc(s, v);

		if (t == NULL || rank < 0) {
			int st = t == NULL ? -ENOBUFS : -ECONNREFUSED;

			if (p == NULL) {
				struct vtx tmp = {.vif = v,
						  .ctx = idx,
						  .status = st,
						  .sflags = c.flags,
						  .doorbell = c.doorbell,
						  .tag = c.tag,
						  .dst_app = dl[i].app,
						  .dst_proc = dl[i].proc};

				if (t != NULL)
					svc_tx_free(s, t);
				svc_tx_cqe(s, &tmp);
				return;
			}
			if (t != NULL)
				svc_tx_free(s, t);
			if (p->status == 0)
				p->status = st;
			p->n_left--;
			continue;
		}
		t->parent = p;
		t->ctx = idx;
		t->sflags = p == NULL ? c.flags : 0;
		t->doorbell = c.doorbell;
		t->dst_app = dl[i].app;
		t->dst_proc = dl[i].proc;
		t->dst_rank = (uint32_t)rank;
		t->dst = s->topo->nodes[rank].coord;
		t->tag = c.tag;
		t->data = c.data;
		t->len = c.len;
		t->src = src;
		t->uaddr = (c.flags & TRD_VNI_SF_VADDR) != 0;
		t->laddr = t->uaddr ? c.buf : 0;
		t->eager = c.len <= v->short_max;
		t->noproc_deadline = s->now + (uint64_t)s->conf.noproc_ms * 1000;
		if (!(t->sflags & TRD_VNI_SF_ORDERED))
			svc_tx_set_state(s, t, TX_REQ);
		else if (svc_ord_send(s, t) != 0) /* numbered: sent now, or held (order.c) */
			svc_tx_finish(s, t, -ENOBUFS);
	}
	if (p != NULL && --p->n_left == 0) {
		svc_tx_cqe(s, p);
		svc_tx_free(s, p);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* claims (docs/vni.md, "Claim and discard") */

/* Give message @p x to receive @p r: copied now if it is whole in staging, at its FIN if it
 * is still arriving there, or granted straight into the buffer if it was claimed while its
 * sender was refused. Too long for the buffer: its first cap bytes, -EMSGSIZE with the whole
 * length, and its sender succeeds. @p x is in no queue. */
static void
rx_deliver(struct trd_vni_svc *s, struct vif *v, struct vrecv *r, struct vrx *x)
{
	if (x->ungranted) {
		/* its sender waits to be asked: a permission into the buffer now */
		x->ungranted = false;
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

	if ((id & 0xffff) >= SVC_N_RX || (h >> 32) == 0)
		return NULL;
	x = &s->rx[id & 0xffff];
	if (x->state == RX_FREE || x->gen != (uint16_t)(id >> 16) || x->vif != v || !x->claimed ||
	    x->claim_key != (uint32_t)(h >> 32))
		return NULL;
	return x;
}

/* Drop message @p x (in no queue) unread. Its sender completes as if it had been received:
 * a staged one already has; one still arriving gets DONE 0 at its FIN, one whose sender was
 * refused gets DONE 0 at its next request (recv.c). */
static void
claim_drop(struct trd_vni_svc *s, struct vrx *x)
{
	x->claimed = false;
	ST(s, DISCARDS)++;
	if (x->state == RX_STAGED) {
		svc_rx_release(s, x);
		return;
	}
	x->discard = true;
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
		TAILQ_REMOVE(&v->uq, x, uq);
		x->in_uq = false;
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
			hn->grant = svc_rx_id(x); /* its next request finds x (recv.c) */
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
	for (unsigned int i = 0; i < SVC_N_HINTS; i++) {
		const struct vhint *hn = &s->hints[i];

		if (hn->used && hn->grant == 0 && hn->vif == v &&
		    svc_recv_match(r, hn->src_app, hn->src_proc, hn->tag)) {
			r->data = hn->data;
			r->has_data = hn->has_data;
			svc_recv_complete(s, v, r, 0, hn->len, hn->tag, hn->src_app, hn->src_proc);
			return;
		}
	}
	svc_recv_complete(s, v, r, -ENOMSG, 0, r->tag, r->src_app, r->src_proc);
}

/* Withdraw receive @p idx if it still waits in the posted list (not yet bound to a message):
 * it completes with -ECANCELED. Otherwise nothing: its own completion comes. */
static void
cmd_cancel(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct vrecv *r;

	if (idx >= v->n_recv) {
		ST(s, BAD_CMDS)++;
		return;
	}
	TAILQ_FOREACH(r, &v->posted, q)
	if (r == &v->recvs[idx])
		break;
	if (r == NULL)
		return;
	TAILQ_REMOVE(&v->posted, r, q);
	ST(s, CANCELS)++;
	svc_recv_complete(s, v, r, -ECANCELED, 0, r->tag, r->src_app, r->src_proc);
}

static void
cmd_recv(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_rctx c;
	struct vrecv *r;
	struct vrx *x;

	if (idx >= v->n_recv || v->recvs[idx].busy) {
		ST(s, BAD_CMDS)++;
		return;
	}
	shared_read(&c, &v->rctx[idx], sizeof(c)); /* once: the application may change it */
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
	TAILQ_FOREACH(x, &v->uq, uq)
	if (svc_recv_match(r, x->src_app, x->src_proc, x->tag))
		break;
	if (c.flags & TRD_VNI_RF_PROBE) {
		if (c.flags & (TRD_VNI_RF_CLAIM | TRD_VNI_RF_DISCARD))
			probe_claim(s, v, r, x);
		else
			probe(s, v, r, x);
		return;
	}
	if (x != NULL) {
		ST(s, LATE_MATCHES)++;
		TAILQ_REMOVE(&v->uq, x, uq);
		x->in_uq = false;
		rx_deliver(s, v, r, x);
		return;
	}
	/* a request to send that was refused for want of a receive: grant it now */
	if (svc_grant_hinted(s, v, r))
		return;
	TAILQ_INSERT_TAIL(&v->posted, r, q);
}

/* A one-sided op: the context is read once, here; rma.c checks every field. */
static void
cmd_rma(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_actx c;

	if (idx >= v->n_send || v->sbusy[idx]) {
		ST(s, BAD_CMDS)++;
		return;
	}
	shared_read(&c, &v->sctx[idx], sizeof(c));
	v->sbusy[idx] = 1;
	svc_cmd_rma(s, v, idx, &c);
}

/* A collective: the context is read once, here; coll.c checks every field. */
static void
cmd_coll(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_cctx c;

	if (idx >= v->n_send || v->sbusy[idx]) {
		ST(s, BAD_CMDS)++;
		return;
	}
	shared_read(&c, &v->sctx[idx], sizeof(c));
	v->sbusy[idx] = 1;
	svc_cmd_coll(s, v, idx, &c);
}

/* The answer to a CMA request for receive @p idx (send.c): counted and dropped unless that
 * receive has a request waiting for its answer; the message it was for goes on to its FIN
 * (read) or the engine copies it (not read). A message that ended meanwhile (its sender
 * died) needs nothing more. */
static void
cmd_cma(struct trd_vni_svc *s, struct vif *v, uint32_t op, uint32_t idx)
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
	if (x != NULL && x->cma == SVC_CMA_WAIT)
		x->cma = op == TRD_VNI_CMD_CMA_OK ? SVC_CMA_DONE : SVC_CMA_FALLBACK;
}

unsigned int
svc_vif_cmds(struct trd_vni_svc *s, struct vif *v)
{
	struct trd_vni_cmd c[SVC_CMD_BURST];
	int n;

	if (v->broken)
		return 0;
	n = cmdq_take(v, c, SVC_CMD_BURST);
	if (n < 0) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: command queue damaged: interface closed", v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR); /* seen as a hang-up at the next socket look */
		return 0;
	}
	for (int i = 0; i < n; i++) {
		ST(s, CMDS)++;
		if (c[i].op == TRD_VNI_CMD_SEND)
			cmd_send(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_RECV)
			cmd_recv(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_CANCEL)
			cmd_cancel(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_RMA)
			cmd_rma(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_COLL)
			cmd_coll(s, v, c[i].idx);
		else if (c[i].op >= TRD_VNI_CMD_CMA_OK && c[i].op <= TRD_VNI_CMD_CMA_OFF)
			cmd_cma(s, v, c[i].op, c[i].idx);
		else
			ST(s, BAD_CMDS)++;
	}
	return (unsigned int)n;
}
