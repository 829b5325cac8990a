/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The virtual network interface segment and the attach protocol: shared by the application
 * library (app.c) and the engine's service (service.c). docs/vni.md draws the layout.
 *
 * Every shared structure names memory by offset from the segment's start, never by pointer:
 * the two processes map the segment at different addresses. The engine never trusts what the
 * application wrote: it copies a context before use and checks every offset and length.
 */
#ifndef TRD_VNI_SEG_H
#define TRD_VNI_SEG_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <toroid/toroid.h> /* TRD_GUEST_RFIFO_FIRST */
#include <toroid/vni.h>    /* TRD_VNI_CPU_WORDS */

#define TRD_VNI_SEG_MAGIC 0x31494e5644524f54ULL /* "TORDVNI1" */
/* The attach protocol (request and answer on the socket). Version 2 added TRD_VNI_ANY as a
 * request's proc (the engine picks a free process) and the answer's app and proc (the identity
 * given). Version 3 is the protocol of messages in process memory (TRD_VNI_SF_VADDR,
 * TRD_VNI_RF_VADDR: an engine before it refuses such commands with -EINVAL) and adds the
 * engine's versions to the answer. An engine serves the versions TRD_VNI_VERSION_MIN ..
 * TRD_VNI_VERSION only and refuses any other with -EPROTO and a reason naming both sides'
 * versions, in an answer as long as the request's version reads (TRD_VNI_ANSWER_V1_SIZE,
 * TRD_VNI_ANSWER_V2_SIZE, or the whole answer), so a library of any version can tell why.
 * Version 4 adds the collective command (TRD_VNI_CMD_COLL: an engine before it would count it
 * as a bad command and never complete it); a version 3 library is still served.
 * Version 5 adds the messaging-unit objects (struct trd_vni_sock_mu after the request, a fourth
 * descriptor in the answer: the process's counter block, a sealed memfd of its own; docs/vni.md
 * "Messaging-unit objects"). Version 6 adds reception FIFOs to them (a longer struct
 * trd_vni_sock_mu; a version 5 request, 16 bytes of it, asks for none). Version 7 lets a
 * process ask for its reception FIFOs' ids (rfifo_first; a version 6 request, 24 bytes, takes
 * any free ones). Version 8: the engine gives a reflection's completion to one of the process's
 * reception FIFOs a completion id of the node (docs/vni.md, "Reflection by completion id"; an
 * engine before it drops such a remote get as a bad descriptor). */
#define TRD_VNI_VERSION     9
#define TRD_VNI_VERSION_MIN 3
/* The segment's layout (trd_vni_seg.version): changes only when the segment does. Its app and
 * proc are the identity the engine gave, as in the answer. */
#define TRD_VNI_SEG_VERSION 1
#define TRD_VNI_ALIGN       64

/* Limits the engine enforces at attach. */
#define TRD_VNI_CTX_MAX       4096
#define TRD_VNI_DB_MAX        4096
#define TRD_VNI_POOL_DEFAULT  (16u << 20)
#define TRD_VNI_SHORT_DEFAULT 512

/* ---- the socket: one request, one answer with file descriptors ---- */

enum trd_vni_sock_op {
	TRD_VNI_SOCK_REGISTER = 1,
	TRD_VNI_SOCK_REGISTERED = 2,
	/* after registration, the only requests the socket carries: memory regions for one-sided
	 * access (trd_vni_mr_reg), each answered by one TRD_VNI_SOCK_MR_ANSWER */
	TRD_VNI_SOCK_MR_REG = 10,
	TRD_VNI_SOCK_MR_DEREG = 11,
	TRD_VNI_SOCK_MR_ANSWER = 12,
};

struct trd_vni_sock_mr {
	uint32_t op;        /* MR_REG or MR_DEREG */
	uint32_t access;    /* TRD_VNI_MR_* */
	uint64_t addr, len; /* MR_REG */
	uint64_t key;       /* MR_REG: 0 (the engine picks) or the caller's; MR_DEREG: the key */
};

struct trd_vni_sock_mr_answer {
	uint32_t op; /* TRD_VNI_SOCK_MR_ANSWER */
	int32_t status;
	uint64_t key;
};

/* The registration request. It may carry two descriptors (SCM_RIGHTS): the process's own
 * /proc/self/mem (O_RDWR) and /proc/self/maps (O_RDONLY), the only way the engine reaches its
 * memory for one-sided access; without them the process has none (regions: -EPERM). */
