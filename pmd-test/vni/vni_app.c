/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vni-app: an application process for the VNI tests (pmd-test/test_vni.sh). A plain process:
 * it links only libtoroid_vni (no EAL, no hugepages) and blocks on its interface's eventfd when
 * it has nothing to do.
 *
 *   vni-app --socket PATH --app A --proc P [--pool SIZE] [--short N] MODE [options]
 *
 * Modes:
 *   exchange --peers A:P,... --sizes LIST [--late LIST]
 *       send every size to every peer and receive every size from every peer, byte-exact;
 *       sizes in --late are received late: their receives are posted only after the peer
 *       said (a READY message) that its sends completed, i.e. the data is in our engine.
 *   flood --to A:P --size S --count N [--window W] [--log FILE]
 *       send N messages of S bytes, W at a time; log "usec tx_pkts" at each completion.
 *   sink --from A:P|any --size S --count N [--window W] [--tolerate-reset] [--stop-on-go]
 *       receive N messages, W receives posted at a time, and check them; with --stop-on-go
 *       stop early when a GO message comes (from anyone).
 *   go --to A:P        send a GO message
 *   mcast --to A:P,... --sizes LIST [--repeat N]   one multicast per size (N rounds)
 *   expect --from A:P --sizes LIST [--mcast] [--delay-until-staged] [--repeat N]
 *       receive one message per size from A:P and check it.
 *   late-sink --from A:P --size S --count N --go-tag
 *       receive a GO message first, then post the N receives.
 *   late-flood --to A:P --size S --count N --go-after K [--log FILE]
 *       post N sends; once K completed, send GO; wait for all; log as flood does.
 *   seq-send --to A:P --size S --count N      (with --ordered: an ordered interface)
 *       send N messages with one tag: the first of S bytes, the others of 64 B.
 *   seq-recv --from A:P --size S --count N
 *       wait for a GO (from anyone), then post N receives of room S for that tag: receive k
 *       must get message k (its length and bytes), i.e. they are matched in send order.
 *   masks
 *       tag ignore masks (trd_vni_recv_mask), sending to itself: receives posted before
 *       their messages and receives matched against staged messages each get the message
 *       their tag and mask select, with its whole tag, its bytes and the immediate data
 *       it was sent with (trd_vni_senddata); short and long messages. Then probes
 *       (trd_vni_probe: nothing, a staged message twice, nothing once it was received) and
 *       a cancelled receive (trd_vni_cancel: -ECANCELED, then -ENOENT).
 *   rma --peers A:P [--count N] [--absent A:P]
 *       one-sided access to malloc'd memory, both processes at once on each other's: regions
 *       (VA and offset mode, a caller's key, read-only, write-only, deregistered); writes of
 *       1 B .. 4 MiB read back with the bytes around them; 64- and 32-bit atomics with their
 *       old values; N concurrent sums by each process on the low process's word (the low
 *       one on itself); refusals (-EACCES: unknown key, no access bit, one byte out, wrap,
 *       misaligned, deregistered); a process not attached (--absent): -ECONNREFUSED. At the
 *       end each checks its own memory: what the peer wrote (hash), guards, the sum; the
 *       low process then writes to the high one until it left: -ECONNREFUSED.
 *   claim --peers A:P  (this process also opens a second interface as A:P)
 *       claims (trd_vni_claim, trd_vni_recv_claimed, trd_vni_discard, trd_vni_discard_first),
 *       sending to itself: a staged eager message, a long one staged, and a long one refused
 *       for want of staging (the engine runs with --staging 1M) are claimed; a probe and a
 *       receive no longer see them; the claimed receive gets them byte-exact with tag, source
 *       and data; discards (the senders complete with 0); bad handles (0, unknown, used,
 *       the other interface's) fail with -EINVAL; the second interface closes holding a
 *       staged and a refused claimed message.
 *   trunc
 *       truncation at the receiver, sending to itself: messages longer than their receive
 *       (eager into a posted receive, eager staged, long granted into a posted receive, long
 *       staged, long refused then claimed into a short buffer) deliver their first cap bytes
 *       (nothing past them) with -EMSGSIZE, the whole length and the immediate data; every
 *       send completes with 0 and the message's length.
 *   attach
 *       print "self A:P" (the identity trd_vni_info gives: with --proc any, the process the
 *       engine chose), then obey lines on stdin: "exchange A:P,..." (as the exchange mode,
 *       with --sizes), "quit" (or the end of stdin) detaches.
 * --proc any attaches with TRD_VNI_ANY. A failed attach prints "cannot attach ...: ERROR".
 * Every mode prints one summary line and exits 0 on success, 1 on a failure.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <toroid/vni.h>

#define MAX_PEERS 64
#define MAX_SIZES 32
#define TAG_READY 0xfeed000000000000ULL
#define TAG_GO 0xfeed000000000001ULL
#define TAG_DATA(k) (0x1000ULL + (uint64_t)(k))
#define WAIT_MS 60000

static struct trd_vni *vni;
static struct trd_vni_addr self;
static const char *prog = "vni-app";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %u:%u: FAIL: ", prog, self.app, self.proc);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The bytes of message k from src to dst (dst 0:0 for a multicast), 8 at a time. */
static uint64_t
seed_of(struct trd_vni_addr src, struct trd_vni_addr dst, unsigned int k)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)src.app << 40) ^ ((uint64_t)src.proc << 24) ^
		     ((uint64_t)dst.app << 16) ^ ((uint64_t)dst.proc << 4) ^ k;

	return s ? s : 1;
}

static void
fill(uint8_t *p, size_t len, uint64_t s)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		memcpy(p + i, &s, 8);
	}
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	for (unsigned int j = 0; i < len; i++, j++)
		p[i] = (uint8_t)(s >> (8 * j));
}

static bool
check(const uint8_t *p, size_t len, uint64_t s, size_t *bad)
{
	uint8_t *want = malloc(len ? len : 1);
	bool ok;

	if (want == NULL)
		fail("out of memory");
	fill(want, len, s);
	ok = memcmp(want, p, len) == 0;
	if (!ok)
		for (*bad = 0; *bad < len && want[*bad] == p[*bad]; (*bad)++)
			;
	free(want);
	return ok;
}

