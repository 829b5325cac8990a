/* SPDX-License-Identifier: BSD-3-Clause */
/* The one latency summary: nearest-rank percentiles on known samples (apps/common/latency.h). */
#include <stdio.h>
#include <stdlib.h>

#include "latency.h"

static int fails;

static void
expect(const char *what, double got, double want)
{
	if (got != want) {
		printf("FAIL %s: %.3f, want %.3f\n", what, got, want);
		fails++;
	}
}

int
main(void)
{
	static uint64_t v[1000];
	struct app_lat l;

	/* 1..100 shuffled: p50 is the 50th, p99 the 99th, p99.9 the 100th (ceil(99.9)) */
	for (unsigned int i = 0; i < 100; i++)
		v[i] = (i * 37) % 100 + 1;
	app_lat_summary(v, 100, 1.0, &l);
	expect("n=100 min", l.min, 1);
	expect("n=100 p50", l.p50, 50);
	expect("n=100 p99", l.p99, 99);
	expect("n=100 p99.9", l.p999, 100);
	expect("n=100 max", l.max, 100);
	expect("n=100 avg", l.avg, 50.5);
	/* 1..1000, scaled by 2 */
	for (unsigned int i = 0; i < 1000; i++)
		v[i] = 1000 - i;
	app_lat_summary(v, 1000, 2.0, &l);
	expect("n=1000 p50", l.p50, 1000);
	expect("n=1000 p99", l.p99, 1980);
	expect("n=1000 p99.9", l.p999, 1998);
	/* three samples: the median is the second; one sample is every percentile */
	v[0] = 30, v[1] = 10, v[2] = 20;
	app_lat_summary(v, 3, 1.0, &l);
	expect("n=3 p50", l.p50, 20);
	expect("n=3 p99", l.p99, 30);
	v[0] = 7;
	app_lat_summary(v, 1, 1.0, &l);
	expect("n=1 p50", l.p50, 7);
	expect("n=1 p99.9", l.p999, 7);
	app_lat_summary(v, 0, 1.0, &l);
	expect("n=0 n", (double)l.n, 0);
	if (app_lat_rank(0, 500) != 0 || app_lat_rank(2, 500) != 0 || app_lat_rank(2, 501) != 1) {
		printf("FAIL app_lat_rank\n");
		fails++;
	}
	if (fails == 0)
		printf("latency: nearest-rank percentiles as documented\n");
	return fails != 0;
}
