/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The topology file: an INI file parsed with libinih (docs/topology.md describes the format).
 *
 * Line numbers. The installed <ini.h> declares the handler without a line number
 * (INI_HANDLER_LINENO is a build-time choice of the library, invisible to us), and inih
 * never tells the handler about a section header, so an empty section or the line of a
 * section would be lost. We therefore feed inih through ini_parse_stream() with our own
 * line reader: the reader numbers each line, so when inih calls the handler the
 * current line is the one being parsed. The reader also sees section headers (with their
 * line), strips leading blanks (so inih never treats an indented line as a continuation
 * of the previous value), and rejects lines too long for inih's buffer instead of letting
 * inih split them, NUL bytes (a binary file) and files of more than LINES_MAX lines.
 *
 * Errors: the first one wins; it is kept as (line, message) and the reader then stops
 * the parse. inih's own syntax errors come back as its return value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include <toroid/topo.h>

#define MSG_MAX          256
#define MISSING_LIST_MAX 4 /* ranks named in a "missing node" message */

enum section_kind {
	SEC_NONE = 0, /* before the first section header */
	SEC_TORUS,
	SEC_NODE,
};

/* Keys of a [torus] section. */
enum torus_key { TK_DIMS, TK_MODE, TK_COUNT };
static const char *const torus_keys[TK_COUNT] = {"dims", "mode"};

/* Keys of a [node N] section: the six directions first, so key == enum trd_dir for them. */
enum node_key {
	NK_DIR0 = 0,
	NK_COORD = TRD_DIR_COUNT,
	NK_APP,
	NK_PROC,
	NK_MAC,
	NK_PROCS,
	NK_IP,
	NK_PREFIX,
	NK_NETMASK,
	NK_UDP_PORT,
	NK_GATEWAY,
	NK_COUNT,
};
static const char *const node_keys[NK_COUNT] = {
	"x+",   "x-",  "y+",    "y-", "z+",     "z-",      "coord",    "app",
	"proc", "mac", "procs", "ip", "prefix", "netmask", "udp_port", "gateway",
};

/* Most processes one node hosts (over all its `procs` keys). */
#define PROCS_MAX 64
/* Most lines in a file: a 64x64x64 torus written one key a line stays far below. */
#define LINES_MAX (1u << 24)

/* Where each part of a node came from, for messages; freed after the load. */
struct node_meta {
	unsigned int line;               /* line of [node N], 0 = not defined yet */
	unsigned int key_line[NK_COUNT]; /* line of each key, 0 = not given (procs: the first) */
	unsigned int n_procs;            /* processes its procs keys placed */
	int prefix_in_ip;                /* ip = A.B.C.D/N gave the prefix */
};

struct parse_ctx {
	FILE *f;
	const char *path;
	unsigned int line; /* number of the line last handed to inih */

	/* first error */
	unsigned int err_line;
	int err_no;
	char msg[MSG_MAX];

	/* current section */
	enum section_kind sec;
	unsigned int sec_line;
	unsigned int rank; /* SEC_NODE: its rank */

	/* [torus] */
	unsigned int torus_line; /* 0 = no [torus] yet */
	unsigned int torus_key_line[TK_COUNT];

	struct trd_topo *topo;     /* nodes allocated at the first [node] */
	struct node_meta *meta;    /* per rank */
	unsigned int *coord_owner; /* per coordinate rank: owning rank + 1, 0 = free */
	unsigned int *proc_line;   /* per topo->procs entry: the line that placed it */
	unsigned int procs_cap;
};

static int fail(struct parse_ctx *ctx, unsigned int line, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record the first error; returns 0 so handlers can `return fail(...)`. */
static int
fail(struct parse_ctx *ctx, unsigned int line, int err, const char *fmt, ...)
{
	va_list ap;

	if (ctx->err_no != 0)
		return 0;
	ctx->err_line = line;
	ctx->err_no = err;
	va_start(ap, fmt);
	vsnprintf(ctx->msg, sizeof(ctx->msg), fmt, ap);
	va_end(ap);
	return 0;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Parse a decimal number in [0, max], whole string, surrounding blanks allowed. */
static int
parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned int digit = (unsigned int)(*s - '0');

		if (digit > max || v > (max - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* Split @p s at @p seps into exactly @p n decimal numbers, each in [0, max]. */
static int
parse_uint_list(const char *s, const char *seps, unsigned int n, unsigned long max,
		unsigned long *out)
{
	char buf[64];
	char *p = buf;
	unsigned int i;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (i = 0; i < n; i++) {
		char *end = (i + 1 < n) ? strpbrk(p, seps) : NULL;
		int rc;

		if (i + 1 < n && end == NULL)
			return -EINVAL;
		if (end != NULL)
			*end = '\0';
		rc = parse_uint(p, max, &out[i]);
		if (rc < 0)
			return rc;
		if (end != NULL)
			p = end + 1;
	}
	return 0;
}

static unsigned int
hex_val(char c)
{
	return isdigit((unsigned char)c) ? (unsigned int)(c - '0')
					 : (unsigned int)(tolower((unsigned char)c) - 'a' + 10);
}

/* "02:00:00:00:00:01": exactly six two-digit hex bytes separated by ':'. */
static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int i;

	for (i = 0; i < 6; i++) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]))
			return -EINVAL;
		mac[i] = (uint8_t)(hex_val(s[0]) << 4 | hex_val(s[1]));
		s += 2;
		if (*s != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		s++;
	}
	return 0;
}

/* A dotted quad "10.1.0.2": four decimal numbers 0..255 (no leading zeros beyond one digit,
 * which some tools read as octal), into host byte order. */
