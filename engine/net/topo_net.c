/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nodes and in-process nets from a topology file. Only the public engine API is used: a node
 * from trd_node_create(), links from trd_link_ethdev(), switched peers from
 * trd_node_set_peer_mac(), nets from trd_net_create().
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include <toroid/topo_net.h>

RTE_LOG_REGISTER(trd_topo_net_logtype, toroid.topo_net, INFO);
#define TNET_LOG(level, fmt, ...)                                                                  \
	rte_log(RTE_LOG_##level, trd_topo_net_logtype, "toroid topo_net: " fmt "\n", ##__VA_ARGS__)

/* The local port for the file's port @p p. */
static int
local_port(const struct trd_topo_node_conf *conf, int p, uint16_t *out)
{
	if (p < 0 || p > UINT16_MAX)
		return -EINVAL;
	if (conf->port_map == NULL) {
		*out = (uint16_t)p;
		return 0;
	}
	if ((unsigned int)p >= conf->n_port_map)
		return -EINVAL;
	*out = conf->port_map[p];
	return 0;
}

static int
add_ethdev_link(struct trd_node *node, uint16_t port, const struct trd_link_conf *lconf,
		enum trd_dir dir)
{
	struct trd_link *l = trd_link_ethdev(port, lconf);
	int rc;

	if (l == NULL)
		return -rte_errno;
	rc = trd_node_add_link(node, l, dir);
	if (rc != 0)
		trd_link_free(l);
	return rc;
}

static int
setup_direct(struct trd_node *node, const struct trd_topo_node *tn,
	     const struct trd_topo_node_conf *conf)
{
	for (int d = 0; d < TRD_DIR_COUNT; d++) {
		uint16_t port;
		int rc;

		if (tn->port[d] == TRD_TOPO_NO_PORT)
			continue;
		if (local_port(conf, tn->port[d], &port) != 0) {
			TNET_LOG(ERR, "node %u: port %d (%s) is not in the port map", tn->rank,
				 tn->port[d], trd_dir_name((enum trd_dir)d));
			return -EINVAL;
		}
		rc = add_ethdev_link(node, port, conf->link, (enum trd_dir)d);
		if (rc != 0) {
			TNET_LOG(ERR, "node %u: link %s on port %u: %s", tn->rank,
				 trd_dir_name((enum trd_dir)d), port, rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int
setup_switched(struct trd_node *node, const struct trd_topo *topo, const struct trd_topo_node *tn,
	       const struct trd_topo_node_conf *conf)
{
	int rc;

	if (conf->set_mac && tn->has_mac) {
		struct rte_ether_addr mac;

		memcpy(mac.addr_bytes, tn->mac, sizeof(mac.addr_bytes));
		rc = rte_eth_dev_default_mac_addr_set(conf->sw_port, &mac);
		if (rc != 0)
			TNET_LOG(WARNING,
				 "node %u: port %u keeps its MAC (cannot set the file's: %s)",
				 tn->rank, conf->sw_port, rte_strerror(-rc));
	}
	rc = add_ethdev_link(node, conf->sw_port, conf->link, TRD_DIR_NONE);
	if (rc != 0) {
		TNET_LOG(ERR, "node %u: switched link on port %u: %s", tn->rank, conf->sw_port,
			 rte_strerror(-rc));
		return rc;
	}
	if (tn->has_ip) {
		struct trd_ip_conf ic = {.ip = tn->ip,
					 .prefix = tn->prefix,
					 .gateway = tn->gateway,
					 .port = tn->udp_port};

		rc = trd_node_set_ip(node, &ic);
		if (rc != 0) {
			TNET_LOG(ERR, "node %u: IP on port %u: %s", tn->rank, conf->sw_port,
				 rte_strerror(-rc));
			return rc;
		}
	}
	for (unsigned int r = 0; r < topo->n_nodes; r++) {
		const struct trd_topo_node *peer = &topo->nodes[r];

		if (r == tn->rank)
			continue;
		/* over IP when both ends have an address, else plain frames to its MAC */
		if (tn->has_ip && peer->has_ip)
			rc = trd_node_set_peer_ip(node, peer->coord, peer->ip, peer->udp_port);
		else if (peer->has_mac)
			rc = trd_node_set_peer_mac(node, peer->coord, peer->mac);
		else
			rc = 0;
		if (rc != 0)
			return rc;
	}
	return 0;
}

struct trd_node *
trd_node_from_topo(const struct trd_topo *topo, unsigned int rank,
		   const struct trd_topo_node_conf *conf)
{
	static const struct trd_topo_node_conf defaults;
	const struct trd_topo_node *tn;
	struct trd_node_conf nc;
	struct trd_node *node;
	int rc;

	if (topo == NULL || topo->nodes == NULL || rank >= topo->n_nodes) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (conf == NULL)
		conf = &defaults;
	tn = &topo->nodes[rank];
	if (conf->node != NULL)
		nc = *conf->node;
	else
		memset(&nc, 0, sizeof(nc));
	nc.torus = topo->torus;
	nc.coord = tn->coord;
	node = trd_node_create(&nc);
	if (node == NULL)
		return NULL;
	rc = topo->mode == TRD_TOPO_DIRECT ? setup_direct(node, tn, conf)
					   : setup_switched(node, topo, tn, conf);
	if (rc != 0) {
		trd_node_free(node); /* frees the links it took */
		rte_errno = -rc;
		return NULL;
	}
	return node;
}

struct trd_net *
trd_net_from_topo(const struct trd_topo *topo, const struct trd_net_conf *conf)
{
	struct trd_net_conf nc;

	if (topo == NULL || conf == NULL || topo->nodes == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (topo->mode != TRD_TOPO_DIRECT) {
		TNET_LOG(ERR,
			 "a switched topology has no in-process net: use trd_node_from_topo()");
		rte_errno = ENOTSUP;
		return NULL;
	}
	/* The loader checked that every node has a port for each of its links, so the file
	 * describes exactly the torus cabling trd_net_create() makes. */
	nc = *conf;
	nc.torus = topo->torus;
	return trd_net_create(&nc);
}

struct trd_node *
trd_net_topo_node(const struct trd_net *net, const struct trd_topo *topo, unsigned int rank)
{
	int r;

	if (net == NULL || topo == NULL || topo->nodes == NULL || rank >= topo->n_nodes)
		return NULL;
	r = trd_torus_rank(&topo->torus, topo->nodes[rank].coord);
	return r < 0 ? NULL : trd_net_node(net, (unsigned int)r);
}
