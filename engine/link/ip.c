/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A switched link over IPv4 (trd_node_set_ip(), docs/wire-format.md "Over IP networks"): each
 * peer has an address and port; a frame goes to its peer's address in a UDP datagram, to the
 * MAC of the next hop (the peer inside the subnet, the gateway outside it). The engine owns the
 * port, so the kernel neither answers ARP for the link's address nor resolves next hops: this
 * file does both. Everything runs on the lcore that serves the link (the taps), but the
 * set-up calls, made before.
 *
 * Frames to a next hop being asked are held here, a few per next hop, and sent when it
 * answers, so that one silent next hop does not hold up the frames to the others (the port
 * takes the link's transmit buffer in order). Holding rather than dropping them: ARP on a
 * segment answers in microseconds, the reliable sessions' first resend comes after
 * milliseconds (rto_us), and an unreliable node never resends; what does not fit is dropped
 * and counted, and the sessions resend it like a frame the wire lost.
 */
#include <errno.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include <toroid/wire.h>

#include "link_pvt.h"

/* ARP's timing: first asked every ASK_MS, ASK_TRIES times, then every RETRY_MS while the next
 * hop is silent; a known one is asked again every REFRESH_MS (its reply updates the MAC), and
 * after REFRESH_TRIES requests unanswered it is asked afresh, as at the start. */
#define ASK_MS        200u
#define ASK_TRIES     5u
#define RETRY_MS      2000u
#define REFRESH_MS    60000u
#define REFRESH_TRIES 3u
#define TICK_MS       10u

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static inline uint64_t
ms_cycles(unsigned int ms)
{
	return rte_get_timer_hz() / 1000u * ms;
}

/* Whether @p ip (host order) cannot be a host's address. */
static bool
not_host(uint32_t ip)
{
	return ip == 0 || ip == UINT32_MAX || (ip >> 24) == 0 || (ip >> 24) == 127 ||
	       (ip >> 28) >= 0xe;
}

void
trd_ip_discard(struct trd_link_ip *ip)
{
	for (uint32_t i = 0; i < ip->n_held; i++) {
		rte_pktmbuf_free(ip->held[i].m);
		ip->arp[ip->held[i].nh].held = 0;
	}
	ip->n_held = 0;
	ip->flush = false;
}

void
trd_ip_free(struct trd_link_ip *ip)
{
	if (ip == NULL)
		return;
	trd_ip_discard(ip);
	rte_free(ip->peers);
	rte_free(ip);
}

int
trd_link_set_ip(struct trd_link *l, const struct trd_ip_conf *c, struct rte_mempool *mp,
		const uint8_t dims[3], uint32_t n_nodes)
{
	struct trd_link_encap *e;
	struct trd_link_ip *ip;
	bool fresh;

	if (l == NULL || c == NULL || mp == NULL || dims == NULL || n_nodes == 0)
		return -EINVAL;
	if (not_host(c->ip) || c->prefix > 32 || c->dscp > 63 || c->gateway == c->ip ||
	    (c->gateway != 0 && not_host(c->gateway)))
		return -EINVAL;
	if (l->dir != TRD_DIR_NONE || (l->encap != NULL && l->encap->ip == NULL))
		return -ENOTSUP; /* point to point: trd_link_udp_encap() */
	if (!rte_is_unicast_ether_addr(&l->mac) || rte_is_zero_ether_addr(&l->mac))
		return -EADDRNOTAVAIL; /* ARP needs the port's own address */
	fresh = l->encap == NULL;
	if (fresh && l->mtu < TRD_UDP_ENCAP_LEN + TRD_HDR_LEN + 8)
		return -EMSGSIZE;
	ip = rte_zmalloc("trd_link_ip", sizeof(*ip), RTE_CACHE_LINE_SIZE);
	if (ip != NULL)
		ip->peers = rte_zmalloc("trd_ip_peers", sizeof(*ip->peers) * n_nodes, 0);
	e = fresh ? rte_zmalloc("trd_link_encap", sizeof(*e), 0) : l->encap;
	if (ip == NULL || ip->peers == NULL || e == NULL) {
		trd_ip_free(ip);
		if (fresh)
			rte_free(e);
		return -ENOMEM;
	}
	ip->ip = c->ip;
	ip->mask =
		c->prefix == 0 || c->prefix == 32 ? UINT32_MAX : ~(uint32_t)0 << (32u - c->prefix);
	ip->gw = c->gateway;
	memcpy(ip->dims, dims, sizeof(ip->dims));
	ip->n_peers = n_nodes;
	e->src_ip = rte_cpu_to_be_32(c->ip);
	e->dst_ip = 0;
	e->port = rte_cpu_to_be_16(c->port != 0 ? c->port : TRD_UDP_PORT);
	e->ttl = c->ttl != 0 ? c->ttl : 64;
	e->tos = (uint8_t)(c->dscp << 2);
	e->mp = mp;
	if (!fresh)
		trd_ip_free(e->ip);
	e->ip = ip;
	if (fresh) {
		l->mtu = (uint16_t)(l->mtu - TRD_UDP_ENCAP_LEN);
		l->encap = e;
	}
	trd_link_taps_update(l);
	return 0;
}

int
trd_link_set_ip_peer(struct trd_link *l, uint32_t rank, uint32_t addr, uint16_t port)
{
	struct trd_link_ip *ip;
	uint32_t nh, i;

	if (l == NULL || not_host(addr))
		return -EINVAL;
	if (l->encap == NULL || l->encap->ip == NULL)
		return -ENOTSUP;
	ip = l->encap->ip;
	if (rank >= ip->n_peers || addr == ip->ip)
		return -EINVAL;
	/* inside the subnet, or without a gateway: the peer itself; else the gateway */
	nh = ip->gw == 0 || (addr & ip->mask) == (ip->ip & ip->mask) ? addr : ip->gw;
	for (i = 0; i < ip->n_arp; i++)
		if (ip->arp[i].ip == nh)
			break;
	if (i == ip->n_arp) {
		if (ip->n_arp == TRD_ARP_ENTRIES)
			return -ENOSPC;
		memset(&ip->arp[i], 0, sizeof(ip->arp[i])); /* asking, at the first tick */
		ip->arp[i].ip = nh;
		ip->n_arp++;
	}
	ip->peers[rank].ip = rte_cpu_to_be_32(addr);
	ip->peers[rank].port = rte_cpu_to_be_16(port != 0 ? port : TRD_UDP_PORT);
	ip->peers[rank].nh = (uint16_t)(i + 1);
	return 0;
}

/* Hand one ARP frame to the port (and to the capture, as the wire carries it). */
static bool
arp_send(struct trd_link *l, const uint8_t dst[6], const struct trd_arp *a)
{
	struct trd_link_cap *cp = __atomic_load_n(&l->cap, __ATOMIC_ACQUIRE);
	struct rte_mbuf *m = rte_pktmbuf_alloc(l->encap->mp);

	if (m == NULL)
		return false;
	if (trd_wire_arp_build(rte_pktmbuf_mtod(m, void *), rte_pktmbuf_tailroom(m), dst, a) !=
	    TRD_ARP_FRAME_LEN) {
		rte_pktmbuf_free(m);
		return false;
	}
	m->data_len = TRD_ARP_FRAME_LEN;
	m->pkt_len = TRD_ARP_FRAME_LEN;
	if (cp != NULL)
		trd_capture_frames(cp->c, l, cp->ifname, &m, 1, true);
	if (l->ops->tx(l, &m, 1) != 1) {
		rte_pktmbuf_free(m);
		return false;
	}
	return true;
}

static void
arp_request(struct trd_link *l, uint32_t target)
{
	struct trd_arp a = {.op = TRD_ARP_REQUEST, .spa = l->encap->ip->ip, .tpa = target};

	memcpy(a.sha, l->mac.addr_bytes, 6);
	if (arp_send(l, bcast, &a))
		l->encap->ip->arp_requests++;
}

/* Hold @p m, a frame to the peer of rank @p r whose next hop is being asked (or whose held
 * frames are not all sent yet), behind the frames held before; or drop it if its next hop has
 * TRD_ARP_HOLD held already, or the link TRD_ARP_HOLD_LINK. */
static void
hold(struct trd_link_ip *ip, struct rte_mbuf *m, uint32_t r)
{
	uint16_t nh = (uint16_t)(ip->peers[r].nh - 1);
	struct trd_arp_entry *a = &ip->arp[nh];

	if (a->held >= TRD_ARP_HOLD || ip->n_held >= TRD_ARP_HOLD_LINK) {
		rte_pktmbuf_free(m);
		ip->held_drops++;
		return;
	}
	ip->held[ip->n_held++] = (struct trd_ip_held){.m = m, .rank = r, .nh = nh};
	a->held++;
}

/* Drop the frames held for the next hop @p nh, which does not answer. */
static void
hold_drop(struct trd_link_ip *ip, uint16_t nh)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < ip->n_held; i++) {
		if (ip->held[i].nh != nh) {
			ip->held[j++] = ip->held[i];
			continue;
		}
		rte_pktmbuf_free(ip->held[i].m);
		ip->unresolved++;
	}
	ip->n_held = j;
	ip->arp[nh].held = 0;
}

