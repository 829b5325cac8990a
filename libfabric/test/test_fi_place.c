/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where an unbound process runs (tfi_place.c), without an engine:
 *
 *   - the decision: an unbound process (its mask is every CPU it may use) moves to its CPUs
 *     without the engine's; one bound to fewer CPUs (on the engine's CPU or not), or bound
 *     by the launcher (Open MPI's binding policy in the environment), is left alone; nothing
 *     moves when the engine does not say, or when every CPU is the engine's;
 *   - the kernel CPU list syntax ("0-3,8");
 *   - when an idle poll yields its CPU: at once on the engine's one CPU, or where the
 *     engine's processes outnumber this process's CPUs by at most one per CPU (2 ranks moved
 *     to one CPU), after a spin where more share them (4 ranks on one CPU) or only the
 *     engine's thread or other programs crowd the host, never on a quiet host or with
 *     nothing outstanding;
 *   - on this process (a child per case, needs 2 CPUs or more, and an unbound test): with the
 *     engine published on our first CPU, every thread (one made before, the caller, and one
 *     made after) ends on the others; FI_TOROID_PLACE=off, a binding made with
 *     sched_setaffinity, and OMPI_MCA_hwloc_base_binding_policy=core leave the mask as it
 *     was; =none does not count as a binding; mpirun's default binding (orte_bound_at_launch
 *     without an option asking for it) on the engine's CPU moves onto every other CPU, and
 *     may get them all back; one asked for (--map-by) stays;
 *   - the adaptation: a moved process computing 0.5 ms between polls, or in 3 us steps with a
 *     poll after each, gets every CPU back; one that polls back to back (with a short gap at
 *     every 8th poll), sleeps in waits, or runs on a crowded host does not.
 * Exit 0 on success, 1 on a failure, 77 when the live cases cannot run (printed why).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tfi.h"
#include "fi_unit.h"

struct fi_provider tfi_prov = {.name = "toroid"};
struct tfi_params tfi_params = {.place = true, .cpus = 1};

static cpu_set_t
set_of(const char *list)
{
	cpu_set_t s;

	if (tfi_place_parse_list(list, &s) != 0)
		CPU_ZERO(&s);
	return s;
}

static void
decide_case(const char *cur, const char *usable, const char *engine, enum tfi_launcher launcher,
	    enum tfi_place_verdict want, const char *want_out)
{
	cpu_set_t c = set_of(cur), u = set_of(usable), e, out, w;
	enum tfi_place_verdict v;

	if (engine[0] == '\0')
		CPU_ZERO(&e);
	else
		e = set_of(engine);
	v = tfi_place_decide(&c, &u, &e, launcher, &out);
	CHECK(v == want, "cur %s usable %s engine '%s' launcher %d: %s, expected %s", cur, usable,
	      engine, launcher, tfi_place_verdict_name(v), tfi_place_verdict_name(want));
	if (want == TFI_PLACE_MOVED || want == TFI_PLACE_DEFAULT) {
		w = set_of(want_out);
		CHECK(CPU_EQUAL(&out, &w), "cur %s engine %s: not moved to %s (%d CPUs)", cur,
		      engine, want_out, CPU_COUNT(&out));
	}
}

