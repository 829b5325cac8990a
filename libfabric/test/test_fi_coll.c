/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fi_coll: FI_COLLECTIVE of the toroid provider (docs/libfabric.md, "Collectives"), two
 * processes, 1:0 = A on engine A (node 0) and 1:1 = B on engine B (node 1) of a 2x1x1 torus,
 * started by test_fi.sh (case coll). The engines combine; each process checks:
 *
 *   fi_query_collective: barrier, allreduce of int64/uint64/double ops, broadcast of bytes
 *   supported; bitwise ops on doubles, FI_PROD, floats and allgather refused;
 *   AV sets that do not fit refused at fi_join_collective: only this endpoint (one node of
 *   two: -FI_ENOSYS), only the peer (-FI_EINVAL), both when the AV holds a third node of
 *   the x line or a second process on A's node (-FI_ENOSYS), no set or one at an unmapped
 *   address (-FI_EINVAL); the whole AV joins, FI_JOIN_COMPLETE on the EQ with the join's
 *   context;
 *   allreduce int64 SUM, MIN, MAX, uint64 BAND, BOR, BXOR (1 MiB), byte-exact against the
 *   values computed here; double SUM, MIN, MAX equal to a + b (the bits) and bit-identical
 *   in both processes; reduce to A; refused posts (unsupported op, type, too many elements,
 *   a root outside the group); a barrier that does not complete before the peer posted it
 *   (and a second one on the group meanwhile: -FI_EAGAIN);
 *   a broadcast of 1001 bytes from A and of 4096 uint64 from B, byte-exact, with guard
 *   bytes after them untouched;
 *   a dead member: B's engine is killed (SIGKILL, pid in TFI_KILL_PID) while A's allreduce
 *   waits for it: A gets a CQ error entry (FI_EHOSTUNREACH) with its context within 30 s.
 *
 * Every completion is FI_COLLECTIVE with the post's context. Every wait is bounded.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define WAIT_MS      20000
#define DEATH_MS     30000
#define FI_PAIR_PROG "test_fi_coll"
#include "fi_pair.h"

#define N     1000
#define N_BIG (1u << 17) /* 1 MiB of 64-bit elements: the limit */

static bool is_a;
static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_eq *eq;
static struct fid_ep *ep;
static fi_addr_t peer, self;
static struct fid_av_set *set;
static struct fid_mc *mc;
static fi_addr_t coll;
static char my_name[64];
static size_t my_name_len;

static int
cq_take(struct fi_cq_data_entry *e, struct fi_cq_err_entry *err, int wait_ms)
{
	return pair_cq_take(cq, e, err, wait_ms);
}

static void
expect_ok(void *ctx)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int rc = cq_take(&e, &err, WAIT_MS);

	if (rc < 0)
		fail("no completion in %d ms", WAIT_MS);
	if (rc != 0)
		fail("completion error %s (prov_errno %d), expected success", fi_strerror(rc),
		     err.prov_errno);
	if (e.op_context != ctx || e.flags != FI_COLLECTIVE)
		fail("completion %p flags %#" PRIx64 ", expected %p FI_COLLECTIVE", e.op_context,
		     e.flags, ctx);
}

#define POST(call) FI_POST(cq, call)

static void
setup(void)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .size = 256};
	struct fi_av_attr ava = {.type = FI_AV_MAP};
	struct fi_eq_attr eqa = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};

	if (h == NULL)
		fail("fi_allocinfo");
	h->fabric_attr->prov_name = strdup("toroid");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_COLLECTIVE;
	CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0);
	fi_freeinfo(h);
	if (!(info->caps & FI_COLLECTIVE))
		fail("fi_getinfo: caps %s", fi_tostr(&info->caps, FI_TYPE_CAPS));
	CHECK_RC(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	CHECK_RC(fi_domain(fabric, info, &domain, NULL), 0);
	CHECK_RC(fi_eq_open(fabric, &eqa, &eq, NULL), 0);
	CHECK_RC(fi_av_open(domain, &ava, &av, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &cq, NULL), 0);
	CHECK_RC(fi_endpoint(domain, info, &ep, NULL), 0);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &eq->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECK_RC(fi_enable(ep), 0);
}

