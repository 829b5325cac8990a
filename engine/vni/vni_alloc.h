/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small first-fit allocator of offsets in an area [0, size): the application's buffer pool
 * and the engine's staging area. Its bookkeeping lives in the caller's private memory, never
 * in the shared area, and it hands out offsets, not pointers. Blocks are multiples of
 * TRD_VNI_ALLOC_ALIGN; neighbouring free blocks are merged.
 */
#ifndef TRD_VNI_ALLOC_H
#define TRD_VNI_ALLOC_H

#include <stdint.h>

#define TRD_VNI_ALLOC_ALIGN 64

struct trd_vni_span {
	uint64_t off, len;
};

struct trd_vni_heap {
	uint64_t size;   /* managed bytes */
	uint64_t used;   /* bytes handed out */
	uint64_t hwm;    /* most bytes ever handed out at once */
	uint32_t n, cap; /* free spans, sorted by offset */
	struct trd_vni_span *free;
};

/* Manage [0, size). @return 0 or -ENOMEM. */
int trd_vni_heap_init(struct trd_vni_heap *h, uint64_t size);
void trd_vni_heap_fini(struct trd_vni_heap *h);
/* Take len bytes (rounded up to the alignment; 0 takes one unit). @return the offset, or -1. */
int64_t trd_vni_heap_alloc(struct trd_vni_heap *h, uint64_t len);
/* Give back a block taken with @p len (the same length asked). @return 0 or -EINVAL. */
int trd_vni_heap_free(struct trd_vni_heap *h, uint64_t off, uint64_t len);
/* The rounded length a request of @p len takes. */
static inline uint64_t
trd_vni_heap_round(uint64_t len)
{
	if (len == 0)
		len = 1;
	return (len + TRD_VNI_ALLOC_ALIGN - 1) & ~(uint64_t)(TRD_VNI_ALLOC_ALIGN - 1);
}

#endif /* TRD_VNI_ALLOC_H */
