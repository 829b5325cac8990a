/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-perf between two processes, on two hosts or on one: `--server` hosts node (1,0,0)
 * and answers, `--client` hosts node (0,0,0) and measures, each on one DPDK port (a NIC port,
 * net_af_packet on a veth, or the net_memif port that `--memif server|client` makes). Each
 * process is one thread that polls its own node (two busy threads in all), or, with
 * --cores 1, one more lcore serves the node.
 *
 * The client first finds its server (raw HELLO frames, repeated until one is answered), then
 * both start their nodes on those ports and the client runs the engine tests, telling the
 * server over a memory FIFO what to answer (-R: asking it to send); then, with --baseline, the
 * client measures raw DPDK on the same ports (frames of EtherType 0x88B6 that the server
 * echoes or counts, twoproc_raw.c) with frames of the size the engine's were, and says it is
 * done; the server waits for the next client. The server needs no options: the tests, sizes,
 * iterations, durations and rates are the client's. Rate figures are counted at the port.
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

#include <toroid/comb.h>
#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#include "perf_pvt.h"
#include "twoproc.h"

#define BUF    (8u << 20)
#define F_DATA 0 /* reception FIFO of test messages */
#define F_CTL  1 /* reception FIFO of commands and replies */
#define F_RES  2 /* -R: the server's result of a test it ran */
#define F_OUT  3 /* outcomes of tracked operations */

enum ctl_cmd {
	CTL_HELLO = 1,
	CTL_PUT_ECHO,
	CTL_FIFO_ECHO,
	CTL_IDLE,
	CTL_READY,
	CTL_BYE,
	CTL_REVERSE,
	CTL_COMB /* allreduce_lat: post key engine allreduces of size bytes, one after another */
};

struct ctl_msg {
	uint32_t cmd;
	uint32_t size;
	uint64_t key;             /* HELLO: the sender's region key */
	uint16_t ctr;             /* PUT_ECHO: the counter to decrement at the other side */
	uint8_t rate_bits, is_bw; /* REVERSE: --rate in bit/s; put_bw (else put_rate) */
	uint64_t n;               /* REVERSE: messages (0: --duration) */
	double duration_s, rate;  /* REVERSE: the client's --duration and --rate */
};

/* -R: what the server measured, sent back to the client (F_RES) */
struct rev_result {
	int32_t rc;
	char counted[16];
	struct perf_result r; /* its pointers are not used on the other side */
};

static int serve_reverse(const struct ctl_msg *c);

uint16_t tp_port;
static struct trd_link *plink; /* the memif port, set up once */
static struct trd_node *node;
static struct trd_mr *mr, *db;
static uint8_t *mem;
static uint64_t *bell;
static uint16_t ctr;
static uint64_t peer_key;
static struct trd_coord me, peer;
static unsigned int engine_lcore = RTE_MAX_LCORE; /* --cores 1: the lcore serving the node */

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
	/* a link of this node on the port set up once (plink owns it): freeing the node
	 * leaves the port up for the next client */
	l = trd_link_ethdev(tp_port, &(struct trd_link_conf){.no_setup = true});
	if (l == NULL)
		return -rte_errno;
	/* over IP: a switched link whose one peer has an address (the engine asks ARP for its
	 * next hop and answers for this side's address); else a direct cable */
	rc = trd_node_add_link(node, l, perf_opt.ip != 0 ? TRD_DIR_NONE : TRD_DIR_XP);
	if (rc != 0) {
		trd_link_free(l);
		return rc;
	}
	me = trd_node_coord(node);
	peer = (struct trd_coord){server ? 0 : 1, 0, 0};
	if (perf_opt.ip != 0 && (rc = tp_node_set_ip(node, peer)) != 0)
		return rc;
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

/* The server answers what the client asks, until BYE; a client that sends nothing for
 * --timeout seconds is gone (killed, unplugged): -ETIMEDOUT, and the server waits for the
 * next one. */
