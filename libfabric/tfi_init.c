/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's entry point (fi_prov_ini), its parameters, fi_getinfo with our own hint
 * matching, the fabric object and a minimal event queue.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tfi.h"

static int tfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		       const struct fi_info *hints, struct fi_info **info);
static int tfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
static void tfi_cleanup(void);

struct fi_provider tfi_prov = {
	.version = TFI_PROV_VERSION,
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.name = TFI_NAME,
	.getinfo = tfi_getinfo,
	.fabric = tfi_fabric,
	.cleanup = tfi_cleanup,
};

struct tfi_params tfi_params = {
	.socket = NULL,
	.app = -1,
	.proc = -1,
	.pool_size = 64u << 20,
	.n_ctx = 256,
	.connect_ms = 0,
	.yield = TFI_YIELD_AUTO,
	.cpus = 1,
	.engine_here = -1,
	.bounce_max = 131072,
	.wait_spin_us = TRD_VNI_WAIT_SPIN_DEFAULT_US,
	.trust_us = TFI_TRUST_DEFAULT_US,
	.place = true,
	.inject_max = TFI_INJECT_DEFAULT,
	.place_adapt = true,
	.compute = UINT_MAX,
	.self = true,
};

/* A message in one buffer goes between the application's memory and the engine whatever its
 * length (as the engine's one-sided ops, up to 1 GiB); one gathered from or scattered to
 * several iovs goes through the pool and is limited to tfi_pool_msg_size(). */
size_t
tfi_max_msg_size(void)
{
	return (size_t)1 << 30;
}

/* Through the pool: a quarter of it per message leaves room for a posted receive and a send
 * of the largest size at once, with slack. */
size_t
tfi_pool_msg_size(void)
{
	return tfi_params.pool_size / 4;
}

/* inject_size: at least the VNI's inline size (copied by trd_vni_send), above it copied into
 * the pool by the provider (tfi_msg.c, tfi_rma.c) */
size_t
tfi_inject_size(void)
{
	return tfi_params.inject_max;
}

