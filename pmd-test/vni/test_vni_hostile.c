/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile peers and processes against one VNI service (docs/vni.md, "Threat model").
 *
 * An in-process 3x1x1 torus over ring links. The service under test serves node 0; the test
 * itself plays node 1 (the destination of the sends, reading the protocol off its reception
 * FIFO and answering by hand) and node 2 (a forger). Applications are forked children: plain
 * processes that use libtoroid_vni, or speak to the socket and the segment by hand.
 *
 *   test_vni_hostile forge   replies from the wrong node, the wrong process, without the
 *                            message's key, with statuses the protocol does not define, for
 *                            ids outside the table, replayed: all dropped and counted
 *                            (bad_replies); the real replies complete the sends, byte-exact
 *   test_vni_hostile data_forge  DATA messages into a receive in process memory from the
 *                            wrong node, without the key or grant, or out of its bounds: all
 *                            dropped (bad_wire) with nothing written; the real ones fill it
 *   test_vni_hostile hdr_forge  a long request that staging cannot hold is kept as its header
 *                            only (ACK, hdr_held 1); FINs that name any grant id it could
 *                            have (no CTS was given) are answered DONE -EPROTO and counted
 *                            (bad_wire), and the record stays; the receive posted later
 *                            sends its CTS, and the real DATA and FIN fill it byte-exact
 *   test_vni_hostile cmds    a process posts commands with absurd offsets, lengths, indices
 *                            and opcodes, overwrites its rings' sizes and masks, then breaks
 *                            its command queue: every bad command (collectives too) is
 *                            refused (-EINVAL, -EMSGSIZE or counted), the engine survives
 *                            (run it under ASan/UBSan) and serves the next process
 *   test_vni_hostile rma_forge  one-sided access (docs/vni.md, "One-sided access to application
 *                            memory"): a forger's WRITEs to a process's registered region
 *                            with guessed keys, out of its bounds, or malformed are refused
 *                            before any access and counted (rma_denied, bad_wire) and leave
 *                            its memory as it was; forged ATOMIC_RESPs (wrong node, key,
 *                            status) are dropped (bad_replies); the real answer completes
 *                            the atomic with its old value; an atomic asked twice is applied
 *                            once, and a late duplicate of an older generation on the same
 *                            origin slot is dropped unapplied (rma_stale)
 *   test_vni_hostile rma_refused  12 one-sided writes and reads at once to a process that
 *                            never attaches all end with -ECONNREFUSED, and the interface is
 *                            released once its process leaves (no reference kept)
 *   test_vni_hostile pid_exit  the attached process exits while a child it forked holds its
 *                            socket: the engine ends the interface anyway (its pid may be
 *                            reused by another process)
 *   test_vni_hostile rma_lossy  8 writes then 8 reads of 256 KiB at once through a
 *                            256-entry reception FIFO that drops frames: every op is asked
 *                            again after 50 ms of silence (rma_stall_us; 0.5 s by default)
 *                            and completes, byte-exact
 *   test_vni_hostile owner   users: a process of another user cannot open a 0660 socket;
 *                            with the socket open to all, an application with an owner
 *                            (--vni-owner) refuses other users (root too; also for an
 *                            automatic process number), and one without
 *                            refuses a second user while the first one's process is attached
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#include <toroid/comb.h>
#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_seg.h"
#include "vni_test.h"
#include <toroid/vni_wire.h>

#define NOBODY 65534

/* ---- the node the test plays: node 1 reads requests, nodes 1 and 2 send replies ---- */

static struct trd_msg *
node_recv(unsigned int n, struct trd_vw_hdr *h)
{
	struct trd_rec_fifo *rf = trd_rec_fifo(nd[n], 0);
	uint64_t deadline = trd_time_us() + WAIT_US;
	struct trd_msg *m;

	while (trd_rec_fifo_poll(rf, &m, 1) != 1) {
		T_ASSERT(trd_time_us() < deadline, "no protocol message at node %u", n);
		pump();
	}
	T_ASSERT(m->len >= TRD_VW_HDR_LEN && (m->user >> 32) == TRD_VW_MAGIC, "a VNI message");
	T_EQ(trd_vw_decode(m->data, m->len, h), 0);
	return m;
}

static void
node_send(unsigned int from, const struct trd_vw_hdr *h)
{
	uint8_t w[TRD_VW_HDR_LEN];
	struct trd_desc d;

	trd_vw_encode(w, h);
	trd_desc_fifo(&d, trd_node_coord(nd[0]), 0, w, sizeof(w), TRD_VW_USER(h->type), 0);
	T_EQ(trd_inject(trd_inj_fifo(nd[from], 1), &d), 0);
	for (int i = 0; i < 4; i++)
		trd_net_poll(net);
}

/* The reply the real receiver would send to request @p rq. */
static struct trd_vw_hdr
answer_to(const struct trd_vw_hdr *rq, uint8_t type, int32_t status)
{
	struct trd_vw_hdr r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.status = status;
	r.src_app = rq->dst_app;
	r.src_proc = rq->dst_proc;
	r.dst_app = rq->src_app;
	r.dst_proc = rq->src_proc;
	r.msg_id = rq->msg_id;
	r.key = rq->key;
	r.grant_id = rq->grant_id;
	r.len = rq->len;
	r.tag = rq->tag;
	return r;
}

/* ---- forge ---- */

#define LONG_LEN 65536

struct forge_child {
	int pipe_w;
};

static void
pattern(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/* The application: a short send, then a long one, to 1:9 (node 1); reports each status. */
static int
forge_app(void *arg)
{
	const struct forge_child *fc = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr dst = {.app = 1, .proc = 9};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t small[100];
	uint8_t *big;
	struct trd_vni_cpl cpl;

	if (v == NULL)
		return 10;
	pattern(small, sizeof(small), 1);
	big = trd_vni_alloc(v, LONG_LEN);
	if (big == NULL)
		return 11;
	pattern(big, LONG_LEN, 2);
	for (int k = 0; k < 2; k++) {
		int32_t st;

		if (trd_vni_send(v, dst, 7 + (uint64_t)k, k == 0 ? small : big,
				 k == 0 ? sizeof(small) : LONG_LEN, -1, 0) != 0)
			return 12;
		if (trd_vni_wait(v, &cpl, 1, 20000) != 1)
			return 13;
		st = cpl.status;
		if (write(fc->pipe_w, &st, sizeof(st)) != sizeof(st))
			return 14;
	}
	trd_vni_close(v);
	return 0;
}

/* ---- data_forge ---- */

static int32_t app_status_wait(int fd);

/* A protocol message with @p n data bytes from node @p from to node 0. */
static void
node_send_data(unsigned int from, const struct trd_vw_hdr *h, const void *data, uint32_t n)
{
	uint8_t w[TRD_VW_HDR_LEN + 512];
	struct trd_desc d;

	T_ASSERT(n <= 512, "chunk");
	trd_vw_encode(w, h);
	memcpy(w + TRD_VW_HDR_LEN, data, n);
	trd_desc_fifo(&d, trd_node_coord(nd[0]), 0, w, TRD_VW_HDR_LEN + n, TRD_VW_USER(h->type), 0);
	T_EQ(trd_inject(trd_inj_fifo(nd[from], 1), &d), 0);
	for (int i = 0; i < 4; i++)
		pump();
}

/* The application: a receive of LONG_LEN bytes from 1:9 into its own memory (not the pool),
 * followed by a page that must stay untouched; reports the status, then whether the bytes
 * are the pattern and the page unchanged (0) or not (1). */
static int
data_app(void *arg)
{
	const struct forge_child *fc = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr src = {.app = 1, .proc = 9};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t *buf = mmap(NULL, LONG_LEN + 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t want[LONG_LEN];
	struct trd_vni_cpl cpl;
	int32_t st;

	if (v == NULL || buf == MAP_FAILED)
		return 10;
	memset(buf, 0xee, LONG_LEN + 4096);
	if (trd_vni_recv(v, src, 7, 0, buf, LONG_LEN, -1, 0) != 0)
		return 11;
	if (trd_vni_wait(v, &cpl, 1, 20000) != 1)
		return 12;
	st = cpl.status;
	if (write(fc->pipe_w, &st, sizeof(st)) != sizeof(st))
		return 13;
	pattern(want, LONG_LEN, 3);
	st = memcmp(buf, want, LONG_LEN) != 0;
	for (size_t i = 0; i < 4096; i++)
		st |= buf[LONG_LEN + i] != 0xee;
	if (write(fc->pipe_w, &st, sizeof(st)) != sizeof(st))
		return 14;
	trd_vni_close(v);
	return 0;
}

/* A receive in process memory is granted for DATA messages (TRD_VW_F_FIFO): DATA from the
 * wrong node, with the wrong key or grant, or out of the grant's bounds is dropped and counted
 * (bad_wire), and writes nothing; the real ones fill the receive byte-exact. */
static void
test_data_forge(void)
{
	uint64_t wire0 = stat_of(TRD_VNI_SVC_STAT_BAD_WIRE);
	uint8_t data[LONG_LEN], junk[512];
	struct trd_vw_hdr rts, cts, h;
	struct forge_child fc;
	struct trd_msg *m;
	int p[2];
	pid_t pid;

	T_EQ(pipe2(p, O_NONBLOCK), 0);
	fc.pipe_w = p[1];
	pid = spawn(data_app, &fc);
	pump_until_stat(TRD_VNI_SVC_STAT_RECVS, 1);
	memset(&rts, 0, sizeof(rts));
	rts.type = TRD_VW_RTS;
	rts.src_app = 1;
	rts.src_proc = 9;
	rts.dst_app = 1;
	rts.dst_proc = 0;
	rts.msg_id = 0x10003;
	rts.key = 0xabcdef;
	rts.len = LONG_LEN;
	rts.tag = 7;
	node_send(1, &rts);
	m = node_recv(1, &cts);
	trd_msg_free(m);
	T_EQ(cts.type, TRD_VW_CTS);
	T_ASSERT(cts.flags & TRD_VW_F_FIFO, "a grant for DATA messages");
	T_EQ(cts.rkey, 0);
	T_EQ(cts.len, LONG_LEN);
	memset(junk, 0x66, sizeof(junk));
	memset(&h, 0, sizeof(h));
	h.type = TRD_VW_DATA;
	h.src_app = 1;
	h.src_proc = 9;
	h.dst_app = 1;
	h.dst_proc = 0;
	h.msg_id = rts.msg_id;
	h.key = rts.key;
	h.grant_id = cts.grant_id;
	h.len = sizeof(junk);
	node_send_data(2, &h, junk, sizeof(junk)); /* from another node */
	h.key ^= 1;                                /* without the key */
	node_send_data(1, &h, junk, sizeof(junk));
	h.key ^= 1;
	h.grant_id ^= 0x10000; /* another generation of the grant */
	node_send_data(1, &h, junk, sizeof(junk));
	h.grant_id ^= 0x10000;
	h.roff = LONG_LEN - 100; /* past the end of the receive */
	node_send_data(1, &h, junk, sizeof(junk));
	h.roff = UINT64_MAX - 10; /* an offset that wraps */
	node_send_data(1, &h, junk, sizeof(junk));
	pump_for_stat(TRD_VNI_SVC_STAT_BAD_WIRE, wire0 + 5, 2000000);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_WIRE), wire0 + 5);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_COPY_RX_USER), 0);
	/* the real data, then the FIN */
	pattern(data, LONG_LEN, 3);
	for (uint32_t off = 0; off < LONG_LEN; off += 512) {
		h.roff = off;
		node_send_data(1, &h, data + off, 512);
	}
	h = answer_to(&cts, TRD_VW_FIN, 0); /* FIN: back from 1:9 to 1:0 */
	h.src_app = 1;
	h.src_proc = 9;
	h.dst_app = 1;
	h.dst_proc = 0;
	h.grant_id = cts.grant_id;
	node_send(1, &h);
	m = node_recv(1, &h);
	trd_msg_free(m);
	T_EQ(h.type, TRD_VW_DONE);
	T_EQ(h.status, 0);
	T_EQ(app_status_wait(p[0]), 0);
	T_ASSERT(app_status_wait(p[0]) == 0, "the receive is not the pattern, or the page after it "
					     "was written");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_COPY_RX_USER), LONG_LEN);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_WIRE), wire0 + 5);
	reap_ok(pid, WAIT_US, "the receiving process");
	close(p[0]);
	close(p[1]);
	printf("data_forge: 5 forged DATA messages dropped (bad_wire), the real ones wrote the "
	       "receive byte-exact\n");
}

