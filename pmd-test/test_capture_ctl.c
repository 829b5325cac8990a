/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture controlled at run time through telemetry (/toroid/capture/start, stop, rotate,
 * status), as toroid-dump --attach uses it, on a 2x1x1 torus of ring links in this process.
 * This thread polls the nodes and asks the telemetry socket in turn, so the figures are exact:
 *  - start, 10 puts of 1000 B from node0 to node1, stop: the file holds exactly the frames the
 *    links carried meanwhile (each twice: sent by node0, received by node1), among them the 20
 *    put frames with the right offsets and bytes; status counted every frame and byte;
 *  - a BPF filter (puts only): only the 20 put frames, every other frame counted as filtered;
 *  - rotation by size in a ring of 3 files: 3 files, each within the size, no fourth; the
 *    rotate command: the next file; a limit: the file stays under it, the rest is dropped;
 *  - bad requests (relative path, unknown option, size or limit under 4k, bad filter) answer
 *    an error, start nothing;
 *  - start, rotate and stop while a worker lcore serves the nodes and puts flow: whole files;
 *  - a symlink at the path is refused (-ELOOP, the target untouched), the file is mode 0600;
 *  - a rotation whose next file cannot be opened answers the error and the capture goes on in
 *    the file it had, nothing dropped;
 *  - writes that fail (/dev/full): frames counted as dropped, the error in the figures;
 *  - a second capture into a file being written: the same settings share it, others -EBUSY;
 *  - capture started and stopped on the nodes by index (as telemetry finds them) from a thread
 *    while this one creates and frees nodes: no access to a freed node (run it under ASan).
 * The files are read back with libpcap (pcapng) and decoded with trd_wire_parse().
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <toroid/telemetry.h>
#include <toroid/testing.h>
#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "test_common.h"

#define TIMEOUT_US 10000000
#define PUT_LEN    1000

static char dir[256];
static struct test_tel tel;
static struct trd_net *net;
static struct trd_node *n0, *n1;
static struct trd_mr *mr1;
static uint8_t src[64 * PUT_LEN], dst[64 * PUT_LEN];
static uint16_t ctr;

/* ---- telemetry ---- */

/* Send @p cmd; the answer in tel.reply. */
static const char *
ask(const char *cmd)
{
	return test_tel_ask(&tel, cmd);
}

/* A number of the (flat) answer. */
static uint64_t
num(const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(tel.reply, k);
	T_ASSERT(p != NULL, "no %s in %s", key, tel.reply);
	return strtoull(p + strlen(k), NULL, 10);
}

static void
ask_ok(const char *cmd)
{
	ask(cmd);
	T_ASSERT(num("ok") == 1, "%s: %s", cmd, tel.reply);
}

/* ---- traffic ---- */

/* The links' frames so far, both ways, of both nodes. */
static uint64_t
link_frames(void)
{
	uint64_t t = 0;
	struct trd_node *nd[2] = {n0, n1};

	for (int k = 0; k < 2; k++)
		for (unsigned int i = 0; i < trd_node_n_links(nd[k]); i++) {
			struct trd_link_stats st;

			T_EQ(trd_link_stats_get(trd_node_link(nd[k], i), &st), 0);
			t += st.tx_pkts + st.rx_pkts;
		}
	return t;
}

/* Poll until nothing is left to send (acks included). */
static void
settle(void)
{
	for (int i = 0; i < 2000; i++)
		trd_net_poll(net);
}

/* @p count puts of PUT_LEN bytes from node0 to node1, the i-th at offset (first + i) * PUT_LEN,
 * one at a time (no two share a frame). */
static void
puts_(unsigned int first, unsigned int count)
{
	for (unsigned int i = first; i < first + count; i++) {
		struct trd_desc d;

		T_EQ(trd_counter_set(n1, ctr, PUT_LEN), 0);
		trd_desc_put(&d, trd_node_coord(n1), src + i * PUT_LEN, PUT_LEN, trd_mr_key(mr1),
			     i * PUT_LEN, 0, ctr);
		T_EQ(trd_inject(trd_inj_fifo(n0, 0), &d), 0);
		T_EQ(trd_counter_wait(n1, ctr, TIMEOUT_US), 0);
	}
	settle();
	T_ASSERT(memcmp(src + first * PUT_LEN, dst + first * PUT_LEN, count * PUT_LEN) == 0,
		 "puts landed");
}

