/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-dump --attach: capture a running engine's frames the way dpdk-dumpcap would, but
 * through the engine's own capture (telemetry commands /toroid/capture/...), so it works
 * without hugepages or a shared configuration. The engine writes the file; this program asks
 * it to start, waits for SIGINT/SIGTERM (or --duration), asks it to stop and prints the
 * figures. No EAL: the telemetry socket is a Unix SOCK_SEQPACKET socket. docs/toroid-dump.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <toroid/toroid.h>
#include <toroid/wire.h>

#include "../common/app_args.h"
#include "dump.h"

#define ATTACH_REPLY_MAX 65536

static volatile sig_atomic_t attach_stop;

static void
attach_on_signal(int sig)
{
	(void)sig;
	attach_stop = 1;
}

/* The telemetry socket of file prefix @p target, as DPDK 22.11 names it (eal_get_runtime_dir:
 * /var/run for root, else $XDG_RUNTIME_DIR or /tmp; then dpdk/PREFIX), or @p target itself
 * when it is a path. */
static void
attach_socket_path(const char *target, char *out, size_t len)
{
	const char *base = getenv("XDG_RUNTIME_DIR");

	if (strchr(target, '/') != NULL) {
		snprintf(out, len, "%s", target);
		return;
	}
	if (getuid() == 0 || base == NULL)
		base = getuid() == 0 ? "/var/run" : "/tmp";
	snprintf(out, len, "%s/dpdk/%s/dpdk_telemetry.v2", base, target);
}

