/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress and completions of the endpoint (tfi_ep.c): the pool of posted operations (struct
 * tfi_op, whose address is the VNI cookie), the poll of the VNI that turns its completions into
 * CQ entries and counter reports, the flush of a dead interface, and whether a poll that keeps
 * finding nothing should give its CPU away (docs/libfabric.md, "Waiting and the CPU").
 *
 * A receive completes here: the message, delivered into a pool buffer, is scattered into the
 * application's iovs; so is a read gathered into a bounce buffer (tfi_rma.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tfi.h"

#define TFI_POLL_BURST 32
#define TFI_IDLE_CHECK 4096 /* empty polls between two looks at the engine's state */
#define TFI_RUNQ_MS    10   /* how often the host's runnable count is read again */

/* A chunk of TFI_OPS_CHUNK operations more, on the free list: 0 or -1. */
static int
ops_grow(struct tfi_ep *ep)
{
	struct tfi_op **more, *chunk;

	if (tfi_op_total(ep) + TFI_OPS_CHUNK > TFI_OPS_MAX)
		return -1;
	more = realloc(ep->more, (ep->n_more + 1) * sizeof(*more));
	if (more == NULL)
		return -1;
	ep->more = more;
	chunk = calloc(TFI_OPS_CHUNK, sizeof(*chunk));
	if (chunk == NULL)
		return -1;
	ep->more[ep->n_more++] = chunk;
	for (unsigned int i = TFI_OPS_CHUNK; i-- > 0;) {
		chunk[i].next = ep->free_ops;
		ep->free_ops = &chunk[i];
	}
	return 0;
}

unsigned int
tfi_op_total(const struct tfi_ep *ep)
{
	return ep->n_ops + ep->n_more * TFI_OPS_CHUNK;
}

struct tfi_op *
tfi_op_nth(const struct tfi_ep *ep, unsigned int i)
{
	if (i < ep->n_ops)
		return &ep->ops[i];
	i -= ep->n_ops;
	return &ep->more[i / TFI_OPS_CHUNK][i % TFI_OPS_CHUNK];
}

/* Is @p op within the @p n operations from @p base (compared as addresses)? */
static bool
op_within(const struct tfi_op *op, const struct tfi_op *base, size_t n)
{
	uintptr_t p = (uintptr_t)op, b = (uintptr_t)base;

	return p >= b && p < b + n * sizeof(*base) && (p - b) % sizeof(*base) == 0;
}

bool
tfi_op_ours(const struct tfi_ep *ep, const struct tfi_op *op)
{
	if (op_within(op, ep->ops, ep->n_ops))
		return true;
	for (unsigned int k = 0; k < ep->n_more; k++)
		if (op_within(op, ep->more[k], TFI_OPS_CHUNK))
			return true;
	return false;
}

struct tfi_op *
tfi_op_get(struct tfi_ep *ep)
{
	struct tfi_op *op;

	if (ep->free_ops == NULL && ops_grow(ep) != 0)
		return NULL;
	op = ep->free_ops;
	if (op != NULL) {
		ep->free_ops = op->next;
		op->next = NULL;
	}
	return op;
}

void
tfi_op_put(struct tfi_ep *ep, struct tfi_op *op)
{
	if (op->bounce != NULL)
		trd_vni_free(ep->vni, op->bounce);
	free(op->heap);
	op->bounce = op->heap = NULL;
	op->result = NULL;
	op->claim = TFI_CLAIM_NONE;
	op->txq = TFI_TXQ_NONE;
	op->fence = op->rdata = op->has_data = op->early = op->ucancel = false;
	op->kind = TFI_OP_FREE;
	op->next = ep->free_ops;
	ep->free_ops = op;
}

int
tfi_post_rc(struct tfi_ep *ep, int rc)
{
	if (rc == -EAGAIN) {
		tfi_ep_progress(ep);
		return -FI_EAGAIN;
	}
	if (rc == -ECONNRESET) {
		ep->dead = true;
		return -FI_ECONNRESET;
	}
	return rc;
}

/* ---- completions ---- */

static struct tfi_cq *
op_cq(const struct tfi_ep *ep, const struct tfi_op *op)
{
	return op->kind == TFI_OP_RECV ? ep->rxcq : ep->txcq;
}

