/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-topo: check a topology file and show what it says: nodes, neighbours,
 * dimension-order routes and collective trees. No DPDK; see docs/topology.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toroid/topo.h>

#include "../common/app_args.h"

#define EXIT_INVALID 1 /* the topology file is invalid */
#define EXIT_USAGE   2 /* the command line is wrong */

#define MAX_ROUTE (3 * TRD_TORUS_MAX_DIM)

static const char topo_usage[] =
	"usage: toroid-topo [OPTIONS] FILE\n"
	"\n"
	"Check the topology file FILE and print a summary: torus size, mode, node count,\n"
	"links per node and diameter. On an invalid file print \"FILE:LINE: problem\" and\n"
	"exit 1. The options add views of the topology (in this order, any combination):\n"
	"\n"
	"  -n, --nodes             list every node: rank, coordinate, app/proc ids (a line\n"
	"                          for each further process it hosts), and its mac and\n"
	"                          ip address (switched mode) or its ports (direct mode)\n"
	"  -N, --neighbours [NODE] list the distinct torus neighbours of NODE with the\n"
	"                          direction, and the port (direct) or mac or ip (switched)\n"
	"                          to use;\n"
	"                          without NODE, of every node (--neighbors is the same)\n"
	"  -r, --route FROM TO     print the dimension-order route from FROM to TO hop by hop\n"
	"                          (x first, then y, then z; the shorter way round each axis,\n"
	"                          + on a tie) with directions, ports and the hop count\n"
	"  -t, --tree ROOT         print the binary tree used by collectives rooted at ROOT\n"
	"  -q, --quiet             print nothing but errors (only the exit status tells)\n"
	"  -h, --help              print this help and exit\n"
	"\n"
	"NODE, FROM, TO and ROOT are a coordinate X,Y,Z or a rank number, e.g. 1,0,1 or 5.\n"
	"\n"
	"Exit status: 0 valid file, 1 invalid file, 2 bad command line (including a NODE\n"
	"that is not in the torus).\n"
	"\n"
	"Examples:\n"
	"  toroid-topo topology/examples/2x2x2-switched.ini\n"
	"  toroid-topo --route 0,0,0 1,1,1 topology/examples/2x2x2-direct.ini\n"
	"  toroid-topo --neighbours 3,3,3 --tree 0 topology/examples/8x8x8-switched.ini\n";

struct topo_opts {
	const char *file;
	int quiet;
	int nodes;
	int neighbours;            /* 1 = asked */
	const char *neighbour_arg; /* NULL = every node */
	const char *route_from, *route_to;
	const char *tree_root;
};

#define topo_usage_error app_usage_error /* one line on stderr, exit 2 */

/* A NODE argument looks like a coordinate or a rank: used to tell it from FILE. */
static int
topo_looks_like_node(const char *s)
{
	return s != NULL && s[0] != '\0' && strspn(s, "0123456789, ") == strlen(s);
}

/* Parse NODE ("X,Y,Z" or a rank) into a node of @p topo, or exit with a usage error. */
static const struct trd_topo_node *
topo_parse_node(const struct trd_topo *topo, const char *s)
{
	const struct trd_topo_node *node = NULL;
	uint64_t v[3];
	char buf[64], *p = buf, *comma;
	unsigned int n = 0;
	int rc = 0;

	/* strictly: a rank 0..2^32-1, or three coordinates 0..255 (blanks allowed around each) */
	if (strlen(s) >= sizeof(buf))
		topo_usage_error("bad node '%s' (expected X,Y,Z or a rank)", s);
	strcpy(buf, s);
	do {
		char *e;

		comma = strchr(p, ',');
		if (comma != NULL)
			*comma = '\0';
		while (*p == ' ')
			p++;
		for (e = p + strlen(p); e > p && e[-1] == ' '; e--)
			e[-1] = '\0';
		if (n == 3 || (rc = app_parse_u64(p, false, 0, UINT32_MAX, &v[n++])) != 0)
			break;
		p = comma + 1;
	} while (comma != NULL);
	if (rc == 0 && n == 3 && comma == NULL) {
		struct trd_coord c = {(uint8_t)v[0], (uint8_t)v[1], (uint8_t)v[2]};

		if (v[0] < 256 && v[1] < 256 && v[2] < 256)
			node = trd_topo_node_at(topo, c);
		if (node == NULL)
			topo_usage_error("no node at %s in this torus", s);
		return node;
	}
	if (rc == 0 && n == 1 && comma == NULL) {
		if (v[0] >= topo->n_nodes)
			topo_usage_error("no rank %s in this torus (0..%u)", s, topo->n_nodes - 1);
		return &topo->nodes[v[0]];
	}
	if (rc == -ERANGE)
		topo_usage_error("no node %s in this torus (a rank 0..%u or X,Y,Z)", s,
				 topo->n_nodes - 1);
	topo_usage_error("bad node '%s' (expected X,Y,Z or a rank)", s);
}

