/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fi: the toroid libfabric provider through libfabric's API, two processes on one
 * toroid-node (pmd-test/../libfabric/test/test_fi.sh starts the engine and sets
 * FI_PROVIDER_PATH and TOROID_VNI_SOCKET).
 *
 *   test_fi        forks: process 1:0 (A, mostly sending) and 1:1 (B, mostly receiving)
 *
 * Checks: fi_getinfo's hint matching (what is advertised and what is refused), object set-up
 * and its errors, address exchange (fi_getname, fi_av_insert, fi_av_straddr, fi_av_lookup),
 * untagged and tagged messages of every size class (inline, pool, iovs) byte-exact with their
 * CQ entries (context, flags, len, tag, source), inject, directed receives, tag ignore masks,
 * remote CQ data, FI_PEEK (found twice, then received, then gone; FI_ENOMSG), FI_CLAIM and
 * FI_DISCARD (FI_PEEK | FI_CLAIM then FI_CLAIM by context, byte-exact with tag, source and
 * data; FI_CLAIM | FI_DISCARD; FI_PEEK | FI_DISCARD; unknown or used contexts), fi_cancel
 * (FI_ECANCELED, then -FI_ENOENT), error completions (truncation at the receiver, with the
 * first bytes, len and olen, the sender succeeding; a peer that is not attached), the FI_WAIT_FD
 * wait object (fi_cq_sread, fi_trywait + epoll), completion counters (every operation above
 * counted, with and without a CQ entry, injects, errors, fi_cntr_wait reaching, timing out and
 * returning early on an error, the wait fd, set/add, binding errors, -FI_EBUSY while bound),
 * and -FI_ENOSYS/-FI_EINVAL/-FI_EOPNOTSUPP for what
 * the provider does not do. Two endpoints in one process (the second, whose FI_TOROID_PROC the
 * first holds, gets the free process 1:2: its own name, messages both ways over the AV) and an
 * endpoint opened without FI_TOROID_PROC (a third process, test_fi noproc: it gets 1:3 and
 * sends to itself). Every wait is bounded.
 *
 * A binds its tx CQ with FI_SELECTIVE_COMPLETION and B its rx CQ (FI_COMPLETION is their
 * default op flag): fi_sendmsg/fi_recvmsg with flags 0 write no entry there.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define WAIT_MS      20000
#define FI_PAIR_PROG "test_fi"
#include "fi_pair.h"

#define NAME_LEN 16

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *txcq, *rxcq;
static struct fid_ep *ep;
static struct fid_cntr *txcntr, *rxcntr; /* FI_SEND | FI_WRITE | FI_READ, FI_RECV */
static fi_addr_t peer;

/* ---- completions ---- */

/* One completion from cq (success: 1 into e; error: -FI_EAVAIL with *err filled). */
static int
cq_wait(struct fid_cq *cq, struct fi_cq_tagged_entry *e, fi_addr_t *src,
	struct fi_cq_err_entry *err)
{
	uint64_t deadline = now_ms() + WAIT_MS;

	for (;;) {
		ssize_t n = fi_cq_readfrom(cq, e, 1, src);

		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			CHECK_RC(fi_cq_readerr(cq, err, 0), 1);
			return -FI_EAVAIL;
		}
		if (n != -FI_EAGAIN)
			fail("fi_cq_read: %zd (%s)", n, fi_strerror((int)-n));
		if (now_ms() > deadline)
			fail("no completion within %d ms", WAIT_MS);
	}
}

static struct fi_cq_err_entry last_err; /* the last expect_err's entry */
static uint64_t last_data;              /* remote CQ data of the last completion expect_ok took */

static void
expect_ok(struct fid_cq *cq, void *ctx, uint64_t flags, size_t len, uint64_t tag,
	  fi_addr_t want_src)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	fi_addr_t src = 0;

	if (cq_wait(cq, &e, &src, &err) != 1)
		fail("error completion: %s (prov %d: %s), context %p", fi_strerror(err.err),
		     err.prov_errno, fi_cq_strerror(cq, err.prov_errno, NULL, NULL, 0),
		     err.op_context);
	if (e.op_context != ctx)
		fail("completion context %p, expected %p", e.op_context, ctx);
	if (e.flags != flags)
		fail("completion flags %#" PRIx64 ", expected %#" PRIx64, e.flags, flags);
	if (e.len != len)
		fail("completion len %zu, expected %zu", e.len, len);
	if ((flags & FI_RECV) && (flags & FI_TAGGED) && e.tag != tag)
		fail("completion tag %#" PRIx64 ", expected %#" PRIx64, e.tag, tag);
	if ((flags & FI_RECV) && src != want_src)
		fail("completion source %#" PRIx64 ", expected %#" PRIx64, src, want_src);
	last_data = e.data;
}

static void
expect_err(struct fid_cq *cq, void *ctx, int err_code)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	if (cq_wait(cq, &e, NULL, &err) != -FI_EAVAIL)
		fail("success where error %d (%s) was expected", err_code, fi_strerror(err_code));
	if (err.err != err_code)
		fail("error %d (%s), expected %d (%s)", err.err, fi_strerror(err.err), err_code,
		     fi_strerror(err_code));
	if (err.op_context != ctx)
		fail("error context %p, expected %p", err.op_context, ctx);
	last_err = err;
}

static void
expect_nothing(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e;

	CHECK_RC(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
}

/* Post repeatedly while the provider says "retry". */
#define POST(call) FI_POST(txcq, call)

static void
fill(uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

static void
check(const uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != (uint8_t)(i * 131 + seed * 7 + (i >> 8)))
			fail("byte %zu of a %zu-byte message (seed %u): %#x", i, n, seed, b[i]);
}

/* ---- fi_getinfo ---- */

static struct fi_info *
base_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (h == NULL)
		fail("fi_allocinfo");
	h->fabric_attr->prov_name = strdup("toroid");
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV | FI_REMOTE_CQ_DATA;
	h->domain_attr->av_type = FI_AV_TABLE;
	return h;
}

static void
getinfo_refused(const char *what, void (*tweak)(struct fi_info *))
{
	struct fi_info *h = base_hints(), *out = NULL;
	int rc;

	tweak(h);
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &out);
	if (rc != -FI_ENODATA)
		fail("fi_getinfo with %s: %d (%s), expected -FI_ENODATA", what, rc,
		     fi_strerror(-rc));
	fi_freeinfo(h);
}

static void
t_rma(struct fi_info *h)
{
	h->caps |= FI_RMA;
	h->ep_attr->max_order_waw_size = 64;
}
static void
t_atomic(struct fi_info *h)
{
	h->caps |= FI_ATOMIC | FI_RMA_EVENT;
}
static void
t_dgram(struct fi_info *h)
{
	h->ep_attr->type = FI_EP_DGRAM;
}
static void
t_msgep(struct fi_info *h)
{
	h->ep_attr->type = FI_EP_MSG;
}
static void
t_raw(struct fi_info *h)
{
	h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
}
static void
t_cqdata(struct fi_info *h)
{
	h->domain_attr->cq_data_size = 16;
}
static void
t_auto(struct fi_info *h)
{
	h->domain_attr->data_progress = FI_PROGRESS_AUTO;
}
static void
t_multi(struct fi_info *h)
{
	h->caps |= FI_MULTI_RECV;
}
static void
t_fmt(struct fi_info *h)
{
	h->addr_format = FI_SOCKADDR_IN;
}
static void
t_big(struct fi_info *h)
{
	h->ep_attr->max_msg_size = (size_t)1 << 40;
}
static void
t_cntrs(struct fi_info *h)
{
	h->domain_attr->cntr_cnt = 65;
}
static void
t_rma_event(struct fi_info *h)
{
	h->caps |= FI_RMA_EVENT;
}

