/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands for toroid: /toroid/nodes, /toroid/stats, /toroid/fifos,
 * /toroid/links, and /toroid/capture/{start,stop,rotate,status}. Built on the public API only (node
 * registry, statistics getters), so the answers are exactly what trd_node_stats_get() and friends
 * return.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#include "core_api.h" /* engine/core/api: trd_node_at(), trd_node_hold() */

RTE_LOG_REGISTER(trd_tel_logtype, toroid.telemetry, NOTICE);
#define TEL_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, trd_tel_logtype, "toroid telemetry: " fmt "\n", ##__VA_ARGS__)

/* Names of the node statistics and drop causes, from the X-macro lists. */
static const char *const tel_stat_names[TRD_STAT_MAX] = {
#define TEL_STAT_NAME_(e, n) [TRD_STAT_##e] = n,
	TRD_NODE_STATS(TEL_STAT_NAME_)
#undef TEL_STAT_NAME_
};

/* The node named @p params, or with that index, held (trd_node_hold): the caller releases it.
 * NULL if none. */
static struct trd_node *
tel_node_lookup(const char *params, unsigned int *index)
{
	unsigned int n = trd_node_count();
	char *end;
	unsigned long v;

	if (params == NULL || *params == '\0')
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		struct trd_node *node = trd_node_hold(i);

		if (node == NULL)
			continue;
		if (strcmp(trd_node_name(node), params) == 0) {
			*index = i;
			return node;
		}
		trd_node_release(node);
	}
	v = strtoul(params, &end, 10);
	if (*end != '\0' || end == params || v >= n)
		return NULL;
	*index = (unsigned int)v;
	return trd_node_hold((unsigned int)v);
}

static void
tel_add_node_id(struct rte_tel_data *d, struct trd_node *node, unsigned int index)
{
	struct trd_coord c = trd_node_coord(node);
	char buf[16];

	snprintf(buf, sizeof(buf), "%u,%u,%u", c.x, c.y, c.z);
	rte_tel_data_add_dict_string(d, "name", trd_node_name(node));
	rte_tel_data_add_dict_u64(d, "index", index);
	rte_tel_data_add_dict_string(d, "coord", buf);
	rte_tel_data_add_dict_u64(d, "x", c.x);
	rte_tel_data_add_dict_u64(d, "y", c.y);
	rte_tel_data_add_dict_u64(d, "z", c.z);
}

/* Add container @p c to @p d as @p name, or free it. */
static int
tel_add_container(struct rte_tel_data *d, const char *name, struct rte_tel_data *c)
{
	int rc = rte_tel_data_add_dict_container(d, name, c, 0);

	if (rc != 0)
		rte_tel_data_free(c);
	return rc;
}

static int
tel_nodes(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int n = trd_node_count(), start = 0, i;

	RTE_SET_USED(cmd);
	if (params != NULL && *params != '\0') {
		char *end;
		unsigned long v = strtoul(params, &end, 10);

		if (*end != '\0')
			return -EINVAL;
		start = v > n ? n : (unsigned int)v;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "count", n);
	for (i = start; i < n && i - start < TRD_TELEMETRY_NODES_PAGE; i++) {
		struct trd_node *node = trd_node_hold(i);
		struct rte_tel_data *e;
		unsigned int nf = 0;
		char key[16];

		if (node == NULL)
			break; /* freed meanwhile */
		e = rte_tel_data_alloc();
		if (e == NULL) {
			trd_node_release(node);
			return -ENOMEM;
		}
		rte_tel_data_start_dict(e);
		tel_add_node_id(e, node, i);
		rte_tel_data_add_dict_u64(e, "links", trd_node_n_links(node));
		while (trd_inj_fifo(node, nf) != NULL)
			nf++;
		rte_tel_data_add_dict_u64(e, "inj_fifos", nf);
		trd_node_release(node);
		snprintf(key, sizeof(key), "%u", i);
		if (tel_add_container(d, key, e) != 0)
			return -ENOSPC;
	}
	if (i < n)
		rte_tel_data_add_dict_u64(d, "next", i);
	return 0;
}

