/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FI_EP_RDM endpoint: one VNI of the host's toroid-node, opened by fi_endpoint() under
 * the identity the environment gives (FI_TOROID_APP, FI_TOROID_PROC or the launcher's rank),
 * or under any free process number the engine picks (TRD_VNI_ANY) when there is none or this
 * process's first endpoint holds it already (docs/libfabric.md).
 *
 * This file holds the endpoint itself: its opening and closing, bindings, control, names,
 * options and fi_cancel. Messages and tagged messages are in tfi_msg.c, one-sided operations
 * in tfi_rma.c, progress and completions in tfi_progress.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfi.h"

/* ---- posting: checks shared by tfi_msg.c and tfi_rma.c ---- */

int
tfi_post_check(struct tfi_ep *ep)
{
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (ep->dead)
		return -FI_ECONNRESET;
	return 0;
}

bool
tfi_tx_comp(const struct tfi_ep *ep, uint64_t flags)
{
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

/* ---- CM: names ---- */

static int
ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	size_t room;

	size_t need = sizeof(ep->name);

	if (addrlen == NULL)
		return -FI_EINVAL;
	/* addrlen is read and written through the kernel: unmapped is -FI_EFAULT */
	if (tfi_copy_in(&room, addrlen, sizeof(room)) != 0 ||
	    tfi_copy_out(addrlen, &need, sizeof(need)) != 0)
		return -FI_EFAULT;
	if (addr == NULL || room < sizeof(ep->name))
		return -FI_ETOOSMALL;
	return tfi_copy_out(addr, &ep->name, sizeof(ep->name));
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = tfi_no_setname, /* the name is the VNI's (app, proc): set by environment */
	.getname = ep_getname,
	.getpeer = tfi_no_getpeer,
	.connect = tfi_no_connect,
	.listen = tfi_no_listen,
	.accept = tfi_no_accept,
	.reject = tfi_no_reject,
	.shutdown = tfi_no_shutdown,
	.join = tfi_join,
};

/* ---- endpoint ops ---- */

static int
ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	return level == FI_OPT_ENDPOINT ? -FI_ENOPROTOOPT : -FI_EINVAL;
}

static int
ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	return level == FI_OPT_ENDPOINT ? -FI_ENOPROTOOPT : -FI_EINVAL;
}

/* fi_cancel: withdraw the posted receive with @p context (trd_vni_cancel). It completes with
 * an FI_ECANCELED error entry, or normally if a message matched it first. Sends cannot be
 * withdrawn: -FI_ENOENT, as for a context nothing is posted with. */
