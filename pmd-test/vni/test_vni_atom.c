/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI atomics applied exactly once across everything an origin does, and attaching that one
 * process cannot block (docs/vni.md, "Threat model" and "At most once"):
 *   gen_wrap  one atomic, 33 000 one-sided writes from the same process, another atomic, all
 *             within the target's memory of atomics (15 s): the last atomic is applied, once
 *   restart   the origin node's engine restarts between two atomics to the same target: the
 *             second, from the new engine, is applied (not taken for the old engine's)
 *   window    two processes with 4 200 atomics in flight towards one node: at most 4 096
 *             open, the others complete -EAGAIN at once (rma_backpressure), none lost
 *   conns     a process holding 64 idle connections to the service's socket (reconnecting
 *             whenever one is dropped): another process still attaches, within a bound
 * One in-process engine per node over ring links; applications are forked children.
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

/* ---- gen_wrap: an atomic judged stale because its slot's generation moved on ---- */

/*
 * The target remembers atomics per (origin node, origin op index) with the index's 16-bit
 * generation, and judges a new atomic NEW only if (int16_t)(gen - remembered gen) > 0. The
 * origin's free list is LIFO, so a process that does one op at a time always uses index 1;
 * only atomics refresh the remembered generation. One atomic, then N_WRITES one-sided writes
 * (each a new generation of index 1), then one atomic: if N_WRITES >= 32768 and all of this
 * happens within SVC_ATOM_KEEP_US (15 s), the last atomic is judged STALE, dropped without
 * an answer every time it is asked, and fails with -ETIMEDOUT although nothing was lost.
 */
#define N_WRITES 33000u /* more than 32 768 ops: one generation of the op index apart */

static int
gen_app(void *arg)
{
	const int *to_parent = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr self = {.app = 3, .proc = 0};
	uint64_t *word = calloc(1, 64), key = 0, rep[5] = {0};
	struct trd_vni *v = trd_vni_open(&c);
	struct trd_vni_cpl cpl;
	uint64_t t0;

	if (v == NULL || word == NULL ||
	    trd_vni_mr_reg(v, word, 64, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &key) !=
		    0)
		return 10;
	t0 = trd_time_us();
	if (trd_vni_atomic(v, self, TRD_VNI_AOP_SUM, 8, 1, 0, (uintptr_t)word, key, -1, 1) != 0 ||
	    trd_vni_wait(v, &cpl, 1, 20000) != 1)
		return 11;
	rep[0] = (uint64_t)cpl.status;
	for (unsigned int i = 0; i < N_WRITES; i++) {
		uint64_t x = i;

		if (trd_vni_write(v, self, &x, 8, (uintptr_t)word + 8, key, -1, 2) != 0 ||
		    trd_vni_wait(v, &cpl, 1, 20000) != 1 || cpl.status != 0)
			return 12;
	}
	rep[1] = trd_time_us() - t0; /* must be well under 15 s */
	t0 = trd_time_us();
	if (trd_vni_atomic(v, self, TRD_VNI_AOP_SUM, 8, 1, 0, (uintptr_t)word, key, -1, 3) != 0 ||
	    trd_vni_wait(v, &cpl, 1, 30000) != 1)
		return 13;
	rep[2] = (uint64_t)(int64_t)cpl.status;
	rep[3] = trd_time_us() - t0;
	rep[4] = __atomic_load_n(word, __ATOMIC_RELAXED);
	if (write(*to_parent, rep, sizeof(rep)) != sizeof(rep))
		return 14;
	trd_vni_close(v);
	return 0;
}

static void
test_gen_wrap(void)
{
	uint64_t rep[5], stale0 = stat_of(TRD_VNI_SVC_STAT_RMA_STALE);
	int p[2];
	pid_t pid;

	pipe_nb(p);
	pid = spawn(gen_app, &p[1]);
	reap_ok(pid, 5 * WAIT_US, "the application");
	T_EQ(read(p[0], rep, sizeof(rep)), sizeof(rep));
	printf("gen_wrap: first atomic %lld; %u writes in %.1f s; last atomic status %lld after "
	       "%.1f s; word %llu (want 2); stale drops %llu\n",
	       (long long)(int64_t)rep[0], N_WRITES, rep[1] / 1e6, (long long)(int64_t)rep[2],
	       rep[3] / 1e6, (unsigned long long)rep[4],
	       (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_RMA_STALE) - stale0));
	T_ASSERT((int64_t)rep[2] == 0 && rep[4] == 2,
		 "an atomic with nothing lost was not applied exactly once (status %lld, "
		 "word %llu)",
		 (long long)(int64_t)rep[2], (unsigned long long)rep[4]);
}

