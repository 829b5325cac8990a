/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ping-pong latency between ranks 0 and 1 (the other ranks wait in the barrier): for each size
 * from 8 B to MAX bytes (default 1 MiB), doubling, messages sent back and forth ITERS times
 * (default 1000; sizes above 64 KiB fewer, in proportion, at least 20) after a warm-up, every
 * message's first and last bytes checked, then one more round trip whose every byte is
 * checked. Prints one JSON line per size:
 * {"prog":"lat","ranks":N,"size":S,"iters":I,"seconds":T,"us_one_way":L,"errors":E}, the
 * one-way latency being half a round trip. bench/run.py runs it over toroid and over TCP; any
 * MPI runs it: mpirun -np 2 ./mpi_lat [MAX [ITERS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The byte at @p k of the message of round @p i. */
static unsigned char
pat(size_t k, int i)
{
	return (unsigned char)(k * 131 + (size_t)i * 7 + 1);
}

/* One round trip of @p size bytes, round @p i; a full check of the bytes when @p full. */
static int
round_trip(unsigned char *buf, size_t size, int rank, int i, int full)
{
	int bad = 0;

	if (rank == 0) {
		if (full)
			for (size_t k = 0; k < size; k++)
				buf[k] = pat(k, i);
		buf[0] = pat(0, i);
		buf[size - 1] = pat(size - 1, i);
		MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
		MPI_Recv(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (full) {
			for (size_t k = 0; k < size; k++)
				bad += buf[k] != pat(k, i + 1);
		} else {
			bad += buf[0] != pat(0, i + 1) || buf[size - 1] != pat(size - 1, i + 1);
		}
	} else {
		MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (full) {
			for (size_t k = 0; k < size; k++) {
				bad += buf[k] != pat(k, i);
				buf[k] = pat(k, i + 1);
			}
		} else {
			bad += buf[0] != pat(0, i) || buf[size - 1] != pat(size - 1, i);
		}
		buf[0] = pat(0, i + 1);
		buf[size - 1] = pat(size - 1, i + 1);
		MPI_Send(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
	}
	return bad;
}

int
main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 1000, rank, n, total_bad = 0;
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n < 2 || max < 8 || max > (1u << 30) || iters < 1) {
		if (rank == 0)
			fprintf(stderr,
				"mpi_lat: 2 ranks or more, 8 <= MAX <= 1 GiB, ITERS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc(max);
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(buf, 0, max);
	for (size_t size = 8; size <= max; size *= 2) {
		int k = size <= 65536 ? iters : (int)((double)iters * 65536.0 / (double)size);
		int bad = 0;
		double t0, t;

		if (k < 20)
			k = 20;
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < 10 && rank < 2; i++) /* warm-up */
			bad += round_trip(buf, size, rank, 2 * i, 0);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < k && rank < 2; i++)
			bad += round_trip(buf, size, rank, 2 * i, 0);
		t = MPI_Wtime() - t0;
		if (rank < 2)
			bad += round_trip(buf, size, rank, 2 * k, 1);
		MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		total_bad += bad;
		if (rank == 0)
			printf("{\"prog\":\"lat\",\"ranks\":%d,\"size\":%zu,\"iters\":%d,"
			       "\"seconds\":%.6f,\"us_one_way\":%.3f,\"errors\":%d}\n",
			       n, size, k, t, t / k / 2 * 1e6, bad);
		fflush(stdout);
	}
	free(buf);
	MPI_Finalize();
	return total_bad != 0;
}
