/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtoroid_vni: the process's messaging-unit objects (docs/vni.md, "Messaging-unit objects"):
 * its injection FIFOs of engine descriptors, its block of the node's counters, its region.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "app_pvt.h"

#define MU_SLOT 64

static bool
mu_span_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

int
vnic_mu_request(const struct trd_vni_conf *conf, struct trd_vni_sock_mu *req)
{
	memset(req, 0, sizeof(*req));
	if (conf == NULL)
		return -EINVAL;
	req->n_fifos = conf->mu_fifos;
	req->fifo_slots = conf->mu_fifo_slots ? conf->mu_fifo_slots : 1024;
	req->region = conf->mu_region;
	req->n_rfifos = conf->mu_rfifos;
	req->rfifo_slots = conf->mu_rfifo_slots ? conf->mu_rfifo_slots : 1024;
	req->rfifo_first = conf->mu_rfifo_first;
	/* what the engine would refuse, refused here (a size given for no FIFO too) */
	if (!trd_vni_mu_req_ok(req) || !trd_vni_mu_slots_ok(req->fifo_slots) ||
	    !trd_vni_mu_slots_ok(req->rfifo_slots))
		return -EINVAL;
	return conf->mu_fifos != 0 || conf->mu_region != 0 || conf->mu_rfifos != 0;
}

