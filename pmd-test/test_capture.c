/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden capture: on a 3x1x1 torus of ring links, the origin node (1,0,0) records everything it
 * sends and receives (trd_node_capture) while it runs
 *   - a put of 3000 bytes (three packets) to (2,0,0),
 *   - a 2000-byte memory-FIFO message (two packets) to (2,0,0),
 *   - a remote get: (2,0,0) puts 500 bytes of its memory back to the origin,
 *   - a put with reflection completion, local mode (the neighbour (0,0,0) reflects),
 *   - a put with reflection completion, delivery mode (the target reflects).
 * Every captured frame is decoded here with plain byte offsets (independently of the engine's
 * wire code) and matched with what the descriptors asked for; the checksum is verified; the
 * remote gets' payloads are the descriptors posted. The test then writes, in capture order:
 *   golden.pcap         the capture
 *   expected.fields     the header fields of every frame (toroid-dump --fields columns)
 *   expected.txt        the line toroid-dump -t prints for every frame
 *   expected.desc       the descriptors carried by the remote gets (for the dissector test)
 *   malformed.pcap      frames the engine must refuse, one per reason, and a few good ones
 *   malformed.expected  the verdict toroid-dump must print for each
 * into OUTDIR (argument), or into a temporary directory removed at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 10000000
#define MAXF       64

static char dir[256];
static int keep;

static const char *const golden_files[] = {"golden.pcap",    "expected.fields",
					   "expected.txt",   "expected.desc",
					   "malformed.pcap", "malformed.expected"};

static void
path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* ---- an independent decoder: byte offsets of docs/wire-format.md ---- */

struct hdr {
	uint32_t len;
	uint8_t version, type;
	uint16_t flags;
	uint8_t src[3], hops, dst[3], fifo;
	uint16_t counter, csum;
	uint64_t key, offset;
	uint32_t msg_len;
	uint16_t pay_len, epoch;
	uint32_t msg_id, seq, ack, aux;
	uint8_t pay[1500];
};

