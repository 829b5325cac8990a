/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event queues and doorbells on the One API node handle (docs/vni.md, "Event queues and
 * doorbells on a handle"): this process attaches to nodes 0 (a), 1 (b) and 2 of a toroid-node
 * serving a 3x1x1 torus (test_vni_attach.sh); b sends memory-FIFO messages to a's FIFOs. It
 * checks
 *   1. one event per message stored in a bound FIFO (type, FIFO id, length, user word), in
 *      order, whether the queue's poll or a poll of the FIFO passes the message first, none
 *      twice, the messages still in their FIFOs byte-exact; an outcome's event carries its
 *      cookie; an unbound FIFO makes none;
 *   2. the eventfd: readable after a message once armed, one signal per arming, none while
 *      disarmed (a message then, a second after arming: exactly one more signal); arming
 *      with events waiting is -EBUSY; trd_eq_wait() woken by a message and timing out;
 *      another thread is refused (-EPERM); a full queue counts its lost events; a FIFO bound
 *      to an armed queue wakes it; the disarm after a sleep counts its signal; a wait on a
 *      bound FIFO sleeps (little CPU) and leaves the queue its signal; a FIFO unbound keeps the
 * events of what it stored; trd_node_drain() takes a handle's events;
 *   3. doorbells: a page of the region registered as one, reflection completions written
 *      into it, local and delivery mode, waited for with TRD_WAIT_SPIN; a word never written
 *      times out; a bad offset is refused;
 *   4. a doorbell with an event queue: refused while the queue has no FIFO; a reflection
 *      completion waited for with TRD_WAIT_EQ; a put of b into it: one TRD_EV_DOORBELL event
 *      (key, offset, length), no message in the FIFO that carried it; doorbell requests
 *      naming a FIFO the process lacks or no remote write refused.
 *
 *   test_vni_attach_eq SOCKET_TEMPLATE   (%r: the rank)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>

#include <toroid/testing.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "attach_util.h"

#define TIMEOUT_US 5000000
#define REGION     (1u << 20)
#define N_MSG      5
#define Q_SIZE     6  /* (not a power of 2: a queue holds exactly what it was made for) */
#define SLOTS      64 /* a reception FIFO's ring */

static uint8_t msg_bytes[N_MSG][600];
static const uint32_t msg_len[N_MSG] = {10, 0, 300, 64, 600};

static uint64_t
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

/* CPU time of this thread, us */
static uint64_t
cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

/* b sends message @p i (user word 1000 + i) to a's FIFO @p k from @p buf (b's region). */
static int
send_msg(struct trd_node *b, struct trd_node *a, unsigned int k, unsigned int i, uint8_t *buf)
{
	struct trd_desc d;

	memcpy(buf, msg_bytes[i], msg_len[i]);
	trd_desc_fifo(&d, trd_node_coord(a), trd_rec_fifo_id(trd_rec_fifo(a, k)), buf, msg_len[i],
		      1000 + i, 0);
	return trd_inject(trd_inj_fifo(b, 0), &d);
}

/* Up to @p want events of @p q, polling for at most 5 s: the count. */
static int
events(struct trd_eq *q, struct trd_event *ev, unsigned int want)
{
	uint64_t end = now_us() + TIMEOUT_US;
	unsigned int got = 0;

	while (got < want && now_us() < end) {
		int rc = trd_eq_poll(q, ev + got, want - got);

		if (rc < 0)
			return rc;
		got += (unsigned int)rc;
	}
	return (int)got;
}

/* Does event @p e say message @p i in a's FIFO @p k? */
static bool
is_msg(const struct trd_event *e, struct trd_node *a, unsigned int k, unsigned int i)
{
	return e->type == TRD_EV_FIFO && e->fifo == trd_rec_fifo_id(trd_rec_fifo(a, k)) &&
	       e->len == msg_len[i] && e->value == 1000 + i;
}

/* The next message of a's FIFO @p k is message @p i, byte-exact. */
static void
check_fifo(struct trd_node *a, unsigned int k, unsigned int i)
{
	struct trd_msg *m = NULL;
	int rc = trd_rec_fifo_wait(trd_rec_fifo(a, k), &m, TIMEOUT_US);

	CHECK(rc == 0 && m->user == 1000 + i && m->len == msg_len[i] &&
		      memcmp(m->data, msg_bytes[i], msg_len[i]) == 0,
	      "FIFO %u, message %u: rc %d user %llu len %u", k, i, rc,
	      rc == 0 ? (unsigned long long)m->user : 0ull, rc == 0 ? m->len : 0);
	trd_msg_free(m);
}

static void *
other_thread(void *arg)
{
	struct trd_event ev;

	return (void *)(intptr_t)trd_eq_poll(arg, &ev, 1);
}

/* 1 and 2: events of a's FIFOs */
static void
t_events(struct trd_node *a, struct trd_node *b, uint8_t *buf)
{
	struct trd_eq *q = trd_eq_create(a, -1, Q_SIZE);
	struct trd_event ev[16];
	struct pollfd pfd;
	struct trd_msg *m;
	pthread_t th;
	void *res;
	uint64_t sig, t0;
	uint32_t id;
	int rc;

	CHECK(q != NULL && trd_node_eq(a, 0) == q && trd_eq_fd(q) >= 0, "trd_eq_create: %s",
	      rte_strerror(rte_errno));
	if (q == NULL)
		return;
	pfd = (struct pollfd){.fd = trd_eq_fd(q), .events = POLLIN};
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 0), q) == 0 &&
		      trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), q) == 0,
	      "bind");
	CHECK(trd_eq_poll(q, ev, 16) == 0, "events before any message");
	CHECK(trd_eq_arm(q) == 0, "arm an empty queue");

	/* armed: the first message signals, and only it (the queue's other FIFO is disarmed
	 * with it); every message gives one event */
	CHECK(send_msg(b, a, 0, 0, buf) == 0, "send 0");
	CHECK(poll(&pfd, 1, 5000) == 1, "the queue's descriptor is not readable");
	rc = events(q, ev, 1);
	CHECK(rc == 1 && is_msg(&ev[0], a, 0, 0), "event 0: %d", rc);
	CHECK(send_msg(b, a, 1, 1, buf + 1024) == 0, "send 1");
	rc = events(q, ev, 1);
	CHECK(rc == 1 && is_msg(&ev[0], a, 1, 1), "event 1: %d", rc);
	/* (a round trip later, a signal of FIFO 1 would have been written) */
	CHECK(send_msg(b, a, 0, 2, buf + 2048) == 0, "send 2");
	rc = events(q, ev, 1);
	CHECK(rc == 1 && is_msg(&ev[0], a, 0, 2), "event 2: %d", rc);
	CHECK(trd_eq_poll(q, ev, 16) == 0, "an event twice");
	CHECK(trd_eq_signals(q) == 1, "signals %llu, want 1",
	      (unsigned long long)trd_eq_signals(q));
	CHECK(poll(&pfd, 1, 0) == 0, "the descriptor stays readable after the poll");
	check_fifo(a, 0, 0);
	check_fifo(a, 1, 1);
	check_fifo(a, 0, 2);
	CHECK(trd_eq_poll(q, ev, 16) == 0, "an event twice");

	/* the FIFO's reader passes the messages first: their events are there all the same */
	CHECK(send_msg(b, a, 0, 3, buf) == 0 && send_msg(b, a, 0, 4, buf + 1024) == 0, "send");
	check_fifo(a, 0, 3);
	check_fifo(a, 0, 4);
	rc = trd_eq_poll(q, ev, 16);
	CHECK(rc == 2 && is_msg(&ev[0], a, 0, 3) && is_msg(&ev[1], a, 0, 4),
	      "events of messages read first: %d", rc);

	/* disarmed, a message makes no signal; armed again, the next makes one */
	sig = trd_eq_signals(q);
	CHECK(trd_eq_disarm(q) == 0 && send_msg(b, a, 1, 0, buf) == 0, "disarm, send");
	rc = events(q, ev, 1);
	CHECK(rc == 1 && is_msg(&ev[0], a, 1, 0), "event while disarmed: %d", rc);
	CHECK(trd_eq_arm(q) == 0 && send_msg(b, a, 1, 2, buf) == 0, "arm, send");
	CHECK(poll(&pfd, 1, 5000) == 1, "not readable after arming");
	rc = events(q, ev, 1);
	CHECK(rc == 1 && is_msg(&ev[0], a, 1, 2), "event after arming: %d", rc);
	CHECK(trd_eq_signals(q) == sig + 1, "signals %llu, want %llu",
	      (unsigned long long)trd_eq_signals(q), (unsigned long long)sig + 1);
	check_fifo(a, 1, 0);
	check_fifo(a, 1, 2);

	/* events waiting: no arming; trd_eq_wait() woken by a message, and its timeout */
	CHECK(send_msg(b, a, 0, 3, buf) == 0, "send");
	rc = trd_eq_wait(q, ev, 16, TIMEOUT_US);
	CHECK(rc == 1 && is_msg(&ev[0], a, 0, 3), "trd_eq_wait: %d", rc);
	CHECK(send_msg(b, a, 0, 4, buf) == 0, "send");
	check_fifo(a, 0, 3);
	check_fifo(a, 0, 4); /* (its event is queued now) */
	CHECK(trd_eq_arm(q) == -EBUSY, "arm with an event waiting");
	CHECK(trd_eq_poll(q, ev, 16) == 1 && is_msg(&ev[0], a, 0, 4), "the waiting event");
	t0 = now_us();
	rc = trd_eq_wait(q, ev, 16, 50000);
	CHECK(rc == -ETIMEDOUT && now_us() - t0 >= 50000, "empty wait: %d after %llu us", rc,
	      (unsigned long long)(now_us() - t0));
	CHECK(pthread_create(&th, NULL, other_thread, q) == 0 && pthread_join(th, &res) == 0 &&
		      (intptr_t)res == -EPERM,
	      "another thread polled the queue: %d", (int)(intptr_t)res);

	/* an outcome's event carries its cookie */
	rc = trd_track_open(a, 0, 0xfeed, NULL, &id);
	if (rc == 0) {
		struct trd_desc d;

		trd_desc_put(&d, trd_node_coord(b), buf, 64, 12345, 0, 0, 0); /* no such key */
		d.flags |= TRD_DF_ACKREQ;
		d.aux = id;
		rc = trd_inject(trd_inj_fifo(a, 0), &d);
	}
	rc = rc == 0 ? events(q, ev, 1) : rc;
	CHECK(rc == 1 && ev[0].type == TRD_EV_FIFO && ev[0].len == 0 && ev[0].value == 0xfeed,
	      "outcome event: rc %d value %#llx", rc, (unsigned long long)ev[0].value);
	rc = trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, TIMEOUT_US);
	CHECK(rc == 0 && m->user == 0xfeed && m->status == -ENOKEY, "the outcome: rc %d", rc);
	if (rc == 0)
		trd_msg_free(m);

	/* a full queue: its events lost and counted, the messages kept */
	for (unsigned int i = 0; i < Q_SIZE + 4; i++)
		CHECK(send_msg(b, a, 0, i % N_MSG, buf + i * 1024) == 0, "send %u", i);
	for (unsigned int i = 0; i < Q_SIZE + 4; i++)
		check_fifo(a, 0, i % N_MSG);
	CHECK(trd_eq_overflows(q) == 4, "overflows %llu, want 4",
	      (unsigned long long)trd_eq_overflows(q));
	rc = trd_eq_poll(q, ev, 16);
	CHECK(rc == Q_SIZE, "events of a full queue: %d", rc);
	for (int i = 0; i < rc; i++)
		CHECK(is_msg(&ev[i], a, 0, (unsigned int)i % N_MSG), "event %d", i);

	/* unbound: no event */
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), NULL) == 0, "unbind");
	CHECK(send_msg(b, a, 1, 0, buf) == 0, "send");
	check_fifo(a, 1, 0);
	CHECK(trd_eq_poll(q, ev, 16) == 0, "an event of an unbound FIFO");
}