static void
test_getinfo(void)
{
	struct fi_info *h = base_hints();

	CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0);
	fi_freeinfo(h);
	if (strcmp(info->fabric_attr->prov_name, "toroid") != 0 ||
	    info->ep_attr->type != FI_EP_RDM || info->next != NULL)
		fail("fi_getinfo: unexpected answer %s", info->fabric_attr->prov_name);
	if (!(info->caps & FI_TAGGED) || !(info->caps & FI_MSG) ||
	    !(info->caps & FI_REMOTE_CQ_DATA) || (info->caps & (FI_RMA | FI_ATOMIC)))
		fail("fi_getinfo: caps %s", fi_tostr(&info->caps, FI_TYPE_CAPS));
	if (info->domain_attr->cq_data_size != 8 || info->tx_attr->msg_order != FI_ORDER_SAS ||
	    info->rx_attr->msg_order != FI_ORDER_SAS || info->tx_attr->inject_size != 4096 ||
	    info->ep_attr->mem_tag_format >> 63 || info->domain_attr->cntr_cnt != 64)
		fail("fi_getinfo: attributes not as documented");
	getinfo_refused("FI_RMA with RMA ordering", t_rma);
	getinfo_refused("FI_ATOMIC with remote CQ data on RMA events", t_atomic);
	getinfo_refused("FI_EP_DGRAM", t_dgram);
	getinfo_refused("FI_EP_MSG", t_msgep);
	getinfo_refused("FI_ORDER_RAW", t_raw);
	getinfo_refused("cq_data_size 16", t_cqdata);
	getinfo_refused("FI_PROGRESS_AUTO", t_auto);
	getinfo_refused("FI_MULTI_RECV", t_multi);
	getinfo_refused("FI_SOCKADDR_IN", t_fmt);
	getinfo_refused("max_msg_size 1 TiB", t_big);
	getinfo_refused("cntr_cnt 65", t_cntrs);
	getinfo_refused("FI_RMA_EVENT (remote counters)", t_rma_event);
	{
		struct fi_info *h64 = base_hints(), *out = NULL;

		h64->domain_attr->cntr_cnt = 64;
		CHECK_RC(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h64, &out), 0);
		fi_freeinfo(out);
		fi_freeinfo(h64);
	}
}

/* ---- set-up ---- */

static void
setup(int is_a)
{
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
	struct fi_cntr_attr cta = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC};
	uint64_t opf;
	int rx_wait_fd = !is_a;
	struct fi_av_attr ava = {.type = FI_AV_TABLE};
	struct fi_eq_attr eqa = {.wait_obj = FI_WAIT_UNSPEC};
	struct fid_eq *eq;
	uint32_t ev = 0;
	char buf[8];

	CHECK_RC(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	CHECK_RC(fi_eq_open(fabric, &eqa, &eq, NULL), 0);
	CHECK_RC(fi_eq_read(eq, &ev, buf, sizeof(buf), 0), -FI_EAGAIN);
	CHECK_RC(fi_eq_write(eq, 7, "hello", 6, 0), 6);
	CHECK_RC(fi_eq_sread(eq, &ev, buf, sizeof(buf), 1000, 0), 6);
	if (ev != 7 || strcmp(buf, "hello") != 0)
		fail("fi_eq_sread: event %u %s", ev, buf);
	CHECK_RC(fi_close(&eq->fid), 0);
	CHECK_RC(fi_domain(fabric, info, &domain, NULL), 0);
	CHECK_RC(fi_close(&fabric->fid), -FI_EBUSY); /* the domain is open */
	CHECK_RC(fi_av_open(domain, &ava, &av, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &txcq, NULL), 0);
	cqa.wait_obj = rx_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
	CHECK_RC(fi_cq_open(domain, &cqa, &rxcq, NULL), 0);
	cqa.wait_obj = FI_WAIT_SET;
	CHECK_RC(fi_cq_open(domain, &cqa, &txcq, NULL), -FI_ENOSYS);
	cqa.wait_obj = FI_WAIT_NONE;
	cqa.format = (enum fi_cq_format)99;
	CHECK_RC(fi_cq_open(domain, &cqa, &txcq, NULL), -FI_EINVAL);
	CHECK_RC(fi_endpoint(domain, info, &ep, NULL), 0);
	/* (a second endpoint of this process gets another, free, process: two_endpoints()) */
	CHECK_RC(fi_enable(ep), -FI_ENOAV);
	CHECK_RC(fi_send(ep, "x", 1, NULL, 0, NULL), -FI_EOPBADSTATE);
	CHECK_RC(fi_ep_bind(ep, NULL, 0), -FI_EINVAL);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep, &av->fid, 0), -FI_EINVAL);
	CHECK_RC(fi_enable(ep), -FI_ENOCQ);
	CHECK_RC(fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT | FI_REMOTE_READ), -FI_EBADFLAGS);
	/* A: tx entries only on request; B: rx entries only on request (FI_COMPLETION is the
	 * default op flag, fi_sendmsg/fi_recvmsg with flags 0 go without) */
	CHECK_RC(fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT | (is_a ? FI_SELECTIVE_COMPLETION : 0)), 0);
	CHECK_RC(fi_ep_bind(ep, &rxcq->fid, FI_RECV | (is_a ? 0 : FI_SELECTIVE_COMPLETION)), 0);
	opf = (is_a ? FI_TRANSMIT : FI_RECV) | FI_COMPLETION;
	CHECK_RC(fi_control(&ep->fid, FI_SETOPSFLAG, &opf), 0);
	/* counters: sends (and RMA, none yet) on one, receives on the other */
	CHECK_RC(fi_cntr_open(domain, &cta, &txcntr, NULL), 0);
	cta.wait_obj = FI_WAIT_FD;
	CHECK_RC(fi_cntr_open(domain, &cta, &rxcntr, NULL), 0);
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, FI_REMOTE_WRITE), -FI_EOPNOTSUPP);
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, FI_RECV | FI_REMOTE_READ), -FI_EOPNOTSUPP);
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, 0), -FI_EBADFLAGS);
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, FI_RECV | FI_SELECTIVE_COMPLETION), -FI_EBADFLAGS);
	CHECK_RC(fi_ep_bind(ep, &txcntr->fid, FI_SEND | FI_WRITE | FI_READ), 0);
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, FI_SEND), -FI_EINVAL); /* one counter per kind */
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, FI_RECV), 0);
	CHECK_RC(fi_enable(ep), 0);
	CHECK_RC(fi_ep_bind(ep, &rxcq->fid, FI_RECV), -FI_EOPBADSTATE);
	CHECK_RC(fi_ep_bind(ep, &rxcntr->fid, FI_RECV), -FI_EOPBADSTATE);
	CHECK_RC(fi_close(&txcntr->fid), -FI_EBUSY); /* bound */
	CHECK_RC(fi_close(&domain->fid), -FI_EBUSY);
}

