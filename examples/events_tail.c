/* events_tail [--device PATH | --book NAME] [--count N]: print the kernel
 * module's events (or, with --book, wirebookd's event stream, whatever its
 * source) as they come, in decode order, through the event API
 * (wirebook/events.h): batches, a release after each, the drop counter at
 * the end; wirebookd's stream ends when wirebookd does.
 * Links only libwirebook: cc events_tail.c $(pkg-config --cflags --libs wirebook) */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wirebook/events.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *kind_name(unsigned kind)
{
	static const char *const names[WB_EV_KIND_COUNT] = {
		[WB_EV_ADD] = "ADD", [WB_EV_EXECUTE] = "EXEC", [WB_EV_EXECUTE_AT_PRICE] = "EXECP",
		[WB_EV_REDUCE] = "REDUCE", [WB_EV_DELETE] = "DELETE", [WB_EV_REPLACE] = "REPLACE",
		[WB_EV_MODIFY] = "MODIFY", [WB_EV_TRADE] = "TRADE", [WB_EV_TRADE_BREAK] = "BREAK",
		[WB_EV_QUOTE] = "QUOTE", [WB_EV_STATUS] = "STATUS", [WB_EV_CLEAR] = "CLEAR",
		[WB_EV_SYMBOL] = "SYMBOL", [WB_EV_GAP] = "GAP", [WB_EV_NBBO] = "NBBO",
		[WB_EV_LULD] = "LULD",
	};

	return kind < WB_EV_KIND_COUNT && names[kind] ? names[kind] : "?";
}

int main(int argc, char **argv)
{
	const struct wb_event *batch[64];
	const char *device = NULL, *book = NULL;
	struct wb_event_counts c;
	struct wb_events *ev;
	uint64_t count = 0, seen = 0;
	int i, err;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			device = argv[++i];
		} else if (!strcmp(argv[i], "--book") && i + 1 < argc) {
			book = argv[++i];
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			count = strtoull(argv[++i], NULL, 10);
		} else {
			fprintf(strcmp(argv[i], "--help") ? stderr : stdout,
				"usage: events_tail [--device PATH | --book NAME] [--count N]\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	ev = book ? wb_events_open_shm(book, &err) : wb_events_open(device, &err);
	if (!ev) {
		fprintf(stderr, "events_tail: %s: %s\n", book ? book : device ? device : WB_DEVICE_PATH,
			wb_strerror(err));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop && (!count || seen < count)) {
		unsigned k, n = wb_events_peek(ev, batch, 64);

		if (!n) {
			fflush(stdout);
			if (wb_events_wait(ev, 100) == WB_ESTALE)
				break;	/* wirebookd ended, every event read */
			continue;
		}
		for (k = 0; k < n && (!count || seen < count); k++, seen++)
			printf("%" PRIu64 " %s %s i=%u recv %" PRIu64 "\n", batch[k]->seq,
			       kind_name(batch[k]->kind), wb_venue_name(batch[k]->venue),
			       batch[k]->instrument, batch[k]->recv_ts);
		wb_events_release(ev);	/* the slots go back to the module */
	}
	wb_events_counts(ev, &c);
	fprintf(stderr, "events_tail: %" PRIu64 " events, %" PRIu64 " dropped (%s)\n", seen, c.dropped,
		book ? "missed falling behind, or lost before the books" : "by the module: ring full");
	wb_events_close(ev);
	return 0;
}
