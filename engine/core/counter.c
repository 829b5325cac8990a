/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte counters: allocation, reads, waits (they reach zero when an operation completes). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---- the array and its blocks ---- */

int64_t *
trd_ctr_map(struct trd_node *n, unsigned int count)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	n->ctr_fd = -1;
	n->ctr_bytes = RTE_ALIGN_CEIL(sizeof(*n->ctr) * count, page);
	n->ctr_fd = memfd_create("toroid-counters", MFD_CLOEXEC);
	if (n->ctr_fd < 0 || ftruncate(n->ctr_fd, (off_t)n->ctr_bytes) != 0)
		goto fail;
	p = mmap(NULL, n->ctr_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, n->ctr_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	return p;
fail:
	if (n->ctr_fd >= 0)
		close(n->ctr_fd);
	n->ctr_fd = -1;
	return NULL;
}

void
trd_ctr_unmap(struct trd_node *n)
{
	if (n->ctr == NULL)
		return;
	munmap(n->ctr, n->ctr_bytes);
	close(n->ctr_fd);
	n->ctr = NULL;
	n->ctr_fd = -1;
}

int
trd_counter_block_alloc(struct trd_node *n, uint16_t *base, int *fd, uint64_t *offset)
{
	int rc = -ENOSPC;

	if (n == NULL || base == NULL || fd == NULL || offset == NULL || n->ctr_fd < 0 ||
	    sysconf(_SC_PAGESIZE) != TRD_COUNTER_BLOCK * sizeof(*n->ctr))
		return -EINVAL;
	rte_spinlock_lock(&n->ctl_lock);
	/* from the top: trd_counter_alloc() takes the lowest free ids */
	for (unsigned int b = n->conf.n_counters / TRD_COUNTER_BLOCK; b-- > 1;) {
		unsigned int lo = b * TRD_COUNTER_BLOCK, i;

		for (i = lo; i < lo + TRD_COUNTER_BLOCK && !n->ctr_used[i]; i++)
			;
		if (i != lo + TRD_COUNTER_BLOCK)
			continue;
		for (i = lo; i < lo + TRD_COUNTER_BLOCK; i++) {
			__atomic_store_n(&n->ctr[i], 0, __ATOMIC_RELAXED);
			/* the block's first id (its owner's "none") is marked 2: taken, and
			 * known as a block by trd_counter_block_free() */
			__atomic_store_n(&n->ctr_used[i], (uint8_t)(i == lo ? 2 : 1),
					 __ATOMIC_RELEASE);
		}
		*base = (uint16_t)lo;
		*fd = n->ctr_fd;
		*offset = (uint64_t)lo * sizeof(*n->ctr);
		rc = 0;
		break;
	}
	rte_spinlock_unlock(&n->ctl_lock);
	return rc;
}

int
trd_counter_block_free(struct trd_node *n, uint16_t base)
{
	if (n == NULL || base % TRD_COUNTER_BLOCK != 0 || base == 0 ||
	    (unsigned int)base + TRD_COUNTER_BLOCK > n->conf.n_counters || n->ctr_used[base] != 2)
		return -EINVAL;
	rte_spinlock_lock(&n->ctl_lock);
	for (unsigned int i = base; i < (unsigned int)base + TRD_COUNTER_BLOCK; i++)
		__atomic_store_n(&n->ctr_used[i], 0, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&n->ctl_lock);
	return 0;
}
