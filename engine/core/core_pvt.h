/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the node tables (node.c) and the data path (inject.c, tx.c, reply.c, poll.c,
 * rx.c). */
#ifndef TRD_CORE_PVT_H
#define TRD_CORE_PVT_H

#include <rte_eal.h>
#include <rte_log.h>
#include <rte_memcpy.h>

#include "api/attach_api.h"
#include "node_pvt.h"

/* A descriptor flag only the engine sets, on descriptors that arrived by remote get: refused
 * in descriptors applications inject and on the wire (its bit is free in TRD_DF_*). */
#define TRD_DF_REMOTE 0x08

/* The engine's log type, registered in node.c. */
extern int trd_node_logtype;
#define TRD_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, (uint32_t)trd_node_logtype, "toroid: " fmt "\n", ##__VA_ARGS__)

/** The region with @p key, or NULL. Safe on the data path. */
struct trd_mr *trd_mr_lookup(struct trd_node *n, uint64_t key);

/* a process's handle of a node of toroid-node (attach.c, api/attach_api.h): n->att != NULL */
void trd_attach_free(struct trd_node *n);
void trd_attach_msg_free(struct trd_msg *msg);
/* a region of the handle; with @p eq asked for as a doorbell whose writes the queue reports
 * (trd_doorbell_register() makes it one) */
struct trd_mr *trd_attach_mr_register(struct trd_node *n, void *addr, size_t len,
				      unsigned int access, struct trd_eq *eq);
int trd_attach_mr_deregister(struct trd_mr *mr);
/* @p refl: the reflector trd_inject_reflect() chose */
/* The completion descriptor of @p spec that a reflector sends back to @p n (a message into its
 * reception FIFO, or the cookie put into its doorbell region): 0 or -EINVAL. */
int trd_cpl_desc(const struct trd_node *n, const struct trd_cpl_spec *spec, struct trd_desc *b);
int trd_attach_reflect(struct trd_inj_fifo *f, const struct trd_desc *data,
		       const struct trd_cpl_spec *spec, struct trd_coord refl);
struct trd_coord trd_attach_reflector(const struct trd_node *n);

/* The process's nodes (node.c): take @p n out; whether it is there (by address, no access). */
void trd_node_unregister(struct trd_node *n);
bool trd_node_registered(const struct trd_node *n);
/* Take @p n out of the registry and stop its capture, under the capture control (taps.c). */
void trd_node_capture_fini(struct trd_node *n);

/**
 * Where [@p addr, @p addr + @p len) names bytes of @p mr: a virtual address in a TRD_ACCESS_VA
 * region, an offset in any other. Sets *@p off to the offset in the region and returns 0, or
 * returns TRD_DROP_OUT_OF_BOUNDS if a byte is outside (checked before any arithmetic that could
 * wrap). Safe on the data path: the one bounds check of every region access named remotely.
 */
static inline int
trd_mr_at(const struct trd_mr *mr, uint64_t addr, uint64_t len, uint64_t *off)
{
	uint64_t o = addr;

	if (mr->access & TRD_ACCESS_VA) {
		if (addr < (uintptr_t)mr->base)
			return TRD_DROP_OUT_OF_BOUNDS;
		o = addr - (uintptr_t)mr->base;
	}
	if (o > mr->len || len > mr->len - o)
		return TRD_DROP_OUT_OF_BOUNDS;
	*off = o;
	return 0;
}

/** Are IO addresses virtual addresses (zero-copy may then hand application memory to a port)? */
static inline bool
trd_iova_is_va(void)
{
	return rte_eal_iova_mode() == RTE_IOVA_VA;
}

/** Count a drop. */
static inline void
trd_drop(struct trd_node *n, unsigned int cause)
{
	n->drop[cause]++;
	n->stat[TRD_STAT_DROPS]++;
}

/** Receive demultiplexing of one burst from @p l (rx.c). */
void trd_rx_burst(struct trd_node *n, struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb);

/** trd_inject() of a descriptor the engine built, which may carry TRD_DF_PAYLOAD (inject.c). */
int trd_inject_own(struct trd_inj_fifo *f, const struct trd_desc *d);
/** Shared payloads (payload.c): a TRD_DF_PAYLOAD descriptor's start (0 or a drop cause), its
 * packet (0 or -ENOBUFS; the caller frees @p m), and the release of its reference (once;
 * every path that ends such a descriptor calls it). */
