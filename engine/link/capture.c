/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process capture: a tap on a link writes every frame the link hands to its port or
 * receives, in that order, into a pcapng file: one interface per link (named by whoever
 * installs the tap: the node names it after itself and the link), nanosecond timestamps, the
 * direction of each frame. Several links and nodes may share one file.
 *
 * A BPF filter (libpcap's pcap_compile for Ethernet, pcap_offline_filter per frame) chooses the
 * frames; files rotate by size (PATH.1, PATH.2, ... or a ring PATH.0 .. PATH.N-1) or on
 * request; a limit on the bytes kept on disk (1 GiB by default) stops the recording, counting
 * what it leaves out. The capture's lock guards its state: the serving lcore takes it to record
 * frames; control (rotation, figures) takes it briefly: a rotation asked for opens the next file
 * and writes its header before, and closes the old one after. A rotation by size happens on
 * the serving lcore, in the frame that fills the file; after a failed open it is retried about
 * once a second, the frames meanwhile dropped and counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "link_pvt.h"

#define CAP_MAX_IFS   256
#define CAP_MAX_FILES 100000 /* a ring of files: at most this many */

struct trd_capture {
	FILE *f;
	rte_spinlock_t lock; /* nodes served by different lcores may share the file */
	unsigned int refs;
	unsigned int snaplen;
	unsigned int n_ifs;
	const struct trd_link *ifs[CAP_MAX_IFS]; /* interface id -> link */
	char path[1000];                         /* as given: the key, and the files' stem */
	char cur[1024];                          /* the file written now (trd_capture_stats.file) */
	struct trd_capture *next;
	/* the filter (pcap_compile), run on each frame before it is written */
	bool has_filter;
	struct bpf_program prog;
	char filter[256];
	/* files: rotation and the limit */
	uint64_t file_size, limit;
	unsigned int file_count;
	unsigned int seq;    /* files opened */
	uint64_t file_bytes; /* in the file written now */
	uint64_t file_frames;
	uint64_t kept;  /* in the files on disk (the ring's, or all of them) */
	uint64_t *ring; /* with file_count: the bytes of each file of the ring */
	bool full;
	bool rotating;     /* trd_capture_rotate() is opening the next file outside the lock */
	bool write_failed; /* in the frame written now */
	int error;         /* errno of the first write that failed */
	uint64_t retry_at; /* after a failed rotation by size: no new try before (timer cycles) */
	uint64_t frames, bytes, filtered, dropped;
	uint8_t buf[65536 + 64];
};

static rte_spinlock_t caps_lock = RTE_SPINLOCK_INITIALIZER;
static struct trd_capture *caps;

/* Every write goes through here: the file's size and the bytes kept count it. */
static void
cap_write(struct trd_capture *c, const void *p, size_t len)
{
	if (c->f == NULL)
		return;
	if (fwrite(p, 1, len, c->f) != len || ferror(c->f)) {
		if (c->error == 0)
			c->error = errno != 0 ? errno : EIO;
		c->write_failed = true;
		clearerr(c->f);
		return;
	}
	c->file_bytes += len;
	c->kept += len;
	c->bytes += len;
	if (c->ring != NULL)
		c->ring[(c->seq - 1) % c->file_count] += len;
}

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
put_block(struct trd_capture *c, uint8_t *b, uint8_t *p)
{
	uint32_t total = (uint32_t)(p - b) + 4;

	memcpy(b + 4, &total, 4);
	memcpy(p, &total, 4);
	cap_write(c, b, total);
}

#define CAP_SHB_MAX 128

/* The section header block that starts each file, into @p b; its length. */
static uint32_t
shb_build(uint8_t b[CAP_SHB_MAX])
{
	uint8_t *p = b;
	uint32_t type = 0x0A0D0D0A, magic = 0x1A2B3C4D;
	uint16_t ver[2] = {1, 0};
	int64_t len = -1;
	static const char app[] = "toroid (trd_node_capture)";
	uint32_t end = 0, total;

	memcpy(p, &type, 4);
	p += 8;
	memcpy(p, &magic, 4);
	memcpy(p + 4, ver, 4);
	memcpy(p + 8, &len, 8);
	p += 16;
	put_opt(&p, 4, app, sizeof(app) - 1); /* shb_userappl */
	memcpy(p, &end, 4);
	p += 4;
	total = (uint32_t)(p - b) + 4;
	memcpy(b + 4, &total, 4);
	memcpy(p, &total, 4);
	return total;
}

/* The interface id of link @p l in the file written now; -1 if it has none yet. */
static int
iface_find(const struct trd_capture *c, const struct trd_link *l)
{
	for (unsigned int i = 0; i < c->n_ifs; i++)
		if (c->ifs[i] == l)
			return (int)i;
	return c->n_ifs == CAP_MAX_IFS ? 0 : -1;
}

#define CAP_IDB_MAX 256 /* an interface block at most (iface_of's buffer) */

/* The interface of a link, made on its first frame of each file. */
static uint32_t
iface_of(struct trd_capture *c, const struct trd_link *l, const char *name)
{
	uint8_t b[CAP_IDB_MAX], *p = b;
	uint32_t type = 1, snap = c->snaplen, end = 0;
	uint16_t linktype = 1, rsvd = 0;
	uint8_t tsresol = 9; /* nanoseconds */
	int id = iface_find(c, l);

	if (id >= 0)
		return (uint32_t)id; /* a very large capture: later links share the first one */
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
	put_block(c, b, p);
	c->ifs[c->n_ifs] = l;
	return c->n_ifs++;
}

/* The name of file number @p seq: PATH, PATH.1, PATH.2, ...; in a ring PATH.0 .. PATH.N-1. */
static void
cap_file_name(const struct trd_capture *c, unsigned int seq, char *out, size_t len)
{
	int n;

	if (c->file_count != 0)
		n = snprintf(out, len, "%s.%u", c->path, seq % c->file_count);
	else if (seq == 0)
		n = snprintf(out, len, "%s", c->path);
	else
		n = snprintf(out, len, "%s.%u", c->path, seq);
	RTE_SET_USED(n); /* the path is shorter than the buffer by more than a number */
}

/* A capture file holds the frames' payload: readable by its owner only, and never written
 * through a symlink someone else planted at its name (-ELOOP). */
static FILE *
cap_fopen(const char *name)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "wb");
	if (f == NULL) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

