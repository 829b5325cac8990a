/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives in the engine (include/toroid/comb.h, docs/collectives.md): allreduce, reduce,
 * broadcast and barrier combined by the engine lcores on a tree of links. The application's
 * post goes through a ring to the serving lcore, which from then on does everything: it keeps
 * the pieces its children send up (COMB frames, phase UP) until every contributor of a piece
 * is there, combines them with the node's own vector in a fixed order (own, then children by
 * rank: the same bits on every run), sends the piece on to the parent or, at the root, down
 * to the children (phase DOWN); an inner node keeps the result's pieces and passes them on.
 * Trees, numbering, early pieces and the checks of every piece: the docs' protocol.
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring_elem.h>

#include <toroid/comb.h>

#include "core_pvt.h"
#include "reduce_ops.h" /* engine/wire/api */

#define COMB_GROUPS    8 /* by dimension mask, 1..7 */
#define COMB_MAX_CHILD 6
#define COMB_RING      64
#define NO_PARENT      UINT32_MAX
/* Vectors from this size on keep their buffers for the next collective when they end well:
 * rte_free() zeroes what it frees (a third of a 1 MiB allreduce's work); small ones are cheap. */
#define COMB_SPARE_MIN ((size_t)64 * 1024)
/* Buffer bytes a node's early instances (made by neighbours' pieces before the post) may hold
 * at once: one of the largest (a vector, a staging vector per child, two bytes a piece). */
#define COMB_EARLY_MAX                                                                             \
	((size_t)TRD_COMB_MAX_LEN * (1 + COMB_MAX_CHILD) +                                         \
	 2 * (size_t)((TRD_COMB_MAX_LEN + TRD_COMB_PIECE - 1) / TRD_COMB_PIECE))

/* How inst_make() makes an instance. */
enum comb_make {
	MAKE_BARE,  /* no buffers: a failed collective (an abort, a post that found no memory) */
	MAKE_POST,  /* buffers, for the application's post */
	MAKE_EARLY, /* buffers within COMB_EARLY_MAX, for a neighbour's piece before the post */
};

_Static_assert(sizeof(struct trd_comb_req) % 4 == 0, "ring elements are whole words");

/* A node's place in the tree of a group. */
struct comb_tree {
	uint32_t parent; /* rank, NO_PARENT at the root */
	struct trd_coord parent_c;
	uint32_t child[COMB_MAX_CHILD]; /* by rank, ascending: the combining order */
	struct trd_coord child_c[COMB_MAX_CHILD];
	unsigned int n_child;
};

/* One collective at this node. */
struct comb_inst {
	bool busy;
	bool posted;        /* the application's part is here */
	bool watched;       /* its tree neighbours count in n->owed (their liveness is watched) */
	bool failed;        /* ends in failure once aborts went out and the application posted */
	bool early;         /* its buffers count in c->early_bytes (made before the post) */
	uint8_t abort_todo; /* neighbours still to tell: bit 0 the parent, bit i + 1 child i */
	uint64_t seq;
	uint16_t word;
	uint8_t kind, op, dtype, dims;
	uint32_t root;
	uint32_t job; /* its frames' msg_id: pieces of another job fail it (comb.h) */
	uint32_t len, n_pieces;
	size_t bytes; /* of its buffers */
	struct comb_tree t;
	const uint8_t *src;
	uint8_t *dst;
	uint16_t counter;
	uint8_t *acc;              /* combined pieces, then the result */
	uint8_t *stage;            /* children's pieces: child i at i * len */
	size_t acc_cap, stage_cap; /* their sizes (a spare taken may be larger) */
	uint8_t *have;             /* by piece: bit 0 own, bit i + 1 child i */
	uint8_t *res;              /* by piece: the result is in acc */
	uint32_t comb_next, up_next, res_n;
	uint32_t down_next[COMB_MAX_CHILD];
};

struct trd_comb {
	struct rte_ring *req;         /* posts, MP enqueue, the serving lcore dequeues */
	uint64_t posted[COMB_GROUPS]; /* application side (atomic) */
	uint64_t low[COMB_GROUPS];    /* lowest seq whose slot is not released (atomic, engine
				       * writes): posts are refused from low + TRD_COMB_DEPTH on */
	uint64_t next_seq[COMB_GROUPS];
	uint64_t slot_next[COMB_GROUPS][TRD_COMB_DEPTH]; /* the seq each slot takes next */
	struct comb_inst inst[COMB_GROUPS][TRD_COMB_DEPTH];
	unsigned int n_busy;
	size_t early_bytes; /* buffers of the instances not posted yet */
	/* the buffers of the last large collective that ended well, for the next (or NULL) */
	uint8_t *spare_acc, *spare_stage;
	size_t spare_acc_cap, spare_stage_cap;
	struct trd_comb_stats st;
};

static void inst_watch(struct trd_node *n, struct comb_inst *in, bool on);

/* ---- trees ---- */

static inline uint8_t
axis_of(struct trd_coord c, unsigned int a)
{
	return a == 0 ? c.x : a == 1 ? c.y : c.z;
}

static inline void
set_axis(struct trd_coord *c, unsigned int a, uint8_t v)
{
	if (a == 0)
		c->x = v;
	else if (a == 1)
		c->y = v;
	else
		c->z = v;
}