/* ---- hdr_forge ---- */

struct hdr_child {
	int pipe_w, go_r, go_w;
};

/* The application: attached, it waits for a byte on go_r, then posts a receive of LONG_LEN
 * bytes from 1:9 into its own memory and reports as data_app does. */
static int
hdr_app(void *arg)
{
	const struct hdr_child *hc = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr src = {.app = 1, .proc = 9};
	struct trd_vni *v = trd_vni_open(&c);
	uint8_t *buf = mmap(NULL, LONG_LEN + 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t want[LONG_LEN];
	struct trd_vni_cpl cpl;
	int32_t st;
	char g;

	close(hc->go_w); /* the parent's end: its exit ends the wait */
	if (v == NULL || buf == MAP_FAILED)
		return 10;
	memset(buf, 0xee, LONG_LEN + 4096);
	if (read(hc->go_r, &g, 1) != 1)
		return 15;
	if (trd_vni_recv(v, src, 7, 0, buf, LONG_LEN, -1, 0) != 0)
		return 11;
	if (trd_vni_wait(v, &cpl, 1, 20000) != 1)
		return 12;
	st = cpl.status;
	if (write(hc->pipe_w, &st, sizeof(st)) != sizeof(st))
		return 13;
	pattern(want, LONG_LEN, 4);
	st = memcmp(buf, want, LONG_LEN) != 0;
	for (size_t i = 0; i < 4096; i++)
		st |= buf[LONG_LEN + i] != 0xee;
	if (write(hc->pipe_w, &st, sizeof(st)) != sizeof(st))
		return 14;
	trd_vni_close(v);
	return 0;
}

/* A long request that staging (32 KiB here) cannot hold is kept as its header only (docs/vni.md,
 * "Unexpected messages: the header only"): no grant was given, so a FIN naming any grant
 * id is refused (DONE -EPROTO, bad_wire) and leaves the record as it was; the receive posted
 * later grants it, and the real DATA and FIN fill it. */
static void
test_hdr_forge(void)
{
	uint64_t wire0 = stat_of(TRD_VNI_SVC_STAT_BAD_WIRE);
	uint8_t data[LONG_LEN];
	struct trd_vw_hdr rts, r, h, cts;
	struct hdr_child hc;
	struct trd_msg *m;
	unsigned int n_forged = 0;
	int p[2], go[2];
	pid_t pid;

	T_EQ(pipe2(p, O_NONBLOCK), 0);
	T_EQ(pipe(go), 0);
	hc.pipe_w = p[1];
	hc.go_r = go[0];
	hc.go_w = go[1];
	pid = spawn(hdr_app, &hc);
	pump_until_stat(TRD_VNI_SVC_STAT_ATTACHED, 1);
	memset(&rts, 0, sizeof(rts));
	rts.type = TRD_VW_RTS;
	rts.src_app = 1;
	rts.src_proc = 9;
	rts.dst_app = 1;
	rts.dst_proc = 0;
	rts.msg_id = 0x10005;
	rts.key = 0x5eed;
	rts.len = LONG_LEN;
	rts.tag = 7;
	node_send(1, &rts);
	m = node_recv(1, &r);
	trd_msg_free(m);
	T_EQ(r.type, TRD_VW_ACK);
	T_EQ(r.status, 0);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_HDR_ONLY), 1);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_HDR_HELD), 1);
	/* the sender itself (it knows the message id and key) names grants it was never given:
	 * the first table entries, their first two generations */
	for (uint32_t gen = 1; gen <= 2; gen++)
		for (uint32_t idx = 1; idx <= 8; idx++) {
			h = answer_to(&r, TRD_VW_FIN, 0); /* back from 1:9 to 1:0 */
			h.src_app = 1;
			h.src_proc = 9;
			h.dst_app = 1;
			h.dst_proc = 0;
			h.grant_id = idx | gen << 16;
			node_send(1, &h);
			m = node_recv(1, &h);
			trd_msg_free(m);
			T_EQ(h.type, TRD_VW_DONE);
			T_ASSERT(h.status == -EPROTO, "FIN for grant %#x: DONE %d, not -EPROTO",
				 idx | gen << 16, h.status);
			n_forged++;
		}
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_WIRE), wire0 + n_forged);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_HDR_HELD), 1);
	/* the receive: a CTS for DATA messages into the process's memory */
	T_EQ(write(go[1], "g", 1), 1);
	m = node_recv(1, &cts);
	trd_msg_free(m);
	T_EQ(cts.type, TRD_VW_CTS);
	T_ASSERT(cts.flags & TRD_VW_F_FIFO, "a grant for DATA messages");
	T_EQ(cts.len, LONG_LEN);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_HDR_HELD), 0);
	pattern(data, LONG_LEN, 4);
	memset(&h, 0, sizeof(h));
	h.type = TRD_VW_DATA;
	h.src_app = 1;
	h.src_proc = 9;
	h.dst_app = 1;
	h.dst_proc = 0;
	h.msg_id = rts.msg_id;
	h.key = rts.key;
	h.grant_id = cts.grant_id;
	h.len = 512;
	for (uint32_t off = 0; off < LONG_LEN; off += 512) {
		h.roff = off;
		node_send_data(1, &h, data + off, 512);
	}
	h = answer_to(&cts, TRD_VW_FIN, 0);
	h.src_app = 1;
	h.src_proc = 9;
	h.dst_app = 1;
	h.dst_proc = 0;
	h.grant_id = cts.grant_id;
	node_send(1, &h);
	m = node_recv(1, &h);
	trd_msg_free(m);
	T_EQ(h.type, TRD_VW_DONE);
	T_EQ(h.status, 0);
	T_EQ(app_status_wait(p[0]), 0);
	T_ASSERT(app_status_wait(p[0]) == 0, "the receive is not the pattern, or the page after it "
					     "was written");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_WIRE), wire0 + n_forged);
	reap_ok(pid, WAIT_US, "the receiving process");
	close(p[0]);
	close(p[1]);
	close(go[0]);
	close(go[1]);
	printf("hdr_forge: a request kept as its header only; %u FINs naming grants it was never "
	       "given refused (bad_wire); its receive granted, filled byte-exact\n",
	       n_forged);
}

/* The status the application reported, or 1 if none yet. */
static int32_t
app_status(int fd)
{
	int32_t st;

	return read(fd, &st, sizeof(st)) == sizeof(st) ? st : 1;
}

static int32_t
app_status_wait(int fd)
{
	uint64_t deadline = trd_time_us() + WAIT_US;
	int32_t st;

	while ((st = app_status(fd)) == 1) {
		T_ASSERT(trd_time_us() < deadline, "the application reported nothing");
		pump();
	}
	return st;
}

