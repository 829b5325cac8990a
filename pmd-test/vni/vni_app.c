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
 *   rev-send --to A:P --size S --count N      (with --ordered: an ordered interface)
 *       send N messages of S bytes at once, message k with tag k; wait for every one.
 *   rev-recv --from A:P --size S --count N
 *       receive them last-first, one at a time: post the receive of tag N-1, wait for it,
 *       then N-2 ... (what an MPI program that receives one sender's messages in another
 *       order does); each checked byte-exact.
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
 *   claim --peers A:P [--hdr-refused]  (this process also opens a second interface as A:P)
 *       claims (trd_vni_claim, trd_vni_recv_claimed, trd_vni_discard, trd_vni_discard_first),
 *       sending to itself: a staged eager message, a long one staged, and a long one refused
 *       for want of staging (the engine runs with --staging 1M) are claimed; a probe and a
 *       receive no longer see them; the claimed receive gets them byte-exact with tag, source
 *       and data; discards (the senders complete with 0); bad handles (0, unknown, used,
 *       the other interface's) fail with -EINVAL; the second interface closes holding a
 *       staged and a refused claimed message. The long message is accepted as its header
 *       only (its sender fails with -ECONNRESET at that close); with --hdr-refused (the
 *       engine runs with --vni-hdr-max 0) it is refused and asked again (-ECONNREFUSED).
 *   eager-hdr --peers A:P  (this process also opens a second interface as A:P)
 *       eager messages to itself behind a share of staging filled by one 64 KiB message
 *       (the engine runs with --staging 64K), each kept as its header only (its send does
 *       not complete before its receive): probed, received truncated, claimed into process
 *       memory, discarded, sent as a multicast, three of one tag matched in send order,
 *       and one to the second interface, which closes holding it (-ECONNRESET).
 *   trunc
 *       truncation at the receiver, sending to itself: messages longer than their receive
 *       (eager into a posted receive, eager staged, long granted into a posted receive, long
 *       staged, long refused then claimed into a short buffer) deliver their first cap bytes
 *       (nothing past them) with -EMSGSIZE, the whole length and the immediate data; every
 *       send completes with 0 and the message's length.
 *   coll --peers A:P
 *       collectives computed by the engines (trd_vni_allreduce, trd_vni_bcast,
 *       trd_vni_barrier) on a 2x1x1 torus, one process per node, and refused ones: see
 *       vni_app_coll.c.
 *   attach
 *       print "self A:P" (the identity trd_vni_info gives: with --proc any, the process the
 *       engine chose), then obey lines on stdin: "exchange A:P,..." (as the exchange mode,
 *       with --sizes), "procs" (print "procs N", trd_vni_busy_procs), "cpus" (print "cpus" and
 *       the engine's CPUs, or "none": trd_vni_engine_cpus), "compute N [FLAGS]"
 *       (trd_vni_hint_compute of N, then of 1001, then of N with the unknown flag 2: print
 *       "compute RC1 RC2 RC3"), "quit" (or the end of stdin)
 *       detaches.
 * --proc any attaches with TRD_VNI_ANY. A failed attach prints "cannot attach ...: ERROR".
 * --wait-ms N: how long the exchange mode waits for a completion before it fails, saying what
 * it still waits for (default WAIT_MS, 60 s).
 * Every mode prints one summary line and exits 0 on success, 1 on a failure.
 */
#include "vni_app.h"

struct trd_vni *vni;
struct trd_vni_addr self;
const char *prog = "vni-app";

void
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

uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The bytes of message k from src to dst (dst 0:0 for a multicast), 8 at a time. */
uint64_t
seed_of(struct trd_vni_addr src, struct trd_vni_addr dst, unsigned int k)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)src.app << 40) ^
		     ((uint64_t)src.proc << 24) ^ ((uint64_t)dst.app << 16) ^
		     ((uint64_t)dst.proc << 4) ^ k;

	return s ? s : 1;
}

void
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

bool
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
	for (tok = strtok_r(buf, ",", &save); tok && n < MAX_PEERS;
	     tok = strtok_r(NULL, ",", &save))
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
	for (tok = strtok_r(buf, ",", &save); tok && n < MAX_SIZES;
	     tok = strtok_r(NULL, ",", &save))
		out[n++] = parse_size(tok);
	return n;
}

void *
pool_alloc(size_t len)
{
	void *p = trd_vni_alloc(vni, len ? len : 1);

	if (p == NULL)
		fail("pool exhausted allocating %zu B (raise --pool)", len);
	return p;
}