/* ---- restart: the origin's engine restarts, its atomics are judged stale ---- */

/*
 * Same root cause as atom_gen.c, reached by an ordinary event: the target (node 0) remembers
 * atomics per (origin node, op index) with the index's generation for 15 s; a restarted
 * origin engine (node 1; here trd_vni_svc_free + trd_vni_svc_create, as a toroid-node restart)
 * starts every index at generation 0 again and hands out index 1 first. Its first atomic to node 0
 * within 15 s of the last one before the restart is STALE: never answered, -ETIMEDOUT after
 * 20 asks (10 s), not applied.
 */
static struct trd_vni_svc *vs1;
static char sock1[100];

static void
vs1_create(void)
{
	struct trd_vni_svc_conf vc;

	memset(&vc, 0, sizeof(vc));
	vc.node = nd[1];
	vc.topo = topo;
	vc.socket = sock1;
	vc.inline_max = 960;
	vc.rep_fifo = 1;
	vc.staging = 1 << 20;
	vc.noproc_ms = 300;
	vs1 = trd_vni_svc_create(&vc);
	T_ASSERT(vs1 != NULL, "trd_vni_svc_create (node 1): %s", rte_strerror(rte_errno));
}

struct tgt {
	int up, go;
};

static int
target_app(void *arg)
{
	const struct tgt *t = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni *v = trd_vni_open(&c);
	uint64_t key = 0, w;
	char b;

	if (map_fixed(0) != 0 || v == NULL ||
	    trd_vni_mr_reg(v, (void *)(uintptr_t)VADDR, VLEN,
			   TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &key) != 0)
		return 10;
	if (write(t->up, &key, sizeof(key)) != sizeof(key) || read(t->go, &b, 1) != 1)
		return 11;
	w = *(volatile uint64_t *)(uintptr_t)VADDR;
	return write(t->up, &w, sizeof(w)) == sizeof(w) ? 0 : 12;
}

struct org {
	uint64_t key;
	int up;
};

/* 1:0 on node 1: one atomic sum of 1 on the target's word; reports (status, seconds x 10) */
static int
origin_app(void *arg)
{
	const struct org *o = arg;
	struct trd_vni_conf c = {.socket = sock1,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr dst = {.app = 3, .proc = 0};
	struct trd_vni *v = trd_vni_open(&c);
	struct trd_vni_cpl cpl;
	int64_t res[2];
	uint64_t t0 = trd_time_us();

	if (v == NULL)
		return 10;
	if (trd_vni_atomic(v, dst, TRD_VNI_AOP_SUM, 8, 1, 0, VADDR, o->key, -1, 1) != 0 ||
	    trd_vni_wait(v, &cpl, 1, 30000) != 1)
		return 11;
	res[0] = cpl.status;
	res[1] = (int64_t)((trd_time_us() - t0) / 100000);
	if (write(o->up, res, sizeof(res)) != sizeof(res))
		return 12;
	trd_vni_close(v);
	return 0;
}

static void
pump1(void)
{
	pump();
	if (vs1 != NULL)
		trd_vni_svc_poll(vs1);
}

static int64_t
one_atomic(uint64_t key, int64_t *tenths)
{
	struct org o = {.key = key};
	int p[2];
	int64_t res[2];
	pid_t pid;
	uint64_t deadline = trd_time_us() + 40000000;
	int st;

	pipe_nb(p);
	o.up = p[1];
	pid = spawn(origin_app, &o);
	while (waitpid(pid, &st, WNOHANG) != pid) {
		T_ASSERT(trd_time_us() < deadline, "the origin hangs");
		pump1();
	}
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "origin failed: %d", st);
	T_EQ(read(p[0], res, sizeof(res)), sizeof(res));
	close(p[0]);
	close(p[1]);
	*tenths = res[1];
	return res[0];
}

