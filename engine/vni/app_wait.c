/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni: waiting (docs/vni.md, "Commands, completions, wake-ups"). A poll never sleeps;
 * a wait polls for the interface's spin window, then arms the interface and sleeps on its
 * eventfd, which the engine signals in the round that gave it something: a completion, a
 * message in one of its reception FIFOs. Doorbells are polled.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/vni.h>

#include "app_pvt.h"

#define VNI_SPIN_SKIP 64u /* waits that sleep at once after a contended spin */

int
trd_vni_arm(struct trd_vni *v)
{
	if (v == NULL)
		return -EINVAL;
	__atomic_store_n(&v->seg->app_armed, 1, __ATOMIC_SEQ_CST);
	vnic_kick_owed(v); /* a receive posted quietly: the engine must see it before we sleep */
	if (rte_ring_count(v->cplq) != 0 || v->n_owed > 0) /* an answer owed: poll again */
		return -EBUSY;
	return 0;
}

int
trd_vni_fd(const struct trd_vni *v)
{
	return v == NULL ? -EINVAL : v->efd;
}

unsigned int
trd_vni_pending(const struct trd_vni *v)
{
	return v == NULL ? 0 : v->pending;
}

int
vnic_wait(struct trd_vni *v, const struct vnic_waiter *w, int timeout_ms)
{
	/* in nanoseconds, the sleep rounded up: a wait never ends before its timeout (a deadline
	 * in whole milliseconds ended up to 1 ms early) */
	uint64_t deadline =
		timeout_ms < 0 ? UINT64_MAX : vnic_now_ns() + (uint64_t)timeout_ms * 1000000u;
	uint64_t spin_end;

	/* Poll a little before sleeping: a process woken from a sleep waits for the kernel to
	 * run it again, and a CPU that went idle meanwhile (halted: on a virtual machine the
	 * host must run it again) takes tens of microseconds to; what comes within the window
	 * is taken at once. sched_yield: the engine and the peer may need this CPU to produce
	 * it. */
	vnic_kick_owed(v);
	spin_end = 0;
	if (v->spin_skip > 0)
		v->spin_skip--;
	else if (v->spin_ns != 0)
		spin_end = vnic_now_ns() + v->spin_ns;
	for (;;) {
		struct pollfd pf[2];
		uint64_t t, cnt;
		int got, rc, wait_ms;

		got = w->take(v, w->arg);
		if (got != 0)
			return got;
		if (vnic_check_live(v) != 0)
			return -ECONNRESET;
		if (spin_end != 0) {
			uint64_t t0 = vnic_now_ns();

			if (t0 < spin_end && t0 < deadline) {
				sched_yield();
				/* Other processes want this CPU: the yield ran one of them for a
				 * whole time slice. A yielding process waits behind them for its
				 * turn, where a sleeping one is run at once when woken: stop
				 * spinning, and sleep at once in the next calls (then look again).
				 */
				if (vnic_now_ns() - t0 > v->spin_ns) {
					v->spin_skip = VNI_SPIN_SKIP;
					spin_end = 0;
				}
				continue;
			}
			spin_end = 0; /* once per call: after a sleep, the queue is looked at */
		}
		/* armed, then looked at again: pairs with the engine's write, then its look at
		 * app_armed (svc_vif_wake_all) */
		__atomic_store_n(w->armed, 1, __ATOMIC_SEQ_CST);
		if (w->busy(v, w->arg))
			continue;
		t = vnic_now_ns();
		if (t >= deadline)
			return -ETIMEDOUT;
		wait_ms = deadline == UINT64_MAX ? -1 : (int)((deadline - t + 999999u) / 1000000u);
		pf[0].fd = w->fd;
		pf[0].events = POLLIN;
		pf[1].fd = v->sock;
		pf[1].events = POLLIN;
		pf[0].revents = pf[1].revents = 0;
		rc = poll(pf, 2, wait_ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (pf[0].revents & POLLIN) {
			if (read(w->fd, &cnt, sizeof(cnt)) < 0) {
				/* EAGAIN: someone else read it; nothing to do */
			}
		}
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			char b[64];

			/* the engine never writes after the answer: readable means closed */
			if (recv(v->sock, b, sizeof(b), MSG_DONTWAIT) <= 0 ||
			    (pf[1].revents & POLLHUP))
				v->dead = true;
		}
	}
}

struct cpl_wait {
	struct trd_vni_cpl *cpl;
	unsigned int n;
};

static int
cpl_take(struct trd_vni *v, void *arg)
{
	struct cpl_wait *c = arg;

	return trd_vni_poll(v, c->cpl, c->n);
}

static bool
cpl_busy(const struct trd_vni *v, void *arg)
{
	RTE_SET_USED(arg);
	return rte_ring_count(v->cplq) != 0 || v->n_owed > 0; /* an answer owed: poll again */
}

int
trd_vni_wait(struct trd_vni *v, struct trd_vni_cpl *cpl, unsigned int n, int timeout_ms)
{
	struct cpl_wait c = {.cpl = cpl, .n = n};
	const struct vnic_waiter w = {.take = cpl_take,
				      .busy = cpl_busy,
				      .arg = &c,
				      .fd = v != NULL ? v->efd : -1,
				      .armed = v != NULL ? &v->seg->app_armed : NULL};

	if (v == NULL || cpl == NULL || n == 0)
		return -EINVAL;
	return vnic_wait(v, &w, timeout_ms);
}

uint64_t
trd_vni_doorbell(const struct trd_vni *v, unsigned int idx)
{
	if (v == NULL || idx >= v->seg->n_doorbells)
		return 0;
	return __atomic_load_n(&v->db[idx], __ATOMIC_ACQUIRE);
}

int
trd_vni_doorbell_wait(struct trd_vni *v, unsigned int idx, uint64_t value, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : vnic_now_ms() + (uint64_t)timeout_ms;

	if (v == NULL || idx >= v->seg->n_doorbells)
		return -EINVAL;
	vnic_kick_owed(v); /* a receive posted quietly: its doorbell needs the engine to see it */
	for (unsigned int spin = 0;; spin++) {
		if (__atomic_load_n(&v->db[idx], __ATOMIC_ACQUIRE) >= value)
			return 0;
		if ((spin & 63) == 63) {
			if (vnic_check_live(v) != 0)
				return -ECONNRESET;
			if (vnic_now_ms() >= deadline)
				return -ETIMEDOUT;
			sched_yield();
		}
	}
}
