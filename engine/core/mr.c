/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory regions: registration, keys, lookup on the data path, deregistration. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal_memconfig.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_pause.h>
#include <rte_random.h>

#include <toroid/testing.h>

#include "core_pvt.h"
#include "node_pvt.h"

/* ---- memory regions ---- */

/* The IO address of a page of DPDK memory at @p va: its memseg's, or the virtual address in
 * IOVA-as-VA mode when the memseg has none (external memory registered without a table). */
static rte_iova_t
seg_iova(const struct rte_memseg *ms, uintptr_t va)
{
	if (ms == NULL || ms->addr == NULL)
		return RTE_BAD_IOVA;
	if (ms->iova == RTE_BAD_IOVA)
		return trd_iova_is_va() ? (rte_iova_t)va : RTE_BAD_IOVA;
	return ms->iova + (va - (uintptr_t)ms->addr);
}

/*
 * The IO address of [addr, addr + len), IOVA-contiguous, or RTE_BAD_IOVA. DPDK memory (its
 * heap, or external memory registered with rte_extmem_register()) is translated through its
 * memory map, page by page; *dpdk says it was. Other memory has an IO address only in
 * IOVA-as-VA mode, where it is its virtual address (what rte_mem_virt2iova() says): a port
 * behind an IOMMU can reach it only if the application mapped it (rte_dev_dma_map()).
 */
static rte_iova_t
mr_iova(const void *addr, size_t len, bool *dpdk)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	const struct rte_memseg_list *msl;
	rte_iova_t iova;

	*dpdk = false;
	if (addr == NULL)
		return RTE_BAD_IOVA;
	rte_mcfg_mem_read_lock();
	msl = rte_mem_virt2memseg_list(addr);
	if (msl == NULL) {
		rte_mcfg_mem_read_unlock();
		return trd_iova_is_va() ? (rte_iova_t)a : RTE_BAD_IOVA;
	}
	*dpdk = true;
	iova = seg_iova(rte_mem_virt2memseg(addr, msl), a);
	if (len > (uintptr_t)msl->base_va + msl->len - a)
		iova = RTE_BAD_IOVA; /* runs past the memory DPDK knows */
	/* every further page where the first one says it is */
	for (uintptr_t p = RTE_ALIGN_FLOOR(a, msl->page_sz) + msl->page_sz;
	     iova != RTE_BAD_IOVA && p < end && p > a; p += msl->page_sz)
		if (seg_iova(rte_mem_virt2memseg((void *)p, msl), p) != iova + (p - a))
			iova = RTE_BAD_IOVA;
	rte_mcfg_mem_read_unlock();
	return iova;
}

/*
 * Region keys are 64 bits nobody can predict: SipHash, under a secret drawn from getrandom()
 * on the first registration, of the number of keys made so far (so a key never comes twice).
 * The key does not name its slot: the slot is a keyed multiplicative hash of the key (a secret
 * added, a secret odd multiplier, the high half), modulo the table; a registration draws keys
 * until one falls on a free slot. So lookup is a multiply, one load and one compare of all 64
 * bits, and someone who knows where a region sits (or other keys of the node) still has 64
 * bits to guess: the slot only says where to look, the key itself is what is checked. (A
 * SipHash here cost about 150 instructions per keyed packet, a quarter of a 64 B put.)
 */
static inline uint32_t
mr_slot_of(const struct trd_node *n, uint64_t key)
{
	uint64_t h = (key + n->mr_secret[2]) * n->mr_secret[3]; /* (odd: mr_new_key()) */

	return (uint32_t)((h >> 32) % n->conf.n_regions);
}

/* A fresh key whose slot is free, or 0 (ctl_lock held). */
static uint64_t
mr_new_key(struct trd_node *n)
{
	if (n->conf.n_regions == 0)
		return 0; /* (so a keyed node has a table: trd_mr_lookup() checks one flag) */
	if (!n->mr_keyed) {
		trd_secret_bytes(n->mr_secret, sizeof(n->mr_secret));
		n->mr_secret[3] |= 1; /* the multiplier: odd, so no key bit is lost */
		__atomic_store_n(&n->mr_keyed, true, __ATOMIC_RELEASE);
	}
	/* a free slot is drawn with probability free/n_regions each time: 64 times the table
	 * leaves it unfound with less than e^-64 */
	for (uint32_t tries = 0; tries < 64 * n->conf.n_regions; tries++) {
		uint64_t s = ++n->mr_serial;
		uint64_t key = trd_session_cookie(n->mr_secret[0], n->mr_secret[1],
						  (uint32_t)(s >> 32), (uint32_t)s);

		if (key != 0 && n->mrs[mr_slot_of(n, key)].key == 0 &&
		    __atomic_load_n(&n->mrs[mr_slot_of(n, key)].readers, __ATOMIC_ACQUIRE) == 0)
			return key;
	}
	return 0;
}

