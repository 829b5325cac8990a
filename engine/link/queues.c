/* SPDX-License-Identifier: BSD-3-Clause */
/* net_ring port pairs with several queue pairs: a link per queue, for nodes split in shares
 * (docs/architecture.md "Threading"). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "link_pvt.h"

#define LINK_LOG(level, fmt, ...)                                                                  \
	rte_log(RTE_LOG_##level, trd_link_logtype, "toroid link: " fmt "\n", ##__VA_ARGS__)
#define TRD_DEFAULT_MTU 1500
/* DPDK's net_ring keeps each queue's packet counts in 24-byte entries of one array and writes
 * them on every burst, an empty one too: queues 0 and 1, polled by two lcores, shared a cache
 * line that both wrote on every poll. Link k uses queue k * Q_STRIDE (96 bytes apart: other
 * lines; less when that many queues would pass the driver's 16); the queues between carry
 * nothing and are never polled. */
#define Q_STRIDE 4

/* Configure net_ring port @p port with @p nq queue pairs receiving into @p pool and start it. */
static int
ring_port_setup(uint16_t port, unsigned int nq, uint16_t mtu, struct rte_mempool *pool)
{
	struct rte_eth_conf pconf;
	int rc;

	memset(&pconf, 0, sizeof(pconf));
	rc = rte_eth_dev_configure(port, (uint16_t)nq, (uint16_t)nq, &pconf);
	for (unsigned int q = 0; q < nq && rc == 0; q++) {
		rc = rte_eth_rx_queue_setup(port, (uint16_t)q, 1024, rte_eth_dev_socket_id(port),
					    NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, (uint16_t)q, 1024,
						    rte_eth_dev_socket_id(port), NULL);
	}
	if (rc == 0) {
		rc = rte_eth_dev_set_mtu(port, mtu);
		if (rc == -ENOTSUP)
			rc = 0;
	}
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc == 0)
		rte_eth_promiscuous_enable(port);
	return rc;
}

int
trd_link_ethdev_ring_pair_queues_pool(const char *name, uint16_t mtu, struct rte_mempool *pool,
				      unsigned int nq, struct trd_link *a[], struct trd_link *b[])
{
	struct rte_ring *r1[TRD_LINK_MAX_QUEUES] = {NULL}, *r2[TRD_LINK_MAX_QUEUES] = {NULL};
	struct rte_ring *p1[RTE_PMD_RING_MAX_RX_RINGS], *p2[RTE_PMD_RING_MAX_RX_RINGS];
	struct trd_link_conf conf = {.no_setup = true};
	unsigned int q, np, stride;
	char n[64];
	int pa, pb, rc;

	if (name == NULL || a == NULL || b == NULL || pool == NULL || nq == 0 ||
	    nq > TRD_LINK_MAX_QUEUES)
		return -EINVAL;
	if (nq == 1)
		return trd_link_ethdev_ring_pair_pool(name, mtu, pool, &a[0], &b[0]);
	if (rte_eth_dev_count_total() + 2 > RTE_MAX_ETHPORTS)
		return -ENOSPC;
	mtu = mtu ? mtu : TRD_DEFAULT_MTU;
	for (q = 0; q < nq; q++) {
		r1[q] = trd_link_ring_make(name, "ea", 2048);
		r2[q] = trd_link_ring_make(name, "eb", 2048);
		if (r1[q] == NULL || r2[q] == NULL)
			goto nomem;
	}
	/* link q's queue q * Q_STRIDE of a sends into ring r1[q], which the same queue of b
	 * receives from, and back; a queue between two links' names the lower one's rings (it
	 * is never polled nor sent on) */
	stride = RTE_MIN(Q_STRIDE, (RTE_PMD_RING_MAX_RX_RINGS - 1) / (nq - 1));
	np = (nq - 1) * stride + 1;
	for (unsigned int i = 0; i < np; i++) {
		p1[i] = r1[i / stride];
		p2[i] = r2[i / stride];
	}
	snprintf(n, sizeof(n), "%s_a", name);
	pa = rte_eth_from_rings(n, p2, np, p1, np, SOCKET_ID_ANY);
	snprintf(n, sizeof(n), "%s_b", name);
	pb = pa < 0 ? -1 : rte_eth_from_rings(n, p1, np, p2, np, SOCKET_ID_ANY);
	if (pa < 0 || pb < 0)
		goto fail;
	rc = ring_port_setup((uint16_t)pa, np, mtu, pool);
	if (rc == 0)
		rc = ring_port_setup((uint16_t)pb, np, mtu, pool);
	if (rc != 0) {
		rte_errno = -rc;
		goto fail;
	}
	for (q = 0; q < nq; q++) {
		conf.queue = (uint16_t)(q * stride);
		a[q] = trd_link_ethdev_pool((uint16_t)pa, &conf, pool);
		b[q] = a[q] == NULL ? NULL : trd_link_ethdev_pool((uint16_t)pb, &conf, pool);
		if (b[q] == NULL) {
			trd_link_free(a[q]);
			while (q-- > 0) {
				trd_link_free(a[q]);
				trd_link_free(b[q]);
			}
			goto fail;
		}
		a[q]->peer = b[q]->mac;
		b[q]->peer = a[q]->mac;
	}
	/* queue 0's links stop and close the ports: free the others first */
	a[0]->owns_port = true;
	b[0]->owns_port = true;
	return 0;
nomem:
	for (q = 0; q < nq; q++) {
		rte_ring_free(r1[q]);
		rte_ring_free(r2[q]);
	}
	return -ENOMEM;
fail:
	LINK_LOG(ERR, "%s: cannot make a net_ring pair of %u queues: %s", name, nq,
		 rte_strerror(rte_errno));
	return rte_errno ? -rte_errno : -ENODEV;
}
