/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node: when the loop is crowded (crowd.h; docs/toroid-node.md, "The loop").
 */
#include "crowd.h"

bool
node_crowded(const struct node_load *l)
{
	unsigned int engine = l->engine_cpus != 0 ? l->engine_cpus : 1;
	unsigned int asleep = l->sharing_asleep < l->sharing ? l->sharing_asleep : l->sharing;
	/* the runnable threads that are ours: the engine and the awake processes */
	unsigned int ours = 1 + l->sharing - asleep + l->away;
	/* a second engine and its processes, other programs: anywhere */
	unsigned int others = l->runnable > ours ? l->runnable - ours : 0;
	unsigned int off = l->host_cpus > engine ? l->host_cpus - engine : 0;
	unsigned int spare = off > l->away ? off - l->away : 0;
	/* the processes that may run anywhere, with the other threads, fill the free CPUs first;
	 * a process asleep counts as if it ran (the rule from before), but leaves the others'
	 * count true */
	unsigned int awake = l->sharing - asleep + others;
	unsigned int anywhere = awake > l->sharing ? awake : l->sharing;
	/* the CPUs' worth the processes off the engine's CPUs compute, rounded up: more than
	 * their CPUs hold, and one of them can move, it needs the engine's (the provider's
	 * placement gives them to it while the host has a CPU per runnable thread, so the
	 * engine must sleep) */
	unsigned int need = (l->away_compute + 999) / 1000;
	unsigned int excess = l->away_movable && need > l->away_cpus ? need - l->away_cpus : 0;
	unsigned int demand = (anywhere > spare ? anywhere - spare : 0) + excess;

	return 1 + demand > engine;
}
