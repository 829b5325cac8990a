/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_pcap tests.
 *  tx: a node sends a put, memory-FIFO messages and a remote get on a net_pcap port with
 *      tx_pcap=; the capture is re-read with libpcap and every header field is checked by
 *      independent decoding (offsets and byte order of docs/wire-format.md).
 *  rx: frames written with libpcap (good puts, a good FIFO message, and one bad frame per
 *      drop cause) are replayed with rx_pcap= into a node: the good data lands, every bad
 *      frame is counted under its cause, and no byte outside the target ranges changes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include <toroid/toroid.h>

#include "test_common.h"

#define TIMEOUT_US 5000000

static char dir[] = "/tmp/toroid-pcap-XXXXXX";

static void
path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void
write_pcap(const char *file, uint8_t frames[][2048], const uint32_t *lens, unsigned int n)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(p, file);

	T_ASSERT(d != NULL, "pcap_dump_open %s", file);
	for (unsigned int i = 0; i < n; i++) {
		struct pcap_pkthdr h = {.caplen = lens[i], .len = lens[i]};

		h.ts.tv_usec = (suseconds_t)i;
		pcap_dump((u_char *)d, &h, frames[i]);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

static uint16_t
port_of(const char *name)
{
	uint16_t port;

	T_ASSERT(rte_eth_dev_get_port_by_name(name, &port) == 0, "port %s", name);
	return port;
}

/* ---- independent decoding ---- */

static uint64_t
be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint16_t
rfc1071(const uint8_t *p, unsigned int n)
{
	uint32_t s = 0;

	for (unsigned int i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

struct expect {
	uint8_t type;
	uint16_t flags;
	uint8_t fifo;
	uint16_t counter;
	uint64_t key;
	uint64_t offset;
	uint32_t msg_len;
	uint16_t pay_len;
	const uint8_t *payload;
};

static void
check_frame(const uint8_t *f, uint32_t len, const struct expect *e, const uint8_t *mac,
	    uint32_t *msg_id)
{
	const uint8_t *h = f + 14;
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	T_EQ(len, 14 + 56 + e->pay_len);
	T_ASSERT(memcmp(f, bcast, 6) == 0, "destination MAC");
	T_ASSERT(memcmp(f + 6, mac, 6) == 0, "source MAC");
	T_EQ(be(f + 12, 2), 0x88B5);
	T_EQ(h[0], 1); /* version */
	T_EQ(h[1], e->type);
	T_EQ(be(h + 2, 2), e->flags);
	T_EQ(h[4], 0); /* src 0,0,0 */
	T_EQ(h[5], 0);
	T_EQ(h[6], 0);
	T_EQ(h[7], 3); /* one hop + slack of 2 */
	T_EQ(h[8], 1); /* dst 1,0,0 */
	T_EQ(h[9], 0);
	T_EQ(h[10], 0);
	T_EQ(h[11], e->fifo);
	T_EQ(be(h + 12, 2), e->counter);
	T_EQ(rfc1071(h, 56), 0); /* checksum verifies */
	T_EQ(be(h + 16, 8), e->key);
	T_EQ(be(h + 24, 8), e->offset);
	T_EQ(be(h + 32, 4), e->msg_len);
	T_EQ(be(h + 36, 2), e->pay_len);
	T_EQ(be(h + 38, 2), 0);
	if (e->flags & TRD_HF_FIRST)
		*msg_id = (uint32_t)be(h + 40, 4) + 0; /* a new message id */
	T_EQ(be(h + 40, 4), *msg_id);
	T_EQ(be(h + 44, 4), 0);
	T_EQ(be(h + 48, 4), 0);
	T_EQ(be(h + 52, 4), 0);
	if (e->pay_len)
		T_ASSERT(memcmp(h + 56, e->payload, e->pay_len) == 0, "payload");
}

static void
test_tx(void)
{
	char empty[300], out[300], args[700];
	uint8_t frames[1][2048];
	uint32_t lens[1] = {0};
	struct trd_node_conf nc = {0};
	struct trd_node *n;
	struct trd_link *l;
	struct trd_desc d[4], carried;
	uint8_t *data = malloc(3000), mac[6];
	uint16_t ctr;
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *ph;
	const u_char *pkt;
	pcap_t *pc;
	uint32_t msg_id = 0, prev_id = 0;
	int rc;

	path(empty, sizeof(empty), "empty.pcap");
	path(out, sizeof(out), "tx.pcap");
	write_pcap(empty, frames, lens, 0);
	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s", empty, out);
	T_EQ(rte_vdev_init("net_pcap_tx", args), 0);

	trd_torus_init(&nc.torus, 2, 1, 1);
	nc.unreliable = true; /* nobody answers on a capture file: no sequence numbers */
	nc.coalesce = 1;      /* each message its own frame (bundles: test_bundle) */
	n = trd_node_create(&nc);
	T_ASSERT(n != NULL, "node");
	l = trd_link_ethdev(port_of("net_pcap_tx"), NULL);
	T_ASSERT(l != NULL, "link: %s", rte_strerror(rte_errno));
	T_EQ(trd_node_add_link(n, l, TRD_DIR_XP), 0);
	{
		struct rte_ether_addr ea;

		rte_eth_macaddr_get(port_of("net_pcap_tx"), &ea);
		memcpy(mac, ea.addr_bytes, 6);
	}
	T_EQ(trd_counter_alloc(n, &ctr), 0);
	test_fill(data, 3000, 99);
	struct trd_coord peer = {1, 0, 0};

	trd_desc_put(&d[0], peer, data, 3000, 0x1122334455667788ULL, 1000, ctr, 7);
	trd_desc_fifo(&d[1], peer, 3, data, 100, 0xCAFEF00DULL, 0);
	trd_desc_fifo(&d[2], peer, 1, NULL, 0, 42, 0);
	trd_desc_put(&carried, (struct trd_coord){0, 0, 0}, NULL, 64, 0xAAAA, 8, 0, 5);
	carried.flags = TRD_DF_SRC_MR;
	carried.src_key = 0xBBBB;
	carried.src = 16;
	trd_desc_rget(&d[3], peer, TRD_ENGINE_FIFO, &carried, 1);
	T_EQ(trd_counter_set(n, ctr, 3000), 0);
	T_EQ(trd_inject_bulk(trd_inj_fifo(n, 0), d, 4), 0);
	T_EQ(trd_counter_wait(n, ctr, TIMEOUT_US), 0);
	for (int i = 0; i < 10; i++)
		trd_node_poll(n);
	trd_node_free(n); /* closes the port: the capture is complete */

	pc = pcap_open_offline(out, errbuf);
	T_ASSERT(pc != NULL, "%s", errbuf);
	{
		/* the put is 1444 + 1444 + 112 bytes at MTU 1500 */
		struct expect ex[] = {
			{TRD_PKT_PUT, TRD_HF_FIRST, 0, 7, 0x1122334455667788ULL, 1000, 3000, 1444,
			 data},
			{TRD_PKT_PUT, 0, 0, 7, 0x1122334455667788ULL, 2444, 3000, 1444,
			 data + 1444},
			{TRD_PKT_PUT, TRD_HF_LAST, 0, 7, 0x1122334455667788ULL, 3888, 3000, 112,
			 data + 2888},
			{TRD_PKT_FIFO, TRD_HF_ALL, 3, 0, 0xCAFEF00DULL, 0, 100, 100, data},
			{TRD_PKT_FIFO, TRD_HF_ALL, 1, 0, 42, 0, 0, 0, NULL},
			{TRD_PKT_RGET, TRD_HF_ALL, TRD_ENGINE_FIFO, 0, 0, 0, 64, 64,
			 (const uint8_t *)&carried},
		};
		unsigned int i = 0;

		while ((rc = pcap_next_ex(pc, &ph, &pkt)) == 1) {
			T_ASSERT(i < RTE_DIM(ex), "more frames than sent");
			check_frame(pkt, ph->caplen, &ex[i], mac, &msg_id);
			if (ex[i].flags & TRD_HF_FIRST) {
				T_ASSERT(msg_id > prev_id, "message ids increase");
				prev_id = msg_id;
			}
			i++;
		}
		T_EQ(i, RTE_DIM(ex));
	}
	pcap_close(pc);
	free(data);
	printf("tx: 6 frames, every field checked\n");
}

/* ---- rx replay ---- */

static uint32_t
mkframe(uint8_t *f, const struct trd_pkt *p, const void *pay, uint32_t paylen)
{
	memset(f, 0xff, 6);
	memset(f + 6, 0x02, 6);
	f[12] = 0x88;
	f[13] = 0xB5;
	trd_wire_encode(f + 14, p);
	if (paylen)
		memcpy(f + TRD_FRAME_HLEN, pay, paylen);
	return TRD_FRAME_HLEN + paylen;
}

static void
test_rx(void)
{
	enum { REG = 8192, NF = 20 };
	static uint8_t frames[NF][2048];
	uint32_t lens[NF];
	unsigned int nf = 0;
	char in[300], out[300], args[700];
	struct trd_node_conf nc = {0};
	struct trd_node *n;
	struct trd_link *l;
	struct trd_mr *mr, *ro;
	uint8_t *mem = calloc(1, REG), *rom = calloc(1, 512), *pay = malloc(2000);
	uint8_t expect[REG];
	uint16_t ctr;
	struct trd_pkt p, base;
	struct trd_node_stats st;
	struct trd_msg *msg;
	uint64_t deadline;
	uint64_t want[TRD_DROP_MAX] = {0};

	trd_torus_init(&nc.torus, 2, 1, 1);
	/* a capture replayed is a segment the node trusts: a reliable node acts on no
	 * unsequenced frame (docs/reliability.md) */
	nc.unreliable = true;
	n = trd_node_create(&nc);
	T_ASSERT(n != NULL, "node");
	mr = trd_mr_register(n, mem, REG, TRD_ACCESS_REMOTE_WRITE);
	ro = trd_mr_register(n, rom, 512, TRD_ACCESS_REMOTE_READ);
	T_ASSERT(mr != NULL && ro != NULL, "regions");
	T_EQ(trd_counter_alloc(n, &ctr), 0);
	T_EQ(trd_counter_set(n, ctr, 1500 + 700 + 1), 0);
	test_fill(pay, 2000, 5);
	memset(expect, 0, sizeof(expect));

	memset(&base, 0, sizeof(base));
	base.version = 1;
	base.type = TRD_PKT_PUT;
	base.flags = TRD_HF_ALL;
	base.src[0] = 1;
	base.hops = 1;
	base.key = trd_mr_key(mr);

	/* good puts: three, one at each end of the region */
	p = base, p.counter = ctr, p.offset = 0, p.msg_len = p.pay_len = 1400 + 100;
	lens[nf] = mkframe(frames[nf], &p, pay, 1400 + 100), nf++;
	memcpy(expect, pay, 1500);
	p = base, p.counter = ctr, p.offset = REG - 700, p.msg_len = p.pay_len = 700;
	lens[nf] = mkframe(frames[nf], &p, pay + 3, 700), nf++;
	memcpy(expect + REG - 700, pay + 3, 700);
	p = base, p.counter = ctr, p.offset = 4000, p.msg_len = p.pay_len = 1;
	lens[nf] = mkframe(frames[nf], &p, pay + 9, 1), nf++;
	expect[4000] = pay[9];
	/* a good memory-FIFO message */
	p = base, p.type = TRD_PKT_FIFO, p.fifo = 2, p.key = 77, p.msg_len = p.pay_len = 33;
	lens[nf] = mkframe(frames[nf], &p, pay, 33), nf++;

	/* bad key */
	p = base, p.key = trd_mr_key(mr) ^ (1ULL << 40), p.offset = 100, p.msg_len = p.pay_len = 10;
	lens[nf] = mkframe(frames[nf], &p, pay, 10), nf++, want[TRD_DROP_BAD_KEY]++;
	/* out of bounds by one byte */
	p = base, p.offset = REG - 9, p.msg_len = p.pay_len = 10;
	lens[nf] = mkframe(frames[nf], &p, pay, 10), nf++, want[TRD_DROP_OUT_OF_BOUNDS]++;
	/* offset that wraps */
	p = base, p.offset = UINT64_MAX - 4, p.msg_len = p.pay_len = 10;
	lens[nf] = mkframe(frames[nf], &p, pay, 10), nf++, want[TRD_DROP_BAD_LENGTH]++;
	/* truncated: says 100 bytes, carries 50 */
	p = base, p.offset = 200, p.msg_len = p.pay_len = 100;
	lens[nf] = mkframe(frames[nf], &p, pay, 100) - 50, nf++, want[TRD_DROP_BAD_LENGTH]++;
	/* unknown type (the first past the last known) with a valid checksum */
	p = base, p.type = TRD_PKT_MAX, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_BAD_TYPE]++;
	/* bad checksum */
	p = base, p.offset = 300, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4);
	frames[nf++][14 + 14] ^= 0x40, want[TRD_DROP_BAD_CHECKSUM]++;
	/* bad version */
	p = base, p.version = 2, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_BAD_VERSION]++;
	/* short frame */
	lens[nf] = 20, memcpy(frames[nf], frames[0], 20), nf++, want[TRD_DROP_SHORT_FRAME]++;
	/* another EtherType */
	lens[nf] = mkframe(frames[nf], &base, NULL, 0);
	frames[nf++][13] = 0x00, want[TRD_DROP_BAD_ETHERTYPE]++;
	/* region without remote write */
	p = base, p.key = trd_mr_key(ro), p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_NO_ACCESS]++;
	/* FIFO that does not exist */
	p = base, p.type = TRD_PKT_FIFO, p.fifo = 60, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_UNKNOWN_FIFO]++;
	/* source outside the torus */
	p = base, p.src[1] = 3, p.offset = 500, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_UNKNOWN_NODE]++;
	/* counter never allocated */
	p = base, p.counter = 999, p.offset = 600, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_UNKNOWN_COUNTER]++;
	/* a reserved flag */
	p = base, p.flags = 0x80 | TRD_HF_ALL, p.msg_len = p.pay_len = 4;
	lens[nf] = mkframe(frames[nf], &p, pay, 4), nf++, want[TRD_DROP_BAD_FIELD]++;
	{
		/* a remote get whose descriptor would send to a third party, and one that names
		 * a raw address of ours */
		struct trd_desc c;

		trd_desc_put(&c, (struct trd_coord){0, 0, 0}, NULL, 16, 1, 0, 0, 0);
		c.flags = TRD_DF_SRC_MR;
		c.src_key = trd_mr_key(ro);
		p = base, p.type = TRD_PKT_RGET, p.fifo = TRD_ENGINE_FIFO, p.key = 0;
		p.msg_len = p.pay_len = 64;
		lens[nf] = mkframe(frames[nf], &p, &c, 64), nf++, want[TRD_DROP_BAD_DST]++;
		trd_desc_put(&c, (struct trd_coord){1, 0, 0}, mem, 16, 1, 0, 0, 0);
		lens[nf] = mkframe(frames[nf], &p, &c, 64), nf++, want[TRD_DROP_BAD_DESC]++;
	}
	T_ASSERT(nf <= NF, "frame table");

	path(in, sizeof(in), "rx.pcap");
	path(out, sizeof(out), "rx-out.pcap");
	write_pcap(in, frames, lens, nf);
	snprintf(args, sizeof(args), "rx_pcap=%s,tx_pcap=%s", in, out);
	T_EQ(rte_vdev_init("net_pcap_rx", args), 0);
	l = trd_link_ethdev(port_of("net_pcap_rx"), NULL);
	T_ASSERT(l != NULL, "link");
	T_EQ(trd_node_add_link(n, l, TRD_DIR_XP), 0);

	deadline = trd_time_us() + TIMEOUT_US;
	do {
		trd_node_poll(n);
		T_EQ(trd_node_stats_get(n, &st), 0);
	} while (st.stat[TRD_STAT_RX_PKTS] < nf && trd_time_us() < deadline);
	T_EQ(st.stat[TRD_STAT_RX_PKTS], nf);
	T_EQ(trd_counter_wait(n, ctr, TIMEOUT_US), 0);
	T_ASSERT(memcmp(mem, expect, REG) == 0, "region holds exactly the good puts");
	for (unsigned int i = 0; i < 512; i++)
		T_EQ(rom[i], 0);
	for (unsigned int c = 0; c < TRD_DROP_MAX; c++)
		if (st.drop[c] != want[c])
			fprintf(stderr, "drop %s: %" PRIu64 " want %" PRIu64 "\n", trd_drop_name(c),
				st.drop[c], want[c]);
	for (unsigned int c = 0; c < TRD_DROP_MAX; c++)
		T_ASSERT(st.drop[c] == want[c], "drop %s: %" PRIu64 " != %" PRIu64,
			 trd_drop_name(c), st.drop[c], want[c]);
	T_EQ(trd_rec_fifo_wait(trd_rec_fifo(n, 2), &msg, TIMEOUT_US), 0);
	T_EQ(msg->len, 33);
	T_EQ(msg->user, 77);
	T_ASSERT(memcmp(msg->data, pay, 33) == 0, "fifo payload");
	trd_msg_free(msg);
	trd_node_free(n);
	free(mem);
	free(rom);
	free(pay);
	printf("rx: %u frames replayed, %u good, every bad one counted under its cause\n", nf, 4);
}

int
main(int argc, char **argv)
{
	char f[300];

	(void)argc;
	T_ASSERT(mkdtemp(dir) != NULL, "mkdtemp");
	test_eal_init(argv[0], NULL);
	test_tx();
	test_rx();
	rte_eal_cleanup();
	const char *names[] = {"empty.pcap", "tx.pcap", "rx.pcap", "rx-out.pcap"};
	for (unsigned int i = 0; i < RTE_DIM(names); i++) {
		path(f, sizeof(f), names[i]);
		unlink(f);
	}
	rmdir(dir);
	return 0;
}
