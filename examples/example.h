/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where an example's nodes come from, the only part that differs between the two ways it
 * runs (docs/vni.md, "One API"):
 *
 *   ./build/examples/put                          the nodes made in this process (EAL, no
 *                                                 port: a torus of N x 1 x 1 polled inline)
 *   ./build/examples/put --attach /tmp/n%r.sock   node r is toroid-node's node r, reached
 *                                                 through its socket (%r: the rank) as process
 *                                                 1:r; no EAL, no hugepages in this process
 *
 * Everything after example_open() is the same code either way: <toroid/toroid.h> on a
 * struct trd_node.
 */
#ifndef EXAMPLE_H
#define EXAMPLE_H

#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

#define EXAMPLE_MAX_NODES 4

struct example {
	struct trd_net *net; /* in this process */
	struct trd_node *node[EXAMPLE_MAX_NODES];
	unsigned int n;
	int attached;
};

/* "%r" in @p tmpl replaced by @p rank */
static inline void
example_socket(char *out, size_t len, const char *tmpl, unsigned int rank)
{
	const char *r = strstr(tmpl, "%r");

	if (r == NULL)
		snprintf(out, len, "%s", tmpl);
	else
		snprintf(out, len, "%.*s%u%s", (int)(r - tmpl), tmpl, rank, r + 2);
}

/* @p n nodes, each way. @return 0, or -1 (said on stderr). */
static inline int
example_open(struct example *ex, int argc, char **argv, unsigned int n)
{
	char *eal[] = {argv[0], "--no-huge", "--no-pci",    "--no-shconf",   "-m", "512",
		       "-l",    "0",         "--log-level", "lib.eal:error", NULL};
	struct trd_net_conf nc = {0};

	memset(ex, 0, sizeof(*ex));
	if (n > EXAMPLE_MAX_NODES)
		return -1;
	if (argc == 3 && strcmp(argv[1], "--attach") == 0) {
		for (unsigned int r = 0; r < n; r++) {
			char sock[256];
			struct trd_vni_conf c = {.socket = sock,
						 .app = 1,
						 .proc = r,
						 .connect_timeout_ms = 5000,
						 .mu_fifos = 1,
						 .mu_rfifos = 2,
						 .mu_region = 1 << 20};

			example_socket(sock, sizeof(sock), argv[2], r);
			ex->node[r] = trd_node_attach(&c);
			if (ex->node[r] == NULL) {
				fprintf(stderr, "%s: attach to %s: %s\n", argv[0], sock,
					trd_vni_open_error());
				return -1;
			}
			ex->n = r + 1;
		}
		ex->attached = 1;
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr,
			"usage: %s [--attach SOCKET]  (SOCKET: toroid-node's "
			"--vni-socket, %%r the rank)\n",
			argv[0]);
		return -1;
	}
	if (rte_eal_init(10, eal) < 0)
		return -1;
	trd_torus_init(&nc.torus, n, 1, 1);
	ex->net = trd_net_create(&nc);
	if (ex->net == NULL) {
		fprintf(stderr, "%s: net: %s\n", argv[0], rte_strerror(rte_errno));
		rte_eal_cleanup();
		return -1;
	}
	for (unsigned int r = 0; r < n; r++)
		ex->node[r] = trd_net_node(ex->net, r);
	ex->n = n;
	return 0;
}

static inline void
example_close(struct example *ex)
{
	if (ex->attached) {
		for (unsigned int r = 0; r < ex->n; r++)
			trd_node_free(ex->node[r]);
		return;
	}
	trd_net_free(ex->net);
	rte_eal_cleanup();
}

#endif /* EXAMPLE_H */