/* ---- the files ---- */

struct cap_count {
	uint64_t frames, puts, other;
	uint64_t put_at[64]; /* put frames seen per offset */
	int bad_bytes;
};

static void
read_cap(const char *path, struct cap_count *cc)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;

	memset(cc, 0, sizeof(*cc));
	T_ASSERT(p != NULL, "%s: %s", path, err);
	T_EQ(pcap_datalink(p), DLT_EN10MB);
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct trd_pkt pk;

		cc->frames++;
		T_EQ(h->caplen, h->len);
		T_EQ(trd_wire_parse(data, h->caplen, &pk), 0);
		if (pk.type != TRD_PKT_PUT) {
			cc->other++;
			continue;
		}
		cc->puts++;
		T_EQ(pk.pay_len, PUT_LEN);
		T_ASSERT(pk.offset % PUT_LEN == 0 && pk.offset / PUT_LEN < 64, "offset %" PRIu64,
			 pk.offset);
		cc->put_at[pk.offset / PUT_LEN]++;
		if (memcmp(data + TRD_FRAME_HLEN, src + pk.offset, PUT_LEN) != 0)
			cc->bad_bytes++;
	}
	/* the end of the file, not a block cut short */
	T_ASSERT(rc == PCAP_ERROR_BREAK, "%s: %s", path, pcap_geterr(p));
	pcap_close(p);
}

static off_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- the parts ---- */

static void
part_whole(void)
{
	char cmd[512], path[300];
	struct cap_count cc;
	uint64_t before, carried, frames, bytes;

	settle();
	ask_ok("/toroid/capture/status");
	T_EQ(num("active"), 0);
	snprintf(path, sizeof(path), "%s/all.pcapng", dir);
	snprintf(cmd, sizeof(cmd), "/toroid/capture/start,%s", path);
	before = link_frames();
	ask_ok(cmd);
	T_EQ(num("active"), 1);
	T_EQ(num("nodes"), 2);
	T_ASSERT(strstr(tel.reply, path) != NULL, "file named: %s", tel.reply);
	T_EQ(num("limit"), TRD_CAPTURE_LIMIT_DEFAULT);
	puts_(0, 10);
	carried = link_frames() - before;
	ask_ok("/toroid/capture/status");
	frames = num("frames");
	bytes = num("bytes");
	T_EQ(num("dropped"), 0);
	T_EQ(num("filtered"), 0);
	T_EQ(num("files"), 1);
	ask_ok("/toroid/capture/stop");
	T_EQ(num("frames"), frames);
	ask_ok("/toroid/capture/status");
	T_EQ(num("active"), 0);
	read_cap(path, &cc);
	T_EQ(cc.frames, frames);
	T_EQ(cc.frames, carried);
	T_EQ((uint64_t)file_size(path), bytes);
	T_EQ(cc.puts, 20);
	for (int i = 0; i < 10; i++)
		T_EQ(cc.put_at[i], 2);
	T_EQ(cc.bad_bytes, 0);
	printf("whole: %" PRIu64 " frames (%" PRIu64 " puts, %" PRIu64 " others), %" PRIu64
	       " bytes, as the links carried\n",
	       cc.frames, cc.puts, cc.other, bytes);
}

