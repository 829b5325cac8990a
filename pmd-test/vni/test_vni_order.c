/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ordered interfaces without a round trip per message (docs/vni.md, "Ordered interfaces").
 *
 *   test_vni_order lossy   2000 ordered sends of mixed sizes (eager, and long ones by RTS/CTS,
 *                          some longer than the receiver's staging share) from 1:0 on node 0
 *                          to 1:1 on node 1, two engines joined by links that lose, reorder,
 *                          duplicate and corrupt frames. The receiver starts late and keeps
 *                          few any-tag receives posted, so requests are staged, kept as
 *                          their header (at most 8: hdr_max), refused and parked; the j-th
 *                          receive must get message j, byte-exact with its tag and length;
 *                          the sending engine had many requests in flight
 *                          to its one destination at once (order_inflight_max), where a
 *                          round trip per message would have had 1
 *   test_vni_order restart  the sending process dies (SIGKILL) with a long ordered message
 *                          refused (hdr_max -1: no header-only acceptance) and 40 short
 *                          ones parked behind it; the engines recover
 *                          (the parked ones are refused and end; its interface is released)
 *                          and a new process with the same address starts a new stream: its
 *                          20 ordered messages, long and short, are received in send order
 *   test_vni_order forge   node 2 plays a hostile engine: ordered requests of one stream
 *                          before the window, past it, with an "oldest open" past the window,
 *                          with stream 0 and a duplicate of a parked one are dropped and
 *                          counted (order_dropped); the in-window ones are matched in number
 *                          order, the one that arrived early parked until its predecessor
 *
 * Two in-process engines (one VNI service per node) over ring links, pumped by this thread
 * (one busy-polling thread); applications are forked children using libtoroid_vni.
 * ORDER_OFF=1 in the environment makes the sender's interface unordered: lossy then fails
 * (a later message overtakes a refused one), which shows what it checks.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>
#include <toroid/vni_wire.h>

#define WAIT_US 120000000ULL /* a whole lossy run, bounded (before vni_test.h) */
#include "vni_test.h"

#define N_MSGS  2000
#define LONGEST 300000 /* longer than the receiver's staging share (256 KiB) */
#define N_RECVS 4      /* receives the receiver keeps posted */

/* Message i's length: eager (below the 512 B threshold), long of a few KiB, of tens of KiB, and
 * every 50th longer than the receiver's staging share. */
static uint32_t
msg_len(uint32_t i)
{
	if (i % 50 == 49)
		return LONGEST;
	switch (i % 10) {
	case 6:
	case 7:
		return 600 + (i * 131) % 8000;
	case 8:
		return 20000 + (i * 977) % 50000;
	default:
		return (i * 37) % 500;
	}
}

static uint8_t
pat(uint32_t i, uint32_t k)
{
	return (uint8_t)(i * 131 + k * 7 + (k >> 8) + 1);
}

/* ---- the applications ---- */

static int go_r = -1, go_w = -1; /* the receiver's start signal (a pipe), its two ends */

static int
sender(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 64 << 20,
				 .n_send = 256,
				 .connect_timeout_ms = 5000,
				 .ordered = getenv("ORDER_OFF") == NULL};
	struct trd_vni_addr dst = {.app = 1, .proc = 1};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t *bufs[N_MSGS] = {NULL};
	uint32_t posted = 0, done = 0;
	uint64_t deadline = trd_time_us() + WAIT_US;

	RTE_SET_USED(arg);

	if (v == NULL)
		return 10;
	while (done < N_MSGS) {
		struct trd_vni_cpl cpl[32];
		int n;

		while (posted < N_MSGS && posted - done < 200) {
			uint32_t len = msg_len(posted);
			uint8_t *b = trd_vni_alloc(v, len ? len : 1);
			int rc;

			if (b == NULL)
				break;
			for (uint32_t k = 0; k < len; k++)
				b[k] = pat(posted, k);
			rc = trd_vni_send(v, dst, posted, b, len, -1, posted);
			if (rc == -EAGAIN) {
				trd_vni_free(v, b);
				break;
			}
			if (rc != 0) {
				fprintf(stderr, "sender: send %u: %d\n", posted, rc);
				return 11;
			}
			bufs[posted++] = b;
		}
		n = trd_vni_wait(v, cpl, 32, 100);
		if (n == -ETIMEDOUT)
			n = 0;
		if (n < 0)
			return 12;
		for (int j = 0; j < n; j++) {
			uint64_t i = cpl[j].cookie;

			if (cpl[j].kind != TRD_VNI_CPL_SEND || i >= N_MSGS || bufs[i] == NULL) {
				fprintf(stderr, "sender: a completion for nothing sent\n");
				return 13;
			}
			if (cpl[j].status != 0 || cpl[j].len != msg_len((uint32_t)i)) {
				fprintf(stderr, "sender: message %u: status %d len %u\n",
					(unsigned)i, cpl[j].status, cpl[j].len);
				return 14;
			}
			trd_vni_free(v, bufs[i]);
			bufs[i] = NULL;
			done++;
		}
		if (trd_time_us() > deadline) {
			fprintf(stderr, "sender: %u of %u sends done in time\n", done, N_MSGS);
			return 15;
		}
	}
	trd_vni_close(v);
	return 0;
}