static int
parse_ipv4(const char *s, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned int i = 0; i < 4; i++) {
		unsigned int b = 0, digits = 0;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		if (s[0] == '0' && isdigit((unsigned char)s[1]))
			return -EINVAL;
		for (; isdigit((unsigned char)*s); s++) {
			b = b * 10 + (unsigned int)(*s - '0');
			if (++digits > 3 || b > 255)
				return -EINVAL;
		}
		v = v << 8 | b;
		if (*s != (i < 3 ? '.' : '\0'))
			return -EINVAL;
		if (i < 3)
			s++;
	}
	*out = v;
	return 0;
}

/* The mask of prefix length @p len (0..32), host order. */
static uint32_t
prefix_mask(unsigned int len)
{
	return len == 0 ? 0 : ~(uint32_t)0 << (32 - len);
}

/* Why @p ip cannot be a host's unicast address, or NULL if it can. */
static const char *
ipv4_not_host(uint32_t ip)
{
	if (ip == 0)
		return "all zero";
	if (ip == 0xffffffffu)
		return "the broadcast address";
	if ((ip >> 24) == 127)
		return "a loopback address";
	if ((ip >> 28) >= 0xe)
		return "a multicast or reserved address";
	if ((ip >> 24) == 0)
		return "in 0.0.0.0/8 (this network)";
	return NULL;
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define IP_FMT       "%u.%u.%u.%u"
#define IP_ARGS(ip)  (ip) >> 24, ((ip) >> 16) & 0xff, ((ip) >> 8) & 0xff, (ip)&0xff

static int
find_key(const char *const *keys, unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcmp(keys[i], name) == 0)
			return (int)i;
	return -1;
}

static unsigned int
coord_rank(const struct trd_torus *t, struct trd_coord c)
{
	return (unsigned int)trd_torus_rank(t, c);
}

/* Place process (app, proc) on the current node, named on @p line. 1, or 0 on error. */
static int
proc_add(struct parse_ctx *ctx, uint32_t app, uint32_t proc, unsigned int line)
{
	struct trd_topo *topo = ctx->topo;
	struct trd_topo_proc *p;

	if (topo->n_procs == ctx->procs_cap) {
		unsigned int cap = ctx->procs_cap ? 2 * ctx->procs_cap : 64;
		struct trd_topo_proc *np = realloc(topo->procs, cap * sizeof(*np));
		unsigned int *nl;

		if (np == NULL)
			return fail(ctx, line, ENOMEM, "out of memory");
		topo->procs = np;
		nl = realloc(ctx->proc_line, cap * sizeof(*nl));
		if (nl == NULL)
			return fail(ctx, line, ENOMEM, "out of memory");
		ctx->proc_line = nl;
		ctx->procs_cap = cap;
	}
	p = &topo->procs[topo->n_procs];
	p->app_id = app;
	p->proc_id = proc;
	p->rank = ctx->rank;
	ctx->proc_line[topo->n_procs++] = line;
	return 1;
}

/* procs = A:P, A:P, ... (the key may be repeated: PROCS_MAX entries per node in all). 1, or 0
 * on error. */
static int
procs_key(struct parse_ctx *ctx, const char *value)
{
	struct trd_topo_node *node = &ctx->topo->nodes[ctx->rank];
	struct node_meta *m = &ctx->meta[ctx->rank];
	char buf[256];
	char *save = NULL, *tok;
	unsigned int n = 0;

	if (strlen(value) >= sizeof(buf))
		return fail(ctx, ctx->line, EINVAL, "procs list too long");
	strcpy(buf, value);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		unsigned long a, p;

		if (colon == NULL)
			return fail(
				ctx, ctx->line, EINVAL,
				"bad procs entry '%s' (expected APP:PROC, e.g. procs = 1:0,1:1)",
				trim(tok));
		*colon = '\0';
		if (parse_uint(tok, UINT32_MAX, &a) < 0 ||
		    parse_uint(colon + 1, UINT32_MAX, &p) < 0)
			return fail(ctx, ctx->line, EINVAL,
				    "bad procs entry '%s:%s' (APP and PROC are 0..%lu)", trim(tok),
				    trim(colon + 1), (unsigned long)UINT32_MAX);
		n++;
		if (++m->n_procs > PROCS_MAX)
			return fail(ctx, ctx->line, EINVAL, "more than %d processes on node %u",
				    PROCS_MAX, ctx->rank);
		if (m->n_procs == 1) {
			node->app_id = (uint32_t)a;
			node->proc_id = (uint32_t)p;
		}
		if (!proc_add(ctx, (uint32_t)a, (uint32_t)p, ctx->line))
			return 0;
	}
	if (n == 0)
		return fail(ctx, ctx->line, EINVAL, "empty procs (expected APP:PROC, ...)");
	return 1;
}

