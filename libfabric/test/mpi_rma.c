/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_rma: one-sided MPI over toroid (Open MPI's osc rdma over the OFI BTL, test fi_mpi_rma;
 * docs/libfabric.md). Every rank exposes a window of its own malloc'd memory (MPI_Win_create)
 * and checks every byte:
 *   - MPI_Put of 1 B .. 1 MiB into the next rank's window (fence epochs);
 *   - MPI_Get of the same ranges back from it;
 *   - MPI_Fetch_and_op (MPI_SUM, 64-bit) on a counter at rank 0 from every rank, N times
 *     each in passive-target epochs (MPI_Win_lock/unlock): the old values are all distinct
 *     and the counter ends at ranks * N;
 *   - MPI_Fetch_and_op MPI_REPLACE and MPI_NO_OP.
 * Prints "PASS: 0 errors" at rank 0 when every rank passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define WIN_BYTES (1 << 20)
#define N_FOP     200

static int errors;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			errors++;                                                                  \
		}                                                                                  \
	} while (0)

static unsigned char
pat(size_t i, int rank, int round)
{
	return (unsigned char)(i * 29 + (size_t)rank * 101 + (size_t)round * 7 + (i >> 10));
}

int
main(int argc, char **argv)
{
	static const size_t sizes[] = {1, 8, 100, 4096, 65536, 300000, WIN_BYTES};
	int rank, size, next, prev;
	unsigned char *base, *src, *dst;
	int64_t *counter;
	MPI_Win win, cwin;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	src = malloc(WIN_BYTES);
	dst = malloc(WIN_BYTES);
	if (src == NULL || dst == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	/* MPI_Win_create on malloc'd memory: osc rdma reaches it through the BTL (with
	 * MPI_Win_allocate it would place the window in shared memory for ranks on one host) */
	base = malloc(WIN_BYTES);
	if (base == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

	/* puts into the next rank, gets back from it: every size, fence epochs */
	for (int r = 0; r < (int)(sizeof(sizes) / sizeof(sizes[0])); r++) {
		size_t n = sizes[r];

		memset(base, 0, WIN_BYTES);
		for (size_t i = 0; i < n; i++)
			src[i] = pat(i, rank, r);
		MPI_Win_fence(0, win);
		MPI_Put(src, (int)n, MPI_BYTE, next, 0, (int)n, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		for (size_t i = 0; i < n; i++)
			if (base[i] != pat(i, prev, r)) {
				CHECK(0, "rank %d: put of %zu B from rank %d: byte %zu is %u", rank,
				      n, prev, i, base[i]);
				break;
			}
		CHECK(n == WIN_BYTES || base[n] == 0, "rank %d: put of %zu B wrote past its end",
		      rank, n);
		memset(dst, 0xee, n);
		MPI_Get(dst, (int)n, MPI_BYTE, next, 0, (int)n, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		for (size_t i = 0; i < n; i++)
			if (dst[i] != pat(i, rank, r)) {
				CHECK(0, "rank %d: get of %zu B from rank %d: byte %zu is %u", rank,
				      n, next, i, dst[i]);
				break;
			}
	}
	if (rank == 0)
		printf("put, get: %zu sizes 1 B .. %d B, fence epochs, data checked\n",
		       sizeof(sizes) / sizeof(sizes[0]), WIN_BYTES);

	/* fetch-and-add on one counter at rank 0 from every rank, passive target */
	counter = malloc(2 * sizeof(int64_t));
	if (counter == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Win_create(counter, 2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
		       &cwin);
	counter[0] = 0;
	counter[1] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	{
		int64_t one = 1, old, prev_old = -1;

		for (int i = 0; i < N_FOP; i++) {
			MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cwin);
			MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, 0, MPI_SUM, cwin);
			MPI_Win_unlock(0, cwin);
			CHECK(old > prev_old && old >= 0 && old < (int64_t)size * N_FOP,
			      "rank %d: fetch-and-add %d returned %lld after %lld", rank, i,
			      (long long)old, (long long)prev_old);
			prev_old = old;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int64_t v;

		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cwin);
		v = counter[0];
		MPI_Win_unlock(0, cwin);
		CHECK(v == (int64_t)size * N_FOP, "counter %lld, expected %lld", (long long)v,
		      (long long)size * N_FOP);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	{
		int64_t val = 1000 + rank, old, seen;

		/* replace at rank 0 slot 1, one rank after the other */
		for (int turn = 0; turn < size; turn++) {
			if (turn == rank) {
				MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cwin);
				MPI_Fetch_and_op(&val, &old, MPI_INT64_T, 0, 1, MPI_REPLACE, cwin);
				MPI_Win_unlock(0, cwin);
				CHECK(old == (rank == 0 ? 0 : 1000 + rank - 1),
				      "rank %d: replace returned %lld", rank, (long long)old);
			}
			MPI_Barrier(MPI_COMM_WORLD);
		}
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cwin);
		MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, 0, 1, MPI_NO_OP, cwin);
		MPI_Win_unlock(0, cwin);
		CHECK(seen == 1000 + size - 1, "rank %d: no-op read %lld", rank, (long long)seen);
	}
	if (rank == 0)
		printf("fetch_and_op: %d x %d MPI_SUM on one counter exact, MPI_REPLACE, MPI_NO_OP\n",
		       size, N_FOP);
	MPI_Win_free(&cwin);
	MPI_Win_free(&win);
	free(counter);
	free(base);
	MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d errors\n", errors ? "FAIL" : "PASS", errors);
	free(src);
	free(dst);
	MPI_Finalize();
	return errors ? 1 : 0;
}
