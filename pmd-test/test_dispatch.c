/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PAMI-style dispatch ids and separate local and remote completion in the messaging layer.
 * Two tasks of a 3x1x1 torus (ranks 0 and 1 built, rank 2 only in the routing tables), engine
 * ring links losing and reordering 5% of the frames each way, reliability on, no engine lcore
 * (advance polls the net). Each task has context 0 dispatching (receives on FIFO 1) and context
 * 1 with a plain receive callback (receives on FIFO 3), made alike (SPMD).
 *  dispatch: 60 sends from task 0 to ids 0, 7 and 255 of task 1 (0 .. 3000 B, user words up
 *            to 2^48 - 1) reach their own handler in order, byte-exact, with the 48-bit user
 *            word; each send's source is overwritten in its local event;
 *  unknown:  ids with no handler (unregistered, never registered, 300 from a raw engine send)
 *            are counted in dispatch_unknown at the target and handed to no handler;
 *  refusals: user word above 2^48 - 1, id 256, plain trd_send() to a dispatching context,
 *            trd_send_dispatch() to a plain one, dispatch set-up errors; plain sends unchanged;
 *  local:    64 KiB zero-copy puts: the local event runs before the remote one, when every
 *            counter of the node (the put's injection counter) is zero; the test then
 *            overwrites the source at once, and the target still receives the original bytes
 *            (the losses make the engine resend from the source after the port took it);
 *  failures: a put to an unknown key (local 0: the bytes were sent; remote -ENOKEY), a read of
 *            an unknown key (both -ENOKEY), a put to a node with no route (both -EHOSTUNREACH);
 *            a successful read's local event sees every byte landed.
 *
 * "test_dispatch bench" measures instead what the local event costs: puts of 64 B, 4 KiB and
 * 64 KiB between two nodes on a net_ring ethdev pair (no impairment), one engine lcore, with
 * trd_put() and with trd_put_events(): time per put with 64 in flight, and the latency of a
 * lone put to each event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include <rte_cycles.h>

#include <toroid/msg.h>
#include <toroid/testing.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 10000000
#define N_CTRS     64
#define ZC_LEN     65536
#define MEM_LEN    (1 << 20)
#define N_SEND     60
#define SEND_MAX   3000

static struct trd_net *net;
static struct trd_node *nd[2];
static struct trd_client *cl[2];
static struct trd_context *cx[2][2];
static uint8_t *mem[2];
static struct trd_mr *mr[2];
static uint64_t seq; /* events in the order they run */

/* One operation's two events. */
struct evrec {
	int local, remote; /* times run */
	int lstatus, rstatus;
	uint64_t lseq, rseq;
	uint8_t *src; /* overwritten in the local event (NULL: not) */
	size_t len;
	bool ctrs_zero;      /* every counter of node 0 was zero at the local event */
	const uint8_t *want; /* a read: the bytes that must have landed at the local event */
	bool landed;
};

static void
drive(bool (*done)(void *), void *arg, const char *what)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	while (!done(arg)) {
		for (unsigned int t = 0; t < 2; t++)
			for (unsigned int k = 0; k < 2; k++)
				T_ASSERT(trd_advance(cx[t][k], 0) >= 0, "advance");
		T_ASSERT(trd_time_us() < deadline, "%s: timed out", what);
	}
}

static bool
remote_done(void *arg)
{
	return ((struct evrec *)arg)->remote != 0;
}

static uint64_t
ctx_stat(struct trd_context *c, enum trd_context_stat s)
{
	uint64_t st[TRD_CTX_STAT_MAX];

	T_EQ(trd_context_stats_get(c, st), 0);
	return st[s];
}

static bool
all_ctrs_zero(struct trd_node *n)
{
	for (uint16_t id = 1; id < N_CTRS; id++) {
		int64_t v;

		if (trd_counter_read(n, id, &v) == 0 && v != 0)
			return false;
	}
	return true;
}

static void
ev_local(struct trd_context *c, void *cookie, int status)
{
	struct evrec *r = cookie;

	(void)c;
	r->local++;
	r->lstatus = status;
	r->lseq = ++seq;
	r->ctrs_zero = all_ctrs_zero(nd[0]);
	if (r->want != NULL)
		r->landed = memcmp(r->src, r->want, r->len) == 0;
	else if (r->src != NULL)
		memset(r->src, 0xee, r->len); /* the buffer is ours again: reuse it at once */
}

