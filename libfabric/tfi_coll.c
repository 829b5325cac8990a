/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FI_COLLECTIVE over the VNI's engine collectives (docs/libfabric.md, "Collectives"): AV
 * sets, fi_join_collective, fi_query_collective, and fi_barrier, fi_broadcast, fi_allreduce
 * and fi_reduce posted as trd_vni_barrier/bcast/allreduce/reduce, so that the engines of the
 * nodes combine the vectors on their tree of links and no application CPU takes part on the
 * way.
 *
 * A set maps to one VNI group (struct trd_vni_group): its members are on distinct nodes (one
 * process per node) and are exactly the nodes of the torus, or of a plane or line of it
 * (every node whose coordinates agree with the members' on the axes outside the group). The
 * provider knows the torus only through the endpoint's AV: the extent of each axis is one
 * past the largest coordinate of an address in it. A set of another shape is refused at
 * fi_join with -FI_ENOSYS (the engines cannot combine it), never run with a wrong result.
 *
 * The vectors go through a pool buffer of the endpoint's VNI (the engine reads and writes
 * only the pool): the contribution is copied in when posted, the result copied out into the
 * application's buffer at the completion, which goes to the endpoint's transmit CQ with flags
 * FI_COLLECTIVE. A failure across the group (a member's engine down: -EHOSTUNREACH) is a CQ
 * error entry. One collective per joined group is in flight at a time: another is
 * -FI_EAGAIN until the first completed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tfi.h"

/* fi_av_set_addr of a set: the address fi_join_collective takes with it */
#define TFI_SET_ADDR ((fi_addr_t)0x7466697365740000ULL)

struct tfi_av_set {
	struct fid_av_set set;
	struct tfi_av *av;
	fi_addr_t *addr;
	size_t n, cap;
};

struct tfi_mc {
	struct fid_mc mc;
	struct tfi_ep *ep;
	struct trd_vni_group g; /* root: the lowest member; a broadcast or reduce names its own */
	uint8_t lo[3], hi[3];   /* the box of the members' coordinates */
	unsigned int slot;      /* in ep->mc */
	bool busy;              /* a collective of this group is posted */
};

static struct fi_ops_av_set av_set_ops;
static struct fi_ops av_set_fi_ops;
static struct fi_ops mc_fi_ops;

static struct tfi_ep *
to_ep(struct fid_ep *e)
{
	return container_of(e, struct tfi_ep, ep);
}

/* ---- AV sets ---- */

static bool
is_set(const struct fid_av_set *s)
{
	return s != NULL && s->fid.fclass == FI_CLASS_AV_SET && s->fid.ops == &av_set_fi_ops;
}

static struct tfi_av_set *
to_set(const struct fid_av_set *s)
{
	return container_of(s, struct tfi_av_set, set);
}

static bool
set_has(const struct tfi_av_set *s, fi_addr_t a)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->addr[i] == a)
			return true;
	return false;
}

/* Caller holds the domain lock. */
static int
set_add(struct tfi_av_set *s, fi_addr_t a)
{
	struct trd_vni_addr va;

	if (tfi_av_resolve(s->av, a, &va) != 0)
		return -FI_EINVAL;
	if (set_has(s, a))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		fi_addr_t *n = realloc(s->addr, cap * sizeof(*n));

		if (n == NULL)
			return -FI_ENOMEM;
		s->addr = n;
		s->cap = cap;
	}
	s->addr[s->n++] = a;
	return 0;
}

static int
set_insert(struct fid_av_set *set, fi_addr_t addr)
{
	struct tfi_av_set *s;
	int rc;

	if (!is_set(set))
		return -FI_EINVAL;
	s = to_set(set);
	pthread_mutex_lock(&s->av->dom->lock);
	rc = set_has(s, addr) ? -FI_EINVAL : set_add(s, addr);
	pthread_mutex_unlock(&s->av->dom->lock);
	return rc;
}

static int
set_remove(struct fid_av_set *set, fi_addr_t addr)
{
	struct tfi_av_set *s;
	int rc = -FI_EINVAL;

	if (!is_set(set))
		return -FI_EINVAL;
	s = to_set(set);
	pthread_mutex_lock(&s->av->dom->lock);
	for (size_t i = 0; i < s->n; i++)
		if (s->addr[i] == addr) {
			memmove(&s->addr[i], &s->addr[i + 1], (s->n - i - 1) * sizeof(s->addr[0]));
			s->n--;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&s->av->dom->lock);
	return rc;
}