int trd_pay_start(struct trd_inj_fifo *f);
int trd_pay_emit(struct trd_node *n, struct trd_inj_fifo *f, struct rte_mbuf *m, struct trd_hdr *h);
void trd_pay_release(struct trd_desc *d);
/** The references held by the descriptors still in @p f (its node is being freed). */
void trd_pay_fifo_drain(struct trd_inj_fifo *f);
/** A frame to forward that another owner holds (payload.c): a new header mbuf chained to a
 * reference of its payload, or a copy when @p out cannot send chains. NULL: no mbuf. */
struct rte_mbuf *trd_fwd_share(struct trd_node *n, struct rte_mbuf *m, const struct trd_link *out);

/** Validate a descriptor carried by a remote get from @p requester (rx.c). */
int trd_desc_check_remote(const struct trd_desc *d, struct trd_coord requester);

/** An mbuf from the node's cache (refilled in bulk), or NULL. */
static inline struct rte_mbuf *
trd_mbuf_get(struct trd_node *n)
{
	if (unlikely(n->mcache_n == 0)) {
		if (rte_pktmbuf_alloc_bulk(n->pool, n->mcache, TRD_MCACHE / 2) != 0) {
			n->stat[TRD_STAT_NO_MBUF]++;
			return NULL;
		}
		n->mcache_n = TRD_MCACHE / 2;
	}
	return n->mcache[--n->mcache_n];
}

/** Rank of @p c in the node's torus, or -1 if outside (the data-path twin of trd_torus_rank). */
static inline int
trd_rank_of(const struct trd_node *n, struct trd_coord c)
{
	const uint8_t *d = n->torus.dim;

	if (unlikely(c.x >= d[0] || c.y >= d[1] || c.z >= d[2]))
		return -1;
	return (int)(c.x + d[0] * (c.y + (uint32_t)d[1] * c.z));
}

static inline bool
trd_coord_eq(struct trd_coord a, const uint8_t b[3])
{
	return a.x == b[0] && a.y == b[1] && a.z == b[2];
}

/* What became of a received frame: its drop cause (0: none), and whether the engine kept the
 * mbuf (a message delivered inside it, a frame held or forwarded) instead of freeing it. */
struct trd_rx_fate {
	int cause;
	bool kept;
	bool verdict; /* a put, FIFO message or remote get: the origin may want a DONE */
};

static inline struct trd_rx_fate
trd_fate(int cause, bool kept)
{
	return (struct trd_rx_fate){.cause = cause, .kept = kept};
}

/* Copy @p len payload bytes of @p m to @p dst, across segments if need be. */
static inline void
trd_pay_copy_at(const struct rte_mbuf *m, uint32_t off, void *dst, uint32_t len)
{
	const void *s;

	if (likely(m->data_len >= off + len)) {
		rte_memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
		return;
	}
	/* DPDK 22.11's rte_pktmbuf_read() walks off the end of a chain when asked for 0 bytes
	 * at its very end (an empty payload in a segmented frame) */
	if (len == 0)
		return;
	s = rte_pktmbuf_read(m, off, len, dst);
	if (s != NULL && s != dst)
		rte_memcpy(dst, s, len);
}

/* The payload of a frame: its first @p len bytes, after the headers. */
static inline void
trd_pay_copy(const struct rte_mbuf *m, void *dst, uint32_t len)
{
	trd_pay_copy_at(m, TRD_FRAME_HLEN, dst, len);
}

/* counter.c: the counter array, in a memfd (blocks of it map into attached processes) */
int64_t *trd_ctr_map(struct trd_node *n, unsigned int count);
void trd_ctr_unmap(struct trd_node *n);

static inline bool
trd_ctr_valid(const struct trd_node *n, uint16_t id)
{
	return id < n->conf.n_counters && __atomic_load_n(&n->ctr_used[id], __ATOMIC_ACQUIRE);
}

/* May a frame that writes into a region bound to counter block @p block (0: a region of no
 * process's, or no region) decrement counter @p id (valid, or 0)? Only one of that block, and
 * for anything else a counter of no block (trd_counter_block_alloc() marks a block's ids 2
 * and 3 in ctr_used): a process's counters are its own. */
