/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The toroid libfabric provider (libtoroid-fi.so), private header.
 *
 * A provider loaded by libfabric from FI_PROVIDER_PATH (fi_prov_ini()). Each endpoint is one
 * virtual network interface (include/toroid/vni.h) of the host's toroid-node: the provider is
 * a plain process-side library, it starts no EAL. See docs/libfabric.md.
 *
 * Objects and their files:
 *   tfi_init.c    fi_prov_ini, parameters, fi_getinfo (hint matching), fabric, EQ
 *   tfi_domain.c  domain, memory registration, address vector
 *   tfi_cq.c      completion queues (our own ring), wait objects, fi_trywait
 *   tfi_cntr.c    completion counters (fi_cntr_*), counted by tfi_cntr_report()
 *   tfi_ep.c      the RDM endpoint: open, close, bind, control, names, options, fi_cancel
 *   tfi_msg.c     FI_MSG and FI_TAGGED: posting sends and receives (fi_ops_msg, fi_ops_tagged)
 *   tfi_progress.c  posted operations, VNI progress, completions into CQs and counters
 *   tfi_rma.c     FI_RMA and FI_ATOMIC over the VNI's one-sided operations (trd_vni_write,
 *                 trd_vni_read, trd_vni_atomic), remote keys
 *   tfi_txq.c     FI_FENCE (transmits held in order until earlier ones completed) and remote
 *                 CQ data on RMA writes (a provider-internal notice after the write)
 *   tfi_stubs.c   -FI_ENOSYS entries for everything the provider does not offer
 *   tfi_copy.c    copies from and into application buffers that fail with -FI_EFAULT
 *   tfi_coll.c    FI_COLLECTIVE over the VNI's engine collectives: AV sets, fi_join, barrier,
 *                 broadcast, allreduce, reduce
 *   tfi_place.c   an unbound process moves off the CPUs of toroid-node's polling thread,
 *                 and gets them back while it computes on a host with room
 *   tfi_self.c    messages an endpoint sends to itself: matched and copied in the provider,
 *                 never through the engine
 *
 * Threading: one mutex per domain guards the domain's objects (FI_THREAD_SAFE).
 */
#ifndef TOROID_TFI_H
#define TOROID_TFI_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <toroid/vni.h>

#define TFI_NAME         "toroid"
#define TFI_PROV_VERSION FI_VERSION(0, 1)

/* What the provider offers (fi_getinfo advertises exactly this). */
#define TFI_PRIMARY_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC)
#define TFI_SECONDARY_CAPS                                                                         \
	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SOURCE |   \
	 FI_DIRECTED_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_REMOTE_CQ_DATA | FI_FENCE)
#define TFI_CAPS (TFI_PRIMARY_CAPS | TFI_SECONDARY_CAPS)
/* ... and, only when asked for, FI_COLLECTIVE (tfi_coll.c) */
#define TFI_ALL_CAPS    (TFI_CAPS | FI_COLLECTIVE)
#define TFI_DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
/* one-sided capabilities (tfi_rma.c) */
#define TFI_RMA_CAPS (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
/* FI_EP_DGRAM: untagged messages only, no ordering promised */
#define TFI_DGRAM_CAPS (TFI_CAPS & ~(uint64_t)(FI_TAGGED | TFI_RMA_CAPS))

/* The VNI carries one 64-bit tag: untagged messages use the top bit, tagged ones the rest. */
#define TFI_MSG_TAG  (1ULL << 63)
#define TFI_TAG_BITS (TFI_MSG_TAG - 1)

#define TFI_IOV_LIMIT    4
#define TFI_CQ_DATA_SIZE 8 /* remote CQ data: the VNI's immediate data (trd_vni_senddata) */
#define TFI_CQ_DEFAULT   1024
#define TFI_CQ_EPS       8 /* endpoints one CQ may serve */
/* With FI_MR_PROV_KEY the key an application sees (fi_mr_key) is the VNI's key XOR this (the
 * VNI key is 64 random bits either way); without it the VNI key is a keyed hash of the
 * requested key under the job secret (tfi_wire_key, docs/libfabric.md "Keys and the job"). */
#define TFI_KEY_XOR    0x746f726f69640001ULL
#define TFI_ATOMIC_MAX 1  /* elements of one atomic operation (fi_query_atomic count) */
#define TFI_CNTR_MAX   64 /* counters per domain (domain_attr->cntr_cnt) */
/* FI_COLLECTIVE (tfi_coll.c), offered only when asked for: groups joined per endpoint, and
 * the collective address (fi_mc_addr) of the group in slot i, TFI_MC_ADDR + i */
#define TFI_MC_MAX  16
#define TFI_MC_ADDR ((fi_addr_t)0x746669636f6c0000ULL)

/* The address of an endpoint, as fi_getname() gives it and fi_av_insert() takes it. */
#define TFI_NAME_MAGIC 0x46445254u /* "TRDF" */
struct tfi_name {
	uint32_t magic;
	uint32_t app;
	uint32_t proc;
	uint8_t node[3]; /* the engine node's coordinate (x, y, z): informative */
	uint8_t version; /* 1 */
};
_Static_assert(sizeof(struct tfi_name) == 16, "address layout");

