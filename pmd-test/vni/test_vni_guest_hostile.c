/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile tester of the guest injection FIFOs (engine/core/guest.c): an attached process
 * writes its rings as it likes, at any moment, and the core that serves them in place must
 * use only what it checked, never read or write outside what the process owns, and keep
 * serving everyone else. A 3x1x1 torus of in-process engines over ring links, the VNI service
 * on node 0; the processes are forked children that use libtoroid_vni and write their rings
 * by hand. Every ring has 64 slots (the smallest) unless said.
 *
 *   test_vni_guest_hostile fill    A fills its ring whole (63 immediate puts in one burst),
 *                                  then 100 inline puts of 1 .. 256 B, so that the data of
 *                                  some straddle the ring's end at every offset: each lands
 *                                  byte-exact, nothing between them is written, and the core
 *                                  copied out of the ring exactly the bytes of those that
 *                                  straddle (guest_copy_bytes)
 *   test_vni_guest_tail            FIFO 1's producer index moves backwards: that ring is no
 *                                  longer served (bad_rings 1); FIFO 0's jumps forward by the
 *                                  capacity over random slots: judged, nothing written, then
 *                                  a good put lands; then past the capacity: bad_rings 2
 *   test_vni_guest_ctr             the last counter of the block (511) counts; 512, 513 and
 *                                  0xffff are dropped, and B's counter (which ctr_base + 513
 *                                  may be) is neither failed nor decremented
 *   test_vni_guest_bounds          sources at the region's end, offsets and lengths that wrap,
 *                                  long immediates and inline data, a dropped descriptor whose
 *                                  slots hold a forged put (never run), a length of slots past
 *                                  the ring: each dropped and counted, only the good puts land
 *   test_vni_guest_cons            A scribbles its ring's consumer index: the core ignores it,
 *                                  serves what A posts by hand, and publishes its own index
 *   test_vni_guest_kill            A dies (SIGKILL) with a ring full of 16 KiB puts from its
 *                                  region to B's: reclaimed, B holds only A's bytes or zeros, a
 *                                  new process with A's id is served from its own ring's start
 *   test_vni_guest_starve          A floods FIFO 0 without pause: its FIFO 1 and process B are
 *                                  served still (bounded waits)
 *   test_vni_guest_stale           A dies while its link (the port full) still holds packets it
 *                                  built: C, given A's counter block, must not see them count
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

#include "vni_test.h"

#define REGION (64u * 1024)
#define SLOTS  64u
#define RC     2       /* the reception counter a process waits on */
#define IC     3       /* an injection counter */
#define CWAIT  8000000 /* a counter wait (us) */

static int p_res[2], p_go[2], p_go2[2];
static unsigned int n_fifos = 1;

static struct trd_vni *
gopen(uint32_t proc)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .mu_fifos = n_fifos,
				 .mu_fifo_slots = SLOTS,
				 .mu_region = REGION};

	return trd_vni_open(&c);
}

static uint8_t
pat(unsigned int i, unsigned int salt)
{
	return (uint8_t)(i * 7 + salt * 13 + 1);
}

/* A process's view of itself: its node, its objects. */
struct me {
	struct trd_vni *v;
	struct trd_vni_mu_info mi;
	struct trd_coord at;
	uint8_t *r;
};

static int
me_open(struct me *m, uint32_t proc)
{
	struct trd_vni_info vi;

	m->v = gopen(proc);
	if (m->v == NULL || trd_vni_mu_info(m->v, &m->mi) != 0 || trd_vni_info(m->v, &vi) != 0)
		return -1;
	m->at.x = vi.node[0];
	m->at.y = vi.node[1];
	m->at.z = vi.node[2];
	m->r = m->mi.region;
	return 0;
}

/* Post into FIFO @p fifo as is: the descriptor with n_slots @p ns, then @p elems - 1 slots of
 * @p data, in one bulk (retried while the ring is full, bounded). 0 or -1. */
static int
raw_post(struct me *m, unsigned int fifo, const struct trd_desc *d, uint8_t ns, unsigned int elems,
	 const void *data)
{
	uint64_t deadline = trd_time_us() + 10000000;
	uint8_t buf[16 * 64];

	memcpy(buf, d, 64);
	buf[offsetof(struct trd_desc, n_slots)] = ns;
	if (elems > 1)
		memcpy(buf + 64, data, (elems - 1) * 64);
	while (rte_ring_enqueue_bulk_elem(m->mi.fifos[fifo], buf, 64, elems, NULL) == 0) {
		if (trd_time_us() > deadline)
			return -1;
		sched_yield();
	}
	return 0;
}

