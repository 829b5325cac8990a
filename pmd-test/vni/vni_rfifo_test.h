/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sender and the reader's checks of test_vni_mu_rfifo.c (reception FIFOs of attached
 * processes), with vni_mu_test.h and vni_test.h: the sender S is a child that serves the
 * parent's commands (struct cmd, answered by struct reply on pipes), so the parent, which
 * polls the engines and reads their drop counters, decides what is sent when.
 */
#ifndef TRD_VNI_RFIFO_TEST_H
#define TRD_VNI_RFIFO_TEST_H

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ring.h>

#include "vni_mu_test.h"
#include "vni_test.h"

#define REGION (64u * 1024)
#define CTR    1 /* S's injection counter, R's reception counter */
#define CWAIT  20000000
#define ITEMS  12

/* What R tells the parent: its FIFOs' ids, its node, its counter CTR's node id, its pid. */
struct target {
	uint8_t node[3];
	uint8_t n_ids;
	uint8_t ids[TRD_VNI_MU_RFIFOS_MAX];
	uint16_t ctr;
	uint16_t pad;
	int32_t pid;
};

/* One kind of message S posts: @p count of them, of @p len bytes, to FIFO @p fifo. */
enum { K_INLINE = 1, K_IMM, K_REGION };
struct item {
	uint32_t len;
	uint16_t count;
	uint8_t kind;
	uint8_t fifo;
	uint16_t rec_ctr;
	uint8_t raw; /* posted past the library's checks: the engine must refuse it */
	uint8_t pad;
};

/* A command for S: its items in order, to @p node; message k of the command has user word
 * user0 + k and data bytes pat(j, user0 + k). No item: S closes and exits. */
struct cmd {
	uint8_t node[3];
	uint8_t n_items;
	uint32_t pad;
	uint64_t user0;
	struct item it[ITEMS];
};

/* S's answer: 0 or the failing step; its counter CTR then; its descriptors taken, refused. */
struct reply {
	int32_t rc;
	int32_t pad;
	int64_t ctr;
	uint64_t descs, bad_descs;
};

static int p_cmd[2], p_rep[2], p_r2p[2], p_p2r[2];
static bool r_on_n1;

static uint8_t
pat(uint32_t j, uint64_t user)
{
	return (uint8_t)(j * 7 + (j >> 8) * 31 + user * 13 + 1);
}

/* In a child: the parent's ends of the pipes closed, so that a parent that failed and left
 * ends its children's waits (end of file) rather than their timeouts. */
static inline void
child_start(void)
{
	close(p_cmd[1]);
	close(p_p2r[1]);
}

static struct trd_vni *
rf_open(uint32_t proc, bool n1, unsigned int n_rfifos, unsigned int slots, int spin)
{
	struct trd_vni_conf c = {.socket = n1 ? sock_n1 : sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .wait_spin_us = spin,
				 .mu_fifos = 1, /* R's: unused */
				 .mu_fifo_slots = proc == 0 ? 256 : 64,
				 .mu_rfifos = n_rfifos,
				 .mu_rfifo_slots = slots,
				 .mu_region = REGION};

	return trd_vni_open(&c);
}

/* ---- S: the sender ---- */

