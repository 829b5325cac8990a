/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receives matched against unexpected messages (docs/vni.md, "Matching"): a receive from one
 * source takes that source's first matching message in arrival order without looking at the
 * messages of other sources queued ahead of it; a receive from any source takes the first
 * matching one in arrival order. Node 0 of a 3x1x1 torus (in-process engines) and three
 * forked processes on it.
 *
 * Unexpected: 1:1 sends N messages of 8 bytes (tag 1, its sequence number) to 1:0, then 1:2
 * sends three (tags 1, 2, 3; the sequence numbers 100000 .. 100002), all staged before 1:0 posts
 * a receive. 1:0 then receives, byte-exact:
 *   from 1:2 with tag 2: 1:2's second message; from 1:2 with any tag: its first. These two
 *   look at 2 to 4 messages (match_walked; a single queue in arrival order: 2 N + 3);
 *   from any source with tag 3: 1:2's third; from any source with any tag: 1:1's first;
 *   from 1:1 with tag 1, N - 1 times: the rest, in order.
 * Posted: 1:0 posts M receives from 1:1 (tag 6), then from 1:2 (tag 6), from 1:1, any source
 * and 1:1 again (tag 7), any source and 1:2 (tag 8). 1:2 sends tags 6 and 8: its tag 6 takes
 * its own receive looking at 4 receives at most (M + 1 with one list), its tag 8 the
 * any-source receive posted before its own; then 1:1 sends three of tag 7, taken by the
 * three tag-7 receives in posting order, and M of tag 6, taken in order; 1:2's tag-8 receive
 * is left, and cancelled.
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
#define M     1000 /* posted receives from 1:1 ahead of 1:2's */
#define P_SEQ 200000u

static uint64_t *rbuf; /* the receiver's buffer, in its pool (not its own memory: the engine
			* would check the mapping at every receive) */

static struct trd_vni *
attach(uint32_t proc)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};

	vni_unpin();
	return trd_vni_open(&c);
}

/* What a sender sends: message i's sequence number and tag. */
struct plan {
	uint32_t proc;
	unsigned int n;
	uint64_t (*seq)(unsigned int i);
	uint64_t (*tag)(unsigned int i);
};

static uint64_t
u_seq(unsigned int i)
{
	return i;
}

static uint64_t
u_tag1(unsigned int i)
{
	(void)i;
	return 1;
}

static uint64_t
u_bseq(unsigned int i)
{
	return B_SEQ + i;
}

static uint64_t
u_btag(unsigned int i)
{
	return 1 + i;
}

/* posted, 1:2: tags 6 and 8 */
static uint64_t
p2_tag(unsigned int i)
{
	return i == 0 ? 6 : 8;
}

/* posted, 1:1: three of tag 7 (P_SEQ + 1 ..), then M of tag 6 (0 .. M - 1) */
static uint64_t
p1_seq(unsigned int i)
{
	return i < 3 ? P_SEQ + 1 + i : i - 3;
}

static uint64_t
p1_tag(unsigned int i)
{
	return i < 3 ? 7 : 6;
}

static uint64_t
p2_seq(unsigned int i)
{
	return P_SEQ + 10 + i;
}

static const struct plan u1 = {1, N, u_seq, u_tag1}, u2 = {2, 3, u_bseq, u_btag},
			 p1 = {1, 3 + M, p1_seq, p1_tag}, p2 = {2, 2, p2_seq, p2_tag};

/* A sender's plan to 1:0; exit 0 once all completed. */
static int
sender(void *arg)
{
	const struct plan *pl = arg;
	struct trd_vni *v = attach(pl->proc);
	struct trd_vni_addr to = {.app = 1, .proc = 0};
	unsigned int n = pl->n, done = 0;
	struct trd_vni_cpl c;

	if (v == NULL)
		return 10;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t seq = pl->seq(i);
		uint64_t tag = pl->tag(i);
		int rc;

		while ((rc = trd_vni_send(v, to, tag, &seq, sizeof(seq), -1, i)) == -EAGAIN) {
			if (vni_wait_one(v, &c, WAIT_US / 2) != 0)
				return 11;
			done++;
		}
		if (rc != 0)
			return 12;
	}
	while (done < n) {
		if (vni_wait_one(v, &c, WAIT_US / 2) != 0)
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
	rc = vni_wait_one(v, &c, WAIT_US / 2);
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
		return 24;
	for (uint64_t i = 1; i < N; i++)
		if (recv_one(v, 1, 1, false, i, 1, 1) != 0)
			return 25;
	trd_vni_close(v);
	return 0;
}

/* 1:0 in the posted phase: its receives posted, it says so (@p ready), waits for the go (@p go)
 * and checks every completion. */
