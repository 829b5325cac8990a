/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-demo: a whole 2x2x2 torus in one process. For every ordered pair of its 8 nodes it
 * runs a direct put, a memory-FIFO message and a remote get (an RDMA read) of each size, checks
 * every byte (and the bytes around the written range), and prints a table. Then, for every pair
 * and size, a put with reflection completion in each completion kind (a 0-byte message in a
 * reception FIFO, a doorbell word) and mode (local: a neighbour of the origin echoes it once the
 * data left; delivery: the target echoes it once the data is in its memory), checking what each
 * completion promises at the moment it arrives, and who sent it.
 *
 *   toroid-demo [EAL options] -- [--ops LIST] [--sizes LIST] [--links ring|ethdev] ...
 *
 * One worker lcore serves all eight nodes; the main lcore posts, waits and verifies. With a
 * single lcore nothing is launched: the wait calls make progress inline.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "../common/app_common.h"
#include "../common/latency.h"

#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#define DEMO_EXIT_FAIL 1  /* a transfer failed, or set-up failed */
#define DEMO_EXIT_USAGE 2 /* the command line is wrong */

#define DEMO_DIM 2 /* the torus is DEMO_DIM^3 */
#define DEMO_MAX_NODES (DEMO_DIM * DEMO_DIM * DEMO_DIM)
#define DEMO_MAX_SIZES 32
#define DEMO_SIZE_MAX (64u << 20)  /* largest --sizes entry */
#define DEMO_GUARD 64              /* bytes checked on each side of a written range */
#define DEMO_OFF_SPAN 4096         /* random offsets fall in [GUARD, GUARD + SPAN) */
#define DEMO_SLICE_US 100000       /* waits are cut in slices to notice SIGINT */
#define DEMO_SHORT_WAIT_US 100000  /* a second wait after a failed one */
#define DEMO_SETTLE_QUIET_US 20000 /* after a failure: idle this long ... */
#define DEMO_SETTLE_MAX_US 2000000 /* ... or give up after this */
#define DEMO_REC_FIFO 0            /* reception FIFO of FIFO messages */
#define DEMO_INJ_FIFO 0            /* injection FIFO the demo posts into */
#define DEMO_RGET_FIFO 1           /* target injection FIFO of remote-get descriptors */
#define DEMO_REFL_INJ_FIFO 2       /* injection FIFO of puts with reflection (its own, so that
				    * its packet counter counts nothing else) */
#define DEMO_CPL_REC_FIFO 1        /* reception FIFO of FIFO-kind completions */
#define DEMO_TITLE_W 29            /* width of the operation column */
#define DEMO_MAX_LAT (DEMO_MAX_NODES * DEMO_MAX_NODES) /* latencies per (operation, size) */

static const char demo_default_sizes[] = "1,64,1500,4K,64K,1M";
static const char demo_default_rsizes[] = "64,64K"; /* put+reflect rows */

/* ---- operations ---- */

/* Table rows. The four put+reflect rows share the --ops key "reflect"; each can also be picked
 * by its name. */
enum demo_op {
	DEMO_OP_PUT = 0,
	DEMO_OP_FIFO,
	DEMO_OP_RGET,
	DEMO_OP_RL_FIFO, /* put + reflection completion, local mode, FIFO kind */
	DEMO_OP_RL_DB,   /* ... local mode, doorbell kind */
	DEMO_OP_RD_FIFO, /* ... delivery mode, FIFO kind */
	DEMO_OP_RD_DB,   /* ... delivery mode, doorbell kind */
	DEMO_OP_COUNT
};

static const struct {
	const char *key;   /* --ops name */
	const char *name;  /* FAIL lines, per-size table; also accepted by --ops */
	const char *title; /* table row */
	bool reflect;      /* a put with reflection completion of this kind and mode */
	enum trd_cpl_kind kind;
	enum trd_cpl_mode mode;
} demo_ops[] = {
	[DEMO_OP_PUT] = {"put", "put", "direct put", false, 0, 0},
	[DEMO_OP_FIFO] = {"fifo", "fifo", "memory FIFO", false, 0, 0},
	[DEMO_OP_RGET] = {"rget", "rget", "remote get (read)", false, 0, 0},
	[DEMO_OP_RL_FIFO] = {"reflect", "reflect-local-fifo", "put+reflect local fifo", true,
			     TRD_CPL_FIFO, TRD_CPL_LOCAL},
	[DEMO_OP_RL_DB] = {"reflect", "reflect-local-doorbell", "put+reflect local doorbell",
			   true, TRD_CPL_DOORBELL, TRD_CPL_LOCAL},
	[DEMO_OP_RD_FIFO] = {"reflect", "reflect-delivery-fifo", "put+reflect delivery fifo",
			     true, TRD_CPL_FIFO, TRD_CPL_DELIVERY},
	[DEMO_OP_RD_DB] = {"reflect", "reflect-delivery-doorbell",
			   "put+reflect delivery doorbell", true, TRD_CPL_DOORBELL,
			   TRD_CPL_DELIVERY},
};
_Static_assert(RTE_DIM(demo_ops) == DEMO_OP_COUNT, "one entry per operation");

/* ---- options ---- */

/* A list of transfer sizes. */
struct demo_sizes {
	uint32_t v[DEMO_MAX_SIZES];
	unsigned int n;
};

struct demo_opts {
	bool ops[DEMO_OP_COUNT];
	struct demo_sizes sizes;  /* put, fifo, rget */
	struct demo_sizes rsizes; /* the put+reflect rows */
	enum trd_net_links links;
	uint64_t seed;
	uint64_t timeout_us;
	enum trd_wait_how db_wait; /* how doorbell completions are waited for */
	bool verbose;
	const char *capture;       /* pcap file of every frame the nodes send and receive */
	unsigned int snaplen;
	bool impair;               /* --impair given */
	struct trd_impair_conf imp;
};

/* ---- state ---- */

/* One node and what the demo set up on it. */
struct demo_node {
	struct trd_node *node;
	struct trd_coord coord;
	unsigned int rank;
	struct trd_fifo *inj;     /* where this node, as origin, posts */
	struct trd_rec_fifo *rec; /* where FIFO messages to this node land */
	uint8_t *wbuf;            /* put target, and remote-get destination */
	uint8_t *rbuf;            /* remote-get source */
	struct trd_mr *wmr;       /* wbuf, TRD_ACCESS_REMOTE_WRITE */
	struct trd_mr *rmr;       /* rbuf, TRD_ACCESS_REMOTE_READ */
	uint16_t ctr_inj;         /* injection counter of what this node posts */
	uint16_t ctr_rec;         /* reception counter: puts to it, reads by it */
	struct trd_fifo *rinj;    /* where this node posts puts with reflection */
	struct trd_rec_fifo *cpl; /* where its FIFO-kind completions land */
	uint64_t *db;             /* doorbell page: its doorbell-kind completions */
	struct trd_mr *dbmr;      /* db, registered as a doorbell signalling eq */
	struct trd_eq *eq;        /* event queue of the doorbell page, owned by the demo thread */
};

/* Results of one (operation, size). */
struct demo_cell {
	uint64_t transfers;
	uint64_t passed;
	uint64_t failed;
	uint64_t bytes;
	uint64_t packets; /* TX_PUT + TX_FIFO + TX_RGET, all nodes */
	uint64_t fwd;     /* FWD_PKTS, all nodes */
	uint64_t time_us; /* from posting to the last wait's end */
	unsigned int n_lat; /* put+reflect: completions timed, in demo.lat */
};

