/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The One API node handle of an attached process (app_node.c) and its event queues
 * (app_eq.c): the objects both files reach.
 */
#ifndef TRD_VNI_APP_NODE_PVT_H
#define TRD_VNI_APP_NODE_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#include "attach_api.h"
#include "vni_alloc.h"
#include "vni_seg.h"

/* tracked operations open at once (trd_track_open()); an id is (use << 9 | index + 1): an
 * outcome for an earlier use of the entry, or one closed, is recognised and dropped */
#define AN_TRACKS    256
#define AN_TRACK_USE 9

struct an_eq;

/* a message read in place in a reception FIFO, and the FIFO it came from */
struct an_msg {
	struct trd_attach_msg am;
	struct an_rx *rx;
};

struct an_rx {
	struct an_node *an;
	unsigned int k;   /* the interface's FIFO number */
	uint8_t id;       /* the node's id of it */
	uint32_t n, next; /* msgs[]: as many as the ring has slots, used in turn */
	uint32_t held;    /* handed out and not freed: the ring is given back at 0 */
	struct an_msg *msgs;
	struct an_eq *eq; /* the event queue it is bound to, or NULL */
	uint32_t ev_pos;  /* ring position up to which eq has its events */
	bool ev_bad;      /* eq met a header the engine never wrote there: it reads no further */
};

/* a tracked operation: where its outcome goes and what it carries back */
struct an_track {
	uint64_t cookie;
	uint64_t *result; /* an atomic's old value, or NULL */
	uint32_t use;     /* bumped at each open */
	uint8_t rx;       /* its reception FIFO's number + 1; 0: free */
};

struct an_node {
	struct trd_vni *v;
	struct trd_node *n;
	struct trd_vni_heap heap; /* blocks of the region (trd_mem_alloc) */
	struct an_rx rx[TRD_VNI_MU_RFIFOS_MAX];
	struct an_track trk[AN_TRACKS];
	uint16_t trk_free[AN_TRACKS];
	unsigned int n_trk_free;
	uint32_t untrack[AN_TRACKS]; /* closed ids the engine is yet to be told of */
	unsigned int n_untrack;
	/* engine collectives by group mask: the send context of the last one posted */
	bool comb_on[8];
	uint32_t comb_idx[8];
};

static inline struct an_node *
an_of(const struct trd_node *n)
{
	return trd_node_attach_ctx(n);
}

/* app_node.c: the FIFO of node id @p id, or NULL; the open tracked operation of id @p id, or
 * NULL */
struct an_rx *an_rx_of(struct an_node *a, uint8_t id);
struct an_track *an_track_find(struct an_node *a, uint64_t id);

/* app_eq.c: the event queue operations of attach_api.h, and the hook of a poll of @p rx that
 * moved its read position (events for the messages it passed, before they are handed out) */
void *an_eq_create(struct trd_node *n, unsigned int size, int *fd);
void an_eq_free(void *q);
int an_eq_bind(struct trd_node *n, uint8_t rfifo, void *q);
int an_eq_arm(void *q);
void an_eq_disarm(void *q);
int an_eq_poll(void *q, struct trd_event *ev, unsigned int n);
void an_eq_stats(const void *q, uint64_t *signals, uint64_t *overflows);
int an_eq_doorbell(struct trd_node *n, void *addr, size_t len, void *q, uint64_t *key);
void an_eq_note(struct an_rx *rx);
/* A wait of @p timeout_ms on FIFO @p rx, bound to a queue (trd_vni_rfifo_wait()'s result) */
int an_eq_fifo_wait(struct an_rx *rx, struct trd_msg *msg, int timeout_ms);

#endif /* TRD_VNI_APP_NODE_PVT_H */
