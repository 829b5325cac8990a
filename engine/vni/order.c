/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: ordered messages (TRD_VNI_SF_ORDERED; docs/vni.md, "Ordered interfaces").
 *
 * The sending engine numbers the ordered messages of an interface to one process (a pair) in a
 * stream: 0, 1, 2 ... in posting order, and sends up to SVC_ORD_WINDOW of them at once (the
 * next ones are held, TX_HOLD, until the oldest is accepted). Every request (EAGER, RTS)
 * carries its stream and number, and how far back the oldest one its sender has not seen
 * accepted is (TRD_VW_F_ORDERED). The receiving engine matches a pair's requests strictly in
 * number order: one that arrives ahead of the one it expects (that one was refused and will
 * be asked again) is parked, a copy of it, and matched as soon as its predecessors are. A
 * request whose predecessor is refused waits behind it; beyond the park bound, or parked
 * longer than SVC_ORD_STALL_US, it is refused (NAK) and asked again like any refusal.
 *
 * A message that ends without being accepted (its sender died, its destination is unknown,
 * the peer went down) leaves a gap the receiver closes from the next request: its "oldest
 * open" is past it. A stream ends when its sender has nothing open: the next message to that
 * process opens a new stream (a new number: per engine a counter from a random start), which
 * the receiver takes up where its first request says. So the state is per incarnation of
 * both ends (an interface, a process's attachment): a restarted process starts new streams.
 *
 * Every number from the wire is untrusted: a request outside the receiver's window (before
 * the one it expects or SVC_ORD_WINDOW past it), or with an "oldest open" past the window, is
 * dropped and counted (order_dropped); parking is bounded per pair (the window) and in all
 * (SVC_ORD_PARK_MAX requests, SVC_ORD_PARK_BYTES bytes), and pair states come from a fixed table
 * (rte_hash).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_random.h>

#include "iface_pvt.h"
#include "order_pvt.h"
#include "rx_pvt.h"
#include "tx_pvt.h"

#define W SVC_ORD_WINDOW

static int
ord_init(struct trd_vni_svc *s)
{
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.entries = SVC_ORD_PAIRS,
		.key_len = sizeof(struct vord_key),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};

	if (s->ord_hash != NULL)
		return 0;
	snprintf(name, sizeof(name), "vord_%p", (void *)s);
	hp.name = name;
	s->ords = calloc(SVC_ORD_PAIRS, sizeof(*s->ords));
	s->ord_hash = s->ords == NULL ? NULL : rte_hash_create(&hp);
	if (s->ord_hash == NULL) {
		free(s->ords);
		s->ords = NULL;
		return -ENOMEM;
	}
	s->ord_stream = (uint32_t)rte_rand();
	TAILQ_INIT(&s->ord_idle);
	TAILQ_INIT(&s->ord_parking);
	return 0;
}

void
svc_ord_fini(struct trd_vni_svc *s)
{
	if (s->ord_hash == NULL)
		return;
	for (unsigned int i = 0; i < SVC_ORD_PAIRS; i++)
		for (unsigned int j = 0; j < W; j++)
			free(s->ords[i].park[j]);
	rte_hash_free(s->ord_hash);
	free(s->ords);
	s->ord_hash = NULL;
	s->ords = NULL;
}

static struct vord *
ord_find(struct trd_vni_svc *s, const struct vord_key *k)
{
	int32_t i = rte_hash_lookup(s->ord_hash, k);

	return i >= 0 && i < SVC_ORD_PAIRS ? &s->ords[i] : NULL;
}

static void
ord_free(struct trd_vni_svc *s, struct vord *o)
{
	if (o->k.rx != 0) {
		TAILQ_REMOVE(o->in_idle ? &s->ord_idle : &s->ord_parking, o, pq);
		o->in_idle = false;
	}
	TAILQ_REMOVE(&o->vif->ords, o, vq);
	rte_hash_del_key(s->ord_hash, &o->k);
	o->vif = NULL;
}

/* A new pair state for @p k, or NULL when the table is full (an idle receiving pair is
 * forgotten to make room: its sender's next request tells where to start again). */
static struct vord *
ord_new(struct trd_vni_svc *s, struct vif *v, const struct vord_key *k)
{
	int32_t i = rte_hash_add_key(s->ord_hash, k);
	struct vord *o;

	if (i < 0 && !TAILQ_EMPTY(&s->ord_idle)) {
		ord_free(s, TAILQ_FIRST(&s->ord_idle));
		i = rte_hash_add_key(s->ord_hash, k);
	}
	if (i < 0 || i >= SVC_ORD_PAIRS) {
		if (i >= 0)
			rte_hash_del_key(s->ord_hash, k);
		return NULL;
	}
	o = &s->ords[i];
	o->k = *k;
	o->vif = v;
	o->stream = o->next = o->low = o->n_open = 0;
	o->bits = 0;
	o->n_parked = 0;
	o->since = s->now;
	o->held_tx = NULL;
	TAILQ_INIT(&o->held);
	TAILQ_INSERT_TAIL(&v->ords, o, vq);
	if (k->rx != 0) {
		TAILQ_INSERT_TAIL(&s->ord_idle, o, pq);
		o->in_idle = true;
	}
	return o;
}

