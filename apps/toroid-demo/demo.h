/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo internals shared by its files: main.c (the run), args.c (command line), setup.c
 * (nodes, links, regions), ops.c (the three operations, one transfer), wait.c, verify.c,
 * stats.c, report.c, util.c (random data, formatting). */
#ifndef TRD_DEMO_H
#define TRD_DEMO_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "../common/app_common.h"
#include "../common/latency.h"

#include <toroid/telemetry.h>
#include <toroid/testing.h> /* --impair */
#include <toroid/toroid.h>

#define DEMO_EXIT_FAIL  1 /* a transfer failed, or set-up failed */
#define DEMO_EXIT_USAGE 2 /* the command line is wrong */

#define DEMO_DIM             2 /* the torus is DEMO_DIM^3 */
#define DEMO_MAX_NODES       (DEMO_DIM * DEMO_DIM * DEMO_DIM)
#define DEMO_MAX_SIZES       32
#define DEMO_SIZE_MAX        (64u << 20) /* largest --sizes entry */
#define DEMO_GUARD           64          /* bytes checked on each side of a written range */
#define DEMO_OFF_SPAN        4096        /* random offsets fall in [GUARD, GUARD + SPAN) */
#define DEMO_SLICE_US        100000      /* waits are cut in slices to notice SIGINT */
#define DEMO_SHORT_WAIT_US   100000      /* a second wait after a failed one */
#define DEMO_SETTLE_QUIET_US 20000       /* after a failure: idle this long ... */
#define DEMO_SETTLE_MAX_US   2000000     /* ... or give up after this */
#define DEMO_REC_FIFO        0           /* reception FIFO of FIFO messages */
#define DEMO_INJ_FIFO        0           /* injection FIFO the demo posts into */
#define DEMO_RGET_FIFO       1           /* target injection FIFO of remote-get descriptors */
#define DEMO_REFL_INJ_FIFO   2           /* injection FIFO of puts with reflection: its own */
#define DEMO_CPL_REC_FIFO    1           /* reception FIFO of FIFO-kind completions */
#define DEMO_TITLE_W         29          /* width of the operation column */
#define DEMO_MAX_LAT         (DEMO_MAX_NODES * DEMO_MAX_NODES) /* latencies per (operation, size) */
/* (puts with reflection have an injection FIFO of their own so that its packet counter counts
 * nothing else) */

extern const char demo_default_sizes[];
extern const char demo_default_rsizes[]; /* put+reflect rows */

/* ---- operations ---- */

/* Table rows. The four put+reflect rows share the --ops key "reflect"; each can also be picked
 * by its name. */
enum demo_op {
	DEMO_OP_PUT = 0,
	DEMO_OP_FIFO,
	DEMO_OP_RGET,
	DEMO_OP_RL_FIFO, /* put + reflection completion, local mode, FIFO kind */
	DEMO_OP_RL_DB,   /* ... local mode, doorbell kind */
	DEMO_OP_RD_FIFO, /* ... delivery mode, FIFO kind */
	DEMO_OP_RD_DB,   /* ... delivery mode, doorbell kind */
	DEMO_OP_COUNT
};

struct demo_op_info {
	const char *key;   /* --ops name */
	const char *name;  /* FAIL lines, per-size table; also accepted by --ops */
	const char *title; /* table row */
	bool reflect;      /* a put with reflection completion of this kind and mode */
	enum trd_cpl_kind kind;
	enum trd_cpl_mode mode;
};
extern const struct demo_op_info demo_ops[DEMO_OP_COUNT];
_Static_assert(RTE_DIM(demo_ops) == DEMO_OP_COUNT, "one entry per operation");

/* ---- options ---- */

/* A list of transfer sizes. */
struct demo_sizes {
	uint32_t v[DEMO_MAX_SIZES];
	unsigned int n;
};

struct demo_opts {
	bool ops[DEMO_OP_COUNT];
	struct demo_sizes sizes;  /* put, fifo, rget */
	struct demo_sizes rsizes; /* the put+reflect rows */
	enum trd_net_links links;
	uint64_t seed;
	uint64_t timeout_us;
	enum trd_wait_how db_wait; /* how doorbell completions are waited for */
	bool verbose;
	const char *capture; /* pcap file of every frame the nodes send and receive */
	unsigned int snaplen;
	bool impair; /* --impair given */
	struct trd_impair_conf imp;
};

/* ---- state ---- */

/* One node and what the demo set up on it. */
struct demo_node {
	struct trd_node *node;
	struct trd_coord coord;
	unsigned int rank;
	struct trd_inj_fifo *inj;  /* where this node, as origin, posts */
	struct trd_rec_fifo *rec;  /* where FIFO messages to this node land */
	uint8_t *wbuf;             /* put target, and remote-get destination */
	uint8_t *rbuf;             /* remote-get source */
	struct trd_mr *wmr;        /* wbuf, TRD_ACCESS_REMOTE_WRITE */
	struct trd_mr *rmr;        /* rbuf, TRD_ACCESS_REMOTE_READ */
	uint16_t ctr_inj;          /* injection counter of what this node posts */
	uint16_t ctr_rec;          /* reception counter: puts to it, reads by it */
	struct trd_inj_fifo *rinj; /* where this node posts puts with reflection */
	struct trd_rec_fifo *cpl;  /* where its FIFO-kind completions land */
	uint64_t *db;              /* doorbell page: its doorbell-kind completions */
	struct trd_mr *dbmr;       /* db, registered as a doorbell signalling eq */
	struct trd_eq *eq;         /* event queue of the doorbell page, owned by the demo thread */
};

