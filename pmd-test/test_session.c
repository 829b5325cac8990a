/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile and dying peers (docs/reliability.md). Two nodes, A (0,0,0) and B (1,0,0), each on
 * a net_ring ethdev port whose far end belongs to this test: the test is the wire. It carries
 * every frame from one node to the other with trd_node_rx_frame(), and can drop, forge or
 * stop carrying them. Argument: the name of one part, to run only that one.
 *  hello:   the first operation to a fresh peer, untracked, goes through although the
 *           frames that start its session are lost;
 *  session: a forged first packet of a new session "from A" (bad key, good key) changes
 *           nothing at B: A's traffic goes on, the forged put writes nothing;
 *  ack:     a forged ack with epoch 0, and one acknowledging what was never sent, change
 *           nothing at A: its tracked put completes with 0;
 *  fence:   a fence reports the first failure of the operations it covers;
 *  owed:    B acknowledges a tracked put, its verdict is lost, then B dies: the operation
 *           fails with -EHOSTUNREACH within the documented time (dead_ms 100 and 1000);
 *  bundle:  a bundle held at B (the one before it lost) when A's session restarts: its
 *           puts' reception counter is marked failed, as a held put's is;
 *  bundle_part: the same bundle, delivered in part (its FIFO full) before it is held: only
 *           the counter of its messages not delivered is marked failed;
 *  unsequenced: a put (also one asking for a verdict), a memory-FIFO message, an atomic and
 *           a remote get "from A" outside any session are dropped (unsequenced) at B;
 *  forge:   4096 forged DONEs and 4096 forged atomic replies ("old value 0"), one per
 *           completion id, complete neither a pending 64 KiB put nor a compare-and-swap on a
 *           held lock; the real verdicts do. Run again at unreliable nodes, where frames
 *           outside a session are taken: a verdict from the wrong node or naming another
 *           message completes nothing (unknown_completion);
 *  wedge:   one 71-byte frame, a put with ACKREQ and aux 0, makes no DONE the peer's parser
 *           would refuse: the pair goes on;
 *  late_done: the verdict of a put failed by its peer's (false) death, arriving after its
 *           completion id was reused, does not complete the newer put;
 *  counter: B dies while a long zero-copy put to it is on its way: its injection counter is
 *           marked failed (trd_counter_wait() returns -EHOSTUNREACH), and once set again,
 *           nothing of the failed put touches it;
 *  timers:  (issue 27, item 3) with a 2 s ack delay the reliability timers run every 250 ms
 *           (poll.c), not on every poll: a frame B receives owes an ack only in 2 s, and none
 *           goes; the same frame again (a duplicate: A missed the ack) makes B ack in the
 *           very poll that takes it, not at the timers' next turn;
 *  ack_due: (issue 27, item 3) the timers sleep until the earliest deadline they know (up
 *           to a quarter of rto_us): a frame B receives brings them forward to its ack
 *           delay, and its ack goes alone in time;
 *  proof:   (issue 25, item 10) forged puts "from A" with A's real epoch and the very
 *           sequence numbers B expects next, without the session's token or with a wrong
 *           one, are dropped (bad_proof) and held by nobody: A's real put with that number
 *           lands after them; a forged ack "from B" of A's real epoch covering A's lost
 *           frame, without B's proof, moves nothing: A sends the frame again and its put
 *           completes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <toroid/msg.h>
#include <toroid/testing.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define RF  3 /* outcomes of tracked operations */
#define MEM (4u << 20)
#define SK0 0x1111222233334444ULL
#define SK1 0x5555666677778888ULL

static struct trd_node *A, *B;
static struct trd_link *farA, *farB; /* the test's ends of the nodes' cables */
static uint8_t *memb, *srca;
static struct trd_mr *mrb, *mra;
static struct trd_mr *dbmr; /* a doorbell page of A's (test_owed) */
static uint64_t *dbpage;
static bool b_alive = true;
static bool drop_done; /* do not carry B's DONE frames */
static uint64_t done_dropped;
static unsigned int drop_from_a; /* lose this many of A's next frames */
static unsigned int drop_bundle; /* lose this many of A's next bundle frames */
/* while set, lose the retransmissions of the last bundle frame drop_bundle lost (its epoch and
 * seq): a test that needs it lost stays right however long a round takes */
static bool lose_again;
static uint16_t lost_epoch;
static uint32_t lost_seq;
/* B's frames of this type are kept back (up to HELD_MAX), and copies of a kept frame (its
 * retransmissions: the same type and offset) are lost */
static uint8_t frame_type(const uint8_t *f, uint32_t len);
#define HELD_MAX 4
static uint8_t hold_type;
static uint8_t held[HELD_MAX][256];
static uint32_t held_len[HELD_MAX];
static unsigned int n_held;
/* the session and sequence number of A's last sequenced frame to B (carried or not) */
static uint16_t a_epoch;
static uint32_t a_seq;

/* Is this frame from B one to keep back, or a copy of one kept? Keeps it if it is. */
static bool
held_back(const uint8_t *f, uint32_t len)
{
	const unsigned int o = TRD_ETH_HLEN + 24; /* the header's offset field */

	if (len < TRD_FRAME_HLEN)
		return false;
	for (unsigned int i = 0; i < n_held; i++)
		if (f[TRD_ETH_HLEN + 1] == held[i][TRD_ETH_HLEN + 1] &&
		    memcmp(f + o, held[i] + o, 8) == 0)
			return true;
	if (hold_type == 0 || frame_type(f, len) != hold_type || n_held == HELD_MAX ||
	    len > sizeof(held[0]))
		return false;
	memcpy(held[n_held], f, len);
	held_len[n_held++] = len;
	return true;
}

static uint8_t
frame_type(const uint8_t *f, uint32_t len)
{
	return len >= TRD_FRAME_HLEN ? f[TRD_ETH_HLEN + 1] : 0;
}

/* Carry what @p far received (from its node) to @p to, unless it must not. */
static void
carry(struct trd_link *far, struct trd_node *to, bool from_b)
{
	struct rte_mbuf *pkts[32];
	uint8_t buf[4096];
	uint16_t nb = rte_eth_rx_burst((uint16_t)trd_link_port(far), 0, pkts, 32);

	for (uint16_t i = 0; i < nb; i++) {
		uint32_t len = RTE_MIN(pkts[i]->pkt_len, (uint32_t)sizeof(buf));
		const uint8_t *f = rte_pktmbuf_read(pkts[i], 0, len, buf);

		if (f != buf)
			memcpy(buf, f, len);
		rte_pktmbuf_free(pkts[i]);
		struct trd_pkt q = {0};

		if (to == B && trd_wire_parse(buf, len, &q) == 0 && q.seq != 0)
			a_epoch = q.epoch, a_seq = q.seq;
		if (from_b && !b_alive)
			continue; /* a dead node sends nothing */
		if (from_b && held_back(buf, len))
			continue;
		if (from_b && drop_done && frame_type(buf, len) == TRD_PKT_DONE) {
			done_dropped++;
			continue;
		}
		if (to == B && drop_bundle != 0 && frame_type(buf, len) == TRD_PKT_BUNDLE) {
			drop_bundle--;
			lost_epoch = q.epoch;
			lost_seq = q.seq;
			continue;
		}
		if (to == B && lose_again && q.seq != 0 && q.seq == lost_seq &&
		    q.epoch == lost_epoch)
			continue;
		if (to == B && (!b_alive || (drop_from_a != 0 && drop_from_a-- != 0)))
			continue;
		T_EQ(trd_node_rx_frame(to, buf, len, 0), 0);
	}
}

