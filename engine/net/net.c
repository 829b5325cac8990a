/* SPDX-License-Identifier: BSD-3-Clause */
/* In-process torus networks: every node of a torus in one process, cabled by ring links or
 * net_ring ethdev pairs. Used by the demo, the tests and the benchmarks. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include <toroid/toroid.h>

#include "core_api.h" /* engine/core/api: trd_node_set_progress() */
#include "link_api.h" /* engine/link/api: trd_link_set_peer() */

struct trd_net {
	struct trd_torus torus;
	unsigned int n;
	unsigned int lcores[RTE_MAX_LCORE];
	unsigned int n_lcores;
	unsigned int ports_used;
	struct trd_node *nodes[];
};

static void
net_progress(void *arg)
{
	trd_net_poll(arg);
}

/* The links of a cable between two split nodes: @p nsh pairs. */
static int
cable_shares(struct trd_net *net, const struct trd_net_conf *conf, const char *name,
	     unsigned int nsh, struct trd_link *as[], struct trd_link *bs[])
{
	RTE_SET_USED(net);
	if (conf->links == TRD_NET_ETHDEV_RING) {
		struct rte_mempool *pool = trd_default_pool(0);

		if (pool == NULL)
			return -ENOMEM;
		return trd_link_ethdev_ring_pair_queues_pool(name, conf->mtu, pool, nsh, as, bs);
	}
	if (conf->links != TRD_NET_RING)
		return -ENOTSUP; /* ports: configure their queues yourself */
	for (unsigned int k = 0; k < nsh; k++) {
		char qn[64];
		int rc;

		snprintf(qn, sizeof(qn), "%s_q%u", name, k);
		rc = trd_link_ring_pair(qn, 0, conf->mtu, &as[k], &bs[k]);
		if (rc != 0)
			return rc; /* the caller frees what was made */
	}
	return 0;
}

static int
cable(struct trd_net *net, const struct trd_net_conf *conf, unsigned int ra, enum trd_dir da,
      unsigned int rb, enum trd_dir db)
{
	static unsigned int serial;
	struct trd_link *as[TRD_LINK_MAX_QUEUES] = {NULL}, *bs[TRD_LINK_MAX_QUEUES] = {NULL};
	struct trd_link *a, *b;
	unsigned int nsh = trd_node_shares(net->nodes[ra]);
	char name[40];
	int rc;

	snprintf(name, sizeof(name), "trd%u_%u%s", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED),
		 ra, trd_dir_name(da));
	/* keep ethdev names short and free of '+'/'-' */
	for (char *p = name; *p; p++)
		if (*p == '+')
			*p = 'p';
		else if (*p == '-')
			*p = 'm';
	if (nsh > 1) {
		/* a split node: a queue pair (or a ring pair) per share, share k on pair k */
		rc = cable_shares(net, conf, name, nsh, as, bs);
		for (unsigned int k = nsh; rc == 0 && k-- > 0;) {
			/* last to first: queue 0's links own the ports, freed last */
			rc = trd_node_add_share_link(net->nodes[ra], k, as[k], da);
			if (rc == 0)
				as[k] = NULL;
			if (rc == 0)
				rc = trd_node_add_share_link(net->nodes[rb], k, bs[k], db);
			if (rc == 0)
				bs[k] = NULL;
		}
		for (unsigned int k = 0; k < nsh; k++) {
			trd_link_free(as[nsh - 1 - k]);
			trd_link_free(bs[nsh - 1 - k]);
		}
		return rc;
	}
	if (conf->links == TRD_NET_ETHDEV_RING) {
		rc = trd_link_ethdev_ring_pair(name, conf->mtu, &a, &b);
	} else if (conf->links == TRD_NET_PORTS) {
		struct trd_link_conf lc = {.mtu = conf->mtu};
		unsigned int k = net->ports_used;

		if (conf->ports == NULL || k + 2 > conf->n_ports)
			return -ENODEV; /* fewer ports than cables */
		net->ports_used += 2;
		a = trd_link_ethdev(conf->ports[k], &lc);
		if (a == NULL)
			return -rte_errno;
		b = trd_link_ethdev(conf->ports[k + 1], &lc);
		if (b == NULL) {
			trd_link_free(a);
			return -rte_errno;
		}
		/* point to point: each end's frames go to the other's MAC */
		trd_link_set_peer(a, b);
		rc = 0;
	} else
		rc = trd_link_ring_pair(name, 0, conf->mtu, &a, &b);
	if (rc != 0)
		return rc;
	rc = trd_node_add_link(net->nodes[ra], a, da);
	if (rc != 0) {
		trd_link_free(a);
		trd_link_free(b);
		return rc;
	}
	rc = trd_node_add_link(net->nodes[rb], b, db);
	if (rc != 0)
		trd_link_free(b);
	return rc;
}

