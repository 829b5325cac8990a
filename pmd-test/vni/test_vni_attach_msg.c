/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tracked operations and the messaging layer on the One API node handle (docs/vni.md,
 * "Tracked operations"): this process attaches to nodes 0 (a), 1 (b) and 2 of a toroid-node
 * serving a 3x1x1 torus (test_vni_attach.sh) and checks
 *   0. reception FIFO ids asked for (trd_vni_conf.mu_rfifo_first): the same ids on two
 *      nodes, and on one node those of another process refused (EADDRINUSE);
 *   1. trd_track_open() on a handle: a tracked put's outcome (cookie, status, source), the
 *      target's verdicts -ENOKEY and -ERANGE, an outcome of a closed id never seen, refusals;
 *      a verdict into a full FIFO refused and brought again, arriving once there is room;
 *   2. the messaging layer (include/toroid/msg.h) on a handle: put, atomic with its old
 *      value, fence, RDMA read, and the errors of a read and a put to a wrong key; 100
 *      reads in a row (each gives its engine id back: more than 64 would wait); a send
 *      between contexts of the two processes, and one from outside the region (-EFAULT);
 *      the collectives (include/toroid/coll.h) on the handles of all three nodes: an
 *      allreduce, a broadcast and a barrier, byte-exact;
 *   3. hostile descriptors posted raw (trd_vni_inject()): a verdict asked into a FIFO not
 *      the process's own or with no id, a remote get's carried verdict on an id not its own;
 *      each dropped and counted (bad_descs), nothing written into another process's FIFO.
 *
 *   test_vni_attach_msg SOCKET_TEMPLATE   (%r: the rank)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include <toroid/coll.h>
#include <toroid/msg.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "attach_util.h"

#define TIMEOUT_US 5000000
#define REGION     (1u << 20)
#define LEN        8192
#define READ_LEN   20000
#define FIRST      200 /* the reception FIFO ids every process here asks for */
#define SEND_LEN   1000
#define COLL_N     2048 /* 64-bit words an allreduce sums */
#define N_READS    100  /* RDMA reads in a row: more than a process's 64 tracked */

/* A tracked put of @p len bytes from @p src to (@p key, @p roff) of @p dst, outcome to FIFO 0
 * of @p a with @p cookie. 0 or what failed. */
static int
tracked_put(struct trd_node *a, struct trd_node *dst, const void *src, uint32_t len, uint64_t key,
	    uint64_t roff, uint64_t cookie, uint32_t *id)
{
	struct trd_desc d;
	int rc = trd_track_open(a, 0, cookie, NULL, id);

	if (rc != 0)
		return rc;
	trd_desc_put(&d, trd_node_coord(dst), src, len, key, roff, 0, 0);
	d.flags |= TRD_DF_ACKREQ;
	d.aux = *id;
	return trd_inject(trd_inj_fifo(a, 0), &d);
}

/* The next outcome in FIFO 0 of @p a: 0 with its cookie and status, or -errno. */
static int
next_outcome(struct trd_node *a, uint64_t *cookie, int *status, struct trd_coord *src)
{
	struct trd_msg *m;
	int rc = trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, TIMEOUT_US);

	if (rc != 0)
		return rc;
	*cookie = m->user;
	*status = m->status;
	if (src != NULL)
		*src = m->src;
	rc = m->len == 0 ? 0 : -EBADMSG;
	trd_msg_free(m);
	return rc;
}

/* Refusals of a's reception FIFOs so far (engine-made: rfull). */
static uint64_t
rfull(struct trd_node *a)
{
	struct trd_vni_mu_info mi;

	return trd_vni_mu_info(trd_node_vni(a), &mi) == 0 ? mi.rfull : 0;
}

/* Until a's FIFOs were refused more than @p n times (5 s at most): whether they were. */
static bool
rfull_above(struct trd_node *a, uint64_t n)
{
	uint64_t end = trd_time_us() + TIMEOUT_US;

	while (rfull(a) <= n && trd_time_us() < end)
		;
	return rfull(a) > n;
}

/* 1b. an outcome into a's FIFO 0 while c keeps it full: b's verdict is refused and comes
 * again, arriving once a has taken c's messages, none of them lost (c's session waits for the
 * room; b's does not) */
