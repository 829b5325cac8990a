/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni: one-sided access (include/toroid/vni.h): memory regions registered over the
 * socket, and writes, reads and atomics posted as send contexts.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "app_pvt.h"

/* ---- one-sided access (docs/vni.md, "One-sided access to application memory") ---- */

/* One region request over the socket and its answer: the engine answers every request, in
 * order, or closes the socket. */
static int
mr_request(struct trd_vni *v, const struct trd_vni_sock_mr *req, uint64_t *key)
{
	struct trd_vni_sock_mr_answer ans;
	struct pollfd pf = {.fd = v->sock, .events = POLLIN};
	uint64_t deadline = vnic_now_ms() + 30000;
	ssize_t n;

	if (send(v->sock, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t)sizeof(*req)) {
		v->dead = true;
		return -ECONNRESET;
	}
	for (;;) {
		uint64_t t = vnic_now_ms();
		int rc;

		if (t >= deadline) {
			/* an engine that does not answer: the socket can no longer be trusted to
			 * carry answers in order */
			v->dead = true;
			return -ECONNRESET;
		}
		rc = poll(&pf, 1, (int)(deadline - t));
		if (rc < 0 && errno != EINTR) {
			v->dead = true;
			return -ECONNRESET;
		}
		if (rc > 0)
			break;
	}
	do
		n = recv(v->sock, &ans, sizeof(ans), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(ans) || ans.op != TRD_VNI_SOCK_MR_ANSWER) {
		v->dead = true;
		return -ECONNRESET;
	}
	if (ans.status == 0 && key != NULL)
		*key = ans.key;
	return ans.status;
}

int
trd_vni_mr_reg(struct trd_vni *v, void *addr, size_t len, unsigned int access, uint64_t *key)
{
	struct trd_vni_sock_mr req;
	int rc;

	if (v == NULL || key == NULL || len == 0 || (uintptr_t)addr + len < (uintptr_t)addr ||
	    !trd_vni_mr_access_ok(access, v->n_rx) ||
	    !(access & (TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE)))
		return -EINVAL;
	/* a part of the region: the engine is told its offset in the region */
	if ((access & TRD_VNI_MR_MU) &&
	    (v->region == NULL || (uint8_t *)addr < v->region ||
	     (uint64_t)((uint8_t *)addr - v->region) > v->region_len ||
	     len > v->region_len - (uint64_t)((uint8_t *)addr - v->region)))
		return -EFAULT;
	rc = vnic_check_live(v);
	if (rc != 0)
		return rc;
	memset(&req, 0, sizeof(req));
	req.op = TRD_VNI_SOCK_MR_REG;
	req.access = access;
	req.addr = (access & TRD_VNI_MR_MU) ? (uint64_t)((uint8_t *)addr - v->region)
					    : (uint64_t)(uintptr_t)addr;
	req.len = len;
	req.key = *key;
	return mr_request(v, &req, key);
}

int
trd_vni_mr_dereg(struct trd_vni *v, uint64_t key)
{
	struct trd_vni_sock_mr req;
	int rc;

	if (v == NULL)
		return -EINVAL;
	rc = vnic_check_live(v);
	if (rc != 0)
		return rc;
	if (key == 0)
		return -ENOENT;
	memset(&req, 0, sizeof(req));
	req.op = TRD_VNI_SOCK_MR_DEREG;
	req.key = key;
	return mr_request(v, &req, NULL);
}

#define RMA_LEN_MAX (1u << 30)

static int
rma_post(struct trd_vni *v, const struct trd_vni_actx *a, void *buf, struct trd_vni_addr dst,
	 int doorbell, uint64_t cookie)
{
	struct trd_vni_actx *c;
	uint32_t idx;
	int rc;

	rc = vnic_check_live(v);
	if (rc != 0)
		return rc;
	if (v->n_sfree == 0)
		return -EAGAIN;
	idx = v->sfree[--v->n_sfree];
	c = (struct trd_vni_actx *)(void *)&v->sctx[idx];
	*c = *a;
	c->dst_app = dst.app;
	c->dst_proc = dst.proc;
	if (doorbell >= 0) {
		c->flags |= TRD_VNI_F_DOORBELL;
		c->doorbell = (uint32_t)doorbell;
	}
	v->sc[idx].cookie = cookie;
	v->sc[idx].buf = buf;
	v->sc[idx].peer = dst;
	rc = vnic_post(v, TRD_VNI_CMD_RMA, idx);
	if (rc != 0)
		v->sfree[v->n_sfree++] = idx;
	return rc;
}

static int
rw_common(struct trd_vni *v, uint32_t flag, struct trd_vni_addr dst, void *buf, size_t len,
	  uint64_t raddr, uint64_t rkey, int doorbell, uint64_t cookie)
{
	struct trd_vni_actx a;

	if (v == NULL || len > RMA_LEN_MAX || (buf == NULL && len != 0) ||
	    (uintptr_t)buf + len < (uintptr_t)buf || !vnic_db_ok(v, doorbell))
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.flags = flag;
	a.len = (uint32_t)len;
	a.raddr = raddr;
	a.laddr = (uint64_t)(uintptr_t)buf;
	a.rkey = rkey;
	return rma_post(v, &a, buf, dst, doorbell, cookie);
}

int
trd_vni_write(struct trd_vni *v, struct trd_vni_addr dst, const void *buf, size_t len,
	      uint64_t raddr, uint64_t rkey, int doorbell, uint64_t cookie)
{
	return rw_common(v, TRD_VNI_SF_WRITE, dst, (void *)(uintptr_t)buf, len, raddr, rkey,
			 doorbell, cookie);
}

int
trd_vni_read(struct trd_vni *v, struct trd_vni_addr dst, void *buf, size_t len, uint64_t raddr,
	     uint64_t rkey, int doorbell, uint64_t cookie)
{
	return rw_common(v, TRD_VNI_SF_READ, dst, buf, len, raddr, rkey, doorbell, cookie);
}

int
trd_vni_atomic(struct trd_vni *v, struct trd_vni_addr dst, enum trd_vni_aop op, unsigned int size,
	       uint64_t operand, uint64_t compare, uint64_t raddr, uint64_t rkey, int doorbell,
	       uint64_t cookie)
{
	struct trd_vni_actx a;

	if (v == NULL || (size != 4 && size != 8) || op < TRD_VNI_AOP_SUM ||
	    op > TRD_VNI_AOP_BXOR || !vnic_db_ok(v, doorbell))
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.flags = TRD_VNI_SF_ATOMIC;
	a.len = size;
	a.raddr = raddr;
	a.rkey = rkey;
	a.aop = (uint32_t)op;
	a.operand = operand;
	a.compare = compare;
	return rma_post(v, &a, NULL, dst, doorbell, cookie);
}
