/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Config files that hold command-line options, one per line, for daemons
 * run by a service manager (wirebookd --config FILE):
 *
 *   # comment                    blank lines and comments are skipped
 *   pcap /var/lib/wirebook/day.pcap
 *   subscribe = AAPL,MSFT        "name value" or "name = value"
 *   busy-poll                    options without a value stand alone
 *   shm ${WIREBOOK_INSTANCE}     ${NAME}: the environment's NAME (unset: an error)
 *
 * A name is a long option without its dashes. The file becomes the
 * arguments "--name value" placed before the command line's, so options
 * given on the command line win. Unknown names, missing or extra values
 * and nested --config are refused with FILE:LINE.
 */
#ifndef WIREBOOK_TOOLS_CONFIG_H
#define WIREBOOK_TOOLS_CONFIG_H

#include <getopt.h>
#include <stddef.h>

struct config_args {
	int argc;
	char **argv;		/* argv[0], the file's options, then the command line's */
	char **origin;		/* per argv entry: "FILE:LINE", or NULL (command line) */
};

/*
 * Build the arguments for getopt_long from argv, expanding the first
 * "--config FILE" (or --config=FILE) into FILE's options; without one,
 * argv as it is. Returns 0, or -1 with a message in err (exit 2: bad usage,
 * including a config file that cannot be read).
 */
int config_args_build(struct config_args *out, int argc, char **argv,
		      const struct option *opts, char *err, size_t errlen);
void config_args_free(struct config_args *a);

/*
 * Options of which one is given (a daemon's source: "pcap", "iface", ...,
 * NULL-terminated): when the command line gives any of them, the config
 * file's are dropped, so the command line's choice replaces the file's as
 * it does for any other option (rather than the two adding up).
 */
void config_args_override_one_of(struct config_args *a, const struct option *opts,
				 const char *const *one_of);

#endif /* WIREBOOK_TOOLS_CONFIG_H */
