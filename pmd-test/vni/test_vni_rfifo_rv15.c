/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile tester's finding on processes' reception FIFOs (rv15): an attachment refused once
 * its counter block was taken (here: the node's 127 reception FIFO ids all held) must leave the
 * service's count of interfaces with messaging-unit objects as it was. It was decremented when
 * the refused interface was freed although it had never been counted: the count then read 0
 * with a process attached, the service stopped looking at the dead, and a process that died
 * after that was never released (its segment, counter block and FIFO ids held for good).
 *
 *   test_vni_rfifo_rv15 ids   the parent's own guests hold the 127 ids; a process asking for a
 *                             reception FIFO is refused, saying why ("127 ids"); the ids given
 *                             back, a second one attaches with one, gets an id and exits: its
 *                             interface is released (reclaimed + 1) and its id comes back (the
 *                             parent's guests hold all 127 again)
 *   test_vni_rfifo_rv15 fds   the engine's descriptors (this process's) are as many after 12
 *                             processes attached with 4 reception FIFOs each (eventfds passed
 *                             in the answer) and exited or were killed, and 4 refused for want
 *                             of ids, as before: none kept
 *   test_vni_rfifo_rv15 proto by hand on the socket: a version 5 request (its messaging-unit
 *                             part of 16 bytes) is served with 4 descriptors and no reception
 *                             FIFO in the segment; version 6 ones asking for 5 FIFOs or FIFOs of
 *                             65 slots are refused (-EINVAL) with no descriptor, one of version
 *                             5 carrying the 24-byte part, or of version 6 the 32-byte one, is
 *                             refused (-EPROTO); version 7 ones asking for ids below 128 or past
 *                             254, or whose last id wraps past 2^32 (-EINVAL); a good version 7 one
 * with 2 FIFOs asking for ids 140 and 141 gets 6 descriptors, those 2 FIFOs in the segment
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#define WAIT_US 10000000ULL
#include "guest_api.h"
#include "vni_mu_test.h"
#include "vni_seg.h"
#include "vni_test.h"

#define GUESTS ((TRD_GUEST_RFIFOS_NODE + TRD_GUEST_RFIFOS_MAX - 1) / TRD_GUEST_RFIFOS_MAX)

static struct trd_guest *gs[GUESTS];
static struct rte_ring *ring;
static uint16_t base;

/* The parent's guests take every reception FIFO id of node 0 (4 each, the last the rest). */
static void
hold_ids(void)
{
	unsigned int left = TRD_GUEST_RFIFOS_NODE;

	for (unsigned int i = 0; i < GUESTS; i++) {
		struct trd_guest_conf gc = {.rslots = 64, .ctr_base = base};

		gc.n_rfifos = RTE_MIN(left, (unsigned int)TRD_GUEST_RFIFOS_MAX);
		for (unsigned int k = 0; k < gc.n_rfifos; k++)
			gc.rrings[k] = ring;
		gs[i] = trd_guest_add(nd[0], &gc);
		T_ASSERT(gs[i] != NULL, "guest %u (ids left %u): %s", i, left,
			 rte_strerror(rte_errno));
		left -= gc.n_rfifos;
	}
	T_EQ(left, 0);
}

static void
free_ids(void)
{
	for (unsigned int i = 0; i < GUESTS; i++)
		T_EQ(trd_guest_remove(gs[i]), 0);
}

static unsigned int n_rx = 1;

static struct trd_vni *
open_rx(void)
{
	struct trd_vni_conf c = {.socket = sock_path,
				 .app = 1,
				 .proc = 0,
				 .pool_size = 1 << 20,
				 .connect_timeout_ms = 5000,
				 .mu_rfifos = n_rx,
				 .mu_rfifo_slots = 64};

	return trd_vni_open(&c);
}

/* Refused for want of ids, saying so. */
static int
refused(void *arg)
{
	struct trd_vni *v = open_rx();

	(void)arg;
	if (v != NULL)
		return 1;
	if (strstr(trd_vni_open_error(), "127 ids") == NULL) {
		fprintf(stderr, "refused, but: %s\n", trd_vni_open_error());
		return 2;
	}
	return 0;
}

/* Attached with one FIFO of a good id, then gone. */
static int
attached(void *arg)
{
	struct trd_vni *v = open_rx();
	uint8_t id;

	(void)arg;
	if (v == NULL) {
		fprintf(stderr, "attach: %s\n", trd_vni_open_error());
		return 1;
	}
	id = trd_vni_rfifo_id(v, 0);
	if (id < TRD_GUEST_RFIFO_FIRST || id > TRD_GUEST_RFIFO_LAST)
		return 2;
	trd_vni_close(v);
	return 0;
}

static void
test_ids(void)
{
	uint64_t off, refused0 = stat_of(TRD_VNI_SVC_STAT_REFUSED), rec0;
	int fd;

	ring = rte_zmalloc("rv15_ring", sizeof(*ring) + 64 * 64, 64);
	T_ASSERT(ring != NULL, "ring memory");
	T_EQ(rte_ring_init(ring, "rv15_ring", 64, RING_F_SP_ENQ | RING_F_SC_DEQ), 0);
	T_EQ(trd_counter_block_alloc(nd[0], &base, &fd, &off), 0);
	close(fd);
	hold_ids();
	reap_ok(spawn(refused, NULL), WAIT_US, "the refused process");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_REFUSED), refused0 + 1);
	free_ids();
	rec0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED);
	reap_ok(spawn(attached, NULL), WAIT_US, "the attached process");
	pump_for_stat(TRD_VNI_SVC_STAT_RECLAIMED, rec0 + 1, WAIT_US);
	T_ASSERT(stat_of(TRD_VNI_SVC_STAT_RECLAIMED) == rec0 + 1,
		 "the dead process's interface was never released (reclaimed %llu, want %llu)",
		 (unsigned long long)stat_of(TRD_VNI_SVC_STAT_RECLAIMED),
		 (unsigned long long)(rec0 + 1));
	hold_ids(); /* its id came back */
	free_ids();
	rte_free(ring);
}

