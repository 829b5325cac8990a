/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's transmit state machine: a send command taken (tx_post.c); the send table,
 * injection, the scheduler, retries, drains and the replies to our sends (tx.c); copies and
 * CMA between two processes of this engine (tx_local.c).
 */
#ifndef TRD_VNI_TX_PVT_H
#define TRD_VNI_TX_PVT_H

#include "service_pvt.h"

/* tx_post.c: send context @p idx of @p v posted */
void svc_tx_post(struct trd_vni_svc *s, struct vif *v, uint32_t idx);

/* tx.c */
void svc_tx_set_state(struct trd_vni_svc *s, struct vtx *t, uint8_t st);
struct vtx *svc_tx_alloc(struct trd_vni_svc *s, struct vif *v);
void svc_tx_free(struct trd_vni_svc *s, struct vtx *t);
void svc_tx_cqe(struct trd_vni_svc *s, struct vtx *t);
void svc_tx_finish(struct trd_vni_svc *s, struct vtx *t, int status);
unsigned int svc_schedule(struct trd_vni_svc *s);
void svc_on_reply(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h);
struct vtx *svc_tx_lookup(struct trd_vni_svc *s, uint32_t id);
void svc_tx_count_pkt(struct trd_vni_svc *s, struct vtx *t);
uint32_t svc_tx_id(const struct vtx *t);
unsigned int svc_tx_timers(struct trd_vni_svc *s);
/* The refused request of message @p msg (key @p key) of this engine (@p src_rank: the
 * sender's), waiting out its back-off or its hold, is asked again at the next tick: what its
 * wait counted on is gone (its hint, or the grant it would have had), or it must be staged
 * (another ordered message of its pair opened behind it). Anything else: nothing. */
void svc_tx_ask_again(struct trd_vni_svc *s, uint32_t src_rank, uint32_t msg, uint32_t key);
void svc_tx_peer_sweep(struct trd_vni_svc *s);
void svc_tx_vif_gone(struct trd_vni_svc *s, struct vif *v, struct svc_gone *n);

/* tx_local.c: between two processes of this engine */
/* The message's bytes [off, off + n) into @p buf, from its process's memory or its pool. */
int svc_tx_read(struct trd_vni_svc *s, struct vtx *t, void *buf, uint32_t n);
/* The sender's memory could not be read: the message fails (ABORT). 0. */
int svc_tx_fault(struct trd_vni_svc *s, struct vtx *t, int rc);
/* The next chunk of message @p t to a process of this engine, or its CMA request. 0 or
 * -EAGAIN (tx_step's convention). */
int svc_tx_data_local(struct trd_vni_svc *s, struct vtx *t);
/* The receiving process answered the CMA request of receive @p x: its message goes on. */
void svc_tx_cma_answered(struct trd_vni_svc *s, const struct vrx *x);

#endif /* TRD_VNI_TX_PVT_H */