/* Does an idle poll give its CPU away (sched_yield)? docs/libfabric.md, "Waiting and the CPU" */
enum { TFI_YIELD_AUTO, TFI_YIELD_ALWAYS, TFI_YIELD_NEVER };

/* Parameters read once from the environment (FI_TOROID_*; fi_info -e lists them). */
struct tfi_params {
	char *socket;      /* NULL: libtoroid_vni uses $TOROID_VNI_SOCKET */
	int app, proc;     /* -1: not set */
	size_t pool_size;  /* VNI buffer pool per endpoint */
	int n_ctx;         /* VNI send and receive contexts each */
	int connect_ms;    /* keep trying to reach toroid-node this long */
	int yield;         /* FI_TOROID_YIELD: TFI_YIELD_AUTO, _ALWAYS or _NEVER */
	unsigned int cpus; /* CPUs in this process's affinity mask, at load */
	int engine_here;   /* one of them is a CPU of toroid-node's thread: 1, 0, -1 unknown */
	unsigned int engine_procs; /* the engine's processes and its thread, last seen; 0 unknown */
	/* thousandths of the last placement window spent computing, | TFI_COMPUTE_MOVABLE if
	 * the placement may widen the process; UINT_MAX: not measured (tfi_place_hint) */
	unsigned int compute;
	bool dgram;        /* FI_TOROID_DGRAM: offer FI_EP_DGRAM */
	size_t bounce_max; /* FI_TOROID_BOUNCE_MAX: messages up to this long go through the pool */
	int wait_spin_us;  /* FI_TOROID_WAIT_SPIN_US: blocking waits poll this long first (0: none)
			    */
	int trust_us;      /* FI_TOROID_TRUST_US: a page the kernel copied this recently is
			    * copied with memcpy (tfi_copy.c; 0: never) */
	bool place;        /* FI_TOROID_PLACE: an unbound process moves off the engine's CPUs */
	size_t inject_max; /* FI_TOROID_INJECT_MAX: inject_size (docs/libfabric.md, "Injects") */
	bool place_adapt;  /* FI_TOROID_PLACE=auto: ... and gets them back while it computes */
	bool self;         /* FI_TOROID_SELF: messages to itself matched in the provider */
};

#define TFI_TRUST_DEFAULT_US 1000
#define TFI_TRUST_MAX_US     1000000
/* inject_size: sends up to this long may be injected; above the VNI's inline size
 * (TRD_VNI_SHORT_MAX) their bytes are copied into the pool (or the heap) when posted */
#define TFI_INJECT_DEFAULT 4096
#define TFI_INJECT_LIMIT   65536

extern struct fi_provider tfi_prov;
extern struct tfi_params tfi_params;

size_t tfi_max_msg_size(void);
size_t tfi_pool_msg_size(void);
size_t tfi_inject_size(void);

struct tfi_fabric {
	struct fid_fabric fab;
	int refs;
};

struct tfi_domain {
	struct fid_domain dom;
	struct tfi_fabric *fab;
	pthread_mutex_t lock;
	enum fi_av_type av_type;
	bool mr_virt_addr;   /* FI_MR_VIRT_ADDR (or FI_MR_BASIC): remote addresses are addresses */
	bool mr_prov_key;    /* FI_MR_PROV_KEY (or FI_MR_BASIC): the provider picks keys */
	bool mr_remote;      /* opened for FI_RMA or FI_ATOMIC: remote access may be registered */
	bool job_key;        /* job_sk came from the job (auth_key or environment), not at random */
	uint64_t job_sk[2];  /* the SipHash key that mixes requested keys (tfi_wire_key) */
	struct tfi_ep *eps;  /* endpoints, each with its VNI: remote regions live there */
	struct tfi_mr *rmrs; /* registrations with remote access */
	int refs;
	int n_cntrs; /* open counters (at most TFI_CNTR_MAX) */
};

struct tfi_mr {
	struct fid_mr mr;
	struct tfi_domain *dom;
	const void *buf;
	size_t len;
	uint64_t access;
	uint64_t vkey;       /* the key the VNI holds: tfi_wire_key(dom, mr.key) */
	struct tfi_mr *next; /* in dom->rmrs */
};

struct tfi_av {
	struct fid_av av;
	struct tfi_domain *dom;
	enum fi_av_type type;
	struct tfi_name *tab; /* by index */
	uint8_t *used;
	size_t n, cap;
	size_t last; /* index of the last address resolved */
	int refs;
};

/* One entry of our completion ring: enough for every format and for an error entry. */
struct tfi_cqe {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err;        /* 0, or a positive FI_E* code */
	int prov_errno; /* the VNI's errno (positive) */
	size_t olen;
};

struct tfi_ep;
struct tfi_cntr;

/* What a counter bound to an endpoint counts (fi_ep_bind flags FI_SEND, FI_RECV, FI_WRITE,
 * FI_READ; FI_REMOTE_* are refused: the target application takes no part in RMA). */
enum tfi_cntr_kind { TFI_CNTR_SEND, TFI_CNTR_RECV, TFI_CNTR_WRITE, TFI_CNTR_READ, TFI_CNTR_KINDS };

