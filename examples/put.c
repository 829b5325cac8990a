/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A direct put: node 0 writes 64 KiB into a region node 1 registered, and learns it landed
 * from a byte counter that reaches zero. Two nodes of a 2x1x1 torus: in this process, joined
 * by a ring link and polled inline by every wait, or (--attach) two nodes of a toroid-node,
 * this process attached to both (example.h).
 *
 *   ./build/examples/put [--attach SOCKET]
 */
#include <stdio.h>
#include <string.h>

#include <toroid/toroid.h>

#include "example.h"

#define LEN        (64 * 1024)
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	struct example ex;
	struct trd_desc d;
	uint16_t landed;
	int rc = 1;

	if (example_open(&ex, argc, argv, 2) != 0)
		return 1;
	struct trd_node *a = ex.node[0], *b = ex.node[1];
	/* memory each engine reads and writes directly */
	uint8_t *src = trd_mem_alloc(a, LEN), *dst = trd_mem_alloc(b, LEN);

	/* the target: a region others may write, and a counter of the bytes still to land */
	struct trd_mr *mr =
		dst != NULL ? trd_mr_register(b, dst, LEN, TRD_ACCESS_REMOTE_WRITE) : NULL;
	if (src == NULL || mr == NULL || trd_counter_alloc(b, &landed) != 0 ||
	    trd_counter_set(b, landed, LEN) != 0)
		goto out;

	/* the origin: one descriptor, put into an injection FIFO; the engine cuts it into
	 * frames (64 KiB over a 1500-byte link: 46 of them) */
	for (unsigned int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 7);
	trd_desc_put(&d, trd_node_coord(b), src, LEN, trd_mr_key(mr), 0, 0, landed);
	if (trd_inject(trd_inj_fifo(a, 0), &d) != 0)
		goto out;

	/* zero: every byte is in dst */
	if (trd_counter_wait(b, landed, TIMEOUT_US) != 0 || memcmp(src, dst, LEN) != 0) {
		fprintf(stderr, "put: the data did not land\n");
		goto out;
	}
	printf("put: %u bytes landed in node 1's region, counter at zero%s\n", LEN,
	       ex.attached ? " (attached)" : "");
	rc = 0;
out:
	if (mr != NULL)
		trd_mr_deregister(mr);
	trd_mem_free(a, src);
	trd_mem_free(b, dst);
	example_close(&ex);
	return rc;
}
