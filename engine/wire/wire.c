/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The torus wire format: encode, checksum, and the one receive parser. This file knows
 * nothing of the rest of the engine so that tools can decode with it and fuzzers can run it.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>

#include <toroid/wire.h>

static const char *const pkt_type_names[TRD_PKT_MAX] = {
#define TRD_PKT_NAME_(e, n, v) [v] = n,
	TRD_PKT_TYPES(TRD_PKT_NAME_)
#undef TRD_PKT_NAME_
};

static const char *const drop_names[] = {"none",
#define TRD_DROP_NAME_(e, n) n,
					 TRD_DROP_CAUSES(TRD_DROP_NAME_)
#undef TRD_DROP_NAME_
};
_Static_assert(sizeof(drop_names) / sizeof(drop_names[0]) == TRD_DROP_MAX,
	       "one name per drop cause");

const char *
trd_pkt_type_name(unsigned int type)
{
	return type < TRD_PKT_MAX ? pkt_type_names[type] : NULL;
}

const char *
trd_drop_name(unsigned int cause)
{
	return cause < TRD_DROP_MAX ? drop_names[cause] : NULL;
}

uint16_t
trd_wire_hdr_verify(const void *hdr)
{
	return trd_hdr_sum(hdr);
}

void
trd_wire_encode(void *out, const struct trd_pkt *p)
{
	trd_hdr_encode(out, p);
	trd_hdr_seal(out);
}

/* Parse the torus header of a frame whose Ethernet header starts at @p f (@p eth: check its
 * EtherType; an encapsulated frame is parsed from 28 bytes before its torus header, where the
 * EtherType is not). */
