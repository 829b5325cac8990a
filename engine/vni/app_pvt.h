/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni's private header: the handle and the helpers its files share.
 *   app.c      attach, detach, the pool, posting sends and receives, completions
 *   app_rma.c  one-sided access: memory regions, writes, reads, atomics
 *   app_coll.c collectives computed by the engines
 *   app_mu.c   messaging-unit objects: injection FIFOs of engine descriptors, counters, region
 */
#ifndef TRD_VNI_APP_PVT_H
#define TRD_VNI_APP_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/vni.h>

#include "vni_alloc.h"
#include "vni_seg.h"

struct client_ctx {
	bool busy;  /* receive: posted, not yet completed */
	bool claim; /* receive: a claim (PROBE|CLAIM): the handle comes in the context */
	uint64_t cookie;
	void *buf;
	size_t cap;               /* receive: the buffer's bytes */
	struct trd_vni_addr peer; /* send: destination */
	uint32_t cma_owed;        /* receive: the answer (op) to a CMA request that the full command
				   * queue did not take: sent again at each poll until it goes */
};

struct trd_vni {
	int sock, efd, kick_fd;
	int ctr_fd; /* its counter block's memfd (version 5), until vnic_mu_attach() maps it */
	uint8_t *base;
	size_t size;
	struct trd_vni_seg *seg;
	struct rte_ring *cmdq, *cplq;
	struct trd_vni_sctx *sctx;
	struct trd_vni_rctx *rctx;
	uint8_t *ctxr;
	uint8_t *pool;
	volatile uint64_t *db;
	struct trd_vni_heap heap;
	struct client_ctx *sc, *rc;
	uint32_t *sfree, *rfree; /* stacks of free context indices */
	uint32_t n_sfree, n_rfree;
	unsigned int pending;
	unsigned int n_owed; /* receives with a CMA answer owed (client_ctx::cma_owed) */
	bool dead;
	bool kick_owed;   /* a receive posted without a kick (vnic_post_quiet) */
	bool ordered;     /* conf.ordered: every unicast send is TRD_VNI_SF_ORDERED */
	uint64_t spin_ns; /* conf.wait_spin_us: trd_vni_wait() polls this long first */
	unsigned int
		spin_skip;        /* trd_vni_wait() calls left that sleep at once: a yield of the
				   * spin gave the CPU to another process for longer than the window */
	struct trd_vni_addr self; /* the identity the engine gave (its answer) */
	/* messaging-unit objects (app_mu.c), version 5: none when mu is NULL */
	const struct trd_vni_mu *mu;
	struct rte_ring *inj[TRD_VNI_MU_FIFOS_MAX];
	uint32_t n_inj, inj_slots, mu_inline_max;
	uint16_t ctr_base;
	volatile int64_t *ctrs; /* the node's counters of this process's block, mapped */
	uint8_t *region;
	uint64_t region_len, region_key;
	/* reception FIFOs (version 6): the engine fills them, the process empties them */
	struct rte_ring *rx[TRD_VNI_MU_RFIFOS_MAX];
	uint32_t n_rx, rx_slots;
	uint32_t rx_peek[TRD_VNI_MU_RFIFOS_MAX]; /* past what trd_vni_rfifo_poll() handed out */
	uint32_t rx_rel[TRD_VNI_MU_RFIFOS_MAX];  /* ... and what was given back */
	bool rx_bad[TRD_VNI_MU_RFIFOS_MAX];      /* held something the engine never wrote */
	uint8_t rx_id[TRD_VNI_MU_RFIFOS_MAX];
	int rx_fd[TRD_VNI_MU_RFIFOS_MAX]; /* each one's eventfd (-1: none) */
};

uint64_t vnic_now_ms(void);
/* What vnic_wait() waits for: take() says > 0 (taken: the result), < 0 (an error) or 0
 * (nothing yet); busy(), after the interface was armed, whether something came meanwhile. */
struct vnic_waiter {
	int (*take)(struct trd_vni *v, void *arg);
	bool (*busy)(const struct trd_vni *v, void *arg);
	void *arg;
	int fd;                   /* the eventfd the engine signals once ... */
	volatile uint32_t *armed; /* ... it finds this word set (it clears it) */
};
/* Take with @p w, polling for the interface's spin window, then sleeping on its eventfd
 * (armed): take()'s result, -ETIMEDOUT (@p timeout_ms, < 0: none), -ECONNRESET, -errno. */
int vnic_wait(struct trd_vni *v, const struct vnic_waiter *w, int timeout_ms);
/* Wake the engine if it sleeps (after something was queued for it). */
void vnic_kick(struct trd_vni *v);
/* app.c: the kick a quietly posted receive owes (kick_owed), if any, unless the engine took
 * every command meanwhile. */
void vnic_kick_owed(struct trd_vni *v);
/* app_mu.c: the messaging-unit part of a request from @p conf: 1 (asked for), 0 (none: a
 * version 4 request), -EINVAL (bad sizes or no conf) */
int vnic_mu_request(const struct trd_vni_conf *conf, struct trd_vni_sock_mu *req);
/* app_mu.c: check and map the messaging-unit objects the engine laid out (with v->ctr_fd,
 * closed here); unmap them. 0 or -EPROTO. */
int vnic_mu_attach(struct trd_vni *v);
void vnic_mu_detach(struct trd_vni *v);
uint64_t vnic_now_ns(void);
/* Queue command @p op for context @p idx and kick the engine if it sleeps: 0 or -EAGAIN. */
int vnic_post(struct trd_vni *v, uint32_t op, uint32_t idx);
/* 0, or -ECONNRESET once the engine stopped serving @p v. */
int vnic_check_live(const struct trd_vni *v);
/* app_coll.c: the collective of a handle (trd_comb_post(), TRD_VNI_CF_MU): @p c as the engine
 * takes it (flags set here), posted in a send context of its own (*idx) that no completion
 * frees; vnic_coll_mu_ended() tells whether the engine ended it, and then frees the context. */
int vnic_coll_mu(struct trd_vni *v, const struct trd_vni_cctx *c, uint32_t *idx);
bool vnic_coll_mu_ended(struct trd_vni *v, uint32_t idx);
/* Is @p doorbell -1 or a doorbell of @p v? */
int vnic_db_ok(const struct trd_vni *v, int doorbell);
/* app_mu.c, reception FIFO @p k: read the messages from ring position *@p at up to @p end
 * (at most @p n; padding passed over) into @p msgs, their data in place, and move *@p at
 * past them: the count, or -EPROTO; *@p bad set at a header the engine never wrote (*@p at
 * stops there) */
int vnic_rfifo_walk(const struct trd_vni *v, unsigned int k, uint32_t *at, uint32_t end,
		    struct trd_msg *msgs, unsigned int n, bool *bad);
/* ... the ring position the engine has written up to */
uint32_t vnic_rfifo_end(const struct trd_vni *v, unsigned int k);
/* ... arm its eventfd: -EBUSY if the engine has written past @p pos already (still armed) */
int vnic_rfifo_arm_at(struct trd_vni *v, unsigned int k, uint32_t pos);
void vnic_rfifo_disarm(struct trd_vni *v, unsigned int k);

#endif /* TRD_VNI_APP_PVT_H */
