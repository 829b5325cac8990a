/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, transmit between two processes of this engine: a granted message's bytes copied
 * by the engine from the sender's memory or pool into the receiver's (staging, its pool, or its
 * memory), or read by the receiving process itself (CMA: the request, its answer, the offer
 * withdrawn). A message waiting for that answer is off the scheduler's rotation (TX_CMA).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "iface_pvt.h"
#include "rx_pvt.h"
#include "tx_pvt.h"
#include "vmem_pvt.h"

/* The message's bytes [off, off + n) into @p buf: read from the process's memory through its
 * mem descriptor (checked readable: vmem.c), or copied from its pool. */
int
svc_tx_read(struct trd_vni_svc *s, struct vtx *t, void *buf, uint32_t n)
{
	int rc;

	if (!t->uaddr) {
		memcpy(buf, t->src + t->off, n);
		ST(s, COPY_TX_POOL) += n;
		return 0;
	}
	rc = svc_vmem_read(t->vif, buf, t->laddr + t->off, n);
	if (rc != 0) /* -ENOMEM: the engine is short of memory, not the process at fault */
		return rc == -ECONNRESET || rc == -ENOMEM ? rc : -EFAULT;
	ST(s, COPY_TX_USER) += n;
	return 0;
}

/* The sender's memory could not be read: the message fails (its receiver hears ABORT). */
int
svc_tx_fault(struct trd_vni_svc *s, struct vtx *t, int rc)
{
	ST(s, MSG_FAULTS)++;
	t->status = rc;
	svc_tx_set_state(s, t, TX_ABORT);
	return 0;
}

/* Where a grant of this engine into engine memory puts byte @p off: staging, or the pool of a
 * receive (NULL: into process memory, or its process died). */
static uint8_t *
grant_mem(struct trd_vni_svc *s, const struct vrx *x, uint32_t off)
{
	if (x->soff >= 0)
		return s->stage_mem + x->soff + off;
	if (x->recv != NULL && !x->fifo && !x->vif->dead)
		return x->vif->pool + x->recv->buf + off;
	return NULL;
}

/* May the receiving process read message @p t into its receive itself (@p x: granted into
 * its memory)? Both processes on this engine and in its pid namespace (the pid it names is
 * the sender's), alive, the message long and in the sender's
 * memory, both ranges mapped as they must be (else the engine's copy reports the fault), the
 * receiver not refused by the kernel before, and a free entry in each of its queues (the
 * completion queue, and the command queue): the request and its answer are one more than
 * its contexts account for. Cancels can still fill the command queue: the library then
 * keeps the answer and sends it at its next poll. */
static bool
cma_ok(const struct vtx *t, const struct vrx *x)
{
	const struct vif *rv = x->vif;
	const struct vrecv *r = x->recv;

	return t->uaddr && t->off == 0 && t->len >= SVC_CMA_MIN && r != NULL && r->vaddr &&
	       !r->cma_out && x->fault == 0 && !rv->dead && !rv->cma_off && !t->vif->dead &&
	       t->vif->pid > 0 && t->vif->pidfd >= 0 && t->vif->pidns_same && rv->pidns_same &&
	       rv->mem_fd >= 0 &&
	       rv->cma_out + 1 < RTE_MIN(rv->cplq_size, rv->cmdq_size) - rv->n_send - rv->n_recv &&
	       svc_vmem_check(t->vif, t->laddr, t->len, false) == 0 &&
	       svc_vmem_check(rv, r->buf, t->len, true) == 0;
}

/* Message @p t waits for its receiving process's answer to a CMA request (svc_tx_cma_answered)
 * out of the scheduler's rotation, so that the engine may sleep meanwhile; at the latest when
 * the request may be withdrawn (cma_wait_us), it looks again (tx_data_local). */
static void
cma_park(struct trd_vni_svc *s, struct vtx *t)
{
	t->due = RTE_MAX(s->now, t->cma_since + s->conf.cma_wait_us);
	if (t->due == s->now)
		t->due += s->conf.cma_wait_us; /* taken: the answer comes (or the grant ends) */
	svc_tx_set_state(s, t, TX_CMA);
}

void
svc_tx_cma_answered(struct trd_vni_svc *s, const struct vrx *x)
{
	struct vtx *t = x->src_rank == s->rank ? svc_tx_lookup(s, x->src_msg) : NULL;

	if (t != NULL && t->key == x->src_key && t->state == TX_CMA)
		svc_tx_set_state(s, t, TX_DATA);
}

