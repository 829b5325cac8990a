/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FI_MSG and FI_TAGGED on the endpoint (tfi_ep.c): the posting of sends and receives and
 * the fi_ops_msg and fi_ops_tagged tables. Their completions are in tfi_progress.c.
 *
 * Data path (docs/libfabric.md, "Copies"):
 *   send      up to the VNI's short threshold (896 B): gathered into a stack buffer through
 *             the kernel (tfi_copy.c: an unmapped buffer is -FI_EFAULT), which trd_vni_send()
 *             copies at post time; up to FI_TOROID_BOUNCE_MAX, or in several iovs: gathered
 *             into a pool buffer, sent zero-copy from there; longer, one iov: handed to the
 *             engine as it is, which reads it once into its packets (an unreadable buffer is
 *             an FI_EFAULT entry). An inject (up to inject_size, FI_TOROID_INJECT_MAX) is
 *             always copied: into the pool, or onto the heap when the pool is full.
 *   complete  when the engine finished the send (the receiver's engine accepted it); with
 *             FI_INJECT_COMPLETE (and no stronger level) a send whose bytes were copied
 *             completes when posted (tfi_send_early).
 *   receive   one iov: posted as it is, the engine writes the message into it (an unwritable
 *             buffer is an FI_EFAULT entry); several: into a pool buffer as large as the
 *             application's (at most max_msg_size), scattered into the iovs through the kernel
 *             when fi_cq_read finds its completion (tfi_progress.c).
 *   tags      one 64-bit VNI tag: untagged messages carry TFI_MSG_TAG (bit 63), tagged ones
 *             their tag (bits 0..62). A tagged receive passes its tag and ignore mask to the
 *             engine's matcher (trd_vni_recv_mask), never ignoring bit 63.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tfi.h"

/* Flags this provider does not implement on an operation. */
#define TFI_TX_REFUSED (FI_MATCH_COMPLETE | FI_TRIGGER | FI_MULTICAST)
#define TFI_RX_REFUSED (FI_MULTI_RECV | FI_CLAIM | FI_DISCARD | FI_TRIGGER)
/* Every flag fi_sendmsg and fi_recvmsg (and the tagged forms) take: others are -FI_EBADFLAGS. */
#define TFI_TX_KNOWN                                                                               \
	(TFI_TX_REFUSED | FI_COMPLETION | FI_MORE | FI_REMOTE_CQ_DATA | FI_INJECT |                \
	 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MSG | FI_TAGGED |   \
	 FI_SEND | FI_FENCE)
#define TFI_RX_KNOWN                                                                               \
	(TFI_RX_REFUSED | FI_COMPLETION | FI_MORE | FI_PEEK | FI_REMOTE_CQ_DATA | FI_MSG |         \
	 FI_TAGGED | FI_RECV)

static size_t
iov_total(const struct iovec *iov, size_t n)
{
	size_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* At most TFI_IOV_LIMIT iovs, no NULL base with a length, a total that does not wrap. */
static bool
iov_ok(const struct iovec *iov, size_t n)
{
	size_t t = 0;

	if (n > TFI_IOV_LIMIT || (n > 0 && iov == NULL))
		return false;
	for (size_t i = 0; i < n; i++) {
		if ((iov[i].iov_base == NULL && iov[i].iov_len != 0) || t + iov[i].iov_len < t)
			return false;
		t += iov[i].iov_len;
	}
	return true;
}

/* ---- posting ---- */

/* FI_INJECT_COMPLETE and no stronger level among @p flags: a send whose bytes left the
 * application's buffer when it was posted may complete then (docs/libfabric.md). */
static bool
inject_comp(uint64_t flags)
{
	return (flags & FI_INJECT_COMPLETE) &&
	       !(flags & (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE));
}

/* Where a send's bytes go from: *bufp, and whether they are copied out of the application's
 * buffer now (*copied; the gather then fills *bufp). 0 or -FI_EAGAIN (nothing taken). */
static int
send_buf(struct tfi_ep *ep, struct tfi_op *op, const struct iovec *iov, size_t n, size_t total,
	 bool copy, bool hold, void *tmp, void **bufp, bool *copied)
{
	*copied = true;
	if (total <= ep->info.short_max && !hold) {
		/* gathered here (an unmapped buffer fails, tfi_copy.c), copied by
		 * trd_vni_send() now */
		*bufp = tmp;
	} else if (hold && total == 0) {
		*bufp = NULL;
		*copied = false;
	} else if (copy || (hold && total <= ep->info.short_max)) {
		/* the application's buffer is free on return: a copy in the pool, where the
		 * engine reads it without a system call, else on the heap (sent from process
		 * memory, tfi_op_put frees it); a held one waits there (tfi_txq.c) */
		op->bounce = trd_vni_alloc(ep->vni, total);
		if (op->bounce == NULL)
			op->heap = malloc(total);
		*bufp = op->bounce != NULL ? op->bounce : op->heap;
		if (*bufp == NULL)
			return -FI_EAGAIN;
	} else {
		/* up to bounce_max (or gathered from several iovs): copied into the pool here,
		 * where the engine reads it without a system call; longer: read by the engine
		 * from the application's memory, once */
		if (n > 1 || total <= tfi_params.bounce_max)
			op->bounce = trd_vni_alloc(ep->vni, total);
		if (op->bounce != NULL) {
			*bufp = op->bounce;
		} else if (n == 1) {
			*bufp = iov[0].iov_base;
			*copied = false;
		} else {
			return -FI_EAGAIN;
		}
	}
	return 0;
}

bool
tfi_rx_buf(struct tfi_ep *ep, struct tfi_op *op, void **buf)
{
	/* up to bounce_max (or scattered to several iovs): received into the pool, where the
	 * engine writes it without a system call, and copied out by fi_cq_read; longer: written
	 * by the engine into the application's memory */
	*buf = NULL;
	if (op->len == 0)
		return true;
	if (op->iov_n > 1 || op->len <= tfi_params.bounce_max)
		op->bounce = trd_vni_alloc(ep->vni, op->len);
	if (op->bounce != NULL)
		*buf = op->bounce;
	else if (op->iov_n == 1)
		*buf = op->iov[0].iov_base;
	return *buf != NULL;
}

/* Hold send @p op on the transmit queue with what starting it needs (tfi_txq.c). */
static void
send_hold(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr dst, uint64_t vtag,
	  const void *buf, const uint64_t *data, bool fence)
{
	op->dst = dst;
	op->vtag = vtag;
	op->sbuf = buf;
	op->has_data = data != NULL;
	op->data = data != NULL ? *data : 0;
	tfi_txq_add(ep, op, fence);
}

/* A send; @p inject: fi_inject (no completion); @p fence: FI_FENCE, held until every
 * earlier transmit completed (tfi_txq.c); @p flags: the operation's flags, of which FI_INJECT
 * (the buffer is free on return: copied) and FI_INJECT_COMPLETE (completed when posted, if its
 * bytes were copied) count here. */
static ssize_t
ep_send_f(struct tfi_ep *ep, const struct iovec *iov, size_t n, fi_addr_t dest, uint64_t vtag,
	  bool tagged, void *context, bool comp, bool inject, const uint64_t *data, bool fence,
	  uint64_t flags)
{
	bool copy = inject || (flags & FI_INJECT), early = inject_comp(flags);
	uint8_t tmp[TRD_VNI_SHORT_MAX];
	struct trd_vni_addr dst;
	struct tfi_op *op;
	bool copied, hold;
	void *buf;
	size_t total;
	ssize_t rc;

	if (!iov_ok(iov, n))
		return -FI_EINVAL;
	total = iov_total(iov, n);
	if (total > ep->max_msg || (copy && total > tfi_inject_size()) ||
	    (n > 1 && total > ep->pool_msg))
		return -FI_EMSGSIZE; /* several iovs are gathered into the pool */
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
	if (tfi_self_is(ep, dst) && !tfi_txq_hold(ep, fence)) {
		/* to itself: matched and copied here, never through the engine (tfi_self.c) */
		rc = tfi_self_send(ep, iov, n, vtag, tagged, context, comp && !inject, data, copy);
		if (rc == -FI_EAGAIN)
			tfi_ep_progress(ep);
		goto out;
	}
	op = tfi_op_get(ep);
	if (op == NULL) {
		tfi_ep_progress(ep);
		rc = -FI_EAGAIN;
		goto out;
	}
	hold = tfi_txq_hold(ep, fence);
	op->kind = TFI_OP_SEND;
	op->tagged = tagged;
	op->peek = false;
	op->comp = comp && !inject;
	op->context = inject ? NULL : context;
	op->len = total;
	op->iov_n = 0;
	rc = send_buf(ep, op, iov, n, total, copy, hold, tmp, &buf, &copied);
	if (rc == 0 && copied)
		rc = tfi_gather(buf, iov, n);
	if (rc != 0) {
		tfi_op_put(ep, op);
		if (rc == -FI_EAGAIN)
			tfi_ep_progress(ep);
		goto out;
	}
	if (hold) {
		send_hold(ep, op, dst, vtag, buf, data, fence);
		goto out;
	}
	/* the completion now takes a place in the CQ, which progress keeps for its own */
	early = early && copied && !inject && (!op->comp || tfi_cq_room(ep->txcq) > 0);
	if (data != NULL)
		rc = trd_vni_senddata(ep->vni, dst, vtag, *data, buf, total, -1,
				      (uint64_t)(uintptr_t)op);
	else
		rc = trd_vni_send(ep->vni, dst, vtag, buf, total, -1, (uint64_t)(uintptr_t)op);
	if (rc == -EAGAIN) {
		/* no send context free (more sends outstanding than FI_TOROID_CTX): held in
		 * posting order, started by progress (an MPI program may post any number of
		 * sends before one can complete); bytes gathered on the stack go to the heap */
		if (buf == tmp) {
			op->heap = malloc(total);
			if (op->heap == NULL) {
				tfi_op_put(ep, op);
				rc = tfi_post_rc(ep, (int)rc);
				goto out;
			}
			memcpy(op->heap, tmp, total);
			buf = op->heap;
		}
		send_hold(ep, op, dst, vtag, buf, data, false);
		rc = 0;
	} else if (rc != 0) {
		tfi_op_put(ep, op);
		rc = tfi_post_rc(ep, (int)rc);
	} else if (early) {
		tfi_send_early(ep, op);
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t
ep_send(struct tfi_ep *ep, const struct iovec *iov, size_t n, fi_addr_t dest, uint64_t vtag,
	bool tagged, void *context, bool comp, bool inject, const uint64_t *data)
{
	return ep_send_f(ep, iov, n, dest, vtag, tagged, context, comp, inject, data, false,
			 ep->tx_op_flags);
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

/* Fill receive @p op: its @p n iovs of room @p cap, and what answers it. */
static void
recv_fill(struct tfi_op *op, const struct iovec *iov, size_t n, size_t cap, bool tagged,
	  void *context, bool comp, bool peek, enum tfi_claim_kind ck)
{
	op->kind = TFI_OP_RECV;
	op->tagged = tagged;
	op->claim = (uint8_t)ck;
	op->peek = peek;
	op->comp = comp || peek; /* a peek always answers */
	op->context = context;
	op->len = cap;
	op->iov_n = n;
	if (n > 0)
		memcpy(op->iov, iov, n * sizeof(*iov));
}

/* A probe (FI_PEEK, no claim) of the engine's messages: its VNI status. Nothing waits at the
 * engine (it says so in the segment): FI_ENOMSG here, without the round trip (MPI_Iprobe in a
 * loop). It is an empty poll: where the sender or the engine may need this CPU, every
 * TFI_PROBE_YIELD_EVERY-th such probe yields (*yield) as an empty fi_cq_read does (a probe loop
 * never reads an empty queue: each probe's answer is in it). */
static int
probe_post(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr from, uint64_t vtag,
	   uint64_t vignore, bool *yield)
{
	if (trd_vni_probe_none(ep->vni) && tfi_cq_room(ep->rxcq) > 0) {
		tfi_op_fail(ep, op, -ENOMSG);
		if (ep->probe_idle < UINT32_MAX)
			ep->probe_idle++;
		*yield = ++ep->probe_misses % TFI_PROBE_YIELD_EVERY == 0 && tfi_ep_yield_due(ep);
		return 0;
	}
	ep->probe_idle = 0;
	ep->probe_misses = 0;
	return trd_vni_probe(ep->vni, from, vtag, vignore, (uint64_t)(uintptr_t)op);
}

/* A probe or claim (FI_PEEK): the messages to itself first (tfi_self.c: 1, answered), then it
 * goes behind the receives posted before it: those held (from any source until the next
 * progress at an endpoint that sent to itself) are given to the VNI first, as far as contexts
 * allow, so that it does not report or claim a message that one of them takes (0). */
static int
probe_first(struct tfi_ep *ep, struct tfi_op *op, struct trd_vni_addr from, uint64_t vtag,
	    uint64_t vignore, enum tfi_claim_kind ck)
{
	int rc = tfi_self_peek(ep, op, from, vtag, vignore, ck);

	if (rc == 0 && ep->rxq_head != NULL)
		tfi_rxq_progress(ep);
	return rc;
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
	bool yield = false, any = false;
	void *rbuf = NULL;
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
	if (n > 1 && cap > ep->pool_msg)
		cap = ep->pool_msg; /* scattered from the pool: a longer message is truncated */
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
		if (ci < 0 && !tfi_self_claim_known(ep, context)) {
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
	/* a discard answers like a probe: no data */
	peek = peek || ck == TFI_CLAIM_DISCARD;
	recv_fill(op, iov, n, cap, tagged, context, comp, peek, ck);
	/* messages to itself first (tfi_self.c): a claim of one, a probe that finds one */
	if (ci < 0 && (ck == TFI_CLAIM_RECV || ck == TFI_CLAIM_DISCARD)) {
		rc = tfi_self_claimed(ep, op, ck == TFI_CLAIM_DISCARD);
		goto self;
	}
	if (peek && ck != TFI_CLAIM_DISCARD && ck != TFI_CLAIM_RECV) {
		rc = probe_first(ep, op, from, vtag, vignore, ck);
		if (rc != 0)
			goto self;
	}
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
		rc = probe_post(ep, op, from, vtag, vignore, &yield);
		goto posted;
	}
	/* a queued message to itself, or a receive from itself kept here (tfi_self.c) */
	if (ck == TFI_CLAIM_NONE) {
		rc = tfi_self_recv(ep, op, from, vtag, vignore);
		if (rc != 0)
			goto self;
		any = from.app == TRD_VNI_ANY;
	}
	/* behind held receives, or no context free beyond those kept for probes and claims, or
	 * from any source at an endpoint that sends to itself (a message to itself sent before
	 * the next progress takes it here, tfi_self.c): held in posting order, given to the VNI
	 * by progress; its buffer then */
	if (ck != TFI_CLAIM_RECV && (ep->rxq_head != NULL || (any && ep->self_sent) ||
				     trd_vni_recv_room(ep->vni) <= (int)tfi_rx_reserve(ep))) {
		tfi_rxq_add(ep, op, from, vtag, vignore);
		rc = 0;
		goto posted;
	}
	if (!tfi_rx_buf(ep, op, &rbuf)) {
		tfi_op_put(ep, op);
		tfi_ep_progress(ep);
		rc = -FI_EAGAIN;
		goto out;
	}
	if (ck == TFI_CLAIM_RECV) {
		rc = trd_vni_recv_claimed(ep->vni, ep->claims[ci].handle, rbuf, cap, -1,
					  (uint64_t)(uintptr_t)op);
		goto claimed;
	}
	rc = trd_vni_recv_mask(ep->vni, from, vtag, vignore, rbuf, cap, -1,
			       (uint64_t)(uintptr_t)op);
	if (rc == -EAGAIN) { /* (the VNI's command ring full) */
		tfi_rxq_add(ep, op, from, vtag, vignore);
		rc = 0;
	}
	goto posted;
claimed:
	if (rc == 0) /* the handle is used: the completion tells how it went */
		ep->claims[ci] = ep->claims[--ep->n_claims];
posted:
	if (rc != 0) {
		tfi_op_put(ep, op);
		rc = tfi_post_rc(ep, (int)rc);
	} else if (any) {
		tfi_self_any_add(ep, op); /* a message to itself may take it (tfi_self.c) */
	}
	goto out;
self:                /* 1: answered or kept by tfi_self.c; -FI_EAGAIN: no CQ room */
	if (rc == 0) /* (a claim it did not know: tfi_self_claim_known said it did) */
		rc = -FI_EINVAL;
	if (rc < 0) {
		tfi_op_put(ep, op);
		tfi_ep_progress(ep);
	} else {
		rc = 0;
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	if (yield)
		tfi_place_yield();
	return rc;
}

static struct tfi_ep *
to_ep(struct fid_ep *e)
{
	return container_of(e, struct tfi_ep, ep);
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
	if (flags & ~(uint64_t)TFI_RX_KNOWN)
		return -FI_EBADFLAGS;
	if (flags & (TFI_RX_REFUSED | FI_PEEK))
		return -FI_EOPNOTSUPP; /* FI_PEEK is for tagged receives */
	return ep_recv(ep, msg->msg_iov, msg->iov_count, msg->addr, 0, 0, false, msg->context,
		       rx_comp(ep, flags), false);
}

static ssize_t
msg_send(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return ep_send(ep, &iov, 1, dest, TFI_MSG_TAG, false, context,
		       tfi_tx_comp(ep, ep->tx_op_flags), false, NULL);
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
	if (flags & ~(uint64_t)TFI_TX_KNOWN)
		return -FI_EBADFLAGS;
	if (flags & TFI_TX_REFUSED)
		return -FI_EOPNOTSUPP;
	if ((flags & FI_INJECT) && iov_ok(msg->msg_iov, msg->iov_count) &&
	    iov_total(msg->msg_iov, msg->iov_count) > tfi_inject_size())
		return -FI_EMSGSIZE;
	return ep_send_f(ep, msg->msg_iov, msg->iov_count, msg->addr, TFI_MSG_TAG, false,
			 msg->context, tfi_tx_comp(ep, flags), false,
			 (flags & FI_REMOTE_CQ_DATA) ? &msg->data : NULL, (flags & FI_FENCE) != 0,
			 flags);
}

/* Remote CQ data: the VNI's immediate data (trd_vni_senddata), cq_data_size 8. */
static ssize_t
msg_senddata(struct fid_ep *e, const void *buf, size_t len, void *desc, uint64_t data,
	     fi_addr_t dest, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return ep_send(ep, &iov, 1, dest, TFI_MSG_TAG, false, context,
		       tfi_tx_comp(ep, ep->tx_op_flags), false, &data);
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

struct fi_ops_msg tfi_msg_ops = {
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
tagged_recvv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	     uint64_t tag, uint64_t ignore, void *context)
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

	if (flags & ~(uint64_t)TFI_RX_KNOWN)
		return -FI_EBADFLAGS;
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
tagged_send(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t tag,
	    void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(ep, &iov, 1, dest, tag, true, context, tfi_tx_comp(ep, ep->tx_op_flags),
		       false, NULL);
}

static ssize_t
tagged_sendv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
	     uint64_t tag, void *context)
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
	if (flags & ~(uint64_t)TFI_TX_KNOWN)
		return -FI_EBADFLAGS;
	if (flags & TFI_TX_REFUSED)
		return -FI_EOPNOTSUPP;
	if ((flags & FI_INJECT) && iov_ok(msg->msg_iov, msg->iov_count) &&
	    iov_total(msg->msg_iov, msg->iov_count) > tfi_inject_size())
		return -FI_EMSGSIZE;
	return ep_send_f(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, true, msg->context,
			 tfi_tx_comp(ep, flags), false,
			 (flags & FI_REMOTE_CQ_DATA) ? &msg->data : NULL, (flags & FI_FENCE) != 0,
			 flags);
}

static ssize_t
tagged_senddata(struct fid_ep *e, const void *buf, size_t len, void *desc, uint64_t data,
		fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	if (tag_send_check(tag))
		return -FI_EINVAL;
	return ep_send(ep, &iov, 1, dest, tag, true, context, tfi_tx_comp(ep, ep->tx_op_flags),
		       false, &data);
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

struct fi_ops_tagged tfi_tagged_ops = {
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
