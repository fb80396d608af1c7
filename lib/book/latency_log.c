/*
 * Per-packet latency log: a single-producer/single-consumer buffer of
 * struct latency_sample, filled by builder thread 2 on the hot path and
 * drained by a writer thread of its own into latency_<feed>.bin files
 * (format: book/latency_format.h, latency-scripts/README.md).
 *
 * Hot path cost: one compare against a cached consumer index, a 48-byte
 * copy and one release store. The producer reads the writer's index only
 * when its cached view says the buffer is full; if it is really full the
 * sample is dropped and counted, the producer never waits for the disk.
 *
 * The writer thread polls (sleeping LATENCY_IDLE_SLEEP_NS between empty
 * polls) rather than being woken, so the producer never makes a syscall.
 * Files are opened lazily, on the first sample of each venue. One directory
 * holds one run: opening a log removes the latency_*.bin and latency_*.txt
 * an earlier run left there.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wirebook/barrier.h"
#include "wirebook/event.h"
#include "feed/feed.h"
#include "book/latency_log.h"
#include "book/latency_format.h"
#include "book/offpath.h"

/* 128 Ki samples (6 MiB): over 100 ms of headroom at 1 M packets/s. */
#define LATENCY_CAPACITY (1u << 17)
/* The writer releases slots back to the producer at least this often. */
#define LATENCY_DRAIN_BATCH 4096u
/* Empty-poll sleep of the writer: short next to the buffer's headroom. */
#define LATENCY_IDLE_SLEEP_NS 1000000L
/* stdio buffer per file: few large write() calls. */
#define LATENCY_FILE_BUFFER (1u << 20)

struct latency_feed_file {
	FILE *fp;
	char *buffer;
	uint64_t pending;	/* samples in the stdio buffer, not yet known to be on disk */
	int failed;		/* open or write failed: samples of this venue are dropped */
};

struct latency_log {
	/* Producer's line: its private index and cached view of the tail. */
	uint64_t head_private __attribute__((aligned(64)));
	uint64_t tail_cached;
	uint64_t dropped_full;	/* samples lost to a full buffer (relaxed: read at close) */

	/* Published producer index, read by the writer. */
	uint64_t head __attribute__((aligned(64)));

	/* Writer's index, read by the producer only when it looks full. */
	uint64_t tail __attribute__((aligned(64)));

	/* Writer thread state (not touched by the producer). */
	uint32_t stop __attribute__((aligned(64)));
	uint64_t written;
	uint64_t dropped_io;	/* samples lost to a file that could not be opened or written */
	uint64_t bad_venue;	/* samples whose venue is out of range (also dropped) */
	pthread_t writer;
	struct latency_feed_file files[WB_VENUE_COUNT];
	char dir[PATH_MAX];

	struct latency_sample *slots;
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void latency_log_record(struct latency_log *log, const struct latency_sample *s)
{
	uint64_t head = log->head_private;

	if (wb_unlikely(head - log->tail_cached >= LATENCY_CAPACITY)) {
		log->tail_cached = wb_load_acquire(&log->tail);
		if (head - log->tail_cached >= LATENCY_CAPACITY) {
			wb_store_relaxed(&log->dropped_full, log->dropped_full + 1);
			return;
		}
	}
	log->slots[head & (LATENCY_CAPACITY - 1)] = *s;
	log->head_private = head + 1;
	wb_store_release(&log->head, head + 1);
}

/* The file name of a venue: latency_<feed_venue_name>.bin, venueN if unnamed. */
static int latency_file_path(const struct latency_log *log, unsigned int venue, char *path,
			     size_t n)
{
	const char *name = feed_venue_name((int)venue);
	int len;

	if (name && *name)
		len = snprintf(path, n, "%s/latency_%s.bin", log->dir, name);
	else
		len = snprintf(path, n, "%s/latency_venue%u.bin", log->dir, venue);
	return len > 0 && (size_t)len < n ? 0 : -1;
}

static FILE *latency_file_for(struct latency_log *log, unsigned int venue)
{
	struct latency_feed_file *f = &log->files[venue];
	struct latency_file_header hdr;
	char path[PATH_MAX];

	if (f->fp || f->failed)
		return f->fp;
	if (latency_file_path(log, venue, path, sizeof(path)) < 0) {
		fprintf(stderr, "latency_log: path too long under %s\n", log->dir);
		f->failed = 1;
		return NULL;
	}
	f->fp = fopen(path, "wb");
	if (!f->fp) {
		fprintf(stderr, "latency_log: %s: %s; its samples are dropped\n", path,
			strerror(errno));
		f->failed = 1;
		return NULL;
	}
	f->buffer = malloc(LATENCY_FILE_BUFFER);
	if (f->buffer)
		setvbuf(f->fp, f->buffer, _IOFBF, LATENCY_FILE_BUFFER);

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, LATENCY_FILE_MAGIC, LATENCY_FILE_MAGIC_LEN);
	hdr.version = LATENCY_FILE_VERSION;
	hdr.header_size = sizeof(hdr);
	hdr.sample_size = sizeof(struct latency_sample);
	hdr.venue = (uint8_t)venue;
	hdr.created_ns = realtime_ns();
	if (fwrite(&hdr, sizeof(hdr), 1, f->fp) != 1) {
		fprintf(stderr, "latency_log: %s: header write failed: %s\n", path,
			strerror(errno));
		f->failed = 1;
		fclose(f->fp);
		f->fp = NULL;
	}
	return f->fp;
}