static const char *
topo_node_name(const struct trd_topo_node *node)
{
	static char buf[4][40];
	static unsigned int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "node %u (%u,%u,%u)", node->rank, node->coord.x, node->coord.y,
		 node->coord.z);
	return b;
}

static const char *
topo_mac_str(const struct trd_topo_node *node)
{
	static char buf[4][18];
	static unsigned int next;
	char *b = buf[next++ % 4];
	const uint8_t *m = node->mac;

	if (!node->has_mac)
		return "-";
	snprintf(b, sizeof(buf[0]), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
		 m[5]);
	return b;
}

/* "10.1.0.2/24:34997 gw 10.1.0.1", or "-" for a node without an ip. */
static const char *
topo_ip_str(const struct trd_topo_node *node)
{
	static char buf[4][64];
	static unsigned int next;
	char *b = buf[next++ % 4];
	uint32_t a = node->ip, g = node->gateway;
	int len;

	if (!node->has_ip)
		return "-";
	len = snprintf(b, sizeof(buf[0]), "%u.%u.%u.%u/%u:%u", a >> 24, (a >> 16) & 0xff,
		       (a >> 8) & 0xff, a & 0xff, node->prefix, node->udp_port);
	if (g != 0 && len > 0 && (size_t)len < sizeof(buf[0]))
		snprintf(b + len, sizeof(buf[0]) - (size_t)len, " gw %u.%u.%u.%u", g >> 24,
			 (g >> 16) & 0xff, (g >> 8) & 0xff, g & 0xff);
	return b;
}

/* The node one step from @p node in direction @p d (the torus guarantees there is one). */
static const struct trd_topo_node *
topo_step(const struct trd_topo *topo, const struct trd_topo_node *node, enum trd_dir d)
{
	struct trd_coord c;

	if (trd_torus_step(&topo->torus, node->coord, d, &c) != 0)
		return NULL;
	return trd_topo_node_at(topo, c);
}

static int
topo_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool
topo_all_ip(const struct trd_topo *topo)
{
	for (unsigned int r = 0; r < topo->n_nodes; r++)
		if (!topo->nodes[r].has_ip)
			return false;
	return topo->n_nodes > 0;
}

static void
topo_print_summary(const char *file, const struct trd_topo *topo)
{
	const struct trd_torus *t = &topo->torus;
	struct trd_coord origin = {0, 0, 0}, nb[6];
	unsigned int a, diameter = 0, apps = 0, r, n_ids;
	uint32_t *ids;
	double avg = 0;

	for (a = 0; a < 3; a++) {
		unsigned int d, sum = 0;

		diameter += t->dim[a] / 2;
		for (d = 0; d < t->dim[a]; d++)
			sum += d < t->dim[a] - d ? d : t->dim[a] - d;
		avg += (double)sum / t->dim[a];
	}
	/* every process the file places (a node may host several, of several applications);
	 * without any, the nodes' own app ids */
	n_ids = topo->n_procs > 0 ? topo->n_procs : topo->n_nodes;
	ids = malloc(n_ids * sizeof(*ids));
	if (ids != NULL) {
		for (r = 0; r < n_ids; r++)
			ids[r] = topo->n_procs > 0 ? topo->procs[r].app_id : topo->nodes[r].app_id;
		qsort(ids, n_ids, sizeof(*ids), topo_cmp_u32);
		for (r = 0; r < n_ids; r++)
			apps += r == 0 || ids[r] != ids[r - 1];
		free(ids);
	}
	printf("%s: valid\n", file);
	printf("  torus      %ux%ux%u, %u nodes, wrap-around on every axis\n", t->dim[0], t->dim[1],
	       t->dim[2], topo->n_nodes);
	printf("  mode       %s\n",
	       topo->mode == TRD_TOPO_SWITCHED
		       ? (topo_all_ip(topo)
				  ? "switched (nodes addressed by ip, over IPv4/UDP)"
				  : "switched (one Ethernet segment, nodes addressed by mac)")
		       : "direct (a cable per torus link, by DPDK port)");
	printf("  links      x %u, y %u, z %u per node: %d neighbours\n",
	       t->dim[0] == 1   ? 0
	       : t->dim[0] == 2 ? 1
				: 2,
	       t->dim[1] == 1   ? 0
	       : t->dim[1] == 2 ? 1
				: 2,
	       t->dim[2] == 1   ? 0
	       : t->dim[2] == 2 ? 1
				: 2,
	       trd_torus_neighbours(t, origin, nb, NULL));
	printf("  hops       diameter %u, average %.2f\n", diameter, avg);
	printf("  apps       %u distinct app id%s, %u process%s placed\n", apps,
	       apps == 1 ? "" : "s", topo->n_procs, topo->n_procs == 1 ? "" : "es");
}