static void
decisions(void)
{
	cpu_set_t s;

	CHECK(tfi_place_parse_list("0-3,8,10-11\n", &s) == 0 && CPU_COUNT(&s) == 7 &&
		      CPU_ISSET(3, &s) && CPU_ISSET(8, &s) && !CPU_ISSET(9, &s) &&
		      CPU_ISSET(11, &s),
	      "list 0-3,8,10-11");
	CHECK(tfi_place_parse_list("3-1", &s) != 0, "3-1 accepted");
	CHECK(tfi_place_parse_list("", &s) != 0, "empty list accepted");
	CHECK(tfi_place_parse_list("0,x", &s) != 0, "0,x accepted");

	const enum tfi_launcher N = TFI_LAUNCH_NONE, D = TFI_LAUNCH_DEFAULT, C = TFI_LAUNCH_CHOSEN;

	/* unbound on 2 CPUs, engine on 0: both ranks on CPU 1 */
	decide_case("0-1", "0-1", "0", N, TFI_PLACE_MOVED, "1");
	decide_case("0-7", "0-7", "3", N, TFI_PLACE_MOVED, "0-2,4-7");
	decide_case("0-7", "0-7", "0-1", N, TFI_PLACE_MOVED, "2-7");
	/* a mask wider than the usable CPUs (offline ones in it) is still unbound */
	decide_case("0-63", "0-1", "0", N, TFI_PLACE_MOVED, "1-63");
	/* bound by someone: left alone, on the engine's CPU or not */
	decide_case("1", "0-1", "0", N, TFI_PLACE_BOUND, "");
	decide_case("0", "0-1", "0", N, TFI_PLACE_BOUND, "");
	decide_case("0,2", "0-3", "0", N, TFI_PLACE_BOUND, "");
	decide_case("0-1", "0-1", "0", C, TFI_PLACE_BOUND, "");
	/* nothing to do */
	decide_case("0-1", "0-1", "", N, TFI_PLACE_UNKNOWN, "");
	decide_case("0", "0", "0", N, TFI_PLACE_NO_ROOM, "");
	decide_case("0-1", "0-1", "0-1", N, TFI_PLACE_NO_ROOM, "");
	decide_case("1-2", "1-2", "0", N, TFI_PLACE_ALREADY, "");
	/* bound by mpirun's default (no option asked for it): off the engine's CPU, onto every
	 * other; a rank on another CPU keeps its core; an unbound one is moved as usual */
	decide_case("0", "0-1", "0", D, TFI_PLACE_DEFAULT, "1");
	decide_case("0-1", "0-7", "1", D, TFI_PLACE_DEFAULT, "0,2-7");
	decide_case("1", "0-1", "0", D, TFI_PLACE_ALREADY, "");
	decide_case("0", "0", "0", D, TFI_PLACE_NO_ROOM, "");
	decide_case("0-1", "0-1", "0", D, TFI_PLACE_MOVED, "1");
	/* asked for (--bind-to core): left alone even unbound */
	decide_case("0", "0-1", "0", C, TFI_PLACE_BOUND, "");
}

static unsigned int runnable_now, runnable_asked;

static unsigned int
runnable_stub(void)
{
	runnable_asked++;
	return runnable_now;
}

/* When an idle poll yields (tfi_yield_decide): at once where it shares its one CPU with the
 * engine, or where the engine's processes outnumber its CPUs by at most one per CPU; after
 * TFI_SPIN_POLLS empty polls where more share them or only the engine or other programs crowd
 * them; never with nothing outstanding to wait for, or on a quiet host. engine: 1 on one of
 * our CPUs, 0 on none, -1 unknown. */
