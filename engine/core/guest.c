/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest injection FIFOs (api/guest_api.h): rings of descriptors another process writes in
 * memory it shares with the engine, served in the poll round beside the node's own FIFOs and
 * cut into packets by the same packetizer (tx.c), with no second post.
 *
 * Of a ring's header only the producer's tail is read; the consumer's index is the core's own,
 * published once what it names is used. Each descriptor is copied out of the ring (each word
 * read once) before any field is looked at, checked against what the guest owns, its counter
 * turned into the node's id, and staged as a descriptor of the core's own: its inline data is
 * then read in place in the ring when the packet is built (the process's one copy into the
 * ring, the packetizer's one copy into the frame), or copied out first when it straddles the
 * ring's end (guest_copy_bytes). A remote get's carried descriptors are always copied out, and
 * checked in the copy: they are what the target acts on. An atomic takes a completion id of
 * the node whose verdict writes the old value into the guest's region and counts on its
 * counter (track.c, TRD_CPL_GUEST).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "api/guest_api.h"
#include "core_pvt.h"

#define GUEST_SLOT 64 /* a ring element: one descriptor, or 64 bytes of its inline data */
/* remote gets one stage takes: their carried descriptors are copied out of the ring, each
 * into a buffer of its own that lives as long as the stage */
#define GUEST_RGETS      4
#define GUEST_RGET_BYTES (TRD_RGET_MAX_DESCS * GUEST_SLOT)
/* tracked operations (atomics among them) of one guest waiting for their verdict: past this its
 * FIFOs wait (the node's table of completion ids, TRD_N_CPL, is everyone's) */
#define GUEST_TRACKED 64
/* guest FIFOs a node serves, all guests together (a VNI service has 256 interfaces of 1 to 8) */
#define GUEST_FIFOS_MAX 2048

/* One ring of a guest, as the core sees it. */
struct trd_gring {
	struct trd_guest *g;
	struct rte_ring *r;   /* in shared memory: prod.tail read, cons written */
	const uint8_t *slots; /* its elements */
	uint32_t mask;        /* slots - 1 */
	uint32_t cons;        /* the core's index: past everything taken */
	uint32_t pub;         /* ... as last published in the ring */
	bool broken;          /* its producer's index was found past the capacity */
	uint8_t *rget;        /* GUEST_RGETS buffers of GUEST_RGET_BYTES: carried descriptors */
};

struct trd_guest {
	struct trd_node *n;
	struct trd_guest *next; /* the node's list */
	uint64_t key, region_len;
	uint16_t ctr_base;
	bool stopped;
	uint32_t tracked;            /* waiting for their verdict (GUEST_TRACKED at most) ... */
	uint32_t ids[GUEST_TRACKED]; /* ... their completion ids (0: a free entry) */
	uint64_t *pub[3];
	struct trd_guest_stats st;
	uint64_t was[3]; /* descs, bad_descs, bad_rings as last published */
	unsigned int n_fifos, n_rfifos;
	struct trd_grfifo *rf[TRD_GUEST_RFIFOS_MAX]; /* reception (grfifo.c) */
	struct trd_inj_fifo *f[TRD_GUEST_FIFOS_MAX];
	struct trd_gring gr[TRD_GUEST_FIFOS_MAX];
};

/* Copy @p len bytes (a multiple of 8, both 8-byte aligned) another process may be writing:
 * each word is read exactly once, so what is checked afterwards is what is used. */
static inline void
guest_read(void *dst, const void *src, size_t len)
{
	const volatile uint64_t *in = src;
	uint8_t *out = dst;

	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w = in[i];

		memcpy(out + i * 8, &w, sizeof(w));
	}
}

/* Copy @p n ring slots from slot @p i on (wrapping at the ring's end) to @p dst, each word
 * read once (guest_read()). */
static inline void
guest_read_slots(const struct trd_gring *gr, uint8_t *dst, uint32_t i, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		guest_read(dst + (size_t)k * GUEST_SLOT,
			   gr->slots + (size_t)((i + k) & gr->mask) * GUEST_SLOT, GUEST_SLOT);
}

/* The node's id of the guest's counter @p k (0: none), or -1: not one of its own. */
static inline int
guest_ctr(const struct trd_guest *g, uint16_t k)
{
	if (k == 0)
		return 0;
	return k < TRD_COUNTER_BLOCK ? g->ctr_base + k : -1;
}

/* The counts that changed, into the guest's memory. */
static inline void
guest_publish(struct trd_guest *g)
{
	const uint64_t v[3] = {g->st.descs, g->st.bad_descs, g->st.bad_rings};

	for (unsigned int i = 0; i < 3; i++)
		if (v[i] != g->was[i] && g->pub[i] != NULL) {
			__atomic_store_n(g->pub[i], v[i], __ATOMIC_RELAXED);
			g->was[i] = v[i];
		}
}