/* One round of both nodes and the wire. */
static void
step(void)
{
	trd_node_poll(A);
	if (b_alive)
		trd_node_poll(B);
	carry(farA, B, false);
	carry(farB, A, true);
}

/* Step until A has the outcome of a tracked operation; its status, or 1 on timeout. */
static int
outcome(uint64_t cookie, uint64_t timeout_us)
{
	uint64_t deadline = trd_time_us() + timeout_us;
	struct trd_msg *m;

	while (trd_time_us() < deadline) {
		step();
		if (trd_rec_fifo_poll(trd_rec_fifo(A, RF), &m, 1) == 1) {
			int st = m->status;

			T_EQ(m->user, cookie);
			trd_msg_free(m);
			return st;
		}
	}
	if (getenv("SESSION_DEBUG") != NULL)
		for (int k = 0; k < 2; k++) {
			struct trd_node_stats st;

			trd_node_stats_get(k ? B : A, &st);
			for (unsigned int c = 0; c < TRD_STAT_MAX; c++)
				if (st.stat[c])
					fprintf(stderr, "%c %s %" PRIu64 "\n", 'A' + k,
						trd_stat_name(c), st.stat[c]);
			for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
				if (st.drop[c])
					fprintf(stderr, "%c drop %s %" PRIu64 "\n", 'A' + k,
						trd_drop_name(c), st.drop[c]);
		}
	return 1;
}

/* A tracked put of @p len bytes at @p off from A to B, with the completion id @p id (0: a
 * new one); returns the id. */
static uint32_t
tracked_put_id(uint64_t off, uint32_t len, uint64_t cookie, uint32_t id)
{
	struct trd_desc d;

	if (id == 0)
		T_EQ(trd_track_open(A, RF, cookie, NULL, &id), 0);
	test_fill(srca + off, len, cookie);
	trd_desc_put(&d, trd_node_coord(B), srca + off, len, trd_mr_key(mrb), off, 0, 0);
	d.flags = TRD_DF_ACKREQ;
	d.aux = id;
	T_EQ(trd_inject(trd_inj_fifo(A, 0), &d), 0);
	return id;
}

static void
tracked_put(uint64_t off, uint32_t len, uint64_t cookie)
{
	tracked_put_id(off, len, cookie, 0);
}

/* A frame as another node would send it. */
static uint32_t
forge(uint8_t *f, struct trd_pkt p, const void *pay, uint16_t n)
{
	memset(f, 0, TRD_ETH_HLEN);
	f[0] = 0x02, f[6] = 0x02;
	f[12] = TRD_ETHERTYPE >> 8, f[13] = TRD_ETHERTYPE & 0xff;
	p.version = TRD_WIRE_VERSION;
	p.pay_len = n;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	if (n != 0)
		memcpy(f + TRD_FRAME_HLEN, pay, n);
	return TRD_FRAME_HLEN + n;
}

static uint64_t
drops(struct trd_node *n, unsigned int cause)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(n, &st), 0);
	return cause == TRD_DROP_MAX ? st.stat[TRD_STAT_PEERS_DOWN] : st.drop[cause];
}

static void
test_forged_session(void)
{
	uint8_t f[256], pay[16];
	struct trd_pkt p;
	uint16_t epoch;
	uint32_t isn;
	uint64_t bad0 = drops(B, TRD_DROP_BAD_SESSION);

	tracked_put(0, 1000, 1);
	T_EQ(outcome(1, 2000000), 0);
	/* "from A": the first packet of a session A never opened, with a bad key, then with
	 * B's real key at an offset nobody writes */
	trd_session_start(SK0, SK1, 1, &epoch, &isn);
	memset(&p, 0, sizeof(p));
	p.type = TRD_PKT_PUT;
	p.flags = TRD_HF_ALL;
	p.hops = 3;
	p.dst[0] = 1;
	p.epoch = (uint16_t)(epoch + 7);
	p.seq = 1;
	p.key = 0xbadbad;
	p.offset = MEM - 64;
	p.msg_len = sizeof(pay);
	memset(pay, 0xee, sizeof(pay));
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, pay, sizeof(pay)), 0), 0);
	p.key = trd_mr_key(mrb);
	p.epoch = (uint16_t)(epoch + 8);
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, pay, sizeof(pay)), 0), 0);
	/* A's own traffic goes on */
	tracked_put(1000, 3000, 2);
	T_EQ(outcome(2, 2000000), 0);
	T_EQ(drops(B, TRD_DROP_BAD_SESSION) - bad0, 2);
	T_ASSERT(memcmp(memb + 1000, srca + 1000, 3000) == 0, "A's put after the forgery");
	for (unsigned int i = 0; i < 64; i++)
		T_EQ(memb[MEM - 64 + i], 0);
	printf("session: two forged first packets of a new session changed nothing\n");
}

static void
test_forged_ack(void)
{
	uint8_t f[256];
	struct trd_pkt p;
	uint16_t epoch;
	uint32_t isn;

	trd_session_start(SK0, SK1, 1, &epoch, &isn);
	tracked_put(8192, 2000, 3);
	trd_node_poll(A); /* on its way, not yet acknowledged */
	memset(&p, 0, sizeof(p));
	p.type = TRD_PKT_ACK;
	p.flags = TRD_HF_ALL;
	p.hops = 3;
	p.src[0] = 1;
	/* epoch 0: "I know no session of yours" */
	T_EQ(trd_node_rx_frame(A, f, forge(f, p, NULL, 0), 0), 0);
	/* an ack of A's session for what A never sent */
	p.offset = epoch;
	p.ack = isn + 100000;
	T_EQ(trd_node_rx_frame(A, f, forge(f, p, NULL, 0), 0), 0);
	T_EQ(outcome(3, 2000000), 0);
	T_ASSERT(memcmp(memb + 8192, srca + 8192, 2000) == 0, "the put under forged acks");
	T_EQ(drops(A, TRD_DROP_MAX), 0); /* B was never declared down */
	printf("ack: forged acks (epoch 0, beyond what was sent) changed nothing\n");
}

/* Issue 25, item 10: a blind frame that guesses the epoch and lands in the window must also
 * guess the session's 64-bit token; a forged one is never held in place of the real one. */
