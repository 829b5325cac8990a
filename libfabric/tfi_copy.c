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
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tfi.h"

static bool no_pvm; /* process_vm_* refused: plain memcpy (atomic access: any thread) */

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
	ssize_t k;

	if (total == 0)
		return 0;
	if (!__atomic_load_n(&no_pvm, __ATOMIC_RELAXED)) {
		k = to_app ? process_vm_writev(getpid(), local, nl, app, na, 0)
			   : process_vm_readv(getpid(), local, nl, app, na, 0);
		if (k == (ssize_t)total)
			return 0;
		if (k >= 0 || errno == EFAULT)
			return -FI_EFAULT;
		if (errno != ENOSYS && errno != EPERM)
			return -FI_EFAULT; /* ENOMEM, ESRCH: the kernel could not copy */
		pvm_refused(errno);
	}
	/* fallback: memcpy, iov by iov (the lengths were checked by the caller) */
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
