/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry: on a 2x2x1 torus that has carried puts (one forwarded), FIFO messages, a remote
 * get and a refused put, a client of the telemetry socket (<runtime dir>/dpdk_telemetry.v2)
 * asks /toroid/nodes, /toroid/stats, /toroid/fifos and /toroid/links for every node, by name
 * and by index, and every number in the answers equals what trd_node_stats_get(),
 * trd_inj_fifo_stats_get() and trd_link_stats_get() return. Unknown nodes answer null.
 * trd_telemetry_init() is idempotent. If DPDK's dpdk-telemetry.py is installed (package
 * dpdk-dev), it reads the same answers.
 * /toroid/vni from VNI services embedded in this process (not toroid-node): by node name and by
 * index, every statistic equal to trd_vni_svc_stats_get(), refreshed by trd_vni_svc_poll() (a
 * refused registration shows within one period), withdrawn by trd_vni_svc_free().
 * EAL runs with a file prefix of its own, so the socket is this process's.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <toroid/telemetry.h>
#include <toroid/testing.h>
#include <toroid/topo.h>
#include <toroid/toroid.h>
#include <toroid/vni_service.h>

#include "test_common.h"

#define TIMEOUT_US 10000000

static char prefix[64];
static char rundir[1024];
static struct test_tel tel;
static unsigned int n_values; /* numbers compared */

/* ---- a minimal JSON walker: enough to find numbers and strings by path ---- */

static const char *
ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *skip_value(const char *p);

static const char *
skip_string(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p == '"' ? p + 1 : NULL;
}

static const char *
skip_value(const char *p)
{
	p = ws(p);
	if (*p == '"')
		return skip_string(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = skip_string(ws(p));
				if (p == NULL || *(p = ws(p)) != ':')
					return NULL;
				p++;
			}
			p = skip_value(p);
			if (p == NULL)
				return NULL;
			p = ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	while (*p && strchr(",}] \n", *p) == NULL)
		p++;
	return p;
}

/* The value of @p key in the object at @p obj, or NULL. */
static const char *
member(const char *obj, const char *key)
{
	const char *p = ws(obj);
	size_t kl = strlen(key);

	if (p == NULL || *p != '{')
		return NULL;
	p = ws(p + 1);
	while (*p == '"') {
		const char *k = p + 1, *e = skip_string(p);

		if (e == NULL)
			return NULL;
		p = ws(e);
		if (*p != ':')
			return NULL;
		p = ws(p + 1);
		if ((size_t)(e - 1 - k) == kl && strncmp(k, key, kl) == 0)
			return p;
		p = skip_value(p);
		if (p == NULL)
			return NULL;
		p = ws(p);
		if (*p != ',')
			return NULL;
		p = ws(p + 1);
	}
	return NULL;
}

static uint64_t
num(const char *obj, const char *key)
{
	const char *v = member(obj, key);
	char *end;
	uint64_t x;

	T_ASSERT(v != NULL, "no \"%s\" in %.200s", key, obj ? obj : "(null)");
	x = strtoull(v, &end, 10);
	T_ASSERT(end != v, "\"%s\" is not a number: %.40s", key, v);
	return x;
}

static int
str_is(const char *obj, const char *key, const char *want)
{
	const char *v = member(obj, key);

	return v != NULL && *v == '"' && strncmp(v + 1, want, strlen(want)) == 0 &&
	       v[1 + strlen(want)] == '"';
}

#define T_NUM(obj, key, want)                                                                      \
	do {                                                                                       \
		uint64_t got_ = num(obj, key), want_ = (uint64_t)(want);                           \
		T_ASSERT(got_ == want_, "%s: telemetry %" PRIu64 ", engine %" PRIu64, key, got_,   \
			 want_);                                                                   \
		n_values++;                                                                        \
	} while (0)

/* ---- the socket ---- */

/* Send @p cmd, return the value of the answer's only member (the command's own name). */
static const char *
ask(const char *cmd)
{
	char name[128];
	const char *comma = strchr(cmd, ',');

	test_tel_ask(&tel, cmd);
	snprintf(name, sizeof(name), "%.*s", comma ? (int)(comma - cmd) : (int)strlen(cmd), cmd);
	return member(tel.reply, name);
}

