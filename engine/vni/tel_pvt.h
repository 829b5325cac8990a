/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's telemetry (vni_tel.c): /toroid/vni, a snapshot for the telemetry thread.
 */
#ifndef TRD_VNI_TEL_PVT_H
#define TRD_VNI_TEL_PVT_H

#include "service_pvt.h"

void svc_tel_snapshot(struct trd_vni_svc *s);
void svc_tel_unregister(struct trd_vni_svc *s);

#endif /* TRD_VNI_TEL_PVT_H */
