/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DMA engine: posting descriptors into injection FIFOs, cutting them into framed packets,
 * handing packets to links in order, and the poll loop that one lcore runs for many nodes.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring_elem.h>

#include "dma_pvt.h"

/* ---- descriptor helpers ---- */

void
trd_desc_put(struct trd_desc *d, struct trd_coord dst, const void *src, uint32_t len,
	     uint64_t rkey, uint64_t roff, uint16_t inj_ctr, uint16_t rec_ctr)
{
	memset(d, 0, sizeof(*d));
	d->op = TRD_OP_PUT;
	d->dst = dst;
	d->src = (uint64_t)(uintptr_t)src;
	d->len = len;
	d->rkey = rkey;
	d->roff = roff;
	d->inj_ctr = inj_ctr;
	d->rec_ctr = rec_ctr;
}

void
trd_desc_fifo(struct trd_desc *d, struct trd_coord dst, uint8_t fifo, const void *src,
	      uint32_t len, uint64_t user, uint16_t inj_ctr)
{
	memset(d, 0, sizeof(*d));
	d->op = TRD_OP_FIFO;
	d->dst = dst;
	d->fifo = fifo;
	d->src = (uint64_t)(uintptr_t)src;
	d->len = len;
	d->user = user;
	d->inj_ctr = inj_ctr;
}

void
trd_desc_rget(struct trd_desc *d, struct trd_coord dst, uint8_t fifo,
	      const struct trd_desc *carried, unsigned int n)
{
	memset(d, 0, sizeof(*d));
	d->op = TRD_OP_RGET;
	d->dst = dst;
	d->fifo = fifo;
	d->src = (uint64_t)(uintptr_t)carried;
	d->len = n * (uint32_t)sizeof(struct trd_desc);
}

void
trd_desc_atomic(struct trd_desc *d, struct trd_coord dst, enum trd_atomic_op op, uint64_t rkey,
		uint64_t roff, uint64_t operand, uint64_t compare)
{
	memset(d, 0, sizeof(*d));
	d->op = TRD_OP_ATOMIC;
	d->dst = dst;
	d->fifo = (uint8_t)op;
	d->len = 8;
	d->rkey = rkey;
	d->roff = roff;
	d->user = operand;
	d->src = compare;
}

/* ---- posting ---- */

struct trd_fifo *
trd_inj_fifo(struct trd_node *n, unsigned int idx)
{
	if (n == NULL)
		return NULL;
	if (idx == TRD_ENGINE_FIFO_ID)
		return n->inj[n->n_inj];
	return idx < n->n_inj ? n->inj[idx] : NULL;
}

unsigned int
trd_fifo_free_count(const struct trd_fifo *f)
{
	return f == NULL ? 0 : rte_ring_free_count(f->ring) / TRD_UNITS;
}

int
trd_fifo_stats_get(const struct trd_fifo *f, struct trd_fifo_stats *st)
{
	if (f == NULL || st == NULL)
		return -EINVAL;
	st->descs = __atomic_load_n(&f->descs, __ATOMIC_RELAXED);
	st->pkts = __atomic_load_n(&f->pkts, __ATOMIC_RELAXED);
	st->pkts_sent = __atomic_load_n(&f->sent, __ATOMIC_ACQUIRE);
	st->used = rte_ring_count(f->ring) / TRD_UNITS;
	st->hwm = __atomic_load_n(&f->hwm, __ATOMIC_RELAXED);
	return 0;
}

static inline bool
iova_is_va(void)
{
	return rte_eal_iova_mode() == RTE_IOVA_VA;
}