/* Set by a mode that can say which of its operations a stall left waiting. */
static void (*stall_note)(void);
static int wait_ms = WAIT_MS; /* --wait-ms: the exchange's patience */

void
reap(cpl_fn fn, int timeout_ms)
{
	struct trd_vni_cpl c[16];
	int n = trd_vni_wait(vni, c, 16, timeout_ms);

	if (n == -ETIMEDOUT && stall_note != NULL)
		stall_note();
	if (n == -ETIMEDOUT)
		fail("no completion within %d ms (%u pending)", timeout_ms, trd_vni_pending(vni));
	if (n < 0)
		fail("wait: %s", strerror(-n));
	for (int i = 0; i < n; i++)
		fn(&c[i]);
}

/* ------------------------------------------------------------------------------------------ */
/* exchange */

struct trd_vni_addr peers[MAX_PEERS];
unsigned int n_peers;
static size_t sizes[MAX_SIZES];
static unsigned int n_sizes;
static bool late[MAX_SIZES];
static uint8_t *sbuf[MAX_PEERS][MAX_SIZES], *rbuf[MAX_PEERS][MAX_SIZES];
static unsigned int late_sends_left[MAX_PEERS];
static unsigned int sends_left, recvs_left;
static uint64_t bytes_in, bytes_out;
static bool ready_sent[MAX_PEERS];
/* what this round still waits for: each message k to and from peer p, and READY each way */
static bool send_open[MAX_PEERS][MAX_SIZES], recv_open[MAX_PEERS][MAX_SIZES];
static bool ready_in_open[MAX_PEERS], ready_out_open[MAX_PEERS];
static unsigned int cur_round;

static void post_recv(struct trd_vni_addr src, uint64_t tag, void *buf, size_t cap, uint64_t cookie,
		      cpl_fn fn);
static void post_send(struct trd_vni_addr dst, uint64_t tag, const void *buf, size_t len,
		      uint64_t cookie, cpl_fn fn);

static void exchange_cpl(const struct trd_vni_cpl *c);

static void
post_late(unsigned int p)
{
	for (unsigned int k = 0; k < n_sizes; k++)
		if (late[k])
			post_recv(peers[p], TAG_DATA(k), rbuf[p][k], sizes[k],
				  ((uint64_t)p << 8) | k, exchange_cpl);
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
		if (c->tag == TAG_READY) {
			ready_out_open[p] = false;
			return;
		}
		send_open[p][k] = false;
		bytes_out += c->len;
		if (late[k] && --late_sends_left[p] == 0 && !ready_sent[p]) {
			/* every late message is in the peer's engine: tell it */
			ready_sent[p] = true;
			ready_out_open[p] = true;
			post_send(peers[p], TAG_READY, NULL, 0, (uint64_t)p << 8, exchange_cpl);
		}
		return;
	}
	recvs_left--;
	if (c->tag == TAG_READY) {
		ready_in_open[p] = false;
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
	recv_open[p][k] = false;
	bytes_in += c->len;
}

/* A stall: what this round of the exchange still waits for (on stderr, before the FAIL). */
static void
exchange_stall(void)
{
	fprintf(stderr, "%s %u:%u: round %u waits for %u sends, %u receives:", prog, self.app,
		self.proc, cur_round + 1, sends_left, recvs_left);
	for (unsigned int p = 0; p < n_peers; p++) {
		if (ready_out_open[p])
			fprintf(stderr, " send READY to %u:%u;", peers[p].app, peers[p].proc);
		if (ready_in_open[p])
			fprintf(stderr, " receive READY from %u:%u;", peers[p].app, peers[p].proc);
		for (unsigned int k = 0; k < n_sizes; k++) {
			if (send_open[p][k])
				fprintf(stderr, " send %zu B to %u:%u%s;", sizes[k], peers[p].app,
					peers[p].proc, late[k] ? " (late)" : "");
			if (recv_open[p][k])
				fprintf(stderr, " receive %zu B from %u:%u%s%s;", sizes[k],
					peers[p].app, peers[p].proc, late[k] ? " (late)" : "",
					late[k] && ready_in_open[p] ? ", not posted yet" : "");
		}
	}
	fputc('\n', stderr);
}

