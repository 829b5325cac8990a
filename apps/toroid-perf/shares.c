/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf --shares N: the 64 B put rate of two nodes split in N shares (lanes), first
 * with one lcore doing everything, then with one lcore per lane (the main one and a worker):
 * each lcore posts into the injection FIFO of its lane on node a and polls that lane's share
 * of both nodes (--inline posting). Lane k's puts go to their own counter at b, so each lcore
 * knows when its lane is done. Over a net_ring pair with one queue pair per lane.
 * --baseline: raw DPDK on the same ports and queues first, on 1 lcore and then one per queue
 * (each allocates, fills, sends on queue k of a, receives on queue k of b and frees), so the
 * scaling of the engine stands beside the scaling of the ports on this machine.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <string.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"

#define SH_SIZE 64
#define SH_MAX  2
/* a run fails after 10 s without progress (perf_stalled()) */
#define SH_STALL_US 10000000

struct sh_run {
	struct trd_node *a, *b;
	uint64_t key, n_lane; /* puts per lane */
	uint16_t ctr[SH_MAX];
	const uint8_t *src;
	unsigned int n_sh;
	int rc[SH_MAX + 1];
	uint16_t pa, pb;    /* the ports of a and b (raw baseline) */
	uint16_t q[SH_MAX]; /* ... and lane k's queue on them (trd_link_queue_id()) */
};

/* Post and poll lanes @p lo .. @p hi - 1 until each lane's counter at b is zero. */
static int
sh_lanes(struct sh_run *r, unsigned int lo, unsigned int hi)
{
	uint64_t posted[SH_MAX] = {0}, done = 0;
	struct trd_desc d[32];
	struct perf_stall st;

	perf_stall_init(&st, SH_STALL_US);

	while (done != hi - lo) {
		uint64_t sum = 0;

		done = 0;
		for (unsigned int k = lo; k < hi; k++) {
			int64_t left = 1;

			if (posted[k] < r->n_lane) {
				unsigned int nb = (unsigned int)RTE_MIN(32, r->n_lane - posted[k]);

				for (unsigned int i = 0; i < nb; i++)
					trd_desc_put(&d[i], trd_node_coord(r->b), r->src, SH_SIZE,
						     r->key, (uint64_t)(k * 32 + i) * SH_SIZE, 0,
						     r->ctr[k]);
				if (trd_inject_bulk(trd_inj_fifo(r->a, k), d, nb) == 0)
					posted[k] += nb;
			}
			if (trd_node_poll_share(r->a, k) < 0 || trd_node_poll_share(r->b, k) < 0)
				return -EBUSY;
			if (trd_counter_read(r->b, r->ctr[k], &left) == 0 && left == 0)
				done++;
			sum += posted[k] + (uint64_t)left;
		}
		if (perf_stalled(&st, sum))
			return -ETIMEDOUT;
	}
	return 0;
}

static int
sh_worker(void *arg)
{
	struct sh_run *r = arg;

	r->rc[1] = sh_lanes(r, 1, r->n_sh);
	return 0;
}

/* Raw DPDK on queues @p lo .. @p hi - 1: 64-byte frames allocated, filled, sent on queue k of
 * a, received on queue k of b and freed, n_lane per queue (raw.c's stream, one per queue). */
static __rte_noinline int
sh_raw_queues(struct sh_run *r, unsigned int lo, unsigned int hi)
{
	struct rte_mempool *mp = trd_default_pool(0);
	uint64_t sent[SH_MAX] = {0}, got[SH_MAX] = {0};
	struct rte_mbuf *tx[32], *rx[32];
	unsigned int done = 0;
	struct perf_stall st;

	perf_stall_init(&st, SH_STALL_US);

	while (done != hi - lo) {
		uint64_t sum = 0;

		done = 0;
		for (unsigned int k = lo; k < hi; k++) {
			uint16_t q = r->q[k], nb;

			if (sent[k] < r->n_lane && rte_pktmbuf_alloc_bulk(mp, tx, 32) == 0) {
				for (unsigned int i = 0; i < 32; i++) {
					uint8_t *p = rte_pktmbuf_mtod(tx[i], uint8_t *);

					memset(p, 0xff, 12);
					p[12] = 0x88;
					p[13] = 0xB5;
					tx[i]->data_len = SH_SIZE;
					tx[i]->pkt_len = SH_SIZE;
				}
				nb = rte_eth_tx_burst(r->pa, q, tx, 32);
				if (nb < 32)
					rte_pktmbuf_free_bulk(&tx[nb], 32u - nb);
				sent[k] += nb;
			}
			nb = rte_eth_rx_burst(r->pb, q, rx, 32);
			if (nb != 0) {
				got[k] += nb;
				rte_pktmbuf_free_bulk(rx, nb);
			}
			if (got[k] >= r->n_lane)
				done++;
			sum += sent[k] + got[k];
		}
		if (perf_stalled(&st, sum))
			return -ETIMEDOUT;
	}
	return 0;
}

