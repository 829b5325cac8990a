/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reception FIFOs of guests (attached processes: engine/core/grfifo.c) that go away while a
 * message for them is on its way (rv15). A 2x1x1 torus, node 0 sends messages of 60000 bytes
 * (about 40 packets each) to a guest's FIFO on node 1, a ring of 4096 slots in this process's
 * memory.
 *
 *   test_grfifo_shares reasm   one share, unreliable, node 1 with 8 reassembly entries: eight
 *                              times a guest is removed while a message for it is half
 *                              received; the rest of its pieces drop (unknown_fifo) and its
 *                              reassembly entry must go with them: a message of 40 packets to
 *                              node 1's own FIFO 0 then arrives whole (no no_memory drop)
 *   test_grfifo_shares shares  two shares a node, node 1's share 1 served by lcore 1: the
 *                              messages (sent on lane 1) are delivered by that lcore.
 *                              trd_guest_remove() must not return while it may still write the
 *                              ring (the VNI service unmaps the process's segment right after)
 *                              or the FIFO's state (freed): the guest is removed the moment
 *                              share 1 is seen copying a message into its ring, the ring (header
 *                              and slots) then filled with a pattern while the stream goes on to
 *                              its id (dropped there: share 1 did later rounds), and the pattern
 *                              must be intact. 40 rounds, each guest new (a race, but met in
 *                              most rounds: without the fix lcore 1 crashes in the first few).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#include <toroid/toroid.h>

#include "guest_api.h"
#include "test_common.h"

#define ITERS   40
#define SLOTS   4096u
#define LEN     60000u
#define WAIT_US 5000000ULL
#define PATTERN 0x5a

static struct trd_net *net;
static struct trd_node *a, *b;
static uint8_t *src;
static uint64_t sent;

/* One round of everything this thread polls; node 0 is given one more message to @p id when
 * its lane 1 has room. */
static void
pump(uint8_t id)
{
	struct trd_desc d;

	trd_desc_fifo(&d, trd_node_coord(b), id, src, LEN, sent, 0);
	if (trd_inject(trd_inj_fifo(a, 1), &d) == 0)
		sent++;
	T_ASSERT(trd_node_poll_share(a, 0) >= 0 && trd_node_poll_share(a, 1) >= 0, "poll 0");
	T_ASSERT(trd_node_poll_share(b, 0) >= 0, "poll 1");
}

static uint64_t
share1_drops(enum trd_drop cause)
{
	struct trd_node_stats st;

	T_EQ(trd_node_share_stats_get(b, 1, &st), 0);
	return st.drop[cause];
}

/* The ring all PATTERN, header and slots: nothing wrote it. */
static bool
untouched(const uint8_t *mem, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (mem[i] != PATTERN)
			return false;
	return true;
}

/* Is share 1 copying a message into @p r: its header slot written at the producer's index, the
 * index not yet moved past it? */
static bool
mid_copy(const struct rte_ring *r)
{
	uint32_t pos = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	const struct trd_rslot *h =
		(const struct trd_rslot *)(const void *)((const uint8_t *)&r[1] +
							 (size_t)(pos % SLOTS) * 64);

	return __atomic_load_n(&h->len, __ATOMIC_ACQUIRE) == LEN &&
	       __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) == pos;
}

/* A guest whose FIFO takes the stream, removed the moment share 1 is seen copying a message into
 * it (or once its ring is full): nothing may write the ring after trd_guest_remove() returned.
 * Counts the removals that met a copy in @p hits. */
