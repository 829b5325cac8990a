/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf --memif server|client --shares N: put_shares between two processes. Each
 * process hosts one node split in N shares (lanes) on a net_memif port of N queue pairs, share
 * k on queue k. The client posts 64 B puts into injection FIFO k (lane k), each lane to its own
 * counter at the server; the server tells lane k's end on lane k (a memory-FIFO message into
 * reception FIFO 1 + k) once that counter reached zero. First one lcore posts into every lane
 * and polls every share, then, when EAL gave the client a second lcore, one lcore per lane.
 * The server polls share k on lcore k when it has N lcores, else every share on one.
 *
 * At the end (BYE) the server checks that every lane's counter is exactly zero (each put
 * applied once: a put applied twice would take it below), that the region holds the client's
 * bytes, that every share received frames and that no frame came on the wrong queue
 * (bad_lane), and says so in its exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"

#define SM_SIZE  64
#define SM_MAX   2
#define SM_BURST 32
#define SM_BUF   (1u << 20)
#define SM_PAT   (SM_MAX * SM_BURST * SM_SIZE) /* bytes the puts write at the server */
#define F_CTL    0 /* reception FIFO of the control messages; 1 + k: lane k's end */

enum sm_cmd { SM_HELLO = 1, SM_ROUND, SM_READY, SM_DONE, SM_BYE, SM_RESULT };

struct sm_msg {
	uint32_t cmd;
	uint32_t lane;            /* SM_DONE */
	uint64_t key;             /* SM_READY: the server's region key */
	uint64_t n_lane;          /* SM_ROUND: puts per lane */
	uint16_t ctr[SM_MAX];     /* SM_READY: each lane's counter at the server */
	int32_t rc;               /* SM_RESULT: the server's verdict */
	uint64_t rx_pkts[SM_MAX]; /* SM_RESULT: what each server share received */
};

struct sm_run {
	struct trd_node *node;
	struct trd_coord peer;
	unsigned int n_sh;
	bool server;
	/* client */
	const uint8_t *src;
	uint64_t key, n_lane;
	uint16_t ctr[SM_MAX];
	/* server */
	uint8_t *mem;
	uint32_t armed[SM_MAX]; /* lane k's counter at the server, counting this round; 0: none */
	struct sm_msg ctl;      /* the control message that ended sm_serve() */
	int stop;               /* the server's lcores stop serving (atomic) */
	int rc[SM_MAX];
};

static uint8_t
sm_pat(unsigned int i)
{
	return (uint8_t)(i * 7u + 3u);
}

/* Post @p m on lane @p lane (injection FIFO lane) to the peer's reception FIFO @p fifo. */
static int
sm_send(struct sm_run *r, unsigned int lane, uint8_t fifo, const struct sm_msg *m)
{
	uint64_t dl = trd_time_us() + 5000000;
	struct trd_desc d;
	int rc;

	trd_desc_fifo(&d, r->peer, fifo, m, sizeof(*m), m->cmd, 0);
	while ((rc = trd_inject(trd_inj_fifo(r->node, lane), &d)) == -ENOBUFS && trd_time_us() < dl)
		trd_node_poll_share(r->node, lane);
	return rc;
}

/* A message of reception FIFO @p fifo, polling every share meanwhile (no other thread polls). */
static int
sm_recv(struct sm_run *r, uint8_t fifo, struct sm_msg *out, uint64_t timeout_us)
{
	uint64_t dl = trd_time_us() + timeout_us;
	struct trd_msg *m;

	while (!perf_stop && trd_time_us() < dl) {
		if (trd_rec_fifo_poll(trd_rec_fifo(r->node, fifo), &m, 1) == 1) {
			int ok = m->len == sizeof(*out);

			if (ok)
				memcpy(out, m->data, sizeof(*out));
			trd_msg_free(m);
			return ok ? 0 : -EPROTO;
		}
		if (trd_node_poll(r->node) < 0)
			return -EBUSY;
	}
	return perf_stop ? -EINTR : -ETIMEDOUT;
}

/* ---- server ---- */

/* Poll shares @p lo .. @p hi - 1 and tell each armed lane's end once its counter is zero,
 * until (lcore 0) a control message comes, copied into r->ctl, or the other lcore stops. */
