/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies between the provider's memory and the application's buffers that fail instead of
 * crashing (docs/libfabric.md, "Bad arguments").
 *
 * Where the provider itself copies application data (a send up to the short threshold or
 * through the pool, an inject, a receive or a read scattered into several iovs, an atomic's
 * operand, compare value and result, EQ entries, addresses), it copies with
 * process_vm_readv/process_vm_writev on its own pid: the kernel copies, and an unmapped or
 * unreadable (unwritable) byte ends the copy with EFAULT instead of a SIGSEGV in the
 * application. A process may always use these calls on itself (no ptrace check applies to its
 * own thread group); if they are refused anyway (ENOSYS under seccomp, EPERM), the provider
 * falls back to memcpy for the life of the process and says so once in the log.
 *
 * The cost is one system call per copy (measured in docs/libfabric.md, "Bad arguments"),
 * paid only on the paths that copy; the engine reads and writes the single local buffer of
 * a one-sided operation itself and reports FI_EFAULT the same way.
 *
 * Small copies are the common case (every MPI message up to the inject size is gathered on
 * send and scattered on receive, and every one up to FI_TOROID_BOUNCE_MAX through the pool),
 * and there the system call costs as much as the copy or more. So a copy in one application
 * iov over at most TRUST_PAGES pages, each of which the kernel copied from (or into)
 * successfully within the last FI_TOROID_TRUST_US microseconds, is a plain memcpy: a small
 * table of recently checked pages (TRUST_SLOTS entries, page address and right, read or
 * write, with the time of the check) remembers them. The trade: a page that the application
 * unmaps or protects within that window after a successful copy crashes the application
 * instead of failing with FI_EFAULT (docs/libfabric.md, "Bad arguments"); 0 checks every
 * copy. The pid for process_vm_* is cached and forgotten in a forked child (pthread_atfork).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tfi.h"

static bool no_pvm; /* process_vm_* refused: plain memcpy (atomic access: any thread) */

/* The process's pid, 0 until first asked and again in a forked child (its own pid differs:
 * process_vm_* on the parent's would copy the parent's memory). */
static pid_t self_pid;

/* Recently checked pages: key = page address | right, when = CLOCK_MONOTONIC ns of the
 * check. Each word is atomic; a torn pair of them only pairs a page with an older check of
 * its slot, and a page is written to a slot only after its own check succeeded. */
#define TRUST_SLOTS 64u
#define TRUST_PAGES 17u /* 64 KiB, unaligned; a copy over more goes through the kernel */
#define TRUST_R     1u
#define TRUST_W     2u
static struct {
	uintptr_t key;
	uint64_t when;
} trust[TRUST_SLOTS];
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Ranges over more pages than TRUST_PAGES that tfi_copy_iov had the kernel copy recently (a
 * send to itself and its receive, the same buffers round after round): a copy within two of
 * them is a memcpy, the same trade as the pages' table (docs/libfabric.md, "Bad arguments").
 * Guarded by a mutex: entries are several words. */
#define TRUST_RANGES 8u
static struct {
	uintptr_t base;
	size_t len;
	unsigned int right;
	uint64_t when;
} ranges[TRUST_RANGES];
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;

/* The child's memory is a copy of the parent's: the pages checked stay valid, its pid not. */
static void
forget_after_fork(void)
{
	__atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
}

static void
register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_after_fork);
}

static pid_t
my_pid(void)
{
	pid_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);

	if (p == 0) {
		pthread_once(&atfork_once, register_atfork);
		p = getpid();
		__atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}

static uintptr_t
page_size(void)
{
	static uintptr_t ps;
	uintptr_t p = __atomic_load_n(&ps, __ATOMIC_RELAXED);

	if (p == 0) {
		long v = sysconf(_SC_PAGESIZE);

		p = v > 0 ? (uintptr_t)v : 4096;
		__atomic_store_n(&ps, p, __ATOMIC_RELAXED);
	}
	return p;
}