int
vnic_mu_attach(struct trd_vni *v)
{
	int ctr_fd = v->ctr_fd;
	const struct trd_vni_seg *s = v->seg;
	const struct trd_vni_mu *m;
	uint64_t ring = sizeof(struct rte_ring);
	void *c;
	int rc = -EPROTO;

	if (ctr_fd < 0)
		return -EPROTO;
	if (s->mu_off == 0 || !mu_span_ok(s->mu_off, sizeof(*m), v->size) || s->mu_off % 64 != 0)
		goto out;
	m = (const struct trd_vni_mu *)(v->base + s->mu_off);
	if (m->n_fifos > TRD_VNI_MU_FIFOS_MAX || m->n_ctrs != TRD_COUNTER_BLOCK ||
	    m->ctr_base % TRD_COUNTER_BLOCK != 0 || m->ctr_base == 0 || m->ctr_base > UINT16_MAX ||
	    !mu_span_ok(m->region_off, m->region_len, v->size) || m->inline_max > 960 ||
	    (m->n_fifos != 0 && !trd_vni_mu_slots_ok(m->fifo_slots)) ||
	    m->n_rfifos > TRD_VNI_MU_RFIFOS_MAX ||
	    (m->n_rfifos != 0 && !trd_vni_mu_slots_ok(m->rfifo_slots)))
		goto out;
	ring += (uint64_t)m->fifo_slots * MU_SLOT;
	for (uint32_t i = 0; i < m->n_fifos; i++) {
		if (!mu_span_ok(m->fifo_off[i], ring, v->size) || m->fifo_off[i] % 64 != 0)
			goto out;
		v->inj[i] = (struct rte_ring *)(v->base + m->fifo_off[i]);
	}
	ring = sizeof(struct rte_ring) + (uint64_t)m->rfifo_slots * MU_SLOT;
	for (uint32_t i = 0; i < TRD_VNI_MU_RFIFOS_MAX; i++)
		if ((i < m->n_rfifos) != (v->rx_fd[i] >= 0))
			goto out; /* as many eventfds as FIFOs */
	for (uint32_t i = 0; i < m->n_rfifos; i++) {
		if (!mu_span_ok(m->rfifo_off[i], ring, v->size) || m->rfifo_off[i] % 64 != 0 ||
		    m->rfifo_id[i] < TRD_GUEST_RFIFO_FIRST || m->rfifo_id[i] > TRD_GUEST_RFIFO_LAST)
			goto out;
		v->rx[i] = (struct rte_ring *)(v->base + m->rfifo_off[i]);
		v->rx_id[i] = m->rfifo_id[i];
		v->rx_peek[i] = __atomic_load_n(&v->rx[i]->cons.tail, __ATOMIC_ACQUIRE);
		v->rx_rel[i] = v->rx_peek[i];
	}
	c = mmap(NULL, TRD_COUNTER_BLOCK * sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctr_fd, (off_t)m->ctr_offset);
	if (c == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	v->ctrs = c;
	v->mu = m;
	v->n_inj = m->n_fifos;
	v->inj_slots = m->fifo_slots;
	v->mu_inline_max = m->inline_max;
	v->ctr_base = (uint16_t)m->ctr_base;
	v->region = m->region_len != 0 ? v->base + m->region_off : NULL;
	v->region_len = m->region_len;
	v->region_key = m->region_key;
	v->n_rx = m->n_rfifos;
	v->rx_slots = m->rfifo_slots;
	rc = 0;
out:
	close(ctr_fd);
	v->ctr_fd = -1;
	return rc;
}

void
vnic_mu_detach(struct trd_vni *v)
{
	if (v->ctr_fd >= 0)
		close(v->ctr_fd);
	v->ctr_fd = -1;
	if (v->ctrs != NULL)
		munmap((void *)(uintptr_t)v->ctrs, TRD_COUNTER_BLOCK * sizeof(int64_t));
	for (unsigned int i = 0; i < TRD_VNI_MU_RFIFOS_MAX; i++) {
		if (v->rx_fd[i] >= 0)
			close(v->rx_fd[i]);
		v->rx_fd[i] = -1;
	}
	v->ctrs = NULL;
	v->mu = NULL;
	v->n_inj = 0;
	v->n_rx = 0;
}

int
trd_vni_mu_info(const struct trd_vni *v, struct trd_vni_mu_info *info)
{
	if (v == NULL || info == NULL)
		return -EINVAL;
	if (v->mu == NULL)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	info->region = v->region;
	info->region_len = v->region_len;
	info->region_key = v->region_key;
	info->n_fifos = v->n_inj;
	for (uint32_t i = 0; i < v->n_inj; i++)
		info->fifos[i] = v->inj[i];
	info->inline_max = v->mu_inline_max;
	info->n_counters = TRD_COUNTER_BLOCK;
	info->descs = __atomic_load_n(&v->mu->descs, __ATOMIC_RELAXED);
	info->bad_descs = __atomic_load_n(&v->mu->bad_descs, __ATOMIC_RELAXED);
	info->bad_rings = __atomic_load_n(&v->mu->bad_rings, __ATOMIC_RELAXED);
	info->n_rfifos = v->n_rx;
	memcpy(info->rfifo_ids, v->rx_id, sizeof(info->rfifo_ids));
	info->rmsgs = __atomic_load_n(&v->mu->rmsgs, __ATOMIC_RELAXED);
	info->rfull = __atomic_load_n(&v->mu->rfull, __ATOMIC_RELAXED);
	info->rbad_rings = __atomic_load_n(&v->mu->rbad_rings, __ATOMIC_RELAXED);
	return 0;
}

/* Continuation slots a descriptor takes: its data when inline (a remote get's carried
 * descriptors always are), else none. */
static inline unsigned int
mu_slots(const struct trd_desc *d)
{
	if ((d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)) || d->len == 0 || d->op == TRD_OP_ATOMIC)
		return 0;
	return (d->len + MU_SLOT - 1) / MU_SLOT;
}

/* Element @p k of a zero-copy reservation. */
static inline uint8_t *
zc_elem(const struct rte_ring_zc_data *z, unsigned int k)
{
	return k < z->n1 ? (uint8_t *)z->ptr1 + (size_t)k * MU_SLOT
			 : (uint8_t *)z->ptr2 + (size_t)(k - z->n1) * MU_SLOT;
}

