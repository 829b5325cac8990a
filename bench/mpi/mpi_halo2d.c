/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A periodic 2-D halo exchange: an N x N block of doubles per rank (default 256) on a periodic
 * 2-D grid of ranks (MPI_Dims_create, MPI_Cart_create), ITERS steps (default 1000) after a
 * warm-up. Each step exchanges the four edges with MPI_Sendrecv (rows in place, columns as an
 * MPI_Type_vector), checks every ghost cell against the value its neighbour holds, and computes
 * a 5-point stencil of the block. With 1 or 2 ranks a dimension of the grid has one rank, which
 * is its own neighbour there: half of its messages (or all) go to itself, as on any periodic
 * grid with few ranks. Prints one JSON line:
 * {"prog":"halo2d","ranks":P,"n":N,"iters":I,"seconds":T,"us_per_step":U,"errors":E}.
 * mpirun -np P ./mpi_halo2d [N [ITERS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define WARMUP 20

/* The value rank @p r holds at row @p i, column @p j (1 .. n) in step @p s: exact in a double. */
static double
value(int r, int s, int i, int j)
{
	return (double)(r * 1000003 + s * 7919 + i * 1021 + j);
}

int
main(int argc, char **argv)
{
	int np, rank, dims[2] = {0, 0}, per[2] = {1, 1}, up, down, left, right;
	int n = argc > 1 ? atoi(argv[1]) : 256, iters = argc > 2 ? atoi(argv[2]) : 1000;
	long errors = 0, all_errors;
	double t0 = 0, t, sum = 0;
	MPI_Datatype col;
	MPI_Comm cart;

	MPI_Init(&argc, &argv);
	if (n < 2 || iters < 1) {
		fprintf(stderr, "usage: mpi_halo2d [N >= 2 [ITERS >= 1]]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	MPI_Dims_create(np, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
	MPI_Comm_rank(cart, &rank);
	MPI_Cart_shift(cart, 0, 1, &up, &down);
	MPI_Cart_shift(cart, 1, 1, &left, &right);
	int w = n + 2;
	double *g = calloc((size_t)w * w, sizeof(*g)), *h = calloc((size_t)w * w, sizeof(*h));

	if (g == NULL || h == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Type_vector(n, 1, w, MPI_DOUBLE, &col);
	MPI_Type_commit(&col);
#define AT(p, i, j) (p)[(size_t)(i) * (size_t)w + (size_t)(j)]
	for (int s = 0; s < WARMUP + iters; s++) {
		if (s == WARMUP) {
			MPI_Barrier(cart);
			t0 = MPI_Wtime();
		}
		for (int i = 1; i <= n; i++)
			for (int j = 1; j <= n; j++)
				AT(g, i, j) = value(rank, s, i, j);
		/* first row up, last row down, first column left, last column right */
		MPI_Sendrecv(&AT(g, 1, 1), n, MPI_DOUBLE, up, 0, &AT(g, n + 1, 1), n, MPI_DOUBLE,
			     down, 0, cart, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&AT(g, n, 1), n, MPI_DOUBLE, down, 1, &AT(g, 0, 1), n, MPI_DOUBLE, up,
			     1, cart, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&AT(g, 1, 1), 1, col, left, 2, &AT(g, 1, n + 1), 1, col, right, 2,
			     cart, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&AT(g, 1, n), 1, col, right, 3, &AT(g, 1, 0), 1, col, left, 3, cart,
			     MPI_STATUS_IGNORE);
		for (int k = 1; k <= n; k++) {
			errors += AT(g, n + 1, k) != value(down, s, 1, k);
			errors += AT(g, 0, k) != value(up, s, n, k);
			errors += AT(g, k, n + 1) != value(right, s, k, 1);
			errors += AT(g, k, 0) != value(left, s, k, n);
		}
		for (int i = 1; i <= n; i++)
			for (int j = 1; j <= n; j++)
				AT(h, i, j) = 0.25 * (AT(g, i - 1, j) + AT(g, i + 1, j) +
						      AT(g, i, j - 1) + AT(g, i, j + 1));
		sum += AT(h, n / 2, n / 2);
	}
	t = MPI_Wtime() - t0;
	MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, cart);
	if (rank == 0)
		printf("{\"prog\":\"halo2d\",\"ranks\":%d,\"n\":%d,\"iters\":%d,\"seconds\":%.6f,"
		       "\"us_per_step\":%.3f,\"errors\":%ld,\"check\":%.1f}\n",
		       np, n, iters, t, t / iters * 1e6, all_errors, sum > 0 ? 1.0 : 0.0);
	MPI_Type_free(&col);
	MPI_Comm_free(&cart);
	free(g);
	free(h);
	MPI_Finalize();
	return 0;
}
