/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid wire format: Ethernet II, EtherType 0x88B5, then a fixed 56-byte torus header,
 * then the payload. All multi-byte fields are big-endian (network order). See
 * docs/wire-format.md for the field-by-field description.
 *
 * This header and engine/wire/wire.c know nothing of the rest of the engine: the parser can be
 * used by tools (toroid-dump) and fuzzed on its own.
 */
#ifndef TOROID_WIRE_H
#define TOROID_WIRE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** EtherType of torus frames (IEEE 802 local experimental EtherType 1). */
#define TRD_ETHERTYPE 0x88B5
/** Version carried in every header. */
#define TRD_WIRE_VERSION 1
/** Length of the Ethernet II header that precedes the torus header. */
#define TRD_ETH_HLEN 14
/**
 * UDP destination port of torus frames carried over IPv4/UDP (docs/wire-format.md,
 * "Over IP networks"): 0x88B5 = 34997, the EtherType's value.
 */
#define TRD_UDP_PORT 34997
/** IPv4 (no options) and UDP headers between the Ethernet and the torus header. */
#define TRD_UDP_ENCAP_LEN 28
/** Length of the torus header. */
#define TRD_HDR_LEN 56
/** Ethernet + torus header. */
#define TRD_FRAME_HLEN (TRD_ETH_HLEN + TRD_HDR_LEN)
/**
 * Size of one descriptor carried by a remote get. The payload of a remote get is an array of
 * struct trd_desc (include/toroid/toroid.h) in little-endian byte order: the one place the
 * wire is not big-endian, since the target copies descriptors straight into its FIFO.
 */
#define TRD_WIRE_DESC_LEN 64

/**
 * Packet types: X(ENUM, name, value). The engine keeps per-type tables indexed by the value
 * (checked at build time against TRD_PKT_MAX).
 */
#define TRD_PKT_TYPES(X)                                                                           \
	X(PUT, "put", 1)   /* direct put: payload written to (key, offset) */                      \
	X(FIFO, "fifo", 2) /* memory FIFO: payload is part of a message for a reception FIFO */    \
	X(RGET, "rget", 3) /* remote get: payload is descriptors to inject at the target */        \
	X(ACK, "ack", 4)   /* reliability: cumulative ack, optional SACK bitmap payload */         \
	X(DONE, "done", 5) /* a target's verdict on a message that asked for one (ACKREQ) */       \
	X(ATOMIC, "atomic", 6) /* a 64-bit atomic on (key, offset); payload: op, operands */       \
	X(ATOMIC_REPLY, "atomic_reply", 7) /* the verdict and the old value of an atomic */        \
	X(BUNDLE, "bundle", 8) /* several whole put/FIFO messages, each behind a trd_wire_entry */ \
	X(COMB, "comb", 9)     /* a piece of an engine collective, up or down its tree */

/** Packet type values. */
enum trd_pkt_type {
#define TRD_PKT_ENUM_(e, n, v) TRD_PKT_##e = v,
	TRD_PKT_TYPES(TRD_PKT_ENUM_)
#undef TRD_PKT_ENUM_
	/** one past the largest type value */
	TRD_PKT_MAX
};

/**
 * Header flags: X(ENUM, letter, name, bit). The one list of them: the engine, toroid-dump
 * (its letters and names, `toroid-dump --list-flags`) and the Wireshark dissector (checked
 * against that list by its test) follow it.
 */
#define TRD_HDR_FLAGS(X)                                                                           \
	X(FIRST, 'F', "first", 0x0001)    /* first packet of a message */                          \
	X(LAST, 'L', "last", 0x0002)      /* last packet of a message */                           \
	X(CPL, 'C', "cpl", 0x0004)        /* a completion: aux is the origin's completion id */    \
	X(ACKREQ, 'A', "ackreq", 0x0008)  /* the origin wants a DONE: aux is its id */             \
	X(CRC, 'K', "crc", 0x0010)        /* a CRC32C of the payload follows it (4 bytes, BE) */   \
	X(PROBE, 'P', "probe", 0x0020)    /* ACK: asks for an ACK back echoing key (alive?) */     \
	X(CHAL, 'H', "challenge", 0x0040) /* ACK: "I know no session offset of yours; echo key to  \
					   * start one" (docs/reliability.md) */                   \
	X(ECHO, 'E', "echo", 0x0080)      /* ACK: the answer to a challenge: key echoed, epoch the \
					   * sender's session, aux its first sequence number */    \
	X(PROOF, 'T', "proof", 0x0100)    /* the session's 64-bit token follows the payload (and   \
					   * its CRC): 8 bytes, BE (docs/reliability.md) */        \
	X(LANE, 'N', "lane", 0x0200)      /* lane 1 of a node split in two shares; clear: lane 0   \
					   * (docs/architecture.md "Threading") */

