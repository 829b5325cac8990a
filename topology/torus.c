/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Torus arithmetic: coordinates, ranks, neighbours, dimension-order routes, and the binary
 * trees used by collectives. Plain C, no DPDK, no allocation.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>

#include <toroid/topo.h>

#define AXES 3

_Static_assert(TRD_DIR_COUNT == 2 * AXES, "two directions per axis");
_Static_assert(TRD_DIR_XP == 0 && TRD_DIR_XM == 1 && TRD_DIR_YP == 2 && TRD_DIR_ZM == 5,
	       "direction d is on axis d/2; even = +, odd = -");
_Static_assert(TRD_TORUS_MAX_DIM <= 256, "a coordinate component is a uint8_t");

static const char *const dir_names[TRD_DIR_COUNT] = {
	[TRD_DIR_XP] = "x+", [TRD_DIR_XM] = "x-", [TRD_DIR_YP] = "y+",
	[TRD_DIR_YM] = "y-", [TRD_DIR_ZP] = "z+", [TRD_DIR_ZM] = "z-",
};

static inline unsigned int
coord_get(struct trd_coord c, unsigned int axis)
{
	return axis == 0 ? c.x : axis == 1 ? c.y : c.z;
}

static inline void
coord_set(struct trd_coord *c, unsigned int axis, unsigned int v)
{
	if (axis == 0)
		c->x = (uint8_t)v;
	else if (axis == 1)
		c->y = (uint8_t)v;
	else
		c->z = (uint8_t)v;
}

static inline int
dir_valid(enum trd_dir d)
{
	return (int)d >= 0 && (int)d < TRD_DIR_COUNT;
}

/* A torus is usable when every size is 1..TRD_TORUS_MAX_DIM (guards hand-filled structs). */
static int
torus_valid(const struct trd_torus *t)
{
	unsigned int a;

	if (t == NULL)
		return 0;
	for (a = 0; a < AXES; a++)
		if (t->dim[a] < 1 || t->dim[a] > TRD_TORUS_MAX_DIM)
			return 0;
	return 1;
}

static int
coord_in(const struct trd_torus *t, struct trd_coord c)
{
	return c.x < t->dim[0] && c.y < t->dim[1] && c.z < t->dim[2];
}

