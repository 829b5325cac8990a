/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reflection by completion id for an attached process (docs/vni.md, "Reflection by completion
 * id"): process A (node 0 of a 3x1x1 torus, one reception FIFO) posts, past the library, an
 * ordered remote get to its neighbour node 2 carrying an empty memory-FIFO message back to its
 * own FIFO with TRD_DF_CPL; the engine gives it a completion id of the node.
 *
 *   - six hostile reflections (data in the completion, a counter on it, a second carried
 *     descriptor, a FIFO not A's, a tracked remote get, a completion to another node) are
 *     dropped and counted, and none comes back;
 *   - a good one comes back from node 2 as its outcome: status 0, A's cookie, no bytes;
 *   - one whose cookie A names in a TRD_OP_UNTRACK right behind it still comes back (a
 *     reflection's id is given back by its echo or its failure only);
 *   - 100 posted while A does not read its FIFO of 64 slots (more than its 64 tracked
 *     operations: the rest wait in its ring): the echoes that find the FIFO full are refused
 *     (fifo_full) and sent again, and all 100 outcomes come, each once;
 *   - 100 reflected by A's own node (its loopback: no session brings a refused echo again)
 *     into the same FIFO, not read: 63 outcomes fill it, the 37 echoes that find it full are
 *     dropped (fifo_full) and their ids given back, not held for an echo that never comes;
 *   - with node 2 held silent, the next one fails once node 0 declares node 2 down
 *     (-EHOSTUNREACH from node 2, after the dead time), and one posted while node 2 is down
 *     fails at once, nothing sent (node 0 sent 203 remote gets in all, 100 on its loopback);
 *   - every completion id the reflections took is back (trd_node_cpl_pending() 0).
 *
 * It fails with the engine's completion id for processes taken out (the good one is dropped as
 * a bad descriptor: no outcome).
 *
 *   test_vni_mu_reflect
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "vni_mu_test.h"
#include "vni_test.h"

#define REGION  (64u * 1024)
#define DEAD_MS 300u
#define OUT_MS  5000 /* the bound of every outcome's wait */
#define N_FULL  100u /* reflections posted while the FIFO is not read */

static int p_c2p[2], p_p2c[2];

/* Post a reflection of @p v to node @p to whose completion (cookie @p cookie) comes back to
 * FIFO 0 of @p v on @p me, changed by @p spoil (0: none) first. 0 or the library's error. */
static int
refl_post(struct trd_vni *v, struct trd_coord me, struct trd_coord to, uint64_t cookie,
	  unsigned int spoil)
{
	struct trd_desc c[2], d;
	unsigned int nc = 1;

	trd_desc_fifo(&c[0], me, trd_vni_rfifo_id(v, 0), NULL, 0, cookie, 0);
	c[0].flags = TRD_DF_CPL;
	switch (spoil) {
	case 1: /* bytes in the completion */
		c[0].flags |= TRD_DF_IMM;
		c[0].len = 8;
		break;
	case 2: /* a counter on it */
		c[0].rec_ctr = trd_vni_counter_id(v, 1);
		break;
	case 3: /* a second carried descriptor */
		c[1] = c[0];
		c[1].flags = 0;
		nc = 2;
		break;
	case 4: /* a FIFO not A's: the node's own */
		c[0].fifo = 0;
		break;
	case 6: /* a completion to another node */
		c[0].dst = to;
		break;
	default:
		break;
	}
	trd_desc_rget(&d, to, TRD_ENGINE_FIFO, c, nc);
	d.flags = TRD_DF_ORDERED;
	if (spoil == 5) { /* a tracked remote get */
		d.flags |= TRD_DF_ACKREQ;
		d.aux = 77;
		d.ack_fifo = trd_vni_rfifo_id(v, 0);
	}
	return trd_vni_inject(v, 0, &d, 1);
}

/* The next message of FIFO 0 must be the outcome @p status of the reflection of @p cookie,
 * from @p from. 0 or the exit code @p code. */
static int
refl_outcome(struct trd_vni *v, uint64_t cookie, int status, struct trd_coord from, int code)
{
	struct trd_msg m;
	int rc = trd_vni_rfifo_wait(v, 0, &m, OUT_MS);

	if (rc != 1) {
		fprintf(stderr, "A: no outcome for cookie %#llx: %d\n", (unsigned long long)cookie,
			rc);
		return code;
	}
	if (m.len != 0 || m.user != cookie || m.status != status || m.src.x != from.x ||
	    m.src.y != from.y || m.src.z != from.z) {
		fprintf(stderr,
			"A: outcome len %u user %#llx status %d from %u, want %#llx %d %u\n", m.len,
			(unsigned long long)m.user, m.status, m.src.x, (unsigned long long)cookie,
			status, from.x);
		return code + 1;
	}
	return trd_vni_rfifo_release(v, 0) == 0 ? 0 : code + 2;
}

/* N_FULL reflections by node @p by posted at once while nobody reads the FIFO, then read once
 * the parent says (@p say: an echo was refused, or every echo came): by another node every
 * outcome once, by A's own node the 63 that fit. 0 or an exit code. */
static int
refl_full(struct trd_vni *v, struct trd_coord me, struct trd_coord by, const char *say)
{
	uint8_t seen[N_FULL] = {0}, b;
	struct trd_desc c[N_FULL], d[N_FULL]; /* (carried descriptors are read when posted) */
	bool self = by.x == me.x && by.y == me.y && by.z == me.z;
	unsigned int want = self ? 63 : N_FULL;
	struct trd_msg m;

	for (unsigned int i = 0; i < N_FULL; i++) {
		trd_desc_fifo(&c[i], me, trd_vni_rfifo_id(v, 0), NULL, 0, 0xF000 + i, 0);
		c[i].flags = TRD_DF_CPL;
		trd_desc_rget(&d[i], by, TRD_ENGINE_FIFO, &c[i], 1);
		d[i].flags = TRD_DF_ORDERED;
	}
	if (trd_vni_inject(v, 0, d, N_FULL) != 0 || write(p_c2p[1], say, 1) != 1 ||
	    read(p_p2c[0], &b, 1) != 1)
		return 90;
	for (unsigned int i = 0; i < want; i++) {
		uint64_t k;

		if (trd_vni_rfifo_wait(v, 0, &m, OUT_MS) != 1) {
			fprintf(stderr, "A: %u of %u outcomes of the full FIFO\n", i, N_FULL);
			return 91;
		}
		k = m.user - 0xF000;
		if (m.status != 0 || m.len != 0 || k >= N_FULL || seen[k]++ != 0) {
			fprintf(stderr,
				"A: outcome %u of the full FIFO: status %d len %u user %#llx\n", i,
				m.status, m.len, (unsigned long long)m.user);
			return 92;
		}
		if (trd_vni_rfifo_release(v, 0) != 0)
			return 93;
	}
	return trd_vni_rfifo_poll(v, 0, &m, 1) == 0 ? 0 : 94; /* (the dropped ones: nowhere) */
}

static int
reflect_a(void *arg)
{
	struct trd_vni_conf conf = {.socket = sock_path,
				    .app = 1,
				    .proc = 0,
				    .pool_size = 1 << 20,
				    .connect_timeout_ms = 5000,
				    .mu_fifos = 1,
				    .mu_fifo_slots = 256,
				    .mu_rfifos = 1,
				    .mu_rfifo_slots = 64,
				    .mu_region = REGION};
	struct trd_vni *v = trd_vni_open(&conf);
	const struct trd_coord n1 = {.x = 1}, n2 = {.x = 2};
	struct trd_vni_mu_info mi;
	struct trd_vni_info vi;
	struct trd_coord me;
	uint64_t t0;
	uint8_t b;
	int rc;

	(void)arg;
	if (v == NULL || trd_vni_info(v, &vi) != 0)
		return 10;
	me = coord_of(vi.node);
	for (unsigned int s = 1; s <= 6; s++)
		if (refl_post(v, me, s == 6 ? n1 : n2, 0xBAD0 + s, s) != 0)
			return 11;
	if (judged(v, 6) != 0 || trd_vni_mu_info(v, &mi) != 0 || mi.bad_descs != 6 ||
	    mi.descs != 0) {
		fprintf(stderr, "A: hostile reflections: %llu bad of 6\n",
			(unsigned long long)mi.bad_descs);
		return 12;
	}
	/* a good one: the first message of the FIFO (none of the six came back before it) */
	if (refl_post(v, me, n2, 0xC0DE1, 0) != 0)
		return 13;
	rc = refl_outcome(v, 0xC0DE1, 0, n2, 20);
	if (rc != 0)
		return rc;
	{
		/* its cookie in a TRD_OP_UNTRACK right behind it: the id stays the echo's */
		struct trd_desc u = {.op = TRD_OP_UNTRACK, .aux = 0xC0DE4};

		if (refl_post(v, me, n2, 0xC0DE4, 0) != 0 || trd_vni_inject(v, 0, &u, 1) != 0)
			return 24;
		rc = refl_outcome(v, 0xC0DE4, 0, n2, 25);
		if (rc != 0)
			return rc;
	}
	rc = refl_full(v, me, n2, "f");
	if (rc == 0)
		rc = refl_full(v, me, me, "s");
	if (rc != 0)
		return rc;
	/* node 2 silent from now on */
	if (write(p_c2p[1], "h", 1) != 1 || read(p_p2c[0], &b, 1) != 1)
		return 30;
	t0 = trd_time_us();
	if (refl_post(v, me, n2, 0xC0DE2, 0) != 0)
		return 31;
	rc = refl_outcome(v, 0xC0DE2, -EHOSTUNREACH, n2, 40);
	if (rc != 0)
		return rc;
	t0 = trd_time_us() - t0;
	printf("A: the reflection by a silent neighbour failed after %llu ms (dead time %u ms)\n",
	       (unsigned long long)t0 / 1000, DEAD_MS);
	fflush(stdout);
	if (t0 < DEAD_MS * 1000ull / 2)
		return 45; /* failed before node 2 could be found silent */
	/* node 2 is down: at once, nothing sent */
	if (refl_post(v, me, n2, 0xC0DE3, 0) != 0)
		return 50;
	rc = refl_outcome(v, 0xC0DE3, -EHOSTUNREACH, n2, 60);
	if (rc != 0)
		return rc;
	if (trd_vni_mu_info(v, &mi) != 0 || mi.bad_descs != 6 || mi.descs != 5 + 2 * N_FULL) {
		fprintf(stderr, "A: %llu descriptors taken, %llu bad; want 205 and 6\n",
			(unsigned long long)mi.descs, (unsigned long long)mi.bad_descs);
		return 70;
	}
	trd_vni_close(v);
	return 0;
}

/* One byte from A (pumping meanwhile); A ending first fails the test with its exit status. */
static uint8_t
read_a(pid_t a)
{
	uint64_t deadline = trd_time_us() + WAIT_US;
	uint8_t b;
	int st;

	while (read(p_c2p[0], &b, 1) != 1) {
		T_ASSERT(trd_time_us() < deadline, "A said nothing");
		T_ASSERT(waitpid(a, &st, WNOHANG) != a, "A ended with %d, saying nothing",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
		pump();
	}
	return b;
}

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;
	struct vni_setup_opt o = {
		.rec_fifo_size = 1024, .n_counters = 3 * TRD_COUNTER_BLOCK, .dead_ms = DEAD_MS};
	struct trd_node_stats st0, st1, st2;
	uint64_t rx2, deadline;
	pid_t a;

	(void)argc;
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.max_pool = 1 << 24;
	vni_setup_with("vmurefl", mu_topo_one, &o, &vc);
	pipe_nb(p_c2p);
	T_EQ(pipe(p_p2c), 0);
	T_EQ(trd_node_stats_get(nd[0], &st0), 0);
	T_EQ(trd_node_stats_get(nd[2], &st1), 0);
	rx2 = st1.stat[TRD_STAT_RX_RGET];
	a = spawn(reflect_a, NULL);
	/* the full FIFO: read once an echo was refused */
	T_EQ(read_a(a), 'f');
	deadline = trd_time_us() + WAIT_US;
	do {
		pump();
		T_EQ(trd_node_stats_get(nd[0], &st1), 0);
		T_ASSERT(trd_time_us() < deadline, "no echo refused with A's FIFO full");
	} while (st1.drop[TRD_DROP_FIFO_FULL] == st0.drop[TRD_DROP_FIFO_FULL]);
	T_EQ(write(p_p2c[1], "r", 1), 1);
	/* by A's own node: read once all 37 echoes that found the FIFO full were dropped */
	T_EQ(read_a(a), 's');
	T_EQ(trd_node_stats_get(nd[0], &st2), 0);
	deadline = trd_time_us() + WAIT_US;
	do {
		pump();
		T_EQ(trd_node_stats_get(nd[0], &st1), 0);
		T_ASSERT(trd_time_us() < deadline, "%llu of the 37 echoes dropped",
			 (unsigned long long)(st1.drop[TRD_DROP_FIFO_FULL] -
					      st2.drop[TRD_DROP_FIFO_FULL]));
	} while (st1.drop[TRD_DROP_FIFO_FULL] - st2.drop[TRD_DROP_FIFO_FULL] < N_FULL - 63);
	T_EQ(write(p_p2c[1], "r", 1), 1);
	T_EQ(read_a(a), 'h');
	T_EQ(trd_node_stats_get(nd[2], &st1), 0);
	/* the good ones only: no hostile one left */
	T_EQ(st1.stat[TRD_STAT_RX_RGET] - rx2, 2 + N_FULL);
	pump_hold = 1u << 2;
	T_EQ(write(p_p2c[1], "k", 1), 1);
	reap_ok(a, WAIT_US, "process A");
	T_EQ(trd_node_stats_get(nd[0], &st1), 0);
	T_EQ(st1.stat[TRD_STAT_CPL_FAILED] - st0.stat[TRD_STAT_CPL_FAILED], 2);
	T_EQ(st1.stat[TRD_STAT_PEERS_DOWN] - st0.stat[TRD_STAT_PEERS_DOWN], 1);
	/* the one to node 2 down was never sent (the loopback's count as sent) */
	T_EQ(st1.stat[TRD_STAT_TX_RGET] - st0.stat[TRD_STAT_TX_RGET], 3 + 2 * N_FULL);
	T_EQ(trd_node_cpl_pending(nd[0]), 0); /* every id back */
	T_EQ(stat_of(TRD_VNI_SVC_STAT_MU_BAD_DESCS), 6);
	printf("PASS: vni mu reflect\n");
	return 0;
}
