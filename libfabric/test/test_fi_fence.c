/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fi_fence: FI_FENCE and remote CQ data on RMA writes (fi_writedata) of the toroid
 * provider through libfabric's API, two processes (1:0 = A, 1:1 = B) on toroid-node(s) started
 * by test_fi.sh (docs/libfabric.md, "Fences" and "Remote CQ data on RMA writes"). With
 * TOROID_VNI_SOCKET_B, B attaches to a second engine (two engines joined by net_memif).
 *
 * Fences (A, B's engine serving B's window, B makes no call):
 *   order     a send to 1:2, which the topology places but which never attaches, fails only
 *             after the engine's --noproc-ms (300 ms); a fenced fi_writemsg posted after it,
 *             an unfenced fi_write and 40 injected writes posted after that, and a fenced
 *             fi_readmsg must all complete after the send's FI_ECONNREFUSED entry, and the read
 *             returns what the writes wrote. Without the fence they complete at once.
 *   read      8 rounds: 4 writes of 1 MiB, then a fenced read of the 4 MiB: the read completes
 *             last and returns every byte just written
 *   atomic    a write of 1000, a fenced fi_atomicmsg adding 7, a fenced fi_fetch_atomicmsg
 *             reading 1007
 *   send      a 64 KiB write, then fi_sendmsg and fi_tsendmsg with FI_FENCE: B, on receiving
 *             the message, finds the written bytes in its window
 * Remote CQ data on writes (B posts an untagged receive and a tagged receive of any tag
 * first): fi_writedata of 4096 B, fi_inject_writedata of 64 B and fi_writemsg with
 * FI_REMOTE_CQ_DATA of 2 iovs give B exactly 3 entries with FI_REMOTE_CQ_DATA | FI_RMA |
 * FI_REMOTE_WRITE, their data, length and source, the bytes already in the window; a
 * writedata with a bad key is an FI_EACCES entry at A and nothing at B; B's receives take
 * none of it: the untagged one then takes A's message, the tagged one is cancelled.
 * Refusals: remote CQ data on reads and atomics (-FI_EOPNOTSUPP), an unknown flag
 * (-FI_EBADFLAGS), a destination not in the AV, NULL buffers (-FI_EINVAL), too long an
 * inject (-FI_EMSGSIZE). Every wait is bounded.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define WAIT_MS      20000
#define FI_PAIR_PROG "test_fi_fence"
#include "fi_pair.h"

#define WIN      (4u << 20) /* B's window */
#define CHUNK    (1u << 20)
#define ROUNDS   8
#define N_INJ    40
#define RDATA_FL (FI_REMOTE_CQ_DATA | FI_RMA | FI_REMOTE_WRITE)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static fi_addr_t peer, ghost;
static uint64_t waddr, wkey; /* B's window, as A knows it */

struct entry {
	int err; /* 0 or a positive FI_E* code */
	void *ctx;
	uint64_t flags, data;
	size_t len;
	fi_addr_t src;
};

/* The next CQ entry (error entries too), bounded by WAIT_MS. */
static struct entry
take(void)
{
	uint64_t t0 = now_ms();
	struct fi_cq_tagged_entry e;
	struct entry r;
	fi_addr_t src;

	memset(&r, 0, sizeof(r));
	for (;;) {
		ssize_t n = fi_cq_readfrom(cq, &e, 1, &src);

		if (n == 1) {
			r.ctx = e.op_context;
			r.flags = e.flags;
			r.data = e.data;
			r.len = e.len;
			r.src = src;
			return r;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				fail("fi_cq_readerr");
			r.err = err.err;
			r.ctx = err.op_context;
			r.flags = err.flags;
			return r;
		}
		if (n != -FI_EAGAIN)
			fail("fi_cq_readfrom: %zd", n);
		if (now_ms() - t0 > WAIT_MS)
			fail("no completion in %d ms", WAIT_MS);
	}
}

static void
expect_ok(void *ctx, uint64_t flags)
{
	struct entry e = take();

	if (e.err != 0 || e.ctx != ctx || e.flags != flags)
		fail("completion %p flags %#" PRIx64 " error %d, expected %p %#" PRIx64 " success",
		     e.ctx, e.flags, e.err, ctx, flags);
}

