/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reception FIFOs of attached processes (issue 24; docs/vni.md, "Messaging-unit objects"):
 * memory-FIFO messages to node FIFO ids TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST land in
 * the ring of the process that holds the id, copied in by its engine, read in place. A 3x1x1
 * torus of in-process engines over ring links (reliable: sessions), the VNI service on node 0
 * (and on node 1); the processes are forked children that use libtoroid_vni only. The sender
 * S (process 1:0 on node 0) serves the parent's commands (struct cmd: what to post, then its
 * injection counter's end); the reader R (process 1:1) checks what it finds in its FIFOs.
 *
 *   test_vni_mu_rfifo basic   S and R on node 0: 10 messages, 1, 0, 63, 64, 65, 256 bytes
 *                             inline, 8 immediate, 1, 4 and 16 KiB from S's region, then 100
 *                             bytes from the parent's own node (trd_inject()): each once,
 *                             S's in the order posted, byte-exact, with its len, user, src
 *                             and fifo; the slot before its bytes is its struct trd_rslot and
 *                             its bytes do not cross the ring's end; R's reception counter
 *                             counts exactly their bytes, S's injection counter reaches 0;
 *                             rmsgs 10, no drop on either node; bad configurations refused
 *   test_vni_mu_rfifo basic2  the same with R on node 1
 *   test_vni_mu_rfifo full    R (node 1, a ring of 64 slots) does not read while S sends 6
 *                             messages of 2 KiB from its region (33 slots, two packets each:
 *                             the second is refused at its last packet) and 96 of 100 bytes
 *                             inline (4.5 times what the ring holds) until node 1 refused one
 *                             (fifo_full), then drains, releasing after each poll that
 *                             returned messages: every message once, in order, byte-exact,
 *                             each within the ring, R's counter at exactly 0, rfull > 0
 *   test_vni_mu_rfifo hostile S posts, past the library, messages to ids 0, 63, 127 and 255
 *                             (each bad_descs, its counter failed); to an id nobody holds
 *                             (unknown_fifo at node 1), longer than R's ring can ever hold
 *                             (bad_length once: not retried), with a reception counter not
 *                             R's (ctr_denied); none lands, then a good one does; R then moves
 *                             its ring's consumer index past the producer's: the next three
 *                             messages are not written (rbad_rings 1, rmsgs unchanged), the
 *                             ring and the bytes around it unchanged, its region untouched,
 *                             and R's second FIFO still takes a message
 *   test_vni_mu_rfifo wait    trd_vni_rfifo_wait() with nothing coming returns -ETIMEDOUT
 *                             after about its timeout; R sleeping on its eventfd wakes with
 *                             the message S sends once R sleeps (the service's wakeups count
 *                             it), then takes two more in order; the FIFO's own eventfd
 *                             (trd_vni_rfifo_fd), armed, is signalled once for the next
 *                             message (a second arm with it there: -EBUSY, and armed: the
 *                             next one is signalled too), and not for the one after, unarmed
 *   test_vni_mu_rfifo death   R (node 1) is killed with its ring of 64 slots full (21
 *                             messages) while node 1 refuses S's 14 more: sent again, they
 *                             drop as unknown_fifo, as do 3 sent to its id after; once
 *                             attaching round the ids brings the dead reader's id back, a new
 *                             reader gets it, finds its FIFO empty and takes only the message
 *                             sent to it after (rmsgs 1: nothing stale ever lands)
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#define WAIT_US 30000000ULL /* S waits up to 20 s for its counter: the parent longer */
#include "vni_mu_test.h"
#include "vni_rfifo_test.h"
#include "vni_test.h"

#define FULL_N   96
#define FULL_LEN 100u
#define FULL_BIG 6 /* first 6 of 2 KiB from S's region: two packets each */
#define BIG_LEN  2048u
#define FULL_ALL (FULL_N + FULL_BIG)
#define U_INPROC 5000 /* the parent's message's user word */

/* R's set-up: attach as process 1 with @p n_rfifos FIFOs of @p slots (and @p spin), its
 * counter CTR set to @p count, its region filled with @p fill, its target sent to the parent.
 * NULL if a step failed. */
static struct trd_vni *
r_setup(unsigned int n_rfifos, unsigned int slots, int spin, int64_t count, uint8_t fill,
	struct trd_vni_mu_info *mi)
{
	struct trd_vni *v;
	struct trd_vni_info vi;
	struct target t = {.pid = getpid()};

	child_start();
	v = rf_open(1, r_on_n1, n_rfifos, slots, spin);
	if (v == NULL || trd_vni_mu_info(v, mi) != 0 || trd_vni_info(v, &vi) != 0) {
		fprintf(stderr, "R: attach: %s\n", strerror(errno));
		return NULL;
	}
	if (mi->n_rfifos != n_rfifos || mi->region_len != REGION)
		return NULL;
	for (unsigned int k = 0; k < n_rfifos; k++) {
		if (mi->rfifo_ids[k] < TRD_GUEST_RFIFO_FIRST ||
		    mi->rfifo_ids[k] > TRD_GUEST_RFIFO_LAST ||
		    trd_vni_rfifo_id(v, k) != mi->rfifo_ids[k] ||
		    (k > 0 && mi->rfifo_ids[k] == mi->rfifo_ids[0]))
			return NULL;
		t.ids[k] = mi->rfifo_ids[k];
	}
	if (trd_vni_rfifo_id(v, n_rfifos) != 0 || mi->rmsgs != 0 || mi->rfull != 0 ||
	    mi->rbad_rings != 0)
		return NULL;
	memset(mi->region, fill, REGION);
	if (trd_vni_counter_set(v, CTR, count) != 0)
		return NULL;
	t.n_ids = (uint8_t)n_rfifos;
	t.ctr = trd_vni_counter_id(v, CTR);
	memcpy(t.node, vi.node, 3);
	if (write(p_r2p[1], &t, sizeof(t)) != sizeof(t))
		return NULL;
	return v;
}