/* Check a descriptor an application posts. Returns 0 or -errno. */
static int
desc_check_local(const struct trd_node *n, const struct trd_desc *d)
{
	int rank;

	if (d->op == TRD_OP_NONE || d->op >= TRD_OP_MAX || (d->flags & ~TRD_DF_USER_MASK) != 0)
		return -EINVAL;
	rank = trd_rank_of(n, d->dst);
	if (rank < 0)
		return -EINVAL;
	if (n->routes[rank].link == NULL)
		return -EHOSTUNREACH;
	if (trd_peer_is_down(n, (uint32_t)rank))
		return -EHOSTUNREACH; /* declared down: fail fast until it speaks again */
	if (d->inj_ctr != 0 && (d->inj_ctr >= n->conf.n_counters || !n->ctr_used[d->inj_ctr]))
		return -EINVAL;
	if ((d->flags & TRD_DF_IMM) && ((d->flags & TRD_DF_SRC_MR) || d->len > 8))
		return -EINVAL;
	if ((d->flags & TRD_DF_ACKREQ) && ((d->flags & TRD_DF_CPL) || d->aux == 0))
		return -EINVAL;
	if (d->op == TRD_OP_ATOMIC)
		return (d->fifo >= TRD_ATOMIC_FADD && d->fifo <= TRD_ATOMIC_SWAP && d->len == 8 &&
			(d->flags & ~TRD_DF_ORDERED) == TRD_DF_ACKREQ && d->inj_ctr == 0)
			       ? 0
			       : -EINVAL;
	if (d->op == TRD_OP_RGET) {
		const struct trd_desc *c = (const void *)(uintptr_t)d->src;
		unsigned int nc = d->len / sizeof(*d);

		if (c == NULL || d->len == 0 || d->len % sizeof(*d) != 0 ||
		    nc > TRD_RGET_MAX_DESCS || (d->flags & (TRD_DF_IMM | TRD_DF_SRC_MR)))
			return -EINVAL;
		if (d->len > (uint32_t)(n->routes[rank].link->mtu - TRD_HDR_LEN))
			return -EMSGSIZE;
		for (unsigned int i = 0; i < nc; i++)
			if (trd_desc_check_remote(&c[i], n->coord) != 0)
				return -EINVAL;
		return 0;
	}
	if (d->len != 0 && d->src == 0 && !(d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)))
		return -EINVAL;
	return 0;
}

/* Slots a descriptor takes in the FIFO, and whether its data is copied now. */
static inline unsigned int
desc_slots(const struct trd_node *n, const struct trd_desc *d)
{
	if (d->op == TRD_OP_RGET)
		return (d->len + 63) / 64;
	if (d->op == TRD_OP_ATOMIC)
		return 0; /* its operands travel in the descriptor */
	if ((d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)) || d->len == 0 || d->len > n->conf.inline_max)
		return 0;
	return (d->len + 63) / 64;
}

#define TRD_BULK_SLOTS 512

int
trd_inject_bulk(struct trd_fifo *f, const struct trd_desc *d, unsigned int nd)
{
	struct trd_desc buf[TRD_BULK_SLOTS];
	struct trd_node *n;
	unsigned int total = 0;
	int rc;

	if (f == NULL || (d == NULL && nd != 0))
		return -EINVAL;
	n = f->node;
	for (unsigned int i = 0; i < nd; i++) {
		unsigned int s;

		rc = desc_check_local(n, &d[i]);
		if (rc != 0)
			return rc;
		s = desc_slots(n, &d[i]);
		if (total + 1 + s > TRD_BULK_SLOTS)
			return -E2BIG;
		buf[total] = d[i];
		buf[total].n_slots = (uint8_t)s;
		buf[total].msg_id = 0;
		if (s != 0)
			memcpy(&buf[total + 1], (const void *)(uintptr_t)d[i].src, d[i].len);
		total += 1 + s;
	}
	if (total == 0)
		return 0;
	if (rte_ring_enqueue_bulk_elem(f->ring, buf, TRD_UNIT, total * TRD_UNITS, NULL) == 0)
		return -ENOBUFS;
	return 0;
}

int
trd_inject(struct trd_fifo *f, const struct trd_desc *d)
{
	return trd_inject_bulk(f, d, 1);
}

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