/* Copy what a completed operation brings into the application's buffers: a message or a read
 * from its pool buffer into the iovs, a fetching atomic's old value into its result. The
 * operation's status, or -EFAULT when a buffer cannot be written (tfi_copy.c). */
static int
op_deliver(const struct tfi_op *op, int status, size_t len, const uint64_t *data)
{
	if (op->kind == TFI_OP_RECV && !op->peek && (status == 0 || status == -EMSGSIZE) &&
	    op->bounce != NULL) { /* else the engine wrote it there */
		if (len > op->len)
			len = op->len;
		if (tfi_scatter(op->iov, op->iov_n, op->bounce, len) != 0)
			return -EFAULT;
	} else if (status == 0 && op->kind == TFI_OP_READ && op->bounce != NULL) {
		if (tfi_scatter(op->iov, op->iov_n, op->bounce, op->len) != 0)
			return -EFAULT;
	} else if (status == 0 && op->kind == TFI_OP_ATOMIC && op->result != NULL && data != NULL) {
		uint32_t v = (uint32_t)*data;

		if (tfi_copy_out(op->result, op->asize == 4 ? (const void *)&v : (const void *)data,
				 op->asize) != 0)
			return -EFAULT;
	}
	return status;
}

/* Turn one VNI completion (or an abandoned operation, status != 0) into a CQ entry. */
static void
op_complete(struct tfi_ep *ep, struct tfi_op *op, int status, size_t len, struct trd_vni_addr peer,
	    uint64_t tag, const uint64_t *data, uint64_t claim)
{
	struct tfi_cq *cq = op_cq(ep, op);
	struct tfi_cqe e;

	if (op->kind == TFI_OP_COLL) {
		tfi_coll_complete(ep, op, status);
		return;
	}
	if (op->rdata) { /* tfi_txq.c: a remote CQ data notice */
		tfi_rdata_complete(ep, op, status, len, peer, data);
		return;
	}
	/* tfi_self.c: a receive from any source may have taken a message to itself */
	if (op->kind == TFI_OP_RECV && (op->in_any || op == ep->self_cancel) &&
	    tfi_self_complete(ep, op, status))
		return;
	if (op->early) { /* completed and counted when posted (FI_INJECT_COMPLETE) */
		if (status != 0)
			FI_WARN(&tfi_prov, FI_LOG_EP_DATA,
				"a send of %zu B completed at posting (FI_INJECT_COMPLETE) failed "
				"later: %s\n",
				op->len, strerror(-status));
		tfi_op_put(ep, op);
		return;
	}
	if (op->kind == TFI_OP_WRITE && op->has_data && status == 0 &&
	    (status = tfi_rdata_notice(ep, op)) == 0)
		return; /* the write is done, its notice goes on */
	status = op_deliver(op, status, len, data);
	memset(&e, 0, sizeof(e));
	e.e.op_context = op->context;
	e.src = FI_ADDR_NOTAVAIL;
	if (op->kind == TFI_OP_RECV) {
		e.e.flags = FI_RECV | (op->tagged ? FI_TAGGED : FI_MSG);
		e.e.buf = op->iov_n > 0 ? op->iov[0].iov_base : NULL;
		if (op->claim == TFI_CLAIM_PEEK) {
			ep->claims_posted--;
			if (status == 0) /* room was reserved when it was posted */
				ep->claims[ep->n_claims++] =
					(struct tfi_claim){.context = op->context, .handle = claim};
		}
		if (status == 0 && op->peek) {
			/* the message stays at the engine (or was dropped): nothing is copied */
			e.e.buf = NULL;
			if (ep->caps & FI_SOURCE)
				e.src = tfi_av_reverse(ep->av, peer.app, peer.proc);
		} else if (status == 0 || status == -EMSGSIZE) {
			/* -EMSGSIZE: truncated, the engine delivered the first op->len bytes and
			 * reports the message's whole length: FI_ETRUNC with olen the excess */
			if (status == -EMSGSIZE)
				e.olen = len > op->len ? len - op->len : 0;
			if (len > op->len)
				len = op->len;
			if (ep->caps & FI_SOURCE)
				e.src = tfi_av_reverse(ep->av, peer.app, peer.proc);
		}
		e.e.len = len;
		e.e.tag = op->tagged ? tag : 0;
		if ((status == 0 || status == -EMSGSIZE) && data != NULL) {
			e.e.flags |= FI_REMOTE_CQ_DATA;
			e.e.data = *data;
		}
	} else if (op->kind == TFI_OP_SEND) {
		e.e.flags = FI_SEND | (op->tagged ? FI_TAGGED : FI_MSG);
		e.e.len = op->len;
	} else {
		/* one-sided (tfi_rma.c): a read gathered into a bounce buffer is scattered now;
		 * a fetching atomic hands back the value before the operation */
		e.e.flags = op->cflags;
	}
	if (status != 0) {
		FI_INFO(&tfi_prov, FI_LOG_EP_DATA, "%s %s %zu B, tag %#" PRIx64 ": %s\n",
			op->kind == TFI_OP_RECV    ? "receive"
			: op->kind == TFI_OP_SEND  ? "send"
			: op->kind == TFI_OP_WRITE ? "write"
			: op->kind == TFI_OP_READ  ? "read"
						   : "atomic",
			op->tagged ? "tagged" : "msg", op->len, tag, strerror(-status));
		e.err = tfi_errno(status);
		e.prov_errno = -status;
		/* an older engine also fails a sender whose message was too long for the receive
		 * (today's truncates at the receiver and the sender succeeds) */
		if (op->kind == TFI_OP_SEND && status == -EMSGSIZE)
			e.err = FI_EMSGSIZE;
	}
	/* an inject has no context to report a failure with: it is logged only (and the
	 * application learns of a dead peer at its next operation with a context) */
	if (status != 0 && op->kind != TFI_OP_RECV && op->kind != TFI_OP_SEND)
		FI_WARN(&tfi_prov, FI_LOG_EP_DATA, "%s of %zu B failed: %s\n",
			op->kind == TFI_OP_WRITE  ? "write"
			: op->kind == TFI_OP_READ ? "read"
						  : "atomic",
			op->len, strerror(-status));
	if (cq != NULL && (op->comp || (status != 0 && op->context != NULL)))
		tfi_cq_push(cq, &e);
	else if (status != 0 && op->context == NULL)
		FI_WARN(&tfi_prov, FI_LOG_EP_DATA, "an injected send failed: %s\n",
			strerror(-status));
	if (!op->peek) /* a probe receives nothing: not counted */
		tfi_cntr_report(ep,
				op->kind == TFI_OP_RECV   ? FI_RECV
				: op->kind == TFI_OP_SEND ? FI_SEND
				: (op->cflags & FI_READ)  ? FI_READ /* read, fetching atomic */
							  : FI_WRITE,
				status);
	tfi_op_put(ep, op);
}

