/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability, end to end between node pairs (docs/reliability.md).
 *
 * Every packet a node originates towards another node carries a sequence number of that
 * pair's session (epoch, seq). The sender keeps a reference to each packet until the peer's
 * cumulative ack passes it, retransmits on timeout with exponential back-off, and earlier when
 * a selective ack shows a hole. The receiver delivers in sequence order, holds packets that
 * arrive early (bounded window), drops duplicates and acks: on the next packet going back, or
 * alone after ack_delay, or at once when something was out of order. A peer that owes an ack
 * and says nothing for dead_ms is declared down: its outstanding operations fail, new ones
 * fail fast, and it is probed until it speaks again. Forwarding nodes take no part.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "dma_pvt.h"

static inline bool
seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

int
trd_rel_init(struct trd_node *n)
{
	const struct trd_node_conf *c = &n->conf;
	uint64_t hz = rte_get_tsc_hz();

	n->reliable = !c->unreliable;
	n->rel_w = c->rel_window;
	n->rto0 = hz / 1000000 * c->rto_us;
	n->rto_max = hz / 10; /* 100 ms */
	if (n->rto_max < n->rto0)
		n->rto_max = n->rto0;
	n->ack_delay = hz / 1000000 * c->ack_delay_us;
	n->dead = hz / 1000 * c->dead_ms;
	n->vstep = hz / 1000000 * TRD_VCLOCK_STEP_US;
	n->last_tsc = rte_rdtsc();
	n->vclock = 1;
	do
		n->epoch_seed = (uint16_t)rte_rand();
	while (n->epoch_seed == 0);
	n->peers = rte_zmalloc("trd_peers", sizeof(*n->peers) * n->n_nodes, 0);
	n->active = rte_zmalloc("trd_active", sizeof(*n->active) * n->n_nodes, 0);
	return n->peers != NULL && n->active != NULL ? 0 : -ENOMEM;
}

static inline uint64_t
rto_of(const struct trd_node *n, const struct trd_peer *pe)
{
	uint64_t rto = pe->srtt == 0 ? n->rto0 : pe->srtt + 4 * pe->rttvar;

	rto = RTE_MAX(rto, n->rto0) << RTE_MIN(pe->backoff, 16u);
	return RTE_MIN(rto, n->rto_max);
}

static void
peer_release_tx(struct trd_peer *pe, uint32_t mask)
{
	for (uint32_t s = pe->snd_una; s != pe->snd_nxt; s++) {
		rte_pktmbuf_free(pe->txb[s & mask]);
		pe->txb[s & mask] = NULL;
	}
	pe->snd_una = pe->snd_nxt;
}

static void
peer_release_rx(struct trd_peer *pe, uint32_t w)
{
	for (uint32_t i = 0; i < w && pe->n_held != 0; i++)
		if (pe->rxb[i] != NULL) {
			rte_pktmbuf_free(pe->rxb[i]);
			pe->rxb[i] = NULL;
			pe->n_held--;
		}
}

void
trd_rel_fini(struct trd_node *n)
{
	if (n->peers == NULL)
		return;
	for (uint32_t r = 0; r < n->n_nodes; r++) {
		struct trd_peer *pe = n->peers[r];

		if (pe == NULL)
			continue;
		peer_release_tx(pe, n->rel_w - 1);
		peer_release_rx(pe, n->rel_w);
		rte_free(pe);
	}
	rte_free(n->peers);
	rte_free(n->active);
}

struct trd_peer *
trd_rel_peer(struct trd_node *n, uint32_t rank)
{
	struct trd_peer *pe = n->peers[rank];
	size_t w = n->rel_w;
	uint8_t *mem;

	if (likely(pe != NULL))
		return pe;
	/* one allocation: the state and its four windows */
	mem = rte_zmalloc("trd_peer",
			  sizeof(*pe) + w * (2 * sizeof(struct rte_mbuf *) + sizeof(uint64_t) + 1),
			  RTE_CACHE_LINE_SIZE);
	if (mem == NULL)
		return NULL;
	pe = (struct trd_peer *)mem;
	pe->txb = (struct rte_mbuf **)(pe + 1);
	pe->rxb = pe->txb + w;
	pe->txt = (uint64_t *)(pe->rxb + w);
	pe->sacked = (uint8_t *)(pe->txt + w);
	pe->rank = rank;
	pe->tx_epoch = (uint16_t)(n->epoch_seed + rank);
	if (pe->tx_epoch == 0)
		pe->tx_epoch = 1;
	pe->snd_nxt = pe->snd_una = 1;
	pe->rto = n->rto0;
	pe->ack_synced = true;
	n->peers[rank] = pe;
	return pe;
}

static void
peer_activate(struct trd_node *n, struct trd_peer *pe)
{
	if (!pe->active) {
		pe->active = true;
		n->active[n->n_active++] = pe->rank;
	}
}

