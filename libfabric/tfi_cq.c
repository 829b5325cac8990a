/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: a ring of struct tfi_cqe in completion order, success and error entries
 * alike. fi_cq_read returns entries up to the first error entry; when the head is an error it
 * returns -FI_EAVAIL and fi_cq_readerr takes it. Reading progresses the bound endpoints
 * (FI_PROGRESS_MANUAL), which take VNI completions only while every CQ they feed has room:
 * the ring never overflows.
 *
 * FI_WAIT_FD: the CQ's wait fd is an epoll set holding the VNI eventfd of each bound endpoint
 * and an eventfd for fi_cq_signal(); fi_trywait arms the VNIs (trd_vni_arm) so the engine
 * signals the next completion.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tfi.h"

size_t
tfi_cq_room(const struct tfi_cq *cq)
{
	return cq->cap - cq->count;
}

void
tfi_cq_push(struct tfi_cq *cq, const struct tfi_cqe *e)
{
	if (cq->count >= cq->cap) {
		/* every caller makes sure of room first; one that did not would overwrite the
		 * oldest entry and read the ring past its end (an operation completed twice,
		 * another never): the entry is dropped and said, the CQ stays whole */
		FI_WARN(&tfi_prov, FI_LOG_CQ,
			"CQ full (%zu entries): an entry of context %p lost\n", (size_t)cq->cap,
			e->e.op_context);
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->cap] = *e;
	cq->count++;
}

int
tfi_cq_attach(struct tfi_cq *cq, struct tfi_ep *ep)
{
	for (int i = 0; i < cq->n_eps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->n_eps == TFI_CQ_EPS)
		return -FI_ENOSPC;
	cq->eps[cq->n_eps++] = ep;
	cq->refs++;
	return 0;
}

void
tfi_cq_detach(struct tfi_cq *cq, struct tfi_ep *ep)
{
	for (int i = 0; i < cq->n_eps; i++) {
		if (cq->eps[i] != ep)
			continue;
		tfi_wait_unwatch(cq->epfd, ep);
		cq->eps[i] = cq->eps[--cq->n_eps];
		cq->refs--;
		return;
	}
}

static void
cq_progress(struct tfi_cq *cq)
{
	for (int i = 0; i < cq->n_eps; i++)
		tfi_ep_progress(cq->eps[i]);
}

static size_t
entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

/* Copy out up to count success entries; caller holds the lock. */
static ssize_t
cq_take(struct tfi_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	size_t esz = entry_size(cq->format), n = 0;
	uint8_t *out = buf;

	while (n < count && cq->count > 0) {
		const struct tfi_cqe *e = &cq->ring[cq->head];

		if (e->err != 0)
			break;
		memcpy(out + n * esz, &e->e, esz); /* the formats are prefixes of the tagged one */
		if (src != NULL)
			src[n] = e->src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		n++;
	}
	if (n > 0)
		return (ssize_t)n;
	return cq->count > 0 ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t
cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count, fi_addr_t *src_addr)
{
	struct tfi_cq *cq = container_of(cq_fid, struct tfi_cq, cq);
	ssize_t n;

	if (buf == NULL && count > 0)
		return -FI_EINVAL;
	if (count == 0)
		return 0;
	tfi_place_adapt(tfi_host_runnable);
	pthread_mutex_lock(&cq->dom->lock);
	if (cq->count < count)
		cq_progress(cq);
	n = cq_take(cq, buf, count, src_addr);
	/* a poll never sleeps; where pollers outnumber CPUs, a long idle one yields its CPU */
	for (int i = 0; n == -FI_EAGAIN && i < cq->n_eps; i++)
		if (tfi_ep_yield_due(cq->eps[i])) {
			pthread_mutex_unlock(&cq->dom->lock);
			tfi_place_yield();
			tfi_place_adapt_inside();
			return n;
		}
	pthread_mutex_unlock(&cq->dom->lock);
	tfi_place_adapt_inside();
	return n;
}

static ssize_t
cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return cq_readfrom(cq_fid, buf, count, NULL);
}

