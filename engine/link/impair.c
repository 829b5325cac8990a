/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link impairment: loss, reordering, duplication and corruption of received frames at given
 * rates, from a seeded generator, between a port and the engine. For tests and demos of the
 * reliability layer; a link without impairment pays one branch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <toroid/testing.h>

#include "link_pvt.h"

static inline uint64_t
rng_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static inline bool
hit(struct trd_impair *im, uint32_t rate)
{
	return rate != 0 && (uint32_t)(rng_next(&im->rng) >> 32) < rate;
}

static uint32_t
to_rate(double f)
{
	return f <= 0 ? 0 : f >= 1 ? UINT32_MAX : (uint32_t)(f * 4294967296.0);
}

int
trd_impair_parse(const char *spec, struct trd_impair_conf *out)
{
	char buf[256], *tok, *save;

	if (spec == NULL || out == NULL || strlen(spec) >= sizeof(buf))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		double v;

		if (eq == NULL)
			return -EINVAL;
		*eq++ = '\0';
		/* digits only: strtod/strtoull also take signs, blanks, "nan", "inf" and hex
		 * floats, and strtoull wraps "-1" and saturates an overflow */
		if (*eq == '\0' ||
		    strspn(eq, strcmp(tok, "seed") == 0 ? "0123456789xXabcdefABCDEF"
							: "0123456789.%") != strlen(eq))
			return -EINVAL;
		if (strcmp(tok, "seed") == 0) {
			unsigned long long sd;

			errno = 0;
			sd = strtoull(eq, &end, 0);
			if (end == eq || *end != '\0' || errno != 0)
				return -EINVAL;
			out->seed = sd;
			continue;
		}
		v = strtod(eq, &end);
		if (end == eq)
			return -EINVAL;
		if (*end == '%') {
			v /= 100;
			end++;
		}
		if (*end != '\0' || !(v >= 0 && v <= 1)) /* NaN fails both */
			return -EINVAL;
		if (strcmp(tok, "loss") == 0)
			out->loss = v;
		else if (strcmp(tok, "reorder") == 0)
			out->reorder = v;
		else if (strcmp(tok, "dup") == 0)
			out->dup = v;
		else if (strcmp(tok, "corrupt") == 0)
			out->corrupt = v;
		else
			return -EINVAL;
	}
	return 0;
}

int
trd_link_set_impair(struct trd_link *l, const struct trd_impair_conf *c, struct rte_mempool *mp)
{
	struct trd_impair *im;

	if (l == NULL)
		return -EINVAL;
	if (c == NULL) {
		if (l->imp != NULL) {
			rte_pktmbuf_free(l->imp->held);
			rte_free(l->imp);
			l->imp = NULL;
			trd_link_taps_update(l);
		}
		return 0;
	}
	if (!(c->loss >= 0 && c->loss <= 1) || !(c->reorder >= 0 && c->reorder <= 1) ||
	    !(c->dup >= 0 && c->dup <= 1) || !(c->corrupt >= 0 && c->corrupt <= 1))
		return -EINVAL; /* written so that NaN is refused too */
	im = l->imp != NULL ? l->imp : rte_zmalloc("trd_impair", sizeof(*im), 0);
	if (im == NULL)
		return -ENOMEM;
	im->loss = to_rate(c->loss);
	im->reorder = to_rate(c->reorder);
	im->dup = to_rate(c->dup);
	im->corrupt = to_rate(c->corrupt);
	/* each link its own stream, repeatable from the seed */
	im->rng = (c->seed ? c->seed : 1) * 0x9E3779B97F4A7C15ULL ^ (uintptr_t)l->name[0] ^
		  ((uint64_t)l->mac.addr_bytes[5] << 8 | l->mac.addr_bytes[4]);
	if (im->rng == 0)
		im->rng = 1;
	im->mp = mp;
	l->imp = im;
	trd_link_taps_update(l);
	return 0;
}

uint16_t
trd_impair_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t nb, uint16_t cap)
{
	struct trd_impair *im = l->imp;
	struct rte_mempool *mp = im->mp;
	struct rte_mbuf *in[64];
	uint16_t out = 0;

	if (nb > RTE_DIM(in))
		nb = RTE_DIM(in);
	memcpy(in, pkts, nb * sizeof(in[0]));
	for (uint16_t i = 0; i < nb && out < cap; i++) {
		struct rte_mbuf *m = in[i];

		if (hit(im, im->loss)) {
			rte_pktmbuf_free(m);
			im->lost++;
			continue;
		}
		if (hit(im, im->corrupt)) {
			/* the original may be shared with its sender: flip a bit in a copy */
			struct rte_mbuf *c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);

			rte_pktmbuf_free(m);
			if (c == NULL)
				continue;
			if (c->data_len != 0) {
				uint32_t at = (uint32_t)(rng_next(&im->rng) % c->data_len);

				rte_pktmbuf_mtod(c, uint8_t *)[at] ^=
					(uint8_t)(1u << (rng_next(&im->rng) % 8));
			}
			m = c;
			im->corrupted++;
		}
		if (im->held == NULL && hit(im, im->reorder)) {
			im->held = m; /* goes out after the next one */
			im->reordered++;
			continue;
		}
		pkts[out++] = m;
		if (im->held != NULL && out < cap) {
			pkts[out++] = im->held;
			im->held = NULL;
		}
		if (out < cap && hit(im, im->dup)) {
			struct rte_mbuf *d = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);

			if (d != NULL) {
				pkts[out++] = d;
				im->dupped++;
			}
		}
	}
	/* a frame held at the end of a quiet burst is not held forever */
	if (nb == 0 && im->held != NULL && out < cap) {
		pkts[out++] = im->held;
		im->held = NULL;
	}
	return out;
}
