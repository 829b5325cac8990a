/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile tests of the One API node handle (trd_node_attach(), docs/vni.md "One API"): this
 * process attaches to nodes 0 (a), 1 (b) and 2 (c) of a toroid-node serving a 3x1x1 torus
 * (test_vni_attach.sh) and checks an RDMA read, a put from a registered part, reflection
 * completion in local and delivery mode, the refusals
 * with their exact codes, 200 FIFO messages through a 64-slot ring, trd_mem_alloc() until
 * ENOMEM and back, and the limit of TRD_VNI_MU_MRS sub-registrations.
 *
 *   test_vni_attach SOCKET_TEMPLATE   (%r: the rank)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "attach_util.h"

#define TIMEOUT_US 5000000
#define REGION     (1u << 20)
#define RGET_LEN   (16 * 1024)
#define N_MSGS     200

static uint8_t static_buf[1000];

/* 1. an RDMA read: a's remote get to b's engine FIFO carries a put from b's part to a's */
static void
t_rget(struct trd_node *a, struct trd_node *b)
{
	uint8_t *src = trd_mem_alloc(b, RGET_LEN + 4096), *dst = trd_mem_alloc(a, RGET_LEN + 4096);
	struct trd_mr *mb = NULL, *ma = NULL;
	struct trd_desc put, d;
	uint16_t ctr = 0;

	CHECK(src != NULL && dst != NULL, "trd_mem_alloc");
	if (src == NULL || dst == NULL)
		goto out;
	for (unsigned int i = 0; i < RGET_LEN + 4096; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	/* parts that do not start at the region's first byte: offsets are the part's */
	mb = trd_mr_register(b, src + 4096, RGET_LEN, TRD_ACCESS_REMOTE_READ);
	ma = trd_mr_register(a, dst + 4096, RGET_LEN, TRD_ACCESS_REMOTE_WRITE);
	CHECK(mb != NULL && ma != NULL, "trd_mr_register: %d", rte_errno);
	CHECK(trd_counter_alloc(a, &ctr) == 0 && trd_counter_set(a, ctr, RGET_LEN) == 0,
	      "counter on a");
	if (mb == NULL || ma == NULL || ctr == 0)
		goto out;
	/* the handle's regions are found as a node's (the messaging layer's translation) */
	CHECK(trd_mr_find(a, dst + 4096 + 100, 100, TRD_ACCESS_REMOTE_WRITE) == ma &&
		      trd_mr_remote_addr(ma, dst + 4096 + 100) == 100,
	      "trd_mr_find in the part");
	CHECK(trd_mr_find(a, dst + 4000, 100, TRD_ACCESS_REMOTE_WRITE) == NULL &&
		      trd_mr_find(a, dst + 4096, 100, TRD_ACCESS_REMOTE_READ) == NULL,
	      "trd_mr_find across its start, or for an access it lacks");
	trd_desc_put(&put, trd_node_coord(a), NULL, RGET_LEN, trd_mr_key(ma), 0, 0, ctr);
	put.flags |= TRD_DF_SRC_MR;
	put.src_key = trd_mr_key(mb);
	put.src = 0;
	trd_desc_rget(&d, trd_node_coord(b), TRD_ENGINE_FIFO, &put, 1);
	CHECK(trd_inject(trd_inj_fifo(a, 0), &d) == 0, "inject rget");
	CHECK(trd_counter_wait(a, ctr, TIMEOUT_US) == 0, "rget counter did not reach 0");
	CHECK(memcmp(dst + 4096, src + 4096, RGET_LEN) == 0, "rget bytes differ");
	for (unsigned int i = 0; i < 4096; i++)
		if (dst[i] != 0) {
			CHECK(0, "byte %u before the landing part written", i);
			break;
		}
out:
	if (mb != NULL)
		trd_mr_deregister(mb);
	if (ma != NULL)
		trd_mr_deregister(ma);
	trd_mem_free(b, src);
	trd_mem_free(a, dst);
}

/* 2. a put from a registered part: its key and an offset in it */
static void
t_put_src_mr(struct trd_node *a, struct trd_node *b)
{
	uint8_t *src = trd_mem_alloc(a, 8192), *dst = trd_mem_alloc(b, 8192);
	struct trd_mr *ms = NULL, *md = NULL;
	struct trd_desc d;
	uint16_t ctr = 0;

	CHECK(src != NULL && dst != NULL, "trd_mem_alloc");
	if (src == NULL || dst == NULL)
		goto out;
	for (unsigned int i = 0; i < 8192; i++)
		src[i] = (uint8_t)(i * 3 + 1);
	ms = trd_mr_register(a, src + 1024, 4096, 0);
	md = trd_mr_register(b, dst, 8192, TRD_ACCESS_REMOTE_WRITE);
	CHECK(ms != NULL && md != NULL, "trd_mr_register: %d", rte_errno);
	CHECK(trd_counter_alloc(b, &ctr) == 0 && trd_counter_set(b, ctr, 3000) == 0, "counter");
	if (ms == NULL || md == NULL || ctr == 0)
		goto out;
	/* bytes 100 .. 3099 of the part: src[1124 ..] */
	trd_desc_put(&d, trd_node_coord(b), (void *)(uintptr_t)100, 3000, trd_mr_key(md), 500, 0,
		     ctr);
	d.flags |= TRD_DF_SRC_MR;
	d.src_key = trd_mr_key(ms);
	CHECK(trd_inject(trd_inj_fifo(a, 0), &d) == 0, "inject put");
	CHECK(trd_counter_wait(b, ctr, TIMEOUT_US) == 0, "put counter did not reach 0");
	CHECK(memcmp(dst + 500, src + 1124, 3000) == 0, "put bytes differ");
	/* beyond the part: refused before it leaves */
	d.src = 4096 - 100;
	d.len = 101;
	CHECK(trd_inject(trd_inj_fifo(a, 0), &d) == -EINVAL, "put past the part's end");
	d.src_key = trd_mr_key(ms) + 12345;
	CHECK(trd_inject(trd_inj_fifo(a, 0), &d) == -EINVAL, "put from an unknown key");
out:
	if (ctr != 0)
		trd_counter_free(b, ctr);
	if (ms != NULL)
		trd_mr_deregister(ms);
	if (md != NULL)
		trd_mr_deregister(md);
	trd_mem_free(a, src);
	trd_mem_free(b, dst);
}

/* 3. refusals, each with its exact code */
static void
t_refusals(struct trd_node *a, struct trd_node *b)
{
	uint16_t base = (uint16_t)(trd_vni_counter_id(trd_node_vni(b), 1) - 1);
	const uint16_t bad[] = {0, 65535, base, (uint16_t)(base + TRD_COUNTER_BLOCK)};
	struct trd_desc d;
	uint16_t ca = 0;
	int rc;

	trd_desc_put(&d, trd_node_coord(b), static_buf, sizeof(static_buf), 1, 0, 0, 0);
	rc = trd_inject(trd_inj_fifo(a, 0), &d);
	CHECK(rc == -EFAULT, "put from a static buffer: %d", rc);
	rte_errno = 0;
	CHECK(trd_mr_register(a, static_buf, sizeof(static_buf), TRD_ACCESS_REMOTE_WRITE) == NULL &&
		      rte_errno == EFAULT,
	      "trd_mr_register of a static buffer: rte_errno %d", rte_errno);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = trd_counter_wait(b, bad[i], 1000);
		CHECK(rc == -EINVAL, "trd_counter_wait(%u): %d", bad[i], rc);
		rc = trd_counter_set(b, bad[i], 1);
		CHECK(rc == -EINVAL, "trd_counter_set(%u): %d", bad[i], rc);
		trd_desc_put(&d, trd_node_coord(a), NULL, 8, 1, 0, bad[i], 0);
		d.flags |= TRD_DF_IMM;
		if (bad[i] != 0) {
			rc = trd_inject(trd_inj_fifo(b, 0), &d);
			CHECK(rc == -EINVAL, "inj_ctr %u: %d", bad[i], rc);
		}
	}
	/* a's counter on b's handle, when the two blocks differ */
	if (trd_counter_alloc(a, &ca) == 0) {
		if (ca <= base || ca >= base + TRD_COUNTER_BLOCK) {
			CHECK(trd_counter_wait(b, ca, 1000) == -EINVAL, "a's id on b");
			CHECK(trd_counter_set(b, ca, 1) == -EINVAL, "a's id on b (set)");
		}
		trd_counter_free(a, ca);
	}
	rte_errno = 0;
	CHECK(trd_eq_create(a, -1, 1u << 21) == NULL && rte_errno == EINVAL,
	      "trd_eq_create of 2M events: %d", rte_errno);
	trd_desc_put(&d, trd_node_coord(b), NULL, 8, 1, 0, 0, 0);
	d.flags |= TRD_DF_IMM;
	/* reflection: a doorbell completion with no doorbell region, FIFO 1 is not one of a's,
	 * a is not its own neighbour */
	struct trd_cpl_spec sp = {.kind = TRD_CPL_DOORBELL, .mode = TRD_CPL_LOCAL, .fifo = 0};
	struct trd_coord self = trd_node_coord(a);

	rc = trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp);
	CHECK(rc == -EINVAL, "trd_inject_reflect to no doorbell: %d", rc);
	sp.kind = TRD_CPL_FIFO;
	sp.fifo = 1;
	rc = trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp);
	CHECK(rc == -EINVAL, "trd_inject_reflect to FIFO 1: %d", rc);
	sp.fifo = 0;
	sp.reflector = &self;
	rc = trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp);
	CHECK(rc == -EINVAL, "trd_inject_reflect by itself: %d", rc);
	CHECK(trd_node_set_reflector(a, self) == -EINVAL, "trd_node_set_reflector(self)");
	uint64_t res;
	uint32_t tid;

	rc = trd_track_open(a, 1, 1, &res, &tid); /* (tracked operations: test_vni_attach_msg) */
	CHECK(rc == -EINVAL, "trd_track_open on FIFO 1 of 1: %d", rc);
	CHECK(trd_node_poll(a) == 0, "trd_node_poll");
	rc = trd_lcore_launch(1, &a, 1);
	CHECK(rc == -EINVAL, "trd_lcore_launch: %d", rc);
	CHECK(trd_inj_fifo(a, 1) == NULL && trd_inj_fifo(a, 0) != NULL, "trd_inj_fifo(a, 1)");
}

