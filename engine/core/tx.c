/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit: cutting the descriptor at the head of an injection FIFO into framed packets
 * (copied or zero-copy) queued on its link, and withdrawing what a dead peer will never get.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include "core_pvt.h"

/* ---- packetizer ---- */

static void
zc_free_cb(void *addr, void *opaque)
{
	struct trd_mbuf_priv *pv = opaque;

	RTE_SET_USED(addr);
	/* Runs on whichever lcore frees the packet: the buffer is no longer read. */
	if (pv->zc.ctr != NULL)
		__atomic_fetch_sub(pv->zc.ctr, (int64_t)pv->zc.bytes, __ATOMIC_RELEASE);
}

static const uint8_t tx_type_stat[TRD_OP_MAX] = {
	[TRD_OP_PUT] = TRD_STAT_TX_PUT,
	[TRD_OP_FIFO] = TRD_STAT_TX_FIFO,
	[TRD_OP_RGET] = TRD_STAT_TX_RGET,
	[TRD_OP_ATOMIC] = TRD_STAT_TX_CTL,
};

static const uint8_t op_pkt_type[TRD_OP_MAX] = {
	[TRD_OP_PUT] = TRD_PKT_PUT,
	[TRD_OP_FIFO] = TRD_PKT_FIFO,
	[TRD_OP_RGET] = TRD_PKT_RGET,
	[TRD_OP_ATOMIC] = TRD_PKT_ATOMIC,
};

/* Where the bytes of a descriptor that are not inline come from: its immediate word, a region
 * of this node (access and bounds checked) or a raw address; *@p iova is their IO address, or
 * RTE_BAD_IOVA where it is unknown (the region's translation found at registration; a raw
 * address is its own in IOVA-as-VA mode), and the bytes are then copied. @return 0 or a drop
 * cause. */
static inline int
desc_src(struct trd_node *n, const struct trd_desc *d, const uint8_t **src, rte_iova_t *iova,
	 struct trd_inj_fifo *f)
{
	if (d->flags & TRD_DF_IMM) {
		*src = (const uint8_t *)&d->user;
		*iova = RTE_BAD_IOVA;
	} else if (d->flags & TRD_DF_SRC_MR) {
		struct trd_mr *mr = trd_mr_lookup(n, d->src_key);
		uint64_t off;

		if (mr == NULL)
			return TRD_DROP_BAD_KEY;
		if ((d->flags & TRD_DF_REMOTE) && !(mr->access & TRD_ACCESS_REMOTE_READ))
			return TRD_DROP_NO_ACCESS;
		if (trd_mr_at(mr, d->src, d->len, &off) != 0)
			return TRD_DROP_OUT_OF_BOUNDS;
		*src = mr->base + off;
		*iova = mr->iova == RTE_BAD_IOVA ? RTE_BAD_IOVA : mr->iova + off;
		if (unlikely(mr->access & TRD_ACCESS_COPY)) {
			*iova = RTE_BAD_IOVA; /* never zero-copy */
			if (f != NULL) {
				/* read until its last packet is built (or it is given up):
				 * its owner waits for that (trd_mr_readers()) */
				__atomic_fetch_add(&mr->readers, 1, __ATOMIC_RELAXED);
				f->src_mr = mr;
			}
		}
	} else {
		*src = (const uint8_t *)(uintptr_t)d->src;
		*iova = trd_iova_is_va() ? (rte_iova_t)d->src : RTE_BAD_IOVA;
	}
	return 0;
}

/* The Ethernet header of a frame of the current descriptor (its route's destination MAC,
 * its link's), then the descriptor's torus header template: @return the header to patch. */
static inline struct trd_hdr *
frame_start(const struct trd_inj_fifo *f, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct trd_hdr *h = (struct trd_hdr *)(eh + 1);

	eh->dst_addr = f->rt->dmac;
	eh->src_addr = f->link->mac;
	eh->ether_type = rte_cpu_to_be_16(TRD_ETHERTYPE);
	*h = f->whdr;
	return h;
}

/* Resolve the current descriptor: route, source bytes, header template. 0 or a drop cause.
 * (Always inline: its one caller is the FIFO's service loop, where a call cost more.) */
