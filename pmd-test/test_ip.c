/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switched links over IPv4/UDP (trd_node_set_ip(), trd_node_set_peer_ip()) on net_ring ethdev
 * pairs, polled inline (no busy lcore):
 *  1. two nodes on one subnet resolve each other by ARP (each asks, each answers) and carry
 *     puts both ways byte-exact, one of them to UDP port 40000;
 *  2. a node whose peer is on another subnet, the other end of its port played by this test:
 *     it asks ARP for its gateway, not the peer (the request byte-exact); while nobody answers
 *     its frames wait, then after the bounded tries are dropped and counted; it answers the
 *     gateway's request (the reply byte-exact), learns the gateway's MAC from it and sends
 *     its datagrams to that MAC and the peer's address; malformed ARP and datagrams from the
 *     wrong address, claiming the wrong torus source, or with a bad checksum are dropped and
 *     counted, a well-formed one is not; datagrams for another address or port, or not UDP,
 *     are skipped without counting; a gratuitous ARP from the gateway moves its
 *     datagrams to the new MAC, one naming the node's own MAC is refused;
 *  3. head-of-line: a node with two peers on its subnet, both played by this test, which
 *     answers ARP for one and not (yet) for the other: frames to the silent one are held
 *     (TRD_ARP_HOLD of them, the rest dropped and counted) while a frame to the resolved one
 *     queued behind them leaves at once; when the silent one answers, the held frames leave
 *     in order, byte-exact, to its MAC.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "test_common.h"

#define WAIT_S 5

static struct rte_mempool *pool;

static struct trd_node *
make_node(struct trd_coord c, struct trd_link *l)
{
	/* a peer that never answers is asked for 1 s and more (ARP's tries): not declared down
	 * meanwhile (dead_ms, 1 s by default), which would refuse the puts that follow */
	struct trd_node_conf nc = {.coord = c, .dead_ms = 60000};
	struct trd_node *n;

	trd_torus_init(&nc.torus, 2, 1, 1);
	n = trd_node_create(&nc);
	T_ASSERT(n != NULL, "node: %s", rte_strerror(rte_errno));
	T_EQ(trd_node_add_link(n, l, TRD_DIR_NONE), 0);
	return n;
}

static struct trd_link_stats
lstats(struct trd_node *n)
{
	struct trd_link_stats st;

	T_EQ(trd_link_stats_get(trd_node_link(n, 0), &st), 0);
	return st;
}

static void
dump(struct trd_node *a, struct trd_node *b)
{
	for (int i = 0; i < 2; i++) {
		struct trd_node *n = i ? b : a;
		struct trd_link_stats st;

		if (n == NULL)
			continue;
		st = lstats(n);
		fprintf(stderr,
			"node %d: tx %" PRIu64 " rx %" PRIu64 " arp req %" PRIu64 " rep %" PRIu64
			" resolved %" PRIu64 " bad %" PRIu64 " pending %u encap_drops %" PRIu64
			" unresolved %" PRIu64 "\n",
			i, st.tx_pkts, st.rx_pkts, st.arp_requests, st.arp_replies, st.arp_resolved,
			st.arp_bad, st.arp_pending, st.encap_drops, st.ip_unresolved);
	}
}

