/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni: the application side of a virtual network interface (include/toroid/vni.h).
 *
 * A plain process: no EAL, no hugepages, no DPDK library. The only DPDK code used is the
 * header-inline part of rte_ring (enqueue, dequeue, count), on rings the engine initialised
 * inside the shared segment. Everything the process keeps for itself (cookies, free context
 * lists, the pool allocator) is in its private memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/vni.h>

#include "app_pvt.h"

#define CLIENT_CQ_BURST       32
#define BLOCK_HDR             TRD_VNI_ALLOC_ALIGN /* bytes before each pool block: its length */
#define BLOCK_MAGIC           0x6b6f6c42696e7654ULL
#define TRD_VNI_BUSY_RETRY_MS 3000u /* trd_vni_open asks a busy engine again this long */

uint64_t
vnic_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
vnic_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Send the registration with this process's /proc/self/mem (read-write) and /proc/self/maps:
 * the engine reaches the process's memory for one-sided access only through them (docs/vni.md,
 * "How the engine reaches the memory"). The kernel binds both to this address space: after an
 * exec or an exit they reach nothing. Without /proc the request goes alone (no one-sided
 * access). 0 or a negative errno. */
static int
send_register(int fd, const struct trd_vni_sock_register *req, const struct trd_vni_sock_mu *mu)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov[2] = {{.iov_base = (void *)(uintptr_t)req, .iov_len = sizeof(*req)},
			       {.iov_base = (void *)(uintptr_t)mu, .iov_len = sizeof(*mu)}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = mu != NULL ? 2 : 1};
	int mfd[2], rc = 0;

	mfd[0] = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	mfd[1] = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (mfd[0] >= 0 && mfd[1] >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
		memcpy(CMSG_DATA(cm), mfd, sizeof(mfd));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) != (ssize_t)(sizeof(*req) + (mu ? sizeof(*mu) : 0)))
		rc = -errno;
	/* the engine holds its own references now; ours would only share the maps file's
	 * position with it */
	for (int i = 0; i < 2; i++)
		if (mfd[i] >= 0)
			close(mfd[i]);
	return rc;
}

static int
sock_connect(const char *path, unsigned int timeout_ms)
{
	struct sockaddr_un sa;
	uint64_t deadline = vnic_now_ms() + timeout_ms;
	int fd, err;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		err = errno;
		close(fd);
		/* the engine is not there yet: keep trying until the deadline */
		if ((err != ENOENT && err != ECONNREFUSED && err != EAGAIN) ||
		    vnic_now_ms() >= deadline) {
			errno = err;
			return -1;
		}
		poll(NULL, 0, 10);
	}
}

/* Why this thread's last trd_vni_open() failed (trd_vni_open_error). */
static _Thread_local char open_error[192];

const char *
trd_vni_open_error(void)
{
	return open_error;
}

/* Receive the answer and its descriptors. */
static int
sock_answer(int fd, struct trd_vni_sock_answer *ans, int fds[TRD_VNI_ANSWER_FDS], int want)
{
	union {
		char buf[CMSG_SPACE(TRD_VNI_ANSWER_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = ans, .iov_len = sizeof(*ans)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t n;
	int got = 0;

	memset(ans, 0, sizeof(*ans));
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (got > TRD_VNI_ANSWER_FDS)
			got = TRD_VNI_ANSWER_FDS;
		memcpy(fds, CMSG_DATA(c), (size_t)got * sizeof(int));
	}
	if (n == TRD_VNI_ANSWER_V2_SIZE && ans->op == TRD_VNI_SOCK_REGISTERED &&
	    ans->status == -EPROTO) {
		/* an engine before version 3 refused our version; it cannot say its own */
		for (int i = 0; i < got; i++)
			close(fds[i]);
		snprintf(open_error, sizeof(open_error),
			 "VNI protocol version mismatch: this library speaks %u, the engine 2 or "
			 "older (it says: %.96s)",
			 TRD_VNI_VERSION, ans->reason);
		return -EPROTO;
	}
	if (n != (ssize_t)sizeof(*ans) || ans->op != TRD_VNI_SOCK_REGISTERED) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		snprintf(open_error, sizeof(open_error), "unexpected answer from the engine");
		return -EPROTO;
	}
	ans->reason[sizeof(ans->reason) - 1] = '\0';
	if (ans->status != 0) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		snprintf(open_error, sizeof(open_error), "%s", ans->reason);
		return ans->status;
	}
	if (got != want) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		return -EPROTO;
	}
	return 0;
}

