/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ping-pong bandwidth between ranks 0 and 1 (the other ranks wait in the barrier): messages
 * of SIZE bytes (default 1 MiB) sent back and forth ITERS times (default 200) after a
 * warm-up, every message's first and last bytes checked. Prints one JSON line:
 * {"prog":"bw","ranks":N,"size":S,"iters":I,"seconds":T,"gbytes_per_s":B}, the bandwidth of
 * one direction (2 x ITERS x SIZE bytes over the time). bench/run.py runs it over toroid and
 * over TCP; any MPI runs it: mpirun -np 2 ./mpi_bw [SIZE [ITERS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 200, rank, n, bad = 0;
	unsigned char *buf;
	double t0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n < 2 || size < 2 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_bw: 2 ranks or more, SIZE >= 2, ITERS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc(size);
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(buf, rank, size);
	for (int phase = 0; phase < 2; phase++) {
		int k = phase == 0 ? 10 : iters; /* a warm-up, then the measured round trips */

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < k && rank < 2; i++) {
			if (rank == 0) {
				buf[0] = buf[size - 1] = (unsigned char)i;
				MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad += buf[0] != (unsigned char)(i + 1) ||
				       buf[size - 1] != (unsigned char)(i + 1);
			} else {
				MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad += buf[0] != (unsigned char)i ||
				       buf[size - 1] != (unsigned char)i;
				buf[0] = buf[size - 1] = (unsigned char)(i + 1);
				MPI_Send(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
			}
		}
		t = MPI_Wtime() - t0;
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("{\"prog\":\"bw\",\"ranks\":%d,\"size\":%zu,\"iters\":%d,\"seconds\":%.6f,"
		       "\"gbytes_per_s\":%.3f,\"errors\":%d}\n",
		       n, size, iters, t, 2.0 * iters * (double)size / t / 1e9, bad);
	free(buf);
	MPI_Finalize();
	return bad != 0;
}
