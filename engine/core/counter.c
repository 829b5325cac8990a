/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte counters: allocation, reads, waits (they reach zero when an operation completes). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_random.h>

#include "core_pvt.h"
#include "node_pvt.h"

/* ---- counters ---- */

static inline bool
ctr_ok(const struct trd_node *n, uint16_t id)
{
	return n != NULL && id != 0 && id < n->conf.n_counters && n->ctr_used[id];
}

int
trd_counter_alloc(struct trd_node *n, uint16_t *id)
{
	int rc = -ENOSPC;

	if (n == NULL || id == NULL)
		return -EINVAL;
	rte_spinlock_lock(&n->ctl_lock);
	for (unsigned int i = 1; i < n->conf.n_counters; i++) {
		if (!n->ctr_used[i]) {
			__atomic_store_n(&n->ctr[i], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&n->ctr_used[i], 1, __ATOMIC_RELEASE);
			*id = (uint16_t)i;
			rc = 0;
			break;
		}
	}
	rte_spinlock_unlock(&n->ctl_lock);
	return rc;
}

int
trd_counter_free(struct trd_node *n, uint16_t id)
{
	if (!ctr_ok(n, id))
		return -EINVAL;
	__atomic_store_n(&n->ctr_used[id], 0, __ATOMIC_RELEASE);
	return 0;
}

int
trd_counter_set(struct trd_node *n, uint16_t id, int64_t value)
{
	if (!ctr_ok(n, id))
		return -EINVAL;
	__atomic_store_n(&n->ctr[id], value, __ATOMIC_RELEASE);
	return 0;
}

int
trd_counter_add(struct trd_node *n, uint16_t id, int64_t delta)
{
	if (!ctr_ok(n, id))
		return -EINVAL;
	__atomic_fetch_add(&n->ctr[id], delta, __ATOMIC_ACQ_REL);
	return 0;
}

int
trd_counter_read(const struct trd_node *n, uint16_t id, int64_t *value)
{
	if (!ctr_ok(n, id) || value == NULL)
		return -EINVAL;
	*value = __atomic_load_n(&n->ctr[id], __ATOMIC_ACQUIRE);
	return 0;
}

int
trd_counter_wait(struct trd_node *n, uint16_t id, uint64_t timeout_us)
{
	uint64_t deadline;
	int64_t v;

	if (!ctr_ok(n, id))
		return -EINVAL;
	deadline = trd_time_us() + timeout_us;
	for (;;) {
		v = __atomic_load_n(&n->ctr[id], __ATOMIC_ACQUIRE);
		if (v == 0)
			return 0;
		if (v <= TRD_COUNTER_FAILED)
			return -EHOSTUNREACH;
		if (v < 0)
			return -ERANGE;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		trd_node_progress(n);
	}
}
