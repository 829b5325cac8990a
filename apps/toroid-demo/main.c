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
#include "demo.h"

const char demo_default_sizes[] = "1,64,1500,4K,64K,1M";
const char demo_default_rsizes[] = "64,64K";

const struct demo_op_info demo_ops[DEMO_OP_COUNT] = {
	[DEMO_OP_PUT] = {"put", "put", "direct put", false, 0, 0},
	[DEMO_OP_FIFO] = {"fifo", "fifo", "memory FIFO", false, 0, 0},
	[DEMO_OP_RGET] = {"rget", "rget", "remote get (read)", false, 0, 0},
	[DEMO_OP_RL_FIFO] = {"reflect", "reflect-local-fifo", "put+reflect local fifo", true,
			     TRD_CPL_FIFO, TRD_CPL_LOCAL},
	[DEMO_OP_RL_DB] = {"reflect", "reflect-local-doorbell", "put+reflect local doorbell", true,
			   TRD_CPL_DOORBELL, TRD_CPL_LOCAL},
	[DEMO_OP_RD_FIFO] = {"reflect", "reflect-delivery-fifo", "put+reflect delivery fifo", true,
			     TRD_CPL_FIFO, TRD_CPL_DELIVERY},
	[DEMO_OP_RD_DB] = {"reflect", "reflect-delivery-doorbell", "put+reflect delivery doorbell",
			   true, TRD_CPL_DOORBELL, TRD_CPL_DELIVERY},
};

volatile sig_atomic_t demo_signal;

static void
demo_on_signal(int sig)
{
	demo_signal = sig;
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
	dm.kept = aligned_alloc(64, dm.buf_len);
	if (dm.src == NULL || dm.kept == NULL) {
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
