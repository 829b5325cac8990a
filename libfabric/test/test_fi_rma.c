/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fi_rma: FI_RMA and FI_ATOMIC of the toroid provider through libfabric's API, two
 * processes (1:0 = A, 1:1 = B) on toroid-node(s) started by test_fi.sh.
 *
 *   test_fi_rma va       the Open MPI OFI BTL's hints: FI_MR_VIRT_ADDR | FI_MR_PROV_KEY,
 *                        FI_DELIVERY_COMPLETE; remote addresses are B's virtual addresses
 *   test_fi_rma offset   mr_mode 0: requested keys (0 among them), offsets into the region
 *   test_fi_rma jobkey   requested keys and the job secret (FI_TOROID_JOB_KEY, set by
 *                        test_fi.sh for A and B): B registers 4 KiB with the small requested
 *                        key 5; an intruder C (1:2, a child of A without the job secret) tries
 *                        every key 0..255 with the old fixed transform (a FI_MR_PROV_KEY
 *                        domain: key ^ TFI_KEY_XOR) and without a secret (a requested-key
 *                        domain, whose own fi_mr_reg is refused: -FI_ENOKEY) and with a
 *                        secret of its own (auth_key): every write an FI_EACCES error entry,
 *                        B's bytes untouched; then A, with the secret, writes with key 5 and
 *                        B checks the bytes; then A again (as 1:3) with the secret given as
 *                        domain_attr->auth_key instead of the environment
 *
 * B registers a window (malloc'd, not the VNI pool) and a read-only region and never posts
 * anything for A's operations: its engine does the work. A writes and reads every size
 * 1 B .. 4 MiB, with one iov, several, inject and writemsg, and checks every byte read back;
 * B checks the window byte for byte and that the guard bytes around every write are
 * untouched. Atomics (64 and 32 bit): fetching sum, swap, compare-swap hit and miss, read,
 * min, max, or, and, xor with the old values; both processes add to one counter (B through its
 * own address) and the sum is exact. Refusals: unknown key, write to the read-only region,
 * one byte past the end, misaligned atomic, a closed registration: FI_EACCES error entries and
 * nothing written; signed min/max and count 2 refused at posting. Every wait is bounded.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define WAIT_MS      20000
#define FI_PAIR_PROG "test_fi_rma"
#include "fi_pair.h"

#define WIN    (4u << 20) /* window bytes */
#define GUARD  64         /* bytes kept around each write */
#define RO_LEN 4096
#define N_ADD  500 /* atomic adds from each process */

static bool offset_mode;
static bool jobkey_mode;
static char peer_name[64];
static int cfd_b = -1;    /* A: the pipe to B */
static char *auth_secret; /* jobkey: the job secret given as domain_attr->auth_key */
static size_t peer_name_len;

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static fi_addr_t peer, self;
static struct fid_cntr *wcntr, *rcntr; /* A: FI_WRITE and FI_READ counters */

/* One completion: 1 (success, into e) or the error entry's err (positive). Bounded. */
static int
cq_take(struct fi_cq_data_entry *e, struct fi_cq_err_entry *err)
{
	int rc = pair_cq_take(cq, e, err, WAIT_MS);

	if (rc < 0)
		fail("no completion in %d ms", WAIT_MS);
	return rc;
}

static void
expect_ok(void *ctx, uint64_t flags)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int rc = cq_take(&e, &err);

	if (rc != 0)
		fail("completion error %s (prov_errno %d), expected success", fi_strerror(rc),
		     err.prov_errno);
	if (e.op_context != ctx || e.flags != flags)
		fail("completion %p flags %#" PRIx64 ", expected %p %#" PRIx64, e.op_context,
		     e.flags, ctx, flags);
}

static void
expect_err(void *ctx, int want)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int rc = cq_take(&e, &err);

	if (rc == 0)
		fail("success, expected error %s", fi_strerror(want));
	if (rc != want || err.op_context != ctx)
		fail("error %s ctx %p, expected %s %p", fi_strerror(rc), err.op_context,
		     fi_strerror(want), ctx);
}

#define POST(call) FI_POST(cq, call)

/* ---- set-up ---- */

