/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding along dimension-order routes, per-link counters, hop limit and per-flow order,
 * and nodes built from topology files. One engine lcore serves every node; the main thread
 * posts and checks. Modes (argument 1):
 *
 *  ethdev   a direct-link 2x2x2 torus on net_ring ethdev ports (24 ports);
 *  ring     a direct-link 3x3x3 torus on the engine's ring links (27 nodes, 162 link ends);
 *           in both: an unreliable pass where a put between every ordered pair arrives
 *           byte-exact and every link's tx/rx/fwd counters equal what the routes predict
 *           (trd_torus_route(): each put of P packets adds P to tx of every link it leaves
 *           by, P to rx of every link it arrives by, P to fwd of every link it leaves an
 *           intermediate node by), and FIFO messages of many multi-hop flows arrive in order
 *           per flow; then a reliable pass (sequence numbers, acks, DONEs) checks bytes only.
 *           ring also injects hand-made packets with a small hop limit: each is dropped
 *           (hop_limit) at exactly the node where its limit runs out, after exactly the
 *           forwards it was allowed;
 *  topo-direct DIR    DIR/3x3x3-direct.ini as an in-process net (trd_net_from_topo()), and
 *           DIR/2x2x2-direct.ini node by node (trd_node_from_topo()) on net_ring ports cabled
 *           as the file says: every pair byte-exact, counters exact;
 *  topo-switched DIR  DIR/2x2x2-switched.ini node by node, each on one net_ring port whose
 *           far end is a port of a software switch run by this program (frames go where
 *           their destination MAC, the file's, says): every pair byte-exact, one hop each;
 *  bench DIR [ITERS [unreliable]]  put ping-pong latency from node 0 to nodes 1..4 hops away
 *           along the ring of DIR/8x1x1-direct.ini: the cost of a forwarding hop (not in CI).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <toroid/topo_net.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define MAXN       27
#define SLOT       32768 /* each source's area in a destination's region */
#define TIMEOUT_US 20000000
#define GUARD      0x5A

/* A torus under test: nodes by torus rank, their direction links, memory and counters. */
struct tnet {
	unsigned int n;
	struct trd_torus t;
	struct trd_node *nd[MAXN];
	struct trd_link *dl[MAXN][TRD_DIR_COUNT];
	uint8_t *mem[MAXN];
	struct trd_mr *mr[MAXN];
	uint16_t ictr[MAXN], rctr[MAXN];
	uint8_t *src[MAXN];
	/* expected link counters */
	uint64_t tx[MAXN][TRD_DIR_COUNT], rx[MAXN][TRD_DIR_COUNT], fwd[MAXN][TRD_DIR_COUNT];
};

static uint64_t seed = 0xF0F0F0F;
static void (*idle_fn)(void); /* run while waiting (the software switch) */

static void
idle(void)
{
	if (idle_fn != NULL)
		idle_fn();
}

/* Wait until a counter is zero, running idle() meanwhile. */
static void
ctr_wait(struct trd_node *n, uint16_t id, const char *what)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;
	int64_t v;

	for (;;) {
		T_EQ(trd_counter_read(n, id, &v), 0);
		T_ASSERT(v >= 0, "%s: counter below zero (%" PRId64 ")", what, v);
		if (v == 0)
			return;
		T_ASSERT(trd_time_us() < deadline, "%s: timed out (%" PRId64 " left)", what, v);
		idle();
	}
}

/* The receiving direction of a cable left by direction @p d: the opposite one, except on an
 * axis of size 2 where the single cable joins the + ports. */
static enum trd_dir
arrival_dir(const struct trd_torus *t, enum trd_dir d)
{
	return t->dim[d / 2] == 2 ? d : trd_dir_opposite(d);
}

/* Regions, counters and the direction -> link map of every node. */
static void
tnet_prepare(struct tnet *T)
{
	unsigned int ends = 0;

	for (unsigned int r = 0; r < T->n; r++) {
		struct trd_node *nd = T->nd[r];

		T_ASSERT(nd != NULL, "node %u", r);
		memset(T->dl[r], 0, sizeof(T->dl[r]));
		for (unsigned int i = 0; i < trd_node_n_links(nd); i++) {
			struct trd_link *l = trd_node_link(nd, i);
			struct trd_link_stats st;

			T_EQ(trd_link_stats_get(l, &st), 0);
			if (st.dir == TRD_DIR_NONE)
				continue;
			T_ASSERT(T->dl[r][st.dir] == NULL, "node %u: two links %s", r,
				 trd_dir_name(st.dir));
			T->dl[r][st.dir] = l;
			ends++;
		}
		T->mem[r] = malloc((size_t)T->n * SLOT);
		T->src[r] = malloc((size_t)T->n * SLOT);
		T_ASSERT(T->mem[r] != NULL && T->src[r] != NULL, "malloc");
		T->mr[r] = trd_mr_register(nd, T->mem[r], (size_t)T->n * SLOT, TRD_ACCESS_ALL);
		T_ASSERT(T->mr[r] != NULL, "mr_register");
		T_EQ(trd_counter_alloc(nd, &T->ictr[r]), 0);
		T_EQ(trd_counter_alloc(nd, &T->rctr[r]), 0);
	}
	/* every node has a link for each neighbour it has */
	{
		unsigned int want = 0;

		for (unsigned int r = 0; r < T->n; r++) {
			struct trd_coord c, nb[6];
			enum trd_dir dirs[6];
			int k;

			trd_torus_coord(&T->t, r, &c);
			k = trd_torus_neighbours(&T->t, c, nb, dirs);
			for (int i = 0; i < k; i++)
				T_ASSERT(T->dl[r][dirs[i]] != NULL, "node %u: no link %s", r,
					 trd_dir_name(dirs[i]));
			want += (unsigned int)k;
		}
		T_EQ(ends, want);
	}
	memset(T->tx, 0, sizeof(T->tx));
	memset(T->rx, 0, sizeof(T->rx));
	memset(T->fwd, 0, sizeof(T->fwd));
}