struct demo {
	struct demo_opts opt;
	struct trd_net *net;
	unsigned int n_nodes;
	struct demo_node nodes[DEMO_MAX_NODES];
	size_t buf_len;
	uint8_t *src; /* the origin's source buffer (one transfer at a time) */
	bool served;  /* a worker lcore serves the nodes */
	unsigned int worker;
	struct demo_cell cell[DEMO_OP_COUNT][DEMO_MAX_SIZES];
	uint8_t pair_ran[DEMO_OP_COUNT][DEMO_MAX_NODES][DEMO_MAX_NODES];
	uint8_t pair_bad[DEMO_OP_COUNT][DEMO_MAX_NODES][DEMO_MAX_NODES];
	struct trd_node_stats stats0[DEMO_MAX_NODES]; /* at the start of the run */
	uint64_t passed, failed, planned;
	/* put+reflect: TSC cycles from posting to the completion, per (row, size) */
	uint64_t lat[DEMO_OP_COUNT][DEMO_MAX_SIZES][DEMO_MAX_LAT];
	unsigned int payload;   /* bytes per data packet (all links have the same MTU) */
	size_t db_len;          /* doorbell page size */
	uint64_t db_seq;        /* doorbell words are used in turn */
};

/* One transfer in progress. */
struct demo_xfer {
	struct demo *dm;
	enum demo_op op;
	uint32_t len;
	struct demo_node *org;
	struct demo_node *tgt;
	uint64_t rng;
	bool failed;
	uint64_t t_post; /* when the descriptor was posted */
	uint64_t t_done; /* when the last wait ended */
	bool cpl;         /* put+reflect: the completion arrived ... */
	uint64_t tsc_post; /* ... this long (TSC cycles) ... */
	uint64_t tsc_cpl;  /* ... after posting */
};

enum demo_result { DEMO_PASS, DEMO_FAIL, DEMO_INTR };

static volatile sig_atomic_t demo_signal;

static void
demo_on_signal(int sig)
{
	demo_signal = sig;
}

/* ---- random data: splitmix64 seeds an xorshift64* stream per transfer ---- */

static uint64_t
demo_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t
demo_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static void
demo_fill(uint8_t *p, size_t len, uint64_t *s)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = demo_rand(s);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = demo_rand(s);

		memcpy(p + i, &v, len - i);
	}
}

/* An odd (so unaligned) offset in [DEMO_GUARD, DEMO_GUARD + DEMO_OFF_SPAN). */
static size_t
demo_offset(uint64_t *s)
{
	return (DEMO_GUARD + demo_rand(s) % DEMO_OFF_SPAN) | 1;
}

/* ---- formatting ---- */

static const char *
demo_size_str(uint32_t v, char *buf, size_t len)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, len, "%uM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%uK", v >> 10);
	else
		snprintf(buf, len, "%u", v);
	return buf;
}

static const char *
demo_coord_str(struct trd_coord c, char *buf, size_t len)
{
	snprintf(buf, len, "(%u,%u,%u)", c.x, c.y, c.z);
	return buf;
}

static void demo_xfail(struct demo_xfer *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report one problem of a transfer; the transfer counts as failed. */
static void
demo_xfail(struct demo_xfer *x, const char *fmt, ...)
{
	char a[16], b[16], s[16];
	va_list ap;

	printf("FAIL %s %s -> %s, %s B: ", demo_ops[x->op].name,
	       demo_coord_str(x->org->coord, a, sizeof(a)),
	       demo_coord_str(x->tgt->coord, b, sizeof(b)), demo_size_str(x->len, s, sizeof(s)));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	x->failed = true;
}

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
	"                                 to a port\n"
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
			if (strcmp(tok, demo_ops[i].key) == 0 || strcmp(tok, demo_ops[i].name) == 0) {
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

static void
demo_parse_args(struct demo_opts *o, int argc, char **argv, const char *default_lcores)
{
	enum { OPT_CAPTURE = 300, OPT_SNAPLEN, OPT_IMPAIR };
	enum { OPT_SIZES = 256, OPT_LINKS, OPT_SEED, OPT_TIMEOUT, OPT_OPS, OPT_DB_WAIT,
	       OPT_RSIZES };
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


/* ---- waiting ---- */

/* Wait for a counter to reach zero, in slices so that a signal is noticed. */
static int
demo_counter_wait(struct trd_node *n, uint16_t id, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t now = trd_time_us();
		uint64_t slice =
			deadline > now ? RTE_MIN(deadline - now, (uint64_t)DEMO_SLICE_US) : 0;
		int rc = trd_counter_wait(n, id, slice);

		if (rc != -ETIMEDOUT)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
	}
}

static int
demo_rec_fifo_wait(struct trd_rec_fifo *rf, struct trd_msg **msg, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t now = trd_time_us();
		uint64_t slice =
			deadline > now ? RTE_MIN(deadline - now, (uint64_t)DEMO_SLICE_US) : 0;
		int rc = trd_rec_fifo_wait(rf, msg, slice);

		if (rc != -ETIMEDOUT)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
	}
}

/* Post one descriptor, retrying while the FIFO is full. */
static int
demo_inject(struct demo_node *dn, const struct trd_desc *d, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		int rc = trd_inject(dn->inj, d);

		if (rc != -ENOBUFS && rc != -EAGAIN)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
		trd_node_progress(dn->node);
	}
}

/* Wait for a doorbell word to hold @p value, in slices so that a signal is noticed. */
static int
demo_doorbell_wait(struct trd_mr *db, uint64_t offset, uint64_t value, enum trd_wait_how how,
		   uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t now = trd_time_us();
		uint64_t slice =
			deadline > now ? RTE_MIN(deadline - now, (uint64_t)DEMO_SLICE_US) : 0;
		int rc = trd_doorbell_wait(db, offset, value, how, slice);

		if (rc != -ETIMEDOUT)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
	}
}

/* Post a put with its reflection descriptor, retrying while the FIFO is full or too many
 * completions are outstanding. *tsc: when the successful call started. */
static int
demo_inject_reflect(struct demo_node *dn, const struct trd_desc *d,
		    const struct trd_cpl_spec *spec, uint64_t timeout_us, uint64_t *tsc)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t t = rte_rdtsc();
		int rc = trd_inject_reflect(dn->rinj, d, spec);

		if (rc == 0)
			*tsc = t;
		if (rc != -ENOBUFS && rc != -EAGAIN && rc != -ENOSPC)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
		trd_node_progress(dn->node);
	}
}

/*
 * Wait for counter @p id of @p dn and report how it went. The wait is short when an earlier
 * wait of the same transfer already failed. Returns 0, -EINTR, or another negative errno
 * (already reported).
 */
static int
demo_xwait_counter(struct demo_xfer *x, struct demo_node *dn, uint16_t id, const char *what)
{
	uint64_t tmo = x->failed ? RTE_MIN(x->dm->opt.timeout_us, (uint64_t)DEMO_SHORT_WAIT_US)
				 : x->dm->opt.timeout_us;
	int64_t v = 0;
	int rc = demo_counter_wait(dn->node, id, tmo);

	if (rc == 0 || rc == -EINTR)
		return rc;
	if (trd_counter_read(dn->node, id, &v) != 0)
		v = INT64_MIN;
	if (rc == -ETIMEDOUT)
		demo_xfail(x,
			   "timeout after %" PRIu64 " ms waiting for the %s (%" PRId64
			   " of %u bytes still outstanding)",
			   tmo / 1000, what, v, x->len);
	else if (rc == -ERANGE)
		demo_xfail(x,
			   "wrong counter value: the %s went below zero (%" PRId64
			   ", %u bytes expected): more bytes than sent",
			   what, v, x->len);
	else
		demo_xfail(x, "waiting for the %s: %s", what, rte_strerror(-rc));
	return rc;
}

/* ---- verification ---- */

/* Compare @p len bytes; report the first difference. */
static bool
demo_check_bytes(struct demo_xfer *x, const char *what, const uint8_t *got, const uint8_t *want,
		 size_t len)
{
	size_t first = SIZE_MAX, ndiff = 0;

	if (memcmp(got, want, len) == 0)
		return true;
	for (size_t i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			if (first == SIZE_MAX)
				first = i;
			ndiff++;
		}
	}
	demo_xfail(x, "%s: mismatch at byte %zu (got 0x%02x, want 0x%02x), %zu of %zu bytes differ",
		   what, first, got[first], want[first], ndiff, len);
	return false;
}

