/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf: the raw DPDK baselines: the same patterns with rte_eth_tx_burst/rx_burst on the
 * same ports. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <toroid/coll.h>
#include <toroid/msg.h>
#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#include "../common/app_common.h"
#include "../common/latency.h"
#include "inproc.h"

/* ---- raw DPDK baselines: the same pattern with rte_eth_tx_burst/rx_burst ---- */

struct raw_args {
	uint16_t pa, pb;
	uint32_t frame;
	uint64_t n;
	uint64_t cycles;
	int rc;
};

static void
raw_fill(struct rte_mbuf *m, uint32_t frame)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	memset(p, 0xff, 12);
	p[12] = 0x88;
	p[13] = 0xB5;
	m->data_len = (uint16_t)frame;
	m->pkt_len = frame;
}

/* The measured loops below are kept out of line: bench/ipm.py counts their instructions by
 * function name under callgrind. */

/* Stream: one lcore allocates, fills, sends on A, receives on B, frees (a loopback). */
static __rte_noinline int
raw_stream(void *arg)
{
	struct raw_args *ra = arg;
	struct rte_mempool *mp = trd_default_pool(0);
	struct rte_mbuf *tx[32], *rx[32];
	uint64_t sent = 0, got = 0, t0, dl = deadline_in(PERF_TIMEOUT_US);

	t0 = rte_rdtsc();
	while (got < ra->n && !expired(dl)) {
		if (sent < ra->n && rte_pktmbuf_alloc_bulk(mp, tx, 32) == 0) {
			uint16_t k;

			for (int i = 0; i < 32; i++)
				raw_fill(tx[i], ra->frame);
			k = rte_eth_tx_burst(ra->pa, 0, tx, 32);
			if (k < 32)
				rte_pktmbuf_free_bulk(&tx[k], 32u - k);
			sent += k;
		}
		uint16_t r = rte_eth_rx_burst(ra->pb, 0, rx, 32);

		if (r) {
			got += r;
			rte_pktmbuf_free_bulk(rx, r);
		}
	}
	ra->cycles = rte_rdtsc() - t0;
	ra->rc = got >= ra->n ? 0 : -ETIMEDOUT;
	return 0;
}

/* Ping-pong: a frame A -> B, then B -> A, timed per round trip. */
static __rte_noinline int
raw_pingpong(struct raw_args *ra, uint64_t *samples)
{
	struct rte_mempool *mp = trd_default_pool(0);
	struct rte_mbuf *m;

	for (uint64_t i = 0; i < ra->n; i++) {
		uint64_t t0 = rte_rdtsc(), dl = deadline_in(1000000);
		uint16_t ports[2][2] = {{ra->pa, ra->pb}, {ra->pb, ra->pa}};

		for (int leg = 0; leg < 2; leg++) {
			m = rte_pktmbuf_alloc(mp);
			if (m == NULL)
				return -ENOBUFS;
			raw_fill(m, ra->frame);
			while (rte_eth_tx_burst(ports[leg][0], 0, &m, 1) == 0)
				;
			while (rte_eth_rx_burst(ports[leg][1], 0, &m, 1) == 0)
				if (expired(dl))
					return -ETIMEDOUT;
			rte_pktmbuf_free(m);
		}
		samples[i] = rte_rdtsc() - t0;
	}
	return 0;
}

static int
raw_ports(uint16_t *pa, uint16_t *pb)
{
	int a = trd_link_port(trd_node_link(px.a, 0));
	int b = trd_link_port(trd_node_link(px.b, 0));

	if (a < 0 || b < 0)
		return -ENOTSUP;
	*pa = (uint16_t)a;
	*pb = (uint16_t)b;
	return 0;
}

void
baseline_rate(struct perf_result *r, uint32_t frame, uint64_t n)
{
	struct raw_args ra = {.frame = frame, .n = n};

	if (raw_ports(&ra.pa, &ra.pb) != 0)
		return;
	engine_stop();
	if (px.worker < RTE_MAX_LCORE) {
		rte_eal_remote_launch(raw_stream, &ra, px.worker);
		rte_eal_wait_lcore(px.worker);
	} else {
		raw_stream(&ra);
	}
	if (ra.rc == 0) {
		r->has_base = true;
		r->base = (double)n / tsc_us(ra.cycles);
		r->base_gbps = r->base * (frame + 4) * 8 / 1000;
	}
}

void
baseline_lat(struct perf_result *r, uint32_t frame, uint64_t n, double scale)
{
	struct raw_args ra = {.frame = frame, .n = n};
	uint64_t *s = malloc(n * sizeof(*s));
	struct perf_result tmp = {.test = "raw"};

	if (s == NULL || raw_ports(&ra.pa, &ra.pb) != 0) {
		free(s);
		return;
	}
	engine_stop();
	if (raw_pingpong(&ra, s) == 0) {
		const char *h = perf_opt.hgrm;

		perf_opt.hgrm = NULL;
		lat_stats(&tmp, s, n, scale);
		perf_opt.hgrm = h;
		r->has_base = true;
		r->base = tmp.p50;
	}
	free(s);
}
