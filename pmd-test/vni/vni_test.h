/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the VNI tests that run the service in-process (test_vni_atom.c, test_vni_trust.c,
 * test_vni_hostile.c): the engine they poll, the forked application processes, the pipes the
 * children report through, each wait bounded. Every test program includes it once.
 */
#ifndef TRD_VNI_TEST_H
#define TRD_VNI_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "../test_common.h"

#define WAIT_US 10000000ULL /* the bound of every wait */
#define PAGE    4096u
#define VADDR   0x3a5a00000000ULL /* the victim's region: the same address in every image */
#define VLEN    (4 * PAGE)
#define INIT    0x11 /* the victim's bytes */
#define SECRET  0x5e /* the new image's (or the new process's) bytes */

/* the test's torus (one in-process engine per node, ring links) and the VNI service on node 0 */
static char dir[64], sock_path[100];
static struct trd_topo *topo;
static struct trd_net *net;
static struct trd_node *nd[3];
static struct trd_vni_svc *vs;

static inline void
pump(void)
{
	trd_net_poll(net);
	trd_vni_svc_poll(vs);
}

static inline uint64_t
stat_of(enum trd_vni_svc_stat k)
{
	uint64_t st[TRD_VNI_SVC_STAT_MAX];

	trd_vni_svc_stats_get(vs, st);
	return st[k];
}

/* Pump until @p k reaches @p want or @p us passed, then a little more. */
static inline void
pump_for_stat(enum trd_vni_svc_stat k, uint64_t want, uint64_t us)
{
	uint64_t deadline = trd_time_us() + us;

	while (stat_of(k) < want && trd_time_us() < deadline)
		pump();
	for (int i = 0; i < 100; i++) /* nothing else may come */
		pump();
}

/* Pump until @p k reaches @p want (bounded). */
static inline void
pump_until_stat(enum trd_vni_svc_stat k, uint64_t want)
{
	pump_for_stat(k, want, WAIT_US);
	T_ASSERT(stat_of(k) >= want, "%s stays at %llu, want %llu", trd_vni_svc_stat_name(k),
		 (unsigned long long)stat_of(k), (unsigned long long)want);
}

/* A child process running @p fn; its exit status is fn's return value. */
static inline pid_t
spawn(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	T_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

/* Pump while the child runs; its exit status (a wait of @p us at most). */
static inline int
reap_child(pid_t pid, uint64_t us)
{
	uint64_t deadline = trd_time_us() + us;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (trd_time_us() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			T_ASSERT(0, "child %d did not finish in time", (int)pid);
		}
		pump();
	}
	T_ASSERT(WIFEXITED(st), "child %d died of signal %d", (int)pid, WTERMSIG(st));
	return WEXITSTATUS(st);
}

/* reap_child(), and its status must be 0 (once: T_EQ would evaluate reap_child twice). */
static inline void
reap_ok(pid_t pid, uint64_t us, const char *what)
{
	int rc = reap_child(pid, us);

	T_ASSERT(rc == 0, "%s (pid %d) exited with %d", what, (int)pid, rc);
}

/* @p n bytes a child writes into the pipe @p fd (non-blocking), pumping meanwhile. */
static inline void
read_pipe(int fd, void *buf, size_t n)
{
	uint64_t deadline = trd_time_us() + WAIT_US;

	while (read(fd, buf, n) != (ssize_t)n) {
		T_ASSERT(trd_time_us() < deadline, "the child reported nothing");
		pump();
	}
}

/* A pipe whose read end does not block. */
static inline void
pipe_nb(int p[2])
{
	T_EQ(pipe(p), 0);
	T_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
}

/* Map [VADDR, VADDR + VLEN) read-write, filled with @p byte. */
static inline int
map_fixed(uint8_t byte)
{
	void *p = mmap((void *)(uintptr_t)VADDR, VLEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != (void *)(uintptr_t)VADDR)
		return -1;
	memset(p, byte, VLEN);
	return 0;
}

/* At exit: the service, the torus and the socket's folder. */
static inline void
cleanup(void)
{
	trd_vni_svc_free(vs);
	trd_net_free(net);
	trd_topo_free(topo);
	unlink(sock_path);
	rmdir(dir);
}

/* The torus of @p topo_text (one in-process engine per node, ring links, reception FIFOs of
 * @p rec_fifo_size) and the VNI service on node 0 with what @p vc sets beyond the common
 * (owners, noproc_ms), its socket in a fresh folder /tmp/toroid-@p name.XXXXXX; cleanup() at
 * exit. */
static inline void
vni_setup(const char *name, const char *topo_text, uint32_t rec_fifo_size,
	  struct trd_vni_svc_conf *vc)
{
	struct trd_node_conf ncf;
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = &ncf};
	char err[256], path[128];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/toroid-%s.XXXXXX", name);
	T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/topo.ini", dir);
	f = fopen(path, "w");
	T_ASSERT(f != NULL && fputs(topo_text, f) >= 0 && fclose(f) == 0, "topology file");
	topo = trd_topo_load(path, err, sizeof(err));
	T_ASSERT(topo != NULL, "%s", err);
	unlink(path);
	memset(&ncf, 0, sizeof(ncf));
	ncf.n_inj_fifos = 2;
	ncf.inj_fifo_size = 1024;
	ncf.n_rec_fifos = 1;
	ncf.rec_fifo_size = rec_fifo_size;
	ncf.n_counters = 256;
	ncf.n_regions = 64;
	ncf.inline_max = 960;
	net = trd_net_from_topo(topo, &nc);
	T_ASSERT(net != NULL, "trd_net_from_topo: %s", rte_strerror(rte_errno));
	for (unsigned int r = 0; r < 3; r++)
		nd[r] = trd_net_topo_node(net, topo, r);
	snprintf(sock_path, sizeof(sock_path), "%s/n0.sock", dir);
	vc->node = nd[0];
	vc->topo = topo;
	vc->socket = sock_path;
	vc->inline_max = 960;
	vc->rep_fifo = 1;
	vc->staging = 1 << 20;
	vs = trd_vni_svc_create(vc);
	T_ASSERT(vs != NULL, "trd_vni_svc_create: %s", rte_strerror(rte_errno));
	atexit(cleanup);
}

#endif /* TRD_VNI_TEST_H */
