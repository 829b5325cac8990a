/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service: a process's memory (vmem.c), through the /proc/self/mem and maps
 * descriptors it passed at attach.
 */
#ifndef TRD_VNI_VMEM_PVT_H
#define TRD_VNI_VMEM_PVT_H

#include "service_pvt.h"

int svc_vmem_adopt(struct vif *v, int *fds, unsigned int n_fds, const char **why);
void svc_vmem_close(struct vif *v);
int svc_vmem_check(const struct vif *v, uint64_t addr, uint64_t len, bool write);
int svc_vmem_read(struct vif *v, void *buf, uint64_t addr, size_t n);
int svc_vmem_write(struct vif *v, const void *buf, uint64_t addr, size_t n);
bool svc_vmem_gone(const struct vif *v);
bool svc_vmem_same(const struct vif *v, uint64_t addr);
bool svc_vmem_pidns_same(int pid, int pidfd);

#endif /* TRD_VNI_VMEM_PVT_H */
