/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * For tests, fuzzers and the in-tree tools, not for applications, and not installed (pkg/):
 *
 * - link impairment (loss, reordering, duplication, corruption of what links receive), which
 *   the tests and the tools' --impair option use (in libtoroid, engine/link/impair.c and
 *   engine/core/taps.c);
 * - entry points that feed frames straight into a node's receive path and put a node back
 *   into a known state (in libtoroid_testing, engine/core/testing.c: link toroid_testing_dep).
 *   None of them may be called while an lcore serves the node (they return -EBUSY);
 * - trd_node_at(), the process's nodes by index, as the telemetry numbers them.
 */
#ifndef TOROID_TESTING_H
#define TOROID_TESTING_H

#include <stdint.h>

#include <toroid/toroid.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Link impairment for tests and demos: fractions of received frames affected (0..1). */
struct trd_impair_conf {
	double loss;    /**< dropped */
	double reorder; /**< delivered after the next frame */
	double dup;     /**< delivered twice */
	double corrupt; /**< one random bit flipped */
	uint64_t seed;  /**< for repeatable runs (0: 1) */
};

/**
 * Parse "loss=2%,reorder=1%,dup=0.5%,corrupt=0.1%,seed=7" (any subset; a value is a
 * percentage with '%' or a fraction without). @return 0 or -EINVAL.
 */
int trd_impair_parse(const char *spec, struct trd_impair_conf *out);
/**
 * Impair what @p link receives (between the port and the engine); NULL turns it off. Not
 * while the link's node is served. @return 0, -EINVAL, -ENOMEM, -EBUSY.
 */
int trd_link_impair(struct trd_link *link, const struct trd_impair_conf *conf);
/** trd_link_impair() on every link of @p node (not its loopback). */
int trd_node_impair(struct trd_node *node, const struct trd_impair_conf *conf);

/**
 * Read the byte at @p p into @p out under the burst guard that net_memif bursts run under
 * (engine/link/guard.c): a fault returns -EFAULT instead of killing the process. For the
 * guard's own test. @return 0, -EFAULT, -EINVAL, or the negative errno of sigaction.
 */
int trd_link_guard_probe(const volatile uint8_t *p, uint8_t *out);

/**
 * The @p i-th live node of this process (creation order), or NULL: the index the telemetry's
 * NODE parameter takes (engine/core/api/core_api.h declares it for the telemetry layer).
 */
struct trd_node *trd_node_at(unsigned int i);

/**
 * Hand @p len bytes at @p frame to @p node as a frame its loopback link received, then poll
 * the node once so that any reply, ack or forwarded packet is handed to its port. A reliable
 * node takes an unsequenced frame other than an ack there only if its source is the node
 * itself (its own frames to itself); see trd_node_trust_unsequenced().
 *
 * The frame is copied into mbufs of the node's pool: one when @p seg is 0 and it fits,
 * otherwise a chain of segments of at most @p seg bytes (at most 64 segments: the last ones
 * grow), as a NIC with scattered receive would deliver it.
 *
 * @return 0; -EINVAL (NULL node, or a frame of more than 65535 bytes); -ENOBUFS (no mbufs);
 * -EBUSY (an lcore serves the node).
 */
int trd_node_rx_frame(struct trd_node *node, const void *frame, uint32_t len, uint32_t seg);

/**
 * Take and release everything applications would: every message waiting in the node's
 * reception FIFOs and every event in its event queues.
 * @return the number of messages and events taken, -EINVAL or -EBUSY.
 */
int trd_node_drain(struct trd_node *node);

/**
 * Put @p node back to idle, as if it had just been created with its links, regions and
 * counters: discard every packet waiting in its links' transmit buffers and loopback, every
 * descriptor in its injection FIFOs, every message and event (trd_node_drain()), every
 * partly reassembled message, every engine collective (comb.h) and all reliability state (sessions,
 * held packets), and give its mbuf cache back to the pool. Afterwards the node holds no mbuf: with
 * the far ends of its links drained, the pool is back to the count it had before the node received
 * anything. Statistics, counters, regions and event-queue owners are kept.
 * @return 0, -EINVAL or -EBUSY (an lcore serves it, or it serves an attached process's
 * injection FIFOs).
 */
int trd_node_reset(struct trd_node *node);

/**
 * Receive and free every frame waiting on @p link, a link not attached to a node (the far
 * end of a trd_link_ring_pair() whose other end a node uses).
 * @return the number of frames freed, or -EINVAL.
 */
int trd_link_drain(struct trd_link *link);

/**
 * Let a reliable @p node act on unsequenced frames (@p on not 0) as an unreliable node does,
 * or not (0, the default: it drops them as `unsequenced`, docs/reliability.md). For tests
 * and fuzzers that reach the receive checks with frames made by hand, without a session.
 * @return 0, -EINVAL or -EBUSY.
 */
int trd_node_trust_unsequenced(struct trd_node *node, int on);

/**
 * The number of peers whose reliability timers @p node runs on each poll (peers that owe it
 * something, that it owes an ack or a challenge, or that are down): the per-poll cost of
 * the timers. @return the number, or -EINVAL.
 */
int trd_node_timer_peers(const struct trd_node *node);

/**
 * Give @p node a known session secret (normally random) so that a test or fuzzer can answer
 * its challenges: see trd_session_cookie(). @return 0, -EINVAL or -EBUSY.
 */
int trd_node_set_session_secret(struct trd_node *node, uint64_t k0, uint64_t k1);

/**
 * The cookie a node with session secret (@p k0, @p k1) sends the peer of rank @p peer_rank
 * in a challenge, and expects echoed (docs/reliability.md): its @p gen is the number of
 * sessions of that peer it has accepted so far (0 for the first).
 */
uint64_t trd_session_cookie(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint32_t gen);

/**
 * The first session a node with session secret (@p k0, @p k1) opens towards the peer of
 * rank @p peer_rank: its epoch and first sequence number. (After the peer is declared down,
 * the epoch goes up by one, skipping 0, and numbering goes on.)
 */
void trd_session_start(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint16_t *epoch,
		       uint32_t *isn);

/**
 * The token that every frame of session @p epoch of a node with session secret (@p k0,
 * @p k1) towards the peer of rank @p peer_rank carries (flag PROOF), and that the echo
 * starting the session tells the peer (docs/reliability.md): 64 bits nobody without the
 * secret can compute.
 */
uint64_t trd_session_token(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint16_t epoch);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_TESTING_H */
