/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reception FIFOs: the rings where messages reach applications, and everything that makes a
 * message: from one contiguous packet (handed over inside the mbuf), reassembled from several
 * (by source and message id, in order), or made by the engine itself (the outcome of a
 * tracked operation); their event-queue signals; taking and freeing messages.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "core_pvt.h"

/* ---- the FIFOs ---- */

struct trd_rec_fifo *
trd_rfifo_create(struct trd_node *n, uint8_t id, unsigned int size)
{
	static unsigned int serial;
	char name[RTE_RING_NAMESIZE];
	struct trd_rec_fifo *rf = rte_zmalloc("trd_rfifo", sizeof(*rf), RTE_CACHE_LINE_SIZE);

	if (rf == NULL)
		return NULL;
	snprintf(name, sizeof(name), "trdrec%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	/* The serving lcore delivers (every share of a split node), application threads take. */
	rf->ring = rte_ring_create(name, size, SOCKET_ID_ANY,
				   (n->n_shares > 1 ? 0 : RING_F_SP_ENQ) | RING_F_EXACT_SZ);
	if (rf->ring == NULL) {
		rte_free(rf);
		return NULL;
	}
	rf->node = n;
	rf->id = id;
	return rf;
}

void
trd_rfifo_free(struct trd_rec_fifo *rf)
{
	struct trd_msg *m;

	if (rf == NULL)
		return;
	while (rte_ring_dequeue(rf->ring, (void **)&m) == 0)
		trd_msg_free(m);
	rte_ring_free(rf->ring);
	rte_free(rf);
}

struct trd_rec_fifo *
trd_rec_fifo(struct trd_node *n, unsigned int idx)
{
	return (n == NULL || idx >= n->n_rec) ? NULL : n->rec[idx];
}

int
trd_rec_fifo_poll(struct trd_rec_fifo *rf, struct trd_msg **msgs, unsigned int n)
{
	if (rf == NULL || (msgs == NULL && n != 0))
		return -EINVAL;
	if (unlikely(rf->ring == NULL))
		return rf->node->att->rfifo_poll(rf->node, rf->id, msgs, n);
	return (int)rte_ring_dequeue_burst(rf->ring, (void **)msgs, n, NULL);
}

int
trd_rec_fifo_wait(struct trd_rec_fifo *rf, struct trd_msg **msg, uint64_t timeout_us)
{
	uint64_t deadline;

	if (rf == NULL || msg == NULL)
		return -EINVAL;
	if (rf->ring == NULL)
		return rf->node->att->rfifo_wait(rf->node, rf->id, msg, timeout_us);
	deadline = trd_time_us() + timeout_us;
	while (rte_ring_dequeue(rf->ring, (void **)msg) != 0) {
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		trd_node_progress(rf->node);
	}
	return 0;
}

/* ---- blocks: a bundle's messages in one frame, one reference for all of them ---- */

/* What the engine holds of a block while it fills it: no count of freed messages reaches it. */
#define TRD_BLK_HOLD (1u << 30)

/* Blocks outstanding in a process at most (each holds a frame); short of one, a bundle's
 * messages are carried one mbuf each as before. */
#define TRD_BLK_POOL 4095

struct rte_mempool *
trd_msg_blk_pool(void)
{
	static const char name[] = "trd_msgblk";
	struct rte_mempool *mp = rte_mempool_lookup(name);

	if (mp != NULL)
		return mp;
	mp = rte_mempool_create(name, TRD_BLK_POOL, sizeof(struct trd_msg_blk), 64, 0, NULL, NULL,
				NULL, NULL, (int)rte_socket_id(), 0);
	return mp != NULL ? mp : rte_mempool_lookup(name); /* a racing creator may have won */
}

static inline void
blk_release(struct trd_msg_blk *b)
{
	rte_pktmbuf_free(b->m);
	rte_mempool_put(b->mp, b);
}

/* Let go of @p k of a block's references. */
static inline void
blk_put(struct trd_msg_blk *b, uint32_t k)
{
	if (__atomic_sub_fetch(&b->refs, k, __ATOMIC_ACQ_REL) == 0)
		blk_release(b);
}

/* A block for messages in @p m (contiguous), holding a reference to it; NULL: none left. */
static struct trd_msg_blk *
blk_get(struct trd_node *n, struct rte_mbuf *m)
{
	struct trd_msg_blk *b;

	if (n->blk_pool == NULL || rte_mempool_get(n->blk_pool, (void **)&b) != 0)
		return NULL;
	b->m = m;
	b->mp = n->blk_pool;
	b->refs = TRD_BLK_HOLD;
	b->used = 0;
	rte_mbuf_refcnt_update(m, 1);
	return b;
}

struct trd_msg_blk *
trd_rfifo_blk_open(struct trd_node *n, struct rte_mbuf *m)
{
	return m->nb_segs == 1 ? blk_get(n, m) : NULL;
}

void
trd_rfifo_blk_close(struct trd_msg_blk *b)
{
	/* the engine's hold goes; what is left is one per message handed out */
	if (b != NULL)
		blk_put(b, TRD_BLK_HOLD - b->used);
}

void
trd_msg_free(struct trd_msg *msg)
{
	struct trd_msg_pvt *mp;

	if (msg == NULL)
		return;
	mp = trd_msg_pvt(msg);
	if (mp->blk != NULL)
		blk_put(mp->blk, 1);
	else if (mp->m != NULL)
		rte_pktmbuf_free(mp->m);
	else if (msg->fifo >= TRD_GUEST_RFIFO_FIRST)
		trd_attach_msg_free(msg); /* read in place in an attached process's FIFO */
	else
		rte_free(msg);
}

void
trd_msg_free_bulk(struct trd_msg **msgs, unsigned int n)
{
	unsigned int i = 0;

	if (msgs == NULL)
		return;
	while (i < n) {
		struct trd_msg_blk *b = msgs[i] != NULL ? trd_msg_pvt(msgs[i])->blk : NULL;
		uint32_t k = 1;

		if (b == NULL) {
			trd_msg_free(msgs[i++]);
			continue;
		}
		/* messages of one block come one after the other: one count for them all */
		while (i + k < n && msgs[i + k] != NULL && trd_msg_pvt(msgs[i + k])->blk == b)
			k++;
		blk_put(b, k);
		i += k;
	}
}

int
trd_rec_fifo_set_eq(struct trd_rec_fifo *rf, struct trd_eq *eq)
{
	if (rf == NULL || (eq != NULL && eq->node != rf->node))
		return -EINVAL;
	if (rf->node->att != NULL) {
		int rc = rf->node->att->eq_bind(rf->node, rf->id, eq != NULL ? eq->att : NULL);

		if (rc != 0)
			return rc;
	}
	__atomic_store_n(&rf->eq, eq, __ATOMIC_RELEASE);
	return 0;
}

/* ---- messages ---- */

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
	struct trd_msg_pvt *mp = rte_malloc("trd_msg", sizeof(*mp) + len, 0);

	if (mp == NULL)
		return NULL;
	mp->msg.data = mp + 1;
	mp->m = NULL;
	mp->blk = NULL;
	return &mp->msg;
}

