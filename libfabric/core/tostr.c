/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric.so.1 for toroid alone (core.c): fi_tostr and fi_tostr_r for what a toroid
 * fi_info holds (its capabilities and flags by name, its enums, the attributes an fi_info
 * dump shows); other types print "Unknown type".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "core_pvt.h"

#define API __attribute__((visibility("default")))

struct name {
	uint64_t v;
	const char *s;
};

#define N(x)                                                                                       \
	{                                                                                          \
		x, #x                                                                              \
	}

static const struct name caps[] = {N(FI_MSG),
				   N(FI_RMA),
				   N(FI_TAGGED),
				   N(FI_ATOMIC),
				   N(FI_MULTICAST),
				   N(FI_COLLECTIVE),
				   N(FI_READ),
				   N(FI_WRITE),
				   N(FI_RECV),
				   N(FI_SEND),
				   N(FI_REMOTE_READ),
				   N(FI_REMOTE_WRITE),
				   N(FI_MULTI_RECV),
				   N(FI_REMOTE_CQ_DATA),
				   N(FI_MORE),
				   N(FI_PEEK),
				   N(FI_TRIGGER),
				   N(FI_FENCE),
				   N(FI_COMPLETION),
				   N(FI_INJECT),
				   N(FI_INJECT_COMPLETE),
				   N(FI_TRANSMIT_COMPLETE),
				   N(FI_DELIVERY_COMPLETE),
				   N(FI_AFFINITY),
				   N(FI_COMMIT_COMPLETE),
				   N(FI_MATCH_COMPLETE),
				   N(FI_HMEM),
				   N(FI_VARIABLE_MSG),
				   N(FI_LOCAL_COMM),
				   N(FI_REMOTE_COMM),
				   N(FI_SHARED_AV),
				   N(FI_RMA_EVENT),
				   N(FI_SOURCE),
				   N(FI_NAMED_RX_CTX),
				   N(FI_DIRECTED_RECV),
				   {0, NULL}};

static const struct name orders[] = {N(FI_ORDER_RAR),  N(FI_ORDER_RAW), N(FI_ORDER_RAS),
				     N(FI_ORDER_WAR),  N(FI_ORDER_WAW), N(FI_ORDER_WAS),
				     N(FI_ORDER_SAR),  N(FI_ORDER_SAW), N(FI_ORDER_SAS),
				     N(FI_ORDER_DATA), {0, NULL}};

static const struct name mr_modes[] = {N(FI_MR_LOCAL),     N(FI_MR_RAW),      N(FI_MR_VIRT_ADDR),
				       N(FI_MR_ALLOCATED), N(FI_MR_PROV_KEY), N(FI_MR_MMU_NOTIFY),
				       N(FI_MR_RMA_EVENT), N(FI_MR_ENDPOINT), N(FI_MR_HMEM),
				       {0, NULL}};

static const char *const ep_types[] = {"FI_EP_UNSPEC", "FI_EP_MSG",         "FI_EP_DGRAM",
				       "FI_EP_RDM",    "FI_EP_SOCK_STREAM", "FI_EP_SOCK_DGRAM"};
static const char *const threadings[] = {"FI_THREAD_UNSPEC",     "FI_THREAD_SAFE",
					 "FI_THREAD_FID",        "FI_THREAD_DOMAIN",
					 "FI_THREAD_COMPLETION", "FI_THREAD_ENDPOINT"};
static const char *const progresses[] = {"FI_PROGRESS_UNSPEC", "FI_PROGRESS_AUTO",
					 "FI_PROGRESS_MANUAL"};
static const char *const av_types[] = {"FI_AV_UNSPEC", "FI_AV_MAP", "FI_AV_TABLE"};
static const struct name modes[] = {N(FI_CONTEXT),         N(FI_MSG_PREFIX),
				    N(FI_ASYNC_IOV),       N(FI_RX_CQ_DATA),
				    N(FI_LOCAL_MR),        N(FI_NOTIFY_FLAGS_ONLY),
				    N(FI_RESTRICTED_COMP), N(FI_CONTEXT2),
				    N(FI_BUFFERED_RECV),   {0, NULL}};
static const char *const rms[] = {"FI_RM_UNSPEC", "FI_RM_DISABLED", "FI_RM_ENABLED"};
static const char *const addr_formats[] = {
	"FI_FORMAT_UNSPEC", "FI_SOCKADDR",   "FI_SOCKADDR_IN", "FI_SOCKADDR_IN6",
	"FI_SOCKADDR_IB",   "FI_ADDR_PSMX",  "FI_ADDR_GNI",    "FI_ADDR_BGQ",
	"FI_ADDR_MLX",      "FI_ADDR_STR",   "FI_ADDR_PSMX2",  "FI_ADDR_IB_UD",
	"FI_ADDR_EFA",      "FI_ADDR_PSMX3", "FI_ADDR_OPX",    "FI_ADDR_CXI"};