struct trd_vni_sock_register {
	uint32_t op; /* TRD_VNI_SOCK_REGISTER */
	uint32_t version;
	uint32_t app, proc; /* proc TRD_VNI_ANY (version 2): any free process of app on this node */
	uint64_t pool_size;
	uint32_t n_send, n_recv, n_doorbells;
	int32_t short_max;
};

/* Answer; on success it carries three descriptors (SCM_RIGHTS): the segment memfd, the
 * interface's eventfd (engine -> application) and the engine's kick eventfd (application ->
 * engine, written when the engine says it is asleep). */
struct trd_vni_sock_answer {
	uint32_t op;    /* TRD_VNI_SOCK_REGISTERED */
	int32_t status; /* 0 or a negative errno */
	uint64_t seg_size;
	char reason[96];
	/* version 2: the identity attached (the process the engine chose for TRD_VNI_ANY) */
	uint32_t app, proc;
	/* version 3: the versions the engine serves */
	uint32_t version, version_min;
};

#define TRD_VNI_ANSWER_V1_SIZE 112 /* the answer up to reason: what a version 1 client reads */
#define TRD_VNI_ANSWER_V2_SIZE 120 /* up to app and proc: what a version 2 client reads */
/* Version 5: what a request may carry after struct trd_vni_sock_register (the request is then
 * sizeof both): the process's messaging-unit objects. All 0: none (as a shorter request). */
#define TRD_VNI_MU_SLOTS_MAX  4096
#define TRD_VNI_MU_REGION_MAX (1ULL << 30)
struct trd_vni_sock_mu {
	uint32_t n_fifos;    /* injection FIFOs, 0 .. TRD_VNI_MU_FIFOS_MAX */
	uint32_t fifo_slots; /* 64-byte slots each (a power of 2, 64 .. TRD_VNI_MU_SLOTS_MAX) */
	uint64_t region;     /* bytes of the segment the engine registers as the process's region */
	/* version 6: */
	uint32_t n_rfifos;    /* reception FIFOs, 0 .. TRD_VNI_MU_RFIFOS_MAX */
	uint32_t rfifo_slots; /* 64-byte slots each (a power of 2, 64 .. TRD_VNI_MU_SLOTS_MAX) */
	/* version 7: */
	uint32_t rfifo_first; /* 0: any free ids; else the first FIFO's id, the others after it */
	uint32_t rsvd;        /* 0 */
};
#define TRD_VNI_SOCK_MU_V5_SIZE 16 /* what a version 5 request carries */
#define TRD_VNI_SOCK_MU_V6_SIZE 24 /* ... and a version 6 one */

/* A FIFO's size: a power of 2, 64 .. TRD_VNI_MU_SLOTS_MAX slots. */
static inline bool
trd_vni_mu_slots_ok(uint32_t slots)
{
	return slots >= 64 && slots <= TRD_VNI_MU_SLOTS_MAX && (slots & (slots - 1)) == 0;
}

/* A messaging-unit request within what any engine serves: the library checks it before it
 * asks, the engine again (with its own pool limit on the region). */
static inline bool
trd_vni_mu_req_ok(const struct trd_vni_sock_mu *m)
{
	return m->n_fifos <= TRD_VNI_MU_FIFOS_MAX && m->region <= TRD_VNI_MU_REGION_MAX &&
	       (m->n_fifos == 0 || trd_vni_mu_slots_ok(m->fifo_slots)) &&
	       m->n_rfifos <= TRD_VNI_MU_RFIFOS_MAX &&
	       (m->n_rfifos == 0 || trd_vni_mu_slots_ok(m->rfifo_slots)) && m->rsvd == 0 &&
	       (m->rfifo_first == 0 ||
		(m->rfifo_first >= TRD_GUEST_RFIFO_FIRST && m->n_rfifos != 0 &&
		 (uint64_t)m->rfifo_first + m->n_rfifos - 1 <= TRD_GUEST_RFIFO_LAST));
}

/* A region request's access bits: only those known, and doorbell bits (TRD_VNI_MR_DOORBELL,
 * TRD_VNI_MR_DB_FIFO(k)) only for a part of the messaging-unit region others may write, told in
 * FIFO k of the process's @p n_rfifos. The library checks it before it asks, the engine
 * again. */
