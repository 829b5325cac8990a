/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion notification by reflection, and doorbells.
 *
 * trd_inject_reflect() posts the data descriptor and, right behind it in the same FIFO, a
 * remote get to the reflection node that carries the completion descriptor. The reflection
 * node's engine injects the carried descriptor into its own engine FIFO and sends it back
 * with no application involved. The origin accepts a completion only for an id it handed out
 * and has not seen completed: anything else is dropped as unknown_completion.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_power_intrinsics.h>
#include <rte_ring.h>

#include "core_pvt.h"

enum { CPL_FREE = 0, CPL_PENDING = 1, CPL_CLOSING = 2 };

static void cpl_release(struct trd_node *n, uint32_t id);
static void cpl_unowe(struct trd_node *n, uint32_t id);

int
trd_cpl_init(struct trd_node *n)
{
	static unsigned int serial;
	char name[RTE_RING_NAMESIZE];

	n->cpl = rte_zmalloc("trd_cpl", sizeof(*n->cpl) * TRD_N_CPL, RTE_CACHE_LINE_SIZE);
	snprintf(name, sizeof(name), "trdcpl%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	n->cpl_free = rte_ring_create(name, TRD_N_CPL, SOCKET_ID_ANY, RING_F_EXACT_SZ);
	n->owed = rte_zmalloc("trd_owed", sizeof(*n->owed) * n->n_nodes, 0);
	if (n->cpl == NULL || n->cpl_free == NULL || n->owed == NULL)
		return -ENOMEM;
	for (uintptr_t id = 1; id <= TRD_N_CPL; id++) {
		n->cpl[id - 1].peer = UINT32_MAX;
		rte_ring_enqueue(n->cpl_free, (void *)id);
	}
	return 0;
}

void
trd_cpl_fini(struct trd_node *n)
{
	rte_ring_free(n->cpl_free);
	rte_free(n->cpl);
	rte_free(n->owed);
}

unsigned int
trd_node_cpl_pending(const struct trd_node *n)
{
	return n == NULL ? 0 : __atomic_load_n(&n->cpl_pending, __ATOMIC_ACQUIRE);
}

/* The rank of the node that sent @p p (its source is inside the torus: checked on receipt). */
static inline uint32_t
src_rank(const struct trd_node *n, const struct trd_pkt *p)
{
	struct trd_coord s = {p->src[0], p->src[1], p->src[2]};
	int r = trd_rank_of(n, s);

	return r < 0 ? UINT32_MAX : (uint32_t)r;
}

int
trd_cpl_accept(struct trd_node *n, const struct trd_pkt *p, uint8_t kind, uint64_t cookie)
{
	uint32_t id = p->aux;
	struct trd_cpl *c;

	if (id == 0 || id > TRD_N_CPL)
		return TRD_DROP_UNKNOWN_CPL;
	c = &n->cpl[id - 1];
	/* from the node it was sent through (the reflector), with its cookie */
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CPL_PENDING || c->kind != kind ||
	    c->cookie != cookie || __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE) != src_rank(n, p))
		return TRD_DROP_UNKNOWN_CPL;
	cpl_release(n, id);
	return 0;
}

int
trd_track_open(struct trd_node *n, uint8_t rfifo, uint64_t cookie, uint64_t *result, uint32_t *id)
{
	uintptr_t v;
	struct trd_cpl *c;

	if (n == NULL || id == NULL || rfifo >= n->n_rec)
		return -EINVAL;
	if (rte_ring_dequeue(n->cpl_free, (void **)&v) != 0)
		return -ENOSPC;
	c = &n->cpl[v - 1];
	c->cookie = cookie;
	c->kind = TRD_CPL_TRACK;
	c->fifo = rfifo;
	c->result = result;
	cpl_unowe(n, (uint32_t)v); /* the peer is set when the operation leaves */
	__atomic_fetch_add(&n->cpl_pending, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&c->state, CPL_PENDING, __ATOMIC_RELEASE);
	*id = (uint32_t)v;
	return 0;
}

