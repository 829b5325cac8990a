/* SPDX-License-Identifier: BSD-3-Clause */
/* vni-app: the rma mode (vni_app.c describes every mode). */
#include "vni_app.h"

/* ------------------------------------------------------------------------------------------ */
/* rma: one-sided writes, reads and atomics on malloc'd (non-pool) memory */

#define TAG_INFO       0xfeed000000000002ULL
#define TAG_DONE       0xfeed000000000003ULL
#define RMA_GUARD      4096
#define RMA_REGION     ((4u << 20) + 128)
#define RMA_GUARD_BYTE 0xa5
#define RMA_N_AT       8

/* What a process tells its peer about its regions. */
struct rma_info {
	uint64_t va_key, off_key, ro_key, wo_key, at_key, dead_key;
	uint64_t base, at_base;
};

struct trd_vni_addr absent = {TRD_VNI_ANY, TRD_VNI_ANY};
static uint64_t rma_sums_done;

/* Out of contexts or command slots: take one completion, which must be a concurrent sum's. */
static void
rma_reap_sum(void)
{
	struct trd_vni_cpl c;
	int n = trd_vni_wait(vni, &c, 1, WAIT_MS);

	if (n < 0)
		fail("wait: %s", strerror(-n));
	if (c.kind != TRD_VNI_CPL_ATOMIC || c.cookie != 0xa70 || c.status != 0)
		fail("concurrent sum: kind %d cookie %#" PRIx64 " status %d", c.kind, c.cookie,
		     c.status);
	rma_sums_done++;
}

/* One one-sided op, waited for: its completion's status (and the old value of an atomic). */
static int
rma_wait_one(uint64_t cookie, enum trd_vni_cpl_kind kind, uint64_t *old)
{
	struct trd_vni_cpl c;
	int n;

	for (;;) {
		n = trd_vni_wait(vni, &c, 1, WAIT_MS);
		if (n < 0)
			fail("wait: %s", strerror(-n));
		if (c.cookie == cookie)
			break;
		if (c.kind == TRD_VNI_CPL_ATOMIC && c.cookie == 0xa70) {
			if (c.status != 0)
				fail("concurrent sum: %s", strerror(-c.status));
			rma_sums_done++;
			continue;
		}
		fail("unexpected completion kind %d cookie %#" PRIx64 " status %d", c.kind,
		     c.cookie, c.status);
	}
	if (c.kind != kind)
		fail("completion kind %d, expected %d", c.kind, kind);
	if (kind == TRD_VNI_CPL_ATOMIC && c.status == 0) {
		if (!c.has_data)
			fail("atomic completion without its old value");
		*old = c.data;
	}
	return c.status;
}

static int
rma_write(struct trd_vni_addr dst, const void *buf, size_t len, uint64_t raddr, uint64_t key)
{
	static uint64_t ck = 1;
	int rc;

	++ck;
	while ((rc = trd_vni_write(vni, dst, buf, len, raddr, key, -1, ck)) == -EAGAIN)
		rma_reap_sum();
	if (rc != 0)
		fail("trd_vni_write: %s", strerror(-rc));
	rc = rma_wait_one(ck, TRD_VNI_CPL_WRITE, NULL);
	return rc;
}

static int
rma_read(struct trd_vni_addr dst, void *buf, size_t len, uint64_t raddr, uint64_t key)
{
	static uint64_t ck = 1ULL << 32;
	int rc;

	++ck;
	while ((rc = trd_vni_read(vni, dst, buf, len, raddr, key, -1, ck)) == -EAGAIN)
		rma_reap_sum();
	if (rc != 0)
		fail("trd_vni_read: %s", strerror(-rc));
	return rma_wait_one(ck, TRD_VNI_CPL_READ, NULL);
}

static int
rma_atomic(struct trd_vni_addr dst, enum trd_vni_aop op, unsigned int size, uint64_t operand,
	   uint64_t compare, uint64_t raddr, uint64_t key, uint64_t *old)
{
	static uint64_t ck = 2ULL << 32;
	int rc;

	++ck;
	while ((rc = trd_vni_atomic(vni, dst, op, size, operand, compare, raddr, key, -1, ck)) ==
	       -EAGAIN)
		rma_reap_sum();
	if (rc != 0)
		fail("trd_vni_atomic: %s", strerror(-rc));
	return rma_wait_one(ck, TRD_VNI_CPL_ATOMIC, old);
}