static ssize_t
cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct tfi_cq *cq = container_of(cq_fid, struct tfi_cq, cq);
	const struct tfi_cqe *e;
	struct fi_cq_err_entry out;

	if (buf == NULL || (flags & ~(uint64_t)FI_PEEK))
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->dom->lock);
	if (cq->count == 0)
		cq_progress(cq);
	if (cq->count == 0 || cq->ring[cq->head].err == 0) {
		pthread_mutex_unlock(&cq->dom->lock);
		return -FI_EAGAIN;
	}
	e = &cq->ring[cq->head];
	memset(&out, 0, sizeof(out));
	out.op_context = e->e.op_context;
	out.flags = e->e.flags;
	out.len = e->e.len;
	out.buf = e->e.buf;
	out.data = e->e.data;
	out.tag = e->e.tag;
	out.olen = e->olen;
	out.err = e->err;
	out.prov_errno = e->prov_errno;
	out.err_data = NULL;
	/* API 1.5+: err_data_size is in and out; we give no provider data. The entry is written
	 * through the kernel (error path only): unwritable is -FI_EFAULT, the entry stays. */
	out.err_data_size = 0;
	if (tfi_copy_out(buf, &out, sizeof(out)) != 0) {
		pthread_mutex_unlock(&cq->dom->lock);
		return -FI_EFAULT;
	}
	if (!(flags & FI_PEEK)) {
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	pthread_mutex_unlock(&cq->dom->lock);
	return 1;
}

/* Waits that sleep at once after a spin whose yield gave the CPU away for longer than the
 * window: a runnable process waits behind the others for its turn, a woken sleeper runs at
 * once (docs/vni.md, "Commands, completions, wake-ups"; trd_vni_wait does the same). */
#define TFI_SPIN_SKIP 64u

uint64_t
tfi_spin_start(unsigned int *skip)
{
	unsigned int n = __atomic_load_n(skip, __ATOMIC_RELAXED);

	if (tfi_params.wait_spin_us <= 0)
		return 0;
	if (n > 0) {
		__atomic_store_n(skip, n - 1,
				 __ATOMIC_RELAXED); /* a hint: a lost count is harmless */
		return 0;
	}
	return tfi_now_ns() + (uint64_t)tfi_params.wait_spin_us * 1000;
}

bool
tfi_spin_again(uint64_t *end, unsigned int *skip, uint64_t deadline_ms)
{
	uint64_t t0;

	if (*end == 0)
		return false;
	t0 = tfi_now_ns();
	if (t0 >= *end || tfi_now_ms() >= deadline_ms) {
		*end = 0;
		return false;
	}
	sched_yield();
	if (tfi_now_ns() - t0 > (uint64_t)tfi_params.wait_spin_us * 1000) {
		__atomic_store_n(skip, TFI_SPIN_SKIP, __ATOMIC_RELAXED);
		*end = 0; /* one more look, then sleep */
	}
	return true;
}

void
tfi_drain(int fd)
{
	uint64_t cnt;

	if (read(fd, &cnt, sizeof(cnt)) < 0) {
		/* EAGAIN: nothing was pending */
	}
}

/* ---- wait objects (CQs here, counters in tfi_cntr.c) ---- */

/* 0 with both descriptors, or -FI_ENOMEM with none. */
int
tfi_wait_open(int *epfd, int *sig_fd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	*epfd = epoll_create1(EPOLL_CLOEXEC);
	*sig_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ev.data.fd = *sig_fd;
	if (*epfd < 0 || *sig_fd < 0 || epoll_ctl(*epfd, EPOLL_CTL_ADD, *sig_fd, &ev) != 0) {
		tfi_wait_close(*epfd, *sig_fd);
		*epfd = *sig_fd = -1;
		return -FI_ENOMEM;
	}
	return 0;
}

void
tfi_wait_close(int epfd, int sig_fd)
{
	if (epfd >= 0)
		close(epfd);
	if (sig_fd >= 0)
		close(sig_fd);
}

/* fi_control(FI_GETWAIT, FI_GETWAITOBJ) of a CQ or counter. */
int
tfi_wait_control(int epfd, int command, void *arg)
{
	if (command != FI_GETWAIT && command != FI_GETWAITOBJ)
		return -FI_ENOSYS;
	if (arg == NULL)
		return -FI_EINVAL;
	if (command == FI_GETWAITOBJ) {
		enum fi_wait_obj w = epfd >= 0 ? FI_WAIT_FD : FI_WAIT_NONE;

		return tfi_copy_out(arg, &w, sizeof(w)); /* -FI_EFAULT: not a crash */
	}
	if (epfd < 0)
		return -FI_ENODATA;
	return tfi_copy_out(arg, &epfd, sizeof(epfd));
}

