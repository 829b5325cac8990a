/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * toroid-node: when the loop is crowded (crowd.h; docs/toroid-node.md, "The loop").
 */
#include "crowd.h"

bool
node_crowded(const struct node_load *l)
{
	unsigned int engine = l->engine_cpus != 0 ? l->engine_cpus : 1;
	unsigned int ours = 1 + l->sharing + l->away;
	/* a second engine and its processes, other programs: anywhere */
	unsigned int others = l->runnable > ours ? l->runnable - ours : 0;
	unsigned int off = l->host_cpus > engine ? l->host_cpus - engine : 0;
	unsigned int spare = off > l->away ? off - l->away : 0;
	/* the CPUs' worth the processes moved off the engine's compute, rounded up: more than
	 * their CPUs hold, and they need the engine's back (the provider's placement gives it
	 * to them while the host has a CPU per runnable thread, so the engine must sleep) */
	unsigned int need = (l->away_compute + 999) / 1000;
	/* the processes that may run anywhere, with the other threads, fill the free CPUs first */
	unsigned int anywhere = l->sharing + others;
	unsigned int demand =
		(anywhere > spare ? anywhere - spare : 0) + (need > off ? need - off : 0);

	return 1 + demand > engine;
}