/* The slot of @p page for @p right: direct-mapped by page number, so the pages of one
 * buffer take consecutive slots, and a page read and written (a buffer sent and received
 * into) takes two, so that the two do not evict each other. */
static unsigned int
trust_slot(uintptr_t page, unsigned int right)
{
	return (unsigned int)(((page / page_size()) * 2 + right - 1) % TRUST_SLOTS);
}

/* Was @p page checked for @p right within the window? */
static bool
trusted_page(uintptr_t page, unsigned int right, uint64_t now, uint64_t window)
{
	unsigned int i = trust_slot(page, right);

	return __atomic_load_n(&trust[i].key, __ATOMIC_RELAXED) == (page | right) &&
	       now - __atomic_load_n(&trust[i].when, __ATOMIC_RELAXED) < window;
}

/* The first page of [@p a, @p a + @p len) and how many pages it spans (len > 0). */
static uintptr_t
range_pages(const void *a, size_t len, unsigned int *n)
{
	uintptr_t ps = page_size();
	uintptr_t first = (uintptr_t)a & ~(ps - 1);
	uintptr_t last = ((uintptr_t)a + len - 1) & ~(ps - 1);

	*n = last < first ? UINT_MAX : (unsigned int)((last - first) / ps + 1);
	return first;
}

/* May a copy of @p total bytes in @p na iovs be trusted at all: one iov over at most
 * TRUST_PAGES pages, and a window? */
static bool
trustable(const struct iovec *app, size_t na, size_t total)
{
	unsigned int n;

	if (tfi_params.trust_us == 0 || na != 1 || total > TRUST_PAGES * page_size())
		return false;
	range_pages(app[0].iov_base, total, &n);
	return n <= TRUST_PAGES;
}

/* Was every page of @p app (trustable) checked for the direction within the window at @p now? */
static bool
trusted_at(const struct iovec *app, size_t total, bool to_app, uint64_t now)
{
	uint64_t window = (uint64_t)tfi_params.trust_us * 1000;
	unsigned int r = to_app ? TRUST_W : TRUST_R, n;
	uintptr_t pg = range_pages(app[0].iov_base, total, &n);

	for (unsigned int k = 0; k < n; k++)
		if (!trusted_page(pg + k * page_size(), r, now, window))
			return false;
	return true;
}

/* May this copy be a memcpy? One iov over at most TRUST_PAGES pages, each checked for the
 * same direction within the window. @p now: the time, 0 when the copy may not be trusted. */
static bool
trusted(const struct iovec *app, size_t na, size_t total, bool to_app, uint64_t *now)
{
	*now = 0;
	if (!trustable(app, na, total))
		return false;
	*now = tfi_now_ns();
	return trusted_at(app, total, to_app, *now);
}

/* The kernel copied @p app for @p to_app: remember its pages (@p now 0: not to be kept). */
static void
trust_pages(const struct iovec *app, size_t total, bool to_app, uint64_t now)
{
	unsigned int r = to_app ? TRUST_W : TRUST_R, n;
	uintptr_t pg;

	if (now == 0)
		return;
	pg = range_pages(app[0].iov_base, total, &n);
	for (unsigned int k = 0; k < n; k++) {
		uintptr_t p = pg + k * page_size();
		unsigned int i = trust_slot(p, r);

		__atomic_store_n(&trust[i].when, now, __ATOMIC_RELAXED);
		__atomic_store_n(&trust[i].key, p | r, __ATOMIC_RELAXED);
	}
}

static void
pvm_refused(int err)
{
	if (!__atomic_exchange_n(&no_pvm, true, __ATOMIC_RELAXED))
		FI_WARN(&tfi_prov, FI_LOG_CORE,
			"process_vm_readv on itself refused (%s): bad application buffers now "
			"crash instead of failing with FI_EFAULT\n",
			strerror(err));
}

/* Copy between @p local (ours, always valid) and @p app (the application's) with one
 * system call. 0, or -FI_EFAULT if a byte of @p app is not accessible. */
