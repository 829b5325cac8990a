/* SPDX-License-Identifier: BSD-3-Clause */
/* Link transports: ethdev ports (any PMD) and in-process ring pairs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>

#include "link_pvt.h"

RTE_LOG_REGISTER_SUFFIX(trd_link_logtype, link, INFO);
#define LINK_LOG(level, fmt, ...)                                                                  \
	rte_log(RTE_LOG_##level, trd_link_logtype, "toroid link: " fmt "\n", ##__VA_ARGS__)

#define TRD_DEFAULT_MTU 1500
/* Bytes an mbuf of the default pool can hold after the headroom. */
#define TRD_MAX_FRAME (RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM)
/* What the kernel leaves before a frame in an AF_XDP buffer (XDP_PACKET_HEADROOM, linux/bpf.h). */
#define TRD_XDP_HEADROOM 256

static unsigned int link_serial;

static void
ring_link_mac(struct trd_link *l, unsigned int serial)
{
	/* Locally administered unicast address, unique within the process. */
	l->mac.addr_bytes[0] = 0x02;
	l->mac.addr_bytes[1] = 0x54; /* 'T' */
	l->mac.addr_bytes[2] = (uint8_t)(serial >> 24);
	l->mac.addr_bytes[3] = (uint8_t)(serial >> 16);
	l->mac.addr_bytes[4] = (uint8_t)(serial >> 8);
	l->mac.addr_bytes[5] = (uint8_t)serial;
}

/* ---- ethdev ---- */

static void xdp_pool_free(struct rte_mempool *mp);

static uint16_t
ethdev_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_tx_burst(l->port, l->queue, pkts, n);
}

static uint16_t
ethdev_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return rte_eth_rx_burst(l->port, l->queue, pkts, n);
}

void
trd_link_ethdev_close(struct trd_link *l)
{
	if (!l->owns_port)
		return;
	rte_eth_dev_stop(l->port);
	rte_eth_dev_close(l->port);
	xdp_pool_free(l->own_pool); /* after the port: the socket's UMEM is this memory */
	l->own_pool = NULL;
}

static const struct trd_link_ops ethdev_ops = {
	.name = "ethdev",
	.tx = ethdev_tx,
	.rx = ethdev_rx,
	.close = trd_link_ethdev_close,
};

/* Software PMDs that pass mbuf chains through without advertising MULTI_SEGS. */
static bool
driver_takes_chains(const char *drv)
{
	static const char *const ok[] = {"net_ring", "net_memif", "net_pcap", "net_null"};

	for (unsigned int i = 0; i < RTE_DIM(ok); i++)
		if (drv != NULL && strcmp(drv, ok[i]) == 0)
			return true;
	return false;
}

/*
 * The largest frame the port can receive into one mbuf of the pool (no PMD here scatters).
 * net_af_xdp receives zero-copy into the pool's own mbufs, each one a chunk of the socket's
 * UMEM, and the kernel writes each frame XDP_PACKET_HEADROOM (256 B) into the chunk's data
 * room: a frame holds 256 B less there (1792 B in an mbuf of the default size), and a longer one is
 * dropped by the kernel, seen by neither the engine nor the port's counters, so a link whose
 * MTU allowed it would resend it until the peer is declared down. A pool of NULL: the caller
 * set the port up, with (the engine assumes) a pool of the default mbuf size.
 */
static uint32_t
rx_frame_max(const char *drv, struct rte_mempool *pool)
{
	uint32_t room = pool != NULL ? rte_pktmbuf_data_room_size(pool) : RTE_MBUF_DEFAULT_BUF_SIZE;
	uint32_t max = room > RTE_PKTMBUF_HEADROOM ? room - RTE_PKTMBUF_HEADROOM : 0;

	if (drv != NULL && strcmp(drv, "net_af_xdp") == 0)
		max = max > TRD_XDP_HEADROOM ? max - TRD_XDP_HEADROOM : 0;
	return RTE_MIN(max, (uint32_t)TRD_MAX_FRAME);
}

/*
 * The receive pool of a net_af_xdp port. DPDK 22.11's AF_XDP driver registers as the socket's
 * UMEM the pool's populated_size times its object size, from the page of the pool's first
 * object on: right only when the objects follow each other without gaps. rte_pktmbuf_pool_create
 * keeps every object inside one page, so with 4 KiB pages (--no-huge) each 2.5 KB mbuf of the
 * default pool takes a page of its own and the UMEM ends at 60% of the pool: the other 40% of
 * the mbufs lie outside it, and one of them given to the kernel to receive into, or sent
 * zero-copy, is refused as an invalid descriptor, its frame lost and the mbuf never given back.
 * This pool's objects are exactly one 4 KiB page each (no spreading padding), in a page-aligned
 * zone: the UMEM covers every one, and none crosses a page, as a zero-copy NIC needs. The data
 * room is what is left of the page; the mbuf private area is the caller's pool's, which the
 * engine uses. Frames the engine sends from its own pool are copied into this one by the
 * driver (its copy path): correct, if not zero-copy.
 */