static void
tnet_release(struct tnet *T)
{
	for (unsigned int r = 0; r < T->n; r++) {
		trd_mr_deregister(T->mr[r]);
		free(T->mem[r]);
		free(T->src[r]);
	}
}

/* Add the packets of a put a -> b to the links its route crosses. */
static void
account(struct tnet *T, unsigned int a, unsigned int b, uint64_t pkts)
{
	struct trd_coord ca, cb, path[3 * TRD_TORUS_MAX_DIM / 2], prev;
	int hops;

	trd_torus_coord(&T->t, a, &ca);
	trd_torus_coord(&T->t, b, &cb);
	hops = trd_torus_route(&T->t, ca, cb, path, RTE_DIM(path));
	T_ASSERT(hops >= 0, "route");
	prev = ca;
	for (int k = 0; k < hops; k++) {
		unsigned int u = (unsigned int)trd_torus_rank(&T->t, prev);
		unsigned int v = (unsigned int)trd_torus_rank(&T->t, path[k]);
		enum trd_dir d;

		T_EQ(trd_torus_next_hop(&T->t, prev, cb, &d), 0);
		T->tx[u][d] += pkts;
		if (u != a)
			T->fwd[u][d] += pkts;
		T->rx[v][arrival_dir(&T->t, d)] += pkts;
		prev = path[k];
	}
}

/* Wait until every link has counted at least what is expected, then compare exactly. */
static void
check_counters(struct tnet *T, const char *what)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US, links = 0, pkts = 0, fwds = 0;

	for (unsigned int r = 0; r < T->n; r++)
		for (int d = 0; d < TRD_DIR_COUNT; d++) {
			struct trd_link_stats st;

			if (T->dl[r][d] == NULL) {
				T_ASSERT(T->tx[r][d] == 0 && T->rx[r][d] == 0,
					 "traffic expected on a missing link");
				continue;
			}
			for (;;) {
				T_EQ(trd_link_stats_get(T->dl[r][d], &st), 0);
				if (st.tx_pkts >= T->tx[r][d] && st.rx_pkts >= T->rx[r][d] &&
				    st.fwd_pkts >= T->fwd[r][d])
					break;
				T_ASSERT(trd_time_us() < deadline,
					 "%s: node %u link %s: tx %" PRIu64 "/%" PRIu64
					 " rx %" PRIu64 "/%" PRIu64 " fwd %" PRIu64 "/%" PRIu64,
					 what, r, trd_dir_name(d), st.tx_pkts, T->tx[r][d],
					 st.rx_pkts, T->rx[r][d], st.fwd_pkts, T->fwd[r][d]);
				idle();
			}
			T_ASSERT(st.tx_pkts == T->tx[r][d] && st.rx_pkts == T->rx[r][d] &&
					 st.fwd_pkts == T->fwd[r][d],
				 "%s: node %u link %s: tx %" PRIu64 " (want %" PRIu64
				 "), rx %" PRIu64 " (want %" PRIu64 "), fwd %" PRIu64
				 " (want %" PRIu64 ")",
				 what, r, trd_dir_name(d), st.tx_pkts, T->tx[r][d], st.rx_pkts,
				 T->rx[r][d], st.fwd_pkts, T->fwd[r][d]);
			links++;
			pkts += st.tx_pkts;
			fwds += st.fwd_pkts;
		}
	printf("%s: %" PRIu64 " link ends, %" PRIu64 " packets sent and %" PRIu64
	       " forwarded, every counter as the routes predict\n",
	       what, links, pkts, fwds);
}

static void
check_no_drops(struct tnet *T, const char *what)
{
	for (unsigned int r = 0; r < T->n; r++) {
		struct trd_node_stats st;

		T_EQ(trd_node_stats_get(T->nd[r], &st), 0);
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			if (st.drop[c] != 0 && c != TRD_DROP_DUPLICATE)
				T_ASSERT(0, "%s: node %u dropped %" PRIu64 " (%s)", what, r,
					 st.drop[c], trd_drop_name(c));
	}
}

/* A put from every node to every other one, one source at a time (its puts all at once),
 * byte-exact with a guard byte after each; the packets accounted to the routes. */
