/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric.so.1 for toroid alone (libfabric/core): a program linked against libfabric, run
 * with LD_LIBRARY_PATH naming that library, gets it and not the system's (none of the
 * libraries the system's loads), and libfabric's core API behaves as libfabric documents it.
 *
 *   test_fi_core PATH_OF_LIBFABRIC_SO_1
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

static int failures;

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);                        \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static bool
mapped(const char *what)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, what) != NULL;
	if (f != NULL)
		fclose(f);
	return found;
}

static struct fi_info *
tagged_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (h == NULL)
		return NULL;
	h->caps = FI_TAGGED;
	h->ep_attr->type = FI_EP_RDM;
	return h;
}

static void
t_loaded(const char *want)
{
	char a[PATH_MAX], b[PATH_MAX];
	Dl_info di;

	CHECK(dladdr((void *)fi_getinfo, &di) != 0 && di.dli_fname != NULL, "dladdr");
	CHECK(realpath(di.dli_fname, a) != NULL && realpath(want, b) != NULL && strcmp(a, b) == 0,
	      "fi_getinfo comes from %s, not %s", di.dli_fname, want);
	CHECK(fi_version() == FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), "%#x", fi_version());
}

static void
t_getinfo(void)
{
	struct fi_info *h = tagged_hints(), *info = NULL, *d;
	struct fid_fabric *fab = NULL;
	int rc;

	CHECK(h != NULL && h->tx_attr && h->rx_attr && h->ep_attr && h->domain_attr &&
		      h->fabric_attr,
	      "fi_allocinfo gives every attribute");
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(rc == 0 && info != NULL, "fi_getinfo: %d", rc);
	if (rc != 0 || info == NULL)
		return;
	CHECK(info->fabric_attr->prov_name != NULL &&
		      strcmp(info->fabric_attr->prov_name, "toroid") == 0,
	      "prov_name %s", info->fabric_attr->prov_name);
	CHECK(info->fabric_attr->api_version == FI_VERSION(1, 17), "api_version %#x",
	      info->fabric_attr->api_version);
	CHECK(info->fabric_attr->prov_version != 0, "prov_version");
	CHECK((info->caps & FI_TAGGED) && info->ep_attr->type == FI_EP_RDM, "caps");
	/* a copy is its own: the original freed, the copy still reads */
	d = fi_dupinfo(info);
	CHECK(d != NULL && d->next == NULL && d->fabric_attr != info->fabric_attr &&
		      d->domain_attr->name != info->domain_attr->name,
	      "fi_dupinfo copies deep");
	CHECK(strstr(fi_tostr(info, FI_TYPE_INFO), "prov_name: toroid") != NULL, "%s",
	      fi_tostr(info, FI_TYPE_INFO));
	CHECK(strstr(fi_tostr(&info->caps, FI_TYPE_CAPS), "FI_TAGGED") != NULL, "%s",
	      fi_tostr(&info->caps, FI_TYPE_CAPS));
	fi_freeinfo(info);
	if (d == NULL)
		return;
	CHECK(strcmp(d->domain_attr->name, "toroid") == 0 &&
		      strcmp(d->fabric_attr->prov_name, "toroid") == 0,
	      "the copy's names");
	rc = fi_fabric(d->fabric_attr, &fab, NULL);
	CHECK(rc == 0 && fab != NULL && fab->api_version == FI_VERSION(1, 17), "fi_fabric: %d", rc);
	if (rc == 0)
		CHECK(fi_close(&fab->fid) == 0, "fi_close(fabric)");
	free(d->fabric_attr->prov_name);
	d->fabric_attr->prov_name = strdup("tcp");
	CHECK(fi_fabric(d->fabric_attr, &fab, NULL) == -FI_ENODEV, "another provider's fabric");
	fi_freeinfo(d);
	fi_freeinfo(h);
}

