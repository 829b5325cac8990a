/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf: OSU/ucx_perftest-style measurements of the engine between two nodes, with the
 * raw DPDK figure for the same pattern on the same ports measured right before (--baseline).
 *
 *   toroid-perf [EAL options] -- -t TEST [-s SIZES] [-n ITERS] [-w WINDOW] [--baseline] [--json]
 *
 * The two nodes (0,0,0) and (1,0,0) of a 2x1x1 torus live in this process, cabled by a
 * net_ring ethdev pair (default) or a ring link. One worker lcore serves both nodes (the DMA
 * engine) and the main lcore is the application; with --inline the main lcore also polls.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <toroid/coll.h>
#include <toroid/msg.h>
#include <toroid/telemetry.h>
#include <toroid/testing.h> /* --impair */
#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "../common/app_common.h"
#include "../common/latency.h"
#include "inproc.h"

struct perf_opts perf_opt = {
	.torus = {2, 1, 1},
	.iters = 0,
	.window = 32,
	.links = TRD_NET_ETHDEV_RING,
	.mode = TRD_CPL_LOCAL,
	.timeout_us = 30000000,
	.prefix = 32,
	.udp_port = TRD_UDP_PORT,
};

volatile sig_atomic_t perf_stop;

struct perf_ctx px;

uint64_t lat_done;

/* ---- the test table ---- */

struct perf_test {
	const char *name;
	enum perf_kind kind;
	double lat_scale; /* 0.5 for a round trip reported as one way */
	uint64_t iters;   /* default iterations */
	const char *help;
};

static const struct perf_test tests[] = {
	{"put_rate", K_RATE, 1, 2000000, "64 B-class puts a->b, message rate (Mmsg/s)"},
	{"put_bw", K_RATE, 1, 20000, "large puts a->b, bandwidth (MB/s, Gbit/s)"},
	{"put_lat", K_LAT, 0.5, 20000, "put ping-pong on counters, half round trip (us)"},
	{"fifo_rate", K_RATE, 1, 1000000, "memory-FIFO messages a->b, message rate"},
	{"fifo_bw", K_RATE, 1, 20000, "memory-FIFO messages a->b, bandwidth"},
	{"fifo_lat", K_LAT, 0.5, 20000, "memory-FIFO ping-pong, half round trip (us)"},
	{"get_lat", K_LAT, 1, 20000, "RDMA read (remote get) until the counter is zero (us)"},
	{"get_bw", K_RATE, 1, 2000, "RDMA reads back to back, bandwidth"},
	{"get_rate", K_RATE, 1, 1000000,
	 "remote gets a->b posted in bursts (sharing frames), gets per second"},
	{"reflect_lat", K_LAT, 1, 20000, "put to reflection completion in a doorbell (us)"},
	{"linerate", K_RATE, 1, 2000000,
	 "sustained puts of one MTU payload: Mframe/s, Gbit/s L2/L1"},
	{"fence_lat", K_LAT, 1, 20000, "context put + fence until the fence callback (us)"},
	{"atomic_lat", K_LAT, 1, 20000, "context fetch-and-add until its callback (us)"},
	{"allreduce_lat", K_LAT, 1, 1000,
	 "allreduce (sum of doubles), software (allreduce_lat, _lat64) and engine (allreduce_eng, "
	 "_eng64) on 8 and 64 nodes, and a put over one link (put_link) (us); allreduce_ratio: "
	 "engine / software and the engine's MB/s against the link's (p50)"},
	{"barrier_lat", K_LAT, 1, 1000,
	 "barrier, software (barrier_lat, _lat64) and engine (barrier_eng, _eng64) on 8 and 64 "
	 "nodes (us); barrier_ratio: engine / software (p50); one size (0)"},
};

uint64_t
perf_default_iters(const char *test)
{
	for (size_t i = 0; i < RTE_DIM(tests); i++)
		if (strcmp(tests[i].name, test) == 0)
			return tests[i].iters;
	return 20000;
}

