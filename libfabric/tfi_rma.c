/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FI_RMA and FI_ATOMIC: the VNI's one-sided operations (include/toroid/vni.h, trd_vni_write,
 * trd_vni_read, trd_vni_atomic). The engine serving the target process reads and writes the
 * target's registered memory itself: the target application takes no part, whatever its
 * progress. The engine serving this process reads the source of a write from, and writes the
 * data of a read into, the application's buffer directly, so one local buffer costs no copy;
 * several local iovs are gathered into (or scattered from) a pool buffer.
 *
 * Every operation completes (FI_DELIVERY_COMPLETE) when the target engine has written the
 * bytes, or read them and they are in the local buffer; errors come back as error entries:
 * FI_EACCES for a bad key, range or access right at the target (nothing written).
 *
 * FI_FENCE and remote CQ data on writes (fi_writedata): tfi_txq.c. A post fills its operation
 * with everything starting it needs and either starts it (tfi_tx_start) or holds it.
 *
 * Atomics: one element of a 4- or 8-byte integer per operation (FI_INT32, FI_UINT32,
 * FI_INT64, FI_UINT64), applied by the target's engine one at a time: atomic with respect to
 * every other toroid atomic on that memory, not to the target CPU's own stores.
 */
#include <errno.h>
#include <string.h>

#include "tfi.h"

#define RMA_TX_FLAGS                                                                               \
	(FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |                   \
	 FI_DELIVERY_COMPLETE | FI_FENCE)

static struct tfi_ep *
to_ep(struct fid_ep *e)
{
	return container_of(e, struct tfi_ep, ep);
}

/* Common checks of a one-sided post; takes an op. Caller holds the domain lock. */
static ssize_t
rma_begin(struct tfi_ep *ep, fi_addr_t dest, bool inject, struct trd_vni_addr *dst,
	  struct tfi_op **opp)
{
	ssize_t rc = tfi_post_check(ep);

	if (rc != 0)
		return rc;
	if (ep->txcq == NULL && !inject)
		return -FI_ENOCQ;
	if (tfi_av_resolve(ep->av, dest, dst) != 0)
		return -FI_EINVAL;
	if (!ep->rma_seen) {
		ep->rma_seen = true;
		if (!(ep->caps & FI_TAGGED))
			tfi_place_one_sided(); /* (tfi_place.c) */
	}
	*opp = tfi_op_get(ep);
	if (*opp == NULL) {
		tfi_ep_progress(ep);
		return -FI_EAGAIN;
	}
	return 0;
}

static size_t
iov_sum(const struct iovec *iov, size_t n, bool *ok)
{
	size_t t = 0;

	*ok = n <= TFI_IOV_LIMIT && (n == 0 || iov != NULL);
	for (size_t i = 0; *ok && i < n; i++) {
		if (iov[i].iov_base == NULL && iov[i].iov_len != 0)
			*ok = false;
		else if (t + iov[i].iov_len < t)
			*ok = false;
		t += iov[i].iov_len;
	}
	return t;
}

/* fi_write/fi_read of @p n local iovs to one remote range; a write with FI_REMOTE_CQ_DATA
 * in @p flags brings @p data to the target's CQ (tfi_txq.c). */