FI_EXT_INI
{
	char *s = NULL;
	cpu_set_t cpus;
	size_t sz;
	int v;

	fi_param_define(&tfi_prov, "socket", FI_PARAM_STRING,
			"toroid-node's VNI socket (default: $TOROID_VNI_SOCKET, else %s)",
			TRD_VNI_DEFAULT_SOCKET);
	fi_param_define(&tfi_prov, "app", FI_PARAM_INT,
			"application id of this process in the topology file (default 1)");
	fi_param_define(&tfi_prov, "proc", FI_PARAM_INT,
			"process id of this process's first endpoint in the topology file "
			"(default: $OMPI_COMM_WORLD_RANK, else $PMI_RANK, else any free one); "
			"further endpoints of the process get any free one");
	fi_param_define(&tfi_prov, "pool_size", FI_PARAM_SIZE_T,
			"VNI buffer pool bytes per endpoint; a message in several iovs is "
			"limited to a quarter of it (default 64 MiB)");
	fi_param_define(&tfi_prov, "ctx", FI_PARAM_INT,
			"VNI send and receive contexts per endpoint: tx and rx queue sizes "
			"(default 256, max 4096)");
	fi_param_define(&tfi_prov, "connect_ms", FI_PARAM_INT,
			"keep trying to reach toroid-node this many ms at fi_endpoint (default 0)");

	fi_param_define(&tfi_prov, "yield", FI_PARAM_STRING,
			"auto | always | never: whether an fi_cq_read or fi_cntr_read that keeps "
			"finding nothing, with operations outstanding, gives the CPU away "
			"(sched_yield); it never sleeps. auto (default): at once on toroid-node's "
			"CPU, or when its processes outnumber the CPUs this process may run on by "
			"at most one per CPU; after a short spin when more do, or its thread or "
			"other programs crowd them; always: after the spin");
	fi_param_define(&tfi_prov, "job_key", FI_PARAM_STRING,
			"the job secret (at least 16 characters, the same in every process of the "
			"job) that mixes requested memory keys; default: domain_attr->auth_key, "
			"else Open MPI's OMPI_MCA_orte_precondition_transports; without one, "
			"requested keys are refused (-FI_ENOKEY)");
	fi_param_define(&tfi_prov, "bounce_max", FI_PARAM_SIZE_T,
			"messages up to this many bytes (default 131072) are copied through the "
			"endpoint's buffer pool (one memcpy on each side); longer ones are read "
			"and written by the engine in the application's memory (system calls on "
			"the engine's thread); 0: only short messages go through the pool");
	fi_param_define(&tfi_prov, "inject_max", FI_PARAM_SIZE_T,
			"inject_size: sends and RMA writes up to this many bytes may be injected "
			"(fi_inject: the buffer is free on return, no completion); above %d B "
			"their bytes are copied into the endpoint's pool when posted (default %d, "
			"%d .. %d)",
			TRD_VNI_SHORT_MAX, TFI_INJECT_DEFAULT, TRD_VNI_SHORT_MAX, TFI_INJECT_LIMIT);
	fi_param_define(&tfi_prov, "self", FI_PARAM_BOOL,
			"messages an endpoint sends to itself are matched and copied in the "
			"provider, as Open MPI's self BTL does (default 1; 0: through the engine "
			"like any other)");
	fi_param_define(&tfi_prov, "dgram", FI_PARAM_BOOL,
			"offer FI_EP_DGRAM endpoints too (default 0: libfabric then layers "
			"ofi_rxd over them and lists toroid;ofi_rxd before toroid's own RDM)");

	fi_param_define(&tfi_prov, "wait_spin_us", FI_PARAM_INT,
			"fi_cq_sread, fi_cq_sreadfrom and fi_cntr_wait (and the VNI's own "
			"trd_vni_wait) poll this many microseconds, yielding the CPU between "
			"looks, before they sleep on the eventfd (default %d; -1 or 0: sleep at "
			"once; at most %d); a wait that finds the CPU wanted by other processes "
			"sleeps at once",
			TRD_VNI_WAIT_SPIN_DEFAULT_US, TRD_VNI_WAIT_SPIN_MAX_US);
	fi_param_define(&tfi_prov, "trust_us", FI_PARAM_INT,
			"the provider's copies from and into application memory (one iov, at "
			"most 17 pages) go through the kernel (a bad buffer is -FI_EFAULT, not a "
			"crash) unless the kernel copied each of those pages successfully within "
			"this many microseconds: then a memcpy (default %d; 0: every copy through "
			"the kernel; at most %d)",
			TFI_TRUST_DEFAULT_US, TFI_TRUST_MAX_US);

	fi_param_define(
		&tfi_prov, "place", FI_PARAM_STRING,
		"auto | fixed | off: a process that no one bound (its affinity is every CPU "
		"it may use) moves off the CPUs of toroid-node's polling thread at its "
		"first endpoint, if another CPU is left, and with auto (the default) gets "
		"them back while it computes more than it waits and no other program's "
		"thread waits for a CPU; fixed never gives them back; a rank that "
		"mpirun's default binding put on the engine's CPU moves to the others; a "
		"binding the user or a launcher option asked for is never changed");

	if (fi_param_get_str(&tfi_prov, "socket", &s) == 0 && s != NULL && s[0] != '\0')
		tfi_params.socket = s;
	if (fi_param_get_int(&tfi_prov, "app", &v) == 0 && v >= 0)
		tfi_params.app = v;
	if (fi_param_get_int(&tfi_prov, "proc", &v) == 0 && v >= 0)
		tfi_params.proc = v;
	if (fi_param_get_size_t(&tfi_prov, "pool_size", &sz) == 0 && sz >= (1u << 20))
		tfi_params.pool_size = sz;
	if (fi_param_get_int(&tfi_prov, "ctx", &v) == 0 && v >= 1 && v <= 4096)
		tfi_params.n_ctx = v;
	if (fi_param_get_int(&tfi_prov, "connect_ms", &v) == 0 && v >= 0)
		tfi_params.connect_ms = v;
	s = NULL;
	if (fi_param_get_str(&tfi_prov, "yield", &s) == 0 && s != NULL) {
		if (strcmp(s, "always") == 0 || strcmp(s, "1") == 0)
			tfi_params.yield = TFI_YIELD_ALWAYS;
		else if (strcmp(s, "never") == 0 || strcmp(s, "0") == 0)
			tfi_params.yield = TFI_YIELD_NEVER;
		else if (strcmp(s, "auto") != 0)
			FI_WARN(&tfi_prov, FI_LOG_CORE,
				"FI_TOROID_YIELD=%s: expected auto, always or never; auto\n", s);
	}
	s = NULL;
	if (fi_param_get_str(&tfi_prov, "place", &s) == 0 && s != NULL) {
		if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0 || strcmp(s, "never") == 0)
			tfi_params.place = false;
		else if (strcmp(s, "fixed") == 0)
			tfi_params.place_adapt = false;
		else if (strcmp(s, "auto") != 0 && strcmp(s, "1") != 0)
			FI_WARN(&tfi_prov, FI_LOG_CORE,
				"FI_TOROID_PLACE=%s: expected auto, fixed or off; auto\n", s);
	}
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0)
		tfi_params.cpus = (unsigned int)CPU_COUNT(&cpus);
	if (fi_param_get_size_t(&tfi_prov, "bounce_max", &sz) == 0)
		tfi_params.bounce_max = sz;
	if (fi_param_get_size_t(&tfi_prov, "inject_max", &sz) == 0)
		tfi_params.inject_max = sz < TRD_VNI_SHORT_MAX  ? TRD_VNI_SHORT_MAX
					: sz > TFI_INJECT_LIMIT ? TFI_INJECT_LIMIT
								: sz;
	if (fi_param_get_bool(&tfi_prov, "dgram", &v) == 0)
		tfi_params.dgram = v != 0;
	if (fi_param_get_bool(&tfi_prov, "self", &v) == 0)
		tfi_params.self = v != 0;
	if (fi_param_get_int(&tfi_prov, "wait_spin_us", &v) == 0 && v >= -1 &&
	    v <= TRD_VNI_WAIT_SPIN_MAX_US)
		tfi_params.wait_spin_us = v < 0 ? 0 : v;
	if (fi_param_get_int(&tfi_prov, "trust_us", &v) == 0 && v >= 0 && v <= TFI_TRUST_MAX_US)
		tfi_params.trust_us = v;
	return &tfi_prov;
}