/* ---- traffic ---- */

static void
run_traffic(struct trd_net *net)
{
	static uint8_t src[5000], mem[4][8192];
	struct trd_node *n[4];
	struct trd_mr *mr[4];
	struct trd_desc d, c;
	struct trd_msg *m;
	uint16_t ctr;

	for (int i = 0; i < 4; i++) {
		n[i] = trd_net_node(net, (unsigned int)i);
		mr[i] = trd_mr_register(n[i], mem[i], sizeof(mem[i]), TRD_ACCESS_ALL);
		T_ASSERT(mr[i] != NULL, "region");
	}
	test_fill(src, sizeof(src), 7);
	/* (0,0) -> (1,1): two hops, forwarded by (1,0) */
	T_EQ(trd_counter_alloc(n[3], &ctr), 0);
	T_EQ(trd_counter_set(n[3], ctr, sizeof(src)), 0);
	trd_desc_put(&d, trd_node_coord(n[3]), src, sizeof(src), trd_mr_key(mr[3]), 0, 0, ctr);
	T_EQ(trd_inject(trd_inj_fifo(n[0], 1), &d), 0);
	T_EQ(trd_counter_wait(n[3], ctr, TIMEOUT_US), 0);
	/* FIFO messages (1,0) -> (0,1) */
	for (int i = 0; i < 5; i++) {
		trd_desc_fifo(&d, trd_node_coord(n[2]), 0, src, 100 + 700 * (uint32_t)i,
			      (uint64_t)i, 0);
		T_EQ(trd_inject(trd_inj_fifo(n[1], 2), &d), 0);
		T_EQ(trd_rec_fifo_wait(trd_rec_fifo(n[2], 0), &m, TIMEOUT_US), 0);
		trd_msg_free(m);
	}
	/* a remote get: (0,1) reads 300 bytes of (0,0) */
	T_EQ(trd_counter_set(n[3], ctr, 0), 0);
	T_EQ(trd_counter_alloc(n[2], &ctr), 0);
	T_EQ(trd_counter_set(n[2], ctr, 300), 0);
	trd_desc_put(&c, trd_node_coord(n[2]), NULL, 300, trd_mr_key(mr[2]), 0, 0, ctr);
	c.flags = TRD_DF_SRC_MR;
	c.src_key = trd_mr_key(mr[0]);
	trd_desc_rget(&d, trd_node_coord(n[0]), 0, &c, 1);
	T_EQ(trd_inject(trd_inj_fifo(n[2], 0), &d), 0);
	T_EQ(trd_counter_wait(n[2], ctr, TIMEOUT_US), 0);
	/* a put with a key nobody has: dropped and counted as bad_key at (1,0) */
	trd_desc_put(&d, trd_node_coord(n[1]), src, 64, 0x1234, 0, 0, 0);
	T_EQ(trd_inject(trd_inj_fifo(n[0], 0), &d), 0);
	for (uint64_t end = trd_time_us() + TIMEOUT_US;;) {
		struct trd_node_stats st;

		trd_net_poll(net);
		T_EQ(trd_node_stats_get(n[1], &st), 0);
		if (st.drop[TRD_DROP_BAD_KEY] == 1)
			break;
		T_ASSERT(trd_time_us() < end, "the bad put was not dropped");
	}
	/* let every pending packet go: the counters are still from here on */
	for (int i = 0; i < 100; i++)
		trd_net_poll(net);
}

/* ---- checks ---- */

