/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * The CM through DPDK telemetry (doc/observability.md, doc/cm.md): the ids (the first 128, in
 * creation order, keyed 0, 1, ...) with their states, addresses and communication IDs
 * (/droce/cm_ids), and a device's CM counters
 * (/droce/cm_counters,DEVICE). The callbacks run on DPDK's telemetry thread under cm_svc.lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "cm_private.h"
#include "verbs_engine.h"

static const char *const state_names[] = {
	[CM_IDLE] = "idle", [CM_ADDR_QUERY] = "addr_query", [CM_ADDR_RESOLVED] = "addr_resolved",
	[CM_ROUTE_RESOLVED] = "route_resolved", [CM_ADDR_BOUND] = "bound",
	[CM_LISTEN] = "listen", [CM_CONNECT] = "connect", [CM_CONNECTED] = "connected",
	[CM_DISCONNECT] = "disconnected",
};

static const char *const ib_names[] = {
	[IB_IDLE] = "idle", [IB_REQ_SENT] = "req_sent", [IB_REQ_RCVD] = "req_rcvd",
	[IB_MRA_REQ_RCVD] = "mra_req_rcvd", [IB_REP_SENT] = "rep_sent",
	[IB_REP_RCVD] = "rep_rcvd", [IB_MRA_REP_RCVD] = "mra_rep_rcvd",
	[IB_ESTABLISHED] = "established", [IB_DREQ_SENT] = "dreq_sent",
	[IB_DREQ_RCVD] = "dreq_rcvd", [IB_TIMEWAIT] = "timewait",
	[IB_SIDR_REQ_SENT] = "sidr_req_sent", [IB_SIDR_REQ_RCVD] = "sidr_req_rcvd",
};

static void addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "-";
	uint16_t port = 0;

	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof(ip));
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	}
	snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

static void put_id(struct rte_tel_data *d, const struct cm_id *id, unsigned int n)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	char key[16], a[64];

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_string(c, "state", state_names[id->state]);
	rte_tel_data_add_dict_string(c, "ib_state", ib_names[id->ib]);
	rte_tel_data_add_dict_string(c, "port_space", id->pub.ps == RDMA_PS_UDP ? "UDP" :
				     id->pub.ps == RDMA_PS_IB ? "IB" :
				     id->pub.ps == RDMA_PS_IPOIB ? "IPOIB" : "TCP");
	rte_tel_data_add_dict_string(c, "device", id->agent != NULL ?
				     droce_get_device_name(id->agent->dev) : "-");
	addr_str(&id->pub.route.addr.src_addr, a, sizeof(a));
	rte_tel_data_add_dict_string(c, "src", a);
	addr_str(&id->pub.route.addr.dst_addr, a, sizeof(a));
	rte_tel_data_add_dict_string(c, "dst", a);
	rte_tel_data_add_dict_u64(c, "comm_id", id->local_id);
	rte_tel_data_add_dict_u64(c, "remote_comm_id", id->remote_id);
	rte_tel_data_add_dict_u64(c, "qpn", id->pub.qp != NULL ? id->pub.qp->qp_num : 0);
	rte_tel_data_add_dict_int(c, "destroyed", id->chan == NULL);
	snprintf(key, sizeof(key), "%u", n);
	rte_tel_data_add_dict_container(d, key, c, 0);
}

static int tel_ids(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct cm_id *id;
	unsigned int n = 0;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&cm_svc.lock);
	if (cm_svc.running)
		TAILQ_FOREACH(id, &cm_svc.ids, next)
			if (n < 128)	/* the reply stays under DPDK's 16 KiB */
				put_id(d, id, n++);
	pthread_mutex_unlock(&cm_svc.lock);
	return 0;
}

static void put_array(struct rte_tel_data *d, const char *name, const uint64_t *v, unsigned int n,
		      const char *(*label)(unsigned int))
{
	char key[64];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (label(i) == NULL)
			continue;
		snprintf(key, sizeof(key), "%s_%s", name, label(i));
		rte_tel_data_add_dict_u64(d, key, v[i]);
	}
}

static const char *msg_label(unsigned int i)
{
	return droce_cm_msg_name((enum droce_cm_msg)i);
}

static const char *err_label(unsigned int i)
{
	return i == 0 ? NULL : droce_mad_err_name((enum droce_mad_err)i);
}

static int tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_device *dev = params != NULL ? verbs_device_find(params) : NULL;
	struct droce_cm_counters c;
	const struct cm_agent *a;
	const uint64_t *v = (const uint64_t *)&c;
	unsigned int i;

	RTE_SET_USED(cmd);
	if (dev == NULL)
		return -EINVAL;
	pthread_mutex_lock(&cm_svc.lock);
	a = cm_svc.running ? cm_svc.agent[verbs_device_index(dev)] : NULL;
	if (a != NULL)
		c = a->cnt;
	else
		memset(&c, 0, sizeof(c));
	pthread_mutex_unlock(&cm_svc.lock);
	rte_tel_data_start_dict(d);
	for (i = 0; droce_cm_counter_name(i) != NULL; i++)
		rte_tel_data_add_dict_u64(d, droce_cm_counter_name(i), v[i]);
	put_array(d, "rx", c.rx_msg, DROCE_CM_MSG_NUM, msg_label);
	put_array(d, "tx", c.tx_msg, DROCE_CM_MSG_NUM, msg_label);
	put_array(d, "rx_mad_err", c.rx_mad_err, DROCE_CM_MAD_ERR_NUM, err_label);
	return 0;
}

RTE_INIT(cm_telemetry_register)
{
	rte_telemetry_register_cmd("/droce/cm_ids", tel_ids,
		"Returns the CM's ids: state, IB CM state, addresses, comm IDs. No parameters");
	rte_telemetry_register_cmd("/droce/cm_counters", tel_counters,
		"Returns a droce device's CM counters. Parameter: device");
}