/* The descriptors a remote get of @p d's length carries, from the slots after ring entry
 * @p i0, copied to @p buf (each word read once) and checked there: what the target sends back
 * comes from its registered memory or the descriptor itself, as a put addressed to this node,
 * or a memory-FIFO message to one of the guest's own reception FIFOs (a reflection's
 * completion: never to another's or the node's, whose readers trust the sender it names),
 * with no injection counter or completion (a reflection's completion id is the node's), and a
 * verdict only on the remote get's own tracked operation (its aux: guest_track() makes it the
 * engine's id). The target checks them again, as any frame. Only the copy is sent: what the
 * guest writes into the ring afterwards is never read. */
static bool
guest_owns_rfifo(const struct trd_guest *g, uint8_t id)
{
	for (unsigned int i = 0; i < g->n_rfifos; i++)
		if (trd_grfifo_id(g->rf[i]) == id)
			return true;
	return false;
}

/* A reflection's completion (docs/vni.md, "Reflection by completion id"): the one descriptor a
 * remote get @p d with no verdict of its own carries, an empty memory-FIFO message with
 * TRD_DF_CPL alone and no counter (its FIFO, checked by the caller, one of the guest's own). Its
 * id is the node's, given by guest_reflect(). */
static inline bool
guest_is_reflection(const struct trd_desc *d, const struct trd_desc *c)
{
	return d->n_slots == 1 && !(d->flags & TRD_DF_ACKREQ) && c->op == TRD_OP_FIFO &&
	       c->flags == TRD_DF_CPL && c->len == 0 && c->rec_ctr == 0;
}

static int
guest_rget_take(const struct trd_node *n, const struct trd_gring *gr, struct trd_desc *d,
		uint32_t i0, uint8_t *buf)
{
	const struct trd_desc *c = (const struct trd_desc *)buf;

	guest_read_slots(gr, buf, i0 + 1, d->n_slots);
	for (uint32_t k = 0; k < d->n_slots; k++)
		if ((c[k].op != TRD_OP_PUT &&
		     (c[k].op != TRD_OP_FIFO || !guest_owns_rfifo(gr->g, c[k].fifo))) ||
		    ((c[k].flags & TRD_DF_CPL) && !guest_is_reflection(d, &c[k])) ||
		    ((c[k].flags & TRD_DF_ACKREQ) &&
		     (!(d->flags & TRD_DF_ACKREQ) || c[k].aux != d->aux)) ||
		    trd_desc_check_remote(&c[k], n->coord) != 0 ||
		    c[k].roff > UINT64_MAX - c[k].len)
			return -EINVAL;
	d->src = (uint64_t)(uintptr_t)buf;
	return 0;
}

/* One more of @p g's tracked operations waits for its verdict, on completion id @p id (the
 * verdict may come on another lcore: trd_guest_tracked_done()). There is a free entry: fewer
 * than GUEST_TRACKED wait (an entry is cleared before the count goes down). */
static void
guest_tracked_add(struct trd_guest *g, uint32_t id)
{
	for (unsigned int i = 0; i < GUEST_TRACKED; i++)
		if (__atomic_load_n(&g->ids[i], __ATOMIC_ACQUIRE) == 0) {
			__atomic_store_n(&g->ids[i], id, __ATOMIC_RELEASE);
			break;
		}
	__atomic_fetch_add(&g->tracked, 1, __ATOMIC_ACQ_REL);
}

/* TRD_OP_UNTRACK: the guest gives back its tracked operation of its own id @p cookie, if it
 * still waits (an outcome that will never come: a remote get that succeeded). */
static void
guest_untrack(struct trd_node *n, struct trd_guest *g, uint64_t cookie)
{
	for (unsigned int i = 0; i < GUEST_TRACKED; i++) {
		uint32_t id = __atomic_load_n(&g->ids[i], __ATOMIC_ACQUIRE);

		if (id != 0 && trd_track_close_guest(n, g, id, cookie) == 0)
			return;
	}
}

/* A checked descriptor of the guest with TRD_DF_ACKREQ (docs/vni.md, "Tracked operations"): its
 * outcome goes to the guest's own reception FIFO d->ack_fifo with the guest's d->aux, and the
 * engine's id replaces aux, in it and in the carried descriptors @p c (@p nc) that ask for a
 * verdict on their own failure. 0, -EINVAL: not one of the guest's FIFOs, or -EAGAIN: it
 * waits in the ring (as many tracked as the guest may, or no id free on the node). */
static int
guest_track(struct trd_node *n, struct trd_guest *g, struct trd_desc *d, struct trd_desc *c,
	    unsigned int nc)
{
	uint32_t id;

	if (d->aux == 0 || !guest_owns_rfifo(g, d->ack_fifo))
		return -EINVAL;
	if (__atomic_load_n(&g->tracked, __ATOMIC_ACQUIRE) >= GUEST_TRACKED ||
	    trd_track_open_guest(n, g, NULL, NULL, d->ack_fifo, d->aux, &id) != 0)
		return -EAGAIN;
	guest_tracked_add(g, id);
	d->aux = id;
	for (unsigned int k = 0; k < nc; k++)
		if (c[k].flags & TRD_DF_ACKREQ)
			c[k].aux = id;
	return 0;
}