static void
test_proof(void)
{
	uint64_t bp = drops(B, TRD_DROP_BAD_PROOF), bpa = drops(A, TRD_DROP_BAD_PROOF);
	uint8_t f[256], pay[64];
	struct trd_pkt p;
	uint32_t next;

	tracked_put(20000, 64, 21);
	T_EQ(outcome(21, 2000000), 0);
	next = a_seq + 1; /* what B expects next from A */
	/* "from A", A's real epoch, the next number and the one after, B's real key, over
	 * the bytes A's next put writes: without a token, with a wrong one */
	memset(&p, 0, sizeof(p));
	p.type = TRD_PKT_PUT;
	p.flags = TRD_HF_ALL;
	p.hops = 3;
	p.dst[0] = 1;
	p.epoch = a_epoch;
	p.key = trd_mr_key(mrb);
	p.offset = 24000;
	p.msg_len = sizeof(pay);
	memset(pay, 0xee, sizeof(pay));
	for (unsigned int k = 0; k < 4; k++) {
		uint32_t len;

		p.seq = next + (k & 1);
		len = forge(f, p, pay, sizeof(pay));
		if (k >= 2) { /* a token, and not the session's */
			uint64_t t = 0x0123456789abcdefULL + k;

			p.flags |= TRD_HF_PROOF;
			len = forge(f, p, pay, sizeof(pay));
			for (int b = 56; b >= 0; b -= 8)
				f[len++] = (uint8_t)(t >> b);
			p.flags &= (uint16_t)~TRD_HF_PROOF;
		}
		T_EQ(trd_node_rx_frame(B, f, len, 0), 0);
	}
	T_EQ(drops(B, TRD_DROP_BAD_PROOF) - bp, 4);
	/* A's real put takes that number: it lands, and only it */
	tracked_put(24000, 64, 22);
	T_EQ(outcome(22, 2000000), 0);
	T_EQ(a_seq, next);
	T_ASSERT(memcmp(memb + 24000, srca + 24000, 64) == 0, "the real put after the forgeries");

	/* A's next frame is lost; a forged ack "from B" acknowledging it, with A's real epoch
	 * and no proof, must not make A forget it */
	drop_from_a = 1;
	tracked_put(25000, 64, 23);
	trd_node_poll(A);
	carry(farA, B, false); /* lost */
	T_EQ(drop_from_a, 0);
	memset(&p, 0, sizeof(p));
	p.type = TRD_PKT_ACK;
	p.flags = TRD_HF_ALL;
	p.hops = 3;
	p.src[0] = 1;
	p.offset = a_epoch;
	p.ack = a_seq + 1;
	T_EQ(trd_node_rx_frame(A, f, forge(f, p, NULL, 0), 0), 0);
	T_EQ(drops(A, TRD_DROP_BAD_PROOF) - bpa, 1);
	T_EQ(outcome(23, 2000000), 0);
	T_ASSERT(memcmp(memb + 25000, srca + 25000, 64) == 0, "the put under a forged ack");
	printf("proof: 4 forged frames of A's session (no token, wrong token) dropped, not held; "
	       "a forged ack moved nothing\n");
}

static int fence_status = 1, op_status = 1;

static void
fence_cb(struct trd_context *x, void *cookie, int status)
{
	(void)x;
	*(int *)cookie = status;
}

static void
test_fence(void)
{
	struct trd_client *cl = trd_client_create("session", NULL);
	struct trd_context_conf cc = {
		.node = A, .inj_fifo = 1, .cpl_fifo = 2, .recv_fifo = TRD_NO_FIFO};
	struct trd_context *x;
	struct trd_ep e;
	int ok_status = 1, second = 1;
	uint64_t deadline = trd_time_us() + 2000000;

	T_ASSERT(cl != NULL, "client");
	x = trd_context_create(cl, &cc);
	T_ASSERT(x != NULL, "context");
	T_EQ(trd_endpoint(cl, 1, 0, &e), 0);
	T_EQ(trd_put(x, srca, &e, 0, 0xbadbad, 64, fence_cb, &op_status), 0);
	T_EQ(trd_put(x, srca, &e, 16384, trd_mr_key(mrb), 64, fence_cb, &ok_status), 0);
	T_EQ(trd_fence(x, &e, fence_cb, &fence_status), 0);
	T_EQ(trd_fence(x, NULL, fence_cb, &second), 0);
	while (second == 1 && trd_time_us() < deadline) {
		trd_advance(x, 0);
		step();
	}
	T_EQ(op_status, -ENOKEY);
	T_EQ(ok_status, 0);
	T_EQ(fence_status, -ENOKEY); /* the first failure it covers */
	T_EQ(second, -ENOKEY);       /* so does the fence on all nodes behind it */
	/* an operation that failed before the fence was posted reported it itself */
	fence_status = 1;
	T_EQ(trd_fence(x, &e, fence_cb, &fence_status), 0);
	while (fence_status == 1 && trd_time_us() < deadline) {
		trd_advance(x, 0);
		step();
	}
	T_EQ(fence_status, 0);
	T_EQ(trd_client_destroy(cl), 0);
	printf("fence: reports the first failure it covers (-ENOKEY)\n");
}

/* B acknowledges a tracked put but its verdict is lost; then B dies. */
static void
test_owed(unsigned int dead_ms)
{
	uint64_t t, t0, down0 = drops(A, TRD_DROP_MAX);
	int st;

	drop_done = true;
	tracked_put(32768, 500, 10 + dead_ms);
	/* long enough for A's retransmission to draw a plain ack from B */
	t = trd_time_us() + 50000;
	while (trd_time_us() < t)
		step();
	T_ASSERT(done_dropped != 0, "B's verdict was never sent");
	T_ASSERT(memcmp(memb + 32768, srca + 32768, 500) == 0, "B has the data");
	b_alive = false;
	/* and a put whose reflection completion goes to a doorbell: B never echoes it, so its
	 * id fails with B and is given back (a doorbell cannot say why) */
	{
		struct trd_cpl_spec spec = {.kind = TRD_CPL_DOORBELL,
					    .mode = TRD_CPL_DELIVERY,
					    .doorbell = dbmr,
					    .offset = 8 * (dead_ms % 16)};
		struct trd_desc d;

		trd_desc_put(&d, trd_node_coord(B), srca + 36864, 64, trd_mr_key(mrb), 36864, 0, 0);
		T_EQ(trd_inject_reflect(trd_inj_fifo(A, 0), &d, &spec), 0);
	}
	t0 = trd_time_us();
	st = outcome(10 + dead_ms, (uint64_t)dead_ms * 1000 * 20 + 1000000);
	t = trd_time_us() - t0;
	T_EQ(st, -EHOSTUNREACH);
	T_EQ(trd_node_cpl_pending(A), 0); /* the doorbell's id too */
	T_EQ(drops(A, TRD_DROP_MAX) - down0, 1);
	T_EQ(trd_node_peer_up(A, trd_node_coord(B)), 0);
	/* the bound of docs/reliability.md: 16 dead_ms of protocol time at most (about dead_ms
	 * at a loss-free link; protocol time runs slower than the wall clock on a busy machine) */
	T_ASSERT(t <= (uint64_t)dead_ms * 16000 + 1000000, "failed after %" PRIu64 " us", t);
	printf("owed: an outcome owed by a peer that acknowledged everything and died failed "
	       "with -EHOSTUNREACH after %" PRIu64 " ms (dead_ms %u)\n",
	       t / 1000, dead_ms);
	drop_done = false;
	/* it comes back: it answers the probes, a new session starts, traffic goes on */
	b_alive = true;
	t = trd_time_us() + 2000000;
	while (trd_node_peer_up(A, trd_node_coord(B)) != 1 && trd_time_us() < t)
		step();
	T_EQ(trd_node_peer_up(A, trd_node_coord(B)), 1);
	tracked_put(40000, 3000, 20 + dead_ms);
	T_EQ(outcome(20 + dead_ms, 2000000), 0);
	T_ASSERT(memcmp(memb + 40000, srca + 40000, 3000) == 0, "the put after the return");
}