/* Open file number @p seq and write its header; no state of @p c changes (no lock needed). */
static int
cap_open_file(const struct trd_capture *c, unsigned int seq, char *name, size_t len, FILE **fp,
	      uint32_t *hdr_len)
{
	uint8_t b[CAP_SHB_MAX];
	uint32_t n = shb_build(b);
	FILE *f;

	cap_file_name(c, seq, name, len);
	f = cap_fopen(name);
	if (f == NULL)
		return errno != 0 ? -errno : -EIO;
	if (fwrite(b, 1, n, f) != n) {
		int e = errno != 0 ? errno : EIO;

		fclose(f);
		return -e;
	}
	*fp = f;
	*hdr_len = n;
	return 0;
}

/* Make @p f (opened by cap_open_file() for c->seq) the file written now; the old one, to be
 * closed by the caller (outside the lock if it can). Under c->lock once shared. */
static FILE *
cap_swap(struct trd_capture *c, FILE *f, const char *name, uint32_t hdr_len)
{
	FILE *old = c->f;

	if (c->ring != NULL) {
		/* the ring's oldest file went: its bytes left the disk */
		c->kept -= c->ring[c->seq % c->file_count];
		c->ring[c->seq % c->file_count] = 0;
	}
	c->f = f;
	memcpy(c->cur, name, sizeof(c->cur));
	c->seq++;
	c->file_bytes = hdr_len;
	c->file_frames = 0;
	c->n_ifs = 0; /* each file names its interfaces again */
	c->kept += hdr_len;
	c->bytes += hdr_len;
	if (c->ring != NULL)
		c->ring[(c->seq - 1) % c->file_count] += hdr_len;
	return old;
}

/* Rotation by size, on the serving lcore under c->lock: the next file, or (if it cannot be
 * opened) no new try for about a second. */
static void
cap_rotate_here(struct trd_capture *c)
{
	char name[sizeof(c->cur)];
	uint32_t hdr_len;
	FILE *f, *old;
	uint64_t now = rte_get_timer_cycles();

	if (c->rotating || now < c->retry_at)
		return;
	if (cap_open_file(c, c->seq, name, sizeof(name), &f, &hdr_len) != 0) {
		c->retry_at = now + rte_get_timer_hz();
		return;
	}
	old = cap_swap(c, f, name, hdr_len);
	if (old != NULL)
		fclose(old);
}

