/* SPDX-License-Identifier: BSD-3-Clause */
/* Links: the engine's view of a cable. The DMA engine above sees only struct trd_link and its
 * ops; it never knows whether an ethdev port or a ring pair is underneath. */
#ifndef TRD_LINK_PVT_H
#define TRD_LINK_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <toroid/toroid.h>

/** Impairment state of a link (impair.c). */
struct trd_impair {
	uint32_t loss, reorder, dup, corrupt; /* per 2^32 */
	uint64_t rng;
	struct rte_mbuf *held;  /* a frame waiting to be delivered late */
	uint64_t lost, reordered, dupped, corrupted;
};

/** Packets a link buffers for the port (power of 2). */
#define TRD_LINK_PEND 1024
#define TRD_LINK_PEND_MASK (TRD_LINK_PEND - 1)

struct trd_link;

/** What the transport under a link does. */
struct trd_link_ops {
	const char *name;
	uint16_t (*tx)(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*rx)(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n);
	void (*close)(struct trd_link *l);
};

/** Accounting for a packet waiting in the link's transmit buffer, settled at hand-over. */
struct trd_pend_info {
	int64_t *ctr;        /**< injection counter to decrement, or NULL */
	struct trd_fifo *fifo; /**< FIFO whose unsent count to decrement, or NULL */
	uint32_t bytes;      /**< payload bytes for the counter */
	uint32_t len;        /**< frame length for statistics */
};

struct trd_link {
	const struct trd_link_ops *ops;
	enum trd_link_kind kind;
	char name[48];
	uint16_t port;
	uint16_t queue;
	uint16_t mtu;
	bool chain_ok;       /**< can transmit mbuf chains (zero-copy) */
	bool owns_port;      /**< stop and close the port on free */
	bool owns_rings;
	struct rte_ring *tx_ring; /**< ring links */
	struct rte_ring *rx_ring;
	struct rte_ether_addr mac;  /**< our source MAC */
	struct rte_ether_addr peer; /**< destination MAC of point-to-point traffic */
	int dir;             /**< enum trd_dir, or TRD_DIR_NONE */
	struct trd_node *node;
	/* Transmit buffer: what the port has not taken yet, in order. */
	uint32_t pend_head;
	uint32_t pend_tail;
	uint32_t cap_next;   /* first buffered packet not yet captured */
	struct rte_mbuf *pend[TRD_LINK_PEND];
	struct trd_pend_info info[TRD_LINK_PEND];
	struct trd_impair *imp;
	/* Statistics, written by the serving lcore only. */
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t fwd_pkts;
};

/** Room left in the transmit buffer. */
static inline uint32_t
trd_link_room(const struct trd_link *l)
{
	return TRD_LINK_PEND - (l->pend_tail - l->pend_head);
}

/** Queue @p m for transmission (the caller checked trd_link_room()). */
static inline void
trd_link_queue(struct trd_link *l, struct rte_mbuf *m, int64_t *ctr, struct trd_fifo *fifo,
	       uint32_t bytes)
{
	uint32_t i = l->pend_tail++ & TRD_LINK_PEND_MASK;

	l->pend[i] = m;
	l->info[i].ctr = ctr;
	l->info[i].fifo = fifo;
	l->info[i].bytes = bytes;
	l->info[i].len = m->pkt_len;
}

/** Apply the link's impairment to @p nb received frames in @p pkts (room for @p cap). */
uint16_t trd_impair_rx(struct trd_link *l, struct rte_mempool *mp, struct rte_mbuf **pkts,
		       uint16_t nb, uint16_t cap);

/** Make @p a and @p b each other's point-to-point peer (destination MACs). */
void trd_link_set_peer(struct trd_link *a, struct trd_link *b);

/** A ring link that delivers to itself (every node's loopback). */
struct trd_link *trd_link_loopback(const char *name, uint16_t mtu);

#endif /* TRD_LINK_PVT_H */
