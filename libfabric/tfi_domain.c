/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Domain, memory registration and address vectors.
 *
 * Memory registration gives local descriptors, and, with FI_REMOTE_READ/FI_REMOTE_WRITE,
 * remote keys: the range is registered with the VNI of every endpoint of the domain
 * (trd_vni_mr_reg, also for endpoints opened later), so that the engine serving the process
 * reads and writes it for other processes' fi_write/fi_read/atomics without the application.
 * With FI_MR_PROV_KEY the provider draws the key at random and the VNI's is it XOR TFI_KEY_XOR;
 * otherwise the key is the application's requested key, and the VNI's is SipHash-2-4 of it
 * under the job secret (domain_attr->auth_key, FI_TOROID_JOB_KEY or the launcher's job key),
 * so that every process of the job computes it and nobody outside can guess it; without a job
 * secret requested keys are refused (-FI_ENOKEY). With FI_MR_VIRT_ADDR remote addresses
 * are virtual addresses, otherwise offsets into the region (TRD_VNI_MR_OFFSET).
 *
 * Address vectors hold struct tfi_name (16 bytes: magic, app, proc, node, version). FI_AV_TABLE
 * hands out indices 0, 1, ...; FI_AV_MAP hands out (app << 32 | proc). Both keep the table,
 * which every send checks (an address the AV does not hold is -FI_EINVAL), fi_av_lookup reads
 * and the source of a receive is named from (FI_SOURCE).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "siphash.h" /* engine/wire/api */
#include "tfi.h"

/* ---- keys: SipHash-2-4 (trd_siphash24(), engine/wire/api/siphash.h) ---- */

#define TFI_JOB_SECRET_MIN 16 /* bytes: a shorter job secret is refused as guessable */

/* The domain's SipHash key from a job secret of @p len bytes: two hashes of it under fixed,
 * public keys (the secrecy is the job secret's). */
static void
job_key_from(struct tfi_domain *d, const void *secret, size_t len)
{
	static const uint64_t k0[2] = {0x746f726f69642d6aULL, 0x6f622d6b65792d30ULL};
	static const uint64_t k1[2] = {0x746f726f69642d6aULL, 0x6f622d6b65792d31ULL};

	d->job_sk[0] = trd_siphash24(k0[0], k0[1], secret, len);
	d->job_sk[1] = trd_siphash24(k1[0], k1[1], secret, len);
	d->job_key = true;
}

/* The job secret, in this order: the domain's auth_key, FI_TOROID_JOB_KEY, the job key that
 * Open MPI's launcher exports to every rank (OMPI_MCA_orte_precondition_transports, what the
 * PSM providers use). Without one: a random per-process key, and requested keys refused. */
static int
job_key_init(struct tfi_domain *d, const struct fi_domain_attr *attr)
{
	static const char *const env[] = {"FI_TOROID_JOB_KEY",
					  "OMPI_MCA_orte_precondition_transports"};

	if (attr->auth_key_size > 0) {
		if (attr->auth_key == NULL || attr->auth_key_size < TFI_JOB_SECRET_MIN)
			return -FI_EINVAL;
		job_key_from(d, attr->auth_key, attr->auth_key_size);
		return 0;
	}
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *s = getenv(env[i]);

		if (s == NULL || *s == '\0')
			continue;
		if (strlen(s) < TFI_JOB_SECRET_MIN) {
			FI_WARN(&tfi_prov, FI_LOG_DOMAIN,
				"%s is shorter than %d characters: ignored, as guessable\n", env[i],
				TFI_JOB_SECRET_MIN);
			continue;
		}
		job_key_from(d, s, strlen(s));
		return 0;
	}
	if (getrandom(d->job_sk, sizeof(d->job_sk), 0) != sizeof(d->job_sk))
		return -FI_EOTHER;
	d->job_key = false;
	return 0;
}