enum set_op { SET_UNION, SET_INTERSECT, SET_DIFF };

static int
set_combine(struct fid_av_set *dst, const struct fid_av_set *src, enum set_op op)
{
	struct tfi_av_set *d, *s;
	int rc = 0;

	if (!is_set(dst) || !is_set(src))
		return -FI_EINVAL;
	d = to_set(dst);
	s = to_set(src);
	if (d->av != s->av)
		return -FI_EINVAL;
	pthread_mutex_lock(&d->av->dom->lock);
	if (op == SET_UNION) {
		for (size_t i = 0; i < s->n && rc == 0; i++)
			rc = set_add(d, s->addr[i]);
	} else {
		size_t k = 0;

		for (size_t i = 0; i < d->n; i++)
			if (set_has(s, d->addr[i]) == (op == SET_INTERSECT))
				d->addr[k++] = d->addr[i];
		d->n = k;
	}
	pthread_mutex_unlock(&d->av->dom->lock);
	return rc;
}

static int
set_union(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return set_combine(dst, src, SET_UNION);
}

static int
set_intersect(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return set_combine(dst, src, SET_INTERSECT);
}

static int
set_diff(struct fid_av_set *dst, const struct fid_av_set *src)
{
	return set_combine(dst, src, SET_DIFF);
}

static int
set_addr(struct fid_av_set *set, fi_addr_t *coll_addr)
{
	fi_addr_t a = TFI_SET_ADDR;

	if (!is_set(set) || coll_addr == NULL)
		return -FI_EINVAL;
	return tfi_copy_out(coll_addr, &a, sizeof(a));
}

static int
set_close(struct fid *fid)
{
	struct tfi_av_set *s = container_of(fid, struct tfi_av_set, set.fid);

	pthread_mutex_lock(&s->av->dom->lock);
	s->av->refs--;
	pthread_mutex_unlock(&s->av->dom->lock);
	free(s->addr);
	free(s);
	return 0;
}

static struct fi_ops av_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = set_close,
	.bind = tfi_no_bind,
	.control = tfi_no_control,
	.ops_open = tfi_no_ops_open,
};

static struct fi_ops_av_set av_set_ops = {
	.size = sizeof(struct fi_ops_av_set),
	.set_union = set_union,
	.intersect = set_intersect,
	.diff = set_diff,
	.insert = set_insert,
	.remove = set_remove,
	.addr = set_addr,
};

int
tfi_av_set(struct fid_av *av_fid, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
	   void *context)
{
	struct tfi_av *av = container_of(av_fid, struct tfi_av, av);
	struct fi_av_set_attr a;
	struct tfi_av_set *s;
	int rc = 0;

	if (attr == NULL || av_set == NULL)
		return -FI_EINVAL;
	if (tfi_copy_in(&a, attr, sizeof(a)) != 0 || tfi_out_ptr(av_set) != 0)
		return -FI_EFAULT;
	if (a.comm_key_size != 0) /* no communication keys: the engines' groups need none */
		return -FI_ENOSYS;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -FI_ENOMEM;
	s->av = av;
	s->set.fid.fclass = FI_CLASS_AV_SET;
	s->set.fid.context = context;
	s->set.fid.ops = &av_set_fi_ops;
	s->set.ops = &av_set_ops;
	pthread_mutex_lock(&av->dom->lock);
	if (a.flags & FI_UNIVERSE) {
		/* every address of the AV */
		for (size_t i = 0; i < av->n && rc == 0; i++) {
			fi_addr_t h = tfi_av_reverse(av, av->tab[i].app, av->tab[i].proc);

			if (av->used[i] && h != FI_ADDR_NOTAVAIL)
				rc = set_add(s, h);
		}
	} else if (a.start_addr != FI_ADDR_NOTAVAIL && a.count > 0) {
		uint64_t stride = a.stride ? a.stride : 1;

		if (a.end_addr < a.start_addr)
			rc = -FI_EINVAL;
		for (fi_addr_t x = a.start_addr; rc == 0 && x <= a.end_addr && s->n < a.count;
		     x += stride) {
			rc = set_add(s, x);
			if (x > UINT64_MAX - stride)
				break;
		}
	}
	if (rc == 0)
		av->refs++;
	pthread_mutex_unlock(&av->dom->lock);
	if (rc != 0) {
		free(s->addr);
		free(s);
		return rc;
	}
	*av_set = &s->set;
	return 0;
}

