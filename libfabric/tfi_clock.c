/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's clock, CLOCK_MONOTONIC, in one place for every file that times something (the
 * placement's measure, the table of recently checked pages, the waits' spins and deadlines).
 *
 * Tried: the TSC scaled by a rate measured against this clock, where the kernel's clocksource
 * is the TSC. On the development machine (a virtual machine) a TSC read cost as much as the
 * vDSO's clock_gettime, which is the same read and a few multiplications: MPI_Sendrecv of 8 B
 * to itself took the same time either way. Not kept.
 */
#include <time.h>

#include "tfi.h"

uint64_t
tfi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t
tfi_now_ms(void)
{
	return tfi_now_ns() / 1000000u;
}
