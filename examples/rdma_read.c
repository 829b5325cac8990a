/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An RDMA read through the messaging layer (include/toroid/msg.h): task 0 reads 32 KiB from
 * a region of task 1. The read is one remote get carrying a put-back descriptor: task 1's
 * engine sends the bytes with no application code running there. The completion callback
 * runs inside trd_advance() once every byte has landed. Two nodes of a 2x1x1 torus, one
 * context on each: in this process, polled inline, or (--attach) two nodes of a toroid-node,
 * this process attached to both (example.h).
 *
 *   ./build/examples/rdma_read [--attach SOCKET]
 */
#include <stdio.h>
#include <string.h>

#include <toroid/msg.h>
#include <toroid/toroid.h>

#include "example.h"

#define LEN        (32 * 1024)
#define TIMEOUT_US 5000000

static int done = 1; /* the callback's status; 1: not yet */

static void
on_read(struct trd_context *ctx, void *cookie, int status)
{
	(void)ctx;
	(void)cookie;
	done = status;
}

int
main(int argc, char **argv)
{
	struct trd_mr *rmr = NULL, *lmr = NULL;
	struct trd_context *ctx;
	struct trd_client *cl;
	struct example ex;
	struct trd_ep task1;
	int rc = 1;

	if (example_open(&ex, argc, argv, 2) != 0)
		return 1;
	/* memory each engine reads and writes directly */
	uint8_t *remote = trd_mem_alloc(ex.node[1], LEN), *local = trd_mem_alloc(ex.node[0], LEN);
	cl = trd_client_create("example", NULL);
	if (remote == NULL || local == NULL || cl == NULL)
		goto out;
	/* one context per task (node), alike on both: injection FIFO 0, outcomes in FIFO 1 */
	for (unsigned int t = 0; t < 2; t++) {
		struct trd_context_conf cc = {
			.node = ex.node[t], .inj_fifo = 0, .cpl_fifo = 1, .recv_fifo = TRD_NO_FIFO};

		if (trd_context_create(cl, &cc) == NULL)
			goto out;
	}
	ctx = trd_client_context(cl, 0);
	/* task 1 exposes what it has; task 0 names where the bytes may be written */
	for (unsigned int i = 0; i < LEN; i++)
		remote[i] = (uint8_t)(i * 13);
	rmr = trd_mr_register(ex.node[1], remote, LEN, TRD_ACCESS_REMOTE_READ);
	lmr = trd_mr_register(ex.node[0], local, LEN, TRD_ACCESS_REMOTE_WRITE);
	if (rmr == NULL || lmr == NULL || trd_endpoint(cl, 1, 0, &task1) != 0)
		goto out;

	if (trd_rdma_read(ctx, local, &task1, 0, trd_mr_key(rmr), LEN, on_read, NULL) != 0)
		goto out;
	for (uint64_t t0 = trd_time_us(); done == 1 && trd_time_us() - t0 < TIMEOUT_US;)
		trd_advance(ctx, 0); /* starts the read, makes progress, runs the callback */
	if (done == 0 && memcmp(local, remote, LEN) == 0) {
		printf("rdma_read: %u bytes read from task 1%s\n", LEN,
		       ex.attached ? " (attached)" : "");
		rc = 0;
	} else {
		fprintf(stderr, "rdma_read: status %d\n", done);
	}
out:
	if (rc != 0 && done == 1)
		fprintf(stderr, "rdma_read: setup: %s\n", rte_strerror(rte_errno));
	trd_client_destroy(cl);
	if (rmr != NULL)
		trd_mr_deregister(rmr);
	if (lmr != NULL)
		trd_mr_deregister(lmr);
	trd_mem_free(ex.node[1], remote);
	trd_mem_free(ex.node[0], local);
	example_close(&ex);
	return rc;
}
