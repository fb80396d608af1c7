/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * One version for every tool: the release in scripts/wirebook.pc.in (the
 * Makefile's WB_VERSION, which also stamps the man pages and the
 * pkg-config file), printed by --version.
 */
#ifndef WIREBOOK_TOOLS_VERSION_H
#define WIREBOOK_TOOLS_VERSION_H

extern const char wb_version[];

/*
 * --version anywhere before "--": prints "PROG (wirebook) VERSION" on
 * stdout and returns 1 (the tool exits 0); else 0. Called first thing in
 * main, so it works whatever else the command line holds.
 */
int tool_version_option(int argc, char **argv, const char *prog);

#endif /* WIREBOOK_TOOLS_VERSION_H */
