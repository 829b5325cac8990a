/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program for the libfabric provider's tests (libfabric/test/test_fi.sh mpi_ranks):
 * what a user's programs do with more than 2 ranks (3, an odd count, and 4) over one
 * toroid-node, every result byte checked:
 *   - probe: every rank sends M messages of unknown size (0 B .. 300 KB) to every other;
 *     each receives them with MPI_Probe(ANY_SOURCE, ANY_TAG), MPI_Get_count, MPI_Recv, in
 *     the order each source sent them;
 *   - wildcard: rank 0 pre-posts MPI_Irecv(ANY_SOURCE, ANY_TAG) for bursts of 8 B .. 64 KiB
 *     from all others (MPI_Isend and MPI_Ssend mixed); per source the tags come in order;
 *   - ring: MPI_Sendrecv_replace of 8 B .. 1 MiB round the ring, back home unchanged;
 *   - halo: a 2-D periodic halo exchange (MPI_Cart_create, rows contiguous, columns an
 *     MPI_Type_vector) with MPI_Isend / MPI_Irecv / MPI_Waitall and a stencil between steps;
 *   - nonblocking: MPI_Iallreduce, MPI_Ibcast and MPI_Ibarrier completed by MPI_Testall
 *     while computing; MPI_Comm_split (even / odd, reversed) with collectives on them;
 *   - collectives: MPI_Bcast, MPI_Reduce, MPI_Allgather, MPI_Gatherv, MPI_Scatter,
 *     MPI_Reduce_scatter of 8 B .. 1 MiB from changing roots.
 * Prints a line per part, then "PASS: 0 errors" and exits 0 if everything matched, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define PROBE_M  60         /* messages each rank sends each other rank */
#define WILD_B   32         /* messages of a wildcard burst from each rank */
#define WILD_MAX (64 << 10) /* the largest of them */
#define MAX_B    (1 << 20)  /* ring and collective sizes go up to this */
#define HALO_N   96         /* side of each rank's square of the halo grid */

static int rank, nranks, errors;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			if (errors < 20) {                                                         \
				fprintf(stderr, "rank %d: ", rank);                                \
				fprintf(stderr, __VA_ARGS__);                                      \
				fputc('\n', stderr);                                               \
			}                                                                          \
			errors++;                                                                  \
		}                                                                                  \
	} while (0)

static unsigned char
pat(size_t i, int r, int k)
{
	return (unsigned char)(i * 31 + (size_t)r * 101 + (size_t)k * 7 + (i >> 9));
}

/* the index of the first byte of B[0..n) that differs from pat(., r, k), or -1 */
static long
differs(const unsigned char *b, size_t n, int r, int k)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(i, r, k))
			return (long)i;
	return -1;
}

/* size of probe message M from SRC to DST: mostly short, every fifth up to 300 KB, some 0 */
static size_t
probe_size(int src, int dst, int m)
{
	uint32_t x = (uint32_t)src * 7919u + (uint32_t)dst * 104729u + (uint32_t)m * 2654435761u;

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return m % 5 == 0 ? x % 300000 : x % 2000;
}

static void
part_probe(void)
{
	int nsend = PROBE_M * (nranks - 1), q = 0;
	MPI_Request *rq = malloc(sizeof(*rq) * (size_t)nsend);
	unsigned char **bufs = malloc(sizeof(*bufs) * (size_t)nsend);
	int *next = calloc((size_t)nranks, sizeof(int));

	for (int m = 0; m < PROBE_M; m++)
		for (int d = 1; d < nranks; d++) {
			int dst = (rank + d) % nranks;
			size_t sz = probe_size(rank, dst, m);

			bufs[q] = malloc(sz + 1);
			for (size_t i = 0; i < sz; i++)
				bufs[q][i] = pat(i, rank, m);
			MPI_Isend(bufs[q], (int)sz, MPI_BYTE, dst, m, MPI_COMM_WORLD, &rq[q]);
			q++;
		}
	for (int k = 0; k < nsend; k++) {
		MPI_Status st, st2;
		int c, c2;

		MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &c);
		int src = st.MPI_SOURCE, tag = st.MPI_TAG;

		if (src < 0 || src >= nranks || src == rank || tag < 0 || tag >= PROBE_M) {
			CHECK(0, "probe: source %d tag %d", src, tag);
			break;
		}
		CHECK(tag == next[src], "probe: from %d tag %d, expected %d", src, tag, next[src]);
		CHECK((size_t)c == probe_size(src, rank, tag), "probe: from %d tag %d: %d B", src,
		      tag, c);
		unsigned char *b = malloc((size_t)c + 1);

		MPI_Recv(b, c, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st2);
		MPI_Get_count(&st2, MPI_BYTE, &c2);
		CHECK(c2 == c, "probe: received %d B of %d", c2, c);
		long at = differs(b, (size_t)c, src, tag);

		CHECK(at < 0, "probe: from %d tag %d differs at %ld", src, tag, at);
		free(b);
		next[src] = tag + 1;
	}
	MPI_Waitall(nsend, rq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < nsend; i++)
		free(bufs[i]);
	free(bufs);
	free(rq);
	free(next);
}