/* The rte_ring of FIFO whose first message (at slot 0) has its bytes at @p data: the ring's
 * 64-byte slots follow its header. NULL if it does not look like one of @p min_slots. */
static struct rte_ring *
ring_at(const void *data, unsigned int min_slots)
{
	struct rte_ring *r = (struct rte_ring *)((const uint8_t *)data - 64) - 1;

	if (r->size < min_slots || (r->size & (r->size - 1)) != 0 || r->mask != r->size - 1)
		return NULL;
	return r;
}

/* Message @p m lies whole in ring @p r after its header slot, a struct trd_rslot that says
 * what @p m says. 0 or the failing check. */
static int
slot_ok(const struct rte_ring *r, const struct trd_msg *m)
{
	const uint8_t *base = (const uint8_t *)&r[1], *p = m->data;
	const struct trd_rslot *h = (const struct trd_rslot *)(p - 64);
	size_t bytes = (size_t)r->size * 64;

	if (p < base + 64 || p > base + bytes || (size_t)(p - base) % 64 != 0)
		return 1; /* not a slot of the ring after a header slot */
	if (m->len > (size_t)(base + bytes - p))
		return 2; /* across the ring's end */
	if (h->len != m->len || h->n_slots != (m->len + 63) / 64 || h->flags != 0 ||
	    h->fifo != m->fifo || h->user != m->user || h->src.x != m->src.x ||
	    h->src.y != m->src.y || h->src.z != m->src.z)
		return 3;
	return 0;
}

/* ---- basic ---- */

static const struct item basic_items[] = {
	{.len = 1, .count = 1, .kind = K_INLINE},    {.len = 0, .count = 1, .kind = K_INLINE},
	{.len = 63, .count = 1, .kind = K_INLINE},   {.len = 64, .count = 1, .kind = K_INLINE},
	{.len = 65, .count = 1, .kind = K_INLINE},   {.len = 256, .count = 1, .kind = K_INLINE},
	{.len = 8, .count = 1, .kind = K_IMM},       {.len = 1024, .count = 1, .kind = K_REGION},
	{.len = 4096, .count = 1, .kind = K_REGION}, {.len = 16384, .count = 1, .kind = K_REGION},
};
#define N_BASIC   (sizeof(basic_items) / sizeof(basic_items[0]))
#define U_BASIC   1000
#define INPROC    100u
#define BASIC_SUM (1 + 0 + 63 + 64 + 65 + 256 + 8 + 1024 + 4096 + 16384 + INPROC)

/* Configurations the library refuses before it asks the engine. 0 or the failing one. */
static int
bad_confs(void)
{
	static const unsigned int bad[][2] = {
		{TRD_VNI_MU_RFIFOS_MAX + 1, 64}, {1, 32}, {1, 100}, {1, 8192}};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		if (rf_open(1, r_on_n1, bad[i][0], bad[i][1], 0) != NULL || errno != EINVAL)
			return (int)i + 1;
	}
	return 0;
}

/* One message of basic: S's k-th (in order, *next) or the parent's (once, *inproc). */
static int
basic_one(const struct trd_msg *m, uint8_t id, unsigned int *next, bool *inproc)
{
	if (m->user == U_INPROC && m->len == INPROC) {
		if (*inproc || msg_ok(m, U_INPROC, INPROC, false, id) != 0)
			return 1;
		*inproc = true;
		return 0;
	}
	if (*next >= N_BASIC)
		return 2;
	if (msg_ok(m, U_BASIC + *next, basic_items[*next].len, basic_items[*next].kind == K_IMM,
		   id) != 0) {
		fprintf(stderr, "R: message %u (len %u user %llu): %d\n", *next, m->len,
			(unsigned long long)m->user,
			msg_ok(m, U_BASIC + *next, basic_items[*next].len,
			       basic_items[*next].kind == K_IMM, id));
		return 3;
	}
	(*next)++;
	return 0;
}

