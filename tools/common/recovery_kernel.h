/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
#ifndef WIREBOOK_TOOLS_RECOVERY_KERNEL_H
#define WIREBOOK_TOOLS_RECOVERY_KERNEL_H

#include <stddef.h>

#include "recovery/recovery.h"

/*
 * The kernel module's engine through DEVICE (NULL: /dev/wirebook), opened
 * read-write; its groups stay in recovery mode while the target is open.
 * 0, or -1 with err.
 */
int recovery_target_kernel(struct recovery_target *t, const char *device, char *err,
			   size_t errlen);

#endif /* WIREBOOK_TOOLS_RECOVERY_KERNEL_H */
