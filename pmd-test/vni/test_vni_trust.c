/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process's rights end with its address space (docs/vni.md, "Threat model and isolation"):
 * one-sided access reaches a process's memory only through the /proc/self/mem it passed at
 * attach, checked against its mappings. Hostile processes against one in-process VNI service
 * (node 0 of a 3x1x1 torus over ring links); every process is a forked child. The victim is
 * 3:0; the requester (1:0, another application's process holding the victim's key) reads,
 * writes and adds through the engine.
 *
 *   test_vni_trust exec       the victim registers a region, forks a child that keeps its
 *                             socket, and execs another program that maps the same addresses
 *                             with a secret (as a setuid program would): from then on reads,
 *                             writes and atomics on the region fail, the secret is never read
 *                             and the new image's memory is unchanged; the interface ends
 *   test_vni_trust pid_reuse  a process connects and exits before it registers, a child keeps
 *                             its socket; another process is given the same pid (clone3
 *                             set_tid, root) and maps the same addresses: the registration
 *                             is refused and nothing of the new process is reached
 *   test_vni_trust maps       a region over a read-only mapping is refused for remote writes
 *                             (allowed for reads), so is one over a hole; a region unmapped or
 *                             made read-only after registration makes later writes and
 *                             atomics fail with nothing written (not even the chunks before
 *                             the hole), while the part still writable is written
 *   test_vni_trust atomics    3 000 concurrent 64-bit sums of 1 on one word through a
 *                             256-entry reception FIFO that drops frames: every op completes
 *                             and the word ends exactly at 3 000 (applied at most once)
 *   test_vni_trust exec_image (not a test: the program the exec test's victim becomes)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_seg.h"
#include "vni_test.h"

static bool
all_are(const uint8_t *p, size_t n, uint8_t byte)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != byte)
			return false;
	return true;
}

/* ---- the requester: 1:0, one op on 3:0's memory ---- */

enum { OP_READ, OP_WRITE, OP_ATOMIC };

struct req {
	int op;
	uint64_t addr, key;
	uint32_t len;
	uint8_t byte; /* write: the bytes written */
	int to_parent;
};

struct req_result {
	int64_t status;
	uint64_t n_secret; /* read: bytes of the secret that arrived */
	uint64_t n_init;   /* read: bytes of the victim's that arrived */
};

static int
req_app(void *arg)
{
	const struct req *q = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr dst = {.app = 3, .proc = 0};
	struct req_result res = {0};
	uint8_t *buf = calloc(1, q->len + 8);
	struct trd_vni *v = trd_vni_open(&c);
	struct trd_vni_cpl cpl;
	int rc;

	if (v == NULL || buf == NULL)
		return 10;
	if (q->op == OP_READ) {
		rc = trd_vni_read(v, dst, buf, q->len, q->addr, q->key, -1, 1);
	} else if (q->op == OP_WRITE) {
		memset(buf, q->byte, q->len);
		rc = trd_vni_write(v, dst, buf, q->len, q->addr, q->key, -1, 1);
	} else {
		rc = trd_vni_atomic(v, dst, TRD_VNI_AOP_SUM, 8, 1, 0, q->addr, q->key, -1, 1);
	}
	if (rc != 0)
		return 11;
	if (trd_vni_wait(v, &cpl, 1, 20000) != 1)
		return 12;
	res.status = cpl.status;
	for (uint32_t i = 0; q->op == OP_READ && i < q->len; i++) {
		res.n_secret += buf[i] == SECRET;
		res.n_init += buf[i] == INIT;
	}
	if (write(q->to_parent, &res, sizeof(res)) != sizeof(res))
		return 13;
	trd_vni_close(v);
	return 0;
}

/* One op of the requester on [addr, addr + len) of 3:0's region @p key. */
static struct req_result
remote(int op, uint64_t addr, uint32_t len, uint64_t key, uint8_t byte)
{
	struct req q = {.op = op, .addr = addr, .key = key, .len = len, .byte = byte};
	struct req_result res;
	int p[2];
	pid_t pid;

	pipe_nb(p);
	q.to_parent = p[1];
	pid = spawn(req_app, &q);
	read_pipe(p[0], &res, sizeof(res));
	reap_ok(pid, WAIT_US, "the requester");
	close(p[0]);
	close(p[1]);
	return res;
}

