/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the tests of a process's messaging-unit objects (test_vni_mu.c, test_vni_mu_rma.c,
 * test_vni_mu_rfifo.c), with vni_test.h: their torus, and what a child does to its own ring
 * past the library.
 */
#ifndef TRD_VNI_MU_TEST_H
#define TRD_VNI_MU_TEST_H

#include <sched.h>
#include <stddef.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "vni_test.h" /* (WAIT_US) */

/* A 3x1x1 torus: both processes (1:0, 1:1) on node 0, or (mu_topo_two) one on node 0 and one
 * on node 1. */
static const char mu_topo_one[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				  "[node 0]\nprocs = 1:0, 1:1\nx+ = 0\nx- = 1\n"
				  "[node 1]\nx+ = 0\nx- = 1\n"
				  "[node 2]\nx+ = 0\nx- = 1\n";
static const char mu_topo_two[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				  "[node 0]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				  "[node 1]\nprocs = 1:1\nx+ = 0\nx- = 1\n"
				  "[node 2]\nx+ = 0\nx- = 1\n";

static inline struct trd_coord
coord_of(const uint8_t node[3])
{
	struct trd_coord c = {.x = node[0], .y = node[1], .z = node[2]};

	return c;
}

/* Post one descriptor into FIFO 0 of @p mi as is (past the library's own checks, which a
 * hostile process would not run), with @p slots continuation slots of @p data. 0 or -1. */
static inline int
raw_post(const struct trd_vni_mu_info *mi, const struct trd_desc *d, unsigned int slots,
	 const void *data)
{
	uint8_t buf[(TRD_RGET_MAX_DESCS + 2) * 64];

	if (slots > TRD_RGET_MAX_DESCS + 1)
		return -1;
	memcpy(buf, d, 64);
	buf[offsetof(struct trd_desc, n_slots)] = (uint8_t)slots;
	if (slots != 0)
		memcpy(buf + 64, data, slots * 64);
	return rte_ring_enqueue_bulk_elem(mi->fifos[0], buf, 64, 1 + slots, NULL) != 0 ? 0 : -1;
}

/* Wait until the engine has judged @p n descriptors of @p v in all. 0 or -1. */
static inline int
judged(struct trd_vni *v, uint64_t n)
{
	uint64_t deadline = trd_time_us() + WAIT_US;
	struct trd_vni_mu_info mi;

	do {
		if (trd_vni_mu_info(v, &mi) != 0)
			return -1;
		if (mi.descs + mi.bad_descs >= n)
			return 0;
		sched_yield();
	} while (trd_time_us() < deadline);
	return -1;
}

#endif /* TRD_VNI_MU_TEST_H */