static int
receiver(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_n1,
				 .app = 1,
				 .proc = 1,
				 .pool_size = 16 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr src = {.app = 1, .proc = 0};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t *slot[N_RECVS];
	bool busy[N_RECVS] = {false};
	uint32_t posted = 0, got = 0;
	uint64_t deadline = trd_time_us() + WAIT_US;
	char b;

	RTE_SET_USED(arg);
	close(go_w); /* the parent's end of the start signal */

	if (v == NULL)
		return 20;
	for (unsigned int k = 0; k < N_RECVS; k++) {
		slot[k] = trd_vni_alloc(v, LONGEST);
		if (slot[k] == NULL)
			return 21;
	}
	/* attached; start when told (requests have been refused and parked by then) */
	if (read(go_r, &b, 1) != 1)
		return 22;
	while (got < N_MSGS) {
		struct trd_vni_cpl cpl[N_RECVS];
		int n;

		/* receive j goes into slot j % N_RECVS once receive j - N_RECVS completed
		 * (receives complete in any order); the j-th one posted must get message j */
		while (posted < N_MSGS && !busy[posted % N_RECVS]) {
			int rc = trd_vni_recv(v, src, 0, TRD_VNI_ANY_TAG, slot[posted % N_RECVS],
					      LONGEST, -1, posted);

			if (rc == -EAGAIN)
				break;
			if (rc != 0)
				return 23;
			busy[posted % N_RECVS] = true;
			posted++;
		}
		n = trd_vni_wait(v, cpl, N_RECVS, 100);
		if (n == -ETIMEDOUT)
			n = 0;
		if (n < 0)
			return 24;
		for (int j = 0; j < n; j++) {
			uint32_t i = (uint32_t)cpl[j].cookie;
			const uint8_t *p = cpl[j].buf;

			if (cpl[j].kind != TRD_VNI_CPL_RECV || cpl[j].status != 0 ||
			    cpl[j].tag != i || cpl[j].len != msg_len(i)) {
				fprintf(stderr,
					"receiver: receive %u got tag %llu (%u B, status %d): "
					"out of send order\n",
					i, (unsigned long long)cpl[j].tag, cpl[j].len,
					cpl[j].status);
				return 25;
			}
			for (uint32_t k = 0; k < cpl[j].len; k++)
				if (p[k] != pat(i, k)) {
					fprintf(stderr, "receiver: message %u byte %u differs\n", i,
						k);
					return 26;
				}
			busy[i % N_RECVS] = false;
			got++;
		}
		if (trd_time_us() > deadline) {
			fprintf(stderr, "receiver: %u of %u messages in time\n", got, N_MSGS);
			return 27;
		}
	}
	trd_vni_close(v);
	return 0;
}