static inline bool
trd_ctr_allowed(const struct trd_node *n, uint16_t block, uint16_t id)
{
	if (id == 0)
		return true;
	if (unlikely(block != 0))
		return (uint16_t)(id - block - 1) < TRD_COUNTER_BLOCK - 1;
	return __atomic_load_n(&n->ctr_used[id], __ATOMIC_RELAXED) < 2;
}

/* May a frame of @p type (a put's region key @p key) that was never delivered (held by a
 * session that restarted) fail counter @p id, which its delivery would have decremented? Only
 * where delivery would have let it (else ctr_denied): a put's counter of its region's block, a
 * message's of no process's block. A peer cannot fail a counter it could not count on. */
static inline bool
trd_ctr_lost_ok(struct trd_node *n, uint8_t type, uint64_t key, uint16_t id)
{
	const struct trd_mr *mr;

	if (id == 0 || !trd_ctr_valid(n, id))
		return false;
	if (type != TRD_PKT_PUT)
		return trd_ctr_allowed(n, 0, id);
	mr = trd_mr_lookup(n, key);
	return mr != NULL && trd_ctr_allowed(n, mr->ctr_block, id);
}

static inline void
trd_ctr_sub(struct trd_node *n, uint16_t id, uint32_t bytes)
{
	if (id != 0 && bytes != 0)
		__atomic_fetch_sub(&n->ctr[id], (int64_t)bytes, __ATOMIC_RELEASE);
}

/* A descriptor that read a TRD_ACCESS_COPY region is done with it (its last packet is built,
 * or it was given up). */
static inline void
trd_fifo_src_done(struct trd_inj_fifo *f)
{
	if (unlikely(f->src_mr != NULL)) {
		__atomic_fetch_sub(&f->src_mr->readers, 1, __ATOMIC_RELEASE);
		f->src_mr = NULL;
	}
}

/* rx.c: a held bundle that will never be delivered (its session ended): mark failed the
 * reception counters of its messages from @p start on (those before were delivered). */
void trd_bundle_fail_ctrs(struct trd_node *n, const struct rte_mbuf *m, const struct trd_pkt *p,
			  uint32_t start);

/* rfifo.c: reception FIFOs and the messages they carry */
struct trd_rec_fifo *trd_rfifo_create(struct trd_node *n, uint8_t id, unsigned int size);
void trd_rfifo_free(struct trd_rec_fifo *rf);
/* A message of @p len payload bytes received in @p m (inside it if contiguous), or NULL. */
struct trd_msg *trd_rfifo_msg_of(struct trd_node *n, struct rte_mbuf *m, uint32_t len);
/* Put a message from trd_rfifo_msg_of() in @p rf. */
struct trd_rx_fate trd_rfifo_hand_over(struct trd_node *n, struct trd_rec_fifo *rf,
				       struct trd_msg *msg);
/* A memory-FIFO frame for us: a whole message, or a piece of one. */
struct trd_rx_fate trd_rfifo_rx(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p);
/* A memory-FIFO message of bundle @p p (entry @p e, message id @p msg_id, payload at @p off in
 * @p m): read in place in block *@p blk when it is not NULL (a full one is closed and *@p blk
 * becomes the next, or NULL), else carried by *@p mi attached to @p m when it is not NULL (and
 * then set to NULL once used), else copied; the frame stays the caller's. */
struct trd_rx_fate trd_rfifo_entry(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p,
				   const struct trd_wire_ent *e, uint32_t msg_id, uint32_t off,
				   struct trd_msg_blk **blk, struct rte_mbuf **mi);
/* The same for a guest's reception FIFO (trd_grfifo_is(e->fifo)): copied into its ring. 0 or a
 * drop cause. */
int trd_rfifo_entry_guest(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p,
			  const struct trd_wire_ent *e, uint32_t msg_id, uint32_t off);
/* A block for the messages of bundle @p m (a reference to it), or NULL: @p m is not contiguous
 * or no block is left. Close it (NULL: no-op) once the bundle's messages are handed out. */
struct trd_msg_blk *trd_rfifo_blk_open(struct trd_node *n, struct rte_mbuf *m);
void trd_rfifo_blk_close(struct trd_msg_blk *b);
/* The process's pool of message blocks (made on first use), or NULL. */
struct rte_mempool *trd_msg_blk_pool(void);