static void
test_forge(void)
{
	struct forge_child fc;
	struct trd_vw_hdr rq, r, acked;
	struct trd_msg *m;
	uint8_t data[100], *region, want[LONG_LEN];
	struct trd_mr *mr;
	uint64_t bad0 = stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES), bad;
	int32_t st;
	int p[2];
	pid_t pid;

	T_EQ(pipe2(p, O_NONBLOCK), 0);
	fc.pipe_w = p[1];
	pid = spawn(forge_app, &fc);

	/* the short message arrives at node 1 */
	m = node_recv(1, &rq);
	T_EQ(rq.type, TRD_VW_EAGER);
	T_EQ(rq.len, 100);
	T_EQ(m->len, TRD_VW_HDR_LEN + 100);
	pattern(data, sizeof(data), 1);
	T_ASSERT(memcmp((uint8_t *)m->data + TRD_VW_HDR_LEN, data, 100) == 0, "eager data");
	trd_msg_free(m);

	/* forgeries, each of which completed the send with its status before */
	r = answer_to(&rq, TRD_VW_ACK, -EIO); /* an undocumented status, else right */
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_ACK, -190172668);
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_NAK, -EDQUOT);
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_ACK, 0); /* right, but from node 2 */
	node_send(2, &r);
	r = answer_to(&rq, TRD_VW_ACK, -EMSGSIZE);
	node_send(2, &r);
	r = answer_to(&rq, TRD_VW_ACK, -EMSGSIZE); /* from node 1, but another process */
	r.src_proc = 5;
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_ACK, -EMSGSIZE); /* to another process of node 0 */
	r.dst_app = 2;
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_ACK, -EMSGSIZE); /* the id, not the key: a blind guess */
	r.key ^= 0x10000;
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_DONE, -EMSGSIZE); /* an index beyond the engine's table */
	r.msg_id = 0xfffeu | (rq.msg_id & 0xffff0000u);
	node_send(1, &r);
	pump_for_stat(TRD_VNI_SVC_STAT_BAD_REPLIES, bad0 + 9, 2000000);
	st = app_status(p[0]);
	T_ASSERT(st == 1, "a forged reply completed the send with %d", st);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES), bad0 + 9);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_ERRORS), 0);

	/* the real answer */
	acked = answer_to(&rq, TRD_VW_ACK, 0);
	node_send(1, &acked);
	st = app_status_wait(p[0]);
	T_ASSERT(st == 0, "the send completed with %d", st);

	/* the long message: a request to send */
	m = node_recv(1, &rq);
	T_EQ(rq.type, TRD_VW_RTS);
	T_EQ(rq.len, LONG_LEN);
	trd_msg_free(m);
	bad0 = stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES);
	node_send(1, &acked); /* the first message's answer, replayed */
	region = aligned_alloc(64, LONG_LEN);
	T_ASSERT(region != NULL, "memory");
	memset(region, 0, LONG_LEN);
	mr = trd_mr_register(nd[1], region, LONG_LEN, TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr != NULL, "region on node 1");
	r = answer_to(&rq, TRD_VW_CTS, 0); /* a permission from node 2: data would go there */
	r.grant_id = 77;
	r.rkey = trd_mr_key(mr);
	node_send(2, &r);
	r.status = -EIO; /* a permission with a status */
	node_send(1, &r);
	pump_for_stat(TRD_VNI_SVC_STAT_BAD_REPLIES, bad0 + 3, 2000000);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_TX_CHUNKS), 0); /* no data went anywhere */
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES), bad0 + 3);
	r = answer_to(&rq, TRD_VW_CTS, 0); /* the real one */
	r.grant_id = 0x10005;
	r.rkey = trd_mr_key(mr);
	r.roff = 0;
	node_send(1, &r);
	m = node_recv(1, &rq); /* the data lands in the region, then the FIN */
	T_EQ(rq.type, TRD_VW_FIN);
	T_EQ(rq.grant_id, 0x10005);
	trd_msg_free(m);
	pattern(want, LONG_LEN, 2);
	T_ASSERT(memcmp(region, want, LONG_LEN) == 0, "long message byte-exact");
	r = answer_to(&rq, TRD_VW_DONE, -EIO); /* a verdict the protocol does not define */
	node_send(1, &r);
	r = answer_to(&rq, TRD_VW_CANCEL, -ECONNRESET); /* from node 2 */
	node_send(2, &r);
	r = answer_to(&rq, TRD_VW_DONE, -EMSGSIZE); /* from node 2 */
	node_send(2, &r);
	pump_for_stat(TRD_VNI_SVC_STAT_BAD_REPLIES, bad0 + 6, 2000000);
	st = app_status(p[0]);
	T_ASSERT(st == 1, "a forged reply completed the send with %d", st);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES), bad0 + 6);
	r = answer_to(&rq, TRD_VW_DONE, 0);
	node_send(1, &r);
	st = app_status_wait(p[0]);
	T_ASSERT(st == 0, "the send completed with %d", st);
	T_EQ(reap_child(pid, WAIT_US), 0);
	bad = stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES);
	T_EQ(bad, bad0 + 6);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_ERRORS), 0);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_WIRE), 0);
	trd_mr_deregister(mr);
	free(region);
	close(p[0]);
	close(p[1]);
	printf("forge: 15 forged or replayed replies dropped (bad_replies %llu), the real ones "
	       "completed both sends with 0, byte-exact\n",
	       (unsigned long long)bad);
}

/* ---- rma: forged one-sided requests and answers ---- */

#define RMA_LEN 4096

struct rma_child {
	int to_parent, from_parent;
};

/* The target and origin: registers a region and tells the parent its key and address, posts
 * one atomic to 1:9 (the test's node 1) and reports its status and old value, then waits for
 * the parent's word to leave (its memory is read by the parent meanwhile). */
static int
rma_app(void *arg)
{
	const struct rma_child *rc = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr dst = {.app = 1, .proc = 9};
	uint8_t *region = malloc(RMA_LEN);
	struct trd_vni *v = trd_vni_open(&c);
	struct trd_vni_cpl cpl;
	uint64_t msg[2] = {0, (uint64_t)(uintptr_t)region}, out[2];
	char b;

	if (v == NULL || region == NULL)
		return 10;
	memset(region, 0x11, RMA_LEN);
	if (trd_vni_mr_reg(v, region, RMA_LEN, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE,
			   &msg[0]) != 0)
		return 11;
	if (write(rc->to_parent, msg, sizeof(msg)) != sizeof(msg))
		return 12;
	if (trd_vni_atomic(v, dst, TRD_VNI_AOP_SUM, 8, 5, 0, 0x1000, 0x77, -1, 9) != 0)
		return 13;
	if (trd_vni_wait(v, &cpl, 1, 20000) != 1 || cpl.kind != TRD_VNI_CPL_ATOMIC)
		return 14;
	out[0] = (uint64_t)(int64_t)cpl.status;
	out[1] = cpl.has_data ? cpl.data : UINT64_MAX;
	if (write(rc->to_parent, out, sizeof(out)) != sizeof(out))
		return 15;
	if (read(rc->from_parent, &b, 1) != 1)
		return 16;
	trd_vni_close(v);
	free(region);
	return 0;
}

/* A WRITE from node @p from: @p data_len bytes after the header (h->len may lie). */
static void
node_write(unsigned int from, const struct trd_vw_hdr *h, const uint8_t *data, uint32_t data_len)
{
	uint8_t w[TRD_VW_HDR_LEN + 512];
	struct trd_desc d;

	trd_vw_encode(w, h);
	memcpy(w + TRD_VW_HDR_LEN, data, data_len);
	trd_desc_fifo(&d, trd_node_coord(nd[0]), 0, w, TRD_VW_HDR_LEN + data_len,
		      TRD_VW_USER(h->type), 0);
	T_EQ(trd_inject(trd_inj_fifo(nd[from], 0), &d), 0);
	for (int i = 0; i < 4; i++)
		trd_net_poll(net);
}

static void
child_mem(pid_t pid, uint64_t addr, uint8_t *out)
{
	struct iovec l = {.iov_base = out, .iov_len = RMA_LEN};
	struct iovec r = {.iov_base = (void *)(uintptr_t)addr, .iov_len = RMA_LEN};

	T_EQ(process_vm_readv(pid, &l, 1, &r, 1, 0), RMA_LEN);
}