/** Header flag bits (TRD_HF_FIRST, ...). */
enum trd_hdr_flag {
#define TRD_HF_ENUM_(e, l, n, v) TRD_HF_##e = v,
	TRD_HDR_FLAGS(TRD_HF_ENUM_)
#undef TRD_HF_ENUM_
};
/** First and last: a message of one packet. */
#define TRD_HF_ALL             (TRD_HF_FIRST | TRD_HF_LAST)
#define TRD_HF_OR_(e, l, n, v) | (v)
/** Every defined flag; a header with another bit set is malformed. */
#define TRD_HF_MASK (0 TRD_HDR_FLAGS(TRD_HF_OR_))
/** Bytes of the session token trailer a frame with TRD_HF_PROOF carries after its payload. */
#define TRD_PROOF_LEN 8
/**
 * The check of a session token that an ECHO carries in its header's @c msg_id (under the header
 * checksum): the token itself rides in the trailer, which no checksum covers, and a receiver
 * that took a damaged token would refuse every frame of the session as bad_proof.
 */
static inline uint32_t
trd_wire_token_check(uint64_t token)
{
	return (uint32_t)(token ^ (token >> 32)) ^ 0x746f6b6eu;
}
/** Bytes a frame carries after its payload, by its flags (CRC, then proof). */
#define TRD_TRAILER_LEN(flags)                                                                     \
	((((flags)&TRD_HF_CRC) ? 4u : 0u) + (((flags)&TRD_HF_PROOF) ? TRD_PROOF_LEN : 0u))
/** Bytes of the selective-acknowledgement bitmap an ACK may carry (seqs ack+1 ..). */
#define TRD_SACK_BYTES 32

/** Payload of an ATOMIC packet (24 bytes, big-endian operands). */
struct __attribute__((packed)) trd_wire_atomic {
	uint8_t op; /**< 1 fetch-and-add, 2 compare-and-swap, 3 swap */
	uint8_t pad[7];
	uint64_t operand; /**< added, or the new value */
	uint64_t compare; /**< compare-and-swap: the expected old value */
};
_Static_assert(sizeof(struct trd_wire_atomic) == 24, "atomic payload is 24 bytes");

/**
 * One message of a BUNDLE packet (docs/wire-format.md, "Bundles"): this 24-byte header, then
 * @c len payload bytes, then the next entry. A bundle carries whole put and memory-FIFO
 * messages of one sender for one destination; its torus header's @c aux is the number of
 * entries and the message id of entry @c i is the header's @c msg_id + @c i.
 */
struct __attribute__((packed)) trd_wire_entry {
	uint8_t type;     /**< 0: TRD_PKT_PUT or TRD_PKT_FIFO */
	uint8_t fifo;     /**< 1: reception FIFO (FIFO), 0 (PUT) */
	uint16_t counter; /**< 2: destination reception counter id, 0 = none */
	uint16_t len;     /**< 4: payload bytes of this message (the whole message) */
	uint16_t rsvd;    /**< 6: 0 */
	uint64_t key;     /**< 8: region key (PUT) or the message's user word (FIFO) */
	uint64_t offset;  /**< 16: region offset (PUT), 0 (FIFO) */
};
_Static_assert(sizeof(struct trd_wire_entry) == 24, "bundle entry header is 24 bytes");
/** Length of a bundle entry's header. */
#define TRD_ENTRY_LEN 24
/** Most messages one BUNDLE packet carries. */
#define TRD_BUNDLE_MAX 64

/**
 * Engine collectives (docs/collectives.md, "Collectives in the engine"): a COMB frame carries
 * one piece of a collective's vector between two neighbours of its tree. Its header's
 * @c fifo is the phase (TRD_COMB_UP towards the root, TRD_COMB_DOWN from it), @c counter the
 * collective's word (trd_comb_word()), @c key its instance number in its group, @c aux the
 * root's rank, @c msg_id its job (trd_comb_req::job), @c msg_len the vector's bytes, @c offset
 * the piece's offset and @c pay_len its
 * bytes: every piece but the last is TRD_COMB_PIECE bytes; a barrier has one empty piece.
 * TRD_COMB_PIECE is the most whole elements a 1500-byte MTU frame carries in a reliable session
 * (1500 - TRD_HDR_LEN - TRD_PROOF_LEN = 1436 bytes): fewer frames per vector than 1024.
 */
