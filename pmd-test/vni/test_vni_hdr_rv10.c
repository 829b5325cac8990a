/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile tester of "Staged once there is room" (docs/vni.md, rv10): a message kept at its
 * receiver as its header only is granted staging once its destination's share has room again.
 * One in-process VNI service (node 0 of a 3x1x1 torus over ring links), 1 MiB of staging, two
 * processes attached (1:0 sends, 1:1 receives): each share is 512 KiB. M0 (480 KiB) fills the
 * receiver's share; a later one finds no room and is kept as its header.
 *
 *   test_vni_hdr_rv10 big     behind a header longer than the whole share (600 KiB: no staging
 *                             ever takes it), a 64 KiB one is staged once M0 is received, and
 *                             its send completes before its receive is posted; receives for any
 *                             tag still take the long one first (ordered sender). Before, the long
 *                             one at the head stopped every header behind it for good.
 *   test_vni_hdr_rv10 race    the receives of M0 and of the header-only message posted in one
 *                             go: M0's release grants the header staging and its receive finds
 *                             it with the CTS in flight; it lands once, its first half in a
 *                             receive half its size (-EMSGSIZE), no second CTS
 *   test_vni_hdr_rv10 claim   two headers claimed, then staged once M0 is received (claimed, they
 *                             stay claimed): both sends complete; one is received by its handle
 *                             byte-exact, the other dropped; no CTS into a receive
 *   test_vni_hdr_rv10 wire    race with the sender on another engine (node 1): the CTS into
 *                             staging crosses the wire while the receive is posted
 *   test_vni_hdr_rv10 sdie    the sender is killed as the CTS into staging leaves: staging is
 *                             given back, and the receive posted later is either the whole
 *                             message byte-exact or nothing (cancelled)
 *   test_vni_hdr_rv10 rdie    the receiver is killed as the CTS into staging leaves: the send
 *                             completes (0 or -ECONNRESET) in bounded time, staging is given back
 *
 * Every case ends with staging use 0, no header held and no receive state in use.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/topo_net.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_test.h"

#define KB    1024u
#define A_LEN (600 * KB) /* longer than the share */
#define B_LEN (64 * KB)
#define N_CK  12

enum { CK_M0 = 1, CK_A, CK_B, CK_RM0, CK_RA, CK_RB, CK_C, CK_CL1, CK_CL2, CK_DROP };

/* One interface and the completions it took, by cookie. */
struct ep {
	struct trd_vni *v;
	bool seen[N_CK];
	int st[N_CK];
	uint32_t len[N_CK];
	uint64_t tag[N_CK], claim[N_CK];
	unsigned int dups;
};

/* fills the receiver's share: 512 KiB with two processes on its engine, 1 MiB with one
 * (wire) */
static uint32_t m0_len = 480 * KB;
static bool wire; /* the sender on node 1's engine */

static const struct trd_vni_addr snd = {.app = 1, .proc = 0}, rcv = {.app = 1, .proc = 1};

static int
ep_open(struct ep *e, uint32_t proc, bool ordered)
{
	struct trd_vni_conf c = {.socket = wire && proc == 0 ? sock_n1 : sock_path,
				 .app = 1,
				 .proc = proc,
				 .pool_size = 4 << 20,
				 .connect_timeout_ms = 5000,
				 .ordered = ordered};

	memset(e, 0, sizeof(*e));
	e->v = trd_vni_open(&c);
	return e->v == NULL ? -1 : 0;
}

/* Completions until cookie @p ck's came, @p ms at most: 0 or -ETIMEDOUT (or the error). */
static int
ep_wait(struct ep *e, unsigned int ck, int ms)
{
	uint64_t deadline = trd_time_us() + (uint64_t)ms * 1000;

	while (!e->seen[ck]) {
		struct trd_vni_cpl c[8];
		int n;

		if (trd_time_us() >= deadline)
			return -ETIMEDOUT;
		n = trd_vni_wait(e->v, c, 8, ms < 20 ? ms : 20);
		if (n == -ETIMEDOUT)
			continue;
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			uint64_t k = c[i].cookie;

			if (k >= N_CK || e->seen[k]) {
				e->dups++;
				continue;
			}
			e->seen[k] = true;
			e->st[k] = c[i].status;
			e->len[k] = c[i].len;
			e->tag[k] = c[i].tag;
			e->claim[k] = c[i].claim;
		}
	}
	return 0;
}

