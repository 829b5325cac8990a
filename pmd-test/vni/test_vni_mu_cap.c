/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-wide cap on attached processes' atomics (issue 27; docs/vni.md, "Messaging-unit
 * objects", Atomics): each atomic a process posts into its injection FIFO holds one of the
 * node's 4096 completion ids until its verdict comes; at most 64 of one process's wait, and at
 * most 2048 (TRD_GUEST_CPLS) of all processes' together, so that the node's own operations
 * always find an id. A 3x1x1 torus of in-process engines over ring links, the VNI service on
 * node 0 with 64 processes (the most the topology places on a node: 64 x 64 atomics could
 * ask for the whole table), all attached by one forked child; the target word is in a region
 * of node 1's, which this process stops polling while a round is held: no verdict comes, and
 * what node 0 sends waits in the link (node 1 is not declared down: dead_ms is 120 s).
 *
 *   test_vni_mu_cap  one atomic with node 1 answering (the session is up: the atomics then
 *                    wait for ids, not for a session), then twice: each of the 64 processes
 *                    posts 64 fetch-and-adds of 1 on the word (4096 in all). While node 1 is
 *                    held, node 0 takes exactly 2048 of them (guest_descs, and the processes'
 *                    descs counts: none over 64, the rest still in their FIFOs, no counter
 *                    touched) and never holds more than 2048 ids (trd_node_cpl_pending()
 *                    after every round); its own tracked operations get every one of the
 *                    other 2048 ids, and no more. Node 1 released, every atomic completes
 *                    exactly once: node 1 applies 4096, the old values are each of the
 *                    round's 4096 once, every counter is exactly 0, the word grows by 4096,
 *                    and every id is back (pending 0). The second round takes 2048 again: the
 *                    guests' count came back to 0 too.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ring.h>

#define WAIT_US 15000000ULL /* 64 attachments under ASan */
#include "vni_mu_test.h"
#include "vni_test.h"

#define N_PROC   64u            /* the processes on node 0 (the topology's most) */
#define PER      64u            /* atomics each posts: as many as may wait for one */
#define ALL      (N_PROC * PER) /* 4096: the node's whole table */
#define CAP      2048u          /* TRD_GUEST_CPLS (engine/core/node_pvt.h) */
#define N_CPL    4096u          /* TRD_N_CPL */
#define ROUNDS   2u             /* the second shows the guests' count came back to 0 */
#define CTR      1              /* each process's counter for its verdicts */
#define CWAIT    8000000        /* a counter wait (us) */
#define SETTLE   1000           /* rounds polled once the cap is reached: no more taken */
#define TOPO_MAX 2048

static char topo_text[TOPO_MAX];
static int p_c2p[2], p_p2c[2];
static uint64_t wkey;          /* the word's region on node 1 */
static struct trd_coord wnode; /* node 1 */
static unsigned int held_max;  /* the most ids node 0 held after a round while node 1 was held */
static pid_t child;            /* the processes' */

/* The torus of vni_mu_test.h with the 64 processes 1:0 .. 1:63 on node 0. */
static void
topo_make(void)
{
	size_t n = (size_t)snprintf(topo_text, TOPO_MAX,
				    "[torus]\ndims = 3x1x1\nmode = direct\n[node 0]\n");

	for (unsigned int p = 0; p < N_PROC; p++)
		n += (size_t)snprintf(topo_text + n, TOPO_MAX - n, "%s1:%u%s",
				      p % 16 == 0 ? "procs = " : "", p, p % 16 == 15 ? "\n" : ", ");
	n += (size_t)snprintf(topo_text + n, TOPO_MAX - n,
			      "x+ = 0\nx- = 1\n[node 1]\nx+ = 0\nx- = 1\n"
			      "[node 2]\nx+ = 0\nx- = 1\n");
	T_ASSERT(n < TOPO_MAX, "topology text");
}

/* One round of node 0 and its service only: node 1 holds every verdict back. */
static void
pump_held(void)
{
	unsigned int p;

	trd_node_poll(nd[0]);
	trd_vni_svc_poll(vs);
	p = trd_node_cpl_pending(nd[0]);
	if (p > held_max)
		held_max = p;
}

