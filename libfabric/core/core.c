/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric.so.1 for toroid alone: libfabric's core API (fi_getinfo, fi_fabric, fi_dupinfo,
 * fi_freeinfo, fi_strerror, fi_version, fi_open, fi_tostr) serving the toroid provider, which
 * is built into this library, and nothing else (docs/libfabric.md, "Starting faster").
 *
 * Why: the system's libfabric.so.1 loads every provider it was built with and their libraries
 * when a process loads it. On Debian 12 that is 0.3 s per process before the first message:
 * libinfinipath's constructor calibrates its clock on every CPU the process may use (100 ms
 * each) and the verbs provider reads /proc/kallsyms twice. An MPI rank over Open MPI's OFI MTL
 * pays it at MPI_Init. A process that finds this library first (LD_LIBRARY_PATH) pays none
 * of it; programs and Open MPI built against libfabric 1.17 run unchanged: the symbols carry
 * libfabric's own versions (fabric.map).
 *
 * Parameters (FI_TOROID_*) and logging (FI_LOG_LEVEL, FI_LOG_PROV, FI_LOG_SUBSYS) read the
 * environment as libfabric's core does: env.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#include "core_pvt.h"

#define API __attribute__((visibility("default")))

struct fi_provider *fi_prov_ini(void); /* the provider's entry point (tfi_init.c) */

static struct fi_provider *prov;
static pthread_once_t prov_once = PTHREAD_ONCE_INIT;

/* The core's own parameters (fi_info -e lists them), then the provider's. */
static void
prov_load(void)
{
	fi_param_define(NULL, "provider", FI_PARAM_STRING,
			"Only use the providers named, comma-separated, or with a leading ^ all "
			"but those (this library has toroid only)");
	fi_param_define(
		NULL, "log_level", FI_PARAM_STRING,
		"Log messages up to this level: warn, trace, info or debug (default: none)");
	fi_param_define(NULL, "log_prov", FI_PARAM_STRING,
			"Log messages of these providers only (a list as FI_PROVIDER)");
	fi_param_define(NULL, "log_subsys", FI_PARAM_STRING,
			"Log messages of these subsystems only: core, fabric, domain, ep_ctrl, "
			"ep_data, av, cq, eq, mr, cntr (a list as FI_PROVIDER)");
	prov = fi_prov_ini();
}

const struct fi_provider *
tfc_provider(void)
{
	pthread_once(&prov_once, prov_load);
	return prov;
}

/* The provider, unless FI_PROVIDER leaves it out; NULL if none. */
static const struct fi_provider *
provider(void)
{
	const struct fi_provider *p = tfc_provider();

	return p != NULL && tfc_name_allowed(getenv("FI_PROVIDER"), p->name) ? p : NULL;
}

__attribute__((destructor)) static void
core_fini(void)
{
	if (prov != NULL && prov->cleanup != NULL)
		prov->cleanup();
}

API uint32_t
fi_version(void)
{
	return FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
}

/* ---- fi_info copies ---- */

static int
dup_mem(void **dst, const void *src, size_t len)
{
	*dst = NULL;
	if (src == NULL || len == 0)
		return 0;
	*dst = malloc(len);
	if (*dst == NULL)
		return -1;
	memcpy(*dst, src, len);
	return 0;
}

static int
dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (src == NULL)
		return 0;
	*dst = strdup(src);
	return *dst == NULL ? -1 : 0;
}

#define DUP_ATTR(d, s, f)                                                                          \
	((s)->f == NULL ? ((d)->f = NULL, 0) : dup_mem((void **)&(d)->f, (s)->f, sizeof(*(s)->f)))

/* A copy of @p info alone (not its next), every attribute and string its own: fi_freeinfo
 * frees it. A NIC description is not copied. */
