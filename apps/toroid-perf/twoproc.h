/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf between two processes: the raw phase (twoproc_raw.c) shared with the engine
 * phase (twoproc.c): the frames of EtherType 0x88B6 that find the server and measure plain
 * DPDK on the same port. */
#ifndef TRD_PERF_TWOPROC_H
#define TRD_PERF_TWOPROC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"

#define RAW_ETHERTYPE 0x88B6
#define WAIT_US       20000000ULL

enum raw_cmd {
	RAW_ECHO = 1,
	RAW_SINK,
	RAW_SINK_END,
	RAW_COUNT,
	RAW_ENGINE,
	RAW_ENGINE_OK,
	RAW_HELLO,
	RAW_HELLO_OK,
	RAW_ECHO_OK,
	RAW_DONE, /* the client is done: the server waits for the next one (or ends) */
	RAW_DONE_OK,
};

/* The DPDK port of this process. */
extern uint16_t tp_port;

struct rte_mbuf *raw_frame(uint8_t cmd, uint64_t arg, uint32_t len);
void raw_send(struct rte_mbuf *m);
int raw_recv(int want, uint64_t *arg, bool match, uint64_t deadline_us);
int raw_ask(uint8_t cmd, int want, uint64_t timeout_us);
uint64_t timed_end(uint64_t t0);
int raw_serve(void);
int raw_pingpong_test(uint32_t frame, uint64_t n, struct perf_result *r);
int raw_stream_test(uint32_t frame, uint64_t n, double *mpps);
/* The raw baselines of the measured tests @p names (results @p res), on the same port after
 * the engine's run: rate tests with frames of the size the engine's were on average. */
void client_baselines(const char *const *names, unsigned int n_names,
		      struct perf_result (*res)[PERF_MAX_SIZES]);

/* ---- timed runs: --duration, --interval, --rate (twoproc_timing.c) ---- */

struct timing {
	uint64_t hz, t0;           /* the measured phase starts at t0 (TSC) */
	uint64_t end;              /* --duration: its end; 0: by count */
	uint64_t iv_len;           /* --interval in cycles; 0: none */
	uint64_t iv_t0;            /* the current interval's start */
	uint64_t iv_n0;            /* messages (or samples) before it */
	double mps;                /* --rate in messages per second; 0: unpaced */
	uint64_t pace_t0;          /* the pace counts from here ... */
	uint64_t pace_n0;          /* ... with this many messages sent before */
	uint64_t burst;            /* most messages a late sender may send at once to catch up */
	bool printed;              /* an interval line was printed */
	struct perf_tx tx0, iv_tx; /* what the port had sent at t0, at iv_t0 */
};

/* Start the measured phase now, paced at @p mps messages per second (0: unpaced); what the
 * port (or @p link) has sent so far is its start. */
void timing_start(struct timing *tm, double mps, const struct trd_link *link);
/* Messages the pace allows by @p now, @p sent of them sent (the first at once);
 * UINT64_MAX unpaced. */
uint64_t timing_allowed(struct timing *tm, uint64_t now, uint64_t sent);
/* Seconds from the start to @p tsc. */
double timing_s(const struct timing *tm, uint64_t tsc);
/* A separator between the interval lines and the summary, as iperf3 prints */
void timing_summary(const struct timing *tm);
/* L1 rate against the port's speed */
void line_pct(struct perf_result *r);

#endif
