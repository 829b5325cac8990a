/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive: the one place a received frame is acted on. Every frame is untrusted: it is parsed
 * by trd_wire_parse(), then checked against this node's torus, regions, counters and FIFOs
 * before one byte is written. A frame for another node is forwarded; a sequenced one goes
 * through reliability first, whose verdict (deliver, hold, drop) and released frames this file
 * acts on; then by type: puts, remote gets and atomics here, memory-FIFO messages in
 * rfifo.c. Each step returns the frame's fate: a drop cause (counted) and whether the engine
 * kept the mbuf or rx_burst frees it.
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

/* A write of @p len bytes at @p offset into doorbell region @p mr (key @p key): an event for
 * its queue, or for an attached process a slot in its FIFO (TRD_RSLOT_DOORBELL). */
static __rte_noinline __rte_cold void
rx_touch(struct trd_node *n, const struct trd_mr *mr, uint64_t key, uint64_t offset, uint32_t len)
{
	if (mr->eq != NULL) {
		struct trd_event ev = {
			.type = TRD_EV_DOORBELL,
			.len = len,
			.key = key,
			.value = offset,
		};

		trd_eq_push(mr->eq, &ev);
	}
	if (mr->db_fifo != 0)
		trd_grfifo_doorbell(n, mr->db_fifo, key, offset, len);
}

/* A put whose payload is @p off bytes into @p m (a put alone; a bundle's: rx_put_entry()). */
static int
rx_put(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, uint32_t off)
{
	struct trd_mr *mr = trd_mr_lookup(n, p->key);
	uint64_t at;

	if (mr == NULL)
		return TRD_DROP_BAD_KEY;
	if (!(mr->access & TRD_ACCESS_REMOTE_WRITE))
		return TRD_DROP_NO_ACCESS;
	if (trd_mr_at(mr, p->offset, p->pay_len, &at) != 0)
		return TRD_DROP_OUT_OF_BOUNDS;
	if (p->counter != 0) {
		if (!trd_ctr_valid(n, p->counter))
			return TRD_DROP_UNKNOWN_COUNTER;
		if (!trd_ctr_allowed(n, mr->ctr_block, p->counter))
			return TRD_DROP_CTR_DENIED; /* another process's counter */
	}
	if (p->flags & TRD_HF_CPL) {
		/* a doorbell completion: 8 bytes, the cookie of a completion we wait for */
		uint64_t cookie;
		int cause;

		if (p->pay_len != sizeof(cookie))
			return TRD_DROP_UNKNOWN_CPL;
		trd_pay_copy(m, &cookie, sizeof(cookie));
		cause = trd_cpl_accept(n, p, TRD_CPL_DOORBELL, cookie);
		if (cause != 0)
			return cause;
	}
	trd_pay_copy_at(m, off, mr->base + at, p->pay_len);
	trd_ctr_sub(n, p->counter, p->pay_len);
	n->stat[TRD_STAT_RX_PUT]++;
	n->stat[TRD_STAT_PUT_BYTES] += p->pay_len;
	if (unlikely(mr->eq != NULL || mr->db_fifo != 0))
		rx_touch(n, mr, p->key, p->offset, p->pay_len); /* interrupt on touch */
	return 0;
}

/* What the puts of one bundle share: the region of the last key found (its access checked),
 * the counter named last (checked) with the bytes it is still to count down, and the
 * statistics, settled once per frame by put_batch_end(). */
struct put_batch {
	uint64_t key;
	struct trd_mr *mr;
	uint64_t ctr_bytes;
	uint64_t bytes;
	uint32_t puts;
	uint16_t ctr;
};

/* Count down the batch's counter by the bytes written so far (they are written: release). */
static inline void
put_batch_settle(struct trd_node *n, struct put_batch *b)
{
	if (b->ctr_bytes != 0) {
		trd_ctr_sub(n, b->ctr, (uint32_t)b->ctr_bytes);
		b->ctr_bytes = 0;
	}
}

static inline void
put_batch_end(struct trd_node *n, struct put_batch *b)
{
	put_batch_settle(n, b);
	n->stat[TRD_STAT_RX_PUT] += b->puts;
	n->stat[TRD_STAT_PUT_BYTES] += b->bytes;
}

