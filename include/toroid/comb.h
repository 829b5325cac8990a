/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Collectives in the engine (docs/collectives.md, "Collectives in the engine"): allreduce,
 * reduce, broadcast and barrier combined by the engines of the torus, on a tree whose every
 * edge is one link. The application posts its contribution with trd_comb_post() and is told
 * of the end by a counter; it takes no further part: the engine lcores combine the pieces of
 * the children with the node's own as they arrive, send the result up, and the root's result
 * down, pipelined in TRD_COMB_PIECE-byte pieces. Floating-point sums are combined in a fixed
 * order (the node's own vector, then its children by rank), so every node and every run get
 * the same bits. The frames are TRD_PKT_COMB (<toroid/wire.h>), under the reliable sessions.
 *
 * The software collectives of <toroid/coll.h> (over trd_put()/trd_send() and trd_advance())
 * stay: for any group of ranks, any type and length, and as the reference.
 */
#ifndef TOROID_COMB_H
#define TOROID_COMB_H

#include <stdint.h>

#include <toroid/toroid.h>
#include <toroid/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Group spanning the whole torus (dimension mask x | y | z). */
#define TRD_COMB_TORUS 7
/** Collectives of one group a node may have in flight, counted from the oldest posted that
 *  has not ended here (collectives of a group may end out of order). */
#define TRD_COMB_DEPTH 4

/** One node's part in an engine collective. */
struct trd_comb_req {
	uint8_t kind;  /**< enum trd_comb_kind */
	uint8_t op;    /**< enum trd_comb_op (allreduce, reduce); 0 otherwise */
	uint8_t dtype; /**< enum trd_comb_dtype (allreduce, reduce); broadcast: TRD_COMB_U64;
			*   barrier: 0 */
	/**
	 * The group: a mask of the torus axes it spans (bit 0 x, bit 1 y, bit 2 z;
	 * TRD_COMB_TORUS, or 0 for the same). Its members are the nodes that share the root's
	 * coordinates on the other axes: 3 is the root's z plane, 1 its x line.
	 */
	uint8_t dims;
	struct trd_coord root; /**< where the tree is rooted; the same on every member */
	uint16_t counter;      /**< this node's counter: 1 is subtracted when the collective is
				*   complete here; marked failed (TRD_COUNTER_FAILED) if it fails */
	uint32_t count;        /**< elements of 8 bytes (0 for a barrier) */
	/**
	 * The job the collective belongs to, the same on every member (0 in a program of its
	 * own; the VNI service sets an attached process's application id). A node combines
	 * only pieces of its own job: a tree neighbour's piece of another job fails the
	 * collective on the whole group, nothing of it is combined.
	 */
	uint32_t job;
	/**
	 * This node's vector (allreduce, reduce; the root's of a broadcast), @c count elements
	 * in a registered region of the node; read by the engine until completion.
	 */
	const void *src;
	/**
	 * Where the result goes (allreduce; the root of a reduce; the other members of a
	 * broadcast), in a registered region of the node; NULL where no result comes.
	 */
	void *dst;
};

/**
 * Post this node's part in an engine collective. Every member of the group posts the same
 * collectives (kind, op, type, count, root, group) in the same order; the engine numbers them.
 * @return 0; -EINVAL (a bad argument, a node outside the group, buffers not in a registered
 * region, an unknown counter); -EMSGSIZE (a link's MTU too small for a piece, a vector over
 * TRD_COMB_MAX_LEN); -EBUSY (the collective of this group posted TRD_COMB_DEPTH before this one
 * has not ended here, even if later ones did: wait for it); -ENOBUFS (no room to post: try
 * again). A post that finds no memory for its buffers in the engine fails its counter, and
 * the collective fails on the whole group.
 *
 * On a handle of trd_node_attach() (docs/vni.md, "Collectives"): the buffers lie in the
 * process's region (trd_mem_alloc(); else -EINVAL), the engine of toroid-node posts the part
 * and counts the end on @c counter as here; -EBUSY while the handle's last collective of the
 * group has not ended (one in flight per group); -EAGAIN (no free send context or command
 * slot: post again); -ECONNRESET once the engine stopped. What the engine refuses when it
 * takes the command (another collective of the group in flight on that node, no room) fails
 * the counter of this node alone, posting nothing: post the same collective again.
 */
int trd_comb_post(struct trd_node *node, const struct trd_comb_req *req);

/** Engine-collective statistics of a node (trd_comb_stats()). */
struct trd_comb_stats {
	uint64_t posted;    /**< collectives posted here */
	uint64_t completed; /**< ... completed here */
	uint64_t failed;    /**< ... failed here */
	uint64_t rx_pieces; /**< COMB frames taken */
	uint64_t tx_pieces; /**< COMB frames sent */
	uint64_t early;     /**< pieces that came before this node's post (kept) */
};

/** A node's engine-collective statistics (zeros on a handle of trd_node_attach(): the
 *  engine's are toroid-node's). @return 0 or -EINVAL. */
int trd_comb_stats(const struct trd_node *node, struct trd_comb_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_COMB_H */
