/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where an unbound process runs (docs/libfabric.md, "Where the process runs"): a process that
 * no one bound (its affinity is every CPU it may use) moves off the CPUs of toroid-node's
 * polling thread, which the engine publishes in the segment (trd_vni_engine_cpus), as long as
 * another CPU is left. On a host with few CPUs a rank that shares the engine's CPU takes turns
 * with it at every message while another CPU may sit idle; a binding that the user or the
 * launcher chose is never changed. A moved process that computes more than it waits gets the
 * engine's CPUs back while the host has a CPU per runnable thread (tfi_place_adapt).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tfi.h"

const char *
tfi_place_verdict_name(enum tfi_place_verdict v)
{
	static const char *const names[] = {
		[TFI_PLACE_MOVED] = "moved off the engine's CPUs",
		[TFI_PLACE_OFF] = "FI_TOROID_PLACE=off",
		[TFI_PLACE_BOUND] = "bound by the user or the launcher: left alone",
		[TFI_PLACE_UNKNOWN] = "the engine does not say where it runs",
		[TFI_PLACE_NO_ROOM] = "no CPU of this process is free of the engine",
		[TFI_PLACE_ALREADY] = "already off the engine's CPUs",
		[TFI_PLACE_FAILED] = "sched_setaffinity failed",
		[TFI_PLACE_DEFAULT] = "moved off the engine's CPU that mpirun's default binding "
				      "gave it",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == TFI_PLACE_MAX, "a name per verdict");

	return (unsigned int)v < TFI_PLACE_MAX ? names[v] : "?";
}

enum tfi_place_verdict
tfi_place_decide(const cpu_set_t *cur, const cpu_set_t *usable, const cpu_set_t *engine,
		 enum tfi_launcher launcher, cpu_set_t *out)
{
	cpu_set_t missing, shared, rest;

	CPU_ZERO(out);
	if (CPU_COUNT(engine) == 0)
		return TFI_PLACE_UNKNOWN;
	/* bound: the mask leaves out a CPU the process may use, or the launcher says it bound
	 * the process as asked (to a socket that is the whole host, say) */
	CPU_XOR(&missing, usable, cur);
	CPU_AND(&missing, &missing, usable);
	if (launcher == TFI_LAUNCH_CHOSEN ||
	    (CPU_COUNT(&missing) != 0 && launcher != TFI_LAUNCH_DEFAULT))
		return TFI_PLACE_BOUND;
	CPU_AND(&shared, cur, engine);
	if (CPU_COUNT(&shared) == 0)
		return TFI_PLACE_ALREADY;
	if (CPU_COUNT(&missing) != 0) {
		/* mpirun's own choice, no one's request: off the engine, anywhere else */
		CPU_XOR(&rest, usable, engine);
		CPU_AND(out, &rest, usable);
		return CPU_COUNT(out) != 0 ? TFI_PLACE_DEFAULT : TFI_PLACE_NO_ROOM;
	}
	CPU_XOR(out, cur, &shared); /* cur without the engine's */
	if (CPU_COUNT(out) == 0)
		return TFI_PLACE_NO_ROOM;
	return TFI_PLACE_MOVED;
}

/* Parse a kernel CPU list ("0-3,8,10-11\n") into @p set. 0, or -1 if malformed or empty. */
int
tfi_place_parse_list(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s != '\0' && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		for (unsigned long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET(c, set);
		if (*s == ',')
			s++;
		else if (*s != '\0' && *s != '\n')
			return -1;
	}
	return CPU_COUNT(set) > 0 ? 0 : -1;
}

/* Read a CPU list file into @p set. 0 or -1. */
static int
read_list(const char *path, cpu_set_t *set)
{
	char b[1024];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = '\0';
	return tfi_place_parse_list(b, set);
}

/* The CPUs this process may use: those online, within its cgroup's cpuset (cgroup v2) when
 * that can be read. 0, or -1 when not even the online CPUs can be read. */