#define TRD_XDP_OBJ  4096u
#define TRD_XDP_POOL 8191u

/* The pool and its zone (of the pool's name); NULL: nothing. */
static void
xdp_pool_free(struct rte_mempool *mp)
{
	const struct rte_memzone *mz;

	if (mp == NULL)
		return;
	mz = rte_memzone_lookup(mp->name);
	rte_mempool_free(mp);
	rte_memzone_free(mz);
}

static struct rte_mempool *
xdp_pool(uint16_t port_id, const struct rte_mempool *like)
{
	struct rte_pktmbuf_pool_private pp;
	struct rte_mempool_objsz sz;
	const struct rte_memzone *mz = NULL;
	struct rte_mempool *mp;
	char name[RTE_MEMZONE_NAMESIZE];
	uint16_t priv = rte_pktmbuf_priv_size((struct rte_mempool *)(uintptr_t)like);
	uint32_t elt;
	int rc;

	rte_mempool_calc_obj_size(0, RTE_MEMPOOL_F_NO_SPREAD, &sz);
	elt = TRD_XDP_OBJ - sz.header_size - sz.trailer_size;
	if (elt < sizeof(struct rte_mbuf) + priv + RTE_MBUF_DEFAULT_BUF_SIZE) {
		rte_errno = EINVAL;
		return NULL;
	}
	snprintf(name, sizeof(name), "trd_xdp%u", port_id);
	mp = rte_mempool_create_empty(name, TRD_XDP_POOL, elt, 256,
				      sizeof(struct rte_pktmbuf_pool_private),
				      rte_eth_dev_socket_id(port_id), RTE_MEMPOOL_F_NO_SPREAD);
	if (mp == NULL)
		return NULL;
	if (rte_mempool_calc_obj_size(elt, mp->flags, NULL) != TRD_XDP_OBJ) {
		rte_errno = EINVAL;
		goto fail;
	}
	rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc != 0) {
		rte_errno = -rc;
		goto fail;
	}
	memset(&pp, 0, sizeof(pp));
	pp.mbuf_priv_size = priv;
	pp.mbuf_data_room_size = (uint16_t)(elt - sizeof(struct rte_mbuf) - priv);
	rte_pktmbuf_pool_init(mp, &pp);
	mz = rte_memzone_reserve_aligned(name, (size_t)TRD_XDP_POOL * TRD_XDP_OBJ,
					 rte_eth_dev_socket_id(port_id), 0, TRD_XDP_OBJ);
	if (mz == NULL)
		goto fail;
	/* the zone is freed after the pool (xdp_pool_free), not by it */
	rc = rte_mempool_populate_virt(mp, mz->addr, mz->len, TRD_XDP_OBJ, NULL, NULL);
	if (rc < 0 || (unsigned int)rc != TRD_XDP_POOL) {
		rte_errno = rc < 0 ? -rc : ENOMEM;
		goto fail;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;

fail:
	rc = rte_errno;
	rte_mempool_free(mp);
	rte_memzone_free(mz);
	rte_errno = rc;
	return NULL;
}

/* ---- taps: impairment and capture, between the port and the engine ---- */

static uint16_t
rx_plain(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, uint16_t max)
{
	RTE_SET_USED(max);
	return l->ops->rx(l, pkts, n);
}

static uint16_t
tx_plain(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return l->ops->tx(l, pkts, n);
}

/* ---- IPv4/UDP encapsulation ---- */

/* A UDP source port from the frame's source and destination coordinates (49152 .. 65535): one
 * flow per node pair, spread over paths and queues by whoever hashes the 5-tuple. */
static inline uint16_t
encap_sport(const uint8_t *torus_hdr)
{
	uint32_t k = (uint32_t)torus_hdr[4] << 16 | (uint32_t)torus_hdr[5] << 8 | torus_hdr[6];
	uint32_t d = (uint32_t)torus_hdr[8] << 16 | (uint32_t)torus_hdr[9] << 8 | torus_hdr[10];
	uint32_t h = (k * 0x9E3779B1u) ^ (d * 0x85EBCA77u);

	h ^= h >> 15;
	return (uint16_t)(0xC000 | (h & 0x3FFF));
}