/* A bundle held at B (the one before it lost) when A's session restarts: the reception
 * counter its puts would have decremented is told, as a held put's would be; a counter of a
 * process's block that one of its puts names (into a region of no process: delivered, it would
 * have been dropped as ctr_denied) is not: a peer cannot fail what it could not count on. */
static void
test_held_bundle(void)
{
	uint64_t t, down0 = drops(A, TRD_DROP_MAX);
	uint16_t rc, blk;
	int64_t v;
	struct trd_desc d[4];
	struct trd_node_stats st;
	uint64_t held0, boff;
	int bfd;

	T_EQ(trd_node_stats_get(B, &st), 0);
	held0 = st.stat[TRD_STAT_REORDERED];
	T_EQ(trd_counter_alloc(B, &rc), 0);
	T_EQ(trd_counter_set(B, rc, 6 * 16), 0);
	T_EQ(trd_counter_block_alloc(B, &blk, &bfd, &boff), 0);
	close(bfd);
	T_EQ(trd_counter_set(B, blk + 1, 1000), 0);
	for (int b = 0; b < 2; b++) {
		for (int i = 0; i < 3 + b; i++) {
			uint64_t off = 200000 + (uint64_t)(b * 3 + i) * 16;

			test_fill(srca + off, 16, off);
			trd_desc_put(&d[i], trd_node_coord(B), srca + off, 16, trd_mr_key(mrb), off,
				     0, i == 3 ? blk + 1 : rc);
		}
		T_EQ(trd_inject_bulk(trd_inj_fifo(A, 0), d, 3 + b), 0);
		drop_bundle = b == 0 ? 1 : 0; /* the first bundle is lost, the second held */
		lose_again = true; /* (and its resends: a slow round may pass the 2 ms rto) */
		step();
	}
	T_EQ(drop_bundle, 0);
	step(); /* B's SACK of the held bundle */
	T_EQ(trd_counter_read(B, rc, &v), 0);
	T_EQ(v, 6 * 16); /* nothing delivered: the second waits for the first */
	lose_again = false;
	T_EQ(trd_node_stats_get(B, &st), 0);
	T_EQ(st.stat[TRD_STAT_REORDERED] - held0, 1);
	/* B falls silent: A declares it down, and starts a new session when it is back */
	b_alive = false;
	t = trd_time_us() + 20000000;
	while (drops(A, TRD_DROP_MAX) == down0 && trd_time_us() < t)
		step();
	T_EQ(drops(A, TRD_DROP_MAX) - down0, 1);
	b_alive = true;
	t = trd_time_us() + 2000000;
	while (trd_node_peer_up(A, trd_node_coord(B)) != 1 && trd_time_us() < t)
		step();
	T_EQ(trd_node_peer_up(A, trd_node_coord(B)), 1);
	tracked_put(300000, 100, 4242);
	T_EQ(outcome(4242, 2000000), 0);
	/* the new session released the held bundle: its counter can no longer reach zero */
	T_EQ(trd_counter_read(B, rc, &v), 0);
	T_ASSERT(v <= TRD_COUNTER_FAILED, "reception counter %" PRId64 " not failed", v);
	T_EQ(trd_counter_read(B, blk + 1, &v), 0);
	T_EQ(v, 1000);
	T_EQ(trd_counter_free(B, rc), 0);
	T_EQ(trd_counter_block_free(B, blk), 0);
	printf("held bundle: a new session released it and failed its reception counter, not "
	       "a process's it named\n");
}

/* A bundle partly delivered (its FIFO full from its third message on), held, when A's session
 * restarts: the counter of its delivered messages stays as they left it, the counter of the
 * others is marked failed. */