/* ---- joining: a set as a VNI group ---- */

static int
mc_close(struct fid *fid)
{
	struct tfi_mc *m = container_of(fid, struct tfi_mc, mc.fid);
	struct tfi_ep *ep = m->ep;

	pthread_mutex_lock(&ep->dom->lock);
	if (m->busy) {
		pthread_mutex_unlock(&ep->dom->lock);
		return -FI_EBUSY;
	}
	ep->mc[m->slot] = NULL;
	ep->n_mc--;
	pthread_mutex_unlock(&ep->dom->lock);
	free(m);
	return 0;
}

static struct fi_ops mc_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mc_close,
	.bind = tfi_no_bind,
	.control = tfi_no_control,
	.ops_open = tfi_no_ops_open,
};

/* The group of the set's members, checked against the torus the AV shows. Caller holds the
 * domain lock. 0; -FI_EINVAL (an address not in the AV, this endpoint not a member);
 * -FI_ENOSYS (two members on one node, or not a whole torus, plane or line of it). */
static int
set_group(struct tfi_ep *ep, const struct tfi_av_set *s, struct tfi_mc *m)
{
	struct tfi_av *av = s->av;
	uint8_t ext[3] = {1, 1, 1};
	bool self = false;
	size_t want = 1;
	unsigned int dims = 0;

	if (s->n == 0 || av != ep->av)
		return -FI_EINVAL;
	for (size_t i = 0; i < av->n; i++)
		for (int k = 0; k < 3; k++)
			if (av->used[i] && av->tab[i].node[k] >= ext[k])
				ext[k] = (uint8_t)(av->tab[i].node[k] + 1 > 255
							   ? 255
							   : av->tab[i].node[k] + 1);
	for (size_t i = 0; i < s->n; i++) {
		struct trd_vni_addr va;
		const struct tfi_name *nm;

		if (tfi_av_resolve(av, s->addr[i], &va) != 0)
			return -FI_EINVAL; /* removed from the AV since */
		nm = &av->tab[av->last];   /* tfi_av_resolve leaves its index there */
		if (va.app == ep->name.app && va.proc == ep->name.proc)
			self = true;
		for (int k = 0; k < 3; k++) {
			if (i == 0 || nm->node[k] < m->lo[k])
				m->lo[k] = nm->node[k];
			if (i == 0 || nm->node[k] > m->hi[k])
				m->hi[k] = nm->node[k];
		}
		/* one process per node */
		for (size_t j = 0; j < i; j++) {
			struct trd_vni_addr vb;
			const struct tfi_name *o;

			tfi_av_resolve(av, s->addr[j], &vb);
			o = &av->tab[av->last];
			if (memcmp(o->node, nm->node, 3) == 0)
				return -FI_ENOSYS;
		}
	}
	if (!self)
		return -FI_EINVAL;
	for (int k = 0; k < 3; k++)
		if (m->lo[k] != m->hi[k]) {
			dims |= 1u << k;
			want *= ext[k];
		}
	if (dims == 0 && (ext[0] != 1 || ext[1] != 1 || ext[2] != 1))
		return -FI_ENOSYS; /* one node of several: the VNI's mask 0 is the whole torus */
	/* distinct nodes agreeing outside dims and as many as the group has: exactly the group */
	if (s->n != want)
		return -FI_ENOSYS;
	m->g.dims = dims == 0 ? 7 : dims;
	memcpy(m->g.root, m->lo, 3);
	return 0;
}

