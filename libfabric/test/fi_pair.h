/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the libfabric tests that fork two processes share (test_fi*.c): failing with the side's
 * name, checking return codes, the pipe between the two sides (bytes and numbered steps), the
 * fork itself (pair_run) with each side's identity (pair_side_env), and taking one completion.
 * Every wait is bounded by WAIT_MS. Define FI_PAIR_PROG (the program's name) and WAIT_MS before
 * including it.
 */
#ifndef TOROID_FI_PAIR_H
#define TOROID_FI_PAIR_H

#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_eq.h>
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

/* ---- the two processes ---- */

/* The engine test_fi.sh starts and the provider it loads are named in the environment: true
 * (and a line on stderr) when they are not, for the caller to report a skip (77). */
static bool __attribute__((unused)) pair_env_missing(void)
{
	if (getenv("FI_PROVIDER_PATH") != NULL && getenv("TOROID_VNI_SOCKET") != NULL)
		return false;
	fprintf(stderr, FI_PAIR_PROG ": set FI_PROVIDER_PATH and TOROID_VNI_SOCKET (test_fi.sh)\n");
	return true;
}

/* Fork: B runs side(false) in the child, A side(true) here, each with its ends of the two pipes
 * and an alarm of @p alarm_s seconds. Returns 0 (PASS printed) when both sides passed. */
static int __attribute__((unused)) pair_run(int (*side)(bool is_a), unsigned int alarm_s)
{
	int ab[2], ba[2], st;
	pid_t pid;

	if (pipe(ab) != 0 || pipe(ba) != 0)
		fail("pipe");
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		alarm(alarm_s);
		from_peer = ab[0];
		to_peer = ba[1];
		exit(side(false));
	}
	alarm(alarm_s);
	from_peer = ba[0];
	to_peer = ab[1];
	side(true);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("process B failed");
	printf(FI_PAIR_PROG ": PASS\n");
	return 0;
}

/* A side's identity: its name, application 1, process 0 (A) or 1 (B), and with @p engine_b B
 * attaches to the second engine (TOROID_VNI_SOCKET_B) when the script started one. */
static void __attribute__((unused)) pair_side_env(bool is_a, bool engine_b)
{
	who = is_a ? "A (1:0)" : "B (1:1)";
	setenv("FI_TOROID_APP", "1", 1);
	setenv("FI_TOROID_PROC", is_a ? "0" : "1", 1);
	setenv("FI_TOROID_CONNECT_MS", "5000", 1);
	if (engine_b && !is_a && getenv("TOROID_VNI_SOCKET_B") != NULL)
		setenv("TOROID_VNI_SOCKET", getenv("TOROID_VNI_SOCKET_B"), 1);
}

/* One completion from @p cq within @p wait_ms: 0 (into e), the error entry's err (positive,
 * *err filled), or -1 when none came. */
static int __attribute__((unused)) pair_cq_take(struct fid_cq *cq, struct fi_cq_data_entry *e,
						struct fi_cq_err_entry *err, int wait_ms)
{
	uint64_t t0 = now_ms();

	for (;;) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(cq, err, 0) != 1)
				fail("fi_cq_readerr");
			return err->err;
		}
		if (n != -FI_EAGAIN)
			fail("fi_cq_read: %zd", n);
		if (now_ms() - t0 > (uint64_t)wait_ms)
			return -1;
	}
}

/* Post @p call until the provider takes it: while it returns -FI_EAGAIN, drive progress with an
 * empty read of @p cq (a struct fid_cq *), for WAIT_MS at most; any other error fails. */
#define FI_POST(cq, call)                                                                          \
	do {                                                                                       \
		uint64_t _d = now_ms() + WAIT_MS;                                                  \
		ssize_t _r;                                                                        \
		while ((_r = (call)) == -FI_EAGAIN) {                                              \
			struct fi_cq_tagged_entry _e;                                              \
			(void)fi_cq_read((cq), &_e, 0);                                            \
			if (now_ms() > _d)                                                         \
				fail("%s: -FI_EAGAIN for %d ms", #call, WAIT_MS);                  \
		}                                                                                  \
		if (_r != 0)                                                                       \
			fail("%s:%d: %s = %zd (%s)", __FILE__, __LINE__, #call, _r,                \
			     fi_strerror((int)-_r));                                               \
	} while (0)

#endif /* TOROID_FI_PAIR_H */