static inline bool
trd_vni_mr_access_ok(uint32_t access, uint32_t n_rfifos)
{
	const uint32_t db = TRD_VNI_MR_DOORBELL | TRD_VNI_MR_DB_FIFO(0xff);

	if (access & ~(TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE | TRD_VNI_MR_OFFSET |
		       TRD_VNI_MR_MU | db))
		return false;
	return !(access & db) ||
	       ((access & TRD_VNI_MR_DOORBELL) && (access & TRD_VNI_MR_MU) &&
		(access & TRD_VNI_MR_REMOTE_WRITE) && (access >> 8 & 0xff) < n_rfifos);
}
/* Descriptors an answer carries at most: segment, eventfd, kick eventfd (all versions), the
 * counter block (version 5), an eventfd per reception FIFO (version 6). */
#define TRD_VNI_ANSWER_FDS (4 + TRD_VNI_MU_RFIFOS_MAX)
_Static_assert(sizeof(struct trd_vni_sock_register) == 40, "register request");
_Static_assert(sizeof(struct trd_vni_sock_mu) == 32, "messaging-unit request");
_Static_assert(offsetof(struct trd_vni_sock_mu, rfifo_first) == TRD_VNI_SOCK_MU_V6_SIZE,
	       "messaging-unit request v6");
_Static_assert(offsetof(struct trd_vni_sock_mu, n_rfifos) == TRD_VNI_SOCK_MU_V5_SIZE,
	       "messaging-unit request v5");
_Static_assert(sizeof(struct trd_vni_sock_answer) == 128, "answer");
_Static_assert(offsetof(struct trd_vni_sock_answer, app) == TRD_VNI_ANSWER_V1_SIZE, "answer v1");
_Static_assert(offsetof(struct trd_vni_sock_answer, version) == TRD_VNI_ANSWER_V2_SIZE,
	       "answer v2");

/* ---- the queues ---- */

/* Command queue element (application -> engine): 8 bytes. */
enum trd_vni_cmd_op {
	TRD_VNI_CMD_SEND = 1,   /* send context idx is ready */
	TRD_VNI_CMD_RECV = 2,   /* receive context idx is ready */
	TRD_VNI_CMD_CANCEL = 3, /* withdraw receive idx if it waits for a message: -ECANCELED */
	/* the answer to a TRD_VNI_CQE_CMA request for receive idx (docs/vni.md, "Copies"): */
	TRD_VNI_CMD_CMA_OK = 4,   /* the process read the message into the receive itself */
	TRD_VNI_CMD_CMA_FAIL = 5, /* it could not: the engine copies this message */
	TRD_VNI_CMD_CMA_OFF = 6,  /* the kernel refused it: the engine copies from now on */
	TRD_VNI_CMD_RMA = 10,     /* send context idx holds a one-sided op (struct trd_vni_actx) */
	TRD_VNI_CMD_COLL = 11,    /* send context idx holds a collective (struct trd_vni_cctx) */
};

struct trd_vni_cmd {
	uint32_t op;
	uint32_t idx;
};

/* Completion queue element (engine -> application): 40 bytes. */
#define TRD_VNI_CQE_DATA 0x1 /* receive: the message was sent with immediate data */
/* Not a completion (kind): a request to the library to read a message for receive idx from
 * the sending process on this engine itself, process_vm_readv(tag (its pid), data (the
 * address), len bytes), into the receive's buffer, and to answer with TRD_VNI_CMD_CMA_*. */
#define TRD_VNI_CQE_CMA 100
struct trd_vni_cqe {
	uint16_t kind;  /* enum trd_vni_cpl_kind */
	uint16_t flags; /* TRD_VNI_CQE_DATA */
	uint32_t idx;   /* the context */
	int32_t status;
	uint32_t len;
	uint64_t tag;
	uint32_t peer_app, peer_proc;
	uint64_t data; /* receive: the message's immediate data */
};

_Static_assert(sizeof(struct trd_vni_cmd) == 8, "command element");
_Static_assert(sizeof(struct trd_vni_cqe) == 40, "completion element");

/* ---- contexts ---- */

#define TRD_VNI_SF_INLINE 0x1 /* data is in this context's slot of the context region */
/*
 * n_dst destinations listed in the context's slot (after the inline data, at offset dst_off of
 * the slot)
 */
#define TRD_VNI_SF_MCAST 0x2
/*
 * Matched by the receiving engine after the interface's earlier ORDERED messages to the same
 * destination (numbered per pair, docs/vni.md "Ordered interfaces")
 */
