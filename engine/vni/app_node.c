/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One API (docs/vni.md, "One API"): a process attached to toroid-node gets a struct trd_node
 * from trd_node_attach(), and the core's calls on it (trd_inject, trd_counter_*,
 * trd_mr_register, trd_rec_fifo_*, trd_mem_alloc, trd_node_free) work as on a node made in the
 * process: the core hands each to the operations here (engine/core/api/attach_api.h), which
 * use the interface's messaging-unit objects. Counter ids are the node's, as an in-process
 * program's are; memory the engine reaches is the process's region (trd_mem_alloc()).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include <toroid/comb.h>
#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "app_node_pvt.h"
#include "app_pvt.h"
#include "attach_api.h"

#define AN_BULK 64 /* descriptors one trd_inject_bulk() takes */
#define AN_HDR  64 /* before each block of trd_mem_alloc(): its length */

/* A counter id of the node to the interface's number: 0 stays 0, -1 if not its own. */
static int
an_ctr(const struct an_node *a, uint16_t id)
{
	if (id == 0)
		return 0;
	if (id <= a->v->ctr_base || id >= a->v->ctr_base + TRD_COUNTER_BLOCK)
		return -1;
	return id - a->v->ctr_base;
}

/* Where [p, p + len) is in the region: 0 with *off, or -EFAULT. */
static int
an_region_off(const struct an_node *a, const void *p, uint64_t len, uint64_t *off)
{
	const uint8_t *b = p;
	const struct trd_vni *v = a->v;

	if (v->region == NULL || b < v->region || (uint64_t)(b - v->region) > v->region_len ||
	    len > v->region_len - (uint64_t)(b - v->region))
		return -EFAULT;
	*off = (uint64_t)(b - v->region);
	return 0;
}

struct an_track *
an_track_find(struct an_node *a, uint64_t id)
{
	uint64_t i = (id & ((1u << AN_TRACK_USE) - 1)) - 1;
	struct an_track *t;

	if (id == 0 || id > UINT32_MAX || i >= AN_TRACKS)
		return NULL;
	t = &a->trk[i];
	return t->rx != 0 && id >> AN_TRACK_USE == t->use ? t : NULL;
}

static void
an_track_put(struct an_node *a, struct an_track *t)
{
	t->rx = 0;
	a->trk_free[a->n_trk_free++] = (uint16_t)(t - a->trk);
}

static int
an_track_open(struct trd_node *n, uint8_t rfifo, uint64_t cookie, uint64_t *result, uint32_t *id)
{
	struct an_node *a = an_of(n);
	struct an_track *t;

	if (rfifo >= a->v->n_rx)
		return -EINVAL;
	if (a->n_trk_free == 0)
		return -ENOSPC;
	t = &a->trk[a->trk_free[--a->n_trk_free]];
	t->use = (t->use + 1) & ((1u << (32 - AN_TRACK_USE)) - 1);
	t->rx = (uint8_t)(rfifo + 1);
	t->cookie = cookie;
	t->result = result;
	*id = t->use << AN_TRACK_USE | (uint32_t)(t - a->trk + 1);
	return 0;
}

/* Tell the engine of the ids closed (TRD_OP_UNTRACK in FIFO 0): those still waiting there
 * for an outcome that may never come (a remote get that succeeded) give their engine ids back.
 * What FIFO 0 has no room for now goes with the next call. */
static void
an_untrack_flush(struct an_node *a)
{
	while (a->n_untrack != 0) {
		struct trd_desc d[AN_BULK];
		unsigned int k = a->n_untrack < AN_BULK ? a->n_untrack : AN_BULK;

		for (unsigned int i = 0; i < k; i++)
			d[i] = (struct trd_desc){.op = TRD_OP_UNTRACK,
						 .aux = a->untrack[a->n_untrack - k + i]};
		if (trd_vni_inject(a->v, 0, d, k) != 0)
			return;
		a->n_untrack -= k;
	}
}

static void
an_track_unposted(struct trd_node *n, uint32_t id)
{
	struct an_track *t = an_track_find(an_of(n), id);

	if (t != NULL)
		an_track_put(an_of(n), t); /* (no TRD_OP_UNTRACK: nothing waits in the engine) */
}