/* Connect and read the greeting. The socket, or -1 with a message printed. */
static int
attach_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char hello[1024];
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "toroid-dump: %s: path too long\n", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    recv(fd, hello, sizeof(hello), 0) <= 0) {
		fprintf(stderr,
			"toroid-dump: cannot reach the engine's telemetry at %s: %s (is it running, "
			"with this --file-prefix, as your user?)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Send @p cmd and read the answer into @p buf. 0 or -1. */
static int
attach_ask(int fd, const char *cmd, char *buf, size_t len)
{
	ssize_t n;

	if (send(fd, cmd, strlen(cmd), 0) < 0 || (n = recv(fd, buf, len - 1, 0)) <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The number after "KEY": in a telemetry answer; 0 if absent. */
static uint64_t
json_u64(const char *js, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(js, k);
	return p != NULL ? strtoull(p + strlen(k), NULL, 10) : 0; /* strtoull skips blanks */
}

/* The string after "KEY": (no escapes: telemetry strings hold none we write). */
static void
json_str(const char *js, const char *key, char *out, size_t len)
{
	char k[64];
	const char *p, *e;

	out[0] = '\0';
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(js, k);
	if (p == NULL)
		return;
	p += strlen(k);
	p += strspn(p, " ");
	if (*p++ != '"')
		return;
	e = strchr(p, '"');
	if (e != NULL)
		snprintf(out, len, "%.*s", (int)(e - p), p);
}

/* An answer that says ok 0: print its error. */
static int
attach_check(const char *what, const char *js)
{
	char err[256];

	if (json_u64(js, "ok") == 1)
		return 0;
	json_str(js, "error", err, sizeof(err));
	fprintf(stderr, "toroid-dump: %s: %s\n", what,
		err[0] ? err : "the engine does not know the command (an older toroid?)");
	return -1;
}

static void
attach_print_status(FILE *f, const char *js)
{
	char file[1100], filter[300];

	if (json_u64(js, "active") == 0) {
		fprintf(f, "no capture running\n");
		return;
	}
	json_str(js, "file", file, sizeof(file));
	json_str(js, "filter", filter, sizeof(filter));
	fprintf(f,
		"%" PRIu64 " frames (%" PRIu64 " bytes) recorded, %" PRIu64 " filtered out, "
		"%" PRIu64 " dropped%s; %" PRIu64 " file(s), now %s%s%s%s\n",
		json_u64(js, "frames"), json_u64(js, "bytes"), json_u64(js, "filtered"),
		json_u64(js, "dropped"), json_u64(js, "full") ? " (limit reached)" : "",
		json_u64(js, "files"), file, filter[0] ? "; filter '" : "", filter,
		filter[0] ? "'" : "");
}

/* ---- toroid terms (--type, --src, --dst, --node) as BPF on the torus header's bytes ---- */

#define HDR_AT(off) (14 + (off)) /* a torus header byte, behind the Ethernet header */

/* Append to @p buf (BPF text). */
static void bpf_add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
bpf_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= len - n)
		app_usage_error("the filter expression is too long");
}

/* X,Y,Z at header offset @p off (source 4, destination 8) as a BPF term. */
static void
bpf_coord(char *buf, size_t len, const char *opt, const char *s, unsigned int off)
{
	struct trd_coord c;

	if (dump_parse_coord(s, &c) != 0)
		app_usage_error("%s: bad coordinate '%s' (want X,Y,Z)", opt, s);
	bpf_add(buf, len, "ether[%u] = %u and ether[%u] = %u and ether[%u] = %u", HDR_AT(off), c.x,
		HDR_AT(off + 1), c.y, HDR_AT(off + 2), c.z);
}

/* --type T[,T...]: names (trd_pkt_type_name) or numbers. */
static void
bpf_types(char *buf, size_t len, const char *s)
{
	char list[256], *save = NULL, *tok;
	bool first = true;

	if (strlen(s) >= sizeof(list))
		app_usage_error("--type: list too long");
	strcpy(list, s);
	bpf_add(buf, len, "(");
	for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		int t = dump_parse_type(tok);

		if (t < 0)
			app_usage_error("--type: unknown packet type '%s' (see --list-types)", tok);
		bpf_add(buf, len, "%sether[%u] = %u", first ? "" : " or ", HDR_AT(1),
			(unsigned int)t);
		first = false;
	}
	bpf_add(buf, len, ")");
}

enum {
	A_ATTACH = 256,
	A_LIMIT,
	A_DURATION,
	A_STATUS,
	A_STOP,
	A_ROTATE,
	A_NODE,
	A_TYPE,
	A_SRC,
	A_DST,
	A_TNODE,
};

static const struct option attach_longopts[] = {
	{"attach", required_argument, NULL, A_ATTACH},
	{"write", required_argument, NULL, 'w'},
	{"snaplen", required_argument, NULL, 's'},
	{"limit", required_argument, NULL, A_LIMIT},
	{"duration", required_argument, NULL, A_DURATION},
	{"status", no_argument, NULL, A_STATUS},
	{"stop", no_argument, NULL, A_STOP},
	{"rotate", no_argument, NULL, A_ROTATE},
	{"engine-node", required_argument, NULL, A_NODE},
	{"type", required_argument, NULL, A_TYPE},
	{"src", required_argument, NULL, A_SRC},
	{"dst", required_argument, NULL, A_DST},
	{"node", required_argument, NULL, A_TNODE},
	{NULL, 0, NULL, 0},
};

struct attach_opts {
	const char *target, *wfile, *node, *limit;
	uint64_t snaplen, size, files;
	double duration;
	const char *once; /* --status, --stop, --rotate: that command, no capture */
	char filter[1024];
	char terms[768]; /* --type, --src, --dst, --node as BPF, ANDed with the expression */
};

static void
attach_parse(struct attach_opts *o, int argc, char **argv)
{
	size_t fl = 0;
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":w:s:C:W:", attach_longopts, NULL)) != -1) {
		switch (c) {
		case A_ATTACH:
			o->target = optarg;
			break;
		case 'w':
			o->wfile = optarg;
			break;
		case 's':
			o->snaplen = app_opt_u64("-s", optarg, 64, 65535);
			break;
		case 'C':
			o->size = app_opt_size("-C", optarg, 4096, 1ULL << 50);
			break;
		case 'W':
			o->files = app_opt_u64("-W", optarg, 1, 100000);
			break;
		case A_LIMIT:
			if (strcmp(optarg, "none") != 0)
				app_opt_size("--limit", optarg, 4096, 1ULL << 50);
			o->limit = optarg;
			break;
		case A_DURATION:
			o->duration = app_opt_double("--duration", optarg, 0.001, 1e9);
			break;
		case A_STATUS:
			o->once = "/toroid/capture/status";
			break;
		case A_STOP:
			o->once = "/toroid/capture/stop";
			break;
		case A_ROTATE:
			o->once = "/toroid/capture/rotate";
			break;
		case A_NODE:
			o->node = optarg;
			break;
		case A_TYPE:
		case A_SRC:
		case A_DST:
		case A_TNODE:
			bpf_add(o->terms, sizeof(o->terms), "%s", o->terms[0] ? " and " : "");
			if (c == A_TYPE)
				bpf_types(o->terms, sizeof(o->terms), optarg);
			else if (c == A_SRC || c == A_DST)
				bpf_coord(o->terms, sizeof(o->terms),
					  c == A_SRC ? "--src" : "--dst", optarg,
					  c == A_SRC ? 4 : 8);
			else {
				bpf_add(o->terms, sizeof(o->terms), "((");
				bpf_coord(o->terms, sizeof(o->terms), "--node", optarg, 4);
				bpf_add(o->terms, sizeof(o->terms), ") or (");
				bpf_coord(o->terms, sizeof(o->terms), "--node", optarg, 8);
				bpf_add(o->terms, sizeof(o->terms), "))");
			}
			break;
		default:
			app_getopt_error(c, argv);
		}
	}
	for (int i = optind; i < argc; i++) {
		int k = snprintf(o->filter + fl, sizeof(o->filter) - fl, "%s%s", fl ? " " : "",
				 argv[i]);

		if (k < 0 || (size_t)k >= sizeof(o->filter) - fl)
			app_usage_error("the filter expression is too long");
		fl += (size_t)k;
	}
	if (o->terms[0] != '\0') {
		/* torus frames only: the terms read the torus header */
		char user[sizeof(o->filter)];

		snprintf(user, sizeof(user), "%s", o->filter);
		o->filter[0] = '\0';
		if (user[0] != '\0')
			bpf_add(o->filter, sizeof(o->filter), "(%s) and ", user);
		bpf_add(o->filter, sizeof(o->filter), "ether proto 0x88b5 and %s", o->terms);
	}
	if (o->once == NULL && o->wfile == NULL)
		app_usage_error("--attach needs -w FILE (or --status, --stop, --rotate)");
	if (o->files != 0 && o->size == 0)
		app_usage_error("-W needs -C");
	if (o->filter[0] != '\0') {
		char err[256];

		if (trd_capture_filter_check(o->filter, err, sizeof(err)) != 0)
			app_usage_error("bad filter expression '%s': %s", o->filter, err);
	}
}

