/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the provider's unit tests (test_fi_copy.c, test_fi_place.c: provider code linked in,
 * no engine) share: CHECK() counts a failure with its place and goes on, so one run reports
 * every broken case.
 */
#ifndef TOROID_FI_UNIT_H
#define TOROID_FI_UNIT_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#endif
