/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service's frames out (proto_tx.c): posting protocol messages; the reply queue.
 */
#ifndef TRD_VNI_PROTO_PVT_H
#define TRD_VNI_PROTO_PVT_H

#include "service_pvt.h"

/* A reply waiting for room in the reply FIFO (proto_tx.c). */
struct vreply {
	struct trd_coord dst;
	struct trd_vw_hdr h;
	struct trd_payload *pay; /* data after the header (READ_RESP), or NULL */
};

int svc_vw_inject(struct trd_vni_svc *s, struct trd_inj_fifo *fifo, struct trd_coord dst,
		  const struct trd_vw_hdr *h, const void *data, uint32_t len);
int svc_vw_pay(struct trd_vni_svc *s, const struct trd_vw_hdr *h, uint32_t n,
	       struct trd_payload **pay, uint8_t **data);
int svc_vw_inject_pay(struct trd_vni_svc *s, struct trd_inj_fifo *fifo, struct trd_coord dst,
		      uint8_t type, struct trd_payload *pay);
int svc_vw_inject_shared(struct trd_vni_svc *s, struct trd_inj_fifo *fifo, struct trd_coord dst,
			 const struct trd_vw_hdr *h, struct trd_payload *pay);
void svc_reply(struct trd_vni_svc *s, struct trd_coord dst, const struct trd_vw_hdr *h);
void svc_reply_data(struct trd_vni_svc *s, struct trd_coord dst, const struct trd_vw_hdr *h,
		    struct trd_payload *pay);
unsigned int svc_replies_flush(struct trd_vni_svc *s);
void svc_rep_hdr(struct trd_vw_hdr *r, uint8_t type, const struct trd_vw_hdr *req, int status);

#endif /* TRD_VNI_PROTO_PVT_H */