/* Send the held frames whose next hop is known now, oldest first, each wrapped to its peer
 * and its next hop's MAC; what the port refuses (or what finds no mbuf) stays held, first,
 * and is tried again at the next poll. */
static void
hold_flush(struct trd_link *l)
{
	struct trd_link_cap *cp = __atomic_load_n(&l->cap, __ATOMIC_ACQUIRE);
	struct trd_link_encap *e = l->encap;
	struct trd_link_ip *ip = e->ip;
	struct rte_mbuf *out[TRD_ARP_HOLD_LINK], *rec[TRD_ARP_HOLD_LINK];
	uint16_t at[TRD_ARP_HOLD_LINK];
	uint16_t n = 0, nrec = 0, sent, k = 0;
	uint32_t j = 0;

	ip->flush = false;
	for (uint32_t i = 0; i < ip->n_held; i++) {
		struct trd_ip_held *h = &ip->held[i];
		const struct trd_arp_entry *a = &ip->arp[h->nh];

		if (a->state != TRD_ARP_OK)
			continue;
		if (rte_pktmbuf_mtod(h->m, const uint8_t *)[12] != 0x08) {
			const struct trd_ip_peer *pe = &ip->peers[h->rank];
			struct rte_mbuf *c = trd_encap_one(e, h->m, pe->ip, pe->port);

			if (c == NULL) {
				ip->flush = true; /* no mbuf: the rest at the next poll */
				break;
			}
			rte_pktmbuf_free(h->m);
			h->m = c;
		}
		memcpy(rte_pktmbuf_mtod(h->m, uint8_t *), a->mac.addr_bytes, 6);
		if (!h->recorded) {
			rec[nrec++] = h->m;
			h->recorded = cp != NULL;
		}
		at[n] = (uint16_t)i;
		out[n++] = h->m;
	}
	if (n == 0)
		return;
	if (cp != NULL && nrec != 0)
		trd_capture_frames(cp->c, l, cp->ifname, rec, nrec, true);
	sent = l->ops->tx(l, out, n);
	if (sent < n)
		ip->flush = true;
	/* the port owns the first sent of them: out of the list, the others keep their order */
	for (uint32_t i = 0; i < ip->n_held; i++) {
		if (k < sent && at[k] == i) {
			ip->arp[ip->held[i].nh].held--;
			k++;
			continue;
		}
		ip->held[j++] = ip->held[i];
	}
	ip->n_held = j;
}