static void
part_filter(void)
{
	char cmd[512], path[300];
	struct cap_count cc;
	uint64_t before, carried;

	snprintf(path, sizeof(path), "%s/puts.pcapng", dir);
	/* the expression has blanks; filter= takes the rest of the line */
	snprintf(cmd, sizeof(cmd),
		 "/toroid/capture/start,%s,filter=ether proto 0x88b5 and ether[15] = 1", path);
	before = link_frames();
	ask_ok(cmd);
	T_ASSERT(strstr(tel.reply, "ether[15] = 1") != NULL, "filter shown: %s", tel.reply);
	puts_(10, 10);
	carried = link_frames() - before;
	ask_ok("/toroid/capture/stop");
	T_EQ(num("frames"), 20);
	T_EQ(num("filtered"), carried - 20);
	T_ASSERT(carried > 20, "acks went too (%" PRIu64 ")", carried);
	read_cap(path, &cc);
	T_EQ(cc.frames, 20);
	T_EQ(cc.puts, 20);
	for (int i = 10; i < 20; i++)
		T_EQ(cc.put_at[i], 2);
	T_EQ(cc.bad_bytes, 0);
	printf("filter: 20 put frames kept, %" PRIu64 " others filtered out\n", carried - 20);
}

static void
part_rotate(void)
{
	char cmd[512], path[300], f[320];
	struct cap_count cc;
	uint64_t kept = 0, size = 8192;

	/* by size, a ring of 3 */
	snprintf(path, sizeof(path), "%s/ring.pcapng", dir);
	snprintf(cmd, sizeof(cmd), "/toroid/capture/start,%s,size=8k,files=3", path);
	ask_ok(cmd);
	puts_(20, 30);
	ask_ok("/toroid/capture/stop");
	T_ASSERT(num("files") > 3, "the ring went round: %s", tel.reply);
	T_EQ(num("file_size"), size);
	T_EQ(num("file_count"), 3);
	T_EQ(num("dropped"), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(f, sizeof(f), "%s.%d", path, i);
		T_ASSERT(file_size(f) > 0 && (uint64_t)file_size(f) <= size, "%s: %lld bytes", f,
			 (long long)file_size(f));
		read_cap(f, &cc);
		T_ASSERT(cc.frames > 0, "%s: empty", f);
		T_EQ(cc.bad_bytes, 0);
		kept += cc.frames;
	}
	snprintf(f, sizeof(f), "%s.3", path);
	T_EQ(file_size(f), -1);
	T_EQ(file_size(path), -1);
	printf("ring: %" PRIu64 " files made, 3 kept (%" PRIu64 " frames), each <= %" PRIu64
	       " bytes\n",
	       num("files"), kept, size);

	/* on command */
	snprintf(path, sizeof(path), "%s/cmd.pcapng", dir);
	snprintf(cmd, sizeof(cmd), "/toroid/capture/start,%s", path);
	ask_ok(cmd);
	puts_(50, 3);
	ask_ok("/toroid/capture/rotate");
	T_EQ(num("files"), 2);
	snprintf(f, sizeof(f), "%s.1", path);
	T_ASSERT(strstr(tel.reply, f) != NULL, "now %s: %s", f, tel.reply);
	puts_(53, 4);
	ask_ok("/toroid/capture/stop");
	read_cap(path, &cc);
	T_EQ(cc.puts, 6);
	T_EQ(cc.put_at[50] + cc.put_at[51] + cc.put_at[52], 6);
	read_cap(f, &cc);
	T_EQ(cc.puts, 8);
	T_EQ(cc.put_at[53] + cc.put_at[54] + cc.put_at[55] + cc.put_at[56], 8);
	printf("rotate: 6 puts before, 8 after, in %s and %s.1\n", path, path);
}

static void
part_limit(void)
{
	char cmd[512], path[300];
	struct cap_count cc;
	uint64_t before, carried;

	snprintf(path, sizeof(path), "%s/limit.pcapng", dir);
	snprintf(cmd, sizeof(cmd), "/toroid/capture/start,%s,limit=6k", path);
	before = link_frames();
	ask_ok(cmd);
	puts_(0, 10);
	carried = link_frames() - before;
	ask_ok("/toroid/capture/stop");
	T_EQ(num("full"), 1);
	T_EQ(num("limit"), 6144);
	T_ASSERT(num("dropped") > 0, "%s", tel.reply);
	T_EQ(num("frames") + num("dropped"), carried);
	T_ASSERT(file_size(path) > 0 && file_size(path) <= 6144, "%lld bytes",
		 (long long)file_size(path));
	read_cap(path, &cc);
	T_EQ(cc.frames, num("frames"));
	printf("limit: %" PRIu64 " frames kept in %lld bytes, %" PRIu64 " dropped\n", cc.frames,
	       (long long)file_size(path), num("dropped"));
}