static int
wild_size(int src, int m)
{
	return 8 << ((src + m) % 14);
}

static void
wild_root(int round, unsigned char *b, MPI_Request *rq, MPI_Status *st, int *next)
{
	int tot = WILD_B * (nranks - 1);

	for (int i = 0; i < tot; i++)
		MPI_Irecv(b + (size_t)i * WILD_MAX, WILD_MAX, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
			  MPI_COMM_WORLD, &rq[i]);
	MPI_Waitall(tot, rq, st);
	for (int r = 0; r < nranks; r++)
		next[r] = 0;
	/* the receives match in the order they were posted: per source, tags ascend */
	for (int i = 0; i < tot; i++) {
		int src = st[i].MPI_SOURCE, m = st[i].MPI_TAG, c;

		MPI_Get_count(&st[i], MPI_BYTE, &c);
		if (src <= 0 || src >= nranks) {
			CHECK(0, "wildcard: source %d", src);
			continue;
		}
		CHECK(m == next[src], "wildcard: from %d tag %d, expected %d", src, m, next[src]);
		next[src] = m + 1;
		CHECK(c == wild_size(src, m), "wildcard: from %d tag %d: %d B", src, m, c);
		long at = differs(b + (size_t)i * WILD_MAX, (size_t)c, src, m + round);

		CHECK(at < 0, "wildcard: from %d tag %d differs at %ld", src, m, at);
	}
	for (int r = 1; r < nranks; r++)
		MPI_Send(&round, 1, MPI_INT, r, 999, MPI_COMM_WORLD);
}