static bool
span_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* rte_ring_get_memsize_elem() lives in librte_ring; its arithmetic is this. */
static uint64_t
ring_memsize(uint32_t esize, uint32_t count)
{
	uint64_t sz = sizeof(struct rte_ring) + (uint64_t)count * esize;

	return (sz + RTE_CACHE_LINE_SIZE - 1) & ~(uint64_t)(RTE_CACHE_LINE_SIZE - 1);
}

/* Check what the engine says the segment holds: never index outside the mapping. */
static int
seg_check(struct trd_vni *v)
{
	const struct trd_vni_seg *s = v->seg;
	uint64_t size = v->size;

	if (size < sizeof(*s) || s->magic != TRD_VNI_SEG_MAGIC ||
	    s->version != TRD_VNI_SEG_VERSION || s->size != size || s->app != v->self.app ||
	    s->proc != v->self.proc)
		return -EPROTO;
	if (s->n_send == 0 || s->n_send > TRD_VNI_CTX_MAX || s->n_recv == 0 ||
	    s->n_recv > TRD_VNI_CTX_MAX || s->n_doorbells > TRD_VNI_DB_MAX ||
	    s->short_max > TRD_VNI_SHORT_MAX ||
	    s->slot_size < s->short_max + TRD_VNI_MCAST_MAX * sizeof(struct trd_vni_addr))
		return -EPROTO;
	if (!span_ok(s->sctx_off, (uint64_t)s->n_send * sizeof(struct trd_vni_sctx), size) ||
	    !span_ok(s->rctx_off, (uint64_t)s->n_recv * sizeof(struct trd_vni_rctx), size) ||
	    !span_ok(s->ctxr_off, s->ctxr_size, size) ||
	    s->ctxr_size < (uint64_t)s->n_send * s->slot_size ||
	    !span_ok(s->pool_off, s->pool_size, size) ||
	    !span_ok(s->db_off, (uint64_t)s->n_doorbells * 8, size) || s->cmdq_size == 0 ||
	    (s->cmdq_size & (s->cmdq_size - 1)) != 0 || s->cplq_size == 0 ||
	    (s->cplq_size & (s->cplq_size - 1)) != 0 ||
	    !span_ok(s->cmdq_off, ring_memsize(8, s->cmdq_size), size) ||
	    !span_ok(s->cplq_off, ring_memsize(32, s->cplq_size), size))
		return -EPROTO;
	return 0;
}

static void
client_free(struct trd_vni *v)
{
	vnic_mu_detach(v); /* (closes ctr_fd) */
	if (v->base != NULL && v->base != MAP_FAILED)
		munmap(v->base, v->size);
	if (v->sock >= 0)
		close(v->sock);
	if (v->efd >= 0)
		close(v->efd);
	if (v->kick_fd >= 0)
		close(v->kick_fd);
	trd_vni_heap_fini(&v->heap);
	free(v->sc);
	free(v->rc);
	free(v->sfree);
	free(v->rfree);
	free(v);
}

