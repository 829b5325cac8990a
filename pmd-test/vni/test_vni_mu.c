/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process's own messaging-unit objects (docs/vni.md, "Messaging-unit objects"): injection
 * FIFOs of engine descriptors in its segment, a block of the node's counters mapped into it,
 * a region of its segment the engine reads and writes. A 3x1x1 torus of in-process engines
 * over ring links, the VNI service on node 0 (and on node 1); the processes are forked
 * children that use libtoroid_vni only.
 *
 *   test_vni_mu put      process A puts 64 B inline and 4 KiB from its region into process
 *                        B's region (both on node 0): byte-exact, nothing else of B's region
 *                        written, A's injection counter and B's reception counter at 0
 *                        B's region as the core's statistics show it: both descriptors cut
 *                        into packets straight from A's FIFO (guest_descs), none posted again
 *                        into the engine's FIFO, the 64 inline bytes copied twice in all (by
 *                        the library into the ring, by the core into the frame: no
 *                        guest_copy_bytes)
 *   test_vni_mu put2     the same with B attached to the engine of node 1
 *   test_vni_mu wrap     A puts 200 messages of 100 B inline (a descriptor and 2 slots each)
 *                        into B's region: byte-exact, and the one whose data straddles the
 *                        ring's end (entry 170 of a 256-slot ring) is the only one copied out
 *                        of the ring first (guest_copy_bytes 100)
 *   test_vni_mu hostile  A posts descriptors that name a counter not its own, B's region as
 *                        its source, a source past its region, a remote get carrying a
 *                        memory-FIFO message, an unknown op, a flag it may not set
 *                        (ordered), inline data without its slots: each dropped and counted
 *                        (mu_bad_descs, one by one), B's region untouched, A's counter failed;
 *                        then a good put lands; then A moves its ring's producer index past
 *                        the ring: the FIFO is no longer served (mu_bad_rings), and B, served
 *                        still, puts into A's region
 *   test_vni_mu race     A rewrites its ring's slots at random while the engine reads them:
 *                        every descriptor taken is used whole or dropped, B's region stays
 *                        within the bytes A may write, the engine serves B afterwards
 *   test_vni_mu death    A dies with 200 descriptors in its FIFO: its interface is reclaimed
 *                        (its counter block and region given back: with room for two blocks
 *                        only, a third process gets one) and B's region holds only whole puts
 *   test_vni_mu measure inproc|attached N   (not a test) N puts of 64 B, for bench/ipm.py
 *   test_vni_mu measure rate|rate2 N        (not a test) the rate of N puts of 64 B from an
 *                        attached process A, polling, to B on this engine or (rate2) on node
 *                        1's, and how many engine rounds were idle
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_mu_test.h"
#include "vni_test.h"

#define REGION  (64u * 1024)
#define BIG     4096u
#define SMALL   64u
#define CTR     1 /* the counter each process counts on */
#define N_DEATH 200

/* What B tells A: where to put. */
struct target {
	uint64_t key;
	uint16_t ctr;
	uint8_t node[3];
	uint8_t pad[3];
};

static int p_b2a[2], p_a2b[2];
static bool b_on_n1;
static unsigned int mu_slots = 256; /* measuring: the largest */

static struct trd_vni *
mu_open(uint32_t proc, bool n1)
{
	struct trd_vni_conf c = {.socket = n1 ? sock_n1 : sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .mu_fifos = 1,
				 .mu_fifo_slots = mu_slots,
				 .mu_region = REGION};

	return trd_vni_open(&c);
}

static uint8_t
pat(unsigned int i, unsigned int salt)
{
	return (uint8_t)(i * 7 + salt);
}

/* B's set-up, the target side of every test: attach as process 1 (to node 1's engine with
 * @p n1) and hand A where to put (struct target on p_b2a): its region's key, its node and,
 * with @p count > 0, the node's id of its counter CTR, set to @p count first (else 0).
 * 0 with *vp and *mi set, or the step that failed: 1 attach, 2 the counter, 3 the pipe. */