/* Poll @p a and @p b (b may be NULL) until @p done or WAIT_S seconds. */
#define POLL_UNTIL(a, b, done)                                                                     \
	do {                                                                                       \
		uint64_t end_ = rte_get_timer_cycles() + WAIT_S * rte_get_timer_hz();              \
		while (!(done)) {                                                                  \
			if (rte_get_timer_cycles() >= end_)                                        \
				dump(a, b);                                                        \
			T_ASSERT(rte_get_timer_cycles() < end_, "timed out waiting for %s",        \
				 #done);                                                           \
			trd_node_poll(a);                                                          \
			if ((b) != NULL)                                                           \
				trd_node_poll(b);                                                  \
		}                                                                                  \
	} while (0)

static int64_t
counter_of(struct trd_node *n, uint16_t id)
{
	int64_t v = -1;

	T_EQ(trd_counter_read(n, id, &v), 0);
	return v;
}

static void
part_pair(void)
{
	struct trd_link *la, *lb;
	struct trd_node *a, *b;
	static uint8_t mem[2][5000], src[5000];
	struct trd_mr *mr[2];
	uint16_t ctr[2];
	struct trd_ip_conf ca = {.ip = RTE_IPV4(10, 1, 0, 2), .prefix = 24};
	struct trd_ip_conf cb = {.ip = RTE_IPV4(10, 1, 0, 3), .prefix = 24, .port = 40000};
	struct trd_link_stats sa, sb;

	T_EQ(trd_link_ethdev_ring_pair("ippair", 1500, &la, &lb), 0);
	a = make_node((struct trd_coord){0, 0, 0}, la);
	b = make_node((struct trd_coord){1, 0, 0}, lb);
	/* bad arguments */
	T_EQ(trd_node_set_peer_ip(a, (struct trd_coord){1, 0, 0}, RTE_IPV4(10, 1, 0, 3), 0),
	     -ENOTSUP);
	T_EQ(trd_node_set_ip(a, NULL), -EINVAL);
	T_EQ(trd_node_set_ip(a, &(struct trd_ip_conf){.ip = 0}), -EINVAL);
	T_EQ(trd_node_set_ip(a, &(struct trd_ip_conf){.ip = 0xe0000001u} /* 224.0.0.1 */), -EINVAL);
	T_EQ(trd_node_set_ip(a, &(struct trd_ip_conf){.ip = RTE_IPV4(10, 0, 0, 1), .prefix = 33}),
	     -EINVAL);
	T_EQ(trd_node_set_ip(a, &(struct trd_ip_conf){.ip = RTE_IPV4(10, 0, 0, 1),
						      .gateway = RTE_IPV4(10, 0, 0, 1)}),
	     -EINVAL);
	T_EQ(trd_node_set_ip(a, &ca), 0);
	T_EQ(trd_node_set_ip(b, &cb), 0);
	T_EQ(trd_node_set_peer_ip(a, (struct trd_coord){0, 0, 0}, RTE_IPV4(10, 1, 0, 3), 0),
	     -EINVAL); /* itself */
	T_EQ(trd_node_set_peer_ip(a, (struct trd_coord){2, 0, 0}, RTE_IPV4(10, 1, 0, 3), 0),
	     -EINVAL); /* outside the torus */
	T_EQ(trd_node_set_peer_ip(a, (struct trd_coord){1, 0, 0}, 0, 0), -EINVAL);
	T_EQ(trd_node_set_peer_ip(a, (struct trd_coord){1, 0, 0}, RTE_IPV4(10, 1, 0, 3), 40000), 0);
	T_EQ(trd_node_set_peer_ip(b, (struct trd_coord){0, 0, 0}, RTE_IPV4(10, 1, 0, 2), 0), 0);
	T_EQ(trd_link_max_payload(la), 1500 - TRD_UDP_ENCAP_LEN - TRD_HDR_LEN - TRD_PROOF_LEN);

	/* each asks for the other, each answers the other's request */
	POLL_UNTIL(a, b, lstats(a).arp_pending == 0 && lstats(b).arp_pending == 0);
	sa = lstats(a);
	sb = lstats(b);
	T_ASSERT(sa.ip && sb.ip, "IP links");
	T_EQ(sa.arp_resolved, 1);
	T_EQ(sb.arp_resolved, 1);
	T_ASSERT(sa.arp_requests >= 1 && sa.arp_replies >= 1 && sb.arp_requests >= 1 &&
			 sb.arp_replies >= 1,
		 "requests %" PRIu64 "/%" PRIu64 " replies %" PRIu64 "/%" PRIu64, sa.arp_requests,
		 sb.arp_requests, sa.arp_replies, sb.arp_replies);

	test_fill(src, sizeof(src), 9);
	for (int i = 0; i < 2; i++) {
		struct trd_node *n = i ? b : a;

		mr[i] = trd_mr_register(n, mem[i], sizeof(mem[i]), TRD_ACCESS_ALL);
		T_ASSERT(mr[i] != NULL, "region");
		T_EQ(trd_counter_alloc(n, &ctr[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		struct trd_node *from = i ? b : a, *to = i ? a : b;
		int t = 1 - i;
		struct trd_desc d;

		T_EQ(trd_counter_set(to, ctr[t], sizeof(src)), 0);
		trd_desc_put(&d, trd_node_coord(to), src, sizeof(src), trd_mr_key(mr[t]), 0, 0,
			     ctr[t]);
		T_EQ(trd_inject(trd_inj_fifo(from, 0), &d), 0);
		POLL_UNTIL(a, b, counter_of(to, ctr[t]) == 0);
		T_ASSERT(memcmp(mem[t], src, sizeof(src)) == 0, "put %d->%d byte-exact", i, t);
	}
	sa = lstats(a);
	sb = lstats(b);
	T_EQ(sa.encap_drops, 0);
	T_EQ(sb.encap_drops, 0);
	T_EQ(sa.ip_unresolved + sb.ip_unresolved + sa.arp_bad + sb.arp_bad, 0);
	trd_node_free(a);
	trd_node_free(b);
	printf("ip: a pair on one subnet resolved each other and carried puts both ways\n");
}

/* Frames out of the test's end of the port, up to @p max, waiting up to WAIT_S for one. */
static uint16_t
take(uint16_t port, struct trd_node *n, struct rte_mbuf **m, uint16_t max)
{
	uint64_t end = rte_get_timer_cycles() + WAIT_S * rte_get_timer_hz();
	uint16_t k;

	while ((k = rte_eth_rx_burst(port, 0, m, max)) == 0) {
		T_ASSERT(rte_get_timer_cycles() < end, "no frame from the node");
		trd_node_poll(n);
	}
	return k;
}

static void
give(uint16_t port, const void *frame, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	T_ASSERT(m != NULL, "mbuf");
	memcpy(rte_pktmbuf_append(m, len), frame, len);
	T_EQ(rte_eth_tx_burst(port, 0, &m, 1), 1);
}

/* Inject @p d at @p n and return, in @p dst, the destination MAC of the first datagram out. */
static void
datagram_to(uint16_t port, struct trd_node *n, const struct trd_desc *d, uint8_t dst[6])
{
	struct rte_mbuf *m[64];
	bool got = false;

	T_EQ(trd_inject(trd_inj_fifo(n, 0), d), 0);
	while (!got) {
		uint16_t k = take(port, n, m, RTE_DIM(m));

		for (uint16_t i = 0; i < k; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *);

			if (p[12] == 0x08 && p[13] == 0x00 && !got) {
				memcpy(dst, p, 6);
				got = true;
			}
		}
		rte_pktmbuf_free_bulk(m, k);
	}
}

static void
part_gateway(void)
{
	static const uint8_t gw_mac[6] = {0x02, 0x47, 0x57, 0x00, 0x00, 0x01};
	struct trd_ip_conf c = {
		.ip = RTE_IPV4(10, 1, 0, 2), .prefix = 24, .gateway = RTE_IPV4(10, 1, 0, 1)};
	struct trd_link *la, *lt;
	struct trd_node *a;
	struct rte_mbuf *m[64];
	uint8_t want[TRD_ARP_FRAME_LEN], frame[256], dgram[256], amac[6];
	uint16_t tport, k, dlen = 0;
	unsigned int requests = 0;
	struct trd_link_stats st, st0;
	struct trd_node_stats ns0, ns1;
	uint64_t rx0 = 0, rx1 = 0;
	struct trd_desc d;
	static uint8_t src[64];

	T_EQ(trd_link_ethdev_ring_pair("ipgw", 1500, &la, &lt), 0);
	tport = (uint16_t)trd_link_port(lt);
	a = make_node((struct trd_coord){0, 0, 0}, la);
	T_EQ(trd_node_set_ip(a, &c), 0);
	T_EQ(trd_node_set_peer_ip(a, (struct trd_coord){1, 0, 0}, RTE_IPV4(10, 2, 0, 3), 0), 0);
	{
		/* net_ring ports have no MAC: the link made one up, and sends from it; take it
		 * from the request below */
		k = take(tport, a, m, 1);
		memcpy(amac, rte_pktmbuf_mtod(m[0], const uint8_t *) + 6, 6);
		rte_pktmbuf_free(m[0]);
		requests++;
		T_ASSERT((amac[0] & 3) == 2, "a locally administered unicast MAC");
	}

	/* the request is for the gateway, byte-exact */
	{
		struct trd_arp q = {.op = TRD_ARP_REQUEST,
				    .spa = RTE_IPV4(10, 1, 0, 2),
				    .tpa = RTE_IPV4(10, 1, 0, 1)};
		const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

		memcpy(q.sha, amac, 6);
		T_EQ(trd_wire_arp_build(want, sizeof(want), bc, &q), TRD_ARP_FRAME_LEN);
	}
	/* a put to the peer: its frames are held while the gateway is asked, then dropped */
	trd_desc_put(&d, (struct trd_coord){1, 0, 0}, src, sizeof(src), 1, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	for (;;) {
		k = take(tport, a, m, RTE_DIM(m));
		for (uint16_t i = 0; i < k; i++) {
			T_EQ(m[i]->data_len, TRD_ARP_FRAME_LEN);
			T_ASSERT(memcmp(rte_pktmbuf_mtod(m[i], void *), want, sizeof(want)) == 0,
				 "ARP request %u byte-exact", requests);
			requests++;
		}
		rte_pktmbuf_free_bulk(m, k);
		st = lstats(a);
		if (st.ip_unresolved > 0)
			break;
		/* nothing but ARP left the port while asking: the link took the frames, held */
		T_EQ(st.tx_pkts, st.ip_held + st.ip_held_drops);
	}
	T_ASSERT(requests >= 5 && requests <= 6, "%u requests before giving up (5, bounded)",
		 requests);
	T_EQ(st.arp_pending, 1);
	T_EQ(st.ip_held, 0); /* given up: what was held is dropped */

	/* the gateway asks for us: we answer byte-exact, and learn its MAC from the request */
	{
		struct trd_arp q = {.op = TRD_ARP_REQUEST,
				    .spa = RTE_IPV4(10, 1, 0, 1),
				    .tpa = RTE_IPV4(10, 1, 0, 2)};
		struct trd_arp r = {.op = TRD_ARP_REPLY,
				    .spa = RTE_IPV4(10, 1, 0, 2),
				    .tpa = RTE_IPV4(10, 1, 0, 1)};
		const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
		bool replied = false;

		memcpy(q.sha, gw_mac, 6);
		memcpy(r.sha, amac, 6);
		memcpy(r.tha, gw_mac, 6);
		T_EQ(trd_wire_arp_build(frame, sizeof(frame), bc, &q), TRD_ARP_FRAME_LEN);
		T_EQ(trd_wire_arp_build(want, sizeof(want), gw_mac, &r), TRD_ARP_FRAME_LEN);
		st0 = lstats(a);
		give(tport, frame, 42); /* unpadded, as a kernel may send it */
		while (!replied) {
			k = take(tport, a, m, RTE_DIM(m));
			for (uint16_t i = 0; i < k; i++) {
				const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *);

				if (p[12] == 0x08 && p[13] == 0x06 && p[21] == 2) {
					T_EQ(m[i]->data_len, TRD_ARP_FRAME_LEN);
					T_ASSERT(memcmp(p, want, sizeof(want)) == 0,
						 "ARP reply byte-exact");
					replied = true;
				} else if (p[12] == 0x08 && p[13] == 0x00 && dlen == 0) {
					dlen = m[i]->data_len;
					memcpy(dgram, p, RTE_MIN(dlen, sizeof(dgram)));
				}
			}
			rte_pktmbuf_free_bulk(m, k);
		}
		st = lstats(a);
		T_EQ(st.arp_replies, st0.arp_replies + 1);
		T_EQ(st.arp_resolved, 1);
		T_EQ(st.arp_pending, 0);
	}
	/* now frames to the peer leave as datagrams, to the gateway's MAC */
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	while (dlen == 0) {
		k = take(tport, a, m, RTE_DIM(m));
		for (uint16_t i = 0; i < k; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *);

			if (p[12] == 0x08 && p[13] == 0x00 && dlen == 0) {
				dlen = m[i]->data_len;
				memcpy(dgram, p, RTE_MIN(dlen, sizeof(dgram)));
			}
		}
		rte_pktmbuf_free_bulk(m, k);
	}
	T_ASSERT(dlen >= 14 + 28 + TRD_HDR_LEN && dlen <= sizeof(dgram), "datagram of %u B", dlen);
	T_ASSERT(memcmp(dgram, gw_mac, 6) == 0 && memcmp(dgram + 6, amac, 6) == 0,
		 "to the gateway's MAC, from the port's");
	T_EQ(trd_wire_udp_check(dgram, dlen, TRD_UDP_PORT), 0);
	{
		const uint8_t want_ips[8] = {10, 1, 0, 2, 10, 2, 0, 3};

		T_ASSERT(memcmp(dgram + 26, want_ips, 8) == 0, "from 10.1.0.2 to 10.2.0.3");
		T_EQ(dgram[22], 64); /* TTL */
	}

	/* gratuitous ARP (RFC 826): the gateway announces a new MAC (spa = tpa = its address);
	 * the entry moves, nothing is answered; one naming our own MAC as sender is refused */
	{
		static const uint8_t new_mac[6] = {0x02, 0x47, 0x57, 0x00, 0x00, 0x02};
		struct trd_arp g = {.op = TRD_ARP_REQUEST,
				    .spa = RTE_IPV4(10, 1, 0, 1),
				    .tpa = RTE_IPV4(10, 1, 0, 1)};
		const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
		uint8_t to[6];

		st0 = lstats(a);
		memcpy(g.sha, amac, 6);
		g.tpa = RTE_IPV4(10, 1, 0, 2); /* even asking for us */
		T_EQ(trd_wire_arp_build(frame, sizeof(frame), bc, &g), TRD_ARP_FRAME_LEN);
		give(tport, frame, TRD_ARP_FRAME_LEN);
		datagram_to(tport, a, &d, to);
		T_ASSERT(memcmp(to, gw_mac, 6) == 0, "a sender with our own MAC refused");
		T_EQ(lstats(a).arp_resolved, st0.arp_resolved);
		g.tpa = RTE_IPV4(10, 1, 0, 1);
		memcpy(g.sha, new_mac, 6);
		T_EQ(trd_wire_arp_build(frame, sizeof(frame), bc, &g), TRD_ARP_FRAME_LEN);
		give(tport, frame, TRD_ARP_FRAME_LEN);
		POLL_UNTIL(a, NULL, lstats(a).arp_resolved == st0.arp_resolved + 1);
		while ((k = rte_eth_rx_burst(tport, 0, m, RTE_DIM(m))) != 0)
			rte_pktmbuf_free_bulk(m, k); /* sent before: to the old MAC */
		datagram_to(tport, a, &d, to);
		T_ASSERT(
			memcmp(to, new_mac, 6) == 0,
			"after a gratuitous ARP: to %02x:%02x:%02x:%02x:%02x:%02x, not the new MAC",
			to[0], to[1], to[2], to[3], to[4], to[5]);
		st = lstats(a);
		T_EQ(st.arp_resolved, st0.arp_resolved + 1);
		T_EQ(st.arp_replies, st0.arp_replies);
		T_EQ(st.arp_bad, st0.arp_bad);
	}

	/* untrusted input: each bad frame is dropped and counted once */
	T_EQ(trd_node_stats_get(a, &ns0), 0);
	st0 = lstats(a);
	{
		uint8_t f[256];
		struct trd_arp q = {.op = TRD_ARP_REQUEST,
				    .spa = RTE_IPV4(10, 1, 0, 1),
				    .tpa = RTE_IPV4(10, 1, 0, 2)};
		const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
		const uint8_t mc[6] = {0x03, 0, 0, 0, 0, 1};

		memcpy(q.sha, gw_mac, 6);
		/* ARP: protocol length 6; truncated; a multicast sender; and one for another
		 * address (valid: neither answered nor counted) */
		trd_wire_arp_build(f, sizeof(f), bc, &q);
		f[19] = 6;
		give(tport, f, 60);
		trd_wire_arp_build(f, sizeof(f), bc, &q);
		give(tport, f, 40);
		memcpy(q.sha, mc, 6);
		trd_wire_arp_build(f, sizeof(f), bc, &q);
		give(tport, f, 60);
		memcpy(q.sha, gw_mac, 6);
		q.tpa = RTE_IPV4(10, 1, 0, 77);
		trd_wire_arp_build(f, sizeof(f), bc, &q);
		give(tport, f, 60);
	}
	{
		/* datagrams "from the peer": the one the node sent, turned round */
		uint8_t f[256];
		struct rte_ipv4_hdr *ih = (struct rte_ipv4_hdr *)(f + 14);

#define TURN()                                                                                     \
	do {                                                                                       \
		memcpy(f, dgram, dlen);                                                            \
		memcpy(f, amac, 6);                                                                \
		memcpy(f + 6, gw_mac, 6);                                                          \
		ih->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 2, 0, 3));                            \
		ih->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 1, 0, 2));                            \
		f[42 + 4] = 1; /* torus source: node 1 (1,0,0) */                                  \
		f[42 + 8] = 0; /* destination: node 0 */                                           \
	} while (0)
