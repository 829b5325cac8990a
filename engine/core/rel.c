/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability, end to end between node pairs (docs/reliability.md).
 *
 * Every packet a node originates towards another node carries a sequence number of that
 * pair's session (epoch, seq). The sender keeps a reference to each packet until the peer's
 * cumulative ack passes it, retransmits on timeout with exponential back-off, and earlier when
 * a selective ack shows a hole. The receiver delivers in sequence order, holds packets that
 * arrive early (bounded window), drops duplicates and acks: on the next packet going back, or
 * alone after ack_delay, or at once when something was out of order. A peer that owes an ack
 * and says nothing for dead_ms is declared down: its outstanding operations fail, new ones
 * fail fast, and it is probed until it speaks again. Forwarding nodes take no part.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include <toroid/testing.h>

#include "core_pvt.h"

static inline bool
seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* The cookie the peer must echo to start a session with us now. */
static inline uint64_t
cookie_of(const struct trd_node *n, const struct trd_peer *pe)
{
	return trd_session_cookie(n->sess_key[0], n->sess_key[1], pe->rank, pe->chal_gen);
}

int
trd_rel_init(struct trd_node *n)
{
	const struct trd_node_conf *c = &n->conf;
	uint64_t hz = rte_get_tsc_hz();

	n->reliable = !c->unreliable;
	n->rel_w = c->rel_window;
	n->rto0 = hz / 1000000 * c->rto_us;
	n->rto_max = hz / 10; /* 100 ms */
	if (n->rto_max < n->rto0)
		n->rto_max = n->rto0;
	n->ack_delay = hz / 1000000 * c->ack_delay_us;
	n->timer_gap = n->ack_delay / 8; /* timers at most every eighth of it, when due */
	/* the least time a packet waits for its tail loss probe or its timeout */
	n->tlp_least = RTE_MIN(n->rto0 / 2, 4 * n->ack_delay);
	n->timers_next = 0;
	n->dead = hz / 1000 * c->dead_ms;
	n->vstep = hz / 1000000 * TRD_VCLOCK_STEP_US;
	n->last_tsc = rte_rdtsc();
	n->vclock = 1;
	trd_secret_bytes(n->sess_key, sizeof(n->sess_key));
	memset(n->hop_q, 0, sizeof(n->hop_q)); /* the loss measured so far (trd_node_reset()) */
	memset(n->hop_n, 0, sizeof(n->hop_n));
	n->loss_seen = false;
	n->sl_start = 0;
	n->sl_count = 0;
	n->peers = rte_zmalloc("trd_peers", sizeof(*n->peers) * n->n_nodes, 0);
	n->active = rte_zmalloc("trd_active", sizeof(*n->active) * n->n_nodes, 0);
	n->down = rte_zmalloc("trd_down", n->n_nodes, RTE_CACHE_LINE_SIZE);
	return n->peers != NULL && n->active != NULL && n->down != NULL ? 0 : -ENOMEM;
}

static inline uint64_t
rto_of(const struct trd_node *n, const struct trd_peer *pe)
{
	uint64_t rto = pe->srtt == 0 ? n->rto0 : pe->srtt + 4 * pe->rttvar;

	rto = RTE_MAX(rto, n->rto0) << RTE_MIN(pe->backoff, 16u);
	return RTE_MIN(rto, n->rto_max);
}

static void
peer_release_tx(struct trd_peer *pe, uint32_t mask)
{
	for (uint32_t s = pe->snd_una; s != pe->snd_nxt; s++) {
		rte_pktmbuf_free(pe->txb[s & mask]);
		pe->txb[s & mask] = NULL;
	}
	pe->snd_una = pe->snd_nxt;
}

static void
peer_release_rx(struct trd_peer *pe, uint32_t w)
{
	for (uint32_t i = 0; i < w && pe->n_held != 0; i++)
		if (pe->rxb[i] != NULL) {
			rte_pktmbuf_free(pe->rxb[i]);
			pe->rxb[i] = NULL;
			pe->n_held--;
		}
}

void
trd_rel_fini(struct trd_node *n)
{
	rte_free(n->down);
	n->down = NULL;
	if (n->peers == NULL)
		return;
	for (uint32_t r = 0; r < n->n_nodes; r++) {
		struct trd_peer *pe = n->peers[r];

		if (pe == NULL)
			continue;
		peer_release_tx(pe, n->rel_w - 1);
		peer_release_rx(pe, n->rel_w);
		rte_free(pe);
	}
	rte_free(n->peers);
	rte_free(n->active);
}

