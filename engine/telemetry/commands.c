/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands for toroid: /toroid/nodes, /toroid/stats, /toroid/fifos,
 * /toroid/links. Built on the public API only (node registry, statistics getters), so the
 * answers are exactly what trd_node_stats_get() and friends return.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#include "core_api.h" /* engine/core/api: trd_node_at() */

RTE_LOG_REGISTER(trd_tel_logtype, toroid.telemetry, NOTICE);
#define TEL_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, trd_tel_logtype, "toroid telemetry: " fmt "\n", ##__VA_ARGS__)

/* Names of the node statistics and drop causes, from the X-macro lists. */
static const char *const tel_stat_names[TRD_STAT_MAX] = {
#define TEL_STAT_NAME_(e, n) [TRD_STAT_##e] = n,
	TRD_NODE_STATS(TEL_STAT_NAME_)
#undef TEL_STAT_NAME_
};

/* The node named @p params, or with that index. NULL if none. */
static struct trd_node *
tel_node_lookup(const char *params, unsigned int *index)
{
	unsigned int n = trd_node_count();
	char *end;
	unsigned long v;

	if (params == NULL || *params == '\0')
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		struct trd_node *node = trd_node_at(i);

		if (node != NULL && strcmp(trd_node_name(node), params) == 0) {
			*index = i;
			return node;
		}
	}
	v = strtoul(params, &end, 10);
	if (*end != '\0' || end == params || v >= n)
		return NULL;
	*index = (unsigned int)v;
	return trd_node_at((unsigned int)v);
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
		struct trd_node *node = trd_node_at(i);
		struct rte_tel_data *e;
		unsigned int nf = 0;
		char key[16];

		if (node == NULL)
			break; /* freed meanwhile */
		e = rte_tel_data_alloc();
		if (e == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(e);
		tel_add_node_id(e, node, i);
		rte_tel_data_add_dict_u64(e, "links", trd_node_n_links(node));
		while (trd_inj_fifo(node, nf) != NULL)
			nf++;
		rte_tel_data_add_dict_u64(e, "inj_fifos", nf);
		snprintf(key, sizeof(key), "%u", i);
		if (tel_add_container(d, key, e) != 0)
			return -ENOSPC;
	}
	if (i < n)
		rte_tel_data_add_dict_u64(d, "next", i);
	return 0;
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct trd_node_stats st;
	struct rte_tel_data *s, *dr;
	struct trd_node *node;
	unsigned int index;

	RTE_SET_USED(cmd);
	node = tel_node_lookup(params, &index);
	if (node == NULL || trd_node_stats_get(node, &st) != 0)
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
tel_fifos(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct trd_node *node;
	struct trd_inj_fifo *f;
	unsigned int index;
	char key[16];
	int rc;

	RTE_SET_USED(cmd);
	node = tel_node_lookup(params, &index);
	if (node == NULL)
		return -EINVAL;
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
tel_links(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct trd_node *node;
	unsigned int index, n;
	char key[16];

	RTE_SET_USED(cmd);
	node = tel_node_lookup(params, &index);
	if (node == NULL)
		return -EINVAL;
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
		if (st.ip) {
			rte_tel_data_add_dict_u64(e, "encap_drops", st.encap_drops);
			rte_tel_data_add_dict_u64(e, "arp_requests", st.arp_requests);
			rte_tel_data_add_dict_u64(e, "arp_replies", st.arp_replies);
			rte_tel_data_add_dict_u64(e, "arp_resolved", st.arp_resolved);
			rte_tel_data_add_dict_u64(e, "arp_bad", st.arp_bad);
			rte_tel_data_add_dict_u64(e, "ip_unresolved", st.ip_unresolved);
			rte_tel_data_add_dict_u64(e, "arp_pending", st.arp_pending);
		}
		/* keys are the links' indexes: telemetry allows only [A-Za-z0-9_/] in names */
		snprintf(key, sizeof(key), "%u", i);
		if (tel_add_container(d, key, e) != 0)
			return -ENOSPC;
	}
	return 0;
}

static const struct {
	const char *cmd;
	telemetry_cb fn;
	const char *help;
} tel_cmds[] = {
	{"/toroid/nodes", tel_nodes,
	 "toroid nodes of this process by index: name, coordinate, links. Parameters: start "
	 "index (optional)"},
	{"/toroid/stats", tel_stats,
	 "Statistics and drop causes of a toroid node. Parameters: node name or index"},
	{"/toroid/fifos", tel_fifos,
	 "Injection FIFO counters and occupancy of a toroid node. Parameters: node name or index"},
	{"/toroid/links", tel_links,
	 "Link counters of a toroid node. Parameters: node name or index"},
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