void
trd_ip_tick(struct trd_link *l)
{
	struct trd_link_ip *ip = l->encap->ip;
	uint64_t now;

	if (ip->flush)
		hold_flush(l); /* the port refused some last time */
	now = rte_get_timer_cycles();
	if (now < ip->next_tick)
		return;
	ip->next_tick = now + ms_cycles(TICK_MS);
	for (uint32_t i = 0; i < ip->n_arp; i++) {
		struct trd_arp_entry *a = &ip->arp[i];

		if (now < a->next)
			continue;
		switch (a->state) {
		case TRD_ARP_ASKING:
			if (a->tries < ASK_TRIES) {
				arp_request(l, a->ip);
				a->tries++;
				a->next = now + ms_cycles(ASK_MS);
			} else {
				a->state = TRD_ARP_FAILED; /* frames to it are dropped now */
				a->next = now;
				hold_drop(ip, (uint16_t)i);
			}
			break;
		case TRD_ARP_FAILED:
			arp_request(l, a->ip);
			a->next = now + ms_cycles(RETRY_MS);
			break;
		default: /* known: ask again, its reply keeps the MAC current (and tries 0) */
			if (a->tries >= REFRESH_TRIES) {
				/* silent for that long: gone, or moved; asked afresh */
				a->state = TRD_ARP_ASKING;
				a->tries = 0;
				a->next = now;
				break;
			}
			arp_request(l, a->ip);
			a->tries++;
			a->next = now + ms_cycles(REFRESH_MS);
			break;
		}
	}
}

/* A known next hop's MAC changes (a gratuitous ARP, a failover, or a forgery: ARP has no
 * proof, as in the kernel): said in the log, at most once a second per link, so that a link
 * whose frames stop reaching their router can be explained from the log. */
