/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability towards nodes a node keeps no state for (docs/reliability.md): answered from the
 * session secret alone until they prove themselves (rel.c keeps the sessions).
 */
#include <toroid/testing.h>

#include "core_pvt.h"

/*
 * A node we never sent anything to and that never proved itself gets no memory and no
 * timer: what it sends (a hello, a frame of a session we do not know) is answered from the
 * secret alone, its state is made only when it echoes the cookie of its first session
 * (generation 0; once the state exists the generation has moved on, so that echo proves
 * nothing again). Forged frames "from" every coordinate of the torus therefore claim nothing,
 * and draw at most TRD_SL_BURST frames per quarter of the least timeout over all such
 * nodes. */
#define TRD_SL_BURST 64

static void
stateless_ack(struct trd_node *n, uint32_t rank, uint16_t flags, uint64_t key)
{
	struct trd_coord c;
	uint8_t dst[3];
	uint16_t epoch;
	uint32_t isn;

	if (n->vclock - n->sl_start >= n->rto0 / 4) {
		n->sl_start = n->vclock;
		n->sl_count = 0;
	}
	if (n->sl_count >= TRD_SL_BURST)
		return;
	n->sl_count++;
	trd_torus_coord(&n->torus, rank, &c);
	dst[0] = c.x;
	dst[1] = c.y;
	dst[2] = c.z;
	/* our session towards it, should it prove itself: its first one */
	trd_session_start(n->sess_key[0], n->sess_key[1], rank, &epoch, &isn);
	if (trd_ctl_send_ack(n, dst, flags, 0, 0, epoch, key, 0, NULL, 0, NULL) == 0)
		n->stat[TRD_STAT_TX_ACKS]++;
}

void
trd_rel_sl_chal(struct trd_node *n, uint32_t rank)
{
	stateless_ack(n, rank, TRD_HF_CHAL,
		      trd_session_cookie(n->sess_key[0], n->sess_key[1], rank, 0));
}

/* An ACK from a node we keep no state for: its state if it just proved itself (a correct
 * echo, or an ack of our first session with its token), else NULL and *@p rc the frame's
 * drop cause (0: none). */
struct trd_peer *
trd_rel_sl_ack(struct trd_node *n, uint32_t rank, const struct trd_pkt *p, const uint64_t *proof,
	       int *rc)
{
	uint16_t epoch;
	uint32_t isn;

	*rc = 0;
	/* an ack of the first session we would open towards it, at its first sequence number:
	 * both come from the secret, so it proves as much as any ack of ours does */
	trd_session_start(n->sess_key[0], n->sess_key[1], rank, &epoch, &isn);
	if (p->ack == isn && (uint16_t)p->offset == epoch && !(p->flags & TRD_HF_CHAL) &&
	    proof != NULL &&
	    *proof == trd_session_token(n->sess_key[0], n->sess_key[1], rank, epoch))
		return trd_rel_peer(n, rank);
	if (p->flags & TRD_HF_CHAL)
		return NULL; /* we sent it nothing: there is nothing to echo */
	if (p->flags & TRD_HF_ECHO) {
		if (p->key != trd_session_cookie(n->sess_key[0], n->sess_key[1], rank, 0)) {
			*rc = TRD_DROP_BAD_SESSION;
			return NULL;
		}
		return trd_rel_peer(n, rank); /* proven: on_echo() starts its session */
	}
	if (p->flags & TRD_HF_PROBE)
		stateless_ack(n, rank, 0, p->key); /* alive: echo the probe's nonce */
	if (p->epoch != 0)
		trd_rel_sl_chal(n, rank); /* a session we do not know (a hello) */
	return NULL;
}