/* A linear copy of @p m as Ethernet, IPv4, UDP, torus frame; NULL if no mbuf. */
struct rte_mbuf *
trd_encap_one(const struct trd_link_encap *e, struct rte_mbuf *m, uint32_t dst_ip, uint16_t dport)
{
	uint32_t inner = m->pkt_len - TRD_ETH_HLEN;
	struct rte_mbuf *c = rte_pktmbuf_alloc(e->mp);
	uint8_t *p, *ip, *udp;
	uint16_t tot;

	if (c == NULL)
		return NULL;
	if (rte_pktmbuf_tailroom(c) < TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN + inner) {
		rte_pktmbuf_free(c);
		return NULL;
	}
	p = rte_pktmbuf_mtod(c, uint8_t *);
	memcpy(p, rte_pktmbuf_mtod(m, const uint8_t *), 12); /* the MAC addresses */
	p[12] = 0x08;
	p[13] = 0x00;
	ip = p + TRD_ETH_HLEN;
	udp = ip + 20;
	if (rte_pktmbuf_read(m, TRD_ETH_HLEN, inner, udp + 8) != udp + 8) {
		/* read() returned a pointer into a contiguous mbuf: copy from it */
		memcpy(udp + 8, rte_pktmbuf_mtod_offset(m, const uint8_t *, TRD_ETH_HLEN), inner);
	}
	tot = (uint16_t)(TRD_UDP_ENCAP_LEN + inner);
	ip[0] = 0x45;
	ip[1] = e->tos;
	*(unaligned_uint16_t *)(ip + 2) = rte_cpu_to_be_16(tot);
	*(unaligned_uint16_t *)(ip + 4) = 0;
	*(unaligned_uint16_t *)(ip + 6) = rte_cpu_to_be_16(0x4000); /* don't fragment */
	ip[8] = e->ttl;
	ip[9] = 17;
	*(unaligned_uint16_t *)(ip + 10) = 0;
	memcpy(ip + 12, &e->src_ip, 4);
	memcpy(ip + 16, &dst_ip, 4);
	*(unaligned_uint16_t *)(ip + 10) = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	*(unaligned_uint16_t *)(udp + 0) = rte_cpu_to_be_16(encap_sport(udp + 8));
	*(unaligned_uint16_t *)(udp + 2) = dport;
	*(unaligned_uint16_t *)(udp + 4) = rte_cpu_to_be_16((uint16_t)(tot - 20));
	*(unaligned_uint16_t *)(udp + 6) =
		0; /* no UDP checksum (IPv4); the torus header has its own */
	c->data_len = (uint16_t)(TRD_ETH_HLEN + tot);
	c->pkt_len = c->data_len;
	return c;
}

/* Wrap what has not been wrapped yet (a frame the port refused last time already is). The
 * engine's reference to the original goes: a packet kept for retransmission keeps its own,
 * and a zero-copy packet's counter falls once the last reference is gone. Returns how many of
 * the first frames could be wrapped (the rest wait for mbufs). */
static uint16_t
encap_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	const struct trd_link_encap *e = l->encap;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *c;

		if (rte_pktmbuf_mtod(m, const uint8_t *)[12] == 0x08)
			continue; /* wrapped already */
		c = trd_encap_one(e, m, e->dst_ip, e->port);
		if (c == NULL)
			return i;
		rte_pktmbuf_free(m);
		pkts[i] = c;
	}
	return n;
}

/* Strip the IPv4/UDP wrapper of a checked datagram in place. */
static void
encap_unwrap(struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	/* Ethernet padding after the datagram is not part of it */
	uint16_t tot = (uint16_t)(p[TRD_ETH_HLEN + 2] << 8 | p[TRD_ETH_HLEN + 3]);

	if (m->pkt_len > (uint32_t)TRD_ETH_HLEN + tot)
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - TRD_ETH_HLEN - tot));
	memmove(p + TRD_UDP_ENCAP_LEN, p, 12);
	p[TRD_UDP_ENCAP_LEN + 12] = TRD_ETHERTYPE >> 8;
	p[TRD_UDP_ENCAP_LEN + 13] = TRD_ETHERTYPE & 0xff;
	rte_pktmbuf_adj(m, TRD_UDP_ENCAP_LEN);
}

bool
trd_encap_rx_one(struct trd_link_encap *e, struct rte_mbuf *m, uint32_t src)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	if (src == 0 || m->data_len < TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN + TRD_HDR_LEN ||
	    trd_wire_udp_check(p, m->data_len, rte_be_to_cpu_16(e->port)) != 0 ||
	    memcmp(p + TRD_ETH_HLEN + 12, &src, 4) != 0) {
		e->drops++;
		rte_pktmbuf_free(m);
		return false;
	}
	encap_unwrap(m);
	return true;
}

/* Unwrap datagrams from the peer's address in place; refuse bad ones. Plain torus frames
 * pass. */
static uint16_t
encap_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb)
{
	struct trd_link_encap *e = l->encap;
	uint16_t out = 0;

	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

		if (m->data_len >= TRD_ETH_HLEN && p[12] == 0x08 && p[13] == 0x00 &&
		    !trd_encap_rx_one(e, m, e->dst_ip))
			continue;
		pkts[out++] = m;
	}
	return out;
}

