/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's private view of a node: FIFOs, counters, regions, routes. */
#ifndef TRD_NODE_PVT_H
#define TRD_NODE_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <toroid/toroid.h>

#include "link_api.h" /* engine/link/api */

#include "api/core_api.h"

#define TRD_MAX_LINKS  16  /* links per node, besides the loopback */
#define TRD_MAX_FIFOS  64  /* application FIFOs of each kind */
#define TRD_INLINE_MAX 960 /* 15 continuation slots */
#define TRD_STAGE      32  /* descriptors taken from a FIFO at once */
/* An injection FIFO's ring holds 16-byte units, 4 per descriptor slot, so DPDK copies
 * descriptors 128 bits at a time rather than 32. */
#define TRD_UNIT       16
#define TRD_UNITS      (sizeof(struct trd_desc) / TRD_UNIT)
#define TRD_RX_BURST   32
#define TRD_MCACHE     64
#define TRD_HOP_SLACK  2 /* hops allowed beyond the route's length */
#define TRD_MAX_SHARES 2 /* lanes a node may be split into (trd_node_conf::shares) */

struct trd_msg_blk;
struct trd_gring;
struct trd_guest;

/** A received message as the engine holds it: what applications see, and either the block of
 * a bundle it is one of (blk), or the packet it lives in (m), or neither: a copy in
 * rte_malloc() memory, right after this. */
struct trd_msg_pvt {
	struct trd_msg msg; /* first: a struct trd_msg * is a struct trd_msg_pvt * */
	struct rte_mbuf *m;
	struct trd_msg_blk *blk;
};

/** Messages one block holds. */
#define TRD_BLK_MSGS 16

/** A block: memory-FIFO messages of one bundle read in place, holding one reference to the
 * frame for all of them; the last of them freed lets go of the frame and the block
 * (rfifo.c). */
struct trd_msg_blk {
	struct rte_mbuf *m;     /* the frame */
	uint32_t refs;          /* messages not freed, + TRD_BLK_HOLD while the engine fills it */
	uint32_t used;          /* slots of msg[] handed out */
	struct rte_mempool *mp; /* the pool it came from */
	struct trd_msg_pvt msg[TRD_BLK_MSGS];
};

static inline struct trd_msg_pvt *
trd_msg_pvt(struct trd_msg *msg)
{
	return (struct trd_msg_pvt *)msg;
}

/** The mbuf private area. */
struct trd_mbuf_priv {
	union {
		struct {
			struct rte_mbuf_ext_shared_info shinfo;
			int64_t *ctr;
			uint32_t bytes;
		} zc;                   /* an mbuf attached to application memory */
		struct trd_msg_pvt msg; /* a received single-packet message */
	};
};

static inline struct trd_mbuf_priv *
trd_mbuf_priv(struct rte_mbuf *m)
{
	return (struct trd_mbuf_priv *)rte_mbuf_to_priv(m);
}

/** How to reach one node. */
struct trd_route {
	struct trd_link *link; /* NULL: unreachable */
	uint8_t hops;
	struct rte_ether_addr dmac;
};

