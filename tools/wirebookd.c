/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd: the book builder daemon. A source (pcap file, Nasdaq
 * BinaryFILE, live interface) is decoded by the feed engine into an event
 * ring; builder thread 1 applies the events to the venue books, thread 2
 * keeps the Super-Book and publishes it in shared memory for libwirebook
 * readers.
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

#include "book/builder.h"
#include "book/latency_log.h"
#include "common/cpu_list.h"
#include "common/control.h"
#include "common/feeds_conf.h"
#include "common/kernel_source.h"
#include "common/source.h"
#include "feed/feed.h"
#include "wirebook/barrier.h"
#include "wirebook/book.h"
#include "wirebook/ring.h"

#define RING_SLOTS (1u << 16)
#define PUMP_BUDGET 32u
/* The main loop's period: stats, heartbeat, control once the source ended. */
#define MAIN_TICK_MS 20
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
	struct source src;
	struct wb_ring_producer prod;
	void *ring_mem;
	struct builder *builder;
	struct latency_log *latency;
	int is_file;
	int source_thread;
	int source_status;	/* last pump result (source thread) */
	int source_finished;
	int control_fd;		/* --control: listening socket, or -1 */
	unsigned control_tick;
	struct wb_control_engine control;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: wirebookd SOURCE [options]\n"
"Build order books from an exchange feed and publish them in shared memory.\n"
"\n"
"Sources (one):\n"
"  --pcap FILE          a capture file, as fast as possible\n"
"    --speed X          ... at the recorded pace times X instead (recv_ts = now)\n"
"  --itch-file FILE     Nasdaq BinaryFILE, plain or gzip (decoded as the itch nasdaq line)\n"
"  --iface IF           live capture on an AF_PACKET ring (joins the feed groups)\n"
"    --busy-poll        spin on the packet ring instead of sleeping in poll(), and\n"
"                       never let the builder threads sleep when idle (lowest\n"
"                       latency; burns their cores; default: spin a while, then nap 10 us)\n"
"  --kernel[=DEVICE]    the wirebook kernel module's event rings (default /dev/wirebook);\n"
"                       its feed map and symbols are set with wb-subscribe\n"
"\n"
"Options:\n"
"  --feeds FILE         feed map (default: ./feeds.conf or the source tree's)\n"
"  --subscribe LIST     symbols to build, comma separated, or '*' for all (default '*')\n"
"  --control SOCKET     serve wb-subscribe --daemon SOCKET (feeds, symbols, stats)\n"
"  --shm NAME           shared-memory book name (default %s: /dev/shm/%s)\n"
"  --force              take over NAME even if another wirebookd still owns it\n"
"  --cpus A,B           cores for thread 1 (venue books) and 2 (Super-Book)\n"
"  --no-pin             do not pin the threads\n"
"  --numa-node N        NUMA node for threads and memory (default: the NIC's, or any)\n"
"  --source-thread      decode on a separate thread (default: on thread 1)\n"
"  --stats SECONDS      print per-line and book stats every SECONDS\n"
"  --latency-dir DIR    write per-feed latency samples (latency_<feed>.bin) there\n"
"  --expected-orders N  size the order tables for N live orders (default 1Mi)\n"
"  --exit-at-eof        exit when a file source ends (default: keep serving the books)\n"
"  --help\n"
"\n"
"SIGINT/SIGTERM: stop, print the final stats, retire the book (readers get WB_ESTALE).\n",
		WB_SHM_DEFAULT_NAME, WB_SHM_DEFAULT_NAME);
}

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
		wb_control_serve(d->control_fd, wb_control_engine_handler, &d->control);
}

/* Thread 1's pump (inline mode): decode a few packets, publish. */
static int pump_inline(void *arg)
{
	struct wbd *d = arg;
	int rc;

	wbd_serve_control(d);
	rc = source_pump(&d->src, d->engine, &d->prod, PUMP_BUDGET);

	wb_ring_producer_publish_no_wakeup(&d->prod); /* thread 1 polls; it never sleeps on the ring */
	if (rc == SOURCE_ERROR) {
		fprintf(stderr, "wirebookd: source: %s\n", d->src.err);
		d->source_status = rc;
	}
	return rc; /* source_status values are builder_pump values */
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
		rc = source_pump(&d->src, d->engine, &d->prod, PUMP_BUDGET);
		wb_ring_producer_publish_no_wakeup(&d->prod);
		if (rc == SOURCE_EOF || rc == SOURCE_ERROR)
			break;
	}
	if (rc == SOURCE_ERROR)
		fprintf(stderr, "wirebookd: source: %s\n", d->src.err);
	d->source_status = rc;
	wb_store_release(&d->source_finished, 1);
	return NULL;
}