static __rte_always_inline int
desc_start(struct trd_node *n, struct trd_inj_fifo *f)
{
	struct trd_desc *d = f->cur;
	uint32_t aux;
	int rank;

	if (d->op == TRD_OP_NONE || d->op >= TRD_OP_MAX)
		return TRD_DROP_BAD_DESC;
	rank = trd_rank_of(n, d->dst);
	if (rank < 0)
		return TRD_DROP_UNKNOWN_NODE;
	f->rt = &n->routes[rank];
	f->link = f->rt->link;
	if (f->link == NULL)
		return TRD_DROP_NO_ROUTE;
	f->peer = NULL;
	if (n->reliable && (uint32_t)rank != n->rank) {
		f->peer = trd_rel_peer(n, (uint32_t)rank);
		if (f->peer == NULL)
			return TRD_DROP_NO_MEMORY;
		if (f->peer->down)
			return TRD_DROP_PEER_DOWN;
		if (!f->peer->ack_synced)
			trd_rel_want(n, f->peer); /* its session starts first */
	}
	if (!(d->flags & TRD_DF_REMOTE) && (d->op == TRD_OP_ATOMIC || (d->flags & TRD_DF_ACKREQ)))
		trd_cpl_set_peer(n, d->aux, (uint32_t)rank); /* its outcome comes from there */
	f->ctr = (d->inj_ctr != 0 && d->inj_ctr < n->conf.n_counters) ? &n->ctr[d->inj_ctr] : NULL;
	f->zc = false;
	if (d->n_slots != 0) {
		f->src = f->inl_src;
	} else {
		int cause = desc_src(n, d, &f->src, &f->src_iova, f);

		if (cause != 0)
			return cause;
		f->zc = d->len > n->conf.inline_max && f->src_iova != RTE_BAD_IOVA;
	}
	if (d->op == TRD_OP_ATOMIC) {
		struct trd_wire_atomic *a = (struct trd_wire_atomic *)f->inl;

		if (d->fifo < TRD_ATOMIC_FADD || d->fifo > TRD_ATOMIC_SWAP || d->aux == 0)
			return TRD_DROP_BAD_DESC;
		memset(a, 0, sizeof(*a));
		a->op = d->fifo;
		a->operand = rte_cpu_to_be_64(d->user);
		a->compare = rte_cpu_to_be_64(d->src);
		f->src = f->inl;
		d->len = sizeof(*a);
	}
	if (!f->link->chain_ok || d->op == TRD_OP_RGET || d->op == TRD_OP_ATOMIC ||
	    (d->flags & TRD_DF_COPY))
		f->zc = false;
	f->maxpay = (uint16_t)trd_max_payload(n, f->link, f->peer != NULL);
	f->pkts_left = d->len == 0 ? 1 : (d->len + f->maxpay - 1u) / f->maxpay;
	if (unlikely(d->flags & TRD_DF_PAYLOAD) && trd_pay_start(f) != 0)
		return TRD_DROP_BAD_DESC; /* a shared payload (payload.c) */
	if (d->op == TRD_OP_RGET && f->pkts_left != 1)
		return TRD_DROP_BAD_DESC;
	d->msg_id = n->next_msg_id++;
	if (!(d->flags & TRD_DF_REMOTE) && (d->op == TRD_OP_ATOMIC || (d->flags & TRD_DF_ACKREQ)))
		trd_cpl_set_msg(n, d->aux, d->msg_id); /* its verdict names this message */
	f->off = 0;

	/* The wire header of every packet of this message, in network order; emit() fills in
	 * flags, offset, length and checksum per packet, a reliable peer's session and sequence
	 * are set per packet (trd_rel_hold()). */
	f->hflags = n->hf_data; /* the lane, and the CRC flag */
	aux = 0;
	if (d->flags & TRD_DF_CPL) {
		f->hflags |= TRD_HF_CPL;
		aux = d->aux;
	} else if (d->op == TRD_OP_ATOMIC) {
		aux = d->aux;
	} else if ((d->flags & (TRD_DF_ACKREQ | TRD_DF_REMOTE)) == TRD_DF_ACKREQ) {
		/* a remote descriptor's id only reports its own failure (below), its data
		 * asks for nothing */
		f->hflags |= TRD_HF_ACKREQ;
		aux = d->aux;
	}
	trd_hdr_encode(&f->whdr, &(const struct trd_pkt){
					 .version = TRD_WIRE_VERSION,
					 .type = op_pkt_type[d->op],
					 .src = {n->coord.x, n->coord.y, n->coord.z},
					 .hops = f->rt->hops,
					 .dst = {d->dst.x, d->dst.y, d->dst.z},
					 .fifo = d->op == TRD_OP_ATOMIC ? 0 : d->fifo,
					 .counter = d->rec_ctr,
					 .key = d->op == TRD_OP_FIFO ? d->user : d->rkey,
					 .msg_len = d->len,
					 .msg_id = d->msg_id,
					 .aux = aux,
				 });
	return 0;
}