/* @p count puts while the worker lcore serves the nodes (no polling from here). */
static void
puts_live(unsigned int first, unsigned int count)
{
	for (unsigned int i = first; i < first + count; i++) {
		struct trd_desc d;

		T_EQ(trd_counter_set(n1, ctr, PUT_LEN), 0);
		trd_desc_put(&d, trd_node_coord(n1), src + i * PUT_LEN, PUT_LEN, trd_mr_key(mr1),
			     i * PUT_LEN, 0, ctr);
		while (trd_inject(trd_inj_fifo(n0, 0), &d) == -EAGAIN)
			;
		T_EQ(trd_counter_wait(n1, ctr, TIMEOUT_US), 0);
	}
}

/* Start, rotate and stop from the telemetry thread while a worker lcore serves the nodes and
 * puts flow: every file whole, every put in it twice, the figures those of the files. */
static void
part_live(void)
{
	unsigned int lc = test_worker_lcore();
	char cmd[512], path[300], f[320];
	struct cap_count a, b;
	uint64_t total = 0;

	if (lc == RTE_MAX_LCORE) {
		test_skip_part("live: no worker lcore to serve the nodes");
		return;
	}
	T_EQ(trd_net_launch(net, &lc, 1), 0);
	for (int round = 0; round < 10; round++) {
		snprintf(path, sizeof(path), "%s/live%d.pcapng", dir, round);
		snprintf(f, sizeof(f), "%s.1", path);
		snprintf(cmd, sizeof(cmd), "/toroid/capture/start,%s", path);
		ask_ok(cmd);
		puts_live(0, 5);
		ask_ok("/toroid/capture/rotate");
		puts_live(5, 5);
		ask_ok("/toroid/capture/stop");
		read_cap(path, &a);
		read_cap(f, &b);
		T_EQ(a.frames + b.frames, num("frames"));
		T_EQ(a.bad_bytes + b.bad_bytes, 0);
		for (int i = 0; i < 10; i++)
			T_EQ(a.put_at[i] + b.put_at[i], 2);
		total += a.frames + b.frames;
	}
	T_EQ(trd_net_stop(net), 0);
	T_ASSERT(memcmp(src, dst, 10 * PUT_LEN) == 0, "puts landed");
	printf("live: 10 starts, rotations and stops while lcore %u served, %" PRIu64
	       " frames, all in whole files\n",
	       lc, total);
}

static void
part_refused(void)
{
	static const char *const bad[] = {
		"/toroid/capture/start",
		"/toroid/capture/start,relative.pcapng",
		"/toroid/capture/start,/tmp/x.pcapng,colour=blue",
		"/toroid/capture/start,/tmp/x.pcapng,files=3",
		"/toroid/capture/start,/tmp/x.pcapng,size=1",
		"/toroid/capture/start,/tmp/x.pcapng,size=4095",
		"/toroid/capture/start,/tmp/x.pcapng,limit=1",
		"/toroid/capture/start,/tmp/x.pcapng,filter=ether[15 = 1",
		"/toroid/capture/start,/nonexistent-dir/x.pcapng",
		"/toroid/capture/rotate",
	};

	for (size_t i = 0; i < RTE_DIM(bad); i++) {
		ask(bad[i]);
		T_ASSERT(num("ok") == 0 && strstr(tel.reply, "\"error\"") != NULL, "%s: %s", bad[i],
			 tel.reply);
		ask_ok("/toroid/capture/status");
		T_EQ(num("active"), 0);
	}
	T_EQ(trd_capture_filter_check("ether[15] = 1", NULL, 0), 0);
	T_EQ(trd_capture_filter_check("ether[15 = 1", NULL, 0), -EINVAL);
	printf("refused: %zu bad requests answered with an error\n", RTE_DIM(bad));
}

