/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni: collectives computed by the engines (include/toroid/vni.h, docs/vni.md
 * "Collectives"), posted as send contexts (struct trd_vni_cctx, TRD_VNI_CMD_COLL). The library
 * turns pointers into pool offsets and nothing more: op, type, count, group and the buffers'
 * ends are the engine's to check, as it must for a process that writes its segment by hand.
 */
#include <errno.h>
#include <string.h>

#include "app_pvt.h"

/* Values of enum trd_comb_kind (<toroid/wire.h>), which this library does not include. */
enum { COLL_ALLREDUCE = 1, COLL_REDUCE = 2, COLL_BCAST = 3, COLL_BARRIER = 4 };

/* The pool offset of @p p, TRD_VNI_COLL_NONE for NULL: 0, or -EINVAL outside the pool. */
static int
pool_off(const struct trd_vni *v, const void *p, uint64_t *off)
{
	const uint8_t *b = p;

	if (p == NULL) {
		*off = TRD_VNI_COLL_NONE;
		return 0;
	}
	if (b < v->pool || b >= v->pool + v->seg->pool_size)
		return -EINVAL;
	*off = (uint64_t)(b - v->pool);
	return 0;
}

/* Queue collective @p c in a free send context (its index in *@p idx if not NULL): 0, -EAGAIN,
 * -ECONNRESET. */
static int
coll_queue(struct trd_vni *v, const struct trd_vni_cctx *c, uint64_t cookie, void *dst,
	   uint32_t *idx)
{
	uint32_t i;
	int rc = vnic_check_live(v);

	if (rc != 0)
		return rc;
	if (v->n_sfree == 0)
		return -EAGAIN;
	i = v->sfree[--v->n_sfree];
	*(struct trd_vni_cctx *)(void *)&v->sctx[i] = *c;
	v->sc[i].cookie = cookie;
	v->sc[i].buf = dst;
	v->sc[i].peer = v->self;
	rc = vnic_post(v, TRD_VNI_CMD_COLL, i);
	if (rc != 0)
		v->sfree[v->n_sfree++] = i;
	else if (idx != NULL)
		*idx = i;
	return rc;
}

static int
coll_post(struct trd_vni *v, const struct trd_vni_group *g, uint8_t kind, int op, int type,
	  const void *src, void *dst, size_t count, int doorbell, uint64_t cookie)
{
	struct trd_vni_cctx c;

	if (v == NULL || !vnic_db_ok(v, doorbell) || (g != NULL && g->dims > 7))
		return -EINVAL;
	if (count > UINT32_MAX)
		return -EMSGSIZE;
	memset(&c, 0, sizeof(c));
	/* op and type as given, within a byte (a value over 255 is unknown anyway) */
	c.op = op < 0 || op > UINT8_MAX ? UINT8_MAX : (uint8_t)op;
	c.dtype = type < 0 || type > UINT8_MAX ? UINT8_MAX : (uint8_t)type;
	c.kind = kind;
	c.count = (uint32_t)count;
	if (g != NULL) {
		c.dims = (uint8_t)g->dims;
		memcpy(c.root, g->root, sizeof(c.root));
	}
	if (pool_off(v, src, &c.src) != 0 || pool_off(v, dst, &c.dst) != 0)
		return -EINVAL;
	if (doorbell >= 0) {
		c.flags = TRD_VNI_F_DOORBELL;
		c.doorbell = (uint32_t)doorbell;
	}
	return coll_queue(v, &c, cookie, dst, NULL);
}

int
trd_vni_allreduce(struct trd_vni *v, const struct trd_vni_group *g, int op, int type,
		  const void *src, void *dst, size_t count, int doorbell, uint64_t cookie)
{
	if (src == NULL || dst == NULL)
		return -EINVAL;
	return coll_post(v, g, COLL_ALLREDUCE, op, type, src, dst, count, doorbell, cookie);
}

int
trd_vni_reduce(struct trd_vni *v, const struct trd_vni_group *g, int op, int type, const void *src,
	       void *dst, size_t count, int doorbell, uint64_t cookie)
{
	if (src == NULL)
		return -EINVAL;
	return coll_post(v, g, COLL_REDUCE, op, type, src, dst, count, doorbell, cookie);
}

int
trd_vni_bcast(struct trd_vni *v, const struct trd_vni_group *g, void *buf, size_t count,
	      int doorbell, uint64_t cookie)
{
	if (buf == NULL)
		return -EINVAL;
	/* the root's buffer is the source, the others' the destination: the engine knows which
	 * this node is */
	return coll_post(v, g, COLL_BCAST, 0, TRD_VNI_COLL_U64, buf, buf, count, doorbell, cookie);
}

int
trd_vni_barrier(struct trd_vni *v, const struct trd_vni_group *g, int doorbell, uint64_t cookie)
{
	return coll_post(v, g, COLL_BARRIER, 0, 0, NULL, NULL, 0, doorbell, cookie);
}

int
vnic_coll_mu(struct trd_vni *v, const struct trd_vni_cctx *c, uint32_t *idx)
{
	struct trd_vni_cctx m = *c;

	int rc;

	m.flags = TRD_VNI_CF_MU;
	m.ended = 0;
	rc = coll_queue(v, &m, 0, NULL, idx);
	/* no completion comes for it: not pending (trd_vni_pending()) */
	if (rc == 0 && v->pending > 0)
		v->pending--;
	return rc;
}

bool
vnic_coll_mu_ended(struct trd_vni *v, uint32_t idx)
{
	const struct trd_vni_cctx *sc = (const struct trd_vni_cctx *)(const void *)&v->sctx[idx];

	if (!__atomic_load_n(&sc->ended, __ATOMIC_ACQUIRE))
		return false;
	v->sfree[v->n_sfree++] = idx;
	return true;
}