static ssize_t
rma_post(struct tfi_ep *ep, bool write, const struct iovec *iov, size_t n, fi_addr_t dest,
	 uint64_t addr, uint64_t key, void *context, uint64_t flags, uint64_t data)
{
	bool inject = write && (flags & FI_INJECT), hold;
	struct trd_vni_addr dst;
	struct tfi_op *op = NULL;
	const void *buf;
	bool ok;
	size_t total = iov_sum(iov, n, &ok);
	ssize_t rc;

	if (!ok)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(RMA_TX_FLAGS | FI_REMOTE_CQ_DATA))
		return -FI_EBADFLAGS;
	if ((flags & FI_REMOTE_CQ_DATA) && !write)
		return -FI_EOPNOTSUPP; /* remote CQ data on writes only */
	if (total > ep->max_msg || (inject && total > tfi_inject_size()) ||
	    (n > 1 && total > ep->pool_msg))
		return -FI_EMSGSIZE; /* several iovs go through the pool */
	pthread_mutex_lock(&ep->dom->lock);
	rc = rma_begin(ep, dest, inject, &dst, &op);
	if (rc != 0)
		goto out;
	hold = tfi_txq_hold(ep, (flags & FI_FENCE) != 0);
	op->kind = write ? TFI_OP_WRITE : TFI_OP_READ;
	op->tagged = false;
	op->peek = false;
	op->comp = !inject && tfi_tx_comp(ep, flags);
	op->context = inject ? NULL : context;
	op->len = total;
	op->iov_n = 0;
	op->cflags = FI_RMA | (write ? FI_WRITE : FI_READ);
	if (n == 1 && !inject) {
		buf = iov[0].iov_base; /* the engine reads or writes it directly */
	} else if (total == 0) {
		buf = NULL;
	} else {
		/* several iovs, or an inject (the buffer is free on return): through the pool */
		op->bounce = trd_vni_alloc(ep->vni, total);
		if (op->bounce == NULL) {
			tfi_op_put(ep, op);
			tfi_ep_progress(ep);
			rc = -FI_EAGAIN;
			goto out;
		}
		if (write) {
			rc = tfi_gather(op->bounce, iov, n); /* -FI_EFAULT, not a crash */
			if (rc != 0) {
				tfi_op_put(ep, op);
				goto out;
			}
		} else {
			memcpy(op->iov, iov, n * sizeof(*iov));
			op->iov_n = n; /* scattered at the completion */
		}
		buf = op->bounce;
	}
	op->dst = dst;
	op->sbuf = buf;
	op->raddr = addr;
	op->rkey = tfi_wire_key(ep->dom, key);
	op->has_data = (flags & FI_REMOTE_CQ_DATA) != 0;
	op->data = data;
	if (hold) {
		tfi_txq_add(ep, op, (flags & FI_FENCE) != 0);
		goto out;
	}
	rc = tfi_tx_start(ep, op);
	if (rc != 0) {
		tfi_op_put(ep, op);
		rc = tfi_post_rc(ep, (int)rc);
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t
rma_read(struct fid_ep *e, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t addr,
	 uint64_t key, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return rma_post(ep, false, &iov, 1, src, addr, key, context, ep->tx_op_flags, 0);
}

static ssize_t
rma_readv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	  uint64_t addr, uint64_t key, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return rma_post(ep, false, iov, count, src, addr, key, context, ep->tx_op_flags, 0);
}

static ssize_t
rma_msg(struct tfi_ep *ep, bool write, const struct fi_msg_rma *msg, uint64_t flags)
{
	bool ok;

	if (msg == NULL || msg->rma_iov_count != 1 || msg->rma_iov == NULL)
		return -FI_EINVAL; /* rma_iov_limit is 1 */
	if (msg->rma_iov[0].len != iov_sum(msg->msg_iov, msg->iov_count, &ok) || !ok)
		return -FI_EINVAL;
	return rma_post(ep, write, msg->msg_iov, msg->iov_count, msg->addr, msg->rma_iov[0].addr,
			msg->rma_iov[0].key, msg->context, flags, msg->data);
}

static ssize_t
rma_readmsg(struct fid_ep *e, const struct fi_msg_rma *msg, uint64_t flags)
{
	return rma_msg(to_ep(e), false, msg, flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
rma_write(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t addr,
	  uint64_t key, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return rma_post(ep, true, &iov, 1, dest, addr, key, context,
			ep->tx_op_flags & ~(uint64_t)FI_INJECT, 0);
}

static ssize_t
rma_writev(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
	   uint64_t addr, uint64_t key, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return rma_post(ep, true, iov, count, dest, addr, key, context,
			ep->tx_op_flags & ~(uint64_t)FI_INJECT, 0);
}

static ssize_t
rma_writemsg(struct fid_ep *e, const struct fi_msg_rma *msg, uint64_t flags)
{
	return rma_msg(to_ep(e), true, msg, flags);
}

static ssize_t
rma_inject(struct fid_ep *e, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
	   uint64_t key)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return rma_post(to_ep(e), true, &iov, 1, dest, addr, key, NULL, FI_INJECT, 0);
}

/* Remote CQ data on a write: a notice to the target's provider after the write (tfi_txq.c). */
static ssize_t
rma_writedata(struct fid_ep *e, const void *buf, size_t len, void *desc, uint64_t data,
	      fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};
	struct tfi_ep *ep = to_ep(e);

	return rma_post(ep, true, &iov, 1, dest, addr, key, context,
			(ep->tx_op_flags & ~(uint64_t)FI_INJECT) | FI_REMOTE_CQ_DATA, data);
}

