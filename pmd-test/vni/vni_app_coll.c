/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vni-app coll: collectives computed by the engines, posted through the VNI (docs/vni.md,
 * "Collectives"). Two nodes (a 2x1x1 torus), one process on each; --peers names the other
 * process (for the GO message of the barrier check). Each process, in the same order:
 *   - allreduce int64 SUM of 20000 and of 1 elements, double SUM of 5000 (bit-exact against
 *     own + the other's, the engines' fixed order), u64 MAX of 64: the result byte-exact;
 *   - broadcast of 3000 elements rooted at node 0, then at node 1: byte-exact at the other;
 *   - barrier: node 0 posts it, a second barrier of the same group fails -EBUSY at once, the
 *     first does not complete within 300 ms while node 1 holds back, then node 1 is told to
 *     post (GO) and both complete;
 *   - refused commands, each one completion with its errno: a source running past the pool's
 *     end (-EINVAL), a misaligned destination (-EINVAL), an unknown op and type and BAND on
 *     doubles (-EINVAL), a root outside the torus (-EINVAL), 131073 elements (-EMSGSIZE);
 *   - a last allreduce, which must still work.
 */
#include <math.h>

#include "vni_app.h"

#define COLL_WAIT_MS 20000

static struct trd_vni_cpl held[64];
static unsigned int n_held;
static unsigned int rank;

/* The completion with @p cookie (others that come first are kept for later). */
static struct trd_vni_cpl
want(uint64_t cookie, int timeout_ms)
{
	uint64_t end = now_us() + (uint64_t)timeout_ms * 1000;

	for (;;) {
		struct trd_vni_cpl c[16];
		int n;

		for (unsigned int i = 0; i < n_held; i++)
			if (held[i].cookie == cookie) {
				struct trd_vni_cpl r = held[i];

				held[i] = held[--n_held];
				return r;
			}
		if (now_us() >= end)
			fail("no completion for cookie %" PRIu64 " within %d ms", cookie,
			     timeout_ms);
		n = trd_vni_wait(vni, c, 16, (int)((end - now_us()) / 1000) + 1);
		if (n == -ETIMEDOUT)
			continue;
		if (n < 0)
			fail("wait: %s", strerror(-n));
		for (int i = 0; i < n; i++) {
			if (n_held == sizeof(held) / sizeof(held[0]))
				fail("too many completions held");
			held[n_held++] = c[i];
		}
	}
}

static void
expect_cpl(uint64_t cookie, int status, uint32_t len, const char *what)
{
	struct trd_vni_cpl c = want(cookie, COLL_WAIT_MS);

	if (c.kind != TRD_VNI_CPL_COLL || c.status != status || c.len != len)
		fail("%s: completion kind %d status %d (%s) len %u, expected status %d len %u",
		     what, (int)c.kind, c.status, strerror(c.status < 0 ? -c.status : 0), c.len,
		     status, len);
}

static void
post_ok(int rc, const char *what)
{
	if (rc != 0)
		fail("%s: post returned %d (%s)", what, rc, strerror(-rc));
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Node @p r's int64 element @p i of vector @p k: in +-2^40, so sums of two never overflow. */
static int64_t
ival(unsigned int r, unsigned int k, size_t i)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)r << 48) ^ ((uint64_t)k << 40) ^ i;

	rnd(&s);
	return (int64_t)(rnd(&s) >> 23) - ((int64_t)1 << 40);
}

static double
dval(unsigned int r, size_t i)
{
	uint64_t s = 0x51ed27e3c4a1ULL ^ ((uint64_t)r << 40) ^ i;

	rnd(&s);
	return (double)(rnd(&s) >> 11) * 0x1p-53 * 1000.0 - 500.0 + 1.0 / (double)(i + 3);
}

