/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "app_common.h"

const char *app_default_lcores;

void
app_default_lcore_list(char *buf, size_t len)
{
	cpu_set_t set;
	int first = -1, second = -1;

	/* the first two CPUs this process may run on */
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int i = 0; i < CPU_SETSIZE && second < 0; i++) {
			if (!CPU_ISSET(i, &set))
				continue;
			if (first < 0)
				first = i;
			else
				second = i;
		}
	}
	if (first < 0)
		snprintf(buf, len, "0");
	else if (second < 0)
		snprintf(buf, len, "%d", first);
	else
		snprintf(buf, len, second == first + 1 ? "%d-%d" : "%d,%d", first, second);
}

/*
 * Who holds the lock a primary EAL process keeps on <runtime dir>/config (the lock that makes
 * a second primary with the same --file-prefix fail, and leave rte_errno at 0)? Its pid and
 * command name; -1 when nobody holds it (or there is no such file).
 */
static pid_t
app_eal_lock_holder(char *comm, size_t len)
{
	char path[PATH_MAX];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	const char *dir = rte_eal_get_runtime_dir();
	FILE *f;
	int fd;

	if (dir == NULL || dir[0] == '\0' ||
	    snprintf(path, sizeof(path), "%s/config", dir) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK || fl.l_pid <= 0) {
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)fl.l_pid);
	comm[0] = '\0';
	f = fopen(path, "r");
	if (f != NULL) {
		if (fgets(comm, (int)len, f) != NULL)
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	return fl.l_pid;
}

/* rte_eal_init() failed: say why in one line. EAL leaves rte_errno at 0 on some failures
 * (a config it cannot make or lock, where "Success" was printed): then the lock's holder if a
 * primary was to start, else EAL's own messages above. */
static void
app_eal_init_failed(void)
{
	const char *prog = program_invocation_short_name;
	char comm[64], dir[PATH_MAX];
	pid_t holder = -1;

	if (rte_errno == 0 && rte_eal_process_type() != RTE_PROC_SECONDARY)
		holder = app_eal_lock_holder(comm, sizeof(comm));
	if (holder > 0) {
		snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
		fprintf(stderr,
			"%s: cannot start EAL: --file-prefix %s is taken: another %s (process %d) "
			"with the same --file-prefix is running; give each process a "
			"--file-prefix of its own\n",
			prog, basename(dir), comm[0] ? comm : "DPDK process", (int)holder);
	} else if (rte_errno == EACCES) {
		/* rte_eal_init() gives EACCES when it finds no hugepage it may use */
		fprintf(stderr,
			"%s: cannot start EAL: %s: usually no usable hugepages (EAL says \"Cannot "
			"get hugepage information\" above): reserve some (echo 512 > "
			"/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages, as root) or run "
			"without them: --no-huge\n",
			prog, rte_strerror(rte_errno));
	} else if (rte_errno != 0) {
		fprintf(stderr, "%s: cannot start EAL: %s\n", prog, rte_strerror(rte_errno));
	} else {
		fprintf(stderr, "%s: cannot start EAL (EAL's messages above say why)\n", prog);
	}
}

void
app_split_args(int argc, char **argv, int *app_argc, char ***app_argv)
{
	char **app = calloc((size_t)argc + 1, sizeof(*app));
	int sep = -1, na = 0;

	if (app == NULL)
		rte_exit(EXIT_FAILURE, "out of memory\n");
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	app[na++] = argv[0];
	for (int i = sep < 0 ? 1 : sep + 1; i < argc; i++)
		app[na++] = argv[i];
	app[na] = NULL;
	*app_argc = na;
	*app_argv = app;
}

const char *
app_eal_defaults(void)
{
	return "--no-huge --no-pci --no-shconf -m 1024 -l 0-1 --log-level lib.eal:error "
	       "--log-level lib.telemetry:error";
}

void
app_eal_init(int argc, char **argv, const char *mem_mb, int *app_argc, char ***app_argv)
{
	static char *eal[128];
	static char lcores[32];
	int sep = -1, n = 0;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (argc > 120)
		rte_exit(EXIT_FAILURE, "too many arguments\n");
	app_split_args(argc, argv, app_argc, app_argv);

	eal[n++] = argv[0];
	if (sep > 1) {
		bool no_huge = false, mem = false;

		/* telemetry's start-up chatter off; the user's own --log-level comes later and
		 * wins */
		eal[n++] = (char *)"--log-level";
		eal[n++] = (char *)"lib.telemetry:error";
		for (int i = 1; i < sep; i++) {
			eal[n++] = argv[i];
			no_huge |= strcmp(argv[i], "--no-huge") == 0;
			mem |= strncmp(argv[i], "-m", 2) == 0 ||
			       strncmp(argv[i], "--socket-mem", 12) == 0;
		}
		/* without hugepages EAL's default is 64 MB, too little for the apps' pools: give
		 * the app's own default unless the command line says how much */
		if (no_huge && !mem) {
			eal[n++] = (char *)"-m";
			eal[n++] = (char *)(mem_mb ? mem_mb : "1024");
		}
	} else {
		if (app_default_lcores != NULL)
			snprintf(lcores, sizeof(lcores), "%s", app_default_lcores);
		else
			app_default_lcore_list(lcores, sizeof(lcores));
		eal[n++] = (char *)"--no-huge";
		eal[n++] = (char *)"--no-pci";
		eal[n++] = (char *)"--no-shconf";
		eal[n++] = (char *)"-m";
		eal[n++] = (char *)(mem_mb ? mem_mb : "1024");
		eal[n++] = (char *)"-l";
		eal[n++] = lcores;
		eal[n++] = (char *)"--log-level";
		eal[n++] = (char *)"lib.eal:error";
		eal[n++] = (char *)"--log-level"; /* "No legacy callbacks, legacy socket..." */
		eal[n++] = (char *)"lib.telemetry:error";
	}
	eal[n] = NULL;
	optind = 1; /* the app may have read its options with getopt already */
	if (rte_eal_init(n, eal) < 0) {
		/* not rte_exit(): its rte_eal_cleanup() of an EAL that did not start prints
		 * errors of its own ("Unregistering with invalid input parameter") */
		app_eal_init_failed();
		exit(EXIT_FAILURE);
	}
}

int
app_parse_size(const char *s, unsigned long long *out)
{
	uint64_t v;
	int rc = app_parse_u64(s, true, 0, UINT64_MAX, &v);

	if (rc != 0)
		return -EINVAL;
	*out = v;
	return 0;
}