int
trd_link_set_encap(struct trd_link *l, const struct trd_udp_encap *c, struct rte_mempool *mp)
{
	struct trd_link_encap *e;

	if (l == NULL)
		return -EINVAL;
	if (c == NULL) {
		if (l->encap != NULL) {
			trd_ip_free(l->encap->ip);
			rte_free(l->encap);
			l->encap = NULL;
			l->mtu += TRD_UDP_ENCAP_LEN;
			trd_link_taps_update(l);
		}
		return 0;
	}
	if (c->src_ip == 0 || c->dst_ip == 0 || c->dscp > 63 || mp == NULL)
		return -EINVAL;
	if (l->encap != NULL && l->encap->ip != NULL)
		return -ENOTSUP; /* a switched link over IP */
	if (l->encap == NULL && l->mtu < TRD_UDP_ENCAP_LEN + TRD_HDR_LEN + 8)
		return -EMSGSIZE;
	e = l->encap != NULL ? l->encap : rte_zmalloc("trd_link_encap", sizeof(*e), 0);
	if (e == NULL)
		return -ENOMEM;
	e->src_ip = rte_cpu_to_be_32(c->src_ip);
	e->dst_ip = rte_cpu_to_be_32(c->dst_ip);
	e->port = rte_cpu_to_be_16(c->port != 0 ? c->port : TRD_UDP_PORT);
	e->ttl = c->ttl != 0 ? c->ttl : 64;
	e->tos = (uint8_t)(c->dscp << 2);
	e->mp = mp;
	if (l->encap == NULL)
		l->mtu -= TRD_UDP_ENCAP_LEN;
	l->encap = e;
	trd_link_taps_update(l);
	return 0;
}

uint16_t
trd_link_taps_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb, uint16_t max)
{
	struct trd_impair *im = l->imp;
	struct trd_link_cap *cp = __atomic_load_n(&l->cap, __ATOMIC_ACQUIRE);

	if (l->encap != NULL && l->encap->ip != NULL)
		trd_ip_tick(l); /* ARP's timers: every poll, traffic or not */
	if (im != NULL)
		nb = trd_impair_rx(l, pkts, nb, max);
	/* as the wire carried them: still encapsulated */
	if (cp != NULL && nb != 0)
		trd_capture_frames(cp->c, l, cp->ifname, pkts, nb, false);
	if (l->encap != NULL && nb != 0)
		nb = l->encap->ip != NULL ? trd_ip_rx(l, pkts, nb) : encap_rx(l, pkts, nb);
	return nb;
}

static uint16_t
rx_tapped(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, uint16_t max)
{
	return trd_link_taps_rx(l, pkts, l->ops->rx(l, pkts, n), max);
}

/* Record frames before the port owns them. The engine always transmits from the head of its
 * buffer, so frames the port refused come first in the next call: they are recorded once. */
static uint16_t
tx_tapped(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	struct trd_link_cap *cp = __atomic_load_n(&l->cap, __ATOMIC_ACQUIRE);
	uint16_t skip = 0, sent, taken = 0;

	if (l->encap != NULL && l->encap->ip != NULL) {
		/* frames to a next hop ARP has not resolved are held or dropped: first */
		n = trd_ip_tx(l, pkts, n, &taken);
		pkts += taken;
	} else if (l->encap != NULL) {
		n = encap_tx(l, pkts, n);
	}
	if (cp == NULL)
		return (uint16_t)(taken + l->ops->tx(l, pkts, n));
	if (cp->ahead != 0 && n != 0 && pkts[0] == cp->ahead_first)
		skip = RTE_MIN(cp->ahead, n);
	if (skip < n)
		trd_capture_frames(cp->c, l, cp->ifname, pkts + skip, n - skip, true);
	sent = l->ops->tx(l, pkts, n);
	cp->ahead = (uint16_t)(n - sent);
	cp->ahead_first = sent < n ? pkts[sent] : NULL;
	return (uint16_t)(taken + sent);
}

void
trd_link_taps_update(struct trd_link *l)
{
	bool cap = __atomic_load_n(&l->cap, __ATOMIC_RELAXED) != NULL;
	bool encap = l->encap != NULL;

	__atomic_store_n(&l->rx_burst, (cap || encap || l->imp != NULL) ? rx_tapped : rx_plain,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&l->tx_burst, (cap || encap) ? tx_tapped : tx_plain, __ATOMIC_RELEASE);
}

