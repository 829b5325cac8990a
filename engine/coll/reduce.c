/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Element types and reduction operations: a table of combine functions indexed by
 * [operation][type], NULL where the operation does not apply (bitwise on floating point).
 * inout[i] = inout[i] OP in[i]; the loops are in engine/wire/api/reduce_ops.h (buffers may be
 * unaligned).
 */
#include <string.h>

#include <rte_common.h>

#include "coll_pvt.h"
#include "reduce_ops.h" /* engine/wire/api */

#define COLL_TYPES(X)                                                                              \
	X(INT32, int32, int32_t, uint32_t)                                                         \
	X(INT64, int64, int64_t, uint64_t)                                                         \
	X(UINT64, uint64, uint64_t, uint64_t)                                                      \
	X(FLOAT, float, float, float)                                                              \
	X(DOUBLE, double, double, double)

static const size_t type_size[] = {
#define SIZE_(E, name, T, U) [TRD_COLL_##E] = sizeof(T),
	COLL_TYPES(SIZE_)
#undef SIZE_
};
_Static_assert(RTE_DIM(type_size) == TRD_COLL_TYPE_MAX, "a size per type");

static const char *const type_names[] = {
#define NAME_(E, name, T, U) [TRD_COLL_##E] = #name,
	COLL_TYPES(NAME_)
#undef NAME_
};
_Static_assert(RTE_DIM(type_names) == TRD_COLL_TYPE_MAX, "a name per type");

static const char *const op_names[] = {
	[TRD_COLL_SUM] = "sum",   [TRD_COLL_MIN] = "min", [TRD_COLL_MAX] = "max",
	[TRD_COLL_BAND] = "band", [TRD_COLL_BOR] = "bor", [TRD_COLL_BXOR] = "bxor",
};
_Static_assert(RTE_DIM(op_names) == TRD_COLL_OP_MAX, "a name per operation");

#define COLL_INT_TYPES(X)                                                                          \
	X(INT32, int32, int32_t, uint32_t)                                                         \
	X(INT64, int64, int64_t, uint64_t)                                                         \
	X(UINT64, uint64, uint64_t, uint64_t)

/* The loops themselves: wire/api/reduce.h (shared with the engines' combining, core/comb.c). */
static const coll_reduce_fn reduce_fns[TRD_COLL_OP_MAX][TRD_COLL_TYPE_MAX] = {
#define ENTRY_(E, name, T, U)                                                                      \
	[TRD_COLL_SUM][TRD_COLL_##E] = trd_reduce_sum_##name,                                      \
	[TRD_COLL_MIN][TRD_COLL_##E] = trd_reduce_min_##name,                                      \
	[TRD_COLL_MAX][TRD_COLL_##E] = trd_reduce_max_##name,
	COLL_TYPES(ENTRY_)
#undef ENTRY_
#define ENTRY_(E, name, T, U)                                                                      \
	[TRD_COLL_BAND][TRD_COLL_##E] = trd_reduce_band_##name,                                    \
	[TRD_COLL_BOR][TRD_COLL_##E] = trd_reduce_bor_##name,                                      \
	[TRD_COLL_BXOR][TRD_COLL_##E] = trd_reduce_bxor_##name,
	/* the bitwise operations, on the integer types only */
	COLL_INT_TYPES(ENTRY_)
#undef ENTRY_
};

coll_reduce_fn
coll_reduce_fn_of(enum trd_coll_op op, enum trd_coll_type type)
{
	if ((unsigned int)op >= TRD_COLL_OP_MAX || (unsigned int)type >= TRD_COLL_TYPE_MAX)
		return NULL;
	return reduce_fns[op][type];
}

size_t
trd_coll_type_size(enum trd_coll_type type)
{
	return (unsigned int)type < TRD_COLL_TYPE_MAX ? type_size[type] : 0;
}

const char *
trd_coll_type_name(enum trd_coll_type type)
{
	return (unsigned int)type < TRD_COLL_TYPE_MAX ? type_names[type] : NULL;
}

const char *
trd_coll_op_name(enum trd_coll_op op)
{
	return (unsigned int)op < TRD_COLL_OP_MAX ? op_names[op] : NULL;
}

int
trd_coll_op_valid(enum trd_coll_op op, enum trd_coll_type type)
{
	return coll_reduce_fn_of(op, type) != NULL;
}
