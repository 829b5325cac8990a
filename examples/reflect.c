/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reflection completion: node 0 puts 8 KiB to node 2 of a 3x1x1 torus and asks for a
 * completion in delivery mode: after the data, a reflection descriptor makes node 2's engine
 * send a completion back once the bytes are in its memory, with no application running on
 * node 2. The completion arrives in node 0's reception FIFO 1 as an empty message whose user
 * word is our cookie. The three nodes in this process, polled inline, or (--attach) three
 * nodes of a toroid-node (example.h).
 *
 *   ./build/examples/reflect [--attach SOCKET]
 */
#include <stdio.h>
#include <string.h>

#include <toroid/toroid.h>

#include "example.h"

#define LEN        8192
#define COOKIE     0xC0FFEEull
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	struct example ex;
	struct trd_desc d;
	struct trd_msg *m;
	int rc = 1;

	if (example_open(&ex, argc, argv, 3) != 0)
		return 1;
	struct trd_node *a = ex.node[0], *c = ex.node[2];
	uint8_t *src = trd_mem_alloc(a, LEN), *dst = trd_mem_alloc(c, LEN);
	struct trd_mr *mr =
		dst != NULL ? trd_mr_register(c, dst, LEN, TRD_ACCESS_REMOTE_WRITE) : NULL;
	if (src == NULL || mr == NULL)
		goto out;

	memset(src, 0xab, LEN);
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
		printf("reflect: completion %#llx from %u,%u,%u, %u bytes in place%s\n",
		       (unsigned long long)m->user, m->src.x, m->src.y, m->src.z, LEN,
		       ex.attached ? " (attached)" : "");
		rc = 0;
	} else {
		fprintf(stderr, "reflect: wrong completion or data\n");
	}
	trd_msg_free(m);
out:
	if (mr != NULL)
		trd_mr_deregister(mr);
	trd_mem_free(a, src);
	trd_mem_free(c, dst);
	example_close(&ex);
	return rc;
}
