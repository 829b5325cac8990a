/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the topology file parser (topology/topo_file.c).
 *
 * usage: test_topo_file EXAMPLES_DIR
 * Loads every example and checks what it holds, then writes small good and bad files into a
 * temporary directory: each bad one must fail with errno EINVAL and the message
 * "FILE:LINE: ..." with the expected line and a word naming the problem.
 * Exit 0 = pass, 1 = fail, 77 = skipped (no examples directory given).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <toroid/topo.h>

static unsigned long n_checks;
static unsigned long n_failures;
static char tmp_dir[] = "/tmp/test_topo_file.XXXXXX";

static void check_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
check_fail(int line, const char *fmt, ...)
{
	va_list ap;

	n_failures++;
	fprintf(stderr, "%s:%d: FAIL: ", __FILE__, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		n_checks++;                                                                        \
		if (!(cond))                                                                       \
			check_fail(__LINE__, __VA_ARGS__);                                         \
	} while (0)

/* Write @p text to a fresh file in tmp_dir; returns its path (static buffer). */
static const char *
write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	f = fopen(path, "w");
	if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	return path;
}

/* ---- the examples ---- */

static struct trd_topo *
load_example(const char *dir, const char *name)
{
	char path[512], err[256];
	struct trd_topo *topo;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	topo = trd_topo_load(path, err, sizeof(err));
	CHECK(topo != NULL, "example %s does not load: %s", name, err);
	return topo;
}

/* Node ranks, coordinates and trd_topo_node_at() agree for every node. */
static void
check_common(const char *name, const struct trd_topo *topo, unsigned int x, unsigned int y,
	     unsigned int z, enum trd_topo_mode mode)
{
	unsigned int r;

	CHECK(topo->torus.dim[0] == x && topo->torus.dim[1] == y && topo->torus.dim[2] == z,
	      "%s: dims %ux%ux%u", name, topo->torus.dim[0], topo->torus.dim[1],
	      topo->torus.dim[2]);
	CHECK(topo->mode == mode, "%s: mode %d", name, topo->mode);
	CHECK(topo->n_nodes == x * y * z, "%s: %u nodes", name, topo->n_nodes);
	for (r = 0; r < topo->n_nodes; r++) {
		const struct trd_topo_node *node = &topo->nodes[r];
		struct trd_coord c;

		trd_torus_coord(&topo->torus, r, &c);
		CHECK(node->rank == r, "%s: nodes[%u].rank = %u", name, r, node->rank);
		CHECK(node->coord.x == c.x && node->coord.y == c.y && node->coord.z == c.z,
		      "%s: node %u at %u,%u,%u", name, r, node->coord.x, node->coord.y,
		      node->coord.z);
		CHECK(trd_topo_node_at(topo, c) == node, "%s: node_at(node %u)", name, r);
		CHECK(node->app_id == 1 && node->proc_id == r, "%s: node %u app %u proc %u", name,
		      r, node->app_id, node->proc_id);
	}
}

