/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node's taps: capture of everything its links send and receive, and impairment of what
 * they receive. The taps themselves are link wrappers (engine/link); this file installs them
 * on a node's links, names the capture's interfaces after the node, and keeps them from
 * changing under a serving lcore. And the public link constructors that need the default
 * pool, which is the core's: the link layer takes its pool as an argument (link_api.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include <rte_errno.h>

#include <toroid/testing.h>

#include "core_pvt.h"

/* The capture interface of a node's link: "node0 x+ net_ring_trd0_0xp_a". */
static void
iface_name(const struct trd_node *n, const struct trd_link *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s %s", n->name,
		 l == n->lo               ? "lo"
		 : l->dir == TRD_DIR_NONE ? "sw"
					  : trd_dir_name(l->dir),
		 l->name);
}

/* Capture control comes from any thread (a telemetry client, the application): one at a time.
 * The serving lcore takes no lock for it: it loads each link's tap pointer atomically.
 * trd_node_free() leaves the registry under it (trd_node_capture_fini()), so a command that
 * found a node by index (telemetry) and then finds it still registered under cap_ctl acts on
 * a live node; one that finds it gone answers -ENOENT without touching it. */
static pthread_mutex_t cap_ctl = PTHREAD_MUTEX_INITIALIZER;

static int
node_capture_set(struct trd_node *n, const char *path, const struct trd_capture_conf *conf)
{
	struct trd_link_cap *old[TRD_MAX_LINKS + 1] = {NULL}, *cp[TRD_MAX_LINKS + 1] = {NULL};
	struct trd_capture *c = NULL;
	unsigned int nl = n->n_links + 1; /* with the loopback */

	if (path != NULL) {
		c = trd_capture_open(path, conf);
		if (c == NULL)
			return rte_errno != 0 ? -rte_errno : -EIO;
		for (unsigned int i = 0; i < nl; i++) {
			char name[128];

			iface_name(n, n->links[i], name, sizeof(name));
			cp[i] = trd_link_cap_new(c, name);
			if (cp[i] == NULL) {
				while (i-- > 0)
					trd_link_cap_free(cp[i]);
				trd_capture_put(c);
				return -ENOMEM;
			}
		}
	}
	for (unsigned int i = 0; i < nl; i++)
		old[i] = trd_link_swap_capture(n->links[i], cp[i]);
	/* the serving lcore may still be writing through the old taps; if it does not come out
	 * of its round (1 s), they are left allocated rather than freed under it */
	if (trd_node_quiesce(n) == 0)
		for (unsigned int i = 0; i < nl; i++)
			trd_link_cap_free(old[i]);
	if (n->cap != NULL)
		trd_capture_put(n->cap);
	n->cap = c; /* the taps hold their own references */
	return 0;
}

int
trd_node_capture_start(struct trd_node *n, const char *path, const struct trd_capture_conf *conf)
{
	int rc;

	if (n == NULL || (path != NULL && path[0] == '\0'))
		return -EINVAL;
	pthread_mutex_lock(&cap_ctl);
	rc = trd_node_registered(n) ? node_capture_set(n, path, conf) : -ENOENT;
	pthread_mutex_unlock(&cap_ctl);
	return rc;
}

int
trd_node_capture(struct trd_node *n, const char *path, unsigned int snaplen)
{
	struct trd_capture_conf conf = {.snaplen = snaplen};

	return trd_node_capture_start(n, path, &conf);
}

int
trd_node_capture_stop(struct trd_node *n, struct trd_capture_stats *st)
{
	struct trd_capture *c;
	int rc;

	if (n == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cap_ctl);
	if (!trd_node_registered(n)) {
		pthread_mutex_unlock(&cap_ctl);
		return -ENOENT;
	}
	c = n->cap;
	if (c != NULL)
		trd_capture_get(c); /* the figures once no tap writes any more */
	rc = node_capture_set(n, NULL, NULL);
	if (c != NULL) {
		if (st != NULL)
			trd_capture_stats(c, st);
		trd_capture_put(c);
	}
	pthread_mutex_unlock(&cap_ctl);
	return rc != 0 ? rc : c != NULL ? 0 : -ENOENT;
}

int
trd_node_capture_rotate(struct trd_node *n)
{
	int rc;

	if (n == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cap_ctl);
	rc = trd_node_registered(n) && n->cap != NULL ? trd_capture_rotate(n->cap) : -ENOENT;
	pthread_mutex_unlock(&cap_ctl);
	return rc;
}

bool
trd_node_capturing(const struct trd_node *n)
{
	/* every link's tap is swapped together (node_capture_set): the loopback's tells */
	return n != NULL && n->lo != NULL && trd_link_capture_on(n->lo);
}