static void
check_node(struct trd_node *node, unsigned int index, const char *ref)
{
	struct trd_node_stats st;
	struct trd_coord co = trd_node_coord(node);
	char cmd[128];
	const char *a, *s, *dr;
	struct trd_inj_fifo *f;

	/* stats */
	snprintf(cmd, sizeof(cmd), "/toroid/stats,%s", ref);
	a = ask(cmd);
	T_ASSERT(a != NULL && *a == '{', "%s: %s", cmd, tel.reply);
	T_EQ(trd_node_stats_get(node, &st), 0);
	T_ASSERT(str_is(a, "name", trd_node_name(node)), "%s: name", cmd);
	T_NUM(a, "index", index);
	T_NUM(a, "x", co.x);
	T_NUM(a, "y", co.y);
	T_NUM(a, "z", co.z);
	s = member(a, "stats");
	dr = member(a, "drops");
	T_ASSERT(s != NULL && dr != NULL, "%s: %s", cmd, tel.reply);
	for (unsigned int i = 0; i < TRD_STAT_MAX; i++)
		T_NUM(s, trd_stat_name(i), st.stat[i]);
	for (unsigned int i = 1; i < TRD_DROP_MAX; i++)
		T_NUM(dr, trd_drop_name(i), st.drop[i]);

	/* injection FIFOs */
	snprintf(cmd, sizeof(cmd), "/toroid/fifos,%s", ref);
	a = ask(cmd);
	T_ASSERT(a != NULL && *a == '{', "%s: %s", cmd, tel.reply);
	T_ASSERT(str_is(a, "name", trd_node_name(node)), "%s: name", cmd);
	for (unsigned int i = 0; i <= 0xFF; i++) {
		struct trd_inj_fifo_stats fs;
		char key[16];
		const char *e;

		f = trd_inj_fifo(node, i);
		if (f == NULL)
			continue;
		if (i == 0xFF)
			snprintf(key, sizeof(key), "engine");
		else
			snprintf(key, sizeof(key), "%u", i);
		e = member(a, key);
		T_ASSERT(e != NULL, "%s: no FIFO %s in %s", cmd, key, tel.reply);
		T_EQ(trd_inj_fifo_stats_get(f, &fs), 0);
		T_NUM(e, "descs", fs.descs);
		T_NUM(e, "pkts", fs.pkts);
		T_NUM(e, "pkts_sent", fs.pkts_sent);
		T_NUM(e, "used", fs.used);
		T_NUM(e, "hwm", fs.hwm);
		T_NUM(e, "free", trd_inj_fifo_free_count(f));
	}

	/* links */
	snprintf(cmd, sizeof(cmd), "/toroid/links,%s", ref);
	a = ask(cmd);
	T_ASSERT(a != NULL && *a == '{', "%s: %s", cmd, tel.reply);
	for (unsigned int i = 0; i < trd_node_n_links(node); i++) {
		const struct trd_link *l = trd_node_link(node, i);
		struct trd_link_stats ls;
		const char *e;
		char key[16];

		snprintf(key, sizeof(key), "%u", i);
		e = member(a, key);
		T_ASSERT(e != NULL, "%s: no link %s in %s", cmd, key, tel.reply);
		T_EQ(trd_link_stats_get(l, &ls), 0);
		T_ASSERT(str_is(e, "name", trd_link_name(l)), "link name");
		T_ASSERT(str_is(e, "dir", trd_dir_name((enum trd_dir)ls.dir)), "link dir");
		T_NUM(e, "tx_pkts", ls.tx_pkts);
		T_NUM(e, "tx_bytes", ls.tx_bytes);
		T_NUM(e, "rx_pkts", ls.rx_pkts);
		T_NUM(e, "rx_bytes", ls.rx_bytes);
		T_NUM(e, "fwd_pkts", ls.fwd_pkts);
		T_NUM(e, "pending", ls.pending);
	}
}

