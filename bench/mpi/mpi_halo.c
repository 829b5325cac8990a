/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A Jacobi stencil on an N x N grid (default 512) split over a 2-D grid of ranks
 * (MPI_Dims_create, not periodic), ITERS steps (default 1000) after a warm-up: each step posts
 * MPI_Irecv and MPI_Isend of its edges (rows in place, columns packed), computes the interior
 * while they fly, then MPI_Waitall and the edge cells. Compute-bound with a message exchange
 * every step, as most MPI programs are: the ranks compute on every CPU while the messages
 * move. Rank 0 checks the grid's sum against a serial run of the same steps. Prints one JSON
 * line: {"prog":"halo","ranks":P,"n":N,"iters":I,"seconds":T,"us_per_step":U,"errors":E}.
 * mpirun -np P ./mpi_halo [N [ITERS]]
 */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define WARMUP 20

struct grid {
	int ny, nx, w; /* local rows and columns, the row width with its ghost cells */
	double *a, *b;
};

#define AT(p, g, i, j) (p)[(size_t)(i) * (size_t)(g)->w + (size_t)(j)]

static double
start_value(int gi, int gj)
{
	return (double)((gi * 7 + gj * 13) % 101);
}

/* One step's new value of cell (i, j) of a. */
static inline double
stencil(const double *a, const struct grid *g, int i, int j)
{
	return 0.25 *
	       (AT(a, g, i - 1, j) + AT(a, g, i + 1, j) + AT(a, g, i, j - 1) + AT(a, g, i, j + 1));
}