#define TRD_VNI_SF_ORDERED 0x4
#define TRD_VNI_F_DOORBELL 0x8  /* bump doorbell[doorbell] on completion */
#define TRD_VNI_SF_DATA    0x10 /* the send carries immediate data (data) */
/* buf is an address in the process's own memory (a long message outside the pool): the engine
 * reads it through the process's /proc/self/mem descriptor (docs/vni.md) */
#define TRD_VNI_SF_VADDR   0x20
#define TRD_VNI_SF_WRITE   0x100 /* CMD_RMA: one-sided write */
#define TRD_VNI_SF_READ    0x200 /* CMD_RMA: one-sided read */
#define TRD_VNI_SF_ATOMIC  0x400 /* CMD_RMA: remote atomic */
#define TRD_VNI_RF_ANY_TAG 0x1   /* = TRD_VNI_ANY_TAG */
#define TRD_VNI_RF_MASK    0x2   /* the tag bits set in ignore match anything */
/*
 * Probe: report the first matching message that is waiting (staged or refused), take nothing;
 * -ENOMSG if none
 */
#define TRD_VNI_RF_PROBE 0x4
/* with PROBE: also claim the message found (the engine writes its handle in the context's
 * claim); alone: receive the claimed message named by claim into buf. 0x40 since version 9:
 * before, it was 0x8, TRD_VNI_F_DOORBELL's bit, so a receive could not ring a doorbell (it was
 * taken for a claimed receive and refused); an engine reads 0x8 of an older library's receive
 * as both still (rx.c) */
#define TRD_VNI_RF_CLAIM    0x40
#define TRD_VNI_RF_CLAIM_V8 0x8
#define TRD_VNI_RF_DISCARD                                                                         \
	0x10 /* with PROBE: drop the first matching message; with CLAIM:                           \
	      * drop the claimed message named by claim (no data) */
/* buf is an address in the process's own memory: the engine writes the message there through
 * the process's /proc/self/mem descriptor, after checking it is mapped writable */
#define TRD_VNI_RF_VADDR 0x20

/* Send context: 64 bytes. */
struct trd_vni_sctx {
	uint32_t flags;
	uint32_t len;
	uint32_t dst_app, dst_proc;
	uint64_t tag;
	uint64_t buf; /* pool offset (not INLINE), or an address (VADDR) */
	uint32_t doorbell;
	uint32_t n_dst;   /* MCAST */
	uint32_t dst_off; /* MCAST: offset of the list in the slot */
	uint32_t rsvd;
	uint64_t data; /* immediate data, delivered with the message */
	uint8_t pad[8];
};

/* Receive context: 64 bytes. */
struct trd_vni_rctx {
	uint32_t flags;
	uint32_t src_app, src_proc;
	uint32_t cap;
	uint64_t tag;
	uint64_t buf; /* pool offset, or an address (VADDR) */
	uint32_t doorbell;
	uint32_t rsvd;
	uint64_t ignore; /* RF_MASK: tag bits that match anything */
	uint64_t claim;  /* RF_CLAIM alone or with DISCARD: the handle; PROBE|CLAIM: the engine
			  * writes the handle here before the completion */
	uint32_t cma;    /* TRD_VNI_CMA_*: a TRD_VNI_CQE_CMA request for this receive */
	uint32_t pad;
};
/* rctx.cma: the engine offers (OFFERED) before it asks; the library takes the offer
 * (OFFERED -> TAKEN, a compare-and-swap) before it reads, the engine withdraws it when the
 * answer is late (OFFERED -> 0): exactly one of the two copies the message. */
#define TRD_VNI_CMA_OFFERED 1u
#define TRD_VNI_CMA_TAKEN   2u

/* A send context holding a one-sided op (TRD_VNI_CMD_RMA): 64 bytes. laddr is an address in
 * the process's own memory (not the pool), read or written by the engine through the
 * /proc/self/mem descriptor the process passed at registration. */
struct trd_vni_actx {
	uint32_t flags; /* exactly one of SF_WRITE, SF_READ, SF_ATOMIC; F_DOORBELL */
	uint32_t len;   /* write, read: bytes (at most 1 GiB); atomic: 4 or 8 */
	uint32_t dst_app, dst_proc;
	uint64_t raddr; /* target address or region offset */
	uint64_t laddr; /* write, read: the local buffer */
	uint32_t doorbell;
	uint32_t aop; /* atomic: enum trd_vni_aop */
	uint64_t rkey;
	uint64_t operand, compare; /* atomic */
};

