/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A torus on ordinary ethdev ports through the kernel: two net_af_packet ports on the two ends
 * of a veth pair this test creates (root), cabled as the x link of a 2x1x1 torus with
 * TRD_NET_PORTS. Puts, memory-FIFO messages and remote gets both ways, 0 B .. 1 MiB,
 * byte-exact. Frames the kernel adds on its own (IPv6 neighbour discovery...) are dropped
 * as bad_ethertype and counted, nothing else is. Skips (77) without root or iproute2.
 *
 * Argument: af_packet (the default), af_packet-udp or ring-udp (net_ring ethdev ports, no
 * root needed). With -udp every link carries its frames over IPv4/UDP (trd_link_udp_encap),
 * node 0 captures them, and the test checks that every torus frame in the capture was a
 * datagram to port 34997 (written to the path in the second argument, if given, for
 * toroid-dump and tshark), and that datagrams from a stranger or with a bad IPv4 checksum are
 * refused and counted (encap_drops).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 20000000

static char va[16], vb[16];

static void
cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "ip link del %s 2>/dev/null", va);
	if (system(cmd) != 0) {
		/* already gone */
	}
}

static uint16_t
port_of(const char *name)
{
	uint16_t p;

	T_ASSERT(rte_eth_dev_get_port_by_name(name, &p) == 0, "port %s", name);
	return p;
}

/* Torus frames in a pcapng file: how many plain, how many over IPv4/UDP to TRD_UDP_PORT. */
static void
count_capture(const char *path, unsigned int *plain, unsigned int *udp)
{
	FILE *f = fopen(path, "rb");
	static uint8_t b[1 << 17];
	uint32_t hdr[2];

	*plain = *udp = 0;
	T_ASSERT(f != NULL, "capture %s", path);
	while (fread(hdr, 4, 2, f) == 2) {
		uint32_t body = hdr[1] - 8, off;
		struct trd_pkt p;

		T_ASSERT(hdr[1] >= 12 && body <= sizeof(b), "pcapng block of %u bytes", hdr[1]);
		T_ASSERT(fread(b, 1, body, f) == body, "pcapng block body");
		if (hdr[0] != 6) /* an enhanced packet block: caplen at 12, data at 20 */
			continue;
		uint32_t caplen;

		memcpy(&caplen, b + 12, 4);
		if (trd_wire_parse_any(b + 20, caplen, 0, &p, &off) != 0)
			continue; /* not torus (the kernel's own frames) */
		if (off == TRD_ETH_HLEN)
			(*plain)++;
		else
			(*udp)++;
	}
	fclose(f);
}

/* A datagram to node 0's link from its peer's port: from @p src_ip, IPv4 checksum spoilt if
 * @p bad_csum. */
static void
send_datagram(uint16_t port, uint32_t src_ip, bool bad_csum)
{
	struct rte_mempool *mp = trd_default_pool(0);
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *f, *ip;
	struct trd_pkt p = {.version = TRD_WIRE_VERSION,
			    .type = TRD_PKT_PUT,
			    .flags = TRD_HF_ALL,
			    .dst = {0, 0, 0},
			    .src = {1, 0, 0},
			    .hops = 1};
	uint32_t dst_ip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));

	T_ASSERT(m != NULL, "mbuf");
	f = rte_pktmbuf_mtod(m, uint8_t *);
	memset(f, 0, 14 + 28 + TRD_HDR_LEN);
	memset(f, 0xff, 6);
	f[12] = 0x08;
	ip = f + 14;
	ip[0] = 0x45;
	ip[2] = 0;
	ip[3] = 28 + TRD_HDR_LEN;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	src_ip = rte_cpu_to_be_32(src_ip);
	memcpy(ip + 12, &src_ip, 4);
	memcpy(ip + 16, &dst_ip, 4);
	*(unaligned_uint16_t *)(ip + 10) = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	if (bad_csum)
		ip[10] ^= 0x55;
	ip[20] = 0xc0;
	ip[22] = TRD_UDP_PORT >> 8;
	ip[23] = TRD_UDP_PORT & 0xff;
	ip[25] = 8 + TRD_HDR_LEN;
	trd_wire_encode(ip + 28, &p);
	m->data_len = m->pkt_len = 14 + 28 + TRD_HDR_LEN;
	T_EQ(rte_eth_tx_burst(port, 0, &m, 1), 1);
}

