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
#include "siphash.h" /* engine/wire/api */

/* ---- session cookies: SipHash-2-4 of one word under the node's secret ---- */

uint64_t
trd_session_cookie(uint64_t k0, uint64_t k1, uint32_t peer_rank, uint32_t gen)
{
	uint64_t m = (uint64_t)peer_rank << 32 | gen;
	uint8_t b[8];

	for (unsigned int i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(m >> (8 * i)); /* the word, as SipHash reads it: little-endian */
	return trd_siphash24(k0, k1, b, sizeof(b));
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
