/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf internals shared by the in-process tests (main.c) and the two-process ones
 * (twoproc.c). */
#ifndef TRD_PERF_PVT_H
#define TRD_PERF_PVT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

#include <toroid/toroid.h>

#define PERF_MAX_SIZES   32
#define PERF_L1_OVERHEAD 24 /* preamble 8 + IFG 12 + FCS 4 per frame */

enum perf_kind { K_RATE, K_LAT };

/* An IPv4 address in host byte order, printed A.B.C.D */
#define IPV4_FMT      "%u.%u.%u.%u"
#define IPV4_ARGS(ip) (ip) >> 24, ((ip) >> 16) & 0xffu, ((ip) >> 8) & 0xffu, (ip)&0xffu

struct perf_opts {
	const char *test;
	uint32_t sizes[PERF_MAX_SIZES];
	unsigned int n_sizes;
	uint64_t iters;
	unsigned int window;
	bool baseline;
	bool json;
	bool inline_poll;
	bool va;   /* --va: regions named by virtual address */
	bool copy; /* --copy: streamed puts and sends with TRD_DF_COPY (never zero-copy) */
	enum trd_net_links links;
	enum trd_cpl_mode mode;
	const char *hgrm;
	const char *links_label; /* overrides the link kind in the output (two processes) */
	unsigned int torus[3];   /* --torus */
	const char *capture;     /* --capture */
	uint16_t ports[2];       /* --ports */
	unsigned int snaplen;
	uint64_t timeout_us; /* --timeout: a wait without progress fails after this */
	double duration_s;   /* --duration: each test runs this long instead of -n (0: -n) */
	double interval_s;   /* --interval: a report line per interval (0: none) */
	double rate;         /* --rate: messages (or bits, rate_bits) per second; 0: unpaced */
	bool rate_bits;      /* --rate given in bit/s at L2 (frame + FCS) */
	unsigned int cores;  /* --cores: engine lcores serving the nodes (0: the default) */
	unsigned int shares; /* --shares: the put_shares run alone (shares.c), 0: not */
	bool one_off;        /* --one-off: the server ends after one client */
	bool reverse;        /* -R: rate tests from the server to the client */
	bool bidir;          /* --bidir: rate tests both ways at once */
	/* --raw-frame: the rate baseline's frame size, its ratio messages over raw frames per
	 * second (0: frames of the engine's average size, the ratio in Gbit/s at L2) */
	uint32_t raw_frame;
	/* --ip: --server/--client over IPv4/UDP (addresses in host byte order; ip 0: plain
	 * frames of our EtherTypes on one Ethernet segment) */
	uint32_t ip, gateway; /* --ip A.B.C.D/N, --gateway */
	uint8_t prefix;       /* N of --ip (32 without /N) */
	uint32_t peer_ip;     /* --peer-ip: the client's server */
	uint16_t udp_port;    /* --udp-port: this side's (and the client's server's) */
};

struct perf_result {
	const char *test;
	uint32_t size;
	enum perf_kind kind;
	/* rate */
	double mpps, gbps_l2, gbps_l1, mbps; /* mpps: millions of messages per second */
	double mfps;                         /* millions of frames per second the port sent */
	uint64_t frames; /* frames the port (or link) sent in the measured time, 0: not counted */
	uint64_t bytes;  /* their bytes, without FCS */
	const char *counted; /* where frames and bytes were read: "port", "port+link", "link" */
	double cpu_pct;      /* process CPU time (user + system) over the measured time, % */
	double line_pct;
	/* latency, microseconds */
	double min, avg, p50, p99, p999, max;
	uint64_t n;
	/* baseline */
	bool has_base;
	double base;      /* raw Mpps (frames) or raw p50 us, by kind */
	double base_gbps; /* raw Gbit/s at L2 */
	bool by_gbps;     /* bandwidth test: the ratio compares Gbit/s */
	bool interrupted; /* SIGINT/SIGTERM: the figures are of what was measured before */
	double seconds;   /* the measured time (0: unknown) */
	/* --interval: this result covers [iv_start, iv_end] seconds of the run */
	bool is_interval;
	double iv_start, iv_end;
	/* --rate: asked and achieved, in the unit asked (messages or bits per second) */
	bool has_rate;
	double rate_asked, rate_achieved;
	bool reverse;      /* -R: measured by the server, sending to the client */
	const char *bidir; /* --bidir: "tx" (client to server), "rx" (server to client), "sum" */
};

extern struct perf_opts perf_opt;
extern volatile sig_atomic_t perf_stop; /* the signal that stops the run, or 0 */