static void
ev_remote(struct trd_context *c, void *cookie, int status)
{
	struct evrec *r = cookie;

	(void)c;
	r->remote++;
	r->rstatus = status;
	r->rseq = ++seq;
}

/* Both events ran once, local first, with these statuses. */
static void
check_events(const struct evrec *r, int lstatus, int rstatus, const char *what)
{
	T_ASSERT(r->local == 1 && r->remote == 1, "%s: local %d, remote %d times", what, r->local,
		 r->remote);
	T_ASSERT(r->lseq < r->rseq, "%s: remote event before local", what);
	T_ASSERT(r->lstatus == lstatus && r->rstatus == rstatus, "%s: local %d remote %d", what,
		 r->lstatus, r->rstatus);
}

/* ---- dispatch ---- */

struct rx {
	unsigned int id;
	unsigned int n;
	unsigned int seen[N_SEND];
};

static struct rx rx_id[3] = {{.id = 0}, {.id = 7}, {.id = 255}};
static const unsigned int ids[3] = {0, 7, 255};
static unsigned int plain_rx;
static uint64_t plain_user;

static size_t
send_len(unsigned int i)
{
	/* 0 B, copied (up to inline_max, 256 B) and zero-copy lengths */
	return i % 4 == 0 ? 0 : (size_t)(i * 977) % SEND_MAX + 1;
}

static uint64_t
send_user(unsigned int i)
{
	return i == 1 ? TRD_DISPATCH_USER_MAX : (i * UINT64_C(0x9e3779b97f4a7c15)) >> 16;
}

static void
handler(struct trd_context *c, void *arg, const struct trd_msg *m)
{
	struct rx *r = arg;
	uint8_t want[SEND_MAX];
	unsigned int i;

	(void)c;
	/* messages of one id arrive in posting order: its n-th is send n * 3 + its position */
	T_ASSERT(r->n < N_SEND / 3, "id %u: too many messages", r->id);
	i = r->n * 3 + (unsigned int)(r - rx_id);
	T_ASSERT(m->user == send_user(i), "id %u message %u: user %#" PRIx64, r->id, i, m->user);
	T_EQ(m->len, send_len(i));
	test_fill(want, m->len, 100 + i);
	T_ASSERT(memcmp(m->data, want, m->len) == 0, "id %u message %u: bytes differ", r->id, i);
	T_ASSERT(m->src.x == 0 && m->src.y == 0 && m->src.z == 0, "sender");
	r->seen[r->n++] = i;
}

static void
plain_recv(struct trd_context *c, void *arg, const struct trd_msg *m)
{
	(void)c;
	(void)arg;
	plain_rx++;
	plain_user = m->user;
}

static bool
sends_done(void *arg)
{
	struct evrec *r = arg;

	for (unsigned int i = 0; i < N_SEND; i++)
		if (r[i].remote == 0)
			return false;
	return rx_id[0].n + rx_id[1].n + rx_id[2].n == N_SEND;
}

static bool
unknown_counted(void *arg)
{
	return ctx_stat(cx[1][0], TRD_CTX_STAT_DISPATCH_UNKNOWN) >= *(uint64_t *)arg;
}

static bool
plain_arrived(void *arg)
{
	(void)arg;
	return plain_rx == 1;
}