static void
test_lossy(void)
{
	struct trd_impair_conf imp;
	uint64_t deadline, lost = 0, t0;
	int go[2], rc;
	pid_t ps, pr;

	T_EQ(trd_impair_parse("loss=2%,reorder=1%,dup=0.5%,corrupt=0.1%,seed=7", &imp), 0);
	for (unsigned int r = 0; r < 2; r++)
		T_EQ(trd_node_impair(nd[r], &imp), 0);
	T_EQ(pipe(go), 0);
	go_r = go[0];
	go_w = go[1];
	t0 = trd_time_us();
	pr = spawn(receiver, NULL);
	ps = spawn(sender, NULL);
	close(go[0]);
	/* let requests be staged, refused and parked before the first receive */
	deadline = trd_time_us() + 10000000;
	while ((stat_on(1, TRD_VNI_SVC_STAT_ORDER_PARKED) < 20 ||
		stat_on(1, TRD_VNI_SVC_STAT_NAK_SENT) < 1) &&
	       trd_time_us() < deadline)
		pump();
	T_EQ(write(go[1], "g", 1), 1);
	close(go[1]);
	rc = reap_child(ps, WAIT_US);
	T_ASSERT(rc == 0, "the sender failed (%d)", rc);
	rc = reap_child(pr, WAIT_US);
	T_ASSERT(rc == 0, "the receiver failed (%d): see its message", rc);
	for (unsigned int r = 0; r < 2; r++)
		for (unsigned int l = 0; l < trd_node_n_links(nd[r]); l++) {
			struct trd_link_stats ls;

			T_EQ(trd_link_stats_get(trd_node_link(nd[r], l), &ls), 0);
			lost += ls.imp_lost;
		}
	T_ASSERT(lost > 0, "the links lost no frame");
	T_ASSERT(stat_on(0, TRD_VNI_SVC_STAT_ORDER_INFLIGHT_MAX) >= 8,
		 "at most %llu ordered requests in flight at once: a round trip per message",
		 (unsigned long long)stat_on(0, TRD_VNI_SVC_STAT_ORDER_INFLIGHT_MAX));
	T_ASSERT(stat_on(1, TRD_VNI_SVC_STAT_ORDER_PARKED) > 0, "nothing was parked");
	T_ASSERT(stat_on(1, TRD_VNI_SVC_STAT_NAK_SENT) > 0, "nothing was refused");
	T_ASSERT(stat_on(1, TRD_VNI_SVC_STAT_STAGED) > 0, "nothing was staged");
	T_ASSERT(stat_on(1, TRD_VNI_SVC_STAT_HDR_ONLY) > 0, "nothing was kept as its header");
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_HDR_HELD), 0);
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_ORDER_DROPPED), 0);
	T_EQ(stat_on(0, TRD_VNI_SVC_STAT_BAD_REPLIES), 0);
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_BAD_WIRE), 0);
	T_EQ(stat_on(0, TRD_VNI_SVC_STAT_ERRORS), 0);
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_ERRORS), 0);
	printf("order lossy: %u ordered messages in send order, byte-exact, in %.2f s; up to "
	       "%llu in flight at once, %llu holds; receiver: %llu staged, %llu refused, %llu "
	       "parked, %llu parked refused; sender: %llu retries; %llu frames lost on the "
	       "links\n",
	       N_MSGS, (double)(trd_time_us() - t0) / 1e6,
	       (unsigned long long)stat_on(0, TRD_VNI_SVC_STAT_ORDER_INFLIGHT_MAX),
	       (unsigned long long)stat_on(0, TRD_VNI_SVC_STAT_ORDER_HOLDS),
	       (unsigned long long)stat_on(1, TRD_VNI_SVC_STAT_STAGED),
	       (unsigned long long)stat_on(1, TRD_VNI_SVC_STAT_NAK_SENT),
	       (unsigned long long)stat_on(1, TRD_VNI_SVC_STAT_ORDER_PARKED),
	       (unsigned long long)stat_on(1, TRD_VNI_SVC_STAT_ORDER_REFUSED),
	       (unsigned long long)stat_on(0, TRD_VNI_SVC_STAT_RETRIES), (unsigned long long)lost);
}

/* ---- restart: a sender dies mid-stream, a new one takes its address ---- */

#define OLD_TAG 0x200
#define NEW_TAG 0x100
#define N_NEW   20

/* The first incarnation of 1:0: a long message the receiver cannot stage, then 40 short ones
 * behind it, all ordered; then it waits to be killed. */
static int
old_sender(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 4 << 20,
				 .connect_timeout_ms = 5000,
				 .ordered = true};
	struct trd_vni_addr dst = {.app = 1, .proc = 1};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t *b = v == NULL ? NULL : trd_vni_alloc(v, LONGEST);

	RTE_SET_USED(arg);

	if (b == NULL)
		return 40;
	memset(b, 0xee, LONGEST);
	if (trd_vni_send(v, dst, OLD_TAG, b, LONGEST, -1, 0) != 0)
		return 41;
	for (unsigned int i = 1; i <= 40; i++)
		if (trd_vni_send(v, dst, OLD_TAG | i, b, 100, -1, i) != 0)
			return 42;
	for (;;)
		pause();
}

