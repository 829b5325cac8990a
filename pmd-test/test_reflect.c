/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reflection completion.
 *  bulk:    an 8-node torus, every node posting puts with reflection to random targets, both
 *           completion kinds (FIFO, doorbell) and both modes (local, delivery): every
 *           completion arrives exactly once, only after the data left (local) or landed
 *           (delivery), in posting order per FIFO where the path is one; doorbell words hold
 *           the cookies.
 *  engine:  a reflector with no application call after start-up reflects every completion.
 *  capture: on a 3-node line, the origin's capture shows data, then the remote get to the
 *           neighbour, then the completion; the reflector's shows the get, then the reply.
 *  bad:     non-neighbour reflector, missing FIFO, doorbell word outside its page, forged
 *           and duplicate completions: refused or dropped and counted.
 *  full:    FIFO completions that find their FIFO full are refused, their ids pending, and
 *           come again once the application made room: every one arrives, with its cookie,
 *           in order, and no echo is dropped as an unknown completion.
 *  rounds:  a lone reflection costs a put and one hop back, in poll rounds: the origin's
 *           poll sends the data and the remote get, the reflector's next poll answers it,
 *           the origin's next poll completes it (a, b, a); a lone remote get the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_byteorder.h>
#include <rte_malloc.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 30000000
#define PAGE       4096
#define NODES      8
#define WIN        32 /* outstanding per FIFO */
#define SLICE      4096

static unsigned int per_node = 1250; /* 8 x 1250 = 10 000 */

struct origin {
	struct trd_node *n;
	uint8_t *src; /* per_node * 2048 bytes of source data */
	uint8_t *mem; /* target memory: a slice per (origin, slot) */
	struct trd_mr *mr;
	uint64_t *db[2]; /* doorbell pages: local, delivery */
	struct trd_mr *dbmr[2];
	uint16_t ctr[4][WIN]; /* injection counter per (fifo, window slot) */
	unsigned int posted[4], done[4];
	int64_t last[4]; /* last completed index per FIFO, for order */
	uint8_t *seen;   /* per op: completions seen */
	uint32_t *len;
	uint8_t *tgt;
	uint64_t need[4];  /* packets of FIFO f up to and including the last posted op */
	uint64_t *need_at; /* per op: packets its FIFO must have sent when it completes */
};

static struct origin o[NODES];

/* FIFO f of every origin always uses one (kind, mode). */
static const enum trd_cpl_kind fkind[4] = {TRD_CPL_FIFO, TRD_CPL_DOORBELL, TRD_CPL_FIFO,
					   TRD_CPL_DOORBELL};
static const enum trd_cpl_mode fmode[4] = {TRD_CPL_LOCAL, TRD_CPL_LOCAL, TRD_CPL_DELIVERY,
					   TRD_CPL_DELIVERY};

static inline unsigned int
op_index(unsigned int f, unsigned int k)
{
	return k * 4 + f;
}

static uint8_t *
target_slice(unsigned int b, unsigned int a, unsigned int f, unsigned int slot)
{
	return o[b].mem + ((a * 4 + f) * WIN + slot) * SLICE;
}

static void
post_one(unsigned int a, unsigned int f, uint64_t *seed)
{
	unsigned int k = o[a].posted[f], i = op_index(f, k), slot = k % WIN, b;
	uint32_t len = 1 + (uint32_t)(test_rand(seed) % 2047);
	struct trd_cpl_spec spec = {.kind = fkind[f], .mode = fmode[f]};
	struct trd_desc d;
	uint8_t *src = o[a].src + (size_t)i * 2048;
	int rc;

	do
		b = (unsigned int)(test_rand(seed) % NODES);
	while (b == a);
	o[a].len[i] = len;
	o[a].tgt[i] = (uint8_t)b;
	test_fill(src, len, ((uint64_t)a << 32) | i);
	spec.cookie = ((uint64_t)a << 32) | i;
	spec.fifo = (uint8_t)(f / 2); /* FIFO completions: local in 0, delivery in 1 */
	spec.doorbell = o[a].dbmr[f / 2];
	spec.offset = (uint64_t)(k % 512) * 8;
	T_EQ(trd_counter_set(o[a].n, o[a].ctr[f][slot], len), 0);
	trd_desc_put(&d, trd_node_coord(o[b].n), src, len, trd_mr_key(o[b].mr),
		     (uint64_t)(target_slice(b, a, f, slot) - o[b].mem), o[a].ctr[f][slot], 0);
	while ((rc = trd_inject_reflect(trd_inj_fifo(o[a].n, f), &d, &spec)) == -ENOBUFS)
		;
	T_EQ(rc, 0);
	/* data packets at 1444 B each, then the one remote-get packet */
	o[a].need[f] += (len + 1443) / 1444 + 1;
	o[a].need_at[i] = o[a].need[f];
	o[a].posted[f]++;
}

