/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf: output: the text table and the JSON lines. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <toroid/coll.h>
#include <toroid/msg.h>
#include <toroid/telemetry.h>
#include <toroid/toroid.h>

#include "../common/app_common.h"
#include "../common/latency.h"
#include "inproc.h"

/* ---- output ---- */

void
perf_print_header(enum perf_kind kind)
{
	if (perf_opt.json)
		return;
	if (kind == K_RATE)
		printf("%-12s %9s %10s %10s %10s %10s %7s%s\n", "test", "size", "Mpps", "MB/s",
		       "Gb/s L2", "Gb/s L1", "line%",
		       perf_opt.baseline ? "   raw Mpps  ratio" : "");
	else
		printf("%-12s %9s %9s %9s %9s %9s %9s %9s%s\n", "test", "size", "min us", "avg us",
		       "p50 us", "p99 us", "p99.9 us", "max us",
		       perf_opt.baseline ? "  raw p50 us  ratio" : "");
}

/* "100.000k msg/s", "5.000G bit/s": a --rate figure in the unit asked */
static const char *
fmt_rate(char *buf, size_t len, double v)
{
	const char *unit = perf_opt.rate_bits ? "bit/s" : "msg/s";

	if (v >= 1e9)
		snprintf(buf, len, "%.3fG %s", v / 1e9, unit);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3fM %s", v / 1e6, unit);
	else if (v >= 1e3)
		snprintf(buf, len, "%.3fk %s", v / 1e3, unit);
	else
		snprintf(buf, len, "%.3f %s", v, unit);
	return buf;
}

void
print_result(const struct perf_result *r)
{
	const char *links = perf_opt.links_label              ? perf_opt.links_label
			    : perf_opt.links == TRD_NET_RING  ? "ring"
			    : perf_opt.links == TRD_NET_PORTS ? "ports"
							      : "net_ring";
	char a[48], b[48];

	if (perf_opt.json) {
		printf("{\"test\":\"%s\",\"size\":%u,\"links\":\"%s\"", r->test, r->size, links);
		if (r->is_interval)
			printf(",\"interval\":{\"start\":%.3f,\"end\":%.3f}", r->iv_start,
			       r->iv_end);
		if (r->kind == K_RATE) {
			printf(",\"msgs\":%" PRIu64 ",\"mpps\":%.4f,\"mbytes_per_s\":%.2f,"
			       "\"gbps_l2\":%.4f,\"gbps_l1\":%.4f",
			       r->n, r->mpps, r->mbps, r->gbps_l2, r->gbps_l1);
			if (r->frames != 0)
				printf(",\"frames\":%" PRIu64, r->frames);
			if (r->line_pct > 0)
				printf(",\"line_rate_pct\":%.2f", r->line_pct);
			if (r->has_base && r->by_gbps)
				printf(",\"raw_gbps_l2\":%.4f,\"ratio\":%.3f", r->base_gbps,
				       r->gbps_l2 / r->base_gbps);
			else if (r->has_base)
				printf(",\"raw_mpps\":%.4f,\"ratio\":%.3f", r->base,
				       r->mpps / r->base);
		} else {
			printf(",\"iters\":%" PRIu64 ",\"unit\":\"us\",\"min\":%.3f,\"avg\":%.3f,"
			       "\"p50\":%.3f,\"p99\":%.3f,\"p99_9\":%.3f,\"max\":%.3f",
			       r->n, r->min, r->avg, r->p50, r->p99, r->p999, r->max);
			if (r->has_base)
				printf(",\"raw_p50\":%.3f,\"ratio\":%.3f", r->base,
				       r->p50 / r->base);
		}
		if (r->seconds > 0)
			printf(",\"seconds\":%.3f", r->seconds);
		if (r->has_rate)
			printf(",\"rate_asked\":%.1f,\"rate_achieved\":%.1f,\"rate_unit\":\"%s\"",
			       r->rate_asked, r->rate_achieved,
			       perf_opt.rate_bits ? "bit/s" : "msg/s");
		if (r->interrupted)
			printf(",\"interrupted\":true");
		printf("}\n");
		fflush(stdout);
		return;
	}
	if (r->kind == K_RATE) {
		printf("%-12s %9u %10.3f %10.1f %10.3f %10.3f %7.1f", r->test, r->size, r->mpps,
		       r->mbps, r->gbps_l2, r->gbps_l1, r->line_pct);
		if (r->has_base && r->by_gbps)
			printf(" %10.3f %6.3f  (raw %.3f Gb/s L2)", r->base,
			       r->gbps_l2 / r->base_gbps, r->base_gbps);
		else if (r->has_base)
			printf(" %10.3f %6.3f", r->base, r->mpps / r->base);
	} else {
		printf("%-12s %9u %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f", r->test, r->size, r->min,
		       r->avg, r->p50, r->p99, r->p999, r->max);
		if (r->has_base)
			printf(" %11.2f %6.3f", r->base, r->p50 / r->base);
	}
	/* iperf3-style: each interval line and the summary of a timed run show their span */
	if (r->is_interval)
		printf("  %6.2f-%6.2f s", r->iv_start, r->iv_end);
	else if (perf_opt.duration_s > 0 || perf_opt.interval_s > 0)
		printf("  %6.2f-%6.2f s", 0.0, r->seconds);
	if (r->has_rate)
		printf("  asked %s, achieved %s", fmt_rate(a, sizeof(a), r->rate_asked),
		       fmt_rate(b, sizeof(b), r->rate_achieved));
	if (r->interrupted)
		printf("  (interrupted: %" PRIu64 " %s)", r->n,
		       r->kind == K_RATE ? "messages" : "samples");
	printf("\n");
	fflush(stdout);
}
