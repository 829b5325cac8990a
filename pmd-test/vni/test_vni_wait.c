/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How trd_vni_wait() waits (docs/vni.md, "Commands, completions, wake-ups"): it polls the
 * completion queue for trd_vni_conf::wait_spin_us before it arms the interface and sleeps on
 * the eventfd. One in-process VNI service (node 0 of a 3x1x1 torus over ring links); the
 * application is a forked child. Nothing here is timed: the engine's statistics tell whether
 * the application slept.
 *
 *   test_vni_wait spin   a process with a 1 s window sends 200 short messages to itself, one
 *                        at a time, and takes each receive and send with trd_vni_wait(): the
 *                        data arrives byte-exact and the engine never signalled the eventfd
 *                        (wakeups stays 0: no completion waited for a sleep); windows below
 *                        -1 or above TRD_VNI_WAIT_SPIN_MAX_US are refused (EINVAL)
 *   test_vni_wait signal a process that sleeps at once (window -1) arms its interface, then
 *                        sends a message to itself: the engine round (pumped one at a time)
 *                        that queues the first completion also signals the eventfd, once,
 *                        and the process finds it readable and takes both completions
 *   test_vni_wait kick   with the engine asleep (trd_vni_svc_sleep_begin), a receive is posted
 *                        without a kick (the engine's kick count stays put) and the send
 *                        after it kicks once; a receive followed by a poll kicks at the poll,
 *                        one followed by trd_vni_arm() at the arm; a receive while armed, one
 *                        with a doorbell and a probe at once: each message arrives byte-exact
 *                        (the doorbell rung once)
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_test.h"

#define N_MSGS 200
#define MSG    48

/* Take @p want completions with trd_vni_wait(); 0, or the failing step. */
static int
wait_n(struct trd_vni *v, unsigned int want, unsigned int *n_recv)
{
	struct trd_vni_cpl cpl[2];

	while (want > 0) {
		int n = trd_vni_wait(v, cpl, want, 20000);

		if (n <= 0)
			return 1;
		for (int i = 0; i < n; i++) {
			if (cpl[i].status != 0)
				return 2;
			if (cpl[i].kind == TRD_VNI_CPL_RECV)
				(*n_recv)++;
		}
		want -= (unsigned int)n;
	}
	return 0;
}

static int
spin_app(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .wait_spin_us = TRD_VNI_WAIT_SPIN_MAX_US};
	struct trd_vni_addr self = {.app = 1, .proc = 0};
	unsigned int n_recv = 0;
	struct trd_vni *v;
	uint8_t *buf;

	(void)arg;
	v = trd_vni_open(&c);
	if (v == NULL || (buf = trd_vni_alloc(v, MSG)) == NULL)
		return 10;
	for (unsigned int i = 0; i < N_MSGS; i++) {
		uint8_t msg[MSG];

		memset(msg, (int)(i & 0xff), sizeof(msg));
		memset(buf, 0, MSG);
		if (trd_vni_recv(v, self, 7, 0, buf, MSG, -1, 1) != 0 ||
		    trd_vni_send(v, self, 7, msg, sizeof(msg), -1, 2) != 0)
			return 11;
		if (wait_n(v, 2, &n_recv) != 0)
			return 12;
		if (memcmp(buf, msg, MSG) != 0)
			return 13;
	}
	if (n_recv != N_MSGS)
		return 14;
	trd_vni_close(v);
	return 0;
}

static void
test_spin(void)
{
	struct trd_vni_conf bad = {.socket = sock_path, .app = 1, .proc = 0};

	bad.wait_spin_us = -2;
	errno = 0;
	T_ASSERT(trd_vni_open(&bad) == NULL && errno == EINVAL, "a window of -2 us: errno %d",
		 errno);
	bad.wait_spin_us = TRD_VNI_WAIT_SPIN_MAX_US + 1;
	errno = 0;
	T_ASSERT(trd_vni_open(&bad) == NULL && errno == EINVAL, "a window over the most: errno %d",
		 errno);
	reap_ok(spawn(spin_app, NULL), WAIT_US, "the application");
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_WAKEUPS) == 0,
		 "%llu eventfd wake-ups: trd_vni_wait() slept within its polling window",
		 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_WAKEUPS));
}

/* Process 1:0 with a 1 MiB pool that sleeps at once in its waits; NULL if it cannot attach. */
static struct trd_vni *
sleeper_open(void)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .wait_spin_us = -1};

	return trd_vni_open(&c);
}