/* One frame into the file, if the filter wants it and the limit allows it. */
static void
cap_frame(struct trd_capture *c, const struct trd_link *l, const char *ifname,
	  const struct rte_mbuf *m, uint64_t t, bool outbound)
{
	uint32_t cap = RTE_MIN(m->pkt_len, c->snaplen), hdr[7], flags = outbound ? 2 : 1;
	uint32_t total = 28 + RTE_ALIGN(cap, 4) + 12 + 4;
	/* rte_pktmbuf_read() walks off the chain when asked for 0 bytes (an empty frame) */
	const void *data = cap == 0 ? c->buf : rte_pktmbuf_read(m, 0, cap, c->buf);
	uint32_t opt[3] = {2 | 4u << 16, flags, 0}; /* epb_flags: direction; end */
	static const uint8_t pad[4];
	uint64_t need;

	if (data == NULL) {
		c->dropped++;
		return;
	}
	if (c->has_filter) {
		struct pcap_pkthdr ph = {.caplen = cap, .len = m->pkt_len};

		if (pcap_offline_filter(&c->prog, &ph, data) == 0) {
			c->filtered++;
			return;
		}
	}
	need = total + (iface_find(c, l) >= 0 ? 0 : CAP_IDB_MAX);
	if (c->file_size != 0 && c->file_frames != 0 && c->file_bytes + need > c->file_size) {
		cap_rotate_here(c);
		if (c->file_frames !=
		    0) { /* no new file (yet): the frame would overfill this one */
			c->dropped++;
			return;
		}
	}
	if (c->f == NULL) {
		c->dropped++;
		return;
	}
	if (c->limit != UINT64_MAX && c->kept + need > c->limit) {
		c->full = true;
		c->dropped++;
		return;
	}
	c->write_failed = false;
	hdr[0] = 6; /* enhanced packet block */
	hdr[1] = total;
	hdr[2] = iface_of(c, l, ifname);
	hdr[3] = (uint32_t)(t >> 32);
	hdr[4] = (uint32_t)t;
	hdr[5] = cap;
	hdr[6] = m->pkt_len;
	cap_write(c, hdr, sizeof(hdr));
	cap_write(c, data, cap);
	cap_write(c, pad, RTE_ALIGN(cap, 4) - cap);
	cap_write(c, opt, sizeof(opt));
	cap_write(c, &total, 4);
	if (c->write_failed) {
		c->dropped++; /* not (wholly) in the file */
		return;
	}
	c->frames++;
	c->file_frames++;
}

void
trd_capture_frames(struct trd_capture *c, const struct trd_link *l, const char *ifname,
		   struct rte_mbuf *const *pkts, unsigned int nb, bool outbound)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	rte_spinlock_lock(&c->lock);
	for (unsigned int i = 0; i < nb; i++)
		cap_frame(c, l, ifname, pkts[i], t, outbound);
	rte_spinlock_unlock(&c->lock);
}

static int
cap_compile(const char *expr, unsigned int snaplen, struct bpf_program *prog, char *err, size_t len)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, (int)snaplen);
	int rc;

	if (p == NULL) {
		if (err != NULL && len != 0)
			snprintf(err, len, "no memory");
		return -ENOMEM;
	}
	/* libpcap >= 1.8 compiles from several threads at once */
	rc = pcap_compile(p, prog, expr, 1, PCAP_NETMASK_UNKNOWN);
	if (rc != 0 && err != NULL && len != 0)
		snprintf(err, len, "%s", pcap_geterr(p));
	pcap_close(p);
	return rc == 0 ? 0 : -EINVAL;
}

int
trd_capture_filter_check(const char *expr, char *err, size_t len)
{
	struct bpf_program prog;
	int rc;

	if (expr == NULL)
		return -EINVAL;
	rc = cap_compile(expr, 65535, &prog, err, len);
	if (rc == 0)
		pcap_freecode(&prog);
	return rc;
}

static void
cap_free(struct trd_capture *c)
{
	if (c->f != NULL && fclose(c->f) != 0)
		rte_log(RTE_LOG_ERR, trd_link_logtype, "toroid capture: %s: %s\n", c->cur,
			strerror(errno));
	if (c->has_filter)
		pcap_freecode(&c->prog);
	free(c->ring);
	free(c);
}

