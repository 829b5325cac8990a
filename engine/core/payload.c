/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared payloads: the bytes of a multicast moved across the host once. A payload is one mbuf
 * holding the bytes (copied once, trd_payload_new()); every packet that carries it is a small
 * header mbuf of its own (Ethernet, torus header, a per-destination prefix such as the VNI
 * header) chained to an indirect mbuf of the payload (rte_pktmbuf_clone()), so N destinations
 * cost N headers, not N copies. The payload's reference count keeps it alive while any packet
 * refers to it, retransmission copies held by the reliability layer included. A frame
 * forwarded for another node is likewise a new header and a reference of the arriving frame.
 * On a link that cannot send chains (trd_link::chain_ok false) the bytes are copied, and
 * counted.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include "core_pvt.h"

static inline struct rte_mbuf *
pay_mbuf(const struct trd_payload *p)
{
	return (struct rte_mbuf *)(uintptr_t)p;
}

static inline void
stat_add(struct trd_node *n, unsigned int st, uint64_t v)
{
	__atomic_fetch_add(&n->stat[st], v, __ATOMIC_RELAXED);
}

int
trd_payload_alloc(struct trd_node *n, uint32_t len, struct trd_payload **out, void **data)
{
	struct rte_mbuf *m;

	if (n == NULL || len == 0 || out == NULL || data == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP;
	m = rte_pktmbuf_alloc(n->pool);
	if (m == NULL) {
		stat_add(n, TRD_STAT_NO_MBUF, 1);
		return -ENOBUFS;
	}
	if (rte_pktmbuf_tailroom(m) < len) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	stat_add(n, TRD_STAT_PAY_BUFS, 1);
	*data = rte_pktmbuf_mtod(m, void *);
	*out = (struct trd_payload *)(void *)m;
	return 0;
}

int
trd_payload_new(struct trd_node *n, const void *data, uint32_t len, struct trd_payload **out)
{
	void *buf;
	int rc;

	if (data == NULL)
		return -EINVAL;
	rc = trd_payload_alloc(n, len, out, &buf);
	if (rc != 0)
		return rc;
	rte_memcpy(buf, data, len);
	stat_add(n, TRD_STAT_PAY_COPY_BYTES, len);
	return 0;
}

uint32_t
trd_payload_len(const struct trd_payload *p)
{
	return p == NULL ? 0 : pay_mbuf(p)->pkt_len;
}

void
trd_payload_free(struct trd_payload *p)
{
	if (p != NULL)
		rte_pktmbuf_free(pay_mbuf(p));
}

int
trd_inject_payload(struct trd_inj_fifo *f, const struct trd_desc *d, struct trd_payload *p)
{
	struct trd_desc c;
	struct trd_node *n;
	int rank, rc;

	if (f == NULL || d == NULL || p == NULL || f->ring == NULL)
		return -EINVAL;
	n = f->node;
	if ((d->op != TRD_OP_PUT && d->op != TRD_OP_FIFO) ||
	    (d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM | TRD_DF_PAYLOAD)) ||
	    d->len > n->conf.inline_max || (d->len != 0 && d->src == 0))
		return -EINVAL;
	rank = trd_rank_of(n, d->dst);
	if (rank < 0)
		return -EINVAL;
	if (n->routes[rank].link == NULL)
		return -EHOSTUNREACH;
	if ((uint64_t)d->len + trd_payload_len(p) >
	    trd_max_payload(n, n->routes[rank].link, n->reliable && (uint32_t)rank != n->rank))
		return -EMSGSIZE;
	c = *d;
	c.flags |= TRD_DF_PAYLOAD;
	c.src_key = (uint64_t)(uintptr_t)p;
	rte_mbuf_refcnt_update(pay_mbuf(p), 1); /* the descriptor's */
	rc = trd_inject_own(f, &c);
	if (rc != 0)
		rte_mbuf_refcnt_update(pay_mbuf(p), -1); /* the caller still holds one */
	return rc;
}

int
trd_pay_start(struct trd_inj_fifo *f)
{
	struct trd_desc *d = f->cur;
	uint64_t len = (uint64_t)d->len + trd_payload_len((const void *)(uintptr_t)d->src_key);

	if (d->op == TRD_OP_RGET || d->op == TRD_OP_ATOMIC || len > f->maxpay)
		return TRD_DROP_BAD_DESC;
	d->len = (uint32_t)len; /* the prefix, then the payload */
	f->zc = false;
	f->pkts_left = 1;
	return 0;
}

void
trd_pay_release(struct trd_desc *d)
{
	if (d->flags & TRD_DF_PAYLOAD) {
		trd_payload_free((struct trd_payload *)(uintptr_t)d->src_key);
		d->flags &= (uint8_t)~TRD_DF_PAYLOAD;
	}
}

/* Append the payload CRC in a segment of its own after the last one of @p m. */
static int
crc_tail(struct trd_node *n, struct rte_mbuf *m, uint32_t crc)
{
	struct rte_mbuf *t = rte_pktmbuf_alloc(n->pool), *last = rte_pktmbuf_lastseg(m);
	uint8_t *b;

	if (t == NULL)
		return -ENOBUFS;
	b = rte_pktmbuf_mtod(t, uint8_t *);
	b[0] = (uint8_t)(crc >> 24);
	b[1] = (uint8_t)(crc >> 16);
	b[2] = (uint8_t)(crc >> 8);
	b[3] = (uint8_t)crc;
	t->data_len = 4;
	t->pkt_len = 4;
	last->next = t;
	m->nb_segs++;
	m->pkt_len += 4;
	return 0;
}

