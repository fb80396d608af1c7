/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-kread: print the kernel module's events as text, one line per event
 * in wb-dump's format, merged across the per-CPU rings in decode order.
 * The quickest way to see what the module decodes on a live interface.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/event_text.h"
#include "wirebook/events.h"
#include "common/options.h"
#include "common/version.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wb-kread [--device PATH] [--idle-ms N] [--count N] [--quiet]\n"
		"\n"
		"Print the events the wirebook kernel module writes to its rings, one line\n"
		"per event in wb-dump's format, in the order the module decoded them.\n"
		"Set the feed map and subscriptions first with wb-subscribe.\n"
		"\n"
		"  -d, --device PATH   the module's device (default %s)\n"
		"  -i, --idle-ms N     exit after N ms without an event (default: run until\n"
		"                      SIGINT/SIGTERM)\n"
		"  -n, --count N       exit after N events\n"
		"  -q, --quiet         print no events, only the totals at exit\n"
		"  -h, --help\n"
		"      --version\n"
		"\n"
		"At exit prints to stderr: delivered, dropped (rings full) and published.\n"
		"Only one reader may consume the rings at a time: a running\n"
		"'wirebookd --kernel' and wb-kread would each see part of the events.\n"
		"Exit status: 0 success, 1 the device could not be opened, 2 bad usage.\n",
		WB_DEVICE_PATH);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "idle-ms", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *device = NULL;
	uint64_t idle_ms = 0, count = 0, last, delivered = 0;
	struct wb_events *evs;
	struct wb_event_counts cnt;
	int err;
	char line[512];
	int quiet = 0, c;

	if (tool_version_option(argc, argv, "wb-kread"))
		return 0;
	while ((c = getopt_long(argc, argv, "d:i:n:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': device = optarg; break;
		case 'i':
			if (opt_u64("wb-kread", "--idle-ms", optarg, 0, 86400000, &idle_ms))
				return 2;
			break;
		case 'n':
			if (opt_u64("wb-kread", "--count", optarg, 0, UINT64_MAX, &count))
				return 2;
			break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "wb-kread: unexpected argument '%s' (it takes options only)\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	evs = wb_events_open(device, &err);
	if (!evs) {
		fprintf(stderr, "wb-kread: %s: %s\n", device ? device : WB_DEVICE_PATH, wb_strerror(err));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	last = mono_ms();
	/* The event API's zero-copy batches: print, then hand the slots back. */
	while (!stop && (!count || delivered < count)) {
		const struct wb_event *batch[64];
		uint64_t want = count ? count - delivered : 64;
		unsigned i, n = wb_events_peek(evs, batch, want < 64 ? (unsigned)want : 64);

		if (n) {
			for (i = 0; i < n && !quiet; i++) {
				wb_event_format(batch[i], line, sizeof(line));
				puts(line);
			}
			wb_events_release(evs);
			delivered += n;
			last = mono_ms();
			continue;
		}
		fflush(stdout);
		if (idle_ms && mono_ms() - last >= idle_ms)
			break;
		wb_events_wait(evs, 50);
	}
	fflush(stdout);
	wb_events_counts(evs, &cnt);
	fprintf(stderr, "wb-kread: delivered %" PRIu64 " dropped %" PRIu64 " published %" PRIu64 "\n",
		cnt.delivered, cnt.dropped, cnt.published);
	wb_events_close(evs);
	return 0;
}
