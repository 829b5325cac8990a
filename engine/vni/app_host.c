/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni: what the engine tells an attached process about the host, read from the
 * segment (include/toroid/vni.h, docs/vni.md "The segment"): how many processes poll beside
 * it, and the CPUs the engine's polling thread runs on; and what the process tells the engine
 * about itself: how much it computes.
 */
#include <errno.h>

#include "app_pvt.h"

unsigned int
trd_vni_busy_procs(const struct trd_vni *v)
{
	return v == NULL ? 0 : __atomic_load_n(&v->seg->engine_procs, __ATOMIC_RELAXED);
}

int
trd_vni_engine_cpus(const struct trd_vni *v, uint64_t mask[TRD_VNI_CPU_WORDS])
{
	int n = 0;

	if (v == NULL || mask == NULL)
		return -EINVAL;
	for (unsigned int w = 0; w < TRD_VNI_CPU_WORDS; w++) {
		mask[w] = __atomic_load_n(&v->seg->engine_cpus[w], __ATOMIC_RELAXED);
		n += __builtin_popcountll(mask[w]);
	}
	return n;
}

int
trd_vni_hint_compute(struct trd_vni *v, unsigned int permille, unsigned int flags)
{
	uint32_t word;

	if (v == NULL || permille > 1000 || (flags & ~TRD_VNI_HINT_MOVABLE) != 0)
		return -EINVAL;
	word = VNI_COMPUTE_TOLD | flags << VNI_COMPUTE_FLAGS_SHIFT | permille;
	/* a shared line the engine reads every 10 ms: written only when it changes */
	if (__atomic_load_n(&v->seg->app_compute, __ATOMIC_RELAXED) != word)
		__atomic_store_n(&v->seg->app_compute, word, __ATOMIC_RELAXED);
	return 0;
}