static void
tfi_cleanup(void)
{
}

/* VNI completion status (negative errno) to a positive FI_E* code. */
int
tfi_errno(int vni_status)
{
	switch (vni_status) {
	case 0:
		return 0;
	case -EMSGSIZE:
		return FI_ETRUNC;
	case -ECONNREFUSED:
		return FI_ECONNREFUSED;
	case -ECONNRESET:
		return FI_ECONNRESET;
	case -EHOSTUNREACH:
		return FI_EHOSTUNREACH;
	case -ECANCELED:
		return FI_ECANCELED;
	case -ENOMSG:
		return FI_ENOMSG;
	case -EINVAL:
		return FI_EINVAL;
	case -EACCES:
		return FI_EACCES; /* one-sided: bad key, access right or range at the target */
	case -EFAULT:
		return FI_EFAULT; /* one-sided: the local buffer is not readable or writable */
	case -ETIMEDOUT:
		return FI_ETIMEDOUT; /* an atomic whose request or answer was lost */
	case -EBUSY:
		return FI_EBUSY; /* a collective of the group in flight on the node */
	case -EPERM:
		return FI_EPERM; /* one-sided: the engine may not reach the memory (ptrace check) */
	default:
		return FI_EOTHER;
	}
}

/* ---- fi_getinfo: our own hint matching ---- */

#define NOMATCH(why)                                                                               \
	do {                                                                                       \
		FI_INFO(&tfi_prov, FI_LOG_CORE, "hints not supported: %s\n", why);                 \
		return false;                                                                      \
	} while (0)