static int
usable_cpus(cpu_set_t *set)
{
	char line[512], path[600];
	cpu_set_t cg;
	FILE *f;

	if (read_list("/sys/devices/system/cpu/online", set) != 0)
		return -1;
	f = fopen("/proc/self/cgroup", "re");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t n = strlen(line);

		if (strncmp(line, "0::", 3) != 0)
			continue;
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpuset.cpus.effective", line + 3);
		if (read_list(path, &cg) == 0)
			CPU_AND(set, set, &cg);
		break;
	}
	fclose(f);
	return 0;
}

/* How did the launcher bind this process? Open MPI's mpirun exports its --bind-to policy
 * (none included), --cpu-set, --map-by and --rank-by only when they were given, and
 * orte_bound_at_launch whenever it bound the process: bound without any of them is its
 * default (2 ranks or fewer: one core each, the engine's for rank 0 on a 2-CPU host). */
static enum tfi_launcher
launcher_binding(void)
{
	static const char *const asked[] = {
		"OMPI_MCA_hwloc_base_cpu_set",
		"OMPI_MCA_rmaps_base_mapping_policy",
		"OMPI_MCA_rmaps_base_ranking_policy",
		"OMPI_MCA_rmaps_rank_file_path",
	};
	const char *p = getenv("OMPI_MCA_hwloc_base_binding_policy");
	const char *at = getenv("OMPI_MCA_orte_bound_at_launch");

	if (p != NULL && p[0] != '\0')
		return strncmp(p, "none", 4) != 0 ? TFI_LAUNCH_CHOSEN : TFI_LAUNCH_NONE;
	if (at == NULL || strcmp(at, "1") != 0)
		return TFI_LAUNCH_NONE;
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		p = getenv(asked[i]);
		if (p != NULL && p[0] != '\0')
			return TFI_LAUNCH_NONE; /* the mask says whether it was bound */
	}
	return TFI_LAUNCH_DEFAULT;
}

/* Give every thread of the process the mask (threads made later inherit it from theirs). */
static int
set_all_threads(const cpu_set_t *set)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	int rc = 0;

	if (d == NULL)
		return sched_setaffinity(0, sizeof(*set), set) == 0 ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid > 0 && sched_setaffinity((pid_t)tid, sizeof(*set), set) != 0 && rc == 0 &&
		    errno != ESRCH)
			rc = -errno;
	}
	closedir(d);
	return rc;
}

enum tfi_place_verdict
tfi_place_self(const uint64_t engine_mask[TRD_VNI_CPU_WORDS], cpu_set_t *now, cpu_set_t *wide)
{
	cpu_set_t cur, usable, engine, out;
	enum tfi_place_verdict v;

	if (sched_getaffinity(0, sizeof(cur), &cur) != 0)
		return TFI_PLACE_FAILED;
	*now = *wide = cur;
	if (!tfi_params.place)
		return TFI_PLACE_OFF;
	if (usable_cpus(&usable) != 0)
		usable = cur; /* cannot tell: as if unbound */
	CPU_ZERO(&engine);
	for (unsigned int c = 0; c < 64 * TRD_VNI_CPU_WORDS && c < CPU_SETSIZE; c++)
		if (engine_mask[c / 64] & (UINT64_C(1) << (c % 64)))
			CPU_SET(c, &engine);
	v = tfi_place_decide(&cur, &usable, &engine, launcher_binding(), &out);
	if (v != TFI_PLACE_MOVED && v != TFI_PLACE_DEFAULT)
		return v;
	if (set_all_threads(&out) != 0)
		return TFI_PLACE_FAILED;
	*now = out;
	if (v == TFI_PLACE_DEFAULT)
		*wide = usable; /* what it may get back is the host, not mpirun's one core */
	return v;
}

/* Is one of @p cpus in the engine's @p mask? */
static bool
on_engine(const cpu_set_t *cpus, const uint64_t mask[TRD_VNI_CPU_WORDS])
{
	for (unsigned int c = 0; c < 64 * TRD_VNI_CPU_WORDS && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus) && (mask[c / 64] & (UINT64_C(1) << (c % 64))))
			return true;
	return false;
}

/* The process's two masks once it was moved (tfi_place_once), and the time it spends away from
 * the provider (computing) in the current window (tfi_place_adapt). */
