/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A direct put: node 0 writes 64 KiB into a region node 1 registered, and learns it landed
 * from a byte counter that reaches zero. Two nodes of a 2x1x1 torus in this process, joined
 * by a ring link; no lcore serves them, so every wait polls them inline.
 *
 *   ./build/examples/put
 */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <toroid/toroid.h>

#define LEN        (64 * 1024)
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "--no-pci",    "--no-shconf",   "-m", "512",
		       "-l",    "0",         "--log-level", "lib.eal:error", NULL};
	static uint8_t src[LEN], dst[LEN];
	struct trd_net_conf nc = {0};
	struct trd_desc d;
	uint16_t landed;
	int rc = 1;

	(void)argc;
	if (rte_eal_init(10, eal) < 0)
		return 1;
	trd_torus_init(&nc.torus, 2, 1, 1);
	struct trd_net *net = trd_net_create(&nc);
	if (net == NULL) {
		fprintf(stderr, "put: net: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	struct trd_node *a = trd_net_node(net, 0), *b = trd_net_node(net, 1);

	/* the target: a region others may write, and a counter of the bytes still to land */
	struct trd_mr *mr = trd_mr_register(b, dst, sizeof(dst), TRD_ACCESS_REMOTE_WRITE);
	if (mr == NULL || trd_counter_alloc(b, &landed) != 0 ||
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
	printf("put: %u bytes landed in node 1's region, counter at zero\n", LEN);
	rc = 0;
out:
	trd_net_free(net);
	rte_eal_cleanup();
	return rc;
}
