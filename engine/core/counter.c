/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte counters: allocation, reads, waits (they reach zero when an operation completes). */
#include <errno.h>
#include <fcntl.h>
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
	unsigned int first = 1, end;
	int rc = -ENOSPC;

	if (n == NULL || id == NULL)
		return -EINVAL;
	end = n->conf.n_counters;
	if (n->att != NULL) {
		first = n->ctr_first; /* an attached handle: its block alone */
		end = n->ctr_end;
	}
	rte_spinlock_lock(&n->ctl_lock);
	for (unsigned int i = first; i < end; i++) {
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
	if (n->att != NULL)
		return n->att->counter_wait(n, id, timeout_us);
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

/* ---- the array and its blocks ----
 *
 * The array is one range of shared anonymous memory, contiguous for the hot path (n->ctr[id]).
 * A block given to a process is one page of it, replaced (MAP_FIXED) by a memfd of that page
 * alone, sealed against shrinking and growing: the process is given that fd and reaches its
 * own counters only, and cannot truncate what the engine writes. A block given back is
 * replaced by anonymous memory again, so a block's next owner never shares a page with the
 * previous one. */

int64_t *
trd_ctr_map(struct trd_node *n, unsigned int count)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	n->ctr_bytes = RTE_ALIGN_CEIL(sizeof(*n->ctr) * count, page);
	p = mmap(NULL, n->ctr_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void
trd_ctr_unmap(struct trd_node *n)
{
	if (n->ctr == NULL)
		return;
	munmap(n->ctr, n->ctr_bytes);
	n->ctr = NULL;
}

/* A sealed memfd of one page (zeros) mapped over the counters at @p at. The fd, or -errno. */
static int
ctr_block_memfd(void *at, size_t len)
{
	int fd = memfd_create("toroid-counters", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int rc;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
	    mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int
trd_counter_block_alloc(struct trd_node *n, uint16_t *base, int *fd, uint64_t *offset)
{
	size_t len = TRD_COUNTER_BLOCK * sizeof(*n->ctr);
	int rc = -ENOSPC;

	if (n == NULL || base == NULL || fd == NULL || offset == NULL || n->ctr == NULL ||
	    sysconf(_SC_PAGESIZE) != (long)len)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */

	rte_spinlock_lock(&n->ctl_lock);
	/* from the top: trd_counter_alloc() takes the lowest free ids */
	for (unsigned int b = n->conf.n_counters / TRD_COUNTER_BLOCK; b-- > 1;) {
		unsigned int lo = b * TRD_COUNTER_BLOCK, i;
		int f;

		for (i = lo; i < lo + TRD_COUNTER_BLOCK && !n->ctr_used[i]; i++)
			;
		if (i != lo + TRD_COUNTER_BLOCK)
			continue;
		/* its page becomes a file of its own (all zeros): the only one the owner gets */
		f = ctr_block_memfd(&n->ctr[lo], len);
		if (f < 0) {
			rc = f;
			break;
		}
		for (i = lo; i < lo + TRD_COUNTER_BLOCK; i++)
			/* the block's first id (its owner's "none") is marked 2: taken, and
			 * known as a block by trd_counter_block_free(); the others 3: in a
			 * block, for trd_ctr_allowed() */
			__atomic_store_n(&n->ctr_used[i], (uint8_t)(i == lo ? 2 : 3),
					 __ATOMIC_RELEASE);
		*base = (uint16_t)lo;
		*fd = f;
		*offset = 0;
		rc = 0;
		break;
	}
	rte_spinlock_unlock(&n->ctl_lock);
	return rc;
}

int
trd_counter_block_free(struct trd_node *n, uint16_t base)
{
	int rc = 0;

	if (n == NULL || base % TRD_COUNTER_BLOCK != 0 || base == 0 ||
	    (unsigned int)base + TRD_COUNTER_BLOCK > n->conf.n_counters || n->ctr_used[base] != 2)
		return -EINVAL;
	rte_spinlock_lock(&n->ctl_lock);
	for (unsigned int i = base; i < (unsigned int)base + TRD_COUNTER_BLOCK; i++)
		__atomic_store_n(&n->ctr_used[i], 0, __ATOMIC_RELEASE);
	/* the owner's file leaves the array: whoever still maps it reaches nothing of the node */
	if (mmap(&n->ctr[base], TRD_COUNTER_BLOCK * sizeof(*n->ctr), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		rc = -errno;
	rte_spinlock_unlock(&n->ctl_lock);
	return rc;
}