static void
completed(unsigned int a, uint64_t cookie)
{
	unsigned int i, f, k, slot, b;
	int64_t v;

	T_EQ(cookie >> 32, a);
	i = (unsigned int)cookie;
	T_ASSERT(i < per_node, "cookie index %u", i);
	f = i % 4;
	k = i / 4;
	slot = k % WIN;
	T_ASSERT(o[a].seen[i] == 0, "completion %u of node %u delivered twice", i, a);
	T_ASSERT(k < o[a].posted[f], "completion of an op not posted");
	o[a].seen[i] = 1;
	/* the data (and every earlier packet of its FIFO) was handed to the port before the
	 * completion could come back */
	{
		struct trd_inj_fifo_stats fs;

		T_EQ(trd_inj_fifo_stats_get(trd_inj_fifo(o[a].n, f), &fs), 0);
		T_ASSERT(fs.pkts_sent >= o[a].need_at[i],
			 "op %u: completion before the data was sent (%" PRIu64 " < %" PRIu64 ")",
			 i, fs.pkts_sent, o[a].need_at[i]);
	}
	if (fmode[f] == TRD_CPL_DELIVERY) {
		/* the target has the data: the source buffer is no longer read */
		T_EQ(trd_counter_read(o[a].n, o[a].ctr[f][slot], &v), 0);
		T_EQ(v, 0);
		/* ... and with delivery completion it is in the target's memory */
		b = o[a].tgt[i];
		uint8_t expect[2048];

		test_fill(expect, o[a].len[i], cookie);
		T_ASSERT(memcmp(target_slice(b, a, f, slot), expect, o[a].len[i]) == 0,
			 "op %u: delivery completion before the data landed", i);
	} else {
		/* one reflector, one path: completions come back in posting order */
		T_ASSERT((int64_t)k > o[a].last[f], "op %u out of order (after %" PRId64 ")", i,
			 o[a].last[f]);
		o[a].last[f] = k;
	}
	o[a].done[f]++;
}

static void
drain(unsigned int a)
{
	struct trd_msg *m[16];
	struct trd_event ev[32];
	int n;

	for (unsigned int q = 0; q < 2; q++)
		while ((n = trd_rec_fifo_poll(trd_rec_fifo(o[a].n, q), m, 16)) > 0)
			for (int j = 0; j < n; j++) {
				T_EQ(m[j]->len, 0);
				completed(a, m[j]->user);
				trd_msg_free(m[j]);
			}
	for (unsigned int q = 0; q < 2; q++)
		while ((n = trd_eq_poll(trd_node_eq(o[a].n, q), ev, 32)) > 0)
			for (int j = 0; j < n; j++) {
				T_EQ(ev[j].type, TRD_EV_DOORBELL);
				T_EQ(ev[j].key, trd_mr_key(o[a].dbmr[q]));
				completed(a, o[a].db[q][ev[j].value / 8]);
			}
}