struct tfi_cq {
	struct fid_cq cq;
	struct tfi_domain *dom;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	struct tfi_cqe *ring;
	size_t cap, head, count;
	struct tfi_ep *eps[TFI_CQ_EPS];
	int n_eps;
	int epfd;   /* FI_WAIT_FD: epoll set of the bound endpoints' eventfds and sig_fd */
	int sig_fd; /* eventfd: fi_cq_signal() */
	int refs;
	unsigned int spin_skip; /* fi_cq_sread: waits left that sleep at once (tfi_spin_start) */
	/* fi_cq_sread asleep, and whether tfi_self.c woke them: an entry pushed by a post (a
	 * message to itself) comes with no eventfd of the engine's */
	unsigned int sleepers, kicks;
};

enum tfi_op_kind {
	TFI_OP_FREE,
	TFI_OP_SEND,
	TFI_OP_RECV,
	TFI_OP_WRITE,
	TFI_OP_READ,
	TFI_OP_ATOMIC,
	TFI_OP_COLL /* tfi_coll.c: result holds its group */
};

/* What a tagged receive does with FI_CLAIM and FI_DISCARD (docs/libfabric.md). */
enum tfi_claim_kind {
	TFI_CLAIM_NONE = 0,
	TFI_CLAIM_PEEK,         /* FI_PEEK | FI_CLAIM: trd_vni_claim, the handle kept by context */
	TFI_CLAIM_PEEK_DISCARD, /* FI_PEEK | FI_DISCARD: trd_vni_discard_first */
	TFI_CLAIM_RECV,         /* FI_CLAIM: trd_vni_recv_claimed */
	TFI_CLAIM_DISCARD,      /* FI_CLAIM | FI_DISCARD: trd_vni_discard */
};

/* A message claimed by FI_PEEK | FI_CLAIM: the context of that call names it. */
struct tfi_claim {
	void *context;
	uint64_t handle;
};

/* Where a transmit stands with respect to the endpoint's queue of held transmits (tfi_txq.c):
 * given to the VNI (or not a transmit), held behind a fence, or a write whose remote CQ data
 * notice waits for room in the VNI's send ring. */
enum { TFI_TXQ_NONE, TFI_TXQ_HELD, TFI_TXQ_NOTICE, TFI_RXQ_HELD, TFI_SELF_RX };
/* operations made in chunks beyond the VNI's contexts, and at most this many in all: an
 * application may post that many sends and receives before one completes */
#define TFI_OPS_CHUNK 256
#define TFI_OPS_MAX   (1u << 16)

/* A write's remote CQ data travels in a message with this VNI tag: bit 63 as untagged
 * messages, which match the tag exactly, so no application receive ever takes it. */
#define TFI_RDATA_TAG  (TFI_MSG_TAG | 1)
#define TFI_RDATA_RECV 4 /* provider-internal receives kept posted for the notices (at most) */

/* One posted operation: its VNI cookie points here. */
struct tfi_op {
	enum tfi_op_kind kind;
	bool comp; /* write a success completion */
	bool tagged;
	bool peek;     /* FI_PEEK: a VNI probe, no buffer */
	uint8_t claim; /* TFI_CLAIM_*: a claim or discard (FI_CLAIM, FI_DISCARD) */
	void *context;
	void *bounce; /* pool buffer (long send, every receive), or NULL */
	void *heap;   /* an inject's copy on the heap when the pool had no room, or NULL */
	size_t len;   /* send: bytes; receive: room */
	struct iovec iov[TFI_IOV_LIMIT];
	size_t iov_n;
	void *result;       /* fetching atomic: where the old value goes */
	unsigned int asize; /* atomic: 4 or 8 */
	uint64_t cflags;    /* RMA and atomics: the completion's flags */
	struct tfi_op *next;
	/* tfi_txq.c: a transmit held (FI_FENCE) keeps what starting it needs; a write with
	 * remote CQ data sends a notice after it completed; rdata: an internal receive of one */
	uint8_t txq;   /* TFI_TXQ_* */
	bool fence;    /* FI_FENCE: starts only when every earlier transmit completed */
	bool rdata;    /* a provider-internal receive of remote CQ data notices */
	bool has_data; /* send: immediate data; write: notice with remote CQ data to follow */
	bool early;    /* send: completed when posted (FI_INJECT_COMPLETE): the VNI's completion
			* only ends it */
	int vop;       /* atomic: the VNI operation */
	struct trd_vni_addr dst;
	const void *sbuf; /* send, write: what the VNI reads; read: where it writes */
	uint64_t vtag, data, raddr, rkey, operand, cmp;
	/* tfi_self.c: a receive's place in posting order and, from any source, its links in
	 * ep->any (dst, vtag and data hold its source, tag and ignore mask) */
	uint64_t seq;
	struct tfi_op *anext, *aprev;
	bool in_any;
	bool ucancel; /* fi_cancel asked the engine to withdraw it: no message to itself takes it */
};