static void
test_held_part(void)
{
	uint64_t t, down0 = drops(A, TRD_DROP_MAX), got0;
	uint16_t c0, c1, c2;
	int64_t v;
	struct trd_desc d[32];
	struct trd_node_stats st;
	struct trd_msg *m[32];
	int k;

	/* fill B's FIFO 0: its 1024 places */
	T_EQ(trd_node_stats_get(B, &st), 0);
	got0 = st.stat[TRD_STAT_MSGS_DELIVERED];
	for (int b = 0; b < 32; b++) {
		for (int i = 0; i < 32; i++) {
			trd_desc_fifo(&d[i], trd_node_coord(B), 0, NULL, 0, 1, 0);
			d[i].flags = TRD_DF_IMM;
		}
		t = trd_time_us() + 2000000;
		while (trd_inject_bulk(trd_inj_fifo(A, 0), d, 32) != 0 && trd_time_us() < t)
			step();
	}
	t = trd_time_us() + 5000000;
	do {
		step();
		T_EQ(trd_node_stats_get(B, &st), 0);
	} while (st.stat[TRD_STAT_MSGS_DELIVERED] - got0 < 1024 && trd_time_us() < t);
	T_EQ(st.stat[TRD_STAT_MSGS_DELIVERED] - got0, 1024);
	T_EQ(trd_counter_alloc(B, &c0), 0);
	T_EQ(trd_counter_alloc(B, &c1), 0);
	T_EQ(trd_counter_alloc(B, &c2), 0);
	T_EQ(trd_counter_set(B, c0, 3 * 16), 0);
	T_EQ(trd_counter_set(B, c1, 2 * 16), 0);
	T_EQ(trd_counter_set(B, c2, 8 + 16), 0);
	/* the first bundle (3 puts on c0) is lost once; the second (2 puts on c1, then a FIFO
	 * message and a put on c2) is held behind it */
	for (int i = 0; i < 3; i++) {
		test_fill(srca + 210000 + (uint64_t)i * 16, 16, (uint64_t)i);
		trd_desc_put(&d[i], trd_node_coord(B), srca + 210000 + (uint64_t)i * 16, 16,
			     trd_mr_key(mrb), 210000 + (uint64_t)i * 16, 0, c0);
	}
	T_EQ(trd_inject_bulk(trd_inj_fifo(A, 0), d, 3), 0);
	drop_bundle = 1;
	step();
	T_EQ(drop_bundle, 0);
	for (int i = 0; i < 4; i++) {
		uint16_t c = i < 2 ? c1 : c2;

		test_fill(srca + 220000 + (uint64_t)i * 16, 16, 10 + (uint64_t)i);
		if (i == 2) {
			trd_desc_fifo(&d[i], trd_node_coord(B), 0, NULL, 8, 2, 0);
			d[i].flags = TRD_DF_IMM;
			d[i].rec_ctr = c;
		} else {
			trd_desc_put(&d[i], trd_node_coord(B), srca + 220000 + (uint64_t)i * 16, 16,
				     trd_mr_key(mrb), 220000 + (uint64_t)i * 16, 0, c);
		}
	}
	T_EQ(trd_inject_bulk(trd_inj_fifo(A, 0), d, 4), 0);
	step();
	/* the first comes again: the second is released behind it and taken in part */
	t = trd_time_us() + 5000000;
	do {
		step();
		T_EQ(trd_counter_read(B, c0, &v), 0);
	} while (v != 0 && trd_time_us() < t);
	T_EQ(v, 0);
	b_alive = false; /* before the second comes again */
	T_EQ(trd_counter_read(B, c1, &v), 0);
	T_EQ(v, 0);
	T_EQ(trd_counter_read(B, c2, &v), 0);
	T_EQ(v, 8 + 16);
	t = trd_time_us() + 20000000;
	while (drops(A, TRD_DROP_MAX) == down0 && trd_time_us() < t)
		step();
	T_EQ(drops(A, TRD_DROP_MAX) - down0, 1);
	b_alive = true;
	t = trd_time_us() + 2000000;
	while (trd_node_peer_up(A, trd_node_coord(B)) != 1 && trd_time_us() < t)
		step();
	T_EQ(trd_node_peer_up(A, trd_node_coord(B)), 1);
	tracked_put(310000, 100, 4343);
	T_EQ(outcome(4343, 2000000), 0);
	T_EQ(trd_counter_read(B, c1, &v), 0);
	T_EQ(v, 0); /* its messages were delivered */
	T_EQ(trd_counter_read(B, c2, &v), 0);
	T_ASSERT(v <= TRD_COUNTER_FAILED, "reception counter %" PRId64 " not failed", v);
	while ((k = trd_rec_fifo_poll(trd_rec_fifo(B, 0), m, 32)) > 0)
		for (int i = 0; i < k; i++)
			trd_msg_free(m[i]);
	T_EQ(trd_counter_free(B, c0), 0);
	T_EQ(trd_counter_free(B, c1), 0);
	T_EQ(trd_counter_free(B, c2), 0);
	printf("held part: a bundle held after delivering 2 of its 4 messages: the new session "
	       "failed the counter of the other 2 only\n");
}

static void
test_counter(void)
{
	uint64_t t;
	uint16_t ctr;
	int64_t v;
	struct trd_desc d;

	T_EQ(trd_counter_alloc(A, &ctr), 0);
	T_EQ(trd_counter_set(A, ctr, 3u << 20), 0);
	test_fill(srca, 3u << 20, 77);
	trd_desc_put(&d, trd_node_coord(B), srca, 3u << 20, trd_mr_key(mrb), 0, ctr, 0);
	T_EQ(trd_inject(trd_inj_fifo(A, 0), &d), 0);
	for (int i = 0; i < 20; i++)
		step(); /* part of it left */
	b_alive = false;
	T_EQ(trd_counter_wait(A, ctr, 20000000), -EHOSTUNREACH);
	T_EQ(trd_counter_read(A, ctr, &v), 0);
	T_ASSERT(v <= TRD_COUNTER_FAILED, "counter %" PRId64, v);
	/* set again for another use: nothing of the failed put may touch it */
	T_EQ(trd_counter_set(A, ctr, 0), 0);
	t = trd_time_us() + 300000;
	b_alive = true;
	while (trd_time_us() < t)
		step();
	T_EQ(trd_counter_read(A, ctr, &v), 0);
	T_EQ(v, 0);
	printf("counter: a put cut short by its peer's death left its counter marked failed; "
	       "set again, nothing touched it\n");
}

/* ---- forged verdicts and frames outside the session (issue 25, items 3, 4 and 9) ---- */

static bool open_net; /* this run's nodes are unreliable: they trust their segment */

/* Nothing waits in A's outcome FIFO. */
static void
no_outcome(const char *why)
{
	struct trd_msg *m;

	trd_node_poll(A);
	if (trd_rec_fifo_poll(trd_rec_fifo(A, RF), &m, 1) == 1) {
		fprintf(stderr, "outcome %" PRIu64 " status %d: ", m->user, m->status);
		T_ASSERT(0, "%s", why);
	}
}

/* Step until B's frame kept back arrives (hold_type); its parsed header in @p p. */
static void
wait_held(struct trd_pkt *p)
{
	uint64_t t = trd_time_us() + 2000000;

	while (n_held == 0 && trd_time_us() < t)
		step();
	T_ASSERT(n_held == 1, "B's verdict was never sent");
	T_EQ(trd_wire_parse(held[0], held_len[0], p), 0);
	hold_type = 0; /* its copies are still lost */
}

/* Hand B's kept frame to A; forget it. */
static void
release_held(void)
{
	T_EQ(trd_node_rx_frame(A, held[0], held_len[0], 0), 0);
	n_held = 0;
}

/* A verdict "from" @p src for operation @p aux naming message @p msg, unsequenced. */
static uint32_t
forge_verdict(uint8_t *f, uint8_t type, uint8_t src, uint32_t aux, uint64_t msg, uint64_t old)
{
	struct trd_pkt p;
	uint64_t be = rte_cpu_to_be_64(old);

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.flags = TRD_HF_ALL;
	p.hops = 3;
	p.src[0] = src;
	p.aux = aux;
	p.offset = msg;
	p.msg_len = type == TRD_PKT_ATOMIC_REPLY ? 8 : 0;
	return forge(f, p, &be, (uint16_t)p.msg_len);
}

/* While a tracked 64 KiB put and a tracked compare-and-swap on a held lock wait for their
 * verdicts, 4096 forged verdicts of each kind, one per completion id, come "from B" naming
 * another message, and (open nodes) 4096 more "from A itself" naming the right one. None
 * completes anything: on a reliable node each is dropped as unsequenced, on an unreliable one
 * as unknown_completion. The real verdicts then complete both, with the real old value. */
