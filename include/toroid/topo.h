/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * toroid topology: 3D torus coordinates, neighbours, dimension-order routes, trees,
 * and the topology file. Plain C, no DPDK dependency (library topology/, meson topo_dep).
 *
 * Conventions: functions returning int give 0 (or a count/rank) or a negative errno and
 * never abort; a struct trd_torus filled by hand is checked (each size 1..64) by every call.
 * The routing rule and the file format are described in docs/topology.md.
 */
#ifndef TOROID_TOPO_H
#define TOROID_TOPO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest size of one torus dimension. */
#define TRD_TORUS_MAX_DIM 64

/** A torus coordinate. Each component is in [0, dimension). */
struct trd_coord {
	uint8_t x;
	uint8_t y;
	uint8_t z;
};

/** Link directions, in the order used for "first usable link". */
enum trd_dir {
	TRD_DIR_XP = 0, /**< x+ */
	TRD_DIR_XM,     /**< x- */
	TRD_DIR_YP,     /**< y+ */
	TRD_DIR_YM,     /**< y- */
	TRD_DIR_ZP,     /**< z+ */
	TRD_DIR_ZM,     /**< z- */
	TRD_DIR_COUNT,
	TRD_DIR_NONE = -1 /**< destination reached / no direction */
};

/** Torus dimensions (a plain struct, filled by trd_torus_init()). */
struct trd_torus {
	uint8_t dim[3]; /**< X, Y, Z sizes, each 1..TRD_TORUS_MAX_DIM */
};

/** Set up @p t as an X x Y x Z torus. @return 0, or -EINVAL if a size is not 1..64. */
int trd_torus_init(struct trd_torus *t, unsigned int x, unsigned int y, unsigned int z);
/** Number of nodes, X*Y*Z; 0 if @p t is NULL or has a size outside 1..64. */
unsigned int trd_torus_size(const struct trd_torus *t);
/** @return 1 if @p c lies inside @p t, else 0 (also 0 for a NULL or invalid @p t). */
int trd_torus_contains(const struct trd_torus *t, struct trd_coord c);
/** Rank of @p c (x fastest: rank = x + X*(y + Y*z)). @return rank >= 0, or -EINVAL. */
int trd_torus_rank(const struct trd_torus *t, struct trd_coord c);
/** Coordinate of @p rank. @return 0, or -EINVAL if rank >= size. */
int trd_torus_coord(const struct trd_torus *t, unsigned int rank, struct trd_coord *c);
/** Neighbour of @p c in direction @p d (with wrap-around). In a dimension of size 2, + and -
 * both reach the other node.
 * @return 0; -ENOENT if that dimension has size 1 (no link); -EINVAL on bad input
 * (NULL @p t or @p out, @p c outside the torus, @p d not a direction). */
int trd_torus_step(const struct trd_torus *t, struct trd_coord c, enum trd_dir d,
		   struct trd_coord *out);
/** The distinct neighbours of @p c, in direction order; a dimension of size 2 yields only its
 * + direction, a dimension of size 1 none. @p dirs may be NULL.
 * @return the count (0..6), or -EINVAL. */
int trd_torus_neighbours(const struct trd_torus *t, struct trd_coord c, struct trd_coord out[6],
			 enum trd_dir dirs[6]);
/** Minimal hop count between @p a and @p b (sum over axes of the shorter way round).
 * @return hops >= 0, or -EINVAL on bad input. */
int trd_torus_hops(const struct trd_torus *t, struct trd_coord a, struct trd_coord b);
/** Dimension-order routing (x, then y, then z), shorter way round each axis; on a tie
 * (distance exactly dim/2) the + direction. Sets *dir to the first step from @p from
 * towards @p to, or TRD_DIR_NONE if they are equal. @return 0 or -EINVAL. */
int trd_torus_next_hop(const struct trd_torus *t, struct trd_coord from, struct trd_coord to,
		       enum trd_dir *dir);
/** The full route from @p from to @p to, excluding @p from, including @p to, into
 * @p path (room for @p max entries; 3 * TRD_TORUS_MAX_DIM / 2 always suffices). It is the
 * walk of trd_torus_next_hop(), so its length equals trd_torus_hops(). @p path may be NULL
 * when @p max is 0.
 * @return the hop count, -ENOSPC if max is too small (nothing written), -EINVAL. */
int trd_torus_route(const struct trd_torus *t, struct trd_coord from, struct trd_coord to,
		    struct trd_coord *path, unsigned int max);
/** Direction name: "x+", "x-", ... or "none" (for TRD_DIR_NONE and any invalid value). */
const char *trd_dir_name(enum trd_dir d);
/** The opposite direction (x+ <-> x-, ...); TRD_DIR_NONE for TRD_DIR_NONE or an invalid value. */
enum trd_dir trd_dir_opposite(enum trd_dir d);