void
trd_cpl_set_peer(struct trd_node *n, uint32_t id, uint32_t rank)
{
	uint32_t old;

	if (id == 0 || id > TRD_N_CPL || rank >= n->n_nodes)
		return;
	/* count the new peer before the old one goes: the owed count never misses it */
	__atomic_fetch_add(&n->owed[rank], 1, __ATOMIC_RELAXED);
	old = __atomic_exchange_n(&n->cpl[id - 1].peer, rank, __ATOMIC_ACQ_REL);
	if (old < n->n_nodes)
		__atomic_fetch_sub(&n->owed[old], 1, __ATOMIC_RELAXED);
}

/* The outcome no longer comes from anyone. */
static void
cpl_unowe(struct trd_node *n, uint32_t id)
{
	uint32_t old = __atomic_exchange_n(&n->cpl[id - 1].peer, UINT32_MAX, __ATOMIC_ACQ_REL);

	if (old < n->n_nodes)
		__atomic_fetch_sub(&n->owed[old], 1, __ATOMIC_RELAXED);
}

static void
cpl_release(struct trd_node *n, uint32_t id)
{
	cpl_unowe(n, id);
	__atomic_store_n(&n->cpl[id - 1].state, CPL_FREE, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&n->cpl_pending, 1, __ATOMIC_RELEASE);
	rte_ring_enqueue(n->cpl_free, (void *)(uintptr_t)id);
}