static void
yield_decisions(void)
{
	const uint32_t spin = TFI_SPIN_POLLS;

	runnable_now = 1;
	/* 2 ranks moved to CPU 1, the engine on CPU 0: the peer needs our CPU */
	CHECK(!tfi_yield_decide(0, 3, 1, 0, runnable_stub), "yield with a completion");
	CHECK(tfi_yield_decide(1, 3, 1, 0, runnable_stub), "2 ranks on 1 CPU: spin first");
	/* 4 ranks on CPU 1: a yield may go to another waiting rank, spin first */
	CHECK(!tfi_yield_decide(1, 5, 1, 0, runnable_stub), "4 ranks on 1 CPU: no spin");
	CHECK(!tfi_yield_decide(spin - 1, 5, 1, 0, runnable_stub), "4 ranks: short spin");
	CHECK(tfi_yield_decide(spin, 5, 1, 0, runnable_stub), "4 ranks: no yield after spin");
	/* rank 0 bound to the engine's CPU (mpirun's binding): the engine needs our CPU */
	CHECK(tfi_yield_decide(1, 3, 1, 1, runnable_stub), "on the engine's CPU: spin first");
	CHECK(tfi_yield_decide(1, 5, 1, 1, runnable_stub), "on the engine's CPU, 4 ranks: spin");
	/* 2 ranks unplaced on 2 CPUs with the engine on one of them */
	CHECK(tfi_yield_decide(1, 3, 2, 1, runnable_stub), "3 pollers on 2 CPUs: spin first");
	/* one process on CPU 1, the engine on CPU 0: spin, then yield (2 busy on 1 CPU) */
	CHECK(!tfi_yield_decide(1, 2, 1, 0, runnable_stub), "alone on its CPU: no spin");
	CHECK(!tfi_yield_decide(spin - 1, 2, 1, 0, runnable_stub), "yields before the spin");
	CHECK(tfi_yield_decide(spin, 2, 1, 0, runnable_stub), "no yield after the spin");
	/* 2 ranks on CPUs 1-3 of 4, the engine on CPU 0: a quiet host never yields ... */
	runnable_asked = 0;
	CHECK(!tfi_yield_decide(1, 3, 3, 0, runnable_stub), "quiet host, idle 1: yield");
	CHECK(runnable_asked == 0, "the host's runnable count read before the spin ended");
	CHECK(!tfi_yield_decide(spin, 3, 3, 0, runnable_stub), "quiet host: yield");
	/* ... a host crowded by other programs does, after the spin */
	runnable_now = 8;
	CHECK(!tfi_yield_decide(spin - 1, 3, 3, 0, runnable_stub),
	      "crowded host: yields before the spin");
	CHECK(tfi_yield_decide(spin, 3, 3, 0, runnable_stub), "crowded host: no yield");
	/* an engine that does not say where it runs counts on our CPUs, but is not known to
	 * share our one CPU */
	runnable_now = 1;
	CHECK(!tfi_yield_decide(1, 2, 2, -1, runnable_stub), "2 busy on 2 CPUs: yield");
	CHECK(!tfi_yield_decide(1, 4, 1, -1, runnable_stub), "unknown engine, 4 busy: no spin");
	CHECK(tfi_yield_decide(1, 2, 1, -1, runnable_stub), "unknown engine, 2 busy: spin");
}

/* ---- live cases, each in a child ---- */

static pthread_barrier_t bar;

static void *
parked(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar); /* made */
	pthread_barrier_wait(&bar); /* placed: checked by the main thread */
	return NULL;
}

static void *
nothing(void *arg)
{
	(void)arg;
	return NULL;
}

static int
live_move(const cpu_set_t *all, int engine_cpu)
{
	uint64_t m[TRD_VNI_CPU_WORDS] = {0};
	cpu_set_t now, wide, got, want = *all;
	pthread_t before, after;
	pthread_attr_t attr;
	enum tfi_place_verdict v;

	CPU_CLR(engine_cpu, &want);
	m[engine_cpu / 64] |= UINT64_C(1) << (engine_cpu % 64);
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&before, NULL, parked, NULL) != 0)
		return 2;
	pthread_barrier_wait(&bar);
	v = tfi_place_self(m, &now, &wide);
	CHECK(v == TFI_PLACE_MOVED, "unbound: %s", tfi_place_verdict_name(v));
	CHECK(CPU_EQUAL(&wide, all), "unbound: may get back %d CPUs", CPU_COUNT(&wide));
	CHECK(CPU_EQUAL(&now, &want), "unbound: reported %d CPUs", CPU_COUNT(&now));
	CHECK(sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &want),
	      "the caller's mask still has CPU %d (%d CPUs)", engine_cpu, CPU_COUNT(&got));
	CHECK(pthread_getaffinity_np(before, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &want),
	      "a thread made before still has CPU %d (%d CPUs)", engine_cpu, CPU_COUNT(&got));
	pthread_barrier_wait(&bar);
	pthread_join(before, NULL);
	/* a thread made after takes the caller's mask */
	pthread_attr_init(&attr);
	if (pthread_create(&after, &attr, nothing, NULL) == 0) {
		CHECK(pthread_getaffinity_np(after, sizeof(got), &got) == 0 &&
			      CPU_EQUAL(&got, &want),
		      "a thread made after has CPU %d", engine_cpu);
		pthread_join(after, NULL);
	}
	return failures ? 1 : 0;
}