/* Wait until the engine judged @p n descriptors in all. 0 or -1. */
static int
judged(struct me *m, uint64_t n)
{
	uint64_t deadline = trd_time_us() + 10000000;

	do {
		if (trd_vni_mu_info(m->v, &m->mi) != 0)
			return -1;
		if (m->mi.descs + m->mi.bad_descs >= n)
			return 0;
		sched_yield();
	} while (trd_time_us() < deadline);
	return -1;
}

/* Expect @p bytes more on reception counter RC, then wait for it: 0 or -1. */
static int
rc_wait(struct me *m)
{
	int64_t c;

	if (trd_vni_counter_wait(m->v, RC, CWAIT) != 0 || trd_vni_counter_read(m->v, RC, &c) != 0)
		return -1;
	return c == 0 ? 0 : -1;
}

/* An inline put of @p len bytes of pat(., salt) to (own region, roff), its n_slots right. */
static int
put_inline(struct me *m, unsigned int fifo, uint32_t len, uint64_t roff, unsigned int salt,
	   uint16_t inj)
{
	uint8_t data[256] = {0};
	struct trd_desc d;
	unsigned int ns = (len + 63) / 64;

	for (unsigned int i = 0; i < len; i++)
		data[i] = pat(i, salt);
	trd_desc_put(&d, m->at, NULL, len, m->mi.region_key, roff, inj,
		     trd_vni_counter_id(m->v, RC));
	d.src = 0;
	return raw_post(m, fifo, &d, (uint8_t)ns, 1 + ns, data);
}

/* Bytes [off, off + len) of the region are pat(., salt); 0 or -1. */
static int
holds(const struct me *m, uint64_t off, uint32_t len, unsigned int salt)
{
	for (uint32_t i = 0; i < len; i++)
		if (m->r[off + i] != pat(i, salt))
			return -1;
	return 0;
}

static int
zero(const struct me *m, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++)
		if (m->r[i] != 0)
			return -1;
	return 0;
}

/* ---- fill ---- */

#define FILL_N 100

static int
fill_a(void *arg)
{
	struct me m;
	uint8_t buf[63 * 64];
	struct rte_ring *r;
	uint64_t copied = 0, sum = 0;

	(void)arg;
	if (me_open(&m, 0) != 0)
		return 10;
	r = m.mi.fifos[0];
	/* 63 immediate puts of 8 B in one burst: the ring (capacity 63) full */
	for (unsigned int i = 0; i < 63; i++) {
		struct trd_desc d;

		trd_desc_put(&d, m.at, NULL, 8, m.mi.region_key, i * 8, 0,
			     trd_vni_counter_id(m.v, RC));
		d.flags = TRD_DF_IMM;
		d.user = 0x0101010101010101ULL * (i + 1);
		memcpy(buf + i * 64, &d, 64);
	}
	trd_vni_counter_set(m.v, RC, 63 * 8);
	if (rte_ring_enqueue_bulk_elem(r, buf, 64, 63, NULL) != 63)
		return 11;
	if (rc_wait(&m) != 0)
		return 12;
	for (unsigned int i = 0; i < 63 * 8; i++)
		if (m.r[i] != i / 8 + 1)
			return 13;
	if (zero(&m, 63 * 8, 1024) != 0)
		return 14;
	/* inline puts of 1 .. 256 B, one after the other: their data lands at every offset of
	 * the ring, straddling its end now and then */
	for (unsigned int i = 0; i < FILL_N; i++)
		sum += 1 + (i * 61) % 256;
	trd_vni_counter_set(m.v, RC, (int64_t)sum);
	for (unsigned int i = 0; i < FILL_N; i++) {
		uint32_t len = 1 + (i * 61) % 256, ns = (len + 63) / 64;
		uint32_t i1 = (r->prod.tail + 1) & (SLOTS - 1);

		if (i1 + ns > SLOTS)
			copied += len;
		if (put_inline(&m, 0, len, 1024 + i * 256, i, 0) != 0)
			return 15;
	}
	if (rc_wait(&m) != 0)
		return 16;
	for (unsigned int i = 0; i < FILL_N; i++) {
		uint32_t len = 1 + (i * 61) % 256;

		if (holds(&m, 1024 + i * 256, len, i) != 0)
			return 17;
		if (zero(&m, 1024 + i * 256 + len, 1024 + (i + 1) * 256) != 0)
			return 18;
	}
	if (trd_vni_mu_info(m.v, &m.mi) != 0 || m.mi.descs != 63 + FILL_N || m.mi.bad_descs != 0)
		return 19;
	if (copied == 0 || write(p_res[1], &copied, sizeof(copied)) != sizeof(copied))
		return 20;
	trd_vni_close(m.v);
	return 0;
}

