/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: the /toroid/vni telemetry command (docs/telemetry.md). The telemetry thread
 * never reads a live service: every service registered copies its counters and its
 * interfaces' into its snapshot, from the thread that polls it (trd_vni_svc_poll, every 10 ms),
 * and the command answers from that copy. One lock guards the list of services and their
 * snapshots; trd_vni_svc_free() takes its service off the list.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "tel_pvt.h"

/* What /toroid/vni shows of one service. */
struct svc_tel {
	TAILQ_ENTRY(svc_tel) next;
	char node[64];
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint64_t stat[TRD_VNI_SVC_STAT_MAX];
	unsigned int n_ifs;
	struct trd_vni_svc_if_info ifs[SVC_MAX_IFS];
};

static TAILQ_HEAD(, svc_tel) tel_list = TAILQ_HEAD_INITIALIZER(tel_list);
static rte_spinlock_t tel_lock = RTE_SPINLOCK_INITIALIZER;
static bool tel_cmd_registered;

/* /toroid/vni[,NODE]: NODE is a node's name or the service's index in the order of
 * registration; without it, the only service. */
static int
tel_vni(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct svc_tel *copy, *t, *sel = NULL;
	unsigned int n = 0;
	int rc = 0;

	RTE_SET_USED(cmd);
	copy = malloc(sizeof(*copy)); /* requests may come from several clients at once */
	if (copy == NULL)
		return -ENOMEM;
	rte_spinlock_lock(&tel_lock);
	TAILQ_FOREACH(t, &tel_list, next)
	{
		char idx[16];

		snprintf(idx, sizeof(idx), "%u", n++);
		if (params != NULL && (strcmp(params, t->node) == 0 || strcmp(params, idx) == 0))
			sel = t;
	}
	if (sel == NULL && n == 1 && (params == NULL || *params == '\0'))
		sel = TAILQ_FIRST(&tel_list);
	if (sel != NULL) {
		memcpy(copy->node, sel->node, sizeof(copy->node));
		memcpy(copy->socket, sel->socket, sizeof(copy->socket));
		memcpy(copy->stat, sel->stat, sizeof(copy->stat));
		copy->n_ifs = sel->n_ifs;
		memcpy(copy->ifs, sel->ifs, copy->n_ifs * sizeof(copy->ifs[0]));
	}
	rte_spinlock_unlock(&tel_lock);
	if (sel == NULL) {
		free(copy);
		return -EINVAL;
	}

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "node", copy->node);
	rte_tel_data_add_dict_string(d, "socket", copy->socket);
	for (unsigned int k = 0; k < TRD_VNI_SVC_STAT_MAX; k++)
		rte_tel_data_add_dict_u64(d, trd_vni_svc_stat_name(k), copy->stat[k]);
	rte_tel_data_add_dict_int(d, "interfaces", (int)copy->n_ifs);
	/* one dictionary per interface, named if_APP_PROC (telemetry names: [A-Za-z0-9_/]) */
	for (unsigned int i = 0; i < copy->n_ifs; i++) {
		const struct trd_vni_svc_if_info *f = &copy->ifs[i];
		struct rte_tel_data *e = rte_tel_data_alloc();
		char key[32];

		if (e == NULL) {
			rc = -ENOMEM;
			break;
		}
		rte_tel_data_start_dict(e);
		rte_tel_data_add_dict_u64(e, "app", f->app);
		rte_tel_data_add_dict_u64(e, "proc", f->proc);
		rte_tel_data_add_dict_int(e, "pid", f->pid);
		rte_tel_data_add_dict_int(e, "dead", f->dead);
		rte_tel_data_add_dict_int(e, "compute_permille", f->compute_permille);
		rte_tel_data_add_dict_u64(e, "pool_size", f->pool_size);
		rte_tel_data_add_dict_u64(e, "tx_msgs", f->tx_msgs);
		rte_tel_data_add_dict_u64(e, "tx_pkts", f->tx_pkts);
		rte_tel_data_add_dict_u64(e, "tx_pkts_shared", f->tx_pkts_shared);
		rte_tel_data_add_dict_u64(e, "tx_bytes", f->tx_bytes);
		rte_tel_data_add_dict_u64(e, "rx_msgs", f->rx_msgs);
		rte_tel_data_add_dict_u64(e, "rx_bytes", f->rx_bytes);
		rte_tel_data_add_dict_u64(e, "naks", f->naks);
		rte_tel_data_add_dict_u64(e, "staged_bytes", f->staged_bytes);
		rte_tel_data_add_dict_u64(e, "mu_descs", f->mu_descs);
		rte_tel_data_add_dict_u64(e, "mu_bad_descs", f->mu_bad_descs);
		rte_tel_data_add_dict_u64(e, "tx_ready", f->tx_ready);
		rte_tel_data_add_dict_u64(e, "tx_wait", f->tx_wait);
		rte_tel_data_add_dict_u64(e, "tx_backoff", f->tx_backoff);
		rte_tel_data_add_dict_u64(e, "tx_drain", f->tx_drain);
		rte_tel_data_add_dict_u64(e, "tx_hold", f->tx_hold);
		rte_tel_data_add_dict_u64(e, "recvs_posted", f->recvs_posted);
		rte_tel_data_add_dict_u64(e, "rx_held", f->rx_held);
		rte_tel_data_add_dict_u64(e, "rx_hdr", f->rx_hdr);
		rte_tel_data_add_dict_u64(e, "cmds_queued", f->cmds_queued);
		rte_tel_data_add_dict_u64(e, "in_round", f->in_round);
		snprintf(key, sizeof(key), "if_%u_%u", f->app, f->proc);
		if (rte_tel_data_add_dict_container(d, key, e, 0) != 0) {
			rte_tel_data_free(e);
			break;
		}
	}
	free(copy);
	return rc;
}

