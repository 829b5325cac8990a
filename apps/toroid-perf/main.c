/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf: OSU/ucx_perftest-style measurements of the engine between two nodes, with the
 * raw DPDK figure for the same pattern on the same ports measured right before (--baseline).
 *
 *   toroid-perf [EAL options] -- -t TEST [-s SIZES] [-n ITERS] [-w WINDOW] [--baseline] [--json]
 *
 * The two nodes (0,0,0) and (1,0,0) of a 2x1x1 torus live in this process, cabled by a
 * net_ring ethdev pair (default) or a ring link. One worker lcore serves both nodes (the DMA
 * engine) and the main lcore is the application; with --inline the main lcore also polls.
 */
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
#include "perf_pvt.h"

/* A wait fails after this long without progress (--timeout); a run may last any time. */
#define PERF_TIMEOUT_US perf_opt.timeout_us

struct perf_opts perf_opt = {
	.torus = {2, 1, 1},
	.iters = 0,
	.window = 32,
	.links = TRD_NET_ETHDEV_RING,
	.mode = TRD_CPL_LOCAL,
	.timeout_us = 30000000,
};

volatile sig_atomic_t perf_stop;

struct perf_ctx {
	struct trd_net *net;
	struct trd_node *a, *b;
	struct trd_coord ca, cb;
	uint8_t *abuf, *bbuf;   /* source/target memory on each side */
	size_t buflen;
	struct trd_mr *amr, *bmr;
	struct trd_mr *adb;     /* doorbell page of a */
	uint64_t *adb_page;
	uint16_t actr, bctr;
	unsigned int worker;    /* engine lcore or RTE_MAX_LCORE */
	unsigned int workers[2]; /* --cores: the engine lcores (workers[0] == worker) */
	unsigned int n_workers;
	bool launched;
};

static struct perf_ctx px;

/* Latency loops: iterations completed in the current call (an interrupted run reports them). */
static uint64_t lat_done;


/* ---- helpers ---- */

static double
tsc_us(uint64_t cycles)
{
	return (double)cycles * 1e6 / (double)rte_get_tsc_hz();
}

void
lat_stats(struct perf_result *r, uint64_t *s, uint64_t n, double scale)
{
	struct app_lat l;

	/* the one summary of every tool (apps/common/latency.h): nearest-rank percentiles */
	app_lat_summary(s, n, tsc_us(1) * scale, &l);
	r->kind = K_LAT;
	r->n = n;
	r->min = l.min;
	r->max = l.max;
	r->avg = l.avg;
	r->p50 = l.p50;
	r->p99 = l.p99;
	r->p999 = l.p999;
	if (perf_opt.hgrm != NULL) {
		/* HdrHistogram-style percentile distribution, in microseconds */
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s-%s-%u.hgrm", perf_opt.hgrm, r->test, r->size);
		f = fopen(path, "w");
		if (f != NULL) {
			fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
				"1/(1-Percentile)");
			/* HdrHistogram's layout: 4 lines per halving of the distance to 100% (0,
			 * 0.16, 0.29, 0.40, 0.5, ...), until one sample is left, then the maximum.
			 * A bounded count: the loop ends whatever the floating point does. */
			for (unsigned int k = 0; k < 4 * 64; k++) {
				double q = 1.0 - pow(0.5, k / 4.0);
				uint64_t i = (uint64_t)(q * (double)(n - 1));

				if ((1.0 - q) * (double)n < 1.0)
					break;
				fprintf(f, "%12.3f %14.12f %10" PRIu64 " %14.2f\n",
					tsc_us(s[i]) * scale, q, i + 1, 1.0 / (1.0 - q));
			}
			fprintf(f, "%12.3f %14.12f %10" PRIu64 " %14s\n", tsc_us(s[n - 1]) * scale, 1.0,
				n, "inf");
			fclose(f);
		}
	}
}

static bool
expired(uint64_t deadline)
{
	return perf_stop || rte_get_timer_cycles() > deadline;
}

static uint64_t
deadline_in(uint64_t us)
{
	return rte_get_timer_cycles() + us * rte_get_timer_hz() / 1000000;
}

static void
progress(void)
{
	if (!px.launched)
		trd_net_poll(px.net);
}

static int
wait_counter(struct trd_node *n, uint16_t c)
{
	int rc = trd_counter_wait(n, c, PERF_TIMEOUT_US);

	if (rc != 0)
		fprintf(stderr, "toroid-perf: counter wait: %s\n", strerror(-rc));
	return rc;
}

static void
engine_start(void)
{
	if (!px.launched && px.worker < RTE_MAX_LCORE && !perf_opt.inline_poll) {
		if (trd_net_launch(px.net, px.workers, px.n_workers) == 0)
			px.launched = true;
	}
}

static void
engine_stop(void)
{
	if (px.launched) {
		trd_net_stop(px.net);
		px.launched = false;
	}
}

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

static void
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

static void
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

/* ---- engine tests ---- */

void
rate_result(struct perf_result *r, uint64_t msgs, uint64_t pkts, uint32_t frame, uint64_t cyc)
{
	double us = tsc_us(cyc);

	r->kind = K_RATE;
	r->n = msgs;
	r->seconds = us / 1e6;
	r->mpps = (double)msgs / us;
	r->mbps = (double)msgs * r->size / us;
	r->gbps_l2 = (double)pkts * (frame + 4) * 8 / us / 1000;
	r->gbps_l1 = (double)pkts * (frame + PERF_L1_OVERHEAD) * 8 / us / 1000;
}

double
perf_rate_mps(uint32_t frame, uint64_t pkts)
{
	if (perf_opt.rate <= 0)
		return 0;
	return perf_opt.rate_bits ? perf_opt.rate / ((double)(frame + 4) * 8 * (double)pkts)
				  : perf_opt.rate;
}

void
perf_rate_fill(struct perf_result *r, uint32_t frame, uint64_t pkts)
{
	if (perf_opt.rate <= 0 || r->seconds <= 0)
		return;
	r->has_rate = true;
	r->rate_asked = perf_opt.rate;
	r->rate_achieved = (double)r->n / r->seconds *
			   (perf_opt.rate_bits ? (double)(frame + 4) * 8 * (double)pkts : 1);
}

/* Messages of a put stream b has received so far (its counter counts down n * size bytes). */
static uint64_t
stream_got_puts(uint64_t n, uint32_t size, uint64_t posted)
{
	int64_t left;

	if (size == 0 || trd_counter_read(px.b, px.bctr, &left) != 0 || left < 0)
		return posted; /* a zero-byte put moves no counter: what was posted */
	return n - RTE_MIN(n, ((uint64_t)left + size - 1) / size);
}

