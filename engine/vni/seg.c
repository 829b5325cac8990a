/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: an interface's shared segment. A sealed memfd holding the queues, the context
 * tables, the context region, the doorbells and the buffer pool (vni_seg.h), mapped here and
 * in the application; DMA-mapped for the node's NICs on a real bus, and the pool registered as
 * a memory region so senders put into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_thread.h>

#include "iface_pvt.h"
#include "mu_pvt.h"
#include "rma_pvt.h"
#include "vmem_pvt.h"

/* A NIC that reads long messages zero-copy from a segment must be able to DMA from it: with
 * an IOMMU (vfio-pci, IOVA as VA) map the segment for every such device, as DPDK maps its own
 * memory. Virtual devices (memif, ring, af_packet, ...) copy with the CPU and need nothing. */
static int
seg_dma_map(struct trd_vni_svc *s, struct vif *v)
{
	if (s->n_dma_dev == 0)
		return 0;
	if (rte_extmem_register(v->base, v->size, NULL, 0, (size_t)sysconf(_SC_PAGESIZE)) != 0 &&
	    rte_errno != EEXIST)
		return -rte_errno;
	v->extmem = true;
	for (; v->n_mapped < s->n_dma_dev; v->n_mapped++)
		if (rte_dev_dma_map(s->dma_dev[v->n_mapped], v->base, (uint64_t)(uintptr_t)v->base,
				    v->size) != 0)
			return -rte_errno;
	return 0;
}

static void
seg_dma_unmap(struct trd_vni_svc *s, struct vif *v)
{
	while (v->n_mapped > 0) {
		v->n_mapped--;
		rte_dev_dma_unmap(s->dma_dev[v->n_mapped], v->base, (uint64_t)(uintptr_t)v->base,
				  v->size);
	}
	if (v->extmem)
		rte_extmem_unregister(v->base, v->size);
	v->extmem = false;
}

void
svc_vif_unmap(struct trd_vni_svc *s, struct vif *v)
{
	if (v->base != NULL)
		seg_dma_unmap(s, v);
	if (v->mr != NULL)
		trd_mr_deregister(v->mr);
	svc_mu_free(s, v);
	if (v->base != NULL)
		munmap(v->base, v->size);
	if (v->efd >= 0)
		close(v->efd);
	if (v->pidfd >= 0)
		close(v->pidfd);
	svc_vmem_close(v);
	free(v->sbusy);
	free(v->recvs);
	svc_mr_free(v);
	ST(s, RECLAIMED)++;
	VNI_LOG(DEBUG, "%u:%u: interface memory released", v->app, v->proc);
	free(v);
}

/* Build the segment of a new interface. 0 or -errno (with *why). */
/* The CPUs this thread, the one that serves the interfaces, may run on (its lcore's, as EAL
 * pinned it), for the library to keep an unbound process off them (vni_seg.h, engine_cpus).
 * A thread EAL did not make has no lcore cpuset: ask the kernel. */
static void
seg_publish_cpus(struct trd_vni_seg *g)
{
	rte_cpuset_t cpus;

	CPU_ZERO(&cpus);
	rte_thread_get_affinity(&cpus);
	if (CPU_COUNT(&cpus) == 0 &&
	    pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) != 0)
		return;
	for (unsigned int c = 0; c < 64 * TRD_VNI_CPU_WORDS && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cpus))
			g->engine_cpus[c / 64] |= UINT64_C(1) << (c % 64);
}