/* 1b. reflection completion on the handle (trd_inject_reflect(): an ordered remote get whose
 * carried message comes back into a's own FIFO) for a put from a to c: local mode from the
 * neighbour b, delivery mode from the target c with the data in place */
static void
t_reflect(struct trd_node *a, struct trd_node *b, struct trd_node *c)
{
	const uint32_t len = 4096;
	uint8_t *src = trd_mem_alloc(a, len), *dst = trd_mem_alloc(c, len);
	struct trd_mr *mr =
		dst != NULL ? trd_mr_register(c, dst, len, TRD_ACCESS_REMOTE_WRITE) : NULL;
	struct trd_coord nb = trd_node_coord(b), nc = trd_node_coord(c), r;
	struct trd_msg *m;
	struct trd_desc d;

	CHECK(src != NULL && mr != NULL, "reflect: memory");
	if (src == NULL || mr == NULL)
		goto out;
	CHECK(trd_node_reflector(a, &r) == 0 && r.x == nb.x && r.y == nb.y && r.z == nb.z,
	      "a's reflector is b");
	CHECK(trd_node_set_reflector(a, nb) == 0, "trd_node_set_reflector(b)");
	for (unsigned int mode = TRD_CPL_LOCAL; mode <= TRD_CPL_DELIVERY; mode++) {
		struct trd_cpl_spec sp = {.kind = TRD_CPL_FIFO,
					  .mode = (enum trd_cpl_mode)mode,
					  .fifo = 0,
					  .cookie = 0xAB00 + mode};

		struct trd_coord from = mode == TRD_CPL_LOCAL ? nb : nc;

		memset(src, (int)(0x30 + mode), len);
		trd_desc_put(&d, nc, src, len, trd_mr_key(mr), 0, 0, 0);
		CHECK(trd_inject_reflect(trd_inj_fifo(a, 0), &d, &sp) == 0, "reflect mode %u",
		      mode);
		if (trd_rec_fifo_wait(trd_rec_fifo(a, 0), &m, TIMEOUT_US) != 0) {
			CHECK(0, "no completion in mode %u", mode);
			continue;
		}
		CHECK(m->len == 0 && m->user == sp.cookie && m->status == 0 && m->src.x == from.x &&
			      m->src.y == from.y && m->src.z == from.z,
		      "completion of mode %u: len %u user %#llx from %u", mode, m->len,
		      (unsigned long long)m->user, m->src.x);
		if (mode == TRD_CPL_DELIVERY)
			CHECK(memcmp(dst, src, len) == 0, "delivery: the data is in place");
		trd_msg_free(m);
	}
out:
	if (mr != NULL)
		trd_mr_deregister(mr);
	trd_mem_free(a, src);
	trd_mem_free(c, dst);
}

