/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: one-sided access to application memory (docs/vni.md, "One-sided access to
 * application memory"). A process registers regions of its own memory (anywhere, not only the
 * pool) over its socket; the engine reaches them through the /proc/self/mem descriptor the
 * process passed at attach, each access checked against its mappings (vmem.c). Writes, reads
 * and atomics are vtx's (tx.c's table, timers and scheduler turns) with their own steps:
 *   origin engine: WRITE chunks (the origin buffer read as each chunk is built), READ
 *   requests, one ATOMIC; at most SVC_RMA_WINDOW chunks of one op in flight;
 *   target engine: every request checked (key of the destination process, access bit, range
 *   with overflow-safe arithmetic, alignment) before any access, then the memory written or
 *   read, and one reply per request (WRITE_ACK, READ_RESP with the bytes, ATOMIC_RESP with
 *   the old value).
 * A request for a process that is not attached is refused with -ECONNREFUSED and asked again
 * (back-off) until the service's noproc_ms, like a send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_random.h>

#include "iface_pvt.h"
#include "mu_pvt.h"
#include "proto_pvt.h"
#include "rma_pvt.h"
#include "tx_pvt.h"
#include "vmem_pvt.h"

#define SVC_RMA_WINDOW   64           /* chunks of one write or read in flight */
#define SVC_RMA_SLICE    (256u << 10) /* bytes a write or read within the node moves per turn */
#define SVC_ATOM_TRIES   20           /* an atomic is asked this often before -ETIMEDOUT */
#define SVC_ATOM_ORIGINS 256          /* origin nodes a target remembers atomics of (rma.c) */
#define SVC_ATOM_KEEP_US                                                                           \
	15000000 /* an atomic is remembered this long: longer than an origin                       \
		  * asks (SVC_ATOM_TRIES x rma_stall_us, at most SVC_RMA_STALL_US) */
#define SVC_ATOM_WINDOW                                                                            \
	4096               /* atomic sequence numbers an origin has open towards one target        \
			    * node, and the slots a target remembers per origin (rma.c) */
#define SVC_ATOM_RETIRED 4 /* incarnations of an origin engine a target remembers as gone */

/* An atomic served for a process of this node. The origin engine numbers its atomics towards
 * each target node (seq, carried in the ATOMIC's grant_id; its incarnation, a random 64-bit id
 * drawn when the engine starts, in tag) and opens seq S only once every seq up to
 * S - SVC_ATOM_WINDOW has ended; the target remembers each in slot S % SVC_ATOM_WINDOW of the
 * origin's table. A request whose seq is the slot's is a repeat (its answer was lost) and is
 * answered from memory; one older than the slot's is a late duplicate of an op that ended and
 * is dropped; a newer one is new (the slot's op ended at the origin) (rma.c). */
struct vatom {
	uint64_t stamp; /* when it was served (0: never) */
	uint64_t old;
	uint32_t key;
	uint32_t seq;
	int32_t status;
};

/* What a target remembers of one origin node's atomics. */
struct vatab {
	uint64_t inc; /* the origin engine's incarnation the slots belong to */
	struct {
		uint64_t inc, stamp;
	} retired[SVC_ATOM_RETIRED]; /* incarnations replaced: their requests are duplicates */
	struct vatom slot[SVC_ATOM_WINDOW];
};

/* An origin's open atomic sequence numbers towards one target node: [low, next), those still
 * in flight marked in bits (by seq % SVC_ATOM_WINDOW). */
struct vaseq {
	uint32_t next, low;
	uint64_t bits[SVC_ATOM_WINDOW / 64];
};

#define MR_ACCESS_ALL (TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE | TRD_VNI_MR_OFFSET)
#define RMA_LEN_MAX   (1u << 30)

/* ------------------------------------------------------------------------------------------ */
/* atomics applied at most once: the origin's sequence numbers */

void
svc_rma_init(struct trd_vni_svc *s)
{
	uint64_t inc = 0;

	/* a restarted engine must not be taken for the one before it: 64 random bits */
	while (inc == 0)
		if (getrandom(&inc, sizeof(inc), GRND_NONBLOCK) != (ssize_t)sizeof(inc))
			inc = rte_rand();
	s->inc = inc;
}

/* The open sequence numbers towards node @p rank, allocated at the first atomic to it. */
static struct vaseq *
aseq_of(struct trd_vni_svc *s, uint32_t rank)
{
	if (s->aseqs == NULL) {
		s->aseqs = calloc(s->topo->n_nodes, sizeof(*s->aseqs));
		if (s->aseqs == NULL)
			return NULL;
	}
	if (s->aseqs[rank] == NULL)
		s->aseqs[rank] = calloc(1, sizeof(struct vaseq));
	return s->aseqs[rank];
}

/* May an atomic towards node @p rank start now? Not if the target could not tell it from an op
 * still in flight (its window is full: -EAGAIN), or with no memory (-ENOMEM). */