/* Puts (or FIFO sends) from a to b, posted in bursts as fast as the FIFO takes them. A run
 * may last as long as it makes progress: it fails after PERF_TIMEOUT_US without any. On
 * SIGINT/SIGTERM (perf_stop) the rate of what was delivered so far is the result, marked
 * interrupted. */
static __rte_noinline int
stream(struct perf_result *r, bool fifo, uint64_t n)
{
	struct trd_desc d[32];
	struct trd_fifo *f = trd_inj_fifo(px.a, 0);
	uint32_t size = r->size;
	uint64_t posted = 0, t0, dl = deadline_in(PERF_TIMEOUT_US), got = 0, seen = 0;
	unsigned int maxpay = trd_link_max_payload(trd_node_link(px.a, 0));
	uint64_t pkts_per = size == 0 ? 1 : (size + maxpay - 1) / maxpay;
	uint32_t frame = TRD_FRAME_HLEN + RTE_MIN(size, maxpay);

	for (int i = 0; i < 32; i++) {
		if (fifo)
			trd_desc_fifo(&d[i], px.cb, 0, px.abuf, size, 0, 0);
		else
			trd_desc_put(&d[i], px.cb, px.abuf, size, trd_mr_key(px.bmr),
				     (uint64_t)(i % 8) * size % (px.buflen - size), 0, px.bctr);
	}
	if (!fifo && trd_counter_set(px.b, px.bctr, (int64_t)(n * size)) != 0)
		return -EINVAL;
	engine_start();
	t0 = rte_rdtsc();
	uint64_t hz = rte_get_tsc_hz(), next = t0 + hz;

	while ((posted < n || got < n) && !perf_stop) {
		if (unlikely(rte_rdtsc() > next)) {
			/* a progress line per second on long runs */
			fprintf(stderr, "toroid-perf: %s %u B: %" PRIu64 " of %" PRIu64 " posted, "
				"%.3f Mpps so far\n", r->test, size, posted, n,
				(double)posted * hz / 1e6 / (double)(rte_rdtsc() - t0));
			next += hz;
			if (!fifo)
				got = stream_got_puts(n, size, posted);
		}
		if (posted < n) {
			unsigned int k = (unsigned int)RTE_MIN(RTE_MIN(32u, perf_opt.window),
							       n - posted);

			if (trd_inject_bulk(f, d, k) == 0)
				posted += k;
			else
				progress();
		}
		if (fifo) {
			struct trd_msg *m[32];
			int k = trd_rec_fifo_poll(trd_rec_fifo(px.b, 0), m, 32);

			for (int i = 0; i < k; i++)
				trd_msg_free(m[i]);
			if (k <= 0)
				progress(); /* --inline: nobody else moves the last messages */
			got += (uint64_t)(k > 0 ? k : 0);
		} else if (posted == n) {
			int64_t left = 1;

			progress();
			if (trd_counter_read(px.b, px.bctr, &left) == 0 && left == 0)
				got = n;
			else
				got = stream_got_puts(n, size, posted);
		}
		/* a deadline without progress, not on the whole run */
		if (posted + got != seen) {
			seen = posted + got;
			dl = deadline_in(PERF_TIMEOUT_US);
		} else if (rte_get_timer_cycles() > dl) {
			return -ETIMEDOUT;
		}
	}
	if (perf_stop) {
		if (!fifo)
			got = stream_got_puts(n, size, posted);
		if (got == 0)
			return -EINTR;
		r->interrupted = true;
		n = RTE_MIN(got, n);
	}
	rate_result(r, n, n * pkts_per, frame, rte_rdtsc() - t0);
	return 0;
}

/* One-sided ping-pong: a puts to b, b sees its counter reach zero and puts back. */
static __rte_noinline int
pingpong(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc da, db;
	uint32_t size = r->size;

	trd_desc_put(&da, px.cb, px.abuf, size, trd_mr_key(px.bmr), 0, 0, px.bctr);
	trd_desc_put(&db, px.ca, px.bbuf, size, trd_mr_key(px.amr), 0, 0, px.actr);
	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc();

		trd_counter_set(px.b, px.bctr, size ? size : 0);
		trd_counter_set(px.a, px.actr, size ? size : 0);
		if (trd_inject(trd_inj_fifo(px.a, 0), &da) != 0 || wait_counter(px.b, px.bctr) != 0)
			return -EIO;
		if (trd_inject(trd_inj_fifo(px.b, 0), &db) != 0 || wait_counter(px.a, px.actr) != 0)
			return -EIO;
		s[i] = rte_rdtsc() - t0;
		lat_done = i + 1;
	}
	return 0;
}

static __rte_noinline int
fifo_pingpong(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc da, db;
	struct trd_msg *m;

	trd_desc_fifo(&da, px.cb, 0, px.abuf, r->size, 1, 0);
	trd_desc_fifo(&db, px.ca, 0, px.bbuf, r->size, 2, 0);
	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc();

		if (trd_inject(trd_inj_fifo(px.a, 0), &da) != 0 ||
		    trd_rec_fifo_wait(trd_rec_fifo(px.b, 0), &m, PERF_TIMEOUT_US) != 0)
			return -EIO;
		trd_msg_free(m);
		if (trd_inject(trd_inj_fifo(px.b, 0), &db) != 0 ||
		    trd_rec_fifo_wait(trd_rec_fifo(px.a, 0), &m, PERF_TIMEOUT_US) != 0)
			return -EIO;
		trd_msg_free(m);
		s[i] = rte_rdtsc() - t0;
		lat_done = i + 1;
	}
	return 0;
}

/* Post a put with reflection completion into a's doorbell and spin until it lands. */
static int
reflect_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc d;
	struct trd_cpl_spec spec = {.kind = TRD_CPL_DOORBELL, .mode = perf_opt.mode, .doorbell = px.adb};

	trd_desc_put(&d, px.cb, px.abuf, r->size, trd_mr_key(px.bmr), 0, 0, 0);
	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc();

		spec.cookie = i + 1 + ((uint64_t)r->size << 32);
		if (trd_inject_reflect(trd_inj_fifo(px.a, 0), &d, &spec) != 0 ||
		    trd_doorbell_wait(px.adb, 0, spec.cookie, TRD_WAIT_SPIN, PERF_TIMEOUT_US) != 0)
			return -EIO;
		s[i] = rte_rdtsc() - t0;
		lat_done = i + 1;
	}
	return 0;
}

/* RDMA read: a asks b to put r->size bytes of its region back into a's. */
static __rte_noinline int
get_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc d, c;

	trd_desc_put(&c, px.ca, NULL, r->size, trd_mr_key(px.amr), 0, 0, px.actr);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(px.bmr);
	trd_desc_rget(&d, px.cb, TRD_ENGINE_FIFO, &c, 1);
	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc();

		trd_counter_set(px.a, px.actr, r->size);
		if (trd_inject(trd_inj_fifo(px.a, 0), &d) != 0 || wait_counter(px.a, px.actr) != 0)
			return -EIO;
		if (s != NULL)
			s[i] = rte_rdtsc() - t0;
		lat_done = i + 1;
	}
	return 0;
}