/* ---- exec ---- */

struct exec_pipes {
	int up[2];   /* victim -> test: its key, then the new image's 'r' */
	int go[2];   /* test -> victim: exec now */
	int hold[2]; /* the socket's keeper leaves when this closes */
	int done[2]; /* test -> new image: check your memory and leave */
};

/* 3:0: maps VADDR, registers it, forks a keeper of its socket, then (when told) execs this
 * program as "exec_image", which maps VADDR again with the secret. */
static int
exec_victim(void *arg)
{
	struct exec_pipes *pp = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	char a1[16], a2[16];
	struct trd_vni *v;
	uint64_t key = 0;
	pid_t g;
	char b;

	if (map_fixed(INIT) != 0)
		return 10;
	v = trd_vni_open(&c);
	if (v == NULL ||
	    trd_vni_mr_reg(v, (void *)(uintptr_t)VADDR, VLEN,
			   TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &key) != 0)
		return 11;
	g = fork();
	if (g < 0)
		return 12;
	if (g == 0) { /* the keeper: holds the socket (and everything else) until told */
		close(pp->hold[1]);
		(void)!read(pp->hold[0], &b, 1);
		_exit(0);
	}
	if (write(pp->up[1], &key, sizeof(key)) != sizeof(key))
		return 13;
	if (read(pp->go[0], &b, 1) != 1)
		return 14;
	snprintf(a1, sizeof(a1), "%d", pp->up[1]);
	snprintf(a2, sizeof(a2), "%d", pp->done[0]);
	execl("/proc/self/exe", "test_vni_trust", "exec_image", a1, a2, (char *)NULL);
	return 15;
}

/* The program the victim becomes: the secret at VADDR; after the test is done, is it intact? */
static int
exec_image(int up, int done)
{
	char b;

	if (map_fixed(SECRET) != 0)
		return 20;
	if (write(up, "r", 1) != 1)
		return 21;
	if (read(done, &b, 1) != 1)
		return 22;
	return all_are((const uint8_t *)(uintptr_t)VADDR, VLEN, SECRET) ? 0 : 23;
}

static void
test_exec(void)
{
	uint64_t det0 = stat_of(TRD_VNI_SVC_STAT_DETACHED), key;
	struct exec_pipes pp;
	struct req_result r;
	pid_t pid;
	char b;

	pipe_nb(pp.up);
	T_EQ(pipe(pp.go), 0);
	T_EQ(pipe(pp.hold), 0);
	T_EQ(pipe(pp.done), 0);
	pid = spawn(exec_victim, &pp);
	read_pipe(pp.up[0], &key, sizeof(key));
	close(pp.hold[0]);
	/* before the exec, the key reaches the victim's bytes (so what follows could fail) */
	r = remote(OP_READ, VADDR, VLEN, key, 0);
	T_EQ(r.status, 0);
	T_EQ(r.n_init, VLEN);
	T_EQ(write(pp.go[1], "x", 1), 1);
	read_pipe(pp.up[0], &b, 1); /* the new image has the secret at VADDR */
	T_EQ(b, 'r');
	r = remote(OP_READ, VADDR, VLEN, key, 0);
	T_ASSERT(r.n_secret == 0, "the new image's secret was read (%llu bytes)",
		 (unsigned long long)r.n_secret);
	T_ASSERT(r.status != 0, "a read of the old region succeeded after exec");
	r = remote(OP_WRITE, VADDR, VLEN, key, 0xee);
	T_ASSERT(r.status != 0, "a write to the old region succeeded after exec");
	r = remote(OP_ATOMIC, VADDR + 8, 8, key, 0);
	T_ASSERT(r.status != 0, "an atomic on the old region succeeded after exec");
	/* the interface ended: its address space is gone (the keeper still holds the socket) */
	pump_until_stat(TRD_VNI_SVC_STAT_DETACHED, det0 + 1);
	T_EQ(write(pp.done[1], "x", 1), 1);
	T_ASSERT(reap_child(pid, WAIT_US) == 0, "the new image's memory was changed");
	close(pp.hold[1]);
	printf("exec: after exec, reads, writes and atomics through the old region failed, no "
	       "byte of the new image was read or written, the interface ended\n");
}