static int
parse_addr(const char *s, struct trd_vni_addr *a)
{
	unsigned int x, y;

	if (strcmp(s, "any") == 0) {
		a->app = a->proc = TRD_VNI_ANY;
		return 0;
	}
	if (sscanf(s, "%u:%u", &x, &y) != 2)
		return -EINVAL;
	a->app = x;
	a->proc = y;
	return 0;
}

static unsigned int
parse_addrs(const char *s, struct trd_vni_addr *out)
{
	char buf[1024], *save = NULL, *tok;
	unsigned int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && n < MAX_PEERS; tok = strtok_r(NULL, ",", &save))
		if (parse_addr(tok, &out[n++]) != 0)
			fail("bad address '%s'", tok);
	return n;
}

static size_t
parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end != '\0' || end == s)
		fail("bad size '%s'", s);
	return (size_t)v;
}

static unsigned int
parse_sizes(const char *s, size_t *out)
{
	char buf[1024], *save = NULL, *tok;
	unsigned int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && n < MAX_SIZES; tok = strtok_r(NULL, ",", &save))
		out[n++] = parse_size(tok);
	return n;
}

static void *
pool_alloc(size_t len)
{
	void *p = trd_vni_alloc(vni, len ? len : 1);

	if (p == NULL)
		fail("pool exhausted allocating %zu B (raise --pool)", len);
	return p;
}

/* Post, retrying while the interface is out of contexts (reaping completions meanwhile). */
typedef void (*cpl_fn)(const struct trd_vni_cpl *c);

static void
reap(cpl_fn fn, int timeout_ms)
{
	struct trd_vni_cpl c[16];
	int n = trd_vni_wait(vni, c, 16, timeout_ms);

	if (n == -ETIMEDOUT)
		fail("no completion within %d ms (%u pending)", timeout_ms, trd_vni_pending(vni));
	if (n < 0)
		fail("wait: %s", strerror(-n));
	for (int i = 0; i < n; i++)
		fn(&c[i]);
}

/* ------------------------------------------------------------------------------------------ */
/* exchange */

static struct trd_vni_addr peers[MAX_PEERS];
static unsigned int n_peers;
static size_t sizes[MAX_SIZES];
static unsigned int n_sizes;
static bool late[MAX_SIZES];
static uint8_t *sbuf[MAX_PEERS][MAX_SIZES], *rbuf[MAX_PEERS][MAX_SIZES];
static unsigned int late_sends_left[MAX_PEERS];
static unsigned int sends_left, recvs_left;
static uint64_t bytes_in, bytes_out;
static bool ready_sent[MAX_PEERS];

static void post_recv(struct trd_vni_addr src, uint64_t tag, void *buf, size_t cap,
		      uint64_t cookie, cpl_fn fn);
static void post_send(struct trd_vni_addr dst, uint64_t tag, const void *buf, size_t len,
		      uint64_t cookie, cpl_fn fn);

static void exchange_cpl(const struct trd_vni_cpl *c);

static void
post_late(unsigned int p)
{
	for (unsigned int k = 0; k < n_sizes; k++)
		if (late[k])
			post_recv(peers[p], TAG_DATA(k), rbuf[p][k], sizes[k], ((uint64_t)p << 8) | k,
				  exchange_cpl);
}

static void
exchange_cpl(const struct trd_vni_cpl *c)
{
	unsigned int p = (unsigned int)(c->cookie >> 8) & 0xff, k = (unsigned int)c->cookie & 0xff;

	if (c->status != 0)
		fail("%s %u:%u tag %#" PRIx64 ": %s",
		     c->kind == TRD_VNI_CPL_SEND ? "send to" : "receive from", c->peer.app,
		     c->peer.proc, c->tag, strerror(-c->status));
	if (c->kind == TRD_VNI_CPL_SEND) {
		sends_left--;
		if (c->tag == TAG_READY)
			return;
		bytes_out += c->len;
		if (late[k] && --late_sends_left[p] == 0 && !ready_sent[p]) {
			/* every late message is in the peer's engine: tell it */
			ready_sent[p] = true;
			post_send(peers[p], TAG_READY, NULL, 0, (uint64_t)p << 8, exchange_cpl);
		}
		return;
	}
	recvs_left--;
	if (c->tag == TAG_READY) {
		post_late(p);
		return;
	}
	if (c->len != sizes[k] || c->peer.app != peers[p].app || c->peer.proc != peers[p].proc)
		fail("receive %u from %u:%u: got %u B from %u:%u, expected %zu B", k, peers[p].app,
		     peers[p].proc, c->len, c->peer.app, c->peer.proc, sizes[k]);
	{
		size_t bad = 0;

		if (!check(c->buf, c->len, seed_of(peers[p], self, k), &bad))
			fail("message %u (%zu B) from %u:%u differs at byte %zu", k, sizes[k],
			     peers[p].app, peers[p].proc, bad);
	}
	bytes_in += c->len;
}

static void
post_recv(struct trd_vni_addr src, uint64_t tag, void *buf, size_t cap, uint64_t cookie,
	  cpl_fn fn)
{
	int rc;

	while ((rc = trd_vni_recv(vni, src, tag, 0, buf, cap, -1, cookie)) == -EAGAIN)
		reap(fn, WAIT_MS);
	if (rc != 0)
		fail("recv: %s", strerror(-rc));
}

static void
post_send(struct trd_vni_addr dst, uint64_t tag, const void *buf, size_t len, uint64_t cookie,
	  cpl_fn fn)
{
	int rc;

	while ((rc = trd_vni_send(vni, dst, tag, buf, len, -1, cookie)) == -EAGAIN)
		reap(fn, WAIT_MS);
	if (rc != 0)
		fail("send of %zu B: %s", len, strerror(-rc));
}

static unsigned int repeat = 1;
static unsigned int deadline_s = 120;

