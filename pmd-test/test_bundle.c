/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Coalescing: small puts and memory-FIFO messages queued in one FIFO for one node travel in
 * BUNDLE frames (docs/wire-format.md, "Bundles"), and each message stays exact.
 *
 *  stream:  node 0 of a 2x1x1 torus (engine ring links, reliability on) posts N messages in
 *           bursts, puts and memory-FIFO messages mixed, 0 .. 300 B (the longer ones go
 *           zero-copy, alone), every message with its own bytes; node 1 receives every FIFO
 *           message once, in order, byte-exact, with increasing message ids; every put lands
 *           byte-exact; the reception and injection counters reach zero; bundles were sent
 *           (fewer frames than messages) and received as many as were sent; no drop. Run
 *           with coalesce 32 on a lossless link, on a link that loses, reorders and
 *           duplicates frames (5%, 2%, 1%), with coalesce 1 (no bundle at all), and with
 *           a reception FIFO of 8 drained 3 messages at a time: bundles refused for want of
 *           room come again whole, and no message is delivered twice. With an injection
 *           FIFO of 64 slots, every message inline and one packet per service round, lossless
 *           and lossy: the ring, read in place, wraps and its staged bursts end inside
 *           messages' data. Again with both
 *           nodes split in two shares, bursts alternating between FIFOs 0 and 1 (lanes 0
 *           and 1), lossless and lossy: in order per FIFO, and both lanes carried bundles.
 *  forged:  bundles made by hand, handed to one node: each message checked alone (a bad key,
 *           an unknown FIFO, a put out of bounds are dropped and counted, the others of the
 *           frame land); a malformed structure (an entry past the end, trailing bytes, one
 *           entry, too many, fields that must be 0, a type that is neither put nor FIFO, a
 *           put whose end wraps) drops the frame whole: not one byte of it lands; an
 *           unsequenced frame whose FIFO messages find too little room delivers what fits and
 *           counts the rest; a wrong payload CRC drops the frame whole, the right one
 *           delivers it; a segmented frame is delivered byte-exact; every mbuf is back
 *           in the pool at the end.
 *  blocks:  40 memory-FIFO messages of one bundle to two FIFOs hold one reference to the frame
 *           (three message blocks), not an mbuf each; freed in any order, one by one or in
 *           bulk, the frame goes back with the last, every message exact until then; with no
 *           block left the same bundle takes an mbuf per message, exact.
 *  lanes:   a put handed to share 0 of a node of two shares: taken on lane 0, dropped and
 *           counted as bad_lane on lane 1 (another share's); three shares are refused. On a
 *           net_ring pair of two shares, the queues of the two lanes' links (polled by two
 *           lcores) keep their driver state on cache lines of their own (no false sharing).
 *  relay:   node (0,0,0) of a 2x2x1 torus sends to (1,1,0) through an intermediate node:
 *           FIFO messages, puts, immediate puts, puts from a region, TRD_DF_COPY and
 *           TRD_DF_ORDERED ones, in runs on two injection counters (each reaches exactly 0);
 *           payload CRC off and on, lossless and lossy; every message exact and in order,
 *           bundles forwarded and all received.
 *  gets:    node 0 posts remote gets to node 1 in bursts, 1 to 3 carried descriptors each
 *           (puts of 1 .. 200 B from node 1's read region, one in four a memory-FIFO message
 *           instead): every put and message byte-exact, each message once, the counter at 0;
 *           lossless, the gets share frames (fewer frames than gets) and so do the replies
 *           (fewer frames than carried descriptors), no drop; again lossy (5%, 2%, 1%).
 *
 * Arguments: [N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <toroid/testing.h>
#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "test_common.h"

#define TIMEOUT_US 20000000ULL
#define MAXLEN     300
#define SLOT       512

static uint8_t
pat(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + (seq >> 8));
}

static uint64_t
drops(const struct trd_node *n)
{
	struct trd_node_stats st;
	uint64_t s = 0;

	T_EQ(trd_node_stats_get(n, &st), 0);
	for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
		s += st.drop[c];
	return s;
}

static uint64_t
stat_of(const struct trd_node *n, unsigned int id)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(n, &st), 0);
	return st.stat[id];
}

static uint64_t
drop_of(const struct trd_node *n, unsigned int cause)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(n, &st), 0);
	return st.drop[cause];
}

/* ---- stream ---- */

/* With @p shares 2 both nodes are split in two lanes and bursts alternate between injection
 * FIFOs 0 (lane 0) and 1 (lane 1): the order kept is per FIFO, and both lanes must carry
 * bundles. */