/* 2b. binding and waking: a FIFO bound to an armed queue signals it; the disarm after
 * trd_eq_wait()'s sleep counts the signal it slept for; a wait on a bound FIFO leaves the
 * queue its signal; a FIFO unbound keeps the events of what it stored; trd_node_drain() */
static void
t_binding(struct trd_node *a, struct trd_node *b, uint8_t *buf)
{
	struct trd_eq *q = trd_eq_create(a, -1, 0);
	struct trd_event ev[8];
	struct trd_msg *m = NULL;
	struct pollfd pfd;
	uint64_t sig, t0;
	int rc;

	CHECK(q != NULL, "create: %s", rte_strerror(rte_errno));
	if (q == NULL)
		return;
	pfd = (struct pollfd){.fd = trd_eq_fd(q), .events = POLLIN};
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 0), q) == 0 && trd_eq_arm(q) == 0, "bind, arm");
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), q) == 0, "bind to an armed queue");
	sig = trd_eq_signals(q);
	CHECK(send_msg(b, a, 1, 0, buf) == 0, "send");
	CHECK(poll(&pfd, 1, 5000) == 1, "a FIFO bound to an armed queue did not wake it");
	CHECK(trd_eq_disarm(q) == 0 && trd_eq_signals(q) == sig + 1,
	      "the disarm after a sleep: signals %llu, want %llu",
	      (unsigned long long)trd_eq_signals(q), (unsigned long long)sig + 1);
	rc = trd_eq_poll(q, ev, 8);
	CHECK(rc == 1 && is_msg(&ev[0], a, 1, 0), "event: %d", rc);
	check_fifo(a, 1, 0);

	/* a wait on a bound FIFO of an armed queue sleeps (200 ms with no message: little CPU)
	 * and leaves the queue armed: the message after it signals */
	CHECK(trd_eq_arm(q) == 0, "arm");
	t0 = cpu_us();
	rc = trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, 200000);
	t0 = cpu_us() - t0;
	CHECK(rc == -ETIMEDOUT && t0 < 50000,
	      "an empty wait on a bound FIFO: %d after %llu us of CPU (it polled)", rc,
	      (unsigned long long)t0);
	CHECK(send_msg(b, a, 0, 1, buf) == 0, "send");
	check_fifo(a, 0, 1); /* (a wait on the bound FIFO itself) */
	CHECK(poll(&pfd, 1, 5000) == 1, "the FIFO's wait took the queue's signal");
	rc = trd_eq_poll(q, ev, 8);
	CHECK(rc == 1 && is_msg(&ev[0], a, 0, 1) && trd_eq_signals(q) == sig + 2,
	      "event %d, signals %llu", rc, (unsigned long long)trd_eq_signals(q));

	/* a wait that reads the signal of a message taken before it, whose event the armed queue
	 * holds: the queue's descriptor stays readable */
	CHECK(trd_eq_arm(q) == 0 && send_msg(b, a, 0, 2, buf) == 0, "arm, send");
	CHECK(poll(&pfd, 1, 5000) == 1, "no signal for the message");
	rc = trd_rec_fifo_poll(trd_rec_fifo(a, 0), &m, 1);
	CHECK(rc == 1, "the message: %d", rc);
	if (rc == 1)
		trd_msg_free(m);
	rc = trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, 50000);
	CHECK(rc == -ETIMEDOUT, "an empty wait: %d", rc);
	CHECK(poll(&pfd, 1, 0) == 1, "the wait took the signal of an event the queue holds");
	rc = trd_eq_poll(q, ev, 8);
	CHECK(rc == 1 && is_msg(&ev[0], a, 0, 2), "event: %d", rc);

	/* FIFO 1 holds a message the queue has not read when it is unbound */
	CHECK(send_msg(b, a, 1, 2, buf) == 0 && send_msg(b, a, 0, 3, buf + 1024) == 0, "send");
	check_fifo(a, 0, 3); /* (sent after FIFO 1's: that one is there) */
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), NULL) == 0, "unbind");
	rc = trd_eq_poll(q, ev, 8);
	CHECK(rc == 2 && is_msg(&ev[0], a, 0, 3) && is_msg(&ev[1], a, 1, 2),
	      "events kept at unbinding: %d", rc);
	check_fifo(a, 1, 2);

	CHECK(send_msg(b, a, 0, 0, buf) == 0, "send");
	check_fifo(a, 0, 0); /* (its event is queued) */
	rc = trd_node_drain(a);
	CHECK(rc >= 1 && trd_eq_poll(q, ev, 8) == 0, "trd_node_drain() of a handle: %d", rc);
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 0), NULL) == 0, "unbind");

	/* an armed queue whose FIFO is unbound with a message stored: woken, the event there */
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), q) == 0 && trd_eq_arm(q) == 0, "bind, arm");
	CHECK(send_msg(b, a, 1, 1, buf) == 0 && send_msg(b, a, 0, 3, buf + 1024) == 0, "send");
	check_fifo(a, 0, 3); /* (FIFO 0 unbound: FIFO 1 has its message now) */
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), NULL) == 0, "unbind");
	CHECK(poll(&pfd, 1, 5000) == 1, "an armed queue not woken by its FIFO's unbinding");
	rc = trd_eq_poll(q, ev, 8);
	CHECK(rc == 1 && is_msg(&ev[0], a, 1, 1), "the unbound FIFO's event: %d", rc);
	check_fifo(a, 1, 1);
}

