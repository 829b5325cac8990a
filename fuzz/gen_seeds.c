/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seed corpora for the fuzzers, made at test time: valid packets of every type (put, fifo,
 * rget, ack with SACK, done, atomic, atomic_reply, bundle, comb), sequenced and not, with and
 * without the payload CRC, single and multi-packet, contiguous and in segments, addressed with the
 * keys and session epochs of the fuzzed node (fuzz_node.c); a sequenced seed starts its peer's
 * session by answering the node's challenge with the cookie of the node's known secret, and
 * its frames carry the token that echo told (flag PROOF); acks of the node's session carry
 * the node's token, which follows from the same secret.
 *
 *   gen_seeds DIR    writes DIR/parse/<name>-<i> (one raw frame each) and DIR/rx/<name>
 *                    (the frames of a seed, as fuzz_rx reads them), then replays every rx seed
 *                    into the node and prints what it did; a seed meant to be all valid that
 *                    causes a drop fails the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_byteorder.h>
#include <rte_eal.h>

#include <toroid/testing.h>

#include "fuzz_node.h"

static struct fz z;
static const char *outdir;
static uint16_t epoch_e; /* the node's session towards (1,0,0) after a reset */
static uint32_t isn_e;   /* and its first sequence number */
static unsigned int n_seeds, n_frames, n_bad;

static struct {
	char name[48];
	uint8_t buf[1 << 16];
	uint32_t len;
	unsigned int frames;
	bool clean;
} s;

static void
write_file(const char *sub, const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gen_seeds: cannot write %s\n", path);
		exit(1);
	}
}

static void
seed_begin(const char *name, bool clean)
{
	snprintf(s.name, sizeof(s.name), "%s", name);
	s.len = 0;
	s.frames = 0;
	s.clean = clean;
}

static struct trd_pkt
pkt(uint8_t type)
{
	struct trd_pkt p;

	memset(&p, 0, sizeof(p));
	p.version = TRD_WIRE_VERSION;
	p.type = type;
	p.flags = TRD_HF_ALL;
	p.src[0] = 1; /* from (1,0,0) */
	p.hops = 3;
	return p; /* to (0,0,0) */
}

/* The token of the peer's session @p epoch (the peer's choice, told in its echo). */
static inline uint64_t
peer_token(uint16_t epoch)
{
	return 0xa11ce5e55100e000ULL ^ epoch;
}

/* Append one frame of @p p (pay_len = @p n) with payload @p pay, @p pad bytes of padding.
 * A sequenced frame or an echo carries the peer's token; an ack of the node's session, the
 * node's. */
static void
frame_pad(struct trd_pkt p, const void *pay, uint16_t n, uint8_t seg, unsigned int pad)
{
	uint8_t f[TRD_FRAME_HLEN + 65535 + 4 + TRD_PROOF_LEN + 64];
	uint32_t len = TRD_FRAME_HLEN + n;
	uint64_t token = 0;
	char name[64];

	if (p.seq != 0 || (p.flags & TRD_HF_ECHO)) {
		p.flags |= TRD_HF_PROOF;
		token = peer_token(p.epoch);
		if (p.flags & TRD_HF_ECHO)
			p.msg_id = trd_wire_token_check(token); /* the echo's check of it */
	} else if (p.type == TRD_PKT_ACK && p.ack != 0 && p.offset == epoch_e) {
		p.flags |= TRD_HF_PROOF;
		token = trd_session_token(FZ_SK0, FZ_SK1, FZ_PEER_RANK, epoch_e);
	}

	memset(f, 0, 6);
	f[0] = 0x02;
	f[6] = 0x02;
	f[7] = 0x01;
	f[12] = TRD_ETHERTYPE >> 8;
	f[13] = TRD_ETHERTYPE & 0xff;
	p.pay_len = n;
	trd_wire_encode(f + TRD_ETH_HLEN, &p);
	if (n != 0)
		memcpy(f + TRD_FRAME_HLEN, pay, n);
	if (p.flags & TRD_HF_CRC) {
		uint32_t c = trd_wire_crc(f + TRD_FRAME_HLEN, n, 0xffffffff);

		f[len++] = (uint8_t)(c >> 24);
		f[len++] = (uint8_t)(c >> 16);
		f[len++] = (uint8_t)(c >> 8);
		f[len++] = (uint8_t)c;
	}
	if (p.flags & TRD_HF_PROOF)
		for (int b = 56; b >= 0; b -= 8)
			f[len++] = (uint8_t)(token >> b);
	memset(f + len, 0, pad);
	len += pad;
	if (s.len + 3 + len > sizeof(s.buf)) {
		fprintf(stderr, "gen_seeds: seed %s too long\n", s.name);
		exit(1);
	}
	s.buf[s.len++] = (uint8_t)(len >> 8);
	s.buf[s.len++] = (uint8_t)len;
	s.buf[s.len++] = seg;
	memcpy(s.buf + s.len, f, len);
	s.len += len;
	snprintf(name, sizeof(name), "%s-%u", s.name, s.frames++);
	write_file("parse", name, f, len);
	n_frames++;
}

