/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node: the engine daemon. A DPDK primary process that owns the ports, loads a topology
 * file, runs its node of the torus and serves the application processes the file places on it
 * through virtual network interfaces (docs/toroid-node.md, docs/vni.md).
 *
 *   toroid-node [EAL options] -- --topo FILE --node RANK|X,Y,Z [--port P | --ports x+=0,...]
 *               [--vni-socket PATH] [--stats-period N] [--json] [--capture FILE] ...
 *
 * One thread does everything, on the main lcore: it polls the node, then the VNI service, in
 * turn; when nothing happened for --idle-us (short on a node without ports where busy
 * processes outnumber CPUs) it sleeps, longer each time up to --sleep-us, until an
 * application kicks it or a socket wakes it. Statistics every --stats-period seconds, totals at
 * exit; SIGINT/SIGTERM stop it cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_pdump.h>

#include <toroid/telemetry.h>
#include <toroid/testing.h> /* --impair */
#include <toroid/topo.h>
#include <toroid/toroid.h>
#include <toroid/vni_service.h>

#include "../common/app_common.h"
#include "crowd.h"
#include "node.h"

#define NODE_MAX_SERVED     64
#define NODE_IDLE_SHARED_US 5   /* --idle-us auto while busy processes outnumber the CPUs */
#define NODE_PIDS_SEEN      256 /* distinct processes procs_where() tells apart */
#define NODE_SLEEP_FIRST_US 200 /* the first sleep; each further one without work doubles */
/* --sleep-us auto: the longest sleep. With ports it stays 200 us: no PMD the node uses has Rx
 * interrupts in DPDK 22.11 (memif, af_packet, ring: rte_eth_dev_rx_intr_enable is -ENOTSUP),
 * so a frame waits for the end of the sleep, and the reliability timers (delayed acks,
 * retransmissions) advance only as the node is polled: sleeping longer, or as soon as the
 * last frame left, slowed a ping-pong over memif to 25 ms a round trip and made a peer look
 * dead. Without ports, nothing arrives that does not wake the engine (a process's kick, the
 * socket), and the bound is for the statistics only. */
#define NODE_SLEEP_PORTS_US   200
#define NODE_SLEEP_NOPORTS_US 100000

static struct trd_topo *topo;
static struct trd_node *single; /* one-node mode */
static struct trd_net *net;     /* --nodes mode */
static struct served srv[NODE_MAX_SERVED];
static unsigned int n_srv;
static volatile sig_atomic_t node_stop;
static bool eal_up;
static unsigned int host_cpus = 1; /* CPUs the process may run on, before EAL pins it */
static unsigned int sleep_max_us;  /* --sleep-us, or its auto value (set before run()) */
static bool has_ports;             /* the node has links (set before run()) */
static cpu_set_t engine_set;       /* the CPUs of the thread that runs the loop (set in run()) */
static unsigned int engine_n = 1;  /* their count */
static struct node_load load_seen; /* the loop's last judgement of the host (crowded()) */
static bool crowd_seen;
static unsigned int sleep_next_us; /* the next sleep: doubles while the engine has no work */

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	node_stop = 1;
}

/* Release what start-up made, then stop EAL. */
static void
teardown(void)
{
	for (unsigned int i = 0; i < n_srv; i++) {
		trd_vni_svc_free(srv[i].svc);
		srv[i].svc = NULL;
	}
	if (net != NULL)
		trd_net_free(net);
	else
		trd_node_free(single);
	net = NULL;
	single = NULL;
	trd_topo_free(topo);
	topo = NULL;
	if (eal_up)
		rte_eal_cleanup();
	eal_up = false;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "toroid-node: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	teardown();
	exit(1);
}