static void
check_examples(const char *dir)
{
	struct trd_topo *topo;
	unsigned int r;
	int d;

	topo = load_example(dir, "2x2x2-switched.ini");
	if (topo != NULL) {
		check_common("2x2x2-switched", topo, 2, 2, 2, TRD_TOPO_SWITCHED);
		for (r = 0; r < topo->n_nodes; r++) {
			const struct trd_topo_node *node = &topo->nodes[r];
			const uint8_t want[6] = {
				2, 0, 0, node->coord.x, node->coord.y, node->coord.z};

			CHECK(node->has_mac && memcmp(node->mac, want, 6) == 0,
			      "2x2x2-switched: node %u mac", r);
			for (d = 0; d < TRD_DIR_COUNT; d++)
				CHECK(node->port[d] == TRD_TOPO_NO_PORT,
				      "2x2x2-switched: node %u has port %s", r,
				      trd_dir_name((enum trd_dir)d));
		}
		trd_topo_free(topo);
	}

	topo = load_example(dir, "2x1x1-routed.ini");
	if (topo != NULL) {
		check_common("2x1x1-routed", topo, 2, 1, 1, TRD_TOPO_SWITCHED);
		CHECK(topo->nodes[0].has_ip && topo->nodes[0].ip == 0x0a010002u &&
			      topo->nodes[0].gateway == 0x0a010001u && topo->nodes[1].has_ip &&
			      topo->nodes[1].ip == 0x0a020002u && topo->nodes[1].prefix == 24 &&
			      !topo->nodes[0].has_mac,
		      "2x1x1-routed: addresses");
		trd_topo_free(topo);
	}

	topo = load_example(dir, "2x2x2-direct.ini");
	if (topo != NULL) {
		check_common("2x2x2-direct", topo, 2, 2, 2, TRD_TOPO_DIRECT);
		for (r = 0; r < topo->n_nodes; r++) {
			const int *p = topo->nodes[r].port;

			CHECK(p[TRD_DIR_XP] == 0 && p[TRD_DIR_YP] == 1 && p[TRD_DIR_ZP] == 2 &&
				      p[TRD_DIR_XM] == TRD_TOPO_NO_PORT &&
				      p[TRD_DIR_YM] == TRD_TOPO_NO_PORT &&
				      p[TRD_DIR_ZM] == TRD_TOPO_NO_PORT,
			      "2x2x2-direct: node %u ports %d %d %d %d %d %d", r, p[0], p[1], p[2],
			      p[3], p[4], p[5]);
			CHECK(!topo->nodes[r].has_mac, "2x2x2-direct: node %u has a mac", r);
		}
		trd_topo_free(topo);
	}

	topo = load_example(dir, "3x3x3-direct.ini");
	if (topo != NULL) {
		check_common("3x3x3-direct", topo, 3, 3, 3, TRD_TOPO_DIRECT);
		for (r = 0; r < topo->n_nodes; r++)
			for (d = 0; d < TRD_DIR_COUNT; d++)
				CHECK(topo->nodes[r].port[d] == d, "3x3x3-direct: node %u %s = %d",
				      r, trd_dir_name((enum trd_dir)d), topo->nodes[r].port[d]);
		trd_topo_free(topo);
	}

	topo = load_example(dir, "8x8x8-switched.ini");
	if (topo != NULL) {
		check_common("8x8x8-switched", topo, 8, 8, 8, TRD_TOPO_SWITCHED);
		for (r = 0; r < topo->n_nodes; r++)
			CHECK(topo->nodes[r].has_mac && topo->nodes[r].mac[0] == 2 &&
				      topo->nodes[r].mac[5] == topo->nodes[r].coord.z,
			      "8x8x8-switched: node %u mac", r);
		trd_topo_free(topo);
	}
}

/* ---- files that must load ---- */

#define SW2  "[torus]\ndims = 1x1x2\nmode = switched\n"
#define DIR3 "[torus]\ndims = 3x1x1\nmode = direct\n"
#define MAC0 "mac = 02:00:00:00:00:01\n"
#define MAC1 "mac = 02:00:00:00:00:02\n"