static void
frame(struct trd_pkt p, const void *pay, uint16_t n)
{
	frame_pad(p, pay, n, 0, 0);
}

/* The peer (1,0,0) acknowledges the node's session (replies wait for that) and answers the
 * node's challenge for its own session @p epoch, starting at sequence number 1 (its
 * @p gen-th session in this seed). */
static void
session(uint16_t epoch, uint32_t gen)
{
	struct trd_pkt p = pkt(TRD_PKT_ACK);

	p.flags |= TRD_HF_ECHO;
	p.ack = isn_e, p.offset = epoch_e;
	p.epoch = epoch, p.aux = 1, p.key = fz_cookie(FZ_PEER_RANK, gen);
	frame(p, NULL, 0);
}

/* Replay the seed into the node, as fuzz_rx does, and say what happened. */
static void
seed_end(void)
{
	struct trd_node_stats a, b;
	const uint8_t *d = s.buf;
	uint32_t left = s.len;
	uint64_t drops = 0;
	char line[512];
	int o = 0;

	write_file("rx", s.name, s.buf, s.len);
	n_seeds++;
	trd_node_stats_get(z.n, &a);
	while (left >= 3) {
		uint32_t len = (uint32_t)d[0] << 8 | d[1], seg = d[2];

		fz_deliver(&z, d + 3, len, seg);
		d += 3 + len;
		left -= 3 + len;
	}
	fz_finish(&z);
	trd_node_stats_get(z.n, &b);
	o += snprintf(line + o, sizeof(line) - (size_t)o, "%-18s %2u frames:", s.name, s.frames);
	static const unsigned int show[] = {
		TRD_STAT_RX_PUT,    TRD_STAT_MSGS_DELIVERED, TRD_STAT_RX_RGET,  TRD_STAT_ATOMICS,
		TRD_STAT_RX_ACKS,   TRD_STAT_TX_CTL,         TRD_STAT_FWD_PKTS, TRD_STAT_RETRANS,
		TRD_STAT_REORDERED, TRD_STAT_TX_PKTS};
	for (unsigned int i = 0; i < RTE_DIM(show); i++)
		if (b.stat[show[i]] != a.stat[show[i]])
			o += snprintf(line + o, sizeof(line) - (size_t)o, " %s=%" PRIu64,
				      trd_stat_name(show[i]), b.stat[show[i]] - a.stat[show[i]]);
	for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
		if (b.drop[c] != a.drop[c]) {
			drops += b.drop[c] - a.drop[c];
			o += snprintf(line + o, sizeof(line) - (size_t)o, " drop:%s=%" PRIu64,
				      trd_drop_name(c), b.drop[c] - a.drop[c]);
		}
	printf("%s\n", line);
	if (s.clean && drops != 0) {
		fprintf(stderr, "gen_seeds: seed %s was meant to be valid\n", s.name);
		n_bad++;
	}
}