/*
 * A file that cannot be written: close it, count what its buffer held as
 * dropped rather than written (it never reached the disk), and drop its
 * later samples.
 */
static void latency_file_failed(struct latency_log *log, unsigned int venue, const char *what)
{
	struct latency_feed_file *f = &log->files[venue];

	if (!f->failed)
		fprintf(stderr, "latency_log: %s for venue %u failed: %s; its samples are "
			"dropped from now on\n", what, venue, strerror(errno));
	f->failed = 1;
	if (f->fp)
		fclose(f->fp);
	f->fp = NULL;
	log->written -= f->pending;
	log->dropped_io += f->pending;
	f->pending = 0;
}

/* Write n consecutive samples of one venue (one fwrite: the writer's cost
 * per sample is then a copy into the stdio buffer). */
static void latency_write_run(struct latency_log *log, const struct latency_sample *s, size_t n)
{
	unsigned int venue = s->venue;
	struct latency_feed_file *f;
	FILE *fp;

	if (venue >= WB_VENUE_COUNT) {
		log->bad_venue += n;
		log->dropped_io += n;
		return;
	}
	fp = latency_file_for(log, venue);
	f = &log->files[venue];
	if (!fp) {
		log->dropped_io += n;
		return;
	}
	if (fwrite(s, sizeof(*s), n, fp) != n) {
		log->dropped_io += n;	/* a short write may have kept some: counted lost */
		latency_file_failed(log, venue, "write");
		return;
	}
	f->pending += n;
	log->written += n;
}

/* Write what the producer has published; returns the number of samples taken. */
static uint64_t latency_drain(struct latency_log *log)
{
	uint64_t tail = log->tail;
	uint64_t head = wb_load_acquire(&log->head);
	uint64_t taken = 0;

	while (tail != head) {
		uint64_t end = head - tail > LATENCY_DRAIN_BATCH ? tail + LATENCY_DRAIN_BATCH : head;

		taken += end - tail;
		while (tail != end) {
			const struct latency_sample *run = &log->slots[tail & (LATENCY_CAPACITY - 1)];
			/* A run: same venue, not past the batch end nor the buffer's wrap. */
			uint64_t limit = LATENCY_CAPACITY - (tail & (LATENCY_CAPACITY - 1));
			size_t n = 1;

			if (limit > end - tail)
				limit = end - tail;
			while (n < limit && run[n].venue == run[0].venue)
				n++;
			latency_write_run(log, run, n);
			tail += n;
		}
		/* The slots were copied into stdio buffers: hand them back. */
		wb_store_release(&log->tail, tail);
	}
	return taken;
}

/* Push buffered samples to the files; a file that fails is closed, what
 * its buffer held and its later samples are dropped and counted. */