static void
exchange_names(void)
{
	uint8_t mine[64], theirs[NAME_LEN], bad[NAME_LEN];
	size_t len = 4;
	fi_addr_t a[2];
	char s[64];
	int errs[2];

	CHECK_RC(fi_getname(&ep->fid, mine, &len), -FI_ETOOSMALL);
	if (len != NAME_LEN)
		fail("fi_getname: length %zu", len);
	len = sizeof(mine);
	CHECK_RC(fi_getname(&ep->fid, mine, &len), 0);
	put(mine, NAME_LEN);
	get(theirs, NAME_LEN);
	memset(bad, 0x5a, sizeof(bad));
	/* one good address, one garbage: 1 inserted, the other FI_ADDR_NOTAVAIL with FI_EINVAL */
	{
		uint8_t two[2 * NAME_LEN];

		memcpy(two, theirs, NAME_LEN);
		memcpy(two + NAME_LEN, bad, NAME_LEN);
		CHECK_RC(fi_av_insert(av, two, 2, a, FI_SYNC_ERR, errs), 1);
	}
	if (a[0] != 0 || a[1] != FI_ADDR_NOTAVAIL || errs[0] != 0 || errs[1] != FI_EINVAL)
		fail("fi_av_insert: %#" PRIx64 " %#" PRIx64 " errs %d %d", a[0], a[1], errs[0],
		     errs[1]);
	peer = a[0];
	len = sizeof(s);
	fi_av_straddr(av, theirs, s, &len);
	if (strcmp(s, who[0] == 'A' ? "fi_toroid://0.0.0/1:1" : "fi_toroid://0.0.0/1:0") != 0)
		fail("fi_av_straddr: %s", s);
	len = sizeof(mine);
	CHECK_RC(fi_av_lookup(av, peer, mine, &len), 0);
	if (len != NAME_LEN || memcmp(mine, theirs, NAME_LEN) != 0)
		fail("fi_av_lookup");
	CHECK_RC(fi_av_lookup(av, 77, mine, &len), -FI_EINVAL);
	CHECK_RC(fi_av_insertsvc(av, "x", "y", a, 0, NULL), -FI_ENOSYS);
}

/* ---- the exchanges ---- */

static const size_t sizes[] = {0, 1, 64, 896, 897, 4096, 100000, 1 << 20, 3 << 20};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))
#define BIG     (3 << 20)

static uint8_t buf[BIG], buf2[BIG], anytag[4096];

/* Two completions, in either order (the VNI does not order messages). */
static void
expect_two(struct fid_cq *cq, void *c1, size_t l1, void *c2, size_t l2, uint64_t flags)
{
	struct fi_cq_tagged_entry e[2];
	struct fi_cq_err_entry err;

	for (int i = 0; i < 2; i++)
		if (cq_wait(cq, &e[i], NULL, &err) != 1)
			fail("error completion %s", fi_strerror(err.err));
	if (e[0].op_context == c2) {
		struct fi_cq_tagged_entry t = e[0];

		e[0] = e[1];
		e[1] = t;
	}
	if (e[0].op_context != c1 || e[1].op_context != c2 || e[0].len != l1 || e[1].len != l2 ||
	    e[0].flags != flags || e[1].flags != flags)
		fail("two completions: %p/%zu %p/%zu", e[0].op_context, e[0].len, e[1].op_context,
		     e[1].len);
}

static void
bad_arguments(void)
{
	struct fi_msg_tagged tm;
	struct fi_msg m;
	struct iovec iov[5];
	struct fid_cntr *cntr;
	struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP};
	struct fid_mr *mr;
	struct fi_cq_err_entry err;
	uint64_t v = 0;
	int ctx;

	for (int i = 0; i < 5; i++)
		iov[i] = (struct iovec){buf, 1};
	CHECK_RC(fi_send(ep, buf, 8, NULL, 12345, NULL), -FI_EINVAL); /* not in the AV */
	CHECK_RC(fi_send(ep, NULL, 5, NULL, peer, NULL), -FI_EINVAL);
	CHECK_RC(fi_sendv(ep, iov, NULL, 5, peer, NULL), -FI_EINVAL); /* iov_limit 4 */
	/* one buffer: up to max_msg_size (1 GiB); several iovs go through the pool and take
	 * at most a quarter of it (16 MiB of the default 64) */
	CHECK_RC(fi_send(ep, buf, ((size_t)1 << 30) + 1, NULL, peer, NULL), -FI_EMSGSIZE);
	iov[0] = (struct iovec){buf, (size_t)9 << 20};
	iov[1] = (struct iovec){buf, (size_t)9 << 20};
	CHECK_RC(fi_sendv(ep, iov, NULL, 2, peer, NULL), -FI_EMSGSIZE);
	iov[0] = iov[1] = (struct iovec){buf, 1};
	CHECK_RC(fi_inject(ep, buf, 4097, peer), -FI_EMSGSIZE);
	CHECK_RC(fi_tsend(ep, buf, 8, NULL, peer, 1ULL << 63, NULL), -FI_EINVAL);
	CHECK_RC(fi_trecv(ep, buf, 8, NULL, peer, 1ULL << 63, 0, NULL), -FI_EINVAL);
	CHECK_RC(fi_tsenddata(ep, buf, 8, NULL, 1, peer, 1ULL << 63, NULL), -FI_EINVAL);
	CHECK_RC(fi_injectdata(ep, buf, 4097, 1, peer), -FI_EMSGSIZE);
	CHECK_RC(fi_write(ep, buf, 8, NULL, peer, 0, 0, NULL), -FI_ENOSYS);
	CHECK_RC(fi_read(ep, buf, 8, NULL, peer, 0, 0, NULL), -FI_ENOSYS);
	CHECK_RC(fi_atomic(ep, buf, 1, NULL, peer, 0, 0, FI_UINT64, FI_SUM, NULL), -FI_ENOSYS);
	CHECK_RC(fi_cancel(&ep->fid, &ctx), -FI_ENOENT); /* nothing posted with it */
	/* a counter without a wait object: set/add, no wait */
	ca.wait_obj = FI_WAIT_SET;
	CHECK_RC(fi_cntr_open(domain, &ca, &cntr, NULL), -FI_ENOSYS);
	ca.wait_obj = FI_WAIT_NONE;
	ca.flags = 1;
	CHECK_RC(fi_cntr_open(domain, &ca, &cntr, NULL), -FI_EINVAL);
	ca.flags = 0;
	CHECK_RC(fi_cntr_open(domain, &ca, &cntr, NULL), 0);
	CHECK_RC(fi_cntr_read(cntr), 0);
	CHECK_RC(fi_cntr_add(cntr, 5), 0);
	CHECK_RC(fi_cntr_add(cntr, 2), 0);
	CHECK_RC(fi_cntr_read(cntr), 7);
	CHECK_RC(fi_cntr_set(cntr, 3), 0);
	CHECK_RC(fi_cntr_read(cntr), 3);
	CHECK_RC(fi_cntr_adderr(cntr, 4), 0);
	CHECK_RC(fi_cntr_readerr(cntr), 4);
	CHECK_RC(fi_cntr_seterr(cntr, 1), 0);
	CHECK_RC(fi_cntr_readerr(cntr), 1);
	CHECK_RC(fi_cntr_read(cntr), 3);
	CHECK_RC(fi_cntr_wait(cntr, 1, 10), -FI_EINVAL); /* FI_WAIT_NONE */
	CHECK_RC(fi_control(&cntr->fid, FI_GETWAIT, &ctx), -FI_ENODATA);
	{
		struct fid *f = &cntr->fid;

		CHECK_RC(fi_trywait(fabric, &f, 1), -FI_EINVAL);
	}
	CHECK_RC(fi_close(&cntr->fid), 0);
	CHECK_RC(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, sizeof(v)),
		 -FI_ENOPROTOOPT);
	CHECK_RC(fi_connect(ep, buf, NULL, 0), -FI_ENOSYS);
	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.iov_count = 1;
	m.addr = peer;
	CHECK_RC(fi_sendmsg(ep, &m, FI_MATCH_COMPLETE), -FI_EOPNOTSUPP);
	CHECK_RC(fi_recvmsg(ep, &m, FI_MULTI_RECV), -FI_EOPNOTSUPP);
	CHECK_RC(fi_recvmsg(ep, &m, FI_PEEK), -FI_EOPNOTSUPP); /* tagged only */
	memset(&tm, 0, sizeof(tm));
	tm.msg_iov = iov;
	tm.iov_count = 1;
	tm.addr = peer;
	CHECK_RC(fi_recvmsg(ep, &m, FI_PEEK | FI_CLAIM), -FI_EOPNOTSUPP); /* tagged only */
	tm.context = &ctx;
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_DISCARD), -FI_EINVAL); /* with FI_PEEK or FI_CLAIM */
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_PEEK | FI_CLAIM | FI_DISCARD), -FI_EINVAL);
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_CLAIM), -FI_EINVAL); /* nothing claimed with it */
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_CLAIM | FI_DISCARD), -FI_EINVAL);
	tm.context = NULL;
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_PEEK | FI_CLAIM), -FI_EINVAL); /* a claim needs one */
	CHECK_RC(fi_mr_reg(domain, buf, 64, FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL), -FI_EOPNOTSUPP);
	CHECK_RC(fi_cq_readerr(txcq, &err, 0), -FI_EAGAIN);
	CHECK_RC(fi_cq_sread(txcq, &err, 1, NULL, 10), -FI_EINVAL); /* FI_WAIT_NONE */
	expect_nothing(txcq);
}