/* Results of one (operation, size). */
struct demo_cell {
	uint64_t transfers;
	uint64_t passed;
	uint64_t failed;
	uint64_t bytes;
	uint64_t packets;   /* TX_PUT + TX_FIFO + TX_RGET, all nodes */
	uint64_t fwd;       /* FWD_PKTS, all nodes */
	uint64_t time_us;   /* from posting to the last wait's end */
	unsigned int n_lat; /* put+reflect: completions timed, in demo.lat */
};

struct demo {
	struct demo_opts opt;
	struct trd_net *net;
	unsigned int n_nodes;
	struct demo_node nodes[DEMO_MAX_NODES];
	size_t buf_len;
	uint8_t *src;  /* the origin's source buffer (one transfer at a time) */
	uint8_t *kept; /* put+reflect: the bytes posted, while the source is overwritten */
	bool served;   /* a worker lcore serves the nodes */
	unsigned int worker;
	struct demo_cell cell[DEMO_OP_COUNT][DEMO_MAX_SIZES];
	uint8_t pair_ran[DEMO_OP_COUNT][DEMO_MAX_NODES][DEMO_MAX_NODES];
	uint8_t pair_bad[DEMO_OP_COUNT][DEMO_MAX_NODES][DEMO_MAX_NODES];
	struct trd_node_stats stats0[DEMO_MAX_NODES]; /* at the start of the run */
	uint64_t passed, failed, planned;
	/* put+reflect: TSC cycles from posting to the completion, per (row, size) */
	uint64_t lat[DEMO_OP_COUNT][DEMO_MAX_SIZES][DEMO_MAX_LAT];
	unsigned int payload; /* bytes per data packet (all links have the same MTU) */
	size_t db_len;        /* doorbell page size */
	uint64_t db_seq;      /* doorbell words are used in turn */
};

/* One transfer in progress. */
struct demo_xfer {
	struct demo *dm;
	enum demo_op op;
	uint32_t len;
	struct demo_node *org;
	struct demo_node *tgt;
	uint64_t rng;
	bool failed;
	uint64_t t_post;   /* when the descriptor was posted */
	uint64_t t_done;   /* when the last wait ended */
	bool cpl;          /* put+reflect: the completion arrived ... */
	uint64_t tsc_post; /* ... this long (TSC cycles) ... */
	uint64_t tsc_cpl;  /* ... after posting */
};

enum demo_result { DEMO_PASS, DEMO_FAIL, DEMO_INTR };

extern volatile sig_atomic_t demo_signal;

uint64_t demo_mix(uint64_t x);
uint64_t demo_rand(uint64_t *s);
void demo_fill(uint8_t *p, size_t len, uint64_t *s);
size_t demo_offset(uint64_t *s);
const char *demo_size_str(uint32_t v, char *buf, size_t len);
const char *demo_coord_str(struct trd_coord c, char *buf, size_t len);
void demo_xfail(struct demo_xfer *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void demo_parse_args(struct demo_opts *o, int argc, char **argv, const char *default_lcores);
int demo_rec_fifo_wait(struct trd_rec_fifo *rf, struct trd_msg **msg, uint64_t timeout_us);
int demo_inject(struct demo_node *dn, const struct trd_desc *d, uint64_t timeout_us);
int demo_doorbell_wait(struct trd_mr *db, uint64_t offset, uint64_t value, enum trd_wait_how how,
		       uint64_t timeout_us);
int demo_inject_reflect(struct demo_node *dn, const struct trd_desc *d,
			const struct trd_cpl_spec *spec, uint64_t timeout_us, uint64_t *tsc);
int demo_xwait_counter(struct demo_xfer *x, struct demo_node *dn, uint16_t id, const char *what);
bool demo_check_bytes(struct demo_xfer *x, const char *what, const uint8_t *got,
		      const uint8_t *want, size_t len);
/* Guard bytes around [off, off + len) of a destination buffer. */
struct demo_guard {
	uint8_t before[DEMO_GUARD];
	uint8_t after[DEMO_GUARD];
};

void demo_dst_prepare(struct demo_xfer *x, uint8_t *buf, size_t off, const uint8_t *want,
		      struct demo_guard *g);
void demo_dst_check(struct demo_xfer *x, const char *what, const uint8_t *buf, size_t off,
		    const uint8_t *want, const struct demo_guard *g);
const struct demo_sizes *demo_op_sizes(const struct demo *dm, unsigned int op);
enum demo_result demo_transfer(struct demo *dm, enum demo_op op, unsigned int si,
			       struct demo_node *o, struct demo_node *t);
int demo_snapshot(struct demo *dm, struct trd_node_stats *st);
uint64_t demo_stat_sum(const struct demo *dm, const struct trd_node_stats *a,
		       const struct trd_node_stats *b, enum trd_node_stat s);
void demo_print_node_delta(const char *label, const struct demo_node *dn,
			   const struct trd_node_stats *a, const struct trd_node_stats *b);
void demo_settle(struct demo *dm);
int demo_setup_node(struct demo *dm, unsigned int rank);
void demo_teardown(struct demo *dm);
void demo_print_table(struct demo *dm);
void demo_print_latency(struct demo *dm);
void demo_print_sizes(struct demo *dm);
void demo_print_nodes(struct demo *dm);
void demo_print_header(struct demo *dm);
void demo_print_drops(struct demo *dm);

#endif