static int
basic_r(void *arg)
{
	struct trd_vni_mu_info mi;
	struct rte_ring *r = NULL;
	unsigned int next = 0, got = 0;
	bool inproc = false;
	uint64_t deadline = trd_time_us() + CWAIT;
	struct trd_msg m[4];
	struct trd_vni *v;
	int64_t c;
	int rc = bad_confs();

	(void)arg;
	if (rc != 0)
		return 10 + rc;
	v = r_setup(1, 1024, 0, BASIC_SUM, 0, &mi);
	if (v == NULL)
		return 20;
	if (trd_vni_rfifo_poll(v, 1, m, 1) != -ENOENT || trd_vni_rfifo_release(v, 1) != -ENOENT ||
	    trd_vni_rfifo_poll(v, 0, NULL, 1) != -EINVAL)
		return 21;
	while (got < N_BASIC + 1 && trd_time_us() < deadline) {
		int n = trd_vni_rfifo_poll(v, 0, m, 4);

		if (n < 0)
			return 22;
		for (int i = 0; i < n; i++, got++) {
			if (got == 0 && (r = ring_at(m[0].data, 1024)) == NULL)
				return 23; /* the first message is at slot 0 */
			if (basic_one(&m[i], mi.rfifo_ids[0], &next, &inproc) != 0)
				return 24;
			if (m[i].len != 0 && slot_ok(r, &m[i]) != 0)
				return 25 + slot_ok(r, &m[i]); /* 26 .. 28 */
		}
		if (n > 0 && trd_vni_rfifo_release(v, 0) != 0)
			return 29;
		if (n == 0)
			sched_yield();
	}
	if (got != N_BASIC + 1 || trd_vni_rfifo_poll(v, 0, m, 4) != 0)
		return 30;
	/* the reception counter counted every byte once */
	if (trd_vni_counter_wait(v, CTR, CWAIT) != 0 || trd_vni_counter_read(v, CTR, &c) != 0 ||
	    c != 0)
		return 31;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rmsgs != N_BASIC + 1 || mi.rfull != 0 ||
	    mi.rbad_rings != 0)
		return 32;
	trd_vni_close(v);
	return 0;
}

/* The parent's own message: @p len bytes from node 0's injection FIFO 0 to R's FIFO. */
static void
inproc_send(const struct target *t, uint32_t len, uint64_t user)
{
	uint8_t data[INPROC];
	struct trd_desc d;
	uint64_t deadline = trd_time_us() + WAIT_US;
	uint16_t ctr;
	int64_t c;

	T_ASSERT(len <= sizeof(data), "%u bytes", len);
	for (uint32_t j = 0; j < len; j++)
		data[j] = pat(j, user);
	T_EQ(trd_counter_alloc(nd[0], &ctr), 0);
	T_EQ(trd_counter_set(nd[0], ctr, len), 0);
	trd_desc_fifo(&d, coord_of(t->node), t->ids[0], data, len, user, ctr);
	d.rec_ctr = t->ctr;
	T_EQ(trd_inject(trd_inj_fifo(nd[0], 0), &d), 0);
	do {
		pump();
		T_EQ(trd_counter_read(nd[0], ctr, &c), 0);
	} while (c != 0 && trd_time_us() < deadline);
	T_EQ(c, 0);
}

/* Node @p r's drops of the causes a reception FIFO may see. */
static uint64_t
rf_drops(unsigned int r)
{
	return ndrop(r, TRD_DROP_UNKNOWN_FIFO) + ndrop(r, TRD_DROP_FIFO_FULL) +
	       ndrop(r, TRD_DROP_BAD_LENGTH) + ndrop(r, TRD_DROP_CTR_DENIED) +
	       ndrop(r, TRD_DROP_UNKNOWN_COUNTER);
}

static void
test_basic(void)
{
	uint64_t d0 = rf_drops(0), d1 = rf_drops(1);
	pid_t s = spawn(sender, NULL), r = spawn(basic_r, NULL);
	struct item its[N_BASIC];
	struct target t;
	struct reply rp;

	read_r(r, &t, sizeof(t));
	memcpy(its, basic_items, sizeof(its));
	for (unsigned int i = 0; i < N_BASIC; i++) {
		its[i].fifo = t.ids[0];
		its[i].rec_ctr = t.ctr;
	}
	rp = s_cmd(&t, U_BASIC, its, N_BASIC);
	T_ASSERT(rp.rc == 0 && rp.ctr == 0, "S: step %d, counter %lld", rp.rc, (long long)rp.ctr);
	T_EQ(rp.descs, N_BASIC);
	T_EQ(rp.bad_descs, 0);
	inproc_send(&t, INPROC, U_INPROC);
	s_quit();
	reap_ok(s, WAIT_US, "S");
	reap_ok(r, WAIT_US, "R");
	T_EQ(rf_drops(0) - d0, 0);
	T_EQ(rf_drops(1) - d1, 0);
}

/* ---- full ---- */