#define SEND()                                                                                     \
	do {                                                                                       \
		ih->hdr_checksum = 0;                                                              \
		ih->hdr_checksum = rte_ipv4_cksum(ih);                                             \
		give(tport, f, dlen);                                                              \
	} while (0)
		TURN();
		ih->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 9, 9, 9)); /* a stranger */
		SEND();
		TURN();
		f[42 + 4] = 0; /* claims to be from node 0, whose address is not 10.2.0.3 */
		SEND();
		TURN();
		/* not ours (to another address or port, or not UDP): skipped, not counted */
		ih->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 1, 0, 99));
		SEND();
		TURN();
		f[36] = 0x88; /* UDP port 35000 */
		f[37] = 0xb8;
		SEND();
		TURN();
		f[14 + 9] = 1; /* ICMP, to us */
		SEND();
		TURN();
		ih->hdr_checksum = 0;
		ih->hdr_checksum = (uint16_t)(rte_ipv4_cksum(ih) ^ 1);
		give(tport, f, dlen); /* a bad header checksum */
		/* and a good wrapper: accepted by the link (its torus header, rewritten without
		 * its checksum, is the node's to refuse) */
		TURN();
		SEND();
#undef TURN
#undef SEND
	}
	/* frames the node received (its drops count its own traffic to the peer never played
	 * here too, declared down) */
	rx0 = ns0.stat[TRD_STAT_RX_PKTS];
	{
		uint64_t end = rte_get_timer_cycles() + WAIT_S * rte_get_timer_hz();

		do {
			T_ASSERT(rte_get_timer_cycles() < end, "the bad frames were not counted");
			trd_node_poll(a);
			st = lstats(a);
			T_EQ(trd_node_stats_get(a, &ns1), 0);
			rx1 = ns1.stat[TRD_STAT_RX_PKTS];
		} while (st.arp_bad - st0.arp_bad < 3 || st.encap_drops - st0.encap_drops < 3 ||
			 rx1 == rx0);
	}
	T_EQ(st.arp_bad - st0.arp_bad, 3);
	T_EQ(st.encap_drops - st0.encap_drops, 3); /* only the bad ones to us */
	T_EQ(rx1 - rx0, 1);                        /* the good wrapper reached the node */
	T_EQ(st.arp_replies, st0.arp_replies);     /* nothing answered for 10.1.0.77 */
	while ((k = rte_eth_rx_burst(tport, 0, m, RTE_DIM(m))) != 0)
		rte_pktmbuf_free_bulk(m, k);
	trd_node_free(a);
	trd_link_free(lt);
	printf("ip: gateway asked (%u requests, then frames dropped: %" PRIu64
	       "), its request answered, datagrams to its MAC; 3 bad ARP and 3 bad datagrams "
	       "counted, 3 for others skipped\n",
	       requests, st.ip_unresolved);
}

