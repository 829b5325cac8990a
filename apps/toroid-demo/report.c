/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: the report: the tables, latencies, engine drops. */
#include "demo.h"

/* ---- report ---- */

void
demo_print_table(struct demo *dm)
{
	uint64_t tt = 0, tb = 0, tp = 0, tf = 0;

	printf("\n%-*s %5s %9s %12s %9s  %s\n", DEMO_TITLE_W, "operation", "pairs", "transfers",
	       "bytes", "packets", "result");
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		uint64_t t = 0, b = 0, p = 0, f = 0;
		unsigned int pairs = 0, ok = 0;
		char result[80];

		if (!dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			t += dm->cell[op][si].transfers;
			b += dm->cell[op][si].bytes;
			p += dm->cell[op][si].packets;
			f += dm->cell[op][si].failed;
		}
		for (unsigned int a = 0; a < dm->n_nodes; a++)
			for (unsigned int z = 0; z < dm->n_nodes; z++)
				if (dm->pair_ran[op][a][z]) {
					pairs++;
					ok += !dm->pair_bad[op][a][z];
				}
		if (t == 0)
			snprintf(result, sizeof(result), "not run");
		else if (f == 0)
			snprintf(result, sizeof(result), "%u/%u pairs verified", ok, pairs);
		else
			snprintf(result, sizeof(result),
				 "%u/%u pairs verified, %" PRIu64 " transfer(s) FAILED", ok, pairs,
				 f);
		printf("%-*s %5u %9" PRIu64 " %12" PRIu64 " %9" PRIu64 "  %s\n", DEMO_TITLE_W,
		       demo_ops[op].title, pairs, t, b, p, result);
		tt += t;
		tb += b;
		tp += p;
		tf += f;
	}
	printf("%-*s %5s %9" PRIu64 " %12" PRIu64 " %9" PRIu64 "  %" PRIu64 "/%" PRIu64
	       " transfers verified\n",
	       DEMO_TITLE_W, "all", "", tt, tb, tp, tt - tf, tt);
}

/* One latency line: min, avg, p50, p99 (apps/common/latency.h) of the @p n TSC intervals of
 * completions seen, out of @p transfers. */
static void
demo_print_lat_line(const char *label, const char *size, uint64_t *v, unsigned int n,
		    uint64_t transfers)
{
	double us = 1e6 / (double)rte_get_tsc_hz();
	struct app_lat l;

	if (n == 0) {
		printf("%-*s %5s %9u  %s\n", DEMO_TITLE_W, label, size, 0u,
		       transfers ? "(no completion arrived)" : "not run");
		return;
	}
	app_lat_summary(v, n, us, &l);
	printf("%-*s %5s %9u %9.1f %9.1f %9.1f %9.1f\n", DEMO_TITLE_W, label, size, n, l.min, l.avg,
	       l.p50, l.p99);
}

/* Post-to-completion latencies of the put+reflect rows; with -v, by size too. */
void
demo_print_latency(struct demo *dm)
{
	static uint64_t all[DEMO_MAX_SIZES * DEMO_MAX_LAT];
	static const char *const how[] = {
		[TRD_WAIT_SPIN] = "spin",
		[TRD_WAIT_MONITOR] = "monitor",
		[TRD_WAIT_EQ] = "event queue",
	};
	bool any = false;

	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++)
		any |= demo_ops[op].reflect && dm->opt.ops[op];
	if (!any)
		return;
	printf("\nreflection completion latency in us, from posting to the completion seen by the\n"
	       "demo thread (doorbell waits: %s). Informational, not a benchmark: one\n"
	       "transfer at a time, %s.\n",
	       how[dm->opt.db_wait],
	       dm->served ? "one engine lcore serving 8 nodes" : "the engine polled inline");
	printf("%-*s %5s %9s %9s %9s %9s %9s\n", DEMO_TITLE_W, "operation", "size", "transfers",
	       "min", "avg", "p50", "p99");
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		unsigned int n = 0;
		uint64_t t = 0;

		if (!demo_ops[op].reflect || !dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			memcpy(all + n, dm->lat[op][si], dm->cell[op][si].n_lat * sizeof(all[0]));
			n += dm->cell[op][si].n_lat;
			t += dm->cell[op][si].transfers;
		}
		demo_print_lat_line(demo_ops[op].title, "all", all, n, t);
		if (!dm->opt.verbose)
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			char sz[16];

			if (dm->cell[op][si].transfers == 0)
				continue;
			demo_print_lat_line(
				"", demo_size_str(demo_op_sizes(dm, op)->v[si], sz, sizeof(sz)),
				dm->lat[op][si], dm->cell[op][si].n_lat,
				dm->cell[op][si].transfers);
		}
	}
}

void
demo_print_sizes(struct demo *dm)
{
	printf("\n%-25s %8s %9s %6s %6s %9s %9s %10s %9s\n", "op", "size", "transfers", "passed",
	       "failed", "packets", "forwarded", "avg us", "MB/s");
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		if (!dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			const struct demo_cell *c = &dm->cell[op][si];
			char s[16];

			if (c->transfers == 0)
				continue;
			printf("%-25s %8s %9" PRIu64 " %6" PRIu64 " %6" PRIu64 " %9" PRIu64
			       " %9" PRIu64 " %10.1f %9.1f\n",
			       demo_ops[op].name,
			       demo_size_str(demo_op_sizes(dm, op)->v[si], s, sizeof(s)),
			       c->transfers, c->passed, c->failed, c->packets, c->fwd,
			       (double)c->time_us / (double)c->transfers,
			       c->time_us ? (double)c->bytes / (double)c->time_us : 0.0);
		}
	}
}

