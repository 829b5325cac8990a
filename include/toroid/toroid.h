/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid: one-sided torus messaging on DPDK.
 *
 * Objects: links (an ethdev port or an in-process ring pair), nodes (one engine instance at a
 * torus coordinate), injection FIFOs (rte_rings of 64-byte descriptors), reception FIFOs,
 * byte counters and registered memory regions. A node does its work in trd_node_poll(), called
 * by whichever thread or lcore serves it.
 *
 * Conventions: constructors return a pointer, or NULL with rte_errno set; other calls return 0
 * or a negative errno. -ENOBUFS and -EAGAIN mean "retry later" (back-pressure), never "lost".
 * Calls that take a node may be made from any thread unless said otherwise; trd_node_poll()
 * must be called by one thread at a time.
 */
#ifndef TOROID_TOROID_H
#define TOROID_TOROID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <toroid/topo.h>
#include <toroid/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mempool;
struct trd_node;
struct trd_link;
struct trd_inj_fifo;
struct trd_rec_fifo;
struct trd_mr;
struct trd_net;

/* ------------------------------------------------------------------------------------------ */
/** @name Descriptors */

/** Operations a descriptor can ask for. */
enum trd_op {
	TRD_OP_NONE = 0,
	TRD_OP_PUT = 1,    /**< direct put: write len bytes at the target's (rkey, roff) */
	TRD_OP_FIFO = 2,   /**< memory FIFO: deliver a len-byte message to the target's FIFO */
	TRD_OP_RGET = 3,   /**< remote get: the target injects the carried descriptors */
	TRD_OP_ATOMIC = 4, /**< a 64-bit atomic at the target's (rkey, roff); tracked (ACKREQ) */
	TRD_OP_MAX
};
/**
 * From an attached process only (never sent; refused in-process): give back the engine's id of
 * the process's tracked operation whose own id is @c aux, one whose outcome will never come (an
 * RDMA read that succeeded: a remote get reports only a refusal). trd_track_close() on a node
 * handle posts it (docs/vni.md "Tracked operations").
 */
#define TRD_OP_UNTRACK 0xfe

/** Descriptor flags. */
#define TRD_DF_SRC_MR  0x01 /**< source is (src_key, src) of a region of the executing node */
#define TRD_DF_IMM     0x02 /**< source is the descriptor's own @c imm field (len <= 8) */
#define TRD_DF_ORDERED 0x04 /**< start only after every earlier packet of this FIFO was sent */
#define TRD_DF_CPL     0x10 /**< a completion notification (built by trd_inject_reflect()) */
/**
 * A tracked operation: aux is an id from trd_track_open(), the target's verdict comes back as
 * a DONE (see trd_track_open())
 */
#define TRD_DF_ACKREQ 0x20
/**
 * Never zero-copy: the engine copies the source into its own buffers as it builds the packets,
 * so the source is not read once they were handed to a port (a reliable link resends the
 * copies). Local descriptors only; set by trd_inject_reflect() in local mode
 */
#define TRD_DF_COPY      0x40
#define TRD_DF_USER_MASK (TRD_DF_SRC_MR | TRD_DF_IMM | TRD_DF_ORDERED | TRD_DF_CPL | TRD_DF_ACKREQ)
#define TRD_DF_PAYLOAD                                                                             \
	0x80 /**< set by trd_inject_payload() only (trd_inject() refuses it): src_key names a      \
		shared payload */

/** Atomic operations (in the descriptor's @c fifo field for TRD_OP_ATOMIC). */
enum trd_atomic_op {
	TRD_ATOMIC_FADD = 1, /**< old = *w; *w += operand */
	TRD_ATOMIC_CAS = 2,  /**< old = *w; if (old == compare) *w = operand */
	TRD_ATOMIC_SWAP = 3, /**< old = *w; *w = operand */
};

/**
 * A descriptor: one cache line, copied into the injection FIFO by trd_inject().
 * Fill it with the trd_desc_*() helpers or by hand (zero unused fields).
 */
struct trd_desc {
	uint8_t op;           /**< enum trd_op */
	uint8_t flags;        /**< TRD_DF_* */
	uint8_t fifo;         /**< target's reception FIFO (FIFO) or injection FIFO (RGET) */
	uint8_t n_slots;      /**< engine use: inline continuation slots that follow */
	struct trd_coord dst; /**< destination node */
	uint8_t ack_fifo;     /**< from an attached process, with TRD_DF_ACKREQ: the node id of
			       *   its reception FIFO that takes the outcome; else 0 */
	uint16_t inj_ctr;     /**< local injection counter id, decremented as bytes leave; 0 none
			       *   (from an attached process: its own number, 1 .. 511) */
	uint16_t rec_ctr;     /**< target's reception counter id, decremented on arrival; 0 none
			       *   (always the target node's id: trd_vni_counter_id() there) */
	uint32_t len;         /**< message length in bytes (RGET: carried descriptors * 64) */
	uint64_t src;         /**< source address, or offset (address with TRD_ACCESS_VA) in
			       *   region src_key (TRD_DF_SRC_MR) */
	uint64_t src_key;     /**< source region key with TRD_DF_SRC_MR */
	uint64_t rkey;        /**< target region key (PUT) */
	uint64_t roff;        /**< offset in the target region (PUT), or the address in a
			       *   TRD_ACCESS_VA region; roff + len must not pass UINT64_MAX */
	uint64_t user;        /**< FIFO: user word delivered with the message; IMM: the data */
	uint32_t msg_id;      /**< engine use */
	uint32_t aux; /**< with TRD_DF_CPL: the origin's completion id (set by the engine) */
};

_Static_assert(sizeof(struct trd_desc) == 64, "a descriptor is one cache line");

/* The two helpers an attached process uses too (libtoroid_vni, trd_vni_inject()) are inline:
 * a program built against either library has them. */

/** Fill @p d as a direct put of @p len bytes at @p src to (@p rkey, @p roff) on @p dst
 * (@p roff: an offset, or a virtual address if the target registered @p rkey with
 * TRD_ACCESS_VA). Counters: @p inj_ctr is the poster's own (in-process: a node counter id;
 * from an attached process: its counter number 1 .. 511, trd_vni_inject()), @p rec_ctr
 * always the target node's counter id (for an attached target, trd_vni_counter_id() there,
 * never its number). */
static inline void
trd_desc_put(struct trd_desc *d, struct trd_coord dst, const void *src, uint32_t len, uint64_t rkey,
	     uint64_t roff, uint16_t inj_ctr, uint16_t rec_ctr)
{
	*d = (struct trd_desc){.op = TRD_OP_PUT,
			       .dst = dst,
			       .src = (uint64_t)(uintptr_t)src,
			       .len = len,
			       .rkey = rkey,
			       .roff = roff,
			       .inj_ctr = inj_ctr,
			       .rec_ctr = rec_ctr};
}
/** Fill @p d as a memory-FIFO message of @p len bytes to reception FIFO @p fifo on @p dst
 * (an attached process may post these to an attached process's reception FIFO only,
 * TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST: docs/vni.md, "Messaging-unit objects"). */
static inline void
trd_desc_fifo(struct trd_desc *d, struct trd_coord dst, uint8_t fifo, const void *src, uint32_t len,
	      uint64_t user, uint16_t inj_ctr)
{
	*d = (struct trd_desc){.op = TRD_OP_FIFO,
			       .dst = dst,
			       .fifo = fifo,
			       .src = (uint64_t)(uintptr_t)src,
			       .len = len,
			       .user = user,
			       .inj_ctr = inj_ctr};
}
/**
 * Fill @p d as a remote get to @p dst carrying @p n descriptors (@p carried, copied at inject
 * time, at most TRD_RGET_MAX_DESCS) for the target's injection FIFO @p fifo. Carried
 * descriptors must take their data from the target's registered memory (TRD_DF_SRC_MR) or
 * from themselves (TRD_DF_IMM) and must be addressed to the requester. (An attached process
 * may post remote gets whose carried descriptors are puts with no completion or verdict:
 * docs/vni.md, "Messaging-unit objects".)
 */
static inline void
trd_desc_rget(struct trd_desc *d, struct trd_coord dst, uint8_t fifo,
	      const struct trd_desc *carried, unsigned int n)
{
	*d = (struct trd_desc){.op = TRD_OP_RGET,
			       .dst = dst,
			       .fifo = fifo,
			       .src = (uint64_t)(uintptr_t)carried,
			       .len = n * (uint32_t)sizeof(struct trd_desc)};
}

/**
 * Fill @p d as a 64-bit atomic @p op on the word at (@p rkey, @p roff) of @p dst (8-byte
 * aligned, in a region with remote read and write access). The descriptor must be tracked:
 * set d->flags |= TRD_DF_ACKREQ and d->aux to an id from trd_track_open(), whose @c result
 * receives the old value.
 */