static void
check_with_script(struct trd_node *node)
{
	const char *script = "/usr/bin/dpdk-telemetry.py";
	struct trd_node_stats st;
	char cmd[512], line[65536];
	FILE *p;
	int found = 0, rc;

	/* DPDK's own client is part of the test: without it the test fails, it is not skipped */
	T_ASSERT(
		access(script, X_OK) == 0,
		"dpdk-telemetry.py not installed (Debian package dpdk-dev: make deps installs it)");
	T_ASSERT(access("/usr/bin/timeout", X_OK) == 0, "/usr/bin/timeout not installed");
	T_EQ(trd_node_stats_get(node, &st), 0);
	snprintf(cmd, sizeof(cmd),
		 "echo '/toroid/stats,%s' | /usr/bin/timeout 20 python3 %s -f %s 2>&1",
		 trd_node_name(node), script, prefix);
	p = popen(cmd, "r");
	T_ASSERT(p != NULL, "popen");
	while (fgets(line, sizeof(line), p) != NULL) {
		char want[64];

		snprintf(want, sizeof(want), "\"tx_pkts\": %" PRIu64 ",",
			 st.stat[TRD_STAT_TX_PKTS]);
		if (strstr(line, "/toroid/stats") != NULL && strstr(line, want) != NULL)
			found = 1;
	}
	rc = pclose(p);
	T_EQ(rc, 0);
	T_ASSERT(found, "dpdk-telemetry.py did not show the node's statistics");
	printf("dpdk-telemetry.py reads /toroid/stats,%s\n", trd_node_name(node));
}

/* ---- /toroid/vni ---- */

/* The answer of @p cmd is service @p vs's: its node, its socket, every statistic. */
static void
check_vni_answer(const char *cmd, struct trd_vni_svc *vs, const char *path)
{
	uint64_t st[TRD_VNI_SVC_STAT_MAX];
	const char *a = ask(cmd);

	T_ASSERT(a != NULL && *a == '{', "%s: %s", cmd, tel.reply);
	T_EQ(trd_vni_svc_stats_get(vs, st), 0);
	T_ASSERT(str_is(a, "node", trd_node_name(trd_vni_svc_node(vs))), "%s: node: %s", cmd,
		 tel.reply);
	T_ASSERT(str_is(a, "socket", path), "%s: socket: %s", cmd, tel.reply);
	for (unsigned int k = 0; k < TRD_VNI_SVC_STAT_MAX; k++)
		T_NUM(a, trd_vni_svc_stat_name(k), st[k]);
	T_NUM(a, "interfaces", trd_vni_svc_n_ifs(vs));
}

static void
check_null(const char *cmd)
{
	const char *a = ask(cmd);

	T_ASSERT(a != NULL && strncmp(a, "null", 4) == 0, "%s: %s", cmd, tel.reply);
}

/* Two services, on nodes 0 and 1 of @p net, embedded in this process: each registers itself
 * for /toroid/vni. */
