/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest injection FIFOs (engine/core/guest.c): rings of the engine's 64-byte descriptors that
 * another process writes, in memory it shares with the engine (the VNI service's messaging-unit
 * objects, docs/vni.md). The core serves them in its poll round beside its own FIFOs and builds
 * packets straight from them; everything in the ring is untrusted. The rules a guest's
 * descriptor must pass are the core's alone (guest.c): a put (TRD_OP_PUT) whose flags are none,
 * TRD_DF_SRC_MR or TRD_DF_IMM, whose data is inline in exactly the continuation slots its length
 * needs (at most TRD_GUEST_INLINE_MAX bytes), immediate, or in the guest's own region; or a
 * remote get (TRD_OP_RGET, flags none or ordered, for the target's TRD_ENGINE_FIFO) whose
 * 1 .. TRD_RGET_MAX_DESCS carried descriptors fill
 * exactly its slots and are puts addressed to this node with no completion, verdict or
 * injection counter (copied out of the ring before they are checked); or an atomic
 * (TRD_OP_ATOMIC, flags none) whose old value goes to its region at src_key (8-byte aligned)
 * and whose verdict to its injection counter, which it must name (at most 64 waiting for their
 * verdict at a time: later ones wait in the ring); whose injection counter is 0 or one of its
 * block (its number k, 1 .. TRD_COUNTER_BLOCK - 1, becomes the node's id
 * ctr_base + k); and whose destination and target range trd_inject() accepts. A memory-FIFO
 * message (TRD_OP_FIFO) passes a put's rules and must name a guest's reception FIFO
 * (TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST): never the node's own, whose readers trust
 * what names its sender. A guest's reception FIFOs (grfifo.c) take memory-FIFO messages to their
 * ids from any node, copied into the ring by the core.
 *
 * Add, stop and remove from the thread that polls the node (the VNI service's, by contract); a
 * node served by an lcore of its own is waited for (its round ends) before a guest's memory goes.
 */
#ifndef TRD_GUEST_API_H
#define TRD_GUEST_API_H

#include <stdbool.h>
#include <stdint.h>

#include <toroid/toroid.h>

struct rte_ring;

#define TRD_GUEST_FIFOS_MAX  8   /* rings of one guest */
#define TRD_GUEST_INLINE_MAX 256 /* inline data of a descriptor: 4 continuation slots */
#define TRD_GUEST_SLOTS_MIN  64
#define TRD_GUEST_SLOTS_MAX  4096
#define TRD_GUEST_RFIFOS_MAX 4 /* reception rings of one guest */
/* reception FIFO ids of a node, all guests together (TRD_GUEST_RFIFO_FIRST .. _LAST) */
#define TRD_GUEST_RFIFOS_NODE 127

/** Is @p slots a ring size the core serves: a power of 2, TRD_GUEST_SLOTS_MIN .. _MAX? */
static inline bool
trd_guest_slots_ok(uint32_t slots)
{
	return slots >= TRD_GUEST_SLOTS_MIN && slots <= TRD_GUEST_SLOTS_MAX &&
	       (slots & (slots - 1)) == 0;
}

/** What a guest may do, and where its rings are. */
struct trd_guest_conf {
	unsigned int n_fifos;                        /**< 0 .. TRD_GUEST_FIFOS_MAX */
	struct rte_ring *rings[TRD_GUEST_FIFOS_MAX]; /**< rte_ring_init()ed, 64-byte elements, in
						      * shared memory: only prod.tail is read, and
						      * cons.head/tail written */
	uint32_t slots;      /**< each ring's size: a power of 2, 64 .. 4096 */
	uint64_t region_key; /**< the region it may read as a source (0: none) ... */
	uint64_t region_len; /**< ... of this many bytes, named by offset */
	uint16_t ctr_base;   /**< its counter block's first id (trd_counter_block_alloc()) */
	uint64_t *pub[3];    /**< NULL, or words in shared memory where the counts below are
			      * published (descs, bad_descs, bad_rings: relaxed atomic stores) */
	/** reception rings (grfifo.c): rte_ring_init()ed, 64-byte elements, in shared memory:
	 * only cons.tail is read, and prod.head/tail written. Each gets a free node id of
	 * TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST (trd_guest_rfifo_id()), or ring k id
	 * rfifo_first + k (taken: trd_guest_add() fails, rte_errno EADDRINUSE). */
	unsigned int n_rfifos; /**< 0 .. TRD_GUEST_RFIFOS_MAX */
	struct rte_ring *rrings[TRD_GUEST_RFIFOS_MAX];
	uint32_t rslots;     /**< each one's size: a power of 2, 64 .. 4096 */
	uint64_t *rpub[3];   /**< NULL, or where struct trd_guest_rstats is published */
	uint8_t rfifo_first; /**< 0, or the first ring's id (the others after it) */
};

/** A guest's counts. */
struct trd_guest_stats {
	uint64_t descs;     /**< descriptors taken, to be cut into packets in place */
	uint64_t bad_descs; /**< dropped unused: they failed a check */
	uint64_t bad_rings; /**< rings no longer served: a producer index past the capacity */
};

/** A guest's reception FIFOs' counts, all of them together. */
struct trd_guest_rstats {
	uint64_t msgs;      /**< messages written into them */
	uint64_t full;      /**< refused: no room (fifo_full) */
	uint64_t bad_rings; /**< rings no longer written: a consumer index past what was written */
};

struct trd_guest;

/** Serve a guest's rings on @p n (share 0 of a node with shares). NULL and rte_errno: EINVAL
 * (a bad conf, a counter block that is not one), ENOSPC (too many guest FIFOs), ENOMEM. */
struct trd_guest *trd_guest_add(struct trd_node *n, const struct trd_guest_conf *c);

/** The guest is gone: its rings are no longer read. What the core took from them before is
 * still sent (a descriptor of a region reads it until its last packet: trd_mr_readers()). */
void trd_guest_stop(struct trd_guest *g);

/** Does the core still hold a descriptor @p g posted (taken, not yet all built into packets)? */
bool trd_guest_busy(const struct trd_guest *g);

/** Has the core work of @p g: a descriptor it holds, or (not stopped) one in a ring? */
bool trd_guest_pending(const struct trd_guest *g);

/** Stop @p g if need be, and take it out of the node's round: 0, or -EBUSY while
 * trd_guest_busy() (call again later). @p g is freed on 0. NULL: 0. */
int trd_guest_remove(struct trd_guest *g);

/** As trd_guest_remove(), at once: what the core still holds of @p g is given up (its
 * injection counters failed). For a service or node going away. 0. */
int trd_guest_remove_now(struct trd_guest *g);

/** @p g's counts. 0 or -EINVAL. */
int trd_guest_stats_get(const struct trd_guest *g, struct trd_guest_stats *st);

/** Make @p mr (a region of @p g's node, remote write) a doorbell of @p g: every engine write
 * into it leaves a TRD_RSLOT_DOORBELL slot in @p g's reception FIFO @p k. 0 or -EINVAL. */
int trd_guest_doorbell(struct trd_mr *mr, const struct trd_guest *g, unsigned int k);

/** The node id of @p g's reception FIFO @p k, or 0 (none). */
uint8_t trd_guest_rfifo_id(const struct trd_guest *g, unsigned int k);

/** Messages written into every guest reception FIFO of @p n so far (a service compares it
 * with what it saw last, to wake the processes that got some). */
uint64_t trd_guest_rfifo_msgs(const struct trd_node *n);

/** Messages written into @p g's reception FIFO @p k so far (0: none, or no such FIFO). */
uint64_t trd_guest_rfifo_count(const struct trd_guest *g, unsigned int k);

/** @p g's reception FIFOs' counts. 0 or -EINVAL. */
int trd_guest_rstats_get(const struct trd_guest *g, struct trd_guest_rstats *st);

#endif /* TRD_GUEST_API_H */
