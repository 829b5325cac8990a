/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame decoder (decode.h) on frames built with the wire codec: its verdict for a good
 * put, a spoilt checksum, another EtherType and a short frame, and the exact text it prints
 * for each; a VNI CTS and then a put into the grant it names (the decoder ties the put to the
 * message); the --fields columns; the verbose decode of an engine collective's piece and abort.
 * No EAL, no capture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toroid/vni_wire.h>
#include <toroid/wire.h>

#include "decode.h"

static int failed;

#define T_ASSERT(c, ...)                                                                           \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);               \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

/* A plain torus frame of @p p's header and @p pay_len payload bytes of @p pay. */
static uint32_t
mkframe(uint8_t *f, struct trd_pkt *p, const void *pay, uint16_t pay_len)
{
	memset(f, 0, TRD_FRAME_HLEN + pay_len);
	memcpy(f, "\x02\x54\x00\x00\x00\x02\x02\x54\x00\x00\x00\x01", 12);
	f[12] = TRD_ETHERTYPE >> 8;
	f[13] = TRD_ETHERTYPE & 0xff;
	p->pay_len = pay_len;
	trd_wire_encode(f + TRD_ETH_HLEN, p);
	if (pay_len != 0)
		memcpy(f + TRD_FRAME_HLEN, pay, pay_len);
	return TRD_FRAME_HLEN + pay_len;
}

/* What the decoder prints for @p len bytes at @p data (the --fields columns if @p fields)
 * into @p out, and the class it gives them in @p cls. */
static void
decode_text(struct dec_ctx *d, const uint8_t *data, uint32_t len, int fields, char *out, size_t n,
	    enum dec_class *cls)
{
	struct dec_frame f = {.data = data, .len = len, .wire_caplen = len};
	char *buf = NULL;
	size_t blen = 0;

	d->out = open_memstream(&buf, &blen);
	T_ASSERT(d->out != NULL, "open_memstream");
	if (d->out == NULL)
		exit(1);
	dec_classify(d, &f);
	*cls = f.cls;
	if (fields)
		dec_print_fields(d, &f);
	else
		dec_print_line(d, &f, 0);
	fclose(d->out);
	d->out = NULL;
	snprintf(out, n, "%s", buf);
	free(buf);
}

static void
expect(struct dec_ctx *d, const uint8_t *data, uint32_t len, int fields, enum dec_class want,
       const char *text)
{
	char got[1024];
	enum dec_class cls;

	decode_text(d, data, len, fields, got, sizeof(got), &cls);
	T_ASSERT(cls == want, "class %d, want %d (%s)", cls, want, got);
	T_ASSERT(strcmp(got, text) == 0, "\n got  '%s'\n want '%s'", got, text);
}

/* The verbose decode of a good frame contains @p text. */
static void
verbose_has(struct dec_ctx *d, const uint8_t *data, uint32_t len, const char *text)
{
	struct dec_frame f = {.data = data, .len = len, .wire_caplen = len};
	char *buf = NULL;
	size_t blen = 0;

	d->out = open_memstream(&buf, &blen);
	if (d->out == NULL)
		exit(1);
	dec_classify(d, &f);
	T_ASSERT(f.cls == DEC_GOOD, "class %d (%s)", f.cls, trd_drop_name((unsigned int)f.cause));
	dec_print_verbose(d, &f);
	fclose(d->out);
	d->out = NULL;
	T_ASSERT(buf != NULL && strstr(buf, text) != NULL, "\n got  '%s'\n want '%s' in it", buf,
		 text);
	free(buf);
}

