/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Issue 17 item 5: regions named by (key, remote virtual address) and the IO addresses handed
 * to ports.
 *
 * - va: on a loopback node, puts and RDMA reads by (key, virtual address) are byte-exact, a
 *   region in offset mode next to it still works, addresses below the base, past the end or
 *   far beyond it are dropped and counted as out of bounds with nothing written, a range that
 *   wraps past UINT64_MAX is refused at post, atomics and local sources address VA regions
 *   too.
 * - msg va: the messaging layer's trd_put() and trd_rdma_read() by remote address between two
 *   nodes, into and out of VA regions; out of bounds completes with -ERANGE, nothing written.
 * - iova: a node sending zero-copy on a bare net_ring port; the test takes the frames off the
 *   port's ring and checks the IO address attached to each payload segment: the region's
 *   translation in DPDK's memory map (external memory registered with an IOVA table that is
 *   not the virtual address, rte_malloc memory), the virtual address for raw pointers in
 *   IOVA-as-VA mode; and TRD_ACCESS_DMA refused (EFAULT) for malloc memory and for a range that
 *   is not IOVA-contiguous.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_ring.h>

#include <toroid/msg.h>
#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 5000000
#define LEN        4096
#define GUARD      256

static struct trd_node *
mknode(unsigned int x, struct trd_node_conf *c)
{
	struct trd_node *n;

	trd_torus_init(&c->torus, x, 1, 1);
	n = trd_node_create(c);
	T_ASSERT(n != NULL, "node: %s", rte_strerror(rte_errno));
	return n;
}

static uint64_t
drops(struct trd_node *n, unsigned int cause)
{
	struct trd_node_stats st;

	T_EQ(trd_node_stats_get(n, &st), 0);
	return st.drop[cause];
}

/* Poll until the node counted @p want drops of @p cause (bounded). */
static void
wait_drops(struct trd_node *n, unsigned int cause, uint64_t want)
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	while (drops(n, cause) < want && trd_time_us() < deadline)
		trd_node_poll(n);
	T_EQ(drops(n, cause), want);
	/* and nothing more comes */
	for (int i = 0; i < 100; i++)
		trd_node_poll(n);
	T_EQ(drops(n, cause), want);
}