static int
mu_target(bool n1, int64_t count, struct trd_vni **vp, struct trd_vni_mu_info *mi)
{
	struct trd_vni *v = mu_open(1, n1);
	struct trd_vni_info vi;
	struct target t = {0};

	if (v == NULL || trd_vni_mu_info(v, mi) != 0 || trd_vni_info(v, &vi) != 0)
		return 1;
	*vp = v;
	if (count > 0) {
		if (trd_vni_counter_set(v, CTR, count) != 0)
			return 2;
		t.ctr = trd_vni_counter_id(v, CTR);
	}
	t.key = mi->region_key;
	memcpy(t.node, vi.node, 3);
	return write(p_b2a[1], &t, sizeof(t)) == sizeof(t) ? 0 : 3;
}

/* A B that only serves: its set-up (mu_target(), no counter), then held until A is done (a
 * byte on p_a2b). 0, or @p err plus the step that failed (4: A's byte). */
static int
mu_target_serve(bool n1, int err)
{
	struct trd_vni_mu_info mi;
	struct trd_vni *v;
	uint8_t done;
	int rc = mu_target(n1, 0, &v, &mi);

	if (rc != 0)
		return err + rc;
	if (child_read(p_a2b[0], &done, 1) != 0)
		return err + 4;
	trd_vni_close(v);
	return 0;
}

/* ---- put ---- */

/* B: tell A its region and counter, expect SMALL + BIG bytes, check them. */
static int
put_b(void *arg)
{
	struct trd_vni_mu_info mi;
	struct trd_vni *v;
	const uint8_t *r;
	uint8_t done;
	int rc;

	(void)arg;
	rc = mu_target(b_on_n1, SMALL + BIG, &v, &mi);
	if (rc != 0)
		return 10 + rc;
	if (mi.region_len != REGION || mi.n_fifos != 1 || mi.region_key == 0)
		return 14;
	if (trd_vni_counter_wait(v, CTR, 8000000) != 0)
		return 15; /* the reception counter never reached zero */
	r = mi.region;
	for (unsigned int i = 0; i < REGION; i++) {
		uint8_t want = 0;

		if (i < SMALL)
			want = pat(i, 1);
		else if (i >= BIG && i < 2 * BIG)
			want = pat(i - BIG, 2);
		if (r[i] != want)
			return 16;
	}
	if (child_read(p_a2b[0], &done, 1) != 0)
		return 17;
	trd_vni_close(v);
	return 0;
}

/* A: an inline put of SMALL bytes to B's offset 0, a put of BIG bytes from its region to B's
 * offset BIG; its injection counter reaches 0. */
static int
put_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_vni_mu_info mi;
	struct trd_desc d[2];
	uint8_t small[SMALL], *r;
	struct target t;
	int64_t c;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 20;
	r = mi.region;
	for (unsigned int i = 0; i < SMALL; i++)
		small[i] = pat(i, 1);
	for (unsigned int i = 0; i < BIG; i++)
		r[i] = pat(i, 2);
	if (trd_vni_counter_set(v, CTR, SMALL + BIG) != 0)
		return 21;
	trd_desc_put(&d[0], coord_of(t.node), small, SMALL, t.key, 0, CTR, t.ctr);
	trd_desc_put(&d[1], coord_of(t.node), NULL, BIG, t.key, BIG, CTR, t.ctr);
	d[1].flags = TRD_DF_SRC_MR;
	d[1].src_key = mi.region_key;
	d[1].src = 0;
	if (trd_vni_inject(v, 0, d, 2) != 0)
		return 22;
	memset(small, 0, sizeof(small)); /* copied at post time: the buffer is free */
	if (trd_vni_counter_wait(v, CTR, 8000000) != 0 || trd_vni_counter_read(v, CTR, &c) != 0 ||
	    c != 0)
		return 23;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.descs != 2 || mi.bad_descs != 0)
		return 24;
	if (write(p_a2b[1], "x", 1) != 1)
		return 25;
	trd_vni_close(v);
	return 0;
}

/* Descriptors node 0's service posted into its engine FIFO (its reply FIFO, 1). */
static uint64_t
rep_descs(void)
{
	struct trd_inj_fifo_stats st;

	T_EQ(trd_inj_fifo_stats_get(trd_inj_fifo(nd[0], 1), &st), 0);
	return st.descs;
}

