/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vni-app's files (vni_app.c: options, helpers and most modes; vni_app_rma.c: the rma mode;
 * vni_app_claim.c: the claim, eager-hdr and trunc modes; vni_app_coll.c: the coll mode): what they
 * share.
 */
#ifndef VNI_APP_H
#define VNI_APP_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <toroid/vni.h>

#define MAX_PEERS   64
#define MAX_SIZES   32
#define TAG_READY   0xfeed000000000000ULL
#define TAG_GO      0xfeed000000000001ULL
#define TAG_DATA(k) (0x1000ULL + (uint64_t)(k))
#define WAIT_MS     60000

extern struct trd_vni *vni;
extern struct trd_vni_addr self;
extern const char *prog;
/* options the modes in other files read (set by main) */
extern struct trd_vni_addr peers[MAX_PEERS];
extern unsigned int n_peers;
extern struct trd_vni_addr peer;
extern unsigned long count;
extern struct trd_vni_addr absent; /* rma --absent */
extern const char *cl_socket;      /* claim: the engine's socket, for the second interface */
extern bool cl_hdr_refused; /* claim --hdr-refused: the engine refuses what staging cannot hold */

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t now_us(void);
uint64_t seed_of(struct trd_vni_addr src, struct trd_vni_addr dst, unsigned int k);
void fill(uint8_t *p, size_t len, uint64_t s);
bool check(const uint8_t *p, size_t len, uint64_t s, size_t *bad);
void *pool_alloc(size_t len);
/* Post, retrying while the interface is out of contexts (reaping completions meanwhile). */
typedef void (*cpl_fn)(const struct trd_vni_cpl *c);
void reap(cpl_fn fn, int timeout_ms);

int mode_rma(void);
int mode_claim(void);
int mode_eager_hdr(void);
int mode_trunc(void);
int mode_coll(void);

#endif /* VNI_APP_H */
