/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-perf between two processes: the raw phase. The client finds its server with HELLO
 * frames and measures plain DPDK on the same port (frames the server echoes or counts); the
 * server answers them until told to start its engine or that the client is done. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <toroid/toroid.h>

#include "perf_pvt.h"
#include "twoproc.h"

/* ---- raw frames ---- */

struct rte_mbuf *
raw_frame(uint8_t cmd, uint64_t arg, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(trd_default_pool(0));
	uint8_t *p;

	if (m == NULL)
		return NULL;
	len = RTE_MAX(len, 60u);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	if (raw_over_ip()) {
		len = raw_ip_frame(p, cmd, arg, len);
	} else {
		memset(p, 0xff, 12);
		p[12] = RAW_ETHERTYPE >> 8;
		p[13] = RAW_ETHERTYPE & 0xff;
		p[14] = cmd;
		memcpy(p + 15, &arg, 8);
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return m;
}

/* The received frame @p m sent back as the answer @p cmd (an echo, same size): to the sender. */
static void
raw_answer(struct rte_mbuf *m, uint8_t cmd)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	if (raw_over_ip())
		raw_ip_answer(p, cmd);
	else
		p[14] = cmd;
	raw_send(m);
}

/* The command of a received frame (its argument in *arg; over IP its sender's address and
 * UDP port in *ip and *port, ARP handled), or 0: not one of ours. */
static int
raw_parse(const struct rte_mbuf *m, uint64_t *arg, uint32_t *ip, uint16_t *port)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	if (raw_over_ip())
		return raw_ip_parse(m, arg, ip, port);
	if (m->data_len < 23 || (p[12] << 8 | p[13]) != RAW_ETHERTYPE)
		return 0;
	memcpy(arg, p + 15, 8);
	return p[14];
}

void
raw_send(struct rte_mbuf *m)
{
	while (rte_eth_tx_burst(tp_port, 0, &m, 1) == 0 && !perf_stop)
		;
	if (perf_stop) /* not sent */
		rte_pktmbuf_free(m);
}

/* Wait for a raw frame of command @p want (with argument *arg if @p match), within the
 * deadline: @p want, or 0 on timeout. Other frames (late answers to an earlier question, the
 * engine's frames, another sender's) are dropped. */
int
raw_recv(int want, uint64_t *arg, bool match, uint64_t deadline_us)
{
	struct rte_mbuf *m;

	while (trd_time_us() < deadline_us && !perf_stop) {
		if (rte_eth_rx_burst(tp_port, 0, &m, 1) == 1) {
			uint64_t a = 0;
			uint32_t ip = 0;
			uint16_t port = 0;
			int cmd = raw_parse(m, &a, &ip, &port);

			rte_pktmbuf_free(m);
			if (cmd != want || (match && a != *arg) ||
			    (raw_over_ip() && (ip != raw_peer_ip || port != raw_peer_port)))
				continue;
			if (arg != NULL)
				*arg = a;
			return cmd;
		}
	}
	return 0;
}

/* Send @p cmd every 200 ms until @p want comes back, for @p timeout_us: 0 or -ETIMEDOUT
 * (-EHOSTUNREACH: over IP, the next hop did not answer ARP). The other process may not run
 * yet (started a moment later, or on another host). */
int
raw_ask(uint8_t cmd, int want, uint64_t timeout_us)
{
	uint64_t until = trd_time_us() + timeout_us;

	if (raw_over_ip() && !raw_ip_resolved()) {
		int rc = raw_resolve(timeout_us);

		if (rc != 0)
			return rc;
	}
	while (trd_time_us() < until && !perf_stop) {
		struct rte_mbuf *m = raw_frame(cmd, 0, 60);

		if (m == NULL)
			return -ENOBUFS;
		raw_send(m);
		if (raw_recv(want, NULL, false, RTE_MIN(until, trd_time_us() + 200000)) == want)
			return 0;
	}
	return perf_stop ? -EINTR : -ETIMEDOUT;
}