/* The second incarnation: N_NEW ordered messages, long and short, byte-exact. */
static int
new_sender(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 8 << 20,
				 .connect_timeout_ms = 5000,
				 .ordered = true};
	struct trd_vni_addr dst = {.app = 1, .proc = 1};
	struct trd_vni *v = trd_vni_open(&c);
	uint64_t deadline = trd_time_us() + 60000000;
	unsigned int done = 0;

	RTE_SET_USED(arg);

	if (v == NULL)
		return 50;
	for (uint32_t i = 0; i < N_NEW; i++) {
		uint32_t len = msg_len(i + 40); /* 300 000 B first (i + 40 = 49), then mixed */
		uint8_t *b = trd_vni_alloc(v, len ? len : 1);

		if (b == NULL)
			return 51;
		for (uint32_t k = 0; k < len; k++)
			b[k] = pat(i, k);
		if (trd_vni_send(v, dst, NEW_TAG | i, b, len, -1, i) != 0)
			return 52;
	}
	while (done < N_NEW && trd_time_us() < deadline) {
		struct trd_vni_cpl cpl;
		int n = trd_vni_wait(v, &cpl, 1, 100);

		if (n == 1 && (cpl.kind != TRD_VNI_CPL_SEND || cpl.status != 0)) {
			fprintf(stderr, "new sender: send %llu: status %d\n",
				(unsigned long long)cpl.cookie, cpl.status);
			return 53;
		}
		if (n == 1)
			done++;
	}
	trd_vni_close(v);
	return done == N_NEW ? 0 : 54;
}

/* 1:1 takes the new incarnation's messages (tags NEW_TAG | i) with masked receives, one at a
 * time once told: the j-th must be message j. */
static int
restart_receiver(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_n1,
				 .app = 1,
				 .proc = 1,
				 .pool_size = 4 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr src = {.app = 1, .proc = 0};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t *b = v == NULL ? NULL : trd_vni_alloc(v, LONGEST);
	uint64_t deadline = trd_time_us() + 60000000;
	char g;

	RTE_SET_USED(arg);
	close(go_w); /* the parent's end of the start signal */

	if (b == NULL)
		return 60;
	if (read(go_r, &g, 1) != 1)
		return 61;
	for (uint32_t j = 0; j < N_NEW; j++) {
		struct trd_vni_cpl cpl;
		int n = 0;

		if (trd_vni_recv_mask(v, src, NEW_TAG, 0xff, b, LONGEST, -1, j) != 0)
			return 62;
		while (n != 1 && trd_time_us() < deadline)
			n = trd_vni_wait(v, &cpl, 1, 100);
		if (n != 1 || cpl.status != 0 || cpl.tag != (NEW_TAG | j) ||
		    cpl.len != msg_len(j + 40)) {
			fprintf(stderr,
				"restart receiver: receive %u: tag 0x%llx len %u status %d\n", j,
				(unsigned long long)cpl.tag, cpl.len, cpl.status);
			return 63;
		}
		for (uint32_t k = 0; k < cpl.len; k++)
			if (b[k] != pat(j, k))
				return 64;
	}
	trd_vni_close(v);
	return 0;
}

static void
pump_until(unsigned int n, enum trd_vni_svc_stat k, uint64_t want, const char *what)
{
	uint64_t deadline = trd_time_us() + 20000000;

	while (stat_on(n, k) < want && trd_time_us() < deadline)
		pump();
	T_ASSERT(stat_on(n, k) >= want, "%s: %s %llu, want %llu", what, trd_vni_svc_stat_name(k),
		 (unsigned long long)stat_on(n, k), (unsigned long long)want);
}