void
demo_print_nodes(struct demo *dm)
{
	struct trd_node_stats st[DEMO_MAX_NODES];

	if (demo_snapshot(dm, st) != 0)
		return;
	printf("\n%-6s %-8s %9s %9s %9s %9s %9s %9s  %s\n", "node", "coord", "tx_pkts", "rx_pkts",
	       "fwd_pkts", "msgs", "zcopy", "no_mbuf", "drops");
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		const struct trd_node_stats *a = &dm->stats0[r], *b = &st[r];
		char c[16], drops[256];
		size_t used = 0;

		drops[0] = '\0';
		for (unsigned int s = 0; s < TRD_DROP_MAX && used < sizeof(drops); s++)
			if (b->drop[s] != a->drop[s])
				used += (size_t)snprintf(drops + used, sizeof(drops) - used,
							 "%s%s=%" PRIu64, used ? " " : "",
							 trd_drop_name(s), b->drop[s] - a->drop[s]);
		printf("%-6s %-8s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		       " %9" PRIu64 "  %s\n",
		       trd_node_name(dm->nodes[r].node),
		       demo_coord_str(dm->nodes[r].coord, c, sizeof(c)),
		       b->stat[TRD_STAT_TX_PKTS] - a->stat[TRD_STAT_TX_PKTS],
		       b->stat[TRD_STAT_RX_PKTS] - a->stat[TRD_STAT_RX_PKTS],
		       b->stat[TRD_STAT_FWD_PKTS] - a->stat[TRD_STAT_FWD_PKTS],
		       b->stat[TRD_STAT_MSGS_DELIVERED] - a->stat[TRD_STAT_MSGS_DELIVERED],
		       b->stat[TRD_STAT_ZCOPY_PKTS] - a->stat[TRD_STAT_ZCOPY_PKTS],
		       b->stat[TRD_STAT_NO_MBUF] - a->stat[TRD_STAT_NO_MBUF],
		       used ? drops : "none");
	}
}

/* "toroid-demo: P pairs x N <what>(s) x M size(s) (list B) = T transfers"; returns T. */
static uint64_t
demo_print_plan(const struct demo *dm, unsigned int n_ops, const char *what,
		const struct demo_sizes *sz)
{
	unsigned int n_pairs = dm->n_nodes * (dm->n_nodes - 1);
	uint64_t n = (uint64_t)n_pairs * n_ops * sz->n;
	char list[256], s[16];
	size_t used = 0;

	if (n_ops == 0)
		return 0;
	list[0] = '\0';
	for (unsigned int i = 0; i < sz->n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "",
					 demo_size_str(sz->v[i], s, sizeof(s)));
	printf("toroid-demo: %u pairs x %u %s%s x %u size%s (%s B) = %" PRIu64 " transfers\n",
	       n_pairs, n_ops, what, n_ops == 1 ? "" : "s", sz->n, sz->n == 1 ? "" : "s", list, n);
	return n;
}

void
demo_print_header(struct demo *dm)
{
	struct trd_link *l = trd_node_link(dm->nodes[0].node, 0);
	unsigned int n_ops = 0, n_refl = 0, n_ports = 0;

	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		if (demo_ops[op].reflect)
			n_refl += dm->opt.ops[op];
		else
			n_ops += dm->opt.ops[op];
	}
	for (unsigned int r = 0; r < dm->n_nodes; r++)
		for (unsigned int i = 0; i < trd_node_n_links(dm->nodes[r].node); i++)
			n_ports += trd_link_port(trd_node_link(dm->nodes[r].node, i)) >= 0;

	printf("toroid-demo: %ux%ux%u torus, %u nodes, ", DEMO_DIM, DEMO_DIM, DEMO_DIM,
	       dm->n_nodes);
	if (dm->opt.links == TRD_NET_RING)
		printf("ring links");
	else
		printf("net_ring ethdev links (%u ports)", n_ports);
	printf(", %u B payload per packet; ", trd_link_max_payload(l));
	if (dm->served)
		printf("engine on lcore %u, demo on lcore %u\n", dm->worker, rte_get_main_lcore());
	else
		printf("one lcore, engine polled inline\n");
	dm->planned = demo_print_plan(dm, n_ops, "operation", &dm->opt.sizes);
	dm->planned += demo_print_plan(dm, n_refl, "put+reflect way", &dm->opt.rsizes);
	printf("toroid-demo: %" PRIu64 " transfers, seed %" PRIu64 ", timeout %" PRIu64
	       " ms per wait\n",
	       dm->planned, dm->opt.seed, dm->opt.timeout_us / 1000);
}

/* Drops since the start, by cause, summed over the nodes: one line. */
void
demo_print_drops(struct demo *dm)
{
	struct trd_node_stats st[DEMO_MAX_NODES];
	bool any = false;

	if (demo_snapshot(dm, st) != 0)
		return;
	printf("engine drops:");
	for (unsigned int c = 0; c < TRD_DROP_MAX; c++) {
		uint64_t v = 0;

		for (unsigned int r = 0; r < dm->n_nodes; r++)
			v += st[r].drop[c] - dm->stats0[r].drop[c];
		if (v != 0) {
			printf(" %s=%" PRIu64, trd_drop_name(c), v);
			any = true;
		}
	}
	printf("%s\n", any ? "" : " none");
}