void
trd_rel_hold(struct trd_node *n, struct trd_peer *pe, struct trd_hdr *h, struct rte_mbuf *m)
{
	uint32_t seq = pe->snd_nxt++, i = seq & (n->rel_w - 1);
	uint64_t now = n->vclock;

	h->epoch = rte_cpu_to_be_16(pe->tx_epoch);
	h->seq = rte_cpu_to_be_32(seq);
	if (pe->rx_valid) {
		/* the ack rides along */
		h->ack = rte_cpu_to_be_32(pe->rcv_nxt);
		pe->ack_pending = 0;
	}
	/* keep a reference for retransmission; every segment, or a zero-copy one would go */
	rte_pktmbuf_refcnt_update(m, 1);
	pe->txb[i] = m;
	pe->txt[i] = now;
	pe->sacked[i] = 0;
	if (pe->snd_una + 1 == pe->snd_nxt)
		pe->last_heard = now; /* waiting starts now */
	peer_activate(n, pe);
}

/* Fail every completion still waiting on @p rank. */
static void
fail_pending(struct trd_node *n, uint32_t rank)
{
	for (uint32_t id = 1; id <= TRD_N_CPL; id++) {
		struct trd_cpl *c = &n->cpl[id - 1];

		if (c->peer != rank || __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 0)
			continue;
		trd_cpl_fail(n, id, TRD_DROP_PEER_DOWN);
	}
}

/* Start a new session towards the peer: what was in flight is lost to it. */
static void
peer_reset_tx(struct trd_node *n, struct trd_peer *pe)
{
	peer_release_tx(pe, n->rel_w - 1);
	pe->tx_epoch++;
	if (pe->tx_epoch == 0)
		pe->tx_epoch = 1;
	pe->snd_nxt = pe->snd_una = 1;
	pe->backoff = 0;
	pe->rto = rto_of(n, pe);
	pe->ack_synced = false;
	fail_pending(n, pe->rank);
}

static void
peer_down(struct trd_node *n, struct trd_peer *pe)
{
	pe->down = true;
	pe->last_probe = n->vclock;
	n->stat[TRD_STAT_PEERS_DOWN]++;
	peer_reset_tx(n, pe);
}

static void
peer_heard(struct trd_node *n, struct trd_peer *pe, uint64_t now)
{
	pe->last_heard = now;
	if (unlikely(pe->down)) {
		pe->down = false;
		n->stat[TRD_STAT_PEERS_UP]++;
	}
}

int
trd_node_peer_up(const struct trd_node *n, struct trd_coord c)
{
	int r;

	if (n == NULL)
		return -EINVAL;
	r = trd_rank_of(n, c);
	if (r < 0)
		return -EINVAL;
	return n->peers == NULL || n->peers[r] == NULL || !n->peers[r]->down;
}

/* Send an ack alone: cumulative, with the selective bitmap of what we hold ahead of it. */
static void
send_ack(struct trd_node *n, struct trd_peer *pe, bool probe)
{
	uint8_t sack[TRD_SACK_BYTES];
	uint8_t dst[3];
	struct trd_coord c;
	uint16_t len = 0;
	int rc;

	trd_torus_coord(&n->torus, pe->rank, &c);
	dst[0] = c.x;
	dst[1] = c.y;
	dst[2] = c.z;
	if (pe->rx_valid && pe->n_held != 0) {
		memset(sack, 0, sizeof(sack));
		for (uint32_t k = 0; k < TRD_SACK_BYTES * 8 && k + 1 < n->rel_w; k++)
			if (pe->rxb[(pe->rcv_nxt + 1 + k) & (n->rel_w - 1)] != NULL) {
				sack[k / 8] |= (uint8_t)(1u << (k % 8));
				len = TRD_SACK_BYTES;
			}
	}
	rc = trd_ctl_send_ack(n, dst, pe->rx_valid ? pe->rcv_nxt : 0, pe->rx_valid ? pe->rx_epoch : 0,
			      probe, len ? sack : NULL, len);
	if (rc == 0) {
		pe->ack_pending = 0;
		n->stat[TRD_STAT_TX_ACKS]++;
	}
}

static void
retransmit(struct trd_node *n, struct trd_peer *pe, uint32_t seq, uint64_t now)
{
	uint32_t i = seq & (n->rel_w - 1);
	struct trd_link *l = n->routes[pe->rank].link;
	struct rte_mbuf *m = pe->txb[i];

	if (m == NULL || l == NULL || trd_link_room(l) == 0)
		return;
	/* the same bytes again: nobody may change a packet with two owners */
	rte_pktmbuf_refcnt_update(m, 1);
	trd_link_queue(l, m, NULL, NULL, 0);
	pe->txt[i] = now;
	pe->sacked[i] |= 2;
	n->stat[TRD_STAT_RETRANS]++;
}