static void
test_restart(void)
{
	uint64_t deadline;
	int go[2], rc;
	pid_t old, fresh, pr;

	T_EQ(pipe(go), 0);
	go_r = go[0];
	go_w = go[1];
	pr = spawn(restart_receiver, NULL);
	close(go[0]);
	pump_until(1, TRD_VNI_SVC_STAT_ATTACHED, 1, "the receiver attaches");
	old = spawn(old_sender, NULL);
	pump_until(1, TRD_VNI_SVC_STAT_ORDER_PARKED, 40, "the short ones parked");
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_STAGED), 0); /* none overtook the long one */
	T_EQ(kill(old, SIGKILL), 0);
	T_EQ(waitpid(old, &rc, 0), old);
	/* the engines end the dead interface: its parked messages are refused, asked again
	 * (the long one ended: they are matched, staged) and end; nothing stays attached */
	pump_until(0, TRD_VNI_SVC_STAT_DETACHED, 1, "the sender's death is seen");
	deadline = trd_time_us() + 20000000;
	while (trd_vni_svc_n_ifs(vs) != 0 && trd_time_us() < deadline)
		pump();
	T_EQ(trd_vni_svc_n_ifs(vs), 0);
	fresh = spawn(new_sender, NULL);
	T_EQ(write(go[1], "g", 1), 1);
	close(go[1]);
	rc = reap_child(fresh, 60000000);
	T_ASSERT(rc == 0, "the new sender failed (%d)", rc);
	rc = reap_child(pr, 60000000);
	T_ASSERT(rc == 0, "the receiver failed (%d)", rc);
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_ORDER_DROPPED), 0);
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_BAD_WIRE), 0);
	printf("order restart: a sender killed with 40 requests parked; its interface released "
	       "(%llu parked requests refused); a new process at its address sent %u ordered "
	       "messages, received in order\n",
	       (unsigned long long)stat_on(1, TRD_VNI_SVC_STAT_ORDER_REFUSED), N_NEW);
}

/* ---- forge: node 2 sends ordered requests by hand ---- */

#define FORGED_STREAM 0x5eed

/* An ordered EAGER from 1:5 (node 2) to 1:1, tag = seq, 8 bytes of data; pump until the
 * receiving engine's counter @p k reaches @p want (bounded), then a little more. */
static void
forge(uint32_t stream, uint32_t seq, uint32_t back, enum trd_vni_svc_stat k, uint64_t want)
{
	uint64_t deadline = trd_time_us() + 5000000;
	uint8_t w[TRD_VW_HDR_LEN + 8];
	struct trd_vw_hdr h;
	struct trd_desc d;

	memset(&h, 0, sizeof(h));
	h.type = TRD_VW_EAGER;
	h.flags = TRD_VW_F_ORDERED;
	h.status = (int32_t)back;
	h.src_app = 1;
	h.src_proc = 5;
	h.dst_app = 1;
	h.dst_proc = 1;
	h.msg_id = 0x10000 | seq;
	h.key = 0x1234;
	h.len = 8;
	h.tag = seq;
	h.roff = TRD_VW_ORD(stream, seq);
	trd_vw_encode(w, &h);
	memset(w + TRD_VW_HDR_LEN, (int)(seq & 0xff), 8);
	trd_desc_fifo(&d, trd_node_coord(nd[1]), 0, w, sizeof(w), TRD_VW_USER(h.type), 0);
	T_EQ(trd_inject(trd_inj_fifo(nd[2], 0), &d), 0);
	while (stat_on(1, k) < want && trd_time_us() < deadline)
		pump();
	for (int i = 0; i < 200; i++)
		pump();
	T_ASSERT(stat_on(1, k) == want, "request %u of stream %u (back %u): %s %llu, want %llu",
		 seq, stream, back, trd_vni_svc_stat_name(k), (unsigned long long)stat_on(1, k),
		 (unsigned long long)want);
}

static int
forge_receiver(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_n1,
				 .app = 1,
				 .proc = 1,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr src = {.app = 1, .proc = 5};
	struct trd_vni *v = trd_vni_open(&c);
	static const uint64_t want[] = {100, 101, 102, 103};
	uint64_t deadline = trd_time_us() + 20000000;
	uint8_t *b;
	char g;

	RTE_SET_USED(arg);
	close(go_w); /* the parent's end of the start signal */

	if (v == NULL || (b = trd_vni_alloc(v, 64)) == NULL)
		return 30;
	if (read(go_r, &g, 1) != 1)
		return 31;
	for (unsigned int j = 0; j < RTE_DIM(want); j++) {
		struct trd_vni_cpl cpl;
		int n = 0;

		if (trd_vni_recv(v, src, 0, TRD_VNI_ANY_TAG, b, 64, -1, j) != 0)
			return 32;
		while (n <= 0 && trd_time_us() < deadline)
			n = trd_vni_wait(v, &cpl, 1, 100);
		if (n != 1 || cpl.status != 0 || cpl.tag != want[j] || cpl.len != 8 ||
		    b[0] != (uint8_t)want[j]) {
			fprintf(stderr, "forge receiver: receive %u: tag %llu, want %llu\n", j,
				(unsigned long long)cpl.tag, (unsigned long long)want[j]);
			return 33;
		}
	}
	trd_vni_close(v);
	return 0;
}

