/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's shared header: the types its state machines share, nothing else. What one
 * state machine lets the others call is in its own private header (docs/vni.md, "Applications
 * are plain processes", maps each file, its header and what it may call; the `layers` test
 * holds the map):
 *   dispatch_pvt.h  dispatch.c: a command, a frame or the tick handed to its state machine
 *   iface_pvt.h     iface.c, sock.c, seg.c: the interface: queues, attach and death, segment
 *   vmem_pvt.h      vmem.c: a process's memory
 *   tx_pvt.h        tx.c, tx_post.c: transmit
 *   rx_pvt.h        rx.c, rx_grant.c: receive
 *   order_pvt.h     order.c: ordered pairs, both ends
 *   rma_pvt.h       rma.c: one-sided access, both ends
 *   coll_pvt.h      coll.c: collectives posted by processes
 *   proto_pvt.h     proto_tx.c: posting protocol messages; the reply queue
 *   tel_pvt.h       vni_tel.c: /toroid/vni
 *
 * Objects:
 *  - vif: one attached process: its socket, its eventfd, the segment (memfd) mapped here, the
 *    engine's private copy of every context it accepted, its queue of sends ready to inject,
 *    its posted receives and its unexpected (staged) messages;
 *  - vtx: one message being sent to one destination (a multicast has a parent vtx and one
 *    child per destination), named on the wire by msg_id = index | generation << 16;
 *  - vrx: one message being received (granted or staged), named by grant_id likewise;
 *  - hints: requests to send that were refused, kept (bounded) so that a receive posted later
 *    can grant them at once (a proactive CTS; the sender discards a duplicate).
 * Everything runs in the thread that polls the node: no locks (but for the telemetry
 * snapshot, vni_tel.c).
 */
#ifndef TRD_VNI_SERVICE_PVT_H
#define TRD_VNI_SERVICE_PVT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/un.h>

#include <rte_log.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>
#include <toroid/vni_wire.h>

#include "vni_alloc.h"
#include "vni_seg.h"

extern int trd_vni_logtype;
#define VNI_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, trd_vni_logtype, "toroid vni: " fmt "\n", ##__VA_ARGS__)

#define SVC_MAX_IFS             256
#define SVC_N_TX                16384 /* index up to 16 bits, generation 16 bits */
#define SVC_RX_IDX_BITS         20    /* grant id: index (20 bits) | generation (12 bits) << 20 */
#define SVC_RX_IDX_MASK         ((1u << SVC_RX_IDX_BITS) - 1)
#define SVC_RX_GEN_MASK         (UINT32_MAX >> SVC_RX_IDX_BITS)
#define SVC_RX_MAX              SVC_RX_IDX_MASK /* default and max rx_max: index 1..2^20-1 */
#define SVC_N_HINTS             64
#define SVC_UQ_BITS             6   /* an interface's unexpected messages by source: 64 lists */
#define SVC_N_CONNS             256 /* default: connections not yet registered, all peers */
#define SVC_MAX_CONNS           4096
#define SVC_CONNS_PER_PID       4 /* ... of one process */
#define SVC_CMD_BURST           32
#define SVC_RX_BURST            32
#define SVC_INJECT_BUDGET       64
#define SVC_SOCK_PERIOD_US      50
#define SVC_TIMER_PERIOD_US     20
#define SVC_SWEEP_PERIOD_US     50000
#define SVC_FULL_EVERY          16 /* a quiet round is whole once in this many (a power of 2) */
#define SVC_REGISTER_TIMEOUT_US 1000000 /* a connection registers within this or is closed */
#define SVC_TEL_PERIOD_US       10000   /* telemetry snapshots */
#define SVC_N_MRS               256     /* memory regions per interface (one-sided access) */
#define SVC_LOCAL_CHUNK         262144  /* bytes copied per turn between two local processes */
#define SVC_LOCAL_ROUND         1048576 /* ... and at most about this many per scheduler round */
#define SVC_LOCAL_DIRECT_MAX    131072  /* longest message delivered at once to a local receive */
#define SVC_PVM_MIN             16384   /* copies this long use process_vm_* (vmem.c) */
#define SVC_CMA_MIN             65536   /* local messages this long: read by the receiver */
#define SVC_HOLD_US             1000    /* default cma_hold_us: then a held message is staged */
#define SVC_RMA_STALL_US        500000  /* default and largest rma_stall_us (rma.c) */
#define SVC_CMA_WAIT_US         20000 /* default cma_wait_us: then a request not taken is withdrawn */
#define SVC_HDR_MAX             1024 /* default hdr_max: header-only messages per interface */
#define SVC_NOSPC_BACKOFF       8    /* a request refused -ENOSPC waits at most 8 retry_us */
enum { SVC_CMA_NONE, SVC_CMA_WAIT, SVC_CMA_DONE, SVC_CMA_FALLBACK }; /* vrx.cma */

