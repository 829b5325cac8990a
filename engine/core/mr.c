/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory regions: registration, keys, lookup on the data path, deregistration. */
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

#include "node_pvt.h"
#include "core_pvt.h"

/* ---- memory regions ---- */

struct trd_mr *
trd_mr_register(struct trd_node *n, void *addr, size_t len, unsigned int access)
{
	struct trd_mr *mr = NULL;

	if (n == NULL || (addr == NULL && len != 0) || (access & ~TRD_ACCESS_ALL) != 0 ||
	    (uintptr_t)addr > UINTPTR_MAX - len) {
		rte_errno = EINVAL;
		return NULL;
	}
	rte_spinlock_lock(&n->ctl_lock);
	for (unsigned int i = 0; i < n->conf.n_regions; i++) {
		if (n->mrs[i].key == 0) {
			uint64_t hi;

			mr = &n->mrs[i];
			do
				hi = rte_rand() << 16;
			while (hi == 0);
			mr->base = addr;
			mr->len = len;
			mr->access = access;
			mr->doorbell = false;
			mr->eq = NULL;
			/* the key names its slot: lookup is one load and one compare */
			__atomic_store_n(&mr->key, hi | i, __ATOMIC_RELEASE);
			break;
		}
	}
	rte_spinlock_unlock(&n->ctl_lock);
	if (mr == NULL)
		rte_errno = ENOSPC;
	return mr;
}

int
trd_node_quiesce(struct trd_node *n)
{
	uint64_t gen, deadline;

	/* A round that started before the caller's change may still use the old state: wait
	 * until the serving lcore is between rounds or has begun a new one. */
	gen = __atomic_load_n(&n->poll_gen, __ATOMIC_SEQ_CST);
	deadline = trd_time_us() + 1000000;
	while (__atomic_load_n(&n->in_poll, __ATOMIC_SEQ_CST) &&
	       __atomic_load_n(&n->poll_gen, __ATOMIC_SEQ_CST) == gen) {
		if (trd_time_us() > deadline)
			return -ETIMEDOUT;
		rte_pause();
	}
	return 0;
}

int
trd_mr_deregister(struct trd_mr *mr)
{
	struct trd_node *n;

	if (mr == NULL || mr->key == 0)
		return -EINVAL;
	n = mr->node;
	rte_spinlock_lock(&n->ctl_lock);
	__atomic_store_n(&mr->key, 0, __ATOMIC_SEQ_CST);
	rte_spinlock_unlock(&n->ctl_lock);
	return trd_node_quiesce(n);
}

struct trd_mr *
trd_mr_find(struct trd_node *n, const void *addr, size_t len, unsigned int access)
{
	uintptr_t a = (uintptr_t)addr;

	if (n == NULL || (addr == NULL && len != 0) || a > UINTPTR_MAX - len) {
		rte_errno = EINVAL;
		return NULL;
	}
	for (unsigned int i = 0; i < n->conf.n_regions; i++) {
		struct trd_mr *mr = &n->mrs[i];
		uintptr_t base = (uintptr_t)mr->base;

		if (__atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) != 0 && a >= base &&
		    a - base <= mr->len && len <= mr->len - (a - base) &&
		    (mr->access & access) == access)
			return mr;
	}
	rte_errno = ENOENT;
	return NULL;
}

uint64_t
trd_mr_key(const struct trd_mr *mr)
{
	return mr == NULL ? 0 : mr->key;
}

void *
trd_mr_addr(const struct trd_mr *mr)
{
	return mr == NULL ? NULL : mr->base;
}

size_t
trd_mr_len(const struct trd_mr *mr)
{
	return mr == NULL ? 0 : mr->len;
}

struct trd_mr *
trd_mr_lookup(struct trd_node *n, uint64_t key)
{
	uint32_t slot = (uint32_t)(key & 0xffff);
	struct trd_mr *mr;

	if (key == 0 || slot >= n->conf.n_regions)
		return NULL;
	mr = &n->mrs[slot];
	return __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) == key ? mr : NULL;
}
