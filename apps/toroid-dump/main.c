/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-dump: decode torus traffic from a pcap/pcapng file or a live interface (libpcap),
 * tcpdump-style. The decoder is the engine's own trd_wire_parse(); this tool needs no EAL.
 * See docs/toroid-dump.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include <toroid/toroid.h>
#include <toroid/vni_wire.h>
#include <toroid/wire.h>

#include "../common/app_args.h"

#define EXIT_BADFILE 1 /* cannot open or read the input, cannot write the output */
#define EXIT_USAGE 2   /* the command line is wrong */

#define DUMP_MAX_FRAME 262144

static const char dump_usage[] =
	"usage: toroid-dump -r FILE | -i IFACE [OPTIONS] [BPF EXPRESSION]\n"
	"\n"
	"Decode torus frames (EtherType 0x88B5) one line per packet, tcpdump-style, with the\n"
	"engine's own wire decoder. Frames the engine would drop are shown with the reason.\n"
	"\n"
	"Input and output:\n"
	"  -r, --read FILE        read a pcap or pcapng file ('-' for standard input)\n"
	"  -i, --interface IFACE  capture live from IFACE (Ethernet link type; needs privileges)\n"
	"  -s, --snaplen N        live capture: bytes kept per frame (default 65535)\n"
	"  -p, --no-promisc       live capture: do not put the interface in promiscuous mode\n"
	"  -w, --write OUT        write the frames that pass the filters to OUT (pcap format,\n"
	"                         nanosecond timestamps); nothing is printed unless --print\n"
	"      --print            print decoded lines even with -w\n"
	"  -c, --count N          stop after N frames that pass the filters\n"
	"\n"
	"Printing:\n"
	"  -v, --verbose          every header field, the payload's structure (remote-get\n"
	"                         descriptors, atomics, verdicts) and a hex dump of the frame;\n"
	"                         from a pcapng file also the interface and the direction\n"
	"  -e, --ether            show the Ethernet addresses and the frame length\n"
	"  -t                     no timestamp; -tt seconds since the epoch; -ttt time since the\n"
	"                         previous frame; -tttt date and time (default: local time of day)\n"
	"      --fields           machine-readable: one tab-separated line of every field per\n"
	"                         frame, after a '#' header line naming the columns\n"
	"      --summary          no per-packet lines: count packets and bytes per type, per\n"
	"                         link (source -> destination coordinate) and per drop reason\n"
	"      --list-types       print the packet types the decoder knows and exit\n"
	"      --list-reasons     print the drop reasons (trd_drop_name) and exit\n"
	"      --list-flags       print the header flags (bit, letter, name) and exit\n"
	"      --udp-port N       UDP port of torus frames carried over IPv4/UDP (default 34997;\n"
	"                         0: do not look inside UDP)\n"
	"\n"
	"Filters (all given must match; a BPF expression after the options is applied first):\n"
	"      --src X,Y,Z        source coordinate\n"
	"      --dst X,Y,Z        destination coordinate\n"
	"      --node X,Y,Z       either source or destination\n"
	"      --type T[,T...]    packet types by name or number (see --list-types)\n"
	"      --fifo N           FIFO field\n"
	"      --msg N            message id\n"
	"      --malformed        only frames the engine would drop (torus EtherType)\n"
	"  Frames of other EtherTypes are shown as \"not torus\" unless a filter is given.\n"
	"\n"
	"  -h, --help             print this help and exit\n"
	"\n"
	"Exit status: 0 done, 1 the input could not be opened or read (or -w not written),\n"
	"2 bad command line.\n"
	"\n"
	"Examples:\n"
	"  toroid-dump -r capture.pcap\n"
	"  toroid-dump -r capture.pcap --type put,rget --node 1,0,0 -v\n"
	"  toroid-dump -r capture.pcap ether src 02:54:00:00:00:01\n"
	"  toroid-dump -i eth1 -c 100 -w torus.pcap\n";

/* ---- header flag names: the one table of them (bit, letter, name) ---- */

struct dump_flag {
	uint16_t bit;
	char letter;
	const char *name;
};

static const struct dump_flag dump_hdr_flags[] = {
#define DUMP_FLAG_(e, l, n, v) {TRD_HF_##e, l, n},
	TRD_HDR_FLAGS(DUMP_FLAG_)
#undef DUMP_FLAG_
};

#define DUMP_N_HDR_FLAGS (sizeof(dump_hdr_flags) / sizeof(dump_hdr_flags[0]))

/* Descriptor flags and operations, for remote-get payloads (-v). */
static const struct dump_flag dump_desc_flags[] = {
	{TRD_DF_SRC_MR, 'M', "src_mr"},
	{TRD_DF_IMM, 'I', "imm"},
	{TRD_DF_ORDERED, 'O', "ordered"},
	{0x08, 'R', "remote"}, /* TRD_DF_REMOTE, engine-only: refused on the wire */
	{TRD_DF_CPL, 'C', "cpl"},
#ifdef TRD_DF_ACKREQ
	{TRD_DF_ACKREQ, 'A', "ackreq"},
#endif
};

static const char *const dump_op_names[] = {"none", "put", "fifo", "rget", "atomic"};

/* ---- options and state ---- */

struct dump_opts {
	const char *rfile;
	const char *iface;
	const char *wfile;
	int print_with_w;
	long long count; /* 0: no limit */
	int snaplen;
	int promisc;
	int verbose;
	int ether;
	int tmode;
	int fields;
	int summary;
	char *bpf;
	/* filters */
	int any_filter;
	int have_src, have_dst, have_node;
	struct trd_coord src, dst, node;
	int have_type;
	uint8_t type_sel[256];
	int fifo;        /* -1: any */
	long long msg;   /* -1: any */
	int malformed;
};

/* What one frame is. */
enum dump_class {
	DUMP_GOOD = 0,   /* trd_wire_parse() accepts it */
	DUMP_BAD_HDR,    /* torus EtherType, whole header, rejected: fields shown raw */
	DUMP_BAD_SHORT,  /* torus EtherType (or too short to tell), no whole header */
	DUMP_NOT_TORUS,  /* another EtherType */
};

struct dump_frame {
	const struct pcap_pkthdr *h;
	const uint8_t *data; /* h->len bytes: a truncated capture is padded with zeros; an
			      * encapsulated frame: 28 bytes in, so that the torus header is at
			      * data + 14 as in a plain frame */
	uint32_t len;
	const uint8_t *frame; /* the frame as captured (data before the shift) */
	uint32_t frame_len;
	uint32_t caplen;      /* bytes captured, counted from data */
	int encap;            /* carried over IPv4/UDP */
	int truncated;
	enum dump_class cls;
	int cause;           /* trd_wire_parse() verdict */
	uint16_t etype;      /* 0 if the frame is shorter than an Ethernet header */
	struct trd_pkt p;    /* valid for GOOD and BAD_HDR */
};

struct dump_count {
	uint64_t pkts, bytes;
};

struct dump_link {
	uint64_t key; /* src << 24 | dst, plus 1 << 48 when used */
	struct dump_count c;
};