/* Why @p dst, which trd_desc_check_dst() finds unreachable, is: the drop cause. */
static unsigned int
guest_unreachable(const struct trd_node *n, struct trd_coord dst)
{
	int rank = trd_rank_of(n, dst);

	return rank >= 0 && n->routes[rank].link == NULL ? TRD_DROP_NO_ROUTE : TRD_DROP_PEER_DOWN;
}

/* A checked reflection @p c (guest_is_reflection()) takes a completion id of the node whose
 * outcome goes to the guest's FIFO c->fifo with its cookie c->user: the echo from @p dst (rx,
 * trd_cpl_accept_guest()), or its failure when @p dst is declared down (rel.c) or the remote get
 * is not sent (tx.c, guest_fifo_abandon()). @p cause non-zero: @p dst cannot be reached now, the
 * outcome is that failure at once and nothing is sent (1). 0, or -EAGAIN: no id now (it waits in
 * the ring). */
static int
guest_reflect(struct trd_node *n, struct trd_guest *g, struct trd_desc *c, struct trd_coord dst,
	      unsigned int cause)
{
	uint32_t id;

	if (__atomic_load_n(&g->tracked, __ATOMIC_ACQUIRE) >= GUEST_TRACKED ||
	    trd_track_open_refl(n, g, c->fifo, c->user, &id) != 0)
		return -EAGAIN;
	guest_tracked_add(g, id);
	c->aux = id;
	trd_cpl_set_peer(n, id, (uint32_t)trd_rank_of(n, dst)); /* (its rank: checked) */
	if (cause == 0)
		return 0;
	trd_cpl_fail(n, id, cause);
	return 1;
}

/* A checked atomic takes a completion id (before guest_fix()): its old value goes to the
 * guest's region, its verdict to its counter, and it is tracked as trd_inject() wants an
 * atomic (no injection counter: the verdict is its completion). 0, or -ENOSPC: no id now (the
 * descriptor waits in the ring), -EINVAL: the region is gone. */
static int
guest_atomic_open(struct trd_node *n, struct trd_guest *g, struct trd_desc *d)
{
	struct trd_mr *mr = trd_mr_lookup(n, g->key);
	uint32_t id;

	if (mr == NULL || mr->len < g->region_len)
		return -EINVAL;
	if (trd_track_open_guest(n, g, (uint64_t *)(void *)(mr->base + d->src_key),
				 &n->ctr[guest_ctr(g, d->inj_ctr)], 0, 0, &id) != 0)
		return -ENOSPC;
	guest_tracked_add(g, id);
	d->flags = TRD_DF_ACKREQ;
	d->aux = id;
	d->inj_ctr = 0;
	d->src_key = 0;
	return 0;
}

/* guest_check() of a remote get or an atomic (@p g's @p nr remote gets are in this stage
 * already): 0, -EINVAL (dropped), or -EAGAIN: it waits in the ring, unread (the stage has no
 * buffer left for its carried descriptors, or the guest as many tracked operations waiting as
 * it may). */