int
trd_vni_inject(struct trd_vni *v, unsigned int fifo, const struct trd_desc *d, unsigned int n)
{
	struct rte_ring_zc_data z;
	unsigned int total = 0, k = 0;
	struct rte_ring *r;

	if (v == NULL || (d == NULL && n != 0))
		return -EINVAL;
	if (fifo >= v->n_inj)
		return -ENOENT;
	r = v->inj[fifo];
	for (unsigned int i = 0; i < n; i++) {
		unsigned int s = mu_slots(&d[i]);

		if (d[i].op == TRD_OP_RGET) {
			/* its carried descriptors follow it in the ring, whole */
			if (d[i].len == 0 || d[i].len % sizeof(struct trd_desc) != 0 ||
			    d[i].fifo != TRD_ENGINE_FIFO ||
			    (d[i].flags & (TRD_DF_SRC_MR | TRD_DF_IMM)))
				return -EINVAL;
			if (d[i].len > TRD_RGET_MAX_DESCS * sizeof(struct trd_desc))
				return -EMSGSIZE;
		} else if (d[i].op == TRD_OP_ATOMIC &&
			   (d[i].flags & ~TRD_DF_ORDERED) == TRD_DF_ACKREQ) {
			/* tracked: its old value in its outcome (docs/vni.md) */
			if (d[i].len != 8 || d[i].inj_ctr != 0)
				return -EINVAL;
		} else if (d[i].op == TRD_OP_UNTRACK) {
			if (d[i].len != 0 || d[i].flags != 0 || d[i].aux == 0)
				return -EINVAL;
		} else if (d[i].op == TRD_OP_ATOMIC) {
			/* its operands in the descriptor, its old value into the region */
			if (d[i].len != 8 || d[i].flags != 0 || d[i].inj_ctr == 0 ||
			    d[i].src_key % 8 != 0 || d[i].src_key > v->region_len ||
			    v->region_len - d[i].src_key < 8)
				return -EINVAL;
		} else if (d[i].op != TRD_OP_PUT && d[i].op != TRD_OP_FIFO) {
			return -EINVAL;
		} else if (s != 0 && d[i].len > v->mu_inline_max) {
			return -EMSGSIZE;
		}
		if (s != 0 && d[i].src == 0)
			return -EINVAL;
		total += 1 + s;
	}
	if (total == 0)
		return 0;
	if (total >= v->inj_slots)
		return -ENOBUFS;
	if (rte_ring_enqueue_zc_bulk_elem_start(r, MU_SLOT, total, &z, NULL) == 0)
		return -ENOBUFS;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int s = mu_slots(&d[i]);
		struct trd_desc *w = (struct trd_desc *)(void *)zc_elem(&z, k);
		const uint8_t *src = (const uint8_t *)(uintptr_t)d[i].src;

		*w = d[i];
		w->n_slots = (uint8_t)s;
		w->msg_id = 0;
		/* the data in the slots that follow: one copy, split where the ring wraps */
		if (s != 0 && k + 1 + s <= z.n1) {
			memcpy(zc_elem(&z, k + 1), src, d[i].len);
		} else {
			for (unsigned int j = 0; j < s; j++) {
				uint32_t part = d[i].len - j * MU_SLOT;

				memcpy(zc_elem(&z, k + 1 + j), src + j * MU_SLOT,
				       part < MU_SLOT ? part : MU_SLOT);
			}
		}
		k += 1 + s;
	}
	rte_ring_enqueue_zc_elem_finish(r, total);
	vnic_kick(v);
	return 0;
}

int
trd_vni_counter_set(struct trd_vni *v, uint16_t k, int64_t value)
{
	if (v == NULL || v->ctrs == NULL || k == 0 || k >= TRD_COUNTER_BLOCK)
		return -EINVAL;
	__atomic_store_n(&v->ctrs[k], value, __ATOMIC_RELEASE);
	return 0;
}

int
trd_vni_counter_read(const struct trd_vni *v, uint16_t k, int64_t *value)
{
	if (v == NULL || v->ctrs == NULL || k == 0 || k >= TRD_COUNTER_BLOCK || value == NULL)
		return -EINVAL;
	*value = __atomic_load_n(&v->ctrs[k], __ATOMIC_ACQUIRE);
	return 0;
}