/* The IP keys of a node, together. 1, or 0 on error. */
static int
ip_finish(struct parse_ctx *ctx, struct trd_topo_node *node, const struct node_meta *m)
{
	unsigned int pl = m->key_line[NK_PREFIX] ? m->key_line[NK_PREFIX] : m->key_line[NK_NETMASK];
	uint32_t mask;

	if (!node->has_ip) {
		static const enum node_key need_ip[] = {NK_PREFIX, NK_NETMASK, NK_UDP_PORT,
							NK_GATEWAY};

		for (unsigned int i = 0; i < ARRAY_LEN(need_ip); i++)
			if (m->key_line[need_ip[i]] != 0)
				return fail(ctx, m->key_line[need_ip[i]], EINVAL,
					    "'%s' given but node %u has no ip",
					    node_keys[need_ip[i]], ctx->rank);
		return 1;
	}
	if (node->prefix == 0)
		node->prefix = 32;
	if (node->udp_port == 0)
		node->udp_port = TRD_TOPO_UDP_PORT;
	mask = prefix_mask(node->prefix);
	if (node->prefix <= 30 &&
	    ((node->ip & ~mask) == 0 || (node->ip & ~mask) == (~mask & 0xffffffffu)))
		return fail(ctx, pl ? pl : m->key_line[NK_IP], EINVAL,
			    "ip " IP_FMT " is the %s address of " IP_FMT "/%u", IP_ARGS(node->ip),
			    (node->ip & ~mask) == 0 ? "network" : "broadcast",
			    IP_ARGS(node->ip & mask), node->prefix);
	if (node->gateway != 0) {
		if (node->gateway == node->ip)
			return fail(ctx, m->key_line[NK_GATEWAY], EINVAL,
				    "gateway " IP_FMT " is the node's own ip",
				    IP_ARGS(node->gateway));
		if (node->prefix < 32 && (node->gateway & mask) != (node->ip & mask))
			return fail(ctx, m->key_line[NK_GATEWAY], EINVAL,
				    "gateway " IP_FMT " is outside the node's subnet " IP_FMT
				    "/%u (a gateway must be on the node's own segment)",
				    IP_ARGS(node->gateway), IP_ARGS(node->ip & mask), node->prefix);
	}
	return 1;
}

/* Checks that need the whole [node N] section; run when the next section starts or at EOF. */
static int
node_finish(struct parse_ctx *ctx)
{
	const struct trd_topo *topo = ctx->topo;
	struct trd_topo_node *node = &topo->nodes[ctx->rank];
	struct node_meta *m = &ctx->meta[ctx->rank];
	unsigned int cr = coord_rank(&topo->torus, node->coord);
	int d;

	if (ctx->coord_owner[cr] != 0) {
		unsigned int other = ctx->coord_owner[cr] - 1;
		const char *how = m->key_line[NK_COORD] ? "coordinate" : "default coordinate";

		return fail(ctx, m->key_line[NK_COORD] ? m->key_line[NK_COORD] : m->line, EINVAL,
			    "duplicate coordinate: node %u's %s %u,%u,%u is already node %u's "
			    "(line %u)",
			    ctx->rank, how, node->coord.x, node->coord.y, node->coord.z, other,
			    ctx->meta[other].line);
	}
	ctx->coord_owner[cr] = ctx->rank + 1;

	/* app/proc keys place one process on the node (procs = ... places several) */
	if (m->key_line[NK_APP] != 0 || m->key_line[NK_PROC] != 0) {
		unsigned int l = m->key_line[NK_APP] > m->key_line[NK_PROC] ? m->key_line[NK_APP]
									    : m->key_line[NK_PROC];

		if (!proc_add(ctx, node->app_id, node->proc_id, l))
			return 0;
	}

	if (topo->mode == TRD_TOPO_SWITCHED) {
		if (!node->has_mac && !node->has_ip)
			return fail(
				ctx, m->line, EINVAL,
				"node %u has no mac (switched mode needs one per node, or an ip)",
				ctx->rank);
		return ip_finish(ctx, node, m);
	}
	/* direct mode: every link this node has on the torus must be cabled */
	for (d = 0; d < TRD_DIR_COUNT; d++) {
		unsigned int dim = topo->torus.dim[d / 2];

		if (dim == 1 || (dim == 2 && (d & 1)))
			continue;
		if (node->port[d] == TRD_TOPO_NO_PORT)
			return fail(ctx, m->line, EINVAL,
				    "node %u has no port for %s (direct mode needs a port for "
				    "each torus link)",
				    ctx->rank, trd_dir_name((enum trd_dir)d));
	}
	return 1;
}

/* The [torus] section is complete: allocate the nodes. */
static int
torus_finish(struct parse_ctx *ctx, unsigned int line)
{
	struct trd_topo *topo = ctx->topo;
	unsigned int n, r;

	if (ctx->torus_key_line[TK_DIMS] == 0)
		return fail(ctx, ctx->torus_line, EINVAL,
			    "[torus] has no dims (e.g. dims = 4x4x4)");
	if (ctx->torus_key_line[TK_MODE] == 0)
		return fail(ctx, ctx->torus_line, EINVAL,
			    "[torus] has no mode (mode = switched or mode = direct)");
	n = trd_torus_size(&topo->torus);
	topo->n_nodes = n;
	topo->nodes = calloc(n, sizeof(*topo->nodes));
	ctx->meta = calloc(n, sizeof(*ctx->meta));
	ctx->coord_owner = calloc(n, sizeof(*ctx->coord_owner));
	if (topo->nodes == NULL || ctx->meta == NULL || ctx->coord_owner == NULL)
		return fail(ctx, line, ENOMEM, "out of memory for %u nodes", n);
	for (r = 0; r < n; r++) {
		int d;

		topo->nodes[r].rank = r;
		trd_torus_coord(&topo->torus, r, &topo->nodes[r].coord);
		for (d = 0; d < TRD_DIR_COUNT; d++)
			topo->nodes[r].port[d] = TRD_TOPO_NO_PORT;
	}
	return 1;
}

