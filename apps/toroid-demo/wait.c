/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: waiting: counters, messages, completions, in slices that notice SIGINT. */
#include "demo.h"

/* ---- waiting ---- */

/* Wait for a counter to reach zero, in slices so that a signal is noticed. */
static int
demo_counter_wait(struct trd_node *n, uint16_t id, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t now = trd_time_us();
		uint64_t slice =
			deadline > now ? RTE_MIN(deadline - now, (uint64_t)DEMO_SLICE_US) : 0;
		int rc = trd_counter_wait(n, id, slice);

		if (rc != -ETIMEDOUT)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
	}
}

int
demo_rec_fifo_wait(struct trd_rec_fifo *rf, struct trd_msg **msg, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t now = trd_time_us();
		uint64_t slice =
			deadline > now ? RTE_MIN(deadline - now, (uint64_t)DEMO_SLICE_US) : 0;
		int rc = trd_rec_fifo_wait(rf, msg, slice);

		if (rc != -ETIMEDOUT)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
	}
}

/* Post one descriptor, retrying while the FIFO is full. */
int
demo_inject(struct demo_node *dn, const struct trd_desc *d, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		int rc = trd_inject(dn->inj, d);

		if (rc != -ENOBUFS && rc != -EAGAIN)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
		trd_node_progress(dn->node);
	}
}

/* Wait for a doorbell word to hold @p value, in slices so that a signal is noticed. */
int
demo_doorbell_wait(struct trd_mr *db, uint64_t offset, uint64_t value, enum trd_wait_how how,
		   uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t now = trd_time_us();
		uint64_t slice =
			deadline > now ? RTE_MIN(deadline - now, (uint64_t)DEMO_SLICE_US) : 0;
		int rc = trd_doorbell_wait(db, offset, value, how, slice);

		if (rc != -ETIMEDOUT)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
	}
}

/* Post a put with its reflection descriptor, retrying while the FIFO is full or too many
 * completions are outstanding. *tsc: when the successful call started. */
int
demo_inject_reflect(struct demo_node *dn, const struct trd_desc *d, const struct trd_cpl_spec *spec,
		    uint64_t timeout_us, uint64_t *tsc)
{
	uint64_t deadline = trd_time_us() + timeout_us;

	for (;;) {
		uint64_t t = rte_rdtsc();
		int rc = trd_inject_reflect(dn->rinj, d, spec);

		if (rc == 0)
			*tsc = t;
		if (rc != -ENOBUFS && rc != -EAGAIN && rc != -ENOSPC)
			return rc;
		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		if (demo_signal)
			return -EINTR;
		trd_node_progress(dn->node);
	}
}

/*
 * Wait for counter @p id of @p dn and report how it went. The wait is short when an earlier
 * wait of the same transfer already failed. Returns 0, -EINTR, or another negative errno
 * (already reported).
 */
int
demo_xwait_counter(struct demo_xfer *x, struct demo_node *dn, uint16_t id, const char *what)
{
	uint64_t tmo = x->failed ? RTE_MIN(x->dm->opt.timeout_us, (uint64_t)DEMO_SHORT_WAIT_US)
				 : x->dm->opt.timeout_us;
	int64_t v = 0;
	int rc = demo_counter_wait(dn->node, id, tmo);

	if (rc == 0 || rc == -EINTR)
		return rc;
	if (trd_counter_read(dn->node, id, &v) != 0)
		v = INT64_MIN;
	if (rc == -ETIMEDOUT)
		demo_xfail(x,
			   "timeout after %" PRIu64 " ms waiting for the %s (%" PRId64
			   " of %u bytes still outstanding)",
			   tmo / 1000, what, v, x->len);
	else if (rc == -ERANGE)
		demo_xfail(x,
			   "wrong counter value: the %s went below zero (%" PRId64
			   ", %u bytes expected): more bytes than sent",
			   what, v, x->len);
	else
		demo_xfail(x, "waiting for the %s: %s", what, rte_strerror(-rc));
	return rc;
}