static bool
name_ok(const void *addr, size_t len)
{
	const struct tfi_name *n = addr;

	return len == sizeof(*n) && n->magic == TFI_NAME_MAGIC && n->version == 1;
}

static bool
tx_ok(const struct fi_tx_attr *a)
{
	if (a == NULL)
		return true;
	if (a->caps & ~TFI_ALL_CAPS)
		NOMATCH("tx caps");
	if (a->msg_order & ~(uint64_t)FI_ORDER_SAS)
		NOMATCH("tx msg_order (send after send only)");
	if (a->comp_order & ~(uint64_t)FI_ORDER_NONE)
		NOMATCH("tx comp_order");
	if (a->inject_size > tfi_inject_size())
		NOMATCH("inject_size");
	if (a->size > (size_t)tfi_params.n_ctx)
		NOMATCH("tx size");
	if (a->iov_limit > TFI_IOV_LIMIT)
		NOMATCH("tx iov_limit");
	if (a->rma_iov_limit > 1)
		NOMATCH("rma_iov_limit (1)");
	return true;
}

static bool
rx_ok(const struct fi_rx_attr *a)
{
	if (a == NULL)
		return true;
	if (a->caps & ~TFI_CAPS)
		NOMATCH("rx caps");
	if (a->msg_order & ~(uint64_t)FI_ORDER_SAS)
		NOMATCH("rx msg_order (send after send only)");
	if (a->comp_order & ~(uint64_t)FI_ORDER_NONE)
		NOMATCH("rx comp_order");
	if (a->size > (size_t)tfi_params.n_ctx)
		NOMATCH("rx size");
	if (a->iov_limit > TFI_IOV_LIMIT)
		NOMATCH("rx iov_limit");
	return true;
}

static bool
hints_ok(const struct fi_info *h)
{
	const struct fi_ep_attr *ep = h->ep_attr;
	const struct fi_domain_attr *d = h->domain_attr;
	const struct fi_fabric_attr *f = h->fabric_attr;

	if (h->caps & ~TFI_ALL_CAPS)
		NOMATCH("caps");
	if (h->addr_format != FI_FORMAT_UNSPEC)
		NOMATCH("addr_format (toroid addresses are FI_FORMAT_UNSPEC, 16 bytes)");
	if (h->src_addr != NULL && !name_ok(h->src_addr, h->src_addrlen))
		NOMATCH("src_addr");
	if (h->dest_addr != NULL && !name_ok(h->dest_addr, h->dest_addrlen))
		NOMATCH("dest_addr");
	if (h->nic != NULL)
		NOMATCH("nic");
	if (ep != NULL) {
		if (ep->type != FI_EP_UNSPEC && ep->type != FI_EP_RDM && ep->type != FI_EP_DGRAM)
			NOMATCH("ep type (FI_EP_RDM and FI_EP_DGRAM only)");
		if (ep->type == FI_EP_DGRAM && (h->caps & ~TFI_DGRAM_CAPS))
			NOMATCH("caps of FI_EP_DGRAM (untagged messages)");
		if (ep->protocol != FI_PROTO_UNSPEC)
			NOMATCH("protocol");
		if (ep->max_msg_size > tfi_max_msg_size())
			NOMATCH("max_msg_size");
		if (ep->msg_prefix_size > 0)
			NOMATCH("msg_prefix_size");
		if (ep->max_order_raw_size || ep->max_order_war_size || ep->max_order_waw_size)
			NOMATCH("RMA ordering");
		if (ep->tx_ctx_cnt > 1 || ep->rx_ctx_cnt > 1)
			NOMATCH("several tx/rx contexts");
		if (ep->mem_tag_format & ~TFI_TAG_BITS)
			NOMATCH("mem_tag_format (63 tag bits)");
		if (ep->auth_key_size > 0)
			NOMATCH("auth_key");
	}
	if (d != NULL) {
		if (d->name != NULL && strcmp(d->name, TFI_NAME) != 0)
			NOMATCH("domain name");
		if (d->data_progress == FI_PROGRESS_AUTO)
			NOMATCH("data_progress AUTO (completions are made by fi_cq_read)");
		if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP &&
		    d->av_type != FI_AV_TABLE)
			NOMATCH("av_type");
		if (d->caps & ~TFI_DOMAIN_CAPS)
			NOMATCH("domain caps");
		if (d->cq_data_size > TFI_CQ_DATA_SIZE)
			NOMATCH("cq_data_size (8 bytes)");
		if (d->cntr_cnt > TFI_CNTR_MAX)
			NOMATCH("cntr_cnt");
		if (d->auth_key_size > 0 && (d->auth_key == NULL || d->auth_key_size < 16))
			NOMATCH("auth_key (the job secret: at least 16 bytes)");
	}
	if (f != NULL && f->name != NULL && strcmp(f->name, TFI_NAME) != 0)
		NOMATCH("fabric name");
	return tx_ok(h->tx_attr) && rx_ok(h->rx_attr);
}

