/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest reception FIFOs (api/guest_api.h): rings of 64-byte slots in memory another process
 * shares with the engine, where memory-FIFO messages to node ids TRD_GUEST_RFIFO_FIRST ..
 * TRD_GUEST_RFIFO_LAST land. The core is the ring's producer, the process its consumer.
 *
 * A message is a struct trd_rslot header slot and its bytes in the slots after it, never across
 * the ring's end: where it would cross, a padding header fills the ring to its end and the
 * message starts at slot 0, so the process reads every message in place. Of the ring's header
 * only the consumer's tail is read (once per message, checked: an index that claims more room
 * than the ring has ends the FIFO, bad_rings); the producer's index is the core's own and is
 * published once the slots it covers are written. A message that finds no room is refused
 * (fifo_full: a reliable sender sends it again), one that could never fit is dropped
 * (bad_length).
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "api/guest_api.h"
#include "core_pvt.h"

#define GR_SLOT 64

struct trd_grfifo {
	struct rte_ring *r; /* in shared memory: cons.tail read, prod written */
	uint8_t *slots;
	uint32_t size, mask; /* slots; capacity is mask (rte_ring's: size - 1) */
	uint32_t prod;       /* the core's index: past everything written */
	rte_spinlock_t lock; /* the node's shares deliver too */
	uint16_t ctr_base;   /* the owner's counter block: the only counters its frames name */
	uint8_t id;
	bool stopped, broken;
	struct trd_guest_rstats st;
	uint64_t *pub[3]; /* msgs, full, bad_rings in the owner's memory (NULL: not published) */
};

#define GR_IDS (TRD_GUEST_RFIFO_LAST - TRD_GUEST_RFIFO_FIRST + 1)
_Static_assert(GR_IDS == TRD_GUEST_RFIFOS_NODE, "one table entry per guest id");
_Static_assert(sizeof(struct trd_rslot) == GR_SLOT, "a header is one slot");

struct trd_grfifo *
trd_grfifo_open(struct trd_node *n, struct rte_ring *r, uint32_t slots, uint16_t ctr_base,
		uint64_t *const pub[3], uint8_t want)
{
	struct trd_grfifo *rf;
	unsigned int i = 0, k;

	n = n->main;
	if (want != 0) {
		/* the id asked for (every task of a program names its peers' FIFOs alike) */
		i = (unsigned int)want - TRD_GUEST_RFIFO_FIRST;
		if (want < TRD_GUEST_RFIFO_FIRST || i >= GR_IDS) {
			rte_errno = EINVAL;
			return NULL;
		}
		if (__atomic_load_n(&n->grec[i], __ATOMIC_ACQUIRE) != NULL) {
			rte_errno = EADDRINUSE;
			return NULL;
		}
	} else {
		/* the next free id after the last one given: an id given back waits its turn,
		 * so a frame still on its way to its last owner rarely meets a new one */
		for (k = 0; k < GR_IDS; k++) {
			i = (n->grec_next + k) % GR_IDS;
			if (__atomic_load_n(&n->grec[i], __ATOMIC_ACQUIRE) == NULL)
				break;
		}
		if (k == GR_IDS) {
			rte_errno = ENOSPC;
			return NULL;
		}
		n->grec_next = (i + 1) % GR_IDS;
	}
	rf = rte_zmalloc("trd_grfifo", sizeof(*rf), RTE_CACHE_LINE_SIZE);
	if (rf == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rf->r = r;
	rf->slots = (uint8_t *)&r[1];
	rf->size = slots;
	rf->mask = slots - 1;
	/* where the ring starts: the producer's index as its maker left it */
	rf->prod = __atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED);
	rte_spinlock_init(&rf->lock);
	rf->ctr_base = ctr_base;
	rf->id = (uint8_t)(TRD_GUEST_RFIFO_FIRST + i);
	if (pub != NULL)
		memcpy(rf->pub, pub, sizeof(rf->pub));
	__atomic_store_n(&n->grec[i], rf, __ATOMIC_RELEASE);
	return rf;
}

uint64_t
trd_guest_rfifo_msgs(const struct trd_node *n)
{
	return n != NULL ? __atomic_load_n(&n->main->grec_msgs, __ATOMIC_ACQUIRE) : 0;
}

uint8_t
trd_grfifo_id(const struct trd_grfifo *rf)
{
	return rf != NULL ? rf->id : 0;
}

