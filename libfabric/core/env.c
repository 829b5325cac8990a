/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric.so.1 for toroid alone (core.c): the parameters providers define and read from the
 * environment (fi_param_define, fi_param_get, fi_getparams), logging (fi_log, FI_LOG_LEVEL,
 * FI_LOG_PROV, FI_LOG_SUBSYS) and libfabric's name filters, as libfabric's core reads them.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "core_pvt.h"

#define API __attribute__((visibility("default")))

bool
tfc_name_allowed(const char *filter, const char *name)
{
	bool exclude, listed = false;
	const char *p;

	if (filter == NULL || filter[0] == '\0')
		return true;
	exclude = filter[0] == '^';
	p = filter + exclude;
	while (*p != '\0' && !listed) {
		size_t n = strcspn(p, ",");

		listed = n == strlen(name) && strncasecmp(p, name, n) == 0;
		p += n + (p[n] == ',');
	}
	return listed != exclude;
}

/* ---- parameters ---- */

struct param {
	struct param *next;
	enum fi_param_type type;
	char *env; /* FI_<PROVIDER>_<NAME>, upper case */
	char *help;
};

static struct param *params;
static pthread_mutex_t params_lock = PTHREAD_MUTEX_INITIALIZER;

static char *
env_name(const struct fi_provider *provider, const char *param_name)
{
	const char *pn = provider != NULL ? provider->name : NULL;
	size_t len = 4 + (pn != NULL ? strlen(pn) + 1 : 0) + strlen(param_name);
	char *s = malloc(len);

	if (s == NULL)
		return NULL;
	if (pn != NULL)
		snprintf(s, len, "FI_%s_%s", pn, param_name);
	else
		snprintf(s, len, "FI_%s", param_name);
	for (char *c = s; *c != '\0'; c++)
		*c = (char)toupper((unsigned char)*c);
	return s;
}

/* The parameter of that variable, under params_lock. */
static struct param *
param_find(const char *env)
{
	for (struct param *p = params; p != NULL; p = p->next)
		if (strcmp(p->env, env) == 0)
			return p;
	return NULL;
}

API int
fi_param_define(const struct fi_provider *provider, const char *param_name, enum fi_param_type type,
		const char *help_string_fmt, ...)
{
	struct param *p;
	va_list ap;
	char *env;
	int n;

	if (param_name == NULL || help_string_fmt == NULL || type > FI_PARAM_SIZE_T)
		return -FI_EINVAL;
	env = env_name(provider, param_name);
	if (env == NULL)
		return -FI_ENOMEM;
	pthread_mutex_lock(&params_lock);
	if (param_find(env) != NULL) {
		pthread_mutex_unlock(&params_lock);
		free(env);
		return -FI_EALREADY;
	}
	p = calloc(1, sizeof(*p));
	va_start(ap, help_string_fmt);
	n = p != NULL ? vasprintf(&p->help, help_string_fmt, ap) : -1;
	va_end(ap);
	if (n < 0) {
		pthread_mutex_unlock(&params_lock);
		free(p);
		free(env);
		return -FI_ENOMEM;
	}
	p->type = type;
	p->env = env;
	p->next = params;
	params = p;
	pthread_mutex_unlock(&params_lock);
	return 0;
}

static int
parse_bool(const char *s, int *v)
{
	static const char *const no[] = {"0", "no", "false", "off"};
	static const char *const yes[] = {"1", "yes", "true", "on"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, no[i]) == 0 || strcasecmp(s, yes[i]) == 0) {
			*v = strcasecmp(s, yes[i]) == 0;
			return 0;
		}
	}
	return -FI_EINVAL;
}

/* -FI_ENOENT: not defined; -FI_ENODATA: not set; -FI_EINVAL: not a boolean. */
API int
fi_param_get(struct fi_provider *provider, const char *param_name, void *value)
{
	enum fi_param_type type = FI_PARAM_STRING;
	const struct param *p;
	const char *s;
	char *env;
	bool known;

	if (param_name == NULL || value == NULL)
		return -FI_EINVAL;
	env = env_name(provider, param_name);
	if (env == NULL)
		return -FI_ENOMEM;
	pthread_mutex_lock(&params_lock);
	p = param_find(env);
	known = p != NULL;
	if (known)
		type = p->type;
	pthread_mutex_unlock(&params_lock);
	s = known ? getenv(env) : NULL;
	free(env);
	if (!known)
		return -FI_ENOENT;
	if (s == NULL)
		return -FI_ENODATA;
	switch (type) {
	case FI_PARAM_STRING:
		*(const char **)value = s;
		return 0;
	case FI_PARAM_INT:
		*(int *)value = (int)strtol(s, NULL, 0);
		return 0;
	case FI_PARAM_SIZE_T:
		*(size_t *)value = (size_t)strtoull(s, NULL, 0);
		return 0;
	case FI_PARAM_BOOL:
		if (parse_bool(s, value) != 0) {
			tfc_log_core(FI_LOG_WARN, "%s_%s: \"%s\" is not a boolean\n",
				     provider != NULL ? provider->name : "", param_name, s);
			return -FI_EINVAL;
		}
		return 0;
	}
	return -FI_EINVAL;
}

