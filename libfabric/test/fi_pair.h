/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the libfabric tests that fork two processes share (test_fi.c, test_fi_rma.c): failing
 * with the side's name, checking return codes, and the pipe between the two sides (bytes and
 * numbered steps). Every wait is bounded by WAIT_MS. Define FI_PAIR_PROG (the program's name)
 * and WAIT_MS before including it; set who, to_peer and from_peer in each side.
 */
#ifndef TOROID_FI_PAIR_H
#define TOROID_FI_PAIR_H

#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

static const char *who = "?";
static int to_peer = -1, from_peer = -1;

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, FI_PAIR_PROG " %s: FAIL: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define CHECK_RC(call, want)                                                                       \
	do {                                                                                       \
		long _rc = (long)(call);                                                           \
		if (_rc != (long)(want))                                                           \
			fail("%s:%d: %s = %ld (%s), expected %ld", __FILE__, __LINE__, #call, _rc, \
			     fi_strerror((int)-_rc), (long)(want));                                \
	} while (0)

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the pipe between the two processes: bytes and steps ---- */

static void __attribute__((unused)) put(const void *b, size_t n)
{
	if (write(to_peer, b, n) != (ssize_t)n)
		fail("pipe write");
}

static void __attribute__((unused)) get(void *b, size_t n)
{
	struct pollfd pf = {.fd = from_peer, .events = POLLIN};
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (poll(&pf, 1, WAIT_MS) != 1)
			fail("peer silent for %d ms", WAIT_MS);
		r = read(from_peer, (char *)b + got, n - got);
		if (r <= 0)
			fail("peer gone");
		got += (size_t)r;
	}
}

static void __attribute__((unused)) sync_step(int step)
{
	int s;

	put(&step, sizeof(step));
	get(&s, sizeof(s));
	if (s != step)
		fail("out of step: %d vs %d", s, step);
}

#endif /* TOROID_FI_PAIR_H */
