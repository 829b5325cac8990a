/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event queues: the engine adds events (a message stored in a bound reception FIFO, a write
 * into a bound doorbell region); the owner thread takes them. An armed queue writes its
 * eventfd once on the next event and disarms; a disarmed queue never signals. A queue of an
 * attached process's handle is the attaching layer's (eq->att, engine/vni/app_eq.c): the calls
 * here hand it over.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring_elem.h>

#include "core_pvt.h"

_Static_assert(sizeof(struct trd_event) == 32, "an event is 32 bytes");

static inline int
self_tid(void)
{
	return (int)gettid();
}

/* A queue of an attached process's handle: the attaching layer's, fed by its FIFOs. */
static struct trd_eq *
eq_attach_create(struct trd_node *n, int core, unsigned int size)
{
	struct trd_eq *eq = calloc(1, sizeof(*eq));

	if (eq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	eq->att = n->att->eq_create(n, size ? size : 4096, &eq->fd);
	if (eq->att == NULL) {
		free(eq);
		return NULL;
	}
	eq->node = n;
	eq->core = core;
	n->eqs[n->n_eqs++] = eq;
	return eq;
}

struct trd_eq *
trd_eq_create(struct trd_node *n, int core, unsigned int size)
{
	static unsigned int serial;
	char name[RTE_RING_NAMESIZE];
	struct trd_eq *eq;

	if (n == NULL || core < -1 || size > (1u << 20)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (n->n_eqs >= TRD_MAX_EQS) {
		rte_errno = ENOSPC;
		return NULL;
	}
	if (n->att != NULL)
		return eq_attach_create(n, core, size);
	eq = rte_zmalloc("trd_eq", sizeof(*eq), RTE_CACHE_LINE_SIZE);
	if (eq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "trdeq%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
	eq->ring = rte_ring_create_elem(
		name, sizeof(struct trd_event), size ? size : 4096, SOCKET_ID_ANY,
		/* every share of a split node may add */
		(n->n_shares > 1 ? 0 : RING_F_SP_ENQ) | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	eq->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (eq->ring == NULL || eq->fd < 0) {
		if (eq->fd >= 0)
			close(eq->fd);
		rte_ring_free(eq->ring);
		rte_free(eq);
		rte_errno = ENOMEM;
		return NULL;
	}
	eq->node = n;
	eq->core = core;
	n->eqs[n->n_eqs++] = eq;
	for (unsigned int k = 1; k < n->n_shares && n->sh[k] != NULL; k++) {
		n->sh[k]->eqs[n->sh[k]->n_eqs] = eq;
		__atomic_store_n(&n->sh[k]->n_eqs, n->sh[k]->n_eqs + 1, __ATOMIC_RELEASE);
	}
	return eq;
}

void
trd_eq_free(struct trd_eq *eq)
{
	if (eq == NULL)
		return;
	if (eq->att != NULL) {
		eq->node->att->eq_free(eq->att);
		free(eq);
		return;
	}
	close(eq->fd);
	rte_ring_free(eq->ring);
	rte_free(eq);
}

struct trd_eq *
trd_node_eq(struct trd_node *n, unsigned int idx)
{
	return (n == NULL || idx >= n->n_eqs) ? NULL : n->eqs[idx];
}

/* Run the calling thread on CPU @p core alone. An EAL lcore thread keeps the CPUs EAL gave it:
 * it may bind only to the one CPU it already runs on. */
static int
pin_self(int core)
{
	unsigned int lcore = rte_lcore_id();
	cpu_set_t set;
	int rc;

	if (core >= CPU_SETSIZE || core >= (int)sysconf(_SC_NPROCESSORS_CONF)) {
		TRD_LOG(ERR, "event queue: CPU %d does not exist (%ld CPUs)", core,
			sysconf(_SC_NPROCESSORS_CONF));
		return -EINVAL;
	}
	if (lcore != LCORE_ID_ANY) {
		rte_cpuset_t cur = rte_lcore_cpuset(lcore);

		if (CPU_COUNT(&cur) == 1 && CPU_ISSET((unsigned int)core, &cur))
			return 0;
		TRD_LOG(ERR,
			"event queue: the caller is EAL lcore %u, which EAL placed on other "
			"CPUs than %d alone; bind from a thread of your own",
			lcore, core);
		return -EBUSY;
	}
	CPU_ZERO(&set);
	CPU_SET((unsigned int)core, &set);
	rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc != 0) {
		TRD_LOG(ERR,
			"event queue: cannot run this thread on CPU %d: %s (offline, or outside "
			"the process's cpuset?)",
			core, strerror(rc));
		return -rc;
	}
	return 0;
}

int
trd_eq_bind(struct trd_eq *eq, int core)
{
	int rc;

	if (eq == NULL || core < -1)
		return -EINVAL;
	if (core >= 0) {
		rc = pin_self(core);
		if (rc != 0)
			return rc; /* nothing changed: the queue keeps its CPU and its owner */
		__atomic_store_n(&eq->core, core, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&eq->owner, self_tid(), __ATOMIC_RELEASE);
	return 0;
}

int
trd_eq_core(const struct trd_eq *eq)
{
	return eq == NULL ? -EINVAL : __atomic_load_n(&eq->core, __ATOMIC_ACQUIRE);
}

/* The owner, binding the caller if the queue has none yet. */
static int
owner_check(struct trd_eq *eq)
{
	int tid = self_tid(), expect = 0;

	if (__atomic_load_n(&eq->owner, __ATOMIC_ACQUIRE) == tid)
		return 0;
	if (__atomic_compare_exchange_n(&eq->owner, &expect, tid, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return 0;
	return -EPERM;
}

int
trd_eq_fd(const struct trd_eq *eq)
{
	return eq == NULL ? -EINVAL : eq->fd;
}

int
trd_eq_arm(struct trd_eq *eq)
{
	int rc;

	if (eq == NULL)
		return -EINVAL;
	rc = owner_check(eq);
	if (rc != 0)
		return rc;
	if (eq->att != NULL)
		return eq->node->att->eq_arm(eq->att);
	__atomic_store_n(&eq->armed, 1, __ATOMIC_SEQ_CST);
	if (rte_ring_count(eq->ring) != 0) {
		/* Events already wait: do not sleep on them. If the engine disarmed the queue in
		 * the meantime, its signal is in the eventfd and the next wait returns at once. */
		__atomic_store_n(&eq->armed, 0, __ATOMIC_SEQ_CST);
		return -EBUSY;
	}
	return 0;
}

int
trd_eq_disarm(struct trd_eq *eq)
{
	if (eq == NULL)
		return -EINVAL;
	if (eq->att != NULL)
		eq->node->att->eq_disarm(eq->att);
	__atomic_store_n(&eq->armed, 0, __ATOMIC_SEQ_CST);
	return 0;
}

int
trd_eq_poll(struct trd_eq *eq, struct trd_event *ev, unsigned int n)
{
	int rc;

	if (eq == NULL || (ev == NULL && n != 0))
		return -EINVAL;
	rc = owner_check(eq);
	if (rc != 0)
		return rc;
	if (eq->att != NULL)
		return eq->node->att->eq_poll(eq->att, ev, n);
	return (int)rte_ring_sc_dequeue_burst_elem(eq->ring, ev, sizeof(*ev), n, NULL);
}

int
trd_eq_wait(struct trd_eq *eq, struct trd_event *ev, unsigned int n, uint64_t timeout_us)
{
	uint64_t deadline, now;
	int got;

	if (eq == NULL || ev == NULL || n == 0)
		return -EINVAL;
	deadline = trd_time_us() + timeout_us;
	for (;;) {
		got = trd_eq_poll(eq, ev, n);
		if (got != 0)
			return got;
		now = trd_time_us();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (eq->att == NULL && !__atomic_load_n(&eq->node->served, __ATOMIC_ACQUIRE)) {
			/* nobody else moves packets: do it here instead of sleeping */
			trd_node_progress(eq->node);
			continue;
		}
		if (trd_eq_arm(eq) == 0) {
			struct pollfd pfd = {.fd = eq->fd, .events = POLLIN};
			uint64_t left = deadline - now;
			uint64_t v;

			/* (a handle's queue takes its FIFOs' signals as it polls) */
			if (poll(&pfd, 1, (int)RTE_MIN((left + 999) / 1000, 60000u)) > 0 &&
			    eq->att == NULL && read(eq->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return -errno;
			trd_eq_disarm(eq);
		}
	}
}

uint64_t
trd_eq_signals(const struct trd_eq *eq)
{
	uint64_t sig, over;

	if (eq != NULL && eq->att != NULL) {
		eq->node->att->eq_stats(eq->att, &sig, &over);
		return sig;
	}
	return eq == NULL ? 0 : __atomic_load_n(&eq->signals, __ATOMIC_RELAXED);
}

uint64_t
trd_eq_overflows(const struct trd_eq *eq)
{
	uint64_t sig, over;

	if (eq != NULL && eq->att != NULL) {
		eq->node->att->eq_stats(eq->att, &sig, &over);
		return over;
	}
	return eq == NULL ? 0 : __atomic_load_n(&eq->overflows, __ATOMIC_RELAXED);
}

void
trd_eq_push(struct trd_eq *eq, const struct trd_event *ev)
{
	/* the ring's flags say whether other shares' lcores enqueue too (multi-producer) */
	if (unlikely(rte_ring_enqueue_elem(eq->ring, (void *)(uintptr_t)ev, sizeof(*ev)) != 0))
		__atomic_fetch_add(&eq->overflows, 1, __ATOMIC_RELAXED);
	/* One signal per armed period: whoever clears the flag writes the eventfd. */
	if (__atomic_load_n(&eq->armed, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&eq->armed, 0, __ATOMIC_SEQ_CST)) {
		uint64_t one = 1;

		if (write(eq->fd, &one, sizeof(one)) == sizeof(one))
			__atomic_fetch_add(&eq->signals, 1, __ATOMIC_RELAXED);
	}
}