/* (Always inline: a call per message of a bundle cost more than the session token adds.) */
static __rte_always_inline int
rfifo_push(struct trd_node *n, struct trd_rec_fifo *rf, struct trd_msg *msg)
{
	struct trd_eq *eq;

	/* the ring's flags say whether other shares' lcores enqueue too (multi-producer) */
	if (unlikely(rte_ring_enqueue(rf->ring, msg) != 0))
		return TRD_DROP_FIFO_FULL;
	if (n->n_shares > 1)
		__atomic_fetch_add(&rf->msgs, 1, __ATOMIC_RELAXED);
	else
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
struct trd_msg *
trd_rfifo_msg_of(struct trd_node *n, struct rte_mbuf *m, uint32_t len)
{
	struct trd_msg *msg;

	if (m->nb_segs == 1) {
		msg = &trd_mbuf_priv(m)->msg.msg;
		msg->data = rte_pktmbuf_mtod_offset(m, uint8_t *, TRD_FRAME_HLEN);
		trd_msg_pvt(msg)->m = m;
		trd_msg_pvt(msg)->blk = NULL;
		return msg;
	}
	/* the frame's headers, then the whole message in the next segment (a shared payload
	 * sent without a prefix over a link that passes chains on: payload.c); not a segment
	 * of the sender's memory (zero-copy), which must be let go of once sent */
	if (m->data_len == TRD_FRAME_HLEN && m->next != NULL && m->next->data_len >= len &&
	    !RTE_MBUF_HAS_EXTBUF(m->next)) {
		msg = &trd_mbuf_priv(m)->msg.msg;
		msg->data = rte_pktmbuf_mtod(m->next, uint8_t *);
		trd_msg_pvt(msg)->m = m;
		trd_msg_pvt(msg)->blk = NULL;
		return msg;
	}
	msg = msg_alloc(len);
	if (msg != NULL) {
		trd_pay_copy(m, msg->data, len);
		n->stat[TRD_STAT_RX_FIFO_COPY_BYTES] += len;
	}
	return msg;
}

/* Deliver a message from trd_rfifo_msg_of(): on success the engine keeps the packet if the
 * message lives in it; on failure a copy is freed (the packet goes back to the caller). */
struct trd_rx_fate
trd_rfifo_hand_over(struct trd_node *n, struct trd_rec_fifo *rf, struct trd_msg *msg)
{
	int rc = rfifo_push(n, rf, msg);

	if (rc != 0) {
		if (trd_msg_pvt(msg)->m == NULL)
			rte_free(msg);
		return trd_fate(rc, false);
	}
	return trd_fate(0, trd_msg_pvt(msg)->m != NULL);
}

/* ---- memory-FIFO frames ---- */

/* The checks every memory-FIFO message passes before anything is made of it. */
static inline int
rfifo_check(const struct trd_node *n, const struct trd_pkt *p)
{
	if (p->fifo >= n->n_rec)
		return TRD_DROP_UNKNOWN_FIFO;
	if (p->counter != 0 && !trd_ctr_valid(n, p->counter))
		return TRD_DROP_UNKNOWN_COUNTER;
	if (!trd_ctr_allowed(n, 0, p->counter))
		return TRD_DROP_CTR_DENIED; /* a process's counter: the node's FIFOs are not its */
	return 0;
}

/* The header of a message for a guest's reception FIFO (grfifo.c). */
static inline void
grfifo_hdr(struct trd_rslot *h, const struct trd_pkt *p, uint8_t fifo, uint32_t len,
	   uint32_t msg_id, uint64_t user)
{
	memset(h, 0, sizeof(*h));
	h->len = len;
	h->fifo = fifo;
	h->src.x = p->src[0];
	h->src.y = p->src[1];
	h->src.z = p->src[2];
	h->msg_id = msg_id;
	h->user = user;
}

int
trd_rfifo_entry_guest(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p,
		      const struct trd_wire_ent *e, uint32_t msg_id, uint32_t off)
{
	struct trd_rslot h;
	int rc;

	grfifo_hdr(&h, p, e->fifo, e->len, msg_id, e->key);
	rc = trd_grfifo_deliver(n, &h, e->counter, m, off, NULL);
	if (rc == 0)
		n->stat[TRD_STAT_RX_FIFO]++;
	return rc;
}

struct trd_rx_fate
trd_rfifo_entry(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p,
		const struct trd_wire_ent *e, uint32_t msg_id, uint32_t off,
		struct trd_msg_blk **blk, struct rte_mbuf **mi)
{
	struct trd_msg_blk *b = *blk;
	struct trd_msg *msg;
	int rc;

	/* the checks of rfifo_check(), on the entry's own fields */
	if (e->fifo >= n->n_rec)
		return trd_fate(TRD_DROP_UNKNOWN_FIFO, false);
	if (e->counter != 0 && !trd_ctr_valid(n, e->counter))
		return trd_fate(TRD_DROP_UNKNOWN_COUNTER, false);
	if (!trd_ctr_allowed(n, 0, e->counter))
		return trd_fate(TRD_DROP_CTR_DENIED, false);
	n->stat[TRD_STAT_RX_FIFO]++;
	if (b != NULL && b->used == TRD_BLK_MSGS) {
		/* full: the next block of the same frame (none left: a copy) */
		trd_rfifo_blk_close(b);
		*blk = b = blk_get(n, m);
	}
	if (b != NULL) {
		/* the message is read in place: the block holds the frame for all of them */
		struct trd_msg_pvt *mp = &b->msg[b->used++];

		mp->m = NULL;
		mp->blk = b;
		msg = &mp->msg;
		msg->data = rte_pktmbuf_mtod_offset(m, uint8_t *, off);
	} else if (*mi != NULL) {
		/* the message lives in the bundle's buffer, held by a reference of its own */
		rte_pktmbuf_attach(*mi, m);
		msg = &trd_mbuf_priv(*mi)->msg.msg;
		msg->data = rte_pktmbuf_mtod_offset(m, uint8_t *, off);
		trd_msg_pvt(msg)->m = *mi;
		trd_msg_pvt(msg)->blk = NULL;
		*mi = NULL;
	} else {
		msg = msg_alloc(e->len);
		if (msg == NULL)
			return trd_fate(TRD_DROP_NO_MEMORY, false);
		trd_pay_copy_at(m, off, msg->data, e->len);
		n->stat[TRD_STAT_RX_FIFO_COPY_BYTES] += e->len;
	}
	msg->src.x = p->src[0];
	msg->src.y = p->src[1];
	msg->src.z = p->src[2];
	msg->fifo = e->fifo;
	msg->len = e->len;
	msg->msg_id = msg_id;
	msg->user = e->key;
	msg->status = 0;
	msg->cause = 0;
	rc = rfifo_push(n, n->rec[e->fifo], msg);
	if (rc != 0) {
		if (b != NULL)
			b->used--; /* the slot just taken: nobody saw it */
		else
			trd_msg_free(msg);
		return trd_fate(rc, false);
	}
	trd_ctr_sub(n, e->counter, e->len);
	return trd_fate(0, false);
}

/* A multi-packet message's reassembly key: its source node and message id. */
static inline uint64_t
reasm_key(const struct trd_pkt *p)
{
	return (uint64_t)(p->src[0] | p->src[1] << 8 | p->src[2] << 16) << 32 | p->msg_id;
}

/* A piece of a message for a guest's FIFO was refused: the message cut short is given up, or
 * its reassembly entry would stay until its sender goes (the guest gone while it came, its
 * owner dying, holds the entry for good otherwise). Only the entry of that message, of that
 * FIFO. */
static void
reasm_forget(struct trd_node *n, const struct trd_pkt *p)
{
	uint64_t hkey = reasm_key(p);
	int idx = rte_hash_lookup(n->reasm_hash, &hkey);
	struct trd_reasm *r;

	if (idx < 0 || (unsigned int)idx >= n->conf.n_reasm)
		return;
	r = &n->reasm[idx];
	if (r->msg == NULL || r->msg->fifo != p->fifo)
		return;
	rte_free(r->msg);
	r->msg = NULL;
	rte_hash_del_key(n->reasm_hash, &hkey);
}

/* A FIFO completion (a reflection's echo): one empty message carrying its cookie, which
 * retires its id only once it is in the FIFO. A full FIFO refuses it with the id pending, so
 * that the reliable sender's next copy is still recognised: retired first, the completion was
 * lost to the refusal. */
static struct trd_rx_fate
rfifo_cpl(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, struct trd_rec_fifo *rf)
{
	struct trd_rx_fate f;
	struct trd_msg *msg;
	int cause;

	if (p->msg_len != 0 || p->pay_len != 0 || p->offset != 0)
		return trd_fate(TRD_DROP_UNKNOWN_CPL, false);
	/* full: refused before its id is touched (a share of a split node may still take the
	 * last slot first: the settle below puts the id back then) */
	if (rte_ring_free_count(rf->ring) == 0 && trd_drop_resent(n, p, TRD_DROP_FIFO_FULL))
		return trd_fate(TRD_DROP_FIFO_FULL, false);
	cause = trd_cpl_claim(n, p, TRD_CPL_FIFO, p->key);
	if (cause != 0)
		return trd_fate(cause, false);
	msg = trd_rfifo_msg_of(n, m, 0);
	if (msg == NULL) {
		f = trd_fate(TRD_DROP_NO_MEMORY, false);
	} else {
		msg_fill(msg, p);
		f = trd_rfifo_hand_over(n, rf, msg);
	}
	trd_cpl_settle(n, p, f.cause);
	if (f.cause == 0) {
		n->stat[TRD_STAT_RX_FIFO]++;
		trd_ctr_sub(n, p->counter, 0);
	}
	return f;
}

struct trd_rx_fate
trd_rfifo_rx(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	struct trd_rec_fifo *rf;
	struct trd_reasm *r;
	struct trd_msg *msg;
	uint64_t hkey;
	int idx, rc;

	if (trd_grfifo_is(p->fifo)) {
		/* a guest's reception FIFO: the message is copied into its ring (grfifo.c) */
		if (unlikely(p->flags & TRD_HF_CPL)) {
			/* a reflection's completion: its id's outcome takes its place (an id of
			 * a guest gone is given back all the same) */
			rc = trd_cpl_accept_guest(n, p);
			n->stat[TRD_STAT_RX_FIFO] += rc == 0;
			return trd_fate(rc, false);
		}
		rc = trd_grfifo_check(n, p->fifo, p->counter, p->msg_len);
		if (rc != 0) {
			if (p->offset != 0)
				reasm_forget(n, p); /* its FIFO went away: it will never end */
			return trd_fate(rc, false);
		}
		if (p->offset == 0 && p->pay_len == p->msg_len) {
			struct trd_rslot h;

			grfifo_hdr(&h, p, p->fifo, p->pay_len, p->msg_id, p->key);
			rc = trd_grfifo_deliver(n, &h, p->counter, m, TRD_FRAME_HLEN, NULL);
			n->stat[TRD_STAT_RX_FIFO] += rc == 0;
			return trd_fate(rc, false);
		}
		rf = NULL; /* reassembled first, below */
	} else {
		rc = rfifo_check(n, p);
		if (rc != 0)
			return trd_fate(rc, false);
		rf = n->rec[p->fifo];
	}
	if (p->flags & TRD_HF_CPL)
		return rfifo_cpl(n, m, p, rf);
	n->stat[TRD_STAT_RX_FIFO]++;

	if (p->offset == 0 && p->pay_len == p->msg_len) {
		/* The whole message in one packet: hand the packet itself over when it is
		 * contiguous, otherwise copy it out. */
		struct trd_rx_fate f;

		msg = trd_rfifo_msg_of(n, m, p->pay_len);
		if (msg == NULL)
			return trd_fate(TRD_DROP_NO_MEMORY, false);
		msg_fill(msg, p);
		f = trd_rfifo_hand_over(n, rf, msg);
		if (f.cause == 0)
			trd_ctr_sub(n, p->counter, p->pay_len);
		return f;
	}

	/* Part of a longer message: reassemble by (source rank, message id). */
	hkey = reasm_key(p);
	idx = rte_hash_lookup(n->reasm_hash, &hkey);
	if (idx < 0) {
		/* a peer may not make us hold more than the configured largest message */
		if (p->msg_len > n->conf.max_msg)
			return trd_fate(TRD_DROP_BAD_LENGTH, false);
		if (p->offset != 0)
			return trd_fate(TRD_DROP_REASM,
					false); /* a message starts with its first byte */
		idx = rte_hash_add_key(n->reasm_hash, &hkey);
		if (idx < 0)
			return trd_fate(TRD_DROP_NO_MEMORY, false);
		if ((unsigned int)idx >= n->conf.n_reasm) {
			rte_hash_del_key(n->reasm_hash, &hkey);
			return trd_fate(TRD_DROP_NO_MEMORY, false);
		}
		r = &n->reasm[idx];
		r->msg = msg_alloc(p->msg_len);
		if (r->msg == NULL) {
			rte_hash_del_key(n->reasm_hash, &hkey);
			return trd_fate(TRD_DROP_NO_MEMORY, false);
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
		return trd_fate(TRD_DROP_REASM, false);
	trd_pay_copy(m, (uint8_t *)r->msg->data + p->offset, p->pay_len);
	n->stat[TRD_STAT_RX_FIFO_COPY_BYTES] += p->pay_len;
	if (r->got + p->pay_len == r->len) {
		/* complete: if the FIFO is full the last piece is refused (and sent again
		 * by a reliable sender), the message waits here */
		if (rf == NULL) {
			struct trd_rslot h;

			/* (each piece counted on its counter as it came) */
			grfifo_hdr(&h, p, r->msg->fifo, r->len, r->msg->msg_id, r->msg->user);
			rc = trd_grfifo_deliver(n, &h, 0, NULL, 0, r->msg->data);
			if (rc == TRD_DROP_FIFO_FULL)
				return trd_fate(rc, false);
			/* copied into the ring, or never will be (its owner gone, too long) */
			rte_free(r->msg);
			r->msg = NULL;
			rte_hash_del_key(n->reasm_hash, &hkey);
			if (rc != 0)
				return trd_fate(rc, false);
		} else {
			rc = rfifo_push(n, rf, r->msg);
			if (rc != 0)
				return trd_fate(rc, false);
			r->msg = NULL;
			rte_hash_del_key(n->reasm_hash, &hkey);
		}
	} else {
		r->got += p->pay_len;
	}
	trd_ctr_sub(n, p->counter, p->pay_len);
	return trd_fate(0, false);
}

int
trd_rfifo_outcome(struct trd_node *n, uint8_t fifo, uint32_t from_rank, uint64_t cookie,
		  unsigned int cause)
{
	struct trd_msg *msg;

	if (fifo >= n->n_rec)
		return TRD_DROP_UNKNOWN_FIFO;
	if (rte_ring_free_count(n->rec[fifo]->ring) == 0)
		return TRD_DROP_FIFO_FULL; /* (before a message is made for it) */
	msg = msg_alloc(0);
	if (msg == NULL)
		return TRD_DROP_NO_MEMORY;
	memset(msg, 0, sizeof(*msg));
	msg->src = trd_outcome_src(n, from_rank);
	msg->fifo = fifo;
	msg->user = cookie;
	msg->cause = (uint8_t)cause;
	msg->status = trd_cause_errno(cause);
	msg->data = msg + 1;
	if (rfifo_push(n, n->rec[fifo], msg) != 0) {
		rte_free(msg);
		return TRD_DROP_FIFO_FULL;
	}
	return 0;
}

void
trd_reasm_purge(struct trd_node *n, const uint8_t src[3])
{
	uint64_t code = (uint64_t)(src[0] | src[1] << 8 | src[2] << 16);

	for (unsigned int i = 0; i < n->conf.n_reasm; i++) {
		struct trd_reasm *r = &n->reasm[i];

		if (r->msg != NULL && r->hkey >> 32 == code) {
			/* its counter counted on the pieces that will never come */
			if (r->ctr != 0 && trd_ctr_valid(n, r->ctr))
				trd_ctr_fail(&n->ctr[r->ctr]);
			rte_hash_del_key(n->reasm_hash, &r->hkey);
			rte_free(r->msg);
			r->msg = NULL;
		}
	}
}

uint8_t
trd_rec_fifo_id(const struct trd_rec_fifo *rf)
{
	return rf != NULL ? rf->id : 0;
}