static void
test_put(void)
{
	uint64_t d0 = stat_of(TRD_VNI_SVC_STAT_MU_DESCS),
		 b0 = stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), g0 = node_stat(TRD_STAT_GUEST_DESCS),
		 c0 = node_stat(TRD_STAT_GUEST_COPY_BYTES), r0 = rep_descs();
	pid_t b = spawn(put_b, NULL), a = spawn(put_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_DESCS) - d0, 2);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS) - b0, 0);
	/* in place: cut into packets straight from A's ring, not posted a second time, the
	 * inline bytes not copied out of the ring first */
	T_EQ(node_stat(TRD_STAT_GUEST_DESCS) - g0, 2);
	T_EQ(node_stat(TRD_STAT_GUEST_COPY_BYTES) - c0, 0);
	T_EQ(rep_descs() - r0, 0);
}

/* ---- wrap ---- */

#define WRAP_N   200
#define WRAP_LEN 100u /* entry k at slot 3k: entry 170 at 254, its data at 255 and 0 */

static int
wrap_b(void *arg)
{
	struct trd_vni *v = mu_open(1, false);
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct target t = {0};
	const uint8_t *r;
	uint8_t done;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0)
		return 130;
	if (trd_vni_counter_set(v, CTR, WRAP_N * WRAP_LEN) != 0)
		return 131;
	t.key = mi.region_key;
	t.ctr = trd_vni_counter_id(v, CTR);
	memcpy(t.node, vi.node, 3);
	if (write(p_b2a[1], &t, sizeof(t)) != sizeof(t))
		return 132;
	if (trd_vni_counter_wait(v, CTR, 8000000) != 0)
		return 133;
	r = mi.region;
	for (unsigned int i = 0; i < REGION; i++) {
		unsigned int k = i / WRAP_LEN;

		if (r[i] != (k < WRAP_N ? pat(i % WRAP_LEN, k) : 0)) {
			fprintf(stderr, "B: byte %u (message %u): %#x\n", i, k, r[i]);
			return 134;
		}
	}
	if (child_read(p_a2b[0], &done, 1) != 0)
		return 135;
	trd_vni_close(v);
	return 0;
}

static int
wrap_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	uint8_t data[WRAP_LEN];
	struct trd_desc d;
	struct target t;

	(void)arg;
	if (v == NULL || child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 140;
	if (trd_vni_counter_set(v, CTR, WRAP_N * WRAP_LEN) != 0)
		return 141;
	for (unsigned int k = 0; k < WRAP_N; k++) {
		uint64_t deadline = trd_time_us() + 8000000;
		int rc;

		for (unsigned int j = 0; j < WRAP_LEN; j++)
			data[j] = pat(j, k);
		trd_desc_put(&d, coord_of(t.node), data, WRAP_LEN, t.key, k * WRAP_LEN, CTR, t.ctr);
		while ((rc = trd_vni_inject(v, 0, &d, 1)) == -ENOBUFS && trd_time_us() < deadline)
			sched_yield(); /* the ring is full: the engine takes some */
		if (rc != 0)
			return 142;
	}
	if (trd_vni_counter_wait(v, CTR, 8000000) != 0)
		return 143;
	if (write(p_a2b[1], "x", 1) != 1)
		return 144;
	trd_vni_close(v);
	return 0;
}

static void
test_wrap(void)
{
	uint64_t d0 = stat_of(TRD_VNI_SVC_STAT_MU_DESCS), g0 = node_stat(TRD_STAT_GUEST_DESCS),
		 c0 = node_stat(TRD_STAT_GUEST_COPY_BYTES), r0 = rep_descs();
	pid_t b = spawn(wrap_b, NULL), a = spawn(wrap_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_DESCS) - d0, WRAP_N);
	T_EQ(node_stat(TRD_STAT_GUEST_DESCS) - g0, WRAP_N);
	T_EQ(node_stat(TRD_STAT_GUEST_COPY_BYTES) - c0, WRAP_LEN);
	T_EQ(rep_descs() - r0, 0);
}

/* ---- hostile ---- */

/* B for the hostile test: its region must stay zero but for the good put at the end (SMALL
 * bytes at offset 0); it then puts SMALL bytes into A's region through its own FIFO. */
