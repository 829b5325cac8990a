/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node: is the engine's loop crowded? (docs/toroid-node.md, "The loop"). A pure
 * function of what main.c reads from the host and the attached processes, so that
 * test_crowd.c can hold it to its cases.
 */
#ifndef TOROID_NODE_CROWD_H
#define TOROID_NODE_CROWD_H

#include <stdbool.h>

struct node_load {
	unsigned int host_cpus;      /* CPUs the engine process may run on (before EAL pinned it) */
	unsigned int engine_cpus;    /* CPUs of the thread that runs the loop, at least 1 */
	unsigned int runnable;       /* threads runnable on the host (/proc/loadavg), 0 unknown */
	unsigned int sharing;        /* attached processes that may run on the engine's CPUs */
	unsigned int sharing_asleep; /* those of them asleep in a wait (not runnable) */
	unsigned int away;           /* awake attached processes that may not */
	unsigned int away_cpus;      /* the CPUs those may run on (the union of their masks) */
	unsigned int away_compute;   /* their computing added up, thousandths (1000 if untold) */
	bool away_movable;           /* one of them would take the engine's CPUs if left free */
};

/* Do the busy threads that may take the engine's CPUs outnumber them? The engine; the attached
 * processes that may run there and the host's other runnable threads, beyond the CPUs that the
 * awake processes running elsewhere leave free; and, where one of those could move onto the
 * engine's CPUs, the CPUs' worth of computing they need beyond their own CPUs. */
bool node_crowded(const struct node_load *l);

/* Of a process that never said how much it computes (trd_vni_hint_compute): all the time */
#define NODE_COMPUTE_UNTOLD 1000u

#endif
