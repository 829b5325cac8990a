/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting: descriptor helpers and the injection into an injection FIFO (application side).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring_elem.h>
#include <rte_ring_peek_zc.h>

#include "core_pvt.h"

/* ---- descriptor helpers ---- */

/* (trd_desc_put(), trd_desc_fifo(), trd_desc_rget() and trd_desc_atomic() are inline in
 * <toroid/toroid.h>: libtoroid_vni's programs have them too) */

/* ---- posting ---- */

struct trd_inj_fifo *
trd_inj_fifo(struct trd_node *n, unsigned int idx)
{
	if (n == NULL)
		return NULL;
	if (idx == TRD_ENGINE_FIFO)
		return n->inj[n->n_inj];
	return idx < n->n_fifo ? n->fifo[idx] : NULL;
}

unsigned int
trd_inj_fifo_free_count(const struct trd_inj_fifo *f)
{
	return f == NULL || f->ring == NULL ? 0 : rte_ring_free_count(f->ring) / TRD_UNITS;
}

int
trd_inj_fifo_stats_get(const struct trd_inj_fifo *f, struct trd_inj_fifo_stats *st)
{
	if (f == NULL || st == NULL)
		return -EINVAL;
	if (f->ring == NULL)
		return -ENOTSUP; /* an attached process's: the engine counts (trd_vni_mu_info) */
	st->descs = __atomic_load_n(&f->descs, __ATOMIC_RELAXED);
	st->pkts = __atomic_load_n(&f->pkts, __ATOMIC_RELAXED);
	st->pkts_sent = __atomic_load_n(&f->sent, __ATOMIC_ACQUIRE);
	st->used = rte_ring_count(f->ring) / TRD_UNITS;
	st->hwm = __atomic_load_n(&f->hwm, __ATOMIC_RELAXED);
	return 0;
}

/* Check a descriptor an application posts, whose destination trd_desc_check_dst() found at
 * @p rank; @p internal: the engine-only flags the poster may set (TRD_DF_PAYLOAD for
 * trd_inject_payload(), whose src_key the engine later frees as an mbuf: never the
 * application's to name). Returns 0 or -errno. */
static int
desc_check_local(const struct trd_node *n, const struct trd_desc *d, int rank, uint8_t internal)
{
	if (d->op == TRD_OP_NONE || d->op >= TRD_OP_MAX ||
	    (d->flags & ~(TRD_DF_USER_MASK | TRD_DF_COPY | internal)) != 0)
		return -EINVAL;
	/* a shared payload: only as trd_inject_payload() builds it (payload.c) */
	if ((d->flags & TRD_DF_PAYLOAD) &&
	    (d->src_key == 0 || (d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)) ||
	     (d->op != TRD_OP_PUT && d->op != TRD_OP_FIFO) || d->len > n->conf.inline_max))
		return -EINVAL;
	if (d->inj_ctr != 0 && (d->inj_ctr >= n->conf.n_counters || !n->ctr_used[d->inj_ctr]))
		return -EINVAL;
	if ((d->flags & TRD_DF_IMM) && ((d->flags & TRD_DF_SRC_MR) || d->len > 8))
		return -EINVAL;
	if ((d->flags & TRD_DF_ACKREQ) && ((d->flags & TRD_DF_CPL) || d->aux == 0))
		return -EINVAL;
	/* the target range must not wrap: a later packet would name the start of the space */
	if ((d->op == TRD_OP_PUT || d->op == TRD_OP_ATOMIC) && d->roff > UINT64_MAX - d->len)
		return -EINVAL;
	if (d->op == TRD_OP_ATOMIC)
		return (d->fifo >= TRD_ATOMIC_FADD && d->fifo <= TRD_ATOMIC_SWAP && d->len == 8 &&
			(d->flags & ~TRD_DF_ORDERED) == TRD_DF_ACKREQ && d->inj_ctr == 0)
			       ? 0
			       : -EINVAL;
	if (d->op == TRD_OP_RGET) {
		const struct trd_desc *c = (const void *)(uintptr_t)d->src;
		unsigned int nc = d->len / sizeof(*d);

		if (c == NULL || d->len == 0 || d->len % sizeof(*d) != 0 ||
		    nc > TRD_RGET_MAX_DESCS || (d->flags & (TRD_DF_IMM | TRD_DF_SRC_MR)))
			return -EINVAL;
		if (d->len > trd_max_payload(n, n->routes[rank].link,
					     n->reliable && (uint32_t)rank != n->rank))
			return -EMSGSIZE;
		for (unsigned int i = 0; i < nc; i++)
			if (trd_desc_check_remote(&c[i], n->coord) != 0 ||
			    c[i].roff > UINT64_MAX - c[i].len)
				return -EINVAL;
		return 0;
	}
	if (d->len != 0 && d->src == 0 && !(d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)))
		return -EINVAL;
	return 0;
}