/* ---- binary tree over ranks (for collectives) ----
 * The tree rooted at @p root over @p n ranks is the heap-ordered binary tree over virtual
 * ranks v = (rank - root + n) % n: parent (v-1)/2, children 2v+1, 2v+2. Its depth is
 * floor(log2(n)). Bad input: n == 0, n > INT_MAX, root >= n or rank >= n. */
/** Parent of @p rank. @return parent rank, -ENOENT for the root, -EINVAL on bad input. */
int trd_tree_parent(unsigned int n, unsigned int root, unsigned int rank);
/** Children of @p rank into @p child[2]. @return the count 0..2, or -EINVAL. */
int trd_tree_children(unsigned int n, unsigned int root, unsigned int rank, unsigned int child[2]);

/* ---- topology file ---- */

/** How nodes are connected. */
enum trd_topo_mode {
	TRD_TOPO_SWITCHED = 0, /**< one Ethernet segment: anyone one hop away, by MAC */
	TRD_TOPO_DIRECT,       /**< point-to-point cables per torus direction. A cable leaving
				* on direction d arrives on the neighbour's opposite direction,
				* except in a dimension of size 2, where the single cable joins
				* the + ports of both nodes (x+ to x+). */
};

#define TRD_TOPO_NO_PORT (-1)

/** One node of a topology file. */
struct trd_topo_node {
	unsigned int rank;
	struct trd_coord coord;
	uint32_t app_id;  /**< application id (0 if not given) */
	uint32_t proc_id; /**< process id within the application (0 if not given) */
	int has_mac;      /**< 1 if mac is set */
	uint8_t mac[6];
	int port[TRD_DIR_COUNT]; /**< direct mode: DPDK port per direction, or TRD_TOPO_NO_PORT */
	/* Over IPv4/UDP (switched mode): the node's address on its port; peers reach it by UDP
	 * to udp_port, and peers outside ip/prefix through the gateway. */
	int has_ip;        /**< 1 if ip is set */
	uint32_t ip;       /**< IPv4 address, host byte order (RTE_IPV4(10, 1, 0, 2)) */
	uint8_t prefix;    /**< subnet prefix length 1..32 (default 32: no subnet) */
	uint16_t udp_port; /**< UDP port it receives on (default TRD_TOPO_UDP_PORT) */
	uint32_t gateway;  /**< next router for peers outside the subnet, host order; 0 none */
};

/** The default UDP port of a node named by IP address (TRD_UDP_PORT of toroid/wire.h). */
#define TRD_TOPO_UDP_PORT 34997

/** A process placed on a node by the topology file (`app`/`proc` or `procs` keys). */
struct trd_topo_proc {
	uint32_t app_id;   /**< application id */
	uint32_t proc_id;  /**< process id within the application */
	unsigned int rank; /**< the node that hosts it */
};

/** A loaded topology. */
struct trd_topo {
	struct trd_torus torus;
	enum trd_topo_mode mode;
	unsigned int n_nodes;        /**< = trd_torus_size(&torus) */
	struct trd_topo_node *nodes; /**< indexed by rank */
	unsigned int n_procs;        /**< processes placed by the file (each on one node) */
	struct trd_topo_proc *procs; /**< sorted by (app_id, proc_id) */
};

/** Load a topology file (format: docs/topology.md). On error returns NULL, sets errno, and
 * writes "FILE:LINE: problem" into @p err (if not NULL; cut to @p errlen, always
 * terminated). errno: EINVAL for any problem in the file (or a NULL @p path), ENOMEM, EIO,
 * or fopen()'s errno (the message is then "FILE: cannot open: reason", without a line).
 * Problems found only at the end of the file (a missing node, no [torus]) are reported
 * at the file's last line. Every node of the torus is present in the result. */
struct trd_topo *trd_topo_load(const char *path, char *err, size_t errlen);
/** Free a topology from trd_topo_load(); NULL is a no-op. */
void trd_topo_free(struct trd_topo *topo);
/** Rank of the node hosting process (@p app, @p proc). A node hosts the process its
 * `app`/`proc` keys name, or every process of its `procs` list, or none if it has neither.
 * @return the rank, -ENOENT (not placed), -EINVAL (NULL @p topo). O(log n). */
int trd_topo_find_proc(const struct trd_topo *topo, uint32_t app, uint32_t proc);
/** Node at @p c, or NULL (also for a NULL @p topo). O(1) when ranks follow the default
 * layout (rank = trd_torus_rank(coord)), a scan of the nodes when the file permutes them. */
const struct trd_topo_node *trd_topo_node_at(const struct trd_topo *topo, struct trd_coord c);

#ifdef __cplusplus
}
#endif
#endif /* TOROID_TOPO_H */
