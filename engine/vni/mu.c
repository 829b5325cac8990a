/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service, the messaging-unit objects of an attached process (docs/vni.md, "Messaging-unit
 * objects"): injection FIFOs of the engine's own 64-byte descriptors in its segment, a block
 * of the node's counters mapped into it, and a region of its segment registered in the node.
 *
 * The service lays them out and makes them; the core serves the FIFOs itself, as guest FIFOs
 * (engine/core/api/guest_api.h): it copies each descriptor out of the ring, checks it against
 * what this process owns (its region, its counters) and cuts it into packets in place. The
 * service hands it the rings and the rights at attach, stops them at death, and gives the
 * segment back once the core holds nothing of them and nothing reads the region.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ring_elem.h>

#include "guest_api.h"
#include "iface_pvt.h"
#include "mu_pvt.h"

#define MU_SLOT 64 /* a ring element: one descriptor, or 64 bytes of its inline data */

_Static_assert(TRD_VNI_MU_FIFOS_MAX <= TRD_GUEST_FIFOS_MAX &&
		       TRD_VNI_MU_SLOTS_MAX <= TRD_GUEST_SLOTS_MAX &&
		       TRD_VNI_MU_RFIFOS_MAX <= TRD_GUEST_RFIFOS_MAX,
	       "the core serves every FIFO a process may ask for");

struct vmu {
	struct trd_vni_mu *hdr; /* in the segment */
	uint64_t hdr_off;
	uint32_t n_fifos, slots, mask;
	uint64_t fifo_off[TRD_VNI_MU_FIFOS_MAX];
	struct rte_ring *ring[TRD_VNI_MU_FIFOS_MAX];
	uint32_t n_rfifos, rslots; /* reception FIFOs: the core writes them (grfifo.c) */
	uint8_t rfirst;            /* the first one's id asked for, or 0 */
	uint64_t rfifo_off[TRD_VNI_MU_RFIFOS_MAX];
	struct rte_ring *rring[TRD_VNI_MU_RFIFOS_MAX];
	uint64_t rseen[TRD_VNI_MU_RFIFOS_MAX]; /* messages written into each, at the last look */
	int refd[TRD_VNI_MU_RFIFOS_MAX];       /* each one's eventfd (-1: none) */
	struct trd_guest *g; /* the core serves the FIFOs (NULL: none, or removed) */
	uint64_t region_off, region_len;
	struct trd_mr *mr;
	struct trd_mr *gone; /* mr once deregistered, while its readers are waited for */
	/* parts of the region registered as regions of the node (TRD_VNI_MR_MU): a slot is
	 * reused once deregistered and nothing reads it; the segment stays while one is read */
	struct trd_mr *sub[TRD_VNI_MU_MRS];
	bool sub_live[TRD_VNI_MU_MRS];
	uint64_t key;
	uint16_t ctr_base; /* 0: no block */
	int ctr_fd;        /* the block's own memfd, passed at attach (-1: none) */
	uint64_t ctr_offset;
	bool counted; /* in s->n_mu: made whole (an attachment refused half-way never was) */
	bool held;    /* a reference on the interface from attach until, dead, the core holds none
		       * of its descriptors and nothing reads its region (trd_mr_readers()) */
	uint64_t descs, bad, bad_rings; /* the guest's counts, as last added to the service's */
};

static inline uint64_t
ring_bytes(uint32_t slots)
{
	return RTE_ALIGN_CEIL(rte_ring_get_memsize_elem(MU_SLOT, slots), TRD_VNI_ALIGN);
}

/* A ring size a process may ask for: a power of 2, 64 .. TRD_VNI_MU_SLOTS_MAX. */
int
svc_mu_layout(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mu *req, uint64_t off,
	      uint64_t *len, const char **why)
{
	uint64_t start = off;
	struct vmu *m;

	if (!trd_vni_mu_req_ok(req) || req->region > s->conf.max_pool) {
		*why = "bad messaging-unit objects (injection FIFOs 0..8, reception FIFOs 0..4, "
		       "of 64..4096 slots, a power of 2, their ids within 128..254; region within "
		       "the engine's pool limit)";
		return -EINVAL;
	}
	m = v->mu = calloc(1, sizeof(*m));
	if (m == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	m->ctr_fd = -1;
	for (unsigned int i = 0; i < TRD_VNI_MU_RFIFOS_MAX; i++)
		m->refd[i] = -1;
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
	m->n_rfifos = req->n_rfifos;
	m->rslots = req->n_rfifos != 0 ? req->rfifo_slots : 0;
	m->rfirst = (uint8_t)req->rfifo_first;
	for (uint32_t i = 0; i < m->n_rfifos; i++) {
		m->rfifo_off[i] = off;
		off += ring_bytes(m->rslots);
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
		m->ring[i] = r;
		h->fifo_off[i] = m->fifo_off[i];
	}
	for (uint32_t i = 0; i < m->n_rfifos; i++) {
		struct rte_ring *r = (struct rte_ring *)(v->base + m->rfifo_off[i]);

		if (rte_ring_init(r, "vni_mu_rx", m->rslots, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
			*why = "cannot make the reception FIFOs";
			return -EINVAL;
		}
		m->rring[i] = r;
		h->rfifo_off[i] = m->rfifo_off[i];
		m->refd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (m->refd[i] < 0) {
			*why = "cannot make the reception FIFOs' eventfds";
			return -errno;
		}
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
	h->inline_max = TRD_GUEST_INLINE_MAX;
	h->n_rfifos = m->n_rfifos;
	h->rfifo_slots = m->rslots;
	if (m->n_fifos != 0 || m->n_rfifos != 0) {
		struct trd_guest_conf gc = {.n_fifos = m->n_fifos,
					    .slots = m->slots,
					    .region_key = m->key,
					    .region_len = m->region_len,
					    .ctr_base = m->ctr_base,
					    .pub = {&h->descs, &h->bad_descs, &h->bad_rings},
					    .n_rfifos = m->n_rfifos,
					    .rslots = m->rslots,
					    .rpub = {&h->rmsgs, &h->rfull, &h->rbad_rings},
					    .rfifo_first = m->rfirst};

		memcpy(gc.rings, m->ring, sizeof(m->ring[0]) * m->n_fifos);
		memcpy(gc.rrings, m->rring, sizeof(m->rring[0]) * m->n_rfifos);
		m->g = trd_guest_add(s->node, &gc);
		if (m->g == NULL) {
			*why = rte_errno == EADDRINUSE
				       ? "a reception FIFO id asked for is another process's"
			       : rte_errno == ENOSPC && m->n_rfifos != 0
				       ? "the engine cannot serve more FIFOs (injection, or reception: "
					 "127 ids a node)"
				       : "the engine cannot serve more injection FIFOs";
			return -rte_errno;
		}
		for (uint32_t i = 0; i < m->n_rfifos; i++)
			h->rfifo_id[i] = trd_guest_rfifo_id(m->g, i);
		s->n_rmu += m->n_rfifos != 0;
	}
	v->seg->mu_off = m->hdr_off;
	s->n_mu++;
	m->counted = true;
	/* held from the start: once dead, the interface stays until nothing reads its region */
	m->held = true;
	v->refs++;
	return 0;
}

unsigned int
svc_mu_fds(const struct vif *v, int *fds)
{
	const struct vmu *m = v->mu;

	if (m == NULL || m->ctr_fd < 0)
		return 0;
	fds[0] = m->ctr_fd;
	for (unsigned int i = 0; i < m->n_rfifos; i++)
		fds[1 + i] = m->refd[i];
	return 1 + m->n_rfifos;
}

/* The core lets go of @p m's FIFOs (it holds nothing of them, or the service is going away):
 * their counts become the service's. 0, or -EBUSY (the core still holds some of them). */
static int
mu_retire(struct trd_vni_svc *s, struct vmu *m, bool now)
{
	struct trd_guest_rstats rst;
	struct trd_guest_stats st;

	if (m->g == NULL || trd_guest_stats_get(m->g, &st) != 0 ||
	    trd_guest_rstats_get(m->g, &rst) != 0)
		return 0;
	if ((now ? trd_guest_remove_now(m->g) : trd_guest_remove(m->g)) != 0)
		return -EBUSY;
	m->g = NULL;
	ST(s, MU_RMSGS) += rst.msgs;
	ST(s, MU_RFULL) += rst.full;
	ST(s, MU_RBAD_RINGS) += rst.bad_rings;
	s->n_rmu -= m->n_rfifos != 0;
	ST(s, MU_DESCS) += st.descs;
	ST(s, MU_BAD_DESCS) += st.bad_descs;
	ST(s, MU_BAD_RINGS) += st.bad_rings;
	m->descs = st.descs;
	m->bad = st.bad_descs;
	m->bad_rings = st.bad_rings;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* parts of the region as regions of the node */

/* No new read of any part starts. */
static void
mu_subs_off(struct vmu *m)
{
	for (unsigned int i = 0; i < TRD_VNI_MU_MRS; i++)
		if (m->sub_live[i]) {
			trd_mr_deregister(m->sub[i]);
			m->sub_live[i] = false;
		}
}

/* Descriptors reading any part, deregistered or not. */
static uint32_t
mu_subs_read(const struct vmu *m)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < TRD_VNI_MU_MRS; i++)
		if (m->sub[i] != NULL)
			n += trd_mr_readers(m->sub[i]);
	return n;
}

int
svc_mu_mr_reg(struct trd_vni_svc *s, struct vif *v, uint64_t off, uint64_t len, uint32_t access,
	      uint64_t *key)
{
	struct vmu *m = v->mu;
	unsigned int core = TRD_ACCESS_COPY; /* copied into frames, readers counted */
	struct trd_mr *mr;
	int slot = -1;

	if (m == NULL || m->mr == NULL || v->dead)
		return -ENOENT;
	if (len == 0 || off > m->region_len || len > m->region_len - off)
		return -EFAULT;
	/* a doorbell names one of the process's own FIFOs, and is written by others */
	if (!trd_vni_mr_access_ok(access, m->n_rfifos) ||
	    ((access & TRD_VNI_MR_DOORBELL) && m->g == NULL))
		return -EINVAL;
	if (access & TRD_VNI_MR_REMOTE_READ)
		core |= TRD_ACCESS_REMOTE_READ;
	if (access & TRD_VNI_MR_REMOTE_WRITE)
		core |= TRD_ACCESS_REMOTE_WRITE;
	for (unsigned int i = 0; i < TRD_VNI_MU_MRS && slot < 0; i++)
		if (m->sub[i] == NULL || (!m->sub_live[i] && trd_mr_readers(m->sub[i]) == 0))
			slot = (int)i;
	if (slot < 0)
		return -ENOSPC;
	mr = trd_mr_register(s->node, v->base + m->region_off + off, len, core);
	if (mr == NULL)
		return -ENOSPC;
	/* its frames count on the process's counters alone, as the region's */
	if (trd_mr_bind_counters(mr, m->ctr_base) != 0 ||
	    ((access & TRD_VNI_MR_DOORBELL) && trd_guest_doorbell(mr, m->g, access >> 8 & 0xff))) {
		trd_mr_deregister(mr);
		return -EINVAL;
	}
	m->sub[slot] = mr;
	m->sub_live[slot] = true;
	*key = trd_mr_key(mr);
	return 0;
}

uint8_t *
svc_mu_span(const struct vif *v, uint64_t off, uint64_t len)
{
	const struct vmu *m = v->mu;

	if (m == NULL || m->mr == NULL || v->dead || off > m->region_len ||
	    len > m->region_len - off || off % 8 != 0)
		return NULL;
	return v->base + m->region_off + off;
}

uint16_t
svc_mu_ctr(const struct vif *v, uint32_t k)
{
	const struct vmu *m = v->mu;

	if (m == NULL || m->ctr_base == 0 || k == 0 || k >= TRD_COUNTER_BLOCK)
		return 0;
	return (uint16_t)(m->ctr_base + k);
}

int
svc_mu_mr_dereg(struct vif *v, uint64_t key)
{
	struct vmu *m = v->mu;

	if (m == NULL || key == 0)
		return -ENOENT;
	for (unsigned int i = 0; i < TRD_VNI_MU_MRS; i++)
		if (m->sub_live[i] && trd_mr_key(m->sub[i]) == key) {
			trd_mr_deregister(m->sub[i]);
			m->sub_live[i] = false;
			return 0;
		}
	return -ENOENT;
}

void
svc_mu_free(struct trd_vni_svc *s, struct vif *v)
{
	struct vmu *m = v->mu;

	if (m == NULL)
		return;
	/* (released, it was removed already; otherwise the service is going away) */
	mu_retire(s, m, true);
	if (m->mr != NULL)
		trd_mr_deregister(m->mr);
	mu_subs_off(m);
	if (m->ctr_base != 0)
		trd_counter_block_free(s->node, m->ctr_base);
	/* (a block taken by an attachment refused after it, for want of FIFO ids: not counted;
	 * taking it off would make the count 0 with a process attached, whose death then goes
	 * unseen by svc_mu_poll()) */
	if (m->counted)
		s->n_mu--;
	if (m->ctr_fd >= 0)
		close(m->ctr_fd);
	for (unsigned int i = 0; i < TRD_VNI_MU_RFIFOS_MAX; i++)
		if (m->refd[i] >= 0)
			close(m->refd[i]);
	free(m);
	v->mu = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* the core serves the FIFOs: the service watches */

unsigned int
svc_mu_poll(struct trd_vni_svc *s)
{
	if (s->n_mu == 0)
		return 0;
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		struct vmu *m = v != NULL ? v->mu : NULL;

		if (m == NULL)
			continue;
		if (v->dead || v->broken)
			trd_guest_stop(m->g); /* its rings are no longer read */
		if (!v->dead || !m->held)
			continue;
		if (m->mr != NULL) {
			/* no new read of the region starts (a peer's remote get, a descriptor of
			 * its own the core took before): those begun are counted */
			trd_mr_deregister(m->mr);
			m->gone = m->mr;
			m->mr = NULL;
		}
		mu_subs_off(m);
		/* out of the core's round once it holds none of its descriptors */
		if (mu_retire(s, m, false) == 0 && trd_mr_readers(m->gone) == 0 &&
		    mu_subs_read(m) == 0) {
			/* nothing of a dead process's descriptors is left in the core and nothing
			 * reads its region: region and counters may go with the interface */
			m->held = false;
			v->refs--;
			svc_vif_release_maybe(s, v);
			break; /* the table changed: the rest next round */
		}
	}
	return 0;
}

void
svc_mu_stats(const struct vif *v, uint64_t *descs, uint64_t *bad)
{
	const struct vmu *m = v->mu;
	struct trd_guest_stats st;

	*descs = *bad = 0;
	if (m != NULL && trd_guest_stats_get(m->g, &st) == 0) {
		*descs = st.descs; /* (the core counts; nothing per round here) */
		*bad = st.bad_descs;
	} else if (m != NULL) {
		*descs = m->descs;
		*bad = m->bad;
	}
}

void
svc_mu_stats_add(const struct trd_vni_svc *s, uint64_t out[TRD_VNI_SVC_STAT_MAX])
{
	for (unsigned int i = 0; i < s->n_ifs && s->n_mu != 0; i++) {
		const struct vmu *m = s->ifs[i]->mu;
		struct trd_guest_rstats rst;
		struct trd_guest_stats st;

		if (m == NULL || trd_guest_stats_get(m->g, &st) != 0 ||
		    trd_guest_rstats_get(m->g, &rst) != 0)
			continue;
		out[TRD_VNI_SVC_STAT_MU_DESCS] += st.descs;
		out[TRD_VNI_SVC_STAT_MU_BAD_DESCS] += st.bad_descs;
		out[TRD_VNI_SVC_STAT_MU_BAD_RINGS] += st.bad_rings;
		out[TRD_VNI_SVC_STAT_MU_RMSGS] += rst.msgs;
		out[TRD_VNI_SVC_STAT_MU_RFULL] += rst.full;
		out[TRD_VNI_SVC_STAT_MU_RBAD_RINGS] += rst.bad_rings;
	}
}

bool
svc_mu_pending(const struct trd_vni_svc *s)
{
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		const struct vif *v = s->ifs[i];
		const struct vmu *m = v->mu;

		if (m != NULL && v->dead && m->held)
			return true; /* to be released once the core lets go of it */
		if (m == NULL || v->dead || v->broken)
			continue;
		if (trd_guest_pending(m->g))
			return true;
	}
	return false;
}

void
svc_mu_rwake(struct trd_vni_svc *s)
{
	bool fenced = false;
	uint64_t x;

	if (s->n_rmu == 0)
		return;
	x = trd_guest_rfifo_msgs(s->node);
	if (x == s->rmsgs_seen)
		return;
	s->rmsgs_seen = x;
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		struct vmu *m = v != NULL ? v->mu : NULL;

		if (m == NULL || m->n_rfifos == 0 || v->dead || m->g == NULL)
			continue;
		for (unsigned int k = 0; k < m->n_rfifos; k++) {
			uint64_t c = trd_guest_rfifo_count(m->g, k);
			const uint64_t one = 1;

			if (c == m->rseen[k])
				continue;
			m->rseen[k] = c;
			if (!fenced) {
				/* the ring's producer index was published, then the word is read:
				 * pairs with the process's store of it, then its look at the ring
				 */
				__atomic_thread_fence(__ATOMIC_SEQ_CST);
				fenced = true;
			}
			if (__atomic_load_n(&m->hdr->rarmed[k], __ATOMIC_SEQ_CST) != 0 &&
			    __atomic_exchange_n(&m->hdr->rarmed[k], 0, __ATOMIC_SEQ_CST) != 0 &&
			    write(m->refd[k], &one, sizeof(one)) == sizeof(one))
				ST(s, WAKEUPS)++;
		}
	}
}
