/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * -FI_ENOSYS entries: every operation the provider does not offer, so that no op table entry
 * is ever NULL (libfabric's inline wrappers call most of them without a check). fi_getinfo
 * does not advertise the capabilities these belong to.
 */
#include "tfi.h"

int
tfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
tfi_no_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
tfi_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int
tfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
		  void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

int
tfi_no_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
		   void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

int
tfi_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
	       void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
	       void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
tfi_no_av_insertsvc(struct fid_av *av, const char *node, const char *service, fi_addr_t *fi_addr,
		    uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service,
		    size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
	      void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep,
	      void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
	      void *context)
{
	return -FI_ENOSYS;
}

int
tfi_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

int
tfi_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int
tfi_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int
tfi_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int
tfi_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int
tfi_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int
tfi_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int
tfi_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

/* ---- RMA ---- */

static ssize_t
no_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr,
	    uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
	     fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_msg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr,
	     uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
	      fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr,
	      uint64_t key)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
		 fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
		  fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	return -FI_ENOSYS;
}

struct fi_ops_rma tfi_no_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = no_rma_read,
	.readv = no_rma_readv,
	.readmsg = no_rma_msg,
	.write = no_rma_write,
	.writev = no_rma_writev,
	.writemsg = no_rma_msg,
	.inject = no_rma_inject,
	.writedata = no_rma_writedata,
	.injectdata = no_rma_injectdata,
};

/* ---- atomics ---- */

static ssize_t
no_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr,
		uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op,
		void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
		 fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype,
		 enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr,
		 uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
		    void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
		    enum fi_datatype datatype, enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
		     struct fi_ioc *resultv, void **result_desc, size_t result_count,
		     fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype,
		     enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv,
		       void **result_desc, size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
		    const void *compare, void *compare_desc, void *result, void *result_desc,
		    fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype,
		    enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
		     const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
		     struct fi_ioc *resultv, void **result_desc, size_t result_count,
		     fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype,
		     enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
		       const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
		       struct fi_ioc *resultv, void **result_desc, size_t result_count,
		       uint64_t flags)
{
	return -FI_ENOSYS;
}

static int
no_atomic_valid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	return -FI_ENOSYS;
}

struct fi_ops_atomic tfi_no_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = no_atomic_write,
	.writev = no_atomic_writev,
	.writemsg = no_atomic_writemsg,
	.inject = no_atomic_inject,
	.readwrite = no_atomic_readwrite,
	.readwritev = no_atomic_readwritev,
	.readwritemsg = no_atomic_readwritemsg,
	.compwrite = no_atomic_compwrite,
	.compwritev = no_atomic_compwritev,
	.compwritemsg = no_atomic_compwritemsg,
	.writevalid = no_atomic_valid,
	.readwritevalid = no_atomic_valid,
	.compwritevalid = no_atomic_valid,
};

/* ---- collectives ---- */

static ssize_t
no_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr,
	     fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
	    void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags,
	    void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
	     void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op,
	     uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
	  void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
	  enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
	   void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
	   uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
no_coll_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv,
	    void **result_desc, size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t
no_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective tfi_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = no_barrier,
	.broadcast = no_broadcast,
	.alltoall = no_alltoall,
	.allreduce = no_allreduce,
	.allgather = no_alltoall,
	.reduce_scatter = no_allreduce,
	.reduce = no_reduce,
	.scatter = no_scatter,
	.gather = no_scatter,
	.msg = no_coll_msg,
	.barrier2 = no_barrier2,
};
