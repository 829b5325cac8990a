/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf between two processes over net_memif: `--memif server` hosts node (1,0,0) and
 * answers, `--memif client` hosts node (0,0,0) and measures. Each process is one thread that
 * polls its own node (two busy threads in all).
 *
 * The client first measures raw DPDK on the same memif ports (frames of EtherType 0x88B6 that
 * the server echoes or counts), then both start their nodes on those ports and the client
 * runs the engine tests, telling the server over a memory FIFO what to answer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"

#define RAW_ETHERTYPE 0x88B6
#define WAIT_US 20000000ULL
#define BUF (8u << 20)
#define F_DATA 0 /* reception FIFO of test messages */
#define F_CTL 1  /* reception FIFO of commands and replies */
#define F_OUT 3  /* outcomes of tracked operations */

enum raw_cmd { RAW_ECHO = 1, RAW_SINK, RAW_SINK_END, RAW_COUNT, RAW_ENGINE, RAW_ENGINE_OK };
enum ctl_cmd { CTL_HELLO = 1, CTL_PUT_ECHO, CTL_FIFO_ECHO, CTL_IDLE, CTL_READY, CTL_BYE };

struct ctl_msg {
	uint32_t cmd;
	uint32_t size;
	uint64_t key;      /* HELLO: the sender's region key */
	uint16_t ctr;      /* PUT_ECHO: the counter to decrement at the other side */
};

static uint16_t port;
static struct trd_link *plink; /* the memif port, set up once */
static struct trd_node *node;
static struct trd_mr *mr, *db;
static uint8_t *mem;
static uint64_t *bell;
static uint16_t ctr;
static uint64_t peer_key;
static struct trd_coord me, peer;

/* ---- raw frames ---- */

static struct rte_mbuf *
raw_frame(uint8_t cmd, uint64_t arg, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(trd_default_pool(0));
	uint8_t *p;

	if (m == NULL)
		return NULL;
	len = RTE_MAX(len, 60u);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	memset(p, 0xff, 12);
	p[12] = RAW_ETHERTYPE >> 8;
	p[13] = RAW_ETHERTYPE & 0xff;
	p[14] = cmd;
	memcpy(p + 15, &arg, 8);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return m;
}

static void
raw_send(struct rte_mbuf *m)
{
	while (rte_eth_tx_burst(port, 0, &m, 1) == 0 && !perf_stop)
		;
}

/* Next raw frame's command (and arg), within the deadline; 0 on timeout. */
static int
raw_recv(uint64_t *arg, uint64_t deadline_us)
{
	struct rte_mbuf *m;

	while (trd_time_us() < deadline_us && !perf_stop) {
		if (rte_eth_rx_burst(port, 0, &m, 1) == 1) {
			const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
			int cmd = 0;

			if (m->data_len >= 23 && (p[12] << 8 | p[13]) == RAW_ETHERTYPE) {
				cmd = p[14];
				if (arg != NULL)
					memcpy(arg, p + 15, 8);
			}
			rte_pktmbuf_free(m);
			if (cmd != 0)
				return cmd;
		}
	}
	return 0;
}

/* The server's raw phase: echo, count, until told to start the engine. */
static int
raw_serve(void)
{
	uint64_t count = 0;

	for (;;) {
		struct rte_mbuf *pk[32];
		uint16_t n = rte_eth_rx_burst(port, 0, pk, 32);

		if (perf_stop)
			return -EINTR;
		for (uint16_t i = 0; i < n; i++) {
			uint8_t *p = rte_pktmbuf_mtod(pk[i], uint8_t *);
			int cmd = (pk[i]->data_len >= 23 && (p[12] << 8 | p[13]) == RAW_ETHERTYPE)
					  ? p[14]
					  : 0;

			if (cmd == RAW_ECHO) {
				raw_send(pk[i]); /* the same frame back */
				continue;
			}
			rte_pktmbuf_free(pk[i]);
			if (cmd == RAW_SINK) {
				count++;
			} else if (cmd == RAW_SINK_END) {
				struct rte_mbuf *r = raw_frame(RAW_COUNT, count, 60);

				if (r != NULL)
					raw_send(r);
				count = 0;
			} else if (cmd == RAW_ENGINE) {
				struct rte_mbuf *r = raw_frame(RAW_ENGINE_OK, 0, 60);

				if (r != NULL)
					raw_send(r);
				return 0;
			}
		}
	}
}