static const char *const log_levels[] = {"FI_LOG_WARN", "FI_LOG_TRACE", "FI_LOG_INFO",
					 "FI_LOG_DEBUG"};

struct out {
	char *buf;
	size_t len, pos;
};

static void __attribute__((format(printf, 2, 3))) put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->pos + 1 >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos = o->pos + (size_t)n < o->len ? o->pos + (size_t)n : o->len - 1;
}

static void
put_flags(struct out *o, uint64_t v, const struct name *t)
{
	const char *sep = "";

	for (; t->s != NULL; t++) {
		if ((v & t->v) == t->v && t->v != 0) {
			put(o, "%s%s", sep, t->s);
			sep = ", ";
			v &= ~t->v;
		}
	}
	if (v != 0)
		put(o, "%s0x%" PRIx64, sep, v);
}

static void
put_enum(struct out *o, unsigned int v, const char *const *t, size_t n)
{
	if (v < n)
		put(o, "%s", t[v]);
	else
		put(o, "%u", v);
}

#define ENUM(o, v, t) put_enum(o, (unsigned int)(v), t, sizeof(t) / sizeof(t[0]))

/* "    name: [ FLAG, FLAG ]\n" at @p ind spaces */
static void
put_flag_line(struct out *o, int ind, const char *name, uint64_t v, const struct name *t)
{
	put(o, "%*s%s: [ ", ind, "", name);
	if (v == 0 && t == orders)
		put(o, "FI_ORDER_NONE");
	put_flags(o, v, t);
	put(o, " ]\n");
}

static void
put_enum_line(struct out *o, int ind, const char *name, unsigned int v, const char *const *t,
	      size_t n)
{
	put(o, "%*s%s: ", ind, "", name);
	put_enum(o, v, t, n);
	put(o, "\n");
}

#define ENUM_LINE(o, ind, name, v, t)                                                              \
	put_enum_line(o, ind, name, (unsigned int)(v), t, sizeof(t) / sizeof(t[0]))

static void
put_xattrs(struct out *o, const struct fi_tx_attr *tx, const struct fi_rx_attr *rx)
{
	if (tx != NULL) {
		put(o, "    fi_tx_attr:\n");
		put_flag_line(o, 8, "caps", tx->caps, caps);
		put_flag_line(o, 8, "mode", tx->mode, modes);
		put_flag_line(o, 8, "op_flags", tx->op_flags, caps);
		put_flag_line(o, 8, "msg_order", tx->msg_order, orders);
		put_flag_line(o, 8, "comp_order", tx->comp_order, orders);
		put(o,
		    "        inject_size: %zu\n        size: %zu\n        iov_limit: %zu\n"
		    "        rma_iov_limit: %zu\n",
		    tx->inject_size, tx->size, tx->iov_limit, tx->rma_iov_limit);
	}
	if (rx != NULL) {
		put(o, "    fi_rx_attr:\n");
		put_flag_line(o, 8, "caps", rx->caps, caps);
		put_flag_line(o, 8, "mode", rx->mode, modes);
		put_flag_line(o, 8, "op_flags", rx->op_flags, caps);
		put_flag_line(o, 8, "msg_order", rx->msg_order, orders);
		put_flag_line(o, 8, "comp_order", rx->comp_order, orders);
		put(o,
		    "        total_buffered_recv: %zu\n        size: %zu\n        iov_limit: %zu\n",
		    rx->total_buffered_recv, rx->size, rx->iov_limit);
	}
}

static void
put_ep_attr(struct out *o, const struct fi_ep_attr *ep)
{
	put(o, "    fi_ep_attr:\n");
	ENUM_LINE(o, 8, "type", ep->type, ep_types);
	put(o, "        protocol: %s\n", ep->protocol == FI_PROTO_UNSPEC ? "FI_PROTO_UNSPEC" : "?");
	put(o,
	    "        protocol_version: %u\n        max_msg_size: %zu\n"
	    "        msg_prefix_size: %zu\n        mem_tag_format: 0x%016" PRIx64 "\n"
	    "        tx_ctx_cnt: %zu\n        rx_ctx_cnt: %zu\n        auth_key_size: %zu\n",
	    ep->protocol_version, ep->max_msg_size, ep->msg_prefix_size, ep->mem_tag_format,
	    ep->tx_ctx_cnt, ep->rx_ctx_cnt, ep->auth_key_size);
}