#define TRD_COMB_PIECE 1432u
/** Largest vector of an engine collective, in bytes. */
#define TRD_COMB_MAX_LEN (1u << 20)
/** Bytes of one element (every element type is 64 bits wide). */
#define TRD_COMB_ELEM 8u
_Static_assert(TRD_COMB_PIECE % TRD_COMB_ELEM == 0 &&
		       TRD_COMB_PIECE <= 1500 - TRD_HDR_LEN - TRD_PROOF_LEN,
	       "a piece is whole elements in one frame of a 1500-byte MTU");

/** Phases of a COMB frame (its header's @c fifo). */
enum trd_comb_phase {
	TRD_COMB_UP = 1,    /**< a child's combined piece, towards the root */
	TRD_COMB_DOWN = 2,  /**< the result's piece, from the parent */
	TRD_COMB_ABORT = 3, /**< the collective failed: no payload, to every tree neighbour */
};

/** What an engine collective does. */
enum trd_comb_kind {
	TRD_COMB_ALLREDUCE = 1, /**< combine everyone's vectors, result everywhere */
	TRD_COMB_REDUCE = 2,    /**< combine everyone's vectors, result at the root */
	TRD_COMB_BCAST = 3,     /**< the root's vector everywhere */
	TRD_COMB_BARRIER = 4,   /**< no data: complete once every member has posted */
};

/** How elements combine (allreduce, reduce); 0 for broadcast and barrier. */
enum trd_comb_op {
	TRD_COMB_SUM = 1,
	TRD_COMB_MIN = 2,
	TRD_COMB_MAX = 3,
	TRD_COMB_BAND = 4, /**< integers only */
	TRD_COMB_BOR = 5,  /**< integers only */
	TRD_COMB_BXOR = 6, /**< integers only */
};

/** Element types (allreduce, reduce; broadcast moves any bytes as TRD_COMB_U64). */
enum trd_comb_dtype {
	TRD_COMB_I64 = 1,
	TRD_COMB_U64 = 2,
	TRD_COMB_DOUBLE = 3,
};

/**
 * The torus header as it is on the wire (56 bytes, packed, big-endian fields).
 * The checksum is the Internet checksum (RFC 1071) over these 56 bytes with csum = 0.
 */
struct __attribute__((packed)) trd_hdr {
	uint8_t version;  /**< 0: TRD_WIRE_VERSION */
	uint8_t type;     /**< 1: enum trd_pkt_type */
	uint16_t flags;   /**< 2: TRD_HF_* */
	uint8_t src[3];   /**< 4: source coordinate x, y, z */
	uint8_t hops;     /**< 7: remaining hop limit; a node that would forward at 0 drops */
	uint8_t dst[3];   /**< 8: destination coordinate x, y, z */
	uint8_t fifo;     /**< 11: reception FIFO (FIFO), injection FIFO (RGET), 0 otherwise */
	uint16_t counter; /**< 12: destination reception counter id, 0 = none */
	uint16_t csum;    /**< 14: header checksum */
	uint64_t key;     /**< 16: region key (PUT) or the message's user word (FIFO) */
	uint64_t offset;  /**< 24: region offset of this payload (PUT), or offset in message */
	uint32_t msg_len; /**< 32: length of the whole message */
	uint16_t pay_len; /**< 36: payload bytes in this packet */
	uint16_t epoch;   /**< 38: sender's session with this peer (reliability); 0 unsequenced */
	uint32_t msg_id;  /**< 40: message id, unique per source node */
	uint32_t seq;     /**< 44: sequence number from sender to this peer, 1.. (0: unsequenced) */
	uint32_t ack;     /**< 48: next sequence number expected from the peer (0: none) */
	uint32_t aux;     /**< 52: origin's completion/operation id (CPL, ACKREQ, DONE, atomics) */
};

_Static_assert(sizeof(struct trd_hdr) == TRD_HDR_LEN, "torus header must be 56 bytes");

/**
 * Why a received frame was dropped: X(ENUM, name). The engine counts every cause; the
 * first group is decided by trd_wire_parse(), the rest by the engine.
 */