static bool
all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void
test_va(void)
{
	struct trd_node_conf c = {.inline_max = 128};
	struct trd_node *n = mknode(1, &c);
	struct trd_coord self = {0, 0, 0};
	/* [guard | region | guard]: nothing may land in the guards */
	static uint8_t vmem[GUARD + LEN + GUARD], omem[LEN], src[LEN];
	uint8_t *vbase = vmem + GUARD;
	struct trd_mr *vmr, *omr;
	struct trd_desc d, cd;
	uint64_t vkey, okey, va, oob = 0;
	uint16_t rec;

	memset(vmem, 0xee, sizeof(vmem));
	memset(omem, 0, sizeof(omem));
	test_fill(src, sizeof(src), 17);
	vmr = trd_mr_register(n, vbase, LEN, TRD_ACCESS_ALL | TRD_ACCESS_VA);
	omr = trd_mr_register(n, omem, LEN, TRD_ACCESS_ALL);
	T_ASSERT(vmr != NULL && omr != NULL, "regions: %s", rte_strerror(rte_errno));
	vkey = trd_mr_key(vmr);
	okey = trd_mr_key(omr);
	va = (uintptr_t)vbase;
	T_EQ(trd_mr_remote_addr(vmr, vbase + 100), va + 100);
	T_EQ(trd_mr_remote_addr(omr, omem + 100), 100);
	T_EQ(trd_counter_alloc(n, &rec), 0);

	/* a put by (key, address): several packets, byte-exact, guards untouched */
	T_EQ(trd_counter_set(n, rec, 3000), 0);
	trd_desc_put(&d, self, src, 3000, vkey, va + 1000, 0, rec);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(vbase + 1000, src, 3000) == 0, "put by VA byte-exact");
	T_ASSERT(all_bytes(vbase, 1000, 0xee) &&
			 all_bytes(vbase + 4000, LEN - 4000 + GUARD, 0xee) &&
			 all_bytes(vmem, GUARD, 0xee),
		 "put by VA: nothing else written");
	/* the whole region, first to last byte */
	T_EQ(trd_counter_set(n, rec, LEN), 0);
	trd_desc_put(&d, self, src, LEN, vkey, va, 0, rec);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(vbase, src, LEN) == 0, "put of the whole VA region");

	/* the offset-mode region next to it still works by offset */
	T_EQ(trd_counter_set(n, rec, 2000), 0);
	trd_desc_put(&d, self, src + 7, 2000, okey, 500, 0, rec);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(omem + 500, src + 7, 2000) == 0, "put by offset byte-exact");

	/* out of bounds: dropped and counted at the target, nothing written */
	memset(vmem, 0xee, sizeof(vmem));
	memset(omem, 0, sizeof(omem));
	{
		const struct {
			uint64_t key, addr;
			uint32_t len;
			const char *what;
		} bad[] = {
			{vkey, va - 1, 16, "one byte below the base"},
			{vkey, va - 4096, 64, "a page below the base"},
			{vkey, va + LEN - 8, 16, "8 bytes past the end"},
			{vkey, va + LEN, 1, "at the end"},
			{vkey, 100, 16, "an offset used on a VA region"},
			{vkey, UINT64_MAX - 4096, 16, "near UINT64_MAX"},
			{okey, va, 16, "an address used on an offset region"},
		};

		for (unsigned int i = 0; i < RTE_DIM(bad); i++) {
			trd_desc_put(&d, self, src, bad[i].len, bad[i].key, bad[i].addr, 0, 0);
			T_ASSERT(trd_inject(trd_inj_fifo(n, 0), &d) == 0, "post %s", bad[i].what);
			wait_drops(n, TRD_DROP_OUT_OF_BOUNDS, ++oob);
		}
	}
	/* a range that wraps past UINT64_MAX is refused at post: a later packet would name the
	 * bottom of the address space */
	trd_desc_put(&d, self, src, 16, vkey, UINT64_MAX - 8, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	trd_desc_put(&d, self, src, 3000, vkey, UINT64_MAX - 2000, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), -EINVAL);
	T_ASSERT(all_bytes(vmem, sizeof(vmem), 0xee) && all_bytes(omem, LEN, 0),
		 "refused puts wrote nothing");

	/* RDMA read by (key, address): a remote get carrying a put back from the VA region to
	 * the offset region */
	memcpy(vbase, src, LEN);
	T_EQ(trd_counter_set(n, rec, 2500), 0);
	trd_desc_put(&cd, self, NULL, 2500, okey, 100, 0, rec);
	cd.flags = TRD_DF_SRC_MR;
	cd.src_key = vkey;
	cd.src = va + 1500;
	trd_desc_rget(&d, self, TRD_ENGINE_FIFO, &cd, 1);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(omem + 100, src + 1500, 2500) == 0, "RDMA read by VA byte-exact");
	/* ... into a VA region, named by address too */
	memset(vmem, 0xee, sizeof(vmem));
	memcpy(omem, src, LEN);
	T_EQ(trd_counter_set(n, rec, 1800), 0);
	trd_desc_put(&cd, self, NULL, 1800, vkey, va + 2000, 0, rec);
	cd.flags = TRD_DF_SRC_MR;
	cd.src_key = okey;
	cd.src = 300;
	trd_desc_rget(&d, self, TRD_ENGINE_FIFO, &cd, 1);
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(vbase + 2000, src + 300, 1800) == 0, "RDMA read into VA byte-exact");
	T_ASSERT(all_bytes(vbase + 3800, LEN - 3800 + GUARD, 0xee), "read: nothing past it");
	/* a read whose source is outside the VA region: refused where the region is */
	{
		const uint64_t srcs[] = {va - 1, va + LEN - 100, 0, UINT64_MAX - 50};

		memset(omem, 0, sizeof(omem));
		for (unsigned int i = 0; i < RTE_DIM(srcs); i++) {
			trd_desc_put(&cd, self, NULL, 200, okey, 0, 0, 0);
			cd.flags = TRD_DF_SRC_MR;
			cd.src_key = vkey;
			cd.src = srcs[i];
			trd_desc_rget(&d, self, TRD_ENGINE_FIFO, &cd, 1);
			T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
			wait_drops(n, TRD_DROP_OUT_OF_BOUNDS, ++oob);
		}
		T_ASSERT(all_bytes(omem, LEN, 0), "refused reads wrote nothing");
	}
	/* a local put from a VA region names its source by address */
	T_EQ(trd_counter_set(n, rec, 700), 0);
	memcpy(vbase, src, LEN);
	trd_desc_put(&d, self, NULL, 700, okey, 0, 0, rec);
	d.flags = TRD_DF_SRC_MR;
	d.src_key = vkey;
	d.src = va + 10;
	T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
	T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
	T_ASSERT(memcmp(omem, src + 10, 700) == 0, "put from a VA source region");

	/* small ones, coalesced into one frame: the source named by address too, and an offset
	 * used on the VA region refused as it is alone, not read as an offset */
	{
		struct trd_desc b[5];
		struct trd_node_stats st0, st1;

		memset(omem, 0, sizeof(omem));
		T_EQ(trd_node_stats_get(n, &st0), 0);
		T_EQ(trd_counter_set(n, rec, 4 * 32), 0);
		for (unsigned int i = 0; i < 5; i++) {
			trd_desc_put(&b[i], self, NULL, 32, okey, 64 * i, 0, rec);
			b[i].flags = TRD_DF_SRC_MR;
			b[i].src_key = vkey;
			b[i].src = va + 100 * i;
		}
		b[2].src = 200; /* an offset: outside the VA region's address space */
		T_EQ(trd_inject_bulk(trd_inj_fifo(n, 0), b, 5), 0);
		wait_drops(n, TRD_DROP_OUT_OF_BOUNDS, ++oob);
		T_EQ(trd_counter_wait(n, rec, TIMEOUT_US), 0);
		for (unsigned int i = 0; i < 5; i++)
			if (i == 2)
				T_ASSERT(all_bytes(omem + 128, 32, 0),
					 "the refused one wrote nothing");
			else
				T_ASSERT(memcmp(omem + 64 * i, src + 100 * i, 32) == 0,
					 "coalesced put %u from a VA source", i);
		T_EQ(trd_node_stats_get(n, &st1), 0);
		T_ASSERT(st1.stat[TRD_STAT_TX_BUNDLES] > st0.stat[TRD_STAT_TX_BUNDLES],
			 "the small puts were coalesced");
	}

	/* an atomic at an address */
	{
		uint64_t *w = (uint64_t *)(vbase + 64), old = 0;
		struct trd_msg *m;
		uint32_t id;

		*w = 40;
		T_EQ(trd_track_open(n, 0, 1, &old, &id), 0);
		trd_desc_atomic(&d, self, TRD_ATOMIC_FADD, vkey, va + 64, 2, 0);
		d.flags |= TRD_DF_ACKREQ;
		d.aux = id;
		T_EQ(trd_inject(trd_inj_fifo(n, 0), &d), 0);
		T_EQ(trd_rec_fifo_wait(trd_rec_fifo(n, 0), &m, TIMEOUT_US), 0);
		T_EQ(m->status, 0);
		trd_msg_free(m);
		T_EQ(old, 40);
		T_EQ(*w, 42);
	}
	T_EQ(drops(n, TRD_DROP_OUT_OF_BOUNDS), oob);
	trd_node_free(n);
}