struct trd_vni *
trd_vni_open(const struct trd_vni_conf *conf)
{
	struct trd_vni_sock_register req;
	struct trd_vni_sock_answer ans;
	const char *path;
	struct trd_vni *v;
	int fds[TRD_VNI_ANSWER_FDS];
	struct trd_vni_sock_mu mreq;
	int mu = vnic_mu_request(conf, &mreq); /* version 5: 1 when asked for */
	uint64_t busy_deadline;
	int rc;

	if (conf == NULL || conf->short_max < -1 || conf->short_max > TRD_VNI_SHORT_MAX ||
	    conf->n_send > TRD_VNI_CTX_MAX || conf->n_recv > TRD_VNI_CTX_MAX ||
	    conf->n_doorbells > TRD_VNI_DB_MAX || conf->app == TRD_VNI_ANY ||
	    conf->wait_spin_us < -1 || conf->wait_spin_us > TRD_VNI_WAIT_SPIN_MAX_US || mu < 0) {
		errno = EINVAL;
		return NULL;
	}
	path = conf->socket;
	if (path == NULL)
		path = getenv("TOROID_VNI_SOCKET");
	if (path == NULL)
		path = TRD_VNI_DEFAULT_SOCKET;
	open_error[0] = '\0';
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	v->sock = v->efd = v->kick_fd = v->ctr_fd = -1;
	for (unsigned int i = 0; i < TRD_VNI_MU_RFIFOS_MAX; i++)
		v->rx_fd[i] = -1;
	/* an engine busy with other registrations (-EBUSY) is asked again, with a back-off, for
	 * connect_timeout_ms or at least TRD_VNI_BUSY_RETRY_MS */
	busy_deadline = vnic_now_ms() + RTE_MAX(conf->connect_timeout_ms, TRD_VNI_BUSY_RETRY_MS);
	for (unsigned int backoff_ms = 1;; backoff_ms = RTE_MIN(backoff_ms * 2, 100u)) {
		uint64_t now;

		v->sock = sock_connect(path, conf->connect_timeout_ms);
		if (v->sock < 0) {
			rc = -errno;
			goto fail;
		}
		memset(&req, 0, sizeof(req));
		req.op = TRD_VNI_SOCK_REGISTER;
		req.version = TRD_VNI_VERSION;
		req.app = conf->app;
		req.proc = conf->proc;
		req.pool_size = conf->pool_size ? conf->pool_size : TRD_VNI_POOL_DEFAULT;
		req.n_send = conf->n_send ? conf->n_send : 64;
		req.n_recv = conf->n_recv ? conf->n_recv : 64;
		req.n_doorbells = conf->n_doorbells ? conf->n_doorbells : 64;
		req.short_max = conf->short_max == 0 ? TRD_VNI_SHORT_DEFAULT
						     : (conf->short_max < 0 ? 0 : conf->short_max);
		rc = send_register(v->sock, &req, mu ? &mreq : NULL);
		for (unsigned int i = 0; i < TRD_VNI_ANSWER_FDS; i++)
			fds[i] = -1;
		/* version 6: an eventfd of each reception FIFO follows the counter block's */
		if (rc == 0)
			rc = sock_answer(v->sock, &ans, fds, mu ? 4 + (int)mreq.n_rfifos : 3);
		now = vnic_now_ms();
		if (rc != -EBUSY || now >= busy_deadline)
			break;
		close(v->sock);
		v->sock = -1;
		poll(NULL, 0, (int)RTE_MIN((uint64_t)backoff_ms, busy_deadline - now));
	}
	if (rc == 0 && (ans.app != conf->app || ans.proc == TRD_VNI_ANY ||
			(conf->proc != TRD_VNI_ANY && ans.proc != conf->proc))) {
		/* not the identity asked for */
		for (int i = 0; i < TRD_VNI_ANSWER_FDS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		rc = -EPROTO;
	}
	if (rc != 0)
		goto fail;
	v->self.app = ans.app;
	v->self.proc = ans.proc;
	v->base = NULL;
	v->size = ans.seg_size;
	v->base = mmap(NULL, v->size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	close(fds[0]);
	v->efd = fds[1];
	v->kick_fd = fds[2];
	v->ctr_fd = fds[3];
	for (unsigned int i = 0; mu && i < mreq.n_rfifos; i++)
		v->rx_fd[i] = fds[4 + i];
	if (v->base == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	v->seg = (struct trd_vni_seg *)v->base;
	v->ordered = conf->ordered;
	v->spin_ns = conf->wait_spin_us == 0
			     ? TRD_VNI_WAIT_SPIN_DEFAULT_US * 1000ULL
			     : (conf->wait_spin_us < 0 ? 0 : (uint64_t)conf->wait_spin_us * 1000);
	rc = seg_check(v);
	if (rc == 0 && mu)
		rc = vnic_mu_attach(v);
	if (rc != 0)
		goto fail;
	v->cmdq = (struct rte_ring *)(v->base + v->seg->cmdq_off);
	v->cplq = (struct rte_ring *)(v->base + v->seg->cplq_off);
	v->sctx = (struct trd_vni_sctx *)(v->base + v->seg->sctx_off);
	v->rctx = (struct trd_vni_rctx *)(v->base + v->seg->rctx_off);
	v->ctxr = v->base + v->seg->ctxr_off;
	v->pool = v->base + v->seg->pool_off;
	v->db = (volatile uint64_t *)(v->base + v->seg->db_off);

	rc = trd_vni_heap_init(&v->heap, v->seg->pool_size);
	v->sc = calloc(v->seg->n_send, sizeof(*v->sc));
	v->rc = calloc(v->seg->n_recv, sizeof(*v->rc));
	v->sfree = calloc(v->seg->n_send, sizeof(*v->sfree));
	v->rfree = calloc(v->seg->n_recv, sizeof(*v->rfree));
	if (rc != 0 || v->sc == NULL || v->rc == NULL || v->sfree == NULL || v->rfree == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < v->seg->n_send; i++)
		v->sfree[v->n_sfree++] = v->seg->n_send - 1 - i;
	for (uint32_t i = 0; i < v->seg->n_recv; i++)
		v->rfree[v->n_rfree++] = v->seg->n_recv - 1 - i;
	return v;

fail:
	client_free(v);
	errno = -rc;
	return NULL;
}

void
trd_vni_close(struct trd_vni *v)
{
	if (v == NULL)
		return;
	client_free(v);
}

int
trd_vni_recv_room(const struct trd_vni *v)
{
	return v == NULL ? -EINVAL : (int)v->n_rfree;
}

bool
trd_vni_probe_none(const struct trd_vni *v)
{
	/* an engine that stopped keeps its last word: the probe must go and fail */
	return v != NULL && vnic_check_live(v) == 0 &&
	       __atomic_load_n(&v->seg->probe_waiting, __ATOMIC_ACQUIRE) == TRD_VNI_PROBE_VALID;
}

int
trd_vni_info(const struct trd_vni *v, struct trd_vni_info *info)
{
	const struct trd_vni_seg *s;

	if (v == NULL || info == NULL)
		return -EINVAL;
	s = v->seg;
	memset(info, 0, sizeof(*info));
	info->self = v->self;
	memcpy(info->node, s->node, 3);
	memcpy(info->node_name, s->node_name, sizeof(info->node_name));
	info->node_name[sizeof(info->node_name) - 1] = '\0';
	info->pool_size = s->pool_size;
	info->short_max = s->short_max;
	info->n_send = s->n_send;
	info->n_recv = s->n_recv;
	info->n_doorbells = s->n_doorbells;
	info->tx_msgs = __atomic_load_n(&s->tx_msgs, __ATOMIC_RELAXED);
	info->tx_pkts = __atomic_load_n(&s->tx_pkts, __ATOMIC_RELAXED);
	info->tx_bytes = __atomic_load_n(&s->tx_bytes, __ATOMIC_RELAXED);
	info->rx_msgs = __atomic_load_n(&s->rx_msgs, __ATOMIC_RELAXED);
	info->rx_bytes = __atomic_load_n(&s->rx_bytes, __ATOMIC_RELAXED);
	info->naks = __atomic_load_n(&s->naks, __ATOMIC_RELAXED);
	return 0;
}

/* ---- pool ---- */

void *
trd_vni_alloc(struct trd_vni *v, size_t len)
{
	int64_t off;
	uint64_t *h;

	if (v == NULL || len > v->heap.size) {
		errno = v == NULL ? EINVAL : ENOMEM;
		return NULL;
	}
	off = trd_vni_heap_alloc(&v->heap, len + BLOCK_HDR);
	if (off < 0) {
		errno = ENOMEM;
		return NULL;
	}
	h = (uint64_t *)(v->pool + off);
	h[0] = BLOCK_MAGIC;
	h[1] = len;
	return v->pool + off + BLOCK_HDR;
}

void
trd_vni_free(struct trd_vni *v, void *p)
{
	int64_t off = trd_vni_offset(v, p);
	uint64_t *h;

	if (p == NULL || off < BLOCK_HDR)
		return;
	h = (uint64_t *)(v->pool + off - BLOCK_HDR);
	if (h[0] != BLOCK_MAGIC)
		return;
	h[0] = 0;
	trd_vni_heap_free(&v->heap, (uint64_t)off - BLOCK_HDR, h[1] + BLOCK_HDR);
}

int64_t
trd_vni_offset(const struct trd_vni *v, const void *p)
{
	const uint8_t *b = p;

	if (v == NULL || b < v->pool || b > v->pool + v->seg->pool_size)
		return -EINVAL;
	return b - v->pool;
}

/* ---- posting ---- */

void
vnic_kick(struct trd_vni *v)
{
	const uint64_t one = 1;

	/* The engine sets engine_idle, then looks at the queues once more before it sleeps; we
	 * queued, then look at engine_idle: one of the two sees the other. */
	v->kick_owed = false;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&v->seg->engine_idle, __ATOMIC_SEQ_CST)) {
		if (write(v->kick_fd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: the engine is being woken anyway */
		}
	}
}

/* Queue command @p op on context @p idx, without a kick. 0 or -EAGAIN. */
static int
cmd_enqueue(struct trd_vni *v, uint32_t op, uint32_t idx)
{
	struct trd_vni_cmd c = {.op = op, .idx = idx};

	if (rte_ring_enqueue_elem(v->cmdq, &c, sizeof(c)) != 0)
		return -EAGAIN;
	if (op != TRD_VNI_CMD_CANCEL) /* a cancel has no completion of its own */
		v->pending++;
	return 0;
}

int
vnic_post(struct trd_vni *v, uint32_t op, uint32_t idx)
{
	int rc = cmd_enqueue(v, op, idx);

	if (rc == 0)
		vnic_kick(v);
	return rc;
}

/* The kick a receive posted quietly owes, if any: none if the engine took every command
 * meanwhile (woken by another process's message for it, say). */
void
vnic_kick_owed(struct trd_vni *v)
{
	if (!v->kick_owed)
		return;
	if (rte_ring_empty(v->cmdq))
		v->kick_owed = false;
	else
		vnic_kick(v);
}

/* Post a receive without waking the engine: a receive gives the engine nothing to send, and
 * what comes for it is matched later all the same. Its kick waits for the next post that
 * kicks, the next poll or the next sleep, so a receive posted just before a send (a halo
 * exchange, a ping-pong) wakes the engine once, not twice: on a small host each wake-up is
 * two switches between processes on a CPU an application computes on. */
static int
vnic_post_quiet(struct trd_vni *v, uint32_t op, uint32_t idx)
{
	int rc = cmd_enqueue(v, op, idx);

	if (rc != 0)
		return rc;
	/* armed: a wait of this interface already sleeps (trd_vni_arm() paid its debts before
	 * this post), and nothing else would pay this one: kick now */
	if (__atomic_load_n(&v->seg->app_armed, __ATOMIC_SEQ_CST) != 0) {
		vnic_kick(v);
		return 0;
	}
	v->kick_owed = true;
	return 0;
}

int
vnic_check_live(const struct trd_vni *v)
{
	if (v->dead || __atomic_load_n(&v->seg->engine_status, __ATOMIC_ACQUIRE) != 0)
		return -ECONNRESET;
	return 0;
}

int
vnic_db_ok(const struct trd_vni *v, int doorbell)
{
	return doorbell < 0 || (unsigned int)doorbell < v->seg->n_doorbells;
}

static int
send_common(struct trd_vni *v, const struct trd_vni_addr *dst, unsigned int n, uint64_t tag,
	    bool has_data, uint64_t data, const void *buf, size_t len, int doorbell,
	    uint64_t cookie)
{
	struct trd_vni_sctx *s;
	uint32_t idx, flags = 0;
	uint8_t *slot;
	int64_t off = 0;
	int rc;

	if (v == NULL || dst == NULL || n == 0 || n > TRD_VNI_MCAST_MAX || len > UINT32_MAX ||
	    (buf == NULL && len != 0) || !vnic_db_ok(v, doorbell))
		return -EINVAL;
	rc = vnic_check_live(v);
	if (rc != 0)
		return rc;
	if (len > v->seg->short_max) {
		/* a long message is sent from the pool (zero-copy), or from anywhere else in this
		 * process's memory, which the engine reads once (not a multicast's) */
		off = trd_vni_offset(v, buf);
		if (off < 0 || (uint64_t)off + len > v->seg->pool_size) {
			if (n > 1)
				return -EINVAL;
			off = -1;
		}
	}
	if (v->n_sfree == 0)
		return -EAGAIN;
	idx = v->sfree[--v->n_sfree];
	s = &v->sctx[idx];
	slot = v->ctxr + (size_t)idx * v->seg->slot_size;
	memset(s, 0, sizeof(*s));
	if (len <= v->seg->short_max) {
		flags |= TRD_VNI_SF_INLINE;
		if (len != 0)
			memcpy(slot, buf, len);
	} else if (off < 0) {
		flags |= TRD_VNI_SF_VADDR;
		s->buf = (uint64_t)(uintptr_t)buf;
	} else {
		s->buf = (uint64_t)off;
	}
	if (n > 1) {
		/* the destination list follows the inline data in the context's slot */
		s->dst_off = (uint32_t)((v->seg->short_max + 7) & ~7u);
		memcpy(slot + s->dst_off, dst, n * sizeof(*dst));
		flags |= TRD_VNI_SF_MCAST;
		s->n_dst = n;
	} else if (v->ordered) {
		flags |= TRD_VNI_SF_ORDERED;
	}
	s->dst_app = dst[0].app;
	s->dst_proc = dst[0].proc;
	s->data = data;
	if (has_data)
		flags |= TRD_VNI_SF_DATA;
	if (doorbell >= 0) {
		flags |= TRD_VNI_F_DOORBELL;
		s->doorbell = (uint32_t)doorbell;
	}
	s->flags = flags;
	s->len = (uint32_t)len;
	s->tag = tag;
	v->sc[idx].cookie = cookie;
	v->sc[idx].buf = (void *)(uintptr_t)buf;
	v->sc[idx].peer = dst[0];
	rc = vnic_post(v, TRD_VNI_CMD_SEND, idx);
	if (rc != 0)
		v->sfree[v->n_sfree++] = idx;
	return rc;
}

int
trd_vni_send(struct trd_vni *v, struct trd_vni_addr dst, uint64_t tag, const void *buf, size_t len,
	     int doorbell, uint64_t cookie)
{
	return send_common(v, &dst, 1, tag, false, 0, buf, len, doorbell, cookie);
}

int
trd_vni_senddata(struct trd_vni *v, struct trd_vni_addr dst, uint64_t tag, uint64_t data,
		 const void *buf, size_t len, int doorbell, uint64_t cookie)
{
	return send_common(v, &dst, 1, tag, true, data, buf, len, doorbell, cookie);
}

int
trd_vni_mcast(struct trd_vni *v, const struct trd_vni_addr *dst, unsigned int n, uint64_t tag,
	      const void *buf, size_t len, int doorbell, uint64_t cookie)
{
	return send_common(v, dst, n, tag, false, 0, buf, len, doorbell,
			   cookie); /* n == 1: a send */
}

static int
recv_common2(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
	     uint32_t rflags, uint64_t claim, void *buf, size_t cap, int doorbell, uint64_t cookie)
{
	struct trd_vni_rctx *r;
	int64_t off = 0;
	uint32_t idx;
	int rc;

	if (v == NULL || cap > UINT32_MAX || !vnic_db_ok(v, doorbell))
		return -EINVAL;
	rc = vnic_check_live(v);
	if (rc != 0)
		return rc;
	if (cap != 0) {
		if (buf == NULL)
			return -EINVAL;
		/* in the pool, or anywhere else in this process's memory: the engine writes it
		 * there itself */
		off = trd_vni_offset(v, buf);
		if (off < 0 || (uint64_t)off + cap > v->seg->pool_size) {
			rflags |= TRD_VNI_RF_VADDR;
			off = (int64_t)(uintptr_t)buf;
		}
	}
	if (v->n_rfree == 0)
		return -EAGAIN;
	idx = v->rfree[--v->n_rfree];
	r = &v->rctx[idx];
	memset(r, 0, sizeof(*r));
	r->flags = rflags | (doorbell >= 0 ? TRD_VNI_F_DOORBELL : 0);
	r->src_app = src.app;
	r->src_proc = src.proc;
	r->cap = (uint32_t)cap;
	r->tag = tag;
	r->ignore = ignore;
	r->claim = claim;
	r->buf = (uint64_t)off;
	r->doorbell = doorbell >= 0 ? (uint32_t)doorbell : 0;
	v->rc[idx].cookie = cookie;
	v->rc[idx].buf = buf;
	v->rc[idx].cap = cap;
	v->rc[idx].busy = true;
	v->rc[idx].claim = (rflags & (TRD_VNI_RF_PROBE | TRD_VNI_RF_CLAIM)) ==
			   (TRD_VNI_RF_PROBE | TRD_VNI_RF_CLAIM);
	/* a probe waits for its answer, a claimed receive or discard names a message the
	 * engine already holds, and a receive that rings a doorbell may be watched in memory
	 * with no call of ours: wake the engine for them */
	rc = (rflags & (TRD_VNI_RF_PROBE | TRD_VNI_RF_CLAIM)) || doorbell >= 0
		     ? vnic_post(v, TRD_VNI_CMD_RECV, idx)
		     : vnic_post_quiet(v, TRD_VNI_CMD_RECV, idx);
	if (rc != 0) {
		v->rc[idx].busy = false;
		v->rfree[v->n_rfree++] = idx;
	}
	return rc;
}

static int
recv_common(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
	    uint32_t rflags, void *buf, size_t cap, int doorbell, uint64_t cookie)
{
	return recv_common2(v, src, tag, ignore, rflags, 0, buf, cap, doorbell, cookie);
}

int
trd_vni_claim(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
	      uint64_t cookie)
{
	return recv_common(v, src, tag & ~ignore, ignore,
			   TRD_VNI_RF_MASK | TRD_VNI_RF_PROBE | TRD_VNI_RF_CLAIM, NULL, 0, -1,
			   cookie);
}

int
trd_vni_recv_claimed(struct trd_vni *v, uint64_t claim, void *buf, size_t cap, int doorbell,
		     uint64_t cookie)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};

	if (claim == 0)
		return -EINVAL;
	return recv_common2(v, any, 0, 0, TRD_VNI_RF_CLAIM, claim, buf, cap, doorbell, cookie);
}

