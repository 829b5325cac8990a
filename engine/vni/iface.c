/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, the interface: its queues. The engine's end of an interface's shared queues
 * (rte_ring's layout, the engine's own indices): the commands taken from it (the dispatcher
 * hands each to its state machine, which reads its context once and checks it before any
 * field takes part in an address), the completions written back, the doorbells, and the
 * eventfd signals to the processes that sleep.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_common.h>

#include "iface_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* the shared queues and tables */

/* The engine's end of the queues. rte_ring's layout is kept (the application uses DPDK's
 * inline enqueue and dequeue), but the ring's size is the engine's copy and its index the
 * engine's own; from the header only the other side's index is read, once, and a count it
 * implies above the ring's capacity means the queue is broken. */
int
svc_cmdq_take(struct vif *v, struct trd_vni_cmd *out, unsigned int max)
{
	struct rte_ring *r = v->cmdq;
	const uint64_t *slots = (const uint64_t *)(const void *)&r[1];
	uint32_t prod = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - v->cmd_cons, mask = v->cmdq_size - 1;

	if (avail > mask) /* more than the capacity (size - 1): the header was overwritten */
		return -EPROTO;
	if (avail == 0)
		return 0;
	avail = RTE_MIN(avail, max);
	for (uint32_t i = 0; i < avail; i++) {
		uint64_t w = ((const volatile uint64_t *)slots)[(v->cmd_cons + i) & mask];

		memcpy(&out[i], &w, sizeof(w));
	}
	v->cmd_cons += avail;
	__atomic_store_n(&r->cons.head, v->cmd_cons, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cons.tail, v->cmd_cons, __ATOMIC_RELEASE);
	return (int)avail;
}

static int
cplq_put(struct vif *v, const struct trd_vni_cqe *e)
{
	struct rte_ring *r = v->cplq;
	struct trd_vni_cqe *slots = (struct trd_vni_cqe *)(void *)&r[1];
	uint32_t cons = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t mask = v->cplq_size - 1;

	if (v->cpl_prod - cons >= mask) /* full (cannot be), or the header was overwritten */
		return -ENOSPC;
	slots[v->cpl_prod & mask] = *e;
	v->cpl_prod++;
	__atomic_store_n(&r->prod.head, v->cpl_prod, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod.tail, v->cpl_prod, __ATOMIC_RELEASE);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* completions */

/* An entry that is not a completion (TRD_VNI_CQE_CMA): no statistics, no doorbell. */
void
svc_vif_cqe_raw(struct trd_vni_svc *s, struct vif *v, uint16_t kind, uint32_t idx, uint32_t len,
		uint64_t tag, uint32_t app, uint32_t proc, uint64_t data)
{
	struct trd_vni_cqe e = {.kind = kind,
				.idx = idx,
				.len = len,
				.tag = tag,
				.peer_app = app,
				.peer_proc = proc,
				.data = data};

	if (v->dead)
		return;
	if (cplq_put(v, &e) != 0 && !v->broken) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: completion queue full or damaged: interface closed",
			v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR);
	}
	v->wake = true;
	s->wake_any = true;
}

void
svc_vif_cqe(struct trd_vni_svc *s, struct vif *v, uint16_t kind, uint32_t idx, int32_t status,
	    uint32_t len, uint64_t tag, uint32_t app, uint32_t proc, bool doorbell, uint32_t db,
	    uint64_t data, unsigned int cflags)
{
	struct trd_vni_cqe e = {.kind = kind,
				.idx = idx,
				.status = status,
				.len = len,
				.tag = tag,
				.peer_app = app,
				.peer_proc = proc,
				.data = data,
				.flags = (uint16_t)(cflags & TRD_VNI_CQE_DATA)};

	if (kind == TRD_VNI_CPL_COLL) {
		/* counted by coll.c */
	} else if (kind >= TRD_VNI_CPL_WRITE) {
		ST(s, RMA_DONE)++;
	} else if (kind == TRD_VNI_CPL_SEND) {
		ST(s, TX_DONE)++;
		if (status == 0) {
			ST(s, TX_BYTES) += len;
			v->tx_msgs++;
			v->tx_bytes += len;
		}
	} else if (!(cflags & SVC_CQE_PROBE)) {
		ST(s, RX_DONE)++;
		if (status == 0) {
			ST(s, RX_BYTES) += len;
			v->rx_msgs++;
			v->rx_bytes += len;
		}
	}
	if (status != 0 && !(cflags & SVC_CQE_PROBE))
		ST(s, ERRORS)++;
	if (v->dead)
		return;
	__atomic_store_n(&v->seg->tx_msgs, v->tx_msgs, __ATOMIC_RELAXED);
	__atomic_store_n(&v->seg->tx_bytes, v->tx_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&v->seg->rx_msgs, v->rx_msgs, __ATOMIC_RELAXED);
	__atomic_store_n(&v->seg->rx_bytes, v->rx_bytes, __ATOMIC_RELAXED);
	if (doorbell && db < v->n_db)
		__atomic_store_n(&v->db[db], v->db[db] + 1, __ATOMIC_RELEASE);
	/* The queue holds one entry per context, so it cannot be full: a failure means the
	 * application broke its own queue. */
	if (cplq_put(v, &e) != 0 && !v->broken) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: completion queue full or damaged: interface closed",
			v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR); /* seen as a hang-up at the next socket look */
	}
	v->wake = true;
	s->wake_any = true;
}

/* After a round: signal the processes that sleep and got completions. */
void
svc_vif_wake_all(struct trd_vni_svc *s)
{
	bool fenced = false;

	if (!s->wake_any)
		return;
	s->wake_any = false;
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		const uint64_t one = 1;

		if (v == NULL || !v->wake)
			continue;
		v->wake = false;
		if (v->dead)
			continue;
		if (!fenced) {
			/* completions were queued, then app_armed is read: pairs with the
			 * application's store of app_armed followed by its look at the queue */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			fenced = true;
		}
		if (__atomic_load_n(&v->seg->app_armed, __ATOMIC_SEQ_CST) &&
		    __atomic_exchange_n(&v->seg->app_armed, 0, __ATOMIC_SEQ_CST)) {
			if (write(v->efd, &one, sizeof(one)) == sizeof(one))
				ST(s, WAKEUPS)++;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* finding an interface */

/* The live interface of process (@p app, @p proc), or NULL. */
struct vif *
svc_vif_find(struct trd_vni_svc *s, uint32_t app, uint32_t proc)
{
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead && v->app == app && v->proc == proc)
			return v;
	}
	return NULL;
}