static int
tel_stats_held(struct trd_node *node, unsigned int index, struct rte_tel_data *d)
{
	struct trd_node_stats st;
	struct rte_tel_data *s, *dr;

	if (trd_node_stats_get(node, &st) != 0)
		return -EINVAL;
	s = rte_tel_data_alloc();
	dr = rte_tel_data_alloc();
	if (s == NULL || dr == NULL) {
		rte_tel_data_free(s);
		rte_tel_data_free(dr);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(d);
	tel_add_node_id(d, node, index);
	rte_tel_data_start_dict(s);
	for (unsigned int i = 0; i < TRD_STAT_MAX; i++)
		rte_tel_data_add_dict_u64(s, tel_stat_names[i], st.stat[i]);
	rte_tel_data_start_dict(dr);
	for (unsigned int i = 1; i < TRD_DROP_MAX; i++)
		rte_tel_data_add_dict_u64(dr, trd_drop_name(i), st.drop[i]);
	if (tel_add_container(d, "stats", s) != 0) {
		rte_tel_data_free(dr);
		return -ENOSPC;
	}
	if (tel_add_container(d, "drops", dr) != 0)
		return -ENOSPC;
	return 0;
}

static int
tel_fifo_add(struct rte_tel_data *d, const char *key, const struct trd_inj_fifo *f)
{
	struct trd_inj_fifo_stats st;
	struct rte_tel_data *e;

	if (trd_inj_fifo_stats_get(f, &st) != 0)
		return 0;
	e = rte_tel_data_alloc();
	if (e == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(e);
	rte_tel_data_add_dict_u64(e, "descs", st.descs);
	rte_tel_data_add_dict_u64(e, "pkts", st.pkts);
	rte_tel_data_add_dict_u64(e, "pkts_sent", st.pkts_sent);
	rte_tel_data_add_dict_u64(e, "used", st.used);
	rte_tel_data_add_dict_u64(e, "hwm", st.hwm);
	rte_tel_data_add_dict_u64(e, "free", trd_inj_fifo_free_count(f));
	return tel_add_container(d, key, e) == 0 ? 0 : -ENOSPC;
}

static int
tel_fifos_held(struct trd_node *node, unsigned int index, struct rte_tel_data *d)
{
	struct trd_inj_fifo *f;
	char key[16];
	int rc;

	rte_tel_data_start_dict(d);
	tel_add_node_id(d, node, index);
	for (unsigned int i = 0; (f = trd_inj_fifo(node, i)) != NULL; i++) {
		snprintf(key, sizeof(key), "%u", i);
		rc = tel_fifo_add(d, key, f);
		if (rc != 0)
			return rc;
	}
	/* the engine's own FIFO (remote gets and reflection run from it) */
	f = trd_inj_fifo(node, TRD_ENGINE_FIFO);
	if (f != NULL)
		return tel_fifo_add(d, "engine", f);
	return 0;
}

static int
tel_links_held(struct trd_node *node, unsigned int index, struct rte_tel_data *d)
{
	unsigned int n;
	char key[16];

	rte_tel_data_start_dict(d);
	tel_add_node_id(d, node, index);
	n = trd_node_n_links(node);
	for (unsigned int i = 0; i < n; i++) {
		const struct trd_link *l = trd_node_link(node, i);
		struct trd_link_stats st;
		struct rte_tel_data *e;
		int port;

		if (l == NULL || trd_link_stats_get(l, &st) != 0)
			continue;
		e = rte_tel_data_alloc();
		if (e == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(e);
		rte_tel_data_add_dict_string(e, "name", trd_link_name(l));
		rte_tel_data_add_dict_string(e, "dir", trd_dir_name((enum trd_dir)st.dir));
		port = trd_link_port(l);
		rte_tel_data_add_dict_string(e, "kind", port >= 0 ? "ethdev" : "ring");
		if (port >= 0)
			rte_tel_data_add_dict_u64(e, "port", (uint64_t)port);
		rte_tel_data_add_dict_u64(e, "tx_pkts", st.tx_pkts);
		rte_tel_data_add_dict_u64(e, "tx_bytes", st.tx_bytes);
		rte_tel_data_add_dict_u64(e, "rx_pkts", st.rx_pkts);
		rte_tel_data_add_dict_u64(e, "rx_bytes", st.rx_bytes);
		rte_tel_data_add_dict_u64(e, "fwd_pkts", st.fwd_pkts);
		rte_tel_data_add_dict_u64(e, "pending", st.pending);
		if (port >= 0)
			rte_tel_data_add_dict_u64(e, "port_faults", st.port_faults);
		if (st.ip) {
			rte_tel_data_add_dict_u64(e, "encap_drops", st.encap_drops);
			rte_tel_data_add_dict_u64(e, "arp_requests", st.arp_requests);
			rte_tel_data_add_dict_u64(e, "arp_replies", st.arp_replies);
			rte_tel_data_add_dict_u64(e, "arp_resolved", st.arp_resolved);
			rte_tel_data_add_dict_u64(e, "arp_bad", st.arp_bad);
			rte_tel_data_add_dict_u64(e, "ip_unresolved", st.ip_unresolved);
			rte_tel_data_add_dict_u64(e, "arp_pending", st.arp_pending);
			rte_tel_data_add_dict_u64(e, "ip_held", st.ip_held);
			rte_tel_data_add_dict_u64(e, "ip_held_drops", st.ip_held_drops);
		}
		/* keys are the links' indexes: telemetry allows only [A-Za-z0-9_/] in names */
		snprintf(key, sizeof(key), "%u", i);
		if (tel_add_container(d, key, e) != 0)
			return -ENOSPC;
	}
	return 0;
}

/* ---- /toroid/capture/...: the process's capture, started, rotated and stopped at run time ---- */

/* One capture command at a time: each telemetry client has a thread of its own. */
static pthread_mutex_t tel_cap_lock = PTHREAD_MUTEX_INITIALIZER;

/* A size: bytes, or with a suffix k, M, G (powers of 1024). -1 if not one. */
static int
tel_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift != 0)
		end++;
	if (*end != '\0' || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static void tel_capture_error(struct rte_tel_data *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
tel_capture_error(struct rte_tel_data *d, const char *fmt, ...)
{
	char buf[RTE_TEL_MAX_STRING_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "ok", 0);
	rte_tel_data_add_dict_string(d, "error", buf);
}

static void tel_capture_figures(struct rte_tel_data *d, const struct trd_capture_stats *st,
				unsigned int nodes);

/* The capture's figures, of the first node of the process that has one. */
static int
tel_capture_status(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int n = trd_node_count();
	struct trd_capture_stats st = {.limit = 0};
	unsigned int nodes = 0;
	bool found = false;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	for (unsigned int i = 0; i < n; i++) {
		struct trd_node *node = trd_node_at(i);
		struct trd_capture_stats s;

		if (node == NULL || trd_node_capture_stats(node, &s) != 0)
			continue;
		if (!found)
			st = s;
		found = true;
		nodes++;
	}
	tel_capture_figures(d, &st, found ? nodes : 0);
	return 0;
}

/* Stop the capture of every node; the final figures (of the last node that had one, whose
 * file's are then complete) in @p st if not NULL. How many had one. */
static unsigned int
tel_capture_stop_all(struct trd_capture_stats *st)
{
	unsigned int n = trd_node_count(), had = 0;
	struct trd_capture_stats s;

	for (unsigned int i = 0; i < n; i++) {
		struct trd_node *node = trd_node_at(i);

		if (node == NULL || trd_node_capture_stop(node, &s) != 0)
			continue;
		had++;
		if (st != NULL)
			*st = s;
	}
	return had;
}

static void
tel_capture_figures(struct rte_tel_data *d, const struct trd_capture_stats *st, unsigned int nodes)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "ok", 1);
	rte_tel_data_add_dict_u64(d, "active", nodes != 0);
	if (nodes == 0)
		return;
	rte_tel_data_add_dict_u64(d, "nodes", nodes);
	rte_tel_data_add_dict_string(d, "file", st->file);
	rte_tel_data_add_dict_string(d, "filter", st->filter);
	rte_tel_data_add_dict_u64(d, "frames", st->frames);
	rte_tel_data_add_dict_u64(d, "bytes", st->bytes);
	rte_tel_data_add_dict_u64(d, "filtered", st->filtered);
	rte_tel_data_add_dict_u64(d, "dropped", st->dropped);
	rte_tel_data_add_dict_u64(d, "files", st->files);
	rte_tel_data_add_dict_u64(d, "file_size", st->file_size);
	rte_tel_data_add_dict_u64(d, "file_count", st->file_count);
	rte_tel_data_add_dict_u64(d, "limit", st->limit == UINT64_MAX ? 0 : st->limit);
	rte_tel_data_add_dict_u64(d, "full", (uint64_t)st->full);
	rte_tel_data_add_dict_string(d, "write_error", st->error != 0 ? strerror(st->error) : "");
}

/* The smallest size= and limit=, as toroid-node's and toroid-dump's options take them. */
#define TEL_CAPTURE_MIN 4096

/* PATH[,snaplen=N][,size=BYTES][,files=N][,limit=BYTES|none][,node=NODE][,filter=EXPR]:
 * filter= comes last and takes the rest of the line, commas included. */
static int
tel_capture_start_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct trd_capture_conf conf = {0};
	char buf[1024], *p, *next, *path;
	struct trd_node *only = NULL;
	unsigned int n = trd_node_count(), started = 0, index;
	int rc = 0;

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0') {
		tel_capture_error(d, "usage: /toroid/capture/start,PATH[,snaplen=N][,size=B]"
				     "[,files=N][,limit=B][,node=NODE][,filter=EXPR]");
		return 0;
	}
	if (strlen(params) >= sizeof(buf)) {
		tel_capture_error(d, "parameters too long");
		return 0;
	}
	strcpy(buf, params);
	path = buf;
	p = strchr(buf, ',');
	if (p != NULL)
		*p++ = '\0';
	if (path[0] != '/') {
		tel_capture_error(d,
				  "%s: the path must be absolute (the engine's directory is not "
				  "yours)",
				  path);
		return 0;
	}
	while (p != NULL && *p != '\0') {
		uint64_t v;

		if (strncmp(p, "filter=", 7) == 0) {
			conf.filter = p + 7;
			break;
		}
		next = strchr(p, ',');
		if (next != NULL)
			*next++ = '\0';
		if (strncmp(p, "snaplen=", 8) == 0 && tel_parse_size(p + 8, &v) == 0 && v >= 64 &&
		    v <= 65535)
			conf.snaplen = (unsigned int)v;
		else if (strncmp(p, "size=", 5) == 0 && tel_parse_size(p + 5, &v) == 0 &&
			 v >= TEL_CAPTURE_MIN)
			conf.file_size = v;
		else if (strncmp(p, "files=", 6) == 0 && tel_parse_size(p + 6, &v) == 0 &&
			 v <= 100000)
			conf.file_count = (unsigned int)v;
		else if (strcmp(p, "limit=none") == 0)
			conf.limit = UINT64_MAX;
		else if (strncmp(p, "limit=", 6) == 0 && tel_parse_size(p + 6, &v) == 0 &&
			 v >= TEL_CAPTURE_MIN)
			conf.limit = v;
		else if (strncmp(p, "node=", 5) == 0 &&
			 (only = tel_node_lookup(p + 5, &index)) != NULL)
			trd_node_release(only); /* compared only: the capture calls check it */
		else {
			tel_capture_error(
				d,
				"'%s' is not snaplen=64..65535, size=BYTES, files=N, "
				"limit=BYTES|none (BYTES >= 4k), node=NODE or filter=EXPR",
				p);
			return 0;
		}
		p = next;
	}
	if (conf.file_count != 0 && conf.file_size == 0) {
		tel_capture_error(d, "files=N needs size=BYTES");
		return 0;
	}
	if (conf.filter != NULL) {
		char err[RTE_TEL_MAX_STRING_LEN];

		if (trd_capture_filter_check(conf.filter, err, sizeof(err)) != 0) {
			tel_capture_error(d, "filter: %s", err);
			return 0;
		}
	}
	/* a capture already running stops: its file is closed before another one opens */
	tel_capture_stop_all(NULL);
	for (unsigned int i = 0; i < n && rc == 0; i++) {
		struct trd_node *node = trd_node_at(i);

		if (node == NULL || (only != NULL && node != only))
			continue;
		rc = trd_node_capture_start(node, path, &conf);
		started += rc == 0;
	}
	if (rc != 0) {
		tel_capture_stop_all(NULL);
		tel_capture_error(d, "%s: %s", path, strerror(-rc));
		return 0;
	}
	if (started == 0) {
		tel_capture_error(d, "no node to capture");
		return 0;
	}
	TEL_LOG(INFO, "capture of %u node(s) into %s started", started, path);
	return tel_capture_status(cmd, NULL, d);
}

