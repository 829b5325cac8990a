/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF"), the one copy in the
 * tree: the engine's secrets (engine/core/secret.c: session cookies, tokens, region keys) and
 * the libfabric provider's keys (libfabric/tfi_domain.c) are both made with it. Header only:
 * the provider links no engine library.
 */
#ifndef TRD_SIPHASH_H
#define TRD_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t
trd_sip_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void
trd_sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = trd_sip_rotl(v[1], 13);
	v[1] ^= v[0];
	v[0] = trd_sip_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = trd_sip_rotl(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = trd_sip_rotl(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = trd_sip_rotl(v[1], 17);
	v[1] ^= v[2];
	v[2] = trd_sip_rotl(v[2], 32);
}

/* SipHash-2-4 of @p len bytes at @p in under the 128-bit key (@p k0, @p k1), bytes read as
 * little-endian words as the specification says (the same result on any machine). */
static inline uint64_t
trd_siphash24(uint64_t k0, uint64_t k1, const void *in, size_t len)
{
	const uint8_t *p = in;
	uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
			 k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
	uint64_t m;
	size_t i, done;

	for (done = 0; len - done >= 8; done += 8, p += 8) {
		m = 0;
		for (i = 0; i < 8; i++)
			m |= (uint64_t)p[i] << (8 * i);
		v[3] ^= m;
		trd_sip_round(v);
		trd_sip_round(v);
		v[0] ^= m;
	}
	m = (uint64_t)len << 56;
	for (i = 0; i < len % 8; i++)
		m |= (uint64_t)p[i] << (8 * i);
	v[3] ^= m;
	trd_sip_round(v);
	trd_sip_round(v);
	v[0] ^= m;
	v[2] ^= 0xff;
	for (i = 0; i < 4; i++)
		trd_sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

#endif /* TRD_SIPHASH_H */
