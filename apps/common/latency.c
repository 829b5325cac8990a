/* SPDX-License-Identifier: BSD-3-Clause */
/* The one latency summary of every tool (latency.h). */
#include <stdlib.h>
#include <string.h>

#include "latency.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t
app_lat_rank(uint64_t n, unsigned int per_mille)
{
	/* ceil(q * n) in integers (no rounding surprise at q * n exact), at least 1 */
	uint64_t rank = (n * per_mille + 999) / 1000;

	return rank == 0 ? 0 : rank - 1;
}

void
app_lat_summary(uint64_t *v, uint64_t n, double scale, struct app_lat *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		sum += (double)v[i];
	out->n = n;
	out->min = (double)v[0] * scale;
	out->max = (double)v[n - 1] * scale;
	out->avg = sum / (double)n * scale;
	out->p50 = (double)v[app_lat_rank(n, 500)] * scale;
	out->p99 = (double)v[app_lat_rank(n, 990)] * scale;
	out->p999 = (double)v[app_lat_rank(n, 999)] * scale;
}
