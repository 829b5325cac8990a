/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's interface state machine: an attached process's queues (iface.c), its
 * attach, death and reclaim (sock.c) and its segment (seg.c).
 */
#ifndef TRD_VNI_IFACE_PVT_H
#define TRD_VNI_IFACE_PVT_H

#include <string.h>

#include <rte_ring.h>

#include "service_pvt.h"

/* Copy @p n bytes (a multiple of 8, both 8-byte aligned) the application may be writing at the
 * same time: each word is read exactly once, so what is checked afterwards is what is used.
 * Each word goes into @p dst with memcpy: a store through a uint64_t pointer into a struct of
 * other member types is one the compiler may assume never changes those members (strict
 * aliasing); at -O2 it did, and the service read a context it had never copied. */
static inline void
svc_shared_read(void *dst, const void *src, size_t n)
{
	const volatile uint64_t *in = src;
	uint8_t *out = dst;

	for (size_t i = 0; i < n / 8; i++) {
		uint64_t w = in[i];

		memcpy(out + i * 8, &w, sizeof(w));
	}
}

/* iface.c: the queues */
int svc_cmdq_take(struct vif *v, struct trd_vni_cmd *out, unsigned int max);

/* Has the process written a command the service has not taken? One load of its queue's
 * producer index (the full round's svc_cmdq_take() checks it). */
static inline bool
svc_cmdq_pending(const struct vif *v)
{
	return __atomic_load_n(&v->cmdq->prod.tail, __ATOMIC_ACQUIRE) != v->cmd_cons;
}

void svc_vif_cqe_raw(struct trd_vni_svc *s, struct vif *v, uint16_t kind, uint32_t idx,
		     uint32_t len, uint64_t tag, uint32_t app, uint32_t proc, uint64_t data);
void svc_vif_cqe(struct trd_vni_svc *s, struct vif *v, uint16_t kind, uint32_t idx, int32_t status,
		 uint32_t len, uint64_t tag, uint32_t app, uint32_t proc, bool doorbell,
		 uint32_t db, uint64_t data, unsigned int cflags);
#define SVC_CQE_PROBE 0x100 /* svc_vif_cqe cflags: a probe's answer, not a message received */
void svc_vif_wake_all(struct trd_vni_svc *s);
struct vif *svc_vif_find(struct trd_vni_svc *s, uint32_t app, uint32_t proc);

/* sock.c: attach, death, reclaim */
int svc_ctl_listen(struct trd_vni_svc *s, const char *path);
unsigned int svc_sock_events(struct trd_vni_svc *s, int timeout_ms);
void svc_vif_release_maybe(struct trd_vni_svc *s, struct vif *v);
void svc_pid_sweep(struct trd_vni_svc *s);

/* seg.c: the segment */
int svc_seg_create(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_register *req,
		   const struct trd_vni_sock_mu *mu, int *memfd, const char **why);
void svc_vif_unmap(struct trd_vni_svc *s, struct vif *v);

#endif /* TRD_VNI_IFACE_PVT_H */
