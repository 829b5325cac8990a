/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VNI service: control. The Unix socket applications register on (SOCK_SEQPACKET): a
 * registration is checked (sizes, placement, owner), answered with the segment's memfd and the
 * eventfds, and the interface attached; a hang-up, an error or any later data on the socket
 * means the process is gone, and everything it held is given back (vif_kill). An interface's
 * memory is released once no send or grant names it.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>

#include "dispatch_pvt.h"
#include "iface_pvt.h"
#include "mu_pvt.h"
#include "vmem_pvt.h"

/* ------------------------------------------------------------------------------------------ */
/* the socket */

static int
ep_add(struct trd_vni_svc *s, int fd, struct ep_ref *ref, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = ref};

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Is a live engine serving @p path? */
static bool
sock_live(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return live;
}

/* Listen on @p path: refuse to steal a live engine's socket, replace a stale one; the epoll
 * set watches the socket and the kick eventfd. 0 or a positive errno. */
int
svc_ctl_listen(struct trd_vni_svc *s, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t mask;
	int rc;

	if (sock_live(path)) {
		VNI_LOG(ERR, "%s: another engine serves this socket", path);
		return EADDRINUSE;
	}
	unlink(path);
	snprintf(s->path, sizeof(s->path), "%s", path);
	memcpy(sa.sun_path, s->path, sizeof(s->path));
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		return errno;
	mask = umask(0077);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = errno;
		umask(mask);
		VNI_LOG(ERR, "%s: cannot bind: %s", path, strerror(rc));
		s->path[0] = '\0';
		return rc;
	}
	umask(mask);
	if (chmod(s->path, s->conf.socket_mode) != 0 || listen(s->lfd, 64) != 0)
		return errno;
	s->kfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->kfd < 0 || s->epfd < 0)
		return errno;
	s->lref.kind = EP_LISTEN;
	s->kref.kind = EP_KICK;
	if (ep_add(s, s->lfd, &s->lref, EPOLLIN) != 0 || ep_add(s, s->kfd, &s->kref, EPOLLIN) != 0)
		return errno;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* process death */

void
svc_vif_release_maybe(struct trd_vni_svc *s, struct vif *v)
{
	if (!v->dead || v->refs != 0)
		return;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (s->ifs[i] == v) {
			s->ifs[i] = s->ifs[--s->n_ifs];
			s->ifs[s->n_ifs] = NULL;
			break;
		}
	svc_vif_unmap(s, v);
}

static void vif_kill(struct trd_vni_svc *s, struct vif *v, const char *why);

/* A new interface's queues, all empty. */
static void
vif_lists_init(struct vif *v)
{
	TAILQ_INIT(&v->rq);
	TAILQ_INIT(&v->txs);
	TAILQ_INIT(&v->ords);
	TAILQ_INIT(&v->uq);
	for (unsigned int i = 0; i < RTE_DIM(v->uqs); i++)
		TAILQ_INIT(&v->uqs[i]);
	svc_posted_init(v);
	TAILQ_INIT(&v->hdrs);
}

/* Tell every live interface how many processes poll on this host as far as the engine knows:
 * the distinct processes attached (a process with several interfaces counts once) and the
 * engine's own thread (vni_seg.h, engine_procs). Called at every attach and detach. */
static void
procs_publish(struct trd_vni_svc *s)
{
	uint32_t n = 1;

	for (unsigned int i = 0; i < s->n_ifs; i++) {
		bool seen = false;

		if (s->ifs[i]->dead)
			continue;
		for (unsigned int k = 0; k < i && !seen; k++)
			seen = !s->ifs[k]->dead && s->ifs[k]->pid == s->ifs[i]->pid;
		n += !seen;
	}
	s->n_procs = n - 1;
	for (unsigned int i = 0; i < s->n_ifs; i++)
		if (!s->ifs[i]->dead)
			__atomic_store_n(&s->ifs[i]->seg->engine_procs, n, __ATOMIC_RELAXED);
}

/* Interfaces whose process exited while something else (a child it forked) holds their socket,
 * or whose address space is gone (the process exec'd: same pid, another program): the
 * interface ends now, with everything it held. Its memory is out of reach already (vmem.c).
 * Called every sweep period. */