/** An injection FIFO and the engine's progress through its current descriptor. */
struct trd_inj_fifo {
	/* read by posting threads: never written after creation */
	struct rte_ring *ring;
	struct trd_node *node;
	uint8_t id;
	/* engine side, touched by the serving lcore only, on cache lines of its own: a poster
	 * reading ring and node must not pull in lines the engine writes per packet */
	bool busy __rte_cache_aligned;
	bool zc;
	uint16_t maxpay;
	uint32_t off; /* bytes of cur already packetized */
	uint32_t pkts_left;
	uint32_t unsent; /* packets built but not yet taken by a port */
	struct trd_link *link;
	struct trd_route *rt;
	struct trd_peer *peer;  /* cur's destination, NULL when unsequenced */
	const uint8_t *src;     /* where cur's bytes come from */
	struct trd_mr *src_mr;  /* a TRD_ACCESS_COPY region cur reads (counted in its readers) */
	uint64_t src_iova;      /* ... and their IO address (valid when zc) */
	int64_t *ctr;           /* cur's injection counter or NULL */
	struct trd_hdr whdr;    /* cur's wire header template */
	uint16_t hflags;        /* header flags every packet of cur carries */
	struct trd_desc *cur;   /* in stage[] or dcopy, valid while busy */
	const uint8_t *inl_src; /* cur's inline data: in stage[] or copied to inl[] */
	/* the staged slots: read in place in the ring (a zero-copy dequeue of held units, given
	 * back once they are used) or, for a burst that wraps the ring, copied to sbuf */
	struct trd_desc *stage;
	uint32_t stage_i;
	uint32_t stage_n;
	uint32_t held;         /* ring units of the open zero-copy dequeue, 0: none */
	struct trd_desc dcopy; /* cur, when its inline data was not all staged */
	struct trd_desc sbuf[TRD_STAGE];
	uint8_t inl[TRD_INLINE_MAX] __rte_aligned(64);
	uint64_t descs;
	uint64_t pkts;
	uint64_t sent; /* packets taken by a port */
	uint32_t hwm;  /* highest occupancy seen */
	/* a guest FIFO (guest.c): ring is NULL, the guest's ring in shared memory is read
	 * through this; NULL for the node's own FIFOs */
	struct trd_gring *gr;
};

struct trd_eq {
	struct trd_node *node;
	struct rte_ring *ring; /* of struct trd_event: the serving lcore adds, the owner takes */
	int fd;                /* eventfd */
	int core;
	int owner; /* thread id of the owner, 0 until bound */
	uint32_t armed;
	uint64_t signals;
	uint64_t overflows;
	void *att; /* a queue of an attached process's handle: the attaching layer's (ring NULL) */
};

struct trd_rec_fifo {
	struct rte_ring *ring;
	struct trd_node *node;
	struct trd_eq *eq;
	uint8_t id;
	uint64_t msgs;
};

struct trd_mr {
	struct trd_node *node;
	uint8_t *base;
	size_t len;
	uint64_t key;        /* 0 when free */
	uint32_t readers;    /* TRD_ACCESS_COPY: descriptors reading it; the slot stays taken */
	uint16_t ctr_block;  /* trd_mr_bind_counters(): the only counters its frames may name */
	unsigned int access; /* TRD_ACCESS_*: with TRD_ACCESS_VA named by address */
	uint64_t iova;       /* IO address of base (IOVA-contiguous), or RTE_BAD_IOVA */
	uint16_t slot;
	bool doorbell;
	uint8_t db_fifo;   /* an attached process's doorbell: its reception FIFO (node id) */
	struct trd_eq *eq; /* doorbell: signalled on every engine write */
};

/** An outstanding completion at its origin. */
struct trd_cpl {
	uint64_t cookie;
	uint32_t state;          /* CPL_FREE or CPL_PENDING */
	uint8_t kind;            /* enum trd_cpl_kind, or TRD_CPL_TRACK */
	uint8_t fifo;            /* TRACK: reception FIFO of the outcome */
	uint8_t refl;            /* GUEST: a reflection's (guest.c guest_reflect()): completed by
				  * its echo only, never by a verdict or TRD_OP_UNTRACK */
	uint64_t *result;        /* TRACK: where an atomic's old value goes */
	uint32_t peer;           /* rank the outcome comes from (failed if it goes down); counted
				  * in node->owed while set: change it with trd_cpl_set_peer() */
	uint32_t msg_id;         /* TRACK: message id of the request, which its verdict names: a
				  * late verdict of an operation that failed cannot complete a newer
				  * one that got its id */
	int64_t *ctr;            /* GUEST: the counter its verdict decrements by 8 or fails */
	struct trd_guest *guest; /* GUEST: whose (NULL: the guest is gone, the verdict is
				  * dropped unused) */
};

/* A tracked operation (trd_track_open) in the completion table. */
#define TRD_CPL_TRACK 3
/* A guest's atomic (guest.c): the old value into its region, the verdict on its counter. */
#define TRD_CPL_GUEST 4
/* Ids all guests of a node may hold together: half the table, whatever their number (64
 * each; a service has up to 256 processes), so the node's own operations always find one. */
#define TRD_GUEST_CPLS (TRD_N_CPL / 2)