static int
coord_eq(struct trd_coord a, struct trd_coord b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

/*
 * The direction to take on one axis to go from a to b: the shorter way round, + on a tie
 * (the distance is exactly dim/2, which includes the single link of a size-2 axis).
 * Returns TRD_DIR_NONE when a == b on that axis.
 */
static enum trd_dir
axis_dir(unsigned int axis, unsigned int dim, unsigned int a, unsigned int b)
{
	unsigned int up = (b + dim - a) % dim; /* hops going + */

	if (up == 0)
		return TRD_DIR_NONE;
	return (enum trd_dir)(2 * axis + (up <= dim - up ? 0 : 1));
}

static unsigned int
axis_hops(unsigned int dim, unsigned int a, unsigned int b)
{
	unsigned int up = (b + dim - a) % dim;

	return up <= dim - up ? up : dim - up;
}

/** Set up @p t as an X x Y x Z torus. @return 0, or -EINVAL if a size is not 1..64. */
int
trd_torus_init(struct trd_torus *t, unsigned int x, unsigned int y, unsigned int z)
{
	if (t == NULL || x < 1 || x > TRD_TORUS_MAX_DIM || y < 1 || y > TRD_TORUS_MAX_DIM ||
	    z < 1 || z > TRD_TORUS_MAX_DIM)
		return -EINVAL;
	t->dim[0] = (uint8_t)x;
	t->dim[1] = (uint8_t)y;
	t->dim[2] = (uint8_t)z;
	return 0;
}

/** Number of nodes, X*Y*Z; 0 if @p t is NULL or not a valid torus. */
unsigned int
trd_torus_size(const struct trd_torus *t)
{
	if (!torus_valid(t))
		return 0;
	return (unsigned int)t->dim[0] * t->dim[1] * t->dim[2];
}

/** @return 1 if @p c lies inside @p t, else 0 (also 0 if @p t is invalid). */
int
trd_torus_contains(const struct trd_torus *t, struct trd_coord c)
{
	return torus_valid(t) && coord_in(t, c);
}

/** Rank of @p c (x fastest). @return rank >= 0, or -EINVAL. */
int
trd_torus_rank(const struct trd_torus *t, struct trd_coord c)
{
	if (!trd_torus_contains(t, c))
		return -EINVAL;
	return (int)(c.x + (unsigned int)t->dim[0] * (c.y + (unsigned int)t->dim[1] * c.z));
}

/** Coordinate of @p rank. @return 0, or -EINVAL if rank >= size or on bad input. */
int
trd_torus_coord(const struct trd_torus *t, unsigned int rank, struct trd_coord *c)
{
	if (c == NULL || rank >= trd_torus_size(t))
		return -EINVAL;
	c->x = (uint8_t)(rank % t->dim[0]);
	rank /= t->dim[0];
	c->y = (uint8_t)(rank % t->dim[1]);
	c->z = (uint8_t)(rank / t->dim[1]);
	return 0;
}

/** Neighbour of @p c in direction @p d with wrap-around.
 * @return 0; -ENOENT if that dimension has size 1; -EINVAL on bad input. */
int
trd_torus_step(const struct trd_torus *t, struct trd_coord c, enum trd_dir d, struct trd_coord *out)
{
	unsigned int axis, dim, v;

	if (out == NULL || !dir_valid(d) || !trd_torus_contains(t, c))
		return -EINVAL;
	axis = (unsigned int)d / 2;
	dim = t->dim[axis];
	if (dim == 1)
		return -ENOENT;
	v = coord_get(c, axis);
	v = ((unsigned int)d & 1) ? (v + dim - 1) % dim : (v + 1) % dim;
	*out = c;
	coord_set(out, axis, v);
	return 0;
}

/** The distinct neighbours of @p c in direction order (size 2: only +, size 1: none).
 * @return the count 0..6, or -EINVAL. */
int
trd_torus_neighbours(const struct trd_torus *t, struct trd_coord c, struct trd_coord out[6],
		     enum trd_dir dirs[6])
{
	int n = 0;
	int d;

	if (out == NULL || !trd_torus_contains(t, c))
		return -EINVAL;
	for (d = 0; d < TRD_DIR_COUNT; d++) {
		unsigned int dim = t->dim[d / 2];

		/* size 1: no link; size 2: x+ and x- reach the same node, keep x+ only */
		if (dim == 1 || (dim == 2 && (d & 1)))
			continue;
		trd_torus_step(t, c, (enum trd_dir)d, &out[n]);
		if (dirs != NULL)
			dirs[n] = (enum trd_dir)d;
		n++;
	}
	return n;
}

/** Minimal hop count between @p a and @p b. @return hops >= 0, or -EINVAL. */
int
trd_torus_hops(const struct trd_torus *t, struct trd_coord a, struct trd_coord b)
{
	unsigned int axis, hops = 0;

	if (!trd_torus_contains(t, a) || !trd_torus_contains(t, b))
		return -EINVAL;
	for (axis = 0; axis < AXES; axis++)
		hops += axis_hops(t->dim[axis], coord_get(a, axis), coord_get(b, axis));
	return (int)hops;
}

/** First dimension-order step from @p from to @p to (TRD_DIR_NONE if equal).
 * @return 0 or -EINVAL. */
int
trd_torus_next_hop(const struct trd_torus *t, struct trd_coord from, struct trd_coord to,
		   enum trd_dir *dir)
{
	unsigned int axis;

	if (dir == NULL || !trd_torus_contains(t, from) || !trd_torus_contains(t, to))
		return -EINVAL;
	for (axis = 0; axis < AXES; axis++) {
		enum trd_dir d =
			axis_dir(axis, t->dim[axis], coord_get(from, axis), coord_get(to, axis));

		if (d != TRD_DIR_NONE) {
			*dir = d;
			return 0;
		}
	}
	*dir = TRD_DIR_NONE;
	return 0;
}

/** Full dimension-order route, excluding @p from, including @p to.
 * @return the hop count, -ENOSPC if @p max is too small (nothing written), -EINVAL. */
int
trd_torus_route(const struct trd_torus *t, struct trd_coord from, struct trd_coord to,
		struct trd_coord *path, unsigned int max)
{
	struct trd_coord cur = from;
	int hops, i;

	hops = trd_torus_hops(t, from, to);
	if (hops < 0)
		return hops;
	if ((unsigned int)hops > max)
		return -ENOSPC;
	if (hops > 0 && path == NULL)
		return -EINVAL;
	/* Each next hop moves one step nearer on the first axis that still differs, so the
	 * walk takes exactly `hops` steps. */
	for (i = 0; i < hops; i++) {
		enum trd_dir d;

		trd_torus_next_hop(t, cur, to, &d);
		trd_torus_step(t, cur, d, &cur);
		path[i] = cur;
	}
	return coord_eq(cur, to) ? hops : -EINVAL; /* cannot fail: guards the invariant */
}

/** Direction name: "x+", "x-", ... or "none" (also for out-of-range values). */
const char *
trd_dir_name(enum trd_dir d)
{
	return dir_valid(d) ? dir_names[d] : "none";
}

/** The opposite direction; TRD_DIR_NONE for TRD_DIR_NONE or an out-of-range value. */
enum trd_dir
trd_dir_opposite(enum trd_dir d)
{
	return dir_valid(d) ? (enum trd_dir)((int)d ^ 1) : TRD_DIR_NONE;
}

static int
tree_args_valid(unsigned int n, unsigned int root, unsigned int rank)
{
	return n > 0 && n <= INT_MAX && root < n && rank < n;
}

/** Parent of @p rank in the tree rooted at @p root over @p n ranks.
 * @return parent rank, -ENOENT for the root, -EINVAL on bad input. */
int
trd_tree_parent(unsigned int n, unsigned int root, unsigned int rank)
{
	unsigned int v;

	if (!tree_args_valid(n, root, rank))
		return -EINVAL;
	v = (rank + n - root) % n;
	if (v == 0)
		return -ENOENT;
	return (int)(((v - 1) / 2 + root) % n);
}

/** Children of @p rank into @p child[2]. @return the count 0..2, or -EINVAL. */
int
trd_tree_children(unsigned int n, unsigned int root, unsigned int rank, unsigned int child[2])
{
	unsigned int v, c;
	int count = 0;

	if (child == NULL || !tree_args_valid(n, root, rank))
		return -EINVAL;
	v = (rank + n - root) % n;
	/* v < n <= INT_MAX, so 2v+2 fits in an unsigned int */
	for (c = 2 * v + 1; c <= 2 * v + 2 && c < n; c++)
		child[count++] = (c + root) % n;
	return count;
}
