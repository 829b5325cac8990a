/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node's command line: --help, and the options after "--", read before EAL starts so
 * that a bad command line costs nothing and prints one line (docs/toroid-node.md).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/app_common.h"
#include "node.h"

struct node_opts node_opt = {
	.port = -1,
	.socket = NODE_DEFAULT_SOCKET,
	.staging = 64ULL << 20,
	.max_pool = 1ULL << 30,
	.idle_us = 1000,
	.idle_auto = true,
	.sleep_us = 200,
	.sleep_auto = true,
	.link_wait = 10,
};

void
node_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [EAL options] -- --topo FILE --node RANK|X,Y,Z [options]\n"
		"\n"
		"Runs node RANK of the torus in FILE on this host's DPDK ports and serves the\n"
		"application processes the file places on it (docs/toroid-node.md).\n"
		"\n"
		"  --topo FILE          topology file (docs/topology.md)\n"
		"  --node RANK|X,Y,Z    the node this engine is\n"
		"  --port P             switched topology: the DPDK port on the segment (default 0)\n"
		"  --ports DIR=P,...    direct topology: the port of each link, e.g. x+=0,y+=1,z+=2\n"
		"                       (default: the ports the file gives for the node)\n"
		"  --nodes A-B          test mode: build the whole torus in this process over ring\n"
		"                       links and serve nodes A..B (no ports; --node not needed)\n"
		"  --vni-socket PATH    application socket; %%r is replaced by the node's rank\n"
		"                       (default %s)\n"
		"  --staging SIZE       bytes held for messages that arrive before their receive,\n"
		"                       per node (default 64M)\n"
		"  --max-pool SIZE      largest buffer pool an application may ask (default 1G)\n"
		"  --max-ifs N          applications at once per node (default 64, 1..256)\n"
		"  --noproc-ms N        a send to a process that is not attached keeps asking this\n"
		"                       long (default 3000)\n"
		"  --vni-max-conns N    connections waiting to register at once (default 256,\n"
		"                       1..4096; a process may hold 4, a user half, each 1 s)\n"
		"  --vni-hdr-max N      long messages a process may hold accepted as their header\n"
		"                       only when staging is full (default 1024, 0..65536;\n"
		"                       0: such requests are refused and asked again)\n"
		"  --vni-rx-max N       receive states: messages held or being received, all\n"
		"                       processes together (default and max 1048575, from 64;\n"
		"                       beyond, a request is refused: nak_no_rx)\n"
		"  --vni-socket-mode M  permissions of the socket file, octal (default 0660: the\n"
		"                       engine's user and group may attach)\n"
		"  --vni-owner APP=WHO  only WHO may attach processes of application APP: a user\n"
		"                       (name or uid) or @group (name or gid); repeat to allow more\n"
		"                       (default: any user who can open the socket, one user at a\n"
		"                       time per application)\n"
		"  --mtu N              set the ports' MTU, 120..9000 (default: keep it)\n"
		"  --link-wait S        wait up to S seconds for the ports' links (default 10)\n"
		"  --idle-us N|auto     sleep after N us without work (0: busy-poll); auto (default):\n"
		"                       1000, or 5 on a node without ports, while the busy threads\n"
		"                       that may run on its CPUs (processes not moved off them,\n"
		"                       other programs, the computing of those moved off) outnumber\n"
		"                       them; then an empty turn of the loop also yields the CPU\n"
		"  --sleep-us N|auto    longest sleep; sleeps start at 200 us (or N if less) and\n"
		"                       double while there is no work; auto (default): 200 with\n"
		"                       ports (they have no Rx interrupts), 100000 without\n"
		"  --stats-period N     print rates and per-application counters every N seconds\n"
		"                       (decimals allowed, at least 0.001; default 0: totals at exit)\n"
		"  --json               statistics as JSON lines\n"
		"  --capture FILE       record every frame of the node(s) into a pcapng file\n"
		"                       (start, rotate, stop at run time: toroid-dump --attach)\n"
		"  --snaplen N          capture snap length (default 65535)\n"
		"  --capture-filter EXPR  record only frames matching this BPF expression\n"
		"                       (pcap-filter(7)), e.g. 'ether[15] = 1' (puts)\n"
		"  --capture-size SIZE  start FILE.1, FILE.2, ... when a file would pass SIZE bytes\n"
		"                       (k, M, G suffixes; like tcpdump -C; default: one file)\n"
		"  --capture-files N    with --capture-size: a ring of N files FILE.0 .. FILE.N-1,\n"
		"                       the oldest overwritten (like tcpdump -W)\n"
		"  --capture-limit SIZE|none  stop recording when the files kept would pass SIZE\n"
		"                       (default 1G)\n"
		"  --impair SPEC        impair what every link receives, for tests:\n"
		"                       loss=2%%,reorder=1%%,dup=0.5%%,corrupt=0.1%%,seed=7\n"
		"  -q, --quiet          no totals at exit\n"
		"  -h, --help           this help\n"
		"\n"
		"Without EAL options: %s\n",
		prog, NODE_DEFAULT_SOCKET, app_eal_defaults());
}