/* RANK or X,Y,Z -> a rank of the topology. */
static int
node_rank(const char *spec)
{
	uint64_t v[3];
	char buf[64], *save = NULL, *tok;
	unsigned int n = 0;

	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
		if (n == 3 || app_parse_u64(tok, false, 0, UINT32_MAX, &v[n++]) != 0)
			return -EINVAL;
	if (n == 3 && spec[strlen(spec) - 1] != ',') {
		struct trd_coord c = {.x = (uint8_t)v[0], .y = (uint8_t)v[1], .z = (uint8_t)v[2]};
		const struct trd_topo_node *tn;

		if (strchr(spec, ',') == strrchr(spec, ',') || v[0] > 255 || v[1] > 255 ||
		    v[2] > 255 || (tn = trd_topo_node_at(topo, c)) == NULL)
			return -EINVAL;
		return (int)tn->rank;
	}
	if (n != 1 || strchr(spec, ',') != NULL || v[0] >= topo->n_nodes)
		return -EINVAL;
	return (int)v[0];
}

/* The socket path of node @p rank (%r replaced); -ENAMETOOLONG if it does not fit a Unix
 * socket address (107 characters). */
static int
socket_path(char *out, size_t len, unsigned int rank)
{
	size_t o = 0;

	for (const char *p = node_opt.socket; *p != '\0'; p++) {
		if (p[0] == '%' && p[1] == 'r') {
			int k = snprintf(out + o, len - o, "%u", rank);

			if (k < 0 || (size_t)k >= len - o)
				return -ENAMETOOLONG;
			o += (size_t)k;
			p++;
		} else {
			if (o + 1 >= len)
				return -ENAMETOOLONG;
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return 0;
}

/* mkdir -p of the socket's directory. */
static void
make_dirs(const char *path)
{
	char d[108];

	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(d, 0755);
			*p = '/';
		}
}

static void
node_conf_init(struct trd_node_conf *nc)
{
	memset(nc, 0, sizeof(*nc));
	nc->torus = topo->torus;
	nc->n_inj_fifos = 2; /* VNI requests and data; VNI replies */
	nc->inj_fifo_size = 4096;
	nc->n_rec_fifos = 1; /* the VNI protocol */
	nc->rec_fifo_size = 4096;
	nc->n_counters = 8192; /* one per long message in flight */
	nc->n_regions = 1024;  /* a pool per interface, the staging area */
	nc->inline_max = 960;  /* short messages are copied at post time */
	nc->burst = 64;
}

/* A net_memif port made with role=client (the server is the default). */
static bool
memif_client(const struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da;

	if (info->driver_name == NULL || strcmp(info->driver_name, "net_memif") != 0 ||
	    info->device == NULL)
		return false;
	da = rte_dev_devargs(info->device);
	return da != NULL && da->args != NULL && strstr(da->args, "role=client") != NULL;
}

static void
wait_link(uint16_t port)
{
	uint64_t deadline = trd_time_us() + (uint64_t)node_opt.link_wait * 1000000;
	struct rte_eth_link link;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";

	struct rte_eth_dev_info info;
	uint64_t next_kick = trd_time_us() + 1000000;
	bool kick;

	rte_eth_dev_get_name_by_port(port, name);
	kick = rte_eth_dev_info_get(port, &info) == 0 && memif_client(&info);
	if (!node_stop)
		printf("toroid-node: waiting for the link of port %u (%s)\n", port, name);
	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return;
		if (node_stop)
			die("interrupted while waiting for port %u (%s)", port, name);
		if (trd_time_us() >= deadline)
			die("port %u (%s): link down after %u s (cable, peer, --link-wait)", port,
			    name, node_opt.link_wait);
		/* a memif client that connected before its server's port started was turned away
		 * and does not try again by itself: restart the port to reconnect. Only a client:
		 * a server listens all along, and stopping it while the driver's interrupt thread
		 * takes a client's connection in unmaps the regions that thread is setting up
		 * (DPDK 22.11; a server died so with SIGSEGV while its client connected) */
		if (kick && trd_time_us() >= next_kick) {
			next_kick = trd_time_us() + 1000000;
			rte_eth_dev_stop(port);
			if (rte_eth_dev_start(port) != 0)
				die("port %u (%s): cannot restart", port, name);
		}
		poll(NULL, 0, 10);
	}
}