#define TRD_DROP_CAUSES(X)                                                                         \
	X(SHORT_FRAME, "short_frame")         /* shorter than Ethernet + torus header */           \
	X(BAD_ETHERTYPE, "bad_ethertype")     /* not 0x88B5 */                                     \
	X(BAD_VERSION, "bad_version")         /* header version is not TRD_WIRE_VERSION */         \
	X(BAD_TYPE, "bad_type")               /* unknown packet type */                            \
	X(BAD_CHECKSUM, "bad_checksum")       /* header checksum does not verify */                \
	X(BAD_LENGTH, "bad_length")           /* pay_len/msg_len/offset inconsistent with frame */ \
	X(BAD_FIELD, "bad_field")             /* unknown flag, aux or epoch where not allowed */   \
	X(UNKNOWN_NODE, "unknown_node")       /* source or destination outside the torus */        \
	X(NOT_FOR_US, "not_for_us")           /* addressed elsewhere and not forwardable here */   \
	X(HOP_LIMIT, "hop_limit")             /* hop limit reached while forwarding */             \
	X(NO_ROUTE, "no_route")               /* no link towards the destination */                \
	X(FWD_FULL, "fwd_full")               /* forwarding link's transmit buffer full */         \
	X(BAD_KEY, "bad_key")                 /* no region with that key */                        \
	X(OUT_OF_BOUNDS, "out_of_bounds")     /* offset/length outside the region */               \
	X(NO_ACCESS, "no_access")             /* region does not allow the access */               \
	X(UNKNOWN_COUNTER, "unknown_counter") /* counter id not allocated */                       \
	X(UNKNOWN_FIFO, "unknown_fifo")       /* FIFO id does not exist */                         \
	X(FIFO_FULL, "fifo_full")             /* reception/injection FIFO full */                  \
	X(REASM, "reassembly")                /* inconsistent or untracked multi-packet message */ \
	X(NO_MEMORY, "no_memory")             /* no buffer for a message */                        \
	X(BAD_DESC, "bad_desc")               /* a remote-get descriptor is invalid */             \
	X(BAD_DST, "bad_dst")                 /* a remote-get descriptor targets a third node */   \
	X(UNKNOWN_CPL, "unknown_completion")  /* completion for no message we are waiting on */    \
	X(BAD_ALIGN, "bad_align")             /* an atomic on a word that is not 8-byte aligned */ \
	X(REPLY_FULL, "reply_full")           /* no room to send a DONE or an atomic reply */      \
	X(BAD_CRC, "bad_crc")                 /* payload CRC32C does not match */                  \
	X(DUPLICATE, "duplicate")             /* a sequence number already received */             \
	X(WINDOW, "window_exceeded")          /* a sequence number beyond the receive window */    \
	X(BAD_SESSION, "bad_session")         /* sequenced packet of a session we do not know */   \
	X(PEER_DOWN, "peer_down")             /* to or from a peer declared down */                \
	X(BAD_ENCAP, "bad_encap")     /* IPv4/UDP wrapper malformed, or not from the peer */       \
	X(UNSEQUENCED, "unsequenced") /* changes state outside a session (reliable node) */        \
	X(BAD_PROOF, "bad_proof")     /* without the token of the session it claims */             \
	X(BAD_COMB, "bad_combine")    /* a combining piece that fits no collective of ours */      \
	X(BAD_LANE, "bad_lane")       /* a lane the node does not have, or another share's */      \
	X(CTR_DENIED, "ctr_denied")   /* a counter of a process's block the frame may not name */

/** Drop causes; 0 is "no drop", so parsers can return 0 for a good frame. */
enum trd_drop {
	TRD_DROP_NONE = 0,
#define TRD_DROP_ENUM_(e, n) TRD_DROP_##e,
	TRD_DROP_CAUSES(TRD_DROP_ENUM_)
#undef TRD_DROP_ENUM_
	/* one past the last */
	TRD_DROP_MAX
};

/** A decoded torus header, in host byte order. */
struct trd_pkt {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint8_t src[3];
	uint8_t hops;
	uint8_t dst[3];
	uint8_t fifo;
	uint16_t counter;
	uint16_t csum;
	uint64_t key;
	uint64_t offset;
	uint32_t msg_len;
	uint16_t pay_len;
	uint16_t epoch;
	uint32_t msg_id;
	uint32_t seq;
	uint32_t ack;
	uint32_t aux;
};

/** The collective's word a COMB header carries in @c counter: kind, op, dimensions, type. */
static inline uint16_t
trd_comb_word(unsigned int kind, unsigned int op, unsigned int dims, unsigned int dtype)
{
	return (uint16_t)((kind & 0xf) << 12 | (op & 0xf) << 8 | (dims & 0xf) << 4 | (dtype & 0xf));
}