struct dump_state {
	struct dump_opts o;
	pcap_t *pd;
	pcap_dumper_t *dumper;
	struct bpf_program prog; /* a file's BPF filter, run here so frame numbers stay the file's */
	int have_prog;
	long long matched;
	uint64_t seen;
	int64_t prev_ns;
	int prev_set;
	int ns_precision;
	/* summary */
	struct dump_count total, torus, malformed, not_torus;
	struct dump_count by_type[256];
	struct dump_count by_cause[TRD_DROP_MAX];
	struct dump_link *links;
	size_t links_cap, links_n;
	uint8_t pad[DUMP_MAX_FRAME];
};

static struct dump_state *dump_st;

/* ---- pcapng interfaces and directions ----
 *
 * libpcap reads pcapng but tells nothing of a packet's interface or direction (its
 * pcap_pkthdr has no such fields). The file is therefore walked a second time, block by
 * block, alongside libpcap: every packet libpcap hands over (each one reaches dump_handle(),
 * the BPF filter is applied there) is the next packet block here. */

#define PCAPNG_MAX_IFS 4096
#define PCAPNG_MAX_BLOCK (16u << 20)

struct pcapng_side {
	FILE *f;
	int swap;                     /* the section's byte order is not ours */
	unsigned int n_ifs;
	char *ifname[PCAPNG_MAX_IFS]; /* if_name of each interface of the section, or NULL */
	uint8_t *buf;
	/* the current packet */
	int have;
	uint32_t ifid;
	int dir;                      /* 0 unknown, 1 inbound, 2 outbound (epb_flags bits 0-1) */
};

static struct pcapng_side png;

static uint32_t
png_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return png.swap ? __builtin_bswap32(v) : v;
}

static uint16_t
png_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return png.swap ? __builtin_bswap16(v) : v;
}

static void
png_close(void)
{
	if (png.f != NULL)
		fclose(png.f);
	for (unsigned int i = 0; i < png.n_ifs; i++)
		free(png.ifname[i]);
	free(png.buf);
	memset(&png, 0, sizeof(png));
}

/* Open @p path beside libpcap if it is a pcapng file (not standard input). */
static void
png_open(const char *path)
{
	uint8_t magic[4];

	memset(&png, 0, sizeof(png));
	if (path == NULL || strcmp(path, "-") == 0 || (png.f = fopen(path, "rb")) == NULL)
		return;
	png.buf = malloc(PCAPNG_MAX_BLOCK);
	if (png.buf == NULL || fread(magic, 1, 4, png.f) != 4 ||
	    memcmp(magic, "\x0a\x0d\x0d\x0a", 4) != 0) {
		png_close();
		return;
	}
	rewind(png.f);
}

/* The options of a block body from @p off: call @p fn for each. */
static void
png_options(const uint8_t *b, uint32_t len, uint32_t off,
	    void (*fn)(uint16_t code, const uint8_t *val, uint16_t vlen))
{
	while (off + 4 <= len) {
		uint16_t code = png_u16(b + off), vlen = png_u16(b + off + 2);

		if (code == 0 || off + 4 + (uint32_t)vlen > len)
			return;
		fn(code, b + off + 4, vlen);
		off += 4 + (((uint32_t)vlen + 3) & ~3u);
	}
}

static void
png_idb_opt(uint16_t code, const uint8_t *val, uint16_t vlen)
{
	if (code == 2 && png.n_ifs > 0 && png.ifname[png.n_ifs - 1] == NULL) /* if_name */
		png.ifname[png.n_ifs - 1] = strndup((const char *)val, vlen);
}

static void
png_epb_opt(uint16_t code, const uint8_t *val, uint16_t vlen)
{
	if (code == 2 && vlen == 4) /* epb_flags */
		png.dir = (int)(png_u32(val) & 3);
}

/* Advance to the next packet block: its interface and direction. Any surprise stops the
 * walk (the frames are still decoded, without that information). */
static void
png_next(void)
{
	png.have = 0;
	while (png.f != NULL) {
		uint8_t h[8];
		uint32_t type, total, blen;

		if (fread(h, 1, 8, png.f) != 8)
			goto stop;
		memcpy(&type, h, 4);
		if (type == 0x0A0D0D0A) { /* section header: its byte order, new interfaces */
			uint8_t bom[4];

			if (fread(bom, 1, 4, png.f) != 4)
				goto stop;
			if (memcmp(bom, "\x4d\x3c\x2b\x1a", 4) == 0)
				png.swap = 0;
			else if (memcmp(bom, "\x1a\x2b\x3c\x4d", 4) == 0)
				png.swap = 1;
			else
				goto stop;
			for (unsigned int i = 0; i < png.n_ifs; i++)
				free(png.ifname[i]);
			png.n_ifs = 0;
			total = png_u32(h + 4);
			if (total < 16 || total % 4 != 0 || total > PCAPNG_MAX_BLOCK ||
			    fseek(png.f, (long)total - 12, SEEK_CUR) != 0)
				goto stop;
			continue;
		}
		type = png_u32(h);
		total = png_u32(h + 4);
		if (total < 12 || total % 4 != 0 || total > PCAPNG_MAX_BLOCK)
			goto stop;
		blen = total - 12;
		if (fread(png.buf, 1, blen + 4, png.f) != blen + 4)
			goto stop;
		if (type == 1) { /* interface description */
			if (blen < 8 || png.n_ifs == PCAPNG_MAX_IFS)
				goto stop;
			png.ifname[png.n_ifs++] = NULL;
			png_options(png.buf, blen, 8, png_idb_opt);
		} else if (type == 6) { /* enhanced packet */
			uint32_t cap;

			if (blen < 20)
				goto stop;
			png.ifid = png_u32(png.buf);
			cap = png_u32(png.buf + 12);
			png.dir = 0;
			if (cap <= blen - 20)
				png_options(png.buf, blen, 20 + ((cap + 3) & ~3u), png_epb_opt);
			png.have = 1;
			return;
		} else if (type == 3 || type == 2) { /* simple packet; obsolete packet block */
			png.ifid = type == 3 || blen < 2 ? 0 : png_u16(png.buf);
			png.dir = 0;
			png.have = 1;
			return;
		}
	}
	return;
stop:
	png_close();
}

/* -v: "interface N (NAME), inbound|outbound" of the frame, when the file says it. */
static void
png_print(void)
{
	if (!png.have)
		return;
	printf("\tinterface %u", png.ifid);
	if (png.ifid < png.n_ifs && png.ifname[png.ifid] != NULL)
		printf(" (%s)", png.ifname[png.ifid]);
	if (png.dir != 0)
		printf(", %s", png.dir == 1 ? "inbound" : png.dir == 2 ? "outbound" : "direction 3");
	printf("\n");
}

#define dump_usage_error app_usage_error /* one line on stderr, exit 2 */

/* ---- small decoders ---- */

static uint64_t
dump_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t
dump_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = n; i > 0; i--)
		v = v << 8 | p[i - 1];
	return v;
}

#define HDR_BE(h, f) dump_be((h) + offsetof(struct trd_hdr, f), sizeof(((struct trd_hdr *)0)->f))

/* The header's fields as they are, for frames trd_wire_parse() refuses (display only). */
static void
dump_raw_header(const uint8_t *frame, struct trd_pkt *p)
{
	struct trd_hdr h;

	memcpy(&h, frame + TRD_ETH_HLEN, sizeof(h));
	trd_hdr_decode(&h, p);
	p->csum = trd_be16(h.csum);
}