/* ---- messaging layer (contexts, work queue, advance) ---- */

static struct trd_context *perf_mctx;
static struct trd_ep perf_mep; /* node b */

/* A client with one context on a (its own injection FIFO 1, outcomes in FIFO 3). */
static int
perf_msg_ctx(void)
{
	struct trd_context_conf cc = {.node = px.a, .inj_fifo = 1, .cpl_fifo = 3,
				      .recv_fifo = TRD_NO_FIFO};
	struct trd_client *cl;

	if (perf_mctx != NULL)
		return 0;
	cl = trd_client_create("toroid-perf", NULL);
	if (cl == NULL || (perf_mctx = trd_context_create(cl, &cc)) == NULL)
		return -rte_errno;
	return trd_endpoint(cl, (uint32_t)trd_torus_rank(trd_node_torus(px.a), px.cb), 0,
			    &perf_mep);
}

static void
perf_msg_done(struct trd_context *ctx, void *cookie, int status)
{
	RTE_SET_USED(ctx);
	*(int *)cookie = status == 0 ? 1 : status;
}

/* Advance until the operation whose callback writes @p flag completes. */
static int
perf_msg_wait(volatile int *flag)
{
	uint64_t dl = deadline_in(PERF_TIMEOUT_US);

	while (*flag == 0)
		if (trd_advance(perf_mctx, 0) < 0 || expired(dl))
			return -ETIMEDOUT;
	return *flag == 1 ? 0 : *flag;
}

/* A put of r->size bytes a->b, then a fence on b: until the fence callback ran (the put is
 * complete in b's memory: its DONE came back). */
static int
fence_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	int rc = perf_msg_ctx();

	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc();
		volatile int done = 0;

		rc = trd_put(perf_mctx, px.abuf, &perf_mep, 0, trd_mr_key(px.bmr), r->size, NULL,
			     NULL);
		if (rc == 0)
			rc = trd_fence(perf_mctx, &perf_mep, perf_msg_done, (void *)&done);
		if (rc == 0)
			rc = perf_msg_wait(&done);
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	return rc;
}

/* A fetch-and-add on a word of b through the context, until its callback (old value back). */
static int
atomic_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	int rc = perf_msg_ctx();
	uint64_t old;

	RTE_SET_USED(r);
	engine_start();
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc();
		volatile int done = 0;

		rc = trd_atomic(perf_mctx, &perf_mep, trd_mr_key(px.bmr), 0, TRD_ATOMIC_FADD, 1, 0,
				&old, perf_msg_done, (void *)&done);
		if (rc == 0)
			rc = perf_msg_wait(&done);
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	return rc;
}

/* ---- collectives: an allreduce over the 8 nodes of a 2x2x2 torus (docs/collectives.md) ---- */

static struct {
	struct trd_net *net;
	struct trd_context *ctx[8];
	struct trd_coll *coll[8];
	double *src[8], *dst[8];
	size_t len;
} perf_ar;

static void
perf_ar_done(struct trd_coll *coll, void *cookie, int status)
{
	RTE_SET_USED(coll);
	*(int *)cookie = status == 0 ? 1 : status;
}

/* The 8 nodes (cabled like the two of the other tests), a client, a context and a collective
 * object per rank, buffers of @p len bytes. */
static int
perf_ar_setup(size_t len)
{
	if (perf_ar.net == NULL) {
		struct trd_net_conf nc = {.links = perf_opt.links};

		trd_torus_init(&nc.torus, 2, 2, 2);
		perf_ar.net = trd_net_create(&nc);
		if (perf_ar.net == NULL)
			return -rte_errno;
		for (unsigned int q = 0; q < 8; q++) {
			struct trd_context_conf cc = {.node = trd_net_node(perf_ar.net, q),
						      .recv_fifo = 1, .recv = trd_coll_recv};
			struct trd_client *cl = trd_client_create("toroid-perf-coll", NULL);

			if (cl == NULL || (perf_ar.ctx[q] = trd_context_create(cl, &cc)) == NULL ||
			    (perf_ar.coll[q] = trd_coll_create(cl, perf_ar.ctx[q], NULL)) == NULL)
				return -rte_errno;
		}
	}
	if (len > perf_ar.len) {
		for (unsigned int q = 0; q < 8; q++) {
			free(perf_ar.src[q]);
			free(perf_ar.dst[q]);
			perf_ar.src[q] = calloc(1, len);
			perf_ar.dst[q] = calloc(1, len);
			if (perf_ar.src[q] == NULL || perf_ar.dst[q] == NULL)
				return -ENOMEM;
			for (size_t i = 0; i < len / sizeof(double); i++)
				perf_ar.src[q][i] = q + (double)i;
		}
		perf_ar.len = len;
	}
	return 0;
}

/* An allreduce (sum of r->size / 8 doubles) on every rank, the main lcore advancing all eight
 * contexts round-robin, until every rank's callback ran; the engine lcore serves the nodes. */
static int
allreduce_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	size_t count = r->size / sizeof(double);
	int rc = perf_ar_setup(RTE_MAX(count, (size_t)1) * sizeof(double)), done[8];
	bool launched = false;

	engine_stop();
	if (rc == 0 && px.worker < RTE_MAX_LCORE && !perf_opt.inline_poll)
		launched = (rc = trd_net_launch(perf_ar.net, &px.worker, 1)) == 0;
	for (uint64_t i = 0; i < n && !perf_stop && rc == 0; i++) {
		uint64_t t0 = rte_rdtsc(), dl = deadline_in(PERF_TIMEOUT_US);
		unsigned int k = 0;

		memset(done, 0, sizeof(done));
		for (unsigned int q = 0; q < 8 && rc == 0; q++)
			rc = trd_coll_allreduce(perf_ar.coll[q], perf_ar.src[q], perf_ar.dst[q], count,
						TRD_COLL_DOUBLE, TRD_COLL_SUM, perf_ar_done, &done[q],
						NULL);
		while (rc == 0 && k < 8) {
			k = 0;
			for (unsigned int q = 0; q < 8; q++) {
				if (trd_advance(perf_ar.ctx[q], 0) < 0 || done[q] < 0)
					rc = -EIO;
				k += done[q] != 0;
			}
			if (expired(dl))
				rc = -ETIMEDOUT;
		}
		s[i] = rte_rdtsc() - t0;
		if (rc == 0)
			lat_done = i + 1;
	}
	if (launched)
		trd_net_stop(perf_ar.net);
	return rc;
}

/* ---- the test table ---- */

struct perf_test {
	const char *name;
	enum perf_kind kind;
	double lat_scale;      /* 0.5 for a round trip reported as one way */
	uint64_t iters;        /* default iterations */
	const char *help;
};

