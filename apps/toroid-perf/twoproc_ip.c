/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf between two processes over IPv4/UDP (--ip): the options, the raw phase's
 * datagrams and ARP, the node's address. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "../common/app_common.h"
#include "perf_pvt.h"
#include "twoproc.h"

/* ---- options ---- */

uint32_t
perf_parse_ipv4(const char *opt, const char *arg, uint8_t *prefix)
{
	char buf[32];
	const char *slash = strchr(arg, '/');
	struct in_addr a;
	uint32_t ip;

	snprintf(buf, sizeof(buf), "%.*s", slash != NULL ? (int)(slash - arg) : (int)strlen(arg),
		 arg);
	if ((slash != NULL && prefix == NULL) || inet_pton(AF_INET, buf, &a) != 1)
		app_usage_error("%s: '%s' is not an IPv4 address A.B.C.D%s", opt, arg,
				prefix != NULL ? "[/N]" : "");
	ip = ntohl(a.s_addr);
	if (ip == 0 || ip == UINT32_MAX || (ip >> 24) == 0 || (ip >> 24) == 127 ||
	    (ip >> 28) >= 0xe)
		app_usage_error("%s: %s cannot be a host's address", opt, buf);
	if (slash != NULL)
		*prefix = (uint8_t)app_opt_u64(opt, slash + 1, 1, 32);
	return ip;
}

/* "network" or "broadcast" when @p a is the first or last address of the subnet of --ip
 * (@p own with --ip's prefix), where no host can be; NULL otherwise. A /31 (RFC 3021) and a
 * /32 have no such addresses; an address outside the subnet is not judged here. */
static const char *
perf_subnet_edge(uint32_t a, uint32_t own)
{
	uint32_t mask = ~(uint32_t)0 << (32u - perf_opt.prefix);

	if (a == 0 || perf_opt.prefix >= 31 || (a & mask) != (own & mask))
		return NULL;
	if ((a & ~mask) == 0)
		return "network";
	return (a | mask) == ~(uint32_t)0 ? "broadcast" : NULL;
}

void
perf_check_ip(const char *role, bool memif, bool ip_opts)
{
	uint32_t mask = ~(uint32_t)0 << (32u - perf_opt.prefix);

	if (perf_opt.ip == 0 && ip_opts)
		app_usage_error("--peer-ip, --gateway and --udp-port go with --ip A.B.C.D/N");
	if (perf_opt.ip == 0)
		return;
	if (role == NULL || memif)
		app_usage_error("--ip is for --server and --client on a DPDK port (not --memif, "
				"not the one-process run)");
	if (strcmp(role, "client") == 0 && perf_opt.peer_ip == 0)
		app_usage_error("--client --ip: give the server's address with --peer-ip A.B.C.D");
	if (strcmp(role, "server") == 0 && perf_opt.peer_ip != 0)
		app_usage_error("--peer-ip is for the client: the server learns each client's "
				"address from its hello");
	if (perf_subnet_edge(perf_opt.ip, perf_opt.ip) != NULL)
		app_usage_error("--ip " IPV4_FMT "/%u is the %s address of its subnet, not a "
				"host's",
				IPV4_ARGS(perf_opt.ip), perf_opt.prefix,
				perf_subnet_edge(perf_opt.ip, perf_opt.ip));
	if (perf_opt.peer_ip == perf_opt.ip)
		app_usage_error("--peer-ip is this side's own address");
	if (perf_subnet_edge(perf_opt.peer_ip, perf_opt.ip) != NULL)
		app_usage_error("--peer-ip " IPV4_FMT " is the %s address of " IPV4_FMT "/%u",
				IPV4_ARGS(perf_opt.peer_ip),
				perf_subnet_edge(perf_opt.peer_ip, perf_opt.ip),
				IPV4_ARGS(perf_opt.ip & mask), perf_opt.prefix);
	if (perf_subnet_edge(perf_opt.gateway, perf_opt.ip) != NULL)
		app_usage_error("--gateway " IPV4_FMT " is the %s address of " IPV4_FMT "/%u",
				IPV4_ARGS(perf_opt.gateway),
				perf_subnet_edge(perf_opt.gateway, perf_opt.ip),
				IPV4_ARGS(perf_opt.ip & mask), perf_opt.prefix);
	if (perf_opt.gateway == perf_opt.ip || (perf_opt.gateway != 0 && perf_opt.prefix < 32 &&
						(perf_opt.gateway & mask) != (perf_opt.ip & mask)))
		app_usage_error("--gateway " IPV4_FMT " is not another host of " IPV4_FMT "/%u",
				IPV4_ARGS(perf_opt.gateway), IPV4_ARGS(perf_opt.ip & mask),
				perf_opt.prefix);
}