/* 4: a doorbell page @p pg of a whose writes an event queue of a reports */
static void
t_doorbell_eq(struct trd_node *a, struct trd_node *b, uint8_t *pg, const uint8_t *src,
	      struct trd_mr *mr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct trd_eq *q = trd_eq_create(a, -1, 0);
	struct trd_cpl_spec sp = {.kind = TRD_CPL_DOORBELL, .mode = TRD_CPL_LOCAL, .offset = 32};
	uint8_t *bsrc = trd_mem_alloc(b, 64);
	struct trd_event ev[4];
	struct trd_msg *m;
	struct trd_desc d;
	struct trd_mr *db;
	uint64_t key = 0;
	int rc;

	CHECK(q != NULL && bsrc != NULL, "setup");
	if (q == NULL || bsrc == NULL)
		return;
	rte_errno = 0;
	CHECK(trd_doorbell_register(a, pg, page, q) == NULL && rte_errno == EINVAL,
	      "a doorbell of a queue with no FIFO: %d", rte_errno);
	CHECK(trd_rec_fifo_set_eq(trd_rec_fifo(a, 1), q) == 0, "bind");
	db = trd_doorbell_register(a, pg, page, q);
	CHECK(db != NULL, "doorbell with a queue: %s", rte_strerror(rte_errno));
	if (db == NULL)
		return;
	/* a reflection completion, waited for on the queue */
	trd_desc_put(&d, trd_node_coord(b), src, 100, trd_mr_key(mr), 0, 0, 0);
	sp.doorbell = db;
	sp.cookie = 0x123;
	rc = trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp);
	CHECK(rc == 0, "reflect: %d", rc);
	rc = trd_doorbell_wait(db, 32, 0x123, TRD_WAIT_EQ, TIMEOUT_US);
	CHECK(rc == 0, "TRD_WAIT_EQ: %d", rc);
	/* b writes 16 bytes into it: one event with the key, offset and length */
	memset(bsrc, 0x5c, 16);
	trd_desc_put(&d, trd_node_coord(a), bsrc, 16, trd_mr_key(db), 64, 0, 0);
	CHECK(trd_inject(trd_inj_fifo(b, 0), &d) == 0, "b's put");
	rc = events(q, ev, 1);
	/* (the reflection's own event is still queued when its word was written before the
	 * wait took it: the wait returns on the word) */
	if (rc == 1 && ev[0].type == TRD_EV_DOORBELL && ev[0].value == 32 && ev[0].len == 8)
		rc = events(q, ev, 1);
	CHECK(rc == 1 && ev[0].type == TRD_EV_DOORBELL && ev[0].key == trd_mr_key(db) &&
		      ev[0].value == 64 && ev[0].len == 16 && pg[64] == 0x5c && pg[79] == 0x5c,
	      "doorbell event: %d type %u key %s value %llu len %u", rc, ev[0].type,
	      ev[0].key == trd_mr_key(db) ? "right" : "wrong", (unsigned long long)ev[0].value,
	      ev[0].len);
	/* the FIFO that carried them holds no message */
	CHECK(trd_rec_fifo_poll(trd_rec_fifo(a, 1), &m, 1) == 0, "a doorbell slot as a message");
	/* four rings' worth of writes, waited for on the queue alone: the queue gives their
	 * slots back, no FIFO poll needed */
	for (unsigned int i = 0; i < 4 * SLOTS && rc == 1; i++) {
		trd_desc_put(&d, trd_node_coord(a), bsrc, 8, trd_mr_key(db), 8 * (i % 64), 0, 0);
		rc = trd_inject(trd_inj_fifo(b, 0), &d) == 0 ? events(q, ev, 1) : -1;
		CHECK(rc == 1 && ev[0].type == TRD_EV_DOORBELL && ev[0].value == 8 * (i % 64),
		      "doorbell write %u: %d", i, rc);
	}
	CHECK(trd_eq_overflows(q) == 0, "events lost");
	/* a doorbell told in a FIFO the process does not have, or without remote write */
	CHECK(trd_vni_mr_reg(trd_node_vni(a), pg, page,
			     TRD_VNI_MR_MU | TRD_VNI_MR_OFFSET | TRD_VNI_MR_REMOTE_WRITE |
				     TRD_VNI_MR_DOORBELL | TRD_VNI_MR_DB_FIFO(2),
			     &key) == -EINVAL,
	      "a doorbell into FIFO 2 of 2");
	key = 0;
	CHECK(trd_vni_mr_reg(trd_node_vni(a), pg, page,
			     TRD_VNI_MR_MU | TRD_VNI_MR_OFFSET | TRD_VNI_MR_REMOTE_READ |
				     TRD_VNI_MR_DOORBELL,
			     &key) == -EINVAL,
	      "a doorbell no one may write");
	trd_mr_deregister(db);
	trd_mem_free(b, bsrc);
}

