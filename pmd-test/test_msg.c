/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The messaging layer (clients, contexts, work queues, advance) on an 8-node (2x2x2) torus of
 * net_ring ethdev ports (argument "ring": engine ring links), one engine lcore serving every
 * node, one client per node made alike (SPMD), two contexts each.
 *  fence:   1000 rounds of puts of random sizes then a fence (to the target, or to all): in
 *           the fence callback every covered byte is in the target's memory, and the put
 *           posted after the fence has not started (its target bytes untouched, the context's
 *           started count unchanged);
 *  order:   a capture of the origin's frames shows operations of mixed types (put, send,
 *           atomic, RDMA read) leaving in posting order, and, at each fence, every earlier
 *           operation's outcome (DONE, atomic reply, last put-back packet) received before
 *           the next operation's first packet;
 *  read:    RDMA reads of 1 B .. 16 MiB at unaligned offsets, many in flight to 7 nodes,
 *           byte-exact with guards; refused reads (unregistered key, out of bounds, no read
 *           access) complete with their error and write nothing; local ranges outside a
 *           remote-writable region are refused at posting;
 *  atomics: 8 nodes x 10 000 fetch-adds on one word: the exact sum, every old value once; a
 *           compare-and-swap lock (acquire, read, put, fence, swap to release) protects a
 *           counter;
 *  send:    messages of 0 .. 3000 B to two contexts of another task, received by their receive
 *           callbacks in order and intact;
 *  errors:  refusals complete with their status (bad key, bounds, access, FIFO, alignment),
 *           posting checks, a full work queue, advance from a callback; the context keeps
 *           working;
 *  threads: two threads advance two contexts of one node concurrently (no lock between them)
 *           while the engine lcore serves the nodes; the app threads share the main lcore's
 *           CPU and yield when idle, so at most two CPUs are busy.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <toroid/msg.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 10000000
#define NODES      8
#define WQ         512

/* Each node's region "big" (all access): read sources below 16 MiB + 4 KiB, then areas. */
#define MiB        (1u << 20)
#define SRC_LEN    (16 * MiB + 4096)
#define FENCE_OFF  (16 * MiB + 64 * 1024) /* 8 slots of 32 KiB, then the canary */
#define FENCE_SLOT (32 * 1024)
#define CANARY_OFF (FENCE_OFF + 8 * FENCE_SLOT)
#define ORDER_OFF  (16 * MiB + 384 * 1024) /* puts of the order test, 64 B per entry */
#define ATOM_OFF   (16 * MiB + 448 * 1024) /* atomics of the order test, 8 B per entry */
#define WORD_OFF   (16 * MiB + 512 * 1024) /* the fetch-add word, lock, counter */
#define LOCAL_OFF  (16 * MiB + 520 * 1024) /* CAS lock test: where a node reads into */
#define THREAD_OFF (16 * MiB + 576 * 1024) /* two threads: 64 KiB each */
#define BIG_LEN    (17 * MiB)
/* Node 0's landing region for reads (remote write only). */
#define LAND_LEN (20 * MiB)

static struct trd_net *net;
static struct trd_node *nd[NODES];
static struct trd_client *cl[NODES];
static struct trd_context *cx[NODES][2];
static uint8_t *big[NODES];
static struct trd_mr *bigmr[NODES];
static uint8_t *land;
static struct trd_mr *landmr;
static uint64_t seed = 0x70707;

/* ---- helpers ---- */

static void
fill(uint8_t *p, size_t len, uint64_t s)
{
	size_t i = 0;

	s |= 1;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = test_rand(&s);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)test_rand(&s);
}

static struct trd_ep
ep_of(unsigned int from, unsigned int task, unsigned int ctx)
{
	struct trd_ep e;

	T_EQ(trd_endpoint(cl[from], task, ctx, &e), 0);
	return e;
}

static uint64_t
stat_of(struct trd_context *c, enum trd_context_stat s)
{
	uint64_t st[TRD_CTX_STAT_MAX];

	T_EQ(trd_context_stats_get(c, st), 0);
	return st[s];
}

static void
dump_state(void)
{
	for (unsigned int i = 0; i < NODES; i++) {
		struct trd_node_stats st;

		trd_node_stats_get(nd[i], &st);
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			if (st.drop[c])
				fprintf(stderr, "node %u: drop %s %" PRIu64 "\n", i,
					trd_drop_name(c), st.drop[c]);
		for (unsigned int k = 0; k < 2; k++)
			if (cx[i][k] != NULL && trd_context_pending(cx[i][k]) != 0)
				fprintf(stderr, "node %u context %u: %u pending\n", i, k,
					trd_context_pending(cx[i][k]));
	}
}

/* Advance every context until @p done(arg) holds. */
static void
drive(bool (*done)(void *), void *arg, const char *what)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	while (!done(arg)) {
		for (unsigned int i = 0; i < NODES; i++)
			for (unsigned int k = 0; k < 2; k++)
				T_ASSERT(trd_advance(cx[i][k], 0) >= 0, "advance");
		if (trd_time_us() > deadline) {
			dump_state();
			T_ASSERT(0, "%s: timed out", what);
		}
	}
}

static bool
all_idle(void *arg)
{
	(void)arg;
	for (unsigned int i = 0; i < NODES; i++)
		for (unsigned int k = 0; k < 2; k++)
			if (trd_context_pending(cx[i][k]) != 0)
				return false;
	return true;
}

static bool
flag_set(void *arg)
{
	return *(volatile int *)arg != 0;
}

static void
cb_ok(struct trd_context *c, void *cookie, int status)
{
	(void)c;
	T_ASSERT(status == 0, "operation %p failed: %d", cookie, status);
}

static void
cb_status(struct trd_context *c, void *cookie, int status)
{
	(void)c;
	*(int *)cookie = status == 0 ? 1 : status;
}