static void
check_good_files(void)
{
	struct trd_topo *topo;
	char err[256];
	const char *path;

	/* comments, blank lines, indentation, CRLF, a BOM, ':' as separator, any key order */
	path = write_file("good1.ini", "\xEF\xBB\xBF; comment\r\n# another comment\r\n\r\n"
				       "  [ torus ]  ; trailing comment\r\n"
				       "\tmode=switched\r\n"
				       "  dims = 1 x 1 X 2\r\n"
				       "[node 1]\r\n"
				       "    mac: 02:00:00:AA:bb:02 ; inline comment\r\n"
				       "    proc = 4294967295\r\n"
				       "    app = 7\r\n"
				       "[node   0]\r\n"
				       "mac = 02:00:00:00:00:01\r\n");
	topo = trd_topo_load(path, err, sizeof(err));
	CHECK(topo != NULL, "good1.ini: %s", err);
	if (topo != NULL) {
		const struct trd_topo_node *n1 = &topo->nodes[1];

		CHECK(topo->n_nodes == 2 && topo->mode == TRD_TOPO_SWITCHED, "good1: torus");
		CHECK(n1->app_id == 7 && n1->proc_id == 4294967295u, "good1: node 1 app/proc");
		CHECK(n1->mac[3] == 0xaa && n1->mac[4] == 0xbb && n1->mac[5] == 2, "good1: mac");
		CHECK(topo->nodes[0].app_id == 0 && topo->nodes[0].proc_id == 0,
		      "good1: app/proc default to 0");
		CHECK(n1->coord.z == 1, "good1: node 1 default coord");
		trd_topo_free(topo);
	}

	/* ranks permuted against coordinates; node_at follows the coordinates */
	path = write_file("good2.ini", DIR3
			  "[node 0]\ncoord = 2,0,0\nx+ = 0\nx- = 1\n"
			  "[node 1]\ncoord = 0,0,0\nx+ = 1\nx- = 0\n"
			  "[node 2]\ncoord = 1,0,0\nx+ = 7\nx- = 3\nmac = 02:00:00:00:00:09\n");
	topo = trd_topo_load(path, err, sizeof(err));
	CHECK(topo != NULL, "good2.ini: %s", err);
	if (topo != NULL) {
		CHECK(trd_topo_node_at(topo, (struct trd_coord){0, 0, 0}) == &topo->nodes[1],
		      "good2: node_at 0,0,0");
		CHECK(trd_topo_node_at(topo, (struct trd_coord){2, 0, 0}) == &topo->nodes[0],
		      "good2: node_at 2,0,0");
		CHECK(trd_topo_node_at(topo, (struct trd_coord){3, 0, 0}) == NULL,
		      "good2: node_at outside");
		CHECK(topo->nodes[2].port[TRD_DIR_XP] == 7 && topo->nodes[2].has_mac,
		      "good2: node 2 port / optional mac in direct mode");
		trd_topo_free(topo);
	}
	CHECK(trd_topo_node_at(NULL, (struct trd_coord){0, 0, 0}) == NULL, "node_at NULL");
	trd_topo_free(NULL);

	/* processes: app/proc place one, procs several, a node without either none */
	path = write_file("good4.ini", "[torus]\ndims = 3x1x1\nmode = switched\n"
				       "[node 0]\nmac = 02:00:00:00:00:01\nprocs = 1:0, 1:1 ,2:0\n"
				       "[node 1]\nmac = 02:00:00:00:00:02\napp = 3\nproc = 9\n"
				       "[node 2]\nmac = 02:00:00:00:00:03\n");
	topo = trd_topo_load(path, err, sizeof(err));
	CHECK(topo != NULL, "good4.ini: %s", err);
	if (topo != NULL) {
		CHECK(topo->n_procs == 4, "good4: %u processes", topo->n_procs);
		CHECK(trd_topo_find_proc(topo, 1, 0) == 0 && trd_topo_find_proc(topo, 1, 1) == 0 &&
			      trd_topo_find_proc(topo, 2, 0) == 0,
		      "good4: procs on node 0");
		CHECK(trd_topo_find_proc(topo, 3, 9) == 1, "good4: app/proc on node 1");
		CHECK(trd_topo_find_proc(topo, 0, 0) == -ENOENT, "good4: node 2 hosts nothing");
		CHECK(topo->nodes[0].app_id == 1 && topo->nodes[0].proc_id == 0,
		      "good4: node 0 app/proc are its first process");
		trd_topo_free(topo);
	}
	CHECK(trd_topo_find_proc(NULL, 1, 0) == -EINVAL, "find_proc NULL");

	/* 64 processes on one node (the most it may host) do not fit on one 198-character line:
	 * procs may be repeated, each line adds (here 4 lines of 16) */
	{
		char text[2048], *p = text;

		p += sprintf(p, "[torus]\ndims = 2x1x1\nmode = switched\n[node 0]\n"
				"mac = 02:00:00:00:00:01\n");
		for (unsigned int line = 0; line < 4; line++) {
			p += sprintf(p, "procs = ");
			for (unsigned int i = 0; i < 16; i++)
				p += sprintf(p, "%s7:%u", i ? ", " : "", 1000 + line * 16 + i);
			p += sprintf(p, "\n");
		}
		p += sprintf(p, "[node 1]\nmac = 02:00:00:00:00:02\nprocs = 8:0\n");
		path = write_file("good5.ini", text);
		topo = trd_topo_load(path, err, sizeof(err));
		CHECK(topo != NULL, "good5.ini (64 procs on four lines): %s", err);
		if (topo != NULL) {
			CHECK(topo->n_procs == 65, "good5: %u processes", topo->n_procs);
			CHECK(trd_topo_find_proc(topo, 7, 1000) == 0 &&
				      trd_topo_find_proc(topo, 7, 1063) == 0 &&
				      trd_topo_find_proc(topo, 8, 0) == 1,
			      "good5: processes of both lines on node 0");
			CHECK(topo->nodes[0].app_id == 7 && topo->nodes[0].proc_id == 1000,
			      "good5: node 0 app/proc are its first process");
			trd_topo_free(topo);
		}
		unlink(path);
		/* a 65th is one too many */
		p = strstr(text, "[node 1]");
		sprintf(p, "procs = 7:2000\n[node 1]\nmac = 02:00:00:00:00:02\n");
		path = write_file("bad65.ini", text);
		topo = trd_topo_load(path, err, sizeof(err));
		CHECK(topo == NULL && strstr(err, ":10: more than 64 processes on node 0") != NULL,
		      "65 procs: \"%s\"", topo ? "(loaded)" : err);
		trd_topo_free(topo);
		unlink(path);
	}

	/* nodes named by IPv4 address: beside a mac, or instead of it when every node has one;
	 * prefix from ip = A/N, prefix = N or netmask; udp_port and gateway */
	path = write_file("good6.ini", "[torus]\ndims = 3x1x1\nmode = switched\n"
				       "[node 0]\nip = 10.1.0.2/24\ngateway = 10.1.0.1\n"
				       "[node 1]\nip = 10.2.0.2\nnetmask = 255.255.0.0\n"
				       "udp_port = 40000\ngateway = 10.2.255.254\n"
				       "mac = 02:00:00:00:00:02\n"
				       "[node 2]\nip = 192.168.7.9\n");
	topo = trd_topo_load(path, err, sizeof(err));
	CHECK(topo != NULL, "good6.ini (ip): %s", err);
	if (topo != NULL) {
		const struct trd_topo_node *n0 = &topo->nodes[0], *n1 = &topo->nodes[1],
					   *n2 = &topo->nodes[2];

		CHECK(n0->has_ip && n0->ip == 0x0a010002u && n0->prefix == 24 &&
			      n0->udp_port == 34997 && n0->gateway == 0x0a010001u && !n0->has_mac,
		      "good6: node 0 ip %08x/%u:%u gw %08x", n0->ip, n0->prefix, n0->udp_port,
		      n0->gateway);
		CHECK(n1->has_ip && n1->ip == 0x0a020002u && n1->prefix == 16 &&
			      n1->udp_port == 40000 && n1->gateway == 0x0a02fffeu && n1->has_mac,
		      "good6: node 1 ip %08x/%u:%u gw %08x", n1->ip, n1->prefix, n1->udp_port,
		      n1->gateway);
		CHECK(n2->has_ip && n2->ip == 0xc0a80709u && n2->prefix == 32 && n2->gateway == 0,
		      "good6: node 2 defaults: prefix %u gateway %08x", n2->prefix, n2->gateway);
		trd_topo_free(topo);
	}
	unlink(path);

	/* a 1x1x1 torus: one node, no links; errors written nowhere when err is NULL */
	path = write_file("good3.ini", "[torus]\ndims=1x1x1\nmode=direct\n[node 0]\n");
	topo = trd_topo_load(path, NULL, 0);
	CHECK(topo != NULL && topo->n_nodes == 1, "good3.ini: 1x1x1 with an empty node section");
	trd_topo_free(topo);
}

