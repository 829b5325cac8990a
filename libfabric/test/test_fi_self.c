/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fi_self: messages an endpoint sends to itself (tfi_self.c, docs/libfabric.md "Messages
 * to itself"), through libfabric's API, two processes (1:0 = A, 1:1 = B) on the toroid-node
 * test_fi.sh started. test_fi.sh runs it with the provider's self path and again with
 * FI_TOROID_SELF=0 (through the engine): the answers must be the same.
 *
 * A, to itself:
 *   posted    a receive from itself, then an 8 KiB fi_tsenddata: the bytes, length, tag and
 *             data, one send and one receive entry
 *   order     tags 2, 3, 2 sent before any receive: receives of tag 2, 2, 3 get the first,
 *             third and second; a tagged receive of every tag takes a tagged message, never
 *             the untagged one sent before it, which fi_recv takes
 *   trunc     100 B into a 50 B receive: FI_ETRUNC, olen 50, the first 50 bytes
 *   probe     FI_PEEK finds a queued message (length, tag) and leaves it; of a tag not sent:
 *             FI_ENOMSG; FI_PEEK | FI_CLAIM takes it away from later probes, FI_CLAIM receives
 *             it; FI_PEEK | FI_DISCARD drops one
 *   cancel    fi_cancel of a receive from itself: an FI_ECANCELED entry with its context
 *   any       a message to itself sent right after a receive from any source takes it; a
 *             receive from any source that the engine holds (a CQ read gave it), then one
 *             from itself: two messages to itself go to them in posting order
 *   fault     an 8 KiB send from an unmapped page fails (-FI_EFAULT or an FI_EFAULT entry) and
 *             leaves the receive from itself posted, which the next send fills; a receive
 *             into a read-only page ends with FI_EFAULT, the page unchanged, its send done
 *   kept      64 KiB, 64 KiB + 1 and 40 MiB sent before any receive: the first is copied and
 *             completes at once, the others stay in their buffers and complete only when a
 *             receive takes them (not checked through the engine); byte-exact in sending order
 *   race      B's message of the same tag already waits at A's engine when A posts a receive
 *             from any source (and reads the CQ), then one from itself, then sends to itself:
 *             the first receive gets B's message, the second A's
 * Every wait is bounded.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define WAIT_MS      20000
#define FI_PAIR_PROG "test_fi_self"
#include "fi_pair.h"

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static fi_addr_t self_addr, peer;

#define POST(call) FI_POST(cq, call)

static void
setup(bool is_a)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .size = 256};
	struct fi_av_attr ava = {.type = FI_AV_MAP};
	char name[64], theirs[64];
	size_t len = sizeof(name);

	if (h == NULL)
		fail("fi_allocinfo");
	pair_side_env(is_a, false);
	h->fabric_attr->prov_name = strdup("toroid");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_REMOTE_CQ_DATA;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0);
	fi_freeinfo(h);
	CHECK_RC(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	CHECK_RC(fi_domain(fabric, info, &domain, NULL), 0);
	CHECK_RC(fi_av_open(domain, &ava, &av, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &cq, NULL), 0);
	CHECK_RC(fi_endpoint(domain, info, &ep, NULL), 0);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	CHECK_RC(fi_enable(ep), 0);
	CHECK_RC(fi_getname(&ep->fid, name, &len), 0);
	CHECK_RC(fi_av_insert(av, name, 1, &self_addr, 0, NULL), 1);
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
	CHECK_RC(fi_close(&cq->fid), 0);
	CHECK_RC(fi_close(&av->fid), 0);
	CHECK_RC(fi_close(&domain->fid), 0);
	CHECK_RC(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

/* The completion with context @p ctx among the next ones (others are kept for later calls):
 * 0 and *e, or the error entry's err with *err. */
#define KEPT 16
static struct fi_cq_tagged_entry kept[KEPT];
static int n_kept;

static void
keep(const struct fi_cq_tagged_entry *x)
{
	if (n_kept == KEPT)
		fail("more than %d completions not asked for", KEPT);
	kept[n_kept++] = *x;
}

static int
take(void *ctx, struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err)
{
	uint64_t t0 = now_ms();

	for (;;) {
		struct fi_cq_tagged_entry x;
		ssize_t n;

		for (int i = 0; i < n_kept; i++)
			if (kept[i].op_context == ctx) {
				*e = kept[i];
				kept[i] = kept[--n_kept];
				return 0;
			}
		n = fi_cq_read(cq, &x, 1);
		if (n == 1) {
			keep(&x);
			continue;
		}
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(cq, err, 0) != 1)
				fail("fi_cq_readerr");
			if (err->op_context != ctx)
				fail("an error entry (%s) of another operation (%p, not %p)",
				     fi_strerror(err->err), err->op_context, ctx);
			return err->err;
		}
		if (n != -FI_EAGAIN)
			fail("fi_cq_read: %zd", n);
		if (now_ms() - t0 > WAIT_MS)
			fail("no completion for context %p in %d ms", ctx, WAIT_MS);
	}
}

