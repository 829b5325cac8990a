/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive demultiplexing. Every frame is untrusted: it is parsed by trd_wire_parse(), then
 * checked against this node's torus, regions, counters and FIFOs before one byte is written.
 * A frame that fails is dropped and counted under its cause.
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>
#include <rte_ring_elem.h>

#include "core_pvt.h"

enum { RX_FREE = 1, RX_KEPT = 0 };

int
trd_desc_check_remote(const struct trd_desc *d, struct trd_coord requester)
{
	if ((d->op != TRD_OP_PUT && d->op != TRD_OP_FIFO) || d->n_slots != 0 ||
	    (d->flags & ~TRD_DF_USER_MASK) != 0 || d->inj_ctr != 0 ||
	    ((d->flags & TRD_DF_ACKREQ) && (d->aux == 0 || (d->flags & TRD_DF_CPL))))
		return TRD_DROP_BAD_DESC;
	/* The data must come from a registered region or the descriptor itself: a remote
	 * node never names our raw addresses. */
	if (d->flags & TRD_DF_IMM) {
		if ((d->flags & TRD_DF_SRC_MR) || d->len > 8)
			return TRD_DROP_BAD_DESC;
	} else if (d->len != 0 && !(d->flags & TRD_DF_SRC_MR)) {
		return TRD_DROP_BAD_DESC;
	}
	/* ... and it may only send back to whoever asked. */
	if (d->dst.x != requester.x || d->dst.y != requester.y || d->dst.z != requester.z)
		return TRD_DROP_BAD_DST;
	return 0;
}

/* Copy @p len payload bytes of @p m to @p dst, across segments if need be. */
static inline void
pay_copy(const struct rte_mbuf *m, void *dst, uint32_t len)
{
	const void *s;

	if (likely(m->data_len >= TRD_FRAME_HLEN + len)) {
		rte_memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, TRD_FRAME_HLEN), len);
		return;
	}
	/* DPDK 22.11's rte_pktmbuf_read() walks off the end of a chain when asked for 0 bytes
	 * at its very end (an empty payload in a segmented frame) */
	if (len == 0)
		return;
	s = rte_pktmbuf_read(m, TRD_FRAME_HLEN, len, dst);
	if (s != NULL && s != dst)
		rte_memcpy(dst, s, len);
}

static inline bool
ctr_valid(const struct trd_node *n, uint16_t id)
{
	return id < n->conf.n_counters && __atomic_load_n(&n->ctr_used[id], __ATOMIC_ACQUIRE);
}

static inline void
ctr_sub(struct trd_node *n, uint16_t id, uint32_t bytes)
{
	if (id != 0 && bytes != 0)
		__atomic_fetch_sub(&n->ctr[id], (int64_t)bytes, __ATOMIC_RELEASE);
}

static int
rx_put(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_mr *mr = trd_mr_lookup(n, p->key);

	if (mr == NULL)
		return TRD_DROP_BAD_KEY;
	if (!(mr->access & TRD_ACCESS_REMOTE_WRITE))
		return TRD_DROP_NO_ACCESS;
	if (p->offset > mr->len || p->pay_len > mr->len - p->offset)
		return TRD_DROP_OUT_OF_BOUNDS;
	if (p->counter != 0 && !ctr_valid(n, p->counter))
		return TRD_DROP_UNKNOWN_COUNTER;
	if (p->flags & TRD_HF_CPL) {
		/* a doorbell completion: 8 bytes, the cookie of a completion we wait for */
		uint64_t cookie;
		int cause;

		if (p->pay_len != sizeof(cookie))
			return TRD_DROP_UNKNOWN_CPL;
		pay_copy(m, &cookie, sizeof(cookie));
		cause = trd_cpl_accept(n, p->aux, TRD_CPL_DOORBELL, cookie);
		if (cause != 0)
			return cause;
	}
	pay_copy(m, mr->base + p->offset, p->pay_len);
	ctr_sub(n, p->counter, p->pay_len);
	n->stat[TRD_STAT_RX_PUT]++;
	n->stat[TRD_STAT_PUT_BYTES] += p->pay_len;
	if (mr->eq != NULL) {
		/* interrupt on touch */
		struct trd_event ev = {
			.type = TRD_EV_DOORBELL,
			.len = p->pay_len,
			.key = p->key,
			.value = p->offset,
		};
		trd_eq_push(mr->eq, &ev);
	}
	return 0;
}