/* Attached with 4 FIFOs, then killed by its own hand (nothing closed). */
static int
attached_killed(void *arg)
{
	struct trd_vni *v = open_rx();

	(void)arg;
	if (v == NULL || trd_vni_rfifo_fd(v, 3) < 0)
		return 1;
	raise(SIGKILL);
	return 2;
}

static unsigned int
n_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	T_ASSERT(d != NULL, "/proc/self/fd");
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void
test_fds(void)
{
	uint64_t off, rec0 = stat_of(TRD_VNI_SVC_STAT_RECLAIMED), ref0;
	unsigned int before;
	int fd;

	ring = rte_zmalloc("rv15_ring", sizeof(*ring) + 64 * 64, 64);
	T_ASSERT(ring != NULL, "ring memory");
	T_EQ(rte_ring_init(ring, "rv15_ring", 64, RING_F_SP_ENQ | RING_F_SC_DEQ), 0);
	T_EQ(trd_counter_block_alloc(nd[0], &base, &fd, &off), 0);
	close(fd);
	n_rx = 4;
	for (int i = 0; i < 100; i++)
		pump();
	before = n_fds();
	for (unsigned int i = 0; i < 12; i++) {
		pid_t pid = spawn(i % 2 ? attached : attached_killed, NULL);
		int st = 0;

		while (waitpid(pid, &st, WNOHANG) != pid)
			pump();
		T_ASSERT(i % 2 ? WIFEXITED(st) && WEXITSTATUS(st) == 0
			       : WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			 "process %u: status %#x", i, st);
		pump_for_stat(TRD_VNI_SVC_STAT_RECLAIMED, rec0 + i + 1, WAIT_US);
		T_EQ(stat_of(TRD_VNI_SVC_STAT_RECLAIMED), rec0 + i + 1);
	}
	ref0 = stat_of(TRD_VNI_SVC_STAT_REFUSED);
	hold_ids();
	for (unsigned int i = 0; i < 4; i++)
		reap_ok(spawn(refused, NULL), WAIT_US, "a refused process");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_REFUSED), ref0 + 4);
	free_ids();
	for (int i = 0; i < 100; i++)
		pump();
	T_EQ(n_fds(), before);
	rte_free(ring);
}

/* One registration by hand: @p mu_len bytes of @p mu after the request of @p version for process
 * 1:@p proc. Its status; its descriptors in @p fds (their number in *n_fds), its segment's size
 * in *size. */
static int32_t
raw_reg(uint32_t version, uint32_t proc, const struct trd_vni_sock_mu *mu, size_t mu_len, int *fds,
	int *n_fds, uint64_t *size)
{
	struct trd_vni_sock_register req = {.op = TRD_VNI_SOCK_REGISTER,
					    .version = version,
					    .app = 1,
					    .proc = proc,
					    .pool_size = 1 << 20,
					    .n_send = 8,
					    .n_recv = 8,
					    .n_doorbells = 4,
					    .short_max = 512};
	struct trd_vni_sock_answer ans;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint8_t out[sizeof(req) + sizeof(*mu)];
	union {
		char buf[CMSG_SPACE(16 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &ans, .iov_len = sizeof(ans)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	*n_fds = 0;
	memcpy(out, &req, sizeof(req));
	memcpy(out + sizeof(req), mu, mu_len);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, out, sizeof(req) + mu_len, 0) != (ssize_t)(sizeof(req) + mu_len) ||
	    recvmsg(fd, &mh, 0) != sizeof(ans) || (mh.msg_flags & MSG_CTRUNC))
		return 1000;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_type == SCM_RIGHTS) {
			*n_fds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(cm), (size_t)*n_fds * sizeof(int));
		}
	*size = ans.seg_size;
	/* the socket stays open while attached: closed at exit */
	return ans.status;
}

