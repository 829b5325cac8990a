/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vni-soak: processes that attach to one toroid-node, register a region, send, and die by
 * SIGKILL, in a loop (pmd-test/test_vni_soak.sh checks the engine gives everything back).
 *
 *   vni-soak --socket PATH --procs N --seconds S     N processes at a time for S seconds: each
 *                                                    attaches (application 1, any process),
 *                                                    registers a region, posts a receive, sends
 *                                                    a long message to another process and
 *                                                    writes its own region one-sidedly; once
 *                                                    its write completed it is killed (-9) at a
 *                                                    random moment of its sending, and a new one
 *                                                    takes its place
 *   vni-soak --socket PATH --final                   one process that must be served: a
 *                                                    one-sided write and read-back, byte-exact,
 *                                                    and a message to itself
 * Plain process, libtoroid_vni only. Every wait is bounded.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <toroid/vni.h>

#define MAX_PROCS  64
#define MSG_LEN    4096
#define REGION_LEN 65536

static const char *sock_path;
static unsigned int n_procs = 32;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Attach as application 1, any process; a number held by a process the engine has not seen
 * die yet is free again soon, and the engine takes 16 registrations at a time (it closes the
 * socket of the 17th): ask again (bounded). */
static struct trd_vni *
attach(void)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = TRD_VNI_ANY,
				 .pool_size = 1 << 20,
				 .n_send = 16,
				 .n_recv = 16,
				 .connect_timeout_ms = 5000};
	uint64_t deadline = now_ms() + 10000;

	for (;;) {
		struct trd_vni *v = trd_vni_open(&c);

		if (v != NULL ||
		    (errno != EADDRINUSE && errno != EBUSY && errno != ECONNRESET &&
		     errno != EPIPE) ||
		    now_ms() >= deadline) {
			if (v == NULL)
				fprintf(stderr, "vni-soak: attach: %s\n", strerror(errno));
			return v;
		}
		poll(NULL, 0, 2); /* back-off, not synchronisation: the next try decides */
	}
}

/* Wait (bounded) for the completion of kind @p kind; others are ignored. Its status, or -1. */
static int
wait_kind(struct trd_vni *v, uint16_t kind)
{
	uint64_t deadline = now_ms() + 20000;

	while (now_ms() < deadline) {
		struct trd_vni_cpl c;

		if (trd_vni_wait(v, &c, 1, 1000) == 1 && c.kind == kind)
			return c.status;
	}
	return -1;
}

/* One soak process: attach, region, receive, send, a one-sided write to itself; 'r' on
 * @p ready once the write completed; then keep sending until killed (at most 60 s). */
static int
worker(int ready)
{
	struct trd_vni *v = attach();
	uint8_t *region = calloc(1, REGION_LEN), *rbuf, *sbuf;
	struct trd_vni_info info;
	struct trd_vni_addr any = {.app = TRD_VNI_ANY, .proc = TRD_VNI_ANY}, peer;
	uint64_t key = 0, deadline = now_ms() + 60000, n = 0;

	if (v == NULL || region == NULL || trd_vni_info(v, &info) != 0)
		return 10;
	if (trd_vni_mr_reg(v, region, REGION_LEN, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE,
			   &key) != 0)
		return 11;
	rbuf = trd_vni_alloc(v, MSG_LEN);
	sbuf = trd_vni_alloc(v, MSG_LEN);
	if (rbuf == NULL || sbuf == NULL)
		return 12;
	memset(sbuf, 0x5a, MSG_LEN);
	memset(region, 0x11, REGION_LEN / 2);
	if (trd_vni_recv(v, any, 7, 0, rbuf, MSG_LEN, -1, 1) != 0)
		return 13;
	peer.app = 1;
	peer.proc = (info.self.proc + 1) % n_procs;
	if (trd_vni_send(v, peer, 7, sbuf, MSG_LEN, -1, 2) != 0)
		return 14;
	if (trd_vni_write(v, info.self, region, REGION_LEN / 2, (uintptr_t)region + REGION_LEN / 2,
			  key, -1, 3) != 0)
		return 15;
	if (wait_kind(v, TRD_VNI_CPL_WRITE) != 0)
		return 16;
	if (write(ready, "r", 1) != 1)
		return 17;
	while (now_ms() < deadline) { /* sending when it is killed */
		struct trd_vni_cpl c;

		if (trd_vni_wait(v, &c, 1, 100) == 1 && c.kind == TRD_VNI_CPL_SEND) {
			peer.proc = (uint32_t)(++n % n_procs);
			(void)trd_vni_send(v, peer, 7, sbuf, MSG_LEN, -1, 2);
		}
	}
	return 18;
}