/* @p n bytes the child writes into the pipe, pumping node 0 only (@p held) or every node
 * meanwhile; a child that ends first fails the test with its exit status. */
static void
read_child(void *buf, size_t n, bool held)
{
	uint64_t deadline = trd_time_us() + WAIT_US;
	int st;

	while (read(p_c2p[0], buf, n) != (ssize_t)n) {
		T_ASSERT(trd_time_us() < deadline, "the child reported nothing");
		if (waitpid(child, &st, WNOHANG) == child) {
			/* (what it wrote before it ended is in the pipe still) */
			T_ASSERT(read(p_c2p[0], buf, n) == (ssize_t)n,
				 "the child ended with %d, saying nothing",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
			T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child ended with %d",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
			child = 0; /* reaped: done */
			return;
		}
		if (held)
			pump_held();
		else
			pump();
	}
}

/* ---- the child: 64 processes' interfaces ---- */

static struct trd_vni *vh[N_PROC];

static struct trd_vni *
cap_open(uint32_t proc)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 1 << 16,
				 .n_send = 4,
				 .n_recv = 4,
				 .connect_timeout_ms = 5000,
				 .mu_fifos = 1,
				 .mu_fifo_slots = 2 * PER, /* (a ring holds one less) */
				 .mu_region = 4096};

	return trd_vni_open(&c);
}

/* Every process posts PER fetch-and-adds of 1, old value k at 8 * k of its region. */
static int
child_post(void)
{
	static struct trd_desc d[PER];

	for (unsigned int k = 0; k < PER; k++)
		trd_vni_desc_atomic(&d[k], wnode, TRD_ATOMIC_FADD, wkey, 0, 1, 0, k * 8, CTR);
	for (unsigned int p = 0; p < N_PROC; p++)
		if (trd_vni_counter_set(vh[p], CTR, 8 * PER) != 0 ||
		    trd_vni_inject(vh[p], 0, d, PER) != 0)
			return -1;
	return 0;
}

/* While node 1 is held: the atomics the engine took (none over 64 a process, the rest still
 * in the FIFO, no verdict on any counter), their sum into @p taken. 0 or an exit code. */
static int
child_held(unsigned int round, uint64_t *taken)
{
	struct trd_vni_mu_info mi;
	int64_t cv;

	*taken = 0;
	for (unsigned int p = 0; p < N_PROC; p++) {
		uint64_t before = (uint64_t)round * PER + (p == 0); /* (the warm-up's) */

		if (trd_vni_mu_info(vh[p], &mi) != 0 || trd_vni_counter_read(vh[p], CTR, &cv) != 0)
			return 20;
		if (mi.descs < before || mi.descs - before > PER || mi.bad_descs != 0) {
			fprintf(stderr, "proc %u: descs %llu (before %llu), bad %llu\n", p,
				(unsigned long long)mi.descs, (unsigned long long)before,
				(unsigned long long)mi.bad_descs);
			return 21;
		}
		/* the ones not taken are in the ring still, unread (what was taken may not be
		 * given back to the producer yet: at least) */
		if (rte_ring_count(mi.fifos[0]) < PER - (mi.descs - before))
			return 22;
		if (cv != 8 * (int64_t)PER)
			return 23; /* a verdict came with node 1 held */
		*taken += mi.descs - before;
	}
	return 0;
}

