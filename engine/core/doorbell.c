/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Doorbells: a registered region whose 8-byte words a completion writes (TRD_CPL_DOORBELL),
 * and the bounded wait for a word to change, by polling or with the CPU's monitor instruction
 * where rte_power_monitor() supports it.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_power_intrinsics.h>
#include <rte_ring.h>

#include "core_pvt.h"

struct trd_mr *
trd_doorbell_register(struct trd_node *n, void *addr, size_t len, struct trd_eq *eq)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct trd_mr *mr;

	if (n == NULL || addr == NULL || len == 0 || (uintptr_t)addr % page != 0 ||
	    len % page != 0 || (eq != NULL && eq->node != n)) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* an attached process's: its engine tells it of each write in a FIFO the queue reads
	 * (docs/vni.md "Event queues and doorbells on a handle") */
	mr = n->att != NULL ? trd_attach_mr_register(n, addr, len, TRD_ACCESS_REMOTE_WRITE, eq)
			    : trd_mr_register(n, addr, len, TRD_ACCESS_REMOTE_WRITE);
	if (mr != NULL) {
		mr->eq = eq;
		mr->doorbell = true;
	}
	return mr;
}

int
trd_doorbell_monitor_supported(void)
{
	struct rte_cpu_intrinsics intr;

	rte_cpu_get_intrinsics_support(&intr);
	return intr.power_monitor ? 1 : 0;
}

static int
monitor_abort(const uint64_t val, const uint64_t opaque[RTE_POWER_MONITOR_OPAQUE_SZ])
{
	return val == opaque[0] ? -1 : 0; /* already there: do not sleep */
}

int
trd_doorbell_wait(struct trd_mr *db, uint64_t offset, uint64_t value, enum trd_wait_how how,
		  uint64_t timeout_us)
{
	volatile uint64_t *word;
	struct trd_node *n;
	uint64_t deadline;
	bool monitor;

	if (db == NULL || db->key == 0 || offset % 8 != 0 || db->len < 8 || offset > db->len - 8)
		return -EINVAL;
	n = db->node;
	word = (volatile uint64_t *)(db->base + offset);
	deadline = trd_time_us() + timeout_us;
	switch (how) {
	case TRD_WAIT_SPIN:
	case TRD_WAIT_MONITOR:
		monitor = how == TRD_WAIT_MONITOR && trd_doorbell_monitor_supported() &&
			  __atomic_load_n(&n->served, __ATOMIC_ACQUIRE);
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
			if (trd_time_us() >= deadline)
				return -ETIMEDOUT;
			if (monitor) {
				struct rte_power_monitor_cond pmc = {
					.addr = word,
					.size = sizeof(uint64_t),
					.fn = monitor_abort,
					.opaque = {value},
				};
				/* sleep until the word is written or 100 us pass */
				rte_power_monitor(&pmc,
						  rte_get_tsc_cycles() + rte_get_tsc_hz() / 10000);
			} else {
				/* the fallback on CPUs without WAITPKG: a pause loop */
				trd_node_progress(n);
			}
		}
		return 0;
	case TRD_WAIT_EQ:
		if (db->eq == NULL)
			return -EINVAL;
		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
			struct trd_event ev[16];
			uint64_t now = trd_time_us();
			int rc;

			if (now >= deadline)
				return -ETIMEDOUT;
			rc = trd_eq_wait(db->eq, ev, RTE_DIM(ev), deadline - now);
			if (rc < 0 && rc != -ETIMEDOUT)
				return rc;
		}
		return 0;
	}
	return -EINVAL;
}