struct tfi_ep {
	struct fid_ep ep;
	struct tfi_domain *dom;
	struct tfi_av *av;
	struct tfi_cq *txcq, *rxcq;
	uint64_t caps;
	uint64_t tx_op_flags, rx_op_flags;
	enum fi_ep_type type; /* FI_EP_RDM or FI_EP_DGRAM */
	bool tx_selective, rx_selective;
	bool enabled;
	bool dead;     /* the engine closed the interface */
	bool rma_seen; /* an RMA or atomic was posted (tfi_place_one_sided) */
	struct trd_vni *vni;
	struct trd_vni_info info;
	struct tfi_name name;
	struct tfi_ep *dnext; /* in dom->eps */
	/* operations: n_ops for the VNI's contexts, then more[] chunks of TFI_OPS_CHUNK made
	 * when those are all in use (held sends and receives wait in them: tfi_txq.c) */
	struct tfi_op *ops, *free_ops;
	unsigned int n_ops;
	struct tfi_op **more;
	unsigned int n_more;
	size_t max_msg;    /* max_msg_size: a message in one buffer */
	size_t pool_msg;   /* a quarter of the pool the engine granted: several iovs */
	unsigned int idle; /* empty polls in a row while operations were outstanding */
	/* probes in a row answered FI_ENOMSG without the engine (tfi_msg.c): empty polls too,
	 * though nothing is outstanding */
	unsigned int probe_idle;
	/* such probes since the last that went to the engine or the last completion: one in
	 * TFI_PROBE_YIELD_EVERY may yield */
	unsigned int probe_misses;
	unsigned int check; /* empty polls since the last look at the engine's state */
	struct tfi_cntr *cntr[TFI_CNTR_KINDS]; /* bound counters (tfi_cntr.c) */
	/* FI_CLAIM: claimed messages by context; room is reserved for every claim posted */
	struct tfi_claim *claims;
	size_t n_claims, cap_claims, claims_posted;
	struct fid_eq *eq;             /* bound EQ: FI_JOIN_COMPLETE (tfi_coll.c) */
	struct tfi_mc *mc[TFI_MC_MAX]; /* joined collective groups */
	unsigned int n_mc;
	/* tfi_txq.c: transmits held in posting order behind a fence, and the remote CQ data
	 * notice receives that could not be posted again */
	struct tfi_op *txq_head, *txq_tail;
	/* tfi_txq.c: receives held in posting order while the VNI had no receive context */
	struct tfi_op *rxq_head, *rxq_tail;
	unsigned int rdata_missing, rdata_posted;
	uint64_t rdata_dropped; /* notices that were not well formed: dropped */
	/* tfi_self.c: messages to itself not received yet (sq), those waiting for a receive
	 * from any source the engine holds to be withdrawn (sp, behind self_cancel), those
	 * claimed (FI_CLAIM); receives from itself (srx) and from any source (any), in posting
	 * order */
	struct tfi_smsg *sq_head, *sq_tail, *sp_head, *sp_tail, *sclaimed;
	struct tfi_op *srx_head, *srx_tail, *any_head, *any_tail;
	struct tfi_op *self_cancel;
	bool self_cancel_owed; /* its trd_vni_cancel found the command ring full */
	uint64_t rx_seq;
	bool self_sent;  /* it sent to itself: its receives from any source wait for progress */
	size_t sq_bytes; /* bytes of waiting messages copied onto the heap */
	/* sends to itself kept in their buffers that a receive took, their CQ entry waiting for
	 * room (op->vop: the status) */
	struct tfi_op *sdone_head, *sdone_tail;
};

/* tfi_init.c */
int tfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		void *context);
int tfi_errno(int vni_status);

/* tfi_domain.c */
int tfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		    void *context);
int tfi_av_resolve(struct tfi_av *av, fi_addr_t addr, struct trd_vni_addr *out);
fi_addr_t tfi_av_reverse(struct tfi_av *av, uint32_t app, uint32_t proc);

/* tfi_cq.c */
int tfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		void *context);
int tfi_cq_attach(struct tfi_cq *cq, struct tfi_ep *ep);
void tfi_cq_detach(struct tfi_cq *cq, struct tfi_ep *ep);
size_t tfi_cq_room(const struct tfi_cq *cq);
void tfi_cq_push(struct tfi_cq *cq, const struct tfi_cqe *e);
int tfi_trywait(struct fid_fabric *fabric, struct fid **fids, int count);
int tfi_cq_watch(struct tfi_cq *cq, int fd);
/* The FI_WAIT_FD object of a CQ or a counter: an epoll set (epfd) of the bound endpoints' VNI
 * eventfds and an eventfd of its own (sig_fd), both -1 for FI_WAIT_NONE. */
int tfi_wait_open(int *epfd, int *sig_fd);
void tfi_wait_close(int epfd, int sig_fd);
int tfi_wait_control(int epfd, int command, void *arg);
int tfi_wait_watch(int epfd, int fd);
void tfi_wait_unwatch(int epfd, const struct tfi_ep *ep);
void tfi_wait_drain(int sig_fd, struct tfi_ep *const *eps, int n_eps);
/* tfi_clock.c: CLOCK_MONOTONIC in ns and in ms. */
uint64_t tfi_now_ns(void);
uint64_t tfi_now_ms(void);
/* The poll before a blocking wait sleeps (fi_cq_sread, fi_cntr_wait; docs/libfabric.md):
 * tfi_spin_start gives the end (ns, 0: no spin) and tfi_spin_again, until it answers false,
 * yields the CPU once between two looks; *skip counts the waits that sleep at once after a
 * yield lost the CPU to another process. */
