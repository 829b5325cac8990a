/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node handle for a process attached to toroid-node (engine/core/api/attach_api.h): the
 * calls of <toroid/toroid.h> on a node, an injection or reception FIFO or a region take it and
 * hand the work to the layer that attached it. Its memory is the C library's, never DPDK's:
 * such a process has no EAL. Counters are read and written here, in the process's mapping
 * of its block (n->ctr is laid so that n->ctr[id] is node counter id), as for any node.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "api/attach_api.h"
#include "core_pvt.h"
#include "node_pvt.h"

/* the operations of the first handle: what frees a message of an attached FIFO, which
 * carries no pointer to its node (one attaching layer per process) */
static const struct trd_attach_ops *msg_ops;

_Static_assert(offsetof(struct trd_attach_msg, none[0]) == offsetof(struct trd_msg_pvt, m) &&
		       offsetof(struct trd_attach_msg, none[1]) ==
			       offsetof(struct trd_msg_pvt, blk),
	       "trd_msg_free() reads an attached message's header as the core's own");

static struct trd_inj_fifo *
fifo_shell(struct trd_node *n, unsigned int id)
{
	struct trd_inj_fifo *f = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*f), 64));

	if (f != NULL) {
		memset(f, 0, sizeof(*f));
		f->node = n; /* ring NULL: trd_inject() hands it to n->att */
		f->id = (uint8_t)id;
	}
	return f;
}

static void
shell_free(struct trd_node *n)
{
	for (unsigned int i = 0; i < n->n_fifo; i++)
		free(n->fifo[i]);
	for (unsigned int i = 0; i < n->n_rec; i++)
		free(n->rec[i]);
	free(n->ctr_used);
	free(n->mrs);
	free(n);
}

struct trd_node *
trd_node_attach_new(const struct trd_attach_conf *c)
{
	struct trd_node *n;
	int rank;

	if (c == NULL || c->ops == NULL || c->n_fifos > TRD_MAX_FIFOS ||
	    c->n_rfifos > TRD_MAX_FIFOS || (c->n_rfifos != 0 && c->rfifo_ids == NULL) ||
	    (c->n_ctrs != 0 && (c->ctrs == NULL || c->ctr_base == 0)) ||
	    (uint32_t)c->ctr_base + c->n_ctrs > 65536) {
		rte_errno = EINVAL;
		return NULL;
	}
	n = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*n), 64));
	if (n == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	rank = trd_torus_rank(&c->torus, c->coord);
	if (rank < 0) {
		free(n);
		rte_errno = EINVAL;
		return NULL;
	}
	n->att = c->ops;
	n->att_ctx = c->ctx;
	n->torus = c->torus;
	n->coord = c->coord;
	n->rank = (uint32_t)rank;
	n->n_nodes = trd_torus_size(&c->torus);
	snprintf(n->name, sizeof(n->name), "%s", c->name != NULL ? c->name : "attached");
	/* counter k of the block is node counter ctr_base + k; k = 0 is never given */
	n->conf.n_counters = (uint32_t)c->ctr_base + c->n_ctrs;
	n->ctr_first = (uint32_t)c->ctr_base + 1;
	n->ctr_end = (uint32_t)c->ctr_base + c->n_ctrs;
	n->ctr = c->n_ctrs != 0 ? (int64_t *)(uintptr_t)((uintptr_t)c->ctrs -
							 (uintptr_t)c->ctr_base * sizeof(int64_t))
				: NULL;
	n->ctr_used = calloc(n->conf.n_counters + 1u, 1);
	if (n->ctr_used == NULL)
		goto nomem;
	/* its regions, in a table of its own: trd_mr_find() looks there as on any node */
	n->conf.n_regions = c->n_regions;
	n->mrs = c->n_regions != 0 ? calloc(c->n_regions, sizeof(*n->mrs)) : NULL;
	if (c->n_regions != 0 && n->mrs == NULL)
		goto nomem;
	for (unsigned int i = 0; i < c->n_fifos; i++) {
		n->fifo[i] = fifo_shell(n, i);
		if (n->fifo[i] == NULL)
			goto nomem;
		n->n_fifo = i + 1;
	}
	for (unsigned int i = 0; i < c->n_rfifos; i++) {
		n->rec[i] = calloc(1, sizeof(*n->rec[i]));
		if (n->rec[i] == NULL)
			goto nomem;
		n->rec[i]->node = n; /* ring NULL: its polls go to n->att */
		n->rec[i]->id = c->rfifo_ids[i];
		n->n_rec = i + 1;
	}
	if (msg_ops == NULL)
		msg_ops = c->ops;
	return n;
nomem:
	shell_free(n);
	rte_errno = ENOMEM;
	return NULL;
}

