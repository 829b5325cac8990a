/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node's options, shared by its command line (args.c) and the daemon (main.c).
 */
#ifndef TOROID_NODE_H
#define TOROID_NODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <toroid/testing.h> /* --impair */
#include <toroid/topo.h>
#include <toroid/toroid.h>
#include <toroid/vni_service.h>

#define NODE_MAX_OWNERS     64
#define NODE_DEFAULT_SOCKET "/run/toroid/node%r.sock"

struct node_opts {
	const char *topo_path;
	const char *node_spec;
	const char *nodes_spec;
	int port;                 /* switched: -1 = the default (0) */
	int ports[TRD_DIR_COUNT]; /* direct, from --ports; -1 = from the file */
	bool have_ports;
	const char *socket;
	uint64_t stats_period_us;
	bool json;
	const char *capture;
	unsigned int snaplen;
	const char *capture_filter; /* --capture-filter: a BPF expression */
	uint64_t capture_size;      /* --capture-size: rotate after (bytes; 0: one file) */
	unsigned int capture_files; /* --capture-files: a ring of N files */
	uint64_t capture_limit; /* --capture-limit (0: the engine's default; UINT64_MAX: none) */
	bool impair;
	struct trd_impair_conf impair_conf;
	unsigned long long staging;
	unsigned long long max_pool;
	unsigned int max_ifs;
	unsigned int idle_us;  /* with idle_auto: when every busy process has a CPU */
	bool idle_auto;        /* --idle-us auto (the default): main.c, idle_threshold_us() */
	unsigned int sleep_us; /* the longest sleep; with sleep_auto: main.c chooses it */
	bool sleep_auto;
	unsigned int link_wait;
	unsigned int mtu;
	unsigned int noproc_ms;
	unsigned int max_conns; /* --vni-max-conns: registrations at once (0: the default) */
	int hdr_max;            /* --vni-hdr-max (0: the default; -1: none) */
	unsigned int rx_max;    /* --vni-rx-max (0: the default) */
	struct trd_vni_svc_owner owners[NODE_MAX_OWNERS];
	unsigned int n_owners;
	unsigned int socket_mode;
	bool quiet;
};

#define NODE_L1_OVERHEAD 24 /* preamble 8 + inter-frame gap 12 + FCS 4 per frame */

/* A node the daemon serves: its engine, VNI service and socket, and the statistics it last
 * printed (the next line's rates are the difference). */
struct served {
	struct trd_node *node;
	struct trd_vni_svc *svc;
	unsigned int rank;
	char socket[108];
	struct trd_node_stats last;
};

struct node_load;

/* One statistics line per served node (stats.c): @p t seconds since the start, @p dt since
 * the last line (rates), @p total: the totals at exit. @p load and @p crowded: the loop's last
 * judgement of the host, in JSON lines. */
void node_print_stats(struct served *srv, unsigned int n_srv, const struct node_load *load,
		      bool crowded, double t, double dt, bool total);

/* The options, their defaults set in args.c. */
extern struct node_opts node_opt;

/* --help's text, to @p f. */
void node_usage(FILE *f, const char *prog);

/* The options after "--"; read before EAL starts, so a bad command line costs nothing and
 * prints one line (exit 2). */
void node_parse_args(int argc, char **argv);

#endif /* TOROID_NODE_H */