/* Receive @p ctx completed with @p len bytes, tag @p tag and the bytes of @p want. */
static void
expect_recv(void *ctx, const void *buf, const void *want, size_t len, uint64_t tag,
	    const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int rc = take(ctx, &e, &err);

	if (rc != 0)
		fail("%s: receive failed: %s", what, fi_strerror(rc));
	if (!(e.flags & FI_RECV) || e.len != len || e.tag != tag)
		fail("%s: flags %#llx len %zu tag %llu, expected a receive of %zu B tag %llu", what,
		     (unsigned long long)e.flags, e.len, (unsigned long long)e.tag, len,
		     (unsigned long long)tag);
	if (memcmp(buf, want, len) != 0)
		fail("%s: the bytes differ", what);
}

static void
expect_send(void *ctx, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int rc = take(ctx, &e, &err);

	if (rc != 0 || !(e.flags & FI_SEND))
		fail("%s: send: %s", what, rc ? fi_strerror(rc) : "not a send entry");
}

/* The probe or error entry of @p ctx is FI_ENOMSG. */
static void
expect_nomsg(void *ctx, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int rc = take(ctx, &e, &err);

	if (rc != FI_ENOMSG)
		fail("%s: %s, expected FI_ENOMSG", what, rc ? fi_strerror(rc) : "found one");
}

static ssize_t
trecv_flags(void *buf, size_t len, fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx,
	    uint64_t flags)
{
	struct iovec v = {.iov_base = buf, .iov_len = len};
	struct fi_msg_tagged m = {.msg_iov = buf ? &v : NULL,
				  .iov_count = buf ? 1 : 0,
				  .addr = src,
				  .tag = tag,
				  .ignore = ignore,
				  .context = ctx};

	return fi_trecvmsg(ep, &m, flags | FI_COMPLETION);
}

static void
part_posted(void)
{
	static uint8_t out[8192], in[8192];
	struct fi_context2 r, s;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 1);
	POST(fi_trecv(ep, in, sizeof(in), NULL, self_addr, 1, 0, &r));
	POST(fi_tsenddata(ep, out, sizeof(out), NULL, 0xabc, self_addr, 1, &s));
	expect_send(&s, "posted");
	if (take(&r, &e, &err) != 0)
		fail("posted: receive failed");
	if (e.len != sizeof(out) || e.tag != 1 || !(e.flags & FI_REMOTE_CQ_DATA) || e.data != 0xabc)
		fail("posted: len %zu tag %llu data %#llx", e.len, (unsigned long long)e.tag,
		     (unsigned long long)e.data);
	if (memcmp(in, out, sizeof(out)) != 0)
		fail("posted: the bytes differ");
}