static void
test_dispatch(void)
{
	static struct evrec r[N_SEND];
	static uint8_t buf[N_SEND][SEND_MAX];
	struct trd_ep ep;

	T_EQ(trd_endpoint(cl[0], 1, 0, &ep), 0);
	T_ASSERT(ep.dispatch, "endpoint of a dispatching context");
	for (unsigned int k = 0; k < 3; k++)
		T_EQ(trd_dispatch_set(cx[1][0], ids[k], handler, &rx_id[k]), 0);
	for (unsigned int i = 0; i < N_SEND; i++) {
		struct trd_op_events ev = {ev_local, ev_remote, &r[i]};

		r[i].src = buf[i];
		r[i].len = send_len(i);
		test_fill(buf[i], r[i].len, 100 + i);
		T_EQ(trd_send_dispatch(cx[0][0], &ep, ids[i % 3], buf[i], r[i].len, send_user(i),
				       &ev),
		     0);
	}
	drive(sends_done, r, "dispatched sends");
	for (unsigned int i = 0; i < N_SEND; i++)
		check_events(&r[i], 0, 0, "send");
	for (unsigned int k = 0; k < 3; k++)
		T_EQ(rx_id[k].n, N_SEND / 3);
	T_EQ(ctx_stat(cx[1][0], TRD_CTX_STAT_RECEIVED), N_SEND);
	T_EQ(ctx_stat(cx[1][0], TRD_CTX_STAT_DISPATCH_UNKNOWN), 0);
	printf("dispatch: %u sends to ids 0, 7, 255 reached their handlers in order, byte-exact, "
	       "with 48-bit user words; sources overwritten at their local event\n",
	       N_SEND);
}

static void
test_unknown(void)
{
	struct evrec r[2] = {{0}};
	struct trd_op_events ev[2] = {{NULL, ev_remote, &r[0]}, {NULL, ev_remote, &r[1]}};
	uint64_t want = 3;
	struct trd_desc d;
	struct trd_ep ep;

	T_EQ(trd_endpoint(cl[0], 1, 0, &ep), 0);
	T_EQ(trd_dispatch_set(cx[1][0], 7, NULL, NULL), 0); /* unregistered */
	T_EQ(trd_send_dispatch(cx[0][0], &ep, 7, "seven", 5, 1, &ev[0]), 0);
	T_EQ(trd_send_dispatch(cx[0][0], &ep, 9, "nine", 4, 2, &ev[1]), 0); /* never registered */
	/* an id above the table, sent with the engine's own API (any peer can) */
	trd_desc_fifo(&d, trd_node_coord(nd[1]), 1, "raw", 3, (UINT64_C(300) << 48) | 3, 0);
	T_EQ(trd_inject(trd_inj_fifo(nd[0], 2), &d), 0);
	drive(unknown_counted, &want, "unknown ids");
	drive(remote_done, &r[0], "send to 7");
	drive(remote_done, &r[1], "send to 9");
	/* delivered by the target's engine: the sends succeeded; its layer dropped them */
	T_EQ(r[0].rstatus, 0);
	T_EQ(r[1].rstatus, 0);
	T_EQ(ctx_stat(cx[1][0], TRD_CTX_STAT_DISPATCH_UNKNOWN), 3);
	T_EQ(ctx_stat(cx[1][0], TRD_CTX_STAT_RECEIVED), N_SEND);
	for (unsigned int k = 0; k < 3; k++)
		T_EQ(rx_id[k].n, N_SEND / 3);
	printf("unknown: ids 7 (unregistered), 9 (never registered), 300 (raw) counted in "
	       "dispatch_unknown at the target, handed to no handler\n");
}

static void
test_refusals(void)
{
	struct trd_context_conf cc = {.node = nd[0],
				      .inj_fifo = 3,
				      .cpl_fifo = 2,
				      .recv_fifo = 3,
				      .dispatch = true,
				      .recv = plain_recv};
	struct trd_ep dep, pep;

	T_EQ(trd_endpoint(cl[0], 1, 0, &dep), 0);
	T_EQ(trd_endpoint(cl[0], 1, 1, &pep), 0);
	T_ASSERT(!pep.dispatch, "plain endpoint");
	T_EQ(trd_send_dispatch(cx[0][0], &dep, 0, "x", 1, TRD_DISPATCH_USER_MAX + 1, NULL),
	     -EINVAL);
	T_EQ(trd_send_dispatch(cx[0][0], &dep, TRD_DISPATCH_MAX, "x", 1, 0, NULL), -EINVAL);
	T_EQ(trd_send(cx[0][0], &dep, "x", 1, 0, NULL, NULL), -EINVAL);
	T_EQ(trd_send_dispatch(cx[0][0], &pep, 0, "x", 1, 0, NULL), -EINVAL);
	T_EQ(trd_dispatch_set(cx[0][1], 0, handler, NULL), -ENOTSUP);
	T_EQ(trd_dispatch_set(cx[0][0], TRD_DISPATCH_MAX, handler, NULL), -EINVAL);
	T_EQ(trd_dispatch_set(NULL, 0, handler, NULL), -EINVAL);
	T_ASSERT(trd_context_create(cl[0], &cc) == NULL && rte_errno == EINVAL, "dispatch + recv");
	cc.recv = NULL;
	cc.recv_fifo = TRD_NO_FIFO;
	T_ASSERT(trd_context_create(cl[0], &cc) == NULL && rte_errno == EINVAL, "no recv FIFO");
	T_EQ(ctx_stat(cx[0][0], TRD_CTX_STAT_POSTED), N_SEND + 2);
	/* a plain context keeps its 64-bit user words */
	T_EQ(trd_send(cx[0][0], &pep, "x", 1, UINT64_MAX, NULL, NULL), 0);
	drive(plain_arrived, NULL, "plain send");
	T_EQ(plain_user, UINT64_MAX);
	printf("refusals: user word above 2^48 - 1, id 256, plain send to a dispatching context, "
	       "dispatch send to a plain one, set-up errors; a plain send keeps its 64-bit word\n");
}