static void
t_fill(void)
{
	uint64_t c0 = node_stat(TRD_STAT_GUEST_COPY_BYTES), want;
	pid_t a = spawn(fill_a, NULL);

	reap_ok(a, WAIT_US, "process A");
	read_pipe(p_res[0], &want, sizeof(want));
	T_EQ(node_stat(TRD_STAT_GUEST_COPY_BYTES) - c0, want);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 0);
}

/* ---- tail ---- */

static int
wait_bad_rings(struct me *m, uint64_t n)
{
	uint64_t deadline = trd_time_us() + 10000000;

	while (trd_vni_mu_info(m->v, &m->mi) == 0 && m->mi.bad_rings < n &&
	       trd_time_us() < deadline)
		sched_yield();
	return m->mi.bad_rings == n ? 0 : -1;
}

static int
tail_a(void *arg)
{
	struct rte_ring *r0, *r1;
	uint8_t *slots;
	uint64_t s = 0x9e3779b97f4a7c15ULL, deadline;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0 || m.mi.n_fifos != 2)
		return 30;
	r0 = m.mi.fifos[0];
	r1 = m.mi.fifos[1];
	/* FIFO 1: the producer's index one behind the consumer's */
	__atomic_store_n(&r1->prod.head, r1->prod.head - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r1->prod.tail, r1->prod.tail - 1, __ATOMIC_RELEASE);
	if (wait_bad_rings(&m, 1) != 0)
		return 31;
	/* FIFO 0: random slots, then the producer's index the capacity ahead */
	slots = (uint8_t *)&r0[1];
	for (unsigned int i = 0; i < SLOTS * 64; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		slots[i] = (uint8_t)(s >> 24);
	}
	__atomic_store_n(&r0->prod.head, r0->prod.head + SLOTS - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r0->prod.tail, r0->prod.tail + SLOTS - 1, __ATOMIC_RELEASE);
	/* all of it judged: the core published a consumer index at the producer's */
	deadline = trd_time_us() + 10000000;
	while (__atomic_load_n(&r0->cons.tail, __ATOMIC_ACQUIRE) != r0->prod.tail &&
	       trd_time_us() < deadline)
		sched_yield();
	if (r0->cons.tail != r0->prod.tail)
		return 32;
	if (trd_vni_mu_info(m.v, &m.mi) != 0 || m.mi.bad_rings != 1 || m.mi.bad_descs == 0)
		return 33;
	/* a good put through the library lands; nothing else was written */
	trd_vni_counter_set(m.v, RC, 64);
	if (put_inline(&m, 0, 64, 512, 5, 0) != 0 || rc_wait(&m) != 0)
		return 34;
	if (holds(&m, 512, 64, 5) != 0 || zero(&m, 0, 512) != 0 || zero(&m, 576, REGION) != 0)
		return 35;
	/* past the capacity: FIFO 0 is not served any more either */
	__atomic_store_n(&r0->prod.head, r0->cons.tail + SLOTS, __ATOMIC_RELAXED);
	__atomic_store_n(&r0->prod.tail, r0->cons.tail + SLOTS, __ATOMIC_RELEASE);
	if (wait_bad_rings(&m, 2) != 0)
		return 36;
	trd_vni_close(m.v);
	return 0;
}

/* ---- ctr ---- */

static int
ctr_b(void *arg)
{
	uint16_t ids[RC + 1];
	struct me m;
	int64_t c;
	uint8_t go;

	(void)arg;
	if (me_open(&m, 1) != 0)
		return 40;
	for (uint16_t k = 1; k <= RC; k++) {
		ids[k] = trd_vni_counter_id(m.v, k);
		if (trd_vni_counter_set(m.v, k, 1000) != 0)
			return 41;
	}
	ids[0] = 0;
	if (write(p_res[1], ids, sizeof(ids)) != sizeof(ids) || child_read(p_go2[0], &go, 1) != 0)
		return 42;
	for (uint16_t k = 1; k <= RC; k++)
		if (trd_vni_counter_read(m.v, k, &c) != 0 || c != 1000)
			return 43; /* another process's descriptor failed or counted it */
	trd_vni_close(m.v);
	return 0;
}

