/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event queues on the One API node handle (docs/vni.md, "Event queues on a handle"): the
 * queue is this library's, fed by the reception FIFOs bound to it. The engine writes a FIFO's
 * messages and, when the FIFO is armed, its eventfd; the queue turns each message stored after
 * the binding into one TRD_EV_FIFO event (as the engine's own queue does in-process), read
 * from the ring's headers where the message lies, whether the queue's poll or a poll of the
 * FIFO passes it first. Its descriptor is an epoll set of the bound FIFOs' eventfds: readable
 * once the engine signals one of them. One thread uses a handle, its FIFOs and its queues.
 * A doorbell region registered with a queue is told in the queue's first FIFO: the engine
 * writes a TRD_RSLOT_DOORBELL slot there after each write into it, a TRD_EV_DOORBELL event here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_errno.h>

#include "app_node_pvt.h"
#include "app_pvt.h"

#define EQ_WALK 16 /* messages read from a ring per step */

struct an_eq {
	struct an_node *an;
	int epfd;
	int efd; /* the queue's own eventfd in the set: its wake-ups not from a FIFO */
	uint32_t cap, mask, head, tail; /* ev[]: events added at head, taken at tail */
	uint32_t bound;                 /* bit k: the interface's FIFO k */
	bool armed;                     /* since trd_eq_arm(), until a signal is taken */
	uint64_t signals, overflows;
	struct trd_event *ev;
};

_Static_assert(TRD_VNI_MU_RFIFOS_MAX <= 32, "a queue's FIFOs are bits of a word");

static void
eq_add(struct an_eq *q, const struct trd_event *e)
{
	if (q->head - q->tail >= q->cap) {
		q->overflows++; /* as the engine's queue: the event is lost, the message is not */
		return;
	}
	q->ev[q->head++ & q->mask] = *e;
}

/* Events for the messages of @p rx from its event position up to ring position @p end. */
static void
eq_scan(struct an_rx *rx, uint32_t end)
{
	struct trd_vni *v = rx->an->v;
	struct trd_msg m[EQ_WALK];

	/* what the FIFO's reader gave back was read past: never look behind it */
	if ((int32_t)(v->rx_rel[rx->k] - rx->ev_pos) > 0)
		rx->ev_pos = v->rx_rel[rx->k];
	/* (the queue may be ahead of the FIFO's reader) */
	while ((int32_t)(end - rx->ev_pos) > 0 && !rx->ev_bad && !v->rx_bad[rx->k]) {
		bool bad = false;
		int got = vnic_rfifo_walk(v, rx->k, &rx->ev_pos, end, m, EQ_WALK, &bad);

		/* a header the engine never wrote: the reader finds it in its turn, after the
		 * messages before it; the queue stops reading this FIFO */
		rx->ev_bad = bad;
		for (int i = 0; i < got; i++) {
			const struct trd_rslot *h = (const struct trd_rslot *)m[i].data - 1;
			struct trd_event e = {.type = TRD_EV_FIFO,
					      .fifo = rx->id,
					      .len = m[i].len,
					      .value = m[i].user};

			if (h->flags & TRD_RSLOT_DOORBELL) {
				/* a write into one of our doorbell regions */
				e = (struct trd_event){.type = TRD_EV_DOORBELL,
						       .len = m[i].msg_id,
						       .key = h->old,
						       .value = m[i].user};
			} else if (h->flags & TRD_RSLOT_OUTCOME) {
				/* an outcome: its cookie, as the engine's queue has it; none for
				 * an operation closed before it came (freed unseen) */
				const struct an_track *t = an_track_find(rx->an, m[i].user);

				if (t == NULL || t->rx != rx->k + 1)
					continue;
				e.value = t->cookie;
			}
			eq_add(rx->eq, &e);
		}
		if (got <= 0)
			break; /* padding up to the end, or a bad ring */
	}
}

void
an_eq_note(struct an_rx *rx)
{
	if (rx->eq != NULL)
		eq_scan(rx, rx->an->v->rx_peek[rx->k]);
}

void *
an_eq_create(struct trd_node *n, unsigned int size, int *fd)
{
	struct an_eq *q = calloc(1, sizeof(*q));
	uint32_t slots = 1;

	while (slots < size)
		slots <<= 1;
	if (q == NULL || (q->ev = calloc(slots, sizeof(*q->ev))) == NULL) {
		free(q);
		rte_errno = ENOMEM;
		return NULL;
	}
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->epfd < 0 || q->efd < 0 ||
	    epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->efd,
		      &(struct epoll_event){.events = EPOLLIN, .data.u32 = UINT32_MAX}) != 0) {
		rte_errno = errno;
		if (q->epfd >= 0)
			close(q->epfd);
		if (q->efd >= 0)
			close(q->efd);
		free(q->ev);
		free(q);
		return NULL;
	}
	q->an = an_of(n);
	q->mask = slots - 1;
	q->cap = size; /* as the engine's queue: exactly that many */
	*fd = q->epfd;
	return q;
}

