/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion counters (fi_cntr_*): a success and an error count per counter, advanced by
 * tfi_cntr_report() when an operation of a bound endpoint completes, whether or not it writes
 * a CQ entry (FI_SELECTIVE_COMPLETION, injected sends). The endpoint decides what a counter
 * counts at fi_ep_bind: FI_SEND, FI_RECV, FI_WRITE, FI_READ. FI_REMOTE_WRITE and
 * FI_REMOTE_READ are refused (-FI_EOPNOTSUPP): RMA at this endpoint's memory is served by the
 * engine without the application taking part, so no completion reaches it to count.
 *
 * Progress is the CQ's (FI_PROGRESS_MANUAL): fi_cntr_read, fi_cntr_readerr, fi_cntr_wait and
 * fi_trywait progress the endpoints bound to the counter, as fi_cq_read does for a CQ's.
 *
 * FI_WAIT_FD (and FI_WAIT_UNSPEC): as for a CQ, the wait fd is an epoll set holding the VNI
 * eventfd of each bound endpoint and an eventfd of the counter's own, written when the
 * counter changes while someone waits (fi_trywait or fi_cntr_wait armed it): by another
 * thread's progress, fi_cntr_add, fi_cntr_set. fi_trywait answers -FI_EAGAIN when the
 * counter changed since the application last read it (fi_cntr_read or fi_cntr_readerr),
 * then arms the VNIs (trd_vni_arm) so that the engine signals the next completion.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "tfi.h"

/* Longest sleep of fi_cntr_wait between two looks at the counter: a safety net for several
 * threads waiting on one counter, where one's re-arming may take another's wake-up. */
#define TFI_CNTR_SLICE_MS 100
/* fi_cntr_wait: rounds of progress that leave completions queued but the counter still,
 * before it sleeps 1 ms between rounds */
#define TFI_CNTR_BUSY 64

struct tfi_cntr {
	struct fid_cntr cntr;
	struct tfi_domain *dom;
	uint64_t value, err;
	uint64_t seen, seen_err; /* as the application last read them: fi_trywait */
	struct tfi_ep *eps[TFI_CQ_EPS];
	int n_eps;              /* bound endpoints: close answers -FI_EBUSY while there are any */
	int epfd;               /* FI_WAIT_FD/UNSPEC: bound endpoints' VNI eventfds and sig_fd */
	int sig_fd;             /* eventfd: the counter changed while armed */
	bool armed;             /* a waiter armed the counter: the next change writes sig_fd */
	unsigned int spin_skip; /* fi_cntr_wait: waits left that sleep at once (tfi_spin_start) */
};

static const uint64_t kind_flag[TFI_CNTR_KINDS] = {
	[TFI_CNTR_SEND] = FI_SEND,
	[TFI_CNTR_RECV] = FI_RECV,
	[TFI_CNTR_WRITE] = FI_WRITE,
	[TFI_CNTR_READ] = FI_READ,
};

/* The counter changed: wake whoever armed it. Caller holds the lock. */
static void
changed(struct tfi_cntr *c)
{
	const uint64_t one = 1;

	if (!c->armed || c->sig_fd < 0)
		return;
	c->armed = false;
	if (write(c->sig_fd, &one, sizeof(one)) < 0) {
		/* saturated: the waiter is woken anyway */
	}
}

void
tfi_cntr_report(struct tfi_ep *ep, uint64_t flags, int err)
{
	struct tfi_cntr *c;

	if (flags & FI_RECV)
		c = ep->cntr[TFI_CNTR_RECV];
	else if (flags & FI_SEND)
		c = ep->cntr[TFI_CNTR_SEND];
	else if (flags & FI_READ)
		c = ep->cntr[TFI_CNTR_READ];
	else if (flags & FI_WRITE)
		c = ep->cntr[TFI_CNTR_WRITE];
	else
		return;
	if (c == NULL)
		return;
	if (err != 0)
		c->err++;
	else
		c->value++;
	changed(c);
}

static void
progress(struct tfi_cntr *c)
{
	for (int i = 0; i < c->n_eps; i++)
		tfi_ep_progress(c->eps[i]);
}

/* Take the wake-ups that arrived, then arm the counter and every bound endpoint. 0: safe to
 * sleep on the epoll set; -FI_EAGAIN: the counter moved from (v, e) meanwhile, or
 * completions are queued. Caller holds the lock. */
static int
cntr_arm(struct tfi_cntr *c, uint64_t v, uint64_t e)
{
	tfi_wait_drain(c->sig_fd, c->eps, c->n_eps);
	progress(c);
	if (c->value != v || c->err != e)
		return -FI_EAGAIN;
	for (int i = 0; i < c->n_eps; i++) {
		int rc = tfi_ep_arm(c->eps[i]);

		if (rc != 0)
			return rc;
	}
	c->armed = true;
	return 0;
}

