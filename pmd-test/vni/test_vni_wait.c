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
 */
#include <errno.h>
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

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s spin\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vni_setup("vwait", topo_text, 1024, &vc);
	if (strcmp(argv[1], "spin") == 0)
		test_spin();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni wait %s\n", argv[1]);
	return 0;
}