/* Make the queue's descriptor readable: a signal not written by the engine. */
static void
eq_wake(struct an_eq *q)
{
	const uint64_t one = 1;

	if (write(q->efd, &one, sizeof(one)) != sizeof(one))
		return; /* (full: readable already) */
}

/* A wait on FIFO @p rx, bound to a queue: it sleeps on the FIFO's own eventfd, which the
 * queue's descriptor watches too. The queue gets the events of what the wait takes (as a poll
 * of the FIFO gives them), and an armed queue whose signal the wait may have taken is woken as
 * if it had come to the queue: one that holds an event, or whose FIFO holds a message it has
 * no event for. */
int
an_eq_fifo_wait(struct an_rx *rx, struct trd_msg *msg, int timeout_ms)
{
	struct an_eq *q = rx->eq;
	struct trd_vni *v = rx->an->v;
	int rc = trd_vni_rfifo_wait(v, rx->k, msg, timeout_ms);
	bool wake;

	if (rc > 0)
		an_eq_note(rx);
	/* (the wait may have read a signal of an event that was there before it) */
	wake = q->armed && q->head != q->tail;
	if (q->armed && !rx->ev_bad) {
		/* armed again as the queue armed it: from the queue's read position */
		if (vnic_rfifo_arm_at(v, rx->k, rx->ev_pos) == -EBUSY)
			wake = true;
	} else {
		vnic_rfifo_disarm(v, rx->k); /* the wait's own arming */
	}
	if (wake)
		eq_wake(q);
	return rc;
}

/* Unbind FIFO @p rx from its queue: the messages it stored meanwhile have their events there,
 * its signal goes with it (an armed queue that got either is woken), and it signals no more. */
static void
eq_unbind(struct an_rx *rx)
{
	struct an_eq *q = rx->eq;
	uint32_t head;
	uint64_t c;
	bool sig;

	if (q == NULL)
		return;
	head = q->head;
	eq_scan(rx, vnic_rfifo_end(rx->an->v, rx->k));
	vnic_rfifo_disarm(rx->an->v, rx->k);
	epoll_ctl(q->epfd, EPOLL_CTL_DEL, rx->an->v->rx_fd[rx->k], NULL);
	sig = read(rx->an->v->rx_fd[rx->k], &c, sizeof(c)) == sizeof(c);
	q->bound &= ~(1u << rx->k);
	rx->eq = NULL;
	if (q->armed && (sig || q->head != head))
		eq_wake(q);
}

void
an_eq_free(void *p)
{
	struct an_eq *q = p;

	for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
		if (q->bound & (1u << k))
			eq_unbind(&q->an->rx[k]);
	close(q->epfd);
	close(q->efd);
	free(q->ev);
	free(q);
}

int
an_eq_bind(struct trd_node *n, uint8_t rfifo, void *p)
{
	struct an_rx *rx = an_rx_of(an_of(n), rfifo);
	struct an_eq *q = p;
	struct epoll_event e = {.events = EPOLLIN};

	if (rx == NULL)
		return -EINVAL;
	if (rx->eq == q)
		return 0;
	e.data.u32 = rx->k;
	if (q != NULL && epoll_ctl(q->epfd, EPOLL_CTL_ADD, rx->an->v->rx_fd[rx->k], &e) != 0)
		return -errno; /* (still bound where it was) */
	eq_unbind(rx);
	if (q == NULL)
		return 0;
	q->bound |= 1u << rx->k;
	rx->eq = q;
	/* events for what comes from now on, as a FIFO bound in-process */
	rx->ev_pos = vnic_rfifo_end(rx->an->v, rx->k);
	rx->ev_bad = false;
	/* bound to an armed queue: it signals as the others do; a message that came before
	 * the arming was seen makes the signal here */
	if (q->armed && vnic_rfifo_arm_at(rx->an->v, rx->k, rx->ev_pos) == -EBUSY) {
		vnic_rfifo_disarm(rx->an->v, rx->k);
		eq_wake(q);
	}
	return 0;
}

/* The queue and its FIFOs disarmed; @p signalled: its signal came, counted. */
static void
eq_disarm_all(struct an_eq *q, bool signalled)
{
	q->armed = false;
	for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
		if (q->bound & (1u << k))
			vnic_rfifo_disarm(q->an->v, k);
	if (signalled)
		q->signals++;
}

