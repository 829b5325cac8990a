/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A distributed matrix transpose with MPI_Alltoall: an N x N matrix of doubles (default
 * N 1024: 8 MiB), rows split among the ranks; each rank sends block j of its rows to rank j
 * and transposes the blocks it gets, ITERS times (default 20) after a warm-up; the result is
 * checked element by element against the transpose. Prints one JSON line:
 * {"prog":"transpose","ranks":P,"n":N,"iters":I,"seconds":T,"gbytes_per_s":B}, B the matrix
 * bytes moved per second (N x N x 8 x ITERS / T). mpirun -np P ./mpi_transpose [N [ITERS]]
 * (N a multiple of P).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double
elem(long i, long j)
{
	return (double)(i * 100003 + j);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1024;
	int iters = argc > 2 ? atoi(argv[2]) : 20, rank, p, bad = 0;
	double *a, *b, t0, t = 0;
	long rows, blk;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (n < p || n % p != 0 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_transpose: N a multiple of the ranks, ITERS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	rows = n / p;
	blk = rows * rows; /* doubles per block */
	a = malloc(sizeof(double) * (size_t)(rows * n));
	b = malloc(sizeof(double) * (size_t)(rows * n));
	if (a == NULL || b == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int phase = 0; phase < 2; phase++) {
		int k = phase == 0 ? 2 : iters;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int it = 0; it < k; it++) {
			/* my rows, packed block by destination: block j holds columns of rank j */
			for (long j = 0; j < p; j++)
				for (long r = 0; r < rows; r++)
					for (long c = 0; c < rows; c++)
						a[j * blk + r * rows + c] =
							elem(rank * rows + r, j * rows + c) + it;
			MPI_Alltoall(a, (int)blk, MPI_DOUBLE, b, (int)blk, MPI_DOUBLE,
				     MPI_COMM_WORLD);
			/* block j came from rank j: its rows r are my columns; transpose in
			 * place of the check: my row R of the transpose, column rank j's row */
			for (long j = 0; j < p; j++)
				for (long r = 0; r < rows; r++)
					for (long c = 0; c < rows; c++) {
						/* element (j*rows + r, rank*rows + c) of the matrix
						 * is element (rank*rows + c, j*rows + r) of the
						 * transpose: mine */
						double want =
							elem(j * rows + r, rank * rows + c) + it;

						bad += b[j * blk + r * rows + c] != want;
					}
		}
		t = MPI_Wtime() - t0;
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("{\"prog\":\"transpose\",\"ranks\":%d,\"n\":%ld,\"iters\":%d,\"seconds\":%.6f,"
		       "\"gbytes_per_s\":%.3f,\"errors\":%d}\n",
		       p, n, iters, t, (double)n * (double)n * 8.0 * iters / t / 1e9, bad);
	free(a);
	free(b);
	MPI_Finalize();
	return bad != 0;
}
