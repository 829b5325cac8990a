/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program for the libfabric provider's tests (libfabric/test/test_fi.sh mpi): two
 * ranks, run by Open MPI over the OFI MTL with the toroid provider.
 *
 *   1. ping-pong of every size 1 B .. 1 MiB (powers of two and their neighbours): rank 0 sends
 *      with tag = size index, rank 1 receives with MPI_ANY_SOURCE and MPI_ANY_TAG, checks the
 *      status (source 0, the tag, the count) and every byte, and sends back a different
 *      pattern that rank 0 checks the same way;
 *   2. receives posted before their messages with MPI_ANY_TAG, from a second tag space: out
 *      of order tags, each message landing in the receive of its tag;
 *   3. MPI_Allreduce (sum and max) over 1 .. 65536 integers, checked;
 *   4. MPI_Probe with MPI_ANY_SOURCE/MPI_ANY_TAG (FI_PEEK) before the receive, and an
 *      MPI_Irecv withdrawn by MPI_Cancel (fi_cancel);
 *   5. matched probes (FI_PEEK | FI_CLAIM, then FI_CLAIM): MPI_Mprobe + MPI_Mrecv of a short
 *      message (a second MPI_Iprobe does not see it once it is claimed), MPI_Improbe +
 *      MPI_Imrecv of a 200 kB one, MPI_Mprobe(ANY_SOURCE, ANY_TAG) + MPI_Mrecv, each checked
 *      (source, tag, count, bytes).
 * Prints one line per part and exits 0 if everything matched, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_SIZE (1u << 20)

static int rank, nprocs, errors;

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

static void
expect(int cond, const char *fmt, int a, int b)
{
	if (!cond) {
		fprintf(stderr, "rank %d: ", rank);
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
		errors++;
	}
}