static void
exchange_names(void)
{
	char mine[64], theirs[64];
	size_t len = sizeof(mine);

	CHECK_RC(fi_getname(&ep->fid, mine, &len), 0);
	memcpy(my_name, mine, len);
	my_name_len = len;
	put(&len, sizeof(len));
	put(mine, len);
	get(&len, sizeof(len));
	if (len > sizeof(theirs))
		fail("name of %zu B", len);
	get(theirs, len);
	/* A inserts itself first, B its peer first: the sets must not depend on the order */
	if (is_a) {
		CHECK_RC(fi_av_insert(av, mine, 1, &self, 0, NULL), 1);
		CHECK_RC(fi_av_insert(av, theirs, 1, &peer, 0, NULL), 1);
	} else {
		CHECK_RC(fi_av_insert(av, theirs, 1, &peer, 0, NULL), 1);
		CHECK_RC(fi_av_insert(av, mine, 1, &self, 0, NULL), 1);
	}
}

static void
query(void)
{
	struct fi_collective_attr a;

	memset(&a, 0, sizeof(a));
	a.op = FI_NOOP;
	a.datatype = FI_VOID;
	CHECK_RC(fi_query_collective(domain, FI_BARRIER, &a, 0), 0);
	const enum fi_op iops[] = {FI_SUM, FI_MIN, FI_MAX, FI_BAND, FI_BOR, FI_BXOR};
	for (size_t i = 0; i < sizeof(iops) / sizeof(iops[0]); i++)
		for (int t = 0; t < 2; t++) {
			memset(&a, 0, sizeof(a));
			a.op = iops[i];
			a.datatype = t ? FI_UINT64 : FI_INT64;
			CHECK_RC(fi_query_collective(domain, FI_ALLREDUCE, &a, 0), 0);
			if (a.datatype_attr.count != N_BIG || a.datatype_attr.size != 8)
				fail("allreduce count %zu size %zu", a.datatype_attr.count,
				     a.datatype_attr.size);
			CHECK_RC(fi_query_collective(domain, FI_REDUCE, &a, 0), 0);
		}
	const enum fi_op dops[] = {FI_SUM, FI_MIN, FI_MAX};
	for (size_t i = 0; i < sizeof(dops) / sizeof(dops[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.op = dops[i];
		a.datatype = FI_DOUBLE;
		CHECK_RC(fi_query_collective(domain, FI_ALLREDUCE, &a, 0), 0);
	}
	memset(&a, 0, sizeof(a));
	a.op = FI_BAND;
	a.datatype = FI_DOUBLE;
	CHECK_RC(fi_query_collective(domain, FI_ALLREDUCE, &a, 0), -FI_EOPNOTSUPP);
	a.op = FI_PROD;
	a.datatype = FI_INT64;
	CHECK_RC(fi_query_collective(domain, FI_ALLREDUCE, &a, 0), -FI_EOPNOTSUPP);
	a.op = FI_SUM;
	a.datatype = FI_FLOAT;
	CHECK_RC(fi_query_collective(domain, FI_ALLREDUCE, &a, 0), -FI_EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.datatype = FI_UINT8;
	CHECK_RC(fi_query_collective(domain, FI_BROADCAST, &a, 0), 0);
	if (a.datatype_attr.count != N_BIG * 8 || a.datatype_attr.size != 1)
		fail("broadcast count %zu size %zu", a.datatype_attr.count, a.datatype_attr.size);
	CHECK_RC(fi_query_collective(domain, FI_ALLGATHER, &a, 0), -FI_ENOSYS);
}

static void
join_all(void)
{
	struct fi_av_set_attr sa;
	struct fid_av_set *part;
	struct fi_eq_entry ev;
	fi_addr_t sa_addr;
	uint32_t event;
	int jctx;
	ssize_t n;

	/* a set of one node of the two: the engines have no such group */
	memset(&sa, 0, sizeof(sa));
	sa.start_addr = FI_ADDR_NOTAVAIL;
	CHECK_RC(fi_av_set(av, &sa, &part, NULL), 0);
	CHECK_RC(fi_av_set_insert(part, self), 0);
	CHECK_RC(fi_av_set_addr(part, &sa_addr), 0);
	CHECK_RC(fi_join_collective(ep, sa_addr, part, 0, &mc, &jctx), -FI_ENOSYS);
	/* a set without this endpoint */
	CHECK_RC(fi_av_set_remove(part, self), 0);
	CHECK_RC(fi_av_set_insert(part, peer), 0);
	CHECK_RC(fi_join_collective(ep, sa_addr, part, 0, &mc, &jctx), -FI_EINVAL);
	CHECK_RC(fi_close(&part->fid), 0);
	/* no set, a set at an unmapped address */
	CHECK_RC(fi_join_collective(ep, sa_addr, NULL, 0, &mc, &jctx), -FI_EINVAL);
	void *gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || munmap(gone, 4096) != 0)
		fail("mmap");
	CHECK_RC(fi_join_collective(ep, sa_addr, gone, 0, &mc, &jctx), -FI_EINVAL);
	/* with a third node in the AV (a made-up 1:9 at (2,0,0): the torus is at least 3 long),
	 * the two processes' set is not the whole x line; with a made-up 1:10 on A's node in
	 * it as well, it has as many members as the line has nodes, but two on one node */
	for (int k = 0; k < 2; k++) {
		char fake[64];
		fi_addr_t fa[2];

		if (my_name_len != 16)
			fail("name of %zu B", my_name_len);
		memset(&sa, 0, sizeof(sa));
		sa.start_addr = FI_ADDR_NOTAVAIL;
		CHECK_RC(fi_av_set(av, &sa, &part, NULL), 0);
		CHECK_RC(fi_av_set_insert(part, self), 0);
		CHECK_RC(fi_av_set_insert(part, peer), 0);
		for (int f = 0; f <= k; f++) {
			memcpy(fake, my_name, my_name_len);
			memcpy(fake + 8, &(uint32_t){9 + (uint32_t)f}, 4);
			fake[12] = f == 0 ? 2 : 0; /* x */
			CHECK_RC(fi_av_insert(av, fake, 1, &fa[f], 0, NULL), 1);
		}
		if (k == 1)
			CHECK_RC(fi_av_set_insert(part, fa[1]), 0);
		CHECK_RC(fi_join_collective(ep, sa_addr, part, 0, &mc, &jctx), -FI_ENOSYS);
		CHECK_RC(fi_close(&part->fid), 0);
		CHECK_RC(fi_av_remove(av, fa, (size_t)k + 1, 0), 0);
	}
	if (fi_eq_read(eq, &event, &ev, sizeof(ev), 0) != -FI_EAGAIN)
		fail("an EQ event after refused joins");

	memset(&sa, 0, sizeof(sa));
	sa.flags = FI_UNIVERSE;
	CHECK_RC(fi_av_set(av, &sa, &set, NULL), 0);
	CHECK_RC(fi_av_set_addr(set, &sa_addr), 0);
	CHECK_RC(fi_join_collective(ep, sa_addr, set, 0, &mc, &jctx), 0);
	n = fi_eq_sread(eq, &event, &ev, sizeof(ev), WAIT_MS, 0);
	if (n != (ssize_t)sizeof(ev) || event != FI_JOIN_COMPLETE || ev.fid != &mc->fid ||
	    ev.context != &jctx)
		fail("join: EQ read %zd event %u fid %p ctx %p", n, event, (void *)ev.fid,
		     ev.context);
	coll = fi_mc_addr(mc);
}

/* the contributions: side s (0 A, 1 B), element i */
static int64_t
ival(size_t i, int s)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(s + 1) * 0xBF58476D1CE4E5B9ULL;

	return (int64_t)x >> 2; /* two of them never overflow */
}

static double
dval(size_t i, int s)
{
	uint64_t x = (i + 7) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(s + 3) * 0x94D049BB133111EBULL;

	return ((double)(x >> 11) / (double)(1ULL << 53) - 0.5) * 1e6 / (double)(i % 17 + 1);
}

static int64_t ibuf[N_BIG], ires[N_BIG];
static uint64_t ubuf[N_BIG], ures[N_BIG];
static double dbuf[N], dres[N], dpeer[N];

static void
allreduce_int(void)
{
	int me = is_a ? 0 : 1, ctx;

	for (size_t i = 0; i < N; i++)
		ibuf[i] = ival(i, me);
	/* SUM, MIN, MAX of int64 */
	const enum fi_op ops[] = {FI_SUM, FI_MIN, FI_MAX};
	for (size_t k = 0; k < 3; k++) {
		memset(ires, 0xA5, sizeof(ires));
		POST(fi_allreduce(ep, ibuf, N, NULL, ires, NULL, coll, FI_INT64, ops[k], 0, &ctx));
		expect_ok(&ctx);
		for (size_t i = 0; i < N; i++) {
			int64_t a = ival(i, 0), b = ival(i, 1);
			int64_t want = ops[k] == FI_SUM   ? a + b
				       : ops[k] == FI_MIN ? (a < b ? a : b)
							  : (a > b ? a : b);
			if (ires[i] != want)
				fail("allreduce int64 op %d [%zu] = %" PRId64 ", expected %" PRId64,
				     ops[k], i, ires[i], want);
		}
		if (ires[N] != (int64_t)0xA5A5A5A5A5A5A5A5ULL)
			fail("allreduce wrote past its result");
	}
	/* BAND, BOR, BXOR of uint64 over 1 MiB */
	for (size_t i = 0; i < N_BIG; i++)
		ubuf[i] = (uint64_t)ival(i, me) * 3;
	const enum fi_op bops[] = {FI_BAND, FI_BOR, FI_BXOR};
	for (size_t k = 0; k < 3; k++) {
		POST(fi_allreduce(ep, ubuf, N_BIG, NULL, ures, NULL, coll, FI_UINT64, bops[k], 0,
				  &ctx));
		expect_ok(&ctx);
		for (size_t i = 0; i < N_BIG; i++) {
			uint64_t a = (uint64_t)ival(i, 0) * 3, b = (uint64_t)ival(i, 1) * 3;
			uint64_t want = bops[k] == FI_BAND  ? (a & b)
					: bops[k] == FI_BOR ? (a | b)
							    : (a ^ b);
			if (ures[i] != want)
				fail("allreduce uint64 op %d [%zu] = %#" PRIx64
				     ", expected %#" PRIx64,
				     bops[k], i, ures[i], want);
		}
	}
	/* reduce to A: the sum at A, B's result untouched */
	memset(ires, 0x5A, N * 8);
	POST(fi_reduce(ep, ibuf, N, NULL, ires, NULL, coll, is_a ? self : peer, FI_INT64, FI_SUM, 0,
		       &ctx));
	expect_ok(&ctx);
	if (is_a) {
		for (size_t i = 0; i < N; i++)
			if (ires[i] != ival(i, 0) + ival(i, 1))
				fail("reduce [%zu] = %" PRId64, i, ires[i]);
	} else if (ires[0] != 0x5A5A5A5A5A5A5A5AL) {
		fail("reduce wrote at a member other than the root");
	}
}

static void
allreduce_double(void)
{
	int me = is_a ? 0 : 1, ctx;
	const enum fi_op ops[] = {FI_SUM, FI_MIN, FI_MAX};

	for (size_t i = 0; i < N; i++)
		dbuf[i] = dval(i, me);
	for (size_t k = 0; k < 3; k++) {
		POST(fi_allreduce(ep, dbuf, N, NULL, dres, NULL, coll, FI_DOUBLE, ops[k], 0, &ctx));
		expect_ok(&ctx);
		for (size_t i = 0; i < N; i++) {
			double a = dval(i, 0), b = dval(i, 1);
			double want = ops[k] == FI_SUM   ? a + b
				      : ops[k] == FI_MIN ? (a < b ? a : b)
							 : (a > b ? a : b);
			if (memcmp(&dres[i], &want, 8) != 0)
				fail("allreduce double op %d [%zu] = %a, expected %a", ops[k], i,
				     dres[i], want);
		}
		/* the same bits in both processes */
		put(dres, sizeof(dres));
		get(dpeer, sizeof(dpeer));
		if (memcmp(dres, dpeer, sizeof(dres)) != 0)
			fail("allreduce double op %d: the processes' results differ", ops[k]);
	}
}

static void
refusals(void)
{
	int ctx;

	CHECK_RC(fi_allreduce(ep, dbuf, N, NULL, dres, NULL, coll, FI_DOUBLE, FI_BAND, 0, &ctx),
		 -FI_EOPNOTSUPP);
	CHECK_RC(fi_allreduce(ep, ibuf, N, NULL, ires, NULL, coll, FI_INT64, FI_PROD, 0, &ctx),
		 -FI_EOPNOTSUPP);
	CHECK_RC(fi_allreduce(ep, ibuf, N, NULL, ires, NULL, coll, FI_INT32, FI_SUM, 0, &ctx),
		 -FI_EOPNOTSUPP);
	CHECK_RC(fi_allreduce(ep, ibuf, N_BIG + 1, NULL, ires, NULL, coll, FI_INT64, FI_SUM, 0,
			      &ctx),
		 -FI_EMSGSIZE);
	CHECK_RC(fi_allgather(ep, ibuf, N, NULL, ires, NULL, coll, FI_INT64, 0, &ctx), -FI_ENOSYS);
	CHECK_RC(fi_allreduce(ep, ibuf, N, NULL, ires, NULL, coll + 1, FI_INT64, FI_SUM, 0, &ctx),
		 -FI_EINVAL);
	CHECK_RC(fi_broadcast(ep, ibuf, N, NULL, coll, FI_ADDR_NOTAVAIL, FI_UINT8, 0, &ctx),
		 -FI_EINVAL);
	if (fi_cq_read(cq, &(struct fi_cq_data_entry){0}, 1) != -FI_EAGAIN)
		fail("a completion for a refused post");
}

static void
barrier(void)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int ctx, rc;

	if (is_a) {
		/* A's barrier cannot complete before B posted its own */
		POST(fi_barrier(ep, coll, &ctx));
		/* one collective of a group at a time: the next one waits for this one */
		CHECK_RC(fi_barrier(ep, coll, &ctx), -FI_EAGAIN);
		rc = cq_take(&e, &err, 300);
		if (rc != -1)
			fail("barrier completed (%d) before the peer posted it", rc);
		sync_step(10);
		expect_ok(&ctx);
	} else {
		sync_step(10);
		POST(fi_barrier(ep, coll, &ctx));
		expect_ok(&ctx);
	}
	sync_step(11);
}