/* A case where the mask must stay as it is. */
static int
live_stay(const cpu_set_t *start, int engine_cpu, enum tfi_place_verdict want)
{
	uint64_t m[TRD_VNI_CPU_WORDS] = {0};
	cpu_set_t now, wide, got;
	enum tfi_place_verdict v;

	m[engine_cpu / 64] |= UINT64_C(1) << (engine_cpu % 64);
	v = tfi_place_self(m, &now, &wide);
	CHECK(v == want, "%s, expected %s", tfi_place_verdict_name(v),
	      tfi_place_verdict_name(want));
	CHECK(sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, start),
	      "the mask changed: %d CPUs, was %d", CPU_COUNT(&got), CPU_COUNT(start));
	return failures ? 1 : 0;
}

/* When a moved process gets the engine's CPUs back (tfi_place_adapt_decide): away (computing)
 * at least half a window on a host with a CPU per runnable thread, or whose runnable threads
 * are all the engine's processes and its thread (more ranks than CPUs); back off when away less
 * than a quarter of one, or the host holds more than one thread beyond both counts. */
static void
adapt_decisions(void)
{
	static const struct {
		bool wide;
		uint64_t away, window;
		unsigned int runnable, cpus, procs;
		bool want;
	} c[] = {
		{false, 6, 10, 2, 2, 0, true},  /* computes 60 %, 2 threads on 2 CPUs: widen */
		{false, 5, 10, 1, 2, 0, true},  /* half the window */
		{false, 4, 10, 2, 2, 0, false}, /* waits more than it computes */
		{false, 9, 10, 3, 2, 0, false}, /* computes, but a thread waits for a CPU */
		{false, 9, 10, 0, 2, 0, false}, /* the host's count unknown */
		{false, 9, 0, 1, 2, 0, false},  /* no window yet */
		{true, 3, 10, 2, 2, 0, true},   /* wide: 30 % away keeps it */
		{true, 3, 10, 3, 2, 0, true},   /* ... and one thread more than the CPUs */
		{true, 2, 10, 2, 2, 0, false},  /* 20 % away: mostly waits, off again */
		{true, 9, 10, 4, 2, 0, false},  /* the host fills up: off again */
		{true, 0, 0, 9, 2, 0, true},    /* no window: unchanged */
		/* 4 ranks moved onto CPU 1 of 2; the engine counts them and its thread */
		{false, 9, 10, 5, 2, 5, true},  /* every runnable thread is the engine's: widen */
		{false, 9, 10, 6, 2, 5, false}, /* and one more: someone else's, stays */
		{false, 4, 10, 5, 2, 5, false}, /* waits more than it computes */
		{false, 9, 10, 3, 2, 2, false}, /* the engine's 2 fit the CPUs: the old rule */
		{false, 9, 10, 3, 2, 3, false}, /* 2 ranks and the engine on 2 CPUs: the old rule */
		{true, 5, 10, 4, 2, 3, false},  /* ... off again beyond CPUs + 1 */
		{true, 5, 10, 6, 2, 5, true},   /* wide: one thread more is kept */
		{true, 5, 10, 7, 2, 5, false},  /* two more: off again */
		{true, 2, 10, 5, 2, 5, false},  /* mostly waits: off again */
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK(tfi_place_adapt_decide(c[i].wide, c[i].away, c[i].window, c[i].runnable,
					     c[i].cpus, c[i].procs) == c[i].want,
		      "adapt case %zu: want %d", i, c[i].want);
}

/* The host's runnable threads, as the provider reads them (/proc/loadavg, "running/total"). */
static unsigned int
runnable_host(void)
{
	FILE *f = fopen("/proc/loadavg", "re");
	unsigned int running = 0;

	if (f != NULL) {
		if (fscanf(f, "%*s %*s %*s %u", &running) != 1)
			running = 0;
		fclose(f);
	}
	return running;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Call tfi_place_adapt every @p gap_ns (computing in between: a spin on the clock) until the
 * mask is @p want, for at most @p max_ns; true if it got there. */
static bool
adapt_until(const cpu_set_t *want, uint64_t gap_ns, uint64_t max_ns, unsigned int (*runnable)(void))
{
	uint64_t end = mono_ns() + max_ns;
	cpu_set_t got;

	for (unsigned long k = 1;; k++) {
		if (gap_ns != 0) {
			uint64_t t = mono_ns() + gap_ns;

			while (mono_ns() < t)
				;
		}
		tfi_place_adapt(runnable);
		/* back to back (gap 0): the mask and the clock only now and then, so that the
		 * polls stay closer than a step (TFI_STEP_NS) even under ASan: a system call
		 * between every two made each poll look like one after a short step */
		if (gap_ns == 0 && k % 256 != 0)
			continue;
		if (sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, want))
			return true;
		if (mono_ns() >= end)
			return false;
	}
}

/* Poll back to back for @p ns, after a gap of 3 us at every 8th poll. */
static void
mixed_polls(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;

	for (uint64_t k = 0; k % 64 != 0 || mono_ns() < end; k++) {
		if (k % 8 == 0) {
			uint64_t t = mono_ns() + 3000;

			while (mono_ns() < t)
				;
		}
		tfi_place_adapt(runnable_stub);
		tfi_place_adapt_inside();
	}
}

/* As the provider moves a process off the engine's CPU (@p engine_cpu): onto *narrow (every
 * CPU of @p all but that one), its yield counts, the measure started. false if it could not. */
static bool
moved(const cpu_set_t *all, int engine_cpu, cpu_set_t *narrow)
{
	*narrow = *all;
	CPU_CLR(engine_cpu, narrow);
	if (sched_setaffinity(0, sizeof(*narrow), narrow) != 0)
		return false;
	tfi_params.cpus = (unsigned int)CPU_COUNT(narrow);
	tfi_params.engine_here = 0;
	tfi_place_adapt_start(all, narrow);
	return true;
}

/* Live: moved off the engine's CPU (@p engine_cpu) to the others, a process that computes
 * between its polls gets every CPU back while the host has room, and loses the engine's again
 * when it polls without a break, or when the host is crowded; the time asleep in a blocking
 * wait does not count as computing. */
static int
adapt_case(const cpu_set_t *all, int engine_cpu, enum tfi_place_verdict want)
{
	cpu_set_t narrow, got;

	(void)want;
	if (!moved(all, engine_cpu, &narrow))
		return 2;
	/* crowded host: computing changes nothing (3 windows and more) */
	runnable_now = (unsigned int)CPU_COUNT(all) + 2;
	CHECK(!adapt_until(all, 500000, 4 * (uint64_t)TFI_ADAPT_WINDOW_NS, runnable_stub),
	      "widened on a crowded host");
	/* asleep in waits between polls: not computing */
	runnable_now = 1;
	for (uint64_t end = mono_ns() + 4 * (uint64_t)TFI_ADAPT_WINDOW_NS; mono_ns() < end;) {
		tfi_place_adapt(runnable_stub);
		usleep(1000); /* stands for an epoll_wait */
		tfi_place_adapt_inside();
	}
	CHECK(sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &narrow),
	      "widened while it slept in waits");
	/* quiet host, computing 0.5 ms between polls: every CPU again */
	CHECK(adapt_until(all, 500000, 50 * (uint64_t)TFI_ADAPT_WINDOW_NS, runnable_stub),
	      "not widened while computing on a quiet host");
	CHECK(tfi_params.cpus == (unsigned int)CPU_COUNT(all) && tfi_params.engine_here == 1,
	      "yield counts not updated: %u CPUs, engine %d", tfi_params.cpus,
	      tfi_params.engine_here);
	/* what the engine is told (tfi_place_hint) once a window of that computing ended: mostly
	 * away, movable. (The watch thread may have widened it first, after a pause of this
	 * thread longer than TFI_WATCH_NS on a loaded host, the value still that of the waits'
	 * window above: seen once as 44 per mille.) */
	for (uint64_t end = mono_ns() + 2 * (uint64_t)TFI_ADAPT_WINDOW_NS; mono_ns() < end;) {
		uint64_t t = mono_ns() + 500000;

		while (mono_ns() < t)
			;
		tfi_place_adapt(runnable_stub);
	}
	CHECK(tfi_params.compute != UINT_MAX && (tfi_params.compute & TFI_COMPUTE_MOVABLE) != 0 &&
		      (tfi_params.compute & ~TFI_COMPUTE_MOVABLE) >= 400,
	      "computing, moved: told 0x%x", tfi_params.compute);
	/* polling without a break (a program that waits on messages): off the engine's CPU. With
	 * the host's real count: on a loaded host the time this process waits for a CPU looks
	 * like time away, but then the host's count sends it off */
	CHECK(adapt_until(&narrow, 0, 200 * (uint64_t)TFI_ADAPT_WINDOW_NS, runnable_host),
	      "still on the engine's CPU while it only polls");
	CHECK(tfi_params.cpus == (unsigned int)CPU_COUNT(&narrow) && tfi_params.engine_here == 0,
	      "yield counts not restored: %u CPUs, engine %d", tfi_params.cpus,
	      tfi_params.engine_here);
	/* polling back to back with a short gap at every 8th poll (a reduction, a copy): not
	 * computing, stays off (a run that ends wide is tried again: a long preemption of this
	 * VM looks like time away) */
	runnable_now = 1;
	{
		bool narrow_end = false;

		for (int tries = 0; tries < 3 && !narrow_end; tries++) {
			mixed_polls(4 * (uint64_t)TFI_ADAPT_WINDOW_NS);
			narrow_end = sched_getaffinity(0, sizeof(got), &got) == 0 &&
				     CPU_EQUAL(&got, &narrow);
		}
		CHECK(narrow_end, "widened while it polled with a short gap at every 8th poll");
	}
	/* computing in 3 us steps with a poll after each (MPI_Test in a loop): every CPU */
	CHECK(adapt_until(all, 3000, 50 * (uint64_t)TFI_ADAPT_WINDOW_NS, runnable_stub),
	      "not widened while computing in short steps on a quiet host");
	return failures ? 1 : 0;
}