static int
hostile_b(void *arg)
{
	struct trd_vni_mu_info mi;
	struct trd_vni *v;
	uint8_t small[SMALL];
	struct target ta;
	struct trd_desc d;
	const uint8_t *r;
	int rc;

	(void)arg;
	rc = mu_target(false, SMALL, &v, &mi);
	if (rc != 0)
		return 30 + rc;
	if (trd_vni_counter_wait(v, CTR, 8000000) != 0)
		return 34;
	r = mi.region;
	for (unsigned int i = 0; i < REGION; i++)
		if (r[i] != (i < SMALL ? pat(i, 3) : 0))
			return 35; /* a hostile descriptor wrote something */
	/* A broke its ring now: B is still served */
	if (child_read(p_a2b[0], &ta, sizeof(ta)) != 0)
		return 36;
	for (unsigned int i = 0; i < SMALL; i++)
		small[i] = pat(i, 4);
	trd_vni_counter_set(v, CTR, SMALL);
	trd_desc_put(&d, coord_of(ta.node), small, SMALL, ta.key, 0, CTR, 0);
	if (trd_vni_inject(v, 0, &d, 1) != 0 || trd_vni_counter_wait(v, CTR, 8000000) != 0)
		return 37;
	trd_vni_close(v);
	return 0;
}

static int
hostile_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct target t, me = {0};
	uint8_t small[SMALL];
	struct trd_desc d;
	struct rte_ring *r;
	unsigned int n = 0;
	int64_t c;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || trd_vni_info(v, &vi) != 0 ||
	    child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 40;
	r = mi.fifos[0];
	for (unsigned int i = 0; i < SMALL; i++)
		small[i] = pat(i, 3);
	trd_vni_counter_set(v, CTR, 1000);
	/* 1: an injection counter not its own (the node's id space past its block) */
	trd_desc_put(&d, coord_of(t.node), small, SMALL, t.key, 0, 600, t.ctr);
	n++;
	if (raw_post(&mi, &d, 1, small) != 0)
		return 41;
	/* 2: B's region as its source */
	trd_desc_put(&d, coord_of(t.node), NULL, SMALL, t.key, 0, 0, t.ctr);
	d.flags = TRD_DF_SRC_MR;
	d.src_key = t.key;
	d.src = 0;
	n++;
	if (raw_post(&mi, &d, 0, NULL) != 0)
		return 42;
	/* 3: a source past its own region */
	d.src_key = mi.region_key;
	d.src = REGION - 8;
	n++;
	if (raw_post(&mi, &d, 0, NULL) != 0)
		return 43;
	/* 4: a remote get to this node whose carried descriptor is a memory-FIFO message (8
	 * immediate bytes to reception FIFO 0: test_vni_mu_rget has the rest) */
	{
		struct trd_desc carried;

		trd_desc_fifo(&carried, coord_of(t.node), 0, NULL, 8, 0x4141414141414141ULL, 0);
		carried.flags = TRD_DF_IMM;
		trd_desc_rget(&d, coord_of(t.node), TRD_ENGINE_FIFO, &carried, 1);
		d.inj_ctr = CTR;
		n++;
		if (raw_post(&mi, &d, 1, &carried) != 0)
			return 44;
	}
	/* 5: an op that is none */
	trd_desc_put(&d, coord_of(t.node), small, SMALL, t.key, 0, CTR, t.ctr);
	d.op = 9;
	n++;
	if (raw_post(&mi, &d, 1, small) != 0)
		return 45;
	/* 6: a flag it may not set (ordered, which the core would take), at offset 1024 */
	d.op = TRD_OP_PUT;
	d.flags = TRD_DF_ORDERED;
	d.roff = 1024;
	n++;
	if (raw_post(&mi, &d, 1, small) != 0)
		return 46;
	/* 7: inline data without its slot (the next descriptor would be read as data) */
	d.flags = 0;
	d.roff = 0;
	d.n_slots = 0;
	n++;
	if (raw_post(&mi, &d, 0, NULL) != 0)
		return 47;
	if (judged(v, n) != 0 || trd_vni_mu_info(v, &mi) != 0)
		return 48;
	if (mi.bad_descs != n || mi.descs != 0) {
		fprintf(stderr, "bad_descs %llu descs %llu, want %u and 0\n",
			(unsigned long long)mi.bad_descs, (unsigned long long)mi.descs, n);
		return 49;
	}
	/* the counter it named (CTR, in 4..7) was failed: a wait on it ends */
	if (trd_vni_counter_read(v, CTR, &c) != 0 || c > TRD_COUNTER_FAILED)
		return 50;
	/* the good one */
	trd_vni_counter_set(v, CTR, SMALL);
	trd_desc_put(&d, coord_of(t.node), small, SMALL, t.key, 0, CTR, t.ctr);
	if (trd_vni_inject(v, 0, &d, 1) != 0 || trd_vni_counter_wait(v, CTR, 8000000) != 0)
		return 51;
	/* a garbage ring: the producer's index far past the ring */
	__atomic_store_n(&r->prod.head, r->prod.head + 100000, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod.tail, r->prod.tail + 100000, __ATOMIC_RELEASE);
	{
		uint64_t deadline = trd_time_us() + 10000000;

		while (trd_vni_mu_info(v, &mi) == 0 && mi.bad_rings == 0 &&
		       trd_time_us() < deadline)
			sched_yield();
	}
	if (mi.bad_rings != 1)
		return 52;
	/* B puts into our region */
	memset(mi.region, 0, SMALL);
	me.key = mi.region_key;
	memcpy(me.node, vi.node, 3);
	if (write(p_a2b[1], &me, sizeof(me)) != sizeof(me))
		return 53;
	{
		uint64_t deadline = trd_time_us() + 10000000;
		const volatile uint8_t *rr = mi.region;

		while (rr[SMALL - 1] != pat(SMALL - 1, 4) && trd_time_us() < deadline)
			sched_yield();
		for (unsigned int i = 0; i < SMALL; i++)
			if (rr[i] != pat(i, 4))
				return 54;
	}
	trd_vni_close(v);
	return 0;
}