static void
part_order(void)
{
	char a[100], b[100], c[100], in[3][100], u[10] = "untagged!", t[10] = "tagged 7!", uin[10],
						 tin[10];
	struct fi_context2 s[5], r[5];

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	memset(c, 'c', sizeof(c));
	POST(fi_tsend(ep, a, sizeof(a), NULL, self_addr, 2, &s[0]));
	POST(fi_tsend(ep, b, sizeof(b), NULL, self_addr, 3, &s[1]));
	POST(fi_tsend(ep, c, sizeof(c), NULL, self_addr, 2, &s[2]));
	POST(fi_trecv(ep, in[0], 100, NULL, self_addr, 2, 0, &r[0]));
	POST(fi_trecv(ep, in[1], 100, NULL, FI_ADDR_UNSPEC, 2, 0, &r[1]));
	POST(fi_trecv(ep, in[2], 100, NULL, self_addr, 3, 0, &r[2]));
	for (int i = 0; i < 3; i++)
		expect_send(&s[i], "order");
	expect_recv(&r[0], in[0], a, 100, 2, "order: first of tag 2");
	expect_recv(&r[1], in[1], c, 100, 2, "order: second of tag 2");
	expect_recv(&r[2], in[2], b, 100, 3, "order: tag 3");
	POST(fi_send(ep, u, sizeof(u), NULL, self_addr, &s[3]));
	POST(fi_tsend(ep, t, sizeof(t), NULL, self_addr, 7, &s[4]));
	POST(fi_trecv(ep, tin, sizeof(tin), NULL, self_addr, 0, ~0ULL, &r[3]));
	POST(fi_recv(ep, uin, sizeof(uin), NULL, self_addr, &r[4]));
	expect_send(&s[3], "order");
	expect_send(&s[4], "order");
	expect_recv(&r[3], tin, t, sizeof(t), 7, "order: a tagged receive of every tag");
	expect_recv(&r[4], uin, u, sizeof(u), 0, "order: the untagged message");
}

static void
part_trunc(void)
{
	uint8_t out[100], in[50];
	struct fi_context2 s, r;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int rc;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(200 - i);
	POST(fi_tsend(ep, out, sizeof(out), NULL, self_addr, 4, &s));
	POST(fi_trecv(ep, in, sizeof(in), NULL, self_addr, 4, 0, &r));
	expect_send(&s, "trunc");
	rc = take(&r, &e, &err);
	if (rc != FI_ETRUNC || err.olen != 50)
		fail("trunc: %s, olen %zu; expected FI_ETRUNC, olen 50", fi_strerror(rc), err.olen);
	if (memcmp(in, out, sizeof(in)) != 0)
		fail("trunc: the first 50 bytes differ");
}

static void
part_probe(void)
{
	char m8[33] = "a message of thirty-three bytes!", in[33], m10[5] = "drop";
	struct fi_context2 s[2], p[7], r;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	POST(fi_tsend(ep, m8, sizeof(m8), NULL, self_addr, 8, &s[0]));
	expect_send(&s[0], "probe");
	POST(trecv_flags(NULL, 0, self_addr, 8, 0, &p[0], FI_PEEK));
	if (take(&p[0], &e, &err) != 0 || e.len != sizeof(m8) || e.tag != 8)
		fail("probe: FI_PEEK did not find the message (len %zu)", e.len);
	POST(trecv_flags(NULL, 0, self_addr, 9, 0, &p[1], FI_PEEK));
	expect_nomsg(&p[1], "probe of tag 9");
	POST(trecv_flags(NULL, 0, FI_ADDR_UNSPEC, 8, 0, &p[2], FI_PEEK | FI_CLAIM));
	if (take(&p[2], &e, &err) != 0 || e.len != sizeof(m8))
		fail("probe: FI_PEEK | FI_CLAIM did not find the message");
	POST(trecv_flags(NULL, 0, self_addr, 8, 0, &p[3], FI_PEEK));
	expect_nomsg(&p[3], "probe of a claimed message");
	POST(trecv_flags(in, sizeof(in), self_addr, 8, 0, &p[2], FI_CLAIM));
	expect_recv(&p[2], in, m8, sizeof(m8), 8, "probe: FI_CLAIM");
	POST(fi_tsend(ep, m10, sizeof(m10), NULL, self_addr, 10, &s[1]));
	expect_send(&s[1], "probe");
	POST(trecv_flags(NULL, 0, self_addr, 10, 0, &p[4], FI_PEEK | FI_DISCARD));
	if (take(&p[4], &e, &err) != 0 || e.len != sizeof(m10))
		fail("probe: FI_PEEK | FI_DISCARD did not find the message");
	POST(trecv_flags(NULL, 0, self_addr, 10, 0, &p[5], FI_PEEK));
	expect_nomsg(&p[5], "probe of a discarded message");
	/* cancel */
	POST(fi_trecv(ep, in, sizeof(in), NULL, self_addr, 11, 0, &r));
	CHECK_RC(fi_cancel(&ep->fid, &r), 0);
	if (take(&r, &e, &err) != FI_ECANCELED)
		fail("cancel: no FI_ECANCELED entry");
}