/* Answer from @p mac at @p ip the ARP request @p q that came out of @p port. */
static void
arp_answer(uint16_t port, const struct trd_arp *q, const uint8_t mac[6], uint32_t ip)
{
	struct trd_arp r = {.op = TRD_ARP_REPLY, .spa = ip, .tpa = q->spa};
	uint8_t f[TRD_ARP_FRAME_LEN];

	memcpy(r.sha, mac, 6);
	memcpy(r.tha, q->sha, 6);
	T_EQ(trd_wire_arp_build(f, sizeof(f), q->sha, &r), TRD_ARP_FRAME_LEN);
	give(port, f, sizeof(f));
}

/* The datagram @p p of @p len bytes is to @p mac and @p ip, well formed, from 10.1.0.2. */
static void
check_datagram(const uint8_t *p, uint16_t len, const uint8_t mac[6], uint32_t ip)
{
	uint32_t to = rte_cpu_to_be_32(ip), from = rte_cpu_to_be_32(RTE_IPV4(10, 1, 0, 2));

	T_ASSERT(memcmp(p, mac, 6) == 0, "to %02x:%02x:%02x:%02x:%02x:%02x, not the next hop's MAC",
		 p[0], p[1], p[2], p[3], p[4], p[5]);
	T_EQ(trd_wire_udp_check(p, len, TRD_UDP_PORT), 0);
	T_ASSERT(memcmp(p + 26, &from, 4) == 0 && memcmp(p + 30, &to, 4) == 0,
		 "from 10.1.0.2 to the peer's address");
}