static int
full_r(void *arg)
{
	struct trd_vni_mu_info mi;
	struct rte_ring *r = NULL;
	uint64_t deadline;
	struct trd_msg m[8];
	struct trd_vni *v;
	unsigned int k = 0;
	uint8_t go;
	int64_t c;

	(void)arg;
	v = r_setup(1, 64, 0, FULL_N * FULL_LEN + FULL_BIG * BIG_LEN, 0, &mi);
	if (v == NULL)
		return 40;
	/* not read until node 1 refused a message for want of room */
	if (child_read(p_p2r[0], &go, 1) != 0)
		return 41;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rfull == 0)
		return 42;
	deadline = trd_time_us() + CWAIT;
	while (k < FULL_ALL && trd_time_us() < deadline) {
		int n = trd_vni_rfifo_poll(v, 0, m, 8);

		if (n < 0)
			return 43;
		for (int i = 0; i < n; i++, k++) {
			int bad = k < FULL_ALL ? msg_ok(&m[i], k, k < FULL_BIG ? BIG_LEN : FULL_LEN,
							false, mi.rfifo_ids[0])
					       : -1;

			if (bad != 0) {
				fprintf(stderr, "R: message %u: user %llu len %u: %d\n", k,
					(unsigned long long)m[i].user, m[i].len, bad);
				return 44;
			}
			if (k == 0 && (r = ring_at(m[0].data, 64)) == NULL)
				return 45;
			if (slot_ok(r, &m[i]) != 0)
				return 46;
		}
		if (n > 0 && trd_vni_rfifo_release(v, 0) != 0)
			return 47;
		if (n == 0)
			sched_yield();
	}
	if (k != FULL_ALL || trd_vni_rfifo_poll(v, 0, m, 8) != 0) {
		trd_vni_mu_info(v, &mi);
		fprintf(stderr, "R: %u messages of %u in order (rmsgs %llu, rfull %llu)\n", k,
			FULL_ALL, (unsigned long long)mi.rmsgs, (unsigned long long)mi.rfull);
		return 48;
	}
	/* each message counted once, however often it was sent */
	if (trd_vni_counter_wait(v, CTR, CWAIT) != 0 || trd_vni_counter_read(v, CTR, &c) != 0 ||
	    c != 0)
		return 49;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rmsgs != FULL_ALL || mi.rfull == 0 ||
	    mi.rbad_rings != 0)
		return 50;
	if (write(p_r2p[1], &mi.rfull, sizeof(mi.rfull)) != sizeof(mi.rfull))
		return 51;
	trd_vni_close(v);
	return 0;
}

static void
test_full(void)
{
	pid_t s = spawn(sender, NULL), r = spawn(full_r, NULL);
	uint64_t f0 = ndrop(1, TRD_DROP_FIFO_FULL), re0 = nstat(0, TRD_STAT_RETRANS), rfull;
	struct item it = {.len = FULL_LEN, .count = FULL_N, .kind = K_INLINE};
	struct cmd c = {.n_items = 2, .user0 = 0};
	struct target t;
	struct reply rp;

	read_r(r, &t, sizeof(t));
	it.fifo = t.ids[0];
	it.rec_ctr = t.ctr;
	memcpy(c.node, t.node, 3);
	c.it[1] = it;
	c.it[0] = (struct item){.len = BIG_LEN,
				.count = FULL_BIG,
				.kind = K_REGION,
				.fifo = t.ids[0],
				.rec_ctr = t.ctr};
	T_EQ(write(p_cmd[1], &c, sizeof(c)), sizeof(c));
	pump_until_drop(1, TRD_DROP_FIFO_FULL, f0 + 1);
	T_EQ(write(p_p2r[1], "g", 1), 1);
	read_pipe(p_rep[0], &rp, sizeof(rp));
	T_ASSERT(rp.rc == 0 && rp.ctr == 0, "S: step %d, counter %lld", rp.rc, (long long)rp.ctr);
	T_EQ(rp.descs, FULL_ALL);
	read_r(r, &rfull, sizeof(rfull));
	s_quit();
	reap_ok(s, WAIT_US, "S");
	reap_ok(r, WAIT_US, "R");
	printf("%u messages into a ring of 64 slots: %llu refused (rfull), node 1 fifo_full %llu, "
	       "node 0 retransmits %llu\n",
	       FULL_ALL, (unsigned long long)rfull,
	       (unsigned long long)(ndrop(1, TRD_DROP_FIFO_FULL) - f0),
	       (unsigned long long)(nstat(0, TRD_STAT_RETRANS) - re0));
	T_ASSERT(rfull > 0, "no message refused");
	T_EQ(ndrop(1, TRD_DROP_UNKNOWN_FIFO) + ndrop(1, TRD_DROP_BAD_LENGTH), 0);
}

/* ---- hostile ---- */

#define U_GOOD   7000
#define U_BROKEN 8000 /* 3 to the broken ring, then U_BROKEN + 3 to FIFO 1 */
/* The bytes before R's ring 0 that must stay: the slots of its injection FIFO (the segment
 * holds the header, injection FIFOs, reception FIFOs, the region); after it: its ring 1,
 * which takes a message, then the region (filled, and checked too). */
#define BEFORE    1024u
#define AFTER     8192u
#define AROUND(r) (BEFORE + sizeof(*(r)) + (size_t)(r)->size * 64 + AFTER)

/* After R broke ring @p r0 (@p snap: it with BEFORE and AFTER bytes), taken message @p m1 of
 * its ring 1: nothing of the snapshot but ring 1 changed. 0 or the failing check. */
static int
around_ok(const struct rte_ring *r0, const uint8_t *snap, const struct trd_msg *m1)
{
	const uint8_t *lo = (const uint8_t *)r0 - BEFORE;
	const struct rte_ring *r1 = ring_at(m1->data, 64);
	const uint8_t *x0, *x1;

	if (r1 == NULL)
		return 1;
	x0 = (const uint8_t *)r1;
	x1 = (const uint8_t *)&r1[1] + (size_t)r1->size * 64;
	for (size_t i = 0; i < AROUND(r0); i++) {
		if (lo + i >= x0 && lo + i < x1)
			continue; /* ring 1 took a message */
		if (lo[i] != snap[i]) {
			fprintf(stderr, "R: byte %zd from ring 0's header changed\n",
				(ptrdiff_t)i - (ptrdiff_t)BEFORE);
			return 2;
		}
	}
	return 0;
}