static int
topo_cmp_proc_rank(const void *a, const void *b)
{
	const struct trd_topo_proc *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->app_id != y->app_id)
		return x->app_id < y->app_id ? -1 : 1;
	return x->proc_id < y->proc_id ? -1 : x->proc_id > y->proc_id;
}

/* One line per node with its first process; a node hosting several has a line for each of
 * the others below it; a node hosting none shows "-". */
static void
topo_print_nodes(const struct trd_topo *topo)
{
	struct trd_topo_proc *byrank = NULL;
	unsigned int r, k = 0;
	int d;

	if (topo->n_procs > 0) {
		byrank = malloc(topo->n_procs * sizeof(*byrank));
		if (byrank == NULL) {
			fprintf(stderr, "toroid-topo: out of memory\n");
			exit(EXIT_FAILURE);
		}
		memcpy(byrank, topo->procs, topo->n_procs * sizeof(*byrank));
		qsort(byrank, topo->n_procs, sizeof(*byrank), topo_cmp_proc_rank);
	}
	printf("%-6s %-9s %-10s %-10s %s\n", "rank", "coord", "app", "proc",
	       topo->mode == TRD_TOPO_SWITCHED ? "mac               ip" : "ports");
	for (r = 0; r < topo->n_nodes; r++) {
		const struct trd_topo_node *node = &topo->nodes[r];
		char coord[16];

		snprintf(coord, sizeof(coord), "%u,%u,%u", node->coord.x, node->coord.y,
			 node->coord.z);
		while (k < topo->n_procs && byrank[k].rank < r)
			k++;
		if (k < topo->n_procs && byrank[k].rank == r) {
			printf("%-6u %-9s %-10u %-10u", r, coord, byrank[k].app_id,
			       byrank[k].proc_id);
			k++;
		} else {
			printf("%-6u %-9s %-10s %-10s", r, coord, "-", "-");
		}
		if (topo->mode == TRD_TOPO_SWITCHED) {
			printf(" %-17s %s\n", topo_mac_str(node), topo_ip_str(node));
		} else {
			for (d = 0; d < TRD_DIR_COUNT; d++)
				if (node->port[d] != TRD_TOPO_NO_PORT)
					printf(" %s=%d", trd_dir_name((enum trd_dir)d),
					       node->port[d]);
			if (node->has_mac)
				printf(" mac=%s", topo_mac_str(node));
			printf("\n");
		}
		for (; k < topo->n_procs && byrank[k].rank == r; k++)
			printf("%-6s %-9s %-10u %u\n", "", "", byrank[k].app_id, byrank[k].proc_id);
	}
	free(byrank);
}

/* How to leave @p node in direction @p d: its port, or the destination's mac. */
static const char *
topo_link_str(const struct trd_topo *topo, const struct trd_topo_node *node, enum trd_dir d,
	      const struct trd_topo_node *to)
{
	static char buf[96];

	if (topo->mode == TRD_TOPO_DIRECT)
		snprintf(buf, sizeof(buf), "via port %d", node->port[d]);
	else if (node->has_ip && to->has_ip)
		snprintf(buf, sizeof(buf), "to ip %s", topo_ip_str(to));
	else
		snprintf(buf, sizeof(buf), "to mac %s", topo_mac_str(to));
	return buf;
}

static void
topo_print_neighbours(const struct trd_topo *topo, const struct trd_topo_node *node)
{
	struct trd_coord nb[6];
	enum trd_dir dirs[6];
	int n, i;

	n = trd_torus_neighbours(&topo->torus, node->coord, nb, dirs);
	printf("%s: %d neighbour%s\n", topo_node_name(node), n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		const struct trd_topo_node *to = trd_topo_node_at(topo, nb[i]);

		if (to == NULL)
			continue;
		printf("  %-3s %-20s %s\n", trd_dir_name(dirs[i]), topo_node_name(to),
		       topo_link_str(topo, node, dirs[i], to));
	}
}

static int
topo_print_route(const struct trd_topo *topo, const struct trd_topo_node *from,
		 const struct trd_topo_node *to)
{
	const struct trd_topo_node *cur = from;
	int hops, i;

	hops = trd_torus_hops(&topo->torus, from->coord, to->coord);
	if (hops < 0)
		return hops;
	printf("route %s -> %s: %d hop%s\n", topo_node_name(from), topo_node_name(to), hops,
	       hops == 1 ? "" : "s");
	for (i = 1; i <= hops; i++) {
		const struct trd_topo_node *next;
		enum trd_dir d;

		if (trd_torus_next_hop(&topo->torus, cur->coord, to->coord, &d) != 0)
			return -EINVAL;
		next = topo_step(topo, cur, d);
		if (next == NULL)
			return -EINVAL;
		printf("  %2d  %-3s %-20s %s\n", i, trd_dir_name(d), topo_node_name(next),
		       topo_link_str(topo, cur, d, next));
		cur = next;
	}
	return 0;
}