static int
p_receiver(int ready, int go)
{
	/* cookie: 0 .. M - 1 from 1:1 tag 6; then 1:2 tag 6, 1:1 tag 7, any tag 7, 1:1 tag 7,
	 * any tag 8, 1:2 tag 8 */
	static const uint32_t src[6] = {2, 1, TRD_VNI_ANY, 1, TRD_VNI_ANY, 2};
	static const uint64_t tag[6] = {6, 7, 7, 7, 8, 8};
	static const uint64_t want[6] = {P_SEQ + 10, P_SEQ + 1,  P_SEQ + 2,
					 P_SEQ + 3,  P_SEQ + 11, 0};
	struct trd_vni_conf cf = {.socket = sock_path,
				  .app = 1,
				  .proc = 0,
				  .pool_size = 1 << 20,
				  .n_recv = M + 8,
				  .connect_timeout_ms = 5000};
	struct trd_vni *v;
	struct trd_vni_cpl c;
	uint64_t *buf;
	char ch = 'r';

	vni_unpin();
	v = trd_vni_open(&cf);
	if (v == NULL || (buf = trd_vni_alloc(v, (M + 6) * sizeof(*buf))) == NULL)
		return 30;
	for (unsigned int i = 0; i < M + 6; i++) {
		uint32_t from = i < M ? 1 : src[i - M];
		struct trd_vni_addr a = {.app = from == TRD_VNI_ANY ? TRD_VNI_ANY : 1,
					 .proc = from};
		uint64_t deadline = trd_time_us() + WAIT_US / 2;
		int rc;

		buf[i] = ~0ULL;
		while ((rc = trd_vni_recv(v, a, i < M ? 6 : tag[i - M], 0, &buf[i], sizeof(*buf),
					  -1, i)) == -EAGAIN &&
		       trd_time_us() < deadline)
			sched_yield();
		if (rc != 0)
			return 31;
	}
	if (write(ready, &ch, 1) != 1 || child_read(go, &ch, 1) != 0)
		return 32;
	for (unsigned int k = 0; k < M + 5; k++) {
		uint64_t i;

		if (vni_wait_one(v, &c, WAIT_US / 2) != 0 || c.kind != TRD_VNI_CPL_RECV ||
		    (i = c.cookie) >= M + 5 || buf[i] != (i < M ? i : want[i - M])) {
			fprintf(stderr, "posted: completion %u: cookie %llu, %llu\n", k,
				(unsigned long long)c.cookie,
				c.cookie < M + 6 ? (unsigned long long)buf[c.cookie] : 0ULL);
			return 33;
		}
	}
	/* 1:2's tag-8 receive: the any-source one posted before it took its message */
	if (trd_vni_cancel(v, M + 5) != 0 || vni_wait_one(v, &c, WAIT_US / 2) != -ECANCELED ||
	    c.cookie != M + 5 || buf[M + 5] != ~0ULL)
		return 34;
	trd_vni_close(v);
	return 0;
}

/* The posted phase (header): the walk of 1:2's two messages, at most 4 receives. */
static void
test_posted(void)
{
	int ready[2], go[2];
	uint64_t walked;
	pid_t rp;
	char ch;

	pipe_nb(ready);
	T_EQ(pipe(go), 0);
	rp = fork();
	T_ASSERT(rp >= 0, "fork: %s", strerror(errno));
	if (rp == 0)
		_exit(p_receiver(ready[1], go[0]));
	read_pipe(ready[0], &ch, 1);
	/* the receives are taken by the engine: every command of the process */
	pump_until_stat(TRD_VNI_SVC_STAT_RECVS, N + 3 + M + 6);
	walked = stat_of(TRD_VNI_SVC_STAT_MATCH_WALKED);
	reap_ok(spawn(sender, (void *)&p2), WAIT_US, "1:2");
	walked = stat_of(TRD_VNI_SVC_STAT_MATCH_WALKED) - walked;
	T_ASSERT(walked >= 2 && walked <= 4,
		 "1:2's two messages looked at %llu receives, want 2 .. 4",
		 (unsigned long long)walked);
	reap_ok(spawn(sender, (void *)&p1), WAIT_US, "1:1");
	T_EQ(write(go[1], "g", 1), 1);
	reap_ok(rp, WAIT_US, "1:0 (posted)");
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	printf("posted: %d receives from 1:1 ahead of 1:2's; its 2 messages looked at %llu\n", M,
	       (unsigned long long)walked);
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
	reap_ok(spawn(sender, (void *)&u1), WAIT_US, "1:1");
	reap_ok(spawn(sender, (void *)&u2), WAIT_US, "1:2");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_STAGED), (uint64_t)N + 3);
	walked = stat_of(TRD_VNI_SVC_STAT_MATCH_WALKED);
	T_EQ(write(go[1], "g", 1), 1);
	read_pipe(ready[0], &ch, 1);
	walked = stat_of(TRD_VNI_SVC_STAT_MATCH_WALKED) - walked;
	/* counted, and few: a walk that counts nothing must not pass */
	T_ASSERT(walked >= 2 && walked <= 4,
		 "two receives from 1:2 looked at %llu messages, want 2 .. 4",
		 (unsigned long long)walked);
	T_EQ(write(go[1], "g", 1), 1);
	reap_ok(rp, WAIT_US, "1:0");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_LATE_MATCHES), (uint64_t)N + 3);
	test_posted();
	printf("PASS: vni match (%d + 3 staged; 2 receives from the later source looked at %llu)\n",
	       N, (unsigned long long)walked);
	return 0;
}