static void
puts_all_pairs(struct tnet *T, const char *what)
{
	static const uint32_t sizes[] = {0, 1, 64, 300, 1444, 1445, 2889, 5000, 20000};
	unsigned int maxpay = trd_link_max_payload(T->dl[0][0] ? T->dl[0][0] : T->dl[0][2]);
	uint64_t puts = 0, bytes = 0;

	for (unsigned int a = 0; a < T->n; a++) {
		uint32_t len[MAXN];
		int64_t total = 0;

		for (unsigned int b = 0; b < T->n; b++) {
			len[b] = b == a ? 0 : sizes[test_rand(&seed) % RTE_DIM(sizes)];
			memset(T->mem[b] + (size_t)a * SLOT, GUARD, SLOT);
			test_fill(T->src[a] + (size_t)b * SLOT, len[b], test_rand(&seed));
			T_EQ(trd_counter_set(T->nd[b], T->rctr[b], len[b]), 0);
			total += len[b];
		}
		T_EQ(trd_counter_set(T->nd[a], T->ictr[a], total), 0);
		for (unsigned int b = 0; b < T->n; b++) {
			struct trd_desc d;
			struct trd_coord cb;

			if (b == a)
				continue;
			trd_torus_coord(&T->t, b, &cb);
			trd_desc_put(&d, cb, T->src[a] + (size_t)b * SLOT, len[b],
				     trd_mr_key(T->mr[b]), (uint64_t)a * SLOT, T->ictr[a],
				     T->rctr[b]);
			T_EQ(trd_inject(trd_inj_fifo(T->nd[a], 0), &d), 0);
			account(T, a, b, len[b] == 0 ? 1 : (len[b] + maxpay - 1) / maxpay);
			puts++;
			bytes += len[b];
		}
		ctr_wait(T->nd[a], T->ictr[a], "injection counter");
		for (unsigned int b = 0; b < T->n; b++) {
			if (b == a)
				continue;
			ctr_wait(T->nd[b], T->rctr[b], "reception counter");
			T_ASSERT(memcmp(T->mem[b] + (size_t)a * SLOT, T->src[a] + (size_t)b * SLOT,
					len[b]) == 0,
				 "%s: put %u -> %u (%u B) differs", what, a, b, len[b]);
			T_ASSERT(T->mem[b][(size_t)a * SLOT + len[b]] == GUARD,
				 "%s: put %u -> %u wrote past its end", what, a, b);
		}
	}
	printf("%s: %" PRIu64 " puts (%" PRIu64 " B) between every ordered pair, byte-exact\n",
	       what, puts, bytes);
}

/* Many multi-hop flows into one node at once: each flow's messages arrive in order. */
static void
flows_in_order(struct tnet *T, unsigned int dst, unsigned int per_flow, const char *what)
{
	struct trd_rec_fifo *rf = trd_rec_fifo(T->nd[dst], 0);
	uint32_t next[MAXN] = {0}, got = 0, want = 0, flows = 0;
	struct trd_coord cd;
	uint64_t deadline = trd_time_us() + TIMEOUT_US;
	static uint8_t payload[3000];

	trd_torus_coord(&T->t, dst, &cd);
	test_fill(payload, sizeof(payload), 7);
	for (unsigned int s = 0; s < T->n; s++) {
		struct trd_coord cs;

		trd_torus_coord(&T->t, s, &cs);
		if (trd_torus_hops(&T->t, cs, cd) >= 2)
			flows++;
	}
	/* interleaved: message i of every flow, then i + 1, ... draining as we go */
	for (uint32_t i = 0; i < per_flow; i++) {
		for (unsigned int s = 0; s < T->n; s++) {
			struct trd_coord cs;
			struct trd_desc d;

			trd_torus_coord(&T->t, s, &cs);
			if (trd_torus_hops(&T->t, cs, cd) < 2)
				continue;
			/* one packet, or three */
			trd_desc_fifo(&d, cd, 0, payload, i % 4 == 3 ? 3000 : 64,
				      (uint64_t)s << 32 | i, 0);
			while (trd_inject(trd_inj_fifo(T->nd[s], 1), &d) == -ENOBUFS) {
				T_ASSERT(trd_time_us() < deadline, "%s: FIFO of node %u stays full",
					 what, s);
				idle();
			}
			want++;
		}
		for (;;) {
			struct trd_msg *m[64];
			int k = trd_rec_fifo_poll(rf, m, 64);

			if (k <= 0)
				break;
			for (int j = 0; j < k; j++) {
				unsigned int s = (unsigned int)(m[j]->user >> 32);
				uint32_t seq = (uint32_t)m[j]->user;

				T_ASSERT(s < T->n && seq == next[s],
					 "%s: flow from %u: message %u arrived when %u was due",
					 what, s, seq, s < T->n ? next[s] : 0);
				T_ASSERT(memcmp(m[j]->data, payload, m[j]->len) == 0, "payload");
				next[s]++;
				got++;
				trd_msg_free(m[j]);
			}
		}
	}
	while (got < want) {
		struct trd_msg *m;

		T_ASSERT(trd_time_us() < deadline, "%s: %u of %u messages", what, got, want);
		if (trd_rec_fifo_poll(rf, &m, 1) != 1) {
			idle();
			continue;
		}
		{
			unsigned int s = (unsigned int)(m->user >> 32);
			uint32_t seq = (uint32_t)m->user;

			T_ASSERT(s < T->n && seq == next[s], "%s: flow from %u out of order", what,
				 s);
			next[s]++;
			got++;
		}
		trd_msg_free(m);
	}
	printf("%s: %u flows of %u messages (2 to %d hops) into node %u, each in order\n", what,
	       flows, per_flow, T->t.dim[0] / 2 + T->t.dim[1] / 2 + T->t.dim[2] / 2, dst);
}