/* One subtree: @p prefix is what goes before this node's children. */
static void
topo_print_subtree(const struct trd_topo *topo, unsigned int root, unsigned int rank, char *prefix,
		   size_t len)
{
	unsigned int child[2];
	int n, i;

	n = trd_tree_children(topo->n_nodes, root, rank, child);
	for (i = 0; i < n; i++) {
		int last = i == n - 1;

		printf("%s%s%s\n", prefix, last ? "`- " : "+- ",
		       topo_node_name(&topo->nodes[child[i]]));
		memcpy(prefix + len, last ? "   " : "|  ", 4);
		topo_print_subtree(topo, root, child[i], prefix, len + 3);
		prefix[len] = '\0';
	}
}

static void
topo_print_tree(const struct trd_topo *topo, const struct trd_topo_node *root)
{
	char prefix[3 * 40 + 1] = ""; /* depth <= log2(64^3) + 1 */
	unsigned int n = topo->n_nodes, depth = 0;

	while ((2u << depth) <= n)
		depth++;
	printf("tree rooted at %s over %u ranks, depth %u (parent of virtual rank v is "
	       "(v-1)/2):\n",
	       topo_node_name(root), n, depth);
	printf("%s\n", topo_node_name(root));
	topo_print_subtree(topo, root->rank, root->rank, prefix, 0);
}

static void
topo_parse_args(int argc, char **argv, struct topo_opts *o)
{
	static const struct option longopts[] = {
		{"nodes", no_argument, NULL, 'n'},
		{"neighbours", optional_argument, NULL, 'N'},
		{"neighbors", optional_argument, NULL, 'N'},
		{"route", required_argument, NULL, 'r'},
		{"tree", required_argument, NULL, 't'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0; /* app_getopt_error() says it in one line */
	while ((c = getopt_long(argc, argv, ":nN::r:t:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->nodes = 1;
			break;
		case 'N':
			o->neighbours = 1;
			o->neighbour_arg = optarg;
			/* "--neighbours 1,0,0": take a following NODE as the argument */
			if (optarg == NULL && optind < argc && topo_looks_like_node(argv[optind]))
				o->neighbour_arg = argv[optind++];
			break;
		case 'r':
			o->route_from = optarg;
			if (optind >= argc || !topo_looks_like_node(argv[optind]))
				topo_usage_error("--route needs two nodes: --route FROM TO");
			o->route_to = argv[optind++];
			break;
		case 't':
			o->tree_root = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(topo_usage, stdout);
			exit(EXIT_SUCCESS);
		default:
			app_getopt_error(c, argv);
		}
	}
	if (optind != argc - 1)
		topo_usage_error("%s",
				 optind >= argc ? "no FILE given" : "more than one FILE given");
	o->file = argv[optind];
}

int
main(int argc, char **argv)
{
	const struct trd_topo_node *neighbour = NULL, *from = NULL, *to = NULL, *root = NULL;
	struct topo_opts o;
	struct trd_topo *topo;
	char err[512];
	unsigned int r;
	int rc = EXIT_SUCCESS;

	topo_parse_args(argc, argv, &o);
	topo = trd_topo_load(o.file, err, sizeof(err));
	if (topo == NULL) {
		fprintf(stderr, "%s\n", err);
		return EXIT_INVALID;
	}
	/* resolve every NODE before printing anything */
	if (o.neighbour_arg != NULL)
		neighbour = topo_parse_node(topo, o.neighbour_arg);
	if (o.route_from != NULL) {
		from = topo_parse_node(topo, o.route_from);
		to = topo_parse_node(topo, o.route_to);
	}
	if (o.tree_root != NULL)
		root = topo_parse_node(topo, o.tree_root);
	if (o.quiet)
		goto out;

	topo_print_summary(o.file, topo);
	if (o.nodes) {
		printf("\n");
		topo_print_nodes(topo);
	}
	if (o.neighbours) {
		printf("\n");
		for (r = 0; r < topo->n_nodes; r++)
			if (neighbour == NULL || neighbour == &topo->nodes[r])
				topo_print_neighbours(topo, &topo->nodes[r]);
	}
	if (from != NULL) {
		printf("\n");
		if (topo_print_route(topo, from, to) < 0) {
			fprintf(stderr, "toroid-topo: no route\n");
			rc = EXIT_INVALID;
		}
	}
	if (root != NULL) {
		printf("\n");
		topo_print_tree(topo, root);
	}
out:
	trd_topo_free(topo);
	return rc;
}