static void
expect_atomic(struct trd_vni_addr dst, enum trd_vni_aop op, unsigned int size, uint64_t operand,
	      uint64_t compare, uint64_t raddr, uint64_t key, uint64_t want_old)
{
	uint64_t old = 0;
	int rc = rma_atomic(dst, op, size, operand, compare, raddr, key, &old);

	if (rc != 0)
		fail("atomic op %d size %u: %s", op, size, strerror(-rc));
	if (old != want_old)
		fail("atomic op %d size %u: old value %#" PRIx64 ", expected %#" PRIx64, op, size,
		     old, want_old);
}

static uint64_t
fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Read [lo, hi) of the peer's region back and compare it with what we wrote there (shadow). */
static void
rma_verify(const struct rma_info *pi, const uint8_t *shadow, size_t lo, size_t hi, uint8_t *tmp,
	   const char *what)
{
	int rc = rma_read(peer, tmp, hi - lo, pi->base + lo, pi->va_key);

	if (rc != 0)
		fail("%s: read back [%zu, %zu): %s", what, lo, hi, strerror(-rc));
	for (size_t i = lo; i < hi; i++)
		if (tmp[i - lo] != shadow[i])
			fail("%s: byte %zu of the peer's region is %#x, expected %#x", what, i,
			     tmp[i - lo], shadow[i]);
}

static void
expect_refused(int rc, int want, const char *what)
{
	if (rc != want)
		fail("%s: status %d (%s), expected %d", what, rc, strerror(-rc), want);
}