uint64_t
tfi_wire_key(const struct tfi_domain *d, uint64_t key)
{
	uint64_t v;
	uint8_t b[8];

	if (d->mr_prov_key)
		return key ^ TFI_KEY_XOR; /* key is 64 random bits already */
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(key >> (8 * i));
	v = trd_siphash24(d->job_sk[0], d->job_sk[1], b, sizeof(b));
	return v != 0 ? v : 1; /* 0 asks the VNI to pick */
}

/* ---- domain ---- */

static int
domain_close(struct fid *fid)
{
	struct tfi_domain *d = container_of(fid, struct tfi_domain, dom.fid);

	if (d->refs > 0)
		return -FI_EBUSY;
	d->fab->refs--;
	pthread_mutex_destroy(&d->lock);
	free(d);
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = tfi_no_bind,
	.control = tfi_no_control,
	.ops_open = tfi_no_ops_open,
};

static int tfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		       void *context);

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = tfi_av_open,
	.cq_open = tfi_cq_open,
	.endpoint = tfi_endpoint,
	.scalable_ep = tfi_no_scalable_ep,
	.cntr_open = tfi_cntr_open,
	.poll_open = tfi_no_poll_open,
	.stx_ctx = tfi_no_stx_ctx,
	.srx_ctx = tfi_no_srx_ctx,
	.query_atomic = tfi_query_atomic,
	.query_collective = tfi_query_collective,
};

/* ---- memory registration ---- */

static unsigned int
mr_vni_access(const struct tfi_domain *d, uint64_t access)
{
	return ((access & FI_REMOTE_READ) ? TRD_VNI_MR_REMOTE_READ : 0) |
	       ((access & FI_REMOTE_WRITE) ? TRD_VNI_MR_REMOTE_WRITE : 0) |
	       (d->mr_virt_addr ? 0 : TRD_VNI_MR_OFFSET);
}

static int
mr_fi_errno(int rc)
{
	switch (rc) {
	case -EEXIST:
		return -FI_ENOKEY;
	case -ENOSPC:
		return -FI_ENOSPC;
	case -EFAULT:
	case -EPERM:
		return -FI_EACCES;
	case -ECONNRESET:
		return -FI_ECONNRESET;
	case -EINVAL:
		return -FI_EINVAL;
	default:
		return rc < 0 && rc > -4096 ? rc : -FI_EOTHER;
	}
}

/* Register @p m with @p ep's VNI. Caller holds the domain lock. */
static int
mr_vni_reg(struct tfi_mr *m, struct tfi_ep *ep)
{
	uint64_t key = m->vkey;
	int rc;

	if (ep->vni == NULL || m->len == 0)
		return 0;
	rc = trd_vni_mr_reg(ep->vni, (void *)(uintptr_t)m->buf, m->len,
			    mr_vni_access(m->dom, m->access), &key);
	if (rc != 0)
		FI_WARN(&tfi_prov, FI_LOG_MR, "registering %zu B at %p with %u:%u: %s\n", m->len,
			m->buf, ep->name.app, ep->name.proc, strerror(-rc));
	return rc;
}

static void
mr_vni_dereg(struct tfi_mr *m, struct tfi_ep *upto)
{
	for (struct tfi_ep *ep = m->dom->eps; ep != NULL && ep != upto; ep = ep->dnext)
		if (ep->vni != NULL && m->len != 0)
			trd_vni_mr_dereg(ep->vni, m->vkey);
}

int
tfi_mr_attach_ep(struct tfi_domain *d, struct tfi_ep *ep)
{
	for (struct tfi_mr *m = d->rmrs; m != NULL; m = m->next) {
		int rc = mr_vni_reg(m, ep);

		if (rc != 0) {
			for (struct tfi_mr *u = d->rmrs; u != m; u = u->next)
				if (u->len != 0)
					trd_vni_mr_dereg(ep->vni, u->vkey);
			return mr_fi_errno(rc);
		}
	}
	return 0;
}

