/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: posting protocol messages. A message is the VNI header (include/toroid/vni_wire.h)
 * and, for an eager one, its data, copied into an engine FIFO message at post time. Replies
 * (CTS, NAK, ACK, DONE, CANCEL) go on their own injection FIFO, in order; when it is full they
 * wait in a queue here, flushed at the start of every round.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto_pvt.h"

/* Post a protocol message (header + @p len bytes) to @p dst on @p fifo; copied at post time. */
int
svc_vw_inject(struct trd_vni_svc *s, struct trd_inj_fifo *fifo, struct trd_coord dst,
	      const struct trd_vw_hdr *h, const void *data, uint32_t len)
{
	uint8_t buf[TRD_VW_HDR_LEN + TRD_VNI_SHORT_MAX];
	struct trd_desc d;

	trd_vw_encode(buf, h);
	if (len != 0)
		memcpy(buf + TRD_VW_HDR_LEN, data, len);
	trd_desc_fifo(&d, dst, (uint8_t)s->conf.rec_fifo, buf, TRD_VW_HDR_LEN + len,
		      TRD_VW_USER(h->type), 0);
	return trd_inject(fifo, &d);
}

/* Post a protocol message whose data is a shared payload: the header is copied at post time,
 * the data only referenced (a multicast's eager message: engine/core/payload.c). */
int
svc_vw_inject_shared(struct trd_vni_svc *s, struct trd_inj_fifo *fifo, struct trd_coord dst,
		     const struct trd_vw_hdr *h, struct trd_payload *pay)
{
	uint8_t buf[TRD_VW_HDR_LEN];
	struct trd_desc d;

	trd_vw_encode(buf, h);
	trd_desc_fifo(&d, dst, (uint8_t)s->conf.rec_fifo, buf, TRD_VW_HDR_LEN, TRD_VW_USER(h->type),
		      0);
	return trd_inject_payload(fifo, &d, pay);
}

/* A protocol message built whole in one packet buffer: its header encoded here, @p *data
 * where its @p n data bytes go (the caller writes them: its one copy). The packet references
 * the buffer, which a receiving engine takes the message from without copying it
 * (engine/core/rfifo.c). The caller posts it with svc_vw_inject_pay() and drops its
 * reference. */
int
svc_vw_pay(struct trd_vni_svc *s, const struct trd_vw_hdr *h, uint32_t n, struct trd_payload **pay,
	   uint8_t **data)
{
	void *buf;
	int rc = trd_payload_alloc(s->node, TRD_VW_HDR_LEN + n, pay, &buf);

	if (rc != 0)
		return rc;
	trd_vw_encode(buf, h);
	*data = (uint8_t *)buf + TRD_VW_HDR_LEN;
	return 0;
}

int
svc_vw_inject_pay(struct trd_vni_svc *s, struct trd_inj_fifo *fifo, struct trd_coord dst,
		  uint8_t type, struct trd_payload *pay)
{
	struct trd_desc d;

	trd_desc_fifo(&d, dst, (uint8_t)s->conf.rec_fifo, NULL, 0, TRD_VW_USER(type), 0);
	return trd_inject_payload(fifo, &d, pay);
}

static int
reply_inject(struct trd_vni_svc *s, struct trd_coord dst, const struct trd_vw_hdr *h,
	     struct trd_payload *pay)
{
	if (pay != NULL)
		return svc_vw_inject_shared(s, s->rep, dst, h, pay);
	return svc_vw_inject(s, s->rep, dst, h, NULL, 0);
}

/* Replies go on their own FIFO, in order: when it is full they wait here. */
void
svc_reply(struct trd_vni_svc *s, struct trd_coord dst, const struct trd_vw_hdr *h)
{
	svc_reply_data(s, dst, h, NULL);
}

/* A reply whose data follows the header in a shared payload (a READ_RESP): the caller's
 * reference to @p pay is taken over. */
void
svc_reply_data(struct trd_vni_svc *s, struct trd_coord dst, const struct trd_vw_hdr *h,
	       struct trd_payload *pay)
{
	struct vreply *r;

	if (s->n_preps == 0) {
		int rc = reply_inject(s, dst, h, pay);

		if (rc == 0) {
			ST(s, TX_REPLIES)++;
			trd_payload_free(pay);
			return;
		}
		if (rc != -ENOBUFS) {
			VNI_LOG(DEBUG, "reply type %u to %u,%u,%u not sent: %s", h->type, dst.x,
				dst.y, dst.z, strerror(-rc));
			trd_payload_free(pay);
			return;
		}
	}
	if (s->n_preps == s->cap_preps) {
		unsigned int cap = s->cap_preps ? 2 * s->cap_preps : 256;
		struct vreply *np = malloc(cap * sizeof(*np));

		if (np == NULL) {
			VNI_LOG(ERR, "out of memory for a queued reply: dropped");
			trd_payload_free(pay);
			return;
		}
		for (unsigned int i = 0; i < s->n_preps; i++)
			np[i] = s->preps[(s->head_preps + i) % s->cap_preps];
		free(s->preps);
		s->preps = np;
		s->cap_preps = cap;
		s->head_preps = 0;
	}
	r = &s->preps[(s->head_preps + s->n_preps) % s->cap_preps];
	r->dst = dst;
	r->h = *h;
	r->pay = pay;
	s->n_preps++;
}

unsigned int
svc_replies_flush(struct trd_vni_svc *s)
{
	unsigned int k = 0;

	while (s->n_preps > 0) {
		struct vreply *r = &s->preps[s->head_preps];
		int rc = reply_inject(s, r->dst, &r->h, r->pay);

		if (rc == -ENOBUFS)
			break;
		if (rc == 0)
			ST(s, TX_REPLIES)++;
		trd_payload_free(r->pay);
		r->pay = NULL;
		s->head_preps = (s->head_preps + 1) % s->cap_preps;
		s->n_preps--;
		k++;
	}
	return k;
}

/* The header of the answer @p type to request @p req: addressed back to its sender, naming
 * its message (id, key echoed), grant, length and tag. */
void
svc_rep_hdr(struct trd_vw_hdr *r, uint8_t type, const struct trd_vw_hdr *req, int status)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->status = status;
	r->src_app = req->dst_app;
	r->src_proc = req->dst_proc;
	r->dst_app = req->src_app;
	r->dst_proc = req->src_proc;
	r->msg_id = req->msg_id;
	r->key = req->key;
	r->grant_id = req->grant_id;
	r->len = req->len;
	r->tag = req->tag;
}