static int
an_track_close(struct trd_node *n, uint32_t id)
{
	struct an_node *a = an_of(n);
	struct an_track *t = an_track_find(a, id);

	if (t == NULL)
		return -EINVAL;
	an_track_put(a, t);           /* its outcome, if it comes, is dropped */
	if (a->n_untrack < AN_TRACKS) /* (one entry per id: the table's size) */
		a->untrack[a->n_untrack++] = id;
	an_untrack_flush(a);
	return 0;
}

/* One descriptor as the interface's FIFO takes it. */
static int
an_desc(struct an_node *a, const struct trd_desc *d, struct trd_desc *c)
{
	int k = an_ctr(a, d->inj_ctr);
	uint64_t off;

	*c = *d;
	if (k < 0)
		return -EINVAL;
	c->inj_ctr = (uint16_t)k;
	if (d->flags & TRD_DF_ACKREQ) {
		/* tracked: the engine sends its outcome to the FIFO the id was opened on (a
		 * remote get's carried descriptors name the same id) */
		const struct an_track *t = an_track_find(a, d->aux);

		if (t == NULL)
			return -EINVAL;
		c->ack_fifo = a->rx[t->rx - 1].id;
	}
	if ((d->op != TRD_OP_PUT && d->op != TRD_OP_FIFO) || (d->flags & TRD_DF_IMM) || d->len == 0)
		return 0;
	if (d->flags & TRD_DF_SRC_MR) {
		/* a region of ours: the offset in it becomes one in the whole region */
		if (d->src_key == a->v->region_key)
			return 0;
		const struct trd_mr *mr = trd_node_attach_mr(a->n, d->src_key);

		if (mr == NULL || d->src > trd_mr_len(mr) || d->len > trd_mr_len(mr) - d->src ||
		    an_region_off(a, trd_mr_addr(mr), trd_mr_len(mr), &off) != 0)
			return -EINVAL;
		c->src_key = a->v->region_key;
		c->src = off + d->src;
		return 0;
	}
	if (d->len <= a->v->mu_inline_max)
		return 0; /* inline: copied into the ring */
	if (an_region_off(a, (const void *)(uintptr_t)d->src, d->len, &off) != 0)
		return -EFAULT; /* the engine reaches the region alone */
	c->flags |= TRD_DF_SRC_MR;
	c->src_key = a->v->region_key;
	c->src = off;
	return 0;
}

static int
an_inject(struct trd_node *n, unsigned int fifo, const struct trd_desc *d, unsigned int nd)
{
	struct an_node *a = an_of(n);
	struct trd_desc c[AN_BULK];

	if (d == NULL && nd != 0)
		return -EINVAL;
	if (nd > AN_BULK)
		return -E2BIG;
	if (unlikely(a->n_untrack != 0))
		an_untrack_flush(a);
	for (unsigned int i = 0; i < nd; i++) {
		int rc = an_desc(a, &d[i], &c[i]);

		if (rc != 0)
			return rc;
	}
	return trd_vni_inject(a->v, fifo, c, nd);
}

/* The send contexts of the handle's ended collectives, whatever their group, back to the
 * interface (they hold no completion to free them). */
static void
an_comb_reclaim(struct an_node *a)
{
	for (unsigned int i = 0; i < RTE_DIM(a->comb_on); i++)
		if (a->comb_on[i] && vnic_coll_mu_ended(a->v, a->comb_idx[i]))
			a->comb_on[i] = false;
}

static int
an_counter_wait(struct trd_node *n, uint16_t id, uint64_t timeout_us)
{
	struct an_node *a = an_of(n);
	int k = an_ctr(a, id), rc;

	if (k <= 0)
		return -EINVAL;
	rc = trd_vni_counter_wait(a->v, (uint16_t)k, timeout_us);
	an_comb_reclaim(a);
	return rc;
}

/* An engine collective (trd_comb_post()), checked by the core but for its buffers: in the
 * region, posted to the engine of toroid-node, which counts its end on the process's counter.
 * One of a group at a time: -EBUSY while the last one of that group has not ended. */