/* ---- pid_reuse ---- */

struct reuse_pipes {
	int up[2];   /* keeper -> test: registration and region statuses, key */
	int go[2];   /* test -> keeper: register now */
	int hold[2]; /* the keeper leaves when this closes */
};

struct reuse_report {
	int32_t reg, mr;
	uint64_t key;
};

/* The keeper: registers 3:0 on the socket its dead parent connected, passing its own memory
 * descriptors (the most an impostor can pass), then a region at VADDR. */
static int
reuse_keeper(int fd, struct reuse_pipes *pp)
{
	struct trd_vni_sock_register req = {.op = TRD_VNI_SOCK_REGISTER,
					    .version = TRD_VNI_VERSION,
					    .app = 3,
					    .proc = 0,
					    .pool_size = 1 << 16,
					    .n_send = 4,
					    .n_recv = 4,
					    .short_max = 64};
	struct trd_vni_sock_mr mr = {.op = TRD_VNI_SOCK_MR_REG,
				     .access = TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE,
				     .addr = VADDR,
				     .len = VLEN};
	struct trd_vni_sock_mr_answer ma;
	struct trd_vni_sock_answer ans;
	struct reuse_report rep = {.reg = -1, .mr = -1};
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &req, .iov_len = sizeof(req)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = CMSG_SPACE(2 * sizeof(int))};
	struct cmsghdr *cm;
	int mfd[2];
	char b;

	if (read(pp->go[0], &b, 1) != 1)
		return 30;
	mfd[0] = open("/proc/self/mem", O_RDWR);
	mfd[1] = open("/proc/self/maps", O_RDONLY);
	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), mfd, sizeof(mfd));
	if (mfd[0] < 0 || mfd[1] < 0 || sendmsg(fd, &mh, 0) != sizeof(req))
		return 31;
	if (recv(fd, &ans, sizeof(ans), 0) > 0) /* its descriptors, if any, are dropped */
		rep.reg = ans.status;
	if (rep.reg == 0 && send(fd, &mr, sizeof(mr), 0) == sizeof(mr) &&
	    recv(fd, &ma, sizeof(ma), 0) == sizeof(ma)) {
		rep.mr = ma.status;
		rep.key = ma.key;
	}
	if (write(pp->up[1], &rep, sizeof(rep)) != sizeof(rep))
		return 32;
	close(pp->hold[1]);
	(void)!read(pp->hold[0], &b, 1);
	return 0;
}

/* Connects, forks the keeper, exits: gone before it registered. */
static int
reuse_first(void *arg)
{
	struct reuse_pipes *pp = arg;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	pid_t g;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 40;
	g = fork();
	if (g < 0)
		return 41;
	if (g == 0)
		_exit(reuse_keeper(fd, pp));
	return 0;
}

/* A new process with pid @p pid (clone3 set_tid): maps the secret at VADDR, says so on @p up,
 * waits for @p done, then reports whether its memory is intact. -errno if the pid could not be
 * given. */
static pid_t
clone_with_pid(pid_t pid, int up, int done)
{
	struct clone_args ca;
	pid_t tid = pid;
	long r;

	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	ca.set_tid = (uint64_t)(uintptr_t)&tid;
	ca.set_tid_size = 1;
	r = syscall(SYS_clone3, &ca, sizeof(ca));
	if (r < 0)
		return -errno;
	if (r == 0)
		_exit(exec_image(up, done));
	return (pid_t)r;
}