struct trd_peer *
trd_rel_peer(struct trd_node *n, uint32_t rank)
{
	struct trd_peer *pe = n->peers[rank];
	size_t w = n->rel_w;
	uint32_t isn;
	uint8_t *mem;

	if (likely(pe != NULL))
		return pe;
	/* one allocation: the state and its five windows */
	mem = rte_zmalloc("trd_peer",
			  sizeof(*pe) + w * (2 * sizeof(struct rte_mbuf *) + sizeof(uint64_t) +
					     sizeof(struct trd_pkt) + 1),
			  RTE_CACHE_LINE_SIZE);
	if (mem == NULL)
		return NULL;
	pe = (struct trd_peer *)mem;
	pe->txb = (struct rte_mbuf **)(pe + 1);
	pe->rxb = pe->txb + w;
	pe->txt = (uint64_t *)(pe->rxb + w);
	pe->rxp = (struct trd_pkt *)(pe->txt + w);
	pe->sacked = (uint8_t *)(pe->rxp + w);
	pe->rank = rank;
	/* the session's epoch and first sequence number (1 .. 2^24) come from the secret: an
	 * acknowledgement from someone who cannot see our packets must guess both */
	trd_session_start(n->sess_key[0], n->sess_key[1], rank, &pe->tx_epoch, &isn);
	/* ... and every frame of it carries a 64-bit token from the secret that only our echo
	 * tells the peer: a frame that guesses the epoch and lands in the window proves nothing
	 * without it */
	pe->tx_token = trd_session_token(n->sess_key[0], n->sess_key[1], rank, pe->tx_epoch);
	pe->snd_nxt = pe->snd_una = isn;
	pe->tlp_nxt = pe->snd_nxt;
	pe->rto = n->rto0;
	pe->ack_synced = false; /* until the peer acknowledges the session: see trd_rel_room() */
	/* application threads look peers up (trd_peer_is_down()) */
	__atomic_store_n(&n->peers[rank], pe, __ATOMIC_RELEASE);
	return pe;
}

static void
peer_activate(struct trd_node *n, struct trd_peer *pe)
{
	if (!pe->active) {
		pe->active = true;
		n->active[n->n_active++] = pe->rank;
		trd_rel_timers_now(n); /* a new session's probe goes at once */
	}
}

void
trd_rel_want(struct trd_node *n, struct trd_peer *pe)
{
	pe->want = true;
	peer_activate(n, pe);
}

/* The session's token after everything else in @p m: in the last segment when it is ours
 * alone and has room, else in a segment of its own (a zero-copy or shared payload's). */
static int
proof_append(struct trd_node *n, struct rte_mbuf *m, uint64_t token)
{
	struct rte_mbuf *last = rte_pktmbuf_lastseg(m);
	uint64_t be = trd_be64(token);
	uint8_t *t;

	if (RTE_MBUF_DIRECT(last) && rte_mbuf_refcnt_read(last) == 1 &&
	    rte_pktmbuf_tailroom(last) >= TRD_PROOF_LEN) {
		t = rte_pktmbuf_mtod_offset(last, uint8_t *, last->data_len);
		last->data_len += TRD_PROOF_LEN;
	} else {
		struct rte_mbuf *s = trd_mbuf_get(n);

		if (unlikely(s == NULL))
			return -ENOBUFS;
		t = rte_pktmbuf_mtod(s, uint8_t *);
		s->data_len = TRD_PROOF_LEN;
		s->pkt_len = TRD_PROOF_LEN;
		last->next = s;
		m->nb_segs++;
	}
	m->pkt_len += TRD_PROOF_LEN;
	memcpy(t, &be, sizeof(be));
	return 0;
}

int
trd_rel_hold(struct trd_node *n, struct trd_peer *pe, struct trd_hdr *h, struct rte_mbuf *m)
{
	uint32_t seq, i;
	uint64_t now = n->vclock;

	if (unlikely(proof_append(n, m, pe->tx_token) != 0))
		return -ENOBUFS;
	h->flags |= trd_be16(TRD_HF_PROOF);
	seq = pe->snd_nxt++;
	i = seq & (n->rel_w - 1);
	h->epoch = trd_be16(pe->tx_epoch);
	h->seq = trd_be32(seq);
	if (pe->rx_valid) {
		/* the ack rides along */
		h->ack = trd_be32(pe->rcv_nxt);
		pe->ack_pending = 0;
	}
	/* keep a reference for retransmission; every segment, or a zero-copy one would go */
	rte_pktmbuf_refcnt_update(m, 1);
	pe->txb[i] = m;
	pe->txt[i] = now;
	pe->sacked[i] = 0;
	peer_activate(n, pe);
	trd_rel_timers_by(n, now + n->tlp_least); /* its tail loss probe, its timeout */
	return 0;
}

/* Fail every completion still waiting on @p rank. */
static void
fail_pending(struct trd_node *n, uint32_t rank)
{
	for (uint32_t id = 1; id <= TRD_N_CPL; id++) {
		struct trd_cpl *c = &n->cpl[id - 1];

		if (__atomic_load_n(&c->peer, __ATOMIC_ACQUIRE) != rank ||
		    __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 0)
			continue;
		trd_cpl_fail(n, id, TRD_DROP_PEER_DOWN);
	}
}

/* The hops of the path to a peer (1 over a switch), as the loss prior tells them apart. */
static inline uint32_t
peer_hops(const struct trd_node *n, const struct trd_peer *pe)
{
	return trd_hop_bucket(n->routes[pe->rank].hops);
}

/* One attempt into a measured share (1/65536): the mean of the attempts so far while there are
 * fewer than @p span of them (a fresh measure is right at once, not dragged up from 0 over a
 * thousand attempts), then an EWMA over about @p span. The count stops at @p span (no
 * threshold is higher), and a share already at the attempt's outcome stays (no loss: every
 * acknowledged packet comes here, and then nothing moves). */