static void
test_forge(void)
{
	unsigned int cause = open_net ? TRD_DROP_UNKNOWN_CPL : TRD_DROP_UNSEQUENCED;
	uint64_t d0 = drops(A, cause), res = 0x5a5a5a5a, want = 0;
	uint8_t f[256];
	struct trd_pkt hp;
	struct trd_desc d;
	uint32_t id;
	uint64_t *lock = (uint64_t *)(memb + (2u << 20));

	/* the put: B has all of it and answered; the answer is kept back */
	hold_type = TRD_PKT_DONE;
	memset(memb + (1u << 20), 0, 65536);
	tracked_put(1u << 20, 65536, 41);
	wait_held(&hp);
	T_EQ(hp.key, 0);
	for (uint32_t i = 1; i <= 4096; i++) {
		T_EQ(trd_node_rx_frame(A, f, forge_verdict(f, TRD_PKT_DONE, 1, i, hp.offset + i, 0),
				       0),
		     0);
		want++;
		if (open_net) {
			/* the right message, from the wrong node */
			T_EQ(trd_node_rx_frame(
				     A, f, forge_verdict(f, TRD_PKT_DONE, 0, i, hp.offset, 0), 0),
			     0);
			want++;
		} else if (i == hp.aux) {
			/* everything right but outside the session */
			T_EQ(trd_node_rx_frame(
				     A, f, forge_verdict(f, TRD_PKT_DONE, 1, i, hp.offset, 0), 0),
			     0);
			want++;
		}
	}
	no_outcome("a forged DONE completed the 64 KiB put");
	T_EQ(drops(A, cause) - d0, want);
	release_held();
	T_EQ(outcome(41, 2000000), 0);
	T_ASSERT(memcmp(memb + (1u << 20), srca + (1u << 20), 65536) == 0, "the put's bytes");

	/* the compare-and-swap on a lock B holds (1): it fails, the old value says so */
	*lock = 1;
	hold_type = TRD_PKT_ATOMIC_REPLY;
	T_EQ(trd_track_open(A, RF, 42, &res, &id), 0);
	trd_desc_atomic(&d, trd_node_coord(B), TRD_ATOMIC_CAS, trd_mr_key(mrb), 2u << 20, 1, 0);
	d.flags |= TRD_DF_ACKREQ;
	d.aux = id;
	T_EQ(trd_inject(trd_inj_fifo(A, 0), &d), 0);
	wait_held(&hp);
	for (uint32_t i = 1; i <= 4096; i++) {
		/* "old value 0: lock acquired" */
		T_EQ(trd_node_rx_frame(
			     A, f, forge_verdict(f, TRD_PKT_ATOMIC_REPLY, 1, i, hp.offset + i, 0),
			     0),
		     0);
		want++;
		if (open_net || i == hp.aux) {
			T_EQ(trd_node_rx_frame(A, f,
					       forge_verdict(f, TRD_PKT_ATOMIC_REPLY,
							     open_net ? 0 : 1, i, hp.offset, 0),
					       0),
			     0);
			want++;
		}
	}
	no_outcome("a forged atomic reply completed the compare-and-swap");
	T_EQ(__atomic_load_n(&res, __ATOMIC_ACQUIRE), 0x5a5a5a5a);
	T_EQ(drops(A, cause) - d0, want);
	release_held();
	T_EQ(outcome(42, 2000000), 0);
	T_EQ(__atomic_load_n(&res, __ATOMIC_ACQUIRE), 1); /* not acquired */
	T_EQ(*lock, 1);
	printf("forge (%s): %" PRIu64 " forged verdicts for a 64 KiB put and a compare-and-swap "
	       "completed nothing (%s); the real ones completed both\n",
	       open_net ? "unreliable" : "reliable", want, trd_drop_name(cause));
}

/* Frames that would change state, outside any session, at a reliable node: a put (with and
 * without ACKREQ) to B's real key, a memory-FIFO message, an atomic and a remote get "from A";
 * each is dropped as unsequenced: nothing written, delivered, run or answered. */
static void
test_unsequenced(void)
{
	uint8_t f[256], pay[64];
	uint64_t u0 = drops(B, TRD_DROP_UNSEQUENCED), ctl0 = drops(B, TRD_DROP_REPLY_FULL);
	struct trd_node_stats s0, s1;
	struct trd_wire_atomic at;
	struct trd_desc c;
	struct trd_msg *m;
	struct trd_pkt p;
	uint8_t *w = memb + MEM - 256;

	memset(w, 0, 128);
	T_EQ(trd_node_stats_get(B, &s0), 0);
	memset(&p, 0, sizeof(p));
	p.type = TRD_PKT_PUT;
	p.flags = TRD_HF_ALL;
	p.hops = 3;
	p.dst[0] = 1;
	p.key = trd_mr_key(mrb);
	p.offset = MEM - 256;
	p.msg_len = 16;
	memset(pay, 0xee, sizeof(pay));
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, pay, 16), 0), 0);
	p.flags |= TRD_HF_ACKREQ;
	p.aux = 7;
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, pay, 16), 0), 0);
	p.type = TRD_PKT_FIFO;
	p.flags = TRD_HF_ALL;
	p.aux = 0;
	p.key = 0x5eed;
	p.offset = 0;
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, pay, 16), 0), 0);
	memset(&at, 0, sizeof(at));
	at.op = TRD_ATOMIC_SWAP;
	at.operand = rte_cpu_to_be_64(0xdeadULL);
	p.type = TRD_PKT_ATOMIC;
	p.key = trd_mr_key(mrb);
	p.offset = MEM - 192;
	p.msg_len = sizeof(at);
	p.aux = 9;
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, &at, sizeof(at)), 0), 0);
	trd_desc_put(&c, trd_node_coord(A), NULL, 8, trd_mr_key(mra), 0, 0, 0);
	c.flags = TRD_DF_IMM;
	c.user = 0xabad1dea;
	p.type = TRD_PKT_RGET;
	p.fifo = TRD_ENGINE_FIFO;
	p.key = 0;
	p.offset = 0;
	p.aux = 0;
	p.msg_len = 64;
	T_EQ(trd_node_rx_frame(B, f, forge(f, p, &c, 64), 0), 0);
	T_EQ(drops(B, TRD_DROP_UNSEQUENCED) - u0, 5);
	T_EQ(trd_node_stats_get(B, &s1), 0);
	T_EQ(s1.stat[TRD_STAT_RX_PUT] - s0.stat[TRD_STAT_RX_PUT], 0);
	T_EQ(s1.stat[TRD_STAT_RX_FIFO] - s0.stat[TRD_STAT_RX_FIFO], 0);
	T_EQ(s1.stat[TRD_STAT_RX_RGET] - s0.stat[TRD_STAT_RX_RGET], 0);
	T_EQ(s1.stat[TRD_STAT_ATOMICS] - s0.stat[TRD_STAT_ATOMICS], 0);
	T_EQ(s1.stat[TRD_STAT_TX_CTL] - s0.stat[TRD_STAT_TX_CTL], 0); /* no DONE, no reply */
	T_EQ(drops(B, TRD_DROP_REPLY_FULL), ctl0);
	for (unsigned int i = 0; i < 128; i++)
		T_EQ(w[i], 0);
	T_EQ(trd_rec_fifo_poll(trd_rec_fifo(B, 0), &m, 1), 0);
	/* A's own traffic goes on */
	tracked_put(0, 1000, 51);
	T_EQ(outcome(51, 2000000), 0);
	printf("unsequenced: a put (and one asking for a verdict), a FIFO message, an atomic "
	       "and a remote get outside the session were dropped, nothing acted on\n");
}

