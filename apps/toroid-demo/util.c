/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: random data (a seeded stream per transfer) and formatting. */
#include "demo.h"

/* ---- random data: splitmix64 seeds an xorshift64* stream per transfer ---- */

uint64_t
demo_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t
demo_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

void
demo_fill(uint8_t *p, size_t len, uint64_t *s)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = demo_rand(s);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = demo_rand(s);

		memcpy(p + i, &v, len - i);
	}
}

/* An odd (so unaligned) offset in [DEMO_GUARD, DEMO_GUARD + DEMO_OFF_SPAN). */
size_t
demo_offset(uint64_t *s)
{
	return (DEMO_GUARD + demo_rand(s) % DEMO_OFF_SPAN) | 1;
}

/* ---- formatting ---- */

const char *
demo_size_str(uint32_t v, char *buf, size_t len)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, len, "%uM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, len, "%uK", v >> 10);
	else
		snprintf(buf, len, "%u", v);
	return buf;
}

const char *
demo_coord_str(struct trd_coord c, char *buf, size_t len)
{
	snprintf(buf, len, "(%u,%u,%u)", c.x, c.y, c.z);
	return buf;
}

/* Report one problem of a transfer; the transfer counts as failed. */
void
demo_xfail(struct demo_xfer *x, const char *fmt, ...)
{
	char a[16], b[16], s[16];
	va_list ap;

	printf("FAIL %s %s -> %s, %s B: ", demo_ops[x->op].name,
	       demo_coord_str(x->org->coord, a, sizeof(a)),
	       demo_coord_str(x->tgt->coord, b, sizeof(b)), demo_size_str(x->len, s, sizeof(s)));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	x->failed = true;
}