/* ---- files that must not load ---- */

struct bad_case {
	const char *text;
	unsigned int line; /* expected line number */
	const char *word;  /* expected in the message */
};

static const struct bad_case bad_cases[] = {
	/* sections */
	{"[torus]\ndims = 1x1x1\nmode = switched\n[nodes 0]\n", 4, "unknown section [nodes 0]"},
	{"[torus]\ndims = 1x1x1\nmode = switched\n[Torus]\n", 4, "unknown section"},
	{"[torus]\ndims = 1x1x1\nmode = switched\n[node 0]\nmac = 02:00:00:00:00:01\n[torus]\n", 6,
	 "duplicate [torus] section (first at line 1)"},
	{"[torus\ndims = 1x1x1\n", 1, "without ']'"},
	{"dims = 1x1x1\n[torus]\n", 1, "outside any section"},
	{"[node 0]\n[torus]\ndims = 1x1x1\nmode = switched\n", 1, "before the [torus]"},
	{"", 1, "no [torus] section"},
	{"; only\n; comments\n\n", 3, "no [torus] section"},
	{"[torus]\nmode = switched\n[node 0]\n", 1, "no dims"},
	{"[torus]\ndims = 2x2x2\n\n[node 0]\n", 1, "no mode"},
	{"[torus]\ndims = 2x2x2\n", 1, "no mode"},
	/* syntax */
	{"[torus]\ndims 2x2x2\n", 2, "syntax error"},
	{"[torus]\n; a long comment "
	 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	 "\n"
	 "dims = 1x1x1\n",
	 2, "line too long"},
	/* [torus] keys */
	{"[torus]\ndims = 1x1x1\nsize = 3\n", 3, "unknown key 'size' in [torus]"},
	{"[torus]\ndims = 1x1x1\ndims = 1x1x1\n", 3, "duplicate key 'dims' (first at line 2)"},
	{"[torus]\ndims = 2x2\nmode = direct\n", 2, "bad dims '2x2'"},
	{"[torus]\ndims = 2x2x2x2\n", 2, "bad dims"},
	{"[torus]\ndims = 0x2x2\n", 2, "bad dims"},
	{"[torus]\ndims = 65x1x1\n", 2, "bad dims"},
	{"[torus]\ndims = 99999999999999999999x1x1\n", 2, "bad dims"},
	{"[torus]\ndims = ax2x2\n", 2, "bad dims"},
	{"[torus]\ndims = -2x2x2\n", 2, "bad dims"},
	{"[torus]\ndims =\n", 2, "bad dims"},
	{"[torus]\ndims = 2x2x2\nmode = ring\n", 3, "bad mode 'ring'"},
	/* ranks */
	{SW2 "[node 2]\n", 4, "rank 2 out of range"},
	{SW2 "[node 99999999999]\n", 4, "out of range"},
	{SW2 "[node x]\n", 4, "bad rank"},
	{SW2 "[node]\n", 4, "bad rank"},
	{SW2 "[node -1]\n", 4, "bad rank"},
	{SW2 "[node 0]\n" MAC0 "[node 0]\n", 6, "duplicate rank: [node 0] already at line 4"},
	{SW2 "[node 0]\n" MAC0 "\n; end\n", 7, "missing node 1 (1 of 2 missing"},
	{"[torus]\ndims = 4x4x4\nmode = direct\n", 3, "missing node 0, 1, 2, 3, ... (64 of 64"},
	/* coordinates */
	{SW2 "[node 0]\ncoord = 0,0,2\n", 5, "coordinate 0,0,2 outside the 1x1x2 torus"},
	{SW2 "[node 0]\ncoord = 0,0\n", 5, "bad coord"},
	{SW2 "[node 0]\ncoord = 0,0,0,0\n", 5, "bad coord"},
	{SW2 "[node 0]\ncoord = 0,a,0\n", 5, "bad coord"},
	{SW2 "[node 0]\ncoord = 0,0,300\n", 5, "bad coord"},
	{SW2 "[node 0]\ncoord = 0,0,1\n" MAC0 "[node 1]\ncoord = 0,0,1\n" MAC1, 8,
	 "duplicate coordinate: node 1's coordinate 0,0,1 is already node 0's (line 4)"},
	{SW2 "[node 0]\ncoord = 0,0,1\n" MAC0 "\n[node 1]\n" MAC1, 8,
	 "node 1's default coordinate 0,0,1 is already node 0's"},
	{SW2 "[node 0]\ncoord = 0,0,0\ncoord = 0,0,0\n", 6, "duplicate key 'coord'"},
	/* node keys and numbers */
	{SW2 "[node 0]\ncolour = red\n", 5, "unknown key 'colour' in [node 0]"},
	{SW2 "[node 0]\napp = -1\n", 5, "bad app '-1'"},
	{SW2 "[node 0]\nprocs = 1\n", 5, "bad procs entry '1'"},
	{SW2 "[node 0]\nprocs = 1:x\n", 5, "bad procs entry '1:x'"},
	{SW2 "[node 0]\nprocs =\n", 5, "empty procs"},
	{SW2 "[node 0]\napp = 1\nprocs = 1:0\n", 6, "procs and app/proc exclude each other"},
	{SW2 "[node 0]\nprocs = 1:0\nproc = 2\n", 6, "procs and app/proc exclude each other"},
	{SW2 "[node 0]\n" MAC0 "procs = 1:0,1:1\n[node 1]\n" MAC1 "app = 1\nproc = 1\n", 10,
	 "process 1:1 placed twice: node 1 and node 0 (line 6)"},
	{SW2 "[node 0]\n" MAC0 "procs = 1:0,2:0,1:0\n[node 1]\n" MAC1, 6,
	 "process 1:0 placed twice: node 0 and node 0 (line 6)"},
	{SW2 "[node 0]\napp = 4294967296\n", 5, "bad app"},
	{SW2 "[node 0]\nproc = 1.5\n", 5, "bad proc '1.5'"},
	{SW2 "[node 0]\nproc = 0x10\n", 5, "bad proc"},
	{SW2 "[node 0]\nproc =\n", 5, "bad proc"},
	/* MACs */
	{SW2 "[node 0]\nmac = 02:00:00:00:00\n", 5, "bad mac '02:00:00:00:00'"},
	{SW2 "[node 0]\nmac = 02:00:00:00:00:0g\n", 5, "bad mac"},
	{SW2 "[node 0]\nmac = 02:00:00:00:00:01:02\n", 5, "bad mac"},
	{SW2 "[node 0]\nmac = 2:0:0:0:0:1\n", 5, "bad mac"},
	{SW2 "[node 0]\nmac = 02-00-00-00-00-01\n", 5, "bad mac"},
	{SW2 "[node 0]\nmac = 01:00:5e:00:00:01\n", 5, "multicast"},
	{SW2 "[node 0]\nmac = 00:00:00:00:00:00\n", 5, "all zero"},
	{SW2 "[node 0]\napp = 1\n[node 1]\n" MAC1, 4, "node 0 has no mac (switched mode"},
	{SW2 "[node 0]\n" MAC0 "[node 1]\nproc = 1\n", 6, "node 1 has no mac"},
	{SW2 "[node 0]\n" MAC1 "[node 1]\n" MAC1, 7,
	 "duplicate mac 02:00:00:00:00:02: node 1 and node 0 (line 5)"},
	/* IPv4 addresses */
	{SW2 "[node 0]\nip = 10.1.0\n", 5, "bad ip '10.1.0' (expected A.B.C.D"},
	{SW2 "[node 0]\nip = 10.1.0.256\n", 5, "bad ip '10.1.0.256'"},
	{SW2 "[node 0]\nip = 10.1.0.2.3\n", 5, "bad ip"},
	{SW2 "[node 0]\nip = 10.01.0.2\n", 5, "bad ip '10.01.0.2'"},
	{SW2 "[node 0]\nip = ten.1.0.2\n", 5, "bad ip"},
	{SW2 "[node 0]\nip = 0.0.0.0\n", 5, "bad ip '0.0.0.0': all zero"},
	{SW2 "[node 0]\nip = 224.0.0.1\n", 5, "multicast"},
	{SW2 "[node 0]\nip = 255.255.255.255\n", 5, "broadcast"},
	{SW2 "[node 0]\nip = 127.0.0.1\n", 5, "loopback"},
	{SW2 "[node 0]\nip = 10.1.0.2/33\n", 5, "bad prefix in ip '10.1.0.2/33'"},
	{SW2 "[node 0]\nip = 10.1.0.2/0\n", 5, "bad prefix in ip"},
	{SW2 "[node 0]\nip = 10.1.0.2\nprefix = 0\n", 6, "bad prefix '0' (expected 1..32)"},
	{SW2 "[node 0]\nip = 10.1.0.2\nprefix = 33\n", 6, "bad prefix '33'"},
	{SW2 "[node 0]\nip = 10.1.0.2/24\nprefix = 24\n", 6, "the subnet is given twice"},
	{SW2 "[node 0]\nprefix = 24\nip = 10.1.0.2/24\n", 6, "the subnet is given twice"},
	{SW2 "[node 0]\nip = 10.1.0.2\nprefix = 24\nnetmask = 255.255.255.0\n", 7,
	 "the subnet is given twice"},
	{SW2 "[node 0]\nip = 10.1.0.2\nnetmask = 255.0.255.0\n", 6,
	 "bad netmask '255.0.255.0' (the ones must be contiguous"},
	{SW2 "[node 0]\nip = 10.1.0.2\nnetmask = 0.0.0.0\n", 6, "bad netmask"},
	{SW2 "[node 0]\nip = 10.1.0.2\nudp_port = 0\n", 6, "bad udp_port '0' (expected 1..65535)"},
	{SW2 "[node 0]\nip = 10.1.0.2\nudp_port = 65536\n", 6, "bad udp_port '65536'"},
	{SW2 "[node 0]\nip = 10.1.0.2\nudp_port = http\n", 6, "bad udp_port"},
	{SW2 "[node 0]\nip = 10.1.0.2\nip = 10.1.0.3\n", 6, "duplicate key 'ip' (first at line 5)"},
	{SW2 "[node 0]\nip = 10.1.0.2/24\ngateway = 10.1.0.300\n", 6, "bad gateway '10.1.0.300'"},
	{SW2 "[node 0]\nip = 10.1.0.2/24\ngateway = 10.2.0.1\n[node 1]\n", 6,
	 "gateway 10.2.0.1 is outside the node's subnet 10.1.0.0/24"},
	{SW2 "[node 0]\nip = 10.1.0.2/24\ngateway = 10.1.0.2\n[node 1]\n", 6,
	 "gateway 10.1.0.2 is the node's own ip"},
	{SW2 "[node 0]\nip = 10.1.0.0/24\n[node 1]\n", 5,
	 "ip 10.1.0.0 is the network address of 10.1.0.0/24"},
	{SW2 "[node 0]\nip = 10.1.0.15\nprefix = 29\n[node 1]\n", 6,
	 "ip 10.1.0.15 is the broadcast address"},
	{SW2 "[node 0]\n" MAC0 "gateway = 10.1.0.1\n[node 1]\n", 6,
	 "'gateway' given but node 0 has no ip"},
	{SW2 "[node 0]\n" MAC0 "udp_port = 9\n[node 1]\n", 6,
	 "'udp_port' given but node 0 has no ip"},
	{DIR3 "[node 0]\nip = 10.1.0.2\n", 5, "'ip' given in direct mode"},
	{SW2 "[node 0]\nip = 10.1.0.2\n[node 1]\n" MAC1, 4,
	 "node 0 has no mac, but node 1 has no ip: every node needs a mac unless"},
	{SW2 "[node 0]\nip = 10.1.0.2\n[node 1]\nip = 10.1.0.2\n", 7,
	 "duplicate ip 10.1.0.2: node 1 and node 0 (line 5); each node needs an address of its"},
	/* one address, two ports: the engine takes a peer at its own address for itself */
	{SW2 "[node 0]\nip = 10.0.0.1\n[node 1]\nip = 10.0.0.1\nudp_port = 35000\n", 7,
	 "duplicate ip 10.0.0.1: node 1 and node 0 (line 5)"},
	/* ports */
	{SW2 "[node 0]\n" MAC0 "z+ = 0\n", 6, "port 'z+' given in switched mode"},
	{DIR3 "[node 0]\nx+ = 0\nx- = 0\n", 6,
	 "port 0 cabled twice: node 0 already uses it for x+ (line 5)"},
	{DIR3 "[node 0]\nx+ = 0\ny+ = 1\n", 6, "port 'y+' given but dimension y has size 1"},
	{DIR3 "[node 0]\nx+ = 0\nz- = 1\n", 6, "dimension z has size 1"},
	{"[torus]\ndims = 2x1x1\nmode = direct\n[node 0]\nx+ = 0\nx- = 1\n", 6,
	 "port 'x-' given but dimension x has size 2: its single link is x+"},
	{DIR3 "[node 0]\nx+ = 65536\n", 5, "bad port '65536' for x+"},
	{DIR3 "[node 0]\nx+ = -1\n", 5, "bad port"},
	{DIR3 "[node 0]\nx+ = eth0\n", 5, "bad port"},
	{DIR3 "[node 0]\nx+ = 0\nx+ = 1\n", 6, "duplicate key 'x+'"},
	{DIR3 "[node 0]\nx+ = 0\n[node 1]\n", 4, "node 0 has no port for x-"},
	{DIR3 "[node 0]\nx+ = 0\nx- = 1\n[node 1]\nx- = 1\n[node 2]\nx+ = 0\nx- = 1\n", 7,
	 "node 1 has no port for x+"},
};