uint16_t
trd_vni_counter_id(const struct trd_vni *v, uint16_t k)
{
	if (v == NULL || v->ctrs == NULL || k == 0 || k >= TRD_COUNTER_BLOCK)
		return 0;
	return (uint16_t)(v->ctr_base + k);
}

int
trd_vni_counter_wait(struct trd_vni *v, uint16_t k, uint64_t timeout_us)
{
	uint64_t deadline;
	int64_t c;

	if (v == NULL || v->ctrs == NULL || k == 0 || k >= TRD_COUNTER_BLOCK)
		return -EINVAL;
	deadline = vnic_now_ns() + timeout_us * 1000;
	vnic_kick_owed(v);
	for (unsigned int spins = 0;; spins++) {
		c = __atomic_load_n(&v->ctrs[k], __ATOMIC_ACQUIRE);
		if (c == 0)
			return 0;
		if (c <= TRD_COUNTER_FAILED)
			return -EHOSTUNREACH;
		if (c < 0)
			return -ERANGE;
		if (vnic_check_live(v) != 0)
			return -ECONNRESET;
		if (vnic_now_ns() >= deadline)
			return -ETIMEDOUT;
		if (spins % 64 == 63)
			sched_yield();
	}
}

/* ------------------------------------------------------------------------------------------ */
/* reception FIFOs: the engine writes a header slot (struct trd_rslot) and the message's bytes
 * after it, never across the ring's end (a padding header fills it up to the end) */

uint8_t
trd_vni_rfifo_id(const struct trd_vni *v, unsigned int k)
{
	return v != NULL && k < v->n_rx ? v->rx_id[k] : 0;
}

int
vnic_rfifo_walk(const struct trd_vni *v, unsigned int k, uint32_t *at, uint32_t end,
		struct trd_msg *msgs, unsigned int n, bool *bad)
{
	const struct rte_ring *r = v->rx[k];
	uint32_t pos = *at, mask = v->rx_slots - 1;
	unsigned int got = 0;

	while (got < n && pos != end) {
		const struct trd_rslot *h =
			(const struct trd_rslot *)(const void *)((const uint8_t *)&r[1] +
								 (size_t)(pos & mask) * MU_SLOT);
		uint32_t avail = end - pos, at_slot = pos & mask, need;

		/* the engine writes the ring; still, nothing it holds is read past its end */
		need = 1u + h->n_slots;
		if (avail > mask || need > avail || at_slot + need > v->rx_slots ||
		    (!(h->flags & TRD_RSLOT_PAD) &&
		     h->n_slots != (h->len + MU_SLOT - 1) / MU_SLOT) ||
		    ((h->flags & TRD_RSLOT_PAD) && at_slot + need != v->rx_slots)) {
			*bad = true;
			*at = pos;
			return got != 0 ? (int)got : -EPROTO;
		}
		if (!(h->flags & TRD_RSLOT_PAD)) {
			struct trd_msg *m = &msgs[got++];

			memset(m, 0, sizeof(*m));
			m->src = h->src;
			m->fifo = h->fifo;
			m->len = h->len;
			m->msg_id = h->msg_id;
			m->user = h->user;
			m->status = h->status;
			m->cause = h->cause;
			m->data = (void *)(uintptr_t)(h + 1);
		}
		pos += need;
	}
	*at = pos;
	return (int)got;
}

uint32_t
vnic_rfifo_end(const struct trd_vni *v, unsigned int k)
{
	return __atomic_load_n(&v->rx[k]->prod.tail, __ATOMIC_ACQUIRE);
}