static int
an_comb_post(struct trd_node *n, const struct trd_comb_req *rq)
{
	struct an_node *a = an_of(n);
	uint64_t len = (uint64_t)rq->count * TRD_COMB_ELEM;
	unsigned int g = rq->dims & TRD_COMB_TORUS;
	int k = an_ctr(a, rq->counter);
	struct trd_vni_cctx c;
	uint32_t idx;
	int rc;

	if (k <= 0)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.src = c.dst = TRD_VNI_COLL_NONE;
	if ((rq->src != NULL && (an_region_off(a, rq->src, len, &c.src) != 0 || c.src % 8 != 0)) ||
	    (rq->dst != NULL && (an_region_off(a, rq->dst, len, &c.dst) != 0 || c.dst % 8 != 0)))
		return -EINVAL;
	an_comb_reclaim(a);
	if (a->comb_on[g])
		return vnic_check_live(a->v) != 0 ? -ECONNRESET : -EBUSY;
	c.kind = rq->kind;
	c.op = rq->op;
	c.dtype = rq->dtype;
	c.dims = (uint8_t)g;
	c.count = rq->count;
	c.root[0] = rq->root.x;
	c.root[1] = rq->root.y;
	c.root[2] = rq->root.z;
	c.ctr = (uint32_t)k;
	rc = vnic_coll_mu(a->v, &c, &idx);
	if (rc == 0) {
		a->comb_on[g] = true;
		a->comb_idx[g] = idx;
	}
	return rc;
}

static int
an_mr_register(struct trd_node *n, void *addr, size_t len, unsigned int access, uint64_t *key)
{
	struct an_node *a = an_of(n);
	unsigned int va = TRD_VNI_MR_MU | TRD_VNI_MR_OFFSET;
	uint64_t off;

	if (access & (TRD_ACCESS_DMA | TRD_ACCESS_VA))
		return -ENOTSUP; /* the engine copies; offsets name its bytes */
	if (an_region_off(a, addr, len, &off) != 0 || len == 0)
		return -EFAULT;
	if (access & TRD_ACCESS_REMOTE_READ)
		va |= TRD_VNI_MR_REMOTE_READ;
	if (access & TRD_ACCESS_REMOTE_WRITE)
		va |= TRD_VNI_MR_REMOTE_WRITE;
	if (!(va & (TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE)))
		va |= TRD_VNI_MR_REMOTE_READ; /* a source of its own puts: no one writes it */
	*key = 0;
	return trd_vni_mr_reg(a->v, addr, len, va, key);
}

static int
an_mr_deregister(struct trd_node *n, uint64_t key)
{
	return trd_vni_mr_dereg(an_of(n)->v, key);
}

static void *
an_mem_alloc(struct trd_node *n, size_t len)
{
	struct an_node *a = an_of(n);
	int64_t off;
	uint8_t *p;

	if (a->heap.size == 0 || len > a->heap.size) {
		rte_errno = ENOMEM;
		return NULL;
	}
	off = trd_vni_heap_alloc(&a->heap, AN_HDR + (uint64_t)len);
	if (off < 0) {
		rte_errno = ENOMEM;
		return NULL;
	}
	p = a->v->region + off;
	memcpy(p, &len, sizeof(len)); /* the length the block was taken with */
	memset(p + AN_HDR, 0, len);
	return p + AN_HDR;
}

static void
an_mem_free(struct trd_node *n, void *ptr)
{
	struct an_node *a = an_of(n);
	uint8_t *p = (uint8_t *)ptr - AN_HDR;
	uint64_t off;
	size_t len;

	if (an_region_off(a, p, AN_HDR, &off) != 0)
		return;
	memcpy(&len, p, sizeof(len));
	trd_vni_heap_free(&a->heap, off, AN_HDR + (uint64_t)len);
}

struct an_rx *
an_rx_of(struct an_node *a, uint8_t id)
{
	for (unsigned int k = 0; k < a->v->n_rx; k++)
		if (a->rx[k].id == id)
			return &a->rx[k];
	return NULL;
}

static void an_msg_free(struct trd_msg *msg);