/* The checksum the header should carry. */
static uint16_t
dump_good_csum(const uint8_t *frame)
{
	struct trd_hdr h;

	memcpy(&h, frame + TRD_ETH_HLEN, sizeof(h));
	trd_hdr_seal(&h);
	return trd_be16(h.csum);
}

/* UDP port of encapsulated torus frames (--udp-port; 0: not decoded). */
static uint16_t dump_udp_port = TRD_UDP_PORT;

/* An IPv4 datagram that claims to be ours: UDP to our port. */
static int
dump_is_ours(const uint8_t *f, uint32_t len)
{
	const uint8_t *ip = f + TRD_ETH_HLEN;

	return dump_udp_port != 0 && len >= TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN &&
	       dump_be(f + 12, 2) == 0x0800 && (ip[0] >> 4) == 4 && ip[9] == 17 &&
	       dump_be(ip + (ip[0] & 15) * 4 + 2, 2) == dump_udp_port;
}

static void
dump_classify(struct dump_frame *f)
{
	f->frame = f->data;
	f->frame_len = f->len;
	f->caplen = f->h->caplen;
	f->etype = f->len >= TRD_ETH_HLEN ? (uint16_t)dump_be(f->data + 12, 2) : 0;
	if (dump_is_ours(f->data, f->len)) {
		uint32_t off = 0;

		f->cause = trd_wire_parse_any(f->data, f->len, dump_udp_port, &f->p, &off);
		if (f->cause == TRD_DROP_BAD_ENCAP || f->cause == TRD_DROP_SHORT_FRAME ||
		    off != TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN) {
			f->cls = DUMP_BAD_SHORT; /* a wrapper we cannot take the frame out of */
			if (f->cause == 0)
				f->cause = TRD_DROP_BAD_ENCAP;
			return;
		}
		f->encap = 1;
		f->data += TRD_UDP_ENCAP_LEN;
		f->len -= TRD_UDP_ENCAP_LEN;
		f->caplen = f->caplen > TRD_UDP_ENCAP_LEN ? f->caplen - TRD_UDP_ENCAP_LEN : 0;
	} else {
		f->cause = trd_wire_parse(f->data, f->len, &f->p);
	}
	/* the engine checks a payload CRC after the header */
	if (f->cause == 0)
		f->cause = trd_wire_crc_check(f->data, f->len, &f->p);
	if (f->cause == 0)
		f->cls = DUMP_GOOD;
	else if (!f->encap && f->len >= TRD_ETH_HLEN && f->etype != TRD_ETHERTYPE)
		f->cls = DUMP_NOT_TORUS;
	else if (f->len < TRD_FRAME_HLEN)
		f->cls = DUMP_BAD_SHORT;
	else {
		f->cls = DUMP_BAD_HDR;
		dump_raw_header(f->data, &f->p);
	}
}

static const char *
dump_type_str(unsigned int type, char *buf, size_t n)
{
	const char *name = trd_pkt_type_name(type);

	if (name != NULL)
		return name;
	snprintf(buf, n, "type%u", type);
	return buf;
}

/* "[FL]" style: letters of known bits, +0x.. for unknown ones, "." for none. */
static const char *
dump_flags_short(uint16_t flags, char *buf, size_t n)
{
	size_t k = 0;
	uint16_t rest = flags;

	buf[k++] = '[';
	for (size_t i = 0; i < DUMP_N_HDR_FLAGS; i++)
		if (flags & dump_hdr_flags[i].bit) {
			buf[k++] = dump_hdr_flags[i].letter;
			rest &= (uint16_t)~dump_hdr_flags[i].bit;
		}
	if (rest != 0)
		k += (size_t)snprintf(buf + k, n - k, "+0x%x", rest);
	else if (flags == 0)
		buf[k++] = '.';
	snprintf(buf + k, n - k, "]");
	return buf;
}

/* "first,last" style, for -v. */
static const char *
dump_flags_long(const struct dump_flag *tab, size_t nt, unsigned int flags, char *buf, size_t n)
{
	size_t k = 0;
	unsigned int rest = flags;

	buf[0] = '\0';
	for (size_t i = 0; i < nt; i++)
		if (flags & tab[i].bit) {
			k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "," : "", tab[i].name);
			rest &= ~(unsigned int)tab[i].bit;
		}
	if (rest != 0)
		k += (size_t)snprintf(buf + k, n - k, "%s0x%x", k ? "," : "", rest);
	if (k == 0)
		snprintf(buf, n, "none");
	return buf;
}

static const char *
dump_etype_name(uint16_t t)
{
	switch (t) {
	case 0x0800: return "IPv4";
	case 0x0806: return "ARP";
	case 0x86DD: return "IPv6";
	case 0x8100: return "802.1Q";
	case 0x88CC: return "LLDP";
	default: return NULL;
	}
}

/* ---- printing ---- */

static void
dump_print_time(struct dump_state *s, const struct pcap_pkthdr *h)
{
	int64_t frac = s->ns_precision ? (int64_t)h->ts.tv_usec : (int64_t)h->ts.tv_usec * 1000;
	int64_t ns = (int64_t)h->ts.tv_sec * 1000000000 + frac;
	time_t sec = h->ts.tv_sec;
	struct tm tm;

	switch (s->o.tmode) {
	case 1:
		return;
	case 2:
		printf("%lld.%09lld ", (long long)h->ts.tv_sec, (long long)frac);
		return;
	case 3: {
		int64_t d = s->prev_set ? ns - s->prev_ns : 0;

		s->prev_ns = ns;
		s->prev_set = 1;
		printf("%s%lld.%09lld ", d < 0 ? "-" : "", (long long)(llabs(d) / 1000000000),
		       (long long)(llabs(d) % 1000000000));
		return;
	}
	default:
		localtime_r(&sec, &tm);
		if (s->o.tmode >= 4)
			printf("%04d-%02d-%02d ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
		printf("%02d:%02d:%02d.%09lld ", tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)frac);
	}
}