#define TRD_N_CPL 4096
/* A node that was not polled for a while (its lcore descheduled) must not time out every
 * peer the moment it runs again: its protocol clock advances at most this per poll. */
#define TRD_VCLOCK_STEP_US 200
#define TRD_MAX_EQS        16
/* Dead-peer detection (docs/reliability.md): at least this many unanswered probes, and never
 * more than this many times dead_ms of silence. */
#define TRD_DEAD_MIN_TRIES  3
#define TRD_HOPQ            32 /* path lengths the loss prior tells apart (longer ones count as 31) */
#define TRD_DEAD_MAX_FACTOR 16

/* The entry of hop_q[] a route of @p hops (with TRD_HOP_SLACK) falls in: 1 over a switch. */
static inline uint32_t
trd_hop_bucket(uint8_t hops)
{
	int h = RTE_MAX((int)hops - TRD_HOP_SLACK, 1);

	return (uint32_t)RTE_MIN(h, TRD_HOPQ - 1);
}

struct trd_capture;
struct trd_comb;

/** Reliability state towards one peer (docs/reliability.md). */
struct trd_peer {
	uint32_t rank;
	bool down;              /* declared down (n->down[rank] is the copy posters read) */
	bool active;            /* in the node's list of peers with timers to run */
	bool rx_valid;          /* we know the peer's session */
	bool ack_synced;        /* acks riding on the peer's data refer to our session */
	bool owing;             /* acks or outcomes are owed: its liveness is watched */
	bool chal_pending;      /* a challenge is to go out (a frame of an unknown session came) */
	bool peer_ep_known;     /* peer_ep holds the peer's session learnt from a proven frame */
	bool want;              /* something waits to go to it (its session must be acknowledged) */
	uint16_t tx_epoch;      /* our session towards the peer */
	uint16_t rx_epoch;      /* the peer's session towards us */
	uint16_t peer_ep;       /* the peer's session towards us, as its proven acks name it */
	uint64_t tx_token;      /* our session's token (from the secret and the epoch): every
				 * frame of it carries it, only the echo that starts it tells */
	uint64_t rx_token;      /* the peer's session's, from its echo (rx_valid) */
	uint32_t snd_nxt;       /* next sequence number to send */
	uint32_t snd_una;       /* oldest not acknowledged */
	uint32_t rcv_nxt;       /* next expected from the peer */
	uint32_t ack_pending;   /* packets received since our last ack */
	uint32_t chal_gen;      /* generation of the cookie we challenge the peer with */
	uint64_t ack_due;       /* tsc: send an ack alone by then */
	uint64_t last_alive;    /* vclock: last proof of life, or the start of owing */
	uint64_t last_progress; /* vclock: last ack that moved snd_una, or the start of owing */
	uint64_t last_moved;    /* vclock: last sign that what it owes moves (an ack that moved
				 * snd_una, its session acknowledged, an in-order packet of its
				 * own), or the start of owing: see peer_dead() */
	uint64_t last_probe;
	uint64_t last_chal;    /* when we last challenged it */
	uint64_t last_goback;  /* when we last resent our window after the peer restarted it */
	uint64_t last_echo;    /* when we last answered a challenge (rate limit) */
	uint64_t echo_key;     /* the cookie we last echoed: the peer's acks carry it back once
				* it has started our session (only then do we resend) */
	uint64_t restart_key;  /* the cookie of the peer's session we last started: our acks
				* carry it until its first packet comes (the peer resends) */
	uint64_t probe_nonce;  /* base of our probes' nonces (random); 0: none yet */
	uint64_t probe_seq;    /* probes sent: probe k carries probe_nonce + k */
	uint64_t probe_floor;  /* probe_seq at the last proof of life */
	uint32_t tries;        /* probes since the last proof of life */
	uint32_t fail_q;       /* measured share of attempts unanswered, 1/65536 (EWMA) */
	uint32_t n_ev;         /* attempts measured (up to 256): fail_q means something */
	uint32_t need;         /* probes unanswered before it is down (tries_needed(), cached) */
	uint64_t rto;          /* cycles: srtt + 4 rttvar, at least the configured minimum */
	uint64_t srtt, rttvar; /* cycles, from acks of packets sent once (Karn) */
	uint32_t backoff;      /* doublings since the last progress */
	uint32_t tlp_nxt;      /* snd_nxt when the tail was last probed */
	struct rte_mbuf **txb; /* held for retransmission, by seq & mask */
	uint64_t *txt;         /* when each was last sent */
	uint8_t *sacked;       /* bit 0: selectively acked; bit 1: sent more than once */
	struct rte_mbuf **rxb; /* received ahead of order, by seq & mask */
	struct trd_pkt *rxp;   /* their parsed headers */
	uint32_t n_held;       /* how many rxb holds */
	uint32_t part_seq;     /* a bundle refused after part_done of its messages were
				* delivered (session part_epoch): they are not delivered again */
	uint16_t part_epoch;
	uint8_t part_done;
};