/* Post one status-recording operation, run until it completes, return its status. */
static int
wait_status(int *st)
{
	drive(flag_set, st, "operation");
	return *st == 1 ? 0 : *st;
}

/* ---- fence ---- */

#define FR_MAX 8

static struct {
	unsigned int o, t;
	bool all;
	unsigned int n;
	unsigned int tgt[FR_MAX];
	uint32_t off[FR_MAX];
	uint32_t len[FR_MAX];
	uint8_t *src[FR_MAX];
	uint64_t started_expect;
	int fence_done;
} fr;

static void
fence_cb(struct trd_context *c, void *cookie, int status)
{
	(void)cookie;
	T_EQ(status, 0);
	for (unsigned int k = 0; k < fr.n; k++) {
		if (!fr.all && fr.tgt[k] != fr.t)
			continue;
		T_ASSERT(memcmp(big[fr.tgt[k]] + fr.off[k], fr.src[k], fr.len[k]) == 0,
			 "fence completed before put %u (%u B to node %u) was in memory", k,
			 fr.len[k], fr.tgt[k]);
	}
	/* the put posted after the fence has not started */
	for (unsigned int i = 0; i < 64; i++)
		T_ASSERT(big[fr.t][CANARY_OFF + i] == 0, "a put after the fence started early");
	T_EQ(stat_of(c, TRD_CTX_STAT_STARTED), fr.started_expect);
	fr.fence_done = 1;
}

static void
test_fence(unsigned int rounds)
{
	static uint8_t canary[64];
	uint8_t *src[NODES];
	uint64_t t0 = trd_time_us(), puts = 0, bytes = 0;

	memset(canary, 0xC3, sizeof(canary));
	for (unsigned int i = 0; i < NODES; i++) {
		src[i] = malloc(FR_MAX * FENCE_SLOT);
		T_ASSERT(src[i] != NULL, "malloc");
		memset(big[i] + CANARY_OFF, 0, 64);
	}
	for (unsigned int r = 0; r < rounds; r++) {
		unsigned int o = r % NODES, t, n, extra;
		struct trd_context *c = cx[o][0];
		struct trd_ep et;

		do
			t = (unsigned int)(test_rand(&seed) % NODES);
		while (t == o);
		n = 1 + (unsigned int)(test_rand(&seed) % 6);
		extra = (unsigned int)(test_rand(&seed) % 3); /* puts to other nodes */
		fr.o = o;
		fr.t = t;
		fr.all = r % 4 == 3;
		fr.n = n + extra;
		fr.fence_done = 0;
		for (unsigned int k = 0; k < fr.n; k++) {
			uint64_t v = test_rand(&seed);
			struct trd_ep e;

			if (k < n) {
				fr.tgt[k] = t;
			} else {
				do
					fr.tgt[k] = (unsigned int)(test_rand(&seed) % NODES);
				while (fr.tgt[k] == o || fr.tgt[k] == t);
			}
			/* half inline-sized, half multi-packet zero-copy */
			fr.len[k] = v % 2 ? 1 + (uint32_t)(v >> 8) % 256
					  : 1 + (uint32_t)(v >> 8) % (FENCE_SLOT - 2048);
			fr.off[k] = FENCE_OFF + (k % 8) * FENCE_SLOT + (uint32_t)(v >> 40) % 1024;
			fr.src[k] = src[o] + k * FENCE_SLOT;
			fill(fr.src[k], fr.len[k], v);
			e = ep_of(o, fr.tgt[k], 0);
			T_EQ(trd_put(c, fr.src[k], &e, fr.off[k], trd_mr_key(bigmr[fr.tgt[k]]),
				     fr.len[k], cb_ok, NULL),
			     0);
			puts++;
			bytes += fr.len[k];
		}
		et = ep_of(o, t, 0);
		fr.started_expect = stat_of(c, TRD_CTX_STAT_STARTED) + fr.n + 1;
		T_EQ(trd_fence(c, fr.all ? NULL : &et, fence_cb, NULL), 0);
		T_EQ(trd_put(c, canary, &et, CANARY_OFF, trd_mr_key(bigmr[t]), sizeof(canary),
			     cb_ok, NULL),
		     0);
		drive(all_idle, NULL, "fence round");
		T_ASSERT(fr.fence_done, "round %u: no fence callback", r);
		T_ASSERT(memcmp(big[t] + CANARY_OFF, canary, sizeof(canary)) == 0,
			 "the put after the fence did not land");
		memset(big[t] + CANARY_OFF, 0, sizeof(canary));
	}
	for (unsigned int i = 0; i < NODES; i++)
		free(src[i]);
	printf("fence: %u rounds, %" PRIu64 " puts (%" PRIu64 " B): every byte in place at the "
	       "fence callback, later puts held back (%.1f us per round)\n",
	       rounds, puts, bytes, (double)(trd_time_us() - t0) / RTE_MAX(rounds, 1u));
}

/* ---- order on the wire ---- */

enum { O_PUT, O_SEND, O_ATOMIC, O_READ, O_FENCE };

#define ORDER_N 400

static unsigned int recv_count[NODES][2];
static uint64_t recv_next[NODES][2];
static bool recv_check_order;

static void
recv_cb(struct trd_context *c, void *arg, const struct trd_msg *m)
{
	unsigned int node = (unsigned int)(uintptr_t)arg, k = trd_context_offset(c);
	uint8_t expect[4096];

	T_ASSERT(m->len <= sizeof(expect), "message length %u", m->len);
	if (recv_check_order) {
		T_EQ(m->user, recv_next[node][k]);
		recv_next[node][k]++;
		fill(expect, m->len, m->user * 31 + node);
		T_ASSERT(memcmp(m->data, expect, m->len) == 0, "message %" PRIu64 " corrupt",
			 m->user);
	}
	recv_count[node][k]++;
}