int
trd_vni_discard(struct trd_vni *v, uint64_t claim, uint64_t cookie)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};

	if (claim == 0)
		return -EINVAL;
	return recv_common2(v, any, 0, 0, TRD_VNI_RF_CLAIM | TRD_VNI_RF_DISCARD, claim, NULL, 0, -1,
			    cookie);
}

int
trd_vni_discard_first(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
		      uint64_t cookie)
{
	return recv_common(v, src, tag & ~ignore, ignore,
			   TRD_VNI_RF_MASK | TRD_VNI_RF_PROBE | TRD_VNI_RF_DISCARD, NULL, 0, -1,
			   cookie);
}

int
trd_vni_probe(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
	      uint64_t cookie)
{
	return recv_common(v, src, tag & ~ignore, ignore, TRD_VNI_RF_MASK | TRD_VNI_RF_PROBE, NULL,
			   0, -1, cookie);
}

int
trd_vni_cancel(struct trd_vni *v, uint64_t cookie)
{
	int rc;

	if (v == NULL)
		return -EINVAL;
	rc = vnic_check_live(v);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < v->seg->n_recv; i++)
		if (v->rc[i].busy && v->rc[i].cookie == cookie)
			return vnic_post(v, TRD_VNI_CMD_CANCEL, i);
	return -ENOENT;
}