static struct tfi_cntr *
to_cntr(struct fid_cntr *f)
{
	return container_of(f, struct tfi_cntr, cntr);
}

static uint64_t
cntr_read(struct fid_cntr *f)
{
	struct tfi_cntr *c = to_cntr(f);
	bool idle = false;
	uint64_t v;

	tfi_place_adapt(tfi_host_runnable);
	pthread_mutex_lock(&c->dom->lock);
	progress(c);
	/* nothing new: a read never sleeps, but yields its CPU as fi_cq_read does */
	if (c->value == c->seen && c->err == c->seen_err)
		for (int i = 0; i < c->n_eps && !idle; i++)
			idle = tfi_ep_yield_due(c->eps[i]);
	c->seen = v = c->value;
	c->seen_err = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	if (idle)
		tfi_place_yield();
	tfi_place_adapt_inside();
	return v;
}

static uint64_t
cntr_readerr(struct fid_cntr *f)
{
	struct tfi_cntr *c = to_cntr(f);
	uint64_t e;

	pthread_mutex_lock(&c->dom->lock);
	progress(c);
	c->seen = c->value;
	c->seen_err = e = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	return e;
}

static int
cntr_update(struct fid_cntr *f, bool err, bool add, uint64_t value)
{
	struct tfi_cntr *c = to_cntr(f);
	uint64_t *p = err ? &c->err : &c->value;

	pthread_mutex_lock(&c->dom->lock);
	*p = add ? *p + value : value;
	changed(c);
	pthread_mutex_unlock(&c->dom->lock);
	return 0;
}

static int
cntr_add(struct fid_cntr *f, uint64_t value)
{
	return cntr_update(f, false, true, value);
}

static int
cntr_set(struct fid_cntr *f, uint64_t value)
{
	return cntr_update(f, false, false, value);
}

static int
cntr_adderr(struct fid_cntr *f, uint64_t value)
{
	return cntr_update(f, true, true, value);
}

static int
cntr_seterr(struct fid_cntr *f, uint64_t value)
{
	return cntr_update(f, true, false, value);
}

/* Until the counter reaches threshold (0), its error count changes (-FI_EAVAIL) or timeout ms
 * pass (-FI_ETIMEDOUT; negative: no limit). */