static struct trd_link *
make_link(unsigned int port)
{
	struct trd_link_conf lc = {.mtu = (uint16_t)node_opt.mtu};
	struct trd_link *l;

	if (!rte_eth_dev_is_valid_port((uint16_t)port))
		die("port %u does not exist (%u ports: give --vdev or -a, see docs/deploying.md)",
		    port, rte_eth_dev_count_avail());
	struct rte_eth_dev_info info;
	uint64_t deadline = trd_time_us() + (uint64_t)node_opt.link_wait * 1000000;
	bool memif = rte_eth_dev_info_get((uint16_t)port, &info) == 0 && info.driver_name != NULL &&
		     strcmp(info.driver_name, "net_memif") == 0;

	/* a net_memif client cannot start before its server listens: keep trying */
	while ((l = trd_link_ethdev((uint16_t)port, &lc)) == NULL && memif && !node_stop &&
	       trd_time_us() < deadline)
		poll(NULL, 0, 100);
	if (l == NULL)
		die("port %u: cannot set up: %s", port, rte_strerror(rte_errno));
	return l;
}

static void
build_single(unsigned int rank)
{
	const struct trd_topo_node *tn = &topo->nodes[rank];
	struct trd_node_conf nc;
	char name[32];
	int rc;

	node_conf_init(&nc);
	snprintf(name, sizeof(name), "node%u", rank);
	nc.name = name;
	nc.coord = tn->coord;
	single = trd_node_create(&nc);
	if (single == NULL)
		die("cannot create node %u: %s", rank, rte_strerror(rte_errno));

	if (topo->mode == TRD_TOPO_SWITCHED) {
		unsigned int port = node_opt.port < 0 ? 0 : (unsigned int)node_opt.port;
		struct trd_link *l;

		if (node_opt.have_ports)
			die("--ports is for direct topologies; this one is switched: use --port");
		if (topo->n_nodes == 1 && node_opt.port < 0)
			return; /* alone on the torus: nothing to cable */
		if (tn->has_mac && rte_eth_dev_is_valid_port((uint16_t)port)) {
			struct rte_ether_addr mac, want;

			memcpy(want.addr_bytes, tn->mac, 6);
			if (rte_eth_macaddr_get((uint16_t)port, &mac) == 0 &&
			    !rte_is_same_ether_addr(&mac, &want) &&
			    rte_eth_dev_default_mac_addr_set((uint16_t)port, &want) != 0)
				fprintf(stderr,
					"toroid-node: port %u keeps its MAC " RTE_ETHER_ADDR_PRT_FMT
					" (the file says " RTE_ETHER_ADDR_PRT_FMT "); it is "
					"promiscuous, so frames to either arrive\n",
					port, RTE_ETHER_ADDR_BYTES(&mac),
					RTE_ETHER_ADDR_BYTES(&want));
		}
		l = make_link(port);
		rc = trd_node_add_link(single, l, TRD_DIR_NONE);
		if (rc != 0) {
			trd_link_free(l);
			die("port %u: cannot attach: %s", port, strerror(-rc));
		}
		if (tn->has_ip) {
			struct trd_ip_conf ic = {.ip = tn->ip,
						 .prefix = tn->prefix,
						 .gateway = tn->gateway,
						 .port = tn->udp_port};

			rc = trd_node_set_ip(single, &ic);
			if (rc != 0)
				die("port %u: cannot carry node %u over IP: %s", port, rank,
				    strerror(-rc));
		}
		for (unsigned int r = 0; r < topo->n_nodes; r++) {
			const struct trd_topo_node *pn = &topo->nodes[r];

			if (r == rank)
				continue;
			/* over IP when both have an address, else plain frames to its MAC */
			if (tn->has_ip && pn->has_ip)
				rc = trd_node_set_peer_ip(single, pn->coord, pn->ip, pn->udp_port);
			else if (pn->has_mac)
				rc = trd_node_set_peer_mac(single, pn->coord, pn->mac);
			else
				rc = 0;
			if (rc != 0)
				die("node %u: cannot address node %u: %s", rank, r, strerror(-rc));
		}
		wait_link((uint16_t)port);
		return;
	}
	if (node_opt.port >= 0)
		die("--port is for switched topologies; this one is direct: use --ports");
	for (int d = 0; d < TRD_DIR_COUNT; d++) {
		int port = node_opt.have_ports ? node_opt.ports[d] : tn->port[d];
		unsigned int dim = topo->torus.dim[d / 2];
		struct trd_link *l;

		if (dim == 1 || (dim == 2 && (d & 1))) {
			if (node_opt.have_ports && node_opt.ports[d] >= 0)
				die("--ports: %s has no link in a %ux%ux%u torus",
				    trd_dir_name((enum trd_dir)d), topo->torus.dim[0],
				    topo->torus.dim[1], topo->torus.dim[2]);
			continue;
		}
		if (port < 0)
			die("no port for %s of node %u (give --ports %s=P)",
			    trd_dir_name((enum trd_dir)d), rank, trd_dir_name((enum trd_dir)d));
		l = make_link((unsigned int)port);
		rc = trd_node_add_link(single, l, (enum trd_dir)d);
		if (rc != 0) {
			trd_link_free(l);
			die("port %d (%s): cannot attach: %s", port, trd_dir_name((enum trd_dir)d),
			    strerror(-rc));
		}
		wait_link((uint16_t)port);
	}
}