static void
part_hol(void)
{
	static const uint8_t b_mac[6] = {0x02, 0x47, 0x57, 0x00, 0x00, 0x0b};
	static const uint8_t c_mac[6] = {0x02, 0x47, 0x57, 0x00, 0x00, 0x0c};
	const uint32_t b_ip = RTE_IPV4(10, 1, 0, 3), c_ip = RTE_IPV4(10, 1, 0, 4);
	const struct trd_coord bc = {1, 0, 0}, cc = {2, 0, 0};
	static uint8_t big[100 * 1400], small[64];
	/* unreliable: every frame counted exactly, none resent */
	struct trd_node_conf nc = {.coord = {0, 0, 0}, .dead_ms = 60000, .unreliable = true};
	struct trd_ip_conf conf = {.ip = RTE_IPV4(10, 1, 0, 2), .prefix = 24};
	struct trd_link *la, *lt;
	struct trd_node *a;
	struct rte_mbuf *m[64];
	struct trd_link_stats st;
	struct trd_arp q;
	struct trd_desc d;
	uint8_t amac[6];
	uint16_t tport, k;
	uint32_t pay, nframes, to_c = 0;
	uint64_t off = 0, t0, waited_us;
	bool got_b = false, asked_b = false;

	T_EQ(trd_link_ethdev_ring_pair("iphol", 1500, &la, &lt), 0);
	tport = (uint16_t)trd_link_port(lt);
	trd_torus_init(&nc.torus, 3, 1, 1);
	a = trd_node_create(&nc);
	T_ASSERT(a != NULL, "node: %s", rte_strerror(rte_errno));
	T_EQ(trd_node_add_link(a, la, TRD_DIR_NONE), 0);
	T_EQ(trd_node_set_ip(a, &conf), 0);
	T_EQ(trd_node_set_peer_ip(a, bc, b_ip, 0), 0);
	T_EQ(trd_node_set_peer_ip(a, cc, c_ip, 0), 0);
	pay = trd_link_max_payload(la);
	nframes = (uint32_t)((sizeof(big) + pay - 1) / pay);
	T_ASSERT(nframes > TRD_ARP_HOLD, "%u frames: more than a next hop holds", nframes);

	/* the node asks for both next hops; b answers, c stays silent */
	while (!asked_b) {
		k = take(tport, a, m, RTE_DIM(m));
		for (uint16_t i = 0; i < k; i++) {
			T_EQ(trd_wire_arp_parse(rte_pktmbuf_mtod(m[i], const void *),
						m[i]->data_len, &q),
			     0);
			T_EQ(q.op, TRD_ARP_REQUEST);
			memcpy(amac, q.sha, 6);
			if (q.tpa == b_ip && !asked_b) {
				arp_answer(tport, &q, b_mac, b_ip);
				asked_b = true;
			}
		}
		rte_pktmbuf_free_bulk(m, k);
	}
	POLL_UNTIL(a, NULL, lstats(a).arp_resolved == 1);
	T_EQ(lstats(a).arp_pending, 1);

	/* a put to c, more frames than it may hold, then one frame to b queued behind them */
	test_fill(big, sizeof(big), 5);
	test_fill(small, sizeof(small), 6);
	trd_desc_put(&d, cc, big, sizeof(big), 1, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	trd_desc_put(&d, bc, small, sizeof(small), 1, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	t0 = rte_get_timer_cycles();
	while (!got_b) {
		k = take(tport, a, m, RTE_DIM(m));
		for (uint16_t i = 0; i < k; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *);

			if (p[12] == 0x08 && p[13] == 0x06)
				continue; /* asking for c again */
			T_ASSERT(p[12] == 0x08 && p[13] == 0x00, "a datagram");
			check_datagram(p, m[i]->data_len, b_mac, b_ip); /* nothing to c */
			got_b = true;
		}
		rte_pktmbuf_free_bulk(m, k);
	}
	waited_us = (rte_get_timer_cycles() - t0) * 1000000 / rte_get_timer_hz();
	/* b's frame did not wait for c's ARP: c is still asked, none of its frames given up */
	st = lstats(a);
	T_EQ(st.arp_pending, 1);
	T_EQ(st.ip_unresolved, 0);
	T_EQ(st.ip_held, TRD_ARP_HOLD);
	T_EQ(st.ip_held_drops, nframes - TRD_ARP_HOLD);
	T_EQ(st.tx_pkts, nframes + 1); /* taken: held, dropped, and b's */
	T_EQ(st.pending, 0);

	/* c answers at last: what was held leaves, oldest first, byte-exact, to its MAC */
	{
		struct trd_arp cq = {.op = TRD_ARP_REQUEST, .spa = conf.ip, .tpa = c_ip};

		memcpy(cq.sha, amac, 6); /* the node's MAC, as its requests named it */
		arp_answer(tport, &cq, c_mac, c_ip);
	}
	while (to_c < TRD_ARP_HOLD) {
		k = take(tport, a, m, RTE_DIM(m));
		for (uint16_t i = 0; i < k; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *);
			const uint8_t *h = p + 14 + TRD_UDP_ENCAP_LEN;
			uint64_t o = 0;
			uint16_t pl;

			if (p[12] == 0x08 && p[13] == 0x06)
				continue;
			check_datagram(p, m[i]->data_len, c_mac, c_ip);
			for (int b = 0; b < 8; b++)
				o = o << 8 | h[24 + b];
			pl = (uint16_t)(h[36] << 8 | h[37]);
			T_ASSERT(o == off, "held frame %u at offset %" PRIu64 ", not %" PRIu64,
				 to_c, o, off);
			T_ASSERT(pl > 0 && off + pl <= sizeof(big) &&
					 memcmp(h + TRD_HDR_LEN, big + off, pl) == 0,
				 "held frame %u byte-exact", to_c);
			off += pl;
			to_c++;
		}
		rte_pktmbuf_free_bulk(m, k);
	}
	T_EQ(to_c, TRD_ARP_HOLD); /* all in one go: nothing else came with them */
	T_EQ(off, (uint64_t)TRD_ARP_HOLD * pay);
	st = lstats(a);
	T_EQ(st.ip_held, 0);
	T_EQ(st.arp_pending, 0);
	T_EQ(st.ip_unresolved, 0);
	T_EQ(st.ip_held_drops, nframes - TRD_ARP_HOLD);
	/* and the dropped ones stay dropped (an unreliable node does not resend) */
	for (int i = 0; i < 100; i++)
		trd_node_poll(a);
	while ((k = rte_eth_rx_burst(tport, 0, m, RTE_DIM(m))) != 0) {
		for (uint16_t i = 0; i < k; i++)
			T_ASSERT(rte_pktmbuf_mtod(m[i], const uint8_t *)[13] == 0x06,
				 "nothing but ARP after the held frames");
		rte_pktmbuf_free_bulk(m, k);
	}
	trd_node_free(a);
	trd_link_free(lt);
	printf("ip: a frame to a resolved next hop left %.2f ms after a put to one being asked "
	       "(%u frames held, %u dropped), which left in order once it answered\n",
	       (double)waited_us / 1000.0, TRD_ARP_HOLD, nframes - TRD_ARP_HOLD);
}

int
main(int argc, char **argv)
{
	RTE_SET_USED(argc);
	test_eal_init(argv[0], NULL);
	pool = rte_pktmbuf_pool_create("test_ip", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	T_ASSERT(pool != NULL, "pool");
	part_pair();
	part_gateway();
	part_hol();
	rte_eal_cleanup();
	return 0;
}