void
trd_grfifo_stop(struct trd_grfifo *rf)
{
	if (rf != NULL)
		__atomic_store_n(&rf->stopped, true, __ATOMIC_RELEASE);
}

void
trd_grfifo_unlink(struct trd_node *n, struct trd_grfifo *rf)
{
	if (rf == NULL)
		return;
	n = n->main;
	trd_grfifo_stop(rf);
	if (__atomic_load_n(&n->grec[rf->id - TRD_GUEST_RFIFO_FIRST], __ATOMIC_ACQUIRE) == rf)
		__atomic_store_n(&n->grec[rf->id - TRD_GUEST_RFIFO_FIRST], NULL, __ATOMIC_RELEASE);
}

void
trd_grfifo_free(struct trd_grfifo *rf)
{
	rte_free(rf);
}

void
trd_grfifo_stats(const struct trd_grfifo *rf, struct trd_guest_rstats *st)
{
	st->msgs += __atomic_load_n(&rf->st.msgs, __ATOMIC_RELAXED);
	st->full += __atomic_load_n(&rf->st.full, __ATOMIC_RELAXED);
	st->bad_rings += __atomic_load_n(&rf->st.bad_rings, __ATOMIC_RELAXED);
}

/* A count changed: this FIFO's, for the service to see, and the owner's total of all its FIFOs
 * in its memory (relaxed: a reader wants the latest, not an order; added to, as the owner's
 * other FIFOs count there too). */
static inline void
gr_count(struct trd_grfifo *rf, uint64_t *c, unsigned int k)
{
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
	if (rf->pub[k] != NULL)
		__atomic_fetch_add(rf->pub[k], 1, __ATOMIC_RELAXED);
}

/* What the producer's index covers is written: the consumer may read it. */
static inline void
gr_publish(struct trd_grfifo *rf)
{
	__atomic_store_n(&rf->r->prod.head, rf->prod, __ATOMIC_RELAXED);
	__atomic_store_n(&rf->r->prod.tail, rf->prod, __ATOMIC_RELEASE);
}

/* Room for @p need slots in a row from the producer's index on, a padding header first if they
 * would cross the ring's end: 0 (rf->prod where they start), or a drop cause. Locked. */