static uint64_t
be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* RFC 1071 over the 56-byte header: a header holding its checksum sums to 0xffff. */
static int
csum_ok(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 56; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

static void
decode(const uint8_t *f, uint32_t len, struct hdr *x)
{
	const uint8_t *h = f + 14;

	T_ASSERT(len >= 70, "frame of %u bytes", len);
	T_EQ(be(f + 12, 2), 0x88B5);
	x->len = len;
	x->version = h[0];
	x->type = h[1];
	x->flags = (uint16_t)be(h + 2, 2);
	memcpy(x->src, h + 4, 3);
	x->hops = h[7];
	memcpy(x->dst, h + 8, 3);
	x->fifo = h[11];
	x->counter = (uint16_t)be(h + 12, 2);
	x->csum = (uint16_t)be(h + 14, 2);
	x->key = be(h + 16, 8);
	x->offset = be(h + 24, 8);
	x->msg_len = (uint32_t)be(h + 32, 4);
	x->pay_len = (uint16_t)be(h + 36, 2);
	x->epoch = (uint16_t)be(h + 38, 2);
	x->msg_id = (uint32_t)be(h + 40, 4);
	x->seq = (uint32_t)be(h + 44, 4);
	x->ack = (uint32_t)be(h + 48, 4);
	x->aux = (uint32_t)be(h + 52, 4);
	T_ASSERT(csum_ok(h), "header checksum");
	/* with the CRC flag, a 4-byte CRC32C of the payload follows it; with the proof flag,
	 * then the session's 8-byte token */
	T_ASSERT(x->pay_len + (x->flags & 0x10 ? 4u : 0u) + (x->flags & 0x100 ? 8u : 0u) <=
				 len - 70 &&
			 x->pay_len <= sizeof(x->pay),
		 "pay_len %u", x->pay_len);
	memcpy(x->pay, f + 70, x->pay_len);
}

static const char *
type_name(uint8_t t)
{
	static const char *const n[] = {"?",   "put",  "fifo",   "rget",
					"ack", "done", "atomic", "atomic_reply"};

	return t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

/* toroid-dump's flag letters: F first, L last, C completion, A ack request, K CRC, P probe,
 * H challenge, E echo, T proof (the session's token). */
static const char *
flag_letters(uint16_t f, char *b)
{
	static const struct {
		uint16_t bit;
		char c;
	} l[] = {{1, 'F'},    {2, 'L'},    {4, 'C'},    {8, 'A'},    {0x10, 'K'},
		 {0x20, 'P'}, {0x40, 'H'}, {0x80, 'E'}, {0x100, 'T'}};
	int k = 0;

	b[k++] = '[';
	for (unsigned int i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (f & l[i].bit)
			b[k++] = l[i].c;
	if (f == 0)
		b[k++] = '.';
	b[k++] = ']';
	b[k] = 0;
	return b;
}

/* ---- what the descriptors ask for ---- */

#define ANY UINT64_MAX

struct expect {
	uint8_t type;
	uint16_t flags;
	struct trd_coord src, dst;
	uint64_t fifo, counter, key, offset; /* ANY: chosen by the engine */
	uint32_t msg_len;
	uint16_t pay_len;
	int cpl;         /* aux is a completion id */
	int msg;         /* which message: frames of one share msg_id */
	const void *pay; /* expected payload bytes, or NULL */
	int matched;
	uint32_t seq; /* of the frame that matched */
};

static struct expect ex[MAXF];
static unsigned int n_ex, n_msgs;

static void
expect_msg(uint8_t type, struct trd_coord s, struct trd_coord d, uint64_t fifo, uint64_t counter,
	   uint64_t key, uint64_t base, uint32_t len, unsigned int maxpay, int cpl,
	   const uint8_t *pay)
{
	unsigned int np = len == 0 ? 1 : (len + maxpay - 1) / maxpay;
	int msg = (int)n_msgs++;

	for (unsigned int i = 0; i < np; i++) {
		struct expect *e = &ex[n_ex++];
		uint32_t off = i * maxpay;

		T_ASSERT(n_ex <= MAXF, "too many frames");
		memset(e, 0, sizeof(*e));
		e->type = type;
		e->flags = (uint16_t)((i == 0 ? TRD_HF_FIRST : 0) |
				      (i == np - 1 ? TRD_HF_LAST : 0) | (cpl ? TRD_HF_CPL : 0));
		e->src = s;
		e->dst = d;
		e->fifo = fifo;
		e->counter = counter;
		e->key = key;
		/* a put's offset is the region offset; a FIFO message's, the offset in it */
		e->offset = base + off;
		e->msg_len = len;
		e->pay_len = (uint16_t)(len - off < maxpay ? len - off : maxpay);
		e->cpl = cpl;
		e->msg = msg;
		e->pay = pay ? pay + off : NULL;
	}
}

static int
coord_is(const uint8_t *c, struct trd_coord w)
{
	return c[0] == w.x && c[1] == w.y && c[2] == w.z;
}

static int
matches(const struct expect *e, const struct hdr *x)
{
	/* (the proof flag says how a frame is carried: checked with its length) */
	return e->type == x->type && e->flags == (x->flags & ~0x100) && coord_is(x->src, e->src) &&
	       coord_is(x->dst, e->dst) && (e->fifo == ANY || e->fifo == x->fifo) &&
	       (e->counter == ANY || e->counter == x->counter) &&
	       (e->key == ANY || e->key == x->key) && e->offset == x->offset &&
	       e->msg_len == x->msg_len && e->pay_len == x->pay_len &&
	       (e->cpl != 0) == (x->aux != 0) &&
	       (e->pay == NULL || memcmp(e->pay, x->pay, x->pay_len) == 0);
}

/* ---- the golden capture ---- */

static void
run_golden(void)
{
	/* one frame per message, each kind decoded alone (a delivery reflection would share
	 * its put's frame: bundles are test_bundle's and test_reflect's) */
	struct trd_node_conf tmpl = {.coalesce = 1};
	struct trd_net_conf nc = {.links = TRD_NET_RING, .node = &tmpl};
	struct trd_net *net;
	struct trd_node *R, *O, *T;
	struct trd_coord cR, cO, cT;
	static uint8_t put_buf[3000], fifo_buf[2000], small[200], tmem[8192], omem[4096];
	struct trd_mr *mr_t, *mr_o;
	uint16_t ct, ci, co;
	struct trd_desc d;
	static struct trd_desc carried; /* compared with the capture after we return */
	struct trd_msg *m;
	char pcap_path[512];
	unsigned int maxpay;
	const uint64_t user = 0xABCDEF0123ull, cookie_l = 0x5151, cookie_d = 0x6262;

	trd_torus_init(&nc.torus, 3, 1, 1);
	net = trd_net_create(&nc);
	T_ASSERT(net != NULL, "net: %s", rte_strerror(rte_errno));
	R = trd_net_node(net, 0);
	O = trd_net_node(net, 1);
	T = trd_net_node(net, 2);
	cR = trd_node_coord(R);
	cO = trd_node_coord(O);
	cT = trd_node_coord(T);
	maxpay = trd_link_max_payload(trd_node_link(O, 0));
	T_EQ(maxpay, 1500 - 56 - TRD_PROOF_LEN); /* a frame of a session carries its token */
	path_of(pcap_path, sizeof(pcap_path), "golden.pcap");
	T_EQ(trd_node_capture(O, pcap_path, 0), 0);

	test_fill(put_buf, sizeof(put_buf), 1);
	test_fill(fifo_buf, sizeof(fifo_buf), 2);
	test_fill(small, sizeof(small), 3);
	test_fill(tmem, sizeof(tmem), 4);
	mr_t = trd_mr_register(T, tmem, sizeof(tmem), TRD_ACCESS_ALL);
	mr_o = trd_mr_register(O, omem, sizeof(omem), TRD_ACCESS_REMOTE_WRITE);
	T_ASSERT(mr_t != NULL && mr_o != NULL, "regions");
	T_EQ(trd_counter_alloc(T, &ct), 0);
	T_EQ(trd_counter_alloc(O, &ci), 0);
	T_EQ(trd_counter_alloc(O, &co), 0);

	/* 1. a put of three packets, with injection and reception counters */
	T_EQ(trd_counter_set(T, ct, sizeof(put_buf)), 0);
	T_EQ(trd_counter_set(O, ci, sizeof(put_buf)), 0);
	trd_desc_put(&d, cT, put_buf, sizeof(put_buf), trd_mr_key(mr_t), 100, ci, ct);
	T_EQ(trd_inject(trd_inj_fifo(O, 0), &d), 0);
	T_EQ(trd_counter_wait(T, ct, TIMEOUT_US), 0);
	T_EQ(trd_counter_wait(O, ci, TIMEOUT_US), 0);
	T_ASSERT(memcmp(tmem + 100, put_buf, sizeof(put_buf)) == 0, "put data");
	expect_msg(TRD_PKT_PUT, cO, cT, 0, ct, trd_mr_key(mr_t), 100, sizeof(put_buf), maxpay, 0,
		   put_buf);

	/* 2. a memory-FIFO message of two packets */
	trd_desc_fifo(&d, cT, 1, fifo_buf, sizeof(fifo_buf), user, 0);
	T_EQ(trd_inject(trd_inj_fifo(O, 1), &d), 0);
	T_EQ(trd_rec_fifo_wait(trd_rec_fifo(T, 1), &m, TIMEOUT_US), 0);
	T_EQ(m->len, sizeof(fifo_buf));
	T_EQ(m->user, user);
	T_ASSERT(memcmp(m->data, fifo_buf, sizeof(fifo_buf)) == 0, "FIFO data");
	trd_msg_free(m);
	expect_msg(TRD_PKT_FIFO, cO, cT, 1, 0, user, 0, sizeof(fifo_buf), maxpay, 0, fifo_buf);

	/* 3. a remote get: T puts 500 bytes of its region at 1000 into ours at 64 */
	trd_desc_put(&carried, cO, NULL, 500, trd_mr_key(mr_o), 64, 0, co);
	carried.flags = TRD_DF_SRC_MR;
	carried.src = 1000;
	carried.src_key = trd_mr_key(mr_t);
	T_EQ(trd_counter_set(O, co, 500), 0);
	trd_desc_rget(&d, cT, 0, &carried, 1);
	T_EQ(trd_inject(trd_inj_fifo(O, 0), &d), 0);
	T_EQ(trd_counter_wait(O, co, TIMEOUT_US), 0);
	T_ASSERT(memcmp(omem + 64, tmem + 1000, 500) == 0, "remote get data");
	expect_msg(TRD_PKT_RGET, cO, cT, 0, 0, 0, 0, 64, maxpay, 0, (const uint8_t *)&carried);
	expect_msg(TRD_PKT_PUT, cT, cO, 0, co, trd_mr_key(mr_o), 64, 500, maxpay, 0, tmem + 1000);

	/* 4. and 5. puts with reflection completion: local (the neighbour (0,0,0) reflects),
	 * then delivery (the target reflects) */
	T_EQ(trd_node_set_reflector(O, cR), 0);
	for (int mode = 0; mode < 2; mode++) {
		struct trd_cpl_spec spec = {.kind = TRD_CPL_FIFO, .fifo = 2};
		struct trd_coord refl = mode == 0 ? cR : cT;
		uint32_t len = mode == 0 ? 100 : 200;

		spec.mode = mode == 0 ? TRD_CPL_LOCAL : TRD_CPL_DELIVERY;
		spec.cookie = mode == 0 ? cookie_l : cookie_d;
		trd_desc_put(&d, cT, small, len, trd_mr_key(mr_t), 4000 + 1000 * (uint64_t)mode, 0,
			     0);
		T_EQ(trd_inject_reflect(trd_inj_fifo(O, 2), &d, &spec), 0);
		T_EQ(trd_rec_fifo_wait(trd_rec_fifo(O, 2), &m, TIMEOUT_US), 0);
		T_EQ(m->user, spec.cookie);
		T_EQ(m->len, 0);
		T_EQ(m->src.x, refl.x);
		trd_msg_free(m);
		expect_msg(TRD_PKT_PUT, cO, cT, 0, 0, trd_mr_key(mr_t),
			   4000 + 1000 * (uint64_t)mode, len, maxpay, 0, small);
		/* the remote get to the reflector's engine FIFO carries the completion */
		expect_msg(TRD_PKT_RGET, cO, refl, ANY, 0, 0, 0, 64, maxpay, 0, NULL);
		expect_msg(TRD_PKT_FIFO, refl, cO, 2, 0, spec.cookie, 0, 0, maxpay, 1, NULL);
	}
	T_EQ(trd_node_cpl_pending(O), 0);
	T_EQ(trd_node_capture(O, NULL, 0), 0);
	trd_net_free(net);
}

/* Read the capture back, match every frame, write the expected files. */
static void
check_golden(void)
{
	char p[512], err[PCAP_ERRBUF_SIZE];
	pcap_t *pd;
	struct pcap_pkthdr *ph;
	const u_char *data;
	FILE *ff, *ft, *fd;
	unsigned int n = 0, n_retx = 0;
	uint32_t msg_ids[MAXF];
	int msg_seen[MAXF] = {0};
	uint8_t msg_src[MAXF]; /* x of the source: the torus is a line along x */

	path_of(p, sizeof(p), "golden.pcap");
	pd = pcap_open_offline_with_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO, err);
	T_ASSERT(pd != NULL, "%s", err);
	path_of(p, sizeof(p), "expected.fields");
	ff = fopen(p, "w");
	path_of(p, sizeof(p), "expected.txt");
	ft = fopen(p, "w");
	path_of(p, sizeof(p), "expected.desc");
	fd = fopen(p, "w");
	T_ASSERT(ff && ft && fd, "cannot write in %s", dir);
	fprintf(ff, "#n\tlen\tverdict\tversion\ttype\ttype_name\tflags\tsrc_x\tsrc_y\tsrc_z\thops\t"
		    "dst_x\tdst_y\tdst_z\tfifo\tcounter\tcsum\tkey\toffset\tmsg_len\tpay_len\t"
		    "epoch\tmsg_id\tseq\tack\taux\n");
	fprintf(fd, "#n\tdesc\top\tflags\tfifo\tdst_x\tdst_y\tdst_z\tinj_ctr\trec_ctr\tlen\tsrc\t"
		    "src_key\trkey\troff\tuser\tmsg_id\taux\n");
	while (pcap_next_ex(pd, &ph, &data) == 1) {
		static struct hdr x;
		const struct expect *e = NULL;
		char fb[8];

		n++;
		T_EQ(ph->caplen, ph->len);
		decode(data, ph->caplen, &x);
		T_EQ(x.version, 1);
		/* ring links do not pad; a frame of a session (sequenced) carries its token */
		T_EQ(x.len,
		     70u + x.pay_len + (x.flags & 0x10 ? 4u : 0u) + (x.flags & 0x100 ? 8u : 0u));
		T_ASSERT(x.seq == 0 || (x.flags & 0x100), "frame %u: sequenced without its token",
			 n);
		if (x.type == TRD_PKT_PUT || x.type == TRD_PKT_FIFO || x.type == TRD_PKT_RGET) {
			for (unsigned int i = 0; i < n_ex && e == NULL; i++)
				if (!ex[i].matched && matches(&ex[i], &x)) {
					ex[i].matched = 1;
					ex[i].seq = x.seq;
					e = &ex[i];
				}
			/* a retransmission (reliability) repeats a frame, sequence number and all
			 */
			for (unsigned int i = 0; i < n_ex && e == NULL && x.seq != 0; i++)
				if (ex[i].matched && ex[i].seq == x.seq && matches(&ex[i], &x)) {
					e = &ex[i];
					n_retx++;
				}
			T_ASSERT(e != NULL,
				 "frame %u (%s %u,%u,%u > %u,%u,%u off %" PRIu64 " len %u) was not "
				 "asked for",
				 n, type_name(x.type), x.src[0], x.src[1], x.src[2], x.dst[0],
				 x.dst[1], x.dst[2], x.offset, x.pay_len);
			/* the packets of a message share its id; messages of one source do not */
			if (msg_seen[e->msg])
				T_EQ(x.msg_id, msg_ids[e->msg]);
			else
				for (unsigned int k = 0; k < n_msgs; k++)
					T_ASSERT(!msg_seen[k] || msg_ids[k] != x.msg_id ||
							 msg_src[k] != x.src[0],
						 "frame %u: message id %u used twice", n, x.msg_id);
			msg_seen[e->msg] = 1;
			msg_ids[e->msg] = x.msg_id;
			msg_src[e->msg] = x.src[0];
			/* the hop limit allows at least the route */
			T_ASSERT(x.hops >= 1, "hops %u", x.hops);
		}
		/* frames nobody asked for (acknowledgements of a later engine) are recorded */
		fprintf(ff,
			"%u\t%u\tok\t%u\t%u\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%" PRIu64
			"\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
			n, x.len, x.version, x.type, type_name(x.type), x.flags, x.src[0], x.src[1],
			x.src[2], x.hops, x.dst[0], x.dst[1], x.dst[2], x.fifo, x.counter, x.csum,
			x.key, x.offset, x.msg_len, x.pay_len, x.epoch, x.msg_id, x.seq, x.ack,
			x.aux);
		fprintf(ft,
			"%u,%u,%u > %u,%u,%u: %s %s fifo %u ctr %u key 0x%" PRIx64 " off %" PRIu64
			" len %u/%u msg %u seq %u ack %u hops %u",
			x.src[0], x.src[1], x.src[2], x.dst[0], x.dst[1], x.dst[2],
			type_name(x.type), flag_letters(x.flags, fb), x.fifo, x.counter, x.key,
			x.offset, x.pay_len, x.msg_len, x.msg_id, x.seq, x.ack, x.hops);
		if (x.aux != 0)
			fprintf(ft, " aux %u", x.aux);
		fprintf(ft, "\n");
		if (x.type == TRD_PKT_RGET)
			for (unsigned int k = 0; k * 64 < x.pay_len; k++) {
				const uint8_t *dd = x.pay + k * 64;
				struct trd_desc c;

				/* the payload holds descriptors in the host's order */
				memcpy(&c, dd, sizeof(c));
				fprintf(fd,
					"%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%" PRIu64
					"\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
					"\t%u\t%u\n",
					n, k, c.op, c.flags, c.fifo, c.dst.x, c.dst.y, c.dst.z,
					c.inj_ctr, c.rec_ctr, c.len, c.src, c.src_key, c.rkey,
					c.roff, c.user, c.msg_id, c.aux);
			}
	}
	pcap_close(pd);
	for (unsigned int i = 0; i < n_ex; i++)
		T_ASSERT(ex[i].matched, "expected frame %u (%s) missing from the capture", i,
			 type_name(ex[i].type));
	T_ASSERT(fclose(ff) == 0 && fclose(ft) == 0 && fclose(fd) == 0, "write");
	printf("golden capture: %u frames, each as the descriptors asked (%u retransmitted)\n", n,
	       n_retx);
}

/* ---- frames the engine must refuse ---- */

static pcap_dumper_t *mdump;
static FILE *mexp;
static unsigned int n_mal;

static void
mal_write(const uint8_t *f, uint32_t caplen, uint32_t len, const char *verdict)
{
	struct pcap_pkthdr h = {.caplen = caplen, .len = len};

	h.ts.tv_sec = 1700000000 + n_mal;
	h.ts.tv_usec = 123456789; /* a nanosecond file */
	pcap_dump((u_char *)mdump, &h, f);
	fprintf(mexp, "%u\t%s\n", ++n_mal, verdict);
}

static unsigned int
mal_good(uint8_t *f, uint16_t pay)
{
	struct trd_pkt p = {.version = 1,
			    .type = TRD_PKT_PUT,
			    .flags = TRD_HF_ALL,
			    .src = {1, 0, 0},
			    .hops = 3,
			    .dst = {2, 0, 0},
			    .key = 0x1234,
			    .offset = 64,
			    .msg_len = pay,
			    .pay_len = pay,
			    .msg_id = 9};
	static const uint8_t mac_a[6] = {0x02, 0x54, 0, 0, 0, 1},
			     mac_b[6] = {0x02, 0x54, 0, 0, 0, 2};

	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x88;
	f[13] = 0xB5;
	trd_wire_encode(f + 14, &p);
	memset(f + 70, 0xA5, pay);
	return 70u + pay;
}

/* CRC32C (Castagnoli, reflected), initial value all ones, no final inversion: the wire's. */
static uint32_t
crc32c_nofinal(const uint8_t *d, uint32_t n)
{
	uint32_t c = 0xffffffff;

	for (uint32_t i = 0; i < n; i++) {
		c ^= d[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return c;
}

static void
reseal(uint8_t *f)
{
	f[14 + 14] = f[14 + 15] = 0;
	{
		uint32_t s = 0;
		uint16_t c;

		for (int i = 0; i < 56; i += 2)
			s += (uint32_t)f[14 + i] << 8 | f[14 + i + 1];
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		c = (uint16_t)~s;
		f[14 + 14] = (uint8_t)(c >> 8);
		f[14 + 15] = (uint8_t)c;
	}
}

static void
write_malformed(void)
{
	char p[512];
	pcap_t *pd =
		pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	uint8_t f[256];
	unsigned int n;

	path_of(p, sizeof(p), "malformed.pcap");
	mdump = pcap_dump_open(pd, p);
	T_ASSERT(mdump != NULL, "%s", pcap_geterr(pd));
	path_of(p, sizeof(p), "malformed.expected");
	mexp = fopen(p, "w");
	T_ASSERT(mexp != NULL, "%s", p);

	n = mal_good(f, 16);
	mal_write(f, n, n, "ok");
	/* shorter than an Ethernet header, and than the torus header */
	mal_write(f, 10, 10, "short_frame");
	mal_write(f, 40, 40, "short_frame");
	/* an ARP request */
	memset(f, 0xff, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	memset(f + 14, 0, 28);
	mal_write(f, 42, 42, "not_torus");
	/* bad version, bad type (checksums right) */
	n = mal_good(f, 16);
	f[14] = 2;
	reseal(f);
	mal_write(f, n, n, "bad_version");
	n = mal_good(f, 16);
	f[15] = 99;
	reseal(f);
	mal_write(f, n, n, "bad_type");
	/* a bit flipped in the key */
	n = mal_good(f, 16);
	f[14 + 20] ^= 0x10;
	mal_write(f, n, n, "bad_checksum");
	/* pay_len past the end of the frame */
	n = mal_good(f, 16);
	f[14 + 37] = 200;
	reseal(f);
	mal_write(f, n, n, "bad_length");
	/* a sequence number without a session (epoch 0) */
	n = mal_good(f, 16);
	f[14 + 47] = 1;
	reseal(f);
	mal_write(f, n, n, "bad_field");
	/* a payload CRC, right and wrong */
	n = mal_good(f, 16);
	f[14 + 3] |= 0x10;
	reseal(f);
	{
		uint32_t c = crc32c_nofinal(f + 70, 16);

		f[n] = (uint8_t)(c >> 24);
		f[n + 1] = (uint8_t)(c >> 16);
		f[n + 2] = (uint8_t)(c >> 8);
		f[n + 3] = (uint8_t)c;
	}
	mal_write(f, n + 4, n + 4, "ok");
	f[70] ^= 1;
	mal_write(f, n + 4, n + 4, "bad_crc");
	/* unknown flag bit */
	n = mal_good(f, 16);
	f[14 + 2] = 0x80;
	reseal(f);
	mal_write(f, n, n, "bad_field");
	/* a good frame captured with a snap length of 80: decoded, marked truncated */
	n = mal_good(f, 100);
	mal_write(f, 80, n, "ok");
	/* all zeros, 70 bytes */
	memset(f, 0, 70);
	mal_write(f, 70, 70, "not_torus");
	pcap_dump_close(mdump);
	pcap_close(pd);
	T_ASSERT(fclose(mexp) == 0, "write");
	printf("malformed capture: %u frames\n", n_mal);
}

int
main(int argc, char **argv)
{
	char p[512];

	if (argc > 1) {
		snprintf(dir, sizeof(dir), "%s", argv[1]);
		keep = 1;
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "cannot make %s\n", dir);
			return 1;
		}
	} else {
		snprintf(dir, sizeof(dir), "/tmp/toroid-capture-XXXXXX");
		T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
	}
	test_eal_init(argv[0], NULL);
	run_golden();
	check_golden();
	write_malformed();
	if (!keep) {
		for (unsigned int i = 0; i < sizeof(golden_files) / sizeof(golden_files[0]); i++) {
			path_of(p, sizeof(p), golden_files[i]);
			unlink(p);
		}
		rmdir(dir);
	}
	rte_eal_cleanup();
	return 0;
}