static void
test_restart(void)
{
	struct tgt t;
	int up[2], go[2];
	uint64_t key, word, end;
	int64_t s1, s2, t1, t2;
	pid_t tp;

	snprintf(sock1, sizeof(sock1), "%s/n1.sock", dir);
	vs1_create();
	pipe_nb(up);
	T_EQ(pipe(go), 0);
	t.up = up[1];
	t.go = go[0];
	tp = spawn(target_app, &t);
	end = trd_time_us() + WAIT_US;
	while (read(up[0], &key, sizeof(key)) != sizeof(key)) {
		T_ASSERT(trd_time_us() < end, "no key");
		pump1();
	}
	s1 = one_atomic(key, &t1);
	/* node 1's engine restarts (its process detached already) */
	end = trd_time_us() + 500000;
	while (trd_time_us() < end)
		pump1();
	trd_vni_svc_free(vs1);
	vs1 = NULL;
	unlink(sock1);
	vs1_create();
	s2 = one_atomic(key, &t2);
	T_EQ(write(go[1], "w", 1), 1);
	end = trd_time_us() + WAIT_US;
	while (read(up[0], &word, sizeof(word)) != sizeof(word)) {
		T_ASSERT(trd_time_us() < end, "no word");
		pump1();
	}
	reap_ok(tp, WAIT_US, "the target");
	printf("restart: atomic before the origin engine's restart: %lld (%.1f s); after: %lld "
	       "(%.1f s); word %llu (want 2); stale drops %llu\n",
	       (long long)s1, t1 / 10.0, (long long)s2, t2 / 10.0, (unsigned long long)word,
	       (unsigned long long)stat_of(TRD_VNI_SVC_STAT_RMA_STALE));
	trd_vni_svc_free(vs1);
	vs1 = NULL;
	T_ASSERT(s1 == 0 && s2 == 0 && word == 2,
		 "an atomic from a restarted engine was not applied exactly once");
}

/* ---- conns: idle connections of one process must not keep others from attaching ---- */

/*
 * A process that may open the socket connects N_HOG times, sends nothing, and connects again
 * whenever the engine drops or refuses one, until told to stop. Meanwhile another process
 * attaches once (trd_vni_open, which asks a busy engine again for a bounded time): it must be
 * attached, within ATTACH_BOUND_US.
 */
#define N_HOG           64
#define ATTACH_BOUND_US 5000000

struct hog {
	int up, stop;
};

static int
hog_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strncpy(sa.sun_path, sock_path, sizeof(sa.sun_path) - 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
hog_app(void *arg)
{
	const struct hog *h = arg;
	struct pollfd p[N_HOG + 1];
	uint64_t end = trd_time_us() + 30000000, reconnects = 0; /* bounded if never told */

	for (int i = 0; i < N_HOG; i++) {
		p[i].fd = hog_connect();
		p[i].events = POLLIN;
	}
	p[N_HOG].fd = h->stop;
	p[N_HOG].events = POLLIN;
	if (write(h->up, "h", 1) != 1)
		return 10;
	while (trd_time_us() < end) {
		if (poll(p, N_HOG + 1, 100) <= 0)
			continue;
		if (p[N_HOG].revents != 0)
			break;
		for (int i = 0; i < N_HOG; i++)
			if (p[i].revents != 0) { /* dropped (deadline) or answered -EBUSY */
				close(p[i].fd);
				p[i].fd = hog_connect();
				reconnects++;
			}
	}
	printf("hog: %llu reconnects\n", (unsigned long long)reconnects);
	return 0;
}

static int
late_app(void *arg)
{
	const int *up = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 3,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 1000};
	uint64_t t0 = trd_time_us();
	struct trd_vni *v = trd_vni_open(&c);
	int64_t res[2] = {v != NULL ? 0 : -errno, (int64_t)(trd_time_us() - t0)};

	if (v != NULL)
		trd_vni_close(v);
	return write(*up, res, sizeof(res)) == sizeof(res) ? 0 : 10;
}

static void
test_conns(void)
{
	int hp[2], sp[2], lp[2];
	int64_t res[2];
	struct hog h;
	pid_t hog, late;
	char b;

	pipe_nb(hp);
	T_EQ(pipe(sp), 0);
	pipe_nb(lp);
	h.up = hp[1];
	h.stop = sp[0];
	hog = spawn(hog_app, &h);
	read_pipe(hp[0], &b, 1);
	late = spawn(late_app, &lp[1]);
	reap_ok(late, 3 * WAIT_US, "the late process");
	T_EQ(write(sp[1], "s", 1), 1);
	reap_ok(hog, 3 * WAIT_US, "the hog");
	T_EQ(read(lp[0], res, sizeof(res)), sizeof(res));
	printf("conns: while one process held %d idle connections, another attached: %lld after "
	       "%.2f s; refused registrations %llu\n",
	       N_HOG, (long long)res[0], res[1] / 1e6,
	       (unsigned long long)stat_of(TRD_VNI_SVC_STAT_REFUSED));
	T_ASSERT(res[0] == 0, "idle connections of one process kept another out: %s",
		 strerror((int)-res[0]));
	T_ASSERT(res[1] < ATTACH_BOUND_US, "attached only after %.2f s", res[1] / 1e6);
}

/* ---- window: more atomics in flight towards one node than the target can tell apart ---- */

