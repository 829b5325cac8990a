/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A local reflection completion means the source buffer may be reused.
 *
 * A 4x1x1 torus on in-process ring links, every link losing and reordering 5% of the frames
 * it receives. Node (0,0,0) posts puts of 257 B to 64 KiB with trd_inject_reflect() to the
 * three other nodes (one and two hops away; the reflector (1,0,0) is also a target), eight in
 * flight, FIFO and doorbell completions; one message in five is a memory-FIFO send instead of
 * a put. The moment a completion arrives the test overwrites the message's source buffer.
 * Every target must still end up with the original bytes (a put's reception counter reaches
 * zero, then the bytes are compared; a send's message arrives whole): the losses make the
 * reliability layer resend after the completion, and before a local completion meant "the
 * source is no longer needed" those resends read the overwritten buffer. One put in four asks
 * for a delivery completion, which must still mean "landed": the bytes are compared at the
 * moment it arrives.
 *
 * Argument: the number of puts (default 600).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <toroid/testing.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define NODES      4
#define WIN        8
#define MAXLEN     65536
#define RF_CPL     1
#define RF_MSG     2 /* the targets' reception FIFO for the memory-FIFO sends */
#define TIMEOUT_US 120000000

enum slot_state { FREE, POSTED, LANDING };

struct slot {
	enum slot_state state;
	uint64_t i; /* the put's number; its bytes are test_fill(.., i + 1) */
	unsigned int target;
	uint32_t len;
	enum trd_cpl_kind kind;
	enum trd_cpl_mode mode;
	bool send;    /* a memory-FIFO send (always local mode), else a put */
	bool arrived; /* the send's message arrived, byte-exact */
	uint8_t *src;
};

static struct trd_node *nd[NODES];
static uint8_t *mem[NODES]; /* target memory: WIN slices of MAXLEN */
static struct trd_mr *mr[NODES];
static uint16_t rctr[NODES][WIN]; /* the target's reception counter per slot */
static struct slot sl[WIN];
static uint64_t *bell; /* the origin's doorbell page: one word per slot */
static struct trd_mr *bell_mr;
static uint8_t *want;
static bool served;
static const uint32_t sizes[] = {257, 1445, 4000, 20000, MAXLEN};

static void
dump(void)
{
	for (unsigned int i = 0; i < NODES; i++) {
		struct trd_node_stats st;

		if (trd_node_stats_get(nd[i], &st) != 0)
			continue;
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			if (st.drop[c])
				fprintf(stderr, "node %u: %s %" PRIu64 "\n", i, trd_drop_name(c),
					st.drop[c]);
		fprintf(stderr, "node %u: retransmits %" PRIu64 "\n", i, st.stat[TRD_STAT_RETRANS]);
	}
}

static void
post(unsigned int s, uint64_t i)
{
	struct slot *x = &sl[s];
	struct trd_desc d;
	struct trd_cpl_spec spec = {
		.fifo = RF_CPL, .offset = s * 8, .doorbell = bell_mr, .cookie = i + 1};
	int rc;

	x->i = i;
	x->target = 1 + (unsigned int)(i % (NODES - 1));
	x->len = sizes[(i / (NODES - 1)) % RTE_DIM(sizes)];
	x->kind = i % 2 ? TRD_CPL_DOORBELL : TRD_CPL_FIFO;
	x->send = i % 5 == 2;
	x->arrived = false;
	x->mode = i % 4 == 3 && !x->send ? TRD_CPL_DELIVERY : TRD_CPL_LOCAL;
	spec.kind = x->kind;
	spec.mode = x->mode;
	test_fill(x->src, x->len, i + 1);
	/* no put is in flight to this slice: nothing else writes it now */
	memset(mem[x->target] + (size_t)s * MAXLEN, 0, x->len);
	T_EQ(trd_counter_set(nd[x->target], rctr[x->target][s], x->len), 0);
	if (x->send)
		trd_desc_fifo(&d, trd_node_coord(nd[x->target]), RF_MSG, x->src, x->len, i + 1, 0);
	else
		trd_desc_put(&d, trd_node_coord(nd[x->target]), x->src, x->len,
			     trd_mr_key(mr[x->target]), (uint64_t)s * MAXLEN, 0,
			     rctr[x->target][s]);
	while ((rc = trd_inject_reflect(trd_inj_fifo(nd[0], 0), &d, &spec)) == -ENOBUFS)
		if (!served)
			trd_node_progress(nd[0]);
	T_EQ(rc, 0);
	x->state = POSTED;
}

static bool
landed(const struct slot *x, unsigned int s)
{
	test_fill(want, x->len, x->i + 1);
	return memcmp(mem[x->target] + (size_t)s * MAXLEN, want, x->len) == 0;
}

/* The completion of the put in slot @p s arrived: overwrite its source at once. */
static void
completed(unsigned int s, uint64_t *n_local)
{
	struct slot *x = &sl[s];

	T_ASSERT(x->state == POSTED, "slot %u: a completion for no put", s);
	memset(x->src, 0xA5 ^ (int)(x->i & 0xff), x->len);
	if (x->mode == TRD_CPL_DELIVERY) {
		int64_t v;

		T_EQ(trd_counter_read(nd[x->target], rctr[x->target][s], &v), 0);
		T_ASSERT(v == 0 && landed(x, s),
			 "put %" PRIu64
			 " (%u B to %u): delivery completion before the bytes landed "
			 "(counter %" PRId64 ")",
			 x->i, x->len, x->target, v);
	} else {
		(*n_local)++;
	}
	x->state = LANDING;
}

/* A memory-FIFO message arrived at node @p t: the send it belongs to, with its bytes. */
static void
arrived(unsigned int t, const struct trd_msg *m)
{
	unsigned int s;

	for (s = 0; s < WIN && !(sl[s].send && sl[s].state != FREE && sl[s].i + 1 == m->user); s++)
		;
	T_ASSERT(s < WIN && !sl[s].arrived, "message %" PRIu64 " at (%u,0,0) for no send", m->user,
		 t);
	test_fill(want, sl[s].len, sl[s].i + 1);
	T_ASSERT(sl[s].target == t && m->len == sl[s].len && m->status == 0 &&
			 memcmp(m->data, want, m->len) == 0,
		 "send %" PRIu64 " (%u B to (%u,0,0)): the message received differs from the bytes "
		 "sent (written after the completion?)",
		 sl[s].i, sl[s].len, sl[s].target);
	sl[s].arrived = true;
}

int
main(int argc, char **argv)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_node_stats s0, s1;
	struct trd_impair_conf imp;
	uint64_t n_puts = 600, posted = 0, verified = 0, n_local = 0, deadline;
	unsigned int lc;
	struct trd_net *net;

	if (argc > 1)
		n_puts = strtoull(argv[1], NULL, 10);
	test_eal_init(argv[0], NULL);
	trd_torus_init(&nc.torus, NODES, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	T_EQ(trd_impair_parse("loss=5%,reorder=5%,seed=11", &imp), 0);
	for (unsigned int t = 0; t < NODES; t++) {
		nd[t] = trd_net_node(net, t);
		T_EQ(trd_node_impair(nd[t], &imp), 0);
		mem[t] = aligned_alloc(4096, (size_t)WIN * MAXLEN);
		T_ASSERT(mem[t] != NULL, "memory");
		mr[t] = trd_mr_register(nd[t], mem[t], (size_t)WIN * MAXLEN,
					TRD_ACCESS_REMOTE_WRITE);
		T_ASSERT(mr[t] != NULL, "region");
		for (unsigned int s = 0; s < WIN; s++)
			T_EQ(trd_counter_alloc(nd[t], &rctr[t][s]), 0);
	}
	bell = aligned_alloc(4096, 4096);
	want = malloc(MAXLEN);
	T_ASSERT(bell != NULL && want != NULL, "memory");
	memset(bell, 0, 4096);
	bell_mr = trd_doorbell_register(nd[0], bell, 4096, NULL);
	T_ASSERT(bell_mr != NULL, "doorbell");
	for (unsigned int s = 0; s < WIN; s++) {
		sl[s].src = malloc(MAXLEN);
		T_ASSERT(sl[s].src != NULL, "memory");
	}
	lc = test_worker_lcore();
	served = lc < RTE_MAX_LCORE;
	if (served)
		T_EQ(trd_net_launch(net, &lc, 1), 0);
	else
		printf("no worker lcore: the engine is polled inline\n");
	T_EQ(trd_node_stats_get(nd[0], &s0), 0);

	deadline = trd_time_us() + TIMEOUT_US;
	while (verified < n_puts) {
		struct trd_msg *m[16];
		int k;

		if (trd_time_us() > deadline) {
			dump();
			T_ASSERT(0, "timed out: %" PRIu64 " of %" PRIu64 " puts verified", verified,
				 n_puts);
		}
		for (unsigned int s = 0; s < WIN; s++) {
			struct slot *x = &sl[s];
			int64_t v;

			if (x->state == FREE && posted < n_puts) {
				post(s, posted++);
			} else if (x->state == POSTED && x->kind == TRD_CPL_DOORBELL &&
				   __atomic_load_n(&bell[s], __ATOMIC_ACQUIRE) == x->i + 1) {
				completed(s, &n_local);
			} else if (x->state == LANDING && x->send) {
				if (!x->arrived)
					continue;
				x->state = FREE;
				verified++;
			} else if (x->state == LANDING) {
				T_EQ(trd_counter_read(nd[x->target], rctr[x->target][s], &v), 0);
				T_ASSERT(v >= 0, "put %" PRIu64 ": counter %" PRId64, x->i, v);
				if (v != 0)
					continue;
				if (!landed(x, s)) {
					dump();
					T_ASSERT(0,
						 "put %" PRIu64
						 " (%u B to (%u,0,0), %s completion): "
						 "the target received bytes written after the "
						 "completion",
						 x->i, x->len, x->target,
						 x->mode == TRD_CPL_LOCAL ? "local" : "delivery");
				}
				x->state = FREE;
				verified++;
			}
		}
		while ((k = trd_rec_fifo_poll(trd_rec_fifo(nd[0], RF_CPL), m, RTE_DIM(m))) > 0)
			for (int j = 0; j < k; j++) {
				unsigned int s;

				T_EQ(m[j]->status, 0);
				T_ASSERT(m[j]->user >= 1 && m[j]->user <= posted, "cookie %" PRIu64,
					 m[j]->user);
				for (s = 0; s < WIN &&
					    !(sl[s].state == POSTED && sl[s].i + 1 == m[j]->user);
				     s++)
					;
				T_ASSERT(s < WIN, "completion %" PRIu64 " for no pending put",
					 m[j]->user);
				completed(s, &n_local);
				trd_msg_free(m[j]);
			}
		for (unsigned int t = 1; t < NODES; t++)
			while ((k = trd_rec_fifo_poll(trd_rec_fifo(nd[t], RF_MSG), m, RTE_DIM(m))) >
			       0)
				for (int j = 0; j < k; j++) {
					arrived(t, m[j]);
					trd_msg_free(m[j]);
				}
		if (!served)
			trd_node_progress(nd[0]);
	}
	T_EQ(trd_node_stats_get(nd[0], &s1), 0);
	T_ASSERT(s1.stat[TRD_STAT_RETRANS] > s0.stat[TRD_STAT_RETRANS], "nothing was resent");
	printf("%" PRIu64 " puts and sends of 257 B..64 KiB from (0,0,0) to 3 targets under 5%% "
	       "loss and 5%% reordering, the source overwritten at each completion: every target "
	       "byte-exact (%" PRIu64 " local, %" PRIu64 " delivery completions checked at "
	       "arrival; %" PRIu64 " packets resent, %" PRIu64 " sent zero-copy)\n",
	       verified, n_local, verified - n_local,
	       s1.stat[TRD_STAT_RETRANS] - s0.stat[TRD_STAT_RETRANS],
	       s1.stat[TRD_STAT_ZCOPY_PKTS] - s0.stat[TRD_STAT_ZCOPY_PKTS]);
	T_EQ(trd_node_cpl_pending(nd[0]), 0);
	if (served)
		T_EQ(trd_net_stop(net), 0);
	trd_net_free(net);
	for (unsigned int t = 0; t < NODES; t++)
		free(mem[t]);
	for (unsigned int s = 0; s < WIN; s++)
		free(sl[s].src);
	free(bell);
	free(want);
	rte_eal_cleanup();
	return 0;
}