static void
arp_moved(struct trd_link *l, const struct trd_arp_entry *e, const uint8_t *mac)
{
	struct trd_link_ip *ip = l->encap->ip;
	uint64_t now = rte_get_timer_cycles();
	const uint8_t *o = e->mac.addr_bytes;

	if (now < ip->next_moved_log)
		return;
	ip->next_moved_log = now + ms_cycles(1000);
	rte_log(RTE_LOG_WARNING, trd_link_logtype,
		"toroid link: %s: next hop %u.%u.%u.%u moved from %02x:%02x:%02x:%02x:%02x:%02x to "
		"%02x:%02x:%02x:%02x:%02x:%02x (an ARP frame from it says so)\n",
		l->name, e->ip >> 24, (e->ip >> 16) & 0xff, (e->ip >> 8) & 0xff, e->ip & 0xff, o[0],
		o[1], o[2], o[3], o[4], o[5], mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

/* A received ARP frame (RFC 826): a next hop's entry is updated from any valid frame its
 * address sends, for whichever target (a gratuitous one announces a new MAC); a request for
 * our address is answered. Our own MAC as a sender is a loop or a forgery: ignored. */
static void
arp_input(struct trd_link *l, const struct rte_mbuf *m)
{
	struct trd_link_ip *ip = l->encap->ip;
	struct trd_arp a, r;

	if (trd_wire_arp_parse(rte_pktmbuf_mtod(m, const void *), m->data_len, &a) != 0) {
		ip->arp_bad++;
		return;
	}
	if (a.spa == 0 || a.spa == ip->ip || memcmp(a.sha, l->mac.addr_bytes, 6) == 0)
		return; /* a probe, or our own address or MAC as the sender: nothing to learn */
	for (uint32_t i = 0; i < ip->n_arp; i++) {
		struct trd_arp_entry *e = &ip->arp[i];

		if (e->ip != a.spa)
			continue;
		if (e->state != TRD_ARP_OK || memcmp(e->mac.addr_bytes, a.sha, 6) != 0)
			ip->arp_resolved++;
		if (e->state == TRD_ARP_OK && memcmp(e->mac.addr_bytes, a.sha, 6) != 0)
			arp_moved(l, e, a.sha);
		memcpy(e->mac.addr_bytes, a.sha, 6);
		if (e->state != TRD_ARP_OK)
			e->next = rte_get_timer_cycles() + ms_cycles(REFRESH_MS);
		if (e->held != 0)
			ip->flush = true; /* its frames go, at the end of this burst */
		e->state = TRD_ARP_OK;
		e->tries = 0;
		break;
	}
	if (a.op != TRD_ARP_REQUEST || a.tpa != ip->ip)
		return; /* only a request for our address is answered */
	r.op = TRD_ARP_REPLY;
	memcpy(r.sha, l->mac.addr_bytes, 6);
	r.spa = ip->ip;
	memcpy(r.tha, a.sha, 6);
	r.tpa = a.spa;
	if (arp_send(l, a.sha, &r))
		ip->arp_replies++;
}

/* The rank of the node at the coordinate at @p c (3 bytes), or UINT32_MAX. */
static inline uint32_t
coord_rank(const struct trd_link_ip *ip, const uint8_t *c)
{
	if (c[0] >= ip->dims[0] || c[1] >= ip->dims[1] || c[2] >= ip->dims[2])
		return UINT32_MAX;
	return c[0] + (uint32_t)ip->dims[0] * (c[1] + (uint32_t)ip->dims[1] * c[2]);
}

/* Whether the IPv4 frame @p p of @p len bytes is UDP to our address and port: only such a
 * datagram, when bad, counts in encap_drops; the rest is another host's (a switch floods
 * frames to unknown MACs, a broadcast reaches everyone) and is left alone, uncounted. */
static bool
for_us(const struct trd_link_encap *e, const uint8_t *p, uint32_t len)
{
	const uint8_t *iph = p + TRD_ETH_HLEN;
	uint32_t ihl;

	if (len < TRD_ETH_HLEN + 20u || (iph[0] >> 4) != 4)
		return false;
	ihl = (iph[0] & 0xfu) * 4u;
	if (ihl < 20u || len < TRD_ETH_HLEN + ihl + 4u)
		return false;
	return iph[9] == IPPROTO_UDP && memcmp(iph + 16, &e->src_ip, 4) == 0 &&
	       memcmp(iph + ihl + 2, &e->port, 2) == 0;
}

/* The address (network order) the datagram @p m must come from: that of the node its torus
 * header names as the source; 0 if none (too short to name one, outside the torus, a peer
 * without an address). */
static inline uint32_t
peer_src(const struct trd_link_ip *ip, const struct rte_mbuf *m)
{
	uint32_t r;

	if (m->data_len < TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN + TRD_HDR_LEN)
		return 0;
	r = coord_rank(ip, rte_pktmbuf_mtod_offset(m, const uint8_t *,
						   TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN + 4));
	return r < ip->n_peers ? ip->peers[r].ip : 0;
}

uint16_t
trd_ip_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb)
{
	struct trd_link_encap *e = l->encap;
	struct trd_link_ip *ip = e->ip;
	uint16_t out = 0;

	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

		if (m->data_len >= TRD_ETH_HLEN && p[12] == 0x08 && p[13] == 0x06) {
			arp_input(l, m);
			rte_pktmbuf_free(m);
			continue;
		}
		if (m->data_len >= TRD_ETH_HLEN && p[12] == 0x08 && p[13] == 0x00) {
			if (!for_us(e, p, m->data_len)) {
				rte_pktmbuf_free(m); /* another host's traffic on the segment */
				continue;
			}
			/* to our address and port: from the node its torus header names */
			if (!trd_encap_rx_one(e, m, peer_src(ip, m)))
				continue;
		}
		pkts[out++] = m;
	}
	if (ip->flush)
		hold_flush(l); /* a next hop answered: what was held for it goes now */
	return out;
}