/* Resolve the current descriptor: route, source bytes, header template. 0 or a drop cause. */
static int
desc_start(struct trd_node *n, struct trd_fifo *f)
{
	struct trd_desc *d = f->cur;
	struct trd_hdr *h;
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
	} else if (d->flags & TRD_DF_IMM) {
		f->src = (const uint8_t *)&d->user;
	} else if (d->flags & TRD_DF_SRC_MR) {
		struct trd_mr *mr = trd_mr_lookup(n, d->src_key);

		if (mr == NULL)
			return TRD_DROP_BAD_KEY;
		if ((d->flags & TRD_DF_REMOTE) && !(mr->access & TRD_ACCESS_REMOTE_READ))
			return TRD_DROP_NO_ACCESS;
		if (d->src > mr->len || d->len > mr->len - d->src)
			return TRD_DROP_OUT_OF_BOUNDS;
		f->src = mr->base + d->src;
		f->zc = d->len > n->conf.inline_max;
	} else {
		f->src = (const uint8_t *)(uintptr_t)d->src;
		f->zc = d->len > n->conf.inline_max;
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
	if (!f->link->chain_ok || !iova_is_va() || d->op == TRD_OP_RGET || d->op == TRD_OP_ATOMIC)
		f->zc = false;
	f->maxpay = (uint16_t)(f->link->mtu - TRD_HDR_LEN);
	f->pkts_left = d->len == 0 ? 1 : (d->len + f->maxpay - 1u) / f->maxpay;
	if (d->op == TRD_OP_RGET && f->pkts_left != 1)
		return TRD_DROP_BAD_DESC;
	d->msg_id = n->next_msg_id++;
	f->off = 0;

	/* The wire header of every packet of this message, in network order; emit() fills in
	 * flags, offset, length and checksum per packet. */
	h = &f->whdr;
	h->version = TRD_WIRE_VERSION;
	h->type = op_pkt_type[d->op];
	h->flags = 0;
	h->src[0] = n->coord.x;
	h->src[1] = n->coord.y;
	h->src[2] = n->coord.z;
	h->hops = f->rt->hops;
	h->dst[0] = d->dst.x;
	h->dst[1] = d->dst.y;
	h->dst[2] = d->dst.z;
	h->fifo = d->op == TRD_OP_ATOMIC ? 0 : d->fifo;
	h->counter = rte_cpu_to_be_16(d->rec_ctr);
	h->csum = 0;
	h->key = rte_cpu_to_be_64(d->op == TRD_OP_FIFO ? d->user : d->rkey);
	h->offset = 0;
	h->msg_len = rte_cpu_to_be_32(d->len);
	h->pay_len = 0;
	h->epoch = 0; /* a reliable peer's session, set per packet */
	h->msg_id = rte_cpu_to_be_32(d->msg_id);
	h->seq = 0;
	h->ack = 0;
	f->hflags = 0;
	h->aux = 0;
	if (d->flags & TRD_DF_CPL) {
		f->hflags = TRD_HF_CPL;
		h->aux = rte_cpu_to_be_32(d->aux);
	} else if (d->op == TRD_OP_ATOMIC) {
		h->aux = rte_cpu_to_be_32(d->aux);
	} else if ((d->flags & (TRD_DF_ACKREQ | TRD_DF_REMOTE)) == TRD_DF_ACKREQ) {
		/* a remote descriptor's id only reports its own failure (below), its data
		 * asks for nothing */
		f->hflags = TRD_HF_ACKREQ;
		h->aux = rte_cpu_to_be_32(d->aux);
	}
	return 0;
}

