/* SPDX-License-Identifier: BSD-3-Clause */
/* vni-app: the claim, eager-hdr and trunc modes (vni_app.c describes every mode). */
#include "vni_app.h"

/* ------------------------------------------------------------------------------------------ */
/* claim */

/* Operations of the claim mode: one interface at a time, completions taken by cookie. */
const char *cl_socket; /* the engine's socket, for the second interface */
bool cl_hdr_refused;
static struct trd_vni_cpl cl_got[64];
static unsigned int cl_n;

static void
cl_reap(struct trd_vni *v)
{
	struct trd_vni_cpl c[8];
	int n = trd_vni_wait(v, c, 8, WAIT_MS);

	if (n < 0)
		fail("wait: %s", strerror(-n));
	for (int i = 0; i < n; i++) {
		if (cl_n == sizeof(cl_got) / sizeof(cl_got[0]))
			fail("too many completions");
		cl_got[cl_n++] = c[i];
	}
}

/* The completion with @p cookie on @p v (waiting for it), which must have @p status. */
static struct trd_vni_cpl
cl_take(struct trd_vni *v, uint64_t cookie, int status)
{
	for (;;) {
		for (unsigned int i = 0; i < cl_n; i++)
			if (cl_got[i].cookie == cookie) {
				struct trd_vni_cpl c = cl_got[i];

				cl_got[i] = cl_got[--cl_n];
				if (c.status != status)
					fail("operation %" PRIu64 ": status %d (%s), expected %d",
					     cookie, c.status, strerror(-c.status), status);
				return c;
			}
		cl_reap(v);
	}
}

static void
cl_expect(const struct trd_vni_cpl *c, const char *what, uint32_t len, uint64_t tag, uint64_t data,
	  struct trd_vni_addr from)
{
	if (c->len != len || c->tag != tag || !c->has_data || c->data != data ||
	    c->peer.app != from.app || c->peer.proc != from.proc)
		fail("%s: %u B tag %#" PRIx64 " data %#" PRIx64 " from %u:%u; expected %u B tag "
		     "%#" PRIx64 " data %#" PRIx64 " from %u:%u",
		     what, c->len, c->tag, c->data, c->peer.app, c->peer.proc, len, tag, data,
		     from.app, from.proc);
}

/* Claim (or with @p drop, discard) the message of tag @p tag on @p v, asking again until it
 * is there (bounded): a long message refused for want of staging shows once its request
 * reached the engine. */
static struct trd_vni_cpl
cl_claim_wait(struct trd_vni *v, uint64_t tag, uint64_t cookie, bool drop)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};
	uint64_t t0 = now_us();

	for (;;) {
		struct trd_vni_cpl c;
		int r = drop ? trd_vni_discard_first(v, any, tag, 0, cookie)
			     : trd_vni_claim(v, any, tag, 0, cookie);

		if (r != 0)
			fail("claim/discard_first: %s", strerror(-r));
		for (;;) {
			unsigned int i;

			for (i = 0; i < cl_n && cl_got[i].cookie != cookie; i++)
				;
			if (i < cl_n) {
				c = cl_got[i];
				cl_got[i] = cl_got[--cl_n];
				break;
			}
			cl_reap(v);
		}
		if (c.status == 0)
			return c;
		if (c.status != -ENOMSG)
			fail("claim of tag %#" PRIx64 ": %s", tag, strerror(-c.status));
		if (now_us() - t0 > 20000000)
			fail("no message of tag %#" PRIx64 " after 20 s", tag);
		usleep(1000); /* its request is on its way: look again */
	}
}