/* A section header was read (name already trimmed). Returns 1, or 0 on error. */
static int
section_begin(struct parse_ctx *ctx, const char *name, unsigned int line)
{
	unsigned long rank;

	if (ctx->sec == SEC_NODE && !node_finish(ctx))
		return 0;
	ctx->sec_line = line;

	if (strcmp(name, "torus") == 0) {
		if (ctx->torus_line != 0)
			return fail(ctx, line, EINVAL,
				    "duplicate [torus] section (first at line %u)",
				    ctx->torus_line);
		ctx->sec = SEC_TORUS;
		ctx->torus_line = line;
		return 1;
	}
	if (strncmp(name, "node", 4) != 0 || (name[4] != '\0' && !isspace((unsigned char)name[4])))
		return fail(ctx, line, EINVAL,
			    "unknown section [%s] (expected [torus] or [node RANK])", name);
	switch (parse_uint(name + 4, UINT32_MAX, &rank)) {
	case 0:
		break;
	case -ERANGE:
		return fail(ctx, line, EINVAL, "rank out of range in [%s]", name);
	default:
		return fail(ctx, line, EINVAL, "bad rank in [%s] (expected [node RANK])", name);
	}
	if (ctx->torus_line == 0)
		return fail(ctx, line, EINVAL, "[node %lu] before the [torus] section", rank);
	if (ctx->topo->nodes == NULL && !torus_finish(ctx, line))
		return 0;
	if (rank >= ctx->topo->n_nodes)
		return fail(ctx, line, EINVAL,
			    "rank %lu out of range (a %ux%ux%u torus has ranks 0..%u)", rank,
			    ctx->topo->torus.dim[0], ctx->topo->torus.dim[1],
			    ctx->topo->torus.dim[2], ctx->topo->n_nodes - 1);
	if (ctx->meta[rank].line != 0)
		return fail(ctx, line, EINVAL, "duplicate rank: [node %lu] already at line %u",
			    rank, ctx->meta[rank].line);
	ctx->sec = SEC_NODE;
	ctx->rank = (unsigned int)rank;
	ctx->meta[rank].line = line;
	return 1;
}

static int
torus_key(struct parse_ctx *ctx, const char *name, const char *value)
{
	struct trd_topo *topo = ctx->topo;
	int k = find_key(torus_keys, TK_COUNT, name);
	unsigned long dim[3];

	if (k < 0)
		return fail(ctx, ctx->line, EINVAL,
			    "unknown key '%s' in [torus] (expected dims or mode)", name);
	if (ctx->torus_key_line[k] != 0)
		return fail(ctx, ctx->line, EINVAL, "duplicate key '%s' (first at line %u)", name,
			    ctx->torus_key_line[k]);
	ctx->torus_key_line[k] = ctx->line;

	switch ((enum torus_key)k) {
	case TK_DIMS:
		if (parse_uint_list(value, "xX", 3, TRD_TORUS_MAX_DIM, dim) < 0 ||
		    trd_torus_init(&topo->torus, (unsigned int)dim[0], (unsigned int)dim[1],
				   (unsigned int)dim[2]) < 0)
			return fail(ctx, ctx->line, EINVAL,
				    "bad dims '%s' (expected XxYxZ, each size 1..%d)", value,
				    TRD_TORUS_MAX_DIM);
		return 1;
	case TK_MODE:
		if (strcasecmp(value, "switched") == 0)
			topo->mode = TRD_TOPO_SWITCHED;
		else if (strcasecmp(value, "direct") == 0)
			topo->mode = TRD_TOPO_DIRECT;
		else
			return fail(ctx, ctx->line, EINVAL,
				    "bad mode '%s' (expected switched or direct)", value);
		return 1;
	case TK_COUNT:
		break;
	}
	return fail(ctx, ctx->line, EINVAL, "internal error: torus key %d", k);
}

static int
port_key(struct parse_ctx *ctx, enum trd_dir d, const char *value)
{
	const struct trd_torus *t = &ctx->topo->torus;
	struct trd_topo_node *node = &ctx->topo->nodes[ctx->rank];
	const char *name = trd_dir_name(d);
	unsigned int dim = t->dim[d / 2];
	unsigned long port;
	int rc, o;

	if (ctx->topo->mode == TRD_TOPO_SWITCHED)
		return fail(ctx, ctx->line, EINVAL,
			    "port '%s' given in switched mode (ports are for mode = direct; "
			    "switched nodes have a mac)",
			    name);
	if (dim == 1)
		return fail(ctx, ctx->line, EINVAL,
			    "port '%s' given but dimension %c has size 1 (no link)", name,
			    "xyz"[d / 2]);
	if (dim == 2 && (d & 1))
		return fail(ctx, ctx->line, EINVAL,
			    "port '%s' given but dimension %c has size 2: its single link is %c+",
			    name, "xyz"[d / 2], "xyz"[d / 2]);
	rc = parse_uint(value, UINT16_MAX, &port);
	if (rc < 0)
		return fail(ctx, ctx->line, EINVAL, "bad port '%s' for %s (expected 0..%u)", value,
			    name, UINT16_MAX);
	for (o = 0; o < TRD_DIR_COUNT; o++)
		if (node->port[o] == (int)port)
			return fail(ctx, ctx->line, EINVAL,
				    "port %lu cabled twice: node %u already uses it for %s "
				    "(line %u)",
				    port, ctx->rank, trd_dir_name((enum trd_dir)o),
				    ctx->meta[ctx->rank].key_line[o]);
	node->port[d] = (int)port;
	return 1;
}

