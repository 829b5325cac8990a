/* SPDX-License-Identifier: BSD-3-Clause */
/* The offset allocator of the buffer pool and the staging area (engine/vni/vni_alloc.c):
 * random allocations and frees against a shadow map, coalescing back to one span, the bound,
 * double frees refused. Plain C, no DPDK. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vni_alloc.h"

#define AREA  (1u << 20)
#define SLOTS 512

static int fails;

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

int
main(void)
{
	static uint8_t owner[AREA / TRD_VNI_ALLOC_ALIGN]; /* which slot owns each unit, +1 */
	struct trd_vni_heap h;
	int64_t off[SLOTS];
	uint64_t len[SLOTS];
	uint64_t s = 88172645463325252ULL;
	unsigned long ops = 0, full = 0;

	CHECK(trd_vni_heap_init(&h, AREA) == 0, "init");
	for (int i = 0; i < SLOTS; i++)
		off[i] = -1;
	for (int round = 0; round < 200000; round++) {
		int i;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		i = (int)(s % SLOTS);
		if (off[i] < 0) {
			uint64_t want = (s >> 20) % (s & 1 ? 64 : 16384);
			uint64_t r = trd_vni_heap_round(want);

			off[i] = trd_vni_heap_alloc(&h, want);
			if (off[i] < 0) {
				full++;
				continue;
			}
			len[i] = want;
			CHECK(off[i] % TRD_VNI_ALLOC_ALIGN == 0 && (uint64_t)off[i] + r <= AREA,
			      "block %lld+%llu outside the area", (long long)off[i],
			      (unsigned long long)r);
			for (uint64_t u = (uint64_t)off[i] / 64; u < ((uint64_t)off[i] + r) / 64;
			     u++) {
				CHECK(owner[u] == 0, "unit %llu handed out twice",
				      (unsigned long long)u);
				owner[u] = 1;
			}
		} else {
			uint64_t r = trd_vni_heap_round(len[i]);

			for (uint64_t u = (uint64_t)off[i] / 64; u < ((uint64_t)off[i] + r) / 64;
			     u++)
				owner[u] = 0;
			CHECK(trd_vni_heap_free(&h, (uint64_t)off[i], len[i]) == 0, "free");
			CHECK(trd_vni_heap_free(&h, (uint64_t)off[i], len[i]) == -EINVAL,
			      "double free accepted");
			off[i] = -1;
		}
		CHECK(h.used <= h.size && h.hwm <= h.size, "used %llu above the bound",
		      (unsigned long long)h.used);
		ops++;
	}
	for (int i = 0; i < SLOTS; i++)
		if (off[i] >= 0)
			trd_vni_heap_free(&h, (uint64_t)off[i], len[i]);
	CHECK(h.used == 0 && h.n == 1 && h.free[0].off == 0 && h.free[0].len == AREA,
	      "not back to one free span: used %llu, %u spans", (unsigned long long)h.used, h.n);
	CHECK(trd_vni_heap_alloc(&h, AREA) == 0, "the whole area in one block");
	CHECK(trd_vni_heap_alloc(&h, 1) == -1, "beyond the bound");
	CHECK(trd_vni_heap_free(&h, 0, AREA) == 0, "free all");
	CHECK(trd_vni_heap_free(&h, 64, 64) == -EINVAL, "free of a free block");
	trd_vni_heap_fini(&h);
	printf("vni_alloc: %lu operations (%lu refused for want of room), %d failures\n", ops, full,
	       fails);
	return fails ? 1 : 0;
}
