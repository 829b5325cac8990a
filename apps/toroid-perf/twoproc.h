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

/* ---- allreduce_lat (twoproc_comb.c) ---- */

int tp_comb_post(struct trd_node *node, uint8_t *mem, uint16_t ctr, uint32_t size);
void tp_comb_ratio(const char *const names[], unsigned int n_names,
		   struct perf_result res[][PERF_MAX_SIZES]);

/* ---- over IPv4/UDP, --ip (twoproc_ip.c) ---- */

/* The raw phase's datagrams: Ethernet, IPv4 without options, UDP, then the magic, the
 * command and its argument. */
#define RAW_UDP_OFF (RTE_ETHER_HDR_LEN + 20u + 8u)
#define RAW_MAGIC   "tprf"
#define RAW_IP_LEN  (RAW_UDP_OFF + 4u + 1u + 8u)

/* The other side's address and UDP port (the client's: --peer-ip and --udp-port; the
 * server's: its client's, from its hello), host byte order. */
extern uint32_t raw_peer_ip;
extern uint16_t raw_peer_port;

static inline bool
raw_over_ip(void)
{
	return perf_opt.ip != 0;
}

/* Make @p ip, @p port the other side (its next hop is asked by ARP before the next frame). */
void raw_set_peer(uint32_t ip, uint16_t port);
/* Whether the next hop to the other side answered ARP. */
bool raw_ip_resolved(void);
/* Ask the next hop's MAC until it answers, @p timeout_us at most, answering ARP for this
 * side's address meanwhile: 0, -EINTR or -EHOSTUNREACH. */
int raw_resolve(uint64_t timeout_us);
/* The server got a hello from @p ip, @p port: true when that is a new client (the other side
 * from now on, its next hop asked for 1 s at most), false when it is the one it has. */
bool raw_ip_new_client(uint32_t ip, uint16_t port);
/* Write the raw datagram of @p cmd, @p arg to the other side in @p p, @p len bytes (at most
 * 1514): its length. */
uint32_t raw_ip_frame(uint8_t *p, uint8_t cmd, uint64_t arg, uint32_t len);
/* The command of the received frame @p m (its argument in *arg, its sender's address and UDP
 * port in *ip, *port): a datagram to this side's address and port with the magic, or 0; an ARP
 * frame is taken in (the next hop's MAC learnt, a request for this side's address answered). */
int raw_ip_parse(const struct rte_mbuf *m, uint64_t *arg, uint32_t *ip, uint16_t *port);
/* The received datagram at @p p turned into the answer @p cmd to its sender. */
void raw_ip_answer(uint8_t *p, uint8_t cmd);
/* Give @p node its address and @p peer the other side's (the engine asks ARP itself). */
int tp_node_set_ip(struct trd_node *node, struct trd_coord peer);
/* Stderr lines: waiting for the other side on DPDK port @p port (@p label); the client found
 * no server (@p rc of raw_ask()). */
void tp_ip_waiting(bool server, uint16_t port, const char *label);
void tp_ip_no_server(int rc);

struct rte_mbuf *raw_frame(uint8_t cmd, uint64_t arg, uint32_t len);
void raw_send(struct rte_mbuf *m);
int raw_recv(int want, uint64_t *arg, bool match, uint64_t deadline_us);
int raw_ask(uint8_t cmd, int want, uint64_t timeout_us);
uint64_t timed_end(uint64_t t0);
int raw_serve(void);
/* The frames and bytes the port received between @p e0 and @p e1, after @p who (twoproc_raw.c). */
struct rte_eth_stats;
void tp_port_received(const char *who, const struct rte_eth_stats *e0,
		      const struct rte_eth_stats *e1);
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
/* Interval line of a rate test: @p n messages posted so far at @p now (what @p link sent). */
void rate_interval(struct timing *tm, const struct perf_result *tmpl, uint64_t n, uint64_t now,
		   uint64_t pkts_per, uint32_t frame, const struct trd_link *link);
/* Interval line of a latency test: the samples s[iv_n0 .. n) taken in it. */
void lat_interval(struct timing *tm, const struct perf_result *tmpl, const uint64_t *s, uint64_t n,
		  uint64_t now, double scale, uint32_t frame);

#endif