static uint8_t
pat(size_t i, uint8_t seed)
{
	return (uint8_t)(seed + i * 7 + (i >> 9));
}

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(i, seed);
}

static bool
same(const uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return false;
	return true;
}

/* A long message from @p e's pool: 0 or -1. */
static int
send_pool(struct ep *e, uint64_t tag, size_t len, uint8_t seed, unsigned int ck)
{
	uint8_t *b = trd_vni_alloc(e->v, len);

	if (b == NULL)
		return -1;
	fill(b, len, seed);
	return trd_vni_send(e->v, rcv, tag, b, len, -1, ck) == 0 ? 0 : -1;
}

/* Receive cookie @p ck into @p b (@p cap), @p ms at most: its status, or 100 + why. */
static int
recv_wait(struct ep *e, uint64_t tag, uint8_t *b, size_t cap, unsigned int ck, int ms)
{
	unsigned int fl = tag == UINT64_MAX ? TRD_VNI_ANY_TAG : 0;

	if (b == NULL || trd_vni_recv(e->v, snd, tag, fl, b, cap, -1, ck) != 0)
		return 101;
	if (ep_wait(e, ck, ms) != 0)
		return 102;
	return e->st[ck];
}

/* The engine has no staging, header or receive state left (bounded). */
static void
assert_clean(void)
{
	uint64_t deadline = trd_time_us() + WAIT_US;

	while ((stat_of(TRD_VNI_SVC_STAT_STAGING_USED) != 0 ||
		stat_of(TRD_VNI_SVC_STAT_HDR_HELD) != 0 ||
		stat_of(TRD_VNI_SVC_STAT_RX_USED) != 0) &&
	       trd_time_us() < deadline)
		pump();
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_STAGING_USED) == 0, "staging_used %llu",
		 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_STAGING_USED));
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_HDR_HELD) == 0, "hdr_held %llu",
		 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_HDR_HELD));
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_RX_USED) == 0, "rx_used %llu",
		 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_RX_USED));
}

/* Pump until statistic @p k reaches @p want, and not a round more (bounded). */
static void
pump_exact(enum trd_vni_svc_stat k, uint64_t want)
{
	uint64_t deadline = trd_time_us() + WAIT_US;

	while (stat_of(k) < want) {
		T_ASSERT(trd_time_us() < deadline, "%s stays at %llu", trd_vni_svc_stat_name(k),
			 (unsigned long long)stat_of(k));
		pump();
	}
}

/* ------------------------------------------------------------------------------------------ */
/* big, race: one child with both interfaces */

static int go[2], rep[2];

enum { M_BIG, M_RACE, M_CLAIM };

/* claim: two headers claimed, then staged once M0 is received; one received by its handle,
 * byte-exact, the other dropped: 0, or the failing step */
static int
claim_part(struct ep *s, struct ep *r, uint8_t *rm0, uint8_t *rb)
{
	uint64_t h1, h2;

	if (trd_vni_claim(r->v, snd, 3, 0, CK_CL1) != 0 ||
	    trd_vni_claim(r->v, snd, 4, 0, CK_CL2) != 0 || ep_wait(r, CK_CL1, 10000) != 0 ||
	    ep_wait(r, CK_CL2, 10000) != 0)
		return 30;
	h1 = r->claim[CK_CL1];
	h2 = r->claim[CK_CL2];
	if (r->st[CK_CL1] != 0 || r->len[CK_CL1] != B_LEN || h1 == 0 || r->st[CK_CL2] != 0 ||
	    h2 == 0)
		return 31;
	if (recv_wait(r, 1, rm0, m0_len, CK_RM0, 10000) != 0 || !same(rm0, m0_len, 0x10))
		return 32;
	/* both fit now: claimed, they are staged all the same and their sends complete */
	if (ep_wait(s, CK_B, 5000) != 0 || ep_wait(s, CK_C, 5000) != 0 || s->st[CK_B] != 0 ||
	    s->st[CK_C] != 0)
		return 33;
	if (trd_vni_recv_claimed(r->v, h1, rb, B_LEN, -1, CK_RB) != 0 ||
	    ep_wait(r, CK_RB, 10000) != 0 || r->st[CK_RB] != 0 || r->len[CK_RB] != B_LEN ||
	    !same(rb, B_LEN, 0x30))
		return 34;
	if (trd_vni_discard(r->v, h2, CK_DROP) != 0 || ep_wait(r, CK_DROP, 10000) != 0 ||
	    r->st[CK_DROP] != 0)
		return 35;
	return 0;
}