/* R breaks its ring @p r: the consumer's index past the producer's. @p snap: the bytes. */
static void
break_ring(struct rte_ring *r, uint8_t *snap)
{
	uint32_t past = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) + 1000;

	__atomic_store_n(&r->cons.head, past, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cons.tail, past, __ATOMIC_RELEASE);
	memcpy(snap, (const uint8_t *)r - BEFORE, AROUND(r));
}

static int
hostile_r(void *arg)
{
	static uint8_t snap[BEFORE + sizeof(struct rte_ring) + 64 * 64 + AFTER];
	struct trd_vni_mu_info mi;
	struct rte_ring *r;
	struct trd_msg m;
	struct trd_vni *v;
	uint8_t go;
	int64_t c;

	(void)arg;
	v = r_setup(2, 64, 0, 1000, 0xc5, &mi);
	if (v == NULL)
		return 60;
	if (child_read(p_p2r[0], &go, 1) != 0)
		return 61;
	/* the good one, the first to land */
	if (take_one(v, 0, &m, CWAIT) != 1 || msg_ok(&m, U_GOOD, 100, false, mi.rfifo_ids[0]) != 0)
		return 62;
	if ((r = ring_at(m.data, 64)) == NULL || r->size != 64 || slot_ok(r, &m) != 0)
		return 63;
	if (trd_vni_counter_read(v, CTR, &c) != 0 || c != 1000 - 100) {
		fprintf(stderr, "R: counter %lld, want %d: a message dropped counted\n",
			(long long)c, 1000 - 100);
		return 64;
	}
	if (trd_vni_rfifo_release(v, 0) != 0 || trd_vni_rfifo_poll(v, 0, &m, 1) != 0)
		return 65;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rmsgs != 1 || mi.rbad_rings != 0)
		return 66;
	break_ring(r, snap);
	if (write(p_r2p[1], "b", 1) != 1 || child_read(p_p2r[0], &go, 1) != 0)
		return 67;
	/* three to the broken ring, then one to FIFO 1: that one is served */
	if (take_one(v, 1, &m, CWAIT) != 1 ||
	    msg_ok(&m, U_BROKEN + 3, 8, false, mi.rfifo_ids[1]) != 0)
		return 68;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rbad_rings != 1 || mi.rmsgs != 2) {
		fprintf(stderr, "R: rbad_rings %llu rmsgs %llu, want 1 and 2\n",
			(unsigned long long)mi.rbad_rings, (unsigned long long)mi.rmsgs);
		return 69;
	}
	if (trd_vni_rfifo_poll(v, 0, &m, 1) > 0)
		return 70;
	if (around_ok(r, snap, &m) != 0)
		return 71;
	for (unsigned int i = 0; i < REGION; i++)
		if (((const uint8_t *)mi.region)[i] != 0xc5)
			return 72;
	if (trd_vni_counter_read(v, CTR, &c) != 0 || c != 1000 - 100)
		return 73; /* a message not written counted */
	trd_vni_close(v);
	return 0;
}

/* S's messages that break a rule, each dropped and counted where it should be. */
static void
hostile_bad(const struct target *t)
{
	static const uint8_t ids[] = {0, 63, TRD_GUEST_RFIFO_FIRST - 1, TRD_GUEST_RFIFO_LAST + 1};
	struct item it[4];
	struct reply rp;
	uint64_t d;
	uint8_t uid = TRD_GUEST_RFIFO_LAST;

	/* not an attached process's FIFO: refused by S's engine */
	for (unsigned int i = 0; i < 4; i++)
		it[i] = (struct item){
			.len = 8, .count = 1, .kind = K_INLINE, .fifo = ids[i], .raw = 1};
	rp = s_cmd(t, 100, it, 4);
	T_EQ(rp.rc, 0);
	T_EQ(rp.bad_descs, 4);
	T_EQ(rp.descs, 0);
	T_ASSERT(rp.ctr <= TRD_COUNTER_FAILED, "S's counter %lld not failed", (long long)rp.ctr);
	/* an id nobody holds */
	while (memchr(t->ids, uid, t->n_ids) != NULL)
		uid--;
	it[0] = (struct item){.len = 8, .count = 1, .kind = K_INLINE, .fifo = uid};
	d = ndrop(1, TRD_DROP_UNKNOWN_FIFO);
	s_cmd_ok(t, 200, it, 1);
	pump_until_drop(1, TRD_DROP_UNKNOWN_FIFO, d + 1);
	/* a reception counter not R's: one of node 1's own */
	T_EQ(trd_counter_alloc(nd[1], &it[0].rec_ctr), 0);
	it[0].fifo = t->ids[0];
	d = ndrop(1, TRD_DROP_CTR_DENIED);
	s_cmd_ok(t, 300, it, 1);
	pump_until_drop(1, TRD_DROP_CTR_DENIED, d + 1);
}