/* eq.c */
void trd_eq_push(struct trd_eq *eq, const struct trd_event *ev);
void trd_eq_free(struct trd_eq *eq);

/* track.c: check and retire the completion packet @p p carries (its aux, from the node the
 * completion was sent through: p->src); 0 or TRD_DROP_UNKNOWN_CPL. */
int trd_cpl_accept(struct trd_node *n, const struct trd_pkt *p, uint8_t kind, uint64_t cookie);
/* track.c: trd_cpl_accept() in two steps, for a completion that may find no room: claim the
 * id (0 or TRD_DROP_UNKNOWN_CPL; counted out of trd_node_cpl_pending() at once, so that an
 * application that sees the completion sees it done), then settle it with the delivery's drop
 * cause: 0 retires it;
 * a cause the reliable sender answers by sending the echo again leaves it pending; any other
 * retires it too (the completion is lost, and counted by the caller). */
int trd_cpl_claim(struct trd_node *n, const struct trd_pkt *p, uint8_t kind, uint64_t cookie);
void trd_cpl_settle(struct trd_node *n, const struct trd_pkt *p, int cause);
/* track.c: take pending id @p id back and free it; false if the engine is completing or
 * failing it meanwhile (whoever flips the state owns the id). */
bool trd_cpl_take_back(struct trd_node *n, uint32_t id);
int trd_cpl_init(struct trd_node *n);
/* track.c: check and retire a reflection's completion @p p to a guest's reception FIFO (an id
 * guest.c gave, from the node it was sent through, its FIFO and cookie): its outcome, status 0,
 * goes to the FIFO. 0 or TRD_DROP_UNKNOWN_CPL. */
int trd_cpl_accept_guest(struct trd_node *n, const struct trd_pkt *p);
/* track.c: a reflection's id for guest @p g (TRD_CPL_GUEST, marked refl). 0 or -ENOSPC. */
int trd_track_open_refl(struct trd_node *n, struct trd_guest *g, uint8_t fifo, uint64_t cookie,
			uint32_t *id);
/* track.c: remote get @p d is not sent: the completions among its @p carried descriptors
 * (TRD_DF_CPL, a reflection's) fail with @p cause. */
void trd_cpl_fail_carried(struct trd_node *n, const struct trd_desc *d, const void *carried,
			  unsigned int cause);
/* track.c: the entry of the pending tracked operation that the verdict @p p (DONE, atomic
 * reply) names whole: its id (aux), the request's message id (offset) and the node the
 * request went to (src); NULL if there is none. */
struct trd_cpl *trd_track_take(struct trd_node *n, const struct trd_pkt *p);
/* track.c: the message id of the request that carries operation @p id (when it leaves). */
void trd_cpl_set_msg(struct trd_node *n, uint32_t id, uint32_t msg_id);
/* track.c: give a taken tracked operation's id back. */
void trd_track_done(struct trd_node *n, struct trd_cpl *c);
/* track.c: a taken tracked operation whose verdict its FIFO refused (the target sends it
 * again): pending again, or failed if its peer went down meanwhile. */
void trd_track_refused(struct trd_node *n, struct trd_cpl *c);
/* track.c: an id for a tracked operation of guest @p g (TRD_CPL_GUEST): an atomic whose old
 * value goes to @p result and whose verdict decrements @p ctr by 8 or fails it (@p fifo 0), or
 * any tracked operation whose outcome goes to the guest's reception FIFO @p fifo with @p cookie
 * (trd_grfifo_outcome(); @p result and @p ctr NULL). 0 or -ENOSPC. Its verdict (rx.c), its
 * failure (trd_cpl_fail) call trd_guest_tracked_done(). */
int trd_track_open_guest(struct trd_node *n, struct trd_guest *g, uint64_t *result, int64_t *ctr,
			 uint8_t fifo, uint64_t cookie, uint32_t *id);
/* track.c: what a guest's verdict does: the old value @p old (when @p cause is 0 and the verdict
 * is an atomic's reply: @p has_old), the counter, or the outcome into its FIFO; the id is then
 * given back: 0. With @p keep, an outcome that finds the FIFO full leaves the id claimed and
 * returns TRD_DROP_FIFO_FULL (the caller refuses the verdict or keeps the failure for later). */
