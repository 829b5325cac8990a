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

#include "service_pvt.h"

/* Post a protocol message (header + @p len bytes) to @p dst on @p fifo; copied at post time. */
int
vnis_vw_inject(struct trd_vnis *s, struct trd_fifo *fifo, struct trd_coord dst,
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
 * the data only referenced (a multicast's eager message: engine/core/mcast.c). */
int
vnis_vw_inject_shared(struct trd_vnis *s, struct trd_fifo *fifo, struct trd_coord dst,
		      const struct trd_vw_hdr *h, struct trd_payload *pay)
{
	uint8_t buf[TRD_VW_HDR_LEN];
	struct trd_desc d;

	trd_vw_encode(buf, h);
	trd_desc_fifo(&d, dst, (uint8_t)s->conf.rec_fifo, buf, TRD_VW_HDR_LEN, TRD_VW_USER(h->type),
		      0);
	return trd_inject_payload(fifo, &d, pay);
}

/* Replies go on their own FIFO, in order: when it is full they wait here. */
void
vnis_reply(struct trd_vnis *s, struct trd_coord dst, const struct trd_vw_hdr *h)
{
	struct vreply *r;

	if (s->n_preps == 0) {
		int rc = vnis_vw_inject(s, s->rep, dst, h, NULL, 0);

		if (rc == 0) {
			ST(s, TX_REPLIES)++;
			return;
		}
		if (rc != -ENOBUFS) {
			VNI_LOG(DEBUG, "reply type %u to %u,%u,%u not sent: %s", h->type, dst.x,
				dst.y, dst.z, strerror(-rc));
			return;
		}
	}
	if (s->n_preps == s->cap_preps) {
		unsigned int cap = s->cap_preps ? 2 * s->cap_preps : 256;
		struct vreply *np = malloc(cap * sizeof(*np));

		if (np == NULL) {
			VNI_LOG(ERR, "out of memory for a queued reply: dropped");
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
	s->n_preps++;
}

unsigned int
vnis_replies_flush(struct trd_vnis *s)
{
	unsigned int k = 0;

	while (s->n_preps > 0) {
		struct vreply *r = &s->preps[s->head_preps];
		int rc = vnis_vw_inject(s, s->rep, r->dst, &r->h, NULL, 0);

		if (rc == -ENOBUFS)
			break;
		if (rc == 0)
			ST(s, TX_REPLIES)++;
		s->head_preps = (s->head_preps + 1) % s->cap_preps;
		s->n_preps--;
		k++;
	}
	return k;
}