static void
test_hostile(void)
{
	pid_t s = spawn(sender, NULL), r = spawn(hostile_r, NULL);
	struct item it[2];
	struct target t;
	uint64_t bl0 = ndrop(1, TRD_DROP_BAD_LENGTH), uf, cd, bl;
	uint8_t b;

	read_r(r, &t, sizeof(t));
	T_EQ(t.n_ids, 2);
	hostile_bad(&t);
	/* longer than R's ring of 64 slots can ever hold, from S's region */
	it[0] = (struct item){
		.len = 8192, .count = 1, .kind = K_REGION, .fifo = t.ids[0], .rec_ctr = t.ctr};
	s_cmd_ok(&t, 400, it, 1);
	pump_until_drop(1, TRD_DROP_BAD_LENGTH, bl0 + 1);
	/* the good one (behind them on the link: none of them holds it up) */
	it[0] = (struct item){
		.len = 100, .count = 1, .kind = K_INLINE, .fifo = t.ids[0], .rec_ctr = t.ctr};
	s_cmd_ok(&t, U_GOOD, it, 1);
	T_EQ(write(p_p2r[1], "g", 1), 1);
	read_r(r, &b, 1);
	/* R broke its ring 0: three to it, then one to its FIFO 1 */
	uf = ndrop(1, TRD_DROP_UNKNOWN_FIFO);
	cd = ndrop(1, TRD_DROP_CTR_DENIED);
	bl = ndrop(1, TRD_DROP_BAD_LENGTH);
	it[0] = (struct item){
		.len = 8, .count = 3, .kind = K_INLINE, .fifo = t.ids[0], .rec_ctr = t.ctr};
	it[1] = (struct item){.len = 8, .count = 1, .kind = K_INLINE, .fifo = t.ids[1]};
	s_cmd_ok(&t, U_BROKEN, it, 2);
	T_EQ(write(p_p2r[1], "g", 1), 1);
	s_quit();
	reap_ok(s, WAIT_US, "S");
	reap_ok(r, WAIT_US, "R");
	/* the one too long was dropped, not sent again and again (each of its packets at most) */
	T_ASSERT(bl - bl0 >= 1 && bl - bl0 <= 8, "bad_length %llu", (unsigned long long)(bl - bl0));
	T_EQ(ndrop(1, TRD_DROP_BAD_LENGTH), bl);
	printf("3 messages to a broken ring: node 1 unknown_fifo +%llu, ctr_denied +%llu\n",
	       (unsigned long long)(ndrop(1, TRD_DROP_UNKNOWN_FIFO) - uf),
	       (unsigned long long)(ndrop(1, TRD_DROP_CTR_DENIED) - cd));
}

/* ---- wait ---- */

#define U_WAIT   9000
#define WAIT_TMO 300 /* ms: the wait with nothing coming */

/* The FIFO as an event queue: its own eventfd, signalled once per arming. */
static int
wait_fd_r(struct trd_vni *v, const struct trd_vni_mu_info *mi)
{
	int fd = trd_vni_rfifo_fd(v, 0);
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	uint64_t deadline, cnt;
	struct trd_msg m;
	int got = 0;

	if (fd < 0 || trd_vni_rfifo_fd(v, 1) != -ENOENT || trd_vni_rfifo_arm(v, 1) != -ENOENT ||
	    trd_vni_rfifo_arm(v, 0) != 0 || write(p_r2p[1], "a", 1) != 1)
		return 90;
	/* S sends one: the eventfd says so, once, and the message is there */
	if (poll(&pf, 1, 5000) != 1 || read(fd, &cnt, sizeof(cnt)) != sizeof(cnt) || cnt != 1)
		return 91;
	if (trd_vni_rfifo_arm(v, 0) != -EBUSY || trd_vni_rfifo_poll(v, 0, &m, 1) != 1 ||
	    msg_ok(&m, U_WAIT + 3, 100, false, mi->rfifo_ids[0]) != 0 ||
	    trd_vni_rfifo_release(v, 0) != 0 || write(p_r2p[1], "b", 1) != 1)
		return 92;
	/* the arm that said -EBUSY left it armed: the next message is signalled too, once */
	if (poll(&pf, 1, 5000) != 1 || read(fd, &cnt, sizeof(cnt)) != sizeof(cnt) || cnt != 1 ||
	    trd_vni_rfifo_poll(v, 0, &m, 1) != 1 ||
	    msg_ok(&m, U_WAIT + 4, 100, false, mi->rfifo_ids[0]) != 0 ||
	    trd_vni_rfifo_release(v, 0) != 0 || write(p_r2p[1], "c", 1) != 1)
		return 93;
	/* not armed: the next message comes without a signal */
	deadline = trd_time_us() + WAIT_US;
	while ((got = trd_vni_rfifo_poll(v, 0, &m, 1)) == 0 && trd_time_us() < deadline)
		sched_yield();
	if (got != 1 || msg_ok(&m, U_WAIT + 5, 100, false, mi->rfifo_ids[0]) != 0 ||
	    poll(&pf, 1, 100) != 0)
		return 94;
	trd_vni_close(v);
	return 0;
}

