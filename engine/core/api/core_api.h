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

/**
 * The @p i-th live node, held: trd_node_free() of it waits until trd_node_release(). NULL (not
 * held) if there is none. For short reads from a control thread (telemetry): a thread must not
 * free a node, nor hold a second one, while it holds one.
 */
struct trd_node *trd_node_hold(unsigned int i);

/** Let go of a node trd_node_hold() gave. NULL is a no-op. */
void trd_node_release(struct trd_node *n);

#endif /* TRD_CORE_API_H */
