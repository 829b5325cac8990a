/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event queues and doorbell waits.
 *  arm:     an armed queue writes its eventfd exactly once per armed period; a disarmed
 *           queue never; arming with events pending returns -EBUSY.
 *  owners:  events spread over 4 queues bound to 4 threads are each taken only by the owner
 *           (a non-owner gets -EPERM); the threads sleep on their eventfds.
 *  wait:    a doorbell completion waited for by spinning, by monitor (with the pause-loop
 *           fallback where the CPU has no WAITPKG) and by sleeping on the event queue.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_pause.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 10000000
#define PER_Q      500

static int
fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

static void
send_self(struct trd_node *n, uint8_t fifo, uint64_t user)
{
	struct trd_desc d;
	int rc;

	trd_desc_fifo(&d, trd_node_coord(n), fifo, &user, sizeof(user), user, 0);
	while ((rc = trd_inject(trd_inj_fifo(n, 0), &d)) == -ENOBUFS)
		;
	T_EQ(rc, 0);
}

static void
pump(struct trd_node *n)
{
	for (int i = 0; i < 20; i++)
		trd_node_poll(n);
}

static void
test_arm(void)
{
	struct trd_node_conf c = {0};
	struct trd_node *n;
	struct trd_eq *eq;
	struct trd_event ev[16];
	struct trd_msg *m[16];
	uint64_t v;

	trd_torus_init(&c.torus, 1, 1, 1);
	n = trd_node_create(&c);
	T_ASSERT(n != NULL, "node");
	eq = trd_eq_create(n, 0, 64);
	T_ASSERT(eq != NULL, "eq");
	T_EQ(trd_eq_bind(eq, 0), 0);
	T_EQ(trd_rec_fifo_set_eq(trd_rec_fifo(n, 0), eq), 0);

	/* disarmed: events queue up, no signal */
	for (int i = 0; i < 5; i++)
		send_self(n, 0, (uint64_t)i);
	pump(n);
	T_EQ(trd_eq_signals(eq), 0);
	T_ASSERT(!fd_readable(trd_eq_fd(eq)), "disarmed queue signalled");
	/* pending events: arming is refused so no wake-up can be lost */
	T_EQ(trd_eq_arm(eq), -EBUSY);
	T_EQ(trd_eq_poll(eq, ev, 16), 5);
	for (int i = 0; i < 5; i++) {
		T_EQ(ev[i].type, TRD_EV_FIFO);
		T_EQ(ev[i].value, i);
		T_EQ(ev[i].len, 8);
	}
	T_EQ(trd_rec_fifo_poll(trd_rec_fifo(n, 0), m, 16), 5);
	for (int i = 0; i < 5; i++)
		trd_msg_free(m[i]);

	/* armed: three events, one signal, then disarmed */
	T_EQ(trd_eq_arm(eq), 0);
	for (int i = 0; i < 3; i++)
		send_self(n, 0, 10 + (uint64_t)i);
	pump(n);
	T_EQ(trd_eq_signals(eq), 1);
	T_ASSERT(fd_readable(trd_eq_fd(eq)), "armed queue did not signal");
	T_EQ(read(trd_eq_fd(eq), &v, sizeof(v)), sizeof(v));
	T_EQ(v, 1);
	for (int i = 0; i < 2; i++)
		send_self(n, 0, 20 + (uint64_t)i);
	pump(n);
	T_EQ(trd_eq_signals(eq), 1);
	T_ASSERT(!fd_readable(trd_eq_fd(eq)), "signalled after it disarmed itself");
	T_EQ(trd_eq_poll(eq, ev, 16), 5);
	/* explicit disarm */
	T_EQ(trd_eq_arm(eq), 0);
	T_EQ(trd_eq_disarm(eq), 0);
	send_self(n, 0, 30);
	pump(n);
	T_EQ(trd_eq_signals(eq), 1);
	/* a new armed period, a new single signal */
	T_EQ(trd_eq_poll(eq, ev, 16), 1);
	T_EQ(trd_eq_arm(eq), 0);
	send_self(n, 0, 31);
	send_self(n, 0, 32);
	pump(n);
	T_EQ(trd_eq_signals(eq), 2);
	T_EQ(trd_eq_poll(eq, ev, 16), 2);
	for (int k; (k = trd_rec_fifo_poll(trd_rec_fifo(n, 0), m, 16)) > 0;)
		for (int i = 0; i < k; i++)
			trd_msg_free(m[i]);
	trd_node_free(n);
	printf("arm: one signal per armed period, none disarmed, -EBUSY with events pending\n");
}