/* ---- over IPv4/UDP (--ip) ----
 * The raw frames go as UDP datagrams from this side's address and --udp-port to the peer's,
 * through the next hop (the peer inside the subnet, else --gateway) whose MAC this side asks
 * by ARP (the codec of toroid/wire.h, as the engine's links do); ARP requests for this side's
 * address are answered. The payload starts with RAW_MAGIC, so that neither the engine's late
 * datagrams nor another host's traffic pass for a command. */

_Static_assert(RAW_UDP_OFF ==
		       RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr),
	       "raw datagram header");

uint32_t raw_peer_ip;
uint16_t raw_peer_port;
static uint32_t nh_ip;               /* the next hop towards raw_peer_ip */
static struct rte_ether_addr nh_mac; /* ... its MAC, valid when nh_ok */
static bool nh_ok;
static struct rte_ether_addr own_mac;

void
raw_set_peer(uint32_t ip, uint16_t port)
{
	uint32_t mask = ~(uint32_t)0 << (32u - perf_opt.prefix);
	uint32_t nh = perf_opt.gateway == 0 || (ip & mask) == (perf_opt.ip & mask)
			      ? ip
			      : perf_opt.gateway;

	raw_peer_ip = ip;
	raw_peer_port = port;
	if (nh != nh_ip) {
		nh_ip = nh;
		nh_ok = false;
	}
	rte_eth_macaddr_get(tp_port, &own_mac);
}

static void
arp_send(const uint8_t dst[6], uint16_t op, const uint8_t tha[6], uint32_t tpa)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(trd_default_pool(0));
	struct trd_arp a = {.op = op, .spa = perf_opt.ip, .tpa = tpa};

	if (m == NULL)
		return;
	memcpy(a.sha, own_mac.addr_bytes, 6);
	if (tha != NULL)
		memcpy(a.tha, tha, 6);
	if (trd_wire_arp_build(rte_pktmbuf_mtod(m, void *), rte_pktmbuf_tailroom(m), dst, &a) !=
	    TRD_ARP_FRAME_LEN) {
		rte_pktmbuf_free(m);
		return;
	}
	m->data_len = TRD_ARP_FRAME_LEN;
	m->pkt_len = TRD_ARP_FRAME_LEN;
	raw_send(m);
}

/* An ARP frame: the next hop's MAC learnt from anything it sends; a request for this side's
 * address answered. */
static void
arp_input(const struct rte_mbuf *m)
{
	struct trd_arp a;

	if (trd_wire_arp_parse(rte_pktmbuf_mtod(m, const void *), m->data_len, &a) != 0 ||
	    memcmp(a.sha, own_mac.addr_bytes, 6) == 0)
		return;
	if (a.spa != 0 && a.spa == nh_ip) {
		memcpy(nh_mac.addr_bytes, a.sha, 6);
		nh_ok = true;
	}
	if (a.op == TRD_ARP_REQUEST && a.tpa == perf_opt.ip)
		arp_send(a.sha, TRD_ARP_REPLY, a.sha, a.spa);
}

