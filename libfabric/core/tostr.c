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

static void
put_info(struct out *o, const struct fi_info *fi)
{
	put(o, "fi_info:\n    caps: [ ");
	put_flags(o, fi->caps, caps);
	put(o, " ]\n    mode: [ 0x%" PRIx64 " ]\n", fi->mode);
	if (fi->tx_attr != NULL) {
		put(o, "    fi_tx_attr:\n        inject_size: %zu\n        size: %zu\n",
		    fi->tx_attr->inject_size, fi->tx_attr->size);
		put(o, "        msg_order: [ ");
		put_flags(o, fi->tx_attr->msg_order, orders);
		put(o, " ]\n");
	}
	if (fi->rx_attr != NULL)
		put(o, "    fi_rx_attr:\n        size: %zu\n", fi->rx_attr->size);
	if (fi->ep_attr != NULL) {
		put(o, "    fi_ep_attr:\n        type: ");
		ENUM(o, fi->ep_attr->type, ep_types);
		put(o, "\n        max_msg_size: %zu\n        mem_tag_format: 0x%016" PRIx64 "\n",
		    fi->ep_attr->max_msg_size, fi->ep_attr->mem_tag_format);
	}
	if (fi->domain_attr != NULL) {
		put(o, "    fi_domain_attr:\n        name: %s\n        threading: ",
		    fi->domain_attr->name != NULL ? fi->domain_attr->name : "(null)");
		ENUM(o, fi->domain_attr->threading, threadings);
		put(o, "\n        control_progress: ");
		ENUM(o, fi->domain_attr->control_progress, progresses);
		put(o, "\n        data_progress: ");
		ENUM(o, fi->domain_attr->data_progress, progresses);
		put(o, "\n        av_type: ");
		ENUM(o, fi->domain_attr->av_type, av_types);
		put(o, "\n        mr_mode: [ ");
		put_flags(o, (uint64_t)(unsigned int)fi->domain_attr->mr_mode, mr_modes);
		put(o, " ]\n");
	}
	if (fi->fabric_attr != NULL)
		put(o,
		    "    fi_fabric_attr:\n        name: %s\n        prov_name: %s\n"
		    "        prov_version: %u.%u\n        api_version: %u.%u\n",
		    fi->fabric_attr->name != NULL ? fi->fabric_attr->name : "(null)",
		    fi->fabric_attr->prov_name != NULL ? fi->fabric_attr->prov_name : "(null)",
		    FI_MAJOR(fi->fabric_attr->prov_version),
		    FI_MINOR(fi->fabric_attr->prov_version), FI_MAJOR(fi->fabric_attr->api_version),
		    FI_MINOR(fi->fabric_attr->api_version));
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
