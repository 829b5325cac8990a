/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Strict command-line numbers, shared by every toroid app (no DPDK needed).
 *
 * A number is digits only (decimal, or hexadecimal after "0x"): no sign, no blank, nothing
 * after it but, where allowed, one K/M/G suffix (powers of 1024). Values outside the range an
 * option gives are refused, not wrapped or clamped. A bad command line ends the program with
 * exit status 2 and exactly one line on stderr, "PROG: what is wrong".
 */
#ifndef TRD_APP_ARGS_H
#define TRD_APP_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

/** Exit status of a bad command line. */
#define APP_EXIT_USAGE 2

/**
 * Parse an unsigned integer (with a K/M/G suffix if @p suffix) within [min, max].
 * @return 0, -EINVAL (not a number) or -ERANGE (a number outside [min, max]).
 */
int app_parse_u64(const char *s, bool suffix, uint64_t min, uint64_t max, uint64_t *out);

/** Parse a finite decimal number within [min, max] (no "nan", "inf" or hex floats). */
int app_parse_double(const char *s, double min, double max, double *out);

/** Print "PROG: MESSAGE" (one line) on stderr and exit with status 2. */
void app_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/** Option value, or exit 2 with "PROG: OPT: 'S' is not a number" / "... out of range MIN..MAX". */
uint64_t app_opt_u64(const char *opt, const char *s, uint64_t min, uint64_t max);
/** The same with a K/M/G suffix allowed. */
uint64_t app_opt_size(const char *opt, const char *s, uint64_t min, uint64_t max);
/** The same for a finite decimal number. */
double app_opt_double(const char *opt, const char *s, double min, double max);

/**
 * getopt_long() returned '?' or ':' (use opterr = 0 and an optstring starting with ':'):
 * one line naming the unknown option or the option missing its value, then exit 2.
 */
void app_getopt_error(int c, char **argv) __attribute__((noreturn));

#endif