int
raw_ip_parse(const struct rte_mbuf *m, uint64_t *arg, uint32_t *ip, uint16_t *port)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv4_hdr *ih = (const struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	const struct rte_udp_hdr *uh = (const struct rte_udp_hdr *)(ih + 1);
	uint32_t len = m->data_len;

	if (len < RTE_ETHER_HDR_LEN)
		return 0;
	if (rte_is_zero_ether_addr(&own_mac)) /* the server, before its first client */
		rte_eth_macaddr_get(tp_port, &own_mac);
	if ((p[12] << 8 | p[13]) == TRD_ETHERTYPE_ARP) {
		arp_input(m);
		return 0;
	}
	/* UDP to this side's address and port, in one unfragmented IPv4 datagram with a right
	 * header checksum, within the frame, with the magic */
	if ((p[12] << 8 | p[13]) != RTE_ETHER_TYPE_IPV4 || len < RAW_IP_LEN ||
	    ih->version_ihl != RTE_IPV4_VHL_DEF || ih->next_proto_id != IPPROTO_UDP ||
	    rte_be_to_cpu_32(ih->dst_addr) != perf_opt.ip ||
	    (rte_be_to_cpu_16(ih->fragment_offset) & (RTE_IPV4_HDR_MF_FLAG | 0x1fffu)) != 0 ||
	    rte_be_to_cpu_16(ih->total_length) < RAW_IP_LEN - RTE_ETHER_HDR_LEN ||
	    rte_be_to_cpu_16(ih->total_length) > len - RTE_ETHER_HDR_LEN ||
	    rte_ipv4_cksum(ih) != 0 || rte_be_to_cpu_16(uh->dst_port) != perf_opt.udp_port ||
	    memcmp(p + RAW_UDP_OFF, RAW_MAGIC, 4) != 0)
		return 0;
	*ip = rte_be_to_cpu_32(ih->src_addr);
	*port = rte_be_to_cpu_16(uh->src_port);
	memcpy(arg, p + RAW_UDP_OFF + 5, 8);
	return p[RAW_UDP_OFF + 4];
}

/* Ask the next hop's MAC until it answers, @p timeout_us at most: 0 or -EHOSTUNREACH. */
int
raw_resolve(uint64_t timeout_us)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint64_t until = trd_time_us() + timeout_us, next = 0;

	while (!nh_ok && trd_time_us() < until && !perf_stop) {
		struct rte_mbuf *m;

		if (trd_time_us() >= next) {
			arp_send(bcast, TRD_ARP_REQUEST, NULL, nh_ip);
			next = trd_time_us() + 200000;
		}
		if (rte_eth_rx_burst(tp_port, 0, &m, 1) == 1) {
			uint64_t a;
			uint32_t ip;
			uint16_t port;

			raw_ip_parse(m, &a, &ip, &port); /* ARP only, meanwhile */
			rte_pktmbuf_free(m);
		}
	}
	return nh_ok ? 0 : perf_stop ? -EINTR : -EHOSTUNREACH;
}

bool
raw_ip_resolved(void)
{
	return nh_ok;
}

bool
raw_ip_new_client(uint32_t ip, uint16_t port)
{
	if (ip == raw_peer_ip && port == raw_peer_port && nh_ok)
		return false;
	raw_set_peer(ip, port);
	if (raw_resolve(1000000) != 0 && !perf_stop)
		fprintf(stderr,
			"toroid-perf: no ARP answer from " IPV4_FMT
			", the next hop to client " IPV4_FMT "\n",
			IPV4_ARGS(nh_ip), IPV4_ARGS(ip));
	return true;
}

