/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service: the engine side of virtual network interfaces (toroid/vni_service.h,
 * docs/vni.md). This file makes and frees a service and runs its rounds; the parts are in
 * files named for them (service_pvt.h lists them).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "coll_pvt.h"
#include "dispatch_pvt.h"
#include "iface_pvt.h"
#include "mu_pvt.h"
#include "order_pvt.h"
#include "proto_pvt.h"
#include "rma_pvt.h"
#include "tel_pvt.h"
#include "tx_pvt.h"

RTE_LOG_REGISTER(trd_vni_logtype, toroid.vni, INFO);

static const char *const svc_stat_names[] = {
#define TRD_VNI_SVC_STAT_NAME_(e, n) n,
	TRD_VNI_SVC_STATS(TRD_VNI_SVC_STAT_NAME_)
#undef TRD_VNI_SVC_STAT_NAME_
};
_Static_assert(RTE_DIM(svc_stat_names) == TRD_VNI_SVC_STAT_MAX, "one name per statistic");

/* ------------------------------------------------------------------------------------------ */
/* a round */

/* Has a round nothing to do but look for protocol frames? No reply queued, no message
 * scheduled, no collective, no timer due with a send waiting on it, no sweep due, no command
 * in a live interface's queue (one load each: what the process wrote is checked by the full
 * round that takes it). The injection FIFOs of attached processes are the core's. */
static bool
svc_quiet(const struct trd_vni_svc *s)
{
	if (s->n_preps != 0 || !TAILQ_EMPTY(&s->rr) || s->n_colls != 0 || s->now >= s->next_sweep ||
	    (s->now >= s->next_timer &&
	     (!TAILQ_EMPTY(&s->lists[L_TIMER]) || !TAILQ_EMPTY(&s->lists[L_DRAIN]))))
		return false;
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		const struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead && !v->broken && svc_cmdq_pending(v))
			return false;
	}
	return true;
}

int
trd_vni_svc_poll(struct trd_vni_svc *s)
{
	unsigned int work = 0;
	bool quiet = false;

	if (s == NULL)
		return -EINVAL;
	s->now = trd_time_us();
	s->round++;
	svc_mu_rwake(s);
	if (s->now >= s->next_sock) {
		s->next_sock = s->now + SVC_SOCK_PERIOD_US;
		work += svc_sock_events(s, 0);
	}
	/* every SVC_FULL_EVERY-th round is whole whatever, and so is one whose socket look
	 * found something (a death among it): the messaging-unit watch (mu.c) and the
	 * telemetry run in those */
	quiet = work == 0 && (++s->rounds & (SVC_FULL_EVERY - 1)) != 0 && svc_quiet(s);
	if (!quiet)
		work += svc_replies_flush(s);
	work += svc_rx_protocol(s);
	if (quiet && work == 0) {
		if (s->wake_any) /* (completions written by the core's callbacks) */
			svc_vif_wake_all(s);
		return 0;
	}
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead)
			work += svc_vif_cmds(s, v);
	}
	work += svc_mu_poll(s);
	if (s->now >= s->next_timer) {
		s->next_timer = s->now + SVC_TIMER_PERIOD_US;
		work += svc_timers(s);
	}
	work += svc_colls_poll(s);
	work += svc_schedule(s);
	svc_vif_wake_all(s);
	if (s->tel != NULL && s->now >= s->next_tel)
		svc_tel_snapshot(s);
	return (int)work;
}

int
trd_vni_svc_fd(const struct trd_vni_svc *s)
{
	return s == NULL ? -EINVAL : s->epfd;
}

/* The processes may post without a kick again. */
static void
svc_awake(struct trd_vni_svc *s)
{
	if (s == NULL)
		return;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (!s->ifs[i]->dead)
			__atomic_store_n(&s->ifs[i]->seg->engine_idle, 0, __ATOMIC_RELAXED);
}