static void
t_track_full(struct trd_node *a, struct trd_node *b, struct trd_node *c)
{
	/* empty messages, one slot each, as an outcome: more than the ring's 256 slots */
	enum { N_FILL = 300 };
	uint8_t *src = trd_mem_alloc(a, 64), *dst = trd_mem_alloc(b, 64);
	struct trd_mr *mr = NULL;
	unsigned int next = 0, outcomes = 0;
	uint64_t end, full0;
	uint32_t id;
	int rc = 0;

	if (dst != NULL)
		mr = trd_mr_register(b, dst, 64, TRD_ACCESS_REMOTE_WRITE);
	CHECK(src != NULL && mr != NULL, "setup: %s", rte_strerror(rte_errno));
	if (src == NULL || mr == NULL)
		goto out;
	memset(src, 0x77, 64);
	full0 = rfull(a);
	for (unsigned int i = 0; i < N_FILL && rc == 0; i++) {
		struct trd_desc d;

		trd_desc_fifo(&d, trd_node_coord(a), trd_rec_fifo_id(trd_rec_fifo(a, 0)), NULL, 0,
			      5000 + i, 0);
		end = trd_time_us() + TIMEOUT_US;
		while ((rc = trd_inject(trd_inj_fifo(c, 0), &d)) == -ENOBUFS && trd_time_us() < end)
			;
	}
	CHECK(rc == 0, "c's messages: %d", rc);
	CHECK(rfull_above(a, full0), "a's FIFO never full");
	full0 = rfull(a);
	rc = tracked_put(a, b, src, 64, trd_mr_key(mr), 0, 0xf011, &id);
	CHECK(rc == 0, "tracked put into a full FIFO: %d", rc);
	CHECK(rfull_above(a, full0 + 1), "no refusal after the tracked put");
	/* every message of c's in order, and the outcome once */
	end = trd_time_us() + TIMEOUT_US;
	while ((next < N_FILL || outcomes == 0) && trd_time_us() < end) {
		struct trd_msg *m;

		if (trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, 100000) != 0)
			continue;
		if (m->user == 0xf011) {
			CHECK(m->status == 0 && outcomes++ == 0, "outcome %u: status %d", outcomes,
			      m->status);
		} else {
			CHECK(m->user == 5000 + next && m->len == 0, "message %u: user %llu", next,
			      (unsigned long long)m->user);
			next++;
		}
		trd_msg_free(m);
	}
	CHECK(next == N_FILL && outcomes == 1,
	      "after the full FIFO: %u of %u messages, %u outcomes (lost?)", next, N_FILL,
	      outcomes);
	CHECK(memcmp(dst, src, 64) == 0, "the tracked put's data");
out:
	if (mr != NULL)
		trd_mr_deregister(mr);
	trd_mem_free(a, src);
	trd_mem_free(b, dst);
}

