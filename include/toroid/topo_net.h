/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Nodes and in-process nets built from a topology file (docs/topology.md, "Building nodes from
 * a topology file"). The file says where a node sits and how it is cabled; these calls make
 * the engine objects that match it.
 *
 * Conventions as in toroid.h: constructors return a pointer, or NULL with rte_errno set.
 */
#ifndef TOROID_TOPO_NET_H
#define TOROID_TOPO_NET_H

#include <stdbool.h>
#include <stdint.h>

#include <toroid/topo.h>
#include <toroid/toroid.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options for trd_node_from_topo(). Zero means the default. */
struct trd_topo_node_conf {
	const struct trd_node_conf *node; /**< template for the node (torus and coord ignored) */
	const struct trd_link_conf *link; /**< options of every ethdev link made (NULL: defaults) */
	uint16_t sw_port;                 /**< switched mode: the local DPDK port on the segment */
	const uint16_t *port_map;         /**< direct mode: the file's port id p is local port
					   *   port_map[p] (NULL: the file's ids are the local ids) */
	unsigned int n_port_map;          /**< entries in @c port_map */
	bool set_mac; /**< switched mode: give the port the file's MAC of this node
		       *   first (a PMD that cannot is logged and left as it is) */
};

/**
 * Make the node of rank @p rank of @p topo, as the file describes it, on this host's ports:
 * the node sits at the file's coordinate; in direct mode it gets one ethdev link per port the
 * file gives, in that port's direction; in switched mode one switched link (TRD_DIR_NONE) on
 * @c sw_port and the MAC of every other node of the file (trd_node_set_peer_mac()), or, when
 * the node and the other have an `ip`, the node's address (trd_node_set_ip()) and the other's
 * (trd_node_set_peer_ip()): frames between them go over IPv4/UDP.
 * Ports are configured and started by trd_link_ethdev() (conf->link).
 * @return the node, or NULL with rte_errno = EINVAL (NULL @p topo, @p rank out of range, a
 * file port outside @c port_map), ENODEV (no such port), or the node's or link's error.
 */
struct trd_node *trd_node_from_topo(const struct trd_topo *topo, unsigned int rank,
				    const struct trd_topo_node_conf *conf);

/**
 * Build the torus of a direct-mode topology in this process, cabled as the file says (a cable
 * per distinct neighbour pair, of the kind conf->links), for tests and demos; the file's port
 * ids, meant for real hosts, are not used. conf->torus is ignored (the file's is used).
 * trd_net_node() takes a torus rank: the node of the file's rank r is
 * trd_net_node(net, trd_torus_rank(&topo->torus, topo->nodes[r].coord)), which
 * trd_net_topo_node() returns.
 * @return the net, or NULL with rte_errno = EINVAL (NULL argument), ENOTSUP (a switched
 * topology: one Ethernet segment has no in-process equivalent, see trd_node_from_topo()), or
 * trd_net_create()'s error.
 */
struct trd_net *trd_net_from_topo(const struct trd_topo *topo, const struct trd_net_conf *conf);

/** The node of the file's rank @p rank in a net built by trd_net_from_topo(), or NULL. */
struct trd_node *trd_net_topo_node(const struct trd_net *net, const struct trd_topo *topo,
				   unsigned int rank);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_TOPO_NET_H */
