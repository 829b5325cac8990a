/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid collectives: barrier, broadcast, reduce, allreduce, gather, scatter and allgather
 * over the tasks of a client, on binary trees of ranks (trd_tree_parent(), any root), built on
 * the messaging layer (include/toroid/msg.h). docs/collectives.md describes the protocol.
 *
 * A *collective object* (struct trd_coll) belongs to one context of one task and is made by
 * every task alike (trd_coll_create(), a collective call: same order, same configuration on
 * every task). Its operations are non-blocking: a call checks its arguments, queues the
 * collective and returns; the work is done inside trd_advance() of the object's context, which
 * runs the completion callback. The *_sync() wrappers start a collective and advance the
 * context until it completes.
 *
 * The context must deliver the collectives' messages: create it with a receive FIFO and
 * @c recv = trd_coll_recv (or call trd_coll_dispatch() first from your own receive callback).
 * A context dedicated to collectives is best: the collectives keep a few dozen operations in
 * its work queue (6 * slots + 8 per object) and, if the queue is full, retry on their next
 * event.
 *
 * Threads: an object is used (operations started, its context advanced) by the one thread
 * that uses its context. Every task must start the same collectives in the same order on its
 * object, with the same root, sizes, type and operation.
 *
 * Conventions: constructors return a pointer, or NULL with rte_errno set; other calls return
 * 0 or a negative errno; -ENOBUFS means "retry later".
 */
#ifndef TOROID_COLL_H
#define TOROID_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <toroid/msg.h>