/* The figures as they end, then the files are closed. */
static int
tel_capture_stop_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct trd_capture_stats st = {.limit = 0};
	unsigned int had;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	had = tel_capture_stop_all(&st);
	tel_capture_figures(d, &st, had);
	return 0;
}

static int
tel_capture_rotate_locked(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int n = trd_node_count();

	RTE_SET_USED(params);
	/* nodes sharing the file move together: rotating the first one is enough */
	for (unsigned int i = 0; i < n; i++) {
		struct trd_node *node = trd_node_at(i);
		int rc;

		if (node == NULL)
			continue;
		rc = trd_node_capture_rotate(node);
		if (rc == -ENOENT)
			continue;
		if (rc != 0) {
			tel_capture_error(d, "rotate: %s", strerror(-rc));
			return 0;
		}
		return tel_capture_status(cmd, NULL, d);
	}
	tel_capture_error(d, "no capture running");
	return 0;
}

#define TEL_CAPTURE_LOCKED(fn)                                                                     \
	static int fn(const char *cmd, const char *params, struct rte_tel_data *d)                 \
	{                                                                                          \
		int rc;                                                                            \
                                                                                                   \
		pthread_mutex_lock(&tel_cap_lock);                                                 \
		rc = fn##_locked(cmd, params, d);                                                  \
		pthread_mutex_unlock(&tel_cap_lock);                                               \
		return rc;                                                                         \
	}