/* ---- local and remote completion ---- */

static void
test_local(void)
{
	struct trd_node_stats s0, s1;
	uint8_t *src = malloc(ZC_LEN), *want = malloc(ZC_LEN);
	uint64_t key = trd_mr_key(mr[1]);
	const unsigned int rounds = 20;
	struct trd_ep ep;

	T_ASSERT(src != NULL && want != NULL, "memory");
	T_EQ(trd_endpoint(cl[0], 1, 0, &ep), 0);
	T_EQ(trd_node_stats_get(nd[0], &s0), 0);
	for (unsigned int i = 0; i < rounds; i++) {
		struct evrec r = {.src = src, .len = ZC_LEN};
		struct trd_op_events ev = {ev_local, ev_remote, &r};
		uint32_t off = (i % 8) * ZC_LEN;

		test_fill(want, ZC_LEN, 7000 + i);
		memcpy(src, want, ZC_LEN);
		memset(mem[1] + off, 0, ZC_LEN);
		T_EQ(trd_put_events(cx[0][0], src, &ep, off, key, ZC_LEN, &ev), 0);
		drive(remote_done, &r, "zero-copy put");
		check_events(&r, 0, 0, "zero-copy put");
		T_ASSERT(r.ctrs_zero, "round %u: local event while the engine held the bytes", i);
		T_ASSERT(memcmp(mem[1] + off, want, ZC_LEN) == 0,
			 "round %u: the target received bytes written after the local event", i);
	}
	T_EQ(trd_node_stats_get(nd[0], &s1), 0);
	T_ASSERT(s1.stat[TRD_STAT_ZCOPY_PKTS] - s0.stat[TRD_STAT_ZCOPY_PKTS] >= rounds * 40,
		 "the puts were not sent zero-copy");
	T_ASSERT(s1.stat[TRD_STAT_RETRANS] > s0.stat[TRD_STAT_RETRANS], "nothing was resent");
	printf("local: %u zero-copy puts of %u B: local event first, every counter zero, source "
	       "overwritten at once, target byte-exact (%" PRIu64 " packets resent)\n",
	       rounds, ZC_LEN, s1.stat[TRD_STAT_RETRANS] - s0.stat[TRD_STAT_RETRANS]);
	free(src);
	free(want);
}