static inline void
share_add(uint32_t *q, uint32_t *cnt, bool lost, uint32_t span)
{
	int64_t t = lost ? 65536 : 0;

	if (*cnt < span)
		(*cnt)++;
	else if (t == (int64_t)*q)
		return;
	*q = (uint32_t)((int64_t)*q + (t - (int64_t)*q) / *cnt);
}

/* The measured share of attempts (packets, probes) that went unanswered, over a few hundred
 * attempts per peer (a window's worth of packets acknowledged at once must not wipe it out),
 * and over a thousand over all peers at the same distance: the prior of a peer seen little. */
static inline void
loss_event(struct trd_node *n, struct trd_peer *pe, bool lost)
{
	uint32_t h = peer_hops(n, pe);

	if (unlikely(lost))
		n->loss_seen = true;
	share_add(&pe->fail_q, &pe->n_ev, lost, 256);
	share_add(&n->hop_q[h], &n->hop_n[h], lost, 1024);
}

/* Attempts an EWMA needs before it means something. */
#define TRD_LOSS_SEEN 32

/*
 * Probes without an answer before a silent peer is down: enough that a live peer behind the
 * measured loss answers none of them with a probability below 10^-9 (a margin for a measure
 * a few hundred attempts make: 10^-7 if it is 3 points low at 40 % per link). The loss is
 * the peer's own measure once it has one; and never less than the prior: what the peers at
 * every distance measured, carried over to this peer's path (a per-link share l from h' hops,
 * 1 - (1 - q')^(1/h'), over h hops: 1 - (1 - l)^h). A peer three hops away whose loss was not
 * measured yet is not judged by the loss of the one-hop neighbours: at 35 % per link its
 * probes fail 92 % of the time, not 58 %.
 */
static uint32_t
tries_needed(const struct trd_node *n, const struct trd_peer *pe)
{
	uint32_t h = peer_hops(n, pe);
	double q1, q, k;

	/* every share is 0 while nothing was ever lost: the least (a peer that owes us
	 * something comes here once per outcome) */
	if (likely(!n->loss_seen))
		return TRD_DEAD_MIN_TRIES;
	q1 = pe->n_ev >= TRD_LOSS_SEEN ? pe->fail_q / 65536.0 : 0;
	/* (only the distances some route ever had: the others measured nothing) */
	for (uint32_t b = 1; b <= n->hop_top; b++) {
		if (n->hop_n[b] >= TRD_LOSS_SEEN && n->hop_q[b] != 0) {
			double qb = RTE_MIN(n->hop_q[b] / 65536.0, 0.999);

			q1 = RTE_MAX(q1, 1 - pow(1 - qb, (double)h / b));
		}
	}
	if (q1 == 0)
		return TRD_DEAD_MIN_TRIES;
	/* a probe fails if it or its answer is lost */
	q = RTE_MIN(1 - (1 - q1) * (1 - q1), 0.999);
	k = q > 0 ? ceil(log(1e-9) / log(q)) : 0;
	return RTE_MAX((uint32_t)k, (uint32_t)TRD_DEAD_MIN_TRIES);
}

static void
peer_down(struct trd_node *n, struct trd_peer *pe)
{
	uint32_t mask = n->rel_w - 1;

	pe->down = true;
	__atomic_store_n(&n->down[pe->rank], 1, __ATOMIC_RELEASE);
	pe->want = false;
	pe->last_probe = n->vclock - n->dead; /* probe at once */
	pe->tries = 0;
	n->stat[TRD_STAT_PEERS_DOWN]++;
	/* what was on its way is lost to the peer: a new session starts (at the same sequence
	 * number: the peer learns where when it challenges it), counters that waited for the
	 * lost bytes are told, operations whose outcome was to come from it fail */
	trd_tx_abort_peer(n, pe);
	peer_release_tx(pe, mask);
	pe->tx_epoch++;
	if (pe->tx_epoch == 0)
		pe->tx_epoch = 1;
	pe->tx_token = trd_session_token(n->sess_key[0], n->sess_key[1], pe->rank, pe->tx_epoch);
	pe->backoff = 0;
	pe->rto = rto_of(n, pe);
	pe->tlp_nxt = pe->snd_nxt;
	pe->ack_synced = false;
	fail_pending(n, pe->rank);
}

/* Something only the live peer could have sent arrived. */
static void
peer_alive(struct trd_node *n, struct trd_peer *pe, uint64_t now)
{
	pe->last_alive = now;
	pe->probe_floor = pe->probe_seq; /* answers to the probes sent so far prove no more */
	if (pe->tries != 0) {
		/* the probes of a silence that ended count in the loss measure */
		for (uint32_t i = 0; i + 1 < pe->tries && i < 64; i++)
			loss_event(n, pe, true);
		loss_event(n, pe, false);
		pe->tries = 0;
	}
	if (unlikely(pe->down)) {
		pe->down = false;
		__atomic_store_n(&n->down[pe->rank], 0, __ATOMIC_RELEASE);
		n->stat[TRD_STAT_PEERS_UP]++;
	}
}

/* A proven frame names the peer's session towards us: if it changed, the peer restarted or
 * declared us down, and the outcomes its old session still carried are lost. */
static void
peer_session(struct trd_node *n, struct trd_peer *pe, uint16_t epoch)
{
	if (epoch == 0)
		return;
	if (pe->peer_ep_known && pe->peer_ep != epoch)
		fail_pending(n, pe->rank);
	pe->peer_ep = epoch;
	pe->peer_ep_known = true;
}

