/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI protocol between engines (docs/vni.md, "Protocol"). Every message is an engine
 * memory-FIFO message to the destination node's VNI reception FIFO whose user word is
 * TRD_VW_USER(type) and whose payload starts with this 64-byte header, little-endian;
 * an eager message's data follows the header. Long data travels as engine puts into the
 * region and offset the receiver granted (CTS).
 */
#ifndef TRD_VNI_WIRE_H
#define TRD_VNI_WIRE_H

#include <stdint.h>

#define TRD_VW_MAGIC 0x564e4931u /* "VNI1" */
#define TRD_VW_USER(type) (((uint64_t)TRD_VW_MAGIC << 32) | (uint32_t)(type))
#define TRD_VW_HDR_LEN 64

enum trd_vw_type {
	TRD_VW_EAGER = 1, /* sender -> receiver: a short message, data after the header */
	TRD_VW_RTS,       /* sender -> receiver: request to send len bytes */
	TRD_VW_CTS,       /* receiver -> sender: clear to send into (rkey, roff), grant id */
	TRD_VW_NAK,       /* receiver -> sender: not now (status -ENOSPC, -ECONNREFUSED: ask
			   * again later) or never (-EMSGSIZE) */
	TRD_VW_ACK,       /* receiver -> sender: an eager message was taken (status) */
	TRD_VW_FIN,       /* sender -> receiver: every byte of the grant was sent */
	TRD_VW_DONE,      /* receiver -> sender: the FIN's verdict (status) */
	TRD_VW_ABORT,     /* sender -> receiver: the message is given up (sender died) */
	TRD_VW_CANCEL,    /* receiver -> sender: stop sending (receiver died) */
	TRD_VW_MAX
};

struct trd_vw_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t hdr_len;   /* TRD_VW_HDR_LEN */
	int32_t status;
	uint32_t src_app, src_proc;
	uint32_t dst_app, dst_proc;
	uint32_t msg_id;    /* the sending engine's id of the message */
	uint32_t grant_id;  /* the receiving engine's id of the grant (CTS, FIN, DONE, ABORT) */
	uint32_t len;
	uint32_t key;       /* the sending engine's random key of the message: every reply, FIN
			     * and ABORT about it echoes it, so that only who saw the request can
			     * answer it */
	uint64_t tag;
	uint64_t rkey;      /* CTS: region key to put into */
	uint64_t roff;      /* CTS: offset in that region */
};

_Static_assert(sizeof(struct trd_vw_hdr) == TRD_VW_HDR_LEN, "VNI wire header");

#endif /* TRD_VNI_WIRE_H */