int
tfi_join(struct fid_ep *e, const void *addr, uint64_t flags, struct fid_mc **mc, void *context)
{
	struct tfi_ep *ep = to_ep(e);
	struct fi_collective_addr ca;
	struct fi_eq_entry ev;
	struct fid sf;
	struct tfi_mc *m;
	unsigned int slot;
	ssize_t w;
	int rc;

	if (!(flags & FI_COLLECTIVE))
		return -FI_ENOSYS; /* multicast groups are not offered */
	if (addr == NULL || mc == NULL)
		return -FI_EINVAL;
	if (tfi_copy_in(&ca, addr, sizeof(ca)) != 0 || tfi_out_ptr(mc) != 0)
		return -FI_EFAULT;
	if (!(ep->caps & FI_COLLECTIVE))
		return -FI_EOPNOTSUPP;
	/* the set is the application's pointer: read its fid through the kernel first */
	if (ca.set == NULL || tfi_copy_in(&sf, &ca.set->fid, sizeof(sf)) != 0)
		return -FI_EINVAL;
	if (!is_set(ca.set))
		return -FI_EINVAL;
	if (ep->eq == NULL)
		return -FI_ENOEQ; /* FI_JOIN_COMPLETE has nowhere to go */
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -FI_ENOMEM;
	pthread_mutex_lock(&ep->dom->lock);
	rc = tfi_post_check(ep);
	if (rc == 0 && ca.coll_addr != TFI_SET_ADDR &&
	    !(ca.coll_addr >= TFI_MC_ADDR && ca.coll_addr < TFI_MC_ADDR + TFI_MC_MAX &&
	      ep->mc[ca.coll_addr - TFI_MC_ADDR] != NULL))
		rc = -FI_EINVAL;
	if (rc == 0)
		rc = set_group(ep, to_set(ca.set), m);
	for (slot = 0; rc == 0 && slot < TFI_MC_MAX && ep->mc[slot] != NULL; slot++)
		;
	if (rc == 0 && slot == TFI_MC_MAX)
		rc = -FI_ENOSPC;
	if (rc != 0) {
		pthread_mutex_unlock(&ep->dom->lock);
		free(m);
		FI_INFO(&tfi_prov, FI_LOG_EP_CTRL, "fi_join refused: %s\n", fi_strerror(-rc));
		return rc;
	}
	m->ep = ep;
	m->slot = slot;
	m->mc.fid.fclass = FI_CLASS_MC;
	m->mc.fid.context = context;
	m->mc.fid.ops = &mc_fi_ops;
	m->mc.fi_addr = TFI_MC_ADDR + slot;
	ep->mc[slot] = m;
	ep->n_mc++;
	pthread_mutex_unlock(&ep->dom->lock);
	/* the engines need no setup: the join is complete at once */
	memset(&ev, 0, sizeof(ev));
	ev.fid = &m->mc.fid;
	ev.context = context;
	w = fi_eq_write(ep->eq, FI_JOIN_COMPLETE, &ev, sizeof(ev), 0);
	if (w != (ssize_t)sizeof(ev)) {
		mc_close(&m->mc.fid);
		return w < 0 ? (int)w : -FI_EOTHER;
	}
	*mc = &m->mc;
	return 0;
}

/* ---- what is supported ---- */

static size_t
dt_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8:
	case FI_UINT8:
		return 1;
	case FI_INT16:
	case FI_UINT16:
		return 2;
	case FI_INT32:
	case FI_UINT32:
	case FI_FLOAT:
		return 4;
	case FI_INT64:
	case FI_UINT64:
	case FI_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

/* The VNI's type and op for an allreduce or reduce of @p dt with @p op, or -FI_EOPNOTSUPP. */
static int
reduce_map(enum fi_datatype dt, enum fi_op op, int *type, int *vop)
{
	bool integer = dt == FI_INT64 || dt == FI_UINT64;

	if (!integer && dt != FI_DOUBLE)
		return -FI_EOPNOTSUPP;
	*type = dt == FI_INT64    ? TRD_VNI_COLL_I64
		: dt == FI_UINT64 ? TRD_VNI_COLL_U64
				  : TRD_VNI_COLL_DOUBLE;
	switch (op) {
	case FI_SUM:
		*vop = TRD_VNI_COLL_SUM;
		return 0;
	case FI_MIN:
		*vop = TRD_VNI_COLL_MIN;
		return 0;
	case FI_MAX:
		*vop = TRD_VNI_COLL_MAX;
		return 0;
	case FI_BAND:
		*vop = TRD_VNI_COLL_BAND;
		return integer ? 0 : -FI_EOPNOTSUPP;
	case FI_BOR:
		*vop = TRD_VNI_COLL_BOR;
		return integer ? 0 : -FI_EOPNOTSUPP;
	case FI_BXOR:
		*vop = TRD_VNI_COLL_BXOR;
		return integer ? 0 : -FI_EOPNOTSUPP;
	default:
		return -FI_EOPNOTSUPP;
	}
}

