/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd: the book builder daemon. A source (pcap file, Nasdaq
 * BinaryFILE, live interface) is decoded by the feed engine into an event
 * ring; builder thread 1 applies the events to the venue books, and the
 * Super-Book is kept and published in shared memory for libwirebook
 * readers either by thread 1 itself, packet by packet (--path rtc: run to
 * completion, one thread on the path) or by thread 2 (--path pipeline:
 * more throughput, two cores). --path auto (the default) takes rtc when
 * the process is given fewer than 3 cores (or --cpus names one).
 *
 * Threads: by default the source is decoded on thread 1 itself (decode a
 * few packets, apply their events, repeat): on small machines three busy
 * threads would fight for two cores, and decoding and book building are
 * each cheap enough that one core does both at line rate of one feed.
 * --source-thread moves decoding to its own thread (a third core); file
 * sources then wait for room in the ring rather than drop.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book/book_shm.h"
#include "book/builder.h"
#include "book/order_detail.h"
#include "book/lockstep.h"
#include "book/futex.h"
#include "book/latency_log.h"
#include "book/sipview.h"
#include "common/config.h"
#include "common/control.h"
#include "common/feeds_conf.h"
#include "input/kernel_source.h"
#include "common/metrics.h"
#include "common/metrics_target.h"
#include "feedtext/address.h"
#include "common/options.h"
#include "recovery/recovery.h"
#include "common/recovery_kernel.h"
#include "recovery/recovery_table.h"
#include "common/shm_mount.h"
#include "common/version.h"
#include "input/source.h"
#include "net/nats_options.h"
#include "net/nats_publish.h"
#include "net/nats_source.h"
#include "net/nats_stats.h"
#include "feed/feed.h"
#include "wirebook/barrier.h"
#include "shm/shm_layout.h"
#include "wirebook/ring.h"

#define RING_SLOTS (1u << 16)
#define PUMP_BUDGET 32u
/* Run to completion: one packet read, decoded, built and published before
 * the next is read. */
#define RTC_PUMP_BUDGET 1u

/* The main loop's period: stats, heartbeat, control once the source ended. */
#define MAIN_TICK_MS 20
/* With a source thread, thread 1 checks the ring this many times before it
 * sleeps until the source thread publishes (a few tens of microseconds). */
#define WATCH_SPINS 4096u
/* A source thread reading a file waits until this much of the ring is
 * free, so a fast file never overruns the books into drops. */
#define FILE_RING_HEADROOM (RING_SLOTS / 4)

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

struct wbd {
	struct feed_engine *engine;
	int rt_priority;		/* --rt-priority: the path's threads' SCHED_FIFO level */
	struct source src;
	struct wb_ring_producer prod;
	void *ring_mem;
	struct builder *builder;
	struct latency_log *latency;
	int is_file;
	int source_thread;
	unsigned pump_budget;	/* packets per pump: RTC_PUMP_BUDGET or PUMP_BUDGET */
	struct builder_warm_report warm;	/* what was warmed before the start */
	int source_status;	/* last pump result (source thread) */
	int source_finished;
	unsigned watch_idle;	/* thread 1's empty looks at the source thread's ring */
	uint64_t watch_head;	/* the ring's head at the last look */
	int control_fd;		/* --control: listening socket, or -1 */
	unsigned control_tick;
	struct wb_control_engine control;
	struct wb_control_orders control_orders;	/* order detail requests, then control */
	int kernel;
	struct wb_control kctl;		/* --kernel with --metrics: the module's stats */
	struct wb_ioc_line_stats metrics_lines[FEED_MAX_LINES];
	struct recovery_client *rec;	/* --recovery, or NULL */
	pthread_mutex_t rec_lock;	/* the recovery client's poll vs. the stats */
	pthread_t rec_thread;		/* --kernel --recovery */
	int rec_thread_started;
	int rec_eof;			/* the file ended; fills may still come */
	uint64_t rec_eof_deadline;
	uint32_t rec_venues;		/* published as the book's recovering_venues */
	struct recovery_table *rec_table; /* --recovery: the book's per-stream table */
	struct nats_publisher *pub;	/* --publish, or NULL */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: wirebookd SOURCE [options]\n"
"Build order books from an exchange feed and publish them in shared memory.\n"
"\n"
"Sources (one):\n"
"  --pcap FILE          a capture file, as fast as possible\n"
"    --speed X          ... at the recorded pace times X instead (recv_ts = now;\n"
"                       X above 0, at most 1000000; exch_ts stays on the capture's day)\n"
"    --skip-idle SECS   ... replaying a stretch of capture time without a frame\n"
"                       longer than SECS as SECS (above 0, at most 86400): a capture\n"
"                       that idles for hours (heartbeats before the open)\n"
"  --itch-file FILE     Nasdaq BinaryFILE, plain or gzip (decoded as the itch nasdaq line;\n"
"                       recv_ts: the exchange time of each packet's last message)\n"
"    --date YYYY-MM-DD  ... of that trading day (default: the date of Nasdaq's file\n"
"                       names, MMDDYYYY; else no day: exch_ts is the time since\n"
"                       midnight, with a warning)\n"
"  --iface IF           live capture on an AF_PACKET ring (joins the feed groups)\n"
"    --busy-poll        spin on the packet ring instead of sleeping in poll(), and\n"
"                       never let the builder threads sleep when idle (lowest\n"
"                       latency; burns their cores; default: spin a while, then sleep\n"
"                       in poll() on the socket, the Super-Book's thread in a futex)\n"
"  --kernel[=DEVICE]    the wirebook kernel module's event rings (default /dev/wirebook),\n"
"                       applied in place, without a copy;\n"
"                       its feed map and symbols are set with wb-subscribe\n"
"  --source nats://HOST:PORT[/STREAM]\n"
"                       the normalized events another wirebookd publishes (--publish)\n"
"                       from NATS JetStream: the same books, from the stream's start,\n"
"                       then live (no feed map needed); STREAM: that stream, else the\n"
"                       one holding wirebook.INSTANCE.events.>; with --exit-at-eof it\n"
"                       ends at the publisher's end of source\n"
"\n"
"Options:\n"
"  --config FILE        read options from FILE, one per line without the dashes\n"
"                       ('subscribe AAPL,MSFT'); the command line's win\n"
"  --feeds FILE         feed map (default: ./feeds.conf, then the installed one:\n"
"                       PREFIX/etc/wirebook/feeds.conf, /etc/wirebook/feeds.conf,\n"
"                       PREFIX/share/wirebook/feeds.conf[.sample]; --itch-file\n"
"                       needs none)\n"
"  --proto PROTOCOL[:VENUE]\n"
"                       decode every UDP payload the feed map does not name as\n"
"                       PROTOCOL (default venue: its first), whatever its address:\n"
"                       anonymized captures (see wb-dump --help for the protocols)\n"
"  --subscribe LIST     symbols to build, comma separated, or '*' for all (default '*')\n"
"  --control SOCKET     serve wb-subscribe --daemon SOCKET (feeds, symbols, stats;\n"
"                       with --order-detail: detail on/off, track, queue positions)\n"
"  --order-detail all|none|SYM,SYM...\n"
"                       publish the orders at each price and tracked queue\n"
"                       positions (wirebook/orders.h) for every symbol, none at\n"
"                       start (readers ask: wb_orders_detail), or a watch list\n"
"  --lockstep detail|all\n"
"                       replay --pcap/--itch-file stepped with one strategy (the\n"
"                       first reader of the event stream): after each packet with\n"
"                       an event of a symbol carrying order detail (all: every\n"
"                       packet), wait until it has read the stream there; its\n"
"                       virtual orders take effect before the next packet (see\n"
"                       docs/simulate.md); two runs give the same fills\n"
"    --lockstep-delay NS, --lockstep-jitter NS, --lockstep-seed N\n"
"                       its requests reach the queue NS (plus a uniform draw in\n"
"                       [0, jitter) from the seed) of receive time later\n"
"    --lockstep-delay-file FILE\n"
"                       or each request a delay drawn (with the seed) from FILE,\n"
"                       one in ns a line (e.g. measured wire-to-order latencies;\n"
"                       at most 1000000; not with --lockstep-delay or -jitter)\n"
"  --metrics ADDR:PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                       (e.g. 127.0.0.1:9464; port 0: any free port, printed)\n"
"  --metrics-file FILE  write where --metrics listens to FILE, a Prometheus\n"
"                       file_sd target list (instances on port 0 are found by\n"
"                       a glob of their files); removed at exit\n"
"  --shm NAME           shared-memory book name (default %s: /dev/shm/%s)\n"
"  --force              take over NAME even if another wirebookd still owns it\n"
"  --cpus A,B           cores for thread 1 (venue books) and 2 (Super-Book), two\n"
"                       different cpus this process may run on; one cpu: both there\n"
"                       (--path rtc: thread 1, the only one on the path, on A)\n"
"  --no-pin             do not pin the threads\n"
"  --path rtc|pipeline|auto\n"
"                       rtc: run to completion, one thread reads a packet, decodes\n"
"                       it, builds the venue books and publishes the Super-Book\n"
"                       before the next (lowest latency on few cores); pipeline:\n"
"                       the Super-Book on a second thread (throughput); auto\n"
"                       (default): rtc when given fewer than 3 cpus (affinity) or\n"
"                       --cpus names one, else pipeline; the startup line says which\n"
"  --rt-priority N      the path's threads run SCHED_FIFO at N (1-99): a packet's\n"
"                       wake-up preempts other work on their core instead of\n"
"                       waiting for its time slice (needs CAP_SYS_NICE; refused:\n"
"                       said in the stats, the threads run on as before)\n"
"  --numa-node N        NUMA node for threads and memory (0-1023, an existing node;\n"
"                       default: the NIC's, or any)\n"
"  --source-thread      decode on a separate thread (default: on thread 1)\n"
"  --stats SECONDS      print per-line and book stats every SECONDS (0.01-86400)\n"
"  --latency-dir DIR    write per-feed latency samples (latency_<feed>.bin) there;\n"
"                       with --pcap, only meaningful with --speed (else the receive\n"
"                       times are the capture's, not now)\n"
"  --expected-orders N  size the order tables for N live orders (1-268435456,\n"
"                       default 1Mi)\n"
"  --exit-at-eof        exit when a file source ends (default: keep serving the books)\n"
"  --events SLOTS       publish every event the books apply in a ring of SLOTS\n"
"                       events in /dev/shm/NAME.events, for any number of readers\n"
"                       (wb_events_open_shm, python3 -c 'wirebook.events()'); one that\n"
"                       falls more than SLOTS behind loses events, counted; a power\n"
"                       of two from 1024 to 268435456 (64 bytes each), default\n"
"                       262144 (16 MiB); 0: no stream (refused with --publish)\n"
"  --recovery FILE      fill gaps from the recovery services FILE names per stream\n"
"                       (recovery.conf: VENUE SERVICE HOST:PORT [channel=N]\n"
"                       [timeout=MS] [retries=N] ...; SERVICE mold: MoldUDP64\n"
"                       re-request, grp: Cboe Gap Request Proxy, xdp: NYSE XDP\n"
"                       Request Server, glimpse: Nasdaq GLIMPSE snapshot (ITCH),\n"
"                       utpsnap: UTP Snap-Shot (UQDF), spin: a Cboe PITCH unit's\n"
"                       Spin server (unit=N); snapshots for late joins and holes\n"
"                       too big or too old to fill). A file source\n"
"                       waits for its fills; at its end, at most 10 s for the last\n"
"                       ones. With --kernel the module's streams are recovered (the\n"
"                       module's feed map). The counts per stream: --stats,\n"
"                       wb-subscribe --daemon SOCKET recovery, the metrics, and\n"
"                       readers (wb_recovery_streams, wb_symbol_recovering)\n"
"  --publish nats://HOST:PORT\n"
"                       also publish the normalized events, batched per line, to NATS\n"
"                       JetStream on wirebook.INSTANCE.events.VENUE, into the day's\n"
"                       stream (made when missing, file storage), from an off-path\n"
"                       thread that never holds the books up; what NATS does not take\n"
"                       waits (--publish-backlog) and is sent when it does; it\n"
"                       reads the event stream (--events)\n"
"    --publish-backlog N  events kept while NATS is slow or away: the least\n"
"                       --events (raised to it; power of two, 1024-268435456,\n"
"                       default 1048576: 64 MiB); beyond, the oldest are lost,\n"
"                       counted and said on stderr (the books are unaffected)\n"
"    --nats-stream NAME the stream to publish to (default WIREBOOK_<INSTANCE>_<YYYYMMDD>\n"
"                       of the first event's day, UTC)\n"
"    --nats-snapshot-events N  also store a book snapshot after N events (default\n"
"                       0: by time only, --nats-snapshot)\n"
"    --publish-books N  also publish each symbol's top N levels (1-10) of the\n"
"                       Super-Book and its NBBO, as JSON, on core NATS subject\n"
"                       wirebook.INSTANCE.book.TICKER when they changed, at most\n"
"    --publish-books-interval MS  every MS per symbol (default 100)\n"
"  NATS options (--publish and --source):\n"
"%s"
"    --nats-snapshot SECONDS  --publish: store a book snapshot in JetStream at\n"
"                       most this often (default 60; 0: none); --source: start from\n"
"                       the latest one and the stream after it (0: replay the\n"
"                       stream from its start)\n"
"  --help\n"
"  --version\n"
"\n"
"\n"
"SIGINT/SIGTERM, or SIGPIPE (stdout closed): stop, print the final stats, retire\n"
"the book (readers see it retired and follow the next run). Exit status: 0; 1 when\n"
"the source failed, the book could not be made, or (--exit-at-eof) no frame went to\n"
"the feed map; 2 bad usage (every option value is checked: the message names the\n"
"option and range; a bad feed map or config line: the file and line; a control\n"
"socket another wirebookd answers on; a capture given to --itch-file).\n",
		WB_SHM_DEFAULT_NAME, WB_SHM_DEFAULT_NAME, nats_client_options_help);
}

