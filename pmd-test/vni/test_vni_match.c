/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receives matched against unexpected messages (docs/vni.md, "Matching"): a receive from one
 * source takes that source's first matching message in arrival order without looking at the
 * messages of other sources queued ahead of it; a receive from any source takes the first
 * matching one in arrival order. Node 0 of a 3x1x1 torus (in-process engines) and three
 * forked processes on it.
 *
 * 1:1 sends N messages of 8 bytes (tag 1, its sequence number) to 1:0, then 1:2 sends three
 * (tags 1, 2, 3; the sequence numbers 100000 .. 100002), all staged before 1:0 posts a receive.
 * 1:0 then receives, byte-exact:
 *   from 1:2 with tag 2: 1:2's second message; from 1:2 with any tag: its first. These two
 *   look at 4 messages at most (match_walked; a single queue in arrival order: N + 3);
 *   from any source with tag 3: 1:2's third; from any source with any tag: 1:1's first;
 *   from 1:1 with tag 1, N - 1 times: the rest, in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_test.h"

#define N     4000
#define B_SEQ 100000u

static uint64_t *rbuf; /* the receiver's buffer, in its pool (not its own memory: the engine
			* would check the mapping at every receive) */

/* A forked child runs where EAL pinned the parent (CPU 0), beside the parent's busy pumping:
 * the processes go to the other CPUs, as an attached process runs off the engine's. */
static void
unpin(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (long c = 1; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	if (n > 1 && sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("sched_setaffinity");
}

static struct trd_vni *
attach(uint32_t proc)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};

	unpin();
	return trd_vni_open(&c);
}

/* One completion within half the parent's bound: its status, or -1000. */
static int
wait_one(struct trd_vni *v, struct trd_vni_cpl *c)
{
	uint64_t deadline = trd_time_us() + WAIT_US / 2;
	int n;

	while ((n = trd_vni_poll(v, c, 1)) == 0 && trd_time_us() < deadline)
		sched_yield();
	if (n != 1)
		return -1000;
	return c->status;
}

/* 1:1 (N messages, tag 1) or 1:2 (three, tags 1 .. 3) to 1:0; exit 0 once all completed. */
static int
sender(void *arg)
{
	uint32_t proc = (uint32_t)(uintptr_t)arg;
	struct trd_vni *v = attach(proc);
	struct trd_vni_addr to = {.app = 1, .proc = 0};
	unsigned int n = proc == 1 ? N : 3, done = 0;
	struct trd_vni_cpl c;

	if (v == NULL)
		return 10;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t seq = proc == 1 ? i : B_SEQ + i;
		uint64_t tag = proc == 1 ? 1 : 1 + i;
		int rc;

		while ((rc = trd_vni_send(v, to, tag, &seq, sizeof(seq), -1, i)) == -EAGAIN) {
			if (wait_one(v, &c) != 0)
				return 11;
			done++;
		}
		if (rc != 0)
			return 12;
	}
	while (done < n) {
		if (wait_one(v, &c) != 0)
			return 13;
		done++;
	}
	trd_vni_close(v);
	return 0;
}

/* One receive from @p src with @p tag (any with @p any_tag): 0 when it takes the message with
 * sequence number @p want and tag @p want_tag from @p want_proc. */
static int
recv_one(struct trd_vni *v, uint32_t src, uint64_t tag, bool any_tag, uint64_t want,
	 uint64_t want_tag, uint32_t want_proc)
{
	struct trd_vni_addr from = {.app = src == TRD_VNI_ANY ? TRD_VNI_ANY : 1, .proc = src};
	struct trd_vni_cpl c;
	uint64_t got;
	int rc;

	*rbuf = ~0ULL;
	if (trd_vni_recv(v, from, tag, any_tag ? TRD_VNI_ANY_TAG : 0, rbuf, sizeof(*rbuf), -1, 7) !=
	    0)
		return -1;
	rc = wait_one(v, &c);
	got = *rbuf;
	if (rc != 0 || c.kind != TRD_VNI_CPL_RECV || c.len != sizeof(got) || got != want ||
	    c.tag != want_tag || c.peer.proc != want_proc) {
		fprintf(stderr,
			"receive from %d tag %llu: got %llu (tag %llu from %u), want %llu\n",
			(int)src, (unsigned long long)tag, (unsigned long long)got,
			(unsigned long long)c.tag, c.peer.proc, (unsigned long long)want);
		return -1;
	}
	return 0;
}

/* 1:0: attaches, says so (@p ready), waits for the go (@p go), receives as the header says,
 * telling the parent between the first two receives and the others. */
static int
receiver(int ready, int go)
{
	struct trd_vni *v = attach(0);
	char ch = 'r';

	if (v == NULL || (rbuf = trd_vni_alloc(v, sizeof(*rbuf))) == NULL)
		return 20;
	if (write(ready, &ch, 1) != 1 || child_read(go, &ch, 1) != 0)
		return 21;
	if (recv_one(v, 2, 2, false, B_SEQ + 1, 2, 2) != 0 ||
	    recv_one(v, 2, 0, true, B_SEQ, 1, 2) != 0)
		return 22;
	if (write(ready, &ch, 1) != 1 || child_read(go, &ch, 1) != 0)
		return 23;
	if (recv_one(v, TRD_VNI_ANY, 3, false, B_SEQ + 2, 3, 2) != 0 ||
	    recv_one(v, TRD_VNI_ANY, 0, true, 0, 1, 1) != 0)
		return (fprintf(stderr, "phase 2\n"), 24);
	for (uint64_t i = 1; i < N; i++)
		if (recv_one(v, 1, 1, false, i, 1, 1) != 0)
			return (fprintf(stderr, "at %llu\n", (unsigned long long)i), 25);
	trd_vni_close(v);
	return 0;
}

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0, 1:1, 1:2\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;
	int ready[2], go[2];
	uint64_t walked;
	pid_t rp;
	char ch;

	(void)argc;
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.staging = 8 << 20; /* N + 3 blocks of 64 B in 1:0's share */
	vni_setup("match", topo_text, 1024, &vc);
	pipe_nb(ready);
	T_EQ(pipe(go), 0);
	rp = fork();
	T_ASSERT(rp >= 0, "fork: %s", strerror(errno));
	if (rp == 0)
		_exit(receiver(ready[1], go[0]));
	read_pipe(ready[0], &ch, 1);
	reap_ok(spawn(sender, (void *)(uintptr_t)1), WAIT_US, "1:1");
	reap_ok(spawn(sender, (void *)(uintptr_t)2), WAIT_US, "1:2");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_STAGED), (uint64_t)N + 3);
	walked = stat_of(TRD_VNI_SVC_STAT_MATCH_WALKED);
	T_EQ(write(go[1], "g", 1), 1);
	read_pipe(ready[0], &ch, 1);
	walked = stat_of(TRD_VNI_SVC_STAT_MATCH_WALKED) - walked;
	T_ASSERT(walked <= 4, "two receives from 1:2 looked at %llu messages, want 4 at most",
		 (unsigned long long)walked);
	T_EQ(write(go[1], "g", 1), 1);
	reap_ok(rp, WAIT_US, "1:0");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_LATE_MATCHES), (uint64_t)N + 3);
	printf("PASS: vni match (%d + 3 staged; 2 receives from the later source looked at %llu)\n",
	       N, (unsigned long long)walked);
	return 0;
}