int
trd_vni_svc_telemetry_register(struct trd_vni_svc *s)
{
	struct svc_tel *t;
	int rc = 0;

	if (s == NULL)
		return -EINVAL;
	if (s->tel != NULL)
		return 0;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	snprintf(t->node, sizeof(t->node), "%s", trd_node_name(s->node));
	snprintf(t->socket, sizeof(t->socket), "%s", s->path);
	rte_spinlock_lock(&tel_lock);
	if (!tel_cmd_registered) {
		rc = rte_telemetry_register_cmd("/toroid/vni", tel_vni,
						"VNI service counters and one dict per process "
						"(if_APP_PROC). Parameters: node name or index");
		tel_cmd_registered = rc == 0;
	}
	if (rc == 0)
		TAILQ_INSERT_TAIL(&tel_list, t, next);
	rte_spinlock_unlock(&tel_lock);
	if (rc != 0) {
		VNI_LOG(ERR, "cannot register /toroid/vni: %s", strerror(-rc));
		free(t);
		return rc;
	}
	s->tel = t;
	svc_tel_snapshot(s);
	return 0;
}

void
svc_tel_snapshot(struct trd_vni_svc *s)
{
	struct svc_tel *t = s->tel;
	unsigned int n = RTE_MIN(s->n_ifs, (unsigned int)RTE_DIM(t->ifs));

	s->next_tel = s->now + SVC_TEL_PERIOD_US;
	rte_spinlock_lock(&tel_lock);
	trd_vni_svc_stats_get(s, t->stat);
	for (unsigned int i = 0; i < n; i++)
		trd_vni_svc_if_get(s, i, &t->ifs[i]);
	t->n_ifs = n;
	rte_spinlock_unlock(&tel_lock);
}

void
svc_tel_unregister(struct trd_vni_svc *s)
{
	if (s->tel == NULL)
		return;
	rte_spinlock_lock(&tel_lock);
	TAILQ_REMOVE(&tel_list, s->tel, next);
	rte_spinlock_unlock(&tel_lock);
	free(s->tel);
	s->tel = NULL;
}