static void
ord_key(struct vord_key *k, const struct vif *v, uint32_t rank, uint32_t app, uint32_t proc,
	bool rx)
{
	memset(k, 0, sizeof(*k));
	k->vif = (uint64_t)(uintptr_t)v;
	k->rank = rank;
	k->app = app;
	k->proc = proc;
	k->rx = rx ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* sending */

static uint64_t
bit(uint32_t seq)
{
	return 1ull << (seq % W);
}

/* Open held message @p t: its request may go. */
static void
open_one(struct trd_vni_svc *s, struct vord *o, struct vtx *t)
{
	o->bits |= bit(t->oseq);
	o->n_open++;
	if (o->n_open > ST(s, ORDER_INFLIGHT_MAX))
		ST(s, ORDER_INFLIGHT_MAX) = o->n_open;
	/* a long message of the pair held at its sender for its receive would keep this one
	 * parked behind it at the receiver: asked again now, it is staged (rx.c) */
	if (o->n_open > 1 && o->held_tx != NULL) {
		const struct vtx *h = o->held_tx;

		o->held_tx = NULL;
		if (h->opair == o)
			svc_tx_ask_again(s, s->rank, svc_tx_id(h), h->key);
	}
	svc_tx_set_state(s, t, TX_REQ);
}

/* Ordered unicast @p t (fresh from the command queue): its number, and its request goes now
 * or is held. -ENOBUFS: no pair state to be had. */
int
svc_ord_send(struct trd_vni_svc *s, struct vtx *t)
{
	struct vord_key k;
	struct vord *o;

	if (ord_init(s) != 0)
		return -ENOBUFS;
	ord_key(&k, t->vif, t->dst_rank, t->dst_app, t->dst_proc, false);
	o = ord_find(s, &k);
	if (o == NULL) {
		o = ord_new(s, t->vif, &k);
		if (o == NULL)
			return -ENOBUFS;
		if (++s->ord_stream == 0)
			s->ord_stream = 1;
		o->stream = s->ord_stream;
	}
	t->opair = o;
	t->oseq = o->next++;
	if (t->oseq - o->low >= W || !TAILQ_EMPTY(&o->held)) {
		TAILQ_INSERT_TAIL(&o->held, t, hq);
		ST(s, ORDER_HOLDS)++;
		svc_tx_set_state(s, t, TX_HOLD);
		return 0;
	}
	open_one(s, o, t);
	return 0;
}

/* Has interface @p v no ordered message to (@p rank, @p app, @p proc) that its receiving
 * engine has not accepted yet (open or held)? Then a message delivered at once (tx_post.c) cannot
 * overtake one of them, and the stream needs no number for it: the next request carries the
 * next one, which the receiver expects. */
bool
svc_ord_quiet(struct trd_vni_svc *s, const struct vif *v, uint32_t rank, uint32_t app,
	      uint32_t proc)
{
	struct vord_key k;
	const struct vord *o;

	if (s->ord_hash == NULL)
		return true;
	ord_key(&k, v, rank, app, proc, false);
	o = ord_find(s, &k);
	return o == NULL || (o->n_open == 0 && TAILQ_EMPTY(&o->held));
}

/* The ordered request header fields of @p t (EAGER, RTS). */
void
svc_ord_hdr(const struct vtx *t, struct trd_vw_hdr *h)
{
	const struct vord *o = t->opair;

	if (o == NULL)
		return;
	h->flags |= TRD_VW_F_ORDERED;
	h->roff = TRD_VW_ORD(o->stream, t->oseq);
	h->status = (int32_t)(t->oseq - o->low);
}

/* @p t was accepted (ACK, CTS) or ended without: the window moves on. */
void
svc_ord_tx_done(struct trd_vni_svc *s, struct vtx *t)
{
	struct vord *o = t->opair;

	if (o == NULL)
		return;
	t->opair = NULL;
	if (t->state == TX_HOLD) {
		/* ended while held (its interface died): it never opened */
		TAILQ_REMOVE(&o->held, t, hq);
	} else {
		o->bits &= ~bit(t->oseq);
		o->n_open--;
	}
	while (o->low != o->next && !(o->bits & bit(o->low))) {
		struct vtx *h = TAILQ_FIRST(&o->held);

		if (h != NULL && h->oseq == o->low)
			break; /* not opened yet (cannot be: opened as the window reached it) */
		o->low++;
		while ((h = TAILQ_FIRST(&o->held)) != NULL && h->oseq - o->low < W) {
			TAILQ_REMOVE(&o->held, h, hq);
			open_one(s, o, h);
		}
	}
	if (o->n_open == 0 && TAILQ_EMPTY(&o->held))
		ord_free(s, o); /* the stream ends: the next message starts a new one */
}

/* ------------------------------------------------------------------------------------------ */
/* receiving */

/* Let go of the request parked in @p slot: refused with @p status (its sender asks again), or
 * (0) dropped, as its sender ended it. */
static void
park_nak(struct trd_vni_svc *s, struct vord *o, unsigned int slot, int status)
{
	struct vpark *p = o->park[slot];
	struct trd_vw_hdr h;

	if (p == NULL)
		return;
	if (status != 0 && trd_vw_decode(p->msg, p->len, &h) == 0) {
		svc_rx_nak(s, p->src, &h, status);
		ST(s, ORDER_REFUSED)++;
	}
	s->parked_bytes -= p->len;
	free(p);
	o->park[slot] = NULL;
	o->n_parked--;
	s->n_parked--;
}

/* Keep the rx pair in the right service list: parked requests, or idle (most recent last). */
static void
rx_list(struct trd_vni_svc *s, struct vord *o)
{
	TAILQ_REMOVE(o->in_idle ? &s->ord_idle : &s->ord_parking, o, pq);
	o->in_idle = o->n_parked == 0;
	TAILQ_INSERT_TAIL(o->in_idle ? &s->ord_idle : &s->ord_parking, o, pq);
}

static void
park_all_nak(struct trd_vni_svc *s, struct vord *o, int status)
{
	for (unsigned int j = 0; j < W && o->n_parked != 0; j++)
		park_nak(s, o, j, status);
}

/* Match the parked requests that are next in order, until a gap or a refusal. */
static void
drain(struct trd_vni_svc *s, struct vord *o)
{
	struct vpark *p;

	while (o->vif != NULL && (p = o->park[o->next % W]) != NULL) {
		struct trd_vw_hdr h;
		bool taken = false;

		o->park[o->next % W] = NULL;
		o->n_parked--;
		s->n_parked--;
		s->parked_bytes -= p->len;
		if (trd_vw_decode(p->msg, p->len, &h) == 0)
			taken = svc_rx_take(s, o->k.rank, p->src, &h, p->msg + TRD_VW_HDR_LEN);
		free(p);
		if (!taken)
			break; /* refused: its sender asks again, the next ones wait */
		o->next++;
		o->since = s->now;
	}
}

static bool
park(struct trd_vni_svc *s, struct vord *o, uint32_t seq, const struct trd_msg *m)
{
	struct vpark *p;

	if (s->n_parked >= SVC_ORD_PARK_MAX || m->len > SVC_ORD_PARK_BYTES - s->parked_bytes)
		return false; /* refused (NAK): its sender asks again */
	p = malloc(sizeof(*p) + m->len);
	if (p == NULL)
		return false;
	p->src = m->src;
	p->len = m->len;
	memcpy(p->msg, m->data, m->len);
	s->parked_bytes += m->len;
	o->park[seq % W] = p;
	o->n_parked++;
	s->n_parked++;
	ST(s, ORDER_PARKED)++;
	return true;
}

/* An ordered request (EAGER, RTS) from node @p src_rank, checked by the dispatcher: matched
 * now if it is the next of its pair, parked if it is ahead, dropped if it is outside the
 * window. The caller frees @p m. */
void
svc_ord_rx(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_msg *m,
	   const struct trd_vw_hdr *h)
{
	const uint8_t *data = (const uint8_t *)m->data + TRD_VW_HDR_LEN;
	uint32_t stream = TRD_VW_ORD_STREAM(h->roff), seq = TRD_VW_ORD_SEQ(h->roff);
	uint32_t back = (uint32_t)h->status, low = seq - back, d;
	struct vord_key k;
	struct vhint *hn;
	struct vord *o;
	struct vif *v;

	if (h->type == TRD_VW_RTS) {
		/* asked again, and granted meanwhile (a hint): answered as any request */
		hn = svc_hint_find(s, src_rank, h->msg_id, h->key);
		if (hn != NULL && hn->grant != 0) {
			svc_rx_take(s, src_rank, m->src, h, data);
			return;
		}
	}
	if (stream == 0 || back >= W) {
		ST(s, ORDER_DROPPED)++;
		return;
	}
	v = svc_vif_find(s, h->dst_app, h->dst_proc);
	if (v == NULL || ord_init(s) != 0) {
		svc_rx_take(s, src_rank, m->src, h, data); /* refused: no such process */
		return;
	}
	ord_key(&k, v, src_rank, h->src_app, h->src_proc, true);
	o = ord_find(s, &k);
	if (o == NULL) {
		o = ord_new(s, v, &k);
		if (o == NULL) {
			ST(s, ORDER_REFUSED)++;
			svc_rx_nak(s, m->src, h, -ENOSPC);
			return;
		}
		o->stream = stream;
		o->next = low;
	}
	if (o->stream != stream) {
		/* a new stream of that process: the old one ended at its sender, or its
		 * process died and what it parked here finishes without it: refused, asked
		 * again (never dropped unanswered: its sender would wait for ever) */
		park_all_nak(s, o, -ENOSPC);
		o->stream = stream;
		o->next = low;
		o->since = s->now;
	} else if (low - o->next - 1 < W - 1) {
		/* the sender saw up to low ended: those not matched here were given up */
		for (; o->next != low; o->next++)
			park_nak(s, o, o->next % W, 0);
		o->since = s->now;
	}
	d = seq - o->next;
	if (d >= W) {
		ST(s, ORDER_DROPPED)++; /* before the window (a replay) or past it */
	} else if (d != 0) {
		if (o->park[seq % W] != NULL) {
			ST(s, ORDER_DROPPED)++; /* parked already: a duplicate */
		} else if (!park(s, o, seq, m)) {
			ST(s, ORDER_REFUSED)++;
			svc_rx_nak(s, m->src, h, -ENOSPC);
		}
	} else if (svc_rx_take(s, src_rank, m->src, h, data)) {
		o->next++;
		o->since = s->now;
	}
	drain(s, o);
	if (o->vif != NULL)
		rx_list(s, o);
}

/* Hinted request @p hn (refused, then granted or claimed when a receive came): it was the next
 * of its pair, which moves on. */
void
svc_ord_matched(struct trd_vni_svc *s, const struct vhint *hn)
{
	struct vord_key k;
	struct vord *o;

	if (!hn->ordered || s->ord_hash == NULL)
		return;
	ord_key(&k, hn->vif, hn->src_rank, hn->src_app, hn->src_proc, true);
	o = ord_find(s, &k);
	if (o == NULL || o->stream != hn->ostream || o->next != hn->oseq)
		return;
	o->next++;
	o->since = s->now;
	drain(s, o);
	if (o->vif != NULL)
		rx_list(s, o);
}

/* An ABORT: its message, if parked, is dropped (its sender gave it up). */
void
svc_ord_abort(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h)
{
	struct vif *v = s->ord_hash == NULL ? NULL : svc_vif_find(s, h->dst_app, h->dst_proc);
	struct vord_key k;
	struct vord *o;

	if (v == NULL)
		return;
	ord_key(&k, v, src_rank, h->src_app, h->src_proc, true);
	o = ord_find(s, &k);
	for (unsigned int j = 0; o != NULL && o->n_parked != 0 && j < W; j++) {
		struct vpark *p = o->park[j];
		struct trd_vw_hdr ph;

		if (p != NULL && trd_vw_decode(p->msg, p->len, &ph) == 0 &&
		    ph.msg_id == h->msg_id && ph.key == h->key) {
			park_nak(s, o, j, 0);
			rx_list(s, o);
			return;
		}
	}
}

/* Pairs whose parked requests waited too long behind a gap: refused, asked again (their
 * senders then say again what ended). Called every sweep period. */
void
svc_ord_sweep(struct trd_vni_svc *s)
{
	struct vord *o, *on;

	if (s->ord_hash == NULL)
		return;
	for (o = TAILQ_FIRST(&s->ord_parking); o != NULL; o = on) {
		on = TAILQ_NEXT(o, pq);
		if (s->now - o->since < SVC_ORD_STALL_US)
			continue;
		park_all_nak(s, o, -ENOSPC);
		rx_list(s, o);
	}
}

/* Interface @p v died: its receiving pairs go (parked requests refused: no such process). Its
 * sending pairs end with its last messages. */
void
svc_ord_vif_gone(struct trd_vni_svc *s, struct vif *v)
{
	struct vord *o, *on;

	for (o = TAILQ_FIRST(&v->ords); o != NULL; o = on) {
		on = TAILQ_NEXT(o, vq);
		if (o->k.rx == 0)
			continue;
		park_all_nak(s, o, -ECONNREFUSED);
		ord_free(s, o);
	}
}