static void
build_net(unsigned int first, unsigned int last)
{
	struct trd_net_conf cf;
	struct trd_node_conf nc;

	node_conf_init(&nc);
	memset(&cf, 0, sizeof(cf));
	cf.torus = topo->torus;
	cf.links = TRD_NET_RING;
	cf.mtu = (uint16_t)node_opt.mtu;
	cf.node = &nc;
	net = trd_net_create(&cf);
	if (net == NULL)
		die("cannot build the %ux%ux%u torus: %s", topo->torus.dim[0], topo->torus.dim[1],
		    topo->torus.dim[2], rte_strerror(rte_errno));
	RTE_SET_USED(first);
	RTE_SET_USED(last);
}

static struct trd_node *
net_node_of_rank(unsigned int rank)
{
	int tr = trd_torus_rank(&topo->torus, topo->nodes[rank].coord);

	return tr < 0 ? NULL : trd_net_node(net, (unsigned int)tr);
}

static void
serve(unsigned int rank, struct trd_node *node)
{
	struct served *sv = &srv[n_srv];
	struct trd_vni_svc_conf vc;

	memset(&vc, 0, sizeof(vc));
	sv->node = node;
	sv->rank = rank;
	if (socket_path(sv->socket, sizeof(sv->socket), rank) != 0)
		die("--vni-socket %s: longer than %zu characters", node_opt.socket,
		    sizeof(sv->socket) - 1); /* checked before start-up: not reached */
	make_dirs(sv->socket);
	vc.node = node;
	vc.topo = topo;
	vc.socket = sv->socket;
	vc.staging = node_opt.staging;
	vc.max_pool = node_opt.max_pool;
	vc.max_ifs = node_opt.max_ifs;
	vc.inline_max = 960;
	vc.req_fifo = 0;
	vc.rep_fifo = 1;
	vc.rec_fifo = 0;
	vc.noproc_ms = node_opt.noproc_ms;
	vc.max_conns = node_opt.max_conns;
	vc.hdr_max = node_opt.hdr_max;
	vc.rx_max = node_opt.rx_max;
	vc.socket_mode = node_opt.socket_mode;
	vc.owners = node_opt.owners;
	vc.n_owners = node_opt.n_owners;
	sv->svc = trd_vni_svc_create(&vc);
	if (sv->svc == NULL)
		die("%s: cannot serve applications: %s", sv->socket,
		    rte_errno == EADDRINUSE ? "another engine serves this socket"
					    : rte_strerror(rte_errno));
	n_srv++;
	if (node_opt.capture != NULL) {
		struct trd_capture_conf cc = {
			.snaplen = node_opt.snaplen,
			.filter = node_opt.capture_filter,
			.file_size = node_opt.capture_size,
			.file_count = node_opt.capture_files,
			.limit = node_opt.capture_limit,
		};
		int rc = trd_node_capture_start(node, node_opt.capture, &cc);

		if (rc != 0)
			die("--capture %s: %s", node_opt.capture, strerror(-rc));
	}
	if (node_opt.impair) {
		int rc = trd_node_impair(node, &node_opt.impair_conf);

		if (rc != 0)
			die("--impair: %s", strerror(-rc));
	}
}