static ssize_t
rma_injectdata(struct fid_ep *e, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
	       uint64_t addr, uint64_t key)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)buf, .iov_len = len};

	return rma_post(to_ep(e), true, &iov, 1, dest, addr, key, NULL,
			FI_INJECT | FI_REMOTE_CQ_DATA, data);
}

struct fi_ops_rma tfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};

/* ---- atomics ---- */

enum aop_class { AOP_WRITE, AOP_FETCH, AOP_COMPARE };

static int
dt_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT32:
	case FI_UINT32:
		return 4;
	case FI_INT64:
	case FI_UINT64:
		return 8;
	default:
		return 0;
	}
}

/* The VNI operation for (@p op, @p dt) in class @p cls, or 0 if not offered. */
static int
aop_of(enum aop_class cls, enum fi_datatype dt, enum fi_op op)
{
	bool is_signed = dt == FI_INT32 || dt == FI_INT64;

	if (dt_size(dt) == 0)
		return 0;
	if (cls == AOP_COMPARE)
		return op == FI_CSWAP ? TRD_VNI_AOP_CSWAP : 0;
	switch (op) {
	case FI_SUM:
		return TRD_VNI_AOP_SUM;
	case FI_ATOMIC_WRITE:
		return TRD_VNI_AOP_SWAP;
	case FI_ATOMIC_READ:
		return cls == AOP_FETCH ? TRD_VNI_AOP_READ : 0;
	case FI_MIN:
		return is_signed ? 0 : TRD_VNI_AOP_MIN; /* the engine compares unsigned */
	case FI_MAX:
		return is_signed ? 0 : TRD_VNI_AOP_MAX;
	case FI_BOR:
		return TRD_VNI_AOP_BOR;
	case FI_BAND:
		return TRD_VNI_AOP_BAND;
	case FI_BXOR:
		return TRD_VNI_AOP_BXOR;
	default:
		return 0;
	}
}

/* Read an operand of @p size bytes from the application: 0 or -FI_EFAULT (tfi_copy.c). */
static int
load(const void *p, int size, uint64_t *v)
{
	uint32_t w;
	int rc;

	if (size == 4) {
		rc = tfi_copy_in(&w, p, 4);
		*v = w;
		return rc;
	}
	return tfi_copy_in(v, p, 8);
}

static ssize_t
atomic_post(struct tfi_ep *ep, enum aop_class cls, const void *buf, size_t count,
	    const void *compare, void *result, fi_addr_t dest, uint64_t addr, uint64_t key,
	    enum fi_datatype dt, enum fi_op fop, void *context, uint64_t flags)
{
	bool inject = cls == AOP_WRITE && (flags & FI_INJECT), hold;
	int vop = aop_of(cls, dt, fop), size = dt_size(dt);
	uint64_t operand = 0, cmp = 0;
	struct trd_vni_addr dst;
	struct tfi_op *op = NULL;
	ssize_t rc;

