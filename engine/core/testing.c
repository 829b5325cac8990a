/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Entry points for tests and fuzzers (include/toroid/testing.h): a frame straight into the
 * receive path, and a node put back to idle so that every input starts from the same state
 * and a leaked mbuf shows in the pool's count.
 */
#include <errno.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <toroid/testing.h>

#include "core_pvt.h"

#define TESTING_MAX_SEGS 64

static bool
served(const struct trd_node *n)
{
	return __atomic_load_n(&n->served, __ATOMIC_ACQUIRE) != 0;
}

/* Copy @p len bytes into a chain of segments of at most @p seg bytes (0: as large as fit). */
static struct rte_mbuf *
frame_mbuf(struct trd_node *n, const uint8_t *frame, uint32_t len, uint32_t seg)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	uint32_t off = 0, room;

	room = rte_pktmbuf_data_room_size(n->pool) - RTE_PKTMBUF_HEADROOM;
	if (seg == 0 || seg > room)
		seg = room;
	if (len / seg >= TESTING_MAX_SEGS)
		seg = (len + TESTING_MAX_SEGS - 1) / TESTING_MAX_SEGS;
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(n->pool);
		uint32_t k = RTE_MIN(seg, len - off);

		if (m == NULL || k > room) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (k != 0)
			memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame + off, k);
		m->data_len = (uint16_t)k;
		m->pkt_len = k;
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += k;
		}
		last = m;
		off += k;
	} while (off < len);
	return head;
}

int
trd_node_rx_frame(struct trd_node *n, const void *frame, uint32_t len, uint32_t seg)
{
	struct rte_mbuf *m;

	if (n == NULL || (frame == NULL && len != 0) || len > UINT16_MAX)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */

	if (served(n))
		return -EBUSY;
	m = frame_mbuf(n, frame, len, seg);
	if (m == NULL)
		return -ENOBUFS;
	/* through the loopback's receive taps, as if its port had given it (a capture records it)
	 */
	if (trd_link_taps_rx(n->lo, &m, 1, 1) == 1)
		trd_rx_burst(n, n->lo, &m, 1);
	trd_node_poll(n);
	return 0;
}

int
trd_node_drain(struct trd_node *n)
{
	struct trd_msg *msgs[32];
	struct trd_event ev[32];
	int total = 0, k;

	if (n == NULL)
		return -EINVAL;
	if (served(n))
		return -EBUSY;
	for (unsigned int i = 0; i < n->n_rec; i++)
		while ((k = trd_rec_fifo_poll(n->rec[i], msgs, RTE_DIM(msgs))) > 0) {
			for (int j = 0; j < k; j++)
				trd_msg_free(msgs[j]);
			total += k;
		}
	/* directly from the ring: the queue's owner is whoever the test made it */
	for (unsigned int i = 0; i < n->n_eqs; i++) {
		struct trd_eq *q = n->eqs[i];

		/* (a handle's queue is its attaching layer's) */
		while ((k = q->att != NULL
				    ? n->att->eq_poll(q->att, ev, RTE_DIM(ev))
				    : (int)rte_ring_sc_dequeue_burst_elem(
					      q->ring, ev, sizeof(ev[0]), RTE_DIM(ev), NULL)) > 0)
			total += k;
	}
	return total;
}

int
trd_link_drain(struct trd_link *l)
{
	if (l == NULL || l->node != NULL)
		return -EINVAL;
	return trd_link_rx_discard(l);
}

int
trd_node_reset(struct trd_node *n)
{
	if (n == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */
	if (n->n_shares > 1)
		return -ENOTSUP; /* not written for shares yet */
	if (served(n) || n->n_gfifo != 0)
		return -EBUSY; /* (guests: not written for them) */
	/* packets not yet taken by a port, and what the loopback holds */
	for (unsigned int i = 0; i <= n->n_links; i++)
		trd_link_tx_discard(n->links[i]);
	trd_link_rx_discard(n->lo);
	/* descriptors not yet (fully) packetized: their packets were discarded above */
	for (unsigned int i = 0; i <= n->n_inj; i++) {
		struct trd_inj_fifo *f = n->inj[i];

		rte_ring_reset(f->ring);
		trd_fifo_src_done(f);
		f->busy = false;
		f->stage_i = f->stage_n = 0;
		f->held = 0; /* the reset took the open zero-copy dequeue with it */
		f->unsent = 0;
		f->peer = NULL;
	}
	trd_node_drain(n);
	/* partly reassembled messages */
	for (unsigned int i = 0; i < n->conf.n_reasm; i++) {
		rte_free(n->reasm[i].msg);
		n->reasm[i].msg = NULL;
	}
	rte_hash_reset(n->reasm_hash);
	/* engine collectives: posted, kept pieces, numbering */
	trd_comb_fini(n);
	/* reliability: sessions, packets kept for retransmission or held out of order */
	trd_rel_fini(n);
	n->n_active = 0;
	if (trd_rel_init(n) != 0)
		return -ENOMEM;
	if (n->mcache_n != 0) {
		rte_pktmbuf_free_bulk(n->mcache, n->mcache_n);
		n->mcache_n = 0;
	}
	return 0;
}

int
trd_node_trust_unsequenced(struct trd_node *n, int on)
{
	if (n == NULL)
		return -EINVAL;
	if (served(n))
		return -EBUSY;
	for (unsigned int k = 0; k < n->n_shares; k++)
		n->sh[k]->trust_unseq = on != 0;
	return 0;
}

int
trd_node_set_session_secret(struct trd_node *n, uint64_t k0, uint64_t k1)
{
	if (n == NULL)
		return -EINVAL;
	if (served(n))
		return -EBUSY;
	n->sess_key[0] = k0;
	n->sess_key[1] = k1;
	return 0;
}

int
trd_node_timer_peers(const struct trd_node *n)
{
	if (n == NULL)
		return -EINVAL;
	return (int)n->n_active;
}