/* Post @p call, which may refuse with -FI_EFAULT or complete @p ctx with FI_EFAULT. */
static void
expect_fault(ssize_t rc, void *ctx, const char *what)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	if (rc == -FI_EFAULT)
		return;
	if (rc != 0)
		fail("%s: %zd (%s), expected -FI_EFAULT", what, rc, fi_strerror((int)-rc));
	if (take(ctx, &e, &err) != FI_EFAULT)
		fail("%s: no FI_EFAULT entry", what);
}

static void
part_fault(void)
{
	static uint8_t out[8192], in[8192];
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *bad = mmap(NULL, 3 * (size_t)pg, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fi_context2 s[3], r[2];

	if (bad == MAP_FAILED)
		fail("mmap");
	memset(bad, 0x5a, 3 * (size_t)pg);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 13 + 5);
	POST(fi_trecv(ep, in, sizeof(in), NULL, self_addr, 14, 0, &r[0]));
	munmap(bad + 2 * pg, (size_t)pg); /* the send's last page */
	expect_fault(fi_tsend(ep, bad + 2 * pg - 4096, 8192, NULL, self_addr, 14, &s[0]), &s[0],
		     "fault: a send from an unmapped page");
	POST(fi_tsend(ep, out, sizeof(out), NULL, self_addr, 14, &s[1]));
	expect_send(&s[1], "fault");
	expect_recv(&r[0], in, out, sizeof(out), 14, "fault: the receive the bad send left");
	/* a read-only receive buffer */
	mprotect(bad, 2 * (size_t)pg, PROT_READ);
	POST(fi_trecv(ep, bad, 2 * (size_t)pg, NULL, self_addr, 15, 0, &r[1]));
	POST(fi_tsend(ep, out, 2 * (size_t)pg, NULL, self_addr, 15, &s[2]));
	expect_fault(0, &r[1], "fault: a receive into a read-only page");
	expect_send(&s[2], "fault: the send into a read-only receive");
	for (long i = 0; i < 2 * pg; i++)
		if (bad[i] != 0x5a)
			fail("fault: the read-only page was written at %ld", i);
	munmap(bad, 2 * (size_t)pg);
}

/* No completion of @p ctx within @p ms (others are kept). */
static void
absent(void *ctx, int ms, const char *what)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		struct fi_cq_tagged_entry x;
		ssize_t n = fi_cq_read(cq, &x, 1);

		if (n == 1 && x.op_context == ctx)
			fail("%s: completed early", what);
		if (n == 1)
			keep(&x);
		else if (n != -FI_EAGAIN)
			fail("%s: fi_cq_read %zd", what, n);
	}
}