/* A put entry of a bundle (no completion: entries have none), with the checks of rx_put():
 * a key other than the last one is looked up and its access checked, a counter other than the
 * last one is checked, the bounds are checked for every entry. The counter is counted down
 * when another one is named, before an event is pushed, and at the end of the frame. */
static __rte_always_inline int
rx_put_entry(struct trd_node *n, struct rte_mbuf *m, const struct trd_wire_ent *p, uint32_t off,
	     bool contig, struct put_batch *b)
{
	struct trd_mr *mr = b->mr;
	uint64_t at;

	if (p->key != b->key || mr == NULL) {
		mr = trd_mr_lookup(n, p->key);
		if (mr == NULL)
			return TRD_DROP_BAD_KEY;
		if (!(mr->access & TRD_ACCESS_REMOTE_WRITE))
			return TRD_DROP_NO_ACCESS;
		/* (a region other than the last one: may it count on this counter?) */
		if (!trd_ctr_allowed(n, mr->ctr_block, p->counter))
			return TRD_DROP_CTR_DENIED; /* another process's counter */
		b->key = p->key;
		b->mr = mr;
	}
	if (trd_mr_at(mr, p->offset, p->len, &at) != 0)
		return TRD_DROP_OUT_OF_BOUNDS;
	if (p->counter != b->ctr) {
		if (p->counter != 0 && !trd_ctr_valid(n, p->counter))
			return TRD_DROP_UNKNOWN_COUNTER;
		if (!trd_ctr_allowed(n, mr->ctr_block, p->counter))
			return TRD_DROP_CTR_DENIED; /* another process's counter */
		put_batch_settle(n, b);
		b->ctr = p->counter;
	}
	/* a contiguous frame (the common case: @p contig, all of its payload in the first
	 * segment) copied here, without a call per entry */
	if (likely(contig))
		rte_memcpy(mr->base + at, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), p->len);
	else
		trd_pay_copy_at(m, off, mr->base + at, p->len);
	b->ctr_bytes += p->len;
	b->puts++;
	b->bytes += p->len;
	if (unlikely(mr->eq != NULL || mr->db_fifo != 0)) {
		/* interrupt on touch: the counter first, as for a put alone */
		put_batch_settle(n, b);
		rx_touch(n, mr, p->key, p->offset, p->len);
	}
	return 0;
}

