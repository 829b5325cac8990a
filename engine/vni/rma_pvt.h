/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's one-sided access (rma.c): memory regions, writes, reads and atomics on
 * application memory, both ends.
 */
#ifndef TRD_VNI_RMA_PVT_H
#define TRD_VNI_RMA_PVT_H

#include "service_pvt.h"

/* A memory region of a process, for one-sided access (rma.c). */
struct vmr {
	uint64_t key; /* 0: free */
	uint64_t addr, len;
	uint32_t access; /* TRD_VNI_MR_* */
};

void svc_mr_request(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mr *req);
void svc_mr_free(struct vif *v);
void svc_mr_vif_gone(struct vif *v);
void svc_rma_fini(struct trd_vni_svc *s);
void svc_rma_init(struct trd_vni_svc *s);
void svc_atom_close(struct trd_vni_svc *s, struct vtx *t);
void svc_cmd_rma(struct trd_vni_svc *s, struct vif *v, uint32_t idx, const struct trd_vni_actx *c);
int svc_rma_step(struct trd_vni_svc *s, struct vtx *t);
void svc_rma_stall(struct trd_vni_svc *s, struct vtx *t);
void svc_rma_serve(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src,
		   const struct trd_vw_hdr *h, const uint8_t *data);
void svc_rma_reply(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h,
		   const uint8_t *data);

#endif /* TRD_VNI_RMA_PVT_H */
