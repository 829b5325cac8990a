/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An RDMA read through the messaging layer (include/toroid/msg.h): task 0 reads 32 KiB from
 * a region of task 1. The read is one remote get carrying a put-back descriptor: task 1's
 * engine sends the bytes with no application code running there. The completion callback
 * runs inside trd_advance() once every byte has landed. Two nodes of a 2x1x1 torus in this
 * process, one context on each.
 *
 *   ./build/examples/rdma_read
 */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <toroid/msg.h>
#include <toroid/toroid.h>

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
	char *eal[] = {argv[0], "--no-huge", "--no-pci",    "--no-shconf",   "-m", "512",
		       "-l",    "0",         "--log-level", "lib.eal:error", NULL};
	static uint8_t remote[LEN], local[LEN];
	struct trd_net_conf nc = {0};
	struct trd_context *ctx[2];
	struct trd_ep task1;
	int rc = 1;

	(void)argc;
	if (rte_eal_init(10, eal) < 0)
		return 1;
	trd_torus_init(&nc.torus, 2, 1, 1);
	struct trd_net *net = trd_net_create(&nc);
	struct trd_client *cl = trd_client_create("example", NULL);
	if (net == NULL || cl == NULL) {
		fprintf(stderr, "rdma_read: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	/* one context per task (node), alike on both: injection FIFO 0, outcomes in FIFO 1 */
	for (unsigned int t = 0; t < 2; t++) {
		struct trd_context_conf cc = {.node = trd_net_node(net, t),
					      .inj_fifo = 0,
					      .cpl_fifo = 1,
					      .recv_fifo = TRD_NO_FIFO};

		ctx[t] = trd_context_create(cl, &cc);
		if (ctx[t] == NULL)
			goto out;
	}
	/* task 1 exposes what it has; task 0 names where the bytes may be written */
	for (unsigned int i = 0; i < LEN; i++)
		remote[i] = (uint8_t)(i * 13);
	struct trd_mr *rmr =
		trd_mr_register(trd_net_node(net, 1), remote, LEN, TRD_ACCESS_REMOTE_READ);
	struct trd_mr *lmr =
		trd_mr_register(trd_net_node(net, 0), local, LEN, TRD_ACCESS_REMOTE_WRITE);
	if (rmr == NULL || lmr == NULL || trd_endpoint(cl, 1, 0, &task1) != 0)
		goto out;

	if (trd_rdma_read(ctx[0], local, &task1, 0, trd_mr_key(rmr), LEN, on_read, NULL) != 0)
		goto out;
	for (uint64_t t0 = trd_time_us(); done == 1 && trd_time_us() - t0 < TIMEOUT_US;)
		trd_advance(ctx[0], 0); /* starts the read, makes progress, runs the callback */
	if (done == 0 && memcmp(local, remote, LEN) == 0) {
		printf("rdma_read: %u bytes read from task 1\n", LEN);
		rc = 0;
	} else {
		fprintf(stderr, "rdma_read: status %d\n", done);
	}
out:
	trd_client_destroy(cl);
	trd_net_free(net);
	rte_eal_cleanup();
	return rc;
}