struct trd_mr *
trd_mr_register(struct trd_node *n, void *addr, size_t len, unsigned int access)
{
	struct trd_mr *mr = NULL;
	rte_iova_t iova;
	bool dpdk;

	if (n == NULL || (addr == NULL && len != 0) ||
	    (access & ~(unsigned int)TRD_ACCESS_MASK) != 0 || (uintptr_t)addr > UINTPTR_MAX - len) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (n->att != NULL)
		return trd_attach_mr_register(n, addr, len, access, NULL);
	iova = mr_iova(addr, len, &dpdk);
	if ((access & TRD_ACCESS_DMA) && (!dpdk || iova == RTE_BAD_IOVA)) {
		TRD_LOG(ERR, "region %p+%zu: not DMA-able (%s)", addr, len,
			dpdk ? "not IOVA-contiguous" : "not DPDK or registered external memory");
		rte_errno = EFAULT;
		return NULL;
	}
	rte_spinlock_lock(&n->ctl_lock);
	if (n->conf.n_regions != 0) {
		uint64_t key = mr_new_key(n);

		if (key != 0) {
			mr = &n->mrs[mr_slot_of(n, key)];
			mr->base = addr;
			mr->len = len;
			mr->access = access;
			mr->iova = iova;
			mr->doorbell = false;
			mr->db_fifo = 0;
			mr->eq = NULL;
			mr->ctr_block = 0;
			__atomic_store_n(&mr->key, key, __ATOMIC_RELEASE);
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
	if (n->att != NULL)
		return trd_attach_mr_deregister(mr);
	rte_spinlock_lock(&n->ctl_lock);
	__atomic_store_n(&mr->key, 0, __ATOMIC_SEQ_CST);
	rte_spinlock_unlock(&n->ctl_lock);
	/* every share reads the region table */
	for (unsigned int k = 0; k < n->n_shares; k++) {
		int rc = trd_node_quiesce(n->sh[k]);

		if (rc != 0)
			return rc;
	}
	return 0;
}

int
trd_mr_bind_counters(struct trd_mr *mr, uint16_t base)
{
	if (mr == NULL || mr->key == 0 || base == 0 || base % TRD_COUNTER_BLOCK != 0 ||
	    (unsigned int)base + TRD_COUNTER_BLOCK > mr->node->conf.n_counters ||
	    mr->node->ctr_used[base] != 2)
		return -EINVAL;
	__atomic_store_n(&mr->ctr_block, base, __ATOMIC_RELEASE);
	return 0;
}

unsigned int
trd_mr_readers(const struct trd_mr *mr)
{
	return mr == NULL ? 0 : __atomic_load_n(&mr->readers, __ATOMIC_ACQUIRE);
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

uint64_t
trd_mr_remote_addr(const struct trd_mr *mr, const void *addr)
{
	if (mr == NULL)
		return 0;
	if (mr->access & TRD_ACCESS_VA)
		return (uintptr_t)addr;
	return (uint64_t)((uintptr_t)addr - (uintptr_t)mr->base);
}

uint64_t
trd_mr_iova(const struct trd_mr *mr)
{
	return mr == NULL ? RTE_BAD_IOVA : mr->iova;
}

struct trd_mr *
trd_mr_lookup(struct trd_node *n, uint64_t key)
{
	struct trd_mr *mr;

	if (key == 0 || !__atomic_load_n(&n->mr_keyed, __ATOMIC_ACQUIRE))
		return NULL;
	mr = &n->mrs[mr_slot_of(n, key)];
	return __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) == key ? mr : NULL;
}

void *
trd_mem_alloc(struct trd_node *n, size_t len)
{
	void *p;

	if (n == NULL || len == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (n->att != NULL)
		p = n->att->mem_alloc(n, len);
	else
		p = rte_zmalloc("trd_mem", len, RTE_CACHE_LINE_SIZE);
	if (p == NULL)
		rte_errno = ENOMEM;
	return p;
}

void
trd_mem_free(struct trd_node *n, void *p)
{
	if (n == NULL || p == NULL)
		return;
	if (n->att != NULL)
		n->att->mem_free(n, p);
	else
		rte_free(p);
}