/* Ask the receiving process to read message @p t into receive @p x itself (process_vm_readv
 * of the sender's pid and address: one copy, by the receiver, as Open MPI's CMA does). The
 * sender's message waits in TX_CMA (cma_park) until the answer (rx.c) or the grant ends. */
static void
cma_request(struct trd_vni_svc *s, struct vtx *t, struct vrx *x)
{
	struct vif *rv = x->vif;
	struct vrecv *r = x->recv;

	__atomic_store_n(&rv->rctx[r->idx].cma, TRD_VNI_CMA_OFFERED, __ATOMIC_RELEASE);
	svc_vif_cqe_raw(s, rv, TRD_VNI_CQE_CMA, r->idx, t->len, (uint64_t)t->vif->pid, t->vif->app,
			t->vif->proc, t->laddr);
	t->cma_since = s->now;
	r->cma_out = true;
	r->cma = x;
	rv->cma_out++;
	x->cma = SVC_CMA_WAIT;
	t->cma = true;
}

/* The next chunk of a message granted by this engine, for a process attached to it: from the
 * sender's memory (or pool) straight into the receiver's, through one buffer, or into staging
 * or the receiver's pool directly: at most two copies, as a TCP loopback makes. The FIN still
 * goes through the node, after every byte was written. A long message between two processes'
 * memories is read by the receiving process itself when it can (cma_ok): one copy. */
int
svc_tx_data_local(struct trd_vni_svc *s, struct vtx *t)
{
	struct vrx *x = svc_rx_lookup(s, t->grant, s->rank, svc_tx_id(t), t->key);
	uint32_t n = RTE_MIN(SVC_LOCAL_CHUNK, t->len - t->off);
	const void *src = t->src == NULL ? NULL : t->src + t->off;
	uint8_t *dst = x == NULL || x->fifo ? NULL : grant_mem(s, x, t->off);
	int rc;

	if (t->cma) {
		if (x != NULL && x->cma == SVC_CMA_WAIT) {
			uint32_t offered = TRD_VNI_CMA_OFFERED;

			/* not taken yet (the receiving process makes no call): withdrawn after
			 * a while, and the engine copies; once taken, it waits for the answer */
			if (s->now - t->cma_since < s->conf.cma_wait_us || x->recv == NULL ||
			    !__atomic_compare_exchange_n(&x->vif->rctx[x->recv->idx].cma, &offered,
							 0, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE)) {
				cma_park(s, t);
				return 0;
			}
			ST(s, CMA_WITHDRAWN)++;
			x->cma = SVC_CMA_FALLBACK;
		}
		t->cma = false;
		if (x != NULL && x->cma == SVC_CMA_DONE) {
			x->cma = SVC_CMA_NONE;
			/* the receiver read the sender's pid and address: only if that is still
			 * the same live process did it read the message */
			if (t->vif->dead || !svc_vmem_same(t->vif, t->laddr))
				return svc_tx_fault(s, t, -ECONNRESET);
			ST(s, COPY_CMA) += t->len;
			ST(s, TX_CHUNKS)++;
			t->off = t->len;
			svc_tx_set_state(s, t, TX_FIN);
			return 0;
		}
		/* it could not (or its grant ended: the FIN hears why): the engine copies */
		if (x != NULL)
			x->cma = SVC_CMA_NONE;
	} else if (x != NULL && x->fifo && cma_ok(t, x)) {
		cma_request(s, t, x);
		cma_park(s, t);
		return 0;
	}

	if (dst != NULL) {
		/* staging or a pool: one read of the sender's memory, straight there */
		rc = svc_tx_read(s, t, dst, n);
		if (rc != 0)
			return svc_tx_fault(s, t, rc);
		x->direct = true;
	} else if (x != NULL && x->fifo) {
		if (t->uaddr) {
			if (s->bounce == NULL)
				s->bounce = malloc(SVC_LOCAL_CHUNK);
			if (s->bounce == NULL)
				return -EAGAIN;
			rc = svc_vmem_read(t->vif, s->bounce, t->laddr + t->off, n);
			if (rc != 0)
				return svc_tx_fault(s, t, rc == -ECONNRESET ? rc : -EFAULT);
			ST(s, COPY_TX_USER) += n;
			src = s->bounce;
		}
		svc_rx_data(s, x, t->off, src, n);
	}
	/* else the grant ended (its process died): the FIN hears why */
	s->round_copied += n;
	ST(s, TX_CHUNKS)++;
	t->off += n;
	if (t->off == t->len)
		svc_tx_set_state(s, t, TX_FIN);
	return 0;
}
