/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, transmit: a send command taken. Its context is read once and checked before
 * any field takes part in an address; a unicast message to a process of this engine whose
 * receive is posted is delivered at once (rx.c), others become a vtx (one per destination of a
 * multicast, under a parent) that tx.c injects.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>

#include "iface_pvt.h"
#include "order_pvt.h"
#include "rx_pvt.h"
#include "tx_pvt.h"
#include "vmem_pvt.h"

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
 * its receive posted: delivered at once (rx.c), unless an ordered one of the pair is still
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

void
svc_tx_post(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
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
	svc_shared_read(&c, &v->sctx[idx], sizeof(c)); /* once: the application may change it */
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