/* Take the signals of the bound FIFOs and the queue's own: did one come? */
static bool
eq_drain(struct an_eq *q)
{
	uint64_t c;
	bool signalled = read(q->efd, &c, sizeof(c)) == sizeof(c);

	for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
		if ((q->bound & (1u << k)) && read(q->an->v->rx_fd[k], &c, sizeof(c)) == sizeof(c))
			signalled = true;
	return signalled;
}

/* Doorbell slots at the head of @p rx, their events taken and nothing of the FIFO held: its
 * reader would free them unseen; a queue alone (TRD_WAIT_EQ) gives them back itself, so that
 * a FIFO no one polls never fills with them. */
static void
eq_give_back(struct an_rx *rx)
{
	struct trd_vni *v = rx->an->v;
	uint32_t pos = v->rx_peek[rx->k];

	if (rx->held != 0 || pos != v->rx_rel[rx->k] || v->rx_bad[rx->k])
		return;
	while ((int32_t)(rx->ev_pos - pos) > 0) {
		uint32_t at = pos;
		struct trd_msg m;
		bool bad = false;
		int got = vnic_rfifo_walk(v, rx->k, &at, rx->ev_pos, &m, 1, &bad);

		if (got < 0 || bad ||
		    (got == 1 &&
		     !(((const struct trd_rslot *)m.data - 1)->flags & TRD_RSLOT_DOORBELL)))
			break; /* a message, for its reader */
		pos = at;      /* past a doorbell slot, or padding up to the end */
	}
	if (pos != v->rx_peek[rx->k]) {
		v->rx_peek[rx->k] = pos;
		trd_vni_rfifo_release(v, rx->k);
	}
}

/* Events for every message the bound FIFOs hold. Armed, their signals first (a message after
 * one makes the next): the first after an arming is the queue's one signal, the others are
 * disarmed (one on its way is taken unseen). */
static void
eq_fill(struct an_eq *q)
{
	if (q->armed && eq_drain(q))
		eq_disarm_all(q, true);
	for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
		if (q->bound & (1u << k)) {
			eq_scan(&q->an->rx[k], vnic_rfifo_end(q->an->v, k));
			eq_give_back(&q->an->rx[k]);
		}
}

int
an_eq_arm(void *p)
{
	struct an_eq *q = p;

	eq_fill(q);
	if (q->head != q->tail)
		return -EBUSY;
	eq_drain(q); /* a signal of an earlier arming, late: not this one's */
	q->armed = true;
	for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
		if ((q->bound & (1u << k)) && !q->an->rx[k].ev_bad &&
		    vnic_rfifo_arm_at(q->an->v, k, q->an->rx[k].ev_pos) == -EBUSY) {
			/* a message came meanwhile: its event is there now */
			an_eq_disarm(q);
			eq_fill(q);
			return -EBUSY;
		}
	return 0;
}

void
an_eq_disarm(void *p)
{
	struct an_eq *q = p;

	/* a signal that came while armed is the queue's (trd_eq_wait() disarms after its
	 * sleep, before it polls) */
	if (q->armed)
		eq_disarm_all(q, eq_drain(q));
}

int
an_eq_poll(void *p, struct trd_event *ev, unsigned int n)
{
	struct an_eq *q = p;
	unsigned int got = 0;

	eq_fill(q);
	while (got < n && q->tail != q->head)
		ev[got++] = q->ev[q->tail++ & q->mask];
	/* (a queue whose engine is gone says so, as a FIFO's wait does) */
	if (got == 0 && vnic_check_live(q->an->v) != 0)
		return -ECONNRESET;
	return (int)got;
}

void
an_eq_stats(const void *p, uint64_t *signals, uint64_t *overflows)
{
	const struct an_eq *q = p;

	*signals = q->signals;
	*overflows = q->overflows;
}

int
an_eq_doorbell(struct trd_node *n, void *addr, size_t len, void *p, uint64_t *key)
{
	struct an_node *a = an_of(n);
	struct an_eq *q = p;

	if (q->bound == 0)
		return -EINVAL; /* bind a FIFO to the queue first */
	/* its writes are told in the queue's first FIFO */
	*key = 0;
	return trd_vni_mr_reg(a->v, addr, len,
			      TRD_VNI_MR_MU | TRD_VNI_MR_OFFSET | TRD_VNI_MR_REMOTE_WRITE |
				      TRD_VNI_MR_DOORBELL |
				      TRD_VNI_MR_DB_FIFO(__builtin_ctz(q->bound)),
			      key);
}