/* Sequence (reliable peers) and checksum a built packet. */
static inline void
finish(struct trd_node *n, struct trd_peer *pe, struct trd_hdr *h, struct rte_mbuf *m)
{
	if (pe != NULL)
		trd_rel_hold(n, pe, h, m);
	h->csum = 0;
	h->csum = (uint16_t)~rte_raw_cksum(h, TRD_HDR_LEN);
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

/* Build and queue an engine-made packet (DONE, ATOMIC_REPLY: sequenced; ACK: not). */
static int
ctl_build(struct trd_node *n, const uint8_t dst[3], uint8_t type, uint16_t flags, uint32_t aux,
	  uint64_t key, uint64_t offset, const void *pay, uint16_t len, bool sequenced,
	  uint32_t ack, uint16_t epoch)
{
	struct trd_coord c = {dst[0], dst[1], dst[2]};
	int rank = trd_rank_of(n, c);
	struct trd_peer *pe = NULL;
	struct rte_ether_hdr *eh;
	struct trd_route *rt;
	struct rte_mbuf *m;
	struct trd_hdr *h;

	if (rank < 0)
		return TRD_DROP_UNKNOWN_NODE;
	rt = &n->routes[rank];
	if (rt->link == NULL)
		return TRD_DROP_NO_ROUTE;
	if (sequenced && n->reliable && (uint32_t)rank != n->rank) {
		pe = trd_rel_peer(n, (uint32_t)rank);
		if (pe == NULL)
			return TRD_DROP_NO_MEMORY;
		if (pe->down)
			return TRD_DROP_PEER_DOWN;
		if (trd_rel_room_ctl(n, pe) == 0)
			return TRD_DROP_REPLY_FULL;
	}
	if (trd_link_room(rt->link) == 0)
		return TRD_DROP_REPLY_FULL;
	m = trd_mbuf_get(n);
	if (m == NULL)
		return TRD_DROP_NO_MEMORY;
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eh->dst_addr = rt->dmac;
	eh->src_addr = rt->link->mac;
	eh->ether_type = rte_cpu_to_be_16(TRD_ETHERTYPE);
	h = (struct trd_hdr *)(eh + 1);
	memset(h, 0, sizeof(*h));
	h->version = TRD_WIRE_VERSION;
	h->type = type;
	h->flags = rte_cpu_to_be_16(flags);
	h->src[0] = n->coord.x;
	h->src[1] = n->coord.y;
	h->src[2] = n->coord.z;
	h->hops = rt->hops;
	memcpy(h->dst, dst, 3);
	h->key = rte_cpu_to_be_64(key);
	h->offset = rte_cpu_to_be_64(offset);
	h->msg_len = rte_cpu_to_be_32(len);
	h->pay_len = rte_cpu_to_be_16(len);
	h->msg_id = rte_cpu_to_be_32(n->next_msg_id++);
	h->ack = rte_cpu_to_be_32(ack);
	h->aux = rte_cpu_to_be_32(aux);
	h->epoch = rte_cpu_to_be_16(epoch); /* an ACK's own session; trd_rel_hold() sets it else */
	if (len != 0)
		memcpy(h + 1, pay, len);
	m->data_len = (uint16_t)(TRD_FRAME_HLEN + len);
	m->pkt_len = TRD_FRAME_HLEN + len;
	finish(n, pe, h, m);
	trd_link_queue(rt->link, m, NULL, NULL, 0);
	return 0;
}

bool
trd_ctl_room(struct trd_node *n, const uint8_t dst[3])
{
	struct trd_coord c = {dst[0], dst[1], dst[2]};
	int rank = trd_rank_of(n, c);
	struct trd_route *rt;

	if (rank < 0)
		return true; /* the send itself will say why not */
	rt = &n->routes[rank];
	if (rt->link == NULL)
		return true;
	if (n->reliable && (uint32_t)rank != n->rank) {
		struct trd_peer *pe = trd_rel_peer(n, (uint32_t)rank);

		if (pe == NULL)
			return true; /* the send says why not */
		if (trd_rel_room_ctl(n, pe) == 0) {
			trd_rel_want(n, pe); /* perhaps its session must start first */
			return false;
		}
	}
	return trd_link_room(rt->link) != 0 && (n->mcache_n != 0 || rte_mempool_avail_count(n->pool) != 0);
}

int
trd_ctl_send(struct trd_node *n, const uint8_t dst[3], uint8_t type, uint32_t aux, uint64_t key,
	     uint64_t offset, const void *pay, uint16_t len)
{
	int rc = ctl_build(n, dst, type, TRD_HF_ALL, aux, key, offset, pay, len, true, 0, 0);

	if (rc == 0)
		n->stat[TRD_STAT_TX_CTL]++;
	return rc;
}

int
trd_ctl_send_ack(struct trd_node *n, const uint8_t dst[3], uint16_t flags, uint32_t ack,
		 uint16_t acked_epoch, uint16_t epoch, uint64_t key, uint32_t aux, const void *sack,
		 uint16_t len)
{
	return ctl_build(n, dst, TRD_PKT_ACK, TRD_HF_ALL | flags, aux, key, acked_epoch, sack, len,
			 false, ack, epoch);
}

/* The counter a zero-copy packet decrements when it is freed, taken off it; or NULL. */
static int64_t *
zc_detach(struct rte_mbuf *m)
{
	for (struct rte_mbuf *s = m; s != NULL; s = s->next)
		if (RTE_MBUF_HAS_EXTBUF(s) && s->shinfo != NULL && s->shinfo->free_cb == zc_free_cb) {
			struct trd_mbuf_priv *pv = s->shinfo->fcb_opaque;
			int64_t *c = pv->zc.ctr;

			pv->zc.ctr = NULL;
			return c;
		}
	return NULL;
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

		for (uint32_t k = l->pend_head; k != l->pend_tail; k++) {
			struct trd_pend_info *pi = &l->info[k & TRD_LINK_PEND_MASK];
			struct rte_mbuf *m = l->pend[k & TRD_LINK_PEND_MASK];
			const struct trd_hdr *h;

			if (m->data_len < TRD_FRAME_HLEN)
				continue;
			h = rte_pktmbuf_mtod_offset(m, const struct trd_hdr *, TRD_ETH_HLEN);
			if (!trd_coord_eq(c, h->dst) || !trd_coord_eq(n->coord, h->src))
				continue;
			trd_ctr_fail(pi->ctr);
			pi->ctr = NULL;
			trd_ctr_fail(zc_detach(m));
		}
	}
	/* descriptors being cut into packets for it: the rest is never sent */
	for (unsigned int i = 0; i <= n->n_inj; i++) {
		struct trd_fifo *f = n->inj[i];

		if (!f->busy || f->peer != pe)
			continue;
		trd_ctr_fail(f->ctr);
		f->busy = false;
		f->pkts_left = 0;
		trd_drop(n, TRD_DROP_PEER_DOWN);
		n->stat[TRD_STAT_DESC_ERRORS]++;
	}
}

