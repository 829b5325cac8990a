/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A memory-FIFO message: node 0 sends a 3 000-byte message with a user word to reception
 * FIFO 0 of node 1, which takes it whole (the engine reassembled its three frames) and frees
 * it. Two nodes of a 2x1x1 torus in this process, polled inline.
 *
 *   ./build/examples/fifo_msg
 */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <toroid/toroid.h>

#define LEN        3000
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "--no-pci",    "--no-shconf",   "-m", "512",
		       "-l",    "0",         "--log-level", "lib.eal:error", NULL};
	static uint8_t src[LEN];
	struct trd_net_conf nc = {0};
	struct trd_msg *m;
	struct trd_desc d;
	int rc = 1;

	(void)argc;
	if (rte_eal_init(10, eal) < 0)
		return 1;
	trd_torus_init(&nc.torus, 2, 1, 1);
	struct trd_net *net = trd_net_create(&nc);
	if (net == NULL) {
		fprintf(stderr, "fifo_msg: net: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	struct trd_node *a = trd_net_node(net, 0), *b = trd_net_node(net, 1);

	for (unsigned int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	/* to reception FIFO 0 of node 1, user word 42; no injection counter */
	trd_desc_fifo(&d, trd_node_coord(b), 0, src, LEN, 42, 0);
	if (trd_inject(trd_inj_fifo(a, 0), &d) != 0)
		goto out;

	/* the message arrives whole, with its sender and user word */
	if (trd_rec_fifo_wait(trd_rec_fifo(b, 0), &m, TIMEOUT_US) != 0)
		goto out;
	if (m->len == LEN && m->user == 42 && memcmp(m->data, src, LEN) == 0) {
		printf("fifo_msg: %u bytes from %u,%u,%u, user word %llu\n", m->len, m->src.x,
		       m->src.y, m->src.z, (unsigned long long)m->user);
		rc = 0;
	} else {
		fprintf(stderr, "fifo_msg: the message is not what was sent\n");
	}
	trd_msg_free(m);
out:
	trd_net_free(net);
	rte_eal_cleanup();
	return rc;
}