#define POST(call) FI_POST(cq, call)

static uint8_t
pat(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

static void
setup(void)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .size = 1024};
	struct fi_av_attr ava = {.type = FI_AV_MAP};

	if (h == NULL)
		fail("fi_allocinfo");
	h->fabric_attr->prov_name = strdup("toroid");
	h->ep_attr->type = FI_EP_RDM;
	h->caps =
		FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_REMOTE_CQ_DATA | FI_FENCE | FI_SOURCE;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0);
	fi_freeinfo(h);
	if (!(info->caps & FI_FENCE) || !(info->caps & FI_REMOTE_CQ_DATA) ||
	    !(info->tx_attr->caps & FI_FENCE) || info->domain_attr->cq_data_size != 8)
		fail("fi_getinfo: caps %s, tx caps %s, cq_data_size %zu",
		     fi_tostr(&info->caps, FI_TYPE_CAPS),
		     fi_tostr(&info->tx_attr->caps, FI_TYPE_CAPS), info->domain_attr->cq_data_size);
	CHECK_RC(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	CHECK_RC(fi_domain(fabric, info, &domain, NULL), 0);
	CHECK_RC(fi_av_open(domain, &ava, &av, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &cq, NULL), 0);
	CHECK_RC(fi_endpoint(domain, info, &ep, NULL), 0);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECK_RC(fi_enable(ep), 0);
}

/* Names both ways; A also learns 1:2 (placed, never attached): the provider's name is
 * magic, app, proc (32 bits each), node, version. */
static void
exchange_names(void)
{
	char mine[64], theirs[64];
	size_t len = sizeof(mine);
	uint32_t two = 2;

	CHECK_RC(fi_getname(&ep->fid, mine, &len), 0);
	put(&len, sizeof(len));
	put(mine, len);
	get(&len, sizeof(len));
	if (len != 16)
		fail("name of %zu B", len);
	get(theirs, len);
	CHECK_RC(fi_av_insert(av, theirs, 1, &peer, 0, NULL), 1);
	memcpy(theirs + 8, &two, sizeof(two));
	CHECK_RC(fi_av_insert(av, theirs, 1, &ghost, 0, NULL), 1);
}

/* ---- A ---- */

static uint8_t abuf[WIN], aread[WIN];

static struct fi_msg_rma
rma_msg(struct iovec *iov, size_t n, struct fi_rma_iov *riov, size_t off, void *ctx)
{
	struct fi_msg_rma m = {.msg_iov = iov,
			       .iov_count = n,
			       .addr = peer,
			       .rma_iov = riov,
			       .rma_iov_count = 1,
			       .context = ctx};

	riov->addr = waddr + off;
	riov->key = wkey;
	riov->len = 0;
	for (size_t i = 0; i < n; i++)
		riov->len += iov[i].iov_len;
	return m;
}