struct wire_ev {
	bool tx; /* an operation's first packet leaving, else a completion arriving */
	uint8_t type;
	unsigned int idx; /* tx: the entry index it carries */
};

static unsigned int
read_wire(const char *file, struct trd_coord me, struct wire_ev *ev, unsigned int max)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(file, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned int n = 0;

	T_ASSERT(p != NULL, "%s", err);
	while (pcap_next_ex(p, &h, &d) == 1 && n < max) {
		struct trd_pkt k;
		bool from_me, to_me;

		if (trd_wire_parse(d, h->caplen, &k) != 0)
			continue;
		from_me = k.src[0] == me.x && k.src[1] == me.y && k.src[2] == me.z;
		to_me = k.dst[0] == me.x && k.dst[1] == me.y && k.dst[2] == me.z;
		if (from_me && !to_me && (k.flags & TRD_HF_FIRST)) {
			struct trd_desc c;

			ev[n].tx = true;
			ev[n].type = k.type;
			switch (k.type) {
			case TRD_PKT_PUT:
				ev[n].idx = (unsigned int)((k.offset - ORDER_OFF) / 64);
				break;
			case TRD_PKT_FIFO:
				ev[n].idx = (unsigned int)k.key;
				break;
			case TRD_PKT_ATOMIC:
				ev[n].idx = (unsigned int)((k.offset - ATOM_OFF) / 8);
				break;
			case TRD_PKT_RGET:
				T_ASSERT(h->caplen >= TRD_FRAME_HLEN + sizeof(c),
					 "short remote get");
				memcpy(&c, d + TRD_FRAME_HLEN, sizeof(c));
				ev[n].idx = (unsigned int)(c.src / 64);
				break;
			default:
				continue;
			}
			n++;
		} else if (to_me && !from_me &&
			   (k.type == TRD_PKT_DONE || k.type == TRD_PKT_ATOMIC_REPLY ||
			    (k.type == TRD_PKT_PUT && (k.flags & TRD_HF_LAST)))) {
			ev[n].tx = false;
			ev[n].type = k.type;
			n++;
		}
	}
	pcap_close(p);
	return n;
}

static void
test_order(void)
{
	static const uint8_t type_of[] = {[O_PUT] = TRD_PKT_PUT,
					  [O_SEND] = TRD_PKT_FIFO,
					  [O_ATOMIC] = TRD_PKT_ATOMIC,
					  [O_READ] = TRD_PKT_RGET};
	static const unsigned int targets[] = {1, 3, 5, 7}; /* one first hop (x+) from node 0 */
	static uint8_t kind[ORDER_N], tgt[ORDER_N], pay[ORDER_N][64];
	static uint32_t len[ORDER_N];
	static uint64_t res[ORDER_N];
	static struct wire_ev ev[4 * ORDER_N];
	static unsigned int seq[ORDER_N];
	static uint8_t tx_seen[ORDER_N];
	struct trd_context *c = cx[0][0];
	unsigned int n_ops = 0, n_fences = 0, n_sends = 0, nev, k_tx = 0, k_rx = 0, f = 0;
	unsigned int fence_at[ORDER_N];
	uint64_t stalls = stat_of(c, TRD_CTX_STAT_STALLS);
	char file[64];

	snprintf(file, sizeof(file), "/tmp/toroid-msg-%d.pcap", getpid());
	recv_check_order = false; /* here the user word is the entry index: count only */
	for (unsigned int i = 0; i < NODES; i++)
		recv_count[i][0] = 0;
	T_EQ(trd_node_capture(nd[0], file, 0), 0);
	for (unsigned int i = 0; i < ORDER_N; i++) {
		uint64_t v = test_rand(&seed);
		unsigned int t = targets[(v >> 8) % 4];
		struct trd_ep e = ep_of(0, t, 0);

		tgt[i] = (uint8_t)t;
		len[i] = 1 + (uint32_t)(v >> 16) % 64;
		kind[i] = i > 0 && (v % 40) == 0 ? O_FENCE : (uint8_t)((v >> 4) % 4);
		switch (kind[i]) {
		case O_PUT:
			fill(pay[i], len[i], v);
			T_EQ(trd_put(c, pay[i], &e, ORDER_OFF + i * 64, trd_mr_key(bigmr[t]),
				     len[i], cb_ok, NULL),
			     0);
			break;
		case O_SEND:
			fill(pay[i], len[i], v);
			T_EQ(trd_send(c, &e, pay[i], len[i], i, cb_ok, NULL), 0);
			n_sends++;
			break;
		case O_ATOMIC:
			T_EQ(trd_atomic(c, &e, trd_mr_key(bigmr[t]), ATOM_OFF + i * 8,
					TRD_ATOMIC_FADD, 1, 0, &res[i], cb_ok, NULL),
			     0);
			break;
		case O_READ:
			T_EQ(trd_rdma_read(c, land + i * 64, &e, i * 64, trd_mr_key(bigmr[t]),
					   len[i], cb_ok, NULL),
			     0);
			break;
		default:
			fence_at[n_fences++] = n_ops; /* operations posted before it */
			T_EQ(trd_fence(c, NULL, cb_ok, NULL), 0);
			continue;
		}
		seq[n_ops++] = i;
	}
	drive(all_idle, NULL, "mixed operations");
	T_EQ(trd_node_capture(nd[0], NULL, 0), 0);
	stalls = stat_of(c, TRD_CTX_STAT_STALLS) - stalls;
	T_ASSERT(stalls > 0, "the injection FIFO never pushed back");
	{
		unsigned int got = 0;
		uint64_t deadline = trd_time_us() + TIMEOUT_US;

		do {
			got = 0;
			for (unsigned int t = 0; t < NODES; t++) {
				trd_advance(cx[t][0], 0);
				got += recv_count[t][0];
			}
			T_ASSERT(trd_time_us() < deadline, "messages: %u of %u", got, n_sends);
		} while (got < n_sends);
		T_EQ(got, n_sends);
	}
	for (unsigned int i = 0; i < ORDER_N; i++) {
		if (kind[i] == O_PUT)
			T_ASSERT(memcmp(big[tgt[i]] + ORDER_OFF + i * 64, pay[i], len[i]) == 0,
				 "put %u", i);
		else if (kind[i] == O_READ)
			T_ASSERT(memcmp(land + i * 64, big[tgt[i]] + i * 64, len[i]) == 0,
				 "read %u", i);
	}

	/* what left node 0, in order, and what came back before each fence was passed */
	nev = read_wire(file, trd_node_coord(nd[0]), ev, RTE_DIM(ev));
	unlink(file);
	for (unsigned int e = 0; e < nev; e++) {
		unsigned int i;

		if (!ev[e].tx) {
			k_rx++;
			continue;
		}
		/* a retransmission by the reliability layer is not a new start */
		if (ev[e].idx < ORDER_N && tx_seen[ev[e].idx])
			continue;
		T_ASSERT(k_tx < n_ops, "more operations on the wire than posted");
		/* a fence between operation k_tx - 1 and k_tx: all k_tx outcomes came first */
		while (f < n_fences && fence_at[f] == k_tx) {
			T_ASSERT(k_rx >= k_tx,
				 "operation %u left before the %u earlier ones completed (%u "
				 "outcomes seen)",
				 k_tx, k_tx, k_rx);
			f++;
		}
		i = seq[k_tx];
		tx_seen[i] = 1;
		T_ASSERT(ev[e].idx == i, "entry %u (type %u) left where entry %u was due",
			 ev[e].idx, ev[e].type, i);
		T_EQ(ev[e].type, type_of[kind[i]]);
		k_tx++;
	}
	T_EQ(k_tx, n_ops);
	T_ASSERT(k_rx >= n_ops, "outcomes on the wire: %u of %u", k_rx, n_ops);
	printf("order: %u operations (put, send, atomic, read) and %u fences: left node 0 in "
	       "posting order (%" PRIu64 " stalls on a full injection FIFO); each fence passed "
	       "only after every earlier outcome arrived\n",
	       n_ops, n_fences, stalls);
}

