/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-vni-perf: application-to-application latency through the engine daemon (two plain
 * processes attached to toroid-node by virtual network interfaces) versus in-process use of
 * the engine (one process, memory-FIFO messages through the node's loopback).
 *
 *   toroid-vni-perf --mode vni --socket PATH [--peer-socket PATH] [--app A] [--procs P,Q]
 *                   [--sizes LIST] [--iters N] [--wait spin|yield|block] [--json]
 *   toroid-vni-perf [EAL options --] --mode inproc [--sizes LIST] [--iters N] [--json]
 *
 * vni: the program forks; the parent (A:P, on --socket) sends a message of each size to the
 * child (A:Q, on --peer-socket, default the same socket), which sends it back; one-way latency
 * is half the round trip. Both processes link only libtoroid_vni: no EAL, no hugepages.
 * inproc: one process, one node (1x1x1, no port), the same ping-pong as memory-FIFO messages
 * from injection FIFO 0 to reception FIFO 1 and back to reception FIFO 0, the node polled
 * inline by the waiting thread.
 * vni --stream: message rate instead: the parent sends --iters messages of each size with up to
 * --window sends outstanding; the child keeps STREAM_RECVS any-tag receives posted, checks that
 * the j-th receive got the j-th message, and answers the last one. --ordered makes both
 * interfaces ordered (trd_vni_conf.ordered, what FI_ORDER_SAS uses).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "../common/app_common.h"
#include "../common/latency.h"

#define PERF_MAX_SIZES 16
#define PERF_TAG       77
#define PERF_END_TAG   78             /* the ping's last message: the pong ends */
#define PERF_HELLO_TAG 79             /* the ping's first message: the pong is attached */
#define HELLO_WAIT_NS  30000000000ULL /* how long the ping asks for a pong that is not there */
#define PERF_MAX_ITERS 10000000u      /* samples of one size: 80 MB */
#define STREAM_RECVS   64             /* receives the stream's receiver keeps posted */
#define STREAM_MAX     (1u << 20)     /* a stream's largest message */

enum wait_how { W_SPIN, W_YIELD, W_BLOCK };

static struct {
	const char *mode;
	const char *socket;
	const char *peer_socket;
	uint32_t app;
	uint32_t procs[2];
	size_t sizes[PERF_MAX_SIZES];
	unsigned int n_sizes;
	unsigned int iters;
	unsigned int warmup;
	enum wait_how wait;
	int wait_spin_us; /* trd_vni_conf.wait_spin_us (0: the library's default) */
	bool json;
	bool stream, ordered;
	unsigned int window; /* --stream: sends outstanding */
	int role; /* 0: both (fork), 1: --server (the pong only), 2: --client (the ping only) */
} opt = {
	.mode = "vni",
	.app = 1,
	.procs = {0, 1},
	.iters = 10000,
	.warmup = 1000,
	.wait = W_SPIN,
	.window = 64,
};

/* SIGINT/SIGTERM: the signal, to stop the loops; the parent forwards it to the pong. */
static volatile sig_atomic_t perf_sig;
static volatile pid_t perf_child;

static void
on_signal(int sig)
{
	perf_sig = sig;
	if (perf_child > 0)
		kill(perf_child, sig);
}

static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocking wait returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Print one-way latency (half of each round trip) statistics for @p n samples. */
static void
report(const char *mode, size_t size, uint64_t *rtt, unsigned int n)
{
	struct app_lat l;

	if (n == 0)
		return;
	/* one-way: half of each round trip, in microseconds (samples are nanoseconds) */
	app_lat_summary(rtt, n, 1.0 / 2000.0, &l);
	/* the JSON keys of toroid-perf (docs/toroid-perf.md): one schema for both tools */
	if (opt.json)
		printf("{\"test\":\"%s_lat\",\"size\":%zu,\"links\":\"%s\",\"iters\":%u,"
		       "\"unit\":\"us\",\"min\":%.3f,\"avg\":%.3f,\"p50\":%.3f,\"p99\":%.3f,"
		       "\"p99_9\":%.3f,\"max\":%.3f,\"seconds\":%.3f%s%s%s}\n",
		       mode, size, strcmp(mode, "vni") == 0 ? "vni" : "loopback", n, l.min, l.avg,
		       l.p50, l.p99, l.p999, l.max, l.avg * 2000.0 * n / 1e9,
		       strcmp(mode, "vni") == 0 ? ",\"wait\":\"" : "",
		       strcmp(mode, "vni") != 0 ? ""
		       : opt.wait == W_SPIN     ? "spin\""
		       : opt.wait == W_YIELD    ? "yield\""
						: "block\"",
		       perf_sig ? ",\"interrupted\":true" : "");
	else
		printf("%-7s %8zu B  one-way latency us: min %7.2f  avg %7.2f  p50 %7.2f  p99 %7.2f  "
		       "p99.9 %7.2f  max %8.2f%s\n",
		       mode, size, l.min, l.avg, l.p50, l.p99, l.p999, l.max,
		       perf_sig ? "  (interrupted: " : "");
	if (!opt.json && perf_sig)
		printf("%u round trips)\n", n);
	fflush(stdout);
}

/* ---- through the engine daemon ---- */

static bool vni_forever; /* the server's pong waits for its client as long as it takes */

static int
vni_wait1(struct trd_vni *v, struct trd_vni_cpl *c)
{
	uint64_t deadline = vni_forever ? UINT64_MAX : now_ns() + 10000000000ULL;

	for (;;) {
		int n;

		if (perf_sig)
			return -EINTR;
		if (opt.wait == W_BLOCK) {
			/* in slices, so that a signal is seen; 10 s in all */
			n = trd_vni_wait(v, c, 1, 100);
			if (n != 0 && n != -EINTR && n != -ETIMEDOUT)
				return n;
		} else {
			n = trd_vni_poll(v, c, 1);
			if (n != 0)
				return n;
			if (opt.wait == W_YIELD)
				sched_yield();
		}
		if (now_ns() > deadline)
			return -ETIMEDOUT;
	}
}

/* Before the first measured message, the ping's 0-byte hello reaches the pong: a pong that
 * starts beside its ping (two commands run together) may attach after the engine gave up on
 * the first messages (its noproc timeout), and messages refused and sent again would reach
 * the stream's receiver out of order. The ping asks again while the answer is "no such
 * process", for up to HELLO_WAIT_NS; the pong takes the hello before it posts anything else. */
static int
vni_hello(struct trd_vni *v, struct trd_vni_addr peer, bool ping, uint8_t *buf)
{
	uint64_t deadline = now_ns() + HELLO_WAIT_NS;
	struct trd_vni_cpl c;
	int rc;

	if (!ping) {
		rc = trd_vni_recv(v, peer, PERF_HELLO_TAG, 0, buf, 0, -1, 0);
		while (rc == 0) {
			rc = vni_wait1(v, &c);
			if (rc >= 0)
				rc = c.kind == TRD_VNI_CPL_RECV ? c.status : 0;
			if (rc == 0 && c.kind == TRD_VNI_CPL_RECV)
				break;
		}
		return rc;
	}
	for (;;) {
		rc = trd_vni_send(v, peer, PERF_HELLO_TAG, buf, 0, -1, 0);
		while (rc == 0) {
			rc = vni_wait1(v, &c);
			if (rc >= 0 && c.kind == TRD_VNI_CPL_SEND) {
				rc = c.status;
				break;
			}
			if (rc >= 0)
				rc = 0;
		}
		if (rc != -ECONNREFUSED || now_ns() > deadline)
			return rc;
	}
}

/* Take the send and the receive completion of one step (in any order). */
static int
vni_step_done(struct trd_vni *v, struct trd_vni_cpl *rcv)
{
	bool got_send = false, got_recv = false;

	while (!got_send || !got_recv) {
		struct trd_vni_cpl c;
		int n = vni_wait1(v, &c);

		if (n < 0)
			return n;
		if (c.status != 0)
			return c.status;
		if (c.kind == TRD_VNI_CPL_SEND) {
			got_send = true;
		} else {
			got_recv = true;
			*rcv = c;
		}
	}
	return 0;
}

static int
vni_side(bool ping)
{
	struct trd_vni_conf conf = {
		.socket = ping ? opt.socket : (opt.peer_socket ? opt.peer_socket : opt.socket),
		.app = opt.app,
		.proc = opt.procs[ping ? 0 : 1],
		.connect_timeout_ms = 10000,
		.short_max = TRD_VNI_SHORT_MAX,
		.ordered = opt.ordered,
		.wait_spin_us = opt.wait_spin_us,
	};
	struct trd_vni_addr peer = {.app = opt.app, .proc = opt.procs[ping ? 1 : 0]};
	size_t max = 0;
	uint8_t *sb, *rb;
	uint64_t *rtt = NULL;
	struct trd_vni *v;
	int rc = 0;

	for (unsigned int k = 0; k < opt.n_sizes; k++)
		if (opt.sizes[k] > max)
			max = opt.sizes[k];
	conf.pool_size = 2 * max + (1 << 20);
	v = trd_vni_open(&conf);
	if (v == NULL) {
		fprintf(stderr, "toroid-vni-perf: %s cannot attach to %s as %u:%u: %s%s%s\n",
			ping ? "ping" : "pong", conf.socket, conf.app, conf.proc, strerror(errno),
			trd_vni_open_error()[0] ? ": " : "", trd_vni_open_error());
		return 1;
	}
	sb = trd_vni_alloc(v, max ? max : 1);
	rb = trd_vni_alloc(v, max ? max : 1);
	if (ping)
		rtt = calloc(opt.iters, sizeof(*rtt));
	if (sb == NULL || rb == NULL || (ping && rtt == NULL)) {
		fprintf(stderr, "toroid-vni-perf: %s: out of memory\n", ping ? "ping" : "pong");
		trd_vni_close(v);
		return 1;
	}
	memset(sb, 0x5a, max);
	/* Every receive is posted before the message it is for can be sent (the pong posts its
	 * next one before it answers), so nothing waits in the engine's staging. The pong
	 * answers each message with one as long, whatever its size (up to its own largest
	 * --sizes), until the ping's end message. */
	vni_forever = !ping && opt.role == 1;
	rc = vni_hello(v, peer, ping, sb);
	if (!ping && rc == 0) {
		rc = trd_vni_recv(v, peer, 0, TRD_VNI_ANY_TAG, rb, max, -1, 0);
		while (rc == 0) {
			struct trd_vni_cpl c;
			int n = vni_wait1(v, &c);

			if (n < 0)
				rc = n;
			else if (c.status != 0)
				rc = c.status;
			else if (c.kind == TRD_VNI_CPL_SEND)
				continue;
			else if (c.tag == PERF_END_TAG)
				break;
			else if ((rc = trd_vni_recv(v, peer, 0, TRD_VNI_ANY_TAG, rb, max, -1, 0)) ==
				 0)
				rc = trd_vni_send(v, peer, PERF_TAG, sb, c.len, -1, 0);
			vni_forever = false; /* a client that stops answering is gone */
		}
	}
	for (unsigned int k = 0; ping && k < opt.n_sizes && rc == 0; k++) {
		size_t len = opt.sizes[k];
		unsigned int total = opt.warmup + opt.iters; /* both bounded: no wrap */
		unsigned int i;

		for (i = 0; i < total && rc == 0; i++) {
			struct trd_vni_cpl c;
			uint64_t t0 = now_ns();

			rc = trd_vni_recv(v, peer, PERF_TAG, 0, rb, max, -1, 0);
			if (rc == 0)
				rc = trd_vni_send(v, peer, PERF_TAG, sb, len, -1, 0);
			if (rc == 0)
				rc = vni_step_done(v, &c);
			if (rc == 0 && c.len != len)
				rc = -EPROTO;
			if (rc == 0 && i >= opt.warmup)
				rtt[i - opt.warmup] = now_ns() - t0;
		}
		/* interrupted: what was measured of this size, marked so */
		if (ping && (rc == 0 || (perf_sig && i > opt.warmup + 1)))
			report("vni", len, rtt, rc == 0 ? opt.iters : i - 1 - opt.warmup);
	}
	if (ping && rc == 0) {
		/* the end message, and its completion (the pong has it) */
		struct trd_vni_cpl c;

		rc = trd_vni_send(v, peer, PERF_END_TAG, sb, 0, -1, 0);
		while (rc == 0) {
			int n = vni_wait1(v, &c);

			if (n < 0)
				rc = n;
			else if (c.kind == TRD_VNI_CPL_SEND)
				break;
		}
		if (rc == 0)
			rc = c.status;
	}
	if (rc != 0 && !perf_sig)
		fprintf(stderr, "toroid-vni-perf: %s: %s\n", ping ? "ping" : "pong", strerror(-rc));
	free(rtt);
	trd_vni_close(v);
	return perf_sig ? 128 + perf_sig : rc == 0 ? 0 : 1;
}

/* ---- --stream: the message rate of a one-way stream ---- */

static void
report_rate(size_t size, unsigned int n, uint64_t ns)
{
	double sec = (double)ns / 1e9, rate = n / sec;

	if (opt.json)
		printf("{\"test\":\"vni_stream\",\"size\":%zu,\"links\":\"vni\",\"msgs\":%u,"
		       "\"mpps\":%.6f,\"mbytes_per_s\":%.3f,\"seconds\":%.6f,\"ordered\":%s,"
		       "\"wait\":\"%s\"}\n",
		       size, n, rate / 1e6, rate * (double)size / 1e6, sec,
		       opt.ordered ? "true" : "false",
		       opt.wait == W_SPIN    ? "spin"
		       : opt.wait == W_YIELD ? "yield"
					     : "block");
	else {
		static bool header;

		if (!header)
			printf("%-12s %9s %10s %10s %10s  %s\n", "test", "size", "Mmsg/s", "MB/s",
			       "Gb/s", "(payload, one way)");
		header = true;
		printf("%-12s %9zu %10.4f %10.1f %10.3f  (%u messages, %s)\n", "vni_stream", size,
		       rate / 1e6, rate * (double)size / 1e6, rate * (double)size * 8 / 1e9, n,
		       opt.ordered ? "ordered" : "unordered");
	}
	fflush(stdout);
}

/* The receiver: every message of every size in order (receive j gets message j, its length
 * the size's), the last one of each size answered with a 0-byte message. */
static int
stream_recv(struct trd_vni *v, struct trd_vni_addr peer, uint8_t *rb, size_t max)
{
	unsigned int total = opt.warmup + opt.iters, n_all = total * opt.n_sizes;
	unsigned int posted = 0, got = 0, answers = 0;
	bool busy[STREAM_RECVS] = {false};
	int rc = 0;

	/* until every message came and every answer left (closing sooner may drop the last) */
	while ((got < n_all || answers != 0) && rc == 0) {
		struct trd_vni_cpl c;
		unsigned int j, k;

		while (posted < n_all && !busy[posted % STREAM_RECVS] && rc == 0) {
			rc = trd_vni_recv(v, peer, 0, TRD_VNI_ANY_TAG,
					  rb + (size_t)(posted % STREAM_RECVS) * max, max, -1,
					  posted);
			if (rc == -EAGAIN) {
				rc = 0;
				break;
			}
			busy[posted++ % STREAM_RECVS] = true;
		}
		if (rc != 0 || (rc = vni_wait1(v, &c)) < 0)
			break;
		rc = c.status;
		if (c.kind == TRD_VNI_CPL_SEND)
			answers--;
		if (rc != 0 || c.kind == TRD_VNI_CPL_SEND)
			continue;
		j = (unsigned int)c.cookie;
		k = j / total;
		if (c.tag != j % total || c.len != opt.sizes[k]) {
			fprintf(stderr,
				"toroid-vni-perf: receive %u got message %" PRIu64
				" of %u B: out of order\n",
				j, c.tag, c.len);
			return -EPROTO;
		}
		busy[j % STREAM_RECVS] = false;
		got++;
		if (j % total == total - 1 &&
		    (rc = trd_vni_send(v, peer, PERF_TAG, rb, 0, -1, 0)) == 0)
			answers++;
	}
	return rc;
}

/* The sender: --iters (after --warmup) messages of each size, --window outstanding; the rate
 * from the first measured send to the receiver's answer to the last. */
static int
stream_send(struct trd_vni *v, struct trd_vni_addr peer, uint8_t *sb, uint8_t *rb)
{
	unsigned int total = opt.warmup + opt.iters;
	int rc = 0;

	for (unsigned int k = 0; k < opt.n_sizes && rc == 0; k++) {
		unsigned int sent = 0, done = 0;
		bool answered = false;
		uint64_t t0 = now_ns();

		rc = trd_vni_recv(v, peer, PERF_TAG, 0, rb, 0, -1, 0);
		while (rc == 0 && (done < total || !answered)) {
			struct trd_vni_cpl c;

			while (sent < total && sent - done < opt.window) {
				if (sent == opt.warmup)
					t0 = now_ns();
				rc = trd_vni_send(v, peer, sent, sb, opt.sizes[k], -1, 0);
				if (rc == -EAGAIN) {
					rc = 0;
					break;
				}
				if (rc != 0)
					break;
				sent++;
			}
			if (rc != 0 || (rc = vni_wait1(v, &c)) < 0)
				break;
			rc = c.status;
			if (c.kind == TRD_VNI_CPL_SEND)
				done++;
			else
				answered = true;
		}
		if (rc == 0)
			report_rate(opt.sizes[k], opt.iters, now_ns() - t0);
	}
	return rc;
}

static int
stream_side(bool ping)
{
	struct trd_vni_conf conf = {
		.socket = ping ? opt.socket : (opt.peer_socket ? opt.peer_socket : opt.socket),
		.app = opt.app,
		.proc = opt.procs[ping ? 0 : 1],
		.connect_timeout_ms = 10000,
		.short_max = TRD_VNI_SHORT_MAX,
		.n_send = 4096,
		.n_recv = STREAM_RECVS + 1,
		.ordered = opt.ordered,
		.wait_spin_us = opt.wait_spin_us,
	};
	struct trd_vni_addr peer = {.app = opt.app, .proc = opt.procs[ping ? 1 : 0]};
	size_t max = 1;
	uint8_t *sb, *rb;
	struct trd_vni *v;
	int rc;

	for (unsigned int k = 0; k < opt.n_sizes; k++)
		if (opt.sizes[k] > max)
			max = opt.sizes[k];
	max = RTE_ALIGN_CEIL(max, 64);
	conf.pool_size = (STREAM_RECVS + 1) * max + (1 << 20);
	v = trd_vni_open(&conf);
	if (v == NULL) {
		fprintf(stderr, "toroid-vni-perf: %s cannot attach to %s as %u:%u: %s%s%s\n",
			ping ? "sender" : "receiver", conf.socket, conf.app, conf.proc,
			strerror(errno), trd_vni_open_error()[0] ? ": " : "", trd_vni_open_error());
		return 1;
	}
	sb = trd_vni_alloc(v, max);
	rb = trd_vni_alloc(v, ping ? max : STREAM_RECVS * max);
	if (sb == NULL || rb == NULL) {
		fprintf(stderr, "toroid-vni-perf: stream: out of memory\n");
		trd_vni_close(v);
		return 1;
	}
	memset(sb, 0x5a, max);
	vni_forever = !ping && opt.role == 1;
	rc = vni_hello(v, peer, ping, sb);
	vni_forever = false;
	if (rc == 0)
		rc = ping ? stream_send(v, peer, sb, rb) : stream_recv(v, peer, rb, max);
	if (rc != 0 && !perf_sig)
		fprintf(stderr, "toroid-vni-perf: %s: %s\n", ping ? "sender" : "receiver",
			strerror(-rc));
	trd_vni_close(v);
	return perf_sig ? 128 + perf_sig : rc == 0 ? 0 : 1;
}

static int
run_vni(void)
{
	pid_t child;
	int st = 0, rc;

	if (opt.socket == NULL) {
		fprintf(stderr, "toroid-vni-perf: --socket is required with --mode vni\n");
		return 2;
	}
	if (opt.role != 0) /* one side: the other runs elsewhere (another engine, host) */
		return opt.stream ? stream_side(opt.role == 2) : vni_side(opt.role == 2);
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		/* the pong ends with its parent, however the parent ends */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() == 1)
			_exit(1);
		_exit(opt.stream ? stream_side(false) : vni_side(false));
	}
	perf_child = child; /* signals to the parent are forwarded */
	rc = opt.stream ? stream_side(true) : vni_side(true);
	if (rc != 0)
		kill(child, SIGTERM);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	perf_child = 0;
	if (perf_sig)
		return 128 + perf_sig;
	return rc != 0 ? rc : (WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

/* ---- in-process ---- */

static int
inproc_wait(struct trd_rec_fifo *rf, uint32_t len)
{
	struct trd_msg *m;
	int rc = trd_rec_fifo_wait(rf, &m, 10000000);

	if (rc != 0)
		return rc;
	rc = m->len == len ? 0 : -EPROTO;
	trd_msg_free(m);
	return rc;
}

static int
run_inproc(int argc, char **argv)
{
	struct trd_node_conf nc = {
		.name = "perf", .n_inj_fifos = 1, .n_rec_fifos = 2, .inline_max = 960};
	struct trd_rec_fifo *r0, *r1;
	struct trd_node *node;
	struct trd_inj_fifo *f;
	struct trd_coord self;
	size_t max = 0;
	uint8_t *buf;
	uint64_t *rtt;
	int app_argc, rc = 0;
	char **app_argv;

	app_eal_init(argc, argv, "512", &app_argc, &app_argv);
	trd_torus_init(&nc.torus, 1, 1, 1);
	node = trd_node_create(&nc);
	if (node == NULL) {
		fprintf(stderr, "toroid-vni-perf: no node: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	self = trd_node_coord(node);
	f = trd_inj_fifo(node, 0);
	r0 = trd_rec_fifo(node, 0);
	r1 = trd_rec_fifo(node, 1);
	for (unsigned int k = 0; k < opt.n_sizes; k++)
		if (opt.sizes[k] > max)
			max = opt.sizes[k];
	buf = calloc(1, max ? max : 1);
	rtt = calloc(opt.iters, sizeof(*rtt));
	if (buf == NULL || rtt == NULL)
		rc = -ENOMEM;
	for (unsigned int k = 0; k < opt.n_sizes && rc == 0; k++) {
		uint32_t len = (uint32_t)opt.sizes[k];
		unsigned int i;

		for (i = 0; i < opt.warmup + opt.iters && rc == 0; i++) {
			struct trd_desc d;
			uint64_t t0 = now_ns();

			/* "A" sends to "B"'s FIFO 1, B answers into A's FIFO 0; the waits poll the
			 * node; a long message is read zero-copy until it is delivered */
			trd_desc_fifo(&d, self, 1, buf, len, 1, 0);
			rc = trd_inject(f, &d);
			if (rc == 0)
				rc = inproc_wait(r1, len);
			trd_desc_fifo(&d, self, 0, buf, len, 2, 0);
			if (rc == 0)
				rc = trd_inject(f, &d);
			if (rc == 0)
				rc = inproc_wait(r0, len);
			if (rc == 0 && perf_sig)
				rc = -EINTR;
			if (rc == 0 && i >= opt.warmup)
				rtt[i - opt.warmup] = now_ns() - t0;
		}
		if (rc == 0 || (perf_sig && i > opt.warmup + 1))
			report("inproc", len, rtt, rc == 0 ? opt.iters : i - 1 - opt.warmup);
	}
	if (rc != 0 && !perf_sig)
		fprintf(stderr, "toroid-vni-perf: in-process: %s\n", strerror(-rc));
	free(rtt);
	free(buf);
	trd_node_free(node);
	rte_eal_cleanup();
	return perf_sig ? 128 + perf_sig : rc == 0 ? 0 : 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: toroid-vni-perf --mode vni --socket PATH [--peer-socket PATH] [options]\n"
		"       toroid-vni-perf --mode vni --server --socket PATH [options]\n"
		"       toroid-vni-perf --mode vni --client --socket PATH [options]\n"
		"       toroid-vni-perf [EAL options --] --mode inproc [options]\n"
		"  --server          only the answering process (Q of --procs), on --socket: it\n"
		"                    answers each message with one as long (up to its largest\n"
		"                    --sizes) until the client ends; waits for the client\n"
		"  --client          only the measuring process (P of --procs), on --socket;\n"
		"                    the server runs on an engine of its own (another host)\n"
		"  --app A           application id of both processes (default 1)\n"
		"  --procs P,Q       process ids of ping and pong (default 0,1)\n"
		"  --sizes LIST      message sizes, 0..64M each (default 8,64,512,4K,64K)\n"
		"  --iters N         round trips measured per size, 1..%u (default 10000)\n"
		"  --warmup N        round trips before measuring, 0..%u (default 1000)\n"
		"  --wait HOW        vni: spin (poll), yield (poll, sched_yield) or block (eventfd)\n"
		"  --wait-spin-us N  --wait block: how long trd_vni_wait() polls before it sleeps,\n"
		"                    0..1000000 (0: sleeps at once; default: the library's, %u)\n"
		"  --stream          vni: message rate and bandwidth of a one-way stream instead:\n"
		"                    --iters messages per size (after --warmup), --window\n"
		"                    outstanding, received in order by %u any-tag receives\n"
		"                    (sizes up to 1M); --client sends, --server receives (give\n"
		"                    it the client's --sizes, --iters, --warmup)\n"
		"  --window N        --stream: sends outstanding, 1..4096 (default 64)\n"
		"  --ordered         vni: both interfaces ordered (trd_vni_conf.ordered)\n"
		"  --json            one JSON line per size (the keys of toroid-perf --json)\n"
		"SIGINT or SIGTERM stops both processes: what was measured of the current size is\n"
		"printed, marked interrupted, and the exit status is 128 + the signal.\n",
		PERF_MAX_ITERS, PERF_MAX_ITERS, TRD_VNI_WAIT_SPIN_DEFAULT_US, STREAM_RECVS);
}

/* --wait (@p c 'W') or --wait-spin-us ('Y') */
static void
parse_wait(int c, const char *arg)
{
	if (c == 'Y') {
		opt.wait_spin_us =
			(int)app_opt_u64("--wait-spin-us", arg, 0, TRD_VNI_WAIT_SPIN_MAX_US);
		if (opt.wait_spin_us == 0)
			opt.wait_spin_us = -1; /* sleeps at once */
	} else if (strcmp(arg, "block") == 0) {
		opt.wait = W_BLOCK;
	} else if (strcmp(arg, "yield") == 0) {
		opt.wait = W_YIELD;
	} else if (strcmp(arg, "spin") == 0) {
		opt.wait = W_SPIN;
	} else {
		app_usage_error("--wait: '%s' is not spin, yield or block", arg);
	}
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"mode", required_argument, NULL, 'm'},
		{"socket", required_argument, NULL, 's'},
		{"peer-socket", required_argument, NULL, 'p'},
		{"app", required_argument, NULL, 'a'},
		{"procs", required_argument, NULL, 'P'},
		{"sizes", required_argument, NULL, 'z'},
		{"iters", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},
		{"wait", required_argument, NULL, 'W'},
		{"wait-spin-us", required_argument, NULL, 'Y'},
		{"json", no_argument, NULL, 'j'},
		{"stream", no_argument, NULL, 'T'},
		{"window", required_argument, NULL, 'X'},
		{"ordered", no_argument, NULL, 'O'},
		{"server", no_argument, NULL, 'S'},
		{"client", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int app_argc, c;
	char **app_argv;

	/* "[EAL options] -- [options]" like the other apps; without "--", all are ours */
	app_split_args(argc, argv, &app_argc, &app_argv);
	opterr = 0;
	while ((c = getopt_long(app_argc, app_argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			opt.mode = optarg;
			break;
		case 's':
			opt.socket = optarg;
			break;
		case 'p':
			opt.peer_socket = optarg;
			break;
		case 'a':
			opt.app = (uint32_t)app_opt_u64("--app", optarg, 0, UINT32_MAX - 1);
			break;
		case 'P': {
			char *comma = strchr(optarg, ',');

			if (comma == NULL)
				app_usage_error("--procs: '%s' is not P,Q", optarg);
			*comma = '\0';
			opt.procs[0] = (uint32_t)app_opt_u64("--procs", optarg, 0, UINT32_MAX - 1);
			opt.procs[1] =
				(uint32_t)app_opt_u64("--procs", comma + 1, 0, UINT32_MAX - 1);
			*comma = ',';
			break;
		}
		case 'z': {
			char buf[256], *save = NULL, *tok;

			if (strlen(optarg) >= sizeof(buf))
				app_usage_error("--sizes: list too long");
			snprintf(buf, sizeof(buf), "%s", optarg);
			opt.n_sizes = 0;
			for (tok = strtok_r(buf, ",", &save); tok != NULL;
			     tok = strtok_r(NULL, ",", &save)) {
				if (opt.n_sizes == PERF_MAX_SIZES)
					app_usage_error("--sizes: at most %d sizes",
							PERF_MAX_SIZES);
				opt.sizes[opt.n_sizes++] =
					(size_t)app_opt_size("--sizes", tok, 0, 64u << 20);
			}
			if (opt.n_sizes == 0)
				app_usage_error("--sizes: empty list");
			break;
		}
		case 'n':
			opt.iters = (unsigned int)app_opt_u64("--iters", optarg, 1, PERF_MAX_ITERS);
			break;
		case 'w':
			opt.warmup =
				(unsigned int)app_opt_u64("--warmup", optarg, 0, PERF_MAX_ITERS);
			break;
		case 'W':
		case 'Y':
			parse_wait(c, optarg);
			break;
		case 'j':
			opt.json = true;
			break;
		case 'T':
			opt.stream = true;
			break;
		case 'X':
			opt.window = (unsigned int)app_opt_u64("--window", optarg, 1, 4096);
			break;
		case 'O':
			opt.ordered = true;
			break;
		case 'S':
		case 'C':
			if (opt.role != 0 && opt.role != (c == 'S' ? 1 : 2))
				app_usage_error("--server and --client exclude each other");
			opt.role = c == 'S' ? 1 : 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			app_getopt_error(c, app_argv);
		}
	}
	if (optind < app_argc)
		app_usage_error("unexpected argument '%s' (EAL options go before \"--\")",
				app_argv[optind]);
	if (opt.n_sizes == 0) {
		static const size_t def[] = {8, 64, 512, 4096, 65536};

		memcpy(opt.sizes, def, sizeof(def));
		opt.n_sizes = RTE_DIM(def);
	}
	if (strcmp(opt.mode, "vni") == 0) {
		if (argc != app_argc)
			app_usage_error("--mode vni starts no EAL: no EAL options");
		if (opt.socket == NULL)
			app_usage_error("--socket is required with --mode vni");
		for (unsigned int k = 0; opt.stream && k < opt.n_sizes; k++)
			if (opt.sizes[k] > STREAM_MAX)
				app_usage_error("--stream: sizes up to 1M");
		if (opt.role != 0 && opt.peer_socket != NULL)
			app_usage_error(
				"--peer-socket is for the two sides in one run: the %s uses "
				"--socket",
				opt.role == 1 ? "server" : "client");
		catch_signals();
		return run_vni();
	}
	if (strcmp(opt.mode, "inproc") == 0) {
		if (opt.role != 0 || opt.stream || opt.ordered)
			app_usage_error("--server, --client, --stream and --ordered are for --mode "
					"vni");
		catch_signals();
		return run_inproc(argc, argv);
	}
	app_usage_error("--mode: '%s' is not vni or inproc", opt.mode);
}
