/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one latency summary of every tool (toroid-demo, toroid-perf, toroid-vni-perf): min,
 * avg, p50, p99, p99.9, max of a set of samples, with one percentile definition, nearest rank:
 * the q-quantile of n sorted samples is the smallest one such that at least q * n samples are
 * at most it, sample number ceil(q * n) counting from 1 (docs/toroid-perf.md#percentiles).
 */
#ifndef APP_LATENCY_H
#define APP_LATENCY_H

#include <stdint.h>

struct app_lat {
	uint64_t n;
	double min, avg, p50, p99, p999, max;
};

/** Index (from 0) of the q-quantile of @p n sorted samples, q = @p per_mille / 1000. */
uint64_t app_lat_rank(uint64_t n, unsigned int per_mille);

/**
 * Sort the @p n samples of @p v in place and summarise them, each multiplied by @p scale
 * (e.g. microseconds per TSC cycle). n = 0 gives all zeros.
 */
void app_lat_summary(uint64_t *v, uint64_t n, double scale, struct app_lat *out);

#endif /* APP_LATENCY_H */