/**
 * Is (kind, op, dims, dtype, vector bytes) a collective the engines can run? The dimensions
 * are a mask (bit 0 x, 1 y, 2 z) of the torus axes the group spans: 7 the whole torus, 3 the
 * z plane of the root. @return 0 or TRD_DROP_BAD_FIELD / TRD_DROP_BAD_LENGTH.
 */
static inline int
trd_comb_valid(unsigned int kind, unsigned int op, unsigned int dims, unsigned int dtype,
	       uint32_t len)
{
	if (dims == 0 || dims > 7)
		return TRD_DROP_BAD_FIELD;
	switch (kind) {
	case TRD_COMB_ALLREDUCE:
	case TRD_COMB_REDUCE:
		if (op < TRD_COMB_SUM || op > TRD_COMB_BXOR || dtype < TRD_COMB_I64 ||
		    dtype > TRD_COMB_DOUBLE || (dtype == TRD_COMB_DOUBLE && op >= TRD_COMB_BAND))
			return TRD_DROP_BAD_FIELD;
		break;
	case TRD_COMB_BCAST:
		if (op != 0 || dtype != TRD_COMB_U64)
			return TRD_DROP_BAD_FIELD;
		break;
	case TRD_COMB_BARRIER:
		if (op != 0 || dtype != 0)
			return TRD_DROP_BAD_FIELD;
		return len == 0 ? 0 : TRD_DROP_BAD_LENGTH;
	default:
		return TRD_DROP_BAD_FIELD;
	}
	if (len == 0 || len > TRD_COMB_MAX_LEN || len % TRD_COMB_ELEM != 0)
		return TRD_DROP_BAD_LENGTH;
	return 0;
}

/**
 * The structure of a parsed COMB header @p p (lengths, the piece's place, the word, the
 * phase): @return 0 or a drop cause. Which collective, tree edge and piece it is, is the
 * engine's to check.
 */
static inline int
trd_comb_check(const struct trd_pkt *p)
{
	unsigned int w = p->counter;
	uint32_t want;
	int cause;

	if (p->fifo < TRD_COMB_UP || p->fifo > TRD_COMB_ABORT)
		return TRD_DROP_BAD_FIELD;
	cause = trd_comb_valid(w >> 12, (w >> 8) & 0xf, (w >> 4) & 0xf, w & 0xf, p->msg_len);
	if (cause != 0)
		return cause;
	if (p->fifo == TRD_COMB_ABORT)
		return p->offset == 0 && p->pay_len == 0 ? 0 : TRD_DROP_BAD_LENGTH;
	if ((w >> 12) == TRD_COMB_BCAST && p->fifo == TRD_COMB_UP)
		return TRD_DROP_BAD_FIELD; /* a broadcast only goes down */
	if ((w >> 12) == TRD_COMB_REDUCE && p->fifo == TRD_COMB_DOWN)
		return TRD_DROP_BAD_FIELD; /* a reduce only goes up */
	if (p->offset % TRD_COMB_PIECE != 0 || (p->msg_len != 0 && p->offset >= p->msg_len) ||
	    (p->msg_len == 0 && p->offset != 0))
		return TRD_DROP_BAD_LENGTH;
	want = p->msg_len - (uint32_t)p->offset;
	if (want > TRD_COMB_PIECE)
		want = TRD_COMB_PIECE;
	return p->pay_len == want ? 0 : TRD_DROP_BAD_LENGTH;
}

/* ---- the header codec: the one place a header is built, checksummed and decoded ---- */

/** Host to big-endian (and back: the same swap). */
static inline uint16_t
trd_be16(uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap16(v);
#else
	return v;
#endif
}