/* The sources: one is given; the command line's replaces the config file's. */
static const char *const sources_one_of[] = { "pcap", "itch-file", "iface", "kernel", "source", NULL };

static void *zalloc(size_t n)
{
	return calloc(1, n);
}

static int nic_numa_node(const char *iface)
{
	char path[256];
	FILE *f;
	int node = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", iface);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

static uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Subscribe a comma-separated list; every subscribed ticker is findable
 * by readers before its first message. The one place subscriptions are
 * made, for the control socket to call too. */
static int wbd_subscribe(struct wbd *d, const char *list)
{
	char buf[4096], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t len = strlen(tok);
		char padded[8];
		int id;

		id = feed_subscribe(d->engine, tok, len);
		if (id < 0) {
			fprintf(stderr, "wirebookd: cannot subscribe '%s' (error %d): %s\n", tok, -id,
				len > 8 ? "tickers are at most 8 characters" : "bad ticker or table full");
			return -1;
		}
		if (strcmp(tok, "*") == 0)
			continue;
		memset(padded, ' ', sizeof(padded));
		memcpy(padded, tok, len);
		superbook_add_symbol(builder_superbook(d->builder), (uint16_t)id, padded);
	}
	return 0;
}

/* Serve control requests (wb-subscribe --daemon) from the thread that
 * drives the engine, so they never race the packet path; every 1024
 * pumps keeps the accept() syscall off the per-packet cost. */
static void wbd_serve_control(struct wbd *d)
{
	if (d->control_fd >= 0 && (++d->control_tick & 1023) == 0)
		wb_control_serve(d->control_fd, wb_control_orders_handler, &d->control_orders);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void);

/*
 * The source's pump with gap recovery around it: replies in, requests out,
 * on the thread that runs the engine. A file source, which can wait,
 * waits while the streams hold back many packets, and at its end until
 * the last fills came (at most REC_EOF_WAIT_NS); a live one never waits.
 */
#define REC_FILE_MAX_HELD 1024
#define REC_EOF_WAIT_NS (10 * 1000000000ull)

/* A file source waiting for fills naps, as the --kernel recovery thread
 * does, instead of polling a silent service in a loop that burns a core. */
static int rec_file_wait(void)
{
	struct timespec nap = { 0, 100000 };

	nanosleep(&nap, NULL);
	return SOURCE_WAITED;
}

static int wbd_pump(struct wbd *d)
{
	uint64_t now;
	uint32_t held, venues;
	int rc, busy;

	if (!d->rec)
		return source_pump(&d->src, d->engine, &d->prod, d->pump_budget);
	now = mono_ns();
	/* The stats (main thread) read the client too: never while it moves. */
	pthread_mutex_lock(&d->rec_lock);
	recovery_client_poll(d->rec, now, d->is_file ? 0 : wall_ns(), &d->prod);
	busy = recovery_client_busy(d->rec, &held);
	venues = recovery_client_recovering_venues(d->rec);
	pthread_mutex_unlock(&d->rec_lock);
	if (venues != d->rec_venues) {
		/* Readers see the book as recovering (wb_health) while a venue waits. */
		d->rec_venues = venues;
		superbook_set_recovering(builder_superbook(d->builder), d->rec_venues);
	}
	recovery_table_update(d->rec_table, d->engine, now, wall_ns());
	if (d->rec_eof) {
		if (busy && now < d->rec_eof_deadline)
			return rec_file_wait();
		feed_engine_flush(d->engine, &d->prod);	/* what is still missing is a GAP */
		recovery_table_publish_now(d->rec_table, d->engine, now, wall_ns()); /* the final counts */
		return SOURCE_EOF;
	}
	if (d->is_file && held > REC_FILE_MAX_HELD)
		return rec_file_wait();
	rc = source_pump(&d->src, d->engine, &d->prod, d->pump_budget);
	if (rc == SOURCE_EOF) {
		d->rec_eof = 1;
		d->rec_eof_deadline = now + REC_EOF_WAIT_NS;
		rc = SOURCE_MORE;
	}
	return rc;
}

/*
 * --kernel --recovery: the module decodes, so the client has a thread of
 * its own, off the builder's: it reads which of the module's streams wait
 * for what, asks their services, and hands the replies to the module,
 * whose rings then carry the stream's events in sequence. It naps 100 us
 * while a stream recovers, 1 ms otherwise.
 */