static void
test_rma(void)
{
	struct rma_child rc;
	struct trd_vw_hdr h, rq, r;
	struct trd_msg *m;
	uint8_t data[256], mem[RMA_LEN], want[RMA_LEN];
	uint64_t info[2], res[2], denied0, bad0, wire0;
	int up[2], down[2];
	pid_t pid;

	T_EQ(pipe2(up, O_NONBLOCK), 0);
	T_EQ(pipe(down), 0);
	rc.to_parent = up[1];
	rc.from_parent = down[0];
	pid = spawn(rma_app, &rc);
	read_pipe(up[0], info, sizeof(info));
	T_ASSERT(info[0] != 0, "a region key");
	memset(want, 0x11, RMA_LEN);
	memset(data, 0xee, sizeof(data));
	denied0 = stat_of(TRD_VNI_SVC_STAT_RMA_DENIED);
	wire0 = stat_of(TRD_VNI_SVC_STAT_BAD_WIRE);

	/* WRITEs from node 2 with guessed keys: refused, answered -EACCES, nothing written */
	memset(&h, 0, sizeof(h));
	h.type = TRD_VW_WRITE;
	h.src_app = 5;
	h.dst_app = 1;
	h.dst_proc = 0;
	h.msg_id = 1;
	h.len = 64;
	h.tag = 64;
	h.roff = info[1] + 128;
	const uint64_t guesses[] = {info[0] ^ 1, 0, 0x0123456789abcdefULL, info[0] + 1};
	for (unsigned int i = 0; i < RTE_DIM(guesses); i++) {
		h.rkey = guesses[i];
		node_write(2, &h, data, 64);
		m = node_recv(2, &r);
		T_EQ(r.type, TRD_VW_WRITE_ACK);
		T_EQ(r.status, -EACCES);
		trd_msg_free(m);
	}
	/* the right key, out of the region by one byte; a chunk outside its own op */
	h.rkey = info[0];
	h.roff = info[1] + RMA_LEN - 63;
	node_write(2, &h, data, 64);
	m = node_recv(2, &r);
	T_EQ(r.status, -EACCES);
	trd_msg_free(m);
	h.roff = info[1];
	h.tag = 32; /* the op is shorter than its chunk */
	node_write(2, &h, data, 64);
	m = node_recv(2, &r);
	T_EQ(r.status, -EACCES);
	trd_msg_free(m);
	/* malformed: the header says 64 bytes, 32 follow (dropped unanswered) */
	h.tag = 64;
	node_write(2, &h, data, 32);
	pump_for_stat(TRD_VNI_SVC_STAT_BAD_WIRE, wire0 + 2, 2000000);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_RMA_DENIED), denied0 + 6);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_WIRE), wire0 + 2);
	child_mem(pid, info[1], mem);
	T_ASSERT(memcmp(mem, want, RMA_LEN) == 0, "a refused WRITE changed the process's memory");
	/* the key is the capability: with it, a WRITE lands (so the checks above could fail) */
	h.roff = info[1] + 100;
	node_write(2, &h, data, 64);
	m = node_recv(2, &r);
	T_EQ(r.status, 0);
	trd_msg_free(m);
	child_mem(pid, info[1], mem);
	memset(want + 100, 0xee, 64);
	T_ASSERT(memcmp(mem, want, RMA_LEN) == 0, "the WRITE landed exactly");

	/* an ATOMIC asked twice (its answer was lost, the origin asks again: same message id and
	 * key) is applied once and both answers carry the same old value; another op is applied */
	{
		struct trd_vw_atomic a = {.op = TRD_VNI_AOP_SUM, .size = 8, .operand = 5};
		uint8_t ab[TRD_VW_ATOMIC_LEN];
		uint64_t rep0 = stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS), v0, v1;
		struct trd_vw_hdr ah = h;

		trd_vw_atomic_encode(ab, &a);
		ah.type = TRD_VW_ATOMIC;
		ah.len = 8;
		ah.tag = 0x1ec0ffee5eed0001ull; /* the origin engine's incarnation */
		ah.rkey = info[0];
		ah.roff = info[1] + 8;
		ah.msg_id = 77;
		ah.grant_id = 77; /* its atomic sequence number towards this node */
		ah.key = 0x5eed;
		memcpy(&v0, want + 8, 8);
		for (int i = 0; i < 3; i++) {
			if (i == 2)
				ah.msg_id = ah.grant_id = 78; /* a new op */
			node_write(2, &ah, ab, sizeof(ab));
			m = node_recv(2, &r);
			T_EQ(r.type, TRD_VW_ATOMIC_RESP);
			T_EQ(r.status, 0);
			T_EQ(r.data, i < 2 ? v0 : v0 + 5);
			trd_msg_free(m);
		}
		T_EQ(stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS), rep0 + 1);
		child_mem(pid, info[1], mem);
		memcpy(&v1, mem + 8, 8);
		T_EQ(v1, v0 + 10);
		v1 = v0 + 10;
		memcpy(want + 8, &v1, 8);
		T_ASSERT(memcmp(mem, want, RMA_LEN) == 0, "a repeated ATOMIC was applied twice");

		/* a late duplicate: an op with an older sequence number on a slot whose newer op
		 * was served (the origin opens a number only once the one a window before it
		 * ended, so the old op ended there) is dropped unanswered and not applied
		 * (rma_stale); the newer op's repeat is still answered from memory */
		uint64_t stale0 = stat_of(TRD_VNI_SVC_STAT_RMA_STALE);
		struct trd_msg *none = NULL;

		ah.msg_id = 79 | 5u << 16;
		ah.grant_id = 79 + 4096;
		node_write(2, &ah, ab, sizeof(ab));
		m = node_recv(2, &r);
		T_EQ(r.status, 0);
		T_EQ(r.data, v0 + 10);
		trd_msg_free(m);
		ah.msg_id = 79 | 4u << 16;
		ah.grant_id = 79;
		node_write(2, &ah, ab, sizeof(ab));
		pump_for_stat(TRD_VNI_SVC_STAT_RMA_STALE, stale0 + 1, 2000000);
		T_EQ(stat_of(TRD_VNI_SVC_STAT_RMA_STALE), stale0 + 1);
		T_EQ(trd_rec_fifo_poll(trd_rec_fifo(nd[2], 0), &none, 1), 0);
		ah.msg_id = 79 | 5u << 16;
		ah.grant_id = 79 + 4096;
		node_write(2, &ah, ab, sizeof(ab));
		m = node_recv(2, &r);
		T_EQ(r.status, 0);
		T_EQ(r.data, v0 + 10);
		trd_msg_free(m);
		T_EQ(stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS), rep0 + 2);
		child_mem(pid, info[1], mem);
		memcpy(&v1, mem + 8, 8);
		T_EQ(v1, v0 + 15);
		memcpy(want + 8, &v1, 8);
	}

	/* the process's atomic to 1:9: forged answers are dropped, the real one completes it */
	m = node_recv(1, &rq);
	T_EQ(rq.type, TRD_VW_ATOMIC);
	T_EQ(m->len, TRD_VW_HDR_LEN + TRD_VW_ATOMIC_LEN);
	trd_msg_free(m);
	bad0 = stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES);
	r = answer_to(&rq, TRD_VW_ATOMIC_RESP, 0);
	r.roff = rq.roff;
	r.data = 666;
	node_send(2, &r); /* from node 2 */
	r.key ^= 0x100;   /* without the key */
	node_send(1, &r);
	r.key = rq.key;
	r.status = -EIO; /* a status the protocol does not define */
	node_send(1, &r);
	r.status = 0;
	r.type = TRD_VW_WRITE_ACK; /* the wrong kind of answer */
	node_send(1, &r);
	pump_for_stat(TRD_VNI_SVC_STAT_BAD_REPLIES, bad0 + 4, 2000000);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_REPLIES), bad0 + 4);
	T_ASSERT(read(up[0], res, sizeof(res)) < 0, "a forged answer completed the atomic");
	r.type = TRD_VW_ATOMIC_RESP;
	r.data = 1234;
	node_send(1, &r);
	read_pipe(up[0], res, sizeof(res));
	T_EQ((int64_t)res[0], 0);
	T_EQ(res[1], 1234);
	T_EQ(write(down[1], "x", 1), 1);
	T_EQ(reap_child(pid, WAIT_US), 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	printf("rma: 6 forged WRITEs refused before any access (rma_denied), 1 malformed dropped, "
	       "memory untouched; 4 forged atomic answers dropped, the real one gave the old value\n");
}

/* ---- cmds: a process that writes its segment by hand ---- */

struct raw_vni {
	int fd, fds[3];
	uint8_t *base;
	struct trd_vni_seg *seg;
	struct rte_ring *cmdq, *cplq;
	uint32_t qmask;
	struct trd_vni_sctx *sctx;
	struct trd_vni_rctx *rctx;
	uint8_t *ctxr, *pool;
};

static int
raw_open(struct raw_vni *r, uint32_t app, uint32_t proc)
{
	struct trd_vni_sock_register req = {.op = TRD_VNI_SOCK_REGISTER,
					    .version = TRD_VNI_VERSION,
					    .app = app,
					    .proc = proc,
					    .pool_size = 1 << 20,
					    .n_send = 8,
					    .n_recv = 8,
					    .n_doorbells = 4,
					    .short_max = 512};
	struct trd_vni_sock_answer ans;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &ans, .iov_len = sizeof(ans)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	r->fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(r->fd, &req, sizeof(req), 0) != sizeof(req) ||
	    recvmsg(r->fd, &mh, 0) != sizeof(ans) || ans.status != 0)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm == NULL || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(r->fds, CMSG_DATA(cm), sizeof(r->fds));
	r->base = mmap(NULL, ans.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fds[0], 0);
	if (r->base == MAP_FAILED)
		return -1;
	r->seg = (struct trd_vni_seg *)r->base;
	r->cmdq = (struct rte_ring *)(r->base + r->seg->cmdq_off);
	r->cplq = (struct rte_ring *)(r->base + r->seg->cplq_off);
	r->qmask = r->seg->cmdq_size - 1;
	r->sctx = (struct trd_vni_sctx *)(r->base + r->seg->sctx_off);
	r->rctx = (struct trd_vni_rctx *)(r->base + r->seg->rctx_off);
	r->ctxr = r->base + r->seg->ctxr_off;
	r->pool = r->base + r->seg->pool_off;
	return 0;
}

/* Enqueue by hand with the real mask (the header's may have been overwritten). */
static void
raw_post(struct raw_vni *r, uint32_t op, uint32_t idx)
{
	struct trd_vni_cmd c = {.op = op, .idx = idx};
	uint64_t *slots = (uint64_t *)(void *)&r->cmdq[1];
	uint32_t p = r->cmdq->prod.head;

	memcpy(&slots[p & r->qmask], &c, sizeof(c));
	__atomic_store_n(&r->cmdq->prod.head, p + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cmdq->prod.tail, p + 1, __ATOMIC_RELEASE);
}

/* Take one completion by hand (3 s at most). */
static int
raw_cpl(struct raw_vni *r, struct trd_vni_cqe *e)
{
	struct trd_vni_cqe *slots = (struct trd_vni_cqe *)(void *)&r->cplq[1];
	uint64_t deadline = trd_time_us() + 3000000;

	while (trd_time_us() < deadline) {
		uint32_t c = r->cplq->cons.head;

		if (__atomic_load_n(&r->cplq->prod.tail, __ATOMIC_ACQUIRE) != c) {
			*e = slots[c & r->qmask];
			r->cplq->cons.head = r->cplq->cons.tail = c + 1;
			return 0;
		}
		usleep(100);
	}
	return -1;
}

