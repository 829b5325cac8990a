/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the VNI tests that run the service in-process (test_vni_atom.c, test_vni_trust.c,
 * test_vni_hostile.c, test_vni_order.c, test_vni_copies.c, test_vni_match.c, ...): the engine they
 * poll, the forked application processes, the pipes the children report through, each wait bounded.
 * Every test program includes it once.
 */
#ifndef TRD_VNI_TEST_H
#define TRD_VNI_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
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

#ifndef WAIT_US
#define WAIT_US 10000000ULL /* the bound of every wait (a test may define a longer one first) */
#endif
#define PAGE   4096u
#define VADDR  0x3a5a00000000ULL /* the victim's region: the same address in every image */
#define VLEN   (4 * PAGE)
#define INIT   0x11 /* the victim's bytes */
#define SECRET 0x5e /* the new image's (or the new process's) bytes */

/* the test's torus (one in-process engine per node, ring links), the VNI service on node 0 and,
 * with vni_setup_with(), one on node 1 */
static char dir[64], sock_path[100], sock_n1[100];
static struct trd_topo *topo;
static struct trd_net *net;
static struct trd_node *nd[3];
static struct trd_vni_svc *vs, *vs_n1;
static unsigned int pump_hold; /* nodes pump() leaves alone (bit r: node r): silent peers */

static inline void
pump(void)
{
	if (pump_hold == 0)
		trd_net_poll(net);
	for (unsigned int r = 0; pump_hold != 0 && r < 3; r++)
		if (!(pump_hold & 1u << r))
			trd_node_poll(nd[r]);
	trd_vni_svc_poll(vs);
	if (vs_n1 != NULL)
		trd_vni_svc_poll(vs_n1);
}

/* Statistic @p k of the service on node @p n (0 or 1). */
static inline uint64_t
stat_on(unsigned int n, enum trd_vni_svc_stat k)
{
	uint64_t st[TRD_VNI_SVC_STAT_MAX];

	trd_vni_svc_stats_get(n == 0 ? vs : vs_n1, st);
	return st[k];
}

static inline uint64_t
stat_of(enum trd_vni_svc_stat k)
{
	return stat_on(0, k);
}

/* Node 0's statistic @p k (the core's, beside the service's of stat_of()). */
static inline uint64_t
node_stat(enum trd_node_stat k)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(nd[0], &st), 0);
	return st.stat[k];
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

/* A forked child runs where EAL pinned the parent's main lcore (CPU 0), beside the engine's
 * busy loop: an attached process runs on any CPU but the engine's, and so do the children
 * that call this. */
static inline void
vni_unpin(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (long c = 1; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	if (n > 1 && sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("sched_setaffinity");
}

/* One completion of @p v within @p us: its status, or -1000 (none came). It polls and yields,
 * as MPI does, so the engine's requests to the process (a long message to read itself) are
 * taken at once. */
static inline int
vni_wait_one(struct trd_vni *v, struct trd_vni_cpl *c, uint64_t us)
{
	uint64_t deadline = trd_time_us() + us;
	int n;

	while ((n = trd_vni_poll(v, c, 1)) == 0 && trd_time_us() < deadline)
		sched_yield();
	if (n != 1)
		return -1000;
	return c->status;
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

/* At exit: the services, the torus and the socket's folder. */
static inline void
cleanup(void)
{
	trd_vni_svc_free(vs_n1);
	trd_vni_svc_free(vs);
	trd_net_free(net);
	trd_topo_free(topo);
	unlink(sock_n1);
	unlink(sock_path);
	rmdir(dir);
}

/* The VNI service on node @p r, on socket @p path, with what @p vc sets beyond the common
 * (owners, noproc_ms, staging: 1 MiB unless set). */
static inline struct trd_vni_svc *
vni_svc_make(unsigned int r, const char *path, struct trd_vni_svc_conf *vc)
{
	struct trd_vni_svc *s;

	vc->node = nd[r];
	vc->topo = topo;
	vc->socket = path;
	vc->inline_max = 960;
	vc->rep_fifo = 1;
	if (vc->staging == 0)
		vc->staging = 1 << 20;
	s = trd_vni_svc_create(vc);
	T_ASSERT(s != NULL, "trd_vni_svc_create (node %u): %s", r, rte_strerror(rte_errno));
	return s;
}

/* A bounded blocking read from a pipe (the child side): 20 s at most. 0 or -1. */
static inline int
child_read(int fd, void *buf, size_t n)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	if (poll(&pf, 1, 20000) != 1)
		return -1;
	return read(fd, buf, n) == (ssize_t)n ? 0 : -1;
}

/* What a test may choose of its torus. */
struct vni_setup_opt {
	uint32_t rec_fifo_size;         /* every node's reception FIFO */
	uint32_t n_counters;            /* every node's counters (0: 256) */
	bool payload_crc;               /* payloads carry a CRC (for links that corrupt them) */
	unsigned int coalesce;          /* every node's coalescing (0: the default) */
	bool unreliable;                /* no sessions: frames lost are lost */
	unsigned int ack_delay_us;      /* every node's (0: the default) */
	unsigned int dead_ms;           /* every node's (0: the default) */
	uint32_t n_regions;             /* every node's regions (0: 64) */
	unsigned int rel_window;        /* every node's packets in flight per peer (0: default) */
	struct trd_vni_svc_conf *vc_n1; /* non-NULL: a service on node 1 too, on sock_n1 */
};

/* The torus of @p topo_text (one in-process engine per node, ring links) as @p o says, the VNI
 * service on node 0 as @p vc says (vni_svc_make()) and, with o->vc_n1, one on node 1, their
 * sockets in a fresh folder /tmp/toroid-@p name.XXXXXX; cleanup() at exit. */
static inline void
vni_setup_with(const char *name, const char *topo_text, const struct vni_setup_opt *o,
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
	ncf.rec_fifo_size = o->rec_fifo_size;
	ncf.n_counters = o->n_counters != 0 ? o->n_counters : 256;
	ncf.n_regions = o->n_regions != 0 ? o->n_regions : 64;
	ncf.inline_max = 960;
	ncf.payload_crc = o->payload_crc;
	ncf.coalesce = o->coalesce;
	ncf.unreliable = o->unreliable;
	ncf.ack_delay_us = o->ack_delay_us;
	ncf.dead_ms = o->dead_ms;
	ncf.rel_window = o->rel_window;
	net = trd_net_from_topo(topo, &nc);
	T_ASSERT(net != NULL, "trd_net_from_topo: %s", rte_strerror(rte_errno));
	for (unsigned int r = 0; r < 3; r++)
		nd[r] = trd_net_topo_node(net, topo, r);
	snprintf(sock_path, sizeof(sock_path), "%s/n0.sock", dir);
	snprintf(sock_n1, sizeof(sock_n1), "%s/n1.sock", dir);
	atexit(cleanup);
	vs = vni_svc_make(0, sock_path, vc);
	if (o->vc_n1 != NULL)
		vs_n1 = vni_svc_make(1, sock_n1, o->vc_n1);
}

/* vni_setup_with() with one service and reception FIFOs of @p rec_fifo_size. */
static inline void
vni_setup(const char *name, const char *topo_text, uint32_t rec_fifo_size,
	  struct trd_vni_svc_conf *vc)
{
	const struct vni_setup_opt o = {.rec_fifo_size = rec_fifo_size};

	vni_setup_with(name, topo_text, &o, vc);
}

#endif /* TRD_VNI_TEST_H */