/* Take the next valid descriptor from the FIFO into f->cur. Returns 1 if there is one. */
static int
fifo_next(struct trd_node *n, struct trd_fifo *f)
{
	for (;;) {
		struct trd_desc *d;
		int cause;

		if (f->stage_i == f->stage_n) {
			unsigned int avail;

			f->stage_i = 0;
			f->stage_n = rte_ring_sc_dequeue_burst_elem(f->ring, f->stage, TRD_UNIT,
								    TRD_STAGE * TRD_UNITS,
								    &avail) /
				     TRD_UNITS;
			if (f->stage_n == 0)
				return 0;
			avail /= TRD_UNITS;
			if (f->stage_n + avail > f->hwm)
				f->hwm = f->stage_n + avail;
		}
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
			} else {
				memcpy(f->inl, &f->stage[f->stage_i], have * 64u);
				if (rte_ring_sc_dequeue_bulk_elem(f->ring, f->inl + have * 64u,
								  TRD_UNIT,
								  (want - have) * TRD_UNITS,
								  NULL) == 0)
					return 0; /* cannot happen either */
				f->inl_src = f->inl;
			}
			f->stage_i += have;
		}
		cause = desc_start(n, f);
		if (likely(cause == 0)) {
			f->busy = true;
			return 1;
		}
		trd_drop(n, (unsigned int)cause);
		n->stat[TRD_STAT_DESC_ERRORS]++;
		/* none of its bytes leave: its injection counter can never reach zero */
		if (d->inj_ctr != 0 && d->inj_ctr < n->conf.n_counters)
			trd_ctr_fail(&n->ctr[d->inj_ctr]);
		if (!(d->flags & TRD_DF_REMOTE) && (d->op == TRD_OP_ATOMIC || (d->flags & TRD_DF_ACKREQ)))
			trd_cpl_fail(n, d->aux, (unsigned int)cause); /* ours: fail it here */
		else if ((d->flags & (TRD_DF_REMOTE | TRD_DF_ACKREQ)) ==
			 (TRD_DF_REMOTE | TRD_DF_ACKREQ)) {
			/* a remote get asked us for something we cannot do: tell the requester */
			uint8_t to[3] = {d->dst.x, d->dst.y, d->dst.z};

			trd_ctl_send(n, to, TRD_PKT_DONE, d->aux, (uint64_t)cause, 0, NULL, 0);
		}
	}
}

/* Build up to @p max packets of the current descriptor into its link's buffer. */
static unsigned int
emit(struct trd_node *n, struct trd_fifo *f, unsigned int max)
{
	struct trd_desc *d = f->cur;
	struct trd_link *l = f->link;
	uint64_t base = (d->op == TRD_OP_PUT || d->op == TRD_OP_ATOMIC) ? d->roff : 0;
	unsigned int k = 0;

	while (k < max && f->pkts_left != 0) {
		uint32_t chunk = RTE_MIN((uint32_t)f->maxpay, d->len - f->off);
		struct rte_mbuf *m = trd_mbuf_get(n);
		struct rte_ether_hdr *eh;
		struct trd_hdr *h;
		uint16_t flags;

		if (unlikely(m == NULL))
			break;
		eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		eh->dst_addr = f->rt->dmac;
		eh->src_addr = l->mac;
		eh->ether_type = rte_cpu_to_be_16(TRD_ETHERTYPE);
		h = (struct trd_hdr *)(eh + 1);
		*h = f->whdr;
		flags = f->hflags | (f->off == 0 ? TRD_HF_FIRST : 0) |
			(f->pkts_left == 1 ? TRD_HF_LAST : 0) | (n->conf.payload_crc ? TRD_HF_CRC : 0);
		h->flags = rte_cpu_to_be_16(flags);
		h->offset = rte_cpu_to_be_64(base + f->off);
		h->pay_len = rte_cpu_to_be_16((uint16_t)chunk);

		if (f->zc && chunk != 0) {
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
						  (rte_iova_t)(uintptr_t)(f->src + f->off),
						  (uint16_t)chunk, &pv->zc.shinfo);
			e->data_len = (uint16_t)chunk;
			e->pkt_len = chunk;
			m->data_len = TRD_FRAME_HLEN;
			m->pkt_len = TRD_FRAME_HLEN + chunk;
			m->next = e;
			m->nb_segs = 2;
			if (unlikely(n->conf.payload_crc) && crc_segment(n, m, f->src + f->off, chunk)) {
				rte_pktmbuf_free(m);
				break;
			}
			finish(n, f->peer, h, m);
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
			finish(n, f->peer, h, m);
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
		f->busy = false;
		f->descs++;
		n->stat[TRD_STAT_DESCS]++;
	}
	return k;
}