static void
allreduce_i64(unsigned int k, size_t n, uint64_t cookie)
{
	int64_t *src = pool_alloc(n * 8), *dst = pool_alloc(n * 8);

	for (size_t i = 0; i < n; i++) {
		src[i] = ival(rank, k, i);
		dst[i] = 0x5555555555555555LL;
	}
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, src, dst, n, -1,
				  cookie),
		"allreduce i64");
	expect_cpl(cookie, 0, (uint32_t)(n * 8), "allreduce i64");
	for (size_t i = 0; i < n; i++)
		if (dst[i] != ival(0, k, i) + ival(1, k, i))
			fail("allreduce i64 of %zu: element %zu is %" PRId64 ", expected %" PRId64,
			     n, i, dst[i], ival(0, k, i) + ival(1, k, i));
	trd_vni_free(vni, src);
	trd_vni_free(vni, dst);
}

static void
allreduce_double(size_t n, uint64_t cookie)
{
	double *src = pool_alloc(n * 8), *dst = pool_alloc(n * 8);

	for (size_t i = 0; i < n; i++) {
		src[i] = dval(rank, i);
		dst[i] = NAN;
	}
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_DOUBLE, src, dst, n, 0,
				  cookie),
		"allreduce double");
	expect_cpl(cookie, 0, (uint32_t)(n * 8), "allreduce double");
	if (trd_vni_doorbell(vni, 0) != 1)
		fail("allreduce double: doorbell 0 is %" PRIu64 ", expected 1",
		     trd_vni_doorbell(vni, 0));
	for (size_t i = 0; i < n; i++) {
		double want_v = dval(0, i) + dval(1, i); /* the root's own, then its child's */

		if (memcmp(&dst[i], &want_v, 8) != 0)
			fail("allreduce double: element %zu is %a, expected %a", i, dst[i], want_v);
	}
	trd_vni_free(vni, src);
	trd_vni_free(vni, dst);
}

static void
allreduce_max(size_t n, uint64_t cookie)
{
	uint64_t *src = pool_alloc(n * 8), *dst = pool_alloc(n * 8);

	for (size_t i = 0; i < n; i++)
		src[i] = (uint64_t)ival(rank, 9, i);
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_MAX, TRD_VNI_COLL_U64, src, dst, n, -1,
				  cookie),
		"allreduce max");
	expect_cpl(cookie, 0, (uint32_t)(n * 8), "allreduce max");
	for (size_t i = 0; i < n; i++) {
		uint64_t a = (uint64_t)ival(0, 9, i), b = (uint64_t)ival(1, 9, i);

		if (dst[i] != (a > b ? a : b))
			fail("allreduce u64 max: element %zu wrong", i);
	}
	trd_vni_free(vni, src);
	trd_vni_free(vni, dst);
}

static void
bcast(unsigned int root, size_t n, uint64_t cookie)
{
	struct trd_vni_group g = {.dims = 0, .root = {(uint8_t)root, 0, 0}};
	uint8_t *buf = pool_alloc(n * 8);
	uint64_t seed = 0xbc000000ULL + root;
	size_t bad = 0;

	if (rank == root)
		fill(buf, n * 8, seed);
	else
		memset(buf, 0xee, n * 8);
	post_ok(trd_vni_bcast(vni, &g, buf, n, -1, cookie), "bcast");
	expect_cpl(cookie, 0, (uint32_t)(n * 8), "bcast");
	if (!check(buf, n * 8, seed, &bad))
		fail("bcast rooted at node %u: byte %zu differs", root, bad);
	trd_vni_free(vni, buf);
}

static void
barrier(void)
{
	if (rank == 0) {
		struct trd_vni_cpl c[4];
		int n;

		post_ok(trd_vni_barrier(vni, NULL, -1, 40), "barrier");
		post_ok(trd_vni_barrier(vni, NULL, -1, 41), "second barrier");
		expect_cpl(41, -EBUSY, 0, "second barrier of the group");
		n = trd_vni_wait(vni, c, 4, 300);
		if (n != -ETIMEDOUT)
			fail("barrier: %d completions (first: cookie %" PRIu64 " status %d) before "
			     "node 1 posted its part",
			     n, n > 0 ? c[0].cookie : 0, n > 0 ? c[0].status : 0);
		post_ok(trd_vni_send(vni, peers[0], TAG_GO, NULL, 0, -1, 42), "GO");
		expect_cpl(40, 0, 0, "barrier");
		if (want(42, COLL_WAIT_MS).status != 0)
			fail("GO send failed");
	} else {
		struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};

		post_ok(trd_vni_recv(vni, any, TAG_GO, 0, NULL, 0, -1, 43), "GO receive");
		if (want(43, COLL_WAIT_MS).status != 0)
			fail("GO receive failed");
		post_ok(trd_vni_barrier(vni, NULL, -1, 40), "barrier");
		expect_cpl(40, 0, 0, "barrier");
	}
}