/* shares.c: --shares N, the 64 B put rate of split nodes on 1 and N lcores */
int perf_shares(unsigned int n_sh, uint64_t iters);
/* shares_memif.c: --memif server|client --shares N, put_shares between two processes */
int perf_shares_memif(bool server, const char *sock, unsigned int n_sh, uint64_t iters);
/* Latency statistics of @p n samples (cycles), scaled (0.5: a round trip as one way). */
void lat_stats(struct perf_result *r, uint64_t *s, uint64_t n, double scale);
/* What a port (or a link without one) has sent so far: frames and bytes, from the ethdev's
 * counters (rte_eth_stats_get: opackets, obytes) of @p port, or from the link's own counters
 * where the port counts no bytes (net_ring) or there is no port (@p port < 0). */
struct perf_tx {
	uint64_t frames, bytes;
	bool port_frames, port_bytes; /* read from the port (else from the link) */
	uint64_t cpu_us;              /* the process's user + system CPU time */
	uint64_t tsc;                 /* when */
};
void perf_tx_read(int port, const struct trd_link *link, struct perf_tx *t);
/* Frames/s, Gbit/s (L2, L1) of @p r from what was sent between @p a and @p b; message rates
 * stay as rate_result() set them. Nothing if nothing was sent. */
void perf_tx_rates(struct perf_result *r, const struct perf_tx *a, const struct perf_tx *b);

/* Rates of @p msgs messages in @p pkts frames of @p frame bytes in @p cyc cycles. */
void rate_result(struct perf_result *r, uint64_t msgs, uint64_t pkts, uint32_t frame, uint64_t cyc);
void perf_print_header(enum perf_kind kind);
void print_result(const struct perf_result *r);
/* @p a and @p b added (--bidir): counts and rates summed, the longer of the two times */
void perf_result_sum(struct perf_result *sum, const struct perf_result *a,
		     const struct perf_result *b);
/* engine / raw of a result with a baseline */
double perf_ratio(const struct perf_result *r);

/* The --rate asked in messages per second, for messages of @p pkts frames of @p frame bytes. */
double perf_rate_mps(uint32_t frame, uint64_t pkts);
/* Fill the --rate fields of @p r (n messages in r->seconds; achieved in the unit asked). */
void perf_rate_fill(struct perf_result *r, uint32_t frame, uint64_t pkts);

/* Two processes (twoproc.c): a server and a client node on one DPDK port each. With
 * @p memif_socket the port is a net_memif vdev made here (--memif), otherwise it is DPDK
 * port @p port (given to EAL with -a PCI or --vdev). Runs the selected tests (client) or
 * answers them (server); returns the number of failures. */
int perf_twoproc(bool server, const char *memif_socket, uint16_t port);
/* --ip, --peer-ip, --gateway (twoproc_ip.c): an IPv4 host address "A.B.C.D" of option @p opt
 * (with "/N", 1..32, into *prefix when @p prefix is not NULL), host byte order; a usage error
 * (exit 2) otherwise. */
uint32_t perf_parse_ipv4(const char *opt, const char *arg, uint8_t *prefix);
/* --ip and its companions with @p role ("server", "client" or NULL), @p memif (--memif), and
 * @p ip_opts (--peer-ip, --gateway or --udp-port given): a usage error when they do not fit. */
void perf_check_ip(const char *role, bool memif, bool ip_opts);

/* Whether -t names @p test (a comma-separated list, or all). */
bool perf_test_selected(const char *test);
/* The iterations of @p test without -n: the default its --help line gives. */
uint64_t perf_default_iters(const char *test);

/* A deadline without progress, not on the whole run: a loop that moves a sum (what it has
 * posted and seen so far) calls perf_stalled() once a round, which is true once the sum has
 * not moved for the span given to perf_stall_init().
 *
 *   struct perf_stall st;
 *
 *   perf_stall_init(&st, 10000000);
 *   while (...) {
 *           ...
 *           if (perf_stalled(&st, posted + got))
 *                   return -ETIMEDOUT;
 *   }
 */
struct perf_stall {
	uint64_t seen; /* the sum last seen */
	uint64_t span; /* timer cycles without progress allowed */
	uint64_t dl;   /* when the current span ends */
};

static inline void
perf_stall_init(struct perf_stall *s, uint64_t us)
{
	s->seen = 0;
	s->span = us * rte_get_timer_hz() / 1000000;
	s->dl = rte_get_timer_cycles() + s->span;
}

/* Whether @p sum has not moved for the span: a new value starts the span again. */
static inline bool
perf_stalled(struct perf_stall *s, uint64_t sum)
{
	if (sum != s->seen) {
		s->seen = sum;
		s->dl = rte_get_timer_cycles() + s->span;
		return false;
	}
	return rte_get_timer_cycles() > s->dl;
}

/* --help (usage.c), and the tests it lists (main.c) */
void perf_usage(const char *prog);
void perf_print_tests(void);

#endif