/* Packetize up to @p budget packets from one FIFO. */
static unsigned int
fifo_service(struct trd_node *n, struct trd_fifo *f, unsigned int budget)
{
	unsigned int sent = 0;

	while (sent < budget) {
		unsigned int room, k;

		if (!f->busy && !fifo_next(n, f))
			break;
		/* An ordered descriptor (a reflection) waits until every earlier packet of
		 * this FIFO was taken by its port. */
		if ((f->cur->flags & TRD_DF_ORDERED) && f->unsent != 0)
			break;
		room = RTE_MIN(trd_link_room(f->link), trd_rel_room(n, f->peer));
		if (room == 0)
			break;
		k = emit(n, f, RTE_MIN(budget - sent, room));
		if (k == 0)
			break;
		sent += k;
	}
	return sent;
}

/* Hand what the link buffers to its port, in order, and settle the accounting. */
static unsigned int
link_flush(struct trd_node *n, struct trd_link *l)
{
	unsigned int total = 0;

	while (l->pend_head != l->pend_tail) {
		uint32_t cnt = l->pend_tail - l->pend_head;
		uint32_t idx = l->pend_head & TRD_LINK_PEND_MASK;
		uint16_t want = (uint16_t)RTE_MIN(RTE_MIN(cnt, TRD_LINK_PEND - idx), 256u);
		uint64_t bytes = 0;
		uint16_t sent;

		if (unlikely(n->cap != NULL)) {
			/* record before the port owns the packets; a retried one only once */
			int32_t done = (int32_t)(l->cap_next - l->pend_head);

			if (done < 0)
				done = 0;
			if (done < want)
				trd_capture_frames(n->cap, n, l, &l->pend[idx + done],
						   want - (uint32_t)done, true);
			l->cap_next = l->pend_head + want;
		}
		sent = l->ops->tx(l, &l->pend[idx], want);

		for (uint16_t i = 0; i < sent; i++) {
			const struct trd_pend_info *pi = &l->info[idx + i];

			if (pi->ctr != NULL)
				__atomic_fetch_sub(pi->ctr, (int64_t)pi->bytes, __ATOMIC_RELEASE);
			if (pi->fifo != NULL) {
				pi->fifo->unsent--;
				pi->fifo->sent++;
			}
			bytes += pi->len;
		}
		l->pend_head += sent;
		l->tx_pkts += sent;
		l->tx_bytes += bytes;
		n->stat[TRD_STAT_TX_PKTS] += sent;
		n->stat[TRD_STAT_TX_BYTES] += bytes;
		total += sent;
		if (sent < want) {
			n->stat[TRD_STAT_TX_RETRIES]++;
			break;
		}
	}
	return total;
}

static inline void
flush_all(struct trd_node *n)
{
	for (unsigned int i = 0; i <= n->n_links; i++)
		if (n->links[i]->pend_head != n->links[i]->pend_tail)
			link_flush(n, n->links[i]);
}