int
svc_seg_create(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_register *req,
	       const struct trd_vni_sock_mu *mu, int *memfd, const char **why)
{
	uint32_t qsz = rte_align32pow2(req->n_send + req->n_recv + 1);
	uint64_t off = RTE_ALIGN_CEIL(sizeof(struct trd_vni_seg), TRD_VNI_ALIGN);
	uint64_t cmdq_off, cplq_off, sctx_off, rctx_off, ctxr_off, db_off, pool_off, size, mu_len;
	struct trd_vni_seg *g;
	char name[64];
	int fd, rc;

	v->n_send = req->n_send;
	v->n_recv = req->n_recv;
	v->n_db = req->n_doorbells;
	v->short_max = (uint32_t)RTE_MAX(0, req->short_max);
	v->short_max = RTE_MIN(v->short_max, (uint32_t)TRD_VNI_SHORT_MAX);
	v->short_max = RTE_MIN(v->short_max, s->conf.inline_max - TRD_VW_HDR_LEN);
	v->slot = RTE_ALIGN_CEIL(RTE_ALIGN_CEIL(v->short_max, 8) +
					 TRD_VNI_MCAST_MAX * sizeof(struct trd_vni_addr),
				 TRD_VNI_ALIGN);
	v->pool_size = RTE_ALIGN_CEIL(req->pool_size, TRD_VNI_ALIGN);
	v->cmdq_size = v->cplq_size = qsz;

	cmdq_off = off;
	off = RTE_ALIGN_CEIL(off + rte_ring_get_memsize_elem(sizeof(struct trd_vni_cmd), qsz), 64);
	cplq_off = off;
	off = RTE_ALIGN_CEIL(off + rte_ring_get_memsize_elem(sizeof(struct trd_vni_cqe), qsz), 64);
	sctx_off = off;
	off += (uint64_t)v->n_send * sizeof(struct trd_vni_sctx);
	rctx_off = off;
	off += (uint64_t)v->n_recv * sizeof(struct trd_vni_rctx);
	ctxr_off = off;
	off += (uint64_t)v->n_send * v->slot;
	db_off = off;
	off = RTE_ALIGN_CEIL(off + (uint64_t)v->n_db * 8, 4096);
	pool_off = off;
	size = RTE_ALIGN_CEIL(off + v->pool_size, 4096);
	if (mu->n_fifos != 0 || mu->region != 0 || mu->n_rfifos != 0) { /* after the pool (mu.c) */
		rc = svc_mu_layout(s, v, mu, size, &mu_len, why);
		if (rc != 0)
			return rc;
		size += mu_len;
	}

	snprintf(name, sizeof(name), "toroid-vni-%u.%u", v->app, v->proc);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		*why = "memfd_create failed";
		return -errno;
	}
	/* The application may neither shrink nor grow it: a shrunk file would fault the engine. */
	if (ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		rc = -errno;
		close(fd);
		*why = "cannot size or seal the segment";
		return rc;
	}
	v->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (v->base == MAP_FAILED) {
		rc = -errno;
		v->base = NULL;
		close(fd);
		*why = "cannot map the segment";
		return rc;
	}
	v->size = size;
	g = v->seg = (struct trd_vni_seg *)v->base;
	g->magic = TRD_VNI_SEG_MAGIC;
	g->version = TRD_VNI_SEG_VERSION;
	g->hdr_size = sizeof(*g);
	g->size = size;
	g->probe_waiting = TRD_VNI_PROBE_VALID; /* nothing waits yet (rx_pvt.h keeps it) */
	g->app = v->app;
	g->proc = v->proc;
	g->n_send = v->n_send;
	g->n_recv = v->n_recv;
	g->n_doorbells = v->n_db;
	g->short_max = v->short_max;
	g->slot_size = v->slot;
	g->cmdq_size = qsz;
	g->cplq_size = qsz;
	g->cmdq_off = cmdq_off;
	g->cplq_off = cplq_off;
	g->sctx_off = sctx_off;
	g->rctx_off = rctx_off;
	g->ctxr_off = ctxr_off;
	g->ctxr_size = (uint64_t)v->n_send * v->slot;
	g->pool_off = pool_off;
	g->pool_size = v->pool_size;
	g->db_off = db_off;
	g->node[0] = s->coord.x;
	g->node[1] = s->coord.y;
	g->node[2] = s->coord.z;
	memcpy(g->dims, trd_node_torus(s->node)->dim, sizeof(g->dims));
	snprintf(g->node_name, sizeof(g->node_name), "%s", trd_node_name(s->node));
	seg_publish_cpus(g);
	v->cmdq = (struct rte_ring *)(v->base + cmdq_off);
	v->cplq = (struct rte_ring *)(v->base + cplq_off);
	if (rte_ring_init(v->cmdq, "vni_cmd", qsz, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0 ||
	    rte_ring_init(v->cplq, "vni_cpl", qsz, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
		close(fd);
		*why = "cannot make the queues";
		return -EINVAL;
	}
	v->sctx = (struct trd_vni_sctx *)(v->base + sctx_off);
	v->rctx = (struct trd_vni_rctx *)(v->base + rctx_off);
	v->ctxr = v->base + ctxr_off;
	v->pool = v->base + pool_off;
	v->db = (volatile uint64_t *)(v->base + db_off);
	rc = seg_dma_map(s, v);
	if (rc != 0) {
		close(fd);
		*why = "cannot DMA-map the segment for the node's NIC (IOMMU)";
		return rc;
	}
	if (v->pool_size != 0) {
		v->mr = trd_mr_register(s->node, v->pool, v->pool_size, TRD_ACCESS_REMOTE_WRITE);
		if (v->mr == NULL) {
			rc = -rte_errno;
			close(fd);
			*why = "no free memory region on the node";
			return rc;
		}
	}
	rc = svc_mu_create(s, v, why);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	*memfd = fd;
	return 0;
}
