/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The element loops of reductions, the one copy in the tree: the software collectives
 * (engine/coll/reduce.c, its table by [operation][type]) and the engines' combining
 * (engine/core/comb.c) both call them. inout[i] = inout[i] OP in[i] for n elements. Elements
 * are moved with memcpy, which the compiler turns into plain loads and stores, so buffers may
 * be unaligned (user buffers). Integer sums and bitwise operations are done in the unsigned
 * type U: sums wrap (two's complement). Floating-point min and max keep the first operand when
 * the comparison is false (a NaN in @p in is not taken). Header only, in the wire layer's api/
 * so that core and coll may both include it.
 */
#ifndef TRD_REDUCE_OPS_H
#define TRD_REDUCE_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The element types: name, type T, the type U of its sums and bitwise operations. */
#define TRD_REDUCE_TYPES(X)                                                                        \
	X(int32, int32_t, uint32_t)                                                                \
	X(int64, int64_t, uint64_t)                                                                \
	X(uint64, uint64_t, uint64_t)                                                              \
	X(float, float, float)                                                                     \
	X(double, double, double)

#define TRD_REDUCE_INT_TYPES(X)                                                                    \
	X(int32, int32_t, uint32_t)                                                                \
	X(int64, int64_t, uint64_t)                                                                \
	X(uint64, uint64_t, uint64_t)

#define TRD_REDUCE_LOOP_(fname, T, EXPR)                                                           \
	static inline void fname(void *inout, const void *in, size_t n)                            \
	{                                                                                          \
		uint8_t *d = inout;                                                                \
		const uint8_t *s = in;                                                             \
		for (size_t i = 0; i < n; i++, d += sizeof(T), s += sizeof(T)) {                   \
			T a, b;                                                                    \
			memcpy(&a, d, sizeof(T));                                                  \
			memcpy(&b, s, sizeof(T));                                                  \
			a = (EXPR);                                                                \
			memcpy(d, &a, sizeof(T));                                                  \
		}                                                                                  \
	}

/* trd_reduce_sum_<name>, trd_reduce_min_<name>, trd_reduce_max_<name> for every type */
#define TRD_REDUCE_ARITH_(name, T, U)                                                              \
	TRD_REDUCE_LOOP_(trd_reduce_sum_##name, T, (T)((U)a + (U)b))                               \
	TRD_REDUCE_LOOP_(trd_reduce_min_##name, T, b < a ? b : a)                                  \
	TRD_REDUCE_LOOP_(trd_reduce_max_##name, T, b > a ? b : a)
TRD_REDUCE_TYPES(TRD_REDUCE_ARITH_)
#undef TRD_REDUCE_ARITH_

/* trd_reduce_band_<name>, trd_reduce_bor_<name>, trd_reduce_bxor_<name> for the integers */
#define TRD_REDUCE_BITS_(name, T, U)                                                               \
	TRD_REDUCE_LOOP_(trd_reduce_band_##name, T, (T)((U)a & (U)b))                              \
	TRD_REDUCE_LOOP_(trd_reduce_bor_##name, T, (T)((U)a | (U)b))                               \
	TRD_REDUCE_LOOP_(trd_reduce_bxor_##name, T, (T)((U)a ^ (U)b))
TRD_REDUCE_INT_TYPES(TRD_REDUCE_BITS_)
#undef TRD_REDUCE_BITS_
#undef TRD_REDUCE_LOOP_

#endif /* TRD_REDUCE_OPS_H */
