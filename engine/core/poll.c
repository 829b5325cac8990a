/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poll loop: flushing links to their ports in order, serving injection FIFOs round robin,
 * receiving, reliability timers; and the lcores that run it for many nodes.
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

#include "core_pvt.h"

/* Hand what the link buffers to its port, in order, and settle the accounting. */
static unsigned int
link_flush(struct trd_node *n, struct trd_link *l)
{
	unsigned int total = 0;

	while (trd_link_pending(l)) {
		const struct trd_pend_info *pi;
		uint64_t bytes = 0;
		uint16_t want, sent;
		struct rte_mbuf **pkts = trd_link_tx_span(l, &pi, &want);

		sent = trd_link_tx(l, pkts, want);

		for (uint16_t i = 0; i < sent; i++) {
			if (pi[i].ctr != NULL)
				__atomic_fetch_sub(pi[i].ctr, (int64_t)pi[i].bytes,
						   __ATOMIC_RELEASE);
			if (pi[i].fifo != NULL) {
				pi[i].fifo->unsent--;
				pi[i].fifo->sent++;
			}
			bytes += pi[i].len;
		}
		trd_link_tx_done(l, sent, bytes);
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
		if (trd_link_pending(n->links[i]))
			link_flush(n, n->links[i]);
}

void
trd_node_flush(struct trd_node *n)
{
	flush_all(n);
}

/* Serve an injection FIFO if it has anything: what it moved. */
static inline unsigned int
inj_serve(struct trd_node *n, struct trd_inj_fifo *f)
{
	if (f->busy || f->stage_i < f->stage_n || !rte_ring_empty(f->ring))
		return trd_inj_fifo_service(n, f, n->conf.burst);
	return 0;
}

/* One round on one share (a node of one share is its share 0). */
static int
share_poll(struct trd_node *n)
{
	struct rte_mbuf *pkts[2 * TRD_RX_BURST];
	unsigned int nf, moved = 0;
	bool got = false;
	int served;

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

	/* No flush before the FIFOs: what a link still holds (its port was full at the end of
	 * the last round) goes first in the flush after them, in order, and the FIFOs see the
	 * room it leaves. (A flush here checked every link in every round, idle or not.)
	 * Round robin: from rr to the end, then from the start to rr (rr moves one on per
	 * poll; an index taken modulo nf cost a division per FIFO, a tenth of an idle poll).
	 * The flush after them only when they moved something: a link's leftovers go first in
	 * the flush at the end of the round all the same, in the same order. */
	nf = n->n_inj + 1;
	for (unsigned int i = n->rr; i < nf; i++)
		moved += inj_serve(n, n->inj[i]);
	for (unsigned int i = 0; i < n->rr; i++)
		moved += inj_serve(n, n->inj[i]);
	n->rr = n->rr + 1 == nf ? 0 : n->rr + 1;
	/* then the guests' FIFOs, in a round robin of their own (guest.c) */
	if (unlikely(__atomic_load_n(&n->n_gfifo, __ATOMIC_RELAXED) != 0))
		moved += trd_guest_serve(n);
	if (moved != 0)
		flush_all(n);

	for (unsigned int i = 0; i <= n->n_links; i++) {
		struct trd_link *l = n->links[i];
		uint16_t nb = trd_link_rx(l, pkts, TRD_RX_BURST, RTE_DIM(pkts));

		if (nb != 0) {
			trd_rx_burst(n, l, pkts, nb);
			moved += nb;
			got = true;
		}
	}
	/* A remote get received now (a reflection's completion among them) waits in the engine
	 * FIFO: answered in this round, by the flush below, not one poll round later. */
	if (got)
		moved += inj_serve(n, n->inj[n->n_inj]);
	if (unlikely(n->comb != NULL))
		trd_comb_poll(n);
	/* failure outcomes kept for want of room (share 0's; n_later is share 0's count) */
	if (unlikely(n->n_later != 0))
		trd_cpl_later(n);
	/* The reliability timers go by the clock, not by the poll: when the earliest deadline of
	 * an active peer comes (trd_rel_timers() works it out; at most every timer_gap, an
	 * eighth of the ack delay), or in this poll when something is due at once. A round
	 * that moves a lone message, and the idle rounds while its answer is awaited, pay for
	 * them only when a deadline (its ack delay, its tail loss probe) passes. */
	if (n->n_active != 0 && n->vclock >= n->timers_next)
		trd_rel_timers(n);
	flush_all(n);

	__atomic_store_n(&n->poll_gen, n->poll_gen + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&n->in_poll, 0, __ATOMIC_RELEASE);
	return (int)moved;
}

int
trd_node_poll(struct trd_node *n)
{
	int moved = 0;

	if (unlikely(n == NULL))
		return -EINVAL;
	if (unlikely(n->att != NULL))
		return 0; /* an attached process's: toroid-node serves it */
	if (likely(n->n_shares <= 1))
		return share_poll(n);
	for (unsigned int k = 0; k < n->n_shares; k++) {
		int rc = share_poll(n->sh[k]);

		if (rc < 0)
			return rc;
		moved += rc;
	}
	return moved;
}

int
trd_node_poll_share(struct trd_node *n, unsigned int share)
{
	if (n == NULL || share >= n->n_shares)
		return -EINVAL;
	return share_poll(n->sh[share]);
}

/* ---- lcores ---- */

#define TRD_LCORE_MAX_NODES 512

struct lcore_serv {
	struct trd_node *nodes[TRD_LCORE_MAX_NODES]; /* shares */
	unsigned int n;
	int stop; /* atomic */
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
			int rc = share_poll(s->nodes[i]);

			if (rc > 0)
				moved += (unsigned int)rc;
		}
		if (moved == 0)
			rte_pause();
	}
	return 0;
}