/* Spin for up to @p ns without a provider call until the mask is @p want (checked every ms):
 * true if it got there. */
static bool
spin_until(const cpu_set_t *want, uint64_t ns)
{
	uint64_t end = mono_ns() + ns, next = 0;
	cpu_set_t got;

	for (uint64_t now = mono_ns(); now < end; now = mono_ns())
		if (now >= next) {
			next = now + 1000000;
			if (sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, want))
				return true;
		}
	return false;
}

/* Live: moved off the engine's CPU (@p engine_cpu), a process that computes for long without
 * a provider call (no window of polls ends) gets every CPU back from the watch thread on a
 * quiet host; not on a crowded one, and not while it sleeps as long without a call. */
static int
watch_case(const cpu_set_t *all, int engine_cpu, enum tfi_place_verdict want)
{
	cpu_set_t narrow, got;

	(void)want;
	if (!moved(all, engine_cpu, &narrow))
		return 2;
	runnable_now = 1;
	tfi_place_adapt(runnable_stub); /* (the count the watch asks) */
	tfi_place_adapt_inside();
	usleep(50000); /* asleep, no call: uses no CPU */
	CHECK(sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &narrow),
	      "the watch widened a process asleep");
	/* crowded: the watch's own reading of the count is left out, so cpus + 2 others */
	runnable_now = (unsigned int)CPU_COUNT(all) + 3;
	tfi_place_adapt_inside();
	CHECK(!spin_until(all, 50000000), "the watch widened a process on a crowded host");
	runnable_now = 1;
	tfi_place_adapt_inside();
	CHECK(spin_until(all, 1000000000), "computing 1 s without a call, never widened");
	CHECK(tfi_params.cpus == (unsigned int)CPU_COUNT(all) && tfi_params.engine_here == 1,
	      "yield counts not updated by the watch: %u CPUs, engine %d", tfi_params.cpus,
	      tfi_params.engine_here);
	return failures ? 1 : 0;
}

