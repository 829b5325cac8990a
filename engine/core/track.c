/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion ids and tracked operations: the table of pending completions (reflected, doorbell,
 * FIFO) and tracked operations, their owner and peer, their outcome or failure, and the errno
 * a drop cause maps to. The origin accepts a completion only for an id it handed out and has
 * not seen completed: anything else is dropped as unknown_completion.
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

static void cpl_release(struct trd_node *n, uint32_t id);

/* The completion id of table entry @p c. */
static inline uint32_t
cpl_id(const struct trd_node *n, const struct trd_cpl *c)
{
	return (uint32_t)(c - n->cpl) + 1;
}

static void cpl_free_id(struct trd_node *n, uint32_t id);
static void guest_cpl_release(struct trd_node *n, struct trd_cpl *c, struct trd_guest *g);

/* Claimed id @p id whose completion its FIFO refused: pending again for the sender's next
 * copy (a failure that found it claimed meanwhile gave up), or failed now if its peer @p rank
 * went down. */
static void
cpl_unclaim(struct trd_node *n, uint32_t id, uint32_t rank)
{
	__atomic_store_n(&n->cpl[id - 1].state, CPL_PENDING, __ATOMIC_RELEASE);
	/* store PENDING, then load down[]; peer_down() stores down[], then CASes the state:
	 * without a full fence both may miss (store-buffer reordering) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (trd_peer_is_down(n, rank))
		trd_cpl_fail(n, id, TRD_DROP_PEER_DOWN);
}

int
trd_cpl_init(struct trd_node *n)
{
	static unsigned int serial;
	unsigned int k = __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);
	char name[RTE_RING_NAMESIZE];

	n->cpl = rte_zmalloc("trd_cpl", sizeof(*n->cpl) * TRD_N_CPL, RTE_CACHE_LINE_SIZE);
	snprintf(name, sizeof(name), "trdcpl%u", k);
	n->cpl_free = rte_ring_create(name, TRD_N_CPL, SOCKET_ID_ANY, RING_F_EXACT_SZ);
	/* every share fails ids, share 0 alone takes them; an id is there at most once
	 * (claimed until delivered), so neither overflows */
	snprintf(name, sizeof(name), "trdlate%u", k);
	n->cpl_later =
		rte_ring_create(name, TRD_N_CPL, SOCKET_ID_ANY, RING_F_EXACT_SZ | RING_F_SC_DEQ);
	n->later = rte_malloc("trd_later", sizeof(*n->later) * TRD_N_CPL, 0);
	n->later_fifo = rte_zmalloc("trd_later_fifo", sizeof(*n->later_fifo) * 256, 0);
	n->owed = rte_zmalloc("trd_owed", sizeof(*n->owed) * n->n_nodes, 0);
	if (n->cpl == NULL || n->cpl_free == NULL || n->cpl_later == NULL || n->later == NULL ||
	    n->later_fifo == NULL || n->owed == NULL)
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
	rte_ring_free(n->cpl_later); /* (ids only: nothing to free with them) */
	rte_free(n->later);
	rte_free(n->later_fifo);
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
trd_cpl_claim(struct trd_node *n, const struct trd_pkt *p, uint8_t kind, uint64_t cookie)
{
	uint32_t expect = CPL_PENDING, id = p->aux;
	struct trd_cpl *c;

	if (id == 0 || id > TRD_N_CPL)
		return TRD_DROP_UNKNOWN_CPL;
	c = &n->cpl[id - 1];
	/* from the node it was sent through (the reflector), with its cookie (read once the id
	 * is seen pending); whoever flips the state owns the id (a failure may be on its way) */
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CPL_PENDING || c->kind != kind ||
	    c->cookie != cookie || __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE) != src_rank(n, p) ||
	    !__atomic_compare_exchange_n(&c->state, &expect, CPL_CLOSING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return TRD_DROP_UNKNOWN_CPL;
	/* no longer pending for the application, which may see the completion at once */
	__atomic_fetch_sub(&n->main->cpl_pending, 1, __ATOMIC_RELEASE);
	return 0;
}

void
trd_cpl_settle(struct trd_node *n, const struct trd_pkt *p, int cause)
{
	uint32_t id = p->aux;
	struct trd_cpl *c = &n->cpl[id - 1];

	if (trd_drop_resent(n, p, cause)) {
		/* refused for lack of room: the reliable sender brings the echo again, and the id
		 * waits for it as before */
		__atomic_fetch_add(&n->main->cpl_pending, 1, __ATOMIC_RELEASE);
		cpl_unclaim(n, id, __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE));
		return;
	}
	/* delivered; or lost for good (an echo that never comes again), and the id with it */
	cpl_free_id(n, id);
}

