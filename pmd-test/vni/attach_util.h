/* SPDX-License-Identifier: BSD-3-Clause */
/* The node handles of the One API tests (docs/vni.md "One API"): process 1:rank attached to
 * node rank of a toroid-node whose sockets are @p tmpl with %r the rank; their CHECK(). */
#ifndef ATTACH_UTIL_H
#define ATTACH_UTIL_H

#include <stdio.h>
#include <string.h>

#include <toroid/toroid.h>
#include <toroid/vni.h>

/* the checks of a test: each failure said and counted, the test goes on */
static int failures;

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* @p c (its socket filled in here) for node @p rank */
static inline struct trd_node *
attach_conf(const char *tmpl, unsigned int rank, struct trd_vni_conf *c)
{
	const char *r = strstr(tmpl, "%r");
	char sock[256];
	struct trd_node *n;

	if (r == NULL)
		snprintf(sock, sizeof(sock), "%s", tmpl);
	else
		snprintf(sock, sizeof(sock), "%.*s%u%s", (int)(r - tmpl), tmpl, rank, r + 2);
	c->socket = sock;
	n = trd_node_attach(c);
	if (n == NULL)
		fprintf(stderr, "attach to %s: %s\n", sock, trd_vni_open_error());
	c->socket = NULL;
	return n;
}

/* process 1:@p rank with one injection FIFO, @p rfifos reception FIFOs of @p slots slots, a
 * region of @p region bytes */
static inline struct trd_node *
attach_node(const char *tmpl, unsigned int rank, unsigned int rfifos, unsigned int slots,
	    size_t region)
{
	struct trd_vni_conf c = {.app = 1,
				 .proc = rank,
				 .connect_timeout_ms = 5000,
				 .mu_fifos = 1,
				 .mu_rfifos = rfifos,
				 .mu_rfifo_slots = slots,
				 .mu_region = region};

	return attach_conf(tmpl, rank, &c);
}

/* Detach the @p n handles of @p h and say how test @p name went: its exit status. */
static inline int
attach_finish(const char *name, struct trd_node **h, unsigned int n)
{
	for (unsigned int r = 0; r < n; r++)
		trd_node_free(h[r]);
	if (failures != 0) {
		fprintf(stderr, "%s: %d failures\n", name, failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

#endif /* ATTACH_UTIL_H */