static void
check_vni(struct trd_net *net)
{
	static struct trd_topo_node tn[4];
	struct trd_topo topo = {.n_nodes = 4, .nodes = tn};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint64_t st[TRD_VNI_SVC_STAT_MAX], t_refused = 0;
	struct trd_vni_svc *vs[2];
	char path[2][108], cmd[64];
	int fd;

	topo.torus = *trd_node_torus(trd_net_node(net, 0));
	for (unsigned int r = 0; r < 4; r++) {
		tn[r].rank = r;
		tn[r].coord = trd_node_coord(trd_net_node(net, r));
	}
	check_null("/toroid/vni"); /* nothing registered yet */
	for (unsigned int i = 0; i < 2; i++) {
		struct trd_vni_svc_conf vc = {
			.node = trd_net_node(net, i), .topo = &topo, .staging = (i + 1) << 20};

		T_ASSERT(snprintf(path[i], sizeof(path[i]), "%s/vni%u.sock", rundir, i) <
				 (int)sizeof(path[i]),
			 "runtime directory %s: too long for a socket", rundir);
		vc.socket = path[i];
		vs[i] = trd_vni_svc_create(&vc);
		T_ASSERT(vs[i] != NULL, "trd_vni_svc_create: %s", rte_strerror(rte_errno));
		T_EQ(trd_vni_svc_telemetry_register(vs[i]), 0);
	}
	T_EQ(trd_vni_svc_telemetry_register(vs[0]), 0); /* again: a no-op, not a second entry */
	T_EQ(trd_vni_svc_telemetry_register(NULL), -EINVAL);
	/* by node name and by index (the order of registration); with two, a name is needed */
	for (unsigned int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "/toroid/vni,%s",
			 trd_node_name(trd_vni_svc_node(vs[i])));
		check_vni_answer(cmd, vs[i], path[i]);
		snprintf(cmd, sizeof(cmd), "/toroid/vni,%u", i);
		check_vni_answer(cmd, vs[i], path[i]);
	}
	check_null("/toroid/vni");
	check_null("/toroid/vni,2");
	check_null("/toroid/vni,nosuchnode");

	/* the copy follows the service: a registration it refuses shows once trd_vni_svc_poll()
	 * took a snapshot (every 10 ms, in a round that is whole: one in 16 when quiet) */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	T_ASSERT(fd >= 0, "socket: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path[0]);
	T_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	T_EQ(write(fd, "junk", 4), 4);
	snprintf(cmd, sizeof(cmd), "/toroid/vni,%s", trd_node_name(trd_vni_svc_node(vs[0])));
	for (uint64_t end = trd_time_us() + TIMEOUT_US;;) {
		uint64_t now;
		const char *a;

		trd_vni_svc_poll(vs[0]);
		now = trd_time_us();
		T_EQ(trd_vni_svc_stats_get(vs[0], st), 0);
		if (t_refused == 0 && st[TRD_VNI_SVC_STAT_REFUSED] != 0)
			t_refused = now;
		/* (a loaded host may keep this thread off its CPU for longer than a period:
		 * the snapshot is waited for, not a time) */
		if (t_refused != 0 && now > t_refused + 10000 && (a = ask(cmd)) != NULL &&
		    *a == '{' && num(a, "refused") == 1)
			break;
		T_ASSERT(now < end, "the junk registration %s",
			 t_refused == 0 ? "was not refused" : "never showed in telemetry");
	}
	close(fd);
	T_EQ(st[TRD_VNI_SVC_STAT_REFUSED], 1);
	check_vni_answer(cmd, vs[0], path[0]);
	T_NUM(ask(cmd), "refused", 1);

	/* a service freed is withdrawn: the other one is then the only one */
	trd_vni_svc_free(vs[0]);
	check_null(cmd);
	check_vni_answer("/toroid/vni", vs[1], path[1]);
	trd_vni_svc_free(vs[1]);
	check_null("/toroid/vni");
	printf("telemetry: /toroid/vni answers for two embedded VNI services\n");
}

/* EAL leaves its runtime directory behind. */
static int race_stop;
static unsigned long race_asked, race_found;

/* A second client asking about nodes 4 and 5 (those of the nets check_race() makes and frees)
 * the whole time: every answer is a node's or null, never a freed node's garbage or a crash. */
static void *
race_thread(void *arg)
{
	static const char *const cmds[] = {"/toroid/stats,4", "/toroid/fifos,5", "/toroid/links,4",
					   "/toroid/stats,node1"};
	static struct test_tel t2;

	RTE_SET_USED(arg);
	test_tel_connect(&t2);
	for (unsigned int k = 0; !__atomic_load_n(&race_stop, __ATOMIC_ACQUIRE); k++) {
		const char *r = test_tel_ask(&t2, cmds[k % RTE_DIM(cmds)]);
		const char *a = strchr(r, ':');

		T_ASSERT(a != NULL && (strncmp(a, ":null", 5) == 0 || strncmp(a, ":{", 2) == 0) &&
				 (strstr(r, "\"name\":\"") != NULL) == (a[1] == '{'),
			 "%s: %s", cmds[k % RTE_DIM(cmds)], r);
		race_asked++;
		race_found += a[1] == '{';
	}
	test_tel_close(&t2);
	return NULL;
}

/* Nodes freed while a client asks about them: each command holds the node it reads
 * (trd_node_hold) and trd_node_free() waits for it. */
static void
check_race(void)
{
	struct trd_net_conf c = {.links = TRD_NET_RING};
	pthread_t th;

	trd_torus_init(&c.torus, 2, 1, 1);
	T_EQ(pthread_create(&th, NULL, race_thread, NULL), 0);
	for (int i = 0; i < 200; i++) {
		struct trd_net *rn = trd_net_create(&c);

		T_ASSERT(rn != NULL, "net: %s", rte_strerror(rte_errno));
		trd_net_free(rn);
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELEASE);
	T_EQ(pthread_join(th, NULL), 0);
	T_EQ(trd_node_count(), 4);
	printf("race: 200 nets made and freed while %lu questions asked, %lu about a live node\n",
	       race_asked, race_found);
}

