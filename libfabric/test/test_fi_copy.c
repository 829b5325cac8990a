/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's safe copies (tfi_copy.c), without an engine: what the table of recently
 * checked pages trusts and what it does not, and the pid after fork.
 *
 *   - bytes are copied exactly, through the kernel and from trusted pages, across a page edge;
 *   - a page the kernel copied from within FI_TOROID_TRUST_US is copied with memcpy: after
 *     mprotect(PROT_NONE) the next copy crashes (SIGSEGV in a child), where with the window 0
 *     it is -FI_EFAULT, and after the window it is -FI_EFAULT again;
 *   - a page checked for reading is not trusted for writing: -FI_EFAULT, not a crash;
 *   - a 16 KiB copy over 5 pages is trusted page by page; a copy over 18 pages never is;
 *   - tfi_copy_iov of 70000 B between two buffers the kernel copied within the window is a
 *     memcpy (a page of the source protected since: SIGSEGV), into another buffer it is not
 *     (-FI_EFAULT), nor with the window 0;
 *   - in a forked child, the copies read the child's memory, not the parent's (the cached pid
 *     is forgotten at fork).
 * Exit 0 on success, 1 on a failure.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tfi.h"
#include "fi_unit.h"

struct fi_provider tfi_prov = {.name = "toroid"};
struct tfi_params tfi_params = {.trust_us = TFI_TRUST_DEFAULT_US};