/* The IP keys of a node (node_key() checked the mode and duplicates). 1, or 0 on error. */
static int
ip_key(struct parse_ctx *ctx, enum node_key k, const char *value)
{
	struct trd_topo_node *node = &ctx->topo->nodes[ctx->rank];
	struct node_meta *m = &ctx->meta[ctx->rank];
	unsigned long v[1];

	switch (k) {
	case NK_IP: {
		char buf[32];
		char *slash;

		if (strlen(value) >= sizeof(buf))
			return fail(ctx, ctx->line, EINVAL, "bad ip '%s' (expected A.B.C.D)",
				    value);
		strcpy(buf, value);
		slash = strchr(buf, '/');
		if (slash != NULL) {
			if (m->key_line[NK_PREFIX] || m->key_line[NK_NETMASK])
				return fail(ctx, ctx->line, EINVAL,
					    "the subnet is given twice (ip = A.B.C.D/N, prefix "
					    "and netmask exclude each other)");
			*slash = '\0';
			if (parse_uint(slash + 1, 32, v) < 0 || v[0] == 0)
				return fail(ctx, ctx->line, EINVAL,
					    "bad prefix in ip '%s' (expected A.B.C.D/N, N 1..32)",
					    value);
			node->prefix = (uint8_t)v[0];
			m->prefix_in_ip = 1;
		}
		if (parse_ipv4(buf, &node->ip) < 0)
			return fail(ctx, ctx->line, EINVAL,
				    "bad ip '%s' (expected A.B.C.D, e.g. 10.1.0.2)", value);
		if (ipv4_not_host(node->ip) != NULL)
			return fail(ctx, ctx->line, EINVAL, "bad ip '%s': %s", value,
				    ipv4_not_host(node->ip));
		node->has_ip = 1;
		return 1;
	}
	case NK_PREFIX:
		if (parse_uint(value, 32, v) < 0 || v[0] == 0)
			return fail(ctx, ctx->line, EINVAL, "bad prefix '%s' (expected 1..32)",
				    value);
		node->prefix = (uint8_t)v[0];
		return 1;
	case NK_NETMASK: {
		uint32_t mask;
		unsigned int len = 0;

		if (parse_ipv4(value, &mask) < 0)
			return fail(ctx, ctx->line, EINVAL,
				    "bad netmask '%s' (expected A.B.C.D, e.g. 255.255.255.0)",
				    value);
		while (len < 32 && (mask & (0x80000000u >> len)))
			len++;
		if (len == 0 || mask != prefix_mask(len))
			return fail(ctx, ctx->line, EINVAL,
				    "bad netmask '%s' (the ones must be contiguous and first, e.g. "
				    "255.255.255.0)",
				    value);
		node->prefix = (uint8_t)len;
		return 1;
	}
	case NK_UDP_PORT:
		if (parse_uint(value, UINT16_MAX, v) < 0 || v[0] == 0)
			return fail(ctx, ctx->line, EINVAL, "bad udp_port '%s' (expected 1..65535)",
				    value);
		node->udp_port = (uint16_t)v[0];
		return 1;
	case NK_GATEWAY:
		if (parse_ipv4(value, &node->gateway) < 0)
			return fail(ctx, ctx->line, EINVAL,
				    "bad gateway '%s' (expected A.B.C.D, e.g. 10.1.0.1)", value);
		if (ipv4_not_host(node->gateway) != NULL)
			return fail(ctx, ctx->line, EINVAL, "bad gateway '%s': %s", value,
				    ipv4_not_host(node->gateway));
		return 1;
	default:
		break;
	}
	return fail(ctx, ctx->line, EINVAL, "internal error: ip key %d", (int)k);
}

static int
node_key(struct parse_ctx *ctx, const char *name, const char *value)
{
	const struct trd_torus *t = &ctx->topo->torus;
	struct trd_topo_node *node = &ctx->topo->nodes[ctx->rank];
	struct node_meta *m = &ctx->meta[ctx->rank];
	int k = find_key(node_keys, NK_COUNT, name);
	unsigned long v[3];
	int rc;

	if (k < 0)
		return fail(ctx, ctx->line, EINVAL,
			    "unknown key '%s' in [node %u] (expected coord, app, proc, procs, "
			    "mac, ip, prefix, netmask, udp_port, gateway, x+, x-, y+, y-, z+ or "
			    "z-)",
			    name, ctx->rank);
	/* procs may be repeated: each line adds processes (a line holds at most 198 characters) */
	if (m->key_line[k] != 0 && k != NK_PROCS)
		return fail(ctx, ctx->line, EINVAL, "duplicate key '%s' (first at line %u)", name,
			    m->key_line[k]);

	if ((k == NK_PROCS && (m->key_line[NK_APP] || m->key_line[NK_PROC])) ||
	    ((k == NK_APP || k == NK_PROC) && m->key_line[NK_PROCS]))
		return fail(ctx, ctx->line, EINVAL,
			    "procs and app/proc exclude each other (list every process in procs)");

	if (k >= NK_IP && k <= NK_GATEWAY && ctx->topo->mode != TRD_TOPO_SWITCHED)
		return fail(ctx, ctx->line, EINVAL,
			    "'%s' given in direct mode (IP addresses are for mode = switched; a "
			    "direct link over IP is set up with trd_link_udp_encap())",
			    name);
	if ((k == NK_PREFIX && (m->key_line[NK_NETMASK] || m->prefix_in_ip)) ||
	    (k == NK_NETMASK && (m->key_line[NK_PREFIX] || m->prefix_in_ip)))
		return fail(ctx, ctx->line, EINVAL,
			    "the subnet is given twice (ip = A.B.C.D/N, prefix and netmask "
			    "exclude each other)");

	switch ((enum node_key)k) {
	case NK_IP:
	case NK_PREFIX:
	case NK_NETMASK:
	case NK_UDP_PORT:
	case NK_GATEWAY:
		if (!ip_key(ctx, (enum node_key)k, value))
			return 0;
		break;
	case NK_PROCS:
		if (!procs_key(ctx, value))
			return 0;
		if (m->key_line[k] != 0)
			return 1; /* keep the line of the first */
		break;
	case NK_COORD:
		if (parse_uint_list(value, ",", 3, 255, v) < 0)
			return fail(ctx, ctx->line, EINVAL, "bad coord '%s' (expected X,Y,Z)",
				    value);
		if (v[0] >= t->dim[0] || v[1] >= t->dim[1] || v[2] >= t->dim[2])
			return fail(ctx, ctx->line, EINVAL,
				    "coordinate %lu,%lu,%lu outside the %ux%ux%u torus", v[0], v[1],
				    v[2], t->dim[0], t->dim[1], t->dim[2]);
		node->coord.x = (uint8_t)v[0];
		node->coord.y = (uint8_t)v[1];
		node->coord.z = (uint8_t)v[2];
		break;
	case NK_APP:
	case NK_PROC:
		rc = parse_uint(value, UINT32_MAX, v);
		if (rc < 0)
			return fail(ctx, ctx->line, EINVAL, "bad %s '%s' (expected 0..%lu)", name,
				    value, (unsigned long)UINT32_MAX);
		if (k == NK_APP)
			node->app_id = (uint32_t)v[0];
		else
			node->proc_id = (uint32_t)v[0];
		break;
	case NK_MAC:
		if (parse_mac(value, node->mac) < 0)
			return fail(ctx, ctx->line, EINVAL,
				    "bad mac '%s' (expected six hex bytes, 02:00:00:00:00:01)",
				    value);
		if (node->mac[0] & 1)
			return fail(ctx, ctx->line, EINVAL,
				    "bad mac '%s': a multicast address cannot name a node", value);
		if (!(node->mac[0] | node->mac[1] | node->mac[2] | node->mac[3] | node->mac[4] |
		      node->mac[5]))
			return fail(ctx, ctx->line, EINVAL, "bad mac '%s': all zero", value);
		node->has_mac = 1;
		break;
	case NK_COUNT:
		return fail(ctx, ctx->line, EINVAL, "internal error: node key %d", k);
	default: /* a direction */
		if (!port_key(ctx, (enum trd_dir)k, value))
			return 0;
		break;
	}
	m->key_line[k] = ctx->line;
	return 1;
}