struct trd_net *
trd_net_create(const struct trd_net_conf *conf)
{
	struct trd_node_conf nc;
	struct trd_net *net;
	unsigned int n, r;
	int rc = 0;

	if (conf == NULL || trd_torus_init(&(struct trd_torus){{0}}, conf->torus.dim[0],
					   conf->torus.dim[1], conf->torus.dim[2]) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	n = trd_torus_size(&conf->torus);
	net = rte_zmalloc("trd_net", sizeof(*net) + n * sizeof(net->nodes[0]), 0);
	if (net == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	net->torus = conf->torus;
	net->n = n;
	if (conf->node != NULL)
		nc = *conf->node;
	else
		memset(&nc, 0, sizeof(nc));
	nc.torus = conf->torus;
	nc.name = NULL;
	for (r = 0; r < n; r++) {
		if (conf->ranks != NULL) {
			bool want = false;

			for (unsigned int i = 0; i < conf->n_ranks; i++)
				want |= conf->ranks[i] == r;
			if (!want)
				continue;
		}
		trd_torus_coord(&conf->torus, r, &nc.coord);
		net->nodes[r] = trd_node_create(&nc);
		if (net->nodes[r] == NULL) {
			rc = -rte_errno;
			goto fail;
		}
		trd_node_set_progress(net->nodes[r], net_progress, net);
	}
	/* One cable per distinct neighbour pair: towards + on each axis; an axis of size 2
	 * has one cable between its two nodes, used as + by both. */
	for (r = 0; r < n && rc == 0; r++) {
		struct trd_coord c, nb;

		if (net->nodes[r] == NULL)
			continue;
		trd_torus_coord(&conf->torus, r, &c);
		for (int axis = 0; axis < 3 && rc == 0; axis++) {
			unsigned int dim = conf->torus.dim[axis];
			enum trd_dir plus = (enum trd_dir)(2 * axis),
				     minus = (enum trd_dir)(2 * axis + 1);
			uint8_t pos = axis == 0 ? c.x : axis == 1 ? c.y : c.z;

			if (dim < 2 || (dim == 2 && pos != 0))
				continue;
			trd_torus_step(&conf->torus, c, plus, &nb);
			if (net->nodes[trd_torus_rank(&conf->torus, nb)] == NULL)
				continue; /* a node this net does not build */
			rc = cable(net, conf, r, plus,
				   (unsigned int)trd_torus_rank(&conf->torus, nb),
				   dim == 2 ? plus : minus);
		}
	}
	if (rc != 0)
		goto fail;
	return net;
fail:
	trd_net_free(net);
	rte_errno = -rc;
	return NULL;
}

unsigned int
trd_net_size(const struct trd_net *net)
{
	return net == NULL ? 0 : net->n;
}

struct trd_node *
trd_net_node(const struct trd_net *net, unsigned int rank)
{
	return (net == NULL || rank >= net->n) ? NULL : net->nodes[rank];
}

int
trd_net_poll(struct trd_net *net)
{
	int moved = 0;

	for (unsigned int i = 0; i < net->n; i++) {
		int rc = net->nodes[i] != NULL ? trd_node_poll(net->nodes[i]) : 0;

		if (rc > 0)
			moved += rc;
	}
	return moved;
}

int
trd_net_launch(struct trd_net *net, const unsigned int *lcores, unsigned int nl)
{
	struct trd_node **set;
	unsigned int *shs;
	int rc = 0;

	if (net == NULL || lcores == NULL || nl == 0 || nl > RTE_MAX_LCORE || net->n_lcores)
		return -EINVAL;
	set = rte_malloc(NULL, sizeof(*set) * net->n * TRD_LINK_MAX_QUEUES, 0);
	shs = rte_malloc(NULL, sizeof(*shs) * net->n * TRD_LINK_MAX_QUEUES, 0);
	if (set == NULL || shs == NULL) {
		rte_free(set);
		rte_free(shs);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < nl && rc == 0; i++) {
		unsigned int k = 0;

		/* share s of the j-th node on lcore (j + s) % nl: a split node's shares on
		 * different lcores when there are enough */
		for (unsigned int r = 0, j = 0; r < net->n; r++) {
			if (net->nodes[r] == NULL)
				continue;
			for (unsigned int sh = 0; sh < trd_node_shares(net->nodes[r]); sh++)
				if ((j + sh) % nl == i) {
					set[k] = net->nodes[r];
					shs[k++] = sh;
				}
			j++;
		}
		if (k == 0)
			break;
		rc = trd_lcore_launch_shares(lcores[i], set, shs, k);
		if (rc == 0)
			net->lcores[net->n_lcores++] = lcores[i];
	}
	rte_free(set);
	rte_free(shs);
	if (rc != 0)
		trd_net_stop(net);
	return rc;
}

int
trd_net_stop(struct trd_net *net)
{
	if (net == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < net->n_lcores; i++)
		trd_lcore_stop(net->lcores[i]);
	net->n_lcores = 0;
	return 0;
}

void
trd_net_free(struct trd_net *net)
{
	if (net == NULL)
		return;
	trd_net_stop(net);
	for (unsigned int i = 0; i < net->n; i++)
		trd_node_free(net->nodes[i]);
	rte_free(net);
}
