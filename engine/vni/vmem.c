/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: a process's memory, for one-sided access (docs/vni.md, "How the engine reaches
 * the memory").
 *
 * The engine never names a process's memory by its pid. At attach the process opens its own
 * /proc/self/mem (read-write) and /proc/self/maps and passes both over the socket
 * (SCM_RIGHTS). The kernel binds each of these files to the address space (mm) they were
 * opened on: after the process execs (a setuid program, say) or exits, reads and writes
 * through them reach nothing (pread returns 0, the maps query says ESRCH), whatever process
 * then runs under that pid. The engine needs no ptrace right over the process: it can do
 * only what the process could do to itself.
 *
 * /proc/pid/mem writes with FOLL_FORCE (they would go through read-only mappings), so every
 * access is checked first against the mappings of that same address space: the whole range
 * must be mapped, readable, and writable for a write (PROCMAP_QUERY on the maps descriptor,
 * Linux 6.11; the maps text before). The process can still race the check with its own
 * mprotect/munmap: it can then only harm itself.
 *
 * /proc/pid/mem copies twice (through a kernel page), so transfers of at least
 * SVC_PVM_MIN bytes use process_vm_readv/writev instead, one copy, as Open MPI's CMA does.
 * Those name the process by pid and the kernel checks ptrace access with the engine thread's
 * credentials, so the engine thread first drops CAP_SYS_PTRACE from its effective set: the
 * kernel then refuses a process of another user, and an image that changed credentials
 * (setuid exec), as it refuses any process of that user. The range is checked against the
 * descriptors' address space before the copy (svc_vmem_check), and after it the pidfd must
 * show the process alive and the maps descriptor its address space still there: a read that
 * raced an exec or exit is discarded (-ECONNRESET). A write that raced them reached at most
 * a process the kernel lets the engine's user reach without CAP_SYS_PTRACE (the pid reused
 * in that window, a non-setuid image). When the kernel refuses (EPERM: another user, Yama
 * ptrace_scope, a seccomp filter), the interface falls back to its mem descriptor for good.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <rte_common.h>

#include "vmem_pvt.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* PROCMAP_QUERY (linux/fs.h since Linux 6.11; Debian bookworm's headers are older). */
struct vmem_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
_Static_assert(sizeof(struct vmem_query) == 104, "struct procmap_query");
#define VMEM_Q_READABLE    0x01
#define VMEM_Q_WRITABLE    0x02
#define VMEM_PROCMAP_QUERY _IOWR('f', 17, struct vmem_query)

#define VMEM_MAPS_MAX (8u << 20) /* the maps text read at most (fallback) */

/* Is @p fd a procfs file named /proc/<pid>/<name>, opened with @p mode? */
static bool
proc_file_ok(int fd, int pid, const char *name, int mode)
{
	char link[64], want[64], got[64];
	struct statfs sf;
	ssize_t n;
	int fl;

	if (fstatfs(fd, &sf) != 0 || sf.f_type != PROC_SUPER_MAGIC)
		return false;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) != mode)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	snprintf(want, sizeof(want), "/proc/%d/%s", pid, name);
	n = readlink(link, got, sizeof(got) - 1);
	if (n <= 0)
		return false;
	got[n] = '\0';
	return strcmp(got, want) == 0;
}

int
svc_vmem_adopt(struct vif *v, int *fds, unsigned int n_fds, const char **why)
{
	if (n_fds == 0)
		return 0; /* an older library: no one-sided access for it (-EPERM) */
	if (n_fds != 2 || !proc_file_ok(fds[0], v->pid, "mem", O_RDWR) ||
	    !proc_file_ok(fds[1], v->pid, "maps", O_RDONLY)) {
		*why = "the descriptors passed are not this process's /proc/self/mem (read-write) "
		       "and /proc/self/maps";
		return -EACCES;
	}
	v->mem_fd = fds[0];
	v->maps_fd = fds[1];
	fds[0] = fds[1] = -1;
	return 0;
}

void
svc_vmem_close(struct vif *v)
{
	if (v->mem_fd >= 0)
		close(v->mem_fd);
	if (v->maps_fd >= 0)
		close(v->maps_fd);
	v->mem_fd = v->maps_fd = -1;
}

/* The maps text (fallback before Linux 6.11): does it cover [addr, end) with @p perms
 * ('r', and 'w' if @p write) and no gap? 0, -EFAULT, -ECONNRESET (the address space is gone)
 * or -ENOMEM. */