static inline uint32_t
trd_be32(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

static inline uint64_t
trd_be64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/**
 * Write @p p as a wire header at @p h, every field but the checksum (left 0: see
 * trd_hdr_seal()). Inline: a caller that fills @p p with constants and a few variables gets
 * the stores it would have written by hand.
 */
static inline void
trd_hdr_encode(struct trd_hdr *h, const struct trd_pkt *p)
{
	h->version = p->version;
	h->type = p->type;
	h->flags = trd_be16(p->flags);
	h->src[0] = p->src[0];
	h->src[1] = p->src[1];
	h->src[2] = p->src[2];
	h->hops = p->hops;
	h->dst[0] = p->dst[0];
	h->dst[1] = p->dst[1];
	h->dst[2] = p->dst[2];
	h->fifo = p->fifo;
	h->counter = trd_be16(p->counter);
	h->csum = 0;
	h->key = trd_be64(p->key);
	h->offset = trd_be64(p->offset);
	h->msg_len = trd_be32(p->msg_len);
	h->pay_len = trd_be16(p->pay_len);
	h->epoch = trd_be16(p->epoch);
	h->msg_id = trd_be32(p->msg_id);
	h->seq = trd_be32(p->seq);
	h->ack = trd_be32(p->ack);
	h->aux = trd_be32(p->aux);
}

/** Read the wire header at @p h into @p p (host order; csum as it is on the wire). No checks:
 * trd_wire_parse() is the validating decoder. */
static inline void
trd_hdr_decode(const struct trd_hdr *h, struct trd_pkt *p)
{
	p->version = h->version;
	p->type = h->type;
	p->flags = trd_be16(h->flags);
	p->src[0] = h->src[0];
	p->src[1] = h->src[1];
	p->src[2] = h->src[2];
	p->hops = h->hops;
	p->dst[0] = h->dst[0];
	p->dst[1] = h->dst[1];
	p->dst[2] = h->dst[2];
	p->fifo = h->fifo;
	p->counter = trd_be16(h->counter);
	p->csum = h->csum;
	p->key = trd_be64(h->key);
	p->offset = trd_be64(h->offset);
	p->msg_len = trd_be32(h->msg_len);
	p->pay_len = trd_be16(h->pay_len);
	p->epoch = trd_be16(h->epoch);
	p->msg_id = trd_be32(h->msg_id);
	p->seq = trd_be32(h->seq);
	p->ack = trd_be32(h->ack);
	p->aux = trd_be32(h->aux);
}

/**
 * The Internet checksum (RFC 1071) over the header as it is, complemented: with csum 0 it is
 * the value csum must hold; over a header holding its checksum it is 0.
 */
static inline uint16_t
trd_hdr_sum(const struct trd_hdr *h)
{
	const uint8_t *b = (const uint8_t *)h;
	uint64_t sum = 0;

	/* 16-bit words summed as they lie in memory: the ones' complement sum does not depend
	 * on the byte order (RFC 1071), so the result is stored as it is */
	for (unsigned int i = 0; i < TRD_HDR_LEN; i += 4) {
		uint32_t w;

		__builtin_memcpy(&w, b + i, 4);
		sum += w;
	}
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/** Compute and store the header's checksum. */
static inline void
trd_hdr_seal(struct trd_hdr *h)
{
	h->csum = 0;
	h->csum = trd_hdr_sum(h);
}

/** A bundle entry's header fields in host order (trd_wire_entry_check()). */
struct trd_wire_ent {
	uint64_t key;     /**< region key (PUT) or the message's user word (FIFO) */
	uint64_t offset;  /**< region offset (PUT) */
	uint16_t len;     /**< payload bytes of this message */
	uint16_t counter; /**< destination reception counter id, 0 = none */
	uint8_t type;     /**< TRD_PKT_PUT, TRD_PKT_FIFO or TRD_PKT_RGET */
	uint8_t fifo;     /**< reception FIFO (FIFO), injection FIFO (RGET), 0 (PUT) */
};

/**
 * Check a bundle entry and decode only its own fields: @p eh is the entry's 24 header bytes,
 * found @p left payload bytes before the end of the bundle's payload; on success the entry,
 * payload included, takes TRD_ENTRY_LEN + e->len bytes. The checks are those of
 * trd_wire_entry_decode() (its @return, too), which builds on this one; @p e is filled
 * whenever @p left holds the header.
 */
static inline int
trd_wire_entry_check(const void *eh, uint32_t left, struct trd_wire_ent *e)
{
	/* read in place (a packed struct: any alignment), not copied first */
	const struct trd_wire_entry *w = (const struct trd_wire_entry *)eh;

	if (left < TRD_ENTRY_LEN)
		return TRD_DROP_BAD_LENGTH;
	e->type = w->type;
	e->fifo = w->fifo;
	e->counter = trd_be16(w->counter);
	e->len = trd_be16(w->len);
	e->key = trd_be64(w->key);
	e->offset = trd_be64(w->offset);
	if (e->len > left - TRD_ENTRY_LEN)
		return TRD_DROP_BAD_LENGTH;
	if (w->rsvd != 0)
		return TRD_DROP_BAD_FIELD;
	if (e->type == TRD_PKT_PUT) {
		if (e->fifo != 0)
			return TRD_DROP_BAD_FIELD;
		if (e->offset > UINT64_MAX - e->len)
			return TRD_DROP_BAD_LENGTH;
	} else if (e->type == TRD_PKT_FIFO) {
		if (e->offset != 0)
			return TRD_DROP_BAD_FIELD;
	} else if (e->type == TRD_PKT_RGET) {
		if (e->len == 0 || e->len % TRD_WIRE_DESC_LEN != 0 ||
		    e->len > 15u * TRD_WIRE_DESC_LEN)
			return TRD_DROP_BAD_LENGTH;
		if (e->counter != 0 || e->key != 0 || e->offset != 0)
			return TRD_DROP_BAD_FIELD;
	} else {
		return TRD_DROP_BAD_TYPE;
	}
	return 0;
}

/**
 * The header message @p idx of a BUNDLE packet whose validated header is @p p, with the
 * fields @p w of its entry, would have had alone (type, fifo, counter, key, offset, lengths
 * and message id from the entry, the rest from @p p; flags TRD_HF_ALL), into @p e.
 */
static inline void
trd_wire_entry_pkt(const struct trd_pkt *p, const struct trd_wire_ent *w, uint32_t idx,
		   struct trd_pkt *e)
{
	*e = *p;
	e->type = w->type;
	e->flags = TRD_HF_ALL;
	e->fifo = w->fifo;
	e->counter = w->counter;
	e->key = w->key;
	e->offset = w->offset;
	e->pay_len = w->len;
	e->msg_len = w->len;
	e->msg_id = p->msg_id + idx;
	e->aux = 0;
}

/**
 * Decode and check entry @p idx of a BUNDLE packet whose validated header is @p p: @p eh is
 * the entry's 24 header bytes, found @p left payload bytes before the end of the bundle's
 * payload. On success @p e is the header of a message of one packet as if it had come alone
 * (trd_wire_entry_pkt()) and the entry, payload included, takes TRD_ENTRY_LEN + e->pay_len
 * bytes. The checks are the structure's; keys, bounds, counters and FIFOs are the engine's.
 * A remote get entry (TRD_PKT_RGET) carries 1 .. 15 whole 64-byte descriptors, for the injection
 * FIFO named by its fifo field, and names no counter, key or offset.
 * @return 0, TRD_DROP_BAD_LENGTH (does not fit, the put's end wraps, or a remote get's length
 * is 0, above 15 descriptors or not a multiple of 64), TRD_DROP_BAD_TYPE (not a put, FIFO or
 * remote get) or TRD_DROP_BAD_FIELD (reserved bits, a FIFO entry with an offset, a put entry
 * with a FIFO, a remote get entry with a counter, key or offset).
 */
static inline int
trd_wire_entry_decode(const struct trd_pkt *p, const void *eh, uint32_t left, uint32_t idx,
		      struct trd_pkt *e)
{
	struct trd_wire_ent w;
	int cause = trd_wire_entry_check(eh, left, &w);

	if (left >= TRD_ENTRY_LEN)
		trd_wire_entry_pkt(p, &w, idx, e);
	return cause;
}

/**
 * Write a bundle entry header at @p eh for a message of @p type (TRD_PKT_PUT, TRD_PKT_FIFO or
 * TRD_PKT_RGET).
 */
static inline void
trd_wire_entry_encode(void *eh, uint8_t type, uint8_t fifo, uint16_t counter, uint16_t len,
		      uint64_t key, uint64_t offset)
{
	/* written in place (a packed struct: any alignment), not built aside and copied */
	struct trd_wire_entry *w = (struct trd_wire_entry *)eh;

	w->type = type;
	w->fifo = fifo;
	w->counter = trd_be16(counter);
	w->len = trd_be16(len);
	w->rsvd = 0;
	w->key = trd_be64(key);
	w->offset = trd_be64(offset);
}

/**
 * Verify the CRC32C trailer of a frame whose header has TRD_HF_CRC (@p frame contiguous,
 * @p len bytes, header already parsed into @p p). @return 0 or TRD_DROP_BAD_CRC.
 */
int trd_wire_crc_check(const void *frame, uint32_t len, const struct trd_pkt *p);
/**
 * The session token a frame with TRD_HF_PROOF carries after its payload (and CRC), into
 * *@p token (@p frame contiguous, @p len bytes, header parsed into @p p). @return 0, or
 * TRD_DROP_BAD_LENGTH when the frame has no such trailer.
 */
int trd_wire_proof(const void *frame, uint32_t len, const struct trd_pkt *p, uint64_t *token);
/** CRC32C of a payload as the wire carries it. */
uint32_t trd_wire_crc(const void *payload, uint32_t len, uint32_t init);

/**
 * Parse and validate the torus frame of @p len bytes at @p frame (Ethernet header first).
 * Checks length, EtherType, version, type, checksum, reserved bits and the length fields;
 * trailing bytes after the payload (Ethernet padding) are allowed.
 *
 * @return 0 (TRD_DROP_NONE) and fills @p out, or a positive enum trd_drop cause.
 */
int trd_wire_parse(const void *frame, uint32_t len, struct trd_pkt *out);

/**
 * Check the IPv4/UDP wrapper of an encapsulated torus frame of @p len bytes at @p frame
 * (Ethernet header first, EtherType 0x0800): IPv4 without options, not fragmented, header
 * checksum correct, protocol UDP, destination port @p port (0: TRD_UDP_PORT), lengths within
 * the frame and room for a torus header. The UDP checksum is not checked (0 is sent).
 * @return 0, or TRD_DROP_SHORT_FRAME, TRD_DROP_BAD_ETHERTYPE, TRD_DROP_BAD_ENCAP.
 */
int trd_wire_udp_check(const void *frame, uint32_t len, uint16_t port);

/* ---- ARP (RFC 826) for links over IPv4: the engine owns the port, so it asks and answers ---- */

/** EtherType of ARP. */
#define TRD_ETHERTYPE_ARP 0x0806
/** An ARP frame as the engine sends it: Ethernet header, 28 bytes of ARP, zero padding to the
 * 60-byte Ethernet minimum. */
#define TRD_ARP_FRAME_LEN 60
/** Ethernet header plus the ARP message: the least a received ARP frame must hold. */
#define TRD_ARP_MIN_LEN 42
#define TRD_ARP_REQUEST 1
#define TRD_ARP_REPLY   2

/** An ARP message for IPv4 over Ethernet; addresses in host byte order. */
struct trd_arp {
	uint16_t op;    /**< TRD_ARP_REQUEST or TRD_ARP_REPLY */
	uint8_t sha[6]; /**< sender's MAC */
	uint32_t spa;   /**< sender's IPv4 address */
	uint8_t tha[6]; /**< target's MAC (zero in a request) */
	uint32_t tpa;   /**< target's IPv4 address */
};

/**
 * Write the ARP frame of @p a into @p frame (room for @p room bytes): Ethernet to @p dst from
 * a->sha, EtherType 0x0806, hardware type 1, protocol 0x0800, lengths 6 and 4, then @p a,
 * zero-padded to TRD_ARP_FRAME_LEN.
 * @return TRD_ARP_FRAME_LEN, or -EINVAL (NULL argument, op not 1 or 2), -ENOSPC.
 */
int trd_wire_arp_build(void *frame, uint32_t room, const uint8_t dst[6], const struct trd_arp *a);

/**
 * Parse and check the ARP frame of @p len bytes at @p frame into @p a: EtherType 0x0806, at
 * least TRD_ARP_MIN_LEN bytes, hardware type 1 (Ethernet), protocol 0x0800, lengths 6 and 4,
 * op request or reply, a unicast sender MAC that is the frame's Ethernet source. A sender
 * address 0.0.0.0 (an address probe) is valid.
 * @return 0, -EINVAL (NULL argument), or -EBADMSG (not such an ARP frame).
 */
int trd_wire_arp_parse(const void *frame, uint32_t len, struct trd_arp *a);

/**
 * trd_wire_parse() of a frame in either framing: plain (EtherType 0x88B5, torus header at 14)
 * or over IPv4/UDP to @p udp_port (0: TRD_UDP_PORT; torus header at 42). *@p off (may be
 * NULL) gets the torus header's offset in the frame. @return 0 or a drop cause.
 */
int trd_wire_parse_any(const void *frame, uint32_t len, uint16_t udp_port, struct trd_pkt *p,
		       uint32_t *off);

/**
 * Encode @p p as a wire header at @p hdr (TRD_HDR_LEN bytes), computing the checksum
 * (p->csum is ignored).
 */
void trd_wire_encode(void *hdr, const struct trd_pkt *p);

/** Internet checksum of a wire header (with its csum field as it is). 0 means valid. */
uint16_t trd_wire_hdr_verify(const void *hdr);

/** Name of a packet type ("put", ...), or NULL if unknown. */
const char *trd_pkt_type_name(unsigned int type);
/** Name of a drop cause ("bad_key", ...), or NULL if out of range. */
const char *trd_drop_name(unsigned int cause);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_WIRE_H */