static int
ipc_probe(const struct rte_mp_msg *msg, const void *peer)
{
	RTE_SET_USED(msg);
	RTE_SET_USED(peer);
	return 0;
}

/* Start the rte_pdump server for dpdk-dumpcap, or say why it cannot attach: it is a DPDK
 * secondary process, which needs the multi-process channel (not --no-shconf, --in-memory) and
 * memory it can map at the primary's addresses (hugepages, not --no-huge). */
static void
pdump_start(void)
{
	const char *dir = rte_eal_get_runtime_dir(), *prefix = strrchr(dir, '/');
	const char *why = NULL;
	bool ipc = rte_mp_action_register("toroid_ipc_probe", ipc_probe) == 0;

	if (ipc)
		rte_mp_action_unregister("toroid_ipc_probe");
	prefix = prefix != NULL ? prefix + 1 : dir;
	if (rte_pdump_init() != 0)
		why = rte_strerror(rte_errno);
	else if (!ipc)
		why = "started with --no-shconf or --in-memory: no multi-process channel";
	else if (!rte_eal_has_hugepages())
		why = "started with --no-huge: a secondary process cannot map its memory";
	if (why != NULL)
		fprintf(stderr,
			"toroid-node: dpdk-dumpcap cannot attach to this engine (%s); capture in "
			"the engine instead: --capture FILE, or at run time "
			"toroid-dump --attach %s -w FILE\n",
			why, prefix);
}

/* ---- the loop ---- */

/* Threads runnable on the host (/proc/loadavg, "running/total"), read again at most every
 * 10 ms; 0 if unreadable. It sees what the attached processes do not: another engine and its
 * processes, other programs. */
static unsigned int
host_runnable(uint64_t now_us)
{
	static int fd = -2;
	static unsigned int last;
	static uint64_t next_us;
	char b[128];
	ssize_t n;

	if (now_us < next_us)
		return last;
	next_us = now_us + 10000;
	if (fd == -2)
		fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	last = 0;
	if (fd >= 0 && (n = pread(fd, b, sizeof(b) - 1, 0)) > 0) {
		b[n] = '\0';
		if (sscanf(b, "%*s %*s %*s %u/", &last) != 1)
			last = 0;
	}
	return last;
}

/* One attached process, as procs_where() sums it up over its interfaces. */
struct proc_seen {
	int pid;
	bool asleep;  /* an interface armed its eventfd: asleep in a wait */
	int compute;  /* the largest hint of its interfaces, -1 if none told */
	bool movable; /* one told TRD_VNI_HINT_MOVABLE */
};

/* Fill @p l's process fields (its host fields are zeroed: the caller's to set) with where the
 * attached processes run, read again at most every 10 ms (the cheap per-interface facts, then
 * one sched_getaffinity per process): each process once, whatever its interfaces; sharing if
 * it may run on a CPU of this thread (or its affinity cannot be read), else away, with the
 * CPUs it may run on and its computing (the largest hint of its interfaces;
 * NODE_COMPUTE_UNTOLD, movable, if none told). A process asleep in a wait counts as
 * sharing_asleep, or, away, not at all. */
