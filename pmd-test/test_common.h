/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the pmd tests: EAL start-up for CI (no hugepages) and assertions. */
#ifndef TRD_TEST_COMMON_H
#define TRD_TEST_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#define TEST_SKIP 77

#define T_ASSERT(cond, fmt, ...)                                                                   \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: %s: " fmt "\n", __FILE__, __LINE__, #cond,    \
				##__VA_ARGS__);                                                    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define T_EQ(a, b)                                                                                 \
	T_ASSERT((long long)(a) == (long long)(b), "%lld != %lld", (long long)(a), (long long)(b))

/* Start EAL the way CI can: no hugepages, no PCI, in memory, two lcores at most; @p extra is a
 * NULL-terminated list of more EAL arguments (e.g. --vdev). */
static inline void
test_eal_init(const char *prog, const char *const *extra)
{
	const char *base[] = {
		prog,  "--no-huge",   "--no-pci",      "--no-shconf", "-m",
		"768", "--log-level", "lib.eal:error", "--log-level", "pmd.net.*:error"};
	char *argv[64];
	int argc = 0;

	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		argv[argc++] = (char *)base[i];
	argv[argc++] = (char *)"-l";
	argv[argc++] = (char *)"0-1";
	for (; extra != NULL && *extra != NULL && argc < 62; extra++)
		argv[argc++] = (char *)*extra;
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "SKIP: cannot start EAL\n");
		exit(TEST_SKIP);
	}
}

/* A part of a test that could not run: said on stdout, and the test then ends with
 * test_status() == TEST_SKIP so that meson reports it skipped, never silently passed. */
static int test_parts_skipped;

static inline void
test_skip_part(const char *what)
{
	printf("SKIP: %s\n", what);
	test_parts_skipped++;
}

/* The exit status of a test whose every assertion held: 0, or TEST_SKIP if a part did not run. */
static inline int
test_status(void)
{
	return test_parts_skipped > 0 ? TEST_SKIP : 0;
}

/* A worker lcore for the engine, or RTE_MAX_LCORE if there is none (then tests poll inline). */
static inline unsigned int
test_worker_lcore(void)
{
	return rte_get_next_lcore(-1, 1, 0);
}

/* Deterministic pseudo-random bytes. */
static inline uint64_t
test_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline void
test_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t s = seed | 1;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(test_rand(&s) >> 24);
}

/* A client of this process's telemetry socket (<runtime dir>/dpdk_telemetry.v2): the last
 * answer in reply, NUL-terminated. */
struct test_tel {
	int fd;
	char reply[65536];
};

/* Connect and read the greeting (it must name max_output_len); no socket: exit TEST_SKIP,
 * saying why. Every read waits 5 s at most. */
static inline void
test_tel_connect(struct test_tel *t)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	ssize_t n;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	t->fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	T_ASSERT(t->fd >= 0, "socket: %s", strerror(errno));
	setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(t->fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		fprintf(stderr, "SKIP: no telemetry socket at %s: %s\n", sun.sun_path,
			strerror(errno));
		exit(TEST_SKIP);
	}
	n = read(t->fd, t->reply, sizeof(t->reply) - 1);
	T_ASSERT(n > 0, "no greeting: %s", strerror(errno));
	t->reply[n] = 0;
	T_ASSERT(strstr(t->reply, "\"max_output_len\"") != NULL, "greeting %s", t->reply);
}

/* Send @p cmd; its whole answer (t->reply). */
static inline const char *
test_tel_ask(struct test_tel *t, const char *cmd)
{
	ssize_t n;

	T_ASSERT(write(t->fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd), "write: %s",
		 strerror(errno));
	n = read(t->fd, t->reply, sizeof(t->reply) - 1);
	T_ASSERT(n > 0, "no answer to %s: %s", cmd, strerror(errno));
	t->reply[n] = 0;
	return t->reply;
}

static inline void
test_tel_close(struct test_tel *t)
{
	close(t->fd);
	t->fd = -1;
}

#endif