int
trd_node_poll(struct trd_node *n)
{
	struct rte_mbuf *pkts[2 * TRD_RX_BURST];
	unsigned int nf, moved = 0;
	int served;

	if (unlikely(n == NULL))
		return -EINVAL;
	served = __atomic_load_n(&n->served, __ATOMIC_RELAXED);
	if (unlikely(served != 0 && (unsigned int)served != rte_lcore_id() + 1))
		return -EBUSY;
	/* Pairs with trd_mr_deregister(): the flag is visible before any key is read. */
	__atomic_store_n(&n->in_poll, 1, __ATOMIC_SEQ_CST);
	{
		uint64_t now = rte_rdtsc(), step = now - n->last_tsc;

		n->vclock += RTE_MIN(step, n->vstep);
		n->last_tsc = now;
	}

	flush_all(n);
	nf = n->n_inj + 1;
	for (unsigned int k = 0; k < nf; k++) {
		struct trd_fifo *f = n->inj[(n->rr + k) % nf];

		if (f->busy || f->stage_i < f->stage_n || !rte_ring_empty(f->ring))
			moved += fifo_service(n, f, n->conf.burst);
	}
	n->rr = n->rr + 1 == nf ? 0 : n->rr + 1;
	flush_all(n);

	for (unsigned int i = 0; i <= n->n_links; i++) {
		struct trd_link *l = n->links[i];
		uint16_t nb = l->ops->rx(l, pkts, TRD_RX_BURST);

		if (unlikely(l->imp != NULL))
			nb = trd_impair_rx(l, n->pool, pkts, nb, RTE_DIM(pkts));
		if (nb != 0) {
			trd_rx_burst(n, l, pkts, nb);
			moved += nb;
		}
	}
	if (n->n_active != 0)
		trd_rel_timers(n);
	flush_all(n);

	__atomic_store_n(&n->poll_gen, n->poll_gen + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&n->in_poll, 0, __ATOMIC_RELEASE);
	return (int)moved;
}

/* ---- lcores ---- */

#define TRD_LCORE_MAX_NODES 512

struct lcore_serv {
	struct trd_node *nodes[TRD_LCORE_MAX_NODES];
	unsigned int n;
	volatile int stop;
	int running;
};

static struct lcore_serv serv[RTE_MAX_LCORE];

static int
serve_loop(void *arg)
{
	struct lcore_serv *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		unsigned int moved = 0;

		for (unsigned int i = 0; i < s->n; i++) {
			int rc = trd_node_poll(s->nodes[i]);

			if (rc > 0)
				moved += (unsigned int)rc;
		}
		if (moved == 0)
			rte_pause();
	}
	return 0;
}

int
trd_lcore_launch(unsigned int lcore, struct trd_node *const nodes[], unsigned int n)
{
	struct lcore_serv *s;
	unsigned int i;

	if (lcore >= RTE_MAX_LCORE || nodes == NULL || n == 0 || n > TRD_LCORE_MAX_NODES ||
	    !rte_lcore_is_enabled(lcore) || lcore == rte_get_main_lcore())
		return -EINVAL;
	s = &serv[lcore];
	if (s->running || rte_eal_get_lcore_state(lcore) != WAIT)
		return -EBUSY;
	for (i = 0; i < n; i++) {
		int expect = 0;

		if (nodes[i] == NULL ||
		    !__atomic_compare_exchange_n(&nodes[i]->served, &expect, (int)lcore + 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			/* decide before unwinding: the unwinding walks i back to the start */
			int rc = nodes[i] == NULL ? -EINVAL : -EBUSY;

			while (i-- > 0)
				__atomic_store_n(&nodes[i]->served, 0, __ATOMIC_RELEASE);
			return rc;
		}
		s->nodes[i] = nodes[i];
	}
	s->n = n;
	s->stop = 0;
	s->running = 1;
	if (rte_eal_remote_launch(serve_loop, s, lcore) != 0) {
		for (i = 0; i < n; i++)
			__atomic_store_n(&nodes[i]->served, 0, __ATOMIC_RELEASE);
		s->running = 0;
		return -EBUSY;
	}
	return 0;
}

int
trd_node_launch(struct trd_node *node, unsigned int lcore)
{
	return trd_lcore_launch(lcore, &node, 1);
}

int
trd_lcore_stop(unsigned int lcore)
{
	struct lcore_serv *s;

	if (lcore >= RTE_MAX_LCORE)
		return -EINVAL;
	s = &serv[lcore];
	if (!s->running)
		return -EINVAL;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(lcore);
	for (unsigned int i = 0; i < s->n; i++)
		__atomic_store_n(&s->nodes[i]->served, 0, __ATOMIC_RELEASE);
	s->n = 0;
	s->running = 0;
	return 0;
}