static int
mr_close(struct fid *fid)
{
	struct tfi_mr *m = container_of(fid, struct tfi_mr, mr.fid);
	struct tfi_domain *d = m->dom;

	pthread_mutex_lock(&d->lock);
	if (m->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) {
		mr_vni_dereg(m, NULL);
		for (struct tfi_mr **pp = &d->rmrs; *pp != NULL; pp = &(*pp)->next)
			if (*pp == m) {
				*pp = m->next;
				break;
			}
	}
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	free(m);
	return 0;
}

static bool
mr_key_used(const struct tfi_domain *d, uint64_t key)
{
	for (const struct tfi_mr *m = d->rmrs; m != NULL; m = m->next)
		if (m->mr.key == key)
			return true;
	return false;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = tfi_no_mr_bind,
	.control = tfi_no_control,
	.ops_open = tfi_no_ops_open,
};

/* Whether every page of [buf, buf + len) is mapped: msync(MS_ASYNC) checks the range and
 * does nothing else (ENOMEM for a hole). One system call, at registration only. */
static bool
range_mapped(const void *buf, size_t len)
{
	uintptr_t a = (uintptr_t)buf & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);

	if (len == 0)
		return true;
	return msync((void *)a, (uintptr_t)buf + len - a, MS_ASYNC) == 0;
}

static int
mr_make(struct tfi_domain *d, const void *buf, size_t len, uint64_t access, uint64_t key,
	uint64_t flags, void *context, struct fid_mr **mr)
{
	bool remote = access & (FI_REMOTE_READ | FI_REMOTE_WRITE);
	struct tfi_mr *m;
	int rc = 0;

	if (mr == NULL || (buf == NULL && len != 0))
		return -FI_EINVAL;
	if (tfi_out_ptr(mr) != 0)
		return -FI_EFAULT;
	if ((uintptr_t)buf + len < (uintptr_t)buf)
		return -FI_EINVAL;
	if (flags != 0)
		return -FI_EBADFLAGS;
	if (!range_mapped(buf, len))
		return -FI_EFAULT;
	if (remote && !d->mr_remote)
		return -FI_EOPNOTSUPP; /* the domain was not opened for FI_RMA or FI_ATOMIC */
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -FI_ENOMEM;
	m->mr.fid.fclass = FI_CLASS_MR;
	m->mr.fid.context = context;
	m->mr.fid.ops = &mr_fi_ops;
	m->mr.mem_desc = m;
	m->dom = d;
	m->buf = buf;
	m->len = len;
	m->access = access;
	pthread_mutex_lock(&d->lock);
	if (remote && d->mr_prov_key) {
		do {
			if (getrandom(&key, sizeof(key), 0) != sizeof(key)) {
				rc = -FI_EOTHER;
				goto fail;
			}
		} while (key == TFI_KEY_XOR || mr_key_used(d, key));
	} else if (remote && !d->job_key) {
		/* a requested key without a job secret: peers could not compute its VNI key,
		 * and a fixed transform would let anyone guess it */
		FI_WARN(&tfi_prov, FI_LOG_MR,
			"requested key refused: no job secret (set FI_TOROID_JOB_KEY, "
			"domain_attr->auth_key, or use FI_MR_PROV_KEY)\n");
		rc = -FI_ENOKEY;
		goto fail;
	} else if (remote && mr_key_used(d, key)) {
		rc = -FI_ENOKEY; /* the requested key is taken */
		goto fail;
	}
	m->mr.key = key;
	m->vkey = tfi_wire_key(d, key);
	if (remote) {
		for (struct tfi_ep *ep = d->eps; ep != NULL; ep = ep->dnext) {
			rc = mr_vni_reg(m, ep);
			if (rc != 0) {
				mr_vni_dereg(m, ep);
				rc = mr_fi_errno(rc);
				goto fail;
			}
		}
		m->next = d->rmrs;
		d->rmrs = m;
	}
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*mr = &m->mr;
	return 0;
fail:
	pthread_mutex_unlock(&d->lock);
	free(m);
	return rc;
}