/* Node 1 released: every counter exactly 0, each of the round's old values once. */
static int
child_done(unsigned int round)
{
	static uint8_t seen[ALL];
	struct trd_vni_mu_info mi;
	int64_t cv;

	memset(seen, 0, sizeof(seen));
	for (unsigned int p = 0; p < N_PROC; p++) {
		const uint64_t *res;

		if (trd_vni_counter_wait(vh[p], CTR, CWAIT) != 0 ||
		    trd_vni_counter_read(vh[p], CTR, &cv) != 0 || cv != 0 ||
		    trd_vni_mu_info(vh[p], &mi) != 0) {
			fprintf(stderr, "proc %u: counter %lld\n", p, (long long)cv);
			return 30;
		}
		if (mi.descs != (round + 1) * PER + (p == 0) || mi.bad_descs != 0)
			return 31;
		res = mi.region;
		for (unsigned int k = 0; k < PER; k++) {
			uint64_t o = __atomic_load_n(&res[k], __ATOMIC_ACQUIRE) - 1 - round * ALL;

			if (o >= ALL || seen[o]++ != 0) {
				fprintf(stderr, "proc %u: old value %llu twice or out of range\n",
					p, (unsigned long long)(o + 1 + round * ALL));
				return 32;
			}
		}
	}
	return 0;
}

/* One atomic of process 0 with node 1 answering: the session between the nodes is up before
 * any round (else the atomics would wait for it, one stage of each FIFO taken, and not for the
 * cap). The word is 1 after it. */
static int
child_warm(void)
{
	struct trd_desc d;

	trd_vni_desc_atomic(&d, wnode, TRD_ATOMIC_FADD, wkey, 0, 1, 0, 0, CTR);
	if (trd_vni_counter_set(vh[0], CTR, 8) != 0 || trd_vni_inject(vh[0], 0, &d, 1) != 0 ||
	    trd_vni_counter_wait(vh[0], CTR, CWAIT) != 0)
		return -1;
	return write(p_c2p[1], "w", 1) == 1 ? 0 : -1;
}

static int
cap_child(void *arg)
{
	uint8_t go;

	(void)arg;
	for (unsigned int p = 0; p < N_PROC; p++)
		if ((vh[p] = cap_open(p)) == NULL) {
			fprintf(stderr, "process 1:%u: trd_vni_open: %s\n", p, strerror(errno));
			return 10;
		}
	if (child_warm() != 0)
		return 15;
	for (unsigned int r = 0; r < ROUNDS; r++) {
		uint64_t taken;
		int rc;

		/* posted only once the parent holds node 1 (not while it answers the last
		 * round's, which it checks first) */
		if (child_read(p_p2c[0], &go, 1) != 0 || child_post() != 0 ||
		    write(p_c2p[1], "p", 1) != 1)
			return 11;
		if (child_read(p_p2c[0], &go, 1) != 0)
			return 12;
		rc = child_held(r, &taken);
		if (rc != 0)
			return rc;
		if (write(p_c2p[1], &taken, sizeof(taken)) != sizeof(taken) ||
		    child_read(p_p2c[0], &go, 1) != 0)
			return 13;
		rc = child_done(r);
		if (rc != 0)
			return rc;
		if (write(p_c2p[1], "d", 1) != 1)
			return 14;
	}
	for (unsigned int p = 0; p < N_PROC; p++)
		trd_vni_close(vh[p]);
	return 0;
}

/* ---- the engines' side ---- */

/* Node @p r's statistic @p k. */
static uint64_t
nstat_of(unsigned int r, enum trd_node_stat k)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(nd[r], &st), 0);
	return st.stat[k];
}

/* Node 0's own tracked operations get every id the guests do not hold, and no more. */
static void
own_ids(void)
{
	static uint32_t ids[N_CPL];
	unsigned int n = 0;
	uint32_t id;

	while (n < N_CPL && trd_track_open(nd[0], 0, n, NULL, &id) == 0)
		ids[n++] = id;
	T_EQ(n, N_CPL - CAP);
	T_EQ(trd_track_open(nd[0], 0, 0, NULL, &id), -ENOSPC);
	for (unsigned int i = 0; i < n; i++)
		T_EQ(trd_track_close(nd[0], ids[i]), 0);
	T_EQ(trd_node_cpl_pending(nd[0]), CAP);
}