static int
gr_reserve(struct trd_grfifo *rf, uint32_t need)
{
	uint32_t cons = __atomic_load_n(&rf->r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t used = rf->prod - cons, free, to_end;

	if (unlikely(used > rf->mask)) {
		/* the consumer claims more than was written: its index is not one */
		rf->broken = true;
		gr_count(rf, &rf->st.bad_rings, 2);
		return TRD_DROP_UNKNOWN_FIFO;
	}
	free = rf->mask - used;
	to_end = rf->size - (rf->prod & rf->mask);
	if (to_end < need) {
		struct trd_rslot *pad;

		if (free < to_end)
			goto full;
		/* the padding goes in (and is published) even if the message does not fit
		 * yet: once the process has read up to it, the whole ring is room */
		pad = (struct trd_rslot *)(void *)(rf->slots +
						   (size_t)(rf->prod & rf->mask) * GR_SLOT);
		memset(pad, 0, sizeof(*pad));
		pad->flags = TRD_RSLOT_PAD;
		pad->n_slots = (uint16_t)(to_end - 1);
		rf->prod += to_end;
		free -= to_end;
		gr_publish(rf);
	}
	if (free < need)
		goto full;
	return 0;
full:
	gr_count(rf, &rf->st.full, 1);
	return TRD_DROP_FIFO_FULL;
}

/* The live guest FIFO @p fifo names, or NULL. */
static inline struct trd_grfifo *
gr_lookup(const struct trd_node *n, uint8_t fifo)
{
	struct trd_grfifo *rf;

	if (fifo < TRD_GUEST_RFIFO_FIRST || fifo > TRD_GUEST_RFIFO_LAST)
		return NULL;
	rf = __atomic_load_n(&n->main->grec[fifo - TRD_GUEST_RFIFO_FIRST], __ATOMIC_ACQUIRE);
	if (rf == NULL || __atomic_load_n(&rf->stopped, __ATOMIC_ACQUIRE))
		return NULL;
	return rf;
}

/* May a frame for @p rf count on node counter @p ctr? Only on its owner's. */
static inline bool
gr_ctr_ok(const struct trd_node *n, const struct trd_grfifo *rf, uint16_t ctr)
{
	return ctr == 0 || (trd_ctr_valid(n, ctr) && trd_ctr_allowed(n, rf->ctr_base, ctr));
}

/* Slots a message of @p len bytes takes: its header and its bytes. */
static inline uint64_t
gr_need(uint32_t len)
{
	return 1 + ((uint64_t)len + GR_SLOT - 1) / GR_SLOT;
}

int
trd_grfifo_check(const struct trd_node *n, uint8_t fifo, uint16_t ctr, uint32_t len)
{
	const struct trd_grfifo *rf = gr_lookup(n, fifo);

	if (rf == NULL)
		return TRD_DROP_UNKNOWN_FIFO;
	if (!gr_ctr_ok(n, rf, ctr))
		return TRD_DROP_CTR_DENIED;
	/* at its first piece: a message the ring could never hold counts on nothing */
	return gr_need(len) > rf->mask ? TRD_DROP_BAD_LENGTH : 0;
}

int
trd_grfifo_deliver(struct trd_node *n, const struct trd_rslot *h, uint16_t ctr,
		   const struct rte_mbuf *m, uint32_t off, const void *buf)
{
	struct trd_grfifo *rf;
	struct trd_rslot *w;
	uint32_t need;
	int rc;

	rf = gr_lookup(n, h->fifo);
	if (rf == NULL)
		return TRD_DROP_UNKNOWN_FIFO;
	/* a frame into a process's FIFO counts on that process's counters alone */
	if (!gr_ctr_ok(n, rf, ctr))
		return TRD_DROP_CTR_DENIED;
	if (gr_need(h->len) > rf->mask)
		return TRD_DROP_BAD_LENGTH; /* it could never fit */
	need = (uint32_t)gr_need(h->len);
	rte_spinlock_lock(&rf->lock);
	if (rf->broken) {
		rc = TRD_DROP_UNKNOWN_FIFO;
		goto out;
	}
	rc = gr_reserve(rf, need);
	if (rc != 0)
		goto out;
	w = (struct trd_rslot *)(void *)(rf->slots + (size_t)(rf->prod & rf->mask) * GR_SLOT);
	*w = *h;
	w->n_slots = (uint16_t)(need - 1);
	w->flags = h->flags & (TRD_RSLOT_OUTCOME | TRD_RSLOT_OLD | TRD_RSLOT_DOORBELL);
	if (m != NULL)
		trd_pay_copy_at(m, off, w + 1, h->len);
	else if (h->len != 0)
		rte_memcpy(w + 1, buf, h->len);
	n->stat[TRD_STAT_RX_FIFO_COPY_BYTES] += h->len;
	rf->prod += need;
	gr_publish(rf);
	gr_count(rf, &rf->st.msgs, 0);
	__atomic_fetch_add(&n->main->grec_msgs, 1, __ATOMIC_RELEASE);
	n->stat[TRD_STAT_MSGS_DELIVERED]++;
	trd_ctr_sub(n, ctr, h->len);
out:
	rte_spinlock_unlock(&rf->lock);
	return rc;
}

int
trd_grfifo_outcome(struct trd_node *n, uint8_t fifo, uint32_t from_rank, uint64_t cookie,
		   unsigned int cause, bool has_old, uint64_t old)
{
	struct trd_rslot h;

	memset(&h, 0, sizeof(h));
	h.src = trd_outcome_src(n, from_rank);
	h.fifo = fifo;
	h.flags = TRD_RSLOT_OUTCOME | (has_old ? TRD_RSLOT_OLD : 0);
	h.cause = (uint8_t)cause;
	h.status = trd_cause_errno(cause);
	h.user = cookie;
	h.old = old;
	return trd_grfifo_deliver(n, &h, 0, NULL, 0, NULL);
}

void
trd_grfifo_doorbell(struct trd_node *n, uint8_t fifo, uint64_t key, uint64_t offset, uint32_t len)
{
	struct trd_rslot h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.src = n->coord;
	h.fifo = fifo;
	h.flags = TRD_RSLOT_DOORBELL;
	h.user = offset;
	h.msg_id = len;
	h.old = key;
	rc = trd_grfifo_deliver(n, &h, 0, NULL, 0, NULL);
	if (rc != 0)
		trd_drop(n, (unsigned int)rc); /* the write stands; its event is lost */
}