static int
pingpong(void)
{
	unsigned char *sb = malloc(MAX_SIZE), *rb = malloc(MAX_SIZE);
	int n = 0;

	if (sb == NULL || rb == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (size_t base = 1; base <= MAX_SIZE; base *= 2) {
		for (int d = -1; d <= 1; d++) {
			size_t len = base + (size_t)d;
			int tag = n, count;
			MPI_Status st;

			if (len == 0 || len > MAX_SIZE || (base == 1 && d != 0) ||
			    (base == 2 && d == -1))
				continue;
			n++;
			if (rank == 0) {
				fill(sb, len, (unsigned int)tag);
				MPI_Send(sb, (int)len, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
				memset(rb, 0, len);
				MPI_Recv(rb, MAX_SIZE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
					 MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &count);
				expect(st.MPI_SOURCE == 1 && st.MPI_TAG == tag + 1000,
				       "pong: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
				expect(count == (int)len, "pong: %d bytes, expected %d", count,
				       (int)len);
				expect(bad_byte(rb, len, (unsigned int)tag + 1000) == len,
				       "pong of %d B: bad byte %d", (int)len,
				       (int)bad_byte(rb, len, (unsigned int)tag + 1000));
			} else {
				memset(rb, 0, len);
				MPI_Recv(rb, MAX_SIZE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
					 MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &count);
				expect(st.MPI_SOURCE == 0 && st.MPI_TAG == tag,
				       "ping: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
				expect(count == (int)len, "ping: %d bytes, expected %d", count,
				       (int)len);
				expect(bad_byte(rb, len, (unsigned int)tag) == len,
				       "ping of %d B: bad byte %d", (int)len,
				       (int)bad_byte(rb, len, (unsigned int)tag));
				fill(sb, len, (unsigned int)tag + 1000);
				MPI_Send(sb, (int)len, MPI_BYTE, 0, tag + 1000, MPI_COMM_WORLD);
			}
		}
	}
	free(sb);
	free(rb);
	return n;
}

/* Rank 1 posts receives for tags 7, 5, 3 (directed at rank 0) and one with MPI_ANY_TAG last;
 * rank 0 sends tags 9, 3, 5, 7 (each 4 KiB): 3, 5, 7 land in their receives, 9 in the
 * any-tag one. */
static void
tags(void)
{
	static const int rtags[4] = {7, 5, 3, MPI_ANY_TAG}, stags[4] = {9, 3, 5, 7};
	enum { LEN = 4096 };
	unsigned char *b = malloc(4 * LEN);
	MPI_Request rq[4];
	MPI_Status st[4];

	if (b == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	if (rank == 1) {
		for (int i = 0; i < 4; i++)
			MPI_Irecv(b + i * LEN, LEN, MPI_BYTE, 0, rtags[i], MPI_COMM_WORLD, &rq[i]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Waitall(4, rq, st);
		for (int i = 0; i < 4; i++) {
			int want = i < 3 ? rtags[i] : 9;

			expect(st[i].MPI_TAG == want, "tags: receive got tag %d, expected %d",
			       st[i].MPI_TAG, want);
			expect(bad_byte(b + i * LEN, LEN, 5000u + (unsigned int)want) == LEN,
			       "tags: tag %d: bad byte %d", want,
			       (int)bad_byte(b + i * LEN, LEN, 5000u + (unsigned int)want));
		}
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < 4; i++) {
			fill(b + i * LEN, LEN, 5000u + (unsigned int)stags[i]);
			MPI_Send(b + i * LEN, LEN, MPI_BYTE, 1, stags[i], MPI_COMM_WORLD);
		}
	}
	free(b);
}

static void
allreduce(void)
{
	for (int n = 1; n <= 65536; n *= 16) {
		int *in = malloc((size_t)n * sizeof(int)), *sum = malloc((size_t)n * sizeof(int)),
		    *max = malloc((size_t)n * sizeof(int));

		if (in == NULL || sum == NULL || max == NULL)
			MPI_Abort(MPI_COMM_WORLD, 2);
		for (int i = 0; i < n; i++)
			in[i] = i * (rank + 1) + rank;
		MPI_Allreduce(in, sum, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(in, max, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		for (int i = 0; i < n; i++) {
			/* sum over r of i*(r+1)+r, max at r = nprocs-1 */
			int s = i * nprocs * (nprocs + 1) / 2 + nprocs * (nprocs - 1) / 2;
			int m = i * nprocs + nprocs - 1;

			if (sum[i] != s || max[i] != m) {
				expect(0, "allreduce: element %d of %d wrong", i, n);
				break;
			}
		}
		free(in);
		free(sum);
		free(max);
	}
}

static void
probe_cancel(void)
{
	enum { LEN = 1000 };
	unsigned char b[LEN];
	MPI_Request rq;
	MPI_Status st;
	int count, flag;

	if (rank == 0) {
		fill(b, LEN, 77);
		MPI_Send(b, LEN, MPI_BYTE, 1, 77, MPI_COMM_WORLD);
	} else {
		MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		expect(st.MPI_SOURCE == 0 && st.MPI_TAG == 77, "probe: source %d tag %d",
		       st.MPI_SOURCE, st.MPI_TAG);
		expect(count == LEN, "probe: %d bytes, expected %d", count, LEN);
		memset(b, 0, LEN);
		MPI_Recv(b, LEN, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
		expect(bad_byte(b, LEN, 77) == LEN, "probed message: bad byte %d of %d",
		       (int)bad_byte(b, LEN, 77), LEN);
		/* a receive nobody sends to */
		MPI_Irecv(b, LEN, MPI_BYTE, 0, 99, MPI_COMM_WORLD, &rq);
		MPI_Cancel(&rq);
		MPI_Wait(&rq, &st);
		MPI_Test_cancelled(&st, &flag);
		expect(flag, "MPI_Cancel: the receive was not cancelled (%d, %d)", flag, 0);
	}
}

/* Rank 0 sends tags 80 (1000 B), 81 (200 kB) and 82 (64 B); rank 1 takes each by a matched
 * probe and its receive. */
static void
mprobe(void)
{
	static const int lens[3] = {1000, 200000, 64};
	unsigned char *b = malloc(200000);
	MPI_Message msg;
	MPI_Request rq;
	MPI_Status st;
	int count, flag = 0;

	if (b == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	if (rank == 0) {
		for (int i = 0; i < 3; i++) {
			fill(b, (size_t)lens[i], 80u + (unsigned int)i);
			MPI_Send(b, lens[i], MPI_BYTE, 1, 80 + i, MPI_COMM_WORLD);
		}
		free(b);
		return;
	}
	/* MPI_Mprobe + MPI_Mrecv: once claimed, nothing else sees the message */
	MPI_Mprobe(0, 80, MPI_COMM_WORLD, &msg, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	expect(st.MPI_SOURCE == 0 && st.MPI_TAG == 80, "mprobe: source %d tag %d", st.MPI_SOURCE,
	       st.MPI_TAG);
	expect(count == lens[0], "mprobe: %d bytes, expected %d", count, lens[0]);
	MPI_Iprobe(0, 80, MPI_COMM_WORLD, &flag, &st);
	expect(!flag, "iprobe found the claimed message (%d, %d)", flag, 0);
	memset(b, 0, (size_t)lens[0]);
	MPI_Mrecv(b, lens[0], MPI_BYTE, &msg, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	expect(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == 0 && st.MPI_TAG == 80,
	       "mrecv: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
	expect(count == lens[0] && bad_byte(b, (size_t)lens[0], 80) == (size_t)lens[0],
	       "mrecv: %d bytes, bad byte %d", count, (int)bad_byte(b, (size_t)lens[0], 80));
	/* MPI_Improbe (until the message is there, at most 30 s) + MPI_Imrecv */
	for (double t0 = MPI_Wtime(); !flag && MPI_Wtime() - t0 < 30;)
		MPI_Improbe(MPI_ANY_SOURCE, 81, MPI_COMM_WORLD, &flag, &msg, &st);
	expect(flag, "improbe: the 200 kB message never came (%d, %d)", flag, 0);
	if (flag) {
		MPI_Get_count(&st, MPI_BYTE, &count);
		expect(count == lens[1] && st.MPI_SOURCE == 0, "improbe: %d bytes from %d", count,
		       st.MPI_SOURCE);
		memset(b, 0, (size_t)lens[1]);
		MPI_Imrecv(b, lens[1], MPI_BYTE, &msg, &rq);
		MPI_Wait(&rq, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		expect(count == lens[1] && st.MPI_TAG == 81, "imrecv: %d bytes, tag %d", count,
		       st.MPI_TAG);
		expect(bad_byte(b, (size_t)lens[1], 81) == (size_t)lens[1],
		       "imrecv: bad byte %d of %d", (int)bad_byte(b, (size_t)lens[1], 81), lens[1]);
	}
	MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
	expect(st.MPI_SOURCE == 0 && st.MPI_TAG == 82, "mprobe(any): source %d tag %d",
	       st.MPI_SOURCE, st.MPI_TAG);
	memset(b, 0, (size_t)lens[2]);
	MPI_Mrecv(b, lens[2], MPI_BYTE, &msg, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	expect(count == lens[2] && bad_byte(b, (size_t)lens[2], 82) == (size_t)lens[2],
	       "mrecv(any): %d bytes, bad byte %d", count, (int)bad_byte(b, (size_t)lens[2], 82));
	free(b);
}

/* Nonblocking sends of a long message and then a short one, received short first: legal MPI.
 * The long one reaches its receiving engine before its receive is posted; if the engine held
 * it at the sender (docs/vni.md, "One copy by the receiver"), the short one would park behind
 * it (ordered interfaces) and rank 1 would wait for it for ever. */
static void
overtake(unsigned char *big)
{
	for (unsigned int round = 0; round < 5; round++) {
		unsigned char small[8];

		if (rank == 0) {
			MPI_Request rq[2];

			fill(big, MAX_SIZE, 900 + round);
			fill(small, sizeof(small), 950 + round);
			MPI_Isend(big, MAX_SIZE, MPI_BYTE, 1, 51, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(small, sizeof(small), MPI_BYTE, 1, 52, MPI_COMM_WORLD, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(small, sizeof(small), MPI_BYTE, 0, 52, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Recv(big, MAX_SIZE, MPI_BYTE, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			expect(bad_byte(small, sizeof(small), 950 + round) == sizeof(small),
			       "overtake: short message of round %d bad (%d)", (int)round, 0);
			expect(bad_byte(big, MAX_SIZE, 900 + round) == MAX_SIZE,
			       "overtake: long message of round %d bad (%d)", (int)round, 0);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
}

/* Messages above the pool's quarter (16 MiB of the default 64) in one buffer: the provider's
 * max_msg_size is 1 GiB, so Open MPI's MTL takes them (it refused them when max_msg_size was
 * the quarter), and they go straight between the engine and the ranks' memory. A 40 MiB send
 * each way and a 40 MiB broadcast, every byte checked. */
static void
huge(void)
{
	const size_t len = (size_t)40 << 20;
	unsigned char *b = malloc(len);

	if (b == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int dir = 0; dir < 2; dir++) {
		if (rank == dir) {
			fill(b, len, 700 + dir);
			MPI_Send(b, (int)len, MPI_BYTE, 1 - dir, 61, MPI_COMM_WORLD);
		} else {
			memset(b, 0, len);
			MPI_Recv(b, (int)len, MPI_BYTE, dir, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			expect(bad_byte(b, len, 700 + dir) == len, "huge: 40 MiB from %d bad at %d",
			       dir, (int)bad_byte(b, len, 700 + dir));
		}
	}
	if (rank == 0)
		fill(b, len, 777);
	else
		memset(b, 0, len);
	MPI_Bcast(b, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
	expect(bad_byte(b, len, 777) == len, "huge: 40 MiB broadcast bad at %d (rank %d)",
	       (int)bad_byte(b, len, 777), rank);
	free(b);
}

int
main(int argc, char **argv)
{
	int n, total;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (nprocs != 2) {
		if (rank == 0)
			fprintf(stderr, "run with 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	n = pingpong();
	if (rank == 0)
		printf("pingpong: %d sizes 1 B .. 1 MiB, ANY_SOURCE/ANY_TAG, data checked\n", n);
	tags();
	if (rank == 0)
		printf("tags: 4 pre-posted receives (3 tags, 1 MPI_ANY_TAG) matched\n");
	allreduce();
	if (rank == 0)
		printf("allreduce: sum and max of 1 .. 65536 ints checked\n");
	probe_cancel();
	if (rank == 0)
		printf("probe, cancel: MPI_Probe(ANY_SOURCE, ANY_TAG) then receive; MPI_Cancel\n");
	{
		unsigned char *big = malloc(MAX_SIZE);

		if (big == NULL)
			MPI_Abort(MPI_COMM_WORLD, 2);
		overtake(big);
		free(big);
	}
	if (rank == 0)
		printf("overtake: 5 x (Isend 1 MiB, Isend 8 B), received 8 B first, data checked\n");
	huge();
	if (rank == 0)
		printf("huge: 40 MiB each way and a 40 MiB MPI_Bcast, data checked\n");
	mprobe();
	if (rank == 0)
		printf("mprobe: MPI_Mprobe + MPI_Mrecv (unseen once claimed), MPI_Improbe + "
		       "MPI_Imrecv of 200 kB, MPI_Mprobe(ANY_SOURCE, ANY_TAG)\n");
	MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d errors\n", total == 0 ? "PASS" : "FAIL", total);
	MPI_Finalize();
	return total == 0 ? 0 : 1;
}