static void
part_wildcard(int rounds)
{
	int tot = WILD_B * (nranks - 1);
	unsigned char *b = malloc((size_t)WILD_MAX * (size_t)tot);
	MPI_Request *rq = malloc(sizeof(*rq) * (size_t)tot);
	MPI_Status *st = malloc(sizeof(*st) * (size_t)tot);
	int *next = malloc(sizeof(int) * (size_t)nranks);

	for (int k = 0; k < rounds; k++) {
		if (rank == 0) {
			wild_root(k, b, rq, st, next);
			continue;
		}
		for (int m = 0; m < WILD_B; m++) {
			unsigned char *s = b + (size_t)m * WILD_MAX;
			int c = wild_size(rank, m), ack = -1;

			for (int j = 0; j < c; j++)
				s[j] = pat((size_t)j, rank, m + k);
			if (m % 7 == 3) { /* synchronous: completes once rank 0 matched it */
				MPI_Ssend(s, c, MPI_BYTE, 0, m, MPI_COMM_WORLD);
				rq[m] = MPI_REQUEST_NULL;
			} else {
				MPI_Isend(s, c, MPI_BYTE, 0, m, MPI_COMM_WORLD, &rq[m]);
			}
			if (m == WILD_B - 1) {
				MPI_Waitall(WILD_B, rq, MPI_STATUSES_IGNORE);
				MPI_Recv(&ack, 1, MPI_INT, 0, 999, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				CHECK(ack == k, "wildcard: acknowledgement %d of round %d", ack, k);
			}
		}
	}
	free(b);
	free(rq);
	free(st);
	free(next);
}

static void
part_ring(void)
{
	int to = (rank + 1) % nranks, from = (rank - 1 + nranks) % nranks;
	unsigned char *b = malloc(MAX_B);

	for (size_t sz = 8; sz <= MAX_B; sz *= 4)
		for (int s = 0; s < nranks; s++) {
			MPI_Status st;
			int c, orig = (rank - s - 1 + 2 * nranks) % nranks;

			if (s == 0)
				for (size_t i = 0; i < sz; i++)
					b[i] = pat(i, rank, (int)sz);
			MPI_Sendrecv_replace(b, (int)sz, MPI_BYTE, to, s, from, s, MPI_COMM_WORLD,
					     &st);
			MPI_Get_count(&st, MPI_BYTE, &c);
			CHECK(c == (int)sz && st.MPI_SOURCE == from, "ring: %d B from %d", c,
			      st.MPI_SOURCE);
			/* after s + 1 hops this rank holds the buffer rank - (s + 1) filled */
			long at = differs(b, sz, orig, (int)sz);

			CHECK(at < 0, "ring: %zu B, hop %d, differs at %ld", sz, s, at);
		}
	free(b);
}

static double
cell(int gx, int gy, int s)
{
	return (double)((gx * 7919 + gy * 104729 + s * 31) % 1000003);
}

/* checks the 4 ghost rows / columns of G (side W = n + 2) at step S */
static void
halo_check(const double *g, int n, const int *co, const int *gdim, int s)
{
	int w = n + 2, gi = co[0] * n, gj = co[1] * n, bad = 0;

	for (int k = 1; k <= n && bad < 4; k++) {
		int j = gj + k - 1, i = gi + k - 1;
		double up = cell((gi - 1 + gdim[0]) % gdim[0], j, s);
		double down = cell((gi + n) % gdim[0], j, s);
		double left = cell(i, (gj - 1 + gdim[1]) % gdim[1], s);
		double right = cell(i, (gj + n) % gdim[1], s);

		bad += g[k] != up || g[(size_t)(n + 1) * w + k] != down ||
		       g[(size_t)k * w] != left || g[(size_t)k * w + n + 1] != right;
	}
	CHECK(bad == 0, "halo: step %d, %d ghost cells differ", s, bad);
}

static void
part_halo(int steps)
{
	int n = HALO_N, w = n + 2, dims[2] = {0, 0}, per[2] = {1, 1}, co[2], gdim[2], me;
	int up, down, left, right;
	MPI_Comm cart;
	MPI_Datatype col;
	double *g = calloc((size_t)w * w, sizeof(double)),
	       *h = calloc((size_t)w * w, sizeof(double));
	volatile double sink = 0;

	MPI_Dims_create(nranks, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
	MPI_Comm_rank(cart, &me);
	MPI_Cart_coords(cart, me, 2, co);
	MPI_Cart_shift(cart, 0, 1, &up, &down);
	MPI_Cart_shift(cart, 1, 1, &left, &right);
	gdim[0] = dims[0] * n;
	gdim[1] = dims[1] * n;
	MPI_Type_vector(n, 1, w, MPI_DOUBLE, &col);
	MPI_Type_commit(&col);
	for (int s = 0; s < steps; s++) {
		MPI_Request rq[8];

		for (int i = 1; i <= n; i++)
			for (int j = 1; j <= n; j++)
				g[(size_t)i * w + j] =
					cell(co[0] * n + i - 1, co[1] * n + j - 1, s);
		MPI_Irecv(&g[1], n, MPI_DOUBLE, up, 1, cart, &rq[0]);
		MPI_Irecv(&g[(size_t)(n + 1) * w + 1], n, MPI_DOUBLE, down, 2, cart, &rq[1]);
		MPI_Irecv(&g[(size_t)w], 1, col, left, 3, cart, &rq[2]);
		MPI_Irecv(&g[(size_t)w + n + 1], 1, col, right, 4, cart, &rq[3]);
		MPI_Isend(&g[(size_t)n * w + 1], n, MPI_DOUBLE, down, 1, cart, &rq[4]);
		MPI_Isend(&g[(size_t)w + 1], n, MPI_DOUBLE, up, 2, cart, &rq[5]);
		MPI_Isend(&g[(size_t)w + n], 1, col, right, 3, cart, &rq[6]);
		MPI_Isend(&g[(size_t)w + 1], 1, col, left, 4, cart, &rq[7]);
		MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
		halo_check(g, n, co, gdim, s);
		for (int i = 1; i <= n; i++) /* the compute step: one stencil sweep */
			for (int j = 1; j <= n; j++)
				h[(size_t)i * w + j] =
					0.25 *
					(g[(size_t)(i - 1) * w + j] + g[(size_t)(i + 1) * w + j] +
					 g[(size_t)i * w + j - 1] + g[(size_t)i * w + j + 1]);
		sink += h[(size_t)(n / 2) * w + n / 2];
	}
	MPI_Type_free(&col);
	MPI_Comm_free(&cart);
	free(g);
	free(h);
}

/* collectives on the even / odd and the reversed communicators */
static void
split_colls(MPI_Comm sub, MPI_Comm rev, int k)
{
	int sr, sn, rr, sa[64], ra[64];
	long v = rank * 10 + k, s = 0, e = 0, bv;

	MPI_Comm_rank(sub, &sr);
	MPI_Comm_size(sub, &sn);
	MPI_Comm_rank(rev, &rr);
	CHECK(sr == rank / 2 && sn == (nranks + 1 - rank % 2) / 2, "split: rank %d of %d", sr, sn);
	CHECK(rr == nranks - 1 - rank, "split: reversed rank %d", rr);
	MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, sub);
	for (int r = rank % 2; r < nranks; r += 2)
		e += r * 10 + k;
	CHECK(s == e, "split: allreduce %ld, expected %ld", s, e);
	bv = rr == 0 ? 12345 + k : -1;
	MPI_Bcast(&bv, 1, MPI_LONG, 0, rev);
	CHECK(bv == 12345 + k, "split: bcast %ld", bv);
	for (int r = 0; r < sn && r < 64; r++)
		sa[r] = sr * 100 + r + k;
	MPI_Alltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, sub);
	for (int r = 0; r < sn && r < 64; r++)
		CHECK(ra[r] == r * 100 + sr + k, "split: alltoall %d from %d", ra[r], r);
}