static int
maps_text_check(int fd, uint64_t addr, uint64_t end, bool write)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *p, *nl;
	uint64_t at = addr;
	int rc = -EFAULT;

	if (buf == NULL)
		return -ENOMEM;
	for (;;) {
		ssize_t k;

		if (len + 4096 > cap) {
			char *nb = cap * 2 <= VMEM_MAPS_MAX ? realloc(buf, cap * 2) : NULL;

			if (nb == NULL) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		k = pread(fd, buf + len, cap - len - 1, (off_t)len);
		if (k < 0) {
			free(buf);
			return errno == ESRCH ? -ECONNRESET : -EFAULT;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	if (len == 0) {
		free(buf);
		return -ECONNRESET; /* no mapping at all: the address space is gone */
	}
	/* lines are sorted by address: walk them while they continue the covered range */
	for (p = buf; *p != '\0' && at < end; p = nl + 1) {
		unsigned long long lo, hi;
		char perms[5];

		nl = strchr(p, '\n');
		if (nl == NULL)
			break;
		*nl = '\0';
		if (sscanf(p, "%llx-%llx %4s", &lo, &hi, perms) != 3)
			break;
		if (hi <= at)
			continue;
		if (lo > at || perms[0] != 'r' || (write && perms[1] != 'w'))
			break; /* a gap, or a mapping without the access */
		at = hi;
	}
	if (at >= end)
		rc = 0;
	free(buf);
	return rc;
}

int
svc_vmem_check(const struct vif *v, uint64_t addr, uint64_t len, bool write)
{
	uint64_t at = addr, end;

	if (v->maps_fd < 0 || v->mem_fd < 0)
		return -EPERM; /* the process gave no access to its memory */
	if (len == 0)
		return 0;
	if (addr > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - addr)
		return -EFAULT;
	end = addr + len;
	while (at < end) {
		struct vmem_query q = {.size = sizeof(q), .query_addr = at};

		q.query_flags = VMEM_Q_READABLE | (write ? VMEM_Q_WRITABLE : 0);
		if (ioctl(v->maps_fd, VMEM_PROCMAP_QUERY, &q) != 0) {
			if (errno == ENOTTY || (errno == EINVAL && at == addr))
				return maps_text_check(v->maps_fd, at, end, write);
			return errno == ESRCH ? -ECONNRESET : -EFAULT;
		}
		if (q.vma_start > at || q.vma_end <= at)
			return -EFAULT;
		at = q.vma_end;
	}
	return 0;
}

/* A transfer through the mem descriptor: 0, or -ECONNRESET once the address space it was
 * opened on is gone (pread/pwrite return 0), or -EFAULT. */
static int
vmem_result(ssize_t k, size_t n)
{
	if (k == (ssize_t)n)
		return 0;
	return k == 0 ? -ECONNRESET : -EFAULT;
}

/* process_vm_* in this thread: 0 not tried yet, 1 usable (CAP_SYS_PTRACE not effective),
 * -1 not (the capability could not be dropped). Capabilities are per thread. */
static _Thread_local int pvm_thread;

static bool
pvm_thread_ok(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	const unsigned int w = CAP_SYS_PTRACE / 32, bit = 1u << (CAP_SYS_PTRACE % 32);

	if (pvm_thread != 0)
		return pvm_thread > 0;
	pvm_thread = -1;
	if (syscall(SYS_capget, &hdr, d) != 0)
		return false;
	if ((d[w].effective & bit) != 0) {
		d[w].effective &= ~bit;
		if (syscall(SYS_capset, &hdr, d) != 0)
			return false;
	}
	pvm_thread = 1;
	return true;
}

/* After a process_vm_* copy: is it still the process and the address space the descriptors
 * were opened on? (The pidfd polls readable once the process exited; the maps query fails
 * once the address space is gone, after an exec too.) */
bool
svc_vmem_same(const struct vif *v, uint64_t addr)
{
	struct vmem_query q = {.size = sizeof(q), .query_addr = addr};
	struct pollfd p = {.fd = v->pidfd, .events = POLLIN};

	if (v->pidfd < 0 || poll(&p, 1, 0) != 0)
		return false;
	if (ioctl(v->maps_fd, VMEM_PROCMAP_QUERY, &q) == 0)
		return true;
	if (errno != ENOTTY && errno != EINVAL)
		return false;
	return !svc_vmem_gone(v); /* before Linux 6.11 */
}

/* How many pid namespaces, from the one of the /proc mounted here down to its own, know
 * process @p path (/proc/PID/status: the fields of its NSpid line), or -1. Readable by
 * anyone, unlike /proc/PID/ns/pid, which the engine without CAP_SYS_PTRACE (vmem.c drops
 * it) may not stat for a process of another user. */
static int
pidns_depth(const char *path)
{
	char line[256], *save = NULL;
	int n = -1;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			n = 0;
			for (char *tok = strtok_r(line + 6, " \t\n", &save); tok != NULL;
			     tok = strtok_r(NULL, " \t\n", &save))
				n++;
			break;
		}
	}
	fclose(f);
	return n;
}