static void
test_hostile(void)
{
	pid_t b = spawn(hostile_b, NULL), a = spawn(hostile_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 7);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_RINGS), 1);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_DESCS), 2);
}

/* ---- race ---- */

/* A posts good puts of SMALL bytes at offsets 0 .. 15 * SMALL of B's region while a second
 * thread of it writes random bytes over its ring's slots. */
struct race {
	struct rte_ring *r;
	volatile int stop;
};

static void *
scribble(void *arg)
{
	struct race *x = arg;
	uint8_t *slots = (uint8_t *)&x->r[1];
	uint64_t s = 88172645463325252ULL;

	while (!x->stop) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		slots[s % (256 * 64)] = (uint8_t)(s >> 32);
	}
	return NULL;
}

static int
race_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	struct trd_vni_mu_info mi;
	struct race x = {0};
	uint8_t small[SMALL];
	struct trd_desc d;
	struct target t;
	pthread_t th;
	unsigned int posted = 0;

	(void)arg;
	if (v == NULL || trd_vni_mu_info(v, &mi) != 0 || child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 60;
	x.r = mi.fifos[0];
	memset(small, 0xab, sizeof(small));
	if (pthread_create(&th, NULL, scribble, &x) != 0)
		return 61;
	for (unsigned int i = 0; i < 3000; i++) {
		trd_desc_put(&d, coord_of(t.node), small, SMALL, t.key, (i % 16) * SMALL, 0, 0);
		if (trd_vni_inject(v, 0, &d, 1) == 0)
			posted++;
		else
			sched_yield();
	}
	x.stop = 1;
	pthread_join(th, NULL);
	/* everything posted was judged, one way or the other: slots may have been read as
	 * descriptors, so the engine judged at least as many entries as it took */
	if (posted == 0 || judged(v, 1) != 0)
		return 62;
	/* on a loaded machine every descriptor may have been scribbled over before the engine
	 * read it: one posted now, the scribbler stopped, must be served (the ring, garbage and
	 * all, is still read) */
	{
		struct trd_vni_mu_info m0;
		uint64_t deadline = trd_time_us() + 10000000;
		int rc;

		if (trd_vni_mu_info(v, &m0) != 0)
			return 64;
		trd_desc_put(&d, coord_of(t.node), small, SMALL, t.key, 0, 0, 0);
		while ((rc = trd_vni_inject(v, 0, &d, 1)) == -ENOBUFS && trd_time_us() < deadline)
			sched_yield();
		if (rc != 0)
			return 65;
		do {
			if (trd_vni_mu_info(v, &mi) != 0)
				return 66;
			sched_yield();
		} while (mi.descs == m0.descs && trd_time_us() < deadline);
		if (mi.descs == m0.descs)
			return 67; /* the clean descriptor was not served */
	}
	if (write(p_a2b[1], "x", 1) != 1)
		return 63;
	trd_vni_close(v);
	return 0;
}