static void
test_bulk(struct trd_net *net)
{
	uint64_t seed = 77, deadline = trd_time_us() + TIMEOUT_US;
	unsigned int total = 0, lc = test_worker_lcore();

	for (unsigned int a = 0; a < NODES; a++) {
		struct origin *x = &o[a];

		x->n = trd_net_node(net, a);
		x->src = malloc((size_t)per_node * 2048);
		x->mem = calloc(1, (size_t)NODES * 4 * WIN * SLICE);
		x->seen = calloc(per_node, 1);
		x->len = calloc(per_node, sizeof(*x->len));
		x->tgt = calloc(per_node, 1);
		x->need_at = calloc(per_node, sizeof(*x->need_at));
		T_ASSERT(x->src && x->mem && x->seen && x->len && x->tgt, "malloc");
		x->mr = trd_mr_register(x->n, x->mem, (size_t)NODES * 4 * WIN * SLICE,
					TRD_ACCESS_REMOTE_WRITE);
		T_ASSERT(x->mr != NULL, "mr");
		for (int q = 0; q < 2; q++) {
			struct trd_eq *eq = trd_node_eq(x->n, (unsigned int)q);

			T_ASSERT(eq != NULL, "default event queue %d", q);
			T_EQ(trd_eq_bind(eq, -1), 0);
			x->db[q] = aligned_alloc(PAGE, PAGE);
			memset(x->db[q], 0, PAGE);
			x->dbmr[q] = trd_doorbell_register(x->n, x->db[q], PAGE, eq);
			T_ASSERT(x->dbmr[q] != NULL, "doorbell");
		}
		for (int f = 0; f < 4; f++) {
			x->last[f] = -1;
			for (int s = 0; s < WIN; s++)
				T_EQ(trd_counter_alloc(x->n, &x->ctr[f][s]), 0);
		}
	}
	if (lc < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &lc, 1), 0);

	while (total < per_node * NODES) {
		T_ASSERT(trd_time_us() < deadline, "timeout with %u of %u completions", total,
			 per_node * NODES);
		for (unsigned int a = 0; a < NODES; a++) {
			/* a window slot (target slice, counter) is reused only once the op
			 * that used it before has completed */
			for (unsigned int f = 0; f < 4; f++)
				while (op_index(f, o[a].posted[f]) < per_node &&
				       (o[a].posted[f] < WIN ||
					o[a].seen[op_index(f, o[a].posted[f] - WIN)]))
					post_one(a, f, &seed);
			drain(a);
		}
		if (lc >= RTE_MAX_LCORE)
			trd_net_poll(net);
		total = 0;
		for (unsigned int a = 0; a < NODES; a++)
			for (unsigned int f = 0; f < 4; f++)
				total += o[a].done[f];
	}
	trd_net_stop(net);
	for (unsigned int a = 0; a < NODES; a++) {
		struct trd_node_stats st;

		T_EQ(trd_node_cpl_pending(o[a].n), 0);
		T_EQ(trd_node_stats_get(o[a].n, &st), 0);
		/* a retransmission that crossed a late ack arrives twice: not a loss */
		T_EQ(st.stat[TRD_STAT_DROPS] - st.drop[TRD_DROP_DUPLICATE], 0);
		/* the doorbell words hold the latest cookies of their slots */
		for (unsigned int q = 0; q < 2; q++) {
			unsigned int f = q == 0 ? 1 : 3, n = o[a].posted[f];

			for (unsigned int k = n > 512 ? n - 512 : 0; k < n; k++)
				T_EQ(o[a].db[q][k % 512], ((uint64_t)a << 32) | op_index(f, k));
		}
	}
	printf("bulk: %u puts with reflection completion, each exactly once, in order\n", total);
}

/* ---- a reflector with nothing but its engine ---- */

static uint64_t
be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

struct seen_frame {
	uint8_t type, src, dst;
	uint16_t flags;
};