static void
procs_where(uint64_t now_us, struct node_load *l)
{
	static struct node_load last;
	static uint64_t next_us;
	struct proc_seen seen[NODE_PIDS_SEEN];
	unsigned int n_seen = 0;
	cpu_set_t away_set;

	if (now_us >= next_us) {
		next_us = now_us + 10000;
		memset(&last, 0, sizeof(last));
		for (unsigned int i = 0; i < n_srv; i++)
			for (unsigned int k = 0; k < trd_vni_svc_n_ifs(srv[i].svc); k++) {
				struct trd_vni_svc_if_load f;
				unsigned int j;

				if (trd_vni_svc_if_load_get(srv[i].svc, k, &f) != 0 || f.dead)
					continue;
				for (j = 0; j < n_seen && seen[j].pid != f.pid; j++)
					;
				if (j == n_seen) {
					/* beyond the table: counted on the safe side */
					if (n_seen == NODE_PIDS_SEEN) {
						last.sharing++;
						continue;
					}
					seen[n_seen++] =
						(struct proc_seen){.pid = f.pid, .compute = -1};
				}
				seen[j].asleep |= f.asleep != 0;
				if (f.compute_permille > seen[j].compute)
					seen[j].compute = f.compute_permille;
				seen[j].movable |= f.movable != 0;
			}
		CPU_ZERO(&away_set);
		for (unsigned int j = 0; j < n_seen; j++) {
			cpu_set_t cpus, on_engine;

			CPU_ZERO(&cpus);
			CPU_ZERO(&on_engine);
			if (CPU_COUNT(&engine_set) != 0 &&
			    sched_getaffinity(seen[j].pid, sizeof(cpus), &cpus) == 0)
				CPU_AND(&on_engine, &cpus, &engine_set);
			if (CPU_COUNT(&engine_set) == 0 || CPU_COUNT(&on_engine) != 0 ||
			    CPU_COUNT(&cpus) == 0) {
				last.sharing++;
				last.sharing_asleep += seen[j].asleep;
			} else if (!seen[j].asleep) {
				last.away++;
				CPU_OR(&away_set, &away_set, &cpus);
				last.away_compute += seen[j].compute >= 0
							     ? (unsigned int)seen[j].compute
							     : NODE_COMPUTE_UNTOLD;
				last.away_movable |= seen[j].compute < 0 || seen[j].movable;
			}
		}
		last.away_cpus = (unsigned int)CPU_COUNT(&away_set);
	}
	*l = last;
}

/* Is the host crowded for this thread (crowd.h)? */
static bool
crowded(uint64_t now_us)
{
	procs_where(now_us, &load_seen);
	load_seen.host_cpus = host_cpus;
	load_seen.engine_cpus = engine_n;
	load_seen.runnable = host_runnable(now_us);
	crowd_seen = node_crowded(&load_seen);
	return crowd_seen;
}

/* How long the loop polls without work before it sleeps. --idle-us auto: on a node without
 * ports on a crowded host, a polling engine takes the CPU the processes need to compute and
 * to post: it sleeps almost at once, and a process's next command kicks it awake (the kick
 * eventfd). With ports, frames and the reliability timers need the node polled
 * (NODE_SLEEP_PORTS_US): 1 ms, as everywhere else (--idle-us N to choose). */
static unsigned int
idle_threshold_us(bool crowd)
{
	if (!node_opt.idle_auto || has_ports)
		return node_opt.idle_us;
	return crowd ? NODE_IDLE_SHARED_US : node_opt.idle_us;
}

/* Sleep until a process kicks the engine, a socket event, or sleep_next_us, which doubles from
 * one sleep to the next while nothing happens (up to sleep_max_us): an idle engine without
 * ports wakes about 10 times a second, not 5000. stats_in_us: time to the next statistics
 * line (UINT64_MAX: none). */