static void
mkdirs(void)
{
	char p[512];

	mkdir(outdir, 0755);
	snprintf(p, sizeof(p), "%s/parse", outdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/rx", outdir);
	mkdir(p, 0755);
}

/* The payload bytes every seed draws from. */
static uint8_t pay[4096];

/* Puts: whole, in segments, with CRC, padded, sequenced, forwarded. */
static void
seeds_put(void)
{
	uint64_t rw = trd_mr_key(z.rw);
	uint64_t db = trd_mr_key(z.db);
	struct trd_pkt p;

	seed_begin("put", true);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.counter = z.ctr[0], p.msg_len = 100, p.msg_id = 1;
	frame(p, pay, 100);
	seed_end();

	seed_begin("put_multi", true);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.counter = z.ctr[1], p.msg_len = 3000, p.msg_id = 2;
	p.flags = TRD_HF_FIRST, p.offset = 0, frame(p, pay, 1400);
	p.flags = 0, p.offset = 1400, frame(p, pay + 1400, 1400);
	p.flags = TRD_HF_LAST, p.offset = 2800, frame(p, pay + 2800, 200);
	seed_end();

	seed_begin("put_crc_end", true);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.flags |= TRD_HF_CRC, p.msg_len = 16;
	p.offset = FZ_RW_LEN - 16, frame(p, pay, 16);
	p.offset = 0, p.msg_len = 0, frame(p, NULL, 0);
	seed_end();

	seed_begin("put_segments", true);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.flags |= TRD_HF_CRC, p.msg_len = 1000, p.offset = 8;
	frame_pad(p, pay, 1000, 7, 0);
	frame_pad(p, pay, 1000, 1, 0);
	frame_pad(p, pay, 1000, 69, 0);
	seed_end();

	seed_begin("put_padded", true);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.msg_len = 4, p.offset = 100;
	frame_pad(p, pay, 4, 0, 20);
	seed_end();

	seed_begin("put_seq", true);
	session(7, 0);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.msg_len = 64, p.epoch = 7;
	for (uint32_t q = 1; q <= 3; q++)
		p.seq = q, p.offset = 64 * q, frame(p, pay, 64);
	seed_end();

	seed_begin("put_seq_ooo", false);
	session(9, 0);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.msg_len = 32, p.epoch = 9, p.flags |= TRD_HF_CRC;
	static const uint32_t order[] = {1, 3, 2, 2, 5, 4, 20, 1};
	for (unsigned int i = 0; i < RTE_DIM(order); i++)
		p.seq = order[i], p.offset = 32 * order[i], frame(p, pay, 32);
	seed_end();

	seed_begin("put_ackreq", false);
	session(3, 0);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.flags |= TRD_HF_ACKREQ, p.aux = 9, p.msg_len = 8;
	p.epoch = 3, p.seq = 1, frame(p, pay, 8);
	p.key = rw ^ 0x10000, p.seq = 2, p.aux = 10, frame(p, pay, 8); /* refused: a DONE says so */
	seed_end();

	seed_begin("put_doorbell", true);
	p = pkt(TRD_PKT_PUT), p.key = db, p.msg_len = 8, p.offset = 64, frame(p, pay, 8);
	seed_end();

	seed_begin("forward", true);
	p = pkt(TRD_PKT_PUT), p.key = 0x1234, p.msg_len = 40, p.dst[0] = 1, p.dst[1] = 1;
	frame(p, pay, 40);
	p.src[0] = 0, p.src[1] = 1, p.dst[1] = 0, p.epoch = 5, p.seq = 1, frame(p, pay, 40);
	seed_end();
}

/* Memory-FIFO messages: short, multi-packet, out of order, acknowledged, overflowing. */
static void
seeds_fifo(void)
{
	uint64_t rw = trd_mr_key(z.rw);
	struct trd_pkt p;

	seed_begin("fifo", true);
	p = pkt(TRD_PKT_FIFO), p.key = 77, p.msg_len = 33, p.msg_id = 3, frame(p, pay, 33);
	p.fifo = 3, p.counter = z.ctr[2], p.msg_len = 0, p.msg_id = 4, frame(p, NULL, 0);
	seed_end();

	seed_begin("fifo_eq_crc", true);
	session(12, 0);
	p = pkt(TRD_PKT_FIFO), p.fifo = 1, p.key = 78, p.msg_len = 200, p.flags |= TRD_HF_CRC;
	p.epoch = 12, p.seq = 1, frame_pad(p, pay, 200, 50, 0);
	seed_end();

	seed_begin("fifo_multi", true);
	p = pkt(TRD_PKT_FIFO), p.key = 79, p.msg_len = 2000, p.msg_id = 5;
	p.flags = TRD_HF_FIRST, frame(p, pay, 1400);
	p.flags = TRD_HF_LAST, p.offset = 1400, frame(p, pay + 1400, 600);
	seed_end();

	seed_begin("fifo_multi_seq", true);
	session(11, 0);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.msg_len = 8, p.epoch = 11, p.seq = 1, frame(p, pay, 8);
	p = pkt(TRD_PKT_FIFO), p.fifo = 2, p.key = 80, p.msg_len = 1500, p.msg_id = 6, p.epoch = 11;
	p.flags = TRD_HF_LAST | TRD_HF_CRC, p.offset = 1000, p.seq = 3, frame(p, pay + 1000, 500);
	p.flags = TRD_HF_FIRST | TRD_HF_CRC, p.offset = 0, p.seq = 2, frame(p, pay, 1000);
	seed_end();

	seed_begin("fifo_ackreq", true);
	session(13, 0);
	p = pkt(TRD_PKT_FIFO), p.fifo = 2, p.key = 81, p.msg_len = 16, p.flags |= TRD_HF_ACKREQ;
	p.aux = 4, p.epoch = 13, p.seq = 1, frame(p, pay, 16);
	seed_end();

	seed_begin("fifo_full", false);
	p = pkt(TRD_PKT_FIFO), p.fifo = 0, p.msg_len = 8;
	for (unsigned int i = 0; i < FZ_CONF_REC_SIZE + 1; i++)
		p.msg_id = 100 + i, frame(p, pay, 8);
	seed_end();
}

/* Remote gets (descriptors in the payload), and the acknowledgements that follow. */
static void
seeds_rget(void)
{
	uint64_t rw = trd_mr_key(z.rw);
	uint64_t ro = trd_mr_key(z.ro);
	struct trd_coord peer = {1, 0, 0};
	struct trd_pkt p;

	{
		struct trd_desc d[3];

		seed_begin("rget", true);
		trd_desc_put(&d[0], peer, NULL, 64, 0x1234, 0, 0, 0);
		d[0].flags = TRD_DF_SRC_MR, d[0].src_key = ro, d[0].src = 0;
		p = pkt(TRD_PKT_RGET), p.fifo = TRD_ENGINE_FIFO, p.msg_len = 64, frame(p, d, 64);
		seed_end();

		seed_begin("rget_multi", true);
		trd_desc_put(&d[0], peer, NULL, 8, 0x1234, 0, 0, 0);
		d[0].flags = TRD_DF_IMM, d[0].user = 0x0102030405060708ULL;
		trd_desc_fifo(&d[1], peer, 1, NULL, 2000, 55, 0);
		d[1].flags = TRD_DF_SRC_MR, d[1].src_key = rw, d[1].src = 128;
		trd_desc_put(&d[2], peer, NULL, 300, 0x1234, 64, 0, 0);
		d[2].flags = TRD_DF_SRC_MR | TRD_DF_ACKREQ, d[2].src_key = ro, d[2].aux = 12;
		session(21, 0);
		p = pkt(TRD_PKT_RGET), p.fifo = 0, p.msg_len = 192, p.flags |= TRD_HF_ACKREQ;
		p.aux = 6, p.epoch = 21, p.seq = 1, frame(p, d, 192);
		seed_end();

		/* the node sends three sequenced puts back; the peer acks them selectively,
		 * then all, then probes */
		seed_begin("rget_ack_sack", true);
		for (unsigned int i = 0; i < 3; i++) {
			trd_desc_put(&d[i], peer, NULL, 32, 0x1234, 32 * i, 0, 0);
			d[i].flags = TRD_DF_SRC_MR, d[i].src_key = ro, d[i].src = 32 * i;
		}
		session(22, 0);
		p = pkt(TRD_PKT_RGET), p.fifo = TRD_ENGINE_FIFO, p.msg_len = 192, p.epoch = 22,
		p.seq = 1;
		frame(p, d, 192);
		{
			uint8_t sack[TRD_SACK_BYTES] = {0x01};

			p = pkt(TRD_PKT_ACK), p.offset = epoch_e, p.ack = isn_e + 1;
			p.msg_len = TRD_SACK_BYTES, frame(p, sack, TRD_SACK_BYTES);
			p.ack = isn_e + 3, p.msg_len = 0, frame(p, NULL, 0);
			p = pkt(TRD_PKT_ACK), p.flags |= TRD_HF_PROBE, frame(p, NULL, 0);
		}
		seed_end();
	}

	seed_begin("ack_alone", true);
	{
		uint8_t sack[TRD_SACK_BYTES];

		memset(sack, 0xa5, sizeof(sack));
		p = pkt(TRD_PKT_ACK), p.ack = 5, p.offset = 123, p.msg_len = TRD_SACK_BYTES;
		frame(p, sack, TRD_SACK_BYTES);
		p = pkt(TRD_PKT_ACK), p.ack = isn_e, p.offset = epoch_e, frame(p, NULL, 0);
	}
	seed_end();
}

/* Bundles: several messages behind entry headers, unsequenced and in a session. */
static void
seeds_bundle(void)
{
	uint64_t rw = trd_mr_key(z.rw);
	uint64_t ro = trd_mr_key(z.ro);
	struct trd_pkt p;

	seed_begin("bundle", false);
	{
		uint8_t b[512];
		uint32_t n = 0;

		trd_wire_entry_encode(b + n, TRD_PKT_PUT, 0, z.ctr[0], 16, rw, 64);
		memset(b + n + TRD_ENTRY_LEN, 0x11, 16), n += TRD_ENTRY_LEN + 16;
		trd_wire_entry_encode(b + n, TRD_PKT_FIFO, 1, 0, 40, 0x55, 0);
		memset(b + n + TRD_ENTRY_LEN, 0x22, 40), n += TRD_ENTRY_LEN + 40;
		trd_wire_entry_encode(b + n, TRD_PKT_FIFO, 0, 0, 0, 0x56, 0), n += TRD_ENTRY_LEN;
		trd_wire_entry_encode(b + n, TRD_PKT_PUT, 0, 0, 8, ro, 0);
		memset(b + n + TRD_ENTRY_LEN, 0x33, 8), n += TRD_ENTRY_LEN + 8;
		p = pkt(TRD_PKT_BUNDLE), p.aux = 4, p.msg_len = n, p.msg_id = 300;
		frame(p, b, (uint16_t)n);
		p.flags |= TRD_HF_CRC, frame(p, b, (uint16_t)n);
		frame_pad(p, b, (uint16_t)n, 30, 0);
		session(60, 0);
		p = pkt(TRD_PKT_BUNDLE), p.aux = 4, p.msg_len = n, p.epoch = 60, p.seq = 1;
		frame(p, b, (uint16_t)n);
	}
	seed_end();

	/* remote gets sharing a frame with a put: one carries a put from the read-only region
	 * back to the requester, one an immediate put and a FIFO message */
	seed_begin("bundle_rget", true);
	{
		struct trd_coord peer = {1, 0, 0};
		struct trd_desc d[3];
		uint8_t b[512];
		uint32_t n = 0;

		trd_desc_put(&d[0], peer, NULL, 64, 0x1234, 0, 0, 0);
		d[0].flags = TRD_DF_SRC_MR, d[0].src_key = ro, d[0].src = 0;
		trd_desc_put(&d[1], peer, NULL, 8, 0x1234, 0, 0, 0);
		d[1].flags = TRD_DF_IMM, d[1].user = 0x0102030405060708ULL;
		trd_desc_fifo(&d[2], peer, 1, NULL, 40, 55, 0);
		d[2].flags = TRD_DF_SRC_MR, d[2].src_key = rw, d[2].src = 128;
		trd_wire_entry_encode(b + n, TRD_PKT_RGET, TRD_ENGINE_FIFO, 0, 64, 0, 0);
		memcpy(b + n + TRD_ENTRY_LEN, &d[0], 64), n += TRD_ENTRY_LEN + 64;
		trd_wire_entry_encode(b + n, TRD_PKT_PUT, 0, z.ctr[0], 16, rw, 64);
		memset(b + n + TRD_ENTRY_LEN, 0x11, 16), n += TRD_ENTRY_LEN + 16;
		trd_wire_entry_encode(b + n, TRD_PKT_RGET, 0, 0, 128, 0, 0);
		memcpy(b + n + TRD_ENTRY_LEN, &d[1], 128), n += TRD_ENTRY_LEN + 128;
		p = pkt(TRD_PKT_BUNDLE), p.aux = 3, p.msg_len = n, p.msg_id = 310;
		frame(p, b, (uint16_t)n);
		session(61, 0);
		p.epoch = 61, p.seq = 1, frame(p, b, (uint16_t)n);
	}
	seed_end();
}

/* Replies and completions for operations nobody started. */
static void
seeds_replies(void)
{
	uint64_t db = trd_mr_key(z.db);
	struct trd_pkt p;

	seed_begin("done", false);
	session(40, 0);
	p = pkt(TRD_PKT_DONE), p.aux = 1, p.key = TRD_DROP_BAD_KEY, p.offset = 77,
	frame(p, NULL, 0);
	p.epoch = 40, p.seq = 1, p.aux = 2, p.key = 0, frame(p, NULL, 0);
	seed_end();

	seed_begin("atomic_reply", false);
	p = pkt(TRD_PKT_ATOMIC_REPLY), p.aux = 3, p.msg_len = 8, frame(p, pay, 8);
	seed_end();

	seed_begin("cpl", false);
	p = pkt(TRD_PKT_FIFO), p.flags |= TRD_HF_CPL, p.aux = 2, p.key = 5, frame(p, NULL, 0);
	p = pkt(TRD_PKT_PUT), p.flags |= TRD_HF_CPL, p.aux = 3, p.key = db, p.msg_len = 8;
	frame(p, pay, 8);
	seed_end();
}

/* Atomics, each operation, in a session. */
static void
seeds_atomics(void)
{
	uint64_t rw = trd_mr_key(z.rw);
	struct trd_pkt p;

	seed_begin("atomics", true);
	{
		struct trd_wire_atomic a;

		session(50, 0);
		p = pkt(TRD_PKT_ATOMIC), p.key = rw, p.offset = 8, p.msg_len = 24, p.epoch = 50;
		for (uint8_t op = TRD_ATOMIC_FADD; op <= TRD_ATOMIC_SWAP; op++) {
			memset(&a, 0, sizeof(a));
			a.op = op;
			a.operand = rte_cpu_to_be_64(5);
			a.compare = 0;
			p.aux = 20 + op, p.seq = op, p.msg_id = 200 + op;
			frame(p, &a, sizeof(a));
		}
		p.flags |= TRD_HF_CRC, p.seq = 4, p.aux = 30, p.offset = 16,
				       frame(p, &a, sizeof(a));
	}
	seed_end();
}

/* Engine collectives (docs/collectives.md): pieces from the node's child (1,0,0) in a session,
 * kept before the node's application posts (the instance is made by the first piece); a
 * barrier's empty piece in another group; a broadcast's piece from the parent of a tree
 * rooted at (1,0,0). Then the same unsequenced, and pieces the engine refuses. */
static void
seeds_comb(void)
{
	uint16_t w = trd_comb_word(TRD_COMB_ALLREDUCE, TRD_COMB_SUM, 7, TRD_COMB_DOUBLE);
	struct trd_pkt p;

	seed_begin("comb", true);
	session(70, 0);
	p = pkt(TRD_PKT_COMB), p.fifo = TRD_COMB_UP, p.counter = w, p.msg_len = TRD_COMB_PIECE + 8;
	p.epoch = 70, p.seq = 1, frame(p, pay, TRD_COMB_PIECE);
	p.seq = 2, p.offset = TRD_COMB_PIECE, p.flags |= TRD_HF_CRC, frame(p, pay, 8);
	p = pkt(TRD_PKT_COMB), p.fifo = TRD_COMB_UP, p.epoch = 70, p.seq = 3;
	p.counter = trd_comb_word(TRD_COMB_BARRIER, 0, 3, 0), frame(p, NULL, 0);
	p = pkt(TRD_PKT_COMB), p.fifo = TRD_COMB_DOWN, p.epoch = 70, p.seq = 4, p.aux = 1;
	p.counter = trd_comb_word(TRD_COMB_BCAST, 0, 1, TRD_COMB_U64), p.msg_len = 64;
	frame(p, pay, 64);
	seed_end();

	seed_begin("comb_refused", false);
	p = pkt(TRD_PKT_COMB), p.fifo = TRD_COMB_UP, p.counter = w, p.msg_len = 16;
	frame(p, pay, 16);
	frame(p, pay, 16);                                  /* the same piece again: a duplicate */
	p.fifo = TRD_COMB_DOWN, frame(p, pay, 16);          /* down to the root */
	p.fifo = TRD_COMB_UP, p.key = 9, frame(p, pay, 16); /* too far ahead */
	p.key = 0, p.aux = 3, frame(p, pay, 16); /* (1,0,0) is no child in (1,1,0)'s tree */
	p.aux = 0, p.counter = trd_comb_word(TRD_COMB_REDUCE, TRD_COMB_MAX, 7, TRD_COMB_I64);
	frame(p, pay, 16); /* another collective under the same number */
	seed_end();
}

/* Sessions restarted, and a payload CRC that fails. */
static void
seeds_sessions(void)
{
	uint64_t rw = trd_mr_key(z.rw);
	struct trd_pkt p;

	seed_begin("session_restart", false);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.msg_len = 4, p.epoch = 30;
	p.seq = 1, frame(p, pay, 4); /* before its echo: challenged */
	session(30, 0);
	p.seq = 1, frame(p, pay, 4);
	p.seq = 2, frame(p, pay, 4);
	p.epoch = 31, p.seq = 2, frame(p, pay, 4); /* a session we never saw start */
	session(31, 0);                            /* an old cookie: refused */
	session(31, 1);
	p.seq = 1, frame(p, pay, 4);
	p.seq = 2, frame(p, pay, 4);
	seed_end();

	seed_begin("bad_crc", false);
	p = pkt(TRD_PKT_PUT), p.key = rw, p.msg_len = 16, p.flags |= TRD_HF_CRC;
	frame(p, pay, 16);
	s.buf[s.len - 1] ^= 1;
	seed_end();
}

/* Parser-only frames: IPv4/UDP wrappers whose header (IHL 5..15, options included) ends
 * inside the frame but whose UDP destination port does not (the decoder once read past such
 * a frame: a fuzz_parse finding). */
static void
seeds_parse_ip(void)
{
	for (unsigned int ihl = 5; ihl <= 15; ihl++) {
		uint8_t f[TRD_ETH_HLEN + 15 * 4 + 8];
		uint32_t len = TRD_ETH_HLEN + ihl * 4 + 2;
		char name[32];

		if (len < TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN)
			len = TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN;
		memset(f, 0xdd, sizeof(f));
		f[12] = 0x08, f[13] = 0x00;              /* IPv4 */
		f[TRD_ETH_HLEN] = (uint8_t)(0x40 | ihl); /* version 4, header length */
		f[TRD_ETH_HLEN + 9] = 17;                /* UDP */
		snprintf(name, sizeof(name), "ip_ihl%u", ihl);
		write_file("parse", name, f, len);
		n_frames++;
	}
}

static void
seeds(void)
{
	for (unsigned int i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 13 + 1);
	seeds_put();
	seeds_fifo();
	seeds_rget();
	seeds_bundle();
	seeds_replies();
	seeds_atomics();
	seeds_comb();
	seeds_sessions();
	seeds_parse_ip();
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	mkdirs();
	if (fz_eal_init(argv[0]) != 0 || fz_setup(&z) != 0)
		return 1;
	epoch_e = fz_tx_epoch(FZ_PEER_RANK);
	isn_e = fz_tx_isn(FZ_PEER_RANK);
	fz_reset(&z);
	seeds();
	printf("gen_seeds: %u seeds, %u frames in %s\n", n_seeds, n_frames, outdir);
	trd_node_free(z.n);
	rte_eal_cleanup();
	return n_bad == 0 ? 0 : 1;
}