static __rte_noinline int
guest_check_other(struct trd_node *n, const struct trd_gring *gr, struct trd_desc *d,
		  uint32_t avail, unsigned int *nr)
{
	struct trd_guest *g = gr->g;
	struct trd_desc *carried;
	uint8_t *buf;
	int rank, rc;

	if (d->op == TRD_OP_UNTRACK) {
		if (d->flags != 0 || d->len != 0 || d->n_slots != 0 || d->aux == 0)
			return -EINVAL;
		guest_untrack(n, g, d->aux);
		return 1; /* done: nothing to send */
	}
	if (d->op == TRD_OP_RGET) {
		if (*nr == GUEST_RGETS)
			return -EAGAIN;
		/* for the target's engine FIFO only: its node FIFOs are the target's
		 * applications' (a VNI service's request FIFO, whose room its scheduler
		 * counts as its own backlog) */
		if ((d->flags & ~(TRD_DF_ORDERED | TRD_DF_ACKREQ)) != 0 ||
		    d->fifo != TRD_ENGINE_FIFO || guest_ctr(g, d->inj_ctr) < 0 || d->len == 0 ||
		    d->len % GUEST_SLOT != 0 || d->len > GUEST_RGET_BYTES ||
		    d->n_slots != d->len / GUEST_SLOT || (uint32_t)d->n_slots >= avail)
			return -EINVAL;
		/* (one to a node down or with no route may still be a reflection: it fails) */
		rank = trd_desc_check_dst(n, d->dst);
		if ((rank < 0 && rank != -EHOSTUNREACH) ||
		    (rank >= 0 &&
		     d->len > trd_max_payload(n, n->routes[rank].link,
					      n->reliable && (uint32_t)rank != n->rank)))
			return -EINVAL;
		buf = gr->rget + (size_t)*nr * GUEST_RGET_BYTES;
		carried = (struct trd_desc *)(void *)buf;
		rc = guest_rget_take(n, gr, d, gr->cons & gr->mask, buf);
		if (rc == 0 && (carried->flags & TRD_DF_CPL)) {
			rc = guest_reflect(n, g, carried, d->dst,
					   rank >= 0 ? 0 : guest_unreachable(n, d->dst));
			if (rc == 1 && guest_ctr(g, d->inj_ctr) > 0)
				trd_ctr_fail(&n->ctr[guest_ctr(g, d->inj_ctr)]); /* never sent */
		} else if (rc == 0 && rank < 0)
			rc = -EINVAL;
		else if (rc == 0 && (d->flags & TRD_DF_ACKREQ))
			rc = guest_track(n, g, d, carried, d->n_slots);
		*nr += rc == 0;
		return rc;
	}
	if (d->op == TRD_OP_ATOMIC) {
		if (__atomic_load_n(&g->tracked, __ATOMIC_ACQUIRE) >= GUEST_TRACKED)
			return -EAGAIN; /* until a verdict comes back */
		if ((d->flags & ~TRD_DF_ORDERED) == TRD_DF_ACKREQ) {
			/* tracked: its old value and its verdict in its outcome */
			if (d->fifo < TRD_ATOMIC_FADD || d->fifo > TRD_ATOMIC_SWAP || d->len != 8 ||
			    d->n_slots != 0 || d->inj_ctr != 0 || d->roff > UINT64_MAX - d->len ||
			    trd_desc_check_dst(n, d->dst) < 0)
				return -EINVAL;
			return guest_track(n, g, d, NULL, 0);
		}
		/* else its old value into the guest's region at src_key (8-byte aligned), its
		 * verdict on its counter, which it must name */
		if (d->flags != 0 || d->fifo < TRD_ATOMIC_FADD || d->fifo > TRD_ATOMIC_SWAP ||
		    d->len != 8 || d->n_slots != 0 || d->inj_ctr == 0 ||
		    guest_ctr(g, d->inj_ctr) < 0 || g->key == 0 || d->src_key % 8 != 0 ||
		    d->src_key > g->region_len || g->region_len - d->src_key < 8 ||
		    d->roff > UINT64_MAX - d->len || trd_desc_check_dst(n, d->dst) < 0)
			return -EINVAL;
		rc = guest_atomic_open(n, g, d);
		return rc == -ENOSPC ? -EAGAIN : rc; /* no completion id on the node now */
	}
	/* a memory-FIFO message to anything but a guest's reception FIFO could go to one the
	 * engine reads itself (the VNI protocol's, whose headers name their sender): a process
	 * would speak as any other */
	return -EINVAL;
}

/* Check a descriptor copied out of the ring, with @p avail slots (it among them) there; the
 * stage has @p nr remote gets already. 0, -EINVAL: it is dropped, or -EAGAIN: it waits in the
 * ring (guest_check_other()). Every field that names something of this node is the guest's
 * own; what names the target (rkey, roff, rec_ctr, the carried descriptors) is the target's
 * to check, as for any frame, but for what trd_inject() checks of every put, remote get or
 * atomic (the destination, a range that wraps, carried descriptors addressed back here). */
static inline int
guest_check(struct trd_node *n, const struct trd_gring *gr, struct trd_desc *d, uint32_t avail,
	    unsigned int *nr)
{
	const struct trd_guest *g = gr->g;

	/* a memory-FIFO message is a put's twin, for a guest's reception FIFO only */
	if (unlikely(d->op != TRD_OP_PUT) && (d->op != TRD_OP_FIFO || !trd_grfifo_is(d->fifo)))
		return guest_check_other(n, gr, d, avail, nr);
	if ((d->flags & ~(TRD_DF_SRC_MR | TRD_DF_IMM | TRD_DF_ACKREQ)) != 0 ||
	    guest_ctr(g, d->inj_ctr) < 0)
		return -EINVAL;
	if (d->flags & TRD_DF_IMM) {
		if ((d->flags & TRD_DF_SRC_MR) || d->len > 8 || d->n_slots != 0)
			return -EINVAL;
	} else if (d->flags & TRD_DF_SRC_MR) {
		if (g->key == 0 || d->src_key != g->key || d->n_slots != 0 ||
		    d->src > g->region_len || d->len > g->region_len - d->src)
			return -EINVAL;
	} else if (d->len > TRD_GUEST_INLINE_MAX ||
		   d->n_slots != (d->len + GUEST_SLOT - 1) / GUEST_SLOT ||
		   (uint32_t)d->n_slots >= avail) {
		/* inline: the data follows in exactly the slots it needs, all of them there */
		return -EINVAL;
	}
	if (d->roff > UINT64_MAX - d->len || trd_desc_check_dst(n, d->dst) < 0)
		return -EINVAL;
	return unlikely(d->flags & TRD_DF_ACKREQ) ? guest_track(n, gr->g, d, NULL, 0) : 0;
}

/* A checked descriptor becomes one of the core's: its counter the node's id, its inline data
 * where it lies in the ring (slot @p i0 is the descriptor's), the engine's fields cleared. */