static void
remove_rundir(void)
{
	if (rundir[0] != '\0')
		rmdir(rundir);
}

int
main(int argc, char **argv)
{
	const char *extra[] = {"--file-prefix", prefix, NULL};
	struct trd_net_conf nc = {.links = TRD_NET_RING};
	struct trd_net *net;
	const char *a;
	uint64_t fwd = 0, drops = 0;

	RTE_SET_USED(argc);
	snprintf(prefix, sizeof(prefix), "toroid-tel-%d", (int)getpid());
	/* before EAL's own exit handler, so it runs after it has removed the socket */
	atexit(remove_rundir);
	test_eal_init(argv[0], extra);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	T_EQ(trd_telemetry_init(), 0);
	T_EQ(trd_telemetry_init(), 0); /* idempotent */
	trd_torus_init(&nc.torus, 2, 2, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	run_traffic(net);
	test_tel_connect(&tel);

	a = ask("/");
	T_ASSERT(a != NULL && strstr(a, "\"/toroid/nodes\"") && strstr(a, "\"/toroid/stats\"") &&
			 strstr(a, "\"/toroid/fifos\"") && strstr(a, "\"/toroid/links\""),
		 "command list: %s", tel.reply);
	a = ask("/help,/toroid/stats");
	T_ASSERT(a != NULL && strstr(a, "node name or index") != NULL, "help: %s", tel.reply);

	a = ask("/toroid/nodes");
	T_ASSERT(a != NULL && *a == '{', "/toroid/nodes: %s", tel.reply);
	T_NUM(a, "count", trd_node_count());
	T_EQ(trd_node_count(), 4);
	T_ASSERT(member(a, "next") == NULL, "a single page");
	for (unsigned int i = 0; i < trd_node_count(); i++) {
		struct trd_node *node = trd_node_at(i);
		struct trd_coord co = trd_node_coord(node);
		char key[16], ref[16];
		const char *e;
		struct trd_node_stats st;

		snprintf(key, sizeof(key), "%u", i);
		e = member(a, key);
		T_ASSERT(e != NULL, "node %u missing: %s", i, tel.reply);
		T_ASSERT(str_is(e, "name", trd_node_name(node)), "node %u name", i);
		T_NUM(e, "x", co.x);
		T_NUM(e, "y", co.y);
		T_NUM(e, "z", co.z);
		T_NUM(e, "links", trd_node_n_links(node));
		T_NUM(e, "inj_fifos", 4);
		T_EQ(trd_node_stats_get(node, &st), 0);
		fwd += st.stat[TRD_STAT_FWD_PKTS];
		drops += st.drop[TRD_DROP_BAD_KEY];
		/* by name and by index */
		check_node(node, i, trd_node_name(node));
		snprintf(ref, sizeof(ref), "%u", i);
		check_node(node, i, ref);
		a = ask("/toroid/nodes"); /* the reply buffer was reused */
	}
	T_ASSERT(fwd >= 4, "the two-hop put was forwarded (%" PRIu64 ")", fwd);
	T_EQ(drops, 1);
	a = ask("/toroid/nodes,3");
	T_ASSERT(a != NULL && member(a, "3") != NULL && member(a, "2") == NULL, "page: %s",
		 tel.reply);

	/* unknown nodes */
	a = ask("/toroid/stats,nosuchnode");
	T_ASSERT(a != NULL && strncmp(a, "null", 4) == 0, "unknown node: %s", tel.reply);
	a = ask("/toroid/fifos,4");
	T_ASSERT(a != NULL && strncmp(a, "null", 4) == 0, "index out of range: %s", tel.reply);
	a = ask("/toroid/links");
	T_ASSERT(a != NULL && strncmp(a, "null", 4) == 0, "no parameter: %s", tel.reply);

	check_with_script(trd_net_node(net, 0));
	check_vni(net);
	check_race();
	test_tel_close(&tel);
	printf("telemetry: %u values equal the engine's counters\n", n_values);
	trd_net_free(net);
	rte_eal_cleanup();
	return 0;
}