static void
part_nonblocking(int rounds)
{
	int maxn = 1 << 17;
	double *a = malloc(sizeof(double) * (size_t)maxn),
	       *b = malloc(sizeof(double) * (size_t)maxn);
	unsigned char *c = malloc(MAX_B);
	MPI_Comm sub, rev;
	volatile double sink = 0;

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
	MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - rank, &rev);
	for (int k = 0; k < rounds; k++)
		for (int n = 1; n <= maxn; n *= 8) {
			MPI_Request rq[3];
			int root = (k + n) % nranks, done = 0;
			size_t cb = (size_t)n * 4 > MAX_B ? MAX_B : (size_t)n * 4;
			double x = 1;

			for (int i = 0; i < n; i++)
				a[i] = (double)(i % 1000 + rank * 3 + k);
			MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
			if (rank == root)
				for (size_t i = 0; i < cb; i++)
					c[i] = pat(i, root, k);
			MPI_Ibcast(c, (int)cb, MPI_BYTE, root, MPI_COMM_WORLD, &rq[1]);
			MPI_Ibarrier(MPI_COMM_WORLD, &rq[2]);
			while (!done) { /* compute while the collectives progress */
				for (int i = 0; i < 2000; i++)
					x = x * 1.0000001 + 1e-9;
				MPI_Testall(3, rq, &done, MPI_STATUSES_IGNORE);
			}
			sink += x;
			for (int i = 0; i < n; i++) {
				double e = (double)(nranks * (i % 1000 + k) +
						    3 * nranks * (nranks - 1) / 2);

				if (b[i] != e) {
					CHECK(0, "iallreduce: %d at %d: %g, expected %g", n, i,
					      b[i], e);
					break;
				}
			}
			long at = differs(c, cb, root, k);

			CHECK(at < 0, "ibcast: %zu B differ at %ld", cb, at);
			split_colls(sub, rev, k);
		}
	MPI_Comm_free(&sub);
	MPI_Comm_free(&rev);
	free(a);
	free(b);
	free(c);
}

/* MPI_Gatherv of SZ / (r + 1) bytes from each rank r to ROOT, 3 guard bytes between them */
static void
gatherv(size_t sz, int root, int k, unsigned char *a, unsigned char *b, int *cnt, int *dsp)
{
	int tot = 0;

	for (int r = 0; r < nranks; r++) {
		cnt[r] = (int)(sz / (size_t)(r + 1));
		dsp[r] = tot;
		tot += cnt[r] + 3;
	}
	for (int i = 0; i < cnt[rank]; i++)
		a[i] = pat((size_t)i, rank, k);
	memset(b, 0xee, (size_t)tot);
	MPI_Gatherv(a, cnt[rank], MPI_BYTE, b, cnt, dsp, MPI_BYTE, root, MPI_COMM_WORLD);
	if (rank != root)
		return;
	for (int r = 0; r < nranks; r++) {
		long at = differs(b + dsp[r], (size_t)cnt[r], r, k);

		CHECK(at < 0, "gatherv: %zu B from %d differ at %ld", sz, r, at);
		for (int i = 0; i < 3; i++)
			CHECK(b[dsp[r] + cnt[r] + i] == 0xee, "gatherv: guard after %d written", r);
	}
}

