/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf's in-process tests: the two nodes, the helpers, the raw baselines and the
 * measured loops, shared by main.c (options, the test table), raw.c, engine.c, msg.c and
 * output.c. */
#ifndef TRD_PERF_INPROC_H
#define TRD_PERF_INPROC_H

#include <stdbool.h>
#include <stdint.h>

#include <toroid/coll.h>
#include <toroid/msg.h>
#include <toroid/toroid.h>

#include "perf_pvt.h"

/* A wait fails after this long without progress (--timeout); a run may last any time. */
#define PERF_TIMEOUT_US perf_opt.timeout_us

struct perf_ctx {
	struct trd_net *net;
	struct trd_node *a, *b;
	struct trd_coord ca, cb;
	uint8_t *abuf, *bbuf; /* source/target memory on each side */
	size_t buflen;
	struct trd_mr *amr, *bmr;
	uint64_t aoff, boff; /* how a peer names abuf, bbuf: 0, or their address (--va) */
	struct trd_mr *adb;  /* doorbell page of a */
	uint64_t *adb_page;
	uint16_t actr, bctr;
	unsigned int worker;     /* engine lcore or RTE_MAX_LCORE */
	unsigned int workers[2]; /* --cores: the engine lcores (workers[0] == worker) */
	unsigned int n_workers;
	bool launched;
};

extern struct perf_ctx px;
/* Latency loops: iterations completed in the current call (an interrupted run reports them). */
extern uint64_t lat_done;

double tsc_us(uint64_t cycles);
bool expired(uint64_t deadline);
uint64_t deadline_in(uint64_t us);
void progress(void);
int wait_counter(struct trd_node *n, uint16_t c);
void engine_start(void);
void engine_stop(void);
void baseline_rate(struct perf_result *r, uint32_t frame, uint64_t n);
void baseline_lat(struct perf_result *r, uint32_t frame, uint64_t n, double scale);
int stream(struct perf_result *r, bool fifo, uint64_t n);
int get_stream(struct perf_result *r, uint64_t n);
int pingpong(struct perf_result *r, uint64_t n, uint64_t *s);
int fifo_pingpong(struct perf_result *r, uint64_t n, uint64_t *s);
int reflect_loop(struct perf_result *r, uint64_t n, uint64_t *s);
int get_loop(struct perf_result *r, uint64_t n, uint64_t *s);
int fence_loop(struct perf_result *r, uint64_t n, uint64_t *s);
int atomic_loop(struct perf_result *r, uint64_t n, uint64_t *s);
int allreduce_loop(struct perf_result *r, uint64_t n, uint64_t *s);
int barrier_loop(struct perf_result *r, uint64_t n, uint64_t *s);
/* What allreduce_loop() and barrier_loop() time (msg.c): the software collective or the
 * engines' on 2x2x2 (8 nodes) or 4x4x4 (64), or one put over one link of the 2x2x2 net (the
 * allreduce's bandwidth measure; barrier_loop() has none) */
enum perf_coll_variant {
	PERF_COLL_SOFT,
	PERF_COLL_ENG,
	PERF_COLL_SOFT64,
	PERF_COLL_ENG64,
	PERF_COLL_LINK,
};
extern unsigned int perf_ar_variant;

#endif