static inline void
msg_fill(struct trd_msg *msg, const struct trd_pkt *p)
{
	msg->src.x = p->src[0];
	msg->src.y = p->src[1];
	msg->src.z = p->src[2];
	msg->fifo = p->fifo;
	msg->len = p->msg_len;
	msg->msg_id = p->msg_id;
	msg->user = p->key;
	msg->status = 0;
	msg->cause = 0;
}

static struct trd_msg *
msg_alloc(uint32_t len)
{
	struct trd_msg *msg = rte_malloc("trd_msg", sizeof(*msg) + len, 0);

	if (msg != NULL) {
		msg->data = msg + 1;
		msg->priv_ = NULL;
	}
	return msg;
}

static int
deliver(struct trd_node *n, struct trd_rec_fifo *rf, struct trd_msg *msg)
{
	struct trd_eq *eq;

	if (unlikely(rte_ring_sp_enqueue(rf->ring, msg) != 0))
		return TRD_DROP_FIFO_FULL;
	rf->msgs++;
	n->stat[TRD_STAT_MSGS_DELIVERED]++;
	eq = __atomic_load_n(&rf->eq, __ATOMIC_ACQUIRE);
	if (eq != NULL) {
		struct trd_event ev = {
			.type = TRD_EV_FIFO,
			.fifo = rf->id,
			.len = msg->len,
			.value = msg->user,
		};
		trd_eq_push(eq, &ev);
	}
	return 0;
}

/* A message of @p len payload bytes received in @p m: the packet itself carries it when it is
 * contiguous (the message lives in its private area), otherwise a copy. NULL: no memory. */
static struct trd_msg *
msg_of_packet(struct rte_mbuf *m, uint32_t len)
{
	struct trd_msg *msg;

	if (m->nb_segs == 1) {
		msg = &trd_mbuf_priv(m)->msg;
		msg->data = rte_pktmbuf_mtod_offset(m, uint8_t *, TRD_FRAME_HLEN);
		msg->priv_ = m;
		return msg;
	}
	msg = msg_alloc(len);
	if (msg != NULL)
		pay_copy(m, msg->data, len);
	return msg;
}

/* Deliver a message from msg_of_packet(); on success the caller keeps the packet if the
 * message lives in it, on failure a copy is freed (the packet goes with the burst). */
static int
hand_over(struct trd_node *n, struct trd_rec_fifo *rf, struct trd_msg *msg, int *keep)
{
	int rc = deliver(n, rf, msg);

	if (rc != 0) {
		if (msg->priv_ == NULL)
			rte_free(msg);
		return rc;
	}
	*keep = msg->priv_ != NULL;
	return 0;
}

