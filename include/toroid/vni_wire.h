/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The VNI protocol between engines (docs/vni.md, "Protocol"), its one codec: used by the
 * engine's VNI service, toroid-dump and the tests. Needs nothing but the C library.
 *
 * Every VNI protocol message is an engine memory-FIFO message to the destination node's VNI
 * reception FIFO whose user word is TRD_VW_USER(type) and whose payload starts with this 64-byte
 * header, little-endian; an eager message's data follows the header. Long data travels as
 * engine puts into the region and offset the receiver granted (CTS).
 */
#ifndef TOROID_VNI_WIRE_H
#define TOROID_VNI_WIRE_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRD_VW_MAGIC      0x564e4931u /**< "VNI1": the high half of a VNI message's user word */
#define TRD_VW_USER(type) (((uint64_t)TRD_VW_MAGIC << 32) | (uint32_t)(type))
#define TRD_VW_HDR_LEN    64
#define TRD_VW_F_DATA     0x1 /**< EAGER, RTS flag: the message carries immediate data */
/** EAGER, RTS flag: an ordered message (docs/vni.md, "Ordered interfaces"): roff is
 *  TRD_VW_ORD(stream, seq), status the distance back from seq to the oldest message of the
 *  stream its sender has not seen accepted (0 .. window - 1) */
#define TRD_VW_F_ORDERED        0x2
#define TRD_VW_ORD(stream, seq) ((uint64_t)(uint32_t)(stream) << 32 | (uint32_t)(seq))
#define TRD_VW_ORD_STREAM(roff) ((uint32_t)((roff) >> 32))
#define TRD_VW_ORD_SEQ(roff)    ((uint32_t)(roff))
/** CTS flag: the receive is in its process's own memory, which only its engine can write: send
 *  the data as DATA messages to the grant (rkey and roff are 0), not as puts */
#define TRD_VW_F_FIFO 0x4
/** ACK flag, the answer to an EAGER: its receiver had no room to stage it and keeps its header
 *  only (docs/vni.md, "Unexpected messages: the header only"): the sender keeps the bytes
 *  and sends them as for a long message when the CTS comes */
#define TRD_VW_F_HDR 0x8

/** Message types. */
enum trd_vw_type {
	TRD_VW_EAGER = 1, /**< sender -> receiver: a short message, data after the header */
	TRD_VW_RTS,       /**< sender -> receiver: request to send len bytes */
	TRD_VW_CTS,       /**< receiver -> sender: clear to send into (rkey, roff), grant id */
	TRD_VW_NAK,       /**< receiver -> sender: not now (status -ENOSPC, -ECONNREFUSED: ask
			   *   again later) or never (-EMSGSIZE) */
	TRD_VW_ACK,       /**< receiver -> sender: an eager message was taken (status) */
	TRD_VW_FIN,       /**< sender -> receiver: every byte of the grant was sent */
	TRD_VW_DONE,      /**< receiver -> sender: the FIN's verdict (status) */
	TRD_VW_ABORT,     /**< sender -> receiver: the message is given up (sender died) */
	TRD_VW_CANCEL,    /**< receiver -> sender: stop sending (receiver died) */
	/* one-sided access (docs/vni.md, "One-sided access to application memory"): rkey is the
	 * target region's key, roff the target address of the chunk, len its bytes */
	TRD_VW_WRITE,       /**< origin -> target: write len bytes (after the header) at roff */
	TRD_VW_WRITE_ACK,   /**< target -> origin: the chunk's verdict (status, roff and len echoed)
			     */
	TRD_VW_READ,        /**< origin -> target: send back len bytes at roff */
	TRD_VW_READ_RESP,   /**< target -> origin: the bytes (after the header), or a status */
	TRD_VW_ATOMIC,      /**< origin -> target: an atomic on len (4, 8) bytes at roff; the
			     *   TRD_VW_ATOMIC_LEN bytes after the header say which (trd_vw_atomic) */
	TRD_VW_ATOMIC_RESP, /**< target -> origin: status; data is the value before */
	TRD_VW_DATA,        /**< sender -> receiver: len bytes (after the header) of a message
			     *   granted with TRD_VW_F_FIFO, at offset roff of the message */
	TRD_VW_MAX
};

/** The header, decoded (host order). On the wire: these fields in this order, little-endian. */
struct trd_vw_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t hdr_len; /**< TRD_VW_HDR_LEN */
	int32_t status;   /**< replies: the verdict; EAGER, RTS with TRD_VW_F_ORDERED: seq - oldest
			     open */
	uint32_t src_app, src_proc;
	uint32_t dst_app, dst_proc;
	uint32_t msg_id;   /**< the sending engine's id of the message */
	uint32_t grant_id; /**< the receiving engine's id of the grant (CTS, FIN, DONE, ABORT);
			    *   ATOMIC: its number towards the target node */
	uint32_t len;
	uint32_t key; /**< the sending engine's random key of the message: every reply, FIN
		       *   and ABORT about it echoes it, so that only who saw the request
		       *   can answer it */
	uint64_t tag; /**< ATOMIC: the origin engine's incarnation (random, never 0) */
	union {
		uint64_t rkey; /**< CTS: region key to put into */
		uint64_t data; /**< EAGER, RTS: the message's immediate data (trd_vni_senddata);
				*   ATOMIC_RESP: the value before the operation */
	};
	uint64_t roff; /**< CTS: offset in that region; WRITE, READ, ATOMIC and their
			*   replies: the target address (or region offset); EAGER, RTS with
			*   TRD_VW_F_ORDERED: stream << 32 | sequence number; DATA: the bytes'
			*   offset in the message */
};

_Static_assert(sizeof(struct trd_vw_hdr) == TRD_VW_HDR_LEN, "VNI wire header");