/* Live: a process already off the engine's CPU (@p engine_cpu) is measured only: computing
 * 0.5 ms between polls on a quiet host it is told to the engine as mostly away, not movable,
 * and its mask stays. */
static int
measure_case(const cpu_set_t *all, int engine_cpu, enum tfi_place_verdict want)
{
	cpu_set_t narrow = *all, got;

	(void)want;
	CPU_CLR(engine_cpu, &narrow);
	if (sched_setaffinity(0, sizeof(narrow), &narrow) != 0)
		return 2;
	tfi_params.compute = UINT_MAX; /* as tfi_init.c starts it: not measured */
	tfi_place_adapt_start(&narrow, &narrow);
	runnable_now = 1;
	CHECK(!adapt_until(all, 500000, 4 * (uint64_t)TFI_ADAPT_WINDOW_NS, runnable_stub),
	      "measured only, yet widened");
	CHECK(sched_getaffinity(0, sizeof(got), &got) == 0 && CPU_EQUAL(&got, &narrow),
	      "measured only, yet its mask changed");
	CHECK(tfi_params.compute != UINT_MAX && (tfi_params.compute & TFI_COMPUTE_MOVABLE) == 0 &&
		      (tfi_params.compute & ~TFI_COMPUTE_MOVABLE) >= 400,
	      "computing, measured only: told 0x%x", tfi_params.compute);
	return failures ? 1 : 0;
}