/* B serves until A is done (a scribbled offset is a put anywhere in its region, which A may
 * do: the bounds are the target node's to check, as for any frame) */
static int
race_b(void *arg)
{
	(void)arg;
	return mu_target_serve(false, 70);
}

static void
test_race(void)
{
	uint64_t r0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED);
	pid_t b = spawn(race_b, NULL), a = spawn(race_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_MU_DESCS) > 0, "no descriptor served");
	/* the engine serves the next process, once it has released the two interfaces and their
	 * counter blocks (3 on the node: a new pair attaching before that was refused one) */
	pump_until_stat(TRD_VNI_SVC_STAT_RECLAIMED, r0 + 2);
	b_on_n1 = false;
	T_EQ(pipe(p_b2a), 0);
	T_EQ(pipe(p_a2b), 0);
	test_put();
}

/* ---- death ---- */

static int
death_a(void *arg)
{
	struct trd_vni *v = mu_open(0, false);
	uint8_t small[SMALL];
	struct trd_desc d[N_DEATH];
	struct target t;

	(void)arg;
	if (v == NULL || child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 80;
	memset(small, 0xcd, sizeof(small));
	for (unsigned int i = 0; i < N_DEATH; i++)
		trd_desc_put(&d[i], coord_of(t.node), small, SMALL, t.key, (i % 8) * SMALL, 0, 0);
	/* 200 descriptors and their slots fill the 256-slot ring: two posts that fit */
	if (trd_vni_inject(v, 0, d, 100) != 0 || trd_vni_inject(v, 0, d + 100, 27) != 0)
		return 81;
	_exit(0); /* with its descriptors in the FIFO, without closing */
}

/* B: its region holds only whole puts of A's once A's interface is gone. */
static int
death_b(void *arg)
{
	struct trd_vni_mu_info mi;
	const volatile uint8_t *r;
	struct trd_vni *v;
	uint8_t go;
	int rc;

	(void)arg;
	rc = mu_target(false, 0, &v, &mi);
	if (rc != 0)
		return 90 + rc;
	if (child_read(p_a2b[0], &go, 1) != 0)
		return 94;
	r = mi.region;
	for (unsigned int i = 0; i < REGION; i++)
		if (r[i] != (i < 8 * SMALL ? r[i - i % SMALL] : 0) || (r[i] != 0 && r[i] != 0xcd))
			return 95;
	trd_vni_close(v);
	return 0;
}

/* A third process: it gets a counter block (and a region) of its own. */
static int
death_c(void *arg)
{
	struct trd_vni *v;

	(void)arg;
	v = mu_open(0, false);
	if (v == NULL)
		return 100;
	trd_vni_close(v);
	return 0;
}

static void
test_death(void)
{
	uint64_t rec0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED);
	pid_t b = spawn(death_b, NULL), a = spawn(death_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	pump_until_stat(TRD_VNI_SVC_STAT_RECLAIMED, rec0 + 1);
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_MU_DESCS) + stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS) <= 127,
		 "more descriptors than A posted");
	T_EQ(write(p_a2b[1], "g", 1), 1);
	reap_ok(b, WAIT_US, "process B");
	/* A's counter block came back: the node has two, and B held the other */
	reap_ok(spawn(death_c, NULL), WAIT_US, "a third process after A's death");
}

/* ---- measuring (not a test): instructions and rate of a 64 B put ---- */

/* callgrind --toggle-collect=ipm_loop_*: one thread runs the engines, the VNI service and the
 * poster, so every instruction of a put's path is counted: N puts, one pump after each, then
 * pumps until the injection counter is 0. The in-process loop posts with trd_inject() on node
 * 0's FIFO and polls the torus only; the attached one posts with trd_vni_inject() and pumps
 * the service too (what toroid-node's loop does). Run with N and 2N: the difference over N
 * is a put's cost. */
