/* SPDX-License-Identifier: BSD-3-Clause */
/* First-fit offset allocator (vni_alloc.h). Plain C: used by libtoroid_vni and the engine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vni_alloc.h"

int
trd_vni_heap_init(struct trd_vni_heap *h, uint64_t size)
{
	memset(h, 0, sizeof(*h));
	h->cap = 16;
	h->free = calloc(h->cap, sizeof(*h->free));
	if (h->free == NULL)
		return -ENOMEM;
	h->size = size & ~(uint64_t)(TRD_VNI_ALLOC_ALIGN - 1);
	if (h->size != 0) {
		h->free[0].off = 0;
		h->free[0].len = h->size;
		h->n = 1;
	}
	return 0;
}

void
trd_vni_heap_fini(struct trd_vni_heap *h)
{
	free(h->free);
	memset(h, 0, sizeof(*h));
}

int64_t
trd_vni_heap_alloc(struct trd_vni_heap *h, uint64_t len)
{
	len = trd_vni_heap_round(len);
	for (uint32_t i = 0; i < h->n; i++) {
		struct trd_vni_span *s = &h->free[i];
		uint64_t off = s->off;

		if (s->len < len)
			continue;
		s->off += len;
		s->len -= len;
		if (s->len == 0) {
			memmove(s, s + 1, (h->n - i - 1) * sizeof(*s));
			h->n--;
		}
		h->used += len;
		if (h->used > h->hwm)
			h->hwm = h->used;
		return (int64_t)off;
	}
	return -1;
}

int
trd_vni_heap_free(struct trd_vni_heap *h, uint64_t off, uint64_t len)
{
	uint32_t i;

	len = trd_vni_heap_round(len);
	if (off % TRD_VNI_ALLOC_ALIGN != 0 || off > h->size || len > h->size - off || len > h->used)
		return -EINVAL;
	/* first span after the block */
	for (i = 0; i < h->n && h->free[i].off < off; i++)
		;
	if ((i > 0 && h->free[i - 1].off + h->free[i - 1].len > off) ||
	    (i < h->n && off + len > h->free[i].off))
		return -EINVAL; /* overlaps a free span: a double free */
	h->used -= len;
	if (i > 0 && h->free[i - 1].off + h->free[i - 1].len == off) {
		h->free[i - 1].len += len;
		if (i < h->n && off + len == h->free[i].off) {
			h->free[i - 1].len += h->free[i].len;
			memmove(&h->free[i], &h->free[i + 1], (h->n - i - 1) * sizeof(h->free[0]));
			h->n--;
		}
		return 0;
	}
	if (i < h->n && off + len == h->free[i].off) {
		h->free[i].off = off;
		h->free[i].len += len;
		return 0;
	}
	if (h->n == h->cap) {
		struct trd_vni_span *nf = realloc(h->free, 2 * h->cap * sizeof(*nf));

		if (nf == NULL) {
			h->used += len;
			return -ENOMEM; /* the block is leaked, not corrupted */
		}
		h->free = nf;
		h->cap *= 2;
	}
	memmove(&h->free[i + 1], &h->free[i], (h->n - i) * sizeof(h->free[0]));
	h->free[i].off = off;
	h->free[i].len = len;
	h->n++;
	return 0;
}