static void
dump_print_mac(const uint8_t *m)
{
	printf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void
dump_print_ether(const struct dump_frame *f)
{
	dump_print_mac(f->frame + 6);
	printf(" > ");
	dump_print_mac(f->frame);
	printf(", length %u: ", f->frame_len);
}

/* The IPv4/UDP wrapper of an encapsulated frame, tcpdump-style. */
static void
dump_print_ip(const struct dump_frame *f)
{
	const uint8_t *ip = f->frame + TRD_ETH_HLEN, *udp = ip + 20;

	printf("IP %u.%u.%u.%u.%u > %u.%u.%u.%u.%u: ", ip[12], ip[13], ip[14], ip[15],
	       (unsigned int)dump_be(udp, 2), ip[16], ip[17], ip[18], ip[19],
	       (unsigned int)dump_be(udp + 2, 2));
}

/* The one-line decode of a torus header (good or refused). */
static void
dump_print_hdr_line(const struct trd_pkt *p)
{
	char tb[16], fb[32];

	printf("%u,%u,%u > %u,%u,%u: %s %s fifo %u ctr %u key 0x%" PRIx64 " off %" PRIu64
	       " len %u/%u msg %u seq %u ack %u hops %u",
	       p->src[0], p->src[1], p->src[2], p->dst[0], p->dst[1], p->dst[2],
	       dump_type_str(p->type, tb, sizeof(tb)), dump_flags_short(p->flags, fb, sizeof(fb)),
	       p->fifo, p->counter, p->key, p->offset, p->pay_len, p->msg_len, p->msg_id, p->seq,
	       p->ack, p->hops);
	if (p->aux != 0)
		printf(" aux %u", p->aux);
}

static void
dump_hex(const uint8_t *d, uint32_t n)
{
	for (uint32_t off = 0; off < n; off += 16) {
		uint32_t m = n - off < 16 ? n - off : 16;

		printf("\t0x%04x:  ", off);
		for (uint32_t i = 0; i < 16; i++) {
			if (i < m)
				printf("%02x", d[off + i]);
			else
				printf("  ");
			if (i & 1)
				printf(" ");
		}
		printf(" ");
		for (uint32_t i = 0; i < m; i++)
			putchar(d[off + i] >= 0x20 && d[off + i] < 0x7f ? d[off + i] : '.');
		printf("\n");
	}
}

#define DESC_LE(d, f) dump_le((d) + offsetof(struct trd_desc, f), sizeof(((struct trd_desc *)0)->f))

/* Payload structure, by type name (so the decoder stays independent of new type values). */
static void
dump_print_payload(const struct trd_pkt *p, const uint8_t *pay, uint32_t avail)
{
	const char *tn = trd_pkt_type_name(p->type);
	uint32_t n = p->pay_len < avail ? p->pay_len : avail;

	if (tn == NULL)
		return;
	if (strcmp(tn, "rget") == 0) {
		for (uint32_t i = 0; i + TRD_WIRE_DESC_LEN <= n; i += TRD_WIRE_DESC_LEN) {
			const uint8_t *d = pay + i;
			unsigned int op = d[offsetof(struct trd_desc, op)];
			const uint8_t *c = d + offsetof(struct trd_desc, dst);
			char fb[96], ob[16];

			snprintf(ob, sizeof(ob), "op%u", op);
			printf("\tdesc %u: %s flags %s fifo %u dst %u,%u,%u inj_ctr %u rec_ctr %u"
			       " len %u\n",
			       i / TRD_WIRE_DESC_LEN,
			       op < sizeof(dump_op_names) / sizeof(dump_op_names[0]) ? dump_op_names[op]
										      : ob,
			       dump_flags_long(dump_desc_flags,
					       sizeof(dump_desc_flags) / sizeof(dump_desc_flags[0]),
					       d[offsetof(struct trd_desc, flags)], fb, sizeof(fb)),
			       d[offsetof(struct trd_desc, fifo)], c[0], c[1], c[2],
			       (unsigned int)DESC_LE(d, inj_ctr), (unsigned int)DESC_LE(d, rec_ctr),
			       (unsigned int)DESC_LE(d, len));
			printf("\t        src 0x%" PRIx64 " src_key 0x%" PRIx64 " rkey 0x%" PRIx64
			       " roff %" PRIu64 " user 0x%" PRIx64 " aux %u\n",
			       DESC_LE(d, src), DESC_LE(d, src_key), DESC_LE(d, rkey),
			       DESC_LE(d, roff), DESC_LE(d, user), (unsigned int)DESC_LE(d, aux));
		}
	} else if (strcmp(tn, "atomic") == 0 && n >= 24) {
		static const char *const aop[] = {"?", "fetch_add", "compare_swap", "swap"};

		printf("\tatomic %s operand 0x%" PRIx64 " compare 0x%" PRIx64 "\n",
		       pay[0] < 4 ? aop[pay[0]] : "?", dump_be(pay + 8, 8), dump_be(pay + 16, 8));
	} else if (strcmp(tn, "atomic_reply") == 0 && n >= 8) {
		const char *v = trd_drop_name((unsigned int)p->key);

		printf("\tverdict %s old 0x%" PRIx64 "\n", v && p->key ? v : "ok",
		       dump_be(pay, 8));
	} else if (strcmp(tn, "ack") == 0 && n != 0) {
		/* selective acknowledgement: bit k (LSB first) = sequence ack + 1 + k is held */
		printf("\tsack");
		for (uint32_t k = 0; k < n * 8; k++)
			if (pay[k / 8] & (1u << (k % 8)))
				printf(" %" PRIu64, (uint64_t)p->ack + 1 + k);
		printf("\n");
	} else if (strcmp(tn, "done") == 0) {
		const char *v = trd_drop_name((unsigned int)p->key);

		printf("\tverdict %s for msg %" PRIu64 "\n", v && p->key ? v : "ok", p->offset);
	}
}

/* The payload CRC trailer, if the header says there is one. */
static void
dump_print_crc(const struct dump_frame *f)
{
	const struct trd_pkt *p = &f->p;
	const uint8_t *c = f->data + TRD_FRAME_HLEN + p->pay_len;
	uint32_t crc;

	if (!(p->flags & TRD_HF_CRC))
		return;
	if ((uint32_t)TRD_FRAME_HLEN + p->pay_len + 4u > f->len) {
		printf("\tcrc missing\n");
		return;
	}
	crc = (uint32_t)dump_be(c, 4);
	printf("\tcrc 0x%08x (%s)\n", crc,
	       f->truncated ? "not captured"
	       : trd_wire_crc(f->data + TRD_FRAME_HLEN, p->pay_len, 0xffffffff) == crc
		       ? "correct"
		       : "incorrect");
}

static void
dump_print_verbose(const struct dump_frame *f)
{
	const struct trd_pkt *p = &f->p;
	char tb[16], fb[96];

	if (f->cls == DUMP_GOOD || f->cls == DUMP_BAD_HDR) {
		uint16_t good = dump_good_csum(f->data);

		printf("\tversion %u type %u (%s) flags 0x%04x (%s) hops %u\n", p->version, p->type,
		       dump_type_str(p->type, tb, sizeof(tb)), p->flags,
		       dump_flags_long(dump_hdr_flags, DUMP_N_HDR_FLAGS, p->flags, fb, sizeof(fb)),
		       p->hops);
		printf("\tsrc %u,%u,%u dst %u,%u,%u fifo %u counter %u csum 0x%04x", p->src[0],
		       p->src[1], p->src[2], p->dst[0], p->dst[1], p->dst[2], p->fifo, p->counter,
		       (unsigned int)dump_be(f->data + TRD_ETH_HLEN + offsetof(struct trd_hdr, csum),
					     2));
		if (trd_wire_hdr_verify(f->data + TRD_ETH_HLEN) == 0)
			printf(" (correct)\n");
		else
			printf(" (incorrect, should be 0x%04x)\n", good);
		printf("\tkey 0x%016" PRIx64 " offset %" PRIu64 " msg_len %u pay_len %u epoch %u\n",
		       p->key, p->offset, p->msg_len, p->pay_len, p->epoch);
		printf("\tmsg_id %u seq %u ack %u aux %u\n", p->msg_id, p->seq, p->ack, p->aux);
		dump_print_crc(f);
		if (f->cls == DUMP_GOOD)
			dump_print_payload(p, f->data + TRD_FRAME_HLEN,
					   f->caplen > TRD_FRAME_HLEN ? f->caplen - TRD_FRAME_HLEN : 0);
	}
	dump_hex(f->frame, f->h->caplen < f->frame_len ? f->h->caplen : f->frame_len);
}

/* ---- the VNI protocol (docs/vni.md): its messages ride in FIFO frames whose user word holds
 * TRD_VW_MAGIC; the long data of a message is engine puts into what its CTS granted ---- */

struct dump_grant {
	uint64_t rkey, roff;
	uint32_t len, msg, grant;
	uint8_t snd[3], rcv[3];
	int used;
};

#define DUMP_GRANTS 1024
static struct dump_grant dump_grants[DUMP_GRANTS];
static unsigned int dump_grant_next;

/* The VNI meaning of a message whose header is @p p and payload @p pay (@p avail bytes). */
static void
dump_print_vni(const struct trd_pkt *p, const uint8_t *pay, uint32_t avail)
{
	struct trd_vw_hdr h;

	if (avail > p->pay_len)
		avail = p->pay_len;
	if (p->type == TRD_PKT_FIFO && (p->key >> 32) == TRD_VW_MAGIC && p->offset == 0 &&
	    trd_vw_decode(pay, avail, &h) == 0) {
		printf(" | vni %s %u:%u > %u:%u msg %u", trd_vw_type_name(h.type), h.src_app,
		       h.src_proc, h.dst_app, h.dst_proc, h.msg_id);
		switch (h.type) {
		case TRD_VW_EAGER:
		case TRD_VW_RTS:
			printf(" tag 0x%" PRIx64 " len %u", h.tag, h.len);
			break;
		case TRD_VW_CTS: {
			struct dump_grant *g = &dump_grants[dump_grant_next++ % DUMP_GRANTS];

			printf(" grant %u len %u into key 0x%" PRIx64 " off %" PRIu64, h.grant_id,
			       h.len, h.rkey, h.roff);
			/* the CTS goes receiver -> sender; the data comes back the other way */
			*g = (struct dump_grant){.rkey = h.rkey, .roff = h.roff, .len = h.len,
						 .msg = h.msg_id, .grant = h.grant_id, .used = 1};
			memcpy(g->snd, p->dst, 3);
			memcpy(g->rcv, p->src, 3);
			break;
		}
		case TRD_VW_FIN:
		case TRD_VW_ABORT:
			printf(" grant %u", h.grant_id);
			break;
		case TRD_VW_WRITE:
		case TRD_VW_READ:
		case TRD_VW_ATOMIC:
			/* one-sided: the chunk's target address, its bytes, its place in the op */
			printf(" rkey 0x%" PRIx64 " at 0x%" PRIx64 " len %u (+%u of %" PRIu64 ")",
			       h.rkey, h.roff, h.len, h.grant_id, h.tag);
			break;
		case TRD_VW_ATOMIC_RESP:
			if (h.status == 0)
				printf(" ok old 0x%" PRIx64, h.data);
			else
				printf(" status %d (%s)", h.status, strerror(-h.status));
			break;
		default: /* NAK, ACK, DONE, CANCEL, WRITE_ACK, READ_RESP: a verdict */
			if (h.status == 0)
				printf(" ok");
			else
				printf(" status %d (%s)", h.status, strerror(-h.status));
			break;
		}
		return;
	}
	if (p->type == TRD_PKT_PUT) {
		for (unsigned int i = 0; i < DUMP_GRANTS; i++) {
			const struct dump_grant *g = &dump_grants[i];

			if (g->used && g->rkey == p->key && memcmp(g->snd, p->src, 3) == 0 &&
			    memcmp(g->rcv, p->dst, 3) == 0 && p->offset >= g->roff &&
			    p->offset - g->roff < g->len) {
				printf(" | vni data msg %u grant %u at %" PRIu64, g->msg, g->grant,
				       p->offset - g->roff);
				return;
			}
		}
	}
}

/* The messages of a bundle, one line each ("  [i] " and the header the message would have
 * had alone), checked as the engine checks them; a malformed entry ends the list. */
static void
dump_print_bundle(const struct dump_frame *f)
{
	const struct trd_pkt *p = &f->p;
	const uint8_t *pay = f->data + TRD_FRAME_HLEN;
	uint32_t avail = f->len > TRD_FRAME_HLEN ? f->len - TRD_FRAME_HLEN : 0, off = 0;

	if (avail > p->pay_len)
		avail = p->pay_len;
	for (uint32_t i = 0; i < p->aux; i++) {
		struct trd_pkt e;
		int cause = trd_wire_entry_decode(p, pay + off, avail - off, i, &e);

		printf("\n  [%u] ", i);
		if (cause != 0) {
			printf("malformed entry (%s)", trd_drop_name((unsigned int)cause));
			return;
		}
		dump_print_hdr_line(&e);
		dump_print_vni(&e, pay + off + TRD_ENTRY_LEN, e.pay_len);
		off += TRD_ENTRY_LEN + e.pay_len;
	}
	if (off != avail)
		printf("\n  malformed bundle (%u bytes after its last entry)", avail - off);
}

static void
dump_print_line(struct dump_state *s, const struct dump_frame *f)
{
	dump_print_time(s, f->h);
	if (s->o.ether && f->frame_len >= TRD_ETH_HLEN)
		dump_print_ether(f);
	if (f->encap)
		dump_print_ip(f);
	switch (f->cls) {
	case DUMP_GOOD:
		dump_print_hdr_line(&f->p);
		if (f->p.type == TRD_PKT_BUNDLE)
			dump_print_bundle(f);
		else
			dump_print_vni(&f->p, f->data + TRD_FRAME_HLEN,
				       f->len > TRD_FRAME_HLEN ? f->len - TRD_FRAME_HLEN : 0);
		break;
	case DUMP_BAD_HDR:
		printf("malformed (%s): ", trd_drop_name((unsigned int)f->cause));
		dump_print_hdr_line(&f->p);
		break;
	case DUMP_BAD_SHORT:
		printf("malformed (%s): %u-byte frame", trd_drop_name((unsigned int)f->cause),
		       f->len);
		break;
	case DUMP_NOT_TORUS: {
		const char *en = dump_etype_name(f->etype);

		printf("not torus: ethertype 0x%04x%s%s%s, length %u", f->etype, en ? " (" : "",
		       en ? en : "", en ? ")" : "", f->len);
		break;
	}
	}
	if (f->truncated)
		printf(" [captured %u of %u bytes]", f->h->caplen, f->frame_len);
	printf("\n");
	if (s->o.verbose) {
		png_print();
		dump_print_verbose(f);
	}
}

static const char dump_fields_header[] =
	"#n\ttime\tcaplen\tlen\tverdict\tversion\ttype\ttype_name\tflags\tsrc_x\tsrc_y\tsrc_z\t"
	"hops\tdst_x\tdst_y\tdst_z\tfifo\tcounter\tcsum\tkey\toffset\tmsg_len\tpay_len\tepoch\t"
	"msg_id\tseq\tack\taux\n";

static void
dump_print_fields(struct dump_state *s, const struct dump_frame *f)
{
	const struct trd_pkt *p = &f->p;
	long long frac = s->ns_precision ? (long long)f->h->ts.tv_usec
					 : (long long)f->h->ts.tv_usec * 1000;
	const char *verdict;
	char tb[16];

	if (f->cls == DUMP_GOOD)
		verdict = "ok";
	else if (f->cls == DUMP_NOT_TORUS)
		verdict = "not_torus";
	else
		verdict = trd_drop_name((unsigned int)f->cause);
	printf("%" PRIu64 "\t%lld.%09lld\t%u\t%u\t%s", s->seen, (long long)f->h->ts.tv_sec, frac,
	       f->h->caplen, f->len, verdict);
	if (f->cls != DUMP_GOOD && f->cls != DUMP_BAD_HDR) {
		for (int i = 0; i < 23; i++)
			printf("\t-");
		printf("\n");
		return;
	}
	printf("\t%u\t%u\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64
	       "\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
	       p->version, p->type, dump_type_str(p->type, tb, sizeof(tb)), p->flags, p->src[0],
	       p->src[1], p->src[2], p->hops, p->dst[0], p->dst[1], p->dst[2], p->fifo, p->counter,
	       (unsigned int)dump_be(f->data + TRD_ETH_HLEN + offsetof(struct trd_hdr, csum), 2),
	       p->key, p->offset, p->msg_len, p->pay_len, p->epoch, p->msg_id, p->seq, p->ack,
	       p->aux);
}

/* ---- summary ---- */

static void
dump_count_add(struct dump_count *c, uint32_t bytes)
{
	c->pkts++;
	c->bytes += bytes;
}

static struct dump_count *
dump_link_count(struct dump_state *s, const struct trd_pkt *p)
{
	uint64_t key = (uint64_t)1 << 48 | dump_be(p->src, 3) << 24 | dump_be(p->dst, 3);
	size_t i;

	if (s->links_n * 2 >= s->links_cap) {
		size_t cap = s->links_cap ? s->links_cap * 2 : 256;
		struct dump_link *t = calloc(cap, sizeof(*t));

		if (t == NULL)
			return NULL;
		for (size_t j = 0; j < s->links_cap; j++) {
			if (s->links[j].key == 0)
				continue;
			i = (size_t)(s->links[j].key * 0x9E3779B97F4A7C15ull >> 40) & (cap - 1);
			while (t[i].key != 0)
				i = (i + 1) & (cap - 1);
			t[i] = s->links[j];
		}
		free(s->links);
		s->links = t;
		s->links_cap = cap;
	}
	i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (s->links_cap - 1);
	while (s->links[i].key != 0 && s->links[i].key != key)
		i = (i + 1) & (s->links_cap - 1);
	if (s->links[i].key == 0) {
		s->links[i].key = key;
		s->links_n++;
	}
	return &s->links[i].c;
}

static void
dump_account(struct dump_state *s, const struct dump_frame *f)
{
	uint32_t b = f->len;

	dump_count_add(&s->total, b);
	switch (f->cls) {
	case DUMP_GOOD: {
		struct dump_count *lc = dump_link_count(s, &f->p);

		dump_count_add(&s->torus, b);
		dump_count_add(&s->by_type[f->p.type], b);
		if (lc != NULL)
			dump_count_add(lc, b);
		break;
	}
	case DUMP_BAD_HDR:
	case DUMP_BAD_SHORT:
		dump_count_add(&s->malformed, b);
		if (f->cause > 0 && f->cause < TRD_DROP_MAX)
			dump_count_add(&s->by_cause[f->cause], b);
		break;
	case DUMP_NOT_TORUS:
		dump_count_add(&s->not_torus, b);
		break;
	}
}

static int
dump_link_cmp(const void *a, const void *b)
{
	const struct dump_link *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static void
dump_print_summary(struct dump_state *s)
{
	char tb[16];
	size_t k = 0;

	printf("frames %" PRIu64 " bytes %" PRIu64 ": torus %" PRIu64 ", malformed %" PRIu64
	       ", not torus %" PRIu64 "\n",
	       s->total.pkts, s->total.bytes, s->torus.pkts, s->malformed.pkts, s->not_torus.pkts);
	printf("\nby type:\n  %-14s %12s %14s\n", "type", "packets", "bytes");
	for (unsigned int t = 0; t < 256; t++)
		if (s->by_type[t].pkts)
			printf("  %-14s %12" PRIu64 " %14" PRIu64 "\n",
			       dump_type_str(t, tb, sizeof(tb)), s->by_type[t].pkts,
			       s->by_type[t].bytes);
	printf("\nby link:\n  %-20s %12s %14s\n", "src -> dst", "packets", "bytes");
	for (size_t i = 0; i < s->links_cap; i++)
		if (s->links[i].key != 0)
			s->links[k++] = s->links[i];
	if (k != 0)
		qsort(s->links, k, sizeof(s->links[0]), dump_link_cmp);
	for (size_t i = 0; i < k; i++) {
		uint64_t key = s->links[i].key;
		char lb[40];

		snprintf(lb, sizeof(lb), "%u,%u,%u -> %u,%u,%u", (unsigned int)(key >> 40 & 0xff),
			 (unsigned int)(key >> 32 & 0xff), (unsigned int)(key >> 24 & 0xff),
			 (unsigned int)(key >> 16 & 0xff), (unsigned int)(key >> 8 & 0xff),
			 (unsigned int)(key & 0xff));
		printf("  %-20s %12" PRIu64 " %14" PRIu64 "\n", lb, s->links[i].c.pkts,
		       s->links[i].c.bytes);
	}
	printf("\nby drop reason:\n  %-20s %12s %14s\n", "reason", "packets", "bytes");
	for (unsigned int c = 1; c < TRD_DROP_MAX; c++)
		if (s->by_cause[c].pkts)
			printf("  %-20s %12" PRIu64 " %14" PRIu64 "\n", trd_drop_name(c),
			       s->by_cause[c].pkts, s->by_cause[c].bytes);
	if (s->not_torus.pkts)
		printf("  %-20s %12" PRIu64 " %14" PRIu64 "\n", "(not torus)", s->not_torus.pkts,
		       s->not_torus.bytes);
}

/* ---- filters ---- */

static int
dump_coord_eq(const uint8_t *c, struct trd_coord w)
{
	return c[0] == w.x && c[1] == w.y && c[2] == w.z;
}

static int
dump_match(const struct dump_opts *o, const struct dump_frame *f)
{
	const struct trd_pkt *p = &f->p;

	if (!o->any_filter)
		return 1;
	if (f->cls == DUMP_NOT_TORUS)
		return 0;
	if (o->malformed && f->cls == DUMP_GOOD)
		return 0;
	if (f->cls == DUMP_BAD_SHORT)
		/* no header: only --malformed alone selects it */
		return o->malformed && !o->have_src && !o->have_dst && !o->have_node &&
		       !o->have_type && o->fifo < 0 && o->msg < 0;
	if (o->have_src && !dump_coord_eq(p->src, o->src))
		return 0;
	if (o->have_dst && !dump_coord_eq(p->dst, o->dst))
		return 0;
	if (o->have_node && !dump_coord_eq(p->src, o->node) && !dump_coord_eq(p->dst, o->node))
		return 0;
	if (o->have_type && !o->type_sel[p->type])
		return 0;
	if (o->fifo >= 0 && p->fifo != o->fifo)
		return 0;
	if (o->msg >= 0 && p->msg_id != (uint64_t)o->msg)
		return 0;
	return 1;
}

/* ---- the loop ---- */

static void
dump_handle(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct dump_state *s = (struct dump_state *)user;
	struct dump_frame f = {.h = h, .data = bytes, .len = h->caplen};

	s->seen++;
	png_next();
	if (s->have_prog && pcap_offline_filter(&s->prog, h, bytes) == 0)
		return;
	if (h->caplen < h->len) {
		/* Truncated: decode the header against the frame's real length, with the
		 * bytes not captured as zeros. */
		uint32_t n = h->len < DUMP_MAX_FRAME ? h->len : DUMP_MAX_FRAME;

		memcpy(s->pad, bytes, h->caplen);
		memset(s->pad + h->caplen, 0, n - h->caplen);
		f.data = s->pad;
		f.len = n;
		f.truncated = 1;
	}
	dump_classify(&f);
	if (!dump_match(&s->o, &f))
		return;
	s->matched++;
	if (s->dumper != NULL)
		pcap_dump((u_char *)s->dumper, h, bytes);
	if (s->o.summary)
		dump_account(s, &f);
	else if (s->dumper == NULL || s->o.print_with_w) {
		if (s->o.fields)
			dump_print_fields(s, &f);
		else
			dump_print_line(s, &f);
	}
	if (s->o.count > 0 && s->matched >= s->o.count)
		pcap_breakloop(s->pd);
}

static void
dump_on_signal(int sig)
{
	(void)sig;
	if (dump_st != NULL && dump_st->pd != NULL)
		pcap_breakloop(dump_st->pd);
}

/* ---- command line ---- */

static int
dump_parse_coord(const char *s, struct trd_coord *c)
{
	unsigned int v[3];
	char tail;

	if (s == NULL || sscanf(s, "%u,%u,%u%c", &v[0], &v[1], &v[2], &tail) != 3 ||
	    strspn(s, "0123456789,") != strlen(s))
		return -EINVAL;
	if (v[0] > 255 || v[1] > 255 || v[2] > 255)
		return -EINVAL;
	c->x = (uint8_t)v[0];
	c->y = (uint8_t)v[1];
	c->z = (uint8_t)v[2];
	return 0;
}

/* A strict number (app_args.h) in [min, max]. */
static int
dump_parse_ll(const char *s, long long min, long long max, long long *out)
{
	uint64_t v;

	if (app_parse_u64(s, false, (uint64_t)min, (uint64_t)max, &v) != 0)
		return -EINVAL;
	*out = (long long)v;
	return 0;
}

static void
dump_parse_types(struct dump_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (copy == NULL)
		dump_usage_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		long long v;
		int found = 0;

		if (dump_parse_ll(tok, 0, 255, &v) == 0) {
			o->type_sel[v] = 1;
			continue;
		}
		for (unsigned int t = 0; t < 256; t++) {
			const char *n = trd_pkt_type_name(t);

			if (n != NULL && strcasecmp(n, tok) == 0) {
				o->type_sel[t] = 1;
				found = 1;
			}
		}
		if (!found)
			dump_usage_error("--type: unknown packet type '%s' (see --list-types)", tok);
	}
	free(copy);
	o->have_type = 1;
}

enum {
	OPT_SRC = 256,
	OPT_DST,
	OPT_NODE,
	OPT_TYPE,
	OPT_FIFO,
	OPT_MSG,
	OPT_MALFORMED,
	OPT_SUMMARY,
	OPT_FIELDS,
	OPT_PRINT,
	OPT_LIST_TYPES,
	OPT_LIST_REASONS,
	OPT_LIST_FLAGS,
	OPT_UDP_PORT,
};

static const struct option dump_longopts[] = {
	{"read", required_argument, NULL, 'r'},
	{"interface", required_argument, NULL, 'i'},
	{"snaplen", required_argument, NULL, 's'},
	{"no-promisc", no_argument, NULL, 'p'},
	{"write", required_argument, NULL, 'w'},
	{"count", required_argument, NULL, 'c'},
	{"verbose", no_argument, NULL, 'v'},
	{"ether", no_argument, NULL, 'e'},
	{"help", no_argument, NULL, 'h'},
	{"src", required_argument, NULL, OPT_SRC},
	{"dst", required_argument, NULL, OPT_DST},
	{"node", required_argument, NULL, OPT_NODE},
	{"type", required_argument, NULL, OPT_TYPE},
	{"fifo", required_argument, NULL, OPT_FIFO},
	{"msg", required_argument, NULL, OPT_MSG},
	{"malformed", no_argument, NULL, OPT_MALFORMED},
	{"summary", no_argument, NULL, OPT_SUMMARY},
	{"fields", no_argument, NULL, OPT_FIELDS},
	{"print", no_argument, NULL, OPT_PRINT},
	{"list-types", no_argument, NULL, OPT_LIST_TYPES},
	{"list-reasons", no_argument, NULL, OPT_LIST_REASONS},
	{"list-flags", no_argument, NULL, OPT_LIST_FLAGS},
	{"udp-port", required_argument, NULL, OPT_UDP_PORT},
	{NULL, 0, NULL, 0},
};

static void
dump_parse_args(struct dump_opts *o, int argc, char **argv)
{
	long long v;
	size_t blen = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->snaplen = 65535;
	o->promisc = 1;
	o->fifo = -1;
	o->msg = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:i:s:pw:c:veth", dump_longopts, NULL)) != -1) {
		switch (c) {
		case 'r': o->rfile = optarg; break;
		case 'i': o->iface = optarg; break;
		case 's':
			if (dump_parse_ll(optarg, 0, 262144, &v) != 0)
				dump_usage_error("-s: bad snap length '%s'", optarg);
			o->snaplen = v == 0 ? 65535 : (int)v;
			break;
		case 'p': o->promisc = 0; break;
		case 'w': o->wfile = optarg; break;
		case 'c':
			if (dump_parse_ll(optarg, 1, LLONG_MAX, &v) != 0)
				dump_usage_error("-c: bad count '%s'", optarg);
			o->count = v;
			break;
		case 'v': o->verbose++; break;
		case OPT_UDP_PORT:
			if (dump_parse_ll(optarg, 0, 65535, &v) != 0)
				dump_usage_error("--udp-port: bad port '%s' (0..65535)", optarg);
			dump_udp_port = (uint16_t)v;
			break;
		case 'e': o->ether = 1; break;
		case 't': o->tmode++; break;
		case 'h':
			fputs(dump_usage, stdout);
			exit(0);
		case OPT_SRC:
			if (dump_parse_coord(optarg, &o->src) != 0)
				dump_usage_error("--src: bad coordinate '%s' (want X,Y,Z)", optarg);
			o->have_src = o->any_filter = 1;
			break;
		case OPT_DST:
			if (dump_parse_coord(optarg, &o->dst) != 0)
				dump_usage_error("--dst: bad coordinate '%s' (want X,Y,Z)", optarg);
			o->have_dst = o->any_filter = 1;
			break;
		case OPT_NODE:
			if (dump_parse_coord(optarg, &o->node) != 0)
				dump_usage_error("--node: bad coordinate '%s' (want X,Y,Z)", optarg);
			o->have_node = o->any_filter = 1;
			break;
		case OPT_TYPE:
			dump_parse_types(o, optarg);
			o->any_filter = 1;
			break;
		case OPT_FIFO:
			if (dump_parse_ll(optarg, 0, 255, &v) != 0)
				dump_usage_error("--fifo: bad FIFO '%s' (0..255)", optarg);
			o->fifo = (int)v;
			o->any_filter = 1;
			break;
		case OPT_MSG:
			if (dump_parse_ll(optarg, 0, UINT32_MAX, &v) != 0)
				dump_usage_error("--msg: bad message id '%s'", optarg);
			o->msg = v;
			o->any_filter = 1;
			break;
		case OPT_MALFORMED: o->malformed = o->any_filter = 1; break;
		case OPT_SUMMARY: o->summary = 1; break;
		case OPT_FIELDS: o->fields = 1; break;
		case OPT_PRINT: o->print_with_w = 1; break;
		case OPT_LIST_TYPES:
			for (unsigned int t = 0; t < 256; t++)
				if (trd_pkt_type_name(t) != NULL)
					printf("%u\t%s\n", t, trd_pkt_type_name(t));
			exit(0);
		case OPT_LIST_REASONS:
			for (unsigned int r = 1; trd_drop_name(r) != NULL; r++)
				printf("%u\t%s\n", r, trd_drop_name(r));
			exit(0);
		case OPT_LIST_FLAGS:
			for (size_t i = 0; i < DUMP_N_HDR_FLAGS; i++)
				printf("0x%04x\t%c\t%s\n", dump_hdr_flags[i].bit,
				       dump_hdr_flags[i].letter, dump_hdr_flags[i].name);
			exit(0);
		default:
			app_getopt_error(c, argv);
		}
	}
	if ((o->rfile == NULL) == (o->iface == NULL))
		dump_usage_error("give exactly one of -r FILE and -i IFACE");
	if (o->summary && o->fields)
		dump_usage_error("--summary and --fields do not go together");
	for (int i = optind; i < argc; i++)
		blen += strlen(argv[i]) + 1;
	if (blen != 0) {
		o->bpf = calloc(1, blen);
		if (o->bpf == NULL)
			dump_usage_error("out of memory");
		for (int i = optind; i < argc; i++) {
			if (i > optind)
				strcat(o->bpf, " ");
			strcat(o->bpf, argv[i]);
		}
	}
}