static void
parse_ports(const char *s)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		app_usage_error("--ports: list too long");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int d;

		if (eq == NULL)
			app_usage_error("--ports: '%s' is not DIR=PORT (e.g. x+=0,y+=1)", tok);
		*eq = '\0';
		for (d = 0; d < TRD_DIR_COUNT; d++)
			if (strcmp(tok, trd_dir_name((enum trd_dir)d)) == 0)
				break;
		if (d == TRD_DIR_COUNT)
			app_usage_error("--ports: '%s' is not a direction (x+, x-, y+, y-, z+, z-)",
					tok);
		node_opt.ports[d] = (int)app_opt_u64("--ports", eq + 1, 0, UINT16_MAX);
	}
	node_opt.have_ports = true;
}

/* --vni-owner APP=USER|UID|@GROUP|@GID */
static void
parse_owner(const char *s)
{
	struct trd_vni_svc_owner *o;
	const char *eq = strchr(s, '=');
	char app[16];

	if (node_opt.n_owners == NODE_MAX_OWNERS)
		app_usage_error("--vni-owner: at most %d", NODE_MAX_OWNERS);
	if (eq == NULL || eq == s || (size_t)(eq - s) >= sizeof(app) || eq[1] == '\0' ||
	    (eq[1] == '@' && eq[2] == '\0'))
		app_usage_error(
			"--vni-owner: '%s' is not APP=USER, APP=UID, APP=@GROUP or APP=@GID", s);
	o = &node_opt.owners[node_opt.n_owners];
	memcpy(app, s, (size_t)(eq - s));
	app[eq - s] = '\0';
	o->app = (uint32_t)app_opt_u64("--vni-owner", app, 0, UINT32_MAX - 1); /* MAX is ANY */
	o->uid = o->gid = -1;
	if (eq[1] == '@') {
		const struct group *g = getgrnam(eq + 2);

		if (g == NULL && strspn(eq + 2, "0123456789") != strlen(eq + 2))
			app_usage_error("--vni-owner: no group '%s'", eq + 2);
		o->gid = g != NULL ? (int64_t)g->gr_gid
				   : (int64_t)app_opt_u64("--vni-owner", eq + 2, 0, UINT32_MAX - 1);
	} else {
		const struct passwd *pw = getpwnam(eq + 1);

		if (pw == NULL && strspn(eq + 1, "0123456789") != strlen(eq + 1))
			app_usage_error("--vni-owner: no user '%s'", eq + 1);
		o->uid = pw != NULL
				 ? (int64_t)pw->pw_uid
				 : (int64_t)app_opt_u64("--vni-owner", eq + 1, 0, UINT32_MAX - 1);
	}
	node_opt.n_owners++;
}

enum {
	O_TOPO = 256,
	O_NODE,
	O_NODES,
	O_PORT,
	O_PORTS,
	O_SOCK,
	O_STAGING,
	O_MAXPOOL,
	O_MAXIFS,
	O_NOPROC,
	O_MTU,
	O_LINKWAIT,
	O_IDLE,
	O_SLEEP,
	O_STATS,
	O_JSON,
	O_CAPTURE,
	O_SNAPLEN,
	O_OWNER,
	O_SOCKMODE,
	O_IMPAIR,
	O_MAXCONNS,
	O_HDRMAX,
	O_RXMAX,
	O_CAPFILTER,
	O_CAPSIZE,
	O_CAPFILES,
	O_CAPLIMIT,
};