/* Returns 0 (mbuf kept or freed by the caller per *keep), or a drop cause. */
static int
rx_fifo(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, int *keep)
{
	struct trd_rec_fifo *rf;
	struct trd_reasm *r;
	struct trd_msg *msg;
	uint64_t hkey;
	int idx, rc;

	if (p->fifo >= n->n_rec)
		return TRD_DROP_UNKNOWN_FIFO;
	if (p->counter != 0 && !ctr_valid(n, p->counter))
		return TRD_DROP_UNKNOWN_COUNTER;
	rf = n->rec[p->fifo];
	if (p->flags & TRD_HF_CPL) {
		int cause;

		/* a FIFO completion is one empty message carrying its cookie */
		if (p->msg_len != 0)
			return TRD_DROP_UNKNOWN_CPL;
		cause = trd_cpl_accept(n, p->aux, TRD_CPL_FIFO, p->key);
		if (cause != 0)
			return cause;
	}
	n->stat[TRD_STAT_RX_FIFO]++;

	if (p->offset == 0 && p->pay_len == p->msg_len) {
		/* The whole message in one packet: hand the packet itself over when it is
		 * contiguous, otherwise copy it out. */
		msg = msg_of_packet(m, p->pay_len);
		if (msg == NULL)
			return TRD_DROP_NO_MEMORY;
		msg_fill(msg, p);
		rc = hand_over(n, rf, msg, keep);
		if (rc == 0)
			ctr_sub(n, p->counter, p->pay_len);
		return rc;
	}

	/* Part of a longer message: reassemble by (source rank, message id). */
	hkey = (uint64_t)(p->src[0] | p->src[1] << 8 | p->src[2] << 16) << 32 | p->msg_id;
	idx = rte_hash_lookup(n->reasm_hash, &hkey);
	if (idx < 0) {
		/* a peer may not make us hold more than the configured largest message */
		if (p->msg_len > n->conf.max_msg)
			return TRD_DROP_BAD_LENGTH;
		if (p->offset != 0)
			return TRD_DROP_REASM; /* a message starts with its first byte */
		idx = rte_hash_add_key(n->reasm_hash, &hkey);
		if (idx < 0)
			return TRD_DROP_NO_MEMORY;
		if ((unsigned int)idx >= n->conf.n_reasm) {
			rte_hash_del_key(n->reasm_hash, &hkey);
			return TRD_DROP_NO_MEMORY;
		}
		r = &n->reasm[idx];
		r->msg = msg_alloc(p->msg_len);
		if (r->msg == NULL) {
			rte_hash_del_key(n->reasm_hash, &hkey);
			return TRD_DROP_NO_MEMORY;
		}
		msg_fill(r->msg, p);
		r->got = 0;
		r->len = p->msg_len;
		r->hkey = hkey;
		r->ctr = p->counter;
	}
	r = &n->reasm[idx];
	/* Pieces of a message come in order (one route, and reliability delivers in order):
	 * the next one starts exactly where the bytes received end, so no piece overlaps
	 * another, repeats it or leaves a hole that would read as zeros. */
	if (r->len != p->msg_len || r->msg->user != p->key || r->msg->fifo != p->fifo ||
	    p->offset != r->got || p->pay_len > r->len - r->got)
		return TRD_DROP_REASM;
	pay_copy(m, (uint8_t *)r->msg->data + p->offset, p->pay_len);
	if (r->got + p->pay_len == r->len) {
		/* complete: if the FIFO is full the last piece is refused (and sent again
		 * by a reliable sender), the message waits here */
		rc = deliver(n, rf, r->msg);
		if (rc != 0)
			return rc;
		r->msg = NULL;
		rte_hash_del_key(n->reasm_hash, &hkey);
	} else {
		r->got += p->pay_len;
	}
	ctr_sub(n, p->counter, p->pay_len);
	return 0;
}

static int
rx_rget(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_desc ds[TRD_RGET_MAX_DESCS];
	struct trd_coord req = {p->src[0], p->src[1], p->src[2]};
	unsigned int nd = p->pay_len / TRD_WIRE_DESC_LEN;
	struct trd_fifo *f;

	if (nd > TRD_RGET_MAX_DESCS)
		return TRD_DROP_BAD_LENGTH;
	if (p->fifo == TRD_ENGINE_FIFO_ID)
		f = n->inj[n->n_inj];
	else if (p->fifo < n->n_inj)
		f = n->inj[p->fifo];
	else
		return TRD_DROP_UNKNOWN_FIFO;
	pay_copy(m, ds, p->pay_len);
	for (unsigned int i = 0; i < nd; i++) {
		int cause = trd_desc_check_remote(&ds[i], req);

		if (cause != 0)
			return cause;
		ds[i].flags |= TRD_DF_REMOTE;
		ds[i].msg_id = 0;
	}
	if (rte_ring_enqueue_bulk_elem(f->ring, ds, TRD_UNIT, nd * TRD_UNITS, NULL) == 0)
		return TRD_DROP_FIFO_FULL; /* with ACKREQ, the requester hears of it */
	n->stat[TRD_STAT_RX_RGET]++;
	return 0;
}