static uint8_t bbuf[N_BIG * 8 + 64];

static void
bcast(void)
{
	int ctx;

	/* 1001 bytes from A */
	memset(bbuf, 0xEE, sizeof(bbuf));
	if (is_a)
		for (size_t i = 0; i < 1001; i++)
			bbuf[i] = (uint8_t)(i * 131 + 7);
	POST(fi_broadcast(ep, bbuf, 1001, NULL, coll, is_a ? self : peer, FI_UINT8, 0, &ctx));
	expect_ok(&ctx);
	for (size_t i = 0; i < 1001; i++)
		if (bbuf[i] != (uint8_t)(i * 131 + 7))
			fail("broadcast from A: byte %zu = %#x", i, bbuf[i]);
	for (size_t i = 1001; i < 1001 + 64; i++)
		if (bbuf[i] != 0xEE)
			fail("broadcast from A wrote byte %zu past the end", i);
	/* 4096 uint64 from B */
	memset(bbuf, 0xEE, sizeof(bbuf));
	if (!is_a)
		for (size_t i = 0; i < 4096 * 8; i++)
			bbuf[i] = (uint8_t)(i * 29 + 3);
	POST(fi_broadcast(ep, bbuf, 4096, NULL, coll, is_a ? peer : self, FI_UINT64, 0, &ctx));
	expect_ok(&ctx);
	for (size_t i = 0; i < 4096 * 8; i++)
		if (bbuf[i] != (uint8_t)(i * 29 + 3))
			fail("broadcast from B: byte %zu = %#x", i, bbuf[i]);
	for (size_t i = 4096 * 8; i < 4096 * 8 + 64; i++)
		if (bbuf[i] != 0xEE)
			fail("broadcast from B wrote byte %zu past the end", i);
}