/* Put the frames the link took (@p mine) first in the span of @p n frames at @p at in the
 * transmit buffer, with their accounting, the others after them, each group in its order. */
static void
mine_first(struct trd_link *l, uint32_t at, const bool *mine, uint16_t n)
{
	struct rte_mbuf *m[TRD_LINK_SPAN];
	struct trd_pend_info pi[TRD_LINK_SPAN];
	uint16_t k = 0, t = 0;

	for (uint16_t i = 0; i < n; i++) {
		if (mine[i]) {
			l->pend[at + k] = l->pend[at + i];
			l->info[at + k] = l->info[at + i];
			k++;
		} else {
			m[t] = l->pend[at + i];
			pi[t] = l->info[at + i];
			t++;
		}
	}
	memcpy(&l->pend[at + k], m, t * sizeof(m[0]));
	memcpy(&l->info[at + k], pi, t * sizeof(pi[0]));
}

uint16_t
trd_ip_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, uint16_t *taken)
{
	struct trd_link_encap *e = l->encap;
	struct trd_link_ip *ip = e->ip;
	uint32_t at = l->pend_head & TRD_LINK_PEND_MASK;
	/* the span of the transmit buffer trd_link_tx_span() gave: the link may reorder it,
	 * taking frames from its middle; other arrays only from their head */
	bool span = pkts == &l->pend[at], mixed = false;
	bool mine[TRD_LINK_SPAN];
	uint16_t i, k = 0;

	if (ip->flush)
		hold_flush(l); /* older than these frames */
	n = RTE_MIN(n, TRD_LINK_SPAN);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *c;
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		const struct trd_ip_peer *pe;
		const struct trd_arp_entry *a;
		uint32_t r;

		mine[i] = false;
		if (p[12] == 0x08 && p[13] == 0x00)
			continue; /* wrapped already: the port refused it last time */
		r = coord_rank(ip, p + TRD_ETH_HLEN + 8);
		if (r >= ip->n_peers || ip->peers[r].nh == 0)
			continue; /* a peer without an address: a plain frame, to its MAC */
		pe = &ip->peers[r];
		a = &ip->arp[pe->nh - 1];
		if (a->state == TRD_ARP_OK && a->held == 0) {
			c = trd_encap_one(e, m, pe->ip, pe->port);
			if (c == NULL)
				break; /* no mbuf: the rest waits */
			memcpy(rte_pktmbuf_mtod(c, uint8_t *), a->mac.addr_bytes, 6);
			rte_pktmbuf_free(m);
			pkts[i] = c;
			continue;
		}
		/* the link takes it: frames it takes come first in what it returns */
		if (i != k && !span)
			break; /* the rest waits */
		if (a->state == TRD_ARP_FAILED) {
			/* the next hop does not answer: like a wire that loses the frame */
			rte_pktmbuf_free(m);
			ip->unresolved++;
		} else {
			hold(ip, m, r); /* being asked, or its held frames are not all sent */
		}
		mixed |= i != k;
		mine[i] = true;
		k++;
	}
	if (mixed)
		mine_first(l, at, mine, i);
	*taken = k;
	return (uint16_t)(i - k);
}