/* Guard bytes around [off, off + len) of a destination buffer. */
struct demo_guard {
	uint8_t before[DEMO_GUARD];
	uint8_t after[DEMO_GUARD];
};

/* Set up the destination: random guards around the range, the range itself the complement of
 * what should arrive, so every byte must change. */
static void
demo_dst_prepare(struct demo_xfer *x, uint8_t *buf, size_t off, const uint8_t *want,
		 struct demo_guard *g)
{
	demo_fill(g->before, sizeof(g->before), &x->rng);
	demo_fill(g->after, sizeof(g->after), &x->rng);
	memcpy(buf + off - DEMO_GUARD, g->before, DEMO_GUARD);
	for (size_t i = 0; i < x->len; i++)
		buf[off + i] = (uint8_t)~want[i];
	memcpy(buf + off + x->len, g->after, DEMO_GUARD);
}

/* Check the range and the bytes just before and after it. */
static void
demo_dst_check(struct demo_xfer *x, const char *what, const uint8_t *buf, size_t off,
	       const uint8_t *want, const struct demo_guard *g)
{
	demo_check_bytes(x, what, buf + off, want, x->len);
	for (int i = DEMO_GUARD - 1; i >= 0; i--) {
		if (buf[off - DEMO_GUARD + i] != g->before[i]) {
			demo_xfail(x, "%s: byte %d before the written range was overwritten", what,
				   i - DEMO_GUARD);
			break;
		}
	}
	for (int i = 0; i < DEMO_GUARD; i++) {
		if (buf[off + x->len + i] != g->after[i]) {
			demo_xfail(x, "%s: byte %d after the written range was overwritten", what,
				   i);
			break;
		}
	}
}

/* ---- the three operations ---- */