/* The last process: it must be served fully. */
static int
final(void)
{
	struct trd_vni *v = attach();
	uint8_t *region = calloc(1, REGION_LEN), *back = calloc(1, REGION_LEN / 2), *buf;
	struct trd_vni_info info;
	uint64_t key = 0;
	int rc;

	if (v == NULL || region == NULL || back == NULL || trd_vni_info(v, &info) != 0) {
		fprintf(stderr, "vni-soak: the final process could not attach: %s\n",
			strerror(errno));
		return 1;
	}
	for (unsigned int i = 0; i < REGION_LEN / 2; i++)
		region[i] = (uint8_t)(i * 7 + 3);
	if (trd_vni_mr_reg(v, region, REGION_LEN, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE,
			   &key) != 0 ||
	    trd_vni_write(v, info.self, region, REGION_LEN / 2, (uintptr_t)region + REGION_LEN / 2,
			  key, -1, 1) != 0 ||
	    (rc = wait_kind(v, TRD_VNI_CPL_WRITE)) != 0 ||
	    trd_vni_read(v, info.self, back, REGION_LEN / 2, (uintptr_t)region + REGION_LEN / 2,
			 key, -1, 2) != 0 ||
	    (rc = wait_kind(v, TRD_VNI_CPL_READ)) != 0 ||
	    memcmp(back, region, REGION_LEN / 2) != 0) {
		fprintf(stderr, "vni-soak: the final process's one-sided write and read failed\n");
		return 1;
	}
	buf = trd_vni_alloc(v, MSG_LEN);
	if (buf == NULL ||
	    trd_vni_recv(v, info.self, 9, 0, buf + MSG_LEN / 2, MSG_LEN / 2, -1, 3) ||
	    trd_vni_send(v, info.self, 9, region, 100, -1, 4) != 0 ||
	    wait_kind(v, TRD_VNI_CPL_RECV) != 0 || memcmp(buf + MSG_LEN / 2, region, 100) != 0) {
		fprintf(stderr, "vni-soak: the final process's message to itself failed\n");
		return 1;
	}
	printf("final process %u:%u served: 32 KiB written and read back, a message to itself\n",
	       info.self.app, info.self.proc);
	trd_vni_close(v);
	return 0;
}

struct slot {
	pid_t pid;
	int ready;        /* read end of its ready pipe */
	uint64_t kill_at; /* once ready: when to kill it */
};

static void
slot_start(struct slot *s)
{
	int p[2];

	if (pipe(p) != 0) {
		perror("pipe");
		exit(2);
	}
	s->pid = fork();
	if (s->pid < 0) {
		perror("fork");
		exit(2);
	}
	if (s->pid == 0) {
		close(p[0]);
		_exit(worker(p[1]));
	}
	close(p[1]);
	s->ready = p[0];
	s->kill_at = 0;
}

/* Kill and reap: it must not have failed on its own. */
static void
slot_kill(struct slot *s)
{
	int st;

	kill(s->pid, SIGKILL);
	waitpid(s->pid, &st, 0);
	close(s->ready);
	if (!WIFSIGNALED(st)) {
		fprintf(stderr, "vni-soak: process %d ended by itself (status %d)\n", (int)s->pid,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		exit(1);
	}
}

static int
soak(unsigned int seconds)
{
	struct slot slots[MAX_PROCS];
	uint64_t end = now_ms() + (uint64_t)seconds * 1000, killed = 0;

	srand((unsigned int)getpid());
	for (unsigned int i = 0; i < n_procs; i++)
		slot_start(&slots[i]);
	while (now_ms() < end) {
		struct pollfd pf[MAX_PROCS];
		uint64_t t;

		for (unsigned int i = 0; i < n_procs; i++)
			pf[i] = (struct pollfd){.fd = slots[i].kill_at ? -1 : slots[i].ready,
						.events = POLLIN};
		poll(pf, n_procs, 5);
		t = now_ms();
		for (unsigned int i = 0; i < n_procs; i++) {
			struct slot *s = &slots[i];
			char b;

			if (s->kill_at == 0 && (pf[i].revents & (POLLIN | POLLHUP))) {
				if (read(s->ready, &b, 1) != 1) {
					fprintf(stderr, "vni-soak: a process failed before it was "
							"served\n");
					slot_kill(s);
					return 1;
				}
				s->kill_at = t + (uint64_t)(rand() % 20); /* mid-send */
			}
			if (s->kill_at != 0 && t >= s->kill_at) {
				slot_kill(s);
				killed++;
				slot_start(s);
			}
		}
	}
	for (unsigned int i = 0; i < n_procs; i++) {
		slot_kill(&slots[i]);
		killed++;
	}
	printf("%llu processes attached, registered, sent and were killed (-9), %u at a time, "
	       "in %u s\n",
	       (unsigned long long)killed, n_procs, seconds);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"socket", required_argument, NULL, 's'},  {"procs", required_argument, NULL, 'n'},
		{"seconds", required_argument, NULL, 't'}, {"final", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	unsigned int seconds = 10;
	int c, fin = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			sock_path = optarg;
			break;
		case 'n':
			n_procs = (unsigned int)atoi(optarg);
			break;
		case 't':
			seconds = (unsigned int)atoi(optarg);
			break;
		case 'f':
			fin = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s --socket PATH [--procs N (32)] [--seconds S (10)] "
				"[--final]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (sock_path == NULL || n_procs == 0 || n_procs > MAX_PROCS) {
		fprintf(stderr, "%s: --socket is needed; --procs 1..%d\n", argv[0], MAX_PROCS);
		return 2;
	}
	return fin ? final() : soak(seconds);
}
