/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process capture: every frame a node hands to a port or receives, in that order, into a
 * pcap file with nanosecond timestamps (libpcap). Several nodes may share one file.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "../dma/node_pvt.h"

struct trd_capture {
	pcap_t *pd;
	pcap_dumper_t *dumper;
	rte_spinlock_t lock;   /* nodes served by different lcores may share the file */
	unsigned int refs;
	unsigned int snaplen;
	char path[PATH_MAX];
	struct trd_capture *next;
	uint8_t buf[65536];
};

static rte_spinlock_t caps_lock = RTE_SPINLOCK_INITIALIZER;
static struct trd_capture *caps;

void
trd_capture_frames(struct trd_capture *c, struct rte_mbuf *const *pkts, unsigned int n)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	rte_spinlock_lock(&c->lock);
	for (unsigned int i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		uint32_t cap = RTE_MIN(m->pkt_len, c->snaplen);
		struct pcap_pkthdr h;
		/* rte_pktmbuf_read() walks off the chain when asked for 0 bytes (an empty frame) */
		const void *data = cap == 0 ? c->buf : rte_pktmbuf_read(m, 0, cap, c->buf);

		if (data == NULL)
			continue;
		h.ts.tv_sec = ts.tv_sec;
		h.ts.tv_usec = ts.tv_nsec; /* a nanosecond-precision file */
		h.caplen = cap;
		h.len = m->pkt_len;
		pcap_dump((u_char *)c->dumper, &h, data);
	}
	rte_spinlock_unlock(&c->lock);
}

static struct trd_capture *
capture_open(const char *path, unsigned int snaplen)
{
	struct trd_capture *c;

	for (c = caps; c != NULL; c = c->next)
		if (strcmp(c->path, path) == 0) {
			c->refs++;
			return c;
		}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->snaplen = snaplen ? RTE_MIN(snaplen, 65535u) : 65535u;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)c->snaplen,
						     PCAP_TSTAMP_PRECISION_NANO);
	c->dumper = c->pd ? pcap_dump_open(c->pd, path) : NULL;
	if (c->dumper == NULL) {
		if (c->pd)
			pcap_close(c->pd);
		free(c);
		return NULL;
	}
	rte_spinlock_init(&c->lock);
	c->refs = 1;
	c->next = caps;
	caps = c;
	return c;
}

static void
capture_put(struct trd_capture *c)
{
	struct trd_capture **pp;

	if (--c->refs != 0) {
		pcap_dump_flush(c->dumper);
		return;
	}
	for (pp = &caps; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pcap_dump_close(c->dumper);
	pcap_close(c->pd);
	free(c);
}

int
trd_node_capture(struct trd_node *n, const char *path, unsigned int snaplen)
{
	struct trd_capture *old, *c = NULL;
	int rc = 0;

	if (n == NULL)
		return -EINVAL;
	rte_spinlock_lock(&caps_lock);
	if (path != NULL) {
		c = capture_open(path, snaplen);
		if (c == NULL)
			rc = -EIO;
	}
	if (rc == 0) {
		old = n->cap;
		for (unsigned int i = 0; i <= n->n_links; i++)
			n->links[i]->cap_next = n->links[i]->pend_tail;
		__atomic_store_n(&n->cap, c, __ATOMIC_SEQ_CST);
		/* the serving lcore may still be writing with the old one */
		trd_node_quiesce(n);
		if (old != NULL)
			capture_put(old);
	}
	rte_spinlock_unlock(&caps_lock);
	return rc;
}