static int
wait_r(void *arg)
{
	struct trd_vni_mu_info mi;
	struct trd_msg m;
	struct trd_vni *v;
	uint64_t t0, el;
	int rc;

	(void)arg;
	v = r_setup(1, 64, -1, 0, 0, &mi); /* sleeps at once */
	if (v == NULL)
		return 80;
	t0 = trd_time_us();
	rc = trd_vni_rfifo_wait(v, 0, &m, WAIT_TMO);
	el = trd_time_us() - t0;
	if (rc != -ETIMEDOUT || el < WAIT_TMO * 1000 - 1000 || el > WAIT_TMO * 1000 + 3000000) {
		fprintf(stderr, "R: a wait of %d ms: %d after %llu us\n", WAIT_TMO, rc,
			(unsigned long long)el);
		return 81;
	}
	if (write(p_r2p[1], "r", 1) != 1)
		return 82;
	/* S sends once we sleep */
	if (trd_vni_rfifo_wait(v, 0, &m, 5000) != 1 ||
	    msg_ok(&m, U_WAIT, 100, false, mi.rfifo_ids[0]) != 0)
		return 83;
	if (trd_vni_rfifo_release(v, 0) != 0 || write(p_r2p[1], "w", 1) != 1)
		return 84;
	for (unsigned int k = 1; k < 3; k++) {
		if (trd_vni_rfifo_wait(v, 0, &m, 5000) != 1 ||
		    msg_ok(&m, U_WAIT + k, 100, false, mi.rfifo_ids[0]) != 0)
			return 85;
		if (trd_vni_rfifo_release(v, 0) != 0)
			return 86;
	}
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rmsgs != 3)
		return 87;
	return wait_fd_r(v, &mi);
}

/* The state letter of process @p pid (/proc/pid/stat), or 0. */
static char
proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' ? p[2] : 0;
}

static void
test_wait(void)
{
	pid_t s = spawn(sender, NULL), r = spawn(wait_r, NULL);
	struct item it = {.len = 100, .kind = K_INLINE};
	uint64_t deadline, w0;
	struct target t;
	uint8_t b;

	read_r(r, &t, sizeof(t));
	read_r(r, &b, 1);
	it.fifo = t.ids[0];
	/* R is asleep (on its eventfd: it waits for nothing else) */
	deadline = trd_time_us() + WAIT_US;
	while (proc_state(r) != 'S' && trd_time_us() < deadline)
		pump();
	T_ASSERT(proc_state(r) == 'S', "R does not sleep: %c", proc_state(r));
	w0 = stat_of(TRD_VNI_SVC_STAT_WAKEUPS);
	it.count = 1;
	s_cmd_ok(&t, U_WAIT, &it, 1);
	read_r(r, &b, 1);
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_WAKEUPS) > w0, "R woke without a signal");
	it.count = 2;
	s_cmd_ok(&t, U_WAIT + 1, &it, 1);
	/* R armed its FIFO's own eventfd: one message, then (not armed) another */
	read_r(r, &b, 1);
	it.count = 1;
	s_cmd_ok(&t, U_WAIT + 3, &it, 1);
	read_r(r, &b, 1);
	s_cmd_ok(&t, U_WAIT + 4, &it, 1);
	read_r(r, &b, 1);
	s_cmd_ok(&t, U_WAIT + 5, &it, 1);
	s_quit();
	reap_ok(s, WAIT_US, "S");
	reap_ok(r, WAIT_US, "R");
}

/* ---- death ---- */

#define U_OLD  10000
#define U_DEAD 11000
#define U_NEW  12000

/* What the first reader's ring of 64 slots holds: 21 messages of 100 bytes (3 slots each, 63
 * in all); S sends 14 more, which node 1 refuses (fifo_full) while the reader lives. */
#define D_HELD 21
#define D_MORE 14

/* The first reader: waits until its ring is full and refused a message, says so, then waits
 * to be killed. */
static int
death_r1(void *arg)
{
	struct trd_vni_mu_info mi;
	struct trd_vni *v;
	uint64_t deadline;
	uint8_t x;

	(void)arg;
	v = r_setup(1, 64, 0, 0, 0, &mi);
	if (v == NULL)
		return 90;
	deadline = trd_time_us() + CWAIT;
	while (trd_vni_mu_info(v, &mi) == 0 && (mi.rmsgs < D_HELD || mi.rfull == 0) &&
	       trd_time_us() < deadline)
		sched_yield();
	if (mi.rmsgs != D_HELD || mi.rfull == 0 || write(p_r2p[1], "l", 1) != 1)
		return 91;
	(void)child_read(p_p2r[0], &x, 1);
	return 92; /* not killed */
}

/* Attach and close on node 1 until the next reception FIFO id given is @p arg's (ids are
 * given in turn): the new reader then gets the dead one's id. */
static int
death_cycle(void *arg)
{
	uint8_t x = *(const uint8_t *)arg, last = x;
	uint64_t deadline = trd_time_us() + CWAIT;
	unsigned int ids = TRD_GUEST_RFIFO_LAST - TRD_GUEST_RFIFO_FIRST + 1;

	child_start();
	for (;;) {
		/* ids strictly between the last given and x */
		unsigned int k = ((unsigned int)x + ids - last - 1) % ids;
		struct trd_vni_mu_info mi;
		struct trd_vni *v;

		if (k == 0)
			return 0;
		v = rf_open(1, true, RTE_MIN(k, (unsigned int)TRD_VNI_MU_RFIFOS_MAX), 64, 0);
		if (v == NULL) {
			/* the last one not detached yet */
			if (trd_time_us() >= deadline)
				return 110;
			sched_yield();
			continue;
		}
		if (trd_vni_mu_info(v, &mi) != 0 || mi.n_rfifos == 0)
			return 111;
		last = mi.rfifo_ids[mi.n_rfifos - 1];
		trd_vni_close(v);
	}
}