static inline bool
coord_same(struct trd_coord a, struct trd_coord b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

/* Is @p c in the group (@p dims) rooted at @p r: the same as r on the other axes? */
static bool
comb_member(struct trd_coord c, struct trd_coord r, unsigned int dims)
{
	for (unsigned int a = 0; a < 3; a++)
		if (!(dims & (1u << a)) && axis_of(c, a) != axis_of(r, a))
			return false;
	return true;
}

/* The parent of member @p c; false at the root. */
static bool
comb_parent(const struct trd_torus *t, struct trd_coord c, struct trd_coord r, unsigned int dims,
	    struct trd_coord *p)
{
	for (unsigned int k = 0; k < 3; k++) {
		unsigned int a = 2 - k; /* z, then y, then x */
		unsigned int d = t->dim[a], ca = axis_of(c, a), ra = axis_of(r, a), fwd;

		if (!(dims & (1u << a)) || ca == ra)
			continue;
		fwd = (ra + d - ca) % d; /* links forward to the root's coordinate */
		*p = c;
		set_axis(p, a, (uint8_t)(fwd <= d - fwd ? (ca + 1) % d : (ca + d - 1) % d));
		return true;
	}
	return false;
}

static uint32_t
rank_c(const struct trd_torus *t, struct trd_coord c)
{
	return c.x + t->dim[0] * (c.y + (uint32_t)t->dim[1] * c.z);
}

static void
comb_tree_of(const struct trd_torus *t, struct trd_coord me, struct trd_coord r, unsigned int dims,
	     struct comb_tree *out)
{
	struct trd_coord p;

	out->n_child = 0;
	out->parent = NO_PARENT;
	if (comb_parent(t, me, r, dims, &p)) {
		out->parent = rank_c(t, p);
		out->parent_c = p;
	}
	for (unsigned int a = 0; a < 3; a++) {
		unsigned int d = t->dim[a];

		if (!(dims & (1u << a)) || d == 1)
			continue;
		for (unsigned int s = 0; s < 2; s++) {
			struct trd_coord nb = me, q;
			uint32_t rk;
			unsigned int i;

			if (s == 1 && d == 2)
				break; /* both ways are the same neighbour */
			set_axis(&nb, a, (uint8_t)((axis_of(me, a) + (s == 0 ? 1 : d - 1)) % d));
			if (!comb_parent(t, nb, r, dims, &q) || !coord_same(q, me))
				continue;
			rk = rank_c(t, nb);
			/* insertion by rank: the fixed combining order */
			for (i = out->n_child; i > 0 && out->child[i - 1] > rk; i--) {
				out->child[i] = out->child[i - 1];
				out->child_c[i] = out->child_c[i - 1];
			}
			out->child[i] = rk;
			out->child_c[i] = nb;
			out->n_child++;
		}
	}
}

/* ---- state ---- */

static struct trd_comb *
comb_get(struct trd_node *n)
{
	struct trd_comb *c = __atomic_load_n(&n->comb, __ATOMIC_ACQUIRE), *expect = NULL;
	char name[RTE_RING_NAMESIZE];

	if (c != NULL)
		return c;
	c = rte_zmalloc("trd_comb", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (c == NULL)
		return NULL;
	snprintf(name, sizeof(name), "cmb_%p", (void *)c);
	c->req = rte_ring_create_elem(name, sizeof(struct trd_comb_req), COMB_RING, SOCKET_ID_ANY,
				      RING_F_SC_DEQ);
	if (c->req == NULL) {
		rte_free(c);
		return NULL;
	}
	for (unsigned int g = 0; g < COMB_GROUPS; g++)
		for (unsigned int i = 0; i < TRD_COMB_DEPTH; i++)
			c->slot_next[g][i] = i;
	if (!__atomic_compare_exchange_n(&n->comb, &expect, c, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		rte_ring_free(c->req);
		rte_free(c);
		return expect;
	}
	return c;
}

void
trd_comb_fini(struct trd_node *n)
{
	struct trd_comb *c = n->comb;

	if (c == NULL)
		return;
	for (unsigned int g = 0; g < COMB_GROUPS; g++)
		for (unsigned int i = 0; i < TRD_COMB_DEPTH; i++) {
			struct comb_inst *in = &c->inst[g][i];

			if (in->busy)
				inst_watch(n, in, false);
			rte_free(in->acc);
			rte_free(in->stage);
			rte_free(in->have);
			rte_free(in->res);
		}
	rte_free(c->spare_acc);
	rte_free(c->spare_stage);
	rte_ring_free(c->req);
	rte_free(c);
	n->comb = NULL;
}

/* The rank of tree neighbour @p k of @p in: 0 the parent, i + 1 child i; NO_PARENT if none. */
static inline uint32_t
nb_rank(const struct comb_inst *in, unsigned int k)
{
	return k == 0 ? in->t.parent : in->t.child[k - 1];
}

static inline struct trd_coord
nb_coord(const struct comb_inst *in, unsigned int k)
{
	return k == 0 ? in->t.parent_c : in->t.child_c[k - 1];
}

/* Watch (@p on) or stop watching the tree neighbours of @p in: while it waits for them they
 * owe it their pieces, so the reliability layer probes a silent one and declares it down
 * (docs/reliability.md): the collective then fails in bounded time. */
static void
inst_watch(struct trd_node *n, struct comb_inst *in, bool on)
{
	if (!n->reliable || in->watched == on)
		return;
	in->watched = on;
	for (unsigned int k = 0; k <= in->t.n_child; k++) {
		uint32_t rk = nb_rank(in, k);
		struct trd_peer *pe;

		if (rk == NO_PARENT)
			continue;
		if (!on) {
			__atomic_fetch_sub(&n->owed[rk], 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_fetch_add(&n->owed[rk], 1, __ATOMIC_RELAXED);
		pe = trd_rel_peer(n, rk);
		if (pe != NULL)
			trd_rel_want(n, pe); /* its timers run */
	}
}

/* @p in's buffers no longer count as early (it was posted, or they are freed). */
static void
inst_uncharge(struct trd_comb *c, struct comb_inst *in)
{
	if (in->early) {
		c->early_bytes -= in->bytes;
		in->early = false;
	}
}

/* A spare buffer of at least @p need bytes (COMB_SPARE_MIN or more), taken from *@p spare
 * (its size in *@p cap, set to the buffer's), or NULL. */
static uint8_t *
spare_take(uint8_t **spare, size_t *spare_cap, size_t need, size_t *cap)
{
	uint8_t *b = *spare;

	if (need < COMB_SPARE_MIN || b == NULL || *spare_cap < need)
		return NULL;
	*cap = *spare_cap;
	*spare = NULL;
	*spare_cap = 0;
	return b;
}

/* Keep buffer @p b (@p cap bytes) as the spare, the larger of it and the one kept; free the
 * other. */
static void
spare_put(uint8_t **spare, size_t *spare_cap, uint8_t *b, size_t cap)
{
	if (b == NULL || cap < COMB_SPARE_MIN || (*spare != NULL && *spare_cap >= cap)) {
		rte_free(b);
		return;
	}
	rte_free(*spare);
	*spare = b;
	*spare_cap = cap;
}

/* Free the buffers of @p in (a failed instance needs none); @p keep: one that ended well
 * leaves its large buffers for the next collective. */
static void
inst_free_bufs(struct trd_comb *c, struct comb_inst *in, bool keep)
{
	inst_uncharge(c, in);
	if (keep) {
		spare_put(&c->spare_acc, &c->spare_acc_cap, in->acc, in->acc_cap);
		spare_put(&c->spare_stage, &c->spare_stage_cap, in->stage, in->stage_cap);
	} else {
		rte_free(in->acc);
		rte_free(in->stage);
	}
	rte_free(in->have);
	rte_free(in->res);
	in->acc = in->stage = in->have = in->res = NULL;
	in->bytes = 0;
}

/* Slot @p i of group @p g takes its next seq: move the group's low mark past every seq whose
 * slot is released, in order (collectives of a group end out of order). */
static void
slot_advance(struct trd_comb *c, unsigned int g, unsigned int i)
{
	uint64_t low = c->low[g];

	c->slot_next[g][i] += TRD_COMB_DEPTH;
	while (c->slot_next[g][low % TRD_COMB_DEPTH] > low)
		low++;
	__atomic_store_n(&c->low[g], low, __ATOMIC_RELEASE);
}

static void
inst_release(struct trd_node *n, struct trd_comb *c, struct comb_inst *in, bool ok)
{
	unsigned int g = in->dims, i = (unsigned int)(in->seq % TRD_COMB_DEPTH);

	inst_watch(n, in, false);
	inst_free_bufs(c, in, ok);
	memset(in, 0, sizeof(*in));
	c->n_busy--;
	slot_advance(c, g, i);
}

/* The collective ended here: tell the application (its counter), give the slot back. */
static void
inst_end(struct trd_node *n, struct trd_comb *c, struct comb_inst *in, bool ok)
{
	if (in->posted) {
		if (ok) { /* figures first: the counter's release store publishes them */
			c->st.completed++;
			trd_ctr_sub(n, in->counter, 1);
		} else {
			c->st.failed++;
			trd_ctr_fail(&n->ctr[in->counter]);
		}
	}
	inst_release(n, c, in, ok);
}

/* A new instance for collective @p seq of group @p dims: its tree and, but @p how is
 * MAKE_BARE (which cannot fail), its buffers; -ENOBUFS if an early one's do not fit in what
 * is left of COMB_EARLY_MAX, -ENOMEM if they cannot be allocated. */
static int
inst_make(struct trd_node *n, struct trd_comb *c, struct comb_inst *in, uint64_t seq, uint16_t word,
	  uint32_t root, uint32_t job, uint32_t len, enum comb_make how)
{
	const struct trd_torus *t = &n->torus;
	struct trd_coord r = {(uint8_t)(root % t->dim[0]), (uint8_t)(root / t->dim[0] % t->dim[1]),
			      (uint8_t)(root / t->dim[0] / t->dim[1])};
	uint32_t np = len == 0 ? 1 : (len + TRD_COMB_PIECE - 1) / TRD_COMB_PIECE;

	memset(in, 0, sizeof(*in));
	in->seq = seq;
	in->word = word;
	in->kind = (uint8_t)(word >> 12);
	in->op = (uint8_t)((word >> 8) & 0xf);
	in->dims = (uint8_t)((word >> 4) & 0xf);
	in->dtype = (uint8_t)(word & 0xf);
	in->root = root;
	in->job = job;
	in->len = len;
	in->n_pieces = np;
	comb_tree_of(t, n->coord, r, in->dims, &in->t);
	if (how == MAKE_BARE) {
		in->busy = true;
		c->n_busy++;
		return 0;
	}
	in->bytes = (size_t)RTE_MAX(len, 8u) + 2 * (size_t)np +
		    (len == 0 ? 0 : (size_t)len * in->t.n_child);
	if (how == MAKE_EARLY && c->early_bytes + in->bytes > COMB_EARLY_MAX) {
		memset(in, 0, sizeof(*in));
		return -ENOBUFS;
	}
	in->acc_cap = RTE_MAX(len, 8u);
	in->stage_cap = (size_t)len * in->t.n_child;
	in->acc = spare_take(&c->spare_acc, &c->spare_acc_cap, in->acc_cap, &in->acc_cap);
	if (in->acc == NULL)
		in->acc = rte_malloc("trd_comb_acc", in->acc_cap, RTE_CACHE_LINE_SIZE);
	in->stage = in->stage_cap == 0 ? NULL
				       : spare_take(&c->spare_stage, &c->spare_stage_cap,
						    in->stage_cap, &in->stage_cap);
	if (in->stage == NULL && in->stage_cap != 0)
		in->stage = rte_malloc("trd_comb_stage", in->stage_cap, RTE_CACHE_LINE_SIZE);
	in->have = rte_zmalloc("trd_comb_have", np, 0);
	in->res = rte_zmalloc("trd_comb_res", np, 0);
	if (in->acc == NULL || in->have == NULL || in->res == NULL ||
	    (in->stage == NULL && in->t.n_child != 0 && len != 0)) {
		rte_free(in->acc);
		rte_free(in->stage);
		rte_free(in->have);
		rte_free(in->res);
		memset(in, 0, sizeof(*in));
		return -ENOMEM;
	}
	if (how == MAKE_EARLY) {
		in->early = true;
		c->early_bytes += in->bytes;
	}
	in->busy = true;
	c->n_busy++;
	return 0;
}

/* ---- combining ---- */

/* The element loops (engine/wire/api/reduce_ops.h, shared with the software collectives), by
 * [operation][element type]: NULL where the wire parser lets no such pair through (bitwise
 * operations on doubles). */
typedef void (*comb_fn)(void *inout, const void *in, size_t n);
static const comb_fn comb_fns[TRD_COMB_BXOR + 1][TRD_COMB_DOUBLE + 1] = {
	[TRD_COMB_SUM] = {[TRD_COMB_I64] = trd_reduce_sum_int64,
			  [TRD_COMB_U64] = trd_reduce_sum_uint64,
			  [TRD_COMB_DOUBLE] = trd_reduce_sum_double},
	[TRD_COMB_MIN] = {[TRD_COMB_I64] = trd_reduce_min_int64,
			  [TRD_COMB_U64] = trd_reduce_min_uint64,
			  [TRD_COMB_DOUBLE] = trd_reduce_min_double},
	[TRD_COMB_MAX] = {[TRD_COMB_I64] = trd_reduce_max_int64,
			  [TRD_COMB_U64] = trd_reduce_max_uint64,
			  [TRD_COMB_DOUBLE] = trd_reduce_max_double},
	[TRD_COMB_BAND] =
		{[TRD_COMB_I64] = trd_reduce_band_int64, [TRD_COMB_U64] = trd_reduce_band_uint64},
	[TRD_COMB_BOR] =
		{[TRD_COMB_I64] = trd_reduce_bor_int64, [TRD_COMB_U64] = trd_reduce_bor_uint64},
	[TRD_COMB_BXOR] =
		{[TRD_COMB_I64] = trd_reduce_bxor_int64, [TRD_COMB_U64] = trd_reduce_bxor_uint64},
};

/* Piece @p j of @p in: own vector, then each child's in rank order. The buffers are
 * rte_malloc()'d (8-byte aligned) and pieces are whole elements; the application's @c src is
 * 8-byte aligned (checked at post). */
static void
combine_piece(struct comb_inst *in, uint32_t j)
{
	uint32_t off = j * TRD_COMB_PIECE, bytes = RTE_MIN(TRD_COMB_PIECE, in->len - off);
	uint32_t k = bytes / TRD_COMB_ELEM;
	void *a = in->acc + off;
	/* op and dtype were checked (trd_comb_valid) at the post and in every frame's word */
	comb_fn fn = in->op <= TRD_COMB_BXOR && in->dtype <= TRD_COMB_DOUBLE
			     ? comb_fns[in->op][in->dtype]
			     : NULL;

	if (bytes == 0)
		return;
	memcpy(a, in->src + off, bytes);
	for (unsigned int i = 0; fn != NULL && i < in->t.n_child; i++) {
		const void *b = in->stage + (size_t)i * in->len + off;

		fn(a, b, k);
	}
}

/* ---- sending ---- */

/* Piece @p j of @p in in phase @p phase to neighbour @p rank (at @p to): 0, -EAGAIN (no room
 * now: again at the next round), or -EHOSTUNREACH (the neighbour is down or unreachable). */
static int
comb_send(struct trd_node *n, struct trd_comb *c, const struct comb_inst *in, uint32_t rank,
	  struct trd_coord to, uint8_t phase, uint32_t j)
{
	struct trd_route *rt = &n->routes[rank];
	uint32_t off = j * TRD_COMB_PIECE;
	uint16_t bytes = (uint16_t)(in->len == 0 || phase == TRD_COMB_ABORT
					    ? 0
					    : RTE_MIN(TRD_COMB_PIECE, in->len - off));
	struct trd_peer *pe = NULL;
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;
	struct trd_hdr *h;

	if (rt->link == NULL || trd_peer_is_down(n, rank))
		return -EHOSTUNREACH;
	if (n->reliable) {
		pe = trd_rel_peer(n, rank);
		if (pe == NULL)
			return -EAGAIN;
		if (trd_rel_room(n, pe) == 0) {
			trd_rel_want(n, pe); /* perhaps its session must start first */
			return -EAGAIN;
		}
	}
	if (trd_link_room(rt->link) == 0)
		return -EAGAIN;
	m = trd_mbuf_get(n);
	if (m == NULL)
		return -EAGAIN;
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eh->dst_addr = rt->dmac;
	eh->src_addr = rt->link->mac;
	eh->ether_type = rte_cpu_to_be_16(TRD_ETHERTYPE);
	h = (struct trd_hdr *)(eh + 1);
	trd_hdr_encode(h, &(const struct trd_pkt){
				  .version = TRD_WIRE_VERSION,
				  .type = TRD_PKT_COMB,
				  .flags = TRD_HF_ALL,
				  .src = {n->coord.x, n->coord.y, n->coord.z},
				  .hops = rt->hops,
				  .dst = {to.x, to.y, to.z},
				  .fifo = phase,
				  .counter = in->word,
				  .key = in->seq,
				  .offset = off,
				  .msg_len = in->len,
				  .pay_len = bytes,
				  .msg_id = in->job,
				  .aux = in->root,
			  });
	if (bytes != 0)
		memcpy(h + 1, in->acc + off, bytes);
	m->data_len = (uint16_t)(TRD_FRAME_HLEN + bytes);
	m->pkt_len = m->data_len;
	if (trd_pkt_finish(n, pe, h, m) != 0) {
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	trd_link_queue(rt->link, m, NULL, NULL, 0);
	c->st.tx_pieces++;
	return 0;
}

/* A failed collective: tell the tree neighbours (an ABORT each, but @p from, who told us,
 * and those down), then end here once the application has posted. */
static void
inst_aborting(struct trd_node *n, struct trd_comb *c, struct comb_inst *in)
{
	for (unsigned int k = 0; k <= in->t.n_child; k++) {
		int rc;

		if (!(in->abort_todo & (1u << k)))
			continue;
		rc = comb_send(n, c, in, nb_rank(in, k), nb_coord(in, k), TRD_COMB_ABORT, 0);
		if (rc != -EAGAIN)
			in->abort_todo &= (uint8_t) ~(1u << k); /* sent, or it is down */
	}
	if (in->abort_todo == 0 && in->posted)
		inst_end(n, c, in, false);
}

static void
inst_fail(struct trd_node *n, struct trd_comb *c, struct comb_inst *in, uint32_t from)
{
	if (in->failed)
		return;
	in->failed = true;
	inst_free_bufs(c, in, false); /* what still comes for it is not kept */
	in->abort_todo = 0;
	for (unsigned int k = 0; k <= in->t.n_child; k++) {
		uint32_t rk = nb_rank(in, k);

		if (rk != NO_PARENT && rk != from && !trd_peer_is_down(n, rk))
			in->abort_todo |= (uint8_t)(1u << k);
	}
	inst_aborting(n, c, in);
}

/* Is a tree neighbour of @p in declared down? */
static bool
inst_nb_down(const struct trd_node *n, const struct comb_inst *in)
{
	for (unsigned int k = 0; k <= in->t.n_child; k++) {
		uint32_t rk = nb_rank(in, k);

		if (rk != NO_PARENT && trd_peer_is_down(n, rk))
			return true;
	}
	return false;
}

/* Move @p in on as far as it goes now: combine and send up, send down, end. */
static void
inst_progress(struct trd_node *n, struct trd_comb *c, struct comb_inst *in)
{
	uint8_t full = (uint8_t)(1u | (((1u << in->t.n_child) - 1) << 1));
	bool root = in->t.parent == NO_PARENT, done = true;
	int rc = 0;

	if (in->failed) {
		inst_aborting(n, c, in);
		return;
	}
	if (!in->posted)
		return;
	if (n->reliable && inst_nb_down(n, in))
		goto fail;
	if (in->kind != TRD_COMB_BCAST) {
		/* up: in piece order, each piece once all its contributors are here */
		while (in->comb_next < in->n_pieces && in->have[in->comb_next] == full) {
			uint32_t j = in->comb_next;

			combine_piece(in, j);
			in->comb_next++;
			if (root) {
				uint32_t off = j * TRD_COMB_PIECE;

				in->res[j] = 1;
				in->res_n++;
				if (in->dst != NULL && in->len != 0)
					memcpy(in->dst + off, in->acc + off,
					       RTE_MIN(TRD_COMB_PIECE, in->len - off));
			}
		}
		while (!root && rc == 0 && in->up_next < in->comb_next) {
			rc = comb_send(n, c, in, in->t.parent, in->t.parent_c, TRD_COMB_UP,
				       in->up_next);
			if (rc == 0)
				in->up_next++;
		}
		if (rc == -EHOSTUNREACH)
			goto fail;
		if (in->kind == TRD_COMB_REDUCE) {
			if ((root ? in->comb_next : in->up_next) == in->n_pieces)
				inst_end(n, c, in, true);
			return;
		}
	}
	/* down: to each child, in piece order, what the result has */
	for (unsigned int i = 0; i < in->t.n_child; i++) {
		rc = 0;
		while (rc == 0 && in->down_next[i] < in->n_pieces && in->res[in->down_next[i]]) {
			rc = comb_send(n, c, in, in->t.child[i], in->t.child_c[i], TRD_COMB_DOWN,
				       in->down_next[i]);
			if (rc == 0)
				in->down_next[i]++;
		}
		if (rc == -EHOSTUNREACH)
			goto fail;
		done = done && in->down_next[i] == in->n_pieces;
	}
	if (done && in->res_n == in->n_pieces)
		inst_end(n, c, in, true);
	return;
fail:
	inst_fail(n, c, in, NO_PARENT);
}

/* ---- the application's post, on the serving lcore ---- */

static void
post_absorb(struct trd_node *n, struct trd_comb *c, const struct trd_comb_req *rq)
{
	unsigned int g = rq->dims;
	uint64_t seq = c->next_seq[g]++;
	unsigned int si = (unsigned int)(seq % TRD_COMB_DEPTH);
	struct comb_inst *in = &c->inst[g][si];
	uint16_t word = trd_comb_word(rq->kind, rq->op, g, rq->dtype);
	uint32_t len = rq->count * TRD_COMB_ELEM;
	struct trd_torus *t = &n->torus;
	uint32_t root = rank_c(t, rq->root);

	c->st.posted++;
	/* posts are refused from low + TRD_COMB_DEPTH on, and every seq below low is released:
	 * the slot is free, or holds this collective (made early by a neighbour's piece) */
	if (unlikely(in->busy && in->seq != seq)) {
		c->st.failed++;
		trd_ctr_fail(&n->ctr[rq->counter]); /* cannot be (see above): never take it */
		return;
	}
	if (!in->busy && inst_make(n, c, in, seq, word, root, rq->job, len, MAKE_POST) != 0) {
		/* no memory here: the collective fails, and the group is told (aborts) */
		inst_make(n, c, in, seq, word, root, rq->job, len, MAKE_BARE);
		in->posted = true;
		in->counter = rq->counter;
		inst_fail(n, c, in, NO_PARENT);
		return;
	}
	inst_uncharge(c, in); /* posted: no longer early */
	in->posted = true;
	in->src = rq->src;
	in->dst = rq->dst;
	in->counter = rq->counter;
	if (in->failed) {
		inst_progress(n, c, in); /* a neighbour told us: ends now, or once told on */
		return;
	}
	if (in->word != word || in->root != root || in->len != len || in->job != rq->job) {
		/* the neighbours' pieces say the group posted another collective */
		inst_fail(n, c, in, NO_PARENT);
		return;
	}
	inst_watch(n, in, true);
	for (uint32_t j = 0; j < in->n_pieces; j++)
		in->have[j] |= 1;
	if (in->kind == TRD_COMB_BCAST && in->t.parent == NO_PARENT) {
		memcpy(in->acc, in->src, len);
		memset(in->res, 1, in->n_pieces);
		in->res_n = in->n_pieces;
	}
	if (in->dst != NULL && in->t.parent != NO_PARENT)
		for (uint32_t j = 0; j < in->n_pieces; j++)
			if (in->res[j] && len != 0) {
				uint32_t off = j * TRD_COMB_PIECE;

				memcpy(in->dst + off, in->acc + off,
				       RTE_MIN(TRD_COMB_PIECE, len - off));
			}
	if (in->dst != NULL && in->kind == TRD_COMB_BCAST && in->t.parent == NO_PARENT)
		memcpy(in->dst, in->src, len);
	inst_progress(n, c, in);
}

void
trd_comb_poll(struct trd_node *n)
{
	struct trd_comb *c = __atomic_load_n(&n->comb, __ATOMIC_ACQUIRE);
	struct trd_comb_req rq;

	if (c == NULL)
		return;
	while (rte_ring_sc_dequeue_elem(c->req, &rq, sizeof(rq)) == 0)
		post_absorb(n, c, &rq);
	if (c->n_busy == 0)
		return;
	for (unsigned int g = 1; g < COMB_GROUPS; g++)
		for (unsigned int i = 0; i < TRD_COMB_DEPTH; i++)
			if (c->inst[g][i].busy)
				inst_progress(n, c, &c->inst[g][i]);
}

/* ---- receive ---- */

/* The instance a piece names, made if it is the next of its slot; NULL with *@p cause. */
static struct comb_inst *
rx_inst(struct trd_node *n, struct trd_comb *c, const struct trd_pkt *p, int *cause)
{
	unsigned int g = (p->counter >> 4) & 0xf;
	unsigned int si = (unsigned int)(p->key % TRD_COMB_DEPTH);
	struct comb_inst *in = &c->inst[g][si];

	if (in->busy && in->seq == p->key) {
		bool same = in->word == p->counter && in->root == p->aux && in->len == p->msg_len;

		/* an abort ends it whichever job it names */
		if (same && (in->job == p->msg_id || p->fifo == TRD_COMB_ABORT))
			return in;
		/* a tree neighbour runs another job's as this one: it fails (once posted here) */
		if (same && in->posted && p->fifo != TRD_COMB_ABORT)
			inst_fail(n, c, in, NO_PARENT);
		*cause = TRD_DROP_BAD_COMB;
		return NULL;
	}
	if (p->key < c->slot_next[g][si]) {
		*cause = TRD_DROP_BAD_COMB; /* a collective that ended here */
		return NULL;
	}
	if (in->busy || p->key > c->slot_next[g][si]) {
		*cause = TRD_DROP_NO_MEMORY; /* too far ahead: it comes again */
		return NULL;
	}
	/* an abort needs no buffers (the instance only remembers the failure); a piece's
	 * buffers are bounded (COMB_EARLY_MAX): beyond, it is refused for now */
	if (inst_make(n, c, in, p->key, p->counter, p->aux, p->msg_id, p->msg_len,
		      p->fifo == TRD_COMB_ABORT ? MAKE_BARE : MAKE_EARLY) != 0) {
		*cause = TRD_DROP_NO_MEMORY;
		return NULL;
	}
	return in;
}

int
trd_comb_rx(struct trd_node *n, struct rte_mbuf *m, const struct trd_pkt *p)
{
	const struct trd_torus *t = &n->torus;
	struct trd_coord r, src = {p->src[0], p->src[1], p->src[2]};
	unsigned int dims = (p->counter >> 4) & 0xf;
	uint32_t srank = rank_c(t, src), j = (uint32_t)(p->offset / TRD_COMB_PIECE);
	const struct comb_tree *trp;
	struct comb_inst *in;
	struct comb_tree tr;
	struct trd_comb *c;
	unsigned int ci = 0;
	int cause = 0;

	if (p->aux >= n->n_nodes)
		return TRD_DROP_BAD_COMB;
	r.x = (uint8_t)(p->aux % t->dim[0]);
	r.y = (uint8_t)(p->aux / t->dim[0] % t->dim[1]);
	r.z = (uint8_t)(p->aux / t->dim[0] / t->dim[1]);
	if (!comb_member(n->coord, r, dims) || !comb_member(src, r, dims))
		return TRD_DROP_BAD_COMB;
	/* the tree edge it came over, before any state is made for it: the tree of the
	 * collective of its number when that is running here with the same root and group (the
	 * common case: computed once, at its start), else computed for this frame */
	c = __atomic_load_n(&n->comb, __ATOMIC_ACQUIRE);
	in = c != NULL ? &c->inst[dims][p->key % TRD_COMB_DEPTH] : NULL;
	if (in != NULL && in->busy && in->seq == p->key && in->root == p->aux) {
		trp = &in->t;
	} else {
		comb_tree_of(t, n->coord, r, dims, &tr);
		trp = &tr;
	}
	for (ci = 0; ci < trp->n_child && trp->child[ci] != srank; ci++)
		;
	if (p->fifo == TRD_COMB_UP
		    ? ci == trp->n_child
		    : trp->parent != srank && (p->fifo == TRD_COMB_DOWN || ci == trp->n_child))
		return TRD_DROP_BAD_COMB; /* not from a child (up), the parent (down), either */
	c = comb_get(n);
	if (c == NULL)
		return TRD_DROP_NO_MEMORY;
	in = rx_inst(n, c, p, &cause);
	if (in == NULL)
		return cause;
	if (!in->posted)
		c->st.early++;
	c->st.rx_pieces++;
	if (p->fifo == TRD_COMB_ABORT) {
		inst_fail(n, c, in, srank);
		return 0;
	}
	if (in->failed)
		return 0; /* what is still on its way to a collective that failed */
	if (p->fifo == TRD_COMB_UP) {
		if (in->have[j] & (1u << (ci + 1)))
			return TRD_DROP_DUPLICATE;
		if (p->pay_len != 0) /* (a barrier's piece is empty: it has no staging) */
			trd_pay_copy(m, in->stage + (size_t)ci * in->len + p->offset, p->pay_len);
		in->have[j] |= (uint8_t)(1u << (ci + 1));
	} else {
		if (in->res[j])
			return TRD_DROP_DUPLICATE;
		/* an allreduce's result comes after our part went up, never before */
		if (in->kind != TRD_COMB_BCAST && j >= in->up_next)
			return TRD_DROP_BAD_COMB;
		trd_pay_copy(m, in->acc + p->offset, p->pay_len);
		in->res[j] = 1;
		in->res_n++;
		if (in->posted && in->dst != NULL && p->pay_len != 0)
			memcpy(in->dst + p->offset, in->acc + p->offset, p->pay_len);
	}
	inst_progress(n, c, in);
	return 0;
}

/* ---- the application side ---- */

/* Is [@p p, @p p + @p len) in a registered region of @p n, 8-byte aligned? (A handle's are in
 * its region: the layer that attached it checks them.) */
static bool
buf_ok(struct trd_node *n, const void *p, uint32_t len)
{
	return p != NULL && (n->att != NULL || (((uintptr_t)p % TRD_COMB_ELEM) == 0 &&
						(len == 0 || trd_mr_find(n, p, len, 0) != NULL)));
}

/* Every tree neighbour reachable over a link that takes a whole piece. */
static bool
tree_links_ok(struct trd_node *n, const struct comb_tree *t)
{
	for (unsigned int i = 0; i <= t->n_child; i++) {
		uint32_t rk = i < t->n_child ? t->child[i] : t->parent;
		struct trd_route *rt;

		if (rk == NO_PARENT)
			continue;
		rt = &n->routes[rk];
		if (rt->link == NULL || trd_max_payload(n, rt->link, n->reliable) < TRD_COMB_PIECE)
			return false;
	}
	return true;
}

int
trd_comb_post(struct trd_node *n, const struct trd_comb_req *req)
{
	struct trd_comb_req rq;
	struct comb_tree t;
	struct trd_comb *c;
	uint32_t len;
	bool root, need_src, need_dst;
	uint64_t posted;

	if (n == NULL || req == NULL)
		return -EINVAL;
	rq = *req;
	if (rq.dims == 0)
		rq.dims = TRD_COMB_TORUS;
	if (rq.count > TRD_COMB_MAX_LEN / TRD_COMB_ELEM)
		return -EMSGSIZE;
	len = rq.count * TRD_COMB_ELEM;
	if (trd_comb_valid(rq.kind, rq.op, rq.dims, rq.dtype, len) != 0)
		return -EINVAL;
	if (rq.root.x >= n->torus.dim[0] || rq.root.y >= n->torus.dim[1] ||
	    rq.root.z >= n->torus.dim[2] || !comb_member(n->coord, rq.root, rq.dims))
		return -EINVAL;
	if (rq.counter == 0 || !trd_ctr_valid(n, rq.counter))
		return -EINVAL;
	root = coord_same(n->coord, rq.root);
	need_src = rq.kind == TRD_COMB_ALLREDUCE || rq.kind == TRD_COMB_REDUCE ||
		   (rq.kind == TRD_COMB_BCAST && root);
	need_dst = rq.kind == TRD_COMB_ALLREDUCE || (rq.kind == TRD_COMB_REDUCE && root) ||
		   (rq.kind == TRD_COMB_BCAST && !root);
	if (!need_src)
		rq.src = NULL;
	else if (!buf_ok(n, rq.src, len))
		return -EINVAL;
	if (need_dst ? !buf_ok(n, rq.dst, len) : (rq.dst != NULL && !buf_ok(n, rq.dst, len)))
		return -EINVAL;
	/* the result is written while the source is read: in place, or no overlap */
	if (need_src && need_dst && rq.src != rq.dst &&
	    (const uint8_t *)rq.src < (const uint8_t *)rq.dst + len &&
	    (const uint8_t *)rq.dst < (const uint8_t *)rq.src + len)
		return -EINVAL;
	if (rq.kind == TRD_COMB_BARRIER)
		rq.src = rq.dst = NULL;
	if (n->att != NULL) /* a handle: toroid-node's engine posts it (docs/vni.md) */
		return n->att->comb_post != NULL ? n->att->comb_post(n, &rq) : -ENOTSUP;
	comb_tree_of(&n->torus, n->coord, rq.root, rq.dims, &t);
	if (!tree_links_ok(n, &t))
		return -EMSGSIZE;
	c = comb_get(n);
	if (c == NULL)
		return -ENOBUFS;
	/* the slot of this post's seq is free once every collective up to TRD_COMB_DEPTH before
	 * it ended: they end out of order, so count from the lowest not ended, not the ended */
	posted = __atomic_load_n(&c->posted[rq.dims], __ATOMIC_RELAXED);
	do {
		if (posted - __atomic_load_n(&c->low[rq.dims], __ATOMIC_ACQUIRE) >= TRD_COMB_DEPTH)
			return -EBUSY;
	} while (!__atomic_compare_exchange_n(&c->posted[rq.dims], &posted, posted + 1, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	/* a post's slot in the ring is reserved by the count above (COMB_RING >= every group's
	 * depth), but the order of two threads' posts is the ring's: the engine numbers them */
	if (rte_ring_mp_enqueue_elem(c->req, &rq, sizeof(rq)) != 0) {
		__atomic_fetch_sub(&c->posted[rq.dims], 1, __ATOMIC_RELEASE);
		return -ENOBUFS;
	}
	return 0;
}

int
trd_comb_stats(const struct trd_node *n, struct trd_comb_stats *st)
{
	const struct trd_comb *c = n != NULL ? __atomic_load_n(&n->comb, __ATOMIC_ACQUIRE) : NULL;

	if (n == NULL || st == NULL)
		return -EINVAL;
	if (c == NULL)
		memset(st, 0, sizeof(*st));
	else
		*st = c->st;
	return 0;
}