static inline void
trd_desc_atomic(struct trd_desc *d, struct trd_coord dst, enum trd_atomic_op op, uint64_t rkey,
		uint64_t roff, uint64_t operand, uint64_t compare)
{
	*d = (struct trd_desc){.op = TRD_OP_ATOMIC,
			       .dst = dst,
			       .fifo = (uint8_t)op,
			       .len = 8,
			       .rkey = rkey,
			       .roff = roff,
			       .user = operand,
			       .src = compare};
}

/**
 * Fill @p d as a 64-bit atomic @p op on the word at (@p rkey, @p roff) of @p dst (8-byte
 * aligned, in a region with remote read and write access, such as a process's region), for an
 * attached process's trd_vni_inject() (<toroid/vni.h>): the target's engine applies it and answers
 * with the old value, which the engine writes at offset @p result_off (8-byte aligned) of this
 * process's region; then it takes 8 from counter @p k (1 .. n_counters - 1; set it to 8 per atomic
 * first), or fails it (TRD_COUNTER_FAILED: the target refused, the peer is gone). Up to 64 of a
 * process's atomics wait for their answer at a time; later ones wait in the FIFO. @p compare is
 * CAS's.
 */
static inline void
trd_vni_desc_atomic(struct trd_desc *d, struct trd_coord dst, enum trd_atomic_op op, uint64_t rkey,
		    uint64_t roff, uint64_t operand, uint64_t compare, uint64_t result_off,
		    uint16_t k)
{
	trd_desc_atomic(d, dst, op, rkey, roff, operand, compare);
	d->src_key = result_off;
	d->inj_ctr = k;
}

/** The injection FIFO of a node's engine itself: the target of remote gets that no
 * application FIFO should serve (reflection, RDMA read). */
#define TRD_ENGINE_FIFO 0xFF

/** Largest number of descriptors one remote get carries. */
#define TRD_RGET_MAX_DESCS 15

/**
 * Reception FIFO ids TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST name, on every node, the
 * reception FIFOs of attached processes (libtoroid_vni, trd_vni_conf::mu_rfifos): the node's
 * own FIFOs are 0 .. 63. A memory-FIFO message (trd_desc_fifo()) to such an id lands in the ring
 * of the process that holds it there (trd_vni_rfifo_id() says which), copied in by its engine;
 * an attached process may send memory-FIFO messages to these ids only.
 */
#define TRD_GUEST_RFIFO_FIRST 128
#define TRD_GUEST_RFIFO_LAST  254

/**
 * A message's first 64-byte slot in an attached process's reception ring (an rte_ring of
 * 64-byte elements that the engine fills and the process empties, docs/vni.md "Reception
 * FIFOs"): its bytes follow in the next n_slots slots, never across the ring's end. With
 * TRD_RSLOT_PAD the slot and the n_slots after it are padding up to the ring's end: the next
 * message starts at slot 0. With TRD_RSLOT_OUTCOME it is the outcome of one of the process's
 * tracked operations (a descriptor with TRD_DF_ACKREQ, docs/vni.md "Tracked operations"): len
 * 0, user the descriptor's aux, status and cause its verdict, from src (the node it was sent
 * to, or this node if it failed before its route was known) and, with TRD_RSLOT_OLD, an
 * atomic's old value. With TRD_RSLOT_DOORBELL it says a write into one of its doorbell
 * regions (docs/vni.md "Event queues and doorbells on a handle").
 */
struct trd_rslot {
	uint32_t len;         /**< message bytes */
	uint16_t n_slots;     /**< slots that follow: (len + 63) / 64, or the padding */
	uint8_t flags;        /**< TRD_RSLOT_PAD, _OUTCOME, _OLD, _DOORBELL */
	uint8_t fifo;         /**< the FIFO's node id */
	struct trd_coord src; /**< the sending node */
	uint8_t cause;        /**< an outcome's enum trd_drop cause (0: done) */
	uint32_t msg_id;      /**< the sender's message id */
	uint64_t user;        /**< the sender's user word (an outcome: the descriptor's aux) */
	int32_t status;       /**< an outcome: 0 or a negative errno (trd_cause_errno(cause)) */
	uint32_t rsvd0;
	uint64_t old; /**< with TRD_RSLOT_OLD: an atomic's old value */
	uint8_t rsvd1[24];
};
#define TRD_RSLOT_PAD     0x1
#define TRD_RSLOT_OUTCOME 0x2
#define TRD_RSLOT_OLD     0x4
/** A put into one of the process's doorbell regions (TRD_VNI_MR_DOORBELL): len 0, user the
 * offset written, msg_id its length, old the region's key, src this node. */
#define TRD_RSLOT_DOORBELL 0x8
_Static_assert(sizeof(struct trd_rslot) == 64, "a reception slot is one cache line");

/* ------------------------------------------------------------------------------------------ */
/** @name Links */

/** What a link is. */
enum trd_link_kind {
	TRD_LINK_ETHDEV = 0, /**< a DPDK ethdev port (any PMD) */
	TRD_LINK_RING,       /**< an in-process pair of rte_rings carrying mbufs */
};

/** Options for trd_link_ethdev(). Zero means the default. */
struct trd_link_conf {
	uint16_t queue;           /**< RX/TX queue id (default 0) */
	uint16_t nb_rxd;          /**< RX descriptors (default 1024) */
	uint16_t nb_txd;          /**< TX descriptors (default 1024) */
	uint16_t mtu;             /**< MTU to set (default: keep the port's, 1500 for ring links) */
	bool no_setup;            /**< the port is already configured and started by the caller */
	struct rte_mempool *pool; /**< RX pool (default: the engine's pool) */
};

/**
 * Make a link on ethdev @p port_id. Unless conf->no_setup, the port is configured with one
 * RX/TX queue pair, set promiscuous and started.
 * @return the link, or NULL with rte_errno = ENODEV (no such port), EINVAL, or the ethdev error.
 */
struct trd_link *trd_link_ethdev(uint16_t port_id, const struct trd_link_conf *conf);

/**
 * The destination MAC of the frames @p link sends to its peer: the peer port's, or over a
 * routed network the next router's (by default broadcast for an ethdev link, the other end
 * for ring pairs). Before the link is added to a node.
 * @return 0, -EINVAL, or -EBUSY (the link is a node's already).
 */
int trd_link_set_peer_mac(struct trd_link *link, const uint8_t mac[6]);

/**
 * IPv4/UDP encapsulation of a link's frames, for links that cross routed networks
 * (docs/wire-format.md, "Over IP networks"): each frame leaves as Ethernet, IPv4, UDP to
 * @c port, then the torus header and payload; the UDP source port is a hash of the frame's
 * source and destination coordinates, so networks and NICs spread node pairs over paths and
 * queues. Addresses are in host byte order (RTE_IPV4(10, 0, 0, 1)).
 */
struct trd_udp_encap {
	uint32_t src_ip; /**< this end's IPv4 address */
	uint32_t dst_ip; /**< the other end's; received datagrams must come from it */
	uint16_t port;   /**< UDP destination port (0: TRD_UDP_PORT, 34997) */
	uint8_t ttl;     /**< IPv4 TTL (0: 64) */
	uint8_t dscp;    /**< DSCP of every datagram, 0..63 */
};

/**
 * Carry @p link's frames over IPv4/UDP (@p e), or again as plain torus frames (@p e NULL).
 * The link's MTU for torus frames shrinks by the 28 bytes of IPv4 and UDP headers. Received
 * datagrams are checked (trd_wire_udp_check(), and the source address) and unwrapped; a bad
 * one is dropped and counted (trd_link_stats::encap_drops); plain torus frames are still
 * accepted. Only on a point-to-point link (one with a direction), before traffic and while no
 * lcore serves its node.
 * @return 0; -EINVAL (NULL link, a zero address, dscp above 63); -ENOTSUP (a switched link or
 * a node's loopback); -EMSGSIZE (the MTU leaves no room); -EBUSY (its node is served);
 * -ENOMEM.
 */
int trd_link_udp_encap(struct trd_link *link, const struct trd_udp_encap *e);

/**
 * A node's switched link over IPv4/UDP (docs/wire-format.md, "Over IP networks"): the peers are
 * named by address (trd_node_set_peer_ip()), possibly behind routers. Addresses are in host
 * byte order.
 */
struct trd_ip_conf {
	uint32_t ip;      /**< this node's address on the port */
	uint8_t prefix;   /**< its subnet's prefix length, 1..32 (0: 32) */
	uint32_t gateway; /**< router for peers outside the subnet (0: none, ask every peer) */
	uint16_t port;    /**< UDP port this node receives on (0: TRD_UDP_PORT, 34997) */
	uint8_t ttl;      /**< IPv4 TTL (0: 64) */
	uint8_t dscp;     /**< DSCP of every datagram, 0..63 */
};