enum tx_state {
	TX_FREE = 0,
	TX_REQ,       /* ready: inject the eager message or the RTS */
	TX_WAIT,      /* waiting for ACK / CTS / NAK */
	TX_BACKOFF,   /* refused: ask again at due */
	TX_DATA,      /* ready: inject the next chunk */
	TX_FIN,       /* ready: inject the FIN */
	TX_WAIT_DONE, /* waiting for DONE */
	TX_ABORT,     /* ready: inject the ABORT */
	TX_DRAIN,     /* finished: waiting until the engine no longer reads the buffer */
	TX_MCAST,     /* a multicast parent: waiting for its children */
	TX_HOLD,      /* ordered: waits until fewer than SVC_ORD_WINDOW earlier ordered
		       * messages to its destination wait for their acceptance (order.c) */
	TX_CMA,       /* its receiving process was asked to read it (CMA): waits for the
		       * answer, or until due (cma_wait_us), then TX_DATA again (tx_local.c) */
	TX_PENDING,   /* accepted as its header only (ACK to its RTS): waits for its CTS,
		       * never asked again (rx.c, accept_hdr) */
};

enum list_kind { L_NONE = 0, L_TIMER, L_DRAIN, L_WAIT };

struct vif;
struct vord;

struct vtx {
	uint32_t idx;
	uint16_t gen;
	uint8_t state;
	uint8_t lkind;
	uint32_t key; /* random, drawn at allocation: replies must echo it */
	bool eager, rts_sent, in_rq;
	bool uaddr; /* the data is at laddr in the process's own memory (TRD_VNI_SF_VADDR) */
	bool fifo;  /* granted with TRD_VW_F_FIFO: sent as DATA messages, not puts */
	bool cma;   /* waits while the receiving process reads the data itself (tx_local.c) */
	uint64_t cma_since;  /* when it asked (us) */
	uint64_t held_since; /* when its receiver first held it at its sender (rx.c), or 0 */
	bool hold_nak;       /* the NAK on its way is that hold's: asked again when it ends */
	struct vif *vif;
	struct vtx *parent;
	uint32_t ctx, sflags, doorbell;
	uint32_t dst_app, dst_proc, dst_rank;
	struct trd_coord dst;
	uint64_t tag, data;
	uint32_t len, off;
	uint32_t cut; /* bytes a shorter CTS left out (the receive took the first len) */
	const uint8_t *src;
	uint32_t grant;
	uint64_t rkey, roff;
	uint16_t ctr;
	int32_t status;
	uint64_t due, noproc_deadline;
	uint32_t backoff;
	uint32_t n_left; /* multicast parent */
	/* multicast parent: the bytes its children send by copy (an eager message, or a long
	 * one's last packet when it is too short to send zero-copy), copied once and shared
	 * (engine/core/payload.c); pay_off is where they start in the message */
	struct trd_payload *pay;
	uint32_t pay_off;
	/* one-sided op (rma.c): rma is its completion kind (TRD_VNI_CPL_WRITE, READ, ATOMIC), 0
	 * for a send; rkey and roff are the target region's key and address; off counts the
	 * bytes requested, acked those answered in order */
	uint8_t rma;
	bool refused; /* a chunk was refused (-ECONNREFUSED): ask again once all answered */
	uint32_t aop, acked, inflight;
	uint64_t laddr, operand, compare, old;
	uint64_t heard;      /* when it last sent or was answered: silence means lost frames */
	uint32_t tries;      /* atomic: times it was sent */
	uint32_t aseq;       /* atomic: its sequence number towards dst_rank (struct vaseq) */
	bool aseq_held;      /* atomic: aseq is open and must be closed when the tx is freed */
	struct vord *opair;  /* ordered, not yet accepted: its pair (order.c), else NULL */
	uint32_t oseq;       /* ordered: its sequence number in the pair */
	TAILQ_ENTRY(vtx) hq; /* ordered, TX_HOLD: its pair's held messages */
	TAILQ_ENTRY(vtx) rq; /* owner's ready queue */
	TAILQ_ENTRY(vtx) lq; /* service list by lkind */
	TAILQ_ENTRY(vtx) oq; /* owner's list of every tx */
};
TAILQ_HEAD(vtx_list, vtx);

