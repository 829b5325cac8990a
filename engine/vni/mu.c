/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, the messaging-unit objects of an attached process (docs/vni.md, "Messaging-unit
 * objects"): injection FIFOs of the engine's own 64-byte descriptors in its segment, a block
 * of the node's counters mapped into it, and a region of its segment registered in the node.
 *
 * The process writes its rings: every descriptor is copied out of the ring before any field is
 * looked at, checked against what this process owns (its region, its counters) and only then
 * posted into the engine's FIFO, with its counter ids turned into the node's. The ring's
 * header is read for the producer's index alone; the size and the consumer's index are the
 * engine's own.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ring_elem.h>

#include "iface_pvt.h"
#include "mu_pvt.h"

#define MU_SLOT 64 /* a ring element: one descriptor, or 64 bytes of its inline data */

struct mu_fifo {
	struct rte_ring *r;
	const uint8_t *slots; /* the ring's elements */
	uint32_t cons;        /* the engine's index */
	bool broken;          /* its header was found overwritten: no longer served */
};

struct vmu {
	struct trd_vni_mu *hdr; /* in the segment */
	uint64_t hdr_off;
	uint32_t n_fifos, slots, mask;
	uint64_t fifo_off[TRD_VNI_MU_FIFOS_MAX];
	struct mu_fifo f[TRD_VNI_MU_FIFOS_MAX];
	uint64_t region_off, region_len;
	struct trd_mr *mr;
	struct trd_mr *gone; /* mr once deregistered, while its readers are waited for */
	uint64_t key;
	uint16_t ctr_base; /* 0: no block */
	int ctr_fd;        /* the block's own memfd, passed at attach (-1: none) */
	uint64_t ctr_offset;
	bool held; /* a reference on the interface from attach until, dead, it has no descriptor
		    * left in the node's FIFO and nothing reads its region (trd_mr_readers()) */
	uint64_t descs, bad, bad_rings;
};

static inline uint64_t
ring_bytes(uint32_t slots)
{
	return RTE_ALIGN_CEIL(rte_ring_get_memsize_elem(MU_SLOT, slots), TRD_VNI_ALIGN);
}

int
svc_mu_layout(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mu *req, uint64_t off,
	      uint64_t *len, const char **why)
{
	uint64_t start = off;
	struct vmu *m;

	if (req->n_fifos > TRD_VNI_MU_FIFOS_MAX || req->region > TRD_VNI_MU_REGION_MAX ||
	    req->region > s->conf.max_pool ||
	    (req->n_fifos != 0 && (req->fifo_slots < 64 || req->fifo_slots > TRD_VNI_MU_SLOTS_MAX ||
				   (req->fifo_slots & (req->fifo_slots - 1)) != 0))) {
		*why = "bad messaging-unit objects (FIFOs 0..8 of 64..4096 slots, a power of 2; "
		       "region within the engine's pool limit)";
		return -EINVAL;
	}
	m = v->mu = calloc(1, sizeof(*m));
	if (m == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	m->ctr_fd = -1;
	off = RTE_ALIGN_CEIL(off, TRD_VNI_ALIGN);
	m->hdr_off = off;
	off += RTE_ALIGN_CEIL(sizeof(struct trd_vni_mu), TRD_VNI_ALIGN);
	m->n_fifos = req->n_fifos;
	m->slots = req->n_fifos != 0 ? req->fifo_slots : 0;
	m->mask = m->slots - 1;
	for (uint32_t i = 0; i < m->n_fifos; i++) {
		m->fifo_off[i] = off;
		off += ring_bytes(m->slots);
	}
	off = RTE_ALIGN_CEIL(off, 4096);
	m->region_off = off;
	m->region_len = RTE_ALIGN_CEIL(req->region, TRD_VNI_ALIGN);
	off += RTE_ALIGN_CEIL(m->region_len, 4096);
	*len = off - start;
	return 0;
}

int
svc_mu_create(struct trd_vni_svc *s, struct vif *v, const char **why)
{
	struct vmu *m = v->mu;
	struct trd_vni_mu *h;
	int rc;

	if (m == NULL)
		return 0;
	h = m->hdr = (struct trd_vni_mu *)(v->base + m->hdr_off);
	for (uint32_t i = 0; i < m->n_fifos; i++) {
		struct rte_ring *r = (struct rte_ring *)(v->base + m->fifo_off[i]);

		if (rte_ring_init(r, "vni_mu", m->slots, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
			*why = "cannot make the injection FIFOs";
			return -EINVAL;
		}
		m->f[i].r = r;
		m->f[i].slots = (const uint8_t *)&r[1];
		h->fifo_off[i] = m->fifo_off[i];
	}
	if (m->region_len != 0) {
		/* copied, never zero-copy, and its readers counted: the process may die while a
		 * peer's remote get reads it, and the segment stays until none does */
		m->mr = trd_mr_register(s->node, v->base + m->region_off, m->region_len,
					TRD_ACCESS_ALL | TRD_ACCESS_COPY);
		if (m->mr == NULL) {
			*why = "no free memory region on the node";
			return -rte_errno;
		}
		m->key = trd_mr_key(m->mr);
	}
	rc = trd_counter_block_alloc(s->node, &m->ctr_base, &m->ctr_fd, &m->ctr_offset);
	if (rc != 0) {
		m->ctr_base = 0;
		*why = "no counter block free on the node";
		return rc;
	}
	/* a frame into the region counts on the process's counters alone, and no frame into
	 * anything else on them */
	if (m->mr != NULL && trd_mr_bind_counters(m->mr, m->ctr_base) != 0) {
		*why = "cannot bind the region to its counters";
		return -EINVAL;
	}
	h->n_fifos = m->n_fifos;
	h->fifo_slots = m->slots;
	h->ctr_base = m->ctr_base;
	h->n_ctrs = TRD_COUNTER_BLOCK;
	h->ctr_offset = m->ctr_offset;
	h->region_off = m->region_off;
	h->region_len = m->region_len;
	h->region_key = m->key;
	h->inline_max = SVC_MU_INLINE_MAX;
	v->seg->mu_off = m->hdr_off;
	s->n_mu++;
	/* held from the start: once dead, the interface stays until nothing reads its region */
	m->held = true;
	v->refs++;
	return 0;
}

int
svc_mu_ctr_fd(const struct vif *v)
{
	return v->mu != NULL ? v->mu->ctr_fd : -1;
}

void
svc_mu_free(struct trd_vni_svc *s, struct vif *v)
{
	struct vmu *m = v->mu;

	if (m == NULL)
		return;
	if (m->mr != NULL)
		trd_mr_deregister(m->mr);
	if (m->ctr_base != 0) {
		trd_counter_block_free(s->node, m->ctr_base);
		s->n_mu--;
	}
	if (m->ctr_fd >= 0)
		close(m->ctr_fd);
	free(m);
	v->mu = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* serving the FIFOs */

/* The node's id of the process's counter @p k (1 .. TRD_COUNTER_BLOCK - 1; 0: none), or -1 for
 * an id that is not the process's. */
static inline int
mu_ctr(const struct vmu *m, uint16_t k)
{
	if (k == 0)
		return 0;
	return k < TRD_COUNTER_BLOCK ? m->ctr_base + k : -1;
}

/* Check a descriptor copied out of the ring, with @p avail slots (it among them) there.
 * 0, or -EINVAL: it is dropped. Every field that names something of this node is one of
 * the process's own; what names the target (rkey, roff, rec_ctr, fifo, dst) is the target's
 * to check, as for any frame from the wire, but for what trd_inject() checks here. */
static int
mu_check(const struct vmu *m, const struct trd_desc *d, uint32_t avail)
{
	/* a put only: a memory-FIFO message could be one to a reception FIFO the engine reads
	 * itself (the VNI protocol's, whose headers name their sender): a process would speak
	 * as any other. Until processes have reception FIFOs of their own, none is taken. */
	if (d->op != TRD_OP_PUT)
		return -EINVAL;
	if (d->flags & ~(TRD_DF_SRC_MR | TRD_DF_IMM))
		return -EINVAL;
	if (mu_ctr(m, d->inj_ctr) < 0)
		return -EINVAL;
	if (d->flags & TRD_DF_IMM)
		return (d->flags & TRD_DF_SRC_MR) || d->len > 8 || d->n_slots != 0 ? -EINVAL : 0;
	if (d->flags & TRD_DF_SRC_MR) {
		if (m->key == 0 || d->src_key != m->key || d->n_slots != 0 ||
		    d->src > m->region_len || d->len > m->region_len - d->src)
			return -EINVAL;
		return 0;
	}
	/* inline: the data follows in exactly the slots it needs, all of them in the ring */
	if (d->len > SVC_MU_INLINE_MAX || d->n_slots != (d->len + MU_SLOT - 1) / MU_SLOT ||
	    (uint32_t)d->n_slots >= avail)
		return -EINVAL;
	return 0;
}

/* A descriptor that cannot be used: counted, and its injection counter (if it is the
 * process's: @p k is its number, as the process wrote it) failed, so that a wait on it ends. */
static void
mu_drop(struct trd_vni_svc *s, struct vmu *m, uint16_t k)
{
	int id = mu_ctr(m, k);

	m->bad++;
	__atomic_store_n(&m->hdr->bad_descs, m->bad, __ATOMIC_RELAXED);
	ST(s, MU_BAD_DESCS)++;
	if (id > 0)
		trd_counter_set(s->node, (uint16_t)id, TRD_COUNTER_FAILED);
}

/* Take up to SVC_MU_BUDGET descriptors from one FIFO. The work done. */
static unsigned int
mu_fifo_serve(struct trd_vni_svc *s, struct vif *v, struct vmu *m, struct mu_fifo *f)
{
	uint32_t prod = __atomic_load_n(&f->r->prod.tail, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - f->cons;
	unsigned int done = 0;

	if (avail == 0 || f->broken)
		return 0;
	if (avail > m->mask) { /* more than the capacity (size - 1): the header was overwritten */
		f->broken = true;
		m->bad_rings++;
		__atomic_store_n(&m->hdr->bad_rings, m->bad_rings, __ATOMIC_RELAXED);
		ST(s, MU_BAD_RINGS)++;
		VNI_LOG(WARNING, "%u:%u: injection FIFO damaged: no longer served", v->app,
			v->proc);
		return 0;
	}
	while (done < SVC_MU_BUDGET && avail != 0) {
		uint8_t inl[SVC_MU_INLINE_MAX] __rte_aligned(8);
		uint32_t take, i0 = f->cons & m->mask;
		struct trd_desc d;
		uint16_t pk;
		int rc, id;

		svc_shared_read(&d, f->slots + (size_t)i0 * MU_SLOT, sizeof(d));
		/* its slots go with it, used or not, as long as they are there: a bad
		 * descriptor's data is not read as descriptors */
		take = 1 + ((uint32_t)d.n_slots < avail ? d.n_slots : 0);
		pk = d.inj_ctr; /* the process's number: d.inj_ctr becomes the node's id */
		rc = mu_check(m, &d, avail);
		if (rc == 0 && d.n_slots != 0) {
			for (uint32_t k = 0; k < d.n_slots; k++)
				svc_shared_read(inl + k * MU_SLOT,
						f->slots +
							(size_t)((i0 + 1 + k) & m->mask) * MU_SLOT,
						MU_SLOT);
			d.src = (uint64_t)(uintptr_t)inl;
		}
		if (rc == 0) {
			if (trd_inj_fifo_free_count(s->rep) < take + SVC_MU_BUDGET)
				break; /* the engine's FIFO is full: the rest waits in the ring */
			id = mu_ctr(m, d.inj_ctr);
			d.inj_ctr = (uint16_t)id;
			d.n_slots = 0;
			d.rsvd0 = 0;
			d.msg_id = 0;
			d.aux = 0;
			/* bytes of a region are copied into the packets, never referenced: nothing
			 * sent reads the segment once it is built */
			d.flags |= TRD_DF_COPY;
			rc = trd_inject(s->rep, &d);
			if (rc == -ENOBUFS)
				break;
		}
		if (rc != 0)
			mu_drop(s, m, pk); /* by mu_check() or trd_inject() */
		else {
			m->descs++;
			ST(s, MU_DESCS)++;
		}
		f->cons += take;
		avail -= take;
		done++;
	}
	__atomic_store_n(&m->hdr->descs, m->descs, __ATOMIC_RELAXED);
	__atomic_store_n(&f->r->cons.head, f->cons, __ATOMIC_RELAXED);
	__atomic_store_n(&f->r->cons.tail, f->cons, __ATOMIC_RELEASE);
	return done;
}

unsigned int
svc_mu_poll(struct trd_vni_svc *s)
{
	struct trd_inj_fifo_stats st;
	unsigned int work = 0;
	int drained = -1; /* not looked at yet */

	if (s->n_mu == 0)
		return 0;
	/* round robin: each round starts one interface further */
	s->mu_rr = s->mu_rr + 1 >= s->n_ifs ? 0 : s->mu_rr + 1;
	for (unsigned int j = 0; j < s->n_ifs; j++) {
		unsigned int i = s->mu_rr + j < s->n_ifs ? s->mu_rr + j : s->mu_rr + j - s->n_ifs;
		struct vif *v = s->ifs[i];
		struct vmu *m = v != NULL ? v->mu : NULL;

		if (m == NULL)
			continue;
		if (!v->dead && !v->broken)
			for (uint32_t k = 0; k < m->n_fifos; k++)
				work += mu_fifo_serve(s, v, m, &m->f[k]);
		if (!v->dead || !m->held)
			continue;
		if (m->mr != NULL) {
			/* no new read of the region starts (a peer's remote get, a descriptor of
			 * its own still in the engine's FIFO): those begun are counted */
			trd_mr_deregister(m->mr);
			m->gone = m->mr;
			m->mr = NULL;
		}
		if (drained < 0)
			drained = trd_inj_fifo_stats_get(s->rep, &st) == 0 && st.used == 0;
		if (drained && trd_mr_readers(m->gone) == 0) {
			/* nothing of a dead process's descriptors is left in the engine's FIFO and
			 * nothing reads its region: region and counters may go with the interface
			 */
			m->held = false;
			v->refs--;
			svc_vif_release_maybe(s, v);
			break; /* the table changed: the rest next round */
		}
	}
	return work;
}

void
svc_mu_stats(const struct vif *v, uint64_t *descs, uint64_t *bad)
{
	*descs = v->mu != NULL ? v->mu->descs : 0;
	*bad = v->mu != NULL ? v->mu->bad : 0;
}

bool
svc_mu_pending(const struct trd_vni_svc *s)
{
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		const struct vif *v = s->ifs[i];
		const struct vmu *m = v->mu;

		if (m != NULL && v->dead && m->held)
			return true; /* to be released once the node's FIFO drains */
		if (m == NULL || v->dead || v->broken)
			continue;
		for (uint32_t k = 0; k < m->n_fifos; k++)
			if (!m->f[k].broken && __atomic_load_n(&m->f[k].r->prod.tail,
							       __ATOMIC_ACQUIRE) != m->f[k].cons)
				return true;
	}
	return false;
}