/**
 * Carry the frames of @p node's switched link to the peers that have an address
 * (trd_node_set_peer_ip()) over IPv4/UDP from @p c->ip. The next hop's MAC (the peer's inside
 * the subnet, else the gateway's) comes from ARP that the link asks itself: a request at once,
 * then again every 200 ms, 5 tries, and every 2 s after that for as long as the link runs; a
 * known next hop is asked again every 60 s, and asked afresh after 3 of those go unanswered;
 * the link also answers ARP requests for @p c->ip (the kernel does not see a DPDK port). Frames
 * to a next hop not resolved yet are held while it is first asked (TRD_ARP_HOLD per next hop,
 * TRD_ARP_HOLD_LINK in all; more are dropped and counted, trd_link_stats::ip_held_drops) and
 * sent once it answers, while frames to known next hops keep going; once it is given up they
 * are dropped and counted (trd_link_stats::ip_unresolved) until it answers. Received datagrams to
 * @p c->ip and the port must be well formed and from the address of the node their torus header
 * names, or are dropped and counted (encap_drops); other IPv4 traffic is another host's, skipped
 * uncounted; malformed ARP frames are counted in arp_bad. The link's MTU for torus frames shrinks
 * by 28 bytes. Before an lcore serves the node; again to change it.
 * @return 0; -EINVAL (NULL node or conf, a zero or non-host address, prefix above 32, dscp
 * above 63, a gateway equal to ip); -ENOTSUP (no switched link, or one encapsulated point to
 * point); -EADDRNOTAVAIL (the port's MAC is zero or multicast: ARP cannot name it);
 * -EMSGSIZE (the MTU leaves no room); -EBUSY (served); -ENOMEM.
 */
int trd_node_set_ip(struct trd_node *node, const struct trd_ip_conf *c);

/**
 * Reach @p peer over IPv4/UDP at @p ip, UDP port @p port (0: TRD_UDP_PORT), through the node's
 * switched link set up by trd_node_set_ip(). A peer without an address gets plain torus
 * frames (trd_node_set_peer_mac()). Before an lcore serves the node.
 * @return 0; -EINVAL (NULL node, @p peer outside the torus or the node itself, a zero or
 * non-host address); -ENOTSUP (no trd_node_set_ip() yet); -EBUSY; -ENOSPC (more next hops
 * than the link keeps, TRD_ARP_ENTRIES).
 */
int trd_node_set_peer_ip(struct trd_node *node, struct trd_coord peer, uint32_t ip, uint16_t port);

/** Next hops (peers on the subnet and the gateway) one IP link resolves by ARP. */
#define TRD_ARP_ENTRIES 256
/** Frames an IP link holds for one next hop while ARP first asks for it. */
#define TRD_ARP_HOLD 64
/** Frames an IP link holds for all its next hops being asked. */
#define TRD_ARP_HOLD_LINK 256

/**
 * Make two links joined by a pair of rte_rings (a cable inside the process), of @p size
 * mbufs each way (0: 1024), with MTU @p mtu (0: 1500). Not an ethdev: no port limit.
 * @return 0, or -EINVAL / -ENOMEM.
 */
int trd_link_ring_pair(const char *name, unsigned int size, uint16_t mtu, struct trd_link **a,
		       struct trd_link **b);

/**
 * Make two net_ring ethdev ports (rte_eth_from_rings) joined back to back and a link on each.
 * @return 0, or a negative errno (-ENOSPC when DPDK's port table is full).
 */
int trd_link_ethdev_ring_pair(const char *name, uint16_t mtu, struct trd_link **a,
			      struct trd_link **b);

/** Free a link that was never added to a node (a node frees its own links). */
void trd_link_free(struct trd_link *link);
/** The link's kind. */
enum trd_link_kind trd_link_kind_of(const struct trd_link *link);
/** The link's ethdev port id, or -ENOTSUP for a ring link. */
int trd_link_port(const struct trd_link *link);
/** The link's RX/TX queue id on its port (trd_link_conf::queue), or -ENOTSUP for a ring link. */
int trd_link_queue_id(const struct trd_link *link);
/** Largest payload in one packet on this link: the MTU minus the torus header, and minus the
 * session token's 8 bytes once the link is a reliable node's (docs/wire-format.md). */
unsigned int trd_link_max_payload(const struct trd_link *link);

/* ------------------------------------------------------------------------------------------ */
/** @name Nodes */

/** Node configuration. Zero means the default. */
struct trd_node_conf {
	const char *name;           /**< for logs and telemetry (default "node<rank>") */
	struct trd_torus torus;     /**< the torus this node is part of (default 1x1x1) */
	struct trd_coord coord;     /**< this node's coordinate */
	unsigned int n_inj_fifos;   /**< injection FIFOs for applications (default 4, max 64) */
	unsigned int inj_fifo_size; /**< slots per injection FIFO (default 1024) */
	unsigned int n_rec_fifos;   /**< reception FIFOs (default 4, max 64) */
	unsigned int rec_fifo_size; /**< messages per reception FIFO (default 1024) */
	unsigned int n_counters;    /**< counters, ids 1..n-1 (default 1024, max 65536) */
	unsigned int n_regions;     /**< memory regions (default 256, max 65535) */
	unsigned int n_reasm; /**< multi-packet FIFO messages in reassembly (default 256, min 8) */
	uint32_t max_msg;     /**< largest memory-FIFO message accepted from the wire, bytes
			       *   (default 256 MiB): bounds what a peer can make us hold */
	unsigned int inline_max; /**< messages up to this are copied into the FIFO at post time;
				  *   longer ones are sent zero-copy (default 256, max 960) */
	unsigned int burst;      /**< packets per FIFO per poll round (default 32) */
	unsigned int coalesce;   /**< most messages one frame carries (default 32, max 64; 1:
				  *   never coalesce): small puts and memory-FIFO messages already
				  *   queued in one FIFO for the same node share a BUNDLE frame
				  *   (docs/wire-format.md); the engine never waits for more */
	unsigned int n_eqs;      /**< event queues made at creation: min(CPUs, this) (default 4) */
	/* Reliability (docs/reliability.md): on unless @c unreliable. */
	bool unreliable; /**< no sequence numbers, acks or retransmission; takes
			  *   unsequenced frames: trusts its segment (docs/reliability.md) */
	/** packets in flight per peer (default 256, power of 2, max 4096) */
	unsigned int rel_window;
	unsigned int rto_us; /**< least retransmission timeout (default 2000 us); above it
			      *   srtt + 4 rttvar, doubling while nothing is acked */
	/** an ack waits at most this for a packet to ride on (default 20) */
	unsigned int ack_delay_us;
	/** a peer silent this long while owed an ack is down (default 1000) */
	unsigned int dead_ms;
	bool payload_crc;         /**< append and check a CRC32C of every payload */
	struct rte_mempool *pool; /**< packet pool (default: a pool shared by the process) */
	/** lanes the node is split into, each polled by one thread (default 1; 2 at most, more
	 *  is ENOTSUP): injection FIFO i sends on lane i % shares, every lane has its own
	 *  sessions and its own links (trd_node_add_share_link()); both ends must agree
	 *  (docs/architecture.md "Threading") */
	unsigned int shares;
};

/**
 * Create a node.
 * @return the node, or NULL with rte_errno = EINVAL (bad configuration), ENOMEM, EEXIST, or
 * ENOSPC (the process has 1024 nodes already).
 */
struct trd_node *trd_node_create(const struct trd_node_conf *conf);

/**
 * Attach @p link to @p node in direction @p dir (TRD_DIR_NONE: a switched link that reaches
 * every node without a direction link, with destination MACs set by trd_node_set_peer_mac()).
 * The node owns the link from now on. Not while the node is being polled.
 * @return 0; -EINVAL; -EEXIST if the direction already has a link; -EBUSY if served.
 */
int trd_node_add_link(struct trd_node *node, struct trd_link *link, enum trd_dir dir);

/**
 * Attach @p link to share @p share of @p node, like trd_node_add_link() (share 0 is the same
 * call). Share k's links carry lane k: queue pair k of a port, or a link of its own.
 * @return as trd_node_add_link(), or -EINVAL if the node has no such share.
 */
int trd_node_add_share_link(struct trd_node *node, unsigned int share, struct trd_link *link,
			    enum trd_dir dir);

/** Lanes of @p node (trd_node_conf::shares): 1 when it is not split. */
unsigned int trd_node_shares(const struct trd_node *node);

/**
 * One round of engine work on share @p share of @p node only (trd_node_poll() runs every
 * share). Each share may be polled by its own thread.
 * @return as trd_node_poll(), or -EINVAL if the node has no such share.
 */
int trd_node_poll_share(struct trd_node *node, unsigned int share);

/** Set the MAC address used to reach @p peer over switched links. @return 0 or -EINVAL. */
int trd_node_set_peer_mac(struct trd_node *node, struct trd_coord peer, const uint8_t mac[6]);

/**
 * One bounded round of engine work: transmit what is pending, packetize a burst from each
 * injection FIFO round-robin, receive a burst from each link and demultiplex it.
 * @return the number of packets moved (0 when idle), or -EBUSY if an lcore serves the node.
 */