int
trd_lcore_launch_shares(unsigned int lcore, struct trd_node *const nodes[],
			const unsigned int shares[], unsigned int n)
{
	struct lcore_serv *s;
	unsigned int i;

	if (lcore >= RTE_MAX_LCORE || nodes == NULL || n == 0 || n > TRD_LCORE_MAX_NODES ||
	    !rte_lcore_is_enabled(lcore) || lcore == rte_get_main_lcore())
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (nodes[i] == NULL || nodes[i]->att != NULL ||
		    (shares != NULL && shares[i] >= nodes[i]->n_shares))
			return -EINVAL;
	s = &serv[lcore];
	if (s->running || rte_eal_get_lcore_state(lcore) != WAIT)
		return -EBUSY;
	for (i = 0; i < n; i++) {
		struct trd_node *sh = nodes[i]->sh[shares != NULL ? shares[i] : 0];
		int expect = 0;

		if (!__atomic_compare_exchange_n(&sh->served, &expect, (int)lcore + 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			while (i-- > 0)
				__atomic_store_n(&s->nodes[i]->served, 0, __ATOMIC_RELEASE);
			return -EBUSY;
		}
		s->nodes[i] = sh;
	}
	s->n = n;
	__atomic_store_n(&s->stop, 0, __ATOMIC_RELAXED);
	s->running = 1;
	if (rte_eal_remote_launch(serve_loop, s, lcore) != 0) {
		for (i = 0; i < n; i++)
			__atomic_store_n(&s->nodes[i]->served, 0, __ATOMIC_RELEASE);
		s->running = 0;
		return -EBUSY;
	}
	return 0;
}

int
trd_lcore_launch(unsigned int lcore, struct trd_node *const nodes[], unsigned int n)
{
	struct trd_node *lst[TRD_LCORE_MAX_NODES];
	unsigned int sh[TRD_LCORE_MAX_NODES], k = 0;

	if (nodes == NULL || n == 0 || n > TRD_LCORE_MAX_NODES)
		return -EINVAL;
	/* every share of each node */
	for (unsigned int i = 0; i < n; i++) {
		if (nodes[i] == NULL)
			return -EINVAL;
		for (unsigned int j = 0; j < nodes[i]->n_shares; j++) {
			if (k == TRD_LCORE_MAX_NODES)
				return -EINVAL;
			lst[k] = nodes[i];
			sh[k++] = j;
		}
	}
	return trd_lcore_launch_shares(lcore, lst, sh, k);
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