/* Transmits posted after a fence wait for a send that fails only after --noproc-ms. */
static void
a_order(void)
{
	int ctx[4];
	struct iovec wio = {.iov_base = abuf, .iov_len = 64};
	struct iovec rio = {.iov_base = aread, .iov_len = 128 + N_INJ};
	struct fi_rma_iov wr, rr;
	struct fi_msg_rma wm = rma_msg(&wio, 1, &wr, 0, &ctx[1]);
	struct fi_msg_rma rm = rma_msg(&rio, 1, &rr, 0, &ctx[3]);
	bool seen[4] = {false};
	uint64_t t0 = now_ms(), t_send = 0;

	for (size_t i = 0; i < 128 + N_INJ; i++)
		abuf[i] = pat(i, 1);
	memset(aread, 0, 128 + N_INJ);
	POST(fi_send(ep, abuf, 8, NULL, ghost, &ctx[0]));
	POST(fi_writemsg(ep, &wm, FI_FENCE | FI_COMPLETION));
	POST(fi_write(ep, abuf + 64, 64, NULL, peer, waddr + 64, wkey, &ctx[2]));
	for (int i = 0; i < N_INJ; i++)
		POST(fi_inject_write(ep, abuf + 128 + i, 1, peer, waddr + 128 + (uint64_t)i, wkey));
	POST(fi_readmsg(ep, &rm, FI_FENCE | FI_COMPLETION));
	for (int n = 0; n < 4; n++) {
		struct entry e = take();
		int i = (int *)e.ctx - ctx;

		if (i < 0 || i > 3 || seen[i])
			fail("order: completion %d (context %p)", i, e.ctx);
		seen[i] = true;
		if (n == 0 && (i != 0 || e.err != FI_ECONNREFUSED))
			fail("order: first completion is %d (error %d), expected the send to 1:2 "
			     "with FI_ECONNREFUSED: a fenced transmit did not wait",
			     i, e.err);
		if (n == 0)
			t_send = now_ms() - t0;
		if (i != 0 && e.err != 0)
			fail("order: operation %d failed: %s", i, fi_strerror(e.err));
		if (n < 3 && i == 3)
			fail("order: the fenced read completed before the writes posted before it");
	}
	if (memcmp(aread, abuf, 128 + N_INJ) != 0)
		fail("order: the fenced read did not return the bytes written before it");
	printf("test_fi_fence A: order: a fenced write, a write and %d injects behind it, a "
	       "fenced read: all after the send's FI_ECONNREFUSED (%" PRIu64 " ms)\n",
	       N_INJ, t_send);
}

/* A fenced read of what four writes just wrote: first its last 4 KiB, then all of it. */
static void
a_read(void)
{
	int ctx[6];
	static uint8_t tail[4096];
	struct iovec tio = {.iov_base = tail, .iov_len = sizeof(tail)};
	struct iovec rio = {.iov_base = aread, .iov_len = WIN};
	struct fi_rma_iov tr, rr;
	struct fi_msg_rma tm = rma_msg(&tio, 1, &tr, WIN - sizeof(tail), &ctx[4]);
	struct fi_msg_rma rm = rma_msg(&rio, 1, &rr, 0, &ctx[5]);

	for (unsigned int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < WIN; i++)
			abuf[i] = pat(i, 100 + r);
		memset(aread, 0, WIN);
		memset(tail, 0, sizeof(tail));
		for (unsigned int c = 0; c < 4; c++)
			POST(fi_write(ep, abuf + c * CHUNK, CHUNK, NULL, peer, waddr + c * CHUNK,
				      wkey, &ctx[c]));
		POST(fi_readmsg(ep, &tm, FI_FENCE | FI_COMPLETION));
		POST(fi_readmsg(ep, &rm, FI_FENCE | FI_COMPLETION));
		for (int n = 0; n < 6; n++) {
			struct entry e = take();
			int i = (int *)e.ctx - ctx;

			if (e.err != 0 || i < 0 || i > 5)
				fail("read round %u: completion %d error %d", r, i, e.err);
			if (i >= 4 && n != i)
				fail("read round %u: fenced read %d completed before an earlier "
				     "operation",
				     r, i - 4);
		}
		if (memcmp(tail, abuf + WIN - sizeof(tail), sizeof(tail)) != 0)
			fail("read round %u: the fenced read of the last 4 KiB differs", r);
		for (size_t i = 0; i < WIN; i++)
			if (aread[i] != abuf[i])
				fail("read round %u: byte %zu is %#x, written %#x", r, i, aread[i],
				     abuf[i]);
	}
	printf("test_fi_fence A: read: %d rounds of 4 x 1 MiB writes and fenced reads of the "
	       "last 4 KiB and of the 4 MiB, byte-exact\n",
	       ROUNDS);
}