static int
mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
       uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	if (fid == NULL || fid->fclass != FI_CLASS_DOMAIN)
		return -FI_EINVAL;
	return mr_make(container_of(fid, struct tfi_domain, dom.fid), buf, len, access,
		       requested_key, flags, context, mr);
}

static int
mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access, uint64_t offset,
	uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count > 1 || (count == 1 && iov == NULL))
		return -FI_EINVAL; /* mr_iov_limit is 1 */
	return mr_reg(fid, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, access,
		      offset, requested_key, flags, mr, context);
}

static int
mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr)
{
	if (attr == NULL || attr->iface != FI_HMEM_SYSTEM)
		return attr == NULL ? -FI_EINVAL : -FI_EOPNOTSUPP;
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access, attr->offset,
		       attr->requested_key, flags, mr, attr->context);
}

static struct fi_ops_mr mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

int
tfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		void *context)
{
	struct tfi_fabric *f;
	struct tfi_domain *d;
	int rc;

	if (fabric == NULL || info == NULL || dom == NULL || info->domain_attr == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(dom) != 0)
		return -FI_EFAULT;
	if (info->domain_attr->name != NULL && strcmp(info->domain_attr->name, TFI_NAME) != 0)
		return -FI_EINVAL;
	if (info->domain_attr->data_progress == FI_PROGRESS_AUTO)
		return -FI_EOPNOTSUPP;
	f = container_of(fabric, struct tfi_fabric, fab);
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -FI_ENOMEM;
	rc = job_key_init(d, info->domain_attr);
	if (rc != 0) {
		free(d);
		return rc;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->fab = f;
	d->av_type = info->domain_attr->av_type;
	/* FI_MR_BASIC (1) means virtual addresses and provider keys; FI_MR_SCALABLE (2) neither */
	d->mr_virt_addr = info->domain_attr->mr_mode == FI_MR_BASIC ||
			  (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
	d->mr_remote = info->caps == 0 || (info->caps & (FI_RMA | FI_ATOMIC));
	d->mr_prov_key = info->domain_attr->mr_mode == FI_MR_BASIC ||
			 (info->domain_attr->mr_mode & FI_MR_PROV_KEY);
	d->dom.fid.fclass = FI_CLASS_DOMAIN;
	d->dom.fid.context = context;
	d->dom.fid.ops = &domain_fi_ops;
	d->dom.ops = &domain_ops;
	d->dom.mr = &mr_ops;
	f->refs++;
	*dom = &d->dom;
	return 0;
}

/* ---- address vector ---- */

static fi_addr_t
av_handle(const struct tfi_av *av, size_t idx)
{
	if (av->type == FI_AV_MAP)
		return ((uint64_t)av->tab[idx].app << 32) | av->tab[idx].proc;
	return idx;
}

/* The table index of fi_addr, or -1. Caller holds the domain lock. */
static ssize_t
av_index(const struct tfi_av *av, fi_addr_t addr)
{
	if (av->type == FI_AV_TABLE)
		return addr < av->n && av->used[addr] ? (ssize_t)addr : -1;
	for (size_t i = 0; i < av->n; i++)
		if (av->used[i] && av_handle(av, i) == addr)
			return (ssize_t)i;
	return -1;
}

int
tfi_av_resolve(struct tfi_av *av, fi_addr_t addr, struct trd_vni_addr *out)
{
	ssize_t i;

	if (av == NULL || addr == FI_ADDR_UNSPEC)
		return -FI_EINVAL;
	/* the last address used first: a walk of the table only when the peer changes */
	if (av->last < av->n && av->used[av->last] && av_handle(av, av->last) == addr)
		i = (ssize_t)av->last;
	else
		i = av_index(av, addr);
	if (i < 0)
		return -FI_EINVAL; /* not an address of this AV */
	av->last = (size_t)i;
	out->app = av->tab[i].app;
	out->proc = av->tab[i].proc;
	return 0;
}

fi_addr_t
tfi_av_reverse(struct tfi_av *av, uint32_t app, uint32_t proc)
{
	if (av == NULL)
		return FI_ADDR_NOTAVAIL;
	for (size_t i = 0; i < av->n; i++)
		if (av->used[i] && av->tab[i].app == app && av->tab[i].proc == proc)
			return av_handle(av, i);
	return FI_ADDR_NOTAVAIL;
}

static int
av_grow(struct tfi_av *av)
{
	size_t cap = av->cap ? av->cap * 2 : 64;
	struct tfi_name *t = realloc(av->tab, cap * sizeof(*t));
	uint8_t *u;

	if (t == NULL)
		return -FI_ENOMEM;
	av->tab = t;
	u = realloc(av->used, cap);
	if (u == NULL)
		return -FI_ENOMEM;
	memset(u + av->cap, 0, cap - av->cap);
	av->used = u;
	av->cap = cap;
	return 0;
}

/* fi_av_insert's out-arrays (fi_addr, the FI_SYNC_ERR array) written through the kernel before
 * anything is inserted, with what a failed insert leaves there: unmapped is -FI_EFAULT and
 * nothing inserted. A system call each, at insertion only (not a hot path). */
static int
out_arrays_ok(fi_addr_t *fi_addr, int *errs, size_t count)
{
	size_t n = count * (sizeof(fi_addr_t) > sizeof(int) ? sizeof(fi_addr_t) : sizeof(int));
	uint8_t *fill = malloc(n);
	int rc = 0;

	if (fill == NULL)
		return -FI_ENOMEM;
	if (fi_addr != NULL) {
		for (size_t k = 0; k < count; k++)
			((fi_addr_t *)(void *)fill)[k] = FI_ADDR_NOTAVAIL;
		rc = tfi_copy_out(fi_addr, fill, count * sizeof(*fi_addr));
	}
	if (rc == 0 && errs != NULL) {
		memset(fill, 0, count * sizeof(*errs));
		rc = tfi_copy_out(errs, fill, count * sizeof(*errs));
	}
	free(fill);
	return rc;
}

static int
av_insert(struct fid_av *av_fid, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
	  void *context)
{
	struct tfi_av *av = container_of(av_fid, struct tfi_av, av);
	struct tfi_name *names;
	int *errs = (flags & FI_SYNC_ERR) ? context : NULL;
	int done = 0, rc;

	if ((count > 0 && addr == NULL) || count > INT_MAX) /* the count is returned as an int */
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	if (count == 0)
		return 0;
	/* the application's addresses, copied through the kernel: unmapped is -FI_EFAULT */
	names = malloc(count * sizeof(*names));
	if (names == NULL)
		return -FI_ENOMEM;
	rc = tfi_copy_in(names, addr, count * sizeof(*names));
	if (rc == 0)
		rc = out_arrays_ok(fi_addr, errs, count);
	if (rc != 0) {
		free(names);
		return rc;
	}
	pthread_mutex_lock(&av->dom->lock);
	for (size_t k = 0; k < count; k++) {
		const struct tfi_name *n = &names[k];
		int err = 0;

		if (n->magic != TFI_NAME_MAGIC || n->version != 1 || n->app == TRD_VNI_ANY ||
		    n->proc == TRD_VNI_ANY)
			err = FI_EINVAL;
		else if (av->n == av->cap && av_grow(av) != 0)
			err = FI_ENOMEM;
		if (errs != NULL)
			errs[k] = err;
		if (err != 0) {
			if (fi_addr != NULL)
				fi_addr[k] = FI_ADDR_NOTAVAIL;
			continue;
		}
		av->tab[av->n] = *n;
		av->used[av->n] = 1;
		if (fi_addr != NULL)
			fi_addr[k] = av_handle(av, av->n);
		av->n++;
		done++;
	}
	pthread_mutex_unlock(&av->dom->lock);
	free(names);
	return done;
}

static int
av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct tfi_av *av = container_of(av_fid, struct tfi_av, av);
	int rc = 0;

	if ((count > 0 && fi_addr == NULL) || flags != 0)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->dom->lock);
	for (size_t k = 0; k < count; k++) {
		ssize_t i = av_index(av, fi_addr[k]);

		if (i < 0)
			rc = -FI_EINVAL;
		else
			av->used[i] = 0;
	}
	pthread_mutex_unlock(&av->dom->lock);
	return rc;
}