static int
ctr_a(void *arg)
{
	const uint16_t bad[] = {TRD_COUNTER_BLOCK, TRD_COUNTER_BLOCK + 1, TRD_COUNTER_BLOCK + RC,
				0xffff};
	uint16_t last = TRD_COUNTER_BLOCK - 1;
	struct me m;
	int64_t c;
	uint8_t go;

	(void)arg;
	/* A first: its block is the lower one, B's may follow it */
	if (me_open(&m, 0) != 0 || m.mi.n_counters != TRD_COUNTER_BLOCK ||
	    write(p_res[1], "a", 1) != 1 || child_read(p_go[0], &go, 1) != 0)
		return 50;
	/* the block's last counter is its own */
	trd_vni_counter_set(m.v, last, 64);
	trd_vni_counter_set(m.v, RC, 64);
	if (put_inline(&m, 0, 64, 0, 1, last) != 0 || rc_wait(&m) != 0 ||
	    trd_vni_counter_wait(m.v, last, CWAIT) != 0 ||
	    trd_vni_counter_read(m.v, last, &c) != 0 || c != 0 || holds(&m, 0, 64, 1) != 0)
		return 51;
	/* past the block: dropped */
	for (unsigned int i = 0; i < RTE_DIM(bad); i++)
		if (put_inline(&m, 0, 64, 1024 + i * 64, 2, bad[i]) != 0)
			return 52;
	if (judged(&m, 1 + RTE_DIM(bad)) != 0 || m.mi.bad_descs != RTE_DIM(bad) ||
	    m.mi.descs != 1 || zero(&m, 64, REGION) != 0)
		return 53;
	trd_vni_close(m.v);
	return 0;
}

static void
t_ctr(void)
{
	uint16_t ids[RC + 1];
	pid_t a = spawn(ctr_a, NULL), b;
	uint8_t x;

	read_pipe(p_res[0], &x, 1);
	b = spawn(ctr_b, NULL);
	read_pipe(p_res[0], ids, sizeof(ids));
	T_EQ(write(p_go[1], "g", 1), 1);
	reap_ok(a, WAIT_US, "process A");
	T_EQ(write(p_go2[1], "g", 1), 1);
	reap_ok(b, WAIT_US, "process B");
}

/* ---- bounds ---- */