TEL_CAPTURE_LOCKED(tel_capture_start)
TEL_CAPTURE_LOCKED(tel_capture_stop)
TEL_CAPTURE_LOCKED(tel_capture_rotate)

/* A command on the node its parameter names, held (trd_node_hold) while the answer is made:
 * trd_node_free() of it waits, and a node freed before is not found. */
#define TEL_NODE_HELD(fn)                                                                          \
	static int fn(const char *cmd, const char *params, struct rte_tel_data *d)                 \
	{                                                                                          \
		struct trd_node *node;                                                             \
		unsigned int index;                                                                \
		int rc;                                                                            \
                                                                                                   \
		RTE_SET_USED(cmd);                                                                 \
		node = tel_node_lookup(params, &index);                                            \
		if (node == NULL)                                                                  \
			return -EINVAL;                                                            \
		rc = fn##_held(node, index, d);                                                    \
		trd_node_release(node);                                                            \
		return rc;                                                                         \
	}
TEL_NODE_HELD(tel_stats)
TEL_NODE_HELD(tel_fifos)
TEL_NODE_HELD(tel_links)

static const struct {
	const char *cmd;
	telemetry_cb fn;
	const char *help;
} tel_cmds[] = {
	/* help: less than RTE_TEL_MAX_STRING_LEN (128) characters */
	{"/toroid/nodes", tel_nodes,
	 "toroid nodes of this process by index: name, coordinate, links. Parameters: start "
	 "index (optional)"},
	{"/toroid/stats", tel_stats,
	 "Statistics and drop causes of a toroid node. Parameters: node name or index"},
	{"/toroid/fifos", tel_fifos,
	 "Injection FIFO counters and occupancy of a toroid node. Parameters: node name or index"},
	{"/toroid/links", tel_links,
	 "Link counters of a toroid node. Parameters: node name or index"},
	{"/toroid/capture/start", tel_capture_start,
	 "Record the nodes' frames. Params: PATH[,snaplen=N][,size=B][,files=N][,limit=B|none]"
	 "[,node=NODE][,filter=BPF]"},
	{"/toroid/capture/stop", tel_capture_stop, "Stop the capture; answers its last figures"},
	{"/toroid/capture/rotate", tel_capture_rotate,
	 "Close the capture's file and go on in the next one"},
	{"/toroid/capture/status", tel_capture_status,
	 "The capture's file, frames, bytes, frames filtered out and dropped"},
};

static rte_spinlock_t tel_lock = RTE_SPINLOCK_INITIALIZER;
static uint8_t tel_done[RTE_DIM(tel_cmds)];

int
trd_telemetry_init(void)
{
	int rc = 0;

	rte_spinlock_lock(&tel_lock);
	for (unsigned int i = 0; i < RTE_DIM(tel_cmds) && rc == 0; i++) {
		if (tel_done[i])
			continue;
		rc = rte_telemetry_register_cmd(tel_cmds[i].cmd, tel_cmds[i].fn, tel_cmds[i].help);
		if (rc == 0)
			tel_done[i] = 1;
		else
			TEL_LOG(ERR, "cannot register %s: %s", tel_cmds[i].cmd, strerror(-rc));
	}
	rte_spinlock_unlock(&tel_lock);
	return rc;
}