struct owner {
	struct trd_eq *eq;
	struct trd_eq *other;
	unsigned int idx;
	unsigned int got;
	int foreign_rc;
	int bad;
};

static unsigned int owners_bound;

static void *
owner_main(void *arg)
{
	struct owner *w = arg;
	struct trd_event ev[32];
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	trd_eq_bind(w->eq, -1);
	__atomic_fetch_add(&owners_bound, 1, __ATOMIC_RELEASE);
	while (w->got < PER_Q && trd_time_us() < deadline) {
		int n = trd_eq_wait(w->eq, ev, 32, deadline - trd_time_us());

		for (int i = 0; i < n; i++) {
			if (ev[i].fifo != w->idx || ev[i].value % 4 != w->idx)
				w->bad++;
			w->got++;
		}
	}
	/* someone else's queue is not ours to service */
	w->foreign_rc = trd_eq_poll(w->other, ev, 1);
	return NULL;
}

static void
test_owners(void)
{
	struct trd_node_conf c = {.rec_fifo_size = 4096};
	struct trd_node *n;
	struct owner w[4];
	pthread_t th[4];
	unsigned int lc = test_worker_lcore();
	struct trd_msg *m[32];

	if (lc >= RTE_MAX_LCORE) {
		test_skip_part("owners: needs a worker lcore");
		return;
	}
	trd_torus_init(&c.torus, 1, 1, 1);
	n = trd_node_create(&c);
	T_ASSERT(n != NULL, "node");
	for (unsigned int i = 0; i < 4; i++) {
		w[i] = (struct owner){.idx = i};
		w[i].eq = trd_node_eq(n, i);
		if (w[i].eq == NULL)
			w[i].eq = trd_eq_create(n, (int)i, 0);
		T_ASSERT(w[i].eq != NULL, "eq %u", i);
		T_EQ(trd_rec_fifo_set_eq(trd_rec_fifo(n, i), w[i].eq), 0);
	}
	for (unsigned int i = 0; i < 4; i++)
		w[i].other = w[(i + 1) % 4].eq;
	T_EQ(trd_node_launch(n, lc), 0);
	for (unsigned int i = 0; i < 4; i++)
		T_EQ(pthread_create(&th[i], NULL, owner_main, &w[i]), 0);
	/* every owner asleep in trd_eq_wait() before the first event, so that each is woken at
	 * least once even when its thread started late (a loaded machine, sanitizers) */
	while (__atomic_load_n(&owners_bound, __ATOMIC_ACQUIRE) < 4)
		usleep(1000);
	usleep(20000);
	for (uint64_t k = 0; k < 4 * PER_Q; k++)
		send_self(n, (uint8_t)(k % 4), k);
	for (unsigned int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	trd_lcore_stop(lc);
	for (unsigned int i = 0; i < 4; i++) {
		T_EQ(w[i].got, PER_Q);
		T_EQ(w[i].bad, 0);
		T_EQ(w[i].foreign_rc, -EPERM);
		T_ASSERT(trd_eq_signals(w[i].eq) >= 1, "queue %u never woke its owner", i);
		for (int k; (k = trd_rec_fifo_poll(trd_rec_fifo(n, i), m, 32)) > 0;)
			for (int j = 0; j < k; j++)
				trd_msg_free(m[j]);
	}
	trd_node_free(n);
	printf("owners: 4 queues x %u events, each serviced only by its own thread\n", PER_Q);
}

/* ---- an event queue bound to a CPU: its owner runs there, is woken there, and moves ---- */

struct binder {
	struct trd_eq *eq;
	int cpus[2];
	unsigned int phases;
	unsigned int ready; /* phases whose binding is done (main then sends) */
	int bind_rc[2];
	int affinity_ok[2]; /* the thread's CPU set is exactly that CPU */
	int core_seen[2];   /* trd_eq_core() after binding */
	int woke_on[2];     /* sched_getcpu() when trd_eq_wait() returned the event */
	int wait_rc[2];
};

static void *
binder_main(void *arg)
{
	struct binder *b = arg;
	struct trd_event ev;

	for (unsigned int p = 0; p < b->phases; p++) {
		cpu_set_t set;

		b->bind_rc[p] = trd_eq_bind(b->eq, b->cpus[p]);
		b->affinity_ok[p] =
			pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0 &&
			CPU_COUNT(&set) == 1 && CPU_ISSET((unsigned int)b->cpus[p], &set);
		b->core_seen[p] = trd_eq_core(b->eq);
		__atomic_store_n(&b->ready, p + 1, __ATOMIC_RELEASE);
		b->wait_rc[p] = trd_eq_wait(b->eq, &ev, 1, TIMEOUT_US);
		b->woke_on[p] = sched_getcpu();
	}
	return NULL;
}

static void
test_cpu_binding(void)
{
	struct trd_node_conf c = {.rec_fifo_size = 64};
	unsigned int lc = test_worker_lcore();
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct binder b = {.cpus = {0, 1}, .phases = ncpu >= 2 ? 2 : 1};
	struct trd_msg *m[8];
	struct trd_eq *eq2;
	struct trd_node *n;
	pthread_t th;

	if (lc >= RTE_MAX_LCORE) {
		test_skip_part("cpu binding: needs a worker lcore");
		return;
	}
	trd_torus_init(&c.torus, 1, 1, 1);
	n = trd_node_create(&c);
	T_ASSERT(n != NULL, "node");
	b.eq = trd_eq_create(n, -1, 0);
	eq2 = trd_eq_create(n, -1, 0);
	T_ASSERT(b.eq != NULL && eq2 != NULL, "queues");
	T_EQ(trd_eq_core(b.eq), -1);
	T_EQ(trd_eq_core(NULL), -EINVAL);
	T_EQ(trd_rec_fifo_set_eq(trd_rec_fifo(n, 0), b.eq), 0);

	/* refusals change nothing */
	T_EQ(trd_eq_bind(b.eq, -2), -EINVAL);
	T_EQ(trd_eq_bind(b.eq, 100000), -EINVAL);
	T_EQ(trd_eq_bind(b.eq, (int)sysconf(_SC_NPROCESSORS_CONF)), -EINVAL);
	T_EQ(trd_eq_core(b.eq), -1);
	/* this thread is EAL's main lcore, on CPU 0 alone: it may bind there, nowhere else */
	if (ncpu >= 2)
		T_EQ(trd_eq_bind(eq2, 1), -EBUSY);
	T_EQ(trd_eq_core(eq2), -1);
	T_EQ(trd_eq_bind(eq2, 0), 0);
	T_EQ(trd_eq_core(eq2), 0);

	T_EQ(trd_node_launch(n, lc), 0);
	T_EQ(pthread_create(&th, NULL, binder_main, &b), 0);
	for (unsigned int p = 0; p < b.phases; p++) {
		uint64_t deadline = trd_time_us() + TIMEOUT_US;

		while (__atomic_load_n(&b.ready, __ATOMIC_ACQUIRE) < p + 1 &&
		       trd_time_us() < deadline)
			rte_pause();
		T_ASSERT(__atomic_load_n(&b.ready, __ATOMIC_ACQUIRE) >= p + 1, "phase %u", p);
		if (p == 0) {
			/* the owner holds the queue: a refused bind from here does not take it */
			if (ncpu >= 2)
				T_EQ(trd_eq_bind(b.eq, 1), -EBUSY);
			T_EQ(trd_eq_poll(b.eq, NULL, 0), -EPERM);
		}
		/* the owner takes this event, then binds for the next phase before main sends */
		send_self(n, 0, 0xB1D0 + p);
	}
	T_EQ(pthread_join(th, NULL), 0);
	trd_lcore_stop(lc);
	for (unsigned int p = 0; p < b.phases; p++) {
		T_EQ(b.bind_rc[p], 0);
		T_ASSERT(b.affinity_ok[p], "phase %u: owner not pinned to CPU %d alone", p,
			 b.cpus[p]);
		T_EQ(b.core_seen[p], b.cpus[p]);
		T_EQ(b.wait_rc[p], 1);
		T_ASSERT(b.woke_on[p] == b.cpus[p], "phase %u: woken on CPU %d, bound to %d", p,
			 b.woke_on[p], b.cpus[p]);
	}
	for (int k; (k = trd_rec_fifo_poll(trd_rec_fifo(n, 0), m, 8)) > 0;)
		for (int j = 0; j < k; j++)
			trd_msg_free(m[j]);
	trd_node_free(n);
	if (b.phases < 2)
		test_skip_part("cpu binding: re-binding to another CPU needs two CPUs");
	printf("cpu binding: the owner runs and is woken on its queue's CPU; re-binding moved it "
	       "from CPU 0 to CPU 1; refusals (no such CPU, an EAL lcore elsewhere) change "
	       "nothing\n");
}

static void
test_doorbell_wait(void)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_net *net;
	struct trd_node *a, *b;
	uint64_t *page = aligned_alloc(4096, 4096);
	static uint8_t buf[100], dst[100];
	struct trd_mr *db, *mr;
	struct trd_desc d;
	unsigned int lc = test_worker_lcore();
	static const enum trd_wait_how how[] = {TRD_WAIT_SPIN, TRD_WAIT_MONITOR, TRD_WAIT_EQ};
	static const char *const names[] = {"spin", "monitor", "event queue"};

	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	a = trd_net_node(net, 0);
	b = trd_net_node(net, 1);
	memset(page, 0, 4096);
	T_EQ(trd_eq_bind(trd_node_eq(a, 0), -1), 0);
	db = trd_doorbell_register(a, page, 4096, trd_node_eq(a, 0));
	mr = trd_mr_register(b, dst, sizeof(dst), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(db != NULL && mr != NULL, "regions");
	if (lc < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &lc, 1), 0);
	for (unsigned int i = 0; i < RTE_DIM(how); i++)
		for (unsigned int mode = 0; mode < 2; mode++) {
			struct trd_cpl_spec s = {.kind = TRD_CPL_DOORBELL,
						 .mode = mode ? TRD_CPL_DELIVERY : TRD_CPL_LOCAL,
						 .doorbell = db,
						 .offset = 8 * (i * 2 + mode),
						 .cookie = 0xABC0 + i * 2 + mode};

			trd_desc_put(&d, trd_node_coord(b), buf, sizeof(buf), trd_mr_key(mr), 0, 0,
				     0);
			T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &s), 0);
			T_ASSERT(trd_doorbell_wait(db, s.offset, s.cookie, how[i], TIMEOUT_US) == 0,
				 "wait by %s", names[i]);
			T_EQ(page[s.offset / 8], s.cookie);
		}
	T_EQ(trd_doorbell_wait(db, 4096, 1, TRD_WAIT_SPIN, 10), -EINVAL);
	T_EQ(trd_doorbell_wait(db, 3, 1, TRD_WAIT_SPIN, 10), -EINVAL);
	T_EQ(trd_doorbell_wait(db, 800, 1, TRD_WAIT_MONITOR, 1000), -ETIMEDOUT);
	trd_net_free(net);
	free(page);
	printf("doorbell waits: spin, monitor (%s), event queue\n",
	       trd_doorbell_monitor_supported() ? "UMWAIT" : "pause-loop fallback: no WAITPKG");
}

int
main(int argc, char **argv)
{
	(void)argc;
	test_eal_init(argv[0], NULL);
	test_arm();
	test_owners();
	test_cpu_binding();
	test_doorbell_wait();
	rte_eal_cleanup();
	return test_status();
}