static int
bounds_a(void *arg)
{
	struct trd_desc d, forged;
	uint8_t data[15 * 64];
	unsigned int nbad = 0;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0)
		return 60;
	for (unsigned int i = 0; i < 4096; i++)
		m.r[REGION - 4096 + i] = pat(i, 9);
	trd_vni_counter_set(m.v, RC, 8 + 64);
	/* good: the region's last 8 bytes, to offset 0 */
	trd_desc_put(&d, m.at, NULL, 8, m.mi.region_key, 0, 0, trd_vni_counter_id(m.v, RC));
	d.flags = TRD_DF_SRC_MR;
	d.src_key = m.mi.region_key;
	d.src = REGION - 8;
	if (raw_post(&m, 0, &d, 0, 1, NULL) != 0)
		return 61;
	/* one byte past the region's end */
	d.len = 9;
	nbad++;
	if (raw_post(&m, 0, &d, 0, 1, NULL) != 0)
		return 62;
	/* a source offset that wraps */
	d.src = UINT64_MAX - 7;
	d.len = 16;
	nbad++;
	if (raw_post(&m, 0, &d, 0, 1, NULL) != 0)
		return 63;
	/* the longest length */
	d.src = 8;
	d.len = UINT32_MAX;
	nbad++;
	if (raw_post(&m, 0, &d, 0, 1, NULL) != 0)
		return 64;
	/* past the end, nothing to read */
	d.src = REGION + 1;
	d.len = 0;
	nbad++;
	if (raw_post(&m, 0, &d, 0, 1, NULL) != 0)
		return 65;
	/* a target offset that wraps */
	memset(data, 0x77, sizeof(data));
	trd_desc_put(&d, m.at, NULL, 8, m.mi.region_key, UINT64_MAX - 3, 0, 0);
	d.src = 0;
	nbad++;
	if (raw_post(&m, 0, &d, 1, 2, data) != 0)
		return 66;
	/* an immediate of 9 bytes */
	trd_desc_put(&d, m.at, NULL, 9, m.mi.region_key, 2048, 0, 0);
	d.flags = TRD_DF_IMM;
	d.user = 0x6666666666666666ULL;
	nbad++;
	if (raw_post(&m, 0, &d, 0, 1, NULL) != 0)
		return 67;
	/* inline data too long (257 B, 5 slots), and slots that hold a forged immediate put
	 * to offset 4096: the slots go with the descriptor, never read as descriptors */
	trd_desc_put(&forged, m.at, NULL, 8, m.mi.region_key, 4096, 0, 0);
	forged.flags = TRD_DF_IMM;
	forged.user = 0x6666666666666666ULL;
	for (unsigned int k = 0; k < 15; k++)
		memcpy(data + k * 64, &forged, 64);
	trd_desc_put(&d, m.at, NULL, 257, m.mi.region_key, 3072, 0, 0);
	d.src = 0;
	nbad++;
	if (raw_post(&m, 0, &d, 5, 6, data) != 0)
		return 68;
	/* 64 B in 2 slots, the second a forged put */
	d.len = 64;
	nbad++;
	if (raw_post(&m, 0, &d, 2, 3, data) != 0)
		return 69;
	/* 15 slots (what the engine's own inline data may have), 64 bytes */
	nbad++;
	if (raw_post(&m, 0, &d, 15, 16, data) != 0)
		return 70;
	/* an unknown op with more slots than the ring holds: the next one is read as such */
	d.op = 0x7f;
	nbad++;
	if (raw_post(&m, 0, &d, 200, 1, NULL) != 0)
		return 71;
	/* good: 64 B inline to offset 8192 */
	if (put_inline(&m, 0, 64, 8192, 4, 0) != 0)
		return 72;
	if (rc_wait(&m) != 0 || judged(&m, nbad + 2) != 0)
		return 73;
	if (m.mi.bad_descs != nbad || m.mi.descs != 2) {
		fprintf(stderr, "bad_descs %llu descs %llu, want %u and 2\n",
			(unsigned long long)m.mi.bad_descs, (unsigned long long)m.mi.descs, nbad);
		return 74;
	}
	for (unsigned int i = 0; i < 8; i++)
		if (m.r[i] != pat(4088 + i, 9))
			return 75;
	if (zero(&m, 8, 8192) != 0 || holds(&m, 8192, 64, 4) != 0 ||
	    zero(&m, 8192 + 64, REGION - 4096) != 0)
		return 76; /* a dropped descriptor, or a forged one, wrote something */
	trd_vni_close(m.v);
	return 0;
}

/* ---- cons ---- */

static int
cons_a(void *arg)
{
	struct rte_ring *r;
	uint8_t *slots;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0)
		return 80;
	r = m.mi.fifos[0];
	slots = (uint8_t *)&r[1];
	for (unsigned int round = 0; round < 3; round++) {
		uint32_t t = r->prod.tail;
		uint8_t data[64];
		struct trd_desc d;
		uint64_t deadline = trd_time_us() + 10000000;

		/* the consumer's index: garbage */
		__atomic_store_n(&r->cons.head, 0xdead0000u + round, __ATOMIC_RELAXED);
		__atomic_store_n(&r->cons.tail, 0xbeef0000u + round, __ATOMIC_RELAXED);
		/* a put written by hand at the producer's index */
		for (unsigned int i = 0; i < 64; i++)
			data[i] = pat(i, 20 + round);
		trd_desc_put(&d, m.at, NULL, 64, m.mi.region_key, round * 64, 0,
			     trd_vni_counter_id(m.v, RC));
		d.src = 0;
		d.n_slots = 1;
		trd_vni_counter_set(m.v, RC, 64);
		memcpy(slots + (size_t)(t & (SLOTS - 1)) * 64, &d, 64);
		memcpy(slots + (size_t)((t + 1) & (SLOTS - 1)) * 64, data, 64);
		__atomic_store_n(&r->prod.head, t + 2, __ATOMIC_RELAXED);
		__atomic_store_n(&r->prod.tail, t + 2, __ATOMIC_RELEASE);
		if (rc_wait(&m) != 0 || holds(&m, round * 64, 64, 20 + round) != 0)
			return 81;
		/* the core's own index, published again */
		while (__atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE) != t + 2 &&
		       trd_time_us() < deadline)
			sched_yield();
		if (r->cons.tail != t + 2 || r->cons.head != t + 2)
			return 82;
	}
	if (trd_vni_mu_info(m.v, &m.mi) != 0 || m.mi.descs != 3 || m.mi.bad_descs != 0 ||
	    zero(&m, 3 * 64, REGION) != 0)
		return 83;
	trd_vni_close(m.v);
	return 0;
}