/* The serial reference: the sum of the whole grid after @p iters steps. */
static double
serial_sum(int n, int iters)
{
	struct grid g = {.ny = n, .nx = n, .w = n + 2};
	double s = 0;

	g.a = malloc(sizeof(double) * (size_t)(n + 2) * (size_t)(n + 2));
	g.b = malloc(sizeof(double) * (size_t)(n + 2) * (size_t)(n + 2));
	if (g.a == NULL || g.b == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < n + 2; i++)
		for (int j = 0; j < n + 2; j++) {
			bool edge = i == 0 || j == 0 || i == n + 1 || j == n + 1;

			AT(g.a, &g, i, j) = AT(g.b, &g, i, j) =
				edge ? 1.0 : start_value(i - 1, j - 1);
		}
	for (int it = 0; it < iters; it++) {
		double *t;

		for (int i = 1; i <= n; i++)
			for (int j = 1; j <= n; j++)
				AT(g.b, &g, i, j) = stencil(g.a, &g, i, j);
		t = g.a;
		g.a = g.b;
		g.b = t;
	}
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= n; j++)
			s += AT(g.a, &g, i, j);
	free(g.a);
	free(g.b);
	return s;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 512, iters = argc > 2 ? atoi(argv[2]) : 1000;
	int rank, p, dims[2] = {0, 0}, per[2] = {0, 0}, co[2], up, dn, lf, rt, y0, x0, bad = 0;
	double *sl, *sr, *rl, *rr, t0, t = 0, s = 0, gs = 0;
	struct grid g;
	MPI_Comm cart;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	MPI_Dims_create(p, 2, dims);
	if (n < 4 || iters < 1 || n % dims[0] != 0 || n % dims[1] != 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
	MPI_Cart_coords(cart, rank, 2, co);
	MPI_Cart_shift(cart, 0, 1, &up, &dn);
	MPI_Cart_shift(cart, 1, 1, &lf, &rt);
	g.ny = n / dims[0];
	g.nx = n / dims[1];
	g.w = g.nx + 2;
	y0 = co[0] * g.ny;
	x0 = co[1] * g.nx;
	g.a = malloc(sizeof(double) * (size_t)(g.ny + 2) * (size_t)g.w);
	g.b = malloc(sizeof(double) * (size_t)(g.ny + 2) * (size_t)g.w);
	sl = malloc(sizeof(double) * (size_t)g.ny);
	sr = malloc(sizeof(double) * (size_t)g.ny);
	rl = malloc(sizeof(double) * (size_t)g.ny);
	rr = malloc(sizeof(double) * (size_t)g.ny);
	if (g.a == NULL || g.b == NULL || sl == NULL || sr == NULL || rl == NULL || rr == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int phase = 0; phase < 2; phase++) {
		int k = phase == 0 ? WARMUP : iters;

		/* the grid from its start (outside the global grid: fixed at 1.0) */
		for (int i = 0; i < g.ny + 2; i++)
			for (int j = 0; j < g.w; j++) {
				bool edge = i == 0 || j == 0 || i == g.ny + 1 || j == g.nx + 1;

				AT(g.a, &g, i, j) = AT(g.b, &g, i, j) =
					edge ? 1.0 : start_value(y0 + i - 1, x0 + j - 1);
			}
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int it = 0; it < k; it++) {
			MPI_Request rq[8];
			int nr = 0;
			double *tmp;

			if (up != MPI_PROC_NULL) {
				MPI_Irecv(&AT(g.a, &g, 0, 1), g.nx, MPI_DOUBLE, up, 0, cart,
					  &rq[nr++]);
				MPI_Isend(&AT(g.a, &g, 1, 1), g.nx, MPI_DOUBLE, up, 1, cart,
					  &rq[nr++]);
			}
			if (dn != MPI_PROC_NULL) {
				MPI_Irecv(&AT(g.a, &g, g.ny + 1, 1), g.nx, MPI_DOUBLE, dn, 1, cart,
					  &rq[nr++]);
				MPI_Isend(&AT(g.a, &g, g.ny, 1), g.nx, MPI_DOUBLE, dn, 0, cart,
					  &rq[nr++]);
			}
			if (lf != MPI_PROC_NULL) {
				for (int i = 0; i < g.ny; i++)
					sl[i] = AT(g.a, &g, i + 1, 1);
				MPI_Irecv(rl, g.ny, MPI_DOUBLE, lf, 2, cart, &rq[nr++]);
				MPI_Isend(sl, g.ny, MPI_DOUBLE, lf, 3, cart, &rq[nr++]);
			}
			if (rt != MPI_PROC_NULL) {
				for (int i = 0; i < g.ny; i++)
					sr[i] = AT(g.a, &g, i + 1, g.nx);
				MPI_Irecv(rr, g.ny, MPI_DOUBLE, rt, 3, cart, &rq[nr++]);
				MPI_Isend(sr, g.ny, MPI_DOUBLE, rt, 2, cart, &rq[nr++]);
			}
			/* the interior while the edges fly */
			for (int i = 2; i < g.ny; i++)
				for (int j = 2; j < g.nx; j++)
					AT(g.b, &g, i, j) = stencil(g.a, &g, i, j);
			MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
			if (lf != MPI_PROC_NULL)
				for (int i = 0; i < g.ny; i++)
					AT(g.a, &g, i + 1, 0) = rl[i];
			if (rt != MPI_PROC_NULL)
				for (int i = 0; i < g.ny; i++)
					AT(g.a, &g, i + 1, g.nx + 1) = rr[i];
			for (int i = 1; i <= g.ny; i++)
				for (int j = 1; j <= g.nx; j++)
					if (i == 1 || j == 1 || i == g.ny || j == g.nx)
						AT(g.b, &g, i, j) = stencil(g.a, &g, i, j);
			tmp = g.a;
			g.a = g.b;
			g.b = tmp;
		}
		t = MPI_Wtime() - t0;
	}
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	for (int i = 1; i <= g.ny; i++)
		for (int j = 1; j <= g.nx; j++)
			s += AT(g.a, &g, i, j);
	MPI_Reduce(&s, &gs, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
	if (rank == 0) {
		double ref = serial_sum(n, iters);

		bad = fabs(ref - gs) > 1e-9 * fabs(ref);
		printf("{\"prog\":\"halo\",\"ranks\":%d,\"n\":%d,\"iters\":%d,\"seconds\":%.6f,"
		       "\"us_per_step\":%.3f,\"errors\":%d}\n",
		       p, n, iters, t, t / iters * 1e6, bad);
	}
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(g.a);
	free(g.b);
	free(sl);
	free(sr);
	free(rl);
	free(rr);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return bad != 0;
}
