/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control packets the engine makes itself: DONE, ATOMIC_REPLY (sequenced) and ACK (not).
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring_elem.h>

#include "core_pvt.h"

/* Build and queue an engine-made packet (DONE, ATOMIC_REPLY: sequenced; ACK: not). */
static int
ctl_build(struct trd_node *n, const uint8_t dst[3], uint8_t type, uint16_t flags, uint32_t aux,
	  uint64_t key, uint64_t offset, const void *pay, uint16_t len, bool sequenced,
	  uint32_t ack, uint16_t epoch, const uint64_t *proof)
{
	struct trd_coord c = {dst[0], dst[1], dst[2]};
	int rank = trd_rank_of(n, c);
	struct trd_peer *pe = NULL;
	struct rte_ether_hdr *eh;
	struct trd_route *rt;
	struct rte_mbuf *m;
	struct trd_hdr *h;

	if (rank < 0)
		return TRD_DROP_UNKNOWN_NODE;
	rt = &n->routes[rank];
	if (rt->link == NULL)
		return TRD_DROP_NO_ROUTE;
	if (sequenced && n->reliable && (uint32_t)rank != n->rank) {
		pe = trd_rel_peer(n, (uint32_t)rank);
		if (pe == NULL)
			return TRD_DROP_NO_MEMORY;
		if (pe->down)
			return TRD_DROP_PEER_DOWN;
		if (trd_rel_room_ctl(n, pe) == 0)
			return TRD_DROP_REPLY_FULL;
	}
	if (trd_link_room(rt->link) == 0)
		return TRD_DROP_REPLY_FULL;
	m = trd_mbuf_get(n);
	if (m == NULL)
		return TRD_DROP_NO_MEMORY;
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eh->dst_addr = rt->dmac;
	eh->src_addr = rt->link->mac;
	eh->ether_type = rte_cpu_to_be_16(TRD_ETHERTYPE);
	h = (struct trd_hdr *)(eh + 1);
	trd_hdr_encode(
		h, &(const struct trd_pkt){
			   .version = TRD_WIRE_VERSION,
			   .type = type,
			   .flags = (uint16_t)(flags | n->lane_hf |
					       (proof != NULL ? TRD_HF_PROOF : 0)),
			   .src = {n->coord.x, n->coord.y, n->coord.z},
			   .hops = rt->hops,
			   .dst = {dst[0], dst[1], dst[2]},
			   .key = key,
			   .offset = offset,
			   .msg_len = len,
			   .pay_len = len,
			   .epoch = epoch, /* an ACK's own session; trd_rel_hold() sets it else */
			   .msg_id = (flags & TRD_HF_ECHO) && proof != NULL
					     ? trd_wire_token_check(*proof)
					     : n->next_msg_id++,
			   .ack = ack,
			   .aux = aux,
		   });
	if (len != 0)
		memcpy(h + 1, pay, len);
	m->data_len = (uint16_t)(TRD_FRAME_HLEN + len);
	if (proof != NULL) {
		uint64_t be = trd_be64(*proof);

		memcpy((uint8_t *)(h + 1) + len, &be, sizeof(be));
		m->data_len += TRD_PROOF_LEN;
	}
	m->pkt_len = m->data_len;
	if (trd_pkt_finish(n, pe, h, m) != 0) {
		rte_pktmbuf_free(m);
		return TRD_DROP_NO_MEMORY;
	}
	trd_link_queue(rt->link, m, NULL, NULL, 0);
	return 0;
}

bool
trd_ctl_room(struct trd_node *n, const uint8_t dst[3])
{
	struct trd_coord c = {dst[0], dst[1], dst[2]};
	int rank = trd_rank_of(n, c);
	struct trd_route *rt;

	if (rank < 0)
		return true; /* the send itself will say why not */
	rt = &n->routes[rank];
	if (rt->link == NULL)
		return true;
	if (n->reliable && (uint32_t)rank != n->rank) {
		struct trd_peer *pe = trd_rel_peer(n, (uint32_t)rank);

		if (pe == NULL)
			return true; /* the send says why not */
		if (trd_rel_room_ctl(n, pe) == 0) {
			trd_rel_want(n, pe); /* perhaps its session must start first */
			return false;
		}
	}
	return trd_link_room(rt->link) != 0 &&
	       (n->mcache_n != 0 || rte_mempool_avail_count(n->pool) != 0);
}

int
trd_ctl_send(struct trd_node *n, const uint8_t dst[3], uint8_t type, uint32_t aux, uint64_t key,
	     uint64_t offset, const void *pay, uint16_t len)
{
	int rc = ctl_build(n, dst, type, TRD_HF_ALL, aux, key, offset, pay, len, true, 0, 0, NULL);

	if (rc == 0)
		n->stat[TRD_STAT_TX_CTL]++;
	return rc;
}

int
trd_ctl_send_ack(struct trd_node *n, const uint8_t dst[3], uint16_t flags, uint32_t ack,
		 uint16_t acked_epoch, uint16_t epoch, uint64_t key, uint32_t aux, const void *sack,
		 uint16_t len, const uint64_t *proof)
{
	return ctl_build(n, dst, TRD_PKT_ACK, TRD_HF_ALL | flags, aux, key, acked_epoch, sack, len,
			 false, ack, epoch, proof);
}