/* Item 5: one 71-byte frame, a put with ACKREQ and aux 0, wedged a pair: its DONE, with aux
 * 0, was refused by the peer's parser (bad_length) every time it was resent, and everything
 * behind it in B's session waited until the session died. B takes unsequenced frames here (as
 * every reliable node did before item 3) so that the frame reaches its parser, which refuses
 * it: no DONE is made, and A's next tracked put completes. */
static void
test_wedge(void)
{
	uint8_t f[128], one = 0x71;
	struct trd_pkt p;
	uint64_t bf = drops(B, TRD_DROP_BAD_FIELD), bl = drops(A, TRD_DROP_BAD_LENGTH);

	memset(&p, 0, sizeof(p));
	p.type = TRD_PKT_PUT;
	p.flags = TRD_HF_ALL | TRD_HF_ACKREQ;
	p.hops = 3;
	p.dst[0] = 1;
	p.key = trd_mr_key(mrb);
	p.offset = MEM - 300;
	p.msg_len = 1;
	T_EQ(forge(f, p, &one, 1), 71);
	T_EQ(trd_node_trust_unsequenced(B, 1), 0);
	T_EQ(trd_node_rx_frame(B, f, 71, 0), 0);
	T_EQ(trd_node_trust_unsequenced(B, 0), 0);
	tracked_put(220000, 2000, 71);
	T_EQ(outcome(71, 2000000), 0);
	T_EQ(drops(B, TRD_DROP_BAD_FIELD) - bf, 1);
	T_EQ(drops(A, TRD_DROP_BAD_LENGTH) - bl, 0);
	printf("wedge: a 71-byte put with ACKREQ and aux 0 was refused (bad_field), no DONE "
	       "with aux 0 was made, the pair goes on\n");
}

/* Item 9: a late verdict of an operation that failed when its peer was (falsely) declared
 * down must not complete a newer operation that got its completion id. B takes a tracked put
 * and answers; the answer is kept back; B falls silent, A declares it down and fails the put;
 * B comes back; A opens operations until it gets the same id again and posts a new put with
 * it; then the old answer arrives, in B's live session. */
static void
test_late_done(void)
{
	uint64_t t, down0 = drops(A, TRD_DROP_MAX), u0;
	struct trd_pkt hp;
	uint32_t id, id2 = 0;

	hold_type = TRD_PKT_DONE;
	id = tracked_put_id(200000, 4000, 61, 0);
	wait_held(&hp);
	T_EQ(hp.aux, id);
	b_alive = false;
	T_EQ(outcome(61, 20000000), -EHOSTUNREACH);
	T_EQ(drops(A, TRD_DROP_MAX) - down0, 1);
	b_alive = true;
	t = trd_time_us() + 2000000;
	while (trd_node_peer_up(A, trd_node_coord(B)) != 1 && trd_time_us() < t)
		step();
	T_EQ(trd_node_peer_up(A, trd_node_coord(B)), 1);
	/* the same id again */
	for (unsigned int k = 0; k <= 4096 && id2 != id; k++) {
		T_EQ(trd_track_open(A, RF, 62, NULL, &id2), 0);
		if (id2 != id)
			T_EQ(trd_track_close(A, id2), 0);
	}
	T_EQ(id2, id);
	memset(memb + 210000, 0, 4000);
	tracked_put_id(210000, 4000, 62, id);
	trd_node_poll(A); /* it leaves (B has not seen it yet) */
	trd_node_poll(A);
	u0 = drops(A, TRD_DROP_UNKNOWN_CPL);
	release_held(); /* the old verdict: id right, message and session of the failed put */
	no_outcome("a late DONE of a failed put completed the newer put with its id");
	T_EQ(drops(A, TRD_DROP_UNKNOWN_CPL) - u0, 1);
	T_EQ(outcome(62, 2000000), 0);
	T_ASSERT(memcmp(memb + 210000, srca + 210000, 4000) == 0, "the newer put's bytes");
	printf("late done: the verdict of a put failed by a peer's death, arriving after its id "
	       "was reused, completed nothing (unknown_completion); the new put completed\n");
}

static unsigned int ack_delay_us; /* 0: the default */
static unsigned int rto_us;       /* 0: the default */

/* What B handed its port: the frames of type @p type among them. */
static unsigned int
b_sent(uint8_t type)
{
	struct rte_mbuf *pkts[32];
	unsigned int k = 0;
	uint16_t nb;

	while ((nb = rte_eth_rx_burst((uint16_t)trd_link_port(farB), 0, pkts, 32)) != 0)
		for (uint16_t i = 0; i < nb; i++) {
			uint8_t buf[TRD_FRAME_HLEN];
			const uint8_t *f = rte_pktmbuf_read(pkts[i], 0, TRD_FRAME_HLEN, buf);

			k += f != NULL && frame_type(f, TRD_FRAME_HLEN) == type;
			rte_pktmbuf_free(pkts[i]);
		}
	return k;
}

#define FRAME_MAX 2048

/* A puts 200 bytes (pattern @p salt) at @p off of B's region: its frame, taken off A's cable
 * into @p f (FRAME_MAX bytes) instead of carried to B. Its length (the test fails without). */
static uint32_t
a_put_frame(uint64_t off, unsigned int salt, uint8_t *f)
{
	struct rte_mbuf *pkts[32];
	struct trd_desc d;
	uint32_t len = 0;
	uint16_t nb;

	test_fill(srca + off, 200, salt);
	trd_desc_put(&d, trd_node_coord(B), srca + off, 200, trd_mr_key(mrb), off, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(A, 0), &d), 0);
	trd_node_poll(A);
	nb = rte_eth_rx_burst((uint16_t)trd_link_port(farA), 0, pkts, 32);
	for (uint16_t i = 0; i < nb; i++) {
		/* the put, alone in its frame or in a bundle of one */
		if (len == 0 &&
		    frame_type(rte_pktmbuf_mtod(pkts[i], uint8_t *), pkts[i]->data_len) !=
			    TRD_PKT_ACK &&
		    pkts[i]->pkt_len <= FRAME_MAX) {
			const uint8_t *p = rte_pktmbuf_read(pkts[i], 0, pkts[i]->pkt_len, f);

			len = pkts[i]->pkt_len;
			if (p != f)
				memcpy(f, p, len);
		}
		rte_pktmbuf_free(pkts[i]);
	}
	T_ASSERT(len != 0, "A's put frame");
	return len;
}

static void
test_timers(void)
{
	uint8_t f[FRAME_MAX];
	uint32_t len = a_put_frame(70000, 9, f);

	b_sent(0);
	T_EQ(trd_node_rx_frame(B, f, len, 0), 0);
	T_ASSERT(memcmp(memb + 70000, srca + 70000, 200) == 0, "the put landed");
	for (int i = 0; i < 100; i++)
		trd_node_poll(B);
	T_EQ(b_sent(TRD_PKT_ACK), 0); /* owed in 2 s, and A sends nothing back to carry it */
	T_EQ(trd_node_rx_frame(B, f, len, 0), 0); /* again: a duplicate */
	T_EQ(b_sent(TRD_PKT_ACK), 1);
	printf("timers: a frame received owed its ack in 2 s and none went; its duplicate was "
	       "acked in the poll that took it\n");
}