static void
test_pid_reuse(void)
{
	struct reuse_pipes pp;
	struct reuse_report rep;
	struct req_result r;
	int up[2], done[2];
	pid_t first, second;
	char b;

	pipe_nb(pp.up);
	T_EQ(pipe(pp.go), 0);
	T_EQ(pipe(pp.hold), 0);
	pipe_nb(up);
	T_EQ(pipe(done), 0);
	first = spawn(reuse_first, &pp);
	reap_ok(first, WAIT_US,
		"the first process"); /* gone, its pid free; the keeper holds its socket */
	close(pp.hold[0]);
	second = clone_with_pid(first, up[1], done[0]);
	if (second < 0) {
		printf("SKIP: cannot give pid %d to a new process (clone3 set_tid: %s; needs "
		       "CAP_SYS_ADMIN)\n",
		       (int)first, strerror(-second));
		close(pp.hold[1]);
		exit(TEST_SKIP);
	}
	T_EQ(second, first);
	read_pipe(up[0], &b, 1); /* the new process has the secret at VADDR */
	T_EQ(write(pp.go[1], "x", 1), 1);
	read_pipe(pp.up[0], &rep, sizeof(rep));
	if (rep.reg == 0 && rep.mr == 0) {
		/* what an impostor could do with it: no byte of the new process */
		r = remote(OP_READ, VADDR, VLEN, rep.key, 0);
		T_ASSERT(r.n_secret == 0, "pid reuse: %llu bytes of the new process were read",
			 (unsigned long long)r.n_secret);
		remote(OP_WRITE, VADDR, VLEN, rep.key, 0xee);
	}
	T_EQ(write(done[1], "x", 1), 1);
	T_ASSERT(reap_child(second, WAIT_US) == 0, "pid reuse: the new process's memory changed");
	T_ASSERT(rep.reg == -ESRCH,
		 "the registration of a process gone before it registered was "
		 "not refused (%d, region %d)",
		 rep.reg, rep.mr);
	T_EQ(trd_vni_svc_n_ifs(vs), 0);
	close(pp.hold[1]);
	printf("pid_reuse: a process gone before it registered was refused (-ESRCH) although a "
	       "process with its pid (%d) lives; nothing of that process was reached\n",
	       (int)first);
}

/* ---- maps ---- */

struct maps_pipes {
	int up[2]; /* victim -> test: statuses and key, then 'd' when it changed its mappings */
	int go[2]; /* test -> victim: 'c' change your mappings; 'v' check and leave */
};

struct maps_report {
	int32_t ro_rw, ro_r, hole; /* region statuses */
	uint64_t key;
};

#define RO_ADDR   (VADDR + 16 * PAGE)
#define HOLE_ADDR (VADDR + 32 * PAGE)

static int
maps_victim(void *arg)
{
	struct maps_pipes *pp = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	const int rw = TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE;
	struct maps_report rep = {0};
	uint8_t *p = (uint8_t *)(uintptr_t)VADDR;
	struct trd_vni *v;
	uint64_t k = 0;
	char b;

	if (map_fixed(INIT) != 0 ||
	    mmap((void *)(uintptr_t)RO_ADDR, PAGE, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
		 0) != (void *)(uintptr_t)RO_ADDR ||
	    mmap((void *)(uintptr_t)HOLE_ADDR, 3 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
		 0) != (void *)(uintptr_t)HOLE_ADDR ||
	    munmap((void *)(uintptr_t)(HOLE_ADDR + PAGE), PAGE) != 0)
		return 10;
	v = trd_vni_open(&c);
	if (v == NULL)
		return 11;
	rep.ro_rw = trd_vni_mr_reg(v, (void *)(uintptr_t)RO_ADDR, PAGE, rw, &k);
	k = 0;
	rep.ro_r = trd_vni_mr_reg(v, (void *)(uintptr_t)RO_ADDR, PAGE, TRD_VNI_MR_REMOTE_READ, &k);
	k = 0;
	rep.hole = trd_vni_mr_reg(v, (void *)(uintptr_t)HOLE_ADDR, 3 * PAGE, rw, &k);
	if (trd_vni_mr_reg(v, p, VLEN, rw, &rep.key) != 0)
		return 12;
	if (write(pp->up[1], &rep, sizeof(rep)) != sizeof(rep))
		return 13;
	if (read(pp->go[0], &b, 1) != 1 || b != 'c')
		return 14;
	/* page 1 read-only, page 2 gone */
	if (mprotect(p + PAGE, PAGE, PROT_READ) != 0 || munmap(p + 2 * PAGE, PAGE) != 0)
		return 15;
	if (write(pp->up[1], "d", 1) != 1)
		return 16;
	if (read(pp->go[0], &b, 1) != 1 || b != 'v')
		return 17;
	/* page 0: the write before the change; page 1: never written; page 3: the last write */
	if (!all_are(p, PAGE, 0x22))
		return 20;
	if (!all_are(p + PAGE, PAGE, INIT))
		return 21;
	if (!all_are(p + 3 * PAGE, PAGE, 0x33))
		return 22;
	trd_vni_close(v);
	return 0;
}