/* ---- RDMA read ---- */

struct rd {
	unsigned int t;
	uint32_t loff, roff, len;
	int status;
};

static void
rd_cb(struct trd_context *c, void *cookie, int status)
{
	struct rd *r = cookie;

	(void)c;
	r->status = status == 0 ? 1 : status;
}

static bool
rd_all_done(void *arg)
{
	struct rd *r = arg;

	for (; r->len != 0; r++)
		if (r->status == 0)
			return false;
	return true;
}

#define GUARD_B 0x5A

static void
test_read(void)
{
	static const uint32_t sizes[] = {1,   2,    7,    63,   64,   65,   255,   256,
					 257, 1443, 1444, 1445, 2889, 4099, 65537, 262147};
	static struct rd r[7 * RTE_DIM(sizes) + 2];
	struct trd_context *c = cx[0][1];
	unsigned int n = 0;
	uint32_t loff = 0;
	uint64_t t0, bytes = 0;
	struct trd_ep e;
	int st;

	memset(land, GUARD_B, LAND_LEN);
	/* the largest first: 16 MiB from node 7 at an odd offset */
	r[n++] = (struct rd){.t = 7, .loff = 5, .roff = 4095, .len = 16 * MiB};
	loff = 16 * MiB + 64;
	for (unsigned int t = 1; t < NODES; t++)
		for (unsigned int s = 0; s < RTE_DIM(sizes); s++) {
			uint32_t ro = (uint32_t)(test_rand(&seed) % (SRC_LEN - sizes[s]));

			loff += 1 + (uint32_t)(test_rand(&seed) % 61); /* a guard gap, unaligned */
			r[n++] = (struct rd){.t = t, .loff = loff, .roff = ro, .len = sizes[s]};
			loff += sizes[s];
		}
	T_ASSERT(loff < LAND_LEN, "landing area");
	r[n].len = 0;
	t0 = trd_time_us();
	for (unsigned int i = 0; i < n; i++) {
		e = ep_of(0, r[i].t, 0);
		T_EQ(trd_rdma_read(c, land + r[i].loff, &e, r[i].roff, trd_mr_key(bigmr[r[i].t]),
				   r[i].len, rd_cb, &r[i]),
		     0);
		bytes += r[i].len;
	}
	drive(rd_all_done, r, "reads");
	t0 = trd_time_us() - t0;
	for (unsigned int i = 0; i < n; i++) {
		T_ASSERT(r[i].status == 1, "read %u failed: %d", i, r[i].status);
		T_ASSERT(memcmp(land + r[i].loff, big[r[i].t] + r[i].roff, r[i].len) == 0,
			 "read %u (%u B from node %u) differs", i, r[i].len, r[i].t);
		T_EQ(land[r[i].loff - 1], GUARD_B);
		T_EQ(land[r[i].loff + r[i].len], GUARD_B);
	}
	T_EQ(land[0], GUARD_B);

	/* refused reads write nothing */
	{
		static uint8_t ro_mem[4096] __rte_aligned(64);
		struct trd_mr *romr =
			trd_mr_register(nd[4], ro_mem, sizeof(ro_mem), TRD_ACCESS_REMOTE_WRITE);
		static uint8_t unreg[64];
		struct trd_mr *wo;
		static uint8_t wo_mem[4096];

		T_ASSERT(romr != NULL, "region");
		memset(land, GUARD_B, 1 * MiB);
		e = ep_of(0, 4, 0);
		st = 0;
		T_EQ(trd_rdma_read(c, land + 100, &e, 0, trd_mr_key(bigmr[4]) ^ (1ULL << 40), 64,
				   cb_status, &st),
		     0);
		T_EQ(wait_status(&st), -ENOKEY);
		st = 0;
		T_EQ(trd_rdma_read(c, land + 100, &e, BIG_LEN - 10, trd_mr_key(bigmr[4]), 64,
				   cb_status, &st),
		     0);
		T_EQ(wait_status(&st), -ERANGE);
		st = 0;
		T_EQ(trd_rdma_read(c, land + 100, &e, 0, trd_mr_key(romr), 64, cb_status, &st), 0);
		T_EQ(wait_status(&st), -EACCES);
		for (unsigned int i = 0; i < 1 * MiB; i++)
			T_ASSERT(land[i] == GUARD_B, "a refused read wrote byte %u", i);
		/* local ranges the target could not write back into are refused at posting */
		T_EQ(trd_rdma_read(c, unreg, &e, 0, trd_mr_key(bigmr[4]), 8, cb_ok, NULL), -EINVAL);
		T_EQ(trd_rdma_read(c, land + LAND_LEN - 4, &e, 0, trd_mr_key(bigmr[4]), 8, cb_ok,
				   NULL),
		     -EINVAL);
		wo = trd_mr_register(nd[0], wo_mem, sizeof(wo_mem), TRD_ACCESS_REMOTE_READ);
		T_ASSERT(wo != NULL, "region");
		T_EQ(trd_rdma_read(c, wo_mem, &e, 0, trd_mr_key(bigmr[4]), 8, cb_ok, NULL),
		     -EINVAL);
		T_EQ(trd_rdma_read(c, land, &e, 0, trd_mr_key(bigmr[4]), 0, cb_ok, NULL), -EINVAL);
		T_EQ(trd_mr_deregister(wo), 0);
		/* and the context keeps working */
		st = 0;
		T_EQ(trd_rdma_read(c, land + 7, &e, 33, trd_mr_key(bigmr[4]), 5000, cb_status, &st),
		     0);
		T_EQ(wait_status(&st), 0);
		T_ASSERT(memcmp(land + 7, big[4] + 33, 5000) == 0, "read after errors");
		drive(all_idle, NULL, "idle");
		T_EQ(trd_mr_deregister(romr), 0);
	}
	printf("RDMA read: %u reads in flight to 7 nodes, 1 B .. 16 MiB at unaligned offsets, "
	       "byte-exact (%.1f MB in %.1f ms); refused reads (key, bounds, access) wrote "
	       "nothing\n",
	       n, (double)bytes / 1e6, (double)t0 / 1000);
}

