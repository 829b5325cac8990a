/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-demo: the three operations (put, memory-FIFO message, remote get) and puts with
 * reflection completion; one transfer. */
#include "demo.h"

/* ---- the three operations ---- */

static enum demo_result
demo_put(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	size_t soff = demo_offset(&x->rng), doff = demo_offset(&x->rng);
	const uint8_t *want = dm->src + soff;
	struct demo_guard g;
	struct trd_desc d;
	int rc;

	demo_fill(dm->src + soff, x->len, &x->rng);
	demo_dst_prepare(x, t->wbuf, doff, want, &g);
	rc = trd_counter_set(t->node, t->ctr_rec, x->len);
	if (rc == 0)
		rc = trd_counter_set(o->node, o->ctr_inj, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_put(&d, t->coord, want, x->len, trd_mr_key(t->wmr), doff, o->ctr_inj, t->ctr_rec);
	x->t_post = trd_time_us();
	rc = demo_inject(o, &d, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = demo_xwait_counter(x, t, t->ctr_rec, "target reception counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	/* The source must stay untouched until the injection counter says it was read. */
	rc = demo_xwait_counter(x, o, o->ctr_inj, "origin injection counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	x->t_done = trd_time_us();
	demo_dst_check(x, "target region", t->wbuf, doff, want, &g);
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

static enum demo_result
demo_fifo(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	size_t soff = demo_offset(&x->rng);
	const uint8_t *want = dm->src + soff;
	uint64_t user = demo_rand(&x->rng);
	struct trd_msg *msg = NULL;
	struct trd_desc d;
	char a[16], b[16];
	int rc;

	demo_fill(dm->src + soff, x->len, &x->rng);
	rc = trd_counter_set(o->node, o->ctr_inj, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_fifo(&d, t->coord, DEMO_REC_FIFO, want, x->len, user, o->ctr_inj);
	x->t_post = trd_time_us();
	rc = demo_inject(o, &d, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = demo_rec_fifo_wait(t->rec, &msg, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc == -ETIMEDOUT)
		demo_xfail(x,
			   "timeout after %" PRIu64 " ms waiting for the message in reception "
			   "FIFO %d",
			   dm->opt.timeout_us / 1000, DEMO_REC_FIFO);
	else if (rc != 0)
		demo_xfail(x, "trd_rec_fifo_wait: %s", rte_strerror(-rc));
	rc = demo_xwait_counter(x, o, o->ctr_inj, "origin injection counter");
	if (rc == -EINTR) {
		trd_msg_free(msg);
		return DEMO_INTR;
	}
	x->t_done = trd_time_us();
	if (msg == NULL)
		return DEMO_FAIL;

	if (msg->src.x != o->coord.x || msg->src.y != o->coord.y || msg->src.z != o->coord.z)
		demo_xfail(x, "message source is %s, want %s",
			   demo_coord_str(msg->src, a, sizeof(a)),
			   demo_coord_str(o->coord, b, sizeof(b)));
	if (msg->user != user)
		demo_xfail(x,
			   "user word is 0x%016" PRIx64 ", want 0x%016" PRIx64
			   " (a stale message?)",
			   msg->user, user);
	if (msg->fifo != DEMO_REC_FIFO)
		demo_xfail(x, "message says FIFO %u, want %d", msg->fifo, DEMO_REC_FIFO);
	if (msg->len != x->len)
		demo_xfail(x, "message length is %u, want %u", msg->len, x->len);
	else if (msg->data == NULL)
		demo_xfail(x, "message has no data");
	else
		demo_check_bytes(x, "message", msg->data, want, x->len);
	trd_msg_free(msg);
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

/* RDMA read: ask the target to put (key, offset) of its region back into ours. */
static enum demo_result
demo_rget(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	size_t soff = demo_offset(&x->rng), doff = demo_offset(&x->rng);
	const uint8_t *want = dm->src; /* an independent copy of the target's bytes */
	struct trd_desc carried, d;
	struct demo_guard g;
	int rc;

	demo_fill(dm->src, x->len, &x->rng);
	memcpy(t->rbuf + soff, want, x->len);
	demo_dst_prepare(x, o->wbuf, doff, want, &g);
	rc = trd_counter_set(o->node, o->ctr_rec, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	trd_desc_put(&carried, o->coord, NULL, x->len, trd_mr_key(o->wmr), doff, 0, o->ctr_rec);
	carried.flags = TRD_DF_SRC_MR;
	carried.src_key = trd_mr_key(t->rmr);
	carried.src = soff;
	trd_desc_rget(&d, t->coord, DEMO_RGET_FIFO, &carried, 1);
	x->t_post = trd_time_us();
	rc = demo_inject(o, &d, dm->opt.timeout_us);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}
	rc = demo_xwait_counter(x, o, o->ctr_rec, "origin reception counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	x->t_done = trd_time_us();
	demo_dst_check(x, "origin region", o->wbuf, doff, want, &g);
	demo_check_bytes(x, "target source region (must be unchanged)", t->rbuf + soff, want,
			 x->len);
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

/* rx_rget of every node: the reflector is the node that took the remote get. */
static int
demo_rget_counts(struct demo *dm, uint64_t *out)
{
	for (unsigned int r = 0; r < dm->n_nodes; r++) {
		struct trd_node_stats st;
		int rc = trd_node_stats_get(dm->nodes[r].node, &st);

		if (rc != 0)
			return rc;
		out[r] = st.stat[TRD_STAT_RX_RGET];
	}
	return 0;
}

/* Take the doorbell events of @p dn's queue: each must be a write into its doorbell page.
 * (A TRD_WAIT_EQ wait takes some itself, so their number is not checked.) */
static void
demo_eq_drain(struct demo_xfer *x, struct demo_node *dn)
{
	struct trd_event ev[32];
	int n;

	while ((n = trd_eq_poll(dn->eq, ev, RTE_DIM(ev))) > 0) {
		for (int i = 0; i < n; i++) {
			if (ev[i].type == TRD_EV_DOORBELL && ev[i].key == trd_mr_key(dn->dbmr) &&
			    ev[i].value % 8 == 0 && ev[i].value < x->dm->db_len && ev[i].len == 8)
				continue;
			demo_xfail(
				x,
				"unexpected event on the doorbell's queue: type %u, key 0x%016" PRIx64
				", offset %" PRIu64 ", %u bytes",
				ev[i].type, ev[i].key, ev[i].value, ev[i].len);
		}
	}
	if (n < 0)
		demo_xfail(x, "trd_eq_poll: %s", rte_strerror(-n));
}

/* One put with reflection completion: what it asks for and what was read before it. */
struct demo_refl {
	enum trd_cpl_kind kind;
	enum trd_cpl_mode mode;
	size_t soff, doff;
	const uint8_t *want; /* the source may be overwritten */
	uint64_t cookie;     /* never 0, the doorbell page's idle value */
	uint64_t need;       /* packets: data + remote get */
	uint64_t rget0[DEMO_MAX_NODES];
	struct trd_inj_fifo_stats fs0;
	struct trd_cpl_spec spec;
	struct trd_coord refl; /* the node expected to take the remote get */
	struct demo_guard g;
};

/* The source and target bytes, the reflector, the completion spec, the counters, and the
 * statistics before the post; -1 (failed, said) or 0. */
static int
demo_reflect_prepare(struct demo_xfer *x, struct demo_refl *r)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	int rc;

	r->kind = demo_ops[x->op].kind;
	r->mode = demo_ops[x->op].mode;
	r->soff = demo_offset(&x->rng);
	r->doff = demo_offset(&x->rng);
	r->want = dm->kept + r->soff;
	r->cookie = demo_rand(&x->rng) | 1;
	r->need = (x->len + dm->payload - 1) / dm->payload + 1;
	r->spec = (struct trd_cpl_spec){.kind = r->kind, .mode = r->mode, .cookie = r->cookie};
	demo_fill(dm->src + r->soff, x->len, &x->rng);
	memcpy(dm->kept + r->soff, dm->src + r->soff, x->len);
	demo_dst_prepare(x, t->wbuf, r->doff, r->want, &r->g);
	if (r->mode == TRD_CPL_DELIVERY) {
		r->refl = t->coord;
	} else {
		rc = trd_node_reflector(o->node, &r->refl);
		if (rc == -ENOENT) {
			r->refl = t->coord; /* no neighbour: the target reflects */
		} else if (rc != 0) {
			demo_xfail(x, "trd_node_reflector: %s", rte_strerror(-rc));
			return -1;
		}
	}
	if (r->kind == TRD_CPL_FIFO) {
		r->spec.fifo = DEMO_CPL_REC_FIFO;
	} else {
		r->spec.doorbell = o->dbmr;
		r->spec.offset = (dm->db_seq++ % (dm->db_len / 8)) * 8;
	}
	rc = trd_counter_set(t->node, t->ctr_rec, x->len);
	if (rc == 0)
		rc = trd_counter_set(o->node, o->ctr_inj, x->len);
	if (rc != 0) {
		demo_xfail(x, "trd_counter_set: %s", rte_strerror(-rc));
		return -1;
	}
	rc = trd_inj_fifo_stats_get(o->rinj, &r->fs0);
	if (rc == 0)
		rc = demo_rget_counts(dm, r->rget0);
	if (rc != 0) {
		demo_xfail(x, "reading statistics: %s", rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/* Exactly one remote get since the post, taken by the expected reflector. */
static void
demo_reflect_check_rget(struct demo_xfer *x, const struct demo_refl *r)
{
	struct demo *dm = x->dm;
	uint64_t rget1[DEMO_MAX_NODES];
	char who[DEMO_MAX_NODES * 24], a[16], b[16];
	size_t used = 0;
	bool ok = true;
	int rc = demo_rget_counts(dm, rget1);

	if (rc != 0) {
		demo_xfail(x, "reading statistics: %s", rte_strerror(-rc));
		return;
	}
	who[0] = '\0';
	for (unsigned int i = 0; i < dm->n_nodes; i++) {
		struct trd_coord c = dm->nodes[i].coord;
		bool is_refl = c.x == r->refl.x && c.y == r->refl.y && c.z == r->refl.z;
		uint64_t got = rget1[i] - r->rget0[i];

		ok &= got == (is_refl ? 1 : 0);
		if (got != 0 && used < sizeof(who))
			used += (size_t)snprintf(who + used, sizeof(who) - used, "%s%s x%" PRIu64,
						 used ? ", " : "", demo_coord_str(c, a, sizeof(a)),
						 got);
	}
	if (!ok)
		demo_xfail(x, "the remote get was taken by %s, want the %s %s x1",
			   used ? who : "no node",
			   r->mode == TRD_CPL_LOCAL ? "reflector" : "target",
			   demo_coord_str(r->refl, b, sizeof(b)));
}

/* The completion message: from the reflector, empty, the cookie, the FIFO asked for. */
static void
demo_reflect_check_msg(struct demo_xfer *x, const struct demo_refl *r, const struct trd_msg *msg)
{
	char a[16], b[16];

	if (msg->src.x != r->refl.x || msg->src.y != r->refl.y || msg->src.z != r->refl.z)
		demo_xfail(x, "completion sent by %s, want the %s %s",
			   demo_coord_str(msg->src, a, sizeof(a)),
			   r->mode == TRD_CPL_LOCAL ? "reflector" : "target",
			   demo_coord_str(r->refl, b, sizeof(b)));
	if (msg->len != 0)
		demo_xfail(x, "completion message has %u bytes, want 0", msg->len);
	if (msg->user != r->cookie)
		demo_xfail(x,
			   "completion user word is 0x%016" PRIx64 ", want the cookie "
			   "0x%016" PRIx64,
			   msg->user, r->cookie);
	if (msg->fifo != DEMO_CPL_REC_FIFO)
		demo_xfail(x, "completion message says FIFO %u, want %d", msg->fifo,
			   DEMO_CPL_REC_FIFO);
}

/* The doorbell word holds the cookie (the wait saw it), and nothing else moved. */
static void
demo_reflect_check_doorbell(struct demo_xfer *x, const struct demo_refl *r)
{
	volatile const uint64_t *db = x->org->db;
	uint64_t word = r->spec.offset / 8;

	if (db[word] != r->cookie)
		demo_xfail(x,
			   "doorbell word %" PRIu64 " is 0x%016" PRIx64
			   ", want the cookie 0x%016" PRIx64,
			   word, db[word], r->cookie);
	for (size_t w = 0; w < x->dm->db_len / 8; w++) {
		if (w != word && db[w] != 0) {
			demo_xfail(x,
				   "doorbell word %zu was written (0x%016" PRIx64
				   "), only word %" PRIu64 " should be",
				   w, db[w], word);
			break;
		}
	}
}

/* What must hold the moment the completion arrives. */
static void
demo_reflect_completed(struct demo_xfer *x, const struct demo_refl *r, const struct trd_msg *msg)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	struct trd_inj_fifo_stats fs1;
	unsigned int pending;
	int rc;

	x->cpl = true;
	/* a local completion frees the source: overwrite it before anything else, so a
	 * resend that still read it would carry the wrong bytes to the target */
	if (r->mode == TRD_CPL_LOCAL)
		for (uint32_t i = 0; i < x->len; i++)
			dm->src[r->soff + i] = (uint8_t)~r->want[i];
	/* first what must already hold now, before anything else can catch up */
	if (r->mode == TRD_CPL_DELIVERY)
		demo_check_bytes(x, "target region when the delivery completion arrived",
				 t->wbuf + r->doff, r->want, x->len);
	rc = trd_inj_fifo_stats_get(o->rinj, &fs1);
	if (rc != 0)
		demo_xfail(x, "trd_inj_fifo_stats_get: %s", rte_strerror(-rc));
	else if (fs1.pkts_sent - r->fs0.pkts_sent < r->need)
		demo_xfail(x,
			   "completion before the data left: injection FIFO %d handed %" PRIu64
			   " packet(s) to a port, want %" PRIu64 " (data and remote get)",
			   DEMO_REFL_INJ_FIFO, fs1.pkts_sent - r->fs0.pkts_sent, r->need);
	pending = trd_node_cpl_pending(o->node);
	if (pending != 0)
		demo_xfail(x, "%u completion(s) still outstanding at the origin", pending);
	demo_reflect_check_rget(x, r);
	if (r->kind == TRD_CPL_FIFO)
		demo_reflect_check_msg(x, r, msg);
	else
		demo_reflect_check_doorbell(x, r);
}

/*
 * A put with reflection completion of the row's kind and mode. At the moment the completion
 * arrives: the reflection FIFO has handed the data packets and the remote get to a port; in
 * delivery mode the target holds every byte; nothing is outstanding; the expected node (local:
 * the origin's reflector, delivery: the target) took the remote get and, for the FIFO kind,
 * sent the message. In local mode the completion also means the source may be reused: the
 * demo overwrites it at once (every byte changed), and the target must still receive what was
 * posted. Then the data is checked at the target like a direct put's.
 */
static enum demo_result
demo_reflect(struct demo_xfer *x)
{
	struct demo *dm = x->dm;
	struct demo_node *o = x->org, *t = x->tgt;
	struct demo_refl r;
	struct trd_msg *msg = NULL;
	struct trd_desc d;
	char a[16];
	int rc;

	if (demo_reflect_prepare(x, &r) != 0)
		return DEMO_FAIL;
	trd_desc_put(&d, t->coord, dm->src + r.soff, x->len, trd_mr_key(t->wmr), r.doff, o->ctr_inj,
		     t->ctr_rec);
	x->t_post = trd_time_us();
	rc = demo_inject_reflect(o, &d, &r.spec, dm->opt.timeout_us, &x->tsc_post);
	if (rc == -EINTR)
		return DEMO_INTR;
	if (rc != 0) {
		demo_xfail(x, "trd_inject_reflect: %s", rte_strerror(-rc));
		return DEMO_FAIL;
	}

	if (r.kind == TRD_CPL_FIFO)
		rc = demo_rec_fifo_wait(o->cpl, &msg, dm->opt.timeout_us);
	else
		rc = demo_doorbell_wait(o->dbmr, r.spec.offset, r.cookie, dm->opt.db_wait,
					dm->opt.timeout_us);
	x->tsc_cpl = rte_rdtsc();
	if (rc == -EINTR) {
		trd_msg_free(msg);
		return DEMO_INTR;
	}
	if (rc == 0)
		demo_reflect_completed(x, &r, msg);
	else if (rc == -ETIMEDOUT)
		demo_xfail(x,
			   "timeout after %" PRIu64 " ms waiting for the completion (%s, reflector "
			   "%s, %u outstanding at the origin)",
			   dm->opt.timeout_us / 1000,
			   r.kind == TRD_CPL_FIFO ? "reception FIFO message" : "doorbell word",
			   demo_coord_str(r.refl, a, sizeof(a)), trd_node_cpl_pending(o->node));
	else
		demo_xfail(x, "waiting for the completion: %s", rte_strerror(-rc));
	trd_msg_free(msg);

	/* then the data itself, like a direct put's */
	rc = demo_xwait_counter(x, t, t->ctr_rec, "target reception counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	rc = demo_xwait_counter(x, o, o->ctr_inj, "origin injection counter");
	if (rc == -EINTR)
		return DEMO_INTR;
	x->t_done = trd_time_us();
	demo_dst_check(x, "target region", t->wbuf, r.doff, r.want, &r.g);
	if (r.kind == TRD_CPL_DOORBELL) {
		if (x->cpl)
			o->db[r.spec.offset / 8] = 0; /* back to idle for its next turn */
		demo_eq_drain(x, o);
	}
	return x->failed ? DEMO_FAIL : DEMO_PASS;
}

/* ---- one transfer ---- */

/* The sizes row @p op runs with. */
const struct demo_sizes *
demo_op_sizes(const struct demo *dm, unsigned int op)
{
	return demo_ops[op].reflect ? &dm->opt.rsizes : &dm->opt.sizes;
}

enum demo_result
demo_transfer(struct demo *dm, enum demo_op op, unsigned int si, struct demo_node *o,
	      struct demo_node *t)
{
	struct trd_node_stats before[DEMO_MAX_NODES], after[DEMO_MAX_NODES];
	struct demo_cell *cell = &dm->cell[op][si];
	struct demo_xfer x = {
		.dm = dm,
		.op = op,
		.len = demo_op_sizes(dm, op)->v[si],
		.org = o,
		.tgt = t,
	};
	enum demo_result res;

	/* Each transfer has its own data, derived from the seed and what it is. */
	x.rng = demo_mix(dm->opt.seed);
	x.rng = demo_mix(x.rng ^ (uint64_t)op);
	x.rng = demo_mix(x.rng ^ x.len);
	x.rng = demo_mix(x.rng ^ ((uint64_t)o->rank << 8 | t->rank));
	if (x.rng == 0)
		x.rng = 1;

	demo_snapshot(dm, before);
	switch (op) {
	case DEMO_OP_PUT:
		res = demo_put(&x);
		break;
	case DEMO_OP_FIFO:
		res = demo_fifo(&x);
		break;
	case DEMO_OP_RGET:
		res = demo_rget(&x);
		break;
	default:
		res = demo_reflect(&x);
		break;
	}
	if (res == DEMO_INTR)
		return res;
	if (x.t_done > x.t_post && x.t_post != 0)
		cell->time_us += x.t_done - x.t_post;
	if (x.cpl && cell->n_lat < DEMO_MAX_LAT)
		dm->lat[op][si][cell->n_lat++] = x.tsc_cpl - x.tsc_post;
	demo_snapshot(dm, after);
	cell->transfers++;
	cell->bytes += x.len;
	cell->packets += demo_stat_sum(dm, before, after, TRD_STAT_TX_PUT) +
			 demo_stat_sum(dm, before, after, TRD_STAT_TX_FIFO) +
			 demo_stat_sum(dm, before, after, TRD_STAT_TX_RGET);
	cell->fwd += demo_stat_sum(dm, before, after, TRD_STAT_FWD_PKTS);
	dm->pair_ran[op][o->rank][t->rank] = 1;
	if (res == DEMO_PASS) {
		cell->passed++;
		dm->passed++;
		return res;
	}
	cell->failed++;
	dm->failed++;
	dm->pair_bad[op][o->rank][t->rank] = 1;
	printf("    route %d hop(s); statistics during the transfer:\n",
	       trd_node_route_hops(o->node, t->coord));
	demo_print_node_delta("origin", o, &before[o->rank], &after[o->rank]);
	demo_print_node_delta("target", t, &before[t->rank], &after[t->rank]);
	for (unsigned int r = 0; r < dm->n_nodes; r++)
		if (r != o->rank && r != t->rank &&
		    after[r].stat[TRD_STAT_DROPS] != before[r].stat[TRD_STAT_DROPS])
			demo_print_node_delta("other ", &dm->nodes[r], &before[r], &after[r]);
	demo_settle(dm);
	return res;
}