/*
 * Two processes of node 0 (3:0 and 4:0) each post N_WIN atomics at once to 5:0, a process of
 * node 0 that never attaches (each asks again until noproc_ms, 300 ms, then -ECONNREFUSED):
 * together more than SVC_ATOM_WINDOW (4096) towards one node. The engine opens at most 4096;
 * the others complete at once with -EAGAIN (counted in rma_backpressure), none is lost.
 */
#define N_WIN 2100u

struct win {
	uint32_t app;
	int up, go;
};

static int
win_app(void *arg)
{
	const struct win *w = arg;
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = w->app,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .n_send = 4096,
				 .n_recv = 4,
				 .connect_timeout_ms = 5000};
	struct trd_vni_addr dst = {.app = 5, .proc = 0};
	struct trd_vni *v = trd_vni_open(&c);
	uint64_t rep[3] = {0, 0, 0}; /* -EAGAIN, -ECONNREFUSED, other */
	unsigned int done = 0;
	char b;

	if (v == NULL || write(w->up, "a", 1) != 1 || read(w->go, &b, 1) != 1)
		return 10;
	for (unsigned int i = 0; i < N_WIN; i++)
		if (trd_vni_atomic(v, dst, TRD_VNI_AOP_SUM, 8, 1, 0, 4096, 0x1234, -1, i) != 0)
			return 11;
	while (done < N_WIN) {
		struct trd_vni_cpl cpl[64];
		int n = trd_vni_wait(v, cpl, 64, 30000);

		if (n <= 0)
			return 12; /* an op never completed */
		for (int k = 0; k < n; k++)
			rep[cpl[k].status == -EAGAIN         ? 0
			    : cpl[k].status == -ECONNREFUSED ? 1
							     : 2]++;
		done += (unsigned int)n;
	}
	if (write(w->up, rep, sizeof(rep)) != sizeof(rep))
		return 13;
	trd_vni_close(v);
	return 0;
}

static void
test_window(void)
{
	uint64_t bp0 = stat_of(TRD_VNI_SVC_STAT_RMA_BACKPRESSURE), rep[2][3];
	struct win w[2];
	int up[2][2], go[2];
	pid_t pid[2];
	char b;

	T_EQ(pipe(go), 0);
	for (int i = 0; i < 2; i++) {
		pipe_nb(up[i]);
		w[i] = (struct win){.app = 3 + (uint32_t)i, .up = up[i][1], .go = go[0]};
		pid[i] = spawn(win_app, &w[i]);
		read_pipe(up[i][0], &b, 1);
	}
	T_EQ(write(go[1], "gg", 2), 2); /* both post at once */
	for (int i = 0; i < 2; i++) {
		reap_ok(pid[i], 5 * WAIT_US, "a poster (12: an op never completed)");
		T_EQ(read(up[i][0], rep[i], sizeof(rep[i])), sizeof(rep[i]));
	}
	printf("window: %u + %u atomics towards one node: -EAGAIN %llu + %llu, -ECONNREFUSED "
	       "%llu + %llu, other %llu + %llu; rma_backpressure %llu\n",
	       N_WIN, N_WIN, (unsigned long long)rep[0][0], (unsigned long long)rep[1][0],
	       (unsigned long long)rep[0][1], (unsigned long long)rep[1][1],
	       (unsigned long long)rep[0][2], (unsigned long long)rep[1][2],
	       (unsigned long long)(stat_of(TRD_VNI_SVC_STAT_RMA_BACKPRESSURE) - bp0));
	T_EQ(rep[0][2] + rep[1][2], 0);
	T_ASSERT(rep[0][0] + rep[1][0] >= 1 && rep[0][0] + rep[1][0] <= 2 * N_WIN - 4096,
		 "%llu atomics refused -EAGAIN, want 1..%u",
		 (unsigned long long)(rep[0][0] + rep[1][0]), 2 * N_WIN - 4096);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_RMA_BACKPRESSURE) - bp0, rep[0][0] + rep[1][0]);
}

/* ---- set-up ---- */

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 3:0, 4:0, 5:0\nx+ = 0\nx- = 1\n"
				"[node 1]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s gen_wrap|restart|conns|window\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.noproc_ms = 300; /* ops on an interface that ended fail sooner */
	vni_setup("vatom", topo_text, 1024, &vc);
	if (strcmp(argv[1], "gen_wrap") == 0)
		test_gen_wrap();
	else if (strcmp(argv[1], "restart") == 0)
		test_restart();
	else if (strcmp(argv[1], "conns") == 0)
		test_conns();
	else if (strcmp(argv[1], "window") == 0)
		test_window();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni %s\n", argv[1]);
	return 0;
}