enum rx_state { RX_FREE = 0, RX_RECV, RX_STAGED };

struct vrecv {
	uint32_t idx;
	bool busy;
	uint32_t flags, src_app, src_proc, cap, doorbell;
	uint64_t tag, ignore, buf; /* ignore: tag bits that match anything (all: any tag) */
	uint64_t data;             /* the matched message's immediate data */
	bool has_data;
	bool vaddr;      /* buf is an address in the process's memory (TRD_VNI_RF_VADDR) */
	bool cma_out;    /* a TRD_VNI_CQE_CMA request for it waits for its answer (tx_local.c) */
	struct vrx *cma; /* the message that request is for, while it lives */
	bool posted;     /* waits in its posted list (not yet bound to a message) */
	TAILQ_ENTRY(vrecv) pq; /* posted: its source's list, or the any-source one (rx_pvt.h) */
	uint64_t pseq;         /* posted: its place in the posting order */
};
TAILQ_HEAD(vrecv_list, vrecv);

struct vrx {
	uint32_t idx;
	uint16_t gen;
	uint8_t state;
	bool in_uq, discard; /* discard: dropped unread; its sender gets 0 (FIN, or next RTS) */
	bool claimed;        /* reserved by a claim: in no queue a receive or probe searches */
	bool ungranted;      /* claimed while its sender was refused, or accepted as its header
			      * only: no CTS yet (docs/vni.md) */
	bool hdr;            /* accepted as its header only (ACK to its RTS): its sender waits
			      * for the CTS without asking again; counted in vif.n_hdr */
	bool fifo;           /* granted into a receive in process memory: DATA messages */
	bool direct;         /* written by a sender on this engine, not by the node's puts (tx.c) */
	int32_t fault;       /* a write into that receive failed: it completes with this */
	uint8_t cma; /* SVC_CMA_*: the receiving process reads the message itself (tx_local.c) */
	uint32_t claim_key; /* the claim handle's upper half */
	struct vif *vif;
	struct vrecv *recv;
	uint32_t src_rank;
	struct trd_coord src;
	uint32_t src_msg, src_key, src_app, src_proc;
	uint64_t tag, data;
	bool has_data;
	uint32_t len;
	int64_t soff; /* staging offset, or -1 */
	uint64_t rkey, roff;
	TAILQ_ENTRY(vrx) uq; /* vif's unexpected messages, arrival order */
	TAILQ_ENTRY(vrx) us; /* ... and those of its source's list (vif.uqs), arrival order */
	TAILQ_ENTRY(vrx) aq; /* service's active grants and staged messages */
	TAILQ_ENTRY(vrx) hq; /* hdr: its vif's messages held as their header only */
};
TAILQ_HEAD(vrx_list, vrx);

struct vhint {
	bool used;
	uint32_t grant; /* 0: waiting for a receive or staging */
	uint32_t src_rank, msg_id, key, src_app, src_proc, len;
	struct trd_coord src;
	uint64_t tag, data;
	bool has_data;
	bool ordered; /* an ordered request: (ostream, oseq) from its header (order.c) */
	uint32_t ostream, oseq;
	struct vif *vif;
	uint64_t stamp;
};

TAILQ_HEAD(vord_list, vord);

enum ep_kind { EP_LISTEN = 1, EP_KICK, EP_CONN, EP_VIF };

struct ep_ref {
	enum ep_kind kind;
	void *ptr;
};

struct vconn {
	bool used;
	int fd;
	int pidfd; /* the connecting process (SO_PEERPIDFD at accept), or -1 */
	int pid;   /* its pid and uid (SO_PEERCRED at accept; -1: unknown) */
	int64_t uid;
	uint64_t deadline;
	struct ep_ref ep;
};

