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

static int
signal_app(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .wait_spin_us = -1};
	struct trd_vni_addr self = {.app = 1, .proc = 0};
	uint8_t msg[MSG], *buf;
	unsigned int n_recv = 0;
	struct trd_vni_cpl cpl[2];
	struct pollfd pf;
	struct trd_vni *v;
	int n;

	(void)arg;
	v = trd_vni_open(&c);
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

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s spin|signal\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vni_setup("vwait", topo_text, 1024, &vc);
	if (strcmp(argv[1], "spin") == 0)
		test_spin();
	else if (strcmp(argv[1], "signal") == 0)
		test_signal();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni wait %s\n", argv[1]);
	return 0;
}