	if (vop == 0)
		return -FI_EOPNOTSUPP;
	if (flags & ~(uint64_t)RMA_TX_FLAGS)
		return (flags & FI_REMOTE_CQ_DATA) ? -FI_EOPNOTSUPP : -FI_EBADFLAGS;
	if (count != 1)
		return count == 0 ? -FI_EINVAL : -FI_EMSGSIZE; /* fi_query_atomic: count 1 */
	if ((buf == NULL && vop != TRD_VNI_AOP_READ) || (cls != AOP_WRITE && result == NULL) ||
	    (cls == AOP_COMPARE && compare == NULL))
		return -FI_EINVAL;
	if (buf != NULL && vop != TRD_VNI_AOP_READ && load(buf, size, &operand) != 0)
		return -FI_EFAULT;
	if (cls == AOP_COMPARE && load(compare, size, &cmp) != 0)
		return -FI_EFAULT;
	pthread_mutex_lock(&ep->dom->lock);
	rc = rma_begin(ep, dest, inject, &dst, &op);
	if (rc != 0)
		goto out;
	hold = tfi_txq_hold(ep, (flags & FI_FENCE) != 0);
	op->kind = TFI_OP_ATOMIC;
	op->tagged = false;
	op->peek = false;
	op->comp = !inject && tfi_tx_comp(ep, flags);
	op->context = inject ? NULL : context;
	op->len = (size_t)size;
	op->iov_n = 0;
	op->result = cls == AOP_WRITE ? NULL : result;
	op->asize = (unsigned int)size;
	op->cflags = FI_ATOMIC | (cls == AOP_WRITE ? FI_WRITE : FI_READ);
	op->dst = dst;
	op->vop = vop;
	op->operand = operand;
	op->cmp = cmp;
	op->raddr = addr;
	op->rkey = tfi_wire_key(ep->dom, key);
	if (hold) {
		tfi_txq_add(ep, op, (flags & FI_FENCE) != 0);
		goto out;
	}
	rc = tfi_tx_start(ep, op);
	if (rc != 0) {
		tfi_op_put(ep, op);
		rc = tfi_post_rc(ep, (int)rc);
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

/* The single element of an fi_ioc array, or NULL. */
static const void *
ioc_one(const struct fi_ioc *ioc, size_t n, size_t *count)
{
	if (ioc == NULL || n != 1) {
		/* refused below: count must be 1 (0: -FI_EINVAL, 2: -FI_EMSGSIZE) */
		*count = n == 0 || ioc == NULL ? 0 : 2;
		return NULL;
	}
	*count = ioc[0].count;
	return ioc[0].addr;
}

static ssize_t
atomic_write(struct fid_ep *e, const void *buf, size_t count, void *desc, fi_addr_t dest,
	     uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return atomic_post(ep, AOP_WRITE, buf, count, NULL, NULL, dest, addr, key, dt, op, context,
			   ep->tx_op_flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
atomic_writev(struct fid_ep *e, const struct fi_ioc *iov, void **desc, size_t count, fi_addr_t dest,
	      uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	struct tfi_ep *ep = to_ep(e);
	size_t n;
	const void *buf = ioc_one(iov, count, &n);

	return atomic_post(ep, AOP_WRITE, buf, n, NULL, NULL, dest, addr, key, dt, op, context,
			   ep->tx_op_flags & ~(uint64_t)FI_INJECT);
}

static bool
msg_atomic_ok(const struct fi_msg_atomic *msg)
{
	return msg != NULL && msg->rma_iov_count == 1 && msg->rma_iov != NULL &&
	       msg->rma_iov[0].count == 1;
}

static ssize_t
atomic_writemsg(struct fid_ep *e, const struct fi_msg_atomic *msg, uint64_t flags)
{
	size_t n;
	const void *buf;

	if (!msg_atomic_ok(msg))
		return -FI_EINVAL;
	buf = ioc_one(msg->msg_iov, msg->iov_count, &n);
	return atomic_post(to_ep(e), AOP_WRITE, buf, n, NULL, NULL, msg->addr, msg->rma_iov[0].addr,
			   msg->rma_iov[0].key, msg->datatype, msg->op, msg->context, flags);
}

static ssize_t
atomic_inject(struct fid_ep *e, const void *buf, size_t count, fi_addr_t dest, uint64_t addr,
	      uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	return atomic_post(to_ep(e), AOP_WRITE, buf, count, NULL, NULL, dest, addr, key, dt, op,
			   NULL, FI_INJECT);
}

static ssize_t
atomic_readwrite(struct fid_ep *e, const void *buf, size_t count, void *desc, void *result,
		 void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
		 enum fi_datatype dt, enum fi_op op, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return atomic_post(ep, AOP_FETCH, buf, count, NULL, result, dest, addr, key, dt, op,
			   context, ep->tx_op_flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
atomic_readwritev(struct fid_ep *e, const struct fi_ioc *iov, void **desc, size_t count,
		  struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest,
		  uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	struct tfi_ep *ep = to_ep(e);
	size_t n, rn;
	const void *buf = ioc_one(iov, count, &n);
	void *res = (void *)(uintptr_t)ioc_one(resultv, result_count, &rn);

	if (op == FI_ATOMIC_READ && count == 0)
		n = rn; /* a read needs no operand */
	if (rn != n)
		return -FI_EINVAL;
	return atomic_post(ep, AOP_FETCH, buf, n, NULL, res, dest, addr, key, dt, op, context,
			   ep->tx_op_flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
atomic_readwritemsg(struct fid_ep *e, const struct fi_msg_atomic *msg, struct fi_ioc *resultv,
		    void **result_desc, size_t result_count, uint64_t flags)
{
	size_t n, rn;
	const void *buf;
	void *res;

	if (!msg_atomic_ok(msg))
		return -FI_EINVAL;
	buf = ioc_one(msg->msg_iov, msg->iov_count, &n);
	res = (void *)(uintptr_t)ioc_one(resultv, result_count, &rn);
	if (msg->op == FI_ATOMIC_READ && msg->iov_count == 0)
		n = rn;
	if (rn != n)
		return -FI_EINVAL;
	return atomic_post(to_ep(e), AOP_FETCH, buf, n, NULL, res, msg->addr, msg->rma_iov[0].addr,
			   msg->rma_iov[0].key, msg->datatype, msg->op, msg->context,
			   flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
atomic_compwrite(struct fid_ep *e, const void *buf, size_t count, void *desc, const void *compare,
		 void *compare_desc, void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
		 uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	struct tfi_ep *ep = to_ep(e);

	return atomic_post(ep, AOP_COMPARE, buf, count, compare, result, dest, addr, key, dt, op,
			   context, ep->tx_op_flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
atomic_compwritev(struct fid_ep *e, const struct fi_ioc *iov, void **desc, size_t count,
		  const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
		  struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest,
		  uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	struct tfi_ep *ep = to_ep(e);
	size_t n, cn, rn;
	const void *buf = ioc_one(iov, count, &n);
	const void *cmp = ioc_one(comparev, compare_count, &cn);
	void *res = (void *)(uintptr_t)ioc_one(resultv, result_count, &rn);

	if (cn != n || rn != n)
		return -FI_EINVAL;
	return atomic_post(ep, AOP_COMPARE, buf, n, cmp, res, dest, addr, key, dt, op, context,
			   ep->tx_op_flags & ~(uint64_t)FI_INJECT);
}

static ssize_t
atomic_compwritemsg(struct fid_ep *e, const struct fi_msg_atomic *msg,
		    const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
		    struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	size_t n, cn, rn;
	const void *buf, *cmp;
	void *res;

	if (!msg_atomic_ok(msg))
		return -FI_EINVAL;
	buf = ioc_one(msg->msg_iov, msg->iov_count, &n);
	cmp = ioc_one(comparev, compare_count, &cn);
	res = (void *)(uintptr_t)ioc_one(resultv, result_count, &rn);
	if (cn != n || rn != n)
		return -FI_EINVAL;
	return atomic_post(to_ep(e), AOP_COMPARE, buf, n, cmp, res, msg->addr, msg->rma_iov[0].addr,
			   msg->rma_iov[0].key, msg->datatype, msg->op, msg->context,
			   flags & ~(uint64_t)FI_INJECT);
}

static int
valid(enum aop_class cls, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	size_t max = TFI_ATOMIC_MAX;

	if (count == NULL)
		return -FI_EINVAL;
	if (aop_of(cls, dt, op) == 0)
		return -FI_EOPNOTSUPP;
	return tfi_copy_out(count, &max, sizeof(max)); /* setup path: unmapped is -FI_EFAULT */
}

static int
atomic_writevalid(struct fid_ep *e, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	return valid(AOP_WRITE, dt, op, count);
}

static int
atomic_readwritevalid(struct fid_ep *e, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	return valid(AOP_FETCH, dt, op, count);
}

static int
atomic_compwritevalid(struct fid_ep *e, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	return valid(AOP_COMPARE, dt, op, count);
}

struct fi_ops_atomic tfi_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = atomic_write,
	.writev = atomic_writev,
	.writemsg = atomic_writemsg,
	.inject = atomic_inject,
	.readwrite = atomic_readwrite,
	.readwritev = atomic_readwritev,
	.readwritemsg = atomic_readwritemsg,
	.compwrite = atomic_compwrite,
	.compwritev = atomic_compwritev,
	.compwritemsg = atomic_compwritemsg,
	.writevalid = atomic_writevalid,
	.readwritevalid = atomic_readwritevalid,
	.compwritevalid = atomic_compwritevalid,
};

int
tfi_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
		 struct fi_atomic_attr *attr, uint64_t flags)
{
	enum aop_class cls = (flags & FI_COMPARE_ATOMIC) ? AOP_COMPARE
			     : (flags & FI_FETCH_ATOMIC) ? AOP_FETCH
							 : AOP_WRITE;

	if (domain == NULL || attr == NULL)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_COMPARE_ATOMIC | FI_FETCH_ATOMIC | FI_TAGGED))
		return -FI_EBADFLAGS;
	if ((flags & FI_COMPARE_ATOMIC) && (flags & FI_FETCH_ATOMIC))
		return -FI_EINVAL;
	if (flags & FI_TAGGED)
		return -FI_EOPNOTSUPP; /* no tagged atomics */
	if (aop_of(cls, datatype, op) == 0)
		return -FI_EOPNOTSUPP;
	attr->size = (size_t)dt_size(datatype);
	attr->count = TFI_ATOMIC_MAX;
	return 0;
}
