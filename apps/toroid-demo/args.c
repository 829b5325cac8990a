/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: the command line. */
#include "demo.h"

/* ---- command line ---- */

/* printf format: the default -l value, the most sizes, the default sizes. */
static const char demo_usage_fmt[] =
	"Usage: toroid-demo [EAL options] -- [options]\n"
	"\n"
	"Build a 2x2x2 torus in this process and, for every ordered pair of its 8 nodes,\n"
	"run a direct put, a memory-FIFO message and a remote get (RDMA read) of each size,\n"
	"with random data at unaligned offsets, checking every byte and the bytes around\n"
	"the written range. Print a table, then \"demo: N passed, M failed\" (transfers).\n"
	"\n"
	"Reflection completion (--ops reflect): for every pair and size, a put posted\n"
	"with trd_inject_reflect() in four ways, one table row each:\n"
	"  put+reflect local fifo         local mode: a neighbour of the origin (its\n"
	"  put+reflect local doorbell     trd_node_reflector()) echoes the completion\n"
	"                                 once the data left; checked: by then the\n"
	"                                 injection FIFO had handed every data packet\n"
	"                                 to a port; the source is then overwritten at\n"
	"                                 once, and the target must still receive the\n"
	"                                 bytes posted\n"
	"  put+reflect delivery fifo      delivery mode: the target echoes it once the\n"
	"  put+reflect delivery doorbell  data is in its memory; checked: by then every\n"
	"                                 byte is there\n"
	"FIFO kind: a 0-byte message in the origin's reception FIFO %d, its user word the\n"
	"cookie, its source the reflector. Doorbell kind: the cookie written into a word\n"
	"of the origin's doorbell page, whose event queue the demo thread owns.\n"
	"Post-to-completion latencies (min/avg/p50/p99) are printed for these rows; they\n"
	"are informational (one transfer at a time, one engine lcore for 8 nodes), not a\n"
	"benchmark.\n"
	"\n"
	"Without EAL options (no \"--\", or nothing before it) the EAL runs with\n"
	"  --no-huge --no-pci --no-shconf -m 768 -l %s --log-level lib.eal:error\n"
	"  --log-level lib.telemetry:error\n"
	"One worker lcore serves all nodes and the main lcore runs the demo; with a single\n"
	"lcore the waits make progress inline.\n"
	"\n"
	"Options:\n"
	"  --ops LIST        operations to run, from put,fifo,rget,reflect (default:\n"
	"                    all four); reflect is the four put+reflect rows, one of\n"
	"                    which may be named alone: reflect-local-fifo,\n"
	"                    reflect-local-doorbell, reflect-delivery-fifo,\n"
	"                    reflect-delivery-doorbell\n"
	"  --sizes LIST      transfer sizes of put, fifo and rget in bytes, with K (KiB)\n"
	"                    or M (MiB) suffixes, 1 to 64M, at most %d\n"
	"                    (default: %s)\n"
	"  --reflect-sizes LIST\n"
	"                    the same for the put+reflect rows (default: %s)\n"
	"  --doorbell-wait HOW\n"
	"                    how doorbell completions are waited for (trd_doorbell_wait):\n"
	"                    spin, monitor (UMWAIT, or a pause loop without WAITPKG),\n"
	"                    or eq: sleep on the page's event queue (default: eq)\n"
	"  --links KIND      ring: the engine's ring links; ethdev: net_ring ethdev ports,\n"
	"                    2 per cable, 24 in all (default: ring)\n"
	"  --seed N          seed of the random data and offsets (default: 1)\n"
	"  --timeout-ms N    limit of each wait, in milliseconds (default: 10000)\n"
	"  --capture FILE    record every frame the nodes send and receive, in order, into\n"
	"                    a pcap file (nanosecond timestamps; toroid-dump -r FILE)\n"
	"  --snaplen N       bytes of each frame kept by --capture (default: 65535)\n"
	"  --impair SPEC     impair every link, e.g. loss=2%%,reorder=1%%,dup=0.5%%,\n"
	"                    corrupt=0.1%%,seed=7 (reliability repairs it; payload CRC on)\n"
	"  -v, --verbose     also print a per-size breakdown (latencies too) and per-node\n"
	"                    statistics\n"
	"  -h, --help        print this help and exit\n"
	"\n"
	"SIGINT or SIGTERM stops the run; the table then shows what ran.\n"
	"Exit status: 0 if every transfer passed; 1 if one failed or set-up failed;\n"
	"2 for a bad command line; 128+signal if interrupted.\n"
	"\n"
	"Examples:\n"
	"  toroid-demo\n"
	"  toroid-demo -- --links ethdev -v\n"
	"  toroid-demo -l 0 --no-huge --no-pci --no-shconf -m 768 -- --sizes 1M --ops rget\n"
	"  toroid-demo -- --ops reflect --reflect-sizes 64 --doorbell-wait spin -v\n";

static void
demo_usage(FILE *f, const char *default_lcores)
{
	fprintf(f, demo_usage_fmt, DEMO_CPL_REC_FIFO, default_lcores, DEMO_MAX_SIZES,
		demo_default_sizes, demo_default_rsizes);
}

/* A bad command line: one line on stderr, exit 2 (DEMO_EXIT_USAGE). */
#define demo_usage_error app_usage_error

/* A size 1..DEMO_SIZE_MAX, with an optional K or M suffix (strictly: app_args.h). 0 on
 * success. */