static void
stream_conf(uint32_t nmsg, const struct trd_node_conf *conf, const char *impair,
	    unsigned int take_max, uint32_t burst_max)
{
	struct trd_node_conf tmpl = *conf;
	const unsigned int coalesce = conf->coalesce, rec_size = conf->rec_fifo_size,
			   shares = RTE_MAX(conf->shares, 1u);
	struct trd_net_conf nc = {.node = &tmpl};
	struct trd_net *net;
	struct trd_node *a, *b;
	struct trd_mr *mr;
	uint8_t *src, *dst, *kind, *lane;
	uint32_t *len;
	uint64_t put_bytes = 0, all_bytes = 0, fifo_n = 0, fifo_got = 0, t_end;
	uint32_t posted = 0, last_id[2] = {0}, burst = 0;
	uint16_t inj, rec;
	uint64_t rs = 12345, next_fifo[2] = {0};
	int64_t v;
	struct trd_link_stats ls;

	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	a = trd_net_node(net, 0);
	b = trd_net_node(net, 1);
	if (impair != NULL) {
		struct trd_impair_conf ic;

		T_EQ(trd_impair_parse(impair, &ic), 0);
		T_EQ(trd_node_impair(a, &ic), 0);
		T_EQ(trd_node_impair(b, &ic), 0);
	}
	src = malloc((size_t)nmsg * MAXLEN);
	dst = calloc(nmsg, SLOT);
	kind = malloc(nmsg);
	lane = malloc(nmsg);
	len = malloc(nmsg * sizeof(*len));
	T_ASSERT(src != NULL && dst != NULL && kind != NULL && lane != NULL && len != NULL,
		 "memory");
	mr = trd_mr_register(b, dst, (size_t)nmsg * SLOT, TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr != NULL, "region");
	for (uint32_t i = 0; i < nmsg; i++) {
		kind[i] = (uint8_t)(test_rand(&rs) % 2); /* 1: FIFO message */
		/* mostly small (bundled), some empty, some zero-copy (alone) */
		len[i] = (uint32_t)(test_rand(&rs) % 16 == 0 ? MAXLEN - test_rand(&rs) % 40
							     : test_rand(&rs) % 97);
		if (test_rand(&rs) % 50 == 0)
			len[i] = 0;
		for (uint32_t k = 0; k < len[i]; k++)
			src[(size_t)i * MAXLEN + k] = pat(i, k);
		if (kind[i])
			fifo_n++;
		else
			put_bytes += len[i];
		all_bytes += len[i];
	}
	T_EQ(trd_counter_alloc(a, &inj), 0);
	T_EQ(trd_counter_set(a, inj, (int64_t)all_bytes), 0);
	T_EQ(trd_counter_alloc(b, &rec), 0);
	T_EQ(trd_counter_set(b, rec, (int64_t)put_bytes), 0);

	t_end = trd_time_us() + TIMEOUT_US;
	while (posted < nmsg || fifo_got < fifo_n) {
		struct trd_msg *m[32];
		int k;

		if (posted < nmsg) {
			struct trd_desc d[32];
			uint32_t nb =
				RTE_MIN(nmsg - posted, 1 + (uint32_t)(test_rand(&rs) % burst_max));

			for (uint32_t j = 0; j < nb; j++) {
				uint32_t i = posted + j;
				const uint8_t *s = &src[(size_t)i * MAXLEN];

				lane[i] = (uint8_t)(burst % shares);
				if (kind[i])
					trd_desc_fifo(&d[j], trd_node_coord(b), 0, s, len[i], i,
						      inj);
				else
					trd_desc_put(&d[j], trd_node_coord(b), s, len[i],
						     trd_mr_key(mr), (uint64_t)i * SLOT, inj, rec);
			}
			if (trd_inject_bulk(trd_inj_fifo(a, burst % shares), d, nb) == 0) {
				posted += nb;
				burst++;
			}
		}
		trd_net_poll(net);
		k = trd_rec_fifo_poll(trd_rec_fifo(b, 0), m, take_max);
		T_ASSERT(k >= 0, "poll");
		for (int j = 0; j < k; j++) {
			uint64_t i = m[j]->user;
			uint64_t *nx;

			T_ASSERT(i < posted, "message %" PRIu64 " never posted", i);
			nx = &next_fifo[lane[i]];
			while (*nx < nmsg && (!kind[*nx] || lane[*nx] != lane[i]))
				(*nx)++;
			T_EQ(i, *nx); /* in order per FIFO, none twice, none missing */
			(*nx)++;
			T_EQ(m[j]->len, len[i]);
			T_EQ(m[j]->status, 0);
			T_ASSERT(last_id[lane[i]] == 0 || m[j]->msg_id > last_id[lane[i]],
				 "message ids increase");
			last_id[lane[i]] = m[j]->msg_id;
			for (uint32_t q = 0; q < len[i]; q++)
				T_ASSERT(((uint8_t *)m[j]->data)[q] == pat(i, q),
					 "msg %" PRIu64 " byte %u", i, q);
			trd_msg_free(m[j]);
			fifo_got++;
		}
		T_ASSERT(trd_time_us() < t_end,
			 "stream timed out: %u posted, %" PRIu64 " of %" PRIu64 " messages", posted,
			 fifo_got, fifo_n);
	}
	T_EQ(trd_counter_wait(b, rec, TIMEOUT_US), 0);
	T_EQ(trd_counter_wait(a, inj, TIMEOUT_US), 0);
	T_EQ(trd_counter_read(a, inj, &v), 0);
	T_EQ(v, 0);
	for (uint32_t i = 0; i < nmsg; i++)
		for (uint32_t q = 0; !kind[i] && q < len[i]; q++)
			T_ASSERT(dst[(size_t)i * SLOT + q] == pat(i, q), "put %u byte %u", i, q);
	T_EQ(trd_link_stats_get(trd_node_link(a, 0), &ls), 0);
	if (shares > 1) {
		struct trd_node_stats s0, s1;

		T_EQ(trd_node_share_stats_get(a, 0, &s0), 0);
		T_EQ(trd_node_share_stats_get(a, 1, &s1), 0);
		T_ASSERT(coalesce == 1 || (s0.stat[TRD_STAT_TX_BUNDLES] > 0 &&
					   s1.stat[TRD_STAT_TX_BUNDLES] > 0),
			 "bundles by lane: %" PRIu64 ", %" PRIu64, s0.stat[TRD_STAT_TX_BUNDLES],
			 s1.stat[TRD_STAT_TX_BUNDLES]);
		T_ASSERT(s0.stat[TRD_STAT_DESCS] > 0 && s1.stat[TRD_STAT_DESCS] > 0 &&
				 s0.stat[TRD_STAT_DESCS] + s1.stat[TRD_STAT_DESCS] == nmsg,
			 "messages by lane: %" PRIu64 ", %" PRIu64, s0.stat[TRD_STAT_DESCS],
			 s1.stat[TRD_STAT_DESCS]);
		printf("stream, 2 shares per node: lane 0 %" PRIu64 " messages, lane 1 %" PRIu64
		       "\n",
		       s0.stat[TRD_STAT_DESCS], s1.stat[TRD_STAT_DESCS]);
	}
	printf("stream coalesce=%u %s, FIFO of %u, injection FIFO of %u: %u messages (%" PRIu64
	       " FIFO) in %" PRIu64 " frames, %" PRIu64 " bundles; drops at b %" PRIu64 "\n",
	       coalesce, impair ? impair : "lossless", rec_size,
	       tmpl.inj_fifo_size ? tmpl.inj_fifo_size : 1024u, nmsg, fifo_n, ls.tx_pkts,
	       stat_of(a, TRD_STAT_TX_BUNDLES), drops(b));
	T_EQ(stat_of(a, TRD_STAT_TX_FIFO), fifo_n);
	if (rec_size == 1024)
		T_EQ(stat_of(b, TRD_STAT_RX_FIFO), fifo_n); /* refused ones count again */
	T_EQ(stat_of(b, TRD_STAT_MSGS_DELIVERED), fifo_n);
	T_EQ(stat_of(b, TRD_STAT_RX_PUT), nmsg - fifo_n);
	T_EQ(stat_of(a, TRD_STAT_DESCS), nmsg);
	T_EQ(stat_of(b, TRD_STAT_RX_BUNDLES), stat_of(a, TRD_STAT_TX_BUNDLES));
	if (coalesce > 1) {
		T_ASSERT(stat_of(a, TRD_STAT_TX_BUNDLES) > 0, "no bundle sent");
		if (impair == NULL)
			T_ASSERT(ls.tx_pkts < nmsg, "%" PRIu64 " frames for %u messages",
				 ls.tx_pkts, nmsg);
	} else {
		T_EQ(stat_of(a, TRD_STAT_TX_BUNDLES), 0);
	}
	if (impair == NULL && rec_size == 1024) {
		T_EQ(drops(b), 0);
		T_EQ(stat_of(a, TRD_STAT_RETRANS), 0);
	}
	trd_net_free(net);
	free(src);
	free(dst);
	free(kind);
	free(lane);
	free(len);
}

static void
stream_sh(uint32_t nmsg, unsigned int coalesce, const char *impair, unsigned int rec_size,
	  unsigned int take_max, unsigned int shares)
{
	struct trd_node_conf c = {
		.coalesce = coalesce, .rec_fifo_size = rec_size, .shares = shares};

	stream_conf(nmsg, &c, impair, take_max, 32);
}

static void
stream(uint32_t nmsg, unsigned int coalesce, const char *impair, unsigned int rec_size,
       unsigned int take_max)
{
	stream_sh(nmsg, coalesce, impair, rec_size, take_max, 1);
}

/* ---- forged ---- */

struct ent {
	uint8_t type, fifo;
	uint16_t counter, len;
	uint64_t key, offset;
	uint8_t fill;
};

static struct trd_node *fn;
static uint8_t fmem[4096];
static uint64_t fkey;

/* A bundle from (0,0,0) to (1,0,0) with @p n entries (@p aux: the count it claims) and
 * @p extra bytes after them. @return its length. */
static uint32_t
bundle(uint8_t *f, const struct ent *e, unsigned int n, uint32_t aux, uint32_t extra, uint64_t hkey)
{
	uint32_t pay = 0;
	uint8_t *p = f + TRD_FRAME_HLEN;

	memset(f, 0, TRD_FRAME_HLEN);
	memset(f, 0x02, 12);
	f[12] = TRD_ETHERTYPE >> 8;
	f[13] = TRD_ETHERTYPE & 0xff;
	for (unsigned int i = 0; i < n; i++) {
		trd_wire_entry_encode(p + pay, e[i].type, e[i].fifo, e[i].counter, e[i].len,
				      e[i].key, e[i].offset);
		memset(p + pay + TRD_ENTRY_LEN, e[i].fill + (int)i, e[i].len);
		pay += TRD_ENTRY_LEN + e[i].len;
	}
	memset(p + pay, 0xee, extra);
	pay += extra;
	trd_wire_encode(f + TRD_ETH_HLEN, &(const struct trd_pkt){
						  .version = TRD_WIRE_VERSION,
						  .type = TRD_PKT_BUNDLE,
						  .flags = TRD_HF_ALL,
						  .src = {0, 0, 0},
						  .hops = 2,
						  .dst = {1, 0, 0},
						  .key = hkey,
						  .msg_len = pay,
						  .pay_len = (uint16_t)pay,
						  .msg_id = 100,
						  .aux = aux,
					  });
	return TRD_FRAME_HLEN + pay;
}

