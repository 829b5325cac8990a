/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VNI service: the engine side of virtual network interfaces (toroid/vni_service.h,
 * docs/vni.md).
 *
 * Objects:
 *  - vif: one attached process: its socket, its eventfd, the segment (memfd) mapped here, the
 *    engine's private copy of every context it accepted, its queue of sends ready to inject,
 *    its posted receives and its unexpected (staged) messages;
 *  - vtx: one message being sent to one destination (a multicast has a parent vtx and one
 *    child per destination), named on the wire by msg_id = index | generation << 16;
 *  - vrx: one message being received (granted or staged), named by grant_id likewise;
 *  - hints: requests to send that were refused, kept (bounded) so that a receive posted later
 *    can grant them at once (a proactive CTS; the sender discards a duplicate).
 * Everything runs in the thread that polls the node: no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_memory.h>
#include <rte_random.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>
#include <toroid/vni_service.h>

#include "vni_alloc.h"
#include "vni_seg.h"
#include <toroid/vni_wire.h>

RTE_LOG_REGISTER(trd_vni_logtype, toroid.vni, INFO);
#define VNI_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, trd_vni_logtype, "toroid vni: " fmt "\n", ##__VA_ARGS__)

#define VNIS_MAX_IFS 256
#define VNIS_N_TX 16384        /* index up to 16 bits, generation 16 bits */
#define VNIS_N_RX 16384
#define VNIS_N_HINTS 64
#define VNIS_N_CONNS 16
#define VNIS_CMD_BURST 32
#define VNIS_RX_BURST 32
#define VNIS_INJECT_BUDGET 64
#define VNIS_SOCK_PERIOD_US 50
#define VNIS_TIMER_PERIOD_US 20
#define VNIS_SWEEP_PERIOD_US 50000
#define VNIS_REGISTER_TIMEOUT_US 5000000

enum tx_state {
	TX_FREE = 0,
	TX_REQ,       /* ready: inject the eager message or the RTS */
	TX_WAIT,      /* waiting for ACK / CTS / NAK */
	TX_BACKOFF,   /* refused: ask again at due */
	TX_DATA,      /* ready: inject the next chunk */
	TX_FIN,       /* ready: inject the FIN */
	TX_WAIT_DONE, /* waiting for DONE */
	TX_ABORT,     /* ready: inject the ABORT */
	TX_DRAIN,     /* finished: waiting until the engine no longer reads the buffer */
	TX_MCAST,     /* a multicast parent: waiting for its children */
};

enum list_kind { L_NONE = 0, L_TIMER, L_DRAIN, L_WAIT };

struct vif;

struct vtx {
	uint32_t idx;
	uint16_t gen;
	uint8_t state;
	uint8_t lkind;
	uint32_t key; /* random, drawn at allocation: replies must echo it */
	bool eager, rts_sent, in_rq;
	struct vif *vif;
	struct vtx *parent;
	uint32_t ctx, sflags, doorbell;
	uint32_t dst_app, dst_proc, dst_rank;
	struct trd_coord dst;
	uint64_t tag;
	uint32_t len, off;
	const uint8_t *src;
	uint32_t grant;
	uint64_t rkey, roff;
	uint16_t ctr;
	int32_t status;
	uint64_t due, noproc_deadline;
	uint32_t backoff;
	uint32_t n_left; /* multicast parent */
	TAILQ_ENTRY(vtx) rq; /* owner's ready queue */
	TAILQ_ENTRY(vtx) lq; /* service list by lkind */
	TAILQ_ENTRY(vtx) oq; /* owner's list of every tx */
};
TAILQ_HEAD(vtx_list, vtx);

enum rx_state { RX_FREE = 0, RX_RECV, RX_STAGED };

struct vrecv {
	uint32_t idx;
	bool busy;
	uint32_t flags, src_app, src_proc, cap, doorbell;
	uint64_t tag, buf;
	TAILQ_ENTRY(vrecv) q;
};
TAILQ_HEAD(vrecv_list, vrecv);

struct vrx {
	uint32_t idx;
	uint16_t gen;
	uint8_t state;
	bool in_uq, discard;
	struct vif *vif;
	struct vrecv *recv;
	uint32_t src_rank;
	struct trd_coord src;
	uint32_t src_msg, src_key, src_app, src_proc;
	uint64_t tag;
	uint32_t len;
	int64_t soff; /* staging offset, or -1 */
	uint64_t rkey, roff;
	TAILQ_ENTRY(vrx) uq; /* vif's unexpected messages, arrival order */
	TAILQ_ENTRY(vrx) aq; /* service's active grants and staged messages */
};
TAILQ_HEAD(vrx_list, vrx);

struct vhint {
	bool used;
	uint32_t grant;       /* 0: waiting for a receive or staging */
	uint32_t src_rank, msg_id, key, src_app, src_proc, len;
	struct trd_coord src;
	uint64_t tag;
	struct vif *vif;
	uint64_t stamp;
};

enum ep_kind { EP_LISTEN = 1, EP_KICK, EP_CONN, EP_VIF };

struct ep_ref {
	enum ep_kind kind;
	void *ptr;
};

struct vconn {
	bool used;
	int fd;
	uint64_t deadline;
	struct ep_ref ep;
};

struct vif {
	struct trd_vnis *s;
	bool dead;
	unsigned int refs; /* vtx and vrx naming it, plus one while attached */
	int sock, efd;
	int pid, uid;
	uint8_t *base;
	size_t size;
	struct trd_vni_seg *seg;
	struct rte_ring *cmdq, *cplq;
	uint32_t cmdq_size, cplq_size;
	/* The engine's own index into each queue (it is the only consumer of one and the only
	 * producer of the other): what the application writes in the rings' headers (size, mask,
	 * indices) is never used to compute an address. */
	uint32_t cmd_cons, cpl_prod;
	struct trd_vni_sctx *sctx;
	struct trd_vni_rctx *rctx;
	uint8_t *ctxr, *pool;
	volatile uint64_t *db;
	uint32_t app, proc, n_send, n_recv, n_db, short_max, slot;
	uint64_t pool_size;
	struct trd_mr *mr;
	bool extmem;         /* registered as external memory and DMA-mapped for the NICs */
	unsigned int n_mapped; /* devices it is DMA-mapped for */
	uint8_t *sbusy;
	struct vrecv *recvs;
	struct vtx_list rq, txs;
	struct vrecv_list posted;
	struct vrx_list uq;
	TAILQ_ENTRY(vif) rr;
	bool in_rr, wake;
	bool broken; /* its process broke a queue: closed at the next socket look */
	uint64_t staged;
	uint64_t tx_msgs, tx_pkts, tx_bytes, rx_msgs, rx_bytes, naks;
	uint64_t tx_pkts_shared; /* injected while another interface was waiting too */
	struct ep_ref ep;
};
TAILQ_HEAD(vif_list, vif);

struct vreply {
	struct trd_coord dst;
	struct trd_vw_hdr h;
};

struct trd_vnis {
	struct trd_vnis_conf conf;
	struct trd_node *node;
	const struct trd_topo *topo;
	struct trd_coord coord;
	uint32_t rank;
	struct trd_fifo *req, *rep;
	struct trd_rec_fifo *rf;
	unsigned int req_free0; /* free slots of the request FIFO when empty */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd, kfd, epfd;
	struct ep_ref lref, kref;
	struct vif **ifs;
	unsigned int n_ifs;
	unsigned int n_live; /* interfaces attached and not dead: staging is shared among them */
	struct vif_list rr;
	unsigned int n_rr; /* interfaces in rr */
	struct vtx *tx;
	uint32_t *tx_free, n_tx_free;
	struct vrx *rx;
	uint32_t *rx_free, n_rx_free;
	struct vtx_list lists[4];
	struct vrx_list rx_active;
	struct vhint hints[VNIS_N_HINTS];
	struct trd_vni_heap stage;
	uint8_t *stage_mem;
	size_t stage_size;
	struct trd_mr *stage_mr;
	struct vreply *preps;
	unsigned int n_preps, cap_preps, head_preps;
	uint32_t chunk;
	struct rte_device *dma_dev[16]; /* the node's NICs that DMA from application memory */
	unsigned int n_dma_dev;
	uint64_t now, next_sock, next_timer, next_sweep;
	struct vconn conns[VNIS_N_CONNS];
	uint64_t stat[TRD_VNIS_STAT_MAX];
	struct trd_vnis_owner *owners; /* the configuration's, copied */
	uint32_t keys[1024]; /* message keys not yet used */
	unsigned int n_keys;
};

static const char *const vnis_stat_names[] = {
#define TRD_VNIS_STAT_NAME_(e, n) n,
	TRD_VNIS_STATS(TRD_VNIS_STAT_NAME_)
#undef TRD_VNIS_STAT_NAME_
};
_Static_assert(RTE_DIM(vnis_stat_names) == TRD_VNIS_STAT_MAX, "one name per statistic");

#define ST(s, e) ((s)->stat[TRD_VNIS_STAT_##e])

static void vif_release_maybe(struct trd_vnis *s, struct vif *v);

/* A message's key: unpredictable (the kernel's CSPRNG, 1024 keys at a time), so that who did
 * not see a request cannot answer it, even after watching earlier ones. */
static uint32_t
msg_key(struct trd_vnis *s)
{
	if (s->n_keys == 0) {
		if (getrandom(s->keys, sizeof(s->keys), GRND_NONBLOCK) != (ssize_t)sizeof(s->keys))
			for (unsigned int i = 0; i < RTE_DIM(s->keys); i++)
				s->keys[i] = (uint32_t)rte_rand(); /* seeded from getentropy() */
		s->n_keys = RTE_DIM(s->keys);
	}
	return s->keys[--s->n_keys];
}

/* ------------------------------------------------------------------------------------------ */
/* wire header */