/* ---- atomics ---- */

#define FADD_PER 10000
#define FADD_WIN 128

static uint64_t fadd_res[NODES][FADD_PER];
static unsigned int fadd_done[NODES];

static void
fadd_cb(struct trd_context *c, void *cookie, int status)
{
	(void)c;
	T_EQ(status, 0);
	fadd_done[(uintptr_t)cookie]++;
}

static void
test_fadd(void)
{
	uint64_t *w = (uint64_t *)(big[0] + WORD_OFF);
	uint8_t *seen = calloc(NODES * FADD_PER, 1);
	unsigned int posted[NODES] = {0}, total;
	uint64_t deadline = trd_time_us() + 3 * TIMEOUT_US, t0 = trd_time_us();

	T_ASSERT(seen != NULL, "calloc");
	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
	do {
		total = 0;
		for (unsigned int a = 0; a < NODES; a++) {
			struct trd_context *c = cx[a][0];
			struct trd_ep e = ep_of(a, 0, 0);

			while (posted[a] < FADD_PER && trd_context_pending(c) < FADD_WIN) {
				T_EQ(trd_atomic(c, &e, trd_mr_key(bigmr[0]), WORD_OFF,
						TRD_ATOMIC_FADD, 1, 0, &fadd_res[a][posted[a]],
						fadd_cb, (void *)(uintptr_t)a),
				     0);
				posted[a]++;
			}
			T_ASSERT(trd_advance(c, 0) >= 0, "advance");
			total += fadd_done[a];
		}
		T_ASSERT(trd_time_us() < deadline, "fetch-adds stalled at %u", total);
	} while (total < NODES * FADD_PER);
	T_EQ(__atomic_load_n(w, __ATOMIC_ACQUIRE), NODES * FADD_PER);
	for (unsigned int a = 0; a < NODES; a++)
		for (unsigned int i = 0; i < FADD_PER; i++) {
			uint64_t old = fadd_res[a][i];

			T_ASSERT(old < NODES * FADD_PER, "old value %" PRIu64, old);
			T_ASSERT(!seen[old], "old value %" PRIu64 " twice", old);
			seen[old] = 1;
		}
	free(seen);
	printf("atomics: %u fetch-adds from %u contexts on one word: sum exact, every old value "
	       "once (%.2f Mops/s)\n",
	       NODES * FADD_PER, NODES, (double)(NODES * FADD_PER) / (double)(trd_time_us() - t0));
}

/* A compare-and-swap lock at node 3 protecting a counter next to it: acquire with CAS, read
 * the counter (RDMA read), put it back incremented, fence, release with a swap. */
#define LOCK_PER  100
#define LOCK_NODE 3

struct locker {
	unsigned int me;
	unsigned int done;
	uint64_t old;
	uint64_t rel;
	unsigned int retries;
};

static struct locker lk[NODES];

static void lock_try(struct locker *l);

static void
lock_released(struct trd_context *c, void *cookie, int status)
{
	struct locker *l = cookie;

	(void)c;
	T_EQ(status, 0);
	T_EQ(l->rel, l->me + 1); /* we held it until now */
	if (++l->done < LOCK_PER)
		lock_try(l);
}