/* An atomic on a 64-bit word: executed here, in arrival order, answered with the old value. */
static int
rx_atomic(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_wire_atomic a;
	struct trd_mr *mr = trd_mr_lookup(n, p->key);
	uint64_t old = 0, *w;
	int cause = 0, rc;

	pay_copy(m, &a, sizeof(a));
	if (mr == NULL)
		cause = TRD_DROP_BAD_KEY;
	else if ((mr->access & TRD_ACCESS_ALL) != TRD_ACCESS_ALL)
		cause = TRD_DROP_NO_ACCESS;
	else if (p->offset > mr->len || mr->len - p->offset < sizeof(uint64_t))
		cause = TRD_DROP_OUT_OF_BOUNDS;
	else if (((uintptr_t)mr->base + p->offset) % sizeof(uint64_t) != 0)
		cause = TRD_DROP_BAD_ALIGN;
	else if (a.op < TRD_ATOMIC_FADD || a.op > TRD_ATOMIC_SWAP)
		cause = TRD_DROP_BAD_DESC;
	if (cause == 0) {
		uint64_t operand = rte_be_to_cpu_64(a.operand);

		/* application threads may touch the word too: real atomics */
		w = (uint64_t *)(mr->base + p->offset);
		switch (a.op) {
		case TRD_ATOMIC_FADD:
			old = __atomic_fetch_add(w, operand, __ATOMIC_ACQ_REL);
			break;
		case TRD_ATOMIC_CAS:
			old = rte_be_to_cpu_64(a.compare);
			__atomic_compare_exchange_n(w, &old, operand, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
			break;
		default:
			old = __atomic_exchange_n(w, operand, __ATOMIC_ACQ_REL);
			break;
		}
		n->stat[TRD_STAT_ATOMICS]++;
	}
	old = rte_cpu_to_be_64(old);
	rc = trd_ctl_send(n, p->src, TRD_PKT_ATOMIC_REPLY, p->aux, (uint64_t)cause, p->msg_id, &old,
			  sizeof(old));
	if (rc != 0)
		return rc;
	return cause;
}

/* The verdict on one of our tracked operations: hand it to its reception FIFO. */
static int
rx_done(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, int *keep)
{
	struct trd_cpl *c = trd_track_take(n, p->aux);
	struct trd_msg *msg;
	int rc;

	if (c == NULL)
		return TRD_DROP_UNKNOWN_CPL;
	n->stat[TRD_STAT_RX_CTL]++;
	if (p->type == TRD_PKT_ATOMIC_REPLY && p->key == 0 && c->result != NULL) {
		uint64_t old;

		pay_copy(m, &old, sizeof(old));
		__atomic_store_n(c->result, rte_be_to_cpu_64(old), __ATOMIC_RELEASE);
	}
	msg = msg_of_packet(m, 0);
	if (msg == NULL) {
		trd_track_done(n, c);
		return TRD_DROP_NO_MEMORY;
	}
	msg->src.x = p->src[0];
	msg->src.y = p->src[1];
	msg->src.z = p->src[2];
	msg->fifo = c->fifo;
	msg->len = 0;
	msg->msg_id = (uint32_t)p->offset;
	msg->user = c->cookie;
	msg->cause = (uint8_t)p->key;
	msg->status = trd_cause_errno((unsigned int)p->key);
	rc = hand_over(n, n->rec[c->fifo], msg, keep);
	trd_track_done(n, c);
	return rc;
}

/* A packet for another node: send it on along its route. */
static int
forward(struct trd_node *n, struct trd_link *in, struct rte_mbuf *m, const struct trd_pkt *p,
	int *keep)
{
	struct trd_coord dst = {p->dst[0], p->dst[1], p->dst[2]};
	struct trd_route *rt = &n->routes[trd_rank_of(n, dst)];
	struct rte_ether_hdr *eh;
	struct trd_hdr *h;

	if (rt->link == NULL)
		return TRD_DROP_NO_ROUTE;
	if (rt->link == in)
		return TRD_DROP_NOT_FOR_US; /* a switched segment: someone else's frame */
	if (p->hops <= 1)
		return TRD_DROP_HOP_LIMIT;
	if (trd_link_room(rt->link) == 0)
		return TRD_DROP_FWD_FULL;
	if (m->data_len < TRD_FRAME_HLEN)
		return TRD_DROP_BAD_LENGTH;
	if (rte_mbuf_refcnt_read(m) != 1) {
		/* its origin keeps it for retransmission (in this process): edit a copy */
		struct rte_mbuf *c = rte_pktmbuf_copy(m, n->pool, 0, UINT32_MAX);

		if (c == NULL || c->data_len < TRD_FRAME_HLEN) {
			rte_pktmbuf_free(c);
			return TRD_DROP_NO_MEMORY;
		}
		rte_pktmbuf_free(m);
		m = c;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eh->dst_addr = rt->dmac;
	eh->src_addr = rt->link->mac;
	h = (struct trd_hdr *)(eh + 1);
	h->hops = (uint8_t)(p->hops - 1);
	trd_hdr_seal(h);
	trd_link_queue(rt->link, m, NULL, NULL, 0);
	rt->link->fwd_pkts++;
	n->stat[TRD_STAT_FWD_PKTS]++;
	*keep = 1;
	return 0;
}

static inline bool
in_torus(const struct trd_torus *t, const uint8_t c[3])
{
	return c[0] < t->dim[0] && c[1] < t->dim[1] && c[2] < t->dim[2];
}

/* The CRC32C of the payload, across segments, against its trailer. */
static int
crc_check(const struct rte_mbuf *m, const struct trd_pkt *p)
{
	uint32_t crc = 0xffffffff, off = TRD_FRAME_HLEN, left = p->pay_len, want;
	const struct rte_mbuf *s = m;
	uint8_t t[4];
	const uint8_t *tp;

	while (s != NULL && off >= s->data_len) {
		off -= s->data_len;
		s = s->next;
	}
	while (s != NULL && left != 0) {
		uint32_t k = RTE_MIN(left, (uint32_t)s->data_len - off);

		crc = trd_wire_crc(rte_pktmbuf_mtod_offset(s, const uint8_t *, off), k, crc);
		left -= k;
		off = 0;
		s = s->next;
	}
	tp = rte_pktmbuf_read(m, TRD_FRAME_HLEN + p->pay_len, 4, t);
	if (left != 0 || tp == NULL)
		return TRD_DROP_BAD_LENGTH;
	want = (uint32_t)tp[0] << 24 | (uint32_t)tp[1] << 16 | (uint32_t)tp[2] << 8 | tp[3];
	return crc == want ? 0 : TRD_DROP_BAD_CRC;
}

int
trd_rx_deliver(struct trd_node *n, struct trd_link *l, struct rte_mbuf *m, const struct trd_pkt *p,
	       int *keep)
{
	int cause;

	RTE_SET_USED(l);
	/* A packet that needs an answer is taken only when the answer can go: an atomic must
	 * not run twice, a message must not be delivered twice because its DONE found no
	 * room. Refused for now, it comes again (reliable senders). */
	if ((p->type == TRD_PKT_ATOMIC ||
	     (p->flags & (TRD_HF_ACKREQ | TRD_HF_LAST)) == (TRD_HF_ACKREQ | TRD_HF_LAST)) &&
	    !trd_ctl_room(n, p->src))
		return TRD_DROP_REPLY_FULL;
	switch (p->type) {
	case TRD_PKT_PUT:
		cause = rx_put(n, m, p);
		break;
	case TRD_PKT_FIFO:
		cause = rx_fifo(n, m, p, keep);
		break;
	case TRD_PKT_RGET:
		cause = rx_rget(n, m, p);
		break;
	case TRD_PKT_ATOMIC:
		return rx_atomic(n, m, p);
	case TRD_PKT_DONE:
	case TRD_PKT_ATOMIC_REPLY:
		return rx_done(n, m, p, keep);
	default:
		return 0;
	}
	/* The origin asked for a verdict on this message: its last packet decides. A remote get
	 * only reports a refusal: its carried descriptors report their own failures, and the
	 * requester sees success in its counters. */
	if ((p->flags & (TRD_HF_ACKREQ | TRD_HF_LAST)) == (TRD_HF_ACKREQ | TRD_HF_LAST) &&
	    (p->type != TRD_PKT_RGET || cause != 0) &&
	    !(trd_drop_transient(cause) && p->seq != 0 && n->reliable)) {
		/* (a reliable sender brings a packet refused for lack of room again: its verdict
		 * comes then, not now) */
		int rc = trd_ctl_send(n, p->src, TRD_PKT_DONE, p->aux, (uint64_t)cause, p->msg_id,
				      NULL, 0);

		if (rc != 0)
			trd_drop(n, (unsigned int)rc);
	}
	return cause;
}

static inline const uint8_t *
frame_head(struct rte_mbuf *m, uint8_t *buf)
{
	if (likely(m->data_len >= TRD_FRAME_HLEN))
		return rte_pktmbuf_mtod(m, const uint8_t *);
	if (m->pkt_len >= TRD_FRAME_HLEN)
		return rte_pktmbuf_read(m, 0, TRD_FRAME_HLEN, buf);
	return NULL;
}

int
trd_rx_redeliver(struct trd_node *n, struct trd_link *l, struct rte_mbuf *m, int *keep)
{
	uint8_t hbuf[TRD_FRAME_HLEN];
	const uint8_t *f = frame_head(m, hbuf);
	struct trd_pkt p;
	int cause;

	if (f == NULL)
		return TRD_DROP_SHORT_FRAME;
	cause = trd_wire_parse(f, m->pkt_len, &p);
	return cause != 0 ? cause : trd_rx_deliver(n, l, m, &p, keep);
}

static int
rx_one(struct trd_node *n, struct trd_link *l, struct rte_mbuf *m, int *keep)
{
	uint8_t hbuf[TRD_FRAME_HLEN];
	const uint8_t *f = frame_head(m, hbuf);
	struct trd_pkt p;
	int cause;

	if (unlikely(f == NULL))
		return TRD_DROP_SHORT_FRAME;
	cause = trd_wire_parse(f, m->pkt_len, &p);
	if (unlikely(cause != 0))
		return cause;
	if (unlikely(!in_torus(&n->torus, p.src) || !in_torus(&n->torus, p.dst)))
		return TRD_DROP_UNKNOWN_NODE;
	if (!trd_coord_eq(n->coord, p.dst))
		return forward(n, l, m, &p, keep);
	/* corrupted payloads are never acknowledged: the sender will send them again */
	if ((p.flags & TRD_HF_CRC) && (cause = crc_check(m, &p)) != 0)
		return cause;
	if (p.type == TRD_PKT_ACK) {
		uint8_t sack[TRD_SACK_BYTES];
		const uint8_t *sp = NULL;

		if (p.pay_len == TRD_SACK_BYTES)
			sp = rte_pktmbuf_read(m, TRD_FRAME_HLEN, TRD_SACK_BYTES, sack);
		return n->reliable ? trd_rel_ack_in(n, &p, sp) : 0;
	}
	if (p.seq != 0 && n->reliable) {
		cause = trd_rel_rx(n, l, m, &p, keep);
		return cause < 0 ? 0 : cause;
	}
	return trd_rx_deliver(n, l, m, &p, keep);
}

void
trd_rx_burst(struct trd_node *n, struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb)
{
	struct rte_mbuf *done[2 * TRD_RX_BURST];
	unsigned int nd = 0;
	uint64_t bytes = 0;

	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		int keep = 0, cause;

		if (i + 1 < nb)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		bytes += m->pkt_len;
		cause = rx_one(n, l, m, &keep);
		if (unlikely(cause != 0))
			trd_drop(n, (unsigned int)cause);
		if (!keep)
			done[nd++] = m;
	}
	l->rx_pkts += nb;
	l->rx_bytes += bytes;
	n->stat[TRD_STAT_RX_PKTS] += nb;
	n->stat[TRD_STAT_RX_BYTES] += bytes;
	if (nd != 0)
		rte_pktmbuf_free_bulk(done, nd);
}

void
trd_rx_outcome(struct trd_node *n, uint8_t fifo, uint32_t from_rank, uint64_t cookie,
	       unsigned int cause)
{
	struct trd_msg *msg = msg_alloc(0);
	struct trd_coord c;

	if (msg == NULL || fifo >= n->n_rec) {
		rte_free(msg);
		trd_drop(n, TRD_DROP_NO_MEMORY);
		return;
	}
	/* an operation that failed before it left names no peer: the node itself */
	if (trd_torus_coord(&n->torus, from_rank, &c) != 0)
		c = n->coord;
	memset(msg, 0, sizeof(*msg));
	msg->src = c;
	msg->fifo = fifo;
	msg->user = cookie;
	msg->cause = (uint8_t)cause;
	msg->status = trd_cause_errno(cause);
	msg->data = msg + 1;
	if (deliver(n, n->rec[fifo], msg) != 0) {
		rte_free(msg);
		trd_drop(n, TRD_DROP_FIFO_FULL);
	}
}

void
trd_reasm_purge(struct trd_node *n, const uint8_t src[3])
{
	uint64_t code = (uint64_t)(src[0] | src[1] << 8 | src[2] << 16);

	for (unsigned int i = 0; i < n->conf.n_reasm; i++) {
		struct trd_reasm *r = &n->reasm[i];

		if (r->msg != NULL && r->hkey >> 32 == code) {
			/* its counter counted on the pieces that will never come */
			if (r->ctr != 0 && ctr_valid(n, r->ctr))
				trd_ctr_fail(&n->ctr[r->ctr]);
			rte_hash_del_key(n->reasm_hash, &r->hkey);
			rte_free(r->msg);
			r->msg = NULL;
		}
	}
}