static int
demo_parse_size(const char *s, uint32_t *out)
{
	uint64_t v;

	if (app_parse_u64(s, true, 1, DEMO_SIZE_MAX, &v) != 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static void
demo_parse_sizes(struct demo_sizes *sz, const char *opt, const char *arg)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(buf))
		demo_usage_error("%s: list too long", opt);
	snprintf(buf, sizeof(buf), "%s", arg);
	sz->n = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (sz->n == DEMO_MAX_SIZES)
			demo_usage_error("%s: at most %d sizes", opt, DEMO_MAX_SIZES);
		if (demo_parse_size(tok, &sz->v[sz->n]) != 0)
			demo_usage_error("%s: bad size '%s' (1 to 64M, e.g. 1500, 4K, 1M)", opt,
					 tok);
		sz->n++;
	}
	if (sz->n == 0)
		demo_usage_error("%s: empty list", opt);
}

static void
demo_parse_ops(struct demo_opts *o, const char *arg)
{
	char buf[128], *save = NULL, *tok;
	bool any = false;

	if (strlen(arg) >= sizeof(buf))
		demo_usage_error("--ops: list too long");
	snprintf(buf, sizeof(buf), "%s", arg);
	memset(o->ops, 0, sizeof(o->ops));
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		/* a key selects every row that has it; a name, its row */
		for (unsigned int i = 0; i < DEMO_OP_COUNT; i++) {
			if (strcmp(tok, demo_ops[i].key) == 0 ||
			    strcmp(tok, demo_ops[i].name) == 0) {
				o->ops[i] = true;
				found = true;
			}
		}
		if (!found)
			demo_usage_error("--ops: unknown operation '%s' (put, fifo, rget, reflect)",
					 tok);
		any = true;
	}
	if (!any)
		demo_usage_error("--ops: empty list");
}

#define demo_parse_u64 app_opt_u64 /* strict, out of range: one line, exit 2 */

void
demo_parse_args(struct demo_opts *o, int argc, char **argv, const char *default_lcores)
{
	enum { OPT_CAPTURE = 300, OPT_SNAPLEN, OPT_IMPAIR };
	enum {
		OPT_SIZES = 256,
		OPT_LINKS,
		OPT_SEED,
		OPT_TIMEOUT,
		OPT_OPS,
		OPT_DB_WAIT,
		OPT_RSIZES
	};
	static const struct option longopts[] = {
		{"sizes", required_argument, NULL, OPT_SIZES},
		{"reflect-sizes", required_argument, NULL, OPT_RSIZES},
		{"links", required_argument, NULL, OPT_LINKS},
		{"seed", required_argument, NULL, OPT_SEED},
		{"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
		{"ops", required_argument, NULL, OPT_OPS},
		{"doorbell-wait", required_argument, NULL, OPT_DB_WAIT},
		{"capture", required_argument, NULL, OPT_CAPTURE},
		{"snaplen", required_argument, NULL, OPT_SNAPLEN},
		{"impair", required_argument, NULL, OPT_IMPAIR},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	for (unsigned int i = 0; i < DEMO_OP_COUNT; i++)
		o->ops[i] = true;
	demo_parse_sizes(&o->sizes, "--sizes", demo_default_sizes);
	demo_parse_sizes(&o->rsizes, "--reflect-sizes", demo_default_rsizes);
	o->links = TRD_NET_RING;
	o->seed = 1;
	o->timeout_us = 10000 * 1000ull;
	o->db_wait = TRD_WAIT_EQ;
	o->verbose = false;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SIZES:
			demo_parse_sizes(&o->sizes, "--sizes", optarg);
			break;
		case OPT_RSIZES:
			demo_parse_sizes(&o->rsizes, "--reflect-sizes", optarg);
			break;
		case OPT_LINKS:
			if (strcmp(optarg, "ring") == 0)
				o->links = TRD_NET_RING;
			else if (strcmp(optarg, "ethdev") == 0)
				o->links = TRD_NET_ETHDEV_RING;
			else
				demo_usage_error("--links: '%s' is not ring or ethdev", optarg);
			break;
		case OPT_SEED:
			o->seed = demo_parse_u64("--seed", optarg, 0, UINT64_MAX);
			break;
		case OPT_TIMEOUT:
			o->timeout_us = demo_parse_u64("--timeout-ms", optarg, 1, 3600000) * 1000;
			break;
		case OPT_OPS:
			demo_parse_ops(o, optarg);
			break;
		case OPT_DB_WAIT:
			if (strcmp(optarg, "spin") == 0)
				o->db_wait = TRD_WAIT_SPIN;
			else if (strcmp(optarg, "monitor") == 0)
				o->db_wait = TRD_WAIT_MONITOR;
			else if (strcmp(optarg, "eq") == 0)
				o->db_wait = TRD_WAIT_EQ;
			else
				demo_usage_error("--doorbell-wait: '%s' is not spin, monitor or eq",
						 optarg);
			break;
		case OPT_CAPTURE:
			o->capture = optarg;
			break;
		case OPT_SNAPLEN:
			o->snaplen = (unsigned int)demo_parse_u64("--snaplen", optarg, 64, 65535);
			break;
		case OPT_IMPAIR:
			if (trd_impair_parse(optarg, &o->imp) != 0)
				demo_usage_error("--impair: bad specification '%s'", optarg);
			o->impair = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			demo_usage(stdout, default_lcores);
			exit(0);
		default:
			app_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		demo_usage_error("unexpected argument '%s'", argv[optind]);
}