static void
post_recv(struct trd_vni_addr src, uint64_t tag, void *buf, size_t cap, uint64_t cookie, cpl_fn fn)
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
	stall_note = exchange_stall;
	for (unsigned int round = 0; round < repeat; round++) {
		cur_round = round;
		for (unsigned int p = 0; p < n_peers; p++) {
			ready_sent[p] = false;
			ready_out_open[p] = false;
			ready_in_open[p] = n_late != 0;
			for (unsigned int k = 0; k < n_sizes; k++)
				send_open[p][k] = recv_open[p][k] = true;
			for (unsigned int k = 0; k < n_sizes; k++)
				memset(rbuf[p][k], 0xee, sizes[k]);
		}
		sends_left = n_peers * n_sizes + (n_late ? n_peers : 0);
		recvs_left = n_peers * n_sizes + (n_late ? n_peers : 0);
		for (unsigned int p = 0; p < n_peers; p++) {
			late_sends_left[p] = n_late;
			if (n_late)
				post_recv(peers[p], TAG_READY, NULL, 0, (uint64_t)p << 8,
					  exchange_cpl);
			for (unsigned int k = 0; k < n_sizes; k++)
				if (!late[k])
					post_recv(peers[p], TAG_DATA(k), rbuf[p][k], sizes[k],
						  ((uint64_t)p << 8) | k, exchange_cpl);
		}
		for (unsigned int k = 0; k < n_sizes; k++)
			for (unsigned int p = 0; p < n_peers; p++)
				post_send(peers[p], TAG_DATA(k), sbuf[p][k], sizes[k],
					  ((uint64_t)p << 8) | k, exchange_cpl);
		while (sends_left > 0 || recvs_left > 0)
			reap(exchange_cpl, wait_ms);
		if (repeat > 1)
			printf("%s %u:%u: round %u done\n", prog, self.app, self.proc, round + 1);
	}
	printf("%s %u:%u: exchange with %u peers done in %.3f s: %u sizes each way (%u received "
	       "late), %u round(s), %" PRIu64 " B out, %" PRIu64 " B in, byte-exact\n",
	       prog, self.app, self.proc, n_peers, (double)(now_us() - t0) * 1e-6, n_sizes, n_late,
	       repeat, bytes_out, bytes_in);
	stall_note = NULL;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* flood and sink */

struct trd_vni_addr peer;
static size_t msg_size;
unsigned long count;
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
	       "by their sender's death%s\n",
	       prog, self.app, self.proc, done_n, msg_size, (double)(now_us() - t0) * 1e-6, reset_n,
	       go_seen ? "; stopped by GO" : "");
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
/* rev-send, rev-recv: one sender's messages received in another order than they were sent */

static bool rev_got;

static void
rev_cpl(const struct trd_vni_cpl *c)
{
	unsigned int k = (unsigned int)c->cookie;
	size_t bad = 0;

	if (c->status != 0)
		fail("%s %u: %s", c->kind == TRD_VNI_CPL_SEND ? "send" : "receive", k,
		     strerror(-c->status));
	if (c->kind == TRD_VNI_CPL_RECV) {
		if (c->tag != TAG_DATA(k) || c->len != msg_size ||
		    !check(c->buf, c->len, seed_of(peer, self, k), &bad))
			fail("receive %u got %u B of tag %#" PRIx64
			     " (expected %zu B of message %u; "
			     "byte %zu differs)",
			     k, c->len, c->tag, msg_size, k, bad);
		rev_got = true;
	}
	done_n++;
}

static int
mode_rev_send(void)
{
	bufs = calloc(count, sizeof(*bufs));
	for (unsigned long i = 0; i < count; i++) {
		bufs[i] = pool_alloc(msg_size);
		fill(bufs[i], msg_size, seed_of(self, peer, (unsigned int)i));
		post_send(peer, TAG_DATA(i), bufs[i], msg_size, i, rev_cpl);
	}
	while (done_n < count)
		reap(rev_cpl, WAIT_MS);
	printf("%s %u:%u: %lu messages of %zu B sent, one tag each\n", prog, self.app, self.proc,
	       count, msg_size);
	return 0;
}

