/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's dispatcher (dispatch.c): what service.c's round calls. A command from an
 * interface's command ring, a frame from the reception FIFO or the tick, each handed to the
 * state machine it is for.
 */
#ifndef TRD_VNI_DISPATCH_PVT_H
#define TRD_VNI_DISPATCH_PVT_H

#include "service_pvt.h"

/* Commands taken from @p v's command ring, each handed to its state machine; how many. */
unsigned int svc_vif_cmds(struct trd_vni_svc *s, struct vif *v);
/* Frames taken from the node's reception FIFO, checked and handed to their state machine. */
unsigned int svc_rx_protocol(struct trd_vni_svc *s);
/* The tick: retries, drained sends and (every SVC_SWEEP_PERIOD_US) the sweeps. */
unsigned int svc_timers(struct trd_vni_svc *s);
/* Events from an interface's socket (sock.c): a memory region asked for, the process gone. */
void svc_vif_mr(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mr *req);
void svc_vif_gone(struct trd_vni_svc *s, struct vif *v, struct svc_gone *n);

#endif /* TRD_VNI_DISPATCH_PVT_H */
