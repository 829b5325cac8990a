/* SPDX-License-Identifier: BSD-3-Clause */
/* The messaging layer's private view: clients, contexts, work-queue entries. It uses only the
 * public engine API (include/toroid/toroid.h); it never reaches into engine/core. */
#ifndef TRD_MSG_PVT_H
#define TRD_MSG_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>
#include <rte_spinlock.h>

#include <toroid/msg.h>

extern int trd_msg_logtype;
#define MSG_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, trd_msg_logtype, "toroid msg: " fmt "\n", ##__VA_ARGS__)

/* Most outcomes taken from the outcome FIFO in one go. */
#define MSG_BURST 32

/* What a work-queue entry is. */
enum msg_kind { MSG_PUT = 0, MSG_SEND, MSG_READ, MSG_ATOMIC, MSG_FENCE };

/* Where an entry is in its life. */
enum msg_state {
	MSG_FREE = 0,
	MSG_QUEUED,   /* in the work queue, not started */
	MSG_INFLIGHT, /* handed to the engine, outcome pending */
};

/* Target rank of a fence that covers every node. */
#define MSG_ALL_NODES UINT32_MAX

/* The two completion events of an operation (struct trd_op_events), in op->ev. */
#define MSG_EV_LOCAL  0x01 /* a local event is still to run (lcb) */
#define MSG_EV_REMOTE 0x02 /* put, send: the outcome arrived first, kept in rstatus */

/* One operation. Its cookie towards the engine is (gen << 32 | index): an outcome for an older
 * use of the entry is recognised and ignored. */
struct msg_op {
	uint8_t kind;  /* enum msg_kind */
	uint8_t state; /* enum msg_state */
	uint16_t ctr;  /* MSG_READ: the counter that counts the bytes down; MSG_PUT, MSG_SEND
			* with a local event: the injection counter; 0 until started */
	uint32_t gen;
	uint32_t track;   /* engine tracking id, 0 until started */
	uint32_t rank;    /* target node rank (MSG_ALL_NODES: a fence on all) */
	int32_t fstatus;  /* MSG_FENCE: the first failure among the operations it covers */
	uint8_t ev;       /* MSG_EV_* */
	int32_t rstatus;  /* with MSG_EV_REMOTE: the outcome's status */
	uint64_t *result; /* MSG_ATOMIC: where the old value goes */
	trd_done_fn cb;   /* the completion (the remote event) */
	trd_done_fn lcb;  /* the local event, or NULL */
	void *cookie;
	struct trd_desc d; /* the descriptor to inject (aux filled at start) */
	struct trd_desc c; /* MSG_READ: the carried put-back descriptor */
};

struct trd_client {
	char name[32];
	const struct trd_topo *topo;
	struct trd_torus torus; /* valid when n_tasks != 0 */
	uint32_t n_tasks;
	rte_spinlock_t lock; /* context creation */
	uint32_t n_ctx;      /* published with release after ctx[n_ctx - 1] */
	struct trd_context *ctx[TRD_CLIENT_MAX_CONTEXTS];
	int16_t recv_fifo[TRD_CLIENT_MAX_CONTEXTS];
	bool dispatch[TRD_CLIENT_MAX_CONTEXTS];
};

/* A dispatch handler. */
struct msg_handler {
	trd_recv_fn fn;
	void *arg;
};

struct trd_context {
	struct trd_client *client;
	struct trd_node *node;
	struct trd_inj_fifo *inj;
	struct trd_rec_fifo *cpl_rf;
	struct trd_rec_fifo *recv_rf; /* NULL: none */
	trd_recv_fn recv;
	void *recv_arg;
	struct msg_handler *dispatch; /* TRD_DISPATCH_MAX handlers, or NULL: no dispatch */
	uint8_t cpl_fifo;
	unsigned int offset;
	struct trd_torus torus; /* the node's */
	uint32_t n_nodes;
	bool in_advance;

	/* work queue: entries, the free ones, and the queued ones in posting order */
	uint32_t size;
	struct msg_op *ops;
	uint32_t *free_ids;
	uint32_t n_free;
	uint32_t *q;
	uint32_t q_mask;
	uint32_t q_head; /* next to start */
	uint32_t q_tail; /* next free position */

	/* in flight */
	uint32_t inflight;     /* operations started and not completed */
	uint32_t *outstanding; /* per target rank */
	uint32_t *reads;       /* entries of the RDMA reads in flight */
	uint32_t n_reads;
	uint32_t *lwait; /* entries of puts and sends started, whose local event waits */
	uint32_t n_lwait;
	uint16_t *ctrs;        /* engine counters kept for reads, free ones */
	uint32_t n_ctrs;       /* free ones in ctrs[] */
	uint32_t n_ctrs_owned; /* all allocated (free + in use) */
	uint16_t *ctrs_owned;

	uint64_t stat[TRD_CTX_STAT_MAX];
};

#endif /* TRD_MSG_PVT_H */