static inline void
guest_fix(struct trd_node *n, struct trd_inj_fifo *f, const struct trd_gring *gr,
	  struct trd_desc *d, uint32_t i0)
{
	d->inj_ctr = (uint16_t)guest_ctr(gr->g, d->inj_ctr);
	/* (a remote get's carried descriptors are in the stage's buffer already; an atomic's
	 * operands are in the descriptor) */
	if (!(d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)) && d->op != TRD_OP_RGET &&
	    d->op != TRD_OP_ATOMIC) {
		uint32_t i1 = (i0 + 1) & gr->mask;

		if (d->n_slots == 0) {
			d->src = 0;
		} else if (i1 + d->n_slots <= gr->mask + 1) {
			d->src = (uint64_t)(uintptr_t)(gr->slots + (size_t)i1 * GUEST_SLOT);
		} else {
			/* straddling the ring's end (at most one descriptor of a stage: a stage
			 * is less than the ring): copied out, into the FIFO's buffer */
			guest_read_slots(gr, f->inl, i1, d->n_slots);
			d->src = (uint64_t)(uintptr_t)f->inl;
			n->stat[TRD_STAT_GUEST_COPY_BYTES] += d->len;
		}
	}
	d->n_slots = 0;
	d->ack_fifo = 0;
	d->msg_id = 0;
	if (!(d->flags & TRD_DF_ACKREQ))
		d->aux = 0; /* (a tracked one's, an atomic's, is its completion id) */
	/* bytes of the segment are copied into the packets, never referenced: nothing sent
	 * reads it once the packet is built */
	d->flags |= TRD_DF_COPY;
	n->stat[TRD_STAT_GUEST_DESCS]++;
}

/* A descriptor that cannot be used: counted, and its injection counter (@p k as the guest
 * wrote it), if it is the guest's, failed so that a wait on it ends. */
static void
guest_drop(struct trd_node *n, struct trd_guest *g, uint16_t k)
{
	int id = guest_ctr(g, k);

	g->st.bad_descs++;
	if (id > 0)
		trd_ctr_fail(&n->ctr[id]);
}

void
trd_guest_tracked_done(struct trd_guest *g, uint32_t id)
{
	for (unsigned int i = 0; i < GUEST_TRACKED; i++)
		if (__atomic_load_n(&g->ids[i], __ATOMIC_ACQUIRE) == id) {
			__atomic_store_n(&g->ids[i], 0, __ATOMIC_RELEASE);
			break;
		}
	if (__atomic_load_n(&g->tracked, __ATOMIC_ACQUIRE) > 0)
		__atomic_fetch_sub(&g->tracked, 1, __ATOMIC_ACQ_REL);
}

void
trd_guest_release(struct trd_inj_fifo *f)
{
	struct trd_gring *gr = f->gr;

	if (gr->pub == gr->cons)
		return;
	gr->pub = gr->cons;
	__atomic_store_n(&gr->r->cons.head, gr->cons, __ATOMIC_RELAXED);
	__atomic_store_n(&gr->r->cons.tail, gr->cons, __ATOMIC_RELEASE);
}

unsigned int
trd_guest_refill(struct trd_node *n, struct trd_inj_fifo *f)
{
	struct trd_gring *gr = f->gr;
	struct trd_guest *g = gr->g;
	unsigned int k = 0, taken = 0, nr = 0;
	uint32_t avail;

	/* what the last stage named is used: the producer may write over it */
	trd_guest_release(f);
	f->stage = f->sbuf;
	f->stage_i = f->stage_n = 0;
	if (g->stopped || gr->broken)
		return 0;
	avail = __atomic_load_n(&gr->r->prod.tail, __ATOMIC_ACQUIRE) - gr->cons;
	if (avail == 0)
		return 0;
	if (unlikely(avail > gr->mask)) {
		/* more than the capacity (size - 1): the header was overwritten */
		gr->broken = true;
		g->st.bad_rings++;
		guest_publish(g);
		TRD_LOG(WARNING, "a guest injection FIFO is damaged: no longer served");
		return 0;
	}
	while (taken < TRD_STAGE && avail != 0) {
		struct trd_desc *d = &f->sbuf[k];
		uint32_t i0 = gr->cons & gr->mask, take;
		uint16_t k0;
		int rc;

		guest_read(d, gr->slots + (size_t)i0 * GUEST_SLOT, sizeof(*d));
		/* its slots go with it, used or not, as long as they are there: a bad
		 * descriptor's data is not read as descriptors */
		take = 1 + ((uint32_t)d->n_slots < avail ? d->n_slots : 0);
		k0 = d->inj_ctr;
		rc = guest_check(n, gr, d, avail, &nr);
		if (likely(rc == 0)) {
			guest_fix(n, f, gr, d, i0);
			g->st.descs++;
			k++;
		} else if (rc == -EAGAIN) {
			break; /* read again at the next stage */
		} else if (rc == 1) {
			g->st.descs++; /* done by the check (TRD_OP_UNTRACK): nothing to send */
		} else {
			guest_drop(n, g, k0);
		}
		gr->cons += take;
		avail -= take;
		taken++;
	}
	if (unlikely(g->st.bad_descs != g->was[1]))
		guest_publish(g);
	else if (g->st.descs != g->was[0] && g->pub[0] != NULL) /* (the common case) */
		__atomic_store_n(g->pub[0], g->was[0] = g->st.descs, __ATOMIC_RELAXED);
	f->stage_n = k;
	return k;
}