static int
av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct tfi_av *av = container_of(av_fid, struct tfi_av, av);
	struct tfi_name n;
	size_t room, need = sizeof(n);
	ssize_t i;

	if (addrlen == NULL)
		return -FI_EINVAL;
	if (tfi_copy_in(&room, addrlen, sizeof(room)) != 0)
		return -FI_EFAULT;
	pthread_mutex_lock(&av->dom->lock);
	i = av_index(av, fi_addr);
	if (i >= 0)
		n = av->tab[i];
	pthread_mutex_unlock(&av->dom->lock);
	if (i < 0)
		return -FI_EINVAL;
	if (addr != NULL && tfi_copy_out(addr, &n, room < sizeof(n) ? room : sizeof(n)))
		return -FI_EFAULT;
	return tfi_copy_out(addrlen, &need, sizeof(need));
}

static const char *
av_straddr(struct fid_av *av_fid, const void *addr, char *buf, size_t *len)
{
	struct tfi_name name, *n = &name;
	char s[64];
	int w;

	if (addr == NULL || buf == NULL || len == NULL || tfi_copy_in(&name, addr, sizeof(name)))
		return NULL;
	if (n->magic != TFI_NAME_MAGIC)
		w = snprintf(s, sizeof(s), "fi_toroid://invalid");
	else
		w = snprintf(s, sizeof(s), "fi_toroid://%u.%u.%u/%u:%u", n->node[0], n->node[1],
			     n->node[2], n->app, n->proc);
	if (*len > 0) {
		strncpy(buf, s, *len - 1);
		buf[*len - 1] = '\0';
	}
	*len = (size_t)w + 1;
	return buf;
}