static int
mode_rev_recv(void)
{
	uint8_t *buf = pool_alloc(msg_size);

	for (unsigned long i = count; i-- > 0;) {
		rev_got = false;
		memset(buf, 0, msg_size);
		post_recv(peer, TAG_DATA(i), buf, msg_size, i, rev_cpl);
		while (!rev_got)
			reap(rev_cpl, WAIT_MS);
	}
	printf("%s %u:%u: %lu messages of %zu B received last-first, byte-exact\n", prog, self.app,
	       self.proc, count, msg_size);
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
			     recv_late ? "recv_late" : "early", i, rc[i].tag, rc[i].ignore,
			     mask_got[i].tag, mask_got[i].data, mask_got[i].len, bad, rc[i].want);
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
		} else if (strcmp(line, "procs") == 0) {
			printf("procs %u\n", trd_vni_busy_procs(vni));
			fflush(stdout);
		} else if (strncmp(line, "compute ", 8) == 0) {
			unsigned int pm = 0, fl = 0;
			int rc;

			if (sscanf(line + 8, "%u %u", &pm, &fl) < 1)
				fail("compute: '%s'", line + 8);
			rc = trd_vni_hint_compute(vni, pm, fl);
			printf("compute %d %d %d\n", rc, trd_vni_hint_compute(vni, 1001, fl),
			       trd_vni_hint_compute(vni, pm, 2));
			fflush(stdout);
		} else if (strcmp(line, "cpus") == 0) {
			uint64_t m[TRD_VNI_CPU_WORDS];
			int n = trd_vni_engine_cpus(vni, m);

			printf("cpus");
			for (unsigned int c = 0; n > 0 && c < 64 * TRD_VNI_CPU_WORDS; c++)
				if (m[c / 64] & (UINT64_C(1) << (c % 64)))
					printf(" %u", c);
			printf("%s\n", n > 0 ? "" : " none");
			fflush(stdout);
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
		O_WAIT_MS,
		O_STOPGO,
		O_ORDERED,
		O_HDR_REFUSED,
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
		{"wait-ms", required_argument, NULL, O_WAIT_MS},
		{"stop-on-go", no_argument, NULL, O_STOPGO},
		{"ordered", no_argument, NULL, O_ORDERED},
		{"hdr-refused", no_argument, NULL, O_HDR_REFUSED},
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
		case O_SOCK:
			conf.socket = optarg;
			break;
		case O_APP:
			conf.app = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_PROC:
			conf.proc = strcmp(optarg, "any") == 0 ? TRD_VNI_ANY
							       : (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_POOL:
			conf.pool_size = parse_size(optarg);
			break;
		case O_SHORT:
			conf.short_max = atoi(optarg);
			break;
		case O_PEERS:
		case O_TO:
			n_peers = parse_addrs(optarg, peers);
			peer = peers[0];
			break;
		case O_FROM:
			if (parse_addr(optarg, &peer) != 0)
				fail("bad --from");
			break;
		case O_SIZES:
			n_sizes = parse_sizes(optarg, sizes);
			break;
		case O_LATE:
			n_late = parse_sizes(optarg, late_sizes);
			break;
		case O_SIZE:
			msg_size = parse_size(optarg);
			break;
		case O_COUNT:
			count = strtoul(optarg, NULL, 0);
			break;
		case O_WINDOW:
			window = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case O_LOG:
			log_path = optarg;
			break;
		case O_MCAST:
			mcast_pattern = true;
			break;
		case O_RESET:
			tolerate_reset = true;
			break;
		case O_GOAFTER:
			go_after = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case O_STOPGO:
			stop_on_go = true;
			break;
		case O_HDR_REFUSED:
			cl_hdr_refused = true;
			break;
		case O_ORDERED:
			conf.ordered = true;
			break;
		case O_ABSENT:
			if (parse_addr(optarg, &absent) != 0)
				fail("bad --absent");
			break;
		case O_DEADLINE:
			deadline_s = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case O_WAIT_MS:
			wait_ms = (int)strtoul(optarg, NULL, 0);
			if (wait_ms <= 0)
				wait_ms = WAIT_MS;
			break;
		case O_REPEAT:
			repeat = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case O_TIMEOUT:
			conf.connect_timeout_ms = (unsigned int)strtoul(optarg, NULL, 0);
			break;
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
	else if (strcmp(mode, "rev-send") == 0)
		rc = mode_rev_send();
	else if (strcmp(mode, "rev-recv") == 0)
		rc = mode_rev_recv();
	else if (strcmp(mode, "masks") == 0)
		rc = mode_masks();
	else if (strcmp(mode, "rma") == 0)
		rc = mode_rma();
	else if (strcmp(mode, "claim") == 0)
		rc = mode_claim();
	else if (strcmp(mode, "eager-hdr") == 0)
		rc = mode_eager_hdr();
	else if (strcmp(mode, "trunc") == 0)
		rc = mode_trunc();
	else if (strcmp(mode, "coll") == 0)
		rc = mode_coll();
	else if (strcmp(mode, "attach") == 0)
		rc = mode_attach();
	else
		fail("unknown mode '%s'", mode);
	trd_vni_close(vni);
	return rc;
}