static int
raw_pingpong_test(uint32_t frame, uint64_t n, struct perf_result *r)
{
	uint64_t *s = malloc(n * sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct rte_mbuf *m = raw_frame(RAW_ECHO, i, frame);
		uint64_t t0 = rte_rdtsc();

		if (m == NULL) {
			free(s);
			return -ENOBUFS;
		}
		raw_send(m);
		if (raw_recv(NULL, trd_time_us() + 1000000) != RAW_ECHO) {
			free(s);
			return -ETIMEDOUT;
		}
		s[i] = rte_rdtsc() - t0;
	}
	lat_stats(r, s, n, 0.5);
	free(s);
	return 0;
}

static int
raw_stream_test(uint32_t frame, uint64_t n, double *mpps)
{
	struct rte_mbuf *pk[32];
	uint64_t sent = 0, got = 0, t0 = rte_rdtsc();

	while (sent < n && !perf_stop) {
		unsigned int k = (unsigned int)RTE_MIN(32u, n - sent), j = 0;

		for (unsigned int i = 0; i < k; i++)
			if ((pk[j] = raw_frame(RAW_SINK, sent + i, frame)) != NULL)
				j++;
		k = rte_eth_tx_burst(port, 0, pk, (uint16_t)j);
		if (k < j)
			rte_pktmbuf_free_bulk(&pk[k], j - k);
		sent += k;
	}
	{
		struct rte_mbuf *e = raw_frame(RAW_SINK_END, 0, 60);

		if (e == NULL)
			return -ENOBUFS;
		raw_send(e);
	}
	if (raw_recv(&got, trd_time_us() + WAIT_US) != RAW_COUNT)
		return -ETIMEDOUT;
	/* memif may drop when its ring is full: count what arrived */
	*mpps = (double)got * rte_get_tsc_hz() / 1e6 / (double)(rte_rdtsc() - t0);
	return 0;
}

/* ---- engine ---- */

static int
ctl_send(uint32_t cmd, uint32_t size, uint64_t key, uint16_t c)
{
	struct ctl_msg m = {.cmd = cmd, .size = size, .key = key, .ctr = c};
	struct trd_desc d;
	uint64_t dl = trd_time_us() + WAIT_US;
	int rc;

	trd_desc_fifo(&d, peer, F_CTL, &m, sizeof(m), cmd, 0);
	while ((rc = trd_inject(trd_inj_fifo(node, 1), &d)) == -ENOBUFS && trd_time_us() < dl)
		trd_node_poll(node);
	return rc;
}

static int
ctl_recv(struct ctl_msg *out, uint64_t timeout_us)
{
	struct trd_msg *m;
	int rc = trd_rec_fifo_wait(trd_rec_fifo(node, F_CTL), &m, timeout_us);

	if (rc != 0)
		return rc;
	if (m->len != sizeof(*out)) {
		trd_msg_free(m);
		return -EPROTO;
	}
	memcpy(out, m->data, sizeof(*out));
	trd_msg_free(m);
	return 0;
}

static int
engine_setup(bool server)
{
	struct trd_node_conf nc = {0};
	struct trd_link *l;
	struct ctl_msg h;
	int rc;

	trd_torus_init(&nc.torus, 2, 1, 1);
	nc.coord.x = server ? 1 : 0;
	node = trd_node_create(&nc);
	if (node == NULL)
		return -rte_errno;
	l = plink;
	rc = trd_node_add_link(node, l, TRD_DIR_XP);
	if (rc != 0)
		return rc;
	me = trd_node_coord(node);
	peer = (struct trd_coord){server ? 0 : 1, 0, 0};
	mem = rte_zmalloc("perf2", BUF, 4096);
	bell = rte_zmalloc("perf2", 4096, 4096);
	if (mem == NULL || bell == NULL)
		return -ENOMEM;
	mr = trd_mr_register(node, mem, BUF, TRD_ACCESS_ALL);
	db = trd_doorbell_register(node, bell, 4096, NULL);
	if (mr == NULL || db == NULL || trd_counter_alloc(node, &ctr) != 0)
		return -ENOMEM;
	/* exchange region keys: the client speaks first */
	if (!server && (rc = ctl_send(CTL_HELLO, 0, trd_mr_key(mr), ctr)) != 0)
		return rc;
	rc = ctl_recv(&h, WAIT_US);
	if (rc != 0 || h.cmd != CTL_HELLO)
		return rc ? rc : -EPROTO;
	peer_key = h.key;
	if (server && (rc = ctl_send(CTL_HELLO, 0, trd_mr_key(mr), ctr)) != 0)
		return rc;
	return 0;
}

