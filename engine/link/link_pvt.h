/* SPDX-License-Identifier: BSD-3-Clause */
/* Links, the link layer's own view: the taps' state. What the layers above see is
 * api/link_api.h. */
#ifndef TRD_LINK_PVT_H
#define TRD_LINK_PVT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <toroid/toroid.h>

#include "api/link_api.h"

/** Impairment state of a link (impair.c): a receive tap. */
struct trd_impair {
	uint32_t loss, reorder, dup, corrupt; /* per 2^32 */
	uint64_t rng;
	struct rte_mempool *mp; /* copies (duplicates, corrupted frames) come from here */
	struct rte_mbuf *held;  /* a frame waiting to be delivered late */
	uint64_t lost, reordered, dupped, corrupted;
};

/** What ARP knows of a next hop: being asked (frames to it are held, TRD_ARP_HOLD at most),
 * not answering (frames to it are dropped; asked again now and then), known. */
enum trd_arp_state { TRD_ARP_ASKING = 0, TRD_ARP_FAILED, TRD_ARP_OK };

/** A next hop of an IP link and what ARP knows of it (ip.c). */
struct trd_arp_entry {
	uint32_t ip; /* host order */
	struct rte_ether_addr mac;
	uint8_t state; /* enum trd_arp_state */
	uint8_t tries; /* requests unanswered: while asking, or refreshes of a known one */
	uint16_t held; /* frames held for it (trd_link_ip::held) */
	uint64_t next; /* TSC of the next request */
};

/** A frame an IP link holds while ARP asks for its next hop (ip.c). */
struct trd_ip_held {
	struct rte_mbuf *m; /* the torus frame; wrapped once the port refused it */
	uint32_t rank;      /* its peer */
	uint16_t nh;        /* its next hop's index in arp[] */
	bool recorded;      /* the capture has it (the port refused it after) */
};

/** A peer of an IP link: its address and next hop. */
struct trd_ip_peer {
	uint32_t ip;   /* network order; 0: no address, plain frames */
	uint16_t port; /* network order */
	uint16_t nh;   /* its next hop's index in arp[] + 1, 0 none */
};

/** A switched link over IPv4 (ip.c): the peers by rank, the next hops, ARP. */
struct trd_link_ip {
	uint32_t ip, mask, gw; /* host order */
	uint8_t dims[3];       /* the torus, to find a frame's peer from its coordinate */
	uint32_t n_peers;
	struct trd_ip_peer *peers; /* by rank */
	uint32_t n_arp;
	uint64_t next_tick; /* TSC of the next look at the ARP entries */
	uint64_t arp_requests, arp_replies, arp_resolved, arp_bad, unresolved, held_drops;
	uint64_t next_moved_log; /* TSC: a next hop's MAC change is logged no sooner */
	struct trd_arp_entry arp[TRD_ARP_ENTRIES];
	/* Frames held for next hops being asked, oldest first, whichever the next hop: the link
	 * took them from its transmit buffer (the engine's accounting is settled) and sends them
	 * itself once ARP answers, or drops them once it gives up. */
	uint32_t n_held;
	bool flush; /* some held frame's next hop is known: send them */
	struct trd_ip_held held[TRD_ARP_HOLD_LINK];
};

/** IPv4/UDP encapsulation of a link (link.c): network-order header fields, made once. */
struct trd_link_encap {
	uint32_t src_ip, dst_ip; /* network order; dst_ip 0 on an IP link (per peer) */
	uint16_t port;           /* network order: the destination port, and ours on an IP link */
	uint8_t ttl, tos;
	struct rte_mempool *mp; /* the encapsulated copies come from here */
	uint64_t drops;         /* received datagrams refused */
	struct trd_link_ip *ip; /* a switched link over IP, or NULL (point to point) */
};

/** A capture tap on a link: every frame it hands to the port or receives goes to @c c. */
struct trd_link_cap {
	struct trd_capture *c;
	char ifname[128];             /* the link's interface name in the file */
	struct rte_mbuf *ahead_first; /* recorded, then refused by the port: first of them */
	uint16_t ahead;               /* how many, from the head of the transmit buffer */
};

/** The link layer's log type (link.c). */
extern int trd_link_logtype;

/** Choose the link's burst functions after a tap was installed or removed. */
void trd_link_taps_update(struct trd_link *l);

/* impair.c: the receive tap */
uint16_t trd_impair_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb, uint16_t max);

/* link.c: a linear copy of @p m wrapped in IPv4/UDP to @p dst_ip, @p dport (network order) */
struct rte_mbuf *trd_encap_one(const struct trd_link_encap *e, struct rte_mbuf *m, uint32_t dst_ip,
			       uint16_t dport);
/* link.c: the receive check of an IPv4 frame @p m to the link's port, shared by the point to
 * point and the IP links: a well-formed datagram (trd_wire_udp_check()) from @p src (network
 * order; 0: nobody may send it) is unwrapped in place (true); another is dropped and counted
 * in e->drops (false) */
bool trd_encap_rx_one(struct trd_link_encap *e, struct rte_mbuf *m, uint32_t src);

/* ip.c: the IP link's transmit and receive taps and its timer; the transmit tap returns how
 * many frames to hand to the port after the first *taken it took itself (held or dropped) */
uint16_t trd_ip_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, uint16_t *dropped);
uint16_t trd_ip_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb);
void trd_ip_tick(struct trd_link *l);
void trd_ip_free(struct trd_link_ip *ip);
/* ip.c: free the frames held for ARP, uncounted (the transmit buffer is being emptied) */
void trd_ip_discard(struct trd_link_ip *ip);

/* link.c: a single-producer single-consumer ring of @p size mbufs (its name from a serial) */
struct rte_ring *trd_link_ring_make(const char *name, const char *sfx, unsigned int size);

/* capture.c: frames into the pcapng file */
void trd_capture_frames(struct trd_capture *c, const struct trd_link *l, const char *ifname,
			struct rte_mbuf *const *pkts, unsigned int nb, bool outbound);

/* The burst guard (guard.c): the jump buffer of the burst under way on this thread, NULL when
 * none; a fault while it is set returns to its sigsetjmp. */
extern _Thread_local sigjmp_buf *trd_link_guard_env;
/* Install the process's SIGSEGV/SIGBUS handler (once). @return 0 or a negative errno. */
int trd_link_guard_install(void);
/* net_memif links: ethdev bursts under the guard (guard.c). */
extern const struct trd_link_ops trd_link_memif_ops;
/* Stop and close a port the link owns (link.c). */
void trd_link_ethdev_close(struct trd_link *l);

#endif /* TRD_LINK_PVT_H */
