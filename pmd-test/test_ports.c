/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A torus on ordinary ethdev ports through the kernel: two net_af_packet ports on the two ends
 * of a veth pair this test creates (root), cabled as the x link of a 2x1x1 torus with
 * TRD_NET_PORTS. Puts, memory-FIFO messages and remote gets both ways, 0 B .. 1 MiB,
 * byte-exact. Frames the kernel adds on its own (IPv6 neighbour discovery...) are dropped
 * as bad_ethertype and counted, nothing else is. Skips (77) without root or iproute2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>

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

	(void)argc;
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
	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net on af_packet ports: %s", rte_strerror(rte_errno));
	for (int i = 0; i < 2; i++) {
		n[i] = trd_net_node(net, (unsigned int)i);
		mr[i] = trd_mr_register(n[i], mem[i], sizeof(mem[i]), TRD_ACCESS_ALL);
		T_ASSERT(mr[i] != NULL, "region");
		T_EQ(trd_counter_alloc(n[i], &ctr[i]), 0);
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
	for (int i = 0; i < 2; i++) {
		struct trd_node_stats st;

		T_EQ(trd_node_stats_get(n[i], &st), 0);
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			T_ASSERT(st.drop[c] == 0 || c == TRD_DROP_BAD_ETHERTYPE ||
					 c == TRD_DROP_DUPLICATE,
				 "node %d dropped %" PRIu64 " as %s", i, st.drop[c], trd_drop_name(c));
	}
	trd_net_free(net);
	rte_eal_cleanup();
	printf("ports: puts, messages and reads 0 B .. 1 MiB both ways over af_packet on veth\n");
	return 0;
}