int trd_node_poll(struct trd_node *node);

/**
 * Serve @p n nodes on worker lcore @p lcore (rte_eal_remote_launch) until trd_lcore_stop().
 * One lcore may serve many nodes; a node is served by one lcore at most.
 * @return 0; -EINVAL (a bad lcore, the main lcore, @p nodes NULL, @p n 0 or above
 *         TRD_LCORE_MAX_NODES, or a NULL entry); -EBUSY if the lcore or a node is already
 *         served, or a node is listed twice. On an error no node is left served.
 */
int trd_lcore_launch(unsigned int lcore, struct trd_node *const nodes[], unsigned int n);
/**
 * Serve share @p shares[i] of @p nodes[i], for each i < @p n, on worker lcore @p lcore: one
 * lcore may serve share 0 of two nodes and another share 1 of both. trd_lcore_launch() serves
 * every share of its nodes.
 * @return as trd_lcore_launch(), and -EINVAL for a share the node does not have.
 */
int trd_lcore_launch_shares(unsigned int lcore, struct trd_node *const nodes[],
			    const unsigned int shares[], unsigned int n);
/** Serve one node on a dedicated lcore. */
int trd_node_launch(struct trd_node *node, unsigned int lcore);
/** Stop the loop on @p lcore and wait for it. @return 0 or -EINVAL. */
int trd_lcore_stop(unsigned int lcore);

/**
 * Make progress for @p node from a waiting application thread: polls the node (or the net it
 * belongs to) unless an lcore serves it. Used by every trd_*_wait() call.
 */
void trd_node_progress(struct trd_node *node);

/** Destroy a node: stops nothing, so stop its lcore first. NULL is a no-op. */
void trd_node_free(struct trd_node *node);

/** This node's coordinate. */
struct trd_coord trd_node_coord(const struct trd_node *node);
/** This node's torus. */
const struct trd_torus *trd_node_torus(const struct trd_node *node);
/** This node's name. */
const char *trd_node_name(const struct trd_node *node);
/** Number of links attached (excluding the internal loopback). */
unsigned int trd_node_n_links(const struct trd_node *node);
/** Link @p i of the node, or NULL. */
struct trd_link *trd_node_link(const struct trd_node *node, unsigned int i);
/** Link @p i of share @p share of the node (trd_node_add_share_link()), or NULL. */
struct trd_link *trd_node_share_link(const struct trd_node *node, unsigned int share,
				     unsigned int i);
/** Number of nodes alive in this process (created and not freed). */
unsigned int trd_node_count(void);

/** Counters of one link. */
struct trd_link_stats {
	uint64_t tx_pkts; /**< packets taken by the port */
	uint64_t tx_bytes;
	uint64_t rx_pkts; /**< packets received */
	uint64_t rx_bytes;
	uint64_t fwd_pkts; /**< packets this node forwarded out of this link */
	uint32_t pending;  /**< packets waiting in the link's transmit buffer */
	uint64_t imp_lost; /**< impairment: frames dropped, reordered, duplicated, corrupted */
	uint64_t imp_reordered;
	uint64_t imp_dup;
	uint64_t imp_corrupt;
	uint64_t encap_drops; /**< UDP encapsulation: received datagrams refused */
	int dir;              /**< enum trd_dir, or TRD_DIR_NONE for a switched link */
	/* A switched link over IPv4 (trd_node_set_ip()); all 0 on other links. */
	bool ip;                /**< the link is one */
	uint64_t arp_requests;  /**< ARP requests sent for next hops */
	uint64_t arp_replies;   /**< ARP replies sent for the link's address */
	uint64_t arp_resolved;  /**< next hops resolved (or whose MAC changed) */
	uint64_t arp_bad;       /**< ARP frames received malformed, dropped */
	uint64_t ip_unresolved; /**< frames dropped: their next hop did not answer ARP */
	uint32_t arp_pending;   /**< next hops wanted and not resolved now */
	uint32_t ip_held;       /**< frames held now while ARP asks for their next hop */
	uint64_t ip_held_drops; /**< frames dropped: their next hop's hold was full */
	uint64_t port_faults;   /**< net_memif bursts abandoned because the peer went away and
				 * the driver unmapped its memory mid-burst (the packets of
				 * that burst are lost; the engine lives on) */
};

/** Read a link's counters. @return 0 or -EINVAL. */
int trd_link_stats_get(const struct trd_link *link, struct trd_link_stats *st);
/** The link's name (ethdev name, or "<ring>.a"/".b"). */
const char *trd_link_name(const struct trd_link *link);

/** 1 if @p peer is reachable (not declared down), 0 if down, -EINVAL. */
int trd_node_peer_up(const struct trd_node *node, struct trd_coord peer);

/** Hops from this node to @p dst along its routes, or -EHOSTUNREACH. */
int trd_node_route_hops(const struct trd_node *node, struct trd_coord dst);

/** Node-level statistics: X(ENUM, name). */
#define TRD_NODE_STATS(X)                                                                          \
	X(TX_PKTS, "tx_pkts")                                                                      \
	X(TX_BYTES, "tx_bytes")                                                                    \
	X(RX_PKTS, "rx_pkts")                                                                      \
	X(RX_BYTES, "rx_bytes")                                                                    \
	X(TX_PUT, "tx_put")                                                                        \
	X(TX_FIFO, "tx_fifo")                                                                      \
	X(TX_RGET, "tx_rget")                                                                      \
	X(RX_PUT, "rx_put")                                                                        \
	X(RX_FIFO, "rx_fifo")                                                                      \
	X(RX_RGET, "rx_rget")                                                                      \
	X(FWD_PKTS, "fwd_pkts")                                                                    \
	X(DESCS, "descs")                                                                          \
	X(DESC_ERRORS, "desc_errors")                                                              \
	X(MSGS_DELIVERED, "msgs_delivered")                                                        \
	X(PUT_BYTES, "put_bytes")                                                                  \
	X(TX_RETRIES, "tx_retries")                                                                \
	X(NO_MBUF, "no_mbuf")                                                                      \
	X(ZCOPY_PKTS, "zcopy_pkts")                                                                \
	X(TX_CTL, "tx_ctl")                                                                        \
	X(TX_ACKS, "tx_acks")                                                                      \
	X(RX_ACKS, "rx_acks")                                                                      \
	X(RETRANS, "retransmits")                                                                  \
	X(RTO_EVENTS, "rto_events")                                                                \
	X(REORDERED, "reordered")                                                                  \
	X(PEERS_DOWN, "peers_down")                                                                \
	X(PEERS_UP, "peers_up")                                                                    \
	X(CPL_FAILED, "cpl_failed")                                                                \
	X(RX_CTL, "rx_ctl")                                                                        \
	X(ATOMICS, "atomics")                                                                      \
	X(TX_BUNDLES, "tx_bundles")                                                                \
	X(RX_BUNDLES, "rx_bundles")                                                                \
	X(DROPS, "drops")                                                                          \
	X(FWD_COPY_BYTES, "fwd_copy_bytes") /* payload bytes copied to forward a frame */          \
	X(FWD_SHARED, "fwd_shared") /* frames forwarded as a new header + shared payload */        \
	X(PAY_BUFS, "pay_bufs")     /* shared payloads made (trd_payload_new, _alloc) */           \
	X(PAY_COPY_BYTES, "pay_copy_bytes") /* bytes copied into shared payloads */                \
	X(PAY_REFS, "pay_refs")             /* packets that referenced a shared payload */         \
	X(PAY_LINK_COPY_BYTES, "pay_link_copy_bytes") /* copied: the link cannot send chains */    \
	X(RX_FIFO_COPY_BYTES, "rx_fifo_copy_bytes")   /* FIFO message bytes copied out of packets  \
						       * (reassembled, or not contiguous) */       \
	X(GUEST_DESCS, "guest_descs") /* descriptors of attached processes' FIFOs taken and cut    \
				       * into packets in place (no second post) */                 \
	X(GUEST_COPY_BYTES, "guest_copy_bytes") /* their inline bytes copied out of the ring       \
						 * first (data straddling its end) */

/** Node statistics ids. */
enum trd_node_stat {
#define TRD_STAT_ENUM_(e, n) TRD_STAT_##e,
	TRD_NODE_STATS(TRD_STAT_ENUM_)
#undef TRD_STAT_ENUM_
	/* one past the last */
	TRD_STAT_MAX
};

/** A snapshot of a node's statistics. */
struct trd_node_stats {
	uint64_t stat[TRD_STAT_MAX]; /**< by enum trd_node_stat */
	uint64_t drop[TRD_DROP_MAX]; /**< by enum trd_drop */
};

/** Copy the node's statistics. @return 0 or -EINVAL. */
int trd_node_stats_get(const struct trd_node *node, struct trd_node_stats *out);
/** The statistics of share @p share alone (trd_node_stats_get() sums the shares).
 * @return 0 or -EINVAL. */