static int
mode_exchange(void)
{
	uint64_t t0 = now_us();
	unsigned int n_late = 0;

	for (unsigned int p = 0; p < n_peers; p++)
		for (unsigned int k = 0; k < n_sizes; k++) {
			sbuf[p][k] = pool_alloc(sizes[k]);
			rbuf[p][k] = pool_alloc(sizes[k]);
			fill(sbuf[p][k], sizes[k], seed_of(self, peers[p], k));
		}
	for (unsigned int k = 0; k < n_sizes; k++)
		n_late += late[k];
	for (unsigned int round = 0; round < repeat; round++) {
	for (unsigned int p = 0; p < n_peers; p++) {
		ready_sent[p] = false;
		for (unsigned int k = 0; k < n_sizes; k++)
			memset(rbuf[p][k], 0xee, sizes[k]);
	}
	sends_left = n_peers * n_sizes + (n_late ? n_peers : 0);
	recvs_left = n_peers * n_sizes + (n_late ? n_peers : 0);
	for (unsigned int p = 0; p < n_peers; p++) {
		late_sends_left[p] = n_late;
		if (n_late)
			post_recv(peers[p], TAG_READY, NULL, 0, (uint64_t)p << 8, exchange_cpl);
		for (unsigned int k = 0; k < n_sizes; k++)
			if (!late[k])
				post_recv(peers[p], TAG_DATA(k), rbuf[p][k], sizes[k],
					  ((uint64_t)p << 8) | k, exchange_cpl);
	}
	for (unsigned int k = 0; k < n_sizes; k++)
		for (unsigned int p = 0; p < n_peers; p++)
			post_send(peers[p], TAG_DATA(k), sbuf[p][k], sizes[k], ((uint64_t)p << 8) | k,
				  exchange_cpl);
	while (sends_left > 0 || recvs_left > 0)
		reap(exchange_cpl, WAIT_MS);
	if (repeat > 1)
		printf("%s %u:%u: round %u done\n", prog, self.app, self.proc, round + 1);
	}
	printf("%s %u:%u: exchange with %u peers done in %.3f s: %u sizes each way (%u received "
	       "late), %u round(s), %" PRIu64 " B out, %" PRIu64 " B in, byte-exact\n",
	       prog, self.app, self.proc, n_peers, (double)(now_us() - t0) * 1e-6, n_sizes, n_late,
	       repeat, bytes_out, bytes_in);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* flood and sink */

static struct trd_vni_addr peer;
static size_t msg_size;
static unsigned long count;
static unsigned int window = 8;
static const char *log_path;
static FILE *log_file;
static unsigned long done_n, bad_n, reset_n;
static bool tolerate_reset;
static unsigned int go_after;
static uint8_t **bufs;

static void
flood_cpl(const struct trd_vni_cpl *c)
{
	if (c->status != 0)
		fail("flood send to %u:%u: %s", c->peer.app, c->peer.proc, strerror(-c->status));
	done_n++;
	if (log_file != NULL) {
		struct trd_vni_info info;

		trd_vni_info(vni, &info);
		fprintf(log_file, "%" PRIu64 " %" PRIu64 "\n", now_us(), info.tx_pkts);
	}
	if (done_n == 1 || done_n % 64 == 0) {
		printf("%s %u:%u: progress %lu\n", prog, self.app, self.proc, done_n);
		fflush(stdout);
	}
}

static int
mode_flood(void)
{
	uint64_t t0 = now_us();
	unsigned long posted = 0;
	struct trd_vni_info info;

	if (log_path != NULL && (log_file = fopen(log_path, "w")) == NULL)
		fail("%s: %s", log_path, strerror(errno));
	bufs = calloc(window, sizeof(*bufs));
	for (unsigned int i = 0; i < window; i++) {
		bufs[i] = pool_alloc(msg_size);
		fill(bufs[i], msg_size, seed_of(self, peer, 0));
	}
	while (done_n < count) {
		while (posted < count && posted - done_n < window) {
			post_send(peer, TAG_DATA(0), bufs[posted % window], msg_size, posted,
				  flood_cpl);
			posted++;
		}
		reap(flood_cpl, WAIT_MS);
	}
	trd_vni_info(vni, &info);
	if (log_file != NULL)
		fclose(log_file);
	printf("%s %u:%u: flood of %lu x %zu B to %u:%u done in %.3f s, %" PRIu64
	       " packets injected\n",
	       prog, self.app, self.proc, count, msg_size, peer.app, peer.proc,
	       (double)(now_us() - t0) * 1e-6, info.tx_pkts);
	return 0;
}

static bool stop_on_go, go_seen;

static void
sink_cpl(const struct trd_vni_cpl *c)
{
	size_t bad = 0;

	if (c->tag == TAG_GO && c->status == 0) {
		go_seen = true;
		return;
	}
	if (c->status == -ECONNRESET && tolerate_reset) {
		reset_n++;
		return;
	}
	if (c->status != 0)
		fail("sink receive: %s", strerror(-c->status));
	if (c->len != msg_size || !check(c->buf, c->len, seed_of(c->peer, self, 0), &bad)) {
		bad_n++;
		fail("message from %u:%u: %u B, differs at byte %zu", c->peer.app, c->peer.proc,
		     c->len, bad);
	}
	done_n++;
	if (c->tag == TAG_GO)
		return;
}

static int
mode_sink(void)
{
	uint64_t t0 = now_us();
	unsigned long posted = 0;
	bool said_posted = false;

	bufs = calloc(window, sizeof(*bufs));
	for (unsigned int i = 0; i < window; i++)
		bufs[i] = pool_alloc(msg_size);
	if (stop_on_go) {
		struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};

		post_recv(any, TAG_GO, NULL, 0, 0, sink_cpl);
	}
	while (done_n + reset_n < count && !go_seen) {
		while (posted < count && posted - done_n - reset_n < window) {
			post_recv(peer, TAG_DATA(0), bufs[posted % window], msg_size, posted,
				  sink_cpl);
			posted++;
		}
		if (!said_posted) {
			/* the tests wait for this line before the senders start */
			printf("%s %u:%u: posted %lu\n", prog, self.app, self.proc, posted);
			fflush(stdout);
			said_posted = true;
		}
		reap(sink_cpl, WAIT_MS);
	}
	printf("%s %u:%u: sink received %lu x %zu B in %.3f s, byte-exact; %lu transfer(s) reset "
	       "by their sender's death%s\n", prog, self.app, self.proc, done_n, msg_size,
	       (double)(now_us() - t0) * 1e-6, reset_n, go_seen ? "; stopped by GO" : "");
	return 0;
}

