/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node the receive-path fuzzer feeds, shared with the seed generator so that both see
 * the same region keys, counters and sessions: node (0,0,0) of a 2x2x1 torus with links
 * towards (1,0,0) and (0,1,0), three regions inside one arena of guard pages, counters and
 * an event queue.
 */
#ifndef TRD_FUZZ_NODE_H
#define TRD_FUZZ_NODE_H

#include <stdint.h>

#include <toroid/toroid.h>

#define FZ_PAGE 4096u
/* the arena: guard | rw region | guard | read-only region | guard | doorbell page | guard */
#define FZ_RW_OFF (1 * FZ_PAGE)
#define FZ_RW_LEN (4 * FZ_PAGE)
#define FZ_RO_OFF (6 * FZ_PAGE)
#define FZ_RO_LEN (1 * FZ_PAGE)
#define FZ_DB_OFF (8 * FZ_PAGE)
#define FZ_DB_LEN (1 * FZ_PAGE)
#define FZ_ARENA  (10 * FZ_PAGE)

#define FZ_N_CTR          3 /* counters allocated (ids 1..3) of FZ_CONF_COUNTERS */
#define FZ_CONF_COUNTERS  8
#define FZ_CONF_REC_FIFOS 4
#define FZ_CONF_REC_SIZE  8
#define FZ_CONF_INJ_FIFOS 2
#define FZ_CONF_WINDOW    16
#define FZ_CONF_REASM     8
/* rte_srand() seed of the regions' keys; the session secret set after every reset, from
 * which the node's sessions (epoch, first sequence number) and cookies follow */
#define FZ_KEY_SEED 0x70701dULL
#define FZ_SK0      0xe90c4ULL
#define FZ_SK1      0x5e55107ULL
/* the peer ranks whose sessions the seeds use: (1,0,0) is rank 1 */
#define FZ_PEER_RANK 1

struct fz {
	struct trd_node *n;
	struct trd_link *far[2]; /* far ends of the node's links, drained after every step */
	uint8_t *arena;
	uint8_t *snap; /* what guards and the read-only region must hold */
	struct trd_mr *rw, *ro, *db;
	uint16_t ctr[FZ_N_CTR];
	struct rte_mempool *pool;
	unsigned int pool_full; /* pool count with the node idle */
};

/* Start EAL (no hugepages, one lcore). Returns 0 or -1. */
int fz_eal_init(const char *prog);
/* Make the node; 0 or -1 with a message on stderr. */
int fz_setup(struct fz *z);
/* Back to the idle state every input starts from (sessions with known epochs). */
void fz_reset(struct fz *z);
/* Deliver one frame (seg: 0 contiguous, else segment size) and drain the far ends. */
void fz_deliver(struct fz *z, const uint8_t *frame, uint32_t len, uint32_t seg);
/* After an input: finish the work, drain, check the invariants (abort() on a violation),
 * reset. */
void fz_finish(struct fz *z);
/* The session epoch the node uses towards rank @p rank right after fz_reset(). */
uint16_t fz_tx_epoch(uint32_t rank);
/* Its first sequence number. */
uint32_t fz_tx_isn(uint32_t rank);
/* The cookie the node challenges rank @p rank with, after @p gen sessions of it. */
uint64_t fz_cookie(uint32_t rank, uint32_t gen);

#endif