/** A multi-packet FIFO message being put together. */
struct trd_reasm {
	struct trd_msg *msg;
	uint32_t got;
	uint32_t len;
	uint64_t hkey;
	uint16_t ctr; /* reception counter its pieces decrement (0: none) */
};

struct trd_node {
	char name[32];
	/* a process attached to toroid-node (attach.c), NULL for a node of this process: the
	 * calls it takes go there, counters are its block (ctr_first .. ctr_end - 1) */
	const struct trd_attach_ops *att;
	void *att_ctx;
	uint32_t ctr_first, ctr_end;
	struct trd_torus torus;
	struct trd_coord coord;
	uint32_t rank;
	uint32_t n_nodes;
	struct trd_node_conf conf;
	struct rte_mempool *pool;
	struct rte_mempool *blk_pool; /* message blocks (rfifo.c); NULL: none */

	struct trd_link *links[TRD_MAX_LINKS + 1]; /* [n_links] is the loopback */
	unsigned int n_links;
	struct trd_link *lo;
	struct trd_link *dir_link[TRD_DIR_COUNT];
	struct trd_link *sw_link;
	struct trd_route *routes;        /* by rank */
	struct rte_ether_addr *peer_mac; /* by rank, for switched links */
	uint8_t *has_peer_mac;

	struct trd_inj_fifo *inj[TRD_MAX_FIFOS + 1]; /* the share's: [n_inj] is its engine FIFO */
	unsigned int n_inj;
	struct trd_inj_fifo *fifo[TRD_MAX_FIFOS]; /* every application FIFO, by id */
	unsigned int n_fifo;
	struct trd_rec_fifo *rec[TRD_MAX_FIFOS];
	unsigned int n_rec;
	/* guest FIFOs (guest.c), share 0 only: the array (made on first use), its count (atomic:
	 * the round reads it), and the guests */
	struct trd_inj_fifo **gfifo;
	unsigned int n_gfifo;
	struct trd_guest *guests;
	/* share 0's: guest reception FIFOs by id - TRD_GUEST_RFIFO_FIRST (grfifo.c) */
	struct trd_grfifo *grec[TRD_GUEST_RFIFO_LAST - TRD_GUEST_RFIFO_FIRST + 1];
	uint64_t grec_msgs;     /* messages written into them (atomic: every share delivers) */
	unsigned int grec_next; /* where the search for a free id starts */

	int64_t *ctr; /* shared memory; a block given to a process is its own memfd (counter.c) */
	size_t ctr_bytes; /* the mapping's length, whole pages */
	uint8_t *ctr_used;
	struct trd_mr *mrs;
	uint64_t mr_secret[4];   /* SipHash keys: [0..1] make region keys, [2..3] place them */
	uint64_t mr_serial;      /* region keys made so far (mr.c) */
	bool mr_keyed;           /* mr_secret is drawn (never with no region table) */
	rte_spinlock_t ctl_lock; /* control path only: counter and region tables */