uint32_t
raw_ip_frame(uint8_t *p, uint8_t cmd, uint64_t arg, uint32_t len)
{
	struct rte_ipv4_hdr *ih = (struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	struct rte_udp_hdr *uh = (struct rte_udp_hdr *)(ih + 1);

	len = RTE_MIN(len, (uint32_t)RTE_ETHER_MAX_LEN - RTE_ETHER_CRC_LEN);
	memcpy(p, nh_mac.addr_bytes, 6);
	memcpy(p + 6, own_mac.addr_bytes, 6);
	p[12] = RTE_ETHER_TYPE_IPV4 >> 8;
	p[13] = RTE_ETHER_TYPE_IPV4 & 0xff;
	memset(ih, 0, sizeof(*ih));
	ih->version_ihl = RTE_IPV4_VHL_DEF;
	ih->total_length = rte_cpu_to_be_16((uint16_t)(len - RTE_ETHER_HDR_LEN));
	ih->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ih->time_to_live = 64;
	ih->next_proto_id = IPPROTO_UDP;
	ih->src_addr = rte_cpu_to_be_32(perf_opt.ip);
	ih->dst_addr = rte_cpu_to_be_32(raw_peer_ip);
	ih->hdr_checksum = rte_ipv4_cksum(ih);
	uh->src_port = rte_cpu_to_be_16(perf_opt.udp_port);
	uh->dst_port = rte_cpu_to_be_16(raw_peer_port);
	uh->dgram_len =
		rte_cpu_to_be_16((uint16_t)(len - RTE_ETHER_HDR_LEN - sizeof(struct rte_ipv4_hdr)));
	uh->dgram_cksum = 0;
	memcpy(p + RAW_UDP_OFF, RAW_MAGIC, 4);
	p[RAW_UDP_OFF + 4] = cmd;
	memcpy(p + RAW_UDP_OFF + 5, &arg, 8);
	return len;
}

void
raw_ip_answer(uint8_t *p, uint8_t cmd)
{
	struct rte_ipv4_hdr *ih = (struct rte_ipv4_hdr *)(p + RTE_ETHER_HDR_LEN);
	struct rte_udp_hdr *uh = (struct rte_udp_hdr *)(ih + 1);
	rte_be32_t a = ih->src_addr;
	rte_be16_t port = uh->src_port;

	/* addresses swapped: the header's checksum stays right */
	memcpy(p, nh_mac.addr_bytes, 6);
	memcpy(p + 6, own_mac.addr_bytes, 6);
	ih->src_addr = ih->dst_addr;
	ih->dst_addr = a;
	uh->src_port = uh->dst_port;
	uh->dst_port = port;
	p[RAW_UDP_OFF + 4] = cmd;
}

/* ---- the engine's phase ---- */

int
tp_node_set_ip(struct trd_node *node, struct trd_coord peer)
{
	struct trd_ip_conf ic = {.ip = perf_opt.ip,
				 .prefix = perf_opt.prefix,
				 .gateway = perf_opt.gateway,
				 .port = perf_opt.udp_port};
	int rc = trd_node_set_ip(node, &ic);

	return rc != 0 ? rc : trd_node_set_peer_ip(node, peer, raw_peer_ip, raw_peer_port);
}

void
tp_ip_waiting(bool server, uint16_t port, const char *label)
{
	if (server)
		fprintf(stderr,
			"toroid-perf: server " IPV4_FMT "/%u UDP port %u on port %u (%s), waiting "
			"for the other process\n",
			IPV4_ARGS(perf_opt.ip), perf_opt.prefix, perf_opt.udp_port, port, label);
	else
		fprintf(stderr,
			"toroid-perf: client " IPV4_FMT
			"/%u on port %u (%s), waiting for the other "
			"process at " IPV4_FMT " UDP port %u\n",
			IPV4_ARGS(perf_opt.ip), perf_opt.prefix, port, label,
			IPV4_ARGS(perf_opt.peer_ip), perf_opt.udp_port);
}

void
tp_ip_no_server(int rc)
{
	if (rc == -EHOSTUNREACH)
		fprintf(stderr,
			"toroid-perf: no ARP answer in 60 s from " IPV4_FMT
			", the next hop to " IPV4_FMT "\n",
			IPV4_ARGS(nh_ip), IPV4_ARGS(perf_opt.peer_ip));
	else
		fprintf(stderr,
			"toroid-perf: no server answered at " IPV4_FMT " UDP port %u in 60 s\n",
			IPV4_ARGS(perf_opt.peer_ip), perf_opt.udp_port);
}
