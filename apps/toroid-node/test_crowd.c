/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_crowded() (crowd.c) on the cases that decide whether toroid-node polls or sleeps at
 * once: processes on the engine's CPU or moved off it, computing or waiting, other programs.
 */
#include <stdio.h>

#include "crowd.h"

static int fails;

/* host CPUs, engine CPUs, runnable, sharing, away, away_compute: crowded? */
static const struct {
	unsigned int host, engine, runnable, sharing, away, away_compute;
	bool crowded;
	const char *what;
} cases[] = {
	/* nothing moved: the processes and the engine, or the runnable threads, against the
	 * host's CPUs (the rule before processes were told apart by where they run) */
	{2, 1, 0, 0, 0, 0, false, "an engine alone"},
	{2, 1, 2, 1, 0, 0, false, "1 process + engine on 2 CPUs"},
	{2, 1, 3, 2, 0, 0, true, "2 processes unbound + engine on 2 CPUs"},
	{2, 1, 2, 2, 0, 0, true, "2 processes unbound, one asleep"},
	{4, 1, 4, 3, 0, 0, false, "3 unbound processes + engine on 4 CPUs"},
	{4, 1, 5, 3, 0, 0, true, "3 processes + engine + another program on 4 CPUs"},
	{2, 1, 3, 1, 0, 0, true, "1 process + engine + another program on 2 CPUs"},
	/* moved off the engine's CPU: it polls while they wait or compute within their CPUs */
	{2, 1, 3, 0, 2, 0, false, "2 ranks moved off, waiting"},
	{2, 1, 3, 0, 2, 770, false, "2 ranks moved off, one computing 77 %"},
	{2, 1, 5, 0, 4, 1000, false, "4 ranks moved off, computing one CPU's worth"},
	{2, 1, 3, 0, 2, 1600, true, "2 ranks moved off, computing 80 % each"},
	{2, 1, 3, 0, 2, 1001, true, "2 ranks moved off, just over one CPU's worth"},
	{4, 1, 4, 0, 3, 2900, false, "3 ranks on 3 CPUs of their own, computing"},
	{4, 1, 4, 0, 3, 3001, true, "3 ranks on 3 CPUs, computing more than they hold"},
	/* a rank given the engine's CPU back shares it */
	{2, 1, 3, 1, 1, 900, true, "one rank moved back"},
	/* another program: on the CPUs the moved processes leave free, or on the engine's */
	{4, 1, 4, 0, 2, 0, false, "2 ranks moved off + another program on 4 CPUs"},
	{2, 1, 4, 0, 2, 0, true, "2 ranks moved off + another program on 2 CPUs"},
	{2, 1, 5, 0, 1, 0, true, "a second engine and its process, on 2 CPUs"},
	/* an engine on 2 CPUs */
	{4, 2, 4, 1, 2, 0, false, "engine on 2 CPUs, one process beside it"},
	{4, 2, 5, 2, 2, 0, true, "engine on 2 CPUs, two processes beside it"},
	{0, 0, 0, 0, 0, 0, false, "nothing known"},
};

int
main(void)
{
	unsigned int n = sizeof(cases) / sizeof(cases[0]);

	for (unsigned int i = 0; i < n; i++) {
		struct node_load l = {.host_cpus = cases[i].host,
				      .engine_cpus = cases[i].engine,
				      .runnable = cases[i].runnable,
				      .sharing = cases[i].sharing,
				      .away = cases[i].away,
				      .away_compute = cases[i].away_compute};

		if (node_crowded(&l) != cases[i].crowded) {
			fprintf(stderr, "FAIL: %s: %s, expected %s\n", cases[i].what,
				cases[i].crowded ? "not crowded" : "crowded",
				cases[i].crowded ? "crowded" : "not crowded");
			fails++;
		}
	}
	if (fails != 0)
		return 1;
	printf("node_crowded: %u cases\n", n);
	return 0;
}