int
mode_rma(void)
{
	static const size_t rsz[] = {
		1, 2, 7, 8, 63, 64, 65, 1000, 1344, 1345, 4095, 65537, (1u << 20) + 3, 4u << 20};
	uint8_t *big = malloc(RMA_GUARD + RMA_REGION + RMA_GUARD);
	uint8_t *region = big + RMA_GUARD;
	uint8_t *shadow = malloc(RMA_REGION), *src = malloc(4u << 20), *tmp = malloc(RMA_REGION);
	uint8_t *selfbuf = malloc(65536), *selfsrc = malloc(8192);
	uint64_t *at = aligned_alloc(64, RMA_N_AT * sizeof(uint64_t));
	struct rma_info mine, theirs;
	struct trd_vni_cpl c;
	uint64_t dead_key = 0, old, self_key = 0, want_sum;
	bool low;
	int rc;

	if (!big || !shadow || !src || !tmp || !selfbuf || !selfsrc || !at || n_peers != 1)
		fail("rma: out of memory or not one peer");
	peer = peers[0];
	low = self.app < peer.app || (self.app == peer.app && self.proc < peer.proc);
	memset(big, RMA_GUARD_BYTE, RMA_GUARD);
	memset(region + RMA_REGION, RMA_GUARD_BYTE, RMA_GUARD);
	fill(region, RMA_REGION, seed_of(self, self, 99));
	for (unsigned int i = 0; i < RMA_N_AT; i++)
		at[i] = 1000 + i;
	at[3] = 0x1111111122222222ULL;
	memset(&mine, 0, sizeof(mine));
	mine.base = (uint64_t)(uintptr_t)region;
	mine.at_base = (uint64_t)(uintptr_t)at;
	/* registration: bad arguments, a caller's key, a duplicate, an unreachable address */
	if (trd_vni_mr_reg(vni, region, 0, TRD_VNI_MR_REMOTE_READ, &mine.va_key) != -EINVAL ||
	    trd_vni_mr_reg(vni, region, 8, 0x80 | TRD_VNI_MR_REMOTE_READ, &mine.va_key) != -EINVAL)
		fail("mr_reg accepted a bad argument");
	if ((rc = trd_vni_mr_reg(vni, region, RMA_REGION,
				 TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &mine.va_key)) !=
		    0 ||
	    mine.va_key == 0)
		fail("mr_reg: %s", strerror(-rc));
	mine.off_key = 0x5eed0000ULL + self.proc; /* the caller's key */
	if ((rc = trd_vni_mr_reg(vni, region, RMA_REGION,
				 TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE |
					 TRD_VNI_MR_OFFSET,
				 &mine.off_key)) != 0 ||
	    mine.off_key != 0x5eed0000ULL + self.proc)
		fail("mr_reg with the caller's key: %s", strerror(-rc));
	{
		uint64_t k = mine.off_key;

		if (trd_vni_mr_reg(vni, region, 8, TRD_VNI_MR_REMOTE_READ, &k) != -EEXIST)
			fail("mr_reg of a key in use was not -EEXIST");
		k = 0;
		rc = trd_vni_mr_reg(vni, (void *)(uintptr_t)8, 64, TRD_VNI_MR_REMOTE_READ, &k);
		if (rc != -EFAULT && rc != -EPERM)
			fail("mr_reg of unmapped memory: %d, expected -EFAULT", rc);
	}
	if (trd_vni_mr_reg(vni, region, RMA_REGION, TRD_VNI_MR_REMOTE_READ, &mine.ro_key) != 0 ||
	    trd_vni_mr_reg(vni, region, RMA_REGION, TRD_VNI_MR_REMOTE_WRITE, &mine.wo_key) != 0 ||
	    trd_vni_mr_reg(vni, at, RMA_N_AT * sizeof(uint64_t),
			   TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &mine.at_key) != 0 ||
	    trd_vni_mr_reg(vni, region, 64, TRD_VNI_MR_REMOTE_WRITE, &dead_key) != 0 ||
	    trd_vni_mr_reg(vni, selfbuf, 65536, TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE,
			   &self_key) != 0)
		fail("mr_reg failed");
	if (trd_vni_mr_dereg(vni, dead_key) != 0 || trd_vni_mr_dereg(vni, dead_key) != -ENOENT)
		fail("mr_dereg");
	mine.dead_key = dead_key;

	/* tell the peer, learn the peer's (pool buffers: 64 B, sent inline) */
	{
		struct rma_info *in = pool_alloc(sizeof(*in));

		if ((rc = trd_vni_recv(vni, peer, TAG_INFO, 0, in, sizeof(*in), -1, 0xf0)) != 0 ||
		    (rc = trd_vni_send(vni, peer, TAG_INFO, &mine, sizeof(mine), -1, 0xf1)) != 0)
			fail("info: %s", strerror(-rc));
		for (int got = 0; got < 2; got++) {
			if ((rc = trd_vni_wait(vni, &c, 1, WAIT_MS)) < 0)
				fail("wait: %s", strerror(-rc));
			if (c.status != 0)
				fail("info exchange: %s", strerror(-c.status));
		}
		theirs = *in;
		trd_vni_free(vni, in);
	}

	/* concurrent sums: both processes add 1 to the low process's at[0], count times each
	 * (the low one to itself); their completions come while the rest runs */
	{
		struct trd_vni_addr lowp = low ? self : peer;
		uint64_t at0 = low ? mine.at_base : theirs.at_base,
			 atk = low ? mine.at_key : theirs.at_key;

		for (unsigned long i = 0; i < count; i++) {
			while ((rc = trd_vni_atomic(vni, lowp, TRD_VNI_AOP_SUM, 8, 1, 0, at0, atk,
						    -1, 0xa70)) == -EAGAIN)
				rma_reap_sum();
			if (rc != 0)
				fail("atomic: %s", strerror(-rc));
		}
	}

	/* writes of 1 B .. 4 MiB into the peer's malloc'd region, each read back with the bytes
	 * around it: exact, and nothing outside touched */
	fill(shadow, RMA_REGION, seed_of(peer, peer, 99));
	for (unsigned int k = 0; k < sizeof(rsz) / sizeof(rsz[0]); k++) {
		size_t n = rsz[k], o = n == (4u << 20) ? 64 : 33 + k;
		size_t lo = o - 33, hi = o + n + 64 <= RMA_REGION ? o + n + 64 : RMA_REGION;

		uint64_t t0;

		fill(src, n, seed_of(self, peer, (unsigned int)k));
		t0 = now_us();
		rc = rma_write(peer, src, n, theirs.base + o, theirs.va_key);
		if (rc != 0)
			fail("write of %zu B: %s", n, strerror(-rc));
		if (n == (4u << 20)) {
			uint64_t tw = now_us() - t0;

			t0 = now_us();
			if ((rc = rma_read(peer, tmp, n, theirs.base + o, theirs.va_key)) != 0)
				fail("read of %zu B: %s", n, strerror(-rc));
			printf("4 MiB: write %.1f ms (%.0f MB/s), read %.1f ms (%.0f MB/s), while the "
			       "peer runs its own\n",
			       tw / 1e3, (double)n / (double)tw, (now_us() - t0) / 1e3,
			       (double)n / (double)(now_us() - t0));
		}
		memcpy(shadow + o, src, n);
		rma_verify(&theirs, shadow, lo, hi, tmp, "write");
	}
	/* 0 bytes: one empty chunk each way, completed */
	if ((rc = rma_write(peer, NULL, 0, theirs.base + 5, theirs.va_key)) != 0 ||
	    (rc = rma_read(peer, NULL, 0, theirs.base + 5, theirs.va_key)) != 0)
		fail("0-byte write or read: %s", strerror(-rc));
	/* the offset-mode region: write at an offset, read it back both ways */
	fill(src, 5000, seed_of(self, peer, 77));
	if ((rc = rma_write(peer, src, 5000, 12345, theirs.off_key)) != 0)
		fail("offset-mode write: %s", strerror(-rc));
	memcpy(shadow + 12345, src, 5000);
	rma_verify(&theirs, shadow, 12000, 18000, tmp, "offset write");
	if ((rc = rma_read(peer, tmp, 5002, 12344, theirs.off_key)) != 0 ||
	    memcmp(tmp, shadow + 12344, 5002) != 0)
		fail("offset-mode read: %d", rc);
	/* the last byte of the region, through both kinds */
	if ((rc = rma_read(peer, tmp, 1, theirs.base + RMA_REGION - 1, theirs.va_key)) != 0 ||
	    tmp[0] != shadow[RMA_REGION - 1] ||
	    (rc = rma_read(peer, tmp, 1, RMA_REGION - 1, theirs.off_key)) != 0 ||
	    tmp[0] != shadow[RMA_REGION - 1])
		fail("read of the region's last byte: %d", rc);

	/* self: write into and read from this process's own region */
	memset(selfbuf, 0, 65536);
	fill(selfsrc, 5000, seed_of(self, self, 5));
	if ((rc = rma_write(self, selfsrc, 5000, (uint64_t)(uintptr_t)selfbuf + 3, self_key)) !=
		    0 ||
	    memcmp(selfbuf + 3, selfsrc, 5000) != 0 || selfbuf[2] != 0 || selfbuf[5003] != 0)
		fail("write to self: %d", rc);
	if ((rc = rma_read(self, tmp, 5002, (uint64_t)(uintptr_t)selfbuf + 2, self_key)) != 0 ||
	    memcmp(tmp, selfbuf + 2, 5002) != 0)
		fail("read from self: %d", rc);

	/* atomics on the peer's words: 64-bit at[1], 32-bit on the high half of at[3] */
	{
		uint64_t a1 = theirs.at_base + 8, a3h = theirs.at_base + 3 * 8 + 4,
			 a4 = theirs.at_base + 32;
		uint64_t k = theirs.at_key;

		expect_atomic(peer, TRD_VNI_AOP_SUM, 8, 5, 0, a1, k, 1001);
		expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, a1, k, 1006);
		expect_atomic(peer, TRD_VNI_AOP_SWAP, 8, 0x7777777777ULL, 0, a1, k, 1006);
		expect_atomic(peer, TRD_VNI_AOP_CSWAP, 8, 99, 0x7777777777ULL, a1, k,
			      0x7777777777ULL);
		expect_atomic(peer, TRD_VNI_AOP_CSWAP, 8, 1, 5, a1, k, 99); /* miss */
		expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, a1, k, 99);
		expect_atomic(peer, TRD_VNI_AOP_SUM, 4, 0xf0000000u, 0, a3h, k, 0x11111111);
		expect_atomic(peer, TRD_VNI_AOP_READ, 4, 0, 0, a3h, k, 0x01111111);
		expect_atomic(peer, TRD_VNI_AOP_SWAP, 4, 0xabcdef01u, 0, a3h, k, 0x01111111);
		expect_atomic(peer, TRD_VNI_AOP_CSWAP, 4, 7, 0xabcdef01u, a3h, k, 0xabcdef01u);
		expect_atomic(peer, TRD_VNI_AOP_CSWAP, 4, 9, 8, a3h, k, 7); /* miss */
		expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, theirs.at_base + 24, k,
			      0x0000000722222222ULL); /* the low half untouched */
		expect_atomic(peer, TRD_VNI_AOP_MIN, 8, 3, 0, a4, k, 1004);
		expect_atomic(peer, TRD_VNI_AOP_MAX, 8, 50, 0, a4, k, 3);
		expect_atomic(peer, TRD_VNI_AOP_BOR, 8, 0x100, 0, a4, k, 50);
		expect_atomic(peer, TRD_VNI_AOP_BAND, 8, 0x1f0, 0, a4, k, 0x132);
		expect_atomic(peer, TRD_VNI_AOP_BXOR, 8, 0xff, 0, a4, k, 0x130);
		expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, a4, k, 0x1cf);
	}

	/* refusals: -EACCES, nothing written (the whole region is read back at the end) */
	memset(src, 0x5a, 4096);
	expect_refused(rma_write(peer, src, 8, theirs.base, theirs.va_key ^ 0x40), -EACCES,
		       "write with an unknown key");
	expect_refused(rma_write(peer, src, 8, theirs.base, theirs.ro_key), -EACCES,
		       "write to a read-only region");
	expect_refused(rma_read(peer, tmp, 8, theirs.base, theirs.wo_key), -EACCES,
		       "read of a write-only region");
	expect_refused(
		rma_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, theirs.base, theirs.wo_key, &old),
		-EACCES, "atomic read of a write-only region");
	expect_refused(rma_atomic(peer, TRD_VNI_AOP_SUM, 8, 1, 0, theirs.base, theirs.ro_key, &old),
		       -EACCES, "atomic sum on a read-only region");
	expect_refused(rma_write(peer, src, 100, theirs.base + RMA_REGION - 99, theirs.va_key),
		       -EACCES, "write one byte past the end");
	expect_refused(rma_write(peer, src, 4096, theirs.base - 1, theirs.va_key), -EACCES,
		       "write one byte before the start");
	expect_refused(rma_read(peer, tmp, 2, theirs.base + RMA_REGION - 1, theirs.va_key), -EACCES,
		       "read one byte past the end");
	expect_refused(rma_write(peer, src, 2, RMA_REGION - 1, theirs.off_key), -EACCES,
		       "offset write one byte past the end");
	expect_refused(rma_write(peer, src, 1, RMA_REGION, theirs.off_key), -EACCES,
		       "offset write at the end");
	expect_refused(rma_write(peer, src, 16, UINT64_MAX - 7, theirs.va_key), -EACCES,
		       "write that wraps");
	expect_refused(rma_write(peer, src, 16, UINT64_MAX - 7, theirs.off_key), -EACCES,
		       "offset write that wraps");
	expect_refused(rma_read(peer, tmp, 4096, UINT64_MAX - 100, theirs.va_key), -EACCES,
		       "read that wraps");
	expect_refused(
		rma_atomic(peer, TRD_VNI_AOP_SUM, 8, 1, 0, theirs.at_base + 4, theirs.at_key, &old),
		-EACCES, "misaligned 8-byte atomic");
	expect_refused(rma_atomic(peer, TRD_VNI_AOP_SWAP, 4, 1, 0, theirs.at_base + 2,
				  theirs.at_key, &old),
		       -EACCES, "misaligned 4-byte atomic");
	expect_refused(rma_write(peer, src, 8, theirs.base, theirs.dead_key), -EACCES,
		       "write through a deregistered key");
	expect_refused(rma_write(peer, src, 3u << 20, theirs.base + (2u << 20), theirs.va_key),
		       -EACCES, "3 MiB write past the end");
	if (trd_vni_atomic(vni, peer, (enum trd_vni_aop)0, 8, 0, 0, 0, 0, -1, 1) != -EINVAL ||
	    trd_vni_atomic(vni, peer, TRD_VNI_AOP_SUM, 2, 0, 0, 0, 0, -1, 1) != -EINVAL ||
	    trd_vni_write(vni, peer, src, (1u << 30) + 1, 0, 0, -1, 1) != -EINVAL)
		fail("bad one-sided arguments were not -EINVAL");

	/* a process that is not attached: -ECONNREFUSED in bounded time */
	if (absent.app != TRD_VNI_ANY) {
		uint64_t t0 = now_us();

		expect_refused(rma_write(absent, src, 100, 4096, 1), -ECONNREFUSED,
			       "write to a process that is not attached");
		expect_refused(rma_atomic(absent, TRD_VNI_AOP_SUM, 8, 1, 0, 4096, 1, &old),
			       -ECONNREFUSED, "atomic on a process that is not attached");
		printf("not attached: -ECONNREFUSED, %" PRIu64 " ms per op\n",
		       (now_us() - t0) / 2000);
	}

	/* the whole peer region, as we wrote it */
	rma_verify(&theirs, shadow, 0, RMA_REGION, tmp, "final");
	while (rma_sums_done < count)
		rma_reap_sum();

	/* done: each tells the other the hash of what it wrote; each checks its own memory */
	{
		uint64_t *in = pool_alloc(64), out[2] = {fnv(shadow, RMA_REGION), 0};

		if ((rc = trd_vni_recv(vni, peer, TAG_DONE, 0, in, 64, -1, 0xf2)) != 0 ||
		    (rc = trd_vni_send(vni, peer, TAG_DONE, out, sizeof(out), -1, 0xf3)) != 0)
			fail("done: %s", strerror(-rc));
		for (int got = 0; got < 2; got++) {
			if ((rc = trd_vni_wait(vni, &c, 1, WAIT_MS)) < 0)
				fail("wait: %s", strerror(-rc));
			if (c.status != 0)
				fail("done exchange: %s", strerror(-c.status));
		}
		if (in[0] != fnv(region, RMA_REGION))
			fail("this process's region differs from what the peer wrote");
		for (size_t i = 0; i < RMA_GUARD; i++)
			if (big[i] != RMA_GUARD_BYTE || region[RMA_REGION + i] != RMA_GUARD_BYTE)
				fail("guard byte %zu outside the region was written", i);
		if (at[5] != 1005 || at[6] != 1006 || at[7] != 1007 || at[2] != 1002)
			fail("atomic words nobody targets changed");
		want_sum = 1000 + 2 * count;
		if (low && at[0] != want_sum)
			fail("concurrent sums: %" PRIu64 ", expected %" PRIu64, at[0], want_sum);
		/* the high process reads the sum too, then lets the low one go */
		if (low && (rc = trd_vni_recv(vni, peer, TAG_GO, 0, NULL, 0, -1, 0xf4)) != 0)
			fail("recv: %s", strerror(-rc));
		if (!low) {
			expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, theirs.at_base,
				      theirs.at_key, want_sum);
			if ((rc = trd_vni_send(vni, peer, TAG_GO, NULL, 0, -1, 0xf4)) != 0)
				fail("send: %s", strerror(-rc));
		}
		if ((rc = trd_vni_wait(vni, &c, 1, WAIT_MS)) < 0 || c.status != 0)
			fail("go: %d", rc < 0 ? rc : c.status);
		trd_vni_free(vni, in);
	}
	/* the low process outlives the high one: once it detached (its memory still mapped: it
	 * closes its interface before it frees anything), writes to it fail in bounded time */
	if (low) {
		uint64_t t0 = now_us();

		do {
			rc = rma_write(peer, src, 8, 64, theirs.off_key);
			/* -ECONNRESET: the write was on its way when the process detached */
			if (rc != 0 && rc != -ECONNREFUSED && rc != -ECONNRESET)
				fail("write to a process that left: %s", strerror(-rc));
			if (now_us() - t0 > 20000000)
				fail("writes to a process that left still succeed after 20 s");
		} while (rc == 0 || rc == -ECONNRESET);
		printf("peer gone: -ECONNREFUSED %" PRIu64 " ms after its GO\n",
		       (now_us() - t0) / 1000);
	}
	if (trd_vni_mr_dereg(vni, mine.va_key) != 0)
		fail("mr_dereg");
	printf("rma: %zu sizes written and read back, 18 atomics, 17 refusals, %lu + %lu concurrent sums exact\n",
	       sizeof(rsz) / sizeof(rsz[0]), count, count);
	/* big (the region) is not freed: the peer may write into it until this process
	 * detaches (main closes the interface) */
	free(shadow);
	free(src);
	free(tmp);
	free(selfbuf);
	free(selfsrc);
	free(at);
	return 0;
}
