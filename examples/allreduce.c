/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The torus combines: the four nodes of a 4x1x1 torus sum a vector of 1000 doubles with an
 * allreduce that the engines compute themselves (trd_comb_post()), then meet at a barrier.
 * Each node posts its part and waits on a counter; no application code runs in between: the
 * engine of each node adds its children's pieces to its own as they arrive, sends the sum up
 * the tree and the root's result back down. The four nodes in this process, polled inline,
 * or (--attach) four nodes of a toroid-node, one handle each (example.h).
 *
 *   ./build/examples/allreduce [--attach SOCKET]
 */
#include <stdio.h>
#include <string.h>

#include <toroid/comb.h>
#include <toroid/toroid.h>

#include "example.h"

#define NODES      4
#define COUNT      1000
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	struct example ex;
	double *src[NODES] = {0}, *dst[NODES] = {0};
	struct trd_mr *mr[NODES] = {0};
	uint16_t ctr[NODES] = {0};
	int rc = 1, bad = 0;

	if (example_open(&ex, argc, argv, NODES) != 0)
		return 1;
	for (unsigned int r = 0; r < NODES; r++) {
		struct trd_node *n = ex.node[r];

		/* the engine reads src and writes dst: memory of the node, registered */
		src[r] = trd_mem_alloc(n, 2 * COUNT * sizeof(double));
		mr[r] = src[r] != NULL ? trd_mr_register(n, src[r], 2 * COUNT * sizeof(double), 0)
				       : NULL;
		if (mr[r] == NULL || trd_counter_alloc(n, &ctr[r]) != 0)
			goto out;
		dst[r] = src[r] + COUNT;
		for (unsigned int i = 0; i < COUNT; i++)
			src[r][i] = r * 1000.0 + i;
	}

	/* every node posts the same collectives in the same order: an allreduce, a barrier */
	for (unsigned int r = 0; r < NODES; r++) {
		struct trd_comb_req rq = {
			.kind = TRD_COMB_ALLREDUCE,
			.op = TRD_COMB_SUM,
			.dtype = TRD_COMB_DOUBLE,
			.dims = TRD_COMB_TORUS, /* the group: the whole torus */
			.root = {0, 0, 0},      /* the same on every node */
			.counter = ctr[r],      /* 1 is subtracted at the end */
			.count = COUNT,
			.src = src[r],
			.dst = dst[r],
		};

		if (trd_counter_set(ex.node[r], ctr[r], 1) != 0 ||
		    trd_comb_post(ex.node[r], &rq) != 0) {
			fprintf(stderr, "allreduce: post at node %u failed\n", r);
			goto out;
		}
	}
	for (unsigned int r = 0; r < NODES; r++)
		if (trd_counter_wait(ex.node[r], ctr[r], TIMEOUT_US) != 0) {
			fprintf(stderr, "allreduce: node %u not done\n", r);
			goto out;
		}
	/* element i of the sum: (0 + 1 + 2 + 3) * 1000 + 4 * i, the same on every node */
	for (unsigned int r = 0; r < NODES; r++)
		for (unsigned int i = 0; i < COUNT; i++)
			bad += dst[r][i] != 6000.0 + 4.0 * i;
	if (bad != 0) {
		fprintf(stderr, "allreduce: %d wrong elements\n", bad);
		goto out;
	}

	for (unsigned int r = 0; r < NODES; r++) {
		struct trd_comb_req rq = {.kind = TRD_COMB_BARRIER, .counter = ctr[r]};

		if (trd_counter_set(ex.node[r], ctr[r], 1) != 0 ||
		    trd_comb_post(ex.node[r], &rq) != 0)
			goto out;
	}
	for (unsigned int r = 0; r < NODES; r++)
		if (trd_counter_wait(ex.node[r], ctr[r], TIMEOUT_US) != 0) {
			fprintf(stderr, "allreduce: barrier at node %u not done\n", r);
			goto out;
		}
	printf("allreduce: %u doubles summed over %u nodes by the engines, then a barrier%s\n",
	       COUNT, NODES, ex.attached ? " (attached)" : "");
	rc = 0;
out:
	for (unsigned int r = 0; r < NODES; r++) {
		if (mr[r] != NULL)
			trd_mr_deregister(mr[r]);
		trd_mem_free(ex.node[r], src[r]);
	}
	example_close(&ex);
	return rc;
}