static void
test_failures(void)
{
	uint64_t bad = trd_mr_key(mr[1]) ^ (UINT64_C(1) << 40), key = trd_mr_key(mr[1]);
	static uint8_t src[4096];
	struct trd_ep ep, far;

	T_EQ(trd_endpoint(cl[0], 1, 0, &ep), 0);
	T_EQ(trd_endpoint(cl[0], 2, 0, &far), 0); /* rank 2: not built, no route to it */
	for (unsigned int k = 0; k < 2; k++) {
		struct evrec r = {0};
		struct trd_op_events ev = {ev_local, ev_remote, &r};

		T_EQ(trd_put_events(cx[0][0], src, &ep, 0, bad, k ? sizeof(src) : 100, &ev), 0);
		drive(remote_done, &r, "put to an unknown key");
		check_events(&r, 0, -ENOKEY, "put to an unknown key");
	}
	{
		struct evrec r = {0};
		struct trd_op_events ev = {ev_local, ev_remote, &r};

		T_EQ(trd_rdma_read_events(cx[0][0], mem[0], &ep, 0, bad, 4096, &ev), 0);
		drive(remote_done, &r, "read of an unknown key");
		check_events(&r, -ENOKEY, -ENOKEY, "read of an unknown key");
	}
	{
		struct evrec r = {0};
		struct trd_op_events ev = {ev_local, ev_remote, &r};

		T_EQ(trd_put_events(cx[0][0], src, &far, 0, key, sizeof(src), &ev), 0);
		drive(remote_done, &r, "put without a route");
		check_events(&r, -EHOSTUNREACH, -EHOSTUNREACH, "put without a route");
	}
	{
		struct evrec r = {.src = mem[0] + 8192, .len = 20000, .want = mem[1] + 4096};
		struct trd_op_events ev = {ev_local, ev_remote, &r};

		test_fill(mem[1] + 4096, 20000, 99);
		memset(mem[0] + 8192, 0, 20000);
		T_EQ(trd_rdma_read_events(cx[0][0], mem[0] + 8192, &ep, 4096, key, 20000, &ev), 0);
		drive(remote_done, &r, "read");
		check_events(&r, 0, 0, "read");
		T_ASSERT(r.landed, "local event of a read before its bytes landed");
	}
	printf("failures: put to an unknown key (local 0, remote -ENOKEY), read of an unknown key "
	       "(both -ENOKEY), put without a route (both -EHOSTUNREACH); a read's local event "
	       "sees its bytes\n");
}

/* ---- bench ---- */

static unsigned int b_remote, b_local;
static uint64_t b_local_at;

static void
b_remote_cb(struct trd_context *c, void *cookie, int status)
{
	(void)c;
	(void)cookie;
	T_EQ(status, 0);
	b_remote++;
}

static void
b_local_cb(struct trd_context *c, void *cookie, int status)
{
	(void)c;
	(void)cookie;
	T_EQ(status, 0);
	b_local++;
	b_local_at = rte_get_timer_cycles();
}

static int
b_post(struct trd_context *x, bool events, const void *src, const struct trd_ep *ep, uint64_t key,
       uint32_t len)
{
	struct trd_op_events ev = {b_local_cb, b_remote_cb, NULL};

	return events ? trd_put_events(x, src, ep, 0, key, len, &ev)
		      : trd_put(x, src, ep, 0, key, len, b_remote_cb, NULL);
}

