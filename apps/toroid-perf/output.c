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
		printf("%-12s %9s %10s %10s %10s %10s %10s %7s %5s%s\n", "test", "size", "Mmsg/s",
		       "Mframe/s", "MB/s", "Gb/s L2", "Gb/s L1", "line%", "cpu%",
		       perf_opt.baseline ? " raw Mframe/s  ratio" : "");
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

/* engine / raw: frames per second against raw frames of the same size when the engine's
 * frames were counted, else bandwidth tests by Gbit/s and the others by messages per second;
 * latency tests by their medians */
double
perf_ratio(const struct perf_result *r)
{
	if (r->kind != K_RATE)
		return r->p50 / r->base;
	if (perf_opt.raw_frame != 0)
		return r->mpps / r->base; /* messages per raw frame */
	if (r->frames != 0 || r->by_gbps)
		return r->gbps_l2 / r->base_gbps;
	return r->mpps / r->base;
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
				printf(",\"frames\":%" PRIu64 ",\"bytes\":%" PRIu64
				       ",\"mfps\":%.4f,\"counted_at\":\"%s\"",
				       r->frames, r->bytes, r->mfps, r->counted);
			if (r->line_pct > 0)
				printf(",\"line_rate_pct\":%.2f", r->line_pct);
			if (r->has_base)
				printf(",\"raw_mpps\":%.4f,\"raw_gbps_l2\":%.4f,\"ratio\":%.3f",
				       r->base, r->base_gbps, perf_ratio(r));
		} else {
			printf(",\"iters\":%" PRIu64 ",\"unit\":\"us\",\"min\":%.3f,\"avg\":%.3f,"
			       "\"p50\":%.3f,\"p99\":%.3f,\"p99_9\":%.3f,\"max\":%.3f",
			       r->n, r->min, r->avg, r->p50, r->p99, r->p999, r->max);
			if (r->has_base)
				printf(",\"raw_p50\":%.3f,\"ratio\":%.3f", r->base, perf_ratio(r));
		}
		if (r->seconds > 0)
			printf(",\"seconds\":%.6f", r->seconds);
		if (r->cpu_pct > 0)
			printf(",\"cpu_pct\":%.1f", r->cpu_pct);
		if (r->has_rate)
			printf(",\"rate_asked\":%.1f,\"rate_achieved\":%.1f,\"rate_unit\":\"%s\"",
			       r->rate_asked, r->rate_achieved,
			       perf_opt.rate_bits ? "bit/s" : "msg/s");
		if (r->interrupted)
			printf(",\"interrupted\":true");
		if (r->reverse)
			printf(",\"reverse\":true");
		if (r->bidir != NULL)
			printf(",\"bidir\":\"%s\"", r->bidir);
		printf("}\n");
		fflush(stdout);
		return;
	}
	if (r->kind == K_RATE) {
		char fr[16] = "-";

		if (r->frames != 0)
			snprintf(fr, sizeof(fr), "%.3f", r->mfps);
		printf("%-12s %9u %10.3f %10s %10.1f %10.3f %10.3f %7.1f %5.0f", r->test, r->size,
		       r->mpps, fr, r->mbps, r->gbps_l2, r->gbps_l1, r->line_pct, r->cpu_pct);
		if (r->has_base)
			printf(" %12.3f %6.3f  (raw %.3f Gb/s L2)", r->base, perf_ratio(r),
			       r->base_gbps);
	} else {
		printf("%-12s %9u %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f", r->test, r->size, r->min,
		       r->avg, r->p50, r->p99, r->p999, r->max);
		if (r->has_base)
			printf(" %11.2f %6.3f", r->base, perf_ratio(r));
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
	if (r->reverse)
		printf("  (reverse: server to client)");
	if (r->bidir != NULL)
		printf("  (bidir: %s)", strcmp(r->bidir, "tx") == 0   ? "client to server"
					: strcmp(r->bidir, "rx") == 0 ? "server to client"
								      : "sum of both");
	printf("\n");
	fflush(stdout);
}

void
perf_result_sum(struct perf_result *sum, const struct perf_result *a, const struct perf_result *b)
{
	*sum = *a;
	sum->interrupted = a->interrupted || b->interrupted;
	sum->n = a->n + b->n;
	sum->mpps = a->mpps + b->mpps;
	sum->mbps = a->mbps + b->mbps;
	sum->gbps_l2 = a->gbps_l2 + b->gbps_l2;
	sum->gbps_l1 = a->gbps_l1 + b->gbps_l1;
	sum->line_pct = a->line_pct + b->line_pct;
	sum->seconds = RTE_MAX(a->seconds, b->seconds);
	sum->cpu_pct = 0; /* two processes: each line has its own */
	sum->has_rate = false;
	sum->reverse = false;
	if (a->frames != 0 && b->frames != 0) {
		sum->frames = a->frames + b->frames;
		sum->bytes = a->bytes + b->bytes;
		sum->mfps = a->mfps + b->mfps;
	} else {
		sum->frames = 0;
	}
}
