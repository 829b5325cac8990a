/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program that overlaps computation with a posted receive (libfabric/test/test_fi.sh
 * mpi_test_poll): two ranks, run once over toroid (OFI MTL) and once over Open MPI's TCP BTL,
 * whose times the script compares.
 *
 * Each round, both ranks post an MPI_Irecv for the other's message, then compute in steps (a
 * fixed amount of arithmetic each, never a sleep) and call MPI_Test once per step until the
 * message arrived; after SEND_AFTER steps each sends its own message (MPI_Isend), so the
 * receive stays posted through the first SEND_AFTER steps of both ranks: every one of those
 * MPI_Test calls finds nothing. Sizes cycle through 8 B, 1000 B, 8 KiB and 64 KiB; the tag
 * is the round; the count, source, tag and every byte of each message are checked.
 *
 *   mpi_test_poll [ROUNDS]     (default 400)
 *
 * The timed part (the rounds, between two barriers) runs REPS times; the line
 * "time: S s" gives the least of them, as the slower rank measured it, so that another
 * program that takes the CPUs for a while does not decide the comparison. Prints
 * "PASS: 0 errors" and exits 0 if every message matched, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_SIZE   65536
#define SEND_AFTER 100 /* compute steps before a rank sends its message */
#define STEP_OPS   400 /* dependent multiply-adds per compute step (about 1 us) */
#define REPS       3

static const int sizes[] = {8, 1000, 8192, MAX_SIZE};
static int rank, errors;
static volatile uint64_t sink;

static void
fill(unsigned char *p, size_t len, unsigned int seed)
{
	uint32_t s = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		s = s * 1103515245u + 12345u;
		p[i] = (unsigned char)(s >> 16);
	}
}

static size_t
bad_byte(const unsigned char *p, size_t len, unsigned int seed)
{
	uint32_t s = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		s = s * 1103515245u + 12345u;
		if (p[i] != (unsigned char)(s >> 16))
			return i;
	}
	return len;
}

/* One compute step: a fixed chain of dependent arithmetic the compiler cannot drop. */
static void
compute_step(void)
{
	uint64_t x = sink;

	for (int i = 0; i < STEP_OPS; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
}

/* The rounds once; returns the compute steps this rank made. */
static long
rounds(int n, unsigned char *sb, unsigned char *rb)
{
	int peer = 1 - rank;
	long steps = 0;

	for (int r = 0; r < n; r++) {
		int len = sizes[r % 4], done = 0, count = -1;
		unsigned int seed = (unsigned int)(r * 2 + rank),
			     pseed = (unsigned int)(r * 2 + peer);
		MPI_Request rreq, sreq = MPI_REQUEST_NULL;
		MPI_Status st;

		memset(rb, 0, (size_t)len);
		MPI_Irecv(rb, MAX_SIZE, MPI_BYTE, peer, r, MPI_COMM_WORLD, &rreq);
		fill(sb, (size_t)len, seed);
		for (int step = 0;; step++) {
			compute_step();
			steps++;
			if (step == SEND_AFTER)
				MPI_Isend(sb, len, MPI_BYTE, peer, r, MPI_COMM_WORLD, &sreq);
			if (!done)
				MPI_Test(&rreq, &done, &st);
			if (done && step >= SEND_AFTER)
				break;
		}
		MPI_Wait(&sreq, MPI_STATUS_IGNORE);
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (st.MPI_SOURCE != peer || st.MPI_TAG != r || count != len ||
		    bad_byte(rb, (size_t)len, pseed) != (size_t)len) {
			fprintf(stderr,
				"rank %d round %d: source %d tag %d count %d (expected %d), "
				"first bad byte %zu\n",
				rank, r, st.MPI_SOURCE, st.MPI_TAG, count, len,
				bad_byte(rb, (size_t)len, pseed));
			errors++;
		}
	}
	return steps;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400, nprocs, total;
	unsigned char *sb = malloc(MAX_SIZE), *rb = malloc(MAX_SIZE);
	double best = 0;
	long steps = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (nprocs != 2 || n < 1 || sb == NULL || rb == NULL) {
		if (rank == 0)
			fprintf(stderr, "mpi_test_poll: 2 ranks and ROUNDS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	rounds(4, sb, rb); /* warm up: connections, every size once */
	for (int rep = 0; rep < REPS; rep++) {
		double t0, t, tmax;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		steps = rounds(n, sb, rb);
		t = MPI_Wtime() - t0;
		MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (rep == 0 || tmax < best)
			best = tmax;
		if (rank == 0)
			printf("rep %d: %d rounds in %.6f s, %ld compute steps at rank 0\n", rep, n,
			       tmax, steps);
	}
	MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("time: %.6f s\n", best);
		printf("%s: %d errors\n", total == 0 ? "PASS" : "FAIL", total);
	}
	MPI_Finalize();
	free(sb);
	free(rb);
	return total == 0 ? 0 : 1;
}