/* The file holds payload: not written through a symlink, readable by its owner only. */
static void
part_file_mode(void)
{
	char path[300], target[300];
	struct stat sb;
	FILE *f;

	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(path, sizeof(path), "%s/link.pcapng", dir);
	f = fopen(target, "w");
	T_ASSERT(f != NULL, "%s: %s", target, strerror(errno));
	fputs("keep", f);
	fclose(f);
	T_EQ(symlink(target, path), 0);
	T_EQ(trd_node_capture_start(n0, path, NULL), -ELOOP);
	T_EQ(file_size(target), 4);
	T_EQ(trd_node_capture_stop(n0, NULL), -ENOENT);
	snprintf(path, sizeof(path), "%s/mode.pcapng", dir);
	T_EQ(trd_node_capture_start(n0, path, NULL), 0);
	T_EQ(stat(path, &sb), 0);
	T_EQ(sb.st_mode & 07777, 0600);
	T_EQ(trd_node_capture_stop(n0, NULL), 0);
	printf("file: a symlink refused (-ELOOP), the file mode 0600\n");
}

/* The next file cannot be opened (a symlink at PATH.1): the capture keeps its file. */
static void
part_rotate_fail(void)
{
	char cmd[512], path[300], f[320];
	struct cap_count cc;

	snprintf(path, sizeof(path), "%s/keep.pcapng", dir);
	snprintf(f, sizeof(f), "%s.1", path);
	T_EQ(symlink("/nonexistent", f), 0);
	snprintf(cmd, sizeof(cmd), "/toroid/capture/start,%s", path);
	ask_ok(cmd);
	puts_(0, 2);
	ask("/toroid/capture/rotate");
	T_ASSERT(num("ok") == 0 && strstr(tel.reply, "rotate") != NULL, "%s", tel.reply);
	puts_(2, 3);
	ask_ok("/toroid/capture/stop");
	T_EQ(num("dropped"), 0);
	T_EQ(num("files"), 1);
	read_cap(path, &cc);
	T_EQ(cc.puts, 10);
	T_EQ(cc.frames, num("frames"));
	printf("rotate refused: the capture went on in %s, %" PRIu64 " frames, none dropped\n",
	       path, cc.frames);
}

/* Every write fails: the frames are dropped, not counted as recorded, and the error said. */
static void
part_write_error(void)
{
	uint64_t before, carried;

	before = link_frames();
	ask_ok("/toroid/capture/start,/dev/full");
	puts_(0, 10);
	carried = link_frames() - before;
	ask_ok("/toroid/capture/stop");
	T_ASSERT(strstr(tel.reply, "\"write_error\":\"No space left on device\"") != NULL, "%s",
		 tel.reply);
	T_ASSERT(num("dropped") > 0, "%s", tel.reply);
	T_EQ(num("frames") + num("dropped"), carried);
	printf("write error: %" PRIu64 " of %" PRIu64 " frames dropped, the error reported\n",
	       num("dropped"), carried);
}

/* A file written with some settings is not shared by a capture asking for others. */
static void
part_same_path(void)
{
	struct trd_capture_conf a = {.file_size = 65536}, b = {.file_size = 8192};
	struct trd_capture_conf f = {.file_size = 65536, .filter = "ether[15] = 1"};
	struct trd_capture_stats st;
	char path[300];

	snprintf(path, sizeof(path), "%s/same.pcapng", dir);
	T_EQ(trd_node_capture_start(n0, path, &a), 0);
	T_EQ(trd_node_capture_start(n1, path, &b), -EBUSY);
	T_EQ(trd_node_capture_start(n1, path, &f), -EBUSY);
	T_EQ(trd_node_capture_stats(n1, &st), -ENOENT);
	T_EQ(trd_node_capture_start(n1, path, &a), 0);
	T_EQ(trd_node_capture_stop(n0, NULL), 0);
	T_EQ(trd_node_capture_stop(n1, &st), 0);
	T_EQ(st.file_size, 65536);
	/* once stopped, the path takes new settings */
	T_EQ(trd_node_capture_start(n0, path, &b), 0);
	T_EQ(trd_node_capture_stop(n0, &st), 0);
	T_EQ(st.file_size, 8192);
	printf("same path: other settings refused (-EBUSY), the same ones share the file\n");
}