static pcap_t *
dump_open(struct dump_state *s)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	pcap_t *pd;
	int rc;

	if (s->o.rfile != NULL) {
		pd = pcap_open_offline_with_tstamp_precision(s->o.rfile, PCAP_TSTAMP_PRECISION_NANO,
							     err);
		if (pd == NULL)
			fprintf(stderr, "toroid-dump: %s: %s\n", s->o.rfile, err);
		return pd;
	}
	pd = pcap_create(s->o.iface, err);
	if (pd == NULL) {
		fprintf(stderr, "toroid-dump: %s: %s\n", s->o.iface, err);
		return NULL;
	}
	pcap_set_snaplen(pd, s->o.snaplen);
	pcap_set_promisc(pd, s->o.promisc);
	pcap_set_immediate_mode(pd, 1);
	pcap_set_timeout(pd, 100);
	pcap_set_tstamp_precision(pd, PCAP_TSTAMP_PRECISION_NANO); /* micro if refused */
	rc = pcap_activate(pd);
	if (rc < 0) {
		fprintf(stderr, "toroid-dump: %s: %s\n", s->o.iface,
			rc == PCAP_ERROR ? pcap_geterr(pd) : pcap_statustostr(rc));
		pcap_close(pd);
		return NULL;
	}
	if (rc > 0)
		fprintf(stderr, "toroid-dump: %s: warning: %s\n", s->o.iface, pcap_statustostr(rc));
	return pd;
}

