/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives, private view. Built only on the public messaging API (include/toroid/msg.h);
 * never reaches into engine/msg or engine/dma. The protocol is in docs/collectives.md.
 */
#ifndef TRD_COLL_PVT_H
#define TRD_COLL_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>

#include <toroid/coll.h>

extern int trd_coll_logtype;
#define COLL_LOG(level, fmt, ...)                                                                  \
	rte_log(RTE_LOG_##level, trd_coll_logtype, "toroid coll: " fmt "\n", ##__VA_ARGS__)

/* ---- messages: everything is in the 64-bit user word of a trd_send() ----
 *  63..56 magic 0xC7 | 55..48 object id | 47..44 type | 43..20 sequence | 19..0 argument */
#define COLL_MAGIC    0xC7u
#define COLL_MAX_IDS  256
#define COLL_SEQ_MASK 0xFFFFFFu
#define COLL_ARG_MASK 0xFFFFFu
#define COLL_MAX_SEGS (COLL_ARG_MASK + 1) /* segments of one stream */

enum coll_msg_type {
	CM_EAGER = 1,  /* a whole stream, its bytes the payload */
	CM_NOTIFY = 2, /* argument: a segment put into the receiver's slot (follows the put) */
	CM_GRANT = 3,  /* argument: the sender may put segments below it; payload: scratch key */
};

static inline uint64_t
coll_hdr(unsigned int type, unsigned int id, uint64_t seq, uint32_t arg)
{
	return (uint64_t)COLL_MAGIC << 56 | (uint64_t)(id & 0xff) << 48 |
	       (uint64_t)(type & 0xf) << 44 | (uint64_t)(seq & COLL_SEQ_MASK) << 20 |
	       (arg & COLL_ARG_MASK);
}
#define COLL_HDR_MAGIC(u) ((unsigned int)((u) >> 56))
#define COLL_HDR_ID(u)    ((unsigned int)((u) >> 48) & 0xff)
#define COLL_HDR_TYPE(u)  ((unsigned int)((u) >> 44) & 0xf)
#define COLL_HDR_SEQ(u)   ((uint32_t)((u) >> 20) & COLL_SEQ_MASK)
#define COLL_HDR_ARG(u)   ((uint32_t)(u)&COLL_ARG_MASK)

/* ---- reductions ---- */
typedef void (*coll_reduce_fn)(void *inout, const void *in, size_t n);
coll_reduce_fn coll_reduce_fn_of(enum trd_coll_op op, enum trd_coll_type type);

/* ---- one collective ---- */
enum coll_kind {
	CK_BARRIER = 0,
	CK_BCAST,
	CK_REDUCE,
	CK_ALLREDUCE,
	CK_GATHER,
	CK_SCATTER,
	CK_ALLGATHER,
};

/* Tree edges of this task in one collective: in[E_PARENT] is the stream coming down from the
 * parent, in[E_C0/1] the streams coming up from the children; out[E_PARENT] goes up, out[E_Cj]
 * down to child j. */
enum coll_edge { E_PARENT = 0, E_C0 = 1, E_C1 = 2, E_MAX = 3 };

struct coll_stream {
	bool used;
	bool eager;       /* one message; else segments put into slots (rendezvous) */
	uint32_t peer;    /* the other task */
	uint8_t ch;       /* slot channel at the receiver: 0 from the parent, 1 + j from child j */
	uint64_t total;   /* bytes */
	uint32_t segsz;   /* bytes per segment (eager: total) */
	uint32_t nseg;    /* >= 1 (a 0-byte stream is one empty message) */
	uint32_t done;    /* in: segments consumed; out: segments complete (a prefix) */
	uint32_t granted; /* rendezvous: segments the receiver made room for */
	struct trd_ep ep;
	/* in */
	uint64_t present; /* slot (i % slots) holds segment i; eager: bit 0 */
	uint32_t grants_inflight;
	uint32_t grant_sent; /* highest grant posted */
	/* out */
	const uint8_t *base; /* the stream's bytes */
	uint32_t posted;     /* segments started */
	uint64_t pmask;      /* puts complete beyond the prefix: bit k is segment done + k */
	uint64_t nmask;      /* notifications (eager: messages) complete, likewise */
	uint64_t rkey;       /* receiver's scratch key (from its grant) */
	bool have_key;
};

struct coll_op {
	uint64_t seq; /* 1, 2, ... per object */
	uint8_t kind; /* enum coll_kind */
	bool begun;
	bool mapped; /* gather root: T copied to rbuf */
	unsigned int root;
	const uint8_t *sbuf;
	uint8_t *rbuf;
	size_t len; /* bytes per task (reductions: count * element size) */
	size_t count;
	uint8_t type, rop;
	coll_reduce_fn fn;
	trd_coll_done_fn cb;
	void *cookie;
	/* the tree, from begin */
	uint32_t vrank;
	uint32_t n_child;
	uint32_t sub[2]; /* subtree sizes of the children */
	uint32_t my_sub; /* of this task */
	uint8_t *acc;    /* reductions: the accumulator (may be sbuf for a leaf) */
	uint8_t *T;      /* gather/scatter: the subtree stream, preorder */
	struct coll_stream in[E_MAX];
	struct coll_stream out[E_MAX];
};

/* An operation of the messaging layer in flight for the object. */
enum coll_tk_kind { TK_FREE = 0, TK_EAGER, TK_PUT, TK_NOTIFY, TK_GRANT };

struct coll_ticket {
	struct trd_coll *coll;
	struct coll_ticket *next; /* free list, or retry list */
	uint64_t seq;
	uint8_t kind;
	uint8_t edge;
	bool retry;   /* on the retry list */
	uint32_t arg; /* PUT/NOTIFY: segment; GRANT: grant */
};

/* A message for a collective not begun here yet (or an object not yet created). */
struct coll_pend {
	struct coll_pend *next;
	struct trd_coord src;
	uint8_t type;
	uint8_t id;
	uint32_t seq;
	uint32_t arg;
	uint32_t len;
	uint8_t data[]; /* EAGER: the stream; GRANT: the key */
};

struct coll_reg;

struct trd_coll {
	struct trd_client *client;
	struct trd_context *ctx;
	struct coll_reg *reg;
	uint8_t id;
	uint32_t n;    /* tasks */
	uint32_t rank; /* this task */
	unsigned int ctx_off;
	struct trd_ep self;
	struct trd_coll_conf conf; /* resolved */
	uint32_t *task_of;         /* torus rank -> task */
	uint32_t *pre;             /* preorder of the virtual ranks of the tree */

	uint8_t *scratch; /* 3 channels x slots x seg_size, registered for remote writes */
	size_t scratch_len;
	struct trd_mr *mr;
	uint64_t key;         /* the grant payload: the scratch region's key */
	uint8_t *hold[E_MAX]; /* eager streams received, eager_max each */
	uint8_t *work;        /* accumulator or subtree stream of the current collective */
	size_t work_len;

	struct coll_op *ops; /* ring of max_ops */
	uint32_t op_head, op_tail;
	uint64_t next_seq; /* given to the next collective started */
	uint64_t done_seq; /* last completed */
	int status[64];    /* status of collective seq at [seq % 64] */

	struct coll_pend *pend, *pend_tail;
	struct coll_ticket *tickets;
	struct coll_ticket *tk_free;
	struct coll_ticket *retry, *retry_tail;
	uint32_t tk_out; /* tickets in use */

	bool kick_posted;
	bool in_progress;
	bool again;
	int error; /* first failure: the object is unusable */
	uint64_t stat[TRD_COLL_STAT_MAX];
};

/* proto.c */
void coll_progress(struct trd_coll *c);
void coll_rx(struct trd_coll *c, const struct trd_msg *m);
void coll_rx_pending(struct trd_coll *c, struct coll_pend *p);
int coll_kick(struct trd_coll *c);
uint32_t coll_sub_size(uint32_t n, uint32_t v);

#endif /* TRD_COLL_PVT_H */