static void
lock_read_done(struct trd_context *c, void *cookie, int status)
{
	struct locker *l = cookie;
	uint64_t *local = (uint64_t *)(big[l->me] + LOCAL_OFF);
	struct trd_ep e = ep_of(l->me, LOCK_NODE, 0);
	uint64_t key = trd_mr_key(bigmr[LOCK_NODE]);

	T_EQ(status, 0);
	local[1] = local[0] + 1;
	/* the put must be at the target before the lock is free: the fence sees to it */
	T_EQ(trd_put(c, &local[1], &e, WORD_OFF + 16, key, 8, cb_ok, NULL), 0);
	T_EQ(trd_fence(c, &e, NULL, NULL), 0);
	T_EQ(trd_atomic(c, &e, key, WORD_OFF + 8, TRD_ATOMIC_SWAP, 0, 0, &l->rel, lock_released, l),
	     0);
}

static void
lock_cas_done(struct trd_context *c, void *cookie, int status)
{
	struct locker *l = cookie;
	struct trd_ep e = ep_of(l->me, LOCK_NODE, 0);

	T_EQ(status, 0);
	if (l->old != 0) {
		l->retries++;
		lock_try(l);
		return;
	}
	T_EQ(trd_rdma_read(c, big[l->me] + LOCAL_OFF, &e, WORD_OFF + 16,
			   trd_mr_key(bigmr[LOCK_NODE]), 8, lock_read_done, l),
	     0);
}

static void
lock_try(struct locker *l)
{
	struct trd_ep e = ep_of(l->me, LOCK_NODE, 0);

	T_EQ(trd_atomic(cx[l->me][0], &e, trd_mr_key(bigmr[LOCK_NODE]), WORD_OFF + 8,
			TRD_ATOMIC_CAS, l->me + 1, 0, &l->old, lock_cas_done, l),
	     0);
}

static bool
locks_done(void *arg)
{
	(void)arg;
	for (unsigned int i = 0; i < NODES; i++)
		if (lk[i].done < LOCK_PER)
			return false;
	return all_idle(NULL);
}

static void
test_cas_lock(void)
{
	uint64_t *w = (uint64_t *)(big[LOCK_NODE] + WORD_OFF);
	unsigned int retries = 0;

	w[1] = 0; /* lock */
	w[2] = 0; /* counter */
	for (unsigned int i = 0; i < NODES; i++) {
		lk[i] = (struct locker){.me = i};
		lock_try(&lk[i]);
	}
	drive(locks_done, NULL, "lock");
	T_EQ(w[1], 0);
	T_EQ(w[2], NODES * LOCK_PER);
	for (unsigned int i = 0; i < NODES; i++)
		retries += lk[i].retries;
	printf("atomics: a compare-and-swap lock over 8 contexts: %u increments under the lock, "
	       "none lost (%u failed acquisitions)\n",
	       NODES * LOCK_PER, retries);
}

/* ---- send / receive ---- */

static void
test_send(void)
{
	enum { N = 200 };
	static uint8_t buf[N][3000];
	struct trd_context *c = cx[2][0];

	recv_check_order = true;
	for (unsigned int k = 0; k < 2; k++)
		recv_next[6][k] = recv_count[6][k] = 0;
	for (unsigned int i = 0; i < N; i++) {
		unsigned int k = i % 2;
		struct trd_ep e = ep_of(2, 6, k);
		uint32_t len = (uint32_t)(test_rand(&seed) % 3001);
		uint64_t user = i / 2;

		fill(buf[i], len, user * 31 + 6);
		T_EQ(trd_send(c, &e, buf[i], len, user, cb_ok, NULL), 0);
	}
	drive(all_idle, NULL, "sends");
	{
		uint64_t deadline = trd_time_us() + TIMEOUT_US;

		while (recv_count[6][0] + recv_count[6][1] < N) {
			trd_advance(cx[6][0], 0);
			trd_advance(cx[6][1], 0);
			T_ASSERT(trd_time_us() < deadline, "messages missing");
		}
	}
	T_EQ(recv_count[6][0], N / 2);
	T_EQ(recv_count[6][1], N / 2);
	T_EQ(stat_of(cx[6][1], TRD_CTX_STAT_RECEIVED), N / 2);
	recv_check_order = false;
	printf("send: %u messages of 0 .. 3000 B to two contexts of task 6, received in order "
	       "and intact\n",
	       N);
}

/* ---- errors ---- */

static int cb_depth_rc = 1;

static void
cb_reenter(struct trd_context *c, void *cookie, int status)
{
	(void)cookie;
	T_EQ(status, 0);
	cb_depth_rc = trd_advance(c, 0);
}