int
main(int argc, char **argv)
{
	struct dump_state *s = calloc(1, sizeof(*s));
	const char *what;
	int rc, ret = 0;

	if (s == NULL) {
		fprintf(stderr, "toroid-dump: out of memory\n");
		return EXIT_BADFILE;
	}
	dump_parse_args(&s->o, argc, argv);
	what = s->o.rfile ? s->o.rfile : s->o.iface;
	s->pd = dump_open(s);
	if (s->pd == NULL)
		return EXIT_BADFILE;
	if (pcap_datalink(s->pd) != DLT_EN10MB) {
		fprintf(stderr, "toroid-dump: %s: link type %s: only Ethernet (EN10MB) is decoded\n",
			what, pcap_datalink_val_to_name(pcap_datalink(s->pd)));
		pcap_close(s->pd);
		return EXIT_BADFILE;
	}
	s->ns_precision = pcap_get_tstamp_precision(s->pd) == PCAP_TSTAMP_PRECISION_NANO;
	if (s->o.bpf != NULL) {
		if (pcap_compile(s->pd, &s->prog, s->o.bpf, 1, PCAP_NETMASK_UNKNOWN) != 0)
			dump_usage_error("bad filter expression '%s': %s", s->o.bpf,
					 pcap_geterr(s->pd));
		/* live: in the kernel; a file: frame by frame, counting every frame */
		if (s->o.iface == NULL) {
			s->have_prog = 1;
		} else {
			rc = pcap_setfilter(s->pd, &s->prog);
			pcap_freecode(&s->prog);
			if (rc != 0) {
				fprintf(stderr, "toroid-dump: cannot set the filter: %s\n",
					pcap_geterr(s->pd));
				pcap_close(s->pd);
				return EXIT_BADFILE;
			}
		}
	}
	if (s->o.wfile != NULL) {
		s->dumper = pcap_dump_open(s->pd, s->o.wfile);
		if (s->dumper == NULL) {
			fprintf(stderr, "toroid-dump: %s: %s\n", s->o.wfile, pcap_geterr(s->pd));
			pcap_close(s->pd);
			return EXIT_BADFILE;
		}
	}
	dump_st = s;
	signal(SIGINT, dump_on_signal);
	signal(SIGTERM, dump_on_signal);
	if (s->o.fields && (s->dumper == NULL || s->o.print_with_w))
		fputs(dump_fields_header, stdout);

	if (s->o.verbose)
		png_open(s->o.rfile);
	rc = pcap_loop(s->pd, -1, dump_handle, (u_char *)s);
	png_close();
	if (rc == PCAP_ERROR) {
		fflush(stdout);
		fprintf(stderr, "toroid-dump: %s: %s\n", what, pcap_geterr(s->pd));
		ret = EXIT_BADFILE;
	}
	if (s->o.summary)
		dump_print_summary(s);
	if (s->dumper != NULL) {
		if (pcap_dump_flush(s->dumper) != 0) {
			fprintf(stderr, "toroid-dump: %s: write error\n", s->o.wfile);
			ret = EXIT_BADFILE;
		}
		pcap_dump_close(s->dumper);
	}
	if (s->o.iface != NULL) {
		struct pcap_stat ps;

		if (pcap_stats(s->pd, &ps) == 0)
			fprintf(stderr, "%" PRIu64 " frames seen, %lld shown, %u dropped by the kernel\n",
				s->seen, s->matched, ps.ps_drop);
	}
	pcap_close(s->pd);
	if (s->have_prog)
		pcap_freecode(&s->prog);
	if (fflush(stdout) != 0)
		ret = EXIT_BADFILE;
	free(s->links);
	free(s->o.bpf);
	free(s);
	return ret;
}