int
trd_node_peer_up(const struct trd_node *n, struct trd_coord c)
{
	int r;

	if (n == NULL)
		return -EINVAL;
	if (n->att != NULL)
		return -ENOTSUP; /* a handle of an attached process */
	r = trd_rank_of(n, c);
	if (r < 0)
		return -EINVAL;
	return !trd_peer_is_down(n, (uint32_t)r);
}

/* Send an ACK alone: cumulative, with the selective bitmap of what we hold ahead of it, our
 * own session, and @p flags with their @p key and @p aux. */
static int
send_ack(struct trd_node *n, struct trd_peer *pe, uint16_t flags, uint64_t key, uint32_t aux)
{
	uint8_t sack[TRD_SACK_BYTES];
	uint8_t dst[3];
	struct trd_coord c;
	uint16_t len = 0;
	int rc;

	if (flags == 0 && key == 0 && pe->rx_valid)
		key = pe->restart_key; /* we started its session: tell it which (0: none) */
	trd_torus_coord(&n->torus, pe->rank, &c);
	dst[0] = c.x;
	dst[1] = c.y;
	dst[2] = c.z;
	if (pe->rx_valid && pe->n_held != 0) {
		memset(sack, 0, sizeof(sack));
		for (uint32_t k = 0; k < TRD_SACK_BYTES * 8 && k + 1 < n->rel_w; k++)
			if (pe->rxb[(pe->rcv_nxt + 1 + k) & (n->rel_w - 1)] != NULL) {
				sack[k / 8] |= (uint8_t)(1u << (k % 8));
				len = TRD_SACK_BYTES;
			}
	}
	/* an echo tells the peer our session's token, any other ack proves with the token of
	 * the session it acknowledges (the peer's, from its echo) */
	rc = trd_ctl_send_ack(n, dst, flags, pe->rx_valid ? pe->rcv_nxt : 0,
			      pe->rx_valid ? pe->rx_epoch : 0, pe->tx_epoch, key, aux,
			      len ? sack : NULL, len,
			      (flags & TRD_HF_ECHO) ? &pe->tx_token
			      : pe->rx_valid        ? &pe->rx_token
						    : NULL);
	if (rc == 0) {
		pe->ack_pending = 0;
		n->stat[TRD_STAT_TX_ACKS]++;
	}
	return rc;
}

/* Probes carry a random base plus their number: an answer to any probe sent since the last
 * proof of life counts (a slow answer to an earlier one as well as to the latest), an answer
 * to an older one does not. */
static void
send_probe(struct trd_node *n, struct trd_peer *pe, uint64_t now)
{
	if (pe->probe_nonce == 0) {
		trd_secret_bytes(&pe->probe_nonce, sizeof(pe->probe_nonce));
		pe->probe_nonce |= 1;
	}
	pe->probe_seq++;
	pe->last_probe = now;
	send_ack(n, pe, TRD_HF_PROBE, pe->probe_nonce + pe->probe_seq, 0);
}

static inline bool
probe_answer(const struct trd_peer *pe, uint64_t key)
{
	uint64_t k = key - pe->probe_nonce;

	return pe->probe_nonce != 0 && k > pe->probe_floor && k <= pe->probe_seq;
}

static void
retransmit(struct trd_node *n, struct trd_peer *pe, uint32_t seq, uint64_t now)
{
	uint32_t i = seq & (n->rel_w - 1);
	struct trd_link *l = n->routes[pe->rank].link;
	struct rte_mbuf *m = pe->txb[i];

	if (m == NULL || l == NULL || trd_link_room(l) == 0)
		return;
	/* the same bytes again: nobody may change a packet with two owners */
	rte_pktmbuf_refcnt_update(m, 1);
	trd_link_queue(l, m, NULL, NULL, 0);
	pe->txt[i] = now;
	pe->sacked[i] |= 2;
	n->stat[TRD_STAT_RETRANS]++;
}

/* Jacobson/Karels from one round trip, in cycles */
static void
rtt_sample(struct trd_peer *pe, uint64_t rtt)
{
	if (pe->srtt == 0) {
		pe->srtt = rtt;
		pe->rttvar = rtt / 2;
	} else {
		uint64_t err = rtt > pe->srtt ? rtt - pe->srtt : pe->srtt - rtt;

		pe->rttvar = (3 * pe->rttvar + err) / 4;
		pe->srtt = (7 * pe->srtt + rtt) / 8;
	}
}

/* The peer's cumulative ack (next seq it expects) and selective bitmap. Returns -1 for an ack
 * outside what we sent (ignored), 0 for one that tells nothing new, 1 for progress: only the
 * peer can know which sequence numbers are in flight. */