/* A send context holding a collective (TRD_VNI_CMD_COLL, version 4): 64 bytes. The engine
 * posts it to its node's engine collectives (<toroid/comb.h>); src and dst are pool offsets,
 * TRD_VNI_COLL_NONE where the collective has none. kind, op and dtype take the values of
 * enum trd_comb_kind, trd_comb_op and trd_comb_dtype (<toroid/wire.h>). */
#define TRD_VNI_COLL_NONE UINT64_MAX
/* The collective of a handle of trd_node_attach() (trd_comb_post(), docs/vni.md "One API"):
 * src and dst are offsets in the process's messaging-unit region, the end is told by its
 * counter ctr (its own number, 1 .. TRD_COUNTER_BLOCK - 1: 1 is subtracted, or it is marked
 * failed), and no completion is written: the engine sets ended to 1, then counts; the context
 * is the library's again once ended. */
#define TRD_VNI_CF_MU 0x10000
struct trd_vni_cctx {
	uint32_t flags; /* F_DOORBELL, or CF_MU */
	uint8_t kind, op, dtype, dims;
	uint32_t count;  /* elements of 8 bytes */
	uint8_t root[3]; /* x, y, z */
	uint8_t ended;   /* CF_MU: written 1 by the engine at the end */
	uint64_t src, dst;
	uint32_t doorbell;
	uint32_t ctr; /* CF_MU: the process's counter */
	uint8_t pad[24];
};

_Static_assert(sizeof(struct trd_vni_sctx) == 64, "send context");
_Static_assert(sizeof(struct trd_vni_cctx) == 64, "collective context");
_Static_assert(sizeof(struct trd_vni_actx) == 64, "one-sided context");
_Static_assert(sizeof(struct trd_vni_rctx) == 64, "receive context");

/* app_compute: told at all, and where trd_vni_hint_compute()'s flags sit */
#define VNI_COMPUTE_TOLD        UINT32_C(0x80000000)
#define VNI_COMPUTE_FLAGS_SHIFT 16
#define VNI_COMPUTE_PERMILLE    UINT32_C(0xffff)

/* ---- the segment header, at offset 0 ---- */

struct trd_vni_seg {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint64_t size; /* whole segment */
	uint32_t app, proc;
	uint32_t n_send, n_recv, n_doorbells;
	uint32_t short_max;
	uint32_t slot_size; /* bytes of context region per send context */
	uint32_t cmdq_size; /* ring slots */
	uint32_t cplq_size;
	uint32_t rsvd0;
	uint64_t cmdq_off, cplq_off;
	uint64_t sctx_off, rctx_off;
	uint64_t ctxr_off, ctxr_size;
	uint64_t pool_off, pool_size;
	uint64_t db_off;
	uint8_t node[3];
	uint8_t dims[3]; /* the torus's sizes (0: an engine before they were written here) */
	uint8_t rsvd1[2];
	char node_name[32];
	/* version 5: offset of struct trd_vni_mu (0: none), in the padding before app_armed */
	uint64_t mu_off;

	/* The application sets app_armed before it sleeps on its eventfd; the engine, after it
	 * queued a completion, swaps it to 0 and writes the eventfd if it was 1. */
	alignas(64) uint32_t app_armed;
	/* Written by the application (trd_vni_hint_compute): 0 while it has said nothing, else
	 * VNI_COMPUTE_TOLD | flags << VNI_COMPUTE_FLAGS_SHIFT | the thousandths of its time it
	 * computed away from the library lately; a hint the engine reads to choose whether to
	 * poll on its own CPUs (toroid-node --idle-us auto), the thousandths clamped there to
	 * 1000. In app_armed's padding: 0 from a library before it. */
	uint32_t app_compute;
	/* The engine sets engine_idle before it sleeps; the application, after it queued a
	 * command, writes the kick eventfd if it is set. */
	alignas(64) uint32_t engine_idle;
	/* 0 while the engine serves the interface; a negative errno once it stopped. */
	int32_t engine_status;
	/* Processes that poll beside this one: the distinct processes attached to the engine
	 * plus the engine's own thread, rewritten by the engine at every attach and detach (0:
	 * an engine that does not say). Libraries above decide from it, against the CPUs they
	 * may run on, whether an idle poll should yield its CPU (trd_vni_busy_procs). */
	uint32_t engine_procs;
	/* The CPUs the engine's polling thread may run on (its lcore's), a bitmap of CPUs
	 * 0 .. 64 * TRD_VNI_CPU_WORDS - 1, written once when the engine makes the segment; all 0:
	 * an engine that does not say (one before this field: the bytes were padding, so the
	 * layout version did not change). Libraries above keep an unbound process off these
	 * CPUs (trd_vni_engine_cpus). */
	uint64_t engine_cpus[TRD_VNI_CPU_WORDS];

