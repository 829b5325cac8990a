/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion notification by reflection.
 *
 * trd_inject_reflect() posts the data descriptor and, right behind it in the same FIFO, a
 * remote get to the reflection node that carries the completion descriptor. The reflection
 * node's engine injects the carried descriptor into its own engine FIFO and sends it back
 * with no application involved. The origin accepts a completion only for an id it handed out
 * and has not seen completed: anything else is dropped as unknown_completion.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_power_intrinsics.h>
#include <rte_ring.h>

#include "core_pvt.h"

int
trd_node_set_reflector(struct trd_node *n, struct trd_coord r)
{
	if (n == NULL || !trd_torus_contains(&n->torus, r) ||
	    trd_torus_hops(&n->torus, n->coord, r) != 1)
		return -EINVAL;
	if (n->att != NULL) {
		n->reflector = r; /* a handle's: trd_inject_reflect() reads it there */
		n->reflector_set = true;
		return 0;
	}

	for (unsigned int k = 0; k < n->n_shares; k++) {
		n->sh[k]->reflector = r;
		n->sh[k]->reflector_set = true;
	}
	return 0;
}

int
trd_node_reflector(const struct trd_node *n, struct trd_coord *out)
{
	if (n == NULL || out == NULL)
		return -EINVAL;
	if (n->att != NULL) {
		*out = trd_attach_reflector(n);
		return 0;
	}
	if (n->reflector_set) {
		*out = n->reflector;
		return 0;
	}
	/* the neighbour on the first usable link, in direction order */
	for (int d = 0; d < TRD_DIR_COUNT; d++)
		if (n->dir_link[d] != NULL &&
		    trd_torus_step(&n->torus, n->coord, (enum trd_dir)d, out) == 0)
			return 0;
	if (n->sw_link != NULL)
		for (int d = 0; d < TRD_DIR_COUNT; d++)
			if (trd_torus_step(&n->torus, n->coord, (enum trd_dir)d, out) == 0)
				return 0;
	return -ENOENT;
}

int
trd_cpl_desc(const struct trd_node *n, const struct trd_cpl_spec *spec, struct trd_desc *b)
{
	switch (spec->kind) {
	case TRD_CPL_FIFO:
		if (spec->fifo >= n->n_rec)
			return -EINVAL;
		/* (a handle's FIFO k is named by its node id) */
		trd_desc_fifo(b, n->coord, n->att != NULL ? n->rec[spec->fifo]->id : spec->fifo,
			      NULL, 0, spec->cookie, 0);
		return 0;
	case TRD_CPL_DOORBELL:
		if (spec->doorbell == NULL || spec->doorbell->node != n ||
		    !spec->doorbell->doorbell || spec->doorbell->key == 0 ||
		    spec->offset % 8 != 0 || spec->offset > spec->doorbell->len - 8)
			return -EINVAL;
		trd_desc_put(b, n->coord, NULL, 8, spec->doorbell->key, spec->offset, 0, 0);
		b->flags = TRD_DF_IMM;
		b->user = spec->cookie;
		return 0;
	default:
		return -EINVAL;
	}
}

int
trd_inject_reflect(struct trd_inj_fifo *f, const struct trd_desc *data,
		   const struct trd_cpl_spec *spec)
{
	struct trd_desc d[2], b;
	struct trd_node *n;
	struct trd_coord refl;
	uintptr_t id;
	int rc;

	if (f == NULL || data == NULL || spec == NULL ||
	    (data->op != TRD_OP_PUT && data->op != TRD_OP_FIFO) ||
	    (spec->mode != TRD_CPL_LOCAL && spec->mode != TRD_CPL_DELIVERY))
		return -EINVAL;
	n = f->node;
	if (spec->mode == TRD_CPL_DELIVERY) {
		refl = data->dst;
	} else if (spec->reflector != NULL) {
		refl = *spec->reflector;
		if (!trd_torus_contains(&n->torus, refl) ||
		    trd_torus_hops(&n->torus, n->coord, refl) != 1)
			return -EINVAL; /* a reflector is a nearest neighbour */
	} else if (trd_node_reflector(n, &refl) != 0) {
		refl = data->dst; /* no neighbour at all: the target reflects */
	}
	if (n->att != NULL)
		return trd_attach_reflect(f, data, spec, refl); /* by its engine FIFO, no id */

	if (trd_cpl_desc(n, spec, &b) != 0)
		return -EINVAL;
	if (rte_ring_dequeue(n->cpl_free, (void **)&id) != 0)
		return -ENOSPC;
	n->cpl[id - 1].cookie = spec->cookie;
	n->cpl[id - 1].kind = (uint8_t)spec->kind;
	n->cpl[id - 1].fifo = spec->fifo;
	n->cpl[id - 1].refl = 0;
	/* counted before it can be failed (a reflector declared down fails what is pending) */
	__atomic_fetch_add(&n->main->cpl_pending, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&n->cpl[id - 1].state, CPL_PENDING, __ATOMIC_RELEASE);
	trd_cpl_set_peer(n, (uint32_t)id, (uint32_t)trd_torus_rank(&n->torus, refl));
	b.flags |= TRD_DF_CPL;
	b.aux = (uint32_t)id;

	d[0] = *data;
	/* A local completion says the source may be reused: whatever the reliability layer may
	 * have to resend after it comes is the engine's copy, never the application's buffer. */
	if (spec->mode == TRD_CPL_LOCAL)
		d[0].flags |= TRD_DF_COPY;
	trd_desc_rget(&d[1], refl, TRD_ENGINE_FIFO, &b, 1);
	d[1].flags = TRD_DF_ORDERED;
	rc = trd_inject_bulk(f, d, 2);
	if (rc != 0) /* given back unless a failure took it meanwhile (and gave it back itself) */
		trd_cpl_take_back(n, (uint32_t)id);
	return rc;
}
