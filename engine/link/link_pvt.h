/* SPDX-License-Identifier: BSD-3-Clause */
/* Links, the link layer's own view: the taps' state. What the layers above see is
 * api/link_api.h. */
#ifndef TRD_LINK_PVT_H
#define TRD_LINK_PVT_H

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

/** IPv4/UDP encapsulation of a link (link.c): network-order header fields, made once. */
struct trd_link_encap {
	uint32_t src_ip, dst_ip; /* network order */
	uint16_t port;           /* network order */
	uint8_t ttl, tos;
	struct rte_mempool *mp; /* the encapsulated copies come from here */
	uint64_t drops;         /* received datagrams refused */
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

/* capture.c: frames into the pcapng file */
void trd_capture_frames(struct trd_capture *c, const struct trd_link *l, const char *ifname,
			struct rte_mbuf *const *pkts, unsigned int nb, bool outbound);

#endif /* TRD_LINK_PVT_H */