static int
cntr_wait(struct fid_cntr *f, uint64_t threshold, int timeout)
{
	struct tfi_cntr *c = to_cntr(f);
	uint64_t deadline = timeout < 0 ? UINT64_MAX : tfi_now_ms() + (uint64_t)timeout;
	struct epoll_event ev[4];
	unsigned int busy = 0;
	uint64_t err0, spin_end;

	if (c->epfd < 0)
		return -FI_EINVAL; /* FI_WAIT_NONE */
	spin_end = tfi_spin_start(&c->spin_skip);
	pthread_mutex_lock(&c->dom->lock);
	err0 = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	for (;;) {
		uint64_t t, slice, v, e;
		bool moved;
		int rc;

		pthread_mutex_lock(&c->dom->lock);
		progress(c);
		if (c->value >= threshold) {
			pthread_mutex_unlock(&c->dom->lock);
			return 0;
		}
		if (c->err != err0) {
			pthread_mutex_unlock(&c->dom->lock);
			return -FI_EAVAIL;
		}
		if (spin_end != 0) {
			/* poll a little before sleeping: a wake-up costs tens of microseconds */
			pthread_mutex_unlock(&c->dom->lock);
			if (tfi_spin_again(&spin_end, &c->spin_skip, deadline))
				continue;
			pthread_mutex_lock(&c->dom->lock);
		}
		v = c->value;
		e = c->err;
		rc = cntr_arm(c, v, e);
		moved = c->value != v || c->err != e;
		pthread_mutex_unlock(&c->dom->lock);
		if (rc == -FI_EAGAIN && (moved || ++busy < TFI_CNTR_BUSY))
			continue;
		if (rc != 0 && rc != -FI_EAGAIN)
			return rc;
		busy = 0;
		t = tfi_now_ms();
		if (t >= deadline)
			return -FI_ETIMEDOUT;
		slice = deadline - t < TFI_CNTR_SLICE_MS ? deadline - t : TFI_CNTR_SLICE_MS;
		/* completions stay queued but the counter does not move (a full CQ stops
		 * progress, or they are of other kinds): look again soon, without spinning */
		if (rc == -FI_EAGAIN)
			slice = 1;
		rc = epoll_wait(c->epfd, ev, 4, (int)slice);
		tfi_place_adapt_inside(); /* asleep: waiting, not computing */
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

static int
cntr_close(struct fid *fid)
{
	struct tfi_cntr *c = container_of(fid, struct tfi_cntr, cntr.fid);
	struct tfi_domain *d = c->dom;

	pthread_mutex_lock(&d->lock);
	if (c->n_eps > 0) {
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	d->refs--;
	d->n_cntrs--;
	pthread_mutex_unlock(&d->lock);
	tfi_wait_close(c->epfd, c->sig_fd);
	free(c);
	return 0;
}

static int
cntr_control(struct fid *fid, int command, void *arg)
{
	return tfi_wait_control(container_of(fid, struct tfi_cntr, cntr.fid)->epfd, command, arg);
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = tfi_no_bind,
	.control = cntr_control,
	.ops_open = tfi_no_ops_open,
};

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

int
tfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntrp,
	      void *context)
{
	struct fi_cntr_attr def = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
	struct tfi_domain *d;
	struct tfi_cntr *c;

	if (domain == NULL || cntrp == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(cntrp) != 0)
		return -FI_EFAULT;
	if (attr == NULL)
		attr = &def;
	if (attr->events != FI_CNTR_EVENTS_COMP || attr->flags != 0)
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS; /* wait sets, mutex/cond, yield */
	d = container_of(domain, struct tfi_domain, dom);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -FI_ENOMEM;
	c->epfd = c->sig_fd = -1;
	if (attr->wait_obj != FI_WAIT_NONE && tfi_wait_open(&c->epfd, &c->sig_fd) != 0) {
		free(c);
		return -FI_ENOMEM;
	}
	c->dom = d;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	pthread_mutex_lock(&d->lock);
	if (d->n_cntrs >= TFI_CNTR_MAX) {
		pthread_mutex_unlock(&d->lock);
		if (c->epfd >= 0)
			close(c->epfd);
		if (c->sig_fd >= 0)
			close(c->sig_fd);
		free(c);
		return -FI_ENOSPC;
	}
	d->n_cntrs++;
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*cntrp = &c->cntr;
	return 0;
}

bool
tfi_is_cntr(const struct fid *fid)
{
	return fid != NULL && fid->fclass == FI_CLASS_CNTR && fid->ops == &cntr_fi_ops;
}

/* fi_ep_bind(ep, cntr, flags) before fi_enable; caller holds the lock. */
int
tfi_cntr_bind(struct tfi_ep *ep, struct fid *fid, uint64_t flags)
{
	struct tfi_cntr *c = container_of(fid, struct tfi_cntr, cntr.fid);
	const uint64_t counted = FI_SEND | FI_RECV | FI_WRITE | FI_READ;
	bool known = false;

	if (!tfi_is_cntr(fid) || c->dom != ep->dom)
		return -FI_EINVAL;
	if (flags & (FI_REMOTE_WRITE | FI_REMOTE_READ))
		return -FI_EOPNOTSUPP; /* the target application takes no part in RMA */
	if ((flags & ~counted) || !(flags & counted))
		return -FI_EBADFLAGS;
	for (int k = 0; k < TFI_CNTR_KINDS; k++)
		if ((flags & kind_flag[k]) && ep->cntr[k] != NULL)
			return -FI_EINVAL; /* one counter per kind of operation */
	for (int i = 0; i < c->n_eps; i++)
		known |= c->eps[i] == ep;
	if (!known) {
		if (c->n_eps == TFI_CQ_EPS)
			return -FI_ENOSPC;
		if (ep->vni != NULL) {
			int rc = tfi_wait_watch(c->epfd, trd_vni_fd(ep->vni));

			if (rc != 0)
				return rc;
		}
		c->eps[c->n_eps++] = ep;
	}
	for (int k = 0; k < TFI_CNTR_KINDS; k++)
		if (flags & kind_flag[k])
			ep->cntr[k] = c;
	return 0;
}

/* The endpoint closes: unbind it from its counters. Caller holds the lock. */
void
tfi_cntr_ep_close(struct tfi_ep *ep)
{
	for (int k = 0; k < TFI_CNTR_KINDS; k++) {
		struct tfi_cntr *c = ep->cntr[k];

		if (c == NULL)
			continue;
		for (int j = k; j < TFI_CNTR_KINDS; j++)
			if (ep->cntr[j] == c)
				ep->cntr[j] = NULL;
		for (int i = 0; i < c->n_eps; i++) {
			if (c->eps[i] != ep)
				continue;
			tfi_wait_unwatch(c->epfd, ep);
			c->eps[i] = c->eps[--c->n_eps];
			break;
		}
	}
}

/* fi_trywait on a counter: 0 when it may be waited on, -FI_EAGAIN when it changed since the
 * application last read it (read it first), -FI_EINVAL without a wait object. */
int
tfi_cntr_trywait(struct fid *fid)
{
	struct tfi_cntr *c = container_of(fid, struct tfi_cntr, cntr.fid);
	int rc;

	if (c->epfd < 0)
		return -FI_EINVAL;
	pthread_mutex_lock(&c->dom->lock);
	progress(c);
	if (c->value != c->seen || c->err != c->seen_err)
		rc = -FI_EAGAIN;
	else
		rc = cntr_arm(c, c->value, c->err);
	pthread_mutex_unlock(&c->dom->lock);
	return rc;
}