/* Has @p f anything to do: a descriptor being cut, staged ones, or new ones in its ring? */
static inline bool
guest_fifo_work(const struct trd_inj_fifo *f)
{
	const struct trd_gring *gr = f->gr;

	if (f->busy || f->stage_i < f->stage_n)
		return true;
	return !gr->g->stopped && !gr->broken &&
	       __atomic_load_n(&gr->r->prod.tail, __ATOMIC_ACQUIRE) != gr->cons;
}

unsigned int
trd_guest_serve(struct trd_node *n)
{
	unsigned int nf = __atomic_load_n(&n->n_gfifo, __ATOMIC_ACQUIRE), moved = 0, start;

	if (nf == 0)
		return 0;
	/* round robin, as the node's own FIFOs: each round starts one FIFO further */
	start = n->grr < nf ? n->grr : 0;
	for (unsigned int j = 0; j < nf; j++) {
		unsigned int i = start + j < nf ? start + j : start + j - nf;
		struct trd_inj_fifo *f = __atomic_load_n(&n->gfifo[i], __ATOMIC_ACQUIRE);

		if (f != NULL && guest_fifo_work(f))
			moved += trd_inj_fifo_service(n, f, n->conf.burst);
	}
	n->grr = start + 1 >= nf ? 0 : start + 1;
	return moved;
}

/* ---- control ---- */

static void
guest_free(struct trd_guest *g)
{
	struct trd_node *n = g->n;

	for (unsigned int i = 0; i < g->n_fifos; i++) {
		rte_free(g->f[i]);
		rte_free(g->gr[i].rget);
	}
	for (unsigned int i = 0; i < g->n_rfifos; i++)
		trd_grfifo_unlink(n, g->rf[i]);
	/* any share of the node delivers into a reception FIFO (the one that received the
	 * frame): one that another lcore serves may be inside a delivery it looked up before the
	 * unlink, writing the ring and the FIFO's counts; it ends that round before they go */
	for (unsigned int k = 0; g->n_rfifos != 0 && k < n->n_shares; k++) {
		int served = __atomic_load_n(&n->sh[k]->served, __ATOMIC_ACQUIRE);

		if (served != 0 && (unsigned int)served != rte_lcore_id() + 1)
			trd_node_quiesce(n->sh[k]);
	}
	for (unsigned int i = 0; i < g->n_rfifos; i++)
		trd_grfifo_free(g->rf[i]);
	rte_free(g);
}

/* @p g's reception rings, each with a free id of the node: 0, or -1 with rte_errno. */
static int
guest_rfifos_open(struct trd_guest *g, const struct trd_guest_conf *c)
{
	for (unsigned int i = 0; i < c->n_rfifos; i++) {
		uint8_t want = c->rfifo_first != 0 ? (uint8_t)(c->rfifo_first + i) : 0;
		struct trd_grfifo *rf =
			trd_grfifo_open(g->n, c->rrings[i], c->rslots, c->ctr_base, c->rpub, want);

		if (rf == NULL)
			return -1;
		g->rf[g->n_rfifos++] = rf;
	}
	return 0;
}