static inline void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The payload CRC right after a contiguous payload. */
static inline void
crc_append(struct rte_mbuf *m, const uint8_t *pay, uint32_t len)
{
	put_be32((uint8_t *)pay + len, trd_wire_crc(pay, len, 0xffffffff));
	m->data_len += 4;
	m->pkt_len += 4;
}

/* The payload CRC of a zero-copy packet, in a small segment of its own. */
static int
crc_segment(struct trd_node *n, struct rte_mbuf *m, const uint8_t *pay, uint32_t len)
{
	struct rte_mbuf *t = trd_mbuf_get(n);

	if (t == NULL)
		return -ENOBUFS;
	put_be32(rte_pktmbuf_mtod(t, uint8_t *), trd_wire_crc(pay, len, 0xffffffff));
	t->data_len = 4;
	t->pkt_len = 4;
	m->next->next = t;
	m->nb_segs = 3;
	m->pkt_len += 4;
	return 0;
}

/* The counter a zero-copy packet decrements when it is freed, taken off it; or NULL. */
static int64_t *
zc_detach(struct rte_mbuf *m)
{
	for (struct rte_mbuf *s = m; s != NULL; s = s->next)
		if (RTE_MBUF_HAS_EXTBUF(s) && s->shinfo != NULL &&
		    s->shinfo->free_cb == zc_free_cb) {
			struct trd_mbuf_priv *pv = s->shinfo->fcb_opaque;
			int64_t *c = pv->zc.ctr;

			pv->zc.ctr = NULL;
			return c;
		}
	return NULL;
}

/* The descriptor @p f is cutting, if it is for @p pe: given up. */
static void
fifo_abort_peer(struct trd_node *n, struct trd_inj_fifo *f, const struct trd_peer *pe)
{
	if (f == NULL || !f->busy || f->peer != pe)
		return;
	trd_ctr_fail(f->ctr);
	trd_pay_release(f->cur);
	trd_fifo_src_done(f);
	f->busy = false;
	f->pkts_left = 0;
	trd_drop(n, TRD_DROP_PEER_DOWN);
	n->stat[TRD_STAT_DESC_ERRORS]++;
}

void
trd_tx_abort_peer(struct trd_node *n, struct trd_peer *pe)
{
	struct trd_coord c;
	uint32_t mask = n->rel_w - 1;

	if (trd_torus_coord(&n->torus, pe->rank, &c) != 0)
		return;
	/* packets kept for retransmission: the zero-copy ones count down as they are freed */
	for (uint32_t s = pe->snd_una; s != pe->snd_nxt; s++)
		if (pe->txb[s & mask] != NULL)
			trd_ctr_fail(zc_detach(pe->txb[s & mask]));
	/* packets not yet taken by a port count down when they are */
	for (unsigned int i = 0; i <= n->n_links; i++) {
		struct trd_link *l = n->links[i];

		for (uint32_t k = trd_link_pend_first(l); k != trd_link_pend_end(l); k++) {
			struct trd_pend_info *pi;
			struct rte_mbuf *m = trd_link_at(l, k, &pi);
			const struct trd_hdr *h;

			/* a frame the port refused may be wrapped in IPv4/UDP already */
			uint32_t off =
				m->data_len > 12 && rte_pktmbuf_mtod(m, uint8_t *)[12] == 0x08
					? TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN
					: TRD_ETH_HLEN;

			if (m->data_len < off + TRD_HDR_LEN)
				continue;
			h = rte_pktmbuf_mtod_offset(m, const struct trd_hdr *, off);
			if (!trd_coord_eq(c, h->dst) || !trd_coord_eq(n->coord, h->src))
				continue;
			trd_ctr_fail(pi->ctr);
			pi->ctr = NULL;
			trd_ctr_fail(zc_detach(m));
		}
	}
	/* descriptors being cut into packets for it: the rest is never sent */
	for (unsigned int i = 0; i <= n->n_inj; i++)
		fifo_abort_peer(n, n->inj[i], pe);
	for (unsigned int i = 0; i < n->n_gfifo; i++)
		fifo_abort_peer(n, n->gfifo[i], pe);
}