int
mode_claim(void)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};
	const size_t big = 2u << 20; /* longer than the share of 1 MiB staging: refused */
	struct trd_vni_conf c2 = {.socket = cl_socket,
				  .app = peer.app,
				  .proc = peer.proc,
				  .connect_timeout_ms = 10000};
	uint8_t *sb = pool_alloc(big), *rb = pool_alloc(big), *sb2;
	struct trd_vni *v2;
	struct trd_vni_cpl c;
	uint64_t h[8];
	size_t bad = 0;
	int r;

	/* 1. a staged eager message, claimed */
	fill(sb, 64, 0x7001);
	if ((r = trd_vni_senddata(vni, self, 0x7001, 0xd1, sb, 64, -1, 1)) != 0)
		fail("senddata: %s", strerror(-r));
	cl_take(vni, 1, 0); /* staged */
	if ((r = trd_vni_claim(vni, any, 0x7000, 0xff, 2)) != 0)
		fail("claim: %s", strerror(-r));
	c = cl_take(vni, 2, 0);
	cl_expect(&c, "claim of a staged eager message", 64, 0x7001, 0xd1, self);
	if ((h[0] = c.claim) == 0)
		fail("a claim without a handle");
	/* nobody else sees it: a probe, a second claim and a receive */
	if ((r = trd_vni_probe(vni, any, 0x7000, 0xff, 3)) != 0)
		fail("probe: %s", strerror(-r));
	cl_take(vni, 3, -ENOMSG);
	if ((r = trd_vni_claim(vni, any, 0x7000, 0xff, 4)) != 0)
		fail("claim: %s", strerror(-r));
	c = cl_take(vni, 4, -ENOMSG);
	if (c.claim != 0)
		fail("a failed claim with a handle");
	if ((r = trd_vni_recv_mask(vni, any, 0x7001, 0, rb, 64, -1, 5)) != 0)
		fail("recv: %s", strerror(-r));
	if ((r = trd_vni_cancel(vni, 5)) != 0)
		fail("cancel: %s", strerror(-r));
	cl_take(vni, 5, -ECANCELED); /* it never matched the claimed message */
	memset(rb, 0, 64);
	if ((r = trd_vni_recv_claimed(vni, h[0], rb, 64, -1, 6)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	c = cl_take(vni, 6, 0);
	cl_expect(&c, "claimed eager message", 64, 0x7001, 0xd1, self);
	if (c.buf != rb || !check(rb, 64, 0x7001, &bad))
		fail("claimed eager message: byte %zu differs", bad);
	/* used up */
	if ((r = trd_vni_recv_claimed(vni, h[0], rb, 64, -1, 7)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	cl_take(vni, 7, -EINVAL);

	/* 2. a long message staged (granted into staging), claimed while the receive is small */
	fill(sb, 3000, 0x7002);
	if ((r = trd_vni_senddata(vni, self, 0x7002, 0xd2, sb, 3000, -1, 10)) != 0)
		fail("senddata: %s", strerror(-r));
	cl_take(vni, 10, 0);
	if ((r = trd_vni_claim(vni, self, 0x7002, 0, 11)) != 0)
		fail("claim: %s", strerror(-r));
	c = cl_take(vni, 11, 0);
	cl_expect(&c, "claim of a staged long message", 3000, 0x7002, 0xd2, self);
	h[1] = c.claim;
	if (h[1] == 0 || h[1] == h[0])
		fail("handle %#" PRIx64 " after %#" PRIx64, h[1], h[0]);
	if ((r = trd_vni_probe(vni, any, 0, UINT64_MAX, 12)) != 0)
		fail("probe: %s", strerror(-r));
	cl_take(vni, 12, -ENOMSG);
	memset(rb, 0, 3000);
	if ((r = trd_vni_recv_claimed(vni, h[1], rb, 3000, -1, 13)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	c = cl_take(vni, 13, 0);
	cl_expect(&c, "claimed staged long message", 3000, 0x7002, 0xd2, self);
	if (!check(rb, 3000, 0x7002, &bad))
		fail("claimed staged long message: byte %zu differs", bad);

	/* 3. a long message refused for want of staging (its sender waits), claimed, then
	 * received straight into the buffer */
	fill(sb, big, 0x7003);
	if ((r = trd_vni_senddata(vni, self, 0x7003, 0xd3, sb, big, -1, 20)) != 0)
		fail("senddata: %s", strerror(-r));
	c = cl_claim_wait(vni, 0x7003, 21, false);
	cl_expect(&c, "claim of a refused long message", (uint32_t)big, 0x7003, 0xd3, self);
	h[2] = c.claim;
	if ((r = trd_vni_probe(vni, any, 0x7003, 0, 22)) != 0)
		fail("probe: %s", strerror(-r));
	cl_take(vni, 22, -ENOMSG);
	if ((r = trd_vni_discard_first(vni, any, 0x7003, 0, 23)) != 0)
		fail("discard_first: %s", strerror(-r));
	cl_take(vni, 23, -ENOMSG);
	memset(rb, 0, big);
	if ((r = trd_vni_recv_claimed(vni, h[2], rb, big, -1, 24)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	c = cl_take(vni, 24, 0);
	cl_expect(&c, "claimed refused long message", (uint32_t)big, 0x7003, 0xd3, self);
	if (!check(rb, big, 0x7003, &bad))
		fail("claimed refused long message: byte %zu differs", bad);
	cl_take(vni, 20, 0); /* its send */

	/* 4. discards: a claimed staged message, the first staged one, a claimed refused one
	 * and the first refused one; every sender completes with 0 */
	fill(sb, 100, 0x7004);
	for (uint64_t k = 0; k < 2; k++)
		if ((r = trd_vni_senddata(vni, self, 0x7004 + k, 0xd4, sb, 100, -1, 30 + k)) != 0)
			fail("senddata: %s", strerror(-r));
	cl_take(vni, 30, 0);
	cl_take(vni, 31, 0);
	if ((r = trd_vni_claim(vni, any, 0x7004, 0, 32)) != 0)
		fail("claim: %s", strerror(-r));
	h[3] = cl_take(vni, 32, 0).claim;
	if ((r = trd_vni_discard(vni, h[3], 33)) != 0)
		fail("discard: %s", strerror(-r));
	c = cl_take(vni, 33, 0);
	if (c.len != 100 || c.tag != 0x7004)
		fail("discard: %u B tag %#" PRIx64, c.len, c.tag);
	if ((r = trd_vni_recv_claimed(vni, h[3], rb, 100, -1, 34)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	cl_take(vni, 34, -EINVAL); /* dropped */
	if ((r = trd_vni_discard(vni, h[3], 35)) != 0)
		fail("discard: %s", strerror(-r));
	cl_take(vni, 35, -EINVAL);
	if ((r = trd_vni_discard_first(vni, any, 0x7005, 0, 36)) != 0)
		fail("discard_first: %s", strerror(-r));
	c = cl_take(vni, 36, 0);
	if (c.len != 100 || c.tag != 0x7005)
		fail("discard_first: %u B tag %#" PRIx64, c.len, c.tag);
	if ((r = trd_vni_probe(vni, any, 0x7000, 0xff, 37)) != 0)
		fail("probe: %s", strerror(-r));
	cl_take(vni, 37, -ENOMSG);
	for (uint64_t k = 0; k < 2; k++) {
		uint64_t tag = 0x7006 + k, ck = 40 + 10 * k;

		if ((r = trd_vni_send(vni, self, tag, sb, big, -1, ck)) != 0)
			fail("send: %s", strerror(-r));
		c = cl_claim_wait(vni, tag, ck + 1, k == 1);
		if (c.len != big || c.tag != tag)
			fail("refused message: %u B tag %#" PRIx64, c.len, c.tag);
		if (k == 0) {
			if ((r = trd_vni_discard(vni, c.claim, ck + 2)) != 0)
				fail("discard: %s", strerror(-r));
			cl_take(vni, ck + 2, 0);
		}
		cl_take(vni, ck, 0); /* the sender completes: dropped unread */
	}

	/* 5. bad handles */
	if ((r = trd_vni_recv_claimed(vni, 0, rb, 64, -1, 60)) != -EINVAL)
		fail("recv_claimed of handle 0: %d", r);
	if ((r = trd_vni_discard(vni, 0, 60)) != -EINVAL)
		fail("discard of handle 0: %d", r);
	{
		static const uint64_t bogus[] = {1, 0x100000001ULL, UINT64_MAX,
						 0xffffffff0000ffffULL};

		for (unsigned int i = 0; i < 4; i++) {
			if ((r = trd_vni_recv_claimed(vni, bogus[i] ^ (i == 1 ? h[1] : 0), rb, 64,
						      -1, 61)) != 0)
				fail("recv_claimed: %s", strerror(-r));
			cl_take(vni, 61, -EINVAL);
			if ((r = trd_vni_discard(vni, bogus[i], 62)) != 0)
				fail("discard: %s", strerror(-r));
			cl_take(vni, 62, -EINVAL);
		}
	}

	/* 6. another interface: its handles are not ours; it closes holding claims */
	v2 = trd_vni_open(&c2);
	if (v2 == NULL)
		fail("second interface %u:%u: %s", c2.app, c2.proc, strerror(errno));
	sb2 = trd_vni_alloc(v2, 64);
	if (sb2 == NULL)
		fail("alloc");
	fill(sb2, 64, 0x7008);
	if ((r = trd_vni_send(v2, self, 0x7008, sb2, 64, -1, 70)) != 0)
		fail("send: %s", strerror(-r));
	cl_take(v2, 70, 0);
	if ((r = trd_vni_claim(vni, peer, 0x7008, 0, 71)) != 0)
		fail("claim: %s", strerror(-r));
	c = cl_take(vni, 71, 0);
	if (c.peer.app != peer.app || c.peer.proc != peer.proc || c.len != 64)
		fail("claim: from %u:%u %u B", c.peer.app, c.peer.proc, c.len);
	h[4] = c.claim;
	if ((r = trd_vni_recv_claimed(v2, h[4], NULL, 0, -1, 72)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	cl_take(v2, 72, -EINVAL); /* not its claim */
	if ((r = trd_vni_discard(v2, h[4], 73)) != 0)
		fail("discard: %s", strerror(-r));
	cl_take(v2, 73, -EINVAL);
	if ((r = trd_vni_recv_claimed(vni, h[4], rb, 64, -1, 74)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	c = cl_take(vni, 74, 0);
	if (!check(rb, 64, 0x7008, &bad) || c.peer.proc != peer.proc)
		fail("claimed message from the other interface: byte %zu", bad);
	/* v2 claims a staged message and a refused long one, then closes */
	fill(sb, 3000, 0x7009);
	if ((r = trd_vni_send(vni, peer, 0x7009, sb, 3000, -1, 80)) != 0)
		fail("send: %s", strerror(-r));
	cl_take(vni, 80, 0);
	if ((r = trd_vni_claim(v2, any, 0x7009, 0, 81)) != 0)
		fail("claim: %s", strerror(-r));
	cl_take(v2, 81, 0);
	if ((r = trd_vni_send(vni, peer, 0x700a, sb, big, -1, 82)) != 0)
		fail("send: %s", strerror(-r));
	cl_claim_wait(v2, 0x700a, 83, false);
	trd_vni_close(v2);
	/* accepted as its header only, its receiver gone: -ECONNRESET (docs/vni.md); refused
	 * (--hdr-refused), it finds no process any more: -ECONNREFUSED once the engine's
	 * --noproc-ms passed */
	cl_take(vni, 82, cl_hdr_refused ? -ECONNREFUSED : -ECONNRESET);
	if (cl_n != 0 || trd_vni_pending(vni) != 0)
		fail("%u completions left, %u operations pending", cl_n, trd_vni_pending(vni));
	trd_vni_free(vni, sb);
	trd_vni_free(vni, rb);
	printf("claim: staged eager, staged long and refused long messages claimed and received "
	       "byte-exact; discards; bad handles; a close with claims\n");
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* eager-hdr */

/* Probe for tag @p tag on @p v until a message shows (bounded): an eager message kept as its
 * header only shows once its request reached the engine. */
static struct trd_vni_cpl
eh_probe_wait(struct trd_vni *v, uint64_t tag, uint64_t cookie)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};
	uint64_t t0 = now_us();

	for (;;) {
		struct trd_vni_cpl c;
		unsigned int i;
		int r = trd_vni_probe(v, any, tag, 0, cookie);

		if (r != 0)
			fail("probe: %s", strerror(-r));
		for (;;) {
			for (i = 0; i < cl_n && cl_got[i].cookie != cookie; i++)
				;
			if (i < cl_n)
				break;
			cl_reap(v);
		}
		c = cl_got[i];
		cl_got[i] = cl_got[--cl_n];
		if (c.status == 0)
			return c;
		if (c.status != -ENOMSG)
			fail("probe of tag %#" PRIx64 ": %s", tag, strerror(-c.status));
		if (now_us() - t0 > 20000000)
			fail("no message of tag %#" PRIx64 " after 20 s", tag);
		usleep(1000); /* its request is on its way: look again */
	}
}

/* The send with @p cookie must not have completed: its message waits as its header only. */
static void
eh_not_done(uint64_t cookie, const char *what)
{
	struct trd_vni_cpl c[8];
	int n = trd_vni_poll(vni, c, 8);

	for (int i = 0; i < n; i++) {
		if (c[i].cookie == cookie)
			fail("%s: its send completed before its receive (status %d): it was not "
			     "kept as its header only",
			     what, c[i].status);
		cl_got[cl_n++] = c[i];
	}
}

/* eager-hdr: eager messages to itself that find staging full (docs/vni.md, "Unexpected long
 * messages: the header only"); the engine runs with --staging 64K. */
int
mode_eager_hdr(void)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY}, two[2] = {self, self};
	const size_t fill_len = 64u << 10; /* the whole share: every eager one after it waits */
	struct trd_vni_conf c2 = {.socket = cl_socket,
				  .app = peer.app,
				  .proc = peer.proc,
				  .connect_timeout_ms = 10000};
	uint8_t *sb = pool_alloc(fill_len), *rb = pool_alloc(fill_len), *um = malloc(4096);
	struct trd_vni *v2;
	struct trd_vni_cpl c;
	size_t bad = 0;
	int r;

	if (um == NULL)
		fail("malloc");
	/* 0. the share filled by one staged message that is received last */
	fill(sb, fill_len, 0x8000);
	if ((r = trd_vni_send(vni, self, 0x8000, sb, fill_len, -1, 1)) != 0)
		fail("send: %s", strerror(-r));
	cl_take(vni, 1, 0); /* staged */

	/* 1. probed (length, tag, data), then received into a shorter buffer: its first bytes,
	 * nothing past them, -EMSGSIZE with the whole length; the sender succeeds */
	fill(sb, 300, 0x8001);
	if ((r = trd_vni_senddata(vni, self, 0x8001, 0xe1, sb, 300, -1, 10)) != 0)
		fail("senddata: %s", strerror(-r));
	memset(sb, 0, 300); /* copied at the send: the engine keeps its own */
	c = eh_probe_wait(vni, 0x8001, 11);
	cl_expect(&c, "probe of an eager message kept as its header", 300, 0x8001, 0xe1, self);
	eh_not_done(10, "tag 0x8001");
	memset(rb, 0xee, 200);
	if ((r = trd_vni_recv(vni, self, 0x8001, 0, rb, 100, -1, 12)) != 0)
		fail("recv: %s", strerror(-r));
	c = cl_take(vni, 12, -EMSGSIZE);
	cl_expect(&c, "truncated eager message", 300, 0x8001, 0xe1, self);
	if (!check(rb, 100, 0x8001, &bad))
		fail("truncated eager message: byte %zu differs", bad);
	for (unsigned int k = 100; k < 200; k++)
		if (rb[k] != 0xee)
			fail("truncated eager message: byte %u past the receive written", k);
	c = cl_take(vni, 10, 0);
	if (c.len != 300)
		fail("truncated eager message: the send completed with %u B", c.len);

	/* 2. claimed: no probe sees it any more; received byte-exact into process memory */
	fill(sb, 200, 0x8002);
	if ((r = trd_vni_senddata(vni, self, 0x8002, 0xe2, sb, 200, -1, 20)) != 0)
		fail("senddata: %s", strerror(-r));
	c = cl_claim_wait(vni, 0x8002, 21, false);
	cl_expect(&c, "claim of an eager message kept as its header", 200, 0x8002, 0xe2, self);
	eh_not_done(20, "tag 0x8002");
	if ((r = trd_vni_probe(vni, any, 0x8002, 0, 22)) != 0)
		fail("probe: %s", strerror(-r));
	cl_take(vni, 22, -ENOMSG);
	memset(um, 0, 4096);
	if ((r = trd_vni_recv_claimed(vni, c.claim, um, 4096, -1, 23)) != 0)
		fail("recv_claimed: %s", strerror(-r));
	c = cl_take(vni, 23, 0);
	cl_expect(&c, "claimed eager message", 200, 0x8002, 0xe2, self);
	if (!check(um, 200, 0x8002, &bad))
		fail("claimed eager message: byte %zu differs", bad);
	cl_take(vni, 20, 0);

	/* 3. discarded (claimed then dropped; the first one dropped): the senders succeed */
	for (uint64_t k = 0; k < 2; k++)
		if ((r = trd_vni_send(vni, self, 0x8003 + k, sb, 64, -1, 30 + k)) != 0)
			fail("send: %s", strerror(-r));
	c = cl_claim_wait(vni, 0x8003, 32, false);
	if ((r = trd_vni_discard(vni, c.claim, 33)) != 0)
		fail("discard: %s", strerror(-r));
	cl_take(vni, 33, 0);
	cl_take(vni, 30, 0);
	c = cl_claim_wait(vni, 0x8004, 34, true);
	if (c.len != 64 || c.tag != 0x8004)
		fail("discard_first: %u B tag %#" PRIx64, c.len, c.tag);
	cl_take(vni, 31, 0);

	/* 4. a multicast to two destinations (itself twice): each kept as its header, each
	 * received byte-exact; one completion */
	fill(sb, 500, 0x8005);
	if ((r = trd_vni_mcast(vni, two, 2, 0x8005, sb, 500, -1, 40)) != 0)
		fail("mcast: %s", strerror(-r));
	eh_probe_wait(vni, 0x8005, 41);
	for (uint64_t k = 0; k < 2; k++) {
		memset(rb, 0, 500);
		if ((r = trd_vni_recv(vni, self, 0x8005, 0, rb, 500, -1, 42)) != 0)
			fail("recv: %s", strerror(-r));
		c = cl_take(vni, 42, 0);
		if (c.len != 500 || !check(rb, 500, 0x8005, &bad))
			fail("multicast copy %" PRIu64 ": %u B, byte %zu differs", k, c.len, bad);
	}
	cl_take(vni, 40, 0);

	/* 5. three of one tag, 10, 20 and 30 B, matched in send order; a fourth message
	 * behind them (the interface is ordered) shows when all three wait as headers */
	for (uint64_t k = 0; k < 3; k++) {
		fill(sb, 10 * (k + 1), 0x8060 + k);
		if ((r = trd_vni_send(vni, self, 0x8006, sb, 10 * (k + 1), -1, 50 + k)) != 0)
			fail("send: %s", strerror(-r));
	}
	if ((r = trd_vni_send(vni, self, 0x8009, sb, 64, -1, 54)) != 0)
		fail("send: %s", strerror(-r));
	eh_probe_wait(vni, 0x8009, 55);
	for (uint64_t k = 0; k < 3; k++) {
		if ((r = trd_vni_recv(vni, self, 0x8006, 0, rb, 64, -1, 53)) != 0)
			fail("recv: %s", strerror(-r));
		c = cl_take(vni, 53, 0);
		if (c.len != 10 * (k + 1) || !check(rb, c.len, 0x8060 + k, &bad))
			fail("tag 0x8006, receive %" PRIu64 ": %u B (byte %zu), out of send order",
			     k, c.len, bad);
		cl_take(vni, 50 + k, 0);
	}
	if ((r = trd_vni_discard_first(vni, any, 0x8009, 0, 56)) != 0)
		fail("discard_first: %s", strerror(-r));
	cl_take(vni, 56, 0);
	cl_take(vni, 54, 0);

	/* 6. another interface (the area is full: it has no room either) closes holding one:
	 * its sender fails with -ECONNRESET */
	v2 = trd_vni_open(&c2);
	if (v2 == NULL)
		fail("second interface %u:%u: %s", c2.app, c2.proc, strerror(errno));
	if ((r = trd_vni_send(vni, peer, 0x8008, sb, 64, -1, 61)) != 0)
		fail("send: %s", strerror(-r));
	eh_probe_wait(v2, 0x8008, 62);
	eh_not_done(61, "tag 0x8008");
	trd_vni_close(v2);
	cl_take(vni, 61, -ECONNRESET);

	/* the message that filled the share, last */
	memset(rb, 0, fill_len);
	if ((r = trd_vni_recv(vni, self, 0x8000, 0, rb, fill_len, -1, 2)) != 0)
		fail("recv: %s", strerror(-r));
	c = cl_take(vni, 2, 0);
	if (c.len != fill_len || !check(rb, fill_len, 0x8000, &bad))
		fail("the staged message: %u B, byte %zu differs", c.len, bad);
	if (cl_n != 0 || trd_vni_pending(vni) != 0)
		fail("%u completions left, %u operations pending", cl_n, trd_vni_pending(vni));
	free(um);
	trd_vni_free(vni, sb);
	trd_vni_free(vni, rb);
	printf("eager-hdr: eager messages behind a full share probed, truncated, claimed into "
	       "process memory, discarded, multicast, matched in send order, and failed by a "
	       "close, byte-exact\n");
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* trunc */

struct trunc_case {
	const char *what;
	uint32_t len, cap;
	bool late;  /* sent (and staged) before the receive is posted */
	bool claim; /* refused for want of staging, claimed, then received */
};

int
mode_trunc(void)
{
	static const struct trunc_case tc[] = {
		{"eager into a posted receive", 100, 10, false, false},
		{"eager, staged", 100, 10, true, false},
		{"eager into 0 B", 300, 0, false, false},
		{"long into a posted receive", 5000, 1000, false, false},
		{"long, staged", 5000, 1000, true, false},
		{"long into 0 B", 5000, 0, false, false},
		{"long refused, claimed", 2u << 20, 4096, true, true},
	};
	uint8_t *sb = pool_alloc(2u << 20), *rb = pool_alloc((2u << 20) + 64);
	size_t bad = 0;

	for (unsigned int i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		const struct trunc_case *t = &tc[i];
		uint64_t tag = 0x9000 + i, ck = 100 * (i + 1);
		struct trd_vni_cpl c;
		int r;

		fill(sb, t->len, tag);
		memset(rb, 0xee, t->cap + 64);
		if (!t->late && (r = trd_vni_recv_mask(vni, self, tag, 0, t->cap ? rb : NULL,
						       t->cap, -1, ck + 1)) != 0)
			fail("recv: %s", strerror(-r));
		if ((r = trd_vni_senddata(vni, self, tag, ~tag, sb, t->len, -1, ck)) != 0)
			fail("senddata: %s", strerror(-r));
		if (t->late && !t->claim) {
			cl_take(vni, ck, 0); /* staged */
			if ((r = trd_vni_recv_mask(vni, self, tag, 0, t->cap ? rb : NULL, t->cap,
						   -1, ck + 1)) != 0)
				fail("recv: %s", strerror(-r));
		} else if (t->claim) {
			c = cl_claim_wait(vni, tag, ck + 2, false);
			if ((r = trd_vni_recv_claimed(vni, c.claim, rb, t->cap, -1, ck + 1)) != 0)
				fail("recv_claimed: %s", strerror(-r));
		}
		c = cl_take(vni, ck + 1, -EMSGSIZE);
		if (c.len != t->len || c.tag != tag || !c.has_data || c.data != ~tag)
			fail("%s: %u B tag %#" PRIx64 " data %#" PRIx64 "%s, expected %u B",
			     t->what, c.len, c.tag, c.data, c.has_data ? "" : " (none)", t->len);
		if (!check(rb, t->cap, tag, &bad))
			fail("%s: byte %zu of the first %u differs", t->what, bad, t->cap);
		for (uint32_t k = t->cap; k < t->cap + 64; k++)
			if (rb[k] != 0xee)
				fail("%s: byte %u past the %u B receive written", t->what, k,
				     t->cap);
		if (!t->late || t->claim) {
			c = cl_take(vni, ck, 0);
			if (c.len != t->len)
				fail("%s: the send completed with %u B, expected %u", t->what,
				     c.len, t->len);
		}
	}
	if (cl_n != 0 || trd_vni_pending(vni) != 0)
		fail("%u completions left, %u operations pending", cl_n, trd_vni_pending(vni));
	trd_vni_free(vni, sb);
	trd_vni_free(vni, rb);
	printf("trunc: %zu messages longer than their receive: first bytes, -EMSGSIZE with the "
	       "whole length at the receiver, 0 at the sender\n",
	       sizeof(tc) / sizeof(tc[0]));
	return 0;
}