static void
setup(void)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .size = 256};
	struct fi_av_attr ava = {.type = FI_AV_MAP};

	if (h == NULL)
		fail("fi_allocinfo");
	h->fabric_attr->prov_name = strdup("toroid");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_RMA | FI_ATOMIC;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->mr_mode =
		offset_mode ? 0 : FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	if (auth_secret != NULL) { /* fi_freeinfo frees it */
		h->domain_attr->auth_key = (uint8_t *)strdup(auth_secret);
		h->domain_attr->auth_key_size = strlen(auth_secret);
	}
	h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	h->tx_attr->iov_limit = 1;
	CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0);
	fi_freeinfo(h);
	if (!(info->caps & FI_RMA) || !(info->caps & FI_ATOMIC) ||
	    info->tx_attr->rma_iov_limit != 1 ||
	    info->domain_attr->mr_mode != (offset_mode ? 0 : FI_MR_VIRT_ADDR | FI_MR_PROV_KEY) ||
	    !(info->tx_attr->op_flags & FI_DELIVERY_COMPLETE))
		fail("fi_getinfo: caps %s mr_mode %#x", fi_tostr(&info->caps, FI_TYPE_CAPS),
		     info->domain_attr->mr_mode);
	CHECK_RC(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	CHECK_RC(fi_domain(fabric, info, &domain, NULL), 0);
	CHECK_RC(fi_av_open(domain, &ava, &av, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &cq, NULL), 0);
	CHECK_RC(fi_endpoint(domain, info, &ep, NULL), 0);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	if (strcmp(who, "A (1:0)") == 0) {
		struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};

		CHECK_RC(fi_cntr_open(domain, &ca, &wcntr, NULL), 0);
		CHECK_RC(fi_cntr_open(domain, &ca, &rcntr, NULL), 0);
		CHECK_RC(fi_ep_bind(ep, &wcntr->fid, FI_WRITE), 0);
		CHECK_RC(fi_ep_bind(ep, &rcntr->fid, FI_READ), 0);
	}
	CHECK_RC(fi_enable(ep), 0);
}

static void
exchange_names(void)
{
	char mine[64], theirs[64];
	size_t len = sizeof(mine);

	CHECK_RC(fi_getname(&ep->fid, mine, &len), 0);
	put(&len, sizeof(len));
	put(mine, len);
	get(&len, sizeof(len));
	if (len > sizeof(theirs))
		fail("name of %zu B", len);
	get(theirs, len);
	CHECK_RC(fi_av_insert(av, theirs, 1, &peer, 0, NULL), 1);
	CHECK_RC(fi_av_insert(av, mine, 1, &self, 0, NULL), 1);
	memcpy(peer_name, theirs, len);
	peer_name_len = len;
}

/* What B tells A about a region: the remote address of its first byte and the key. */
struct region {
	uint64_t addr;
	uint64_t key;
};

static struct region
region_of(struct fid_mr *mr, const void *base)
{
	struct region r = {.addr = offset_mode ? 0 : (uint64_t)(uintptr_t)base,
			   .key = fi_mr_key(mr)};
	return r;
}