#define TFI_COLL_MAX_BYTES ((size_t)TRD_VNI_COLL_MAX_COUNT * 8)

int
tfi_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
		     struct fi_collective_attr *attr, uint64_t flags)
{
	struct fi_collective_attr a;
	int type, vop;
	size_t sz;

	if (domain == NULL || attr == NULL)
		return -FI_EINVAL;
	if (flags != 0)
		return -FI_EOPNOTSUPP;
	if (tfi_copy_in(&a, attr, sizeof(a)) != 0)
		return -FI_EFAULT;
	memset(&a.datatype_attr, 0, sizeof(a.datatype_attr));
	a.max_members = (size_t)256 * 256 * 256; /* one per node of the largest torus */
	a.mode = 0;
	switch (coll) {
	case FI_BARRIER:
		break;
	case FI_BROADCAST:
		sz = dt_size(a.datatype);
		if (sz == 0)
			return -FI_EOPNOTSUPP;
		a.datatype_attr.count = TFI_COLL_MAX_BYTES / sz;
		a.datatype_attr.size = sz;
		break;
	case FI_ALLREDUCE:
	case FI_REDUCE:
		if (reduce_map(a.datatype, a.op, &type, &vop) != 0)
			return -FI_EOPNOTSUPP;
		a.datatype_attr.count = TRD_VNI_COLL_MAX_COUNT;
		a.datatype_attr.size = 8;
		break;
	default:
		return -FI_ENOSYS;
	}
	return tfi_copy_out(attr, &a, sizeof(a));
}

/* ---- posting ---- */

enum coll_kind { COLL_BARRIER, COLL_BCAST, COLL_ALLREDUCE, COLL_REDUCE };

/* The joined group @p coll_addr of @p ep, or NULL. Caller holds the domain lock. */
static struct tfi_mc *
ep_mc(struct tfi_ep *ep, fi_addr_t coll_addr)
{
	if (coll_addr < TFI_MC_ADDR || coll_addr >= TFI_MC_ADDR + TFI_MC_MAX)
		return NULL;
	return ep->mc[coll_addr - TFI_MC_ADDR];
}

/* The node of member @p root_addr of @p m's group, in @p out. Caller holds the domain lock. */
static int
mc_root(struct tfi_ep *ep, const struct tfi_mc *m, fi_addr_t root_addr, struct trd_vni_group *g)
{
	struct trd_vni_addr va;
	const struct tfi_name *nm;

	if (tfi_av_resolve(ep->av, root_addr, &va) != 0)
		return -FI_EINVAL;
	nm = &ep->av->tab[ep->av->last];
	for (int k = 0; k < 3; k++) {
		bool in = (m->g.dims >> k) & 1 ? nm->node[k] >= m->lo[k] && nm->node[k] <= m->hi[k]
					       : nm->node[k] == m->lo[k];
		if (!in)
			return -FI_EINVAL; /* not a member's node */
	}
	g->dims = m->g.dims;
	memcpy(g->root, nm->node, 3);
	return 0;
}