static uint8_t *
page_map(size_t n)
{
	uint8_t *p =
		mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* Run @p fn in a child; its exit status, or 128 + the signal that killed it. */
static int
in_child(int (*fn)(uint8_t *), uint8_t *arg)
{
	pid_t c = fork();
	int st;

	if (c < 0) {
		perror("fork");
		exit(1);
	}
	if (c == 0) {
		struct rlimit no_core = {0, 0};

		setrlimit(RLIMIT_CORE, &no_core); /* an expected crash leaves no core file */
		signal(SIGSEGV, SIG_DFL); /* whatever handler a library installed: die of it */
		_exit(fn(arg));
	}
	if (waitpid(c, &st, 0) != c)
		return -1;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

static uint8_t sink[4096];

static int
read_page(uint8_t *p)
{
	return tfi_copy_in(sink, p, 64) == -FI_EFAULT ? 0 : 2;
}

static int
write_page(uint8_t *p)
{
	return tfi_copy_out(p, sink, 64) == -FI_EFAULT ? 0 : 2;
}

static uint8_t big_sink[73728];

static int
read_16k(uint8_t *p)
{
	return tfi_copy_in(big_sink, p + 100, 16384) == -FI_EFAULT ? 0 : 2;
}

static int
read_70k(uint8_t *p)
{
	return tfi_copy_in(big_sink, p + 100, 70000) == -FI_EFAULT ? 0 : 2;
}

/* A 16 KiB copy (5 pages) is trusted page by page; one over 18 pages never is. */
static void
test_trust_pages(void)
{
	uint8_t *p = page_map(20);

	tfi_params.trust_us = 1000000;
	CHECK(tfi_copy_in(big_sink, p + 100, 16384) == 0, "16 KiB copy_in");
	CHECK(tfi_copy_in(big_sink, p + 100, 70000) == 0, "70000 B copy_in");
	mprotect(p + 3 * 4096, 4096, PROT_NONE);
	CHECK(in_child(read_16k, p) == 128 + SIGSEGV,
	      "16 KiB over 5 pages checked within the window: expected the memcpy (SIGSEGV)");
	CHECK(in_child(read_70k, p) == 0, "a copy over 18 pages must go through the kernel");
	munmap(p, 20 * 4096);
	tfi_params.trust_us = TFI_TRUST_DEFAULT_US;
}

static uint8_t *rs, *rd, *rd2;

static int
copy_range(uint8_t *dst)
{
	struct iovec d = {.iov_base = dst + 100, .iov_len = 70000};
	struct iovec s = {.iov_base = rs + 100, .iov_len = 70000};

	return tfi_copy_iov(&d, 1, &s, 1, 70000) == -FI_EFAULT ? 0 : 2;
}

/* A copy over more pages than the table holds, between two buffers checked as a whole. */
static void
test_trust_ranges(void)
{
	struct iovec d = {.iov_base = NULL, .iov_len = 70000};
	struct iovec s = {.iov_base = NULL, .iov_len = 70000};

	rs = page_map(20);
	rd = page_map(20);
	rd2 = page_map(20);
	for (int i = 0; i < 20 * 4096; i++)
		rs[i] = (uint8_t)(i * 7);
	d.iov_base = rd + 100;
	s.iov_base = rs + 100;
	tfi_params.trust_us = 1000000;
	CHECK(tfi_copy_iov(&d, 1, &s, 1, 70000) == 0 && memcmp(rd + 100, rs + 100, 70000) == 0,
	      "70000 B copy_iov");
	mprotect(rs + 5 * 4096, 4096, PROT_NONE);
	CHECK(in_child(copy_range, rd) == 128 + SIGSEGV,
	      "70000 B between buffers checked within the window: expected the memcpy (SIGSEGV)");
	CHECK(in_child(copy_range, rd2) == 0, "into a buffer never checked: through the kernel");
	tfi_params.trust_us = 0;
	CHECK(in_child(copy_range, rd) == 0, "with the window 0: through the kernel");
	tfi_params.trust_us = TFI_TRUST_DEFAULT_US;
	munmap(rs, 20 * 4096);
	munmap(rd, 20 * 4096);
	munmap(rd2, 20 * 4096);
}

static void
test_bytes(void)
{
	uint8_t *p = page_map(2), out[1024], in[1024];

	for (int round = 0; round < 2; round++) { /* through the kernel, then trusted */
		for (size_t k = 0; k < sizeof(in); k++)
			in[k] = (uint8_t)(k * 7 + (size_t)round);
		CHECK(tfi_copy_out(p + 4096 - 300, in, sizeof(in)) == 0, "copy_out across pages");
		memset(out, 0, sizeof(out));
		CHECK(tfi_copy_in(out, p + 4096 - 300, sizeof(out)) == 0, "copy_in across pages");
		CHECK(memcmp(in, out, sizeof(in)) == 0, "bytes differ (round %d)", round);
	}
	/* kept mapped: a later mapping at the same address would inherit its trusted pages,
	 * which is the trade tfi_copy.c documents, not what the next tests look at */
}

static void
test_trust(void)
{
	uint8_t *p = page_map(1);
	struct timespec t0, t;

	/* window 0: every copy through the kernel */
	tfi_params.trust_us = 0;
	CHECK(tfi_copy_in(sink, p, 64) == 0, "copy_in");
	mprotect(p, 4096, PROT_NONE);
	CHECK(in_child(read_page, p) == 0, "window 0: a protected page must be -FI_EFAULT");
	mprotect(p, 4096, PROT_READ | PROT_WRITE);

	/* a page checked within the window is copied with memcpy: the trade documented */
	tfi_params.trust_us = 1000000;
	CHECK(tfi_copy_in(sink, p, 64) == 0, "copy_in");
	mprotect(p, 4096, PROT_NONE);
	CHECK(in_child(read_page, p) == 128 + SIGSEGV,
	      "a page checked within the window must be copied with memcpy (SIGSEGV here)");
	/* checked for reading only: a write still goes through the kernel */
	mprotect(p, 4096, PROT_READ);
	CHECK(in_child(write_page, p) == 0, "a page checked for reading trusted for writing");
	mprotect(p, 4096, PROT_READ | PROT_WRITE);

	/* after the window: through the kernel again */
	tfi_params.trust_us = 1000;
	CHECK(tfi_copy_in(sink, p, 64) == 0, "copy_in");
	mprotect(p, 4096, PROT_NONE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do /* bounded: 2 ms of the clock */
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000000L);
	CHECK(in_child(read_page, p) == 0, "after the window a protected page must be -FI_EFAULT");
	munmap(p, 4096);
	tfi_params.trust_us = TFI_TRUST_DEFAULT_US;
}

static int
fork_reads_own(uint8_t *p)
{
	uint8_t v = 0;

	p[0] = 'C';
	tfi_params.trust_us = 0; /* through the kernel, with the pid */
	if (tfi_copy_in(&v, p, 1) != 0)
		return 3;
	return v == 'C' ? 0 : 4;
}

static void
test_fork(void)
{
	uint8_t *p = page_map(1), v = 0;
	int rc;

	p[0] = 'P';
	CHECK(tfi_copy_in(&v, p, 1) == 0 && v == 'P', "copy_in in the parent");
	rc = in_child(fork_reads_own, p);
	CHECK(rc == 0, "a forked child's copy: %d (4: it read the parent's memory)", rc);
	munmap(p, 4096);
}

int
main(void)
{
	test_bytes();
	test_trust();
	test_trust_pages();
	test_trust_ranges();
	test_fork();
	if (failures) {
		fprintf(stderr, "test_fi_copy: %d failures\n", failures);
		return 1;
	}
	printf("test_fi_copy: ok\n");
	return 0;
}