/* Thread 1's pump when a source thread fills the ring: only says when it ended. */
static int pump_watch_source_thread(void *arg)
{
	struct wbd *d = arg;

	return wb_load_acquire(&d->source_finished) ? BUILDER_PUMP_EOF : BUILDER_PUMP_IDLE;
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
	printf("%-6s %-7s %-5s %12s %12s %12s %12s %8s %10s %8s\n", "line", "venue", "proto",
	       "packets", "messages", "events", "filtered", "gaps", "ring-drops", "errors");
	for (i = 0; i < d->engine->line_count; i++) {
		const struct feed_line *l = &d->engine->lines[i];
		uint64_t errs = 0;
		int k;

		if (!l->ip)
			continue;
		for (k = 0; k < FEED_ERR_COUNT; k++)
			errs += rd(&l->counters.errors[k]);
		printf("%-6.*s %-7s %-5s %12llu %12llu %12llu %12llu %8llu %10llu %8llu\n",
		       FEED_LINE_NAME_LEN, l->name, feed_venue_name(l->venue),
		       feed_protocol_name(l->protocol), (unsigned long long)rd(&l->counters.packets),
		       (unsigned long long)rd(&l->counters.messages),
		       (unsigned long long)rd(&l->counters.events),
		       (unsigned long long)rd(&l->counters.filtered),
		       (unsigned long long)rd(&l->counters.gaps),
		       (unsigned long long)rd(&l->counters.ring_drops), (unsigned long long)errs);
	}
	printf("books: events %llu, live orders %llu (peak %llu), unknown order ids %llu, "
	       "levels %llu; ring batches %llu, ring drops %llu, queue-full waits %llu\n",
	       (unsigned long long)rd(&vc->events), (unsigned long long)rd(&vc->live_orders),
	       (unsigned long long)rd(&vc->peak_live_orders),
	       (unsigned long long)rd(&vc->unknown_order), (unsigned long long)rd(&vc->levels),
	       (unsigned long long)bc.ring_batches, (unsigned long long)bc.ring_dropped,
	       (unsigned long long)bc.queue_full_waits);
	printf("super-book: updates %llu, publishes %llu, trades %llu, gaps %llu, "
	       "bad updates %llu; threads on cpu %d,%d (node %d)\n",
	       (unsigned long long)rd(&sc->updates), (unsigned long long)rd(&sc->publishes),
	       (unsigned long long)rd(&sc->trades), (unsigned long long)rd(&sc->gaps),
	       (unsigned long long)(rd(&sc->bad_instrument) + rd(&sc->bad_venue) +
				    rd(&sc->bad_side) + rd(&sc->bad_kind)),
	       bc.cpu[0], bc.cpu[1], bc.numa_node);
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
	OPT_PCAP = 256, OPT_SPEED, OPT_ITCH, OPT_IFACE, OPT_BUSY, OPT_FEEDS, OPT_SUB, OPT_SHM,
	OPT_FORCE, OPT_CPUS, OPT_NOPIN, OPT_NODE, OPT_SRCTHREAD, OPT_STATS, OPT_LATDIR,
	OPT_ORDERS, OPT_EXIT_EOF, OPT_HELP, OPT_KERNEL, OPT_CONTROL,
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pcap", required_argument, 0, OPT_PCAP },
		{ "speed", required_argument, 0, OPT_SPEED },
		{ "itch-file", required_argument, 0, OPT_ITCH },
		{ "iface", required_argument, 0, OPT_IFACE },
		{ "busy-poll", no_argument, 0, OPT_BUSY },
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "subscribe", required_argument, 0, OPT_SUB },
		{ "shm", required_argument, 0, OPT_SHM },
		{ "force", no_argument, 0, OPT_FORCE },
		{ "cpus", required_argument, 0, OPT_CPUS },
		{ "no-pin", no_argument, 0, OPT_NOPIN },
		{ "numa-node", required_argument, 0, OPT_NODE },
		{ "source-thread", no_argument, 0, OPT_SRCTHREAD },
		{ "stats", required_argument, 0, OPT_STATS },
		{ "latency-dir", required_argument, 0, OPT_LATDIR },
		{ "expected-orders", required_argument, 0, OPT_ORDERS },
		{ "exit-at-eof", no_argument, 0, OPT_EXIT_EOF },
		{ "kernel", optional_argument, 0, OPT_KERNEL },
		{ "control", required_argument, 0, OPT_CONTROL },
		{ "help", no_argument, 0, OPT_HELP },
		{ 0, 0, 0, 0 },
	};
	const char *pcap = NULL, *itch = NULL, *iface = NULL, *feeds = NULL, *subs = "*";
	const char *latency_dir = NULL, *control = NULL, *kernel_dev = NULL;
	int kernel = 0;
	struct feed_engine_config ecfg = { .alloc = zalloc, .free = free };
	struct builder_config bcfg;
	struct source_options sopt;
	const struct source_ops *ops;
	struct sigaction sa;
	struct wbd d;
	double speed = 0, stats_every = 0, t0, next_stats;
	int c, rc, exit_at_eof = 0, busy = 0, sources = 0, reported_eof = 0, exit_code = 0;
	pthread_t src_th;
	char err[512];

	memset(&d, 0, sizeof(d));
	d.control_fd = -1;
	memset(&bcfg, 0, sizeof(bcfg));
	bcfg.cpus[0] = bcfg.cpus[1] = -1;
	bcfg.pin = 1;
	bcfg.numa_node = -1;
	bcfg.shm.shm_name = WB_SHM_DEFAULT_NAME;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_PCAP: pcap = optarg; sources++; break;
		case OPT_SPEED:
			speed = strtod(optarg, NULL);
			if (speed <= 0) {
				fprintf(stderr, "wirebookd: --speed needs a positive factor\n");
				return 2;
			}
			break;
		case OPT_ITCH: itch = optarg; sources++; break;
		case OPT_IFACE: iface = optarg; sources++; break;
		case OPT_BUSY: busy = 1; break;
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_SUB: subs = optarg; break;
		case OPT_SHM: bcfg.shm.shm_name = optarg; break;
		case OPT_FORCE: bcfg.shm.force = 1; break;
		case OPT_CPUS: {
			struct cpu_list cl;
			int n = 0;
			unsigned i;

			int a, b2;
			char tail;

			/* "A,B" in that order (thread 1 on A); any other cpu
			 * list: its first two cpus. */
			if (sscanf(optarg, "%d,%d%c", &a, &b2, &tail) == 2 && a >= 0 && b2 >= 0 &&
			    a < CPU_LIST_MAX && b2 < CPU_LIST_MAX) {
				bcfg.cpus[0] = a;
				bcfg.cpus[1] = b2;
				break;
			}
			if (cpu_list_parse(optarg, &cl) < 0 || cpu_list_count(&cl) == 0) {
				fprintf(stderr, "wirebookd: --cpus '%s': expected a cpu list like 2,3\n", optarg);
				return 2;
			}
			for (i = 0; i < CPU_LIST_MAX && n < 2; i++)
				if (cpu_list_has(&cl, i))
					bcfg.cpus[n++] = (int)i;
			if (n == 1)
				bcfg.cpus[1] = bcfg.cpus[0];
			break;
		}
		case OPT_NOPIN: bcfg.pin = 0; break;
		case OPT_NODE: bcfg.numa_node = atoi(optarg); break;
		case OPT_SRCTHREAD: d.source_thread = 1; break;
		case OPT_STATS: stats_every = strtod(optarg, NULL); break;
		case OPT_LATDIR: latency_dir = optarg; break;
		case OPT_ORDERS: bcfg.books.expected_orders = (uint32_t)strtoul(optarg, NULL, 0); break;
		case OPT_EXIT_EOF: exit_at_eof = 1; break;
		case OPT_KERNEL: kernel = 1; kernel_dev = optarg; sources++; break;
		case OPT_CONTROL: control = optarg; break;
		case OPT_HELP: case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (sources != 1 || optind != argc) {
		fprintf(stderr, "wirebookd: give exactly one source (--pcap, --itch-file, --iface or --kernel)\n");
		usage(stderr);
		return 2;
	}
	if (kernel && control) {
		fprintf(stderr, "wirebookd: with --kernel, control the module with wb-subscribe "
			"(no --daemon); --control serves user-space sources\n");
		return 2;
	}
	if (bcfg.cpus[0] >= 0) {
		cpu_set_t allowed;
		int k;

		if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
			for (k = 0; k < 2; k++)
				if (bcfg.cpus[k] >= CPU_SETSIZE || !CPU_ISSET(bcfg.cpus[k], &allowed)) {
					fprintf(stderr, "wirebookd: --cpus: cpu %d is not one this process "
						"may run on\n", bcfg.cpus[k]);
					return 2;
				}
	}
	if (speed > 0 && !pcap) {
		fprintf(stderr, "wirebookd: --speed applies to --pcap only\n");
		return 2;
	}

	d.engine = calloc(1, sizeof(*d.engine));
	if (!d.engine || feed_engine_init(d.engine, &ecfg) < 0) {
		fprintf(stderr, "wirebookd: cannot initialise the feed engine\n");
		return 1;
	}
	if (!feeds)
		feeds = feeds_conf_default_path();
	if (!feeds) {
		fprintf(stderr, "wirebookd: no feeds.conf found; give --feeds FILE\n");
		return 1;
	}
	if (feeds_conf_load(d.engine, feeds, err, sizeof(err)) < 0) {
		fprintf(stderr, "wirebookd: %s\n", err);
		return 1;
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

	d.builder = builder_create(&bcfg, &rc);
	if (!d.builder) {
		if (rc == SUPERBOOK_EBUSY)
			fprintf(stderr, "wirebookd: book '%s' belongs to a running wirebookd; stop it, "
				"use another --shm, or --force\n", bcfg.shm.shm_name);
		else if (rc < 0 && rc >= WB_ERROR_MIN)
			fprintf(stderr, "wirebookd: cannot create the book '%s': %s (%s)\n",
				bcfg.shm.shm_name, wb_strerror(rc), strerror(errno));
		else
			fprintf(stderr, "wirebookd: cannot create the builder: %s\n", strerror(-rc));
		return 1;
	}
	superbook_set_heartbeat_period(builder_superbook(d.builder), MAIN_TICK_MS * 1000000ull);
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
	sopt.busy_poll = busy;
	sopt.engine = d.engine;
	if (kernel) {
		ops = &source_kernel_ops;
		sopt.path = kernel_dev;
	} else if (pcap) {
		ops = &source_pcap_ops;
		sopt.path = pcap;
	} else if (itch) {
		ops = &source_itch_file_ops;
		sopt.path = itch;
		sopt.line = source_find_line(d.engine, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ);
	} else {
		ops = &source_afpacket_ops;
		sopt.iface = iface;
	}
	d.is_file = !iface && !kernel;
	if (source_open(&d.src, ops, &sopt) < 0) {
		fprintf(stderr, "wirebookd: %s\n", d.src.err);
		builder_destroy(d.builder);
		return 1;
	}
	if (control) {
		d.control.engine = d.engine;
		d.control.ring = d.ring_mem;
		d.control_fd = wb_control_listen(control, err, sizeof(err));
		if (d.control_fd < 0) {
			fprintf(stderr, "wirebookd: --control: %s\n", err);
			builder_destroy(d.builder);
			return 1;
		}
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (d.source_thread) {
		if (pthread_create(&src_th, NULL, source_thread_main, &d)) {
			fprintf(stderr, "wirebookd: cannot start the source thread\n");
			return 1;
		}
		rc = builder_start(d.builder, d.ring_mem, pump_watch_source_thread, &d);
	} else {
		rc = builder_start(d.builder, d.ring_mem, pump_inline, &d);
	}
	if (rc) {
		fprintf(stderr, "wirebookd: cannot start the builder threads: %s\n", strerror(-rc));
		return 1;
	}
	fprintf(stderr, "wirebookd: %s %s -> /dev/shm/%s, subscribed '%s'\n", ops->name,
		kernel ? (kernel_dev ? kernel_dev : WB_DEVICE_PATH) : pcap ? pcap : itch ? itch : iface,
		bcfg.shm.shm_name, subs);

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
				wb_control_serve(d.control_fd, wb_control_engine_handler, &d.control);
		} else {
			struct timespec ts = { 0, MAIN_TICK_MS * 1000L * 1000L };

			nanosleep(&ts, NULL);
		}
		now = mono_s();
		/* The writer's liveness for readers (wb_health): beats while
		 * this process runs, whether or not the feed is quiet. */
		superbook_heartbeat(builder_superbook(d.builder), wall_ns());
		if (next_stats && now >= next_stats) {
			print_stats(&d, now - t0);
			next_stats += stats_every;
		}
		if (!reported_eof && builder_done(d.builder)) {
			reported_eof = 1;
			superbook_set_state(builder_superbook(d.builder), WB_SHM_SOURCE_DONE);
			fprintf(stderr, "wirebookd: source ended after %.3fs; %s\n", now - t0,
				exit_at_eof ? "exiting" : "books stay published until SIGINT/SIGTERM");
			if (exit_at_eof)
				break;
		}
	}
	g_stop = 1;
	if (d.source_thread)
		pthread_join(src_th, NULL);
	builder_stop(d.builder);
	print_stats(&d, mono_s() - t0);
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
	if (d.control_fd >= 0) {
		close(d.control_fd);
		unlink(control);
	}
	builder_destroy(d.builder);
	feed_engine_destroy(d.engine);
	free(d.engine);
	free(d.ring_mem);
	return exit_code;
}