/* ---- kill ---- */

#define KILL_LEN (16u * 1024)

static int
kill_b(void *arg)
{
	struct me m;
	uint64_t key;
	uint16_t rc;
	uint8_t go;

	(void)arg;
	if (me_open(&m, 1) != 0)
		return 90;
	key = m.mi.region_key;
	rc = trd_vni_counter_id(m.v, RC);
	trd_vni_counter_set(m.v, RC, 64);
	if (write(p_res[1], &key, sizeof(key)) != sizeof(key) ||
	    write(p_res[1], &rc, sizeof(rc)) != sizeof(rc) || child_read(p_go[0], &go, 1) != 0)
		return 91;
	/* C's put */
	if (rc_wait(&m) != 0)
		return 92;
	/* A's bytes where its puts went, or nothing; C's at offset 0 */
	if (holds(&m, 0, 64, 31) != 0)
		return 93;
	for (unsigned int i = 64; i < REGION; i++)
		if (m.r[i] != 0 && m.r[i] != 0xa5)
			return 94;
	trd_vni_close(m.v);
	return 0;
}

static uint64_t kill_key;
static uint16_t kill_rc;

/* A: a ring full of 16 KiB puts from its region into B's, then death. */
static int
kill_a(void *arg)
{
	struct trd_desc d;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0)
		return 100;
	memset(m.r, 0xa5, REGION);
	trd_desc_put(&d, m.at, NULL, KILL_LEN, kill_key, 0, 0, 0);
	d.flags = TRD_DF_SRC_MR;
	d.src_key = m.mi.region_key;
	for (unsigned int i = 0; i < SLOTS - 1; i++) {
		d.src = (i % 4) * KILL_LEN;
		d.roff = 64 + (i % 3) * KILL_LEN;
		if (rte_ring_enqueue_bulk_elem(m.mi.fifos[0], &d, 64, 1, NULL) != 1)
			break; /* full: the engine is reading */
	}
	raise(SIGKILL);
	return 101;
}

/* C: A's process id again, a ring of its own: one put of 64 B to B's offset 0. */
static int
kill_c(void *arg)
{
	uint8_t data[64];
	struct trd_desc d;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0)
		return 110;
	for (unsigned int i = 0; i < 64; i++)
		data[i] = pat(i, 31);
	trd_desc_put(&d, m.at, data, 64, kill_key, 0, IC, kill_rc);
	trd_vni_counter_set(m.v, IC, 64);
	if (trd_vni_inject(m.v, 0, &d, 1) != 0 || trd_vni_counter_wait(m.v, IC, CWAIT) != 0)
		return 111;
	if (trd_vni_mu_info(m.v, &m.mi) != 0 || m.mi.descs != 1 || m.mi.bad_descs != 0)
		return 112;
	trd_vni_close(m.v);
	return 0;
}

static void
t_kill(void)
{
	uint64_t rec0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED);
	pid_t b = spawn(kill_b, NULL), a;
	int st;

	read_pipe(p_res[0], &kill_key, sizeof(kill_key));
	read_pipe(p_res[0], &kill_rc, sizeof(kill_rc));
	a = spawn(kill_a, NULL);
	for (uint64_t deadline = trd_time_us() + WAIT_US; waitpid(a, &st, WNOHANG) != a;) {
		T_ASSERT(trd_time_us() < deadline, "process A does not die");
		pump();
	}
	T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "process A: status %d", st);
	pump_until_stat(TRD_VNI_SVC_STAT_RECLAIMED, rec0 + 1);
	reap_ok(spawn(kill_c, NULL), WAIT_US, "process C, A's id again");
	T_EQ(write(p_go[1], "g", 1), 1);
	reap_ok(b, WAIT_US, "process B");
}

/* ---- starve ---- */

static volatile int flood_stop;

static void *
flood(void *arg)
{
	struct me *m = arg;
	struct trd_desc d[32];

	for (unsigned int i = 0; i < 32; i++) {
		trd_desc_put(&d[i], m->at, NULL, 8, m->mi.region_key, 4096 + i * 8, 0, 0);
		d[i].flags = TRD_DF_IMM;
		d[i].user = 0x4242424242424242ULL;
	}
	while (!flood_stop)
		(void)trd_vni_inject(m->v, 0, d, 32); /* no pause, full or not */
	return NULL;
}

