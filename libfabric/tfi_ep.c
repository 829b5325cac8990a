/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FI_EP_RDM endpoint: one VNI of the host's toroid-node, opened by fi_endpoint() under
 * the identity the environment gives (FI_TOROID_APP, FI_TOROID_PROC or the launcher's rank),
 * or under any free process number the engine picks (TRD_VNI_ANY) when there is none or this
 * process's first endpoint holds it already (docs/libfabric.md).
 *
 * Data path (what the VNI API offers today, and the copies it costs):
 *   send      up to the VNI's short threshold (896 B): trd_vni_send() copies the bytes at post
 *             time (gathered first if the message has several iovs); longer: copied into a
 *             pool buffer, sent zero-copy from there, the buffer freed at completion.
 *   receive   posted into a pool buffer as large as the application's (at most max_msg_size),
 *             copied into the application's iovs when fi_cq_read finds its completion.
 *   tags      one 64-bit VNI tag: untagged messages carry TFI_MSG_TAG (bit 63), tagged ones
 *             their tag (bits 0..62). A tagged receive passes its tag and ignore mask to the
 *             engine's matcher (trd_vni_recv_mask), never ignoring bit 63.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tfi.h"

#define TFI_POLL_BURST 32
#define TFI_IDLE_CHECK 4096 /* empty polls between two looks at the engine's state */

/* Flags this provider does not implement on an operation. */
#define TFI_TX_REFUSED                                                                             \
	(FI_MATCH_COMPLETE | FI_FENCE | FI_TRIGGER | FI_MULTICAST)
#define TFI_RX_REFUSED (FI_MULTI_RECV | FI_CLAIM | FI_DISCARD | FI_TRIGGER)

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct tfi_op *
tfi_op_get(struct tfi_ep *ep)
{
	struct tfi_op *op = ep->free_ops;

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
	op->bounce = NULL;
	op->result = NULL;
	op->claim = TFI_CLAIM_NONE;
	op->kind = TFI_OP_FREE;
	op->next = ep->free_ops;
	ep->free_ops = op;
}

static size_t
iov_total(const struct iovec *iov, size_t n)
{
	size_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

static bool
iov_ok(const struct iovec *iov, size_t n)
{
	if (n > TFI_IOV_LIMIT || (n > 0 && iov == NULL))
		return false;
	for (size_t i = 0; i < n; i++)
		if (iov[i].iov_base == NULL && iov[i].iov_len != 0)
			return false;
	return true;
}

static void
gather(void *dst, const struct iovec *iov, size_t n)
{
	uint8_t *d = dst;

	for (size_t i = 0; i < n; i++) {
		if (iov[i].iov_len != 0)
			memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
}

static void
scatter(const struct tfi_op *op, const void *src, size_t len)
{
	const uint8_t *s = src;

	for (size_t i = 0; i < op->iov_n && len > 0; i++) {
		size_t k = op->iov[i].iov_len < len ? op->iov[i].iov_len : len;

		if (k != 0)
			memcpy(op->iov[i].iov_base, s, k);
		s += k;
		len -= k;
	}
}

/* ---- completions ---- */

static struct tfi_cq *
op_cq(const struct tfi_ep *ep, const struct tfi_op *op)
{
	return op->kind == TFI_OP_RECV ? ep->rxcq : ep->txcq;
}

/* Turn one VNI completion (or an abandoned operation, status != 0) into a CQ entry. */
static void
op_complete(struct tfi_ep *ep, struct tfi_op *op, int status, size_t len, struct trd_vni_addr peer,
	    uint64_t tag, const uint64_t *data, uint64_t claim)
{
	struct tfi_cq *cq = op_cq(ep, op);
	struct tfi_cqe e;

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
			scatter(op, op->bounce, len);
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
		if (status == 0 && op->kind == TFI_OP_READ && op->bounce != NULL)
			scatter(op, op->bounce, op->len);
		if (status == 0 && op->kind == TFI_OP_ATOMIC && op->result != NULL && data != NULL) {
			if (op->asize == 4) {
				uint32_t v = (uint32_t)*data;

				memcpy(op->result, &v, 4);
			} else {
				memcpy(op->result, data, 8);
			}
		}
	}
	if (status != 0) {
		FI_INFO(&tfi_prov, FI_LOG_EP_DATA, "%s %s %zu B, tag %#" PRIx64 ": %s\n",
			op->kind == TFI_OP_RECV	    ? "receive"
			: op->kind == TFI_OP_SEND   ? "send"
			: op->kind == TFI_OP_WRITE  ? "write"
			: op->kind == TFI_OP_READ   ? "read"
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
			op->kind == TFI_OP_WRITE ? "write" : op->kind == TFI_OP_READ ? "read" : "atomic",
			op->len, strerror(-status));
	if (cq != NULL && (op->comp || (status != 0 && op->context != NULL)))
		tfi_cq_push(cq, &e);
	else if (status != 0 && op->context == NULL)
		FI_WARN(&tfi_prov, FI_LOG_EP_DATA, "an injected send failed: %s\n",
			strerror(-status));
	if (!op->peek) /* a probe receives nothing: not counted */
		tfi_cntr_report(ep,
				op->kind == TFI_OP_RECV	  ? FI_RECV
				: op->kind == TFI_OP_SEND ? FI_SEND
				: (op->cflags & FI_READ)  ? FI_READ /* read, fetching atomic */
							  : FI_WRITE,
				status);
	tfi_op_put(ep, op);
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

	for (unsigned int i = 0; i < ep->n_ops; i++) {
		struct tfi_op *op = &ep->ops[i];
		struct tfi_cq *cq;

		if (op->kind == TFI_OP_FREE)
			continue;
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
		if (op < ep->ops || op >= ep->ops + ep->n_ops || op->kind == TFI_OP_FREE)
			continue;
		op_complete(ep, op, c[i].status, c[i].len, c[i].peer, c[i].tag,
			    c[i].has_data ? &c[i].data : NULL, c[i].claim);
	}
}

/* Caller holds the domain lock. */
void
tfi_ep_progress(struct tfi_ep *ep)
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
	room = ep_room(ep);
	if (room == 0)
		return;
	n = trd_vni_poll(ep->vni, c, (unsigned int)room);
	if (n > 0) {
		ep->idle = 0;
		ep->idle_since = 0;
		ep_handle(ep, c, n);
		return;
	}
	if (ep->idle_since == 0 && trd_vni_pending(ep->vni) > 0)
		ep->idle_since = now_ns();
	if (++ep->idle < TFI_IDLE_CHECK || trd_vni_pending(ep->vni) == 0)
		return;
	/* Now and then, while operations are outstanding, look whether the engine stopped:
	 * trd_vni_wait() with no time checks the interface's state (and arms its eventfd). */
	ep->idle = 0;
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

/* An fi_cq_read that found nothing naps when operations have been outstanding without a
 * completion for spin_us: on a machine with fewer CPUs than busy threads, spinning
 * processes starve toroid-node (and each other), and a sleep on the eventfd the engine
 * signals is then far quicker than spinning. Caller holds the domain lock. */
bool
tfi_ep_nap_due(struct tfi_ep *ep)
{
	return tfi_params.spin_us >= 0 && ep->vni != NULL && ep->enabled && !ep->dead &&
	       ep->idle_since != 0 && trd_vni_pending(ep->vni) > 0 &&
	       now_ns() - ep->idle_since >= (uint64_t)tfi_params.spin_us * 1000;
}

/* Sleep on the VNI's eventfd for at most nap_us; called without the domain lock. */
void
tfi_ep_nap(struct tfi_ep *ep)
{
	struct timespec ts = {.tv_sec = tfi_params.nap_us / 1000000,
			      .tv_nsec = (long)(tfi_params.nap_us % 1000000) * 1000};
	struct pollfd pf = {.fd = trd_vni_fd(ep->vni), .events = POLLIN};
	uint64_t cnt;

	if (read(pf.fd, &cnt, sizeof(cnt)) < 0) {
		/* EAGAIN: no stale wake-up */
	}
	if (trd_vni_arm(ep->vni) != 0)
		return; /* completions are queued */
	if (ppoll(&pf, 1, &ts, NULL) > 0 && read(pf.fd, &cnt, sizeof(cnt)) < 0) {
		/* another thread took it */
	}
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

/* ---- posting ---- */

int
tfi_post_check(struct tfi_ep *ep)
{
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (ep->dead)
		return -FI_ECONNRESET;
	return 0;
}

static ssize_t
ep_send(struct tfi_ep *ep, const struct iovec *iov, size_t n, fi_addr_t dest, uint64_t vtag,
	bool tagged, void *context, bool comp, bool inject, const uint64_t *data)
{
	uint8_t tmp[TRD_VNI_SHORT_MAX];
	struct trd_vni_addr dst;
	struct tfi_op *op;
	const void *buf;
	size_t total;
	ssize_t rc;

	if (!iov_ok(iov, n))
		return -FI_EINVAL;
	total = iov_total(iov, n);
	if (total > ep->max_msg || (inject && total > tfi_inject_size()))
		return -FI_EMSGSIZE;
	pthread_mutex_lock(&ep->dom->lock);
	rc = tfi_post_check(ep);
	if (rc != 0)
		goto out;
	if (ep->txcq == NULL && !inject) {
		rc = -FI_ENOCQ;
		goto out;
	}
	if (tfi_av_resolve(ep->av, dest, &dst) != 0) {
		rc = -FI_EINVAL;
		goto out;
	}
	op = tfi_op_get(ep);
	if (op == NULL) {
		tfi_ep_progress(ep);
		rc = -FI_EAGAIN;
		goto out;
	}
	op->kind = TFI_OP_SEND;
	op->tagged = tagged;
	op->peek = false;
	op->comp = comp && !inject;
	op->context = inject ? NULL : context;
	op->len = total;
	op->iov_n = 0;
	if (total <= ep->info.short_max) {
		/* copied by trd_vni_send() now */
		if (n == 1) {
			buf = iov[0].iov_base;
		} else {
			gather(tmp, iov, n);
			buf = tmp;
		}
	} else {
		op->bounce = trd_vni_alloc(ep->vni, total);
		if (op->bounce == NULL) {
			tfi_op_put(ep, op);
			tfi_ep_progress(ep);
			rc = -FI_EAGAIN;
			goto out;
		}
		gather(op->bounce, iov, n);
		buf = op->bounce;
	}
	if (data != NULL)
		rc = trd_vni_senddata(ep->vni, dst, vtag, *data, buf, total, -1,
				      (uint64_t)(uintptr_t)op);
	else
		rc = trd_vni_send(ep->vni, dst, vtag, buf, total, -1, (uint64_t)(uintptr_t)op);
	if (rc != 0) {
		tfi_op_put(ep, op);
		if (rc == -EAGAIN) {
			tfi_ep_progress(ep);
			rc = -FI_EAGAIN;
		} else if (rc == -ECONNRESET) {
			ep->dead = true;
			rc = -FI_ECONNRESET;
		}
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

/* The claimed message that @p context names (FI_PEEK | FI_CLAIM with that context), or -1. */
static ssize_t
claim_find(const struct tfi_ep *ep, const void *context)
{
	for (size_t i = 0; i < ep->n_claims; i++)
		if (ep->claims[i].context == context)
			return (ssize_t)i;
	return -1;
}

/* Room for one more claim: every FI_PEEK | FI_CLAIM posted can record its answer. */
static int
claim_reserve(struct tfi_ep *ep)
{
	size_t need = ep->n_claims + ep->claims_posted + 1;

	if (need > ep->cap_claims) {
		size_t cap = ep->cap_claims ? 2 * ep->cap_claims : 16;
		struct tfi_claim *c;

		while (cap < need)
			cap *= 2;
		c = realloc(ep->claims, cap * sizeof(*c));
		if (c == NULL)
			return -FI_ENOMEM;
		ep->claims = c;
		ep->cap_claims = cap;
	}
	return 0;
}

static ssize_t ep_recv_claim(struct tfi_ep *ep, const struct iovec *iov, size_t n, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, bool tagged, void *context, bool comp,
			     bool peek, enum tfi_claim_kind ck);

static ssize_t
ep_recv(struct tfi_ep *ep, const struct iovec *iov, size_t n, fi_addr_t src, uint64_t tag,
	uint64_t ignore, bool tagged, void *context, bool comp, bool peek)
{
	return ep_recv_claim(ep, iov, n, src, tag, ignore, tagged, context, comp, peek,
			     TFI_CLAIM_NONE);
}

/* A receive; @p peek: a probe (FI_PEEK); @p ck: what it claims or drops. */
static ssize_t
ep_recv_claim(struct tfi_ep *ep, const struct iovec *iov, size_t n, fi_addr_t src, uint64_t tag,
	      uint64_t ignore, bool tagged, void *context, bool comp, bool peek,
	      enum tfi_claim_kind ck)
{
	ssize_t ci = -1;
	struct trd_vni_addr from = {TRD_VNI_ANY, TRD_VNI_ANY};
	uint64_t vtag = TFI_MSG_TAG, vignore = 0;
	struct tfi_op *op;
	size_t cap;
	ssize_t rc;

	if (!iov_ok(iov, n))
		return -FI_EINVAL;
	if (tagged) {
		/* the engine matches with the mask; bit 63 (untagged traffic) is never ignored */
		vignore = ignore & TFI_TAG_BITS;
		vtag = tag & ~vignore;
		if (vtag & ~TFI_TAG_BITS)
			return -FI_EINVAL;
	}
	cap = iov_total(iov, n);
	if (cap > ep->max_msg)
		cap = ep->max_msg; /* no message is longer */
	pthread_mutex_lock(&ep->dom->lock);
	rc = tfi_post_check(ep);
	if (rc != 0)
		goto out;
	if (ep->rxcq == NULL) {
		rc = -FI_ENOCQ;
		goto out;
	}
	/* a claimed message is named by its context: source and tag are not looked at */
	if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC && ck != TFI_CLAIM_RECV &&
	    ck != TFI_CLAIM_DISCARD && tfi_av_resolve(ep->av, src, &from) != 0) {
		rc = -FI_EINVAL;
		goto out;
	}
	if (ck == TFI_CLAIM_RECV || ck == TFI_CLAIM_DISCARD) {
		/* the message that FI_PEEK | FI_CLAIM with this context claimed */
		ci = claim_find(ep, context);
		if (ci < 0) {
			rc = -FI_EINVAL;
			goto out;
		}
	} else if (ck == TFI_CLAIM_PEEK) {
		rc = claim_reserve(ep);
		if (rc != 0)
			goto out;
	}
	op = tfi_op_get(ep);
	if (op == NULL) {
		tfi_ep_progress(ep);
		rc = -FI_EAGAIN;
		goto out;
	}
	op->kind = TFI_OP_RECV;
	op->tagged = tagged;
	op->claim = (uint8_t)ck;
	/* a discard answers like a probe: no data */
	peek = peek || ck == TFI_CLAIM_DISCARD;
	op->peek = peek;
	op->comp = comp || peek; /* a peek always answers */
	op->context = context;
	op->len = cap;
	op->iov_n = n;
	if (n > 0)
		memcpy(op->iov, iov, n * sizeof(*iov));
	if (ck == TFI_CLAIM_PEEK) { /* FI_PEEK is set: answers like a probe */
		rc = trd_vni_claim(ep->vni, from, vtag, vignore, (uint64_t)(uintptr_t)op);
		if (rc == 0)
			ep->claims_posted++;
		goto posted;
	}
	if (ck == TFI_CLAIM_PEEK_DISCARD) {
		rc = trd_vni_discard_first(ep->vni, from, vtag, vignore, (uint64_t)(uintptr_t)op);
		goto posted;
	}
	if (ck == TFI_CLAIM_DISCARD) {
		rc = trd_vni_discard(ep->vni, ep->claims[ci].handle, (uint64_t)(uintptr_t)op);
		goto claimed;
	}
	if (peek) {
		rc = trd_vni_probe(ep->vni, from, vtag, vignore, (uint64_t)(uintptr_t)op);
		goto posted;
	}
	if (cap > 0) {
		op->bounce = trd_vni_alloc(ep->vni, cap);
		if (op->bounce == NULL) {
			tfi_op_put(ep, op);
			tfi_ep_progress(ep);
			rc = -FI_EAGAIN;
			goto out;
		}
	}
	if (ck == TFI_CLAIM_RECV) {
		rc = trd_vni_recv_claimed(ep->vni, ep->claims[ci].handle, op->bounce, cap, -1,
					  (uint64_t)(uintptr_t)op);
		goto claimed;
	}
	rc = trd_vni_recv_mask(ep->vni, from, vtag, vignore, op->bounce, cap, -1,
			       (uint64_t)(uintptr_t)op);
	goto posted;
claimed:
	if (rc == 0) /* the handle is used: the completion tells how it went */
		ep->claims[ci] = ep->claims[--ep->n_claims];
posted:
	if (rc != 0) {
		tfi_op_put(ep, op);
		if (rc == -EAGAIN) {
			tfi_ep_progress(ep);
			rc = -FI_EAGAIN;
		} else if (rc == -ECONNRESET) {
			ep->dead = true;
			rc = -FI_ECONNRESET;
		}
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static struct tfi_ep *
to_ep(struct fid_ep *e)
{
	return container_of(e, struct tfi_ep, ep);
}

bool
tfi_tx_comp(const struct tfi_ep *ep, uint64_t flags)
{
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

static bool
rx_comp(const struct tfi_ep *ep, uint64_t flags)
{
	return !ep->rx_selective || (flags & FI_COMPLETION);
}

/* ---- fi_ops_msg ---- */

static ssize_t
msg_recv(struct fid_ep *e, void *buf, size_t len, void *desc, fi_addr_t src, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return ep_recv(ep, &iov, 1, src, 0, 0, false, context, rx_comp(ep, ep->rx_op_flags), false);
}

static ssize_t
msg_recvv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	  void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return ep_recv(ep, iov, count, src, 0, 0, false, context, rx_comp(ep, ep->rx_op_flags),
		       false);
}

static ssize_t
msg_recvmsg(struct fid_ep *e, const struct fi_msg *msg, uint64_t flags)
{
	struct tfi_ep *ep = to_ep(e);

	if (msg == NULL)
		return -FI_EINVAL;
	if (flags & (TFI_RX_REFUSED | FI_PEEK))
		return -FI_EOPNOTSUPP; /* FI_PEEK is for tagged receives */
	return ep_recv(ep, msg->msg_iov, msg->iov_count, msg->addr, 0, 0, false, msg->context,
		       rx_comp(ep, flags), false);
}

static ssize_t
msg_send(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest,
	 void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return ep_send(ep, &iov, 1, dest, TFI_MSG_TAG, false, context, tfi_tx_comp(ep, ep->tx_op_flags),
		       false, NULL);
}

static ssize_t
msg_sendv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
	  void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return ep_send(ep, iov, count, dest, TFI_MSG_TAG, false, context,
		       tfi_tx_comp(ep, ep->tx_op_flags), false, NULL);
}

static ssize_t
msg_sendmsg(struct fid_ep *e, const struct fi_msg *msg, uint64_t flags)
{
	struct tfi_ep *ep = to_ep(e);

	if (msg == NULL)
		return -FI_EINVAL;
	if (flags & TFI_TX_REFUSED)
		return -FI_EOPNOTSUPP;
	if ((flags & FI_INJECT) && iov_ok(msg->msg_iov, msg->iov_count) &&
	    iov_total(msg->msg_iov, msg->iov_count) > tfi_inject_size())
		return -FI_EMSGSIZE;
	return ep_send(ep, msg->msg_iov, msg->iov_count, msg->addr, TFI_MSG_TAG, false,
		       msg->context, tfi_tx_comp(ep, flags), false,
		       (flags & FI_REMOTE_CQ_DATA) ? &msg->data : NULL);
}

/* Remote CQ data: the VNI's immediate data (trd_vni_senddata), cq_data_size 8. */
static ssize_t
msg_senddata(struct fid_ep *e, const void *buf, size_t len, void *desc, uint64_t data,
	     fi_addr_t dest, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return ep_send(ep, &iov, 1, dest, TFI_MSG_TAG, false, context, tfi_tx_comp(ep, ep->tx_op_flags),
		       false, &data);
}

static ssize_t
msg_injectdata(struct fid_ep *e, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return ep_send(to_ep(e), &iov, 1, dest, TFI_MSG_TAG, false, NULL, false, true, &data);
}

static ssize_t
msg_inject(struct fid_ep *e, const void *buf, size_t len, fi_addr_t dest)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return ep_send(to_ep(e), &iov, 1, dest, TFI_MSG_TAG, false, NULL, false, true, NULL);
}

static struct fi_ops_msg msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};

/* ---- fi_ops_tagged ---- */

static ssize_t
tag_send_check(uint64_t tag)
{
	return (tag & ~TFI_TAG_BITS) ? -FI_EINVAL : 0;
}

static ssize_t
tagged_recv(struct fid_ep *e, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t tag,
	    uint64_t ignore, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return ep_recv(ep, &iov, 1, src, tag, ignore, true, context, rx_comp(ep, ep->rx_op_flags),
		       false);
}

static ssize_t
tagged_recvv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
	     fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return ep_recv(ep, iov, count, src, tag, ignore, true, context,
		       rx_comp(ep, ep->rx_op_flags), false);
}

static ssize_t
tagged_recvmsg(struct fid_ep *e, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct tfi_ep *ep = to_ep(e);

	if (msg == NULL)
		return -FI_EINVAL;
	enum tfi_claim_kind ck = TFI_CLAIM_NONE;

	if (flags & TFI_RX_REFUSED & ~(uint64_t)(FI_CLAIM | FI_DISCARD))
		return -FI_EOPNOTSUPP;
	/* FI_PEEK: a VNI probe; it answers with a completion (FI_ENOMSG error if nothing).
	 * FI_CLAIM and FI_DISCARD (man fi_tagged): with FI_PEEK, claim (or drop) the message
	 * found, the claim kept under msg->context; FI_CLAIM alone receives the message claimed
	 * under msg->context, with FI_DISCARD drops it. */
	switch (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)) {
	case FI_PEEK | FI_CLAIM:
		ck = TFI_CLAIM_PEEK;
		break;
	case FI_PEEK | FI_DISCARD:
		ck = TFI_CLAIM_PEEK_DISCARD;
		break;
	case FI_CLAIM:
		ck = TFI_CLAIM_RECV;
		break;
	case FI_CLAIM | FI_DISCARD:
		ck = TFI_CLAIM_DISCARD;
		break;
	case 0:
	case FI_PEEK:
		break;
	default: /* FI_DISCARD alone, or with both */
		return -FI_EINVAL;
	}
	if (ck != TFI_CLAIM_NONE && msg->context == NULL)
		return -FI_EINVAL; /* a claim is named by its context */
	return ep_recv_claim(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, msg->ignore,
			     true, msg->context, rx_comp(ep, flags), (flags & FI_PEEK) != 0, ck);
}

static ssize_t
tagged_send(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest,
	    uint64_t tag, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(ep, &iov, 1, dest, tag, true, context, tfi_tx_comp(ep, ep->tx_op_flags), false,
		       NULL);
}

static ssize_t
tagged_sendv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
	     fi_addr_t dest, uint64_t tag, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(ep, iov, count, dest, tag, true, context, tfi_tx_comp(ep, ep->tx_op_flags),
		       false, NULL);
}

static ssize_t
tagged_sendmsg(struct fid_ep *e, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct tfi_ep *ep = to_ep(e);

	if (msg == NULL || tag_send_check(msg->tag))
		return -FI_EINVAL;
	if (flags & TFI_TX_REFUSED)
		return -FI_EOPNOTSUPP;
	if ((flags & FI_INJECT) && iov_ok(msg->msg_iov, msg->iov_count) &&
	    iov_total(msg->msg_iov, msg->iov_count) > tfi_inject_size())
		return -FI_EMSGSIZE;
	return ep_send(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, true, msg->context,
		       tfi_tx_comp(ep, flags), false, (flags & FI_REMOTE_CQ_DATA) ? &msg->data : NULL);
}

static ssize_t
tagged_senddata(struct fid_ep *e, const void *buf, size_t len, void *desc, uint64_t data,
		fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(ep, &iov, 1, dest, tag, true, context, tfi_tx_comp(ep, ep->tx_op_flags), false,
		       &data);
}

static ssize_t
tagged_injectdata(struct fid_ep *e, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
		  uint64_t tag)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(to_ep(e), &iov, 1, dest, tag, true, NULL, false, true, &data);
}

