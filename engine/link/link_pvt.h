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

/** Impairment state of a link (impair.c): a receive tap. */
struct trd_impair {
	uint32_t loss, reorder, dup, corrupt; /* per 2^32 */
	uint64_t rng;
	struct rte_mempool *mp; /* copies (duplicates, corrupted frames) come from here */
	struct rte_mbuf *held;  /* a frame waiting to be delivered late */
	uint64_t lost, reordered, dupped, corrupted;
};

/** IPv4/UDP encapsulation of a link (link.c): network-order header fields, made once. */
struct trd_link_encap {
	uint32_t src_ip, dst_ip; /* network order */
	uint16_t port;           /* network order */
	uint8_t ttl, tos;
	struct rte_mempool *mp;  /* the encapsulated copies come from here */
	uint64_t drops;          /* received datagrams refused */
};

struct trd_capture; /* a pcapng file several links may share (capture.c) */

/** A capture tap on a link: every frame it hands to the port or receives goes to @c c. */
struct trd_link_cap {
	struct trd_capture *c;
	char ifname[128];             /* the link's interface name in the file */
	struct rte_mbuf *ahead_first; /* recorded, then refused by the port: first of them */
	uint16_t ahead;               /* how many, from the head of the transmit buffer */
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
	uint16_t trailer;    /**< bytes a frame carries after its payload beyond the MTU's
			      * share: the session token's, on a reliable node's link */
	bool chain_ok;       /**< can transmit mbuf chains (zero-copy) */
	bool owns_port;      /**< stop and close the port on free */
	bool owns_rings;
	struct rte_ring *tx_ring; /**< ring links */
	struct rte_ring *rx_ring;
	struct rte_ether_addr mac;  /**< our source MAC */
	struct rte_ether_addr peer; /**< destination MAC of point-to-point traffic */
	int dir;             /**< enum trd_dir, or TRD_DIR_NONE */
	struct trd_node *node;
	/* The port as the engine sees it: ops->rx/tx, or through the taps (impairment, capture)
	 * when one is installed, like DPDK's rx/tx callbacks. */
	uint16_t (*rx_burst)(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, uint16_t max);
	uint16_t (*tx_burst)(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n);
	struct trd_impair *imp;
	struct trd_link_cap *cap;
	struct trd_link_encap *encap;
	/* Transmit buffer: what the port has not taken yet, in order. */
	uint32_t pend_head;
	uint32_t pend_tail;
	struct rte_mbuf *pend[TRD_LINK_PEND];
	struct trd_pend_info info[TRD_LINK_PEND];
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

/**
 * Receive up to @p n frames into @p pkts, which has room for @p max (an impairment may
 * duplicate frames), through the link's receive taps.
 */
static inline uint16_t
trd_link_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, uint16_t max)
{
	return l->rx_burst(l, pkts, n, max);
}

/** Hand @p n frames to the port through the link's transmit taps; returns how many it took. */
static inline uint16_t
trd_link_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return l->tx_burst(l, pkts, n);
}

/** Choose the link's burst functions after a tap was installed or removed. */
void trd_link_taps_update(struct trd_link *l);

/** Run the receive taps on @p nb frames that did not come from the port (injected). */
uint16_t trd_link_taps_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb, uint16_t max);

/**
 * Install the capture tap @p cap (NULL: none) and return the previous one, which the caller
 * frees with trd_link_cap_free() once the serving lcore is out of its round.
 */
struct trd_link_cap *trd_link_swap_capture(struct trd_link *l, struct trd_link_cap *cap);
/** A capture tap writing into @p c (a reference is taken) as interface @p ifname. */
struct trd_link_cap *trd_link_cap_new(struct trd_capture *c, const char *ifname);
void trd_link_cap_free(struct trd_link_cap *cap);
/** Forget the frames the capture tap recorded ahead (the transmit buffer was emptied). */
void trd_link_tx_reset(struct trd_link *l);

/**
 * Install (or with @p c NULL remove) the impairment tap; copies come from @p mp. Only while
 * no lcore serves the link. @return 0, -EINVAL, -ENOMEM.
 */
int trd_link_set_impair(struct trd_link *l, const struct trd_impair_conf *c,
			struct rte_mempool *mp);
/**
 * Install (@p e) or remove (NULL) the IPv4/UDP encapsulation; copies come from @p mp. Only
 * while no lcore serves the link. @return 0, -EINVAL, -EMSGSIZE, -ENOMEM.
 */
int trd_link_set_encap(struct trd_link *l, const struct trd_udp_encap *e, struct rte_mempool *mp);
/* impair.c: the receive tap */
uint16_t trd_impair_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb, uint16_t max);

/* capture.c: the pcapng writer (opened by path: one writer per file, counted references) */
struct trd_capture *trd_capture_open(const char *path, unsigned int snaplen);
void trd_capture_get(struct trd_capture *c);
void trd_capture_put(struct trd_capture *c);
void trd_capture_frames(struct trd_capture *c, const struct trd_link *l, const char *ifname,
			struct rte_mbuf *const *pkts, unsigned int nb, bool outbound);

/** Make @p a and @p b each other's point-to-point peer (destination MACs). */
void trd_link_set_peer(struct trd_link *a, struct trd_link *b);

/** A ring link that delivers to itself (every node's loopback). */
struct trd_link *trd_link_loopback(const char *name, uint16_t mtu);

#endif /* TRD_LINK_PVT_H */