/* Jacobson/Karels from one round trip, in cycles */
static void
rtt_sample(struct trd_peer *pe, uint64_t rtt)
{
	if (pe->srtt == 0) {
		pe->srtt = rtt;
		pe->rttvar = rtt / 2;
	} else {
		uint64_t err = rtt > pe->srtt ? rtt - pe->srtt : pe->srtt - rtt;

		pe->rttvar = (3 * pe->rttvar + err) / 4;
		pe->srtt = (7 * pe->srtt + rtt) / 8;
	}
}

/* The peer's cumulative ack (next seq it expects) and selective bitmap. */
static void
on_ack(struct trd_node *n, struct trd_peer *pe, uint32_t ack, const uint8_t *sack, uint64_t now)
{
	uint32_t mask = n->rel_w - 1;

	if (seq_lt(pe->snd_una, ack) && !seq_lt(pe->snd_nxt, ack)) {
		uint32_t last = (ack - 1) & mask;
		uint8_t seen = pe->sacked[last];

		while (pe->snd_una != ack) {
			uint32_t i = pe->snd_una & mask;

			seen |= pe->sacked[i] & 2;
			rte_pktmbuf_free(pe->txb[i]);
			pe->txb[i] = NULL;
			pe->snd_una++;
		}
		/* a round trip only from an ack that no repair made: when a resent packet fills
		 * a hole, the ack also covers packets the peer held since long before (Karn) */
		if (seen == 0)
			rtt_sample(pe, now - pe->txt[last]);
		pe->backoff = 0; /* progress: back-off ends */
		pe->rto = rto_of(n, pe);
		pe->last_heard = now;
	}
	if (sack != NULL) {
		uint32_t top = 0;

		for (uint32_t k = 0; k < TRD_SACK_BYTES * 8; k++) {
			uint32_t s = ack + 1 + k;

			if (!seq_lt(s, pe->snd_nxt))
				break;
			if (sack[k / 8] & (1u << (k % 8))) {
				pe->sacked[s & mask] |= 1;
				top = s;
			}
		}
		/* holes below the highest selectively acked packet are lost: resend them now,
		 * unless they were (re)sent less than a round trip ago */
		uint64_t fresh = pe->srtt != 0 ? RTE_MAX(pe->srtt, 2 * n->ack_delay) : n->rto0 / 4;

		for (uint32_t s = pe->snd_una; top != 0 && seq_lt(s, top); s++)
			if (!(pe->sacked[s & mask] & 1) && now - pe->txt[s & mask] > fresh)
				retransmit(n, pe, s, now);
	}
}

void
trd_rel_ack_in(struct trd_node *n, const struct trd_pkt *p, const uint8_t *sack)
{
	struct trd_coord c = {p->src[0], p->src[1], p->src[2]};
	int rank = trd_rank_of(n, c);
	struct trd_peer *pe;
	uint64_t now = n->vclock;

	if (rank < 0 || (pe = trd_rel_peer(n, (uint32_t)rank)) == NULL)
		return;
	n->stat[TRD_STAT_RX_ACKS]++;
	peer_heard(n, pe, now);
	if (p->ack != 0 && (uint16_t)p->offset == pe->tx_epoch) {
		pe->ack_synced = true; /* acks riding on data are about this session again */
		on_ack(n, pe, p->ack, sack, now);
	} else if (pe->snd_una != pe->snd_nxt && p->offset == 0 && seq_lt(1, pe->snd_una)) {
		/* the peer acknowledged this session before and now knows none: it restarted.
		 * Start a new one. (Before our first packet arrives it knows none either: that is
		 * only a loss, repaired by retransmission. An ack about an older session of ours
		 * is merely late.) */
		peer_reset_tx(n, pe);
	}
	if (p->flags & TRD_HF_PROBE)
		send_ack(n, pe, false);
}