/* inih's handler: one call per `name = value` line, on line ctx->line. */
static int
handle(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;

	(void)section; /* our reader tracks the section, with its line */
	if (ctx->err_no != 0)
		return 0;
	switch (ctx->sec) {
	case SEC_TORUS:
		return torus_key(ctx, name, value);
	case SEC_NODE:
		return node_key(ctx, name, value);
	case SEC_NONE:
		break;
	}
	return fail(ctx, ctx->line, EINVAL, "key '%s' outside any section (start with [torus])",
		    name);
}

/*
 * inih's reader: one line, plus line numbering, section headers and the checks described at
 * the top of this file. Returning NULL ends the parse (EOF, or an error was recorded).
 */
static char *
read_line(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	size_t len, skip;
	char *p;

	if (ctx->err_no != 0 || num < 2)
		return NULL;
	/* fgets() would not tell a NUL byte from the end of the line (a binary file such as
	 * /dev/zero would be read forever as empty lines): read byte by byte */
	len = 0;
	for (;;) {
		int c = getc(ctx->f);

		if (c == EOF) {
			if (len == 0)
				return NULL;
			break;
		}
		if (c == '\0') {
			fail(ctx, ctx->line + 1, EINVAL, "NUL byte: not a text file");
			return NULL;
		}
		if (len == (size_t)num - 1) {
			fail(ctx, ctx->line + 1, EINVAL,
			     "line too long (at most %d characters; repeat a procs key to list more "
			     "processes)",
			     num - 2);
			return NULL;
		}
		str[len++] = (char)c;
		if (c == '\n')
			break;
	}
	str[len] = '\0';
	if (ctx->line >= LINES_MAX) {
		fail(ctx, ctx->line + 1, EINVAL, "more than %u lines", LINES_MAX);
		return NULL;
	}
	ctx->line++;
	/* a UTF-8 byte order mark; we remove it so the section check below sees the line */
	if (ctx->line == 1 && len >= 3 && memcmp(str, "\xEF\xBB\xBF", 3) == 0) {
		memmove(str, str + 3, len - 2);
		len -= 3;
	}
	for (skip = 0; skip < len && (str[skip] == ' ' || str[skip] == '\t'); skip++)
		;
	if (skip > 0) {
		memmove(str, str + skip, len - skip + 1);
		len -= skip;
	}
	if (str[0] == '[') {
		char name[MSG_MAX / 2];

		p = strchr(str, ']');
		if (p == NULL) {
			fail(ctx, ctx->line, EINVAL, "section header without ']'");
			return NULL;
		}
		/* a copy: trim() writes, and inih parses the line after us */
		snprintf(name, sizeof(name), "%.*s", (int)(p - str - 1), str + 1);
		if (!section_begin(ctx, trim(name), ctx->line))
			return NULL;
	}
	return str;
}