/* Addresses in hints are at most this long (a struct sockaddr_storage; ours are 16 B). */
#define TFI_HINT_ADDR_MAX 128

/* Copy an address of the hints: -FI_EINVAL if it is too long or cannot be read. */
static int
dup_addr(void **dst, size_t *dlen, const void *src, size_t len)
{
	if (src == NULL)
		return 0;
	if (len > TFI_HINT_ADDR_MAX)
		return -FI_EINVAL;
	*dst = malloc(len ? len : 1);
	if (*dst == NULL)
		return -FI_ENOMEM;
	if (tfi_copy_in(*dst, src, len) != 0) {
		free(*dst);
		*dst = NULL;
		return -FI_EINVAL;
	}
	*dlen = len;
	return 0;
}

static int make_info(enum fi_ep_type type, const struct fi_info *hints, struct fi_info **info);

/* One answer per endpoint type the hints allow: FI_EP_RDM, then FI_EP_DGRAM. */
static int
tfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
	    const struct fi_info *hints, struct fi_info **info)
{
	enum fi_ep_type want = FI_EP_UNSPEC;
	struct fi_info *rdm = NULL, *dgram = NULL;
	int rc = 0;

	*info = NULL;
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)))
		return -FI_ENODATA; /* the MR mode bits we report need 1.5 */
	if (node != NULL || service != NULL) {
		FI_INFO(&tfi_prov, FI_LOG_CORE, "node/service names are not resolved\n");
		return -FI_ENODATA;
	}
	if (hints != NULL) {
		if (!hints_ok(hints))
			return -FI_ENODATA;
		if (hints->ep_attr != NULL)
			want = hints->ep_attr->type;
	}
	if (want != FI_EP_DGRAM)
		rc = make_info(FI_EP_RDM, hints, &rdm);
	if (rc == 0 && want != FI_EP_RDM && tfi_params.dgram &&
	    (hints == NULL || !(hints->caps & ~TFI_DGRAM_CAPS)) &&
	    (hints == NULL || hints->ep_attr == NULL || hints->ep_attr->mem_tag_format == 0) &&
	    (hints == NULL || hints->tx_attr == NULL || hints->tx_attr->msg_order == 0) &&
	    (hints == NULL || hints->rx_attr == NULL || hints->rx_attr->msg_order == 0))
		rc = make_info(FI_EP_DGRAM, hints, &dgram);
	if (rc != 0) {
		fi_freeinfo(rdm);
		fi_freeinfo(dgram);
		return rc;
	}
	if (rdm != NULL)
		rdm->next = dgram;
	*info = rdm != NULL ? rdm : dgram;
	return *info != NULL ? 0 : -FI_ENODATA;
}