/* ---- the messaging layer: trd_put() and trd_rdma_read() by remote address ---- */

static int msg_status = 1;

static void
on_done(struct trd_context *ctx, void *cookie, int status)
{
	(void)ctx;
	(void)cookie;
	msg_status = status;
}

static int
msg_wait(struct trd_context *const ctx[2])
{
	uint64_t deadline = trd_time_us() + TIMEOUT_US;

	while (msg_status == 1 && trd_time_us() < deadline) {
		trd_advance(ctx[0], 0);
		trd_advance(ctx[1], 0);
	}
	T_ASSERT(msg_status != 1, "operation completed in time");
	return msg_status;
}

static void
test_msg_va(void)
{
	static uint8_t lmem[LEN], rmem[GUARD + LEN + GUARD], src[LEN];
	uint8_t *rbase = rmem + GUARD;
	struct trd_net_conf nc = {0};
	struct trd_context *ctx[2];
	struct trd_mr *lmr, *rmr;
	struct trd_client *cl;
	struct trd_net *net;
	struct trd_ep task1;
	uint64_t rva;

	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	cl = trd_client_create("va", NULL);
	T_ASSERT(net != NULL && cl != NULL, "net, client: %s", rte_strerror(rte_errno));
	for (unsigned int t = 0; t < 2; t++) {
		struct trd_context_conf cc = {.node = trd_net_node(net, t),
					      .inj_fifo = 0,
					      .cpl_fifo = 1,
					      .recv_fifo = TRD_NO_FIFO};

		ctx[t] = trd_context_create(cl, &cc);
		T_ASSERT(ctx[t] != NULL, "context %u", t);
	}
	/* both sides name their memory by address */
	lmr = trd_mr_register(trd_net_node(net, 0), lmem, LEN,
			      TRD_ACCESS_REMOTE_WRITE | TRD_ACCESS_VA);
	rmr = trd_mr_register(trd_net_node(net, 1), rbase, LEN, TRD_ACCESS_ALL | TRD_ACCESS_VA);
	T_ASSERT(lmr != NULL && rmr != NULL, "regions");
	T_EQ(trd_endpoint(cl, 1, 0, &task1), 0);
	rva = trd_mr_remote_addr(rmr, rbase);
	T_EQ(rva, (uintptr_t)rbase);
	test_fill(src, LEN, 23);
	memset(rmem, 0xee, sizeof(rmem));

	/* put by remote address */
	msg_status = 1;
	T_EQ(trd_put(ctx[0], src, &task1, rva + 300, trd_mr_key(rmr), 3000, on_done, NULL), 0);
	T_EQ(msg_wait(ctx), 0);
	T_ASSERT(memcmp(rbase + 300, src, 3000) == 0, "trd_put by VA byte-exact");
	T_ASSERT(all_bytes(rmem, GUARD + 300, 0xee) &&
			 all_bytes(rbase + 3300, LEN - 3300 + GUARD, 0xee),
		 "trd_put by VA: nothing else written");
	/* past the end: the target's refusal, nothing written */
	msg_status = 1;
	T_EQ(trd_put(ctx[0], src, &task1, rva + LEN - 10, trd_mr_key(rmr), 20, on_done, NULL), 0);
	T_EQ(msg_wait(ctx), -ERANGE);
	msg_status = 1;
	T_EQ(trd_put(ctx[0], src, &task1, rva - 20, trd_mr_key(rmr), 20, on_done, NULL), 0);
	T_EQ(msg_wait(ctx), -ERANGE);
	T_ASSERT(all_bytes(rbase + LEN - 10, GUARD + 10, 0xee) && all_bytes(rmem, GUARD, 0xee),
		 "refused puts wrote nothing");

	/* RDMA read by remote address into a local VA region */
	memcpy(rbase, src, LEN);
	memset(lmem, 0, sizeof(lmem));
	msg_status = 1;
	T_EQ(trd_rdma_read(ctx[0], lmem + 100, &task1, rva + 1000, trd_mr_key(rmr), 2500, on_done,
			   NULL),
	     0);
	T_EQ(msg_wait(ctx), 0);
	T_ASSERT(memcmp(lmem + 100, src + 1000, 2500) == 0, "trd_rdma_read by VA byte-exact");
	T_ASSERT(all_bytes(lmem, 100, 0) && all_bytes(lmem + 2600, LEN - 2600, 0),
		 "read: nothing else written");
	/* a source below the region: refused, nothing written */
	memset(lmem, 0, sizeof(lmem));
	msg_status = 1;
	T_EQ(trd_rdma_read(ctx[0], lmem, &task1, rva - 1, trd_mr_key(rmr), 64, on_done, NULL), 0);
	T_EQ(msg_wait(ctx), -ERANGE);
	T_ASSERT(all_bytes(lmem, LEN, 0), "refused read wrote nothing");

	trd_client_destroy(cl);
	trd_net_free(net);
}