/* MPI_Reduce_scatter of ints, rank r getting N / nranks + r of them */
static void
reduce_scatter(size_t n, int *ia, int *ib, int *cnt)
{
	int off = 0, tot = 0;

	for (int r = 0; r < nranks; r++) {
		cnt[r] = (int)(n / (size_t)nranks) + r;
		off += r < rank ? cnt[r] : 0;
		tot += cnt[r];
	}
	for (int i = 0; i < tot; i++)
		ia[i] = i ^ (rank * 7);
	MPI_Reduce_scatter(ia, ib, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < cnt[rank]; i++) {
		int e = 0;

		for (int r = 0; r < nranks; r++)
			e += (off + i) ^ (r * 7);
		if (ib[i] != e) {
			CHECK(0, "reduce_scatter: %zu ints, at %d: %d, expected %d", n, i, ib[i],
			      e);
			break;
		}
	}
}

static void
part_collectives(void)
{
	unsigned char *a = malloc((size_t)MAX_B * nranks), *b = malloc((size_t)MAX_B * nranks);
	int *ia = malloc((size_t)MAX_B + 64 * sizeof(int) * (size_t)nranks);
	int *ib = malloc((size_t)MAX_B + 64 * sizeof(int));
	int *cnt = malloc(sizeof(int) * (size_t)nranks),
	    *dsp = malloc(sizeof(int) * (size_t)nranks);

	for (size_t sz = 8; sz <= MAX_B; sz *= 4) {
		int k = (int)(sz & 0xff), root = (int)((sz / 8) % (size_t)nranks);
		size_t n = sz / 4;
		long at;

		for (size_t i = 0; i < sz; i++)
			a[i] = rank == root ? pat(i, root, k) : 0;
		MPI_Bcast(a, (int)sz, MPI_BYTE, root, MPI_COMM_WORLD);
		at = differs(a, sz, root, k);
		CHECK(at < 0, "bcast: %zu B differ at %ld", sz, at);
		for (size_t i = 0; i < n; i++)
			ia[i] = (int)(i * 3) + rank * 1000 + k;
		MPI_Reduce(ia, ib, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
		for (size_t i = 0; rank == root && i < n; i++) {
			int e = (int)(i * 3) * nranks + 1000 * nranks * (nranks - 1) / 2 +
				k * nranks;

			if (ib[i] != e) {
				CHECK(0, "reduce: %zu B at %zu: %d, expected %d", sz, i, ib[i], e);
				break;
			}
		}
		for (size_t i = 0; i < sz; i++)
			a[i] = pat(i, rank, k);
		MPI_Allgather(a, (int)sz, MPI_BYTE, b, (int)sz, MPI_BYTE, MPI_COMM_WORLD);
		for (int r = 0; r < nranks; r++) {
			at = differs(b + (size_t)r * sz, sz, r, k);
			CHECK(at < 0, "allgather: %zu B from %d differ at %ld", sz, r, at);
		}
		gatherv(sz, root, k + 1, a, b, cnt, dsp);
		for (int r = 0; rank == root && r < nranks; r++)
			for (size_t i = 0; i < sz; i++)
				a[(size_t)r * sz + i] = pat(i, r, k + 2);
		MPI_Scatter(a, (int)sz, MPI_BYTE, b, (int)sz, MPI_BYTE, root, MPI_COMM_WORLD);
		at = differs(b, sz, rank, k + 2);
		CHECK(at < 0, "scatter: %zu B differ at %ld", sz, at);
		reduce_scatter(n, ia, ib, cnt);
	}
	free(a);
	free(b);
	free(ia);
	free(ib);
	free(cnt);
	free(dsp);
}

static void
done(const char *what)
{
	int all = 0;

	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d ranks, %d errors so far\n", what, nranks, all);
}

int
main(int argc, char **argv)
{
	int all = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	part_probe();
	done("probe: MPI_Probe(ANY_SOURCE, ANY_TAG) + MPI_Get_count, 0 B .. 300 KB");
	part_wildcard(10);
	done("wildcard: pre-posted MPI_Irecv(ANY_SOURCE, ANY_TAG), MPI_Isend and MPI_Ssend");
	part_ring();
	done("ring: MPI_Sendrecv_replace 8 B .. 1 MiB");
	part_halo(40);
	done("halo: 2-D, MPI_Type_vector columns, MPI_Isend/MPI_Irecv/MPI_Waitall");
	part_nonblocking(3);
	done("nonblocking: MPI_Iallreduce, MPI_Ibcast, MPI_Ibarrier; MPI_Comm_split");
	part_collectives();
	done("collectives: Bcast, Reduce, Allgather, Gatherv, Scatter, Reduce_scatter");
	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("PASS: %d errors\n", all);
	MPI_Finalize();
	return all != 0;
}