	struct trd_cpl *cpl;       /* by completion id - 1 */
	struct rte_ring *cpl_free; /* free completion ids */
	/* ids failed at this node whose outcome found its FIFO full, with their causes
	 * (track.c): any thread adds them to cpl_later, share 0 moves them in order into
	 * later[] and writes them once there is room */
	struct rte_ring *cpl_later;
	uint32_t *later;      /* share 0's: the oldest first */
	uint32_t later_len;   /* share 0's: entries in later[] */
	uint32_t n_later;     /* share 0's (atomic): entries in cpl_later and later[] */
	uint16_t *later_fifo; /* share 0's (atomic): of them, by FIFO id (256) */
	uint64_t later_next;  /* vclock: share 0 looks at them again then */
	uint32_t cpl_pending;
	uint32_t guest_cpls; /* share 0's: ids guests' atomics hold (TRD_GUEST_CPLS at most) */
	bool reflector_set;
	struct trd_coord reflector;
	struct trd_eq *eqs[TRD_MAX_EQS];
	unsigned int n_eqs;
	struct trd_capture *cap;

	/* reliability */
	bool reliable;
	bool trust_unseq; /* tests and fuzzers: act on unsequenced frames (testing.h) */
	uint8_t *down;    /* by rank: declared down (atomic; read by posters) */
	uint64_t vstep;
	uint64_t sess_key[2]; /* secret of the session cookies (SipHash key) */
	uint32_t *owed;       /* by rank: pending outcomes that peer owes (atomic) */
	uint32_t rel_w;       /* window, power of 2 */
	uint64_t rto0, rto_max, ack_delay, dead; /* cycles */
	uint64_t timer_gap; /* cycles: the reliability timers run at most this often (poll.c) */
	uint64_t tlp_least; /* cycles: the least wait for a tail loss probe or a timeout */
	uint32_t hop_q[TRD_HOPQ]; /* loss measured over all peers n hops away, 1/65536 */
	uint32_t hop_n[TRD_HOPQ]; /* attempts measured in hop_q[n] (up to 1024) */
	uint32_t hop_top;         /* highest hop_q[] any route ever fell in: none above holds any */
	bool loss_seen;           /* some attempt went unanswered: a share above may not be 0 */
	struct trd_peer **peers;  /* by rank, made on first use */
	uint32_t *active;         /* ranks with timers to run */
	uint32_t n_active;
	uint64_t sl_start; /* vclock: start of the stateless answers' interval */
	uint32_t sl_count; /* stateless answers (to peers with no state) in it */

	struct rte_hash *reasm_hash;
	struct trd_reasm *reasm;
	struct trd_comb *comb; /* engine collectives (comb.c), made on first use (atomic) */

	/* Shares (docs/architecture.md "Threading"): a node on N lanes is N of these, each polled
	 * by one thread. Share 0 is the node itself; share k > 0 is a copy of it with its own
	 * per-packet state (peers, timers, links, reassembly, engine FIFO, statistics) and the
	 * node's shared tables (counters, regions, completions, reception FIFOs, down[]). */
	uint16_t lane_hf;      /* header flags every frame of this share carries */
	uint16_t hf_data;      /* ... and a data frame: lane_hf, and CRC if payload_crc */
	uint8_t share;         /* this share's lane */
	uint8_t n_shares;      /* lanes of the node (1: no split) */
	struct trd_node *main; /* share 0 */
	struct trd_node *sh[TRD_MAX_SHARES]; /* share 0 only: every share, [0] itself */

	/* Written by the serving lcore on every poll or packet; posting threads read none of it,
	 * so it starts a cache line of its own (everything above is read-mostly). */
	uint64_t vclock __rte_cache_aligned; /* cycles; advances at most vstep per poll */
	uint64_t last_tsc;
	uint64_t timers_next; /* vclock: run the reliability timers then (0: in this poll) */
	uint32_t next_msg_id;
	unsigned int rr;
	unsigned int grr; /* the guest FIFO the next round starts with */
	unsigned int mcache_n;
	struct rte_mbuf *mcache[TRD_MCACHE];

	/* who serves the node */
	int served; /* lcore + 1 of the lcore serving the node, 0: none (atomic) */
	trd_progress_fn progress;
	void *progress_arg;
	uint32_t in_poll;
	uint64_t poll_gen;

	uint64_t stat[TRD_STAT_MAX];
	uint64_t drop[TRD_DROP_MAX];
};

/* Wait until the serving lcore (if any) has finished the round it was in. */
int trd_node_quiesce(struct trd_node *n);

#endif /* TRD_NODE_PVT_H */
