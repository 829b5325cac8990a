/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf between two processes: timed runs (--duration, --interval, --rate): the
 * measured phase's clock, the pace of the sender, what the port had sent at its start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"
#include "twoproc.h"

/* ---- timed runs: --duration, --interval, --rate ---- */

void
timing_start(struct timing *tm, double mps, const struct trd_link *link)
{
	memset(tm, 0, sizeof(*tm));
	tm->hz = rte_get_tsc_hz();
	tm->t0 = rte_rdtsc();
	tm->iv_t0 = tm->t0;
	tm->end = timed_end(tm->t0);
	tm->iv_len = (uint64_t)(perf_opt.interval_s * (double)tm->hz);
	tm->mps = mps;
	tm->pace_t0 = tm->t0;
	/* a token bucket 50 ms deep: a sender held up longer (the CPU taken away) does not
	 * make up for it in one burst, and the achieved rate shows the loss */
	tm->burst = RTE_MAX((uint64_t)(mps / 20), (uint64_t)32);
	perf_tx_read(tp_port, link, &tm->tx0);
	tm->iv_tx = tm->tx0;
}

/* Messages the pace allows by @p now, @p sent of them sent (the first at once);
 * UINT64_MAX unpaced. */
uint64_t
timing_allowed(struct timing *tm, uint64_t now, uint64_t sent)
{
	uint64_t allowed;

	if (tm->mps <= 0)
		return UINT64_MAX;
	allowed = tm->pace_n0 + (uint64_t)((double)(now - tm->pace_t0) * tm->mps / (double)tm->hz) +
		  1;
	if (allowed > sent + tm->burst) {
		/* too far behind: the bucket is full, the rest of the debt is lost */
		tm->pace_n0 = sent + tm->burst;
		tm->pace_t0 = now;
		allowed = tm->pace_n0;
	}
	return allowed;
}

double
timing_s(const struct timing *tm, uint64_t tsc)
{
	return (double)(tsc - tm->t0) / (double)tm->hz;
}

/* A separator between the interval lines and the summary, as iperf3 prints */
void
timing_summary(const struct timing *tm)
{
	if (tm->printed && !perf_opt.json)
		printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
}

/* L1 rate against the port's speed */
void
line_pct(struct perf_result *r)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(tp_port, &link) == 0 && link.link_speed != 0 &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		r->line_pct = r->gbps_l1 * 1000 / link.link_speed * 100;
}

/* Interval line of a rate test: @p n messages posted so far at @p now (what @p link sent). */
void
rate_interval(struct timing *tm, const struct perf_result *tmpl, uint64_t n, uint64_t now,
	      uint64_t pkts_per, uint32_t frame, const struct trd_link *link)
{
	struct perf_result iv = *tmpl;
	struct perf_tx tx;

	rate_result(&iv, n - tm->iv_n0, (n - tm->iv_n0) * pkts_per, frame, now - tm->iv_t0);
	perf_tx_read(tp_port, link, &tx);
	perf_tx_rates(&iv, &tm->iv_tx, &tx);
	tm->iv_tx = tx;
	iv.is_interval = true;
	iv.has_base = false;
	iv.iv_start = timing_s(tm, tm->iv_t0);
	iv.iv_end = timing_s(tm, now);
	perf_rate_fill(&iv, frame, pkts_per);
	line_pct(&iv);
	print_result(&iv);
	tm->printed = true;
	tm->iv_t0 = now;
	tm->iv_n0 = n;
}

/* Interval line of a latency test: the samples s[iv_n0 .. n) taken in it. */
void
lat_interval(struct timing *tm, const struct perf_result *tmpl, const uint64_t *s, uint64_t n,
	     uint64_t now, double scale, uint32_t frame)
{
	struct perf_result iv = *tmpl;
	uint64_t k = n - tm->iv_n0, *c = k ? malloc(k * sizeof(*c)) : NULL;
	const char *h = perf_opt.hgrm;

	if (c != NULL) {
		memcpy(c, s + tm->iv_n0, k * sizeof(*c));
		perf_opt.hgrm = NULL; /* a distribution file for the whole run only */
		lat_stats(&iv, c, k, scale);
		perf_opt.hgrm = h;
		free(c);
		iv.is_interval = true;
		iv.has_base = false;
		iv.iv_start = timing_s(tm, tm->iv_t0);
		iv.iv_end = timing_s(tm, now);
		iv.seconds = iv.iv_end - iv.iv_start;
		perf_rate_fill(&iv, frame, 1);
		print_result(&iv);
		tm->printed = true;
	}
	tm->iv_t0 = now;
	tm->iv_n0 = n;
}
