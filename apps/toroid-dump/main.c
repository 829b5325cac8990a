/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-dump: decode torus traffic from a pcap/pcapng file or a live interface (libpcap),
 * tcpdump-style. The decoder is decode/ (the engine's own trd_wire_parse() underneath); this file
 * holds the options, the capture loop, pcapng interfaces, filters and --summary; no EAL.
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
#include "decode.h"
#include "dump.h"

#define EXIT_BADFILE 1 /* cannot open or read the input, cannot write the output */
#define EXIT_USAGE   2 /* the command line is wrong */

#define DUMP_MAX_FRAME 262144

static const char dump_usage[] =
	"usage: toroid-dump -r FILE | -i IFACE [OPTIONS] [BPF EXPRESSION]\n"
	"       toroid-dump --attach PREFIX|SOCKET -w FILE [-s N] [-C SIZE [-W N]]\n"
	"                   [--limit SIZE|none] [--duration S] [--engine-node NODE]\n"
	"                   [--type T,..] [--src|--dst|--node X,Y,Z] [BPF EXPR]\n"
	"       toroid-dump --attach PREFIX|SOCKET --status | --rotate | --stop\n"
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
	"Attached to a running engine (its EAL --file-prefix, or its telemetry socket): the\n"
	"engine records its frames into FILE (pcapng, written by the engine) until SIGINT or\n"
	"--duration; works without hugepages, where dpdk-dumpcap cannot attach. -C SIZE starts\n"
	"FILE.1, FILE.2, ... (-W N: a ring FILE.0 .. FILE.N-1), --limit stops recording when the\n"
	"files would pass SIZE (default 1G); the BPF expression and --type, --src, --dst,\n"
	"--node (made BPF) are applied by the engine.\n"
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
	int fifo;      /* -1: any */
	long long msg; /* -1: any */
	int malformed;
	uint16_t udp_port; /* of encapsulated torus frames (--udp-port; 0: not decoded) */
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
	struct dec_ctx dec;
	pcap_t *pd;
	pcap_dumper_t *dumper;
	/* a file's BPF filter, run here so that frame numbers stay the file's */
	struct bpf_program prog;
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

#define PCAPNG_MAX_IFS   4096
#define PCAPNG_MAX_BLOCK (16u << 20)

struct pcapng_side {
	FILE *f;
	int swap; /* the section's byte order is not ours */
	unsigned int n_ifs;
	char *ifname[PCAPNG_MAX_IFS]; /* if_name of each interface of the section, or NULL */
	uint8_t *buf;
	/* the current packet */
	int have;
	uint32_t ifid;
	int dir; /* 0 unknown, 1 inbound, 2 outbound (epb_flags bits 0-1) */
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
		printf(", %s", png.dir == 1   ? "inbound"
			       : png.dir == 2 ? "outbound"
					      : "direction 3");
	printf("\n");
}

#define dump_usage_error app_usage_error /* one line on stderr, exit 2 */

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

/* One frame's line: the time, the decode, and with -v the pcapng interface and every field. */
static void
dump_print_line(struct dump_state *s, const struct pcap_pkthdr *h, const struct dec_frame *f)
{
	dump_print_time(s, h);
	dec_print_line(&s->dec, f, s->o.ether);
	printf("\n");
	if (s->o.verbose) {
		png_print();
		dec_print_verbose(&s->dec, f);
	}
}

/* One frame's --fields line: its number and time, then the decoder's columns. */
static void
dump_print_fields(struct dump_state *s, const struct pcap_pkthdr *h, const struct dec_frame *f)
{
	long long frac =
		s->ns_precision ? (long long)h->ts.tv_usec : (long long)h->ts.tv_usec * 1000;

	printf("%" PRIu64 "\t%lld.%09lld\t", s->seen, (long long)h->ts.tv_sec, frac);
	dec_print_fields(&s->dec, f);
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
	uint64_t key = (uint64_t)1 << 48 | dec_be(p->src, 3) << 24 | dec_be(p->dst, 3);
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
dump_account(struct dump_state *s, const struct dec_frame *f)
{
	uint32_t b = f->len;

	dump_count_add(&s->total, b);
	switch (f->cls) {
	case DEC_GOOD: {
		struct dump_count *lc = dump_link_count(s, &f->p);

		dump_count_add(&s->torus, b);
		dump_count_add(&s->by_type[f->p.type], b);
		if (lc != NULL)
			dump_count_add(lc, b);
		break;
	}
	case DEC_BAD_HDR:
	case DEC_BAD_SHORT:
		dump_count_add(&s->malformed, b);
		if (f->cause > 0 && f->cause < TRD_DROP_MAX)
			dump_count_add(&s->by_cause[f->cause], b);
		break;
	case DEC_NOT_TORUS:
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
			       dec_type_str(t, tb, sizeof(tb)), s->by_type[t].pkts,
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
dump_match(const struct dump_opts *o, const struct dec_frame *f)
{
	const struct trd_pkt *p = &f->p;

	if (!o->any_filter)
		return 1;
	if (f->cls == DEC_NOT_TORUS)
		return 0;
	if (o->malformed && f->cls == DEC_GOOD)
		return 0;
	if (f->cls == DEC_BAD_SHORT)
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
	struct dec_frame f = {.data = bytes, .len = h->caplen, .wire_caplen = h->caplen};

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
	dec_classify(&s->dec, &f);
	if (!dump_match(&s->o, &f))
		return;
	s->matched++;
	if (s->dumper != NULL)
		pcap_dump((u_char *)s->dumper, h, bytes);
	if (s->o.summary)
		dump_account(s, &f);
	else if (s->dumper == NULL || s->o.print_with_w) {
		if (s->o.fields)
			dump_print_fields(s, h, &f);
		else
			dump_print_line(s, h, &f);
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

int
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

int
dump_parse_type(const char *s)
{
	uint64_t v;

	if (app_parse_u64(s, false, 0, 255, &v) == 0)
		return (int)v;
	for (unsigned int t = 0; t < 256; t++) {
		const char *n = trd_pkt_type_name(t);

		if (n != NULL && strcasecmp(n, s) == 0)
			return (int)t;
	}
	return -EINVAL;
}

static void
dump_parse_types(struct dump_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (copy == NULL)
		dump_usage_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		int t = dump_parse_type(tok);

		if (t < 0)
			dump_usage_error("--type: unknown packet type '%s' (see --list-types)",
					 tok);
		o->type_sel[t] = 1;
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
	uint64_t v;
	size_t blen = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->snaplen = 65535;
	o->promisc = 1;
	o->fifo = -1;
	o->msg = -1;
	o->udp_port = TRD_UDP_PORT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:i:s:pw:c:veth", dump_longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->rfile = optarg;
			break;
		case 'i':
			o->iface = optarg;
			break;
		case 's':
			v = app_opt_u64("-s", optarg, 0, 262144);
			o->snaplen = v == 0 ? 65535 : (int)v;
			break;
		case 'p':
			o->promisc = 0;
			break;
		case 'w':
			o->wfile = optarg;
			break;
		case 'c':
			o->count = (long long)app_opt_u64("-c", optarg, 1, LLONG_MAX);
			break;
		case 'v':
			o->verbose++;
			break;
		case OPT_UDP_PORT:
			o->udp_port = (uint16_t)app_opt_u64("--udp-port", optarg, 0, 65535);
			break;
		case 'e':
			o->ether = 1;
			break;
		case 't':
			o->tmode++;
			break;
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
				dump_usage_error("--node: bad coordinate '%s' (want X,Y,Z)",
						 optarg);
			o->have_node = o->any_filter = 1;
			break;
		case OPT_TYPE:
			dump_parse_types(o, optarg);
			o->any_filter = 1;
			break;
		case OPT_FIFO:
			o->fifo = (int)app_opt_u64("--fifo", optarg, 0, 255);
			o->any_filter = 1;
			break;
		case OPT_MSG:
			o->msg = (long long)app_opt_u64("--msg", optarg, 0, UINT32_MAX);
			o->any_filter = 1;
			break;
		case OPT_MALFORMED:
			o->malformed = o->any_filter = 1;
			break;
		case OPT_SUMMARY:
			o->summary = 1;
			break;
		case OPT_FIELDS:
			o->fields = 1;
			break;
		case OPT_PRINT:
			o->print_with_w = 1;
			break;
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
			for (size_t i = 0; i < dec_n_hdr_flags; i++)
				printf("0x%04x\t%c\t%s\n", dec_hdr_flags[i].bit,
				       dec_hdr_flags[i].letter, dec_hdr_flags[i].name);
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

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--attach") == 0 || strncmp(argv[i], "--attach=", 9) == 0) {
			free(s);
			return dump_attach_main(argc, argv);
		}
	if (s == NULL) {
		fprintf(stderr, "toroid-dump: out of memory\n");
		return EXIT_BADFILE;
	}
	dump_parse_args(&s->o, argc, argv);
	dec_init(&s->dec, stdout);
	s->dec.udp_port = s->o.udp_port;
	what = s->o.rfile ? s->o.rfile : s->o.iface;
	s->pd = dump_open(s);
	if (s->pd == NULL)
		return EXIT_BADFILE;
	if (pcap_datalink(s->pd) != DLT_EN10MB) {
		fprintf(stderr,
			"toroid-dump: %s: link type %s: only Ethernet (EN10MB) is decoded\n", what,
			pcap_datalink_val_to_name(pcap_datalink(s->pd)));
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
		fputs(dec_fields_header, stdout);

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
			fprintf(stderr,
				"%" PRIu64 " frames seen, %lld shown, %u dropped by the kernel\n",
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