uint64_t tfi_spin_start(unsigned int *skip);
bool tfi_spin_again(uint64_t *end, unsigned int *skip, uint64_t deadline_ms);
void tfi_drain(int fd);

/* tfi_domain.c: remote regions on each endpoint's VNI */
int tfi_mr_attach_ep(struct tfi_domain *d, struct tfi_ep *ep);
/* The VNI key of the application's key @p key in domain @p d (the same in every process of
 * the job; never 0, which the VNI reserves). */
uint64_t tfi_wire_key(const struct tfi_domain *d, uint64_t key);

/* tfi_rma.c */
extern struct fi_ops_rma tfi_rma_ops;
extern struct fi_ops_atomic tfi_atomic_ops;
int tfi_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
		     struct fi_atomic_attr *attr, uint64_t flags);
/* tfi_cntr.c. Caller holds the domain lock (except tfi_cntr_open, tfi_cntr_trywait). */
int tfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
		  void *context);
int tfi_cntr_bind(struct tfi_ep *ep, struct fid *cntr, uint64_t flags);
void tfi_cntr_ep_close(struct tfi_ep *ep);
int tfi_cntr_trywait(struct fid *fid);
/* An operation of @p ep completed: flags FI_SEND or FI_RECV (messages), FI_WRITE (RMA write,
 * base atomic) or FI_READ (RMA read, fetch/compare atomic); err 0 counts a success, anything
 * else an error. Call it for every completion, whether or not it writes a CQ entry
 * (FI_SELECTIVE_COMPLETION, inject). Caller holds the domain lock. */
void tfi_cntr_report(struct tfi_ep *ep, uint64_t flags, int err);

/* tfi_ep.c */
int tfi_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		 void *context);
int tfi_post_check(struct tfi_ep *ep);
bool tfi_tx_comp(const struct tfi_ep *ep, uint64_t flags);

/* tfi_msg.c */
extern struct fi_ops_msg tfi_msg_ops;
extern struct fi_ops_tagged tfi_tagged_ops;
/* Where receive @p op (len its room, iov its buffers) is written: a pool buffer up to
 * bounce_max or for several iovs, else the application's one buffer (NULL for room 0). false:
 * several iovs and no pool room yet. */
bool tfi_rx_buf(struct tfi_ep *ep, struct tfi_op *op, void **buf);

/* tfi_progress.c */
void tfi_ep_progress(struct tfi_ep *ep);
/* A refused post's VNI error as libfabric's: -EAGAIN makes progress first (-FI_EAGAIN), a
 * reset marks the endpoint dead (-FI_ECONNRESET), anything else is returned as it is. */
int tfi_post_rc(struct tfi_ep *ep, int rc);
int tfi_ep_arm(struct tfi_ep *ep);
bool tfi_ep_yield_due(const struct tfi_ep *ep);
/* A free operation: from the free list, which grows by a chunk when it is empty (up to
 * TFI_OPS_MAX in all); NULL when it may not. */
struct tfi_op *tfi_op_get(struct tfi_ep *ep);
void tfi_op_put(struct tfi_ep *ep, struct tfi_op *op);
/* Every operation of @p ep: how many, the i-th, and whether @p op is one of them. */
unsigned int tfi_op_total(const struct tfi_ep *ep);
struct tfi_op *tfi_op_nth(const struct tfi_ep *ep, unsigned int i);
bool tfi_op_ours(const struct tfi_ep *ep, const struct tfi_op *op);
/* FI_INJECT_COMPLETE: a send whose bytes left the application's buffer when it was posted
 * completes now (CQ entry, counter); the VNI's own completion later only ends it. */
void tfi_send_early(struct tfi_ep *ep, struct tfi_op *op);
/* Append @p op to the queue of @p head and @p tail (linked by op->next: held transmits and
 * receives, tfi_self.c's receives and ended sends); take the first off one (not empty). */
void tfi_opq_append(struct tfi_op **head, struct tfi_op **tail, struct tfi_op *op);
struct tfi_op *tfi_opq_pop(struct tfi_op **head, struct tfi_op **tail);
/* The CQ entry (with comp) and counter of a send that completed when it was posted. */
void tfi_send_posted(struct tfi_ep *ep, void *context, bool tagged, size_t len, bool comp);