int
trd_vni_recv(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, unsigned int flags,
	     void *buf, size_t cap, int doorbell, uint64_t cookie)
{
	if (flags & ~TRD_VNI_ANY_TAG)
		return -EINVAL;
	return recv_common(v, src, tag, 0, flags & TRD_VNI_ANY_TAG ? TRD_VNI_RF_ANY_TAG : 0, buf,
			   cap, doorbell, cookie);
}

int
trd_vni_recv_mask(struct trd_vni *v, struct trd_vni_addr src, uint64_t tag, uint64_t ignore,
		  void *buf, size_t cap, int doorbell, uint64_t cookie)
{
	return recv_common(v, src, tag & ~ignore, ignore, TRD_VNI_RF_MASK, buf, cap, doorbell,
			   cookie);
}

/* ---- completions ---- */

/* The engine asks this process to read a message of a process on the same engine into receive
 * @p e->idx itself: one copy, by the receiver, as Open MPI's CMA does. Only into the buffer
 * this process posted, at most its length; the answer says whether it did. */
static void
cma_read(struct trd_vni *v, const struct trd_vni_cqe *e)
{
	struct trd_vni_cmd c = {.op = TRD_VNI_CMD_CMA_FAIL, .idx = e->idx};
	const struct client_ctx *cx = &v->rc[e->idx];
	uint32_t offered = TRD_VNI_CMA_OFFERED;

	/* the engine may have withdrawn a late request and copied the message itself */
	if (cx->busy && e->len <= cx->cap && e->tag > 0 && e->tag <= INT32_MAX &&
	    __atomic_compare_exchange_n(&v->rctx[e->idx].cma, &offered, TRD_VNI_CMA_TAKEN, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		struct iovec l = {.iov_base = cx->buf, .iov_len = e->len};
		struct iovec r = {.iov_base = (void *)(uintptr_t)e->data, .iov_len = e->len};
		ssize_t k = process_vm_readv((pid_t)e->tag, &l, 1, &r, 1, 0);

		if (k == (ssize_t)e->len)
			c.op = TRD_VNI_CMD_CMA_OK;
		else if (k < 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS))
			c.op = TRD_VNI_CMD_CMA_OFF; /* another user, Yama, seccomp */
	}
	/* the engine waits for the answer: if the queue is full now (cancels fill it too), the
	 * answer is owed and sent again at the next poll (cma_flush) */
	if (rte_ring_enqueue_elem(v->cmdq, &c, sizeof(c)) == 0) {
		vnic_kick(v);
	} else if (v->rc[e->idx].cma_owed == 0) {
		v->rc[e->idx].cma_owed = c.op;
		v->n_owed++;
	}
}