/* The server answers what the client asks, until BYE. */
static int
engine_serve(void)
{
	struct ctl_msg c = {.cmd = CTL_IDLE};
	uint16_t their_ctr = 0;

	for (;;) {
		struct trd_msg *m;
		struct trd_desc d;
		int64_t v;

		if (perf_stop)
			return -EINTR;
		trd_node_poll(node);
		if (trd_rec_fifo_poll(trd_rec_fifo(node, F_CTL), &m, 1) == 1) {
			if (m->len == sizeof(c))
				memcpy(&c, m->data, sizeof(c));
			trd_msg_free(m);
			if (c.cmd == CTL_BYE)
				return 0;
			if (c.cmd == CTL_PUT_ECHO) {
				their_ctr = c.ctr;
				trd_counter_set(node, ctr, c.size);
			}
			ctl_send(CTL_READY, 0, 0, ctr);
		}
		if (c.cmd == CTL_FIFO_ECHO &&
		    trd_rec_fifo_poll(trd_rec_fifo(node, F_DATA), &m, 1) == 1) {
			trd_desc_fifo(&d, peer, F_DATA, mem, m->len, m->user, 0);
			trd_msg_free(m);
			while (trd_inject(trd_inj_fifo(node, 0), &d) == -ENOBUFS)
				trd_node_poll(node);
		} else if (c.cmd == CTL_PUT_ECHO && trd_counter_read(node, ctr, &v) == 0 && v == 0) {
			trd_counter_set(node, ctr, c.size);
			trd_desc_put(&d, peer, mem, c.size, peer_key, 0, 0, their_ctr);
			while (trd_inject(trd_inj_fifo(node, 0), &d) == -ENOBUFS)
				trd_node_poll(node);
		}
	}
}

static int
ask(uint32_t cmd, uint32_t size, uint16_t *their_ctr)
{
	struct ctl_msg r;
	int rc = ctl_send(cmd, size, 0, ctr);

	if (rc == 0)
		rc = ctl_recv(&r, WAIT_US);
	if (rc == 0 && r.cmd != CTL_READY)
		rc = -EPROTO;
	if (rc == 0 && their_ctr != NULL)
		*their_ctr = r.ctr;
	return rc;
}

static int
lat_test(const char *name, uint32_t size, uint64_t n, struct perf_result *r)
{
	uint64_t *s = malloc((n + n / 10 + 1) * sizeof(*s));
	uint64_t warm = n / 10 + 1;
	uint16_t their = 0;
	int rc = 0;

	if (s == NULL)
		return -ENOMEM;
	if (strcmp(name, "put_lat") == 0)
		rc = ask(CTL_PUT_ECHO, size, &their);
	else if (strcmp(name, "fifo_lat") == 0)
		rc = ask(CTL_FIFO_ECHO, size, NULL);
	else
		rc = ask(CTL_IDLE, size, NULL);
	uint64_t i;

	for (i = 0; rc == 0 && i < warm + n && !perf_stop; i++) {
		uint64_t t0 = rte_rdtsc();
		struct trd_desc d, c;
		struct trd_msg *m;

		if (strcmp(name, "put_lat") == 0) {
			trd_counter_set(node, ctr, size);
			trd_desc_put(&d, peer, mem, size, peer_key, 0, 0, their);
			rc = trd_inject(trd_inj_fifo(node, 0), &d);
			if (rc == 0)
				rc = trd_counter_wait(node, ctr, WAIT_US);
		} else if (strcmp(name, "fifo_lat") == 0) {
			trd_desc_fifo(&d, peer, F_DATA, mem, size, i, 0);
			rc = trd_inject(trd_inj_fifo(node, 0), &d);
			if (rc == 0 && (rc = trd_rec_fifo_wait(trd_rec_fifo(node, F_DATA), &m,
							       WAIT_US)) == 0)
				trd_msg_free(m);
		} else if (strcmp(name, "get_lat") == 0) {
			trd_counter_set(node, ctr, size);
			trd_desc_put(&c, me, NULL, size, trd_mr_key(mr), 0, 0, ctr);
			c.flags = TRD_DF_SRC_MR;
			c.src_key = peer_key;
			trd_desc_rget(&d, peer, TRD_ENGINE_FIFO, &c, 1);
			rc = trd_inject(trd_inj_fifo(node, 0), &d);
			if (rc == 0)
				rc = trd_counter_wait(node, ctr, WAIT_US);
		} else { /* reflect_lat */
			struct trd_cpl_spec sp = {.kind = TRD_CPL_DOORBELL, .mode = perf_opt.mode,
						  .doorbell = db, .cookie = i + 1};

			trd_desc_put(&d, peer, mem, size, peer_key, 0, 0, 0);
			rc = trd_inject_reflect(trd_inj_fifo(node, 0), &d, &sp);
			if (rc == 0)
				rc = trd_doorbell_wait(db, 0, i + 1, TRD_WAIT_SPIN, WAIT_US);
		}
		if (rc == 0 && i >= warm)
			s[i - warm] = rte_rdtsc() - t0;
	}
	/* interrupted: the samples taken, marked so, or nothing */
	if (perf_stop && rc == 0) {
		if (i <= warm)
			rc = -EINTR;
		n = i - warm;
		r->interrupted = true;
	}
	if (rc == 0) {
		r->test = name;
		r->size = size;
		lat_stats(r, s, n,
			  strcmp(name, "put_lat") == 0 || strcmp(name, "fifo_lat") == 0 ? 0.5 : 1);
	}
	free(s);
	if (rc == 0 && !perf_stop)
		rc = ask(CTL_IDLE, 0, NULL);
	return rc;
}