static void
in_child(const char *name, int (*fn)(const cpu_set_t *, int, enum tfi_place_verdict),
	 const cpu_set_t *set, int cpu, enum tfi_place_verdict want)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		failures = 0; /* the child's own: an earlier case's failure is not this one's */
		_exit(fn(set, cpu, want));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "FAIL live case '%s'\n", name);
		failures++;
	} else {
		printf("live case '%s': ok\n", name);
	}
}

static int
move_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	(void)want;
	return live_move(all, cpu);
}

static int
off_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	tfi_params.place = false;
	return live_stay(all, cpu, want);
}

static int
bound_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	cpu_set_t one;

	/* bound to the engine's CPU itself: still left there */
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	(void)all;
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		return 2;
	return live_stay(&one, cpu, want);
}

static int
launcher_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	setenv("OMPI_MCA_hwloc_base_binding_policy", "core", 1);
	return live_stay(all, cpu, want);
}

/* mpirun bound it by its default to the engine's CPU: moved onto every other, and may get
 * the host back, not the one core */
static int
launcher_default_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	uint64_t m[TRD_VNI_CPU_WORDS] = {0};
	cpu_set_t one, now, wide, got, rest = *all;
	enum tfi_place_verdict v;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CPU_CLR(cpu, &rest);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		return 2;
	setenv("OMPI_MCA_orte_bound_at_launch", "1", 1);
	m[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	v = tfi_place_self(m, &now, &wide);
	CHECK(v == want, "%s, expected %s", tfi_place_verdict_name(v),
	      tfi_place_verdict_name(want));
	CHECK(CPU_EQUAL(&now, &rest) && sched_getaffinity(0, sizeof(got), &got) == 0 &&
		      CPU_EQUAL(&got, &rest),
	      "mpirun's default: on %d CPUs, want the %d without the engine's", CPU_COUNT(&got),
	      CPU_COUNT(&rest));
	CHECK(CPU_EQUAL(&wide, all), "mpirun's default: may get back %d CPUs, want %d",
	      CPU_COUNT(&wide), CPU_COUNT(all));
	return failures ? 1 : 0;
}