int trd_track_guest_done(struct trd_node *n, struct trd_cpl *c, unsigned int cause, bool has_old,
			 uint64_t old, bool keep);
/* track.c: the guest's atomics still waiting for a verdict no longer reach it (it is gone):
 * their verdicts are dropped unused. */
void trd_track_forget_guest(struct trd_node *n, const struct trd_guest *g);
/* guest.c: one of @p g's tracked operations, of completion id @p id, has its verdict (or
 * failed, or was given back). */
void trd_guest_tracked_done(struct trd_guest *g, uint32_t id);
/* track.c: guest @p g gives back its tracked operation of completion id @p id if it still waits
 * with its own id @p cookie (TRD_OP_UNTRACK): 0, or -ENOENT. */
int trd_track_close_guest(struct trd_node *n, struct trd_guest *g, uint32_t id, uint64_t cookie);
/* reply.c: send a control packet (DONE, ATOMIC_REPLY) from the engine; 0 or a drop cause. */
int trd_ctl_send(struct trd_node *n, const uint8_t dst[3], uint8_t type, uint32_t aux, uint64_t key,
		 uint64_t offset, const void *pay, uint16_t len);
void trd_cpl_fini(struct trd_node *n);

/* rel.c */
int trd_rel_init(struct trd_node *n);
void trd_rel_fini(struct trd_node *n);
struct trd_peer *trd_rel_peer(struct trd_node *n, uint32_t rank);
/* We have something for the peer: run its timers (they start its session if need be). */
void trd_rel_want(struct trd_node *n, struct trd_peer *pe);
/* Give a packet to @p pe its sequence number, piggybacked ack and the session's token (a
 * trailer), and keep it; 0, or -ENOBUFS (no mbuf for the trailer: nothing was changed). */
int trd_rel_hold(struct trd_node *n, struct trd_peer *pe, struct trd_hdr *h, struct rte_mbuf *m);
/* What reliability decides about a sequenced frame for us (trd_rel_rx()). */
enum trd_rel_verdict {
	TRD_REL_DELIVER, /* the next of its session: deliver it, then trd_rel_consume() */
	TRD_REL_HOLD,    /* early: the session keeps the frame until its turn */
	TRD_REL_DROP,    /* a duplicate, outside the window, or of an unknown session: cause */
};
/* The verdict on sequenced frame @p m (header @p p, session token @p proof or NULL when it
 * carries none); *@p pe gets its peer (unless the peer could not be made) and *@p cause a
 * drop's cause. HOLD takes the mbuf. */
enum trd_rel_verdict trd_rel_rx(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p,
				const uint64_t *proof, struct trd_peer **pe, int *cause);
/* The held frame whose turn has come (and its parsed header), or NULL; it stays held. */
static inline struct rte_mbuf *
trd_rel_next(const struct trd_node *n, const struct trd_peer *pe, const struct trd_pkt **p)
{
	uint32_t i = pe->rcv_nxt & (n->rel_w - 1);

	if (likely(pe->n_held == 0) || pe->rxb[i] == NULL)
		return NULL;
	*p = &pe->rxp[i];
	return pe->rxb[i];
}

/* The frame at the head of the session was taken (delivered, or dropped for good): the next
 * is expected; a held frame at the head is the caller's from now on. */
static inline void
trd_rel_consume(const struct trd_node *n, struct trd_peer *pe)
{
	uint32_t i = pe->rcv_nxt & (n->rel_w - 1);

	if (unlikely(pe->n_held != 0) && pe->rxb[i] != NULL) {
		pe->rxb[i] = NULL; /* the caller has it now */
		pe->n_held--;
	}
	pe->rcv_nxt++;
}

/* Something the reliability timers do is due now (an ack, a challenge, a new session's
 * probe): they run in this poll, not at their next turn on the clock (poll.c). */
static inline void
trd_rel_timers_now(struct trd_node *n)
{
	n->timers_next = 0;
}

/* Something the timers do is due at @p when (a deadline earlier than those they knew). */
static inline void
trd_rel_timers_by(struct trd_node *n, uint64_t when)
{
	if (when < n->timers_next)
		n->timers_next = when;
}