static void
test_forge(void)
{
	uint64_t deadline, d0;
	int go[2];
	pid_t pr;

	T_EQ(pipe(go), 0);
	go_r = go[0];
	go_w = go[1];
	pr = spawn(forge_receiver, NULL);
	close(go[0]);
	deadline = trd_time_us() + 10000000;
	while (stat_on(1, TRD_VNI_SVC_STAT_ATTACHED) < 1 && trd_time_us() < deadline)
		pump();
	T_ASSERT(stat_on(1, TRD_VNI_SVC_STAT_ATTACHED) >= 1, "the receiver did not attach");
	d0 = stat_on(1, TRD_VNI_SVC_STAT_ORDER_DROPPED);
#define DROPPED(n) TRD_VNI_SVC_STAT_ORDER_DROPPED, d0 + (n)
	forge(FORGED_STREAM, 100, 0, TRD_VNI_SVC_STAT_STAGED, 1); /* opens the stream: staged */
	forge(FORGED_STREAM, 102, 1, TRD_VNI_SVC_STAT_ORDER_PARKED, 1); /* ahead of 101 */
	forge(FORGED_STREAM, 99, 0, DROPPED(1));                /* before the window: a replay */
	forge(FORGED_STREAM, 100, 0, DROPPED(2));               /* matched already */
	forge(FORGED_STREAM, 101 + 64, 0, DROPPED(3));          /* past the window */
	forge(FORGED_STREAM, 0x80000000u + 101, 0, DROPPED(4)); /* far past it */
	forge(FORGED_STREAM, 103, 64, DROPPED(5));              /* "oldest open" past the window */
	forge(FORGED_STREAM, 103, 0xffffffffu, DROPPED(6));     /* ... far past it */
	forge(0, 101, 0, DROPPED(7));                           /* stream 0 */
	forge(FORGED_STREAM, 102, 1, DROPPED(8));               /* a duplicate of the parked one */
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_STAGED), 1);           /* none of them went anywhere */
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_ORDER_PARKED), 1);
	/* the gap: 101, then the parked 102; then 103, matched at once */
	forge(FORGED_STREAM, 101, 1, TRD_VNI_SVC_STAT_STAGED, 3);
	forge(FORGED_STREAM, 103, 0, TRD_VNI_SVC_STAT_STAGED, 4);
#undef DROPPED
	T_EQ(write(go[1], "g", 1), 1);
	close(go[1]);
	T_ASSERT(reap_child(pr, 30000000) == 0, "the receiver failed");
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_ORDER_DROPPED) - d0, 8);
	T_EQ(stat_on(1, TRD_VNI_SVC_STAT_BAD_WIRE), 0);
	printf("order forge: 8 forged ordered requests dropped and counted (order_dropped), "
	       "4 in-window ones matched in number order, the early one parked\n");
}

/* ---- set-up ---- */

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				"[node 1]\nprocs = 1:1\nx+ = 0\nx- = 1\n"
				"[node 2]\nprocs = 1:5\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc, vc1;
	/* payload_crc: the impairment corrupts payloads too (real NICs: the FCS) */
	const struct vni_setup_opt o = {
		.rec_fifo_size = 1024, .n_counters = 1024, .payload_crc = true, .vc_n1 = &vc1};

	if (argc != 2 || (strcmp(argv[1], "lossy") != 0 && strcmp(argv[1], "forge") != 0 &&
			  strcmp(argv[1], "restart") != 0)) {
		fprintf(stderr, "usage: %s lossy|forge|restart\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.staging = 256 << 10;
	vc.noproc_ms = 5000;
	/* restart: the long message is refused (it tests the requests parked behind a
	 * refusal), not accepted as its header only (vni_reorder tests that) */
	if (strcmp(argv[1], "restart") == 0)
		vc.hdr_max = -1;
	/* lossy: a few messages, eager or long, kept as their header only, then refusals (what
	 * parks the requests behind them); with the default bound nothing would be refused */
	if (strcmp(argv[1], "lossy") == 0)
		vc.hdr_max = 8;
	vc1 = vc;
	vni_setup_with("vorder", topo_text, &o, &vc);
	if (strcmp(argv[1], "lossy") == 0)
		test_lossy();
	else if (strcmp(argv[1], "restart") == 0)
		test_restart();
	else
		test_forge();
	printf("PASS: vni order %s\n", argv[1]);
	return 0;
}
