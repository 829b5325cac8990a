/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sleeping on an event queue: node 1 binds its reception FIFO 0 and a doorbell page to one
 * event queue and waits on it (trd_eq_wait(): poll, arm, sleep on the queue's descriptor).
 * Node 0 sends it three messages, then writes 8 bytes into the doorbell page. Node 1 gets one
 * TRD_EV_FIFO event per message (FIFO, length, user word), then reads the messages themselves
 * from the FIFO, and one TRD_EV_DOORBELL event for the write (region key, offset, length).
 * Two nodes of a 2x1x1 torus: in this process, polled inline, or (--attach) two nodes of a
 * toroid-node (example.h), where the queue is the library's, fed by the FIFO.
 *
 *   ./build/examples/event_queue [--attach SOCKET]
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include <toroid/toroid.h>

#include "example.h"

#define N_MSG      3
#define LEN        100
#define DB_OFFSET  64
#define TIMEOUT_US 5000000

/* node 1: every event of the three messages and of the write, in turn. 0 or -1. */
static int
wait_events(struct trd_eq *q, struct trd_rec_fifo *rf, const struct trd_mr *db)
{
	struct trd_event ev[8];
	unsigned int msgs = 0, bells = 0;

	while (msgs < N_MSG || bells < 1) {
		int n = trd_eq_wait(q, ev, RTE_DIM(ev), TIMEOUT_US);

		if (n < 0) {
			fprintf(stderr, "event_queue: trd_eq_wait: %s\n", strerror(-n));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].type == TRD_EV_FIFO && ev[i].fifo == trd_rec_fifo_id(rf) &&
			    ev[i].len == LEN && ev[i].value == 100 + msgs) {
				msgs++;
			} else if (ev[i].type == TRD_EV_DOORBELL && ev[i].key == trd_mr_key(db) &&
				   ev[i].value == DB_OFFSET && ev[i].len == 8) {
				bells++;
			} else {
				fprintf(stderr, "event_queue: an event not expected (type %u)\n",
					ev[i].type);
				return -1;
			}
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct trd_mr *db = NULL;
	struct example ex;
	struct trd_desc d;
	uint64_t bell = 0x0123456789abcdefull;
	int rc = 1;

	if (example_open(&ex, argc, argv, 2) != 0)
		return 1;
	struct trd_node *a = ex.node[0], *b = ex.node[1];
	struct trd_rec_fifo *rf = trd_rec_fifo(b, 0);
	struct trd_eq *q = trd_eq_create(b, -1, 64);
	uint8_t *src = trd_mem_alloc(a, N_MSG * LEN), *mem = trd_mem_alloc(b, 2 * page), *page_b;

	if (q == NULL || rf == NULL || src == NULL || mem == NULL ||
	    trd_rec_fifo_set_eq(rf, q) != 0)
		goto out;
	/* a doorbell page of node 1: every write of the engine into it is an event of q */
	page_b = (uint8_t *)RTE_ALIGN_CEIL((uintptr_t)mem, page);
	db = trd_doorbell_register(b, page_b, page, q);
	if (db == NULL)
		goto out;

	/* node 0: three messages, then the doorbell (its 8 bytes carried in the descriptor) */
	for (unsigned int i = 0; i < N_MSG; i++) {
		memset(src + i * LEN, 'a' + (int)i, LEN);
		trd_desc_fifo(&d, trd_node_coord(b), trd_rec_fifo_id(rf), src + i * LEN, LEN,
			      100 + i, 0);
		if (trd_inject(trd_inj_fifo(a, 0), &d) != 0)
			goto out;
	}
	trd_desc_put(&d, trd_node_coord(b), NULL, 8, trd_mr_key(db), DB_OFFSET, 0, 0);
	d.flags |= TRD_DF_IMM;
	d.user = bell;
	if (trd_inject(trd_inj_fifo(a, 0), &d) != 0)
		goto out;

	if (wait_events(q, rf, db) != 0)
		goto out;
	/* the events said where: the messages are in the FIFO, the word in the page */
	for (unsigned int i = 0; i < N_MSG; i++) {
		struct trd_msg *m;

		if (trd_rec_fifo_poll(rf, &m, 1) != 1)
			goto out;
		if (m->len != LEN || m->user != 100 + i ||
		    ((const uint8_t *)m->data)[0] != 'a' + i) {
			trd_msg_free(m);
			goto out;
		}
		trd_msg_free(m);
	}
	if (memcmp(page_b + DB_OFFSET, &bell, 8) != 0)
		goto out;
	printf("event_queue: %d message events and a doorbell event%s\n", N_MSG,
	       ex.attached ? " (attached)" : "");
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "event_queue: failed\n");
	if (db != NULL)
		trd_mr_deregister(db);
	trd_mem_free(a, src);
	trd_mem_free(b, mem);
	example_close(&ex);
	return rc;
}
