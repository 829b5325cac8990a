/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf: helpers shared by the tests: time, deadlines, progress, the engine lcores. */
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

/* ---- helpers ---- */

double
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
			fprintf(f, "%12.3f %14.12f %10" PRIu64 " %14s\n", tsc_us(s[n - 1]) * scale,
				1.0, n, "inf");
			fclose(f);
		}
	}
}

bool
expired(uint64_t deadline)
{
	return perf_stop || rte_get_timer_cycles() > deadline;
}

uint64_t
deadline_in(uint64_t us)
{
	return rte_get_timer_cycles() + us * rte_get_timer_hz() / 1000000;
}

void
progress(void)
{
	if (!px.launched)
		trd_net_poll(px.net);
}

int
wait_counter(struct trd_node *n, uint16_t c)
{
	int rc = trd_counter_wait(n, c, PERF_TIMEOUT_US);

	if (rc != 0)
		fprintf(stderr, "toroid-perf: counter wait: %s\n", strerror(-rc));
	return rc;
}

void
engine_start(void)
{
	if (!px.launched && px.worker < RTE_MAX_LCORE && !perf_opt.inline_poll) {
		if (trd_net_launch(px.net, px.workers, px.n_workers) == 0)
			px.launched = true;
	}
}

void
engine_stop(void)
{
	if (px.launched) {
		trd_net_stop(px.net);
		px.launched = false;
	}
}