bool
perf_test_selected(const char *test)
{
	size_t len = strlen(test);

	if (strcmp(perf_opt.test, "all") == 0)
		return true;
	for (const char *p = perf_opt.test; *p != '\0';) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, test, n) == 0)
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* Every name of -t is a test (or "all", alone): 0, or -EINVAL. */
static int
perf_check_test_list(const char *list)
{
	if (strcmp(list, "all") == 0)
		return 0;
	for (const char *p = list;;) {
		size_t n = strcspn(p, ",");
		bool known = false;

		for (unsigned int i = 0; i < RTE_DIM(tests) && !known; i++)
			known = strlen(tests[i].name) == n && strncmp(p, tests[i].name, n) == 0;
		if (!known)
			return -EINVAL;
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

static int
run_one(const struct perf_test *t, uint32_t size, struct perf_result *r)
{
	uint64_t n = perf_opt.iters ? perf_opt.iters : t->iters;
	/* 10% more to warm up, at most 2M: a long run is not preceded by a long warm-up */
	uint64_t warm = RTE_MIN(n / 10 + 1, 2000000u);
	uint64_t *s = NULL;
	unsigned int maxpay = trd_link_max_payload(trd_node_link(px.a, 0));
	uint32_t frame = TRD_FRAME_HLEN + RTE_MIN(size, maxpay) + TRD_PROOF_LEN; /* + the token */
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->test = t->name;
	r->size = size;
	r->by_gbps = strstr(t->name, "_bw") != NULL || strcmp(t->name, "linerate") == 0;
	if (size > px.buflen)
		return -EINVAL;
	if (t->kind == K_LAT) {
		s = malloc((n + warm) * sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
	}
	/* the raw latency baseline runs first, on the same ports, with the engine stopped; the
	 * rate baseline after the engine's run, with frames of the size the engine sent */
	if (perf_opt.baseline && t->kind == K_LAT)
		baseline_lat(r, RTE_MAX(frame, 60u), n, t->lat_scale);
	if (strcmp(t->name, "put_rate") == 0 || strcmp(t->name, "put_bw") == 0 ||
	    strcmp(t->name, "linerate") == 0) {
		rc = stream(r, false, warm);
		if (rc == 0 && !r->interrupted)
			rc = stream(r, false, n);
		else if (rc == 0)
			rc = -EINTR; /* interrupted while warming up: nothing measured */
	} else if (strcmp(t->name, "fifo_rate") == 0 || strcmp(t->name, "fifo_bw") == 0) {
		rc = stream(r, true, warm);
		if (rc == 0 && !r->interrupted)
			rc = stream(r, true, n);
		else if (rc == 0)
			rc = -EINTR;
	} else if (strcmp(t->name, "get_rate") == 0) {
		rc = get_stream(r, warm);
		if (rc == 0 && !r->interrupted)
			rc = get_stream(r, n);
		else if (rc == 0)
			rc = -EINTR;
	} else if (strcmp(t->name, "get_bw") == 0) {
		/* the data flows b -> a: b's port sends it */
		int bport = trd_link_port(trd_node_link(px.b, 0));
		struct perf_tx tx0, tx1;
		uint64_t t0;

		perf_tx_read(bport, trd_node_link(px.b, 0), &tx0);
		t0 = rte_rdtsc();

		lat_done = 0;
		rc = get_loop(r, n, NULL);
		if (perf_stop && lat_done > 0) {
			r->interrupted = true;
			n = lat_done;
			rc = 0;
		} else if (perf_stop) {
			rc = -EINTR;
		}
		if (rc == 0) {
			rate_result(r, n, n * ((size + maxpay - 1) / RTE_MAX(maxpay, 1u)), frame,
				    rte_rdtsc() - t0);
			perf_tx_read(bport, trd_node_link(px.b, 0), &tx1);
			perf_tx_rates(r, &tx0, &tx1);
		}
	} else {
		int (*fn)(struct perf_result *, uint64_t, uint64_t *) =
			strcmp(t->name, "put_lat") == 0         ? pingpong
			: strcmp(t->name, "fifo_lat") == 0      ? fifo_pingpong
			: strcmp(t->name, "get_lat") == 0       ? get_loop
			: strcmp(t->name, "fence_lat") == 0     ? fence_loop
			: strcmp(t->name, "atomic_lat") == 0    ? atomic_loop
			: strcmp(t->name, "allreduce_lat") == 0 ? allreduce_loop
			: strcmp(t->name, "barrier_lat") == 0   ? barrier_loop
								: reflect_loop;

		rc = fn(r, warm, s);
		if (perf_stop) {
			rc = -EINTR; /* interrupted while warming up: nothing measured */
		} else if (rc == 0) {
			lat_done = 0;
			rc = fn(r, n, s);
			/* interrupted: the samples taken, marked so; never the ones not taken */
			if (perf_stop) {
				r->interrupted = true;
				n = lat_done;
				rc = n > 0 ? 0 : -EINTR;
			}
		}
		if (rc == 0)
			lat_stats(r, s, n, t->lat_scale);
	}
	if (rc == 0 && t->kind == K_RATE && perf_opt.baseline && !r->interrupted) {
		/* raw frames of the size the engine's were on average (bundles are larger) */
		uint32_t f = perf_opt.raw_frame != 0 ? perf_opt.raw_frame
			     : r->frames != 0 ? (uint32_t)((r->bytes + r->frames / 2) / r->frames)
					      : frame;

		baseline_rate(r, RTE_MIN(RTE_MAX(f, 60u), (uint32_t)RTE_MBUF_DEFAULT_DATAROOM), n);
	}
	if (rc == 0 && t->kind == K_RATE) {
		struct rte_eth_link link;
		int port = trd_link_port(trd_node_link(px.a, 0));

		if (port >= 0 && rte_eth_link_get_nowait((uint16_t)port, &link) == 0 &&
		    link.link_speed != 0 && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
			r->line_pct = r->gbps_l1 * 1000 / link.link_speed * 100;
	}
	free(s);
	return rc;
}

/* ---- set-up ---- */

enum {
	OPT_SERVER = 256,
	OPT_CLIENT,
	OPT_PORT,
	OPT_DURATION,
	OPT_INTERVAL,
	OPT_RATE,
	OPT_CORES,
	OPT_SHARES,
	OPT_VA,
	OPT_COPY,
	OPT_ONE_OFF,
	OPT_BIDIR,
	OPT_MEMIF,
	OPT_IP,
	OPT_PEER_IP,
	OPT_GATEWAY,
	OPT_UDP_PORT,
	OPT_RAW_FRAME
};

/* --rate: "100000", "100k", "1.5M" messages per second, or "5Gbit", "800Mbit", "100kbit/s"
 * bits per second (decimal prefixes, as iperf3). */
static int
parse_rate(const char *s, double *v, bool *bits)
{
	char num[64];
	size_t n = strspn(s, "0123456789.");
	const char *p = s + n;
	double mult = 1;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (*p == 'k' || *p == 'K')
		mult = 1e3, p++;
	else if (*p == 'M')
		mult = 1e6, p++;
	else if (*p == 'G')
		mult = 1e9, p++;
	else if (*p == 'T')
		mult = 1e12, p++;
	*bits = strcmp(p, "bit") == 0 || strcmp(p, "bit/s") == 0;
	if (!*bits && *p != '\0')
		return -EINVAL;
	if (app_parse_double(num, 0, 1e15, v) != 0)
		return -EINVAL;
	*v *= mult;
	if (*bits ? *v < 1e3 || *v > 1e13 : *v < 1 || *v > 1e9)
		return -ERANGE;
	return 0;
}

/* the tests of --help, one line each */
void
perf_print_tests(void)
{
	for (unsigned int i = 0; i < RTE_DIM(tests); i++)
		printf("  %-12s %s (default -n %" PRIu64 ")\n", tests[i].name, tests[i].help,
		       tests[i].iters);
}

static int
parse_sizes(const char *s)
{
	char buf[256], *tok, *save;
	unsigned long long a, b;

	perf_opt.n_sizes = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (colon != NULL) {
			*colon = '\0';
			if (app_parse_size(tok, &a) || app_parse_size(colon + 1, &b) || a > b ||
			    b > (64u << 20))
				return -EINVAL;
			for (unsigned long long v = a ? a : 1; v <= b; v <<= 1) {
				if (perf_opt.n_sizes == PERF_MAX_SIZES)
					return -EINVAL;
				perf_opt.sizes[perf_opt.n_sizes++] = (uint32_t)v;
			}
		} else {
			if (app_parse_size(tok, &a) || a > (64u << 20) ||
			    perf_opt.n_sizes == PERF_MAX_SIZES)
				return -EINVAL;
			perf_opt.sizes[perf_opt.n_sizes++] = (uint32_t)a;
		}
	}
	return perf_opt.n_sizes ? 0 : -EINVAL;
}

static void
on_signal(int sig)
{
	perf_stop = sig;
}

/* --impair */
static struct trd_impair_conf perf_impair;
static bool perf_impaired;

static void
setup(void)
{
	struct trd_node_conf tmpl = {.payload_crc =
					     perf_impaired}; /* corruption reaches payloads */
	struct trd_net_conf nc = {
		.links = perf_opt.links, .node = &tmpl, .ports = perf_opt.ports, .n_ports = 2};
	static const uint32_t two[] = {0, 1};
	uint32_t maxsize = 0;

	/* nodes (0,0,0) and (1,0,0); in a larger torus the others exist in the routing tables */
	trd_torus_init(&nc.torus, perf_opt.torus[0], perf_opt.torus[1], perf_opt.torus[2]);
	nc.ranks = two;
	nc.n_ranks = 2;
	px.net = trd_net_create(&nc);
	if (px.net == NULL)
		rte_exit(EXIT_FAILURE, "cannot build the two nodes: %s\n", rte_strerror(rte_errno));
	px.a = trd_net_node(px.net, 0);
	px.b = trd_net_node(px.net, 1);
	px.ca = trd_node_coord(px.a);
	px.cb = trd_node_coord(px.b);
	if (perf_impaired &&
	    (trd_node_impair(px.a, &perf_impair) != 0 || trd_node_impair(px.b, &perf_impair) != 0))
		rte_exit(EXIT_FAILURE, "cannot impair the links\n");
	for (unsigned int i = 0; i < perf_opt.n_sizes; i++)
		maxsize = RTE_MAX(maxsize, perf_opt.sizes[i]);
	px.buflen = RTE_MAX((size_t)maxsize * 2, (size_t)1 << 20);
	px.abuf = rte_zmalloc("perf", px.buflen, 4096);
	px.bbuf = rte_zmalloc("perf", px.buflen, 4096);
	px.adb_page = rte_zmalloc("perf", 4096, 4096);
	if (px.abuf == NULL || px.bbuf == NULL || px.adb_page == NULL)
		rte_exit(EXIT_FAILURE, "out of memory (give EAL more with -m)\n");
	px.amr = trd_mr_register(px.a, px.abuf, px.buflen,
				 TRD_ACCESS_ALL | (perf_opt.va ? TRD_ACCESS_VA : 0));
	px.bmr = trd_mr_register(px.b, px.bbuf, px.buflen,
				 TRD_ACCESS_ALL | (perf_opt.va ? TRD_ACCESS_VA : 0));
	px.aoff = trd_mr_remote_addr(px.amr, px.abuf);
	px.boff = trd_mr_remote_addr(px.bmr, px.bbuf);
	px.adb = trd_doorbell_register(px.a, px.adb_page, 4096, NULL);
	if (px.amr == NULL || px.bmr == NULL || px.adb == NULL ||
	    trd_counter_alloc(px.a, &px.actr) != 0 || trd_counter_alloc(px.b, &px.bctr) != 0)
		rte_exit(EXIT_FAILURE, "cannot register memory\n");
	px.worker = rte_get_next_lcore(-1, 1, 0);
	px.n_workers = px.worker < RTE_MAX_LCORE ? 1 : 0;
	px.workers[0] = px.worker;
	if (perf_opt.cores > 0) {
		unsigned int l = px.worker;

		for (px.n_workers = 0; px.n_workers < perf_opt.cores && l < RTE_MAX_LCORE;
		     l = rte_get_next_lcore(l, 1, 0))
			px.workers[px.n_workers++] = l;
		if (px.n_workers < perf_opt.cores)
			app_usage_error(
				"--cores %u: %u worker lcore(s) besides the main one (give more "
				"with -l, e.g. -l 0-%u)",
				perf_opt.cores, px.n_workers, perf_opt.cores);
	}
	if (perf_opt.capture != NULL &&
	    (trd_node_capture(px.a, perf_opt.capture, perf_opt.snaplen) != 0 ||
	     trd_node_capture(px.b, perf_opt.capture, perf_opt.snaplen) != 0))
		rte_exit(EXIT_FAILURE, "cannot capture into %s\n", perf_opt.capture);
	trd_telemetry_init();
}

/* The command line, besides what goes into perf_opt. */
struct perf_cli {
	const char *sizes, *memif, *memif_socket;
	const char *role; /* --server or --client (or --memif's side) */
	bool ports_given, port_given;
	bool ip_opts; /* --peer-ip, --gateway or --udp-port given */
	uint16_t port;
};

/* --ports A,B */
static void
perf_parse_ports(char *arg)
{
	char *comma = strchr(arg, ',');

	if (comma == NULL)
		app_usage_error("--ports: '%s' is not A,B", arg);
	*comma = '\0';
	perf_opt.ports[0] = (uint16_t)app_opt_u64("--ports", arg, 0, UINT16_MAX);
	perf_opt.ports[1] = (uint16_t)app_opt_u64("--ports", comma + 1, 0, UINT16_MAX);
	*comma = ',';
	if (perf_opt.ports[0] == perf_opt.ports[1])
		app_usage_error("--ports %s: two different ports", arg);
	perf_opt.links = TRD_NET_PORTS;
}

/* --torus XxYxZ */
static void
perf_parse_torus(char *arg)
{
	char *x1 = strchr(arg, 'x'), *x2 = x1 ? strchr(x1 + 1, 'x') : NULL;

	if (x1 == NULL || x2 == NULL)
		app_usage_error("--torus: '%s' is not XxYxZ", arg);
	*x1 = *x2 = '\0';
	perf_opt.torus[0] = (unsigned int)app_opt_u64("--torus", arg, 2, 64);
	perf_opt.torus[1] = (unsigned int)app_opt_u64("--torus", x1 + 1, 1, 64);
	perf_opt.torus[2] = (unsigned int)app_opt_u64("--torus", x2 + 1, 1, 64);
	*x1 = *x2 = 'x';
}

/* One option of the command line (getopt_long's @p c). */
static void
perf_parse_option(int c, struct perf_cli *cli, char **app_argv)
{
	switch (c) {
	case 't':
		perf_opt.test = optarg;
		break;
	case 's':
		cli->sizes = optarg;
		break;
	case 'n':
		perf_opt.iters = app_opt_size("--iters", optarg, 1, 1ULL << 40);
		break;
	case 'w':
		perf_opt.window = (unsigned int)app_opt_u64("--window", optarg, 1, 32);
		break;
	case 'b':
		perf_opt.baseline = true;
		break;
	case 'j':
		perf_opt.json = true;
		break;
	case 'L':
		if (strcmp(optarg, "ring") == 0)
			perf_opt.links = TRD_NET_RING;
		else if (strcmp(optarg, "ethdev") == 0)
			perf_opt.links = TRD_NET_ETHDEV_RING;
		else
			app_usage_error("--links: '%s' is not ring or ethdev", optarg);
		break;
	case 'M':
		if (strcmp(optarg, "local") == 0)
			perf_opt.mode = TRD_CPL_LOCAL;
		else if (strcmp(optarg, "delivery") == 0)
			perf_opt.mode = TRD_CPL_DELIVERY;
		else
			app_usage_error("--mode: '%s' is not local or delivery", optarg);
		break;
	case 'I':
		perf_opt.inline_poll = true;
		break;
	case OPT_VA:
		perf_opt.va = true;
		break;
	case OPT_COPY:
		perf_opt.copy = true;
		break;
	case OPT_ONE_OFF:
		perf_opt.one_off = true;
		break;
	case OPT_BIDIR:
		perf_opt.bidir = true;
		break;
	case 'H':
		perf_opt.hgrm = optarg;
		break;
	case 'R':
		perf_opt.reverse = true;
		break;
	case OPT_MEMIF:
		if (strcmp(optarg, "server") != 0 && strcmp(optarg, "client") != 0)
			app_usage_error("--memif: '%s' is not server or client", optarg);
		cli->memif = optarg;
		break;
	case 'S':
		cli->memif_socket = optarg;
		break;
	case 'C':
		perf_opt.capture = optarg;
		break;
	case 'N':
		perf_opt.snaplen = (unsigned int)app_opt_u64("--snaplen", optarg, 64, 65535);
		break;
	case 'P':
		if (trd_impair_parse(optarg, &perf_impair) != 0)
			app_usage_error("--impair: bad specification '%s' (e.g. loss=1%%,seed=1; "
					"rates 0..1 or 0..100%%)",
					optarg);
		perf_impaired = true;
		break;
	case 'D':
		perf_opt.timeout_us = app_opt_u64("--timeout", optarg, 1, 3600) * 1000000;
		break;
	case OPT_SERVER:
	case OPT_CLIENT:
		if (cli->role != NULL &&
		    strcmp(cli->role, c == OPT_SERVER ? "server" : "client") != 0)
			app_usage_error("--server and --client exclude each other");
		cli->role = c == OPT_SERVER ? "server" : "client";
		break;
	case OPT_IP:
		perf_opt.ip = perf_parse_ipv4("--ip", optarg, &perf_opt.prefix);
		break;
	case OPT_PEER_IP:
		perf_opt.peer_ip = perf_parse_ipv4("--peer-ip", optarg, NULL);
		cli->ip_opts = true;
		break;
	case OPT_GATEWAY:
		perf_opt.gateway = perf_parse_ipv4("--gateway", optarg, NULL);
		cli->ip_opts = true;
		break;
	case OPT_RAW_FRAME:
		perf_opt.raw_frame =
			(uint32_t)app_opt_u64("--raw-frame", optarg, 60, RTE_MBUF_DEFAULT_DATAROOM);
		break;
	case OPT_UDP_PORT:
		perf_opt.udp_port = (uint16_t)app_opt_u64("--udp-port", optarg, 1, UINT16_MAX);
		cli->ip_opts = true;
		break;
	case OPT_PORT:
		cli->port = (uint16_t)app_opt_u64("--port", optarg, 0, RTE_MAX_ETHPORTS - 1);
		cli->port_given = true;
		break;
	case OPT_DURATION:
		perf_opt.duration_s = app_opt_double("--duration", optarg, 0.01, 86400);
		break;
	case OPT_INTERVAL:
		perf_opt.interval_s = app_opt_double("--interval", optarg, 0.01, 3600);
		break;
	case OPT_RATE:
		if (parse_rate(optarg, &perf_opt.rate, &perf_opt.rate_bits) != 0)
			app_usage_error("--rate: '%s' is not a rate (messages per second 1..1G, "
					"e.g. 100k, or bits per second 1kbit..10Tbit, e.g. "
					"5Gbit)",
					optarg);
		break;
	case OPT_CORES:
		perf_opt.cores = (unsigned int)app_opt_u64("--cores", optarg, 1, 2);
		break;
	case OPT_SHARES:
		perf_opt.shares = (unsigned int)app_opt_u64("--shares", optarg, 1, 2);
		break;
	case 'O':
		perf_parse_ports(optarg);
		cli->ports_given = true;
		break;
	case 'T':
		perf_parse_torus(optarg);
		break;
	default:
		app_getopt_error(c, app_argv);
	}
}

/* The options that exclude each other, the test's name and the default sizes: one line on
 * stderr and exit 2 for the first one wrong. */
static void
perf_check_options(struct perf_cli *cli)
{
	if (cli->memif != NULL && cli->role != NULL)
		app_usage_error("--memif and --%s exclude each other (--memif makes the port)",
				cli->role);
	if (cli->memif != NULL)
		cli->role = cli->memif;
	if (cli->role != NULL &&
	    (cli->ports_given || perf_opt.inline_poll || perf_opt.links != TRD_NET_ETHDEV_RING ||
	     perf_opt.capture != NULL || perf_impaired))
		app_usage_error("--%s: one node on one port; --ports, --links, --inline, --capture "
				"and --impair are for the one-process run",
				cli->role);
	if (cli->port_given && (cli->role == NULL || cli->memif != NULL))
		app_usage_error("--port is for --server and --client (the port given to EAL)");
	perf_check_ip(cli->role, cli->memif != NULL, cli->ip_opts);
	if ((perf_opt.duration_s > 0 || perf_opt.interval_s > 0 || perf_opt.rate > 0) &&
	    (cli->role == NULL || strcmp(cli->role, "client") != 0))
		app_usage_error("--duration, --interval and --rate are for the client (--client or "
				"--memif client): the server answers what it asks");
	if (perf_opt.duration_s > 0 && perf_opt.iters != 0)
		app_usage_error("--duration and -n exclude each other");
	if (perf_opt.duration_s > 0 && perf_opt.interval_s > perf_opt.duration_s)
		app_usage_error("--interval %g is longer than --duration %g", perf_opt.interval_s,
				perf_opt.duration_s);
	if (perf_opt.va && cli->role != NULL)
		app_usage_error("--va is for the one-process run");
	if (perf_opt.cores > 0 && perf_opt.inline_poll)
		app_usage_error("--cores and --inline exclude each other");
	if (perf_opt.cores > 1 && cli->role != NULL)
		app_usage_error("--cores %u: one node per process with --%s (--cores 1 at most)",
				perf_opt.cores, cli->role);
	if (perf_opt.test == NULL && cli->role != NULL && strcmp(cli->role, "server") == 0)
		perf_opt.test = "all"; /* the server answers whatever the client asks */
	if (perf_opt.shares != 0 && cli->role != NULL && cli->memif == NULL)
		app_usage_error("--shares with --%s: only over --memif (a port of one queue pair "
				"a share)",
				cli->role);
	if (perf_opt.shares != 0 && cli->memif != NULL && perf_opt.baseline)
		app_usage_error("--shares over --memif has no --baseline (one process has it)");
	if (perf_opt.shares != 0 && perf_opt.test == NULL)
		perf_opt.test = "put_rate"; /* not run: --shares runs put_shares alone */
	if (perf_opt.test == NULL)
		app_usage_error("-t TEST is required (see --help)");
	if (perf_check_test_list(perf_opt.test) != 0)
		app_usage_error("unknown test in '%s' (a test of --help, a comma-separated list of "
				"them, or all)",
				perf_opt.test);
	if (cli->role != NULL && strcmp(cli->role, "client") == 0) {
		static const char *const two[] = {"put_rate",     "put_bw",  "put_lat",
						  "fifo_lat",     "get_lat", "reflect_lat",
						  "allreduce_lat"};

		for (unsigned int i = 0; i < RTE_DIM(tests); i++) {
			bool ok = false;

			for (unsigned int j = 0; j < RTE_DIM(two) && !ok; j++)
				ok = strcmp(tests[i].name, two[j]) == 0;
			if (!ok && strcmp(perf_opt.test, "all") != 0 &&
			    perf_test_selected(tests[i].name))
				app_usage_error("--client: %s runs in one process only (two "
						"processes: put_rate put_bw put_lat fifo_lat "
						"get_lat reflect_lat allreduce_lat)",
						tests[i].name);
		}
	}
	if (perf_opt.reverse && (cli->role == NULL || strcmp(cli->role, "client") != 0))
		app_usage_error("-R (reverse) is for the client (--client or --memif client)");
	if (perf_opt.raw_frame != 0 && !perf_opt.baseline)
		app_usage_error("--raw-frame sets the size of --baseline's frames: give both");
	if (perf_opt.reverse && (perf_opt.baseline || perf_opt.interval_s > 0))
		app_usage_error("-R: the server sends and reports one summary per test: no "
				"--baseline, no --interval");
	if (perf_opt.bidir && (cli->role == NULL || strcmp(cli->role, "client") != 0))
		app_usage_error("--bidir is for the client (--client or --memif client)");
	if (perf_opt.bidir && (perf_opt.reverse || perf_opt.baseline || perf_opt.interval_s > 0))
		app_usage_error("--bidir: each side reports one summary per test: no -R, no "
				"--baseline, no --interval");
	if (perf_opt.one_off && (cli->role == NULL || strcmp(cli->role, "server") != 0))
		app_usage_error("--one-off is for the server (--server or --memif server)");
	if (cli->sizes != NULL && parse_sizes(cli->sizes) != 0)
		app_usage_error("--sizes: bad list '%s' (e.g. 64, 8,64,1K or 8:65536; each 0..64M, "
				"at most %d)",
				cli->sizes, PERF_MAX_SIZES);
	if (cli->sizes == NULL) {
		perf_opt.n_sizes = 1;
		/* a list: the first test's default */
		size_t first = strcspn(perf_opt.test, ",");

		perf_opt.sizes[0] = strncmp(perf_opt.test, "linerate", first) == 0 ? 1436
				    : first > 3 && strncmp(perf_opt.test + first - 3, "_bw", 3) == 0
					    ? 65536
					    : 64;
	}
}

static void
perf_on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The engine collective against the software one (p50 over p50) on 8 and 64 nodes; for an
 * allreduce, also the engine's bandwidth (size / p50) against one link's put (put_link) */
static void
print_coll_ratio(const char *name, const struct perf_result *r, bool link)
{
	double e8 = r[PERF_COLL_ENG].p50 / r[PERF_COLL_SOFT].p50;
	double e64 = r[PERF_COLL_ENG64].p50 / r[PERF_COLL_SOFT64].p50;
	/* bytes per microsecond: MB/s */
	double bw8 = r[PERF_COLL_ENG].size / r[PERF_COLL_ENG].p50;
	double bw64 = r[PERF_COLL_ENG64].size / r[PERF_COLL_ENG64].p50;
	double bwl = link ? r[PERF_COLL_LINK].size / r[PERF_COLL_LINK].p50 : 0;

	if (perf_opt.json) {
		printf("{\"test\":\"%s\",\"size\":%u,\"eng_vs_soft\":%.4f,"
		       "\"eng64_vs_soft64\":%.4f",
		       name, r[PERF_COLL_ENG].size, e8, e64);
		if (link)
			printf(",\"eng_mbps\":%.2f,\"eng64_mbps\":%.2f,\"link_mbps\":%.2f,"
			       "\"eng_vs_link\":%.4f,\"eng64_vs_link\":%.4f",
			       bw8, bw64, bwl, bw8 / bwl, bw64 / bwl);
		printf("}\n");
	} else {
		printf("%-12s %9u  p50 engine/software: %.3f (8 nodes) %.3f (64 nodes)", name,
		       r[PERF_COLL_ENG].size, e8, e64);
		if (link)
			printf("; MB/s: eng %.1f eng64 %.1f link %.1f, eng/link %.3f eng64/link %.3f",
			       bw8, bw64, bwl, bw8 / bwl, bw64 / bwl);
		printf("\n");
	}
	fflush(stdout);
}

/* One size of @p t, printed; allreduce_lat as five rows: software and engine allreduce on
 * 2x2x2 and on 4x4x4, and a put over one link of the 2x2x2 net, then their ratios; barrier_lat
 * as four and their ratios (perf_ar_variant). @return the failures. */
static int
run_variants(const struct perf_test *t, uint32_t size)
{
	static const char *const ar_names[] = {"allreduce_lat", "allreduce_eng", "allreduce_lat64",
					       "allreduce_eng64", "put_link"};
	static const char *const bar_names[] = {"barrier_lat", "barrier_eng", "barrier_lat64",
						"barrier_eng64"};
	bool ar = strcmp(t->name, "allreduce_lat") == 0, bar = strcmp(t->name, "barrier_lat") == 0;
	const char *const *names = ar ? ar_names : bar_names;
	unsigned int nv = ar ? RTE_DIM(ar_names) : bar ? RTE_DIM(bar_names) : 1, ok = 0;
	struct perf_result res[RTE_DIM(ar_names)];
	int failed = 0;

	for (unsigned int v = 0; v < nv && !perf_stop; v++) {
		struct perf_result *r = &res[RTE_MIN(v, RTE_DIM(res) - 1)];
		int rc;

		perf_ar_variant = v;
		rc = run_one(t, size, r);
		if (rc != 0 && perf_stop)
			break; /* nothing measured of this one */
		if (rc != 0) {
			fprintf(stderr, "toroid-perf: %s size %u failed: %s\n",
				ar || bar ? names[v] : t->name, size, strerror(-rc));
			failed++;
			continue;
		}
		if (ar || bar)
			r->test = names[v];
		print_result(r);
		ok++;
	}
	if ((ar || bar) && ok == nv && !perf_stop)
		print_coll_ratio(ar ? "allreduce_ratio" : "barrier_ratio", res, ar);
	return failed;
}

/* The one-process run: every size of the test asked (or of every test); the failures. */
static int
perf_run_tests(void)
{
	int failed = 0;

	for (unsigned int ti = 0; ti < RTE_DIM(tests) && !perf_stop; ti++) {
		const struct perf_test *t = &tests[ti];

		if (!perf_test_selected(t->name))
			continue;
		perf_print_header(t->kind);
		if (strcmp(t->name, "barrier_lat") == 0) {
			failed += run_variants(t, 0); /* no size: once */
			continue;
		}
		for (unsigned int si = 0; si < perf_opt.n_sizes && !perf_stop; si++)
			failed += run_variants(t, perf_opt.sizes[si]);
	}
	return failed;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"test", required_argument, NULL, 't'},
		{"sizes", required_argument, NULL, 's'},
		{"iters", required_argument, NULL, 'n'},
		{"window", required_argument, NULL, 'w'},
		{"baseline", no_argument, NULL, 'b'},
		{"json", no_argument, NULL, 'j'},
		{"links", required_argument, NULL, 'L'},
		{"mode", required_argument, NULL, 'M'},
		{"inline", no_argument, NULL, 'I'},
		{"hgrm", required_argument, NULL, 'H'},
		{"memif", required_argument, NULL, OPT_MEMIF},
		{"reverse", no_argument, NULL, 'R'},
		{"memif-socket", required_argument, NULL, 'S'},
		{"torus", required_argument, NULL, 'T'},
		{"ports", required_argument, NULL, 'O'},
		{"capture", required_argument, NULL, 'C'},
		{"snaplen", required_argument, NULL, 'N'},
		{"impair", required_argument, NULL, 'P'},
		{"timeout", required_argument, NULL, 'D'},
		{"server", no_argument, NULL, OPT_SERVER},
		{"client", no_argument, NULL, OPT_CLIENT},
		{"port", required_argument, NULL, OPT_PORT},
		{"va", no_argument, NULL, OPT_VA},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"rate", required_argument, NULL, OPT_RATE},
		{"cores", required_argument, NULL, OPT_CORES},
		{"shares", required_argument, NULL, OPT_SHARES},
		{"copy", no_argument, NULL, OPT_COPY},
		{"one-off", no_argument, NULL, OPT_ONE_OFF},
		{"bidir", no_argument, NULL, OPT_BIDIR},
		{"ip", required_argument, NULL, OPT_IP},
		{"peer-ip", required_argument, NULL, OPT_PEER_IP},
		{"gateway", required_argument, NULL, OPT_GATEWAY},
		{"udp-port", required_argument, NULL, OPT_UDP_PORT},
		{"raw-frame", required_argument, NULL, OPT_RAW_FRAME},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct perf_cli cli = {.memif_socket = "/tmp/toroid-perf.sock"};
	int app_argc, c, failed = 0;
	char **app_argv;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			perf_usage("toroid-perf");
			return 0;
		}
	/* two processes on two CPUs: one each, one thread each */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--memif") == 0 && i + 1 < argc)
			app_default_lcores = strcmp(argv[i + 1], "server") == 0 ? "0" : "1";
		if (strcmp(argv[i], "--server") == 0 || strcmp(argv[i], "--client") == 0)
			app_default_lcores = strcmp(argv[i], "--server") == 0 ? "0" : "1";
	}
	/* the options first, so a bad command line prints one line and costs no EAL */
	app_split_args(argc, argv, &app_argc, &app_argv);
	opterr = 0;
	while ((c = getopt_long(app_argc, app_argv, ":t:s:n:w:bjhR", lo, NULL)) != -1)
		perf_parse_option(c, &cli, app_argv);
	if (optind < app_argc)
		app_usage_error("unexpected argument '%s' (EAL options go before \"--\")",
				app_argv[optind]);
	perf_check_options(&cli);
	free(app_argv);
	app_eal_init(argc, argv, "1024", &app_argc, &app_argv);
	if (perf_opt.links == TRD_NET_PORTS && (!rte_eth_dev_is_valid_port(perf_opt.ports[0]) ||
						!rte_eth_dev_is_valid_port(perf_opt.ports[1])))
		app_usage_error(
			"--ports %u,%u: two DPDK ports (%u available; give them with -a PCI "
			"or --vdev)",
			perf_opt.ports[0], perf_opt.ports[1], rte_eth_dev_count_avail());
	perf_on_signals();
	if (cli.role != NULL && cli.memif == NULL && !rte_eth_dev_is_valid_port(cli.port))
		app_usage_error(
			"--%s: no DPDK port %u (%u available; give one with -a PCI or --vdev)",
			cli.role, cli.port, rte_eth_dev_count_avail());
	if (cli.role != NULL && perf_opt.shares != 0) {
		/* put_shares between two processes, on a memif port of one queue pair a share */
		failed = perf_shares_memif(strcmp(cli.role, "server") == 0, cli.memif_socket,
					   perf_opt.shares,
					   perf_opt.iters ? perf_opt.iters : 2000000) != 0;
		rte_eal_cleanup();
		if (perf_stop) {
			fprintf(stderr, "toroid-perf: interrupted\n");
			return 128 + perf_stop;
		}
		return failed ? 1 : 0;
	}
	if (cli.role != NULL) {
		failed = perf_twoproc(strcmp(cli.role, "server") == 0,
				      cli.memif != NULL ? cli.memif_socket : NULL, cli.port);
		rte_eal_cleanup();
		/* a server is stopped by a signal: between two clients, that is its clean end */
		if (perf_stop && failed == 0 && strcmp(cli.role, "server") == 0) {
			fprintf(stderr, "toroid-perf: server stopped\n");
			return 0;
		}
		if (perf_stop) {
			fprintf(stderr, "toroid-perf: interrupted\n");
			return 128 + perf_stop;
		}
		return failed ? 1 : 0;
	}
	setup();
	failed = perf_opt.shares != 0 /* a run of its own */
			 ? perf_shares(perf_opt.shares,
				       perf_opt.iters ? perf_opt.iters : 2000000) != 0
			 : perf_run_tests();
	engine_stop();
	trd_net_free(px.net);
	rte_eal_cleanup();
	if (perf_stop) {
		fprintf(stderr, "toroid-perf: interrupted\n");
		return 128 + perf_stop;
	}
	return failed ? 1 : 0;
}