static void *recovery_thread_main(void *arg)
{
	struct wbd *d = arg;

	while (!g_stop) {
		struct timespec nap = { 0, 1000000 };
		uint32_t venues;

		pthread_mutex_lock(&d->rec_lock);
		recovery_client_poll(d->rec, mono_ns(), wall_ns(), NULL);
		if (recovery_client_busy(d->rec, NULL))
			nap.tv_nsec = 100000;
		venues = recovery_client_recovering_venues(d->rec);
		pthread_mutex_unlock(&d->rec_lock);
		if (venues != d->rec_venues) {
			/* Readers see the book as recovering (wb_health) while a venue waits. */
			d->rec_venues = venues;
			superbook_set_recovering(builder_superbook(d->builder), venues);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* Thread 1's pump (inline mode): decode a few packets, publish. */
static int pump_inline(void *arg)
{
	struct wbd *d = arg;
	int rc;

	wbd_serve_control(d);
	rc = wbd_pump(d);

	wb_ring_producer_publish_no_wakeup(&d->prod); /* thread 1 polls; it never sleeps on the ring */
	if (rc == SOURCE_ERROR) {
		fprintf(stderr, "wirebookd: source: %s\n", d->src.err);
		d->source_status = rc;
	}
	return rc; /* source_status values are builder_pump values */
}

/* The event ring's consumer page: its sleeping flag is thread 1's futex word
 * when a source thread fills the ring. */
static struct wb_ring_cons_page *ring_cons(const struct wbd *d)
{
	return (struct wb_ring_cons_page *)((char *)d->ring_mem + WB_RING_PAGE);
}

/* The source thread published, or ended: wake thread 1 if it said it sleeps. */
static void wake_ring_consumer(struct wbd *d)
{
	wb_store_relaxed(&ring_cons(d)->sleeping, 0);
	futex_wake(&ring_cons(d)->sleeping);
}

static void *source_thread_main(void *arg)
{
	struct wbd *d = arg;
	int rc = SOURCE_MORE;

	while (!g_stop) {
		if (d->is_file) {
			uint64_t tail = wb_load_acquire(&d->prod.cons->tail);

			if (d->prod.head - tail > RING_SLOTS - FILE_RING_HEADROOM) {
				struct timespec ts = { 0, 20000 };

				nanosleep(&ts, NULL);
				continue;
			}
		}
		wbd_serve_control(d);
		rc = wbd_pump(d);
		if (wb_ring_producer_publish(&d->prod))
			wake_ring_consumer(d);
		if (rc == SOURCE_EOF || rc == SOURCE_ERROR)
			break;
	}
	if (rc == SOURCE_ERROR)
		fprintf(stderr, "wirebookd: source: %s\n", d->src.err);
	d->source_status = rc;
	wb_store_release(&d->source_finished, 1);
	/* Thread 1 looks at source_finished after saying it sleeps. */
	wb_full_fence();
	if (wb_load_relaxed(&ring_cons(d)->sleeping))
		wake_ring_consumer(d);
	return NULL;
}

/*
 * Thread 1's pump when a source thread fills the ring (called with the
 * ring empty): says when the source ended; after a bounded spin, sleeps
 * until the source thread publishes (it wakes thread 1 only when the
 * ring's sleeping flag says so), on no timer.
 */
static int pump_watch_source_thread(void *arg)
{
	struct wbd *d = arg;
	struct wb_ring_cons_page *c = ring_cons(d);
	const struct wb_ring_prod_page *p = d->ring_mem;

	uint64_t head = wb_load_acquire(&p->head);

	if (wb_load_acquire(&d->source_finished))
		return BUILDER_PUMP_EOF;
	if (head != d->watch_head) {	/* traffic since the last look: spin afresh */
		d->watch_head = head;
		d->watch_idle = 0;
	}
	if (++d->watch_idle < WATCH_SPINS)
		return BUILDER_PUMP_MORE;	/* thread 1 looks at the ring again at once */
	d->watch_idle = 0;
	wb_store_relaxed(&c->sleeping, 1);
	wb_full_fence();
	if (wb_load_acquire(&p->head) == wb_load_relaxed(&c->tail) &&
	    !wb_load_acquire(&d->source_finished))
		futex_wait(&c->sleeping, 1);
	wb_store_relaxed(&c->sleeping, 0);
	return BUILDER_PUMP_WAITED;
}

static void print_stats(struct wbd *d, double elapsed)
{
	struct builder_counters bc;
	const struct venue_books_counters *vc = builder_venue_counters(d->builder);
	const struct superbook_counters *sc = builder_superbook_counters(d->builder);
	uint32_t i;

	builder_get_counters(d->builder, &bc);
	printf("--- wirebookd stats at %.1fs (source %s: %llu frames, %llu not on a feed",
	       elapsed, d->src.ops->name, (unsigned long long)rd(&d->src.ctr.packets),
	       (unsigned long long)rd(&d->src.ctr.unmapped));
	if (rd(&d->src.ctr.kernel_drops))
		printf(", %llu kernel drops", (unsigned long long)rd(&d->src.ctr.kernel_drops));
	printf(")\n");
	printf("%-6s %-7s %-5s %12s %12s %12s %12s %8s %10s %8s %10s\n", "line", "venue", "proto",
	       "packets", "messages", "events", "filtered", "gaps", "ring-drops", "errors",
	       "gap-msgs");
	for (i = 0; i < d->engine->line_count; i++) {
		const struct feed_line *l = &d->engine->lines[i];
		char name[FEED_LINE_NAME_LEN + 8];
		uint64_t errs = 0;
		int k;

		if (!feed_line_in_use(l))
			continue;
		for (k = 0; k < FEED_ERR_COUNT; k++)
			errs += rd(&l->counters.errors[k]);
		/* A channel's lines are told apart by it: "A:12". */
		if (l->channel)
			snprintf(name, sizeof(name), "%.*s:%u", FEED_LINE_NAME_LEN, l->name,
				 l->channel);
		else
			snprintf(name, sizeof(name), "%.*s", FEED_LINE_NAME_LEN, l->name);
		printf("%-6s %-7s %-5s %12llu %12llu %12llu %12llu %8llu %10llu %8llu %10llu\n",
		       name, feed_venue_name(l->venue),
		       feed_protocol_name(l->protocol), (unsigned long long)rd(&l->counters.packets),
		       (unsigned long long)rd(&l->counters.messages),
		       (unsigned long long)rd(&l->counters.events),
		       (unsigned long long)rd(&l->counters.filtered),
		       (unsigned long long)rd(&l->counters.gaps),
		       (unsigned long long)rd(&l->counters.ring_drops), (unsigned long long)errs,
		       (unsigned long long)rd(&l->counters.gap_messages));
	}
	printf("books: events %llu, live orders %llu (peak %llu), unknown order ids %llu, "
	       "levels %llu; ring batches %llu, ring drops %llu, queue-full waits %llu\n",
	       (unsigned long long)rd(&vc->events), (unsigned long long)rd(&vc->live_orders),
	       (unsigned long long)rd(&vc->peak_live_orders),
	       (unsigned long long)rd(&vc->unknown_order), (unsigned long long)rd(&vc->levels),
	       (unsigned long long)bc.ring_batches, (unsigned long long)bc.ring_dropped,
	       (unsigned long long)bc.queue_full_waits);
	if (builder_event_stream(d->builder)) {
		const struct wb_ring_prod_page *es = builder_event_stream(d->builder)->writer.prod;

		printf("event stream: published %llu in %llu batches, %llu reader wakeups\n",
		       (unsigned long long)rd(&es->published), (unsigned long long)rd(&es->batches),
		       (unsigned long long)rd(&es->wakeups));
	}
	printf("super-book: updates %llu, publishes %llu, trades %llu, gaps %llu, "
	       "bad updates %llu; threads on cpu %d,%d (node %d), path %s%s%s%s\n",
	       (unsigned long long)rd(&sc->updates), (unsigned long long)rd(&sc->publishes),
	       (unsigned long long)rd(&sc->trades), (unsigned long long)rd(&sc->gaps),
	       (unsigned long long)(rd(&sc->bad_instrument) + rd(&sc->bad_venue) +
				    rd(&sc->bad_side) + rd(&sc->bad_kind)),
	       bc.cpu[0], bc.cpu[1], bc.numa_node, bc.path == BUILDER_PATH_RTC ? "rtc" : "pipeline",
	       !d->rt_priority ? "" : bc.rt_errno ? ", SCHED_FIFO refused (" : ", SCHED_FIFO",
	       bc.rt_errno ? strerror(bc.rt_errno) : "", d->rt_priority && bc.rt_errno ? ")" : "");
	if (rd(&sc->sip)) {
		struct wb_shm_sipstats *ss = superbook_shm(builder_superbook(d->builder))->sipstats;

		printf("sip view: updates %llu, dropped %llu (lost while its thread was behind); "
		       "CQS gaps %llu, symbols marked stale %llu (until their next quote)\n",
		       (unsigned long long)rd(&sc->sip), (unsigned long long)rd(&sc->sip_dropped),
		       (unsigned long long)rd(&ss->summary.total.sip_gaps),
		       (unsigned long long)rd(&ss->summary.total.stale_marked));
	}
	if (d->rec) {
		pthread_mutex_lock(&d->rec_lock);
		recovery_client_print(d->rec, stdout);
		pthread_mutex_unlock(&d->rec_lock);
		printf("recovery table (readers): %llu rewrites, %llu of the symbols' streams, "
		       "%u streams not published (more than %d)\n",
		       (unsigned long long)rd(&d->rec_table->rewrites),
		       (unsigned long long)rd(&d->rec_table->symbol_rewrites),
		       d->rec_table->t ? wb_load_relaxed(&d->rec_table->t->omitted) : 0,
		       WB_RECOVERY_STREAMS);
	}
	nats_publisher_print(d->pub, stdout);
	nats_source_print(&d->src, stdout);
	fflush(stdout);
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum {
	OPT_PCAP = 256, OPT_SPEED, OPT_ITCH, OPT_IFACE, OPT_BUSY, OPT_FEEDS, OPT_PROTO, OPT_SUB, OPT_SHM,
	OPT_FORCE, OPT_CPUS, OPT_NOPIN, OPT_NODE, OPT_SRCTHREAD, OPT_STATS, OPT_LATDIR,
	OPT_ORDERS, OPT_EXIT_EOF, OPT_HELP, OPT_KERNEL, OPT_CONTROL, OPT_CONFIG, OPT_METRICS, OPT_RECOVERY,
	OPT_DATE, OPT_PATH, OPT_RTPRIO, OPT_SKIP_IDLE, OPT_METRICS_FILE, OPT_EVENTS, OPT_ORDER_DETAIL,
	OPT_PUBLISH, OPT_PUB_BACKLOG, OPT_NSOURCE, OPT_NATS_STREAM, OPT_NATS_INSTANCE, OPT_NATS_USER,
	OPT_NATS_PASSWORD, OPT_NATS_CREDS, OPT_NATS_NKEY, OPT_NATS_CA, OPT_NATS_CERT, OPT_NATS_KEY,
	OPT_NATS_SNAPSHOT, OPT_NATS_SNAPSHOT_EVENTS, OPT_PUB_BOOKS, OPT_PUB_BOOKS_INTERVAL,
	OPT_LOCKSTEP, OPT_LS_DELAY, OPT_LS_JITTER, OPT_LS_SEED, OPT_LS_DELAY_FILE,
};

/* The subscription for the start line: quoted whole, or its size and head when long. */
static const char *subscription_summary(const char *subs, char *buf, size_t len)
{
	size_t n = strlen(subs), symbols = 1;

	if (n + 3 <= 80) {
		snprintf(buf, len, "'%s'", subs);
		return buf;
	}
	for (const char *p = subs; *p; p++)
		symbols += *p == ',';
	snprintf(buf, len, "%zu symbols ('%.40s...')", symbols, subs);
	return buf;
}

/* --order-detail: all, none, or a watch list of tickers (1-8 characters each). */
static int order_detail_arg_ok(const char *arg)
{
	if (!strcmp(arg, "all") || !strcmp(arg, "none"))
		return 1;
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");

		if (len == 0 || len > 8)
			return 0;
		p += len;
		if (!*p)
			return 1;
		p++;
	}
}

/* --path's words, in enum path_choice order. */
enum path_choice { PATH_RTC, PATH_PIPELINE, PATH_AUTO };
static const char *const path_words[] = { "rtc", "pipeline", "auto", NULL };

/* The path --path asked for, or auto's choice (builder_auto_path) from the
 * cpus --cpus named or the affinity mask; why: what decided, for the
 * startup line. */
static int choose_path(int choice, const int cpus[2], char *why, size_t len)
{
	cpu_set_t set;
	int named = cpus[0] < 0 ? 0 : cpus[0] == cpus[1] ? 1 : 2, allowed;

	if (choice != PATH_AUTO) {
		snprintf(why, len, "--path %s", path_words[choice]);
		return choice == PATH_RTC ? BUILDER_PATH_RTC : BUILDER_PATH_PIPELINE;
	}
	allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
	if (named)
		snprintf(why, len, "auto: --cpus names %d cpu%s", named, named == 1 ? "" : "s");
	else
		snprintf(why, len, "auto: %d cpu%s", allowed, allowed == 1 ? "" : "s");
	return builder_auto_path(named, allowed);
}

/* The metrics endpoint's view: the same counters --stats prints, and more. */
static void wbd_render_metrics(void *arg, FILE *f)
{
	struct wbd *d = arg;
	struct wb_ioc_stats st;
	struct builder_counters bc;
	const struct venue_books_counters *vc = builder_venue_counters(d->builder);
	const struct superbook_counters *sc = builder_superbook_counters(d->builder);
	int rc;

	memset(&st, 0, sizeof(st));
	st.capacity = FEED_MAX_LINES;
	st.lines = (uint64_t)(uintptr_t)d->metrics_lines;
	rc = d->kernel ? wb_control_call(&d->kctl, WB_IOC_STATS, &st)
		       : wb_control_engine_handler(&d->control, WB_IOC_STATS, &st);
	metrics_family(f, "wirebook_up", "gauge", "1 while the per-line counters can be read");
	fprintf(f, "wirebook_up %d\n", rc == 0);
	if (rc == 0)
		metrics_render_lines(f, &st, d->metrics_lines,
				     st.count < FEED_MAX_LINES ? st.count : FEED_MAX_LINES, d->kernel);
#define C(name, help, v)                                                                   \
	do {                                                                               \
		metrics_family(f, "wirebook_" name, "counter", help);                       \
		fprintf(f, "wirebook_" name " %llu\n", (unsigned long long)(v));            \
	} while (0)
#define G(name, help, v)                                                                   \
	do {                                                                               \
		metrics_family(f, "wirebook_" name, "gauge", help);                         \
		fprintf(f, "wirebook_" name " %llu\n", (unsigned long long)(v));            \
	} while (0)
	C("source_frames_total", "Frames (or packets) the source read", rd(&d->src.ctr.packets));
	C("source_bytes_total", "Bytes the source read", rd(&d->src.ctr.bytes));
	C("source_unmapped_frames_total", "Frames to no feed-map line", rd(&d->src.ctr.unmapped));
	C("source_truncated_frames_total", "Frames cut short by the capture length",
	  rd(&d->src.ctr.truncated));
	C("source_kernel_drops_total", "Live capture: frames the kernel dropped",
	  rd(&d->src.ctr.kernel_drops));
	builder_get_counters(d->builder, &bc);
	C("builder_ring_batches_total", "Event ring batches applied by thread 1", bc.ring_batches);
	C("builder_events_total", "Events applied by thread 1", bc.events);
	C("builder_updates_queued_total", "Level changes sent to thread 2", bc.updates_queued);
	C("builder_queue_full_waits_total", "Thread 1 waited on a full queue to thread 2",
	  bc.queue_full_waits);
	C("builder_ring_dropped_total", "Events the ring dropped (as the builder saw it)", bc.ring_dropped);
	C("latency_samples_total", "Latency samples taken (--latency-dir)", bc.latency_samples);
	G("builder_run_to_completion", "1: one thread on the path (--path rtc), 0: the pipeline",
	  bc.path == BUILDER_PATH_RTC);
	G("builder_rt_priority", "SCHED_FIFO priority of the path's threads (--rt-priority; 0: none or refused)",
	  bc.rt_errno ? 0 : d->rt_priority);
	C("builder_thread1_idle_waits_total",
	  "Thread 1 napped or waited in the kernel's rings for events", bc.t1_idle_sleeps);
	C("builder_thread2_sleeps_total", "Thread 2 slept in its futex on an empty queue",
	  bc.t2_idle_sleeps);
	C("builder_thread2_wakes_total", "Thread 1 woke a sleeping thread 2", bc.t2_wakes);
	G("warmed_bytes", "Bytes faulted in before the first packet", d->warm.bytes);
	G("memory_locked", "1 when mlockall locked the process's memory", d->warm.lock_errno == 0);
	C("books_events_total", "Events applied to venue books", rd(&vc->events));
	C("books_unknown_order_total", "Events for an order id not live: skipped",
	  rd(&vc->unknown_order));
	C("books_duplicate_order_total", "Adds of a live order id: skipped", rd(&vc->duplicate_order));
	C("books_overfill_total", "Executes or reduces larger than the order: clamped",
	  rd(&vc->overfill));
	C("books_bad_events_total", "Events with a bad instrument, venue or field: skipped",
	  rd(&vc->bad_instrument) + rd(&vc->bad_venue) + rd(&vc->bad_field));
	C("books_alloc_failures_total", "Book tables that could not grow: event skipped",
	  rd(&vc->alloc_failures));
	C("books_index_grows_total", "Order index doublings", rd(&vc->index_grows));
	G("books_live_orders", "Live orders in the venue books", rd(&vc->live_orders));
	G("books_peak_live_orders", "Most live orders at once", rd(&vc->peak_live_orders));
	G("books_levels", "Price levels with orders, every book", rd(&vc->levels));
	C("superbook_updates_total", "Level, trade and status changes applied", rd(&sc->updates));
	C("superbook_publishes_total", "Symbol records written to shared memory", rd(&sc->publishes));
	C("superbook_trades_total", "Trades", rd(&sc->trades));
	C("superbook_gaps_total", "Gaps marked in the Super-Book", rd(&sc->gaps));
	C("superbook_bad_updates_total", "Updates with a bad instrument, venue, side or kind",
	  rd(&sc->bad_instrument) + rd(&sc->bad_venue) + rd(&sc->bad_side) + rd(&sc->bad_kind));
	C("superbook_level_missing_total", "A level removed that was never there",
	  rd(&sc->level_missing));
	C("superbook_alloc_failures_total", "Levels that could not be stored", rd(&sc->alloc_failures));
	C("superbook_prefault_failures_total",
	  "Symbol records not faulted in when announced (no memory, /dev/shm full)",
	  rd(&sc->prefault_failures));
#undef C
#undef G
	metrics_render_ring(f, d->ring_mem);
	metrics_render_book(f, superbook_header(builder_superbook(d->builder)));
	metrics_render_recovery(f, superbook_header(builder_superbook(d->builder)));
	nats_publisher_metrics(d->pub, f);
	nats_source_metrics(&d->src, f);
}

static int valid_shm_name(const char *name)
{
	return *name && strlen(name) <= 200 && !strchr(name + (name[0] == '/'), '/');
}

/* The book asks for huge pages (book_shm.c); say so when /dev/shm cannot give them. */
static void shm_huge_hint(void)
{
	char type[64], opts[4096];

	if (shm_mount_find("", type, sizeof(type), opts, sizeof(opts)) >= 0 &&
	    !shm_mount_allows_huge(type, opts))
		fprintf(stderr, "wirebookd: hint: /dev/shm is not mounted huge=advise, so the book is on "
			"4 KiB pages, a TLB miss per symbol publish (wb-tune --check says how)\n");
}

/* How long a stopping --publish waits for NATS to take what is left. */
#define NATS_PUBLISH_STOP_WAIT_S 30.0

/* The NATS options agree with each other and this build. 0, or -1 said. */
static int wbd_nats_check(struct nats_publish_config *ncfg, const char *nats_source,
			  const char *shm_name, uint64_t backlog)
{
	char servers[1024], stream[256], err[512];
	const char *url = nats_source ? nats_source : ncfg->client.url;

	if (!url) {
		if (ncfg->stream || nats_client_options_given(&ncfg->client)) {
			fprintf(stderr, "wirebookd: the --nats-* options go with --publish or --source\n");
			return -1;
		}
		return 0;
	}
	if (nats_source && ncfg->client.url) {
		fprintf(stderr, "wirebookd: --publish with --source nats://...: republishing a "
			"stream is NATS's job (a mirror or a cluster), not wirebookd's\n");
		return -1;
	}
	if (!nats_available()) {
		fprintf(stderr, "wirebookd: %s: this wirebookd was built without NATS (install "
			"libnats-dev and rebuild)\n", nats_source ? "--source" : "--publish");
		return -1;
	}
	if (nats_url_split(url, servers, sizeof(servers), stream, sizeof(stream), err, sizeof(err))) {
		fprintf(stderr, "wirebookd: %s %s\n", nats_source ? "--source" : "--publish", err);
		return -1;
	}
	if (!nats_source && stream[0]) {
		fprintf(stderr, "wirebookd: --publish %s: give the stream with --nats-stream\n", url);
		return -1;
	}
	if (backlog & (backlog - 1)) {
		fprintf(stderr, "wirebookd: --publish-backlog %llu: a power of two\n",
			(unsigned long long)backlog);
		return -1;
	}
	if (nats_client_options_check(&ncfg->client, err, sizeof(err))) {
		fprintf(stderr, "wirebookd: %s\n", err);
		return -1;
	}
	if (!ncfg->client.instance)
		ncfg->client.instance = shm_name[0] == '/' ? shm_name + 1 : shm_name;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pcap", required_argument, 0, OPT_PCAP },
		{ "speed", required_argument, 0, OPT_SPEED },
		{ "itch-file", required_argument, 0, OPT_ITCH },
		{ "iface", required_argument, 0, OPT_IFACE },
		{ "busy-poll", no_argument, 0, OPT_BUSY },
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "proto", required_argument, 0, OPT_PROTO },
		{ "subscribe", required_argument, 0, OPT_SUB },
		{ "shm", required_argument, 0, OPT_SHM },
		{ "force", no_argument, 0, OPT_FORCE },
		{ "cpus", required_argument, 0, OPT_CPUS },
		{ "no-pin", no_argument, 0, OPT_NOPIN },
		{ "path", required_argument, 0, OPT_PATH },
		{ "rt-priority", required_argument, 0, OPT_RTPRIO },
		{ "numa-node", required_argument, 0, OPT_NODE },
		{ "source-thread", no_argument, 0, OPT_SRCTHREAD },
		{ "stats", required_argument, 0, OPT_STATS },
		{ "latency-dir", required_argument, 0, OPT_LATDIR },
		{ "expected-orders", required_argument, 0, OPT_ORDERS },
		{ "exit-at-eof", no_argument, 0, OPT_EXIT_EOF },
		{ "kernel", optional_argument, 0, OPT_KERNEL },
		{ "control", required_argument, 0, OPT_CONTROL },
		{ "config", required_argument, 0, OPT_CONFIG },
		{ "metrics", required_argument, 0, OPT_METRICS },
		{ "metrics-file", required_argument, 0, OPT_METRICS_FILE },
		{ "recovery", required_argument, 0, OPT_RECOVERY },
		{ "date", required_argument, 0, OPT_DATE },
		{ "skip-idle", required_argument, 0, OPT_SKIP_IDLE },
		{ "events", required_argument, 0, OPT_EVENTS },
		{ "publish", required_argument, 0, OPT_PUBLISH },
		{ "publish-backlog", required_argument, 0, OPT_PUB_BACKLOG },
		{ "source", required_argument, 0, OPT_NSOURCE },
		{ "nats-stream", required_argument, 0, OPT_NATS_STREAM },
		NATS_CLIENT_LONG_OPTIONS(OPT_NATS_INSTANCE),
		{ "nats-snapshot", required_argument, 0, OPT_NATS_SNAPSHOT },
		{ "nats-snapshot-events", required_argument, 0, OPT_NATS_SNAPSHOT_EVENTS },
		{ "publish-books", required_argument, 0, OPT_PUB_BOOKS },
		{ "publish-books-interval", required_argument, 0, OPT_PUB_BOOKS_INTERVAL },
		{ "order-detail", required_argument, 0, OPT_ORDER_DETAIL },
		{ "lockstep", required_argument, 0, OPT_LOCKSTEP },
		{ "lockstep-delay", required_argument, 0, OPT_LS_DELAY },
		{ "lockstep-jitter", required_argument, 0, OPT_LS_JITTER },
		{ "lockstep-seed", required_argument, 0, OPT_LS_SEED },
		{ "lockstep-delay-file", required_argument, 0, OPT_LS_DELAY_FILE },
		{ "help", no_argument, 0, OPT_HELP },
		{ 0, 0, 0, 0 },
	};
	const char *pcap = NULL, *itch = NULL, *iface = NULL, *feeds = NULL, *subs = "*";
	const char *proto = NULL;
	const char *latency_dir = NULL, *control = NULL, *kernel_dev = NULL, *metrics_at = NULL;
	const char *recovery = NULL, *metrics_file = NULL;
	const char *nats_source = NULL;
	struct nats_publish_config ncfg;	/* --publish and the NATS options */
	uint64_t publish_backlog = 1u << 20;
	int publishing;
	struct metrics_server *metrics = NULL;
	struct book_tickers tickers;
	struct config_args cargs;
	int kernel = 0;
	struct feed_engine_config ecfg = { .alloc = zalloc, .free = free };
	struct builder_config bcfg;
	struct lockstep_config lcfg = { 0 };
	uint64_t *delay_samples = NULL;	/* --lockstep-delay-file's, until lockstep_create copies them */
	int lockstep = 0;
	struct source_options sopt;
	const struct source_ops *ops;
	struct sigaction sa;
	struct wbd d;
	double speed = 0, stats_every = 0, t0, next_stats, skip_idle = 0;
	int path_choice = PATH_AUTO;
	char path_why[64];
	int c, rc, exit_at_eof = 0, busy = 0, sources = 0, reported_eof = 0, exit_code = 0;
	pthread_t src_th;
	int date[3] = { 0, 0, 0 };	/* --date: the BinaryFILE's trading day */
	char err[512];

	if (tool_version_option(argc, argv, "wirebookd"))
		return 0;
	/* First of all: a SIGINT while the 100+ MB book is being made must
	 * still retire and unlink it, not kill the process half way. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed stdout ('wirebookd --stats 1 | head') stops like SIGTERM:
	 * the default action would kill the process and leave the book behind. */
	sigaction(SIGPIPE, &sa, NULL);

	memset(&d, 0, sizeof(d));
	memset(&ncfg, 0, sizeof(ncfg));
	ncfg.client.snapshot_s = 60;	/* --nats-snapshot */
	ncfg.books_interval_ms = 100;	/* --publish-books-interval */
	pthread_mutex_init(&d.rec_lock, NULL);
	d.control_fd = -1;
	d.kctl.fd = -1;
	memset(&bcfg, 0, sizeof(bcfg));
	bcfg.cpus[0] = bcfg.cpus[1] = -1;
	bcfg.pin = 1;
	bcfg.numa_node = -1;
	bcfg.shm.shm_name = WB_SHM_DEFAULT_NAME;
	bcfg.stream_slots = EVENT_STREAM_DEFAULT_SLOTS;
	if (config_args_build(&cargs, argc, argv, opts, err, sizeof(err))) {
		fprintf(stderr, "wirebookd: %s\n", err);
		return 2;
	}
	config_args_override_one_of(&cargs, opts, sources_one_of);
	argc = cargs.argc;
	argv = cargs.argv;
#define BAD_VALUE() do { config_args_free(&cargs); return 2; } while (0)
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		/* Messages about this option name its config line, if any. */
		opt_origin = optind > 0 && optind <= argc ? cargs.origin[optind - 1] : NULL;
		switch (c) {
		case OPT_PCAP: pcap = optarg; sources++; break;
		case OPT_SPEED:
			if (opt_double("wirebookd", "--speed", optarg, 0, 1, 1e6, &speed))
				BAD_VALUE();
			break;
		case OPT_SKIP_IDLE:
			if (opt_double("wirebookd", "--skip-idle", optarg, 0, 1, 86400, &skip_idle))
				BAD_VALUE();
			break;
		case OPT_ITCH: itch = optarg; sources++; break;
		case OPT_IFACE: iface = optarg; sources++; break;
		case OPT_BUSY: busy = 1; break;
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_PROTO: proto = optarg; break;
		case OPT_SUB:
			if (opt_list("wirebookd", "--subscribe", optarg))
				BAD_VALUE();
			subs = optarg;
			break;
		case OPT_SHM:
			if (!valid_shm_name(optarg)) {
				fprintf(stderr, "wirebookd: %s%s--shm '%s': a name of 1-200 characters "
					"without '/' (the book is /dev/shm/NAME)\n",
					opt_origin ? opt_origin : "", opt_origin ? ": " : "", optarg);
				BAD_VALUE();
			}
			bcfg.shm.shm_name = optarg;
			break;
		case OPT_FORCE: bcfg.shm.force = 1; break;
		case OPT_CPUS:
			if (opt_cpu_pair("wirebookd", "--cpus", optarg, bcfg.cpus))
				BAD_VALUE();
			break;
		case OPT_NOPIN: bcfg.pin = 0; break;
		case OPT_PATH:
			if (opt_choice("wirebookd", "--path", optarg, path_words, &path_choice))
				BAD_VALUE();
			break;
		case OPT_RTPRIO:
			if (opt_int("wirebookd", "--rt-priority", optarg, 1, 99, &bcfg.rt_priority))
				BAD_VALUE();
			break;
		case OPT_NODE: {
			char path[64];

			if (opt_int("wirebookd", "--numa-node", optarg, 0, 1023, &bcfg.numa_node))
				BAD_VALUE();
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", bcfg.numa_node);
			if (access("/sys/devices/system/node", F_OK) == 0 && access(path, F_OK) != 0) {
				fprintf(stderr, "wirebookd: %s%s--numa-node '%s': no such NUMA node on this "
					"machine (see /sys/devices/system/node)\n",
					opt_origin ? opt_origin : "", opt_origin ? ": " : "", optarg);
				BAD_VALUE();
			}
			break;
		}
		case OPT_SRCTHREAD: d.source_thread = 1; break;
		case OPT_STATS:
			if (opt_double("wirebookd", "--stats", optarg, 0.01, 0, 86400, &stats_every))
				BAD_VALUE();
			break;
		case OPT_LATDIR: latency_dir = optarg; break;
		case OPT_ORDERS: {
			uint64_t n;

			if (opt_u64("wirebookd", "--expected-orders", optarg, 1, 1u << 28, &n))
				BAD_VALUE();
			bcfg.books.expected_orders = (uint32_t)n;
			break;
		}
		case OPT_EXIT_EOF: exit_at_eof = 1; break;
		case OPT_KERNEL: kernel = 1; kernel_dev = optarg; sources++; break;
		case OPT_CONTROL: control = optarg; break;
		case OPT_ORDER_DETAIL:
			if (!order_detail_arg_ok(optarg)) {
				fprintf(stderr, "wirebookd: --order-detail '%s': all, none, or tickers of 1-8 "
					"characters separated by commas\n", optarg);
				return 2;
			}
			bcfg.order_detail = optarg;
			break;
		case OPT_LOCKSTEP:
			lcfg.gate = lockstep_gate_parse(optarg);
			if (lcfg.gate < 0) {
				fprintf(stderr, "wirebookd: --lockstep '%s': detail or all\n", optarg);
				return 2;
			}
			lockstep = 1;
			break;
		case OPT_LS_DELAY:
			if (opt_u64("wirebookd", "--lockstep-delay", optarg, 0, 60000000000ull, &lcfg.delay_ns))
				BAD_VALUE();
			break;
		case OPT_LS_JITTER:
			if (opt_u64("wirebookd", "--lockstep-jitter", optarg, 0, 60000000000ull, &lcfg.jitter_ns))
				BAD_VALUE();
			break;
		case OPT_LS_SEED:
			if (opt_u64("wirebookd", "--lockstep-seed", optarg, 0, UINT64_MAX, &lcfg.seed))
				BAD_VALUE();
			break;
		case OPT_LS_DELAY_FILE: {
			char why[512];
			uint64_t *samples;
			int n = lockstep_delays_read(optarg, &samples, why, sizeof(why));

			if (n < 0) {
				fprintf(stderr, "wirebookd: %s%s--lockstep-delay-file %s\n", opt_origin ? opt_origin : "",
					opt_origin ? ": " : "", why);
				BAD_VALUE();
			}
			free(delay_samples);
			delay_samples = samples;
			lcfg.delay_samples = samples;
			lcfg.delay_sample_count = (uint32_t)n;
			break;
		}
		case OPT_METRICS: {
			uint32_t ip;
			uint16_t port;

			if (feed_parse_address(optarg, &ip, &port, err, sizeof(err))) {
				fprintf(stderr, "wirebookd: %s%s--metrics %s\n", opt_origin ? opt_origin : "",
					opt_origin ? ": " : "", err);
				BAD_VALUE();
			}
			metrics_at = optarg;
			break;
		}
		case OPT_RECOVERY: recovery = optarg; break;
		case OPT_METRICS_FILE: metrics_file = optarg; break;
		case OPT_EVENTS: {
			uint64_t n;

			if (opt_u64("wirebookd", "--events", optarg, 0, EVENT_STREAM_MAX_SLOTS, &n))
				BAD_VALUE();
			if (n && (n < EVENT_STREAM_MIN_SLOTS || (n & (n - 1)))) {
				fprintf(stderr, "wirebookd: %s%s--events '%s': 0 (no stream) or a power of "
					"two from %u to %u\n", opt_origin ? opt_origin : "",
					opt_origin ? ": " : "", optarg, EVENT_STREAM_MIN_SLOTS,
					EVENT_STREAM_MAX_SLOTS);
				BAD_VALUE();
			}
			bcfg.stream_slots = (uint32_t)n;
			break;
		}
		case OPT_DATE:
			if (opt_date("wirebookd", "--date", optarg, &date[0], &date[1], &date[2]))
				BAD_VALUE();
			break;
		case OPT_PUBLISH: ncfg.client.url = optarg; break;
		case OPT_PUB_BACKLOG:
			if (opt_u64("wirebookd", "--publish-backlog", optarg, 1024, 1u << 28, &publish_backlog))
				BAD_VALUE();
			break;
		case OPT_NSOURCE: nats_source = optarg; sources++; break;
		case OPT_NATS_STREAM: ncfg.stream = optarg; break;
		case OPT_NATS_INSTANCE: case OPT_NATS_USER: case OPT_NATS_PASSWORD: case OPT_NATS_CREDS:
		case OPT_NATS_NKEY: case OPT_NATS_CA: case OPT_NATS_CERT: case OPT_NATS_KEY:
			nats_client_option(&ncfg.client, c - OPT_NATS_INSTANCE, optarg);
			break;
		case OPT_NATS_SNAPSHOT: {
			uint64_t n;

			if (opt_u64("wirebookd", "--nats-snapshot", optarg, 0, 86400, &n))
				BAD_VALUE();
			ncfg.client.snapshot_s = (unsigned)n;
			break;
		}
		case OPT_PUB_BOOKS:
		case OPT_PUB_BOOKS_INTERVAL: {
			uint64_t n;

			if (c == OPT_PUB_BOOKS ?
				    opt_u64("wirebookd", "--publish-books", optarg, 0, WB_BOOK_DEPTH, &n) :
				    opt_u64("wirebookd", "--publish-books-interval", optarg, 1, 3600000, &n))
				BAD_VALUE();
			*(c == OPT_PUB_BOOKS ? &ncfg.books_levels : &ncfg.books_interval_ms) = (unsigned)n;
			break;
		}
		case OPT_NATS_SNAPSHOT_EVENTS:
			if (opt_u64("wirebookd", "--nats-snapshot-events", optarg, 0, 1ull << 40,
				    &ncfg.snapshot_events))
				BAD_VALUE();
			break;
		case OPT_CONFIG:
			fprintf(stderr, "wirebookd: --config: give one config file\n");
			BAD_VALUE();
		case OPT_HELP: case 'h': usage(stdout); config_args_free(&cargs); return 0;
		case ':':
			fprintf(stderr, "wirebookd: %s%s%s needs a value\n", opt_origin ? opt_origin : "",
				opt_origin ? ": " : "", argv[optind - 1]);
			BAD_VALUE();
		default:
			fprintf(stderr, "wirebookd: %s%sunknown option '%s'\n", opt_origin ? opt_origin : "",
				opt_origin ? ": " : "", argv[optind - 1]);
			usage(stderr);
			BAD_VALUE();
		}
	}
	opt_origin = NULL;
	if (optind != argc) {
		fprintf(stderr, "wirebookd: unexpected argument '%s' (every option starts with --; "
			"see --help)\n", argv[optind]);
		return 2;
	}
	if (sources != 1) {
		fprintf(stderr, "wirebookd: give exactly one source (--pcap, --itch-file, --iface, --kernel "
			"or --source)\n");
		usage(stderr);
		return 2;
	}
	if (kernel && control) {
		fprintf(stderr, "wirebookd: with --kernel, control the module with wb-subscribe "
			"(no --daemon); --control serves user-space sources\n");
		return 2;
	}
	if (nats_source && strcmp(subs, "*") != 0) {
		/* The stream's symbol ids are the origin's: a local subscription
		 * would give the same tickers other ids. */
		fprintf(stderr, "wirebookd: --subscribe with --source nats://...: the origin's "
			"subscription decides what its stream holds\n");
		config_args_free(&cargs);
		return 2;
	}
	if (wbd_nats_check(&ncfg, nats_source, bcfg.shm.shm_name, publish_backlog) < 0) {
		config_args_free(&cargs);
		return 2;
	}
	/* The publisher reads the event stream, its backlog: at least
	 * --publish-backlog events (both powers of two). */
	if (ncfg.client.url && !bcfg.stream_slots) {
		fprintf(stderr, "wirebookd: --events 0 with --publish: the publisher reads the "
			"event stream (--events at least --publish-backlog)\n");
		config_args_free(&cargs);
		return 2;
	}
	if (ncfg.client.url && bcfg.stream_slots < publish_backlog)
		bcfg.stream_slots = (uint32_t)publish_backlog;
	publishing = ncfg.client.url != NULL;	/* --source borrows ncfg.client below */
	if (speed > 0 && !pcap) {
		fprintf(stderr, "wirebookd: --speed applies to --pcap only\n");
		return 2;
	}
	if (lockstep && ((!pcap && !itch) || speed > 0 || d.source_thread || !bcfg.stream_slots)) {
		fprintf(stderr, "wirebookd: --lockstep replays --pcap or --itch-file as fast as the "
			"strategy goes (no --speed), on thread 1 (no --source-thread), to the event "
			"stream (--events not 0)\n");
		return 2;
	}
	if (!lockstep && (lcfg.delay_ns || lcfg.jitter_ns || lcfg.seed || lcfg.delay_sample_count)) {
		fprintf(stderr, "wirebookd: --lockstep-delay, --lockstep-jitter, --lockstep-seed and "
			"--lockstep-delay-file go with --lockstep\n");
		return 2;
	}
	if (lcfg.delay_sample_count && (lcfg.delay_ns || lcfg.jitter_ns)) {
		fprintf(stderr, "wirebookd: --lockstep-delay-file gives each request its whole delay: "
			"not with --lockstep-delay or --lockstep-jitter\n");
		return 2;
	}
	if (skip_idle > 0 && speed == 0) {
		fprintf(stderr, "wirebookd: --skip-idle applies to --pcap with --speed only (without "
			"--speed nothing waits)\n");
		return 2;
	}
	if (date[0] && !itch) {
		fprintf(stderr, "wirebookd: --date applies to --itch-file only (a capture's record "
			"times give the day; wb-subscribe date sets it for a live one)\n");
		return 2;
	}
	if (metrics_file && !metrics_at) {
		fprintf(stderr, "wirebookd: --metrics-file says where --metrics listens: give "
			"--metrics ADDR:PORT too\n");
		return 2;
	}
	if (latency_dir && pcap && speed == 0)
		fprintf(stderr, "wirebookd: warning: --latency-dir with --pcap but no --speed: the "
			"receive times are the capture's record times, so the latencies logged are "
			"meaningless (replay with --speed X for real ones)\n");

	d.engine = calloc(1, sizeof(*d.engine));
	if (!d.engine || feed_engine_init(d.engine, &ecfg) < 0) {
		fprintf(stderr, "wirebookd: cannot initialise the feed engine\n");
		return 1;
	}
	if (!feeds && !kernel && !proto && !nats_source)
		feeds = feeds_conf_default_path();
	if (!feeds && itch && !proto) {
		/* A BinaryFILE needs no feed map (nor an address): Nasdaq's ITCH. */
		proto = "itch:nasdaq";
	} else if (!feeds && !kernel && !proto && !nats_source) {
		fprintf(stderr, "wirebookd: no feed map found (looked in %s); give --feeds FILE\n",
			feeds_conf_searched());
		return 2;
	} else if (feeds && feeds_conf_load(d.engine, feeds, err, sizeof(err)) < 0) {
		fprintf(stderr, "wirebookd: %s\n", err);
		return 2;	/* the feed map is configuration: bad usage */
	}
	if (proto && kernel) {
		fprintf(stderr, "wirebookd: --proto with --kernel: the module's feed map is set "
			"with wb-subscribe feeds\n");
		return 2;
	}
	if (proto && feeds_conf_add_proto(d.engine, proto, err, sizeof(err)) < 0) {
		fprintf(stderr, "wirebookd: %s\n", err);
		return 2;
	}
	/* After every line of the feed map (--proto's too): the services name its streams. */
	if (recovery) {
		struct recovery_conf_entry rent[RECOVERY_MAX_SERVICES];
		int nrent = recovery_conf_read(recovery, rent, RECOVERY_MAX_SERVICES, err, sizeof(err));

		if (nrent < 0) {	/* a configuration error, named with its file and line */
			fprintf(stderr, "wirebookd: --recovery: %s\n", err);
			return 2;
		}
		struct recovery_target target;

		if (kernel) {
			if (d.source_thread) {
				fprintf(stderr, "wirebookd: --recovery with --kernel --source-thread: not "
					"supported (the rings are read in place)\n");
				return 2;
			}
			if (recovery_target_kernel(&target, kernel_dev, err, sizeof(err)) < 0) {
				fprintf(stderr, "wirebookd: --recovery: %s\n", err);
				return 1;
			}
		} else {
			recovery_target_engine(&target, d.engine);
		}
		d.rec = recovery_client_create_target(&target, rent, nrent, recovery, err,
						      sizeof(err));
		if (!d.rec) {	/* an entry the feed map or its service cannot serve: its file and line */
			fprintf(stderr, "wirebookd: --recovery: %s\n", err);
			return 2;
		}
	}
	if (iface && bcfg.numa_node < 0)
		bcfg.numa_node = nic_numa_node(iface);
	if (latency_dir) {
		d.latency = latency_log_open(latency_dir);
		if (!d.latency) {
			fprintf(stderr, "wirebookd: latency log in %s: %s\n", latency_dir, strerror(errno));
			return 1;
		}
		bcfg.latency = d.latency;
	}
	bcfg.busy_poll = busy;
	bcfg.path = choose_path(path_choice, bcfg.cpus, path_why, sizeof(path_why));
	if (lockstep) {
		/* The strategy reads the Super-Book at a gate: published by then. */
		bcfg.path = BUILDER_PATH_RTC;
		snprintf(path_why, sizeof(path_why), "--lockstep");
		lcfg.shm_name = bcfg.shm.shm_name;
		bcfg.lockstep = lockstep_create(&lcfg, &rc);
		free(delay_samples);	/* lockstep_create copied them */
		delay_samples = NULL;
		lcfg.delay_samples = NULL;
		if (!bcfg.lockstep) {
			fprintf(stderr, "wirebookd: --lockstep: %s\n", strerror(-rc));
			return 1;
		}
	}
	d.pump_budget = bcfg.path == BUILDER_PATH_RTC ? RTC_PUMP_BUDGET : PUMP_BUDGET;

	d.kernel = kernel;
	d.rt_priority = bcfg.rt_priority;
	d.builder = builder_create(&bcfg, &rc);
	if (!d.builder) {
		if (rc == SUPERBOOK_EBUSY)
			fprintf(stderr, "wirebookd: book '%s' belongs to a running wirebookd; stop it, "
				"use another --shm, or --force\n", bcfg.shm.shm_name);
		else if (rc == WB_ESYS)
			fprintf(stderr, "wirebookd: cannot create the book '%s' (or its event stream, "
				"--events): %s (%s)\n", bcfg.shm.shm_name, wb_strerror(rc),
				strerror(errno));
		else	/* one convention: wb_strerror describes any -errno */
			fprintf(stderr, "wirebookd: cannot create the book '%s': %s\n",
				bcfg.shm.shm_name, wb_strerror(rc));
		return 1;
	}
	superbook_set_heartbeat_period(builder_superbook(d.builder), MAIN_TICK_MS * 1000000ull);
	if (d.rec) {
		struct book_shm *m = superbook_shm(builder_superbook(d.builder));

		d.rec_table = malloc(sizeof(*d.rec_table));
		if (!d.rec_table) {
			fprintf(stderr, "wirebookd: out of memory for the recovery table\n");
			return 1;
		}
		recovery_table_init(d.rec_table, m->recovery, m->symbol_stream, m->hdr->capacity,
				    d.rec);
		d.control.recovery = d.rec;	/* the control socket's fill times */
		d.control.fill_times = recovery_client_fill_times;
	}
	if (wbd_subscribe(&d, subs) < 0) {
		builder_destroy(d.builder);
		return 2;
	}

	d.ring_mem = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(RING_SLOTS));
	if (!d.ring_mem) {
		fprintf(stderr, "wirebookd: out of memory for the event ring\n");
		return 1;
	}
	memset(d.ring_mem, 0, wb_ring_bytes(RING_SLOTS));
	wb_ring_format(d.ring_mem, RING_SLOTS, (uint64_t)time(NULL) * 1000000000ull);
	wb_ring_producer_init(&d.prod, d.ring_mem);

	memset(&sopt, 0, sizeof(sopt));
	sopt.speed = speed;
	sopt.skip_idle_ns = (uint64_t)(skip_idle * 1e9);
	sopt.busy_poll = busy;
	sopt.engine = d.engine;
	sopt.no_flush_at_eof = d.rec != NULL;	/* wbd_pump flushes after the last fills */
	if (kernel) {
		ops = &source_kernel_ops;
		sopt.path = kernel_dev;
	} else if (pcap) {
		ops = &source_pcap_ops;
		sopt.path = pcap;
	} else if (nats_source) {
		ops = &source_nats_ops;
		ncfg.client.url = nats_source;	/* --publish with --source was refused */
		sopt.nats = &ncfg.client;
		sopt.nats_exit_at_end = exit_at_eof;
		sopt.path = nats_source;
	} else if (itch) {
		ops = &source_itch_file_ops;
		sopt.path = itch;
		sopt.line = source_find_line(d.engine, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ);
		memcpy(sopt.date, date, sizeof(sopt.date));
	} else {
		ops = &source_afpacket_ops;
		sopt.iface = iface;
	}
	d.is_file = !iface && !kernel;
	rc = source_open(&d.src, ops, &sopt);
	if (rc < 0) {
		fprintf(stderr, "wirebookd: %s\n", d.src.err);
		builder_destroy(d.builder);
		return rc == SOURCE_EUSAGE ? 2 : 1;
	}
	d.control.engine = d.engine;
	d.control.ring = d.ring_mem;
	d.control_orders = (struct wb_control_orders){ .shm_name = bcfg.shm.shm_name,
		.enabled = builder_order_detail(d.builder) != NULL, .next = wb_control_engine_handler,
		.next_ctx = &d.control };
	/* Attached here, not by the first request on the thread that pumps. */
	if (control && d.control_orders.enabled)
		wb_control_orders_attach(&d.control_orders);
	if (control) {
		d.control_fd = wb_control_listen(control, err, sizeof(err));
		if (d.control_fd < 0) {
			fprintf(stderr, "wirebookd: --control: %s\n", err);
			builder_destroy(d.builder);
			return d.control_fd == WB_CONTROL_EINUSE ? 2 : 1;
		}
	}

	/* Warm before ready: no page of the path is faulted in by the first
	 * packets (the ring and the packet ring were written or locked when
	 * made), and the process stays in memory where it may lock it. */
	builder_warm(d.builder, 1, &d.warm);

	if (d.source_thread) {
		if (pthread_create(&src_th, NULL, source_thread_main, &d)) {
			fprintf(stderr, "wirebookd: cannot start the source thread\n");
			return 1;
		}
		rc = builder_start(d.builder, d.ring_mem, pump_watch_source_thread, &d);
	} else if (kernel) {
		/* Thread 1 applies the events where the module wrote them. */
		struct builder_source in_place;

		wb_kernel_source_builder(&d.src, &in_place);
		rc = builder_start_source(d.builder, &in_place);
	} else {
		rc = builder_start(d.builder, d.ring_mem, pump_inline, &d);
	}
	if (rc) {
		fprintf(stderr, "wirebookd: cannot start the builder threads: %s\n", strerror(-rc));
		return 1;
	}
	/* The path's threads run; every thread from here on (this one, the
	 * recovery client's, metrics) stays off their cores and below them. */
	builder_leave_path(d.builder);
	if (d.latency)	/* made before the builder: moved off its cores now */
		builder_move_off_path(d.builder, latency_log_writer(d.latency));
	if (metrics_at) {
		if (kernel && wb_control_open_kernel(&d.kctl, kernel_dev, false, err, sizeof(err)))
			fprintf(stderr, "wirebookd: --metrics: the module's counters: %s\n", err);
		metrics = metrics_start(metrics_at, wbd_render_metrics, &d, err, sizeof(err));
		if (!metrics) {
			fprintf(stderr, "wirebookd: --metrics %s\n", err);
			g_stop = 1;
			builder_destroy(d.builder);
			return 1;
		}
		fprintf(stderr, "wirebookd: metrics at http://%s/metrics\n", metrics_address(metrics));
		if (metrics_file && metrics_target_write(metrics_file, metrics_address(metrics),
							 bcfg.shm.shm_name, err, sizeof(err))) {
			fprintf(stderr, "wirebookd: --metrics-file %s\n", err);
			metrics_stop(metrics);
			g_stop = 1;
			builder_destroy(d.builder);
			return 1;
		}
	}

	if (publishing) {
		const struct event_stream *es = builder_event_stream(d.builder);
		uint32_t i;

		ncfg.events_ring = es->mem;
		ncfg.max_instruments = bcfg.books.max_instruments;
		ncfg.book_shm = bcfg.shm.shm_name;
		ncfg.events_bytes = es->bytes;
		for (i = 0; i < d.engine->line_count && i < sizeof(ncfg.line_venue); i++)
			ncfg.line_venue[i] = d.engine->lines[i].venue;
		d.pub = nats_publisher_start(&ncfg, err, sizeof(err));	/* off the path, as this thread */
		if (!d.pub) {
			fprintf(stderr, "wirebookd: --publish %s: %s\n", ncfg.client.url, err);
			g_stop = 1;
			builder_stop(d.builder);
			builder_destroy(d.builder);
			return 1;
		}
	}
	if (kernel && d.rec) {
		if (pthread_create(&d.rec_thread, NULL, recovery_thread_main, &d)) {
			fprintf(stderr, "wirebookd: cannot start the recovery thread\n");
			return 1;
		}
		d.rec_thread_started = 1;
	}
	char subs_text[96];

	fprintf(stderr, "wirebookd: %s %s -> /dev/shm/%s, subscribed %s, path %s (%s), warmed %.0f MiB, "
		"memory %s%s%s\n", ops->name,
		kernel ? (kernel_dev ? kernel_dev : WB_DEVICE_PATH) : pcap ? pcap : itch ? itch :
		nats_source ? nats_source : iface,
		bcfg.shm.shm_name, subscription_summary(subs, subs_text, sizeof(subs_text)), bcfg.path == BUILDER_PATH_RTC ? "rtc" : "pipeline", path_why,
		(double)d.warm.bytes / (1 << 20), d.warm.lock_errno ? "not locked (mlockall: " : "locked",
		d.warm.lock_errno > 0 ? strerror(d.warm.lock_errno) : d.warm.lock_errno ? "not asked" : "",
		d.warm.lock_errno ? ")" : "");
	shm_huge_hint();

	t0 = mono_s();
	next_stats = stats_every > 0 ? t0 + stats_every : 0;
	while (!g_stop) {
		double now;

		/* Once the source has ended, no pump runs and the engine is
		 * ours: serve the control socket here, for as long as the
		 * books stay published. */
		if (reported_eof && d.control_fd >= 0) {
			struct pollfd p = { .fd = d.control_fd, .events = POLLIN };

			if (poll(&p, 1, MAIN_TICK_MS) > 0)
				wb_control_serve(d.control_fd, wb_control_orders_handler, &d.control_orders);
		} else {
			struct timespec ts = { 0, MAIN_TICK_MS * 1000L * 1000L };

			nanosleep(&ts, NULL);
		}
		now = mono_s();
		/* The writer's liveness for readers (wb_health): beats while
		 * this process runs, whether or not the feed is quiet. */
		superbook_heartbeat(builder_superbook(d.builder), wall_ns());
		/* The NATS counters for readers (wb_nats_stats). */
		nats_stats_write(superbook_shm(builder_superbook(d.builder))->nats, d.pub, &d.src,
				 wall_ns());
		if (next_stats && now >= next_stats) {
			print_stats(&d, now - t0);
			next_stats += stats_every;
		}
		if (!reported_eof && builder_done(d.builder)) {
			reported_eof = 1;
			superbook_set_state(builder_superbook(d.builder), WB_SHM_SOURCE_DONE);
			nats_publisher_source_ended(d.pub);
			if (builder_order_detail(d.builder))
				order_detail_set_state(builder_order_detail(d.builder), WB_SHM_SOURCE_DONE);
			d.control_orders.source_done = true;	/* thread 1 takes no more requests */
			fprintf(stderr, "wirebookd: source ended after %.3fs; %s\n", now - t0,
				exit_at_eof ? "exiting" : "books stay published until SIGINT/SIGTERM");
			if (exit_at_eof)
				break;
		}
	}
	g_stop = 1;
	if (d.source_thread)
		pthread_join(src_th, NULL);
	if (d.rec_thread_started)
		pthread_join(d.rec_thread, NULL);
	metrics_stop(metrics);	/* before the counters it reads go away */
	if (metrics_file)
		unlink(metrics_file);	/* no target left for a scraper to find down */
	wb_control_close(&d.kctl);
	wb_control_orders_close(&d.control_orders);
	builder_stop(d.builder);
	/* The event stream holds the last events now (closed, still mapped
	 * until builder_destroy): out they go, and END. */
	nats_stats_write(superbook_shm(builder_superbook(d.builder))->nats, d.pub, &d.src, wall_ns());
	nats_publisher_stop(d.pub, NATS_PUBLISH_STOP_WAIT_S);
	d.pub = NULL;
	print_stats(&d, mono_s() - t0);
	/* Content only (orders, queues, levels, NBBO), by ticker whatever
	 * ids the symbols got: equal books, equal sums. */
	tickers = superbook_tickers(builder_superbook(d.builder));
	printf("books: checksum venue books %016llx, super-book %016llx\n",
	       (unsigned long long)venue_books_checksum(builder_venue_books(d.builder), &tickers),
	       (unsigned long long)superbook_checksum(builder_superbook(d.builder)));
	/* The SIP's view as the SIP stated it, not the comparison with it. */
	printf("books: checksum sip-view %016llx, sip-view state %016llx\n",
	       (unsigned long long)sipview_checksum(superbook_sipview(builder_superbook(d.builder)),
						    &tickers),
	       (unsigned long long)sipview_state_checksum(
		       superbook_sipview(builder_superbook(d.builder)), &tickers));
	if (d.latency) {
		uint64_t dropped = 0, written = latency_log_close(d.latency, &dropped);

		printf("latency samples: %llu written, %llu dropped\n", (unsigned long long)written,
		       (unsigned long long)dropped);
	}
	if (d.source_status == SOURCE_ERROR)
		exit_code = 1; /* the books stopped where the input broke */
	if (rd(&d.src.ctr.packets) && rd(&d.src.ctr.unmapped) == rd(&d.src.ctr.packets)) {
		char seen[512];

		unmapped_describe(&d.src.unmapped, seen, sizeof(seen));
		fprintf(stderr, "wirebookd: warning: none of the %llu frames went to a line of the feed "
			"map %s (the books are empty); they went to: %s. Add those groups to the feed "
			"map (--feeds FILE)\n", (unsigned long long)rd(&d.src.ctr.packets),
			feeds ? feeds : "", seen);
		if (exit_at_eof && d.is_file && exit_code == 0)
			exit_code = 1;
	}
	source_close(&d.src);
	if (d.control_fd >= 0)
		wb_control_unlisten(d.control_fd, control);
	builder_destroy(d.builder);
	if (bcfg.lockstep) {
		struct lockstep_counters lc;

		lockstep_get_counters(bcfg.lockstep, &lc);
		printf("lockstep: %llu steps (%llu at a gate, %llu long runs handed over); the strategy "
		       "was behind at %llu (slept at %llu); %llu requests held for the latency model\n",
		       (unsigned long long)(lc.gates + lc.flushes), (unsigned long long)lc.gates,
		       (unsigned long long)lc.flushes, (unsigned long long)lc.waits,
		       (unsigned long long)lc.sleeps, (unsigned long long)lc.held);
	}
	lockstep_destroy(bcfg.lockstep);
	recovery_client_destroy(d.rec);
	free(d.rec_table);
	feed_engine_destroy(d.engine);
	free(d.engine);
	free(d.ring_mem);
	config_args_free(&cargs);
	return exit_code;
}