static ssize_t
tagged_inject(struct fid_ep *e, const void *buf, size_t len, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(to_ep(e), &iov, 1, dest, tag, true, NULL, false, true, NULL);
}

static struct fi_ops_tagged tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tagged_recv,
	.recvv = tagged_recvv,
	.recvmsg = tagged_recvmsg,
	.send = tagged_send,
	.sendv = tagged_sendv,
	.sendmsg = tagged_sendmsg,
	.inject = tagged_inject,
	.senddata = tagged_senddata,
	.injectdata = tagged_injectdata,
};

/* ---- CM: names ---- */

static int
ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	size_t room;

	if (addrlen == NULL)
		return -FI_EINVAL;
	room = *addrlen;
	*addrlen = sizeof(ep->name);
	if (addr == NULL || room < sizeof(ep->name))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name, sizeof(ep->name));
	return 0;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = tfi_no_setname, /* the name is the VNI's (app, proc): set by environment */
	.getname = ep_getname,
	.getpeer = tfi_no_getpeer,
	.connect = tfi_no_connect,
	.listen = tfi_no_listen,
	.accept = tfi_no_accept,
	.reject = tfi_no_reject,
	.shutdown = tfi_no_shutdown,
	.join = tfi_no_join,
};

/* ---- endpoint ops ---- */