/* Give the ring the units of the open zero-copy dequeue: the stage read there is used up. */
static inline void
stage_release(struct trd_inj_fifo *f)
{
	if (unlikely(f->gr != NULL)) {
		trd_guest_release(f); /* a guest's ring (guest.c) */
		return;
	}
	if (f->held != 0) {
		rte_ring_dequeue_zc_elem_finish(f->ring, f->held);
		f->held = 0;
	}
}

/* Once the stage is used up: up to TRD_STAGE descriptor slots of the FIFO's ring, read where
 * they are (a zero-copy dequeue: the FIFO has one consumer, this lcore) and given back per
 * burst, when the next one is taken or the FIFO's service ends with nothing of it in use. A
 * burst that wraps the ring is copied (once per turn of the ring). @return the slots staged. */
static inline unsigned int
stage_refill(struct trd_inj_fifo *f)
{
	struct rte_ring_zc_data z;
	unsigned int got, avail;

	if (unlikely(f->gr != NULL))
		return trd_guest_refill(f->node, f); /* a guest's ring: checked there (guest.c) */
	stage_release(f);
	f->stage_i = 0;
	got = rte_ring_dequeue_zc_burst_elem_start(f->ring, TRD_UNIT, TRD_STAGE * TRD_UNITS, &z,
						   &avail);
	if (got == 0) {
		f->stage_n = 0;
		return 0;
	}
	if (likely(got == z.n1)) {
		f->stage = z.ptr1;
		f->held = got;
	} else {
		/* (whole 64-byte slots: the ring's size is a multiple of a slot's units) */
		memcpy(f->sbuf, z.ptr1, (size_t)z.n1 * TRD_UNIT);
		memcpy((uint8_t *)f->sbuf + (size_t)z.n1 * TRD_UNIT, z.ptr2,
		       (size_t)(got - z.n1) * TRD_UNIT);
		rte_ring_dequeue_zc_elem_finish(f->ring, got);
		f->stage = f->sbuf;
	}
	f->stage_n = got / TRD_UNITS;
	avail /= TRD_UNITS;
	if (f->stage_n != 0 && f->stage_n + avail > f->hwm)
		f->hwm = f->stage_n + avail;
	return f->stage_n;
}

/* Take the next valid descriptor from the FIFO into f->cur. Returns 1 if there is one.
 * (Always inline, as desc_start(): its one caller is the service loop.) */
