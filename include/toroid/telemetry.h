/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid telemetry: rte_telemetry commands that show the nodes of this process, their
 * statistics, injection FIFOs and links, readable with DPDK's dpdk-telemetry.py (Debian package
 * dpdk-dev) or any client of the telemetry socket <runtime dir>/dpdk_telemetry.v2.
 *
 *   /toroid/nodes[,START]   nodes by index: name, coordinate, links, injection FIFOs; 128 per
 *                           answer from START (default 0), "next" names the following page
 *   /toroid/stats,NODE      every node statistic (TRD_NODE_STATS) and drop cause by name
 *   /toroid/fifos,NODE      per injection FIFO: descriptors, packets built and sent, slots used
 *                           now and the high-water mark ("engine": the engine's own FIFO)
 *   /toroid/links,NODE      per link: direction, kind, packets and bytes each way, forwarded,
 *                           pending
 *   /toroid/capture/start,PATH[,snaplen=N][,size=B][,files=N][,limit=B|none][,node=NODE]
 *                     [,filter=EXPR]   record the nodes' frames (trd_node_capture_start())
 *   /toroid/capture/stop, /toroid/capture/rotate, /toroid/capture/status
 *                           stop it, go on in the next file, its figures (toroid-dump --attach)
 *
 * NODE is a node's name or its index in the process (the order of creation). The answers are
 * read without stopping the engine: counters are each exact, but not a snapshot taken at one
 * instant. Nodes must not be freed while a telemetry client may be asking about them (free
 * them at exit, after the last query), as the telemetry thread reads them without a lock.
 * See docs/telemetry.md.
 */
#ifndef TOROID_TELEMETRY_H
#define TOROID_TELEMETRY_H

#ifdef __cplusplus
extern "C" {
#endif

/** Nodes listed in one /toroid/nodes answer. */
#define TRD_TELEMETRY_NODES_PAGE 128

/**
 * Register the /toroid/... telemetry commands. Idempotent and thread-safe: the first
 * successful call registers, later calls return 0. Call it after rte_eal_init() (the
 * telemetry socket is served only if EAL started with telemetry, the default).
 * @return 0, or the negative errno of rte_telemetry_register_cmd() (-EINVAL, -ENOENT for a
 * full command table).
 */
int trd_telemetry_init(void);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_TELEMETRY_H */