static struct {
	pthread_mutex_t lock;
	bool moved, wide;
	bool measure_only; /* off the engine's CPUs by itself: measured for the engine only */
	cpu_set_t narrow, all;
	uint64_t last, start, away;
	/* short steps: polls, those after a gap of TFI_STEP_NS .. TFI_AWAY_NS, the sum of those
	 * gaps, and the time this process gave away in its polls' yields */
	uint64_t polls, steps, brief, given;
	bool one_sided;                 /* tfi_place_one_sided(): wide for good */
	unsigned int (*runnable)(void); /* the count the last tfi_place_adapt asked (the watch) */
} adapt = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Give the process every CPU (@p wide) or those without the engine's, and the yield decision
 * its count (adapt.lock held): true if done. */
static bool
adapt_set(bool wide)
{
	if (set_all_threads(wide ? &adapt.all : &adapt.narrow) != 0)
		return false;
	__atomic_store_n(&adapt.wide, wide, __ATOMIC_RELAXED);
	__atomic_store_n(&tfi_params.cpus,
			 (unsigned int)CPU_COUNT(wide ? &adapt.all : &adapt.narrow),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&tfi_params.engine_here, wide ? 1 : 0, __ATOMIC_RELAXED);
	return true;
}

void
tfi_place_one_sided(void)
{
	/* MPI one-sided epochs (osc rdma) wait by spinning in MPI's progress loop, outside the
	 * provider's yields at times: two ranks on one CPU then take turns in time slices of
	 * milliseconds (200 post/start/complete/wait epochs of 2 ranks took 1.6 s narrow, 5 ms
	 * on both CPUs). Such a process keeps every CPU it may use. */
	if (__atomic_exchange_n(&adapt.one_sided, true, __ATOMIC_ACQ_REL) ||
	    !__atomic_load_n(&adapt.moved, __ATOMIC_ACQUIRE) || adapt.measure_only)
		return;
	FI_INFO(&tfi_prov, FI_LOG_CORE,
		"placement: one-sided operations: back on the engine's CPUs, for good\n");
}

bool
tfi_place_adapt_decide(bool wide, uint64_t away, uint64_t window, unsigned int runnable,
		       unsigned int cpus, unsigned int procs)
{
	/* the host's load is the engine's own processes (this job's ranks squeezed onto the
	 * CPUs left to them, computing) and its thread: more ranks than CPUs then compute on
	 * half the host while the engine's CPU idles, unless they widen. As many ranks as CPUs
	 * keep the rule below (2 ranks widened beside the engine exchanged long messages more
	 * slowly than on one CPU) */
	bool many = procs > cpus + 1;
	bool ours = many && runnable <= procs;

	if (window == 0)
		return wide;
	/* away at least half the window, and no other thread waits for a CPU: the engine's CPU
	 * idles while this process computes on the others */
	if (!wide)
		return away * 2 >= window && runnable > 0 && (runnable <= cpus || ours);
	/* waiting most of the window (each message then turns the engine and this process on one
	 * CPU), or the host crowded beyond one thread more than its CPUs and the engine's
	 * processes: off it again */
	return away * 4 >= window && (runnable <= cpus + 1 || (many && runnable <= procs + 1));
}