void *
trd_node_attach_ctx(const struct trd_node *n)
{
	return n != NULL ? n->att_ctx : NULL;
}

void
trd_attach_free(struct trd_node *n)
{
	for (unsigned int i = 0; i < n->n_eqs; i++)
		trd_eq_free(n->eqs[i]); /* the attaching layer's queues, before it goes */
	n->att->close(n);
	shell_free(n);
}

void
trd_attach_msg_free(struct trd_msg *msg)
{
	if (msg_ops != NULL && msg->fifo >= TRD_GUEST_RFIFO_FIRST)
		msg_ops->msg_free(msg);
}

struct trd_mr *
trd_attach_mr_register(struct trd_node *n, void *addr, size_t len, unsigned int access,
		       struct trd_eq *eq)
{
	struct trd_mr *mr = NULL;
	uint64_t key;
	int rc;

	for (unsigned int i = 0; i < n->conf.n_regions && mr == NULL; i++)
		if (n->mrs[i].key == 0)
			mr = &n->mrs[i];
	if (mr == NULL) {
		rte_errno = ENOSPC;
		return NULL;
	}
	rc = eq != NULL ? n->att->doorbell_register(n, addr, len, eq->att, &key)
			: n->att->mr_register(n, addr, len, access, &key);
	if (rc != 0) {
		rte_errno = -rc;
		return NULL;
	}
	memset(mr, 0, sizeof(*mr));
	mr->node = n;
	mr->base = addr;
	mr->len = len;
	mr->access = access;
	mr->key = key;
	mr->iova = RTE_BAD_IOVA;
	mr->slot = (uint16_t)(mr - n->mrs);
	return mr;
}

int
trd_attach_mr_deregister(struct trd_mr *mr)
{
	int rc = mr->node->att->mr_deregister(mr->node, mr->key);

	mr->key = 0; /* the slot is free again */
	return rc;
}

/* The handle's reflector for a local completion: the one trd_node_set_reflector() gave, else
 * its neighbour along X, else Y, else Z (the first dimension longer than 1), else itself (a
 * torus of one node: its own engine echoes). */
struct trd_coord
trd_attach_reflector(const struct trd_node *n)
{
	struct trd_coord c = n->coord;

	if (n->reflector_set)
		return n->reflector;
	if (n->torus.dim[0] > 1)
		c.x = (uint8_t)((c.x + 1) % n->torus.dim[0]);
	else if (n->torus.dim[1] > 1)
		c.y = (uint8_t)((c.y + 1) % n->torus.dim[1]);
	else if (n->torus.dim[2] > 1)
		c.z = (uint8_t)((c.z + 1) % n->torus.dim[2]);
	return c;
}

int
trd_attach_reflect(struct trd_inj_fifo *f, const struct trd_desc *data,
		   const struct trd_cpl_spec *spec, struct trd_coord refl)
{
	struct trd_node *n = f->node;
	struct trd_desc d[2], b;
	uint32_t id = 0;
	int rc;

	/* the completion: an empty message back into our own FIFO, or the cookie put into our
	 * doorbell region, which the reflector's engine sends once every earlier packet of this
	 * FIFO was taken by the port (ordered), and, in delivery mode, after the data, which the
	 * session delivers first */
	if (trd_cpl_desc(n, spec, &b) != 0)
		return -EINVAL;
	if (spec->kind == TRD_CPL_FIFO) {
		/* by a completion id, as in-process: the engine gives it one of the node's,
		 * which it fails when the reflector is declared down; the message names our
		 * tracked id, whose outcome brings the cookie back (docs/vni.md, "Reflection by
		 * completion id") */
		rc = n->att->track_open(n, spec->fifo, spec->cookie, NULL, &id);
		if (rc != 0)
			return rc;
		b.flags = TRD_DF_CPL;
		b.user = id;
	}
	d[0] = *data;
	trd_desc_rget(&d[1], refl, TRD_ENGINE_FIFO, &b, 1);
	d[1].flags = TRD_DF_ORDERED;
	rc = n->att->inject(n, f->id, d, 2);
	if (rc != 0 && id != 0)
		n->att->track_unposted(n, id);
	return rc;
}

const struct trd_mr *
trd_node_attach_mr(const struct trd_node *n, uint64_t key)
{
	for (unsigned int i = 0; n != NULL && key != 0 && i < n->conf.n_regions; i++)
		if (n->mrs[i].key == key)
			return &n->mrs[i];
	return NULL;
}