static int
on_ack(struct trd_node *n, struct trd_peer *pe, uint32_t ack, const uint8_t *sack, uint64_t now)
{
	uint32_t mask = n->rel_w - 1;
	int progress = 0;

	if (seq_lt(ack, pe->snd_una) || seq_lt(pe->snd_nxt, ack))
		return -1;
	if (ack != pe->snd_una) {
		uint32_t last = (ack - 1) & mask;
		uint8_t seen = pe->sacked[last];

		while (pe->snd_una != ack) {
			uint32_t i = pe->snd_una & mask;

			seen |= pe->sacked[i] & 2;
			loss_event(n, pe, (pe->sacked[i] & 2) != 0);
			rte_pktmbuf_free(pe->txb[i]);
			pe->txb[i] = NULL;
			pe->snd_una++;
		}
		/* a round trip only from an ack that no repair made: when a resent packet fills
		 * a hole, the ack also covers packets the peer held since long before (Karn) */
		if (seen == 0)
			rtt_sample(pe, now - pe->txt[last]);
		pe->backoff = 0; /* progress: back-off ends */
		pe->rto = rto_of(n, pe);
		pe->last_progress = pe->last_moved = now;
		progress = 1;
		if (pe->snd_una != pe->snd_nxt) /* the rest's timeouts start again, shorter */
			trd_rel_timers_by(n, now + n->tlp_least);
	}
	if (sack != NULL) {
		uint32_t top = 0;

		for (uint32_t k = 0; k < TRD_SACK_BYTES * 8; k++) {
			uint32_t s = ack + 1 + k;

			if (!seq_lt(s, pe->snd_nxt))
				break;
			if (sack[k / 8] & (1u << (k % 8))) {
				if (!(pe->sacked[s & mask] & 1))
					progress = 1;
				pe->sacked[s & mask] |= 1;
				top = s;
			}
		}
		/* holes below the highest selectively acked packet are lost: resend them now,
		 * unless they were (re)sent less than a round trip ago */
		uint64_t fresh = pe->srtt != 0 ? RTE_MAX(pe->srtt, 2 * n->ack_delay) : n->rto0 / 4;

		for (uint32_t s = pe->snd_una; top != 0 && seq_lt(s, top); s++)
			if (!(pe->sacked[s & mask] & 1) && now - pe->txt[s & mask] > fresh)
				retransmit(n, pe, s, now);
	}
	return progress;
}

/* The peer challenged us (it knows no session of ours): echo its cookie with our session and
 * where it starts, and nothing else. Anyone can forge a challenge: resending the window for
 * each one handed the segment a lever (a window of packets per forged frame). What the peer
 * lost is resent once it has really started our session (its acks carry the cookie back:
 * on_restarted()), which a forged challenge cannot bring about, or by the ordinary loss
 * recovery. At most one echo per quarter of the least timeout. */
static void
on_challenge(struct trd_node *n, struct trd_peer *pe, uint64_t cookie, uint64_t now)
{
	if (pe->snd_una == 0)
		return; /* (a sequence space that wrapped to 0: the next packet moves it) */
	if (pe->last_echo != 0 && now - pe->last_echo < n->rto0 / 4)
		return;
	if (send_ack(n, pe, TRD_HF_ECHO, cookie, pe->snd_una) == 0) {
		pe->last_echo = now;
		pe->echo_key = cookie;
	}
}

/* The peer's ack carries back the cookie we echoed: it started our session at snd_una, and
 * whatever it had of our old one is lost to it. Send the window again, once per echo (and at
 * most once a round trip): only the peer that challenged us knows the cookie. */
static void
on_restarted(struct trd_node *n, struct trd_peer *pe, uint64_t now)
{
	uint64_t gap = RTE_MAX(pe->srtt, n->rto0 / 4);

	pe->echo_key = 0;
	if (pe->last_goback != 0 && now - pe->last_goback <= gap)
		return;
	pe->last_goback = now;
	for (uint32_t s = pe->snd_una; s != pe->snd_nxt; s++)
		if (!(pe->sacked[s & (n->rel_w - 1)] & 1))
			retransmit(n, pe, s, now);
}

/* The peer answered our challenge: its new session starts at @p first, and its frames will
 * carry the token @p proof (the echo's trailer). *@p fresh tells whether the echo proved
 * itself now (its cookie). */
static int
on_echo(struct trd_node *n, struct trd_peer *pe, const struct trd_pkt *p, const uint64_t *proof,
	uint64_t now, bool *fresh)
{
	*fresh = false;
	if (pe->rx_valid && pe->rx_epoch == p->epoch) {
		/* a second answer to the same question changes nothing; an answer to a new
		 * challenge (the cookie we send now) restates the session's token: the one we
		 * took from its first echo may have been damaged on the way (the trailer is not
		 * under the header checksum), and then every frame of the session would be
		 * refused as bad_proof for ever */
		if (proof != NULL && p->key == cookie_of(n, pe) &&
		    p->msg_id == trd_wire_token_check(*proof)) {
			pe->rx_token = *proof;
			pe->chal_gen++;
			pe->chal_pending = false;
		}
		return 0;
	}
	if (p->key != cookie_of(n, pe))
		return TRD_DROP_BAD_SESSION; /* not an answer to anything we asked */
	if (proof == NULL)
		return TRD_DROP_BAD_PROOF; /* a session whose frames we could not tell */
	if (p->msg_id != trd_wire_token_check(*proof))
		return TRD_DROP_BAD_CHECKSUM; /* its token damaged on the way: the next echo */
	*fresh = true;
	/* a new session: what the old one still carried is gone, and so are its held packets
	 * and partial messages; the counters they would have decremented are told */
	if (pe->n_held != 0) {
		for (uint32_t i = 0; i < n->rel_w; i++) {
			const struct trd_pkt *hp = &pe->rxp[i];

			if (pe->rxb[i] == NULL)
				continue;
			if ((hp->type == TRD_PKT_PUT || hp->type == TRD_PKT_FIFO) &&
			    trd_ctr_lost_ok(n, hp->type, hp->key, hp->counter))
				trd_ctr_fail(&n->ctr[hp->counter]);
			/* a bundle's counters are its messages' (those not delivered yet) */
			if (hp->type == TRD_PKT_BUNDLE) {
				bool part = pe->part_seq == hp->seq && pe->part_epoch == hp->epoch;

				trd_bundle_fail_ctrs(n, pe->rxb[i], hp, part ? pe->part_done : 0);
			}
		}
		peer_release_rx(pe, n->rel_w);
	}
	trd_reasm_purge(n, p->src);
	pe->rx_epoch = p->epoch;
	pe->rx_token = *proof;
	pe->rcv_nxt = p->aux;
	pe->rx_valid = true;
	pe->restart_key = p->key; /* our acks tell the peer (until its first packet comes) */
	pe->chal_gen++;           /* this answer, replayed, proves nothing again */
	pe->chal_pending = false;
	pe->ack_pending = 0;
	trd_rel_ack_now(n, pe); /* tell it at once */
	peer_activate(n, pe);
	peer_alive(n, pe, now);
	peer_session(n, pe, p->epoch);
	return 0;
}