/* A fenced atomic after a write, a fenced fetch after it. */
static void
a_atomic(void)
{
	int ctx[3];
	uint64_t v = 1000, add = 7, got = 0, off = WIN - 8;
	struct fi_ioc ioc = {.addr = &add, .count = 1};
	struct fi_ioc rioc = {.addr = &got, .count = 1};
	struct fi_rma_ioc rma = {.addr = waddr + off, .count = 1, .key = wkey};
	struct fi_msg_atomic m = {.msg_iov = &ioc,
				  .iov_count = 1,
				  .addr = peer,
				  .rma_iov = &rma,
				  .rma_iov_count = 1,
				  .datatype = FI_UINT64,
				  .op = FI_SUM,
				  .context = &ctx[1]};

	POST(fi_write(ep, &v, 8, NULL, peer, waddr + off, wkey, &ctx[0]));
	POST(fi_atomicmsg(ep, &m, FI_FENCE | FI_COMPLETION));
	m.op = FI_ATOMIC_READ;
	m.msg_iov = NULL;
	m.iov_count = 0;
	m.context = &ctx[2];
	POST(fi_fetch_atomicmsg(ep, &m, &rioc, NULL, 1, FI_FENCE | FI_COMPLETION));
	expect_ok(&ctx[0], FI_RMA | FI_WRITE);
	expect_ok(&ctx[1], FI_ATOMIC | FI_WRITE);
	expect_ok(&ctx[2], FI_ATOMIC | FI_READ);
	if (got != 1007)
		fail("atomic: fenced fetch read %" PRIu64 ", expected 1007", got);
	m.op = FI_SUM;
	m.msg_iov = &ioc;
	m.iov_count = 1;
	CHECK_RC(fi_atomicmsg(ep, &m, FI_FENCE | FI_REMOTE_CQ_DATA), -FI_EOPNOTSUPP);
	printf("test_fi_fence A: atomic: write, fenced add, fenced fetch: 1007\n");
}

/* A write, then a fenced message: B finds the bytes when the message arrives. */
static void
a_send(bool tagged, unsigned int seed)
{
	int ctx[2];
	struct iovec io = {.iov_base = &seed, .iov_len = sizeof(seed)};
	struct fi_msg m = {.msg_iov = &io, .iov_count = 1, .addr = peer, .context = &ctx[1]};
	struct fi_msg_tagged tm = {
		.msg_iov = &io, .iov_count = 1, .addr = peer, .tag = 7, .context = &ctx[1]};

	for (size_t i = 0; i < 65536; i++)
		abuf[i] = pat(i, seed);
	POST(fi_write(ep, abuf, 65536, NULL, peer, waddr, wkey, &ctx[0]));
	if (tagged)
		POST(fi_tsendmsg(ep, &tm, FI_FENCE | FI_COMPLETION));
	else
		POST(fi_sendmsg(ep, &m, FI_FENCE | FI_COMPLETION));
	expect_ok(&ctx[0], FI_RMA | FI_WRITE);
	expect_ok(&ctx[1], FI_SEND | (tagged ? FI_TAGGED : FI_MSG));
}

static void
a_refusals(void)
{
	struct iovec io = {.iov_base = abuf, .iov_len = 8};
	struct fi_rma_iov rr;
	struct fi_msg_rma m = rma_msg(&io, 1, &rr, 0, NULL);

	CHECK_RC(fi_readmsg(ep, &m, FI_REMOTE_CQ_DATA), -FI_EOPNOTSUPP);
	CHECK_RC(fi_writemsg(ep, &m, FI_FENCE | (1ULL << 61)), -FI_EBADFLAGS);
	CHECK_RC(fi_writedata(ep, abuf, 8, NULL, 1, 12345, waddr, wkey, NULL), -FI_EINVAL);
	CHECK_RC(fi_writedata(ep, NULL, 8, NULL, 1, peer, waddr, wkey, NULL), -FI_EINVAL);
	CHECK_RC(
		fi_inject_writedata(ep, abuf, info->tx_attr->inject_size + 1, 1, peer, waddr, wkey),
		-FI_EMSGSIZE);
	CHECK_RC(fi_inject_writedata(ep, NULL, 8, 1, peer, waddr, wkey), -FI_EINVAL);
	m.addr = 12345;
	CHECK_RC(fi_writemsg(ep, &m, FI_FENCE), -FI_EINVAL);
}