struct vif {
	struct trd_vni_svc *s;
	bool dead;
	unsigned int refs; /* vtx and vrx naming it, plus one while attached */
	int sock, efd;
	int pid, uid;
	int pidfd; /* the attached process, taken at accept: its exit ends the interface even if a
		    * child it forked keeps the socket open */
	int mem_fd, maps_fd; /* its /proc/self/mem and maps as it passed them at attach (vmem.c),
			      * or -1: bound to its address space, worthless after exec or exit */
	uint32_t proto;      /* the attach protocol version its library speaks */
	bool cma_off;        /* the kernel refused it process_vm_readv: no more CMA requests */
	bool pidns_same;     /* in the engine's pid namespace (/proc/PID/ns/pid at attach): its pid
			      * means the same process to another attached process (CMA) */
	uint32_t cma_out;    /* its CMA requests not answered yet (each holds a queue entry) */
	bool pvm_off;  /* the kernel refused process_vm_readv/writev on it: mem_fd only (vmem.c) */
	bool mem_gone; /* an access found that address space gone: requests for it are refused
			* as for a process not attached until the sweep ends the interface */
	uint8_t *base;
	size_t size;
	struct trd_vni_seg *seg;
	struct rte_ring *cmdq, *cplq;
	uint32_t cmdq_size, cplq_size;
	/* The engine's own index into each queue (it is the only consumer of one and the only
	 * producer of the other): what the application writes in the rings' headers (size, mask,
	 * indices) is never used to compute an address. */
	uint32_t cmd_cons, cpl_prod;
	struct trd_vni_sctx *sctx;
	struct trd_vni_rctx *rctx;
	uint8_t *ctxr, *pool;
	volatile uint64_t *db;
	uint32_t app, proc, n_send, n_recv, n_db, short_max, slot;
	uint64_t pool_size;
	struct trd_mr *mr;
	bool extmem;           /* registered as external memory and DMA-mapped for the NICs */
	unsigned int n_mapped; /* devices it is DMA-mapped for */
	uint8_t *sbusy;
	struct vrecv *recvs;
	struct vtx_list rq, txs;
	/* receives posted, not yet bound to a message: by hash of their source, or from any
	 * source (TRD_VNI_ANY in a field), each list in posting order (rx_pvt.h) */
	struct vrecv_list posted_src[1u << SVC_UQ_BITS];
	struct vrecv_list posted_any;
	uint32_t n_posted;
	uint64_t post_seq; /* receives posted so far: vrecv.pseq */
	struct vrx_list uq;
	struct vrx_list uqs[1u << SVC_UQ_BITS]; /* uq again, by hash of the source (rx_pvt.h) */
	struct vrx_list hdrs; /* messages held as their header only, oldest first (rx_grant.c) */
	TAILQ_ENTRY(vif) rr;
	bool in_rr, wake;
	bool broken; /* its process broke a queue: closed at the next socket look */
	uint64_t staged;
	uint32_t n_hdr; /* its messages accepted as their header only, not yet granted */
	uint32_t n_rx;  /* vrx naming it: granted, staged or held as their header only */
	uint64_t tx_msgs, tx_pkts, tx_bytes, rx_msgs, rx_bytes, naks;
	uint32_t n_uq;           /* messages in uq */
	bool hint_maybe;         /* refused requests to send may wait for it: a hint names it */
	uint64_t tx_pkts_shared; /* injected while another interface was waiting too */
	struct vmr *mrs;         /* SVC_N_MRS memory regions (rma.c), allocated at the first */
	unsigned int n_mrs;
	struct vord_list ords; /* ordered pairs naming it (order.c) */
	struct ep_ref ep;
	struct vmu *mu; /* its messaging-unit objects (mu.c), or NULL */
};

/* An interface's posted-receive lists, empty (at attach, and when its process is gone). */
static inline void
svc_posted_init(struct vif *v)
{
	TAILQ_INIT(&v->posted_any);
	for (unsigned int i = 0; i < RTE_DIM(v->posted_src); i++)
		TAILQ_INIT(&v->posted_src[i]);
	for (unsigned int i = 0; v->recvs != NULL && i < v->n_recv; i++)
		v->recvs[i].posted = false;
	v->n_posted = 0;
}

TAILQ_HEAD(vif_list, vif);

/* A collective a process posted (coll.c): one per group mask (1..7) at a time on a node. */
#define SVC_N_COLL 8
struct vcoll {
	struct vif *vif; /* NULL: free; else held by a reference */
	uint32_t idx;    /* its send context */
	uint16_t ctr;    /* the node's counter that trd_comb_post() counts on */
	uint16_t pctr;   /* a handle's (TRD_VNI_CF_MU): the process's counter, the node's id */
	uint32_t len, flags, doorbell;
};