int
main(void)
{
	static uint8_t f[2048];
	static const uint8_t pay[8] = "abcdefg";
	struct trd_pkt p = {.version = TRD_WIRE_VERSION,
			    .type = TRD_PKT_PUT,
			    .flags = TRD_HF_FIRST | TRD_HF_LAST,
			    .src = {1, 0, 0},
			    .dst = {2, 0, 0},
			    .hops = 1,
			    .key = 0x1234,
			    .offset = 64,
			    .msg_len = 8,
			    .msg_id = 5};
	struct dec_ctx d;
	uint32_t len;

	dec_init(&d, NULL);
	T_ASSERT(d.udp_port == TRD_UDP_PORT, "default UDP port %u", d.udp_port);

	len = mkframe(f, &p, pay, sizeof(pay));
	expect(&d, f, len, 0, DEC_GOOD,
	       "1,0,0 > 2,0,0: put [FL] fifo 0 ctr 0 key 0x1234 off 64 len 8/8 msg 5 seq 0 ack 0 "
	       "hops 1");
	{
		/* the csum column is the frame's bytes 28..29 */
		char want[256];

		snprintf(want, sizeof(want),
			 "78\t78\tok\t1\t1\tput\t3\t1\t0\t0\t1\t2\t0\t0\t0\t0\t%u\t4660\t64\t8\t8"
			 "\t0\t5\t0\t0\t0\n",
			 (unsigned int)(f[TRD_ETH_HLEN + 14] << 8 | f[TRD_ETH_HLEN + 15]));
		expect(&d, f, len, 1, DEC_GOOD, want);
	}

	f[TRD_ETH_HLEN + 14] ^= 0xff; /* the checksum */
	expect(&d, f, len, 0, DEC_BAD_HDR,
	       "malformed (bad_checksum): 1,0,0 > 2,0,0: put [FL] fifo 0 ctr 0 key 0x1234 off 64 "
	       "len 8/8 msg 5 seq 0 ack 0 hops 1");

	f[12] = 0x08;
	f[13] = 0x06;
	expect(&d, f, 60, 0, DEC_NOT_TORUS, "not torus: ethertype 0x0806 (ARP), length 60");
	expect(&d, f, 60, 1, DEC_NOT_TORUS,
	       "60\t60\tnot_torus\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-"
	       "\t-\t-\n");

	f[12] = TRD_ETHERTYPE >> 8;
	f[13] = TRD_ETHERTYPE & 0xff;
	expect(&d, f, 30, 0, DEC_BAD_SHORT, "malformed (short_frame): 30-byte frame");

	/* a VNI CTS from 2,0,0 to 1,0,0 granting 100 bytes at key 0x77 offset 4096, then the
	 * sender's put of 8 of them at offset 4096 + 16: the decoder names the message */
	{
		struct trd_vw_hdr h = {.type = TRD_VW_CTS,
				       .src_app = 1,
				       .src_proc = 2,
				       .dst_app = 3,
				       .dst_proc = 4,
				       .msg_id = 9,
				       .grant_id = 11,
				       .len = 100,
				       .rkey = 0x77,
				       .roff = 4096};
		uint8_t vw[TRD_VW_HDR_LEN];
		struct trd_pkt c = {.version = TRD_WIRE_VERSION,
				    .type = TRD_PKT_FIFO,
				    .flags = TRD_HF_FIRST | TRD_HF_LAST,
				    .src = {2, 0, 0},
				    .dst = {1, 0, 0},
				    .hops = 1,
				    .key = TRD_VW_USER(TRD_VW_CTS),
				    .msg_len = TRD_VW_HDR_LEN,
				    .msg_id = 6};

		trd_vw_encode(vw, &h);
		len = mkframe(f, &c, vw, sizeof(vw));
		expect(&d, f, len, 0, DEC_GOOD,
		       "2,0,0 > 1,0,0: fifo [FL] fifo 0 ctr 0 key 0x564e493100000003 off 0 len "
		       "64/64 msg 6 seq 0 ack 0 hops 1 | vni cts 1:2 > 3:4 msg 9 grant 11 len 100 "
		       "into key 0x77 off 4096");
		p.key = 0x77;
		p.offset = 4096 + 16;
		p.msg_len = 100;
		len = mkframe(f, &p, pay, sizeof(pay));
		expect(&d, f, len, 0, DEC_GOOD,
		       "1,0,0 > 2,0,0: put [FL] fifo 0 ctr 0 key 0x77 off 4112 len 8/100 msg 5 seq 0 "
		       "ack 0 hops 1 | vni data msg 9 grant 11 at 16");
		/* a decoder that has not seen the grant cannot tie it */
		dec_init(&d, NULL);
		expect(&d, f, len, 0, DEC_GOOD,
		       "1,0,0 > 2,0,0: put [FL] fifo 0 ctr 0 key 0x77 off 4112 len 8/100 msg 5 seq 0 "
		       "ack 0 hops 1");
	}
	/* an ordered RTS (docs/vni.md, "Ordered interfaces"): its stream, number and the
	 * distance back to its sender's oldest open message */
	{
		struct trd_vw_hdr h = {.type = TRD_VW_RTS,
				       .flags = TRD_VW_F_ORDERED,
				       .status = 3,
				       .src_app = 1,
				       .src_proc = 2,
				       .dst_app = 3,
				       .dst_proc = 4,
				       .msg_id = 9,
				       .len = 5000,
				       .tag = 0x42,
				       .roff = TRD_VW_ORD(77, 1000)};
		uint8_t vw[TRD_VW_HDR_LEN];
		struct trd_pkt c = {.version = TRD_WIRE_VERSION,
				    .type = TRD_PKT_FIFO,
				    .flags = TRD_HF_FIRST | TRD_HF_LAST,
				    .src = {2, 0, 0},
				    .dst = {1, 0, 0},
				    .hops = 1,
				    .key = TRD_VW_USER(TRD_VW_RTS),
				    .msg_len = TRD_VW_HDR_LEN,
				    .msg_id = 7};

		trd_vw_encode(vw, &h);
		len = mkframe(f, &c, vw, sizeof(vw));
		expect(&d, f, len, 0, DEC_GOOD,
		       "2,0,0 > 1,0,0: fifo [FL] fifo 0 ctr 0 key 0x564e493100000002 off 0 len "
		       "64/64 msg 7 seq 0 ack 0 hops 1 | vni rts 1:2 > 3:4 msg 9 tag 0x42 len 5000 "
		       "ordered stream 77 seq 1000 open 3");
	}
	/* an engine collective's second piece, and an abort: the verbose decode names them */
	{
		static uint8_t z[TRD_COMB_PIECE];
		struct trd_pkt c = {.version = TRD_WIRE_VERSION,
				    .type = TRD_PKT_COMB,
				    .flags = TRD_HF_ALL,
				    .src = {1, 0, 0},
				    .dst = {0, 0, 0},
				    .hops = 3,
				    .fifo = TRD_COMB_UP,
				    .counter = trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, 7,
							     TRD_COMB_DOUBLE),
				    .key = 5,
				    .offset = TRD_COMB_PIECE,
				    .msg_len = 2 * TRD_COMB_PIECE,
				    .aux = 3};

		len = mkframe(f, &c, z, TRD_COMB_PIECE);
		verbose_has(
			&d, f, len,
			"\tcomb up allreduce sum double group xyz #5 root rank 3 piece 1 of 2\n");
		c.fifo = TRD_COMB_ABORT, c.offset = 0;
		len = mkframe(f, &c, NULL, 0);
		verbose_has(&d, f, len,
			    "\tcomb abort allreduce sum double group xyz #5 root rank 3 piece 0 of "
			    "2\n");
	}
	if (failed)
		return 1;
	printf("decode: every verdict and line as expected\n");
	return 0;
}