static unsigned int
read_capture(const char *file, struct seen_frame *out, unsigned int max)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(file, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned int n = 0, nids = 0;
	uint64_t ids[256];

	T_ASSERT(p != NULL, "%s", err);
	while (pcap_next_ex(p, &h, &d) == 1 && n < max) {
		uint64_t id = (uint64_t)d[18] << 48 | be(d + 52, 2) << 32 | be(d + 58, 4);
		bool again = false;

		T_ASSERT(h->caplen >= TRD_FRAME_HLEN, "frame length");
		if (d[15] == TRD_PKT_ACK)
			continue; /* reliability's acks interleave; the order of the rest matters */
		/* so do its retransmissions (same source, session and sequence number), e.g. a
		 * tail loss probe sent before the ack came back */
		for (unsigned int k = 0; k < nids && be(d + 58, 4) != 0; k++)
			again |= ids[k] == id;
		if (again)
			continue;
		if (nids < RTE_DIM(ids))
			ids[nids++] = id;
		out[n].type = d[15];
		out[n].flags = (uint16_t)be(d + 16, 2);
		out[n].src = d[18]; /* x of the source: the line is along x */
		out[n].dst = d[22];
		n++;
	}
	pcap_close(p);
	return n;
}

static void
test_engine_only_and_capture(void)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_net *net;
	struct trd_node *O, *T, *R;
	struct trd_coord rc = {0, 0, 0};
	char fo[64], fr[64];
	struct seen_frame so[64], sr[64];
	unsigned int no, nr, lc = test_worker_lcore();
	static uint8_t buf[3000], dst[3000];
	struct trd_mr *mr;
	struct trd_desc d;
	struct trd_msg *m;
	struct trd_node_stats st;
	uint16_t ctr;
	const unsigned int N = 200;

	trd_torus_init(&nc.torus, 3, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	R = trd_net_node(net, 0);
	O = trd_net_node(net, 1);
	T = trd_net_node(net, 2);
	snprintf(fo, sizeof(fo), "/tmp/toroid-refl-%d-o.pcap", getpid());
	snprintf(fr, sizeof(fr), "/tmp/toroid-refl-%d-r.pcap", getpid());
	T_EQ(trd_node_capture(O, fo, 0), 0);
	T_EQ(trd_node_capture(R, fr, 0), 0);
	mr = trd_mr_register(T, dst, sizeof(dst), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr != NULL, "mr");
	T_EQ(trd_counter_alloc(O, &ctr), 0);
	T_EQ(trd_node_set_reflector(O, rc), 0);
	/* From here on the test never calls the API with R: only its engine lcore runs it. */
	R = NULL;
	if (lc < RTE_MAX_LCORE)
		T_EQ(trd_net_launch(net, &lc, 1), 0);

	test_fill(buf, sizeof(buf), 1);
	for (unsigned int i = 0; i < N; i++) {
		struct trd_cpl_spec spec = {
			.kind = TRD_CPL_FIFO, .mode = TRD_CPL_LOCAL, .fifo = 2, .cookie = 1000 + i};

		T_EQ(trd_counter_set(O, ctr, sizeof(buf)), 0);
		trd_desc_put(&d, trd_node_coord(T), buf, sizeof(buf), trd_mr_key(mr), 0, ctr, 0);
		T_EQ(trd_inject_reflect(trd_inj_fifo(O, 0), &d, &spec), 0);
		T_EQ(trd_rec_fifo_wait(trd_rec_fifo(O, 2), &m, TIMEOUT_US), 0);
		T_EQ(m->user, 1000 + i);
		T_EQ(m->src.x, 0); /* echoed by the neighbour */
		trd_msg_free(m);
	}
	trd_net_stop(net);
	R = trd_net_node(net, 0);
	T_EQ(trd_node_capture(O, NULL, 0), 0);
	T_EQ(trd_node_capture(R, NULL, 0), 0);
	T_EQ(trd_node_stats_get(R, &st), 0);
	T_EQ(st.stat[TRD_STAT_RX_RGET], N);
	T_EQ(st.stat[TRD_STAT_TX_FIFO], N);
	T_EQ(st.stat[TRD_STAT_DESCS], N); /* every one from its engine FIFO */

	/* origin: put x3 to T (x=2), remote get to R (x=0), then the completion from R */
	no = read_capture(fo, so, 5); /* the first exchange */
	T_EQ(no, 5);
	for (int i = 0; i < 3; i++) {
		T_EQ(so[i].type, TRD_PKT_PUT);
		T_EQ(so[i].src, 1);
		T_EQ(so[i].dst, 2);
	}
	T_EQ(so[2].flags & TRD_HF_LAST, TRD_HF_LAST);
	T_EQ(so[3].type, TRD_PKT_RGET);
	T_EQ(so[3].dst, 0);
	T_EQ(so[4].type, TRD_PKT_FIFO);
	T_EQ(so[4].src, 0);
	T_EQ(so[4].dst, 1);
	T_EQ(so[4].flags & TRD_HF_CPL, TRD_HF_CPL);
	/* reflector: the remote get in, the completion out */
	nr = read_capture(fr, sr, 2);
	T_EQ(nr, 2);
	T_EQ(sr[0].type, TRD_PKT_RGET);
	T_EQ(sr[0].src, 1);
	T_EQ(sr[1].type, TRD_PKT_FIFO);
	T_EQ(sr[1].dst, 1);
	unlink(fo);
	unlink(fr);
	trd_net_free(net);
	printf("engine-only reflector: %u completions; capture order data, get, completion\n", N);
}