static int
sh_raw_worker(void *arg)
{
	struct sh_run *r = arg;

	r->rc[1] = sh_raw_queues(r, 1, r->n_sh);
	return 0;
}

/* One measured run of the engine (@p raw false) or of raw DPDK on the same queues, on
 * @p lcores (1 or 2): the rate in millions of puts (frames) per second. */
static int
sh_measure(struct sh_run *r, bool raw, unsigned int lcores, unsigned int worker, double *mpps)
{
	uint64_t t0;

	for (unsigned int k = 0; k < r->n_sh; k++)
		if (trd_counter_set(r->b, r->ctr[k], (int64_t)(r->n_lane * SH_SIZE)) != 0)
			return -EINVAL;
	r->rc[0] = r->rc[1] = 0;
	t0 = rte_rdtsc();
	if (lcores == 1) {
		r->rc[0] = raw ? sh_raw_queues(r, 0, r->n_sh) : sh_lanes(r, 0, r->n_sh);
	} else {
		if (rte_eal_remote_launch(raw ? sh_raw_worker : sh_worker, r, worker) != 0)
			return -EBUSY;
		r->rc[0] = raw ? sh_raw_queues(r, 0, 1) : sh_lanes(r, 0, 1);
		rte_eal_wait_lcore(worker);
	}
	*mpps = (double)(r->n_lane * r->n_sh) * (double)rte_get_tsc_hz() / 1e6 /
		(double)(rte_rdtsc() - t0);
	return r->rc[0] != 0 ? r->rc[0] : r->rc[1];
}

/* The text line: both rates, their ratio, raw's beside them (--baseline), packets per share */
static void
sh_text(const struct sh_run *r, double one, double two, double raw1, double raw2,
	const struct trd_node_stats *st)
{
	if (r->n_sh == 1) {
		printf("put_shares  %u B  2 nodes x 1 share: 1 lcore %.3f Mpps", SH_SIZE, one);
		if (raw1 > 0)
			printf("; raw 1 lcore %.3f Mpps", raw1);
		printf("\n");
		return;
	}
	printf("put_shares  %u B  2 nodes x %u shares: 1 lcore %.3f Mpps, %u lcores %.3f Mpps "
	       "(%.2f x)",
	       SH_SIZE, r->n_sh, one, r->n_sh, two, two / one);
	if (raw1 > 0)
		printf("; raw 1 lcore %.3f Mpps, %u lcores %.3f Mpps (%.2f x)", raw1, r->n_sh, raw2,
		       raw2 / raw1);
	printf("; packets sent by");
	for (unsigned int k = 0; k < r->n_sh; k++)
		printf("%s share %u %" PRIu64, k ? "," : "", k, st[k].stat[TRD_STAT_TX_PKTS]);
	printf("\n");
}

/* --json: one line per lcore count; the second has the ratio of the two (scale) */
static void
sh_json(const struct sh_run *r, double one, double two, double raw1, double raw2,
	const struct trd_node_stats *st)
{
	for (unsigned int l = 1; l <= r->n_sh; l++) {
		double v = l == 1 ? one : two, raw = l == 1 ? raw1 : raw2;

		if (l > 1 && r->n_sh == 1)
			break;
		printf("{\"test\":\"put_shares\",\"size\":%u,\"links\":\"net_ring\",\"shares\":%u,"
		       "\"lcores\":%u,\"msgs\":%" PRIu64 ",\"mpps\":%.4f",
		       SH_SIZE, r->n_sh, l, r->n_lane * r->n_sh, v);
		if (raw > 0)
			printf(",\"raw_mpps\":%.4f,\"ratio\":%.3f", raw, v / raw);
		if (l > 1) {
			printf(",\"scale\":%.3f", two / one);
			if (raw1 > 0)
				printf(",\"raw_scale\":%.3f", raw2 / raw1);
		}
		if (l == r->n_sh) {
			printf(",\"tx_pkts\":[");
			for (unsigned int k = 0; k < r->n_sh; k++)
				printf("%s%" PRIu64, k ? "," : "", st[k].stat[TRD_STAT_TX_PKTS]);
			printf("]");
		}
		printf("}\n");
	}
	fflush(stdout);
}