static enum demo_result
demo_put(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	size_t soff = demo_offset(&x->rng), doff = demo_offset(&x->rng);
	const uint8_t *want = dm->src + soff;
	struct demo_guard g;
	struct trd_desc d;
	int rc;

	demo_fill(dm->src + soff, x->len, &x->rng);
	demo_dst_prepare(x, t->wbuf, doff, want, &g);
	rc = trd_counter_set(t->node, t->ctr_rec, x->len);
	if (rc == 0)
		rc = trd_counter_set(o->node, o->ctr_inj, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_put(&d, t->coord, want, x->len, trd_mr_key(t->wmr), doff, o->ctr_inj, t->ctr_rec);
	x->t_post = trd_time_us();
	rc = demo_inject(o, &d, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = demo_xwait_counter(x, t, t->ctr_rec, "target reception counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	/* The source must stay untouched until the injection counter says it was read. */
	rc = demo_xwait_counter(x, o, o->ctr_inj, "origin injection counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	x->t_done = trd_time_us();
	demo_dst_check(x, "target region", t->wbuf, doff, want, &g);
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

static enum demo_result
demo_fifo(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	size_t soff = demo_offset(&x->rng);
	const uint8_t *want = dm->src + soff;
	uint64_t user = demo_rand(&x->rng);
	struct trd_msg *msg = NULL;
	struct trd_desc d;
	char a[16], b[16];
	int rc;

	demo_fill(dm->src + soff, x->len, &x->rng);
	rc = trd_counter_set(o->node, o->ctr_inj, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_fifo(&d, t->coord, DEMO_REC_FIFO, want, x->len, user, o->ctr_inj);
	x->t_post = trd_time_us();
	rc = demo_inject(o, &d, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = demo_rec_fifo_wait(t->rec, &msg, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc == -ETIMEDOUT)
		demo_xfail(x,
			   "timeout after %" PRIu64 " ms waiting for the message in reception "
			   "FIFO %d",
			   dm->opt.timeout_us / 1000, DEMO_REC_FIFO);
	else if (rc != 0)
		demo_xfail(x, "trd_rec_fifo_wait: %s", rte_strerror(-rc));
	rc = demo_xwait_counter(x, o, o->ctr_inj, "origin injection counter");
	if (rc == -EINTR) {
		trd_msg_free(msg);
		return DEMO_INTR;
	}
	x->t_done = trd_time_us();
	if (msg == NULL)
		return DEMO_FAIL;

	if (msg->src.x != o->coord.x || msg->src.y != o->coord.y || msg->src.z != o->coord.z)
		demo_xfail(x, "message source is %s, want %s",
			   demo_coord_str(msg->src, a, sizeof(a)),
			   demo_coord_str(o->coord, b, sizeof(b)));
	if (msg->user != user)
		demo_xfail(x,
			   "user word is 0x%016" PRIx64 ", want 0x%016" PRIx64
			   " (a stale message?)",
			   msg->user, user);
	if (msg->fifo != DEMO_REC_FIFO)
		demo_xfail(x, "message says FIFO %u, want %d", msg->fifo, DEMO_REC_FIFO);
	if (msg->len != x->len)
		demo_xfail(x, "message length is %u, want %u", msg->len, x->len);
	else if (msg->data == NULL)
		demo_xfail(x, "message has no data");
	else
		demo_check_bytes(x, "message", msg->data, want, x->len);
	trd_msg_free(msg);
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

/* RDMA read: ask the target to put (key, offset) of its region back into ours. */
static enum demo_result
demo_rget(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	size_t soff = demo_offset(&x->rng), doff = demo_offset(&x->rng);
	const uint8_t *want = dm->src; /* an independent copy of the target's bytes */
	struct trd_desc carried, d;
	struct demo_guard g;
	int rc;

	demo_fill(dm->src, x->len, &x->rng);
	memcpy(t->rbuf + soff, want, x->len);
	demo_dst_prepare(x, o->wbuf, doff, want, &g);
	rc = trd_counter_set(o->node, o->ctr_rec, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_put(&carried, o->coord, NULL, x->len, trd_mr_key(o->wmr), doff, 0, o->ctr_rec);
	carried.flags = TRD_DF_SRC_MR;
	carried.src_key = trd_mr_key(t->rmr);
	carried.src = soff;
	trd_desc_rget(&d, t->coord, DEMO_RGET_FIFO, &carried, 1);
	x->t_post = trd_time_us();
	rc = demo_inject(o, &d, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = demo_xwait_counter(x, o, o->ctr_rec, "origin reception counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	x->t_done = trd_time_us();
	demo_dst_check(x, "origin region", o->wbuf, doff, want, &g);
	demo_check_bytes(x, "target source region (must be unchanged)", t->rbuf + soff, want,
			 x->len);
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

/* rx_rget of every node: the reflector is the node that took the remote get. */
static int
demo_rget_counts(struct demo *dm, uint64_t *out)
{
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct trd_node_stats st;
		int rc = trd_node_stats_get(dm->nodes[r].node, &st);

		if (rc != 0)
			return rc;
		out[r] = st.stat[TRD_STAT_RX_RGET];
	}
	return 0;
}

/* Take the doorbell events of @p dn's queue: each must be a write into its doorbell page.
 * (A TRD_WAIT_EQ wait takes some itself, so their number is not checked.) */
static void
demo_eq_drain(struct demo_xfer *x, struct demo_node *dn)
{
	struct trd_event ev[32];
	int n;

	while ((n = trd_eq_poll(dn->eq, ev, RTE_DIM(ev))) > 0) {
		for (int i = 0; i < n; i++) {
			if (ev[i].type == TRD_EV_DOORBELL && ev[i].key == trd_mr_key(dn->dbmr) &&
			    ev[i].value % 8 == 0 && ev[i].value < x->dm->db_len && ev[i].len == 8)
				continue;
			demo_xfail(x,
				   "unexpected event on the doorbell's queue: type %u, key 0x%016" PRIx64
				   ", offset %" PRIu64 ", %u bytes",
				   ev[i].type, ev[i].key, ev[i].value, ev[i].len);
		}
	}
	if (n < 0)
		demo_xfail(x, "trd_eq_poll: %s", rte_strerror(-n));
}

/*
 * A put with reflection completion of the row's kind and mode. At the moment the completion
 * arrives: the reflection FIFO has handed the data packets and the remote get to a port; in
 * delivery mode the target holds every byte; nothing is outstanding; the expected node (local:
 * the origin's reflector, delivery: the target) took the remote get and, for the FIFO kind,
 * sent the message. Then the data is checked at the target like a direct put's.
 */
static enum demo_result
demo_reflect(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	const enum trd_cpl_kind kind = demo_ops[x->op].kind;
	const enum trd_cpl_mode mode = demo_ops[x->op].mode;
	size_t soff = demo_offset(&x->rng), doff = demo_offset(&x->rng);
	const uint8_t *want = dm->src + soff;
	uint64_t cookie = demo_rand(&x->rng) | 1; /* never 0, the doorbell page's idle value */
	uint64_t need = (x->len + dm->payload - 1) / dm->payload + 1; /* data + remote get */
	uint64_t rget0[DEMO_MAX_NODES], rget1[DEMO_MAX_NODES];
	struct trd_cpl_spec spec = {.kind = kind, .mode = mode, .cookie = cookie};
	struct trd_fifo_stats fs0, fs1;
	struct trd_msg *msg = NULL;
	struct trd_coord refl;
	struct demo_guard g;
	struct trd_desc d;
	char a[16], b[16];
	unsigned int pending;
	int rc;

	demo_fill(dm->src + soff, x->len, &x->rng);
	demo_dst_prepare(x, t->wbuf, doff, want, &g);
	if (mode == TRD_CPL_DELIVERY) {
		refl = t->coord;
	} else {
		rc = trd_node_reflector(o->node, &refl);
		if (rc == -ENOENT) {
			refl = t->coord; /* no neighbour: the target reflects */
		} else if (rc != 0) {
			demo_xfail(x, "trd_node_reflector: %s", rte_strerror(-rc));
			return DEMO_FAIL;
		}
	}
	if (kind == TRD_CPL_FIFO) {
		spec.fifo = DEMO_CPL_REC_FIFO;
	} else {
		spec.doorbell = o->dbmr;
		spec.offset = (dm->db_seq++ % (dm->db_len / 8)) * 8;
	}
	rc = trd_counter_set(t->node, t->ctr_rec, x->len);
	if (rc == 0)
		rc = trd_counter_set(o->node, o->ctr_inj, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = trd_fifo_stats_get(o->rinj, &fs0);
	if (rc == 0)
		rc = demo_rget_counts(dm, rget0);
	if (rc != 0) {
		demo_xfail(x, "reading statistics: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_put(&d, t->coord, want, x->len, trd_mr_key(t->wmr), doff, o->ctr_inj, t->ctr_rec);
	x->t_post = trd_time_us();
	rc = demo_inject_reflect(o, &d, &spec, dm->opt.timeout_us, &x->tsc_post);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject_reflect: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}

	if (kind == TRD_CPL_FIFO)
		rc = demo_rec_fifo_wait(o->cpl, &msg, dm->opt.timeout_us);
	else
		rc = demo_doorbell_wait(o->dbmr, spec.offset, cookie, dm->opt.db_wait,
					dm->opt.timeout_us);
	x->tsc_cpl = rte_rdtsc();
	if (rc == -EINTR) {
		trd_msg_free(msg);
		return DEMO_INTR;
	}
	if (rc == 0) {
		x->cpl = true;
		/* first what must already hold now, before anything else can catch up */
		if (mode == TRD_CPL_DELIVERY)
			demo_check_bytes(x, "target region when the delivery completion arrived",
					 t->wbuf + doff, want, x->len);
		rc = trd_fifo_stats_get(o->rinj, &fs1);
		if (rc != 0)
			demo_xfail(x, "trd_fifo_stats_get: %s", rte_strerror(-rc));
		else if (fs1.pkts_sent - fs0.pkts_sent < need)
			demo_xfail(x,
				   "completion before the data left: injection FIFO %d handed %" PRIu64
				   " packet(s) to a port, want %" PRIu64 " (data and remote get)",
				   DEMO_REFL_INJ_FIFO, fs1.pkts_sent - fs0.pkts_sent, need);
		pending = trd_node_cpl_pending(o->node);
		if (pending != 0)
			demo_xfail(x, "%u completion(s) still outstanding at the origin", pending);
		rc = demo_rget_counts(dm, rget1);
		if (rc != 0)
			demo_xfail(x, "reading statistics: %s", rte_strerror(-rc));
		if (rc == 0) {
			/* exactly one remote get, taken by the expected reflector */
			char who[DEMO_MAX_NODES * 24];
			size_t used = 0;
			bool ok = true;

			who[0] = '\0';
			for (unsigned int r = 0; r < dm->n_nodes; r++) {
				struct trd_coord c = dm->nodes[r].coord;
				bool is_refl = c.x == refl.x && c.y == refl.y && c.z == refl.z;
				uint64_t got = rget1[r] - rget0[r];

				ok &= got == (is_refl ? 1 : 0);
				if (got != 0 && used < sizeof(who))
					used += (size_t)snprintf(who + used, sizeof(who) - used,
								 "%s%s x%" PRIu64, used ? ", " : "",
								 demo_coord_str(c, a, sizeof(a)), got);
			}
			if (!ok)
				demo_xfail(x, "the remote get was taken by %s, want the %s %s x1",
					   used ? who : "no node",
					   mode == TRD_CPL_LOCAL ? "reflector" : "target",
					   demo_coord_str(refl, b, sizeof(b)));
		}
		if (kind == TRD_CPL_FIFO) {
			if (msg->src.x != refl.x || msg->src.y != refl.y || msg->src.z != refl.z)
				demo_xfail(x, "completion sent by %s, want the %s %s",
					   demo_coord_str(msg->src, a, sizeof(a)),
					   mode == TRD_CPL_LOCAL ? "reflector" : "target",
					   demo_coord_str(refl, b, sizeof(b)));
			if (msg->len != 0)
				demo_xfail(x, "completion message has %u bytes, want 0", msg->len);
			if (msg->user != cookie)
				demo_xfail(x,
					   "completion user word is 0x%016" PRIx64 ", want the cookie "
					   "0x%016" PRIx64,
					   msg->user, cookie);
			if (msg->fifo != DEMO_CPL_REC_FIFO)
				demo_xfail(x, "completion message says FIFO %u, want %d", msg->fifo,
					   DEMO_CPL_REC_FIFO);
		} else {
			/* the word holds the cookie (the wait saw it), and nothing else moved */
			volatile const uint64_t *db = o->db;

			if (db[spec.offset / 8] != cookie)
				demo_xfail(x,
					   "doorbell word %" PRIu64 " is 0x%016" PRIx64
					   ", want the cookie 0x%016" PRIx64,
					   spec.offset / 8, db[spec.offset / 8], cookie);
			for (size_t w = 0; w < dm->db_len / 8; w++) {
				if (w != spec.offset / 8 && db[w] != 0) {
					demo_xfail(x,
						   "doorbell word %zu was written (0x%016" PRIx64
						   "), only word %" PRIu64 " should be",
						   w, db[w], spec.offset / 8);
					break;
				}
			}
		}
	} else if (rc == -ETIMEDOUT) {
		demo_xfail(x,
			   "timeout after %" PRIu64 " ms waiting for the completion (%s, reflector "
			   "%s, %u outstanding at the origin)",
			   dm->opt.timeout_us / 1000,
			   kind == TRD_CPL_FIFO ? "reception FIFO message" : "doorbell word",
			   demo_coord_str(refl, a, sizeof(a)), trd_node_cpl_pending(o->node));
	} else {
		demo_xfail(x, "waiting for the completion: %s", rte_strerror(-rc));
	}
	trd_msg_free(msg);

	/* then the data itself, like a direct put's */
	rc = demo_xwait_counter(x, t, t->ctr_rec, "target reception counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	rc = demo_xwait_counter(x, o, o->ctr_inj, "origin injection counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	x->t_done = trd_time_us();
	demo_dst_check(x, "target region", t->wbuf, doff, want, &g);
	if (kind == TRD_CPL_DOORBELL) {
		if (x->cpl)
			o->db[spec.offset / 8] = 0; /* back to idle for its next turn */
		demo_eq_drain(x, o);
	}
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

/* ---- statistics ---- */

static int
demo_snapshot(struct demo *dm, struct trd_node_stats *st)
{
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		int rc = trd_node_stats_get(dm->nodes[r].node, &st[r]);

		if (rc != 0) {
			printf("toroid-demo: trd_node_stats_get(node %u): %s\n", r,
			       rte_strerror(-rc));
			memset(&st[r], 0, sizeof(st[r]));
			return rc;
		}
	}
	return 0;
}

static uint64_t
demo_stat_sum(const struct demo *dm, const struct trd_node_stats *a, const struct trd_node_stats *b,
	      enum trd_node_stat s)
{
	uint64_t v = 0;

	for (unsigned int r = 0; r < dm->n_nodes; r++)
		v += b[r].stat[s] - a[r].stat[s];
	return v;
}

/* One line of the non-zero differences of a node's statistics, drops by cause. */
static void
demo_print_node_delta(const char *label, const struct demo_node *dn, const struct trd_node_stats *a,
		      const struct trd_node_stats *b)
{
	char c[16];
	bool any = false;

	printf("    %s %s %s:", label, trd_node_name(dn->node),
	       demo_coord_str(dn->coord, c, sizeof(c)));
	for (unsigned int s = 0; s < TRD_STAT_MAX; s++) {
		if (b->stat[s] != a->stat[s]) {
			printf(" %s=%" PRIu64, trd_stat_name(s), b->stat[s] - a->stat[s]);
			any = true;
		}
	}
	for (unsigned int s = 0; s < TRD_DROP_MAX; s++) {
		if (b->drop[s] != a->drop[s]) {
			printf(" drop.%s=%" PRIu64, trd_drop_name(s), b->drop[s] - a->drop[s]);
			any = true;
		}
	}
	printf("%s\n", any ? "" : " (no change)");
}

/* After a failure: let late packets land, then empty the reception FIFOs so they do not
 * spoil the next transfers. */
static void
demo_settle(struct demo *dm)
{
	struct trd_node_stats st[DEMO_MAX_NODES];
	uint64_t last = UINT64_MAX, quiet_since = trd_time_us(), deadline;
	unsigned int stale = 0;

	deadline = quiet_since + DEMO_SETTLE_MAX_US;
	while (!demo_signal && trd_time_us() < deadline) {
		uint64_t now, sum = 0;

		if (demo_snapshot(dm, st) != 0)
			break;
		for (unsigned int r = 0; r < dm->n_nodes; r++)
			sum += st[r].stat[TRD_STAT_TX_PKTS] + st[r].stat[TRD_STAT_RX_PKTS] +
			       st[r].stat[TRD_STAT_DROPS];
		now = trd_time_us();
		if (sum != last) {
			last = sum;
			quiet_since = now;
		} else if (now - quiet_since >= DEMO_SETTLE_QUIET_US) {
			break;
		}
		trd_node_progress(dm->nodes[0].node);
	}
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct trd_msg *msgs[32];
		int n;

		while ((n = trd_rec_fifo_poll(dm->nodes[r].rec, msgs, RTE_DIM(msgs))) > 0) {
			for (int i = 0; i < n; i++)
				trd_msg_free(msgs[i]);
			stale += (unsigned int)n;
		}
		if (n < 0)
			printf("    trd_rec_fifo_poll(node %u): %s\n", r, rte_strerror(-n));
		while ((n = trd_rec_fifo_poll(dm->nodes[r].cpl, msgs, RTE_DIM(msgs))) > 0) {
			for (int i = 0; i < n; i++)
				trd_msg_free(msgs[i]);
			stale += (unsigned int)n;
		}
		if (n < 0)
			printf("    trd_rec_fifo_poll(node %u): %s\n", r, rte_strerror(-n));
	}
	if (stale != 0)
		printf("    discarded %u stale message(s) from the reception FIFOs\n", stale);
	/* late doorbell completions: back to an idle page and an empty queue */
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct trd_event ev[32];
		unsigned int words = 0;

		for (size_t w = 0; w < dm->db_len / 8; w++) {
			words += dm->nodes[r].db[w] != 0;
			dm->nodes[r].db[w] = 0;
		}
		while (trd_eq_poll(dm->nodes[r].eq, ev, RTE_DIM(ev)) > 0)
			;
		if (words != 0)
			printf("    cleared %u doorbell word(s) of node %u\n", words, r);
	}
}

/* ---- one transfer ---- */

/* The sizes row @p op runs with. */
static const struct demo_sizes *
demo_op_sizes(const struct demo *dm, unsigned int op)
{
	return demo_ops[op].reflect ? &dm->opt.rsizes : &dm->opt.sizes;
}

static enum demo_result
demo_transfer(struct demo *dm, enum demo_op op, unsigned int si, struct demo_node *o,
	      struct demo_node *t)
{
	struct trd_node_stats before[DEMO_MAX_NODES], after[DEMO_MAX_NODES];
	struct demo_cell *cell = &dm->cell[op][si];
	struct demo_xfer x = {
		.dm = dm,
		.op = op,
		.len = demo_op_sizes(dm, op)->v[si],
		.org = o,
		.tgt = t,
	};
	enum demo_result res;

	/* Each transfer has its own data, derived from the seed and what it is. */
	x.rng = demo_mix(dm->opt.seed);
	x.rng = demo_mix(x.rng ^ (uint64_t)op);
	x.rng = demo_mix(x.rng ^ x.len);
	x.rng = demo_mix(x.rng ^ ((uint64_t)o->rank << 8 | t->rank));
	if (x.rng == 0)
		x.rng = 1;

	demo_snapshot(dm, before);
	switch (op) {
	case DEMO_OP_PUT:
		res = demo_put(&x);
		break;
	case DEMO_OP_FIFO:
		res = demo_fifo(&x);
		break;
	case DEMO_OP_RGET:
		res = demo_rget(&x);
		break;
	default:
		res = demo_reflect(&x);
		break;
	}
	if (res == DEMO_INTR)
		return res;
	if (x.t_done > x.t_post && x.t_post != 0)
		cell->time_us += x.t_done - x.t_post;
	if (x.cpl && cell->n_lat < DEMO_MAX_LAT)
		dm->lat[op][si][cell->n_lat++] = x.tsc_cpl - x.tsc_post;
	demo_snapshot(dm, after);
	cell->transfers++;
	cell->bytes += x.len;
	cell->packets += demo_stat_sum(dm, before, after, TRD_STAT_TX_PUT) +
			 demo_stat_sum(dm, before, after, TRD_STAT_TX_FIFO) +
			 demo_stat_sum(dm, before, after, TRD_STAT_TX_RGET);
	cell->fwd += demo_stat_sum(dm, before, after, TRD_STAT_FWD_PKTS);
	dm->pair_ran[op][o->rank][t->rank] = 1;
	if (res == DEMO_PASS) {
		cell->passed++;
		dm->passed++;
		return res;
	}
	cell->failed++;
	dm->failed++;
	dm->pair_bad[op][o->rank][t->rank] = 1;
	printf("    route %d hop(s); statistics during the transfer:\n",
	       trd_node_route_hops(o->node, t->coord));
	demo_print_node_delta("origin", o, &before[o->rank], &after[o->rank]);
	demo_print_node_delta("target", t, &before[t->rank], &after[t->rank]);
	for (unsigned int r = 0; r < dm->n_nodes; r++)
		if (r != o->rank && r != t->rank &&
		    after[r].stat[TRD_STAT_DROPS] != before[r].stat[TRD_STAT_DROPS])
			demo_print_node_delta("other ", &dm->nodes[r], &before[r], &after[r]);
	demo_settle(dm);
	return res;
}

/* ---- set-up and tear-down ---- */

static int
demo_setup_node(struct demo *dm, unsigned int rank)
{
	struct demo_node *dn = &dm->nodes[rank];
	int rc;

	dn->rank = rank;
	dn->node = trd_net_node(dm->net, rank);
	if (dn->node == NULL) {
		fprintf(stderr, "toroid-demo: trd_net_node(%u) returned NULL\n", rank);
		return -ENODEV;
	}
	dn->coord = trd_node_coord(dn->node);
	dn->inj = trd_inj_fifo(dn->node, DEMO_INJ_FIFO);
	dn->rec = trd_rec_fifo(dn->node, DEMO_REC_FIFO);
	dn->rinj = trd_inj_fifo(dn->node, DEMO_REFL_INJ_FIFO);
	dn->cpl = trd_rec_fifo(dn->node, DEMO_CPL_REC_FIFO);
	if (dn->inj == NULL || dn->rec == NULL || trd_inj_fifo(dn->node, DEMO_RGET_FIFO) == NULL ||
	    dn->rinj == NULL || dn->cpl == NULL) {
		fprintf(stderr, "toroid-demo: node %u lacks the FIFOs the demo uses\n", rank);
		return -ENODEV;
	}
	dn->wbuf = aligned_alloc(64, dm->buf_len);
	dn->rbuf = aligned_alloc(64, dm->buf_len);
	if (dn->wbuf == NULL || dn->rbuf == NULL) {
		fprintf(stderr, "toroid-demo: out of memory for node %u's regions\n", rank);
		return -ENOMEM;
	}
	memset(dn->wbuf, 0, dm->buf_len);
	memset(dn->rbuf, 0, dm->buf_len);
	dn->wmr = trd_mr_register(dn->node, dn->wbuf, dm->buf_len, TRD_ACCESS_REMOTE_WRITE);
	if (dn->wmr == NULL)
		goto mr_fail;
	dn->rmr = trd_mr_register(dn->node, dn->rbuf, dm->buf_len, TRD_ACCESS_REMOTE_READ);
	if (dn->rmr == NULL)
		goto mr_fail;
	rc = trd_counter_alloc(dn->node, &dn->ctr_inj);
	if (rc == 0)
		rc = trd_counter_alloc(dn->node, &dn->ctr_rec);
	if (rc != 0) {
		fprintf(stderr, "toroid-demo: trd_counter_alloc(node %u): %s\n", rank,
			rte_strerror(-rc));
		return rc;
	}

	/* The doorbell page signals an event queue that this (the demo) thread owns. */
	dn->eq = trd_node_eq(dn->node, 0);
	if (dn->eq == NULL)
		dn->eq = trd_eq_create(dn->node, -1, 0);
	if (dn->eq == NULL) {
		fprintf(stderr, "toroid-demo: trd_eq_create(node %u): %s\n", rank,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	rc = trd_eq_bind(dn->eq, -1);
	if (rc != 0) {
		fprintf(stderr, "toroid-demo: trd_eq_bind(node %u): %s\n", rank, rte_strerror(-rc));
		return rc;
	}
	dn->db = aligned_alloc(dm->db_len, dm->db_len);
	if (dn->db == NULL) {
		fprintf(stderr, "toroid-demo: out of memory for node %u's doorbell page\n", rank);
		return -ENOMEM;
	}
	memset(dn->db, 0, dm->db_len);
	dn->dbmr = trd_doorbell_register(dn->node, dn->db, dm->db_len, dn->eq);
	if (dn->dbmr == NULL) {
		fprintf(stderr, "toroid-demo: trd_doorbell_register(node %u): %s\n", rank,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
mr_fail:
	fprintf(stderr, "toroid-demo: trd_mr_register(node %u): %s\n", rank,
		rte_strerror(rte_errno));
	return -rte_errno;
}

static void
demo_teardown(struct demo *dm)
{
	int rc;

	if (dm->net != NULL) {
		/* Stop the engine first: nothing may touch the regions after this. */
		rc = trd_net_stop(dm->net);
		if (rc != 0)
			fprintf(stderr, "toroid-demo: trd_net_stop: %s\n", rte_strerror(-rc));
	}
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct demo_node *dn = &dm->nodes[r];

		if (dn->ctr_inj != 0 && (rc = trd_counter_free(dn->node, dn->ctr_inj)) != 0)
			fprintf(stderr, "toroid-demo: trd_counter_free: %s\n", rte_strerror(-rc));
		if (dn->ctr_rec != 0 && (rc = trd_counter_free(dn->node, dn->ctr_rec)) != 0)
			fprintf(stderr, "toroid-demo: trd_counter_free: %s\n", rte_strerror(-rc));
		if (dn->wmr != NULL && (rc = trd_mr_deregister(dn->wmr)) != 0)
			fprintf(stderr, "toroid-demo: trd_mr_deregister: %s\n", rte_strerror(-rc));
		if (dn->rmr != NULL && (rc = trd_mr_deregister(dn->rmr)) != 0)
			fprintf(stderr, "toroid-demo: trd_mr_deregister: %s\n", rte_strerror(-rc));
		if (dn->dbmr != NULL && (rc = trd_mr_deregister(dn->dbmr)) != 0)
			fprintf(stderr, "toroid-demo: trd_mr_deregister: %s\n", rte_strerror(-rc));
	}
	trd_net_free(dm->net);
	dm->net = NULL;
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		free(dm->nodes[r].wbuf);
		free(dm->nodes[r].rbuf);
		free(dm->nodes[r].db);
	}
	free(dm->src);
}

/* ---- report ---- */

static void
demo_print_table(struct demo *dm)
{
	uint64_t tt = 0, tb = 0, tp = 0, tf = 0;

	printf("\n%-*s %5s %9s %12s %9s  %s\n", DEMO_TITLE_W, "operation", "pairs", "transfers",
	       "bytes", "packets", "result");
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		uint64_t t = 0, b = 0, p = 0, f = 0;
		unsigned int pairs = 0, ok = 0;
		char result[80];

		if (!dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			t += dm->cell[op][si].transfers;
			b += dm->cell[op][si].bytes;
			p += dm->cell[op][si].packets;
			f += dm->cell[op][si].failed;
		}
		for (unsigned int a = 0; a < dm->n_nodes; a++)
			for (unsigned int z = 0; z < dm->n_nodes; z++)
				if (dm->pair_ran[op][a][z]) {
					pairs++;
					ok += !dm->pair_bad[op][a][z];
				}
		if (t == 0)
			snprintf(result, sizeof(result), "not run");
		else if (f == 0)
			snprintf(result, sizeof(result), "%u/%u pairs verified", ok, pairs);
		else
			snprintf(result, sizeof(result),
				 "%u/%u pairs verified, %" PRIu64 " transfer(s) FAILED", ok, pairs,
				 f);
		printf("%-*s %5u %9" PRIu64 " %12" PRIu64 " %9" PRIu64 "  %s\n", DEMO_TITLE_W,
		       demo_ops[op].title, pairs, t, b, p, result);
		tt += t;
		tb += b;
		tp += p;
		tf += f;
	}
	printf("%-*s %5s %9" PRIu64 " %12" PRIu64 " %9" PRIu64 "  %" PRIu64 "/%" PRIu64
	       " transfers verified\n",
	       DEMO_TITLE_W, "all", "", tt, tb, tp, tt - tf, tt);
}

/* One latency line: min, avg, p50, p99 (apps/common/latency.h) of the @p n TSC intervals of
 * completions seen, out of @p transfers. */
static void
demo_print_lat_line(const char *label, const char *size, uint64_t *v, unsigned int n,
		    uint64_t transfers)
{
	double us = 1e6 / (double)rte_get_tsc_hz();
	struct app_lat l;

	if (n == 0) {
		printf("%-*s %5s %9u  %s\n", DEMO_TITLE_W, label, size, 0u,
		       transfers ? "(no completion arrived)" : "not run");
		return;
	}
	app_lat_summary(v, n, us, &l);
	printf("%-*s %5s %9u %9.1f %9.1f %9.1f %9.1f\n", DEMO_TITLE_W, label, size, n, l.min,
	       l.avg, l.p50, l.p99);
}

/* Post-to-completion latencies of the put+reflect rows; with -v, by size too. */
static void
demo_print_latency(struct demo *dm)
{
	static uint64_t all[DEMO_MAX_SIZES * DEMO_MAX_LAT];
	static const char *const how[] = {
		[TRD_WAIT_SPIN] = "spin",
		[TRD_WAIT_MONITOR] = "monitor",
		[TRD_WAIT_EQ] = "event queue",
	};
	bool any = false;

	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++)
		any |= demo_ops[op].reflect && dm->opt.ops[op];
	if (!any)
		return;
	printf("\nreflection completion latency in us, from posting to the completion seen by the\n"
	       "demo thread (doorbell waits: %s). Informational, not a benchmark: one\n"
	       "transfer at a time, %s.\n",
	       how[dm->opt.db_wait],
	       dm->served ? "one engine lcore serving 8 nodes" : "the engine polled inline");
	printf("%-*s %5s %9s %9s %9s %9s %9s\n", DEMO_TITLE_W, "operation", "size", "transfers",
	       "min", "avg", "p50", "p99");
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		unsigned int n = 0;
		uint64_t t = 0;

		if (!demo_ops[op].reflect || !dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			memcpy(all + n, dm->lat[op][si], dm->cell[op][si].n_lat * sizeof(all[0]));
			n += dm->cell[op][si].n_lat;
			t += dm->cell[op][si].transfers;
		}
		demo_print_lat_line(demo_ops[op].title, "all", all, n, t);
		if (!dm->opt.verbose)
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			char sz[16];

			if (dm->cell[op][si].transfers == 0)
				continue;
			demo_print_lat_line("",
					    demo_size_str(demo_op_sizes(dm, op)->v[si], sz,
							  sizeof(sz)),
					    dm->lat[op][si], dm->cell[op][si].n_lat,
					    dm->cell[op][si].transfers);
		}
	}
}

static void
demo_print_sizes(struct demo *dm)
{
	printf("\n%-25s %8s %9s %6s %6s %9s %9s %10s %9s\n", "op", "size", "transfers", "passed",
	       "failed", "packets", "forwarded", "avg us", "MB/s");
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		if (!dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			const struct demo_cell *c = &dm->cell[op][si];
			char s[16];

			if (c->transfers == 0)
				continue;
			printf("%-25s %8s %9" PRIu64 " %6" PRIu64 " %6" PRIu64 " %9" PRIu64
			       " %9" PRIu64 " %10.1f %9.1f\n",
			       demo_ops[op].name,
			       demo_size_str(demo_op_sizes(dm, op)->v[si], s, sizeof(s)),
			       c->transfers, c->passed, c->failed, c->packets, c->fwd,
			       (double)c->time_us / (double)c->transfers,
			       c->time_us ? (double)c->bytes / (double)c->time_us : 0.0);
		}
	}
}

static void
demo_print_nodes(struct demo *dm)
{
	struct trd_node_stats st[DEMO_MAX_NODES];

	if (demo_snapshot(dm, st) != 0)
		return;
	printf("\n%-6s %-8s %9s %9s %9s %9s %9s %9s  %s\n", "node", "coord", "tx_pkts", "rx_pkts",
	       "fwd_pkts", "msgs", "zcopy", "no_mbuf", "drops");
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		const struct trd_node_stats *a = &dm->stats0[r], *b = &st[r];
		char c[16], drops[256];
		size_t used = 0;

		drops[0] = '\0';
		for (unsigned int s = 0; s < TRD_DROP_MAX && used < sizeof(drops); s++)
			if (b->drop[s] != a->drop[s])
				used += (size_t)snprintf(drops + used, sizeof(drops) - used,
							 "%s%s=%" PRIu64, used ? " " : "",
							 trd_drop_name(s), b->drop[s] - a->drop[s]);
		printf("%-6s %-8s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		       " %9" PRIu64 "  %s\n",
		       trd_node_name(dm->nodes[r].node),
		       demo_coord_str(dm->nodes[r].coord, c, sizeof(c)),
		       b->stat[TRD_STAT_TX_PKTS] - a->stat[TRD_STAT_TX_PKTS],
		       b->stat[TRD_STAT_RX_PKTS] - a->stat[TRD_STAT_RX_PKTS],
		       b->stat[TRD_STAT_FWD_PKTS] - a->stat[TRD_STAT_FWD_PKTS],
		       b->stat[TRD_STAT_MSGS_DELIVERED] - a->stat[TRD_STAT_MSGS_DELIVERED],
		       b->stat[TRD_STAT_ZCOPY_PKTS] - a->stat[TRD_STAT_ZCOPY_PKTS],
		       b->stat[TRD_STAT_NO_MBUF] - a->stat[TRD_STAT_NO_MBUF],
		       used ? drops : "none");
	}
}

/* "toroid-demo: P pairs x N <what>(s) x M size(s) (list B) = T transfers"; returns T. */
static uint64_t
demo_print_plan(const struct demo *dm, unsigned int n_ops, const char *what,
		const struct demo_sizes *sz)
{
	unsigned int n_pairs = dm->n_nodes * (dm->n_nodes - 1);
	uint64_t n = (uint64_t)n_pairs * n_ops * sz->n;
	char list[256], s[16];
	size_t used = 0;

	if (n_ops == 0)
		return 0;
	list[0] = '\0';
	for (unsigned int i = 0; i < sz->n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "",
					 demo_size_str(sz->v[i], s, sizeof(s)));
	printf("toroid-demo: %u pairs x %u %s%s x %u size%s (%s B) = %" PRIu64 " transfers\n",
	       n_pairs, n_ops, what, n_ops == 1 ? "" : "s", sz->n, sz->n == 1 ? "" : "s", list,
	       n);
	return n;
}

static void
demo_print_header(struct demo *dm)
{
	struct trd_link *l = trd_node_link(dm->nodes[0].node, 0);
	unsigned int n_ops = 0, n_refl = 0, n_ports = 0;

	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		if (demo_ops[op].reflect)
			n_refl += dm->opt.ops[op];
		else
			n_ops += dm->opt.ops[op];
	}
	for (unsigned int r = 0; r < dm->n_nodes; r++)
		for (unsigned int i = 0; i < trd_node_n_links(dm->nodes[r].node); i++)
			n_ports += trd_link_port(trd_node_link(dm->nodes[r].node, i)) >= 0;

	printf("toroid-demo: %ux%ux%u torus, %u nodes, ", DEMO_DIM, DEMO_DIM, DEMO_DIM,
	       dm->n_nodes);
	if (dm->opt.links == TRD_NET_RING)
		printf("ring links");
	else
		printf("net_ring ethdev links (%u ports)", n_ports);
	printf(", %u B payload per packet; ", trd_link_max_payload(l));
	if (dm->served)
		printf("engine on lcore %u, demo on lcore %u\n", dm->worker, rte_get_main_lcore());
	else
		printf("one lcore, engine polled inline\n");
	dm->planned = demo_print_plan(dm, n_ops, "operation", &dm->opt.sizes);
	dm->planned += demo_print_plan(dm, n_refl, "put+reflect way", &dm->opt.rsizes);
	printf("toroid-demo: %" PRIu64 " transfers, seed %" PRIu64 ", timeout %" PRIu64
	       " ms per wait\n",
	       dm->planned, dm->opt.seed, dm->opt.timeout_us / 1000);
}

/* Drops since the start, by cause, summed over the nodes: one line. */
static void
demo_print_drops(struct demo *dm)
{
	struct trd_node_stats st[DEMO_MAX_NODES];
	bool any = false;

	if (demo_snapshot(dm, st) != 0)
		return;
	printf("engine drops:");
	for (unsigned int c = 0; c < TRD_DROP_MAX; c++) {
		uint64_t v = 0;

		for (unsigned int r = 0; r < dm->n_nodes; r++)
			v += st[r].drop[c] - dm->stats0[r].drop[c];
		if (v != 0) {
			printf(" %s=%" PRIu64, trd_drop_name(c), v);
			any = true;
		}
	}
	printf("%s\n", any ? "" : " none");
}

/* ---- main ---- */

static void
demo_run(struct demo *dm)
{
	for (unsigned int op = 0; op < DEMO_OP_COUNT; op++) {
		uint64_t t0 = trd_time_us(), n = 0, bad = 0;

		if (!dm->opt.ops[op])
			continue;
		for (unsigned int si = 0; si < demo_op_sizes(dm, op)->n; si++) {
			for (unsigned int o = 0; o < dm->n_nodes; o++) {
				for (unsigned int t = 0; t < dm->n_nodes; t++) {
					enum demo_result res;

					if (o == t)
						continue;
					if (demo_signal)
						return;
					res = demo_transfer(dm, (enum demo_op)op, si, &dm->nodes[o],
							    &dm->nodes[t]);
					if (res == DEMO_INTR)
						return;
					n++;
					bad += res == DEMO_FAIL;
				}
			}
		}
		printf("%-*s %" PRIu64 " transfers, %" PRIu64 " failed, %.2f s\n", DEMO_TITLE_W,
		       demo_ops[op].title, n, bad, (double)(trd_time_us() - t0) / 1e6);
	}
}

int
main(int argc, char **argv)
{
	static struct demo dm; /* large: keep it off the stack */
	char default_lcores[32];
	char **app_argv;
	int app_argc, rc;
	struct trd_net_conf nc;
	struct sigaction sa;
	uint32_t max_size = 0;
	uint64_t t_start;
	int status;

	/* [EAL options] -- [app options]; without EAL options, defaults that need no set-up.
	 * The demo's options are read first, so --help and mistakes need no EAL. */
	app_split_args(argc, argv, &app_argc, &app_argv);
	app_default_lcore_list(default_lcores, sizeof(default_lcores));
	demo_parse_args(&dm.opt, app_argc, app_argv, default_lcores);
	app_eal_init(argc, argv, "768", &app_argc, &app_argv);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = demo_on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		fprintf(stderr, "toroid-demo: cannot handle SIGINT/SIGTERM: %s\n", strerror(errno));

	for (unsigned int i = 0; i < dm.opt.sizes.n; i++)
		max_size = RTE_MAX(max_size, dm.opt.sizes.v[i]);
	for (unsigned int i = 0; i < dm.opt.rsizes.n; i++)
		max_size = RTE_MAX(max_size, dm.opt.rsizes.v[i]);
	dm.buf_len = RTE_ALIGN_CEIL((size_t)max_size + 2 * DEMO_GUARD + DEMO_OFF_SPAN + 64, 64);
	status = DEMO_EXIT_FAIL;

	memset(&nc, 0, sizeof(nc));
	rc = trd_torus_init(&nc.torus, DEMO_DIM, DEMO_DIM, DEMO_DIM);
	if (rc != 0) {
		fprintf(stderr, "toroid-demo: trd_torus_init: %s\n", strerror(-rc));
		goto out;
	}
	nc.links = dm.opt.links;
	{
		/* corruption reaches payloads: with impaired links, check them */
		static struct trd_node_conf tmpl;

		tmpl.payload_crc = dm.opt.impair;
		nc.node = &tmpl;
	}
	dm.net = trd_net_create(&nc);
	if (dm.net == NULL) {
		fprintf(stderr, "toroid-demo: cannot build the torus: %s%s\n",
			rte_strerror(rte_errno),
			rte_errno == ENOSPC ? " (not enough ethdev ports: try --links ring)" : "");
		goto out;
	}
	dm.n_nodes = trd_net_size(dm.net);
	if (dm.n_nodes == 0 || dm.n_nodes > DEMO_MAX_NODES) {
		fprintf(stderr, "toroid-demo: unexpected net size %u\n", dm.n_nodes);
		goto out;
	}
	trd_telemetry_init();
	for (unsigned int r = 0; r < dm.n_nodes; r++) {
		struct trd_node *nd = trd_net_node(dm.net, r);

		if (dm.opt.capture != NULL &&
		    (rc = trd_node_capture(nd, dm.opt.capture, dm.opt.snaplen)) != 0) {
			fprintf(stderr, "toroid-demo: cannot capture into %s: %s\n", dm.opt.capture,
				strerror(-rc));
			goto out;
		}
		if (dm.opt.impair && (rc = trd_node_impair(nd, &dm.opt.imp)) != 0) {
			fprintf(stderr, "toroid-demo: --impair: %s\n", strerror(-rc));
			goto out;
		}
	}
	dm.payload = trd_link_max_payload(trd_node_link(trd_net_node(dm.net, 0), 0));
	if (dm.payload == 0) {
		fprintf(stderr, "toroid-demo: the links carry no payload\n");
		goto out;
	}
	{
		long page = sysconf(_SC_PAGESIZE);

		dm.db_len = page > 0 ? (size_t)page : 4096;
	}
	dm.src = aligned_alloc(64, dm.buf_len);
	if (dm.src == NULL) {
		fprintf(stderr, "toroid-demo: out of memory\n");
		goto out;
	}
	for (unsigned int r = 0; r < dm.n_nodes; r++)
		if (demo_setup_node(&dm, r) != 0)
			goto out;

	/* The engine on the first worker lcore; with none, the waits poll inline. */
	dm.worker = rte_get_next_lcore(-1, 1, 0);
	if (dm.worker < RTE_MAX_LCORE) {
		rc = trd_net_launch(dm.net, &dm.worker, 1);
		if (rc == 0)
			dm.served = true;
		else
			fprintf(stderr,
				"toroid-demo: trd_net_launch(lcore %u): %s; polling inline\n",
				dm.worker, rte_strerror(-rc));
	}

	demo_print_header(&dm);
	demo_snapshot(&dm, dm.stats0);
	t_start = trd_time_us();
	demo_run(&dm);
	if (demo_signal)
		printf("\ntoroid-demo: interrupted by %s after %" PRIu64 " of %" PRIu64
		       " transfers\n",
		       demo_signal == SIGINT ? "SIGINT" : "SIGTERM", dm.passed + dm.failed,
		       dm.planned);

	demo_print_table(&dm);
	demo_print_drops(&dm);
	demo_print_latency(&dm);
	if (dm.opt.verbose) {
		demo_print_sizes(&dm);
		demo_print_nodes(&dm);
	}
	printf("\nwall time %.2f s\n", (double)(trd_time_us() - t_start) / 1e6);
	printf("demo: %" PRIu64 " passed, %" PRIu64 " failed\n", dm.passed, dm.failed);
	status = dm.failed != 0 ? DEMO_EXIT_FAIL : demo_signal ? 128 + demo_signal : 0;
out:
	demo_teardown(&dm);
	rc = rte_eal_cleanup();
	if (rc != 0)
		fprintf(stderr, "toroid-demo: rte_eal_cleanup: %s\n", rte_strerror(-rc));
	return status;
}