/* ---- counters (steps 9 to 11) ---- */

/* n success entries with the contexts ctx[0..n-1], in any order, then nothing. */
static void
expect_set(struct fid_cq *cq, int *ctx, int n, uint64_t flags, size_t len, fi_addr_t src)
{
	unsigned int seen = 0;

	for (int i = 0; i < n; i++) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		fi_addr_t from = 0;
		int k;

		if (cq_wait(cq, &e, &from, &err) != 1)
			fail("error completion %s", fi_strerror(err.err));
		k = (int)((int *)e.op_context - ctx);
		if (k < 0 || k >= n || (seen & (1u << k)) || e.flags != flags || e.len != len ||
		    ((flags & FI_RECV) && from != src))
			fail("completion %d of %d: context %p flags %#" PRIx64 " len %zu", i, n,
			     e.op_context, e.flags, e.len);
		seen |= 1u << k;
	}
	expect_nothing(cq);
}

static void
expect_count(struct fid_cntr *c, uint64_t value, uint64_t err, const char *what)
{
	uint64_t v = fi_cntr_read(c), e = fi_cntr_readerr(c);

	if (v != value || e != err)
		fail("%s: counter %" PRIu64 " errors %" PRIu64 ", expected %" PRIu64
		     " and %" PRIu64,
		     what, v, e, value, err);
}

static void
counters_a(fi_addr_t ghost)
{
	struct fi_msg m;
	struct iovec iov;
	uint64_t t0, v;
	int ctx[8];

	/* everything A did so far was counted: 19 sends (9 sizes, sendv, inject, 2 tsend,
	 * tinjectdata, 2 truncated at the receiver, senddata, send, the one to the second
	 * endpoint), 1 failed (FI_ECONNREFUSED); 4 receives (2, the FI_CLAIM one, the one from
	 * the second endpoint: FI_PEEK probes and discards receive nothing and are not counted) */
	CHECK_RC(fi_cntr_wait(txcntr, 19, WAIT_MS), 0);
	expect_count(txcntr, 19, 1, "A's sends so far");
	CHECK_RC(fi_cntr_wait(rxcntr, 4, WAIT_MS), 0);
	expect_count(rxcntr, 4, 0, "A's receives so far");
	CHECK_RC(fi_cntr_set(txcntr, 0), 0);
	CHECK_RC(fi_cntr_seterr(txcntr, 0), 0);
	sync_step(9); /* B posted 11 receives */
	/* 8 sends: 4 with a CQ entry, 4 without (fi_sendmsg, flags 0), then 3 injects */
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.iov_count = 1;
	m.addr = peer;
	for (int i = 0; i < 8; i++) {
		fill(buf + i * 64, 64, 20 + (unsigned int)i);
		if (i < 4) {
			POST(fi_send(ep, buf + i * 64, 64, NULL, peer, &ctx[i]));
			continue;
		}
		iov = (struct iovec){buf + i * 64, 64};
		m.context = &ctx[i];
		POST(fi_sendmsg(ep, &m, 0));
	}
	CHECK_RC(fi_cntr_wait(txcntr, 8, WAIT_MS), 0);
	expect_count(txcntr, 8, 0, "8 sends");
	expect_set(txcq, ctx, 4, FI_SEND | FI_MSG, 64, 0);
	for (int i = 8; i < 11; i++) {
		fill(buf + i * 64, 64, 20 + (unsigned int)i);
		POST(fi_inject(ep, buf + i * 64, 64, peer));
	}
	CHECK_RC(fi_cntr_wait(txcntr, 11, WAIT_MS), 0);
	expect_count(txcntr, 11, 0, "8 sends and 3 injects");
	expect_nothing(txcq);
	sync_step(10); /* B sleeps on its counter's wait fd */
	fill(buf, 64, 40);
	POST(fi_send(ep, buf, 64, NULL, peer, &ctx[0]));
	expect_ok(txcq, &ctx[0], FI_SEND | FI_MSG, 64, 0, 0);
	sync_step(11);
	/* errors: fi_cntr_wait returns early with -FI_EAVAIL; a suppressed send's failure still
	 * writes an error entry, an inject's failure only counts */
	v = fi_cntr_read(txcntr);
	if (v != 12)
		fail("counter %" PRIu64 " after 12 sends", v);
	iov = (struct iovec){buf, 10};
	m.addr = ghost;
	m.context = &ctx[1];
	POST(fi_sendmsg(ep, &m, 0));
	t0 = now_ms();
	CHECK_RC(fi_cntr_wait(txcntr, v + 100, WAIT_MS), -FI_EAVAIL);
	expect_count(txcntr, v, 1, "a send to a process that never attaches");
	expect_err(txcq, &ctx[1], FI_ECONNREFUSED);
	POST(fi_inject(ep, buf, 10, ghost));
	CHECK_RC(fi_cntr_wait(txcntr, v + 100, WAIT_MS), -FI_EAVAIL);
	expect_count(txcntr, v, 2, "an inject to a process that never attaches");
	expect_nothing(txcq);
	if (now_ms() - t0 >= WAIT_MS)
		fail("fi_cntr_wait did not return early on errors");
}