struct trd_link_cap *
trd_link_cap_new(struct trd_capture *c, const char *ifname)
{
	struct trd_link_cap *cp = rte_zmalloc("trd_link_cap", sizeof(*cp), 0);

	if (cp == NULL)
		return NULL;
	trd_capture_get(c);
	cp->c = c;
	snprintf(cp->ifname, sizeof(cp->ifname), "%s", ifname);
	return cp;
}

void
trd_link_cap_free(struct trd_link_cap *cp)
{
	if (cp == NULL)
		return;
	trd_capture_put(cp->c);
	rte_free(cp);
}

struct trd_link_cap *
trd_link_swap_capture(struct trd_link *l, struct trd_link_cap *cp)
{
	struct trd_link_cap *old = __atomic_exchange_n(&l->cap, cp, __ATOMIC_ACQ_REL);

	trd_link_taps_update(l);
	return old;
}

bool
trd_link_capture_on(const struct trd_link *l)
{
	return __atomic_load_n(&l->cap, __ATOMIC_RELAXED) != NULL;
}

void
trd_link_tx_reset(struct trd_link *l)
{
	if (l->cap != NULL)
		l->cap->ahead = 0;
}

void
trd_link_tx_discard(struct trd_link *l)
{
	while (l->pend_head != l->pend_tail)
		rte_pktmbuf_free(l->pend[l->pend_head++ & TRD_LINK_PEND_MASK]);
	if (l->encap != NULL && l->encap->ip != NULL)
		trd_ip_discard(l->encap->ip); /* and what waits for ARP */
	trd_link_tx_reset(l);
}

int
trd_link_rx_discard(struct trd_link *l)
{
	struct rte_mbuf *pkts[32];
	uint16_t k;
	int total = 0;

	while ((k = l->ops->rx(l, pkts, RTE_DIM(pkts))) != 0) {
		rte_pktmbuf_free_bulk(pkts, k);
		total += k;
	}
	return total;
}

void
trd_link_taps_pool(struct trd_link *l, struct rte_mempool *mp)
{
	if (l->imp != NULL)
		l->imp->mp = mp;
	if (l->encap != NULL)
		l->encap->mp = mp;
}

