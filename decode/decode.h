/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame decoder of toroid-dump, as a library for the tool, the fuzzers and the tests:
 * what a captured frame is (torus header, IPv4/UDP framing, bundle entries, the VNI protocol
 * riding in FIFO messages) and its tcpdump-style text. It decodes with the wire layer's codec
 * (<toroid/wire.h>, <toroid/vni_wire.h>, engine/wire) and nothing else of the engine: no EAL,
 * no libpcap. Every input is untrusted; no call reads outside the bytes it is given.
 */
#ifndef TRD_DECODE_H
#define TRD_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <toroid/wire.h>

/* A header flag's name: bit, letter (the short form "[FL]"), name (the long form). */
struct dec_flag {
	uint16_t bit;
	char letter;
	const char *name;
};

/* The header flags, the one table of them (toroid-dump --list-flags). */
extern const struct dec_flag dec_hdr_flags[];
extern const size_t dec_n_hdr_flags;

/* What one frame is. */
enum dec_class {
	DEC_GOOD = 0,  /* trd_wire_parse() accepts it */
	DEC_BAD_HDR,   /* torus EtherType, whole header, rejected: fields shown raw */
	DEC_BAD_SHORT, /* torus EtherType (or too short to tell), no whole header */
	DEC_NOT_TORUS, /* another EtherType */
};

/* One frame. The caller sets data, len, wire_caplen and truncated; dec_classify() the rest. */
struct dec_frame {
	const uint8_t *data; /* len bytes: a truncated capture is padded with zeros; an
			      * encapsulated frame: 28 bytes in, so that the torus header is at
			      * data + 14 as in a plain frame */
	uint32_t len;
	uint32_t wire_caplen; /* bytes captured of the frame (pcap's caplen) */
	const uint8_t *frame; /* the frame as captured (data before the shift) */
	uint32_t frame_len;
	uint32_t caplen; /* bytes captured, counted from data */
	int encap;       /* carried over IPv4/UDP */
	int truncated;
	enum dec_class cls;
	int cause;        /* trd_wire_parse() verdict */
	uint16_t etype;   /* 0 if the frame is shorter than an Ethernet header */
	struct trd_pkt p; /* valid for GOOD and BAD_HDR */
};

/* A VNI CTS grant seen on the wire, so that the puts into it are shown as the message's data. */
struct dec_grant {
	uint64_t rkey, roff;
	uint32_t len, msg, grant;
	uint8_t snd[3], rcv[3];
	int used;
};

#define DEC_GRANTS 1024

/* A decoder: where it prints, which UDP port it looks inside, the grants it has seen. */
struct dec_ctx {
	FILE *out;
	uint16_t udp_port; /* of encapsulated torus frames; 0: not decoded */
	unsigned int grant_next;
	struct dec_grant grants[DEC_GRANTS];
};

/* Prints to @p out, looks inside UDP port TRD_UDP_PORT, no grants seen. */
void dec_init(struct dec_ctx *d, FILE *out);

/* Decides what @p f is (its class, verdict and header), as the engine would. */
void dec_classify(const struct dec_ctx *d, struct dec_frame *f);

/* The one-line decode after the timestamp, without the newline: Ethernet addresses if
 * @p ether, the IPv4/UDP wrapper, the header (every entry of a bundle), the VNI meaning,
 * the verdict of a malformed frame, the bytes not captured. */
void dec_print_line(struct dec_ctx *d, const struct dec_frame *f, int ether);

/* Every header field, the payload's structure and a hex dump of the frame (-v). */
void dec_print_verbose(const struct dec_ctx *d, const struct dec_frame *f);

/* The --fields line from the caplen column on, newline included. */
void dec_print_fields(const struct dec_ctx *d, const struct dec_frame *f);

/* The column names of --fields, newline included. */
extern const char dec_fields_header[];

/* A type's name, or "type<N>" in @p buf. */
const char *dec_type_str(unsigned int type, char *buf, size_t n);

/* @p n bytes (at most 8) in network byte order. */
uint64_t dec_be(const uint8_t *p, unsigned int n);

#endif /* TRD_DECODE_H */