static int
hostile_app(void *arg)
{
	struct trd_vni_addr self = {.app = 4, .proc = 0};
	struct raw_vni r;
	struct trd_vni_cqe e;
	char b;

	RTE_SET_USED(arg);
	if (raw_open(&r, self.app, self.proc) != 0)
		return 20;
	/* 0: a pool offset whose sum with the pool's address overflows */
	memset(&r.sctx[0], 0, sizeof(r.sctx[0]));
	r.sctx[0].len = 100;
	r.sctx[0].buf = 0x8000000000000000ULL;
	r.sctx[0].dst_app = 4;
	raw_post(&r, TRD_VNI_CMD_SEND, 0);
	/* 1: a buffer that runs past the pool's end */
	r.sctx[1] = r.sctx[0];
	r.sctx[1].buf = r.seg->pool_size - 10;
	raw_post(&r, TRD_VNI_CMD_SEND, 1);
	/* 2: inline data longer than the context's slot */
	r.sctx[2] = r.sctx[0];
	r.sctx[2].flags = TRD_VNI_SF_INLINE;
	r.sctx[2].len = 0xfffffff0u;
	raw_post(&r, TRD_VNI_CMD_SEND, 2);
	/* 3: a multicast list beyond the slot */
	r.sctx[3] = r.sctx[0];
	r.sctx[3].buf = 0;
	r.sctx[3].flags = TRD_VNI_SF_MCAST;
	r.sctx[3].n_dst = 3;
	r.sctx[3].dst_off = 0xfffffff8u;
	raw_post(&r, TRD_VNI_CMD_SEND, 3);
	/* 4: a doorbell beyond the array */
	r.sctx[4] = r.sctx[0];
	r.sctx[4].buf = 0;
	r.sctx[4].flags = TRD_VNI_F_DOORBELL;
	r.sctx[4].doorbell = 0x80000000u;
	raw_post(&r, TRD_VNI_CMD_SEND, 4);
	/* 5: a receive buffer whose end wraps */
	memset(&r.rctx[0], 0, sizeof(r.rctx[0]));
	r.rctx[0].buf = 0xffffffffffffff00ULL;
	r.rctx[0].cap = 0x200;
	raw_post(&r, TRD_VNI_CMD_RECV, 0);
	/* 6..10: claims (docs/vni.md, "Claim and discard"): DISCARD alone, all three flags, a
	 * handle beyond the grant table, a handle of a free grant, a claimed receive whose
	 * buffer wraps */
	static const struct {
		uint32_t flags;
		uint64_t claim, buf;
	} hc[5] = {
		{TRD_VNI_RF_DISCARD, 0, 0},
		{TRD_VNI_RF_PROBE | TRD_VNI_RF_CLAIM | TRD_VNI_RF_DISCARD, 0, 0},
		{TRD_VNI_RF_CLAIM, 0xdeadbeef0000ffffULL, 0},
		{TRD_VNI_RF_CLAIM | TRD_VNI_RF_DISCARD, (1ULL << 32) | 5, 0},
		{TRD_VNI_RF_CLAIM, (1ULL << 32) | 5, 0xffffffffffffff00ULL},
	};
	for (uint32_t i = 0; i < 5; i++) {
		memset(&r.rctx[2 + i], 0, sizeof(r.rctx[0]));
		r.rctx[2 + i].flags = hc[i].flags;
		r.rctx[2 + i].claim = hc[i].claim;
		r.rctx[2 + i].buf = hc[i].buf;
		r.rctx[2 + i].cap = hc[i].buf != 0 ? 0x200 : 0;
		raw_post(&r, TRD_VNI_CMD_RECV, 2 + i);
	}
	/* counted only (no context to complete): indices out of range, an unknown opcode */
	raw_post(&r, TRD_VNI_CMD_SEND, 0x7fffffffu);
	raw_post(&r, TRD_VNI_CMD_RECV, 8);
	raw_post(&r, 77, 0);
	/* answers to CMA requests the engine never made (cma_bad): for receive 0, and for
	 * one out of range */
	raw_post(&r, TRD_VNI_CMD_CMA_OK, 0);
	raw_post(&r, TRD_VNI_CMD_CMA_OFF, 0x7fffffffu);
	for (int k = 0; k < 11; k++) {
		if (raw_cpl(&r, &e) != 0)
			return 21;
		if (e.status != -EINVAL || e.idx != (uint32_t)(k < 5 ? k : k == 5 ? 0 : k - 4))
			return 22;
	}
	/* the rings' sizes and masks overwritten: the engine uses its own */
	r.cmdq->size = r.cmdq->mask = r.cmdq->capacity = 0xffffffffu;
	r.cplq->size = r.cplq->mask = r.cplq->capacity = 0xffffffffu;
	r.rctx[1] = r.rctx[0];
	r.rctx[1].src_app = 4;
	r.rctx[1].buf = 4096;
	r.rctx[1].cap = 4096;
	r.rctx[1].tag = 9;
	raw_post(&r, TRD_VNI_CMD_RECV, 1);
	memset(&r.sctx[5], 0, sizeof(r.sctx[5]));
	r.sctx[5].flags = TRD_VNI_SF_INLINE;
	r.sctx[5].len = 5;
	r.sctx[5].dst_app = 4;
	r.sctx[5].tag = 9;
	memcpy(r.ctxr + 5 * r.seg->slot_size, "hello", 5);
	raw_post(&r, TRD_VNI_CMD_SEND, 5);
	for (int k = 0; k < 2; k++)
		if (raw_cpl(&r, &e) != 0 || e.status != 0)
			return 23;
	if (memcmp(r.pool + 4096, "hello", 5) != 0)
		return 24;
	/* collectives (version 4, docs/vni.md "Collectives"): offsets whose sum with the pool
	 * overflows or that run past its end, a count over the limit, an unknown kind, an unknown
	 * flag, a doorbell beyond the array: each one completion with its errno, the context free
	 * again, nothing posted to the node; an index out of range is counted only */
	{
		static const struct {
			uint32_t flags, count, doorbell;
			uint8_t kind;
			uint64_t src, dst;
			int status;
		} cc[6] = {
			{0, 4, 0, 1, 0x8000000000000000ULL, 0, -EINVAL},
			{0, 4, 0, 1, 0, (1 << 20) - 16, -EINVAL},
			{0, 0xffffffffu, 0, 1, 0, 0, -EMSGSIZE},
			{0, 4, 0, 9, 0, 0, -EINVAL},
			{0x40, 4, 0, 1, 0, 0, -EINVAL},
			{TRD_VNI_F_DOORBELL, 4, 0x80000000u, 1, 0, 64, -EINVAL},
		};

		raw_post(&r, TRD_VNI_CMD_COLL, 0x7fffffffu); /* taken before the next ones */
		for (unsigned int i = 0; i < RTE_DIM(cc); i++) {
			struct trd_vni_cctx *x = (struct trd_vni_cctx *)(void *)&r.sctx[6];

			memset(x, 0, sizeof(*x));
			x->flags = cc[i].flags;
			x->kind = cc[i].kind;
			x->op = 1;
			x->dtype = 1;
			x->count = cc[i].count;
			x->doorbell = cc[i].doorbell;
			x->src = cc[i].src;
			x->dst = cc[i].dst;
			raw_post(&r, TRD_VNI_CMD_COLL, 6);
			if (raw_cpl(&r, &e) != 0 || e.kind != TRD_VNI_CPL_COLL || e.idx != 6 ||
			    e.status != cc[i].status || e.len != 0)
				return 26;
		}
	}
	/* a handle's collective (TRD_VNI_CF_MU, its end told on a counter of its own) from an
	 * interface without messaging-unit objects: no counter of its to count on, so the engine
	 * only marks the context ended, and writes no completion (the next one seen is the
	 * next command's) */
	{
		struct trd_vni_cctx *x = (struct trd_vni_cctx *)(void *)&r.sctx[7];
		uint64_t deadline = trd_time_us() + 3000000;

		memset(x, 0, sizeof(*x));
		x->flags = TRD_VNI_CF_MU;
		x->kind = 1;
		x->op = 1;
		x->dtype = 1;
		x->count = 4;
		x->ctr = 1;
		x->dst = 64;
		raw_post(&r, TRD_VNI_CMD_COLL, 7);
		while (!__atomic_load_n(&x->ended, __ATOMIC_ACQUIRE)) {
			if (trd_time_us() > deadline)
				return 27;
			usleep(100);
		}
		x = (struct trd_vni_cctx *)(void *)&r.sctx[6];
		memset(x, 0, sizeof(*x));
		x->kind = 9;
		raw_post(&r, TRD_VNI_CMD_COLL, 6);
		if (raw_cpl(&r, &e) != 0 || e.kind != TRD_VNI_CPL_COLL || e.idx != 6 ||
		    e.status != -EINVAL)
			return 28;
	}
	/* a producer index a million ahead: the engine closes the interface */
	r.cmdq->prod.tail += 1u << 20;
	{
		struct pollfd pf = {.fd = r.fd, .events = POLLIN};

		if (poll(&pf, 1, 3000) == 1 && recv(r.fd, &b, 1, MSG_DONTWAIT) == 0)
			return 0;
	}
	return 25;
}