/* An ack is owed at once (a duplicate, a hole): the timers send it in this poll. */
static inline void
trd_rel_ack_now(struct trd_node *n, struct trd_peer *pe)
{
	pe->ack_pending++;
	pe->ack_due = n->vclock;
	trd_rel_timers_now(n);
}

/* A challenge is owed: the timers send it (at most one per quarter of the least timeout). */
static inline void
trd_rel_chal(struct trd_node *n, struct trd_peer *pe)
{
	pe->chal_pending = true;
	trd_rel_timers_now(n);
}

/* A sequenced frame was received: schedule the ack. */
static inline void
trd_rel_rx_end(struct trd_node *n, struct trd_peer *pe)
{
	uint64_t now = n->vclock;

	if (pe->ack_pending++ == 0) {
		pe->ack_due = now + n->ack_delay;
		trd_rel_timers_by(n, pe->ack_due);
	}
	if (pe->ack_pending >= 32) {
		pe->ack_due = now;
		trd_rel_timers_now(n);
	}
}
/* An ACK for us: 0, or a drop cause (a challenge answer that does not prove itself). */
int trd_rel_ack_in(struct trd_node *n, const struct trd_pkt *p, const uint8_t *sack,
		   const uint64_t *proof);
void trd_rel_timers(struct trd_node *n);
/* stateless.c: a node we keep no state for. Its state if the ACK @p p just proved it (else NULL
 * and *@p rc the frame's drop cause, 0: none); a challenge for a frame of a session we do not
 * know. */
struct trd_peer *trd_rel_sl_ack(struct trd_node *n, uint32_t rank, const struct trd_pkt *p,
				const uint64_t *proof, int *rc);
void trd_rel_sl_chal(struct trd_node *n, uint32_t rank);

/* Sequence (reliable peers: with the session's token) and checksum a built packet; 0, or
 * -ENOBUFS (the caller still owns @p m, unsent). */
static inline int
trd_pkt_finish(struct trd_node *n, struct trd_peer *pe, struct trd_hdr *h, struct rte_mbuf *m)
{
	if (pe != NULL && unlikely(trd_rel_hold(n, pe, h, m) != 0))
		return -ENOBUFS;
	trd_hdr_seal(h);
	return 0;
}

/* Payload bytes a frame on @p l carries: the link's MTU less the torus header, and less the
 * session token's trailer in a reliable session (@p sequenced), so the frame keeps its size. */
static inline uint32_t
trd_max_payload(const struct trd_node *n, const struct trd_link *l, bool sequenced)
{
	RTE_SET_USED(n);
	return (uint32_t)(l->mtu - TRD_HDR_LEN - (sequenced ? TRD_PROOF_LEN : 0));
}

/* guest.c: serve the guest FIFOs (a round); restage a guest FIFO from its ring (the slots
 * staged before are used up and given back first): the descriptors staged; give back what
 * its stage named; every guest of a node that is being freed. */
/* grfifo.c: guest reception FIFOs (api/guest_api.h). Open takes a free id of the node (NULL,
 * rte_errno ENOSPC or ENOMEM); unlink gives it back (deliveries already begun on another lcore
 * may finish: quiesce before free). */
struct trd_guest_rstats;
struct trd_grfifo;
struct trd_grfifo *trd_grfifo_open(struct trd_node *n, struct rte_ring *r, uint32_t slots,
				   uint16_t ctr_base, uint64_t *const pub[3], uint8_t want);
uint8_t trd_grfifo_id(const struct trd_grfifo *rf);
void trd_grfifo_stop(struct trd_grfifo *rf);
void trd_grfifo_unlink(struct trd_node *n, struct trd_grfifo *rf);
void trd_grfifo_free(struct trd_grfifo *rf);
void trd_grfifo_stats(const struct trd_grfifo *rf, struct trd_guest_rstats *st);
/* A message for the guest FIFO that @p h->fifo names (its header: len, fifo, src, msg_id,
 * user), its bytes at @p off of @p m, or at @p buf when @p m is NULL, counting on node counter
 * @p ctr: 0 (written, the counter decremented) or a drop cause. */
int trd_grfifo_deliver(struct trd_node *n, const struct trd_rslot *h, uint16_t ctr,
		       const struct rte_mbuf *m, uint32_t off, const void *buf);