static void
counters_b(void)
{
	struct epoll_event ev;
	struct fi_msg m;
	struct iovec iov;
	struct fid *f = &rxcntr->fid;
	uint64_t t0;
	int ctx[11], fd, efd;

	/* 16 receives so far, 3 failed (2 FI_ETRUNC, FI_ECANCELED); 5 sends (3 of them for A's
	 * claims and discards) */
	CHECK_RC(fi_cntr_wait(rxcntr, 16, WAIT_MS), 0);
	expect_count(rxcntr, 16, 3, "B's receives so far");
	CHECK_RC(fi_cntr_wait(txcntr, 5, WAIT_MS), 0);
	expect_count(txcntr, 5, 0, "B's sends so far");
	CHECK_RC(fi_cntr_set(rxcntr, 0), 0);
	CHECK_RC(fi_cntr_seterr(rxcntr, 0), 0);
	/* 11 receives: 4 with a CQ entry, 7 without (fi_recvmsg, flags 0) */
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.iov_count = 1;
	m.addr = FI_ADDR_UNSPEC;
	memset(buf, 0, 11 * 64);
	for (int i = 0; i < 11; i++) {
		if (i < 4) {
			POST(fi_recv(ep, buf + i * 64, 64, NULL, FI_ADDR_UNSPEC, &ctx[i]));
			continue;
		}
		iov = (struct iovec){buf + i * 64, 64};
		m.context = &ctx[i];
		POST(fi_recvmsg(ep, &m, 0));
	}
	sync_step(9);
	CHECK_RC(fi_cntr_wait(rxcntr, 11, WAIT_MS), 0);
	expect_count(rxcntr, 11, 0, "11 receives");
	for (int i = 0; i < 11; i++) /* in send order (FI_ORDER_SAS) */
		check(buf + i * 64, 64, 20 + (unsigned int)i);
	expect_set(rxcq, ctx, 4, FI_RECV | FI_MSG, 64, peer);
	/* a bounded wait for what does not come */
	t0 = now_ms();
	CHECK_RC(fi_cntr_wait(rxcntr, 12, 200), -FI_ETIMEDOUT);
	if (now_ms() - t0 < 150)
		fail("fi_cntr_wait returned after %" PRIu64 " ms of a 200 ms wait", now_ms() - t0);
	/* the wait fd: fi_trywait, then epoll wakes when a receive completes */
	POST(fi_recv(ep, buf, 64, NULL, FI_ADDR_UNSPEC, &ctx[0]));
	CHECK_RC(fi_control(&rxcntr->fid, FI_GETWAIT, &fd), 0);
	efd = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	CHECK_RC(epoll_ctl(efd, EPOLL_CTL_ADD, fd, &ev), 0);
	expect_count(rxcntr, 11, 0, "before the wait");
	CHECK_RC(fi_trywait(fabric, &f, 1), 0);
	CHECK_RC(epoll_wait(efd, &ev, 1, 0), 0); /* nothing yet */
	sync_step(10);
	if (epoll_wait(efd, &ev, 1, WAIT_MS) != 1)
		fail("the counter's wait fd did not wake for a receive");
	CHECK_RC(fi_cntr_wait(rxcntr, 12, WAIT_MS), 0);
	expect_count(rxcntr, 12, 0, "after the wait");
	check(buf, 64, 40);
	expect_ok(rxcq, &ctx[0], FI_RECV | FI_MSG, 64, 0, peer);
	/* a change the application has not read: fi_trywait says so; the fd wakes for a change
	 * made while armed */
	CHECK_RC(fi_cntr_add(rxcntr, 5), 0);
	CHECK_RC(fi_trywait(fabric, &f, 1), -FI_EAGAIN);
	CHECK_RC(fi_cntr_read(rxcntr), 17);
	CHECK_RC(fi_trywait(fabric, &f, 1), 0);
	CHECK_RC(epoll_wait(efd, &ev, 1, 0), 0);
	CHECK_RC(fi_cntr_adderr(rxcntr, 1), 0);
	CHECK_RC(epoll_wait(efd, &ev, 1, WAIT_MS), 1);
	CHECK_RC(fi_cntr_readerr(rxcntr), 1);
	close(efd);
	sync_step(11);
}

static void two_endpoints(const char *self_path);

/* A, step 7: FI_PEEK, FI_CLAIM and FI_DISCARD on the tagged messages B staged in our engine
 * (tags 0x4242, 0x4343, 0x4444, 0x4545). */
static void
a_peek_claim(void)
{
	struct fi_msg_tagged tm;
	struct iovec iov[2];
	int ctx[8];

	sync_step(7); /* B's tag 0x4242 (300 B, data 42) waits in our engine: peek, then take it */
	memset(&tm, 0, sizeof(tm));
	tm.addr = FI_ADDR_UNSPEC;
	tm.tag = 0x4240;
	tm.ignore = 0xf;
	tm.context = &ctx[0];
	for (int i = 0; i < 2; i++) { /* a peek takes nothing: twice the same answer */
		POST(fi_trecvmsg(ep, &tm, FI_PEEK));
		expect_ok(rxcq, &ctx[0], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 300, 0x4242,
			  peer);
		if (last_data != 42)
			fail("FI_PEEK: remote CQ data %" PRIu64 ", expected 42", last_data);
	}
	tm.tag = 0x5000;
	tm.context = &ctx[1];
	POST(fi_trecvmsg(ep, &tm, FI_PEEK));
	expect_err(rxcq, &ctx[1], FI_ENOMSG);
	POST(fi_trecv(ep, buf2, 300, NULL, peer, 0x4242, 0, &ctx[2]));
	expect_ok(rxcq, &ctx[2], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 300, 0x4242, peer);
	check(buf2, 300, 42);
	tm.tag = 0x4242;
	tm.ignore = 0;
	tm.context = &ctx[3];
	POST(fi_trecvmsg(ep, &tm, FI_PEEK)); /* received: gone */
	expect_err(rxcq, &ctx[3], FI_ENOMSG);
	/* FI_PEEK | FI_CLAIM, then FI_CLAIM with the same context (MPI_Mprobe, MPI_Mrecv): B's
	 * tag 0x4343, 2000 B with data 43 */
	memset(&tm, 0, sizeof(tm));
	tm.addr = FI_ADDR_UNSPEC;
	tm.tag = 0x4300;
	tm.ignore = 0xff;
	tm.context = &ctx[4];
	POST(fi_trecvmsg(ep, &tm, FI_PEEK | FI_CLAIM));
	expect_ok(rxcq, &ctx[4], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 2000, 0x4343, peer);
	if (last_data != 43)
		fail("FI_PEEK | FI_CLAIM: remote CQ data %" PRIu64 ", expected 43", last_data);
	tm.context = &ctx[5]; /* claimed: neither a probe nor a second claim finds it */
	POST(fi_trecvmsg(ep, &tm, FI_PEEK));
	expect_err(rxcq, &ctx[5], FI_ENOMSG);
	POST(fi_trecvmsg(ep, &tm, FI_PEEK | FI_CLAIM));
	expect_err(rxcq, &ctx[5], FI_ENOMSG);
	memset(buf2, 0, 2000);
	iov[0] = (struct iovec){buf2, 1000};
	iov[1] = (struct iovec){buf2 + 1000, 1000};
	tm.msg_iov = iov;
	tm.iov_count = 2;
	tm.tag = 0; /* a claimed message is named by the context alone */
	tm.ignore = 0;
	tm.context = &ctx[4];
	POST(fi_trecvmsg(ep, &tm, FI_CLAIM));
	expect_ok(rxcq, &ctx[4], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 2000, 0x4343, peer);
	check(buf2, 2000, 43);
	if (last_data != 43)
		fail("FI_CLAIM: remote CQ data %" PRIu64 ", expected 43", last_data);
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_CLAIM), -FI_EINVAL); /* used */
	/* FI_PEEK | FI_CLAIM, then FI_CLAIM | FI_DISCARD: B's tag 0x4444 (100 B) */
	tm.msg_iov = NULL;
	tm.iov_count = 0;
	tm.tag = 0x4444;
	tm.context = &ctx[6];
	POST(fi_trecvmsg(ep, &tm, FI_PEEK | FI_CLAIM));
	expect_ok(rxcq, &ctx[6], FI_RECV | FI_TAGGED, 100, 0x4444, peer);
	POST(fi_trecvmsg(ep, &tm, FI_CLAIM | FI_DISCARD));
	expect_ok(rxcq, &ctx[6], FI_RECV | FI_TAGGED, 100, 0x4444, peer);
	CHECK_RC(fi_trecvmsg(ep, &tm, FI_CLAIM), -FI_EINVAL); /* dropped */
	/* FI_PEEK | FI_DISCARD: B's tag 0x4545 (100 B) found and dropped, then gone */
	tm.tag = 0x4545;
	tm.context = &ctx[7];
	POST(fi_trecvmsg(ep, &tm, FI_PEEK | FI_DISCARD));
	expect_ok(rxcq, &ctx[7], FI_RECV | FI_TAGGED, 100, 0x4545, peer);
	tm.tag = 0x4000;
	tm.ignore = 0xfff;
	POST(fi_trecvmsg(ep, &tm, FI_PEEK));
	expect_err(rxcq, &ctx[7], FI_ENOMSG);
	/* nothing waits now, and the engine says so in the segment: the provider answers these
	 * itself, without the engine's round trip (test_fi.sh: the engine answered fewer than
	 * 500 probes in all) */
	for (int i = 0; i < 2000; i++) {
		POST(fi_trecvmsg(ep, &tm, FI_PEEK));
		expect_err(rxcq, &ctx[7], FI_ENOMSG);
	}
	expect_nothing(rxcq);
}