/* 3: doorbells */
static void
t_doorbell(struct trd_node *a, struct trd_node *b)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = trd_mem_alloc(a, 3 * page), *page_a;
	uint8_t *dst = trd_mem_alloc(b, 4096), *src = trd_mem_alloc(a, 4096);
	struct trd_mr *db, *mr;
	struct trd_cpl_spec sp = {.kind = TRD_CPL_DOORBELL, .mode = TRD_CPL_LOCAL};
	struct trd_desc d;
	int rc;

	CHECK(mem != NULL && dst != NULL && src != NULL, "alloc");
	if (mem == NULL || dst == NULL || src == NULL)
		return;
	page_a = (uint8_t *)RTE_ALIGN_CEIL((uintptr_t)mem, page);
	db = trd_doorbell_register(a, page_a, page, NULL);
	mr = trd_mr_register(b, dst, 4096, TRD_ACCESS_REMOTE_WRITE);
	CHECK(db != NULL && mr != NULL, "register: %s", rte_strerror(rte_errno));
	if (db == NULL || mr == NULL)
		return;
	for (unsigned int i = 0; i < 4096; i++)
		src[i] = (uint8_t)(i * 7 + 3);

	/* local mode: the neighbour echoes the cookie once the data left */
	trd_desc_put(&d, trd_node_coord(b), src, 2000, trd_mr_key(mr), 0, 0, 0);
	sp.doorbell = db;
	sp.offset = 16;
	sp.cookie = 0xabc;
	rc = trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp);
	CHECK(rc == 0, "reflect (local): %d", rc);
	rc = trd_doorbell_wait(db, 16, 0xabc, TRD_WAIT_SPIN, TIMEOUT_US);
	CHECK(rc == 0, "local completion: %d", rc);

	/* delivery mode: the target echoes it once the data is there */
	trd_desc_put(&d, trd_node_coord(b), src + 2000, 2000, trd_mr_key(mr), 2000, 0, 0);
	sp.mode = TRD_CPL_DELIVERY;
	sp.offset = page - 8;
	sp.cookie = 0xdef;
	rc = trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp);
	CHECK(rc == 0, "reflect (delivery): %d", rc);
	rc = trd_doorbell_wait(db, page - 8, 0xdef, TRD_WAIT_SPIN, TIMEOUT_US);
	CHECK(rc == 0 && memcmp(dst, src, 4000) == 0, "delivery completion: %d, data %s", rc,
	      memcmp(dst, src, 4000) == 0 ? "right" : "wrong");
	CHECK(trd_doorbell_wait(db, 24, 1, TRD_WAIT_SPIN, 10000) == -ETIMEDOUT,
	      "a word never written");
	sp.offset = page;
	CHECK(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp) == -EINVAL, "offset past the page");
	sp.offset = 4;
	CHECK(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp) == -EINVAL, "unaligned offset");
	sp.doorbell = mr;
	sp.offset = 0;
	CHECK(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp) == -EINVAL, "b's region");
	t_doorbell_eq(a, b, page_a + page, src, mr);
	trd_mr_deregister(mr);
	trd_mr_deregister(db);
}

int
main(int argc, char **argv)
{
	struct trd_node *h[3];
	uint8_t *buf;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET_TEMPLATE\n", argv[0]);
		return 2;
	}
	for (unsigned int i = 0; i < N_MSG; i++)
		for (unsigned int j = 0; j < msg_len[i]; j++)
			msg_bytes[i][j] = (uint8_t)(i * 37 + j * 11 + 5);
	for (unsigned int r = 0; r < 3; r++)
		if ((h[r] = attach_node(argv[1], r, 2, SLOTS, REGION)) == NULL)
			return 1;
	buf = trd_mem_alloc(h[1], (Q_SIZE + 4) * 1024);
	if (buf == NULL)
		return 1;
	t_events(h[0], h[1], buf);
	t_binding(h[0], h[1], buf);
	t_doorbell(h[0], h[1]);
	return attach_finish("test_vni_attach_eq", h, 3);
}