static uint8_t
pat(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

static const size_t sizes[] = {
	1, 7, 64, 895, 896, 897, 4096, 65536, 100003, 1 << 20, (4u << 20) - 2 * GUARD};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- A: the origin ---- */

static uint8_t abuf[WIN], aread[WIN];

/* A: writes of every size at an offset GUARD into the window, each read back. */
static void
a_sizes(const struct region *w)
{
	struct region win = *w;
	int ctx[2];

	for (size_t s = 0; s < N_SIZES; s++) {
		size_t n = sizes[s];

		sync_step(-1 - (int)s); /* B filled the window with guard bytes */
		for (size_t i = 0; i < n; i++)
			abuf[i] = pat(i, (unsigned int)s);
		POST(fi_write(ep, abuf, n, NULL, peer, win.addr + GUARD, win.key, &ctx[0]));
		expect_ok(&ctx[0], FI_RMA | FI_WRITE);
		memset(aread, 0xee, n + 1);
		POST(fi_read(ep, aread, n, NULL, peer, win.addr + GUARD, win.key, &ctx[1]));
		expect_ok(&ctx[1], FI_RMA | FI_READ);
		if (memcmp(aread, abuf, n) != 0 || aread[n] != 0xee)
			fail("read back of %zu B differs", n);
		put(&n, sizeof(n));
		sync_step(100 + (int)s); /* B checked the window and its guards */
	}
}

/* A: several iovs, inject, writemsg with FI_DELIVERY_COMPLETE, readv. */
static void
a_iovs(const struct region *w)
{
	struct region win = *w;
	int ctx[8];
	struct iovec wv[3] = {{abuf, 10}, {abuf + 100, 1000}, {abuf + 5000, 3}};
	struct iovec rv[3] = {{aread, 500}, {aread + 1000, 13}, {aread + 2000, 500}};
	struct fi_rma_iov riov = {.addr = win.addr + 3 * GUARD, .len = 1013, .key = win.key};
	struct fi_msg_rma m = {.msg_iov = wv,
			       .iov_count = 3,
			       .addr = peer,
			       .rma_iov = &riov,
			       .rma_iov_count = 1,
			       .context = &ctx[2]};
	uint8_t want[1013];

	for (size_t i = 0; i < 6000; i++)
		abuf[i] = pat(i, 99);
	memcpy(want, abuf, 10);
	memcpy(want + 10, abuf + 100, 1000);
	memcpy(want + 1010, abuf + 5000, 3);
	POST(fi_writemsg(ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	expect_ok(&ctx[2], FI_RMA | FI_WRITE);
	POST(fi_readv(ep, rv, NULL, 3, peer, win.addr + 3 * GUARD, win.key, &ctx[3]));
	expect_ok(&ctx[3], FI_RMA | FI_READ);
	if (memcmp(aread, want, 500) != 0 || memcmp(aread + 1000, want + 500, 13) != 0 ||
	    memcmp(aread + 2000, want + 513, 500) != 0)
		fail("writemsg of 3 iovs / readv of 3 iovs differ");
	/* inject: the buffer is free on return; a read later finds the old bytes */
	memset(abuf, 0x5a, 64);
	POST(fi_inject_write(ep, abuf, 64, peer, win.addr, win.key));
	memset(abuf, 0, 64);
	POST(fi_read(ep, aread, 64, NULL, peer, win.addr, win.key, &ctx[4]));
	expect_ok(&ctx[4], FI_RMA | FI_READ);
	for (int i = 0; i < 64; i++)
		if (aread[i] != 0x5a)
			fail("inject_write: byte %d is %#x", i, aread[i]);
	/* remote CQ data on writes only (fi_writedata: test_fi_fence.c) */
	CHECK_RC(fi_readmsg(ep, &m, FI_REMOTE_CQ_DATA), -FI_EOPNOTSUPP);
	riov.len = 1;
	m.rma_iov_count = 2;
	CHECK_RC(fi_writemsg(ep, &m, 0), -FI_EINVAL); /* rma_iov_limit 1 */
}

/* A: refusals (nothing written, B checks), FI_EACCES error entries; the read-only region. */
static void
a_refusals(const struct region *w, const struct region *r, const struct region *d)
{
	struct region win = *w, ro = *r, dead = *d;
	int ctx[2];

	sync_step(200);
	sync_step(-20); /* B marked the bytes the refused writes aim at */

	/* refusals: nothing written (B checks), FI_EACCES error entries */
	memset(abuf, 0xab, 64);
	POST(fi_write(ep, abuf, 8, NULL, peer, win.addr, win.key ^ 0x10000, &ctx[0]));
	expect_err(&ctx[0], FI_EACCES);
	POST(fi_write(ep, abuf, 8, NULL, peer, ro.addr, ro.key, &ctx[0]));
	expect_err(&ctx[0], FI_EACCES);
	POST(fi_write(ep, abuf, 2, NULL, peer, win.addr + WIN - 1, win.key, &ctx[0]));
	expect_err(&ctx[0], FI_EACCES);
	POST(fi_read(ep, aread, 2, NULL, peer, ro.addr + RO_LEN - 1, ro.key, &ctx[0]));
	expect_err(&ctx[0], FI_EACCES);
	POST(fi_write(ep, abuf, 8, NULL, peer, UINT64_MAX - 3, win.key, &ctx[0]));
	expect_err(&ctx[0], FI_EACCES);
	POST(fi_write(ep, abuf, 8, NULL, peer, dead.addr, dead.key, &ctx[0]));
	expect_err(&ctx[0], FI_EACCES);
	/* the read-only region reads */
	POST(fi_read(ep, aread, RO_LEN, NULL, peer, ro.addr, ro.key, &ctx[1]));
	expect_ok(&ctx[1], FI_RMA | FI_READ);
	for (size_t i = 0; i < RO_LEN; i++)
		if (aread[i] != (uint8_t)(i ^ 0x3c))
			fail("read-only region byte %zu", i);
	sync_step(300);
	sync_step(-50); /* B set the start values */
}

/* A: atomics on the 64-bit words at win.addr + 0 .. and 32-bit at + 64 (B set them), and
 * what is refused. */
static void
a_atomics(const struct region *w, const struct region *r)
{
	struct region win = *w, ro = *r;
	uint64_t res, cmp, op64;
	uint32_t res32, op32;
	size_t count;
	int ctx[4];

	/* atomics on the 64-bit words at win.addr + 0 .. and 32-bit at + 64 (B set them) */
	op64 = 5;
	POST(fi_fetch_atomic(ep, &op64, 1, NULL, &res, NULL, peer, win.addr, win.key, FI_UINT64,
			     FI_SUM, &ctx[0]));
	expect_ok(&ctx[0], FI_ATOMIC | FI_READ);
	if (res != 1000)
		fail("fetch sum: old %" PRIu64, res);
	op64 = 77;
	POST(fi_fetch_atomic(ep, &op64, 1, NULL, &res, NULL, peer, win.addr, win.key, FI_UINT64,
			     FI_ATOMIC_WRITE, &ctx[0]));
	expect_ok(&ctx[0], FI_ATOMIC | FI_READ);
	if (res != 1005)
		fail("swap: old %" PRIu64, res);
	cmp = 77;
	op64 = 0xfeedface12345678ULL;
	POST(fi_compare_atomic(ep, &op64, 1, NULL, &cmp, NULL, &res, NULL, peer, win.addr, win.key,
			       FI_UINT64, FI_CSWAP, &ctx[0]));
	expect_ok(&ctx[0], FI_ATOMIC | FI_READ);
	if (res != 77)
		fail("cswap hit: old %" PRIu64, res);
	cmp = 1;
	op64 = 2;
	POST(fi_compare_atomic(ep, &op64, 1, NULL, &cmp, NULL, &res, NULL, peer, win.addr, win.key,
			       FI_INT64, FI_CSWAP, &ctx[0]));
	expect_ok(&ctx[0], FI_ATOMIC | FI_READ);
	if (res != 0xfeedface12345678ULL)
		fail("cswap miss: old %#" PRIx64, res);
	POST(fi_fetch_atomic(ep, NULL, 1, NULL, &res, NULL, peer, win.addr, win.key, FI_UINT64,
			     FI_ATOMIC_READ, &ctx[0]));
	expect_ok(&ctx[0], FI_ATOMIC | FI_READ);
	if (res != 0xfeedface12345678ULL)
		fail("atomic read: %#" PRIx64, res);
	op64 = 0xff;
	POST(fi_atomic(ep, &op64, 1, NULL, peer, win.addr + 8, win.key, FI_UINT64, FI_BOR,
		       &ctx[1]));
	expect_ok(&ctx[1], FI_ATOMIC | FI_WRITE);
	op64 = 0x0f;
	POST(fi_atomic(ep, &op64, 1, NULL, peer, win.addr + 8, win.key, FI_UINT64, FI_BAND,
		       &ctx[1]));
	expect_ok(&ctx[1], FI_ATOMIC | FI_WRITE);
	op64 = 0x3;
	POST(fi_fetch_atomic(ep, &op64, 1, NULL, &res, NULL, peer, win.addr + 8, win.key, FI_UINT64,
			     FI_BXOR, &ctx[1]));
	expect_ok(&ctx[1], FI_ATOMIC | FI_READ);
	if (res != 0x0f)
		fail("or then and: %#" PRIx64, res);
	op64 = 3;
	POST(fi_fetch_atomic(ep, &op64, 1, NULL, &res, NULL, peer, win.addr + 16, win.key,
			     FI_UINT64, FI_MIN, &ctx[1]));
	expect_ok(&ctx[1], FI_ATOMIC | FI_READ);
	op64 = 1ULL << 63;
	POST(fi_fetch_atomic(ep, &op64, 1, NULL, &res, NULL, peer, win.addr + 16, win.key,
			     FI_UINT64, FI_MAX, &ctx[1]));
	expect_ok(&ctx[1], FI_ATOMIC | FI_READ);
	if (res != 3)
		fail("min: %" PRIu64, res);
	op32 = 0xffffffffu;
	POST(fi_fetch_atomic(ep, &op32, 1, NULL, &res32, NULL, peer, win.addr + 64, win.key,
			     FI_UINT32, FI_SUM, &ctx[2]));
	expect_ok(&ctx[2], FI_ATOMIC | FI_READ);
	if (res32 != 10)
		fail("32-bit sum: old %" PRIu32, res32);
	/* refused: signed min (the engine compares unsigned), two elements, misaligned */
	CHECK_RC(fi_atomic(ep, &op64, 1, NULL, peer, win.addr, win.key, FI_INT64, FI_MIN, NULL),
		 -FI_EOPNOTSUPP);
	CHECK_RC(fi_atomicvalid(ep, FI_INT64, FI_MIN, &count), -FI_EOPNOTSUPP);
	CHECK_RC(fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count), 0);
	if (count != 1)
		fail("fi_atomicvalid count %zu", count);
	CHECK_RC(fi_compare_atomicvalid(ep, FI_UINT64, FI_SUM, &count), -FI_EOPNOTSUPP);
	CHECK_RC(fi_atomic(ep, &op64, 2, NULL, peer, win.addr, win.key, FI_UINT64, FI_SUM, NULL),
		 -FI_EMSGSIZE);
	POST(fi_atomic(ep, &op64, 1, NULL, peer, win.addr + 4, win.key, FI_UINT64, FI_SUM,
		       &ctx[3]));
	expect_err(&ctx[3], FI_EACCES);
	POST(fi_atomic(ep, &op64, 1, NULL, peer, ro.addr, ro.key, FI_UINT64, FI_SUM, &ctx[3]));
	expect_err(&ctx[3], FI_EACCES);
	sync_step(400);
}

static void
run_a(void)
{
	struct region win, ro, dead;
	uint64_t op64;
	int ctx[8];

	get(&win, sizeof(win));
	get(&ro, sizeof(ro));
	get(&dead, sizeof(dead));
	a_sizes(&win);
	a_iovs(&win);
	a_refusals(&win, &ro, &dead);
	a_atomics(&win, &ro);

	/* both add 1 N_ADD times to the word at + 24, A from here, B through itself */
	op64 = 1;
	for (int i = 0; i < N_ADD; i++) {
		POST(fi_atomic(ep, &op64, 1, NULL, peer, win.addr + 24, win.key, FI_UINT64, FI_SUM,
			       &ctx[5]));
		expect_ok(&ctx[5], FI_ATOMIC | FI_WRITE);
	}
	sync_step(500);
	/* every one-sided operation counted once: writes and non-fetching atomics, reads and
	 * fetching atomics, failures in the error counts */
	if (fi_cntr_read(wcntr) != 515 || fi_cntr_readerr(wcntr) != 7 ||
	    fi_cntr_read(rcntr) != 23 || fi_cntr_readerr(rcntr) != 1)
		fail("counters: %" PRIu64 " writes, %" PRIu64 " failed; %" PRIu64 " reads, %" PRIu64
		     " failed",
		     fi_cntr_read(wcntr), fi_cntr_readerr(wcntr), fi_cntr_read(rcntr),
		     fi_cntr_readerr(rcntr));
}

/* ---- B: the target ---- */

static uint8_t *win;

static void
check_window(size_t n, unsigned int seed)
{
	for (size_t i = 0; i < GUARD; i++)
		if (win[i] != 0xcc || win[GUARD + n + i] != 0xcc)
			fail("guard byte touched around a write of %zu B", n);
	for (size_t i = 0; i < n; i++)
		if (win[GUARD + i] != pat(i, seed))
			fail("window byte %zu of a write of %zu B", i, n);
}

static void
run_b(void)
{
	struct fid_mr *mwin, *mro, *mdead;
	struct fi_cq_data_entry e;
	struct region r;
	uint8_t *ro = malloc(RO_LEN), *dead = malloc(4096);
	uint64_t one = 1, key;
	int ctx;

	win = aligned_alloc(4096, WIN);
	if (win == NULL || ro == NULL || dead == NULL)
		fail("malloc");
	for (size_t i = 0; i < RO_LEN; i++)
		ro[i] = (uint8_t)(i ^ 0x3c);
	key = 0; /* offset mode: requested keys, 0 among them */
	CHECK_RC(fi_mr_reg(domain, win, WIN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mwin,
			   NULL),
		 0);
	CHECK_RC(fi_mr_reg(domain, ro, RO_LEN, FI_REMOTE_READ, 0, 7, 0, &mro, NULL), 0);
	CHECK_RC(fi_mr_reg(domain, dead, 4096, FI_REMOTE_WRITE, 0, 8, 0, &mdead, NULL), 0);
	if (offset_mode) {
		struct fid_mr *dup;

		if (fi_mr_key(mwin) != 0 || fi_mr_key(mro) != 7)
			fail("requested keys not used");
		CHECK_RC(fi_mr_reg(domain, dead, 64, FI_REMOTE_WRITE, 0, 7, 0, &dup, NULL),
			 -FI_ENOKEY);
	} else if (fi_mr_key(mwin) == fi_mr_key(mro)) {
		fail("provider keys not distinct");
	}
	r = region_of(mwin, win);
	put(&r, sizeof(r));
	r = region_of(mro, ro);
	put(&r, sizeof(r));
	r = region_of(mdead, dead);
	put(&r, sizeof(r));
	memset(dead, 0x11, 4096);
	CHECK_RC(fi_close(&mdead->fid), 0); /* A's write through it must fail */

	for (size_t s = 0; s < N_SIZES; s++) {
		size_t n;

		memset(win, 0xcc, 2 * GUARD + sizes[s]);
		sync_step(-1 - (int)s); /* window ready: A may write */
		get(&n, sizeof(n));
		if (n != sizes[s])
			fail("size %zu vs %zu", n, sizes[s]);
		check_window(n, (unsigned int)s);
		sync_step(100 + (int)s);
	}
	sync_step(200);
	memset(win, 0, 64);
	win[WIN - 1] = 0x77;
	sync_step(-20);
	sync_step(300);
	for (size_t i = 0; i < 64; i++)
		if (win[i] != 0)
			fail("a refused write landed at byte %zu", i);
	if (win[WIN - 1] != 0x77)
		fail("a write one byte past the end landed");
	for (size_t i = 0; i < RO_LEN; i++)
		if (ro[i] != (uint8_t)(i ^ 0x3c))
			fail("the read-only region was written");
	for (size_t i = 0; i < 4096; i++)
		if (dead[i] != 0x11)
			fail("a write through a closed registration landed");
	/* atomics' start values */
	((uint64_t *)(void *)win)[0] = 1000;
	((uint64_t *)(void *)win)[1] = 0;
	((uint64_t *)(void *)win)[2] = 3;
	((uint64_t *)(void *)win)[3] = 40;
	((uint32_t *)(void *)win)[16] = 10;
	((uint32_t *)(void *)win)[17] = 0xabababab;
	sync_step(-50);
	sync_step(400);
	if (((uint64_t *)(void *)win)[1] != (0x0fULL ^ 0x3) ||
	    ((uint64_t *)(void *)win)[2] != (1ULL << 63) || ((uint32_t *)(void *)win)[16] != 9 ||
	    ((uint32_t *)(void *)win)[17] != 0xabababab)
		fail("atomic results in the window: %#" PRIx64 " %#" PRIx64 " %u %#x",
		     ((uint64_t *)(void *)win)[1], ((uint64_t *)(void *)win)[2],
		     ((uint32_t *)(void *)win)[16], ((uint32_t *)(void *)win)[17]);
	/* B adds through its own address while A adds through B's */
	{
		uint64_t base = offset_mode ? 0 : (uint64_t)(uintptr_t)win;

		for (int i = 0; i < N_ADD; i++) {
			POST(fi_atomic(ep, &one, 1, NULL, self, base + 24, fi_mr_key(mwin),
				       FI_UINT64, FI_SUM, &ctx));
			expect_ok(&ctx, FI_ATOMIC | FI_WRITE);
		}
	}
	sync_step(500);
	if (((uint64_t *)(void *)win)[3] != 40 + 2 * N_ADD)
		fail("concurrent sums: %" PRIu64 ", expected %d", ((uint64_t *)(void *)win)[3],
		     40 + 2 * N_ADD);
	if (fi_cq_read(cq, &e, 1) != -FI_EAGAIN)
		fail("B's CQ has an entry: the target took part");
	CHECK_RC(fi_close(&mwin->fid), 0);
	CHECK_RC(fi_close(&mro->fid), 0);
	free(ro);
	free(dead);
}

/* ---- jobkey: requested keys cannot be guessed from outside the job ---- */

#define JK_KEY   5 /* the victim's small requested key */
#define JK_LEN   4096
#define JK_TRIES 256

static void teardown(void);

/* How the intruder C keys its domain. */
enum c_how {
	C_OLD,   /* FI_MR_PROV_KEY: the old fixed transform, key ^ TFI_KEY_XOR */
	C_NONE,  /* requested keys, no job secret */
	C_WRONG, /* requested keys under a job secret of its own (auth_key) */
};

/* C: every key 0..JK_TRIES-1 against B's region: each an FI_EACCES error entry. */
static void
c_try_all(enum c_how how)
{
	bool prov = how == C_OLD;
	static uint8_t cbuf[8];
	struct fid_mr *m;
	fi_addr_t b;
	int ctx;

	offset_mode = !prov;
	auth_secret = how == C_WRONG ? "not-the-job-secret-0123456789" : NULL;
	setup();
	CHECK_RC(fi_av_insert(av, peer_name, 1, &b, 0, NULL), 1);
	if (how == C_NONE) /* no job secret: a requested key is refused, not silently guessable */
		CHECK_RC(fi_mr_reg(domain, cbuf, sizeof(cbuf), FI_REMOTE_WRITE, 0, 9, 0, &m, NULL),
			 -FI_ENOKEY);
	if (how == C_WRONG) { /* a secret of its own: its requested keys work for itself */
		CHECK_RC(fi_mr_reg(domain, cbuf, sizeof(cbuf), FI_REMOTE_WRITE, 0, 9, 0, &m, NULL),
			 0);
		CHECK_RC(fi_close(&m->fid), 0);
	}
	memset(cbuf, 0xee, sizeof(cbuf));
	for (uint64_t k = 0; k < JK_TRIES; k++) {
		POST(fi_write(ep, cbuf, sizeof(cbuf), NULL, b, 0, k, &ctx));
		expect_err(&ctx, FI_EACCES);
	}
	teardown();
}

static int
run_c(int rfd)
{
	who = "C (1:2)";
	from_peer = rfd;
	unsetenv("FI_TOROID_JOB_KEY");
	unsetenv("OMPI_MCA_orte_precondition_transports");
	setenv("FI_TOROID_PROC", "2", 1);
	get(&peer_name_len, sizeof(peer_name_len));
	if (peer_name_len > sizeof(peer_name))
		fail("name of %zu B", peer_name_len);
	get(peer_name, peer_name_len);
	c_try_all(C_OLD);
	c_try_all(C_NONE);
	c_try_all(C_WRONG);
	printf("test_fi_rma C (1:2): %d keys tried 3 ways, every one refused\n", JK_TRIES);
	return 0;
}

static void
run_a_jobkey(int cfd, pid_t cpid)
{
	struct region r;
	int st, ctx;

	get(&r, sizeof(r));
	if (r.key != JK_KEY)
		fail("B's key %#" PRIx64 ", expected %d", r.key, JK_KEY);
	to_peer = cfd; /* B's name to the intruder */
	put(&peer_name_len, sizeof(peer_name_len));
	put(peer_name, peer_name_len);
	if (waitpid(cpid, &st, 0) != cpid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("the intruder C wrote into B's region or failed (status %#x)", st);
	to_peer = cfd_b;
	sync_step(1); /* B checks its bytes */
	sync_step(2); /* B checked them */
	for (size_t i = 0; i < 64; i++)
		abuf[i] = pat(i, 9);
	POST(fi_write(ep, abuf, 64, NULL, peer, r.addr, r.key, &ctx));
	expect_ok(&ctx, FI_RMA | FI_WRITE);
	sync_step(3);
	/* again as 1:3 with the job secret given as domain_attr->auth_key, not the environment:
	 * both ways must give the same VNI key */
	teardown();
	auth_secret = strdup(getenv("FI_TOROID_JOB_KEY"));
	unsetenv("FI_TOROID_JOB_KEY");
	setenv("FI_TOROID_PROC", "3", 1);
	setup();
	CHECK_RC(fi_av_insert(av, peer_name, 1, &peer, 0, NULL), 1);
	for (size_t i = 0; i < 64; i++)
		abuf[i] = pat(i, 10);
	POST(fi_write(ep, abuf, 64, NULL, peer, r.addr + 64, r.key, &ctx));
	expect_ok(&ctx, FI_RMA | FI_WRITE);
	sync_step(4);
}

static void
run_b_jobkey(void)
{
	uint8_t *page = aligned_alloc(4096, JK_LEN);
	struct fid_mr *m;
	struct region r;

	if (page == NULL)
		fail("malloc");
	memset(page, 0x11, JK_LEN);
	CHECK_RC(fi_mr_reg(domain, page, JK_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, JK_KEY, 0, &m,
			   NULL),
		 0);
	if (fi_mr_key(m) != JK_KEY)
		fail("requested key %d not used: %#" PRIx64, JK_KEY, fi_mr_key(m));
	r = region_of(m, page);
	put(&r, sizeof(r));
	sync_step(1);
	for (size_t i = 0; i < JK_LEN; i++)
		if (page[i] != 0x11)
			fail("the intruder wrote byte %zu of the region: %#x", i, page[i]);
	sync_step(2);
	sync_step(3); /* A wrote */
	for (size_t i = 0; i < 64; i++)
		if (page[i] != pat(i, 9))
			fail("the job's write: byte %zu is %#x, expected %#x", i, page[i],
			     pat(i, 9));
	for (size_t i = 64; i < JK_LEN; i++)
		if (page[i] != 0x11)
			fail("the job's write touched byte %zu", i);
	sync_step(4); /* A wrote again, its secret given as auth_key */
	for (size_t i = 0; i < 64; i++)
		if (page[64 + i] != pat(i, 10))
			fail("the write keyed by auth_key: byte %zu is %#x, expected %#x", 64 + i,
			     page[64 + i], pat(i, 10));
	for (size_t i = 128; i < JK_LEN; i++)
		if (page[i] != 0x11)
			fail("the write keyed by auth_key touched byte %zu", i);
	CHECK_RC(fi_close(&m->fid), 0);
	free(page);
}

static void
teardown(void)
{
	CHECK_RC(fi_close(&ep->fid), 0);
	if (wcntr != NULL) {
		CHECK_RC(fi_close(&wcntr->fid), 0);
		CHECK_RC(fi_close(&rcntr->fid), 0);
	}
	CHECK_RC(fi_close(&cq->fid), 0);
	CHECK_RC(fi_close(&av->fid), 0);
	CHECK_RC(fi_close(&domain->fid), 0);
	CHECK_RC(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

static int
side(bool is_a)
{
	int ac[2] = {-1, -1};
	pid_t cpid = -1;

	if (jobkey_mode && is_a) { /* the intruder: forked before A opens anything */
		if (pipe(ac) != 0)
			fail("pipe");
		cpid = fork();
		if (cpid < 0)
			fail("fork");
		if (cpid == 0) {
			alarm(100);
			close(ac[1]);
			setenv("FI_TOROID_APP", "1", 1);
			setenv("FI_TOROID_CONNECT_MS", "5000", 1);
			exit(run_c(ac[0]));
		}
		close(ac[0]);
	}
	pair_side_env(is_a, true);
	setup();
	exchange_names();
	cfd_b = to_peer;
	if (jobkey_mode && is_a)
		run_a_jobkey(ac[1], cpid);
	else if (jobkey_mode)
		run_b_jobkey();
	else if (is_a)
		run_a();
	else
		run_b();
	teardown();
	printf("test_fi_rma %s: passed (%s)\n", who,
	       jobkey_mode   ? "job key"
	       : offset_mode ? "offsets"
			     : "addresses");
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "va") != 0 && strcmp(argv[1], "offset") != 0 &&
			  strcmp(argv[1], "jobkey") != 0)) {
		fprintf(stderr, "usage: test_fi_rma va|offset|jobkey\n");
		return 2;
	}
	jobkey_mode = strcmp(argv[1], "jobkey") == 0;
	offset_mode = strcmp(argv[1], "offset") == 0 || jobkey_mode;
	if (jobkey_mode && getenv("FI_TOROID_JOB_KEY") == NULL) {
		fprintf(stderr, "test_fi_rma jobkey: set FI_TOROID_JOB_KEY\n");
		return 77;
	}
	if (pair_env_missing())
		return 77;
	return pair_run(side, 150);
}