/** Name of a message type ("eager", "rts", ...), or NULL. */
static inline const char *
trd_vw_type_name(unsigned int type)
{
	static const char *const names[TRD_VW_MAX] = {
		[TRD_VW_EAGER] = "eager",
		[TRD_VW_RTS] = "rts",
		[TRD_VW_CTS] = "cts",
		[TRD_VW_NAK] = "nak",
		[TRD_VW_ACK] = "ack",
		[TRD_VW_FIN] = "fin",
		[TRD_VW_DONE] = "done",
		[TRD_VW_ABORT] = "abort",
		[TRD_VW_CANCEL] = "cancel",
		[TRD_VW_WRITE] = "write",
		[TRD_VW_WRITE_ACK] = "write_ack",
		[TRD_VW_READ] = "read",
		[TRD_VW_READ_RESP] = "read_resp",
		[TRD_VW_ATOMIC] = "atomic",
		[TRD_VW_ATOMIC_RESP] = "atomic_resp",
		[TRD_VW_DATA] = "data",
	};

	return type < TRD_VW_MAX ? names[type] : NULL;
}

static inline void
trd_vw_put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t
trd_vw_get_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/** Write @p h as the 64 wire bytes at @p out (hdr_len is always TRD_VW_HDR_LEN). */
static inline void
trd_vw_encode(void *out, const struct trd_vw_hdr *h)
{
	uint8_t *p = (uint8_t *)out;

	memset(p, 0, TRD_VW_HDR_LEN);
	p[0] = h->type;
	p[1] = h->flags;
	trd_vw_put_le(p + 2, TRD_VW_HDR_LEN, 2);
	trd_vw_put_le(p + 4, (uint32_t)h->status, 4);
	trd_vw_put_le(p + 8, h->src_app, 4);
	trd_vw_put_le(p + 12, h->src_proc, 4);
	trd_vw_put_le(p + 16, h->dst_app, 4);
	trd_vw_put_le(p + 20, h->dst_proc, 4);
	trd_vw_put_le(p + 24, h->msg_id, 4);
	trd_vw_put_le(p + 28, h->grant_id, 4);
	trd_vw_put_le(p + 32, h->len, 4);
	trd_vw_put_le(p + 36, h->key, 4);
	trd_vw_put_le(p + 40, h->tag, 8);
	trd_vw_put_le(p + 48, h->rkey, 8);
	trd_vw_put_le(p + 56, h->roff, 8);
}

/**
 * Read the header from the first @p len bytes at @p in.
 * @return 0, or -1 if they are fewer than 64, hdr_len is not 64 or the type is unknown.
 */
static inline int
trd_vw_decode(const void *in, uint32_t len, struct trd_vw_hdr *h)
{
	const uint8_t *p = (const uint8_t *)in;

	if (len < TRD_VW_HDR_LEN || trd_vw_get_le(p + 2, 2) != TRD_VW_HDR_LEN || p[0] == 0 ||
	    p[0] >= TRD_VW_MAX)
		return -1;
	h->type = p[0];
	h->flags = p[1];
	h->hdr_len = TRD_VW_HDR_LEN;
	h->status = (int32_t)(uint32_t)trd_vw_get_le(p + 4, 4);
	h->src_app = (uint32_t)trd_vw_get_le(p + 8, 4);
	h->src_proc = (uint32_t)trd_vw_get_le(p + 12, 4);
	h->dst_app = (uint32_t)trd_vw_get_le(p + 16, 4);
	h->dst_proc = (uint32_t)trd_vw_get_le(p + 20, 4);
	h->msg_id = (uint32_t)trd_vw_get_le(p + 24, 4);
	h->grant_id = (uint32_t)trd_vw_get_le(p + 28, 4);
	h->len = (uint32_t)trd_vw_get_le(p + 32, 4);
	h->key = (uint32_t)trd_vw_get_le(p + 36, 4);
	h->tag = trd_vw_get_le(p + 40, 8);
	h->rkey = trd_vw_get_le(p + 48, 8);
	h->roff = trd_vw_get_le(p + 56, 8);
	return 0;
}

/** The operation an ATOMIC message carries after its header. */
#define TRD_VW_ATOMIC_LEN 24
struct trd_vw_atomic {
	uint32_t op;   /**< enum trd_vni_aop */
	uint32_t size; /**< 4 or 8 (= the header's len) */
	uint64_t operand;
	uint64_t compare; /**< CSWAP */
};

static inline void
trd_vw_atomic_encode(void *out, const struct trd_vw_atomic *a)
{
	uint8_t *p = (uint8_t *)out;

	trd_vw_put_le(p, a->op, 4);
	trd_vw_put_le(p + 4, a->size, 4);
	trd_vw_put_le(p + 8, a->operand, 8);
	trd_vw_put_le(p + 16, a->compare, 8);
}

static inline void
trd_vw_atomic_decode(const void *in, struct trd_vw_atomic *a)
{
	const uint8_t *p = (const uint8_t *)in;

	a->op = (uint32_t)trd_vw_get_le(p, 4);
	a->size = (uint32_t)trd_vw_get_le(p + 4, 4);
	a->operand = trd_vw_get_le(p + 8, 8);
	a->compare = trd_vw_get_le(p + 16, 8);
}

/** Does a message of @p type carry data after its header (EAGER, WRITE, READ_RESP, ATOMIC,
 *  DATA)? */
static inline int
trd_vw_has_data(unsigned int type)
{
	return type == TRD_VW_EAGER || type == TRD_VW_WRITE || type == TRD_VW_READ_RESP ||
	       type == TRD_VW_ATOMIC || type == TRD_VW_DATA;
}

#ifdef __cplusplus
}
#endif

#endif /* TOROID_VNI_WIRE_H */