static int
sm_serve_lanes(struct sm_run *r, unsigned int lo, unsigned int hi)
{
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct trd_msg *msg;

		if (perf_stop)
			return -EINTR;
		for (unsigned int k = lo; k < hi; k++) {
			int64_t left;

			if (trd_node_poll_share(r->node, k) < 0)
				return -EBUSY;
			if (r->armed[k] != 0 &&
			    trd_counter_read(r->node, (uint16_t)r->armed[k], &left) == 0 &&
			    left <= 0) {
				struct sm_msg m = {.cmd = SM_DONE, .lane = k};

				r->armed[k] = 0;
				if (sm_send(r, k, (uint8_t)(1 + k), &m) != 0)
					return -EIO;
			}
		}
		if (lo != 0 || trd_rec_fifo_poll(trd_rec_fifo(r->node, F_CTL), &msg, 1) != 1)
			continue;
		if (msg->len == sizeof(r->ctl))
			memcpy(&r->ctl, msg->data, sizeof(r->ctl));
		else
			r->ctl.cmd = 0;
		trd_msg_free(msg);
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

static int
sm_serve_worker(void *arg)
{
	struct sm_run *r = arg;

	r->rc[1] = sm_serve_lanes(r, 1, r->n_sh);
	return 0;
}

/* Serve until the next control message (r->ctl): share k on lcore k when there is a worker */
static int
sm_serve(struct sm_run *r, unsigned int worker)
{
	r->stop = 0;
	r->rc[0] = r->rc[1] = 0;
	if (r->n_sh > 1 && worker < RTE_MAX_LCORE) {
		if (rte_eal_remote_launch(sm_serve_worker, r, worker) != 0)
			return -EBUSY;
		r->rc[0] = sm_serve_lanes(r, 0, 1);
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
		rte_eal_wait_lcore(worker);
	} else {
		r->rc[0] = sm_serve_lanes(r, 0, r->n_sh);
	}
	return r->rc[0] != 0 ? r->rc[0] : r->rc[1];
}

/* The server's verdict at BYE: 0 or -EIO (printed on stderr why) */
static int
sm_verdict(struct sm_run *r, const uint16_t *ctr, struct sm_msg *res)
{
	struct trd_node_stats st;
	int rc = 0;

	for (unsigned int k = 0; k < r->n_sh; k++) {
		int64_t v = -1;

		if (trd_counter_read(r->node, ctr[k], &v) != 0 || v != 0) {
			fprintf(stderr,
				"toroid-perf: put_shares server: lane %u counter %" PRId64
				" at the end, not 0\n",
				k, v);
			rc = -EIO;
		}
		if (trd_node_share_stats_get(r->node, k, &st) != 0)
			return -EIO;
		res->rx_pkts[k] = st.stat[TRD_STAT_RX_PKTS];
		if (st.stat[TRD_STAT_RX_PKTS] == 0) {
			fprintf(stderr,
				"toroid-perf: put_shares server: share %u received nothing\n", k);
			rc = -EIO;
		}
		if (st.drop[TRD_DROP_BAD_LANE] != 0) {
			fprintf(stderr,
				"toroid-perf: put_shares server: share %u dropped %" PRIu64
				" frames of another lane\n",
				k, st.drop[TRD_DROP_BAD_LANE]);
			rc = -EIO;
		}
	}
	for (unsigned int i = 0; i < SM_BURST * r->n_sh * SM_SIZE; i++)
		if (r->mem[i] != sm_pat(i)) {
			fprintf(stderr, "toroid-perf: put_shares server: byte %u is %u, not %u\n",
				i, r->mem[i], sm_pat(i));
			rc = -EIO;
			break;
		}
	return rc;
}

static int
sm_server(struct sm_run *r, unsigned int worker)
{
	uint16_t ctr[SM_MAX] = {0};
	struct trd_mr *mr;
	int rc = 0;

	r->mem = rte_zmalloc("perf-sm", SM_BUF, 4096);
	mr = r->mem != NULL ? trd_mr_register(r->node, r->mem, SM_BUF, TRD_ACCESS_ALL) : NULL;
	if (mr == NULL)
		return -ENOMEM;
	/* each lane's counter on a cache line of its own: 8 ids apart */
	for (unsigned int k = 0; k < 8 * (r->n_sh - 1) + 1 && rc == 0; k++) {
		uint16_t id;

		rc = trd_counter_alloc(r->node, &id);
		if (k % 8 == 0)
			ctr[k / 8] = id;
	}
	while (rc == 0) {
		struct sm_msg out = {.cmd = SM_READY, .key = trd_mr_key(mr)};

		rc = sm_serve(r, worker);
		if (rc != 0)
			break;
		if (r->ctl.cmd == SM_BYE) {
			out.cmd = SM_RESULT;
			out.rc = sm_verdict(r, ctr, &out);
			rc = sm_send(r, 0, F_CTL, &out);
			/* the result must reach the client before this side goes: poll a while */
			for (uint64_t dl = trd_time_us() + 500000; trd_time_us() < dl;)
				trd_node_poll(r->node);
			if (rc == 0)
				rc = out.rc;
			if (rc == 0)
				printf("put_shares  server: %u shares, every lane's counter exactly 0, "
				       "bytes exact, packets received by share 0 %" PRIu64
				       ", share 1 %" PRIu64 ", none on another share's queue\n",
				       r->n_sh, out.rx_pkts[0], r->n_sh > 1 ? out.rx_pkts[1] : 0);
			break;
		}
		if (r->ctl.cmd == SM_HELLO)
			continue;
		if (r->ctl.cmd != SM_ROUND) {
			rc = -EPROTO;
			break;
		}
		for (unsigned int k = 0; k < r->n_sh && rc == 0; k++) {
			rc = trd_counter_set(r->node, ctr[k], (int64_t)(r->ctl.n_lane * SM_SIZE));
			out.ctr[k] = ctr[k];
			r->armed[k] = ctr[k];
		}
		if (rc == 0)
			rc = sm_send(r, 0, F_CTL, &out);
	}
	return rc;
}

/* ---- client ---- */

/* Post and poll lanes @p lo .. @p hi - 1 until the server told each lane's end. */
static int
sm_lanes(struct sm_run *r, unsigned int lo, unsigned int hi)
{
	uint64_t posted[SM_MAX] = {0};
	bool done[SM_MAX] = {false};
	unsigned int n_done = 0;
	struct trd_desc d[SM_BURST];
	struct perf_stall st;

	perf_stall_init(&st, 10000000); /* 10 s without progress */

	while (n_done != hi - lo) {
		uint64_t sum = 0;

		for (unsigned int k = lo; k < hi; k++) {
			struct trd_msg *m;

			if (posted[k] < r->n_lane) {
				unsigned int nb =
					(unsigned int)RTE_MIN(SM_BURST, r->n_lane - posted[k]);

				for (unsigned int i = 0; i < nb; i++) {
					uint64_t off = (uint64_t)(k * SM_BURST + i) * SM_SIZE;

					trd_desc_put(&d[i], r->peer, r->src + off, SM_SIZE, r->key,
						     off, 0, r->ctr[k]);
				}
				if (trd_inject_bulk(trd_inj_fifo(r->node, k), d, nb) == 0)
					posted[k] += nb;
			}
			if (trd_node_poll_share(r->node, k) < 0)
				return -EBUSY;
			if (!done[k] &&
			    trd_rec_fifo_poll(trd_rec_fifo(r->node, (unsigned int)(1 + k)), &m,
					      1) == 1) {
				trd_msg_free(m);
				done[k] = true;
				n_done++;
			}
			sum += posted[k] + done[k];
		}
		if (perf_stop)
			return -EINTR;
		if (perf_stalled(&st, sum))
			return -ETIMEDOUT;
	}
	return 0;
}

static int
sm_client_worker(void *arg)
{
	struct sm_run *r = arg;

	r->rc[1] = sm_lanes(r, 1, r->n_sh);
	return 0;
}

/* One round of @p n_lane puts per lane on @p lcores: the rate in Mpps */
static int
sm_round(struct sm_run *r, uint64_t n_lane, unsigned int lcores, unsigned int worker, double *mpps)
{
	struct sm_msg m = {.cmd = SM_ROUND, .n_lane = n_lane};
	uint64_t t0;
	int rc = sm_send(r, 0, F_CTL, &m);

	if (rc == 0)
		rc = sm_recv(r, F_CTL, &m, 20000000);
	if (rc == 0 && m.cmd != SM_READY)
		rc = -EPROTO;
	if (rc != 0)
		return rc;
	r->key = m.key;
	memcpy(r->ctr, m.ctr, sizeof(r->ctr));
	r->n_lane = n_lane;
	r->rc[0] = r->rc[1] = 0;
	t0 = rte_rdtsc();
	if (lcores == 1) {
		r->rc[0] = sm_lanes(r, 0, r->n_sh);
	} else {
		if (rte_eal_remote_launch(sm_client_worker, r, worker) != 0)
			return -EBUSY;
		r->rc[0] = sm_lanes(r, 0, 1);
		rte_eal_wait_lcore(worker);
	}
	*mpps = (double)(n_lane * r->n_sh) * (double)rte_get_tsc_hz() / 1e6 /
		(double)(rte_rdtsc() - t0);
	return r->rc[0] != 0 ? r->rc[0] : r->rc[1];
}

static int
sm_client(struct sm_run *r, uint64_t iters, unsigned int worker)
{
	struct sm_msg m = {.cmd = SM_HELLO};
	double one = 0, two = 0;
	struct trd_node_stats st[SM_MAX];
	uint64_t n_lane = iters / r->n_sh;
	uint8_t *src = rte_zmalloc("perf-sm", SM_PAT, 64);
	int rc;

	if (src == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < SM_PAT; i++)
		src[i] = sm_pat(i);
	r->src = src;
	rc = sm_send(r, 0, F_CTL, &m);
	/* a short warm-up (sessions started), then 1 lcore, then one per lane */
	if (rc == 0)
		rc = sm_round(r, RTE_MIN(n_lane, 10000), 1, worker, &one);
	if (rc == 0)
		rc = sm_round(r, n_lane, 1, worker, &one);
	if (rc == 0 && r->n_sh > 1 && worker < RTE_MAX_LCORE)
		rc = sm_round(r, n_lane, r->n_sh, worker, &two);
	for (unsigned int k = 0; k < r->n_sh && rc == 0; k++)
		rc = trd_node_share_stats_get(r->node, k, &st[k]);
	/* the server's verdict: every lane's counter exact, bytes exact, no frame of a lane
	 * on another share's queue */
	m.cmd = SM_BYE;
	if (rc == 0)
		rc = sm_send(r, 0, F_CTL, &m);
	if (rc == 0)
		rc = sm_recv(r, F_CTL, &m, 20000000);
	if (rc == 0 && (m.cmd != SM_RESULT || m.rc != 0)) {
		fprintf(stderr, "toroid-perf: put_shares: the server found the run wrong (%s)\n",
			m.cmd == SM_RESULT ? rte_strerror(-m.rc) : "no result");
		rc = -EIO;
	}
	rte_free(src);
	if (rc != 0)
		return rc;
	for (unsigned int l = 1; l <= (two > 0 ? r->n_sh : 1); l++) {
		double v = l == 1 ? one : two;

		if (perf_opt.json) {
			printf("{\"test\":\"put_shares\",\"size\":%u,\"links\":\"memif\",\"shares\":%u,"
			       "\"lcores\":%u,\"msgs\":%" PRIu64 ",\"mpps\":%.4f",
			       SM_SIZE, r->n_sh, l, n_lane * r->n_sh, v);
			if (l > 1)
				printf(",\"scale\":%.3f", two / one);
			if (l == (two > 0 ? r->n_sh : 1)) {
				printf(",\"tx_pkts\":[");
				for (unsigned int k = 0; k < r->n_sh; k++)
					printf("%s%" PRIu64, k ? "," : "",
					       st[k].stat[TRD_STAT_TX_PKTS]);
				printf("],\"server_rx_pkts\":[");
				for (unsigned int k = 0; k < r->n_sh; k++)
					printf("%s%" PRIu64, k ? "," : "", m.rx_pkts[k]);
				printf("],\"exact\":true");
			}
			printf("}\n");
		}
	}
	if (!perf_opt.json) {
		printf("put_shares  %u B  memif, %u shares: 1 lcore %.3f Mpps", SM_SIZE, r->n_sh,
		       one);
		if (two > 0)
			printf(", %u lcores %.3f Mpps (%.2f x)", r->n_sh, two, two / one);
		else
			printf(" (one lcore: no %u lcores measured)", r->n_sh);
		printf("; packets sent by");
		for (unsigned int k = 0; k < r->n_sh; k++)
			printf("%s share %u %" PRIu64, k ? "," : "", k,
			       st[k].stat[TRD_STAT_TX_PKTS]);
		printf("; received by the server's");
		for (unsigned int k = 0; k < r->n_sh; k++)
			printf("%s share %u %" PRIu64, k ? "," : "", k, m.rx_pkts[k]);
		printf("; counters and bytes exact\n");
	}
	fflush(stdout);
	return 0;
}

/* The memif port with @p nq queue pairs, up within --timeout (the client waits for its server;
 * two ends of different queue counts never come up) */
static int
sm_port(bool server, const char *sock, unsigned int nq, uint16_t *port)
{
	struct rte_eth_conf pconf;
	struct rte_eth_link link;
	char args[512];
	uint64_t dl = trd_time_us() + perf_opt.timeout_us, retry = trd_time_us() + 2000000;
	int rc;

	snprintf(args, sizeof(args), "role=%s,socket=%s", server ? "server" : "client", sock);
	rc = rte_vdev_init("net_memif_sh", args);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name("net_memif_sh", port);
	memset(&pconf, 0, sizeof(pconf));
	if (rc == 0)
		rc = rte_eth_dev_configure(*port, (uint16_t)nq, (uint16_t)nq, &pconf);
	for (unsigned int q = 0; q < nq && rc == 0; q++) {
		rc = rte_eth_rx_queue_setup(*port, (uint16_t)q, 1024, rte_eth_dev_socket_id(*port),
					    NULL, trd_default_pool(0));
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(*port, (uint16_t)q, 1024,
						    rte_eth_dev_socket_id(*port), NULL);
	}
	/* a memif client cannot start before its server listens: keep trying a while */
	while (rc == 0 && (rc = rte_eth_dev_start(*port)) != 0 && !server && !perf_stop &&
	       trd_time_us() < dl) {
		rte_delay_us_sleep(250000);
		rc = 0;
	}
	if (rc != 0) {
		fprintf(stderr, "toroid-perf: cannot open net_memif with %u queues (%s): %s\n", nq,
			args, rte_strerror(rc < 0 ? -rc : rc));
		return rc < 0 ? rc : -rc;
	}
	fprintf(stderr, "toroid-perf: %s on %s, %u queue pairs, waiting for the other process\n",
		server ? "server" : "client", sock, nq);
	for (;;) {
		rte_eth_link_get_nowait(*port, &link);
		if (link.link_status == RTE_ETH_LINK_UP || trd_time_us() >= dl || perf_stop)
			break;
		/* a client that connected before its server started is turned away and does
		 * not try again: restart it */
		if (!server && trd_time_us() > retry) {
			rte_eth_dev_stop(*port);
			rte_eth_dev_start(*port);
			retry = trd_time_us() + 2000000;
		}
		rte_delay_us_sleep(1000);
	}
	if (link.link_status != RTE_ETH_LINK_UP) {
		fprintf(stderr, "toroid-perf: the memif link did not come up\n");
		return -ETIMEDOUT;
	}
	return 0;
}

int
perf_shares_memif(bool server, const char *sock, unsigned int n_sh, uint64_t iters)
{
	struct trd_node_conf nc = {.shares = n_sh};
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	struct sm_run *r = rte_zmalloc("perf-sm", sizeof(*r), 64);
	uint16_t port = 0;
	int rc;

	if (r == NULL || n_sh > SM_MAX)
		return -EINVAL;
	r->n_sh = n_sh;
	r->server = server;
	rc = sm_port(server, sock, n_sh, &port);
	trd_torus_init(&nc.torus, 2, 1, 1);
	nc.coord.x = server ? 1 : 0;
	r->peer = (struct trd_coord){server ? 0 : 1, 0, 0};
	if (rc == 0) {
		r->node = trd_node_create(&nc);
		rc = r->node == NULL ? -rte_errno : 0;
	}
	/* share k on queue pair k */
	for (unsigned int k = 0; k < n_sh && rc == 0; k++) {
		struct trd_link_conf lc = {.queue = (uint16_t)k, .no_setup = true};
		struct trd_link *l = trd_link_ethdev(port, &lc);

		rc = l == NULL ? -rte_errno : trd_node_add_share_link(r->node, k, l, TRD_DIR_XP);
		if (rc != 0 && l != NULL)
			trd_link_free(l);
	}
	if (rc == 0)
		rc = server ? sm_server(r, worker) : sm_client(r, iters, worker);
	if (rc != 0)
		fprintf(stderr, "toroid-perf: put_shares over memif (%s): %s\n",
			server ? "server" : "client", rte_strerror(-rc));
	if (r->node != NULL)
		trd_node_free(r->node);
	rte_free(r->mem);
	rte_free(r);
	if (rte_eth_dev_get_port_by_name("net_memif_sh", &port) == 0) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
	return rc;
}
