/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's collectives (coll.c): posted by processes, checked, handed to
 * trd_comb_post(), completed.
 */
#ifndef TRD_VNI_COLL_PVT_H
#define TRD_VNI_COLL_PVT_H

#include "service_pvt.h"

void svc_cmd_coll(struct trd_vni_svc *s, struct vif *v, uint32_t idx, const struct trd_vni_cctx *c);
unsigned int svc_colls_poll(struct trd_vni_svc *s);
void svc_colls_fini(struct trd_vni_svc *s);

#endif /* TRD_VNI_COLL_PVT_H */