void
tfi_send_posted(struct tfi_ep *ep, void *context, bool tagged, size_t len, bool comp)
{
	struct tfi_cqe e;

	if (comp && ep->txcq != NULL) {
		memset(&e, 0, sizeof(e));
		e.e.op_context = context;
		e.e.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
		e.e.len = len;
		e.src = FI_ADDR_NOTAVAIL;
		tfi_cq_push(ep->txcq, &e);
		tfi_cq_kick(ep->txcq); /* made by a post: no engine's eventfd wakes a sleeper */
	}
	tfi_cntr_report(ep, FI_SEND, 0);
}

void
tfi_send_early(struct tfi_ep *ep, struct tfi_op *op)
{
	tfi_send_posted(ep, op->context, op->tagged, op->len, op->comp);
	op->early = true;
	op->comp = false;
	op->context = NULL;
}

static size_t
ep_room(const struct tfi_ep *ep)
{
	size_t room = TFI_POLL_BURST;

	if (ep->txcq != NULL && tfi_cq_room(ep->txcq) < room)
		room = tfi_cq_room(ep->txcq);
	if (ep->rxcq != NULL && tfi_cq_room(ep->rxcq) < room)
		room = tfi_cq_room(ep->rxcq);
	return room;
}

/* The engine closed the interface: every posted operation ends with -FI_ECONNRESET, as far
 * as the CQs have room (the rest at the next progress). */
