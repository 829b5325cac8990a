/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages a rank sends to itself: every rank calls MPI_Sendrecv to itself ITERS times (default
 * 10000; sizes above 64 KiB fewer, in proportion, at least 20) for each size of 8 B, 64 KiB and
 * MAX (default 1 MiB) up to MAX, receiving from itself by name and then from MPI_ANY_SOURCE, after
 * a warm-up; every message's first and last bytes checked, every byte of the last one. The two
 * buffers are 2 KiB apart modulo the page, so that no copy pays for 4 KiB aliasing. Rank 0
 * prints one JSON line per size and source:
 * {"prog":"self","ranks":N,"size":S,"source":"self"|"any","iters":I,"us_per_call":U,
 *  "errors":E}. mpirun -np N ./mpi_self [MAX [ITERS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char
pat(size_t k, int i)
{
	return (unsigned char)(k * 131 + (size_t)i * 7 + 1);
}

/* @p n calls of @p size bytes, received from @p src: errors; the time in *t. */
static long
run(unsigned char *s, unsigned char *r, size_t size, int n, int me, int src, double *t)
{
	long bad = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	*t = MPI_Wtime();
	for (int i = 0; i < n; i++) {
		s[0] = pat(0, i);
		s[size - 1] = pat(size - 1, i);
		MPI_Sendrecv(s, (int)size, MPI_BYTE, me, 1, r, (int)size, MPI_BYTE, src, 1,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		bad += r[0] != pat(0, i) || r[size - 1] != pat(size - 1, i);
	}
	*t = MPI_Wtime() - *t;
	for (size_t k = 0; k < size; k++)
		s[k] = pat(k, n);
	MPI_Sendrecv(s, (int)size, MPI_BYTE, me, 2, r, (int)size, MPI_BYTE, src, 2, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	bad += memcmp(s, r, size) != 0;
	return bad;
}

int
main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 10000, me, np;
	size_t sizes[3] = {8, 65536, max};
	unsigned char *s, *r;
	void *ps = NULL, *pr = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (max < 8 || iters < 1 || posix_memalign(&ps, 4096, max) != 0 ||
	    posix_memalign(&pr, 4096, max + 2048) != 0) {
		fprintf(stderr, "usage: mpi_self [MAX >= 8 [ITERS >= 1]]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	s = ps;
	r = (unsigned char *)pr + 2048;
	memset(s, 1, max);
	memset(r, 0, max);
	for (int k = 0; k < 3; k++) {
		size_t size = sizes[k];
		int n = size > 65536 ? (int)((size_t)iters * 65536 / size) : iters;

		if (size > max || (k == 2 && max == 65536))
			break; /* (sizes up to MAX, each once) */
		n = n < 20 ? 20 : n;
		for (int any = 0; any < 2; any++) {
			double t, tmax;
			long bad, all;

			run(s, r, size, n / 10 + 1, me, any ? MPI_ANY_SOURCE : me,
			    &t); /* warm-up */
			bad = run(s, r, size, n, me, any ? MPI_ANY_SOURCE : me, &t);
			MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
			MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			if (me == 0)
				printf("{\"prog\":\"self\",\"ranks\":%d,\"size\":%zu,\"source\":\"%s\","
				       "\"iters\":%d,\"us_per_call\":%.3f,\"errors\":%ld}\n",
				       np, size, any ? "any" : "self", n, tmax / n * 1e6, all);
		}
	}
	free(ps);
	free(pr);
	MPI_Finalize();
	return 0;
}