static void
t_filters(void)
{
	struct fi_info *h = tagged_hints(), *info = NULL;
	int rc;

	if (h == NULL)
		return;
	CHECK(fi_getinfo(FI_VERSION(1, 99), NULL, NULL, 0, h, &info) == -FI_ENOSYS && !info,
	      "a version newer than the library's");
	h->fabric_attr->prov_name = strdup("tcp");
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info) == -FI_ENODATA && !info,
	      "hints naming another provider");
	free(h->fabric_attr->prov_name);
	h->fabric_attr->prov_name = strdup("TOROID");
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(rc == 0, "hints naming toroid in capitals: %d", rc);
	fi_freeinfo(info);
	info = NULL;
	setenv("FI_PROVIDER", "^toroid", 1);
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "FI_PROVIDER=^toroid");
	setenv("FI_PROVIDER", "tcp,toroid", 1);
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	CHECK(rc == 0, "FI_PROVIDER=tcp,toroid: %d", rc);
	fi_freeinfo(info);
	info = NULL;
	setenv("FI_PROVIDER", "tcp", 1);
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "FI_PROVIDER=tcp");
	unsetenv("FI_PROVIDER");
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info);
	CHECK(rc == 0 && info != NULL && strcmp(info->fabric_attr->prov_name, "toroid") == 0,
	      "FI_PROV_ATTR_ONLY: %d", rc);
	fi_freeinfo(info);
	fi_freeinfo(h);
}

static void
t_params_log(void)
{
	struct fi_provider me = {.name = "toroid"};
	struct fi_param *p = NULL;
	struct fid *fid = (void *)1;
	bool socket = false;
	int n = 0;

	CHECK(fi_getparams(&p, &n) == 0 && n > 5, "fi_getparams: %d", n);
	for (int i = 0; i < n; i++)
		if (strcmp(p[i].name, "FI_TOROID_SOCKET") == 0 && p[i].help_string[0] != '\0' &&
		    p[i].value != NULL && strcmp(p[i].value, "/nonexistent.sock") == 0)
			socket = true;
	CHECK(socket, "FI_TOROID_SOCKET listed with its help and value");
	fi_freeparams(p);
	/* FI_LOG_LEVEL=warn (main): warnings only; FI_LOG_PROV and FI_LOG_SUBSYS filter */
	CHECK(fi_log_enabled(&me, FI_LOG_WARN, FI_LOG_CORE), "warn at warn");
	CHECK(!fi_log_enabled(&me, FI_LOG_INFO, FI_LOG_CORE), "info at warn");
	setenv("FI_LOG_PROV", "^toroid", 1);
	CHECK(!fi_log_enabled(&me, FI_LOG_WARN, FI_LOG_CORE), "FI_LOG_PROV=^toroid");
	unsetenv("FI_LOG_PROV");
	setenv("FI_LOG_SUBSYS", "mr", 1);
	CHECK(!fi_log_enabled(&me, FI_LOG_WARN, FI_LOG_CORE) &&
		      fi_log_enabled(&me, FI_LOG_WARN, FI_LOG_MR),
	      "FI_LOG_SUBSYS=mr");
	unsetenv("FI_LOG_SUBSYS");
	CHECK(strcmp(fi_strerror(FI_ETRUNC), "Truncation error") == 0, "%s",
	      fi_strerror(FI_ETRUNC));
	CHECK(strcmp(fi_strerror(FI_ENOMEM), strerror(ENOMEM)) == 0, "%s", fi_strerror(FI_ENOMEM));
	CHECK(fi_open(FI_VERSION(1, 13), "mr_cache", NULL, 0, 0, &fid, NULL) == -FI_ENOSYS &&
		      fid == NULL,
	      "no memory monitor to import");
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH_OF_LIBFABRIC_SO_1\n", argv[0]);
		return 2;
	}
	/* read when the library first logs */
	setenv("FI_LOG_LEVEL", "warn", 1);
	setenv("FI_TOROID_SOCKET", "/nonexistent.sock", 1);
	t_loaded(argv[1]);
	t_getinfo();
	t_filters();
	t_params_log();
	/* what the system's libfabric loads and this one must not */
	CHECK(!mapped("libinfinipath") && !mapped("libpsm") && !mapped("libibverbs"),
	      "a library of the system's libfabric is loaded");
	printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
