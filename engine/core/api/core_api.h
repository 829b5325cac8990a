/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core as the layers above it in the engine see it, beyond the public <toroid/toroid.h>
 * (engine/meson.build gives this folder, not engine/core, to their include path).
 */
#ifndef TRD_CORE_API_H
#define TRD_CORE_API_H

#include <toroid/toroid.h>

typedef void (*trd_progress_fn)(void *arg);

/** Make progress on behalf of a waiting thread (an in-process network polls all its nodes). */
void trd_node_set_progress(struct trd_node *n, trd_progress_fn fn, void *arg);

/** The @p i-th live node of this process (creation order), or NULL: the telemetry's index. */
struct trd_node *trd_node_at(unsigned int i);

#endif /* TRD_CORE_API_H */
