/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node handle for a process attached to toroid-node (engine/core/attach.c): the core's calls
 * on a struct trd_node (inject, counters, regions, reception FIFOs, memory) work on it as on a
 * node made in this process, and are carried out by the layer that attached it (engine/vni,
 * app_node.c) through these operations. No EAL is needed in such a process: every call the
 * handle takes runs without DPDK's run time; the rest refuse it (-ENOTSUP, or NULL with
 * rte_errno ENOTSUP). docs/vni.md, "One API".
 */
#ifndef TRD_ATTACH_API_H
#define TRD_ATTACH_API_H

#include <stddef.h>
#include <stdint.h>

#include <toroid/toroid.h>

struct trd_comb_req;

struct trd_attach_ops {
	/* descriptors as trd_inject_bulk() takes them, for the process's FIFO @p fifo */
	int (*inject)(struct trd_node *n, unsigned int fifo, const struct trd_desc *d,
		      unsigned int nd);
	/* wait for node counter @p id (one of the process's) as trd_counter_wait() */
	int (*counter_wait)(struct trd_node *n, uint16_t id, uint64_t timeout_us);
	/* register [addr, addr + len) (TRD_ACCESS_* bits) as a region of the node: its key */
	int (*mr_register)(struct trd_node *n, void *addr, size_t len, unsigned int access,
			   uint64_t *key);
	int (*mr_deregister)(struct trd_node *n, uint64_t key);
	void *(*mem_alloc)(struct trd_node *n, size_t len);
	void (*mem_free)(struct trd_node *n, void *p);
	/* reception FIFO of node id @p id */
	int (*rfifo_poll)(struct trd_node *n, uint8_t id, struct trd_msg **msgs, unsigned int nm);
	int (*rfifo_wait)(struct trd_node *n, uint8_t id, struct trd_msg **msg,
			  uint64_t timeout_us);
	/* trd_track_open() on reception FIFO @p rfifo (0 .. n_rfifos - 1), and trd_track_close() */
	int (*track_open)(struct trd_node *n, uint8_t rfifo, uint64_t cookie, uint64_t *result,
			  uint32_t *id);
	int (*track_close)(struct trd_node *n, uint32_t id);
	/* give back an id that no posted descriptor named (the engine never saw it) */
	void (*track_unposted)(struct trd_node *n, uint32_t id);
	/* event queues (trd_eq_*() on a queue of the handle): the attaching layer's own, fed by
	 * the reception FIFOs bound to them. eq_create gives its queue and the descriptor that
	 * trd_eq_fd() returns (NULL with rte_errno); eq_bind binds FIFO @p rfifo (a node id) to
	 * @p q (NULL: unbinds); eq_arm is 0 or -EBUSY (events wait) */
	void *(*eq_create)(struct trd_node *n, unsigned int size, int *fd);
	void (*eq_free)(void *q);
	int (*eq_bind)(struct trd_node *n, uint8_t rfifo, void *q);
	int (*eq_arm)(void *q);
	void (*eq_disarm)(void *q);
	int (*eq_poll)(void *q, struct trd_event *ev, unsigned int n);
	void (*eq_stats)(const void *q, uint64_t *signals, uint64_t *overflows);
	/* register [addr, addr + len) as a doorbell region whose writes @p q reports
	 * (TRD_EV_DOORBELL): its key */
	int (*doorbell_register)(struct trd_node *n, void *addr, size_t len, void *q,
				 uint64_t *key);
	/* an engine collective (trd_comb_post()), checked by the core but for its buffers
	 * (kind, op, type, group, root, count, counter, overlap): the attaching layer's to
	 * check the buffers and post */
	int (*comb_post)(struct trd_node *n, const struct trd_comb_req *req);
	/* a message rfifo_poll() or rfifo_wait() gave (its fifo field an id >= 128) */
	void (*msg_free)(struct trd_msg *msg);
	/* detach: after it the handle's memory goes */
	void (*close)(struct trd_node *n);
};

/** A message of an attached process's reception FIFO as rfifo_poll() gives it: freed by
 * trd_msg_free(), which finds no frame and no block in the two words after it (the core's
 * own message header, node_pvt.h) and a fifo id >= TRD_GUEST_RFIFO_FIRST. */
struct trd_attach_msg {
	struct trd_msg msg;
	void *none[2]; /* NULL, NULL */
};

/** What the handle is: the node's place, the process's FIFOs and its block of counters. */
struct trd_attach_conf {
	const struct trd_attach_ops *ops;
	void *ctx; /* the attaching layer's, trd_node_attach_ctx() */
	struct trd_torus torus;
	struct trd_coord coord;
	const char *name;
	unsigned int n_fifos;     /* injection FIFOs 0 .. n_fifos - 1 */
	unsigned int n_rfifos;    /* reception FIFOs 0 .. n_rfifos - 1 ... */
	const uint8_t *rfifo_ids; /* ... and the node ids senders name */
	int64_t *ctrs;            /* the block, mapped: counter ctr_base + k at [k] */
	uint16_t ctr_base;        /* its first node id (k = 0, never given) */
	uint16_t n_ctrs;          /* counters of the block */
	unsigned int n_regions;   /* trd_mr_register() at once */
};

/** A handle (calloc'd, no EAL needed), or NULL with rte_errno set. */
struct trd_node *trd_node_attach_new(const struct trd_attach_conf *c);
/** The attaching layer's pointer of handle @p n; NULL for a node of this process. */
void *trd_node_attach_ctx(const struct trd_node *n);
/** The region of handle @p n registered under @p key (trd_mr_register()), or NULL. */
const struct trd_mr *trd_node_attach_mr(const struct trd_node *n, uint64_t key);

#endif /* TRD_ATTACH_API_H */