/* ---- a net of the engine (ethdev or ring mode) ---- */

static struct trd_net *
make_net(struct tnet *T, unsigned int dim, enum trd_net_links links, bool unreliable)
{
	struct trd_node_conf ndc = {.unreliable = unreliable};
	struct trd_net_conf nc = {.links = links, .node = &ndc};
	struct trd_net *net;

	memset(T, 0, sizeof(*T));
	trd_torus_init(&nc.torus, dim, dim, dim);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "trd_net_create: %s", rte_strerror(rte_errno));
	T->t = nc.torus;
	T->n = trd_net_size(net);
	for (unsigned int r = 0; r < T->n; r++)
		T->nd[r] = trd_net_node(net, r);
	return net;
}

/* ---- hop limit (ring mode) ---- */

/* Send a hand-made put for @p dst with hop limit @p hops into node 0 through @p port. */
static void
inject_raw(uint16_t port, const struct tnet *T, unsigned int dst, uint8_t hops, uint64_t off)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(trd_default_pool(0));
	struct trd_pkt p;
	struct trd_coord cd;
	uint8_t *f;
	uint64_t word = 0x4040404040404000ull | hops;

	T_ASSERT(m != NULL, "mbuf");
	trd_torus_coord(&T->t, dst, &cd);
	f = (uint8_t *)rte_pktmbuf_append(m, TRD_FRAME_HLEN + 8);
	T_ASSERT(f != NULL, "append");
	memset(f, 0xff, 12); /* broadcast destination, any source */
	f[12] = TRD_ETHERTYPE >> 8;
	f[13] = TRD_ETHERTYPE & 0xff;
	memset(&p, 0, sizeof(p));
	p.version = TRD_WIRE_VERSION;
	p.type = TRD_PKT_PUT;
	p.flags = TRD_HF_FIRST | TRD_HF_LAST;
	p.src[0] = p.src[1] = p.src[2] = 2; /* as if from (2,2,2) */
	p.hops = hops;
	p.dst[0] = cd.x;
	p.dst[1] = cd.y;
	p.dst[2] = cd.z;
	p.key = trd_mr_key(T->mr[dst]);
	p.offset = off;
	p.msg_len = 8;
	p.pay_len = 8;
	p.msg_id = 0x10000u + hops;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	memcpy(f + TRD_FRAME_HLEN, &word, 8);
	T_EQ(rte_eth_tx_burst(port, 0, &m, 1), 1);
}

static uint64_t
drops_of(struct trd_node *n, enum trd_drop cause)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(n, &st), 0);
	return st.drop[cause];
}

/*
 * From node 0 (0,0,0) to node 13 (1,1,1): x+ to node 1, y+ to node 4, z+ to node 13. A packet
 * arriving at a node that must forward it with a hop limit of 1 or less is dropped there. Node
 * 0 receives the packet (from the injection port) as a forwarder: limit h allows h - 1
 * forwards, so 0 and 1 die at node 0, 2 at node 1, 3 at node 4, and 4 arrives.
 */
static void
test_hop_limit(struct tnet *T, uint16_t port)
{
	static const unsigned int dies_at[] = {0, 0, 1, 4};
	static const unsigned int path[] = {0, 1, 4}; /* the forwarders, x+, y+, z+ */
	static const enum trd_dir out[] = {TRD_DIR_XP, TRD_DIR_YP, TRD_DIR_ZP};
	const unsigned int dst = 13;

	for (uint8_t h = 0; h <= 4; h++) {
		uint64_t before[MAXN], deadline = trd_time_us() + TIMEOUT_US, off = 64 + 8u * h;
		uint64_t fwd_before[3];
		unsigned int forwards = h <= 1 ? 0 : h - 1;

		for (unsigned int r = 0; r < T->n; r++)
			before[r] = drops_of(T->nd[r], TRD_DROP_HOP_LIMIT);
		for (int k = 0; k < 3; k++) {
			struct trd_link_stats st;

			T_EQ(trd_link_stats_get(T->dl[path[k]][out[k]], &st), 0);
			fwd_before[k] = st.fwd_pkts;
		}
		memset(T->mem[dst] + off, 0, 8);
		inject_raw(port, T, dst, h, off);
		if (h < 4) {
			while (drops_of(T->nd[dies_at[h]], TRD_DROP_HOP_LIMIT) ==
			       before[dies_at[h]])
				T_ASSERT(trd_time_us() < deadline,
					 "hop limit %u: no drop at node %u", h, dies_at[h]);
		} else {
			uint64_t v = 0;

			while (memcpy(&v, T->mem[dst] + off, 8), v == 0)
				T_ASSERT(trd_time_us() < deadline, "hop limit 4: not delivered");
			T_EQ(v, 0x4040404040404000ull | h);
		}
		for (unsigned int r = 0; r < T->n; r++)
			T_EQ(drops_of(T->nd[r], TRD_DROP_HOP_LIMIT) - before[r],
			     h < 4 && r == dies_at[h] ? 1 : 0);
		for (int k = 0; k < 3; k++) {
			struct trd_link_stats st;

			T_EQ(trd_link_stats_get(T->dl[path[k]][out[k]], &st), 0);
			T_EQ(st.fwd_pkts - fwd_before[k], (unsigned int)k < forwards ? 1 : 0);
		}
	}
	printf("hop limit: packets with limits 0..3 dropped (hop_limit) at nodes 0, 0, 1, 4 after "
	       "0, 0, 1, 2 forwards; limit 4 delivered to node 13 after 3\n");
}