/* A message of @p rx just read: an outcome of one of our tracked operations takes its cookie
 * and, for an atomic, writes its old value, and its id is free again. false: an outcome of
 * none open (closed, or not ours): the caller frees it unseen. */
static bool
an_outcome(struct an_node *a, const struct an_rx *rx, struct trd_msg *m)
{
	const struct trd_rslot *h = (const struct trd_rslot *)m->data - 1;
	struct an_track *t;

	if (h->flags & TRD_RSLOT_DOORBELL)
		return false; /* an event queue's, never a message */
	if (!(h->flags & TRD_RSLOT_OUTCOME))
		return true;
	t = an_track_find(a, m->user);
	if (t == NULL || t->rx != rx->k + 1)
		return false;
	m->user = t->cookie;
	if (t->result != NULL && m->status == 0) {
		if (h->flags & TRD_RSLOT_OLD) {
			__atomic_store_n(t->result, h->old, __ATOMIC_RELEASE);
		} else {
			/* an atomic that worked always has its old value */
			m->cause = TRD_DROP_BAD_LENGTH;
			m->status = -EIO;
		}
	}
	an_track_put(a, t);
	return true;
}

/* The next message holder of @p rx, filled by @p rc > 0 of a poll or wait. */
static struct trd_msg *
an_rx_took(struct an_rx *rx, struct an_msg *m)
{
	m->am.msg.fifo = rx->id;
	m->am.none[0] = m->am.none[1] = NULL;
	m->rx = rx;
	rx->next = (rx->next + 1) % rx->n;
	rx->held++;
	return &m->am.msg;
}

static int
an_rfifo_poll(struct trd_node *n, uint8_t id, struct trd_msg **msgs, unsigned int nm)
{
	struct an_rx *rx = an_rx_of(an_of(n), id);
	unsigned int got = 0;

	if (rx == NULL)
		return -EINVAL;
	while (got < nm && rx->held < rx->n) {
		struct an_msg *m = &rx->msgs[rx->next];
		int rc = trd_vni_rfifo_poll(rx->an->v, rx->k, &m->am.msg, 1);

		an_eq_note(rx);
		if (rc <= 0)
			return got != 0 ? (int)got : rc;
		msgs[got] = an_rx_took(rx, m);
		if (an_outcome(rx->an, rx, msgs[got]))
			got++;
		else
			an_msg_free(msgs[got]);
	}
	return (int)got;
}

/* The time @p timeout_us from now (us), at most the clock's end. */
static uint64_t
an_deadline(uint64_t timeout_us)
{
	uint64_t now = trd_time_us();

	return timeout_us > UINT64_MAX - now ? UINT64_MAX : now + timeout_us;
}

static int
an_rfifo_wait(struct trd_node *n, uint8_t id, struct trd_msg **msg, uint64_t timeout_us)
{
	struct an_rx *rx = an_rx_of(an_of(n), id);
	uint64_t end = an_deadline(timeout_us), now, ms;
	struct an_msg *m;
	int rc;

	if (rx == NULL)
		return -EINVAL;
	/* (what is freed unseen, an outcome of nothing open or a doorbell slot, does not
	 * restart the wait: one deadline) */
	for (;;) {
		if (rx->held >= rx->n)
			return -ENOBUFS; /* every message of the ring is held */
		now = trd_time_us();
		ms = now >= end ? 0 : (end - now + 999) / 1000;
		ms = ms > INT_MAX ? INT_MAX : ms;
		m = &rx->msgs[rx->next];
		/* (bound to an event queue: the queue gets the events of what it takes) */
		rc = rx->eq != NULL ? an_eq_fifo_wait(rx, &m->am.msg, (int)ms)
				    : trd_vni_rfifo_wait(rx->an->v, rx->k, &m->am.msg, (int)ms);
		if (rc <= 0)
			return rc == 0 ? -ETIMEDOUT : rc;
		*msg = an_rx_took(rx, m);
		if (an_outcome(rx->an, rx, *msg))
			return 0;
		an_msg_free(*msg);
	}
}