void
tfi_place_adapt(unsigned int (*runnable)(void))
{
	uint64_t now, gap, last;
	bool wide;

	if (!__atomic_load_n(&adapt.moved, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&adapt.runnable, runnable, __ATOMIC_RELAXED);
	now = tfi_now_ns();
	last = __atomic_exchange_n(&adapt.last, now, __ATOMIC_RELAXED);
	gap = now > last ? now - last : 0;
	__atomic_fetch_add(&adapt.polls, 1, __ATOMIC_RELAXED);
	if (gap >= TFI_AWAY_NS) {
		__atomic_fetch_add(&adapt.away, gap, __ATOMIC_RELAXED);
	} else if (gap >= TFI_STEP_NS) {
		__atomic_fetch_add(&adapt.steps, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&adapt.brief, gap, __ATOMIC_RELAXED);
	}
	if (now - __atomic_load_n(&adapt.start, __ATOMIC_RELAXED) < TFI_ADAPT_WINDOW_NS ||
	    pthread_mutex_trylock(&adapt.lock) != 0)
		return;
	if (now - adapt.start >= TFI_ADAPT_WINDOW_NS) {
		uint64_t away = __atomic_exchange_n(&adapt.away, 0, __ATOMIC_RELAXED);
		uint64_t polls = __atomic_exchange_n(&adapt.polls, 0, __ATOMIC_RELAXED);
		uint64_t steps = __atomic_exchange_n(&adapt.steps, 0, __ATOMIC_RELAXED);
		uint64_t brief = __atomic_exchange_n(&adapt.brief, 0, __ATOMIC_RELAXED);
		uint64_t given = __atomic_exchange_n(&adapt.given, 0, __ATOMIC_RELAXED);
		uint64_t window = now - adapt.start;

		/* computing in short steps, a poll after each (MPI_Test in a loop): a quarter of
		 * the polls or more come after a step; a program that waits polls back to back
		 * between its few (a reduction, a copy) */
		if (polls >= TFI_STEP_POLLS && steps * 4 >= polls)
			away += brief;
		/* the time a yield gave a peer on this CPU is neither computing nor waiting here */
		window = window > given + away ? window - given : away;
		/* for the engine: whether the processes moved off its CPUs need them back (away
		 * is at most the window, as just made) */
		__atomic_store_n(&tfi_params.compute,
				 (window != 0 ? (unsigned int)(away * 1000 / window) : 0) |
					 (adapt.measure_only ? 0 : TFI_COMPUTE_MOVABLE),
				 __ATOMIC_RELAXED);
		wide = adapt.measure_only
			       ? adapt.wide
			       : __atomic_load_n(&adapt.one_sided, __ATOMIC_ACQUIRE) ||
					 tfi_place_adapt_decide(
						 adapt.wide, away, window, runnable(),
						 (unsigned int)CPU_COUNT(&adapt.all),
						 __atomic_load_n(&tfi_params.engine_procs,
								 __ATOMIC_RELAXED));
		if (wide != adapt.wide && adapt_set(wide))
			FI_INFO(&tfi_prov, FI_LOG_CORE,
				"placement: %s the engine's CPUs (away %" PRIu64 " of %" PRIu64
				" us, %" PRIu64 " of %" PRIu64 " polls after a step)\n",
				wide ? "back on" : "off", away / 1000, window / 1000, steps, polls);
		__atomic_store_n(&adapt.start, now, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&adapt.lock);
}

void
tfi_place_hint(struct trd_vni *vni)
{
	unsigned int c = __atomic_load_n(&tfi_params.compute, __ATOMIC_RELAXED);

	if (c != UINT_MAX)
		trd_vni_hint_compute(vni, c & ~TFI_COMPUTE_MOVABLE,
				     (c & TFI_COMPUTE_MOVABLE) != 0 ? TRD_VNI_HINT_MOVABLE : 0);
}

static uint64_t
process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The watch thread, stopped and joined when the provider's library goes (the destructor
 * below: Open MPI unloads it at MPI_Finalize, and a thread left running in unloaded code
 * crashes the process) */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t thread;
	bool running, stop;
} watcher = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* The watch: windows end at polls, so a process that computes for long without calling the
 * provider (a phase between two barriers) was never judged, and two ranks placed on the one
 * CPU the engine leaves computed it at half speed while the engine's CPU idled. Every
 * TFI_WATCH_NS, while the process is off the engine's CPUs, the watch looks: no provider call
 * for that long, at least a quarter of it used by the process in CPU time (computing, not
 * asleep), and the host has room (tfi_place_adapt_decide, this thread's own reading of the
 * count left out): every CPU back; the polls' windows judge it again afterwards. */