static void
test_maps(void)
{
	uint64_t faults0 = stat_of(TRD_VNI_SVC_STAT_RMA_FAULTS);
	struct maps_pipes pp;
	struct maps_report rep;
	struct req_result r;
	pid_t pid;
	char b;

	pipe_nb(pp.up);
	T_EQ(pipe(pp.go), 0);
	pid = spawn(maps_victim, &pp);
	read_pipe(pp.up[0], &rep, sizeof(rep));
	T_ASSERT(rep.ro_rw == -EFAULT, "a writable region over a read-only mapping: %d", rep.ro_rw);
	T_ASSERT(rep.ro_r == 0, "a read-only region over a read-only mapping: %d", rep.ro_r);
	T_ASSERT(rep.hole == -EFAULT, "a region over a hole: %d", rep.hole);
	/* writes land while the memory is there */
	r = remote(OP_WRITE, VADDR, PAGE, rep.key, 0x22);
	T_EQ(r.status, 0);
	T_EQ(write(pp.go[1], "c", 1), 1);
	read_pipe(pp.up[0], &b, 1);
	T_EQ(b, 'd');
	/* the whole region: page 2 is gone, page 1 read-only: nothing written, not even page 0 */
	r = remote(OP_WRITE, VADDR, VLEN, rep.key, 0xee);
	T_ASSERT(r.status == -EFAULT, "a write over a hole: %lld", (long long)r.status);
	r = remote(OP_WRITE, VADDR + PAGE, PAGE, rep.key, 0xee);
	T_ASSERT(r.status == -EFAULT, "a write to a read-only page: %lld", (long long)r.status);
	r = remote(OP_ATOMIC, VADDR + PAGE + 64, 8, rep.key, 0);
	T_ASSERT(r.status == -EFAULT, "an atomic on a read-only page: %lld", (long long)r.status);
	r = remote(OP_READ, VADDR + 2 * PAGE, PAGE, rep.key, 0);
	T_ASSERT(r.status == -EFAULT, "a read of an unmapped page: %lld", (long long)r.status);
	r = remote(OP_READ, VADDR + PAGE, PAGE, rep.key, 0);
	T_EQ(r.status, 0); /* a read-only page can be read */
	T_EQ(r.n_init, PAGE);
	r = remote(OP_WRITE, VADDR + 3 * PAGE, PAGE, rep.key, 0x33);
	T_EQ(r.status, 0); /* the part still writable */
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_RMA_FAULTS) >= faults0 + 4, "faults not counted");
	T_EQ(write(pp.go[1], "v", 1), 1);
	reap_ok(pid, WAIT_US, "the victim (20: page 0 written, 21: page 1, 22: page 3 not)");
	printf("maps: regions over a read-only mapping (for writes) and over a hole refused; after "
	       "munmap and mprotect, writes and atomics failed with nothing written (%llu faults "
	       "counted), the writable part was written\n",
	       (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_RMA_FAULTS) - faults0));
}

/* ---- atomics ---- */

#define N_ATOMS 3000