static int
starve_b(void *arg)
{
	uint8_t go;
	struct me m;

	(void)arg;
	if (me_open(&m, 1) != 0 || child_read(p_go[0], &go, 1) != 0)
		return 120;
	trd_vni_counter_set(m.v, RC, 64);
	if (put_inline(&m, 0, 64, 0, 7, 0) != 0 || rc_wait(&m) != 0 || holds(&m, 0, 64, 7) != 0)
		return 121;
	if (write(p_res[1], "b", 1) != 1)
		return 122;
	trd_vni_close(m.v);
	return 0;
}

static int
starve_a(void *arg)
{
	pthread_t th;
	struct me m;
	uint64_t descs0;
	uint8_t done;
	int rc = 0;

	(void)arg;
	if (me_open(&m, 0) != 0 || m.mi.n_fifos != 2)
		return 130;
	if (pthread_create(&th, NULL, flood, &m) != 0)
		return 131;
	/* the flood is served */
	descs0 = m.mi.descs;
	if (judged(&m, descs0 + 1000) != 0)
		rc = 132;
	/* FIFO 1 is served meanwhile */
	trd_vni_counter_set(m.v, RC, 64);
	if (rc == 0 &&
	    (put_inline(&m, 1, 64, 0, 8, 0) != 0 || rc_wait(&m) != 0 || holds(&m, 0, 64, 8) != 0))
		rc = 133;
	/* and so is B */
	if (rc == 0 && (write(p_go[1], "g", 1) != 1 || child_read(p_res[0], &done, 1) != 0))
		rc = 134;
	flood_stop = 1;
	pthread_join(th, NULL);
	trd_vni_close(m.v);
	return rc;
}

static void
t_starve(void)
{
	pid_t b = spawn(starve_b, NULL), a = spawn(starve_a, NULL);

	reap_ok(a, 3 * WAIT_US, "process A");
	reap_ok(b, WAIT_US, "process B");
}

/* ---- stale ---- */

/* Packets a guest's FIFO built that its link still holds (the port full) when the guest goes
 * name its injection counter: once its block is freed and made another process's, they must
 * not count on that process's counter. The torus is unreliable here (no window: the FIFO
 * builds as far as the link's buffer takes), nothing coalesces (a packet a put), and only
 * node 0 is polled while A sends: its link to node 1 fills (1024 frames) and holds the rest. */

#define STALE_N 1504

static uint8_t stale_dst[STALE_N * 64];
static uint64_t stale_key;

static void
pump0(void)
{
	trd_node_poll(nd[0]);
	trd_vni_svc_poll(vs);
}

static int
stale_a(void *arg)
{
	struct trd_coord n1 = {.x = 1};
	struct trd_desc d[32];
	uint8_t data[64];
	unsigned int posted = 0;
	uint64_t deadline = trd_time_us() + 20000000;
	uint16_t id;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0)
		return 140;
	memset(data, 0x3c, sizeof(data));
	trd_vni_counter_set(m.v, IC, STALE_N * 64);
	while (posted < STALE_N && trd_time_us() < deadline) {
		for (unsigned int i = 0; i < 32; i++)
			trd_desc_put(&d[i], n1, data, 64, stale_key, (posted + i) * 64, IC, 0);
		if (trd_vni_inject(m.v, 0, d, 8) == 0)
			posted += 8;
		else
			sched_yield();
	}
	/* everything taken by the core */
	if (posted != STALE_N || judged(&m, STALE_N) != 0 || m.mi.descs != STALE_N) {
		fprintf(stderr, "posted %u, taken %llu\n", posted, (unsigned long long)m.mi.descs);
		return 141;
	}
	id = trd_vni_counter_id(m.v, IC);
	if (write(p_res[1], &id, sizeof(id)) != sizeof(id))
		return 142;
	raise(SIGKILL);
	return 143;
}

static int
stale_c(void *arg)
{
	uint16_t id;
	int64_t c;
	uint8_t go;
	struct me m;

	(void)arg;
	if (me_open(&m, 0) != 0 || trd_vni_counter_set(m.v, IC, 1000) != 0)
		return 150;
	id = trd_vni_counter_id(m.v, IC);
	if (write(p_res[1], &id, sizeof(id)) != sizeof(id) || child_read(p_go[0], &go, 1) != 0)
		return 151;
	/* nothing of its own was posted: its counter is what it set */
	if (trd_vni_counter_read(m.v, IC, &c) != 0)
		return 152;
	if (c != 1000) {
		fprintf(stderr,
			"process C's counter %lld, set to 1000: a dead process's packets "
			"counted on it\n",
			(long long)c);
		return 153;
	}
	trd_vni_close(m.v);
	return 0;
}