static __rte_always_inline int
fifo_next(struct trd_node *n, struct trd_inj_fifo *f)
{
	for (;;) {
		struct trd_desc *d;
		uint32_t req_msg;
		int cause;

		if (f->stage_i == f->stage_n && stage_refill(f) == 0)
			return 0;
		d = &f->stage[f->stage_i++];
		f->cur = d;
		if (d->n_slots != 0) {
			/* The inline data follows in the next slots: posted in one bulk, so the
			 * ones not yet staged are already in the ring. */
			unsigned int want = d->n_slots;
			unsigned int have = RTE_MIN(want, f->stage_n - f->stage_i);

			if (want * 64u > sizeof(f->inl))
				return 0; /* cannot happen: posting bounds it */
			if (have == want) {
				f->inl_src = (const uint8_t *)&f->stage[f->stage_i];
				f->stage_i += have;
			} else {
				/* the descriptor and what is staged of its data are copied, the
				 * stage given back, and the rest taken from the ring */
				f->dcopy = *d;
				f->cur = d = &f->dcopy;
				memcpy(f->inl, &f->stage[f->stage_i], have * 64u);
				f->stage_i = f->stage_n = 0;
				stage_release(f);
				if (rte_ring_sc_dequeue_bulk_elem(
					    f->ring, f->inl + have * 64u, TRD_UNIT,
					    (want - have) * TRD_UNITS, NULL) == 0)
					return 0; /* cannot happen either */
				f->inl_src = f->inl;
			}
		}
		req_msg = d->msg_id; /* a remote descriptor's: the remote get that carried it */
		cause = desc_start(n, f);
		if (likely(cause == 0)) {
			f->busy = true;
			return 1;
		}
		trd_pay_release(d);
		trd_fifo_src_done(f); /* (a check after its source's) */
		trd_drop(n, (unsigned int)cause);
		n->stat[TRD_STAT_DESC_ERRORS]++;
		/* none of its bytes leave: its injection counter can never reach zero */
		if (d->inj_ctr != 0 && d->inj_ctr < n->conf.n_counters)
			trd_ctr_fail(&n->ctr[d->inj_ctr]);
		if (!(d->flags & TRD_DF_REMOTE) &&
		    (d->op == TRD_OP_ATOMIC || (d->flags & TRD_DF_ACKREQ)))
			trd_cpl_fail(n, d->aux, (unsigned int)cause); /* ours: fail it here */
		else if (d->op == TRD_OP_RGET && !(d->flags & TRD_DF_REMOTE) &&
			 cause != TRD_DROP_PEER_DOWN) /* (else fail_pending() did, rel.c) */
			/* a reflection's completion never comes back (a guest's carried
			 * descriptors are in the stage's buffer, d->src) */
			trd_cpl_fail_carried(n, d,
					     d->n_slots != 0 ? (const void *)f->inl_src
							     : (const void *)(uintptr_t)d->src,
					     (unsigned int)cause);
		else if ((d->flags & (TRD_DF_REMOTE | TRD_DF_ACKREQ)) ==
			 (TRD_DF_REMOTE | TRD_DF_ACKREQ)) {
			/* a remote get asked us for something we cannot do: tell the requester,
			 * naming its remote get as the verdict on it would */
			uint8_t to[3] = {d->dst.x, d->dst.y, d->dst.z};

			trd_ctl_send(n, to, TRD_PKT_DONE, d->aux, (uint64_t)cause, req_msg, NULL,
				     0);
		}
	}
}

/* Build up to @p max packets of the current descriptor into its link's buffer. */
static unsigned int
emit(struct trd_node *n, struct trd_inj_fifo *f, unsigned int max)
{
	struct trd_desc *d = f->cur;
	struct trd_link *l = f->link;
	uint64_t base = (d->op == TRD_OP_PUT || d->op == TRD_OP_ATOMIC) ? d->roff : 0;
	unsigned int k = 0;

	while (k < max && f->pkts_left != 0) {
		uint32_t chunk = RTE_MIN((uint32_t)f->maxpay, d->len - f->off);
		struct rte_mbuf *m = trd_mbuf_get(n);
		struct trd_hdr *h;
		uint16_t flags;

		if (unlikely(m == NULL))
			break;
		h = frame_start(f, m);
		flags = f->hflags | (f->off == 0 ? TRD_HF_FIRST : 0) |
			(f->pkts_left == 1 ? TRD_HF_LAST : 0);
		h->flags = trd_be16(flags);
		h->offset = trd_be64(base + f->off);
		h->pay_len = trd_be16((uint16_t)chunk);

		if (unlikely(d->flags & TRD_DF_PAYLOAD)) {
			if (trd_pay_emit(n, f, m, h) != 0) { /* a shared payload (payload.c) */
				rte_pktmbuf_free(m);
				break;
			}
		} else if (f->zc && chunk != 0) {
			struct rte_mbuf *e = trd_mbuf_get(n);
			struct trd_mbuf_priv *pv;

			if (unlikely(e == NULL)) {
				rte_pktmbuf_free(m);
				break;
			}
			pv = trd_mbuf_priv(e);
			pv->zc.shinfo.free_cb = zc_free_cb;
			pv->zc.shinfo.fcb_opaque = pv;
			rte_mbuf_ext_refcnt_set(&pv->zc.shinfo, 1);
			pv->zc.ctr = f->ctr;
			pv->zc.bytes = chunk;
			rte_pktmbuf_attach_extbuf(e, (void *)(uintptr_t)(f->src + f->off),
						  f->src_iova + f->off, (uint16_t)chunk,
						  &pv->zc.shinfo);
			e->data_len = (uint16_t)chunk;
			e->pkt_len = chunk;
			m->data_len = TRD_FRAME_HLEN;
			m->pkt_len = TRD_FRAME_HLEN + chunk;
			m->next = e;
			m->nb_segs = 2;
			if ((unlikely(n->conf.payload_crc) &&
			     crc_segment(n, m, f->src + f->off, chunk)) ||
			    trd_pkt_finish(n, f->peer, h, m) != 0) {
				rte_pktmbuf_free(m);
				break;
			}
			trd_link_queue(l, m, NULL, f, chunk);
			n->stat[TRD_STAT_ZCOPY_PKTS]++;
		} else {
			/* an empty message may have no source at all (NULL + 0 is undefined) */
			if (chunk != 0)
				rte_memcpy((uint8_t *)(h + 1), f->src + f->off, chunk);
			m->data_len = (uint16_t)(TRD_FRAME_HLEN + chunk);
			m->pkt_len = TRD_FRAME_HLEN + chunk;
			if (unlikely(n->conf.payload_crc))
				crc_append(m, (uint8_t *)(h + 1), chunk);
			if (unlikely(trd_pkt_finish(n, f->peer, h, m) != 0)) {
				rte_pktmbuf_free(m);
				break;
			}
			trd_link_queue(l, m, f->ctr, f, chunk);
		}
		f->unsent++;
		f->off += chunk;
		f->pkts_left--;
		k++;
	}
	n->stat[tx_type_stat[d->op]] += k;
	f->pkts += k;
	if (f->pkts_left == 0) {
		trd_pay_release(d);
		trd_fifo_src_done(f);
		f->busy = false;
		f->descs++;
		n->stat[TRD_STAT_DESCS]++;
	}
	return k;
}