int
main(int argc, char **argv)
{
	static uint8_t src[1 << 20], mem[2][1 << 20];
	static const uint32_t sizes[] = {0, 1, 1443, 1444, 1445, 60000, 1 << 20};
	char cmd[256], args[64];
	struct trd_net_conf nc = {.links = TRD_NET_PORTS};
	uint16_t ports[2];
	struct trd_net *net;
	struct trd_node *n[2];
	struct trd_mr *mr[2];
	uint16_t ctr[2];
	unsigned int lc;
	const char *mode = argc > 1 ? argv[1] : "af_packet";
	bool udp = strstr(mode, "-udp") != NULL, ring = strncmp(mode, "ring", 4) == 0;
	char cap_path[256];

	if (strcmp(mode, "af_packet") != 0 && strcmp(mode, "af_packet-udp") != 0 &&
	    strcmp(mode, "ring-udp") != 0) {
		fprintf(stderr, "usage: test_ports [af_packet|af_packet-udp|ring-udp] [CAPTURE]\n");
		return 2;
	}
	snprintf(cap_path, sizeof(cap_path), "%s", argc > 2 ? argv[2] : "");
	if (udp && cap_path[0] == 0)
		snprintf(cap_path, sizeof(cap_path), "/tmp/toroid-ports-%d.pcapng", getpid());
	if (ring) {
		test_eal_init(argv[0], NULL);
		nc.links = TRD_NET_ETHDEV_RING;
		goto made;
	}
	if (getuid() != 0 || system("command -v ip >/dev/null 2>&1") != 0) {
		printf("SKIP: needs root and iproute2 for a veth pair\n");
		return TEST_SKIP;
	}
	snprintf(va, sizeof(va), "trdA%d", getpid() % 100000);
	snprintf(vb, sizeof(vb), "trdB%d", getpid() % 100000);
	snprintf(cmd, sizeof(cmd),
		 "ip link add %s type veth peer name %s && ip link set %s up && ip link set %s up"
		 " && sysctl -qw net.ipv6.conf.%s.disable_ipv6=1 net.ipv6.conf.%s.disable_ipv6=1",
		 va, vb, va, vb, va, vb);
	if (system(cmd) != 0) {
		cleanup();
		printf("SKIP: cannot create a veth pair\n");
		return TEST_SKIP;
	}
	atexit(cleanup);
	test_eal_init(argv[0], NULL);
	snprintf(args, sizeof(args), "iface=%s", va);
	T_EQ(rte_vdev_init("net_af_packet_a", args), 0);
	snprintf(args, sizeof(args), "iface=%s", vb);
	T_EQ(rte_vdev_init("net_af_packet_b", args), 0);
	ports[0] = port_of("net_af_packet_a");
	ports[1] = port_of("net_af_packet_b");
	nc.ports = ports;
	nc.n_ports = 2;
made:
	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net on af_packet ports: %s", rte_strerror(rte_errno));
	for (int i = 0; i < 2; i++) {
		n[i] = trd_net_node(net, (unsigned int)i);
		mr[i] = trd_mr_register(n[i], mem[i], sizeof(mem[i]), TRD_ACCESS_ALL);
		T_ASSERT(mr[i] != NULL, "region");
		T_EQ(trd_counter_alloc(n[i], &ctr[i]), 0);
	}
	if (udp) {
		for (int i = 0; i < 2; i++)
			for (unsigned int k = 0; k < trd_node_n_links(n[i]); k++) {
				struct trd_udp_encap e = {
					.src_ip = RTE_IPV4(10, 0, 0, (uint8_t)(i + 1)),
					.dst_ip = RTE_IPV4(10, 0, 0, (uint8_t)(2 - i)),
					.dscp = 46,
				};

				T_EQ(trd_link_udp_encap(trd_node_link(n[i], k), &e), 0);
			}
		T_EQ(trd_node_capture(n[0], cap_path, 0), 0);
	}
	lc = test_worker_lcore();
	if (lc < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &lc, 1), 0);
	test_fill(src, sizeof(src), 5);
	for (unsigned int k = 0; k < RTE_DIM(sizes); k++)
		for (int a = 0; a < 2; a++) {
			int b = 1 - a;
			uint32_t len = sizes[k];
			struct trd_desc d, c;
			struct trd_msg *m;

			memset(mem[b], 0, sizeof(mem[b]));
			T_EQ(trd_counter_set(n[b], ctr[b], len), 0);
			trd_desc_put(&d, trd_node_coord(n[b]), src, len, trd_mr_key(mr[b]), 0, 0,
				     ctr[b]);
			T_EQ(trd_inject(trd_inj_fifo(n[a], 0), &d), 0);
			T_EQ(trd_counter_wait(n[b], ctr[b], TIMEOUT_US), 0);
			T_ASSERT(memcmp(mem[b], src, len) == 0, "put %d->%d %u B", a, b, len);
			trd_desc_fifo(&d, trd_node_coord(n[b]), 0, src, len, len, 0);
			T_EQ(trd_inject(trd_inj_fifo(n[a], 0), &d), 0);
			T_EQ(trd_rec_fifo_wait(trd_rec_fifo(n[b], 0), &m, TIMEOUT_US), 0);
			T_ASSERT(m->len == len && m->user == len && memcmp(m->data, src, len) == 0,
				 "fifo %d->%d %u B", a, b, len);
			trd_msg_free(m);
			/* read back what we put */
			memset(mem[a], 0, sizeof(mem[a]));
			trd_desc_put(&c, trd_node_coord(n[a]), NULL, len, trd_mr_key(mr[a]), 0, 0,
				     ctr[a]);
			c.flags = TRD_DF_SRC_MR;
			c.src_key = trd_mr_key(mr[b]);
			T_EQ(trd_counter_set(n[a], ctr[a], len), 0);
			trd_desc_rget(&d, trd_node_coord(n[b]), TRD_ENGINE_FIFO, &c, 1);
			T_EQ(trd_inject(trd_inj_fifo(n[a], 0), &d), 0);
			T_EQ(trd_counter_wait(n[a], ctr[a], TIMEOUT_US), 0);
			T_ASSERT(memcmp(mem[a], src, len) == 0, "rget %d<-%d %u B", a, b, len);
		}
	trd_net_stop(net);
	if (udp) {
		struct trd_link *l0 = trd_node_link(n[0], 0);
		struct trd_link_stats ls;
		unsigned int plain, dgrams;
		int peer_port = -1;

		/* the port at the other end of node 0's first link */
		for (unsigned int k = 0; k < trd_node_n_links(n[1]) && peer_port < 0; k++) {
			struct trd_link *l = trd_node_link(n[1], k);

			if (trd_link_port(l) >= 0 &&
			    (ring ? trd_link_port(l) == (trd_link_port(l0) ^ 1) : true))
				peer_port = trd_link_port(l);
		}
		T_ASSERT(peer_port >= 0, "the peer's port");
		/* a stranger's datagram and a corrupt one: refused, counted, nothing else moves */
		send_datagram((uint16_t)peer_port, RTE_IPV4(10, 0, 0, 9), false);
		send_datagram((uint16_t)peer_port, RTE_IPV4(10, 0, 0, 2), true);
		for (int k = 0; k < 1000; k++) {
			trd_node_poll(n[0]);
			T_EQ(trd_link_stats_get(l0, &ls), 0);
			if (ls.encap_drops >= 2)
				break;
			usleep(1000); /* the kernel's veth delivery; bounded by the loop */
		}
		T_EQ(ls.encap_drops, 2);
		T_EQ(trd_node_capture(n[0], NULL, 0), 0);
		count_capture(cap_path, &plain, &dgrams);
		T_EQ(plain, 0);
		T_ASSERT(dgrams > 100, "%u torus datagrams captured", dgrams);
		printf("ports(%s): %u torus frames captured, all over IPv4/UDP to port %u; "
		       "2 forged datagrams refused\n",
		       mode, dgrams, TRD_UDP_PORT);
		if (argc <= 2)
			unlink(cap_path);
	}
	for (int i = 0; i < 2; i++) {
		struct trd_node_stats st;

		T_EQ(trd_node_stats_get(n[i], &st), 0);
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			T_ASSERT(st.drop[c] == 0 || c == TRD_DROP_BAD_ETHERTYPE ||
					 c == TRD_DROP_DUPLICATE,
				 "node %d dropped %" PRIu64 " as %s", i, st.drop[c],
				 trd_drop_name(c));
	}
	trd_net_free(net);
	rte_eal_cleanup();
	printf("ports(%s): puts, messages and reads 0 B .. 1 MiB both ways\n", mode);
	return 0;
}