/* The end of a timed phase (--duration), in TSC cycles from @p t0; 0: none. */
uint64_t
timed_end(uint64_t t0)
{
	return perf_opt.duration_s > 0
		       ? t0 + (uint64_t)(perf_opt.duration_s * (double)rte_get_tsc_hz())
		       : 0;
}

/* The server's raw phase: echo, count, until told to start the engine (RAW_ENGINE) or that
 * the client is done (RAW_DONE): that command, or -EINTR. */
int
raw_serve(void)
{
	uint64_t count = 0;

	for (;;) {
		struct rte_mbuf *pk[32];
		uint16_t n = rte_eth_rx_burst(tp_port, 0, pk, 32);

		if (perf_stop) {
			rte_pktmbuf_free_bulk(pk, n);
			return -EINTR;
		}
		for (uint16_t i = 0; i < n; i++) {
			uint64_t a = 0;
			uint32_t ip = 0;
			uint16_t port = 0;
			int cmd = raw_parse(pk[i], &a, &ip, &port);

			if (raw_over_ip() && cmd == RAW_HELLO && raw_ip_new_client(ip, port)) {
				rte_pktmbuf_free(pk[i]); /* it says hello again */
				continue;
			}
			if (raw_over_ip() && (ip != raw_peer_ip || port != raw_peer_port))
				cmd = 0; /* not from the client being served */
			if (cmd == RAW_ECHO) {
				raw_answer(pk[i], RAW_ECHO_OK); /* the same frame back */
				continue;
			}
			rte_pktmbuf_free(pk[i]);
			if (cmd == RAW_SINK) {
				count++;
			} else if (cmd == RAW_SINK_END) {
				struct rte_mbuf *r = raw_frame(RAW_COUNT, count, 60);

				if (r != NULL)
					raw_send(r);
				count = 0;
			} else if (cmd == RAW_HELLO) {
				struct rte_mbuf *r = raw_frame(RAW_HELLO_OK, 0, 60);

				if (r != NULL)
					raw_send(r);
			} else if (cmd == RAW_ENGINE || cmd == RAW_DONE) {
				struct rte_mbuf *r = raw_frame(
					cmd == RAW_ENGINE ? RAW_ENGINE_OK : RAW_DONE_OK, 0, 60);

				if (r != NULL)
					raw_send(r);
				/* the rest of this burst is the client's retries: dropped */
				rte_pktmbuf_free_bulk(&pk[i + 1], n - i - 1u);
				return cmd;
			}
		}
	}
}

/* n round trips, or fewer if --duration ends first */
int
raw_pingpong_test(uint32_t frame, uint64_t n, struct perf_result *r)
{
	uint64_t *s = malloc(n * sizeof(*s)), i, end = timed_end(rte_rdtsc());

	if (s == NULL)
		return -ENOMEM;
	for (i = 0; i < n && !perf_stop && (end == 0 || rte_rdtsc() < end); i++) {
		struct rte_mbuf *m = raw_frame(RAW_ECHO, i, frame);
		uint64_t t0 = rte_rdtsc(), seq = i;

		if (m == NULL) {
			free(s);
			return -ENOBUFS;
		}
		raw_send(m);
		if (raw_recv(RAW_ECHO_OK, &seq, true, trd_time_us() + 1000000) != RAW_ECHO_OK) {
			free(s);
			return -ETIMEDOUT;
		}
		s[i] = rte_rdtsc() - t0;
	}
	if (i == 0) {
		free(s);
		return -EINTR;
	}
	{
		const char *h = perf_opt.hgrm; /* no distribution file of the raw figure */

		perf_opt.hgrm = NULL;
		lat_stats(r, s, i, 0.5);
		perf_opt.hgrm = h;
	}
	free(s);
	return 0;
}