static void
check_bad_files(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		char name[32], err[512], want[600];
		const char *path;
		struct trd_topo *topo;

		snprintf(name, sizeof(name), "bad%u.ini", i);
		path = write_file(name, bc->text);
		snprintf(want, sizeof(want), "%s:%u: ", path, bc->line);
		errno = 0;
		strcpy(err, "(untouched)");
		topo = trd_topo_load(path, err, sizeof(err));
		CHECK(topo == NULL, "bad case %u (%s) loaded", i, bc->word);
		CHECK(errno == EINVAL, "bad case %u: errno %d, want EINVAL", i, errno);
		CHECK(strncmp(err, want, strlen(want)) == 0 && strstr(err, bc->word) != NULL,
		      "bad case %u:\n  got  \"%s\"\n  want \"%s...%s...\"", i, err, want, bc->word);
		trd_topo_free(topo);
		unlink(path);
	}
}

static void
check_misc_errors(void)
{
	char err[256], small[12], want[300];
	struct trd_topo *topo;
	const char *path;

	snprintf(want, sizeof(want), "%s/none.ini", tmp_dir);
	errno = 0;
	topo = trd_topo_load(want, err, sizeof(err));
	CHECK(topo == NULL && errno == ENOENT, "missing file: errno %d", errno);
	CHECK(strstr(err, "none.ini: cannot open: ") != NULL, "missing file: \"%s\"", err);

	errno = 0;
	CHECK(trd_topo_load(NULL, err, sizeof(err)) == NULL && errno == EINVAL, "NULL path");

	/* the message is cut to errlen, always terminated */
	path = write_file("trunc.ini", "[torus]\nbogus = 1\n");
	memset(small, 'x', sizeof(small));
	CHECK(trd_topo_load(path, small, sizeof(small)) == NULL, "trunc.ini loaded");
	CHECK(memchr(small, '\0', sizeof(small)) != NULL && strncmp(small, path, 11) == 0,
	      "truncated message");
	/* a binary file: a NUL byte is an error, not an empty line (/dev/zero was read forever) */
	{
		static const char bin[] = "[torus]\ndims = 1x1x1\0\nmode = direct\n";
		FILE *f;

		snprintf(want, sizeof(want), "%s/nul.ini", tmp_dir);
		f = fopen(want, "w");
		CHECK(f != NULL && fwrite(bin, 1, sizeof(bin) - 1, f) == sizeof(bin) - 1 &&
			      fclose(f) == 0,
		      "write nul.ini");
		errno = 0;
		topo = trd_topo_load(want, err, sizeof(err));
		CHECK(topo == NULL && errno == EINVAL && strstr(err, "nul.ini:2: NUL byte") != NULL,
		      "NUL byte: \"%s\"", topo ? "(loaded)" : err);
		trd_topo_free(topo);
		unlink(want);
		alarm(10); /* a hang fails the test at once */
		topo = trd_topo_load("/dev/zero", err, sizeof(err));
		alarm(0);
		CHECK(topo == NULL && strstr(err, "/dev/zero:1: NUL byte") != NULL,
		      "/dev/zero: \"%s\"", topo ? "(loaded)" : err);
		trd_topo_free(topo);
	}
	/* err NULL is fine */
	errno = 0;
	CHECK(trd_topo_load(path, NULL, 100) == NULL && errno == EINVAL, "err NULL");
	unlink(path);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s EXAMPLES_DIR (skipping: no examples directory)\n",
			argv[0]);
		return 77;
	}
	if (mkdtemp(tmp_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}

	check_examples(argv[1]);
	check_good_files();
	check_bad_files();
	check_misc_errors();

	unlink(write_file("good1.ini", ""));
	unlink(write_file("good2.ini", ""));
	unlink(write_file("good3.ini", ""));
	unlink(write_file("good4.ini", ""));
	if (rmdir(tmp_dir) != 0)
		perror(tmp_dir);

	printf("%lu checks, %lu failed\n", n_checks, n_failures);
	return n_failures == 0 ? 0 : 1;
}