static void
sleep_politely(uint64_t stats_in_us)
{
	struct pollfd pf[NODE_MAX_SERVED];
	uint64_t us = sleep_next_us < stats_in_us ? sleep_next_us : stats_in_us, until = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < n_srv; i++) {
		uint64_t u;

		if (trd_vni_svc_sleep_until(srv[i].svc, &u) != 0)
			break;
		until = RTE_MIN(until, u);
	}
	if (i == n_srv && until != UINT64_MAX) {
		/* a send's back-off ends then: asleep no longer */
		uint64_t now = trd_time_us();

		us = RTE_MIN(us, until > now ? until - now : 0);
	}
	if (i == n_srv) {
		struct timespec ts = {.tv_sec = (time_t)(us / 1000000),
				      .tv_nsec = (long)(us % 1000000) * 1000};

		for (unsigned int k = 0; k < n_srv; k++) {
			pf[k].fd = trd_vni_svc_fd(srv[k].svc);
			pf[k].events = POLLIN;
			pf[k].revents = 0;
		}
		/* woken by an event: the next sleep starts short again */
		if (ppoll(pf, n_srv, &ts, NULL) != 0)
			sleep_next_us = RTE_MIN(NODE_SLEEP_FIRST_US, sleep_max_us);
		else if (sleep_next_us < sleep_max_us)
			sleep_next_us =
				sleep_next_us * 2 < sleep_max_us ? sleep_next_us * 2 : sleep_max_us;
	}
	for (unsigned int k = 0; k < i && k < n_srv; k++) {
		if (i == n_srv)
			trd_vni_svc_sleep_end(srv[k].svc);
		else
			trd_vni_svc_sleep_cancel(srv[k].svc); /* (another was busy: no sleep) */
	}
}