int
trd_rel_ack_in(struct trd_node *n, const struct trd_pkt *p, const uint8_t *sack,
	       const uint64_t *proof)
{
	struct trd_coord c = {p->src[0], p->src[1], p->src[2]};
	int rank = trd_rank_of(n, c);
	struct trd_peer *pe;
	uint64_t now = n->vclock;
	bool proven = false, fresh = false;
	int rc, bad = 0;

	if (rank < 0 || (uint32_t)rank == n->rank)
		return 0;
	n->stat[TRD_STAT_RX_ACKS]++;
	pe = n->peers[rank];
	if (pe == NULL && (pe = trd_rel_sl_ack(n, (uint32_t)rank, p, proof, &rc)) == NULL)
		return rc;
	if (p->flags & TRD_HF_CHAL) {
		on_challenge(n, pe, p->key, now);
		return 0;
	}
	if (p->flags & TRD_HF_ECHO) {
		rc = on_echo(n, pe, p, proof, now, &fresh);
		if (rc != 0)
			return rc;
	} else if (p->epoch != 0 && !(pe->rx_valid && pe->rx_epoch == p->epoch)) {
		/* every ack names its sender's session towards us: one we do not know is
		 * challenged, so the peer can start it before its data comes */
		trd_rel_chal(n, pe);
		peer_activate(n, pe);
	}
	/* an ack changes our session only if it acknowledges what we actually sent, and comes
	 * from the peer: with our session's token, which only our echo told (an echo that just
	 * proved itself with our cookie is the peer's too; an echo's trailer is its own token) */
	if (p->ack != 0 && (uint16_t)p->offset == pe->tx_epoch && !fresh &&
	    ((p->flags & TRD_HF_ECHO) || proof == NULL || *proof != pe->tx_token)) {
		if (!(p->flags & TRD_HF_ECHO))
			bad = TRD_DROP_BAD_PROOF; /* believed not; counted */
	} else if (p->ack != 0 && (uint16_t)p->offset == pe->tx_epoch) {
		rc = on_ack(n, pe, p->ack, sack, now);
		/* the peer knows our session: data may flow, and acks riding on its data are
		 * about this session */
		if (rc >= 0 && !pe->ack_synced)
			pe->ack_synced = true, pe->last_moved = now;
		proven = rc > 0;
		if (rc >= 0 && pe->echo_key != 0 && p->key == pe->echo_key)
			on_restarted(n, pe, now);
	}
	if (!(p->flags & (TRD_HF_PROBE | TRD_HF_ECHO)) && probe_answer(pe, p->key))
		proven = true; /* the answer to one of our probes */
	if (proven) {
		peer_alive(n, pe, now);
		peer_session(n, pe, p->epoch);
	}
	if (p->flags & TRD_HF_PROBE) {
		send_ack(n, pe, 0, p->key, 0); /* alive: echo the probe's nonce */
		peer_activate(n, pe);
	}
	return bad;
}

enum trd_rel_verdict
trd_rel_rx(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p, const uint64_t *proof,
	   struct trd_peer **pep, int *cause)
{
	struct trd_coord c = {p->src[0], p->src[1], p->src[2]};
	int rank = trd_rank_of(n, c);
	uint32_t mask = n->rel_w - 1, i;
	struct trd_peer *pe;
	uint64_t now = n->vclock;