static int
pvm(bool to_app, const struct iovec *local, size_t nl, const struct iovec *app, size_t na,
    size_t total)
{
	uint64_t now;
	ssize_t k;

	if (total == 0)
		return 0;
	if (!__atomic_load_n(&no_pvm, __ATOMIC_RELAXED) && !trusted(app, na, total, to_app, &now)) {
		k = to_app ? process_vm_writev(my_pid(), local, nl, app, na, 0)
			   : process_vm_readv(my_pid(), local, nl, app, na, 0);
		if (k == (ssize_t)total) {
			trust_pages(app, total, to_app, now);
			return 0;
		}
		if (k >= 0 || errno == EFAULT)
			return -FI_EFAULT;
		if (errno != ENOSYS && errno != EPERM)
			return -FI_EFAULT; /* ENOMEM, ESRCH: the kernel could not copy */
		pvm_refused(errno);
	}
	/* memcpy, iov by iov (the lengths were checked by the caller): process_vm_* refused,
	 * or pages the kernel copied recently */
	if (to_app) {
		const uint8_t *s = local[0].iov_base;

		for (size_t i = 0; i < na; i++) {
			memcpy(app[i].iov_base, s, app[i].iov_len);
			s += app[i].iov_len;
		}
	} else {
		uint8_t *d = local[0].iov_base;

		for (size_t i = 0; i < na; i++) {
			memcpy(d, app[i].iov_base, app[i].iov_len);
			d += app[i].iov_len;
		}
	}
	return 0;
}

/* The non-empty iovs of @p iov (at most TFI_IOV_LIMIT) up to @p len bytes into @p out. */
static size_t
iov_trim(struct iovec *out, const struct iovec *iov, size_t n, size_t len, size_t *total)
{
	size_t m = 0, t = 0;

	for (size_t i = 0; i < n && t < len; i++) {
		size_t k = iov[i].iov_len < len - t ? iov[i].iov_len : len - t;

		if (k == 0)
			continue;
		out[m].iov_base = iov[i].iov_base;
		out[m].iov_len = k;
		m++;
		t += k;
	}
	*total = t;
	return m;
}

int
tfi_copy_in(void *dst, const void *src, size_t len)
{
	struct iovec l = {.iov_base = dst, .iov_len = len};
	struct iovec a = {.iov_base = (void *)(uintptr_t)src, .iov_len = len};

	return pvm(false, &l, 1, &a, 1, len);
}

int
tfi_out_ptr(void *app)
{
	void *old;

	/* its own value written back: a failed open leaves the application's variable as it was */
	if (tfi_copy_in(&old, app, sizeof(old)) != 0)
		return -FI_EFAULT;
	return tfi_copy_out(app, &old, sizeof(old));
}

int
tfi_copy_out(void *dst, const void *src, size_t len)
{
	struct iovec l = {.iov_base = (void *)(uintptr_t)src, .iov_len = len};
	struct iovec a = {.iov_base = dst, .iov_len = len};

	return pvm(true, &l, 1, &a, 1, len);
}

int
tfi_gather(void *dst, const struct iovec *iov, size_t n)
{
	struct iovec a[TFI_IOV_LIMIT], l;
	size_t m, total;

	if (n > TFI_IOV_LIMIT)
		return -FI_EINVAL;
	m = iov_trim(a, iov, n, SIZE_MAX, &total);
	l = (struct iovec){.iov_base = dst, .iov_len = total};
	return pvm(false, &l, 1, a, m, total);
}

int
tfi_scatter(const struct iovec *iov, size_t n, const void *src, size_t len)
{
	struct iovec a[TFI_IOV_LIMIT], l;
	size_t m, total;

	if (n > TFI_IOV_LIMIT)
		return -FI_EINVAL;
	m = iov_trim(a, iov, n, len, &total);
	l = (struct iovec){.iov_base = (void *)(uintptr_t)src, .iov_len = total};
	return pvm(true, &l, 1, a, m, total);
}