static void
part_kept(void)
{
	const size_t len[3] = {65536, 65537, (size_t)40 << 20};
	const char *self = getenv("FI_TOROID_SELF");
	bool on = self == NULL || strcmp(self, "0") != 0;
	struct fi_context2 s[3], r[3];
	uint8_t *out[3], *in[3];

	for (int k = 0; k < 3; k++) {
		out[k] = malloc(len[k]);
		in[k] = malloc(len[k]);
		if (out[k] == NULL || in[k] == NULL)
			fail("malloc");
		for (size_t i = 0; i < len[k]; i++)
			out[k][i] = (uint8_t)(i * (3 + 2 * (size_t)k) + 1);
		POST(fi_tsend(ep, out[k], len[k], NULL, self_addr, 16, &s[k]));
	}
	/* (through the engine, a send this long may wait for its receive) */
	if (on) {
		expect_send(&s[0], "kept: 64 KiB, copied");
		absent(&s[1], 100, "kept: 64 KiB + 1, waiting in its buffer");
		absent(&s[2], 100, "kept: 40 MiB, waiting in its buffer");
	}
	for (int k = 0; k < 3; k++)
		POST(fi_trecv(ep, in[k], len[k], NULL, self_addr, 16, 0, &r[k]));
	for (int k = 0; k < 3; k++) {
		expect_recv(&r[k], in[k], out[k], len[k], 16, "kept: in sending order");
		if (k > 0 || !on)
			expect_send(&s[k], "kept: completed once received");
		free(out[k]);
		free(in[k]);
	}
}

/* One read of the CQ (progress: a receive from any source is given to the engine); an entry
 * found is kept for take(). */
static void
poke(void)
{
	struct fi_cq_tagged_entry x;

	if (fi_cq_read(cq, &x, 1) == 1)
		keep(&x);
}

static void
part_any(void)
{
	char first[6] = "first", second[7] = "second", third[6] = "third", in[3][8];
	struct fi_context2 s[3], r[3];

	/* posted, and a message to itself at once: taken before the engine has the receive */
	POST(fi_trecv(ep, in[2], sizeof(in[2]), NULL, FI_ADDR_UNSPEC, 12, 0, &r[2]));
	POST(fi_tsend(ep, third, sizeof(third), NULL, self_addr, 12, &s[2]));
	expect_send(&s[2], "any");
	expect_recv(&r[2], in[2], third, sizeof(third), 12, "any: at once");
	/* the engine has the receive from any source: withdrawn for the first message */
	POST(fi_trecv(ep, in[0], sizeof(in[0]), NULL, FI_ADDR_UNSPEC, 12, 0, &r[0]));
	poke();
	POST(fi_trecv(ep, in[1], sizeof(in[1]), NULL, self_addr, 12, 0, &r[1]));
	POST(fi_tsend(ep, first, sizeof(first), NULL, self_addr, 12, &s[0]));
	POST(fi_tsend(ep, second, sizeof(second), NULL, self_addr, 12, &s[1]));
	expect_send(&s[0], "any");
	expect_send(&s[1], "any");
	expect_recv(&r[0], in[0], first, sizeof(first), 12, "any: the receive from any source");
	expect_recv(&r[1], in[1], second, sizeof(second), 12, "any: the receive from itself");
}

static void
part_race(void)
{
	char mine[5] = "self", theirs[6] = "fromB", in[2][8];
	struct fi_context2 s, r[2];

	sync_step(1); /* B's message waits at A's engine */
	POST(fi_trecv(ep, in[0], sizeof(in[0]), NULL, FI_ADDR_UNSPEC, 13, 0, &r[0]));
	poke(); /* given to the engine, which has B's message for it */
	POST(fi_trecv(ep, in[1], sizeof(in[1]), NULL, self_addr, 13, 0, &r[1]));
	POST(fi_tsend(ep, mine, sizeof(mine), NULL, self_addr, 13, &s));
	expect_send(&s, "race");
	expect_recv(&r[0], in[0], theirs, sizeof(theirs), 13, "race: B's message first");
	expect_recv(&r[1], in[1], mine, sizeof(mine), 13, "race: then A's own");
	sync_step(2);
}

/* A receive from any source posted before a probe takes the message the probe would find: the
 * probe (and a claim) must not report it. At an endpoint that sent to itself such a receive is
 * held until the next progress; the probe must not overtake it. */