static void
run_a(const char *self_path)
{
	uint8_t small[100], name[64];
	struct iovec iov[3];
	struct fi_msg_tagged tm;
	struct fid_mr *mr;
	size_t len = sizeof(name);
	fi_addr_t ghost;
	int ctx[8];

	CHECK_RC(fi_mr_reg(domain, buf, sizeof(buf), FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL), 0);
	/* untagged, every size class: inline, pool, 3 MiB; one at a time */
	for (size_t i = 0; i < N_SIZES; i++) {
		fill(buf, sizes[i], (unsigned int)i);
		POST(fi_send(ep, buf, sizes[i], fi_mr_desc(mr), peer, &ctx[0]));
		expect_ok(txcq, &ctx[0], FI_SEND | FI_MSG, sizes[i], 0, 0);
	}
	/* a gathered send: 3 iovs, 2000 B */
	fill(buf, 2000, 99);
	iov[0] = (struct iovec){buf, 10};
	iov[1] = (struct iovec){buf + 10, 990};
	iov[2] = (struct iovec){buf + 1000, 1000};
	POST(fi_sendv(ep, iov, NULL, 3, peer, &ctx[1]));
	expect_ok(txcq, &ctx[1], FI_SEND | FI_MSG, 2000, 0, 0);
	/* inject: the buffer is free at once, and no completion */
	fill(small, 64, 5);
	POST(fi_inject(ep, small, 64, peer));
	memset(small, 0, sizeof(small));
	sync_step(1); /* B posted tag 5, then tag 7 */
	fill(buf, 5000, 7);
	POST(fi_tsend(ep, buf, 5000, NULL, peer, 7, &ctx[2]));
	fill(buf2, 300, 5);
	POST(fi_tsend(ep, buf2, 300, NULL, peer, 5, &ctx[3]));
	expect_two(txcq, &ctx[2], 5000, &ctx[3], 300, FI_SEND | FI_TAGGED);
	fill(small, 64, 9);
	POST(fi_tinjectdata(ep, small, 64, 0xfeedc0de12345678ULL, peer, 9)); /* remote CQ data */
	expect_nothing(txcq);
	sync_step(2); /* B posted a 10-byte receive */
	/* truncated at the receiver only: the senders succeed */
	fill(buf, 100, 1);
	POST(fi_send(ep, buf, 100, NULL, peer, &ctx[4]));
	expect_ok(txcq, &ctx[4], FI_SEND | FI_MSG, 100, 0, 0);
	fill(buf, 5000, 2);
	POST(fi_send(ep, buf, 5000, NULL, peer, &ctx[4]));
	expect_ok(txcq, &ctx[4], FI_SEND | FI_MSG, 5000, 0, 0);
	sync_step(3);
	/* a process the topology places but that never attaches: refused after --noproc-ms */
	CHECK_RC(fi_getname(&ep->fid, name, &len), 0);
	name[8] = 3; /* proc 3 (little-endian u32 at offset 8) */
	CHECK_RC(fi_av_insert(av, name, 1, &ghost, 0, NULL), 1);
	POST(fi_send(ep, buf, 10, NULL, ghost, &ctx[5]));
	expect_err(txcq, &ctx[5], FI_ECONNREFUSED);
	bad_arguments();
	sync_step(4); /* B armed its wait fd */
	fill(buf, 777, 4);
	POST(fi_senddata(ep, buf, 777, NULL, 777, peer, &ctx[6]));
	expect_ok(txcq, &ctx[6], FI_SEND | FI_MSG, 777, 0, 0);
	sync_step(5); /* B is in fi_cq_sread */
	fill(buf, 1234, 6);
	POST(fi_send(ep, buf, 1234, NULL, peer, &ctx[6]));
	expect_ok(txcq, &ctx[6], FI_SEND | FI_MSG, 1234, 0, 0);
	/* B answers, tagged, through fi_tsendmsg; received here with fi_trecvmsg */
	iov[0] = (struct iovec){buf2, 3000};
	memset(&tm, 0, sizeof(tm));
	tm.msg_iov = iov;
	tm.iov_count = 1;
	tm.addr = FI_ADDR_UNSPEC;
	tm.tag = 0x1234;
	tm.context = &ctx[7];
	POST(fi_trecvmsg(ep, &tm, 0));
	expect_ok(rxcq, &ctx[7], FI_RECV | FI_TAGGED, 2500, 0x1234, peer);
	check(buf2, 2500, 8);
	sync_step(6);
	a_peek_claim();
	two_endpoints(self_path); /* B is attached (1:1) and waits */
	sync_step(8);
	CHECK_RC(fi_close(&mr->fid), 0);
	counters_a(ghost);
}

/* The process number of an endpoint name (a little-endian u32 at offset 8). */
static uint32_t
name_proc(const uint8_t *name)
{
	return (uint32_t)name[8] | (uint32_t)name[9] << 8 | (uint32_t)name[10] << 16 |
	       (uint32_t)name[11] << 24;
}