/* With a 2 ms ack delay and a 1 s least timeout, the timers sleep up to 250 ms when nothing
 * is due: a frame B receives, with nothing going back to carry its ack, brings them forward
 * to its ack delay. The ack goes alone within 100 ms (not at their next turn). */
static void
test_ack_due(void)
{
	uint8_t f[FRAME_MAX];
	uint32_t len = a_put_frame(80000, 11, f);
	uint64_t t0, t;
	unsigned int acks = 0;

	/* what B still owed (acks, answers) goes first: B polled for longer than its timers
	 * sleep, what it sends dropped */
	t = trd_time_us() + 300000;
	while (trd_time_us() < t) {
		trd_node_poll(B);
		b_sent(0);
	}
	t0 = trd_time_us();
	T_EQ(trd_node_rx_frame(B, f, len, 0), 0);
	T_ASSERT(memcmp(memb + 80000, srca + 80000, 200) == 0, "the put landed");
	acks = 0;
	t = t0 + 100000;
	while (acks == 0 && trd_time_us() < t) {
		trd_node_poll(B);
		acks = b_sent(TRD_PKT_ACK);
	}
	T_ASSERT(acks == 1,
		 "B's ack alone within 100 ms of the frame (%u acks after %" PRIu64 " us)", acks,
		 trd_time_us() - t0);
	printf("ack_due: a frame received brought the sleeping timers forward: its ack went "
	       "alone after %" PRIu64 " us (ack delay 2 ms)\n",
	       trd_time_us() - t0);
}

static struct trd_node *
make(uint8_t x, unsigned int dead_ms, struct trd_link *l)
{
	struct trd_node_conf nc = {0};
	struct trd_node *n;

	trd_torus_init(&nc.torus, 2, 1, 1);
	nc.coord.x = x;
	nc.dead_ms = dead_ms;
	nc.ack_delay_us = ack_delay_us;
	nc.rto_us = rto_us;
	nc.unreliable = open_net;
	nc.n_counters = 2 * TRD_COUNTER_BLOCK; /* room for a process's block (held) */
	n = trd_node_create(&nc);
	T_ASSERT(n != NULL, "node");
	T_EQ(trd_node_set_session_secret(n, x == 0 ? SK0 : ~SK0, x == 0 ? SK1 : ~SK1), 0);
	T_EQ(trd_node_add_link(n, l, TRD_DIR_XP), 0); /* on an axis of 2, both ways lead there */
	return n;
}

static const char *only; /* run only this part (argument), for checking one at a time */

static bool
part(const char *name)
{
	return only == NULL || strcmp(only, name) == 0;
}

static void
run(unsigned int dead_ms, bool all)
{
	struct trd_link *la, *lb;
	char name[32];

	snprintf(name, sizeof(name), "sa%u%s", dead_ms, open_net ? "o" : "");
	T_EQ(trd_link_ethdev_ring_pair(name, 0, &la, &farA), 0);
	snprintf(name, sizeof(name), "sb%u%s", dead_ms, open_net ? "o" : "");
	T_EQ(trd_link_ethdev_ring_pair(name, 0, &lb, &farB), 0);
	A = make(0, dead_ms, la);
	B = make(1, dead_ms, lb);
	memset(memb, 0, MEM);
	mrb = trd_mr_register(B, memb, MEM, TRD_ACCESS_ALL);
	mra = trd_mr_register(A, srca, MEM, TRD_ACCESS_ALL);
	dbmr = trd_doorbell_register(A, dbpage, 4096, NULL);
	T_ASSERT(mrb != NULL && mra != NULL && dbmr != NULL, "regions");
	b_alive = true;
	if (part("hello") && !open_net) { /* (an unreliable node resends nothing) */
		/* the first operation to a fresh peer, untracked, while A's first frames (its
		 * hellos) are lost: the session still starts and the put lands */
		struct trd_desc d;
		uint64_t t = trd_time_us() + 2000000;

		drop_from_a = 3;
		test_fill(srca + 60000, 700, 5);
		trd_desc_put(&d, trd_node_coord(B), srca + 60000, 700, trd_mr_key(mrb), 60000, 0,
			     0);
		T_EQ(trd_inject(trd_inj_fifo(A, 0), &d), 0);
		while (memcmp(memb + 60000, srca + 60000, 700) != 0 && trd_time_us() < t)
			step();
		T_ASSERT(memcmp(memb + 60000, srca + 60000, 700) == 0, "a first put, hellos lost");
		T_EQ(drop_from_a, 0);
		printf("hello: a first untracked put went through, its session's first frames lost\n");
	}
	tracked_put(0, 100, 99);
	T_EQ(outcome(99, 2000000), 0);
	if (open_net) {
		if (part("forge"))
			test_forge();
		goto out;
	}
	if (all && part("unsequenced"))
		test_unsequenced();
	if (all && part("forge"))
		test_forge();
	if (all && part("wedge"))
		test_wedge();
	if (all && part("session"))
		test_forged_session();
	if (all && part("ack"))
		test_forged_ack();
	if (all && part("proof"))
		test_proof();
	if (all && part("fence"))
		test_fence();
	if (all && part("bundle"))
		test_held_bundle();
	if (all && part("bundle_part"))
		test_held_part();
	if (all && part("late_done"))
		test_late_done();
	if (part("owed"))
		test_owed(dead_ms);
	if (all && part("counter"))
		test_counter();
	if (ack_delay_us != 0 && rto_us == 0)
		test_timers();
	else if (ack_delay_us != 0)
		test_ack_due();
out:
	trd_node_free(A);
	trd_node_free(B);
	trd_link_free(farA);
	trd_link_free(farB);
}

int
main(int argc, char **argv)
{
	if (argc > 1)
		only = argv[1];
	test_eal_init(argv[0], NULL);
	memb = aligned_alloc(4096, MEM);
	srca = aligned_alloc(4096, MEM);
	dbpage = aligned_alloc(4096, 4096);
	T_ASSERT(memb != NULL && srca != NULL && dbpage != NULL, "memory");
	run(100, true);
	run(1000, false);
	if (part("timers")) {
		const char *o = only;

		ack_delay_us = 2000000; /* the timers run every 250 ms */
		only = "timers";        /* the session's start, then this part alone */
		run(900, false);
		only = o;
		ack_delay_us = 0;
	}
	if (part("ack_due")) {
		const char *o = only;

		ack_delay_us = 2000; /* due 2 ms after a frame ... */
		rto_us = 1000000;    /* ... while the timers may sleep 250 ms */
		only = "ack_due";
		run(800, false); /* (800: ports of a name of their own) */
		only = o;
		ack_delay_us = 0;
		rto_us = 0;
	}
	open_net = true; /* the same forgeries at unreliable nodes: the verdicts' own checks */
	run(100, true);
	free(memb);
	free(srca);
	rte_eal_cleanup();
	printf("session: all passed\n");
	return 0;
}