/* The start command for @p o, the file made absolute: the engine has its own directory. */
static int
attach_start_cmd(const struct attach_opts *o, char *cmd, size_t len)
{
	char cwd[PATH_MAX] = "";
	size_t n;

	if (o->wfile[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	n = (size_t)snprintf(cmd, len, "/toroid/capture/start,%s%s%s", cwd, cwd[0] ? "/" : "",
			     o->wfile);
	if (o->snaplen)
		n += (size_t)snprintf(cmd + n, len - n, ",snaplen=%" PRIu64, o->snaplen);
	if (o->size)
		n += (size_t)snprintf(cmd + n, len - n, ",size=%" PRIu64, o->size);
	if (o->files)
		n += (size_t)snprintf(cmd + n, len - n, ",files=%" PRIu64, o->files);
	if (o->limit)
		n += (size_t)snprintf(cmd + n, len - n, ",limit=%s", o->limit);
	if (o->node)
		n += (size_t)snprintf(cmd + n, len - n, ",node=%s", o->node);
	if (o->filter[0])
		n += (size_t)snprintf(cmd + n, len - n, ",filter=%s", o->filter);
	return n < len ? 0 : -1;
}

int
dump_attach_main(int argc, char **argv)
{
	struct attach_opts o;
	struct sigaction sa;
	char path[PATH_MAX], cmd[2048], *ans;
	struct timespec t0, now;
	int fd, rc = 0;

	attach_parse(&o, argc, argv);
	attach_socket_path(o.target, path, sizeof(path));
	ans = malloc(ATTACH_REPLY_MAX);
	if (ans == NULL)
		return 1;
	fd = attach_connect(path);
	if (fd < 0) {
		free(ans);
		return 1;
	}
	if (o.once != NULL) {
		if (attach_ask(fd, o.once, ans, ATTACH_REPLY_MAX) != 0 || attach_check(o.once, ans))
			rc = 1;
		else
			attach_print_status(stdout, ans);
		goto out;
	}
	if (attach_start_cmd(&o, cmd, sizeof(cmd)) != 0) {
		fprintf(stderr, "toroid-dump: -w %s: path too long\n", o.wfile);
		rc = 1;
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = attach_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (attach_ask(fd, cmd, ans, ATTACH_REPLY_MAX) != 0 ||
	    attach_check("/toroid/capture/start", ans) != 0) {
		rc = 1;
		goto out;
	}
	fprintf(stderr, "toroid-dump: capturing %" PRIu64 " node(s) of %s into %s%s\n",
		json_u64(ans, "nodes"), o.target, o.wfile, o.size ? " (rotating)" : "");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!attach_stop) {
		poll(NULL, 0, 100);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (o.duration > 0 &&
		    (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >=
			    o.duration)
			break;
	}
	if (attach_ask(fd, "/toroid/capture/stop", ans, ATTACH_REPLY_MAX) != 0) {
		fprintf(stderr, "toroid-dump: the engine went away; its capture ended with it\n");
		rc = 1;
		goto out;
	}
	if (attach_check("/toroid/capture/stop", ans) != 0)
		rc = 1;
	else
		attach_print_status(stderr, ans);
out:
	close(fd);
	free(ans);
	return rc;
}