/* 1. tracked operations on the handle */
static void
t_track(struct trd_node *a, struct trd_node *b)
{
	uint8_t *src = trd_mem_alloc(a, LEN), *dst = trd_mem_alloc(b, LEN);
	struct trd_mr *mr =
		dst != NULL ? trd_mr_register(b, dst, LEN, TRD_ACCESS_REMOTE_WRITE) : NULL;
	struct trd_coord from = {0};
	struct trd_desc d;
	uint64_t cookie;
	uint32_t id, dead;
	int status, rc;

	CHECK(src != NULL && mr != NULL, "setup: %s", rte_strerror(rte_errno));
	if (src == NULL || mr == NULL)
		goto out;
	for (unsigned int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 31 + 1);
	rc = tracked_put(a, b, src, LEN, trd_mr_key(mr), 0, 0xc0ffee, &id);
	CHECK(rc == 0, "tracked put: %d", rc);
	rc = next_outcome(a, &cookie, &status, &from);
	CHECK(rc == 0 && cookie == 0xc0ffee && status == 0, "outcome: rc %d cookie %#llx status %d",
	      rc, (unsigned long long)cookie, status);
	CHECK(memcmp(&from, &(struct trd_coord){1, 0, 0}, sizeof(from)) == 0,
	      "outcome from %u,%u,%u, not b", from.x, from.y, from.z);
	CHECK(memcmp(src, dst, LEN) == 0, "the tracked put's data");
	CHECK(trd_track_close(a, id) == -EINVAL, "an id is closed by its outcome");

	/* the target's verdicts, each with its own cookie */
	rc = tracked_put(a, b, src, 64, trd_mr_key(mr) ^ 0x5a5a, 0, 11, &id);
	CHECK(rc == 0 && next_outcome(a, &cookie, &status, NULL) == 0 && cookie == 11 &&
		      status == -ENOKEY,
	      "wrong key: rc %d cookie %llu status %d", rc, (unsigned long long)cookie, status);
	rc = tracked_put(a, b, src, LEN, trd_mr_key(mr), 64, 12, &id);
	CHECK(rc == 0 && next_outcome(a, &cookie, &status, NULL) == 0 && cookie == 12 &&
		      status == -ERANGE,
	      "out of bounds: rc %d cookie %llu status %d", rc, (unsigned long long)cookie, status);

	/* closed before its outcome came: the next outcome seen is the next operation's */
	rc = tracked_put(a, b, src, 64, trd_mr_key(mr) ^ 0x5a5a, 0, 13, &dead);
	CHECK(rc == 0 && trd_track_close(a, dead) == 0, "close: rc %d", rc);
	rc = tracked_put(a, b, src, 64, trd_mr_key(mr), 0, 14, &id);
	CHECK(rc == 0 && next_outcome(a, &cookie, &status, NULL) == 0 && cookie == 14 &&
		      status == 0,
	      "after a closed id: rc %d cookie %llu status %d", rc, (unsigned long long)cookie,
	      status);

	/* refusals: no such FIFO, an id not open, a bad id to close */
	CHECK(trd_track_open(a, 2, 1, NULL, &id) == -EINVAL, "open on FIFO 2 of 2");
	trd_desc_put(&d, trd_node_coord(b), src, 64, trd_mr_key(mr), 0, 0, 0);
	d.flags |= TRD_DF_ACKREQ;
	d.aux = dead;
	CHECK(trd_inject(trd_inj_fifo(a, 0), &d) == -EINVAL, "inject with a closed id");
	CHECK(trd_track_close(a, 0) == -EINVAL && trd_track_close(a, 12345) == -EINVAL,
	      "close of ids never given");
out:
	if (mr != NULL)
		trd_mr_deregister(mr);
	trd_mem_free(a, src);
	trd_mem_free(b, dst);
}

static int cb_status[8], cb_n;

static void
on_done(struct trd_context *x, void *cookie, int status)
{
	(void)x;
	cb_status[(uintptr_t)cookie] = status;
	cb_n++;
}

