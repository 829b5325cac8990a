/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: timers. Refused requests asked again when their back-off ends, sends completed
 * once the engine no longer reads their buffer, and (every 50 ms) the messages of peers that
 * went down ended with -EHOSTUNREACH.
 */
#include <errno.h>
#include <sys/queue.h>

#include "service_pvt.h"

static void
peer_sweep(struct trd_vni_svc *s)
{
	struct vtx *t, *tn;
	struct vrx *x, *xn;

	for (t = TAILQ_FIRST(&s->lists[L_WAIT]); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, lq);
		if (trd_node_peer_up(s->node, t->dst) == 0)
			svc_tx_finish(s, t, -EHOSTUNREACH);
		else
			svc_rma_stall(s, t);
	}
	for (x = TAILQ_FIRST(&s->rx_active); x != NULL; x = xn) {
		xn = TAILQ_NEXT(x, aq);
		if (x->state != RX_RECV || trd_node_peer_up(s->node, x->src) != 0)
			continue;
		if (x->recv != NULL && !x->vif->dead)
			svc_recv_complete(s, x->vif, x->recv, -EHOSTUNREACH, 0, x->tag, x->src_app,
					  x->src_proc);
		svc_rx_release(s, x);
	}
}

unsigned int
svc_timers(struct trd_vni_svc *s)
{
	struct vtx *t, *tn;
	unsigned int k = 0;

	for (t = TAILQ_FIRST(&s->lists[L_TIMER]); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, lq);
		if (s->now >= t->due) {
			ST(s, RETRIES)++;
			svc_tx_set_state(s, t, TX_REQ);
			k++;
		}
	}
	for (t = TAILQ_FIRST(&s->lists[L_DRAIN]); t != NULL; t = tn) {
		int64_t left;

		tn = TAILQ_NEXT(t, lq);
		if (trd_counter_read(s->node, t->ctr, &left) != 0 ||
		    left <= (int64_t)(t->len - t->off)) {
			svc_tx_complete(s, t);
			k++;
		}
	}
	if (s->now >= s->next_sweep) {
		s->next_sweep = s->now + SVC_SWEEP_PERIOD_US;
		peer_sweep(s);
		svc_pid_sweep(s);
		svc_ord_sweep(s); /* parked too long behind a gap */
	}
	return k;
}
