/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process capture: a tap on a link writes every frame the link hands to its port or
 * receives, in that order, into a pcapng file: one interface per link (named by whoever
 * installs the tap: the node names it after itself and the link), nanosecond timestamps, the
 * direction of each frame. Several links and nodes may share one file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "link_pvt.h"

#define CAP_MAX_IFS 256

struct trd_capture {
	FILE *f;
	rte_spinlock_t lock; /* nodes served by different lcores may share the file */
	unsigned int refs;
	unsigned int snaplen;
	unsigned int n_ifs;
	const struct trd_link *ifs[CAP_MAX_IFS]; /* interface id -> link */
	char path[PATH_MAX];
	struct trd_capture *next;
	uint8_t buf[65536 + 64];
};

static rte_spinlock_t caps_lock = RTE_SPINLOCK_INITIALIZER;
static struct trd_capture *caps;

/* ---- pcapng, written directly (libpcap writes only pcap; DPDK's writer needs ethdev ports
 * and our ring links have none) ---- */

static void
put_opt(uint8_t **p, uint16_t code, const void *val, uint16_t len)
{
	memcpy(*p, &code, 2);
	memcpy(*p + 2, &len, 2);
	memcpy(*p + 4, val, len);
	memset(*p + 4 + len, 0, (4 - len % 4) % 4);
	*p += 4 + RTE_ALIGN(len, 4);
}

/* Close a block started at @p b (type written), now ending at @p p: set both lengths. */
static void
put_block(FILE *f, uint8_t *b, uint8_t *p)
{
	uint32_t total = (uint32_t)(p - b) + 4;

	memcpy(b + 4, &total, 4);
	memcpy(p, &total, 4);
	fwrite(b, 1, total, f);
}

static void
write_shb(FILE *f)
{
	uint8_t b[128], *p = b;
	uint32_t type = 0x0A0D0D0A, magic = 0x1A2B3C4D;
	uint16_t ver[2] = {1, 0};
	int64_t len = -1;
	static const char app[] = "toroid (trd_node_capture)";
	uint32_t end = 0;

	memcpy(p, &type, 4);
	p += 8;
	memcpy(p, &magic, 4);
	memcpy(p + 4, ver, 4);
	memcpy(p + 8, &len, 8);
	p += 16;
	put_opt(&p, 4, app, sizeof(app) - 1); /* shb_userappl */
	memcpy(p, &end, 4);
	p += 4;
	put_block(f, b, p);
}

/* The interface of a link, made on its first frame. */
static uint32_t
iface_of(struct trd_capture *c, const struct trd_link *l, const char *name)
{
	uint8_t b[256], *p = b;
	uint32_t type = 1, snap = c->snaplen, end = 0;
	uint16_t linktype = 1, rsvd = 0;
	uint8_t tsresol = 9; /* nanoseconds */
	unsigned int i;

	for (i = 0; i < c->n_ifs; i++)
		if (c->ifs[i] == l)
			return i;
	if (c->n_ifs == CAP_MAX_IFS)
		return 0; /* a very large capture: later links share the first interface */
	memcpy(p, &type, 4);
	p += 8;
	memcpy(p, &linktype, 2);
	memcpy(p + 2, &rsvd, 2);
	memcpy(p + 4, &snap, 4);
	p += 8;
	put_opt(&p, 2, name, (uint16_t)strnlen(name, 127)); /* if_name */
	put_opt(&p, 9, &tsresol, 1);                        /* if_tsresol */
	memcpy(p, &end, 4);
	p += 4;
	put_block(c->f, b, p);
	c->ifs[c->n_ifs] = l;
	return c->n_ifs++;
}

void
trd_capture_frames(struct trd_capture *c, const struct trd_link *l, const char *ifname,
		   struct rte_mbuf *const *pkts, unsigned int nb, bool outbound)
{
	struct timespec ts;
	uint64_t t;
	uint32_t ifid;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	rte_spinlock_lock(&c->lock);
	ifid = iface_of(c, l, ifname);
	for (unsigned int i = 0; i < nb; i++) {
		const struct rte_mbuf *m = pkts[i];
		uint32_t cap = RTE_MIN(m->pkt_len, c->snaplen), hdr[7], flags = outbound ? 2 : 1;
		uint32_t total = 28 + RTE_ALIGN(cap, 4) + 12 + 4;
		/* rte_pktmbuf_read() walks off the chain when asked for 0 bytes (an empty frame) */
		const void *data = cap == 0 ? c->buf : rte_pktmbuf_read(m, 0, cap, c->buf);
		uint32_t opt[3] = {2 | 4u << 16, flags, 0}; /* epb_flags: direction; end */
		static const uint8_t pad[4];

		if (data == NULL)
			continue;
		hdr[0] = 6; /* enhanced packet block */
		hdr[1] = total;
		hdr[2] = ifid;
		hdr[3] = (uint32_t)(t >> 32);
		hdr[4] = (uint32_t)t;
		hdr[5] = cap;
		hdr[6] = m->pkt_len;
		fwrite(hdr, 1, sizeof(hdr), c->f);
		fwrite(data, 1, cap, c->f);
		fwrite(pad, 1, RTE_ALIGN(cap, 4) - cap, c->f);
		fwrite(opt, 1, sizeof(opt), c->f);
		fwrite(&total, 1, 4, c->f);
	}
	rte_spinlock_unlock(&c->lock);
}

struct trd_capture *
trd_capture_open(const char *path, unsigned int snaplen)
{
	struct trd_capture *c;

	rte_spinlock_lock(&caps_lock);
	for (c = caps; c != NULL; c = c->next)
		if (strcmp(c->path, path) == 0) {
			c->refs++;
			rte_spinlock_unlock(&caps_lock);
			return c;
		}
	c = calloc(1, sizeof(*c));
	if (c != NULL) {
		c->snaplen = snaplen ? RTE_MIN(snaplen, 65535u) : 65535u;
		snprintf(c->path, sizeof(c->path), "%s", path);
		c->f = fopen(path, "wb");
		if (c->f == NULL) {
			free(c);
			c = NULL;
		}
	}
	if (c != NULL) {
		write_shb(c->f);
		rte_spinlock_init(&c->lock);
		c->refs = 1;
		c->next = caps;
		caps = c;
	}
	rte_spinlock_unlock(&caps_lock);
	return c;
}

void
trd_capture_get(struct trd_capture *c)
{
	rte_spinlock_lock(&caps_lock);
	c->refs++;
	rte_spinlock_unlock(&caps_lock);
}

void
trd_capture_put(struct trd_capture *c)
{
	struct trd_capture **pp;

	if (c == NULL)
		return;
	rte_spinlock_lock(&caps_lock);
	if (--c->refs != 0) {
		rte_spinlock_lock(&c->lock);
		fflush(c->f);
		rte_spinlock_unlock(&c->lock);
		rte_spinlock_unlock(&caps_lock);
		return;
	}
	for (pp = &caps; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	rte_spinlock_unlock(&caps_lock);
	fclose(c->f);
	free(c);
}