static int
both_app(void *arg)
{
	int mode = (int)(intptr_t)arg;
	bool race = mode == M_RACE;
	struct ep s, r;
	uint8_t *rm0, *rb, c;
	int st;

	if (ep_open(&r, 1, false) != 0 || ep_open(&s, 0, true) != 0)
		return 10;
	rm0 = trd_vni_alloc(r.v, m0_len);
	rb = trd_vni_alloc(r.v, B_LEN);
	if (rm0 == NULL || rb == NULL)
		return 11;
	if (send_pool(&s, 1, m0_len, 0x10, CK_M0) != 0 || ep_wait(&s, CK_M0, 10000) != 0 ||
	    s.st[CK_M0] != 0)
		return 12; /* staged: complete */
	if ((mode == M_BIG && send_pool(&s, 2, A_LEN, 0x20, CK_A) != 0) ||
	    send_pool(&s, 3, B_LEN, 0x30, CK_B) != 0 ||
	    (mode == M_CLAIM && send_pool(&s, 4, B_LEN, 0x40, CK_C) != 0))
		return 13;
	if (child_read(go[0], &c, 1) != 0) /* the engine holds them as headers */
		return 14;
	if (mode == M_CLAIM) {
		st = claim_part(&s, &r, rm0, rb);
		if (st != 0)
			return st;
	} else if (race) {
		/* both receives in one go: the second finds the message whose CTS M0's release
		 * just sent; half its length: its first half, -EMSGSIZE */
		if (trd_vni_recv(r.v, snd, 1, 0, rm0, m0_len, -1, CK_RM0) != 0 ||
		    trd_vni_recv(r.v, snd, 3, 0, rb, B_LEN / 2, -1, CK_RB) != 0)
			return 15;
		c = 'p';
		if (write(rep[1], &c, 1) != 1)
			return 16;
		if (ep_wait(&r, CK_RM0, 10000) != 0 || r.st[CK_RM0] != 0 ||
		    !same(rm0, m0_len, 0x10))
			return 17;
		if (ep_wait(&r, CK_RB, 10000) != 0 || r.st[CK_RB] != -EMSGSIZE ||
		    r.len[CK_RB] != B_LEN || !same(rb, B_LEN / 2, 0x30))
			return 18;
		if (ep_wait(&s, CK_B, 10000) != 0 || s.st[CK_B] != 0)
			return 19;
	} else {
		uint8_t *ra = trd_vni_alloc(r.v, A_LEN);

		if (ra == NULL)
			return 20;
		st = recv_wait(&r, 1, rm0, m0_len, CK_RM0, 10000);
		if (st != 0 || !same(rm0, m0_len, 0x10))
			return 21;
		/* the 64 KiB one fits the share now: its send completes with no receive */
		if (ep_wait(&s, CK_B, 5000) != 0)
			return 22;
		if (s.st[CK_B] != 0 || s.seen[CK_A])
			return 23;
		/* any tag: the one kept as its header, sent first, is matched first, though the
		 * later one is whole in staging (the sender's interface is ordered, too) */
		if (recv_wait(&r, UINT64_MAX, ra, A_LEN, CK_RA, 10000) != 0 || r.tag[CK_RA] != 2 ||
		    !same(ra, A_LEN, 0x20))
			return 24;
		if (recv_wait(&r, UINT64_MAX, rb, B_LEN, CK_RB, 10000) != 0 || r.tag[CK_RB] != 3 ||
		    !same(rb, B_LEN, 0x30))
			return 27;
		if (ep_wait(&s, CK_A, 10000) != 0 || s.st[CK_A] != 0)
			return 25;
	}
	for (int i = 0; i < 50; i++) /* nothing more may come */
		(void)ep_wait(&s, 0, 1), (void)ep_wait(&r, 0, 1);
	if (s.dups != 0 || r.dups != 0)
		return 26;
	trd_vni_close(s.v);
	trd_vni_close(r.v);
	return 0;
}