static const struct option node_longopts[] = {
	{"topo", required_argument, NULL, O_TOPO},
	{"node", required_argument, NULL, O_NODE},
	{"nodes", required_argument, NULL, O_NODES},
	{"port", required_argument, NULL, O_PORT},
	{"ports", required_argument, NULL, O_PORTS},
	{"vni-socket", required_argument, NULL, O_SOCK},
	{"staging", required_argument, NULL, O_STAGING},
	{"max-pool", required_argument, NULL, O_MAXPOOL},
	{"max-ifs", required_argument, NULL, O_MAXIFS},
	{"noproc-ms", required_argument, NULL, O_NOPROC},
	{"mtu", required_argument, NULL, O_MTU},
	{"link-wait", required_argument, NULL, O_LINKWAIT},
	{"idle-us", required_argument, NULL, O_IDLE},
	{"sleep-us", required_argument, NULL, O_SLEEP},
	{"stats-period", required_argument, NULL, O_STATS},
	{"json", no_argument, NULL, O_JSON},
	{"capture", required_argument, NULL, O_CAPTURE},
	{"snaplen", required_argument, NULL, O_SNAPLEN},
	{"capture-filter", required_argument, NULL, O_CAPFILTER},
	{"capture-size", required_argument, NULL, O_CAPSIZE},
	{"capture-files", required_argument, NULL, O_CAPFILES},
	{"capture-limit", required_argument, NULL, O_CAPLIMIT},
	{"impair", required_argument, NULL, O_IMPAIR},
	{"vni-owner", required_argument, NULL, O_OWNER},
	{"vni-socket-mode", required_argument, NULL, O_SOCKMODE},
	{"vni-max-conns", required_argument, NULL, O_MAXCONNS},
	{"vni-hdr-max", required_argument, NULL, O_HDRMAX},
	{"vni-rx-max", required_argument, NULL, O_RXMAX},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* One option (getopt_long's @p c) of the command line. */
static void
node_parse_option(int c, char **argv)
{
	switch (c) {
	case O_TOPO:
		node_opt.topo_path = optarg;
		break;
	case O_NODE:
		node_opt.node_spec = optarg;
		break;
	case O_NODES:
		node_opt.nodes_spec = optarg;
		break;
	case O_PORT:
		node_opt.port = (int)app_opt_u64("--port", optarg, 0, UINT16_MAX);
		break;
	case O_PORTS:
		parse_ports(optarg);
		break;
	case O_SOCK:
		node_opt.socket = optarg;
		break;
	case O_STAGING:
		node_opt.staging = app_opt_size("--staging", optarg, 4096, 1ULL << 40);
		break;
	case O_MAXPOOL:
		node_opt.max_pool = app_opt_size("--max-pool", optarg, 4096, 1ULL << 40);
		break;
	case O_MAXIFS:
		node_opt.max_ifs = (unsigned int)app_opt_u64("--max-ifs", optarg, 1, 256);
		break;
	case O_NOPROC:
		node_opt.noproc_ms = (unsigned int)app_opt_u64("--noproc-ms", optarg, 1, 3600000);
		break;
	case O_MAXCONNS:
		node_opt.max_conns = (unsigned int)app_opt_u64("--vni-max-conns", optarg, 1, 4096);
		break;
	case O_HDRMAX:
		node_opt.hdr_max = (int)app_opt_u64("--vni-hdr-max", optarg, 0, 65536);
		if (node_opt.hdr_max == 0)
			node_opt.hdr_max = -1; /* none: the service's 0 means its default */
		break;
	case O_RXMAX:
		node_opt.rx_max = (unsigned int)app_opt_u64("--vni-rx-max", optarg, 64, 1048575);
		break;
	case O_MTU:
		node_opt.mtu = (unsigned int)app_opt_u64("--mtu", optarg, TRD_HDR_LEN + 64, 9000);
		break;
	case O_LINKWAIT:
		node_opt.link_wait = (unsigned int)app_opt_u64("--link-wait", optarg, 0, 3600);
		break;
	case O_IDLE:
		node_opt.idle_auto = strcmp(optarg, "auto") == 0;
		if (!node_opt.idle_auto)
			node_opt.idle_us =
				(unsigned int)app_opt_u64("--idle-us", optarg, 0, 10000000);
		break;
	case O_SLEEP:
		node_opt.sleep_auto = strcmp(optarg, "auto") == 0;
		if (!node_opt.sleep_auto)
			node_opt.sleep_us =
				(unsigned int)app_opt_u64("--sleep-us", optarg, 0, 1000000);
		break;
	case O_STATS: {
		double v = app_opt_double("--stats-period", optarg, 0, 86400);

		node_opt.stats_period_us = (uint64_t)(v * 1e6 + 0.5);
		if (v > 0 && node_opt.stats_period_us < 1000) /* at most one line a millisecond */
			app_usage_error("--stats-period: '%s' is out of range (0, or 0.001..86400)",
					optarg);
		break;
	}
	case O_JSON:
		node_opt.json = true;
		break;
	case O_CAPTURE:
		node_opt.capture = optarg;
		break;
	case O_SNAPLEN:
		node_opt.snaplen = (unsigned int)app_opt_u64("--snaplen", optarg, 64, 262144);
		break;
	case O_CAPFILTER: {
		char err[256];

		if (trd_capture_filter_check(optarg, err, sizeof(err)) != 0)
			app_usage_error("--capture-filter '%s': %s", optarg, err);
		node_opt.capture_filter = optarg;
		break;
	}
	case O_CAPSIZE:
		node_opt.capture_size = app_opt_size("--capture-size", optarg, 4096, 1ULL << 50);
		break;
	case O_CAPFILES:
		node_opt.capture_files =
			(unsigned int)app_opt_u64("--capture-files", optarg, 1, 100000);
		break;
	case O_CAPLIMIT:
		node_opt.capture_limit =
			strcmp(optarg, "none") == 0
				? UINT64_MAX
				: app_opt_size("--capture-limit", optarg, 4096, 1ULL << 50);
		break;
	case O_OWNER:
		parse_owner(optarg);
		break;
	case O_IMPAIR:
		if (trd_impair_parse(optarg, &node_opt.impair_conf) != 0)
			app_usage_error("--impair: '%s' is not loss=P,reorder=P,dup=P,"
					"corrupt=P,seed=N",
					optarg);
		node_opt.impair = true;
		break;
	case O_SOCKMODE: {
		char *end;
		unsigned long m;

		errno = 0;
		m = strtoul(optarg, &end, 8);
		if (errno != 0 || end == optarg || *end != '\0' || *optarg == '-' || m == 0 ||
		    m > 0777)
			app_usage_error("--vni-socket-mode: '%s' is not an octal mode 1..0777",
					optarg);
		node_opt.socket_mode = (unsigned int)m;
		break;
	}
	case 'q':
		node_opt.quiet = true;
		break;
	case 'h':
		node_usage(stdout, argv[0]);
		exit(0);
	default:
		app_getopt_error(c, argv);
	}
}

/* The options after "--"; read before EAL starts, so a bad command line costs nothing and
 * prints one line. */
void
node_parse_args(int argc, char **argv)
{
	int c;

	for (int d = 0; d < TRD_DIR_COUNT; d++)
		node_opt.ports[d] = -1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":qh", node_longopts, NULL)) != -1)
		node_parse_option(c, argv);
	if (optind < argc)
		app_usage_error("unexpected argument '%s' (EAL options go before \"--\")",
				argv[optind]);
	if (node_opt.topo_path == NULL ||
	    (node_opt.node_spec == NULL && node_opt.nodes_spec == NULL))
		app_usage_error("--topo and --node (or --nodes) are required (see --help)");
	if (node_opt.node_spec != NULL && node_opt.nodes_spec != NULL)
		app_usage_error("--node and --nodes exclude each other");
	if (node_opt.capture_files != 0 && node_opt.capture_size == 0)
		app_usage_error("--capture-files needs --capture-size");
}