/* A descriptor whose like, following it in a burst, needs only the checks of struct own_rule:
 * a put or memory-FIFO message with nothing that desc_check_local() checks against another
 * field (a shared payload's key, a verdict's id). */
static inline bool
desc_kind_own(const struct trd_desc *d)
{
	return (d->op == TRD_OP_PUT || d->op == TRD_OP_FIFO) &&
	       !(d->flags & (TRD_DF_PAYLOAD | TRD_DF_ACKREQ));
}

/* The first 16 bytes of a descriptor (op, flags, fifo, n_slots, dst, ack_fifo, inj_ctr, rec_ctr,
 * len): a descriptor whose words equal the previous one's differs from it only in the fields
 * that are its own (source, region offset, key, user word). */
struct desc_words {
	uint64_t w[2];
};

static inline struct desc_words
desc_words(const struct trd_desc *d)
{
	struct desc_words k;

	RTE_BUILD_BUG_ON(offsetof(struct trd_desc, len) + sizeof(d->len) != sizeof(k.w));
	memcpy(k.w, d, sizeof(k.w));
	return k;
}

/* The checks of desc_check_local() on the fields of a put or memory-FIFO message that
 * desc_words() leaves out, worked out once from the descriptor that passed whole: its like
 * (the same op, flags and length) is refused when its region offset passes roff_max (a put's
 * offset + length would wrap) or, needing a source, it has none. */
struct own_rule {
	uint64_t roff_max;
	bool need_src;
};

static inline struct own_rule
own_rule_of(const struct trd_desc *d)
{
	return (struct own_rule){
		.roff_max = d->op == TRD_OP_PUT ? UINT64_MAX - d->len : UINT64_MAX,
		.need_src = d->len != 0 && !(d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)),
	};
}

/* Slots a descriptor takes in the FIFO, and whether its data is copied now. */
static inline unsigned int
desc_slots(const struct trd_node *n, const struct trd_desc *d)
{
	if (d->op == TRD_OP_RGET)
		return (d->len + 63) / 64;
	if (d->op == TRD_OP_ATOMIC)
		return 0; /* its operands travel in the descriptor */
	if ((d->flags & (TRD_DF_SRC_MR | TRD_DF_IMM)) || d->len == 0 || d->len > n->conf.inline_max)
		return 0;
	return (d->len + 63) / 64;
}

#define TRD_BULK_SLOTS 512

/* Slot @p k (64 bytes) of a zero-copy reservation. Every post is whole slots, so a slot never
 * straddles the ring's wrap. */
static inline void *
zc_slot(const struct rte_ring_zc_data *z, unsigned int k)
{
	unsigned int u = k * TRD_UNITS;

	return u < z->n1 ? (uint8_t *)z->ptr1 + (size_t)u * TRD_UNIT
			 : (uint8_t *)z->ptr2 + (size_t)(u - z->n1) * TRD_UNIT;
}

/* Copy @p len bytes of inline data into the @p s slots from @p k on. */
static inline void
zc_copy(const struct rte_ring_zc_data *z, unsigned int k, unsigned int s, const uint8_t *src,
	uint32_t len)
{
	if ((k + s) * TRD_UNITS <= z->n1 || k * TRD_UNITS >= z->n1) {
		rte_memcpy(zc_slot(z, k), src, len);
		return;
	}
	for (unsigned int i = 0; i < s; i++, src += 64, len -= 64)
		rte_memcpy(zc_slot(z, k + i), src, RTE_MIN(len, 64u));
}

/* Everything is checked first; then the descriptors and their inline data are written straight
 * into the ring (a zero-copy reservation: the FIFO's producers are head/tail synchronised), so a
 * post copies each byte once and needs no buffer of its own. */