static void
run(void)
{
	uint64_t start = trd_time_us(), last_work = start, next_stats, last_stats = start;

	has_ports = net != NULL || trd_node_n_links(single) > 0;
	CPU_ZERO(&engine_set);
	if (pthread_getaffinity_np(pthread_self(), sizeof(engine_set), &engine_set) == 0 &&
	    CPU_COUNT(&engine_set) > 0)
		engine_n = (unsigned int)CPU_COUNT(&engine_set);
	else
		CPU_ZERO(&engine_set); /* unknown: every process shares it */
	sleep_max_us = node_opt.sleep_us;
	if (node_opt.sleep_auto)
		sleep_max_us = has_ports ? NODE_SLEEP_PORTS_US : NODE_SLEEP_NOPORTS_US;
	sleep_next_us = RTE_MIN(NODE_SLEEP_FIRST_US, sleep_max_us);
	next_stats = node_opt.stats_period_us ? start + node_opt.stats_period_us : UINT64_MAX;
	while (!node_stop) {
		long work = 0;
		uint64_t now;

		if (net != NULL)
			work += trd_net_poll(net);
		else
			work += RTE_MAX(trd_node_poll(single), 0);
		for (unsigned int i = 0; i < n_srv; i++)
			work += trd_vni_svc_poll(srv[i].svc);
		now = trd_time_us();
		if (work > 0) {
			last_work = now;
			sleep_next_us = RTE_MIN(NODE_SLEEP_FIRST_US, sleep_max_us);
		} else {
			bool crowd = node_opt.idle_auto && crowded(now);
			unsigned int idle_us = idle_threshold_us(crowd);

			if (idle_us != 0 && now - last_work >= idle_us)
				sleep_politely(next_stats > now ? next_stats - now : 0);
			else if (crowd)
				sched_yield(); /* polling, but a process on this CPU goes first */
		}
		if (now >= next_stats) {
			node_print_stats(srv, n_srv, &load_seen, crowd_seen,
					 (double)(now - start) * 1e-6,
					 (double)(now - last_stats) * 1e-6, false);
			last_stats = now;
			next_stats += node_opt.stats_period_us;
			if (next_stats <= now)
				next_stats = now + node_opt.stats_period_us;
		}
	}
	if (!node_opt.quiet)
		node_print_stats(srv, n_srv, &load_seen, crowd_seen,
				 (double)(trd_time_us() - start) * 1e-6, 0, true);
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	char err[512];
	int app_argc, rc;
	unsigned int first, last;
	char **app_argv;

	/* --help needs no EAL */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			node_usage(stdout, argv[0]);
			return 0;
		}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a sleep returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* everything that needs no EAL first: a bad command line or topology costs nothing */
	app_split_args(argc, argv, &app_argc, &app_argv);
	node_parse_args(app_argc, app_argv);
	topo = trd_topo_load(node_opt.topo_path, err, sizeof(err));
	if (topo == NULL) {
		fprintf(stderr, "toroid-node: %s\n", err);
		return 1;
	}
	if (node_opt.nodes_spec != NULL) {
		char *dash = strchr(node_opt.nodes_spec, '-');
		uint64_t va, vb;

		if (dash == NULL) {
			first = last = (unsigned int)app_opt_u64("--nodes", node_opt.nodes_spec, 0,
								 topo->n_nodes - 1);
		} else {
			char a[32];

			snprintf(a, sizeof(a), "%.*s", (int)(dash - node_opt.nodes_spec),
				 node_opt.nodes_spec);
			if ((size_t)(dash - node_opt.nodes_spec) >= sizeof(a) ||
			    app_parse_u64(a, false, 0, topo->n_nodes - 1, &va) != 0 ||
			    app_parse_u64(dash + 1, false, va, topo->n_nodes - 1, &vb) != 0)
				app_usage_error("--nodes %s: expected A-B, ranks 0..%u",
						node_opt.nodes_spec, topo->n_nodes - 1);
			first = (unsigned int)va;
			last = (unsigned int)vb;
		}
		if (last - first + 1 > NODE_MAX_SERVED)
			app_usage_error("--nodes %s: at most %u nodes", node_opt.nodes_spec,
					NODE_MAX_SERVED);
		if (first != last && strstr(node_opt.socket, "%r") == NULL)
			app_usage_error("--vni-socket %s: several nodes need %%r in the path",
					node_opt.socket);
	} else {
		int rank = node_rank(node_opt.node_spec);

		if (rank < 0)
			app_usage_error(
				"--node %s: no such node in %s (a rank 0..%u or a coordinate "
				"X,Y,Z)",
				node_opt.node_spec, node_opt.topo_path, topo->n_nodes - 1);
		first = last = (unsigned int)rank;
	}
	for (unsigned int r = first; r <= last; r++) {
		char path[sizeof(srv[0].socket)];

		if (socket_path(path, sizeof(path), r) != 0)
			app_usage_error(
				"--vni-socket %s: the path is longer than %zu characters (a "
				"Unix socket's limit)",
				node_opt.socket, sizeof(path) - 1);
	}

	/* the CPUs this process may run on, before EAL pins the main lcore to one of them */
	{
		cpu_set_t cpus;

		if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0)
			host_cpus = (unsigned int)CPU_COUNT(&cpus);
	}
	app_eal_init(argc, argv, "1024", &app_argc, &app_argv);
	eal_up = true;
	rc = trd_telemetry_init();
	if (rc != 0)
		fprintf(stderr, "toroid-node: telemetry commands not registered: %s\n",
			strerror(-rc));
	pdump_start();
	if (trd_default_pool(node_opt.nodes_spec ? 65536 : 32768) == NULL)
		die("no packet pool: %s (raise -m)", rte_strerror(rte_errno));

	if (node_opt.nodes_spec != NULL) {
		build_net(first, last);
		for (unsigned int r = first; r <= last; r++)
			serve(r, net_node_of_rank(r));
	} else {
		build_single(first);
		serve(first, single);
	}
	/* /toroid/vni,NODE: the services' counters, from a copy each one's loop takes */
	for (unsigned int i = 0; i < n_srv; i++) {
		rc = trd_vni_svc_telemetry_register(srv[i].svc);
		if (rc != 0) {
			fprintf(stderr, "toroid-node: /toroid/vni not registered: %s\n",
				strerror(-rc));
			break;
		}
	}
	for (unsigned int i = 0; i < n_srv; i++) {
		struct trd_coord c = trd_node_coord(srv[i].node);

		printf("toroid-node: %s (%u,%u,%u) of %ux%ux%u ready, applications at %s\n",
		       trd_node_name(srv[i].node), c.x, c.y, c.z, topo->torus.dim[0],
		       topo->torus.dim[1], topo->torus.dim[2], srv[i].socket);
	}
	fflush(stdout);
	run();
	teardown();
	return 0;
}