/* ---- coalescing: several small messages for one node in one BUNDLE frame ---- */

/* A descriptor that may share a frame with others: a whole put, memory-FIFO message or remote
 * get that asks for nothing per packet (no completion, verdict or ordering) and whose bytes
 * are its own (not a shared payload, which is referenced, never copied), for @p dst, counting
 * on the injection counter @p inj. A remote get's carried descriptors, once at the target,
 * may share frames too (TRD_DF_REMOTE, without ACKREQ: their data asks for nothing). */
static inline bool
bundle_ok(const struct trd_desc *d, struct trd_coord dst, uint16_t inj)
{
	return (d->op == TRD_OP_PUT || d->op == TRD_OP_FIFO || d->op == TRD_OP_RGET) &&
	       !(d->flags & (TRD_DF_ORDERED | TRD_DF_CPL | TRD_DF_ACKREQ | TRD_DF_PAYLOAD)) &&
	       d->dst.x == dst.x && d->dst.y == dst.y && d->dst.z == dst.z && d->inj_ctr == inj;
}

/* A descriptor that may follow others in a bundle: as bundle_ok(), and an ordered one (a
 * reflection's remote get) too when @p ordered_ok: nothing of its FIFO before the bundle is
 * still waiting for a port, so every earlier packet is handed over with or before the frame,
 * and the messages before it in the frame are acted on before it at the target. */
static inline bool
bundle_next_ok(const struct trd_desc *d, struct trd_coord dst, uint16_t inj, bool ordered_ok)
{
	return (d->op == TRD_OP_PUT || d->op == TRD_OP_FIFO || d->op == TRD_OP_RGET) &&
	       !(d->flags & (TRD_DF_CPL | TRD_DF_ACKREQ | TRD_DF_PAYLOAD)) &&
	       (ordered_ok || !(d->flags & TRD_DF_ORDERED)) && d->dst.x == dst.x &&
	       d->dst.y == dst.y && d->dst.z == dst.z && d->inj_ctr == inj;
}

/* The bytes of the staged descriptor at stage_i, to be copied into a bundle: resolved as
 * desc_start() does, or NULL where that one would refuse it or send it zero-copy (the
 * descriptor then goes alone, through desc_start(), which counts the refusal). */
static inline const uint8_t *
bundle_src(struct trd_node *n, const struct trd_inj_fifo *f, const struct trd_desc *d)
{
	const uint8_t *src;
	rte_iova_t iova;

	if (d->n_slots != 0)
		return f->stage_n - f->stage_i - 1 >= d->n_slots
			       ? (const uint8_t *)&f->stage[f->stage_i + 1]
			       : NULL;
	/* desc_start() would send a longer one zero-copy where it can: never in a bundle (a
	 * remote get's descriptors are always copied) */
	/* (read now, in this round: not counted as a reader) */
	if (desc_src(n, d, &src, &iova, NULL) != 0 ||
	    (d->len > n->conf.inline_max && !(d->flags & TRD_DF_IMM) && d->op != TRD_OP_RGET))
		return NULL;
	return src;
}