struct trd_guest *
trd_guest_add(struct trd_node *n, const struct trd_guest_conf *c)
{
	struct trd_guest *g;
	unsigned int nf;

	if (n == NULL || c == NULL || c->n_fifos > TRD_GUEST_FIFOS_MAX ||
	    (c->n_fifos != 0 && !trd_guest_slots_ok(c->slots)) ||
	    c->n_rfifos > TRD_GUEST_RFIFOS_MAX ||
	    (c->n_rfifos != 0 && !trd_guest_slots_ok(c->rslots)) || c->ctr_base == 0 ||
	    c->ctr_base % TRD_COUNTER_BLOCK != 0 ||
	    (uint32_t)c->ctr_base + TRD_COUNTER_BLOCK > n->conf.n_counters ||
	    __atomic_load_n(&n->ctr_used[c->ctr_base], __ATOMIC_ACQUIRE) != 2) {
		rte_errno = EINVAL;
		return NULL;
	}
	for (unsigned int i = 0; i < c->n_fifos; i++)
		if (c->rings[i] == NULL) {
			rte_errno = EINVAL;
			return NULL;
		}
	for (unsigned int i = 0; i < c->n_rfifos; i++)
		if (c->rrings[i] == NULL) {
			rte_errno = EINVAL;
			return NULL;
		}
	n = n->main; /* share 0 serves them */
	nf = n->n_gfifo;
	if (nf + c->n_fifos > GUEST_FIFOS_MAX) {
		rte_errno = ENOSPC;
		return NULL;
	}
	if (n->gfifo == NULL) {
		struct trd_inj_fifo **a =
			rte_zmalloc("trd_gfifo", sizeof(*a) * GUEST_FIFOS_MAX, RTE_CACHE_LINE_SIZE);

		if (a == NULL) {
			rte_errno = ENOMEM;
			return NULL;
		}
		__atomic_store_n(&n->gfifo, a, __ATOMIC_RELEASE);
	}
	g = rte_zmalloc("trd_guest", sizeof(*g), RTE_CACHE_LINE_SIZE);
	if (g == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	g->n = n;
	g->key = c->region_key;
	g->region_len = c->region_key != 0 ? c->region_len : 0;
	g->ctr_base = c->ctr_base;
	memcpy(g->pub, c->pub, sizeof(g->pub));
	if (guest_rfifos_open(g, c) != 0) {
		int e = rte_errno;

		guest_free(g);
		rte_errno = e;
		return NULL;
	}
	for (unsigned int i = 0; i < c->n_fifos; i++) {
		struct trd_inj_fifo *f =
			rte_zmalloc("trd_inj_fifo", sizeof(*f), RTE_CACHE_LINE_SIZE);
		uint8_t *rget = rte_malloc("trd_guest_rget", GUEST_RGETS * GUEST_RGET_BYTES,
					   RTE_CACHE_LINE_SIZE);

		if (f == NULL || rget == NULL) {
			rte_free(f);
			rte_free(rget);
			guest_free(g);
			rte_errno = ENOMEM;
			return NULL;
		}
		g->f[g->n_fifos++] = f;
		g->gr[i].rget = rget;
		g->gr[i].g = g;
		g->gr[i].r = c->rings[i];
		g->gr[i].slots = (const uint8_t *)&c->rings[i][1];
		g->gr[i].mask = c->slots - 1;
		/* where the ring starts: the producer's index as the engine made it */
		g->gr[i].cons = __atomic_load_n(&c->rings[i]->cons.tail, __ATOMIC_RELAXED);
		g->gr[i].pub = g->gr[i].cons;
		f->node = n;
		f->id = TRD_ENGINE_FIFO;
		f->stage = f->sbuf;
		f->gr = &g->gr[i];
	}
	/* each FIFO whole before it is seen, then the count (a round on another lcore reads
	 * the count, then the entries) */
	for (unsigned int i = 0; i < g->n_fifos; i++)
		__atomic_store_n(&n->gfifo[nf + i], g->f[i], __ATOMIC_RELEASE);
	__atomic_store_n(&n->n_gfifo, nf + g->n_fifos, __ATOMIC_RELEASE);
	g->next = n->guests;
	n->guests = g;
	return g;
}

void
trd_guest_stop(struct trd_guest *g)
{
	if (g == NULL)
		return;
	__atomic_store_n(&g->stopped, true, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < g->n_rfifos; i++)
		trd_grfifo_stop(g->rf[i]); /* frames for it are dropped: unknown_fifo */
}

uint8_t
trd_guest_rfifo_id(const struct trd_guest *g, unsigned int k)
{
	return g != NULL && k < g->n_rfifos ? trd_grfifo_id(g->rf[k]) : 0;
}

int
trd_guest_doorbell(struct trd_mr *mr, const struct trd_guest *g, unsigned int k)
{
	uint8_t id = trd_guest_rfifo_id(g, k);

	if (mr == NULL || id == 0 || mr->node != g->n || !(mr->access & TRD_ACCESS_REMOTE_WRITE))
		return -EINVAL;
	mr->db_fifo = id;
	__atomic_store_n(&mr->doorbell, true, __ATOMIC_RELEASE);
	return 0;
}

uint64_t
trd_guest_rfifo_count(const struct trd_guest *g, unsigned int k)
{
	struct trd_guest_rstats st = {0};

	if (g == NULL || k >= g->n_rfifos)
		return 0;
	trd_grfifo_stats(g->rf[k], &st);
	return st.msgs;
}

int
trd_guest_rstats_get(const struct trd_guest *g, struct trd_guest_rstats *st)
{
	if (g == NULL || st == NULL)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < g->n_rfifos; i++)
		trd_grfifo_stats(g->rf[i], st);
	return 0;
}

bool
trd_guest_busy(const struct trd_guest *g)
{
	if (g == NULL)
		return false;
	for (unsigned int i = 0; i < g->n_fifos; i++)
		if (g->f[i]->busy || g->f[i]->stage_i < g->f[i]->stage_n)
			return true;
	return false;
}

bool
trd_guest_pending(const struct trd_guest *g)
{
	if (g == NULL)
		return false;
	for (unsigned int i = 0; i < g->n_fifos; i++)
		if (guest_fifo_work(g->f[i]))
			return true;
	return false;
}

int
trd_guest_stats_get(const struct trd_guest *g, struct trd_guest_stats *st)
{
	if (g == NULL || st == NULL)
		return -EINVAL;
	*st = g->st;
	return 0;
}

/* A checked descriptor @p d of a guest that will never leave: the completion ids it holds (its
 * own, an atomic's or a tracked one's; a reflection's among its carried ones, in the stage's
 * buffer at d->src) fail, as no verdict or echo can come for them. */
static void
guest_desc_abandon(struct trd_node *n, const struct trd_desc *d)
{
	if (d->op == TRD_OP_ATOMIC || (d->flags & TRD_DF_ACKREQ))
		trd_cpl_fail(n, d->aux, TRD_DROP_PEER_DOWN);
	else if (d->op == TRD_OP_RGET)
		trd_cpl_fail_carried(n, d, (const void *)(uintptr_t)d->src, TRD_DROP_PEER_DOWN);
}