int
trd_track_close(struct trd_node *n, uint32_t id)
{
	uint32_t expect = CPL_PENDING;

	if (n == NULL || id == 0 || id > TRD_N_CPL || n->cpl[id - 1].kind != TRD_CPL_TRACK)
		return -EINVAL;
	/* the engine may be completing it right now: whoever flips the state owns the id */
	if (!__atomic_compare_exchange_n(&n->cpl[id - 1].state, &expect, CPL_CLOSING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EINVAL;
	cpl_release(n, id);
	return 0;
}

void
trd_cpl_set_msg(struct trd_node *n, uint32_t id, uint32_t msg_id)
{
	if (id == 0 || id > TRD_N_CPL)
		return;
	__atomic_store_n(&n->cpl[id - 1].msg_id, msg_id, __ATOMIC_RELEASE);
}

struct trd_cpl *
trd_track_take(struct trd_node *n, const struct trd_pkt *p)
{
	uint32_t expect = CPL_PENDING, id = p->aux;
	struct trd_cpl *c;

	if (id == 0 || id > TRD_N_CPL)
		return NULL;
	c = &n->cpl[id - 1];
	/* the verdict names the operation whole: the id, the message that carried the request
	 * (a message id is not reused for 2^32 messages), and the node it went to */
	if (c->kind != TRD_CPL_TRACK ||
	    __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE) != src_rank(n, p) ||
	    __atomic_load_n(&c->msg_id, __ATOMIC_ACQUIRE) != p->offset ||
	    !__atomic_compare_exchange_n(&c->state, &expect, CPL_CLOSING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return NULL;
	return c;
}

void
trd_track_done(struct trd_node *n, struct trd_cpl *c)
{
	cpl_release(n, (uint32_t)(c - n->cpl) + 1);
}

void
trd_cpl_fail(struct trd_node *n, uint32_t id, unsigned int cause)
{
	uint32_t expect = CPL_PENDING;
	struct trd_cpl *c;

	if (id == 0 || id > TRD_N_CPL)
		return;
	c = &n->cpl[id - 1];
	if (!__atomic_compare_exchange_n(&c->state, &expect, CPL_CLOSING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	n->stat[TRD_STAT_CPL_FAILED]++;
	/* a FIFO completion or a tracked operation learns why; a doorbell cannot say it */
	if (c->kind == TRD_CPL_TRACK || c->kind == TRD_CPL_FIFO)
		trd_rfifo_outcome(n, c->fifo, c->peer, c->cookie, cause);
	cpl_release(n, id);
}

int
trd_cause_errno(unsigned int cause)
{
	switch (cause) {
	case TRD_DROP_NONE:
		return 0;
	case TRD_DROP_BAD_KEY:
		return -ENOKEY;
	case TRD_DROP_OUT_OF_BOUNDS:
		return -ERANGE;
	case TRD_DROP_NO_ACCESS:
		return -EACCES;
	case TRD_DROP_UNKNOWN_FIFO:
	case TRD_DROP_UNKNOWN_COUNTER:
		return -ENOENT;
	case TRD_DROP_FIFO_FULL:
		return -ENOBUFS;
	case TRD_DROP_BAD_DESC:
	case TRD_DROP_BAD_ALIGN:
		return -EINVAL;
	case TRD_DROP_BAD_DST:
		return -EPERM;
	case TRD_DROP_NO_MEMORY:
		return -ENOMEM;
	case TRD_DROP_NO_ROUTE:
	case TRD_DROP_PEER_DOWN:
		return -EHOSTUNREACH;
	default:
		return -EIO;
	}
}

int
trd_node_set_reflector(struct trd_node *n, struct trd_coord r)
{
	if (n == NULL || !trd_torus_contains(&n->torus, r) ||
	    trd_torus_hops(&n->torus, n->coord, r) != 1)
		return -EINVAL;
	n->reflector = r;
	n->reflector_set = true;
	return 0;
}

int
trd_node_reflector(const struct trd_node *n, struct trd_coord *out)
{
	if (n == NULL || out == NULL)
		return -EINVAL;
	if (n->reflector_set) {
		*out = n->reflector;
		return 0;
	}
	/* the neighbour on the first usable link, in direction order */
	for (int d = 0; d < TRD_DIR_COUNT; d++)
		if (n->dir_link[d] != NULL &&
		    trd_torus_step(&n->torus, n->coord, (enum trd_dir)d, out) == 0)
			return 0;
	if (n->sw_link != NULL)
		for (int d = 0; d < TRD_DIR_COUNT; d++)
			if (trd_torus_step(&n->torus, n->coord, (enum trd_dir)d, out) == 0)
				return 0;
	return -ENOENT;
}

int
trd_inject_reflect(struct trd_fifo *f, const struct trd_desc *data,
		   const struct trd_cpl_spec *spec)
{
	struct trd_desc d[2], b;
	struct trd_node *n;
	struct trd_coord refl;
	uintptr_t id;
	int rc;

	if (f == NULL || data == NULL || spec == NULL ||
	    (data->op != TRD_OP_PUT && data->op != TRD_OP_FIFO) ||
	    (spec->mode != TRD_CPL_LOCAL && spec->mode != TRD_CPL_DELIVERY))
		return -EINVAL;
	n = f->node;
	if (spec->mode == TRD_CPL_DELIVERY) {
		refl = data->dst;
	} else if (spec->reflector != NULL) {
		refl = *spec->reflector;
		if (!trd_torus_contains(&n->torus, refl) ||
		    trd_torus_hops(&n->torus, n->coord, refl) != 1)
			return -EINVAL; /* a reflector is a nearest neighbour */
	} else if (trd_node_reflector(n, &refl) != 0) {
		refl = data->dst; /* no neighbour at all: the target reflects */
	}

	switch (spec->kind) {
	case TRD_CPL_FIFO:
		if (spec->fifo >= n->n_rec)
			return -EINVAL;
		trd_desc_fifo(&b, n->coord, spec->fifo, NULL, 0, spec->cookie, 0);
		break;
	case TRD_CPL_DOORBELL:
		if (spec->doorbell == NULL || spec->doorbell->node != n || !spec->doorbell->doorbell ||
		    spec->doorbell->key == 0 || spec->offset % 8 != 0 ||
		    spec->offset > spec->doorbell->len - 8)
			return -EINVAL;
		trd_desc_put(&b, n->coord, NULL, 8, spec->doorbell->key, spec->offset, 0, 0);
		b.flags = TRD_DF_IMM;
		b.user = spec->cookie;
		break;
	default:
		return -EINVAL;
	}
	if (rte_ring_dequeue(n->cpl_free, (void **)&id) != 0)
		return -ENOSPC;
	n->cpl[id - 1].cookie = spec->cookie;
	n->cpl[id - 1].kind = (uint8_t)spec->kind;
	n->cpl[id - 1].fifo = spec->fifo;
	__atomic_store_n(&n->cpl[id - 1].state, CPL_PENDING, __ATOMIC_RELEASE);
	trd_cpl_set_peer(n, (uint32_t)id, (uint32_t)trd_torus_rank(&n->torus, refl));
	b.flags |= TRD_DF_CPL;
	b.aux = (uint32_t)id;

	d[0] = *data;
	/* A local completion says the source may be reused: whatever the reliability layer may
	 * have to resend after it comes is the engine's copy, never the application's buffer. */
	if (spec->mode == TRD_CPL_LOCAL)
		d[0].flags |= TRD_DF_COPY;
	trd_desc_rget(&d[1], refl, TRD_ENGINE_FIFO, &b, 1);
	d[1].flags = TRD_DF_ORDERED;
	__atomic_fetch_add(&n->cpl_pending, 1, __ATOMIC_ACQ_REL);
	rc = trd_inject_bulk(f, d, 2);
	if (rc != 0) {
		cpl_unowe(n, (uint32_t)id);
		__atomic_store_n(&n->cpl[id - 1].state, CPL_FREE, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&n->cpl_pending, 1, __ATOMIC_ACQ_REL);
		rte_ring_enqueue(n->cpl_free, (void *)id);
	}
	return rc;
}

/* ---- doorbells ---- */

struct trd_mr *
trd_doorbell_register(struct trd_node *n, void *addr, size_t len, struct trd_eq *eq)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct trd_mr *mr;

	if (n == NULL || addr == NULL || len == 0 || (uintptr_t)addr % page != 0 ||
	    len % page != 0 || (eq != NULL && eq->node != n)) {
		rte_errno = EINVAL;
		return NULL;
	}
	mr = trd_mr_register(n, addr, len, TRD_ACCESS_REMOTE_WRITE);
	if (mr != NULL) {
		mr->eq = eq;
		mr->doorbell = true;
	}
	return mr;
}

int
trd_doorbell_monitor_supported(void)
{
	struct rte_cpu_intrinsics intr;

	rte_cpu_get_intrinsics_support(&intr);
	return intr.power_monitor ? 1 : 0;
}

static int
monitor_abort(const uint64_t val, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	return val == opaque[0] ? -1 : 0; /* already there: do not sleep */
}

int
trd_doorbell_wait(struct trd_mr *db, uint64_t offset, uint64_t value, enum trd_wait_how how,
		  uint64_t timeout_us)
{
	volatile uint64_t *word;
	struct trd_node *n;
	uint64_t deadline;
	bool monitor;

	if (db == NULL || db->key == 0 || offset % 8 != 0 || db->len < 8 || offset > db->len - 8)
		return -EINVAL;
	n = db->node;
	word = (volatile uint64_t *)(db->base + offset);
	deadline = trd_time_us() + timeout_us;
	switch (how) {
	case TRD_WAIT_SPIN:
	case TRD_WAIT_MONITOR:
		monitor = how == TRD_WAIT_MONITOR && trd_doorbell_monitor_supported() &&
			  __atomic_load_n(&n->served, __ATOMIC_ACQUIRE);
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
			if (trd_time_us() >= deadline)
				return -ETIMEDOUT;
			if (monitor) {
				struct rte_power_monitor_cond pmc = {
					.addr = word,
					.size = sizeof(uint64_t),
					.fn = monitor_abort,
					.opaque = {value},
				};
				/* sleep until the word is written or 100 us pass */
				rte_power_monitor(&pmc, rte_get_tsc_cycles() + rte_get_tsc_hz() / 10000);
			} else {
				/* the fallback on CPUs without WAITPKG: a pause loop */
				trd_node_progress(n);
			}
		}
		return 0;
	case TRD_WAIT_EQ:
		if (db->eq == NULL)
			return -EINVAL;
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
			struct trd_event ev[16];
			uint64_t now = trd_time_us();
			int rc;

			if (now >= deadline)
				return -ETIMEDOUT;
			rc = trd_eq_wait(db->eq, ev, RTE_DIM(ev), deadline - now);
			if (rc < 0 && rc != -ETIMEDOUT)
				return rc;
		}
		return 0;
	}
	return -EINVAL;
}