static int
ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	return level == FI_OPT_ENDPOINT ? -FI_ENOPROTOOPT : -FI_EINVAL;
}

static int
ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	return level == FI_OPT_ENDPOINT ? -FI_ENOPROTOOPT : -FI_EINVAL;
}

/* fi_cancel: withdraw the posted receive with @p context (trd_vni_cancel). It completes with
 * an FI_ECANCELED error entry, or normally if a message matched it first. Sends cannot be
 * withdrawn: -FI_ENOENT, as for a context nothing is posted with. */
static ssize_t
ep_cancel(fid_t fid, void *context)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	ssize_t rc = -FI_ENOENT;

	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled || ep->dead) {
		rc = ep->enabled ? -FI_ECONNRESET : -FI_EOPBADSTATE;
		goto out;
	}
	for (unsigned int i = 0; i < ep->n_ops; i++) {
		struct tfi_op *op = &ep->ops[i];
		int r;

		if (op->kind != TFI_OP_RECV || op->peek || op->context != context)
			continue;
		r = trd_vni_cancel(ep->vni, (uint64_t)(uintptr_t)op);
		rc = r == 0 ? 0 : r == -EAGAIN ? -FI_EAGAIN : r == -ENOENT ? -FI_ENOENT : r;
		break;
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t
ep_size_left(struct fid_ep *e)
{
	return -FI_ENOSYS; /* deprecated in libfabric 1.x */
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = tfi_no_tx_ctx,
	.rx_ctx = tfi_no_rx_ctx,
	.rx_size_left = ep_size_left,
	.tx_size_left = ep_size_left,
};

static int
ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	struct tfi_cq *cq;
	struct tfi_av *av;
	int rc = 0;

	if (bfid == NULL)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled) {
		rc = -FI_EOPBADSTATE;
		goto out;
	}
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		av = container_of(bfid, struct tfi_av, av.fid);
		if (av->dom != ep->dom || ep->av != NULL) {
			rc = -FI_EINVAL;
			break;
		}
		ep->av = av;
		av->refs++;
		break;
	case FI_CLASS_CQ:
		cq = container_of(bfid, struct tfi_cq, cq.fid);
		if (cq->dom != ep->dom) {
			rc = -FI_EINVAL;
			break;
		}
		if ((flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
		    !(flags & (FI_TRANSMIT | FI_RECV))) {
			rc = -FI_EBADFLAGS;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->txcq != NULL) ||
		    ((flags & FI_RECV) && ep->rxcq != NULL)) {
			rc = -FI_EINVAL;
			break;
		}
		rc = tfi_cq_attach(cq, ep);
		if (rc == 0)
			rc = tfi_cq_watch(cq, trd_vni_fd(ep->vni));
		if (rc != 0)
			break;
		if (flags & FI_TRANSMIT) {
			ep->txcq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rxcq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		break;
	case FI_CLASS_EQ:
		break; /* RDM over the VNI raises no events: nothing to deliver */
	case FI_CLASS_CNTR:
		rc = tfi_cntr_bind(ep, bfid, flags);
		break;
	default:
		rc = -FI_EINVAL; /* stx/srx contexts are not offered */
		break;
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static int
ep_control(struct fid *fid, int command, void *arg)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	uint64_t *flags = arg;
	int rc = 0;

	pthread_mutex_lock(&ep->dom->lock);
	switch (command) {
	case FI_ENABLE:
		if (ep->av == NULL)
			rc = -FI_ENOAV;
		else if (ep->txcq == NULL && ep->rxcq == NULL)
			rc = -FI_ENOCQ;
		else
			ep->enabled = true;
		break;
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		if (flags == NULL || ((*flags & FI_TRANSMIT) != 0) == ((*flags & FI_RECV) != 0)) {
			rc = -FI_EINVAL;
			break;
		}
		if (command == FI_GETOPSFLAG)
			*flags = (*flags & FI_TRANSMIT) ? (ep->tx_op_flags | FI_TRANSMIT)
							: (ep->rx_op_flags | FI_RECV);
		else if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~(uint64_t)FI_TRANSMIT;
		else
			ep->rx_op_flags = *flags & ~(uint64_t)FI_RECV;
		break;
	default:
		rc = -FI_ENOSYS;
		break;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

/* The identities this process's endpoints hold. A second endpoint whose environment names
 * one of them (Open MPI's OFI BTL next to its OFI MTL, both on the rank) asks for any free
 * process number instead: the peers learn its name from fi_getname(). */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trd_vni_addr *held;
static size_t n_held, cap_held;

static bool
held_has(uint32_t app, uint32_t proc)
{
	for (size_t i = 0; i < n_held; i++)
		if (held[i].app == app && held[i].proc == proc)
			return true;
	return false;
}

/* Under held_lock. 0 or -FI_ENOMEM. */
static int
held_add(struct trd_vni_addr a)
{
	if (n_held == cap_held) {
		size_t cap = cap_held ? 2 * cap_held : 8;
		struct trd_vni_addr *t = realloc(held, cap * sizeof(*t));

		if (t == NULL)
			return -FI_ENOMEM;
		held = t;
		cap_held = cap;
	}
	held[n_held++] = a;
	return 0;
}

static void
held_del(uint32_t app, uint32_t proc)
{
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < n_held; i++)
		if (held[i].app == app && held[i].proc == proc) {
			held[i] = held[--n_held];
			break;
		}
	pthread_mutex_unlock(&held_lock);
}

static int
ep_close(struct fid *fid)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	struct tfi_domain *d = ep->dom;

	pthread_mutex_lock(&d->lock);
	if (ep->txcq != NULL)
		tfi_cq_detach(ep->txcq, ep);
	if (ep->rxcq != NULL && ep->rxcq != ep->txcq)
		tfi_cq_detach(ep->rxcq, ep);
	if (ep->av != NULL)
		ep->av->refs--;
	for (struct tfi_ep **pp = &d->eps; *pp != NULL; pp = &(*pp)->dnext)
		if (*pp == ep) {
			*pp = ep->dnext;
			break;
		}
	tfi_cntr_ep_close(ep);
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	trd_vni_close(ep->vni); /* the engine drops what is still posted, and claimed */
	held_del(ep->name.app, ep->name.proc);
	free(ep->claims);
	free(ep->ops);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = tfi_no_ops_open,
};