/* The segment's messaging-unit header says @p n reception FIFOs. */
static bool
seg_rfifos(int memfd, uint64_t size, uint32_t n, uint8_t first)
{
	uint8_t *sb = mmap(NULL, size, PROT_READ, MAP_SHARED, memfd, 0);
	const struct trd_vni_seg *seg = (const struct trd_vni_seg *)sb;
	bool ok;

	if (sb == MAP_FAILED)
		return false;
	ok = seg->mu_off != 0 && seg->mu_off + sizeof(struct trd_vni_mu) <= size &&
	     ((const struct trd_vni_mu *)(sb + seg->mu_off))->n_rfifos == n;
	/* the ids asked for (version 7) */
	for (uint32_t i = 0; ok && first != 0 && i < n; i++)
		ok = ((const struct trd_vni_mu *)(sb + seg->mu_off))->rfifo_id[i] == first + i;
	munmap(sb, size);
	return ok;
}

static int
proto_child(void *arg)
{
	struct trd_vni_sock_mu mu = {.n_fifos = 1, .fifo_slots = 64};
	int fds[16], n;
	uint64_t size;

	(void)arg;
	/* version 5: 16 bytes of messaging-unit part (what follows, if anything, is not read) */
	mu.n_rfifos = 3;
	mu.rfifo_slots = 64;
	if (raw_reg(5, 0, &mu, TRD_VNI_SOCK_MU_V5_SIZE, fds, &n, &size) != 0 || n != 4)
		return 1;
	if (!seg_rfifos(fds[0], size, 0, 0))
		return 2;
	/* version 6: bad counts refused, no descriptor passed */
	mu.n_rfifos = TRD_VNI_MU_RFIFOS_MAX + 1;
	if (raw_reg(6, 1, &mu, TRD_VNI_SOCK_MU_V6_SIZE, fds, &n, &size) != -EINVAL || n != 0)
		return 3;
	mu.n_rfifos = 1;
	mu.rfifo_slots = 65;
	if (raw_reg(6, 1, &mu, TRD_VNI_SOCK_MU_V6_SIZE, fds, &n, &size) != -EINVAL || n != 0)
		return 4;
	mu.rfifo_slots = 1u << 13;
	if (raw_reg(6, 1, &mu, TRD_VNI_SOCK_MU_V6_SIZE, fds, &n, &size) != -EINVAL || n != 0)
		return 5;
	/* a version 5 request cannot carry the version 6 part, nor a version 6 one the 7 */
	mu.rfifo_slots = 64;
	if (raw_reg(5, 1, &mu, TRD_VNI_SOCK_MU_V6_SIZE, fds, &n, &size) != -EPROTO || n != 0)
		return 6;
	mu.rfifo_first = 140;
	if (raw_reg(6, 1, &mu, sizeof(mu), fds, &n, &size) != -EPROTO || n != 0)
		return 9;
	/* version 7: ids below the guests' range, or running past it, refused */
	mu.n_rfifos = 2;
	mu.rfifo_first = 100;
	if (raw_reg(7, 1, &mu, sizeof(mu), fds, &n, &size) != -EINVAL || n != 0)
		return 10;
	mu.rfifo_first = TRD_GUEST_RFIFO_LAST;
	if (raw_reg(7, 1, &mu, sizeof(mu), fds, &n, &size) != -EINVAL || n != 0)
		return 11;
	mu.rfifo_first = UINT32_MAX - 1; /* + 2 - 1 wraps to 0 in 32 bits */
	if (raw_reg(7, 1, &mu, sizeof(mu), fds, &n, &size) != -EINVAL || n != 0)
		return 12;
	/* a good one, with the ids it asked for */
	mu.rfifo_first = 140;
	if (raw_reg(7, 1, &mu, sizeof(mu), fds, &n, &size) != 0 || n != 6)
		return 7;
	if (!seg_rfifos(fds[0], size, 2, 140))
		return 8;
	return 0;
}

static void
test_proto(void)
{
	uint64_t ref0 = stat_of(TRD_VNI_SVC_STAT_REFUSED);

	reap_ok(spawn(proto_child, NULL), WAIT_US, "the process speaking by hand");
	T_EQ(stat_of(TRD_VNI_SVC_STAT_REFUSED), ref0 + 8);
}

int
main(int argc, char **argv)
{
	struct trd_vni_svc_conf vc;
	struct vni_setup_opt o = {.rec_fifo_size = 1024, .n_counters = 3 * TRD_COUNTER_BLOCK};

	if (argc != 2) {
		fprintf(stderr, "usage: %s ids|fds|proto\n", argv[0]);
		return 2;
	}
	test_eal_init(argv[0], NULL);
	memset(&vc, 0, sizeof(vc));
	vc.max_pool = 1 << 24;
	vni_setup_with("vrf15", mu_topo_one, &o, &vc);
	if (strcmp(argv[1], "ids") == 0)
		test_ids();
	else if (strcmp(argv[1], "fds") == 0)
		test_fds();
	else if (strcmp(argv[1], "proto") == 0)
		test_proto();
	else
		T_ASSERT(0, "unknown test %s", argv[1]);
	printf("PASS: vni rfifo rv15 %s\n", argv[1]);
	return 0;
}