/* A second endpoint in this process, as Open MPI's OFI BTL opens next to its OFI MTL: the
 * first holds FI_TOROID_PROC's 1:0, so it attaches as any free process of the topology's
 * 1:0..1:3 on this node: 1:2, the lowest that is not attached (B is 1:1). Its name is its
 * own; messages go from one to the other over the AV. Meanwhile a third process without
 * FI_TOROID_PROC (test_fi noproc) gets the next free one, 1:3. */
static void
two_endpoints(const char *self_path)
{
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
	uint8_t n1[64], n2[64];
	size_t l1 = sizeof(n1), l2 = sizeof(n2), len;
	struct fid_cq *tx2, *rx2;
	struct fid_ep *ep2;
	fi_addr_t a1, a2;
	char s[64];
	int ctx[4], st;
	pid_t pid;

	CHECK_RC(fi_cq_open(domain, &cqa, &tx2, NULL), 0);
	CHECK_RC(fi_cq_open(domain, &cqa, &rx2, NULL), 0);
	CHECK_RC(fi_endpoint(domain, info, &ep2, NULL), 0);
	CHECK_RC(fi_ep_bind(ep2, &av->fid, 0), 0);
	CHECK_RC(fi_ep_bind(ep2, &tx2->fid, FI_TRANSMIT), 0);
	CHECK_RC(fi_ep_bind(ep2, &rx2->fid, FI_RECV), 0);
	CHECK_RC(fi_enable(ep2), 0);
	CHECK_RC(fi_getname(&ep->fid, n1, &l1), 0);
	CHECK_RC(fi_getname(&ep2->fid, n2, &l2), 0);
	if (l1 != NAME_LEN || l2 != NAME_LEN || memcmp(n1, n2, NAME_LEN) == 0)
		fail("the second endpoint has the first one's name");
	if (name_proc(n1) != 0 || name_proc(n2) != 2)
		fail("endpoints of 1:%u and 1:%u, expected 1:0 and 1:2", name_proc(n1),
		     name_proc(n2));
	len = sizeof(s);
	fi_av_straddr(av, n2, s, &len);
	if (strcmp(s, "fi_toroid://0.0.0/1:2") != 0)
		fail("fi_av_straddr of the second endpoint: %s", s);
	CHECK_RC(fi_av_insert(av, n2, 1, &a2, 0, NULL), 1);
	CHECK_RC(fi_av_insert(av, n1, 1, &a1, 0, NULL), 1);
	/* first -> second: 100000 B (a pool message), a directed receive */
	fill(buf, 100000, 21);
	memset(buf2, 0, 100000);
	POST(fi_recv(ep2, buf2, 100000, NULL, a1, &ctx[0]));
	POST(fi_send(ep, buf, 100000, NULL, a2, &ctx[1]));
	expect_ok(txcq, &ctx[1], FI_SEND | FI_MSG, 100000, 0, 0);
	expect_ok(rx2, &ctx[0], FI_RECV | FI_MSG, 100000, 0, a1);
	check(buf2, 100000, 21);
	/* second -> first: tagged, 64 B (inline) */
	fill(buf, 64, 22);
	memset(buf2, 0, 64);
	POST(fi_trecv(ep, buf2, 64, NULL, a2, 0x77, 0, &ctx[2]));
	POST(fi_tsend(ep2, buf, 64, NULL, a1, 0x77, &ctx[3]));
	expect_ok(tx2, &ctx[3], FI_SEND | FI_TAGGED, 64, 0, 0);
	expect_ok(rxcq, &ctx[2], FI_RECV | FI_TAGGED, 64, 0x77, a2);
	check(buf2, 64, 22);
	/* a process without FI_TOROID_PROC (nor a launcher's rank), while 1:0..1:2 are held */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		unsetenv("FI_TOROID_PROC");
		unsetenv("OMPI_COMM_WORLD_RANK");
		unsetenv("PMI_RANK");
		execl(self_path, self_path, "noproc", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("the process without FI_TOROID_PROC failed");
	CHECK_RC(fi_close(&ep2->fid), 0);
	CHECK_RC(fi_close(&tx2->fid), 0);
	CHECK_RC(fi_close(&rx2->fid), 0);
	printf("test_fi %s: a second endpoint got 1:2, messages both ways\n", who);
}

static void teardown(void);

/* test_fi noproc: an endpoint without FI_TOROID_PROC attaches as any free process (1:3, see
 * two_endpoints()) and sends to itself over its AV. */
static int
side_noproc(void)
{
	uint8_t name[64];
	size_t len = sizeof(name);
	fi_addr_t me;
	char s[64];
	int ctx[2];

	who = "C (no FI_TOROID_PROC)";
	alarm(60);
	if (getenv("FI_TOROID_PROC") != NULL)
		fail("FI_TOROID_PROC is set");
	test_getinfo();
	setup(0);
	CHECK_RC(fi_getname(&ep->fid, name, &len), 0);
	if (len != NAME_LEN || name_proc(name) != 3)
		fail("attached as 1:%u, expected the free 1:3", name_proc(name));
	len = sizeof(s);
	fi_av_straddr(av, name, s, &len);
	if (strcmp(s, "fi_toroid://0.0.0/1:3") != 0)
		fail("fi_av_straddr: %s", s);
	CHECK_RC(fi_av_insert(av, name, 1, &me, 0, NULL), 1);
	fill(buf, 5000, 31);
	memset(buf2, 0, 5000);
	POST(fi_recv(ep, buf2, 5000, NULL, me, &ctx[0]));
	POST(fi_send(ep, buf, 5000, NULL, me, &ctx[1]));
	expect_ok(txcq, &ctx[1], FI_SEND | FI_MSG, 5000, 0, 0);
	expect_ok(rxcq, &ctx[0], FI_RECV | FI_MSG, 5000, 0, me);
	check(buf2, 5000, 31);
	teardown();
	printf("test_fi %s: attached as 1:3, a message to itself\n", who);
	return 0;
}

static void
run_b(void)
{
	struct iovec iov[2];
	struct fi_msg_tagged tm;
	struct epoll_event ev;
	uint64_t t0;
	int ctx[8], fd, efd;

	for (size_t i = 0; i < N_SIZES; i++) {
		memset(buf, 0xee, sizes[i] + 1 < BIG ? sizes[i] + 1 : BIG);
		POST(fi_recv(ep, buf, BIG, NULL, FI_ADDR_UNSPEC, &ctx[0]));
		expect_ok(rxcq, &ctx[0], FI_RECV | FI_MSG, sizes[i], 0, peer);
		check(buf, sizes[i], (unsigned int)i);
		if (sizes[i] < BIG && buf[sizes[i]] != 0xee)
			fail("a %zu-byte receive wrote past its length", sizes[i]);
	}
	/* scattered into 2 iovs */
	iov[0] = (struct iovec){buf, 1500};
	iov[1] = (struct iovec){buf2, 1000};
	POST(fi_recvv(ep, iov, NULL, 2, FI_ADDR_UNSPEC, &ctx[1]));
	expect_ok(rxcq, &ctx[1], FI_RECV | FI_MSG, 2000, 0, peer);
	memcpy(buf + 1500, buf2, 500);
	check(buf, 2000, 99);
	POST(fi_recv(ep, buf, 100, NULL, FI_ADDR_UNSPEC, &ctx[2]));
	expect_ok(rxcq, &ctx[2], FI_RECV | FI_MSG, 64, 0, peer);
	check(buf, 64, 5);
	/* tagged, directed at A: each message must land in the receive with its tag */
	POST(fi_trecv(ep, buf2, 300, NULL, peer, 5, 0, &ctx[3]));
	POST(fi_trecv(ep, buf, 5000, NULL, peer, 7, 0, &ctx[4]));
	sync_step(1);
	expect_two(rxcq, &ctx[3], 300, &ctx[4], 5000, FI_RECV | FI_TAGGED);
	check(buf2, 300, 5);
	check(buf, 5000, 7);
	/* an ignore mask: tag 0x100 ignoring the low 12 bits takes tag 9, and the completion
	 * carries the message's tag */
	POST(fi_trecv(ep, buf, 64, NULL, FI_ADDR_UNSPEC, 0x100, 0xfff, &ctx[5]));
	expect_ok(rxcq, &ctx[5], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 64, 9, peer);
	check(buf, 64, 9);
	if (last_data != 0xfeedc0de12345678ULL)
		fail("remote CQ data %#" PRIx64 ", expected 0xfeedc0de12345678", last_data);
	/* a tagged receive of any tag never takes an untagged message: the ones that follow
	 * go to their fi_recv, this one stays posted (expect_nothing at the end) */
	POST(fi_trecv(ep, anytag, sizeof(anytag), NULL, FI_ADDR_UNSPEC, 0, ~0ULL, &ctx[5]));
	/* truncation: 100 bytes (eager) into 10, 5000 (granted) into 1000: FI_ETRUNC with the
	 * first bytes, len the room and olen the excess */
	POST(fi_recv(ep, buf, 10, NULL, FI_ADDR_UNSPEC, &ctx[6]));
	POST(fi_recv(ep, buf2, 1000, NULL, FI_ADDR_UNSPEC, &ctx[7]));
	sync_step(2);
	expect_err(rxcq, &ctx[6], FI_ETRUNC);
	if (last_err.len != 10 || last_err.olen != 90)
		fail("FI_ETRUNC: len %zu olen %zu, expected 10 and 90", last_err.len,
		     last_err.olen);
	check(buf, 10, 1);
	expect_err(rxcq, &ctx[7], FI_ETRUNC);
	if (last_err.len != 1000 || last_err.olen != 4000)
		fail("FI_ETRUNC: len %zu olen %zu, expected 1000 and 4000", last_err.len,
		     last_err.olen);
	check(buf2, 1000, 2);
	sync_step(3);
	/* FI_WAIT_FD: a bounded sread with nothing to come, then trywait + epoll, then sread */
	POST(fi_recv(ep, buf, 4096, NULL, FI_ADDR_UNSPEC, &ctx[7]));
	t0 = now_ms();
	CHECK_RC(fi_cq_sread(rxcq, &ev, 1, NULL, 200), -FI_EAGAIN);
	if (now_ms() - t0 < 150)
		fail("fi_cq_sread returned after %" PRIu64 " ms of a 200 ms wait", now_ms() - t0);
	CHECK_RC(fi_control(&rxcq->fid, FI_GETWAIT, &fd), 0);
	efd = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	CHECK_RC(epoll_ctl(efd, EPOLL_CTL_ADD, fd, &ev), 0);
	{
		struct fid *f = &rxcq->fid;

		CHECK_RC(fi_trywait(fabric, &f, 1), 0);
	}
	sync_step(4);
	if (epoll_wait(efd, &ev, 1, WAIT_MS) != 1)
		fail("the CQ's wait fd did not wake for a completion");
	close(efd);
	expect_ok(rxcq, &ctx[7], FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA, 777, 0, peer);
	check(buf, 777, 4);
	if (last_data != 777)
		fail("remote CQ data %" PRIu64 ", expected 777", last_data);
	POST(fi_recv(ep, buf, 4096, NULL, FI_ADDR_UNSPEC, &ctx[7]));
	sync_step(5);
	{
		struct fi_cq_tagged_entry e;

		CHECK_RC(fi_cq_sread(rxcq, &e, 1, NULL, WAIT_MS), 1);
		if (e.op_context != &ctx[7] || e.len != 1234)
			fail("fi_cq_sread: context %p len %zu", e.op_context, e.len);
	}
	check(buf, 1234, 6);
	fill(buf2, 2500, 8);
	iov[0] = (struct iovec){buf2, 2500};
	memset(&tm, 0, sizeof(tm));
	tm.msg_iov = iov;
	tm.iov_count = 1;
	tm.addr = peer;
	tm.tag = 0x1234;
	tm.context = &ctx[0];
	POST(fi_tsendmsg(ep, &tm, FI_TRANSMIT_COMPLETE));
	expect_ok(txcq, &ctx[0], FI_SEND | FI_TAGGED, 2500, 0, 0);
	sync_step(6);
	expect_nothing(rxcq);
	/* the any-tag receive took none of the untagged messages: withdraw it */
	CHECK_RC(fi_cancel(&ep->fid, &ctx[5]), 0);
	expect_err(rxcq, &ctx[5], FI_ECANCELED);
	CHECK_RC(fi_cancel(&ep->fid, &ctx[5]), -FI_ENOENT);
	/* a message A peeks at before it receives it (its send completes once it is staged) */
	fill(buf2, 300, 42);
	POST(fi_tsenddata(ep, buf2, 300, NULL, 42, peer, 0x4242, &ctx[1]));
	expect_ok(txcq, &ctx[1], FI_SEND | FI_TAGGED, 300, 0, 0);
	/* messages A claims, receives and drops (FI_CLAIM, FI_DISCARD): every send succeeds */
	fill(buf2, 2000, 43);
	POST(fi_tsenddata(ep, buf2, 2000, NULL, 43, peer, 0x4343, &ctx[2]));
	expect_ok(txcq, &ctx[2], FI_SEND | FI_TAGGED, 2000, 0, 0);
	POST(fi_tsend(ep, buf2, 100, NULL, peer, 0x4444, &ctx[3]));
	expect_ok(txcq, &ctx[3], FI_SEND | FI_TAGGED, 100, 0, 0);
	POST(fi_tsend(ep, buf2, 100, NULL, peer, 0x4545, &ctx[4]));
	expect_ok(txcq, &ctx[4], FI_SEND | FI_TAGGED, 100, 0, 0);
	sync_step(7);
	sync_step(8);
	counters_b();
}

static void
teardown(void)
{
	CHECK_RC(fi_close(&ep->fid), 0);
	CHECK_RC(fi_close(&txcntr->fid), 0); /* unbound by closing the endpoint */
	CHECK_RC(fi_close(&rxcntr->fid), 0);
	CHECK_RC(fi_close(&txcq->fid), 0);
	CHECK_RC(fi_close(&rxcq->fid), 0);
	CHECK_RC(fi_close(&av->fid), 0);
	CHECK_RC(fi_close(&domain->fid), 0);
	CHECK_RC(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

static int
side(bool is_a)
{
	pair_side_env(is_a, false);
	test_getinfo();
	setup(is_a);
	exchange_names();
	if (is_a)
		run_a("/proc/self/exe");
	else
		run_b();
	teardown();
	printf("test_fi %s: passed\n", who);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "noproc") == 0)
		return side_noproc();

	if (pair_env_missing())
		return 77;
	return pair_run(side, 120);
}
