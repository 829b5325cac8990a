/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf between two processes: allreduce_lat, the engine allreduce of the two nodes
 * (comb.h, docs/collectives.md), each side posting its part, and its bandwidth against the
 * link's puts (put_bw) of the same run.
 */
#include <stdio.h>
#include <string.h>

#include <toroid/comb.h>
#include <toroid/toroid.h>

#include "perf_pvt.h"
#include "twoproc.h"

/* Post one engine allreduce (sum of @p size / 8 doubles, at least one) on @p node: the
 * source at @p mem, the result 1 MiB on (a region of 2 MiB or more); the client's node
 * (0,0,0) is the root. Counter @p ctr goes from 1 to 0 when it completes here. */
int
tp_comb_post(struct trd_node *node, uint8_t *mem, uint16_t ctr, uint32_t size)
{
	uint32_t count = size < 8 ? 1 : size / 8;
	struct trd_comb_req rq = {.kind = TRD_COMB_ALLREDUCE,
				  .op = TRD_COMB_SUM,
				  .dtype = TRD_COMB_DOUBLE,
				  .dims = TRD_COMB_TORUS,
				  .root = {0, 0, 0},
				  .counter = ctr,
				  .count = count,
				  .src = mem,
				  .dst = mem + TRD_COMB_MAX_LEN};
	int rc = trd_counter_set(node, ctr, 1);

	return rc != 0 ? rc : trd_comb_post(node, &rq);
}

/* allreduce_lat beside put_bw of the same size in this run: the allreduce's bandwidth (size
 * over p50: both directions of the link carry it at once) against the link's puts. */
void
tp_comb_ratio(const char *const names[], unsigned int n_names,
	      struct perf_result res[][PERF_MAX_SIZES])
{
	unsigned int ar = n_names, bw = n_names;

	for (unsigned int t = 0; t < n_names; t++) {
		if (strcmp(names[t], "allreduce_lat") == 0)
			ar = t;
		else if (strcmp(names[t], "put_bw") == 0)
			bw = t;
	}
	if (ar == n_names || bw == n_names)
		return;
	for (unsigned int z = 0; z < perf_opt.n_sizes; z++) {
		const struct perf_result *a = &res[ar][z], *b = &res[bw][z];
		double amb;

		if (a->test == NULL || b->test == NULL || a->p50 <= 0 || b->mbps <= 0)
			continue;
		amb = a->size / a->p50; /* bytes per microsecond: MB/s */
		if (perf_opt.json)
			printf("{\"test\":\"allreduce_ratio\",\"size\":%u,\"allreduce_mbps\":%.2f,"
			       "\"put_bw_mbps\":%.2f,\"allreduce_vs_put_bw\":%.4f}\n",
			       a->size, amb, b->mbps, amb / b->mbps);
		else
			printf("allreduce_ratio %9u  MB/s: allreduce %.1f (size / p50) put_bw %.1f, "
			       "allreduce/put_bw %.3f\n",
			       a->size, amb, b->mbps, amb / b->mbps);
	}
	fflush(stdout);
}
