/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Allreduce in a loop: COUNT doubles (default 1024: 8 KiB) summed over all ranks, ITERS
 * times (default 2000) after a warm-up, every result checked. Prints one JSON line:
 * {"prog":"allreduce","ranks":P,"count":C,"iters":I,"seconds":T,"us_per_call":U}.
 * mpirun -np P ./mpi_allreduce [COUNT [ITERS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 2000;
	int rank, p, bad = 0;
	double *in, *out, t0, t = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (count < 1 || iters < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	in = malloc(sizeof(double) * (size_t)count);
	out = malloc(sizeof(double) * (size_t)count);
	if (in == NULL || out == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int phase = 0; phase < 2; phase++) {
		int k = phase == 0 ? 20 : iters;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int it = 0; it < k; it++) {
			for (int i = 0; i < count; i++)
				in[i] = rank + i + it;
			MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			/* sum over ranks r of (r + i + it) */
			bad += out[0] != (double)p * (p - 1) / 2 + (double)p * it ||
			       out[count - 1] !=
				       (double)p * (p - 1) / 2 + (double)p * (count - 1 + it);
		}
		t = MPI_Wtime() - t0;
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("{\"prog\":\"allreduce\",\"ranks\":%d,\"count\":%d,\"iters\":%d,"
		       "\"seconds\":%.6f,\"us_per_call\":%.3f,\"errors\":%d}\n",
		       p, count, iters, t, t / iters * 1e6, bad);
	free(in);
	free(out);
	MPI_Finalize();
	return bad != 0;
}