	/* Counters, written by the engine only. Every field above from app_armed on is shared
	 * by two processes: it is read and written with __atomic builtins only. */
	alignas(64) uint64_t tx_msgs, tx_pkts, tx_bytes, rx_msgs, rx_bytes, naks;
	/* What a probe could find: TRD_VNI_PROBE_VALID (an engine that keeps it) | the messages
	 * waiting for this interface unmatched (its unexpected queue) plus 1 while refused
	 * requests to send may wait for it (set when one is noted, recounted by every probe the
	 * engine answers). VALID alone: a probe would answer -ENOMSG (trd_vni_probe_none). In
	 * the counters' padding: 0 from an engine before it. */
	uint32_t probe_waiting;
	uint32_t rsvd2;
};

#define TRD_VNI_PROBE_VALID (1u << 31)

/* engine_cpus sits in the padding of engine_idle's cache line: the header's size and every
 * other offset are those of layout version 1 */
_Static_assert(offsetof(struct trd_vni_seg, engine_cpus) + sizeof(uint64_t) * TRD_VNI_CPU_WORDS <=
		       offsetof(struct trd_vni_seg, tx_msgs),
	       "engine_cpus fits before the counters");
_Static_assert(offsetof(struct trd_vni_seg, tx_msgs) == 320, "segment layout version 1");

_Static_assert(offsetof(struct trd_vni_seg, app_compute) + 4 <=
		       offsetof(struct trd_vni_seg, engine_idle),
	       "app_compute sits in app_armed's padding");
_Static_assert(offsetof(struct trd_vni_seg, mu_off) + 8 <= offsetof(struct trd_vni_seg, app_armed),
	       "mu_off sits in padding");

/* ---- the messaging-unit objects (version 5, docs/vni.md "Messaging-unit objects") ---- */

/*
 * Written by the engine at attach, read-only after (the process may scribble on it: the engine
 * keeps its own copy). fifo_off[i]: an rte_ring of fifo_slots 64-byte elements (struct
 * trd_desc, each followed by the continuation slots of its inline data, n_slots of them).
 * Counters: the process maps TRD_COUNTER_BLOCK int64_t of its block's memfd (the answer's
 * fourth descriptor, the block alone) at ctr_offset (0); its counter k (1 .. 511) is the node's
 * counter ctr_base + k, the id a frame names (rec_ctr) to reach it from anywhere. The region:
 * region_len bytes at region_off of the segment, key region_key on this node.
 */
struct trd_vni_mu {
	uint32_t n_fifos, fifo_slots;
	uint32_t ctr_base, n_ctrs; /* n_ctrs: TRD_COUNTER_BLOCK */
	uint64_t ctr_offset;
	uint64_t region_off, region_len, region_key;
	uint32_t inline_max; /* longest inline message (continuation slots) a descriptor carries */
	uint32_t rsvd;
	uint64_t fifo_off[TRD_VNI_MU_FIFOS_MAX];
	/* written by the engine (atomics): descriptors taken, dropped as bad, rings found broken */
	alignas(64) uint64_t descs, bad_descs, bad_rings;
	/* version 6: reception FIFOs, rfifo_off[i] an rte_ring of rfifo_slots 64-byte elements
	 * that the engine fills (struct trd_rslot, <toroid/toroid.h>) and the process empties;
	 * rfifo_id[i] its node id. Written by the engine (atomics): messages written into them,
	 * refused for want of room, rings found broken. */
	uint32_t n_rfifos, rfifo_slots;
	uint64_t rfifo_off[TRD_VNI_MU_RFIFOS_MAX];
	uint8_t rfifo_id[TRD_VNI_MU_RFIFOS_MAX];
	alignas(64) uint64_t rmsgs, rfull, rbad_rings;
	/* written by the process: 1 asks for a signal on reception FIFO i's eventfd (the
	 * answer's descriptor 4 + i) when a message comes; the engine clears it as it signals */
	alignas(64) uint32_t rarmed[TRD_VNI_MU_RFIFOS_MAX];
};

#endif /* TRD_VNI_SEG_H */