int
raw_stream_test(uint32_t frame, uint64_t n, double *mpps)
{
	struct rte_mbuf *pk[32];
	uint64_t sent = 0, got = 0, t0 = rte_rdtsc(), end = timed_end(t0);

	while (sent < n && !perf_stop && (end == 0 || rte_rdtsc() < end)) {
		unsigned int k = (unsigned int)RTE_MIN(32u, n - sent), j = 0;

		for (unsigned int i = 0; i < k; i++)
			if ((pk[j] = raw_frame(RAW_SINK, sent + i, frame)) != NULL)
				j++;
		k = rte_eth_tx_burst(tp_port, 0, pk, (uint16_t)j);
		if (k < j)
			rte_pktmbuf_free_bulk(&pk[k], j - k);
		sent += k;
	}
	{
		struct rte_mbuf *e = raw_frame(RAW_SINK_END, 0, 60);

		if (e == NULL)
			return -ENOBUFS;
		raw_send(e);
	}
	if (raw_recv(RAW_COUNT, &got, false, trd_time_us() + WAIT_US) != RAW_COUNT)
		return -ETIMEDOUT;
	/* memif may drop when its ring is full: count what arrived */
	*mpps = (double)got * rte_get_tsc_hz() / 1e6 / (double)(rte_rdtsc() - t0);
	return 0;
}

/* The raw baselines on the same port, after the engine's run (the server is back in its raw
 * phase): rate tests with frames of the size the engine's were on average. */
void
client_baselines(const char *const *names, unsigned int n_names,
		 struct perf_result (*res)[PERF_MAX_SIZES])
{
	for (unsigned int t = 0; t < n_names && !perf_stop; t++) {
		if (!perf_test_selected(names[t]))
			continue;
		for (unsigned int z = 0; z < perf_opt.n_sizes && !perf_stop; z++) {
			struct perf_result *r = &res[t][z];
			uint32_t size = perf_opt.sizes[z];
			uint32_t enc = perf_opt.ip != 0 ? TRD_UDP_ENCAP_LEN : 0;
			uint32_t frame =
				TRD_FRAME_HLEN + enc + RTE_MIN(size, 1436u - enc) + TRD_PROOF_LEN;
			uint64_t n = perf_opt.iters ? perf_opt.iters : perf_default_iters(names[t]);
			struct perf_result tmp;
			int rc;

			if (r->test == NULL)
				continue; /* not measured */
			if (r->kind == K_RATE && perf_opt.raw_frame != 0)
				frame = perf_opt.raw_frame;
			else if (r->kind == K_RATE && r->frames != 0)
				frame = (uint32_t)((r->bytes + r->frames / 2) / r->frames);
			frame = RTE_MIN(frame, (uint32_t)RTE_MBUF_DEFAULT_DATAROOM);
			memset(&tmp, 0, sizeof(tmp));
			if (r->kind == K_LAT)
				rc = raw_pingpong_test(frame, n, &tmp);
			else
				rc = raw_stream_test(frame, n, &tmp.mpps);
			if (rc == 0) {
				/* put and FIFO ping-pongs report half a round trip, the others
				 * a whole one: so does their baseline */
				bool half = strcmp(names[t], "put_lat") == 0 ||
					    strcmp(names[t], "fifo_lat") == 0;

				r->has_base = true;
				r->base = r->kind == K_RATE ? tmp.mpps
					  : half            ? tmp.p50
							    : 2 * tmp.p50;
				r->base_gbps = tmp.mpps * (RTE_MAX(frame, 60u) + 4) * 8 / 1000;
			} else if (!perf_stop) {
				/* the figure is printed without its baseline: say why */
				fprintf(stderr, "toroid-perf: %s %u: raw baseline: %s\n", names[t],
					size, strerror(-rc));
			}
		}
	}
}

/* What the port received between two readings of its counters, printed after @p who; a
 * PMD that reset them in between (memif does on a reconnect: the peer went away) gives no
 * difference, and the line says so instead of a wrapped one. */
void
tp_port_received(const char *who, const struct rte_eth_stats *e0, const struct rte_eth_stats *e1)
{
	if (e1->ipackets < e0->ipackets || e1->ibytes < e0->ibytes)
		fprintf(stderr,
			"toroid-perf: %sthe port's counters were reset while the engine ran (the "
			"peer reconnected): what it received is not known\n",
			who);
	else
		fprintf(stderr,
			"toroid-perf: %sthe port received %" PRIu64 " frames, %" PRIu64
			" bytes while the engine ran\n",
			who, e1->ipackets - e0->ipackets, e1->ibytes - e0->ibytes);
}