/* late-flood: post every send, tell the receiver GO once go_after completed. */
static bool go_sent;

static void
late_flood_cpl(const struct trd_vni_cpl *c)
{
	if (c->status != 0)
		fail("send: %s", strerror(-c->status));
	if (c->tag == TAG_GO)
		return;
	done_n++;
	if (log_file != NULL) {
		struct trd_vni_info info;

		trd_vni_info(vni, &info);
		fprintf(log_file, "%" PRIu64 " %" PRIu64 "\n", now_us(), info.tx_pkts);
	}
}

static int
mode_late_flood(void)
{
	uint64_t t0 = now_us();

	if (log_path != NULL && (log_file = fopen(log_path, "w")) == NULL)
		fail("%s: %s", log_path, strerror(errno));

	bufs = calloc(count, sizeof(*bufs));
	for (unsigned long i = 0; i < count; i++) {
		bufs[i] = pool_alloc(msg_size);
		fill(bufs[i], msg_size, seed_of(self, peer, (unsigned int)i));
		post_send(peer, TAG_DATA(i), bufs[i], msg_size, i, late_flood_cpl);
	}
	while (done_n < count || !go_sent) {
		if (!go_sent && done_n >= go_after) {
			post_send(peer, TAG_GO, NULL, 0, 0, late_flood_cpl);
			go_sent = true;
			printf("%s %u:%u: %lu of %lu sends completed before the receiver posted: GO\n",
			       prog, self.app, self.proc, done_n, count);
			fflush(stdout);
			continue;
		}
		reap(late_flood_cpl, WAIT_MS);
	}
	{
		struct trd_vni_info info;

		trd_vni_info(vni, &info);
		printf("%s %u:%u: %lu x %zu B sent in %.3f s; the receiver's engine made us wait "
		       "%" PRIu64 " times\n",
		       prog, self.app, self.proc, count, msg_size, (double)(now_us() - t0) * 1e-6,
		       info.naks);
	}
	if (log_file != NULL)
		fclose(log_file);
	return 0;
}

static void
late_sink_cpl(const struct trd_vni_cpl *c)
{
	unsigned int k = (unsigned int)c->cookie;
	size_t bad = 0;

	if (c->status != 0)
		fail("receive: %s", strerror(-c->status));
	if (c->tag == TAG_GO) {
		go_seen = true;
		return;
	}
	if (c->len != msg_size || !check(c->buf, c->len, seed_of(peer, self, k), &bad))
		fail("message %u: %u B, differs at byte %zu", k, c->len, bad);
	done_n++;
}

static int
mode_late_sink(void)
{
	uint64_t t0 = now_us();

	post_recv(peer, TAG_GO, NULL, 0, 0, late_sink_cpl);
	while (!go_seen)
		reap(late_sink_cpl, WAIT_MS);
	bufs = calloc(count, sizeof(*bufs));
	for (unsigned long i = 0; i < count; i++) {
		bufs[i] = pool_alloc(msg_size);
		post_recv(peer, TAG_DATA(i), bufs[i], msg_size, i, late_sink_cpl);
	}
	while (done_n < count)
		reap(late_sink_cpl, WAIT_MS);
	printf("%s %u:%u: late receiver got %lu x %zu B in %.3f s, byte-exact\n", prog, self.app,
	       self.proc, done_n, msg_size, (double)(now_us() - t0) * 1e-6);
	return 0;
}

static void
go_cpl(const struct trd_vni_cpl *c)
{
	if (c->status != 0)
		fail("GO: %s", strerror(-c->status));
	done_n++;
}