static const struct perf_test tests[] = {
	{"put_rate", K_RATE, 1, 2000000, "64 B-class puts a->b, message rate (Mpps)"},
	{"put_bw", K_RATE, 1, 20000, "large puts a->b, bandwidth (MB/s, Gbit/s)"},
	{"put_lat", K_LAT, 0.5, 20000, "put ping-pong on counters, half round trip (us)"},
	{"fifo_rate", K_RATE, 1, 1000000, "memory-FIFO messages a->b, message rate"},
	{"fifo_bw", K_RATE, 1, 20000, "memory-FIFO messages a->b, bandwidth"},
	{"fifo_lat", K_LAT, 0.5, 20000, "memory-FIFO ping-pong, half round trip (us)"},
	{"get_lat", K_LAT, 1, 20000, "RDMA read (remote get) until the counter is zero (us)"},
	{"get_bw", K_RATE, 1, 2000, "RDMA reads back to back, bandwidth"},
	{"reflect_lat", K_LAT, 1, 20000, "put to reflection completion in a doorbell (us)"},
	{"linerate", K_RATE, 1, 2000000, "sustained puts of one MTU payload: Mpps, Gbit/s L2/L1"},
	{"fence_lat", K_LAT, 1, 20000, "context put + fence until the fence callback (us)"},
	{"atomic_lat", K_LAT, 1, 20000, "context fetch-and-add until its callback (us)"},
	{"allreduce_lat", K_LAT, 1, 1000,
	 "allreduce (sum of doubles) of 8 nodes, a 2x2x2 torus (us); MB/s = size / time"},
};