/* ---- bad input ---- */

/* A 4x1x1 torus over ring links, each node as @p ndc says (NULL: the defaults); its nodes 0
 * and 1, neighbours, in @p a and @p b. */
static struct trd_net *
line4(const struct trd_node_conf *ndc, struct trd_node **a, struct trd_node **b)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = ndc};
	struct trd_net *net;

	trd_torus_init(&nc.torus, 4, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	*a = trd_net_node(net, 0);
	*b = trd_net_node(net, 1);
	return net;
}

static void
test_bad(void)
{
	struct trd_net *net;
	struct trd_node *a, *b;
	struct trd_desc d;
	struct trd_cpl_spec spec = {.kind = TRD_CPL_FIFO, .mode = TRD_CPL_LOCAL};
	struct trd_coord far = {2, 0, 0}, self;
	uint64_t *page = aligned_alloc(PAGE, PAGE);
	static uint8_t buf[64], plain[PAGE * 2];
	struct trd_mr *db, *mr;
	struct trd_node_stats st;

	net = line4(NULL, &a, &b);
	self = trd_node_coord(a);
	memset(page, 0, PAGE);
	db = trd_doorbell_register(a, page, PAGE, trd_node_eq(a, 0));
	T_ASSERT(db != NULL, "doorbell");
	T_ASSERT(trd_doorbell_register(a, (uint8_t *)page + 8, PAGE, NULL) == NULL, "unaligned");
	T_ASSERT(trd_doorbell_register(a, page, 100, NULL) == NULL, "not whole pages");
	mr = trd_mr_register(a, plain, sizeof(plain), TRD_ACCESS_REMOTE_WRITE);

	trd_desc_put(&d, trd_node_coord(b), buf, 8, 1, 0, 0, 0);
	spec.reflector = &far; /* two hops away: not a neighbour */
	T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), -EINVAL);
	spec.reflector = &self;
	T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), -EINVAL);
	spec.reflector = NULL;
	spec.fifo = 9;
	T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), -EINVAL);
	spec.kind = TRD_CPL_DOORBELL;
	spec.doorbell = db;
	spec.offset = PAGE - 4;
	T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), -EINVAL);
	spec.offset = PAGE;
	T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), -EINVAL);
	spec.doorbell = mr; /* not a doorbell region */
	spec.offset = 0;
	T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), -EINVAL);
	T_EQ(trd_node_set_reflector(a, far), -EINVAL);
	T_EQ(trd_node_cpl_pending(a), 0);

	/* on the wire: a forged completion, a write past the doorbell page, a remote get for a
	 * FIFO the reflector does not have */
	{
		uint64_t v = 5;
		struct trd_desc c;

		trd_desc_fifo(&d, self, 0, NULL, 0, 42, 0);
		d.flags = TRD_DF_CPL;
		d.aux = 77;
		T_EQ(trd_inject(trd_inj_fifo(b, 0), &d), 0);
		trd_desc_put(&d, self, &v, 8, trd_mr_key(db), PAGE - 4, 0, 0);
		T_EQ(trd_inject(trd_inj_fifo(b, 0), &d), 0);
		trd_desc_fifo(&c, trd_node_coord(b), 0, NULL, 0, 1, 0);
		trd_desc_rget(&d, trd_node_coord(a), 200, &c, 1);
		T_EQ(trd_inject(trd_inj_fifo(b, 0), &d), 0);
		for (int i = 0; i < 50; i++)
			trd_net_poll(net);
	}
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_EQ(st.drop[TRD_DROP_UNKNOWN_CPL], 1);
	T_EQ(st.drop[TRD_DROP_OUT_OF_BOUNDS], 1);
	T_EQ(st.drop[TRD_DROP_UNKNOWN_FIFO], 1);
	for (int i = 0; i < PAGE / 8; i++)
		T_EQ(page[i], 0);

	/* a completion is accepted once: a replayed duplicate is dropped */
	{
		struct trd_msg *m;
		struct trd_coord refl;

		spec.kind = TRD_CPL_FIFO;
		spec.fifo = 0;
		spec.cookie = 9;
		T_EQ(trd_node_reflector(a, &refl), 0);
		T_EQ(refl.x, 1); /* x+ is the first usable link */
		trd_desc_put(&d, trd_node_coord(b), buf, 8, trd_mr_key(mr), 0, 0, 0);
		d.rkey = 0; /* the data itself is refused at b: the completion still comes back */
		T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), 0);
		T_EQ(trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, TIMEOUT_US), 0);
		T_EQ(m->user, 9);
		trd_msg_free(m);
		T_EQ(trd_node_cpl_pending(a), 0);
		/* replay the same completion id by hand */
		trd_desc_fifo(&d, self, 0, NULL, 0, 9, 0);
		d.flags = TRD_DF_CPL;
		d.aux = 1;
		for (uint32_t id = 1; id <= 4; id++) {
			d.aux = id;
			T_EQ(trd_inject(trd_inj_fifo(b, 0), &d), 0);
		}
		for (int i = 0; i < 50; i++)
			trd_net_poll(net);
		T_EQ(trd_rec_fifo_poll(trd_rec_fifo(a, 0), &m, 1), 0);
		T_EQ(trd_node_stats_get(a, &st), 0);
		T_EQ(st.drop[TRD_DROP_UNKNOWN_CPL], 1 + 4);
	}
	trd_net_free(net);
	free(page);
	printf("bad input: refused at the API or dropped and counted\n");
}