/* Post one message of @p it with user word @p u (region bytes at @p roff). 0 or -1. */
static int
s_post(struct trd_vni *v, const struct trd_vni_mu_info *mi, const struct cmd *c,
       const struct item *it, uint64_t u, uint32_t roff)
{
	uint8_t data[256];
	struct trd_desc d;
	uint64_t deadline = trd_time_us() + CWAIT;
	int rc;

	if (it->kind == K_INLINE && it->len > sizeof(data))
		return -1;
	for (uint32_t j = 0; j < it->len && j < sizeof(data); j++)
		data[j] = pat(j, u);
	trd_desc_fifo(&d, coord_of(c->node), it->fifo, data, it->len, u, CTR);
	d.rec_ctr = it->rec_ctr;
	if (it->kind == K_IMM) {
		d.src = 0;
		d.flags = TRD_DF_IMM;
		memcpy(&d.user, data, 8); /* the data is the user word */
	} else if (it->kind == K_REGION) {
		uint8_t *r = mi->region;

		for (uint32_t j = 0; j < it->len; j++)
			r[roff + j] = pat(j, u);
		d.src = roff;
		d.flags = TRD_DF_SRC_MR;
		d.src_key = mi->region_key;
	}
	if (it->raw)
		return raw_post(mi, &d, it->kind == K_INLINE ? (it->len + 63) / 64 : 0, data);
	while ((rc = trd_vni_inject(v, 0, &d, 1)) == -ENOBUFS && trd_time_us() < deadline)
		sched_yield(); /* the ring is full: the engine takes some */
	return rc == 0 ? 0 : -1;
}

/* Run command @p c: post its messages, then wait for the counter (or, with raw items, until
 * the engine judged them all). */
static void
s_run(struct trd_vni *v, const struct cmd *c, struct reply *rp)
{
	struct trd_vni_mu_info mi;
	uint64_t u = c->user0, total = 0, n = 0, judged0;
	uint32_t roff = 0;
	bool raw = false;

	memset(rp, 0, sizeof(*rp));
	if (trd_vni_mu_info(v, &mi) != 0) {
		rp->rc = 1;
		return;
	}
	judged0 = mi.descs + mi.bad_descs;
	for (unsigned int i = 0; i < c->n_items; i++) {
		total += (uint64_t)c->it[i].len * c->it[i].count;
		raw |= c->it[i].raw != 0;
	}
	if (trd_vni_counter_set(v, CTR, raw ? 1000 : (int64_t)total) != 0) {
		rp->rc = 2;
		return;
	}
	for (unsigned int i = 0; i < c->n_items; i++) {
		const struct item *it = &c->it[i];

		for (unsigned int k = 0; k < it->count; k++, u++, n++) {
			if (it->kind == K_REGION && roff + it->len > REGION) {
				rp->rc = 3;
				return;
			}
			if (s_post(v, &mi, c, it, u, roff) != 0) {
				rp->rc = 4;
				return;
			}
			if (it->kind == K_REGION)
				roff += it->len;
		}
	}
	if (raw ? judged(v, judged0 + n) != 0 : trd_vni_counter_wait(v, CTR, CWAIT) != 0)
		rp->rc = 5;
	if (trd_vni_counter_read(v, CTR, &rp->ctr) != 0 || trd_vni_mu_info(v, &mi) != 0)
		rp->rc = 6;
	rp->descs = mi.descs;
	rp->bad_descs = mi.bad_descs;
}

static int
sender(void *arg)
{
	struct trd_vni *v;
	struct cmd c;
	struct reply rp;

	(void)arg;
	child_start();
	v = rf_open(0, false, 0, 0, 0);
	if (v == NULL)
		return 10;
	for (;;) {
		struct pollfd pf = {.fd = p_cmd[0], .events = POLLIN};

		if (poll(&pf, 1, 60000) != 1 || read(p_cmd[0], &c, sizeof(c)) != sizeof(c))
			return 11;
		if (c.n_items == 0)
			break;
		s_run(v, &c, &rp);
		if (write(p_rep[1], &rp, sizeof(rp)) != sizeof(rp))
			return 12;
	}
	trd_vni_close(v);
	return 0;
}

/* ---- the parent's side ---- */

/* @p n bytes child @p pid (R) writes into p_r2p, pumping meanwhile; if it ends first (and wrote
 * nothing before), its exit status says which step failed. The child is left to be reaped. */