static int
run_one(const struct perf_test *t, uint32_t size, struct perf_result *r)
{
	uint64_t n = perf_opt.iters ? perf_opt.iters : t->iters;
	uint64_t warm = n / 10 + 1;
	uint64_t *s = NULL;
	unsigned int maxpay = trd_link_max_payload(trd_node_link(px.a, 0));
	uint32_t frame = TRD_FRAME_HLEN + RTE_MIN(size, maxpay);
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->test = t->name;
	r->size = size;
	r->by_gbps = strstr(t->name, "_bw") != NULL || strcmp(t->name, "linerate") == 0;
	if (size > px.buflen)
		return -EINVAL;
	if (t->kind == K_LAT) {
		s = malloc((n + warm) * sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
	}
	/* the raw baseline runs first, on the same ports, with the engine stopped */
	if (perf_opt.baseline) {
		if (t->kind == K_RATE)
			baseline_rate(r, RTE_MAX(frame, 60u), n);
		else
			baseline_lat(r, RTE_MAX(frame, 60u), n, t->lat_scale);
	}
	if (strcmp(t->name, "put_rate") == 0 || strcmp(t->name, "put_bw") == 0 ||
	    strcmp(t->name, "linerate") == 0) {
		rc = stream(r, false, warm);
		if (rc == 0 && !r->interrupted)
			rc = stream(r, false, n);
		else if (rc == 0)
			rc = -EINTR; /* interrupted while warming up: nothing measured */
	} else if (strcmp(t->name, "fifo_rate") == 0 || strcmp(t->name, "fifo_bw") == 0) {
		rc = stream(r, true, warm);
		if (rc == 0 && !r->interrupted)
			rc = stream(r, true, n);
		else if (rc == 0)
			rc = -EINTR;
	} else if (strcmp(t->name, "get_bw") == 0) {
		uint64_t t0 = rte_rdtsc();

		lat_done = 0;
		rc = get_loop(r, n, NULL);
		if (perf_stop && lat_done > 0) {
			r->interrupted = true;
			n = lat_done;
			rc = 0;
		} else if (perf_stop) {
			rc = -EINTR;
		}
		if (rc == 0)
			rate_result(r, n, n * ((size + maxpay - 1) / RTE_MAX(maxpay, 1u)), frame,
				    rte_rdtsc() - t0);
	} else {
		int (*fn)(struct perf_result *, uint64_t, uint64_t *) =
			strcmp(t->name, "put_lat") == 0	   ? pingpong
			: strcmp(t->name, "fifo_lat") == 0 ? fifo_pingpong
			: strcmp(t->name, "get_lat") == 0  ? get_loop
			: strcmp(t->name, "fence_lat") == 0 ? fence_loop
			: strcmp(t->name, "atomic_lat") == 0 ? atomic_loop
			: strcmp(t->name, "allreduce_lat") == 0 ? allreduce_loop
							   : reflect_loop;

		rc = fn(r, warm, s);
		if (perf_stop) {
			rc = -EINTR; /* interrupted while warming up: nothing measured */
		} else if (rc == 0) {
			lat_done = 0;
			rc = fn(r, n, s);
			/* interrupted: the samples taken, marked so; never the ones not taken */
			if (perf_stop) {
				r->interrupted = true;
				n = lat_done;
				rc = n > 0 ? 0 : -EINTR;
			}
		}
		if (rc == 0)
			lat_stats(r, s, n, t->lat_scale);
	}
	if (rc == 0 && t->kind == K_RATE) {
		struct rte_eth_link link;
		int port = trd_link_port(trd_node_link(px.a, 0));

		if (port >= 0 && rte_eth_link_get_nowait((uint16_t)port, &link) == 0 &&
		    link.link_speed != 0 && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
			r->line_pct = r->gbps_l1 * 1000 / link.link_speed * 100;
	}
	free(s);
	return rc;
}

/* ---- output ---- */

void
perf_print_header(enum perf_kind kind)
{
	if (perf_opt.json)
		return;
	if (kind == K_RATE)
		printf("%-12s %9s %10s %10s %10s %10s %7s%s\n", "test", "size", "Mpps", "MB/s",
		       "Gb/s L2", "Gb/s L1", "line%", perf_opt.baseline ? "   raw Mpps  ratio" : "");
	else
		printf("%-12s %9s %9s %9s %9s %9s %9s %9s%s\n", "test", "size", "min us", "avg us",
		       "p50 us", "p99 us", "p99.9 us", "max us",
		       perf_opt.baseline ? "  raw p50 us  ratio" : "");
}

/* "100.000k msg/s", "5.000G bit/s": a --rate figure in the unit asked */
static const char *
fmt_rate(char *buf, size_t len, double v)
{
	const char *unit = perf_opt.rate_bits ? "bit/s" : "msg/s";

	if (v >= 1e9)
		snprintf(buf, len, "%.3fG %s", v / 1e9, unit);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3fM %s", v / 1e6, unit);
	else if (v >= 1e3)
		snprintf(buf, len, "%.3fk %s", v / 1e3, unit);
	else
		snprintf(buf, len, "%.3f %s", v, unit);
	return buf;
}

void
print_result(const struct perf_result *r)
{
	const char *links = perf_opt.links_label	  ? perf_opt.links_label
			    : perf_opt.links == TRD_NET_RING  ? "ring"
			    : perf_opt.links == TRD_NET_PORTS ? "ports"
							      : "net_ring";
	char a[48], b[48];

	if (perf_opt.json) {
		printf("{\"test\":\"%s\",\"size\":%u,\"links\":\"%s\"", r->test, r->size, links);
		if (r->is_interval)
			printf(",\"interval\":{\"start\":%.3f,\"end\":%.3f}", r->iv_start, r->iv_end);
		if (r->kind == K_RATE) {
			printf(",\"msgs\":%" PRIu64 ",\"mpps\":%.4f,\"mbytes_per_s\":%.2f,"
			       "\"gbps_l2\":%.4f,\"gbps_l1\":%.4f",
			       r->n, r->mpps, r->mbps, r->gbps_l2, r->gbps_l1);
			if (r->line_pct > 0)
				printf(",\"line_rate_pct\":%.2f", r->line_pct);
			if (r->has_base && r->by_gbps)
				printf(",\"raw_gbps_l2\":%.4f,\"ratio\":%.3f", r->base_gbps,
				       r->gbps_l2 / r->base_gbps);
			else if (r->has_base)
				printf(",\"raw_mpps\":%.4f,\"ratio\":%.3f", r->base,
				       r->mpps / r->base);
		} else {
			printf(",\"iters\":%" PRIu64 ",\"unit\":\"us\",\"min\":%.3f,\"avg\":%.3f,"
			       "\"p50\":%.3f,\"p99\":%.3f,\"p99_9\":%.3f,\"max\":%.3f",
			       r->n, r->min, r->avg, r->p50, r->p99, r->p999, r->max);
			if (r->has_base)
				printf(",\"raw_p50\":%.3f,\"ratio\":%.3f", r->base, r->p50 / r->base);
		}
		if (r->seconds > 0)
			printf(",\"seconds\":%.3f", r->seconds);
		if (r->has_rate)
			printf(",\"rate_asked\":%.1f,\"rate_achieved\":%.1f,\"rate_unit\":\"%s\"",
			       r->rate_asked, r->rate_achieved,
			       perf_opt.rate_bits ? "bit/s" : "msg/s");
		if (r->interrupted)
			printf(",\"interrupted\":true");
		printf("}\n");
		fflush(stdout);
		return;
	}
	if (r->kind == K_RATE) {
		printf("%-12s %9u %10.3f %10.1f %10.3f %10.3f %7.1f", r->test, r->size, r->mpps,
		       r->mbps, r->gbps_l2, r->gbps_l1, r->line_pct);
		if (r->has_base && r->by_gbps)
			printf(" %10.3f %6.3f  (raw %.3f Gb/s L2)", r->base, r->gbps_l2 / r->base_gbps,
			       r->base_gbps);
		else if (r->has_base)
			printf(" %10.3f %6.3f", r->base, r->mpps / r->base);
	} else {
		printf("%-12s %9u %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f", r->test, r->size, r->min,
		       r->avg, r->p50, r->p99, r->p999, r->max);
		if (r->has_base)
			printf(" %11.2f %6.3f", r->base, r->p50 / r->base);
	}
	/* iperf3-style: each interval line and the summary of a timed run show their span */
	if (r->is_interval)
		printf("  %6.2f-%6.2f s", r->iv_start, r->iv_end);
	else if (perf_opt.duration_s > 0 || perf_opt.interval_s > 0)
		printf("  %6.2f-%6.2f s", 0.0, r->seconds);
	if (r->has_rate)
		printf("  asked %s, achieved %s", fmt_rate(a, sizeof(a), r->rate_asked),
		       fmt_rate(b, sizeof(b), r->rate_achieved));
	if (r->interrupted)
		printf("  (interrupted: %" PRIu64 " %s)", r->n,
		       r->kind == K_RATE ? "messages" : "samples");
	printf("\n");
	fflush(stdout);
}

/* ---- set-up ---- */

enum { OPT_SERVER = 256, OPT_CLIENT, OPT_PORT, OPT_DURATION, OPT_INTERVAL, OPT_RATE, OPT_CORES };

/* --rate: "100000", "100k", "1.5M" messages per second, or "5Gbit", "800Mbit", "100kbit/s"
 * bits per second (decimal prefixes, as iperf3). */
static int
parse_rate(const char *s, double *v, bool *bits)
{
	char num[64];
	size_t n = strspn(s, "0123456789.");
	const char *p = s + n;
	double mult = 1;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (*p == 'k' || *p == 'K')
		mult = 1e3, p++;
	else if (*p == 'M')
		mult = 1e6, p++;
	else if (*p == 'G')
		mult = 1e9, p++;
	else if (*p == 'T')
		mult = 1e12, p++;
	*bits = strcmp(p, "bit") == 0 || strcmp(p, "bit/s") == 0;
	if (!*bits && *p != '\0')
		return -EINVAL;
	if (app_parse_double(num, 0, 1e15, v) != 0)
		return -EINVAL;
	*v *= mult;
	if (*bits ? *v < 1e3 || *v > 1e13 : *v < 1 || *v > 1e9)
		return -ERANGE;
	return 0;
}

static void
usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- -t TEST [options]\n"
	       "       %s [EAL options with one port] -- --server [--port P]\n"
	       "       %s [EAL options with one port] -- --client [--port P] -t TEST [options]\n\n"
	       "Measure the toroid engine between two nodes of a 2x1x1 torus in this process, and,\n"
	       "with --baseline, plain rte_eth_tx_burst/rx_burst on the same ports right before.\n"
	       "--server and --client put one node each in two processes (on two hosts) on the\n"
	       "port given to EAL (-a PCI, --vdev): the client measures, the server answers.\n"
	       "Without EAL options the EAL runs with\n  %s\n\n"
	       "Tests:\n",
	       prog, prog, prog, app_eal_defaults());
	for (unsigned int i = 0; i < RTE_DIM(tests); i++)
		printf("  %-12s %s (default -n %" PRIu64 ")\n", tests[i].name, tests[i].help,
		       tests[i].iters);
	printf("\nOptions:\n"
	       "  -t, --test NAME      the test to run (required); 'all' runs every test\n"
	       "  -s, --sizes LIST     sizes: 64 | 8,64,1K | 8:65536 (powers of two in a range)\n"
	       "                       (default: 64; linerate: the link's largest payload)\n"
	       "  -n, --iters N        iterations (default: per test, above); 10%% more warm up\n"
	       "  -w, --window N       messages posted per batch in rate tests, 1..32 (default 32)\n"
	       "  -b, --baseline       measure raw DPDK on the same ports first; print the ratio\n"
	       "  -j, --json           one JSON object per result line\n"
	       "      --links KIND     ethdev: a net_ring ethdev pair (default); ring: ring link\n"
	       "      --mode MODE      reflect_lat: local (neighbour reflects) or delivery\n"
	       "      --inline         no engine lcore: the main lcore polls the nodes itself\n"
	       "      --hgrm PREFIX    write latency distributions to PREFIX-TEST-SIZE.hgrm\n"
	       "      --server         two processes, this one answers (one client, then it ends)\n"
	       "      --client         two processes, this one measures (tests: put_rate put_bw\n"
	       "                       put_lat fifo_lat get_lat reflect_lat, or all)\n"
	       "      --port P         the DPDK port of --server/--client (default 0)\n"
	       "      --memif ROLE     --server or --client on a net_memif port made here;\n"
	       "                       give each process its own --file-prefix\n"
	       "      --memif-socket P the memif socket (default /tmp/toroid-perf.sock)\n"
	       "      --duration S     client: run each test S seconds instead of -n iterations\n"
	       "      --interval S     client: a report line every S seconds (rate in it)\n"
	       "      --rate R         client: pace the messages: R per second (100k, 1.5M) or\n"
	       "                       R bits per second at L2 (800Mbit, 5Gbit); the achieved\n"
	       "                       rate is printed beside the asked one\n"
	       "      --cores N        engine lcores serving the nodes, 1..2 (default 1; --server/\n"
	       "                       --client: the main lcore polls, --cores 1 adds one)\n"
	       "      --ports A,B      node a on DPDK port A, node b on port B (cabled back to\n"
	       "                       back: NIC ports, or --vdev net_af_packet on a veth pair)\n"
	       "      --capture FILE   record what both nodes send and receive (pcapng)\n"
	       "      --snaplen N      bytes kept per frame by --capture (default 65535)\n"
	       "      --torus XxYxZ    place the two nodes in a larger torus (default 2x1x1):\n"
	       "                       the others exist only in the routing tables\n"
	       "      --impair SPEC    impair both nodes' links, e.g. loss=1%%,reorder=1%%,dup=0.5%%,\n"
	       "                       corrupt=0.1%%,seed=1 (payload CRCs on); default: none\n"
	       "      --timeout S      a test fails after S seconds without progress, 1..3600\n"
	       "                       (default 30); a run that progresses may last any time\n"
	       "  -h, --help           this help\n\n"
	       "Rates: Mpps of messages; Gbit/s at L2 (frame + FCS) and L1 (+ preamble and IFG,\n"
	       "24 B per frame); line%% against rte_eth_link_get's speed. Latency: min, avg,\n"
	       "p50, p99, p99.9, max in microseconds (put_lat, fifo_lat: half a round trip).\n\n"
	       "Example:\n  toroid-perf -- -t put_rate -s 64 --baseline --json\n"
	       "Between two hosts (the server needs no options; the client waits 60 s for it):\n"
	       "  host1$ toroid-perf -l 0 -a 0000:3b:00.0 -- --server\n"
	       "  host2$ toroid-perf -l 0 -a 0000:3b:00.0 -- --client -t put_rate --duration 10 \\\n"
	       "             --interval 1 --rate 1M\n");
}