/* A remote get whose descriptors are @p off bytes into @p m (alone, or an entry of a bundle). */
static int
rx_rget(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, uint32_t off)
{
	struct trd_desc ds[TRD_RGET_MAX_DESCS];
	struct trd_coord req = {p->src[0], p->src[1], p->src[2]};
	unsigned int nd = p->pay_len / TRD_WIRE_DESC_LEN;
	struct trd_inj_fifo *f;

	/* (trd_wire_entry_decode() bounds a remote get entry by the same number) */
	RTE_BUILD_BUG_ON(TRD_RGET_MAX_DESCS != 15);
	if (nd > TRD_RGET_MAX_DESCS)
		return TRD_DROP_BAD_LENGTH;
	if (p->fifo == TRD_ENGINE_FIFO)
		f = n->inj[n->n_inj];
	else if (p->fifo < n->n_fifo)
		f = n->fifo[p->fifo]; /* served by share fifo % shares, whichever received this */
	else
		return TRD_DROP_UNKNOWN_FIFO;
	trd_pay_copy_at(m, off, ds, p->pay_len);
	for (unsigned int i = 0; i < nd; i++) {
		int cause = trd_desc_check_remote(&ds[i], req);

		if (cause != 0)
			return cause;
		ds[i].flags |= TRD_DF_REMOTE;
		ds[i].msg_id = p->msg_id; /* a failure report names the remote get */
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
	uint64_t old = 0, *w, off = 0;
	int cause = 0, rc;

	trd_pay_copy(m, &a, sizeof(a));
	if (mr == NULL)
		cause = TRD_DROP_BAD_KEY;
	else if ((mr->access & TRD_ACCESS_ALL) != TRD_ACCESS_ALL)
		cause = TRD_DROP_NO_ACCESS;
	else if (trd_mr_at(mr, p->offset, sizeof(uint64_t), &off) != 0)
		cause = TRD_DROP_OUT_OF_BOUNDS;
	else if (((uintptr_t)mr->base + off) % sizeof(uint64_t) != 0)
		cause = TRD_DROP_BAD_ALIGN;
	else if (a.op < TRD_ATOMIC_FADD || a.op > TRD_ATOMIC_SWAP)
		cause = TRD_DROP_BAD_DESC;
	if (cause == 0) {
		uint64_t operand = rte_be_to_cpu_64(a.operand);

		/* application threads may touch the word too: real atomics */
		w = (uint64_t *)(mr->base + off);
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
static struct trd_rx_fate
rx_done(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_cpl *c = trd_track_take(n, p);
	struct trd_rx_fate f;
	struct trd_msg *msg;

	if (c == NULL)
		return trd_fate(TRD_DROP_UNKNOWN_CPL, false);
	n->stat[TRD_STAT_RX_CTL]++;
	if (c->kind == TRD_CPL_GUEST) {
		/* a guest's atomic (its region and counter), or a guest's tracked operation (its
		 * reception FIFO, c->fifo), track.c */
		uint64_t old = 0;
		bool reply = p->type == TRD_PKT_ATOMIC_REPLY && p->pay_len >= sizeof(old);
		unsigned int cause = p->key > UINT8_MAX ? TRD_DROP_BAD_DESC : (unsigned int)p->key;
		/* a target always answers an atomic with its 8-byte old value: a DONE or a short
		 * reply that says it worked would count the counter with no old value written (an
		 * outcome says whether it has one: the process checks) */
		unsigned int bad =
			cause == TRD_DROP_NONE && !reply && c->fifo == 0 ? TRD_DROP_BAD_LENGTH : 0;

		if (reply)
			trd_pay_copy(m, &old, sizeof(old));
		if (trd_track_guest_done(n, c, bad != 0 ? bad : cause, reply, rte_be_to_cpu_64(old),
					 trd_drop_resent(n, p, TRD_DROP_FIFO_FULL)) != 0) {
			/* its FIFO full: the target sends the verdict again */
			trd_track_refused(n, c);
			return trd_fate(TRD_DROP_FIFO_FULL, false);
		}
		return trd_fate((int)bad, false);
	}
	if (p->type == TRD_PKT_ATOMIC_REPLY && p->key == 0 && c->result != NULL) {
		uint64_t old;

		trd_pay_copy(m, &old, sizeof(old));
		__atomic_store_n(c->result, rte_be_to_cpu_64(old), __ATOMIC_RELEASE);
	}
	msg = trd_rfifo_msg_of(n, m, 0);
	if (msg == NULL) {
		f = trd_fate(TRD_DROP_NO_MEMORY, false);
		goto settle;
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
	f = trd_rfifo_hand_over(n, n->rec[c->fifo], msg);
settle:
	/* refused for lack of room: the target sends the verdict again, and the id waits for
	 * it (handing the id back here lost the outcome: the next copy found it unknown) */
	if (trd_drop_resent(n, p, f.cause))
		trd_track_refused(n, c);
	else
		trd_track_done(n, c);
	return f;
}

/* A packet for another node: send it on along its route. */
static struct trd_rx_fate
forward(struct trd_node *n, struct trd_link *in, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_coord dst = {p->dst[0], p->dst[1], p->dst[2]};
	struct trd_route *rt = &n->routes[trd_rank_of(n, dst)];
	struct rte_ether_hdr *eh;
	struct trd_hdr *h;

	if (rt->link == NULL)
		return trd_fate(TRD_DROP_NO_ROUTE, false);
	if (rt->link == in)
		return trd_fate(TRD_DROP_NOT_FOR_US,
				false); /* a switched segment: someone else's frame */
	if (p->hops <= 1)
		return trd_fate(TRD_DROP_HOP_LIMIT, false);
	if (trd_link_room(rt->link) == 0)
		return trd_fate(TRD_DROP_FWD_FULL, false);
	if (m->data_len < TRD_FRAME_HLEN)
		return trd_fate(TRD_DROP_BAD_LENGTH, false);
	if (rte_mbuf_refcnt_read(m) != 1) {
		/* its origin keeps it for retransmission (in this process): edit a new header
		 * chained to a reference of its payload (payload.c) */
		struct rte_mbuf *c = trd_fwd_share(n, m, rt->link);

		if (c == NULL || c->data_len < TRD_FRAME_HLEN) {
			rte_pktmbuf_free(c);
			return trd_fate(TRD_DROP_NO_MEMORY, false);
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
	trd_link_count_fwd(rt->link);
	n->stat[TRD_STAT_FWD_PKTS]++;
	return trd_fate(0, true);
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

/* A bundle's entry as the receive path acts on it: its own fields (host order) and where its
 * bytes are in the frame; the rest of the header it would have had alone is the bundle's. */
struct rx_ent {
	struct trd_wire_ent w;
	uint32_t off;
};

/* A bundle's entries, its structure checked whole (at most TRD_BUNDLE_MAX entries, each inside
 * the payload, together filling it exactly): @p e gets each entry's fields and where its bytes
 * are in @p m, *@p nf the number of memory-FIFO entries from @p start on for a FIFO below
 * @p n_rec. @return 0, or the drop cause of the whole frame. */
static int
bundle_decode(const struct rte_mbuf *m, const struct trd_pkt *p, struct rx_ent *e, uint32_t start,
	      uint32_t n_rec, uint32_t *nf)
{
	uint32_t off = TRD_FRAME_HLEN, end = TRD_FRAME_HLEN + p->pay_len, k = 0;

	*nf = 0;
	if (p->aux > TRD_BUNDLE_MAX)
		return TRD_DROP_BAD_LENGTH;
	if (likely(m->data_len >= end)) {
		/* all of it in the first segment: every entry header is read in place */
		const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);

		for (uint32_t i = 0; i < p->aux; i++) {
			int cause = trd_wire_entry_check(b + off, end - off, &e[i].w);

			if (cause != 0)
				return cause;
			k += e[i].w.type == TRD_PKT_FIFO && e[i].w.fifo < n_rec && i >= start;
			e[i].off = off + TRD_ENTRY_LEN;
			off = e[i].off + e[i].w.len;
		}
		*nf = k;
		return off == end ? 0 : TRD_DROP_BAD_LENGTH;
	}
	for (uint32_t i = 0; i < p->aux; i++) {
		uint8_t ebuf[TRD_ENTRY_LEN];
		const void *eh = m->data_len >= off + TRD_ENTRY_LEN
					 ? rte_pktmbuf_mtod_offset(m, const void *, off)
					 : rte_pktmbuf_read(m, off, TRD_ENTRY_LEN, ebuf);
		int cause;

		if (eh == NULL)
			return TRD_DROP_BAD_LENGTH;
		cause = trd_wire_entry_check(eh, end - off, &e[i].w);
		if (cause != 0)
			return cause;
		k += e[i].w.type == TRD_PKT_FIFO && e[i].w.fifo < n_rec && i >= start;
		e[i].off = off + TRD_ENTRY_LEN;
		off = e[i].off + e[i].w.len;
	}
	*nf = k;
	return off == end ? 0 : TRD_DROP_BAD_LENGTH;
}

/* A bundle: each of its messages is acted on as if it had come alone, with the same checks,
 * and a message that fails them is dropped and counted alone. The structure is checked whole
 * first: one malformed entry drops the frame. A message refused for want of room (its FIFO
 * full, no memory) ends the frame's turn when it is sequenced: the peer's session remembers
 * how many messages were delivered, the frame is refused, and when the reliable sender brings
 * it again delivery goes on from there, so no message is delivered twice. An unsequenced
 * frame is never sent again: its messages that find no room are dropped and counted. */
static struct trd_rx_fate
rx_bundle(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct rx_ent e[TRD_BUNDLE_MAX];
	struct rte_mbuf *mi[TRD_BUNDLE_MAX];
	struct trd_msg_blk *blk = NULL;
	uint32_t cnt = p->aux, nf, start = 0, i;
	struct trd_peer *pe = NULL;
	bool contig;
	struct trd_rx_fate f = trd_fate(0, false);
	struct put_batch pb = {0};
	unsigned int j = 0;
	int cause;

	if (p->seq != 0 && n->reliable) {
		struct trd_coord src = {p->src[0], p->src[1], p->src[2]};

		pe = n->peers[trd_rank_of(n, src)];
		if (pe != NULL && pe->part_seq == p->seq && pe->part_epoch == p->epoch)
			start = pe->part_done;
	}
	cause = bundle_decode(m, p, e, start, n->n_rec, &nf);
	if (cause != 0)
		return trd_fate(cause, false);
	contig = m->data_len >= TRD_FRAME_HLEN + p->pay_len;
	/* a contiguous frame lends its bytes to its messages, read in place in blocks that hold
	 * it (short of blocks, one mbuf reference each); a segmented one is copied */
	if (nf != 0 && ((blk = trd_rfifo_blk_open(n, m)) != NULL || m->nb_segs != 1 ||
			rte_pktmbuf_alloc_bulk(n->pool, mi, nf) != 0)) {
		if (blk == NULL && m->nb_segs == 1)
			n->stat[TRD_STAT_NO_MBUF]++;
		memset(mi, 0, nf * sizeof(mi[0]));
	}
	for (i = start; i < cnt; i++) {
		if (e[i].w.type == TRD_PKT_PUT) {
			cause = rx_put_entry(n, m, &e[i].w, e[i].off, contig, &pb);
		} else {
			/* the puts before it are counted before it is seen */
			put_batch_settle(n, &pb);
			if (e[i].w.type == TRD_PKT_RGET) {
				struct trd_pkt ep;

				trd_wire_entry_pkt(p, &e[i].w, i, &ep);
				cause = rx_rget(n, m, &ep, e[i].off);
			} else if (e[i].w.fifo < n->n_rec) {
				/* mi[j] is this message's: NULL once it carries it */
				cause = trd_rfifo_entry(n, m, p, &e[i].w, p->msg_id + i, e[i].off,
							&blk, &mi[j++])
						.cause;
			} else if (trd_grfifo_is(e[i].w.fifo)) {
				cause = trd_rfifo_entry_guest(n, m, p, &e[i].w, p->msg_id + i,
							      e[i].off);
			} else {
				cause = TRD_DROP_UNKNOWN_FIFO;
			}
		}
		if (cause == 0)
			continue;
		if (pe != NULL && trd_drop_transient(cause)) {
			f = trd_fate(cause, false); /* the rest when it comes again */
			break;
		}
		trd_drop(n, (unsigned int)cause);
	}
	put_batch_end(n, &pb);
	if (i == cnt)
		n->stat[TRD_STAT_RX_BUNDLES]++; /* taken whole */
	if (pe != NULL) {
		pe->part_seq = i < cnt ? p->seq : 0;
		pe->part_epoch = p->epoch;
		pe->part_done = (uint8_t)i; /* i <= cnt <= TRD_BUNDLE_MAX */
	}
	trd_rfifo_blk_close(blk);
	/* references taken for messages that failed their checks or were not reached */
	for (unsigned int k = 0; k < nf; k++)
		if (mi[k] != NULL)
			rte_pktmbuf_free(mi[k]);
	return f;
}

void
trd_bundle_fail_ctrs(struct trd_node *n, const struct rte_mbuf *m, const struct trd_pkt *p,
		     uint32_t start)
{
	struct rx_ent e[TRD_BUNDLE_MAX];
	uint32_t nf;

	/* a malformed frame counts for nothing */
	if (bundle_decode(m, p, e, start, 0, &nf) != 0)
		return;
	for (uint32_t i = start; i < p->aux; i++)
		if (trd_ctr_lost_ok(n, e[i].w.type, e[i].w.key, e[i].w.counter))
			trd_ctr_fail(&n->ctr[e[i].w.counter]);
}

/* Act on a frame for this node whose turn has come. */
static struct trd_rx_fate
rx_deliver(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_rx_fate f;

	/* A packet that needs an answer is taken only when the answer can go: an atomic must
	 * not run twice, a message must not be delivered twice because its DONE found no
	 * room. Refused for now, it comes again (reliable senders). */
	if ((p->type == TRD_PKT_ATOMIC ||
	     (p->flags & (TRD_HF_ACKREQ | TRD_HF_LAST)) == (TRD_HF_ACKREQ | TRD_HF_LAST)) &&
	    !trd_ctl_room(n, p->src))
		return trd_fate(TRD_DROP_REPLY_FULL, false);
	switch (p->type) {
	case TRD_PKT_PUT:
		f = trd_fate(rx_put(n, m, p, TRD_FRAME_HLEN), false);
		break;
	case TRD_PKT_BUNDLE:
		return rx_bundle(n, m, p);
	case TRD_PKT_FIFO:
		f = trd_rfifo_rx(n, m, p);
		break;
	case TRD_PKT_RGET:
		f = trd_fate(rx_rget(n, m, p, TRD_FRAME_HLEN), false);
		break;
	case TRD_PKT_ATOMIC:
		return trd_fate(rx_atomic(n, m, p), false);
	case TRD_PKT_DONE:
	case TRD_PKT_ATOMIC_REPLY:
		return rx_done(n, m, p);
	case TRD_PKT_COMB:
		return trd_fate(trd_comb_rx(n, m, p), false);
	default:
		return trd_fate(0, false);
	}
	f.verdict = true;
	return f;
}

/* The origin asked for a verdict on this message: its last packet decides. A remote get only
 * reports a refusal: its carried descriptors report their own failures, and the requester sees
 * success in its counters. A sequenced frame's verdict goes after its session took it, so that
 * the DONE's piggybacked ack covers the frame itself and the origin need not wait for an ack. */
static void
send_verdict(struct trd_node *n, const struct trd_pkt *p, struct trd_rx_fate f)
{
	if (f.verdict &&
	    (p->flags & (TRD_HF_ACKREQ | TRD_HF_LAST)) == (TRD_HF_ACKREQ | TRD_HF_LAST) &&
	    (p->type != TRD_PKT_RGET || f.cause != 0) && !trd_drop_resent(n, p, f.cause)) {
		/* (a reliable sender brings a packet refused for lack of room again: its verdict
		 * comes then, not now) */
		int rc = trd_ctl_send(n, p->src, TRD_PKT_DONE, p->aux, (uint64_t)f.cause, p->msg_id,
				      NULL, 0);

		if (rc != 0)
			trd_drop(n, (unsigned int)rc);
	}
}

/* A sequenced frame: reliability says deliver, hold or drop; a delivered one may release
 * frames held behind it, delivered here in order with the headers parsed when they came. A
 * frame refused for lack of room (a transient cause) is not received: it comes again, and
 * what follows it waits. */
static struct trd_rx_fate
rx_sequenced(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, const uint64_t *proof)
{
	struct trd_peer *pe = NULL;
	const struct trd_pkt *hp;
	struct trd_rx_fate f;
	struct rte_mbuf *h;
	int cause;

	switch (trd_rel_rx(n, m, p, proof, &pe, &cause)) {
	case TRD_REL_DROP:
		return trd_fate(cause, false);
	case TRD_REL_HOLD:
		return trd_fate(0, true);
	case TRD_REL_DELIVER:
		break;
	}
	f = rx_deliver(n, m, p);
	if (unlikely(trd_drop_transient(f.cause)))
		return f;
	trd_rel_consume(n, pe);
	trd_rel_rx_end(n, pe); /* an ack is due: a DONE below carries it */
	send_verdict(n, p, f);
	while ((h = trd_rel_next(n, pe, &hp)) != NULL) {
		struct trd_pkt hq = *hp; /* its slot is free once consumed */
		struct trd_rx_fate g = rx_deliver(n, h, &hq);

		if (g.cause != 0) {
			trd_drop(n, (unsigned int)g.cause);
			if (trd_drop_transient(g.cause))
				break; /* stays held; tried again when its turn comes back */
		}
		trd_rel_consume(n, pe); /* h is ours now */
		send_verdict(n, &hq, g);
		if (!g.kept)
			rte_pktmbuf_free(h);
	}
	return f;
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

static struct trd_rx_fate
rx_one(struct trd_node *n, struct trd_link *l, struct rte_mbuf *m)
{
	uint8_t hbuf[TRD_FRAME_HLEN];
	const uint8_t *f = frame_head(m, hbuf);
	const uint64_t *proof = NULL;
	uint64_t token;
	struct trd_pkt p;
	int cause;

	if (unlikely(f == NULL))
		return trd_fate(TRD_DROP_SHORT_FRAME, false);
	cause = trd_wire_parse(f, m->pkt_len, &p);
	if (unlikely(cause != 0))
		return trd_fate(cause, false);
	/* a frame's lane is the share that polls the queue it came on (a node of one share:
	 * lane 0); it is forwarded on the same lane */
	if (unlikely((p.flags & TRD_HF_LANE) != n->lane_hf))
		return trd_fate(TRD_DROP_BAD_LANE, false);
	if (unlikely(!in_torus(&n->torus, p.src) || !in_torus(&n->torus, p.dst)))
		return trd_fate(TRD_DROP_UNKNOWN_NODE, false);
	if (!trd_coord_eq(n->coord, p.dst))
		return forward(n, l, m, &p);
	/* corrupted payloads are never acknowledged: the sender will send them again */
	if ((p.flags & TRD_HF_CRC) && (cause = crc_check(m, &p)) != 0)
		return trd_fate(cause, false);
	if (p.flags & TRD_HF_PROOF) {
		/* the session's token, after the payload and its CRC (the parser checked that
		 * the frame holds them) */
		uint8_t tb[TRD_PROOF_LEN];
		const uint8_t *tp = rte_pktmbuf_read(
			m, TRD_FRAME_HLEN + p.pay_len + ((p.flags & TRD_HF_CRC) ? 4u : 0u),
			TRD_PROOF_LEN, tb);

		if (unlikely(tp == NULL))
			return trd_fate(TRD_DROP_BAD_LENGTH, false);
		memcpy(&token, tp, sizeof(token));
		token = trd_be64(token);
		proof = &token;
	}
	if (p.type == TRD_PKT_ACK) {
		uint8_t sack[TRD_SACK_BYTES];
		const uint8_t *sp = NULL;

		if (p.pay_len == TRD_SACK_BYTES)
			sp = rte_pktmbuf_read(m, TRD_FRAME_HLEN, TRD_SACK_BYTES, sack);
		return trd_fate(n->reliable ? trd_rel_ack_in(n, &p, sp, proof) : 0, false);
	}
	if (p.seq != 0 && n->reliable)
		return rx_sequenced(n, m, &p, proof);
	/* A reliable node acts on nothing outside a session but the session protocol itself
	 * (the acks above): anyone on the segment can write an unsequenced frame. Only the
	 * node's own frames to itself, on its loopback, carry no sequence number. */
	if (n->reliable && !(l == n->lo && trd_coord_eq(n->coord, p.src)) && !n->trust_unseq)
		return trd_fate(TRD_DROP_UNSEQUENCED, false);
	{
		struct trd_rx_fate fate = rx_deliver(n, m, &p);

		send_verdict(n, &p, fate);
		return fate;
	}
}

void
trd_rx_burst(struct trd_node *n, struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb)
{
	struct rte_mbuf *done[2 * TRD_RX_BURST];
	unsigned int nd = 0;
	uint64_t bytes = 0;

	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		struct trd_rx_fate f;

		if (i + 1 < nb)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		bytes += m->pkt_len;
		f = rx_one(n, l, m);
		if (unlikely(f.cause != 0))
			trd_drop(n, (unsigned int)f.cause);
		if (!f.kept)
			done[nd++] = m;
	}
	trd_link_count_rx(l, nb, bytes);
	n->stat[TRD_STAT_RX_PKTS] += nb;
	n->stat[TRD_STAT_RX_BYTES] += bytes;
	if (nd != 0)
		rte_pktmbuf_free_bulk(done, nd);
}