/* Remote CQ data: three writes with data, one with a bad key; then a message for B. */
static void
a_writedata(void)
{
	int ctx[4];
	struct iovec io[2] = {{.iov_base = abuf + 10000, .iov_len = 100},
			      {.iov_base = abuf + 20000, .iov_len = 100}};
	struct fi_rma_iov rr;
	struct fi_msg_rma m = rma_msg(io, 2, &rr, 12288, &ctx[1]);
	static const char hello[64] = "hello, not a notice";

	for (size_t i = 0; i < 65536; i++)
		abuf[i] = pat(i, 77);
	m.data = 3;
	POST(fi_writedata(ep, abuf, 4096, NULL, 0x1122334455667788ULL, peer, waddr, wkey, &ctx[0]));
	POST(fi_inject_writedata(ep, abuf + 8192, 64, 2, peer, waddr + 8192, wkey));
	POST(fi_writemsg(ep, &m, FI_REMOTE_CQ_DATA | FI_COMPLETION));
	POST(fi_writedata(ep, abuf, 64, NULL, 4, peer, waddr, wkey ^ 0x5555, &ctx[2]));
	for (int n = 0; n < 3; n++) { /* in any order */
		struct entry e = take();
		int i = (int *)e.ctx - ctx;

		if (i < 0 || i > 2 || (i == 2 && e.err != FI_EACCES) ||
		    (i != 2 && (e.err != 0 || e.flags != (FI_RMA | FI_WRITE))))
			fail("writedata: completion %d error %d flags %#" PRIx64
			     " (the bad key: FI_EACCES)",
			     i, e.err, e.flags);
	}
	a_refusals();
	POST(fi_send(ep, hello, sizeof(hello), NULL, peer, &ctx[3]));
	expect_ok(&ctx[3], FI_SEND | FI_MSG);
}

static void
run_a(void)
{
	get(&waddr, sizeof(waddr));
	get(&wkey, sizeof(wkey));
	a_order();
	a_read();
	a_atomic();
	sync_step(1);
	sync_step(2);
	a_send(false, 11);
	sync_step(3);
	a_send(true, 12);
	sync_step(4);
	a_writedata();
	sync_step(5);
	printf("test_fi_fence A: writedata: 3 writes with data and 1 refused, then a message\n");
}

/* ---- B ---- */

static uint8_t *win;
static struct fid_mr *mr;

static void
b_check(size_t off, size_t len, unsigned int seed, size_t pat_off, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (win[off + i] != pat(pat_off + i, seed))
			fail("%s: window byte %zu is %#x, expected %#x", what, off + i,
			     win[off + i], pat(pat_off + i, seed));
}

/* Receive A's fenced message: the write before it is in the window. */
static void
b_fenced_msg(bool tagged, unsigned int want)
{
	unsigned int seed = 0;
	int ctx;
	struct entry e;

	if (tagged)
		POST(fi_trecv(ep, &seed, sizeof(seed), NULL, FI_ADDR_UNSPEC, 7, 0, &ctx));
	else
		POST(fi_recv(ep, &seed, sizeof(seed), NULL, FI_ADDR_UNSPEC, &ctx));
	sync_step(tagged ? 3 : 2);
	e = take();
	if (e.err != 0 || e.ctx != &ctx || seed != want)
		fail("fenced %s message: error %d, seed %u", tagged ? "tagged" : "untagged", e.err,
		     seed);
	b_check(0, 65536, want, 0,
		tagged ? "fi_tsendmsg with FI_FENCE" : "fi_sendmsg with FI_FENCE");
}

