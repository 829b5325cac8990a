/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reflection completion: node 0 puts 8 KiB to node 2 of a 3x1x1 torus and asks for a
 * completion in delivery mode: after the data, a reflection descriptor makes node 2's engine
 * send a completion back once the bytes are in its memory, with no application running on
 * node 2. The completion arrives in node 0's reception FIFO 1 as an empty message whose user
 * word is our cookie. All three nodes in this process, polled inline.
 *
 *   ./build/examples/reflect
 */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <toroid/toroid.h>

#define LEN        8192
#define COOKIE     0xC0FFEEull
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "--no-pci",    "--no-shconf",   "-m", "512",
		       "-l",    "0",         "--log-level", "lib.eal:error", NULL};
	static uint8_t src[LEN], dst[LEN];
	struct trd_net_conf nc = {0};
	struct trd_desc d;
	struct trd_msg *m;
	int rc = 1;

	(void)argc;
	if (rte_eal_init(10, eal) < 0)
		return 1;
	trd_torus_init(&nc.torus, 3, 1, 1);
	struct trd_net *net = trd_net_create(&nc);
	if (net == NULL) {
		fprintf(stderr, "reflect: net: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	struct trd_node *a = trd_net_node(net, 0), *c = trd_net_node(net, 2);
	struct trd_mr *mr = trd_mr_register(c, dst, sizeof(dst), TRD_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		goto out;

	memset(src, 0xab, sizeof(src));
	trd_desc_put(&d, trd_node_coord(c), src, LEN, trd_mr_key(mr), 0, 0, 0);
	/* the data, then the reflection that brings the completion back */
	struct trd_cpl_spec spec = {
		.kind = TRD_CPL_FIFO,     /* an empty message in a reception FIFO of ours */
		.mode = TRD_CPL_DELIVERY, /* sent by the target once the data is in its memory */
		.fifo = 1,
		.cookie = COOKIE,
	};
	if (trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec) != 0)
		goto out;

	if (trd_rec_fifo_wait(trd_rec_fifo(a, 1), &m, TIMEOUT_US) != 0) {
		fprintf(stderr, "reflect: no completion\n");
		goto out;
	}
	/* the completion came after the data: dst already holds it */
	if (m->user == COOKIE && m->status == 0 && memcmp(dst, src, LEN) == 0) {
		printf("reflect: completion %#llx from %u,%u,%u, %u bytes in place\n",
		       (unsigned long long)m->user, m->src.x, m->src.y, m->src.z, LEN);
		rc = 0;
	} else {
		fprintf(stderr, "reflect: wrong completion or data\n");
	}
	trd_msg_free(m);
out:
	trd_net_free(net);
	rte_eal_cleanup();
	return rc;
}