static struct trd_link *
link_alloc(const char *name, enum trd_link_kind kind, const struct trd_link_ops *ops)
{
	struct trd_link *l = rte_zmalloc("trd_link", sizeof(*l), RTE_CACHE_LINE_SIZE);

	if (l == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	l->kind = kind;
	l->ops = ops;
	l->rx_burst = rx_plain;
	l->tx_burst = tx_plain;
	l->dir = TRD_DIR_NONE;
	snprintf(l->name, sizeof(l->name), "%.47s", name);
	memset(&l->peer, 0xff, sizeof(l->peer)); /* broadcast until told otherwise */
	return l;
}

struct trd_link *
trd_link_ethdev_pool(uint16_t port_id, const struct trd_link_conf *conf, struct rte_mempool *pool)
{
	static const struct trd_link_conf defaults;
	struct rte_eth_dev_info info;
	struct rte_eth_conf pconf;
	struct trd_link *l;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint32_t frame_max;
	bool pool_given = false, memif;
	uint16_t mtu = 0;
	int rc;

	if (conf == NULL)
		conf = &defaults;
	if (!rte_eth_dev_is_valid_port(port_id)) {
		LINK_LOG(ERR, "port %u does not exist (check --vdev / -a options)", port_id);
		rte_errno = ENODEV;
		return NULL;
	}
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	if (rte_eth_dev_get_name_by_port(port_id, name) != 0)
		snprintf(name, sizeof(name), "port%u", port_id);
	/* memif: bursts under the guard (guard.c), where a dying peer cannot kill the engine */
	memif = strcmp(info.driver_name, "net_memif") == 0;
	if (memif && trd_link_guard_install() != 0)
		LINK_LOG(WARNING,
			 "%s: no burst guard (sigaction failed): a memif peer that dies "
			 "during a burst can crash this process",
			 name);
	l = link_alloc(name, TRD_LINK_ETHDEV, memif ? &trd_link_memif_ops : &ethdev_ops);
	if (l == NULL)
		return NULL;
	l->port = port_id;
	l->queue = conf->queue;
	l->chain_ok = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0 ||
		      driver_takes_chains(info.driver_name);
	if (!conf->no_setup && pool != NULL && strcmp(info.driver_name, "net_af_xdp") == 0) {
		l->own_pool = xdp_pool(port_id, pool);
		if (l->own_pool == NULL) {
			LINK_LOG(ERR, "%s: no receive pool for AF_XDP (%u mbufs of %u B): %s", name,
				 TRD_XDP_POOL, TRD_XDP_OBJ, rte_strerror(rte_errno));
			goto fail_errno;
		}
		pool = l->own_pool;
	}
	frame_max = rx_frame_max(info.driver_name, conf->no_setup ? NULL : pool);
	if (frame_max <= TRD_ETH_HLEN + TRD_HDR_LEN) {
		LINK_LOG(ERR, "%s: the pool's mbufs hold frames of %u B, too few for a torus frame",
			 name, frame_max);
		rte_errno = EINVAL;
		goto fail_errno;
	}
	/* a larger MTU only takes the engine's frames to TRD_MAX_FRAME: refused where the port
	 * cannot receive even those */
	if (!conf->no_setup && conf->mtu != 0 && conf->mtu + TRD_ETH_HLEN > (int)frame_max &&
	    frame_max < TRD_MAX_FRAME) {
		LINK_LOG(ERR,
			 "%s: MTU %u: frames of %u B, but the port receives at most %u B into "
			 "one mbuf of its pool (%s): MTU %u at most",
			 name, conf->mtu, conf->mtu + TRD_ETH_HLEN, frame_max,
			 strcmp(info.driver_name, "net_af_xdp") == 0
				 ? "AF_XDP leaves 256 B of XDP headroom in each"
				 : "no scatter",
			 frame_max - TRD_ETH_HLEN);
		rte_errno = EINVAL;
		goto fail_errno;
	}

	if (!conf->no_setup) {
		uint16_t nb_rxd = conf->nb_rxd ? conf->nb_rxd : 1024;
		uint16_t nb_txd = conf->nb_txd ? conf->nb_txd : 1024;

		if (pool == NULL)
			goto fail_errno;
		if (conf->queue != 0) {
			LINK_LOG(ERR, "%s: queue %u needs no_setup (configure the port yourself)",
				 name, conf->queue);
			rte_errno = EINVAL;
			goto fail_errno;
		}
		memset(&pconf, 0, sizeof(pconf));
		if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
			pconf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		rc = rte_eth_dev_configure(port_id, 1, 1, &pconf);
		if (rc == 0)
			rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
		pool_given = true; /* from here the port may hold the pool's mbufs */
		if (rc == 0)
			rc = rte_eth_rx_queue_setup(port_id, 0, nb_rxd,
						    rte_eth_dev_socket_id(port_id), NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port_id, 0, nb_txd,
						    rte_eth_dev_socket_id(port_id), NULL);
		if (rc != 0) {
			LINK_LOG(ERR, "%s: port set-up failed: %s", name, rte_strerror(-rc));
			rte_errno = -rc;
			goto fail_errno;
		}
		if (conf->mtu != 0) {
			rc = rte_eth_dev_set_mtu(port_id, conf->mtu);
			if (rc != 0 && rc != -ENOTSUP) {
				LINK_LOG(ERR, "%s: cannot set MTU %u: %s", name, conf->mtu,
					 rte_strerror(-rc));
				rte_errno = -rc;
				goto fail_errno;
			}
			mtu = conf->mtu;
		}
		rc = rte_eth_dev_start(port_id);
		if (rc != 0) {
			LINK_LOG(ERR, "%s: cannot start: %s", name, rte_strerror(-rc));
			rte_errno = -rc;
			goto fail_errno;
		}
		/* Not every PMD can filter; torus frames are recognised by EtherType anyway. */
		rte_eth_promiscuous_enable(port_id);
		l->owns_port = true;
	}
	if (mtu == 0 && (rte_eth_dev_get_mtu(port_id, &mtu) != 0 || mtu == 0))
		mtu = TRD_DEFAULT_MTU;
	if (mtu > frame_max - TRD_ETH_HLEN)
		mtu = (uint16_t)(frame_max - TRD_ETH_HLEN);
	l->mtu = mtu;
	rte_eth_macaddr_get(port_id, &l->mac);
	/* a port without an address (net_ring): one made up, as for ring links, so that its
	 * frames have a unicast source and ARP can name it */
	if (rte_is_zero_ether_addr(&l->mac))
		ring_link_mac(l, __atomic_fetch_add(&link_serial, 1, __ATOMIC_RELAXED));
	return l;

fail_errno:
	rc = rte_errno;
	if (!pool_given) /* else the port's queue holds it (the port is not closed here) */
		xdp_pool_free(l->own_pool);
	rte_free(l);
	rte_errno = rc;
	return NULL;
}

/* ---- rings ---- */

static uint16_t
ring_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return (uint16_t)rte_ring_sp_enqueue_burst(l->tx_ring, (void **)pkts, n, NULL);
}

static uint16_t
ring_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return (uint16_t)rte_ring_sc_dequeue_burst(l->rx_ring, (void **)pkts, n, NULL);
}