/* Puts to the server as fast as the FIFO takes them; the last one asks for a DONE, which
 * comes after every earlier one landed (reliable, in order). */
static int
rate_test(const char *name, uint32_t size, uint64_t n, struct perf_result *r)
{
	unsigned int maxpay = trd_link_max_payload(trd_node_link(node, 0));
	uint64_t posted = 0, t0 = rte_rdtsc(), dl = trd_time_us() + perf_opt.timeout_us;
	struct trd_desc d[32];
	struct trd_msg *m;
	uint32_t id;
	int rc;

	for (int i = 0; i < 32; i++)
		trd_desc_put(&d[i], peer, mem, size, peer_key, (uint64_t)i * size % (BUF - size), 0,
			     0);
	/* the deadline is on progress, not on the run; SIGINT ends the stream early and the
	 * rate of what was posted (all of it acknowledged by the last DONE) is reported */
	while (posted + 1 < n && !perf_stop) {
		unsigned int k = (unsigned int)RTE_MIN(32u, n - 1 - posted);

		if (trd_inject_bulk(trd_inj_fifo(node, 0), d, k) == 0) {
			posted += k;
			dl = trd_time_us() + perf_opt.timeout_us;
		} else {
			trd_node_poll(node);
			if (trd_time_us() > dl)
				return -ETIMEDOUT;
		}
	}
	if (perf_stop) {
		if (posted == 0)
			return -EINTR;
		r->interrupted = true;
		n = posted + 1;
	}
	rc = trd_track_open(node, F_OUT, 1, NULL, &id);
	if (rc != 0)
		return rc;
	d[0].flags = TRD_DF_ACKREQ;
	d[0].aux = id;
	while ((rc = trd_inject(trd_inj_fifo(node, 0), &d[0])) == -ENOBUFS)
		trd_node_poll(node);
	if (rc == 0)
		rc = trd_rec_fifo_wait(trd_rec_fifo(node, F_OUT), &m, perf_opt.timeout_us);
	if (rc != 0)
		return rc;
	rc = m->status;
	trd_msg_free(m);
	r->test = name;
	r->size = size;
	rate_result(r, n, n * (size == 0 ? 1 : (size + maxpay - 1) / maxpay),
		    TRD_FRAME_HLEN + RTE_MIN(size, maxpay), rte_rdtsc() - t0);
	return rc;
}

static bool
is_lat(const char *t)
{
	return strstr(t, "_lat") != NULL;
}