int
trd_vni_rfifo_poll(struct trd_vni *v, unsigned int k, struct trd_msg *msgs, unsigned int n)
{
	uint32_t pos;
	int got;

	if (v == NULL || (msgs == NULL && n != 0))
		return -EINVAL;
	if (k >= v->n_rx)
		return -ENOENT;
	if (v->rx_bad[k])
		return -EPROTO;
	pos = v->rx_peek[k];
	got = vnic_rfifo_walk(v, k, &pos, vnic_rfifo_end(v, k), msgs, n, &v->rx_bad[k]);
	if (got < 0)
		return got;
	/* only padding passed while nothing is held: given back at once (a caller that got no
	 * message has nothing to release, and the padding would block the ring) */
	if (got == 0 && v->rx_peek[k] == v->rx_rel[k] && pos != v->rx_peek[k]) {
		v->rx_peek[k] = pos;
		return trd_vni_rfifo_release(v, k);
	}
	v->rx_peek[k] = pos;
	return got;
}

int
trd_vni_rfifo_release(struct trd_vni *v, unsigned int k)
{
	struct rte_ring *r;

	if (v == NULL)
		return -EINVAL;
	if (k >= v->n_rx)
		return -ENOENT;
	r = v->rx[k];
	v->rx_rel[k] = v->rx_peek[k];
	__atomic_store_n(&r->cons.head, v->rx_peek[k], __ATOMIC_RELAXED);
	/* the messages were read before the engine may write over them */
	__atomic_store_n(&r->cons.tail, v->rx_peek[k], __ATOMIC_RELEASE);
	return 0;
}

/* The word that arms reception FIFO @p k's eventfd (the segment's messaging-unit header, which
 * the library otherwise only reads). */
static inline volatile uint32_t *
rx_armed(const struct trd_vni *v, unsigned int k)
{
	return (volatile uint32_t *)(uintptr_t)&v->mu->rarmed[k];
}

struct rx_wait {
	unsigned int k;
	struct trd_msg *msg;
};

static int
rx_take(struct trd_vni *v, void *arg)
{
	struct rx_wait *w = arg;

	return trd_vni_rfifo_poll(v, w->k, w->msg, 1);
}

static bool
rx_busy(const struct trd_vni *v, void *arg)
{
	const struct rx_wait *w = arg;

	return __atomic_load_n(&v->rx[w->k]->prod.tail, __ATOMIC_SEQ_CST) != v->rx_peek[w->k];
}

int
trd_vni_rfifo_wait(struct trd_vni *v, unsigned int k, struct trd_msg *msg, int timeout_ms)
{
	struct rx_wait a = {.k = k, .msg = msg};
	struct vnic_waiter w = {.take = rx_take, .busy = rx_busy, .arg = &a};

	if (v == NULL || msg == NULL)
		return -EINVAL;
	if (k >= v->n_rx)
		return -ENOENT;
	w.fd = v->rx_fd[k];
	w.armed = rx_armed(v, k);
	return vnic_wait(v, &w, timeout_ms);
}

int
trd_vni_rfifo_fd(const struct trd_vni *v, unsigned int k)
{
	if (v == NULL)
		return -EINVAL;
	return k < v->n_rx ? v->rx_fd[k] : -ENOENT;
}

int
vnic_rfifo_arm_at(struct trd_vni *v, unsigned int k, uint32_t pos)
{
	__atomic_store_n(rx_armed(v, k), 1, __ATOMIC_SEQ_CST);
	/* a message that came before the word was seen: poll again */
	return __atomic_load_n(&v->rx[k]->prod.tail, __ATOMIC_SEQ_CST) != pos ? -EBUSY : 0;
}

void
vnic_rfifo_disarm(struct trd_vni *v, unsigned int k)
{
	__atomic_store_n(rx_armed(v, k), 0, __ATOMIC_SEQ_CST);
}

int
trd_vni_rfifo_arm(struct trd_vni *v, unsigned int k)
{
	if (v == NULL)
		return -EINVAL;
	if (k >= v->n_rx)
		return -ENOENT;
	vnic_kick_owed(v); /* about to sleep: the engine must see a quietly posted receive */
	return vnic_rfifo_arm_at(v, k, v->rx_peek[k]);
}