int
perf_shares(unsigned int n_sh, uint64_t iters)
{
	struct trd_node_conf tmpl = {.shares = n_sh};
	struct trd_net_conf nc = {.links = TRD_NET_ETHDEV_RING, .node = &tmpl};
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	struct sh_run r = {.n_sh = n_sh, .n_lane = iters / n_sh};
	struct trd_node_stats st[SH_MAX];
	double one = 0, two = 0, raw1 = 0, raw2 = 0;
	struct trd_mr *mr;
	struct trd_net *net;
	uint8_t *buf;
	int rc;

	if (n_sh > SH_MAX || (n_sh > 1 && worker >= RTE_MAX_LCORE)) {
		fprintf(stderr,
			"toroid-perf: --shares %u needs a worker lcore (-l 0-1) and at "
			"most %d shares\n",
			n_sh, SH_MAX);
		return -EINVAL;
	}
	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	buf = rte_zmalloc("perf", 1 << 20, 4096);
	if (net == NULL || buf == NULL)
		return -ENOMEM;
	r.a = trd_net_node(net, 0);
	r.b = trd_net_node(net, 1);
	r.src = buf;
	mr = trd_mr_register(r.b, buf, 1 << 20, TRD_ACCESS_ALL);
	rc = mr == NULL ? -ENOMEM : 0;
	r.key = mr != NULL ? trd_mr_key(mr) : 0;
	/* each lane's counter on a cache line of its own: 8 ids apart */
	for (unsigned int k = 0; k < 8 * (n_sh - 1) + 1 && rc == 0; k++) {
		uint16_t id;

		rc = trd_counter_alloc(r.b, &id);
		if (k % 8 == 0)
			r.ctr[k / 8] = id;
	}
	/* --baseline: raw DPDK on the same queues, 1 lcore then one per queue, right before */
	if (rc == 0 && perf_opt.baseline) {
		int pa = trd_link_port(trd_node_link(r.a, 0)),
		    pb = trd_link_port(trd_node_link(r.b, 0));

		r.pa = (uint16_t)pa;
		r.pb = (uint16_t)pb;
		/* the queues the engine's links use: the same on both ports */
		for (unsigned int k = 0; k < n_sh && pa >= 0 && pb >= 0; k++) {
			int q = trd_link_queue_id(trd_node_share_link(r.a, k, 0));

			if (q < 0)
				pa = -1;
			r.q[k] = (uint16_t)q;
		}
		rc = pa < 0 || pb < 0 ? -ENOTSUP : sh_measure(&r, true, 1, worker, &raw1);
		if (rc == 0 && n_sh > 1)
			rc = sh_measure(&r, true, n_sh, worker, &raw2);
	}
	/* a short warm-up (sessions started), then 1 lcore, then one per lane */
	if (rc == 0) {
		uint64_t keep = r.n_lane;

		r.n_lane = RTE_MIN(keep, 10000);
		rc = sh_measure(&r, false, 1, worker, &one);
		r.n_lane = keep;
	}
	if (rc == 0)
		rc = sh_measure(&r, false, 1, worker, &one);
	if (rc == 0 && n_sh > 1)
		rc = sh_measure(&r, false, n_sh, worker, &two);
	for (unsigned int k = 0; k < n_sh && rc == 0; k++)
		rc = trd_node_share_stats_get(r.a, k, &st[k]);
	if (rc != 0)
		fprintf(stderr, "toroid-perf: --shares: %s\n", rte_strerror(-rc));
	else if (perf_opt.json)
		sh_json(&r, one, two, raw1, raw2, st);
	else
		sh_text(&r, one, two, raw1, raw2, st);
	trd_net_free(net);
	rte_free(buf);
	return rc;
}
