/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_args.h"

extern char *program_invocation_short_name;

int
app_parse_u64(const char *s, bool suffix, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *p = s;
	unsigned int base = 10, shift = 0;
	uint64_t v = 0;
	int ndig = 0;

	if (s == NULL)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (;; p++, ndig++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned int)(*p - '0');
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (unsigned int)(tolower((unsigned char)*p) - 'a' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE; /* digits only, so at least a number: too large */
		v = v * base + d;
	}
	if (ndig == 0)
		return -EINVAL;
	if (suffix && *p != '\0' && p[1] == '\0') {
		switch (*p) {
		case 'k':
		case 'K':
			shift = 10;
			p++;
			break;
		case 'm':
		case 'M':
			shift = 20;
			p++;
			break;
		case 'g':
		case 'G':
			shift = 30;
			p++;
			break;
		default:
			break;
		}
	}
	if (*p != '\0')
		return -EINVAL;
	if (shift != 0) {
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
		v <<= shift;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int
app_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* strtod also takes "nan", "inf", "0x1p3", blanks and signs: digits and one '.' only */
	if (s == NULL || *s == '\0' || strspn(s, "0123456789.") != strlen(s) ||
	    strchr(s, '.') != strrchr(s, '.') || strspn(s, ".") == strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0')
		return -EINVAL;
	if (errno != 0 || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

void
app_usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one line, whatever the message holds */
	for (char *p = msg; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
	fflush(stderr);
	exit(APP_EXIT_USAGE);
}

static void
opt_fail(const char *opt, const char *s, int rc, const char *range)
{
	if (s == NULL)
		app_usage_error("%s needs a value", opt);
	if (rc == -EINVAL)
		app_usage_error("%s: '%s' is not a number (%s)", opt, s, range);
	app_usage_error("%s: '%s' is out of range (%s)", opt, s, range);
}

uint64_t
app_opt_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v = 0;
	int rc = app_parse_u64(s, false, min, max, &v);
	char range[64];

	if (rc != 0) {
		snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64, min, max);
		opt_fail(opt, s, rc, range);
	}
	return v;
}

uint64_t
app_opt_size(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v = 0;
	int rc = app_parse_u64(s, true, min, max, &v);
	char range[96];

	if (rc != 0) {
		snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64 ", K/M/G suffixes allowed",
			 min, max);
		opt_fail(opt, s, rc, range);
	}
	return v;
}

double
app_opt_double(const char *opt, const char *s, double min, double max)
{
	double v = 0;
	int rc = app_parse_double(s, min, max, &v);
	char range[64];

	if (rc != 0) {
		snprintf(range, sizeof(range), "%g..%g", min, max);
		opt_fail(opt, s, rc, range);
	}
	return v;
}

void
app_getopt_error(int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':') {
		if (optopt > 0 && optopt < 128 && isalnum(optopt) && arg[0] == '-' && arg[1] != '-')
			app_usage_error("option -%c needs a value (see --help)", optopt);
		app_usage_error("option %s needs a value (see --help)", arg);
	}
	if (optopt > 0 && optopt < 128 && isalnum(optopt) && arg[0] == '-' && arg[1] != '-')
		app_usage_error("unknown option -%c (see --help)", optopt);
	app_usage_error("unknown option '%s' (see --help)", arg);
}