static void latency_flush_all(struct latency_log *log)
{
	for (unsigned int v = 0; v < WB_VENUE_COUNT; v++) {
		struct latency_feed_file *f = &log->files[v];

		if (!f->fp)
			continue;
		if (fflush(f->fp) == 0)
			f->pending = 0;
		else
			latency_file_failed(log, v, "writing the file");
	}
}

pthread_t latency_log_writer(const struct latency_log *log)
{
	return log->writer;
}

static void *latency_writer_main(void *arg)
{
	struct latency_log *log = arg;
	const struct timespec idle = { 0, LATENCY_IDLE_SLEEP_NS };
	int idle_polls = 0;

	/* Off the path: its disk writes wait, the publisher does not. */
	offpath_lower_priority();
	for (;;) {
		/* Read stop before draining so the last drain sees every sample. */
		int stopping = wb_load_acquire(&log->stop) != 0;

		if (latency_drain(log)) {
			idle_polls = 0;
			continue;
		}
		if (stopping)
			break;
		/* Quiet for ~100 ms: push buffered samples to the files for live readers. */
		if (++idle_polls == 100)
			latency_flush_all(log);
		nanosleep(&idle, NULL);
	}
	return NULL;
}

/*
 * A directory holds one run: the logs (and text copies) of an earlier run
 * go, or a feed absent from this run would be summarized with it.
 */
static int latency_remove_old_logs(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char path[PATH_MAX];

		if (n < 13 || strncmp(e->d_name, "latency_", 8) != 0 ||
		    (strcmp(e->d_name + n - 4, ".bin") != 0 && strcmp(e->d_name + n - 4, ".txt") != 0))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    (unlink(path) != 0 && errno != ENOENT))
			rc = -1;
	}
	closedir(d);
	return rc;
}

struct latency_log *latency_log_open(const char *dir)
{
	struct latency_log *log;
	struct stat st;
	int err;

	if (!dir || !*dir || strlen(dir) >= sizeof(log->dir) - 32) {
		errno = EINVAL;
		return NULL;
	}
	if (stat(dir, &st) != 0) {
		if (errno != ENOENT || mkdir(dir, 0755) != 0)
			return NULL;
	} else if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return NULL;
	}
	if (latency_remove_old_logs(dir) < 0)
		return NULL;	/* errno from unlink/opendir: a run must not mix with another */

	log = aligned_alloc(64, (sizeof(*log) + 63) & ~(size_t)63);
	if (!log)
		return NULL;
	memset(log, 0, sizeof(*log));
	snprintf(log->dir, sizeof(log->dir), "%s", dir);
	log->slots = aligned_alloc(64, (size_t)LATENCY_CAPACITY * sizeof(struct latency_sample));
	if (!log->slots) {
		free(log);
		errno = ENOMEM;
		return NULL;
	}
	/* Touch every slot now so the hot path never takes a page fault. */
	memset(log->slots, 0, (size_t)LATENCY_CAPACITY * sizeof(struct latency_sample));

	err = pthread_create(&log->writer, NULL, latency_writer_main, log);
	if (err) {
		free(log->slots);
		free(log);
		errno = err;
		return NULL;
	}
	pthread_setname_np(log->writer, "wb-latency-log");
	return log;
}

/*
 * The producer must have stopped recording. Samples lost for any reason
 * (full buffer, unwritable file, bad venue) are added into *dropped.
 */
uint64_t latency_log_close(struct latency_log *log, uint64_t *dropped)
{
	uint64_t written;

	if (!log) {
		if (dropped)
			*dropped = 0;
		return 0;
	}
	wb_store_release(&log->stop, 1);
	pthread_join(log->writer, NULL);

	/* Flush first: a failure still knows how many samples it lost. */
	latency_flush_all(log);
	for (unsigned int v = 0; v < WB_VENUE_COUNT; v++) {
		struct latency_feed_file *f = &log->files[v];

		if (f->fp && fclose(f->fp) != 0)
			fprintf(stderr, "latency_log: closing the file of venue %u failed: %s\n", v,
				strerror(errno));
		free(f->buffer);
	}
	written = log->written;
	if (dropped)
		*dropped = wb_load_relaxed(&log->dropped_full) + log->dropped_io;
	free(log->slots);
	free(log);
	return written;
}