#ifdef __cplusplus
extern "C" {
#endif

struct trd_coll;

/** Element types of reductions. */
enum trd_coll_type {
	TRD_COLL_INT32 = 0, /**< int32_t (sum wraps around, two's complement) */
	TRD_COLL_INT64,     /**< int64_t (sum wraps around) */
	TRD_COLL_UINT64,    /**< uint64_t */
	TRD_COLL_FLOAT,     /**< float (IEEE 754 binary32) */
	TRD_COLL_DOUBLE,    /**< double (IEEE 754 binary64) */
	TRD_COLL_TYPE_MAX
};

/** Reduction operations. Bitwise ones apply to the integer types only. */
enum trd_coll_op {
	TRD_COLL_SUM = 0,
	TRD_COLL_MIN,
	TRD_COLL_MAX,
	TRD_COLL_BAND, /**< bitwise and */
	TRD_COLL_BOR,  /**< bitwise or */
	TRD_COLL_BXOR, /**< bitwise exclusive or */
	TRD_COLL_OP_MAX
};

/**
 * Completion callback of a collective: @p status is 0, or a negative errno (an operation of
 * the protocol failed: the object is then unusable, destroy it). Runs inside trd_advance() of
 * the object's context; it may start new collectives on the object.
 */
typedef void (*trd_coll_done_fn)(struct trd_coll *coll, void *cookie, int status);

/** Configuration of a collective object. Zero means the default. Identical on every task. */
struct trd_coll_conf {
	unsigned int seg_size;  /**< pipeline segment in bytes (default 65536; 1 KiB .. 1 MiB,
				 *   a multiple of 64) */
	unsigned int slots;     /**< segments in flight per tree edge (default 4, max 32) */
	unsigned int eager_max; /**< a stream of at most this many bytes goes in one message
				 *   (default 8192, at most seg_size) */
	unsigned int max_ops;   /**< collectives started and not complete (default 16, max 1024) */
	uint64_t timeout_us;    /**< trd_coll_wait() by the *_sync() wrappers (default 30 s) */
	bool yield;             /**< waits call sched_yield() when an advance found nothing to
				 *   do (threads sharing a CPU) */
};

/** Statistics of a collective object: X(ENUM, name). */
#define TRD_COLL_STATS(X)                                                                          \
	X(STARTED, "started")           /* collectives started (queued) */                         \
	X(COMPLETED, "completed")       /* collectives completed, errors included */               \
	X(ERRORS, "errors")             /* collectives completed with an error */                  \
	X(EAGER_TX, "eager_tx")         /* streams sent as one message */                          \
	X(PUTS, "puts")                 /* segments put into a neighbour's scratch slots */        \
	X(NOTIFY_TX, "notify_tx")       /* segment notifications sent */                           \
	X(GRANT_TX, "grant_tx")         /* slot grants sent */                                     \
	X(RX_MSGS, "rx_msgs")           /* collective messages received */                         \
	X(UNEXPECTED, "unexpected")     /* received for a collective not started here yet */       \
	X(TX_BYTES, "tx_bytes")         /* payload bytes sent (eager and puts) */                  \
	X(STALLS, "stalls")             /* posts refused by a full work queue (retried) */         \
	X(RETRIES, "retries")           /* sends re-posted after the target's FIFO was full */     \
	X(DUPLICATES, "duplicates")     /* messages already received, or for a collective already  \
					   complete here (ignored) */                              \
	X(PROTO_ERRORS, "proto_errors") /* messages that fit no collective (dropped) */

/** Statistics ids. */
enum trd_coll_stat {
#define TRD_COLL_STAT_ENUM_(e, n) TRD_COLL_STAT_##e,
	TRD_COLL_STATS(TRD_COLL_STAT_ENUM_)
#undef TRD_COLL_STAT_ENUM_
	/* one past the last */
	TRD_COLL_STAT_MAX
};

/* ------------------------------------------------------------------------------------------ */
/** @name Objects */

/**
 * Create a collective object over all tasks of @p client on context @p ctx (a context of
 * @p client, on the node of this task, with a receive FIFO whose receive callback is
 * trd_coll_recv() or calls trd_coll_dispatch()). Every task creates its objects in the same
 * order on the context of the same offset. It registers a scratch region of
 * 3 * slots * seg_size bytes (remote write, trd_mem_alloc(): on a node handle of an attached
 * process, a block of its region) where neighbours put segments.
 * Local: it sends nothing and returns at once; messages that arrive for an object not yet
 * created on this task are kept until it is.
 * @return the object, or NULL with rte_errno = EINVAL (NULL or foreign @p ctx, no receive
 * FIFO, bad configuration), ENOENT (the context's node is no task of the client), ENOSPC (256
 * objects on the context), ENOMEM.
 */
struct trd_coll *trd_coll_create(struct trd_client *client, struct trd_context *ctx,
				 const struct trd_coll_conf *conf);

/**
 * Destroy an idle object (every collective complete, nothing of it in flight); collectively,
 * like trd_coll_create(). NULL is a no-op.
 * @return 0, or -EBUSY (collectives or operations pending, or called from a callback).
 */
int trd_coll_destroy(struct trd_coll *coll);

/** This task's rank among the object's tasks. */
unsigned int trd_coll_rank(const struct trd_coll *coll);
/** Number of tasks. */
unsigned int trd_coll_size(const struct trd_coll *coll);
/** The object's context. */
struct trd_context *trd_coll_context(const struct trd_coll *coll);

/**
 * Receive callback for contexts that carry collectives: give it as trd_context_conf::recv
 * (@p arg is not used). Messages that are not the collectives' are counted and dropped.
 */
void trd_coll_recv(struct trd_context *ctx, void *arg, const struct trd_msg *msg);

/**
 * For a context that also receives the application's messages: call this first from the
 * receive callback. Collective messages carry a user word whose top byte is 0xC7.
 * @return 1 if @p msg was a collective message (consumed), 0 if it is the application's.
 */
int trd_coll_dispatch(struct trd_context *ctx, const struct trd_msg *msg);

/* ------------------------------------------------------------------------------------------ */
/** @name Collectives (non-blocking)
 *
 * Each call queues the collective and returns 0; @p cb (may be NULL) runs inside trd_advance()
 * when it completes here; @p handle (may be NULL) receives a handle for trd_coll_test() and
 * trd_coll_wait(). Buffers must stay untouched until completion. Lengths are in bytes per
 * task; reductions count elements.
 * Errors: -EINVAL (NULL object, @p root not a rank, NULL buffer with a length, a bad type or
 * operation, a bitwise operation on a floating-point type, a stream of 2^20 segments or
 * more); -ENOBUFS (max_ops collectives pending, or the context's work queue is full: nothing
 * started).
 */

/** Barrier: completes when every task has started it. */
int trd_coll_barrier(struct trd_coll *coll, trd_coll_done_fn cb, void *cookie, uint64_t *handle);

/** Broadcast @p len bytes of @p buf from @p root into @p buf of every task. */
int trd_coll_broadcast(struct trd_coll *coll, unsigned int root, void *buf, size_t len,
		       trd_coll_done_fn cb, void *cookie, uint64_t *handle);

/**
 * Reduce @p count elements of @p type of every task's @p sbuf with @p op into @p rbuf of
 * @p root (ignored elsewhere, may be NULL). @p sbuf may equal @p rbuf (in place).
 */
int trd_coll_reduce(struct trd_coll *coll, unsigned int root, const void *sbuf, void *rbuf,
		    size_t count, enum trd_coll_type type, enum trd_coll_op op, trd_coll_done_fn cb,
		    void *cookie, uint64_t *handle);

/** Reduce, with the result in @p rbuf of every task (bit-identical everywhere). */
int trd_coll_allreduce(struct trd_coll *coll, const void *sbuf, void *rbuf, size_t count,
		       enum trd_coll_type type, enum trd_coll_op op, trd_coll_done_fn cb,
		       void *cookie, uint64_t *handle);

/** Gather @p len bytes of every task's @p sbuf into @p rbuf of @p root, rank r at r * len. */
int trd_coll_gather(struct trd_coll *coll, unsigned int root, const void *sbuf, void *rbuf,
		    size_t len, trd_coll_done_fn cb, void *cookie, uint64_t *handle);

/** Scatter: task r receives bytes [r * len, (r + 1) * len) of @p root's @p sbuf in @p rbuf. */
int trd_coll_scatter(struct trd_coll *coll, unsigned int root, const void *sbuf, void *rbuf,
		     size_t len, trd_coll_done_fn cb, void *cookie, uint64_t *handle);

/** Allgather: every task's @p rbuf receives every task's @p len bytes, rank r at r * len. */
int trd_coll_allgather(struct trd_coll *coll, const void *sbuf, void *rbuf, size_t len,
		       trd_coll_done_fn cb, void *cookie, uint64_t *handle);

/**
 * State of the collective @p handle: 0 complete, -EINPROGRESS not yet, or the negative errno
 * it failed with (kept for the last 64 collectives), -EINVAL (no such handle).
 */
int trd_coll_test(const struct trd_coll *coll, uint64_t handle);

/**
 * Advance the object's context until collective @p handle completes (at most @p timeout_us).
 * @return its status (trd_coll_test()), -ETIMEDOUT, or -EBUSY from a callback of the context.
 */
int trd_coll_wait(struct trd_coll *coll, uint64_t handle, uint64_t timeout_us);

/* ------------------------------------------------------------------------------------------ */
/** @name Blocking wrappers: start, then trd_coll_wait() for conf->timeout_us. One task per
 * thread: a thread blocked here advances only this task's context. */

int trd_coll_barrier_sync(struct trd_coll *coll);
int trd_coll_broadcast_sync(struct trd_coll *coll, unsigned int root, void *buf, size_t len);
int trd_coll_reduce_sync(struct trd_coll *coll, unsigned int root, const void *sbuf, void *rbuf,
			 size_t count, enum trd_coll_type type, enum trd_coll_op op);
int trd_coll_allreduce_sync(struct trd_coll *coll, const void *sbuf, void *rbuf, size_t count,
			    enum trd_coll_type type, enum trd_coll_op op);
int trd_coll_gather_sync(struct trd_coll *coll, unsigned int root, const void *sbuf, void *rbuf,
			 size_t len);
int trd_coll_scatter_sync(struct trd_coll *coll, unsigned int root, const void *sbuf, void *rbuf,
			  size_t len);
int trd_coll_allgather_sync(struct trd_coll *coll, const void *sbuf, void *rbuf, size_t len);

/* ------------------------------------------------------------------------------------------ */
/** @name Types, operations, statistics */

/** Size in bytes of an element of @p type, or 0 for an invalid type. */
size_t trd_coll_type_size(enum trd_coll_type type);
/** "int32", "int64", "uint64", "float", "double", or NULL. */
const char *trd_coll_type_name(enum trd_coll_type type);
/** "sum", "min", "max", "band", "bor", "bxor", or NULL. */
const char *trd_coll_op_name(enum trd_coll_op op);
/** 1 if @p op applies to @p type, 0 if not (a bitwise operation on a float type, bad values). */
int trd_coll_op_valid(enum trd_coll_op op, enum trd_coll_type type);

/** Copy the statistics (enum trd_coll_stat order) into @p out[TRD_COLL_STAT_MAX]. */
int trd_coll_stats_get(const struct trd_coll *coll, uint64_t *out);
/** Name of a statistic, or NULL. */
const char *trd_coll_stat_name(unsigned int stat);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_COLL_H */