/* tfi_place.c: where an unbound process runs (docs/libfabric.md, "Where the process runs") */
enum tfi_place_verdict {
	TFI_PLACE_MOVED,   /* it was on every CPU it may use: now on those without the engine */
	TFI_PLACE_OFF,     /* FI_TOROID_PLACE=off */
	TFI_PLACE_BOUND,   /* the user or the launcher bound it: left alone */
	TFI_PLACE_UNKNOWN, /* the engine does not publish its CPUs */
	TFI_PLACE_NO_ROOM, /* every CPU of the process is the engine's too */
	TFI_PLACE_ALREADY, /* none of its CPUs is the engine's */
	TFI_PLACE_FAILED,  /* sched_getaffinity or sched_setaffinity failed */
	TFI_PLACE_DEFAULT, /* mpirun's default binding put it on the engine's CPU: now off it */
	TFI_PLACE_MAX
};
/* Who bound the process: no launcher (the mask tells), Open MPI's mpirun by its default policy
 * (no option asked for it), or as the user asked (--bind-to other than none). */
enum tfi_launcher { TFI_LAUNCH_NONE, TFI_LAUNCH_DEFAULT, TFI_LAUNCH_CHOSEN };
enum tfi_place_verdict tfi_place_decide(const cpu_set_t *cur, const cpu_set_t *usable,
					const cpu_set_t *engine, enum tfi_launcher launcher,
					cpu_set_t *out);
int tfi_place_parse_list(const char *s, cpu_set_t *set);
/* Place this process: @p now its mask after, @p wide the mask it may get back (tfi_place_adapt) */
enum tfi_place_verdict tfi_place_self(const uint64_t engine_mask[TRD_VNI_CPU_WORDS], cpu_set_t *now,
				      cpu_set_t *wide);
const char *tfi_place_verdict_name(enum tfi_place_verdict v);
/* Empty polls in a row before a poller on a crowded host yields (tfi_yield_decide). */
#define TFI_SPIN_POLLS 64
/* A probe loop that finds nothing yields at every 4th probe it answers itself (tfi_msg.c):
 * 0.5 us each between, so a sender it shares a CPU with waits a few us, not a time slice,
 * and a loop polling for rare messages pays the yield's system call at one probe in 4 (at
 * every probe, an empty MPI_Iprobe took 2.4 us, at every 8th the 2-rank Probe loop of
 * docs/vni.md lost a fifth) */
#define TFI_PROBE_YIELD_EVERY 4
/* Does a poll that found nothing for @p idle polls in a row (0: it found something) yield the
 * CPU, under FI_TOROID_YIELD=auto? @p busy: the processes attached to the engine and its thread
 * (trd_vni_busy_procs); @p cpus: the CPUs this process may run on; @p engine_here: 1 if one of
 * them is the engine's, 0 if none, -1 unknown; @p runnable: the threads runnable on the host,
 * asked only when needed. docs/libfabric.md, "Waiting and the CPU". */
bool tfi_yield_decide(uint32_t idle, unsigned int busy, unsigned int cpus, int engine_here,
		      unsigned int (*runnable)(void));
void tfi_place_once(struct trd_vni *vni);
/* A process the provider moved off the engine's CPUs gets them back while it computes more than
 * it waits in the provider and no other program's thread waits for a CPU, and loses them when
 * it waits more or the host fills up (docs/libfabric.md, "Where the process runs"). Judged every
 * TFI_ADAPT_WINDOW_NS from the gaps between provider calls (a gap of TFI_AWAY_NS or more: away,
 * computing). tfi_place_adapt_decide: the new state (true: on every CPU) from the old one, the
 * nanoseconds away within a window of @p window, the host's runnable threads, its CPUs and the
 * engine's count of its processes and thread (@p procs, 0 unknown): runnable threads the engine
 * counts are this job's ranks and their peers, which a process that widens makes room for. */
#define TFI_AWAY_NS         100000u
#define TFI_ADAPT_WINDOW_NS 10000000u
/* A process that computes without calling the provider is judged by a thread of its own every
 * TFI_WATCH_NS (tfi_place.c, the watch): between two polls a window never ends. */
#define TFI_WATCH_NS 2000000u
/* A program that computes in short steps with a poll after each (MPI_Test in a loop) is away
 * too: in a window of at least TFI_STEP_POLLS polls, half of them after a gap of TFI_STEP_NS
 * or more, those gaps count as away; time given away in a poll's yield (tfi_place_yield) is
 * left out of the window. */
#define TFI_STEP_NS    500u
#define TFI_STEP_POLLS 64u
bool tfi_place_adapt_decide(bool wide, uint64_t away, uint64_t window, unsigned int runnable,
			    unsigned int cpus, unsigned int procs);
/* Called at each poll of a completion queue or counter: cheap (a clock read) but every window. */
void tfi_place_adapt(unsigned int (*runnable)(void));
/* The first RMA or atomic posted on an endpoint without FI_TAGGED (Open MPI's OFI BTL, which
 * osc rdma uses): a process moved off the engine's CPUs gets them back at its next window and
 * keeps them (docs/libfabric.md, "One-sided MPI"). */
void tfi_place_one_sided(void);
#define TFI_COMPUTE_MOVABLE 0x10000u
/* Tell the engine of @p vni what the placement measured (trd_vni_hint_compute), if it did: at
 * every poll of an endpoint, so that each interface of the process carries the last window. */
void tfi_place_hint(struct trd_vni *vni);
/* Start judging: @p narrow the mask the process was moved to, @p all the one it had; both the
 * same: a process off the engine's CPUs by itself, measured for the engine only
 * (tfi_params.compute, trd_vni_hint_compute) and never moved. */