static void
put_domain_attr(struct out *o, const struct fi_domain_attr *d)
{
	put(o, "    fi_domain_attr:\n        name: %s\n", d->name != NULL ? d->name : "(null)");
	ENUM_LINE(o, 8, "threading", d->threading, threadings);
	ENUM_LINE(o, 8, "control_progress", d->control_progress, progresses);
	ENUM_LINE(o, 8, "data_progress", d->data_progress, progresses);
	ENUM_LINE(o, 8, "resource_mgmt", d->resource_mgmt, rms);
	ENUM_LINE(o, 8, "av_type", d->av_type, av_types);
	put_flag_line(o, 8, "mr_mode", (uint64_t)(unsigned int)d->mr_mode, mr_modes);
	put(o,
	    "        mr_key_size: %zu\n        cq_data_size: %zu\n        cq_cnt: %zu\n"
	    "        ep_cnt: %zu\n        tx_ctx_cnt: %zu\n        rx_ctx_cnt: %zu\n"
	    "        max_ep_tx_ctx: %zu\n        max_ep_rx_ctx: %zu\n        cntr_cnt: %zu\n"
	    "        mr_iov_limit: %zu\n        mr_cnt: %zu\n",
	    d->mr_key_size, d->cq_data_size, d->cq_cnt, d->ep_cnt, d->tx_ctx_cnt, d->rx_ctx_cnt,
	    d->max_ep_tx_ctx, d->max_ep_rx_ctx, d->cntr_cnt, d->mr_iov_limit, d->mr_cnt);
	put_flag_line(o, 8, "caps", d->caps, caps);
	put_flag_line(o, 8, "mode", d->mode, modes);
}

/* An fi_info as libfabric's fi_info -v shows it (the attributes toroid's answers set). */
static void
put_info(struct out *o, const struct fi_info *fi)
{
	put(o, "fi_info:\n");
	put_flag_line(o, 4, "caps", fi->caps, caps);
	put_flag_line(o, 4, "mode", fi->mode, modes);
	ENUM_LINE(o, 4, "addr_format", fi->addr_format, addr_formats);
	put(o, "    src_addrlen: %zu\n    dest_addrlen: %zu\n", fi->src_addrlen, fi->dest_addrlen);
	put_xattrs(o, fi->tx_attr, fi->rx_attr);
	if (fi->ep_attr != NULL)
		put_ep_attr(o, fi->ep_attr);
	if (fi->domain_attr != NULL)
		put_domain_attr(o, fi->domain_attr);
	if (fi->fabric_attr != NULL)
		put(o,
		    "    fi_fabric_attr:\n        name: %s\n        prov_name: %s\n"
		    "        prov_version: %u.%u\n        api_version: %u.%u\n",
		    fi->fabric_attr->name != NULL ? fi->fabric_attr->name : "(null)",
		    fi->fabric_attr->prov_name != NULL ? fi->fabric_attr->prov_name : "(null)",
		    FI_MAJOR(fi->fabric_attr->prov_version),
		    FI_MINOR(fi->fabric_attr->prov_version), FI_MAJOR(fi->fabric_attr->api_version),
		    FI_MINOR(fi->fabric_attr->api_version));
	put(o, "    nic: %s\n", fi->nic != NULL ? "(set)" : "(nil)");
}

API char *
fi_tostr_r(char *buf, size_t len, const void *data, enum fi_type datatype)
{
	struct out o = {buf, len, 0};

	if (buf == NULL || len == 0)
		return buf;
	buf[0] = '\0';
	if (data == NULL && datatype != FI_TYPE_VERSION)
		return buf;
	switch (datatype) {
	case FI_TYPE_INFO:
		for (const struct fi_info *fi = data; fi != NULL; fi = fi->next)
			put_info(&o, fi);
		break;
	case FI_TYPE_CAPS:
	case FI_TYPE_OP_FLAGS:
		put_flags(&o, *(const uint64_t *)data, caps);
		break;
	case FI_TYPE_MSG_ORDER:
		put_flags(&o, *(const uint64_t *)data, orders);
		break;
	case FI_TYPE_MR_MODE:
		put_flags(&o, (uint64_t) * (const unsigned int *)data, mr_modes);
		break;
	case FI_TYPE_EP_TYPE:
		ENUM(&o, *(const enum fi_ep_type *)data, ep_types);
		break;
	case FI_TYPE_THREADING:
		ENUM(&o, *(const enum fi_threading *)data, threadings);
		break;
	case FI_TYPE_PROGRESS:
		ENUM(&o, *(const enum fi_progress *)data, progresses);
		break;
	case FI_TYPE_AV_TYPE:
		ENUM(&o, *(const enum fi_av_type *)data, av_types);
		break;
	case FI_TYPE_LOG_LEVEL:
		ENUM(&o, *(const enum fi_log_level *)data, log_levels);
		break;
	case FI_TYPE_PROTOCOL:
		if (*(const uint32_t *)data == FI_PROTO_UNSPEC)
			put(&o, "FI_PROTO_UNSPEC");
		else
			put(&o, "%u", *(const uint32_t *)data);
		break;
	case FI_TYPE_VERSION:
		put(&o, "%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION);
		break;
	default:
		put(&o, "Unknown type");
		break;
	}
	return buf;
}

API char *
fi_tostr(const void *data, enum fi_type datatype)
{
	static _Thread_local char buf[8192];

	return fi_tostr_r(buf, sizeof(buf), data, datatype);
}
