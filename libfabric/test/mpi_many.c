/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program for the libfabric provider's tests (libfabric/test/test_fi.sh mpi_many):
 * more operations outstanding than the VNI has contexts (FI_TOROID_CTX, 256). Each of the two
 * ranks posts N MPI_Irecv from the other (tag k, 0 B .. 20 000 B), one more receive that no
 * message matches, then N MPI_Isend to the other, before it waits for any: the provider holds
 * what the VNI cannot take, in posting order, and gives it to the VNI as contexts free. The
 * extra receive is cancelled while held (MPI_Test_cancelled). Before the sends, rank 0 finds
 * one more message of rank 1's with MPI_Iprobe and takes it with MPI_Mprobe + MPI_Mrecv while
 * its receives are held (probes and claims do not wait behind them). Every message is checked
 * (count, tag and every byte). Prints "PASS: 0 errors" and exits 0 if everything matched.
 *
 *   mpi_many [N]   (default 1500)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int
size_of(int k)
{
	static const int s[] = {0, 8, 512, 4096, 20000};

	return s[k % 5];
}

static unsigned char
byte_of(int from, int k, int i)
{
	return (unsigned char)(from * 101 + k * 31 + i * 7 + 1);
}

int
main(int argc, char **argv)
{
	int rank, size, peer, n, errors = 0, all = 0, cancelled = 0;
	unsigned char **rb, **sb, spare[8];
	MPI_Request *rq, *sq, extra;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = argc > 1 ? atoi(argv[1]) : 1500;
	peer = rank ^ 1;
	rb = calloc((size_t)n, sizeof(*rb));
	sb = calloc((size_t)n, sizeof(*sb));
	rq = calloc((size_t)n, sizeof(*rq));
	sq = calloc((size_t)n, sizeof(*sq));
	if (size != 2 || rb == NULL || sb == NULL || rq == NULL || sq == NULL) {
		fprintf(stderr, "rank %d: needs 2 ranks and memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int k = 0; k < n; k++) {
		rb[k] = calloc(1, 20000);
		sb[k] = malloc(20000);
		if (rb[k] == NULL || sb[k] == NULL)
			MPI_Abort(MPI_COMM_WORLD, 2);
		for (int i = 0; i < size_of(k); i++)
			sb[k][i] = byte_of(rank, k, i);
	}
	for (int k = 0; k < n; k++)
		MPI_Irecv(rb[k], 20000, MPI_BYTE, peer, k, MPI_COMM_WORLD, &rq[k]);
	MPI_Irecv(spare, sizeof(spare), MPI_BYTE, peer, n + 7, MPI_COMM_WORLD, &extra);
	MPI_Cancel(&extra);
	MPI_Wait(&extra, &st);
	MPI_Test_cancelled(&st, &cancelled);
	if (!cancelled) {
		fprintf(stderr, "rank %d: the held receive was not cancelled\n", rank);
		errors++;
	}
	/* probes and claims while receives are held: rank 1 sends one more message, which
	 * rank 0 finds with MPI_Iprobe, then takes with MPI_Mprobe + MPI_Mrecv, before either
	 * sends the others (a probe that waited behind the held receives never came back) */
	if (rank == 1) {
		unsigned char b = 0x5a;

		MPI_Send(&b, 1, MPI_BYTE, peer, n + 9, MPI_COMM_WORLD);
		/* nothing else comes to rank 0 until it has found that one: none of its
		 * receives completes meanwhile to free a context */
		MPI_Recv(&b, 1, MPI_BYTE, peer, n + 10, MPI_COMM_WORLD, &st);
	} else {
		MPI_Message msg;
		unsigned char b = 0;
		int flag = 0, count = 0;

		while (!flag)
			MPI_Iprobe(peer, n + 9, MPI_COMM_WORLD, &flag, &st);
		MPI_Mprobe(peer, n + 9, MPI_COMM_WORLD, &msg, &st);
		MPI_Mrecv(&b, 1, MPI_BYTE, &msg, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (b != 0x5a || count != 1) {
			fprintf(stderr, "rank 0: the probed message: %d B, %#x\n", count, b);
			errors++;
		}
		MPI_Send(&b, 1, MPI_BYTE, peer, n + 10, MPI_COMM_WORLD);
	}
	for (int k = 0; k < n; k++)
		MPI_Isend(sb[k], size_of(k), MPI_BYTE, peer, k, MPI_COMM_WORLD, &sq[k]);
	for (int k = 0; k < n; k++) {
		int count;

		MPI_Wait(&rq[k], &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (count != size_of(k) || st.MPI_TAG != k || st.MPI_SOURCE != peer) {
			fprintf(stderr, "rank %d: receive %d: %d B, tag %d, from %d\n", rank, k,
				count, st.MPI_TAG, st.MPI_SOURCE);
			errors++;
			continue;
		}
		for (int i = 0; i < count; i++)
			if (rb[k][i] != byte_of(peer, k, i)) {
				fprintf(stderr, "rank %d: receive %d differs at byte %d\n", rank, k,
					i);
				errors++;
				break;
			}
	}
	MPI_Waitall(n, sq, MPI_STATUSES_IGNORE);
	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d errors\n", all == 0 ? "PASS" : "FAIL", all);
	for (int k = 0; k < n; k++) {
		free(rb[k]);
		free(sb[k]);
	}
	free(rb);
	free(sb);
	free(rq);
	free(sq);
	MPI_Finalize();
	return all == 0 ? 0 : 1;
}