/* 3. (last of it) the block gives exactly 511 ids */
static void
t_counter_block(struct trd_node *n)
{
	uint16_t id, ids[TRD_COUNTER_BLOCK];
	unsigned int got = 0;
	int rc;

	while ((rc = trd_counter_alloc(n, &id)) == 0 && got < TRD_COUNTER_BLOCK)
		ids[got++] = id;
	CHECK(got == TRD_COUNTER_BLOCK - 1 && rc == -ENOSPC, "counter ids: %u, then %d", got, rc);
	for (unsigned int i = 0; i < got; i++)
		trd_counter_free(n, ids[i]);
}

static uint32_t
msg_len(unsigned int i, unsigned int group)
{
	uint32_t max = group > 1 ? 600 : 2000; /* a held group fits the 64-slot ring */

	return 8 + (i * 397u) % (max - 7);
}

/* 4. 200 messages a->b, taken singly and in held groups of up to 4 */
static void
t_messages(struct trd_node *a, struct trd_node *b)
{
	struct trd_rec_fifo *rf = trd_rec_fifo(b, 0);
	uint8_t *buf = trd_mem_alloc(a, 4 * 2048);
	unsigned int sent = 0, got = 0;

	CHECK(rf != NULL && buf != NULL && trd_rec_fifo(b, 1) == NULL, "rec fifo / buffer");
	if (rf == NULL || buf == NULL)
		goto out;
	while (sent < N_MSGS) {
		unsigned int g = 1 + (sent / 5) % 4, k;
		struct trd_msg *held[4];

		if (g > N_MSGS - sent)
			g = N_MSGS - sent;
		for (k = 0; k < g; k++) {
			unsigned int i = sent + k;
			uint8_t *p = buf + k * 2048;
			uint32_t len = msg_len(i, g);
			struct trd_desc d;

			for (uint32_t j = 0; j < len; j++)
				p[j] = (uint8_t)(i * 31 + j);
			trd_desc_fifo(&d, trd_node_coord(b), trd_rec_fifo_id(rf), p, len, i, 0);
			CHECK(trd_inject(trd_inj_fifo(a, 0), &d) == 0, "inject msg %u", i);
		}
		for (k = 0; k < g; k++) {
			int rc = trd_rec_fifo_wait(rf, &held[k], TIMEOUT_US);

			CHECK(rc == 0, "msg %u: %d", sent + k, rc);
			if (rc != 0)
				goto out;
			struct trd_msg *m = held[k];
			unsigned int i = (unsigned int)m->user;
			uint32_t len = msg_len(i, g);
			int ok = i == got && m->len == len;

			for (uint32_t j = 0; ok && j < len; j++)
				ok = ((uint8_t *)m->data)[j] == (uint8_t)(i * 31 + j);
			CHECK(ok, "msg %u (user %u, len %u): not the one expected", got, i, m->len);
			got++;
		}
		/* held: every one still readable, then freed, last first for some */
		for (k = 0; k < g; k++)
			CHECK(held[k]->user == sent + k, "held msg %u changed", sent + k);
		for (k = 0; k < g; k++)
			trd_msg_free(held[(sent & 1) ? g - 1 - k : k]);
		sent += g;
	}
	{
		struct trd_msg *m[4];

		CHECK(trd_rec_fifo_poll(rf, m, 4) == 0, "a message more than sent");
	}
out:
	CHECK(got == N_MSGS, "received %u of %u", got, N_MSGS);
	trd_mem_free(a, buf);
}