static int
engine_serve(void)
{
	struct ctl_msg c = {.cmd = CTL_IDLE};
	uint16_t their_ctr = 0;
	uint64_t heard = 0, heard_at = trd_time_us(), check = 0;
	uint64_t comb_left = 0; /* CTL_COMB: allreduces still to post */
	uint32_t comb_size = 0;
	bool comb_on = false; /* one posted, not completed */

	for (;;) {
		struct trd_msg *m;
		struct trd_desc d;
		int64_t v;

		if (perf_stop)
			return -EINTR;
		if (++check % 4096 == 0) {
			struct rte_eth_stats es;
			uint64_t now = trd_time_us();

			if (rte_eth_stats_get(tp_port, &es) == 0 && es.ipackets != heard) {
				heard = es.ipackets;
				heard_at = now;
			} else if (now - heard_at > perf_opt.timeout_us) {
				return -ETIMEDOUT;
			}
		}
		trd_node_poll(node);
		if (trd_rec_fifo_poll(trd_rec_fifo(node, F_CTL), &m, 1) == 1) {
			if (m->len == sizeof(c))
				memcpy(&c, m->data, sizeof(c));
			trd_msg_free(m);
			if (c.cmd == CTL_BYE) {
				ctl_send(CTL_READY, 0, 0, ctr);
				return 0;
			}
			if (c.cmd == CTL_REVERSE) {
				/* the client receives; this side sends and measures */
				int rc = serve_reverse(&c);

				c.cmd = CTL_IDLE;
				if (rc != 0)
					return rc;
				heard_at = trd_time_us();
				continue;
			}
			if (c.cmd == CTL_PUT_ECHO) {
				their_ctr = c.ctr;
				trd_counter_set(node, ctr, c.size);
			}
			if (c.cmd == CTL_COMB) {
				comb_left = c.key;
				comb_size = c.size;
				comb_on = false;
			}
			ctl_send(CTL_READY, 0, 0, ctr);
		}
		if (c.cmd == CTL_COMB && (comb_on || comb_left != 0)) {
			/* the client's allreduces, each posted here once the last completed */
			if (comb_on && trd_counter_read(node, ctr, &v) == 0 && v <= 0) {
				comb_on = false;
				if (v < 0)
					return -EIO;
			}
			if (!comb_on && comb_left != 0) {
				int rc = tp_comb_post(node, mem, ctr, comb_size);

				if (rc != 0)
					return rc;
				comb_on = true;
				comb_left--;
			}
		}
		if (c.cmd == CTL_FIFO_ECHO &&
		    trd_rec_fifo_poll(trd_rec_fifo(node, F_DATA), &m, 1) == 1) {
			trd_desc_fifo(&d, peer, F_DATA, mem, m->len, m->user, 0);
			trd_msg_free(m);
			while (trd_inject(trd_inj_fifo(node, 0), &d) == -ENOBUFS)
				trd_node_poll(node);
		} else if (c.cmd == CTL_PUT_ECHO && trd_counter_read(node, ctr, &v) == 0 &&
			   v == 0) {
			trd_counter_set(node, ctr, c.size);
			trd_desc_put(&d, peer, mem, c.size, peer_key, 0, 0, their_ctr);
			while (trd_inject(trd_inj_fifo(node, 0), &d) == -ENOBUFS)
				trd_node_poll(node);
		}
	}
}

/* Ask the server for @p cmd with a count @p n (in the key field), wait for its READY. */
static int
ask_n(uint32_t cmd, uint32_t size, uint64_t n)
{
	struct ctl_msg r;
	int rc = ctl_send(cmd, size, n, ctr);

	if (rc == 0)
		rc = ctl_recv(&r, WAIT_US);
	return rc == 0 && r.cmd != CTL_READY ? -EPROTO : rc;
}

static int
ask(uint32_t cmd, uint32_t size, uint16_t *their_ctr)
{
	struct ctl_msg r;
	int rc = ctl_send(cmd, size, 0, ctr);

	if (rc == 0) /* a server that ended may not answer its BYE */
		rc = ctl_recv(&r, cmd == CTL_BYE ? 2000000 : WAIT_US);
	if (rc == 0 && r.cmd != CTL_READY)
		rc = -EPROTO;
	if (rc == 0 && their_ctr != NULL)
		*their_ctr = r.ctr;
	return rc;
}

/* ---- the tests (their interval lines: twoproc_timing.c) ---- */