int
trd_cpl_accept(struct trd_node *n, const struct trd_pkt *p, uint8_t kind, uint64_t cookie)
{
	int rc = trd_cpl_claim(n, p, kind, cookie);

	if (rc == 0)
		cpl_free_id(n, p->aux);
	return rc;
}

int
trd_cpl_accept_guest(struct trd_node *n, const struct trd_pkt *p)
{
	uint32_t expect = CPL_PENDING, id = p->aux, rank = src_rank(n, p);
	struct trd_guest *g;
	struct trd_cpl *c;
	int rc;

	if (id == 0 || id > TRD_N_CPL || p->msg_len != 0 || p->counter != 0)
		return TRD_DROP_UNKNOWN_CPL;
	c = &n->cpl[id - 1];
	/* from the reflector, into the FIFO and with the cookie the guest's remote get named;
	 * whoever flips the state owns the id (a failure may be on its way) */
	if (c->kind != TRD_CPL_GUEST || !c->refl || c->fifo != p->fifo || c->cookie != p->key ||
	    __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE) != rank ||
	    !__atomic_compare_exchange_n(&c->state, &expect, CPL_CLOSING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return TRD_DROP_UNKNOWN_CPL;
	g = __atomic_load_n(&c->guest, __ATOMIC_ACQUIRE);
	rc = g != NULL ? trd_grfifo_outcome(n, c->fifo, rank, c->cookie, TRD_DROP_NONE, false, 0)
		       : 0;
	if (trd_drop_resent(n, p, rc)) {
		/* no room for it: the echo is refused for now, and the reliable sender brings it
		 * again, as the plain message it stands for; the id waits as before. Only a
		 * sequenced echo comes again: one on the loopback (the process's own node
		 * reflects) or on an unreliable torus would leave the id pending for ever */
		cpl_unclaim(n, id, rank);
		return rc;
	}
	if (rc != 0)
		trd_drop(n, (unsigned int)rc); /* its FIFO is gone, or full for an echo that
						* never comes again: written nowhere */
	guest_cpl_release(n, c, g);
	return 0;
}

void
trd_cpl_fail_carried(struct trd_node *n, const struct trd_desc *d, const void *carried,
		     unsigned int cause)
{
	const struct trd_desc *c = carried;
	int rank = trd_rank_of(n, d->dst);

	for (uint32_t k = 0; c != NULL && k < d->len / sizeof(*c); k++) {
		const struct trd_cpl *e;

		if (!(c[k].flags & TRD_DF_CPL) || c[k].aux == 0 || c[k].aux > TRD_N_CPL)
			continue;
		/* only while the id is still this remote get's (what its echo would check): one
		 * failed already (its reflector declared down) may be someone else's now */
		e = &n->cpl[c[k].aux - 1];
		if (rank < 0 || __atomic_load_n(&e->peer, __ATOMIC_ACQUIRE) != (uint32_t)rank ||
		    e->cookie != c[k].user || (c[k].op == TRD_OP_FIFO && e->fifo != c[k].fifo))
			continue;
		trd_cpl_fail(n, c[k].aux, cause);
	}
}

/* A free id for a tracked operation of @p kind, its fields set before it is pending (the peer
 * is set when the operation leaves). NULL: none free. */
static struct trd_cpl *
track_take_free(struct trd_node *n, uint8_t kind, uint8_t rfifo, uint64_t cookie, uint64_t *result,
		int64_t *ctr, struct trd_guest *g, uint32_t *id, uint8_t refl)
{
	uintptr_t v;
	struct trd_cpl *c;

	if (rte_ring_dequeue(n->cpl_free, (void **)&v) != 0)
		return NULL;
	c = &n->cpl[v - 1];
	c->cookie = cookie;
	c->kind = kind;
	c->fifo = rfifo;
	c->refl = refl;
	__atomic_store_n(&c->result, result, __ATOMIC_RELAXED);
	__atomic_store_n(&c->ctr, ctr, __ATOMIC_RELAXED);
	__atomic_store_n(&c->guest, g, __ATOMIC_RELAXED);
	trd_cpl_unowe(n, (uint32_t)v);
	__atomic_fetch_add(&n->main->cpl_pending, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&c->state, CPL_PENDING, __ATOMIC_RELEASE);
	*id = (uint32_t)v;
	return c;
}

int
trd_track_open(struct trd_node *n, uint8_t rfifo, uint64_t cookie, uint64_t *result, uint32_t *id)
{
	if (n == NULL || id == NULL || rfifo >= n->n_rec)
		return -EINVAL;
	if (n->att != NULL) /* a handle of an attached process: its library keeps its ids */
		return n->att->track_open(n, rfifo, cookie, result, id);
	return track_take_free(n, TRD_CPL_TRACK, rfifo, cookie, result, NULL, NULL, id, 0) != NULL
		       ? 0
		       : -ENOSPC;
}

/* An id of guest @p g (TRD_CPL_GUEST), a reflection's when @p refl. 0 or -ENOSPC. */
static int
track_open_guest(struct trd_node *n, struct trd_guest *g, uint64_t *result, int64_t *ctr,
		 uint8_t fifo, uint64_t cookie, uint32_t *id, uint8_t refl)
{
	uint32_t *held = &n->main->guest_cpls;

	if (__atomic_load_n(held, __ATOMIC_RELAXED) >= TRD_GUEST_CPLS)
		return -ENOSPC;
	/* counted before it is pending: its verdict, on another lcore, takes it off */
	__atomic_fetch_add(held, 1, __ATOMIC_RELAXED);
	if (track_take_free(n, TRD_CPL_GUEST, fifo, cookie, result, ctr, g, id, refl) == NULL) {
		__atomic_fetch_sub(held, 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	return 0;
}

int
trd_track_open_guest(struct trd_node *n, struct trd_guest *g, uint64_t *result, int64_t *ctr,
		     uint8_t fifo, uint64_t cookie, uint32_t *id)
{
	return track_open_guest(n, g, result, ctr, fifo, cookie, id, 0);
}

int
trd_track_open_refl(struct trd_node *n, struct trd_guest *g, uint8_t fifo, uint64_t cookie,
		    uint32_t *id)
{
	return track_open_guest(n, g, NULL, NULL, fifo, cookie, id, 1);
}

/* A guest's id, its verdict delivered or given up (the state flipped to CLOSING by the caller):
 * off @p g's count (NULL: the guest is gone), off the node's share of guest ids, free again. */
static void
guest_cpl_release(struct trd_node *n, struct trd_cpl *c, struct trd_guest *g)
{
	uint32_t id = cpl_id(n, c);

	if (g != NULL)
		trd_guest_tracked_done(g, id);
	__atomic_store_n(&c->guest, NULL, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&n->main->guest_cpls, 1, __ATOMIC_RELAXED); /* forgotten or not */
	cpl_release(n, id);
}

int
trd_track_guest_done(struct trd_node *n, struct trd_cpl *c, unsigned int cause, bool has_old,
		     uint64_t old, bool keep)
{
	/* (trd_track_forget_guest() may run meanwhile on the service's thread: it waits for
	 * this round to end before the guest's memory goes) */
	struct trd_guest *g = __atomic_load_n(&c->guest, __ATOMIC_ACQUIRE);
	uint64_t *res = __atomic_load_n(&c->result, __ATOMIC_ACQUIRE);
	int64_t *ctr = __atomic_load_n(&c->ctr, __ATOMIC_ACQUIRE);

	if (g != NULL && c->fifo != 0) {
		/* (its FIFO is looked up by id: stopped once the guest is gone) */
		int rc = trd_grfifo_outcome(n, c->fifo, __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE),
					    c->cookie, cause, has_old, old);

		if (rc == TRD_DROP_FIFO_FULL && keep)
			return rc; /* the id stays claimed: refused, or kept for later */
		if (rc != 0)
			trd_drop(n, (unsigned int)rc); /* (lost and counted) */
	} else if (g != NULL) {
		if (cause == TRD_DROP_NONE && has_old && res != NULL)
			__atomic_store_n(res, old, __ATOMIC_RELEASE);
		if (ctr != NULL) {
			if (cause == TRD_DROP_NONE)
				__atomic_fetch_sub(ctr, (int64_t)sizeof(uint64_t),
						   __ATOMIC_RELEASE);
			else
				trd_ctr_fail(ctr);
		}
	}
	guest_cpl_release(n, c, g);
	return 0;
}

int
trd_track_close_guest(struct trd_node *n, struct trd_guest *g, uint32_t id, uint64_t cookie)
{
	uint32_t expect = CPL_PENDING;
	struct trd_cpl *c;

	if (id == 0 || id > TRD_N_CPL)
		return -ENOENT;
	c = &n->cpl[id - 1];
	/* whoever flips the state owns the id: a verdict arriving now, or this */
	if (c->kind != TRD_CPL_GUEST || c->refl || c->fifo == 0 || c->cookie != cookie ||
	    __atomic_load_n(&c->guest, __ATOMIC_ACQUIRE) != g ||
	    !__atomic_compare_exchange_n(&c->state, &expect, CPL_CLOSING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -ENOENT;
	guest_cpl_release(n, c, g);
	return 0;
}

void
trd_track_forget_guest(struct trd_node *n, const struct trd_guest *g)
{
	for (uint32_t id = 1; id <= TRD_N_CPL; id++) {
		struct trd_cpl *c = &n->cpl[id - 1];

		if (c->kind == TRD_CPL_GUEST && __atomic_load_n(&c->guest, __ATOMIC_ACQUIRE) == g) {
			__atomic_store_n(&c->guest, NULL, __ATOMIC_RELEASE);
			__atomic_store_n(&c->result, NULL, __ATOMIC_RELEASE);
			__atomic_store_n(&c->ctr, NULL, __ATOMIC_RELEASE);
		}
	}
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
void
trd_cpl_unowe(struct trd_node *n, uint32_t id)
{
	uint32_t old = __atomic_exchange_n(&n->cpl[id - 1].peer, UINT32_MAX, __ATOMIC_ACQ_REL);

	if (old < n->n_nodes)
		__atomic_fetch_sub(&n->owed[old], 1, __ATOMIC_RELAXED);
}

/* Give id back, counted out of the pending ones already (trd_cpl_claim). */
static void
cpl_free_id(struct trd_node *n, uint32_t id)
{
	trd_cpl_unowe(n, id);
	__atomic_store_n(&n->cpl[id - 1].state, CPL_FREE, __ATOMIC_RELEASE);
	rte_ring_enqueue(n->cpl_free, (void *)(uintptr_t)id);
}

static void
cpl_release(struct trd_node *n, uint32_t id)
{
	__atomic_fetch_sub(&n->main->cpl_pending, 1, __ATOMIC_RELEASE); /* share 0 counts */
	cpl_free_id(n, id);
}

int
trd_track_close(struct trd_node *n, uint32_t id)
{
	if (n == NULL || id == 0)
		return -EINVAL;
	if (n->att != NULL)
		return n->att->track_close(n, id); /* a handle of an attached process */
	if (id > TRD_N_CPL)
		return -EINVAL;
	if (n->cpl[id - 1].kind != TRD_CPL_TRACK)
		return -EINVAL;
	/* the engine may be completing it right now */
	return trd_cpl_take_back(n, id) ? 0 : -EINVAL;
}

bool
trd_cpl_take_back(struct trd_node *n, uint32_t id)
{
	uint32_t expect = CPL_PENDING;

	if (!__atomic_compare_exchange_n(&n->cpl[id - 1].state, &expect, CPL_CLOSING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	cpl_release(n, id);
	return true;
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
	if ((c->kind != TRD_CPL_TRACK && c->kind != TRD_CPL_GUEST) || c->refl ||
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
	cpl_release(n, cpl_id(n, c));
}

void
trd_track_refused(struct trd_node *n, struct trd_cpl *c)
{
	cpl_unclaim(n, cpl_id(n, c), __atomic_load_n(&c->peer, __ATOMIC_ACQUIRE));
}

/* Does the failure of @p c write into a reception FIFO (and so may find it full)? A doorbell's
 * cannot say it; a guest's atomic without a FIFO fails its counter. */
static inline bool
cpl_to_fifo(const struct trd_cpl *c)
{
	return c->kind == TRD_CPL_TRACK || c->kind == TRD_CPL_FIFO ||
	       (c->kind == TRD_CPL_GUEST && c->fifo != 0);
}

/* The outcome of claimed id @p id, failed for @p cause, into its FIFO; the id given back once
 * it is there, or lost (counted). false: its FIFO is full, the id still claimed. */
static bool
cpl_outcome(struct trd_node *n, uint32_t id, unsigned int cause)
{
	struct trd_cpl *c = &n->cpl[id - 1];
	int rc = 0;

	if (c->kind == TRD_CPL_GUEST)
		return trd_track_guest_done(n, c, cause, false, 0, true) == 0;
	if (cpl_to_fifo(c))
		rc = trd_rfifo_outcome(n, c->fifo, c->peer, c->cookie, cause);
	if (rc == TRD_DROP_FIFO_FULL)
		return false;
	if (rc != 0)
		trd_drop(n, (unsigned int)rc);
	cpl_release(n, id);
	return true;
}

/* An entry of cpl_later and later[]: an id and its cause. */
#define LATER(id, cause) ((uint32_t)(id) | (uint32_t)(cause) << 16)

void
trd_cpl_later(struct trd_node *n)
{
	uint64_t full[4] = {0}; /* FIFO ids found full in this pass */
	uint32_t k = 0;
	void *e;

	if (n->vclock < n->later_next)
		return;
	/* the ones added since, behind those already here: the oldest stay first */
	while (n->later_len < TRD_N_CPL && rte_ring_sc_dequeue(n->cpl_later, &e) == 0)
		n->later[n->later_len++] = (uint32_t)(uintptr_t)e;
	/* in order: one whose FIFO has no room stays, and so do those behind it for the same
	 * FIFO (an application sees its failures in order); a process that never takes its
	 * messages holds up its own failures only */
	for (uint32_t i = 0; i < n->later_len; i++) {
		uint32_t v = n->later[i], id = v & 0xffff;
		uint8_t f = n->cpl[id - 1].fifo;

		if (!(full[f / 64] & (UINT64_C(1) << (f % 64))) && cpl_outcome(n, id, v >> 16)) {
			__atomic_fetch_sub(&n->later_fifo[f], 1, __ATOMIC_RELEASE);
			__atomic_fetch_sub(&n->n_later, 1, __ATOMIC_RELEASE);
			continue;
		}
		full[f / 64] |= UINT64_C(1) << (f % 64);
		n->later[k++] = v;
	}
	n->later_len = k;
	/* still no room: not in every poll (the application makes room at its own pace) */
	if (__atomic_load_n(&n->n_later, __ATOMIC_ACQUIRE) != 0)
		n->later_next = n->vclock + n->timer_gap;
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
	/* now, unless failures for its FIFO wait already (behind them, in order); kept while the
	 * FIFO is full: no failure is lost for want of room (the application makes room by
	 * taking messages). Kinds that write no FIFO never wait. */
	if (!cpl_to_fifo(c)) {
		cpl_outcome(n, id, cause); /* (a doorbell's id given back, a counter failed) */
		return;
	}
	if (__atomic_load_n(&n->main->later_fifo[c->fifo], __ATOMIC_ACQUIRE) == 0 &&
	    cpl_outcome(n, id, cause))
		return;
	__atomic_fetch_add(&n->main->later_fifo[c->fifo], 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&n->main->n_later, 1, __ATOMIC_RELEASE);
	if (rte_ring_enqueue(n->cpl_later, (void *)(uintptr_t)LATER(id, cause)) != 0) {
		/* (cannot happen: an id is kept once) */
		__atomic_fetch_sub(&n->main->later_fifo[c->fifo], 1, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&n->main->n_later, 1, __ATOMIC_RELEASE);
		trd_drop(n, TRD_DROP_FIFO_FULL);
		cpl_release(n, id);
	}
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
	case TRD_DROP_CTR_DENIED:
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