	pe = n->peers[rank];
	if (pe == NULL) {
		/* a node we keep nothing for: a session we do not know (see trd_rel_sl_ack()) */
		trd_rel_sl_chal(n, (uint32_t)rank);
		*cause = TRD_DROP_BAD_SESSION;
		return TRD_REL_DROP;
	}
	*pep = pe;
	peer_activate(n, pe);
	if (!pe->rx_valid || p->epoch != pe->rx_epoch) {
		/* A session we do not know. Anyone can write a frame: a new session starts only
		 * when the peer echoes the cookie we send it (its answer names the session and
		 * where it starts). Nothing else about this frame is believed. */
		trd_rel_chal(n, pe);
		*cause = TRD_DROP_BAD_SESSION;
		return TRD_REL_DROP;
	}
	if (proof == NULL || *proof != pe->rx_token) {
		/* The right epoch and a sequence number anyone can guess, without the session's
		 * token: not the peer's. Nothing about it is believed, nothing is held (it must
		 * not take the place of the real frame), no ack goes out for it. */
		*cause = TRD_DROP_BAD_PROOF;
		/* ... or our copy of the token is damaged: ask the peer to restate it (a
		 * challenge, at most one per quarter of the least timeout) */
		trd_rel_chal(n, pe);
		return TRD_REL_DROP;
	}
	i = p->seq & mask;
	if (p->seq != pe->rcv_nxt) {
		if (seq_lt(p->seq, pe->rcv_nxt)) {
			trd_rel_ack_now(n, pe); /* the sender missed our ack */
			*cause = TRD_DROP_DUPLICATE;
			return TRD_REL_DROP;
		}
		if (p->seq - pe->rcv_nxt >= n->rel_w) {
			*cause = TRD_DROP_WINDOW;
			return TRD_REL_DROP;
		}
		if (pe->rxb[i] != NULL) {
			*cause = TRD_DROP_DUPLICATE;
			return TRD_REL_DROP;
		}
		/* early: hold it with its parsed header, and say so at once so the hole is
		 * filled */
		if (p->ack != 0 && pe->ack_synced)
			on_ack(n, pe, p->ack, NULL, now);
		peer_alive(n, pe, now);
		pe->rxb[i] = m;
		pe->rxp[i] = *p;
		pe->n_held++;
		n->stat[TRD_STAT_REORDERED]++;
		trd_rel_ack_now(n, pe);
		*cause = 0;
		return TRD_REL_HOLD;
	}
	/* the next one of the peer's session: only the peer knows it */
	if (p->ack != 0 && pe->ack_synced)
		on_ack(n, pe, p->ack, NULL, now);
	peer_alive(n, pe, now);
	pe->last_moved = now; /* what it owes us (data, outcomes) comes in order */
	pe->restart_key = 0;  /* the peer knows we started its session */
	if (pe->rxb[i] != NULL) {
		/* an earlier copy of this one, held and refused for lack of room: this one wins */
		rte_pktmbuf_free(pe->rxb[i]);
		pe->rxb[i] = NULL;
		pe->n_held--;
	}
	*cause = 0;
	return TRD_REL_DELIVER;
}

/* Time between probes of a silent peer, never less than rto0 (trd_rel_timers() relies on it):
 * from the retransmission timeout, doubling with each
 * probe, at most an eighth of dead_ms (so that dead_ms holds several), and at most dead_ms
 * over the probes the measured loss needs (so that dead_ms holds them all, when the least
 * timeout allows: a lossy path is judged on as many probes as it needs, within dead_ms). */
static inline uint64_t
probe_ival(const struct trd_node *n, const struct trd_peer *pe)
{
	uint64_t base = pe->srtt == 0 ? n->rto0 : RTE_MAX(pe->srtt + 4 * pe->rttvar, n->rto0);
	uint32_t shift = RTE_MIN(pe->tries, 16u); /* (one RTE_MIN inside another: -Wshadow) */
	uint32_t need = RTE_MAX(pe->need, 8u);
	uint64_t most = RTE_MAX(n->dead / need, n->rto0);

	return RTE_MIN(base << shift, most);
}

/* Is a peer that owes us something, silent or moving nothing, down? See docs/reliability.md. */
static bool
peer_dead(const struct trd_node *n, const struct trd_peer *pe, bool outstanding, uint64_t now)
{
	uint64_t silent = now - pe->last_alive, cap = TRD_DEAD_MAX_FACTOR * n->dead;

	if (silent > cap || (outstanding && now - pe->last_progress > cap) ||
	    now - pe->last_moved > cap)
		return true; /* silent, or alive but moving nothing, for too long */
	return silent > n->dead && pe->tries >= pe->need;
}

/* How long packet @p i has waited for its ack, for the timers: since it was (re)sent, or since
 * the peer's last ack that moved the cumulative point, whichever is later. A peer whose acks
 * keep coming is draining a queue, not losing packets (the retransmission timer restarts on
 * progress, as TCP's does). */
static inline uint64_t
since(const struct trd_peer *pe, uint32_t i)
{
	return RTE_MAX(pe->txt[i], pe->last_progress);
}

/* The timers of an active peer are next due by @p due at the latest: earlier than they were
 * (never before the next timer_gap: trd_rel_timers()). */
static inline void
due_by(uint64_t *next, uint64_t due)
{
	*next = RTE_MIN(*next, due);
}

