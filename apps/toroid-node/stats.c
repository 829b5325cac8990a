/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node's statistics lines (--stats-period, and the totals at exit): per node, rates of
 * packets and bytes at L2 and L1, drops by reason, the VNI service's counters and its
 * interfaces, as text or one JSON object per line (--json).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include <toroid/toroid.h>
#include <toroid/vni_service.h>

#include "crowd.h"
#include "node.h"

static double
rate(uint64_t delta, double secs)
{
	return secs > 0 ? (double)delta / secs : 0;
}

/* ,"load":{...}: the loop's last judgement of the host (--idle-us auto, docs/toroid-node.md) */
static void
print_load_json(const struct node_load *l, bool crowd_seen)
{
	printf(",\"load\":{\"crowded\":%d,\"runnable\":%u,\"sharing\":%u,\"sharing_asleep\":%u,"
	       "\"away\":%u,\"away_cpus\":%u,\"away_compute\":%u,\"away_movable\":%d}",
	       crowd_seen, l->runnable, l->sharing, l->sharing_asleep, l->away, l->away_cpus,
	       l->away_compute, l->away_movable);
}

void
node_print_stats(struct served *srv, unsigned int n_srv, const struct node_load *load, bool crowded,
		 double t, double dt, bool total)
{
	for (unsigned int i = 0; i < n_srv; i++) {
		struct served *sv = &srv[i];
		struct trd_node_stats st, d;
		uint64_t vs[TRD_VNI_SVC_STAT_MAX];
		struct trd_coord c = trd_node_coord(sv->node);
		double secs = total ? t : dt;
		uint64_t drops = 0;
		bool first;

		trd_node_stats_get(sv->node, &st);
		trd_vni_svc_stats_get(sv->svc, vs);
		for (unsigned int k = 0; k < TRD_STAT_MAX; k++)
			d.stat[k] = st.stat[k] - (total ? 0 : sv->last.stat[k]);
		for (unsigned int k = 0; k < TRD_DROP_MAX; k++) {
			d.drop[k] = st.drop[k] - (total ? 0 : sv->last.drop[k]);
			drops += d.drop[k];
		}
		if (!total)
			sv->last = st;
		{
			double txp = rate(d.stat[TRD_STAT_TX_PKTS], secs);
			double rxp = rate(d.stat[TRD_STAT_RX_PKTS], secs);
			double txl2 = rate(d.stat[TRD_STAT_TX_BYTES], secs) * 8e-9;
			double rxl2 = rate(d.stat[TRD_STAT_RX_BYTES], secs) * 8e-9;
			double txl1 = txl2 + txp * NODE_L1_OVERHEAD * 8e-9;
			double rxl1 = rxl2 + rxp * NODE_L1_OVERHEAD * 8e-9;

			if (node_opt.json) {
				printf("{\"type\":\"%s\",\"time\":%.3f,\"node\":\"%s\",\"rank\":%u,"
				       "\"coord\":[%u,%u,%u],\"seconds\":%.3f,"
				       "\"tx_mpps\":%.4f,\"tx_gbps_l2\":%.4f,\"tx_gbps_l1\":%.4f,"
				       "\"rx_mpps\":%.4f,\"rx_gbps_l2\":%.4f,\"rx_gbps_l1\":%.4f,"
				       "\"vni_ifs\":%u",
				       total ? "total" : "stats", t, trd_node_name(sv->node),
				       sv->rank, c.x, c.y, c.z, secs, txp * 1e-6, txl2, txl1,
				       rxp * 1e-6, rxl2, rxl1, trd_vni_svc_n_ifs(sv->svc));
				print_load_json(load, crowded);
				printf(",\"stats\":{");
				for (unsigned int k = 0; k < TRD_STAT_MAX; k++)
					printf("%s\"%s\":%" PRIu64, k ? "," : "", trd_stat_name(k),
					       d.stat[k]);
				printf("},\"drops\":{");
				first = true;
				for (unsigned int k = 0; k < TRD_DROP_MAX; k++)
					if (d.drop[k] != 0 || total) {
						printf("%s\"%s\":%" PRIu64, first ? "" : ",",
						       trd_drop_name(k), d.drop[k]);
						first = false;
					}
				printf("},\"vni\":{");
				for (unsigned int k = 0; k < TRD_VNI_SVC_STAT_MAX; k++)
					printf("%s\"%s\":%" PRIu64, k ? "," : "",
					       trd_vni_svc_stat_name(k), vs[k]);
				printf("},\"ifs\":[");
				for (unsigned int k = 0; k < trd_vni_svc_n_ifs(sv->svc); k++) {
					struct trd_vni_svc_if_info fi;

					trd_vni_svc_if_get(sv->svc, k, &fi);
					printf("%s{\"app\":%u,\"proc\":%u,\"pid\":%d,\"dead\":%d,"
					       "\"tx_msgs\":%" PRIu64 ",\"tx_pkts\":%" PRIu64
					       ",\"tx_pkts_shared\":%" PRIu64
					       ",\"tx_bytes\":%" PRIu64 ",\"rx_msgs\":%" PRIu64
					       ",\"rx_bytes\":%" PRIu64 ",\"naks\":%" PRIu64
					       ",\"staged_bytes\":%" PRIu64 ",\"tx_ready\":%u,"
					       "\"tx_wait\":%u,\"tx_backoff\":%u,\"tx_drain\":%u,"
					       "\"tx_hold\":%u,\"recvs_posted\":%u,\"rx_held\":%u,"
					       "\"rx_hdr\":%u,\"cmds_queued\":%u,\"in_round\":%u}",
					       k ? "," : "", fi.app, fi.proc, fi.pid, fi.dead,
					       fi.tx_msgs, fi.tx_pkts, fi.tx_pkts_shared,
					       fi.tx_bytes, fi.rx_msgs, fi.rx_bytes, fi.naks,
					       fi.staged_bytes, fi.tx_ready, fi.tx_wait,
					       fi.tx_backoff, fi.tx_drain, fi.tx_hold,
					       fi.recvs_posted, fi.rx_held, fi.rx_hdr,
					       fi.cmds_queued, fi.in_round);
				}
				printf("]}\n");
				continue;
			}
			printf("%s %s (%u,%u,%u) %s %.1f s: tx %.3f Mpps %.3f/%.3f Gbit/s (L2/L1), "
			       "rx %.3f Mpps %.3f/%.3f Gbit/s; retransmits %" PRIu64 "\n",
			       total ? "total" : "stats", trd_node_name(sv->node), c.x, c.y, c.z,
			       total ? "over" : "last", secs, txp * 1e-6, txl2, txl1, rxp * 1e-6,
			       rxl2, rxl1, d.stat[TRD_STAT_RETRANS]);
			printf("  vni: %u interfaces, %" PRIu64 " sends, %" PRIu64 " receives done "
			       "(%" PRIu64 " B out, %" PRIu64 " B in), %" PRIu64 " staged, "
			       "staging %" PRIu64 "/%" PRIu64 " B (peak %" PRIu64 "), %" PRIu64
			       " refusals sent, %" PRIu64 " errors\n",
			       trd_vni_svc_n_ifs(sv->svc), vs[TRD_VNI_SVC_STAT_TX_DONE],
			       vs[TRD_VNI_SVC_STAT_RX_DONE], vs[TRD_VNI_SVC_STAT_TX_BYTES],
			       vs[TRD_VNI_SVC_STAT_RX_BYTES], vs[TRD_VNI_SVC_STAT_STAGED],
			       vs[TRD_VNI_SVC_STAT_STAGING_USED], vs[TRD_VNI_SVC_STAT_STAGING_MAX],
			       vs[TRD_VNI_SVC_STAT_STAGING_HWM], vs[TRD_VNI_SVC_STAT_NAK_SENT],
			       vs[TRD_VNI_SVC_STAT_ERRORS]);
			for (unsigned int k = 0; k < trd_vni_svc_n_ifs(sv->svc); k++) {
				struct trd_vni_svc_if_info fi;

				trd_vni_svc_if_get(sv->svc, k, &fi);
				printf("  %u:%u pid %d%s: sent %" PRIu64 " msgs %" PRIu64
				       " B in %" PRIu64 " packets, received %" PRIu64
				       " msgs %" PRIu64 " B, waited %" PRIu64 " times, %" PRIu64
				       " B staged for it\n",
				       fi.app, fi.proc, fi.pid, fi.dead ? " (gone)" : "",
				       fi.tx_msgs, fi.tx_bytes, fi.tx_pkts, fi.rx_msgs, fi.rx_bytes,
				       fi.naks, fi.staged_bytes);
			}
			printf("  drops: %" PRIu64, drops);
			first = true;
			for (unsigned int k = 0; k < TRD_DROP_MAX; k++)
				if (d.drop[k] != 0) {
					printf("%s%s %" PRIu64, first ? " (" : ", ",
					       trd_drop_name(k), d.drop[k]);
					first = false;
				}
			printf("%s\n", first ? "" : ")");
		}
	}
	fflush(stdout);
}
