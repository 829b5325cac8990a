/* SPDX-License-Identifier: BSD-3-Clause */
/* libfabric.so.1 for toroid alone (core.c): what its files share. */
#ifndef TFC_CORE_PVT_H
#define TFC_CORE_PVT_H

#include <stdbool.h>

#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

/* The provider built in, whether or not FI_PROVIDER leaves it out. */
const struct fi_provider *tfc_provider(void);

/* Whether @p name passes a libfabric name filter (FI_PROVIDER, FI_LOG_PROV, FI_LOG_SUBSYS):
 * a comma-separated list of names, or with a leading '^' the names left out; NULL or "" lets
 * every name pass. Names match in any case. */
bool tfc_name_allowed(const char *filter, const char *name);

/* A message of the core itself, as FI_LOG_LEVEL and FI_LOG_SUBSYS allow. */
void tfc_log_core(enum fi_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
