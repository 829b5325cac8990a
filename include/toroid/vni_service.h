/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid VNI service: the engine side of virtual network interfaces (include/toroid/vni.h).
 *
 * A service serves the application processes placed on one node by the topology file. It
 * listens on a Unix socket; each process that registers gets its own shared-memory segment
 * (a memfd) with command and completion queues, context tables, a context region, a buffer
 * pool and doorbells. The service runs in the thread that polls the node: trd_vni_svc_poll()
 * takes commands, schedules injection (two-level round-robin, one packet per turn), talks the
 * VNI protocol with the services of other nodes (eager messages, request to send / clear to
 * send, staging of unexpected messages) and writes completions. docs/vni.md describes it.
 *
 * Conventions: constructors return a pointer, or NULL with rte_errno set; other calls return
 * 0 (or a count) or a negative errno. A service is used by one thread.
 */
#ifndef TOROID_VNI_SERVICE_H
#define TOROID_VNI_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <toroid/topo.h>
#include <toroid/toroid.h>

#ifdef __cplusplus
extern "C" {
#endif

struct trd_vni_svc;

/** Who may claim the processes of one application (trd_vni_svc_conf::owners). A registration
 * for application @c app is accepted only from a process that matches one of the
 * application's entries: its user id (SO_PEERCRED) is @c uid, or its primary or one of its
 * supplementary groups (SO_PEERGROUPS) is @c gid. Root is no exception. */
struct trd_vni_svc_owner {
	uint32_t app; /**< the application id */
	int64_t uid;  /**< a user id, or -1: not by user */
	int64_t gid;  /**< a group id, or -1: not by group */
};

/** Service configuration. Zero means the default. */
struct trd_vni_svc_conf {
	struct trd_node *node;       /**< the node served (required) */
	const struct trd_topo *topo; /**< process placement and ranks (required; the node's
				      *   torus must be the topology's) */
	const char *socket;          /**< socket path (required) */
	unsigned int socket_mode;    /**< permissions of the socket file (default 0660) */
	unsigned int max_ifs;        /**< interfaces at once (default 64, max 256) */
	size_t max_pool;         /**< largest buffer pool an application may ask (default 1 GiB) */
	size_t staging;          /**< bytes for messages that arrive before their receive
				  *   (default 64 MiB) */
	unsigned int inline_max; /**< the node's trd_node_conf::inline_max (default 256): short
				  *   messages are capped so they are copied at post time */
	unsigned int req_fifo;   /**< injection FIFO for requests and data (default 0) */
	unsigned int rep_fifo;   /**< injection FIFO for replies (default 1) */
	unsigned int rec_fifo;   /**< reception FIFO of the protocol (default 0; only VNI
				  *   messages may arrive there) */
	unsigned int backlog;    /**< most injection-FIFO slots the scheduler fills (default 256) */
	unsigned int retry_us;   /**< first wait before asking again after a refusal (default
				  *   100 us; doubles up to 8 times that after -ENOSPC, a
				  *   refusal for room, up to 64 times after -ECONNREFUSED) */
	unsigned int noproc_ms;  /**< how long a send to a process that is not attached keeps
				  *   asking (default 3000 ms) */
	const struct trd_vni_svc_owner *owners; /**< who may claim which application (copied);
						 *   an application without an entry may be
						 *   claimed by any user who can open the socket,
						 *   but while processes of it are attached only by
						 *   their user */
	unsigned int n_owners;                  /**< entries in @c owners (at most 1024) */
	unsigned int max_conns;    /**< connections not yet registered, all peers together
				    *   (default 256, max 4096); one process holds at most 4,
				    *   one user at most half, each at most 1 s */
	unsigned int cma_wait_us;  /**< how long a receiving process may leave a one-copy
				    *   offer untaken before it is withdrawn and the engine
				    *   copies (default 20000 us: docs/vni.md) */
	unsigned int cma_hold_us;  /**< how long a long message between two processes of this
				    *   engine waits at its sender for its receive before it
				    *   is staged (default 1000 us: docs/vni.md) */
	unsigned int rma_stall_us; /**< how long a one-sided op with answers outstanding hears
				    *   nothing before it is asked again (its frames were lost);
				    *   default and at most 500000 us (EINVAL above: a target
				    *   remembers an atomic for 15 s, longer than 20 asks) */
	int hdr_max;               /**< long messages a process may hold accepted as their
				    *   header only, when staging has no room for them
				    *   (default 1024; negative: none, such a request is
				    *   refused: docs/vni.md) */
	unsigned int rx_max;       /**< receive states: messages being received, granted,
				    *   staged or held as their header, all interfaces
				    *   together (default and max 1048575: the grant id's
				    *   20-bit index; memory is touched only as they are
				    *   used); beyond, a request is refused (nak_no_rx) */
	bool rma_wire;             /**< one-sided ops between processes of this engine go as
				    *   to another node, a frame per chunk through the
				    *   node (default false: the engine copies between the
				    *   two processes itself: docs/vni.md); for tests of
				    *   the protocol's recovery */
};

/** Service statistics: X(ENUM, name). */
#define TRD_VNI_SVC_STATS(X)                                                                       \
	X(ATTACHED, "attached")     /* interfaces registered */                                    \
	X(DETACHED, "detached")     /* interfaces closed or whose process died */                  \
	X(REFUSED, "refused")       /* registrations refused */                                    \
	X(RECLAIMED, "reclaimed")   /* dead interfaces whose memory was released */                \
	X(CMDS, "cmds")             /* commands taken */                                           \
	X(BAD_CMDS, "bad_cmds")     /* commands refused (bad index, busy context, bad field) */    \
	X(SENDS, "sends")           /* send commands */                                            \
	X(MCASTS, "mcasts")         /* multicast commands */                                       \
	X(MCAST_BUFS, "mcast_bufs") /* buffers the engine filled with multicast data */            \
	X(MCAST_COPY_BYTES, "mcast_copy_bytes") /* multicast data bytes the engine copied */       \
	X(MCAST_SHARED, "mcast_shared") /* multicast packets that referenced a shared buffer */    \
	X(RECVS, "recvs")               /* receive commands */                                     \
	X(TX_PKTS, "tx_pkts")           /* packets injected for interfaces */                      \
	X(TX_EAGER, "tx_eager")         /* short messages sent */                                  \
	X(TX_RTS, "tx_rts")             /* requests to send */                                     \
	X(TX_CHUNKS, "tx_chunks")       /* data packets of long messages */                        \
	X(TX_FIN, "tx_fin")             /* end-of-data messages */                                 \
	X(TX_ABORT, "tx_abort")         /* long messages given up by their sender */               \
	X(TX_REPLIES, "tx_replies")     /* CTS, NAK, ACK, DONE, CANCEL sent */                     \
	X(RX_EAGER, "rx_eager")                                                                    \
	X(RX_RTS, "rx_rts")                                                                        \
	X(RX_FIN, "rx_fin")                                                                        \
	X(CTS_SENT, "cts_sent") /* permissions granted */                                          \
	X(CTS_LATE, "cts_late") /* permissions granted when a receive appeared */                  \
	X(NAK_SENT, "nak_sent") /* requests refused (no process, no staging) */                    \
	X(NAK_RECEIVED, "nak_received")                                                            \
	X(DUP_CTS, "dup_cts") /* duplicate permissions discarded */                                \
	X(RETRIES, "retries") /* requests asked again */                                           \
	X(STAGED, "staged")   /* messages held before their receive */                             \
	X(STAGED_BYTES, "staged_bytes")                                                            \
	X(LATE_MATCHES, "late_matches") /* receives that found their message staged */             \
	X(MATCH_WALKED, "match_walked") /* unexpected messages receives and probes looked at */    \
	X(STAGING_USED, "staging_used") /* bytes of staging in use now */                          \
	X(STAGING_HWM, "staging_hwm")   /* most staging bytes in use at once */                    \
	X(STAGING_MAX, "staging_max")   /* the staging bound */                                    \
	X(TX_DONE, "tx_done")           /* send completions */                                     \
	X(RX_DONE, "rx_done")           /* receive completions */                                  \
	X(TX_BYTES, "tx_bytes")         /* bytes of completed sends */                             \
	X(RX_BYTES, "rx_bytes")         /* bytes of completed receives */                          \
	X(ERRORS, "errors")             /* completions with a negative status */                   \
	X(BAD_WIRE, "bad_wire")         /* malformed protocol messages */                          \
	X(BAD_REPLIES, "bad_replies")   /* replies dropped: unknown message, wrong node, process   \
					 * or key, or a status the protocol does not define */     \
	X(NAK_SHARE, "nak_share")       /* requests refused: their destination holds its share     \
					 * of staging (other staging may be free) */               \
	X(BAD_QUEUES, "bad_queues")     /* interfaces closed: their process broke a queue */       \
	X(DENIED, "denied")             /* registrations refused: the user may not claim the       \
					 * application */                                          \
	X(WAKEUPS, "wakeups")           /* eventfd signals to applications */                      \
	X(KICKS, "kicks")               /* wake-ups of the engine by applications */               \
	X(ORDER_HOLDS, "order_holds")   /* ordered sends held: SVC_ORD_WINDOW earlier ones to      \
					 * their destination were not yet accepted */              \
	X(ORDER_INFLIGHT_MAX, "order_inflight_max") /* most ordered requests open at once from     \
						     * one interface to one process */             \
	X(ORDER_PARKED, "order_parked")   /* ordered requests parked: ahead of a refused one */    \
	X(ORDER_REFUSED, "order_refused") /* parked ones refused (NAK): too long, too many */      \
	X(ORDER_DROPPED, "order_dropped") /* ordered requests dropped: outside the window,         \
					   * duplicates */                                         \
	X(PROBES, "probes")               /* probes (trd_vni_probe) */                             \
	X(CANCELS, "cancels")             /* receives withdrawn (trd_vni_cancel) */                \
	X(MR_REGS, "mr_regs")             /* memory regions registered (trd_vni_mr_reg) */         \
	X(MR_DEREGS, "mr_deregs")         /* memory regions withdrawn */                           \
	X(MR_REFUSED, "mr_refused")       /* registrations refused (bad, full, unreachable) */     \
	X(RMA_OPS, "rma_ops")             /* one-sided writes, reads and atomics posted here */    \
	X(RMA_DONE, "rma_done")           /* their completions */                                  \
	X(RMA_PKTS, "rma_pkts")           /* WRITE, READ and ATOMIC requests sent */               \
	X(RMA_SERVED, "rma_served")       /* such requests served for this node's processes */     \
	X(RMA_BYTES, "rma_bytes")         /* bytes written or read in them (atomics: size) */      \
	X(RMA_DENIED, "rma_denied")       /* requests refused before any access: unknown key,      \
					   * no access bit, out of the region, misaligned */       \
	X(RMA_FAULTS, "rma_faults")       /* accesses failed: unmapped, read-only, mm gone */      \
	X(RMA_REPEATS, "rma_repeats")     /* atomics asked again (answer lost): answered from      \
					   * memory, not applied twice */                          \
	X(RMA_STALE, "rma_stale")         /* atomics of an op that ended at its origin (late       \
					   * duplicates): dropped, not applied */                  \
	X(CLAIMS, "claims")               /* messages claimed (trd_vni_claim) */                   \
	X(DISCARDS, "discards")           /* messages dropped unread (trd_vni_discard) */          \
	X(RMA_BACKPRESSURE, "rma_backpressure") /* atomics refused -EAGAIN: SVC_ATOM_WINDOW        \
						 * open towards their node already */              \
	/* messaging-unit objects (docs/vni.md, "Messaging-unit objects") */                       \
	X(MU_DESCS, "mu_descs")         /* descriptors taken from processes' injection FIFOs */    \
	X(MU_BAD_DESCS, "mu_bad_descs") /* ... dropped unused: failed a check */                   \
	X(MU_BAD_RINGS, "mu_bad_rings") /* injection FIFOs no longer served: ring header broken */ \
	X(MU_RMSGS, "mu_rmsgs")         /* messages written into processes' reception FIFOs */     \
	X(MU_RFULL, "mu_rfull")         /* ... refused: no room (the sender resends) */            \
	X(MU_RBAD_RINGS, "mu_rbad_rings") /* reception FIFOs no longer written: consumer index     \
					   * broken */                                             \
	/* message bytes the engine copied, by stage (docs/vni.md, "Copies") */                    \
	X(COPY_TX_SLOT, "copy_tx_slot")   /* context slot -> packet (short messages) */            \
	X(COPY_TX_POOL, "copy_tx_pool")   /* pool -> packet, or straight into a local receive */   \
	X(COPY_TX_USER, "copy_tx_user")   /* process memory -> packet or local receive (pread) */  \
	X(COPY_RX_POOL, "copy_rx_pool")   /* packet -> pool (short messages) */                    \
	X(COPY_RX_USER, "copy_rx_user")   /* packet or local sender -> process memory (pwrite) */  \
	X(COPY_RX_PUT, "copy_rx_put")     /* packets -> pool or staging by the node (puts) */      \
	X(COPY_STAGE_IN, "copy_stage_in") /* packet -> staging (short messages) */                 \
	X(COPY_STAGE_OUT, "copy_stage_out") /* staging -> the receive */                           \
	X(MSG_FAULTS, "msg_faults") /* messages failed: process memory not readable or writable */ \
	X(COPY_PVM, "copy_pvm")     /* of the copy_* bytes in process memory: process_vm_* */      \
	X(PVM_REFUSED, "pvm_refused") /* interfaces whose process_vm_* the kernel refused */       \
	X(COPY_CMA, "copy_cma")       /* local messages read by the receiving process itself */    \
	X(CMA_REFUSED, "cma_refused") /* interfaces whose process_vm_readv the kernel refused */   \
	X(CMA_BAD, "cma_bad")         /* CMA answers naming no request: hostile or broken */       \
	X(CMA_WITHDRAWN, "cma_withdrawn") /* CMA requests not taken in time: the engine copied */  \
	X(CMA_HELD, "cma_held") /* requests refused so as to wait for their receive, not staged */ \
	X(CMA_CROSSED, "cma_crossed")   /* ... staged instead: their receiver holds one to them */ \
	X(LOCAL_DIRECT, "local_direct") /* messages between processes of this engine delivered     \
					 * at once into their posted receive (no packet) */        \
	X(COPY_LOCAL, "copy_local")     /* their bytes: sender's slot or pool -> the receive */    \
	X(COLLS, "colls")         /* collectives posted by processes (trd_vni_allreduce, ...) */   \
	X(COLL_DONE, "coll_done") /* ... completed here */                                         \
	X(COLL_FAILED, "coll_failed") /* ... failed across their group (-EHOSTUNREACH) */          \
	X(COLL_BUSY, "coll_busy")     /* ... refused: one of their group in flight on this node */ \
	X(HDR_ONLY, "hdr_only") /* long requests accepted as their header only (no staging room):  \
				 * a CTS into the receive when it is posted */                     \
	X(HDR_REFUSED, "hdr_refused") /* ... refused instead: their destination held hdr_max */    \
	X(HDR_HELD, "hdr_held")       /* header-only messages waiting for their receive now */     \
	/* more causes of refusals (NAK), beside nak_share, hdr_refused, cma_held, order_refused   \
	 */                                                                                        \
	X(NAK_NO_RX, "nak_no_rx")     /* no receive state free (rx_max in use) */                  \
	X(NAK_STAGING, "nak_staging") /* staging full (within the destination's share) */          \
	X(NAK_NOPROC, "nak_noproc")   /* no such process attached */                               \
	X(RX_USED, "rx_used")         /* receive states in use now */                              \
	X(RX_HWM, "rx_hwm")           /* most receive states in use at once */                     \
	X(RX_MAX, "rx_max")           /* the receive-state bound (rx_max) */                       \
	X(HDR_STAGED, "hdr_staged")   /* header-only messages granted staging once it had room:    \
				       * their senders complete without waiting for the receive */

/** Service statistics ids. */
enum trd_vni_svc_stat {
#define TRD_VNI_SVC_STAT_ENUM_(e, n) TRD_VNI_SVC_STAT_##e,
	TRD_VNI_SVC_STATS(TRD_VNI_SVC_STAT_ENUM_)
#undef TRD_VNI_SVC_STAT_ENUM_
	/* one past the last */
	TRD_VNI_SVC_STAT_MAX
};

/** One interface, for tools. */
struct trd_vni_svc_if_info {
	uint32_t app, proc;
	int pid;  /**< the process (SO_PEERCRED) */
	int dead; /**< 1: its process is gone, memory not yet released */
	/** its process's trd_vni_hint_compute(), clamped to 1000 (-1 while it says nothing) */
	int compute_permille;
	uint64_t pool_size;
	uint64_t tx_msgs, tx_pkts, tx_bytes, rx_msgs, rx_bytes, naks;
	/**
	 * packets injected for it while another interface had requests waiting too: the
	 * scheduler's share under contention
	 */
	uint64_t tx_pkts_shared;
	uint64_t staged_bytes; /**< staging held for messages to it */
	/** descriptors of its injection FIFOs used, and dropped as bad (docs/vni.md,
	 *  "Messaging-unit objects") */
	uint64_t mu_descs, mu_bad_descs;
	/**
	 * Its state now (what a stalled exchange needs to be seen): its sends by state (ready
	 * to inject, waiting for their receiver's answer, refused and waiting to ask again,
	 * waiting until the node no longer reads their buffer, held behind earlier ordered
	 * ones), receives posted and not yet matched, messages to it held by the engine (granted,
	 * staged or as their header only; those as their header only), commands queued but not
	 * yet taken, and whether the scheduler has it in its round (1) or not (0).
	 */
	uint32_t tx_ready, tx_wait, tx_backoff, tx_drain, tx_hold;
	uint32_t recvs_posted, rx_held, rx_hdr, cmds_queued, in_round;
};

/**
 * Create a service: bind and listen on conf->socket (a stale socket file is replaced; a live
 * one is an error) and register the node's VNI memory.
 * @return the service, or NULL with rte_errno = EINVAL (bad configuration, an owner entry with
 * neither a user nor a group), EADDRINUSE
 * (another engine serves the socket), ENOMEM, or the socket call's errno.
 */
struct trd_vni_svc *trd_vni_svc_create(const struct trd_vni_svc_conf *conf);

/**
 * One bounded round of service work: socket events (at most every 50 us), protocol messages
 * from the reception FIFO, commands, timers, injection. Call it from the thread that polls the
 * node, between trd_node_poll() calls.
 * @return units of work done (0 when idle), or -EINVAL.
 */
int trd_vni_svc_poll(struct trd_vni_svc *s);

/** A file descriptor (epoll) that becomes readable on socket activity or when an application
 * kicks a sleeping engine. */
int trd_vni_svc_fd(const struct trd_vni_svc *s);

/**
 * Before the caller sleeps on trd_vni_svc_fd(): tell every interface the engine is asleep, so
 * its next command kicks it (a plain receive: the process's next send, poll or wait; a
 * message it finds staged meanwhile waits for that or for the end of the sleep: sleep with a
 * timeout, as toroid-node does). @return 0, or -EBUSY if there is work now (do not sleep; the
 * flags are cleared again).
 */
int trd_vni_svc_sleep_begin(struct trd_vni_svc *s);
/**
 * trd_vni_svc_sleep_begin() for a caller that sleeps with a timeout: a send waiting for a time
 * (a refused request's back-off, a long message held at its sender for its receive, a
 * receiving process's answer to a CMA request) does not keep the engine awake, it bounds the
 * sleep.
 * @param until_us on success: the trd_time_us() time by which the caller must have called
 *        trd_vni_svc_poll() again (UINT64_MAX: no bound but its own).
 * @return 0, -EBUSY (as trd_vni_svc_sleep_begin()) or -EINVAL.
 */
int trd_vni_svc_sleep_until(struct trd_vni_svc *s, uint64_t *until_us);
/** After the sleep: the next trd_vni_svc_poll() reads the sockets (what woke it). */
void trd_vni_svc_sleep_end(struct trd_vni_svc *s);
/** After trd_vni_svc_sleep_begin() succeeded but the caller did not sleep (another service was
 * busy): the flags are cleared, nothing else. */
void trd_vni_svc_sleep_cancel(struct trd_vni_svc *s);

/** Copy the statistics (enum trd_vni_svc_stat order) into @p out. @return 0 or -EINVAL. */
int trd_vni_svc_stats_get(const struct trd_vni_svc *s, uint64_t out[TRD_VNI_SVC_STAT_MAX]);
/** Name of a statistic, or NULL. */
const char *trd_vni_svc_stat_name(unsigned int stat);

/** Interfaces attached or being reclaimed. */
unsigned int trd_vni_svc_n_ifs(const struct trd_vni_svc *s);
/** Distinct processes with a live interface (a process with several interfaces counts once):
 * with the engine's own thread, the processes that poll on this host as far as the service
 * knows. The service tells each interface the same count plus one (trd_vni_busy_procs()). */
unsigned int trd_vni_svc_n_procs(const struct trd_vni_svc *s);
/** Facts of interface @p i (0 .. trd_vni_svc_n_ifs() - 1). @return 0 or -EINVAL. */
int trd_vni_svc_if_get(const struct trd_vni_svc *s, unsigned int i,
		       struct trd_vni_svc_if_info *out);

/** What the engine's loop needs of an interface to judge the host's load (toroid-node
 * --idle-us auto), cheaply: trd_vni_svc_if_get() walks the interface's operations. */
struct trd_vni_svc_if_load {
	int pid;
	int dead;             /**< its process is gone */
	int asleep;           /**< the process armed its eventfd: asleep in a wait */
	int compute_permille; /**< trd_vni_hint_compute(), clamped to 1000; -1: not told */
	int movable;          /**< told with TRD_VNI_HINT_MOVABLE */
};

/** The load facts of interface @p i (0 .. trd_vni_svc_n_ifs() - 1). @return 0 or -EINVAL. */
int trd_vni_svc_if_load_get(const struct trd_vni_svc *s, unsigned int i,
			    struct trd_vni_svc_if_load *out);

/** The service's node. */
struct trd_node *trd_vni_svc_node(const struct trd_vni_svc *s);

/**
 * Answer the rte_telemetry command /toroid/vni,NODE for this service (docs/telemetry.md): its
 * statistics by name, the number of interfaces and one dictionary per interface (if_APP_PROC,
 * the fields of struct trd_vni_svc_if_info). NODE is the node's name, or the service's index in
 * the order services were registered; without it, the only service registered. The command
 * is registered with rte_telemetry at the first call (call it after rte_eal_init()). The
 * telemetry thread never reads the live service: trd_vni_svc_poll() copies its counters for it
 * every 10 ms, and trd_vni_svc_free() withdraws it. Call it from the thread that polls the
 * service; a second call is a no-op.
 * @return 0, -EINVAL (NULL), -ENOMEM, or the negative errno of rte_telemetry_register_cmd().
 */
int trd_vni_svc_telemetry_register(struct trd_vni_svc *s);

/**
 * Stop: every application sees its interface closed (-ECONNRESET from its next wait), the
 * socket file is removed and the memory released. Call it before the node is freed, with the
 * node no longer polled. NULL is a no-op.
 */
void trd_vni_svc_free(struct trd_vni_svc *s);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_VNI_SERVICE_H */
