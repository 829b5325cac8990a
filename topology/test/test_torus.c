/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the torus arithmetic and the collective trees (topology/torus.c).
 *
 * Routes are checked against a brute-force breadth-first search on a torus graph built here
 * independently of the library: for every torus from 1x1x1 to 8x8x8 every pair of nodes is
 * checked; larger and lopsided tori are checked from a sample of sources to every node.
 * Exit 0 = pass, 1 = fail.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <toroid/topo.h>

#define MAX_REPORTS 30

static unsigned long n_checks;
static unsigned long n_failures;

static void check_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
check_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (++n_failures > MAX_REPORTS)
		return;
	fprintf(stderr, "%s:%d: FAIL: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* CHECK(cond, printf-args...): count, and report a failure with its context. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		n_checks++;                                                                        \
		if (!(cond))                                                                       \
			check_fail(__FILE__, __LINE__, __VA_ARGS__);                               \
	} while (0)

#define C3(c) (c).x, (c).y, (c).z

/* ---- an independent model of the torus ---- */

struct model {
	unsigned int dim[3];
	unsigned int n;
	int *dist;           /* BFS distances from one source */
	unsigned int *queue; /* BFS queue */
};

static unsigned int
m_rank(const struct model *m, const unsigned int c[3])
{
	return c[0] + m->dim[0] * (c[1] + m->dim[1] * c[2]);
}

static void
m_coord(const struct model *m, unsigned int r, unsigned int c[3])
{
	c[0] = r % m->dim[0];
	c[1] = r / m->dim[0] % m->dim[1];
	c[2] = r / m->dim[0] / m->dim[1];
}

/* The distinct neighbours of rank r (wrap-around, self-loops and duplicates removed). */
static int
m_neighbours(const struct model *m, unsigned int r, unsigned int out[6])
{
	unsigned int c[3], a, s, k;
	int n = 0;

	m_coord(m, r, c);
	for (a = 0; a < 3; a++) {
		for (s = 0; s < 2; s++) {
			unsigned int nc[3] = {c[0], c[1], c[2]};
			unsigned int nr;
			int dup = 0;

			nc[a] = s == 0 ? (c[a] + 1) % m->dim[a]
				       : (c[a] + m->dim[a] - 1) % m->dim[a];
			nr = m_rank(m, nc);
			if (nr == r)
				continue;
			for (k = 0; k < (unsigned int)n; k++)
				dup |= out[k] == nr;
			if (!dup)
				out[n++] = nr;
		}
	}
	return n;
}

static void
m_bfs(struct model *m, unsigned int src)
{
	unsigned int head = 0, tail = 0, i;

	for (i = 0; i < m->n; i++)
		m->dist[i] = -1;
	m->dist[src] = 0;
	m->queue[tail++] = src;
	while (head < tail) {
		unsigned int u = m->queue[head++], nb[6];
		int k, cnt = m_neighbours(m, u, nb);

		for (k = 0; k < cnt; k++) {
			if (m->dist[nb[k]] < 0) {
				m->dist[nb[k]] = m->dist[u] + 1;
				m->queue[tail++] = nb[k];
			}
		}
	}
}

static struct trd_coord
to_coord(const struct model *m, unsigned int r)
{
	unsigned int c[3];
	struct trd_coord tc;

	m_coord(m, r, c);
	tc.x = (uint8_t)c[0];
	tc.y = (uint8_t)c[1];
	tc.z = (uint8_t)c[2];
	return tc;
}

static unsigned int
comp(struct trd_coord c, unsigned int a)
{
	return a == 0 ? c.x : a == 1 ? c.y : c.z;
}

static double
elapsed(void)
{
	static struct timespec t0;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (t0.tv_sec == 0 && t0.tv_nsec == 0)
		t0 = t;
	return (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static unsigned int
rng(unsigned int bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned int)(rng_state % bound);
}

/* ---- per-node checks ---- */

static void
check_node(const struct trd_torus *t, const struct model *m, unsigned int r)
{
	struct trd_coord c = to_coord(m, r), back, out[6], step;
	enum trd_dir dirs[6];
	unsigned int ref[6], a;
	int n, nref, i, j, rc;
	int per_axis[3] = {0, 0, 0};

	/* rank <-> coordinate */
	rc = trd_torus_coord(t, r, &back);
	CHECK(rc == 0 && back.x == c.x && back.y == c.y && back.z == c.z,
	      "%ux%ux%u: coord(%u) = %d (%u,%u,%u), want (%u,%u,%u)", m->dim[0], m->dim[1],
	      m->dim[2], r, rc, C3(back), C3(c));
	rc = trd_torus_rank(t, c);
	CHECK(rc == (int)r, "%ux%ux%u: rank(%u,%u,%u) = %d, want %u", m->dim[0], m->dim[1],
	      m->dim[2], C3(c), rc, r);
	CHECK(trd_torus_contains(t, c) == 1, "contains(%u,%u,%u) != 1", C3(c));

	/* neighbours: the same set as the model, distinct, in direction order */
	n = trd_torus_neighbours(t, c, out, dirs);
	nref = m_neighbours(m, r, ref);
	CHECK(n == nref, "%ux%ux%u: (%u,%u,%u) has %d neighbours, want %d", m->dim[0], m->dim[1],
	      m->dim[2], C3(c), n, nref);
	for (i = 0; i < n && i < 6; i++) {
		int found = 0;
		unsigned int nr = (unsigned int)trd_torus_rank(t, out[i]);

		for (j = 0; j < nref; j++)
			found |= ref[j] == nr;
		CHECK(found, "%ux%ux%u: (%u,%u,%u) neighbour %d (%u,%u,%u) is not adjacent",
		      m->dim[0], m->dim[1], m->dim[2], C3(c), i, C3(out[i]));
		for (j = 0; j < i; j++)
			CHECK(trd_torus_rank(t, out[j]) != (int)nr,
			      "(%u,%u,%u): neighbours %d and %d are the same", C3(c), j, i);
		CHECK(i == 0 || dirs[i] > dirs[i - 1], "(%u,%u,%u): dirs not in order", C3(c));
		rc = trd_torus_step(t, c, dirs[i], &step);
		CHECK(rc == 0 && trd_torus_rank(t, step) == (int)nr,
		      "(%u,%u,%u): step %s disagrees with neighbours", C3(c),
		      trd_dir_name(dirs[i]));
		per_axis[dirs[i] / 2]++;
	}
	for (a = 0; a < 3; a++) {
		int want = m->dim[a] == 1 ? 0 : m->dim[a] == 2 ? 1 : 2;

		CHECK(per_axis[a] == want, "%ux%ux%u: axis %u has %d neighbours, want %d",
		      m->dim[0], m->dim[1], m->dim[2], a, per_axis[a], want);
	}
	/* dirs may be NULL */
	CHECK(trd_torus_neighbours(t, c, out, NULL) == n, "neighbours with dirs NULL");

	/* steps: size 1 has no link; + then - comes back */
	for (i = 0; i < TRD_DIR_COUNT; i++) {
		rc = trd_torus_step(t, c, (enum trd_dir)i, &step);
		if (m->dim[i / 2] == 1) {
			CHECK(rc == -ENOENT, "step %s on a size-1 axis = %d, want -ENOENT",
			      trd_dir_name((enum trd_dir)i), rc);
			continue;
		}
		CHECK(rc == 0, "step %s = %d", trd_dir_name((enum trd_dir)i), rc);
		rc = trd_torus_step(t, step, trd_dir_opposite((enum trd_dir)i), &back);
		CHECK(rc == 0 && back.x == c.x && back.y == c.y && back.z == c.z,
		      "(%u,%u,%u): %s then %s does not come back", C3(c),
		      trd_dir_name((enum trd_dir)i),
		      trd_dir_name(trd_dir_opposite((enum trd_dir)i)));
	}
}

/* ---- per-pair checks, against BFS distances from src in m->dist ---- */

static void
check_pair(const struct trd_torus *t, const struct model *m, unsigned int src, unsigned int dst)
{
	struct trd_coord from = to_coord(m, src), to = to_coord(m, dst), prev, path[3 * 64];
	int want = m->dist[dst], hops, len, i, last_axis = -1;
	int axis_moves[3] = {0, 0, 0};
	enum trd_dir first, nh = TRD_DIR_NONE,
			    axis_dir[3] = {TRD_DIR_NONE, TRD_DIR_NONE, TRD_DIR_NONE};
	unsigned int a;

	hops = trd_torus_hops(t, from, to);
	CHECK(hops == want, "%ux%ux%u: hops (%u,%u,%u)->(%u,%u,%u) = %d, BFS says %d", m->dim[0],
	      m->dim[1], m->dim[2], C3(from), C3(to), hops, want);
	len = trd_torus_route(t, from, to, path, 3 * 64);
	CHECK(len == want, "%ux%ux%u: route (%u,%u,%u)->(%u,%u,%u) has %d hops, BFS says %d",
	      m->dim[0], m->dim[1], m->dim[2], C3(from), C3(to), len, want);
	CHECK(trd_torus_next_hop(t, from, to, &first) == 0, "next_hop failed");
	if (len <= 0) {
		CHECK(len != 0 || first == TRD_DIR_NONE, "next_hop to self is %s",
		      trd_dir_name(first));
		return;
	}
	prev = from;
	for (i = 0; i < len; i++) {
		unsigned int moved = 3, diff = 0;
		enum trd_dir d = TRD_DIR_NONE;

		/* exactly one axis changes, by one step with wrap-around */
		for (a = 0; a < 3; a++) {
			unsigned int p = comp(prev, a), q = comp(path[i], a), dim = m->dim[a];

			if (p == q)
				continue;
			diff++;
			moved = a;
			if (q == (p + 1) % dim)
				d = (enum trd_dir)(2 * a);
			else if (q == (p + dim - 1) % dim)
				d = (enum trd_dir)(2 * a + 1);
		}
		CHECK(diff == 1 && d != TRD_DIR_NONE,
		      "%ux%ux%u: route (%u,%u,%u)->(%u,%u,%u) step %d (%u,%u,%u)->(%u,%u,%u) "
		      "is not a link",
		      m->dim[0], m->dim[1], m->dim[2], C3(from), C3(to), i, C3(prev), C3(path[i]));
		if (diff != 1 || d == TRD_DIR_NONE)
			return;
		/* on a size-2 axis both readings fit; the route's convention is + */
		if (m->dim[moved] == 2)
			d = (enum trd_dir)(2 * moved);
		/* next_hop from every node on the way agrees with the route */
		CHECK(trd_torus_next_hop(t, prev, to, &nh) == 0 && nh == d,
		      "%ux%ux%u: next_hop (%u,%u,%u)->(%u,%u,%u) = %s, route goes %s", m->dim[0],
		      m->dim[1], m->dim[2], C3(prev), C3(to), trd_dir_name(nh), trd_dir_name(d));
		/* dimension order: x moves, then y, then z; one direction per axis */
		CHECK((int)moved >= last_axis,
		      "route (%u,%u,%u)->(%u,%u,%u) not in dimension order", C3(from), C3(to));
		CHECK(axis_dir[moved] == TRD_DIR_NONE || axis_dir[moved] == d,
		      "route (%u,%u,%u)->(%u,%u,%u) turns back on axis %u", C3(from), C3(to),
		      moved);
		last_axis = (int)moved;
		axis_dir[moved] = d;
		axis_moves[moved]++;
		prev = path[i];
	}
	CHECK(prev.x == to.x && prev.y == to.y && prev.z == to.z,
	      "route (%u,%u,%u)->(%u,%u,%u) ends at (%u,%u,%u)", C3(from), C3(to), C3(prev));
	/* a tie (exactly dim/2 each way) goes + */
	for (a = 0; a < 3; a++) {
		unsigned int dim = m->dim[a];
		unsigned int up = (comp(to, a) + dim - comp(from, a)) % dim;

		if (up != 0 && 2 * up == dim)
			CHECK(axis_dir[a] == (enum trd_dir)(2 * a),
			      "%ux%ux%u: tie on axis %u from (%u,%u,%u) to (%u,%u,%u) went %s",
			      m->dim[0], m->dim[1], m->dim[2], a, C3(from), C3(to),
			      trd_dir_name(axis_dir[a]));
	}
}

/* Check torus X x Y x Z: all nodes; pairs from every source, or from n_src sampled ones. */
static void
check_torus(unsigned int x, unsigned int y, unsigned int z, unsigned int n_src)
{
	struct trd_torus t;
	struct model m = {.dim = {x, y, z}, .n = x * y * z};
	unsigned int r, s, d;
	int rc;

	rc = trd_torus_init(&t, x, y, z);
	CHECK(rc == 0, "init %ux%ux%u = %d", x, y, z, rc);
	if (rc != 0)
		return;
	CHECK(trd_torus_size(&t) == m.n, "size %ux%ux%u = %u", x, y, z, trd_torus_size(&t));
	m.dist = malloc(m.n * sizeof(*m.dist));
	m.queue = malloc(m.n * sizeof(*m.queue));
	if (m.dist == NULL || m.queue == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (r = 0; r < m.n; r++)
		check_node(&t, &m, r);
	for (s = 0; s < (n_src == 0 ? m.n : n_src); s++) {
		/* sampled sources: the first and last rank, then random ones */
		unsigned int src = n_src == 0 ? s : s == 0 ? 0 : s == 1 ? m.n - 1 : rng(m.n);

		m_bfs(&m, src);
		for (d = 0; d < m.n; d++)
			check_pair(&t, &m, src, d);
	}
	free(m.dist);
	free(m.queue);
}

static void
check_bad_inputs(void)
{
	struct trd_torus t, bad = {.dim = {0, 2, 2}};
	struct trd_coord c = {0, 0, 0}, out[6], far = {1, 1, 1}, path[4];
	enum trd_dir d;
	unsigned int child[2];
	int rc;

	CHECK(trd_torus_init(NULL, 2, 2, 2) == -EINVAL, "init NULL");
	CHECK(trd_torus_init(&t, 0, 2, 2) == -EINVAL, "init 0x2x2");
	CHECK(trd_torus_init(&t, 2, 65, 2) == -EINVAL, "init 2x65x2");
	CHECK(trd_torus_init(&t, 2, 2, 1000) == -EINVAL, "init 2x2x1000");
	CHECK(trd_torus_init(&t, 64, 64, 64) == 0, "init 64x64x64");
	CHECK(trd_torus_size(&t) == 262144, "size 64^3");
	CHECK(trd_torus_size(NULL) == 0, "size NULL");
	CHECK(trd_torus_size(&bad) == 0, "size of a zero-sized torus");
	CHECK(trd_torus_contains(&bad, c) == 0, "contains on a bad torus");

	trd_torus_init(&t, 2, 3, 1);
	CHECK(trd_torus_contains(&t, (struct trd_coord){2, 0, 0}) == 0, "contains x=2");
	CHECK(trd_torus_contains(&t, (struct trd_coord){0, 0, 1}) == 0, "contains z=1");
	CHECK(trd_torus_contains(NULL, c) == 0, "contains NULL");
	CHECK(trd_torus_rank(&t, (struct trd_coord){0, 3, 0}) == -EINVAL, "rank y=3");
	CHECK(trd_torus_rank(NULL, c) == -EINVAL, "rank NULL");
	CHECK(trd_torus_coord(&t, 6, &c) == -EINVAL, "coord 6 of 6");
	CHECK(trd_torus_coord(&t, 0, NULL) == -EINVAL, "coord NULL");
	CHECK(trd_torus_coord(NULL, 0, &c) == -EINVAL, "coord torus NULL");
	c = (struct trd_coord){0, 0, 0};
	CHECK(trd_torus_step(&t, c, TRD_DIR_COUNT, &out[0]) == -EINVAL, "step dir 6");
	CHECK(trd_torus_step(&t, c, TRD_DIR_NONE, &out[0]) == -EINVAL, "step dir none");
	CHECK(trd_torus_step(&t, c, TRD_DIR_XP, NULL) == -EINVAL, "step out NULL");
	CHECK(trd_torus_step(&t, (struct trd_coord){5, 0, 0}, TRD_DIR_XP, &out[0]) == -EINVAL,
	      "step from outside");
	CHECK(trd_torus_step(&t, c, TRD_DIR_ZM, &out[0]) == -ENOENT, "step z- on size 1");
	CHECK(trd_torus_neighbours(&t, c, NULL, NULL) == -EINVAL, "neighbours out NULL");
	CHECK(trd_torus_neighbours(&t, far, out, NULL) == -EINVAL, "neighbours outside");
	CHECK(trd_torus_neighbours(NULL, c, out, NULL) == -EINVAL, "neighbours torus NULL");
	CHECK(trd_torus_hops(&t, c, far) == -EINVAL, "hops to outside");
	CHECK(trd_torus_next_hop(&t, c, c, NULL) == -EINVAL, "next_hop dir NULL");
	CHECK(trd_torus_next_hop(&t, far, c, &d) == -EINVAL, "next_hop from outside");
	rc = trd_torus_route(&t, c, far, path, 4);
	CHECK(rc == -EINVAL, "route to outside = %d", rc);

	/* route: -ENOSPC without writing, NULL path only when nothing is to be written */
	trd_torus_init(&t, 8, 8, 8);
	far = (struct trd_coord){4, 4, 4};
	memset(path, 0xaa, sizeof(path));
	rc = trd_torus_route(&t, c, far, path, 4);
	CHECK(rc == -ENOSPC, "route 12 hops into 4 = %d", rc);
	CHECK(path[0].x == 0xaa, "route -ENOSPC wrote the path");
	CHECK(trd_torus_route(&t, c, c, NULL, 0) == 0, "route to self with NULL path");
	CHECK(trd_torus_route(&t, c, far, NULL, 0) == -ENOSPC, "route NULL path max 0");
	CHECK(trd_torus_route(&t, c, far, NULL, 100) == -EINVAL, "route NULL path max 100");
	CHECK(trd_torus_route(NULL, c, far, path, 4) == -EINVAL, "route torus NULL");

	/* direction names and opposites */
	{
		static const char *const names[] = {"x+", "x-", "y+", "y-", "z+", "z-"};
		int i;

		for (i = 0; i < TRD_DIR_COUNT; i++) {
			CHECK(strcmp(trd_dir_name((enum trd_dir)i), names[i]) == 0, "name %d", i);
			CHECK(trd_dir_opposite(trd_dir_opposite((enum trd_dir)i)) ==
				      (enum trd_dir)i,
			      "opposite twice %d", i);
			CHECK(trd_dir_opposite((enum trd_dir)i) / 2 == i / 2 &&
				      trd_dir_opposite((enum trd_dir)i) != (enum trd_dir)i,
			      "opposite %d", i);
		}
		CHECK(strcmp(trd_dir_name(TRD_DIR_NONE), "none") == 0, "name none");
		CHECK(strcmp(trd_dir_name(TRD_DIR_COUNT), "none") == 0, "name count");
		CHECK(trd_dir_opposite(TRD_DIR_NONE) == TRD_DIR_NONE, "opposite none");
		CHECK(trd_dir_opposite(TRD_DIR_COUNT) == TRD_DIR_NONE, "opposite count");
	}

	/* trees */
	CHECK(trd_tree_parent(0, 0, 0) == -EINVAL, "parent n=0");
	CHECK(trd_tree_parent(4, 4, 0) == -EINVAL, "parent root=n");
	CHECK(trd_tree_parent(4, 0, 4) == -EINVAL, "parent rank=n");
	CHECK(trd_tree_parent((unsigned int)INT_MAX + 1, 0, 1) == -EINVAL, "parent n>INT_MAX");
	CHECK(trd_tree_parent(1, 0, 0) == -ENOENT, "parent of the only rank");
	CHECK(trd_tree_children(4, 0, 0, NULL) == -EINVAL, "children NULL");
	CHECK(trd_tree_children(0, 0, 0, child) == -EINVAL, "children n=0");
	CHECK(trd_tree_children(4, 5, 0, child) == -EINVAL, "children root>n");
	CHECK(trd_tree_children(4, 0, 7, child) == -EINVAL, "children rank>n");
	CHECK(trd_tree_children(1, 0, 0, child) == 0, "children of the only rank");
	/* the largest n still works without overflow */
	CHECK(trd_tree_parent(INT_MAX, 5, 4) ==
		      (int)(((unsigned int)INT_MAX - 2) / 2 + 5) % INT_MAX,
	      "parent near INT_MAX = %d", trd_tree_parent(INT_MAX, 5, 4));
	CHECK(trd_tree_children(INT_MAX, 0, INT_MAX - 1, child) == 0, "children of the last");
}

/* Every non-root has one parent, parent and children agree, the tree spans all ranks. */
static void
check_tree(unsigned int n, unsigned int root)
{
	unsigned int *seen = calloc(n, sizeof(*seen)), *queue = malloc(n * sizeof(*queue));
	unsigned int head = 0, tail = 0, r, depth_limit = 0, i;
	int rc;

	if (seen == NULL || queue == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	while ((1u << depth_limit) <= n)
		depth_limit++;
	for (r = 0; r < n; r++) {
		unsigned int child[2];
		int cnt = trd_tree_children(n, root, r, child), k;

		CHECK(cnt >= 0 && cnt <= 2, "tree n=%u root=%u: children(%u) = %d", n, root, r,
		      cnt);
		for (k = 0; k < cnt; k++) {
			CHECK(child[k] < n && child[k] != root,
			      "tree n=%u root=%u: bad child %u of %u", n, root, child[k], r);
			if (child[k] >= n)
				continue;
			seen[child[k]]++;
			rc = trd_tree_parent(n, root, child[k]);
			CHECK(rc == (int)r, "tree n=%u root=%u: parent(%u) = %d, want %u", n, root,
			      child[k], rc, r);
		}
		rc = trd_tree_parent(n, root, r);
		if (r == root)
			CHECK(rc == -ENOENT, "tree n=%u: parent of root %u = %d", n, root, rc);
		else
			CHECK(rc >= 0 && (unsigned int)rc < n, "tree n=%u root=%u: parent(%u) = %d",
			      n, root, r, rc);
	}
	for (r = 0; r < n; r++)
		CHECK(seen[r] == (r == root ? 0u : 1u),
		      "tree n=%u root=%u: rank %u is a child %u times", n, root, r, seen[r]);
	/* walk down from the root: must reach every rank, depth bounded by log2 */
	memset(seen, 0, n * sizeof(*seen));
	queue[tail++] = root;
	seen[root] = 1;
	while (head < tail) {
		unsigned int u = queue[head++], child[2];
		int cnt = trd_tree_children(n, root, u, child), k;

		for (k = 0; k < cnt; k++) {
			if (child[k] < n && !seen[child[k]]) {
				seen[child[k]] = seen[u] + 1;
				queue[tail++] = child[k];
			}
		}
	}
	CHECK(tail == n, "tree n=%u root=%u spans %u ranks", n, root, tail);
	for (i = 0; i < n; i++)
		CHECK(seen[i] <= depth_limit, "tree n=%u root=%u: rank %u at depth %u > %u", n,
		      root, i, seen[i] - 1, depth_limit - 1);
	free(seen);
	free(queue);
}

/*
 * test_torus [MAX_SIDE]: every torus from 1x1x1 to MAX_SIDE^3 (default 8, at most 8) with all
 * pairs; the ASan build passes 6 (the same code paths, a sixth of the pairs).
 */
int
main(int argc, char **argv)
{
	/* odd shapes: sampled sources to all destinations */
	static const struct {
		unsigned int x, y, z, n_src;
	} odd[] = {
		{3, 5, 7, 0},   {64, 1, 1, 0},  {1, 1, 64, 0},   {1, 64, 1, 0},   {64, 64, 1, 24},
		{2, 64, 3, 24}, {63, 2, 5, 24}, {9, 10, 11, 16}, {64, 64, 64, 2},
	};
	unsigned int x, y, z, i, n, root, side = 8;

	if (argc > 1) {
		char *end;
		unsigned long v = strtoul(argv[1], &end, 10);

		if (*end != '\0' || v < 1 || v > 8) {
			fprintf(stderr, "usage: %s [MAX_SIDE 1..8]\n", argv[0]);
			return 2;
		}
		side = (unsigned int)v;
	}
	elapsed();
	check_bad_inputs();

	for (x = 1; x <= side; x++)
		for (y = 1; y <= side; y++)
			for (z = 1; z <= side; z++)
				check_torus(x, y, z, 0);
	printf("%6.2fs all pairs in every torus 1x1x1 .. %ux%ux%u (%u shapes) done\n", elapsed(),
	       side, side, side, side * side * side);

	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		check_torus(odd[i].x, odd[i].y, odd[i].z, odd[i].n_src);
		printf("%6.2fs %ux%ux%u done (%s)\n", elapsed(), odd[i].x, odd[i].y, odd[i].z,
		       odd[i].n_src == 0 ? "all pairs" : "sampled sources");
	}

	for (n = 1; n <= 130; n++)
		for (root = 0; root < n; root++)
			check_tree(n, root);
	for (i = 0; i < 8; i++) {
		n = 1000 + rng(300000);
		check_tree(n, rng(n));
	}
	check_tree(262144, 0);
	check_tree(262144, 262143);
	printf("%6.2fs trees done\n", elapsed());

	if (n_failures > MAX_REPORTS)
		fprintf(stderr, "... %lu more failures not shown\n", n_failures - MAX_REPORTS);
	printf("%lu checks, %lu failed\n", n_checks, n_failures);
	return n_failures == 0 ? 0 : 1;
}