static void
test_both(int mode)
{
	bool race = mode == M_RACE;
	pid_t pid;
	char c = 'g';

	T_EQ(pipe(go), 0);
	pipe_nb(rep);
	pid = spawn(both_app, (void *)(intptr_t)mode);
	pump_until_stat(TRD_VNI_SVC_STAT_HDR_ONLY, race ? 1 : 2);
	T_EQ(write(go[1], &c, 1), 1);
	if (race) {
		/* no round until both receives are queued */
		T_ASSERT(child_read(rep[0], &c, 1) == 0 && c == 'p', "no report from the child");
	}
	reap_ok(pid, WAIT_US, "the application");
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_HDR_STAGED) == (mode == M_CLAIM ? 2u : 1u),
		 "hdr_staged %llu", (unsigned long long)stat_of(TRD_VNI_SVC_STAT_HDR_STAGED));
	if (mode == M_CLAIM)
		T_ASSERT(stat_of(TRD_VNI_SVC_STAT_CLAIMS) == 2 &&
				 stat_of(TRD_VNI_SVC_STAT_DISCARDS) == 1 &&
				 stat_of(TRD_VNI_SVC_STAT_CTS_LATE) == 0,
			 "claims %llu, discards %llu, cts_late %llu",
			 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_CLAIMS),
			 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_DISCARDS),
			 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_CTS_LATE));
	if (race)
		T_ASSERT(stat_of(TRD_VNI_SVC_STAT_CTS_LATE) == 0,
			 "cts_late %llu: the receive granted the message a second time",
			 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_CTS_LATE));
	assert_clean();
}

/* ------------------------------------------------------------------------------------------ */
/* sdie, rdie: sender and receiver in two children, one of them killed */

static int go_r[2], go_s[2], rep_r[2], rep_s[2];

/* The sender: M0 (staged), then the one kept as its header; its status reported. */
static int
sender_app(void *arg)
{
	struct ep s;
	int st;
	char c;

	(void)arg;
	if (ep_open(&s, 0, false) != 0)
		return 10;
	if (send_pool(&s, 1, m0_len, 0x10, CK_M0) != 0 || ep_wait(&s, CK_M0, 10000) != 0 ||
	    s.st[CK_M0] != 0)
		return 11;
	if (send_pool(&s, 3, B_LEN, 0x30, CK_B) != 0)
		return 12;
	if (child_read(go_s[0], &c, 1) != 0) /* sdie: killed before this */
		return 13;
	if (ep_wait(&s, CK_B, 10000) != 0) /* rdie: its receiver died */
		return 14;
	st = s.st[CK_B];
	if (write(rep_s[1], &st, sizeof(st)) != (ssize_t)sizeof(st))
		return 15;
	trd_vni_close(s.v);
	return 0;
}

/* The receiver: attached first (the shares are halves), receives M0 at the first go; at the
 * second, posts the header-only message's receive; at the third, withdraws it. What that
 * receive ended with is reported: -ECANCELED, or 0 with the whole message byte-exact. */
static int
receiver_app(void *arg)
{
	uint8_t *rm0, *rb;
	struct ep r;
	char c = 'a';
	int st;

	(void)arg;
	if (ep_open(&r, 1, false) != 0)
		return 10;
	rm0 = trd_vni_alloc(r.v, m0_len);
	rb = trd_vni_alloc(r.v, B_LEN);
	if (rm0 == NULL || rb == NULL || write(rep_r[1], &c, 1) != 1)
		return 11;
	if (child_read(go_r[0], &c, 1) != 0)
		return 12;
	if (recv_wait(&r, 1, rm0, m0_len, CK_RM0, 10000) != 0 || !same(rm0, m0_len, 0x10))
		return 13;
	if (child_read(go_r[0], &c, 1) != 0) /* rdie: killed before this */
		return 14;
	memset(rb, 0xee, B_LEN);
	if (trd_vni_recv(r.v, snd, 3, 0, rb, B_LEN, -1, CK_RB) != 0)
		return 15;
	if (child_read(go_r[0], &c, 1) != 0)
		return 16;
	(void)trd_vni_cancel(r.v, CK_RB);
	if (ep_wait(&r, CK_RB, 10000) != 0)
		return 17;
	st = r.st[CK_RB];
	if (st == 0 && (r.len[CK_RB] != B_LEN || !same(rb, B_LEN, 0x30)))
		return 18; /* matched to something else than the message */
	if (st != 0 && st != -ECANCELED)
		return 19;
	if (write(rep_r[1], &st, sizeof(st)) != (ssize_t)sizeof(st))
		return 20;
	trd_vni_close(r.v);
	return 0;
}