int
trd_rel_rx(struct trd_node *n, struct trd_link *l, struct rte_mbuf *m, const struct trd_pkt *p,
	   int *keep)
{
	struct trd_coord c = {p->src[0], p->src[1], p->src[2]};
	int rank = trd_rank_of(n, c);
	uint32_t mask = n->rel_w - 1;
	struct trd_peer *pe;
	uint64_t now = n->vclock;

	pe = trd_rel_peer(n, (uint32_t)rank);
	if (pe == NULL)
		return TRD_DROP_NO_MEMORY;
	peer_heard(n, pe, now);
	if (p->ack != 0 && pe->ack_synced)
		on_ack(n, pe, p->ack, NULL, now);
	if (!pe->rx_valid || p->epoch != pe->rx_epoch) {
		/* a session starts at 1; anything else is from a session we lost */
		if (p->seq != 1) {
			peer_activate(n, pe);
			pe->ack_pending = 1;
			pe->ack_due = now; /* tell it at once */
			return TRD_DROP_BAD_SESSION;
		}
		peer_release_rx(pe, n->rel_w);
		trd_reasm_purge(n, p->src); /* pieces of the old session never complete */
		pe->rx_epoch = p->epoch;
		pe->rx_valid = true;
		pe->rcv_nxt = 1;
	}
	peer_activate(n, pe);
	if (p->seq != pe->rcv_nxt) {
		if (seq_lt(p->seq, pe->rcv_nxt)) {
			pe->ack_pending++;
			pe->ack_due = now; /* the sender missed our ack */
			return TRD_DROP_DUPLICATE;
		}
		if (p->seq - pe->rcv_nxt >= n->rel_w)
			return TRD_DROP_WINDOW;
		if (pe->rxb[p->seq & mask] != NULL)
			return TRD_DROP_DUPLICATE;
		/* early: hold it, and say so at once so the hole is filled */
		pe->rxb[p->seq & mask] = m;
		pe->n_held++;
		*keep = 1;
		n->stat[TRD_STAT_REORDERED]++;
		pe->ack_pending++;
		pe->ack_due = now;
		return 0;
	}
	if (pe->rxb[p->seq & mask] != NULL) {
		/* an earlier copy of this one, held and refused for lack of room: this one wins */
		rte_pktmbuf_free(pe->rxb[p->seq & mask]);
		pe->rxb[p->seq & mask] = NULL;
		pe->n_held--;
	}
	/* in order: deliver it, then whatever it unblocks; a packet refused for lack of room
	 * is not received: it will come again, and what follows waits for it */
	{
		int cause = trd_rx_deliver(n, l, m, p, keep);

		if (cause != 0) {
			trd_drop(n, (unsigned int)cause);
			if (trd_drop_transient(cause))
				return -1;
		}
	}
	pe->rcv_nxt++;
	while (pe->n_held != 0 && pe->rxb[pe->rcv_nxt & mask] != NULL) {
		struct rte_mbuf *h = pe->rxb[pe->rcv_nxt & mask];
		int k = 0, cause;

		cause = trd_rx_redeliver(n, l, h, &k);
		if (cause != 0) {
			trd_drop(n, (unsigned int)cause);
			if (trd_drop_transient(cause))
				break; /* stays held; tried again when its turn comes back */
		}
		pe->rxb[pe->rcv_nxt & mask] = NULL;
		pe->n_held--;
		pe->rcv_nxt++;
		if (!k)
			rte_pktmbuf_free(h);
	}
	if (pe->ack_pending++ == 0)
		pe->ack_due = now + n->ack_delay;
	if (pe->ack_pending >= 32)
		pe->ack_due = now;
	return -1; /* handled; drops already counted */
}

void
trd_rel_timers(struct trd_node *n)
{
	uint64_t now = n->vclock;
	uint32_t mask = n->rel_w - 1;

	for (uint32_t k = 0; k < n->n_active;) {
		struct trd_peer *pe = n->peers[n->active[k]];
		bool waiting = pe->snd_una != pe->snd_nxt;

		if (pe->ack_pending != 0 && now >= pe->ack_due)
			send_ack(n, pe, false);
		if (waiting && now - pe->last_heard > n->dead) {
			peer_down(n, pe);
			waiting = false;
		}
		if (waiting) {
			uint32_t i = pe->snd_una & mask;
			uint32_t last = (pe->snd_nxt - 1) & mask;
			/* before any round trip was measured, half the least timeout */
			uint64_t tlp = pe->srtt == 0 ? n->rto0 / 2
						     : RTE_MAX(2 * pe->srtt, 4 * n->ack_delay);

			/* tail loss probe: nothing more is coming to show a hole, so send the last
			 * packet again after two round trips instead of waiting a whole timeout;
			 * its arrival (or the selective ack it causes) repairs the tail */
			if (pe->tlp_nxt != pe->snd_nxt && now - pe->txt[last] > tlp &&
			    !(pe->sacked[last] & 1)) {
				pe->tlp_nxt = pe->snd_nxt;
				retransmit(n, pe, pe->snd_nxt - 1, now);
			} else if (now - pe->txt[i] > pe->rto) {
				/* timeout: resend the oldest (selective acks bring the other holes
				 * back), and back off */
				n->stat[TRD_STAT_RTO_EVENTS]++;
				retransmit(n, pe, pe->snd_una, now);
				pe->backoff++;
				pe->rto = rto_of(n, pe);
			}
		}
		if (pe->down && now - pe->last_probe > n->dead / 4) {
			pe->last_probe = now;
			send_ack(n, pe, true);
		}
		if (!waiting && pe->ack_pending == 0 && !pe->down) {
			pe->active = false;
			n->active[k] = n->active[--n->n_active];
			continue;
		}
		k++;
	}
}