static volatile int race_stop;
static unsigned long race_started;

/* As telemetry does: a node by index, then capture control on it. */
static void *
race_thread(void *arg)
{
	const char *path = arg;

	while (!__atomic_load_n(&race_stop, __ATOMIC_ACQUIRE)) {
		unsigned int count = trd_node_count();

		for (unsigned int i = 0; i < count; i++) {
			struct trd_node *node = trd_node_at(i);
			struct trd_capture_stats st;
			int rc;

			if (node == NULL)
				continue;
			rc = trd_node_capture_start(node, path, NULL);
			if (rc == 0)
				race_started++;
			else if (rc != -ENOENT)
				fprintf(stderr, "race: start: %s\n", strerror(-rc));
			trd_node_capture_stats(node, &st);
			trd_node_capture_rotate(node);
			trd_node_capture_stop(node, NULL);
		}
	}
	return NULL;
}

/* Capture control on nodes being freed: trd_node_free() leaves the registry and stops the
 * capture under the capture control, so a node found by index is either live or -ENOENT. */
static void
part_race(void)
{
	struct trd_net_conf c = {.links = TRD_NET_RING};
	char path[300];
	pthread_t th;
	int made = 0;

	snprintf(path, sizeof(path), "%s/race.pcapng", dir);
	trd_torus_init(&c.torus, 2, 1, 1);
	T_EQ(pthread_create(&th, NULL, race_thread, path), 0);
	for (int i = 0; i < 100; i++) {
		struct trd_net *rn = trd_net_create(&c);

		T_ASSERT(rn != NULL, "net: %s", rte_strerror(rte_errno));
		made++;
		trd_net_free(rn);
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELEASE);
	T_EQ(pthread_join(th, NULL), 0);
	trd_node_capture_stop(n0, NULL);
	trd_node_capture_stop(n1, NULL);
	ask_ok("/toroid/capture/status");
	T_EQ(num("active"), 0);
	T_ASSERT(race_started > 0, "no capture started");
	printf("race: %d nets made and freed while %lu captures started and stopped\n", made,
	       race_started);
}

static void
cleanup(void)
{
	char cmd[300];

	if (dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
}

int
main(int argc, char **argv)
{
	char prefix[64];
	const char *extra[] = {"--file-prefix", prefix, NULL};
	struct trd_net_conf nc = {.links = TRD_NET_RING};

	RTE_SET_USED(argc);
	snprintf(dir, sizeof(dir), "/tmp/toroid-capctl.XXXXXX");
	T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	snprintf(prefix, sizeof(prefix), "toroid-capctl-%d", (int)getpid());
	test_eal_init(argv[0], extra);
	T_EQ(trd_telemetry_init(), 0);
	trd_torus_init(&nc.torus, 2, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	n0 = trd_net_node(net, 0);
	n1 = trd_net_node(net, 1);
	mr1 = trd_mr_register(n1, dst, sizeof(dst), TRD_ACCESS_ALL);
	T_ASSERT(mr1 != NULL, "region");
	T_EQ(trd_counter_alloc(n1, &ctr), 0);
	test_fill(src, sizeof(src), 11);
	puts_(0, 2); /* the session is up before anything is counted */
	test_tel_connect(&tel);

	part_whole();
	part_filter();
	part_rotate();
	part_limit();
	part_refused();
	part_file_mode();
	part_rotate_fail();
	part_write_error();
	part_same_path();
	part_race();
	part_live();
	test_tel_close(&tel);
	trd_net_free(net);
	rte_eal_cleanup();
	printf("PASS: capture control\n");
	return test_status();
}
