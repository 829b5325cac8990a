/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf --shares N: the 64 B put rate of two nodes split in N shares (lanes), first
 * with one lcore doing everything, then with one lcore per lane (the main one and a worker):
 * each lcore posts into the injection FIFO of its lane on node a and polls that lane's share
 * of both nodes (--inline posting). Lane k's puts go to their own counter at b, so each lcore
 * knows when its lane is done. Over a net_ring pair with one queue pair per lane.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"

#define SH_SIZE 64
#define SH_MAX  2

struct sh_run {
	struct trd_node *a, *b;
	uint64_t key, n_lane; /* puts per lane */
	uint16_t ctr[SH_MAX];
	const uint8_t *src;
	unsigned int n_sh;
	int rc[SH_MAX + 1];
};

/* Post and poll lanes @p lo .. @p hi - 1 until each lane's counter at b is zero. */
static int
sh_lanes(struct sh_run *r, unsigned int lo, unsigned int hi)
{
	uint64_t posted[SH_MAX] = {0}, hz = rte_get_timer_hz(), seen = 0, done = 0;
	uint64_t dl = rte_get_timer_cycles() + hz * 10;
	struct trd_desc d[32];

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
		/* a deadline without progress */
		if (sum != seen) {
			seen = sum;
			dl = rte_get_timer_cycles() + hz * 10;
		} else if (rte_get_timer_cycles() > dl) {
			return -ETIMEDOUT;
		}
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

/* One measured run on @p lcores (1 or 2): the rate in millions of puts per second. */
static int
sh_measure(struct sh_run *r, unsigned int lcores, unsigned int worker, double *mpps)
{
	uint64_t t0;

	for (unsigned int k = 0; k < r->n_sh; k++)
		if (trd_counter_set(r->b, r->ctr[k], (int64_t)(r->n_lane * SH_SIZE)) != 0)
			return -EINVAL;
	r->rc[0] = r->rc[1] = 0;
	t0 = rte_rdtsc();
	if (lcores == 1) {
		r->rc[0] = sh_lanes(r, 0, r->n_sh);
	} else {
		if (rte_eal_remote_launch(sh_worker, r, worker) != 0)
			return -EBUSY;
		r->rc[0] = sh_lanes(r, 0, 1);
		rte_eal_wait_lcore(worker);
	}
	*mpps = (double)(r->n_lane * r->n_sh) * (double)rte_get_tsc_hz() / 1e6 /
		(double)(rte_rdtsc() - t0);
	return r->rc[0] != 0 ? r->rc[0] : r->rc[1];
}

int
perf_shares(unsigned int n_sh, uint64_t iters)
{
	struct trd_node_conf tmpl = {.shares = n_sh};
	struct trd_net_conf nc = {.links = TRD_NET_ETHDEV_RING, .node = &tmpl};
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	struct sh_run r = {.n_sh = n_sh, .n_lane = iters / n_sh};
	struct trd_node_stats st0, st1;
	struct trd_mr *mr;
	struct trd_net *net;
	double one, two;
	uint8_t *buf;
	int rc;

	if (n_sh > SH_MAX || worker >= RTE_MAX_LCORE) {
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
	/* a short warm-up (sessions started), then 1 lcore, then one per lane */
	if (rc == 0) {
		uint64_t keep = r.n_lane;

		r.n_lane = RTE_MIN(keep, 10000);
		rc = sh_measure(&r, 1, worker, &one);
		r.n_lane = keep;
	}
	if (rc == 0)
		rc = sh_measure(&r, 1, worker, &one);
	if (rc == 0)
		rc = sh_measure(&r, n_sh, worker, &two);
	if (rc == 0 && n_sh > 1 && trd_node_share_stats_get(r.a, 0, &st0) == 0 &&
	    trd_node_share_stats_get(r.a, 1, &st1) == 0)
		printf("put_shares  %u B  2 nodes x %u shares: 1 lcore %.3f Mpps, %u lcores "
		       "%.3f Mpps (%.2f x); packets sent by share 0 %" PRIu64 ", share 1 %" PRIu64
		       "\n",
		       SH_SIZE, n_sh, one, n_sh, two, two / one, st0.stat[TRD_STAT_TX_PKTS],
		       st1.stat[TRD_STAT_TX_PKTS]);
	else if (rc == 0)
		printf("put_shares  %u B  2 nodes x 1 share: 1 lcore %.3f Mpps\n", SH_SIZE, one);
	else
		fprintf(stderr, "toroid-perf: --shares: %s\n", rte_strerror(-rc));
	trd_net_free(net);
	rte_free(buf);
	return rc;
}
