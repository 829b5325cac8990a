/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: the dispatcher. It takes a command from an interface's command ring (its
 * context read once, here, for one-sided ops and collectives), a frame from the node's
 * reception FIFO (checked: magic, source, header, lengths) or the tick, and hands each to the
 * state machine it is for: transmit (tx_pvt.h), receive (rx_pvt.h), ordered pairs
 * (order_pvt.h), one-sided (rma_pvt.h), collectives (coll_pvt.h). It holds no state of its
 * own.
 */
#include <errno.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <rte_common.h>

#include "coll_pvt.h"
#include "dispatch_pvt.h"
#include "iface_pvt.h"
#include "order_pvt.h"
#include "rma_pvt.h"
#include "rx_pvt.h"
#include "tx_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* the tick: refused requests asked again when their back-off ends, sends completed once the
 * engine no longer reads their buffer, and (every 50 ms) the messages of peers that went down
 * ended with -EHOSTUNREACH */

unsigned int
svc_timers(struct trd_vni_svc *s)
{
	unsigned int k = svc_tx_timers(s);

	if (s->now >= s->next_sweep) {
		s->next_sweep = s->now + SVC_SWEEP_PERIOD_US;
		svc_tx_peer_sweep(s);
		svc_rx_peer_sweep(s);
		svc_pid_sweep(s);
		svc_ord_sweep(s); /* parked too long behind a gap */
		/* header-only messages into staging freed elsewhere (a share that grew when a
		 * process left, another process's staging given back) */
		for (unsigned int i = 0; i < s->n_ifs; i++)
			if (s->ifs[i]->n_hdr != 0)
				svc_rx_hdr_stage(s, s->ifs[i]);
	}
	return k;
}

/* A one-sided op: the context is read once, here; rma.c checks every field. */
static void
cmd_rma(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_actx c;

	if (idx >= v->n_send || v->sbusy[idx]) {
		ST(s, BAD_CMDS)++;
		return;
	}
	svc_shared_read(&c, &v->sctx[idx], sizeof(c));
	v->sbusy[idx] = 1;
	svc_cmd_rma(s, v, idx, &c);
}

/* A collective: the context is read once, here; coll.c checks every field. */
static void
cmd_coll(struct trd_vni_svc *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_cctx c;

	if (idx >= v->n_send || v->sbusy[idx]) {
		ST(s, BAD_CMDS)++;
		return;
	}
	svc_shared_read(&c, &v->sctx[idx], sizeof(c));
	v->sbusy[idx] = 1;
	svc_cmd_coll(s, v, idx, &c);
}

unsigned int
svc_vif_cmds(struct trd_vni_svc *s, struct vif *v)
{
	struct trd_vni_cmd c[SVC_CMD_BURST];
	int n;

	if (v->broken)
		return 0;
	n = svc_cmdq_take(v, c, SVC_CMD_BURST);
	if (n < 0) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: command queue damaged: interface closed", v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR); /* seen as a hang-up at the next socket look */
		return 0;
	}
	for (int i = 0; i < n; i++) {
		ST(s, CMDS)++;
		if (c[i].op == TRD_VNI_CMD_SEND)
			svc_tx_post(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_RECV)
			svc_rx_post(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_CANCEL)
			svc_rx_cancel(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_RMA)
			cmd_rma(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_COLL)
			cmd_coll(s, v, c[i].idx);
		else if (c[i].op >= TRD_VNI_CMD_CMA_OK && c[i].op <= TRD_VNI_CMD_CMA_OFF)
			svc_rx_cma_answer(s, v, c[i].op, c[i].idx);
		else
			ST(s, BAD_CMDS)++;
	}
	return (unsigned int)n;
}

unsigned int
svc_rx_protocol(struct trd_vni_svc *s)
{
	struct trd_msg *m[SVC_RX_BURST];
	int n = trd_rec_fifo_poll(s->rf, m, SVC_RX_BURST);

	for (int i = 0; i < n; i++) {
		struct trd_vw_hdr h;
		int src_rank = trd_torus_rank(&s->topo->torus, m[i]->src);

		if ((m[i]->user >> 32) != TRD_VW_MAGIC || src_rank < 0 ||
		    trd_vw_decode(m[i]->data, m[i]->len, &h) != 0 ||
		    h.type != (m[i]->user & 0xff) ||
		    (h.type == TRD_VW_ATOMIC && m[i]->len != TRD_VW_HDR_LEN + TRD_VW_ATOMIC_LEN) ||
		    (trd_vw_has_data(h.type) && h.type != TRD_VW_ATOMIC &&
		     h.len != m[i]->len - TRD_VW_HDR_LEN) ||
		    (!trd_vw_has_data(h.type) && m[i]->len != TRD_VW_HDR_LEN)) {
			ST(s, BAD_WIRE)++;
			trd_msg_free(m[i]);
			continue;
		}
		switch (h.type) {
		case TRD_VW_EAGER:
		case TRD_VW_RTS:
			if (h.flags & TRD_VW_F_ORDERED)
				svc_ord_rx(s, (uint32_t)src_rank, m[i], &h); /* order.c */
			else
				svc_rx_take(s, (uint32_t)src_rank, m[i]->src, &h,
					    (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_FIN:
			svc_rx_on_fin(s, (uint32_t)src_rank, m[i]->src, &h);
			break;
		case TRD_VW_ABORT:
			svc_rx_on_abort(s, (uint32_t)src_rank, &h);
			break;
		case TRD_VW_DATA:
			svc_rx_on_data(s, (uint32_t)src_rank, &h,
				       (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_WRITE:
		case TRD_VW_READ:
		case TRD_VW_ATOMIC:
			svc_rma_serve(s, (uint32_t)src_rank, m[i]->src, &h,
				      (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_WRITE_ACK:
		case TRD_VW_READ_RESP:
		case TRD_VW_ATOMIC_RESP:
			svc_rma_reply(s, (uint32_t)src_rank, &h,
				      (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		default:
			svc_on_reply(s, (uint32_t)src_rank, &h);
			break;
		}
		trd_msg_free(m[i]);
	}
	return n > 0 ? (unsigned int)n : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* events from the socket (sock.c) */

/* A memory region registered or deregistered on @p v's socket. */
void
svc_vif_mr(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mr *req)
{
	svc_mr_request(s, v, req);
}

/* The process of @p v is gone (or closed, or broke its queue): each state machine gives back
 * what it holds for it, counted in @p n. */
void
svc_vif_gone(struct trd_vni_svc *s, struct vif *v, struct svc_gone *n)
{
	svc_mr_vif_gone(v);            /* its regions: no access from now on */
	svc_tx_vif_gone(s, v, n);      /* its sends */
	n->rx = svc_rx_vif_gone(s, v); /* its receives and hints */
	svc_ord_vif_gone(s, v);        /* requests parked for it: refused */
}