/* ---- IO addresses on the wire's mbufs ---- */

struct bare {
	struct trd_node *n;
	struct rte_ring *tx; /* what the node's port sends */
};

static void
bare_node(struct bare *b)
{
	static struct rte_ring *r[2];
	struct trd_node_conf c = {.inline_max = 128, .unreliable = true};
	struct trd_link *l;
	int port;

	r[0] = rte_ring_create("va_rx", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r[1] = rte_ring_create("va_tx", 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	T_ASSERT(r[0] != NULL && r[1] != NULL, "rings");
	port = rte_eth_from_rings("net_ring_va", &r[0], 1, &r[1], 1, SOCKET_ID_ANY);
	T_ASSERT(port >= 0, "rte_eth_from_rings");
	b->n = mknode(2, &c);
	l = trd_link_ethdev((uint16_t)port, &(struct trd_link_conf){0});
	T_ASSERT(l != NULL, "link: %s", rte_strerror(rte_errno));
	T_EQ(trd_node_add_link(b->n, l, TRD_DIR_XP), 0);
	b->tx = r[1];
}

/*
 * Send @p len bytes zero-copy (from region @p mr at @p src, or from the raw pointer @p raw)
 * and check that each payload segment the port gets points at the right bytes with the IO
 * address @p iova_of says. Returns the number of zero-copy segments seen.
 */
static unsigned int
send_check(struct bare *b, struct trd_mr *mr, const uint8_t *p, uint32_t len,
	   rte_iova_t (*iova_of)(const void *))
{
	struct trd_desc d;
	uint64_t deadline = trd_time_us() + TIMEOUT_US;
	uint32_t got = 0;
	unsigned int segs = 0;
	uint16_t inj;

	T_EQ(trd_counter_alloc(b->n, &inj), 0);
	T_EQ(trd_counter_set(b->n, inj, len), 0);
	trd_desc_put(&d, (struct trd_coord){1, 0, 0}, mr == NULL ? p : NULL, len, 0x1234, 0, inj,
		     0);
	if (mr != NULL) {
		d.flags = TRD_DF_SRC_MR;
		d.src_key = trd_mr_key(mr);
		d.src = trd_mr_remote_addr(mr, p);
	}
	T_EQ(trd_inject(trd_inj_fifo(b->n, 0), &d), 0);
	while (got < len && trd_time_us() < deadline) {
		struct rte_mbuf *m;

		trd_node_poll(b->n);
		while (rte_ring_dequeue(b->tx, (void **)&m) == 0) {
			struct rte_mbuf *s = m->next;

			T_ASSERT(m->nb_segs >= 2 && s != NULL && RTE_MBUF_HAS_EXTBUF(s),
				 "a zero-copy frame");
			T_ASSERT(rte_pktmbuf_mtod(s, const uint8_t *) == p + got,
				 "segment at byte %u", got);
			T_ASSERT(rte_pktmbuf_iova(s) == iova_of(p + got),
				 "IOVA of byte %u: %#llx, translation %#llx", got,
				 (unsigned long long)rte_pktmbuf_iova(s),
				 (unsigned long long)iova_of(p + got));
			got += s->data_len;
			segs++;
			rte_pktmbuf_free(m);
		}
	}
	T_EQ(got, len);
	T_EQ(trd_counter_wait(b->n, inj, TIMEOUT_US), 0); /* the frees gave the buffer back */
	T_EQ(trd_counter_free(b->n, inj), 0);
	return segs;
}

/* DPDK's translation, page by page through its memory map (what the engine must use). */
static rte_iova_t
map_iova(const void *va)
{
	const struct rte_memseg *ms = rte_mem_virt2memseg(va, NULL);

	T_ASSERT(ms != NULL, "memseg of %p", va);
	if (ms->iova == RTE_BAD_IOVA)
		return rte_mem_virt2iova(va);
	return ms->iova + ((uintptr_t)va - (uintptr_t)ms->addr);
}

static rte_iova_t
virt_iova(const void *va)
{
	return rte_mem_virt2iova(va);
}

#define PG  4096
#define NPG 8

static void
test_iova(void)
{
	struct bare b;
	static uint8_t plain[3 * PG];
	rte_iova_t tab[NPG], swapped[NPG];
	uint8_t *ext, *ext2, *hp;
	struct trd_mr *mr;

	printf("IOVA mode: %s\n", rte_eal_iova_mode() == RTE_IOVA_VA   ? "VA"
				  : rte_eal_iova_mode() == RTE_IOVA_PA ? "PA"
								       : "other");
	bare_node(&b);

	/* malloc memory is not DMA-able: refused with TRD_ACCESS_DMA, sent as the mode allows
	 * without it */
	T_ASSERT(trd_mr_register(b.n, plain, sizeof(plain), TRD_ACCESS_DMA) == NULL &&
			 rte_errno == EFAULT,
		 "malloc memory with TRD_ACCESS_DMA: %s", rte_strerror(rte_errno));
	mr = trd_mr_register(b.n, plain, sizeof(plain), 0);
	T_ASSERT(mr != NULL, "malloc memory without TRD_ACCESS_DMA");
	if (rte_eal_iova_mode() == RTE_IOVA_VA) {
		T_EQ(trd_mr_iova(mr), (uintptr_t)plain);
		T_ASSERT(send_check(&b, mr, plain + 5, 2 * PG, virt_iova) >= 2, "zero-copy");
		/* a raw pointer: its own address */
		T_ASSERT(send_check(&b, NULL, plain + 9, 3000, virt_iova) >= 2, "raw zero-copy");
	} else {
		T_EQ(trd_mr_iova(mr), RTE_BAD_IOVA);
		test_skip_part("zero-copy from malloc memory (IOVA as PA: sent by copy)");
	}
	T_EQ(trd_mr_deregister(mr), 0);

	/* external memory whose IO addresses are not its virtual addresses (as behind an
	 * IOMMU mapping of the application's choosing): the engine must use the map */
	ext = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ext2 = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(ext != MAP_FAILED && ext2 != MAP_FAILED, "mmap");
	for (unsigned int i = 0; i < NPG; i++) {
		tab[i] = 0x5a0000000000ull + (rte_iova_t)i * PG;
		/* pages 0 and 1 swapped, the rest in order */
		swapped[i] = 0x6b0000000000ull + (rte_iova_t)(i < 2 ? i ^ 1 : i) * PG;
	}
	if (rte_extmem_register(ext, NPG * PG, tab, NPG, PG) != 0 ||
	    rte_extmem_register(ext2, NPG * PG, swapped, NPG, PG) != 0) {
		test_skip_part("rte_extmem_register refused: no external-memory IOVA check");
	} else {
		test_fill(ext, NPG * PG, 5);
		mr = trd_mr_register(b.n, ext, NPG * PG, TRD_ACCESS_DMA | TRD_ACCESS_VA);
		T_ASSERT(mr != NULL, "external memory with TRD_ACCESS_DMA: %s",
			 rte_strerror(rte_errno));
		T_EQ(trd_mr_iova(mr), tab[0]);
		T_EQ(map_iova(ext + PG + 3), tab[1] + 3);
		T_ASSERT(send_check(&b, mr, ext + PG + 3, 5000, map_iova) >= 4, "zero-copy ext");
		T_EQ(trd_mr_deregister(mr), 0);
		/* not IOVA-contiguous across pages 0 and 1 */
		T_ASSERT(trd_mr_register(b.n, ext2, 2 * PG, TRD_ACCESS_DMA) == NULL &&
				 rte_errno == EFAULT,
			 "non-contiguous IOVA refused");
		T_ASSERT(trd_mr_register(b.n, ext2 + PG - 8, 16, TRD_ACCESS_DMA) == NULL &&
				 rte_errno == EFAULT,
			 "non-contiguous IOVA refused (16 bytes across)");
		/* without the flag: no IO address, sent by copy */
		mr = trd_mr_register(b.n, ext2, 2 * PG, 0);
		T_ASSERT(mr != NULL && trd_mr_iova(mr) == RTE_BAD_IOVA, "non-contiguous: no IOVA");
		T_EQ(trd_mr_deregister(mr), 0);
		/* within one page it is contiguous */
		mr = trd_mr_register(b.n, ext2 + 2 * PG, 2 * PG, TRD_ACCESS_DMA);
		T_ASSERT(mr != NULL && trd_mr_iova(mr) == swapped[2], "pages 2-3");
		T_EQ(trd_mr_deregister(mr), 0);
		mr = trd_mr_register(b.n, ext2 + PG, PG, TRD_ACCESS_DMA);
		T_ASSERT(mr != NULL && trd_mr_iova(mr) == swapped[1], "page 1 alone");
		T_EQ(trd_mr_deregister(mr), 0);
		/* past the end of the external memory */
		T_ASSERT(trd_mr_register(b.n, ext + PG, NPG * PG, TRD_ACCESS_DMA) == NULL &&
				 rte_errno == EFAULT,
			 "past the external memory");
	}

	/* DPDK's heap: rte_mem_virt2iova knows it */
	hp = rte_malloc("va", 3 * PG, 64);
	T_ASSERT(hp != NULL, "rte_malloc");
	test_fill(hp, 3 * PG, 9);
	mr = trd_mr_register(b.n, hp, 3 * PG, TRD_ACCESS_DMA);
	T_ASSERT(mr != NULL, "rte_malloc memory with TRD_ACCESS_DMA: %s", rte_strerror(rte_errno));
	T_EQ(trd_mr_iova(mr), rte_mem_virt2iova(hp));
	T_ASSERT(send_check(&b, mr, hp + 100, 2 * PG, map_iova) >= 2, "zero-copy rte_malloc");
	T_EQ(trd_mr_deregister(mr), 0);
	trd_node_free(b.n);
	rte_free(hp);
}

int
main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";

	(void)argc;
	test_eal_init(argv[0], NULL);
	if (strcmp(which, "iova") != 0) {
		test_va();
		printf("va: ok\n");
		test_msg_va();
		printf("msg va: ok\n");
	}
	if (strcmp(which, "va") != 0) {
		test_iova();
		printf("iova: ok\n");
	}
	return test_status();
}