/* Is [@p a, @p a + @p len) within a range checked for @p right within the window at @p now? */
static bool
range_trusted(const void *a, size_t len, unsigned int right, uint64_t now)
{
	uint64_t window = (uint64_t)tfi_params.trust_us * 1000;
	uintptr_t p = (uintptr_t)a;
	bool ok = false;

	pthread_mutex_lock(&ranges_lock);
	for (unsigned int i = 0; i < TRUST_RANGES && !ok; i++)
		ok = ranges[i].right == right && ranges[i].len != 0 && p >= ranges[i].base &&
		     p - ranges[i].base <= ranges[i].len &&
		     len <= ranges[i].len - (p - ranges[i].base) && now - ranges[i].when < window;
	pthread_mutex_unlock(&ranges_lock);
	return ok;
}

static void
range_remember(const void *a, size_t len, unsigned int right, uint64_t now)
{
	unsigned int i =
		(unsigned int)(((uintptr_t)a / page_size()) * 2 + right - 1) % TRUST_RANGES;

	pthread_mutex_lock(&ranges_lock);
	ranges[i].base = (uintptr_t)a;
	ranges[i].len = len;
	ranges[i].right = right;
	ranges[i].when = now;
	pthread_mutex_unlock(&ranges_lock);
}

int
tfi_copy_iov(const struct iovec *dst, size_t nd, const struct iovec *src, size_t ns, size_t len)
{
	struct iovec d[TFI_IOV_LIMIT], s[TFI_IOV_LIMIT];
	size_t md, ms, td, ts;
	uint64_t now = 0;
	bool big, ok;
	ssize_t k;

	if (nd > TFI_IOV_LIMIT || ns > TFI_IOV_LIMIT)
		return -FI_EINVAL;
	md = iov_trim(d, dst, nd, len, &td);
	ms = iov_trim(s, src, ns, td, &ts);
	if (ts == 0)
		return 0;
	md = iov_trim(d, dst, nd, ts, &td); /* both ts bytes now */
	/* one clock read for both sides; one iov each over more pages: the ranges' table */
	big = md == 1 && ms == 1 && tfi_params.trust_us != 0 && ts > TRUST_PAGES * page_size();
	if (big || (trustable(d, md, ts) && trustable(s, ms, ts)))
		now = tfi_now_ns();
	if (big)
		ok = range_trusted(d[0].iov_base, ts, TRUST_W, now) &&
		     range_trusted(s[0].iov_base, ts, TRUST_R, now);
	else
		ok = now != 0 && trusted_at(d, ts, true, now) && trusted_at(s, ts, false, now);
	if (!__atomic_load_n(&no_pvm, __ATOMIC_RELAXED) && !ok) {
		/* one system call: the kernel faults on either side (which one, the caller finds
		 * out with a gather) */
		k = process_vm_readv(my_pid(), d, md, s, ms, 0);
		if (k == (ssize_t)ts && big) {
			range_remember(d[0].iov_base, ts, TRUST_W, now);
			range_remember(s[0].iov_base, ts, TRUST_R, now);
		}
		if (k == (ssize_t)ts) {
			trust_pages(d, ts, true, big ? 0 : now);
			trust_pages(s, ts, false, big ? 0 : now);
			return 0;
		}
		if (k >= 0 || (errno != ENOSYS && errno != EPERM))
			return -FI_EFAULT;
		pvm_refused(errno);
	}
	/* memcpy, iov to iov: process_vm_* refused, or pages the kernel copied recently */
	for (size_t i = 0, j = 0, oi = 0, oj = 0; i < md && j < ms;) {
		size_t n = d[i].iov_len - oi < s[j].iov_len - oj ? d[i].iov_len - oi
								 : s[j].iov_len - oj;

		memcpy((uint8_t *)d[i].iov_base + oi, (const uint8_t *)s[j].iov_base + oj, n);
		oi += n;
		oj += n;
		if (oi == d[i].iov_len) {
			i++;
			oi = 0;
		}
		if (oj == s[j].iov_len) {
			j++;
			oj = 0;
		}
	}
	return 0;
}