/* The outcome of a guest's tracked operation (@p cookie: its descriptor's aux) into its FIFO
 * @p fifo, from @p from_rank (none: this node). 0, or the drop cause (the FIFO is full or gone:
 * the caller counts it). */
int trd_grfifo_outcome(struct trd_node *n, uint8_t fifo, uint32_t from_rank, uint64_t cookie,
		       unsigned int cause, bool has_old, uint64_t old);
/* A write of @p len bytes at @p offset into doorbell region @p key of a guest, told in its
 * FIFO @p fifo (TRD_RSLOT_DOORBELL); lost and counted if the FIFO is full or gone. */
void trd_grfifo_doorbell(struct trd_node *n, uint8_t fifo, uint64_t key, uint64_t offset,
			 uint32_t len);
/* 0, or why a frame of a message of @p len bytes for guest FIFO @p fifo counting on @p ctr is
 * dropped (unknown_fifo, ctr_denied, bad_length: the ring could never hold it). */
int trd_grfifo_check(const struct trd_node *n, uint8_t fifo, uint16_t ctr, uint32_t len);
static inline bool
trd_grfifo_is(uint8_t fifo)
{
	return fifo >= TRD_GUEST_RFIFO_FIRST && fifo <= TRD_GUEST_RFIFO_LAST;
}

unsigned int trd_guest_serve(struct trd_node *n);
unsigned int trd_guest_refill(struct trd_node *n, struct trd_inj_fifo *f);
void trd_guest_release(struct trd_inj_fifo *f);
void trd_guest_fini(struct trd_node *n);

/* tx.c: cut up to @p budget packets from one injection FIFO onto its link. */
unsigned int trd_inj_fifo_service(struct trd_node *n, struct trd_inj_fifo *f, unsigned int budget);
/* poll.c: hand what every link of @p n buffers to its port, in order. */
void trd_node_flush(struct trd_node *n);

/* Room for replies (DONE, atomic reply) towards a peer: the whole window. */
static inline uint32_t
trd_rel_room_ctl(const struct trd_node *n, const struct trd_peer *pe)
{
	if (pe == NULL)
		return UINT32_MAX;
	/* nothing goes until the peer has acknowledged our session (it challenges a session
	 * it does not know, and would drop the packets meanwhile) */
	return pe->ack_synced ? n->rel_w - (pe->snd_nxt - pe->snd_una) : 0;
}

/* Room for data: the window less a quarter kept for replies. Two nodes whose windows are
 * full of packets that each need the other's reply would otherwise wait for each other
 * forever; replies need no reply, so they always drain. */
static inline uint32_t
trd_rel_room(const struct trd_node *n, const struct trd_peer *pe)
{
	uint32_t used, cap;

	if (pe == NULL)
		return UINT32_MAX;
	if (!pe->ack_synced)
		return 0;
	used = pe->snd_nxt - pe->snd_una;
	cap = n->rel_w - n->rel_w / 4;
	return used >= cap ? 0 : cap - used;
}

/* reply.c: can a control packet to @p dst go now? */
bool trd_ctl_room(struct trd_node *n, const uint8_t dst[3]);
/* Drop causes that mean "not now": a reliable receiver refuses the packet (it comes again)
 * instead of consuming its sequence number. */
static inline bool
trd_drop_transient(int cause)
{
	return cause == TRD_DROP_FIFO_FULL || cause == TRD_DROP_NO_MEMORY ||
	       cause == TRD_DROP_REPLY_FULL;
}

/* Does the sender bring frame @p p again after a refusal for @p cause? Only a sequenced frame
 * on a reliable node, refused for lack of room. */
static inline bool
trd_drop_resent(const struct trd_node *n, const struct trd_pkt *p, int cause)
{
	return trd_drop_transient(cause) && p->seq != 0 && n->reliable;
}

/* secret.c: @p len bytes an attacker cannot predict: the kernel's randomness, else DPDK's. */
void trd_secret_bytes(void *buf, size_t len);
/* reply.c: an ACK alone (unsequenced): @p flags (PROBE, CHAL, ECHO), cumulative @p ack about
 * session @p acked_epoch, our own session @p epoch, @p key and @p aux as the flags say, and
 * a session token @p proof (NULL: none) in a trailer. */