int trd_node_share_stats_get(const struct trd_node *node, unsigned int share,
			     struct trd_node_stats *out);
/** Name of a node statistic, or NULL. */
const char *trd_stat_name(unsigned int stat);

/* ------------------------------------------------------------------------------------------ */
/** @name Injection FIFOs */

/** Injection FIFO @p idx (0 .. n_inj_fifos-1) of @p node, or NULL. */
struct trd_inj_fifo *trd_inj_fifo(struct trd_node *node, unsigned int idx);

/**
 * Post one descriptor. FIFO messages and puts up to inline_max bytes are copied now (the
 * buffer is free on return); longer ones are read from @p d->src until the injection
 * counter reaches zero, so the buffer must stay untouched until then (with TRD_DF_COPY the
 * engine copies them as it builds the packets: zero then means every packet was handed to
 * a port, and nothing reads the buffer any more).
 * @return 0; -ENOBUFS if the FIFO is full (nothing posted, retry later); -EINVAL for a bad
 * descriptor; -EHOSTUNREACH if the destination has no route or is declared down; -EMSGSIZE
 * if a remote get does not fit in one packet of the route's link.
 */
int trd_inject(struct trd_inj_fifo *fifo, const struct trd_desc *d);

/**
 * Post @p n descriptors, all or nothing, consecutive in the FIFO (used to post a data
 * descriptor and its completion descriptor together).
 * @return 0, or the errors of trd_inject() (nothing posted), or -E2BIG if they and their
 * inline data need more than 512 slots.
 */
int trd_inject_bulk(struct trd_inj_fifo *fifo, const struct trd_desc *d, unsigned int n);

/**
 * A shared payload (multicast): bytes copied once into one engine buffer, which any number of
 * packets then reference (each packet is a small header buffer chained to a reference of it),
 * so sending them to N destinations neither copies nor allocates them N times
 * (docs/vni.md, "Multicast"). Reference counted: each posted descriptor holds one reference
 * until its packet is freed (after the last retransmission it may need).
 */
struct trd_payload;

/**
 * Copy @p len bytes (at least 1, at most one mbuf's data room) into a new shared payload of
 * @p node, with one reference for the caller. Counted in the node's pay_bufs and
 * pay_copy_bytes. Call it from the thread that polls the node.
 * @return 0, -EINVAL, -EMSGSIZE (too long), -ENOBUFS (no mbuf).
 */
int trd_payload_new(struct trd_node *node, const void *data, uint32_t len,
		    struct trd_payload **out);
/**
 * A new shared payload of @p len bytes (at least 1, at most one mbuf's data room) that the
 * caller fills: @p data is where its bytes go, written before the payload is first injected
 * and never after (a reader of another process's memory fills it in place: one copy). One
 * reference for the caller. Counted in the node's pay_bufs (the caller counts its copy).
 * @return 0, -EINVAL, -EMSGSIZE (too long), -ENOBUFS (no mbuf).
 */
int trd_payload_alloc(struct trd_node *node, uint32_t len, struct trd_payload **out, void **data);
/** The length of @p p. */
uint32_t trd_payload_len(const struct trd_payload *p);
/** Drop the caller's reference to @p p (NULL: nothing); the last one frees it. */
void trd_payload_free(struct trd_payload *p);
/**
 * Post @p d (a put or a memory-FIFO message) whose packet carries @p d->len bytes at
 * @p d->src (a prefix copied at post time, at most inline_max; 0 for none) followed by the
 * bytes of @p p, without copying them: the message is d->len + trd_payload_len(p) bytes and
 * must fit in one packet. The descriptor takes its own reference to @p p. On a link that cannot
 * send mbuf chains the payload is copied into the packet (counted in pay_link_copy_bytes).
 * @return as trd_inject(); -EINVAL for a bad descriptor or payload.
 */
int trd_inject_payload(struct trd_inj_fifo *fifo, const struct trd_desc *d, struct trd_payload *p);

/** Free slots in the FIFO (a descriptor takes 1 + inline slots). */
unsigned int trd_inj_fifo_free_count(const struct trd_inj_fifo *fifo);

/** Counters of one injection FIFO. */
struct trd_inj_fifo_stats {
	uint64_t descs;     /**< descriptors fully packetized */
	uint64_t pkts;      /**< packets built */
	uint64_t pkts_sent; /**< packets taken by a port (handed over) */
	uint32_t used;      /**< slots in use now */
	uint32_t hwm;       /**< highest occupancy the engine saw */
};

/** Read a FIFO's counters. @return 0 or -EINVAL. */
int trd_inj_fifo_stats_get(const struct trd_inj_fifo *fifo, struct trd_inj_fifo_stats *st);

/* ------------------------------------------------------------------------------------------ */
/** @name Reception FIFOs and messages */

/**
 * A received memory-FIFO message. Free it with trd_msg_free() or trd_msg_free_bulk(), in any
 * order, from any thread. The messages of one bundle (small messages that shared a frame) are
 * read in place in that frame, handed out one by one and held together: the frame goes back
 * to the engine's pool when the last of them is freed, so holding one message holds its
 * frame.
 */
struct trd_msg {
	struct trd_coord src; /**< sender */
	uint8_t fifo;         /**< reception FIFO it arrived on */
	uint32_t len;         /**< bytes at data */
	uint32_t msg_id;      /**< sender's message id */
	uint64_t user;        /**< the sender's user word */
	int32_t status;       /**< tracked-operation outcome: 0, or a negative errno */
	uint8_t cause;        /**< with status: the target's enum trd_drop cause */
	void *data;           /**< the message, contiguous */
};

/** Reception FIFO @p idx of @p node, or NULL. */
struct trd_rec_fifo *trd_rec_fifo(struct trd_node *node, unsigned int idx);
/**
 * The id a sender names to reach @p rf (trd_desc_fifo()'s @c fifo): @p idx itself on a node of
 * this process, the node's id of the process's FIFO (TRD_GUEST_RFIFO_FIRST ..) on a node handle
 * of a process attached to toroid-node (trd_node_attach()). 0 for NULL.
 */
uint8_t trd_rec_fifo_id(const struct trd_rec_fifo *rf);
/**
 * Take up to @p n messages, in the order they arrived: a bundle's messages come one after the
 * other. @return the count (0 if none), or -EINVAL.
 */
int trd_rec_fifo_poll(struct trd_rec_fifo *rf, struct trd_msg **msgs, unsigned int n);
/** Wait up to @p timeout_us for one message. @return 0, -ETIMEDOUT or -EINVAL. */
int trd_rec_fifo_wait(struct trd_rec_fifo *rf, struct trd_msg **msg, uint64_t timeout_us);
/** Release a message. NULL is a no-op. */
void trd_msg_free(struct trd_msg *msg);
/**
 * Release @p n messages (NULL entries are skipped), as trd_msg_free() on each; the messages
 * of one bundle that follow each other, as trd_rec_fifo_poll() returns them, are released with
 * one count rather than one per message.
 */
void trd_msg_free_bulk(struct trd_msg **msgs, unsigned int n);

/* ------------------------------------------------------------------------------------------ */
/** @name Event queues */

/** What an event reports. */
enum trd_event_type {
	TRD_EV_FIFO = 1,     /**< a message was stored in a reception FIFO bound to the queue */
	TRD_EV_DOORBELL = 2, /**< the engine wrote into a doorbell region bound to the queue */
};

/** One event (32 bytes). */
struct trd_event {
	uint8_t type; /**< enum trd_event_type */
	uint8_t fifo; /**< TRD_EV_FIFO: the reception FIFO */
	uint16_t rsvd;
	uint32_t len;   /**< bytes of the message or of the write */
	uint64_t key;   /**< TRD_EV_DOORBELL: the region's key */
	uint64_t value; /**< FIFO: the message's user word; DOORBELL: the offset written */
	uint64_t rsvd2;
};

struct trd_eq;

/**
 * Create an event queue of @p size events (0: 4096) on @p node, meant for CPU @p core (-1 for
 * any): trd_eq_core() reports it, and trd_eq_bind(eq, trd_eq_core(eq)) puts the owner there.
 * The queue has an eventfd and starts disarmed. Its owner is the first thread that calls
 * trd_eq_bind() (or trd_eq_poll()/trd_eq_wait()). On a node handle of an attached process
 * (trd_node_attach()) the queue is the library's, fed by the reception FIFOs bound to it: one
 * event per message, made by whichever passes it first, the queue's poll or the FIFO's; its
 * descriptor an epoll set of the FIFOs' eventfds (docs/vni.md "Event queues and doorbells on
 * a handle").
 * @return the queue, or NULL with rte_errno = EINVAL, ENOSPC (16 queues per node), ENOMEM (or
 *         on a handle the errno of epoll_create1(), e.g. EMFILE).
 */