static struct fi_info *
dup_one(const struct fi_info *info)
{
	struct fi_info *d = calloc(1, sizeof(*d));
	int rc = 0;

	if (d == NULL)
		return NULL;
	*d = *info;
	d->next = NULL;
	d->src_addr = d->dest_addr = NULL;
	d->tx_attr = NULL;
	d->rx_attr = NULL;
	d->ep_attr = NULL;
	d->domain_attr = NULL;
	d->fabric_attr = NULL;
	d->nic = NULL;
	rc |= dup_mem(&d->src_addr, info->src_addr, info->src_addrlen);
	rc |= dup_mem(&d->dest_addr, info->dest_addr, info->dest_addrlen);
	rc |= DUP_ATTR(d, info, tx_attr);
	rc |= DUP_ATTR(d, info, rx_attr);
	rc |= DUP_ATTR(d, info, ep_attr);
	if (d->ep_attr != NULL)
		rc |= dup_mem((void **)&d->ep_attr->auth_key, info->ep_attr->auth_key,
			      info->ep_attr->auth_key_size);
	rc |= DUP_ATTR(d, info, domain_attr);
	if (d->domain_attr != NULL) {
		rc |= dup_str(&d->domain_attr->name, info->domain_attr->name);
		rc |= dup_mem((void **)&d->domain_attr->auth_key, info->domain_attr->auth_key,
			      info->domain_attr->auth_key_size);
	}
	rc |= DUP_ATTR(d, info, fabric_attr);
	if (d->fabric_attr != NULL) {
		rc |= dup_str(&d->fabric_attr->name, info->fabric_attr->name);
		rc |= dup_str(&d->fabric_attr->prov_name, info->fabric_attr->prov_name);
	}
	if (rc != 0) {
		fi_freeinfo(d);
		return NULL;
	}
	return d;
}

/* fi_dupinfo(NULL) is fi_allocinfo(): an empty fi_info with every attribute. */
static struct fi_info *
alloc_info(void)
{
	struct fi_info *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->tx_attr = calloc(1, sizeof(*d->tx_attr));
	d->rx_attr = calloc(1, sizeof(*d->rx_attr));
	d->ep_attr = calloc(1, sizeof(*d->ep_attr));
	d->domain_attr = calloc(1, sizeof(*d->domain_attr));
	d->fabric_attr = calloc(1, sizeof(*d->fabric_attr));
	if (d->tx_attr == NULL || d->rx_attr == NULL || d->ep_attr == NULL ||
	    d->domain_attr == NULL || d->fabric_attr == NULL) {
		fi_freeinfo(d);
		return NULL;
	}
	return d;
}

API struct fi_info *
fi_dupinfo(const struct fi_info *info)
{
	return info == NULL ? alloc_info() : dup_one(info);
}

API void
fi_freeinfo(struct fi_info *info)
{
	while (info != NULL) {
		struct fi_info *next = info->next;

		free(info->src_addr);
		free(info->dest_addr);
		free(info->tx_attr);
		free(info->rx_attr);
		if (info->ep_attr != NULL)
			free(info->ep_attr->auth_key);
		free(info->ep_attr);
		if (info->domain_attr != NULL) {
			free(info->domain_attr->name);
			free(info->domain_attr->auth_key);
		}
		free(info->domain_attr);
		if (info->fabric_attr != NULL) {
			free(info->fabric_attr->name);
			free(info->fabric_attr->prov_name);
		}
		free(info->fabric_attr);
		if (info->nic != NULL)
			fi_close(&info->nic->fid);
		free(info);
		info = next;
	}
}

/* ---- fi_getinfo, fi_fabric ---- */

/* A provider name asked for: "toroid", any case; a layered name ("toroid;ofi_rxm") is not
 * served (no utility providers here). */
static bool
prov_name_ok(const char *want, const char *name)
{
	return want == NULL || strcasecmp(want, name) == 0;
}

static int
prov_attr_only(const struct fi_provider *p, struct fi_info **info)
{
	struct fi_info *fi = alloc_info();

	if (fi == NULL)
		return -FI_ENOMEM;
	fi->fabric_attr->prov_name = strdup(p->name);
	if (fi->fabric_attr->prov_name == NULL) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	fi->fabric_attr->prov_version = p->version;
	*info = fi;
	return 0;
}