static void
ep_flush_dead(struct tfi_ep *ep)
{
	struct trd_vni_addr none = {TRD_VNI_ANY, TRD_VNI_ANY};

	for (unsigned int i = 0; i < tfi_op_total(ep); i++) {
		struct tfi_op *op = tfi_op_nth(ep, i);
		struct tfi_cq *cq;

		if (op->kind == TFI_OP_FREE || op->txq != TFI_TXQ_NONE)
			continue; /* held transmits and receives: tfi_txq_progress, _rxq_ */
		cq = op_cq(ep, op);
		if (cq != NULL && tfi_cq_room(cq) == 0)
			continue;
		op_complete(ep, op, -ECONNRESET, 0, none, 0, NULL, 0);
	}
}

static void
ep_handle(struct tfi_ep *ep, const struct trd_vni_cpl *c, int n)
{
	for (int i = 0; i < n; i++) {
		struct tfi_op *op = (struct tfi_op *)(uintptr_t)c[i].cookie;

		/* the cookie is ours (kept in libtoroid_vni's private memory): still, check it */
		if (!tfi_op_ours(ep, op) || op->kind == TFI_OP_FREE)
			continue;
		op_complete(ep, op, c[i].status, c[i].len, c[i].peer, c[i].tag,
			    c[i].has_data ? &c[i].data : NULL, c[i].claim);
	}
}

void
tfi_op_fail(struct tfi_ep *ep, struct tfi_op *op, int status)
{
	struct trd_vni_addr none = {TRD_VNI_ANY, TRD_VNI_ANY};

	tfi_op_done(ep, op, status, 0, none, 0, NULL);
}

void
tfi_op_done(struct tfi_ep *ep, struct tfi_op *op, int status, size_t len, struct trd_vni_addr peer,
	    uint64_t tag, const uint64_t *data)
{
	struct tfi_cq *cq = op_cq(ep, op);

	op_complete(ep, op, status, len, peer, tag, data, 0);
	if (cq != NULL) /* an entry made by a post: no engine's eventfd wakes a sleeper */
		tfi_cq_kick(cq);
}

static void ep_progress_vni(struct tfi_ep *ep);

/* Caller holds the domain lock. */
void
tfi_ep_progress(struct tfi_ep *ep)
{
	ep_progress_vni(ep);
	if (ep->txq_head != NULL || ep->rdata_missing != 0) /* tfi_txq.c */
		tfi_txq_progress(ep);
	if (ep->rxq_head != NULL)
		tfi_rxq_progress(ep);
	if (ep->sp_head != NULL || ep->self_cancel_owed || ep->sdone_head != NULL ||
	    (ep->dead && (ep->srx_head != NULL || ep->sq_head != NULL || ep->sp_head != NULL)))
		tfi_self_progress(ep); /* tfi_self.c */
}

static void
ep_progress_vni(struct tfi_ep *ep)
{
	struct trd_vni_cpl c[TFI_POLL_BURST];
	size_t room;
	int n;

	if (ep->vni == NULL || !ep->enabled)
		return;
	if (ep->dead) {
		ep_flush_dead(ep);
		return;
	}
	/* the placement's measure, for the engine's judgement (toroid-node --idle-us auto) */
	tfi_place_hint(ep->vni);
	room = ep_room(ep);
	if (room == 0)
		return;
	n = trd_vni_poll(ep->vni, c, (unsigned int)room);
	if (n > 0) {
		ep->idle = 0;
		ep->probe_idle = 0;
		ep->probe_misses = 0;
		ep_handle(ep, c, n);
		return;
	}
	if (trd_vni_pending(ep->vni) <= ep->rdata_posted) { /* tfi_txq.c's receives wait */
		ep->idle = 0;
		/* (a probe answered here since is counted again: tfi_msg.c) */
		ep->probe_idle = 0;
		return;
	}
	if (ep->idle < UINT32_MAX)
		ep->idle++;
	if (++ep->check < TFI_IDLE_CHECK)
		return;
	/* Now and then, while operations are outstanding, look whether the engine stopped:
	 * trd_vni_wait() with no time checks the interface's state (and arms its eventfd). */
	ep->check = 0;
	n = trd_vni_wait(ep->vni, c, (unsigned int)room, 0);
	if (n > 0) {
		ep_handle(ep, c, n);
	} else if (n == -ECONNRESET) {
		FI_WARN(&tfi_prov, FI_LOG_EP_DATA, "toroid-node closed the interface of %u:%u\n",
			ep->name.app, ep->name.proc);
		ep->dead = true;
		ep_flush_dead(ep);
	}
}

