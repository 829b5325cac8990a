/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid virtual network interfaces (VNI): the application side.
 *
 * An application is a plain process: it links libtoroid_vni, which needs neither EAL nor
 * hugepages, and talks to the engine daemon (toroid-node) of its host. trd_vni_open() connects
 * to the engine's Unix socket, registers the process under its name (application id, process
 * id) and receives, over the socket, a memfd holding the process's own virtual network
 * interface, which it maps: a command queue, a completion queue, send and receive context
 * tables, a context region for inline data and destination lists, a buffer pool and a doorbell
 * array. Only the engine and this process map that memory. See docs/vni.md.
 *
 * Messages are tagged and go from one process to another (any application, any node): a send
 * names the destination (application, process) and a 64-bit tag; a receive names the source
 * (or any) and the tag (or any) and a buffer. Messages up to the interface's short threshold
 * are copied at post time (the caller's buffer is free on return); longer ones are sent
 * zero-copy from the buffer pool (trd_vni_alloc()) and must stay untouched until their
 * completion. Receive buffers are in the pool. A message that arrives before its receive is
 * held by the engine and delivered when the receive is posted. Nothing is ever lost: a
 * destination engine that cannot hold a message yet makes the sender wait.
 *
 * Every posted send or receive yields exactly one completion (trd_vni_poll(),
 * trd_vni_wait()), and can also bump a doorbell word. Messages are matched by tag; there is
 * no ordering guarantee between two messages that both match one receive.
 *
 * Threads: a handle is used by one thread at a time. Conventions: constructors return a
 * pointer or NULL with errno set; other calls return 0 (or a count) or a negative errno;
 * -EAGAIN means "retry later" (no free context: reap completions first).
 */
#ifndef TOROID_VNI_H
#define TOROID_VNI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct trd_vni;

/** Wildcard for an application or process id in a receive; as trd_vni_conf::proc, "any free
 * process of the application on this node" (the engine picks it: trd_vni_info::self). */
#define TRD_VNI_ANY UINT32_MAX

/** Default socket of the engine when trd_vni_conf::socket is NULL and $TOROID_VNI_SOCKET is
 * unset (toroid-node's default for node rank 0). */
#define TRD_VNI_DEFAULT_SOCKET "/run/toroid/node0.sock"

/** Largest short-message threshold (bytes copied inline). */
#define TRD_VNI_SHORT_MAX 896
/** trd_vni_wait() polls this long (µs) before it sleeps on the eventfd, unless
 * trd_vni_conf::wait_spin_us says otherwise (docs/vni.md, "Commands, completions, wake-ups") */
#define TRD_VNI_WAIT_SPIN_DEFAULT_US 50
/** the longest trd_vni_conf::wait_spin_us */
#define TRD_VNI_WAIT_SPIN_MAX_US 1000000

/** Most destinations of one multicast. */
#define TRD_VNI_MCAST_MAX 64

/** A process: (application id, process id), as named in the topology file. */
struct trd_vni_addr {
	uint32_t app;
	uint32_t proc;
};

/** Interface configuration. Zero means the default. */
struct trd_vni_conf {
	const char *socket;       /**< engine socket (default $TOROID_VNI_SOCKET, else
				   *   TRD_VNI_DEFAULT_SOCKET) */
	uint32_t app;             /**< this process's application id */
	uint32_t proc;            /**< this process's process id, or TRD_VNI_ANY: the engine
				   *   gives the lowest process id of application @c app that
				   *   the topology places on its node and that is not attached
				   *   now (trd_vni_info::self tells which; EADDRINUSE if all
				   *   are attached) */
	size_t pool_size;         /**< buffer pool bytes (default 16 MiB; the engine caps it) */
	unsigned int n_send;      /**< send contexts (default 64, max 4096) */
	unsigned int n_recv;      /**< receive contexts (default 64, max 4096) */
	unsigned int n_doorbells; /**< doorbell words (default 64, max 4096) */
	int short_max;            /**< short/long threshold in bytes, 0..TRD_VNI_SHORT_MAX
				   *   (default 0 means 512; -1 means 0: every message is long) */
	unsigned int connect_timeout_ms; /**< keep trying to reach the engine this long (0: once) */
	bool ordered;     /**< two sends of this interface to one destination are matched
			   *   by the receiver in the order they were posted (numbered per
			   *   pair, sent without waiting for each other; docs/vni.md,
			   *   "Ordered interfaces"); multicasts are not ordered */
	int wait_spin_us; /**< trd_vni_wait() polls the completion queue (giving the CPU away
			   *   with sched_yield between looks) this long before it sleeps on
			   *   the eventfd: 0 means TRD_VNI_WAIT_SPIN_DEFAULT_US, -1 sleeps at
			   *   once, at most TRD_VNI_WAIT_SPIN_MAX_US */
	/* messaging-unit objects (docs/vni.md, "Messaging-unit objects"): all 0, none */
	unsigned int mu_fifos;       /**< injection FIFOs of engine descriptors (0 .. 8) */
	unsigned int mu_fifo_slots;  /**< 64-byte slots of each (a power of 2, 64 .. 4096;
				      *   0 means 1024) */
	size_t mu_region;            /**< bytes of the segment the engine registers as this
				      *   process's region (at most 1 GiB and the engine's pool
				      *   limit); trd_vni_mu_info() says where and its key */
	unsigned int mu_rfifos;      /**< reception FIFOs (0 .. TRD_VNI_MU_RFIFOS_MAX) */
	unsigned int mu_rfifo_slots; /**< 64-byte slots of each (a power of 2, 64 .. 4096;
				      *   0 means 1024): a message takes one for its header and
				      *   one per 64 bytes */
	unsigned int mu_rfifo_first; /**< 0: the engine gives free ids; else the node id of
				      *   reception FIFO 0 (TRD_GUEST_RFIFO_FIRST ..), FIFO k's
				      *   that + k, as every task of a program asks alike (a
				      *   messaging-layer endpoint names a FIFO by its id):
				      *   EADDRINUSE if one is taken */
};

/** What a completion is for. */
enum trd_vni_cpl_kind {
	TRD_VNI_CPL_SEND = 1,   /**< a send (or a multicast) finished */
	TRD_VNI_CPL_RECV = 2,   /**< a receive got its message */
	TRD_VNI_CPL_WRITE = 3,  /**< a one-sided write (trd_vni_write) finished */
	TRD_VNI_CPL_READ = 4,   /**< a one-sided read (trd_vni_read) finished */
	TRD_VNI_CPL_ATOMIC = 5, /**< a remote atomic (trd_vni_atomic) finished: data is the old
				 *   value */
	TRD_VNI_CPL_COLL = 6,   /**< a collective (trd_vni_allreduce, ...) ended on this node */
};

/** A completion. */
struct trd_vni_cpl {
	enum trd_vni_cpl_kind kind;
	int status;               /**< 0, or a negative errno: -ENOMSG (a probe found nothing),
				   *   -EMSGSIZE (receive: the message was longer than the buffer,
				   *   which holds its first cap bytes; len is the whole length and
				   *   its sender succeeded), -ECONNREFUSED (no such process: not
				   *   in the topology, or not attached within the engine's timeout),
				   *   -ECONNRESET (the peer process died mid-transfer),
				   *   -EHOSTUNREACH (the peer engine is down), -ECANCELED (the
				   *   engine is shutting down, or trd_vni_cancel() withdrew the
				   *   receive), -EINVAL (bad context) */
	uint32_t len;             /**< receive: bytes received; send: bytes sent; write, read:
				   *   bytes; atomic: the operand size */
	struct trd_vni_addr peer; /**< receive: the sender; send, write, read, atomic: the
				   *   destination (first one of a multicast) */
	uint64_t tag;             /**< the message's tag */
	uint64_t cookie;          /**< the caller's cookie */
	void *buf;                /**< receive: the buffer given to trd_vni_recv(); write, read:
				   *   the local buffer */
	uint64_t data;            /**< receive: the message's immediate data, if has_data;
				   *   atomic: the value before the operation */
	bool has_data;            /**< receive: the message was sent by trd_vni_senddata();
				   *   atomic: always (status 0) */
	uint64_t claim;           /**< trd_vni_claim() that found a message: its handle (never 0),
				   *   for trd_vni_recv_claimed() or trd_vni_discard(); else 0 */
};

/** Interface facts and the engine's counters for it. */
struct trd_vni_info {
	struct trd_vni_addr self; /**< this interface's identity: (app, proc) as attached (the
				   *   process the engine chose if trd_vni_conf::proc was
				   *   TRD_VNI_ANY); peers send to it */
	uint8_t node[3];          /**< the engine node's coordinate (x, y, z) */
	char node_name[32];       /**< the engine node's name */
	size_t pool_size;         /**< buffer pool bytes */
	unsigned int short_max;   /**< short/long threshold */
	unsigned int n_send, n_recv, n_doorbells;
	uint64_t tx_msgs;  /**< sends the engine completed */
	uint64_t tx_pkts;  /**< packets the engine injected for this interface */
	uint64_t tx_bytes; /**< payload bytes sent */
	uint64_t rx_msgs;  /**< receives completed */
	uint64_t rx_bytes;
	uint64_t naks; /**< times a destination made one of our sends wait */
};

/**
 * Attach this process to its engine.
 * @return the interface, or NULL with errno = EINVAL (bad configuration), ENOENT or
 * ECONNREFUSED (no engine at the socket), EADDRINUSE (this (app, proc) is attached already;
 * with proc TRD_VNI_ANY: every process of app on the engine's node is), EADDRNOTAVAIL (the
 * topology does not place this process, or with TRD_VNI_ANY any process of app, on the
 * engine's node), ENOSPC (the
 * engine serves its maximum of interfaces), ENOMEM, EPROTO (unexpected answer, or the
 * engine speaks another version of the attach protocol). trd_vni_open_error() says why.
 */
struct trd_vni *trd_vni_open(const struct trd_vni_conf *conf);

/** Why the last trd_vni_open() of this thread failed, as the engine put it ("VNI protocol
 * version mismatch: the library speaks 3, this engine 4"), or "" (it did not say, or the last
 * open succeeded). Valid until the thread's next trd_vni_open(). */
const char *trd_vni_open_error(void);

/** Detach: the engine reclaims the interface (pending operations are dropped). NULL is a no-op. */
void trd_vni_close(struct trd_vni *v);

/** Copy the interface facts and counters. @return 0 or -EINVAL. */
int trd_vni_info(const struct trd_vni *v, struct trd_vni_info *info);

/** Allocate @p len bytes (64-byte aligned) from the buffer pool. @return NULL with errno ENOMEM. */
void *trd_vni_alloc(struct trd_vni *v, size_t len);
/** Give back a block from trd_vni_alloc(). NULL is a no-op. */
void trd_vni_free(struct trd_vni *v, void *p);

/**
 * Send @p len bytes to process @p dst with tag @p tag. If @p len is at most the short
 * threshold the bytes are copied now (from anywhere); otherwise @p buf must lie in the pool
 * and stay untouched until the completion. @p doorbell is a doorbell index to bump on
 * completion, or -1.
 * @return 0; -EAGAIN (no free send context or command slot: take completions first);
 * -EINVAL (bad argument, a long message outside the pool, a bad doorbell); -ECONNRESET (the
 * engine is gone).
 */
int trd_vni_send(struct trd_vni *v, struct trd_vni_addr dst, uint64_t tag, const void *buf,
		 size_t len, int doorbell, uint64_t cookie);

/**
 * Send like trd_vni_send(), with 64 bits of immediate data that the receive's completion
 * carries (trd_vni_cpl.data).
 * @return as trd_vni_send().
 */
int trd_vni_senddata(struct trd_vni *v, struct trd_vni_addr dst, uint64_t tag, uint64_t data,
		     const void *buf, size_t len, int doorbell, uint64_t cookie);

/**
 * Send the same @p len bytes to @p n processes (1..TRD_VNI_MCAST_MAX) in one command. The
 * engine reads the data from this interface for every destination without copying it (see
 * docs/vni.md). One completion, when every destination has the message: status 0, or the
 * first failure.
 * @return as trd_vni_send().
 */
int trd_vni_mcast(struct trd_vni *v, const struct trd_vni_addr *dst, unsigned int n, uint64_t tag,
		  const void *buf, size_t len, int doorbell, uint64_t cookie);

/** trd_vni_recv() flag: match any tag. */
#define TRD_VNI_ANY_TAG 0x1

/**
 * Post a receive for a message from @p src (TRD_VNI_ANY in either field matches any) with tag
 * @p tag (any with TRD_VNI_ANY_TAG in @p flags) into @p buf (in the pool, room @p cap bytes;
 * NULL with @p cap 0 takes 0-byte messages). A sleeping engine is not woken for it (unless it
 * asks for a doorbell or the interface is armed): the process's next command that kicks (a
 * send, say), trd_vni_poll() or wait (trd_vni_wait(), trd_vni_arm(), ...) does; reading memory
 * or trd_vni_rfifo_poll() does not (docs/vni.md, "Commands, completions, wake-ups").
 * @return 0, -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_recv(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, unsigned int flags,
		 void *buf, size_t cap, int doorbell, uint64_t cookie);

/**
 * Post a receive like trd_vni_recv() that matches a message whose tag equals @p tag in every
 * bit that is clear in @p ignore (the bits set in @p ignore match anything: 0 is an exact tag,
 * UINT64_MAX any tag). The completion carries the message's whole tag.
 * @return as trd_vni_recv().
 */
int trd_vni_recv_mask(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
		      void *buf, size_t cap, int doorbell, uint64_t cookie);

/**
 * Receive contexts free now: how many more receives, probes and claims may be posted before
 * one answers -EAGAIN (a layer that queues receives itself keeps some for its probes).
 * @return the count, or -EINVAL.
 */
int trd_vni_recv_room(const struct trd_vni *v);

/**
 * Would a probe find nothing now? True when the engine says that no message waits for this
 * interface unmatched and no refused request to send may (what it last wrote in the shared
 * segment, read without a command): a probe (trd_vni_probe(), trd_vni_claim()) would answer
 * -ENOMSG, so a layer may answer so itself and save the round trip. False when something may
 * wait, from an engine that does not say, or for NULL: ask the engine. A message that arrives
 * meanwhile is seen by the next call.
 */
bool trd_vni_probe_none(const struct trd_vni *v);

/**
 * Probe: is a message from @p src whose tag matches @p tag under @p ignore (as
 * trd_vni_recv_mask()) waiting at the engine (staged, or refused until a receive appears)?
 * One receive completion with @p cookie answers: status 0 with the message's source, tag,
 * length and immediate data (the message stays where it is: a receive takes it later), or
 * -ENOMSG. Uses a receive context until it completes.
 * @return 0, -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_probe(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
		  uint64_t cookie);

/**
 * Claim: a probe (as trd_vni_probe()) that also reserves the message it finds. Its completion
 * (status 0) carries the message's source, tag, length and immediate data and a handle in
 * trd_vni_cpl.claim; from then on no receive or probe matches the message, and only
 * trd_vni_recv_claimed() or trd_vni_discard() with the handle takes it. -ENOMSG: nothing
 * waits; -ENOBUFS: the engine has no room to hold the claim now (retry). A claimed message
 * holds its staging until it is taken; trd_vni_close() (or the death of the process) drops
 * it. Uses a receive context until it completes.
 * @return 0, -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_claim(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
		  uint64_t cookie);

/**
 * Receive the message that trd_vni_claim() reserved under @p claim into @p buf (in the pool,
 * room @p cap). Completes like trd_vni_recv() with the message's source, tag, length and data;
 * -EINVAL if the handle names no message claimed by this interface (unknown, already taken
 * or dropped, or the sender's message ended meanwhile: its peer died or its node went down);
 * -EMSGSIZE (truncated) as trd_vni_recv() if it does not fit.
 * @return 0, -EAGAIN, -EINVAL (0 handle, bad buffer), -ECONNRESET.
 */
int trd_vni_recv_claimed(struct trd_vni *v, uint64_t claim, void *buf, size_t cap, int doorbell,
			 uint64_t cookie);

/**
 * Drop the message that trd_vni_claim() reserved under @p claim, unread. One receive
 * completion with @p cookie: status 0 with the message's source, tag and length (no data), or
 * -EINVAL for a handle as in trd_vni_recv_claimed(). The sender completes with status 0.
 * @return 0, -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_discard(struct trd_vni *v, uint64_t claim, uint64_t cookie);

/**
 * Drop the first message that a probe with the same arguments would report, unread: its
 * completion is the probe's answer (status 0 with source, tag, length; or -ENOMSG). The
 * sender completes with status 0.
 * @return 0, -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_discard_first(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
			  uint64_t cookie);

/**
 * Withdraw the posted receive whose cookie is @p cookie. If it still waits for a message it
 * completes with -ECANCELED; if a message already matched it, it completes as usual.
 * @return 0 (the cancel is on its way), -ENOENT (no receive with that cookie is pending),
 * -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_cancel(struct trd_vni *v, uint64_t cookie);

/** Take up to @p n completions without blocking. @return the count, or -EINVAL. */
int trd_vni_poll(struct trd_vni *v, struct trd_vni_cpl *cpl, unsigned int n);

/**
 * Take up to @p n completions, sleeping on the interface's eventfd until at least one is there
 * or @p timeout_ms passes (-1: no limit). It first polls for trd_vni_conf::wait_spin_us
 * (yielding the CPU between looks; never longer than @p timeout_ms): a completion that comes
 * within that time is taken without a sleep and a wake-up.
 * @return the count (>= 1); -ETIMEDOUT; -ECONNRESET (the engine closed the interface); -EINVAL.
 */
int trd_vni_wait(struct trd_vni *v, struct trd_vni_cpl *cpl, unsigned int n, int timeout_ms);

/**
 * The interface's eventfd, for poll/epoll: readable after trd_vni_arm() once a completion is
 * queued. Read it (8 bytes) before arming again.
 */
int trd_vni_fd(const struct trd_vni *v);

/** Ask for one eventfd signal at the next completion. @return 0, -EBUSY (completions are
 * already queued: take them first), -EINVAL. */
int trd_vni_arm(struct trd_vni *v);

/** Operations posted and not yet completed. */
unsigned int trd_vni_pending(const struct trd_vni *v);

/**
 * Processes busy-polling on this host as the engine sees them: the distinct processes attached
 * to the engine (this one included) plus the engine's own thread; it changes as processes
 * attach and leave. A library compares it with the CPUs it may run on to decide whether an
 * idle poll should give its CPU away (sched_yield). @return the count, 0 if the engine does
 * not say (an older engine) or @p v is NULL.
 */
unsigned int trd_vni_busy_procs(const struct trd_vni *v);

/** Words of the trd_vni_engine_cpus() bitmap: CPUs 0 .. 64 * TRD_VNI_CPU_WORDS - 1. */
#define TRD_VNI_CPU_WORDS 4

/**
 * The CPUs the engine's polling thread may run on (its lcore's), as the engine wrote them into
 * the segment at attach: bit c % 64 of @p mask[c / 64] is CPU c. A library may keep a process
 * that no one bound off these CPUs, so that it does not take turns with the engine on one CPU
 * while another sits idle (the libfabric provider does: docs/libfabric.md).
 * @param mask  TRD_VNI_CPU_WORDS words, written (all 0 when the engine does not say).
 * @return the number of CPUs in @p mask; 0 if the engine does not say (an older engine);
 *         -EINVAL if @p v or @p mask is NULL.
 */
int trd_vni_engine_cpus(const struct trd_vni *v, uint64_t mask[TRD_VNI_CPU_WORDS]);

/** trd_vni_hint_compute(): the process would run on the engine's CPUs too if the engine left
 * them free (the libfabric provider's placement gives them back to a process that computes). */
#define TRD_VNI_HINT_MOVABLE 1u

/**
 * Tell the engine how much of its time this process computes away from the library (between
 * its polls), in thousandths, as the library measured it lately. A hint: the engine adds up
 * the hints of the awake processes that run off its CPUs, and where they need more CPUs than
 * theirs and one of them is TRD_VNI_HINT_MOVABLE, it leaves its own CPUs to them
 * (toroid-node --idle-us auto sleeps when idle instead of polling: docs/toroid-node.md, "The
 * loop"). A process that never calls it is counted as computing all the time, movable (the
 * rule before the hint). Cheap enough to call at every poll: the segment is written only when
 * the value changes.
 * @param flags  0 or TRD_VNI_HINT_MOVABLE.
 * @return 0, or -EINVAL if @p v is NULL, @p permille is above 1000 or @p flags is unknown.
 */
int trd_vni_hint_compute(struct trd_vni *v, unsigned int permille, unsigned int flags);

/** The current value of doorbell @p idx (the engine adds 1 per completion that names it). */
uint64_t trd_vni_doorbell(const struct trd_vni *v, unsigned int idx);

/**
 * Wait until doorbell @p idx reaches at least @p value, polling the word and yielding the CPU
 * between looks. @return 0, -ETIMEDOUT, -EINVAL, -ECONNRESET.
 */
int trd_vni_doorbell_wait(struct trd_vni *v, unsigned int idx, uint64_t value, int timeout_ms);

/* ------------------------------------------------------------------------------------------ */
/* One-sided access to application memory (docs/vni.md): the engine of the target process reads
 * and writes its memory through the /proc/self/mem the process passed at trd_vni_open(), each
 * access checked against its mappings; the target application does nothing. */

/** trd_vni_mr_reg() access bits. */
#define TRD_VNI_MR_REMOTE_READ  0x1 /**< other processes may read it (trd_vni_read, atomics) */
#define TRD_VNI_MR_REMOTE_WRITE 0x2 /**< other processes may write it (trd_vni_write, atomics) */
/**
 * Remote addresses are offsets from @p addr (default: they are this process's virtual
 * addresses)
 */
#define TRD_VNI_MR_OFFSET 0x4
/**
 * [addr, addr + len) lies in this process's messaging-unit region (trd_vni_mu_info()): the
 * engine registers it as a region of its node, its key a node key that descriptors name
 * (rkey; what trd_mr_register() on a handle of trd_node_attach() asks). Remote addresses
 * are offsets from @p addr; at most TRD_VNI_MU_MRS at once.
 */
#define TRD_VNI_MR_MU 0x8
/**
 * With TRD_VNI_MR_MU and TRD_VNI_MR_REMOTE_WRITE: a doorbell region. Every put into it
 * through its key leaves a slot with TRD_RSLOT_DOORBELL in this process's reception FIFO @p k,
 * named by TRD_VNI_MR_DB_FIFO(k) (what trd_doorbell_register() with an event queue asks on a
 * handle of trd_node_attach(): docs/vni.md "Event queues and doorbells on a handle");
 * trd_vni_rfifo_poll() hands such a slot out as a 0-byte message.
 */
#define TRD_VNI_MR_DOORBELL   0x10
#define TRD_VNI_MR_DB_FIFO(k) ((unsigned int)(k) << 8)
/** Regions of TRD_VNI_MR_MU an interface holds at once. */
#define TRD_VNI_MU_MRS 32

/**
 * Register [addr, addr + len) of this process's own memory (anywhere: heap, stack, mmap; not
 * necessarily the pool) for one-sided access by other VNI processes, through @p key. If *key is 0
 * the engine picks a random non-zero key; otherwise *key is used (-EEXIST if this interface has
 * it already). Synchronous: returns once the engine holds the region.
 * @return 0; -EINVAL (len 0, wrap, bad access bits); -EEXIST; -ENOSPC (too many regions);
 * -EFAULT (not mapped over its whole length, or read-only and @p access allows remote
 * writes); -EPERM (this process gave the engine no access to its memory); -ECONNRESET.
 */
int trd_vni_mr_reg(struct trd_vni *v, void *addr, size_t len, unsigned int access, uint64_t *key);

/* ------------------------------------------------------------------------------------------ */
/** @name Messaging-unit objects (docs/vni.md, "Messaging-unit objects")
 * With trd_vni_conf::mu_fifos, mu_rfifos or mu_region, the process owns, as an in-process
 * program does: injection FIFOs that take the engine's own descriptors (struct trd_desc,
 * <toroid/toroid.h>), reception FIFOs where memory-FIFO messages land (read in place, as
 * struct trd_msg), a block of the node's byte counters, and a region of its segment the engine
 * reads and writes directly. */

struct trd_desc;
struct trd_msg;

/** Most injection FIFOs an interface has. */
#define TRD_VNI_MU_FIFOS_MAX 8
/** Most reception FIFOs an interface has. */
#define TRD_VNI_MU_RFIFOS_MAX 4

/** What an interface's messaging-unit objects are. */
struct trd_vni_mu_info {
	/** the FIFOs themselves: rte_rings of 64-byte elements in the segment, for a program
	 *  that posts into them by itself (trd_vni_inject() says how) */
	void *fifos[TRD_VNI_MU_FIFOS_MAX];
	void *region;            /**< the region, in this process's mapping of the segment */
	size_t region_len;       /**< its bytes (0: none) */
	uint64_t region_key;     /**< its key: name it as src_key (TRD_DF_SRC_MR) here, or as
				  *   rkey from any node */
	unsigned int n_fifos;    /**< injection FIFOs */
	unsigned int inline_max; /**< longest message copied into the FIFO at post time */
	unsigned int n_counters; /**< counters 1 .. n_counters - 1 are this process's */
	uint64_t descs;          /**< descriptors the engine took from the FIFOs */
	uint64_t bad_descs;      /**< ... and dropped unused: they failed a check */
	uint64_t bad_rings;      /**< FIFOs no longer served: their ring header was broken */
	/** reception FIFOs: their node ids (TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST), what a
	 *  sender names as a memory-FIFO message's fifo to reach them from any node */
	uint8_t rfifo_ids[TRD_VNI_MU_RFIFOS_MAX];
	unsigned int n_rfifos;
	uint64_t rmsgs;      /**< messages the engine wrote into them */
	uint64_t rfull;      /**< ... refused because the FIFO had no room (the sender's
			      *   engine sends them again over a reliable link) */
	uint64_t rbad_rings; /**< reception FIFOs no longer written: their consumer index was
			      *   found broken */
};

/** Describe @p v's messaging-unit objects. @return 0, -ENOENT (it has none), -EINVAL. */
int trd_vni_mu_info(const struct trd_vni *v, struct trd_vni_mu_info *info);
/**
 * Post @p n descriptors into injection FIFO @p fifo, with trd_inject_bulk()'s rules: a put
 * or a memory-FIFO message (op PUT or FIFO; a message only to an attached process's reception
 * FIFO, TRD_GUEST_RFIFO_FIRST .. TRD_GUEST_RFIFO_LAST: the node's own FIFOs are the engine's
 * and its applications', and the VNI protocol's names its sender; flags TRD_DF_SRC_MR with this
 * process's region key and an offset in it, TRD_DF_IMM, or none); data inline (copied now, at most
 * inline_max bytes) or in the region (read when the engine sends it: untouched until the injection
 * counter is zero); inj_ctr one of this process's counters (1 .. n_counters - 1) or 0; rec_ctr the
 * target's node counter id (trd_vni_counter_id() there). Or a remote get (trd_desc_rget(),
 * flags none or TRD_DF_ORDERED, for the target's TRD_ENGINE_FIFO: its 1 .. TRD_RGET_MAX_DESCS
 * carried descriptors copied now) whose carried descriptors are puts addressed to this process's
 * node, from the target's registered memory (TRD_DF_SRC_MR, the target's key) or immediate, with no
 * completion or verdict flag (an RDMA read names this process's region key and offset as rkey and
 * roff and trd_vni_counter_id() of one of its counters as rec_ctr), or whose only one is a
 * reflection's completion: an empty memory-FIFO message to one of this process's reception FIFOs
 * flagged TRD_DF_CPL alone, whose outcome the engine writes there (docs/vni.md "Reflection by
 * completion id"). Or an atomic (trd_vni_desc_atomic(), in <toroid/toroid.h>). Any of them may be
 * tracked: TRD_DF_ACKREQ, aux an id of the process's own (not 0), ack_fifo the id of one of its
 * reception FIFOs, where the outcome arrives (docs/vni.md "Tracked operations"; a tracked atomic
 * has no injection counter and its old value comes in the outcome; a remote get's carried put may
 * be tracked with the remote get's id only). The engine checks each descriptor again and drops (and
 * counts, trd_vni_mu_info()) one that breaks a rule, failing its injection counter. @return 0,
 * -EINVAL, -EMSGSIZE (inline data too long, more than TRD_RGET_MAX_DESCS carried), -ENOBUFS (the
 * FIFO is full: nothing posted), -ENOENT (no such FIFO).
 */
int trd_vni_inject(struct trd_vni *v, unsigned int fifo, const struct trd_desc *d, unsigned int n);
/** Set counter @p k (1 .. n_counters - 1), e.g. to the bytes expected. @return 0 or -EINVAL. */
int trd_vni_counter_set(struct trd_vni *v, uint16_t k, int64_t value);
/** Read counter @p k. @return 0 or -EINVAL. */
int trd_vni_counter_read(const struct trd_vni *v, uint16_t k, int64_t *value);
/** The node's id of counter @p k: what a descriptor names as rec_ctr to reach it from any node.
 * @return the id, or 0 (@p k is not a counter of @p v). */
uint16_t trd_vni_counter_id(const struct trd_vni *v, uint16_t k);
/**
 * Wait (polling) until counter @p k is zero. @return 0, -ETIMEDOUT, -EHOSTUNREACH (an operation
 * counting on it failed or was dropped: at or below TRD_COUNTER_FAILED), -ERANGE (below 0
 * otherwise), -EINVAL, -ECONNRESET.
 */
int trd_vni_counter_wait(struct trd_vni *v, uint16_t k, uint64_t timeout_us);
/**
 * The node id of reception FIFO @p k (0 .. n_rfifos - 1) of @p v: what a sender names as a
 * memory-FIFO message's fifo (trd_desc_fifo(), from any node, in-process or attached) to reach
 * it. @return the id, or 0 (no such FIFO).
 */
uint8_t trd_vni_rfifo_id(const struct trd_vni *v, unsigned int k);
/**
 * Take up to @p n messages from reception FIFO @p k, in the order they arrived, read in place:
 * each struct trd_msg (<toroid/toroid.h>: src, fifo, len, msg_id, user; status and cause of a
 * tracked operation's outcome, a struct trd_rslot with TRD_RSLOT_OUTCOME) points into
 * the FIFO, its bytes contiguous, valid until trd_vni_rfifo_release(). Never sleeps.
 * @return the count (0: none), -EINVAL, -ENOENT (no such FIFO), -EPROTO (the FIFO holds
 * something the engine never wrote: it is no longer read).
 */
int trd_vni_rfifo_poll(struct trd_vni *v, unsigned int k, struct trd_msg *msgs, unsigned int n);
/** Give back to the engine every message of reception FIFO @p k that trd_vni_rfifo_poll()
 * returned: their slots take new messages. @return 0, -EINVAL, -ENOENT. */
int trd_vni_rfifo_release(struct trd_vni *v, unsigned int k);
/**
 * Wait until reception FIFO @p k holds a message and take it as trd_vni_rfifo_poll() with
 * n = 1: polls (yielding the CPU) for the interface's spin window, then arms the FIFO and
 * sleeps on its eventfd (trd_vni_rfifo_fd()). @p timeout_ms < 0: no limit. @return 1,
 * -ETIMEDOUT, -ECONNRESET, or an error of trd_vni_rfifo_poll().
 */
int trd_vni_rfifo_wait(struct trd_vni *v, unsigned int k, struct trd_msg *msg, int timeout_ms);
/**
 * Reception FIFO @p k as an event queue: its own eventfd, which the engine signals (adds 1) in
 * the round that wrote a message into the FIFO after trd_vni_rfifo_arm(); a thread bound to any
 * CPU may poll or epoll it. The descriptor is the interface's (closed by trd_vni_close()).
 * @return the descriptor, -EINVAL, -ENOENT.
 */
int trd_vni_rfifo_fd(const struct trd_vni *v, unsigned int k);
/** Ask for one signal on reception FIFO @p k's eventfd at its next message (the engine disarms
 * it as it signals). @return 0; -EBUSY (a message is there already: poll it; the FIFO stays
 * armed, as trd_vni_arm() leaves the interface); -EINVAL; -ENOENT. */
int trd_vni_rfifo_arm(struct trd_vni *v, unsigned int k);
/** Withdraw a region: later accesses through its key fail at the target (-EACCES at the
 * origin). @return 0, -ENOENT, -ECONNRESET. */
int trd_vni_mr_dereg(struct trd_vni *v, uint64_t key);

/* ------------------------------------------------------------------------------------------ */
/** @name One API (docs/vni.md, "One API"; library libtoroid_attach, which also needs libtoroid
 * but no EAL) */

struct trd_node;
/**
 * Attach this process to its engine as trd_vni_open() does (@p conf must ask for
 * messaging-unit objects: mu_fifos, mu_rfifos, mu_region) and give a node handle the calls of
 * <toroid/toroid.h> take as a node of this process: trd_node_coord(), trd_inj_fifo() and
 * trd_inject() (FIFOs 0 .. mu_fifos - 1), trd_counter_*() (ids of the node, from the process's
 * block), trd_mr_register() (a part of the region), trd_mem_alloc(), trd_rec_fifo() with
 * trd_rec_fifo_id(), trd_rec_fifo_poll()/_wait(), trd_msg_free(), trd_track_*(),
 * trd_inject_reflect(), trd_eq_*() (queues of the library, fed by the FIFOs bound to them),
 * trd_doorbell_register() and trd_doorbell_wait(). Others that need the node
 * itself refuse it (-ENOTSUP). trd_node_free() detaches. Counter ids are the node's, in a
 * descriptor's inj_ctr as in its rec_ctr. Above 256 bytes (inline) a source must lie in the
 * region: memory from trd_mem_alloc(). Messages are read in place; the ring's slots go back
 * once every message taken from that FIFO was freed.
 * @return the handle, or NULL with errno and rte_errno (trd_vni_open()'s, or EINVAL: no
 * messaging-unit objects).
 */
struct trd_node *trd_node_attach(const struct trd_vni_conf *conf);
/** The interface behind a handle of trd_node_attach() (tagged messages, statistics), or NULL
 * for a node of this process. */
struct trd_vni *trd_node_vni(const struct trd_node *n);

/**
 * One-sided write of @p len bytes (0 .. 1 GiB) from @p buf (anywhere in this process's memory;
 * untouched until the completion) to process @p dst's region @p rkey at @p raddr (its virtual
 * address, or offset for a TRD_VNI_MR_OFFSET region). The target application does nothing: its
 * engine writes the bytes. One completion, kind TRD_VNI_CPL_WRITE, once every byte is in the
 * target's memory (delivery complete): status 0, -EACCES (unknown key, no write access, outside
 * the region; nothing written), -ECONNREFUSED, -ECONNRESET, -EHOSTUNREACH, -EFAULT (@p buf not
 * readable).
 * @return 0, -EAGAIN, -EINVAL, -ECONNRESET.
 */
int trd_vni_write(struct trd_vni *v, struct trd_vni_addr dst, const void *buf, size_t len,
		  uint64_t raddr, uint64_t rkey, int doorbell, uint64_t cookie);
/** One-sided read into @p buf (anywhere in this process) of @p len bytes of @p dst's region;
 * completion kind TRD_VNI_CPL_READ once every byte is in @p buf. Errors as trd_vni_write(). */
int trd_vni_read(struct trd_vni *v, struct trd_vni_addr dst, void *buf, size_t len, uint64_t raddr,
		 uint64_t rkey, int doorbell, uint64_t cookie);

/** Atomic operations on one 4- or 8-byte unsigned integer of a remote region. */
enum trd_vni_aop {
	TRD_VNI_AOP_SUM = 1, /**< *r += operand */
	TRD_VNI_AOP_SWAP,    /**< *r = operand (FI_ATOMIC_WRITE) */
	TRD_VNI_AOP_CSWAP,   /**< if (*r == compare) *r = operand */
	TRD_VNI_AOP_READ,    /**< nothing written (FI_ATOMIC_READ) */
	TRD_VNI_AOP_MIN,
	TRD_VNI_AOP_MAX,
	TRD_VNI_AOP_BOR,
	TRD_VNI_AOP_BAND,
	TRD_VNI_AOP_BXOR,
};
/**
 * Atomic @p op on the @p size-byte (4 or 8, naturally aligned) unsigned integer at @p raddr of
 * @p dst's region @p rkey. Atomic with respect to every other VNI atomic on that memory (the
 * target's engine applies them one at a time), not to the target CPU's own stores. One
 * completion, kind TRD_VNI_CPL_ATOMIC, whose @c data is the value before the operation
 * (@c has_data true). Errors as trd_vni_write() (-EACCES also for misalignment; READ needs read
 * access, the others read and write), and -ETIMEDOUT if its request or answer was lost (it is
 * not sent again: it might have been applied).
 * @return 0, -EAGAIN, -EINVAL (bad op or size), -ECONNRESET.
 */
int trd_vni_atomic(struct trd_vni *v, struct trd_vni_addr dst, enum trd_vni_aop op,
		   unsigned int size, uint64_t operand, uint64_t compare, uint64_t raddr,
		   uint64_t rkey, int doorbell, uint64_t cookie);

/* ------------------------------------------------------------------------------------------ */
/* Collectives computed by the engines (docs/collectives.md, "Collectives in the engine";
 * docs/vni.md, "Collectives"): the node's engine posts the process's part to the engine
 * collectives of <toroid/comb.h> and the engines of the group combine it with the other
 * nodes' on a tree of links. One process per node takes part: every node of the group posts
 * the same collectives (kind, op, type, count, group) in the same order. A node serves one
 * collective per group at a time: another one of the same group on the same node (from this
 * process or another) before the first completed fails with -EBUSY in its completion.
 *
 * Buffers are in the pool (trd_vni_alloc()), 8-byte aligned, @p count elements of 8 bytes
 * (at most 131072: 1 MiB), untouched until the completion. The library checks only that
 * each buffer starts in the pool; the engine checks the rest, and a bad command ends in one
 * completion (kind TRD_VNI_CPL_COLL, len 0) with: -EINVAL (a buffer past the pool's end or
 * misaligned, an unknown op or type, a type the op does not take, a group or root the torus
 * does not have or this node is not in, a barrier with elements), -EMSGSIZE (count over the
 * limit, or a link too small for a piece), -EBUSY (a collective of that group is in flight
 * on this node), -ENOBUFS (the engine had no room: try again). A collective that fails
 * across the group (a member's engine went down) ends with -EHOSTUNREACH. Success: status
 * 0, len the vector's bytes (count * 8). */

/** How an allreduce or reduce combines elements (the values of enum trd_comb_op). */
enum trd_vni_coll_op {
	TRD_VNI_COLL_SUM = 1,
	TRD_VNI_COLL_MIN = 2,
	TRD_VNI_COLL_MAX = 3,
	TRD_VNI_COLL_BAND = 4, /**< integers only */
	TRD_VNI_COLL_BOR = 5,  /**< integers only */
	TRD_VNI_COLL_BXOR = 6, /**< integers only */
};

/** Element types, all 8 bytes wide (the values of enum trd_comb_dtype). Double sums are
 * combined in a fixed order: every node and every run get the same bits. */
enum trd_vni_coll_type {
	TRD_VNI_COLL_I64 = 1,
	TRD_VNI_COLL_U64 = 2,
	TRD_VNI_COLL_DOUBLE = 3,
};

/** Most elements of one collective (1 MiB). */
#define TRD_VNI_COLL_MAX_COUNT (1u << 17)

/** A group of nodes and the root of its tree (struct trd_comb_req's dims and root). */
struct trd_vni_group {
	unsigned int dims; /**< the torus axes it spans: bit 0 x, bit 1 y, bit 2 z; 0 or 7: the
			    *   whole torus. Its members share the root's coordinates on the
			    *   other axes (3: the root's z plane, 1: its x line) */
	uint8_t root[3];   /**< the root's coordinate (x, y, z); the same on every member */
};

/**
 * Allreduce: combine the @p count elements at @p src of every member of group @p g (NULL:
 * the whole torus rooted at (0, 0, 0)) with @p op as @p type; the result lands at @p dst on
 * every member. @p src and @p dst are in the pool and do not overlap.
 * @return 0 (one TRD_VNI_CPL_COLL completion follows); -EAGAIN (no free send context or
 * command slot); -EINVAL (NULL @p v, @p src or @p dst not in the pool, bad doorbell, dims over
 * 7); -EMSGSIZE (@p count over UINT32_MAX; a smaller count over TRD_VNI_COLL_MAX_COUNT is
 * the engine's to refuse, in the completion); -ECONNRESET.
 */
int trd_vni_allreduce(struct trd_vni *v, const struct trd_vni_group *g, int op, int type,
		      const void *src, void *dst, size_t count, int doorbell, uint64_t cookie);

/**
 * Reduce: as trd_vni_allreduce(), the result only at the root's @p dst (@p dst may be NULL
 * on the other members). @return as trd_vni_allreduce().
 */
int trd_vni_reduce(struct trd_vni *v, const struct trd_vni_group *g, int op, int type,
		   const void *src, void *dst, size_t count, int doorbell, uint64_t cookie);

/**
 * Broadcast: the @p count elements at @p buf of the group's root land at @p buf of every
 * other member (any bytes: moved as 64-bit words). @return as trd_vni_allreduce().
 */
int trd_vni_bcast(struct trd_vni *v, const struct trd_vni_group *g, void *buf, size_t count,
		  int doorbell, uint64_t cookie);

/**
 * Barrier: completes once every member of the group has posted it.
 * @return as trd_vni_allreduce().
 */
int trd_vni_barrier(struct trd_vni *v, const struct trd_vni_group *g, int doorbell,
		    uint64_t cookie);

/** The pool offset of @p p (a pointer into the pool), or -EINVAL. For tests and tools. */
int64_t trd_vni_offset(const struct trd_vni *v, const void *p);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_VNI_H */
