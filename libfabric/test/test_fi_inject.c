/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fi_inject: sends whose bytes leave the application's buffer when they are posted
 * (docs/libfabric.md, "Injects and FI_INJECT_COMPLETE"), two processes (1:0 = A, sending; 1:1
 * = B, receiving) on one toroid-node that test_fi.sh starts with --staging 64K: 32 KiB per
 * process, so a 48 KiB message is never staged and its sender's engine finishes it only once B
 * has posted the receive.
 *
 *   inject     inject_size is 4 KiB; fi_tinject of 897 B, 2 KiB and 4 KiB and fi_tinjectdata
 *              of 4 KiB return at once and write no CQ entry, A overwrites its buffer after
 *              each, B receives the original bytes (tag, length, CQ data); 4 KiB + 1 is
 *              -FI_EMSGSIZE. (Before: inject_size 896, and 897 B was refused.)
 *   early      fi_tsendmsg of 48 KiB with FI_INJECT_COMPLETE completes (context, flags, length)
 *              and is counted by A's FI_SEND counter while B has posted nothing; A overwrites
 *              the buffer; B then receives the original bytes. The same through the
 *              endpoint's op flags (fi_control FI_SETOPSFLAG) and fi_tsend. (Before: no
 *              completion until B posted, the test waits 2 s for it.)
 *   stronger   fi_tsend with the default flags and fi_tsendmsg with FI_INJECT_COMPLETE |
 *              FI_TRANSMIT_COMPLETE: no completion in 300 ms while B has not posted; both once
 *              it has, byte-exact.
 *   pool full  A's pool (FI_TOROID_POOL_SIZE 1 MiB) filled by 80 posted receives of
 *              16 KiB - 64 B and 8 of 4 KiB - 64 B (with their 64-byte headers, less than
 *              4 KiB + 64 B is left): a 4 KiB fi_tinject still succeeds at once (copied to the
 *              heap, sent from process memory) and B receives it byte-exact; the receives are
 *              then cancelled (88 FI_ECANCELED). (Without the heap copy: -FI_EAGAIN for ever.)
 *
 * Every wait is bounded.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define WAIT_MS      20000
#define FI_PAIR_PROG "test_fi_inject"
#include "fi_pair.h"

#define INJ      4096        /* the inject_size expected */
#define LONG     (48u << 10) /* more than B's staging share: never staged */
#define EARLY_MS 2000        /* how long A waits for a completion that needs nothing of B */
#define QUIET_MS 300         /* how long A sees nothing from a send B has not received */
#define N_FILL   88          /* receives that fill a 1 MiB pool: 80 of 16 KiB, 8 of 4 KiB */
#define N_BIG    80
#define FILL_LEN (16384 - 64) /* + the block's 64-byte header: 16 KiB of pool each */
#define FILL_SML (INJ - 64)   /* 4 KiB each: what is left after is less than an inject */
#define FILL_TAG 0x777

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_cntr *cntr; /* A: FI_SEND */
static struct fid_ep *ep;
static fi_addr_t peer;
static uint8_t buf[LONG], buf2[LONG], fill_bufs[N_FILL][FILL_LEN];

static uint8_t
pat(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 9));
}

static void
fill(uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(i, seed);
}

static void
check(const uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(i, seed))
			fail("byte %zu of %zu is %#x, expected %#x (seed %u)", i, n, b[i],
			     pat(i, seed), seed);
}

/* The next CQ entry within @p wait_ms: 1 (into e), 0 none, or an error entry's err. */
static int
take_within(struct fi_cq_tagged_entry *e, int wait_ms)
{
	struct fi_cq_err_entry err;
	uint64_t t0 = now_ms();

	for (;;) {
		ssize_t n = fi_cq_read(cq, e, 1);

		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				fail("fi_cq_readerr");
			e->op_context = err.op_context;
			return -err.err;
		}
		if (n != -FI_EAGAIN)
			fail("fi_cq_read: %zd", n);
		if (now_ms() - t0 > (uint64_t)wait_ms)
			return 0;
	}
}

static void
expect_ok(void *ctx, uint64_t flags, size_t len, int wait_ms, const char *what)
{
	struct fi_cq_tagged_entry e;
	int rc = take_within(&e, wait_ms);

	if (rc == 0)
		fail("%s: no completion in %d ms", what, wait_ms);
	if (rc < 0 || e.op_context != ctx || e.flags != flags || e.len != len)
		fail("%s: completion %p flags %#" PRIx64 " len %zu error %d, expected %p %#" PRIx64
		     " %zu",
		     what, e.op_context, rc < 0 ? 0 : e.flags, rc < 0 ? 0 : e.len, -rc, ctx, flags,
		     len);
}

#define POST(call) FI_POST(cq, call)