static void
part_probe_held(void)
{
	char p14[3] = "p1", p15[3] = "p2", in[2][4];
	struct fi_context2 r[2], p[2];

	sync_step(3); /* B's messages of tags 14 and 15 wait at A's engine */
	POST(fi_trecv(ep, in[0], sizeof(in[0]), NULL, FI_ADDR_UNSPEC, 14, 0, &r[0]));
	POST(trecv_flags(NULL, 0, FI_ADDR_UNSPEC, 14, 0, &p[0], FI_PEEK));
	expect_nomsg(&p[0], "probe behind a receive from any source");
	expect_recv(&r[0], in[0], p14, sizeof(p14), 14, "probe_held: the receive");
	POST(fi_trecv(ep, in[1], sizeof(in[1]), NULL, FI_ADDR_UNSPEC, 15, 0, &r[1]));
	POST(trecv_flags(NULL, 0, FI_ADDR_UNSPEC, 15, 0, &p[1], FI_PEEK | FI_CLAIM));
	expect_nomsg(&p[1], "claim behind a receive from any source");
	expect_recv(&r[1], in[1], p15, sizeof(p15), 15, "probe_held: the receive");
	sync_step(4);
}

/* The engine's completions are read in batches as large as the CQ's room; the withdrawal of a
 * receive from any source that hands it a message kept in its sender's buffer ends two
 * operations (the receive and the kept send) for one completion. With the CQ 9 entries short
 * of full, 9 completions come at once: the withdrawal, a send to 1:1 queued behind it, and 1:1's
 * 7 messages. Before, the kept send's entry was written then too: one entry past the CQ's end,
 * which corrupted it (an MPI rank crashed on a request completed twice, or waited for ever on
 * one whose entry was overwritten). Every operation must complete once, with its own context
 * and bytes. */
#define BATCH_FILL 247 /* the CQ holds 256 */
#define BATCH_PEER 7
#define BATCH_BIG  100000
static struct fi_context2 b_fill[BATCH_FILL], b_peer[BATCH_PEER], b_any, b_big, b_note;
static bool b_seen[BATCH_FILL + BATCH_PEER + 3];

/* The index of @p ctx in b_seen, -1 if it is none of the part's. */
static int
batch_index(const void *ctx)
{
	const struct fi_context2 *c = ctx;

	if (c >= b_fill && c < b_fill + BATCH_FILL)
		return (int)(c - b_fill);
	if (c >= b_peer && c < b_peer + BATCH_PEER)
		return BATCH_FILL + (int)(c - b_peer);
	return c == &b_any    ? BATCH_FILL + BATCH_PEER
	       : c == &b_big  ? BATCH_FILL + BATCH_PEER + 1
	       : c == &b_note ? BATCH_FILL + BATCH_PEER + 2
			      : -1;
}

