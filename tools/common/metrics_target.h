/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd --metrics-file FILE: where its metrics endpoint listens, as a
 * Prometheus file-based service discovery target file (file_sd_configs),
 * so instances whose metrics take any free port (--metrics ADDR:0) never
 * clash and are still found: one glob, /run/wirebook/STAR/metrics.json,
 * finds every instance the unit runs.
 */
#ifndef WIREBOOK_TOOLS_METRICS_TARGET_H
#define WIREBOOK_TOOLS_METRICS_TARGET_H

#include <stddef.h>

/*
 * Write [{"targets": ["ADDR:PORT"], "labels": {"book": BOOK}}] to path,
 * whole or not at all (a temporary file renamed over it). 0, or -1 with err.
 */
int metrics_target_write(const char *path, const char *addr_port, const char *book, char *err,
			 size_t errlen);

#endif /* WIREBOOK_TOOLS_METRICS_TARGET_H */