void
svc_pid_sweep(struct trd_vni_svc *s)
{
	for (unsigned int i = s->n_ifs; i-- > 0;) {
		struct vif *v = s->ifs[i];
		struct pollfd p = {.fd = v->pidfd, .events = POLLIN};

		/* a released interface is swapped with the last one, which was looked at */
		if (v->dead)
			continue;
		if (v->pidfd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			vif_kill(s, v, "process exited");
		else if (v->mem_gone || svc_vmem_gone(v))
			vif_kill(s, v, "its address space is gone (exec, or an exit under way)");
	}
}

/* The process is gone (or closed, or broke its queue): give everything back. */
static void
vif_kill(struct trd_vni_svc *s, struct vif *v, const char *why)
{
	struct svc_gone n = {0};

	if (v->dead)
		return;
	v->dead = true;
	s->n_live--;
	ST(s, DETACHED)++;
	procs_publish(s);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, v->sock, NULL);
	close(v->sock);
	v->sock = -1;
	if (v->pidfd >= 0) {
		close(v->pidfd);
		v->pidfd = -1;
	}
	svc_vmem_close(v);      /* no access to its memory from now on */
	svc_vif_gone(s, v, &n); /* its regions, sends, receives and ordered pairs */
	VNI_LOG(INFO,
		"%u:%u (pid %d) detached: %s; sends: %u aborted, %u dropped before they "
		"started, %u finishing; %u incoming messages dropped or cancelled",
		v->app, v->proc, v->pid, why, n.tx_abort, n.tx_drop, n.tx_finish, n.rx);
	v->refs--; /* the attachment's reference */
	svc_vif_release_maybe(s, v);
}

/* ------------------------------------------------------------------------------------------ */
/* registration */

/* The slot of @p c is free again (s->n_conns: the socket look walks the table only when one
 * is used). */
static void
conn_unuse(struct trd_vni_svc *s, struct vconn *c)
{
	c->used = false;
	s->n_conns--;
}

static void
conn_close(struct trd_vni_svc *s, struct vconn *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	conn_unuse(s, c);
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; Debian bookworm's headers are older */
#endif

/* Why process @p app:@p proc cannot attach: another holds its number (in @p buf). */
static const char *
held_why(struct trd_vni_svc *s, uint32_t app, uint32_t proc, char *buf, size_t len)
{
	const struct vif *v = svc_vif_find(s, app, proc);

	snprintf(buf, len,
		 "%u:%u is attached already, by pid %d (still running, or its exit not seen yet)",
		 app, proc, v != NULL ? v->pid : -1);
	return buf;
}

/* NULL if this engine serves attach protocol @p version, else why not (in @p buf): an older
 * library would send what this engine no longer takes, a newer one what it does not know, so
 * the reason names both versions, for the log and for the library (trd_vni_open_error). */
static const char *
version_refused(uint32_t version, char *buf, size_t len)
{
	if (version >= TRD_VNI_VERSION_MIN && version <= TRD_VNI_VERSION)
		return NULL;
	snprintf(buf, len, "VNI protocol version mismatch: the library speaks %u, this engine %u",
		 version, TRD_VNI_VERSION);
	return buf;
}

/* A pidfd of the process that connected @p fd, taken at accept: SO_PEERPIDFD names the very
 * process that called connect(); before Linux 6.5, pidfd_open of the pid SO_PEERCRED names
 * (checked at registration: alive, and the pid it names). -1 if the process is gone. */
static int
peer_pidfd(int fd)
{
	struct ucred cred;
	socklen_t l = sizeof(int);
	int pfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &l) == 0 && pfd >= 0)
		return pfd;
	if (errno != ENOPROTOOPT)
		return -1;
	l = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) != 0 || cred.pid <= 0)
		return -1;
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, cred.pid, 0);
#else
	return -1;
#endif
}

/* Does @p pidfd name the live process @p pid? (Its fdinfo says which pid it names, -1 once
 * the process is gone; and a pidfd polls readable once its process exited.) */
static bool
pidfd_names(int pidfd, int pid)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	char path[64], line[128];
	bool ok = false;
	FILE *f;

	if (pidfd < 0 || pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		int n;

		if (sscanf(line, "Pid: %d", &n) == 1) {
			ok = n == pid;
			break;
		}
	}
	fclose(f);
	return ok && poll(&p, 1, 0) == 0;
}

