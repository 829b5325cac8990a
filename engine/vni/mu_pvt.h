/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's messaging-unit state machine (mu.c, docs/vni.md "Messaging-unit objects"):
 * a process's own injection FIFOs of engine descriptors, its counter block and its region.
 */
#ifndef TRD_VNI_MU_PVT_H
#define TRD_VNI_MU_PVT_H

#include "service_pvt.h"

/* Check the objects @p req asks for and lay them out at @p off of @p v's segment: *len, the
 * bytes they take. 0 or -errno (with *why). */
int svc_mu_layout(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mu *req,
		  uint64_t off, uint64_t *len, const char **why);
/* After the segment is mapped: make the rings, register the region, reserve the counter
 * block. 0 or -errno (with *why). */
int svc_mu_create(struct trd_vni_svc *s, struct vif *v, const char **why);
/* The descriptors the answer carries after the three of every interface, into @p fds (room
 * for 1 + TRD_VNI_MU_RFIFOS_MAX): the counter block's memfd, then each reception FIFO's
 * eventfd. Their number: 0 without messaging-unit objects. */
unsigned int svc_mu_fds(const struct vif *v, int *fds);
/* Release what svc_mu_create() took (the interface is being unmapped). */
void svc_mu_free(struct trd_vni_svc *s, struct vif *v);
/* A part [off, off + len) of the interface's region as a region of the node (TRD_VNI_MR_MU):
 * its key. @return 0, -EINVAL, -EFAULT (not within), -ENOSPC, -ENOENT (no region). */
int svc_mu_mr_reg(struct trd_vni_svc *s, struct vif *v, uint64_t off, uint64_t len, uint32_t access,
		  uint64_t *key);
/* The engine's address of [off, off + len) of @p v's region, 8-byte aligned, or NULL (not
 * within, no region, a dead process). */
uint8_t *svc_mu_span(const struct vif *v, uint64_t off, uint64_t len);
/* The node's id of @p v's counter number @p k (1 .. TRD_COUNTER_BLOCK - 1), or 0. */
uint16_t svc_mu_ctr(const struct vif *v, uint32_t k);
/* Deregister the part of key @p key. @return 0 or -ENOENT. */
int svc_mu_mr_dereg(struct vif *v, uint64_t key);
/* One round over the interfaces: a dead or broken one's FIFOs stopped, a dead one released
 * once the core holds nothing of it and nothing reads its region. 0 (the core's round does
 * the work). */
unsigned int svc_mu_poll(struct trd_vni_svc *s);
/* Descriptors taken from @p v's FIFOs (*descs) and dropped as bad (*bad): 0 without any. */
void svc_mu_stats(const struct vif *v, uint64_t *descs, uint64_t *bad);
/* The counts of the FIFOs the core serves now, added to @p out (the service's statistics
 * hold those of the FIFOs it no longer serves). */
void svc_mu_stats_add(const struct trd_vni_svc *s, uint64_t out[TRD_VNI_SVC_STAT_MAX]);
/* Messages the core wrote into reception FIFOs since the last look: each armed FIFO that got
 * some is signalled on its eventfd. Every round (cheap: one load when nothing came). */
void svc_mu_rwake(struct trd_vni_svc *s);
/* Does some live interface have descriptors waiting? */
bool svc_mu_pending(const struct trd_vni_svc *s);

#endif /* TRD_VNI_MU_PVT_H */
