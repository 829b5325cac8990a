/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst guard: a net_memif burst that touches its peer's memory after the PMD unmapped it.
 *
 * DPDK 22.11's memif driver handles a peer's disconnection (the peer process died or closed
 * the port) in the EAL interrupt thread: memif_disconnect() clears the connected flag, then
 * unmaps the shared regions, rings included. The lcore's rx/tx burst checks the flag once on
 * entry and then reads the rings and buffers; if the lcore is between the two when the
 * interrupt thread unmaps (a preemption mid-burst is enough on a loaded host), the burst reads
 * unmapped memory and the whole engine dies with SIGSEGV. Nothing orders the two threads: the
 * driver takes no lock the datapath takes, and tells the application only afterwards.
 *
 * So a memif burst runs under a guard: the lcore marks the burst in a thread-local jump
 * buffer, and the process's SIGSEGV/SIGBUS handler, for a fault in a marked burst, jumps back
 * to the burst's start, which returns as if the port had been idle (rx: nothing; tx: every
 * packet taken). The packets the PMD held in that burst are lost (at most one burst, up to 32
 * mbufs, never handed back), and the link counts the fault (port_faults). A fault anywhere
 * else is not ours: the handler gives it to the handler installed before (ASan's, or the
 * default, which dumps core at the faulting instruction as if no handler had been there).
 *
 * The handler is installed with SA_NODEFER, so SIGSEGV is not blocked after the jump and
 * sigsetjmp need not save the signal mask (no system call per burst).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include <toroid/testing.h>

#include "link_pvt.h"

_Thread_local sigjmp_buf *trd_link_guard_env;

static struct sigaction guard_old_segv;
static struct sigaction guard_old_bus;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static int guard_rc;

static void
guard_chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *old = sig == SIGBUS ? &guard_old_bus : &guard_old_segv;

	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction != NULL) {
		old->sa_sigaction(sig, si, uc);
		return;
	}
	if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	/* Sent by another process (kill) or thread, not a fault (si_code <= 0): ignored if it
	 * was ignored before, else sent again, now to the default action (there is no faulting
	 * instruction to run again). */
	if (si == NULL || si->si_code <= 0) {
		if (old->sa_handler == SIG_IGN)
			return;
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	/* The default action: restored, and the faulting instruction runs again on return, so
	 * the core dump shows where the fault was. */
	signal(sig, SIG_DFL);
}

static void
guard_handler(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *env = trd_link_guard_env;

	/* only a fault (si_code > 0: the kernel's) leaves the burst; a SIGSEGV or SIGBUS sent
	 * with kill() while a burst runs is not one */
	if (env != NULL && si != NULL && si->si_code > 0) {
		trd_link_guard_env = NULL;
		siglongjmp(*env, 1);
	}
	guard_chain(sig, si, uc);
}

static void
guard_install_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &guard_old_segv) != 0 ||
	    sigaction(SIGBUS, &sa, &guard_old_bus) != 0)
		guard_rc = -errno;
}

int
trd_link_guard_install(void)
{
	pthread_once(&guard_once, guard_install_once);
	return guard_rc;
}

int
trd_link_guard_probe(const volatile uint8_t *p, uint8_t *out)
{
	sigjmp_buf env;
	int rc;

	if (p == NULL || out == NULL)
		return -EINVAL;
	rc = trd_link_guard_install();
	if (rc != 0)
		return rc;
	if (sigsetjmp(env, 0) != 0)
		return -EFAULT;
	trd_link_guard_env = &env;
	*out = *p;
	trd_link_guard_env = NULL;
	return 0;
}

/* A burst abandoned by the guard: counted, and said once per link. */
static void
link_fault(struct trd_link *l, const char *what)
{
	if (__atomic_fetch_add(&l->port_faults, 1, __ATOMIC_RELAXED) == 0)
		rte_log(RTE_LOG_WARNING, trd_link_logtype,
			"toroid link: %s: the %s burst faulted: the memif peer went away and the "
			"driver unmapped its memory under the burst (DPDK 22.11 memif); burst "
			"abandoned, counted in port_faults\n",
			l->name, what);
}

/* A net_memif burst under the guard: a fault returns from sigsetjmp a second time. On rx the
 * mbufs the driver had taken are lost; on tx every packet counts as taken (the driver may
 * have freed some: giving them back could free them twice). Never inlined (it calls
 * sigsetjmp): its frame is the one the jump returns to. */
static uint16_t
memif_burst(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n, bool tx)
{
	sigjmp_buf env;
	uint16_t done;

	if (sigsetjmp(env, 0) != 0) {
		link_fault(l, tx ? "tx" : "rx");
		return tx ? n : 0;
	}
	trd_link_guard_env = &env;
	done = tx ? rte_eth_tx_burst(l->port, l->queue, pkts, n)
		  : rte_eth_rx_burst(l->port, l->queue, pkts, n);
	trd_link_guard_env = NULL;
	return done;
}

static uint16_t
memif_tx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return memif_burst(l, pkts, n, true);
}

static uint16_t
memif_rx(struct trd_link *l, struct rte_mbuf **pkts, uint16_t n)
{
	return memif_burst(l, pkts, n, false);
}

const struct trd_link_ops trd_link_memif_ops = {
	.name = "memif",
	.tx = memif_tx,
	.rx = memif_rx,
	.close = trd_link_ethdev_close,
};