/* One message into a bundle at @p p: its entry header, then its bytes. @return bytes used.
 * (Always inline, and its statistics are counted once per frame by emit_bundle().) */
static __rte_always_inline uint32_t
bundle_entry(uint8_t *p, const struct trd_desc *d, const uint8_t *src)
{
	if (d->op == TRD_OP_PUT)
		trd_wire_entry_encode(p, TRD_PKT_PUT, 0, d->rec_ctr, (uint16_t)d->len, d->rkey,
				      d->roff);
	else if (d->op == TRD_OP_FIFO)
		trd_wire_entry_encode(p, TRD_PKT_FIFO, d->fifo, d->rec_ctr, (uint16_t)d->len,
				      d->user, 0);
	else /* a remote get: its descriptors, for the target's injection FIFO d->fifo */
		trd_wire_entry_encode(p, TRD_PKT_RGET, d->fifo, 0, (uint16_t)d->len, 0, 0);
	if (d->len != 0)
		rte_memcpy(p + TRD_ENTRY_LEN, src, d->len);
	return TRD_ENTRY_LEN + d->len;
}

/* The first 8 bytes of a descriptor as one word (op, flags, fifo, n_slots, dst, ack_fifo). */
static inline uint64_t
desc_word0(const struct trd_desc *d)
{
	uint64_t w;

	memcpy(&w, d, sizeof(w));
	return w;
}

/* The bytes of desc_word0() that decide whether a descriptor may join a bundle: op, flags and
 * destination (fifo, n_slots and the reserved byte may differ). */
static inline uint64_t
bundle_key_mask(void)
{
	struct trd_desc m;
	uint64_t w;

	memset(&m, 0, sizeof(m));
	m.op = 0xff;
	m.flags = 0xff;
	m.dst.x = m.dst.y = m.dst.z = 0xff;
	memcpy(&w, &m, sizeof(w));
	return w;
}

/* The current descriptor (a whole message, to be copied) and those queued behind it for the
 * same node, as many as fit and conf.coalesce allows, in one BUNDLE frame: one header, one
 * sequence number, one mbuf for all. Only what the FIFO already holds goes: nothing waits.
 * @return 1 (the frame is queued and the current descriptor done), or 0: the next descriptor
 * cannot join, and the current one goes alone through emit(). */