static int
run_engine_net(unsigned int dim, enum trd_net_links links)
{
	const char *kind = links == TRD_NET_RING ? "ring" : "ethdev";
	unsigned int worker = test_worker_lcore();
	struct trd_link *inj_a = NULL, *inj_b = NULL;
	struct tnet T;
	struct trd_net *net;
	char what[64];

	/* unreliable: nothing but the puts on the wire, so the counters are exact */
	net = make_net(&T, dim, links, true);
	if (links == TRD_NET_RING) {
		/* an extra port into node 0 for hand-made packets: a switched link, never used
		 * to send (every route has a direction link) */
		T_EQ(trd_link_ethdev_ring_pair("hopinj", 0, &inj_a, &inj_b), 0);
		T_EQ(trd_node_add_link(T.nd[0], inj_a, TRD_DIR_NONE), 0);
	}
	tnet_prepare(&T);
	if (dim == 3)
		T_EQ(trd_node_n_links(T.nd[0]) - (inj_a != NULL), 6);
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	snprintf(what, sizeof(what), "%s %ux%ux%u unreliable", kind, dim, dim, dim);
	puts_all_pairs(&T, what);
	check_counters(&T, what);
	check_no_drops(&T, what);
	flows_in_order(&T, T.n - 1, dim == 3 ? 40 : 150, what);
	if (inj_b != NULL) {
		test_hop_limit(&T, (uint16_t)trd_link_port(inj_b));
		trd_net_stop(net);
		trd_link_free(inj_b);
	}
	trd_net_stop(net);
	tnet_release(&T);
	trd_net_free(net);

	if (links == TRD_NET_ETHDEV_RING && rte_eth_dev_count_total() + 24 > RTE_MAX_ETHPORTS) {
		printf("ethdev: the reliable pass runs on ring links (ethdev ports not reusable)\n");
		links = TRD_NET_RING;
	}
	/* reliable (the default): acks and DONEs on the wire too; bytes only */
	net = make_net(&T, dim, links, false);
	tnet_prepare(&T);
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	snprintf(what, sizeof(what), "%s %ux%ux%u reliable", kind, dim, dim, dim);
	puts_all_pairs(&T, what);
	flows_in_order(&T, 0, dim == 3 ? 40 : 150, what);
	check_no_drops(&T, what);
	trd_net_stop(net);
	tnet_release(&T);
	trd_net_free(net);
	return 0;
}

/* ---- nodes from topology files ---- */

static struct trd_topo *
load(const char *dir, const char *name)
{
	char path[512], err[256];
	struct trd_topo *t;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	t = trd_topo_load(path, err, sizeof(err));
	T_ASSERT(t != NULL, "%s", err);
	return t;
}