static int
polite_app(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 4,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr self = {.app = 4, .proc = 0};
	struct trd_vni *v;
	struct trd_vni_cpl cpl[2];
	char *buf;
	int n = 0;

	RTE_SET_USED(arg);
	v = trd_vni_open(&c);
	if (v == NULL)
		return 30;
	buf = trd_vni_alloc(v, 64);
	if (buf == NULL || trd_vni_recv(v, self, 3, 0, buf, 64, -1, 0) != 0 ||
	    trd_vni_send(v, self, 3, "again", 5, -1, 0) != 0)
		return 31;
	while (n < 2) {
		int k = trd_vni_wait(v, cpl + n, 2 - (unsigned int)n, 10000);

		if (k <= 0)
			return 32;
		n += k;
	}
	if (cpl[0].status != 0 || cpl[1].status != 0 || memcmp(buf, "again", 5) != 0)
		return 33;
	trd_vni_close(v);
	return 0;
}

/* One raw registration of @p version for (@p app, @p proc): the answer's size and status (and
 * identity) in *ans; its descriptors closed, the connection closed (detach). The size, or -1. */
static ssize_t
raw_register(uint32_t version, uint32_t app, uint32_t proc, struct trd_vni_sock_answer *ans)
{
	struct trd_vni_sock_register req = {.op = TRD_VNI_SOCK_REGISTER,
					    .version = version,
					    .app = app,
					    .proc = proc,
					    .pool_size = 1 << 16,
					    .n_send = 4,
					    .n_recv = 4,
					    .short_max = 64};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = ans, .iov_len = sizeof(*ans)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	memset(ans, 0, sizeof(*ans));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, &req, sizeof(req), 0) != sizeof(req))
		return -1;
	n = recvmsg(fd, &mh, 0);
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int x;

				memcpy(&x, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				close(x);
			}
	close(fd);
	return n;
}

/* An engine before version 3, as the new library meets it: it answers a version 3 request
 * with its version 2 answer, -EPROTO, "unknown request or version". */
static void
old_engine(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct trd_vni_sock_register req;
	struct trd_vni_sock_answer a = {.op = TRD_VNI_SOCK_REGISTERED, .status = -EPROTO};
	int l = socket(AF_UNIX, SOCK_SEQPACKET, 0), c;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(a.reason, sizeof(a.reason), "unknown request or version");
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 1) != 0)
		_exit(1);
	c = accept(l, NULL, NULL);
	if (c < 0 || recv(c, &req, sizeof(req), 0) != sizeof(req) ||
	    send(c, &a, TRD_VNI_ANSWER_V2_SIZE, 0) != TRD_VNI_ANSWER_V2_SIZE)
		_exit(2);
	_exit(req.version == TRD_VNI_VERSION ? 0 : 3);
}

/* The attach protocol's versions: this engine serves versions 3 to 5 only; a request of any other
 * version is refused with -EPROTO in an answer its library can read, naming both versions;
 * a version 3 request for any process gets one the topology places here, named in the
 * answer with the engine's versions. And the library meeting an older engine says so. */
static int
versions_app(void *arg)
{
	struct trd_vni_sock_answer a;
	char path[108];
	int st = -1;
	pid_t pid;

	char want[3][64];

	RTE_SET_USED(arg);
	snprintf(want[0], sizeof(want[0]), "library speaks 1, this engine %u", TRD_VNI_VERSION);
	snprintf(want[1], sizeof(want[1]), "library speaks 2, this engine %u", TRD_VNI_VERSION);
	snprintf(want[2], sizeof(want[2]), "library speaks %u, this engine %u", TRD_VNI_VERSION + 1,
		 TRD_VNI_VERSION);
	if (raw_register(1, 4, 0, &a) != TRD_VNI_ANSWER_V1_SIZE || a.status != -EPROTO ||
	    strstr(a.reason, want[0]) == NULL)
		return 1;
	if (raw_register(2, 3, TRD_VNI_ANY, &a) != TRD_VNI_ANSWER_V2_SIZE || a.status != -EPROTO ||
	    strstr(a.reason, want[1]) == NULL)
		return 2;
	if (raw_register(TRD_VNI_VERSION + 1, 3, 0, &a) != sizeof(a) || a.status != -EPROTO ||
	    a.version != TRD_VNI_VERSION || a.version_min != TRD_VNI_VERSION_MIN ||
	    strstr(a.reason, want[2]) == NULL)
		return 3;
	/* version 3 (no collectives) and 4 (no messaging-unit objects) are still served */
	if (raw_register(3, 3, TRD_VNI_ANY, &a) != sizeof(a) || a.status != 0 ||
	    a.version != TRD_VNI_VERSION || a.version_min != 3)
		return 8;
	if (raw_register(4, 4, TRD_VNI_ANY, &a) != sizeof(a) || a.status != 0 ||
	    a.version != TRD_VNI_VERSION)
		return 9;
	if (raw_register(TRD_VNI_VERSION, 3, TRD_VNI_ANY, &a) != sizeof(a) || a.status != 0 ||
	    a.app != 3 || (a.proc != 0 && a.proc != 1) || a.version != TRD_VNI_VERSION)
		return 4;
	if (raw_register(TRD_VNI_VERSION, 5, TRD_VNI_ANY, &a) != sizeof(a) ||
	    a.status != -EADDRNOTAVAIL)
		return 5;
	/* the library against an older engine */
	snprintf(path, sizeof(path), "%s.old", sock_path);
	unlink(path);
	pid = fork();
	if (pid == 0)
		old_engine(path);
	for (int i = 0; i < 1000 && access(path, F_OK) != 0; i++)
		poll(NULL, 0, 5); /* the old engine binds: 5 s at most */
	{
		struct trd_vni_conf c = {.socket = path, .app = 3, .proc = 0};
		struct trd_vni *v = trd_vni_open(&c);

		if (v != NULL || errno != EPROTO ||
		    strstr(trd_vni_open_error(), "the engine 2 or older") == NULL ||
		    strstr(trd_vni_open_error(), "unknown request or version") == NULL) {
			fprintf(stderr, "versions: open %p errno %d: \"%s\"\n", (void *)v, errno,
				trd_vni_open_error());
			return 6;
		}
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 7;
	unlink(path);
	return 0;
}

static void
test_cmds(void)
{
	uint64_t bad0 = stat_of(TRD_VNI_SVC_STAT_BAD_CMDS);
	int rc;

	rc = reap_child(spawn(hostile_app, NULL), WAIT_US);
	T_ASSERT(rc == 0, "the hostile application saw the engine misbehave (%d)", rc);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_CMDS), bad0 + 23);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_COLLS), 8);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_COLL_DONE), 0);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_CMA_BAD), 2);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_CMA_REFUSED), 0);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_BAD_QUEUES), 1);
	pump_until_stat(TRD_VNI_SVC_STAT_RECLAIMED, 1);
	T_EQ(reap_child(spawn(polite_app, NULL), WAIT_US), 0);
	T_EQ(reap_child(spawn(versions_app, NULL), WAIT_US), 0);
	printf("cmds: 2 answers to CMA requests never made counted, "
	       "21 hostile commands refused (11 completed with -EINVAL; 5 bad claims; 6 bad "
	       "collectives with their errno), overwritten ring "
	       "headers ignored, a broken queue closed its interface; the engine served the next "
	       "process; attach protocol versions 3 to 5 served, 1, 2 and 6 refused naming both "
	       "versions, an older engine named by the library\n");
}

/* ---- owner ---- */

struct who {
	uid_t uid;
	uint32_t app, proc;
	int hold_fd; /* >= 0: stay attached until this pipe closes */
	int ready_fd;
};

static int
claim(void *arg)
{
	const struct who *w = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = w->app,
				 .proc = w->proc,
				 .pool_size = 1 << 16,
				 .connect_timeout_ms = 5000};
	struct trd_vni *v;
	char b;

	if (w->uid != 0 && (setgroups(0, NULL) != 0 || setgid(w->uid) != 0 || setuid(w->uid) != 0))
		return 100;
	v = trd_vni_open(&c);
	if (v == NULL)
		return errno == 0 ? 101 : errno;
	if (w->hold_fd >= 0) {
		if (write(w->ready_fd, "r", 1) != 1 || read(w->hold_fd, &b, 1) < 0)
			return 102;
	}
	trd_vni_close(v);
	return 0;
}

static int
claim_as(uid_t uid, uint32_t app, uint32_t proc)
{
	struct who w = {.uid = uid, .app = app, .proc = proc, .hold_fd = -1, .ready_fd = -1};

	return reap_child(spawn(claim, &w), WAIT_US);
}

static void
test_owner(void)
{
	struct who holder = {.uid = 0, .app = 3, .proc = 0};
	uint64_t denied0 = stat_of(TRD_VNI_SVC_STAT_DENIED);
	int hold[2], ready[2];
	pid_t pid;
	char b;

	if (getuid() != 0) {
		printf("SKIP: owner needs root (it becomes another user in a child)\n");
		exit(TEST_SKIP);
	}
	/* the socket 0660 root:root: another user cannot even connect */
	T_EQ(claim_as(NOBODY, 1, 0), EACCES);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_ATTACHED), 0);
	/* open to every user: the owners decide */
	T_EQ(chmod(sock_path, 0666), 0);
	T_EQ(claim_as(NOBODY, 2, 0), 0);      /* app 2 belongs to nobody */
	T_EQ(claim_as(0, 2, 1), EACCES);      /* root is no exception */
	T_EQ(claim_as(NOBODY, 1, 0), EACCES); /* app 1 belongs to group 0 */
	/* an automatic process number is claimed under the same rules */
	T_EQ(claim_as(0, 2, TRD_VNI_ANY), EACCES);
	T_EQ(claim_as(NOBODY, 1, TRD_VNI_ANY), EACCES);
	T_EQ(claim_as(0, 1, 0), 0);
	/* app 3 has no owner: whoever attaches first holds it while attached */
	T_EQ(pipe(hold), 0);
	T_EQ(pipe2(ready, O_NONBLOCK), 0);
	holder.hold_fd = hold[0];
	holder.ready_fd = ready[1];
	pid = spawn(claim, &holder);
	close(hold[0]);
	for (uint64_t deadline = trd_time_us() + WAIT_US; read(ready[0], &b, 1) != 1;) {
		T_ASSERT(trd_time_us() < deadline, "the holder did not attach");
		pump();
	}
	T_EQ(claim_as(NOBODY, 3, 1), EACCES); /* another user, while root's 3:0 is attached */
	T_EQ(claim_as(0, 3, 1), 0);           /* the same user may */
	T_EQ(write(hold[1], "x", 1), 1);
	T_EQ(reap_child(pid, WAIT_US), 0);
	close(hold[1]);
	pump_until_stat(TRD_VNI_SVC_STAT_DETACHED, 4);
	T_EQ(claim_as(NOBODY, 3, 1), 0); /* free again once root's processes left */
	T_EQ(stat_of(TRD_VNI_SVC_STAT_DENIED), denied0 + 5);
	close(ready[0]);
	close(ready[1]);
	printf("owner: a 0660 socket refuses other users; app 2 (owner uid %d) refused root, app "
	       "1 (owner gid 0) refused uid %d, app 3 (no owner) refused uid %d while root's "
	       "process was attached; %llu registrations denied\n",
	       NOBODY, NOBODY, NOBODY, (unsigned long long)stat_of(TRD_VNI_SVC_STAT_DENIED));
}