static void
setup(bool is_a)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .size = 1024};
	struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr ava = {.type = FI_AV_MAP};
	char name[64], theirs[64];
	size_t len = sizeof(name);

	if (h == NULL)
		fail("fi_allocinfo");
	if (is_a) /* the pool the last part fills */
		setenv("FI_TOROID_POOL_SIZE", "1048576", 1);
	h->fabric_attr->prov_name = strdup("toroid");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_TAGGED | FI_REMOTE_CQ_DATA;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0);
	fi_freeinfo(h);
	if (info->tx_attr->inject_size != INJ)
		fail("inject_size %zu, expected %d", info->tx_attr->inject_size, INJ);
	CHECK_RC(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	CHECK_RC(fi_domain(fabric, info, &domain, NULL), 0);
	CHECK_RC(fi_av_open(domain, &ava, &av, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &cq, NULL), 0);
	CHECK_RC(fi_endpoint(domain, info, &ep, NULL), 0);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	if (is_a) {
		CHECK_RC(fi_cntr_open(domain, &ca, &cntr, NULL), 0);
		CHECK_RC(fi_ep_bind(ep, &cntr->fid, FI_SEND), 0);
	}
	CHECK_RC(fi_enable(ep), 0);
	CHECK_RC(fi_getname(&ep->fid, name, &len), 0);
	put(&len, sizeof(len));
	put(name, len);
	get(&len, sizeof(len));
	if (len != 16)
		fail("name of %zu B", len);
	get(theirs, len);
	CHECK_RC(fi_av_insert(av, theirs, 1, &peer, 0, NULL), 1);
}

static void
teardown(void)
{
	CHECK_RC(fi_close(&ep->fid), 0);
	if (cntr != NULL)
		CHECK_RC(fi_close(&cntr->fid), 0);
	CHECK_RC(fi_close(&cq->fid), 0);
	CHECK_RC(fi_close(&av->fid), 0);
	CHECK_RC(fi_close(&domain->fid), 0);
	CHECK_RC(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

/* A tagged send of @p len bytes from @p b with operation flags @p flags (fi_tsendmsg). */
static ssize_t
tsendmsg(const uint8_t *b, size_t len, uint64_t tag, void *ctx, uint64_t flags)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)b, .iov_len = len};
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = peer, .tag = tag, .context = ctx};

	return fi_tsendmsg(ep, &m, flags);
}

static const size_t inj_sizes[] = {897, 2048, INJ};
#define N_INJ (sizeof(inj_sizes) / sizeof(inj_sizes[0]))

static void
run_a(void)
{
	uint64_t flags, t0;
	int ctx[4];

	/* injects above 896 B: copied when posted, the buffer free on return */
	CHECK_RC(fi_tinject(ep, buf, INJ + 1, peer, 1), -FI_EMSGSIZE);
	for (size_t i = 0; i < N_INJ; i++) {
		fill(buf, inj_sizes[i], 10 + (unsigned int)i);
		POST(fi_tinject(ep, buf, inj_sizes[i], peer, 10 + i));
		memset(buf, 0, inj_sizes[i]);
	}
	fill(buf, INJ, 13);
	POST(fi_tinjectdata(ep, buf, INJ, 0xabc0de, peer, 13));
	memset(buf, 0, INJ);
	sync_step(1); /* B received them */
	/* every inject counted (at its VNI completion), no CQ entry */
	t0 = now_ms();
	while (fi_cntr_read(cntr) != N_INJ + 1)
		if (now_ms() - t0 > WAIT_MS)
			fail("injects counted: %" PRIu64 ", expected %zu", fi_cntr_read(cntr),
			     N_INJ + 1);
	if (take_within(&(struct fi_cq_tagged_entry){0}, 0) != 0)
		fail("an inject wrote a CQ entry");

	/* FI_INJECT_COMPLETE: complete while B has posted nothing */
	fill(buf, LONG, 20);
	POST(tsendmsg(buf, LONG, 20, &ctx[0], FI_INJECT_COMPLETE | FI_COMPLETION));
	if (fi_cntr_read(cntr) != N_INJ + 2)
		fail("FI_INJECT_COMPLETE send not counted when posted: %" PRIu64,
		     fi_cntr_read(cntr));
	expect_ok(&ctx[0], FI_SEND | FI_TAGGED, LONG, EARLY_MS, "fi_tsendmsg FI_INJECT_COMPLETE");
	memset(buf, 0xcc, LONG);
	sync_step(2); /* B received it */
	/* the same through the endpoint's op flags */
	flags = FI_TRANSMIT | FI_INJECT_COMPLETE;
	CHECK_RC(fi_control(&ep->fid, FI_SETOPSFLAG, &flags), 0);
	fill(buf, LONG, 30);
	POST(fi_tsend(ep, buf, LONG, NULL, peer, 30, &ctx[1]));
	expect_ok(&ctx[1], FI_SEND | FI_TAGGED, LONG, EARLY_MS, "fi_tsend, op flags");
	memset(buf, 0xcd, LONG);
	flags = FI_TRANSMIT;
	CHECK_RC(fi_control(&ep->fid, FI_SETOPSFLAG, &flags), 0);
	sync_step(3); /* B received it */

	/* stronger levels: not before B received them */
	fill(buf, LONG, 40);
	fill(buf2, LONG, 41);
	POST(fi_tsend(ep, buf, LONG, NULL, peer, 40, &ctx[2]));
	POST(tsendmsg(buf2, LONG, 41, &ctx[3],
		      FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_COMPLETION));
	if (take_within(&(struct fi_cq_tagged_entry){0}, QUIET_MS) != 0)
		fail("a send completed before its receive was posted");
	sync_step(4); /* B posts both receives */
	{
		struct fi_cq_tagged_entry e[2];

		for (int i = 0; i < 2; i++)
			if (take_within(&e[i], WAIT_MS) != 1)
				fail("stronger: completion %d missing or in error", i);
		if (!((e[0].op_context == &ctx[2] && e[1].op_context == &ctx[3]) ||
		      (e[0].op_context == &ctx[3] && e[1].op_context == &ctx[2])) ||
		    e[0].len != LONG || e[1].len != LONG)
			fail("stronger: completions %p %p", e[0].op_context, e[1].op_context);
	}
	sync_step(5); /* B checked them */

	/* a pool full of posted receives: the inject goes through the heap */
	for (int i = 0; i < N_FILL; i++)
		POST(fi_trecv(ep, fill_bufs[i], i < N_BIG ? FILL_LEN : FILL_SML, NULL, peer,
			      FILL_TAG, 0, &fill_bufs[i]));
	fill(buf, INJ, 50);
	CHECK_RC(fi_tinject(ep, buf, INJ, peer, 50), 0);
	memset(buf, 0, INJ);
	sync_step(6); /* B received it */
	for (int i = 0; i < N_FILL; i++)
		CHECK_RC(fi_cancel(&ep->fid, &fill_bufs[i]), 0);
	for (int i = 0; i < N_FILL; i++) {
		struct fi_cq_tagged_entry e;

		if (take_within(&e, WAIT_MS) != -FI_ECANCELED)
			fail("cancelled receive %d: not FI_ECANCELED", i);
	}
	printf("test_fi_inject A: injects of 897 B .. 4 KiB, FI_INJECT_COMPLETE before the "
	       "receive, stronger levels after it, an inject past a full pool\n");
}