static void
read_r(pid_t pid, void *buf, size_t n)
{
	uint64_t deadline = trd_time_us() + WAIT_US;

	while (read(p_r2p[0], buf, n) != (ssize_t)n) {
		siginfo_t si = {0};

		T_ASSERT(trd_time_us() < deadline, "R reported nothing");
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid) {
			if (read(p_r2p[0], buf, n) == (ssize_t)n)
				return; /* written just before it ended */
			T_ASSERT(0, "R ended first: code %d, status %d (the step that failed)",
				 si.si_code, si.si_status);
		}
		pump();
	}
}

/* A command to S with @p n items of @p its to R's (@p t) node; S's reply. */
static struct reply
s_cmd(const struct target *t, uint64_t user0, const struct item *its, unsigned int n)
{
	struct cmd c = {.n_items = (uint8_t)n, .user0 = user0};
	struct reply rp;

	T_ASSERT(n >= 1 && n <= ITEMS, "%u items", n);
	memcpy(c.node, t->node, 3);
	memcpy(c.it, its, n * sizeof(*its));
	T_EQ(write(p_cmd[1], &c, sizeof(c)), sizeof(c));
	read_pipe(p_rep[0], &rp, sizeof(rp));
	return rp;
}

/* s_cmd() of @p n good items: S's counter reaches 0. */
static void
s_cmd_ok(const struct target *t, uint64_t user0, const struct item *its, unsigned int n)
{
	struct reply rp = s_cmd(t, user0, its, n);

	T_ASSERT(rp.rc == 0 && rp.ctr == 0, "S: step %d, counter %lld", rp.rc, (long long)rp.ctr);
}

static void
s_quit(void)
{
	struct cmd c = {0};

	T_EQ(write(p_cmd[1], &c, sizeof(c)), sizeof(c));
}

static uint64_t
ndrop(unsigned int r, enum trd_drop cause)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(nd[r], &st), 0);
	return st.drop[cause];
}

static uint64_t
nstat(unsigned int r, enum trd_node_stat k)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(nd[r], &st), 0);
	return st.stat[k];
}

/* Pump until node @p r dropped @p want frames for @p cause in all (bounded). */
static void
pump_until_drop(unsigned int r, enum trd_drop cause, uint64_t want)
{
	uint64_t deadline = trd_time_us() + WAIT_US;

	while (ndrop(r, cause) < want && trd_time_us() < deadline)
		pump();
	T_ASSERT(ndrop(r, cause) >= want, "node %u: %s at %llu, want %llu", r, trd_drop_name(cause),
		 (unsigned long long)ndrop(r, cause), (unsigned long long)want);
}

/* ---- R's side: checks of what it takes ---- */

/* Message @p m is the one of user word @p u and @p len bytes (immediate with @p imm), from
 * node 0, on FIFO @p fifo. 0 or the failing field (1 .. 6). */
static int
msg_ok(const struct trd_msg *m, uint64_t u, uint32_t len, bool imm, uint8_t fifo)
{
	const uint8_t *p = m->data;

	if (m->len != len)
		return 1;
	if (m->fifo != fifo)
		return 2;
	if (m->src.x != 0 || m->src.y != 0 || m->src.z != 0)
		return 3;
	if (m->status != 0)
		return 4;
	for (uint32_t j = 0; j < len; j++)
		if (p[j] != pat(j, u))
			return 5;
	if (imm) {
		uint64_t w;

		memcpy(&w, p, 8);
		return m->user == w ? 0 : 6;
	}
	return m->user == u ? 0 : 6;
}

/* Take one message from FIFO @p k within @p us. 1, 0 (none came) or a negative errno. */
static int
take_one(struct trd_vni *v, unsigned int k, struct trd_msg *m, uint64_t us)
{
	uint64_t deadline = trd_time_us() + us;
	int n;

	do {
		n = trd_vni_rfifo_poll(v, k, m, 1);
		if (n != 0)
			return n;
		sched_yield();
	} while (trd_time_us() < deadline);
	return 0;
}

#endif /* TRD_VNI_RFIFO_TEST_H */