/* A figure, not a check: the time of one 8 B allreduce and one barrier through the
 * provider (a process per engine, the engines on the 2 shared cores). */
static void
timing(void)
{
	int64_t x = 1, y;
	uint64_t t0;
	int ctx;

	sync_step(30);
	t0 = now_ms();
	for (int i = 0; i < 1000; i++) {
		POST(fi_allreduce(ep, &x, 1, NULL, &y, NULL, coll, FI_INT64, FI_SUM, 0, &ctx));
		expect_ok(&ctx);
		if (y != 2)
			fail("allreduce of 1 + 1 = %" PRId64, y);
	}
	printf("test_fi_coll %s: 1000 allreduces of 8 B in %" PRIu64 " ms\n", who, now_ms() - t0);
	t0 = now_ms();
	for (int i = 0; i < 1000; i++) {
		POST(fi_barrier(ep, coll, &ctx));
		expect_ok(&ctx);
	}
	printf("test_fi_coll %s: 1000 barriers in %" PRIu64 " ms\n", who, now_ms() - t0);
}

/* B's engine dies while A's allreduce waits for B: an error entry at A in bounded time. */
static void
death(void)
{
	int ctx;

	if (is_a) {
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;
		uint64_t t0;
		int rc;

		for (size_t i = 0; i < N; i++)
			ibuf[i] = ival(i, 0);
		POST(fi_allreduce(ep, ibuf, N, NULL, ires, NULL, coll, FI_INT64, FI_SUM, 0, &ctx));
		t0 = now_ms();
		sync_step(20); /* B kills its engine now */
		rc = cq_take(&e, &err, DEATH_MS);
		if (rc == -1)
			fail("no completion %d ms after the peer's engine died", DEATH_MS);
		if (rc == 0)
			fail("the allreduce succeeded without the dead member");
		if (rc != FI_EHOSTUNREACH || err.op_context != &ctx || !(err.flags & FI_COLLECTIVE))
			fail("error %s ctx %p flags %#" PRIx64 ", expected %s %p", fi_strerror(rc),
			     err.op_context, err.flags, fi_strerror(FI_EHOSTUNREACH), (void *)&ctx);
		printf("test_fi_coll A: the dead member's collective failed in %" PRIu64 " ms\n",
		       now_ms() - t0);
	} else {
		pid_t eng = (pid_t)atol(getenv("TFI_KILL_PID"));

		sync_step(20);
		if (kill(eng, SIGKILL) != 0)
			fail("kill engine B (%d)", (int)eng);
		printf("test_fi_coll B: killed engine B (pid %d)\n", (int)eng);
		fflush(stdout);
		_exit(0); /* its interface died with the engine */
	}
}

static int
side(bool a)
{
	is_a = a;
	pair_side_env(is_a, true);
	setup();
	exchange_names();
	query();
	join_all();
	sync_step(1);
	allreduce_int();
	allreduce_double();
	refusals();
	barrier();
	bcast();
	timing();
	sync_step(2);
	death();
	CHECK_RC(fi_close(&mc->fid), 0);
	CHECK_RC(fi_close(&set->fid), 0);
	printf("test_fi_coll %s: passed\n", who);
	/* the endpoint's engine peer is dead: no orderly teardown is checked */
	return 0;
}

int
main(void)
{
	if (getenv("FI_PROVIDER_PATH") == NULL || getenv("TOROID_VNI_SOCKET") == NULL ||
	    getenv("TOROID_VNI_SOCKET_B") == NULL || getenv("TFI_KILL_PID") == NULL) {
		fprintf(stderr, "test_fi_coll: set FI_PROVIDER_PATH, TOROID_VNI_SOCKET, "
				"TOROID_VNI_SOCKET_B and TFI_KILL_PID (test_fi.sh coll)\n");
		return 77;
	}
	return pair_run(side, 150);
}
