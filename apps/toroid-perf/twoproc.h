/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf between two processes: the raw phase (twoproc_raw.c) shared with the engine
 * phase (twoproc.c): the frames of EtherType 0x88B6 that find the server and measure plain
 * DPDK on the same port. */
#ifndef TRD_PERF_TWOPROC_H
#define TRD_PERF_TWOPROC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

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

#endif