static unsigned int
emit_bundle(struct trd_node *n, struct trd_inj_fifo *f)
{
	const struct trd_desc *d = f->cur, *nx;
	const struct trd_coord dst = d->dst;
	const uint16_t inj = d->inj_ctr;
	const uint8_t op = d->op; /* (a refill below may write over d: a stage copied) */
	const uint32_t max = f->maxpay;
	const bool ord = f->unsent == 0;
	/* d passed bundle_ok(): a descriptor with its op, flags, destination and injection
	 * counter passes bundle_next_ok() too, found with one compare of a word */
	const uint64_t kmask = bundle_key_mask(), key = desc_word0(d) & kmask;
	uint32_t used, cnt = 1, nslow = 1, nput, nfifo, nsame;
	const uint8_t *nsrc;
	struct rte_mbuf *m;
	struct trd_hdr *h;
	uint8_t *p;

	if (f->stage_i == f->stage_n)
		return 0;
	nx = &f->stage[f->stage_i];
	if (!bundle_next_ok(nx, dst, inj, ord) || 2u * TRD_ENTRY_LEN + d->len + nx->len > max ||
	    (nsrc = bundle_src(n, f, nx)) == NULL)
		return 0;
	m = trd_mbuf_get(n);
	if (unlikely(m == NULL))
		return 0;
	h = frame_start(f, m); /* the first message's header: its id is the bundle's */
	p = (uint8_t *)(h + 1);
	/* the statistics count by op: the messages the word compare admits have d's, those
	 * admitted on their own (nslow, the first of them nx) are counted one by one */
	nput = nx->op == TRD_OP_PUT;
	nfifo = nx->op == TRD_OP_FIFO;
	used = bundle_entry(p, d, f->src);
	for (;;) {
		used += bundle_entry(p + used, nx, nsrc);
		f->stage_i += 1u + nx->n_slots;
		if (++cnt == n->conf.coalesce)
			break;
		/* d is in the stage, and so are the bytes copied: the stage may be refilled */
		if (f->stage_i == f->stage_n && stage_refill(f) == 0)
			break;
		nx = &f->stage[f->stage_i];
		if (likely((desc_word0(nx) & kmask) == key && nx->inj_ctr == inj)) {
			if (used + TRD_ENTRY_LEN + nx->len > max ||
			    (nsrc = bundle_src(n, f, nx)) == NULL)
				break;
		} else {
			if (!bundle_next_ok(nx, dst, inj, ord) ||
			    used + TRD_ENTRY_LEN + nx->len > max ||
			    (nsrc = bundle_src(n, f, nx)) == NULL)
				break;
			nslow++;
			nput += nx->op == TRD_OP_PUT;
			nfifo += nx->op == TRD_OP_FIFO;
		}
	}
	nsame = cnt - nslow; /* d and those of its kind */
	nput += op == TRD_OP_PUT ? nsame : 0;
	nfifo += op == TRD_OP_FIFO ? nsame : 0;
	/* the ids of a bundle's messages follow each other: entry i is msg_id + i (the first's
	 * was taken by desc_start()) */
	n->next_msg_id += cnt - 1;
	n->stat[TRD_STAT_TX_PUT] += nput;
	n->stat[TRD_STAT_TX_FIFO] += nfifo;
	n->stat[TRD_STAT_TX_RGET] += cnt - nput - nfifo;
	n->stat[TRD_STAT_DESCS] += cnt;
	f->descs += cnt;
	h->type = TRD_PKT_BUNDLE;
	h->flags = trd_be16(TRD_HF_ALL | n->hf_data);
	h->fifo = 0;
	h->counter = 0;
	h->key = 0;
	h->offset = 0;
	h->msg_len = trd_be32(used);
	h->pay_len = trd_be16((uint16_t)used);
	h->aux = trd_be32(cnt);
	m->data_len = (uint16_t)(TRD_FRAME_HLEN + used);
	m->pkt_len = TRD_FRAME_HLEN + used;
	if (unlikely(n->conf.payload_crc))
		crc_append(m, p, used);
	if (unlikely(trd_pkt_finish(n, f->peer, h, m) != 0)) {
		/* (no mbuf for the token's segment: the messages are gone, their counter is
		 * told; cannot happen while the frame fits its mbuf, as it does) */
		rte_pktmbuf_free(m);
		trd_drop(n, TRD_DROP_NO_MEMORY);
		if (f->ctr != NULL)
			trd_ctr_fail(f->ctr);
		f->pkts_left = 0;
		trd_fifo_src_done(f);
		f->busy = false;
		return 1;
	}
	/* the injection counter counts the messages' bytes, not their entry headers */
	trd_link_queue(f->link, m, f->ctr, f, used - cnt * TRD_ENTRY_LEN);
	n->stat[TRD_STAT_TX_BUNDLES]++;
	f->unsent++;
	f->pkts++;
	f->pkts_left = 0;
	trd_fifo_src_done(f); /* (the first message was started by desc_start()) */
	f->busy = false;
	return 1;
}

/* Packetize up to @p budget packets from one FIFO. */
unsigned int
trd_inj_fifo_service(struct trd_node *n, struct trd_inj_fifo *f, unsigned int budget)
{
	unsigned int sent = 0;

	while (sent < budget) {
		unsigned int room, k;

		if (!f->busy && !fifo_next(n, f))
			break;
		/* An ordered descriptor (a reflection) waits until every earlier packet of
		 * this FIFO was taken by its port: handed to it now, so that the reflection
		 * leaves in this poll round rather than the next. */
		if ((f->cur->flags & TRD_DF_ORDERED) && f->unsent != 0) {
			trd_node_flush(n);
			if (f->unsent != 0)
				break;
		}
		room = RTE_MIN(trd_link_room(f->link), trd_rel_room(n, f->peer));
		if (room == 0)
			break;
		k = 0;
		if (n->conf.coalesce > 1 && f->pkts_left == 1 && f->off == 0 && !f->zc &&
		    bundle_ok(f->cur, f->cur->dst, f->cur->inj_ctr))
			k = emit_bundle(n, f);
		if (k == 0)
			k = emit(n, f, RTE_MIN(budget - sent, room));
		if (k == 0)
			break;
		sent += k;
	}
	/* the burst's slots go back to the posters once nothing of them is in use */
	if (!f->busy && f->stage_i == f->stage_n)
		stage_release(f);
	return sent;
}