static int
make_info(enum fi_ep_type type, const struct fi_info *hints, struct fi_info **info)
{
	bool dg = type == FI_EP_DGRAM;
	uint64_t caps = dg ? TFI_DGRAM_CAPS : TFI_CAPS;
	struct fi_info *fi;
	int rc = 0;

	if (hints != NULL && hints->caps)
		caps = hints->caps | TFI_DOMAIN_CAPS;
	fi = fi_allocinfo();
	if (fi == NULL)
		return -FI_ENOMEM;

	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_FORMAT_UNSPEC;
	if (hints != NULL) {
		rc = dup_addr(&fi->src_addr, &fi->src_addrlen, hints->src_addr, hints->src_addrlen);
		if (rc == 0)
			rc = dup_addr(&fi->dest_addr, &fi->dest_addrlen, hints->dest_addr,
				      hints->dest_addrlen);
	}
	if (rc != 0) {
		fi_freeinfo(fi);
		return rc;
	}

	fi->tx_attr->caps = caps & (FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_ATOMIC | FI_READ |
				    FI_WRITE | FI_COLLECTIVE | FI_FENCE);
	fi->tx_attr->mode = 0;
	/* FI_DELIVERY_COMPLETE: one-sided operations complete when the target engine wrote (or
	 * read) the bytes; a send when the receiver's engine accepted the message */
	fi->tx_attr->op_flags =
		hints != NULL && hints->tx_attr != NULL
			? hints->tx_attr->op_flags & (FI_COMPLETION | FI_TRANSMIT_COMPLETE |
						      FI_INJECT_COMPLETE | FI_DELIVERY_COMPLETE)
			: 0;
	/* RDM: an ordered VNI (trd_vni_conf.ordered); DGRAM promises no order */
	fi->tx_attr->msg_order = dg ? FI_ORDER_NONE : FI_ORDER_SAS;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = tfi_inject_size();
	fi->tx_attr->size = (size_t)tfi_params.n_ctx;
	fi->tx_attr->iov_limit = TFI_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = (caps & (FI_RMA | FI_ATOMIC)) ? 1 : 0;

	fi->rx_attr->caps = caps & (FI_MSG | FI_TAGGED | FI_RECV | FI_SOURCE | FI_DIRECTED_RECV |
				    FI_RMA | FI_ATOMIC | FI_REMOTE_READ | FI_REMOTE_WRITE);
	fi->rx_attr->mode = 0;
	fi->rx_attr->op_flags = hints != NULL && hints->rx_attr != NULL
					? hints->rx_attr->op_flags & FI_COMPLETION
					: 0;
	fi->rx_attr->msg_order = dg ? FI_ORDER_NONE : FI_ORDER_SAS;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = (size_t)tfi_params.n_ctx;
	fi->rx_attr->iov_limit = TFI_IOV_LIMIT;

	fi->ep_attr->type = type;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = tfi_max_msg_size();
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->mem_tag_format = dg ? 0 : TFI_TAG_BITS;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(TFI_NAME);
	fi->domain_attr->threading =
		hints != NULL && hints->domain_attr != NULL &&
				hints->domain_attr->threading != FI_THREAD_UNSPEC
			? hints->domain_attr->threading
			: FI_THREAD_SAFE;
	fi->domain_attr->control_progress =
		hints != NULL && hints->domain_attr != NULL &&
				hints->domain_attr->control_progress == FI_PROGRESS_MANUAL
			? FI_PROGRESS_MANUAL
			: FI_PROGRESS_AUTO;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = hints != NULL && hints->domain_attr != NULL
					   ? hints->domain_attr->av_type
					   : FI_AV_UNSPEC;
	/* Descriptors are optional. Remote regions work with virtual addresses or offsets and
	 * with provider or requested keys: take the modes the application allows (FI_MR_BASIC
	 * and FI_MR_SCALABLE as they are), virtual addresses and provider keys without hints. */
	if (hints == NULL || hints->domain_attr == NULL)
		fi->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	else if (hints->domain_attr->mr_mode == FI_MR_BASIC ||
		 hints->domain_attr->mr_mode == FI_MR_SCALABLE)
		fi->domain_attr->mr_mode = hints->domain_attr->mr_mode;
	else
		fi->domain_attr->mr_mode =
			hints->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY);
	fi->domain_attr->mr_key_size = sizeof(uint64_t);
	fi->domain_attr->cq_data_size = TFI_CQ_DATA_SIZE;
	fi->domain_attr->cq_cnt = 64;
	fi->domain_attr->cntr_cnt = TFI_CNTR_MAX;
	fi->domain_attr->ep_cnt = 16; /* each one a VNI of its own */
	fi->domain_attr->tx_ctx_cnt = 1;
	fi->domain_attr->rx_ctx_cnt = 1;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->caps = TFI_DOMAIN_CAPS;
	fi->domain_attr->mr_cnt = 1 << 16;
	/* the job secret that mixes requested keys (tfi_domain.c), as the application gave it */
	if (hints != NULL && hints->domain_attr != NULL && hints->domain_attr->auth_key_size > 0) {
		fi->domain_attr->auth_key = malloc(hints->domain_attr->auth_key_size);
		if (fi->domain_attr->auth_key == NULL) {
			fi_freeinfo(fi);
			return -FI_ENOMEM;
		}
		memcpy(fi->domain_attr->auth_key, hints->domain_attr->auth_key,
		       hints->domain_attr->auth_key_size);
		fi->domain_attr->auth_key_size = hints->domain_attr->auth_key_size;
	}

	/* prov_name and api_version are set by libfabric's core */
	fi->fabric_attr->name = strdup(TFI_NAME);
	fi->fabric_attr->prov_version = TFI_PROV_VERSION;
	if (fi->domain_attr->name == NULL || fi->fabric_attr->name == NULL) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	*info = fi;
	return 0;
}

