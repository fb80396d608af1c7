/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * vm-read: the VM test's ring reader. Prints every event of the module's
 * rings in decode order as wb_event_format lines (the wb-dump format), and
 * exits after --idle-ms without a new event, reporting on stderr:
 *   vm-read: delivered N dropped D published P
 * With --hold it keeps the rings mapped and drains them silently until
 * SIGTERM/SIGINT (the rmmod-under-traffic scenario).
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/event_text.h"
#include "common/kernel_source.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "idle-ms", required_argument, NULL, 'i' },
		{ "hold", no_argument, NULL, 'H' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wb_kernel_source ks;
	const char *device = NULL;
	char err[256], line[WB_EVENT_TEXT_MAX];
	uint64_t idle_ms = 2000, last;
	int opt, hold = 0;

	while ((opt = getopt_long(argc, argv, "i:Hd:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			idle_ms = strtoull(optarg, NULL, 10);
			break;
		case 'H':
			hold = 1;
			break;
		case 'd':
			device = optarg;
			break;
		case 'h':
			printf("usage: vm-read [--idle-ms N | --hold] [--device PATH]\n");
			return 0;
		default:
			return 2;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (wb_kernel_source_open(&ks, device, err, sizeof(err))) {
		fprintf(stderr, "vm-read: %s\n", err);
		return 1;
	}
	if (hold)
		fprintf(stderr, "vm-read: holding %u rings\n", ks.ring_count);
	last = now_ms();
	while (!stop) {
		const struct wb_event *ev = wb_kernel_source_next(&ks);

		if (ev) {
			if (!hold) {
				wb_event_format(ev, line, sizeof(line));
				puts(line);
			}
			last = now_ms();
			continue;
		}
		if (!hold && now_ms() - last >= idle_ms)
			break;
		wb_kernel_source_wait(&ks, 50);
	}
	fflush(stdout);
	fprintf(stderr, "vm-read: delivered %" PRIu64 " dropped %" PRIu64 " published %" PRIu64 "\n",
		ks.delivered, wb_kernel_source_dropped(&ks), wb_kernel_source_published(&ks));
	wb_kernel_source_close(&ks);
	return 0;
}
