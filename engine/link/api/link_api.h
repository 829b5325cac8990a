/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The link layer as the layers above it in the engine see it (engine/meson.build gives this
 * folder, not engine/link, to their include path; link_pvt.h stays the link's own).
 *
 * A link is the engine's view of a cable: the core sees struct trd_link and these functions;
 * it never knows whether an ethdev port or a ring pair is underneath. A link holds a pointer to
 * the node that uses it (node, set by the core), which it never looks into.
 */
#ifndef TRD_LINK_API_H
#define TRD_LINK_API_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <toroid/toroid.h>

/** Packets a link buffers for the port (power of 2). */
#define TRD_LINK_PEND      1024
#define TRD_LINK_PEND_MASK (TRD_LINK_PEND - 1)
/** Most packets trd_link_tx_span() gives at once. */
#define TRD_LINK_SPAN 256u

struct trd_link;
struct trd_impair;      /* the impairment tap (impair.c) */
struct trd_link_encap;  /* the IPv4/UDP encapsulation (link.c) */
struct trd_link_cap;    /* a capture tap (link.c) */
struct trd_capture;     /* a pcapng file several links may share (capture.c) */
struct trd_impair_conf; /* <toroid/testing.h> */

/** What the transport under a link does. */
struct trd_link_ops {
	const char *name;
	uint16_t (*tx)(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*rx)(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n);
	void (*close)(struct trd_link *l);
};

/**
 * Accounting for a packet waiting in the link's transmit buffer, settled at hand-over by the
 * layer that queued it (the link stores it and gives it back, never reads ctr or fifo).
 */
struct trd_pend_info {
	int64_t *ctr;              /**< injection counter to decrement, or NULL */
	struct trd_inj_fifo *fifo; /**< FIFO whose unsent count to decrement, or NULL */
	uint32_t bytes;            /**< payload bytes for the counter */
	uint32_t len;              /**< frame length for statistics */
};

struct trd_link {
	/* Properties the layers above read; dir and node are the core's to set. */
	const struct trd_link_ops *ops;
	enum trd_link_kind kind;
	char name[48];
	uint16_t port;
	uint16_t queue;
	uint16_t mtu;
	uint16_t trailer; /**< bytes a frame carries after its payload beyond the MTU's
			   * share: the session token's, on a reliable node's link */
	bool chain_ok;    /**< can transmit mbuf chains (zero-copy) */
	bool owns_port;   /**< stop and close the port on free */
	bool owns_rings;
	struct rte_ring *tx_ring; /**< ring links */
	struct rte_ring *rx_ring;
	struct rte_mempool *own_pool; /**< the port's receive pool when the link made it */
	struct rte_ether_addr mac;    /**< our source MAC */
	struct rte_ether_addr peer;   /**< destination MAC of point-to-point traffic */
	int dir;                      /**< enum trd_dir, or TRD_DIR_NONE */
	struct trd_node *node;        /**< the node using the link (opaque here), or NULL */
	/* The link's own from here: the layers above use the functions below. */
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
	/* Statistics, written by the serving lcore only (trd_link_count_rx(), ..._fwd()). */
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t fwd_pkts;
	uint64_t port_faults; /**< bursts abandoned: the port's memory went away under them */
};

/** Room left in the transmit buffer. */
static inline uint32_t
trd_link_room(const struct trd_link *l)
{
	return TRD_LINK_PEND - (l->pend_tail - l->pend_head);
}

/** Whether the transmit buffer holds anything. */
static inline bool
trd_link_pending(const struct trd_link *l)
{
	return l->pend_head != l->pend_tail;
}

/** Queue @p m for transmission (the caller checked trd_link_room()). */
static inline void
trd_link_queue(struct trd_link *l, struct rte_mbuf *m, int64_t *ctr, struct trd_inj_fifo *fifo,
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

/**
 * Hand @p n frames to the port through the link's transmit taps; returns how many it took,
 * from the head. On the span trd_link_tx_span() gave, a link over IP may reorder the packets
 * and their accounting: those it took itself (held for ARP, or dropped) come first.
 */
static inline uint16_t
trd_link_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return l->tx_burst(l, pkts, n);
}

/**
 * The oldest packets of the transmit buffer, up to TRD_LINK_SPAN and not across its end, for
 * trd_link_tx(): returns where they are, *@p want how many, *@p pi their accounting. The
 * caller settles what the port took and calls trd_link_tx_done(). (Two calls rather than one
 * with a callback: the loop stays in the caller, as cheap as it was, make ipm.)
 */
static inline struct rte_mbuf **
trd_link_tx_span(struct trd_link *l, const struct trd_pend_info **pi, uint16_t *want)
{
	uint32_t cnt = l->pend_tail - l->pend_head;
	uint32_t idx = l->pend_head & TRD_LINK_PEND_MASK;
	uint32_t upto = RTE_MIN(cnt, TRD_LINK_PEND - idx);

	*want = (uint16_t)RTE_MIN(upto, TRD_LINK_SPAN);
	*pi = &l->info[idx];
	return &l->pend[idx];
}

/** The port took the first @p sent packets of trd_link_tx_span(), of @p bytes in all. */
static inline void
trd_link_tx_done(struct trd_link *l, uint16_t sent, uint64_t bytes)
{
	l->pend_head += sent;
	l->tx_pkts += sent;
	l->tx_bytes += bytes;
}

/** The first position in the transmit buffer and the one past its last, for trd_link_at(). */
static inline uint32_t
trd_link_pend_first(const struct trd_link *l)
{
	return l->pend_head;
}

static inline uint32_t
trd_link_pend_end(const struct trd_link *l)
{
	return l->pend_tail;
}

/** The packet at position @p k of the transmit buffer and its accounting (*@p pi). */
static inline struct rte_mbuf *
trd_link_at(struct trd_link *l, uint32_t k, struct trd_pend_info **pi)
{
	*pi = &l->info[k & TRD_LINK_PEND_MASK];
	return l->pend[k & TRD_LINK_PEND_MASK];
}

/** Count @p nb frames of @p bytes received from the port. */
static inline void
trd_link_count_rx(struct trd_link *l, uint16_t nb, uint64_t bytes)
{
	l->rx_pkts += nb;
	l->rx_bytes += bytes;
}

/** Count one frame forwarded through the link towards another node. */
static inline void
trd_link_count_fwd(struct trd_link *l)
{
	l->fwd_pkts++;
}

/** Free every packet waiting in the transmit buffer (and what the capture recorded ahead). */
void trd_link_tx_discard(struct trd_link *l);

/** Receive from the port, past the taps, and free every frame there. @return how many. */
int trd_link_rx_discard(struct trd_link *l);

/** Run the receive taps on @p nb frames that did not come from the port (injected). */
uint16_t trd_link_taps_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb, uint16_t max);

