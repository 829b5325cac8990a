/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid messaging layer: clients, contexts, endpoints, ordered work queues and advance, in the
 * style of IBM's PAMI (Parallel Active Messaging Interface) on Blue Gene/Q.
 *
 * A *client* is one application's view of the torus: a name, a task -> coordinate mapping
 * (the torus ranks, or a topology file's ranks) and up to TRD_CLIENT_MAX_CONTEXTS contexts.
 * A *context* is a single-threaded communication object on one node: an injection FIFO it
 * posts to, a reception FIFO where the outcomes of its operations arrive, an optional
 * reception FIFO for messages sent to it, and a work queue. An *endpoint* names a
 * (task, context offset) pair to communicate with.
 *
 * Operations (trd_put(), trd_rdma_read(), trd_send(), trd_atomic(), trd_fence()) are posted
 * into the context's work queue and cost nothing else at post time. trd_advance() starts them
 * strictly in posting order, collects their outcomes and runs their completion callbacks.
 * Every operation is tracked: a put or a send completes when its data is at the target (the
 * target engine's DONE arrived), an RDMA read when its last byte landed here, an atomic when
 * its old value came back; an operation the target refused completes with the error status.
 *
 * As in PAMI, a put, an RDMA read and a send may instead report two events (struct
 * trd_op_events): *local* (this side is done with its buffer: a put's or send's source may be
 * reused, a read's bytes have all landed) and *remote* (the target is done: a put's or send's
 * data is there, a read's source is no longer needed). And a context may *dispatch* the
 * messages sent to it by an id that each send names (trd_dispatch_set(), trd_send_dispatch()).
 *
 * Threads: a context must be used (posted to, advanced) by one thread at a time; different
 * contexts may be used by different threads concurrently without any lock between them.
 * Clients are created and destroyed by one thread; trd_context_create() and trd_endpoint()
 * may be called from any thread.
 *
 * Conventions: constructors return a pointer, or NULL with rte_errno set; other calls return
 * 0 or a negative errno; -ENOBUFS means "retry later" (back-pressure), never "lost".
 */
#ifndef TOROID_MSG_H
#define TOROID_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <toroid/toroid.h>

#ifdef __cplusplus
extern "C" {
#endif

struct trd_client;
struct trd_context;

/** Most contexts one client has. */
#define TRD_CLIENT_MAX_CONTEXTS 64

/** Default work-queue size (operations posted and not yet completed) of a context. */
#define TRD_CONTEXT_WQ_DEFAULT 256

/** No reception FIFO (trd_context_conf::recv_fifo). */
#define TRD_NO_FIFO (-1)

/** Dispatch ids of a context are 0 .. TRD_DISPATCH_MAX - 1. */
#define TRD_DISPATCH_MAX 256

/** Bits of the user word a dispatched message carries (the 16 above them carry the id). */
#define TRD_DISPATCH_USER_BITS 48

/** Largest user word trd_send_dispatch() accepts: 2^48 - 1. */
#define TRD_DISPATCH_USER_MAX ((UINT64_C(1) << TRD_DISPATCH_USER_BITS) - 1)

/**
 * An endpoint: where operations go. A plain value made by trd_endpoint(); copy it freely.
 * Its fields are for reading.
 */
struct trd_ep {
	uint32_t task;          /**< the task (rank) */
	struct trd_coord coord; /**< the task's node */
	uint8_t ctx;            /**< context offset at the task */
	int16_t recv_fifo;      /**< that context's receive FIFO, or TRD_NO_FIFO */
	bool dispatch;          /**< that context dispatches (trd_context_conf::dispatch):
				 *   send to it with trd_send_dispatch(), not trd_send() */
};

/**
 * Completion callback: @p status is 0, or a negative errno saying why the operation failed
 * (the target's refusal, see trd_track_open(), or a local error). Runs inside trd_advance()
 * on the advancing thread. It may post new operations (on @p ctx, or on another context
 * this thread uses), but must not call trd_advance() or trd_context_destroy() on @p ctx.
 */
typedef void (*trd_done_fn)(struct trd_context *ctx, void *cookie, int status);

/**
 * Receive callback: a message sent to this context (trd_send()). @p msg (data, length, user
 * word, sender) is valid until the callback returns; trd_advance() frees it afterwards.
 * Dispatch handlers (trd_dispatch_set()) have the same form; they get @p msg->user without
 * the id (its low TRD_DISPATCH_USER_BITS bits).
 */
typedef void (*trd_recv_fn)(struct trd_context *ctx, void *arg, const struct trd_msg *msg);

/**
 * The two completion events of a put, an RDMA read or a send (trd_put_events(),
 * trd_rdma_read_events(), trd_send_dispatch()). Each function that is not NULL runs exactly
 * once, inside trd_advance(), with @c cookie; for every operation @c local_fn runs before
 * @c remote_fn.
 *
 * - put, send: local = the source buffer may be reused, the engine no longer reads it (its
 *   injection counter reached zero: every packet built from it was freed, which with
 *   reliability on is after the peer acknowledged it); remote = the data is at the target
 *   (its engine's DONE arrived), what trd_put() and trd_send() report.
 * - RDMA read: local = every byte has landed here, what trd_rdma_read() reports; remote = the
 *   target is done with its buffer (known at the same moment: runs right after local).
 *
 * Status. Remote: 0 or the operation's error, as the plain calls report it. Local of a read:
 * the same as remote. Local of a put or send says whether the engine sent the bytes: 0 once
 * it let go of them, even if the target then refuses them (a refusal is not known when the
 * buffer is released; remote reports it); else, when the operation failed at the origin (it
 * could not start, the engine dropped its descriptor, the peer was declared down with bytes
 * on their way), the same error as remote, or -EHOSTUNREACH if remote had succeeded before
 * the peer went down. In every case, once local has run the buffer is the application's.
 */
struct trd_op_events {
	trd_done_fn local_fn;  /**< this side is done (may be NULL) */
	trd_done_fn remote_fn; /**< the target is done (may be NULL) */
	void *cookie;          /**< passed to both */
};

/** Context configuration. */
struct trd_context_conf {
	struct trd_node *node; /**< the node the context posts from (required) */
	unsigned int inj_fifo; /**< injection FIFO index the context posts to (may be shared) */
	unsigned int cpl_fifo; /**< reception FIFO index where outcomes arrive (its own) */
	int recv_fifo;         /**< reception FIFO index for messages sent to this context, or
				*   TRD_NO_FIFO; distinct from cpl_fifo. Contexts are assumed to
				*   be created alike on every task (SPMD): trd_send() to context
				*   offset k names the id of this client's context k's recv_fifo
				*   (trd_rec_fifo_id(): on a node handle of an attached process,
				*   the same on every task only if each asked for the same ids,
				*   trd_vni_conf.mu_rfifo_first). */
	unsigned int wq_size;  /**< operations posted and not yet completed (0: 256, max 65536) */
	trd_recv_fn recv;      /**< if set, trd_advance() drains recv_fifo into it */
	void *recv_arg;        /**< passed to @c recv */
	bool dispatch;         /**< dispatch received messages by id (trd_dispatch_set()) instead
				*   of passing them to @c recv (which must then be NULL); needs a
				*   recv_fifo. Contexts at one offset dispatch on every task (SPMD). */
};

/** Context statistics: X(ENUM, name). */
#define TRD_CONTEXT_STATS(X)                                                                       \
	X(POSTED, "posted")       /* operations accepted into the work queue */                    \
	X(STARTED, "started")     /* operations handed to the engine (fences: reached the head) */ \
	X(COMPLETED, "completed") /* operations completed (callbacks run), errors included */      \
	X(ERRORS, "errors")       /* completions with a negative status */                         \
	X(FENCES, "fences")       /* fences completed */                                           \
	X(STALLS, "stalls")       /* advances that left the head waiting (FIFO full, no ids) */    \
	X(RECEIVED, "received")   /* messages delivered to the receive callback or a handler */    \
	X(PUT_BYTES, "put_bytes") /* bytes of puts and sends completed without error */            \
	X(READ_BYTES, "read_bytes")             /* bytes of RDMA reads completed without error */  \
	X(LOCAL_DONE, "local_done")             /* local events run (trd_op_events::local_fn) */   \
	X(DISPATCH_UNKNOWN, "dispatch_unknown") /* received for an id with no handler: freed */

/** Context statistics ids. */
enum trd_context_stat {
#define TRD_CTX_STAT_ENUM_(e, n) TRD_CTX_STAT_##e,
	TRD_CONTEXT_STATS(TRD_CTX_STAT_ENUM_)
#undef TRD_CTX_STAT_ENUM_
	/* one past the last */
	TRD_CTX_STAT_MAX
};

/* ------------------------------------------------------------------------------------------ */
/** @name Clients */

/**
 * Create a client. Tasks are the ranks of @p topo (its nodes' coordinates) if given, which
 * must outlive the client, else the ranks of the torus of the client's first context's node
 * (rank = x + X * (y + Y * z)).
 * @return the client, or NULL with rte_errno = EINVAL (NULL or too long @p name, a topology
 * with no nodes) or ENOMEM.
 */
struct trd_client *trd_client_create(const char *name, const struct trd_topo *topo);

/**
 * Destroy a client and its contexts. Every context must be idle (trd_context_pending() = 0).
 * NULL is a no-op. @return 0, or -EBUSY (nothing destroyed).
 */
int trd_client_destroy(struct trd_client *client);

/** The client's name. */
const char *trd_client_name(const struct trd_client *client);
/** Number of contexts created on the client. */
unsigned int trd_client_n_contexts(const struct trd_client *client);
/** Number of tasks (0 until the task mapping is known: a topology, or a first context). */
unsigned int trd_client_n_tasks(const struct trd_client *client);
/** Context at @p offset of the client, or NULL. */
struct trd_context *trd_client_context(const struct trd_client *client, unsigned int offset);

/* ------------------------------------------------------------------------------------------ */
/** @name Contexts */

/**
 * Create a context on @p client; its offset is the number of contexts made before it.
 * The context allocates engine counters for its RDMA reads and for the local events of its
 * puts and sends on demand (at most wq_size) and keeps them until it is destroyed.
 * @return the context, or NULL with rte_errno = EINVAL (no node, a FIFO index the node does
 * not have, recv_fifo equal to cpl_fifo, wq_size above 65536, a node whose torus differs from
 * the client's, dispatch without a recv_fifo or with a recv callback), ENOSPC
 * (TRD_CLIENT_MAX_CONTEXTS reached) or ENOMEM.
 */
struct trd_context *trd_context_create(struct trd_client *client,
				       const struct trd_context_conf *conf);

/**
 * Destroy an idle context (nothing posted and not completed). Its offset stays taken.
 * @return 0, -EINVAL, or -EBUSY (operations pending: advance until trd_context_pending() is 0).
 */
int trd_context_destroy(struct trd_context *ctx);

/** The context's offset in its client. */
unsigned int trd_context_offset(const struct trd_context *ctx);
/** The context's node. */
struct trd_node *trd_context_node(const struct trd_context *ctx);
/** Operations posted and not yet completed (queued or in flight). */
unsigned int trd_context_pending(const struct trd_context *ctx);

/**
 * Copy the context's statistics (enum trd_context_stat order) into @p out[TRD_CTX_STAT_MAX].
 * Read them from the advancing thread for exact values. @return 0 or -EINVAL.
 */
int trd_context_stats_get(const struct trd_context *ctx, uint64_t *out);
/** Name of a context statistic, or NULL. */
const char *trd_context_stat_name(unsigned int stat);

/**
 * Register @p fn (with @p arg) as the handler of dispatch id @p id of a context created with
 * trd_context_conf::dispatch; NULL @p fn unregisters. trd_advance() hands each message that
 * arrives for the context to the handler of the id in the top 16 bits of its user word, with
 * the user word's low TRD_DISPATCH_USER_BITS bits as msg->user. A message whose id has no
 * handler (never registered, unregistered, or TRD_DISPATCH_MAX and above) is freed and counted
 * in the context's "dispatch_unknown" statistic, never handed to any other handler; its sender
 * is not told (its engine delivered the message: the send succeeded). Call it from the thread
 * that advances the context, a handler included.
 * @return 0; -EINVAL (NULL @p ctx, @p id not below TRD_DISPATCH_MAX); -ENOTSUP (the context
 * does not dispatch).
 */
int trd_dispatch_set(struct trd_context *ctx, unsigned int id, trd_recv_fn fn, void *arg);

/**
 * Make an endpoint for context @p ctx_offset of task @p task.
 * @return 0, or -EINVAL (NULL argument, @p task not below trd_client_n_tasks(), or
 * @p ctx_offset not below trd_client_n_contexts()).
 */
int trd_endpoint(const struct trd_client *client, uint32_t task, unsigned int ctx_offset,
		 struct trd_ep *ep);

/* ------------------------------------------------------------------------------------------ */
/** @name Operations: posted into the work queue, started by trd_advance() in posting order */

/**
 * Put @p len bytes at @p local_addr into the memory of @p ep's task at offset
 * @p remote_addr of its region @p remote_key (or at address @p remote_addr if that region was
 * registered with TRD_ACCESS_VA: verbs-style, see trd_mr_remote_addr()). The bytes are read when
 * the put starts and until it completes: leave the buffer untouched until the callback runs.
 * Completion means the data is in the target's memory (the remote event; trd_put_events() also
 * reports the local one). Completion errors: -ENOKEY, -ERANGE, -EACCES (the target's refusal),
 * -EHOSTUNREACH, -EINVAL.
 * @return 0; -ENOBUFS (work queue full, nothing posted); -EINVAL (NULL @p ctx or @p ep, bad
 * endpoint, NULL @p local_addr with a length, @p len above UINT32_MAX).
 */
int trd_put(struct trd_context *ctx, const void *local_addr, const struct trd_ep *ep,
	    uint64_t remote_addr, uint64_t remote_key, size_t len, trd_done_fn cb, void *cookie);

/**
 * RDMA read: bring @p len bytes at offset @p remote_addr of region @p remote_key of @p ep's
 * task (its address, if that region is TRD_ACCESS_VA) into @p local_addr. The local range is
 * translated now to its registered region (trd_mr_find(), named by trd_mr_remote_addr()), which
 * must allow remote writes (the target's engine writes the bytes back) and stay registered until
 * completion. When it starts, the read sets an engine counter to
 * @p len and sends one remote get carrying the put-back descriptor; the target's engine
 * executes it with no application involvement, and the read completes when the counter
 * reaches exactly zero: every byte has landed. Reads of any length (up to UINT32_MAX) are one
 * remote get.
 * Completion errors: -ENOKEY, -ERANGE, -EACCES (refused by the target: nothing is written),
 * -EHOSTUNREACH.
 * @return 0; -ENOBUFS (work queue full); -EINVAL (bad argument, @p len 0 or above
 * UINT32_MAX, or the local range is not inside one region with TRD_ACCESS_REMOTE_WRITE).
 */
int trd_rdma_read(struct trd_context *ctx, void *local_addr, const struct trd_ep *ep,
		  uint64_t remote_addr, uint64_t remote_key, size_t len, trd_done_fn cb,
		  void *cookie);

/**
 * Send a @p len-byte message with user word @p user to the receive FIFO of @p ep's context.
 * Leave the buffer untouched until the callback runs. Completion means the message is in the
 * target's reception FIFO.
 * Completion errors: -ENOBUFS (the target FIFO was full), -ENOENT (no such FIFO there),
 * -ENOMEM, -EHOSTUNREACH.
 * @return 0; -ENOBUFS (work queue full); -ENOTSUP (that context has no receive FIFO);
 * -EINVAL (bad argument, or @p ep's context dispatches: use trd_send_dispatch(), so that a
 * 64-bit user word is never read as an id).
 */
int trd_send(struct trd_context *ctx, const struct trd_ep *ep, const void *buf, size_t len,
	     uint64_t user, trd_done_fn cb, void *cookie);

/**
 * Send a @p len-byte message to dispatch id @p id of @p ep's context (which must dispatch:
 * trd_context_conf::dispatch), with the 48-bit user word @p user: the target's handler for
 * @p id gets it as msg->user. The message carries (@p id << 48 | @p user) as its user word.
 * Completion events (@p ev may be NULL: none) as struct trd_op_events says: local when the
 * buffer may be reused, remote when the message is in the target's reception FIFO (whether
 * the target has a handler for @p id is decided there, later, and not reported back). A
 * local event takes an engine counter as trd_put_events() says.
 * Completion errors: those of trd_send(), -ENOSPC.
 * @return 0; -ENOBUFS (work queue full); -EINVAL (bad argument, @p id not below
 * TRD_DISPATCH_MAX, @p user above TRD_DISPATCH_USER_MAX, or @p ep's context does not
 * dispatch).
 */
int trd_send_dispatch(struct trd_context *ctx, const struct trd_ep *ep, unsigned int id,
		      const void *buf, size_t len, uint64_t user, const struct trd_op_events *ev);

/**
 * trd_put() with two completion events (struct trd_op_events; @p ev may be NULL): local when
 * @p local_addr may be reused, remote when the data is in the target's memory. A put with a
 * local event takes one of the context's engine counters while it starts and until its local
 * event; when the node has none left and the context holds none that will come back, it
 * completes with -ENOSPC.
 * Completion errors: those of trd_put(), -ENOSPC.
 * @return as trd_put().
 */
int trd_put_events(struct trd_context *ctx, const void *local_addr, const struct trd_ep *ep,
		   uint64_t remote_addr, uint64_t remote_key, size_t len,
		   const struct trd_op_events *ev);

/**
 * trd_rdma_read() with two completion events (struct trd_op_events; @p ev may be NULL):
 * local when every byte is in @p local_addr, remote (right after it) when the target is done
 * with its buffer. Both get the read's status.
 * @return as trd_rdma_read().
 */
int trd_rdma_read_events(struct trd_context *ctx, void *local_addr, const struct trd_ep *ep,
			 uint64_t remote_addr, uint64_t remote_key, size_t len,
			 const struct trd_op_events *ev);

/**
 * A 64-bit atomic @p op on the word at offset @p roff of region @p rkey of @p ep's task
 * (8-byte aligned, in a region with remote read and write access), executed by the target
 * engine in arrival order: fetch-and-add (@p operand added), compare-and-swap (@p operand
 * stored if the word equals @p compare) or swap. The old value is written to @p result (may
 * be NULL) before the callback runs.
 * Completion errors: -ENOKEY, -ERANGE, -EACCES, -EINVAL (misaligned), -EHOSTUNREACH.
 * @return 0; -ENOBUFS (work queue full); -EINVAL (bad argument or @p op).
 */
int trd_atomic(struct trd_context *ctx, const struct trd_ep *ep, uint64_t rkey, uint64_t roff,
	       enum trd_atomic_op op, uint64_t operand, uint64_t compare, uint64_t *result,
	       trd_done_fn cb, void *cookie);

/**
 * Fence: completes (@p cb runs) only when every operation posted earlier on this context to
 * @p ep's node, or to any node if @p ep is NULL, has completed: for puts and sends that is
 * "complete at the target" (the target engine's DONE for the last packet arrived).
 * Operations posted after the fence do not start before it completes. Its status is 0 if
 * those of them that were still pending when it was posted all succeed, else the status of
 * the first of them to fail (an operation that had already completed was reported by its
 * own callback).
 * @return 0; -ENOBUFS (work queue full); -EINVAL.
 */
int trd_fence(struct trd_context *ctx, const struct trd_ep *ep, trd_done_fn cb, void *cookie);

/**
 * Advance the context, without blocking: deliver outcomes that arrived (running completion
 * callbacks), complete RDMA reads whose counter reached zero, complete a fence at the head of
 * the work queue once its operations are complete, start queued operations in posting order
 * (an operation that cannot start yet, FIFO full or no free tracking id, stays at the head
 * and nothing after it starts), run local events whose buffer the engine let go of, and pass
 * received messages to the receive callback or their dispatch handler. When it
 * found nothing to do it makes engine progress (trd_node_progress()): if no lcore serves the
 * node, only one thread at a time may then advance contexts of that node (or net).
 * @param max most events to deliver in this call (0: no bound).
 * @return the number of events delivered (operations completed, local events run before
 * their operation completed, received messages handed to a callback or handler), or -EINVAL,
 * or -EBUSY if called from one of this context's callbacks.
 */
int trd_advance(struct trd_context *ctx, unsigned int max);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_MSG_H */