int
perf_twoproc(const char *role, const char *socket, const char *test)
{
	static const char *const all[] = {"put_rate", "put_bw",  "put_lat",
					  "fifo_lat", "get_lat", "reflect_lat"};
	bool server = strcmp(role, "server") == 0;
	char args[512];
	struct rte_eth_link link;
	struct perf_result res[RTE_DIM(all)][PERF_MAX_SIZES];
	uint64_t dl;
	int failed = 0, rc;

	if (!server && strcmp(role, "client") != 0)
		return 1;
	/* the packet pool first: without memory for it, memif would be blamed */
	if (trd_default_pool(0) == NULL) {
		fprintf(stderr, "toroid-perf: no packet pool: give EAL more memory (-m 1024)\n");
		return 1;
	}
	snprintf(args, sizeof(args), "role=%s,socket=%s", role, socket);
	rc = rte_vdev_init("net_memif_perf", args);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name("net_memif_perf", &port);
	if (rc == 0) {
		/* configure, start; a client cannot start before its server listens (the two
		 * commands are typed or pasted one after the other): keep trying for a while */
		uint64_t until = trd_time_us() + 30000000;

		while ((plink = trd_link_ethdev(port, NULL)) == NULL && !server && !perf_stop &&
		       trd_time_us() < until)
			rte_delay_us_sleep(250000);
		if (plink == NULL)
			rc = -rte_errno;
	}
	if (rc != 0) {
		fprintf(stderr, "toroid-perf: cannot open net_memif (%s): %s\n", args,
			rte_strerror(-rc));
		return 1;
	}
	fprintf(stderr, "toroid-perf: %s waiting for the other process on %s\n", role, socket);
	dl = trd_time_us() + 60000000;
	do {
		rte_eth_link_get_nowait(port, &link);
	} while (link.link_status != RTE_ETH_LINK_UP && trd_time_us() < dl && !perf_stop);
	if (link.link_status != RTE_ETH_LINK_UP) {
		fprintf(stderr, "toroid-perf: the memif link did not come up\n");
		return 1;
	}
	perf_opt.links_label = "memif";
	if (server) {
		rc = raw_serve();
		if (rc == 0)
			rc = engine_setup(true);
		if (rc == 0)
			rc = engine_serve();
		if (rc != 0)
			fprintf(stderr, "toroid-perf: server: %s\n", strerror(-rc));
		for (int i = 0; i < 1000; i++)
			trd_node_poll(node); /* the last acks */
		trd_node_free(node);
		return rc != 0;
	}

	/* client: raw baselines first, on the same ports, for every test and size */
	memset(res, 0, sizeof(res));
	for (unsigned int t = 0; t < RTE_DIM(all); t++) {
		if (strcmp(test, "all") != 0 && strcmp(test, all[t]) != 0)
			continue;
		for (unsigned int z = 0; z < perf_opt.n_sizes && perf_opt.baseline; z++) {
			uint32_t size = perf_opt.sizes[z];
			uint32_t frame = TRD_FRAME_HLEN + RTE_MIN(size, 1444u);
			uint64_t n = perf_opt.iters ? perf_opt.iters : is_lat(all[t]) ? 10000 : 1000000;
			struct perf_result tmp;

			memset(&tmp, 0, sizeof(tmp));
			if (is_lat(all[t]))
				rc = raw_pingpong_test(frame, n, &tmp);
			else
				rc = raw_stream_test(frame, n, &tmp.mpps);
			if (rc == 0) {
				/* put and FIFO ping-pongs report half a round trip, the others
				 * a whole one: so does their baseline */
				bool half = strcmp(all[t], "put_lat") == 0 ||
					    strcmp(all[t], "fifo_lat") == 0;

				res[t][z].has_base = true;
				res[t][z].base = !is_lat(all[t]) ? tmp.mpps : half ? tmp.p50 : 2 * tmp.p50;
				res[t][z].base_gbps = tmp.mpps * (frame + 4) * 8 / 1000;
			}
		}
	}
	{
		struct rte_mbuf *m = raw_frame(RAW_ENGINE, 0, 60);

		if (m == NULL)
			return 1;
		raw_send(m);
		if (raw_recv(NULL, trd_time_us() + WAIT_US) != RAW_ENGINE_OK) {
			fprintf(stderr, "toroid-perf: the server did not answer\n");
			return 1;
		}
	}
	rc = engine_setup(false);
	if (rc != 0) {
		fprintf(stderr, "toroid-perf: client set-up: %s\n", strerror(-rc));
		return 1;
	}
	for (unsigned int t = 0; t < RTE_DIM(all) && !perf_stop; t++) {
		if (strcmp(test, "all") != 0 && strcmp(test, all[t]) != 0)
			continue;
		perf_print_header(is_lat(all[t]) ? K_LAT : K_RATE);
		for (unsigned int z = 0; z < perf_opt.n_sizes && !perf_stop; z++) {
			struct perf_result *r = &res[t][z];
			uint64_t n = perf_opt.iters ? perf_opt.iters : is_lat(all[t]) ? 10000 : 1000000;

			r->by_gbps = strstr(all[t], "_bw") != NULL;
			rc = is_lat(all[t]) ? lat_test(all[t], perf_opt.sizes[z], n, r)
					    : rate_test(all[t], perf_opt.sizes[z], n, r);
			if (rc != 0 && perf_stop)
				break; /* nothing measured of this one */
			if (rc != 0) {
				fprintf(stderr, "toroid-perf: %s %u: %s\n", all[t], perf_opt.sizes[z],
					strerror(rc < 0 ? -rc : rc));
				failed++;
				continue;
			}
			print_result(r);
		}
	}
	ctl_send(CTL_BYE, 0, 0, 0);
	for (int i = 0; i < 1000; i++)
		trd_node_poll(node); /* let the BYE and the last acks go */
	trd_node_free(node); /* stops and closes the port */
	return failed;
}