/** Copies the taps make (impairment duplicates, encapsulated frames) come from @p mp. */
void trd_link_taps_pool(struct trd_link *l, struct rte_mempool *mp);

/**
 * Install the capture tap @p cap (NULL: none) and return the previous one, which the caller
 * frees with trd_link_cap_free() once the serving lcore is out of its round.
 */
struct trd_link_cap *trd_link_swap_capture(struct trd_link *l, struct trd_link_cap *cap);
/** Does @p l record into a capture now (one atomic load)? */
bool trd_link_capture_on(const struct trd_link *l);
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

/**
 * Make the switched link @p l a link over IPv4 (trd_node_set_ip()) in a torus of @p dims with
 * @p n_nodes nodes; copies come from @p mp. Again: a new address, the peers forgotten. Only
 * while no lcore serves the link. @return 0, -EINVAL, -ENOTSUP, -EMSGSIZE, -ENOMEM.
 */
int trd_link_set_ip(struct trd_link *l, const struct trd_ip_conf *c, struct rte_mempool *mp,
		    const uint8_t dims[3], uint32_t n_nodes);
/** The address of the peer of rank @p rank (trd_node_set_peer_ip()). @return 0, -EINVAL,
 * -ENOTSUP (not an IP link), -ENOSPC (the ARP table is full). */
int trd_link_set_ip_peer(struct trd_link *l, uint32_t rank, uint32_t ip, uint16_t port);

/* The pcapng writer (opened by path: one writer per file, counted references). */
struct trd_capture *trd_capture_open(const char *path, const struct trd_capture_conf *conf);
/** Close the file written now and open the next one. @return 0 or -EIO. */
int trd_capture_rotate(struct trd_capture *c);
void trd_capture_stats(struct trd_capture *c, struct trd_capture_stats *st);
void trd_capture_get(struct trd_capture *c);
void trd_capture_put(struct trd_capture *c);

/** Make @p a and @p b each other's point-to-point peer (destination MACs). */
void trd_link_set_peer(struct trd_link *a, struct trd_link *b);

/** A ring link that delivers to itself (every node's loopback). */
struct trd_link *trd_link_loopback(const char *name, uint16_t mtu);

/**
 * trd_link_ethdev() with @p pool (not NULL) for received frames when it sets the port up:
 * the public function, in the core, passes the node's default pool.
 */
struct trd_link *trd_link_ethdev_pool(uint16_t port_id, const struct trd_link_conf *conf,
				      struct rte_mempool *pool);

/** trd_link_ethdev_ring_pair() with @p pool (not NULL) for received frames. */
int trd_link_ethdev_ring_pair_pool(const char *name, uint16_t mtu, struct rte_mempool *pool,
				   struct trd_link **a, struct trd_link **b);
/** Queue pairs a net_ring pair may have (trd_link_ethdev_ring_pair_queues_pool()). */
#define TRD_LINK_MAX_QUEUES 8
/**
 * Two net_ring ports joined back to back with @p nq queue pairs each, and a link on each
 * pair: a[q] and b[q] (queue 0's close the ports: free them last). Pair q is the ports' queue
 * q * 4 (trd_link_queue_id()), so that the driver's per-queue counters, written on every burst,
 * of two pairs polled by two lcores are on different cache lines; the queues between are
 * never used. @return 0 or a negative errno.
 */
int trd_link_ethdev_ring_pair_queues_pool(const char *name, uint16_t mtu, struct rte_mempool *pool,
					  unsigned int nq, struct trd_link *a[],
					  struct trd_link *b[]);

#endif /* TRD_LINK_API_H */