/* Threads runnable on the host now, the 4th field of /proc/loadavg ("running/total"), read
 * again at most every TFI_RUNQ_MS (one pread); 0 if it cannot be read. It sees what the
 * engine's count cannot: a second engine and its processes, other programs. Endpoints of
 * several domains may ask at once: the shared words are atomic. */
unsigned int
tfi_host_runnable(void)
{
	static int fd = -2;
	static unsigned int last;
	static uint64_t next_ms;
	struct timespec ts;
	unsigned int running = 0;
	uint64_t now;
	char b[128];
	ssize_t n;
	int f, none = -2;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (now < __atomic_load_n(&next_ms, __ATOMIC_RELAXED))
		return __atomic_load_n(&last, __ATOMIC_RELAXED);
	__atomic_store_n(&next_ms, now + TFI_RUNQ_MS, __ATOMIC_RELAXED);
	f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
	if (f == -2) {
		f = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
		if (!__atomic_compare_exchange_n(&fd, &none, f < 0 ? -1 : f, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (f >= 0)
				close(f); /* another thread opened it first */
			f = none;
		}
	}
	if (f >= 0 && (n = pread(f, b, sizeof(b) - 1, 0)) > 0) {
		b[n] = '\0';
		if (sscanf(b, "%*s %*s %*s %u/", &running) != 1)
			running = 0;
	}
	__atomic_store_n(&last, running, __ATOMIC_RELAXED);
	return running;
}

/* Should a poll that found nothing give the CPU away? A poll never sleeps: fi_cq_read,
 * fi_cntr_read (and so MPI_Test) read the completion queue in shared memory and return. But
 * where the engine or the peer it waits for may be waiting for its CPU, an endpoint with
 * operations outstanding yields at each empty poll; where more processes share its CPUs, or
 * only the engine's thread or other programs crowd the host (the host's runnable threads
 * show them), after TFI_SPIN_POLLS empty polls in a row (tfi_yield_decide in tfi_place.c):
 * what Open MPI does when oversubscribed (mpi_yield_when_idle). FI_TOROID_YIELD=always
 * (yield after the spin)|never overrides the guess. Caller holds the domain lock; the caller
 * yields after releasing it. */
bool
tfi_ep_yield_due(const struct tfi_ep *ep)
{
	unsigned int busy, idle;

	if (ep->vni == NULL || !ep->enabled || ep->dead)
		return false;
	/* for the placement's judgement (tfi_place_adapt) too */
	busy = trd_vni_busy_procs(ep->vni);
	if (busy != __atomic_load_n(&tfi_params.engine_procs, __ATOMIC_RELAXED))
		__atomic_store_n(&tfi_params.engine_procs, busy, __ATOMIC_RELAXED);
	if (tfi_params.yield == TFI_YIELD_NEVER)
		return false;
	/* empty polls, or probes answered without the engine (tfi_msg.c) */
	idle = ep->idle > ep->probe_idle ? ep->idle : ep->probe_idle;
	if (tfi_params.yield == TFI_YIELD_ALWAYS)
		return idle >= TFI_SPIN_POLLS;
	/* an engine that does not say: at least this process and the engine's thread */
	return tfi_yield_decide(
		idle, busy != 0 ? busy : 2, __atomic_load_n(&tfi_params.cpus, __ATOMIC_RELAXED),
		__atomic_load_n(&tfi_params.engine_here, __ATOMIC_RELAXED), tfi_host_runnable);
}

/* Arm the VNI's eventfd for fi_trywait. 0, or -FI_EAGAIN (completions are queued). */
int
tfi_ep_arm(struct tfi_ep *ep)
{
	int rc;

	if (ep->vni == NULL || !ep->enabled)
		return 0;
	if (ep->dead)
		return -FI_EAGAIN;
	rc = trd_vni_arm(ep->vni);
	return rc == -EBUSY ? -FI_EAGAIN : rc;
}
