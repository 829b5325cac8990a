/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program for the libfabric provider's tests (libfabric/test/test_fi.sh
 * mpi_eager_full): two ranks over one toroid-node with little staging (docs/vni.md,
 * "Unexpected messages: the header only"). Rank 0 posts N short MPI_Isends at once, message
 * k with tag k; rank 1 receives them last-first, one MPI_Recv at a time, so the first receive
 * waits for the message sent after all the others, which more than fill its share of staging.
 * Each message is checked (count and every byte). Prints "PASS: 0 errors" and exits 0 if
 * everything matched, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#define N   300 /* x 200 B: more than twice a 32 KiB share of staging */
#define LEN 200 /* short: sent eager by the provider */

static unsigned char sbuf[N][LEN];

static unsigned char
byte_of(int k, int i)
{
	return (unsigned char)(k * 31 + i * 7 + 1);
}

int
main(int argc, char **argv)
{
	MPI_Request rq[N];
	int rank, errors = 0, all = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) {
		for (int k = 0; k < N; k++) {
			for (int i = 0; i < LEN; i++)
				sbuf[k][i] = byte_of(k, i);
			MPI_Isend(sbuf[k], LEN, MPI_BYTE, 1, k, MPI_COMM_WORLD, &rq[k]);
		}
		MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
	} else if (rank == 1) {
		unsigned char b[LEN];

		for (int k = N - 1; k >= 0; k--) {
			MPI_Status st;
			int count;

			memset(b, 0, sizeof(b));
			MPI_Recv(b, LEN, MPI_BYTE, 0, k, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &count);
			if (count != LEN || st.MPI_TAG != k) {
				fprintf(stderr, "rank 1: message %d: %d B of tag %d\n", k, count,
					st.MPI_TAG);
				errors++;
				continue;
			}
			for (int i = 0; i < LEN; i++)
				if (b[i] != byte_of(k, i)) {
					fprintf(stderr, "rank 1: message %d differs at byte %d\n",
						k, i);
					errors++;
					break;
				}
		}
		printf("%d short messages received last-first\n", N);
	}
	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("PASS: %d errors\n", all);
	MPI_Finalize();
	return all != 0;
}
