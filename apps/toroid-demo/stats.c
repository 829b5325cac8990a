/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: statistics of the run. */
#include "demo.h"

/* ---- statistics ---- */

int
demo_snapshot(struct demo *dm, struct trd_node_stats *st)
{
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		int rc = trd_node_stats_get(dm->nodes[r].node, &st[r]);

		if (rc != 0) {
			printf("toroid-demo: trd_node_stats_get(node %u): %s\n", r,
			       rte_strerror(-rc));
			memset(&st[r], 0, sizeof(st[r]));
			return rc;
		}
	}
	return 0;
}

uint64_t
demo_stat_sum(const struct demo *dm, const struct trd_node_stats *a, const struct trd_node_stats *b,
	      enum trd_node_stat s)
{
	uint64_t v = 0;

	for (unsigned int r = 0; r < dm->n_nodes; r++)
		v += b[r].stat[s] - a[r].stat[s];
	return v;
}

/* One line of the non-zero differences of a node's statistics, drops by cause. */
void
demo_print_node_delta(const char *label, const struct demo_node *dn, const struct trd_node_stats *a,
		      const struct trd_node_stats *b)
{
	char c[16];
	bool any = false;

	printf("    %s %s %s:", label, trd_node_name(dn->node),
	       demo_coord_str(dn->coord, c, sizeof(c)));
	for (unsigned int s = 0; s < TRD_STAT_MAX; s++) {
		if (b->stat[s] != a->stat[s]) {
			printf(" %s=%" PRIu64, trd_stat_name(s), b->stat[s] - a->stat[s]);
			any = true;
		}
	}
	for (unsigned int s = 0; s < TRD_DROP_MAX; s++) {
		if (b->drop[s] != a->drop[s]) {
			printf(" drop.%s=%" PRIu64, trd_drop_name(s), b->drop[s] - a->drop[s]);
			any = true;
		}
	}
	printf("%s\n", any ? "" : " (no change)");
}

/* After a failure: let late packets land, then empty the reception FIFOs so they do not
 * spoil the next transfers. */
void
demo_settle(struct demo *dm)
{
	struct trd_node_stats st[DEMO_MAX_NODES];
	uint64_t last = UINT64_MAX, quiet_since = trd_time_us(), deadline;
	unsigned int stale = 0;

	deadline = quiet_since + DEMO_SETTLE_MAX_US;
	while (!demo_signal && trd_time_us() < deadline) {
		uint64_t now, sum = 0;

		if (demo_snapshot(dm, st) != 0)
			break;
		for (unsigned int r = 0; r < dm->n_nodes; r++)
			sum += st[r].stat[TRD_STAT_TX_PKTS] + st[r].stat[TRD_STAT_RX_PKTS] +
			       st[r].stat[TRD_STAT_DROPS];
		now = trd_time_us();
		if (sum != last) {
			last = sum;
			quiet_since = now;
		} else if (now - quiet_since >= DEMO_SETTLE_QUIET_US) {
			break;
		}
		trd_node_progress(dm->nodes[0].node);
	}
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct trd_msg *msgs[32];
		int n;

		while ((n = trd_rec_fifo_poll(dm->nodes[r].rec, msgs, RTE_DIM(msgs))) > 0) {
			for (int i = 0; i < n; i++)
				trd_msg_free(msgs[i]);
			stale += (unsigned int)n;
		}
		if (n < 0)
			printf("    trd_rec_fifo_poll(node %u): %s\n", r, rte_strerror(-n));
		while ((n = trd_rec_fifo_poll(dm->nodes[r].cpl, msgs, RTE_DIM(msgs))) > 0) {
			for (int i = 0; i < n; i++)
				trd_msg_free(msgs[i]);
			stale += (unsigned int)n;
		}
		if (n < 0)
			printf("    trd_rec_fifo_poll(node %u): %s\n", r, rte_strerror(-n));
	}
	if (stale != 0)
		printf("    discarded %u stale message(s) from the reception FIFOs\n", stale);
	/* late doorbell completions: back to an idle page and an empty queue */
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct trd_event ev[32];
		unsigned int words = 0;

		for (size_t w = 0; w < dm->db_len / 8; w++) {
			words += dm->nodes[r].db[w] != 0;
			dm->nodes[r].db[w] = 0;
		}
		while (trd_eq_poll(dm->nodes[r].eq, ev, RTE_DIM(ev)) > 0)
			;
		if (words != 0)
			printf("    cleared %u doorbell word(s) of node %u\n", words, r);
	}
}