struct trd_vni_svc {
	struct trd_vni_svc_conf conf;
	struct trd_node *node;
	const struct trd_topo *topo;
	struct trd_coord coord;
	uint32_t rank;
	struct trd_inj_fifo *req, *rep;
	struct trd_rec_fifo *rf;
	unsigned int req_free0; /* free slots of the request FIFO when empty */
	unsigned int n_mu;      /* interfaces with messaging-unit objects (mu.c) */
	unsigned int n_rmu;     /* ... with reception FIFOs */
	uint64_t rmsgs_seen;    /* the node's count of messages into them, at the last look */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd, kfd, epfd;
	struct ep_ref lref, kref;
	struct vif **ifs;
	unsigned int n_ifs;
	unsigned int n_live;  /* interfaces attached and not dead: staging is shared among them */
	unsigned int n_procs; /* distinct processes among them (sock.c, procs_publish) */
	struct vif_list rr;
	unsigned int n_rr; /* interfaces in rr */
	struct vtx *tx;
	uint32_t *tx_free, n_tx_free;
	struct vrx *rx;
	uint32_t *rx_free, n_rx_free;
	uint32_t n_rx;   /* entries in rx: rx_max + 1 (index 0 is never used) */
	uint32_t rx_new; /* entries from here on never used yet: set up when first taken */
	struct vtx_list lists[4];
	struct vrx_list rx_active;
	struct vhint hints[SVC_N_HINTS];
	struct trd_vni_heap stage;
	uint8_t *stage_mem;
	size_t stage_size;
	struct trd_mr *stage_mr;
	struct vreply *preps;
	unsigned int n_preps, cap_preps, head_preps;
	uint32_t chunk;
	uint32_t rma_chunk;       /* data bytes of one WRITE or READ_RESP */
	uint8_t *rma_buf;         /* SVC_RMA_SLICE bytes: one-sided ops within the node (rma.c) */
	uint64_t round;           /* trd_vni_svc_poll calls */
	uint64_t rma_local_round; /* the last one that copied a slice (rma.c) */
	struct rte_device *dma_dev[16]; /* the node's NICs that DMA from application memory */
	unsigned int n_dma_dev;
	uint64_t now, next_sock, next_timer, next_sweep;
	struct vconn *conns;  /* conf.max_conns connections not yet registered */
	unsigned int n_conns; /* ... of them used */
	uint64_t stat[TRD_VNI_SVC_STAT_MAX];
	struct trd_vni_svc_owner *owners; /* the configuration's, copied */
	uint32_t keys[1024];              /* message keys not yet used */
	unsigned int n_keys;
	struct svc_tel *tel;  /* the telemetry snapshot, when registered */
	uint32_t claim_seq;   /* claim handles: the last upper half handed out */
	struct vatab **atoms; /* per origin node (n_nodes), allocated at its first atomic */
	unsigned int n_atom_tabs;
	struct vaseq **aseqs; /* per target node (n_nodes), allocated at the first atomic to it */
	uint64_t inc;         /* this engine's incarnation: random, drawn at create */
	uint64_t next_tel;
	/* ordered messages (order.c), made at the first */
	struct rte_hash *ord_hash; /* vord_key -> index in ords */
	struct vord *ords;
	uint32_t ord_stream;          /* the last stream number given */
	unsigned int n_parked;        /* requests parked, all pairs */
	uint64_t parked_bytes;        /* their bytes (at most SVC_ORD_PARK_BYTES) */
	struct vord_list ord_idle;    /* rx pairs with nothing parked, least recently used first */
	struct vord_list ord_parking; /* rx pairs with parked requests */
	uint8_t *bounce; /* SVC_LOCAL_CHUNK bytes: one process's memory to another's (tx_local.c) */
	uint64_t round_copied; /* bytes copied between local processes this scheduler round */
	struct vcoll colls[SVC_N_COLL]; /* by group mask (coll.c) */
	unsigned int n_colls;
	unsigned int rounds; /* trd_vni_svc_poll() calls, for SVC_FULL_EVERY */
	bool wake_any;       /* an interface's wake is set (iface.c) */
};

/* What an interface's death ended (dispatch.c's svc_vif_gone(), for sock.c's log line). */
struct svc_gone {
	unsigned int tx_abort, tx_drop, tx_finish; /* sends aborted, dropped, left finishing */
	unsigned int rx; /* messages arriving for it, dropped or cancelled */
};

#define ST(s, e) ((s)->stat[TRD_VNI_SVC_STAT_##e])

#endif /* TRD_VNI_SERVICE_PVT_H */