/* One round: the child posts, node 0 takes up to the cap, then node 1 answers them all. */
static void
cap_round(unsigned int r, const volatile uint64_t *word)
{
	uint64_t g0 = node_stat(TRD_STAT_GUEST_DESCS), a0, deadline, taken = 0;
	uint8_t b;

	a0 = nstat_of(1, TRD_STAT_ATOMICS);
	held_max = 0;
	T_EQ(write(p_p2c[1], "g", 1), 1);
	read_child(&b, 1, true); /* all posted */
	deadline = trd_time_us() + WAIT_US;
	while (node_stat(TRD_STAT_GUEST_DESCS) - g0 < CAP && trd_time_us() < deadline)
		pump_held();
	for (unsigned int i = 0; i < SETTLE; i++) /* nothing more may be taken */
		pump_held();
	T_EQ(node_stat(TRD_STAT_GUEST_DESCS) - g0, CAP);
	T_EQ(held_max, CAP); /* the guests' ids, after every round */
	T_EQ(trd_node_cpl_pending(nd[0]), CAP);
	own_ids();
	/* the processes' view: 2048 taken, the rest in their FIFOs */
	T_EQ(write(p_p2c[1], "c", 1), 1);
	read_child(&taken, sizeof(taken), true);
	T_EQ(taken, CAP);
	T_EQ(nstat_of(1, TRD_STAT_ATOMICS), a0); /* (held: none applied) */
	/* node 1 answers: every atomic is applied (the ones that waited for an id too) */
	T_EQ(write(p_p2c[1], "r", 1), 1);
	deadline = trd_time_us() + WAIT_US;
	while (nstat_of(1, TRD_STAT_ATOMICS) - a0 < ALL && trd_time_us() < deadline)
		pump();
	T_EQ(nstat_of(1, TRD_STAT_ATOMICS) - a0, ALL);
	read_child(&b, 1, false);
	T_ASSERT(b == 'd', "round %u: the child said %c", r, b);
	T_EQ(__atomic_load_n(word, __ATOMIC_ACQUIRE), 1 + (uint64_t)(r + 1) * ALL);
	T_EQ(nstat_of(1, TRD_STAT_ATOMICS) - a0, ALL); /* (and no more) */
	T_EQ(node_stat(TRD_STAT_GUEST_DESCS) - g0, ALL);
	T_EQ(trd_node_cpl_pending(nd[0]), 0); /* every id back */
	printf("round %u: %u of %u atomics waited for an id with node 1 held; all %u done\n", r,
	       ALL - CAP, ALL, ALL);
}

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;
	/* node 1 silent for seconds must not be declared down: its verdicts would fail */
	struct vni_setup_opt o = {.rec_fifo_size = 1024,
				  .n_counters = (N_PROC + 2) * TRD_COUNTER_BLOCK,
				  .n_regions = 4 * N_PROC,
				  .dead_ms = 120000,
				  /* node 0 may send every atomic it takes: without the cap, guests
				   * would hold the whole table (the default window, 256, would
				   * stall the FIFOs short of it) */
				  .rel_window = 4096};
	static uint64_t wbuf[512] __attribute__((aligned(4096)));
	struct trd_mr *mr;

	(void)argc;
	topo_make();
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.max_pool = 1 << 24;
	vc.max_ifs = N_PROC;
	vni_setup_with("vmucap", topo_text, &o, &vc);
	mr = trd_mr_register(nd[1], wbuf, sizeof(wbuf), TRD_ACCESS_ALL);
	T_ASSERT(mr != NULL, "trd_mr_register: %s", rte_strerror(rte_errno));
	wkey = trd_mr_key(mr);
	wnode = trd_node_coord(nd[1]);
	pipe_nb(p_c2p);
	T_EQ(pipe(p_p2c), 0);
	child = spawn(cap_child, NULL);
	{
		uint8_t b;

		read_child(&b, 1, false); /* the warm-up: the session is up */
		T_EQ(wbuf[0], 1);
	}
	for (unsigned int r = 0; r < ROUNDS; r++)
		cap_round(r, &wbuf[0]);
	if (child != 0)
		reap_ok(child, WAIT_US, "the processes' child");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 0);
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_DESCS), 1 + ROUNDS * ALL); /* (the warm-up) */
	printf("PASS: vni mu cap\n");
	return 0;
}