/* Checks that need the whole file. */
static int
file_finish(struct parse_ctx *ctx)
{
	struct trd_topo *topo = ctx->topo;
	unsigned int eof_line = ctx->line > 0 ? ctx->line : 1;
	unsigned int r, n_missing = 0, first = 0;
	char list[64] = "";
	size_t used = 0;

	if (ctx->sec == SEC_NODE && !node_finish(ctx))
		return 0;
	if (ctx->torus_line == 0)
		return fail(ctx, eof_line, EINVAL, "no [torus] section");
	if (topo->nodes == NULL && !torus_finish(ctx, eof_line))
		return 0;
	for (r = 0; r < topo->n_nodes; r++) {
		if (ctx->meta[r].line != 0)
			continue;
		if (n_missing == 0)
			first = r;
		if (n_missing > 0 && n_missing < MISSING_LIST_MAX && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, ", %u", r);
		n_missing++;
	}
	if (n_missing > 0)
		return fail(ctx, eof_line, EINVAL,
			    "missing node %u%s%s (%u of %u missing; a %ux%ux%u torus needs "
			    "[node 0] to [node %u])",
			    first, list, n_missing > MISSING_LIST_MAX ? ", ..." : "", n_missing,
			    topo->n_nodes, topo->torus.dim[0], topo->torus.dim[1],
			    topo->torus.dim[2], topo->n_nodes - 1);
	return 1;
}

struct mac_entry {
	uint8_t mac[6];
	unsigned int rank;
};

static int
mac_cmp(const void *a, const void *b)
{
	const struct mac_entry *x = a, *y = b;
	int c = memcmp(x->mac, y->mac, sizeof(x->mac));

	if (c != 0)
		return c;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Two nodes with one MAC would make switched delivery ambiguous: reject, at the later key. */
static int
check_unique_macs(struct parse_ctx *ctx)
{
	const struct trd_topo *topo = ctx->topo;
	struct mac_entry *e;
	unsigned int i, n = 0, best_line = 0, best_a = 0, best_b = 0;

	e = calloc(topo->n_nodes, sizeof(*e));
	if (e == NULL)
		return fail(ctx, 0, ENOMEM, "out of memory");
	for (i = 0; i < topo->n_nodes; i++) {
		if (!topo->nodes[i].has_mac)
			continue;
		memcpy(e[n].mac, topo->nodes[i].mac, 6);
		e[n++].rank = i;
	}
	qsort(e, n, sizeof(*e), mac_cmp);
	for (i = 1; i < n; i++) {
		unsigned int la, lb, line;

		if (memcmp(e[i - 1].mac, e[i].mac, 6) != 0)
			continue;
		la = ctx->meta[e[i - 1].rank].key_line[NK_MAC];
		lb = ctx->meta[e[i].rank].key_line[NK_MAC];
		line = la > lb ? la : lb;
		if (best_line == 0 || line < best_line) {
			best_line = line;
			best_a = la > lb ? e[i].rank : e[i - 1].rank; /* first user */
			best_b = la > lb ? e[i - 1].rank : e[i].rank; /* the duplicate */
		}
	}
	free(e);
	if (best_line != 0) {
		const uint8_t *m = topo->nodes[best_b].mac;

		return fail(ctx, best_line, EINVAL,
			    "duplicate mac %02x:%02x:%02x:%02x:%02x:%02x: node %u and node %u "
			    "(line %u)",
			    m[0], m[1], m[2], m[3], m[4], m[5], best_b, best_a,
			    ctx->meta[best_a].key_line[NK_MAC]);
	}
	return 1;
}

struct ip_entry {
	uint32_t ip;
	uint16_t port;
	unsigned int rank;
};

static int
ip_cmp(const void *a, const void *b)
{
	const struct ip_entry *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Switched mode over IP: a node without an ip can only be reached by its mac, and only send
 * plain frames, so then every node needs a mac; and two nodes cannot share an address and
 * port. Reported at the later line. */
static int
check_ip_addressing(struct parse_ctx *ctx)
{
	const struct trd_topo *topo = ctx->topo;
	struct ip_entry *e;
	unsigned int i, n = 0, no_ip = UINT32_MAX, no_mac = UINT32_MAX;
	unsigned int best_line = 0, best_a = 0, best_b = 0;

	for (i = 0; i < topo->n_nodes; i++) {
		if (!topo->nodes[i].has_ip && no_ip == UINT32_MAX)
			no_ip = i;
		if (!topo->nodes[i].has_mac && no_mac == UINT32_MAX)
			no_mac = i;
	}
	if (no_ip != UINT32_MAX && no_mac != UINT32_MAX)
		return fail(ctx, ctx->meta[no_mac].line, EINVAL,
			    "node %u has no mac, but node %u has no ip: every node needs a mac "
			    "unless every node has an ip",
			    no_mac, no_ip);
	e = calloc(topo->n_nodes, sizeof(*e));
	if (e == NULL)
		return fail(ctx, 0, ENOMEM, "out of memory");
	for (i = 0; i < topo->n_nodes; i++) {
		if (!topo->nodes[i].has_ip)
			continue;
		e[n].ip = topo->nodes[i].ip;
		e[n].port = topo->nodes[i].udp_port;
		e[n++].rank = i;
	}
	qsort(e, n, sizeof(*e), ip_cmp);
	for (i = 1; i < n; i++) {
		unsigned int la, lb, line;

		if (e[i - 1].ip != e[i].ip)
			continue;
		la = ctx->meta[e[i - 1].rank].key_line[NK_IP];
		lb = ctx->meta[e[i].rank].key_line[NK_IP];
		line = la > lb ? la : lb;
		if (best_line == 0 || line < best_line) {
			best_line = line;
			best_a = la > lb ? e[i].rank : e[i - 1].rank;
			best_b = la > lb ? e[i - 1].rank : e[i].rank;
		}
	}
	free(e);
	if (best_line != 0)
		return fail(ctx, best_line, EINVAL,
			    "duplicate ip " IP_FMT ": node %u and node %u (line %u); each node "
			    "needs an address of its own, whatever its udp_port",
			    IP_ARGS(topo->nodes[best_b].ip), best_b, best_a,
			    ctx->meta[best_a].key_line[NK_IP]);
	return 1;
}

static int
proc_cmp(const void *a, const void *b)
{
	const struct trd_topo_proc *x = a, *y = b;

	if (x->app_id != y->app_id)
		return x->app_id < y->app_id ? -1 : 1;
	if (x->proc_id != y->proc_id)
		return x->proc_id < y->proc_id ? -1 : 1;
	return 0;
}

/* A process lives on one node: reject a second placement, at the later line. Then sort the
 * table by (app, proc) for trd_topo_find_proc(). */
static int
check_unique_procs(struct parse_ctx *ctx)
{
	struct trd_topo *topo = ctx->topo;
	unsigned int n = topo->n_procs, i, j;
	unsigned int *order;

	if (n == 0)
		return 1;
	/* sort indices, so the lines stay with their entries */
	order = malloc(n * sizeof(*order));
	if (order == NULL)
		return fail(ctx, 0, ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 1; i < n; i++) { /* insertion sort by (app, proc, line) */
		unsigned int x = order[i];

		for (j = i; j > 0; j--) {
			int c = proc_cmp(&topo->procs[order[j - 1]], &topo->procs[x]);

			if (c < 0 || (c == 0 && ctx->proc_line[order[j - 1]] <= ctx->proc_line[x]))
				break;
			order[j] = order[j - 1];
		}
		order[j] = x;
	}
	for (i = 1; i < n; i++) {
		const struct trd_topo_proc *a = &topo->procs[order[i - 1]];
		const struct trd_topo_proc *b = &topo->procs[order[i]];

		if (proc_cmp(a, b) == 0) {
			unsigned int la = ctx->proc_line[order[i - 1]];
			unsigned int lb = ctx->proc_line[order[i]];

			free(order);
			return fail(ctx, lb, EINVAL,
				    "process %u:%u placed twice: node %u and node %u (line %u)",
				    b->app_id, b->proc_id, b->rank, a->rank, la);
		}
	}
	free(order);
	qsort(topo->procs, n, sizeof(topo->procs[0]), proc_cmp);
	return 1;
}

/** Load a topology file; see topo.h. */
struct trd_topo *
trd_topo_load(const char *path, char *err, size_t errlen)
{
	struct parse_ctx ctx;
	int rc, saved;

	memset(&ctx, 0, sizeof(ctx));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "(null): no file name");
		errno = EINVAL;
		return NULL;
	}
	ctx.path = path;
	ctx.f = fopen(path, "r");
	if (ctx.f == NULL) {
		saved = errno;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	ctx.topo = calloc(1, sizeof(*ctx.topo));
	if (ctx.topo == NULL) {
		fclose(ctx.f);
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}

	rc = ini_parse_stream(read_line, &ctx, handle, &ctx);
	if (ferror(ctx.f))
		fail(&ctx, ctx.line + 1, EIO, "read error");
	fclose(ctx.f);

	if (rc == -2) {
		ctx.err_no = 0; /* inih's allocation failure overrides */
		fail(&ctx, ctx.line, ENOMEM, "out of memory");
	} else if (rc > 0 && (ctx.err_no == 0 || (unsigned int)rc < ctx.err_line)) {
		/* inih's own syntax error, earlier than any of ours */
		ctx.err_no = 0;
		fail(&ctx, (unsigned int)rc, EINVAL,
		     "syntax error (expected [section], key = value, or a ; or # comment)");
	}
	if (ctx.err_no == 0 && file_finish(&ctx) &&
	    (ctx.topo->mode != TRD_TOPO_SWITCHED ||
	     (check_unique_macs(&ctx) && check_ip_addressing(&ctx))))
		check_unique_procs(&ctx);

	free(ctx.meta);
	free(ctx.proc_line);
	free(ctx.coord_owner);
	if (ctx.err_no != 0) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s:%u: %s", path, ctx.err_line, ctx.msg);
		trd_topo_free(ctx.topo);
		errno = ctx.err_no;
		return NULL;
	}
	return ctx.topo;
}