static int
signal_app(void *arg)
{
	struct trd_vni_addr self = {.app = 1, .proc = 0};
	uint8_t msg[MSG], *buf;
	unsigned int n_recv = 0;
	struct trd_vni_cpl cpl[2];
	struct pollfd pf;
	struct trd_vni *v;
	int n;

	(void)arg;
	v = sleeper_open();
	if (v == NULL || (buf = trd_vni_alloc(v, MSG)) == NULL)
		return 10;
	memset(msg, 0xa5, sizeof(msg));
	if (trd_vni_recv(v, self, 9, 0, buf, MSG, -1, 1) != 0 || trd_vni_arm(v) != 0 ||
	    trd_vni_send(v, self, 9, msg, sizeof(msg), -1, 2) != 0)
		return 11;
	pf.fd = trd_vni_fd(v);
	pf.events = POLLIN;
	pf.revents = 0;
	if (poll(&pf, 1, 20000) != 1 || !(pf.revents & POLLIN))
		return 12; /* no signal */
	n = trd_vni_poll(v, cpl, 2);
	if (n < 1)
		return 13; /* a signal without a completion */
	for (int i = 0; i < n; i++)
		n_recv += cpl[i].kind == TRD_VNI_CPL_RECV && cpl[i].status == 0;
	if (n == 1 && wait_n(v, 1, &n_recv) != 0)
		return 14;
	if (n_recv != 1 || memcmp(buf, msg, MSG) != 0)
		return 15;
	trd_vni_close(v);
	return 0;
}

static uint64_t
n_done(void)
{
	return stat_of(TRD_VNI_SVC_STAT_TX_DONE) + stat_of(TRD_VNI_SVC_STAT_RX_DONE);
}

static void
test_signal(void)
{
	pid_t pid = spawn(signal_app, NULL);
	uint64_t deadline = trd_time_us() + WAIT_US;
	bool seen = false;
	int st;

	while (waitpid(pid, &st, WNOHANG) != pid) {
		uint64_t done0 = n_done(), wk0 = stat_of(TRD_VNI_SVC_STAT_WAKEUPS);

		if (trd_time_us() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			T_ASSERT(0, "the application did not finish in time");
		}
		pump();
		if (!seen && n_done() > done0) {
			/* the first round that queued a completion for the armed interface */
			T_ASSERT(stat_of(TRD_VNI_SVC_STAT_WAKEUPS) == wk0 + 1,
				 "the round that queued the first completion signalled %llu times",
				 (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_WAKEUPS) - wk0));
			seen = true;
		}
	}
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the application ended with status %d",
		 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	T_ASSERT(seen, "no completion seen");
}

/* The kick test's steps: the child posts what step k asks, reports k, and waits for the
 * parent to look at the kick count and put the engine back to sleep. */
enum { K_RECV = 1, K_SEND, K_POLL, K_ARM, K_ARMED, K_DB, K_PROBE, K_STEPS };

static int kp_up[2], kp_down[2]; /* child -> parent, parent -> child */

static int
kick_step(uint8_t k)
{
	uint8_t go;

	if (write(kp_up[1], &k, 1) != 1 || child_read(kp_down[0], &go, 1) != 0)
		return -1;
	return 0;
}