/* Give up what @p f holds of its guest (the node or the service is going away): the
 * descriptor being cut and those staged fail their counters. */
static void
guest_fifo_abandon(struct trd_node *n, struct trd_inj_fifo *f)
{
	if (f->busy) {
		trd_ctr_fail(f->ctr);
		trd_fifo_src_done(f);
		guest_desc_abandon(n, f->cur); /* its last packet never leaves */
		f->busy = false;
		f->pkts_left = 0;
	}
	for (; f->stage_i < f->stage_n; f->stage_i++) {
		const struct trd_desc *d = &f->stage[f->stage_i];
		uint16_t id = d->inj_ctr;

		if (id != 0 && id < n->conf.n_counters)
			trd_ctr_fail(&n->ctr[id]);
		guest_desc_abandon(n, d); /* (staged: its ids are its own until it leaves) */
	}
}

/* Packets of @p f still waiting in a link's transmit buffer name it and the guest's injection
 * counter: they no longer do (the counter block goes with the guest and may be the next
 * process's before they leave). */
static void
guest_fifo_unlink(struct trd_node *n, struct trd_inj_fifo *f)
{
	if (f->unsent == 0)
		return;
	for (unsigned int i = 0; i <= n->n_links; i++) {
		struct trd_link *l = n->links[i];

		for (uint32_t k = trd_link_pend_first(l); k != trd_link_pend_end(l); k++) {
			struct trd_pend_info *pi;

			trd_link_at(l, k, &pi);
			if (pi->fifo == f) {
				pi->fifo = NULL;
				pi->ctr = NULL;
			}
		}
	}
	f->unsent = 0;
}

/* Take @p g out of the node's list and round; its memory is the caller's to free once no
 * round reads it. */
static void
guest_unlink(struct trd_node *n, struct trd_guest *g)
{
	unsigned int nf = n->n_gfifo;

	for (struct trd_guest **p = &n->guests; *p != NULL; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	for (unsigned int k = 0; k < g->n_fifos; k++)
		for (unsigned int i = 0; i < nf; i++)
			if (n->gfifo[i] == g->f[k]) {
				/* the last one takes its place (a round running meanwhile on
				 * another lcore may serve it twice, or this one once more:
				 * both are idle or the same FIFO served by the same lcore) */
				__atomic_store_n(&n->gfifo[i], n->gfifo[nf - 1], __ATOMIC_RELEASE);
				__atomic_store_n(&n->gfifo[nf - 1], NULL, __ATOMIC_RELEASE);
				nf--;
				__atomic_store_n(&n->n_gfifo, nf, __ATOMIC_RELEASE);
				break;
			}
}

static int
guest_remove(struct trd_guest *g, bool force)
{
	struct trd_node *n;
	bool other;
	int served;

	if (g == NULL)
		return 0;
	n = g->n;
	trd_guest_stop(g);
	served = __atomic_load_n(&n->served, __ATOMIC_ACQUIRE);
	other = served != 0 && (unsigned int)served != rte_lcore_id() + 1;
	if (trd_guest_busy(g)) {
		if (!force)
			return -EBUSY;
		for (unsigned int i = 0; i < g->n_fifos; i++)
			guest_fifo_abandon(n, g->f[i]);
	}
	/* packets of it a link still holds name their FIFO: on the polling thread they are
	 * told it is gone, an lcore of the node's own is left to send them first */
	for (unsigned int i = 0; i < g->n_fifos && other && !force; i++)
		if (g->f[i]->unsent != 0)
			return -EBUSY;
	guest_unlink(n, g);
	/* its ids go back to the node (a delivery begun on another lcore is waited for below) */
	for (unsigned int i = 0; i < g->n_rfifos; i++)
		trd_grfifo_unlink(n, g->rf[i]);
	if (other) {
		/* a round that began before the stop may still be taking its descriptors: an
		 * atomic's id it opens after the forgetting below would keep the guest (its
		 * verdict would write freed memory and count on the block's next owner); what
		 * such a round left staged is failed here, nothing serves it any more */
		trd_node_quiesce(n);
		for (unsigned int i = 0; i < g->n_fifos; i++)
			guest_fifo_abandon(n, g->f[i]);
	}
	/* its atomics' verdicts no longer write its region or count on its block */
	trd_track_forget_guest(n, g);
	if (other)
		trd_node_quiesce(n); /* a round that began before may still read it */
	for (unsigned int i = 0; i < g->n_fifos; i++)
		guest_fifo_unlink(n, g->f[i]);
	guest_free(g);
	return 0;
}

int
trd_guest_remove(struct trd_guest *g)
{
	return guest_remove(g, false);
}

int
trd_guest_remove_now(struct trd_guest *g)
{
	return guest_remove(g, true);
}

void
trd_guest_fini(struct trd_node *n)
{
	while (n->guests != NULL)
		guest_remove(n->guests, true);
	rte_free(n->gfifo);
	n->gfifo = NULL;
}
