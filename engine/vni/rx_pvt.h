/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's receive state machine: posted receives, matching, requests from sending
 * engines, claims, probes, truncation (rx.c); grants, staging, CTS and hints (rx_grant.c).
 */
#ifndef TRD_VNI_RX_PVT_H
#define TRD_VNI_RX_PVT_H

#include "service_pvt.h"

static inline uint32_t
svc_rx_id(const struct vrx *x)
{
	return x->idx | (uint32_t)x->gen << SVC_RX_IDX_BITS;
}

/* Does a message from (@p app, @p proc) with @p tag match receive @p r? (Inline: it runs for
 * every message in a queue the receive is matched against.) */
static inline bool
svc_recv_match(const struct vrecv *r, uint32_t app, uint32_t proc, uint64_t tag)
{
	return (r->src_app == TRD_VNI_ANY || r->src_app == app) &&
	       (r->src_proc == TRD_VNI_ANY || r->src_proc == proc) &&
	       ((r->tag ^ tag) & ~r->ignore) == 0;
}

/* An interface's unexpected messages are kept in arrival order (vif.uq) and again in one list
 * per hash of their source (vif.uqs): a receive from one source walks that source's messages
 * only (and those of the few sources sharing its list), as Open MPI's ob1 keeps a queue per
 * peer. A receive from any source walks the arrival order. Without it, a process that took
 * its messages from one peer while another ran thousands ahead walked them all each time:
 * O(n^2), 4-rank MPI_Reduce 10 to 40 x slower than TCP. */
static inline unsigned int
svc_src_hash(uint32_t app, uint32_t proc)
{
	return ((app << 16) ^ proc) * 0x9e3779b1u >> (32 - SVC_UQ_BITS);
}

static inline struct vrx_list *
svc_uq_list(struct vif *v, uint32_t app, uint32_t proc)
{
	return &v->uqs[svc_src_hash(app, proc)];
}

/* Tell the process what a probe could find (trd_vni_seg.probe_waiting). */
static inline void
svc_probe_publish(struct vif *v)
{
	if (!v->dead)
		__atomic_store_n(&v->seg->probe_waiting,
				 TRD_VNI_PROBE_VALID | (v->n_uq + (v->hint_maybe ? 1u : 0u)),
				 __ATOMIC_RELEASE);
}

static inline void
svc_uq_add(struct vif *v, struct vrx *x)
{
	TAILQ_INSERT_TAIL(&v->uq, x, uq);
	TAILQ_INSERT_TAIL(svc_uq_list(v, x->src_app, x->src_proc), x, us);
	x->in_uq = true;
	v->n_uq++;
	svc_probe_publish(v);
}

static inline void
svc_uq_del(struct vif *v, struct vrx *x)
{
	TAILQ_REMOVE(&v->uq, x, uq);
	TAILQ_REMOVE(svc_uq_list(v, x->src_app, x->src_proc), x, us);
	x->in_uq = false;
	v->n_uq--;
	svc_probe_publish(v);
}

/* The posted receives likewise: in their source's list or, from any source, in one list of
 * their own, each numbered in posting order (pseq): an arriving message looks at its source's
 * receives and the any-source ones, and takes the earlier of the first match in each. */
static inline struct vrecv_list *
svc_posted_list(struct vif *v, const struct vrecv *r)
{
	if (r->src_app == TRD_VNI_ANY || r->src_proc == TRD_VNI_ANY)
		return &v->posted_any;
	return &v->posted_src[svc_src_hash(r->src_app, r->src_proc)];
}

static inline void
svc_posted_del(struct vif *v, struct vrecv *r)
{
	TAILQ_REMOVE(svc_posted_list(v, r), r, pq);
	r->posted = false;
	v->n_posted--;
}

/* rx.c: commands (dispatch.c) */
void svc_rx_post(struct trd_vni_svc *s, struct vif *v, uint32_t idx);
void svc_rx_cancel(struct trd_vni_svc *s, struct vif *v, uint32_t idx);
void svc_rx_cma_answer(struct trd_vni_svc *s, struct vif *v, uint32_t op, uint32_t idx);
/* rx.c: frames (dispatch.c, order.c) */
bool svc_rx_take(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src,
		 const struct trd_vw_hdr *h, const uint8_t *data);
void svc_rx_on_fin(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src,
		   const struct trd_vw_hdr *h);
void svc_rx_on_data(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h,
		    const uint8_t *data);
void svc_rx_on_abort(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h);
void svc_rx_nak(struct trd_vni_svc *s, struct trd_coord src, const struct trd_vw_hdr *h,
		int status);
void svc_rx_peer_sweep(struct trd_vni_svc *s);
unsigned int svc_rx_vif_gone(struct trd_vni_svc *s, struct vif *v);
/* rx.c: a sender of this engine writing straight into a receive (tx.c, tx_post.c) */
bool svc_rx_local(struct trd_vni_svc *s, const struct vif *v, struct vif *dv, uint64_t tag,
		  const uint8_t *data, uint32_t len, bool has_data, uint64_t imm);
void svc_rx_data(struct trd_vni_svc *s, struct vrx *x, uint64_t off, const void *data, uint32_t n);

/* rx_grant.c */
struct vrx *svc_rx_alloc(struct trd_vni_svc *s, struct vif *v);
void svc_rx_release(struct trd_vni_svc *s, struct vrx *x);
void svc_rx_hdr_end(struct trd_vni_svc *s, struct vrx *x);
void svc_rx_hdr_stage(struct trd_vni_svc *s, struct vif *v);
void svc_rx_answer(struct trd_vni_svc *s, const struct vrx *x, uint8_t type, int status);
struct vrx *svc_rx_lookup(struct trd_vni_svc *s, uint32_t id, uint32_t src_rank, uint32_t msg,
			  uint32_t key);
int64_t svc_stage_alloc(struct trd_vni_svc *s, struct vif *v, uint32_t len);
void svc_rx_stage_at(struct trd_vni_svc *s, struct vrx *x, int64_t off);
void svc_rx_fill(struct vrx *x, uint32_t src_rank, struct trd_coord src,
		 const struct trd_vw_hdr *h);
void svc_send_cts(struct trd_vni_svc *s, struct vrx *x);
void svc_grant_recv(struct vif *v, struct vrx *x, struct vrecv *r);
bool svc_grant_hinted(struct trd_vni_svc *s, struct vif *v, struct vrecv *r);
struct vhint *svc_hint_find(struct trd_vni_svc *s, uint32_t src_rank, uint32_t msg, uint32_t key);
void svc_hint_note(struct trd_vni_svc *s, struct vif *v, uint32_t src_rank, struct trd_coord src,
		   const struct trd_vw_hdr *h);
void svc_hint_drop_grant(struct trd_vni_svc *s, uint32_t grant);

#endif /* TRD_VNI_RX_PVT_H */