static void *
watch(void *arg)
{
	uint64_t t0 = tfi_now_ns(), c0 = process_cpu_ns();

	(void)arg;
	for (;;) {
		unsigned int (*runnable)(void);
		uint64_t now, cpu, busy, span, gap;
		struct timespec ts;
		unsigned int r;
		bool stop;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += TFI_WATCH_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&watcher.lock);
		while (!watcher.stop && pthread_cond_clockwait(&watcher.cv, &watcher.lock,
							       CLOCK_MONOTONIC, &ts) == 0)
			;
		stop = watcher.stop;
		pthread_mutex_unlock(&watcher.lock);
		if (stop)
			return NULL;
		now = tfi_now_ns();
		cpu = process_cpu_ns();
		busy = cpu - c0;
		span = now - t0;
		t0 = now;
		c0 = cpu;
		gap = now - __atomic_load_n(&adapt.last, __ATOMIC_RELAXED);
		runnable = __atomic_load_n(&adapt.runnable, __ATOMIC_RELAXED);
		if (__atomic_load_n(&adapt.wide, __ATOMIC_RELAXED) || gap > now ||
		    gap < TFI_WATCH_NS || busy * 4 < span || runnable == NULL)
			continue;
		r = runnable();
		r = r > 1 ? r - 1 : r; /* (this thread, running as it reads) */
		if (pthread_mutex_trylock(&adapt.lock) != 0)
			continue;
		if (!adapt.wide &&
		    tfi_place_adapt_decide(
			    false, gap, gap, r, (unsigned int)CPU_COUNT(&adapt.all),
			    __atomic_load_n(&tfi_params.engine_procs, __ATOMIC_RELAXED)) &&
		    adapt_set(true))
			FI_INFO(&tfi_prov, FI_LOG_CORE,
				"placement: back on the engine's CPUs (computing for %" PRIu64
				" us without a call)\n",
				gap / 1000);
		pthread_mutex_unlock(&adapt.lock);
	}
	return NULL;
}

__attribute__((destructor)) static void
watch_end(void)
{
	bool running;

	pthread_mutex_lock(&watcher.lock);
	running = watcher.running;
	watcher.stop = true;
	pthread_cond_signal(&watcher.cv);
	pthread_mutex_unlock(&watcher.lock);
	if (running)
		pthread_join(watcher.thread, NULL);
}

/* A forked child has no watch thread (nor a lock one held at the fork) */
static void
watch_child(void)
{
	pthread_mutex_init(&watcher.lock, NULL);
	pthread_mutex_init(&adapt.lock, NULL);
	watcher.running = false;
}

static void
watch_start(void)
{
	pthread_mutex_lock(&watcher.lock);
	if (!watcher.running && !watcher.stop) {
		watcher.running = pthread_create(&watcher.thread, NULL, watch, NULL) == 0;
		if (watcher.running) {
			pthread_setname_np(watcher.thread, "toroid-place");
			pthread_atfork(NULL, NULL, watch_child);
		}
	}
	pthread_mutex_unlock(&watcher.lock);
}

void
tfi_place_adapt_start(const cpu_set_t *all, const cpu_set_t *narrow)
{
	pthread_mutex_lock(&adapt.lock);
	/* equal sets: a process already off the engine's CPUs, measured only */
	if (CPU_COUNT(all) >= CPU_COUNT(narrow)) {
		adapt.all = *all;
		adapt.narrow = *narrow;
		adapt.wide = false;
		adapt.measure_only = !(CPU_COUNT(all) > CPU_COUNT(narrow));
		adapt.away = adapt.polls = adapt.steps = adapt.brief = adapt.given = 0;
		adapt.start = adapt.last = tfi_now_ns();
		__atomic_store_n(&adapt.moved, true, __ATOMIC_RELEASE);
		if (!adapt.measure_only)
			watch_start();
	}
	pthread_mutex_unlock(&adapt.lock);
}

void
tfi_place_yield(void)
{
	uint64_t t0;

	if (!__atomic_load_n(&adapt.moved, __ATOMIC_ACQUIRE)) {
		sched_yield();
		return;
	}
	t0 = tfi_now_ns();
	sched_yield();
	__atomic_fetch_add(&adapt.given, tfi_now_ns() - t0, __ATOMIC_RELAXED);
}