static int
kick_app(void *arg)
{
	struct trd_vni_addr self = {.app = 1, .proc = 0};
	uint8_t msg[MSG], *buf, *buf2;
	unsigned int n_recv = 0;
	struct trd_vni_cpl cpl[2];
	struct trd_vni *v;

	(void)arg;
	v = sleeper_open();
	if (v == NULL || (buf = trd_vni_alloc(v, MSG)) == NULL ||
	    (buf2 = trd_vni_alloc(v, MSG)) == NULL || kick_step(0) != 0)
		return 10;
	memset(msg, 0x3c, sizeof(msg));
	memset(buf, 0, MSG);
	/* a receive, then a send: one kick, at the send */
	if (trd_vni_recv(v, self, 5, 0, buf, MSG, -1, 1) != 0 || kick_step(K_RECV) != 0)
		return 11;
	if (trd_vni_send(v, self, 5, msg, sizeof(msg), -1, 2) != 0 || kick_step(K_SEND) != 0)
		return 12;
	if (wait_n(v, 2, &n_recv) != 0 || n_recv != 1 || memcmp(buf, msg, MSG) != 0)
		return 13;
	/* a receive, then a poll that finds nothing: the poll kicks */
	memset(buf, 0, MSG);
	if (kick_step(K_RECV) != 0 || trd_vni_recv(v, self, 6, 0, buf, MSG, -1, 3) != 0 ||
	    trd_vni_poll(v, cpl, 2) != 0 || kick_step(K_POLL) != 0)
		return 14;
	/* a receive, then arm: the arm kicks */
	if (trd_vni_recv(v, self, 8, 0, buf + MSG / 2, MSG / 2, -1, 4) != 0 ||
	    trd_vni_arm(v) != 0 || kick_step(K_ARM) != 0)
		return 15;
	/* armed (a wait may sleep on it), a receive cannot wait for a poll: at once */
	if (trd_vni_recv(v, self, 10, 0, buf2, MSG / 2, -1, 8) != 0 || kick_step(K_ARMED) != 0)
		return 20;
	/* one that rings a doorbell, which may be watched in memory: at once */
	if (trd_vni_recv(v, self, 11, 0, buf2 + MSG / 2, MSG / 2, 0, 9) != 0 ||
	    kick_step(K_DB) != 0)
		return 21;
	/* a probe: at once; nothing is there to find */
	if (trd_vni_probe(v, self, 7, 0, 5) != 0 || kick_step(K_PROBE) != 0)
		return 16;
	if (trd_vni_wait(v, cpl, 1, 20000) != 1 || cpl[0].kind != TRD_VNI_CPL_RECV ||
	    cpl[0].status != -ENOMSG || cpl[0].cookie != 5)
		return 19;
	msg[0] = 0x77;
	if (trd_vni_send(v, self, 6, msg, sizeof(msg), -1, 6) != 0 ||
	    trd_vni_send(v, self, 8, msg, MSG / 2, -1, 7) != 0 ||
	    trd_vni_send(v, self, 10, msg, MSG / 2, -1, 10) != 0 ||
	    trd_vni_send(v, self, 11, msg, MSG / 2, -1, 11) != 0)
		return 17;
	n_recv = 0;
	for (int i = 0; i < 4; i++)
		if (wait_n(v, 2, &n_recv) != 0)
			return 18;
	if (n_recv != 4 || memcmp(buf2, msg, MSG / 2) != 0 ||
	    memcmp(buf2 + MSG / 2, msg, MSG / 2) != 0 || trd_vni_doorbell(v, 0) != 1 ||
	    memcmp(buf, msg, MSG / 2) != 0 || memcmp(buf + MSG / 2, msg, MSG / 2) != 0)
		return 18;
	trd_vni_close(v);
	return 0;
}

static void
test_kick(void)
{
	static const uint64_t want[K_STEPS] = {
		[K_RECV] = 0,  [K_SEND] = 1, [K_POLL] = 1, [K_ARM] = 1,
		[K_ARMED] = 1, [K_DB] = 1,   [K_PROBE] = 1};
	uint64_t k0 = 0;
	pid_t pid;

	pipe_nb(kp_up);
	T_EQ(pipe(kp_down), 0);
	pid = spawn(kick_app, NULL);
	/* the steps the child reports: attached, then K_RECV, K_SEND, K_RECV, K_POLL, K_ARM,
	 * K_ARMED, K_DB, K_PROBE; between two, the engine sleeps and is not pumped, so a receive
	 * stays in the command queue and the poll or the arm after it must kick */
	for (unsigned int i = 0; i < 9; i++) {
		uint8_t k, go = 1;

		/* the attach needs the engine; the steps must find it asleep (not pumped) */
		if (i == 0)
			read_pipe(kp_up[0], &k, 1);
		else
			T_ASSERT(child_read(kp_up[0], &k, 1) == 0, "no report after step %u", i);
		T_ASSERT(k < K_STEPS, "step %u", k);
		if (k != 0) {
			/* the round after a sleep reads the kick eventfd */
			trd_vni_svc_sleep_end(vs);
			for (int r = 0; r < 20; r++)
				pump();
			T_ASSERT(stat_of(TRD_VNI_SVC_STAT_KICKS) - k0 == want[k],
				 "step %u: %llu kicks, want %llu", k,
				 (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_KICKS) - k0),
				 (unsigned long long)want[k]);
		}
		/* asleep again for the next step: nothing is left to do */
		for (int r = 0; r < 1000 && trd_vni_svc_sleep_begin(vs) != 0; r++)
			pump();
		k0 = stat_of(TRD_VNI_SVC_STAT_KICKS);
		T_EQ(write(kp_down[1], &go, 1), 1);
	}
	trd_vni_svc_sleep_end(vs);
	reap_ok(pid, WAIT_US, "the application");
}

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s spin|signal|kick\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vni_setup("vwait", topo_text, 1024, &vc);
	if (strcmp(argv[1], "spin") == 0)
		test_spin();
	else if (strcmp(argv[1], "signal") == 0)
		test_signal();
	else if (strcmp(argv[1], "kick") == 0)
		test_kick();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni wait %s\n", argv[1]);
	return 0;
}