/* 3:0 adds 1 to one word of its own N_ATOMS times at once, through the 256-entry reception
 * FIFO (frames are dropped, ops are asked again): every op must complete with 0 and the word
 * end at N_ATOMS. Reports (failed ops, the word) on the pipe. */
static int
atomics_app(void *arg)
{
	const int *to_parent = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .n_send = 4096,
				 .n_recv = 4,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr self = {.app = 3, .proc = 0};
	uint64_t *word = calloc(1, 64), key = 0, rep[2] = {0, 0};
	struct trd_vni *v = trd_vni_open(&c);
	unsigned int done = 0;

	if (v == NULL || word == NULL ||
	    trd_vni_mr_reg(v, word, 64, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &key) !=
		    0)
		return 10;
	for (unsigned int i = 0; i < N_ATOMS; i++)
		if (trd_vni_atomic(v, self, TRD_VNI_AOP_SUM, 8, 1, 0, (uintptr_t)word, key, -1,
				   i) != 0)
			return 11;
	while (done < N_ATOMS) {
		struct trd_vni_cpl cpl[64];
		int n = trd_vni_wait(v, cpl, 64, 30000);

		if (n <= 0)
			return 12; /* an op never completed */
		for (int k = 0; k < n; k++)
			rep[0] += cpl[k].status != 0;
		done += (unsigned int)n;
	}
	rep[1] = __atomic_load_n(word, __ATOMIC_RELAXED);
	if (write(*to_parent, rep, sizeof(rep)) != sizeof(rep))
		return 13;
	trd_vni_close(v);
	return 0;
}

static void
test_atomics(void)
{
	struct trd_node_stats ns;
	uint64_t rep[2], drops0, repeats0 = stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS);
	uint64_t t0 = trd_time_us();
	int p[2];
	pid_t pid;

	trd_node_stats_get(nd[0], &ns);
	drops0 = ns.drop[TRD_DROP_FIFO_FULL];
	pipe_nb(p);
	pid = spawn(atomics_app, &p[1]);
	reap_ok(pid, 6 * WAIT_US, "the application (12: an op never completed)");
	T_EQ(read(p[0], rep, sizeof(rep)), sizeof(rep));
	trd_node_stats_get(nd[0], &ns);
	T_ASSERT(ns.drop[TRD_DROP_FIFO_FULL] > drops0, "no frame was dropped: nothing tested");
	T_ASSERT(rep[0] == 0, "%llu atomics failed", (unsigned long long)rep[0]);
	T_ASSERT(rep[1] == N_ATOMS,
		 "the word is %llu after %u sums of 1 (applied twice or not at "
		 "all)",
		 (unsigned long long)rep[1], N_ATOMS);
	printf("atomics: %u concurrent sums of 1 on one word completed with 0 and the word is %llu, "
	       "although the reception FIFO dropped %llu frames (%llu repeats answered from "
	       "memory) in %.1f s\n",
	       N_ATOMS, (unsigned long long)rep[1],
	       (unsigned long long)(ns.drop[TRD_DROP_FIFO_FULL] - drops0),
	       (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_RMA_REPEATS) - repeats0),
	       (double)(trd_time_us() - t0) / 1e6);
}

/* ---- set-up ---- */

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0, 3:0\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;

	if (argc == 4 && strcmp(argv[1], "exec_image") == 0)
		return exec_image(atoi(argv[2]), atoi(argv[3]));
	if (argc != 2) {
		fprintf(stderr, "usage: %s exec|pid_reuse|maps|atomics\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.noproc_ms = 300; /* ops on an interface that ended fail sooner */
	/* a small reception FIFO drops frames */
	vni_setup("trust", topo_text, strcmp(argv[1], "atomics") == 0 ? 256 : 1024, &vc);
	if (strcmp(argv[1], "exec") == 0)
		test_exec();
	else if (strcmp(argv[1], "pid_reuse") == 0)
		test_pid_reuse();
	else if (strcmp(argv[1], "maps") == 0)
		test_maps();
	else if (strcmp(argv[1], "atomics") == 0)
		test_atomics();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni %s\n", argv[1]);
	return 0;
}