int
trd_pay_emit(struct trd_node *n, struct trd_inj_fifo *f, struct rte_mbuf *m, struct trd_hdr *h)
{
	struct trd_desc *d = f->cur;
	struct rte_mbuf *p = (struct rte_mbuf *)(uintptr_t)d->src_key;
	uint32_t plen = p->pkt_len, pre = d->len - plen;
	uint8_t *body = (uint8_t *)(h + 1);
	const uint8_t *pb = rte_pktmbuf_mtod(p, const uint8_t *);

	if (pre != 0)
		rte_memcpy(body, f->src, pre);
	if (likely(f->link->chain_ok)) {
		struct rte_mbuf *c = rte_pktmbuf_clone(p, n->pool);

		if (unlikely(c == NULL)) {
			n->stat[TRD_STAT_NO_MBUF]++;
			return -ENOBUFS;
		}
		m->data_len = (uint16_t)(TRD_FRAME_HLEN + pre);
		m->pkt_len = TRD_FRAME_HLEN + d->len;
		m->next = c;
		m->nb_segs = (uint16_t)(1 + c->nb_segs);
		if (unlikely(n->conf.payload_crc) &&
		    crc_tail(n, m, trd_wire_crc(pb, plen, trd_wire_crc(body, pre, 0xffffffff))) !=
			    0)
			return -ENOBUFS; /* the caller frees m, and c with it */
		n->stat[TRD_STAT_PAY_REFS]++;
	} else {
		rte_memcpy(body + pre, pb, plen);
		m->data_len = (uint16_t)(TRD_FRAME_HLEN + d->len);
		m->pkt_len = m->data_len;
		if (unlikely(n->conf.payload_crc)) {
			uint32_t crc = trd_wire_crc(body, d->len, 0xffffffff);
			uint8_t *t = body + d->len;

			t[0] = (uint8_t)(crc >> 24);
			t[1] = (uint8_t)(crc >> 16);
			t[2] = (uint8_t)(crc >> 8);
			t[3] = (uint8_t)crc;
			m->data_len += 4;
			m->pkt_len += 4;
		}
		n->stat[TRD_STAT_PAY_LINK_COPY_BYTES] += plen;
	}
	if (unlikely(trd_pkt_finish(n, f->peer, h, m) != 0))
		return -ENOBUFS; /* the caller frees m */
	trd_link_queue(f->link, m, f->ctr, f, d->len);
	return 0;
}

/* A segment of a packet referenced instead of copied: an indirect mbuf of the first segment
 * (header and payload share it), and the following segments themselves, one more reference
 * each (both chains then end in the same segments). Not rte_pktmbuf_clone(): an indirect mbuf
 * of a zero-copy segment would attach to its external buffer, whose shared info lives in that
 * segment's private area (tx.c), freed with it while the clone still points there. */
struct rte_mbuf *
trd_fwd_share(struct trd_node *n, struct rte_mbuf *m, const struct trd_link *out)
{
	struct rte_mbuf *h, *first = NULL;

	if (!out->chain_ok || m->pkt_len <= TRD_FRAME_HLEN || m->data_len < TRD_FRAME_HLEN ||
	    RTE_MBUF_HAS_EXTBUF(m)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, n->pool, 0, UINT32_MAX);

		if (c != NULL && m->pkt_len > TRD_FRAME_HLEN)
			n->stat[TRD_STAT_FWD_COPY_BYTES] += m->pkt_len - TRD_FRAME_HLEN;
		return c;
	}
	h = rte_pktmbuf_alloc(n->pool);
	if (h == NULL)
		return NULL;
	if (m->data_len > TRD_FRAME_HLEN) {
		first = rte_pktmbuf_alloc(n->pool);
		if (first == NULL) {
			rte_pktmbuf_free(h);
			return NULL;
		}
		rte_pktmbuf_attach(first, m);
		first->data_off = (uint16_t)(first->data_off + TRD_FRAME_HLEN);
		first->data_len = (uint16_t)(m->data_len - TRD_FRAME_HLEN);
	}
	rte_memcpy(rte_pktmbuf_mtod(h, void *), rte_pktmbuf_mtod(m, const void *), TRD_FRAME_HLEN);
	h->data_len = TRD_FRAME_HLEN;
	for (struct rte_mbuf *s = m->next; s != NULL; s = s->next)
		rte_mbuf_refcnt_update(s, 1);
	if (first != NULL) {
		first->next = m->next;
		first->nb_segs = 1;
		first->pkt_len = first->data_len;
		h->next = first;
		h->nb_segs = m->nb_segs + 1;
	} else {
		h->next = m->next;
		h->nb_segs = m->nb_segs;
	}
	h->pkt_len = m->pkt_len;
	n->stat[TRD_STAT_FWD_SHARED]++;
	return h;
}

void
trd_pay_fifo_drain(struct trd_inj_fifo *f)
{
	struct trd_desc d;

	if (f->busy) {
		trd_pay_release(f->cur);
		trd_fifo_src_done(f);
	}
	for (unsigned int i = f->stage_i; i < f->stage_n; i += 1u + f->stage[i].n_slots)
		trd_pay_release(&f->stage[i]);
	if (f->held != 0) {
		rte_ring_dequeue_zc_elem_finish(f->ring, f->held);
		f->held = 0;
	}
	f->stage_i = f->stage_n = 0;
	while (rte_ring_sc_dequeue_bulk_elem(f->ring, &d, TRD_UNIT, TRD_UNITS, NULL) != 0) {
		trd_pay_release(&d);
		for (unsigned int k = 0; k < d.n_slots; k++) {
			struct trd_desc slot;

			if (rte_ring_sc_dequeue_bulk_elem(f->ring, &slot, TRD_UNIT, TRD_UNITS,
							  NULL) == 0)
				return;
		}
	}
}