static void
test_errors(void)
{
	static uint8_t buf[3000], ro_mem[4096] __rte_aligned(64);
	struct trd_context *c = cx[5][0];
	struct trd_ep e = ep_of(5, 2, 0), bad;
	uint64_t key = trd_mr_key(bigmr[2]), res = 77;
	struct trd_mr *romr =
		trd_mr_register(nd[2], ro_mem, sizeof(ro_mem), TRD_ACCESS_REMOTE_WRITE);
	struct trd_context_conf cc = {.node = nd[5], .cpl_fifo = 3, .recv_fifo = 3};
	int st;

	T_ASSERT(romr != NULL, "region");
	test_fill(buf, sizeof(buf), 3);
	memset(big[2] + FENCE_OFF, 0, 8192);
	st = 0;
	T_EQ(trd_put(c, buf, &e, FENCE_OFF, key ^ (1ULL << 33), 100, cb_status, &st), 0);
	T_EQ(wait_status(&st), -ENOKEY);
	st = 0;
	T_EQ(trd_put(c, buf, &e, BIG_LEN - 100, key, sizeof(buf), cb_status, &st), 0);
	T_EQ(wait_status(&st), -ERANGE);
	st = 0;
	T_EQ(trd_put(c, buf, &e, 0, trd_mr_key(romr), 16, cb_status, &st), 0); /* no read: fine */
	T_EQ(wait_status(&st), 0);
	st = 0;
	T_EQ(trd_atomic(c, &e, trd_mr_key(romr), 0, TRD_ATOMIC_FADD, 1, 0, &res, cb_status, &st),
	     0);
	T_EQ(wait_status(&st), -EACCES);
	T_EQ(res, 77);
	st = 0;
	T_EQ(trd_atomic(c, &e, key, WORD_OFF + 4, TRD_ATOMIC_FADD, 1, 0, &res, cb_status, &st), 0);
	T_EQ(wait_status(&st), -EINVAL); /* misaligned */
	bad = e;
	bad.recv_fifo = 40;
	st = 0;
	T_EQ(trd_send(c, &bad, buf, 10, 0, cb_status, &st), 0);
	T_EQ(wait_status(&st), -ENOENT);
	for (unsigned int i = 0; i < 8192; i++)
		T_ASSERT(big[2][FENCE_OFF + i] == 0, "a refused operation wrote");
	/* posting checks */
	T_EQ(trd_put(NULL, buf, &e, 0, key, 1, NULL, NULL), -EINVAL);
	T_EQ(trd_put(c, buf, NULL, 0, key, 1, NULL, NULL), -EINVAL);
	T_EQ(trd_put(c, NULL, &e, 0, key, 1, NULL, NULL), -EINVAL);
	T_EQ(trd_atomic(c, &e, key, WORD_OFF, (enum trd_atomic_op)9, 0, 0, NULL, NULL, NULL),
	     -EINVAL);
	bad = e;
	bad.coord.x = 9;
	T_EQ(trd_fence(c, &bad, NULL, NULL), -EINVAL);
	bad = e;
	bad.recv_fifo = TRD_NO_FIFO;
	T_EQ(trd_send(c, &bad, buf, 1, 0, NULL, NULL), -ENOTSUP);
	T_EQ(trd_endpoint(cl[5], NODES, 0, &bad), -EINVAL);
	T_EQ(trd_endpoint(cl[5], 0, 2, &bad), -EINVAL);
	T_ASSERT(trd_context_create(cl[5], &cc) == NULL && rte_errno == EINVAL, "recv = cpl");
	cc.recv_fifo = TRD_NO_FIFO;
	cc.cpl_fifo = 8;
	T_ASSERT(trd_context_create(cl[5], &cc) == NULL && rte_errno == EINVAL, "no such FIFO");
	/* a full work queue pushes back */
	{
		struct trd_client *small = trd_client_create("small", NULL);
		struct trd_context_conf sc = {.node = nd[5],
					      .inj_fifo = 2,
					      .cpl_fifo = 4,
					      .recv_fifo = TRD_NO_FIFO,
					      .wq_size = 4};
		struct trd_context *s;
		struct trd_ep se;
		uint64_t deadline = trd_time_us() + TIMEOUT_US;

		T_ASSERT(small != NULL, "client");
		s = trd_context_create(small, &sc);
		T_ASSERT(s != NULL, "context");
		T_EQ(trd_endpoint(small, 2, 0, &se), 0);
		for (int i = 0; i < 4; i++)
			T_EQ(trd_put(s, buf, &se, FENCE_OFF, key, 64, cb_ok, NULL), 0);
		T_EQ(trd_fence(s, NULL, NULL, NULL), -ENOBUFS);
		T_EQ(trd_context_pending(s), 4);
		T_EQ(trd_context_destroy(s), -EBUSY);
		T_EQ(trd_client_destroy(small), -EBUSY);
		while (trd_context_pending(s) != 0) {
			T_ASSERT(trd_advance(s, 1) <= 1, "advance bound");
			T_ASSERT(trd_time_us() < deadline, "small context stuck");
		}
		T_EQ(trd_fence(s, NULL, cb_reenter, NULL), 0);
		while (cb_depth_rc == 1)
			trd_advance(s, 0);
		T_EQ(cb_depth_rc, -EBUSY);
		T_EQ(trd_client_destroy(small), 0);
	}
	/* still working */
	st = 0;
	T_EQ(trd_put(c, buf, &e, FENCE_OFF, key, sizeof(buf), cb_status, &st), 0);
	T_EQ(wait_status(&st), 0);
	T_ASSERT(memcmp(big[2] + FENCE_OFF, buf, sizeof(buf)) == 0, "put after errors");
	T_ASSERT(stat_of(c, TRD_CTX_STAT_ERRORS) >= 5, "errors counted");
	T_EQ(trd_mr_deregister(romr), 0);
	printf("errors: bad key, bounds, access, alignment, FIFO complete with their status; "
	       "posting checks; full work queue; the context keeps working\n");
}

/* ---- two threads ---- */

#define TH_OPS 4000

struct th_arg {
	struct trd_context *c;
	unsigned int id;
	unsigned int done;
	uint64_t yields;
	uint8_t *src;
};

static void
th_cb(struct trd_context *c, void *cookie, int status)
{
	struct th_arg *a = cookie;

	(void)c;
	T_EQ(status, 0);
	a->done++;
}