static struct trd_vni *ipm_v;

static void *
ipm_open(void *arg)
{
	(void)arg;
	ipm_v = mu_open(0, false);
	return NULL;
}

static __attribute__((noinline)) void
ipm_loop_attached(struct trd_vni *v, const struct trd_desc *d, unsigned int n)
{
	int64_t c;

	for (unsigned int i = 0; i < n; i++) {
		while (trd_vni_inject(v, 0, d, 1) != 0)
			pump();
		pump();
	}
	do {
		pump();
		trd_vni_counter_read(v, CTR, &c);
	} while (c > 0);
}

static __attribute__((noinline)) void
ipm_loop_inproc(struct trd_inj_fifo *f, const struct trd_desc *d, unsigned int n, uint16_t ctr)
{
	int64_t c;

	for (unsigned int i = 0; i < n; i++) {
		while (trd_inject(f, d) != 0)
			trd_net_poll(net);
		trd_net_poll(net);
	}
	do {
		trd_net_poll(net);
		trd_counter_read(nd[0], ctr, &c);
	} while (c > 0);
}

/* Two processes on the engine this process runs: A posts @p arg puts of 64 B inline into B's
 * region in batches of 32 and prints their rate (first post to its counter at 0). */
static int
rate_a(void *arg)
{
	unsigned int n = *(unsigned int *)arg, posted = 0;
	struct trd_vni *v = mu_open(0, false);
	uint8_t small[SMALL];
	struct trd_desc d[32];
	struct target t;
	uint64_t t0, t1;

	if (v == NULL || child_read(p_b2a[0], &t, sizeof(t)) != 0)
		return 110;
	vni_unpin();
	memset(small, 0x77, sizeof(small));
	for (unsigned int i = 0; i < 32; i++)
		trd_desc_put(&d[i], coord_of(t.node), small, SMALL, t.key, i * SMALL, CTR, 0);
	trd_vni_counter_set(v, CTR, (int64_t)n * SMALL);
	t0 = trd_time_us();
	while (posted < n) {
		unsigned int k = RTE_MIN(32u, n - posted);

		if (trd_vni_inject(v, 0, d, k) == 0)
			posted += k;
		else
			sched_yield(); /* full: the engine needs the CPU (2 CPUs, loaded) */
	}
	if (trd_vni_counter_wait(v, CTR, 60000000) != 0)
		return 111;
	t1 = trd_time_us();
	printf("attached, two processes on one engine: %u puts of %u B in %llu us: %.3f Mput/s\n",
	       n, SMALL, (unsigned long long)(t1 - t0), (double)n / (double)(t1 - t0));
	fflush(stdout);
	if (write(p_a2b[1], "x", 1) != 1)
		return 112;
	trd_vni_close(v);
	return 0;
}

static int
rate_b(void *arg)
{
	(void)arg;
	return mu_target_serve(b_on_n1, 120);
}