/* A new capture as @p conf says; NULL and rte_errno on failure. */
static struct trd_capture *
cap_new(const char *path, const struct trd_capture_conf *conf)
{
	struct trd_capture *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->snaplen = conf->snaplen ? RTE_MIN(conf->snaplen, 65535u) : 65535u;
	snprintf(c->path, sizeof(c->path), "%s", path);
	rte_spinlock_init(&c->lock);
	c->file_size = conf->file_size;
	c->file_count = conf->file_size != 0 ? RTE_MIN(conf->file_count, CAP_MAX_FILES) : 0;
	c->limit = conf->limit != 0 ? conf->limit : TRD_CAPTURE_LIMIT_DEFAULT;
	if (conf->filter != NULL && conf->filter[0] != '\0') {
		char err[256];

		rc = cap_compile(conf->filter, c->snaplen, &c->prog, err, sizeof(err));
		if (rc != 0) {
			rte_log(RTE_LOG_ERR, trd_link_logtype, "toroid capture: filter '%s': %s\n",
				conf->filter, err);
			free(c);
			rte_errno = -rc;
			return NULL;
		}
		c->has_filter = true;
		snprintf(c->filter, sizeof(c->filter), "%s", conf->filter);
	}
	if (c->file_count != 0 && (c->ring = calloc(c->file_count, sizeof(*c->ring))) == NULL) {
		cap_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	{
		char name[sizeof(c->cur)];
		uint32_t hdr_len;
		FILE *f;

		rc = cap_open_file(c, 0, name, sizeof(name), &f, &hdr_len);
		if (rc != 0) {
			cap_free(c);
			rte_errno = -rc;
			return NULL;
		}
		cap_swap(c, f, name, hdr_len);
	}
	c->refs = 1;
	return c;
}

/* Whether @p conf asks for what capture @p c does (the file shared as it is). */
static bool
cap_conf_same(const struct trd_capture *c, const struct trd_capture_conf *conf)
{
	const char *filter = conf->filter != NULL ? conf->filter : "";

	return c->snaplen == (conf->snaplen ? RTE_MIN(conf->snaplen, 65535u) : 65535u) &&
	       c->file_size == conf->file_size &&
	       c->file_count ==
		       (conf->file_size != 0 ? RTE_MIN(conf->file_count, CAP_MAX_FILES) : 0) &&
	       c->limit == (conf->limit != 0 ? conf->limit : TRD_CAPTURE_LIMIT_DEFAULT) &&
	       strcmp(c->filter, filter) == 0;
}

struct trd_capture *
trd_capture_open(const char *path, const struct trd_capture_conf *conf)
{
	static const struct trd_capture_conf defaults;
	struct trd_capture *c;

	if (strlen(path) >= sizeof(c->path)) {
		rte_errno = ENAMETOOLONG;
		return NULL;
	}
	if (conf == NULL)
		conf = &defaults;
	rte_spinlock_lock(&caps_lock);
	for (c = caps; c != NULL; c = c->next)
		if (strcmp(c->path, path) == 0) {
			if (!cap_conf_same(c, conf)) {
				/* the file is written as its first user asked: not as this one */
				rte_spinlock_unlock(&caps_lock);
				rte_errno = EBUSY;
				return NULL;
			}
			c->refs++;
			rte_spinlock_unlock(&caps_lock);
			return c;
		}
	c = cap_new(path, conf);
	if (c != NULL) {
		c->next = caps;
		caps = c;
	}
	rte_spinlock_unlock(&caps_lock);
	return c;
}

/* The next file is opened and its header written outside the lock, the old one closed after:
 * the serving lcore waits only for the swap. If the next file cannot be opened, the capture
 * goes on in the one it has. */
int
trd_capture_rotate(struct trd_capture *c)
{
	char name[sizeof(c->cur)];
	uint32_t hdr_len;
	unsigned int seq;
	FILE *f, *old;
	int rc;

	rte_spinlock_lock(&c->lock);
	if (c->rotating) {
		rte_spinlock_unlock(&c->lock);
		return -EBUSY;
	}
	c->rotating = true; /* the lcore does not rotate by size meanwhile: seq stays */
	seq = c->seq;
	rte_spinlock_unlock(&c->lock);
	rc = cap_open_file(c, seq, name, sizeof(name), &f, &hdr_len);
	rte_spinlock_lock(&c->lock);
	old = rc == 0 ? cap_swap(c, f, name, hdr_len) : NULL;
	c->rotating = false;
	c->retry_at = 0;
	rte_spinlock_unlock(&c->lock);
	if (old != NULL)
		fclose(old);
	return rc;
}

void
trd_capture_stats(struct trd_capture *c, struct trd_capture_stats *st)
{
	memset(st, 0, sizeof(*st));
	rte_spinlock_lock(&c->lock);
	RTE_BUILD_BUG_ON(sizeof(st->file) != sizeof(c->cur));
	memcpy(st->file, c->cur, sizeof(st->file));
	snprintf(st->filter, sizeof(st->filter), "%s", c->filter);
	st->frames = c->frames;
	st->bytes = c->bytes;
	st->filtered = c->filtered;
	st->dropped = c->dropped;
	st->limit = c->limit;
	st->file_size = c->file_size;
	st->file_count = c->file_count;
	st->files = c->seq;
	st->full = c->full;
	st->error = c->error;
	rte_spinlock_unlock(&c->lock);
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
		if (c->f != NULL && fflush(c->f) != 0 && c->error == 0)
			c->error = errno != 0 ? errno : EIO;
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
	cap_free(c);
}