static inline __attribute__((always_inline)) int
parse(const uint8_t *f, uint32_t len, struct trd_pkt *p, bool eth)
{
	const struct trd_hdr *h;
	uint16_t etype;

	if (f == NULL || len < TRD_FRAME_HLEN)
		return TRD_DROP_SHORT_FRAME;
	etype = (uint16_t)(f[12] << 8 | f[13]);
	if (eth && etype != TRD_ETHERTYPE)
		return TRD_DROP_BAD_ETHERTYPE;
	h = (const struct trd_hdr *)(f + TRD_ETH_HLEN);
	if (h->version != TRD_WIRE_VERSION)
		return TRD_DROP_BAD_VERSION;
	if (h->type == 0 || h->type >= TRD_PKT_MAX)
		return TRD_DROP_BAD_TYPE;
	if (trd_wire_hdr_verify(h) != 0)
		return TRD_DROP_BAD_CHECKSUM;
	trd_hdr_decode(h, p);
	/* the flags that say how a packet is carried, not what it is */
	const uint16_t carry = TRD_HF_CRC | TRD_HF_PROOF | TRD_HF_LANE;

	/* the flags of the session exchange, on acks only */
	const uint16_t sess = TRD_HF_PROBE | TRD_HF_CHAL | TRD_HF_ECHO;

	if ((p->flags & ~TRD_HF_MASK) != 0 || (p->seq != 0 && p->epoch == 0) ||
	    ((p->flags & sess) && p->type != TRD_PKT_ACK) ||
	    ((p->flags & TRD_HF_CPL) && (p->flags & TRD_HF_ACKREQ)) ||
	    ((p->flags & TRD_HF_CHAL) && (p->flags & TRD_HF_ECHO)) ||
	    ((p->flags & TRD_HF_PROOF) && p->seq == 0 && p->type != TRD_PKT_ACK))
		return TRD_DROP_BAD_FIELD; /* (a session's token: in its frames and acks only) */
	/* an echo names the session it starts and where it starts */
	if ((p->flags & TRD_HF_ECHO) && (p->epoch == 0 || p->aux == 0))
		return TRD_DROP_BAD_FIELD;
	/* aux names an operation of the origin: only where one is involved */
	if (p->aux != 0 && !(p->flags & (TRD_HF_CPL | TRD_HF_ACKREQ | TRD_HF_ECHO)) &&
	    p->type != TRD_PKT_DONE && p->type != TRD_PKT_ATOMIC &&
	    p->type != TRD_PKT_ATOMIC_REPLY && p->type != TRD_PKT_BUNDLE && p->type != TRD_PKT_COMB)
		return TRD_DROP_BAD_FIELD;
	/* ... and where one is involved, it names one: a frame that asks for a verdict (ACKREQ)
	 * gets one carrying its aux, and a verdict with aux 0 is refused here (below), so it
	 * would be resent for ever in its session; a completion of id 0 completes nothing */
	if ((p->flags & (TRD_HF_CPL | TRD_HF_ACKREQ)) && p->aux == 0)
		return TRD_DROP_BAD_FIELD;
	if ((uint32_t)p->pay_len + TRD_TRAILER_LEN(p->flags) > len - TRD_FRAME_HLEN)
		return TRD_DROP_BAD_LENGTH;
	/* The payload lies inside the message, whatever the type. */
	if (p->pay_len > p->msg_len && p->type != TRD_PKT_PUT)
		return TRD_DROP_BAD_LENGTH;
	switch (p->type) {
	case TRD_PKT_PUT:
		/* offset is a region offset: the region check happens in the engine, but the
		 * arithmetic must not wrap. */
		if (p->offset > UINT64_MAX - p->pay_len)
			return TRD_DROP_BAD_LENGTH;
		break;
	case TRD_PKT_FIFO:
		if ((p->flags & TRD_HF_CPL) && p->msg_len != 0)
			return TRD_DROP_BAD_LENGTH; /* a FIFO completion is an empty message */
		if (p->offset > p->msg_len || p->pay_len > p->msg_len - p->offset)
			return TRD_DROP_BAD_LENGTH;
		if (p->pay_len == 0 && p->msg_len != 0)
			return TRD_DROP_BAD_LENGTH;
		break;
	case TRD_PKT_RGET:
		/* A remote get is one packet of whole descriptors. */
		if (p->offset != 0 || p->pay_len != p->msg_len || p->pay_len == 0 ||
		    p->pay_len % TRD_WIRE_DESC_LEN != 0 ||
		    (p->flags & ~(TRD_HF_ACKREQ | carry)) != TRD_HF_ALL)
			return TRD_DROP_BAD_LENGTH;
		break;
	case TRD_PKT_ACK:
		/* unsequenced; payload: nothing or the SACK bitmap */
		if ((p->pay_len != 0 && p->pay_len != TRD_SACK_BYTES) || p->msg_len != p->pay_len ||
		    p->seq != 0 || (p->flags & (TRD_HF_CPL | TRD_HF_ACKREQ)))
			return TRD_DROP_BAD_LENGTH;
		break;
	case TRD_PKT_DONE:
		/* key is the verdict (a drop cause, 0 for success), offset the message id */
		if (p->pay_len != 0 || p->msg_len != 0 || (p->flags & ~carry) != TRD_HF_ALL ||
		    p->aux == 0)
			return TRD_DROP_BAD_LENGTH;
		if (p->key >= TRD_DROP_MAX)
			return TRD_DROP_BAD_FIELD;
		break;
	case TRD_PKT_ATOMIC:
		if (p->pay_len != 24 || p->msg_len != 24 || (p->flags & ~carry) != TRD_HF_ALL ||
		    p->aux == 0)
			return TRD_DROP_BAD_LENGTH;
		break;
	case TRD_PKT_ATOMIC_REPLY:
		if (p->pay_len != 8 || p->msg_len != 8 || (p->flags & ~carry) != TRD_HF_ALL ||
		    p->aux == 0)
			return TRD_DROP_BAD_LENGTH;
		if (p->key >= TRD_DROP_MAX)
			return TRD_DROP_BAD_FIELD;
		break;
	case TRD_PKT_BUNDLE:
		/* whole messages, aux of them (at least two), behind entry headers that the
		 * engine checks one by one (trd_wire_entry_decode); the header names no region,
		 * counter or FIFO of its own */
		if ((p->flags & ~carry) != TRD_HF_ALL || p->pay_len != p->msg_len || p->aux < 2 ||
		    p->aux > TRD_BUNDLE_MAX || p->aux > p->pay_len / TRD_ENTRY_LEN)
			return TRD_DROP_BAD_LENGTH;
		if (p->key != 0 || p->offset != 0 || p->counter != 0 || p->fifo != 0)
			return TRD_DROP_BAD_FIELD;
		break;
	case TRD_PKT_COMB:
		/* one piece of an engine collective: aux is its root's rank (any value here) */
		if ((p->flags & ~carry) != TRD_HF_ALL)
			return TRD_DROP_BAD_FIELD;
		return trd_comb_check(p);
	default:
		return TRD_DROP_BAD_TYPE;
	}
	return 0;
}