/* FIFO completions into a full FIFO: the echo is refused (fifo_full) and its id waits for the
 * reliable sender's next copy, which finds room once the application took its messages. */
static void
test_full(void)
{
	enum { CAP = 8, N_REFL = 3 };
	const struct trd_node_conf ndc = {.rec_fifo_size = CAP};
	struct trd_cpl_spec spec = {.kind = TRD_CPL_FIFO, .mode = TRD_CPL_LOCAL};
	static uint8_t src[64], bmem[PAGE];
	struct trd_node_stats st0, st;
	struct trd_node *a, *b;
	struct trd_msg *m;
	struct trd_net *net;
	struct trd_mr *bmr;
	struct trd_desc d;

	net = line4(&ndc, &a, &b);
	bmr = trd_mr_register(b, bmem, sizeof(bmem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(bmr != NULL, "region");
	/* b fills a's FIFO 0 to the brim: nothing is refused yet */
	for (unsigned int i = 0; i < CAP; i++) {
		trd_desc_fifo(&d, trd_node_coord(a), 0, src, 8, 1000 + i, 0);
		T_EQ(trd_inject(trd_inj_fifo(b, 0), &d), 0);
	}
	for (int i = 0; i < 100; i++)
		trd_net_poll(net);
	T_EQ(trd_node_stats_get(a, &st0), 0);
	T_EQ(st0.drop[TRD_DROP_FIFO_FULL], 0);
	/* puts from a with their completions into that FIFO, b reflecting */
	for (unsigned int i = 0; i < N_REFL; i++) {
		memset(src, (int)(0x40 + i), sizeof(src));
		trd_desc_put(&d, trd_node_coord(b), src, sizeof(src), trd_mr_key(bmr), 64 * i, 0,
			     0);
		spec.cookie = 1 + i;
		T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), 0);
		for (int r = 0; r < 20; r++)
			trd_net_poll(net);
	}
	for (int i = 0; i < 300; i++)
		trd_net_poll(net);
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_ASSERT(st.drop[TRD_DROP_FIFO_FULL] > 0, "no completion found the FIFO full");
	T_EQ(trd_node_cpl_pending(a), N_REFL); /* refused: every id still waits */
	/* room: the plain messages, then every completion, with its cookie, in order */
	for (unsigned int i = 0; i < CAP; i++) {
		T_EQ(trd_rec_fifo_poll(trd_rec_fifo(a, 0), &m, 1), 1);
		T_EQ(m->user, 1000 + i);
		trd_msg_free(m);
	}
	for (unsigned int i = 0; i < N_REFL; i++) {
		uint64_t deadline = trd_time_us() + TIMEOUT_US;
		int got;

		while ((got = trd_rec_fifo_poll(trd_rec_fifo(a, 0), &m, 1)) == 0 &&
		       trd_time_us() < deadline)
			trd_net_poll(net);
		T_ASSERT(got == 1, "completion %u did not come", i);
		T_EQ(m->user, 1 + i);
		T_EQ(m->len, 0);
		trd_msg_free(m);
	}
	T_EQ(trd_node_cpl_pending(a), 0);
	T_EQ(trd_node_stats_get(a, &st), 0);
	T_EQ(st.drop[TRD_DROP_UNKNOWN_CPL], st0.drop[TRD_DROP_UNKNOWN_CPL]);
	for (unsigned int i = 0; i < N_REFL; i++)
		T_EQ(bmem[64 * i], 0x40 + i);
	trd_net_free(net);
	printf("full FIFO: %u completions refused, then every one delivered\n", N_REFL);
}