/* Post a protocol message (header + @p len bytes) to @p dst on @p fifo; copied at post time. */
static int
vw_inject(struct trd_vnis *s, struct trd_fifo *fifo, struct trd_coord dst,
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

/* Replies go on their own FIFO, in order: when it is full they wait here. */
static void
reply(struct trd_vnis *s, struct trd_coord dst, const struct trd_vw_hdr *h)
{
	struct vreply *r;

	if (s->n_preps == 0) {
		int rc = vw_inject(s, s->rep, dst, h, NULL, 0);

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

static unsigned int
replies_flush(struct trd_vnis *s)
{
	unsigned int k = 0;

	while (s->n_preps > 0) {
		struct vreply *r = &s->preps[s->head_preps];
		int rc = vw_inject(s, s->rep, r->dst, &r->h, NULL, 0);

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

/* ------------------------------------------------------------------------------------------ */
/* interfaces: the shared queues and tables */

/* Copy @p n bytes (a multiple of 8, both 8-byte aligned) the application may be writing at the
 * same time: each word is read exactly once, so what is checked afterwards is what is used. */
static void
shared_read(void *dst, const void *src, size_t n)
{
	const volatile uint64_t *in = src;
	uint64_t *out = dst;

	for (size_t i = 0; i < n / 8; i++)
		out[i] = in[i];
}

/* A multicast destination list (4-byte aligned): each field read once. */
static void
shared_read_list(struct trd_vni_addr *dl, const void *src, unsigned int n)
{
	const volatile uint32_t *in = src;

	for (unsigned int i = 0; i < n; i++) {
		dl[i].app = in[2 * i];
		dl[i].proc = in[2 * i + 1];
	}
}

/* The engine's end of the queues. rte_ring's layout is kept (the application uses DPDK's
 * inline enqueue and dequeue), but the ring's size is the engine's copy and its index the
 * engine's own; from the header only the other side's index is read, once, and a count it
 * implies above the ring's capacity means the queue is broken. */
static int
cmdq_take(struct vif *v, struct trd_vni_cmd *out, unsigned int max)
{
	struct rte_ring *r = v->cmdq;
	const uint64_t *slots = (const uint64_t *)(const void *)&r[1];
	uint32_t prod = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - v->cmd_cons, mask = v->cmdq_size - 1;

	if (avail > mask) /* more than the capacity (size - 1): the header was overwritten */
		return -EPROTO;
	avail = RTE_MIN(avail, max);
	for (uint32_t i = 0; i < avail; i++) {
		uint64_t w = ((const volatile uint64_t *)slots)[(v->cmd_cons + i) & mask];

		memcpy(&out[i], &w, sizeof(w));
	}
	v->cmd_cons += avail;
	__atomic_store_n(&r->cons.head, v->cmd_cons, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cons.tail, v->cmd_cons, __ATOMIC_RELEASE);
	return (int)avail;
}

static bool
cmdq_pending(const struct vif *v)
{
	return __atomic_load_n(&v->cmdq->prod.tail, __ATOMIC_ACQUIRE) != v->cmd_cons;
}

static int
cplq_put(struct vif *v, const struct trd_vni_cqe *e)
{
	struct rte_ring *r = v->cplq;
	struct trd_vni_cqe *slots = (struct trd_vni_cqe *)(void *)&r[1];
	uint32_t cons = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t mask = v->cplq_size - 1;

	if (v->cpl_prod - cons >= mask) /* full (cannot be), or the header was overwritten */
		return -ENOSPC;
	slots[v->cpl_prod & mask] = *e;
	v->cpl_prod++;
	__atomic_store_n(&r->prod.head, v->cpl_prod, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod.tail, v->cpl_prod, __ATOMIC_RELEASE);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* interfaces: completions */

static void
vif_cqe(struct trd_vnis *s, struct vif *v, uint16_t kind, uint32_t idx, int32_t status,
	uint32_t len, uint64_t tag, uint32_t app, uint32_t proc, bool doorbell, uint32_t db)
{
	struct trd_vni_cqe e = {.kind = kind, .idx = idx, .status = status, .len = len,
				.tag = tag, .peer_app = app, .peer_proc = proc};

	if (kind == TRD_VNI_CPL_SEND) {
		ST(s, TX_DONE)++;
		if (status == 0) {
			ST(s, TX_BYTES) += len;
			v->tx_msgs++;
			v->tx_bytes += len;
		}
	} else {
		ST(s, RX_DONE)++;
		if (status == 0) {
			ST(s, RX_BYTES) += len;
			v->rx_msgs++;
			v->rx_bytes += len;
		}
	}
	if (status != 0)
		ST(s, ERRORS)++;
	if (v->dead)
		return;
	v->seg->tx_msgs = v->tx_msgs;
	v->seg->tx_bytes = v->tx_bytes;
	v->seg->rx_msgs = v->rx_msgs;
	v->seg->rx_bytes = v->rx_bytes;
	if (doorbell && db < v->n_db)
		__atomic_store_n(&v->db[db], v->db[db] + 1, __ATOMIC_RELEASE);
	/* The queue holds one entry per context, so it cannot be full: a failure means the
	 * application broke its own queue. */
	if (cplq_put(v, &e) != 0 && !v->broken) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: completion queue full or damaged: interface closed", v->app,
			v->proc);
		shutdown(v->sock, SHUT_RDWR); /* seen as a hang-up at the next socket look */
	}
	v->wake = true;
}

/* After a round: signal the processes that sleep and got completions. */
static void
vif_wake_all(struct trd_vnis *s)
{
	bool fenced = false;

	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		const uint64_t one = 1;

		if (v == NULL || !v->wake)
			continue;
		v->wake = false;
		if (v->dead)
			continue;
		if (!fenced) {
			/* completions were queued, then app_armed is read: pairs with the
			 * application's store of app_armed followed by its look at the queue */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			fenced = true;
		}
		if (v->seg->app_armed && __atomic_exchange_n(&v->seg->app_armed, 0, __ATOMIC_SEQ_CST)) {
			if (write(v->efd, &one, sizeof(one)) == sizeof(one))
				ST(s, WAKEUPS)++;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* sends */

static bool
ready_state(uint8_t st)
{
	return st == TX_REQ || st == TX_DATA || st == TX_FIN || st == TX_ABORT;
}

static enum list_kind
state_list(uint8_t st)
{
	switch (st) {
	case TX_BACKOFF:
		return L_TIMER;
	case TX_DRAIN:
		return L_DRAIN;
	case TX_WAIT:
	case TX_WAIT_DONE:
		return L_WAIT;
	default:
		return L_NONE;
	}
}

static void
rq_remove(struct trd_vnis *s, struct vtx *t)
{
	struct vif *v = t->vif;

	if (!t->in_rq)
		return;
	TAILQ_REMOVE(&v->rq, t, rq);
	t->in_rq = false;
	if (TAILQ_EMPTY(&v->rq) && v->in_rr) {
		TAILQ_REMOVE(&s->rr, v, rr);
		v->in_rr = false;
		s->n_rr--;
	}
}

static void
tx_set_state(struct trd_vnis *s, struct vtx *t, uint8_t st)
{
	enum list_kind lk = state_list(st);

	if (t->lkind != lk) {
		if (t->lkind != L_NONE)
			TAILQ_REMOVE(&s->lists[t->lkind], t, lq);
		if (lk != L_NONE)
			TAILQ_INSERT_TAIL(&s->lists[lk], t, lq);
		t->lkind = (uint8_t)lk;
	}
	if (ready_state(st) && !t->in_rq) {
		struct vif *v = t->vif;

		TAILQ_INSERT_TAIL(&v->rq, t, rq);
		t->in_rq = true;
		if (!v->in_rr) {
			TAILQ_INSERT_TAIL(&s->rr, v, rr);
			v->in_rr = true;
			s->n_rr++;
		}
	} else if (!ready_state(st)) {
		rq_remove(s, t);
	}
	t->state = st;
}

static struct vtx *
tx_alloc(struct trd_vnis *s, struct vif *v)
{
	struct vtx *t;

	if (s->n_tx_free == 0)
		return NULL;
	t = &s->tx[s->tx_free[--s->n_tx_free]];
	t->state = TX_FREE;
	t->lkind = L_NONE;
	t->eager = t->rts_sent = t->in_rq = false;
	t->vif = v;
	t->parent = NULL;
	t->off = 0;
	t->grant = 0;
	t->ctr = 0;
	t->status = 0;
	t->n_left = 0;
	t->key = msg_key(s);
	t->backoff = s->conf.retry_us;
	TAILQ_INSERT_TAIL(&v->txs, t, oq);
	v->refs++;
	return t;
}

static void
tx_free(struct trd_vnis *s, struct vtx *t)
{
	struct vif *v = t->vif;

	tx_set_state(s, t, TX_FREE);
	TAILQ_REMOVE(&v->txs, t, oq);
	t->gen++;
	s->tx_free[s->n_tx_free++] = t->idx;
	v->refs--;
	vif_release_maybe(s, v);
}

static inline uint32_t
tx_id(const struct vtx *t)
{
	return t->idx | (uint32_t)t->gen << 16;
}

static struct vtx *
tx_lookup(struct trd_vnis *s, uint32_t id)
{
	struct vtx *t;

	if ((id & 0xffff) >= VNIS_N_TX) /* a wire value: 16 bits, the table is smaller */
		return NULL;
	t = &s->tx[id & 0xffff];
	if (t->state == TX_FREE || t->gen != (uint16_t)(id >> 16))
		return NULL;
	return t;
}

/* The send context's completion (a unicast tx, or a multicast parent). */
static void
tx_cqe(struct trd_vnis *s, struct vtx *t)
{
	struct vif *v = t->vif;

	vif_cqe(s, v, TRD_VNI_CPL_SEND, t->ctx, t->status, t->status == 0 ? t->len : 0, t->tag,
		t->dst_app, t->dst_proc, (t->sflags & TRD_VNI_F_DOORBELL) != 0, t->doorbell);
	if (t->ctx < v->n_send)
		v->sbusy[t->ctx] = 0;
}

static void
tx_complete(struct trd_vnis *s, struct vtx *t)
{
	struct vtx *p = t->parent;

	if (t->ctr != 0) {
		trd_counter_free(s->node, t->ctr);
		t->ctr = 0;
	}
	if (p == NULL) {
		tx_cqe(s, t);
		tx_free(s, t);
		return;
	}
	if (t->status != 0 && p->status == 0)
		p->status = t->status;
	tx_free(s, t);
	if (--p->n_left == 0) {
		tx_cqe(s, p);
		tx_free(s, p);
	}
}

/* The tx is over (with @p status if none yet): complete it once the engine has let go of the
 * buffer (its counter fell by every byte injected). */
static void
tx_finish(struct trd_vnis *s, struct vtx *t, int status)
{
	if (status != 0 && t->status == 0)
		t->status = status;
	if (t->ctr != 0) {
		int64_t left;

		if (trd_counter_read(s->node, t->ctr, &left) == 0 && left > (int64_t)(t->len - t->off)) {
			tx_set_state(s, t, TX_DRAIN);
			return;
		}
	}
	tx_complete(s, t);
}

static void
tx_hdr(const struct trd_vnis *s, const struct vtx *t, uint8_t type, struct trd_vw_hdr *h)
{
	RTE_SET_USED(s);
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->src_app = t->vif->app;
	h->src_proc = t->vif->proc;
	h->dst_app = t->dst_app;
	h->dst_proc = t->dst_proc;
	h->msg_id = tx_id(t);
	h->key = t->key;
	h->grant_id = t->grant;
	h->len = t->len;
	h->tag = t->tag;
}

static void
count_pkt(struct trd_vnis *s, struct vtx *t)
{
	struct vif *v = t->vif;

	ST(s, TX_PKTS)++;
	v->tx_pkts++;
	if (s->n_rr > 1 || (s->n_rr == 1 && !v->in_rr))
		v->tx_pkts_shared++;
	if (!v->dead)
		v->seg->tx_pkts = v->tx_pkts;
}

/* Inject one packet for @p t. 0: done (a turn used); -ENOBUFS: the FIFO is full; -EAGAIN: this
 * tx cannot go now. */
static int
tx_step(struct trd_vnis *s, struct vtx *t)
{
	struct trd_vw_hdr h;
	struct trd_desc d;
	uint32_t n;
	int rc;

	switch (t->state) {
	case TX_REQ:
		tx_hdr(s, t, t->eager ? TRD_VW_EAGER : TRD_VW_RTS, &h);
		rc = vw_inject(s, s->req, t->dst, &h, t->eager ? t->src : NULL,
			       t->eager ? t->len : 0);
		if (rc != 0)
			break;
		count_pkt(s, t);
		if (t->eager) {
			ST(s, TX_EAGER)++;
		} else {
			ST(s, TX_RTS)++;
			t->rts_sent = true;
		}
		tx_set_state(s, t, TX_WAIT);
		return 0;
	case TX_DATA:
		if (t->ctr == 0) {
			if (trd_counter_alloc(s->node, &t->ctr) != 0)
				return -EAGAIN;
			trd_counter_set(s->node, t->ctr, t->len);
		}
		n = RTE_MIN(s->chunk, t->len - t->off);
		trd_desc_put(&d, t->dst, t->src + t->off, n, t->rkey, t->roff + t->off, t->ctr, 0);
		rc = trd_inject(s->req, &d);
		if (rc != 0)
			break;
		count_pkt(s, t);
		ST(s, TX_CHUNKS)++;
		t->off += n;
		if (t->off == t->len)
			tx_set_state(s, t, TX_FIN);
		return 0;
	case TX_FIN:
		tx_hdr(s, t, TRD_VW_FIN, &h);
		rc = vw_inject(s, s->req, t->dst, &h, NULL, 0);
		if (rc != 0)
			break;
		count_pkt(s, t);
		ST(s, TX_FIN)++;
		tx_set_state(s, t, TX_WAIT_DONE);
		return 0;
	case TX_ABORT:
		tx_hdr(s, t, TRD_VW_ABORT, &h);
		rc = vw_inject(s, s->req, t->dst, &h, NULL, 0);
		if (rc != 0)
			break;
		count_pkt(s, t);
		ST(s, TX_ABORT)++;
		tx_finish(s, t, t->status ? t->status : -ECONNRESET);
		return 0;
	default:
		return -EAGAIN;
	}
	if (rc == -ENOBUFS)
		return -ENOBUFS;
	/* no route, peer down, a bad descriptor: the message fails */
	tx_finish(s, t, rc == -EHOSTUNREACH ? -EHOSTUNREACH : rc);
	return 0;
}

/* Request-FIFO slots in use: the scheduler keeps at most conf.backlog queued. */
static bool
backlog_full(struct trd_vnis *s)
{
	unsigned int free_now = trd_fifo_free_count(s->req);

	return s->req_free0 - RTE_MIN(free_now, s->req_free0) >= s->conf.backlog;
}

/* Two-level round-robin: the interface at the head of the ring gets one packet for the
 * message at the head of its queue; both go to the back of their queues. */
static unsigned int
schedule(struct trd_vnis *s)
{
	unsigned int k = 0, stuck = 0;

	while (k < VNIS_INJECT_BUDGET && !TAILQ_EMPTY(&s->rr) && !backlog_full(s)) {
		struct vif *v = TAILQ_FIRST(&s->rr);
		struct vtx *t = TAILQ_FIRST(&v->rq);
		int rc;

		/* the step may end the last message of a dead interface, which frees it (and t):
		 * hold it until the rotation is done */
		v->refs++;
		rc = tx_step(s, t);
		if (rc == -ENOBUFS) {
			v->refs--;
			vif_release_maybe(s, v);
			break;
		}
		if (rc == -EAGAIN) {
			if (++stuck > 2 * s->n_ifs + 4)
				break;
		} else {
			stuck = 0;
			k++;
		}
		/* rotate the message inside its interface (a freed one is in no queue), then the
		 * interface */
		if (t->state != TX_FREE && t->in_rq && TAILQ_NEXT(t, rq) != NULL) {
			TAILQ_REMOVE(&v->rq, t, rq);
			TAILQ_INSERT_TAIL(&v->rq, t, rq);
		}
		if (v->in_rr && TAILQ_NEXT(v, rr) != NULL) {
			TAILQ_REMOVE(&s->rr, v, rr);
			TAILQ_INSERT_TAIL(&s->rr, v, rr);
		}
		v->refs--;
		vif_release_maybe(s, v);
	}
	return k;
}

/* ------------------------------------------------------------------------------------------ */
/* receives, grants, staging */

static struct vif *
vif_find(struct trd_vnis *s, uint32_t app, uint32_t proc)
{
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead && v->app == app && v->proc == proc)
			return v;
	}
	return NULL;
}

static bool
recv_match(const struct vrecv *r, uint32_t app, uint32_t proc, uint64_t tag)
{
	return (r->src_app == TRD_VNI_ANY || r->src_app == app) &&
	       (r->src_proc == TRD_VNI_ANY || r->src_proc == proc) &&
	       ((r->flags & TRD_VNI_RF_ANY_TAG) || r->tag == tag);
}

static struct vrecv *
posted_take(struct vif *v, uint32_t app, uint32_t proc, uint64_t tag)
{
	struct vrecv *r;

	TAILQ_FOREACH(r, &v->posted, q)
		if (recv_match(r, app, proc, tag)) {
			TAILQ_REMOVE(&v->posted, r, q);
			return r;
		}
	return NULL;
}

static void
recv_complete(struct trd_vnis *s, struct vif *v, struct vrecv *r, int status, uint32_t len,
	      uint64_t tag, uint32_t app, uint32_t proc)
{
	vif_cqe(s, v, TRD_VNI_CPL_RECV, r->idx, status, len, tag, app, proc,
		(r->flags & TRD_VNI_F_DOORBELL) != 0, r->doorbell);
	r->busy = false;
}

static struct vrx *
rx_alloc(struct trd_vnis *s, struct vif *v)
{
	struct vrx *x;

	if (s->n_rx_free == 0)
		return NULL;
	x = &s->rx[s->rx_free[--s->n_rx_free]];
	x->state = RX_RECV;
	x->in_uq = x->discard = false;
	x->vif = v;
	x->recv = NULL;
	x->soff = -1;
	v->refs++;
	TAILQ_INSERT_TAIL(&s->rx_active, x, aq);
	return x;
}

static inline uint32_t
rx_id(const struct vrx *x)
{
	return x->idx | (uint32_t)x->gen << 16;
}

static void
hint_drop_grant(struct trd_vnis *s, uint32_t grant)
{
	for (unsigned int i = 0; i < VNIS_N_HINTS; i++)
		if (s->hints[i].used && s->hints[i].grant == grant)
			s->hints[i].used = false;
}

static void
stage_free(struct trd_vnis *s, struct vrx *x)
{
	if (x->soff < 0)
		return;
	trd_vni_heap_free(&s->stage, (uint64_t)x->soff, x->len);
	x->vif->staged -= trd_vni_heap_round(x->len);
	x->soff = -1;
	ST(s, STAGING_USED) = s->stage.used;
}

static void
rx_release(struct trd_vnis *s, struct vrx *x)
{
	struct vif *v = x->vif;

	hint_drop_grant(s, rx_id(x));
	stage_free(s, x);
	if (x->in_uq) {
		TAILQ_REMOVE(&v->uq, x, uq);
		x->in_uq = false;
	}
	TAILQ_REMOVE(&s->rx_active, x, aq);
	x->state = RX_FREE;
	x->gen++;
	s->rx_free[s->n_rx_free++] = x->idx;
	v->refs--;
	vif_release_maybe(s, v);
}

static struct vrx *
rx_lookup(struct trd_vnis *s, uint32_t id, uint32_t src_rank, uint32_t msg, uint32_t key)
{
	struct vrx *x;

	if ((id & 0xffff) >= VNIS_N_RX) /* a wire value: 16 bits, the table is smaller */
		return NULL;
	x = &s->rx[id & 0xffff];
	if (x->state == RX_FREE || x->gen != (uint16_t)(id >> 16) || x->src_rank != src_rank ||
	    x->src_msg != msg || x->src_key != key)
		return NULL;
	return x;
}

/* Staging for a message to @p v, within its share: no destination holds more than the staging
 * area divided by the interfaces attached, so one process that never receives cannot take
 * the room its neighbours' messages need. -1 when it does not fit. */
static int64_t
stage_alloc(struct trd_vnis *s, struct vif *v, uint32_t len)
{
	uint64_t share = s->stage.size / RTE_MAX(1u, s->n_live);
	int64_t off;

	if (v->staged + trd_vni_heap_round(len) > share) {
		ST(s, NAK_SHARE)++;
		return -1;
	}
	off = trd_vni_heap_alloc(&s->stage, len);
	if (off < 0)
		return -1;
	v->staged += trd_vni_heap_round(len);
	ST(s, STAGING_USED) = s->stage.used;
	ST(s, STAGING_HWM) = s->stage.hwm;
	return off;
}

static void
rx_fill(struct vrx *x, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h)
{
	x->src_rank = src_rank;
	x->src = src;
	x->src_msg = h->msg_id;
	x->src_key = h->key;
	x->src_app = h->src_app;
	x->src_proc = h->src_proc;
	x->tag = h->tag;
	x->len = h->len;
}

static void
rep_hdr(struct trd_vw_hdr *r, uint8_t type, const struct trd_vw_hdr *req, int status)
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

static void
send_cts(struct trd_vnis *s, struct vrx *x)
{
	struct trd_vw_hdr r;

	memset(&r, 0, sizeof(r));
	r.type = TRD_VW_CTS;
	r.src_app = x->vif->app;
	r.src_proc = x->vif->proc;
	r.dst_app = x->src_app;
	r.dst_proc = x->src_proc;
	r.msg_id = x->src_msg;
	r.key = x->src_key;
	r.grant_id = rx_id(x);
	r.len = x->len;
	r.tag = x->tag;
	r.rkey = x->rkey;
	r.roff = x->roff;
	reply(s, x->src, &r);
	ST(s, CTS_SENT)++;
}

/* A grant into receive @p r of @p v: the sender puts straight into the buffer. */
static void
grant_recv(struct vif *v, struct vrx *x, struct vrecv *r)
{
	x->recv = r;
	x->rkey = trd_mr_key(v->mr);
	x->roff = r->buf;
}

static struct vhint *
hint_find(struct trd_vnis *s, uint32_t src_rank, uint32_t msg, uint32_t key)
{
	for (unsigned int i = 0; i < VNIS_N_HINTS; i++) {
		struct vhint *hn = &s->hints[i];

		if (hn->used && hn->src_rank == src_rank && hn->msg_id == msg && hn->key == key)
			return hn;
	}
	return NULL;
}

/* Remember a refused request to send, so a receive posted later can grant it at once. */
static void
hint_note(struct trd_vnis *s, struct vif *v, uint32_t src_rank, struct trd_coord src,
	  const struct trd_vw_hdr *h)
{
	struct vhint *hn = hint_find(s, src_rank, h->msg_id, h->key), *old = NULL;

	if (hn == NULL) {
		for (unsigned int i = 0; i < VNIS_N_HINTS && hn == NULL; i++) {
			struct vhint *c = &s->hints[i];

			if (!c->used)
				hn = c;
			else if (c->grant == 0 && (old == NULL || c->stamp < old->stamp))
				old = c;
		}
		if (hn == NULL)
			hn = old; /* forget the oldest waiting one: its sender asks again anyway */
		if (hn == NULL)
			return;
	}
	hn->used = true;
	hn->grant = 0;
	hn->src_rank = src_rank;
	hn->src = src;
	hn->msg_id = h->msg_id;
	hn->key = h->key;
	hn->src_app = h->src_app;
	hn->src_proc = h->src_proc;
	hn->len = h->len;
	hn->tag = h->tag;
	hn->vif = v;
	hn->stamp = s->now;
}

static void
nak(struct trd_vnis *s, struct trd_coord src, const struct trd_vw_hdr *h, int status)
{
	struct trd_vw_hdr r;

	rep_hdr(&r, TRD_VW_NAK, h, status);
	reply(s, src, &r);
	ST(s, NAK_SENT)++;
}

static void
on_eager(struct trd_vnis *s, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h,
	 const uint8_t *data)
{
	struct trd_vw_hdr r;
	struct vrecv *rv;
	struct vif *v;
	struct vrx *x;
	int64_t off;

	ST(s, RX_EAGER)++;
	v = vif_find(s, h->dst_app, h->dst_proc);
	if (v == NULL) {
		nak(s, src, h, -ECONNREFUSED);
		return;
	}
	rv = posted_take(v, h->src_app, h->src_proc, h->tag);
	if (rv != NULL) {
		int st = h->len > rv->cap ? -EMSGSIZE : 0;

		if (st == 0 && h->len != 0)
			memcpy(v->pool + rv->buf, data, h->len);
		recv_complete(s, v, rv, st, st == 0 ? h->len : 0, h->tag, h->src_app, h->src_proc);
		rep_hdr(&r, TRD_VW_ACK, h, st);
		reply(s, src, &r);
		return;
	}
	/* no receive yet: hold it, if the staging bound allows */
	x = rx_alloc(s, v);
	off = x == NULL ? -1 : stage_alloc(s, v, h->len);
	if (off < 0) {
		if (x != NULL) {
			x->len = 0;
			rx_release(s, x);
		}
		nak(s, src, h, -ENOSPC);
		return;
	}
	rx_fill(x, src_rank, src, h);
	x->soff = off;
	if (h->len != 0)
		memcpy(s->stage_mem + off, data, h->len);
	x->state = RX_STAGED;
	TAILQ_INSERT_TAIL(&v->uq, x, uq);
	x->in_uq = true;
	ST(s, STAGED)++;
	ST(s, STAGED_BYTES) += h->len;
	rep_hdr(&r, TRD_VW_ACK, h, 0);
	reply(s, src, &r);
}

static void
on_rts(struct trd_vnis *s, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h)
{
	struct vhint *hn = hint_find(s, src_rank, h->msg_id, h->key);
	struct vrecv *rv;
	struct vif *v;
	struct vrx *x;
	int64_t off;

	ST(s, RX_RTS)++;
	if (hn != NULL && hn->grant != 0) {
		/* asked again after a refusal, but a receive granted it meanwhile: the same
		 * permission again (the sender keeps the first) */
		x = rx_lookup(s, hn->grant, src_rank, h->msg_id, h->key);
		if (x != NULL) {
			send_cts(s, x);
			return;
		}
		hn->used = false;
	}
	v = vif_find(s, h->dst_app, h->dst_proc);
	if (v == NULL) {
		if (hn != NULL)
			hn->used = false;
		nak(s, src, h, -ECONNREFUSED);
		return;
	}
	rv = posted_take(v, h->src_app, h->src_proc, h->tag);
	if (rv != NULL && h->len > rv->cap) {
		if (hn != NULL)
			hn->used = false;
		recv_complete(s, v, rv, -EMSGSIZE, 0, h->tag, h->src_app, h->src_proc);
		nak(s, src, h, -EMSGSIZE);
		return;
	}
	x = rx_alloc(s, v);
	if (x == NULL) {
		if (rv != NULL)
			TAILQ_INSERT_HEAD(&v->posted, rv, q);
		hint_note(s, v, src_rank, src, h);
		nak(s, src, h, -ENOSPC);
		return;
	}
	rx_fill(x, src_rank, src, h);
	if (rv != NULL) {
		grant_recv(v, x, rv);
	} else {
		off = stage_alloc(s, v, h->len);
		if (off < 0) {
			rx_release(s, x);
			hint_note(s, v, src_rank, src, h);
			nak(s, src, h, -ENOSPC);
			return;
		}
		x->soff = off;
		x->rkey = trd_mr_key(s->stage_mr);
		x->roff = (uint64_t)off;
		TAILQ_INSERT_TAIL(&v->uq, x, uq);
		x->in_uq = true;
		ST(s, STAGED)++;
		ST(s, STAGED_BYTES) += h->len;
	}
	if (hn != NULL)
		hn->used = false;
	send_cts(s, x);
}

static void
on_fin(struct trd_vnis *s, uint32_t src_rank, struct trd_coord src, const struct trd_vw_hdr *h)
{
	struct vrx *x = rx_lookup(s, h->grant_id, src_rank, h->msg_id, h->key);
	struct trd_vw_hdr r;
	int st = 0;

	ST(s, RX_FIN)++;
	if (x == NULL) {
		ST(s, BAD_WIRE)++;
		st = -EPROTO;
	} else if (x->vif->dead) {
		st = -ECONNRESET;
		rx_release(s, x);
	} else if (x->discard) {
		st = -EMSGSIZE;
		rx_release(s, x);
	} else if (x->recv != NULL) {
		struct vif *v = x->vif;

		if (x->soff >= 0 && x->len != 0)
			memcpy(v->pool + x->recv->buf, s->stage_mem + x->soff, x->len);
		recv_complete(s, v, x->recv, 0, x->len, x->tag, x->src_app, x->src_proc);
		rx_release(s, x);
	} else {
		x->state = RX_STAGED; /* whole, in staging, waiting for its receive */
		hint_drop_grant(s, rx_id(x));
	}
	rep_hdr(&r, TRD_VW_DONE, h, st);
	reply(s, src, &r);
}

static void
on_abort(struct trd_vnis *s, uint32_t src_rank, const struct trd_vw_hdr *h)
{
	struct vhint *hn = hint_find(s, src_rank, h->msg_id, h->key);
	struct vrx *x = NULL, *it;

	if (hn != NULL && hn->grant == 0)
		hn->used = false;
	if (h->grant_id != 0)
		x = rx_lookup(s, h->grant_id, src_rank, h->msg_id, h->key);
	if (x == NULL) /* granted, but the sender died before it heard of it */
		TAILQ_FOREACH(it, &s->rx_active, aq)
			if (it->src_rank == src_rank && it->src_msg == h->msg_id &&
			    it->src_key == h->key) {
				x = it;
				break;
			}
	if (x == NULL)
		return;
	if (x->recv != NULL && !x->vif->dead)
		recv_complete(s, x->vif, x->recv, -ECONNRESET, 0, x->tag, x->src_app,
			      x->src_proc);
	rx_release(s, x);
}

/* The statuses a reply may carry (docs/vni.md, "Refusals"): anything else is not from an
 * engine that speaks this protocol, and never reaches an application. */
static bool
reply_status_ok(uint8_t type, int32_t st)
{
	switch (type) {
	case TRD_VW_CTS:
		return st == 0;
	case TRD_VW_NAK:
		return st == -ENOSPC || st == -ECONNREFUSED || st == -EMSGSIZE;
	case TRD_VW_ACK:
		return st == 0 || st == -EMSGSIZE;
	case TRD_VW_DONE:
		return st == 0 || st == -EMSGSIZE || st == -ECONNRESET || st == -EPROTO;
	case TRD_VW_CANCEL:
		return st == -ECONNRESET;
	default:
		return false;
	}
}

/* A reply (CTS, NAK, ACK, DONE, CANCEL) from node @p src_rank. It counts only if it names a
 * live message of ours, comes from the node and process the message was sent to, echoes the
 * message's key and carries a status the protocol defines; otherwise it is dropped and counted
 * (bad_replies). A late permission for a message that ended is a duplicate (dup_cts). */
static void
on_reply(struct trd_vnis *s, uint32_t src_rank, const struct trd_vw_hdr *h)
{
	struct vtx *t = tx_lookup(s, h->msg_id);

	if (t == NULL) {
		if (h->type == TRD_VW_CTS && h->status == 0)
			ST(s, DUP_CTS)++;
		else
			ST(s, BAD_REPLIES)++;
		return;
	}
	if (t->parent == NULL && t->state == TX_MCAST) {
		ST(s, BAD_REPLIES)++; /* a multicast parent is never on the wire */
		return;
	}
	if (t->key != h->key || t->dst_rank != src_rank || h->src_app != t->dst_app ||
	    h->src_proc != t->dst_proc || h->dst_app != t->vif->app ||
	    h->dst_proc != t->vif->proc || !reply_status_ok(h->type, h->status)) {
		ST(s, BAD_REPLIES)++;
		return;
	}
	switch (h->type) {
	case TRD_VW_CTS:
		if (t->eager || (t->state != TX_WAIT && t->state != TX_BACKOFF)) {
			ST(s, DUP_CTS)++; /* a permission we already have */
			return;
		}
		if (h->len != t->len) {
			ST(s, BAD_REPLIES)++;
			return;
		}
		t->grant = h->grant_id;
		t->rkey = h->rkey;
		t->roff = h->roff;
		tx_set_state(s, t, TX_DATA);
		return;
	case TRD_VW_NAK:
		if (t->state != TX_WAIT)
			return;
		ST(s, NAK_RECEIVED)++;
		t->vif->naks++;
		if (!t->vif->dead)
			t->vif->seg->naks = t->vif->naks;
		if (h->status == -EMSGSIZE ||
		    (h->status == -ECONNREFUSED && s->now >= t->noproc_deadline)) {
			tx_finish(s, t, h->status);
			return;
		}
		t->due = s->now + t->backoff;
		if (t->backoff < 64 * s->conf.retry_us)
			t->backoff *= 2;
		tx_set_state(s, t, TX_BACKOFF);
		return;
	case TRD_VW_ACK:
		if (t->state == TX_WAIT && t->eager)
			tx_finish(s, t, h->status);
		return;
	case TRD_VW_DONE:
		if (t->state == TX_WAIT_DONE)
			tx_finish(s, t, h->status);
		return;
	case TRD_VW_CANCEL:
		if (t->state == TX_DATA || t->state == TX_FIN) {
			t->status = h->status;
			tx_set_state(s, t, TX_ABORT);
		}
		return;
	default:
		return;
	}
}

static unsigned int
rx_protocol(struct trd_vnis *s)
{
	struct trd_msg *m[VNIS_RX_BURST];
	int n = trd_rec_fifo_poll(s->rf, m, VNIS_RX_BURST);

	for (int i = 0; i < n; i++) {
		struct trd_vw_hdr h;
		int src_rank = trd_torus_rank(&s->topo->torus, m[i]->src);

		if ((m[i]->user >> 32) != TRD_VW_MAGIC || src_rank < 0 ||
		    trd_vw_decode(m[i]->data, m[i]->len, &h) != 0 || h.type != (m[i]->user & 0xff) ||
		    (h.type == TRD_VW_EAGER && h.len != m[i]->len - TRD_VW_HDR_LEN) ||
		    (h.type != TRD_VW_EAGER && m[i]->len != TRD_VW_HDR_LEN)) {
			ST(s, BAD_WIRE)++;
			trd_msg_free(m[i]);
			continue;
		}
		switch (h.type) {
		case TRD_VW_EAGER:
			on_eager(s, (uint32_t)src_rank, m[i]->src, &h,
				 (const uint8_t *)m[i]->data + TRD_VW_HDR_LEN);
			break;
		case TRD_VW_RTS:
			on_rts(s, (uint32_t)src_rank, m[i]->src, &h);
			break;
		case TRD_VW_FIN:
			on_fin(s, (uint32_t)src_rank, m[i]->src, &h);
			break;
		case TRD_VW_ABORT:
			on_abort(s, (uint32_t)src_rank, &h);
			break;
		default:
			on_reply(s, (uint32_t)src_rank, &h);
			break;
		}
		trd_msg_free(m[i]);
	}
	return n > 0 ? (unsigned int)n : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* commands */

static void
cmd_send(struct trd_vnis *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_addr dl[TRD_VNI_MCAST_MAX];
	struct trd_vni_sctx c;
	struct vtx *p = NULL;
	const uint8_t *src;
	unsigned int n = 1;
	int err = 0;

	if (idx >= v->n_send || v->sbusy[idx]) {
		ST(s, BAD_CMDS)++;
		return;
	}
	shared_read(&c, &v->sctx[idx], sizeof(c)); /* once: the application may change it */
	v->sbusy[idx] = 1;
	/* every field is checked before it takes part in an address */
	if ((c.flags & ~(TRD_VNI_SF_INLINE | TRD_VNI_SF_MCAST | TRD_VNI_F_DOORBELL)) ||
	    ((c.flags & TRD_VNI_SF_INLINE) && c.len > v->short_max) ||
	    (!(c.flags & TRD_VNI_SF_INLINE) && (c.buf > v->pool_size || c.len > v->pool_size - c.buf)) ||
	    ((c.flags & TRD_VNI_F_DOORBELL) && c.doorbell >= v->n_db))
		err = -EINVAL;
	if (err == 0 && (c.flags & TRD_VNI_SF_MCAST)) {
		n = c.n_dst;
		if (n < 2 || n > TRD_VNI_MCAST_MAX || c.dst_off > v->slot ||
		    (uint64_t)n * sizeof(dl[0]) > v->slot - c.dst_off || c.dst_off % 4 != 0)
			err = -EINVAL;
		else
			shared_read_list(dl, v->ctxr + (size_t)idx * v->slot + c.dst_off, n);
	} else {
		dl[0].app = c.dst_app;
		dl[0].proc = c.dst_proc;
	}
	if (err == 0 && n > 1) {
		p = tx_alloc(s, v);
		if (p == NULL)
			err = -ENOBUFS;
	}
	if (err != 0) {
		ST(s, BAD_CMDS)++;
		struct vtx tmp = {.vif = v, .ctx = idx, .status = err, .sflags = c.flags,
				  .doorbell = c.doorbell, .tag = c.tag, .dst_app = c.dst_app,
				  .dst_proc = c.dst_proc};
		tx_cqe(s, &tmp);
		return;
	}
	if (c.flags & TRD_VNI_SF_INLINE)
		src = v->ctxr + (size_t)idx * v->slot;
	else
		src = v->pool + c.buf;
	s->stat[n > 1 ? TRD_VNIS_STAT_MCASTS : TRD_VNIS_STAT_SENDS]++;
	if (p != NULL) {
		p->ctx = idx;
		p->sflags = c.flags;
		p->doorbell = c.doorbell;
		p->tag = c.tag;
		p->len = c.len;
		p->dst_app = dl[0].app;
		p->dst_proc = dl[0].proc;
		p->n_left = n + 1; /* one more while the children are made */
		p->state = TX_MCAST;
	}
	for (unsigned int i = 0; i < n; i++) {
		int rank = trd_topo_find_proc(s->topo, dl[i].app, dl[i].proc);
		struct vtx *t = tx_alloc(s, v);

		if (t == NULL || rank < 0) {
			int st = t == NULL ? -ENOBUFS : -ECONNREFUSED;

			if (p == NULL) {
				struct vtx tmp = {.vif = v, .ctx = idx, .status = st, .sflags = c.flags,
						  .doorbell = c.doorbell, .tag = c.tag,
						  .dst_app = dl[i].app, .dst_proc = dl[i].proc};

				if (t != NULL)
					tx_free(s, t);
				tx_cqe(s, &tmp);
				return;
			}
			if (t != NULL)
				tx_free(s, t);
			if (p->status == 0)
				p->status = st;
			p->n_left--;
			continue;
		}
		t->parent = p;
		t->ctx = idx;
		t->sflags = p == NULL ? c.flags : 0;
		t->doorbell = c.doorbell;
		t->dst_app = dl[i].app;
		t->dst_proc = dl[i].proc;
		t->dst_rank = (uint32_t)rank;
		t->dst = s->topo->nodes[rank].coord;
		t->tag = c.tag;
		t->len = c.len;
		t->src = src;
		t->eager = c.len <= v->short_max;
		t->noproc_deadline = s->now + (uint64_t)s->conf.noproc_ms * 1000;
		tx_set_state(s, t, TX_REQ);
	}
	if (p != NULL && --p->n_left == 0) {
		tx_cqe(s, p);
		tx_free(s, p);
	}
}

static void
cmd_recv(struct trd_vnis *s, struct vif *v, uint32_t idx)
{
	struct trd_vni_rctx c;
	struct vrecv *r;
	struct vrx *x;

	if (idx >= v->n_recv || v->recvs[idx].busy) {
		ST(s, BAD_CMDS)++;
		return;
	}
	shared_read(&c, &v->rctx[idx], sizeof(c)); /* once: the application may change it */
	r = &v->recvs[idx];
	r->busy = true;
	r->flags = c.flags;
	r->src_app = c.src_app;
	r->src_proc = c.src_proc;
	r->cap = c.cap;
	r->tag = c.tag;
	r->buf = c.buf;
	r->doorbell = c.doorbell;
	ST(s, RECVS)++;
	if ((c.flags & ~(TRD_VNI_RF_ANY_TAG | TRD_VNI_F_DOORBELL)) || c.buf > v->pool_size ||
	    c.cap > v->pool_size - c.buf || ((c.flags & TRD_VNI_F_DOORBELL) && c.doorbell >= v->n_db)) {
		ST(s, BAD_CMDS)++;
		r->flags &= ~TRD_VNI_F_DOORBELL;
		recv_complete(s, v, r, -EINVAL, 0, c.tag, c.src_app, c.src_proc);
		return;
	}
	/* a message that came first */
	TAILQ_FOREACH(x, &v->uq, uq)
		if (recv_match(r, x->src_app, x->src_proc, x->tag))
			break;
	if (x != NULL) {
		ST(s, LATE_MATCHES)++;
		TAILQ_REMOVE(&v->uq, x, uq);
		x->in_uq = false;
		if (x->len > r->cap) {
			recv_complete(s, v, r, -EMSGSIZE, 0, x->tag, x->src_app, x->src_proc);
			if (x->state == RX_STAGED)
				rx_release(s, x);
			else
				x->discard = true; /* its FIN gets -EMSGSIZE */
			return;
		}
		if (x->state == RX_STAGED) {
			if (x->len != 0)
				memcpy(v->pool + r->buf, s->stage_mem + x->soff, x->len);
			recv_complete(s, v, r, 0, x->len, x->tag, x->src_app, x->src_proc);
			rx_release(s, x);
		} else {
			x->recv = r; /* still arriving into staging: copied at its FIN */
		}
		return;
	}
	/* a request to send that was refused for want of a receive: grant it now */
	for (unsigned int i = 0; i < VNIS_N_HINTS; i++) {
		struct vhint *hn = &s->hints[i];
		struct trd_vw_hdr h;

		if (!hn->used || hn->grant != 0 || hn->vif != v ||
		    !recv_match(r, hn->src_app, hn->src_proc, hn->tag))
			continue;
		if (hn->len > r->cap)
			continue; /* its next request finds the receive and fails it */
		x = rx_alloc(s, v);
		if (x == NULL)
			break;
		memset(&h, 0, sizeof(h));
		h.msg_id = hn->msg_id;
		h.key = hn->key;
		h.src_app = hn->src_app;
		h.src_proc = hn->src_proc;
		h.tag = hn->tag;
		h.len = hn->len;
		rx_fill(x, hn->src_rank, hn->src, &h);
		grant_recv(v, x, r);
		hn->grant = rx_id(x);
		send_cts(s, x);
		ST(s, CTS_LATE)++;
		return;
	}
	TAILQ_INSERT_TAIL(&v->posted, r, q);
}

static unsigned int
vif_cmds(struct trd_vnis *s, struct vif *v)
{
	struct trd_vni_cmd c[VNIS_CMD_BURST];
	int n;

	if (v->broken)
		return 0;
	n = cmdq_take(v, c, VNIS_CMD_BURST);
	if (n < 0) {
		v->broken = true;
		ST(s, BAD_QUEUES)++;
		VNI_LOG(WARNING, "%u:%u: command queue damaged: interface closed", v->app, v->proc);
		shutdown(v->sock, SHUT_RDWR); /* seen as a hang-up at the next socket look */
		return 0;
	}
	for (int i = 0; i < n; i++) {
		ST(s, CMDS)++;
		if (c[i].op == TRD_VNI_CMD_SEND)
			cmd_send(s, v, c[i].idx);
		else if (c[i].op == TRD_VNI_CMD_RECV)
			cmd_recv(s, v, c[i].idx);
		else
			ST(s, BAD_CMDS)++;
	}
	return (unsigned int)n;
}

/* ------------------------------------------------------------------------------------------ */
/* timers */

static void
peer_sweep(struct trd_vnis *s)
{
	struct vtx *t, *tn;
	struct vrx *x, *xn;

	for (t = TAILQ_FIRST(&s->lists[L_WAIT]); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, lq);
		if (trd_node_peer_up(s->node, t->dst) == 0)
			tx_finish(s, t, -EHOSTUNREACH);
	}
	for (x = TAILQ_FIRST(&s->rx_active); x != NULL; x = xn) {
		xn = TAILQ_NEXT(x, aq);
		if (x->state != RX_RECV || trd_node_peer_up(s->node, x->src) != 0)
			continue;
		if (x->recv != NULL && !x->vif->dead)
			recv_complete(s, x->vif, x->recv, -EHOSTUNREACH, 0, x->tag, x->src_app,
				      x->src_proc);
		rx_release(s, x);
	}
}

static unsigned int
timers(struct trd_vnis *s)
{
	struct vtx *t, *tn;
	unsigned int k = 0;

	for (t = TAILQ_FIRST(&s->lists[L_TIMER]); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, lq);
		if (s->now >= t->due) {
			ST(s, RETRIES)++;
			tx_set_state(s, t, TX_REQ);
			k++;
		}
	}
	for (t = TAILQ_FIRST(&s->lists[L_DRAIN]); t != NULL; t = tn) {
		int64_t left;

		tn = TAILQ_NEXT(t, lq);
		if (trd_counter_read(s->node, t->ctr, &left) != 0 ||
		    left <= (int64_t)(t->len - t->off)) {
			tx_complete(s, t);
			k++;
		}
	}
	if (s->now >= s->next_sweep) {
		s->next_sweep = s->now + VNIS_SWEEP_PERIOD_US;
		peer_sweep(s);
	}
	return k;
}

/* ------------------------------------------------------------------------------------------ */
/* attach, detach */

static int
ep_add(struct trd_vnis *s, int fd, struct ep_ref *ref, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = ref};

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* A NIC that reads long messages zero-copy from a segment must be able to DMA from it: with
 * an IOMMU (vfio-pci, IOVA as VA) map the segment for every such device, as DPDK maps its own
 * memory. Virtual devices (memif, ring, af_packet, ...) copy with the CPU and need nothing. */
static int
seg_dma_map(struct trd_vnis *s, struct vif *v)
{
	if (s->n_dma_dev == 0)
		return 0;
	if (rte_extmem_register(v->base, v->size, NULL, 0, (size_t)sysconf(_SC_PAGESIZE)) != 0 &&
	    rte_errno != EEXIST)
		return -rte_errno;
	v->extmem = true;
	for (; v->n_mapped < s->n_dma_dev; v->n_mapped++)
		if (rte_dev_dma_map(s->dma_dev[v->n_mapped], v->base, (uint64_t)(uintptr_t)v->base,
				    v->size) != 0)
			return -rte_errno;
	return 0;
}

static void
seg_dma_unmap(struct trd_vnis *s, struct vif *v)
{
	while (v->n_mapped > 0) {
		v->n_mapped--;
		rte_dev_dma_unmap(s->dma_dev[v->n_mapped], v->base, (uint64_t)(uintptr_t)v->base,
				  v->size);
	}
	if (v->extmem)
		rte_extmem_unregister(v->base, v->size);
	v->extmem = false;
}

static void
vif_unmap(struct trd_vnis *s, struct vif *v)
{
	if (v->base != NULL)
		seg_dma_unmap(s, v);
	if (v->mr != NULL)
		trd_mr_deregister(v->mr);
	if (v->base != NULL)
		munmap(v->base, v->size);
	if (v->efd >= 0)
		close(v->efd);
	free(v->sbusy);
	free(v->recvs);
	ST(s, RECLAIMED)++;
	VNI_LOG(DEBUG, "%u:%u: interface memory released", v->app, v->proc);
	free(v);
}

static void
vif_release_maybe(struct trd_vnis *s, struct vif *v)
{
	if (!v->dead || v->refs != 0)
		return;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (s->ifs[i] == v) {
			s->ifs[i] = s->ifs[--s->n_ifs];
			s->ifs[s->n_ifs] = NULL;
			break;
		}
	vif_unmap(s, v);
}

/* The process is gone (or closed, or broke its queue): give everything back. */
static void
vif_kill(struct trd_vnis *s, struct vif *v, const char *why)
{
	struct vtx *t, *tn;
	struct vrx *x, *xn;

	unsigned int n_abort = 0, n_drop = 0, n_finish = 0, n_rx = 0;

	if (v->dead)
		return;
	v->dead = true;
	s->n_live--;
	ST(s, DETACHED)++;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, v->sock, NULL);
	close(v->sock);
	v->sock = -1;
	/* its sends: stop what is not granted, give up what is, let finished data finish */
	for (t = TAILQ_FIRST(&v->txs); t != NULL; t = tn) {
		tn = TAILQ_NEXT(t, oq);
		switch (t->state) {
		case TX_REQ:
		case TX_BACKOFF:
			if (t->rts_sent) {
				t->status = -ECONNRESET;
				tx_set_state(s, t, TX_ABORT); /* the receiver may hold a hint */
				n_abort++;
			} else {
				tx_finish(s, t, -ECONNRESET);
				n_drop++;
			}
			break;
		case TX_WAIT:
			if (!t->eager) {
				t->status = -ECONNRESET;
				tx_set_state(s, t, TX_ABORT); /* a CTS may be on its way */
				n_abort++;
			} else {
				n_finish++;
			}
			break;
		case TX_DATA:
			t->status = -ECONNRESET;
			tx_set_state(s, t, TX_ABORT);
			n_abort++;
			break;
		case TX_MCAST:
			break;
		default: /* FIN (all data injected), WAIT_DONE, DRAIN: they end by themselves */
			n_finish++;
			break;
		}
	}
	/* its receives: posted ones vanish; staged messages are dropped; messages arriving into
	 * its pool are cancelled at their sender, and the memory stays until they end */
	TAILQ_INIT(&v->posted);
	for (x = TAILQ_FIRST(&s->rx_active); x != NULL; x = xn) {
		xn = TAILQ_NEXT(x, aq);
		if (x->vif != v)
			continue;
		n_rx++;
		if (x->state == RX_STAGED) {
			rx_release(s, x);
		} else {
			struct trd_vw_hdr h;

			memset(&h, 0, sizeof(h));
			h.type = TRD_VW_CANCEL;
			h.status = -ECONNRESET;
			h.msg_id = x->src_msg;
			h.key = x->src_key;
			h.grant_id = rx_id(x);
			h.dst_app = x->src_app;
			h.dst_proc = x->src_proc;
			h.src_app = v->app;
			h.src_proc = v->proc;
			reply(s, x->src, &h);
			/* its staging (if any) stays reserved: bytes may still arrive into it
			 * until the sender's ABORT or FIN frees it */
		}
	}
	for (unsigned int i = 0; i < VNIS_N_HINTS; i++)
		if (s->hints[i].used && s->hints[i].vif == v && s->hints[i].grant == 0)
			s->hints[i].used = false;
	VNI_LOG(INFO, "%u:%u (pid %d) detached: %s; sends: %u aborted, %u dropped before they "
		"started, %u finishing; %u incoming messages dropped or cancelled", v->app, v->proc,
		v->pid, why, n_abort, n_drop, n_finish, n_rx);
	v->refs--; /* the attachment's reference */
	vif_release_maybe(s, v);
}

static void
conn_close(struct trd_vnis *s, struct vconn *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->used = false;
}

static void
answer(int fd, int status, uint64_t size, const char *reason, const int *fds)
{
	struct trd_vni_sock_answer a;
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &a, .iov_len = sizeof(a)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(&a, 0, sizeof(a));
	a.op = TRD_VNI_SOCK_REGISTERED;
	a.status = status;
	a.seg_size = size;
	snprintf(a.reason, sizeof(a.reason), "%s", reason ? reason : "");
	if (fds != NULL) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, 3 * sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		VNI_LOG(DEBUG, "answer not sent: %s", strerror(errno));
}

/* Build the segment of a new interface. 0 or -errno (with *why). */
static int
seg_create(struct trd_vnis *s, struct vif *v, const struct trd_vni_sock_register *req, int *memfd,
	   const char **why)
{
	uint32_t qsz = rte_align32pow2(req->n_send + req->n_recv + 1);
	uint64_t off = RTE_ALIGN_CEIL(sizeof(struct trd_vni_seg), TRD_VNI_ALIGN);
	uint64_t cmdq_off, cplq_off, sctx_off, rctx_off, ctxr_off, db_off, pool_off, size;
	struct trd_vni_seg *g;
	char name[64];
	int fd, rc;

	v->n_send = req->n_send;
	v->n_recv = req->n_recv;
	v->n_db = req->n_doorbells;
	v->short_max = (uint32_t)RTE_MAX(0, req->short_max);
	v->short_max = RTE_MIN(v->short_max, (uint32_t)TRD_VNI_SHORT_MAX);
	v->short_max = RTE_MIN(v->short_max, s->conf.inline_max - TRD_VW_HDR_LEN);
	v->slot = RTE_ALIGN_CEIL(RTE_ALIGN_CEIL(v->short_max, 8) +
				 TRD_VNI_MCAST_MAX * sizeof(struct trd_vni_addr), TRD_VNI_ALIGN);
	v->pool_size = RTE_ALIGN_CEIL(req->pool_size, TRD_VNI_ALIGN);
	v->cmdq_size = v->cplq_size = qsz;

	cmdq_off = off;
	off = RTE_ALIGN_CEIL(off + rte_ring_get_memsize_elem(sizeof(struct trd_vni_cmd), qsz), 64);
	cplq_off = off;
	off = RTE_ALIGN_CEIL(off + rte_ring_get_memsize_elem(sizeof(struct trd_vni_cqe), qsz), 64);
	sctx_off = off;
	off += (uint64_t)v->n_send * sizeof(struct trd_vni_sctx);
	rctx_off = off;
	off += (uint64_t)v->n_recv * sizeof(struct trd_vni_rctx);
	ctxr_off = off;
	off += (uint64_t)v->n_send * v->slot;
	db_off = off;
	off = RTE_ALIGN_CEIL(off + (uint64_t)v->n_db * 8, 4096);
	pool_off = off;
	size = RTE_ALIGN_CEIL(off + v->pool_size, 4096);

	snprintf(name, sizeof(name), "toroid-vni-%u.%u", v->app, v->proc);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		*why = "memfd_create failed";
		return -errno;
	}
	/* The application may neither shrink nor grow it: a shrunk file would fault the engine. */
	if (ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		rc = -errno;
		close(fd);
		*why = "cannot size or seal the segment";
		return rc;
	}
	v->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (v->base == MAP_FAILED) {
		rc = -errno;
		v->base = NULL;
		close(fd);
		*why = "cannot map the segment";
		return rc;
	}
	v->size = size;
	g = v->seg = (struct trd_vni_seg *)v->base;
	g->magic = TRD_VNI_SEG_MAGIC;
	g->version = TRD_VNI_VERSION;
	g->hdr_size = sizeof(*g);
	g->size = size;
	g->app = v->app;
	g->proc = v->proc;
	g->n_send = v->n_send;
	g->n_recv = v->n_recv;
	g->n_doorbells = v->n_db;
	g->short_max = v->short_max;
	g->slot_size = v->slot;
	g->cmdq_size = qsz;
	g->cplq_size = qsz;
	g->cmdq_off = cmdq_off;
	g->cplq_off = cplq_off;
	g->sctx_off = sctx_off;
	g->rctx_off = rctx_off;
	g->ctxr_off = ctxr_off;
	g->ctxr_size = (uint64_t)v->n_send * v->slot;
	g->pool_off = pool_off;
	g->pool_size = v->pool_size;
	g->db_off = db_off;
	g->node[0] = s->coord.x;
	g->node[1] = s->coord.y;
	g->node[2] = s->coord.z;
	snprintf(g->node_name, sizeof(g->node_name), "%s", trd_node_name(s->node));
	v->cmdq = (struct rte_ring *)(v->base + cmdq_off);
	v->cplq = (struct rte_ring *)(v->base + cplq_off);
	if (rte_ring_init(v->cmdq, "vni_cmd", qsz, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0 ||
	    rte_ring_init(v->cplq, "vni_cpl", qsz, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
		close(fd);
		*why = "cannot make the queues";
		return -EINVAL;
	}
	v->sctx = (struct trd_vni_sctx *)(v->base + sctx_off);
	v->rctx = (struct trd_vni_rctx *)(v->base + rctx_off);
	v->ctxr = v->base + ctxr_off;
	v->pool = v->base + pool_off;
	v->db = (volatile uint64_t *)(v->base + db_off);
	rc = seg_dma_map(s, v);
	if (rc != 0) {
		close(fd);
		*why = "cannot DMA-map the segment for the node's NIC (IOMMU)";
		return rc;
	}
	if (v->pool_size != 0) {
		v->mr = trd_mr_register(s->node, v->pool, v->pool_size, TRD_ACCESS_REMOTE_WRITE);
		if (v->mr == NULL) {
			rc = -rte_errno;
			close(fd);
			*why = "no free memory region on the node";
			return rc;
		}
	}
	*memfd = fd;
	return 0;
}

/* Is @p gid the primary or a supplementary group of the process at the other end of @p fd? */
static bool
peer_in_group(int fd, const struct ucred *cred, gid_t gid)
{
	gid_t groups[256];
	socklen_t gl = sizeof(groups);

	if (cred->gid == gid)
		return true;
#ifdef SO_PEERGROUPS
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
		for (size_t i = 0; i < gl / sizeof(groups[0]); i++)
			if (groups[i] == gid)
				return true;
#else
	RTE_SET_USED(groups);
	RTE_SET_USED(gl);
#endif
	return false;
}

/* May the process at the other end of @p fd claim a process of application @p app?
 * 0 or -EACCES (with *why). */
static int
owner_check(struct trd_vnis *s, int fd, const struct ucred *cred, uint32_t app, const char **why)
{
	bool listed = false;

	for (unsigned int i = 0; i < s->conf.n_owners; i++) {
		const struct trd_vnis_owner *o = &s->owners[i];

		if (o->app != app)
			continue;
		listed = true;
		if ((o->uid < 0 || (uint64_t)o->uid == cred->uid) &&
		    (o->gid < 0 || peer_in_group(fd, cred, (gid_t)o->gid)))
			return 0;
	}
	if (listed) {
		*why = "this user may not claim this application (its owners are configured)";
		return -EACCES;
	}
	/* no owner configured: the application belongs to the user of its attached processes */
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		const struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead && v->app == app && (uid_t)v->uid != cred->uid) {
			*why = "processes of this application run as another user";
			return -EACCES;
		}
	}
	return 0;
}

/* A registration request on a fresh connection. */
static void
conn_register(struct trd_vnis *s, struct vconn *c)
{
	struct trd_vni_sock_register req;
	struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
	socklen_t cl = sizeof(cred);
	const char *why = NULL;
	struct vif *v = NULL;
	int memfd = -1, fds[3];
	ssize_t n;
	int rc = 0, fd = c->fd;

	n = recv(fd, &req, sizeof(req), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(s, c);
		return;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	c->used = false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) {
		rc = -EACCES;
		why = "the kernel does not say who the process is (SO_PEERCRED)";
	} else if (n != (ssize_t)sizeof(req) || req.op != TRD_VNI_SOCK_REGISTER ||
	    req.version != TRD_VNI_VERSION) {
		rc = -EPROTO;
		why = "unknown request or version";
	} else if (req.n_send == 0 || req.n_send > TRD_VNI_CTX_MAX || req.n_recv == 0 ||
		   req.n_recv > TRD_VNI_CTX_MAX || req.n_doorbells > TRD_VNI_DB_MAX ||
		   req.pool_size > s->conf.max_pool || req.app == TRD_VNI_ANY ||
		   req.proc == TRD_VNI_ANY) {
		rc = -EINVAL;
		why = "bad sizes (contexts 1..4096, doorbells 0..4096, pool within the engine's "
		      "limit)";
	} else if (trd_topo_find_proc(s->topo, req.app, req.proc) != (int)s->rank) {
		rc = -EADDRNOTAVAIL;
		why = "the topology does not place this process on this node";
	} else if ((rc = owner_check(s, fd, &cred, req.app, &why)) != 0) {
		ST(s, DENIED)++;
	} else if (vif_find(s, req.app, req.proc) != NULL) {
		rc = -EADDRINUSE;
		why = "this process is attached already";
	} else if (s->n_ifs >= s->conf.max_ifs) {
		rc = -ENOSPC;
		why = "too many interfaces";
	}
	if (rc == 0) {
		v = calloc(1, sizeof(*v));
		if (v == NULL) {
			rc = -ENOMEM;
			why = "out of memory";
		}
	}
	if (rc == 0) {
		v->s = s;
		v->sock = fd;
		v->efd = -1;
		v->app = req.app;
		v->proc = req.proc;
		v->pid = cred.pid;
		v->uid = (int)cred.uid;
		TAILQ_INIT(&v->rq);
		TAILQ_INIT(&v->txs);
		TAILQ_INIT(&v->posted);
		TAILQ_INIT(&v->uq);
		v->sbusy = calloc(req.n_send, 1);
		v->recvs = calloc(req.n_recv, sizeof(*v->recvs));
		v->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (v->sbusy == NULL || v->recvs == NULL || v->efd < 0) {
			rc = -ENOMEM;
			why = "out of memory";
		} else {
			for (uint32_t i = 0; i < req.n_recv; i++)
				v->recvs[i].idx = i;
			rc = seg_create(s, v, &req, &memfd, &why);
		}
	}
	if (rc != 0) {
		VNI_LOG(NOTICE, "registration of %u:%u (pid %d, uid %u) refused: %s", req.app,
			req.proc, cred.pid, cred.uid, why);
		ST(s, REFUSED)++;
		answer(fd, rc, 0, why, NULL);
		close(fd);
		if (v != NULL) {
			v->sock = -1;
			vif_unmap(s, v);
			ST(s, RECLAIMED)--;
		}
		return;
	}
	fds[0] = memfd;
	fds[1] = v->efd;
	fds[2] = s->kfd;
	answer(fd, 0, v->size, "", fds);
	close(memfd);
	v->refs = 1;
	v->ep.kind = EP_VIF;
	v->ep.ptr = v;
	ep_add(s, fd, &v->ep, EPOLLIN | EPOLLRDHUP);
	s->ifs[s->n_ifs++] = v;
	s->n_live++;
	ST(s, ATTACHED)++;
	VNI_LOG(INFO, "%u:%u (pid %d) attached: pool %" PRIu64 " B, %u send, %u receive contexts, "
		"short messages up to %u B", v->app, v->proc, v->pid, v->pool_size, v->n_send,
		v->n_recv, v->short_max);
}

static void
sock_accept(struct trd_vnis *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct vconn *c = NULL;

		if (fd < 0)
			return;
		for (unsigned int i = 0; i < VNIS_N_CONNS; i++)
			if (!s->conns[i].used) {
				c = &s->conns[i];
				break;
			}
		if (c == NULL) {
			answer(fd, -EBUSY, 0, "too many registrations at once", NULL);
			close(fd);
			continue;
		}
		c->used = true;
		c->fd = fd;
		c->deadline = s->now + VNIS_REGISTER_TIMEOUT_US;
		c->ep.kind = EP_CONN;
		c->ep.ptr = c;
		ep_add(s, fd, &c->ep, EPOLLIN | EPOLLRDHUP);
	}
}

