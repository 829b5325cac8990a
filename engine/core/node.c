/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes: creation, configuration, routes, statistics, progress. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_random.h>
#include <rte_rwlock.h>

#include "core_pvt.h"
#include "node_pvt.h"

RTE_LOG_REGISTER_SUFFIX(trd_node_logtype, node, INFO);
#define NODE_LOG TRD_LOG

static const char *const stat_names[] = {
#define TRD_STAT_NAME_(e, n) n,
	TRD_NODE_STATS(TRD_STAT_NAME_)
#undef TRD_STAT_NAME_
};
_Static_assert(RTE_DIM(stat_names) == TRD_STAT_MAX, "one name per statistic");

const char *
trd_stat_name(unsigned int stat)
{
	return stat < TRD_STAT_MAX ? stat_names[stat] : NULL;
}

uint64_t
trd_time_us(void)
{
	static uint64_t hz;

	if (hz == 0) {
		hz = rte_get_timer_hz();
		if (hz == 0) {
			/* no EAL (a process attached to toroid-node): the C library's clock */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
		}
	}
	return rte_get_timer_cycles() / (hz / 1000000 ? hz / 1000000 : 1);
}

unsigned int
trd_pool_priv_size(void)
{
	return RTE_ALIGN(sizeof(struct trd_mbuf_priv), RTE_MBUF_PRIV_ALIGN);
}