static int
mode_go(void)
{
	post_send(peer, TAG_GO, NULL, 0, 0, go_cpl);
	while (done_n < 1)
		reap(go_cpl, WAIT_MS);
	printf("%s %u:%u: GO delivered to %u:%u\n", prog, self.app, self.proc, peer.app, peer.proc);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* multicast */

static bool mcast_pattern;

static void
mcast_cpl(const struct trd_vni_cpl *c)
{
	if (c->status != 0)
		fail("multicast of %u B: %s", c->len, strerror(-c->status));
	done_n++;
}

static int
mode_mcast(void)
{
	struct trd_vni_addr none = {0, 0};
	uint8_t *b[MAX_SIZES];
	uint64_t t0 = now_us(), us;
	unsigned int total = n_sizes * repeat;

	for (unsigned int k = 0; k < n_sizes; k++) {
		b[k] = pool_alloc(sizes[k]);
		fill(b[k], sizes[k], seed_of(self, none, k));
	}
	for (unsigned int round = 0; round < repeat; round++)
		for (unsigned int k = 0; k < n_sizes; k++) {
			int rc;

			while ((rc = trd_vni_mcast(vni, peers, n_peers, TAG_DATA(k), b[k], sizes[k],
						   0, k)) == -EAGAIN)
				reap(mcast_cpl, WAIT_MS);
			if (rc != 0)
				fail("mcast: %s", strerror(-rc));
		}
	while (done_n < total)
		reap(mcast_cpl, WAIT_MS);
	us = now_us() - t0;
	printf("%s %u:%u: %u multicasts to %u processes done in %.3f s (%.2f us each); doorbell 0 "
	       "= %" PRIu64 "\n",
	       prog, self.app, self.proc, total, n_peers, (double)us * 1e-6, (double)us / total,
	       trd_vni_doorbell(vni, 0));
	if (trd_vni_doorbell(vni, 0) != total)
		fail("doorbell 0 is %" PRIu64 ", expected %u", trd_vni_doorbell(vni, 0), total);
	return 0;
}

static void
expect_cpl(const struct trd_vni_cpl *c)
{
	struct trd_vni_addr none = {0, 0};
	unsigned int k = (unsigned int)c->cookie;
	size_t bad = 0;

	if (c->status != 0)
		fail("receive %u: %s", k, strerror(-c->status));
	if (c->len != sizes[k] ||
	    !check(c->buf, c->len, seed_of(peer, mcast_pattern ? none : self, k), &bad))
		fail("message %u from %u:%u: %u B (expected %zu), differs at byte %zu", k,
		     c->peer.app, c->peer.proc, c->len, sizes[k], bad);
	bytes_in += c->len;
	done_n++;
}

static int
mode_expect(void)
{
	uint8_t *b[MAX_SIZES];

	for (unsigned int k = 0; k < n_sizes; k++)
		b[k] = pool_alloc(sizes[k]);
	for (unsigned int round = 0; round < repeat; round++) {
		for (unsigned int k = 0; k < n_sizes; k++)
			post_recv(peer, TAG_DATA(k), b[k], sizes[k], k, expect_cpl);
		while (done_n < n_sizes * (round + 1))
			reap(expect_cpl, WAIT_MS);
	}
	printf("%s %u:%u: %u messages (%" PRIu64 " B) from %u:%u byte-exact\n", prog, self.app,
	       self.proc, n_sizes * repeat, bytes_in, peer.app, peer.proc);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* seq-send, seq-recv: ordering */

static void
seq_cpl(const struct trd_vni_cpl *c)
{
	unsigned int k = (unsigned int)c->cookie;
	size_t want = k == 0 ? msg_size : 64, bad = 0;

	if (c->status != 0)
		fail("%s %u: %s", c->kind == TRD_VNI_CPL_SEND ? "send" : "receive", k,
		     strerror(-c->status));
	if (c->tag == TAG_GO) {
		go_seen = true;
		return;
	}
	if (c->kind == TRD_VNI_CPL_RECV && c->has_data)
		fail("receive %u reports immediate data: it was sent without", k);
	if (c->kind == TRD_VNI_CPL_RECV &&
	    (c->len != want || !check(c->buf, c->len, seed_of(peer, self, k), &bad)))
		fail("receive %u got %u B (expected %zu B of message %u; byte %zu differs): "
		     "messages matched out of send order",
		     k, c->len, want, k, bad);
	done_n++;
}

static int
mode_seq_send(void)
{
	bufs = calloc(count, sizeof(*bufs));
	for (unsigned long i = 0; i < count; i++) {
		size_t len = i == 0 ? msg_size : 64;

		bufs[i] = pool_alloc(len);
		fill(bufs[i], len, seed_of(self, peer, (unsigned int)i));
		post_send(peer, TAG_DATA(0), bufs[i], len, i, seq_cpl);
	}
	while (done_n < count)
		reap(seq_cpl, WAIT_MS);
	printf("%s %u:%u: %lu messages sent, one tag\n", prog, self.app, self.proc, count);
	return 0;
}

static int
mode_seq_recv(void)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};

	post_recv(any, TAG_GO, NULL, 0, 0, seq_cpl);
	while (!go_seen)
		reap(seq_cpl, WAIT_MS);
	bufs = calloc(count, sizeof(*bufs));
	for (unsigned long i = 0; i < count; i++) {
		bufs[i] = pool_alloc(msg_size);
		post_recv(peer, TAG_DATA(0), bufs[i], msg_size, i, seq_cpl);
	}
	while (done_n < count)
		reap(seq_cpl, WAIT_MS);
	printf("%s %u:%u: %lu messages of one tag received in send order\n", prog, self.app,
	       self.proc, count);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* rma: one-sided writes, reads and atomics on malloc'd (non-pool) memory */

#define TAG_INFO 0xfeed000000000002ULL
#define TAG_DONE 0xfeed000000000003ULL
#define RMA_GUARD 4096
#define RMA_REGION ((4u << 20) + 128)
#define RMA_GUARD_BYTE 0xa5
#define RMA_N_AT 8

/* What a process tells its peer about its regions. */
struct rma_info {
	uint64_t va_key, off_key, ro_key, wo_key, at_key, dead_key;
	uint64_t base, at_base;
};

static struct trd_vni_addr absent = {TRD_VNI_ANY, TRD_VNI_ANY};
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
		fail("unexpected completion kind %d cookie %#" PRIx64 " status %d", c.kind, c.cookie,
		     c.status);
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

static int
mode_rma(void)
{
	static const size_t rsz[] = {1, 2, 7, 8, 63, 64, 65, 1000, 1344, 1345, 4095, 65537,
				     (1u << 20) + 3, 4u << 20};
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
				 TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE, &mine.va_key)) != 0 ||
	    mine.va_key == 0)
		fail("mr_reg: %s", strerror(-rc));
	mine.off_key = 0x5eed0000ULL + self.proc; /* the caller's key */
	if ((rc = trd_vni_mr_reg(vni, region, RMA_REGION,
				 TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE | TRD_VNI_MR_OFFSET,
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
		uint64_t at0 = low ? mine.at_base : theirs.at_base, atk = low ? mine.at_key : theirs.at_key;

		for (unsigned long i = 0; i < count; i++) {
			while ((rc = trd_vni_atomic(vni, lowp, TRD_VNI_AOP_SUM, 8, 1, 0, at0, atk, -1,
						    0xa70)) == -EAGAIN)
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
			       "peer runs its own\n", tw / 1e3, (double)n / (double)tw,
			       (now_us() - t0) / 1e3, (double)n / (double)(now_us() - t0));
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
	if ((rc = rma_write(self, selfsrc, 5000, (uint64_t)(uintptr_t)selfbuf + 3, self_key)) != 0 ||
	    memcmp(selfbuf + 3, selfsrc, 5000) != 0 || selfbuf[2] != 0 || selfbuf[5003] != 0)
		fail("write to self: %d", rc);
	if ((rc = rma_read(self, tmp, 5002, (uint64_t)(uintptr_t)selfbuf + 2, self_key)) != 0 ||
	    memcmp(tmp, selfbuf + 2, 5002) != 0)
		fail("read from self: %d", rc);

	/* atomics on the peer's words: 64-bit at[1], 32-bit on the high half of at[3] */
	{
		uint64_t a1 = theirs.at_base + 8, a3h = theirs.at_base + 3 * 8 + 4, a4 = theirs.at_base + 32;
		uint64_t k = theirs.at_key;

		expect_atomic(peer, TRD_VNI_AOP_SUM, 8, 5, 0, a1, k, 1001);
		expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, a1, k, 1006);
		expect_atomic(peer, TRD_VNI_AOP_SWAP, 8, 0x7777777777ULL, 0, a1, k, 1006);
		expect_atomic(peer, TRD_VNI_AOP_CSWAP, 8, 99, 0x7777777777ULL, a1, k, 0x7777777777ULL);
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
	expect_refused(rma_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, theirs.base, theirs.wo_key, &old),
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
	expect_refused(rma_atomic(peer, TRD_VNI_AOP_SUM, 8, 1, 0, theirs.at_base + 4, theirs.at_key,
				  &old),
		       -EACCES, "misaligned 8-byte atomic");
	expect_refused(rma_atomic(peer, TRD_VNI_AOP_SWAP, 4, 1, 0, theirs.at_base + 2, theirs.at_key,
				  &old),
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
		printf("not attached: -ECONNREFUSED, %" PRIu64 " ms per op\n", (now_us() - t0) / 2000);
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
			expect_atomic(peer, TRD_VNI_AOP_READ, 8, 0, 0, theirs.at_base, theirs.at_key,
				      want_sum);
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
		printf("peer gone: -ECONNREFUSED %" PRIu64 " ms after its GO\n", (now_us() - t0) / 1000);
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

/* ------------------------------------------------------------------------------------------ */
/* masks */

struct mask_case {
	uint64_t tag, ignore; /* the receive */
	uint64_t want;        /* the tag of the message it must get */
};

static struct trd_vni_cpl mask_got[8];
static unsigned int mask_n_recv, mask_n_send;

static void
mask_cpl(const struct trd_vni_cpl *c)
{
	if (c->status != 0)
		fail("%s tag %#" PRIx64 ": %s", c->kind == TRD_VNI_CPL_SEND ? "send" : "receive",
		     c->tag, strerror(-c->status));
	if (c->kind == TRD_VNI_CPL_SEND) {
		mask_n_send++;
		return;
	}
	if (c->cookie >= 8)
		fail("receive completion with cookie %" PRIu64, c->cookie);
	mask_got[c->cookie] = *c;
	mask_n_recv++;
}

/* Post the receives of @p rc (cookie = index), or the sends of the tags they want (with
 * @p recv_late, the sends first and every one of them complete, i.e. staged, before the
 * receives); check that receive i got the message of tag rc[i].want. */
static void
mask_round(const struct mask_case *rc, unsigned int n, bool recv_late, size_t len)
{
	uint8_t *rb[8], *sb[8];
	int r;

	memset(mask_got, 0, sizeof(mask_got));
	mask_n_recv = mask_n_send = 0;
	for (unsigned int i = 0; i < n; i++) {
		rb[i] = pool_alloc(len);
		sb[i] = pool_alloc(len);
		fill(sb[i], len, rc[i].want);
	}
	for (unsigned int pass = 0; pass < 2; pass++) {
		if ((pass == 0) == recv_late) {
			for (unsigned int i = 0; i < n; i++) {
				/* with immediate data, which the receive must report */
				while ((r = trd_vni_senddata(vni, self, rc[i].want, ~rc[i].want,
							     sb[i], len, -1, 100 + i)) == -EAGAIN)
					reap(mask_cpl, WAIT_MS);
				if (r != 0)
					fail("senddata: %s", strerror(-r));
			}
			while (recv_late && mask_n_send < n)
				reap(mask_cpl, WAIT_MS);
		} else {
			for (unsigned int i = 0; i < n; i++) {
				r = trd_vni_recv_mask(vni, self, rc[i].tag, rc[i].ignore, rb[i],
						      len, -1, i);
				if (r != 0)
					fail("recv_mask: %s", strerror(-r));
			}
		}
	}
	while (mask_n_recv < n || mask_n_send < n)
		reap(mask_cpl, WAIT_MS);
	for (unsigned int i = 0; i < n; i++) {
		size_t bad = 0;

		if (mask_got[i].tag != rc[i].want || mask_got[i].len != len ||
		    !mask_got[i].has_data || mask_got[i].data != ~rc[i].want ||
		    !check(rb[i], len, rc[i].want, &bad))
			fail("%s receive %u (tag %#" PRIx64 " ignore %#" PRIx64
			     "): got tag %#" PRIx64 " data %#" PRIx64
			     " %u B (byte %zu), expected tag %#" PRIx64,
			     recv_late ? "recv_late" : "early", i, rc[i].tag, rc[i].ignore, mask_got[i].tag,
			     mask_got[i].data, mask_got[i].len, bad, rc[i].want);
		trd_vni_free(vni, rb[i]);
		trd_vni_free(vni, sb[i]);
	}
}

/* probe and cancel: one operation outstanding at a time, its completion taken here */
static struct trd_vni_cpl pc_got;
static unsigned int pc_n;

static void
pc_cpl(const struct trd_vni_cpl *c)
{
	pc_got = *c;
	pc_n++;
}

static struct trd_vni_cpl
pc_one(uint64_t cookie, int status)
{
	pc_n = 0;
	while (pc_n == 0)
		reap(pc_cpl, WAIT_MS);
	if (pc_n != 1 || pc_got.cookie != cookie || pc_got.status != status)
		fail("%u completions; cookie %" PRIu64 " status %d, expected cookie %" PRIu64
		     " status %d",
		     pc_n, pc_got.cookie, pc_got.status, cookie, status);
	return pc_got;
}

static void
probe_cancel(void)
{
	struct trd_vni_addr any = {TRD_VNI_ANY, TRD_VNI_ANY};
	uint8_t *sb = pool_alloc(3000), *rb = pool_alloc(3000);
	struct trd_vni_cpl c;
	size_t bad = 0;
	int r;

	/* nothing waiting */
	if ((r = trd_vni_probe(vni, any, 0x5000, 0xff, 1)) != 0)
		fail("probe: %s", strerror(-r));
	pc_one(1, -ENOMSG);
	/* a long message with data, staged (its send completes once it is in staging) */
	fill(sb, 3000, 0x5077);
	if ((r = trd_vni_senddata(vni, self, 0x5077, 0xabc, sb, 3000, -1, 2)) != 0)
		fail("senddata: %s", strerror(-r));
	pc_one(2, 0);
	for (uint64_t k = 3; k <= 4; k++) { /* found, and still there the second time */
		if ((r = trd_vni_probe(vni, any, 0x5000, 0xff, k)) != 0)
			fail("probe: %s", strerror(-r));
		c = pc_one(k, 0);
		if (c.len != 3000 || c.tag != 0x5077 || !c.has_data || c.data != 0xabc ||
		    c.peer.app != self.app || c.peer.proc != self.proc)
			fail("probe %" PRIu64 ": %u B tag %#" PRIx64 " data %#" PRIx64
			     " from %u:%u",
			     k, c.len, c.tag, c.data, c.peer.app, c.peer.proc);
	}
	if ((r = trd_vni_recv_mask(vni, self, 0x5077, 0, rb, 3000, -1, 5)) != 0)
		fail("recv: %s", strerror(-r));
	c = pc_one(5, 0);
	if (c.len != 3000 || !check(rb, 3000, 0x5077, &bad))
		fail("the probed message: %u B, byte %zu differs", c.len, bad);
	if ((r = trd_vni_probe(vni, any, 0x5000, 0xff, 6)) != 0)
		fail("probe: %s", strerror(-r));
	pc_one(6, -ENOMSG);
	/* a receive nobody sends to, withdrawn */
	if ((r = trd_vni_recv_mask(vni, self, 0x6000, 0, rb, 64, -1, 7)) != 0)
		fail("recv: %s", strerror(-r));
	if ((r = trd_vni_cancel(vni, 7)) != 0)
		fail("cancel: %s", strerror(-r));
	pc_one(7, -ECANCELED);
	if ((r = trd_vni_cancel(vni, 7)) != -ENOENT)
		fail("cancel of a completed receive: %d, expected -ENOENT", r);
	if (trd_vni_pending(vni) != 0)
		fail("%u operations pending after the probes and the cancel", trd_vni_pending(vni));
	trd_vni_free(vni, sb);
	trd_vni_free(vni, rb);
}

static int
mode_masks(void)
{
	/* Posted first: each message matches the earliest posted receive it fits, whatever the
	 * order the messages come in. */
	static const struct mask_case early[] = {
		{0x1200, 0xff, 0x12ab}, /* low byte ignored */
		{0x3400, 0, 0x3400},    /* exact */
		{0x9000000000000000ULL, 0x0fffffffffffffffULL, 0x9000000000000777ULL},
		{0xab00cd, 0xff00, 0xab77cd}, /* a hole in the middle */
		{0, UINT64_MAX, 0x5555},      /* any tag: posted last */
	};
	/* Staged first: a receive takes the earliest staged message it fits; tag bits that are
	 * also ignored do not matter. */
	static const struct mask_case late_c[] = {
		{0x78ff, 0xff, 0x7802},
		{0x7700, 0xff, 0x7701},
		{0x1ULL << 40, (0xffULL << 32), 0x3f00000000ULL | (0x1ULL << 40)},
		{0x4242, 0, 0x4242},
	};

	/* short (eager) and long (request, grant, data) messages */
	mask_round(early, sizeof(early) / sizeof(early[0]), false, 64);
	mask_round(early, sizeof(early) / sizeof(early[0]), false, 5000);
	mask_round(late_c, sizeof(late_c) / sizeof(late_c[0]), true, 64);
	mask_round(late_c, sizeof(late_c) / sizeof(late_c[0]), true, 5000);
	probe_cancel();
	printf("masks: %zu early and %zu late masked receives matched, with immediate data, "
	       "short and long; probe and cancel\n",
	       sizeof(early) / sizeof(early[0]), sizeof(late_c) / sizeof(late_c[0]));
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* claim */

/* Operations of the claim mode: one interface at a time, completions taken by cookie. */
static const char *cl_socket; /* the engine's socket, for the second interface */
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

static int
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
	/* the refused send finds no process any more: -ECONNREFUSED once the engine's
	 * --noproc-ms passed */
	cl_take(vni, 82, -ECONNREFUSED);
	if (cl_n != 0 || trd_vni_pending(vni) != 0)
		fail("%u completions left, %u operations pending", cl_n, trd_vni_pending(vni));
	trd_vni_free(vni, sb);
	trd_vni_free(vni, rb);
	printf("claim: staged eager, staged long and refused long messages claimed and received "
	       "byte-exact; discards; bad handles; a close with claims\n");
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

static int
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

/* attach: an identity the engine may have chosen, then commands from stdin */

static int
mode_attach(void)
{
	char line[1100];

	printf("self %u:%u\n", self.app, self.proc);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "quit") == 0)
			break;
		if (strncmp(line, "exchange ", 9) == 0) {
			n_peers = parse_addrs(line + 9, peers);
			mode_exchange();
		} else {
			fail("unknown command '%s'", line);
		}
	}
	printf("%s %u:%u: detaching\n", prog, self.app, self.proc);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */

int
main(int argc, char **argv)
{
	enum {
		O_SOCK = 256,
		O_APP,
		O_PROC,
		O_POOL,
		O_SHORT,
		O_PEERS,
		O_SIZES,
		O_LATE,
		O_TO,
		O_FROM,
		O_SIZE,
		O_COUNT,
		O_WINDOW,
		O_LOG,
		O_MCAST,
		O_RESET,
		O_GOAFTER,
		O_TIMEOUT,
		O_REPEAT,
		O_DEADLINE,
		O_STOPGO,
		O_ORDERED,
		O_ABSENT
	};
	static const struct option lo[] = {
		{"socket", required_argument, NULL, O_SOCK},
		{"app", required_argument, NULL, O_APP},
		{"proc", required_argument, NULL, O_PROC},
		{"pool", required_argument, NULL, O_POOL},
		{"short", required_argument, NULL, O_SHORT},
		{"peers", required_argument, NULL, O_PEERS},
		{"sizes", required_argument, NULL, O_SIZES},
		{"late", required_argument, NULL, O_LATE},
		{"to", required_argument, NULL, O_TO},
		{"from", required_argument, NULL, O_FROM},
		{"size", required_argument, NULL, O_SIZE},
		{"count", required_argument, NULL, O_COUNT},
		{"window", required_argument, NULL, O_WINDOW},
		{"log", required_argument, NULL, O_LOG},
		{"mcast", no_argument, NULL, O_MCAST},
		{"tolerate-reset", no_argument, NULL, O_RESET},
		{"go-after", required_argument, NULL, O_GOAFTER},
		{"connect-timeout", required_argument, NULL, O_TIMEOUT},
		{"repeat", required_argument, NULL, O_REPEAT},
		{"deadline", required_argument, NULL, O_DEADLINE},
		{"stop-on-go", no_argument, NULL, O_STOPGO},
		{"ordered", no_argument, NULL, O_ORDERED},
		{"absent", required_argument, NULL, O_ABSENT},
		{NULL, 0, NULL, 0},
	};
	struct trd_vni_conf conf = {.connect_timeout_ms = 10000, .n_send = 256, .n_recv = 256};
	const char *mode;
	size_t late_sizes[MAX_SIZES];
	unsigned int n_late = 0;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case O_SOCK: conf.socket = optarg; break;
		case O_APP: conf.app = (uint32_t)strtoul(optarg, NULL, 0); break;
		case O_PROC:
			conf.proc = strcmp(optarg, "any") == 0 ? TRD_VNI_ANY
							       : (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_POOL: conf.pool_size = parse_size(optarg); break;
		case O_SHORT: conf.short_max = atoi(optarg); break;
		case O_PEERS:
		case O_TO:
			n_peers = parse_addrs(optarg, peers);
			peer = peers[0];
			break;
		case O_FROM:
			if (parse_addr(optarg, &peer) != 0)
				fail("bad --from");
			break;
		case O_SIZES: n_sizes = parse_sizes(optarg, sizes); break;
		case O_LATE: n_late = parse_sizes(optarg, late_sizes); break;
		case O_SIZE: msg_size = parse_size(optarg); break;
		case O_COUNT: count = strtoul(optarg, NULL, 0); break;
		case O_WINDOW: window = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_LOG: log_path = optarg; break;
		case O_MCAST: mcast_pattern = true; break;
		case O_RESET: tolerate_reset = true; break;
		case O_GOAFTER: go_after = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_STOPGO: stop_on_go = true; break;
		case O_ORDERED:
			conf.ordered = true;
			break;
		case O_ABSENT:
			if (parse_addr(optarg, &absent) != 0)
				fail("bad --absent");
			break;
		case O_DEADLINE: deadline_s = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_REPEAT: repeat = (unsigned int)strtoul(optarg, NULL, 0); break;
		case O_TIMEOUT: conf.connect_timeout_ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of vni_app.c\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no mode\n", prog);
		return 2;
	}
	mode = argv[optind];
	self.app = conf.app;
	self.proc = conf.proc;
	cl_socket = conf.socket;
	for (unsigned int i = 0; i < n_late; i++)
		for (unsigned int k = 0; k < n_sizes; k++)
			if (sizes[k] == late_sizes[i])
				late[k] = true;
	if (window == 0)
		window = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(deadline_s); /* a test never hangs: SIGALRM ends the process */

	vni = trd_vni_open(&conf);
	if (vni == NULL)
		fail("cannot attach to %s: %s", conf.socket ? conf.socket : "(default)",
		     strerror(errno));
	{
		struct trd_vni_info info;

		if (trd_vni_info(vni, &info) != 0 || info.self.app != conf.app ||
		    (conf.proc != TRD_VNI_ANY && info.self.proc != conf.proc) ||
		    info.self.proc == TRD_VNI_ANY)
			fail("trd_vni_info: not the identity asked for");
		self = info.self; /* the process the engine chose, with --proc any */
	}
	if (strcmp(mode, "exchange") == 0)
		rc = mode_exchange();
	else if (strcmp(mode, "flood") == 0)
		rc = mode_flood();
	else if (strcmp(mode, "sink") == 0)
		rc = mode_sink();
	else if (strcmp(mode, "late-flood") == 0)
		rc = mode_late_flood();
	else if (strcmp(mode, "late-sink") == 0)
		rc = mode_late_sink();
	else if (strcmp(mode, "go") == 0)
		rc = mode_go();
	else if (strcmp(mode, "mcast") == 0)
		rc = mode_mcast();
	else if (strcmp(mode, "expect") == 0)
		rc = mode_expect();
	else if (strcmp(mode, "seq-send") == 0)
		rc = mode_seq_send();
	else if (strcmp(mode, "seq-recv") == 0)
		rc = mode_seq_recv();
	else if (strcmp(mode, "masks") == 0)
		rc = mode_masks();
	else if (strcmp(mode, "rma") == 0)
		rc = mode_rma();
	else if (strcmp(mode, "claim") == 0)
		rc = mode_claim();
	else if (strcmp(mode, "trunc") == 0)
		rc = mode_trunc();
	else if (strcmp(mode, "attach") == 0)
		rc = mode_attach();
	else
		fail("unknown mode '%s'", mode);
	trd_vni_close(vni);
	return rc;
}