struct trd_eq *trd_eq_create(struct trd_node *node, int core, unsigned int size);
/**
 * Make the calling thread the queue's owner, on CPU @p core: the thread is pinned to that CPU
 * alone (pthread_setaffinity_np), so the queue's waiter runs and is woken there, and the queue's
 * CPU becomes @p core. Calling it again with another CPU moves the owner (re-binding at run
 * time); another thread calling it takes the queue over. @p core -1 makes the caller the owner
 * and leaves its CPUs and the queue's CPU as they are. An EAL lcore thread keeps the CPUs EAL
 * gave it: it may bind only to the single CPU it already runs on.
 * On an error nothing changes (owner, CPU, affinity).
 * @return 0; -EINVAL (NULL queue, @p core < -1, or no such CPU); -EBUSY (the caller is an EAL
 *         lcore on other CPUs); another negative errno from pthread_setaffinity_np (e.g. a CPU
 *         outside the process's cpuset).
 */
int trd_eq_bind(struct trd_eq *eq, int core);
/** The queue's CPU (from trd_eq_create() or the last trd_eq_bind() with a CPU), -1 for any,
 * or -EINVAL for a NULL queue. */
int trd_eq_core(const struct trd_eq *eq);
/** The queue's eventfd, for epoll/poll: readable after a signal. On a node handle an epoll set
 * of its FIFOs' eventfds, readable after a signal until trd_eq_poll() takes it. */
int trd_eq_fd(const struct trd_eq *eq);
/**
 * Arm the queue: the next event writes the eventfd once and disarms it. If events are
 * already pending the queue is not armed and -EBUSY is returned: drain them first (no
 * wake-up is ever lost). Owner only.
 * @return 0, -EBUSY (events pending), -EPERM (not the owner), -EINVAL.
 */
int trd_eq_arm(struct trd_eq *eq);
/** Disarm: events are queued without any signal. @return 0 or -EINVAL. */
int trd_eq_disarm(struct trd_eq *eq);
/** Take up to @p n events. Owner only. @return the count, -EPERM, -EINVAL, or -ECONNRESET (a
 * handle whose engine is gone, no event left). */
int trd_eq_poll(struct trd_eq *eq, struct trd_event *ev, unsigned int n);
/**
 * Sleep on the eventfd until an event is pending (arming as needed), then take up to @p n.
 * Owner only. @return the count (>= 1), -ETIMEDOUT, -EPERM, -EINVAL, -ECONNRESET.
 */
int trd_eq_wait(struct trd_eq *eq, struct trd_event *ev, unsigned int n, uint64_t timeout_us);
/** Signals written to the eventfd so far (for tests and statistics). */
uint64_t trd_eq_signals(const struct trd_eq *eq);
/** Events dropped because the queue was full. */
uint64_t trd_eq_overflows(const struct trd_eq *eq);
/** Event queue @p idx of @p node (the defaults made at node creation), or NULL. */
struct trd_eq *trd_node_eq(struct trd_node *node, unsigned int idx);
/** Attach a reception FIFO to an event queue (NULL detaches). On a node handle the FIFO's
 * events until then stay in its old queue, and a FIFO bound to an armed queue is armed.
 * @return 0, -EINVAL, or on a handle the negative errno of epoll_ctl() (nothing changed). */
int trd_rec_fifo_set_eq(struct trd_rec_fifo *rf, struct trd_eq *eq);

/* ------------------------------------------------------------------------------------------ */
/** @name Completion notification (reflection) */

/** Where a completion lands at the origin. */
enum trd_cpl_kind {
	TRD_CPL_FIFO = 1,     /**< a 0-byte message in a reception FIFO, user word = cookie */
	TRD_CPL_DOORBELL = 2, /**< the 8-byte cookie written into a doorbell region */
};

/** What a completion means. */
enum trd_cpl_mode {
	TRD_CPL_LOCAL = 0,    /**< a neighbour reflects: the data has left the origin and its
			       *   source buffer may be reused */
	TRD_CPL_DELIVERY = 1, /**< the target reflects: the data is in the target's memory */
};

/** A completion request for trd_inject_reflect(). */
struct trd_cpl_spec {
	enum trd_cpl_kind kind;
	enum trd_cpl_mode mode;
	uint8_t fifo;                      /**< TRD_CPL_FIFO: the origin's reception FIFO */
	const struct trd_mr *doorbell;     /**< TRD_CPL_DOORBELL: the origin's doorbell region */
	uint64_t offset;                   /**< TRD_CPL_DOORBELL: offset of the 8-byte word */
	uint64_t cookie;                   /**< the value delivered */
	const struct trd_coord *reflector; /**< TRD_CPL_LOCAL: override the node's reflector */
};

/**
 * Post a data descriptor (a put or a memory-FIFO send) followed, in the same FIFO, by its
 * reflection descriptor: a remote get to the reflection node (a neighbour in local mode, the
 * target in delivery mode) carrying the completion descriptor back to this node. The
 * reflection runs only after the data's last packet was handed to the port. In local mode
 * the data is sent from a copy in engine buffers (TRD_DF_COPY is set on it), so the source
 * buffer may be reused as soon as the completion arrives; in delivery mode it may be sent
 * zero-copy and stays in use until the data descriptor's injection counter is zero.
 * @return 0; -ENOBUFS (nothing posted); -ENOSPC (too many completions outstanding);
 * -EINVAL (bad spec, a reflector that is not a neighbour, a doorbell word outside its region);
 * -EHOSTUNREACH (no route to the target or the reflector, or it is declared down).
 */
int trd_inject_reflect(struct trd_inj_fifo *fifo, const struct trd_desc *data,
		       const struct trd_cpl_spec *spec);

/** Set the node's default reflector (a neighbour). @return 0 or -EINVAL. */
int trd_node_set_reflector(struct trd_node *node, struct trd_coord reflector);
/**
 * The node's reflector: the one set, else the neighbour on the first usable link in
 * direction order. @return 0, or -ENOENT if the node has no neighbour (the target reflects).
 */
int trd_node_reflector(const struct trd_node *node, struct trd_coord *out);
/** Completions still outstanding at this node. */
unsigned int trd_node_cpl_pending(const struct trd_node *node);

/* ------------------------------------------------------------------------------------------ */
/** @name Tracked operations (remote acknowledgement, errors as completions) */

/**
 * Open a tracked operation. Put the returned @p id in a descriptor's @c aux with
 * TRD_DF_ACKREQ: the target engine answers the message's last packet with a DONE carrying its
 * verdict (data written/delivered, or why not), a refused remote get or a failed remote
 * descriptor likewise, and an atomic with its old value (written to @p result, may be NULL
 * otherwise). The outcome arrives as a 0-byte message in reception FIFO @p rfifo of this node:
 * user = @p cookie, status = 0 or a negative errno (-ENOKEY bad key, -ERANGE out of bounds,
 * -EACCES no access, -ENOENT no such FIFO or counter, -ENOBUFS FIFO full, -EINVAL bad
 * descriptor or alignment, -EPERM third-party destination, -ENOMEM no buffer, -EIO other),
 * cause = the target's drop cause. Each id completes once. On a node handle of an attached
 * process (trd_node_attach()) the same, in its reception FIFO @p rfifo, from a table of 256 ids
 * of the process (docs/vni.md "Tracked operations").
 * @return 0, -EINVAL, -ENOSPC (too many outstanding).
 */
int trd_track_open(struct trd_node *node, uint8_t rfifo, uint64_t cookie, uint64_t *result,
		   uint32_t *id);
/** Abandon a tracked operation (e.g. completed by other means); a late DONE is dropped. */
int trd_track_close(struct trd_node *node, uint32_t id);
/** The negative errno that a target's drop @p cause maps to in a tracked completion. */
int trd_cause_errno(unsigned int cause);

/* ------------------------------------------------------------------------------------------ */
/** @name Doorbells */

/**
 * Register a doorbell region: page-aligned @p addr, @p len a multiple of the page size, remote
 * write access, every engine write into it signalling @p eq (may be NULL). On a node handle:
 * a part of the process's region; the engine tells each put into it in the first reception
 * FIFO bound to @p eq (EINVAL if none; keep it bound), which the queue turns into its event.
 * @return the region, or NULL with rte_errno = EINVAL or ENOSPC (on a handle also EFAULT: not
 *         in the region, ECONNRESET: the engine is gone).
 */
struct trd_mr *trd_doorbell_register(struct trd_node *node, void *addr, size_t len,
				     struct trd_eq *eq);

/** How trd_doorbell_wait() waits. */
enum trd_wait_how {
	TRD_WAIT_SPIN = 0, /**< poll the word (and make progress if no lcore serves the node) */
	TRD_WAIT_MONITOR =
		1,       /**< rte_power_monitor (UMWAIT) where the CPU has it, else a pause loop */
	TRD_WAIT_EQ = 2, /**< sleep on the region's event queue (owner only) */
};

/** 1 if rte_power_monitor works on this CPU, else 0. */
int trd_doorbell_monitor_supported(void);