/* ... but a binding the user asked mpirun for (--map-by core:PE=1) stays */
static int
launcher_asked_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	cpu_set_t one;

	(void)all;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		return 2;
	setenv("OMPI_MCA_orte_bound_at_launch", "1", 1);
	setenv("OMPI_MCA_rmaps_base_mapping_policy", "core:PE=1", 1);
	return live_stay(&one, cpu, want);
}

static int
launcher_none_case(const cpu_set_t *all, int cpu, enum tfi_place_verdict want)
{
	(void)want;
	setenv("OMPI_MCA_hwloc_base_binding_policy", "none", 1);
	return live_move(all, cpu);
}

int
main(void)
{
	cpu_set_t all, online;
	int first = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("OMPI_MCA_hwloc_base_binding_policy");
	unsetenv("OMPI_MCA_orte_bound_at_launch");
	unsetenv("OMPI_MCA_hwloc_base_cpu_set");
	unsetenv("OMPI_MCA_rmaps_base_mapping_policy");
	unsetenv("OMPI_MCA_rmaps_base_ranking_policy");
	unsetenv("OMPI_MCA_rmaps_rank_file_path");
	decisions();
	yield_decisions();
	adapt_decisions();
	printf("decisions: %s\n", failures ? "FAILED" : "ok");

	if (sched_getaffinity(0, sizeof(all), &all) != 0) {
		perror("sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &all))
			first = c;
	if (CPU_COUNT(&all) < 2) {
		printf("SKIP live cases: this process may run on %d CPU (2 needed)\n",
		       CPU_COUNT(&all));
		return failures ? 1 : 77;
	}
	{
		FILE *f = fopen("/sys/devices/system/cpu/online", "re");
		char b[256];

		if (f == NULL || fgets(b, sizeof(b), f) == NULL ||
		    tfi_place_parse_list(b, &online) != 0) {
			if (f)
				fclose(f);
			printf("SKIP live cases: cannot read the online CPUs\n");
			return failures ? 1 : 77;
		}
		fclose(f);
		{
			cpu_set_t ours;

			CPU_AND(&ours, &online, &all);
			if (CPU_COUNT(&ours) !=
			    CPU_COUNT(&online)) { /* an online CPU is not ours */
				printf("SKIP live cases: this test was started bound (%d CPUs), "
				       "run it unbound\n",
				       CPU_COUNT(&all));
				return failures ? 1 : 77;
			}
		}
	}
	in_child("unbound: every thread moves off the engine's CPU", move_case, &all, first,
		 TFI_PLACE_MOVED);
	in_child("FI_TOROID_PLACE=off: stays", off_case, &all, first, TFI_PLACE_OFF);
	in_child("bound to the engine's CPU: stays", bound_case, &all, first, TFI_PLACE_BOUND);
	in_child("launcher binding policy core: stays", launcher_case, &all, first,
		 TFI_PLACE_BOUND);
	in_child("launcher binding policy none: moves", launcher_none_case, &all, first,
		 TFI_PLACE_MOVED);
	in_child("mpirun's default binding on the engine's CPU: moves", launcher_default_case, &all,
		 first, TFI_PLACE_DEFAULT);
	in_child("a binding asked of mpirun (--map-by core:PE=1): stays", launcher_asked_case, &all,
		 first, TFI_PLACE_BOUND);
	in_child("moved: every CPU back while it computes, off the engine's while it polls",
		 adapt_case, &all, first, TFI_PLACE_MOVED);
	in_child("moved: every CPU back from the watch while it computes without a call",
		 watch_case, &all, first, TFI_PLACE_MOVED);
	in_child("already off the engine's CPU: measured, told, never moved", measure_case, &all,
		 first, TFI_PLACE_ALREADY);
	printf("%s\n", failures ? "FAILED" : "PASS");
	return failures ? 1 : 0;
}
