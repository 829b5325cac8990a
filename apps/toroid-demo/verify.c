/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: verification: every byte, and the guard bytes around a written range. */
#include "demo.h"

/* ---- verification ---- */

/* Compare @p len bytes; report the first difference. */
bool
demo_check_bytes(struct demo_xfer *x, const char *what, const uint8_t *got, const uint8_t *want,
		 size_t len)
{
	size_t first = SIZE_MAX, ndiff = 0;

	if (memcmp(got, want, len) == 0)
		return true;
	for (size_t i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			if (first == SIZE_MAX)
				first = i;
			ndiff++;
		}
	}
	demo_xfail(x, "%s: mismatch at byte %zu (got 0x%02x, want 0x%02x), %zu of %zu bytes differ",
		   what, first, got[first], want[first], ndiff, len);
	return false;
}

/* Set up the destination: random guards around the range, the range itself the complement of
 * what should arrive, so every byte must change. */
void
demo_dst_prepare(struct demo_xfer *x, uint8_t *buf, size_t off, const uint8_t *want,
		 struct demo_guard *g)
{
	demo_fill(g->before, sizeof(g->before), &x->rng);
	demo_fill(g->after, sizeof(g->after), &x->rng);
	memcpy(buf + off - DEMO_GUARD, g->before, DEMO_GUARD);
	for (size_t i = 0; i < x->len; i++)
		buf[off + i] = (uint8_t)~want[i];
	memcpy(buf + off + x->len, g->after, DEMO_GUARD);
}

/* Check the range and the bytes just before and after it. */
void
demo_dst_check(struct demo_xfer *x, const char *what, const uint8_t *buf, size_t off,
	       const uint8_t *want, const struct demo_guard *g)
{
	demo_check_bytes(x, what, buf + off, want, x->len);
	for (int i = DEMO_GUARD - 1; i >= 0; i--) {
		if (buf[off - DEMO_GUARD + i] != g->before[i]) {
			demo_xfail(x, "%s: byte %d before the written range was overwritten", what,
				   i - DEMO_GUARD);
			break;
		}
	}
	for (int i = 0; i < DEMO_GUARD; i++) {
		if (buf[off + x->len + i] != g->after[i]) {
			demo_xfail(x, "%s: byte %d after the written range was overwritten", what,
				   i);
			break;
		}
	}
}