/* Hand a bundle over; @return the drops of @p cause it added (every other cause: none). */
static void
give(const uint8_t *f, uint32_t len, uint32_t seg, unsigned int cause, uint64_t want)
{
	uint64_t before = drop_of(fn, cause), all = drops(fn);

	T_EQ(trd_node_rx_frame(fn, f, len, seg), 0);
	T_EQ(drop_of(fn, cause) - before, want);
	T_EQ(drops(fn) - all, want);
}

static int
take(unsigned int fifo, struct trd_msg **m, unsigned int max)
{
	int k = trd_rec_fifo_poll(trd_rec_fifo(fn, fifo), m, max);

	T_ASSERT(k >= 0, "poll");
	return k;
}

static void
check_msg(struct trd_msg *m, uint64_t user, uint32_t len, uint8_t fill, uint32_t id)
{
	T_EQ(m->user, user);
	T_EQ(m->len, len);
	T_EQ(m->msg_id, id);
	T_EQ(m->src.x, 0);
	for (uint32_t i = 0; i < len; i++)
		T_EQ(((uint8_t *)m->data)[i], fill);
	trd_msg_free(m);
}

static void
forged(void)
{
	static uint8_t f[2048];
	struct rte_mempool *mp;
	struct trd_node_conf c = {.rec_fifo_size = 4, .n_rec_fifos = 2};
	struct trd_msg *m[8];
	struct trd_mr *mr;
	uint32_t len;
	unsigned int base;
	uint8_t zero[16] = {0};

	mp = rte_pktmbuf_pool_create("bundle_pool", 1023, 0, (uint16_t)trd_pool_priv_size(),
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	T_ASSERT(mp != NULL, "pool");
	c.pool = mp;
	/* frames made by hand, outside any session: a reliable node would drop them all as
	 * unsequenced (docs/reliability.md); an unreliable one trusts its segment */
	c.unreliable = true;
	trd_torus_init(&c.torus, 2, 1, 1);
	c.coord = (struct trd_coord){1, 0, 0};
	fn = trd_node_create(&c);
	T_ASSERT(fn != NULL, "node");
	mr = trd_mr_register(fn, fmem, sizeof(fmem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr != NULL, "region");
	fkey = trd_mr_key(mr);

	/* each message alone: a good put, a good FIFO message, a put to no region, a FIFO
	 * message to no FIFO, a put out of bounds; the good ones land */
	{
		struct ent e[] = {
			{TRD_PKT_PUT, 0, 0, 8, fkey, 0, 0x10},
			{TRD_PKT_FIFO, 1, 0, 5, 77, 0, 0x20},
			{TRD_PKT_PUT, 0, 0, 8, fkey + 1000, 64, 0x30},
			{TRD_PKT_FIFO, 9, 0, 5, 78, 0, 0x40},
			{TRD_PKT_PUT, 0, 0, 8, fkey, sizeof(fmem) - 4, 0x50},
			{TRD_PKT_FIFO, 1, 0, 0, 79, 0, 0},
		};
		uint64_t bk = drop_of(fn, TRD_DROP_BAD_KEY),
			 uf = drop_of(fn, TRD_DROP_UNKNOWN_FIFO);
		uint64_t ob = drop_of(fn, TRD_DROP_OUT_OF_BOUNDS), all = drops(fn);

		len = bundle(f, e, 6, 6, 0, 0);
		T_EQ(trd_node_rx_frame(fn, f, len, 0), 0);
		T_EQ(drop_of(fn, TRD_DROP_BAD_KEY) - bk, 1);
		T_EQ(drop_of(fn, TRD_DROP_UNKNOWN_FIFO) - uf, 1);
		T_EQ(drop_of(fn, TRD_DROP_OUT_OF_BOUNDS) - ob, 1);
		T_EQ(drops(fn) - all, 3);
		for (int i = 0; i < 8; i++)
			T_EQ(fmem[i], 0x10);
		T_EQ(fmem[64], 0);
		T_EQ(take(1, m, 8), 2);
		check_msg(m[0], 77, 5, 0x21, 101);
		check_msg(m[1], 79, 0, 0, 105);
		T_EQ(stat_of(fn, TRD_STAT_RX_BUNDLES), 1);
	}

	/* the puts of one frame share what they can (a region found for a key, a counter checked,
	 * counted down once per run), never a check: each entry's key, access, counter and bounds
	 * are its own; every counter ends exact, a FIFO message in the middle included */
	{
		static uint8_t ro[64];
		struct trd_mr *rmr = trd_mr_register(fn, ro, sizeof(ro), TRD_ACCESS_REMOTE_READ);
		uint16_t ca, cb;
		int64_t v;

		T_ASSERT(rmr != NULL, "read-only region");
		T_EQ(trd_counter_alloc(fn, &ca), 0);
		T_EQ(trd_counter_alloc(fn, &cb), 0);
		T_EQ(trd_counter_set(fn, ca, 100), 0);
		T_EQ(trd_counter_set(fn, cb, 100), 0);
		struct ent e[] = {
			{TRD_PKT_PUT, 0, ca, 8, fkey, 3000, 0x40},
			{TRD_PKT_PUT, 0, ca, 8, fkey + 1000, 3000, 0x40},
			{TRD_PKT_PUT, 0, cb, 8, fkey, 3008, 0x40},
			{TRD_PKT_PUT, 0, ca, 8, trd_mr_key(rmr), 0, 0x40},
			{TRD_PKT_PUT, 0, 77, 8, fkey, 3000, 0x40},
			{TRD_PKT_PUT, 0, ca, 8, fkey, sizeof(fmem) - 4, 0x40},
			{TRD_PKT_FIFO, 1, 0, 4, 90, 0, 0x40},
			{TRD_PKT_PUT, 0, ca, 8, fkey, 3016, 0x40},
			{TRD_PKT_PUT, 0, cb, 8, fkey, 3024, 0x40},
		};
		uint64_t bk = drop_of(fn, TRD_DROP_BAD_KEY), na = drop_of(fn, TRD_DROP_NO_ACCESS);
		uint64_t uc = drop_of(fn, TRD_DROP_UNKNOWN_COUNTER);
		uint64_t ob = drop_of(fn, TRD_DROP_OUT_OF_BOUNDS), all = drops(fn);
		uint64_t puts = stat_of(fn, TRD_STAT_RX_PUT), pb = stat_of(fn, TRD_STAT_PUT_BYTES);

		len = bundle(f, e, RTE_DIM(e), RTE_DIM(e), 0, 0);
		T_EQ(trd_node_rx_frame(fn, f, len, 0), 0);
		T_EQ(drop_of(fn, TRD_DROP_BAD_KEY) - bk, 1);
		T_EQ(drop_of(fn, TRD_DROP_NO_ACCESS) - na, 1);
		T_EQ(drop_of(fn, TRD_DROP_UNKNOWN_COUNTER) - uc, 1);
		T_EQ(drop_of(fn, TRD_DROP_OUT_OF_BOUNDS) - ob, 1);
		T_EQ(drops(fn) - all, 4);
		T_EQ(stat_of(fn, TRD_STAT_RX_PUT) - puts, 4);
		T_EQ(stat_of(fn, TRD_STAT_PUT_BYTES) - pb, 32);
		T_EQ(trd_counter_read(fn, ca, &v), 0);
		T_EQ(v, 84);
		T_EQ(trd_counter_read(fn, cb, &v), 0);
		T_EQ(v, 84);
		for (int i = 0; i < 8; i++) {
			T_EQ(fmem[3000 + i], 0x40);
			T_EQ(fmem[3008 + i], 0x42);
			T_EQ(fmem[3016 + i], 0x47);
			T_EQ(fmem[3024 + i], 0x48);
		}
		for (unsigned int i = 0; i < sizeof(ro); i++)
			T_EQ(ro[i], 0);
		T_EQ(take(1, m, 8), 1);
		check_msg(m[0], 90, 4, 0x46, 106);
		memset(fmem + 3000, 0, 32);
		T_EQ(trd_mr_deregister(rmr), 0);
	}

	/* a malformed structure drops the whole frame: the good put first in it never lands */
	{
		struct ent good = {TRD_PKT_PUT, 0, 0, 16, fkey, 256, 0x61};
		struct ent e[2] = {good, {TRD_PKT_FIFO, 0, 0, 4, 1, 0, 0x70}};
		uint8_t *p2 = f + TRD_FRAME_HLEN + TRD_ENTRY_LEN + 16; /* second entry's header */

		/* the second entry claims more bytes than the frame has */
		len = bundle(f, e, 2, 2, 0, 0);
		p2[4] = 0, p2[5] = 5;
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		/* bytes after the last entry */
		len = bundle(f, e, 2, 2, 3, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		/* fewer entries claimed than there are */
		len = bundle(f, e, 2, 1, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		/* more than a bundle may carry */
		len = bundle(f, e, 2, TRD_BUNDLE_MAX + 1, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		/* a header naming a region */
		len = bundle(f, e, 2, 2, 0, fkey);
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		/* reserved bits */
		len = bundle(f, e, 2, 2, 0, 0);
		p2[7] = 1;
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		/* a FIFO entry with an offset; a put entry with a FIFO */
		e[1].offset = 8;
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		e[1] = (struct ent){TRD_PKT_PUT, 1, 0, 4, fkey, 0, 0x70};
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		/* neither put nor FIFO */
		e[1] = (struct ent){TRD_PKT_ATOMIC, 0, 0, 24, fkey, 0, 0x70};
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_TYPE, 1);
		/* a put whose end wraps */
		e[1] = (struct ent){TRD_PKT_PUT, 0, 0, 8, fkey, UINT64_MAX - 3, 0x70};
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		/* remote get entries: no descriptor, a part of one, more than 15, a counter, a
		 * key or an offset */
		e[1] = (struct ent){TRD_PKT_RGET, TRD_ENGINE_FIFO, 0, 0, 0, 0, 0x70};
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		e[1].len = 100;
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		e[1].len = 16 * TRD_WIRE_DESC_LEN;
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_LENGTH, 1);
		e[1].len = TRD_WIRE_DESC_LEN;
		e[1].counter = 1;
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		e[1].counter = 0;
		e[1].key = 5;
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		e[1].key = 0;
		e[1].offset = 64;
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_BAD_FIELD, 1);
		T_ASSERT(memcmp(fmem + 256, zero, 16) == 0, "a malformed bundle wrote");
		T_EQ(take(0, m, 8), 0);
		T_EQ(stat_of(fn, TRD_STAT_RX_RGET), 0);
		/* the same bundle, well formed, lands */
		e[1] = (struct ent){TRD_PKT_FIFO, 0, 0, 4, 1, 0, 0x70};
		len = bundle(f, e, 2, 2, 0, 0);
		give(f, len, 0, TRD_DROP_NONE, 0);
		T_EQ(fmem[256], 0x61);
		T_EQ(take(0, m, 8), 1);
		check_msg(m[0], 1, 4, 0x71, 101);
		memset(fmem + 256, 0, 16);
	}

	/* remote gets in a bundle, each checked alone: a carried descriptor that is not one
	 * (bad_desc), one that sends elsewhere than to the requester (bad_dst), an unknown
	 * injection FIFO are dropped and counted; the good get runs, the put lands */
	{
		struct ent e[] = {
			{TRD_PKT_RGET, TRD_ENGINE_FIFO, 0, TRD_WIRE_DESC_LEN, 0, 0, 0x70},
			{TRD_PKT_RGET, TRD_ENGINE_FIFO, 0, TRD_WIRE_DESC_LEN, 0, 0, 0},
			{TRD_PKT_RGET, 9, 0, TRD_WIRE_DESC_LEN, 0, 0, 0},
			{TRD_PKT_RGET, TRD_ENGINE_FIFO, 0, 2 * TRD_WIRE_DESC_LEN, 0, 0, 0},
			{TRD_PKT_PUT, 0, 0, 16, fkey, 768, 0x40},
		};
		uint8_t *p = f + TRD_FRAME_HLEN;
		struct trd_desc d;
		uint64_t bd = drop_of(fn, TRD_DROP_BAD_DESC), bt = drop_of(fn, TRD_DROP_BAD_DST);
		uint64_t uf = drop_of(fn, TRD_DROP_UNKNOWN_FIFO), all = drops(fn);
		uint64_t nr = drop_of(fn, TRD_DROP_NO_ROUTE);

		len = bundle(f, e, 5, 5, 0, 0);
		/* an immediate put back to the requester (0,0,0); the same to (1,0,0) */
		trd_desc_put(&d, (struct trd_coord){0, 0, 0}, NULL, 8, fkey, 0, 0, 0);
		d.flags = TRD_DF_IMM;
		d.user = 42;
		memcpy(p + 2 * TRD_ENTRY_LEN + TRD_WIRE_DESC_LEN, &d, sizeof(d));
		memcpy(p + 3 * TRD_ENTRY_LEN + 2 * TRD_WIRE_DESC_LEN, &d, sizeof(d));
		memcpy(p + 4 * TRD_ENTRY_LEN + 3 * TRD_WIRE_DESC_LEN, &d, sizeof(d));
		d.dst = (struct trd_coord){1, 0, 0};
		memcpy(p + 4 * TRD_ENTRY_LEN + 4 * TRD_WIRE_DESC_LEN, &d, sizeof(d));
		T_EQ(trd_node_rx_frame(fn, f, len, 0), 0);
		T_EQ(drop_of(fn, TRD_DROP_BAD_DESC) - bd, 1);
		T_EQ(drop_of(fn, TRD_DROP_BAD_DST) - bt, 1);
		T_EQ(drop_of(fn, TRD_DROP_UNKNOWN_FIFO) - uf, 1);
		/* the good get ran: its put found no link to the requester (a node alone) */
		T_EQ(drop_of(fn, TRD_DROP_NO_ROUTE) - nr, 1);
		T_EQ(drops(fn) - all, 4);
		T_EQ(stat_of(fn, TRD_STAT_RX_RGET), 1);
		T_EQ(fmem[768], 0x44);
		memset(fmem + 768, 0, 16);
	}

	/* an unsequenced bundle whose FIFO messages find too little room: what fits is
	 * delivered, the rest dropped and counted one by one (it is never sent again); the
	 * sequenced case, all or nothing, is the stream with a small FIFO below */
	{
		struct ent e[] = {
			{TRD_PKT_FIFO, 0, 0, 10, 5, 0, 0x80},
			{TRD_PKT_FIFO, 0, 0, 10, 6, 0, 0x90},
			{TRD_PKT_FIFO, 0, 0, 10, 7, 0, 0xa0},
			{TRD_PKT_PUT, 0, 0, 16, fkey, 512, 0xb0},
		};

		len = bundle(f, e, 4, 4, 0, 0);
		give(f, len, 0, TRD_DROP_NONE, 0); /* 3 of the FIFO's 4 places */
		T_EQ(fmem[512], 0xb3);
		memset(fmem + 512, 0, 16);
		give(f, len, 0, TRD_DROP_FIFO_FULL, 2);
		T_EQ(fmem[512], 0xb3);
		T_EQ(take(0, m, 8), 4);
		for (int i = 0; i < 4; i++)
			check_msg(m[i], 5 + (uint64_t)(i % 3), 10, (uint8_t)(0x80 + 0x11 * (i % 3)),
				  100 + (uint32_t)(i % 3));
	}

	/* with a payload CRC: a wrong one drops the frame whole before any message is looked
	 * at (bad_crc), the right one delivers every message, contiguous or segmented */
	{
		struct ent e[] = {
			{TRD_PKT_PUT, 0, 0, 8, fkey, 2048, 0x11},
			{TRD_PKT_FIFO, 1, 0, 20, 21, 0, 0x22},
		};
		struct trd_pkt p;
		uint32_t crc;

		len = bundle(f, e, 2, 2, 0, 0);
		T_EQ(trd_wire_parse(f, len, &p), 0);
		p.flags |= TRD_HF_CRC;
		trd_wire_encode(f + TRD_ETH_HLEN, &p);
		crc = trd_wire_crc(f + TRD_FRAME_HLEN, p.pay_len, 0xffffffff) ^ 1;
		for (int k = 0; k < 4; k++)
			f[len + (uint32_t)k] = (uint8_t)(crc >> (24 - 8 * k));
		give(f, len + 4, 0, TRD_DROP_BAD_CRC, 1);
		give(f, len + 4, 40, TRD_DROP_BAD_CRC, 1);
		T_EQ(fmem[2048], 0);
		T_EQ(take(1, m, 8), 0);
		f[len + 3] ^= 1;
		give(f, len + 4, 0, TRD_DROP_NONE, 0);
		give(f, len + 4, 40, TRD_DROP_NONE, 0);
		for (int i = 0; i < 8; i++)
			T_EQ(fmem[2048 + i], 0x11);
		T_EQ(take(1, m, 8), 2);
		check_msg(m[0], 21, 20, 0x23, 101);
		check_msg(m[1], 21, 20, 0x23, 101);
		memset(fmem + 2048, 0, 8);
	}

	/* segmented as a scattering NIC delivers it: the messages are copied out, exact */
	{
		struct ent e[] = {
			{TRD_PKT_FIFO, 1, 0, 100, 11, 0, 0x01},
			{TRD_PKT_PUT, 0, 0, 64, fkey, 1024, 0x02},
			{TRD_PKT_FIFO, 1, 0, 33, 12, 0, 0x03},
		};

		len = bundle(f, e, 3, 3, 0, 0);
		give(f, len, 30, TRD_DROP_NONE, 0);
		for (int i = 0; i < 64; i++)
			T_EQ(fmem[1024 + i], 0x03);
		T_EQ(take(1, m, 8), 2);
		check_msg(m[0], 11, 100, 0x01, 100);
		check_msg(m[1], 12, 33, 0x05, 102);
	}

	T_EQ(trd_node_reset(fn), 0);
	T_EQ(rte_mempool_avail_count(mp), mp->size);
	base = (unsigned int)stat_of(fn, TRD_STAT_RX_BUNDLES);
	printf("forged: %u bundles taken, every mbuf back in the pool\n", base);
	trd_node_free(fn);
	rte_mempool_free(mp);
}

/* ---- blocks ---- */

/*
 * A bundle's memory-FIFO messages are read in place: 40 messages of 8 B (three blocks of at
 * most 16), to two FIFOs, around two puts, hold one reference to the frame between them, not
 * one mbuf each; freed in any order, one by one and in bulk, the frame stays until the last
 * goes, every message byte-exact until then. With no block left the same bundle is delivered
 * as before (an mbuf per message), exact, and everything comes back.
 */
static void
blocks(void)
{
	enum { NM = 40, NE = NM + 2 };
	static uint8_t f[2048];
	struct trd_node_conf c = {.rec_fifo_size = 64, .n_rec_fifos = 2, .unreliable = true};
	struct rte_mempool *mp, *bp;
	struct trd_msg *m0[NM], *m1[NM], *all[NM];
	struct ent e[NE];
	void *held[4096];
	unsigned int nheld = 0, k0, k1, bfree;
	uint32_t len;
	struct trd_mr *mr;

	mp = rte_pktmbuf_pool_create("block_pool", 255, 0, (uint16_t)trd_pool_priv_size(),
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	T_ASSERT(mp != NULL, "pool");
	c.pool = mp;
	trd_torus_init(&c.torus, 2, 1, 1);
	c.coord = (struct trd_coord){1, 0, 0};
	fn = trd_node_create(&c);
	T_ASSERT(fn != NULL, "node");
	mr = trd_mr_register(fn, fmem, sizeof(fmem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr != NULL, "region");
	fkey = trd_mr_key(mr);
	bp = rte_mempool_lookup("trd_msgblk");
	T_ASSERT(bp != NULL, "the engine's block pool");
	bfree = rte_mempool_avail_count(bp);

	/* entry i: FIFO i % 2, user word 1000 + i, bytes 0x40 + i; a put at 10 and at 30 */
	for (unsigned int i = 0, j = 0; i < NE; i++) {
		if (i == 10 || i == 30)
			e[i] = (struct ent){TRD_PKT_PUT, 0, 0, 8, fkey, 8 * i, (uint8_t)(0x10 - i)};
		else
			e[i] = (struct ent){TRD_PKT_FIFO, (uint8_t)(j % 2), 0, 8, 1000 + i, 0,
					    0x40};
		j += e[i].type == TRD_PKT_FIFO;
	}
	len = bundle(f, e, NE, NE, 0, 0);

	for (int round = 0; round < 2; round++) {
		give(f, len, 0, TRD_DROP_NONE, 0);
		T_EQ(fmem[80], 0x10);
		T_EQ(fmem[240], 0x10);
		k0 = (unsigned int)take(0, m0, NM);
		k1 = (unsigned int)take(1, m1, NM);
		T_EQ(k0, NM / 2);
		T_EQ(k1, NM / 2);
		if (round == 0) {
			/* one reference for the frame, three blocks: no mbuf per message */
			T_EQ(rte_mempool_avail_count(mp), mp->size - 1);
			T_EQ(rte_mempool_avail_count(bp), bfree - 3);
		} else {
			/* no block left: an mbuf for each message, attached to the frame */
			T_EQ(rte_mempool_avail_count(mp), mp->size - 1 - NM);
		}
		/* in arrival order, each byte-exact, the message ids those of the entries */
		for (unsigned int i = 0, j0 = 0, j1 = 0; i < NE; i++) {
			struct trd_msg *m;

			if (e[i].type != TRD_PKT_FIFO)
				continue;
			m = e[i].fifo == 0 ? m0[j0++] : m1[j1++];
			T_EQ(m->user, 1000 + i);
			T_EQ(m->len, 8);
			T_EQ(m->fifo, e[i].fifo);
			T_EQ(m->msg_id, 100 + i);
			for (int b = 0; b < 8; b++)
				T_EQ(((uint8_t *)m->data)[b], 0x40 + i);
		}
		/* FIFO 1's in bulk, then FIFO 0's but its first one by one from the last;
		 * the frame stays while one message is held, and that one is intact */
		trd_msg_free_bulk(m1, k1);
		for (unsigned int i = k0 - 1; i >= 1; i--)
			trd_msg_free(m0[i]);
		T_ASSERT(rte_mempool_avail_count(mp) < mp->size,
			 "the frame went with a message held");
		T_EQ(m0[0]->user, 1000);
		for (int b = 0; b < 8; b++)
			T_EQ(((uint8_t *)m0[0]->data)[b], 0x40);
		trd_msg_free_bulk(m0, 1);
		T_EQ(rte_mempool_avail_count(mp), mp->size);
		memset(fmem, 0, 256);

		if (round == 0) {
			/* take every block there is; the engine must do without */
			while (nheld < RTE_DIM(held) && rte_mempool_get(bp, &held[nheld]) == 0)
				nheld++;
			T_EQ(rte_mempool_avail_count(bp), 0);
		}
	}
	rte_mempool_put_bulk(bp, held, nheld);
	T_EQ(rte_mempool_avail_count(bp), bfree);

	/* a bulk release of messages from several blocks and FIFOs, interleaved, NULLs
	 * skipped */
	give(f, len, 0, TRD_DROP_NONE, 0);
	k0 = (unsigned int)take(0, m0, NM);
	k1 = (unsigned int)take(1, m1, NM);
	for (unsigned int i = 0; i < k0; i++) {
		all[2 * i] = m0[i];
		all[2 * i + 1] = m1[i];
	}
	all[7] = NULL;
	trd_msg_free_bulk(all, k0 + k1);
	T_ASSERT(rte_mempool_avail_count(mp) < mp->size, "the frame went with a message held");
	trd_msg_free(m1[3]);
	T_EQ(rte_mempool_avail_count(mp), mp->size);
	T_EQ(rte_mempool_avail_count(bp), bfree);
	printf("blocks: %u messages in 3 blocks of one frame, released together\n", NM);
	trd_node_free(fn);
	rte_mempool_free(mp);
}

/* ---- relay ---- */

/*
 * Bundles through an intermediate node: node (0,0,0) of a 2x2x1 torus sends to (1,1,0), one
 * hop away from neither, so every frame is forwarded by (1,0,0) or (0,1,0). The messages mix
 * memory-FIFO messages, puts from a raw address, immediate puts (TRD_DF_IMM), puts from a
 * registered region (TRD_DF_SRC_MR), TRD_DF_COPY and TRD_DF_ORDERED ones, in runs on two
 * injection counters (a bundle never mixes them: each reaches exactly zero). With a payload
 * CRC on or off, lossless or lossy.
 */
static void
relay(uint32_t nmsg, const char *impair, bool crc)
{
	struct trd_node_conf tmpl = {.payload_crc = crc};
	struct trd_net_conf nc = {.node = &tmpl};
	struct trd_net *net;
	struct trd_node *a, *c;
	struct trd_mr *mr, *smr;
	uint8_t *src, *dst, *kind;
	uint32_t *len;
	uint8_t *which;
	uint64_t put_bytes = 0, ib[2] = {0, 0}, fifo_n = 0, fifo_got = 0, next_fifo = 0, t_end;
	uint64_t rs = 777, fwd = 0;
	uint32_t posted = 0;
	uint16_t inj[2], rec;
	uint8_t w = 0;

	trd_torus_init(&nc.torus, 2, 2, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	a = trd_net_node(net, 0);
	c = trd_net_node(net, 3);
	T_EQ(trd_node_coord(c).x, 1);
	T_EQ(trd_node_coord(c).y, 1);
	if (impair != NULL) {
		struct trd_impair_conf ic;

		T_EQ(trd_impair_parse(impair, &ic), 0);
		for (unsigned int k = 0; k < 4; k++)
			T_EQ(trd_node_impair(trd_net_node(net, k), &ic), 0);
	}
	src = malloc((size_t)nmsg * MAXLEN);
	dst = calloc(nmsg, SLOT);
	kind = malloc(nmsg);
	which = malloc(nmsg);
	len = malloc(nmsg * sizeof(*len));
	T_ASSERT(src != NULL && dst != NULL && kind != NULL && len != NULL && which != NULL,
		 "memory");
	mr = trd_mr_register(c, dst, (size_t)nmsg * SLOT, TRD_ACCESS_REMOTE_WRITE);
	smr = trd_mr_register(a, src, (size_t)nmsg * MAXLEN, TRD_ACCESS_REMOTE_READ);
	T_ASSERT(mr != NULL && smr != NULL, "region");
	for (uint32_t i = 0; i < nmsg; i++) {
		/* 0 FIFO, 1 put, 2 immediate put, 3 put from a region, 4 put with COPY,
		 * 5 ordered FIFO message */
		kind[i] = (uint8_t)(test_rand(&rs) % 6);
		len[i] = (uint32_t)(test_rand(&rs) % 80);
		if (kind[i] == 2)
			len[i] %= 9;
		if (test_rand(&rs) % 8 == 0)
			w ^= 1; /* runs on one counter, then the other */
		which[i] = w;
		for (uint32_t k = 0; k < len[i]; k++)
			src[(size_t)i * MAXLEN + k] = pat(i, k);
		if (kind[i] == 0 || kind[i] == 5)
			fifo_n++;
		else
			put_bytes += len[i];
		ib[w] += len[i];
	}
	for (int k = 0; k < 2; k++) {
		T_EQ(trd_counter_alloc(a, &inj[k]), 0);
		T_EQ(trd_counter_set(a, inj[k], (int64_t)ib[k]), 0);
	}
	T_EQ(trd_counter_alloc(c, &rec), 0);
	T_EQ(trd_counter_set(c, rec, (int64_t)put_bytes), 0);

	t_end = trd_time_us() + TIMEOUT_US;
	while (posted < nmsg || fifo_got < fifo_n) {
		struct trd_msg *m[32];
		int k;

		if (posted < nmsg) {
			struct trd_desc d[32];
			uint32_t nb = RTE_MIN(nmsg - posted, 1 + (uint32_t)(test_rand(&rs) % 32));

			for (uint32_t j = 0; j < nb; j++) {
				uint32_t i = posted + j;
				const uint8_t *s = &src[(size_t)i * MAXLEN];
				uint16_t ic = inj[which[i]];

				if (kind[i] == 0 || kind[i] == 5)
					trd_desc_fifo(&d[j], trd_node_coord(c), 0, s, len[i], i,
						      ic);
				else
					trd_desc_put(&d[j], trd_node_coord(c), s, len[i],
						     trd_mr_key(mr), (uint64_t)i * SLOT, ic, rec);
				if (kind[i] == 2) {
					d[j].flags |= TRD_DF_IMM;
					d[j].src = 0;
					d[j].user = 0;
					memcpy(&d[j].user, s, len[i]);
				} else if (kind[i] == 3) {
					d[j].flags |= TRD_DF_SRC_MR;
					d[j].src_key = trd_mr_key(smr);
					d[j].src = (uint64_t)i * MAXLEN;
				} else if (kind[i] == 4) {
					d[j].flags |= TRD_DF_COPY;
				} else if (kind[i] == 5) {
					d[j].flags |= TRD_DF_ORDERED;
				}
			}
			k = trd_inject_bulk(trd_inj_fifo(a, 0), d, nb);
			T_ASSERT(k == 0 || k == -ENOBUFS, "inject: %d", k);
			if (k == 0)
				posted += nb;
		}
		trd_net_poll(net);
		k = trd_rec_fifo_poll(trd_rec_fifo(c, 0), m, 32);
		T_ASSERT(k >= 0, "poll");
		for (int j = 0; j < k; j++) {
			uint64_t i = m[j]->user;

			while (next_fifo < nmsg && kind[next_fifo] != 0 && kind[next_fifo] != 5)
				next_fifo++;
			T_EQ(i, next_fifo); /* in order, none twice, none missing */
			next_fifo++;
			T_EQ(m[j]->len, len[i]);
			for (uint32_t q = 0; q < len[i]; q++)
				T_ASSERT(((uint8_t *)m[j]->data)[q] == pat(i, q),
					 "msg %" PRIu64 " byte %u", i, q);
			trd_msg_free(m[j]);
			fifo_got++;
		}
		T_ASSERT(trd_time_us() < t_end,
			 "relay timed out: %u posted, %" PRIu64 " of %" PRIu64 " messages", posted,
			 fifo_got, fifo_n);
	}
	T_EQ(trd_counter_wait(c, rec, TIMEOUT_US), 0);
	for (int k = 0; k < 2; k++) {
		int64_t v;

		T_EQ(trd_counter_wait(a, inj[k], TIMEOUT_US), 0);
		T_EQ(trd_counter_read(a, inj[k], &v), 0);
		T_EQ(v, 0);
	}
	for (uint32_t i = 0; i < nmsg; i++)
		for (uint32_t q = 0; kind[i] != 0 && kind[i] != 5 && q < len[i]; q++)
			T_ASSERT(dst[(size_t)i * SLOT + q] == pat(i, q), "put %u byte %u", i, q);
	fwd = stat_of(trd_net_node(net, 1), TRD_STAT_FWD_PKTS) +
	      stat_of(trd_net_node(net, 2), TRD_STAT_FWD_PKTS);
	printf("relay %s crc=%d: %u messages, %" PRIu64 " bundles, %" PRIu64
	       " frames forwarded, drops at c %" PRIu64 "\n",
	       impair ? impair : "lossless", crc, nmsg, stat_of(a, TRD_STAT_TX_BUNDLES), fwd,
	       drops(c));
	T_ASSERT(stat_of(a, TRD_STAT_TX_BUNDLES) > 0, "no bundle sent");
	T_ASSERT(fwd > 0, "nothing forwarded");
	T_EQ(stat_of(c, TRD_STAT_RX_BUNDLES), stat_of(a, TRD_STAT_TX_BUNDLES));
	T_EQ(stat_of(c, TRD_STAT_MSGS_DELIVERED), fifo_n);
	T_EQ(stat_of(c, TRD_STAT_RX_PUT), nmsg - fifo_n);
	T_EQ(stat_of(a, TRD_STAT_DESCS), nmsg);
	if (impair == NULL)
		T_EQ(drops(c), 0);
	trd_mr_deregister(smr);
	trd_net_free(net);
	free(src);
	free(dst);
	free(kind);
	free(which);
	free(len);
}

/* ---- gets ---- */

#define GET_MAXLEN 200
#define GET_RD     8192

static uint8_t
rd_pat(uint32_t k)
{
	return (uint8_t)(k * 13 + (k >> 8) + 1);
}

/* Node a posts @p ngets remote gets to b in bursts, 1 to 3 carried descriptors each: puts of
 * 1 .. 200 bytes from b's read region into a's region, one in four a memory-FIFO message to
 * a's reception FIFO 0 instead. Every put lands byte-exact, every FIFO message arrives once,
 * byte-exact, a's reception counter reaches zero; lossless, the gets share frames (fewer
 * frames than gets from a) and so do the puts and messages they cause at b (fewer frames
 * than carried descriptors), with no drop. */
static void
gets(uint32_t ngets, const char *impair)
{
	struct trd_node_conf tmpl = {.coalesce = 32};
	struct trd_net_conf nc = {.node = &tmpl};
	const uint32_t nslot = ngets * 3;
	struct trd_net *net;
	struct trd_node *a, *b;
	struct trd_mr *mr_dst, *mr_rd;
	uint8_t *dst, *rd, *kind, *seen;
	uint32_t *len, *off;
	uint64_t put_bytes = 0, fifo_n = 0, fifo_got = 0, carried = 0, t_end, rs = 777;
	uint32_t posted = 0;
	uint16_t rec;
	uint8_t *nc_of;
	struct trd_link_stats la, lb;

	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	a = trd_net_node(net, 0);
	b = trd_net_node(net, 1);
	if (impair != NULL) {
		struct trd_impair_conf ic;

		T_EQ(trd_impair_parse(impair, &ic), 0);
		T_EQ(trd_node_impair(a, &ic), 0);
		T_EQ(trd_node_impair(b, &ic), 0);
	}
	dst = calloc(nslot, SLOT);
	rd = malloc(GET_RD);
	kind = calloc(nslot, 1);
	seen = calloc(nslot, 1);
	len = calloc(nslot, sizeof(*len));
	off = calloc(nslot, sizeof(*off));
	nc_of = malloc(ngets);
	T_ASSERT(dst != NULL && rd != NULL && kind != NULL && seen != NULL && len != NULL &&
			 off != NULL && nc_of != NULL,
		 "memory");
	for (uint32_t k = 0; k < GET_RD; k++)
		rd[k] = rd_pat(k);
	mr_dst = trd_mr_register(a, dst, (size_t)nslot * SLOT, TRD_ACCESS_REMOTE_WRITE);
	mr_rd = trd_mr_register(b, rd, GET_RD, TRD_ACCESS_REMOTE_READ);
	T_ASSERT(mr_dst != NULL && mr_rd != NULL, "regions");
	for (uint32_t i = 0; i < ngets; i++) {
		nc_of[i] = (uint8_t)(1 + test_rand(&rs) % 3);
		for (uint32_t j = 0; j < nc_of[i]; j++) {
			uint32_t s = i * 3 + j;

			kind[s] = test_rand(&rs) % 4 == 0; /* 1: FIFO message */
			len[s] = 1 + (uint32_t)(test_rand(&rs) % GET_MAXLEN);
			off[s] = (uint32_t)(test_rand(&rs) % (GET_RD - GET_MAXLEN));
			if (kind[s])
				fifo_n++;
			else
				put_bytes += len[s];
			carried++;
		}
	}
	T_EQ(trd_counter_alloc(a, &rec), 0);
	T_EQ(trd_counter_set(a, rec, (int64_t)put_bytes), 0);

	t_end = trd_time_us() + TIMEOUT_US;
	while (posted < ngets || fifo_got < fifo_n) {
		struct trd_msg *m[32];
		int k;

		if (posted < ngets) {
			struct trd_desc d[32], c[32][3];
			uint32_t nb = RTE_MIN(ngets - posted, 1 + (uint32_t)(test_rand(&rs) % 32));

			for (uint32_t q = 0; q < nb; q++) {
				uint32_t i = posted + q;

				for (uint32_t j = 0; j < nc_of[i]; j++) {
					uint32_t s = i * 3 + j;

					if (kind[s])
						trd_desc_fifo(&c[q][j], trd_node_coord(a), 0, NULL,
							      len[s], s, 0);
					else
						trd_desc_put(&c[q][j], trd_node_coord(a), NULL,
							     len[s], trd_mr_key(mr_dst),
							     (uint64_t)s * SLOT, 0, rec);
					c[q][j].flags = TRD_DF_SRC_MR;
					c[q][j].src_key = trd_mr_key(mr_rd);
					c[q][j].src = off[s];
				}
				trd_desc_rget(&d[q], trd_node_coord(b), TRD_ENGINE_FIFO, c[q],
					      nc_of[i]);
			}
			if (trd_inject_bulk(trd_inj_fifo(a, 0), d, nb) == 0)
				posted += nb;
		}
		trd_net_poll(net);
		k = trd_rec_fifo_poll(trd_rec_fifo(a, 0), m, 32);
		T_ASSERT(k >= 0, "poll");
		for (int j = 0; j < k; j++) {
			uint64_t s = m[j]->user;

			T_ASSERT(s < nslot && kind[s] && !seen[s], "FIFO message %" PRIu64, s);
			seen[s] = 1;
			T_EQ(m[j]->len, len[s]);
			T_EQ(m[j]->status, 0);
			for (uint32_t q = 0; q < len[s]; q++)
				T_ASSERT(((uint8_t *)m[j]->data)[q] == rd_pat(off[s] + q),
					 "msg %" PRIu64 " byte %u", s, q);
			trd_msg_free(m[j]);
			fifo_got++;
		}
		T_ASSERT(trd_time_us() < t_end,
			 "gets timed out: %u posted, %" PRIu64 " of %" PRIu64 " messages", posted,
			 fifo_got, fifo_n);
	}
	T_EQ(trd_counter_wait(a, rec, TIMEOUT_US), 0);
	for (uint32_t s = 0; s < nslot; s++)
		for (uint32_t q = 0; !kind[s] && q < len[s]; q++)
			T_ASSERT(dst[(size_t)s * SLOT + q] == rd_pat(off[s] + q), "put %u byte %u",
				 s, q);
	T_EQ(trd_link_stats_get(trd_node_link(a, 0), &la), 0);
	T_EQ(trd_link_stats_get(trd_node_link(b, 0), &lb), 0);
	printf("gets %s: %u gets in %" PRIu64 " frames (%" PRIu64 " bundles), %" PRIu64
	       " replies (%" PRIu64 " FIFO) in %" PRIu64 " frames (%" PRIu64
	       " bundles); drops a %" PRIu64 " b %" PRIu64 "\n",
	       impair ? impair : "lossless", ngets, la.tx_pkts, stat_of(a, TRD_STAT_TX_BUNDLES),
	       carried, fifo_n, lb.tx_pkts, stat_of(b, TRD_STAT_TX_BUNDLES), drops(a), drops(b));
	T_EQ(stat_of(a, TRD_STAT_TX_RGET), ngets);
	T_EQ(stat_of(a, TRD_STAT_RX_PUT), carried - fifo_n);
	T_EQ(stat_of(a, TRD_STAT_MSGS_DELIVERED), fifo_n);
	T_EQ(stat_of(b, TRD_STAT_TX_PUT) + stat_of(b, TRD_STAT_TX_FIFO), carried);
	T_EQ(stat_of(b, TRD_STAT_RX_BUNDLES), stat_of(a, TRD_STAT_TX_BUNDLES));
	T_EQ(stat_of(a, TRD_STAT_RX_BUNDLES), stat_of(b, TRD_STAT_TX_BUNDLES));
	if (impair == NULL) {
		T_EQ(stat_of(b, TRD_STAT_RX_RGET), ngets);
		T_ASSERT(la.tx_pkts < ngets, "%" PRIu64 " frames for %u gets", la.tx_pkts, ngets);
		T_ASSERT(lb.tx_pkts < carried, "%" PRIu64 " frames for %" PRIu64 " replies",
			 lb.tx_pkts, carried);
		T_EQ(drops(a), 0);
		T_EQ(drops(b), 0);
	}
	trd_net_free(net);
	free(dst);
	free(rd);
	free(kind);
	free(seen);
	free(len);
	free(off);
	free(nc_of);
}

/* ---- lanes ---- */

/* A put handed to share 0 of a node split in two: taken on lane 0, dropped as bad_lane on
 * lane 1 (another share's: it came on share 0's queue), counted on share 0. */
static void
lanes(void)
{
	static uint8_t f[256], mem[64];
	struct trd_node_conf c = {.unreliable = true, .shares = 2};
	struct trd_node_stats s0;
	struct trd_node *n;
	struct trd_mr *mr;

	trd_torus_init(&c.torus, 2, 1, 1);
	c.coord = (struct trd_coord){1, 0, 0};
	n = trd_node_create(&c);
	T_ASSERT(n != NULL, "node of two shares");
	T_EQ(trd_node_shares(n), 2);
	c.shares = 3;
	T_ASSERT(trd_node_create(&c) == NULL && rte_errno == ENOTSUP, "three shares refused");
	mr = trd_mr_register(n, mem, sizeof(mem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr != NULL, "region");
	for (unsigned int lane = 0; lane < 2; lane++) {
		uint64_t before = drop_of(n, TRD_DROP_BAD_LANE);

		memset(f, 0, sizeof(f));
		memset(f, 0x02, 12);
		f[12] = TRD_ETHERTYPE >> 8;
		f[13] = TRD_ETHERTYPE & 0xff;
		memset(f + TRD_FRAME_HLEN, 0x40 + (int)lane, 8);
		trd_wire_encode(f + TRD_ETH_HLEN,
				&(const struct trd_pkt){
					.version = TRD_WIRE_VERSION,
					.type = TRD_PKT_PUT,
					.flags = (uint16_t)(TRD_HF_ALL | (lane ? TRD_HF_LANE : 0)),
					.src = {0, 0, 0},
					.hops = 2,
					.dst = {1, 0, 0},
					.key = trd_mr_key(mr),
					.offset = 8 * lane,
					.msg_len = 8,
					.pay_len = 8,
					.msg_id = 1 + lane,
				});
		T_EQ(trd_node_rx_frame(n, f, TRD_FRAME_HLEN + 8, 0), 0);
		T_EQ(drop_of(n, TRD_DROP_BAD_LANE) - before, lane);
		T_EQ(mem[8 * lane], lane ? 0 : 0x40); /* lane 1's bytes never land */
	}
	T_EQ(trd_node_share_stats_get(n, 0, &s0), 0);
	T_EQ(s0.drop[TRD_DROP_BAD_LANE], 1);
	T_EQ(s0.stat[TRD_STAT_RX_PUT], 1);
	trd_node_free(n);
	printf("lanes: lane 0 taken, lane 1 on share 0 dropped as bad_lane; 3 shares refused\n");
}

/* The cache lines of [p, p + len) */
static bool
lines_meet(uintptr_t p, uintptr_t q, size_t len)
{
	return p / RTE_CACHE_LINE_SIZE <= (q + len - 1) / RTE_CACHE_LINE_SIZE &&
	       q / RTE_CACHE_LINE_SIZE <= (p + len - 1) / RTE_CACHE_LINE_SIZE;
}

/* A net_ring pair of two shares: each lane's link on a queue of its own, whose driver state
 * (net_ring's per-queue ring pointer and packet counts, 24 bytes written on every burst, even
 * an empty one) shares no cache line with the other lane's: two lcores poll them. */
static void
lane_queues(void)
{
	struct trd_node_conf tmpl = {.shares = 2};
	struct trd_net_conf nc = {.links = TRD_NET_ETHDEV_RING, .node = &tmpl};
	struct trd_net *net;

	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net of two shares: %s", rte_strerror(rte_errno));
	for (unsigned int i = 0; i < 2; i++) {
		struct trd_node *n = trd_net_node(net, i);
		struct trd_link *l0 = trd_node_share_link(n, 0, 0),
				*l1 = trd_node_share_link(n, 1, 0);
		int port = trd_link_port(l0), q0 = trd_link_queue_id(l0),
		    q1 = trd_link_queue_id(l1);

		T_ASSERT(port >= 0 && trd_link_port(l1) == port, "both lanes on one port");
		T_ASSERT(q0 >= 0 && q1 >= 0 && q0 != q1, "queues %d and %d", q0, q1);
		T_ASSERT(trd_node_share_link(n, 2, 0) == NULL, "no third share");
		T_ASSERT(!lines_meet((uintptr_t)rte_eth_fp_ops[port].rxq.data[q0],
				     (uintptr_t)rte_eth_fp_ops[port].rxq.data[q1], 24),
			 "node %u: RX queues %d and %d share a cache line", i, q0, q1);
		T_ASSERT(!lines_meet((uintptr_t)rte_eth_fp_ops[port].txq.data[q0],
				     (uintptr_t)rte_eth_fp_ops[port].txq.data[q1], 24),
			 "node %u: TX queues %d and %d share a cache line", i, q0, q1);
	}
	trd_net_free(net);
	printf("lanes: a net_ring pair of two shares, each lane's queue state on lines of its "
	       "own\n");
}

int
main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 20000;

	test_eal_init(argv[0], NULL);
	lanes();
	lane_queues();
	forged();
	blocks();
	stream(n, 32, NULL, 1024, 32);
	stream(n / 4, 32, "loss=5%,reorder=2%,dup=1%,seed=3", 1024, 32);
	stream(n / 4, 1, NULL, 1024, 32);
	/* bundles refused for want of room in a FIFO of 8 drained 3 at a time: sent again
	 * whole, never delivered in part (a part delivered twice breaks the order check) */
	stream(n / 4, 32, NULL, 8, 3);
	stream(n / 4, 32, "loss=5%,reorder=5%,dup=2%,seed=9", 8, 3);
	/* the engine reads descriptors where they lie in the injection FIFO's ring (issue 27):
	 * in a FIFO of 64 slots, every message inline (up to 6 slots), bursts of up to 10, one
	 * packet per service round, the ring wraps every few bursts and a burst of staged slots
	 * often ends inside a message's data */
	{
		struct trd_node_conf c = {.coalesce = 32,
					  .rec_fifo_size = 1024,
					  .inj_fifo_size = 64,
					  .inline_max = 960,
					  .burst = 1};

		stream_conf(n / 4, &c, NULL, 32, 10);
		stream_conf(n / 4, &c, "loss=5%,reorder=2%,dup=1%,seed=11", 32, 10);
	}
	/* two lanes per node: order per FIFO, both lanes bundling (issue 27) */
	stream_sh(n / 4, 32, NULL, 1024, 32, 2);
	stream_sh(n / 4, 32, "loss=5%,reorder=2%,dup=1%,seed=3", 1024, 32, 2);
	relay(n / 4, NULL, false);
	relay(n / 4, NULL, true);
	relay(n / 4, "loss=5%,reorder=2%,dup=1%,seed=5", true);
	gets(n / 4, NULL);
	gets(n / 8, "loss=5%,reorder=2%,dup=1%,seed=7");
	printf("bundle: ok\n");
	return test_status();
}