/* The registration request and the descriptors that come with it (at most 2: the process's
 * /proc/self/mem and maps). The number of bytes, or -1 with errno. */
static ssize_t
recv_register(int fd, struct trd_vni_sock_register *req, struct trd_vni_sock_mu *mu, int pfds[2],
	      unsigned int *n_pfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	/* version 5: the messaging-unit part may follow */
	struct iovec iov[2] = {{.iov_base = req, .iov_len = sizeof(*req)},
			       {.iov_base = mu, .iov_len = sizeof(*mu)}};
	struct msghdr mh = {.msg_iov = iov,
			    .msg_iovlen = 2,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	unsigned int total = 0;

	*n_pfds = 0;
	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		unsigned int k;
		int got[4];

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (unsigned int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		k = RTE_MIN(k, 4u);
		memcpy(got, CMSG_DATA(c), k * sizeof(int));
		for (unsigned int i = 0; i < k; i++, total++) {
			if (*n_pfds < 2)
				pfds[(*n_pfds)++] = got[i];
			else
				close(got[i]);
		}
	}
	/* anything but none or two: refused (svc_vmem_adopt), the two kept closed by the caller */
	if ((mh.msg_flags & MSG_CTRUNC) || (total != 0 && total != 2))
		*n_pfds = 3;
	return n;
}

/* Answer a registration: version 1 requests get the version 1 answer (without app and
 * proc), everything else the current one. */
static void
answer(int fd, uint32_t version, int status, uint64_t size, const char *reason, const struct vif *v,
       const int *fds)
{
	struct trd_vni_sock_answer a;
	/* version 5: the process's counter block, a memfd of its own, follows the three; version
	 * 6: an eventfd of each reception FIFO after it (mu.c) */
	int all[TRD_VNI_ANSWER_FDS] = {-1, -1, -1};
	unsigned int n_fds = 3 + (v != NULL ? svc_mu_fds(v, &all[3]) : 0);
	union {
		char buf[CMSG_SPACE(TRD_VNI_ANSWER_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &a,
			    .iov_len = version == 1   ? TRD_VNI_ANSWER_V1_SIZE
				       : version == 2 ? TRD_VNI_ANSWER_V2_SIZE
						      : sizeof(a)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(&a, 0, sizeof(a));
	a.op = TRD_VNI_SOCK_REGISTERED;
	a.status = status;
	a.seg_size = size;
	snprintf(a.reason, sizeof(a.reason), "%s", reason ? reason : "");
	a.version = TRD_VNI_VERSION;
	a.version_min = TRD_VNI_VERSION_MIN;
	if (v != NULL) {
		a.app = v->app;
		a.proc = v->proc;
	}
	if (fds != NULL) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
		memcpy(all, fds, 3 * sizeof(int));
		memcpy(CMSG_DATA(cm), all, n_fds * sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		VNI_LOG(DEBUG, "answer not sent: %s", strerror(errno));
}

/* Is @p gid the primary or a supplementary group of the process at the other end of @p fd? */
static bool
peer_in_group(int fd, const struct ucred *cred, gid_t gid)
{
	gid_t groups[256];
	socklen_t gl = sizeof(groups);

	if (cred->gid == gid)
		return true;
#ifdef SO_PEERGROUPS
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
		for (size_t i = 0; i < gl / sizeof(groups[0]); i++)
			if (groups[i] == gid)
				return true;
#else
	RTE_SET_USED(groups);
	RTE_SET_USED(gl);
#endif
	return false;
}

/* May the process at the other end of @p fd claim a process of application @p app?
 * 0 or -EACCES (with *why). */
static int
owner_check(struct trd_vni_svc *s, int fd, const struct ucred *cred, uint32_t app, const char **why)
{
	bool listed = false;

	for (unsigned int i = 0; i < s->conf.n_owners; i++) {
		const struct trd_vni_svc_owner *o = &s->owners[i];

		if (o->app != app)
			continue;
		listed = true;
		if ((o->uid < 0 || (uint64_t)o->uid == cred->uid) &&
		    (o->gid < 0 || peer_in_group(fd, cred, (gid_t)o->gid)))
			return 0;
	}
	if (listed) {
		*why = "this user may not claim this application (its owners are configured)";
		return -EACCES;
	}
	/* no owner configured: the application belongs to the user of its attached processes */
	for (unsigned int i = 0; i < s->n_ifs; i++) {
		const struct vif *v = s->ifs[i];

		if (v != NULL && !v->dead && v->app == app && (uid_t)v->uid != cred->uid) {
			*why = "processes of this application run as another user";
			return -EACCES;
		}
	}
	return 0;
}

/* Process TRD_VNI_ANY of @p app: the lowest process of @p app that the topology places on this
 * node and that is not attached now. 0 (*proc set), -EADDRNOTAVAIL (the topology places no
 * process of @p app here) or -EADDRINUSE (all of them are attached). */
static int
free_proc(struct trd_vni_svc *s, uint32_t app, uint32_t *proc)
{
	const struct trd_topo_proc *p = s->topo->procs;
	unsigned int lo = 0, hi = s->topo->n_procs;
	bool placed = false;

	while (lo < hi) { /* the first entry of app (procs are sorted by app, then proc) */
		unsigned int mid = lo + (hi - lo) / 2;

		if (p[mid].app_id < app)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->topo->n_procs && p[lo].app_id == app; lo++) {
		if (p[lo].rank != s->rank || p[lo].proc_id == TRD_VNI_ANY)
			continue;
		placed = true;
		if (svc_vif_find(s, app, p[lo].proc_id) == NULL) {
			*proc = p[lo].proc_id;
			return 0;
		}
	}
	return placed ? -EADDRINUSE : -EADDRNOTAVAIL;
}

/* A registration request on a fresh connection. */
static void
conn_register(struct trd_vni_svc *s, struct vconn *c)
{
	struct trd_vni_sock_register req = {0}; /* a short request leaves the rest zero */
	struct trd_vni_sock_mu mu = {0};
	struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
	socklen_t cl = sizeof(cred);
	const char *why = NULL;
	char vwhy[96];
	struct vif *v = NULL;
	int memfd = -1, fds[3], pfds[2] = {-1, -1};
	unsigned int n_pfds = 0;
	ssize_t n;
	int rc = 0, fd = c->fd, pidfd;
	bool any;

	n = recv_register(fd, &req, &mu, pfds, &n_pfds);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		for (unsigned int i = 0; i < RTE_MIN(n_pfds, 2u); i++)
			close(pfds[i]);
		conn_close(s, c);
		return;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	conn_unuse(s, c);
	pidfd = c->pidfd; /* ours now */
	c->pidfd = -1;
	any = req.proc == TRD_VNI_ANY;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) {
		rc = -EACCES;
		why = "the kernel does not say who the process is (SO_PEERCRED)";
	} else if (!pidfd_names(pidfd, cred.pid)) {
		/* gone before it registered: its pid may name another process by now */
		rc = -ESRCH;
		why = "the process that connected is gone";
	} else if ((n != (ssize_t)sizeof(req) &&
		    (n != (ssize_t)(sizeof(req) + TRD_VNI_SOCK_MU_V5_SIZE) || req.version < 5) &&
		    (n != (ssize_t)(sizeof(req) + TRD_VNI_SOCK_MU_V6_SIZE) || req.version < 6) &&
		    (n != (ssize_t)(sizeof(req) + sizeof(mu)) || req.version < 7)) ||
		   req.op != TRD_VNI_SOCK_REGISTER) {
		rc = -EPROTO;
		why = "unknown request";
	} else if ((why = version_refused(req.version, vwhy, sizeof(vwhy))) != NULL) {
		rc = -EPROTO;
	} else if (req.n_send == 0 || req.n_send > TRD_VNI_CTX_MAX || req.n_recv == 0 ||
		   req.n_recv > TRD_VNI_CTX_MAX || req.n_doorbells > TRD_VNI_DB_MAX ||
		   req.pool_size > s->conf.max_pool || req.app == TRD_VNI_ANY) {
		rc = -EINVAL;
		why = "bad sizes (contexts 1..4096, doorbells 0..4096, pool within the engine's "
		      "limit) or application";
	} else if (req.proc != TRD_VNI_ANY &&
		   trd_topo_find_proc(s->topo, req.app, req.proc) != (int)s->rank) {
		rc = -EADDRNOTAVAIL;
		why = "the topology does not place this process on this node";
	} else if ((rc = owner_check(s, fd, &cred, req.app, &why)) != 0) {
		ST(s, DENIED)++;
	} else if (req.proc == TRD_VNI_ANY && (rc = free_proc(s, req.app, &req.proc)) != 0) {
		why = rc == -EADDRINUSE ? "every process of this application that the topology "
					  "places on this node is attached"
					: "the topology places no process of this application on "
					  "this node";
	} else if (svc_vif_find(s, req.app, req.proc) != NULL) {
		rc = -EADDRINUSE;
		why = held_why(s, req.app, req.proc, vwhy, sizeof(vwhy));
	} else if (s->n_ifs >= s->conf.max_ifs) {
		rc = -ENOSPC;
		why = "too many interfaces";
	}
	if (rc == 0) {
		v = calloc(1, sizeof(*v));
		if (v == NULL) {
			rc = -ENOMEM;
			why = "out of memory";
		}
	}
	if (rc == 0) {
		v->s = s;
		v->sock = fd;
		v->efd = -1;
		v->pidfd = pidfd;
		pidfd = -1;
		v->mem_fd = v->maps_fd = -1;
		v->app = req.app;
		v->proc = req.proc;
		v->proto = req.version;
		v->pid = cred.pid;
		v->uid = (int)cred.uid;
		v->pidns_same = svc_vmem_pidns_same(v->pid, v->pidfd);
		vif_lists_init(v);
		v->sbusy = calloc(req.n_send, 1);
		v->recvs = calloc(req.n_recv, sizeof(*v->recvs));
		v->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (v->sbusy == NULL || v->recvs == NULL || v->efd < 0) {
			rc = -ENOMEM;
			why = "out of memory";
		} else {
			for (uint32_t i = 0; i < req.n_recv; i++)
				v->recvs[i].idx = i;
			rc = svc_vmem_adopt(v, pfds, n_pfds, &why);
			if (rc == 0)
				rc = svc_seg_create(s, v, &req, &mu, &memfd, &why);
		}
	}
	for (unsigned int i = 0; i < RTE_MIN(n_pfds, 2u); i++)
		if (pfds[i] >= 0)
			close(pfds[i]); /* not adopted */
	if (pidfd >= 0)
		close(pidfd);
	if (rc != 0) {
		if (n == (ssize_t)sizeof(req) && any)
			VNI_LOG(NOTICE, "registration of %u:any (pid %d, uid %u) refused: %s",
				req.app, cred.pid, cred.uid, why);
		else if (n == (ssize_t)sizeof(req))
			VNI_LOG(NOTICE, "registration of %u:%u (pid %d, uid %u) refused: %s",
				req.app, req.proc, cred.pid, cred.uid, why);
		else /* its app and proc never came: do not name any */
			VNI_LOG(NOTICE, "registration of %zd bytes (pid %d, uid %u) refused: %s", n,
				cred.pid, cred.uid, why);
		ST(s, REFUSED)++;
		answer(fd, req.version, rc, 0, why, NULL, NULL);
		close(fd);
		if (v != NULL) {
			v->sock = -1;
			svc_vif_unmap(s, v);
			ST(s, RECLAIMED)--;
		}
		return;
	}
	fds[0] = memfd;
	fds[1] = v->efd;
	fds[2] = s->kfd;
	answer(fd, req.version, 0, v->size, "", v, fds);
	close(memfd);
	v->refs++; /* the attachment's (mu.c holds one from svc_mu_create()) */
	v->ep.kind = EP_VIF;
	v->ep.ptr = v;
	ep_add(s, fd, &v->ep, EPOLLIN | EPOLLRDHUP);
	s->ifs[s->n_ifs++] = v;
	s->n_live++;
	ST(s, ATTACHED)++;
	procs_publish(s);
	VNI_LOG(INFO,
		"%u:%u (pid %d%s) attached: pool %" PRIu64 " B, %u send, %u receive contexts, "
		"short messages up to %u B%s",
		v->app, v->proc, v->pid, any ? ", asked for any" : "", v->pool_size, v->n_send,
		v->n_recv, v->short_max,
		v->mem_fd < 0 ? "; no one-sided access (its memory descriptors were not passed)"
			      : "");
}

/* May a connection of process @p pid of user @p uid wait for its registration? Not if that
 * process holds SVC_CONNS_PER_PID such connections already, or its user half of them, or none
 * is free: one process, or one user, cannot keep the others from attaching. */
static struct vconn *
conn_slot(struct trd_vni_svc *s, int pid, int64_t uid, const char **why)
{
	unsigned int by_pid = 0, by_uid = 0;
	struct vconn *c = NULL;

	for (unsigned int i = 0; i < s->conf.max_conns; i++) {
		if (!s->conns[i].used) {
			if (c == NULL)
				c = &s->conns[i];
			continue;
		}
		by_pid += s->conns[i].pid == pid;
		by_uid += s->conns[i].uid == uid;
	}
	*why = "too many registrations at once";
	if (pid < 0 || by_pid >= SVC_CONNS_PER_PID)
		*why = "too many registrations at once from this process";
	else if (by_uid >= (s->conf.max_conns + 1) / 2)
		*why = "too many registrations at once from this user";
	else
		return c;
	return NULL;
}

static void
sock_accept(struct trd_vni_svc *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred = {.pid = -1};
		socklen_t l = sizeof(cred);
		struct vconn *c;
		const char *why;

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) != 0 || cred.pid <= 0)
			cred.pid = -1;
		c = conn_slot(s, cred.pid, cred.pid < 0 ? -1 : (int64_t)cred.uid, &why);
		if (c == NULL) {
			ST(s, REFUSED)++;
			answer(fd, TRD_VNI_VERSION, -EBUSY, 0, why, NULL, NULL);
			close(fd);
			continue;
		}
		c->used = true;
		s->n_conns++;
		c->fd = fd;
		c->pid = cred.pid;
		c->uid = (int64_t)cred.uid;
		c->pidfd =
			peer_pidfd(fd); /* now: before the process can go and its pid be reused */
		c->deadline = s->now + SVC_REGISTER_TIMEOUT_US;
		c->ep.kind = EP_CONN;
		c->ep.ptr = c;
		ep_add(s, fd, &c->ep, EPOLLIN | EPOLLRDHUP);
	}
}

unsigned int
svc_sock_events(struct trd_vni_svc *s, int timeout_ms)
{
	struct epoll_event ev[16];
	int n = epoll_wait(s->epfd, ev, 16, timeout_ms);

	for (int i = 0; i < n; i++) {
		struct ep_ref *r = ev[i].data.ptr;

		switch (r->kind) {
		case EP_LISTEN:
			sock_accept(s);
			break;
		case EP_KICK: {
			uint64_t cnt;

			if (read(s->kfd, &cnt, sizeof(cnt)) == sizeof(cnt))
				ST(s, KICKS) += cnt;
			break;
		}
		case EP_CONN:
			conn_register(s, r->ptr);
			break;
		case EP_VIF: {
			struct vif *v = r->ptr;
			union {
				char b[64];
				struct trd_vni_sock_mr mr;
			} u;
			ssize_t k = recv(v->sock, u.b, sizeof(u.b), MSG_DONTWAIT);

			/* after registering, applications only ask for memory regions: other
			 * data, or EOF, means gone */
			if (k == (ssize_t)sizeof(u.mr) &&
			    (u.mr.op == TRD_VNI_SOCK_MR_REG || u.mr.op == TRD_VNI_SOCK_MR_DEREG)) {
				svc_vif_mr(s, v, &u.mr);
				break;
			}
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR) ||
			    (ev[i].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)))
				vif_kill(s, v,
					 k == 0 || (ev[i].events & (EPOLLHUP | EPOLLRDHUP))
						 ? "socket closed"
						 : "socket error");
			else if (k > 0)
				vif_kill(s, v, "unexpected data on the socket");
			break;
		}
		}
	}
	/* (none, once every process registered: no walk of the table at every look) */
	for (unsigned int i = 0; i < s->conf.max_conns && s->n_conns != 0; i++)
		if (s->conns[i].used && s->now > s->conns[i].deadline)
			conn_close(s, &s->conns[i]);
	return n > 0 ? (unsigned int)n : 0;
}
