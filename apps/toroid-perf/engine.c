/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf: the engine tests: put and FIFO streams, ping-pongs, reflection and remote-get
 * loops. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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
	r->mfps = 0;
	r->frames = 0;
	r->bytes = 0;
	r->counted = NULL;
}

void
perf_tx_read(int port, const struct trd_link *link, struct perf_tx *t)
{
	struct rte_eth_stats es;
	struct trd_link_stats ls;
	struct rusage ru;
	bool have_link = link != NULL && trd_link_stats_get(link, &ls) == 0;

	memset(t, 0, sizeof(*t));
	if (port >= 0 && rte_eth_stats_get((uint16_t)port, &es) == 0) {
		t->frames = es.opackets;
		t->bytes = es.obytes;
		t->port_frames = true;
		/* net_ring counts no bytes: the link's count of what the port took */
		t->port_bytes = es.obytes != 0 || es.opackets == 0 || !have_link;
		if (!t->port_bytes)
			t->bytes = ls.tx_bytes;
	} else if (have_link) {
		t->frames = ls.tx_pkts;
		t->bytes = ls.tx_bytes;
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		t->cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
			    (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
	t->tsc = rte_rdtsc();
}

void
perf_tx_rates(struct perf_result *r, const struct perf_tx *a, const struct perf_tx *b)
{
	double us = r->seconds * 1e6, fr, by;

	if (b->tsc > a->tsc && b->cpu_us >= a->cpu_us)
		r->cpu_pct = (double)(b->cpu_us - a->cpu_us) / tsc_us(b->tsc - a->tsc) * 100;
	if (us <= 0 || b->frames <= a->frames || b->bytes < a->bytes)
		return;
	fr = (double)(b->frames - a->frames);
	by = (double)(b->bytes - a->bytes);
	r->frames = b->frames - a->frames;
	r->bytes = b->bytes - a->bytes;
	r->mfps = fr / us;
	r->gbps_l2 = (by + 4 * fr) * 8 / us / 1000;
	r->gbps_l1 = (by + PERF_L1_OVERHEAD * fr) * 8 / us / 1000;
	r->counted = a->port_frames && a->port_bytes ? "port"
		     : a->port_frames                ? "port+link"
						     : "link";
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
	/* bits: those the port sent when counted (small messages share frames) */
	r->rate_achieved =
		perf_opt.rate_bits && r->frames != 0
			? r->gbps_l2 * 1e9
			: (double)r->n / r->seconds *
				  (perf_opt.rate_bits ? (double)(frame + 4) * 8 * (double)pkts : 1);
}

/* Messages of a put stream b has received so far (its counter counts down n * size bytes). */
/* One burst of at most --window (and 32) of the descriptors @p d, @p left still to post:
 * those posted, or 0 (and a round of progress) while the FIFO is full. */
static unsigned int
post_burst(struct trd_inj_fifo *f, const struct trd_desc *d, uint64_t left)
{
	unsigned int k = (unsigned int)RTE_MIN(RTE_MIN(32u, perf_opt.window), left);

	if (trd_inject_bulk(f, d, k) == 0)
		return k;
	progress();
	return 0;
}

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
__rte_noinline int
stream(struct perf_result *r, bool fifo, uint64_t n)
{
	struct trd_desc d[32];
	struct trd_inj_fifo *f = trd_inj_fifo(px.a, 0);
	uint32_t size = r->size;
	uint64_t posted = 0, t0, dl = deadline_in(PERF_TIMEOUT_US), got = 0, seen = 0;
	unsigned int maxpay = trd_link_max_payload(trd_node_link(px.a, 0));
	uint64_t pkts_per = size == 0 ? 1 : (size + maxpay - 1) / maxpay;
	uint32_t frame = TRD_FRAME_HLEN + RTE_MIN(size, maxpay) + TRD_PROOF_LEN; /* + the token */
	int port = trd_link_port(trd_node_link(px.a, 0));
	struct perf_tx tx0, tx1;

	for (int i = 0; i < 32; i++) {
		if (fifo)
			trd_desc_fifo(&d[i], px.cb, 0, px.abuf, size, 0, 0);
		else
			trd_desc_put(&d[i], px.cb, px.abuf, size, trd_mr_key(px.bmr),
				     px.boff + (uint64_t)(i % 8) * size % (px.buflen - size), 0,
				     px.bctr);
		if (perf_opt.copy)
			d[i].flags |= TRD_DF_COPY;
	}
	if (!fifo && trd_counter_set(px.b, px.bctr, (int64_t)(n * size)) != 0)
		return -EINVAL;
	engine_start();
	perf_tx_read(port, trd_node_link(px.a, 0), &tx0);
	t0 = rte_rdtsc();
	uint64_t hz = rte_get_tsc_hz(), next = t0 + hz;

	while ((posted < n || got < n) && !perf_stop) {
		if (unlikely(rte_rdtsc() > next)) {
			/* a progress line per second on long runs */
			fprintf(stderr,
				"toroid-perf: %s %u B: %" PRIu64 " of %" PRIu64 " posted, "
				"%.3f Mpps so far\n",
				r->test, size, posted, n,
				(double)posted * hz / 1e6 / (double)(rte_rdtsc() - t0));
			next += hz;
			if (!fifo)
				got = stream_got_puts(n, size, posted);
		}
		if (posted < n)
			posted += post_burst(f, d, n - posted);
		if (fifo) {
			struct trd_msg *m[32];
			int k = trd_rec_fifo_poll(trd_rec_fifo(px.b, 0), m, 32);

			if (k > 0)
				trd_msg_free_bulk(m, (unsigned int)k);
			else
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
	/* what the port sent: small messages share frames (bundles) */
	perf_tx_read(port, trd_node_link(px.a, 0), &tx1);
	perf_tx_rates(r, &tx0, &tx1);
	return 0;
}

/* Remote gets from a to b, each reading r->size bytes of b's region back into a's, posted
 * in bursts as fast as a's FIFO takes them: gets queued together share frames (bundles), and
 * so do the puts they make b send back. Done when a's counter (n * size bytes) is zero; the
 * same deadline without progress as stream(). */
__rte_noinline int
get_stream(struct perf_result *r, uint64_t n)
{
	struct trd_desc d[32], c;
	struct trd_inj_fifo *f = trd_inj_fifo(px.a, 0);
	uint32_t size = r->size;
	uint64_t posted = 0, t0, dl = deadline_in(PERF_TIMEOUT_US), seen = 0;
	unsigned int maxpay = trd_link_max_payload(trd_node_link(px.a, 0));
	uint64_t pkts_per = size == 0 ? 1 : (size + maxpay - 1) / maxpay;
	uint32_t frame = TRD_FRAME_HLEN + TRD_WIRE_DESC_LEN + TRD_PROOF_LEN;
	int port = trd_link_port(trd_node_link(px.a, 0));
	struct perf_tx tx0, tx1;
	int64_t left = 1;

	if (size == 0)
		return -EINVAL; /* a get of nothing moves no counter */
	trd_desc_put(&c, px.ca, NULL, size, trd_mr_key(px.amr), px.aoff, 0, px.actr);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(px.bmr);
	c.src = px.boff;
	for (int i = 0; i < 32; i++)
		trd_desc_rget(&d[i], px.cb, TRD_ENGINE_FIFO, &c, 1);
	if (trd_counter_set(px.a, px.actr, (int64_t)(n * size)) != 0)
		return -EINVAL;
	engine_start();
	perf_tx_read(port, trd_node_link(px.a, 0), &tx0);
	t0 = rte_rdtsc();
	while (left != 0 && !perf_stop) {
		if (posted < n) {
			posted += post_burst(f, d, n - posted);
		} else {
			progress();
		}
		if (trd_counter_read(px.a, px.actr, &left) != 0)
			return -EIO;
		if (posted + (uint64_t)left != seen) {
			seen = posted + (uint64_t)left;
			dl = deadline_in(PERF_TIMEOUT_US);
		} else if (rte_get_timer_cycles() > dl) {
			return -ETIMEDOUT;
		}
	}
	if (perf_stop) {
		uint64_t got = n - RTE_MIN(n, ((uint64_t)RTE_MAX(left, 0) + size - 1) / size);

		if (got == 0)
			return -EINTR;
		r->interrupted = true;
		n = got;
	}
	rate_result(r, n, n * pkts_per, frame, rte_rdtsc() - t0);
	/* what a's port sent: the gets (bundles of them) */
	perf_tx_read(port, trd_node_link(px.a, 0), &tx1);
	perf_tx_rates(r, &tx0, &tx1);
	return 0;
}

/* One-sided ping-pong: a puts to b, b sees its counter reach zero and puts back. */
__rte_noinline int
pingpong(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc da, db;
	uint32_t size = r->size;

	trd_desc_put(&da, px.cb, px.abuf, size, trd_mr_key(px.bmr), px.boff, 0, px.bctr);
	trd_desc_put(&db, px.ca, px.bbuf, size, trd_mr_key(px.amr), px.aoff, 0, px.actr);
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

__rte_noinline int
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
__rte_noinline int
reflect_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc d;
	struct trd_cpl_spec spec = {
		.kind = TRD_CPL_DOORBELL, .mode = perf_opt.mode, .doorbell = px.adb};

	trd_desc_put(&d, px.cb, px.abuf, r->size, trd_mr_key(px.bmr), px.boff, 0, 0);
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
__rte_noinline int
get_loop(struct perf_result *r, uint64_t n, uint64_t *s)
{
	struct trd_desc d, c;

	trd_desc_put(&c, px.ca, NULL, r->size, trd_mr_key(px.amr), px.aoff, 0, px.actr);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(px.bmr);
	c.src = px.boff;
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