struct rte_mempool *
trd_default_pool(unsigned int n)
{
	static const char name[] = "trd_pool";
	struct rte_mempool *mp = rte_mempool_lookup(name);

	if (mp != NULL)
		return mp;
	if (n == 0)
		n = 32767;
	mp = rte_pktmbuf_pool_create(name, n, 256, (uint16_t)trd_pool_priv_size(),
				     RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (mp == NULL) {
		NODE_LOG(ERR,
			 "cannot create the packet pool (%u mbufs): %s; give EAL more memory (-m)",
			 n, rte_strerror(rte_errno));
		/* a racing creator may have won */
		mp = rte_mempool_lookup(name);
	}
	return mp;
}

/* ---- the process's nodes, for tools and telemetry ---- */

#define TRD_MAX_NODES_PROC 1024
static struct trd_node *registry[TRD_MAX_NODES_PROC];
static unsigned int registry_n;
static rte_spinlock_t registry_lock = RTE_SPINLOCK_INITIALIZER;

/* A node outside the registry could not be captured (taps.c checks it is there): -ENOSPC. */
static int
registry_add(struct trd_node *n)
{
	int rc = -ENOSPC;

	rte_spinlock_lock(&registry_lock);
	if (registry_n < TRD_MAX_NODES_PROC) {
		registry[registry_n++] = n;
		rc = 0;
	}
	rte_spinlock_unlock(&registry_lock);
	return rc;
}

void
trd_node_unregister(struct trd_node *n)
{
	rte_spinlock_lock(&registry_lock);
	for (unsigned int i = 0; i < registry_n; i++)
		if (registry[i] == n) {
			memmove(&registry[i], &registry[i + 1],
				(registry_n - i - 1) * sizeof(registry[0]));
			registry_n--;
			break;
		}
	rte_spinlock_unlock(&registry_lock);
}

bool
trd_node_registered(const struct trd_node *n)
{
	bool found = false;

	rte_spinlock_lock(&registry_lock);
	for (unsigned int i = 0; i < registry_n && !found; i++)
		found = registry[i] == n;
	rte_spinlock_unlock(&registry_lock);
	return found;
}

unsigned int
trd_node_count(void)
{
	return __atomic_load_n(&registry_n, __ATOMIC_ACQUIRE);
}

struct trd_node *
trd_node_at(unsigned int i)
{
	struct trd_node *n = NULL;

	rte_spinlock_lock(&registry_lock);
	if (i < registry_n)
		n = registry[i];
	rte_spinlock_unlock(&registry_lock);
	return n;
}

/* Readers of a node found in the registry (trd_node_hold, for telemetry) share this;
 * trd_node_free(), once the node is out of the registry, takes it exclusively once, so every
 * reader that found the node before has let it go before it is torn down. */
static rte_rwlock_t registry_use = RTE_RWLOCK_INITIALIZER;

struct trd_node *
trd_node_hold(unsigned int i)
{
	struct trd_node *n;

	rte_rwlock_read_lock(&registry_use);
	n = trd_node_at(i);
	if (n == NULL)
		rte_rwlock_read_unlock(&registry_use);
	return n;
}

void
trd_node_release(struct trd_node *n)
{
	if (n != NULL)
		rte_rwlock_read_unlock(&registry_use);
}

/* ---- creation ---- */

static int
conf_resolve(struct trd_node_conf *c)
{
#define DEF(f, v)                                                                                  \
	do {                                                                                       \
		if (c->f == 0)                                                                     \
			c->f = (v);                                                                \
	} while (0)
	DEF(n_inj_fifos, 4);
	DEF(inj_fifo_size, 1024);
	DEF(n_rec_fifos, 4);
	DEF(rec_fifo_size, 1024);
	DEF(n_counters, 1024);
	DEF(n_regions, 256);
	if (c->n_reasm == 0)
		c->n_reasm = 256;
	DEF(inline_max, 256);
	DEF(burst, 32);
	DEF(coalesce, 32);
	DEF(n_eqs, 4);
	DEF(rel_window, 256);
	DEF(max_msg, 256u << 20);
	DEF(rto_us, 2000);
	DEF(ack_delay_us, 20);
	DEF(dead_ms, 1000);
	DEF(shares, 1);
#undef DEF
	if (c->shares > TRD_MAX_SHARES)
		return -ENOTSUP;
	if (c->torus.dim[0] == 0 && c->torus.dim[1] == 0 && c->torus.dim[2] == 0)
		trd_torus_init(&c->torus, 1, 1, 1);
	if (trd_torus_init(&c->torus, c->torus.dim[0], c->torus.dim[1], c->torus.dim[2]) != 0 ||
	    !trd_torus_contains(&c->torus, c->coord) || c->n_inj_fifos > TRD_MAX_FIFOS ||
	    c->n_rec_fifos > TRD_MAX_FIFOS || c->inj_fifo_size < 32 ||
	    c->inj_fifo_size > (1u << 24) || c->rec_fifo_size > (1u << 24) || c->n_counters < 2 ||
	    c->n_counters > 65536 || c->n_regions > 65535 || c->inline_max > TRD_INLINE_MAX ||
	    c->burst > 1024 || c->coalesce > TRD_BUNDLE_MAX || c->n_eqs > TRD_MAX_EQS ||
	    c->n_reasm < 8 || !rte_is_power_of_2(c->rel_window) || c->rel_window > 4096 ||
	    c->rel_window < 2)
		return -EINVAL;
	if (c->pool != NULL && c->pool->private_data_size < trd_pool_priv_size())
		return -EINVAL;
	return 0;
}

static struct trd_inj_fifo *
fifo_create(struct trd_node *n, uint8_t id, unsigned int size)
{
	static unsigned int serial;
	char name[RTE_RING_NAMESIZE];
	struct trd_inj_fifo *f = rte_zmalloc("trd_inj_fifo", sizeof(*f), RTE_CACHE_LINE_SIZE);

	if (f == NULL)
		return NULL;
	snprintf(name, sizeof(name), "trdinj%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	/* Many application threads post, the serving lcore takes. Producers are head/tail
	 * synchronised so that a post writes straight into the ring (inject.c). */
	f->ring = rte_ring_create_elem(name, TRD_UNIT, size * TRD_UNITS, SOCKET_ID_ANY,
				       RING_F_MP_HTS_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (f->ring == NULL) {
		rte_free(f);
		return NULL;
	}
	f->node = n;
	f->id = id;
	f->stage = f->sbuf;
	return f;
}

static void
fifo_free(struct trd_inj_fifo *f)
{
	if (f == NULL)
		return;
	trd_pay_fifo_drain(f); /* shared payloads not yet sent (payload.c) */
	rte_ring_free(f->ring);
	rte_free(f);
}

/* Recompute every route from the links present. */
static void
routes_update(struct trd_node *n)
{
	for (uint32_t r = 0; r < n->n_nodes; r++) {
		struct trd_route *rt = &n->routes[r];
		struct trd_coord c;
		enum trd_dir dir;
		int hops;

		trd_torus_coord(&n->torus, r, &c);
		memset(rt, 0, sizeof(*rt));
		if (r == n->rank) {
			rt->link = n->lo;
			rt->hops = 1;
			rt->dmac = n->lo->mac;
			continue;
		}
		trd_torus_next_hop(&n->torus, n->coord, c, &dir);
		hops = trd_torus_hops(&n->torus, n->coord, c);
		if (dir != TRD_DIR_NONE && n->dir_link[dir] != NULL) {
			rt->link = n->dir_link[dir];
			rt->hops = (uint8_t)RTE_MIN(hops + TRD_HOP_SLACK, 255);
			rt->dmac = rt->link->peer;
		} else if (n->sw_link != NULL) {
			rt->link = n->sw_link;
			rt->hops = 1 + TRD_HOP_SLACK;
			rt->dmac = n->has_peer_mac[r] ? n->peer_mac[r] : n->sw_link->peer;
		}
		/* the loss prior (rel.c) looks at the distances a route ever had, no further */
		n->hop_top = RTE_MAX(n->hop_top, trd_hop_bucket(rt->hops));
	}
}

/* What share_create() made (share 0 is the node: trd_node_free()). */
static void
share_free(struct trd_node *s)
{
	unsigned int i;

	if (s == NULL)
		return;
	for (i = 0; i <= s->n_links; i++)
		trd_link_free(s->links[i]);
	if (s->lo != NULL && s->links[s->n_links] != s->lo)
		trd_link_free(s->lo);
	fifo_free(s->inj[s->n_inj]); /* the others are share 0's */
	if (s->reasm != NULL)
		for (i = 0; i < s->conf.n_reasm; i++)
			rte_free(s->reasm[i].msg);
	if (s->mcache_n)
		rte_pktmbuf_free_bulk(s->mcache, s->mcache_n);
	rte_hash_free(s->reasm_hash);
	s->down = NULL; /* share 0's */
	trd_rel_fini(s);
	rte_free(s->routes);
	rte_free(s->reasm);
	rte_free(s);
}

/* Share @p k of @p p, made when @p p is complete: a copy of the node that keeps its shared
 * tables (counters, regions, completions, reception FIFOs, event queues, down[] and owed[]
 * are pointers to them) and has per-packet state of its own (node_pvt.h). */
static struct trd_node *
share_create(struct trd_node *p, unsigned int k)
{
	struct trd_node *s = rte_zmalloc("trd_node", sizeof(*s), RTE_CACHE_LINE_SIZE);
	char hname[RTE_HASH_NAMESIZE], lname[48];
	static unsigned int serial;
	unsigned int i;

	if (s == NULL)
		return NULL;
	/* a share reads the region table keyed: key it now, the first registration would
	 * change only share 0's copy of the secret */
	if (p->conf.n_regions != 0 && !p->mr_keyed) {
		trd_secret_bytes(p->mr_secret, sizeof(p->mr_secret));
		p->mr_secret[3] |= 1; /* odd, as mr_new_key() makes it */
		__atomic_store_n(&p->mr_keyed, true, __ATOMIC_RELEASE);
	}
	memcpy(s, p, sizeof(*s));
	memset(s->sh, 0, sizeof(s->sh));
	s->share = (uint8_t)k;
	s->lane_hf = TRD_HF_LANE;
	s->hf_data = (uint16_t)(p->hf_data | TRD_HF_LANE);
	s->main = p;
	s->comb = NULL;  /* collectives and their control work stay on share 0 */
	s->gfifo = NULL; /* and the guest FIFOs (guest.c) */
	s->n_gfifo = 0;
	s->guests = NULL;
	s->cap = NULL;
	memset(s->links, 0, sizeof(s->links));
	memset(s->dir_link, 0, sizeof(s->dir_link));
	s->sw_link = NULL;
	s->n_links = 0;
	s->served = 0;
	s->in_poll = 0;
	s->poll_gen = 0;
	s->rr = 0;
	s->mcache_n = 0;
	s->n_active = 0;
	s->next_msg_id = 1 + ((uint32_t)k << 28); /* apart from share 0's ids */
	memset(s->stat, 0, sizeof(s->stat));
	memset(s->drop, 0, sizeof(s->drop));
	s->peers = rte_zmalloc("trd_peers", sizeof(*s->peers) * s->n_nodes, 0);
	s->active = rte_zmalloc("trd_active", sizeof(*s->active) * s->n_nodes, 0);
	s->routes = rte_zmalloc("trd_routes", sizeof(*s->routes) * s->n_nodes, 0);
	s->reasm = rte_zmalloc("trd_reasm", sizeof(*s->reasm) * s->conf.n_reasm, 0);
	s->reasm_hash = NULL;
	s->lo = NULL;
	for (i = 0; i <= TRD_MAX_FIFOS; i++)
		s->inj[i] = NULL;
	s->n_inj = 0;
	if (s->peers == NULL || s->active == NULL || s->routes == NULL || s->reasm == NULL)
		goto fail;
	trd_secret_bytes(s->sess_key, sizeof(s->sess_key)); /* its sessions are its own */
	snprintf(hname, sizeof(hname), "trdrs%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	struct rte_hash_parameters hp = {
		.name = hname,
		.entries = s->conf.n_reasm,
		.key_len = sizeof(uint64_t),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
	};
	s->reasm_hash = rte_hash_create(&hp);
	if (s->reasm_hash == NULL)
		goto fail;
	/* injection FIFO i sends on lane i % shares; each share answers remote gets from an
	 * engine FIFO of its own, so a request's every crossing stays on its lane */
	for (i = 0; i < p->n_fifo; i++)
		if (i % p->n_shares == k)
			s->inj[s->n_inj++] = p->fifo[i];
	s->inj[s->n_inj] = fifo_create(s, TRD_ENGINE_FIFO, 4096);
	if (s->inj[s->n_inj] == NULL)
		goto fail;
	snprintf(lname, sizeof(lname), "%s.lo%u", p->name, k);
	s->lo = trd_link_loopback(lname, 1500);
	if (s->lo == NULL)
		goto fail;
	s->lo->node = s;
	s->links[0] = s->lo;
	routes_update(s);
	return s;
fail:
	share_free(s);
	return NULL;
}

struct trd_node *
trd_node_create(const struct trd_node_conf *conf)
{
	struct trd_node_conf c;
	struct trd_node *n;
	char hname[RTE_HASH_NAMESIZE];
	static unsigned int serial;
	unsigned int i;

	if (conf == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = *conf;
	i = (unsigned int)-conf_resolve(&c);
	if (i != 0) {
		NODE_LOG(ERR, "invalid node configuration%s",
			 i == ENOTSUP ? ": more shares than " RTE_STR(TRD_MAX_SHARES) : "");
		rte_errno = (int)i;
		return NULL;
	}
	n = rte_zmalloc("trd_node", sizeof(*n), RTE_CACHE_LINE_SIZE);
	if (n == NULL)
		goto nomem;
	n->conf = c;
	n->torus = c.torus;
	n->coord = c.coord;
	n->rank = (uint32_t)trd_torus_rank(&c.torus, c.coord);
	n->n_nodes = trd_torus_size(&c.torus);
	if (c.name != NULL)
		snprintf(n->name, sizeof(n->name), "%s", c.name);
	else
		snprintf(n->name, sizeof(n->name), "node%u", n->rank);
	n->conf.name = n->name;
	rte_spinlock_init(&n->ctl_lock);
	n->n_shares = (uint8_t)c.shares;
	n->main = n;
	n->sh[0] = n;
	n->hf_data = c.payload_crc ? TRD_HF_CRC : 0;
	n->pool = c.pool != NULL ? c.pool : trd_default_pool(0);
	n->blk_pool = trd_msg_blk_pool(); /* none: bundles' messages take an mbuf each */
	if (n->pool == NULL)
		goto nomem;
	n->next_msg_id = 1;

	n->routes = rte_zmalloc("trd_routes", sizeof(*n->routes) * n->n_nodes, 0);
	n->peer_mac = rte_zmalloc("trd_macs", sizeof(*n->peer_mac) * n->n_nodes, 0);
	n->has_peer_mac = rte_zmalloc("trd_macs", n->n_nodes, 0);
	n->ctr = trd_ctr_map(n, c.n_counters);
	n->ctr_used = rte_zmalloc("trd_ctr", c.n_counters, 0);
	n->mrs = rte_zmalloc("trd_mr", sizeof(*n->mrs) * c.n_regions, RTE_CACHE_LINE_SIZE);
	n->reasm = rte_zmalloc("trd_reasm", sizeof(*n->reasm) * c.n_reasm, 0);
	if (n->routes == NULL || n->peer_mac == NULL || n->has_peer_mac == NULL || n->ctr == NULL ||
	    n->ctr_used == NULL || n->mrs == NULL || n->reasm == NULL)
		goto nomem;
	for (i = 0; i < c.n_regions; i++) {
		n->mrs[i].node = n;
		n->mrs[i].slot = (uint16_t)i;
	}

	snprintf(hname, sizeof(hname), "trdra%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	struct rte_hash_parameters hp = {
		.name = hname,
		.entries = c.n_reasm,
		.key_len = sizeof(uint64_t),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
	};
	n->reasm_hash = rte_hash_create(&hp);
	if (n->reasm_hash == NULL)
		goto nomem;

	for (i = 0; i < c.n_inj_fifos; i++)
		if ((n->inj[i] = fifo_create(n, (uint8_t)i, c.inj_fifo_size)) == NULL)
			goto nomem;
	n->n_inj = c.n_inj_fifos;
	memcpy(n->fifo, n->inj, sizeof(n->fifo[0]) * c.n_inj_fifos);
	n->n_fifo = c.n_inj_fifos;
	n->inj[n->n_inj] = fifo_create(n, TRD_ENGINE_FIFO, 4096);
	if (n->inj[n->n_inj] == NULL)
		goto nomem;
	for (i = 0; i < c.n_rec_fifos; i++)
		if ((n->rec[i] = trd_rfifo_create(n, (uint8_t)i, c.rec_fifo_size)) == NULL)
			goto nomem;
	n->n_rec = c.n_rec_fifos;

	if (trd_cpl_init(n) != 0 || trd_rel_init(n) != 0)
		goto nomem;
	/* default event queues: as many as the smaller of the CPUs and the configured maximum */
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned int neq = RTE_MIN(c.n_eqs, (unsigned int)(cpus > 0 ? cpus : 1));

		for (i = 0; i < neq; i++)
			if (trd_eq_create(n, (int)i, 0) == NULL)
				goto nomem;
	}

	char lname[48];
	snprintf(lname, sizeof(lname), "%s.lo", n->name);
	n->lo = trd_link_loopback(lname, 1500);
	if (n->lo == NULL)
		goto nomem;
	n->lo->node = n;
	n->links[0] = n->lo;
	routes_update(n);
	for (i = 1; i < c.shares; i++)
		if ((n->sh[i] = share_create(n, i)) == NULL)
			goto nomem;
	if (c.shares > 1) {
		/* share 0 serves FIFOs 0, N, 2N, ... and its engine FIFO */
		struct trd_inj_fifo *eng = n->inj[n->n_inj];
		unsigned int k = 0;

		for (i = 0; i < n->n_fifo; i += c.shares)
			n->inj[k++] = n->fifo[i];
		n->inj[k] = eng;
		for (i = k + 1; i <= TRD_MAX_FIFOS; i++)
			n->inj[i] = NULL;
		n->n_inj = k;
	}
	if (registry_add(n) != 0) {
		NODE_LOG(ERR, "cannot create node: a process has at most %d nodes",
			 TRD_MAX_NODES_PROC);
		trd_node_free(n);
		rte_errno = ENOSPC;
		return NULL;
	}
	return n;

nomem:
	NODE_LOG(ERR, "cannot create node: out of memory (give EAL more with -m)");
	trd_node_free(n);
	rte_errno = ENOMEM;
	return NULL;
}

void
trd_node_free(struct trd_node *n)
{
	unsigned int i;

	if (n == NULL)
		return;
	if (n->att != NULL) {
		trd_attach_free(n);
		return;
	}
	/* out of the registry and without a capture at once: a capture command that found it
	 * there (telemetry) either acts before this or finds it gone */
	trd_node_capture_fini(n);
	/* and no reader holds it any more (trd_node_hold): none can find it now */
	rte_rwlock_write_lock(&registry_use);
	rte_rwlock_write_unlock(&registry_use);
	/* guests the VNI service did not remove (their rings are not touched) */
	trd_guest_fini(n);
	for (i = 1; i < TRD_MAX_SHARES; i++)
		if (n->sh[i] != NULL && n->sh[i] != n)
			share_free(n->sh[i]);
	for (i = 0; i <= n->n_links; i++)
		trd_link_free(n->links[i]);
	if (n->lo != NULL && n->links[n->n_links] != n->lo)
		trd_link_free(n->lo);
	for (i = 0; i < n->n_fifo; i++)
		fifo_free(n->fifo[i]);
	fifo_free(n->inj[n->n_inj]); /* the engine FIFO */
	for (i = 0; i < n->n_rec; i++)
		trd_rfifo_free(n->rec[i]);
	if (n->reasm != NULL)
		for (i = 0; i < n->conf.n_reasm; i++)
			rte_free(n->reasm[i].msg);
	if (n->mcache_n)
		rte_pktmbuf_free_bulk(n->mcache, n->mcache_n);
	rte_hash_free(n->reasm_hash);
	for (i = 0; i < n->n_eqs; i++)
		trd_eq_free(n->eqs[i]);
	trd_comb_fini(n);
	trd_rel_fini(n);
	trd_cpl_fini(n);
	rte_free(n->routes);
	rte_free(n->peer_mac);
	rte_free(n->has_peer_mac);
	trd_ctr_unmap(n);
	rte_free(n->ctr_used);
	rte_free(n->mrs);
	rte_free(n->reasm);
	rte_free(n);
}

int
trd_node_add_share_link(struct trd_node *n, unsigned int share, struct trd_link *l,
			enum trd_dir dir)
{
	if (n == NULL || share >= n->n_shares)
		return -EINVAL;
	return trd_node_add_link(n->sh[share], l, dir);
}

unsigned int
trd_node_shares(const struct trd_node *n)
{
	return n == NULL ? 0 : n->n_shares;
}

int
trd_node_add_link(struct trd_node *n, struct trd_link *l, enum trd_dir dir)
{
	if (n == NULL || l == NULL || l->node != NULL || dir < TRD_DIR_NONE || dir >= TRD_DIR_COUNT)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP;
	if (__atomic_load_n(&n->served, __ATOMIC_ACQUIRE))
		return -EBUSY;
	if (n->n_links >= TRD_MAX_LINKS)
		return -ENOSPC;
	if (l->mtu < TRD_HDR_LEN + 8 + (n->reliable ? TRD_PROOF_LEN : 0))
		return -EINVAL;
	if (l->encap != NULL && dir == TRD_DIR_NONE)
		return -ENOTSUP; /* an encapsulated link has one peer address */
	if (dir == TRD_DIR_NONE) {
		if (n->sw_link != NULL)
			return -EEXIST;
		n->sw_link = l;
	} else {
		struct trd_coord nb;

		if (n->dir_link[dir] != NULL)
			return -EEXIST;
		if (trd_torus_step(&n->torus, n->coord, dir, &nb) != 0)
			return -EINVAL; /* no neighbour that way (dimension of size 1) */
		n->dir_link[dir] = l;
	}
	l->dir = dir;
	l->node = n;
	l->trailer = n->reliable ? TRD_PROOF_LEN : 0; /* the session token (trd_max_payload()) */
	/* keep the loopback last */
	n->links[n->n_links] = l;
	n->n_links++;
	n->links[n->n_links] = n->lo;
	routes_update(n);
	return trd_node_tap_link(n, l);
}

int
trd_node_set_peer_mac(struct trd_node *n, struct trd_coord peer, const uint8_t mac[6])
{
	int r;

	if (n == NULL || mac == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */
	r = trd_torus_rank(&n->torus, peer);
	if (r < 0)
		return -EINVAL;
	memcpy(n->peer_mac[r].addr_bytes, mac, 6);
	n->has_peer_mac[r] = 1;
	routes_update(n);
	return 0;
}

struct trd_coord
trd_node_coord(const struct trd_node *n)
{
	return n->coord;
}

const struct trd_torus *
trd_node_torus(const struct trd_node *n)
{
	return &n->torus;
}

const char *
trd_node_name(const struct trd_node *n)
{
	return n->name;
}

unsigned int
trd_node_n_links(const struct trd_node *n)
{
	return n == NULL ? 0 : n->n_links;
}

struct trd_link *
trd_node_link(const struct trd_node *n, unsigned int i)
{
	return (n == NULL || i >= n->n_links) ? NULL : n->links[i];
}

struct trd_link *
trd_node_share_link(const struct trd_node *n, unsigned int share, unsigned int i)
{
	return (n == NULL || share >= n->n_shares) ? NULL : trd_node_link(n->sh[share], i);
}

int
trd_node_route_hops(const struct trd_node *n, struct trd_coord dst)
{
	int r;

	if (n == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */
	r = trd_torus_rank(&n->torus, dst);
	if (r < 0)
		return -EINVAL;
	if (n->routes[r].link == NULL)
		return -EHOSTUNREACH;
	/* the route's hop limit less its slack: 1 over a switched segment */
	return r == (int)n->rank ? 0 : n->routes[r].hops - TRD_HOP_SLACK;
}

static void
share_stats_add(const struct trd_node *s, struct trd_node_stats *out)
{
	for (unsigned int i = 0; i < TRD_STAT_MAX; i++)
		out->stat[i] += __atomic_load_n(&s->stat[i], __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < TRD_DROP_MAX; i++)
		out->drop[i] += __atomic_load_n(&s->drop[i], __ATOMIC_RELAXED);
}

int
trd_node_stats_get(const struct trd_node *n, struct trd_node_stats *out)
{
	if (n == NULL || out == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */
	memset(out, 0, sizeof(*out));
	for (unsigned int k = 0; k < n->n_shares; k++)
		share_stats_add(n->sh[k], out);
	return 0;
}

int
trd_node_share_stats_get(const struct trd_node *n, unsigned int share, struct trd_node_stats *out)
{
	if (n == NULL || out == NULL || share >= n->n_shares)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	share_stats_add(n->sh[share], out);
	return 0;
}

/* ---- progress ---- */

void
trd_node_set_progress(struct trd_node *n, trd_progress_fn fn, void *arg)
{
	n->progress = fn;
	n->progress_arg = arg;
}

void
trd_node_progress(struct trd_node *n)
{
	if (n == NULL)
		return;
	/* served by a lcore, or by toroid-node (an attached process's handle) */
	if (n->att != NULL || __atomic_load_n(&n->served, __ATOMIC_ACQUIRE)) {
		rte_pause();
		return;
	}
	if (n->progress != NULL)
		n->progress(n->progress_arg);
	else
		trd_node_poll(n);
}