/* Is process @p pid (as this engine sees it, @p pidfd its own) in the engine's pid namespace?
 * Both are in the namespace of the /proc mounted here (one NSpid field each: the engine's pid
 * for it is its own pid), and the pidfd still not readable afterwards shows the pid was not
 * reused meanwhile. A process in another namespace knows other processes by other pids: one
 * that the engine names to it (a CMA request) may be another process there, or none. */
bool
svc_vmem_pidns_same(int pid, int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	char path[64];

	if (pid <= 0 || pidfd < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (pidns_depth("/proc/self/status") != 1 || pidns_depth(path) != 1)
		return false;
	return poll(&p, 1, 0) == 0;
}

/* One copy with process_vm_readv (@p write false: the process's [addr, addr + n) into @p buf)
 * or process_vm_writev: 0, -ECONNRESET, -EFAULT, or 1 when it cannot be used (the caller
 * goes through the mem descriptor). */
static int
pvm_copy(struct vif *v, void *buf, uint64_t addr, size_t n, bool write)
{
	struct iovec l = {.iov_base = buf, .iov_len = n};
	struct iovec r = {.iov_base = (void *)(uintptr_t)addr, .iov_len = n};
	ssize_t k;

	if (n < SVC_PVM_MIN || v->pvm_off || v->pid <= 0 || v->pidfd < 0 || !pvm_thread_ok())
		return 1;
	k = write ? process_vm_writev(v->pid, &l, 1, &r, 1, 0)
		  : process_vm_readv(v->pid, &l, 1, &r, 1, 0);
	if (k < 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES)) {
		v->pvm_off = true; /* another user, Yama, seccomp: the mem descriptor from now on */
		v->s->stat[TRD_VNI_SVC_STAT_PVM_REFUSED]++;
		return 1;
	}
	if (!svc_vmem_same(v, addr))
		return -ECONNRESET;
	if (k != (ssize_t)n)
		return k < 0 && errno == ESRCH ? -ECONNRESET : -EFAULT;
	v->s->stat[TRD_VNI_SVC_STAT_COPY_PVM] += n;
	return 0;
}

int
svc_vmem_read(struct vif *v, void *buf, uint64_t addr, size_t n)
{
	int rc;

	if (n == 0)
		return v->mem_fd < 0 ? -EPERM : 0;
	rc = svc_vmem_check(v, addr, n, false);
	if (rc != 0)
		return rc;
	rc = pvm_copy(v, buf, addr, n, false);
	if (rc <= 0)
		return rc;
	return vmem_result(pread(v->mem_fd, buf, n, (off_t)addr), n);
}

int
svc_vmem_write(struct vif *v, const void *buf, uint64_t addr, size_t n)
{
	int rc;

	if (n == 0)
		return v->mem_fd < 0 ? -EPERM : 0;
	rc = svc_vmem_check(v, addr, n, true);
	if (rc != 0)
		return rc;
	rc = pvm_copy(v, (void *)(uintptr_t)buf, addr, n, true);
	if (rc <= 0)
		return rc;
	return vmem_result(pwrite(v->mem_fd, buf, n, (off_t)addr), n);
}

bool
svc_vmem_gone(const struct vif *v)
{
	ssize_t k;
	char c;

	if (v->maps_fd < 0)
		return false;
	/* the maps of an address space that is gone read as empty (exec), or fail with ESRCH
	 * once the process itself is gone */
	k = pread(v->maps_fd, &c, 1, 0);
	return k == 0 || (k < 0 && errno == ESRCH);
}