/* A bare net_ring port pair (no trd_link): @p a receives what @p b sends and back. */
static void
bare_pair(const char *name, uint16_t *a, uint16_t *b)
{
	char n[64];
	struct rte_ring *r1, *r2;
	int pa, pb;

	snprintf(n, sizeof(n), "%s1", name);
	r1 = rte_ring_create(n, 2048, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(n, sizeof(n), "%s2", name);
	r2 = rte_ring_create(n, 2048, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	T_ASSERT(r1 != NULL && r2 != NULL, "rings");
	snprintf(n, sizeof(n), "%sa", name);
	pa = rte_eth_from_rings(n, &r1, 1, &r2, 1, SOCKET_ID_ANY);
	snprintf(n, sizeof(n), "%sb", name);
	pb = rte_eth_from_rings(n, &r2, 1, &r1, 1, SOCKET_ID_ANY);
	T_ASSERT(pa >= 0 && pb >= 0, "rte_eth_from_rings");
	*a = (uint16_t)pa;
	*b = (uint16_t)pb;
}

static void
topo_in_process_net(const char *dir)
{
	struct trd_topo *topo = load(dir, "3x3x3-direct.ini");
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	unsigned int worker = test_worker_lcore();
	struct trd_net *net;
	struct tnet T;

	net = trd_net_from_topo(topo, &nc);
	T_ASSERT(net != NULL, "trd_net_from_topo: %s", rte_strerror(rte_errno));
	memset(&T, 0, sizeof(T));
	T.t = topo->torus;
	T.n = topo->n_nodes;
	for (unsigned int r = 0; r < T.n; r++) {
		struct trd_node *nd = trd_net_topo_node(net, topo, r);
		struct trd_coord c = trd_node_coord(nd), f = topo->nodes[r].coord;

		T_ASSERT(c.x == f.x && c.y == f.y && c.z == f.z, "node %u at the file's place", r);
		T.nd[trd_torus_rank(&T.t, c)] = nd;
	}
	tnet_prepare(&T);
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	puts_all_pairs(&T, "3x3x3-direct.ini (trd_net_from_topo, ring links)");
	trd_net_stop(net);
	tnet_release(&T);
	trd_net_free(net);
	/* a switched file has no in-process net */
	trd_topo_free(topo);
	topo = load(dir, "2x2x2-switched.ini");
	T_ASSERT(trd_net_from_topo(topo, &nc) == NULL && rte_errno == ENOTSUP, "switched net");
	trd_topo_free(topo);
}

/* 2x2x2-direct.ini: every node from the file on net_ring ports cabled as the file says. */
static void
topo_direct_nodes(const char *dir)
{
	struct trd_topo *topo = load(dir, "2x2x2-direct.ini");
	uint16_t map[MAXN][TRD_DIR_COUNT]; /* by file rank, file port id -> local port */
	bool made[MAXN][TRD_DIR_COUNT];
	struct trd_node *nodes[MAXN];
	unsigned int worker = test_worker_lcore(), cables = 0;
	struct tnet T;

	memset(made, 0, sizeof(made));
	memset(&T, 0, sizeof(T));
	T.t = topo->torus;
	T.n = topo->n_nodes;
	for (unsigned int r = 0; r < T.n; r++) {
		const struct trd_topo_node *tn = &topo->nodes[r];

		for (int d = 0; d < TRD_DIR_COUNT; d++) {
			const struct trd_topo_node *pn;
			struct trd_coord nb;
			enum trd_dir pd = arrival_dir(&T.t, (enum trd_dir)d);
			char name[32];
			uint16_t a, b;

			if (tn->port[d] == TRD_TOPO_NO_PORT || made[r][d])
				continue;
			T_EQ(trd_torus_step(&T.t, tn->coord, (enum trd_dir)d, &nb), 0);
			pn = trd_topo_node_at(topo, nb);
			T_ASSERT(pn != NULL && pn->port[pd] != TRD_TOPO_NO_PORT, "the far end");
			snprintf(name, sizeof(name), "tc%u", cables++);
			bare_pair(name, &a, &b);
			T_ASSERT(tn->port[d] < TRD_DIR_COUNT && pn->port[pd] < TRD_DIR_COUNT,
				 "ports");
			map[r][tn->port[d]] = a;
			map[pn->rank][pn->port[pd]] = b;
			made[r][d] = made[pn->rank][pd] = true;
		}
	}
	for (unsigned int r = 0; r < T.n; r++) {
		struct trd_topo_node_conf tc = {.port_map = map[r], .n_port_map = TRD_DIR_COUNT};
		struct trd_node_conf nc = {.unreliable = true};
		struct trd_coord c;

		tc.node = &nc;
		nodes[r] = trd_node_from_topo(topo, r, &tc);
		T_ASSERT(nodes[r] != NULL, "trd_node_from_topo %u: %s", r, rte_strerror(rte_errno));
		c = trd_node_coord(nodes[r]);
		T.nd[trd_torus_rank(&T.t, c)] = nodes[r];
	}
	/* a file port outside the map is refused (before any port is touched) */
	{
		struct trd_topo_node_conf tc = {.port_map = map[0], .n_port_map = 0};

		T_ASSERT(trd_node_from_topo(topo, 0, &tc) == NULL && rte_errno == EINVAL,
			 "port outside the map");
	}
	tnet_prepare(&T);
	T_EQ(trd_lcore_launch(worker, nodes, T.n), 0);
	puts_all_pairs(&T, "2x2x2-direct.ini (trd_node_from_topo, net_ring ports)");
	check_counters(&T, "2x2x2-direct.ini");
	T_EQ(trd_lcore_stop(worker), 0);
	tnet_release(&T);
	for (unsigned int r = 0; r < T.n; r++)
		trd_node_free(nodes[r]);
	trd_topo_free(topo);
}

/* ---- a software switch for the switched file ---- */

static struct {
	unsigned int n;
	uint16_t port[MAXN]; /* the switch's side, by file rank */
	uint8_t mac[MAXN][6];
	uint64_t frames, flooded;
} sw;

static void
switch_poll(void)
{
	for (unsigned int i = 0; i < sw.n; i++) {
		struct rte_mbuf *m[32];
		uint16_t k = rte_eth_rx_burst(sw.port[i], 0, m, RTE_DIM(m));

		for (uint16_t j = 0; j < k; j++) {
			const uint8_t *dmac = rte_pktmbuf_mtod(m[j], const uint8_t *);
			unsigned int to = sw.n;

			for (unsigned int q = 0; q < sw.n; q++)
				if (memcmp(dmac, sw.mac[q], 6) == 0)
					to = q;
			sw.frames++;
			if (to == sw.n) {
				/* unknown or broadcast: every other port */
				sw.flooded++;
				for (unsigned int q = 0; q < sw.n; q++) {
					struct rte_mbuf *c;

					if (q == i)
						continue;
					c = rte_pktmbuf_copy(m[j], m[j]->pool, 0, UINT32_MAX);
					if (c != NULL &&
					    rte_eth_tx_burst(sw.port[q], 0, &c, 1) != 1)
						rte_pktmbuf_free(c);
				}
				rte_pktmbuf_free(m[j]);
			} else if (rte_eth_tx_burst(sw.port[to], 0, &m[j], 1) != 1) {
				rte_pktmbuf_free(m[j]);
			}
		}
	}
}

static void
topo_switched_nodes(const char *dir)
{
	struct trd_topo *topo = load(dir, "2x2x2-switched.ini");
	struct trd_node *nodes[MAXN];
	unsigned int worker = test_worker_lcore();
	struct tnet T;

	memset(&T, 0, sizeof(T));
	T.t = topo->torus;
	T.n = topo->n_nodes;
	sw.n = T.n;
	for (unsigned int r = 0; r < T.n; r++) {
		struct trd_node_conf nc = {.unreliable = true};
		struct trd_topo_node_conf tc = {.node = &nc, .set_mac = r == 0};
		struct rte_eth_conf pc = {0};
		char name[32];
		uint16_t a;

		snprintf(name, sizeof(name), "sw%u", r);
		bare_pair(name, &a, &sw.port[r]);
		memcpy(sw.mac[r], topo->nodes[r].mac, 6);
		T_EQ(rte_eth_dev_configure(sw.port[r], 1, 1, &pc), 0);
		T_EQ(rte_eth_rx_queue_setup(sw.port[r], 0, 1024, SOCKET_ID_ANY, NULL,
					    trd_default_pool(0)),
		     0);
		T_EQ(rte_eth_tx_queue_setup(sw.port[r], 0, 1024, SOCKET_ID_ANY, NULL), 0);
		T_EQ(rte_eth_dev_start(sw.port[r]), 0);
		tc.sw_port = a;
		nodes[r] = trd_node_from_topo(topo, r, &tc);
		T_ASSERT(nodes[r] != NULL, "trd_node_from_topo %u: %s", r, rte_strerror(rte_errno));
		T_EQ(trd_node_n_links(nodes[r]), 1);
		T.nd[trd_torus_rank(&T.t, trd_node_coord(nodes[r]))] = nodes[r];
	}
	for (unsigned int r = 0; r < T.n; r++) {
		T.mem[r] = malloc((size_t)T.n * SLOT);
		T.src[r] = malloc((size_t)T.n * SLOT);
		T_ASSERT(T.mem[r] != NULL && T.src[r] != NULL, "malloc");
		T.mr[r] = trd_mr_register(T.nd[r], T.mem[r], (size_t)T.n * SLOT, TRD_ACCESS_ALL);
		T_ASSERT(T.mr[r] != NULL, "mr");
		T_EQ(trd_counter_alloc(T.nd[r], &T.ictr[r]), 0);
		T_EQ(trd_counter_alloc(T.nd[r], &T.rctr[r]), 0);
		T.dl[r][0] = trd_node_link(T.nd[r], 0); /* for the payload size only */
	}
	idle_fn = switch_poll;
	T_EQ(trd_lcore_launch(worker, nodes, T.n), 0);
	puts_all_pairs(&T, "2x2x2-switched.ini (trd_node_from_topo, a software switch)");
	T_EQ(trd_lcore_stop(worker), 0);
	idle_fn = NULL;
	T_ASSERT(sw.flooded == 0, "%" PRIu64 " frames had a destination MAC not in the file",
		 sw.flooded);
	/* one hop each: nothing forwarded, nothing dropped */
	for (unsigned int r = 0; r < T.n; r++) {
		struct trd_link_stats st;

		T_EQ(trd_link_stats_get(trd_node_link(T.nd[r], 0), &st), 0);
		T_EQ(st.fwd_pkts, 0);
		T_EQ(st.dir, TRD_DIR_NONE);
	}
	T.dl[0][0] = NULL;
	for (unsigned int r = 0; r < T.n; r++)
		T.dl[r][0] = NULL;
	check_no_drops(&T, "2x2x2-switched.ini");
	printf("2x2x2-switched.ini: %" PRIu64 " frames switched by destination MAC, none "
	       "flooded\n",
	       sw.frames);
	tnet_release(&T);
	for (unsigned int r = 0; r < T.n; r++)
		trd_node_free(nodes[r]);
	trd_topo_free(topo);
}

/* ---- the cost of a hop ---- */

/* Half the median round trip of @p iters 64-byte put ping-pongs between a and b (us). */
static double
pingpong(struct trd_node *a, struct trd_node *b, struct trd_mr *amr, struct trd_mr *bmr,
	 uint8_t *abuf, uint8_t *bbuf, uint16_t actr, uint16_t bctr, uint64_t iters, double *avg)
{
	uint64_t *s = malloc(sizeof(*s) * iters), sum = 0, warm = iters / 10;
	struct trd_desc da, db;
	double p50;

	T_ASSERT(s != NULL, "malloc");
	trd_desc_put(&da, trd_node_coord(b), abuf, 64, trd_mr_key(bmr), 0, 0, bctr);
	trd_desc_put(&db, trd_node_coord(a), bbuf, 64, trd_mr_key(amr), 0, 0, actr);
	for (uint64_t i = 0; i < iters + warm; i++) {
		uint64_t t0 = rte_get_timer_cycles();

		trd_counter_set(b, bctr, 64);
		trd_counter_set(a, actr, 64);
		T_EQ(trd_inject(trd_inj_fifo(a, 0), &da), 0);
		T_EQ(trd_counter_wait(b, bctr, TIMEOUT_US), 0);
		T_EQ(trd_inject(trd_inj_fifo(b, 0), &db), 0);
		T_EQ(trd_counter_wait(a, actr, TIMEOUT_US), 0);
		if (i >= warm)
			s[i - warm] = rte_get_timer_cycles() - t0;
	}
	for (uint64_t i = 1; i < iters; i++) /* insertion sort: fine for a few 10^4 */
		for (uint64_t j = i; j > 0 && s[j] < s[j - 1]; j--) {
			uint64_t t = s[j];

			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	for (uint64_t i = 0; i < iters; i++)
		sum += s[i];
	p50 = (double)s[iters / 2] * 1e6 / (double)rte_get_timer_hz() / 2;
	*avg = (double)sum / (double)iters * 1e6 / (double)rte_get_timer_hz() / 2;
	free(s);
	return p50;
}

/*
 * Node 0 of the 8-node ring of 8x1x1-direct.ini against nodes 1..4 (x+, 1..4 hops; 4 is a
 * tie: x+) and 7, 6, 5 (x-, 1..3 hops). One engine lcore serves the 8 nodes in rank order, so
 * a hop in rank order may be taken in the same polling round and a hop against it waits for
 * the next round: every round trip here has legs of both kinds. The cost of a hop is the slope
 * of the one-way latency over the hop count.
 */
static void
bench(const char *dir, uint64_t iters, bool unreliable)
{
	static const unsigned int dst[] = {1, 2, 3, 4, 7, 6, 5};
	struct trd_topo *topo = load(dir, "8x1x1-direct.ini");
	struct trd_node_conf ndc = {.unreliable = unreliable};
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = &ndc};
	unsigned int worker = test_worker_lcore();
	static uint8_t buf[8][4096];
	struct trd_mr *mr[8];
	uint16_t ctr[8];
	struct trd_net *net;
	double one[8] = {0};

	net = trd_net_from_topo(topo, &nc);
	T_ASSERT(net != NULL, "net");
	for (unsigned int r = 0; r < 8; r++) {
		mr[r] = trd_mr_register(trd_net_node(net, r), buf[r], sizeof(buf[r]),
					TRD_ACCESS_ALL);
		T_ASSERT(mr[r] != NULL, "mr");
		T_EQ(trd_counter_alloc(trd_net_node(net, r), &ctr[r]), 0);
	}
	T_EQ(trd_net_launch(net, &worker, 1), 0);
	printf("put ping-pong, 64 B, node 0 of the 8-node ring of 8x1x1-direct.ini (ring links, "
	       "%s), one engine lcore for the 8 nodes, %" PRIu64 " round trips each:\n"
	       "  to   dir  hops  p50 one-way us  avg one-way us\n",
	       unreliable ? "unreliable" : "reliable", iters);
	for (unsigned int i = 0; i < RTE_DIM(dst); i++) {
		unsigned int b = dst[i], hops = b <= 4 ? b : 8 - b;
		double avg, p50;

		p50 = pingpong(trd_net_node(net, 0), trd_net_node(net, b), mr[0], mr[b], buf[0],
			       buf[b], ctr[0], ctr[b], iters, &avg);
		one[b] = p50;
		printf("  %3u  %s  %4u  %14.2f  %14.2f\n", b, b <= 4 ? "x+" : "x-", hops, p50, avg);
	}
	/* least-squares slope of p50 over hops, both directions together */
	{
		double sx = 0, sy = 0, sxx = 0, sxy = 0, k = RTE_DIM(dst);

		for (unsigned int i = 0; i < RTE_DIM(dst); i++) {
			double x = dst[i] <= 4 ? dst[i] : 8 - dst[i], y = one[dst[i]];

			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
		}
		printf("cost of a forwarding hop (slope of p50 over hops): %.2f us; 1 hop %.2f us, "
		       "4 hops %.2f us\n",
		       (k * sxy - sx * sy) / (k * sxx - sx * sx), one[1], one[4]);
	}
	trd_net_stop(net);
	trd_net_free(net);
	trd_topo_free(topo);
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ring";
	const char *dir = argc > 2 ? argv[2] : "topology/examples";

	test_eal_init(argv[0], NULL);
	if (test_worker_lcore() >= RTE_MAX_LCORE) {
		fprintf(stderr, "SKIP: needs a worker lcore for the engine\n");
		return TEST_SKIP;
	}
	if (strcmp(mode, "ethdev") == 0)
		run_engine_net(2, TRD_NET_ETHDEV_RING);
	else if (strcmp(mode, "ring") == 0)
		run_engine_net(3, TRD_NET_RING);
	else if (strcmp(mode, "topo-direct") == 0) {
		topo_in_process_net(dir);
		topo_direct_nodes(dir);
	} else if (strcmp(mode, "topo-switched") == 0)
		topo_switched_nodes(dir);
	else if (strcmp(mode, "bench") == 0)
		bench(dir, argc > 3 ? strtoull(argv[3], NULL, 0) : 20000,
		      argc > 4 && strcmp(argv[4], "unreliable") == 0);
	else {
		fprintf(stderr,
			"usage: %s ethdev|ring|topo-direct DIR|topo-switched DIR|bench DIR "
			"[ITERS [unreliable]]\n",
			argv[0]);
		return 2;
	}
	rte_eal_cleanup();
	return 0;
}