/* The next reader: its FIFO is empty, then holds only what was sent to it. */
static int
death_r2(void *arg)
{
	struct trd_vni_mu_info mi;
	struct trd_msg m[4];
	struct trd_vni *v;
	uint8_t go;

	(void)arg;
	v = r_setup(1, 64, 0, 0, 0, &mi);
	if (v == NULL)
		return 100;
	if (trd_vni_rfifo_poll(v, 0, m, 4) != 0 || write(p_r2p[1], "e", 1) != 1)
		return 101;
	if (child_read(p_p2r[0], &go, 1) != 0)
		return 102;
	if (take_one(v, 0, &m[0], CWAIT) != 1 ||
	    msg_ok(&m[0], U_NEW, 100, false, mi.rfifo_ids[0]) != 0)
		return 103;
	if (trd_vni_rfifo_release(v, 0) != 0 || trd_vni_rfifo_poll(v, 0, m, 4) != 0)
		return 104;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.rmsgs != 1)
		return 105;
	trd_vni_close(v);
	return 0;
}

/* R1 killed with its ring full and S's refused messages being sent again: they end as
 * unknown_fifo. */
static uint8_t
death_first(uint64_t *u0)
{
	pid_t r1 = spawn(death_r1, NULL);
	struct item it = {.len = 100, .count = D_HELD + D_MORE, .kind = K_INLINE};
	uint64_t rec0 = stat_on(1, TRD_VNI_SVC_STAT_RECLAIMED), deadline;
	struct cmd c = {.n_items = 1, .user0 = U_OLD};
	struct target t1;
	struct reply rp;
	uint8_t b;
	int st;

	read_r(r1, &t1, sizeof(t1));
	it.fifo = t1.ids[0];
	memcpy(c.node, t1.node, 3);
	c.it[0] = it;
	T_EQ(write(p_cmd[1], &c, sizeof(c)), sizeof(c));
	read_r(r1, &b, 1);
	*u0 = ndrop(1, TRD_DROP_UNKNOWN_FIFO);
	T_EQ(kill(r1, SIGKILL), 0);
	T_EQ(waitpid(r1, &st, 0), r1);
	deadline = trd_time_us() + WAIT_US;
	while (stat_on(1, TRD_VNI_SVC_STAT_RECLAIMED) == rec0 && trd_time_us() < deadline)
		pump();
	T_ASSERT(stat_on(1, TRD_VNI_SVC_STAT_RECLAIMED) > rec0, "the reader was not reclaimed");
	/* the refused ones, sent again, find nobody's id */
	pump_until_drop(1, TRD_DROP_UNKNOWN_FIFO, *u0 + D_MORE);
	read_pipe(p_rep[0], &rp, sizeof(rp));
	T_ASSERT(rp.rc == 0 && rp.ctr == 0, "S: step %d, counter %lld", rp.rc, (long long)rp.ctr);
	/* and so do new ones */
	it.len = 8;
	it.count = 3;
	s_cmd_ok(&t1, U_DEAD, &it, 1);
	pump_until_drop(1, TRD_DROP_UNKNOWN_FIFO, *u0 + D_MORE + 3);
	return t1.ids[0];
}

static void
test_death(void)
{
	pid_t s = spawn(sender, NULL), r2;
	struct item it = {.len = 100, .count = 1, .kind = K_INLINE};
	struct target t2;
	uint64_t u0;
	uint8_t b, x = death_first(&u0);

	/* a new reader, with the dead one's id */
	reap_ok(spawn(death_cycle, &x), WAIT_US, "attaching round the ids");
	r2 = spawn(death_r2, NULL);
	read_r(r2, &t2, sizeof(t2));
	read_r(r2, &b, 1);
	T_EQ(t2.ids[0], x);
	it.fifo = t2.ids[0];
	s_cmd_ok(&t2, U_NEW, &it, 1);
	T_EQ(write(p_p2r[1], "g", 1), 1);
	s_quit();
	reap_ok(s, WAIT_US, "S");
	reap_ok(r2, WAIT_US, "the new reader");
	T_EQ(ndrop(1, TRD_DROP_UNKNOWN_FIFO) - u0, D_MORE + 3);
}

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc, vc1;
	struct vni_setup_opt o = {.rec_fifo_size = 1024, .n_counters = 3 * TRD_COUNTER_BLOCK};

	if (argc != 2) {
		fprintf(stderr, "usage: %s basic|basic2|full|hostile|wait|death\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	memset(&vc1, 0, sizeof(vc1));
	vc.max_pool = vc1.max_pool = 1 << 24;
	/* R on node 1 (its own engine, a reliable link from S's) but for basic and wait */
	r_on_n1 = strcmp(argv[1], "basic") != 0 && strcmp(argv[1], "wait") != 0;
	if (r_on_n1)
		o.vc_n1 = &vc1;
	vni_setup_with("vmurf", r_on_n1 ? mu_topo_two : mu_topo_one, &o, &vc);
	T_EQ(pipe(p_cmd), 0);
	pipe_nb(p_rep);
	pipe_nb(p_r2p);
	T_EQ(pipe(p_p2r), 0);
	if (strcmp(argv[1], "basic") == 0 || strcmp(argv[1], "basic2") == 0)
		test_basic();
	else if (strcmp(argv[1], "full") == 0)
		test_full();
	else if (strcmp(argv[1], "hostile") == 0)
		test_hostile();
	else if (strcmp(argv[1], "wait") == 0)
		test_wait();
	else if (strcmp(argv[1], "death") == 0)
		test_death();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni mu rfifo %s\n", argv[1]);
	return 0;
}