static ssize_t
ep_cancel(fid_t fid, void *context)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	ssize_t rc = -FI_ENOENT;

	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled || ep->dead) {
		rc = ep->enabled ? -FI_ECONNRESET : -FI_EOPBADSTATE;
		goto out;
	}
	for (unsigned int i = 0; i < tfi_op_total(ep); i++) {
		struct tfi_op *op = tfi_op_nth(ep, i);
		int r;

		if (op->kind != TFI_OP_RECV || op->peek || op->rdata || op->context != context)
			continue;
		r = tfi_self_cancel(ep, op); /* from itself: kept by tfi_self.c */
		if (r == 0)
			r = tfi_rxq_cancel(ep, op); /* held: never given to the VNI */
		if (r != 0) {
			rc = r < 0 ? r : 0;
			if (r < 0)
				tfi_ep_progress(ep);
			break;
		}
		r = trd_vni_cancel(ep->vni, (uint64_t)(uintptr_t)op);
		op->ucancel = op->ucancel || r == 0;
		rc = r == 0 ? 0 : r == -EAGAIN ? -FI_EAGAIN : r == -ENOENT ? -FI_ENOENT : r;
		break;
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t
ep_size_left(struct fid_ep *e)
{
	return -FI_ENOSYS; /* deprecated in libfabric 1.x */
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = tfi_no_tx_ctx,
	.rx_ctx = tfi_no_rx_ctx,
	.rx_size_left = ep_size_left,
	.tx_size_left = ep_size_left,
};

static int
ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	struct tfi_cq *cq;
	struct tfi_av *av;
	int rc = 0;

	if (bfid == NULL)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled) {
		rc = -FI_EOPBADSTATE;
		goto out;
	}
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (!tfi_is_av(bfid)) {
			rc = -FI_EINVAL; /* not one of ours */
			break;
		}
		av = container_of(bfid, struct tfi_av, av.fid);
		if (av->dom != ep->dom || ep->av != NULL) {
			rc = -FI_EINVAL;
			break;
		}
		ep->av = av;
		av->refs++;
		break;
	case FI_CLASS_CQ:
		if (!tfi_is_cq(bfid)) {
			rc = -FI_EINVAL;
			break;
		}
		cq = container_of(bfid, struct tfi_cq, cq.fid);
		if (cq->dom != ep->dom) {
			rc = -FI_EINVAL;
			break;
		}
		if ((flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
		    !(flags & (FI_TRANSMIT | FI_RECV))) {
			rc = -FI_EBADFLAGS;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->txcq != NULL) ||
		    ((flags & FI_RECV) && ep->rxcq != NULL)) {
			rc = -FI_EINVAL;
			break;
		}
		rc = tfi_cq_attach(cq, ep);
		if (rc == 0)
			rc = tfi_cq_watch(cq, trd_vni_fd(ep->vni));
		if (rc != 0)
			break;
		if (flags & FI_TRANSMIT) {
			ep->txcq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rxcq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		break;
	case FI_CLASS_EQ:
		/* RDM over the VNI raises no connection events */
		rc = tfi_is_eq(bfid) ? 0 : -FI_EINVAL;
		if (rc == 0) /* but FI_JOIN_COMPLETE (tfi_coll.c) */
			ep->eq = container_of(bfid, struct fid_eq, fid);
		break;
	case FI_CLASS_CNTR:
		rc = tfi_cntr_bind(ep, bfid, flags);
		break;
	default:
		rc = -FI_EINVAL; /* stx/srx contexts are not offered */
		break;
	}
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static int
ep_control(struct fid *fid, int command, void *arg)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	uint64_t *flags = arg;
	int rc = 0;

	pthread_mutex_lock(&ep->dom->lock);
	switch (command) {
	case FI_ENABLE:
		if (ep->av == NULL)
			rc = -FI_ENOAV;
		else if (ep->txcq == NULL && ep->rxcq == NULL)
			rc = -FI_ENOCQ;
		else
			ep->enabled = true;
		if (rc == 0) /* receives of remote CQ data notices (tfi_txq.c) */
			tfi_rdata_enable(ep);
		break;
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		if (flags == NULL || ((*flags & FI_TRANSMIT) != 0) == ((*flags & FI_RECV) != 0)) {
			rc = -FI_EINVAL;
			break;
		}
		if (command == FI_GETOPSFLAG)
			*flags = (*flags & FI_TRANSMIT) ? (ep->tx_op_flags | FI_TRANSMIT)
							: (ep->rx_op_flags | FI_RECV);
		else if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~(uint64_t)FI_TRANSMIT;
		else
			ep->rx_op_flags = *flags & ~(uint64_t)FI_RECV;
		break;
	default:
		rc = -FI_ENOSYS;
		break;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

/* The identities this process's endpoints hold. A second endpoint whose environment names
 * one of them (Open MPI's OFI BTL next to its OFI MTL, both on the rank) asks for any free
 * process number instead: the peers learn its name from fi_getname(). */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trd_vni_addr *held;
static size_t n_held, cap_held;

static bool
held_has(uint32_t app, uint32_t proc)
{
	for (size_t i = 0; i < n_held; i++)
		if (held[i].app == app && held[i].proc == proc)
			return true;
	return false;
}

/* Under held_lock. 0 or -FI_ENOMEM. */
static int
held_add(struct trd_vni_addr a)
{
	if (n_held == cap_held) {
		size_t cap = cap_held ? 2 * cap_held : 8;
		struct trd_vni_addr *t = realloc(held, cap * sizeof(*t));

		if (t == NULL)
			return -FI_ENOMEM;
		held = t;
		cap_held = cap;
	}
	held[n_held++] = a;
	return 0;
}

static void
held_del(uint32_t app, uint32_t proc)
{
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < n_held; i++)
		if (held[i].app == app && held[i].proc == proc) {
			held[i] = held[--n_held];
			break;
		}
	pthread_mutex_unlock(&held_lock);
}

static int
ep_close(struct fid *fid)
{
	struct tfi_ep *ep = container_of(fid, struct tfi_ep, ep.fid);
	struct tfi_domain *d = ep->dom;

	pthread_mutex_lock(&d->lock);
	if (ep->n_mc > 0) { /* close the joined groups first */
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	if (ep->txcq != NULL)
		tfi_cq_detach(ep->txcq, ep);
	if (ep->rxcq != NULL && ep->rxcq != ep->txcq)
		tfi_cq_detach(ep->rxcq, ep);
	if (ep->av != NULL)
		ep->av->refs--;
	for (struct tfi_ep **pp = &d->eps; *pp != NULL; pp = &(*pp)->dnext)
		if (*pp == ep) {
			*pp = ep->dnext;
			break;
		}
	tfi_cntr_ep_close(ep);
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	trd_vni_close(ep->vni); /* the engine drops what is still posted, and claimed */
	held_del(ep->name.app, ep->name.proc);
	tfi_self_close(ep);
	free(ep->claims);
	/* injects still in flight: dropped with the interface */
	for (unsigned int i = 0; i < tfi_op_total(ep); i++)
		free(tfi_op_nth(ep, i)->heap);
	for (unsigned int k = 0; k < ep->n_more; k++)
		free(ep->more[k]);
	free(ep->more);
	free(ep->ops);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = tfi_no_ops_open,
};

/* The first of the launcher's variables @p a, @p b that holds a number >= @p min below
 * TRD_VNI_ANY, or -1. */
static long
env_launcher(const char *a, const char *b, long min)
{
	const char *const names[] = {a, b};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *s = getenv(names[i]);
		char *end;
		long v;

		if (s == NULL || *s == '\0')
			continue;
		v = strtol(s, &end, 10);
		if (*end == '\0' && v >= min && v < (long)TRD_VNI_ANY)
			return v;
	}
	return -1;
}