static void
ring_close(struct trd_link *l)
{
	struct rte_mbuf *m;

	if (!l->owns_rings)
		return;
	/* A ring is freed by the link that receives from it, with what is left inside. */
	while (rte_ring_dequeue(l->rx_ring, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(l->rx_ring);
}

static const struct trd_link_ops ring_ops = {
	.name = "ring",
	.tx = ring_tx,
	.rx = ring_rx,
	.close = ring_close,
};

struct rte_ring *
trd_link_ring_make(const char *name, const char *sfx, unsigned int size)
{
	static unsigned int serial;
	char rname[RTE_RING_NAMESIZE];

	snprintf(rname, sizeof(rname), "trd%u%s", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED),
		 sfx);
	RTE_SET_USED(name);
	return rte_ring_create(rname, size, SOCKET_ID_ANY,
			       RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
}

int
trd_link_ring_pair(const char *name, unsigned int size, uint16_t mtu, struct trd_link **a,
		   struct trd_link **b)
{
	struct rte_ring *r1 = NULL, *r2 = NULL;
	struct trd_link *la = NULL, *lb = NULL;
	char n[48];

	if (name == NULL || a == NULL || b == NULL || size > (1u << 20) || mtu == 1 ||
	    (mtu != 0 && mtu < TRD_HDR_LEN + 1))
		return -EINVAL;
	if (size == 0)
		size = 1024;
	if (mtu == 0)
		mtu = TRD_DEFAULT_MTU;
	if (mtu > TRD_MAX_FRAME - TRD_ETH_HLEN)
		return -EINVAL;
	r1 = trd_link_ring_make(name, "a", size);
	r2 = trd_link_ring_make(name, "b", size);
	snprintf(n, sizeof(n), "%s.a", name);
	la = link_alloc(n, TRD_LINK_RING, &ring_ops);
	snprintf(n, sizeof(n), "%s.b", name);
	lb = link_alloc(n, TRD_LINK_RING, &ring_ops);
	if (r1 == NULL || r2 == NULL || la == NULL || lb == NULL) {
		rte_ring_free(r1);
		rte_ring_free(r2);
		rte_free(la);
		rte_free(lb);
		return -ENOMEM;
	}
	la->tx_ring = r1;
	la->rx_ring = r2;
	lb->tx_ring = r2;
	lb->rx_ring = r1;
	la->owns_rings = lb->owns_rings = true;
	la->mtu = lb->mtu = mtu;
	la->chain_ok = lb->chain_ok = true;
	ring_link_mac(la, __atomic_fetch_add(&link_serial, 1, __ATOMIC_RELAXED));
	ring_link_mac(lb, __atomic_fetch_add(&link_serial, 1, __ATOMIC_RELAXED));
	la->peer = lb->mac;
	lb->peer = la->mac;
	*a = la;
	*b = lb;
	return 0;
}

struct trd_link *
trd_link_loopback(const char *name, uint16_t mtu)
{
	struct trd_link *l = link_alloc(name, TRD_LINK_RING, &ring_ops);

	if (l == NULL)
		return NULL;
	l->tx_ring = l->rx_ring = trd_link_ring_make(name, "lo", 4096);
	if (l->tx_ring == NULL) {
		rte_free(l);
		rte_errno = ENOMEM;
		return NULL;
	}
	l->owns_rings = true;
	l->mtu = mtu;
	l->chain_ok = true;
	ring_link_mac(l, __atomic_fetch_add(&link_serial, 1, __ATOMIC_RELAXED));
	l->peer = l->mac;
	return l;
}

int
trd_link_ethdev_ring_pair_pool(const char *name, uint16_t mtu, struct rte_mempool *pool,
			       struct trd_link **a, struct trd_link **b)
{
	struct rte_ring *r1, *r2;
	struct trd_link_conf conf = {.mtu = mtu ? mtu : TRD_DEFAULT_MTU};
	char n[64];
	int pa, pb;

	if (name == NULL || a == NULL || b == NULL)
		return -EINVAL;
	if (rte_eth_dev_count_total() + 2 > RTE_MAX_ETHPORTS)
		return -ENOSPC;
	r1 = trd_link_ring_make(name, "ea", 2048);
	r2 = trd_link_ring_make(name, "eb", 2048);
	if (r1 == NULL || r2 == NULL) {
		rte_ring_free(r1);
		rte_ring_free(r2);
		return -ENOMEM;
	}
	snprintf(n, sizeof(n), "%s_a", name);
	pa = rte_eth_from_rings(n, &r1, 1, &r2, 1, SOCKET_ID_ANY);
	snprintf(n, sizeof(n), "%s_b", name);
	pb = pa < 0 ? -1 : rte_eth_from_rings(n, &r2, 1, &r1, 1, SOCKET_ID_ANY);
	if (pa < 0 || pb < 0)
		goto fail;
	*a = trd_link_ethdev_pool((uint16_t)pa, &conf, pool);
	if (*a == NULL)
		goto fail;
	*b = trd_link_ethdev_pool((uint16_t)pb, &conf, pool);
	if (*b == NULL) {
		trd_link_free(*a);
		goto fail;
	}
	(*a)->peer = (*b)->mac;
	(*b)->peer = (*a)->mac;
	return 0;
fail:
	LINK_LOG(ERR, "%s: cannot make a net_ring pair: %s", name, rte_strerror(rte_errno));
	return rte_errno ? -rte_errno : -ENODEV;
}

void
trd_link_free(struct trd_link *l)
{
	struct rte_mbuf *m;

	if (l == NULL)
		return;
	while (l->pend_head != l->pend_tail) {
		m = l->pend[l->pend_head++ & TRD_LINK_PEND_MASK];
		rte_pktmbuf_free(m);
	}
	if (l->ops->close != NULL)
		l->ops->close(l);
	if (l->imp != NULL) {
		rte_pktmbuf_free(l->imp->held);
		rte_free(l->imp);
	}
	trd_link_cap_free(l->cap);
	if (l->encap != NULL)
		trd_ip_free(l->encap->ip);
	rte_free(l->encap);
	rte_free(l);
}

enum trd_link_kind
trd_link_kind_of(const struct trd_link *l)
{
	return l->kind;
}

int
trd_link_port(const struct trd_link *l)
{
	if (l == NULL)
		return -EINVAL;
	return l->kind == TRD_LINK_ETHDEV ? l->port : -ENOTSUP;
}

int
trd_link_queue_id(const struct trd_link *l)
{
	if (l == NULL)
		return -EINVAL;
	return l->kind == TRD_LINK_ETHDEV ? l->queue : -ENOTSUP;
}

unsigned int
trd_link_max_payload(const struct trd_link *l)
{
	return l == NULL ? 0 : (unsigned int)(l->mtu - TRD_HDR_LEN - l->trailer);
}

int
trd_link_stats_get(const struct trd_link *l, struct trd_link_stats *st)
{
	if (l == NULL || st == NULL)
		return -EINVAL;
	st->tx_pkts = __atomic_load_n(&l->tx_pkts, __ATOMIC_RELAXED);
	st->tx_bytes = __atomic_load_n(&l->tx_bytes, __ATOMIC_RELAXED);
	st->rx_pkts = __atomic_load_n(&l->rx_pkts, __ATOMIC_RELAXED);
	st->rx_bytes = __atomic_load_n(&l->rx_bytes, __ATOMIC_RELAXED);
	st->fwd_pkts = __atomic_load_n(&l->fwd_pkts, __ATOMIC_RELAXED);
	st->port_faults = __atomic_load_n(&l->port_faults, __ATOMIC_RELAXED);
	st->pending = __atomic_load_n(&l->pend_tail, __ATOMIC_RELAXED) -
		      __atomic_load_n(&l->pend_head, __ATOMIC_RELAXED);
	st->dir = l->dir;
	if (l->imp != NULL) {
		st->imp_lost = l->imp->lost;
		st->imp_reordered = l->imp->reordered;
		st->imp_dup = l->imp->dupped;
		st->imp_corrupt = l->imp->corrupted;
	} else {
		st->imp_lost = st->imp_reordered = st->imp_dup = st->imp_corrupt = 0;
	}
	st->encap_drops = l->encap != NULL ? l->encap->drops : 0;
	st->ip = false;
	st->arp_requests = st->arp_replies = st->arp_resolved = st->arp_bad = 0;
	st->ip_unresolved = st->ip_held_drops = 0;
	st->arp_pending = st->ip_held = 0;
	if (l->encap != NULL && l->encap->ip != NULL) {
		const struct trd_link_ip *ip = l->encap->ip;

		st->ip = true;
		st->arp_requests = ip->arp_requests;
		st->arp_replies = ip->arp_replies;
		st->arp_resolved = ip->arp_resolved;
		st->arp_bad = ip->arp_bad;
		st->ip_unresolved = ip->unresolved;
		st->ip_held = ip->n_held;
		st->ip_held_drops = ip->held_drops;
		for (uint32_t i = 0; i < ip->n_arp; i++)
			st->arp_pending += ip->arp[i].state != TRD_ARP_OK;
	}
	return 0;
}

const char *
trd_link_name(const struct trd_link *l)
{
	return l == NULL ? NULL : l->name;
}

int
trd_link_set_peer_mac(struct trd_link *l, const uint8_t mac[6])
{
	if (l == NULL || mac == NULL)
		return -EINVAL;
	if (l->node != NULL)
		return -EBUSY; /* the node made its routes from the old one */
	memcpy(l->peer.addr_bytes, mac, RTE_ETHER_ADDR_LEN);
	return 0;
}

void
trd_link_set_peer(struct trd_link *a, struct trd_link *b)
{
	a->peer = b->mac;
	b->peer = a->mac;
}