static void
b_writedata(void)
{
	char msg[64];
	int rctx, tctx;
	uint64_t tbuf[8];
	bool got[4] = {false};
	bool msg_seen = false;
	struct entry e;

	memset(msg, 0, sizeof(msg));
	POST(fi_recv(ep, msg, sizeof(msg), NULL, FI_ADDR_UNSPEC, &rctx));
	POST(fi_trecv(ep, tbuf, sizeof(tbuf), NULL, FI_ADDR_UNSPEC, 0, ~0ULL >> 1, &tctx));
	sync_step(4);
	for (int n = 0; n < 4; n++) {
		e = take();
		if (e.err != 0)
			fail("writedata: error entry %s", fi_strerror(e.err));
		if (e.ctx == &rctx) {
			if (e.len != sizeof(msg) || strcmp(msg, "hello, not a notice") != 0 ||
			    e.flags != (FI_RECV | FI_MSG) || e.src != peer)
				fail("writedata: the receive took %zu B \"%.20s\" flags %#" PRIx64,
				     e.len, msg, e.flags);
			msg_seen = true;
			continue;
		}
		if (e.ctx != NULL || e.flags != RDATA_FL || e.src != peer)
			fail("writedata: entry ctx %p flags %#" PRIx64 " src %" PRIu64
			     ", expected FI_REMOTE_CQ_DATA | FI_RMA | FI_REMOTE_WRITE from A",
			     e.ctx, e.flags, (uint64_t)e.src);
		if (e.data == 0x1122334455667788ULL && e.len == 4096 && !got[1]) {
			got[1] = true;
			b_check(0, 4096, 77, 0, "fi_writedata");
		} else if (e.data == 2 && e.len == 64 && !got[2]) {
			got[2] = true;
			b_check(8192, 64, 77, 8192, "fi_inject_writedata");
		} else if (e.data == 3 && e.len == 200 && !got[3]) {
			got[3] = true;
			b_check(12288, 100, 77, 10000, "fi_writemsg with FI_REMOTE_CQ_DATA");
			b_check(12388, 100, 77, 20000, "fi_writemsg with FI_REMOTE_CQ_DATA");
		} else {
			fail("writedata: data %#" PRIx64 " len %zu unexpected", e.data, e.len);
		}
	}
	if (!msg_seen)
		fail("writedata: A's message did not arrive");
	CHECK_RC(fi_cancel(&ep->fid, &tctx), 0);
	e = take();
	if (e.err != FI_ECANCELED || e.ctx != &tctx)
		fail("writedata: the tagged receive ended with %d, expected FI_ECANCELED", e.err);
	{
		struct fi_cq_tagged_entry x;
		uint64_t t0 = now_ms();

		while (now_ms() - t0 < 200) /* the refused write wrote no entry */
			if (fi_cq_read(cq, &x, 1) != -FI_EAGAIN)
				fail("writedata: an entry too many");
	}
	sync_step(5);
	printf("test_fi_fence B: 3 remote CQ data entries (data, length, source), the bytes "
	       "there first; no receive took a notice\n");
}

static void
run_b(void)
{
	uint64_t a, k;

	win = calloc(1, WIN);
	if (win == NULL)
		fail("calloc");
	CHECK_RC(fi_mr_reg(domain, win, WIN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL),
		 0);
	a = (uint64_t)(uintptr_t)win;
	k = fi_mr_key(mr);
	put(&a, sizeof(a));
	put(&k, sizeof(k));
	sync_step(1);
	/* A's fenced read saw its writes; the window holds the last round, the atomic's word */
	b_check(0, WIN - 8, 100 + ROUNDS - 1, 0, "the last round of fenced reads");
	if (*(uint64_t *)(win + WIN - 8) != 1007)
		fail("atomic word is %" PRIu64, *(uint64_t *)(win + WIN - 8));
	b_fenced_msg(false, 11);
	b_fenced_msg(true, 12);
	b_writedata();
	CHECK_RC(fi_close(&mr->fid), 0);
	free(win);
}

static void
teardown(void)
{
	CHECK_RC(fi_close(&ep->fid), 0);
	CHECK_RC(fi_close(&cq->fid), 0);
	CHECK_RC(fi_close(&av->fid), 0);
	CHECK_RC(fi_close(&domain->fid), 0);
	CHECK_RC(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

static int
side(bool is_a)
{
	pair_side_env(is_a, true);
	setup();
	exchange_names();
	if (is_a)
		run_a();
	else
		run_b();
	teardown();
	printf("test_fi_fence %s: passed\n", who);
	return 0;
}

int
main(void)
{
	if (pair_env_missing())
		return 77;
	return pair_run(side, 150);
}