static void
part_batch(void)
{
	static struct fi_cq_tagged_entry got[256];
	char one = 'f', note = 'n', pin[BATCH_PEER][8], fin[BATCH_FILL];
	uint8_t *out = malloc(BATCH_BIG), *in = malloc(BATCH_BIG);
	uint64_t end = now_ms() + WAIT_MS;
	int left = (int)(sizeof(b_seen) / sizeof(b_seen[0]));
	struct fi_context2 r;

	if (out == NULL || in == NULL)
		fail("malloc");
	if (n_kept != 0)
		fail("batch: %d completions left over before", n_kept);
	for (int i = 0; i < BATCH_PEER; i++)
		POST(fi_trecv(ep, pin[i], sizeof(pin[i]), NULL, peer, 20 + (uint64_t)i, 0,
			      &b_peer[i]));
	POST(fi_trecv(ep, in, BATCH_BIG, NULL, FI_ADDR_UNSPEC, 27, 0, &b_any));
	poke(); /* the engine has the receive from any source */
	for (int i = 0; i < BATCH_FILL; i++)
		POST(fi_tsend(ep, &one, 1, NULL, self_addr, 40, &b_fill[i]));
	for (size_t i = 0; i < BATCH_BIG; i++)
		out[i] = (uint8_t)(i * 7 + 3);
	/* kept in its buffer (over 64 KiB); the receive from any source is withdrawn for it */
	POST(fi_tsend(ep, out, BATCH_BIG, NULL, self_addr, 27, &b_big));
	POST(fi_tsend(ep, &note, 1, NULL, peer, 50, &b_note)); /* behind the withdrawal */
	sync_step(5); /* 1:1 got the note, sent its 7 messages, saw them complete */
	while (left > 0) {
		ssize_t n = fi_cq_read(cq, got, 256);

		if (n == -FI_EAGAIN && now_ms() > end)
			fail("batch: %d operations not completed in %d ms", left, WAIT_MS);
		if (n == -FI_EAGAIN)
			continue;
		if (n < 0)
			fail("batch: fi_cq_read %zd (%s)", n, fi_strerror((int)-n));
		for (ssize_t k = 0; k < n; k++) {
			int i = batch_index(got[k].op_context);

			if (i < 0 || b_seen[i])
				fail("batch: an entry of %s context %p",
				     i < 0 ? "an unknown" : "an already completed",
				     got[k].op_context);
			b_seen[i] = true;
			left--;
			if (i >= BATCH_FILL && i < BATCH_FILL + BATCH_PEER) {
				char want[8] = {0};

				snprintf(want, sizeof(want), "peer%d", i - BATCH_FILL);
				if (got[k].len != 8 || memcmp(pin[i - BATCH_FILL], want, 8) != 0)
					fail("batch: 1:1's message %d differs: %zu B, tag %llu, "
					     "\"%.8s\"",
					     i - BATCH_FILL, got[k].len,
					     (unsigned long long)got[k].tag, pin[i - BATCH_FILL]);
			}
			if (got[k].op_context == &b_any &&
			    (got[k].len != BATCH_BIG || memcmp(in, out, BATCH_BIG) != 0))
				fail("batch: the kept message differs (%zu B)", got[k].len);
		}
	}
	for (int i = 0; i < BATCH_FILL; i++) { /* the queued messages to itself */
		POST(fi_trecv(ep, &fin[i], 1, NULL, self_addr, 40, 0, &r));
		expect_recv(&r, &fin[i], &one, 1, 40, "batch: a queued message");
	}
	free(out);
	free(in);
}

/* 1:1's side of part_batch: the note, then 7 messages to 1:0, completed. */
static void
batch_peer(void)
{
	char note = 0, pm[BATCH_PEER][8] = {{0}};
	struct fi_context2 r, s[BATCH_PEER];

	POST(fi_trecv(ep, &note, 1, NULL, peer, 50, 0, &r));
	expect_recv(&r, &note, "n", 1, 50, "batch: the note");
	for (int i = 0; i < BATCH_PEER; i++) {
		snprintf(pm[i], sizeof(pm[i]), "peer%c", (char)('0' + i));
		POST(fi_tsend(ep, pm[i], sizeof(pm[i]), NULL, peer, 20 + (uint64_t)i, &s[i]));
	}
	for (int i = 0; i < BATCH_PEER; i++)
		expect_send(&s[i], "batch: 1:1's message");
	sync_step(5);
}

static int
side(bool is_a)
{
	setup(is_a);
	if (is_a) {
		part_posted();
		part_order();
		part_trunc();
		part_probe();
		part_fault();
		part_kept();
		part_any();
		part_race();
		part_probe_held();
		part_batch();
		if (n_kept != 0)
			fail("%d completions left over", n_kept);
	} else {
		char theirs[6] = "fromB", p14[3] = "p1", p15[3] = "p2";
		struct fi_context2 s, t[2];

		POST(fi_tsend(ep, theirs, sizeof(theirs), NULL, peer, 13, &s));
		expect_send(&s, "B");
		sync_step(1);
		sync_step(2);
		POST(fi_tsend(ep, p14, sizeof(p14), NULL, peer, 14, &t[0]));
		POST(fi_tsend(ep, p15, sizeof(p15), NULL, peer, 15, &t[1]));
		expect_send(&t[0], "B");
		expect_send(&t[1], "B");
		sync_step(3);
		sync_step(4);
		batch_peer();
	}
	teardown();
	return 0;
}

int
main(void)
{
	if (pair_env_missing())
		return 77;
	return pair_run(side, 60);
}