void tfi_place_adapt_start(const cpu_set_t *all, const cpu_set_t *narrow);
/* At the end of a poll, and after a blocking wait: the time until now was spent inside the
 * provider (copying a long message, asleep), not away from it. */
void tfi_place_adapt_inside(void);
/* sched_yield() in an empty poll, the time it gave away counted for tfi_place_adapt */
void tfi_place_yield(void);
unsigned int tfi_host_runnable(void);

/* tfi_copy.c: copies between the provider's memory and application buffers (@p app side)
 * through the kernel: 0, or -FI_EFAULT when a byte of the application's side is not
 * accessible (never a crash). Gather and scatter take at most TFI_IOV_LIMIT iovs. */
int tfi_copy_in(void *dst, const void *app_src, size_t len);
int tfi_copy_out(void *app_dst, const void *src, size_t len);
/* Whether a pointer out-param @p app (a fid an open returns) is writable: its value read and
 * written back through the kernel. 0, or -FI_EFAULT (not on a hot path: two system calls). */
int tfi_out_ptr(void *app);
int tfi_gather(void *dst, const struct iovec *app_iov, size_t n);
int tfi_scatter(const struct iovec *app_iov, size_t n, const void *src, size_t len);
/* Copy up to @p len bytes from the application's @p src iovs into its @p dst iovs, in one system
 * call (or a memcpy between recently checked pages): 0, or -FI_EFAULT when a byte of either
 * side is not accessible (tfi_gather and tfi_scatter tell which). */
int tfi_copy_iov(const struct iovec *dst, size_t nd, const struct iovec *src, size_t ns,
		 size_t len);

/* Whether @p fid is one of this provider's objects of that class (not another provider's,
 * not a forged one): checked before a fid an application passes in is used. */
bool tfi_is_cq(const struct fid *fid);
bool tfi_is_cntr(const struct fid *fid);
bool tfi_is_av(const struct fid *fid);
bool tfi_is_eq(const struct fid *fid);

/* tfi_coll.c. tfi_coll_complete: caller holds the domain lock. */
struct tfi_mc;
extern struct fi_ops_collective tfi_coll_ops;
int tfi_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
	       void *context);
int tfi_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
	     void *context);
int tfi_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			 struct fi_collective_attr *attr, uint64_t flags);
void tfi_coll_complete(struct tfi_ep *ep, struct tfi_op *op, int status);

/* tfi_progress.c: end an operation that never reached the VNI, or whose start failed */
void tfi_op_fail(struct tfi_ep *ep, struct tfi_op *op, int status);
/* ... or that the provider ended itself (tfi_self.c): as a VNI completion would */
void tfi_op_done(struct tfi_ep *ep, struct tfi_op *op, int status, size_t len,
		 struct trd_vni_addr peer, uint64_t tag, const uint64_t *data);

/* tfi_self.c: messages an endpoint sends to itself (docs/libfabric.md, "Messages to itself").
 * Caller holds the domain lock. */
/* A send to itself that no receive takes yet is copied onto the heap and completes, up to this
 * long and while less than TFI_SELF_QUEUE_MAX bytes wait so (an inject always); else it waits
 * in its buffer and completes when a receive takes it (as over TCP: no second copy) */
#define TFI_SELF_EAGER_MAX 65536u
#define TFI_SELF_QUEUE_MAX (64u << 20)
struct tfi_smsg;
/* Is @p a this endpoint, and are its messages to itself matched here (FI_TOROID_SELF)? */
bool tfi_self_is(const struct tfi_ep *ep, struct trd_vni_addr a);
/* A send to itself: matched against its receives or queued, and completed now; or, when
 * TFI_SELF_QUEUE_MAX bytes wait already, kept in its buffer until a receive takes it. @p copy:
 * its buffer is free on return (always copied). */
ssize_t tfi_self_send(struct tfi_ep *ep, const struct iovec *iov, size_t n, uint64_t vtag,
		      bool tagged, void *context, bool comp, const uint64_t *data, bool copy);
/* A held send to itself (tfi_txq.c) started: 1 (complete it now), 2 (kept: it completes when a
 * receive takes it), -EAGAIN or an error. */
int tfi_self_start(struct tfi_ep *ep, struct tfi_op *op);
/* Receive @p op from @p src (itself or any) with @p vtag and @p ignore: 1 when it was taken
 * here (a queued message delivered, or kept as a receive from itself), 0 when the VNI must
 * get it (from any source: it is recorded in ep->any first), -FI_EAGAIN (no CQ room). */
int tfi_self_recv(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
		  uint64_t ignore);
/* Receive @p op from any source was given to the VNI (or held): recorded in posting order. */
void tfi_self_any_add(struct tfi_ep *ep, struct tfi_op *op);
/* Does @p context name a message claimed here (FI_PEEK | FI_CLAIM of a message to itself)? */
bool tfi_self_claim_known(const struct tfi_ep *ep, const void *context);
/* A probe (op->peek; @p ck its claim kind): 1 answered here, 0 ask the VNI, -FI_EAGAIN. */
int tfi_self_peek(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
		  uint64_t ignore, int ck);
