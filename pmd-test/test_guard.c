/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst guard that net_memif bursts run under (engine/link/guard.c), through
 * trd_link_guard_probe(): a read of unmapped memory (SIGSEGV) or past the end of a mapped file
 * (SIGBUS) inside the guard returns -EFAULT, again and again; a fault outside it still ends the
 * process the way it would have without the guard (the default action, or the handler that
 * was installed before, which the guard passes it on to), and so does a SIGSEGV or SIGBUS sent
 * with kill() (no faulting instruction to run again), unless it was ignored before.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toroid/testing.h>

#include "test_common.h"

static uint8_t *
unmapped_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p =
		mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
	T_EQ(munmap(p, (size_t)pg), 0);
	return p;
}

static void
on_segv_exit42(int sig)
{
	(void)sig;
	_exit(42);
}

/* In a child: @p pre(sig, flag), then the guard installed (the first probe, so after what
 * @p pre set up), then @p body(sig, flag); the child's wait status. It exits 3 when the probe
 * did not fault, 7 when @p body returned. */
static int
in_child(void (*pre)(int, bool), void (*body)(int, bool), int sig, bool flag)
{
	pid_t pid = fork();
	int st;

	T_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		uint8_t v;

		pre(sig, flag);
		if (trd_link_guard_probe(unmapped_page(), &v) != -EFAULT)
			_exit(3);
		body(sig, flag);
		_exit(7); /* reached only if the body did not end the process */
	}
	T_EQ(waitpid(pid, &st, 0), pid);
	return st;
}

/* Before the guard: the child's own SIGSEGV handler (flag), or @p sig ignored (flag). */
static void
own_handler(int sig, bool flag)
{
	(void)sig;
	if (flag)
		signal(SIGSEGV, on_segv_exit42);
}

static void
ignore_sig(int sig, bool flag)
{
	if (flag)
		signal(sig, SIG_IGN);
}

/* A fault outside the guard. */
static void
fault(int sig, bool flag)
{
	(void)sig;
	(void)flag;
	(void)*(volatile uint8_t *)unmapped_page();
}

/* @p sig sent (kill, not a fault) outside a burst. */
static void
sent(int sig, bool flag)
{
	(void)flag;
	kill(getpid(), sig);
}

static int
fault_outside(bool own)
{
	return in_child(own_handler, fault, SIGSEGV, own);
}

static int
sent_outside(int sig, bool ignored)
{
	return in_child(ignore_sig, sent, sig, ignored);
}

int
main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile uint8_t mapped = 0x5a;
	uint8_t v = 0;
	int st;

	T_EQ(trd_link_guard_probe(NULL, &v), -EINVAL);
	T_EQ(trd_link_guard_probe(&mapped, NULL), -EINVAL);
	T_EQ(trd_link_guard_probe(&mapped, &v), 0);
	T_EQ(v, 0x5a);

	/* unmapped: SIGSEGV inside the guard, three times (the handler is not left blocked) */
	for (int i = 0; i < 3; i++) {
		v = 0x11;
		T_EQ(trd_link_guard_probe(unmapped_page(), &v), -EFAULT);
		T_EQ(v, 0x11);
	}
	/* a mapped file read past its end: SIGBUS */
	{
		FILE *f = tmpfile();
		uint8_t *p;

		T_ASSERT(f != NULL, "tmpfile: %s", strerror(errno));
		T_EQ(ftruncate(fileno(f), pg), 0);
		p = mmap(NULL, (size_t)pg * 2, PROT_READ, MAP_SHARED, fileno(f), 0);
		T_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
		T_EQ(trd_link_guard_probe(p, &v), 0);
		T_EQ(v, 0);
		T_EQ(trd_link_guard_probe(p + pg, &v), -EFAULT);
		munmap(p, (size_t)pg * 2);
		fclose(f);
	}
	/* still guarded after the faults: a good read works */
	T_EQ(trd_link_guard_probe(&mapped, &v), 0);
	T_EQ(v, 0x5a);

	/* outside the guard a fault is not swallowed: the default action (or, built with ASan,
	 * ASan's report, which aborts or exits non-zero) */
	st = fault_outside(false);
	T_ASSERT((WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGABRT)) ||
			 (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3 &&
			  WEXITSTATUS(st) != 7),
		 "a fault outside the guard: wait status %#x", st);
	/* and the handler installed before the guard gets it */
	st = fault_outside(true);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 42,
		 "a fault outside the guard did not reach the earlier handler: wait status %#x",
		 st);
	/* a SIGSEGV or SIGBUS sent with kill() has no faulting instruction to run again: it
	 * still ends the process (or, ignored before the guard, is still ignored) */
	st = sent_outside(SIGSEGV, false);
	T_ASSERT((WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGABRT)) ||
			 (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3 &&
			  WEXITSTATUS(st) != 7),
		 "kill -SEGV outside the guard: wait status %#x", st);
	st = sent_outside(SIGBUS, false);
	T_ASSERT((WIFSIGNALED(st) && (WTERMSIG(st) == SIGBUS || WTERMSIG(st) == SIGABRT)) ||
			 (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3 &&
			  WEXITSTATUS(st) != 7),
		 "kill -BUS outside the guard: wait status %#x", st);
	st = sent_outside(SIGBUS, true);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 7, "an ignored kill -BUS: wait status %#x",
		 st);
	printf("test_guard: faults inside the guard returned, faults outside it were passed on\n");
	return 0;
}