API int
fi_getparams(struct fi_param **out, int *count)
{
	struct fi_param *v;
	int n = 0, i = 0;

	if (out == NULL || count == NULL)
		return -FI_EINVAL;
	(void)tfc_provider(); /* its parameters and the core's are defined */
	pthread_mutex_lock(&params_lock);
	for (struct param *p = params; p != NULL; p = p->next)
		n++;
	v = calloc((size_t)n + 1, sizeof(*v));
	for (struct param *p = params; v != NULL && p != NULL; p = p->next, i++) {
		const char *val = getenv(p->env);

		v[i].name = strdup(p->env);
		v[i].type = p->type;
		v[i].help_string = strdup(p->help);
		v[i].value = val != NULL ? strdup(val) : NULL;
		if (v[i].name == NULL || v[i].help_string == NULL || (val != NULL && !v[i].value))
			break;
	}
	pthread_mutex_unlock(&params_lock);
	if (v == NULL || i < n) {
		fi_freeparams(v);
		return -FI_ENOMEM;
	}
	*out = v;
	*count = n;
	return 0;
}

API void
fi_freeparams(struct fi_param *v)
{
	for (struct fi_param *p = v; p != NULL && p->name != NULL; p++) {
		free((void *)p->name);
		free((void *)p->help_string);
		free((void *)p->value);
	}
	free(v);
}

/* ---- logging ---- */

static const char *const level_names[FI_LOG_MAX] = {"warn", "trace", "info", "debug"};
static const char *const subsys_names[FI_LOG_SUBSYS_MAX] = {
	"core", "fabric", "domain", "ep_ctrl", "ep_data", "av", "cq", "eq", "mr", "cntr"};

static int log_level = -1; /* messages up to this level are printed; -1: none */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void
log_init(void)
{
	const char *s = getenv("FI_LOG_LEVEL");

	for (int i = 0; s != NULL && i < FI_LOG_MAX; i++)
		if (strcasecmp(s, level_names[i]) == 0)
			log_level = i;
}

API int
fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys)
{
	pthread_once(&log_once, log_init);
	if ((int)level > log_level || (unsigned int)subsys >= FI_LOG_SUBSYS_MAX)
		return 0;
	if (prov != NULL && !tfc_name_allowed(getenv("FI_LOG_PROV"), prov->name))
		return 0;
	return tfc_name_allowed(getenv("FI_LOG_SUBSYS"), subsys_names[subsys]);
}

/* For FI_LOG_SPARSE: at most one message every 2 s from one place. */
API int
fi_log_ready(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
	     uint64_t *showtime)
{
	struct timespec ts;
	uint64_t now;

	if (!fi_log_enabled(prov, level, subsys))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (showtime != NULL && now < *showtime)
		return 0;
	if (showtime != NULL)
		*showtime = now + 2000;
	return 1;
}

static void
vlog(const char *prov_name, enum fi_log_level level, enum fi_log_subsys subsys, const char *func,
     int line, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "libfabric:%d:%ld:%s:%s:%s():%d<%s> ", (int)getpid(),
		     (long)time(NULL), prov_name,
		     (unsigned int)subsys < FI_LOG_SUBSYS_MAX ? subsys_names[subsys] : "?",
		     func != NULL ? func : "", line,
		     (unsigned int)level < FI_LOG_MAX ? level_names[level] : "?");
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	fputs(buf, stderr);
}

API void
fi_log(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
       const char *func, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prov != NULL ? prov->name : "core", level, subsys, func, line, fmt, ap);
	va_end(ap);
}

void
tfc_log_core(enum fi_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!fi_log_enabled(NULL, level, FI_LOG_CORE))
		return;
	va_start(ap, fmt);
	vlog("core", level, FI_LOG_CORE, "", 0, fmt, ap);
	va_end(ap);
}