static ssize_t
coll_post(struct tfi_ep *ep, enum coll_kind kind, const void *buf, size_t count,
	  enum fi_datatype dt, enum fi_op fop, void *result, fi_addr_t coll_addr,
	  fi_addr_t root_addr, uint64_t flags, void *context)
{
	struct trd_vni_group g;
	struct tfi_mc *m;
	struct tfi_op *op;
	size_t bytes = 0, words = 0;
	int type = 0, vop = 0, rc;
	bool is_root = false;
	char *pool = NULL;

	switch (kind) {
	case COLL_BARRIER:
		break;
	case COLL_BCAST:
		if (dt_size(dt) == 0)
			return -FI_EOPNOTSUPP;
		if (count == 0 || buf == NULL)
			return -FI_EINVAL;
		if (count > TFI_COLL_MAX_BYTES / dt_size(dt))
			return -FI_EMSGSIZE;
		bytes = count * dt_size(dt);
		words = (bytes + 7) / 8;
		break;
	case COLL_ALLREDUCE:
	case COLL_REDUCE:
		if (reduce_map(dt, fop, &type, &vop) != 0)
			return -FI_EOPNOTSUPP;
		if (count == 0 || buf == NULL)
			return -FI_EINVAL;
		if (count > TRD_VNI_COLL_MAX_COUNT)
			return -FI_EMSGSIZE;
		bytes = count * 8;
		words = count;
		break;
	}
	pthread_mutex_lock(&ep->dom->lock);
	rc = tfi_post_check(ep);
	m = rc == 0 ? ep_mc(ep, coll_addr) : NULL;
	if (rc == 0 && m == NULL)
		rc = -FI_EINVAL;
	if (rc != 0)
		goto out;
	g = m->g;
	if (kind == COLL_BCAST || kind == COLL_REDUCE) {
		rc = mc_root(ep, m, root_addr, &g);
		if (rc != 0)
			goto out;
		is_root = memcmp(g.root, ep->info.node, 3) == 0;
		if (kind == COLL_REDUCE && is_root && result == NULL) {
			rc = -FI_EINVAL;
			goto out;
		}
	} else if (kind == COLL_ALLREDUCE && result == NULL) {
		rc = -FI_EINVAL;
		goto out;
	}
	if (m->busy) { /* the VNI serves one collective per group at a time */
		tfi_ep_progress(ep);
		rc = -FI_EAGAIN;
		goto out;
	}
	op = tfi_op_get(ep);
	if (op == NULL) {
		tfi_ep_progress(ep);
		rc = -FI_EAGAIN;
		goto out;
	}
	if (words > 0) {
		/* allreduce and reduce: source then result; broadcast: one buffer */
		size_t room = (kind == COLL_BCAST ? 1 : 2) * words * 8;

		pool = trd_vni_alloc(ep->vni, room);
		if (pool == NULL) {
			tfi_op_put(ep, op);
			tfi_ep_progress(ep);
			rc = -FI_EAGAIN;
			goto out;
		}
		op->bounce = pool;
		memset(pool + (words * 8 - 8), 0, 8); /* a broadcast's last word's padding */
		if ((kind != COLL_BCAST || is_root) && tfi_copy_in(pool, buf, bytes) != 0) {
			tfi_op_put(ep, op);
			rc = -FI_EFAULT;
			goto out;
		}
	}
	op->kind = TFI_OP_COLL;
	op->context = context;
	op->comp = tfi_tx_comp(ep, flags | ep->tx_op_flags);
	op->cflags = FI_COLLECTIVE;
	op->len = bytes;
	op->result = m;
	op->iov_n = 0;
	if (kind == COLL_BCAST && !is_root) {
		op->iov[0] = (struct iovec){.iov_base = (void *)(uintptr_t)buf, .iov_len = bytes};
		op->iov[1] = (struct iovec){.iov_base = pool, .iov_len = bytes};
		op->iov_n = 1;
	} else if (kind == COLL_ALLREDUCE || (kind == COLL_REDUCE && is_root)) {
		op->iov[0] = (struct iovec){.iov_base = result, .iov_len = bytes};
		op->iov[1] = (struct iovec){.iov_base = pool + words * 8, .iov_len = bytes};
		op->iov_n = 1;
	}
	switch (kind) {
	case COLL_BARRIER:
		rc = trd_vni_barrier(ep->vni, &g, -1, (uint64_t)(uintptr_t)op);
		break;
	case COLL_BCAST:
		rc = trd_vni_bcast(ep->vni, &g, pool, words, -1, (uint64_t)(uintptr_t)op);
		break;
	case COLL_ALLREDUCE:
		rc = trd_vni_allreduce(ep->vni, &g, vop, type, pool, pool + words * 8, words, -1,
				       (uint64_t)(uintptr_t)op);
		break;
	case COLL_REDUCE:
		rc = trd_vni_reduce(ep->vni, &g, vop, type, pool, pool + words * 8, words, -1,
				    (uint64_t)(uintptr_t)op);
		break;
	}
	if (rc != 0) {
		tfi_op_put(ep, op);
		rc = tfi_post_rc(ep, rc);
		goto out;
	}
	m->busy = true;
out:
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

/* A collective's VNI completion (tfi_progress.c, op_complete): the result into the
 * application's buffer, one CQ entry (an error entry on failure). Caller holds the lock. */
void
tfi_coll_complete(struct tfi_ep *ep, struct tfi_op *op, int status)
{
	struct tfi_mc *m = op->result;
	struct tfi_cqe e;

	if (m != NULL)
		m->busy = false;
	if (status == 0 && op->iov_n == 1 &&
	    tfi_copy_out(op->iov[0].iov_base, op->iov[1].iov_base, op->iov[0].iov_len) != 0)
		status = -EFAULT;
	memset(&e, 0, sizeof(e));
	e.e.op_context = op->context;
	e.e.flags = op->cflags;
	e.e.len = status == 0 && op->iov_n == 1 ? op->len : 0;
	e.e.buf = op->iov_n == 1 ? op->iov[0].iov_base : NULL;
	e.src = FI_ADDR_NOTAVAIL;
	if (status != 0) {
		FI_WARN(&tfi_prov, FI_LOG_EP_DATA, "collective of %zu B failed: %s\n", op->len,
			strerror(-status));
		e.err = tfi_errno(status);
		e.prov_errno = -status;
	}
	if (ep->txcq != NULL && (op->comp || status != 0))
		tfi_cq_push(ep->txcq, &e);
	op->result = NULL;
	tfi_op_put(ep, op);
}

static ssize_t
coll_barrier(struct fid_ep *e, fi_addr_t coll_addr, void *context)
{
	return coll_post(to_ep(e), COLL_BARRIER, NULL, 0, FI_VOID, FI_NOOP, NULL, coll_addr,
			 FI_ADDR_NOTAVAIL, 0, context);
}

static ssize_t
coll_barrier2(struct fid_ep *e, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	if (flags & ~(uint64_t)FI_COMPLETION)
		return -FI_EOPNOTSUPP;
	return coll_post(to_ep(e), COLL_BARRIER, NULL, 0, FI_VOID, FI_NOOP, NULL, coll_addr,
			 FI_ADDR_NOTAVAIL, flags, context);
}

static ssize_t
coll_broadcast(struct fid_ep *e, void *buf, size_t count, void *desc, fi_addr_t coll_addr,
	       fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return coll_post(to_ep(e), COLL_BCAST, buf, count, datatype, FI_NOOP, NULL, coll_addr,
			 root_addr, flags, context);
}

static ssize_t
coll_allreduce(struct fid_ep *e, const void *buf, size_t count, void *desc, void *result,
	       void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op,
	       uint64_t flags, void *context)
{
	return coll_post(to_ep(e), COLL_ALLREDUCE, buf, count, datatype, op, result, coll_addr,
			 FI_ADDR_NOTAVAIL, flags, context);
}

static ssize_t
coll_reduce(struct fid_ep *e, const void *buf, size_t count, void *desc, void *result,
	    void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
	    enum fi_op op, uint64_t flags, void *context)
{
	return coll_post(to_ep(e), COLL_REDUCE, buf, count, datatype, op, result, coll_addr,
			 root_addr, flags, context);
}

/* What the engines do not combine: all-to-all, gathers, scatters. */
static ssize_t
coll_no_xfer(struct fid_ep *e, const void *buf, size_t count, void *desc, void *result,
	     void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags,
	     void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
coll_no_reduce_scatter(struct fid_ep *e, const void *buf, size_t count, void *desc, void *result,
		       void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype,
		       enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
coll_no_rooted(struct fid_ep *e, const void *buf, size_t count, void *desc, void *result,
	       void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr,
	       enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
coll_no_msg(struct fid_ep *e, const struct fi_msg_collective *msg, struct fi_ioc *resultv,
	    void **result_desc, size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective tfi_coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = coll_barrier,
	.broadcast = coll_broadcast,
	.alltoall = coll_no_xfer,
	.allreduce = coll_allreduce,
	.allgather = coll_no_xfer,
	.reduce_scatter = coll_no_reduce_scatter,
	.reduce = coll_reduce,
	.scatter = coll_no_rooted,
	.gather = coll_no_rooted,
	.msg = coll_no_msg,
	.barrier2 = coll_barrier2,
};