/* ---- rma_refused ---- */

#define REFUSED_OPS 12
#define REFUSED_LEN (64u << 10)

/* 3:0 posts REFUSED_OPS writes and reads of 64 KiB at once to 3:1, which never attaches:
 * every one must end with -ECONNREFUSED (the engine asks again until noproc_ms). */
static int
refused_app(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr dst = {.app = 3, .proc = 1};
	uint8_t *buf = calloc(1, REFUSED_LEN);
	struct trd_vni *v = trd_vni_open(&c);
	unsigned int done = 0;

	RTE_SET_USED(arg);
	if (v == NULL || buf == NULL)
		return 10;
	for (unsigned int i = 0; i < REFUSED_OPS; i++) {
		int rc = (i & 1) ? trd_vni_read(v, dst, buf, REFUSED_LEN, 0x10000, 0x77, -1, i)
				 : trd_vni_write(v, dst, buf, REFUSED_LEN, 0x10000, 0x77, -1, i);

		if (rc != 0)
			return 11;
	}
	while (done < REFUSED_OPS) {
		struct trd_vni_cpl cpl[8];
		int n = trd_vni_wait(v, cpl, 8, 20000);

		if (n <= 0)
			return 12;
		for (int k = 0; k < n; k++)
			if (cpl[k].status != -ECONNREFUSED)
				return 13;
		done += (unsigned int)n;
	}
	trd_vni_close(v);
	free(buf);
	return 0;
}

/* Many one-sided ops refused at once, then the process leaves: its interface must be released
 * (a scheduler pass that gave up on a run of refused ops used to keep a reference to it, so
 * the dead interface stayed in the table for ever). */
static void
test_rma_refused(void)
{
	uint64_t det0 = stat_of(TRD_VNI_SVC_STAT_DETACHED), deadline;
	int rc = reap_child(spawn(refused_app, NULL), WAIT_US);

	T_ASSERT(rc == 0, "the application saw its refused ops end badly (%d)", rc);
	pump_until_stat(TRD_VNI_SVC_STAT_DETACHED, det0 + 1);
	deadline = trd_time_us() + WAIT_US;
	while (trd_vni_svc_n_ifs(vs) != 0 && trd_time_us() < deadline)
		pump();
	T_EQ(trd_vni_svc_n_ifs(vs), 0);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_RMA_DONE), stat_of(TRD_VNI_SVC_STAT_RMA_OPS));
	printf("rma_refused: %u one-sided ops to a process that never attached ended with "
	       "-ECONNREFUSED; the interface was released once its process left\n",
	       REFUSED_OPS);
}

/* ---- pid_exit ---- */

struct pid_exit_pipes {
	int ready[2]; /* the grandchild holds the socket */
	int hold[2];  /* it leaves when this closes */
};

/* 3:0 attaches, forks a child that inherits the socket and keeps it open, and exits. */
static int
pid_exit_app(void *arg)
{
	struct pid_exit_pipes *pp = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni *v = trd_vni_open(&c);
	pid_t g;

	if (v == NULL)
		return 10;
	g = fork();
	if (g < 0)
		return 11;
	if (g == 0) {
		char b;

		close(pp->hold[1]);
		if (write(pp->ready[1], "r", 1) != 1)
			_exit(1);
		(void)!read(pp->hold[0], &b, 1); /* until the test closes the pipe */
		_exit(0);
	}
	return 0; /* without trd_vni_close: the socket lives on in the child */
}

/* The attached process exits while a child it forked keeps the socket open: the engine must
 * end the interface (its pid may be given to another process, whose memory the engine would
 * then read and write for the interface's peers). */
static void
test_pid_exit(void)
{
	uint64_t det0 = stat_of(TRD_VNI_SVC_STAT_DETACHED);
	uint64_t att0 = stat_of(TRD_VNI_SVC_STAT_ATTACHED);
	struct pid_exit_pipes pp;
	char b;
	int rc;

	T_EQ(pipe(pp.ready), 0);
	T_EQ(pipe(pp.hold), 0);
	rc = reap_child(spawn(pid_exit_app, &pp), WAIT_US);
	T_ASSERT(rc == 0, "the application could not attach and fork (%d)", rc);
	close(pp.hold[0]);
	read_pipe(pp.ready[0], &b, 1); /* the grandchild holds the socket now */
	/* the interface was registered; the service may already have found its process gone
	 * while the test pumped for the child's exit, so only the count of attaches is sure */
	T_EQ(stat_of(TRD_VNI_SVC_STAT_ATTACHED), att0 + 1);
	pump_until_stat(TRD_VNI_SVC_STAT_DETACHED, det0 + 1);
	T_EQ(trd_vni_svc_n_ifs(vs), 0);
	close(pp.hold[1]); /* the grandchild leaves */
	printf("pid_exit: an interface whose process exited was ended although a child it forked "
	       "kept its socket open\n");
}

/* ---- coll_death ---- */

#define CD_N 4000 /* elements: 23 pieces */

/* 4:0 posts an allreduce of the whole torus (its node's part), says so, and waits to be
 * killed. */
static int
coll_death_app(void *arg)
{
	int *up = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 4,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni *v = trd_vni_open(&c);
	int64_t *x, *y;

	if (v == NULL)
		return 40;
	x = trd_vni_alloc(v, CD_N * 8);
	y = trd_vni_alloc(v, CD_N * 8);
	if (x == NULL || y == NULL)
		return 41;
	for (int i = 0; i < CD_N; i++)
		x[i] = i + 1;
	if (trd_vni_allreduce(v, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, x, y, CD_N, -1, 1) != 0)
		return 42;
	if (write(*up, "p", 1) != 1)
		return 43;
	for (;;)
		pause(); /* until SIGKILL */
}

/* A process killed while its node's part of a collective is in flight: the other nodes are
 * not held up and get the right result (its vector included), and the engine keeps the
 * interface's segment (the engine still reads and writes its pool) until the collective ended
 * at its node, then releases it. Under ASan a release before that is a use after free. */
static void
test_coll_death(void)
{
	uint64_t det0 = stat_of(TRD_VNI_SVC_STAT_DETACHED);
	uint64_t rec0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED);
	int64_t *buf[3] = {NULL, NULL, NULL};
	struct trd_mr *mr[3] = {NULL, NULL, NULL};
	uint16_t ctr[3] = {0, 0, 0};
	uint64_t deadline;
	int up[2], st;
	pid_t pid;
	char b;

	pipe_nb(up);
	pid = spawn(coll_death_app, &up[1]);
	read_pipe(up[0], &b, 1);
	pump_until_stat(TRD_VNI_SVC_STAT_COLLS, 1);
	T_EQ(kill(pid, SIGKILL), 0);
	T_EQ(waitpid(pid, &st, 0), pid);
	pump_until_stat(TRD_VNI_SVC_STAT_DETACHED, det0 + 1);
	for (int i = 0; i < 1000; i++)
		pump();
	/* dead, but held: the collective has not ended at node 0 */
	T_EQ(stat_of(TRD_VNI_SVC_STAT_RECLAIMED), rec0);
	T_EQ(trd_vni_svc_n_ifs(vs), 1);
	for (unsigned int r = 1; r < 3; r++) {
		struct trd_comb_req rq = {.kind = TRD_COMB_ALLREDUCE,
					  .op = TRD_COMB_SUM,
					  .dtype = TRD_COMB_I64,
					  .dims = TRD_COMB_TORUS,
					  .count = CD_N,
					  .job = 4}; /* the application of node 0's process */

		buf[r] = rte_zmalloc(NULL, 2 * CD_N * 8, 64);
		T_ASSERT(buf[r] != NULL, "rte_zmalloc");
		mr[r] = trd_mr_register(nd[r], buf[r], 2 * CD_N * 8, 0);
		T_ASSERT(mr[r] != NULL, "trd_mr_register");
		for (int i = 0; i < CD_N; i++)
			buf[r][i] = (int64_t)(r + 1) * (i + 1);
		T_EQ(trd_counter_alloc(nd[r], &ctr[r]), 0);
		T_EQ(trd_counter_set(nd[r], ctr[r], 1), 0);
		rq.counter = ctr[r];
		rq.src = buf[r];
		rq.dst = buf[r] + CD_N;
		T_EQ(trd_comb_post(nd[r], &rq), 0);
	}
	deadline = trd_time_us() + WAIT_US;
	for (;;) {
		int64_t a, c;

		T_EQ(trd_counter_read(nd[1], ctr[1], &a), 0);
		T_EQ(trd_counter_read(nd[2], ctr[2], &c), 0);
		if (a == 0 && c == 0)
			break;
		T_ASSERT(a >= 0 && c >= 0, "the collective failed (%lld, %lld)", (long long)a,
			 (long long)c);
		T_ASSERT(trd_time_us() < deadline, "the collective did not complete");
		pump();
	}
	for (unsigned int r = 1; r < 3; r++) {
		for (int i = 0; i < CD_N; i++)
			T_ASSERT(buf[r][CD_N + i] == 6 * (int64_t)(i + 1),
				 "node %u element %d: %lld", r, i, (long long)buf[r][CD_N + i]);
		trd_mr_deregister(mr[r]);
		trd_counter_free(nd[r], ctr[r]);
		rte_free(buf[r]);
	}
	/* ended at node 0 too: no completion (no process), the interface released */
	pump_until_stat(TRD_VNI_SVC_STAT_RECLAIMED, rec0 + 1);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_COLL_DONE), 1);
	T_EQ(trd_vni_svc_n_ifs(vs), 0);
	close(up[0]);
	close(up[1]);
	printf("coll_death: a process killed mid-allreduce: the other nodes got the sum with its "
	       "vector, its interface was held until the collective ended at its node, then "
	       "released\n");
}