static bool
atom_can_open(struct trd_vni_svc *s, uint32_t rank, int *err)
{
	struct vaseq *q = aseq_of(s, rank);

	if (q != NULL && q->next - q->low < SVC_ATOM_WINDOW)
		return true;
	*err = q == NULL ? -ENOMEM : -EAGAIN;
	return false;
}

/* Atomic @p t takes the next sequence number towards its node (atom_can_open() said yes). */
static void
atom_open(struct trd_vni_svc *s, struct vtx *t)
{
	struct vaseq *q = s->aseqs[t->dst_rank];
	uint32_t i = q->next % SVC_ATOM_WINDOW;

	t->aseq = q->next++;
	t->aseq_held = true;
	q->bits[i / 64] |= 1ull << (i % 64);
}

/* Atomic @p t ended (freed): its number is closed; the window's low edge moves past every
 * closed number. */
void
svc_atom_close(struct trd_vni_svc *s, struct vtx *t)
{
	struct vaseq *q = s->aseqs != NULL ? s->aseqs[t->dst_rank] : NULL;
	uint32_t i = t->aseq % SVC_ATOM_WINDOW;

	t->aseq_held = false;
	if (q == NULL)
		return; /* the service is going away */
	q->bits[i / 64] &= ~(1ull << (i % 64));
	while (q->low != q->next) {
		i = q->low % SVC_ATOM_WINDOW;
		if (q->bits[i / 64] & (1ull << (i % 64)))
			break;
		q->low++;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* memory regions */

static struct vmr *
mr_find(const struct vif *v, uint64_t key)
{
	if (v->mrs == NULL || key == 0)
		return NULL;
	for (unsigned int i = 0; i < SVC_N_MRS; i++)
		if (v->mrs[i].key == key)
			return &v->mrs[i];
	return NULL;
}

static uint64_t
mr_key(const struct vif *v)
{
	for (;;) {
		uint64_t k;

		if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k))
			k = rte_rand();
		if (k != 0 && mr_find(v, k) == NULL)
			return k;
	}
}

static int
mr_reg(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mr *req, uint64_t *key)
{
	struct vmr *m = NULL;
	int rc;

	RTE_SET_USED(s);
	if (req->len == 0 || req->addr + req->len < req->addr || (req->access & ~MR_ACCESS_ALL) ||
	    !(req->access & (TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE)))
		return -EINVAL;
	if (req->key != 0 && mr_find(v, req->key) != NULL)
		return -EEXIST;
	if (v->mrs == NULL) {
		v->mrs = calloc(SVC_N_MRS, sizeof(*v->mrs));
		if (v->mrs == NULL)
			return -ENOMEM;
	}
	for (unsigned int i = 0; i < SVC_N_MRS; i++)
		if (v->mrs[i].key == 0) {
			m = &v->mrs[i];
			break;
		}
	if (m == NULL)
		return -ENOSPC;
	/* every byte mapped, readable, and writable if remote writes are allowed; and the
	 * address space the process attached with is still there */
	rc = svc_vmem_check(v, req->addr, req->len, (req->access & TRD_VNI_MR_REMOTE_WRITE) != 0);
	if (rc == 0 && !(req->access & TRD_VNI_MR_OFFSET) && req->addr > (uint64_t)INT64_MAX)
		rc = -EFAULT;
	if (rc == 0) {
		uint8_t probe;

		rc = svc_vmem_read(v, &probe, req->addr, 1);
	}
	if (rc != 0)
		return rc == -ECONNRESET ? -EPERM : rc;
	m->key = req->key != 0 ? req->key : mr_key(v);
	m->addr = req->addr;
	m->len = req->len;
	m->access = req->access;
	v->n_mrs++;
	*key = m->key;
	return 0;
}

/* Interface @p v died: its regions, no access from now on. */
void
svc_mr_vif_gone(struct vif *v)
{
	v->n_mrs = 0;
	if (v->mrs != NULL)
		memset(v->mrs, 0, SVC_N_MRS * sizeof(v->mrs[0]));
}