static int
lat_test(const char *name, uint32_t size, uint64_t n, struct perf_result *r)
{
	bool timed = perf_opt.duration_s > 0;
	uint64_t warm = timed ? 1000 : n / 10 + 1;
	uint64_t cap = timed ? warm + 65536 : warm + n;
	uint64_t *s = malloc(cap * sizeof(*s));
	uint32_t frame = TRD_FRAME_HLEN + size; /* the pace of --rate in bits: one frame each */
	double scale = strcmp(name, "put_lat") == 0 || strcmp(name, "fifo_lat") == 0 ? 0.5 : 1;
	struct timing tm = {0};
	uint16_t their = 0;
	int rc = 0;

	if (s == NULL)
		return -ENOMEM;
	if (strcmp(name, "put_lat") == 0)
		rc = ask(CTL_PUT_ECHO, size, &their);
	else if (strcmp(name, "allreduce_lat") == 0)
		/* the server posts as many as the client: a count, not --duration */
		rc = size > TRD_COMB_MAX_LEN ? -EMSGSIZE
		     : timed                 ? -ENOTSUP
					     : ask_n(CTL_COMB, size, warm + n);
	else if (strcmp(name, "fifo_lat") == 0)
		rc = ask(CTL_FIFO_ECHO, size, NULL);
	else
		rc = ask(CTL_IDLE, size, NULL);
	r->test = name;
	r->size = size;
	r->kind = K_LAT;
	uint64_t i, now = 0;

	for (i = 0; rc == 0 && !perf_stop; i++) {
		uint64_t t0;
		struct trd_desc d, c;
		struct trd_msg *m;

		if (i == warm)
			timing_start(&tm, perf_rate_mps(frame, 1),
				     trd_node_link(node, 0)); /* measured from here */
		if (i >= warm) {
			uint64_t j = i - warm;

			now = rte_rdtsc();
			if (tm.iv_len != 0 && now - tm.iv_t0 >= tm.iv_len)
				lat_interval(&tm, r, s, j, now, scale, frame);
			if (timed ? now >= tm.end : j >= n)
				break;
			/* --rate: a round trip starts no sooner than its turn */
			while (timing_allowed(&tm, now, j) <= j && !perf_stop) {
				if (engine_lcore == RTE_MAX_LCORE)
					trd_node_poll(node); /* the answers to acks meanwhile */
				now = rte_rdtsc();
			}
			if (perf_stop)
				break;
			if (j == cap) {
				uint64_t *g = realloc(s, 2 * cap * sizeof(*s));

				if (g == NULL) {
					rc = -ENOMEM;
					break;
				}
				s = g;
				cap *= 2;
			}
		}
		t0 = rte_rdtsc();
		if (strcmp(name, "put_lat") == 0) {
			trd_counter_set(node, ctr, size);
			trd_desc_put(&d, peer, mem, size, peer_key, 0, 0, their);
			rc = trd_inject(trd_inj_fifo(node, 0), &d);
			if (rc == 0)
				rc = trd_counter_wait(node, ctr, WAIT_US);
		} else if (strcmp(name, "fifo_lat") == 0) {
			trd_desc_fifo(&d, peer, F_DATA, mem, size, i, 0);
			rc = trd_inject(trd_inj_fifo(node, 0), &d);
			if (rc == 0 &&
			    (rc = trd_rec_fifo_wait(trd_rec_fifo(node, F_DATA), &m, WAIT_US)) == 0)
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
		} else if (strcmp(name, "allreduce_lat") == 0) {
			rc = tp_comb_post(node, mem, ctr, size);
			if (rc == 0)
				rc = trd_counter_wait(node, ctr, WAIT_US);
		} else { /* reflect_lat */
			struct trd_cpl_spec sp = {.kind = TRD_CPL_DOORBELL,
						  .mode = perf_opt.mode,
						  .doorbell = db,
						  .cookie = i + 1};

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
		r->interrupted = true;
		now = rte_rdtsc();
	}
	if (rc == 0) {
		uint64_t k = i - warm;

		/* the last, partial interval (if it is not a sliver) */
		if (tm.iv_len != 0 && k > tm.iv_n0 && now - tm.iv_t0 > tm.iv_len / 100)
			lat_interval(&tm, r, s, k, now, scale, frame);
		struct perf_tx tx;

		timing_summary(&tm);
		lat_stats(r, s, k, scale);
		r->seconds = timing_s(&tm, now);
		perf_rate_fill(r, frame, 1);
		perf_tx_read(tp_port, NULL, &tx);
		if (tm.t0 != 0 && tx.tsc > tm.tx0.tsc && tx.cpu_us >= tm.tx0.cpu_us)
			r->cpu_pct = (double)(tx.cpu_us - tm.tx0.cpu_us) * 1e-6 /
				     ((double)(tx.tsc - tm.tx0.tsc) / (double)tm.hz) * 100;
	}
	free(s);
	if (rc == 0 && !perf_stop)
		rc = ask(CTL_IDLE, 0, NULL);
	return rc;
}

/* Puts to the server as fast as the FIFO takes them (or at the pace of --rate), n of them or
 * for --duration; the last one asks for a DONE, which comes after every earlier one landed
 * (reliable, in order). An interval line counts the messages posted in it. */
static int
rate_test(const char *name, uint32_t size, uint64_t n, struct perf_result *r)
{
	unsigned int maxpay = trd_link_max_payload(trd_node_link(node, 0));
	uint64_t pkts_per = size == 0 ? 1 : (size + maxpay - 1) / maxpay;
	uint32_t frame = TRD_FRAME_HLEN + RTE_MIN(size, maxpay) + TRD_PROOF_LEN; /* + the token */
	uint64_t posted = 0, dl = trd_time_us() + perf_opt.timeout_us, now;
	bool timed = perf_opt.duration_s > 0;
	struct timing tm;
	struct trd_desc d[32];
	struct trd_msg *m;
	uint32_t id;
	int rc;

	if (size > BUF / 2)
		return -EMSGSIZE;
	for (int i = 0; i < 32; i++)
		trd_desc_put(&d[i], peer, mem, size, peer_key, (uint64_t)i * size % (BUF - size), 0,
			     0);
	r->test = name;
	r->size = size;
	r->kind = K_RATE;
	timing_start(&tm, perf_rate_mps(frame, pkts_per), trd_node_link(node, 0));
	/* the deadline is on progress, not on the run; SIGINT ends the stream early and the
	 * rate of what was posted (all of it acknowledged by the last DONE) is reported */
	for (;;) {
		uint64_t k, allowed;

		now = rte_rdtsc();
		if (tm.iv_len != 0 && now - tm.iv_t0 >= tm.iv_len)
			rate_interval(&tm, r, posted, now, pkts_per, frame, trd_node_link(node, 0));
		if (perf_stop || (timed ? now >= tm.end : posted + 1 >= n))
			break;
		k = RTE_MIN(32u, perf_opt.window);
		if (!timed)
			k = RTE_MIN(k, n - 1 - posted);
		allowed = timing_allowed(&tm, now, posted);
		if (allowed <= posted) {
			/* ahead of the pace: a waiting sender is not a stalled one */
			if (engine_lcore == RTE_MAX_LCORE)
				trd_node_poll(node);
			dl = trd_time_us() + perf_opt.timeout_us;
			continue;
		}
		k = RTE_MIN(k, allowed - posted);
		if (trd_inject_bulk(trd_inj_fifo(node, 0), d, (unsigned int)k) == 0) {
			posted += k;
			dl = trd_time_us() + perf_opt.timeout_us;
		} else {
			if (engine_lcore == RTE_MAX_LCORE)
				trd_node_poll(node);
			if (trd_time_us() > dl)
				return -ETIMEDOUT;
		}
	}
	if (perf_stop) {
		if (posted == 0)
			return -EINTR;
		r->interrupted = true;
	}
	if (tm.iv_len != 0 && posted > tm.iv_n0 && now - tm.iv_t0 > tm.iv_len / 100)
		rate_interval(&tm, r, posted, now, pkts_per, frame, trd_node_link(node, 0));
	n = posted + 1;
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
	timing_summary(&tm);
	rate_result(r, n, n * pkts_per, frame, rte_rdtsc() - tm.t0);
	{
		struct perf_tx tx;

		perf_tx_read(tp_port, trd_node_link(node, 0), &tx);
		perf_tx_rates(r, &tm.tx0, &tx);
	}
	perf_rate_fill(r, frame, pkts_per);
	line_pct(r);
	return rc;
}

/* -R, the server: run the client's rate test towards it with its options (checked: they
 * come from the wire), send the result back. 0, or -EINTR when stopped. */
static int
serve_reverse(const struct ctl_msg *c)
{
	static struct rev_result out; /* sent with TRD_DF_COPY */
	struct perf_opts save = perf_opt;
	struct trd_desc d;
	int rc;

	memset(&out, 0, sizeof(out));
	if (c->size > BUF / 2 || c->n > (1ULL << 40) || !(c->duration_s >= 0) ||
	    c->duration_s > 86400 || !(c->rate >= 0) || c->rate > 1e15 ||
	    (c->n == 0 && c->duration_s == 0)) {
		out.rc = -EINVAL;
	} else {
		perf_opt.duration_s = c->duration_s;
		perf_opt.rate = c->rate;
		perf_opt.rate_bits = c->rate_bits != 0;
		perf_opt.interval_s = 0;
		out.rc = rate_test(c->is_bw ? "put_bw" : "put_rate", c->size, c->n, &out.r);
		perf_opt = save;
	}
	if (out.r.counted != NULL)
		snprintf(out.counted, sizeof(out.counted), "%s", out.r.counted);
	out.r.test = NULL;
	out.r.counted = NULL;
	trd_desc_fifo(&d, peer, F_RES, &out, sizeof(out), 0, 0);
	d.flags |= TRD_DF_COPY;
	while ((rc = trd_inject(trd_inj_fifo(node, 1), &d)) == -ENOBUFS && !perf_stop)
		trd_node_poll(node);
	return perf_stop ? -EINTR : 0;
}

/* -R and --bidir, the client: ask the server to run @p name towards this node. */
static int
reverse_ask(const char *name, uint32_t size, uint64_t n)
{
	struct ctl_msg c = {.cmd = CTL_REVERSE,
			    .size = size,
			    .rate_bits = perf_opt.rate_bits,
			    .is_bw = strcmp(name, "put_bw") == 0,
			    .n = perf_opt.duration_s > 0 ? 0 : n,
			    .duration_s = perf_opt.duration_s,
			    .rate = perf_opt.rate};
	struct trd_desc d;
	int rc;

	trd_desc_fifo(&d, peer, F_CTL, &c, sizeof(c), CTL_REVERSE, 0);
	d.flags |= TRD_DF_COPY;
	while ((rc = trd_inject(trd_inj_fifo(node, 1), &d)) == -ENOBUFS && !perf_stop)
		trd_node_poll(node);
	return rc;
}

/* -R and --bidir, the client: wait for the server's result, receiving meanwhile; a wait fails
 * after --timeout without a frame received. */
static int
reverse_wait(const char *name, uint32_t size, struct perf_result *r)
{
	static const char *const where[] = {"port", "port+link", "link"};
	uint64_t heard = 0, heard_at = trd_time_us();
	struct rev_result out;
	struct trd_msg *m;
	int rc;

	for (;;) {
		struct rte_eth_stats es;

		rc = trd_rec_fifo_wait(trd_rec_fifo(node, F_RES), &m, 200000);
		if (rc == 0 || perf_stop)
			break;
		if (rte_eth_stats_get(tp_port, &es) == 0 && es.ipackets != heard) {
			heard = es.ipackets;
			heard_at = trd_time_us();
		} else if (trd_time_us() - heard_at > perf_opt.timeout_us) {
			return -ETIMEDOUT;
		}
	}
	if (rc != 0)
		return perf_stop ? -EINTR : rc;
	if (m->len != sizeof(out)) {
		trd_msg_free(m);
		return -EPROTO;
	}
	memcpy(&out, m->data, sizeof(out));
	trd_msg_free(m);
	if (out.rc != 0)
		return out.rc < 0 ? out.rc : -EPROTO;
	*r = out.r;
	r->test = name;
	r->size = size;
	r->kind = K_RATE;
	r->reverse = true;
	r->bidir = NULL;
	r->counted = NULL;
	for (unsigned int i = 0; i < RTE_DIM(where); i++)
		if (strncmp(out.counted, where[i], sizeof(out.counted)) == 0)
			r->counted = where[i];
	if (r->frames != 0 && r->counted == NULL)
		return -EPROTO;
	return 0;
}

/* -R, the client: the server runs @p name towards this node and reports. */
static int
reverse_test(const char *name, uint32_t size, uint64_t n, struct perf_result *r)
{
	int rc = reverse_ask(name, size, n);

	return rc != 0 ? rc : reverse_wait(name, size, r);
}

/* --bidir, the client: the server runs @p name towards this node while this one runs it
 * towards the server (iperf3's --bidir); each side measures what it sends, at its port: @p tx
 * is this side's, @p rx the server's, @p sum both added (the longer of the two times). */
static int
bidir_test(const char *name, uint32_t size, uint64_t n, struct perf_result *tx,
	   struct perf_result *rx, struct perf_result *sum)
{
	int rc = reverse_ask(name, size, n);

	if (rc == 0)
		rc = rate_test(name, size, n, tx);
	if (rc == 0)
		rc = reverse_wait(name, size, rx);
	if (rc != 0)
		return rc;
	tx->bidir = "tx";
	rx->bidir = "rx";
	rx->reverse = false;
	perf_result_sum(sum, tx, rx);
	sum->bidir = "sum";
	return 0;
}

static bool
is_lat(const char *t)
{
	return strstr(t, "_lat") != NULL;
}

/* --cores 1: an lcore serves the node from here on; the main lcore is the application */
static int
engine_launch(void)
{
	unsigned int l = rte_get_next_lcore(-1, 1, 0);
	int rc;

	if (perf_opt.cores == 0)
		return 0;
	if (l >= RTE_MAX_LCORE) {
		fprintf(stderr, "toroid-perf: --cores 1 needs a second lcore (e.g. -l 0-1)\n");
		return -EINVAL;
	}
	rc = trd_node_launch(node, l);
	if (rc == 0)
		engine_lcore = l;
	return rc;
}

static void
engine_end(void)
{
	if (engine_lcore < RTE_MAX_LCORE)
		trd_lcore_stop(engine_lcore);
	engine_lcore = RTE_MAX_LCORE;
	/* let the BYE, its answer and the last acks go (and be sent again if lost) */
	for (uint64_t until = trd_time_us() + 200000; trd_time_us() < until;)
		trd_node_poll(node);
	trd_node_free(node); /* the port stays up: plink owns it */
	node = NULL;
	rte_free(mem);
	rte_free(bell);
	mem = NULL;
	bell = NULL;
}

/* The port: the memif vdev made here, or the one EAL was given; configured and up. */
static int
open_port(bool server, const char *memif_socket, uint16_t port_id)
{
	const char *role = server ? "server" : "client";
	struct rte_eth_dev_info info;
	struct rte_eth_link link;
	char args[512] = "";
	uint64_t dl;
	int rc = 0;

	tp_port = port_id;
	if (memif_socket != NULL) {
		snprintf(args, sizeof(args), "role=%s,socket=%s", role, memif_socket);
		rc = rte_vdev_init("net_memif_perf", args);
		if (rc == 0)
			rc = rte_eth_dev_get_port_by_name("net_memif_perf", &tp_port);
	}
	if (rc == 0) {
		/* configure, start; a memif client cannot start before its server listens (the
		 * two commands are typed or pasted one after the other): keep trying a while */
		uint64_t until = trd_time_us() + 30000000;

		while ((plink = trd_link_ethdev(tp_port, NULL)) == NULL && !server && !perf_stop &&
		       trd_time_us() < until)
			rte_delay_us_sleep(250000);
		if (plink == NULL)
			rc = -rte_errno;
	}
	if (rc != 0) {
		if (memif_socket != NULL)
			fprintf(stderr, "toroid-perf: cannot open net_memif (%s): %s\n", args,
				rte_strerror(-rc));
		else
			fprintf(stderr, "toroid-perf: cannot start DPDK port %u: %s\n", tp_port,
				rte_strerror(-rc));
		return -1;
	}
	if (rte_eth_dev_info_get(tp_port, &info) == 0 && info.driver_name != NULL)
		perf_opt.links_label = strncmp(info.driver_name, "net_", 4) == 0
					       ? info.driver_name + 4
					       : info.driver_name;
	else
		perf_opt.links_label = "port";
	if (perf_opt.ip != 0)
		tp_ip_waiting(server, tp_port, perf_opt.links_label);
	else
		fprintf(stderr, "toroid-perf: %s on port %u (%s), waiting for the other process\n",
			role, tp_port, memif_socket != NULL ? memif_socket : perf_opt.links_label);
	dl = trd_time_us() + 60000000;
	for (uint64_t retry = trd_time_us() + 2000000;;) {
		rte_eth_link_get_nowait(tp_port, &link);
		if (link.link_status == RTE_ETH_LINK_UP || trd_time_us() >= dl || perf_stop)
			break;
		/* a memif client that connected between its server's listening socket and
		 * the server's start is turned away ("ID not found") and does not try again:
		 * restart it */
		if (!server && trd_time_us() > retry &&
		    strcmp(perf_opt.links_label, "memif") == 0) {
			rte_eth_dev_stop(tp_port);
			rte_eth_dev_start(tp_port);
			retry = trd_time_us() + 2000000;
		}
	}
	if (link.link_status != RTE_ETH_LINK_UP) {
		fprintf(stderr, "toroid-perf: the link of port %u did not come up\n", tp_port);
		return -1;
	}
	return 0;
}

/* Between two clients on memif: the driver unmaps the rings in its interrupt thread when the
 * peer closes, so a receive burst that runs at that moment reads unmapped memory (DPDK 22.11).
 * So the server does not poll until the finished client has closed (link down, at most 2 s)
 * and the next one has connected (link up). Other ports need no wait. */
static void
memif_next_client(void)
{
	struct rte_eth_link link;
	uint64_t until = trd_time_us() + 2000000;

	if (strcmp(perf_opt.links_label, "memif") != 0)
		return;
	do
		rte_eth_link_get_nowait(tp_port, &link);
	while (link.link_status == RTE_ETH_LINK_UP && trd_time_us() < until && !perf_stop);
	for (;;) {
		rte_eth_link_get_nowait(tp_port, &link);
		if (link.link_status == RTE_ETH_LINK_UP || perf_stop)
			return;
		rte_delay_us_sleep(1000);
	}
}

/* The server: answers client after client until SIGINT/SIGTERM (--one-off: one client). */
static int
serve(void)
{
	unsigned int served = 0;
	int rc;

	for (;;) {
		rc = raw_serve();
		if (rc == RAW_DONE) {
			served++;
			if (perf_opt.ip != 0)
				fprintf(stderr, "toroid-perf: client %u (" IPV4_FMT ") done%s\n",
					served, IPV4_ARGS(raw_peer_ip),
					perf_opt.one_off ? "" : "; waiting for the next one");
			else
				fprintf(stderr, "toroid-perf: client %u done%s\n", served,
					perf_opt.one_off ? "" : "; waiting for the next one");
			if (perf_opt.one_off)
				break;
			memif_next_client();
			continue;
		}
		if (rc != RAW_ENGINE)
			break;
		/* the server's side of the figures: what its port received while the engine ran
		 * (read before the end: some PMDs, memif, reset their counters on a reconnect) */
		struct rte_eth_stats e0, e1;
		int have = rte_eth_stats_get(tp_port, &e0);

		rc = engine_setup(true);
		if (rc == 0)
			rc = engine_launch();
		if (rc == 0)
			rc = engine_serve();
		if (have == 0 && rte_eth_stats_get(tp_port, &e1) == 0) {
			char who[32];

			snprintf(who, sizeof(who), "client %u: ", served + 1);
			tp_port_received(who, &e0, &e1);
		}
		if (node != NULL)
			engine_end();
		if (rc == -ETIMEDOUT) {
			served++; /* given up: the next one is another client */
			fprintf(stderr,
				"toroid-perf: client %u went quiet for %" PRIu64
				" s: waiting for the next one\n",
				served, perf_opt.timeout_us / 1000000);
			memif_next_client();
			continue;
		}
		if (rc != 0)
			break;
	}
	if (rc < 0 && !(rc == -EINTR && perf_stop))
		fprintf(stderr, "toroid-perf: server: %s\n", strerror(-rc));
	if (perf_stop) /* stopped between clients: a clean end */
		return 0;
	if (rc == RAW_DONE && strcmp(perf_opt.links_label, "memif") == 0) {
		/* the client closes first: two memif ends closing at once race in the driver's
		 * disconnect handling */
		struct rte_eth_link link;
		uint64_t until = trd_time_us() + 2000000;

		do
			rte_eth_link_get_nowait(tp_port, &link);
		while (link.link_status == RTE_ETH_LINK_UP && trd_time_us() < until && !perf_stop);
	}
	return rc == RAW_DONE ? 0 : 1;
}

int
perf_twoproc(bool server, const char *memif_socket, uint16_t port_id)
{
	static const char *const all[] = {"put_rate", "put_bw",      "put_lat",      "fifo_lat",
					  "get_lat",  "reflect_lat", "allreduce_lat"};
	static struct perf_result res[RTE_DIM(all)][PERF_MAX_SIZES];
	int failed = 0, rc;

	/* the packet pool first: without memory for it, the port would be blamed */
	if (trd_default_pool(0) == NULL) {
		fprintf(stderr, "toroid-perf: no packet pool: give EAL more memory (-m 1024)\n");
		return 1;
	}
	if (open_port(server, memif_socket, port_id) != 0)
		return 1;
	/* toroid-top sees the node of either side (/toroid/nodes) */
	trd_telemetry_init();
	if (server) {
		rc = serve();
		trd_link_free(plink);
		return rc;
	}

	/* client: find the server (it may start later, or run on another host) */
	if (perf_opt.ip != 0)
		raw_set_peer(perf_opt.peer_ip, perf_opt.udp_port);
	rc = raw_ask(RAW_HELLO, RAW_HELLO_OK, 60000000);
	if (rc != 0) {
		if (perf_opt.ip != 0 && !perf_stop)
			tp_ip_no_server(rc);
		else if (!perf_stop)
			fprintf(stderr, "toroid-perf: no server answered on port %u in 60 s\n",
				tp_port);
		trd_link_free(plink);
		return 1;
	}
	memset(res, 0, sizeof(res));
	rc = raw_ask(RAW_ENGINE, RAW_ENGINE_OK, WAIT_US);
	if (rc != 0) {
		if (!perf_stop)
			fprintf(stderr, "toroid-perf: the server did not answer\n");
		trd_link_free(plink);
		return 1;
	}
	struct rte_eth_stats e0, e1;
	int have = rte_eth_stats_get(tp_port, &e0);

	rc = engine_setup(false);
	if (rc == 0)
		rc = engine_launch();
	if (rc != 0) {
		fprintf(stderr, "toroid-perf: client set-up: %s\n", strerror(-rc));
		if (node != NULL)
			engine_end();
		trd_link_free(plink);
		return 1;
	}
	for (unsigned int t = 0; t < RTE_DIM(all) && !perf_stop; t++) {
		if (!perf_test_selected(all[t]))
			continue;
		/* with --baseline the results come after the raw run: a header here for the
		 * interval lines only */
		if (!perf_opt.baseline || perf_opt.interval_s > 0)
			perf_print_header(is_lat(all[t]) ? K_LAT : K_RATE);
		for (unsigned int z = 0; z < perf_opt.n_sizes && !perf_stop; z++) {
			struct perf_result *r = &res[t][z];
			uint64_t n = perf_opt.iters ? perf_opt.iters : perf_default_iters(all[t]);

			struct perf_result rx, sum;

			r->by_gbps = strstr(all[t], "_bw") != NULL;
			rc = is_lat(all[t])     ? lat_test(all[t], perf_opt.sizes[z], n, r)
			     : perf_opt.reverse ? reverse_test(all[t], perf_opt.sizes[z], n, r)
			     : perf_opt.bidir
				     ? bidir_test(all[t], perf_opt.sizes[z], n, r, &rx, &sum)
				     : rate_test(all[t], perf_opt.sizes[z], n, r);
			if (rc != 0) {
				r->test = NULL; /* nothing to print, no baseline */
				if (perf_stop)
					break; /* nothing measured of this one */
				fprintf(stderr, "toroid-perf: %s %u: %s\n", all[t],
					perf_opt.sizes[z], strerror(rc < 0 ? -rc : rc));
				failed++;
				continue;
			}
			if (!perf_opt.baseline)
				print_result(r);
			if (r->bidir != NULL) { /* --bidir: no baseline */
				print_result(&rx);
				print_result(&sum);
			}
		}
	}
	tp_comb_ratio(all, RTE_DIM(all), res);
	/* the server answers a BYE before it ends: it does not wait for a lost one forever */
	if (ask(CTL_BYE, 0, NULL) != 0 && !perf_stop)
		fprintf(stderr, "toroid-perf: the server did not acknowledge the end\n");
	/* -R, --bidir: this side's count of what the server's figures claim (as the server
	 * prints its own) */
	if ((perf_opt.reverse || perf_opt.bidir) && have == 0 &&
	    rte_eth_stats_get(tp_port, &e1) == 0)
		tp_port_received("", &e0, &e1);
	engine_end();
	if (perf_opt.baseline) {
		/* raw DPDK on the same port, once the server is back in its raw phase; then the
		 * figures beside their baseline */
		if (!perf_stop && raw_ask(RAW_HELLO, RAW_HELLO_OK, WAIT_US) == 0)
			client_baselines(all, RTE_DIM(all), res);
		for (unsigned int t = 0; t < RTE_DIM(all); t++) {
			bool header = false;

			for (unsigned int z = 0; z < perf_opt.n_sizes; z++) {
				if (res[t][z].test == NULL)
					continue;
				if (!header)
					perf_print_header(res[t][z].kind);
				header = true;
				print_result(&res[t][z]);
			}
		}
	}
	/* the server waits for the next client (or ends, --one-off); an interrupted client
	 * says so once and does not wait */
	if (perf_stop) {
		struct rte_mbuf *m = raw_frame(RAW_DONE, 0, 60);

		if (m != NULL && rte_eth_tx_burst(tp_port, 0, &m, 1) == 0)
			rte_pktmbuf_free(m);
	} else if (raw_ask(RAW_DONE, RAW_DONE_OK, WAIT_US) != 0 && !perf_stop) {
		fprintf(stderr, "toroid-perf: the server did not acknowledge the end\n");
	}
	trd_link_free(plink);
	return failed;
}