/* 5. trd_mem_alloc() until NULL, free, again as many */
static void
t_mem(struct trd_node *n)
{
	enum { BLK = 60000, MAXB = 64 };
	void *p[MAXB];
	unsigned int n1 = 0, n2 = 0;

	while (n1 < MAXB && (p[n1] = trd_mem_alloc(n, BLK)) != NULL)
		n1++;
	CHECK(n1 > 0 && n1 < MAXB && rte_errno == ENOMEM, "alloc: %u blocks, rte_errno %d", n1,
	      rte_errno);
	for (unsigned int i = 0; i < n1; i++)
		trd_mem_free(n, p[i]);
	while (n2 < MAXB && (p[n2] = trd_mem_alloc(n, BLK)) != NULL)
		n2++;
	CHECK(n2 == n1, "after free: %u blocks, before %u", n2, n1);
	for (unsigned int i = 0; i < n2; i++)
		trd_mem_free(n, p[i]);
	rte_errno = 0;
	CHECK(trd_mem_alloc(n, REGION + 1) == NULL && rte_errno == ENOMEM, "alloc > region");
}

/* 6. TRD_VNI_MU_MRS sub-registrations, not one more; one freed makes room */
static void
t_mrs(struct trd_node *n)
{
	uint8_t *p = trd_mem_alloc(n, (TRD_VNI_MU_MRS + 2) * 256);
	struct trd_mr *mr[TRD_VNI_MU_MRS];
	unsigned int got = 0;

	CHECK(p != NULL, "alloc");
	if (p == NULL)
		return;
	for (unsigned int i = 0; i < TRD_VNI_MU_MRS; i++) {
		mr[i] = trd_mr_register(n, p + i * 256, 256, TRD_ACCESS_REMOTE_WRITE);
		got += mr[i] != NULL;
	}
	CHECK(got == TRD_VNI_MU_MRS, "%u of %u registrations", got, TRD_VNI_MU_MRS);
	rte_errno = 0;
	struct trd_mr *x =
		trd_mr_register(n, p + TRD_VNI_MU_MRS * 256, 256, TRD_ACCESS_REMOTE_WRITE);
	CHECK(x == NULL && rte_errno == ENOSPC, "33rd: %p, rte_errno %d", (void *)x, rte_errno);
	if (x != NULL)
		trd_mr_deregister(x);
	if (mr[5] != NULL)
		trd_mr_deregister(mr[5]);
	mr[5] = trd_mr_register(n, p + TRD_VNI_MU_MRS * 256, 256, TRD_ACCESS_REMOTE_WRITE);
	CHECK(mr[5] != NULL, "after a deregistration: rte_errno %d", rte_errno);
	for (unsigned int i = 0; i < TRD_VNI_MU_MRS; i++)
		if (mr[i] != NULL)
			trd_mr_deregister(mr[i]);
	trd_mem_free(n, p);
}

int
main(int argc, char **argv)
{
	struct trd_node *a, *b, *c;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET_TEMPLATE\n", argv[0]);
		return 2;
	}
	a = attach_node(argv[1], 0, 1, 64, REGION);
	b = a != NULL ? attach_node(argv[1], 1, 1, 64, REGION) : NULL;
	c = b != NULL ? attach_node(argv[1], 2, 1, 64, REGION) : NULL;
	if (a == NULL || b == NULL || c == NULL)
		return 1;
	t_rget(a, b);
	t_put_src_mr(a, b);
	t_reflect(a, b, c);
	t_refusals(a, b);
	t_messages(a, b);
	t_mem(a);
	t_mrs(b);
	t_counter_block(b);
	trd_node_free(c);
	trd_node_free(b);
	trd_node_free(a);
	if (failures != 0) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("vni_attach: all checks passed\n");
	return 0;
}