/** Free a topology from trd_topo_load(); NULL is a no-op. */
void
trd_topo_free(struct trd_topo *topo)
{
	if (topo == NULL)
		return;
	free(topo->nodes);
	free(topo->procs);
	free(topo);
}

/** Node at @p c, or NULL. */
const struct trd_topo_node *
trd_topo_node_at(const struct trd_topo *topo, struct trd_coord c)
{
	const struct trd_topo_node *node;
	unsigned int r;
	int rank;

	if (topo == NULL || topo->nodes == NULL)
		return NULL;
	rank = trd_torus_rank(&topo->torus, c);
	if (rank < 0 || (unsigned int)rank >= topo->n_nodes)
		return NULL;
	/* ranks usually follow the coordinate order; a file may permute them */
	node = &topo->nodes[rank];
	if (node->coord.x == c.x && node->coord.y == c.y && node->coord.z == c.z)
		return node;
	for (r = 0; r < topo->n_nodes; r++) {
		node = &topo->nodes[r];
		if (node->coord.x == c.x && node->coord.y == c.y && node->coord.z == c.z)
			return node;
	}
	return NULL;
}

/** Node hosting process (@p app, @p proc); see topo.h. */
int
trd_topo_find_proc(const struct trd_topo *topo, uint32_t app, uint32_t proc)
{
	struct trd_topo_proc key = {.app_id = app, .proc_id = proc};
	const struct trd_topo_proc *p;

	if (topo == NULL)
		return -EINVAL;
	if (topo->n_procs == 0)
		return -ENOENT;
	p = bsearch(&key, topo->procs, topo->n_procs, sizeof(*p), proc_cmp);
	return p == NULL ? -ENOENT : (int)p->rank;
}
