/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery services table (recovery_services.h): one row per service.
 * Row order is the order the services are listed in (recovery.conf's
 * errors, wb-recoveryd --help).
 */
#include "recovery/recovery_services.h"

#include <string.h>

#include "recovery/recovery_internal.h"
#include "recovery/recovery_xdp.h"

const struct recovery_service recovery_services[] = {
	{
		/* MoldUDP64 re-request over UDP (ITCH, UQDF) */
		.name = "mold",
		.protocols = { "itch", "uqdf" },
		.needs_session = true,
		.gap_fill = &recovery_mold_ops,
	},
	{
		/* Cboe PITCH Gap Request Proxy (TCP) + gap-response UDP */
		.name = "grp",
		.protocols = { "pitch" },
		.user_max = 4,
		.takes_gap = true,
		.conf_check = recovery_grp_conf_check,
		.gap_fill = &recovery_grp_ops,
	},
	{
		/* NYSE XDP Request Server (TCP) + retransmission UDP, refresh */
		.name = "xdp",
		.protocols = { "xdp" },
		.conf_key = xdp_conf_key,
		.conf_check = recovery_xdp_conf_check,
		.gap_fill = &recovery_xdp_ops,
	},
	{
		/* Nasdaq GLIMPSE 5.0 snapshot over SoupBinTCP (TCP) */
		.name = "glimpse",
		.protocols = { "itch" },
		.user_max = 6,
		.user_note = "SoupBinTCP",
		.snapshot = &recovery_soup_snapshot_ops,
	},
	{
		/* UTP Snap-Shot (UQDF) over SoupBinTCP (TCP) */
		.name = "utpsnap",
		.protocols = { "uqdf" },
		.user_max = 6,
		.user_note = "SoupBinTCP",
		.snapshot = &recovery_soup_snapshot_ops,
	},
	{
		/* Cboe PITCH Spin server (TCP), one unit a line */
		.name = "spin",
		.protocols = { "pitch" },
		.user_max = 4,
		.takes_unit = true,
		.conf_check = recovery_spin_conf_check,
		.snapshot = &recovery_spin_ops,
	},
};

const size_t recovery_service_count = sizeof(recovery_services) / sizeof(recovery_services[0]);

const struct recovery_service *recovery_service_named(const char *name)
{
	for (size_t i = 0; i < recovery_service_count; i++)
		if (!strcmp(recovery_services[i].name, name))
			return &recovery_services[i];
	return NULL;
}

bool recovery_service_serves(const struct recovery_service *sv, int protocol)
{
	const char *name = feed_protocol_name(protocol);

	for (int i = 0; name && i < RECOVERY_SERVICE_PROTOCOLS && sv->protocols[i]; i++)
		if (!strcmp(sv->protocols[i], name))
			return true;
	return false;
}

const struct recovery_service *recovery_gap_fill_of(int protocol)
{
	for (size_t i = 0; i < recovery_service_count; i++)
		if (recovery_services[i].gap_fill &&
		    recovery_service_serves(&recovery_services[i], protocol))
			return &recovery_services[i];
	return NULL;
}

const char *recovery_service_names(char *buf, size_t n, bool (*keep)(const struct recovery_service *),
				   bool and_last)
{
	size_t len = 0, kept = 0, total = 0;

	for (size_t i = 0; i < recovery_service_count; i++)
		total += !keep || keep(&recovery_services[i]);
	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < recovery_service_count && len < n; i++) {
		const char *sep;

		if (keep && !keep(&recovery_services[i]))
			continue;
		sep = !kept++ ? "" : and_last && kept == total ? " and " : ", ";
		len += (size_t)snprintf(buf + len, n - len, "%s%s", sep, recovery_services[i].name);
	}
	return buf;
}
