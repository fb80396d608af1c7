/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The tools' version (see version.h). */
#include "common/version.h"

#include <stdio.h>
#include <string.h>

/* The Makefile passes WB_VERSION; a build without it says so. */
#ifndef WB_VERSION
#define WB_VERSION "unknown (built without the Makefile)"
#endif

const char wb_version[] = WB_VERSION;

int tool_version_option(int argc, char **argv, const char *prog)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--version")) {
			printf("%s (wirebook) %s\n", prog, wb_version);
			return 1;
		}
	return 0;
}
