/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's ordered pairs (order.c, docs/vni.md "Ordered interfaces"): per-pair
 * sequence numbers, the sender's window, the receiver's parked requests.
 */
#ifndef TRD_VNI_ORDER_PVT_H
#define TRD_VNI_ORDER_PVT_H

#include "service_pvt.h"

#define SVC_ORD_WINDOW                                                                             \
	64                    /* ordered messages open at once from one interface to one process   \
			       * (the sender holds the next), and parking slots per pair */
#define SVC_ORD_PAIRS    2048 /* pair states (sending and receiving) per service */
#define SVC_ORD_PARK_MAX 1024 /* requests parked at once, all pairs of the service */
/* bytes of parked requests (header and eager data), all pairs: a peer decides their sizes */
#define SVC_ORD_PARK_BYTES (4u << 20)
#define SVC_ORD_STALL_US   200000 /* parked behind a gap this long: refused, asked again */

/* Ordered messages (order.c, docs/vni.md "Ordered interfaces"): the state of one pair, for
 * one direction. Sending (tx): an interface's ordered messages to one process, numbered from
 * 0 in a stream the engine names with a number of its own; [low, next) were numbered, those
 * open (sent, not yet accepted) marked in bits (by seq % SVC_ORD_WINDOW), those beyond the
 * window held. Receiving (rx): one process's ordered messages to an interface; next is the
 * one to match, later ones wait parked in park[seq % SVC_ORD_WINDOW]. */
/* A parked request: a copy of its message (header, and an eager message's data). */
struct vpark {
	struct trd_coord src;
	uint32_t len;
	uint8_t msg[];
};

struct vord_key {
	uint64_t vif; /* the local interface (its address) */
	uint32_t rank, app, proc;
	uint32_t rx; /* 1: receiving */
};

struct vord {
	struct vord_key k;
	struct vif *vif;
	uint32_t stream, next, low;
	uint32_t n_open;
	uint64_t bits;
	struct vtx_list held;
	struct vtx *held_tx; /* its message last held at its sender for its receive (tx.c), or
			      * NULL; checked before use (the message may have moved on) */
	struct vpark *park[SVC_ORD_WINDOW];
	unsigned int n_parked;
	uint64_t since; /* rx: when next last moved (or the pair was made) */
	bool in_idle;
	TAILQ_ENTRY(vord) vq; /* its interface's pairs */
	TAILQ_ENTRY(vord) pq; /* rx: the service's idle pairs (LRU) or those with parked ones */
};

int svc_ord_send(struct trd_vni_svc *s, struct vtx *t);
bool svc_ord_quiet(struct trd_vni_svc *s, const struct vif *v, uint32_t rank, uint32_t app,
		   uint32_t proc);
void svc_ord_tx_done(struct trd_vni_svc *s, struct vtx *t);
void svc_ord_hdr(const struct vtx *t, struct trd_vw_hdr *h);
void svc_ord_rx(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_msg *m,
		const struct trd_vw_hdr *h);
void svc_ord_matched(struct trd_vni_svc *s, const struct vhint *hn);
void svc_ord_abort(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h);
void svc_ord_sweep(struct trd_vni_svc *s);
void svc_ord_vif_gone(struct trd_vni_svc *s, struct vif *v);
void svc_ord_fini(struct trd_vni_svc *s);

#endif /* TRD_VNI_ORDER_PVT_H */