int
trd_node_capture_stats(struct trd_node *n, struct trd_capture_stats *st)
{
	int rc = 0;

	if (n == NULL || st == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cap_ctl);
	if (trd_node_registered(n) && n->cap != NULL)
		trd_capture_stats(n->cap, st);
	else
		rc = -ENOENT;
	pthread_mutex_unlock(&cap_ctl);
	return rc;
}

void
trd_node_capture_fini(struct trd_node *n)
{
	pthread_mutex_lock(&cap_ctl);
	trd_node_unregister(n);
	if (n->cap != NULL)
		node_capture_set(n, NULL, NULL);
	pthread_mutex_unlock(&cap_ctl);
}

int
trd_node_tap_link(struct trd_node *n, struct trd_link *l)
{
	char name[128];
	struct trd_link_cap *cp = NULL;

	/* copies come from the node's pool from now on */
	trd_link_taps_pool(l, n->pool);
	pthread_mutex_lock(&cap_ctl);
	if (n->cap != NULL) {
		iface_name(n, l, name, sizeof(name));
		cp = trd_link_cap_new(n->cap, name);
		if (cp != NULL)
			trd_link_cap_free(trd_link_swap_capture(l, cp));
	}
	pthread_mutex_unlock(&cap_ctl);
	return n->cap != NULL && cp == NULL ? -ENOMEM : 0;
}

/* Here rather than in engine/link: the default pool is the core's (its mbufs carry the core's
 * private area), and the link layer knows nothing above it. */
struct trd_link *
trd_link_ethdev(uint16_t port_id, const struct trd_link_conf *conf)
{
	struct rte_mempool *pool = NULL;

	if (conf == NULL || !conf->no_setup) {
		pool = conf != NULL && conf->pool != NULL ? conf->pool : trd_default_pool(0);
		if (pool == NULL)
			return NULL; /* rte_errno set */
	}
	return trd_link_ethdev_pool(port_id, conf, pool);
}

int
trd_link_ethdev_ring_pair(const char *name, uint16_t mtu, struct trd_link **a, struct trd_link **b)
{
	struct rte_mempool *pool;

	if (name == NULL || a == NULL || b == NULL)
		return -EINVAL;
	pool = trd_default_pool(0);
	if (pool == NULL)
		return rte_errno ? -rte_errno : -ENOMEM;
	return trd_link_ethdev_ring_pair_pool(name, mtu, pool, a, b);
}

int
trd_link_impair(struct trd_link *l, const struct trd_impair_conf *c)
{
	struct trd_node *n;

	if (l == NULL)
		return -EINVAL;
	n = l->node;
	if (n != NULL && __atomic_load_n(&n->served, __ATOMIC_ACQUIRE))
		return -EBUSY;
	return trd_link_set_impair(l, c, n != NULL ? n->pool : trd_default_pool(0));
}

int
trd_link_udp_encap(struct trd_link *l, const struct trd_udp_encap *e)
{
	struct trd_node *n;

	if (l == NULL)
		return -EINVAL;
	n = l->node;
	if (n != NULL && (l == n->lo || l->dir == TRD_DIR_NONE))
		return -ENOTSUP; /* one peer address per link: not a switched link */
	if (n != NULL && __atomic_load_n(&n->served, __ATOMIC_ACQUIRE))
		return -EBUSY;
	return trd_link_set_encap(l, e, n != NULL ? n->pool : trd_default_pool(0));
}

int
trd_node_set_ip(struct trd_node *n, const struct trd_ip_conf *c)
{
	if (n == NULL || c == NULL)
		return -EINVAL;
	if (n->sw_link == NULL)
		return -ENOTSUP;
	if (__atomic_load_n(&n->served, __ATOMIC_ACQUIRE))
		return -EBUSY;
	return trd_link_set_ip(n->sw_link, c, n->pool, n->torus.dim, n->n_nodes);
}

int
trd_node_set_peer_ip(struct trd_node *n, struct trd_coord peer, uint32_t ip, uint16_t port)
{
	int r;

	if (n == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */
	r = trd_torus_rank(&n->torus, peer);
	if (r < 0 || (uint32_t)r == n->rank)
		return -EINVAL;
	if (n->sw_link == NULL)
		return -ENOTSUP;
	if (__atomic_load_n(&n->served, __ATOMIC_ACQUIRE))
		return -EBUSY;
	return trd_link_set_ip_peer(n->sw_link, (uint32_t)r, ip, port);
}

int
trd_node_impair(struct trd_node *n, const struct trd_impair_conf *c)
{
	if (n == NULL)
		return -EINVAL;
	for (unsigned int k = 0; k < n->n_shares; k++)
		for (unsigned int i = 0; i < n->sh[k]->n_links; i++) {
			int rc = trd_link_impair(n->sh[k]->links[i], c);

			if (rc != 0)
				return rc;
		}
	return 0;
}