int
trd_wire_parse(const void *frame, uint32_t len, struct trd_pkt *p)
{
	return parse(frame, len, p, true);
}

static inline uint16_t
be16_at(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

int
trd_wire_udp_check(const void *frame, uint32_t len, uint16_t port)
{
	const uint8_t *f = frame, *ip, *udp;
	uint32_t sum = 0;
	uint16_t tot, ulen;

	if (frame == NULL || len < TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN)
		return TRD_DROP_SHORT_FRAME;
	if (be16_at(f + 12) != 0x0800)
		return TRD_DROP_BAD_ETHERTYPE;
	ip = f + TRD_ETH_HLEN;
	udp = ip + 20;
	/* IPv4 without options, UDP, not a fragment, to our port */
	if (ip[0] != 0x45 || ip[9] != 17 || (be16_at(ip + 6) & 0x3fff) != 0)
		return TRD_DROP_BAD_ENCAP;
	if (be16_at(udp + 2) != (port != 0 ? port : TRD_UDP_PORT))
		return TRD_DROP_BAD_ENCAP;
	for (unsigned int i = 0; i < 20; i += 2)
		sum += be16_at(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	if (sum != 0xffff)
		return TRD_DROP_BAD_ENCAP; /* IPv4 header checksum */
	tot = be16_at(ip + 2);
	ulen = be16_at(udp + 4);
	/* the datagram lies inside the frame (Ethernet padding may follow it) */
	if (tot < 20 + 8 + TRD_HDR_LEN || tot > len - TRD_ETH_HLEN || ulen != tot - 20)
		return TRD_DROP_BAD_ENCAP;
	return 0;
}

static inline void
be16_put(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void
be32_put(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline uint32_t
be32_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

int
trd_wire_arp_build(void *frame, uint32_t room, const uint8_t dst[6], const struct trd_arp *a)
{
	uint8_t *f = frame, *m;

	if (frame == NULL || dst == NULL || a == NULL ||
	    (a->op != TRD_ARP_REQUEST && a->op != TRD_ARP_REPLY))
		return -EINVAL;
	if (room < TRD_ARP_FRAME_LEN)
		return -ENOSPC;
	memset(f, 0, TRD_ARP_FRAME_LEN);
	memcpy(f, dst, 6);
	memcpy(f + 6, a->sha, 6);
	be16_put(f + 12, TRD_ETHERTYPE_ARP);
	m = f + TRD_ETH_HLEN;
	be16_put(m, 1);          /* hardware: Ethernet */
	be16_put(m + 2, 0x0800); /* protocol: IPv4 */
	m[4] = 6;
	m[5] = 4;
	be16_put(m + 6, a->op);
	memcpy(m + 8, a->sha, 6);
	be32_put(m + 14, a->spa);
	memcpy(m + 18, a->tha, 6);
	be32_put(m + 24, a->tpa);
	return TRD_ARP_FRAME_LEN;
}

int
trd_wire_arp_parse(const void *frame, uint32_t len, struct trd_arp *a)
{
	const uint8_t *f = frame, *m;
	static const uint8_t zero[6];

	if (frame == NULL || a == NULL)
		return -EINVAL;
	if (len < TRD_ARP_MIN_LEN || be16_at(f + 12) != TRD_ETHERTYPE_ARP)
		return -EBADMSG;
	m = f + TRD_ETH_HLEN;
	if (be16_at(m) != 1 || be16_at(m + 2) != 0x0800 || m[4] != 6 || m[5] != 4)
		return -EBADMSG;
	a->op = be16_at(m + 6);
	if (a->op != TRD_ARP_REQUEST && a->op != TRD_ARP_REPLY)
		return -EBADMSG;
	/* the sender is a station: unicast, not zero, and the one that sent the frame */
	if ((m[8] & 1) != 0 || memcmp(m + 8, zero, 6) == 0 || memcmp(m + 8, f + 6, 6) != 0)
		return -EBADMSG;
	memcpy(a->sha, m + 8, 6);
	a->spa = be32_at(m + 14);
	memcpy(a->tha, m + 18, 6);
	a->tpa = be32_at(m + 24);
	return 0;
}

int
trd_wire_parse_any(const void *frame, uint32_t len, uint16_t udp_port, struct trd_pkt *p,
		   uint32_t *off)
{
	const uint8_t *f = frame;
	int rc;

	if (frame != NULL && len >= TRD_ETH_HLEN && be16_at(f + 12) == 0x0800) {
		rc = trd_wire_udp_check(frame, len, udp_port);
		if (rc != 0)
			return rc;
		/* the datagram's end, not the frame's: Ethernet padding is not payload */
		len = TRD_ETH_HLEN + be16_at(f + TRD_ETH_HLEN + 2);
		if (off != NULL)
			*off = TRD_ETH_HLEN + TRD_UDP_ENCAP_LEN;
		return parse(f + TRD_UDP_ENCAP_LEN, len - TRD_UDP_ENCAP_LEN, p, false);
	}
	if (off != NULL)
		*off = TRD_ETH_HLEN;
	return parse(frame, len, p, true);
}

uint32_t
trd_wire_crc(const void *payload, uint32_t len, uint32_t init)
{
	const uint8_t *p = payload;

	/* rte_hash_crc() loads 8 bytes at a time through a uint64_t pointer: start it on an
	 * aligned address (a misaligned load is undefined behaviour; the CRC is the same) */
	while (len != 0 && ((uintptr_t)p & 7) != 0) {
		init = rte_hash_crc_1byte(*p++, init);
		len--;
	}
	return rte_hash_crc(p, len, init);
}

int
trd_wire_crc_check(const void *frame, uint32_t len, const struct trd_pkt *p)
{
	const uint8_t *f = frame;
	uint32_t want;

	if (!(p->flags & TRD_HF_CRC))
		return 0;
	if ((uint32_t)TRD_FRAME_HLEN + p->pay_len + 4u > len)
		return TRD_DROP_BAD_LENGTH;
	f += TRD_FRAME_HLEN;
	want = (uint32_t)f[p->pay_len] << 24 | (uint32_t)f[p->pay_len + 1] << 16 |
	       (uint32_t)f[p->pay_len + 2] << 8 | f[p->pay_len + 3];
	return trd_wire_crc(f, p->pay_len, 0xffffffff) == want ? 0 : TRD_DROP_BAD_CRC;
}

int
trd_wire_proof(const void *frame, uint32_t len, const struct trd_pkt *p, uint64_t *token)
{
	uint32_t off = TRD_FRAME_HLEN + p->pay_len + ((p->flags & TRD_HF_CRC) ? 4u : 0u);
	uint64_t v;

	if (!(p->flags & TRD_HF_PROOF) || off + TRD_PROOF_LEN > len)
		return TRD_DROP_BAD_LENGTH;
	memcpy(&v, (const uint8_t *)frame + off, sizeof(v));
	*token = trd_be64(v);
	return 0;
}