int
trd_vni_svc_sleep_until(struct trd_vni_svc *s, uint64_t *until_us)
{
	const struct vtx *t;
	uint64_t due = UINT64_MAX;
	bool busy;

	if (s == NULL || until_us == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (!s->ifs[i]->dead)
			__atomic_store_n(&s->ifs[i]->seg->engine_idle, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* queued replies, injection, sends draining and collectives keep the engine awake; so
	 * does a command that came before the flag was seen. A send waiting out its back-off,
	 * its hold at its sender or a CMA answer only bounds the sleep: the receive that grants
	 * a held one is taken when its process kicks (its next poll or wait at the latest), a
	 * CMA answer kicks */
	busy = !TAILQ_EMPTY(&s->rr) || s->n_preps != 0 || !TAILQ_EMPTY(&s->lists[L_DRAIN]) ||
	       s->n_colls != 0 || svc_mu_pending(s);
	TAILQ_FOREACH(t, &s->lists[L_TIMER], lq)
	due = RTE_MIN(due, t->due);
	if (due != UINT64_MAX && due <= trd_time_us() + SVC_TIMER_PERIOD_US)
		busy = true;
	for (unsigned int i = 0; i < s->n_ifs && !busy; i++) {
		struct vif *v = s->ifs[i];

		if (!v->dead && !v->broken && svc_cmdq_pending(v))
			busy = true;
	}
	if (busy) {
		svc_awake(s);
		return -EBUSY;
	}
	*until_us = due;
	return 0;
}

int
trd_vni_svc_sleep_begin(struct trd_vni_svc *s)
{
	uint64_t until;
	int rc = trd_vni_svc_sleep_until(s, &until);

	if (rc == 0 && until != UINT64_MAX) {
		svc_awake(s); /* a caller that may sleep for ever: not with a timer set */
		return -EBUSY;
	}
	return rc;
}

void
trd_vni_svc_sleep_cancel(struct trd_vni_svc *s)
{
	svc_awake(s);
}

void
trd_vni_svc_sleep_end(struct trd_vni_svc *s)
{
	if (s == NULL)
		return;
	svc_awake(s);
	/* the first round reads the sockets: what woke the sleep (a kick, a connection, an exit)
	 * is taken at once, and a kick left unread would end the next sleep as soon as it
	 * began, a wake-up for nothing every loop until the socket period came round */
	s->next_sock = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* statistics */

int
trd_vni_svc_stats_get(const struct trd_vni_svc *s, uint64_t out[TRD_VNI_SVC_STAT_MAX])
{
	if (s == NULL || out == NULL)
		return -EINVAL;
	memcpy(out, s->stat, sizeof(s->stat));
	svc_mu_stats_add(s, out); /* the core counts the FIFOs it serves (mu.c) */
	return 0;
}

const char *
trd_vni_svc_stat_name(unsigned int stat)
{
	return stat < TRD_VNI_SVC_STAT_MAX ? svc_stat_names[stat] : NULL;
}

unsigned int
trd_vni_svc_n_ifs(const struct trd_vni_svc *s)
{
	return s == NULL ? 0 : s->n_ifs;
}

unsigned int
trd_vni_svc_n_procs(const struct trd_vni_svc *s)
{
	return s == NULL ? 0 : s->n_procs;
}

/* What interface @p v holds now: its sends by state, its receives, its queued commands. */
static void
if_state(const struct vif *v, struct trd_vni_svc_if_info *out)
{
	const struct vtx *t;

	TAILQ_FOREACH(t, &v->txs, oq)
	{
		switch (t->state) {
		case TX_REQ:
		case TX_DATA:
		case TX_FIN:
		case TX_ABORT:
			out->tx_ready++;
			break;
		case TX_WAIT:
		case TX_WAIT_DONE:
		case TX_CMA:
		case TX_PENDING:
			out->tx_wait++;
			break;
		case TX_BACKOFF:
			out->tx_backoff++;
			break;
		case TX_DRAIN:
			out->tx_drain++;
			break;
		case TX_HOLD:
			out->tx_hold++;
			break;
		default: /* a multicast parent: its children are counted */
			break;
		}
	}
	if (!v->dead) {
		out->recvs_posted = v->n_posted;
		/* the application writes the producer index: shown, never used */
		out->cmds_queued =
			__atomic_load_n(&v->cmdq->prod.tail, __ATOMIC_RELAXED) - v->cmd_cons;
	}
	out->rx_held = v->n_rx;
	out->rx_hdr = v->n_hdr;
	out->in_round = v->in_rr;
}

/* An interface's trd_vni_hint_compute(): the thousandths clamped to 1000, -1 if not told;
 * *movable (if not NULL) its flag. */
static int
if_compute(const struct vif *v, int *movable)
{
	uint32_t w = __atomic_load_n(&v->seg->app_compute, __ATOMIC_RELAXED);

	if (movable != NULL)
		*movable = (w >> VNI_COMPUTE_FLAGS_SHIFT & TRD_VNI_HINT_MOVABLE) != 0;
	if ((w & VNI_COMPUTE_TOLD) == 0)
		return -1;
	return (int)RTE_MIN(w & VNI_COMPUTE_PERMILLE, 1000u);
}

int
trd_vni_svc_if_load_get(const struct trd_vni_svc *s, unsigned int i,
			struct trd_vni_svc_if_load *out)
{
	const struct vif *v;

	if (s == NULL || out == NULL || i >= s->n_ifs)
		return -EINVAL;
	v = s->ifs[i];
	out->pid = v->pid;
	out->dead = v->dead;
	out->asleep = !v->dead && __atomic_load_n(&v->seg->app_armed, __ATOMIC_RELAXED) != 0;
	out->compute_permille = v->dead ? -1 : if_compute(v, &out->movable);
	return 0;
}

int
trd_vni_svc_if_get(const struct trd_vni_svc *s, unsigned int i, struct trd_vni_svc_if_info *out)
{
	const struct vif *v;

	if (s == NULL || out == NULL || i >= s->n_ifs)
		return -EINVAL;
	v = s->ifs[i];
	memset(out, 0, sizeof(*out));
	out->app = v->app;
	out->proc = v->proc;
	out->pid = v->pid;
	out->dead = v->dead;
	out->compute_permille = if_compute(v, NULL);
	out->pool_size = v->pool_size;
	out->tx_msgs = v->tx_msgs;
	out->tx_pkts = v->tx_pkts;
	out->tx_pkts_shared = v->tx_pkts_shared;
	out->tx_bytes = v->tx_bytes;
	out->rx_msgs = v->rx_msgs;
	out->rx_bytes = v->rx_bytes;
	out->naks = v->naks;
	out->staged_bytes = v->staged;
	svc_mu_stats(v, &out->mu_descs, &out->mu_bad_descs);
	if_state(v, out);
	return 0;
}

struct trd_node *
trd_vni_svc_node(const struct trd_vni_svc *s)
{
	return s == NULL ? NULL : s->node;
}

/* ------------------------------------------------------------------------------------------ */
/* create, free */

/* The node's rank in the topology, or -1 if @p conf cannot be served. */
static int
conf_check(const struct trd_vni_svc_conf *conf)
{
	struct sockaddr_un sa;
	int rank;

	if (conf == NULL || conf->node == NULL || conf->topo == NULL || conf->socket == NULL ||
	    strlen(conf->socket) >= sizeof(sa.sun_path) || conf->max_ifs > SVC_MAX_IFS)
		return -1;
	rank = trd_torus_rank(&conf->topo->torus, trd_node_coord(conf->node));
	if (rank < 0 || memcmp(trd_node_torus(conf->node), &conf->topo->torus,
			       sizeof(conf->topo->torus)) != 0) {
		VNI_LOG(ERR, "the node's torus is not the topology's");
		return -1;
	}
	return rank;
}

/* The configuration with its defaults, checked; the owner list copied. 0 or a positive errno. */
static int
conf_set(struct trd_vni_svc *s, const struct trd_vni_svc_conf *conf)
{
	s->conf = *conf;
	if (s->conf.socket_mode == 0)
		s->conf.socket_mode = 0660;
	if (s->conf.max_ifs == 0)
		s->conf.max_ifs = 64;
	if (s->conf.max_pool == 0)
		s->conf.max_pool = 1ULL << 30;
	if (s->conf.staging == 0)
		s->conf.staging = 64u << 20;
	if (s->conf.inline_max == 0)
		s->conf.inline_max = 256;
	if (s->conf.rep_fifo == 0 && s->conf.req_fifo == 0)
		s->conf.rep_fifo = 1;
	if (s->conf.backlog == 0)
		s->conf.backlog = 256;
	if (s->conf.retry_us == 0)
		s->conf.retry_us = 100;
	if (s->conf.noproc_ms == 0)
		s->conf.noproc_ms = 3000;
	if (s->conf.cma_wait_us == 0)
		s->conf.cma_wait_us = SVC_CMA_WAIT_US;
	if (s->conf.cma_hold_us == 0)
		s->conf.cma_hold_us = SVC_HOLD_US;
	if (s->conf.rma_stall_us == 0)
		s->conf.rma_stall_us = SVC_RMA_STALL_US;
	if (s->conf.rma_stall_us > SVC_RMA_STALL_US)
		return EINVAL; /* a target remembers an atomic for 20 such silences and more */
	if (s->conf.hdr_max == 0)
		s->conf.hdr_max = SVC_HDR_MAX;
	if (s->conf.rx_max == 0)
		s->conf.rx_max = SVC_RX_MAX;
	if (s->conf.rx_max > SVC_RX_MAX)
		return EINVAL;
	if (s->conf.max_conns == 0)
		s->conf.max_conns = SVC_N_CONNS;
	if (s->conf.max_conns > SVC_MAX_CONNS)
		return EINVAL;
	if (s->conf.inline_max < TRD_VW_HDR_LEN || s->conf.inline_max > 960 ||
	    s->conf.n_owners > 1024 || (s->conf.n_owners != 0 && conf->owners == NULL))
		return EINVAL;
	if (s->conf.n_owners != 0) {
		s->owners = calloc(s->conf.n_owners, sizeof(*s->owners));
		if (s->owners == NULL)
			return ENOMEM;
		for (unsigned int i = 0; i < s->conf.n_owners; i++) {
			s->owners[i] = conf->owners[i];
			if ((s->owners[i].uid < 0 && s->owners[i].gid < 0) ||
			    s->owners[i].uid > UINT32_MAX || s->owners[i].gid > UINT32_MAX)
				return EINVAL;
		}
	}
	s->conf.owners = NULL; /* the copy is used */
	return 0;
}

/* The node's side: its FIFOs, the largest packet every link carries, and the NICs on a real
 * bus, which DMA from application segments (zero-copy). 0 or a positive errno. */
static int
node_attach(struct trd_vni_svc *s, uint32_t rank)
{
	s->node = s->conf.node;
	s->topo = s->conf.topo;
	s->coord = trd_node_coord(s->node);
	s->rank = rank;
	s->req = trd_inj_fifo(s->node, s->conf.req_fifo);
	s->rep = trd_inj_fifo(s->node, s->conf.rep_fifo);
	s->rf = trd_rec_fifo(s->node, s->conf.rec_fifo);
	if (s->req == NULL || s->rep == NULL || s->rf == NULL || s->req == s->rep) {
		VNI_LOG(ERR, "the node lacks injection FIFOs %u, %u or reception FIFO %u",
			s->conf.req_fifo, s->conf.rep_fifo, s->conf.rec_fifo);
		return EINVAL;
	}
	s->req_free0 = trd_inj_fifo_free_count(s->req);
	s->chunk = 0;
	for (unsigned int i = 0; i < trd_node_n_links(s->node); i++) {
		unsigned int p = trd_link_max_payload(trd_node_link(s->node, i));

		if (p != 0 && (s->chunk == 0 || p < s->chunk))
			s->chunk = p;
	}
	if (s->chunk == 0)
		s->chunk = 1500 - TRD_HDR_LEN;
	/* a WRITE or READ_RESP is one packet: the header and a shared payload (one mbuf) */
	s->rma_chunk = (RTE_MIN(s->chunk, 2048u) - TRD_VW_HDR_LEN) & ~63u;
	for (unsigned int i = 0;
	     i < trd_node_n_links(s->node) && s->n_dma_dev < RTE_DIM(s->dma_dev); i++) {
		int port = trd_link_port(trd_node_link(s->node, i));
		struct rte_eth_dev_info info;
		const struct rte_bus *bus;

		if (port < 0 || rte_eth_dev_info_get((uint16_t)port, &info) != 0 ||
		    info.device == NULL)
			continue;
		bus = rte_dev_bus(info.device);
		if (bus == NULL || strcmp(rte_bus_name(bus), "vdev") == 0)
			continue;
		s->dma_dev[s->n_dma_dev++] = info.device;
	}
	return 0;
}

/* The interface, send and grant tables, and their free lists. 0 or ENOMEM. */
static int
tables_alloc(struct trd_vni_svc *s)
{
	TAILQ_INIT(&s->rr);
	for (unsigned int i = 0; i < RTE_DIM(s->lists); i++)
		TAILQ_INIT(&s->lists[i]);
	TAILQ_INIT(&s->rx_active);
	s->ifs = calloc(s->conf.max_ifs, sizeof(*s->ifs));
	s->tx = calloc(SVC_N_TX, sizeof(*s->tx));
	s->tx_free = calloc(SVC_N_TX, sizeof(*s->tx_free));
	s->n_rx = s->conf.rx_max + 1;
	s->rx = calloc(s->n_rx, sizeof(*s->rx));
	s->rx_free = calloc(s->n_rx, sizeof(*s->rx_free));
	s->conns = calloc(s->conf.max_conns, sizeof(*s->conns));
	if (s->ifs == NULL || s->tx == NULL || s->tx_free == NULL || s->rx == NULL ||
	    s->rx_free == NULL || s->conns == NULL)
		return ENOMEM;
	/* index 0 is never used, so no id is 0 (0 means "no grant") */
	for (uint32_t i = SVC_N_TX - 1; i >= 1; i--) {
		s->tx[i].idx = i;
		s->tx_free[s->n_tx_free++] = i;
	}
	s->rx_new = 1; /* rx entries are set up when first taken (svc_rx_alloc) */
	return 0;
}

/* The staging area, registered as a memory region senders put into. 0 or a positive errno. */
static int
staging_init(struct trd_vni_svc *s)
{
	s->stage_size = RTE_ALIGN_CEIL(s->conf.staging, 4096);
	s->stage_mem = mmap(NULL, s->stage_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->stage_mem == MAP_FAILED) {
		s->stage_mem = NULL;
		return ENOMEM;
	}
	if (trd_vni_heap_init(&s->stage, s->stage_size) != 0)
		return ENOMEM;
	ST(s, STAGING_MAX) = s->stage.size;
	ST(s, RX_MAX) = s->conf.rx_max;
	s->stage_mr =
		trd_mr_register(s->node, s->stage_mem, s->stage_size, TRD_ACCESS_REMOTE_WRITE);
	if (s->stage_mr == NULL)
		return rte_errno;
	return 0;
}

struct trd_vni_svc *
trd_vni_svc_create(const struct trd_vni_svc_conf *conf)
{
	struct trd_vni_svc *s;
	int rc, rank;

	rank = conf_check(conf);
	if (rank < 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->lfd = s->kfd = s->epfd = -1;
	rc = conf_set(s, conf);
	if (rc != 0)
		goto fail;
	rc = node_attach(s, (uint32_t)rank);
	if (rc != 0)
		goto fail;
	svc_rma_init(s);
	rc = tables_alloc(s);
	if (rc != 0)
		goto fail;
	rc = staging_init(s);
	if (rc != 0)
		goto fail;
	rc = svc_ctl_listen(s, conf->socket);
	if (rc != 0)
		goto fail;
	VNI_LOG(INFO, "%s serves node %s (%u,%u,%u): staging %zu B, %u B per packet", s->path,
		trd_node_name(s->node), s->coord.x, s->coord.y, s->coord.z, s->stage_size,
		s->chunk);
	return s;

fail:
	trd_vni_svc_free(s);
	rte_errno = rc;
	return NULL;
}

void
trd_vni_svc_free(struct trd_vni_svc *s)
{
	if (s == NULL)
		return;
	svc_tel_unregister(s);
	svc_rma_fini(s);
	svc_ord_fini(s);
	svc_colls_fini(s);
	free(s->bounce);
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		const uint64_t one = 1;

		if (!v->dead) {
			__atomic_store_n(&v->seg->engine_status, -ECANCELED, __ATOMIC_RELEASE);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (write(v->efd, &one, sizeof(one)) < 0) {
				/* saturated: the application wakes anyway */
			}
			close(v->sock);
		}
		svc_vif_unmap(s, v);
	}
	for (unsigned int i = 0; s->conns != NULL && i < s->conf.max_conns; i++)
		if (s->conns[i].used) {
			close(s->conns[i].fd);
			if (s->conns[i].pidfd >= 0)
				close(s->conns[i].pidfd);
		}
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->path[0] != '\0')
		unlink(s->path);
	if (s->kfd >= 0)
		close(s->kfd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->stage_mr != NULL)
		trd_mr_deregister(s->stage_mr);
	if (s->stage_mem != NULL)
		munmap(s->stage_mem, s->stage_size);
	trd_vni_heap_fini(&s->stage);
	for (unsigned int i = 0; i < s->n_preps; i++)
		trd_payload_free(s->preps[(s->head_preps + i) % s->cap_preps].pay);
	free(s->preps);
	free(s->owners);
	free(s->ifs);
	for (unsigned int i = 0; s->tx != NULL && i < SVC_N_TX; i++)
		trd_payload_free(s->tx[i].pay); /* multicasts still in flight (tx_post.c) */
	free(s->tx);
	free(s->tx_free);
	free(s->rx);
	free(s->rx_free);
	free(s->conns);
	free(s);
}