static void
one(uint16_t base, unsigned int iter, uint64_t *hits)
{
	size_t len = sizeof(struct rte_ring) + (size_t)SLOTS * 64;
	struct rte_ring *r = rte_zmalloc("grfifo_sh", len, RTE_CACHE_LINE_SIZE);
	struct trd_guest_conf gc = {.n_rfifos = 1, .rslots = SLOTS, .ctr_base = base};
	struct trd_guest_rstats rs = {0};
	struct trd_guest *g;
	uint64_t deadline = trd_time_us() + WAIT_US, unk;
	bool met = false;
	uint8_t id;

	T_ASSERT(r != NULL, "ring memory");
	T_EQ(rte_ring_init(r, "grfifo_sh", SLOTS, RING_F_SP_ENQ | RING_F_SC_DEQ), 0);
	gc.rrings[0] = r;
	g = trd_guest_add(b, &gc);
	T_ASSERT(g != NULL, "guest: %s", rte_strerror(rte_errno));
	id = trd_guest_rfifo_id(g, 0);
	T_ASSERT(id >= TRD_GUEST_RFIFO_FIRST && id <= TRD_GUEST_RFIFO_LAST, "id %u", id);
	/* nothing read: the ring holds SLOTS / 939 messages, the slots after them stay zero */
	while (!met && rs.msgs < SLOTS / (1 + LEN / 64 + 1)) {
		pump(id);
		for (unsigned int k = 0; k < 20000 && !met; k++)
			met = mid_copy(r);
		T_EQ(trd_guest_rstats_get(g, &rs), 0);
		T_ASSERT(trd_time_us() < deadline, "round %u: %" PRIu64 " messages delivered", iter,
			 rs.msgs);
	}
	T_EQ(trd_guest_remove(g), 0);
	memset(r, PATTERN, len);
	*hits += met;
	/* share 1 goes on: messages to the id drop there */
	unk = share1_drops(TRD_DROP_UNKNOWN_FIFO);
	while (share1_drops(TRD_DROP_UNKNOWN_FIFO) < unk + 2) {
		pump(id);
		T_ASSERT(trd_time_us() < deadline + WAIT_US, "round %u: share 1 idle", iter);
	}
	T_ASSERT(untouched((const uint8_t *)r, len),
		 "round %u: the ring was written after trd_guest_remove() returned%s", iter,
		 met ? " (removed while share 1 copied a message into it)" : "");
	rte_free(r);
}

/* Two nodes of @p shares shares, unreliable, node 1 with @p n_reasm reassembly entries. */
static void
net_up(unsigned int shares, unsigned int n_reasm)
{
	struct trd_node_conf tmpl = {.shares = shares, .unreliable = true, .n_reasm = n_reasm};
	struct trd_net_conf nc = {.node = &tmpl};

	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	a = trd_net_node(net, 0);
	b = trd_net_node(net, 1);
	src = malloc(LEN);
	T_ASSERT(src != NULL, "memory");
	for (uint32_t i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 7 + 1);
}

static void
net_down(void)
{
	trd_net_free(net);
	free(src);
}

static void
shares(unsigned int iters)
{
	unsigned int lc = rte_get_next_lcore(-1, 1, 0), one_share = 1;
	uint64_t msgs = 0, off;
	uint16_t base;
	int fd;

	if (lc >= RTE_MAX_LCORE) {
		test_skip_part("shares: no second lcore");
		return;
	}
	/* (entries enough for a message cut short at every removal) */
	net_up(2, 1024);
	T_EQ(trd_counter_block_alloc(b, &base, &fd, &off), 0);
	close(fd);
	T_EQ(trd_lcore_launch_shares(lc, &b, &one_share, 1), 0);
	for (unsigned int i = 0; i < iters; i++)
		one(base, i, &msgs);
	T_EQ(trd_lcore_stop(lc), 0);
	printf("shares: %u guests removed, %" PRIu64 " of them while share 1 copied a message "
	       "into their ring; no ring written after its removal\n",
	       iters, msgs);
	net_down();
}

static uint64_t
nstat(struct trd_node *n, bool drop, unsigned int k)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(n, &st), 0);
	return drop ? st.drop[k] : st.stat[k];
}

/* A guest removed while a message for it is half received: 1, or 0 if the message came whole
 * first (the round does not count). */