/* 2. the messaging layer on the handle */
static void
t_msg(struct trd_node *a, struct trd_node *b)
{
	uint8_t *src = trd_mem_alloc(a, READ_LEN), *local = trd_mem_alloc(a, READ_LEN);
	uint8_t *dst = trd_mem_alloc(b, READ_LEN);
	uint64_t *word = trd_mem_alloc(b, 64), old = 0;
	struct trd_mr *mr = NULL, *mw = NULL, *ml = NULL;
	struct trd_context_conf cc = {
		.node = a, .inj_fifo = 0, .cpl_fifo = 0, .recv_fifo = TRD_NO_FIFO};
	struct trd_client *cl = trd_client_create("attach_msg", NULL);
	struct trd_context *x = cl != NULL ? trd_context_create(cl, &cc) : NULL;
	struct trd_ep ep;
	uint64_t bad;

	CHECK(x != NULL && src != NULL && local != NULL && dst != NULL && word != NULL, "setup: %s",
	      rte_strerror(rte_errno));
	if (x == NULL || src == NULL || local == NULL || dst == NULL || word == NULL)
		goto out;
	mr = trd_mr_register(b, dst, READ_LEN, TRD_ACCESS_REMOTE_READ | TRD_ACCESS_REMOTE_WRITE);
	mw = trd_mr_register(b, word, 8, TRD_ACCESS_REMOTE_READ | TRD_ACCESS_REMOTE_WRITE);
	ml = trd_mr_register(a, local, READ_LEN, TRD_ACCESS_REMOTE_WRITE);
	CHECK(mr != NULL && mw != NULL && ml != NULL && trd_endpoint(cl, 1, 0, &ep) == 0,
	      "regions, endpoint");
	if (mr == NULL || mw == NULL || ml == NULL)
		goto out;
	bad = trd_mr_key(mr) ^ 0x77;
	for (unsigned int i = 0; i < READ_LEN; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	*word = 100;
	CHECK(trd_put(x, src, &ep, 0, trd_mr_key(mr), LEN, on_done, (void *)0) == 0, "put");
	CHECK(trd_atomic(x, &ep, trd_mr_key(mw), 0, TRD_ATOMIC_FADD, 5, 0, &old, on_done,
			 (void *)1) == 0,
	      "atomic");
	CHECK(trd_fence(x, &ep, on_done, (void *)2) == 0, "fence");
	CHECK(trd_rdma_read(x, local, &ep, 0, trd_mr_key(mr), READ_LEN, on_done, (void *)3) == 0,
	      "read");
	CHECK(trd_rdma_read(x, local, &ep, 0, bad, 100, on_done, (void *)4) == 0, "bad read");
	CHECK(trd_put(x, src, &ep, 0, bad, 64, on_done, (void *)5) == 0, "bad put");
	for (int i = 0; i < 6; i++)
		cb_status[i] = 1;
	for (uint64_t t0 = trd_time_us(); cb_n < 6 && trd_time_us() - t0 < TIMEOUT_US;)
		trd_advance(x, 0);
	CHECK(cb_n == 6, "%d of 6 operations completed", cb_n);
	CHECK(cb_status[0] == 0 && cb_status[1] == 0 && cb_status[2] == 0 && cb_status[3] == 0,
	      "put %d atomic %d fence %d read %d", cb_status[0], cb_status[1], cb_status[2],
	      cb_status[3]);
	CHECK(cb_status[4] == -ENOKEY && cb_status[5] == -ENOKEY, "wrong key: read %d put %d",
	      cb_status[4], cb_status[5]);
	CHECK(old == 100 && *word == 105, "atomic: old %llu, word %llu", (unsigned long long)old,
	      (unsigned long long)*word);
	/* the read ran after the put that wrote its bytes (the fence between) */
	CHECK(memcmp(dst, src, LEN) == 0 && memcmp(local, src, LEN) == 0 &&
		      memcmp(local + LEN, dst + LEN, READ_LEN - LEN) == 0,
	      "the put's and the read's bytes");
	CHECK(trd_context_pending(x) == 0, "%u operations still pending", trd_context_pending(x));
	/* more reads one after the other than a process's tracked operations may wait (64): a
	 * read that succeeds hears nothing from its target, its id goes back (TRD_OP_UNTRACK) */
	for (unsigned int i = 0; i < N_READS; i++) {
		cb_n = 0;
		cb_status[3] = 1;
		if (trd_rdma_read(x, local, &ep, 0, trd_mr_key(mr), 256, on_done, (void *)3) != 0)
			break;
		for (uint64_t t0 = trd_time_us(); cb_n < 1 && trd_time_us() - t0 < TIMEOUT_US;)
			trd_advance(x, 0);
		if (cb_status[3] != 0) {
			CHECK(0, "read %u of %u: status %d", i + 1, N_READS, cb_status[3]);
			break;
		}
	}
out:
	CHECK(trd_client_destroy(cl) == 0, "client destroy");
	if (mr != NULL)
		trd_mr_deregister(mr);
	if (mw != NULL)
		trd_mr_deregister(mw);
	if (ml != NULL)
		trd_mr_deregister(ml);
	trd_mem_free(a, src);
	trd_mem_free(a, local);
	trd_mem_free(b, dst);
	trd_mem_free(b, word);
}

/* 0. reception FIFO ids asked for: the same on both nodes; on a's node, taken ones refused */
static void
t_ids(const char *tmpl, struct trd_node *a, struct trd_node *b)
{
	struct trd_vni_conf c = {.app = 2,
				 .proc = 0,
				 .connect_timeout_ms = 5000,
				 .mu_fifos = 1,
				 .mu_rfifos = 2,
				 .mu_rfifo_slots = 64,
				 .mu_region = 65536};
	struct trd_node *x;

	for (unsigned int k = 0; k < 2; k++)
		CHECK(trd_rec_fifo_id(trd_rec_fifo(a, k)) == FIRST + k &&
			      trd_rec_fifo_id(trd_rec_fifo(b, k)) == FIRST + k,
		      "FIFO %u: ids %u and %u, asked %u", k, trd_rec_fifo_id(trd_rec_fifo(a, k)),
		      trd_rec_fifo_id(trd_rec_fifo(b, k)), FIRST + k);
	/* process 2:0 on a's node: a's ids, one of them, past the last id, then free ones */
	const unsigned int ask[] = {FIRST, FIRST + 1, TRD_GUEST_RFIFO_LAST, 100, FIRST + 2};
	const int want[] = {EADDRINUSE, EADDRINUSE, EINVAL, EINVAL, 0};

	for (unsigned int i = 0; i < RTE_DIM(ask); i++) {
		c.mu_rfifo_first = ask[i];
		errno = 0;
		x = attach_conf(tmpl, 0, &c);
		CHECK((x != NULL) == (want[i] == 0) && (x != NULL || errno == want[i]),
		      "asking for id %u: %s, errno %d, want %d", ask[i], x ? "attached" : "refused",
		      errno, want[i]);
		if (x != NULL) {
			CHECK(trd_rec_fifo_id(trd_rec_fifo(x, 1)) == FIRST + 3, "2:0's FIFO 1: %u",
			      trd_rec_fifo_id(trd_rec_fifo(x, 1)));
			trd_node_free(x);
		}
	}
}

static unsigned int n_recv;
static uint8_t recv_buf[SEND_LEN];
static uint64_t recv_user;
static struct trd_coord recv_src;

static void
on_recv(struct trd_context *x, void *arg, const struct trd_msg *m)
{
	(void)x;
	(void)arg;
	n_recv++;
	recv_user = m->user;
	recv_src = m->src;
	memcpy(recv_buf, m->data, m->len < SEND_LEN ? m->len : SEND_LEN);
}

/* 2b. sends between contexts of two attached processes: their FIFO ids agree */
static void
t_send(struct trd_node *a, struct trd_node *b)
{
	uint8_t *buf = trd_mem_alloc(a, SEND_LEN);
	static uint8_t outside[SEND_LEN];
	struct trd_client *cl = trd_client_create("attach_send", NULL);
	struct trd_context *x[2] = {NULL, NULL};
	struct trd_ep ep;

	for (unsigned int t = 0; t < 2 && cl != NULL; t++) {
		struct trd_context_conf cc = {.node = t == 0 ? a : b,
					      .inj_fifo = 0,
					      .cpl_fifo = 0,
					      .recv_fifo = 1,
					      .recv = on_recv};

		x[t] = trd_context_create(cl, &cc);
	}
	CHECK(buf != NULL && x[0] != NULL && x[1] != NULL && trd_endpoint(cl, 1, 1, &ep) == 0 &&
		      ep.recv_fifo == FIRST + 1,
	      "setup: %s, endpoint FIFO %d", rte_strerror(rte_errno), ep.recv_fifo);
	if (buf == NULL || x[0] == NULL || x[1] == NULL)
		goto out;
	for (unsigned int i = 0; i < SEND_LEN; i++)
		buf[i] = (uint8_t)(i * 11 + 2);
	cb_n = 0;
	cb_status[6] = cb_status[7] = 1;
	CHECK(trd_send(x[0], &ep, buf, SEND_LEN, 0xfeed, on_done, (void *)6) == 0, "send");
	/* above 256 bytes from outside the region: the engine cannot reach it */
	CHECK(trd_send(x[0], &ep, outside, SEND_LEN, 1, on_done, (void *)7) == 0, "send outside");
	for (uint64_t t0 = trd_time_us();
	     (cb_n < 2 || n_recv < 1) && trd_time_us() - t0 < TIMEOUT_US;) {
		trd_advance(x[0], 0);
		trd_advance(x[1], 0);
	}
	CHECK(cb_n == 2 && cb_status[6] == 0 && cb_status[7] == -EFAULT,
	      "%d callbacks: send %d, send outside %d", cb_n, cb_status[6], cb_status[7]);
	CHECK(n_recv == 1 && recv_user == 0xfeed && memcmp(recv_buf, buf, SEND_LEN) == 0 &&
		      recv_src.x == 0,
	      "received %u: user %#llx from %u", n_recv, (unsigned long long)recv_user, recv_src.x);
out:
	CHECK(trd_client_destroy(cl) == 0, "client destroy");
	trd_mem_free(a, buf);
}

/* 2c. collectives on the handles of all three nodes: an allreduce of 2048 64-bit words
 * (pipelined through the scratch regions), a broadcast, a barrier; one client per task */
static void
t_coll(struct trd_node *const h[3])
{
	const struct trd_coll_conf conf = {.seg_size = 8192, .slots = 2, .eager_max = 1024};
	struct trd_client *cl[3] = {NULL, NULL, NULL};
	struct trd_context *x[3] = {NULL, NULL, NULL};
	struct trd_coll *co[3] = {NULL, NULL, NULL};
	uint64_t *sb[3] = {NULL, NULL, NULL}, *rb[3] = {NULL, NULL, NULL}, hd[3][3];
	unsigned int ok = 0, bad = 0;
	int st[3][3];

	for (unsigned int t = 0; t < 3; t++) {
		struct trd_context_conf cc = {.node = h[t],
					      .inj_fifo = 0,
					      .cpl_fifo = 0,
					      .recv_fifo = 1,
					      .recv = trd_coll_recv};

		cl[t] = trd_client_create("attach_coll", NULL);
		x[t] = cl[t] != NULL ? trd_context_create(cl[t], &cc) : NULL;
		co[t] = x[t] != NULL ? trd_coll_create(cl[t], x[t], &conf) : NULL;
		sb[t] = trd_mem_alloc(h[t], COLL_N * 8);
		rb[t] = trd_mem_alloc(h[t], COLL_N * 8);
		CHECK(co[t] != NULL && sb[t] != NULL && rb[t] != NULL, "task %u: %s", t,
		      rte_strerror(rte_errno));
		if (co[t] == NULL || sb[t] == NULL || rb[t] == NULL)
			goto out;
		for (unsigned int i = 0; i < COLL_N; i++)
			sb[t][i] = t * 1000 + i;
		memset(rb[t], 0xee, COLL_N * 8);
	}
	for (unsigned int t = 0; t < 3; t++) {
		int r0 = trd_coll_allreduce(co[t], sb[t], rb[t], COLL_N, TRD_COLL_UINT64,
					    TRD_COLL_SUM, NULL, NULL, &hd[t][0]);
		/* task 2's send buffer, 5000 bytes of it, to every task's */
		int r1 = trd_coll_broadcast(co[t], 2, sb[t], 5000, NULL, NULL, &hd[t][1]);
		int r2 = trd_coll_barrier(co[t], NULL, NULL, &hd[t][2]);

		CHECK(r0 == 0 && r1 == 0 && r2 == 0, "task %u: start %d %d %d", t, r0, r1, r2);
		if (r0 != 0 || r1 != 0 || r2 != 0)
			goto out;
	}
	for (uint64_t t0 = trd_time_us(); ok + bad < 9 && trd_time_us() - t0 < TIMEOUT_US;) {
		ok = bad = 0;
		for (unsigned int t = 0; t < 3; t++) {
			trd_advance(x[t], 0);
			for (unsigned int k = 0; k < 3; k++) {
				st[t][k] = trd_coll_test(co[t], hd[t][k]);
				ok += st[t][k] == 0;
				bad += st[t][k] != 0 && st[t][k] != -EINPROGRESS;
			}
		}
	}
	CHECK(ok == 9, "%u of 9 collectives complete (%u failed): task 0 %d %d %d", ok, bad,
	      st[0][0], st[0][1], st[0][2]);
	for (unsigned int t = 0; t < 3 && ok == 9; t++) {
		unsigned int wrong = 0;

		for (unsigned int i = 0; i < COLL_N; i++)
			wrong += rb[t][i] != 3000 + 3 * (uint64_t)i;
		for (unsigned int i = 0; i < 5000 / 8; i++)
			wrong += sb[t][i] != 2000 + (uint64_t)i;
		CHECK(wrong == 0, "task %u: %u words wrong", t, wrong);
	}
out:
	for (unsigned int t = 0; t < 3; t++) {
		CHECK(trd_coll_destroy(co[t]) == 0 && trd_client_destroy(cl[t]) == 0,
		      "task %u: destroy", t);
		trd_mem_free(h[t], sb[t]);
		trd_mem_free(h[t], rb[t]);
	}
}

/* bad_descs of @p v once it reaches @p want (the engine judges the FIFO in order), or its last
 * value after the timeout */
static uint64_t
bad_descs(struct trd_vni *v, uint64_t want)
{
	struct trd_vni_mu_info mi = {0};

	for (uint64_t t0 = trd_time_us(); trd_time_us() - t0 < TIMEOUT_US;)
		if (trd_vni_mu_info(v, &mi) == 0 && mi.bad_descs >= want)
			break;
	return mi.bad_descs;
}

/* 3. hostile descriptors, raw */
static void
t_hostile(struct trd_node *a, struct trd_node *b)
{
	struct trd_vni *v = trd_node_vni(a);
	struct trd_vni_mu_info mi, mb;
	struct trd_desc d[2], c;
	struct trd_msg *m;
	uint64_t cookie, bad0, rmsgs_b;
	uint32_t id;
	int status, rc;

	if (trd_vni_mu_info(v, &mi) != 0 || trd_vni_mu_info(trd_node_vni(b), &mb) != 0) {
		CHECK(0, "mu_info");
		return;
	}
	bad0 = mi.bad_descs;
	rmsgs_b = mb.rmsgs;
	/* a verdict into a FIFO of the node that is not a's (another process's: its reader
	 * would take it for one of its own) */
	trd_desc_put(&d[0], trd_node_coord(b), NULL, 0, 1, 0, 0, 0);
	d[0].flags = TRD_DF_ACKREQ;
	d[0].aux = 7;
	d[0].ack_fifo = (uint8_t)(mi.rfifo_ids[mi.n_rfifos - 1] + 1);
	CHECK(trd_vni_inject(v, 0, d, 1) == 0, "inject 1");
	/* a verdict with no id */
	d[0].ack_fifo = mi.rfifo_ids[0];
	d[0].aux = 0;
	CHECK(trd_vni_inject(v, 0, d, 1) == 0, "inject 2");
	/* a remote get whose carried put asks a verdict on another id, or with none asked */
	trd_desc_put(&c, trd_node_coord(a), NULL, 8, 1, 0, 0, 0);
	c.flags = TRD_DF_IMM | TRD_DF_ACKREQ;
	c.aux = 9;
	trd_desc_rget(&d[0], trd_node_coord(b), TRD_ENGINE_FIFO, &c, 1);
	d[0].flags = TRD_DF_ACKREQ;
	d[0].aux = 8;
	d[0].ack_fifo = mi.rfifo_ids[0];
	CHECK(trd_vni_inject(v, 0, d, 1) == 0, "inject 3");
	d[0].flags = 0;
	d[0].aux = 0;
	d[0].ack_fifo = 0;
	CHECK(trd_vni_inject(v, 0, d, 1) == 0, "inject 4");
	CHECK(bad_descs(v, bad0 + 4) == bad0 + 4, "bad_descs %llu, want %llu",
	      (unsigned long long)bad_descs(v, 0), (unsigned long long)bad0 + 4);
	/* then one that is right: its outcome comes, and nothing came to b */
	rc = trd_track_open(a, 0, 21, NULL, &id);
	trd_desc_put(&d[0], trd_node_coord(b), NULL, 0, 1, 0, 0, 0);
	d[0].flags = TRD_DF_ACKREQ;
	d[0].aux = id;
	CHECK(rc == 0 && trd_inject(trd_inj_fifo(a, 0), d) == 0, "a good one");
	rc = next_outcome(a, &cookie, &status, NULL);
	CHECK(rc == 0 && cookie == 21 && status == -ENOKEY, "good one: rc %d cookie %llu status %d",
	      rc, (unsigned long long)cookie, status);
	CHECK(trd_rec_fifo_poll(trd_rec_fifo(b, 0), &m, 1) == 0 &&
		      trd_vni_mu_info(trd_node_vni(b), &mb) == 0 && mb.rmsgs == rmsgs_b,
	      "b's FIFO got something");
	CHECK(bad_descs(v, 0) == bad0 + 4, "bad_descs moved to %llu",
	      (unsigned long long)bad_descs(v, 0));
}

int
main(int argc, char **argv)
{
	struct trd_node *a, *b, *h[3];

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET_TEMPLATE\n", argv[0]);
		return 2;
	}
	for (unsigned int r = 0; r < 3; r++) {
		struct trd_vni_conf c = {.app = 1,
					 .proc = r,
					 .connect_timeout_ms = 5000,
					 .mu_fifos = 1,
					 .mu_rfifos = 2,
					 .mu_rfifo_slots = 256,
					 .mu_rfifo_first = FIRST,
					 .mu_region = REGION};

		if ((h[r] = attach_conf(argv[1], r, &c)) == NULL)
			return 1;
	}
	a = h[0];
	b = h[1];
	t_ids(argv[1], a, b);
	t_track(a, b);
	t_track_full(a, b, h[2]);
	t_msg(a, b);
	t_send(a, b);
	t_coll(h);
	t_hostile(a, b);
	return attach_finish("test_vni_attach_msg", h, 3);
}