/* A region request from the process's socket: answered at once. */
void
svc_mr_request(struct trd_vni_svc *s, struct vif *v, const struct trd_vni_sock_mr *req)
{
	struct trd_vni_sock_mr_answer ans = {.op = TRD_VNI_SOCK_MR_ANSWER};
	struct vmr *m;

	if (req->op == TRD_VNI_SOCK_MR_REG && (req->access & TRD_VNI_MR_MU)) {
		ans.status = svc_mu_mr_reg(s, v, req->addr, req->len, req->access, &ans.key);
		if (ans.status == 0)
			ST(s, MR_REGS)++;
		else
			ST(s, MR_REFUSED)++;
	} else if (req->op == TRD_VNI_SOCK_MR_REG) {
		ans.status = mr_reg(s, v, req, &ans.key);
		if (ans.status == 0)
			ST(s, MR_REGS)++;
		else
			ST(s, MR_REFUSED)++;
	} else {
		m = mr_find(v, req->key);
		if (m == NULL && svc_mu_mr_dereg(v, req->key) == 0) {
			ST(s, MR_DEREGS)++;
		} else if (m == NULL) {
			ans.status = -ENOENT;
		} else {
			memset(m, 0, sizeof(*m));
			v->n_mrs--;
			ST(s, MR_DEREGS)++;
		}
	}
	if (send(v->sock, &ans, sizeof(ans), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(ans))
		VNI_LOG(WARNING, "%u:%u: region answer not sent", v->app, v->proc);
}

void
svc_mr_free(struct vif *v)
{
	free(v->mrs);
	v->mrs = NULL;
	v->n_mrs = 0;
}

/* Where [raddr, raddr + len) of region @p key of @p v is, if @p need access is granted.
 * @return 0 with *addr, or -EACCES. Overflow-safe: no sum is formed before it is bounded. */
static int
mr_check(const struct vif *v, uint64_t key, uint64_t raddr, uint64_t len, uint32_t need,
	 uint64_t *addr)
{
	const struct vmr *m = mr_find(v, key);
	uint64_t off;

	if (m == NULL || (m->access & need) != need)
		return -EACCES;
	if (m->access & TRD_VNI_MR_OFFSET) {
		off = raddr;
	} else {
		if (raddr < m->addr)
			return -EACCES;
		off = raddr - m->addr;
	}
	if (off > m->len || len > m->len - off)
		return -EACCES;
	*addr = m->addr + off;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the origin: commands and steps */

static bool
aop_ok(uint32_t op)
{
	return op >= TRD_VNI_AOP_SUM && op <= TRD_VNI_AOP_BXOR;
}

void
svc_cmd_rma(struct trd_vni_svc *s, struct vif *v, uint32_t idx, const struct trd_vni_actx *c)
{
	uint32_t kind = c->flags & (TRD_VNI_SF_WRITE | TRD_VNI_SF_READ | TRD_VNI_SF_ATOMIC);
	uint8_t cpl = kind == TRD_VNI_SF_WRITE  ? TRD_VNI_CPL_WRITE
		      : kind == TRD_VNI_SF_READ ? TRD_VNI_CPL_READ
						: TRD_VNI_CPL_ATOMIC;
	int rank = trd_topo_find_proc(s->topo, c->dst_app, c->dst_proc);
	struct vtx *t = NULL;
	int err = 0;

	ST(s, RMA_OPS)++;
	if ((c->flags & ~(kind | TRD_VNI_F_DOORBELL)) ||
	    (kind != TRD_VNI_SF_WRITE && kind != TRD_VNI_SF_READ && kind != TRD_VNI_SF_ATOMIC) ||
	    ((c->flags & TRD_VNI_F_DOORBELL) && c->doorbell >= v->n_db) ||
	    (kind == TRD_VNI_SF_ATOMIC && ((c->len != 4 && c->len != 8) || !aop_ok(c->aop))) ||
	    (kind != TRD_VNI_SF_ATOMIC && (c->len > RMA_LEN_MAX || c->laddr + c->len < c->laddr))) {
		ST(s, BAD_CMDS)++;
		err = -EINVAL;
	} else if (rank < 0) {
		err = -ECONNREFUSED;
	} else if (kind == TRD_VNI_SF_ATOMIC && !atom_can_open(s, (uint32_t)rank, &err)) {
		if (err == -EAGAIN)
			ST(s, RMA_BACKPRESSURE)++; /* its window towards that node is full */
	} else if ((t = svc_tx_alloc(s, v)) == NULL) {
		err = -ENOBUFS;
	}
	if (err != 0) {
		struct vtx tmp = {.vif = v,
				  .ctx = idx,
				  .status = err,
				  .rma = cpl,
				  .sflags = c->flags & TRD_VNI_F_DOORBELL,
				  .doorbell = c->doorbell,
				  .dst_app = c->dst_app,
				  .dst_proc = c->dst_proc};

		if (err == -EINVAL && (c->flags & TRD_VNI_F_DOORBELL) && c->doorbell >= v->n_db)
			tmp.sflags = 0;
		svc_tx_cqe(s, &tmp);
		return;
	}
	t->rma = cpl;
	t->ctx = idx;
	t->sflags = c->flags & TRD_VNI_F_DOORBELL;
	t->doorbell = c->doorbell;
	t->dst_app = c->dst_app;
	t->dst_proc = c->dst_proc;
	t->dst_rank = (uint32_t)rank;
	t->dst = s->topo->nodes[rank].coord;
	t->len = c->len;
	t->laddr = c->laddr;
	t->rkey = c->rkey;
	t->roff = c->raddr;
	t->aop = c->aop;
	t->operand = c->operand;
	t->compare = c->compare;
	t->noproc_deadline = s->now + (uint64_t)s->conf.noproc_ms * 1000;
	t->heard = s->now;
	if (kind == TRD_VNI_SF_ATOMIC)
		atom_open(s, t);
	svc_tx_set_state(s, t, TX_REQ);
}

static void
rma_hdr(const struct vtx *t, uint8_t type, uint32_t len, uint64_t roff, struct trd_vw_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->src_app = t->vif->app;
	h->src_proc = t->vif->proc;
	h->dst_app = t->dst_app;
	h->dst_proc = t->dst_proc;
	h->msg_id = svc_tx_id(t);
	h->key = t->key;
	h->len = len;
	h->rkey = t->rkey;
	h->roff = roff;
	/* the whole op, checked by the target at every chunk: nothing of an op that does not
	 * fit is written */
	h->tag = t->len;
	h->grant_id = (uint32_t)(roff - t->roff);
}

/* The bytes of the chunk that starts at @p off. */
static uint32_t
chunk_len(const struct trd_vni_svc *s, const struct vtx *t, uint32_t off)
{
	return RTE_MIN(s->rma_chunk, t->len - off);
}

/* Every chunk sent (a 0-byte op sends one)? */
static bool
all_sent(const struct vtx *t)
{
	return t->off == t->len && t->rts_sent;
}

static void rma_settle(struct trd_vni_svc *s, struct vtx *t);

/* A write or read between two processes of this node, nothing of it on the wire yet: the
 * engine copies between them itself, SVC_RMA_SLICE bytes through rma_buf (two process_vm
 * copies) in one poll round at most, whatever the ops (the round's other work and the other
 * interfaces wait for it), with the target's checks of svc_rma_serve (key, access, range,
 * the whole write writable) at every slice. 1 when the target is not attached (the chunks
 * ask, are refused and ask again, as to another node); else tx_step's contract. */
static int
rma_local(struct trd_vni_svc *s, struct vtx *t)
{
	bool wr = t->rma == TRD_VNI_CPL_WRITE;
	uint32_t n = RTE_MIN(SVC_RMA_SLICE, t->len - t->off);
	struct vif *v = svc_vif_find(s, t->dst_app, t->dst_proc);
	uint64_t addr = 0;
	int st, rc = 0;

	if (v == NULL || v->mem_gone)
		return 1;
	if (s->rma_local_round == s->round)
		return -EAGAIN; /* this round copied its slice: the next one (which has work) */
	if (s->rma_buf == NULL && (s->rma_buf = malloc(SVC_RMA_SLICE)) == NULL)
		return 1;
	st = mr_check(v, t->rkey, t->roff, t->len,
		      wr ? TRD_VNI_MR_REMOTE_WRITE : TRD_VNI_MR_REMOTE_READ, &addr);
	if (st == 0 && wr && t->off == 0)
		st = svc_vmem_check(v, addr, t->len, true);
	if (st != 0) {
		ST(s, RMA_DENIED)++;
	} else if (n == 0) {
		/* nothing to copy: neither memory is touched (as on the wire) */
	} else if (wr) {
		rc = svc_vmem_read(t->vif, s->rma_buf, t->laddr + t->off, n);
		if (rc == 0)
			st = svc_vmem_write(v, s->rma_buf, addr + t->off, n);
	} else {
		st = svc_vmem_read(v, s->rma_buf, addr + t->off, n);
		if (st == 0)
			rc = svc_vmem_write(t->vif, s->rma_buf, t->laddr + t->off, n);
	}
	if (st == -ECONNRESET)
		v->mem_gone = true;
	if (st != 0 && st != -EACCES)
		ST(s, RMA_FAULTS)++;
	if (rc != 0 && rc != -ECONNRESET)
		rc = -EFAULT; /* the origin's own buffer */
	if (st != 0 || rc != 0) {
		svc_tx_finish(s, t, st != 0 ? st : rc);
		return 0;
	}
	ST(s, RMA_SERVED)++;
	ST(s, RMA_BYTES) += n;
	if (n != 0)
		s->rma_local_round = s->round;
	t->off += n;
	t->acked = t->off;
	t->heard = s->now;
	if (t->off == t->len)
		svc_tx_finish(s, t, 0);
	else if (t->state == TX_REQ)
		svc_tx_set_state(s, t, TX_DATA);
	return 0;
}

/* One packet for one-sided op @p t (tx_step's contract: 0, -ENOBUFS, -EAGAIN). */
int
svc_rma_step(struct trd_vni_svc *s, struct vtx *t)
{
	struct trd_payload *pay = NULL;
	struct trd_vw_hdr h;
	uint32_t n;
	int rc;

	if (t->state != TX_REQ && t->state != TX_DATA)
		return -EAGAIN;
	if (t->status != 0 || t->refused) {
		/* a chunk was refused: send no more; settle once every answer is in */
		svc_tx_set_state(s, t, TX_WAIT);
		if (t->inflight == 0)
			rma_settle(s, t);
		return -EAGAIN;
	}
	if (t->dst_rank == s->rank && !s->conf.rma_wire && t->rma != TRD_VNI_CPL_ATOMIC &&
	    t->inflight == 0 && t->acked == t->off && (rc = rma_local(s, t)) <= 0)
		return rc;
	if (t->rma == TRD_VNI_CPL_ATOMIC) {
		uint8_t a[TRD_VW_ATOMIC_LEN];
		struct trd_vw_atomic op = {
			.op = t->aop, .size = t->len, .operand = t->operand, .compare = t->compare};

		rma_hdr(t, TRD_VW_ATOMIC, t->len, t->roff, &h);
		h.tag = s->inc;       /* which engine's atomic ... */
		h.grant_id = t->aseq; /* ... and which of its atomics towards this node */
		trd_vw_atomic_encode(a, &op);
		rc = svc_vw_inject(s, s->req, t->dst, &h, a, sizeof(a));
		if (rc == 0) {
			t->rts_sent = true;
			t->inflight = 1;
			t->tries++;
		}
	} else {
		n = chunk_len(s, t, t->off);
		rma_hdr(t, t->rma == TRD_VNI_CPL_WRITE ? TRD_VW_WRITE : TRD_VW_READ, n,
			t->roff + t->off, &h);
		if (t->rma == TRD_VNI_CPL_WRITE && n != 0) {
			uint8_t buf[2048];

			rc = svc_vmem_read(t->vif, buf, t->laddr + t->off, n);
			if (rc != 0) {
				/* the origin buffer is not readable: nothing more is sent */
				t->status = rc == -ECONNRESET ? -ECONNRESET : -EFAULT;
				t->off = t->len;
				t->rts_sent = true;
				if (t->inflight == 0)
					svc_tx_finish(s, t, t->status);
				else
					svc_tx_set_state(s, t, TX_WAIT);
				return 0;
			}
			rc = trd_payload_new(s->node, buf, n, &pay);
			if (rc == -ENOBUFS)
				return -EAGAIN; /* no mbuf now: another turn */
			if (rc == 0) {
				rc = svc_vw_inject_shared(s, s->req, t->dst, &h, pay);
				trd_payload_free(pay);
			}
		} else {
			rc = svc_vw_inject(s, s->req, t->dst, &h, NULL, 0);
		}
		if (rc == 0) {
			t->off += n;
			t->rts_sent = true;
			t->inflight++;
		}
	}
	if (rc == -ENOBUFS)
		return -ENOBUFS;
	if (rc != 0) {
		/* no route, peer down, a bad descriptor: the op fails once nothing is in flight */
		t->status = rc == -EHOSTUNREACH ? -EHOSTUNREACH : rc;
		t->off = t->len;
		t->rts_sent = true;
		if (t->inflight == 0)
			svc_tx_finish(s, t, t->status);
		else
			svc_tx_set_state(s, t, TX_WAIT);
		return 0;
	}
	svc_tx_count_pkt(s, t);
	ST(s, RMA_PKTS)++;
	t->heard = s->now;
	if (t->rma == TRD_VNI_CPL_ATOMIC || all_sent(t) || t->inflight >= SVC_RMA_WINDOW)
		svc_tx_set_state(s, t, TX_WAIT);
	else if (t->state == TX_REQ)
		svc_tx_set_state(s, t, TX_DATA);
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the origin: replies */

static bool
rma_status_ok(int32_t st)
{
	return st == 0 || st == -EACCES || st == -ECONNREFUSED || st == -ECONNRESET ||
	       st == -EFAULT || st == -EPERM || st == -ENOMEM;
}

/* Nothing in flight any more: finish, ask again after a refusal, or go on. */
static void
rma_settle(struct trd_vni_svc *s, struct vtx *t)
{
	if (t->inflight != 0) {
		if (t->state == TX_WAIT && !t->refused && t->status == 0 && !all_sent(t) &&
		    t->inflight < SVC_RMA_WINDOW)
			svc_tx_set_state(s, t, TX_DATA);
		return;
	}
	if (t->status != 0) {
		svc_tx_finish(s, t, t->status);
		return;
	}
	if (t->refused) {
		t->refused = false;
		if (s->now >= t->noproc_deadline) {
			svc_tx_finish(s, t, -ECONNREFUSED);
			return;
		}
		/* ask again from the first byte not acknowledged, after a back-off */
		t->off = t->acked;
		t->rts_sent = t->acked != 0;
		t->due = s->now + t->backoff;
		if (t->backoff < 64 * s->conf.retry_us)
			t->backoff *= 2;
		svc_tx_set_state(s, t, TX_BACKOFF);
		return;
	}
	if (t->rma == TRD_VNI_CPL_ATOMIC || (all_sent(t) && t->acked == t->len)) {
		svc_tx_finish(s, t, 0);
		return;
	}
	if (all_sent(t))
		t->off = t->acked; /* an answer out of order was not counted: ask again */
	if (t->state == TX_WAIT)
		svc_tx_set_state(s, t, TX_DATA);
}

/* A WRITE_ACK, READ_RESP or ATOMIC_RESP from node @p src_rank. It counts only if it names a
 * live one-sided op of ours of its kind, from the node and process the op targets, echoing the
 * op's key, with a status the protocol defines; otherwise dropped and counted (bad_replies). */
void
svc_rma_reply(struct trd_vni_svc *s, uint32_t src_rank, const struct trd_vw_hdr *h,
	      const uint8_t *data)
{
	struct vtx *t = svc_tx_lookup(s, h->msg_id);
	uint8_t want;

	want = h->type == TRD_VW_WRITE_ACK   ? TRD_VNI_CPL_WRITE
	       : h->type == TRD_VW_READ_RESP ? TRD_VNI_CPL_READ
					     : TRD_VNI_CPL_ATOMIC;
	if (t == NULL || t->rma != want || t->key != h->key || t->dst_rank != src_rank ||
	    h->src_app != t->dst_app || h->src_proc != t->dst_proc || h->dst_app != t->vif->app ||
	    h->dst_proc != t->vif->proc || !rma_status_ok(h->status) || t->inflight == 0 ||
	    (t->state != TX_WAIT && t->state != TX_DATA) ||
	    (h->type == TRD_VW_READ_RESP && h->status != 0 && h->len != 0)) {
		ST(s, BAD_REPLIES)++;
		return;
	}
	t->inflight--;
	t->heard = s->now;
	if (h->status == -ECONNREFUSED) {
		t->refused = true;
	} else if (h->status != 0) {
		if (t->status == 0)
			t->status = h->status;
	} else if (t->rma == TRD_VNI_CPL_ATOMIC) {
		t->old = h->data;
		if (h->len != t->len || h->roff != t->roff) {
			ST(s, BAD_REPLIES)++;
			t->inflight++;
			return;
		}
	} else if (!t->refused && t->status == 0 && h->roff - t->roff == t->acked &&
		   t->acked < t->len + (t->len == 0) && h->len == chunk_len(s, t, t->acked)) {
		/* the next chunk in order (frames between two nodes arrive in order; a chunk
		 * answered after a refusal is asked again) */
		if (t->rma == TRD_VNI_CPL_READ) {
			int rc = svc_vmem_write(t->vif, data, t->laddr + t->acked, h->len);

			if (rc != 0)
				t->status = rc;
		}
		t->acked += h->len;
	}
	rma_settle(s, t);
}

/* An op waiting for answers heard nothing for rma_stall_us (the sweep): a request or its
 * answer was lost (a full reception FIFO drops frames). Writes and reads are asked again from
 * the first byte not answered in order (both are idempotent; a late answer is either the next
 * chunk in order, and counts, or dropped); an atomic cannot be applied twice: -ETIMEDOUT. */
void
svc_rma_stall(struct trd_vni_svc *s, struct vtx *t)
{
	if (t->rma == 0 || t->inflight == 0 || t->state != TX_WAIT ||
	    s->now - t->heard < s->conf.rma_stall_us)
		return;
	ST(s, RETRIES)++;
	if (t->status != 0 || (t->rma == TRD_VNI_CPL_ATOMIC && t->tries >= SVC_ATOM_TRIES)) {
		svc_tx_finish(s, t, t->status != 0 ? t->status : -ETIMEDOUT);
		return;
	}
	/* an atomic is asked again: the target answers a repeat from what it remembers of the
	 * op (same message id and key), without applying it twice */
	t->inflight = 0;
	t->refused = false;
	t->off = t->acked;
	t->rts_sent = t->acked != 0;
	t->heard = s->now;
	svc_tx_set_state(s, t, TX_DATA);
}

/* ------------------------------------------------------------------------------------------ */
/* the target */

static uint64_t
aop_apply(uint32_t op, uint64_t old, uint64_t operand, uint64_t compare, uint64_t mask, bool *write)
{
	*write = true;
	switch (op) {
	case TRD_VNI_AOP_SUM:
		return (old + operand) & mask;
	case TRD_VNI_AOP_SWAP:
		return operand & mask;
	case TRD_VNI_AOP_CSWAP:
		if (old == (compare & mask))
			return operand & mask;
		break;
	case TRD_VNI_AOP_MIN:
		if ((operand & mask) < old)
			return operand & mask;
		break;
	case TRD_VNI_AOP_MAX:
		if ((operand & mask) > old)
			return operand & mask;
		break;
	case TRD_VNI_AOP_BOR:
		return (old | operand) & mask;
	case TRD_VNI_AOP_BAND:
		return old & operand & mask;
	case TRD_VNI_AOP_BXOR:
		return (old ^ operand) & mask;
	default:
		break;
	}
	*write = false;
	return old;
}

/* The answer to one-sided request @p req: the VNI's answer header with the chunk's address
 * (roff) instead of the grant and tag, and no bytes after a failed READ. */
static void
rep_hdr(struct trd_vw_hdr *r, uint8_t type, const struct trd_vw_hdr *req, int status)
{
	svc_rep_hdr(r, type, req, status);
	r->grant_id = 0;
	r->tag = 0;
	r->roff = req->roff;
	if (type == TRD_VW_READ_RESP && status != 0)
		r->len = 0;
}

void
svc_rma_fini(struct trd_vni_svc *s)
{
	free(s->rma_buf);
	s->rma_buf = NULL;
	if (s->aseqs != NULL) {
		for (unsigned int i = 0; i < s->topo->n_nodes; i++)
			free(s->aseqs[i]);
		free(s->aseqs);
		s->aseqs = NULL;
	}
	if (s->atoms == NULL)
		return;
	for (unsigned int i = 0; i < s->topo->n_nodes; i++)
		free(s->atoms[i]);
	free(s->atoms);
	s->atoms = NULL;
	s->n_atom_tabs = 0;
}

/* What is remembered of the atomics of node @p src_rank, or NULL: -ENOMEM (no memory, or
 * SVC_ATOM_ORIGINS origins remembered already), -EPROTO (no such node). */
static struct vatab *
atom_tab(struct trd_vni_svc *s, uint32_t src_rank, int *err)
{
	*err = -EPROTO;
	if (src_rank >= s->topo->n_nodes)
		return NULL;
	*err = -ENOMEM;
	if (s->atoms == NULL) {
		s->atoms = calloc(s->topo->n_nodes, sizeof(*s->atoms));
		if (s->atoms == NULL)
			return NULL;
	}
	if (s->atoms[src_rank] == NULL) {
		if (s->n_atom_tabs >= SVC_ATOM_ORIGINS)
			return NULL;
		s->atoms[src_rank] = calloc(1, sizeof(struct vatab));
		if (s->atoms[src_rank] == NULL)
			return NULL;
		s->n_atom_tabs++;
	}
	return s->atoms[src_rank];
}

enum atom_verdict { ATOM_NEW, ATOM_REPEAT, ATOM_STALE };

/* Is atomic @p h of the origin whose table is @p tab one it was served (a repeat), a late
 * duplicate of an op that ended at its origin, or new? Sets *slot to where it is (to be)
 * remembered. A request of an incarnation the origin no longer is, is a duplicate; one of a new
 * incarnation (the origin engine restarted) starts an empty table. */
static enum atom_verdict
atom_judge(const struct trd_vni_svc *s, struct vatab *tab, const struct trd_vw_hdr *h,
	   struct vatom **slot)
{
	uint32_t seq = h->grant_id;
	struct vatom *m;

	*slot = NULL;
	if (h->tag != tab->inc) {
		unsigned int old = 0;

		for (unsigned int i = 0; i < SVC_ATOM_RETIRED; i++) {
			if (tab->retired[i].inc == h->tag && tab->retired[i].stamp != 0 &&
			    s->now - tab->retired[i].stamp < SVC_ATOM_KEEP_US)
				return ATOM_STALE;
			if (tab->retired[i].stamp < tab->retired[old].stamp)
				old = i;
		}
		if (tab->inc != 0) {
			tab->retired[old].inc = tab->inc;
			tab->retired[old].stamp = s->now != 0 ? s->now : 1;
		}
		tab->inc = h->tag;
		memset(tab->slot, 0, sizeof(tab->slot));
	}
	m = &tab->slot[seq % SVC_ATOM_WINDOW];
	*slot = m;
	if (m->stamp == 0 || s->now - m->stamp >= SVC_ATOM_KEEP_US)
		return ATOM_NEW; /* nothing remembered that could still be asked again */
	if (seq == m->seq)
		return m->key == h->key ? ATOM_REPEAT : ATOM_STALE;
	/* the origin opened the newer of the two only once the older had ended */
	return (int32_t)(seq - m->seq) > 0 ? ATOM_NEW : ATOM_STALE;
}

/* A WRITE, READ or ATOMIC for a process of this node: checked before any access, served, and
 * answered. */
void
svc_rma_serve(struct trd_vni_svc *s, uint32_t src_rank, struct trd_coord src,
	      const struct trd_vw_hdr *h, const uint8_t *data)
{
	uint8_t rtype = h->type == TRD_VW_WRITE  ? TRD_VW_WRITE_ACK
			: h->type == TRD_VW_READ ? TRD_VW_READ_RESP
						 : TRD_VW_ATOMIC_RESP;
	struct vif *v = svc_vif_find(s, h->dst_app, h->dst_proc);
	struct trd_vw_atomic a = {0};
	struct trd_vw_hdr r;
	uint64_t addr = 0;
	uint32_t need;
	int st;

	if (v == NULL || v->mem_gone) {
		/* not attached, or its address space is gone (exec, exit) and the sweep will end
		 * the interface */
		rep_hdr(&r, rtype, h, -ECONNREFUSED);
		svc_reply(s, src, &r);
		return;
	}
	if (h->type == TRD_VW_ATOMIC) {
		trd_vw_atomic_decode(data, &a);
		need = a.op == TRD_VNI_AOP_READ ? TRD_VNI_MR_REMOTE_READ
						: TRD_VNI_MR_REMOTE_READ | TRD_VNI_MR_REMOTE_WRITE;
	} else {
		need = h->type == TRD_VW_WRITE ? TRD_VNI_MR_REMOTE_WRITE : TRD_VNI_MR_REMOTE_READ;
	}
	if (h->type == TRD_VW_ATOMIC &&
	    ((a.size != 4 && a.size != 8) || a.size != h->len || !aop_ok(a.op) || h->tag == 0)) {
		/* (tag: the origin engine's incarnation, never 0) */
		ST(s, BAD_WIRE)++;
		st = -EACCES;
	} else if (h->type != TRD_VW_ATOMIC &&
		   (h->len > s->rma_chunk || h->tag > RMA_LEN_MAX || h->grant_id > h->tag ||
		    h->len > h->tag - h->grant_id)) {
		ST(s, BAD_WIRE)++; /* not what an origin engine sends */
		st = -EACCES;
	} else if (h->type != TRD_VW_ATOMIC && h->grant_id > h->roff) {
		st = -EACCES; /* the op wraps past UINT64_MAX */
	} else if (h->type != TRD_VW_ATOMIC) {
		/* the whole op [roff - grant_id, + tag) must lie in the region */
		st = mr_check(v, h->rkey, h->roff - h->grant_id, h->tag, need, &addr);
		addr += h->grant_id;
	} else {
		st = mr_check(v, h->rkey, h->roff, h->len, need, &addr);
		if (st == 0 && addr % a.size != 0)
			st = -EACCES;
	}
	if (st != 0) {
		ST(s, RMA_DENIED)++;
		rep_hdr(&r, rtype, h, st);
		svc_reply(s, src, &r);
		return;
	}
	ST(s, RMA_SERVED)++;
	if (h->type == TRD_VW_WRITE) {
		/* the whole op must be writable: a write that meets a hole or a read-only page
		 * writes nothing, not the chunks before it */
		st = svc_vmem_check(v, addr - h->grant_id, h->tag, true);
		if (st == 0)
			st = svc_vmem_write(v, data, addr, h->len);
		rep_hdr(&r, rtype, h, st);
	} else if (h->type == TRD_VW_READ) {
		uint8_t buf[2048];
		struct trd_payload *pay = NULL;

		st = svc_vmem_read(v, buf, addr, h->len);
		if (st == 0 && h->len != 0 && trd_payload_new(s->node, buf, h->len, &pay) != 0)
			st = -ENOMEM;
		rep_hdr(&r, rtype, h, st);
		if (st != 0 || h->len == 0) {
			if (st != 0)
				ST(s, RMA_FAULTS)++;
			if (st == -ECONNRESET)
				v->mem_gone = true;
			svc_reply(s, src, &r);
			return;
		}
		ST(s, RMA_BYTES) += h->len;
		svc_reply_data(s, src, &r, pay);
		return;
	} else {
		uint64_t old = 0, nv, mask = a.size == 8 ? UINT64_MAX : UINT32_MAX;
		struct vatab *tab = atom_tab(s, src_rank, &st);
		struct vatom *m = NULL;
		bool wr;

		if (tab == NULL) {
			/* not applied: it could not be recognised if it came again */
			if (st == -EPROTO)
				ST(s, BAD_WIRE)++;
			else
				ST(s, RMA_FAULTS)++;
			rep_hdr(&r, rtype, h, -ENOMEM);
			svc_reply(s, src, &r);
			return;
		}
		switch (atom_judge(s, tab, h, &m)) {
		case ATOM_REPEAT: /* its first answer was lost: the same answer, applied once */
			ST(s, RMA_REPEATS)++;
			rep_hdr(&r, rtype, h, m->status);
			r.data = m->status == 0 ? m->old : 0;
			svc_reply(s, src, &r);
			return;
		case ATOM_STALE: /* its op ended at the origin: nobody waits for an answer */
			ST(s, RMA_STALE)++;
			return;
		case ATOM_NEW:
			break;
		}
		/* an atomic that may write needs the word writable even if it does not change */
		st = svc_vmem_check(v, addr, a.size, need & TRD_VNI_MR_REMOTE_WRITE);
		if (st == 0)
			st = svc_vmem_read(v, &old, addr, a.size); /* little-endian host */
		if (st == 0) {
			nv = aop_apply(a.op, old, a.operand, a.compare, mask, &wr);
			if (wr && nv != old)
				st = svc_vmem_write(v, &nv, addr, a.size);
		}
		m->stamp = s->now != 0 ? s->now : 1;
		m->seq = h->grant_id;
		m->key = h->key;
		m->status = st;
		m->old = old;
		rep_hdr(&r, rtype, h, st);
		r.data = st == 0 ? old : 0;
	}
	if (st != 0)
		ST(s, RMA_FAULTS)++;
	else
		ST(s, RMA_BYTES) += h->len;
	if (st == -ECONNRESET)
		v->mem_gone = true; /* the requests that follow: -ECONNREFUSED, not faults */
	svc_reply(s, src, &r);
}
