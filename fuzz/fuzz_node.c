/* SPDX-License-Identifier: BSD-3-Clause */
/* The fuzzed node: set-up, one input's delivery, the invariants checked after each input. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mempool.h>
#include <rte_random.h>

#include <toroid/testing.h>

#include "fuzz_node.h"

int
fz_eal_init(const char *prog)
{
	const char *args[] = {prog,  "--no-huge", "--no-pci", "--no-shconf", "-m",
			      "256", "-l",        "0",        "--log-level", "*:error"};
	char *argv[RTE_DIM(args) + 1];

	for (unsigned int i = 0; i < RTE_DIM(args); i++)
		argv[i] = (char *)(uintptr_t)args[i];
	argv[RTE_DIM(args)] = NULL;
	if (rte_eal_init((int)RTE_DIM(args), argv) < 0) {
		fprintf(stderr, "fuzz: cannot start EAL\n");
		return -1;
	}
	return 0;
}

/* A recognisable pattern, different in every page, for guards and the read-only region. */
static void
pattern(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

static void
drain_far(struct fz *z)
{
	for (unsigned int i = 0; i < RTE_DIM(z->far); i++)
		trd_link_drain(z->far[i]);
}

int
fz_setup(struct fz *z)
{
	struct trd_node_conf c = {0};
	struct trd_link *a;
	struct trd_eq *eq;
	static const enum trd_dir dirs[2] = {TRD_DIR_XP, TRD_DIR_YP};

	memset(z, 0, sizeof(*z));
	trd_torus_init(&c.torus, 2, 2, 1);
	c.name = "fuzz";
	c.n_inj_fifos = FZ_CONF_INJ_FIFOS;
	c.inj_fifo_size = 64;
	c.n_rec_fifos = FZ_CONF_REC_FIFOS;
	c.rec_fifo_size = FZ_CONF_REC_SIZE;
	c.n_counters = FZ_CONF_COUNTERS;
	c.n_regions = 8;
	c.n_reasm = FZ_CONF_REASM;
	c.n_eqs = 1;
	c.rel_window = FZ_CONF_WINDOW;
	c.payload_crc = true;
	z->n = trd_node_create(&c);
	if (z->n == NULL) {
		fprintf(stderr, "fuzz: node: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	for (unsigned int i = 0; i < 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "fz%u", i);
		if (trd_link_ring_pair(name, 0, 0, &a, &z->far[i]) != 0 ||
		    trd_node_add_link(z->n, a, dirs[i]) != 0) {
			fprintf(stderr, "fuzz: links\n");
			return -1;
		}
	}
	z->arena = aligned_alloc(FZ_PAGE, FZ_ARENA);
	z->snap = malloc(FZ_ARENA);
	if (z->arena == NULL || z->snap == NULL)
		return -1;
	pattern(z->arena, FZ_ARENA, 0x5a);
	memset(z->arena + FZ_RW_OFF, 0, FZ_RW_LEN);
	memset(z->arena + FZ_DB_OFF, 0, FZ_DB_LEN);
	memcpy(z->snap, z->arena, FZ_ARENA);
	eq = trd_node_eq(z->n, 0);
	/* fixed keys, so that the seed generator can address the regions */
	rte_srand(FZ_KEY_SEED);
	z->rw = trd_mr_register(z->n, z->arena + FZ_RW_OFF, FZ_RW_LEN, TRD_ACCESS_ALL);
	z->ro = trd_mr_register(z->n, z->arena + FZ_RO_OFF, FZ_RO_LEN, TRD_ACCESS_REMOTE_READ);
	z->db = trd_doorbell_register(z->n, z->arena + FZ_DB_OFF, FZ_DB_LEN, eq);
	if (z->rw == NULL || z->ro == NULL || z->db == NULL || eq == NULL ||
	    trd_rec_fifo_set_eq(trd_rec_fifo(z->n, 1), eq) != 0) {
		fprintf(stderr, "fuzz: regions\n");
		return -1;
	}
	for (unsigned int i = 0; i < FZ_N_CTR; i++)
		if (trd_counter_alloc(z->n, &z->ctr[i]) != 0 ||
		    trd_counter_set(z->n, z->ctr[i], 1 << 30) != 0)
			return -1;
	z->pool = trd_default_pool(0);
	fz_reset(z);
	z->pool_full = rte_mempool_avail_count(z->pool);
	return 0;
}

void
fz_reset(struct fz *z)
{
	/* unsequenced frames reach the receive checks as on an unreliable node: a reliable one
	 * would drop them all as unsequenced before any check */
	if (trd_node_reset(z->n) != 0 || trd_node_set_session_secret(z->n, FZ_SK0, FZ_SK1) != 0 ||
	    trd_node_trust_unsequenced(z->n, 1) != 0) {
		fprintf(stderr, "fuzz: reset failed\n");
		abort();
	}
	drain_far(z);
}

uint16_t
fz_tx_epoch(uint32_t rank)
{
	uint16_t e;
	uint32_t isn;

	trd_session_start(FZ_SK0, FZ_SK1, rank, &e, &isn);
	return e;
}

uint32_t
fz_tx_isn(uint32_t rank)
{
	uint16_t e;
	uint32_t isn;

	trd_session_start(FZ_SK0, FZ_SK1, rank, &e, &isn);
	return isn;
}

uint64_t
fz_cookie(uint32_t rank, uint32_t gen)
{
	return trd_session_cookie(FZ_SK0, FZ_SK1, rank, gen);
}

void
fz_deliver(struct fz *z, const uint8_t *frame, uint32_t len, uint32_t seg)
{
	int rc = trd_node_rx_frame(z->n, frame, len, seg);

	if (rc != 0 && rc != -ENOBUFS) {
		fprintf(stderr, "fuzz: trd_node_rx_frame: %d\n", rc);
		abort();
	}
	drain_far(z);
}

static void
check_arena(const struct fz *z)
{
	static const struct {
		uint32_t off, len;
		const char *what;
	} keep[] = {
		{0, FZ_RW_OFF, "guard before the rw region"},
		{FZ_RW_OFF + FZ_RW_LEN, FZ_RO_OFF - FZ_RW_OFF - FZ_RW_LEN,
		 "guard after the rw region"},
		{FZ_RO_OFF, FZ_RO_LEN, "read-only region"},
		{FZ_RO_OFF + FZ_RO_LEN, FZ_DB_OFF - FZ_RO_OFF - FZ_RO_LEN,
		 "guard before the doorbell"},
		{FZ_DB_OFF + FZ_DB_LEN, FZ_ARENA - FZ_DB_OFF - FZ_DB_LEN,
		 "guard after the doorbell"},
	};

	for (unsigned int i = 0; i < RTE_DIM(keep); i++)
		if (memcmp(z->arena + keep[i].off, z->snap + keep[i].off, keep[i].len) != 0) {
			for (uint32_t b = keep[i].off; b < keep[i].off + keep[i].len; b++)
				if (z->arena[b] != z->snap[b]) {
					fprintf(stderr, "fuzz: %s changed at arena offset %u\n",
						keep[i].what, b);
					break;
				}
			abort();
		}
}

void
fz_finish(struct fz *z)
{
	unsigned int avail;

	/* the work the input started (remote gets, replies, forwards) */
	for (int i = 0; i < 64; i++) {
		int moved = trd_node_poll(z->n);

		drain_far(z);
		if (moved <= 0)
			break;
	}
	trd_node_drain(z->n);
	check_arena(z);
	fz_reset(z);
	avail = rte_mempool_avail_count(z->pool);
	if (avail != z->pool_full) {
		fprintf(stderr, "fuzz: mbuf leak: pool has %u, %u when idle\n", avail,
			z->pool_full);
		abort();
	}
}