/* Poll rounds of a lone message once the session is up: node polls one at a time, in the
 * order a, b, a. A put lands at b after (a, b); a local reflection must complete after (a, b,
 * a): the remote get leaves with the data, the reflector answers in the round it arrives. A
 * delivery reflection likewise, its remote get in the put's frame (one bundle). A remote get
 * likewise. */
static void
test_rounds(void)
{
	struct trd_net *net;
	struct trd_node *a, *b;
	struct trd_desc d, c;
	struct trd_cpl_spec spec = {.kind = TRD_CPL_DOORBELL, .mode = TRD_CPL_LOCAL};
	uint64_t *page = aligned_alloc(PAGE, PAGE);
	static uint8_t src[64], bmem[PAGE], amem[PAGE];
	struct trd_mr *db, *bmr, *amr;
	uint16_t actr, bctr;
	int64_t left;

	T_ASSERT(page != NULL, "page");
	net = line4(NULL, &a, &b);
	memset(page, 0, PAGE);
	for (unsigned int i = 0; i < sizeof(bmem); i++)
		bmem[i] = (uint8_t)(i * 7 + 3);
	db = trd_doorbell_register(a, page, PAGE, trd_node_eq(a, 0));
	bmr = trd_mr_register(b, bmem, sizeof(bmem),
			      TRD_ACCESS_REMOTE_WRITE | TRD_ACCESS_REMOTE_READ);
	amr = trd_mr_register(a, amem, sizeof(amem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(db != NULL && bmr != NULL && amr != NULL, "regions");
	T_EQ(trd_counter_alloc(a, &actr), 0);
	T_EQ(trd_counter_alloc(b, &bctr), 0);

	/* a plain put: (a, b) */
	trd_desc_put(&d, trd_node_coord(b), src, sizeof(src), trd_mr_key(bmr), 1024, 0, bctr);
	for (int i = 0; i < 3; i++) {
		T_EQ(trd_counter_set(b, bctr, sizeof(src)), 0);
		T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
		if (i < 2) { /* the first ones set the session up */
			T_EQ(trd_counter_wait(b, bctr, TIMEOUT_US), 0);
			continue;
		}
		trd_node_poll(a);
		trd_node_poll(b);
		T_EQ(trd_counter_read(b, bctr, &left), 0);
		T_EQ(left, 0);
	}

	/* a local reflection into a doorbell: (a, b, a) */
	spec.doorbell = db;
	trd_desc_put(&d, trd_node_coord(b), src, sizeof(src), trd_mr_key(bmr), 2048, 0, 0);
	for (uint64_t i = 1; i <= 3; i++) {
		spec.cookie = i;
		T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), 0);
		if (i < 3) {
			T_EQ(trd_doorbell_wait(db, 0, i, TRD_WAIT_SPIN, TIMEOUT_US), 0);
			continue;
		}
		trd_node_poll(a);
		trd_node_poll(b);
		trd_node_poll(a);
		T_EQ(__atomic_load_n(&page[0], __ATOMIC_ACQUIRE), 3);
	}

	/* a delivery reflection (b reflects): its remote get shares the put's frame, one bundle
	 * (a, b, a); the put lands before the reflection is answered */
	spec.mode = TRD_CPL_DELIVERY;
	trd_desc_put(&d, trd_node_coord(b), src, sizeof(src), trd_mr_key(bmr), 3072, 0, bctr);
	for (uint64_t i = 4; i <= 6; i++) {
		struct trd_node_stats s0, s1;

		spec.cookie = i;
		memset(src, (int)i, sizeof(src));
		T_EQ(trd_counter_set(b, bctr, sizeof(src)), 0);
		T_EQ(trd_node_stats_get(a, &s0), 0);
		T_EQ(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &spec), 0);
		if (i < 6) {
			T_EQ(trd_doorbell_wait(db, 0, i, TRD_WAIT_SPIN, TIMEOUT_US), 0);
			T_EQ(bmem[3072], (uint8_t)i);
			continue;
		}
		trd_node_poll(a);
		T_EQ(trd_node_stats_get(a, &s1), 0);
		T_EQ(s1.stat[TRD_STAT_TX_BUNDLES] - s0.stat[TRD_STAT_TX_BUNDLES], 1);
		T_EQ(s1.stat[TRD_STAT_TX_RGET] - s0.stat[TRD_STAT_TX_RGET], 1);
		T_EQ(s1.stat[TRD_STAT_TX_PUT] - s0.stat[TRD_STAT_TX_PUT], 1);
		trd_node_poll(b);
		trd_node_poll(a);
		T_EQ(__atomic_load_n(&page[0], __ATOMIC_ACQUIRE), 6);
		T_EQ(trd_counter_read(b, bctr, &left), 0);
		T_EQ(left, 0);
		T_EQ(bmem[3072 + 63], 6);
	}
	spec.mode = TRD_CPL_LOCAL;

	/* a remote get of 64 bytes of b into a: (a, b, a) */
	trd_desc_put(&c, trd_node_coord(a), NULL, 64, trd_mr_key(amr), 0, 0, actr);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(bmr);
	c.src = 0;
	trd_desc_rget(&d, trd_node_coord(b), TRD_ENGINE_FIFO, &c, 1);
	for (int i = 0; i < 3; i++) {
		T_EQ(trd_counter_set(a, actr, 64), 0);
		T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
		if (i < 2) {
			T_EQ(trd_counter_wait(a, actr, TIMEOUT_US), 0);
			continue;
		}
		trd_node_poll(a);
		trd_node_poll(b);
		trd_node_poll(a);
		T_EQ(trd_counter_read(a, actr, &left), 0);
		T_EQ(left, 0);
	}
	T_EQ(memcmp(amem, bmem, 64), 0);
	trd_net_free(net);
	free(page);
	printf("rounds: put (a, b), reflection (its get in the put's frame) and remote get "
	       "(a, b, a)\n");
}

int
main(int argc, char **argv)
{
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_net *net;

	if (argc > 1)
		per_node = (unsigned int)atoi(argv[1]);
	test_eal_init(argv[0], NULL);
	test_bad();
	test_full();
	test_rounds();
	test_engine_only_and_capture();
	trd_torus_init(&nc.torus, 2, 2, 2);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net");
	test_bulk(net);
	trd_net_free(net);
	rte_eal_cleanup();
	return 0;
}