/* Send the CMA answers the command queue had no room for (cma_read), in receive order, until
 * it is full again. */
static void
cma_flush(struct trd_vni *v)
{
	bool sent = false;

	for (uint32_t i = 0; i < v->seg->n_recv && v->n_owed > 0; i++) {
		struct trd_vni_cmd c = {.op = v->rc[i].cma_owed, .idx = i};

		if (c.op == 0)
			continue;
		if (rte_ring_enqueue_elem(v->cmdq, &c, sizeof(c)) != 0)
			break;
		v->rc[i].cma_owed = 0;
		v->n_owed--;
		sent = true;
	}
	if (sent)
		vnic_kick(v);
}

int
trd_vni_poll(struct trd_vni *v, struct trd_vni_cpl *cpl, unsigned int n)
{
	struct trd_vni_cqe e[CLIENT_CQ_BURST];
	unsigned int got, k = 0;

	if (v == NULL || (cpl == NULL && n != 0))
		return -EINVAL;
	if (n > CLIENT_CQ_BURST)
		n = CLIENT_CQ_BURST;
	if (v->n_owed > 0)
		cma_flush(v);
	vnic_kick_owed(v);
	got = rte_ring_dequeue_burst_elem(v->cplq, e, sizeof(e[0]), n, NULL);
	for (unsigned int i = 0; i < got; i++) {
		struct trd_vni_cpl *c = &cpl[k];
		struct client_ctx *cx;

		if ((e[i].kind == TRD_VNI_CPL_SEND || e[i].kind == TRD_VNI_CPL_WRITE ||
		     e[i].kind == TRD_VNI_CPL_READ || e[i].kind == TRD_VNI_CPL_ATOMIC ||
		     e[i].kind == TRD_VNI_CPL_COLL) &&
		    e[i].idx < v->seg->n_send) {
			cx = &v->sc[e[i].idx];
			v->sfree[v->n_sfree++] = e[i].idx;
			c->kind = (enum trd_vni_cpl_kind)e[i].kind;
			c->claim = 0;
			c->peer = cx->peer;
			c->buf = e[i].kind == TRD_VNI_CPL_SEND ? NULL : cx->buf;
		} else if (e[i].kind == TRD_VNI_CPL_RECV && e[i].idx < v->seg->n_recv) {
			cx = &v->rc[e[i].idx];
			cx->busy = false;
			v->rfree[v->n_rfree++] = e[i].idx;
			c->kind = TRD_VNI_CPL_RECV;
			c->peer.app = e[i].peer_app;
			c->peer.proc = e[i].peer_proc;
			c->buf = cx->buf;
			/* a claim's handle: written by the engine in the context before the
			 * completion (the dequeue above acquired it) */
			c->claim = cx->claim && e[i].status == 0
					   ? __atomic_load_n(&v->rctx[e[i].idx].claim,
							     __ATOMIC_RELAXED)
					   : 0;
			cx->claim = false;
		} else if (e[i].kind == TRD_VNI_CQE_CMA && e[i].idx < v->seg->n_recv) {
			cma_read(v, &e[i]);
			continue;
		} else {
			continue; /* not ours: ignore */
		}
		c->status = e[i].status;
		c->len = e[i].len;
		c->tag = e[i].tag;
		c->has_data = (c->kind == TRD_VNI_CPL_RECV || c->kind == TRD_VNI_CPL_ATOMIC) &&
			      (e[i].flags & TRD_VNI_CQE_DATA);
		c->data = c->has_data ? e[i].data : 0;
		c->cookie = cx->cookie;
		if (v->pending > 0)
			v->pending--;
		k++;
	}
	return (int)k;
}
