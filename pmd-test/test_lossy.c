/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability under impairment: an 8-node torus whose every link loses, reorders, duplicates
 * and corrupts frames (loss=2%,reorder=1%,dup=0.5%,corrupt=0.1%). N operations of random
 * kind (tracked put, memory-FIFO message, RDMA read, put with delivery reflection), size
 * (0 B .. 1 MiB) and target: each completes exactly once, byte-exact, counters exact; then
 * every mbuf is back in the pool.
 *
 * A second part stops one peer mid-transfer: operations to it fail with -EHOSTUNREACH within
 * the configured time, new ones fail fast, traffic to the others goes on, and the peer's
 * return is detected.
 *
 * With "shares" as a third argument every node is split in two shares (lanes): the worker lcore
 * serves share 0 of every node and the main thread polls share 1 of every node between its
 * posts, so each node runs on two threads; FIFOs 0 and 2 (puts, reads) send on lane 0, 1 and 3
 * (messages, reflections) on lane 1. Besides the above, both shares of every node must have
 * carried traffic.
 *
 * With "failok" (a loss so heavy that live peers are declared down) an operation may fail
 * with -EHOSTUNREACH instead of completing, but every one must end, each success byte-exact.
 *
 * Arguments: [N] [impairment spec] [shares] [failok]; environment: LOSSY_TIMEOUT_S (the
 * bound on the whole run, default 180 s), LOSSY_DEAD_MS (the nodes' dead_ms).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <rte_mempool.h>

#include <toroid/testing.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define NODES      8
#define WIN        24                 /* outstanding ops per origin */
#define SLOT       (64u << 10)        /* per (origin, window slot) area in a target */
#define BIG        (1u << 20)         /* one big area per origin */
#define AREA       (WIN * SLOT + BIG) /* what one origin may write into one target */
#define RF_OUT     3                  /* outcomes of tracked operations */
#define RF_CPL     2                  /* reflection completions */
#define RF_MSG     0                  /* memory-FIFO messages */
#define TIMEOUT_US 180000000ULL

enum kind { K_PUT, K_FIFO, K_READ, K_REFLECT, K_MAX };

struct op {
	uint8_t busy, kind, target, big;
	uint32_t len, id;
	uint64_t seq; /* global op number: the data pattern's seed */
	uint64_t t0;  /* when it was posted (us) */
};

struct node {
	struct trd_node *n;
	uint8_t *mem;   /* others write here: NODES areas */
	uint8_t *rd;    /* others read from here */
	uint8_t *local; /* where our reads land: WIN slots + big */
	struct trd_mr *mr_mem, *mr_rd, *mr_local;
	uint16_t ctr[WIN + 1];
	struct op ops[WIN + 1];
	bool big_busy;
	uint64_t done;
	uint8_t *msg_seen; /* per global op: FIFO message received */
};

static struct node nd[NODES];
static uint64_t total_ops = 100000, next_seq, completed;
static uint64_t per_kind[K_MAX];
static uint8_t *scratch;
static bool split; /* two shares per node */
/* "failok": a loss so heavy that live peers may be declared down; an operation may then fail
 * with -EHOSTUNREACH (counter marked failed) instead of completing, but it must end */
static bool failok;
static uint64_t failed_ops, longest_us; /* the longest time an operation took to end */

static uint8_t *
area(unsigned int target, unsigned int origin, unsigned int slot)
{
	return nd[target].mem + (size_t)origin * AREA + (slot == WIN ? WIN * SLOT : slot * SLOT);
}

static uint8_t *
local_slot(unsigned int origin, unsigned int slot)
{
	return nd[origin].local + (slot == WIN ? WIN * SLOT : slot * SLOT);
}

/* the source bytes of op seq: the pattern of the global op number */
static const uint8_t *
pattern(uint64_t seq, uint32_t len)
{
	test_fill(scratch, len, seq * 2654435761ULL + 1);
	return scratch;
}

static uint32_t
pick_len(uint64_t *rs, bool *big)
{
	uint64_t r = test_rand(rs) % 1000;

	*big = false;
	if (r < 20)
		return 0;
	if (r < 800)
		return 1 + (uint32_t)(test_rand(rs) % 4096);
	if (r < 995)
		return 1 + (uint32_t)(test_rand(rs) % SLOT);
	*big = true;
	return 1 + (uint32_t)(test_rand(rs) % BIG);
}

static void
post(unsigned int a, uint64_t *rs)
{
	struct node *x = &nd[a];
	unsigned int slot = WIN, b;
	struct op *o;
	bool big;
	uint32_t len = pick_len(rs, &big);
	struct trd_desc d, c;
	int rc;

	if (big) {
		if (x->big_busy)
			return;
	} else {
		for (slot = 0; slot < WIN && x->ops[slot].busy; slot++)
			;
		if (slot == WIN)
			return;
	}
	do
		b = (unsigned int)(test_rand(rs) % NODES);
	while (b == a);
	o = &x->ops[slot];
	o->kind = (uint8_t)(test_rand(rs) % K_MAX);
	/* (failok: no reads. A read's data lost when its target resets the session towards us
	 * neither arrives nor fails its counter: nothing ties a read's counter to its peer) */
	if (failok && o->kind == K_READ)
		o->kind = K_PUT;
	o->target = (uint8_t)b;
	o->len = len;
	o->big = big;
	o->seq = next_seq;
	switch (o->kind) {
	case K_PUT:
		trd_desc_put(&d, trd_node_coord(nd[b].n), pattern(o->seq, len), len,
			     trd_mr_key(nd[b].mr_mem), (uint64_t)(area(b, a, slot) - nd[b].mem), 0,
			     0);
		/* copied now (the pattern buffer is reused): inline or sent from a copy */
		memcpy(local_slot(a, slot), scratch, len);
		d.src = (uintptr_t)local_slot(a, slot);
		T_EQ(trd_track_open(x->n, RF_OUT, slot, NULL, &o->id), 0);
		d.flags = TRD_DF_ACKREQ;
		d.aux = o->id;
		rc = trd_inject(trd_inj_fifo(x->n, 0), &d);
		break;
	case K_FIFO:
		memcpy(local_slot(a, slot), pattern(o->seq, len), len);
		trd_desc_fifo(&d, trd_node_coord(nd[b].n), RF_MSG, local_slot(a, slot), len, o->seq,
			      x->ctr[slot]);
		T_EQ(trd_counter_set(x->n, x->ctr[slot], len), 0);
		rc = trd_inject(trd_inj_fifo(x->n, 1), &d);
		break;
	case K_READ:
		/* read len bytes of b's read area (a fixed pattern) at a seq-dependent offset */
		trd_desc_put(&c, trd_node_coord(x->n), NULL, len, trd_mr_key(x->mr_local),
			     (uint64_t)(local_slot(a, slot) - x->local), 0, x->ctr[slot]);
		c.flags = TRD_DF_SRC_MR;
		c.src_key = trd_mr_key(nd[b].mr_rd);
		c.src = o->seq % 4096;
		if (failok) {
			/* tracked: its peer declared down fails it (a DONE with the error) */
			T_EQ(trd_track_open(x->n, RF_OUT, slot, NULL, &o->id), 0);
			c.flags |= TRD_DF_ACKREQ;
			c.aux = o->id;
		}
		T_EQ(trd_counter_set(x->n, x->ctr[slot], len), 0);
		trd_desc_rget(&d, trd_node_coord(nd[b].n), TRD_ENGINE_FIFO, &c, 1);
		rc = trd_inject(trd_inj_fifo(x->n, 2), &d);
		break;
	default: {
		struct trd_cpl_spec s = {.kind = TRD_CPL_FIFO,
					 .mode = TRD_CPL_DELIVERY,
					 .fifo = RF_CPL,
					 .cookie = slot};

		memcpy(local_slot(a, slot), pattern(o->seq, len), len);
		trd_desc_put(&d, trd_node_coord(nd[b].n), local_slot(a, slot), len,
			     trd_mr_key(nd[b].mr_mem), (uint64_t)(area(b, a, slot) - nd[b].mem), 0,
			     0);
		rc = trd_inject_reflect(trd_inj_fifo(x->n, 3), &d, &s);
		break;
	}
	}
	if (rc == -ENOBUFS) {
		if (o->kind == K_PUT || (o->kind == K_READ && failok))
			trd_track_close(x->n, o->id);
		return;
	}
	if (rc == -EHOSTUNREACH && failok) {
		/* its target is down: the op failed at once (it ended) */
		if (o->kind == K_PUT || o->kind == K_READ)
			trd_track_close(x->n, o->id);
		if (o->kind == K_FIFO || o->kind == K_READ)
			T_EQ(trd_counter_set(x->n, x->ctr[slot], 0), 0); /* nothing counts on it */
		per_kind[o->kind]++;
		next_seq++;
		completed++;
		failed_ops++;
		return;
	}
	T_EQ(rc, 0);
	o->busy = 1;
	o->t0 = trd_time_us();
	if (big)
		x->big_busy = true;
	per_kind[o->kind]++;
	next_seq++;
}

/* what every node dropped, for a failure's report */
static void
dump_drops(void)
{
	for (unsigned int i = 0; i < NODES; i++) {
		struct trd_node_stats st;

		if (nd[i].n == NULL || trd_node_stats_get(nd[i].n, &st) != 0)
			continue;
		for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
			if (st.drop[c])
				fprintf(stderr, "node %u: %s %" PRIu64 "\n", i, trd_drop_name(c),
					st.drop[c]);
		fprintf(stderr,
			"node %u: retransmits %" PRIu64 " acks tx %" PRIu64 " rx %" PRIu64
			" peers down %" PRIu64 "\n",
			i, st.stat[TRD_STAT_RETRANS], st.stat[TRD_STAT_TX_ACKS],
			st.stat[TRD_STAT_RX_ACKS], st.stat[TRD_STAT_PEERS_DOWN]);
	}
}

/* op @p o of @p a has ended, well or in failure: its slot is free again */
static void
op_end(unsigned int a, struct op *o)
{
	o->busy = 0;
	longest_us = RTE_MAX(longest_us, trd_time_us() - o->t0);
	if (o->big)
		nd[a].big_busy = false;
	nd[a].done++;
	completed++;
}

static void
finish(unsigned int a, unsigned int slot)
{
	struct op *o = &nd[a].ops[slot];

	if ((o->kind == K_PUT || o->kind == K_REFLECT) &&
	    memcmp(area(o->target, a, slot), pattern(o->seq, o->len), o->len) != 0)
		dump_drops(); /* why, for the report below */
	if (o->kind == K_PUT || o->kind == K_REFLECT)
		T_ASSERT(memcmp(area(o->target, a, slot), pattern(o->seq, o->len), o->len) == 0,
			 "op %" PRIu64 " (kind %u): %u bytes %u -> %u not in place at completion",
			 o->seq, o->kind, o->len, a, o->target);
	else if (o->kind == K_READ)
		T_ASSERT(memcmp(local_slot(a, slot), nd[o->target].rd + o->seq % 4096, o->len) == 0,
			 "read %" PRIu64 " differs", o->seq);
	op_end(a, o);
}

/* op @p slot of @p a ended in failure: allowed only in failok mode */
static void
finish_failed(unsigned int a, unsigned int slot, int status)
{
	struct op *o = &nd[a].ops[slot];

	if (!failok)
		dump_drops();
	T_ASSERT(failok && status == -EHOSTUNREACH, "op %" PRIu64 " (kind %u) %u -> %u failed: %d",
		 o->seq, o->kind, a, o->target, status);
	op_end(a, o);
	failed_ops++;
}

static void
reap(unsigned int a)
{
	struct node *x = &nd[a];
	struct trd_msg *m[32];
	int k;

	/* tracked puts: DONE */
	while ((k = trd_rec_fifo_poll(trd_rec_fifo(x->n, RF_OUT), m, 32)) > 0)
		for (int i = 0; i < k; i++) {
			if (m[i]->status != 0 && !failok)
				dump_drops();
			T_ASSERT(m[i]->status == 0 || failok, "put failed: %d (%s from %u,%u,%u)",
				 m[i]->status, trd_drop_name(m[i]->cause), m[i]->src.x, m[i]->src.y,
				 m[i]->src.z);
			T_ASSERT(x->ops[m[i]->user].busy &&
					 (x->ops[m[i]->user].kind == K_PUT ||
					  (x->ops[m[i]->user].kind == K_READ && m[i]->status != 0)),
				 "a DONE for no put");
			if (m[i]->status != 0)
				finish_failed(a, (unsigned int)m[i]->user, m[i]->status);
			else
				finish(a, (unsigned int)m[i]->user);
			trd_msg_free(m[i]);
		}
	/* reflection completions */
	while ((k = trd_rec_fifo_poll(trd_rec_fifo(x->n, RF_CPL), m, 32)) > 0)
		for (int i = 0; i < k; i++) {
			T_ASSERT(x->ops[m[i]->user].busy && x->ops[m[i]->user].kind == K_REFLECT,
				 "a completion for nothing");
			if (m[i]->status != 0)
				finish_failed(a, (unsigned int)m[i]->user, m[i]->status);
			else
				finish(a, (unsigned int)m[i]->user);
			trd_msg_free(m[i]);
		}
	/* messages for us: exactly once, byte-exact; their sender's counter tells it */
	while ((k = trd_rec_fifo_poll(trd_rec_fifo(x->n, RF_MSG), m, 32)) > 0)
		for (int i = 0; i < k; i++) {
			uint64_t seq = m[i]->user;

			T_ASSERT(seq < next_seq, "message of no op");
			T_ASSERT(!x->msg_seen[seq], "message %" PRIu64 " delivered twice", seq);
			x->msg_seen[seq] = 1;
			T_ASSERT(memcmp(m[i]->data, pattern(seq, m[i]->len), m[i]->len) == 0,
				 "message %" PRIu64 " differs", seq);
			trd_msg_free(m[i]);
		}
	/* FIFO sends and reads: their counters reach exactly zero */
	for (unsigned int s = 0; s <= WIN; s++) {
		struct op *o = &x->ops[s];
		int64_t v;

		if (!o->busy || (o->kind != K_FIFO && o->kind != K_READ))
			continue;
		T_EQ(trd_counter_read(x->n, x->ctr[s], &v), 0);
		if (v <= TRD_COUNTER_FAILED && o->kind == K_READ && failok)
			continue; /* tracked: its DONE tells */
		if (v <= TRD_COUNTER_FAILED) {
			finish_failed(a, s, -EHOSTUNREACH);
			continue;
		}
		if (v < 0)
			dump_drops();
		T_ASSERT(v >= 0, "counter below zero: %" PRId64 " (duplicate data)", v);
		/* (failok: a message's injection counter tells only that it left; a message lost
		 * with its peer declared down never comes, one that comes is checked above) */
		if (v == 0 && o->kind == K_READ && failok)
			trd_track_close(x->n, o->id);
		if (v == 0 && (o->kind == K_READ || nd[o->target].msg_seen[o->seq] || failok))
			finish(a, s);
	}
}

static void
test_lossy(struct trd_net *net, const struct trd_impair_conf *imp)
{
	uint64_t rs = 4242, deadline = trd_time_us() + TIMEOUT_US, t0 = trd_time_us();
	struct rte_mempool *mp = trd_default_pool(0);
	unsigned int lc = test_worker_lcore();
	uint64_t retrans = 0, downs = 0, lost = 0, dups = 0, corrupt = 0, reord = 0;

	for (unsigned int i = 0; i < NODES; i++) {
		struct node *x = &nd[i];

		x->n = trd_net_node(net, i);
		x->mem = calloc(NODES, AREA);
		x->rd = malloc(4096 + BIG);
		x->local = calloc(1, WIN * SLOT + BIG);
		x->msg_seen = calloc(total_ops + 16, 1);
		T_ASSERT(x->mem && x->rd && x->local && x->msg_seen, "malloc");
		test_fill(x->rd, 4096 + BIG, 100 + i);
		x->mr_mem = trd_mr_register(x->n, x->mem, (size_t)NODES * AREA,
					    TRD_ACCESS_REMOTE_WRITE);
		x->mr_rd = trd_mr_register(x->n, x->rd, 4096 + BIG, TRD_ACCESS_REMOTE_READ);
		x->mr_local =
			trd_mr_register(x->n, x->local, WIN * SLOT + BIG, TRD_ACCESS_REMOTE_WRITE);
		T_ASSERT(x->mr_mem && x->mr_rd && x->mr_local, "regions");
		for (unsigned int s = 0; s <= WIN; s++)
			T_EQ(trd_counter_alloc(x->n, &x->ctr[s]), 0);
		T_EQ(trd_node_impair(x->n, imp), 0);
	}
	if (split && lc < RTE_MAX_LCORE) {
		/* share 0 of every node on the worker, share 1 polled below */
		struct trd_node *set[NODES];
		unsigned int zero[NODES] = {0};

		for (unsigned int i = 0; i < NODES; i++)
			set[i] = nd[i].n;
		T_EQ(trd_lcore_launch_shares(lc, set, zero, NODES), 0);
	} else if (lc < RTE_MAX_LCORE) {
		T_EQ(trd_net_launch(net, &lc, 1), 0);
	}
	if (getenv("LOSSY_TIMEOUT_S") != NULL)
		deadline = trd_time_us() + strtoull(getenv("LOSSY_TIMEOUT_S"), NULL, 0) * 1000000;
	while (completed < total_ops) {
		if (trd_time_us() >= deadline) {
			/* what is stuck, for the report */
			for (unsigned int a = 0; a < NODES; a++)
				for (unsigned int s = 0; s <= WIN; s++) {
					struct op *o = &nd[a].ops[s];
					int64_t v = -1;

					if (!o->busy)
						continue;
					trd_counter_read(nd[a].n, nd[a].ctr[s], &v);
					fprintf(stderr,
						"stuck: op %" PRIu64 " kind %u %u -> %u len %u "
						"counter %" PRId64 " seen %u\n",
						o->seq, o->kind, a, o->target, o->len, v,
						o->kind == K_FIFO ? nd[o->target].msg_seen[o->seq]
								  : 0);
				}
			dump_drops();
		}
		T_ASSERT(trd_time_us() < deadline, "stalled at %" PRIu64 " of %" PRIu64, completed,
			 total_ops);
		for (unsigned int a = 0; a < NODES; a++) {
			for (int k = 0; k < 4 && next_seq < total_ops; k++)
				post(a, &rs);
			reap(a);
		}
		if (lc >= RTE_MAX_LCORE)
			trd_net_poll(net);
		else if (split)
			for (unsigned int a = 0; a < NODES; a++)
				T_ASSERT(trd_node_poll_share(nd[a].n, 1) >= 0, "poll share 1");
	}
	if (split && lc < RTE_MAX_LCORE)
		trd_lcore_stop(lc);
	trd_net_stop(net);
	for (unsigned int i = 0; i < NODES; i++) {
		struct trd_node_stats st;

		T_EQ(trd_node_stats_get(nd[i].n, &st), 0);
		if (split) {
			struct trd_node_stats s0, s1;

			T_EQ(trd_node_shares(nd[i].n), 2);
			T_EQ(trd_node_share_stats_get(nd[i].n, 0, &s0), 0);
			T_EQ(trd_node_share_stats_get(nd[i].n, 1, &s1), 0);
			/* both lanes carried data, and the sum is what the node reports */
			T_ASSERT(s0.stat[TRD_STAT_TX_PKTS] > 1000 &&
					 s1.stat[TRD_STAT_TX_PKTS] > 1000,
				 "node %u: share 0 sent %" PRIu64 ", share 1 %" PRIu64, i,
				 s0.stat[TRD_STAT_TX_PKTS], s1.stat[TRD_STAT_TX_PKTS]);
			T_EQ(s0.stat[TRD_STAT_TX_PKTS] + s1.stat[TRD_STAT_TX_PKTS],
			     st.stat[TRD_STAT_TX_PKTS]);
			T_EQ(st.drop[TRD_DROP_BAD_LANE], 0);
		}
		retrans += st.stat[TRD_STAT_RETRANS];
		downs += st.stat[TRD_STAT_PEERS_DOWN];
		T_EQ(trd_node_cpl_pending(nd[i].n), 0);
		for (unsigned int l = 0; l < trd_node_n_links(nd[i].n); l++) {
			struct trd_link_stats ls;

			T_EQ(trd_link_stats_get(trd_node_link(nd[i].n, l), &ls), 0);
			lost += ls.imp_lost;
			dups += ls.imp_dup;
			corrupt += ls.imp_corrupt;
			reord += ls.imp_reordered;
		}
		for (unsigned int s = 0; s <= WIN; s++) {
			int64_t v;

			T_EQ(trd_counter_read(nd[i].n, nd[i].ctr[s], &v), 0);
			T_ASSERT(v == 0 || (failok && v <= TRD_COUNTER_FAILED),
				 "node %u counter %u: %" PRId64, i, s, v);
		}
	}
	T_ASSERT((imp->loss == 0 || lost > 0) && (imp->corrupt == 0 || corrupt > 0) &&
			 (imp->dup == 0 || dups > 0) && (imp->reorder == 0 || reord > 0),
		 "the links were not impaired as asked");
	printf("lossy%s: %" PRIu64 " ops (put %" PRIu64 ", fifo %" PRIu64 ", read %" PRIu64
	       ", reflect %" PRIu64 ") exactly once in %.1f s; links lost %" PRIu64
	       ", reordered %" PRIu64 ", duplicated %" PRIu64 ", corrupted %" PRIu64 "; %" PRIu64
	       " retransmissions; %" PRIu64 " peers declared down; %" PRIu64
	       " ops failed; the longest took %.1f s\n",
	       split ? " (2 shares per node)" : "", completed, per_kind[K_PUT], per_kind[K_FIFO],
	       per_kind[K_READ], per_kind[K_REFLECT], (double)(trd_time_us() - t0) / 1e6, lost,
	       reord, dups, corrupt, retrans, downs, failed_ops, (double)longest_us / 1e6);
	trd_net_free(net);
	for (unsigned int i = 0; i < NODES; i++) {
		free(nd[i].mem);
		free(nd[i].rd);
		free(nd[i].local);
		free(nd[i].msg_seen);
	}
	/* every mbuf is back */
	T_EQ(rte_mempool_avail_count(mp), mp->size);
}

/* One peer stops answering in the middle of transfers, then comes back. */
static void
test_peer_down(void)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_node_conf tmpl = {.dead_ms = 100};
	struct trd_net *net;
	struct trd_node *a, *dead, *alive, *set[3];
	static uint8_t buf[200000], mem1[200000], mem2[200000];
	struct trd_mr *m1, *m2;
	struct trd_desc d;
	struct trd_msg *m;
	unsigned int lc = test_worker_lcore(), k = 0, failed = 0;
	uint64_t t0, deadline;
	uint32_t id;

	if (lc >= RTE_MAX_LCORE) {
		test_skip_part("peer down: needs a worker lcore");
		return;
	}
	nc.node = &tmpl;
	trd_torus_init(&nc.torus, 4, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	a = trd_net_node(net, 1);
	dead = trd_net_node(net, 2);
	alive = trd_net_node(net, 0);
	m1 = trd_mr_register(dead, mem1, sizeof(mem1), TRD_ACCESS_REMOTE_WRITE);
	m2 = trd_mr_register(alive, mem2, sizeof(mem2), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(m1 && m2, "regions");
	/* the lcore serves everyone but 'dead', which nobody polls: it stopped */
	for (unsigned int r = 0; r < 4; r++)
		if (r != 2)
			set[k++] = trd_net_node(net, r);
	T_EQ(trd_lcore_launch(lc, set, k), 0);
	test_fill(buf, sizeof(buf), 3);
	t0 = trd_time_us();
	for (int i = 0; i < 4; i++) {
		T_EQ(trd_track_open(a, RF_OUT, 100 + (uint64_t)i, NULL, &id), 0);
		trd_desc_put(&d, trd_node_coord(dead), buf, sizeof(buf), trd_mr_key(m1), 0, 0, 0);
		d.flags = TRD_DF_ACKREQ;
		d.aux = id;
		T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	}
	/* the operations fail within the configured time (plus scheduling slack) */
	deadline = t0 + 2000000;
	while (failed < 4) {
		T_ASSERT(trd_time_us() < deadline, "operations to a dead peer hang");
		if (trd_rec_fifo_poll(trd_rec_fifo(a, RF_OUT), &m, 1) == 1) {
			T_EQ(m->status, -EHOSTUNREACH);
			T_ASSERT(m->user >= 100 && m->user < 104, "cookie");
			trd_msg_free(m);
			failed++;
		}
	}
	printf("peer down: 4 operations failed with -EHOSTUNREACH after %.0f ms (dead_ms 100)\n",
	       (double)(trd_time_us() - t0) / 1000);
	T_EQ(trd_node_peer_up(a, trd_node_coord(dead)), 0);
	trd_desc_put(&d, trd_node_coord(dead), buf, 10, trd_mr_key(m1), 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), -EHOSTUNREACH); /* fails fast */
	/* the others are unaffected */
	T_EQ(trd_track_open(a, RF_OUT, 7, NULL, &id), 0);
	trd_desc_put(&d, trd_node_coord(alive), buf, sizeof(buf), trd_mr_key(m2), 0, 0, 0);
	d.flags = TRD_DF_ACKREQ;
	d.aux = id;
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	T_EQ(trd_rec_fifo_wait(trd_rec_fifo(a, RF_OUT), &m, 5000000), 0);
	T_EQ(m->status, 0);
	trd_msg_free(m);
	T_ASSERT(memcmp(mem2, buf, sizeof(buf)) == 0, "data to the live peer");
	/* it comes back: polled again, it answers the probes */
	deadline = trd_time_us() + 5000000;
	while (trd_node_peer_up(a, trd_node_coord(dead)) != 1) {
		T_ASSERT(trd_time_us() < deadline, "the peer's return was not detected");
		trd_node_poll(dead);
	}
	T_EQ(trd_track_open(a, RF_OUT, 8, NULL, &id), 0);
	trd_desc_put(&d, trd_node_coord(dead), buf, 5000, trd_mr_key(m1), 100, 0, 0);
	d.flags = TRD_DF_ACKREQ;
	d.aux = id;
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	deadline = trd_time_us() + 5000000;
	while (trd_rec_fifo_poll(trd_rec_fifo(a, RF_OUT), &m, 1) != 1) {
		T_ASSERT(trd_time_us() < deadline, "no traffic after the return");
		trd_node_poll(dead);
	}
	T_EQ(m->status, 0);
	trd_msg_free(m);
	T_ASSERT(memcmp(mem1 + 100, buf, 5000) == 0, "data after the return");
	trd_lcore_stop(lc);
	trd_net_free(net);
	printf("peer down: others unaffected; return detected; traffic resumes\n");
}

int
main(int argc, char **argv)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	/* corruption reaches payloads too: only a payload CRC catches it (real NICs: the FCS) */
	struct trd_node_conf tmpl = {.n_counters = 64, .n_rec_fifos = 4, .payload_crc = true};
	struct trd_impair_conf imp;
	struct trd_net *net;

	if (argc > 1)
		total_ops = strtoull(argv[1], NULL, 0);
	for (int i = 3; i < argc; i++) {
		split |= strcmp(argv[i], "shares") == 0;
		failok |= strcmp(argv[i], "failok") == 0;
	}
	tmpl.shares = split ? 2 : 1;
	if (getenv("LOSSY_DEAD_MS") != NULL)
		tmpl.dead_ms = (unsigned int)strtoul(getenv("LOSSY_DEAD_MS"), NULL, 0);
	T_EQ(trd_impair_parse(
		     argc > 2 ? argv[2] : "loss=2%,reorder=1%,dup=0.5%,corrupt=0.1%,seed=7", &imp),
	     0);
	test_eal_init(argv[0], NULL);
	scratch = malloc(BIG);
	T_ASSERT(scratch != NULL, "malloc");
	test_peer_down();
	nc.node = &tmpl;
	trd_torus_init(&nc.torus, 2, 2, 2);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	test_lossy(net, &imp);
	rte_eal_cleanup();
	return test_status();
}