static unsigned int
sock_events(struct trd_vnis *s, int timeout_ms)
{
	struct epoll_event ev[16];
	int n = epoll_wait(s->epfd, ev, 16, timeout_ms);

	for (int i = 0; i < n; i++) {
		struct ep_ref *r = ev[i].data.ptr;

		switch (r->kind) {
		case EP_LISTEN:
			sock_accept(s);
			break;
		case EP_KICK: {
			uint64_t cnt;

			if (read(s->kfd, &cnt, sizeof(cnt)) == sizeof(cnt))
				ST(s, KICKS) += cnt;
			break;
		}
		case EP_CONN:
			conn_register(s, r->ptr);
			break;
		case EP_VIF: {
			struct vif *v = r->ptr;
			char b[16];
			ssize_t k = recv(v->sock, b, sizeof(b), MSG_DONTWAIT);

			/* applications say nothing after registering: data or EOF means gone */
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR) ||
			    (ev[i].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)))
				vif_kill(s, v, k == 0 || (ev[i].events & (EPOLLHUP | EPOLLRDHUP))
						       ? "socket closed"
						       : "socket error");
			else if (k > 0)
				vif_kill(s, v, "unexpected data on the socket");
			break;
		}
		}
	}
	for (unsigned int i = 0; i < VNIS_N_CONNS; i++)
		if (s->conns[i].used && s->now > s->conns[i].deadline)
			conn_close(s, &s->conns[i]);
	return n > 0 ? (unsigned int)n : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the service */

