/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vni_desc: a program linked with libtoroid_vni alone (no engine, no EAL) builds descriptors
 * with trd_desc_put() and trd_desc_fifo(), as docs/vni.md shows for trd_vni_inject(): they are
 * inline in <toroid/toroid.h>, so it links (it did not when they lived in libtoroid only).
 * Each field is checked, and every byte not set is zero.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);               \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int
main(void)
{
	struct trd_coord c = {.x = 1, .y = 2, .z = 3};
	static const uint8_t buf[16];
	struct trd_desc d, z;

	memset(&d, 0xa5, sizeof(d));
	trd_desc_put(&d, c, buf, 16, 0x1122334455667788ULL, 4096, 7, 1029);
	CHECK(d.op == TRD_OP_PUT && d.dst.x == 1 && d.dst.y == 2 && d.dst.z == 3);
	CHECK(d.src == (uint64_t)(uintptr_t)buf && d.len == 16 && d.rkey == 0x1122334455667788ULL);
	CHECK(d.roff == 4096 && d.inj_ctr == 7 && d.rec_ctr == 1029);
	z = d;
	z.op = 0;
	z.dst = (struct trd_coord){0};
	z.src = z.rkey = z.roff = 0;
	z.len = 0;
	z.inj_ctr = z.rec_ctr = 0;
	CHECK(z.flags == 0 && z.fifo == 0 && z.n_slots == 0 && z.user == 0 && z.src_key == 0);
	CHECK(z.msg_id == 0 && z.aux == 0 && z.ack_fifo == 0);

	memset(&d, 0xa5, sizeof(d));
	trd_desc_fifo(&d, c, 3, buf, 8, 42, 9);
	CHECK(d.op == TRD_OP_FIFO && d.fifo == 3 && d.len == 8 && d.user == 42 && d.inj_ctr == 9);
	CHECK(d.src == (uint64_t)(uintptr_t)buf && d.rkey == 0 && d.roff == 0 && d.rec_ctr == 0);
	CHECK(d.flags == 0 && d.n_slots == 0 && d.msg_id == 0 && d.aux == 0 && d.ack_fifo == 0);
	printf("PASS: vni desc\n");
	return 0;
}
