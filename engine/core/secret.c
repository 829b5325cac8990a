/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's secrets and what is derived from them (docs/reliability.md): SipHash-2-4 of one
 * word under a 128-bit key gives the session cookies a peer must echo, the epoch and first
 * sequence number of our session towards a peer, the session's 64-bit token, and (mr.c)
 * region keys; the keys themselves come from the kernel's randomness.
 */
#include <stdint.h>
#include <sys/random.h>

#include <rte_random.h>

#include <toroid/testing.h>

#include "core_pvt.h"

/* ---- session cookies: SipHash-2-4 of one word under the node's secret ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

uint64_t
trd_session_cookie(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint32_t gen)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t m = (uint64_t)peer_rank << 32 | gen, b = 8ULL << 56;

	v3 ^= m;
	SIPROUND;
	SIPROUND;
	v0 ^= m;
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

void
trd_session_start(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint16_t *epoch, uint32_t *isn)
{
	uint64_t h = trd_session_cookie(k0, k1, peer_rank, UINT32_MAX);

	*epoch = (uint16_t)(h >> 32) != 0 ? (uint16_t)(h >> 32) : 1;
	*isn = 1 + (uint32_t)(h & 0xffffff);
}

uint64_t
trd_session_token(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint16_t epoch)
{
	/* the same function under another key ("token"): unrelated to the cookies */
	return trd_session_cookie(k0 ^ 0x746f6b656e000000ULL, k1, peer_rank, epoch);
}

/* Randomness an attacker cannot predict from what we send: the kernel's, else DPDK's. */
void
trd_secret_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	if (getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len)
		return;
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rte_rand();
}