static int
av_close(struct fid *fid)
{
	struct tfi_av *av = container_of(fid, struct tfi_av, av.fid);

	if (av->refs > 0)
		return -FI_EBUSY;
	pthread_mutex_lock(&av->dom->lock);
	av->dom->refs--;
	pthread_mutex_unlock(&av->dom->lock);
	free(av->tab);
	free(av->used);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = tfi_no_bind, /* no asynchronous inserts: nothing to bind an EQ for */
	.control = tfi_no_control,
	.ops_open = tfi_no_ops_open,
};

bool
tfi_is_av(const struct fid *fid)
{
	return fid != NULL && fid->fclass == FI_CLASS_AV && fid->ops == &av_fi_ops;
}

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = tfi_no_av_insertsvc,
	.insertsym = tfi_no_av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = tfi_av_set,
};

static int
tfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **avp, void *context)
{
	struct tfi_domain *d = container_of(domain, struct tfi_domain, dom);
	enum fi_av_type type;
	struct tfi_av *av;

	if (domain == NULL || attr == NULL || avp == NULL)
		return -FI_EINVAL;
	if (tfi_out_ptr(avp) != 0)
		return -FI_EFAULT;
	type = attr->type != FI_AV_UNSPEC ? attr->type
					  : (d->av_type != FI_AV_UNSPEC ? d->av_type : FI_AV_MAP);
	if (type != FI_AV_MAP && type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (d->av_type != FI_AV_UNSPEC && type != d->av_type)
		return -FI_EINVAL;
	/* asynchronous inserts (FI_EVENT), shared named AVs and read-only opens are not offered */
	if (attr->flags & ~(uint64_t)FI_SYMMETRIC)
		return -FI_ENOSYS;
	if (attr->name != NULL || attr->rx_ctx_bits != 0)
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (av == NULL)
		return -FI_ENOMEM;
	av->dom = d;
	av->type = type;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*avp = &av->av;
	return 0;
}