void
tfi_place_adapt_inside(void)
{
	if (__atomic_load_n(&adapt.moved, __ATOMIC_ACQUIRE))
		__atomic_store_n(&adapt.last, tfi_now_ns(), __ATOMIC_RELAXED);
}

/* Once per process, at its first endpoint: the engine's CPUs come with the first attach. */
void
tfi_place_once(struct trd_vni *vni)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static bool done;
	uint64_t mask[TRD_VNI_CPU_WORDS];
	enum tfi_place_verdict v;
	cpu_set_t now, all;
	int n_engine;

	pthread_mutex_lock(&lock);
	if (done) {
		pthread_mutex_unlock(&lock);
		return;
	}
	done = true;
	n_engine = trd_vni_engine_cpus(vni, mask);
	if (n_engine < 0)
		memset(mask, 0, sizeof(mask));
	v = tfi_place_self(mask, &now, &all);
	/* for the yield decision: does this process share a CPU with the engine? */
	__atomic_store_n(&tfi_params.engine_here,
			 n_engine > 0 ? (on_engine(&now, mask) ? 1 : 0) : -1, __ATOMIC_RELAXED);
	if (v == TFI_PLACE_MOVED || v == TFI_PLACE_DEFAULT) {
		/* the yield decision counts the CPUs this process may run on */
		__atomic_store_n(&tfi_params.cpus, (unsigned int)CPU_COUNT(&now), __ATOMIC_RELAXED);
		if (tfi_params.place_adapt)
			tfi_place_adapt_start(&all, &now);
		FI_INFO(&tfi_prov, FI_LOG_CORE, "placement: %s, now on %d CPU(s)\n",
			tfi_place_verdict_name(v), CPU_COUNT(&now));
	} else if (n_engine > 0 && !on_engine(&now, mask) &&
		   (v == TFI_PLACE_ALREADY || v == TFI_PLACE_BOUND)) {
		/* off the engine's CPUs already: only how much it computes is measured, for the
		 * engine to know whether the processes off its CPUs need them
		 * (trd_vni_hint_compute) */
		if (tfi_params.place_adapt)
			tfi_place_adapt_start(&now, &now);
		FI_INFO(&tfi_prov, FI_LOG_CORE, "placement: %s\n", tfi_place_verdict_name(v));
	} else if (v == TFI_PLACE_BOUND && on_engine(&now, mask)) {
		/* left alone, but the user may not know what it costs */
		FI_WARN(&tfi_prov, FI_LOG_CORE,
			"placement: %s, on a CPU of toroid-node's polling thread: the two take "
			"turns at every message; an unbound process (mpirun --bind-to none), or "
			"one bound by mpirun's default, is placed off it\n",
			tfi_place_verdict_name(v));
	} else {
		FI_INFO(&tfi_prov, FI_LOG_CORE, "placement: %s\n", tfi_place_verdict_name(v));
	}
	pthread_mutex_unlock(&lock);
}

bool
tfi_yield_decide(uint32_t idle, unsigned int busy, unsigned int cpus, int engine_here,
		 unsigned int (*runnable)(void))
{
	unsigned int procs = busy - (engine_here == 0 && busy > 0 ? 1 : 0);

	if (idle == 0)
		return false;
	/* Our one CPU is the engine thread's too: nothing comes unless the engine runs. */
	if (cpus == 1 && engine_here == 1)
		return true;
	/* The processes attached to the engine (and its thread, unless it runs on none of our
	 * CPUs) outnumber our CPUs, but at most two share each: the one that shares ours is
	 * the peer whose message we wait for, or the engine, and every poll before the yield
	 * keeps it waiting. Yield at once. With more on each CPU a yield may go to a process
	 * that waits too and yields back, and so on: spin first (4 ranks on one CPU took 3 x as
	 * long with the yield at once). */
	if (procs > cpus && procs <= 2 * cpus)
		return true;
	/* Others crowd the host (the engine on our CPU, other programs): poll a little, for a
	 * completion that the engine on another CPU is about to write, then yield. */
	return idle >= TFI_SPIN_POLLS && (busy > cpus || runnable() > cpus);
}