int trd_ctl_send_ack(struct trd_node *n, const uint8_t dst[3], uint16_t flags, uint32_t ack,
		     uint16_t acked_epoch, uint16_t epoch, uint64_t key, uint32_t aux,
		     const void *sack, uint16_t len, const uint64_t *proof);
/* tx.c: a peer was declared down: detach the counters of everything still on its way to it
 * (packets not yet handed to a port, packets kept for retransmission, descriptors being cut)
 * and mark them failed, so that nothing of the failed operations ever touches them again. */
void trd_tx_abort_peer(struct trd_node *n, struct trd_peer *pe);

/* Mark a counter that can no longer reach zero (toroid.h, TRD_COUNTER_FAILED). */
static inline void
trd_ctr_fail(int64_t *ctr)
{
	if (ctr != NULL)
		__atomic_store_n(ctr, TRD_COUNTER_FAILED, __ATOMIC_RELEASE);
}

/* Is @p rank declared down? Any thread: the engine lcore writes the flag, in an array of its
 * own that posting threads read without touching the peer's hot state. */
static inline bool
trd_peer_is_down(const struct trd_node *n, uint32_t rank)
{
	return n->down != NULL && __atomic_load_n(&n->down[rank], __ATOMIC_ACQUIRE) != 0;
}

/* Check a descriptor's destination: its rank, or -errno (inject.c, guest.c). */
static inline int
trd_desc_check_dst(const struct trd_node *n, struct trd_coord dst)
{
	int rank = trd_rank_of(n, dst);

	if (rank < 0)
		return -EINVAL;
	if (n->routes[rank].link == NULL)
		return -EHOSTUNREACH;
	if (trd_peer_is_down(n, (uint32_t)rank))
		return -EHOSTUNREACH; /* declared down: fail fast until it speaks again */
	return rank;
}

/* track.c: the outcome of completion @p id comes from @p rank (counted in n->owed). */
void trd_cpl_set_peer(struct trd_node *n, uint32_t id, uint32_t rank);
/* track.c: states of a completion id (struct trd_cpl::state). */
enum { CPL_FREE = 0, CPL_PENDING = 1, CPL_CLOSING = 2 };
/* track.c: the outcome of completion @p id will not come (its request was not sent). */
void trd_cpl_unowe(struct trd_node *n, uint32_t id);
/* rfifo.c: forget the partial messages from @p src (its session ended). */
void trd_reasm_purge(struct trd_node *n, const uint8_t src[3]);
/* The source an outcome names: node @p rank, the one the operation was sent to, or this node
 * when it failed before its route was known (no rank: UINT32_MAX). The rule of every outcome
 * (trd_rfifo_outcome(), trd_grfifo_outcome()). */
static inline struct trd_coord
trd_outcome_src(const struct trd_node *n, uint32_t rank)
{
	struct trd_coord c;

	return trd_torus_coord(&n->torus, rank, &c) == 0 ? c : n->coord;
}
/* rfifo.c: hand a locally made outcome (a failure) to reception FIFO @p fifo: 0, or the drop
 * cause (not counted) that kept it out. */
int trd_rfifo_outcome(struct trd_node *n, uint8_t fifo, uint32_t from_rank, uint64_t cookie,
		      unsigned int cause);
/* taps.c: a link just added to @p n gets the node's taps (a running capture records it). */
int trd_node_tap_link(struct trd_node *n, struct trd_link *l);
/* track.c: complete a pending completion or tracked operation with a failure. An outcome that
 * finds its FIFO full waits, its id claimed, for trd_cpl_later() to find room. */
void trd_cpl_fail(struct trd_node *n, uint32_t id, unsigned int cause);
/* track.c: share 0's poll: the failure outcomes kept for want of room, delivered in order while
 * their FIFOs have room. */
void trd_cpl_later(struct trd_node *n);

/* comb.c: engine collectives. A COMB frame for us (0 or a drop cause); a poll round's work
 * (posts, pieces waiting for room); the node is being freed. */
int trd_comb_rx(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p);
void trd_comb_poll(struct trd_node *n);
void trd_comb_fini(struct trd_node *n);

#endif /* TRD_CORE_PVT_H */
