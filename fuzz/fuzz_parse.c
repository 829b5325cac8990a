/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the stand-alone receive parser, trd_wire_parse() and
 * trd_wire_crc_check(), on arbitrary bytes (no EAL). Besides not crashing:
 *  - the verdict does not depend on where the frame lies in memory (aligned or not);
 *  - an accepted frame holds its payload (and CRC trailer), its header re-encodes to the
 *    same bytes, and the CRC check agrees with a bit-by-bit CRC32C;
 *  - trd_wire_parse_any() (either framing, IPv4/UDP too) agrees with trd_wire_parse() on a
 *    plain frame, and on an encapsulated one puts the header and its payload inside the
 *    datagram;
 *  - toroid-dump's decoder (decode/) gives the parser's verdict, and its text (the line,
 *    -v, --fields), whole or as a truncated capture, reads nothing outside the frame.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toroid/wire.h>

#include "decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t
crc32c_ref(const uint8_t *p, uint32_t n, uint32_t c)
{
	for (uint32_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
	}
	return c;
}

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_parse: %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trd_pkt p, q;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	uint8_t *odd;
	int rc, rc2;

	memset(&p, 0, sizeof(p));
	memset(&q, 0, sizeof(q));
	rc = trd_wire_parse(data, len, &p);
	CHECK(rc >= 0 && rc < TRD_DROP_MAX);
	/* the same bytes one byte off alignment */
	odd = malloc(size + 1);
	CHECK(odd != NULL);
	memcpy(odd + 1, data, size);
	rc2 = trd_wire_parse(odd + 1, len, &q);
	CHECK(rc == rc2);
	if (rc == 0) {
		uint8_t h[TRD_HDR_LEN];
		uint32_t need = TRD_FRAME_HLEN + p.pay_len + ((p.flags & TRD_HF_CRC) ? 4u : 0u);
		int c1, c2;

		CHECK(memcmp(&p, &q, sizeof(p)) == 0);
		CHECK(need <= len);
		CHECK(p.type > 0 && p.type < TRD_PKT_MAX && trd_pkt_type_name(p.type) != NULL);
		/* the header re-encodes to the bytes received (the checksum may take the other
		 * form of ones'-complement zero, so it is only verified) */
		trd_wire_encode(h, &p);
		CHECK(trd_wire_hdr_verify(h) == 0);
		CHECK(memcmp(h, data + TRD_ETH_HLEN, 14) == 0);
		CHECK(memcmp(h + 16, data + TRD_ETH_HLEN + 16, TRD_HDR_LEN - 16) == 0);
		c1 = trd_wire_crc_check(data, len, &p);
		c2 = trd_wire_crc_check(odd + 1, len, &q);
		CHECK(c1 == c2);
		if (p.flags & TRD_HF_CRC) {
			const uint8_t *t = data + TRD_FRAME_HLEN + p.pay_len;
			uint32_t want = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 |
					(uint32_t)t[2] << 8 | t[3];
			uint32_t ref = crc32c_ref(data + TRD_FRAME_HLEN, p.pay_len, 0xffffffff);

			CHECK(c1 == (ref == want ? 0 : TRD_DROP_BAD_CRC));
			CHECK(trd_wire_crc(odd + 1 + TRD_FRAME_HLEN, p.pay_len, 0xffffffff) == ref);
		} else {
			CHECK(c1 == 0);
		}
	}
	{
		struct trd_pkt a;
		uint32_t off = 0;
		int ra = trd_wire_parse_any(data, len, 0, &a, &off);

		CHECK(ra >= 0 && ra < TRD_DROP_MAX);
		if (len >= TRD_ETH_HLEN && data[12] == 0x88 && data[13] == 0xB5) {
			CHECK(ra == rc && off == TRD_ETH_HLEN);
		} else if (ra == 0) {
			/* an encapsulated frame: valid wrapper, header and payload inside it */
			CHECK(off == TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN);
			CHECK(trd_wire_udp_check(data, len, 0) == 0);
			CHECK(off + TRD_HDR_LEN + a.pay_len <= len);
		}
	}
	{
		static struct dec_ctx dec; /* kept from input to input: the VNI grants seen */
		struct dec_frame f = {.data = data, .len = len, .wire_caplen = len};
		int good = rc == 0 && trd_wire_crc_check(data, len, &p) == 0;

		if (dec.out == NULL) {
			dec_init(&dec, fopen("/dev/null", "w"));
			CHECK(dec.out != NULL);
		}
		dec_classify(&dec, &f);
		CHECK(f.cause >= 0 && f.cause < TRD_DROP_MAX);
		if (len >= TRD_ETH_HLEN && data[12] == 0x88 && data[13] == 0xB5) {
			CHECK((f.cls == DEC_GOOD) == good && !f.encap);
			if (good)
				CHECK(f.p.type == p.type && f.p.key == p.key &&
				      f.p.pay_len == p.pay_len && f.p.msg_id == p.msg_id);
		}
		dec_print_line(&dec, &f, 1);
		dec_print_verbose(&dec, &f);
		dec_print_fields(&dec, &f);
		/* as a capture that kept only half the frame (toroid-dump pads the rest) */
		f = (struct dec_frame){.data = data,
				       .len = len,
				       .wire_caplen = len / 2,
				       .truncated = len / 2 < len};
		dec_classify(&dec, &f);
		dec_print_line(&dec, &f, 1);
		dec_print_verbose(&dec, &f);
	}
	free(odd);
	return 0;
}