/**
 * Wait until the 64-bit word at @p offset of doorbell region @p db equals @p value. With
 * TRD_WAIT_EQ the queue's events are taken (and dropped) as it waits.
 * @return 0, -ETIMEDOUT, -EINVAL, -EPERM (TRD_WAIT_EQ from a thread that is not the owner),
 *         -ECONNRESET (TRD_WAIT_EQ on a handle whose engine is gone).
 */
int trd_doorbell_wait(struct trd_mr *db, uint64_t offset, uint64_t value, enum trd_wait_how how,
		      uint64_t timeout_us);

/* ------------------------------------------------------------------------------------------ */
/** @name Capture */

/**
 * Record every frame @p node hands to a port or receives, in order, into the pcapng file
 * @p path: one interface per (node, link), named "<node> <direction> <link>", nanosecond
 * timestamps, each frame marked inbound or outbound; snap length @p snaplen (0: 65535).
 * Several nodes may share a file: give the same path. NULL stops the capture and closes the
 * file when its last node stops. At most TRD_CAPTURE_LIMIT_DEFAULT bytes are written:
 * trd_node_capture_start() sets more. @return 0, -EINVAL, or the negative errno of opening the
 * file (-ENOENT, -EACCES, ...).
 */
int trd_node_capture(struct trd_node *node, const char *path, unsigned int snaplen);

/** What a capture holds at most on disk unless told otherwise: 1 GiB. */
#define TRD_CAPTURE_LIMIT_DEFAULT (1ULL << 30)

/** How trd_node_capture_start() records; all zero: as trd_node_capture() with snap length 0. */
struct trd_capture_conf {
	unsigned int snaplen; /**< bytes kept of each frame; 0: 65535 */
	const char *filter;   /**< BPF expression (pcap-filter(7)); NULL or "": every frame */
	/** Start the next file before one would grow past this many bytes (tcpdump's -C; a file
	 * holds at least one frame); 0: one file, unless trd_node_capture_rotate() is called. */
	uint64_t file_size;
	/** With file_size: a ring of this many files PATH.0 .. PATH.N-1, the oldest overwritten
	 * (tcpdump's -W); 0: PATH, PATH.1, PATH.2, ... as long as the limit allows. */
	unsigned int file_count;
	/** Stop recording (frames counted as dropped) when the files kept on disk would hold more
	 * than this many bytes; 0: TRD_CAPTURE_LIMIT_DEFAULT; UINT64_MAX: no limit. */
	uint64_t limit;
};

/** A capture's figures (trd_node_capture_stats()). */
struct trd_capture_stats {
	char file[1024];   /**< the file written now */
	char filter[256];  /**< the filter's expression, "" if none */
	uint64_t frames;   /**< frames recorded */
	uint64_t bytes;    /**< bytes written, every file and block */
	uint64_t filtered; /**< frames the filter left out */
	uint64_t dropped;  /**< frames not recorded: limit reached, a file that cannot be written */
	uint64_t limit;    /**< the limit in bytes (UINT64_MAX: none) */
	uint64_t file_size;      /**< 0: no rotation by size */
	unsigned int file_count; /**< 0: no ring */
	unsigned int files;      /**< files opened so far */
	int full;                /**< 1 once the limit stopped the recording */
	int error; /**< errno of the first write that failed (frames then count as dropped) */
};

/**
 * Start (or replace) @p node's capture into @p path as @p conf says (NULL: defaults). Safe
 * while another thread serves the node (the serving lcore sees an atomic switch of its taps,
 * and this call waits until it is out of its round before freeing the old ones). Nodes given
 * the same path share its file, and must give the same settings.
 * @return 0, -EBUSY (@p path is being written with other settings: stop that capture first),
 *         -EINVAL (no node or path, a filter that does not compile: see
 *         trd_capture_filter_check()), -ENAMETOOLONG (a path of 1000 characters or more),
 *         the negative errno of opening the file (-ENOENT, -EACCES, ...), -ENOMEM; -ENOENT
 *         also for a node no longer in the process's registry (trd_node_free() began): the
 *         capture calls below check it under the lock trd_node_free() takes, so a tool that
 *         found the node by index (telemetry) never acts on a freed one.
 */
int trd_node_capture_start(struct trd_node *node, const char *path,
			   const struct trd_capture_conf *conf);

/**
 * Close the file @p node's capture writes and go on in the next one (PATH.1, PATH.2, ... or
 * the next of the ring). Nodes sharing the file move together.
 * The next file is opened before the serving lcore is made to wait, and only for the switch.
 * @return 0, -EINVAL, -ENOENT (no capture), -EBUSY (another rotation is under way), or the
 *         negative errno of opening the next file (the capture then goes on in the one it has).
 */
int trd_node_capture_rotate(struct trd_node *node);

/**
 * Stop @p node's capture, as trd_node_capture(node, NULL, 0) does, and give its final figures
 * in @p st (may be NULL): taken once the serving lcore can no longer record through it, so they
 * are the file's. The file is closed when the last node sharing it stops.
 * @return 0, -EINVAL, -ENOENT (no capture: nothing to stop).
 */
int trd_node_capture_stop(struct trd_node *node, struct trd_capture_stats *st);

/**
 * Is a capture of @p node recording now (trd_node_capture(), trd_node_capture_start())? Safe
 * on the serving lcore (one atomic load); the VNI service asks it so that, while a capture
 * records, messages between two processes of the node take the frames a capture shows.
 * @return true or false (also for NULL).
 */
bool trd_node_capturing(const struct trd_node *node);

/** @p node's capture figures. @return 0, -EINVAL, -ENOENT (no capture). */
int trd_node_capture_stats(struct trd_node *node, struct trd_capture_stats *st);

/**
 * Compile @p expr as a capture filter would (libpcap, Ethernet link type) and say why it does
 * not compile in @p err (@p len bytes, may be NULL). @return 0 or -EINVAL.
 */
int trd_capture_filter_check(const char *expr, char *err, size_t len);

/* ------------------------------------------------------------------------------------------ */
/** @name Counters */

/** Allocate a counter (value 0). @return 0 and *id, -ENOSPC, -EINVAL. */
int trd_counter_alloc(struct trd_node *node, uint16_t *id);
/** Free a counter. @return 0 or -EINVAL. */
int trd_counter_free(struct trd_node *node, uint16_t id);
/** Set a counter, e.g. to the bytes expected. @return 0 or -EINVAL. */
int trd_counter_set(struct trd_node *node, uint16_t id, int64_t value);
/** Add @p delta to a counter (atomic). @return 0 or -EINVAL. */
int trd_counter_add(struct trd_node *node, uint16_t id, int64_t delta);
/** Read a counter. @return 0 or -EINVAL. */
int trd_counter_read(const struct trd_node *node, uint16_t id, int64_t *value);
/**
 * The value the engine gives a counter that can no longer reach zero: an operation counting
 * on it failed (its peer was declared down with bytes still on their way, or its descriptor
 * was dropped before its bytes left). Any value at or below it means "failed": the engine
 * never decrements a counter on behalf of a failed operation again, so after
 * trd_counter_set() it counts only for new operations. See docs/reliability.md.
 */
#define TRD_COUNTER_FAILED (INT64_MIN / 2)

/**
 * Wait until the counter is zero, making progress if no lcore serves the node.
 * @return 0; -ETIMEDOUT; -EHOSTUNREACH if an operation counting on it failed (the counter is
 * at or below TRD_COUNTER_FAILED); -ERANGE if it went below zero otherwise (more bytes than
 * expected); -EINVAL.
 */
int trd_counter_wait(struct trd_node *node, uint16_t id, uint64_t timeout_us);

/** Counters one counter block holds: one page of them (docs/vni.md, "Messaging-unit objects"). */
#define TRD_COUNTER_BLOCK 512
/**
 * Reserve a block of TRD_COUNTER_BLOCK counters (ids *base .. *base + 511, all 0 and in use;
 * id *base itself stays unused, as counter 0 of an owner means "none"), one page of the node's
 * counter array, for another process to map: the page becomes the memfd *fd (the caller's to
 * close; sealed: it cannot be shrunk or grown), holding the block alone, at byte *offset (0)
 * of it. Nothing else of the node is reachable through it. The engine decrements counters of
 * the block as it does any other. @return 0, -ENOSPC (no whole page free), -EINVAL, or the
 * -errno of memfd_create(), ftruncate(), fcntl() or mmap().
 */
int trd_counter_block_alloc(struct trd_node *node, uint16_t *base, int *fd, uint64_t *offset);
/** Give back a block from trd_counter_block_alloc(). @return 0 or -EINVAL. */
int trd_counter_block_free(struct trd_node *node, uint16_t base);

/* ------------------------------------------------------------------------------------------ */
/** @name Memory regions */