static int
bench(void)
{
	static const uint32_t sizes[] = {64, 4096, 65536};
	struct trd_net_conf nc = {.links = TRD_NET_ETHDEV_RING};
	struct trd_context_conf cc = {.cpl_fifo = 0, .recv_fifo = TRD_NO_FIFO};
	const double us = (double)rte_get_timer_hz() / 1e6;
	unsigned int lc = test_worker_lcore();
	struct trd_context *x;
	struct trd_client *c;
	struct trd_ep ep;
	uint64_t key;

	if (lc >= RTE_MAX_LCORE) {
		printf("SKIP: bench needs a worker lcore\n");
		return TEST_SKIP;
	}
	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	mem[0] = aligned_alloc(4096, MEM_LEN);
	mem[1] = aligned_alloc(4096, MEM_LEN);
	T_ASSERT(mem[0] != NULL && mem[1] != NULL, "memory");
	memset(mem[0], 1, MEM_LEN);
	mr[1] = trd_mr_register(trd_net_node(net, 1), mem[1], MEM_LEN, TRD_ACCESS_ALL);
	key = trd_mr_key(mr[1]);
	c = trd_client_create("bench", NULL);
	cc.node = trd_net_node(net, 0);
	x = trd_context_create(c, &cc);
	T_ASSERT(mr[1] != NULL && x != NULL, "set-up");
	T_EQ(trd_endpoint(c, 1, 0, &ep), 0);
	T_EQ(trd_net_launch(net, &lc, 1), 0);
	printf("%-7s %6s %12s %14s %15s\n", "", "bytes", "us/put (64)", "lone: local us",
	       "lone: remote us");
	for (unsigned int si = 0; si < RTE_DIM(sizes); si++)
		for (int events = 0; events < 2; events++) {
			uint32_t len = sizes[si], n = len > 4096 ? 5000 : 50000, lone = 2000;
			uint64_t t0 = rte_get_timer_cycles(), tl = 0, tr = 0, t;
			unsigned int posted = 0;
			char lbuf[32];

			b_remote = 0;
			while (b_remote < n) {
				while (posted < n && posted - b_remote < 64 &&
				       b_post(x, events, mem[0], &ep, key, len) == 0)
					posted++;
				T_ASSERT(trd_advance(x, 0) >= 0, "advance");
			}
			t = rte_get_timer_cycles() - t0;
			for (unsigned int i = 0; i < lone; i++) {
				b_remote = b_local = 0;
				t0 = rte_get_timer_cycles();
				T_EQ(b_post(x, events, mem[0], &ep, key, len), 0);
				while (b_remote == 0)
					T_ASSERT(trd_advance(x, 0) >= 0, "advance");
				tr += rte_get_timer_cycles() - t0;
				tl += (events ? b_local_at : rte_get_timer_cycles()) - t0;
			}
			if (events)
				snprintf(lbuf, sizeof(lbuf), "%.2f", (double)tl / us / lone);
			printf("%-7s %6u %12.2f %14s %15.2f\n", events ? "events" : "plain", len,
			       (double)t / us / n, events ? lbuf : "-", (double)tr / us / lone);
		}
	T_EQ(trd_net_stop(net), 0);
	T_EQ(trd_client_destroy(c), 0);
	trd_net_free(net);
	free(mem[0]);
	free(mem[1]);
	rte_eal_cleanup();
	return 0;
}

int
main(int argc, char **argv)
{
	struct trd_node_conf ndc = {.n_rec_fifos = 4, .n_counters = N_CTRS};
	const uint32_t ranks[] = {0, 1};
	struct trd_net_conf nc = {
		.links = TRD_NET_RING, .node = &ndc, .ranks = ranks, .n_ranks = 2};
	struct trd_impair_conf imp;
	uint64_t t0;

	test_eal_init(argv[0], NULL);
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench();
	t0 = trd_time_us();
	trd_torus_init(&nc.torus, 3, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	T_EQ(trd_impair_parse("loss=5%,reorder=5%,seed=17", &imp), 0);
	for (unsigned int t = 0; t < 2; t++) {
		nd[t] = trd_net_node(net, t);
		T_EQ(trd_node_impair(nd[t], &imp), 0);
		mem[t] = aligned_alloc(4096, MEM_LEN);
		T_ASSERT(mem[t] != NULL, "memory");
		memset(mem[t], 0, MEM_LEN);
		mr[t] = trd_mr_register(nd[t], mem[t], MEM_LEN, TRD_ACCESS_ALL);
		T_ASSERT(mr[t] != NULL, "region");
		cl[t] = trd_client_create("pami", NULL);
		T_ASSERT(cl[t] != NULL, "client");
		for (unsigned int k = 0; k < 2; k++) {
			struct trd_context_conf cc = {
				.node = nd[t],
				.inj_fifo = k,
				.cpl_fifo = 2 * k,
				.recv_fifo = (int)(2 * k + 1),
				.dispatch = k == 0,
				.recv = k == 0 ? NULL : plain_recv,
			};

			cx[t][k] = trd_context_create(cl[t], &cc);
			T_ASSERT(cx[t][k] != NULL, "context: %s", rte_strerror(rte_errno));
		}
	}
	test_dispatch();
	test_unknown();
	test_refusals();
	test_local();
	test_failures();
	T_EQ(ctx_stat(cx[0][0], TRD_CTX_STAT_LOCAL_DONE), N_SEND + 20 + 5);

	for (unsigned int t = 0; t < 2; t++)
		T_EQ(trd_client_destroy(cl[t]), 0);
	trd_net_free(net);
	for (unsigned int t = 0; t < 2; t++)
		free(mem[t]);
	rte_eal_cleanup();
	printf("test_dispatch: all passed in %.1f s\n", (double)(trd_time_us() - t0) / 1e6);
	return test_status();
}