/* B: a tagged receive of @p len bytes, checked against @p seed. */
static void
recv_check(uint64_t tag, size_t len, unsigned int seed, uint64_t flags)
{
	int ctx;

	memset(buf, 0xee, LONG);
	POST(fi_trecv(ep, buf, LONG, NULL, peer, tag, 0, &ctx));
	expect_ok(&ctx, flags, len, WAIT_MS, "receive");
	check(buf, len, seed);
	if (len < LONG && buf[len] != 0xee)
		fail("a %zu-byte receive wrote past its length", len);
}

static void
run_b(void)
{
	int ctx[2];

	sync_step(1);
	for (size_t i = 0; i < N_INJ; i++)
		recv_check(10 + i, inj_sizes[i], 10 + (unsigned int)i, FI_RECV | FI_TAGGED);
	{
		struct fi_cq_tagged_entry e;

		memset(buf, 0xee, LONG);
		POST(fi_trecv(ep, buf, LONG, NULL, peer, 13, 0, &ctx[0]));
		if (take_within(&e, WAIT_MS) != 1 || e.op_context != &ctx[0] || e.len != INJ ||
		    e.flags != (FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA) || e.data != 0xabc0de)
			fail("fi_tinjectdata: len %zu flags %#" PRIx64 " data %#" PRIx64, e.len,
			     e.flags, e.data);
		check(buf, INJ, 13);
	}
	sync_step(2);
	recv_check(20, LONG, 20, FI_RECV | FI_TAGGED);
	sync_step(3);
	recv_check(30, LONG, 30, FI_RECV | FI_TAGGED);
	sync_step(4);
	memset(buf, 0xee, LONG);
	memset(buf2, 0xee, LONG);
	POST(fi_trecv(ep, buf2, LONG, NULL, peer, 41, 0, &ctx[1]));
	POST(fi_trecv(ep, buf, LONG, NULL, peer, 40, 0, &ctx[0]));
	for (int i = 0; i < 2; i++) {
		struct fi_cq_tagged_entry e;

		if (take_within(&e, WAIT_MS) != 1 ||
		    (e.op_context != &ctx[0] && e.op_context != &ctx[1]) || e.len != LONG ||
		    e.flags != (FI_RECV | FI_TAGGED))
			fail("receives 40, 41: completion %p len %zu", e.op_context, e.len);
	}
	check(buf, LONG, 40);
	check(buf2, LONG, 41);
	sync_step(5);
	recv_check(50, INJ, 50, FI_RECV | FI_TAGGED);
	sync_step(6);
	printf("test_fi_inject B: every message byte-exact\n");
}

static int
side(bool is_a)
{
	pair_side_env(is_a, false);
	setup(is_a);
	if (is_a)
		run_a();
	else
		run_b();
	teardown();
	return 0;
}

int
main(void)
{
	if (pair_env_missing())
		return 77;
	return pair_run(side, 120);
}