static __rte_always_inline int
inject_bulk(struct trd_inj_fifo *f, const struct trd_desc *d, unsigned int nd, uint8_t internal)
{
	uint8_t slots[TRD_BULK_SLOTS];
	struct rte_ring_zc_data z;
	struct trd_node *n;
	unsigned int total = 0, k = 0;
	/* the words of the last descriptor that passed whole, and whether it is of
	 * desc_kind_own(): only then may its like take the shortcut. (Inverting a word of a
	 * descriptor of another kind would not do: a caller may pass exactly those words.) */
	struct desc_words prev = {{0, 0}};
	bool own = false;
	unsigned int sl = 0; /* its slots */
	struct own_rule rule = {0, false};
	int rc, rank = 0;

	if (unlikely(f == NULL || (d == NULL && nd != 0)))
		return -EINVAL;
	n = f->node;
	if (unlikely(nd > TRD_BULK_SLOTS))
		return -E2BIG;
	/* every slots[i] < nd is set by the check loop before the copy reads it */
	for (unsigned int i = 0; i < nd; i++) {
		struct desc_words dw = desc_words(&d[i]);

		if (own && dw.w[0] == prev.w[0] && dw.w[1] == prev.w[1]) {
			/* a burst is mostly one kind of message to one node: what the previous
			 * descriptor passed holds for this one; only its own fields are checked */
			if (unlikely(d[i].roff > rule.roff_max || (rule.need_src && d[i].src == 0)))
				return -EINVAL;
		} else {
			/* a burst mostly goes to one node: its destination is checked once */
			if (i == 0 || d[i].dst.x != d[i - 1].dst.x ||
			    d[i].dst.y != d[i - 1].dst.y || d[i].dst.z != d[i - 1].dst.z) {
				rank = trd_desc_check_dst(n, d[i].dst);
				if (unlikely(rank < 0))
					return rank;
			}
			rc = desc_check_local(n, &d[i], rank, internal);
			if (unlikely(rc != 0))
				return rc;
			sl = desc_slots(n, &d[i]);
			rule = own_rule_of(&d[i]);
			/* its like may follow with only its own fields checked if it is of
			 * desc_kind_own() */
			prev = dw;
			own = desc_kind_own(&d[i]);
		}
		slots[i] = (uint8_t)sl;
		total += 1u + sl;
	}
	if (unlikely(total > TRD_BULK_SLOTS))
		return -E2BIG;
	if (unlikely(total == 0))
		return 0;
	if (unlikely(rte_ring_enqueue_zc_bulk_elem_start(f->ring, TRD_UNIT, total * TRD_UNITS, &z,
							 NULL) == 0))
		return -ENOBUFS;
	if (likely(total * TRD_UNITS <= z.n1)) {
		/* the reservation does not wrap: one slot after the other */
		uint8_t *w = z.ptr1;

		for (unsigned int i = 0; i < nd; i++) {
			unsigned int s = slots[i];
			struct trd_desc *wd = (struct trd_desc *)w;

			*wd = d[i];
			wd->n_slots = (uint8_t)s;
			wd->msg_id = 0;
			if (s != 0)
				rte_memcpy(w + TRD_UNIT * TRD_UNITS,
					   (const uint8_t *)(uintptr_t)d[i].src, d[i].len);
			w += (size_t)(1 + s) * TRD_UNIT * TRD_UNITS;
		}
		rte_ring_enqueue_zc_elem_finish(f->ring, total * TRD_UNITS);
		return 0;
	}
	for (unsigned int i = 0; i < nd; i++) {
		unsigned int s = slots[i];
		struct trd_desc *w = zc_slot(&z, k);

		*w = d[i];
		w->n_slots = (uint8_t)s;
		w->msg_id = 0;
		if (s != 0)
			zc_copy(&z, k + 1, s, (const uint8_t *)(uintptr_t)d[i].src, d[i].len);
		k += 1 + s;
	}
	rte_ring_enqueue_zc_elem_finish(f->ring, total * TRD_UNITS);
	return 0;
}

int
trd_inject_bulk(struct trd_inj_fifo *f, const struct trd_desc *d, unsigned int nd)
{
	/* a FIFO of an attached process: its library posts into its ring in the segment */
	if (unlikely(f != NULL && f->ring == NULL))
		return f->node->att->inject(f->node, f->id, d, nd);
	return inject_bulk(f, d, nd, 0);
}

int
trd_inject(struct trd_inj_fifo *f, const struct trd_desc *d)
{
	return trd_inject_bulk(f, d, 1);
}

int
trd_inject_own(struct trd_inj_fifo *f, const struct trd_desc *d)
{
	return inject_bulk(f, d, 1, TRD_DF_PAYLOAD);
}