/* ---- fabric ---- */

static int
fabric_close(struct fid *fid)
{
	struct tfi_fabric *f = container_of(fid, struct tfi_fabric, fab.fid);

	if (f->refs > 0)
		return -FI_EBUSY;
	free(f);
	return 0;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = tfi_no_bind,
	.control = tfi_no_control,
	.ops_open = tfi_no_ops_open,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = tfi_domain_open,
	.passive_ep = tfi_no_passive_ep,
	.eq_open = tfi_eq_open,
	.wait_open = tfi_no_wait_open,
	.trywait = tfi_trywait,
};

static int
tfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct tfi_fabric *f;

	if (attr == NULL || fabric == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(fabric) != 0)
		return -FI_EFAULT;
	if (attr->name != NULL && strcmp(attr->name, TFI_NAME) != 0)
		return -FI_ENODATA;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -FI_ENOMEM;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fabric_fi_ops;
	f->fab.ops = &fabric_ops;
	*fabric = &f->fab;
	return 0;
}

/* ---- event queue ----
 * An RDM endpoint over the VNI has no connection events and inserts addresses synchronously,
 * so the provider writes an EQ only for FI_JOIN_COMPLETE (tfi_coll.c); it holds that and what
 * the application writes with fi_eq_write
 * (and FI_WAIT_FD/UNSPEC waits on an eventfd), which is what libfabric's tools open. */

#define TFI_EQ_MAX  64
#define TFI_EQ_DATA 256

struct tfi_eq_ent {
	uint32_t event;
	size_t len;
	uint8_t data[TFI_EQ_DATA];
};

struct tfi_eq {
	struct fid_eq eq;
	struct tfi_eq_ent ent[TFI_EQ_MAX];
	unsigned int head, count;
	int efd;
	pthread_mutex_t lock;
};

static ssize_t
eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	struct tfi_eq *q = container_of(eq_fid, struct tfi_eq, eq);
	struct tfi_eq_ent *e;
	ssize_t n;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EINVAL;
	pthread_mutex_lock(&q->lock);
	if (q->count == 0) {
		pthread_mutex_unlock(&q->lock);
		return -FI_EAGAIN;
	}
	e = &q->ent[q->head];
	if ((buf == NULL && len != 0) || len < e->len) {
		pthread_mutex_unlock(&q->lock);
		return -FI_ETOOSMALL;
	}
	if (tfi_copy_out(buf, e->data, e->len) != 0) {
		pthread_mutex_unlock(&q->lock);
		return -FI_EFAULT; /* the entry stays queued */
	}
	if (event != NULL)
		*event = e->event;
	n = (ssize_t)e->len;
	if (!(flags & FI_PEEK)) {
		q->head = (q->head + 1) % TFI_EQ_MAX;
		q->count--;
	}
	pthread_mutex_unlock(&q->lock);
	return n;
}