static int
parse_sizes(const char *s)
{
	char buf[256], *tok, *save;
	unsigned long long a, b;

	perf_opt.n_sizes = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (colon != NULL) {
			*colon = '\0';
			if (app_parse_size(tok, &a) || app_parse_size(colon + 1, &b) || a > b ||
			    b > (64u << 20))
				return -EINVAL;
			for (unsigned long long v = a ? a : 1; v <= b; v <<= 1) {
				if (perf_opt.n_sizes == PERF_MAX_SIZES)
					return -EINVAL;
				perf_opt.sizes[perf_opt.n_sizes++] = (uint32_t)v;
			}
		} else {
			if (app_parse_size(tok, &a) || a > (64u << 20) ||
			    perf_opt.n_sizes == PERF_MAX_SIZES)
				return -EINVAL;
			perf_opt.sizes[perf_opt.n_sizes++] = (uint32_t)a;
		}
	}
	return perf_opt.n_sizes ? 0 : -EINVAL;
}

static void
on_signal(int sig)
{
	perf_stop = sig;
}

/* --impair */
static struct trd_impair_conf perf_impair;
static bool perf_impaired;

static void
setup(void)
{
	struct trd_node_conf tmpl = {.payload_crc = perf_impaired}; /* corruption reaches payloads */
	struct trd_net_conf nc = {.links = perf_opt.links, .node = &tmpl, .ports = perf_opt.ports,
				    .n_ports = 2};
	static const uint32_t two[] = {0, 1};
	uint32_t maxsize = 0;

	/* nodes (0,0,0) and (1,0,0); in a larger torus the others exist in the routing tables */
	trd_torus_init(&nc.torus, perf_opt.torus[0], perf_opt.torus[1], perf_opt.torus[2]);
	nc.ranks = two;
	nc.n_ranks = 2;
	px.net = trd_net_create(&nc);
	if (px.net == NULL)
		rte_exit(EXIT_FAILURE, "cannot build the two nodes: %s\n", rte_strerror(rte_errno));
	px.a = trd_net_node(px.net, 0);
	px.b = trd_net_node(px.net, 1);
	px.ca = trd_node_coord(px.a);
	px.cb = trd_node_coord(px.b);
	if (perf_impaired &&
	    (trd_node_impair(px.a, &perf_impair) != 0 || trd_node_impair(px.b, &perf_impair) != 0))
		rte_exit(EXIT_FAILURE, "cannot impair the links\n");
	for (unsigned int i = 0; i < perf_opt.n_sizes; i++)
		maxsize = RTE_MAX(maxsize, perf_opt.sizes[i]);
	px.buflen = RTE_MAX((size_t)maxsize * 2, (size_t)1 << 20);
	px.abuf = rte_zmalloc("perf", px.buflen, 4096);
	px.bbuf = rte_zmalloc("perf", px.buflen, 4096);
	px.adb_page = rte_zmalloc("perf", 4096, 4096);
	if (px.abuf == NULL || px.bbuf == NULL || px.adb_page == NULL)
		rte_exit(EXIT_FAILURE, "out of memory (give EAL more with -m)\n");
	px.amr = trd_mr_register(px.a, px.abuf, px.buflen, TRD_ACCESS_ALL);
	px.bmr = trd_mr_register(px.b, px.bbuf, px.buflen, TRD_ACCESS_ALL);
	px.adb = trd_doorbell_register(px.a, px.adb_page, 4096, NULL);
	if (px.amr == NULL || px.bmr == NULL || px.adb == NULL ||
	    trd_counter_alloc(px.a, &px.actr) != 0 || trd_counter_alloc(px.b, &px.bctr) != 0)
		rte_exit(EXIT_FAILURE, "cannot register memory\n");
	px.worker = rte_get_next_lcore(-1, 1, 0);
	px.n_workers = px.worker < RTE_MAX_LCORE ? 1 : 0;
	px.workers[0] = px.worker;
	if (perf_opt.cores > 0) {
		unsigned int l = px.worker;

		for (px.n_workers = 0; px.n_workers < perf_opt.cores && l < RTE_MAX_LCORE;
		     l = rte_get_next_lcore(l, 1, 0))
			px.workers[px.n_workers++] = l;
		if (px.n_workers < perf_opt.cores)
			app_usage_error("--cores %u: %u worker lcore(s) besides the main one (give more "
					"with -l, e.g. -l 0-%u)",
					perf_opt.cores, px.n_workers, perf_opt.cores);
	}
	if (perf_opt.capture != NULL &&
	    (trd_node_capture(px.a, perf_opt.capture, perf_opt.snaplen) != 0 ||
	     trd_node_capture(px.b, perf_opt.capture, perf_opt.snaplen) != 0))
		rte_exit(EXIT_FAILURE, "cannot capture into %s\n", perf_opt.capture);
	trd_telemetry_init();
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"test", required_argument, NULL, 't'},  {"sizes", required_argument, NULL, 's'},
		{"iters", required_argument, NULL, 'n'}, {"window", required_argument, NULL, 'w'},
		{"baseline", no_argument, NULL, 'b'},    {"json", no_argument, NULL, 'j'},
		{"links", required_argument, NULL, 'L'}, {"mode", required_argument, NULL, 'M'},
		{"inline", no_argument, NULL, 'I'},      {"hgrm", required_argument, NULL, 'H'},
		{"memif", required_argument, NULL, 'R'}, {"memif-socket", required_argument, NULL, 'S'},
		{"torus", required_argument, NULL, 'T'}, {"ports", required_argument, NULL, 'O'},
		{"capture", required_argument, NULL, 'C'}, {"snaplen", required_argument, NULL, 'N'},
		{"impair", required_argument, NULL, 'P'}, {"timeout", required_argument, NULL, 'D'},
		{"server", no_argument, NULL, OPT_SERVER}, {"client", no_argument, NULL, OPT_CLIENT},
		{"port", required_argument, NULL, OPT_PORT},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"rate", required_argument, NULL, OPT_RATE},
		{"cores", required_argument, NULL, OPT_CORES},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	const char *sizes = NULL, *memif = NULL, *memif_socket = "/tmp/toroid-perf.sock";
	const char *role = NULL; /* --server or --client */
	bool ports_given = false, port_given = false;
	uint16_t port = 0;
	int app_argc, c, failed = 0;
	char **app_argv;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage("toroid-perf");
			return 0;
		}
	/* two processes on two CPUs: one each, one thread each */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--memif") == 0 && i + 1 < argc)
			app_default_lcores = strcmp(argv[i + 1], "server") == 0 ? "0" : "1";
		if (strcmp(argv[i], "--server") == 0 || strcmp(argv[i], "--client") == 0)
			app_default_lcores = strcmp(argv[i], "--server") == 0 ? "0" : "1";
	}
	/* the options first, so a bad command line prints one line and costs no EAL */
	app_split_args(argc, argv, &app_argc, &app_argv);
	opterr = 0;
	while ((c = getopt_long(app_argc, app_argv, ":t:s:n:w:bjh", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			perf_opt.test = optarg;
			break;
		case 's':
			sizes = optarg;
			break;
		case 'n':
			perf_opt.iters = app_opt_size("--iters", optarg, 1, 1ULL << 40);
			break;
		case 'w':
			perf_opt.window = (unsigned int)app_opt_u64("--window", optarg, 1, 32);
			break;
		case 'b':
			perf_opt.baseline = true;
			break;
		case 'j':
			perf_opt.json = true;
			break;
		case 'L':
			if (strcmp(optarg, "ring") == 0)
				perf_opt.links = TRD_NET_RING;
			else if (strcmp(optarg, "ethdev") == 0)
				perf_opt.links = TRD_NET_ETHDEV_RING;
			else
				app_usage_error("--links: '%s' is not ring or ethdev", optarg);
			break;
		case 'M':
			if (strcmp(optarg, "local") == 0)
				perf_opt.mode = TRD_CPL_LOCAL;
			else if (strcmp(optarg, "delivery") == 0)
				perf_opt.mode = TRD_CPL_DELIVERY;
			else
				app_usage_error("--mode: '%s' is not local or delivery", optarg);
			break;
		case 'I':
			perf_opt.inline_poll = true;
			break;
		case 'H':
			perf_opt.hgrm = optarg;
			break;
		case 'R':
			if (strcmp(optarg, "server") != 0 && strcmp(optarg, "client") != 0)
				app_usage_error("--memif: '%s' is not server or client", optarg);
			memif = optarg;
			break;
		case 'S':
			memif_socket = optarg;
			break;
		case 'C':
			perf_opt.capture = optarg;
			break;
		case 'N':
			perf_opt.snaplen = (unsigned int)app_opt_u64("--snaplen", optarg, 64, 65535);
			break;
		case 'P':
			if (trd_impair_parse(optarg, &perf_impair) != 0)
				app_usage_error("--impair: bad specification '%s' (e.g. loss=1%%,seed=1; "
						"rates 0..1 or 0..100%%)",
						optarg);
			perf_impaired = true;
			break;
		case 'D':
			perf_opt.timeout_us = app_opt_u64("--timeout", optarg, 1, 3600) * 1000000;
			break;
		case OPT_SERVER:
		case OPT_CLIENT:
			if (role != NULL && strcmp(role, c == OPT_SERVER ? "server" : "client") != 0)
				app_usage_error("--server and --client exclude each other");
			role = c == OPT_SERVER ? "server" : "client";
			break;
		case OPT_PORT:
			port = (uint16_t)app_opt_u64("--port", optarg, 0, RTE_MAX_ETHPORTS - 1);
			port_given = true;
			break;
		case OPT_DURATION:
			perf_opt.duration_s = app_opt_double("--duration", optarg, 0.01, 86400);
			break;
		case OPT_INTERVAL:
			perf_opt.interval_s = app_opt_double("--interval", optarg, 0.01, 3600);
			break;
		case OPT_RATE:
			if (parse_rate(optarg, &perf_opt.rate, &perf_opt.rate_bits) != 0)
				app_usage_error("--rate: '%s' is not a rate (messages per second 1..1G, "
						"e.g. 100k, or bits per second 1kbit..10Tbit, e.g. "
						"5Gbit)",
						optarg);
			break;
		case OPT_CORES:
			perf_opt.cores = (unsigned int)app_opt_u64("--cores", optarg, 1, 2);
			break;
		case 'O': {
			char *comma = strchr(optarg, ',');

			if (comma == NULL)
				app_usage_error("--ports: '%s' is not A,B", optarg);
			*comma = '\0';
			perf_opt.ports[0] = (uint16_t)app_opt_u64("--ports", optarg, 0, UINT16_MAX);
			perf_opt.ports[1] = (uint16_t)app_opt_u64("--ports", comma + 1, 0, UINT16_MAX);
			*comma = ',';
			if (perf_opt.ports[0] == perf_opt.ports[1])
				app_usage_error("--ports %s: two different ports", optarg);
			perf_opt.links = TRD_NET_PORTS;
			ports_given = true;
			break;
		}
		case 'T': {
			char *x1 = strchr(optarg, 'x'), *x2 = x1 ? strchr(x1 + 1, 'x') : NULL;

			if (x1 == NULL || x2 == NULL)
				app_usage_error("--torus: '%s' is not XxYxZ", optarg);
			*x1 = *x2 = '\0';
			perf_opt.torus[0] = (unsigned int)app_opt_u64("--torus", optarg, 2, 64);
			perf_opt.torus[1] = (unsigned int)app_opt_u64("--torus", x1 + 1, 1, 64);
			perf_opt.torus[2] = (unsigned int)app_opt_u64("--torus", x2 + 1, 1, 64);
			*x1 = *x2 = 'x';
			break;
		}
		default:
			app_getopt_error(c, app_argv);
		}
	}
	if (optind < app_argc)
		app_usage_error("unexpected argument '%s' (EAL options go before \"--\")",
				app_argv[optind]);
	if (memif != NULL && role != NULL)
		app_usage_error("--memif and --%s exclude each other (--memif makes the port)", role);
	if (memif != NULL)
		role = memif;
	if (role != NULL && (ports_given || perf_opt.inline_poll || perf_opt.links != TRD_NET_ETHDEV_RING ||
			     perf_opt.capture != NULL || perf_impaired))
		app_usage_error("--%s: one node on one port; --ports, --links, --inline, --capture "
				"and --impair are for the one-process run",
				role);
	if (port_given && (role == NULL || memif != NULL))
		app_usage_error("--port is for --server and --client (the port given to EAL)");
	if ((perf_opt.duration_s > 0 || perf_opt.interval_s > 0 || perf_opt.rate > 0) &&
	    (role == NULL || strcmp(role, "client") != 0))
		app_usage_error("--duration, --interval and --rate are for the client (--client or "
				"--memif client): the server answers what it asks");
	if (perf_opt.duration_s > 0 && perf_opt.iters != 0)
		app_usage_error("--duration and -n exclude each other");
	if (perf_opt.duration_s > 0 && perf_opt.interval_s > perf_opt.duration_s)
		app_usage_error("--interval %g is longer than --duration %g", perf_opt.interval_s,
				perf_opt.duration_s);
	if (perf_opt.cores > 0 && perf_opt.inline_poll)
		app_usage_error("--cores and --inline exclude each other");
	if (perf_opt.cores > 1 && role != NULL)
		app_usage_error("--cores %u: one node per process with --%s (--cores 1 at most)",
				perf_opt.cores, role);
	if (perf_opt.test == NULL && role != NULL && strcmp(role, "server") == 0)
		perf_opt.test = "all"; /* the server answers whatever the client asks */
	if (perf_opt.test == NULL)
		app_usage_error("-t TEST is required (see --help)");
	{
		bool known = strcmp(perf_opt.test, "all") == 0;

		for (unsigned int i = 0; i < RTE_DIM(tests) && !known; i++)
			known = strcmp(perf_opt.test, tests[i].name) == 0;
		if (!known)
			app_usage_error("unknown test '%s' (see --help)", perf_opt.test);
	}
	if (sizes != NULL && parse_sizes(sizes) != 0)
		app_usage_error("--sizes: bad list '%s' (e.g. 64, 8,64,1K or 8:65536; each 0..64M, "
				"at most %d)",
				sizes, PERF_MAX_SIZES);
	if (sizes == NULL) {
		perf_opt.n_sizes = 1;
		perf_opt.sizes[0] = strcmp(perf_opt.test, "linerate") == 0 ? 1444
			       : strstr(perf_opt.test, "_bw") != NULL ? 65536
								 : 64;
	}
	free(app_argv);
	app_eal_init(argc, argv, "1024", &app_argc, &app_argv);
	if (perf_opt.links == TRD_NET_PORTS &&
	    (!rte_eth_dev_is_valid_port(perf_opt.ports[0]) ||
	     !rte_eth_dev_is_valid_port(perf_opt.ports[1])))
		app_usage_error("--ports %u,%u: two DPDK ports (%u available; give them with -a PCI "
				"or --vdev)",
				perf_opt.ports[0], perf_opt.ports[1], rte_eth_dev_count_avail());
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	if (role != NULL && memif == NULL && !rte_eth_dev_is_valid_port(port))
		app_usage_error("--%s: no DPDK port %u (%u available; give one with -a PCI or --vdev)",
				role, port, rte_eth_dev_count_avail());
	if (role != NULL) {
		failed = perf_twoproc(strcmp(role, "server") == 0, memif != NULL ? memif_socket : NULL,
				      port, perf_opt.test);
		rte_eal_cleanup();
		if (perf_stop) {
			fprintf(stderr, "toroid-perf: interrupted\n");
			return 128 + perf_stop;
		}
		return failed ? 1 : 0;
	}
	setup();

	for (unsigned int ti = 0; ti < RTE_DIM(tests) && !perf_stop; ti++) {
		const struct perf_test *t = &tests[ti];

		if (strcmp(perf_opt.test, "all") != 0 && strcmp(perf_opt.test, t->name) != 0)
			continue;
		perf_print_header(t->kind);
		for (unsigned int si = 0; si < perf_opt.n_sizes && !perf_stop; si++) {
			struct perf_result r;
			int rc = run_one(t, perf_opt.sizes[si], &r);

			if (rc != 0 && perf_stop)
				break; /* nothing measured of this one */
			if (rc != 0) {
				fprintf(stderr, "toroid-perf: %s size %u failed: %s\n", t->name,
					perf_opt.sizes[si], strerror(-rc));
				failed++;
				continue;
			}
			print_result(&r);
		}
		if (strcmp(perf_opt.test, "all") != 0)
			goto done;
	}
	if (strcmp(perf_opt.test, "all") != 0 && !perf_stop) {
		fprintf(stderr, "toroid-perf: unknown test '%s' (see --help)\n", perf_opt.test);
		failed++;
	}
done:
	engine_stop();
	trd_net_free(px.net);
	rte_eal_cleanup();
	if (perf_stop) {
		fprintf(stderr, "toroid-perf: interrupted\n");
		return 128 + perf_stop;
	}
	return failed ? 1 : 0;
}