/* ---- rma_lossy ---- */

#define LOSSY_OPS    8
#define LOSSY_LEN    (256u << 10)
#define LOSSY_ROUNDS 4
#define LOSSY_ATOMS  48

/* 3:0 writes LOSSY_OPS x 256 KiB at once into its own region (the engine serves both ends),
 * then reads every byte back at once into a second buffer: far more chunks in flight than the
 * test's reception FIFO holds, so frames are dropped; every op must still complete with 0 and
 * the bytes be exact. */
static int
lossy_app(void *arg)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .n_send = 64,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr self = {.app = 3, .proc = 0};
	size_t total = (size_t)LOSSY_OPS * LOSSY_LEN;

	_Static_assert(LOSSY_OPS + LOSSY_ATOMS <= 64, "send contexts");
	uint8_t *src = malloc(total), *win = calloc(1, total), *back = calloc(1, total);
	struct trd_vni *v = trd_vni_open(&c);
	uint64_t key = 0;

	RTE_SET_USED(arg);
	if (v == NULL || src == NULL || win == NULL || back == NULL)
		return 10;
	pattern(src, total, 5);
	if (trd_vni_mr_reg(v, win, total, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &key) !=
	    0)
		return 11;
	for (int pass = 0; pass < 2; pass++) {
		unsigned int done = 0;

		for (unsigned int i = 0; i < LOSSY_OPS; i++) {
			size_t off = (size_t)i * LOSSY_LEN;
			int rc = pass == 0 ? trd_vni_write(v, self, src + off, LOSSY_LEN,
							   (uintptr_t)win + off, key, -1, i)
					   : trd_vni_read(v, self, back + off, LOSSY_LEN,
							  (uintptr_t)win + off, key, -1, i);

			if (rc != 0)
				return 12;
		}
		while (done < LOSSY_OPS) {
			struct trd_vni_cpl cpl[8];
			int n = trd_vni_wait(v, cpl, 8, 20000);

			if (n <= 0)
				return 13; /* an op never completed */
			for (int k = 0; k < n; k++)
				if (cpl[k].status != 0)
					return 14;
			done += (unsigned int)n;
		}
	}
	if (memcmp(win, src, total) != 0)
		return 15;
	if (memcmp(back, src, total) != 0)
		return 16;
	/* atomics among the writes: LOSSY_ROUNDS x (LOSSY_OPS writes, then LOSSY_ATOMS sums of 1
	 * on one word) at once; every atomic completes with 0 and the word ends exact: an atomic
	 * whose request or answer was dropped is asked again and applied once */
	{
		uint64_t *ctr = calloc(1, 64), ckey = 0;

		if (ctr == NULL ||
		    trd_vni_mr_reg(v, ctr, 64, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE,
				   &ckey) != 0)
			return 17;
		for (int round = 0; round < LOSSY_ROUNDS; round++) {
			unsigned int done = 0;

			for (unsigned int i = 0; i < LOSSY_OPS; i++) {
				size_t off = (size_t)i * LOSSY_LEN;

				if (trd_vni_write(v, self, src + off, LOSSY_LEN,
						  (uintptr_t)win + off, key, -1, i) != 0)
					return 18;
			}
			for (unsigned int i = 0; i < LOSSY_ATOMS; i++)
				if (trd_vni_atomic(v, self, TRD_VNI_AOP_SUM, 8, 1, 0,
						   (uintptr_t)ctr, ckey, -1, 100 + i) != 0)
					return 19;
			while (done < LOSSY_OPS + LOSSY_ATOMS) {
				struct trd_vni_cpl cpl[8];
				int n = trd_vni_wait(v, cpl, 8, 30000);

				if (n <= 0)
					return 13;
				for (int k = 0; k < n; k++)
					if (cpl[k].status != 0)
						return cpl[k].kind == TRD_VNI_CPL_ATOMIC ? 20 : 14;
				done += (unsigned int)n;
			}
		}
		if (*ctr != (uint64_t)LOSSY_ROUNDS * LOSSY_ATOMS)
			return 21; /* an atomic was applied twice, or not at all */
	}
	trd_vni_close(v);
	return 0;
}

static uint64_t
fifo_drops(void)
{
	struct trd_node_stats ns;

	trd_node_stats_get(nd[0], &ns);
	return ns.drop[TRD_DROP_FIFO_FULL];
}

/* One-sided ops whose frames a full reception FIFO dropped are asked again (writes, reads)
 * once they heard nothing for SVC_RMA_STALL_US, instead of waiting for ever. */
static void
test_rma_lossy(void)
{
	uint64_t drops0 = fifo_drops(), retries0 = stat_of(TRD_VNI_SVC_STAT_RETRIES);
	uint64_t repeats0 = stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS);
	struct trd_vni_svc_conf bad = {
		.node = nd[1], .topo = topo, .socket = "/nonexistent/s", .rma_stall_us = 500001};
	pid_t pid;

	/* a silence longer than 0.5 s is refused: a target remembers an atomic for 20 of them */
	T_ASSERT(trd_vni_svc_create(&bad) == NULL && rte_errno == EINVAL,
		 "rma_stall_us 500001 not refused (%s)", rte_strerror(rte_errno));
	pid = spawn(lossy_app, NULL);
	int rc = reap_child(pid, 6 * WAIT_US); /* 60 s: stalls of 50 ms each */

	T_ASSERT(rc == 0, "one-sided ops through a lossy reception FIFO failed (%d)", rc);
	T_ASSERT(fifo_drops() > drops0, "no frame was dropped: the test tested nothing");
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_RETRIES) > retries0, "no op was asked again");
	printf("rma_lossy: %u writes and %u reads of 256 KiB completed byte-exact, then %u x (%u "
	       "writes and %u atomic sums) with the sum exact, although the reception FIFO "
	       "dropped %llu frames (%llu ops asked again, %llu atomics answered as repeats)\n",
	       LOSSY_OPS, LOSSY_OPS, LOSSY_ROUNDS, LOSSY_OPS, LOSSY_ATOMS,
	       (unsigned long long)(fifo_drops() - drops0),
	       (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_RETRIES) - retries0),
	       (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS) - repeats0));
}

/* ---- set-up ---- */

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0, 2:0, 2:1, 3:0, 3:1, 4:0\nx+ = 0\nx- = 1\n"
				"[node 1]\napp = 1\nproc = 9\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	static const struct trd_vni_svc_owner owners[] = {
		{.app = 2, .uid = NOBODY, .gid = -1},
		{.app = 1, .uid = -1, .gid = 0},
	};
	struct trd_vni_svc_conf vc;

	if (argc != 2) {
		fprintf(stderr,
			"usage: %s forge|cmds|owner|rma_forge|rma_refused|pid_exit|rma_lossy\n",
			argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.owners = owners;
	vc.n_owners = RTE_DIM(owners);
	if (strcmp(argv[1], "rma_refused") == 0)
		vc.noproc_ms = 300; /* the refused ops end sooner */
	if (strcmp(argv[1], "hdr_forge") == 0)
		vc.staging = 32 << 10; /* a LONG_LEN message does not fit */
	if (strcmp(argv[1], "rma_lossy") == 0)
		vc.rma_stall_us = 50000; /* lost frames asked again after 50 ms, not 0.5 s */
	/* its one-sided ops between processes of this engine go through the node's frames, and
	 * a small reception FIFO drops them */
	vc.rma_wire = strcmp(argv[1], "rma_lossy") == 0;
	vni_setup("hostile", topo_text, strcmp(argv[1], "rma_lossy") == 0 ? 256 : 1024, &vc);
	T_EQ(chmod(dir, 0755), 0); /* other users reach the socket; its own mode decides */
	if (strcmp(argv[1], "forge") == 0)
		test_forge();
	else if (strcmp(argv[1], "cmds") == 0)
		test_cmds();
	else if (strcmp(argv[1], "owner") == 0)
		test_owner();
	else if (strcmp(argv[1], "rma_forge") == 0)
		test_rma();
	else if (strcmp(argv[1], "rma_refused") == 0)
		test_rma_refused();
	else if (strcmp(argv[1], "pid_exit") == 0)
		test_pid_exit();
	else if (strcmp(argv[1], "rma_lossy") == 0)
		test_rma_lossy();
	else if (strcmp(argv[1], "data_forge") == 0)
		test_data_forge();
	else if (strcmp(argv[1], "hdr_forge") == 0)
		test_hdr_forge();
	else if (strcmp(argv[1], "coll_death") == 0)
		test_coll_death();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni %s\n", argv[1]);
	return 0;
}