static void
test_death(bool sender_dies)
{
	pid_t ps, pr;
	char c = 'g';
	int st, wst;

	T_EQ(pipe(go_r), 0);
	T_EQ(pipe(go_s), 0);
	pipe_nb(rep_r);
	pipe_nb(rep_s);
	pr = spawn(receiver_app, NULL);
	read_pipe(rep_r[0], &c, 1); /* attached */
	ps = spawn(sender_app, NULL);
	pump_until_stat(TRD_VNI_SVC_STAT_HDR_ONLY, 1);
	T_EQ(write(go_r[1], &c, 1), 1); /* receive M0 */
	/* M0's release grants the header staging: the CTS leaves in this round */
	pump_exact(TRD_VNI_SVC_STAT_HDR_STAGED, 1);
	T_EQ(kill(sender_dies ? ps : pr, SIGKILL), 0);
	T_EQ(waitpid(sender_dies ? ps : pr, &wst, 0), sender_dies ? ps : pr);
	if (sender_dies) {
		/* the receive posted once the sender died, then withdrawn */
		pump_until_stat(TRD_VNI_SVC_STAT_DETACHED, 1);
		T_EQ(write(go_r[1], &c, 1), 1);
		pump_until_stat(TRD_VNI_SVC_STAT_RECVS, 2);
		T_EQ(write(go_r[1], &c, 1), 1);
		read_pipe(rep_r[0], &st, sizeof(st));
		printf("sdie: the receive posted after the sender's death ended with %d\n", st);
		reap_ok(pr, WAIT_US, "the receiver");
	} else {
		T_EQ(write(go_s[1], &c, 1), 1);
		read_pipe(rep_s[0], &st, sizeof(st));
		T_ASSERT(st == 0 || st == -ECONNRESET, "the send ended with %d", st);
		printf("rdie: the send to the receiver that died ended with %d\n", st);
		reap_ok(ps, WAIT_US, "the sender");
	}
	assert_clean();
}

static const char topo_text[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:0, 1:1\nx+ = 0\nx- = 1\n"
				"[node 1]\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

/* wire: the sender alone on node 1's engine, the receiver alone on node 0's (its share is the
 * whole 1 MiB) */
static const char topo_wire[] = "[torus]\ndims = 3x1x1\nmode = direct\n"
				"[node 0]\nprocs = 1:1\nx+ = 0\nx- = 1\n"
				"[node 1]\nprocs = 1:0\nx+ = 0\nx- = 1\n"
				"[node 2]\nx+ = 0\nx- = 1\n";

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc, vc1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s big|race|claim|sdie|rdie|wire\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	memset(&vc1, 0, sizeof(vc1));
	wire = strcmp(argv[1], "wire") == 0;
	if (wire) {
		const struct vni_setup_opt o = {.rec_fifo_size = 1024, .vc_n1 = &vc1};

		m0_len = 1000 * KB;
		vni_setup_with("vhdr10w", topo_wire, &o, &vc);
	} else {
		vni_setup("vhdr10", topo_text, 1024, &vc);
	}
	if (wire)
		test_both(M_RACE); /* the CTS into staging crosses the wire */
	else if (strcmp(argv[1], "big") == 0)
		test_both(M_BIG);
	else if (strcmp(argv[1], "race") == 0)
		test_both(M_RACE);
	else if (strcmp(argv[1], "claim") == 0)
		test_both(M_CLAIM);
	else if (strcmp(argv[1], "sdie") == 0)
		test_death(true);
	else if (strcmp(argv[1], "rdie") == 0)
		test_death(false);
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni hdr_rv10 %s\n", argv[1]);
	return 0;
}