static void
t_stale(void)
{
	struct trd_mr *mr = trd_mr_register(nd[1], stale_dst, sizeof(stale_dst), TRD_ACCESS_ALL);
	uint64_t rec0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED), deadline;
	uint16_t id_a = 0, id_c = 0;
	pid_t a, c;
	int st;

	T_ASSERT(mr != NULL, "a region on node 1");
	stale_key = trd_mr_key(mr);
	a = spawn(stale_a, NULL);
	/* node 1 is not polled: node 0's link to it fills */
	deadline = trd_time_us() + 3 * WAIT_US;
	while (waitpid(a, &st, WNOHANG) != a) {
		T_ASSERT(trd_time_us() < deadline, "process A does not finish");
		pump0();
	}
	T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "process A: status %d", st);
	T_EQ(read(p_res[0], &id_a, sizeof(id_a)), sizeof(id_a));
	deadline = trd_time_us() + WAIT_US;
	while (stat_of(TRD_VNI_SVC_STAT_RECLAIMED) == rec0 && trd_time_us() < deadline)
		pump0();
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_RECLAIMED) == rec0 + 1, "A's interface not reclaimed");
	/* (the case this test is about: some of A's packets still wait in the link) */
	T_ASSERT(node_stat(TRD_STAT_TX_PKTS) < STALE_N, "all of A's packets left: %llu",
		 (unsigned long long)node_stat(TRD_STAT_TX_PKTS));
	c = spawn(stale_c, NULL);
	deadline = trd_time_us() + WAIT_US;
	while (read(p_res[0], &id_c, sizeof(id_c)) != sizeof(id_c)) {
		T_ASSERT(trd_time_us() < deadline, "process C does not attach");
		pump0();
	}
	T_ASSERT(id_c == id_a, "C's counter %u is not A's %u: the case is not made", id_c, id_a);
	/* now node 1 takes what waits */
	deadline = trd_time_us() + WAIT_US;
	while (node_stat(TRD_STAT_TX_PKTS) < STALE_N && trd_time_us() < deadline)
		pump();
	T_ASSERT(node_stat(TRD_STAT_TX_PKTS) >= STALE_N, "A's packets never left");
	T_EQ(write(p_go[1], "g", 1), 1);
	reap_ok(c, WAIT_US, "process C");
}

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0, 1:1\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
		int (*child)(void *); /* or a process alone, which must exit 0 */
		unsigned int fifos;
	} tests[] = {{"fill", t_fill, NULL, 1},     {"tail", NULL, tail_a, 2},
		     {"ctr", t_ctr, NULL, 1},       {"bounds", NULL, bounds_a, 1},
		     {"cons", NULL, cons_a, 1},     {"kill", t_kill, NULL, 1},
		     {"starve", t_starve, NULL, 2}, {"stale", t_stale, NULL, 1}};
	struct trd_vni_svc_conf vc;
	struct vni_setup_opt o = {.rec_fifo_size = 1024, .n_counters = 3 * TRD_COUNTER_BLOCK};

	if (argc != 2) {
		fprintf(stderr, "usage: %s fill|tail|ctr|bounds|cons|kill|starve|stale\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.max_pool = 1 << 24;
	if (strcmp(argv[1], "stale") == 0) {
		/* an unreliable torus that never coalesces */
		o.coalesce = 1;
		o.unreliable = true;
	}
	vni_setup_with("vgh", topo_text, &o, &vc);
	pipe_nb(p_res);
	T_EQ(pipe(p_go), 0);
	T_EQ(pipe(p_go2), 0);
	for (unsigned int i = 0; i < RTE_DIM(tests); i++)
		if (strcmp(argv[1], tests[i].name) == 0) {
			n_fifos = tests[i].fifos;
			if (tests[i].fn != NULL)
				tests[i].fn();
			else
				reap_ok(spawn(tests[i].child, NULL), WAIT_US, "process A");
			printf("PASS: vni guest hostile %s\n", argv[1]);
			return 0;
		}
	T_ASSERT(0, "unknown test %s", argv[1]);
	return 2;
}