static void
an_msg_free(struct trd_msg *msg)
{
	struct an_msg *m = (struct an_msg *)(void *)msg;
	struct an_rx *rx = m->rx;

	/* the ring's slots go back once every message taken from it is freed */
	if (rx != NULL && rx->held != 0 && --rx->held == 0)
		trd_vni_rfifo_release(rx->an->v, rx->k);
	m->rx = NULL;
}

static void
an_close(struct trd_node *n)
{
	struct an_node *a = an_of(n);

	trd_vni_close(a->v);
	for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
		free(a->rx[k].msgs);
	trd_vni_heap_fini(&a->heap);
	free(a);
}

static const struct trd_attach_ops an_ops = {
	.inject = an_inject,
	.counter_wait = an_counter_wait,
	.mr_register = an_mr_register,
	.mr_deregister = an_mr_deregister,
	.mem_alloc = an_mem_alloc,
	.mem_free = an_mem_free,
	.rfifo_poll = an_rfifo_poll,
	.rfifo_wait = an_rfifo_wait,
	.track_open = an_track_open,
	.track_close = an_track_close,
	.track_unposted = an_track_unposted,
	.eq_create = an_eq_create,
	.eq_free = an_eq_free,
	.eq_bind = an_eq_bind,
	.eq_arm = an_eq_arm,
	.eq_disarm = an_eq_disarm,
	.eq_poll = an_eq_poll,
	.eq_stats = an_eq_stats,
	.doorbell_register = an_eq_doorbell,
	.comb_post = an_comb_post,
	.msg_free = an_msg_free,
	.close = an_close,
};

struct trd_node *
trd_node_attach(const struct trd_vni_conf *conf)
{
	struct trd_attach_conf c = {.ops = &an_ops};
	struct trd_vni_info info;
	struct an_node *a;
	struct trd_vni *v;
	int err = ENOMEM;

	if (conf == NULL) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	v = trd_vni_open(conf);
	if (v == NULL) {
		rte_errno = errno;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		goto fail;
	a->v = v;
	if (trd_vni_info(v, &info) != 0 || v->mu == NULL) {
		err = EINVAL; /* no messaging-unit objects asked for */
		goto fail;
	}
	if (v->region_len != 0 && trd_vni_heap_init(&a->heap, v->region_len) != 0)
		goto fail;
	for (unsigned int i = 0; i < AN_TRACKS; i++)
		a->trk_free[i] = (uint16_t)(AN_TRACKS - 1 - i);
	a->n_trk_free = AN_TRACKS;
	for (unsigned int k = 0; k < v->n_rx; k++) {
		a->rx[k].an = a;
		a->rx[k].k = k;
		a->rx[k].id = v->rx_id[k];
		a->rx[k].n = v->rx_slots;
		a->rx[k].msgs = calloc(v->rx_slots, sizeof(struct an_msg));
		if (a->rx[k].msgs == NULL)
			goto fail;
	}
	c.ctx = a;
	c.coord = (struct trd_coord){info.node[0], info.node[1], info.node[2]};
	for (unsigned int i = 0; i < 3; i++)
		c.torus.dim[i] =
			v->seg->dims[i] != 0 ? v->seg->dims[i] : (uint8_t)(info.node[i] + 1);
	c.name = info.node_name;
	c.n_fifos = v->n_inj;
	c.n_rfifos = v->n_rx;
	c.rfifo_ids = v->rx_id;
	c.ctrs = (int64_t *)(uintptr_t)v->ctrs;
	c.ctr_base = v->ctr_base;
	c.n_ctrs = TRD_COUNTER_BLOCK;
	c.n_regions = TRD_VNI_MU_MRS;
	a->n = trd_node_attach_new(&c);
	if (a->n == NULL) {
		err = rte_errno;
		goto fail;
	}
	return a->n;
fail:
	if (a != NULL) {
		for (unsigned int k = 0; k < TRD_VNI_MU_RFIFOS_MAX; k++)
			free(a->rx[k].msgs);
		trd_vni_heap_fini(&a->heap);
		free(a);
	}
	trd_vni_close(v);
	rte_errno = errno = err;
	return NULL;
}

struct trd_vni *
trd_node_vni(const struct trd_node *n)
{
	const struct an_node *a = an_of(n);

	return a != NULL ? a->v : NULL;
}