#define TRD_ACCESS_REMOTE_WRITE 0x1 /**< remote puts may write */
#define TRD_ACCESS_REMOTE_READ  0x2 /**< remote gets may read */
#define TRD_ACCESS_ALL          (TRD_ACCESS_REMOTE_WRITE | TRD_ACCESS_REMOTE_READ)
/**
 * Verbs-style addressing: the region is named by (key, virtual address) instead of (key,
 * offset). Its address space is its virtual range [addr, addr + len): a put's @c roff, a
 * source's @c src with TRD_DF_SRC_MR (local or carried by a remote get), an atomic's @c roff
 * and trd_put()/trd_rdma_read()'s @c remote_addr are addresses in it, checked against the
 * range by the engine that owns the region (a byte outside: dropped, counted as
 * TRD_DROP_OUT_OF_BOUNDS, nothing written or read). The mode belongs to the region, looked
 * up by key: the wire is unchanged. trd_mr_remote_addr() gives the name of a local address.
 */
#define TRD_ACCESS_VA 0x4
/**
 * The region must be memory a port can DMA from: DPDK memory (rte_malloc(), memzones,
 * mempools) or external memory registered with rte_extmem_register() (and mapped for the
 * device with rte_dev_dma_map()), IOVA-contiguous over the whole range. Registration refuses
 * anything else with EFAULT. Without the flag, a region whose IOVA is unknown is sent by copy.
 */
#define TRD_ACCESS_DMA 0x8
/**
 * Never sent zero-copy, and its readers counted: a descriptor reading the region (a local
 * put from it, a remote get of it) copies its bytes into the packets, and is counted from its
 * start until its last packet is built (trd_mr_readers()). After trd_mr_deregister() no new
 * one starts; once trd_mr_readers() is 0 nothing of the engine reads the memory any more, and
 * it may be unmapped (the VNI service's regions of attached processes, which may die while a
 * peer reads them). The slot is not reused while it is counted.
 */
#define TRD_ACCESS_COPY 0x10
/** Every flag trd_mr_register() knows. */
#define TRD_ACCESS_MASK (TRD_ACCESS_ALL | TRD_ACCESS_VA | TRD_ACCESS_DMA | TRD_ACCESS_COPY)

/**
 * Register [@p addr, @p addr + @p len) with a fresh key of 64 unpredictable bits (SipHash of a
 * counter under a getrandom() secret; it never comes again) and @p access (a set of
 * TRD_ACCESS_*). The region's IO address is found now (trd_mr_iova()): zero-copy sends from
 * the region hand the port that translation.
 * @return the region, or NULL with rte_errno = EINVAL (bad argument), EFAULT (TRD_ACCESS_DMA
 * and the memory is not DMA-able) or ENOSPC.
 */
struct trd_mr *trd_mr_register(struct trd_node *node, void *addr, size_t len, unsigned int access);
/**
 * @p len bytes (zeroed, 64-byte aligned) the engine of @p node reads and writes directly: any
 * source or region of a put, a message or a remote get. On a node of this process, DPDK memory
 * (rte_zmalloc(): its IO address known, sent zero-copy); on the handle of a process attached to
 * toroid-node (trd_node_attach()), a block of the process's region in its shared segment, which
 * is the only memory the engine reaches there (above the inline size, 256 bytes, a source and
 * every region must lie in it). NULL with rte_errno (ENOMEM, EINVAL) if none.
 */
void *trd_mem_alloc(struct trd_node *node, size_t len);
/** Give back a block of trd_mem_alloc(). NULL is a no-op. */
void trd_mem_free(struct trd_node *node, void *p);
/**
 * Deregister: no new engine write or read of the region starts after this returns. Packets
 * already built from it zero-copy (not yet acknowledged by their peer) still point at its
 * memory: keep the memory until the injection counters of what was sent from it are zero.
 * @return 0, -EINVAL, or -ETIMEDOUT if the serving lcore did not finish its round in 1 s.
 */
int trd_mr_deregister(struct trd_mr *mr);
/**
 * Descriptors still reading a TRD_ACCESS_COPY region (0 for any other): after
 * trd_mr_deregister(), its memory may go once this is 0 (no packet refers to it: they are
 * copies). Valid on a deregistered region (its slot is kept until this is 0).
 */
unsigned int trd_mr_readers(const struct trd_mr *mr);
/**
 * Bind @p mr to the counter block at @p base (trd_counter_block_alloc()): a frame writing into
 * the region may then name as its counter only 0 or one of the block's (base + 1 .. base +
 * 511), and a frame writing anywhere else (another region, a reception FIFO) none of the
 * block's; anything else is dropped, counted as TRD_DROP_CTR_DENIED. @return 0 or -EINVAL.
 */
int trd_mr_bind_counters(struct trd_mr *mr, uint16_t base);
/**
 * The registered region of @p node that holds [@p addr, @p addr + @p len), with @p access
 * among its rights (0: any region), or NULL with rte_errno = ENOENT (or EINVAL). The region
 * is the translation of a local virtual address: the engine names memory by (key, offset).
 */
struct trd_mr *trd_mr_find(struct trd_node *node, const void *addr, size_t len,
			   unsigned int access);
/** The region's key. */
uint64_t trd_mr_key(const struct trd_mr *mr);
/** The region's base address. */
void *trd_mr_addr(const struct trd_mr *mr);
/** The region's length. */
size_t trd_mr_len(const struct trd_mr *mr);
/**
 * How a peer names local address @p addr of @p mr (for its trd_desc_put() @c roff, its
 * TRD_DF_SRC_MR @c src, trd_put()'s @c remote_addr...): @p addr itself in a TRD_ACCESS_VA
 * region, its offset from the region's base in any other. Does not check that @p addr is in
 * the region.
 */
uint64_t trd_mr_remote_addr(const struct trd_mr *mr, const void *addr);
/**
 * The IO address of the region's base (its bytes are IOVA-contiguous), what a port is given
 * for zero-copy sends from it, or UINT64_MAX (RTE_BAD_IOVA) if unknown: then the region is
 * sent by copy. In IOVA-as-VA mode: the virtual address, unless DPDK's memory map (external
 * memory registered with an IOVA table) says otherwise.
 */
uint64_t trd_mr_iova(const struct trd_mr *mr);

/* ------------------------------------------------------------------------------------------ */
/** @name In-process networks (tests, demos, benchmarks) */

/** How trd_net_create() cables the torus. */
enum trd_net_links {
	TRD_NET_RING = 0,    /**< the engine's ring links: no port limit */
	TRD_NET_ETHDEV_RING, /**< net_ring ethdev ports (rte_eth_from_rings), 2 per cable */
	TRD_NET_PORTS,       /**< the given ethdev ports (any PMD: NICs cabled back to back,
			      *   af_packet on a veth pair...), 2 per cable in cabling order */
};

/** Network configuration. */
struct trd_net_conf {
	struct trd_torus torus;           /**< dimensions */
	enum trd_net_links links;         /**< cable kind */
	uint16_t mtu;                     /**< link MTU (default 1500) */
	const struct trd_node_conf *node; /**< template for every node (torus/coord ignored) */
	const uint16_t *ports;            /**< TRD_NET_PORTS: the ports, two per cable */
	unsigned int n_ports;
	const uint32_t *ranks; /**< build only these ranks (NULL: all); the others exist
				*   in the routing tables only, e.g. two nodes of a
				*   512-node torus */
	unsigned int n_ranks;
};

/**
 * Build a whole torus in this process: one node per coordinate, a cable per distinct
 * neighbour pair (one per axis of size 2).
 * @return the net, or NULL with rte_errno (ENOSPC: too many ethdev ports for the port kind).
 */
struct trd_net *trd_net_create(const struct trd_net_conf *conf);
/** Number of nodes. */
unsigned int trd_net_size(const struct trd_net *net);
/** Node of rank @p rank, or NULL (also for a rank the net does not build). */
struct trd_node *trd_net_node(const struct trd_net *net, unsigned int rank);
/** Poll every node once. @return packets moved. */
int trd_net_poll(struct trd_net *net);
/** Serve the nodes over @p n lcores (round-robin by rank). @return 0 or a negative errno. */
int trd_net_launch(struct trd_net *net, const unsigned int *lcores, unsigned int n);
/** Stop the lcores started by trd_net_launch(). */
int trd_net_stop(struct trd_net *net);
/** Stop and free the net and its nodes. NULL is a no-op. */
void trd_net_free(struct trd_net *net);

/* ------------------------------------------------------------------------------------------ */
/** @name Misc */

/** Monotonic time in microseconds (rte_get_timer_cycles based; CLOCK_MONOTONIC with no EAL). */
uint64_t trd_time_us(void);

/**
 * The shared packet pool, created on first use with @p n mbufs (0: 32767) on the caller's
 * socket. @return the pool or NULL with rte_errno.
 */
struct rte_mempool *trd_default_pool(unsigned int n);

/** Size of the mbuf private area the engine needs in a packet pool. */
unsigned int trd_pool_priv_size(void);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_TOROID_H */