/* FI_CLAIM (or with FI_DISCARD) of a message claimed here with @p op's context: 1 done,
 * 0 not ours, -FI_EAGAIN. */
int tfi_self_claimed(struct tfi_ep *ep, struct tfi_op *op, bool discard);
/* A VNI completion of receive @p op: true when tfi_self.c ended it (a withdrawn receive
 * that took a message to itself). */
bool tfi_self_complete(struct tfi_ep *ep, struct tfi_op *op, int status);
/* fi_cancel of a receive from itself: 1 cancelled, 0 not one, -FI_EAGAIN (no CQ room). */
int tfi_self_cancel(struct tfi_ep *ep, struct tfi_op *op);
/* Withdrawals owed, waiting messages matched again, receives failed on a dead interface. */
void tfi_self_progress(struct tfi_ep *ep);
/* The endpoint closes: its queued messages are freed. */
void tfi_self_close(struct tfi_ep *ep);
/* Remove held receive @p op from the queue (tfi_txq.c): true if it was there. */
bool tfi_rxq_remove(struct tfi_ep *ep, struct tfi_op *op);
/* tfi_cq.c: wake an fi_cq_sread asleep on @p cq (an entry came without the engine). */
void tfi_cq_kick(struct tfi_cq *cq);

/* tfi_txq.c. Caller holds the domain lock. */
/* Must a transmit posted now (@p fence: with FI_FENCE) be held instead of started? */
bool tfi_txq_hold(const struct tfi_ep *ep, bool fence);
/* Hold @p op, filled with what starting it needs, behind the queue's tail. */
void tfi_txq_add(struct tfi_ep *ep, struct tfi_op *op, bool fence);
/* Give @p op (filled as for tfi_txq_add) to the VNI: its VNI status; for a send to itself
 * tfi_self_start's answer (1: complete it, 2: kept by tfi_self.c). */
int tfi_tx_start(struct tfi_ep *ep, struct tfi_op *op);
/* Start what the queue allows, post notice receives again; from tfi_ep_progress. */
void tfi_txq_progress(struct tfi_ep *ep);
/* Hold receive @p op (len its room, iov its buffers) from @p src with @p vtag and its @p ignore
 * mask until the VNI has a receive context beyond those kept for probes and claims
 * (tfi_rx_reserve); a pool buffer it had is given back, and its buffer is chosen when it is
 * given to the VNI (tfi_rx_buf). Later receives are held behind it. */
void tfi_rxq_add(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr src, uint64_t vtag,
		 uint64_t ignore);
/* Receive contexts a plain receive leaves to probes and claims: they never wait behind held
 * receives (an MPI_Iprobe that spun until every held receive was posted could wait for good). */
unsigned int tfi_rx_reserve(const struct tfi_ep *ep);
/* Give held receives to the VNI, oldest first, while it takes them. */
void tfi_rxq_progress(struct tfi_ep *ep);
/* Withdraw held receive @p op (fi_cancel): 1 if it was held and is now completed as cancelled,
 * 0 if it is not held, -FI_EAGAIN when the receive CQ has no room for its entry yet. */
int tfi_rxq_cancel(struct tfi_ep *ep, struct tfi_op *op);
/* A write with remote CQ data completed: send its notice. 0 (the operation goes on) or a
 * negative errno to complete it with. */
int tfi_rdata_notice(struct tfi_ep *ep, struct tfi_op *op);
/* A notice receive completed: the target's CQ entry, and the receive posted again. */
void tfi_rdata_complete(struct tfi_ep *ep, struct tfi_op *op, int status, size_t len,
			struct trd_vni_addr peer, const uint64_t *data);
/* fi_enable: post the notice receives of an endpoint that may be the target of one. */
void tfi_rdata_enable(struct tfi_ep *ep);

/* tfi_stubs.c: tables whose every entry returns -FI_ENOSYS */
extern struct fi_ops_rma tfi_no_rma_ops;
extern struct fi_ops_atomic tfi_no_atomic_ops;
extern struct fi_ops_collective tfi_no_collective_ops;
int tfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int tfi_no_control(struct fid *fid, int command, void *arg);
int tfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context);
int tfi_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
		      void *context);
int tfi_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		     struct fid_wait **waitset);
int tfi_no_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
		       void *context);
int tfi_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		     struct fid_poll **pollset);
int tfi_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
		   void *context);
int tfi_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		   void *context);
int tfi_no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			    struct fi_collective_attr *attr, uint64_t flags);
int tfi_no_av_insertsvc(struct fid_av *av, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context);
int tfi_no_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service,
			size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context);
int tfi_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
		  void *context);
int tfi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep,
		  void *context);
int tfi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		  void *context);
int tfi_no_setname(fid_t fid, void *addr, size_t addrlen);
int tfi_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int tfi_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen);
int tfi_no_listen(struct fid_pep *pep);
int tfi_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int tfi_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen);
int tfi_no_shutdown(struct fid_ep *ep, uint64_t flags);
int tfi_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		void *context);
int tfi_no_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags);

#endif /* TOROID_TFI_H */
