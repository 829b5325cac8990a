/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_crowded() (crowd.c) on the cases that decide whether toroid-node polls or sleeps at
 * once: processes on the engine's CPU or moved off it, computing or waiting, other programs.
 */
#include <stdio.h>

#include "crowd.h"

static int fails;

/* host CPUs, engine CPUs, runnable threads; processes sharing the engine's CPUs, of them
 * asleep; awake processes away from them, their CPUs, their computing, one movable: crowded? */
static const struct {
	unsigned int host, engine, runnable, sharing, sharing_asleep, away, away_cpus, compute;
	bool movable, crowded;
	const char *what;
} cases[] = {
	/* nothing moved: the processes and the engine, or the runnable threads, against the
	 * host's CPUs (the rule before processes were told apart by where they run) */
	{2, 1, 0, 0, 0, 0, 0, 0, false, false, "an engine alone"},
	{2, 1, 2, 1, 0, 0, 0, 0, false, false, "1 process + engine on 2 CPUs"},
	{2, 1, 3, 2, 0, 0, 0, 0, false, true, "2 processes unbound + engine on 2 CPUs"},
	{2, 1, 2, 2, 1, 0, 0, 0, false, true, "2 processes unbound, one asleep"},
	{4, 1, 4, 3, 0, 0, 0, 0, false, false, "3 unbound processes + engine on 4 CPUs"},
	{4, 1, 5, 3, 0, 0, 0, 0, false, true, "3 processes + engine + another program on 4 CPUs"},
	{2, 1, 3, 1, 0, 0, 0, 0, false, true, "1 process + engine + another program on 2 CPUs"},
	{2, 1, 2, 1, 1, 0, 0, 0, false, false, "1 process asleep + engine + another program"},
	{2, 1, 3, 1, 1, 0, 0, 0, false, true, "1 process asleep + engine + 2 other programs"},
	/* moved off the engine's CPU: it polls while they wait or compute within their CPUs */
	{2, 1, 3, 0, 0, 2, 1, 0, true, false, "2 ranks moved off, waiting"},
	{2, 1, 3, 0, 0, 2, 1, 770, true, false, "2 ranks moved off, one computing 77 %"},
	{2, 1, 5, 0, 0, 4, 1, 1000, true, false, "4 ranks moved off, computing one CPU's worth"},
	{2, 1, 3, 0, 0, 2, 1, 1600, true, true, "2 ranks moved off, computing 80 % each"},
	{2, 1, 3, 0, 0, 2, 1, 1001, true, true, "2 ranks moved off, just over one CPU's worth"},
	{2, 1, 3, 0, 0, 2, 1, 2000, true, true, "2 processes off it that never told"},
	{4, 1, 4, 0, 0, 3, 3, 2900, true, false, "3 ranks on 3 CPUs of their own, computing"},
	{4, 1, 4, 0, 0, 3, 3, 3001, true, true, "3 ranks on 3 CPUs, computing more than they hold"},
	{2, 1, 3, 0, 0, 2, 7, 1600, true, false, "2 ranks computing on 7 CPUs outside its mask"},
	/* bound off it by the user or mpirun: the engine's CPU is no use to them */
	{2, 1, 3, 0, 0, 2, 1, 1600, false, false, "2 bound ranks computing 80 % each"},
	/* a rank given the engine's CPU back shares it */
	{2, 1, 3, 1, 0, 1, 1, 900, true, true, "one rank moved back"},
	/* another program: on the CPUs the moved processes leave free, or on the engine's */
	{4, 1, 4, 0, 0, 2, 2, 0, true, false, "2 ranks moved off + another program on 4 CPUs"},
	{2, 1, 4, 0, 0, 2, 1, 0, true, true, "2 ranks moved off + another program on 2 CPUs"},
	{2, 1, 3, 0, 0, 0, 0, 0, false, true, "2 ranks off it asleep + 2 other programs"},
	{2, 1, 5, 0, 0, 1, 1, 0, true, true, "a second engine and its process, on 2 CPUs"},
	/* an engine on 2 CPUs */
	{4, 2, 4, 1, 0, 2, 2, 0, true, false, "engine on 2 CPUs, one process beside it"},
	{4, 2, 5, 2, 0, 2, 2, 0, true, true, "engine on 2 CPUs, two processes beside it"},
	{0, 0, 0, 0, 0, 0, 0, 0, false, false, "nothing known"},
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
				      .sharing_asleep = cases[i].sharing_asleep,
				      .away = cases[i].away,
				      .away_cpus = cases[i].away_cpus,
				      .away_compute = cases[i].compute,
				      .away_movable = cases[i].movable};

		if (node_crowded(&l) != cases[i].crowded) {
			fprintf(stderr, "FAIL: %s: %s, expected %s\n", cases[i].what,
				cases[i].crowded ? "not crowded" : "crowded",
				cases[i].crowded ? "crowded" : "not crowded");
			fails++;
		}
	}
	/* with no process away from the engine's CPUs, the rule from before, whatever sleeps:
	 * the attached processes and the engine, or the runnable threads, outnumber the CPUs */
	for (unsigned int host = 1; host <= 8; host++)
		for (unsigned int engine = 1; engine <= host; engine++)
			for (unsigned int run = 0; run <= 12; run++)
				for (unsigned int sh = 0; sh <= 8; sh++)
					for (unsigned int sl = 0; sl <= sh; sl++) {
						struct node_load l = {.host_cpus = host,
								      .engine_cpus = engine,
								      .runnable = run,
								      .sharing = sh,
								      .sharing_asleep = sl};
						bool old = 1 + sh > host || run > host;

						if (node_crowded(&l) != old && fails++ < 5)
							fprintf(stderr,
								"FAIL: host %u engine %u runnable "
								"%u sharing %u asleep %u: not the "
								"rule from before\n",
								host, engine, run, sh, sl);
					}
	if (fails != 0)
		return 1;
	printf("node_crowded: %u cases, and the rule from before with nothing away\n", n);
	return 0;
}