/* The process's id: FI_TOROID_PROC, else the launcher's rank. -1 if none. */
static long
env_proc(void)
{
	if (tfi_params.proc >= 0)
		return tfi_params.proc;
	return env_launcher("OMPI_COMM_WORLD_RANK", "PMI_RANK", 0);
}

/* The launcher's world size ($OMPI_COMM_WORLD_SIZE, $PMI_SIZE), or 0. */
static long
env_world_size(void)
{
	long n = env_launcher("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);

	return n < 0 ? 0 : n;
}

/* Why an endpoint could not attach (@p rc): logged, and for an application's messaging
 * endpoint (MPI's MTL: tagged) that the engine refused or that found no engine, said on stderr
 * too when libfabric logs nothing (Open MPI shows only the errno: "Cannot assign requested
 * address", "No such file or directory"). The OFI BTL's untagged endpoint, refused when the
 * topology places one process per rank, steps aside quietly. */
static void
attach_failed(const struct trd_vni_conf *conf, const struct fi_info *info, int rc)
{
	const char *path = conf->socket                  ? conf->socket
			   : getenv("TOROID_VNI_SOCKET") ? getenv("TOROID_VNI_SOCKET")
							 : TRD_VNI_DEFAULT_SOCKET;
	const char *why = trd_vni_open_error();
	char who[16] = "any";

	if (conf->proc != TRD_VNI_ANY)
		snprintf(who, sizeof(who), "%u", conf->proc);
	FI_WARN(&tfi_prov, FI_LOG_EP_CTRL, "cannot attach %u:%s to toroid-node at %s: %s%s%s\n",
		conf->app, who, path, strerror(-rc), why[0] ? ": " : "", why);
	if (!(info->caps & FI_TAGGED) || fi_log_enabled(&tfi_prov, FI_LOG_WARN, FI_LOG_EP_CTRL))
		return;
	if (why[0])
		fprintf(stderr, "libtoroid-fi: cannot attach %u:%s to toroid-node: %s\n", conf->app,
			who, why);
	else
		fprintf(stderr,
			"libtoroid-fi: cannot attach %u:%s to toroid-node at %s: %s (is toroid-node "
			"serving there? FI_TOROID_SOCKET or TOROID_VNI_SOCKET names its "
			"--vni-socket)\n",
			conf->app, who, path, strerror(-rc));
}

int
tfi_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp, void *context)
{
	struct trd_vni_conf conf;
	struct tfi_domain *d;
	struct tfi_ep *ep;
	uint64_t ep_caps;
	long proc;
	int rc;

	if (domain == NULL || info == NULL || epp == NULL || info->ep_attr == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(epp) != 0)
		return -FI_EFAULT;
	ep_caps = info->caps;
	if (info->ep_attr->type != FI_EP_RDM &&
	    (info->ep_attr->type != FI_EP_DGRAM || !tfi_params.dgram))
		return -FI_EINVAL;
	if (info->caps & ~(info->ep_attr->type == FI_EP_DGRAM ? TFI_DGRAM_CAPS : TFI_ALL_CAPS))
		return -FI_EOPNOTSUPP;
	d = container_of(domain, struct tfi_domain, dom);
	proc = env_proc();
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return -FI_ENOMEM;
	memset(&conf, 0, sizeof(conf));
	conf.socket = tfi_params.socket;
	conf.app = tfi_params.app >= 0 ? (uint32_t)tfi_params.app : 1;
	conf.pool_size = tfi_params.pool_size;
	conf.n_send = (unsigned int)tfi_params.n_ctx;
	conf.n_recv = (unsigned int)tfi_params.n_ctx;
	conf.short_max = TRD_VNI_SHORT_MAX;
	conf.connect_timeout_ms = (unsigned int)tfi_params.connect_ms;
	conf.ordered = info->ep_attr->type == FI_EP_RDM; /* FI_ORDER_SAS; DGRAM: none */
	conf.wait_spin_us = tfi_params.wait_spin_us == 0 ? -1 : tfi_params.wait_spin_us;
	pthread_mutex_lock(&held_lock);
	/* The launcher's rank r of n: endpoint k of the process is r + k * n, so the ranks'
	 * second endpoints (the OFI BTL's beside the OFI MTL's) never take another rank's
	 * number, whichever opens first. An endpoint without messages (FI_RMA/FI_ATOMIC only:
	 * the OFI BTL's) never takes the rank itself, which stays for the one that carries
	 * messages (the MTL's): with a topology of one process per rank it is refused, and the
	 * BTL steps aside while two-sided MPI runs. FI_TOROID_PROC: the first endpoint with
	 * messages has it, others take any free number; nothing at all: any free number. */
	conf.proc = TRD_VNI_ANY;
	if (proc >= 0) {
		bool msgs = ep_caps == 0 || (ep_caps & (FI_MSG | FI_TAGGED));
		long n = tfi_params.proc < 0 ? env_world_size() : 0;
		long p = proc;

		if (!msgs)
			p = n > 0 ? proc + n : -1; /* FI_TOROID_PROC: any free number */
		for (; p >= 0 && p < (long)TRD_VNI_ANY; p += n) {
			if (!held_has(conf.app, (uint32_t)p)) {
				conf.proc = (uint32_t)p;
				break;
			}
			if (n <= 0)
				break;
		}
	}
	ep->vni = trd_vni_open(&conf);
	if (ep->vni != NULL) {
		trd_vni_info(ep->vni, &ep->info);
		if (held_add(ep->info.self) != 0) {
			trd_vni_close(ep->vni);
			ep->vni = NULL;
			errno = ENOMEM;
		}
	}
	pthread_mutex_unlock(&held_lock);
	if (ep->vni == NULL) {
		rc = errno ? -errno : -FI_EOTHER;
		attach_failed(&conf, info, rc);
		free(ep);
		return rc;
	}
	tfi_place_once(ep->vni);
	if (conf.proc == TRD_VNI_ANY)
		FI_INFO(&tfi_prov, FI_LOG_EP_CTRL, "attached as %u:%u (any free process)\n",
			ep->info.self.app, ep->info.self.proc);
	/* the engine may grant a smaller pool than asked (--max-pool) */
	ep->max_msg = tfi_max_msg_size();
	ep->pool_msg = ep->info.pool_size / 4 < tfi_pool_msg_size() ? ep->info.pool_size / 4
								    : tfi_pool_msg_size();
	ep->n_ops = ep->info.n_send + ep->info.n_recv;
	ep->ops = calloc(ep->n_ops, sizeof(*ep->ops));
	if (ep->ops == NULL) {
		trd_vni_close(ep->vni);
		held_del(ep->info.self.app, ep->info.self.proc);
		free(ep);
		return -FI_ENOMEM;
	}
	for (unsigned int i = ep->n_ops; i-- > 0;) {
		ep->ops[i].next = ep->free_ops;
		ep->free_ops = &ep->ops[i];
	}
	ep->name.magic = TFI_NAME_MAGIC;
	ep->name.app = ep->info.self.app; /* the number the engine gave: peers learn it here */
	ep->name.proc = ep->info.self.proc;
	memcpy(ep->name.node, ep->info.node, 3);
	ep->name.version = 1;
	ep->dom = d;
	ep->type = info->ep_attr->type;
	ep->caps = info->caps ? info->caps : ep->type == FI_EP_DGRAM ? TFI_DGRAM_CAPS : TFI_CAPS;
	ep->tx_op_flags = info->tx_attr != NULL ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr != NULL ? info->rx_attr->op_flags : 0;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &tfi_msg_ops;
	ep->ep.tagged = &tfi_tagged_ops;
	ep->ep.rma = (ep->caps & FI_RMA) ? &tfi_rma_ops : &tfi_no_rma_ops;
	ep->ep.atomic = (ep->caps & FI_ATOMIC) ? &tfi_atomic_ops : &tfi_no_atomic_ops;
	ep->ep.collective = (ep->caps & FI_COLLECTIVE) ? &tfi_coll_ops : &tfi_no_collective_ops;
	pthread_mutex_lock(&d->lock);
	/* the domain's regions with remote access, reachable through this endpoint too */
	rc = tfi_mr_attach_ep(d, ep);
	if (rc != 0) {
		pthread_mutex_unlock(&d->lock);
		trd_vni_close(ep->vni);
		free(ep->ops);
		free(ep);
		return rc;
	}
	ep->dnext = d->eps;
	d->eps = ep;
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*epp = &ep->ep;
	return 0;
}
