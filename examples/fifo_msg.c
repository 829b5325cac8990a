/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A memory-FIFO message: node 0 sends a 3 000-byte message with a user word to reception
 * FIFO 0 of node 1, which takes it whole (the engine reassembled its three frames) and frees
 * it. Two nodes of a 2x1x1 torus: in this process, polled inline, or (--attach) two nodes of
 * a toroid-node (example.h).
 *
 *   ./build/examples/fifo_msg [--attach SOCKET]
 */
#include <stdio.h>
#include <string.h>

#include <toroid/toroid.h>

#include "example.h"

#define LEN        3000
#define TIMEOUT_US 5000000

int
main(int argc, char **argv)
{
	struct example ex;
	struct trd_msg *m;
	struct trd_desc d;
	int rc = 1;

	if (example_open(&ex, argc, argv, 2) != 0)
		return 1;
	struct trd_node *a = ex.node[0], *b = ex.node[1];
	struct trd_rec_fifo *rf = trd_rec_fifo(b, 0);
	uint8_t *src = trd_mem_alloc(a, LEN);

	if (src == NULL || rf == NULL)
		goto out;
	for (unsigned int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	/* to node 1's reception FIFO 0 (by the id senders name: trd_rec_fifo_id()), user
	 * word 42; no injection counter */
	trd_desc_fifo(&d, trd_node_coord(b), trd_rec_fifo_id(rf), src, LEN, 42, 0);
	if (trd_inject(trd_inj_fifo(a, 0), &d) != 0)
		goto out;

	/* the message arrives whole, with its sender and user word */
	if (trd_rec_fifo_wait(rf, &m, TIMEOUT_US) != 0)
		goto out;
	if (m->len == LEN && m->user == 42 && memcmp(m->data, src, LEN) == 0) {
		printf("fifo_msg: %u bytes from %u,%u,%u, user word %llu%s\n", m->len, m->src.x,
		       m->src.y, m->src.z, (unsigned long long)m->user,
		       ex.attached ? " (attached)" : "");
		rc = 0;
	} else {
		fprintf(stderr, "fifo_msg: the message is not what was sent\n");
	}
	trd_msg_free(m);
out:
	trd_mem_free(a, src);
	example_close(&ex);
	return rc;
}
