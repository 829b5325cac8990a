/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: set-up and tear-down: the torus, links, regions, counters, event queues. */
#include "demo.h"

/* ---- set-up and tear-down ---- */

int
demo_setup_node(struct demo *dm, unsigned int rank)
{
	struct demo_node *dn = &dm->nodes[rank];
	int rc;

	dn->rank = rank;
	dn->node = trd_net_node(dm->net, rank);
	if (dn->node == NULL) {
		fprintf(stderr, "toroid-demo: trd_net_node(%u) returned NULL\n", rank);
		return -ENODEV;
	}
	dn->coord = trd_node_coord(dn->node);
	dn->inj = trd_inj_fifo(dn->node, DEMO_INJ_FIFO);
	dn->rec = trd_rec_fifo(dn->node, DEMO_REC_FIFO);
	dn->rinj = trd_inj_fifo(dn->node, DEMO_REFL_INJ_FIFO);
	dn->cpl = trd_rec_fifo(dn->node, DEMO_CPL_REC_FIFO);
	if (dn->inj == NULL || dn->rec == NULL || trd_inj_fifo(dn->node, DEMO_RGET_FIFO) == NULL ||
	    dn->rinj == NULL || dn->cpl == NULL) {
		fprintf(stderr, "toroid-demo: node %u lacks the FIFOs the demo uses\n", rank);
		return -ENODEV;
	}
	dn->wbuf = aligned_alloc(64, dm->buf_len);
	dn->rbuf = aligned_alloc(64, dm->buf_len);
	if (dn->wbuf == NULL || dn->rbuf == NULL) {
		fprintf(stderr, "toroid-demo: out of memory for node %u's regions\n", rank);
		return -ENOMEM;
	}
	memset(dn->wbuf, 0, dm->buf_len);
	memset(dn->rbuf, 0, dm->buf_len);
	dn->wmr = trd_mr_register(dn->node, dn->wbuf, dm->buf_len, TRD_ACCESS_REMOTE_WRITE);
	if (dn->wmr == NULL)
		goto mr_fail;
	dn->rmr = trd_mr_register(dn->node, dn->rbuf, dm->buf_len, TRD_ACCESS_REMOTE_READ);
	if (dn->rmr == NULL)
		goto mr_fail;
	rc = trd_counter_alloc(dn->node, &dn->ctr_inj);
	if (rc == 0)
		rc = trd_counter_alloc(dn->node, &dn->ctr_rec);
	if (rc != 0) {
		fprintf(stderr, "toroid-demo: trd_counter_alloc(node %u): %s\n", rank,
			rte_strerror(-rc));
		return rc;
	}

	/* The doorbell page signals an event queue that this (the demo) thread owns. */
	dn->eq = trd_node_eq(dn->node, 0);
	if (dn->eq == NULL)
		dn->eq = trd_eq_create(dn->node, -1, 0);
	if (dn->eq == NULL) {
		fprintf(stderr, "toroid-demo: trd_eq_create(node %u): %s\n", rank,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	rc = trd_eq_bind(dn->eq, -1);
	if (rc != 0) {
		fprintf(stderr, "toroid-demo: trd_eq_bind(node %u): %s\n", rank, rte_strerror(-rc));
		return rc;
	}
	dn->db = aligned_alloc(dm->db_len, dm->db_len);
	if (dn->db == NULL) {
		fprintf(stderr, "toroid-demo: out of memory for node %u's doorbell page\n", rank);
		return -ENOMEM;
	}
	memset(dn->db, 0, dm->db_len);
	dn->dbmr = trd_doorbell_register(dn->node, dn->db, dm->db_len, dn->eq);
	if (dn->dbmr == NULL) {
		fprintf(stderr, "toroid-demo: trd_doorbell_register(node %u): %s\n", rank,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
mr_fail:
	fprintf(stderr, "toroid-demo: trd_mr_register(node %u): %s\n", rank,
		rte_strerror(rte_errno));
	return -rte_errno;
}

void
demo_teardown(struct demo *dm)
{
	int rc;

	if (dm->net != NULL) {
		/* Stop the engine first: nothing may touch the regions after this. */
		rc = trd_net_stop(dm->net);
		if (rc != 0)
			fprintf(stderr, "toroid-demo: trd_net_stop: %s\n", rte_strerror(-rc));
	}
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct demo_node *dn = &dm->nodes[r];

		if (dn->ctr_inj != 0 && (rc = trd_counter_free(dn->node, dn->ctr_inj)) != 0)
			fprintf(stderr, "toroid-demo: trd_counter_free: %s\n", rte_strerror(-rc));
		if (dn->ctr_rec != 0 && (rc = trd_counter_free(dn->node, dn->ctr_rec)) != 0)
			fprintf(stderr, "toroid-demo: trd_counter_free: %s\n", rte_strerror(-rc));
		if (dn->wmr != NULL && (rc = trd_mr_deregister(dn->wmr)) != 0)
			fprintf(stderr, "toroid-demo: trd_mr_deregister: %s\n", rte_strerror(-rc));
		if (dn->rmr != NULL && (rc = trd_mr_deregister(dn->rmr)) != 0)
			fprintf(stderr, "toroid-demo: trd_mr_deregister: %s\n", rte_strerror(-rc));
		if (dn->dbmr != NULL && (rc = trd_mr_deregister(dn->dbmr)) != 0)
			fprintf(stderr, "toroid-demo: trd_mr_deregister: %s\n", rte_strerror(-rc));
	}
	trd_net_free(dm->net);
	dm->net = NULL;
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		free(dm->nodes[r].wbuf);
		free(dm->nodes[r].rbuf);
		free(dm->nodes[r].db);
	}
	free(dm->src);
	free(dm->kept);
}