/* Watch a bound endpoint's VNI eventfd @p fd (nothing without a wait object). 0 or -errno. */
int
tfi_wait_watch(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	if (epfd < 0)
		return 0;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

void
tfi_wait_unwatch(int epfd, const struct tfi_ep *ep)
{
	if (epfd >= 0 && ep->vni != NULL)
		epoll_ctl(epfd, EPOLL_CTL_DEL, trd_vni_fd(ep->vni), NULL);
}

/* Take the wake-ups that arrived: the object's own and its endpoints'. */
void
tfi_wait_drain(int sig_fd, struct tfi_ep *const *eps, int n_eps)
{
	tfi_drain(sig_fd);
	for (int i = 0; i < n_eps; i++)
		if (eps[i]->vni != NULL)
			tfi_drain(trd_vni_fd(eps[i]->vni));
}

/* Take the wake-ups that arrived, then arm every bound endpoint. 0: safe to sleep on the
 * epoll set; -FI_EAGAIN: completions are there (or came meanwhile). Caller holds the lock. */
static int
cq_arm(struct tfi_cq *cq)
{
	tfi_wait_drain(cq->sig_fd, cq->eps, cq->n_eps);
	cq_progress(cq);
	if (cq->count > 0)
		return -FI_EAGAIN;
	for (int i = 0; i < cq->n_eps; i++) {
		int rc = tfi_ep_arm(cq->eps[i]);

		if (rc != 0)
			return rc;
	}
	return 0;
}

void
tfi_cq_kick(struct tfi_cq *cq)
{
	uint64_t one = 1;

	if (cq->sleepers == 0 || cq->sig_fd < 0)
		return;
	cq->kicks++;
	if (write(cq->sig_fd, &one, sizeof(one)) < 0)
		FI_DBG(&tfi_prov, FI_LOG_CQ, "wake-up not written: %s\n", strerror(errno));
}

static ssize_t
cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count, fi_addr_t *src_addr, const void *cond,
	     int timeout)
{
	struct tfi_cq *cq = container_of(cq_fid, struct tfi_cq, cq);
	uint64_t deadline = timeout < 0 ? UINT64_MAX : tfi_now_ms() + (uint64_t)timeout;
	struct epoll_event ev[4];
	unsigned int kicks;
	bool signalled, kicked;
	uint64_t spin_end;
	int err;

	if (cq->epfd < 0)
		return -FI_EINVAL; /* FI_WAIT_NONE */
	spin_end = tfi_spin_start(&cq->spin_skip);
	/* cond is ignored: every CQ is opened with FI_CQ_COND_NONE (man fi_cq) */
	for (;;) {
		ssize_t n = cq_readfrom(cq_fid, buf, count, src_addr);
		uint64_t t;
		int rc;

		if (n != -FI_EAGAIN)
			return n;
		/* poll a little before sleeping: a wake-up costs tens of microseconds */
		if (tfi_spin_again(&spin_end, &cq->spin_skip, deadline))
			continue;
		t = tfi_now_ms();
		if (t >= deadline)
			return -FI_EAGAIN;
		pthread_mutex_lock(&cq->dom->lock);
		rc = cq_arm(cq);
		if (rc == 0) { /* counted in the section that found the CQ empty: no kick lost */
			cq->sleepers++;
			kicks = cq->kicks;
		}
		pthread_mutex_unlock(&cq->dom->lock);
		if (rc == -FI_EAGAIN)
			continue;
		if (rc != 0)
			return rc;
		rc = epoll_wait(cq->epfd, ev, 4, deadline == UINT64_MAX ? -1 : (int)(deadline - t));
		err = rc < 0 && errno != EINTR ? -errno : 0;
		tfi_place_adapt_inside(); /* asleep: waiting, not computing */
		signalled = false;
		for (int i = 0; i < rc; i++)
			if (ev[i].data.fd == cq->sig_fd) {
				tfi_drain(cq->sig_fd);
				signalled = true;
			}
		pthread_mutex_lock(&cq->dom->lock);
		cq->sleepers--;
		kicked = cq->kicks != kicks;
		pthread_mutex_unlock(&cq->dom->lock);
		if (err != 0)
			return err;
		if (signalled && !kicked)
			return -FI_EAGAIN; /* fi_cq_signal (a kick: its entry is read next) */
	}
}

