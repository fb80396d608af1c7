/*
 * wb-latency-text: turn the builder's binary latency logs (latency_<feed>.bin,
 * format in lib/book/latency_format.h) into text, one line per packet, for
 * people, grep and any plotting tool.
 *
 * Text format (latency_<feed>.txt), version 1:
 *
 *   # wirebook latency log text v1
 *   # feed nasdaq venue 1 created_ns 1763754000000000000
 *   # columns: seq line recv_ts ring_read_ts book_applied_ts published_ts recv_to_ring_ns ring_to_book_ns book_to_published_ns end_to_end_ns
 *   14757721 0 1763754000000001000 1763754000000001400 1763754000000001900 1763754000000002300 400 500 400 1300
 *
 * Lines starting with '#' are comments. Fields are separated by one space.
 * The four timestamps are ns since the epoch (CLOCK_REALTIME), 0 when the
 * stage was not timed; the four deltas are signed ns (later stage minus
 * earlier stage, end_to_end = published - recv), '-' when either side is 0.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "feed/feed.h"
#include "book/latency_log.h"
#include "book/latency_format.h"

#define SAMPLES_PER_READ 4096

static void usage(FILE *out)
{
	fprintf(out,
		"usage: wb-latency-text [options] FILE.bin...\n"
		"       wb-latency-text --dir DIR\n"
		"\n"
		"Convert wirebook binary latency logs (latency_<feed>.bin, written by\n"
		"wirebookd --latency-dir) to text, one line per packet: seq, line, the\n"
		"four stage timestamps and the stage deltas in ns. Each FILE.bin becomes\n"
		"FILE.txt next to it unless --stdout or --output is given.\n"
		"\n"
		"  -d, --dir DIR       convert every latency_*.bin in DIR\n"
		"  -o, --output FILE   write to FILE (only with a single input)\n"
		"  -c, --stdout        write to standard output\n"
		"  -h, --help          this help\n"
		"      --version\n"
		"\n"
		"Text format: see latency-scripts/README.md. Exit status: 0 ok, 1 a file\n"
		"could not be read or written or is not a latency log, 2 usage error.\n");
}

static void print_delta(FILE *out, uint64_t from, uint64_t to)
{
	if (from == 0 || to == 0)
		fputs(" -", out);
	else
		fprintf(out, " %" PRId64, (int64_t)(to - from));
}

static void print_sample(FILE *out, const struct latency_sample *s)
{
	fprintf(out, "%" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, s->seq,
		(unsigned int)s->line, s->recv_ts, s->ring_read_ts, s->book_applied_ts,
		s->published_ts);
	print_delta(out, s->recv_ts, s->ring_read_ts);
	print_delta(out, s->ring_read_ts, s->book_applied_ts);
	print_delta(out, s->book_applied_ts, s->published_ts);
	print_delta(out, s->recv_ts, s->published_ts);
	fputc('\n', out);
}

/* Reads and checks the header; leaves in positioned at the first sample. */
static int read_header(FILE *in, const char *path, struct latency_file_header *hdr)
{
	if (fread(hdr, sizeof(*hdr), 1, in) != 1) {
		fprintf(stderr, "wb-latency-text: %s: too short for a latency log header\n", path);
		return -1;
	}
	if (memcmp(hdr->magic, LATENCY_FILE_MAGIC, LATENCY_FILE_MAGIC_LEN) != 0) {
		fprintf(stderr, "wb-latency-text: %s: not a latency log (bad magic)\n", path);
		return -1;
	}
	if (hdr->version != LATENCY_FILE_VERSION) {
		fprintf(stderr, "wb-latency-text: %s: latency log version %u, this tool reads %u\n",
			path, hdr->version, LATENCY_FILE_VERSION);
		return -1;
	}
	if (hdr->sample_size != sizeof(struct latency_sample) ||
	    hdr->header_size < sizeof(*hdr)) {
		fprintf(stderr, "wb-latency-text: %s: unexpected header/sample size %u/%u\n", path,
			hdr->header_size, hdr->sample_size);
		return -1;
	}
	if (fseek(in, (long)hdr->header_size, SEEK_SET) != 0) {
		fprintf(stderr, "wb-latency-text: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int convert(const char *in_path, FILE *out, const char *out_name)
{
	static struct latency_sample buf[SAMPLES_PER_READ];
	struct latency_file_header hdr;
	const char *feed;
	uint64_t samples = 0;
	size_t got;
	int rc = 0;
	FILE *in = fopen(in_path, "rb");

	if (!in) {
		fprintf(stderr, "wb-latency-text: %s: %s\n", in_path, strerror(errno));
		return -1;
	}
	if (read_header(in, in_path, &hdr) < 0) {
		fclose(in);
		return -1;
	}
	feed = feed_venue_name(hdr.venue);
	fprintf(out, "# wirebook latency log text v1\n");
	fprintf(out, "# feed %s venue %u created_ns %" PRIu64 "\n", feed && *feed ? feed : "unknown",
		(unsigned int)hdr.venue, hdr.created_ns);
	fprintf(out, "# columns: seq line recv_ts ring_read_ts book_applied_ts published_ts "
		"recv_to_ring_ns ring_to_book_ns book_to_published_ns end_to_end_ns\n");

	while ((got = fread(buf, 1, sizeof(buf), in)) > 0) {
		size_t whole = got / sizeof(buf[0]);

		for (size_t i = 0; i < whole; i++)
			print_sample(out, &buf[i]);
		samples += whole;
		if (got % sizeof(buf[0])) {
			/* Only the last read can end mid-record: the writer was killed. */
			fprintf(stderr, "wb-latency-text: %s: ignored a partial last record (%zu bytes)\n",
				in_path, got % sizeof(buf[0]));
			break;
		}
	}
	if (ferror(in)) {
		fprintf(stderr, "wb-latency-text: %s: read error: %s\n", in_path, strerror(errno));
		rc = -1;
	}
	fclose(in);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "wb-latency-text: %s: write error: %s\n", out_name, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && out != stdout)
		fprintf(stderr, "wb-latency-text: %s -> %s (%" PRIu64 " packets)\n", in_path, out_name,
			samples);
	return rc;
}

static int convert_to_file(const char *in_path, const char *out_path)
{
	char derived[PATH_MAX];
	FILE *out;
	int rc;

	if (!out_path) {
		size_t n = strlen(in_path);

		if (n > 4 && strcmp(in_path + n - 4, ".bin") == 0)
			snprintf(derived, sizeof(derived), "%.*s.txt", (int)(n - 4), in_path);
		else
			snprintf(derived, sizeof(derived), "%s.txt", in_path);
		out_path = derived;
	}
	out = fopen(out_path, "w");
	if (!out) {
		fprintf(stderr, "wb-latency-text: %s: %s\n", out_path, strerror(errno));
		return -1;
	}
	rc = convert(in_path, out, out_path);
	if (fclose(out) != 0 && rc == 0) {
		fprintf(stderr, "wb-latency-text: %s: %s\n", out_path, strerror(errno));
		rc = -1;
	}
	return rc;
}

static int name_is_latency_bin(const char *name)
{
	size_t n = strlen(name);

	return n > 12 && strncmp(name, "latency_", 8) == 0 && strcmp(name + n - 4, ".bin") == 0;
}

static int convert_dir(const char *dir, int to_stdout)
{
	struct dirent **entries;
	int n = scandir(dir, &entries, NULL, alphasort);
	int rc = 0, found = 0;

	if (n < 0) {
		fprintf(stderr, "wb-latency-text: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (name_is_latency_bin(entries[i]->d_name)) {
			found++;
			snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name);
			if ((to_stdout ? convert(path, stdout, "stdout") : convert_to_file(path, NULL)) < 0)
				rc = -1;
		}
		free(entries[i]);
	}
	free(entries);
	if (!found) {
		fprintf(stderr, "wb-latency-text: %s: no latency_*.bin files\n", dir);
		rc = -1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "stdout", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *output = NULL;
	int to_stdout = 0, opt, rc = 0;

	if (tool_version_option(argc, argv, "wb-latency-text"))
		return 0;
	while ((opt = getopt_long(argc, argv, "d:o:ch", options, NULL)) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 'o': output = optarg; break;
		case 'c': to_stdout = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if ((dir != NULL) == (optind < argc) || (output && (dir || argc - optind != 1)) ||
	    (output && to_stdout)) {
		usage(stderr);
		return 2;
	}
	if (dir)
		return convert_dir(dir, to_stdout) < 0 ? 1 : 0;
	for (int i = optind; i < argc; i++) {
		int r = to_stdout ? convert(argv[i], stdout, "stdout") : convert_to_file(argv[i], output);

		if (r < 0)
			rc = 1;
	}
	return rc;
}