int
trd_vnis_poll(struct trd_vnis *s)
{
	unsigned int work = 0;

	if (s == NULL)
		return -EINVAL;
	s->now = trd_time_us();
	if (s->now >= s->next_sock) {
		s->next_sock = s->now + VNIS_SOCK_PERIOD_US;
		work += sock_events(s, 0);
	}
	work += replies_flush(s);
	work += rx_protocol(s);
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead)
			work += vif_cmds(s, v);
	}
	if (s->now >= s->next_timer) {
		s->next_timer = s->now + VNIS_TIMER_PERIOD_US;
		work += timers(s);
	}
	work += schedule(s);
	vif_wake_all(s);
	return (int)work;
}

int
trd_vnis_fd(const struct trd_vnis *s)
{
	return s == NULL ? -EINVAL : s->epfd;
}

int
trd_vnis_sleep_begin(struct trd_vnis *s)
{
	bool busy;

	if (s == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (!s->ifs[i]->dead)
			__atomic_store_n(&s->ifs[i]->seg->engine_idle, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* timers, queued replies and injection keep the engine awake; so does a command that
	 * came before the flag was seen */
	busy = !TAILQ_EMPTY(&s->rr) || s->n_preps != 0 || !TAILQ_EMPTY(&s->lists[L_TIMER]) ||
	       !TAILQ_EMPTY(&s->lists[L_DRAIN]);
	for (unsigned int i = 0; i < s->n_ifs && !busy; i++) {
		struct vif *v = s->ifs[i];

		if (!v->dead && !v->broken && cmdq_pending(v))
			busy = true;
	}
	if (busy) {
		trd_vnis_sleep_end(s);
		return -EBUSY;
	}
	return 0;
}

void
trd_vnis_sleep_end(struct trd_vnis *s)
{
	if (s == NULL)
		return;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (!s->ifs[i]->dead)
			__atomic_store_n(&s->ifs[i]->seg->engine_idle, 0, __ATOMIC_RELAXED);
}

int
trd_vnis_stats_get(const struct trd_vnis *s, uint64_t out[TRD_VNIS_STAT_MAX])
{
	if (s == NULL || out == NULL)
		return -EINVAL;
	memcpy(out, s->stat, sizeof(s->stat));
	return 0;
}

const char *
trd_vnis_stat_name(unsigned int stat)
{
	return stat < TRD_VNIS_STAT_MAX ? vnis_stat_names[stat] : NULL;
}

unsigned int
trd_vnis_n_ifs(const struct trd_vnis *s)
{
	return s == NULL ? 0 : s->n_ifs;
}

int
trd_vnis_if_get(const struct trd_vnis *s, unsigned int i, struct trd_vnis_if_info *out)
{
	const struct vif *v;

	if (s == NULL || out == NULL || i >= s->n_ifs)
		return -EINVAL;
	v = s->ifs[i];
	memset(out, 0, sizeof(*out));
	out->app = v->app;
	out->proc = v->proc;
	out->pid = v->pid;
	out->dead = v->dead;
	out->pool_size = v->pool_size;
	out->tx_msgs = v->tx_msgs;
	out->tx_pkts = v->tx_pkts;
	out->tx_pkts_shared = v->tx_pkts_shared;
	out->tx_bytes = v->tx_bytes;
	out->rx_msgs = v->rx_msgs;
	out->rx_bytes = v->rx_bytes;
	out->naks = v->naks;
	out->staged_bytes = v->staged;
	return 0;
}

struct trd_node *
trd_vnis_node(const struct trd_vnis *s)
{
	return s == NULL ? NULL : s->node;
}

/* Is a live engine serving @p path? */
static bool
sock_live(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return live;
}

struct trd_vnis *
trd_vnis_create(const struct trd_vnis_conf *conf)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct trd_vnis *s;
	int rc = EINVAL, rank;
	mode_t mask;

	if (conf == NULL || conf->node == NULL || conf->topo == NULL || conf->socket == NULL ||
	    strlen(conf->socket) >= sizeof(sa.sun_path) || conf->max_ifs > VNIS_MAX_IFS) {
		rte_errno = EINVAL;
		return NULL;
	}
	rank = trd_torus_rank(&conf->topo->torus, trd_node_coord(conf->node));
	if (rank < 0 || memcmp(trd_node_torus(conf->node), &conf->topo->torus,
			       sizeof(conf->topo->torus)) != 0) {
		VNI_LOG(ERR, "the node's torus is not the topology's");
		rte_errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->lfd = s->kfd = s->epfd = -1;
	s->conf = *conf;
	if (s->conf.socket_mode == 0)
		s->conf.socket_mode = 0660;
	if (s->conf.max_ifs == 0)
		s->conf.max_ifs = 64;
	if (s->conf.max_pool == 0)
		s->conf.max_pool = 1ULL << 30;
	if (s->conf.staging == 0)
		s->conf.staging = 64u << 20;
	if (s->conf.inline_max == 0)
		s->conf.inline_max = 256;
	if (s->conf.rep_fifo == 0 && s->conf.req_fifo == 0)
		s->conf.rep_fifo = 1;
	if (s->conf.backlog == 0)
		s->conf.backlog = 256;
	if (s->conf.retry_us == 0)
		s->conf.retry_us = 100;
	if (s->conf.noproc_ms == 0)
		s->conf.noproc_ms = 3000;
	if (s->conf.inline_max < TRD_VW_HDR_LEN || s->conf.inline_max > 960 ||
	    s->conf.n_owners > 1024 || (s->conf.n_owners != 0 && conf->owners == NULL))
		goto fail;
	if (s->conf.n_owners != 0) {
		s->owners = calloc(s->conf.n_owners, sizeof(*s->owners));
		if (s->owners == NULL) {
			rc = ENOMEM;
			goto fail;
		}
		for (unsigned int i = 0; i < s->conf.n_owners; i++) {
			s->owners[i] = conf->owners[i];
			if ((s->owners[i].uid < 0 && s->owners[i].gid < 0) ||
			    s->owners[i].uid > UINT32_MAX || s->owners[i].gid > UINT32_MAX)
				goto fail;
		}
	}
	s->conf.owners = NULL; /* the copy is used */
	s->node = conf->node;
	s->topo = conf->topo;
	s->coord = trd_node_coord(conf->node);
	s->rank = (uint32_t)rank;
	s->req = trd_inj_fifo(s->node, s->conf.req_fifo);
	s->rep = trd_inj_fifo(s->node, s->conf.rep_fifo);
	s->rf = trd_rec_fifo(s->node, s->conf.rec_fifo);
	if (s->req == NULL || s->rep == NULL || s->rf == NULL || s->req == s->rep) {
		VNI_LOG(ERR, "the node lacks injection FIFOs %u, %u or reception FIFO %u",
			s->conf.req_fifo, s->conf.rep_fifo, s->conf.rec_fifo);
		goto fail;
	}
	s->req_free0 = trd_fifo_free_count(s->req);
	s->chunk = 0;
	for (unsigned int i = 0; i < trd_node_n_links(s->node); i++) {
		unsigned int p = trd_link_max_payload(trd_node_link(s->node, i));

		if (p != 0 && (s->chunk == 0 || p < s->chunk))
			s->chunk = p;
	}
	if (s->chunk == 0)
		s->chunk = 1500 - TRD_HDR_LEN;
	/* NICs on a real bus DMA from application segments (zero-copy): note them */
	for (unsigned int i = 0; i < trd_node_n_links(s->node) && s->n_dma_dev < RTE_DIM(s->dma_dev);
	     i++) {
		int port = trd_link_port(trd_node_link(s->node, i));
		struct rte_eth_dev_info info;
		const struct rte_bus *bus;

		if (port < 0 || rte_eth_dev_info_get((uint16_t)port, &info) != 0 ||
		    info.device == NULL)
			continue;
		bus = rte_dev_bus(info.device);
		if (bus == NULL || strcmp(rte_bus_name(bus), "vdev") == 0)
			continue;
		s->dma_dev[s->n_dma_dev++] = info.device;
	}
	TAILQ_INIT(&s->rr);
	for (unsigned int i = 0; i < RTE_DIM(s->lists); i++)
		TAILQ_INIT(&s->lists[i]);
	TAILQ_INIT(&s->rx_active);

	rc = ENOMEM;
	s->ifs = calloc(s->conf.max_ifs, sizeof(*s->ifs));
	s->tx = calloc(VNIS_N_TX, sizeof(*s->tx));
	s->tx_free = calloc(VNIS_N_TX, sizeof(*s->tx_free));
	s->rx = calloc(VNIS_N_RX, sizeof(*s->rx));
	s->rx_free = calloc(VNIS_N_RX, sizeof(*s->rx_free));
	if (s->ifs == NULL || s->tx == NULL || s->tx_free == NULL || s->rx == NULL ||
	    s->rx_free == NULL)
		goto fail;
	/* index 0 is never used, so no id is 0 (0 means "no grant") */
	for (uint32_t i = VNIS_N_TX - 1; i >= 1; i--) {
		s->tx[i].idx = i;
		s->tx_free[s->n_tx_free++] = i;
	}
	for (uint32_t i = VNIS_N_RX - 1; i >= 1; i--) {
		s->rx[i].idx = i;
		s->rx[i].gen = 1;
		s->rx_free[s->n_rx_free++] = i;
	}
	s->stage_size = RTE_ALIGN_CEIL(s->conf.staging, 4096);
	s->stage_mem = mmap(NULL, s->stage_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->stage_mem == MAP_FAILED) {
		s->stage_mem = NULL;
		goto fail;
	}
	if (trd_vni_heap_init(&s->stage, s->stage_size) != 0)
		goto fail;
	ST(s, STAGING_MAX) = s->stage.size;
	s->stage_mr = trd_mr_register(s->node, s->stage_mem, s->stage_size,
				      TRD_ACCESS_REMOTE_WRITE);
	if (s->stage_mr == NULL) {
		rc = rte_errno;
		goto fail;
	}

	/* the socket: refuse to steal a live engine's, replace a stale one */
	if (sock_live(conf->socket)) {
		VNI_LOG(ERR, "%s: another engine serves this socket", conf->socket);
		rc = EADDRINUSE;
		goto fail;
	}
	unlink(conf->socket);
	snprintf(s->path, sizeof(s->path), "%s", conf->socket);
	memcpy(sa.sun_path, s->path, sizeof(s->path));
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		rc = errno;
		goto fail;
	}
	mask = umask(0077);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = errno;
		umask(mask);
		VNI_LOG(ERR, "%s: cannot bind: %s", conf->socket, strerror(rc));
		s->path[0] = '\0';
		goto fail;
	}
	umask(mask);
	if (chmod(s->path, s->conf.socket_mode) != 0 || listen(s->lfd, 64) != 0) {
		rc = errno;
		goto fail;
	}
	s->kfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->kfd < 0 || s->epfd < 0) {
		rc = errno;
		goto fail;
	}
	s->lref.kind = EP_LISTEN;
	s->kref.kind = EP_KICK;
	if (ep_add(s, s->lfd, &s->lref, EPOLLIN) != 0 || ep_add(s, s->kfd, &s->kref, EPOLLIN) != 0) {
		rc = errno;
		goto fail;
	}
	VNI_LOG(INFO, "%s serves node %s (%u,%u,%u): staging %zu B, %u B per packet", s->path,
		trd_node_name(s->node), s->coord.x, s->coord.y, s->coord.z, s->stage_size,
		s->chunk);
	return s;

fail:
	trd_vnis_free(s);
	rte_errno = rc;
	return NULL;
}

void
trd_vnis_free(struct trd_vnis *s)
{
	if (s == NULL)
		return;
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		struct vif *v = s->ifs[i];
		const uint64_t one = 1;

		if (!v->dead) {
			v->seg->engine_status = -ECANCELED;
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (write(v->efd, &one, sizeof(one)) < 0) {
				/* saturated: the application wakes anyway */
			}
			close(v->sock);
		}
		vif_unmap(s, v);
	}
	for (unsigned int i = 0; i < VNIS_N_CONNS; i++)
		if (s->conns[i].used)
			close(s->conns[i].fd);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->path[0] != '\0')
		unlink(s->path);
	if (s->kfd >= 0)
		close(s->kfd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->stage_mr != NULL)
		trd_mr_deregister(s->stage_mr);
	if (s->stage_mem != NULL)
		munmap(s->stage_mem, s->stage_size);
	trd_vni_heap_fini(&s->stage);
	free(s->preps);
	free(s->owners);
	free(s->ifs);
	free(s->tx);
	free(s->tx_free);
	free(s->rx);
	free(s->rx_free);
	free(s);
}