static ssize_t
eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf, uint64_t flags)
{
	return buf == NULL ? -FI_EINVAL : -FI_EAGAIN; /* no errors are ever queued */
}

static ssize_t
eq_write(struct fid_eq *eq_fid, uint32_t event, const void *buf, size_t len, uint64_t flags)
{
	struct tfi_eq *q = container_of(eq_fid, struct tfi_eq, eq);
	struct tfi_eq_ent *e;
	const uint64_t one = 1;

	if (len > TFI_EQ_DATA || (buf == NULL && len != 0))
		return -FI_EINVAL;
	pthread_mutex_lock(&q->lock);
	if (q->count == TFI_EQ_MAX) {
		pthread_mutex_unlock(&q->lock);
		return -FI_EAGAIN;
	}
	e = &q->ent[(q->head + q->count) % TFI_EQ_MAX];
	if (tfi_copy_in(e->data, buf, len) != 0) {
		pthread_mutex_unlock(&q->lock);
		return -FI_EFAULT; /* nothing queued */
	}
	e->event = event;
	e->len = len;
	q->count++;
	pthread_mutex_unlock(&q->lock);
	if (q->efd >= 0 && write(q->efd, &one, sizeof(one)) < 0) {
		/* saturated counter: the reader is woken anyway */
	}
	return (ssize_t)len;
}

static ssize_t
eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags)
{
	struct tfi_eq *q = container_of(eq_fid, struct tfi_eq, eq);
	struct pollfd pf = {.fd = q->efd, .events = POLLIN};
	uint64_t cnt;
	ssize_t n;

	if (q->efd < 0)
		return -FI_EINVAL; /* FI_WAIT_NONE */
	for (;;) {
		n = eq_read(eq_fid, event, buf, len, flags);
		if (n != -FI_EAGAIN)
			return n;
		if (poll(&pf, 1, timeout) <= 0)
			return -FI_EAGAIN;
		if (read(q->efd, &cnt, sizeof(cnt)) < 0) {
			/* EAGAIN: another reader took it */
		}
		if (timeout == 0)
			return -FI_EAGAIN;
	}
}

static const char *
eq_strerror(struct fid_eq *eq_fid, int prov_errno, const void *err_data, char *buf, size_t len)
{
	const char *s = strerror(prov_errno);

	if (buf != NULL && len > 0) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int
eq_close(struct fid *fid)
{
	struct tfi_eq *q = container_of(fid, struct tfi_eq, eq.fid);

	if (q->efd >= 0)
		close(q->efd);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return 0;
}

static int
eq_control(struct fid *fid, int command, void *arg)
{
	struct tfi_eq *q = container_of(fid, struct tfi_eq, eq.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (q->efd < 0)
		return -FI_ENODATA;
	if (arg == NULL)
		return -FI_EINVAL;
	return tfi_copy_out(arg, &q->efd, sizeof(q->efd)); /* -FI_EFAULT: not a crash */
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = tfi_no_bind,
	.control = eq_control,
	.ops_open = tfi_no_ops_open,
};

bool
tfi_is_eq(const struct fid *fid)
{
	return fid != NULL && fid->fclass == FI_CLASS_EQ && fid->ops == &eq_fi_ops;
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int
tfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq, void *context)
{
	struct tfi_eq *q;

	if (fabric == NULL || attr == NULL || eq == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(eq) != 0)
		return -FI_EFAULT;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	if (attr->wait_set != NULL || attr->signaling_vector != 0)
		return -FI_ENOSYS;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -FI_ENOMEM;
	q->efd = -1;
	if (attr->wait_obj != FI_WAIT_NONE) {
		q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (q->efd < 0) {
			free(q);
			return -FI_ENOMEM;
		}
	}
	pthread_mutex_init(&q->lock, NULL);
	q->eq.fid.fclass = FI_CLASS_EQ;
	q->eq.fid.context = context;
	q->eq.fid.ops = &eq_fi_ops;
	q->eq.ops = &eq_ops;
	*eq = &q->eq;
	return 0;
}
