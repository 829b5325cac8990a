/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the toroid apps: EAL start-up with "[EAL options] -- [app options]". */
#ifndef TRD_APP_COMMON_H
#define TRD_APP_COMMON_H

#include <stddef.h>

#include "app_args.h"

/**
 * Start EAL from the options before "--", or, when there are none, with defaults that need no
 * set-up: --no-huge --no-pci --no-shconf -m MEM -l <the first two CPUs it may run on>.
 * (DPDK 22.11 refuses --in-memory together with --no-huge.) EAL options with --no-huge but
 * no -m or --socket-mem get "-m MEM" too (EAL's own default, 64 MB, is too little).
 * On return, *app_argc and *app_argv hold argv[0] and the options after "--". Exits on failure.
 */
void app_eal_init(int argc, char **argv, const char *mem_mb, int *app_argc, char ***app_argv);

/** The options after "--" (all of them without one), with argv[0] first. */
void app_split_args(int argc, char **argv, int *app_argc, char ***app_argv);

/** The default lcore list: the first two CPUs this process may run on ("0-1", "3,5"...). */
void app_default_lcore_list(char *buf, size_t len);

/** Overrides the default "-l" list (e.g. "1" for the second of two processes). */
extern const char *app_default_lcores;

/** The EAL defaults used when no EAL option is given, for --help texts. */
const char *app_eal_defaults(void);

/** Parse "64", "4K", "1M", "2G": bytes (strictly, see app_args.h). @return 0 or -EINVAL. */
int app_parse_size(const char *s, unsigned long long *out);

#endif