static int
cut_short(uint16_t base, struct rte_ring *r)
{
	struct trd_guest_conf gc = {.n_rfifos = 1, .rslots = SLOTS, .ctr_base = base};
	struct trd_guest_rstats rs = {0};
	uint64_t copied = nstat(b, false, TRD_STAT_RX_FIFO_COPY_BYTES), unk, deadline;
	struct trd_guest *g;
	struct trd_desc d;
	int rc = 0;

	T_EQ(rte_ring_init(r, "grfifo_ra", SLOTS, RING_F_SP_ENQ | RING_F_SC_DEQ), 0);
	gc.rrings[0] = r;
	g = trd_guest_add(b, &gc);
	T_ASSERT(g != NULL, "guest: %s", rte_strerror(rte_errno));
	trd_desc_fifo(&d, trd_node_coord(b), trd_guest_rfifo_id(g, 0), src, LEN, 1, 0);
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	deadline = trd_time_us() + WAIT_US;
	/* node 0 one round, node 1 one round, until node 1 copied some of its bytes */
	while (nstat(b, false, TRD_STAT_RX_FIFO_COPY_BYTES) == copied) {
		T_ASSERT(trd_node_poll(a) >= 0 && trd_node_poll(b) >= 0, "poll");
		T_ASSERT(trd_time_us() < deadline, "no piece came");
	}
	T_EQ(trd_guest_rstats_get(g, &rs), 0);
	if (rs.msgs == 0 && nstat(b, false, TRD_STAT_RX_FIFO_COPY_BYTES) - copied < LEN)
		rc = 1;
	unk = nstat(b, true, TRD_DROP_UNKNOWN_FIFO);
	T_EQ(trd_guest_remove(g), 0);
	/* the rest of it: its pieces drop, then nothing moves */
	while (trd_node_poll(a) + trd_node_poll(b) > 0)
		T_ASSERT(trd_time_us() < deadline, "pieces still moving");
	T_ASSERT(rc == 0 || nstat(b, true, TRD_DROP_UNKNOWN_FIFO) > unk, "the rest not dropped");
	return rc;
}

static void
reasm(void)
{
	struct rte_ring *r = rte_zmalloc("grfifo_ra", sizeof(*r) + (size_t)SLOTS * 64, 64);
	uint64_t off, nomem, deadline;
	unsigned int cut = 0, tries = 0;
	struct trd_msg *m = NULL;
	struct trd_desc d;
	uint16_t base;
	int fd, k = 0;

	T_ASSERT(r != NULL, "ring memory");
	net_up(1, 8);
	T_EQ(trd_counter_block_alloc(b, &base, &fd, &off), 0);
	close(fd);
	while (cut < 8) {
		T_ASSERT(++tries < 100, "no message cut short in %u tries", tries);
		cut += (unsigned int)cut_short(base, r);
	}
	/* every entry was one of those messages: each one given back, a long message to the
	 * node's own FIFO is reassembled */
	nomem = nstat(b, true, TRD_DROP_NO_MEMORY);
	trd_desc_fifo(&d, trd_node_coord(b), 0, src, LEN, 77, 0);
	T_EQ(trd_inject(trd_inj_fifo(a, 0), &d), 0);
	deadline = trd_time_us() + WAIT_US;
	while (k == 0 && trd_time_us() < deadline) {
		T_ASSERT(trd_node_poll(a) >= 0 && trd_node_poll(b) >= 0, "poll");
		k = trd_rec_fifo_poll(trd_rec_fifo(b, 0), &m, 1);
		T_ASSERT(k >= 0, "poll FIFO 0");
	}
	T_EQ(nstat(b, true, TRD_DROP_NO_MEMORY), nomem);
	T_ASSERT(k == 1,
		 "the message to FIFO 0 never came (%u reassembly entries kept by "
		 "messages to guests gone)",
		 cut);
	T_EQ(m->len, LEN);
	T_EQ(m->user, 77);
	T_ASSERT(memcmp(m->data, src, LEN) == 0, "bytes");
	trd_msg_free(m);
	rte_free(r);
	net_down();
	printf("reasm: %u messages cut short by their guest's removal, their entries given "
	       "back; a long message then reassembled\n",
	       cut);
}

int
main(int argc, char **argv)
{
	test_eal_init(argv[0], NULL);
	if (argc > 1 && strcmp(argv[1], "reasm") == 0)
		reasm();
	else if (argc > 1 && strcmp(argv[1], "shares") == 0)
		shares(argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : ITERS);
	else
		T_ASSERT(0, "usage: test_grfifo_shares reasm|shares [rounds]");
	return test_status();
}
