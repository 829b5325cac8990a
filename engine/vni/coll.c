/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: collectives computed by the engines for attached processes (docs/vni.md,
 * "Collectives"). A TRD_VNI_CMD_COLL context is read once and every field checked (the
 * buffers inside the pool, the count within TRD_COMB_MAX_LEN) before it becomes a
 * trd_comb_post() of this node, counting on a counter of its own; the service watches the
 * counter and writes the one completion. The interface is held (a reference) while the
 * node's engine may still read or write its pool: a process that dies mid-collective leaves
 * its part to finish, without a completion. A handle's collective (TRD_VNI_CF_MU, the
 * process's trd_comb_post()) has its buffers in the process's region and ends on its own
 * counter instead: 1 subtracted, or marked failed, and the context marked ended.
 */
#include <errno.h>
#include <string.h>

#include <toroid/comb.h>

#include "coll_pvt.h"
#include "iface_pvt.h"
#include "mu_pvt.h"

_Static_assert((int)TRD_VNI_COLL_SUM == (int)TRD_COMB_SUM &&
		       (int)TRD_VNI_COLL_BXOR == (int)TRD_COMB_BXOR &&
		       (int)TRD_VNI_COLL_I64 == (int)TRD_COMB_I64 &&
		       (int)TRD_VNI_COLL_DOUBLE == (int)TRD_COMB_DOUBLE,
	       "the library's values are the engine's");
_Static_assert(TRD_VNI_COLL_MAX_COUNT == TRD_COMB_MAX_LEN / TRD_COMB_ELEM, "largest vector");
_Static_assert(SVC_N_COLL > TRD_COMB_TORUS, "one slot per group mask");

/* A pool range for @p len bytes at offset @p off, 8-byte aligned: its address, or NULL. */
static uint8_t *
pool_span(const struct vif *v, uint64_t off, uint64_t len)
{
	if (off > v->pool_size || len > v->pool_size - off || off % TRD_COMB_ELEM != 0)
		return NULL;
	return v->pool + off;
}

/* The end of a collective of @p v's send context @p idx: its completion; for a handle's
 * (CF_MU), the context marked ended and its counter @p pctr (the node's id, 0: none valid)
 * counted. */
static void
coll_end(struct trd_vni_svc *s, struct vif *v, uint32_t idx, const struct trd_vni_cctx *c,
	 uint16_t pctr, int status, uint32_t len)
{
	if (c->flags & TRD_VNI_CF_MU) {
		struct trd_vni_cctx *ctx = (struct trd_vni_cctx *)(void *)&v->sctx[idx];

		/* the context first: a process that sees its counter at zero may post the next
		 * collective of the group at once, and must find this one ended */
		v->sbusy[idx] = 0;
		__atomic_store_n(&ctx->ended, 1, __ATOMIC_RELEASE);
		if (pctr != 0 && status == 0)
			trd_counter_add(s->node, pctr, -1);
		else if (pctr != 0)
			trd_counter_set(s->node, pctr, TRD_COUNTER_FAILED);
		return;
	}
	svc_vif_cqe(s, v, TRD_VNI_CPL_COLL, idx, status, len, 0, v->app, v->proc,
		    (c->flags & TRD_VNI_F_DOORBELL) != 0 && c->doorbell < v->n_db, c->doorbell, 0,
		    0);
	v->sbusy[idx] = 0;
}

/* A buffer of @p len bytes at offset @p off: of the pool, or of a handle's region (CF_MU). */
static uint8_t *
coll_span(const struct vif *v, const struct trd_vni_cctx *c, uint64_t off, uint64_t len)
{
	return (c->flags & TRD_VNI_CF_MU) ? svc_mu_span(v, off, len) : pool_span(v, off, len);
}