static void
measure(const char *mode, unsigned int n)
{
	if (strcmp(mode, "rate") == 0 || strcmp(mode, "rate2") == 0) {
		pid_t b = spawn(rate_b, NULL), a = spawn(rate_a, &n);
		uint64_t rounds = 0, idle = 0, t0 = trd_time_us();
		uint64_t pk0 = node_stat(TRD_STAT_TX_PKTS), bu0 = node_stat(TRD_STAT_TX_BUNDLES);
		int st;

		while (waitpid(a, &st, WNOHANG) != a) {
			/* (pump(), counting the rounds in which the engines moved nothing) */
			idle += trd_net_poll(net) == 0;
			trd_vni_svc_poll(vs);
			if (vs_n1 != NULL)
				trd_vni_svc_poll(vs_n1);
			rounds++;
		}
		/* what bounds the rate: in an idle round the engines wait for A's next post */
		printf("engine: %llu rounds in %llu us, %llu of them idle, %llu descriptors "
		       "taken; node 0 sent %llu frames, %llu of them bundles\n",
		       (unsigned long long)rounds, (unsigned long long)(trd_time_us() - t0),
		       (unsigned long long)idle,
		       (unsigned long long)stat_of(TRD_VNI_SVC_STAT_MU_DESCS),
		       (unsigned long long)(node_stat(TRD_STAT_TX_PKTS) - pk0),
		       (unsigned long long)(node_stat(TRD_STAT_TX_BUNDLES) - bu0));
		T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process A: %d", st);
		reap_ok(b, WAIT_US, "process B");
		return;
	}
	static uint8_t dst[REGION], small[SMALL];
	struct trd_mr *mr = trd_mr_register(nd[1], dst, sizeof(dst), TRD_ACCESS_ALL);
	struct trd_coord c1 = trd_node_coord(nd[1]);
	struct trd_desc d;
	uint64_t t0, t1;

	T_ASSERT(mr != NULL, "region on node 1");
	memset(small, 0x5a, sizeof(small));
	if (strcmp(mode, "inproc") == 0) {
		uint16_t ctr;

		T_EQ(trd_counter_alloc(nd[0], &ctr), 0);
		T_EQ(trd_counter_set(nd[0], ctr, (int64_t)n * SMALL), 0);
		trd_desc_put(&d, c1, small, SMALL, trd_mr_key(mr), 0, ctr, 0);
		t0 = trd_time_us();
		ipm_loop_inproc(trd_inj_fifo(nd[0], 0), &d, n, ctr);
		t1 = trd_time_us();
	} else {
		pthread_t th;

		T_EQ(pthread_create(&th, NULL, ipm_open, NULL), 0);
		while (pthread_kill(th, 0) == 0 && ipm_v == NULL)
			pump();
		pthread_join(th, NULL);
		T_ASSERT(ipm_v != NULL, "attach: %s", strerror(errno));
		T_EQ(trd_vni_counter_set(ipm_v, CTR, (int64_t)n * SMALL), 0);
		trd_desc_put(&d, c1, small, SMALL, trd_mr_key(mr), 0, CTR, 0);
		t0 = trd_time_us();
		ipm_loop_attached(ipm_v, &d, n);
		t1 = trd_time_us();
		trd_vni_close(ipm_v);
	}
	printf("%s: %u puts of %u B in %llu us: %.2f Mput/s\n", mode, n, SMALL,
	       (unsigned long long)(t1 - t0), (double)n / (double)(t1 - t0 + 1));
}

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc, vc1;
	struct vni_setup_opt o = {.rec_fifo_size = 1024, .n_counters = 3 * TRD_COUNTER_BLOCK};

	if (argc != 2 && !(argc == 4 && strcmp(argv[1], "measure") == 0)) {
		fprintf(stderr,
			"usage: %s put|put2|wrap|hostile|race|death | measure "
			"inproc|attached|rate|rate2 N\n",
			argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	memset(&vc1, 0, sizeof(vc1));
	vc.max_pool = vc1.max_pool = 1 << 24;
	b_on_n1 = strcmp(argv[1], "put2") == 0 || (argc == 4 && strcmp(argv[2], "rate2") == 0);
	if (b_on_n1)
		o.vc_n1 = &vc1;
	/* measuring instructions (not the rates): an ack at every round, whatever the clock
	 * did meanwhile (under callgrind a round takes tens of microseconds, at speed about
	 * one: with the default delay of 20 us the acks a put pays for followed the machine's
	 * speed, by 10% of the in-process put between runs) */
	if (argc == 4 && (strcmp(argv[2], "attached") == 0 || strcmp(argv[2], "inproc") == 0))
		o.ack_delay_us = 1;
	vni_setup_with("vmu", b_on_n1 ? mu_topo_two : mu_topo_one, &o, &vc);
	T_EQ(pipe(p_b2a), 0);
	T_EQ(pipe(p_a2b), 0);
	if (strcmp(argv[1], "put") == 0 || strcmp(argv[1], "put2") == 0)
		test_put();
	else if (strcmp(argv[1], "wrap") == 0)
		test_wrap();
	else if (strcmp(argv[1], "hostile") == 0)
		test_hostile();
	else if (strcmp(argv[1], "race") == 0)
		test_race();
	else if (strcmp(argv[1], "death") == 0)
		test_death();
	else if (strcmp(argv[1], "measure") == 0) {
		mu_slots = 4096;
		measure(argv[2], (unsigned int)atoi(argv[3]));
		return 0;
	} else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni mu %s\n", argv[1]);
	return 0;
}