static void
refused(void)
{
	struct trd_vni_info info;
	uint8_t *a = pool_alloc(4096), *base, *end;
	int64_t off = trd_vni_offset(vni, a);
	struct trd_vni_group far = {.dims = 0, .root = {200, 0, 0}};

	if (off < 0 || trd_vni_info(vni, &info) != 0)
		fail("trd_vni_offset or trd_vni_info failed");
	base = a - off;
	end = base + info.pool_size;
	/* a source that starts in the pool and runs 8 bytes past its end */
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, end - 8, a, 2, -1,
				  50),
		"past the pool");
	expect_cpl(50, -EINVAL, 0, "source past the pool's end");
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, a, a + 1028, 4, -1,
				  51),
		"misaligned");
	expect_cpl(51, -EINVAL, 0, "misaligned destination");
	post_ok(trd_vni_allreduce(vni, NULL, 99, TRD_VNI_COLL_I64, a, a + 1024, 4, -1, 52), "op");
	expect_cpl(52, -EINVAL, 0, "unknown op");
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, 77, a, a + 1024, 4, -1, 53), "type");
	expect_cpl(53, -EINVAL, 0, "unknown type");
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_BAND, TRD_VNI_COLL_DOUBLE, a, a + 1024, 4,
				  -1, 54),
		"band");
	expect_cpl(54, -EINVAL, 0, "BAND on doubles");
	post_ok(trd_vni_allreduce(vni, &far, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, a, a + 1024, 4, -1,
				  55),
		"root");
	expect_cpl(55, -EINVAL, 0, "root outside the torus");
	post_ok(trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, base, base,
				  TRD_VNI_COLL_MAX_COUNT + 1, -1, 56),
		"count");
	expect_cpl(56, -EMSGSIZE, 0, "count over the limit");
	/* refused by the library, no command: outside the pool, a group over 7 */
	if (trd_vni_allreduce(vni, NULL, TRD_VNI_COLL_SUM, TRD_VNI_COLL_I64, &info, a, 1, -1, 57) !=
	    -EINVAL)
		fail("a source outside the pool was posted");
	far.dims = 8;
	if (trd_vni_barrier(vni, &far, -1, 58) != -EINVAL)
		fail("a group mask of 8 was posted");
	trd_vni_free(vni, a);
}

int
mode_coll(void)
{
	struct trd_vni_info info;
	uint64_t t0 = now_us();

	if (trd_vni_info(vni, &info) != 0)
		fail("trd_vni_info failed");
	rank = info.node[0];
	if (n_peers != 1 || info.node[1] != 0 || info.node[2] != 0 || rank > 1)
		fail("coll runs on a 2x1x1 torus with --peers naming the other process");
	allreduce_i64(0, 20000, 1);
	allreduce_i64(1, 1, 2);
	allreduce_double(5000, 3);
	allreduce_max(64, 4);
	bcast(0, 3000, 5);
	bcast(1, 3000, 6);
	barrier();
	refused();
	allreduce_i64(2, 100, 7);
	printf("coll: node %u: allreduce i64 sum 20000 + 1 + 100, double sum 5000 bit-exact, u64 max "
	       "64, bcast 3000 from each node byte-exact, barrier%s, 7 refusals with their "
	       "errno; %.1f ms\n",
	       rank, rank == 0 ? " held 300 ms then passed, a second one -EBUSY" : "",
	       (double)(now_us() - t0) / 1000.0);
	return 0;
}