API int
fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
	   const struct fi_info *hints, struct fi_info **info)
{
	const struct fi_provider *p;
	int rc;

	if (info == NULL)
		return -FI_EINVAL;
	*info = NULL;
	if (FI_VERSION_LT(fi_version(), version)) {
		tfc_log_core(FI_LOG_WARN, "requested version %u.%u is newer than this library's\n",
			     FI_MAJOR(version), FI_MINOR(version));
		return -FI_ENOSYS;
	}
	p = provider();
	if (p == NULL)
		return -FI_ENODATA;
	if (hints != NULL && hints->fabric_attr != NULL &&
	    !prov_name_ok(hints->fabric_attr->prov_name, p->name))
		return -FI_ENODATA;
	if (flags & FI_PROV_ATTR_ONLY)
		return prov_attr_only(p, info);
	rc = p->getinfo(version, node, service, flags, hints, info);
	if (rc != 0)
		return rc;
	for (struct fi_info *cur = *info; cur != NULL; cur = cur->next) {
		if (cur->fabric_attr->prov_name == NULL &&
		    (cur->fabric_attr->prov_name = strdup(p->name)) == NULL) {
			fi_freeinfo(*info);
			*info = NULL;
			return -FI_ENOMEM;
		}
		cur->fabric_attr->prov_version = p->version;
		cur->fabric_attr->api_version = version;
	}
	return 0;
}

API int
fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	const struct fi_provider *p;
	int rc;

	if (attr == NULL || fabric == NULL)
		return -FI_EINVAL;
	p = provider();
	if (p == NULL || attr->prov_name == NULL || strcasecmp(attr->prov_name, p->name) != 0)
		return -FI_ENODEV;
	rc = p->fabric(attr, fabric, context);
	if (rc == 0)
		(*fabric)->api_version = attr->api_version;
	return rc;
}

/* Named objects of the core (the memory registration cache's monitor, "mr_cache"): none
 * here. Open MPI goes on without it. */
API int
fi_open(uint32_t version, const char *name, void *attr, size_t attr_len, uint64_t flags,
	struct fid **fid, void *context)
{
	(void)version;
	(void)name;
	(void)attr;
	(void)attr_len;
	(void)flags;
	(void)context;
	if (fid != NULL)
		*fid = NULL;
	return -FI_ENOSYS;
}

/* ---- fi_strerror ---- */

static const char *const fi_errors[] = {
	[FI_EOTHER - FI_ERRNO_OFFSET] = "Unspecified error",
	[FI_ETOOSMALL - FI_ERRNO_OFFSET] = "Provided buffer is too small",
	[FI_EOPBADSTATE - FI_ERRNO_OFFSET] = "Operation not permitted in current state",
	[FI_EAVAIL - FI_ERRNO_OFFSET] = "Error available",
	[FI_EBADFLAGS - FI_ERRNO_OFFSET] = "Flags not supported",
	[FI_ENOEQ - FI_ERRNO_OFFSET] = "Missing or unavailable event queue",
	[FI_EDOMAIN - FI_ERRNO_OFFSET] = "Invalid resource domain",
	[FI_ENOCQ - FI_ERRNO_OFFSET] = "Missing or unavailable completion queue",
	[FI_ECRC - FI_ERRNO_OFFSET] = "CRC error",
	[FI_ETRUNC - FI_ERRNO_OFFSET] = "Truncation error",
	[FI_ENOKEY - FI_ERRNO_OFFSET] = "Required key not available",
	[FI_ENOAV - FI_ERRNO_OFFSET] = "Missing or unavailable address vector",
	[FI_EOVERRUN - FI_ERRNO_OFFSET] = "Queue has been overrun",
	[FI_ENORX - FI_ERRNO_OFFSET] = "Receiver not ready, no receive buffers available",
};

API const char *
fi_strerror(int errnum)
{
	if (errnum < 0)
		errnum = -errnum;
	if (errnum < FI_ERRNO_OFFSET)
		return strerror(errnum);
	if (errnum < FI_ERRNO_MAX)
		return fi_errors[errnum - FI_ERRNO_OFFSET];
	return "Unknown error";
}