void
trd_rel_timers(struct trd_node *n)
{
	uint64_t now = n->vclock;
	uint32_t mask = n->rel_w - 1;
	/* when they are due next: each active peer's earliest deadline, worked out below from
	 * its state (ack_due, the tail loss probe, the retransmission timeout, a probe, being
	 * declared down); an owed outcome's watch (owed[] is counted elsewhere) starts at most a
	 * quarter of the least timeout late. What makes a deadline earlier in between (a packet
	 * held, an ack that moved, an ack owed, a new peer) brings timers_next forward. */
	uint64_t next = now + RTE_MAX(n->rto0 / 4, n->timer_gap);

	n->timers_next = UINT64_MAX; /* (trd_rel_timers_now() during the scan: at once again) */
	for (uint32_t k = 0; k < n->n_active;) {
		struct trd_peer *pe = n->peers[n->active[k]];
		bool outstanding = pe->snd_una != pe->snd_nxt;
		/* what waits for its session to be acknowledged is owed too: if the peer never
		 * answers, it is declared down and that fails */
		bool owing = outstanding || (pe->want && !pe->ack_synced) ||
			     __atomic_load_n(&n->owed[pe->rank], __ATOMIC_RELAXED) != 0;

		if (pe->ack_pending != 0 && now >= pe->ack_due)
			send_ack(n, pe, 0, 0, 0);
		if (pe->chal_pending &&
		    (pe->last_chal == 0 || now - pe->last_chal >= n->rto0 / 4)) {
			/* one challenge per quarter of the least timeout: forged frames cannot
			 * make us flood the peer */
			pe->last_chal = now;
			if (send_ack(n, pe, TRD_HF_CHAL, cookie_of(n, pe), 0) == 0)
				pe->chal_pending = false;
		}
		if (owing && !pe->owing) {
			/* it owes us something from now on: watch it */
			pe->owing = true;
			pe->last_alive = pe->last_progress = pe->last_moved = now;
			pe->tries = 0;
			pe->need = tries_needed(n, pe);
		} else if (!owing) {
			pe->owing = false;
		}
		if (owing && !pe->down && peer_dead(n, pe, outstanding, now)) {
			peer_down(n, pe);
			outstanding = false;
		} else if (!pe->down &&
			   ((owing && now - pe->last_alive > n->rto0) || !pe->ack_synced)) {
			/* (the interval is never below rto0: a peer heard from since is not asked,
			 * and its interval not worked out on every poll) */
			uint64_t ival = probe_ival(n, pe);

			/* silent while it owes us something: ask whether it lives, only its answer
			 * counts; not yet acknowledged our session: the probe also names the
			 * session, and the peer challenges it (a hello) */
			if (((owing && now - pe->last_alive > ival) || !pe->ack_synced) &&
			    (pe->last_probe == 0 || now - pe->last_probe > ival)) {
				send_probe(n, pe, now);
				pe->tries++;
				pe->need = tries_needed(n, pe); /* as the loss is measured now */
			}
		}
		if (outstanding) {
			uint32_t i = pe->snd_una & mask;
			uint32_t last = (pe->snd_nxt - 1) & mask;
			/* before any round trip was measured, half the least timeout; never less
			 * than two protocol-clock steps: one stalled poll (a descheduled lcore,
			 * which may also serve the peer) moves the clock a whole step before the
			 * peer's ack, already owed, could be read, and the probe would resend what
			 * was not lost */
			uint64_t most = RTE_MAX(2 * pe->srtt, 4 * n->ack_delay);
			uint64_t tlp = pe->srtt == 0 ? n->rto0 / 2 : RTE_MAX(most, 2 * n->vstep);

			/* tail loss probe: nothing more is coming to show a hole, so send the last
			 * packet again after two round trips instead of waiting a whole timeout;
			 * its arrival (or the selective ack it causes) repairs the tail */
			if (pe->tlp_nxt != pe->snd_nxt && now - since(pe, last) > tlp &&
			    !(pe->sacked[last] & 1)) {
				pe->tlp_nxt = pe->snd_nxt;
				retransmit(n, pe, pe->snd_nxt - 1, now);
			} else if (now - since(pe, i) > pe->rto) {
				/* timeout: resend the oldest (selective acks bring the other holes
				 * back), and back off */
				n->stat[TRD_STAT_RTO_EVENTS]++;
				retransmit(n, pe, pe->snd_una, now);
				pe->backoff++;
				pe->rto = rto_of(n, pe);
			}
			if (pe->tlp_nxt != pe->snd_nxt && !(pe->sacked[last] & 1))
				due_by(&next, since(pe, last) + tlp + 1);
			due_by(&next, since(pe, i) + pe->rto + 1);
		}
		if (pe->down && now - pe->last_probe > n->dead / 4)
			send_probe(n, pe, now);
		if (!owing && pe->ack_pending == 0 && !pe->down && !pe->chal_pending) {
			pe->active = false;
			n->active[k] = n->active[--n->n_active];
			continue;
		}
		if (pe->ack_pending != 0)
			due_by(&next, pe->ack_due);
		if (pe->chal_pending || !pe->ack_synced || pe->tries != 0)
			due_by(&next, now); /* a session starting, a silent peer: every timer_gap */
		else if (pe->down)
			due_by(&next, pe->last_probe + n->dead / 4 + 1);
		else if (owing)
			due_by(&next, RTE_MIN(pe->last_alive + RTE_MIN(n->rto0, n->dead),
					      RTE_MIN(pe->last_moved, pe->last_progress) +
						      TRD_DEAD_MAX_FACTOR * n->dead) +
					      1);
		k++;
	}
	n->timers_next = RTE_MIN(n->timers_next, RTE_MAX(next, now + n->timer_gap));
}