void
svc_cmd_coll(struct trd_vni_svc *s, struct vif *v, uint32_t idx, const struct trd_vni_cctx *c)
{
	struct trd_comb_req rq;
	struct vcoll *k;
	unsigned int dims = c->dims == 0 ? TRD_COMB_TORUS : c->dims;
	uint64_t len = (uint64_t)c->count * TRD_COMB_ELEM;
	bool root, want_src, want_dst;
	uint16_t ctr, pctr = 0;
	int rc;

	ST(s, COLLS)++;
	/* a handle's: on one of its own counters, no doorbell */
	if ((c->flags & TRD_VNI_CF_MU) &&
	    ((c->flags & TRD_VNI_F_DOORBELL) || (pctr = svc_mu_ctr(v, c->ctr)) == 0)) {
		ST(s, BAD_CMDS)++;
		coll_end(s, v, idx, c, 0, -EINVAL, 0);
		return;
	}
	if ((c->flags & ~(TRD_VNI_F_DOORBELL | TRD_VNI_CF_MU)) || dims > TRD_COMB_TORUS ||
	    ((c->flags & TRD_VNI_F_DOORBELL) && c->doorbell >= v->n_db) ||
	    c->kind < TRD_COMB_ALLREDUCE || c->kind > TRD_COMB_BARRIER) {
		ST(s, BAD_CMDS)++;
		coll_end(s, v, idx, c, pctr, -EINVAL, 0);
		return;
	}
	if (c->count > TRD_VNI_COLL_MAX_COUNT) {
		ST(s, BAD_CMDS)++;
		coll_end(s, v, idx, c, pctr, -EMSGSIZE, 0);
		return;
	}
	memset(&rq, 0, sizeof(rq));
	rq.kind = c->kind;
	rq.op = c->op;
	rq.dtype = c->dtype;
	rq.dims = (uint8_t)dims;
	rq.root.x = c->root[0];
	rq.root.y = c->root[1];
	rq.root.z = c->root[2];
	rq.count = c->count;
	rq.job = v->app; /* another application's collective of the group is not combined */
	root = rq.root.x == s->coord.x && rq.root.y == s->coord.y && rq.root.z == s->coord.z;
	/* the buffers this node's part uses; any other the process named is ignored */
	want_src = c->kind == TRD_COMB_ALLREDUCE || c->kind == TRD_COMB_REDUCE ||
		   (c->kind == TRD_COMB_BCAST && root);
	want_dst = c->kind == TRD_COMB_ALLREDUCE || (c->kind == TRD_COMB_REDUCE && root) ||
		   (c->kind == TRD_COMB_BCAST && !root);
	if (want_src && (rq.src = coll_span(v, c, c->src, len)) == NULL) {
		ST(s, BAD_CMDS)++;
		coll_end(s, v, idx, c, pctr, -EINVAL, 0);
		return;
	}
	if (want_dst && (rq.dst = coll_span(v, c, c->dst, len)) == NULL) {
		ST(s, BAD_CMDS)++;
		coll_end(s, v, idx, c, pctr, -EINVAL, 0);
		return;
	}
	k = &s->colls[dims];
	if (k->vif != NULL) {
		ST(s, COLL_BUSY)++;
		coll_end(s, v, idx, c, pctr, -EBUSY, 0);
		return;
	}
	if (trd_counter_alloc(s->node, &ctr) != 0) {
		coll_end(s, v, idx, c, pctr, -ENOBUFS, 0);
		return;
	}
	trd_counter_set(s->node, ctr, 1);
	rq.counter = ctr;
	rc = trd_comb_post(s->node, &rq);
	if (rc != 0) {
		/* op, type, group, root, a barrier's count, the links: trd_comb_post() checks */
		trd_counter_free(s->node, ctr);
		if (rc == -EINVAL || rc == -EMSGSIZE)
			ST(s, BAD_CMDS)++;
		coll_end(s, v, idx, c, pctr, rc, 0);
		return;
	}
	k->vif = v;
	k->idx = idx;
	k->ctr = ctr;
	k->len = (uint32_t)len;
	k->flags = c->flags;
	k->doorbell = c->doorbell;
	k->pctr = pctr;
	v->refs++; /* its pool stays mapped while the engine may use it */
	s->n_colls++;
}

unsigned int
svc_colls_poll(struct trd_vni_svc *s)
{
	unsigned int done = 0;

	if (s->n_colls == 0)
		return 0;
	for (unsigned int g = 0; g < SVC_N_COLL; g++) {
		struct vcoll *k = &s->colls[g];
		struct trd_vni_cctx c;
		struct vif *v = k->vif;
		int64_t left;
		int st;

		if (v == NULL || trd_counter_read(s->node, k->ctr, &left) != 0 || left > 0)
			continue;
		/* 0: complete here (the result is in the pool: the engine wrote it before it
		 * counted); below it (TRD_COUNTER_FAILED): the collective failed */
		st = left == 0 ? 0 : -EHOSTUNREACH;
		trd_counter_free(s->node, k->ctr);
		memset(&c, 0, sizeof(c));
		c.flags = k->flags;
		c.doorbell = k->doorbell;
		if (st == 0)
			ST(s, COLL_DONE)++;
		else
			ST(s, COLL_FAILED)++;
		if (!v->dead)
			coll_end(s, v, k->idx, &c, k->pctr, st, st == 0 ? k->len : 0);
		k->vif = NULL;
		s->n_colls--;
		v->refs--;
		svc_vif_release_maybe(s, v);
		done++;
	}
	return done;
}

void
svc_colls_fini(struct trd_vni_svc *s)
{
	for (unsigned int g = 0; g < SVC_N_COLL; g++)
		if (s->colls[g].vif != NULL) {
			trd_counter_free(s->node, s->colls[g].ctr);
			s->colls[g].vif = NULL;
		}
	s->n_colls = 0;
}