/* The first of the launcher's variables @p a, @p b that holds a number >= @p min below
 * TRD_VNI_ANY, or -1. */
static long
env_launcher(const char *a, const char *b, long min)
{
	const char *const names[] = {a, b};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *s = getenv(names[i]);
		char *end;
		long v;

		if (s == NULL || *s == '\0')
			continue;
		v = strtol(s, &end, 10);
		if (*end == '\0' && v >= min && v < (long)TRD_VNI_ANY)
			return v;
	}
	return -1;
}

/* The process's id: FI_TOROID_PROC, else the launcher's rank. -1 if none. */
static long
env_proc(void)
{
	if (tfi_params.proc >= 0)
		return tfi_params.proc;
	return env_launcher("OMPI_COMM_WORLD_RANK", "PMI_RANK", 0);
}

/* The launcher's world size ($OMPI_COMM_WORLD_SIZE, $PMI_SIZE), or 0. */
static long
env_world_size(void)
{
	long n = env_launcher("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);

	return n < 0 ? 0 : n;
}

int
tfi_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp, void *context)
{
	struct trd_vni_conf conf;
	struct tfi_domain *d;
	struct tfi_ep *ep;
	uint64_t ep_caps;
	long proc;
	int rc;

	if (domain == NULL || info == NULL || epp == NULL || info->ep_attr == NULL)
		return -FI_EINVAL;
	ep_caps = info->caps;
	if (info->ep_attr->type != FI_EP_RDM &&
	    (info->ep_attr->type != FI_EP_DGRAM || !tfi_params.dgram))
		return -FI_EINVAL;
	if (info->caps & ~(info->ep_attr->type == FI_EP_DGRAM ? TFI_DGRAM_CAPS : TFI_CAPS))
		return -FI_EOPNOTSUPP;
	d = container_of(domain, struct tfi_domain, dom);
	proc = env_proc();
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return -FI_ENOMEM;
	memset(&conf, 0, sizeof(conf));
	conf.socket = tfi_params.socket;
	conf.app = tfi_params.app >= 0 ? (uint32_t)tfi_params.app : 1;
	conf.pool_size = tfi_params.pool_size;
	conf.n_send = (unsigned int)tfi_params.n_ctx;
	conf.n_recv = (unsigned int)tfi_params.n_ctx;
	conf.short_max = TRD_VNI_SHORT_MAX;
	conf.connect_timeout_ms = (unsigned int)tfi_params.connect_ms;
	conf.ordered = info->ep_attr->type == FI_EP_RDM; /* FI_ORDER_SAS; DGRAM: none */
	pthread_mutex_lock(&held_lock);
	/* The launcher's rank r of n: endpoint k of the process is r + k * n, so the ranks'
	 * second endpoints (the OFI BTL's beside the OFI MTL's) never take another rank's
	 * number, whichever opens first. An endpoint without messages (FI_RMA/FI_ATOMIC only:
	 * the OFI BTL's) never takes the rank itself, which stays for the one that carries
	 * messages (the MTL's): with a topology of one process per rank it is refused, and the
	 * BTL steps aside while two-sided MPI runs. FI_TOROID_PROC: the first endpoint with
	 * messages has it, others take any free number; nothing at all: any free number. */
	conf.proc = TRD_VNI_ANY;
	if (proc >= 0) {
		bool msgs = ep_caps == 0 || (ep_caps & (FI_MSG | FI_TAGGED));
		long n = tfi_params.proc < 0 ? env_world_size() : 0;
		long p = proc;

		if (!msgs)
			p = n > 0 ? proc + n : -1; /* FI_TOROID_PROC: any free number */
		for (; p >= 0 && p < (long)TRD_VNI_ANY; p += n) {
			if (!held_has(conf.app, (uint32_t)p)) {
				conf.proc = (uint32_t)p;
				break;
			}
			if (n <= 0)
				break;
		}
	}
	ep->vni = trd_vni_open(&conf);
	if (ep->vni != NULL) {
		trd_vni_info(ep->vni, &ep->info);
		if (held_add(ep->info.self) != 0) {
			trd_vni_close(ep->vni);
			ep->vni = NULL;
			errno = ENOMEM;
		}
	}
	pthread_mutex_unlock(&held_lock);
	if (ep->vni == NULL) {
		char who[16] = "any";

		rc = errno ? -errno : -FI_EOTHER;
		if (conf.proc != TRD_VNI_ANY)
			snprintf(who, sizeof(who), "%u", conf.proc);
		FI_WARN(&tfi_prov, FI_LOG_EP_CTRL, "cannot attach %u:%s to toroid-node at %s: %s\n",
			conf.app, who,
			conf.socket ? conf.socket
				    : (getenv("TOROID_VNI_SOCKET") ? getenv("TOROID_VNI_SOCKET")
								   : TRD_VNI_DEFAULT_SOCKET),
			strerror(-rc));
		free(ep);
		return rc;
	}
	if (conf.proc == TRD_VNI_ANY)
		FI_INFO(&tfi_prov, FI_LOG_EP_CTRL, "attached as %u:%u (any free process)\n",
			ep->info.self.app, ep->info.self.proc);
	/* the engine may grant a smaller pool than asked (--max-pool) */
	ep->max_msg = ep->info.pool_size / 4 < tfi_max_msg_size() ? ep->info.pool_size / 4
								: tfi_max_msg_size();
	ep->n_ops = ep->info.n_send + ep->info.n_recv;
	ep->ops = calloc(ep->n_ops, sizeof(*ep->ops));
	if (ep->ops == NULL) {
		trd_vni_close(ep->vni);
		held_del(ep->info.self.app, ep->info.self.proc);
		free(ep);
		return -FI_ENOMEM;
	}
	for (unsigned int i = ep->n_ops; i-- > 0;) {
		ep->ops[i].next = ep->free_ops;
		ep->free_ops = &ep->ops[i];
	}
	ep->name.magic = TFI_NAME_MAGIC;
	ep->name.app = ep->info.self.app; /* the number the engine gave: peers learn it here */
	ep->name.proc = ep->info.self.proc;
	memcpy(ep->name.node, ep->info.node, 3);
	ep->name.version = 1;
	ep->dom = d;
	ep->type = info->ep_attr->type;
	ep->caps = info->caps ? info->caps : ep->type == FI_EP_DGRAM ? TFI_DGRAM_CAPS : TFI_CAPS;
	ep->tx_op_flags = info->tx_attr != NULL ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr != NULL ? info->rx_attr->op_flags : 0;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &msg_ops;
	ep->ep.tagged = &tagged_ops;
	ep->ep.rma = (ep->caps & FI_RMA) ? &tfi_rma_ops : &tfi_no_rma_ops;
	ep->ep.atomic = (ep->caps & FI_ATOMIC) ? &tfi_atomic_ops : &tfi_no_atomic_ops;
	ep->ep.collective = &tfi_no_collective_ops;
	pthread_mutex_lock(&d->lock);
	/* the domain's regions with remote access, reachable through this endpoint too */
	rc = tfi_mr_attach_ep(d, ep);
	if (rc != 0) {
		pthread_mutex_unlock(&d->lock);
		trd_vni_close(ep->vni);
		free(ep->ops);
		free(ep);
		return rc;
	}
	ep->dnext = d->eps;
	d->eps = ep;
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*epp = &ep->ep;
	return 0;
}