static ssize_t
cq_sread(struct fid_cq *cq_fid, void *buf, size_t count, const void *cond, int timeout)
{
	return cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int
cq_signal(struct fid_cq *cq_fid)
{
	struct tfi_cq *cq = container_of(cq_fid, struct tfi_cq, cq);
	const uint64_t one = 1;

	if (cq->sig_fd < 0)
		return -FI_EINVAL;
	if (write(cq->sig_fd, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

static const char *
cq_strerror(struct fid_cq *cq_fid, int prov_errno, const void *err_data, char *buf, size_t len)
{
	const char *s = strerror(prov_errno);

	if (buf != NULL && len > 0) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int
cq_close(struct fid *fid)
{
	struct tfi_cq *cq = container_of(fid, struct tfi_cq, cq.fid);

	if (cq->refs > 0)
		return -FI_EBUSY;
	pthread_mutex_lock(&cq->dom->lock);
	cq->dom->refs--;
	pthread_mutex_unlock(&cq->dom->lock);
	tfi_wait_close(cq->epfd, cq->sig_fd);
	free(cq->ring);
	free(cq);
	return 0;
}

static int
cq_control(struct fid *fid, int command, void *arg)
{
	return tfi_wait_control(container_of(fid, struct tfi_cq, cq.fid)->epfd, command, arg);
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = tfi_no_bind,
	.control = cq_control,
	.ops_open = tfi_no_ops_open,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

bool
tfi_is_cq(const struct fid *fid)
{
	return fid != NULL && fid->fclass == FI_CLASS_CQ && fid->ops == &cq_fi_ops;
}

/* An endpoint with a VNI was bound to a waitable CQ: watch its eventfd. */
int
tfi_cq_watch(struct tfi_cq *cq, int fd)
{
	return tfi_wait_watch(cq->epfd, fd);
}

int
tfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cqp, void *context)
{
	struct tfi_domain *d;
	struct tfi_cq *cq;
	enum fi_cq_format fmt;

	if (domain == NULL || attr == NULL || cqp == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(cqp) != 0)
		return -FI_EFAULT;
	d = container_of(domain, struct tfi_domain, dom);
	fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	if (entry_size(fmt) == 0)
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS; /* wait sets, mutex/cond, yield */
	if (attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	if (attr->flags & FI_AFFINITY)
		return -FI_ENOSYS;
	if (attr->size > (1u << 20))
		return -FI_EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -FI_ENOMEM;
	cq->cap = attr->size ? attr->size : TFI_CQ_DEFAULT;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	cq->epfd = cq->sig_fd = -1;
	if (cq->ring == NULL)
		goto nomem;
	if (attr->wait_obj != FI_WAIT_NONE && tfi_wait_open(&cq->epfd, &cq->sig_fd) != 0)
		goto nomem;
	cq->dom = d;
	cq->format = fmt;
	cq->wait_obj = attr->wait_obj;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*cqp = &cq->cq;
	return 0;
nomem:
	tfi_wait_close(cq->epfd, cq->sig_fd);
	free(cq->ring);
	free(cq);
	return -FI_ENOMEM;
}

/* fi_trywait: 0 when every object given may be waited on, -FI_EAGAIN when it has
 * completions (read them first). CQs and counters (tfi_cntr_trywait): the provider's EQs
 * never receive provider events and it has no wait sets. */
int
tfi_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	if ((fids == NULL && count > 0) || count < 0)
		return -FI_EINVAL;
	for (int i = 0; i < count; i++) {
		struct tfi_cq *cq;
		int rc;

		if (fids[i] == NULL)
			return -FI_EINVAL;
		if (tfi_is_eq(fids[i]))
			continue;
		if (tfi_is_cntr(fids[i])) {
			rc = tfi_cntr_trywait(fids[i]);
			if (rc != 0)
				return rc;
			continue;
		}
		if (!tfi_is_cq(fids[i]))
			return -FI_EINVAL; /* another class, or not ours */
		cq = container_of(fids[i], struct tfi_cq, cq.fid);
		if (cq->epfd < 0)
			return -FI_EINVAL;
		pthread_mutex_lock(&cq->dom->lock);
		rc = cq_arm(cq);
		pthread_mutex_unlock(&cq->dom->lock);
		if (rc != 0)
			return rc;
	}
	return 0;
}