static void *
th_main(void *arg)
{
	struct th_arg *a = arg;
	const unsigned int t = 6;
	struct trd_ep e;
	unsigned int posted = 0;
	uint64_t key = trd_mr_key(bigmr[t]), s = a->id + 1;
	uint64_t deadline = trd_time_us() + 2 * TIMEOUT_US;
	uint32_t base = THREAD_OFF + a->id * 65536;

	T_EQ(trd_endpoint(cl[1], t, trd_context_offset(a->c), &e), 0);
	while (a->done < TH_OPS) {
		while (posted < TH_OPS && trd_context_pending(a->c) < 64) {
			uint64_t v = test_rand(&s);
			uint32_t len = 1 + (uint32_t)(v >> 8) % 4096,
				 off = (uint32_t)(v >> 32) % 60000;

			switch (posted % 5) {
			case 0:
			case 1:
				T_EQ(trd_atomic(a->c, &e, key, WORD_OFF, TRD_ATOMIC_FADD, 1, 0,
						NULL, th_cb, a),
				     0);
				break;
			case 2:
				T_EQ(trd_put(a->c, a->src + off % 4096, &e, base + off, key, len,
					     th_cb, a),
				     0);
				break;
			case 3:
				/* into this thread's slice of node 1's region */
				T_EQ(trd_rdma_read(a->c, big[1] + base + off, &e, off * 7, key, len,
						   th_cb, a),
				     0);
				break;
			default:
				T_EQ(trd_fence(a->c, &e, th_cb, a), 0);
				break;
			}
			posted++;
		}
		if (trd_advance(a->c, 0) == 0) {
			/* idle: let the other application thread on this CPU run */
			a->yields++;
			sched_yield();
		}
		T_ASSERT(trd_time_us() < deadline, "thread %u stuck at %u", a->id, a->done);
	}
	return NULL;
}

static void
test_threads(void)
{
	struct th_arg a[2];
	pthread_t th;
	uint64_t *w = (uint64_t *)(big[6] + WORD_OFF);
	uint64_t t0 = trd_time_us();

	__atomic_store_n(w, 0, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < 2; i++) {
		a[i] = (struct th_arg){.c = cx[1][i], .id = i};
		a[i].src = malloc(8192);
		T_ASSERT(a[i].src != NULL, "malloc");
		fill(a[i].src, 8192, i);
	}
	/* the new thread inherits the main lcore's CPU: the two share it */
	T_EQ(pthread_create(&th, NULL, th_main, &a[1]), 0);
	th_main(&a[0]);
	T_EQ(pthread_join(th, NULL), 0);
	T_EQ(__atomic_load_n(w, __ATOMIC_ACQUIRE), 2 * (TH_OPS / 5 * 2));
	for (unsigned int i = 0; i < 2; i++)
		free(a[i].src);
	printf("threads: two threads advancing two contexts of node 1 concurrently, %u "
	       "operations each (atomics, puts, reads, fences), sum exact (%.1f ms, %" PRIu64
	       "+%" PRIu64 " yields)\n",
	       TH_OPS, (double)(trd_time_us() - t0) / 1000, a[0].yields, a[1].yields);
}

/* ---- set-up ---- */

int
main(int argc, char **argv)
{
	/* small injection FIFOs: the work queues meet back-pressure */
	struct trd_node_conf ndc = {.n_rec_fifos = 8, .inj_fifo_size = 64};
	struct trd_net_conf nc = {.links = TRD_NET_ETHDEV_RING, .node = &ndc};
	unsigned int lc, rounds = 1000;
	uint64_t t0;

	if (argc > 1 && strcmp(argv[1], "ring") == 0)
		nc.links = TRD_NET_RING;
	if (argc > 2)
		rounds = (unsigned int)atoi(argv[2]);
	test_eal_init(argv[0], NULL);
	trd_torus_init(&nc.torus, 2, 2, 2);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	t0 = trd_time_us();
	for (unsigned int i = 0; i < NODES; i++) {
		nd[i] = trd_net_node(net, i);
		big[i] = aligned_alloc(4096, BIG_LEN);
		T_ASSERT(big[i] != NULL, "memory");
		fill(big[i], SRC_LEN, 1000 + i);
		memset(big[i] + SRC_LEN, 0, BIG_LEN - SRC_LEN);
		bigmr[i] = trd_mr_register(nd[i], big[i], BIG_LEN, TRD_ACCESS_ALL);
		T_ASSERT(bigmr[i] != NULL, "region");
	}
	land = aligned_alloc(4096, LAND_LEN);
	T_ASSERT(land != NULL, "memory");
	landmr = trd_mr_register(nd[0], land, LAND_LEN, TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(landmr != NULL, "region");

	/* every task makes the same client: context 0 on FIFOs 0/0 (receives on 1), context 1
	 * on FIFOs 1/2 (receives on 3) */
	for (unsigned int i = 0; i < NODES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "app%u", i);
		cl[i] = trd_client_create(name, NULL);
		T_ASSERT(cl[i] != NULL, "client");
		for (unsigned int k = 0; k < 2; k++) {
			struct trd_context_conf cc = {
				.node = nd[i],
				.inj_fifo = k,
				.cpl_fifo = 2 * k,
				.recv_fifo = (int)(2 * k + 1),
				.wq_size = WQ,
				.recv = recv_cb,
				.recv_arg = (void *)(uintptr_t)i,
			};

			cx[i][k] = trd_context_create(cl[i], &cc);
			T_ASSERT(cx[i][k] != NULL, "context: %s", rte_strerror(rte_errno));
			T_EQ(trd_context_offset(cx[i][k]), k);
		}
		T_EQ(trd_client_n_tasks(cl[i]), NODES);
	}
	lc = test_worker_lcore();
	if (lc < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &lc, 1), 0);
	else
		printf("no worker lcore: the application threads poll the nodes\n");

	test_errors();
	test_fence(rounds);
	test_order();
	test_read();
	test_fadd();
	test_cas_lock();
	test_send();
	if (lc < RTE_MAX_LCORE)
		test_threads();
	else
		test_skip_part("threads: no engine lcore (two threads would poll one net)");
	T_ASSERT(all_idle(NULL), "idle at the end");

	for (unsigned int i = 0; i < NODES; i++)
		T_EQ(trd_client_destroy(cl[i]), 0);
	trd_net_free(net);
	for (unsigned int i = 0; i < NODES; i++)
		free(big[i]);
	free(land);
	rte_eal_cleanup();
	printf("test_msg: all passed in %.1f s\n", (double)(trd_time_us() - t0) / 1e6);
	return test_status();
}
