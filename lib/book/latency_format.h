/*
 * On-disk format of the per-feed latency logs (latency_<feed>.bin) that
 * lib/book/latency_log.c writes and tools/wb-latency-text.c and
 * latency-scripts/ read.
 *
 *   offset 0   struct latency_file_header   32 bytes
 *   offset 32  struct latency_sample[n]     48 bytes each, packed, in the
 *                                           order the builder recorded them
 *
 * All integers are little-endian (the host order of every supported
 * machine; a reader on a big-endian host must swap). The file has no
 * trailer and no sample count: a reader takes (size - 32) / 48 samples and
 * ignores a partial last record (the daemon was killed mid-write).
 *
 * Header fields:
 *   magic        "WBLATLOG" (8 bytes, no NUL)
 *   version      LATENCY_FILE_VERSION; a reader refuses any other value
 *   header_size  32; a later version may grow the header, samples start here
 *   sample_size  48 (sizeof struct latency_sample)
 *   venue        enum wb_venue of every sample in the file
 *   created_ns   CLOCK_REALTIME when the file was created
 *
 * Sample fields (struct latency_sample in latency_log.h): recv_ts,
 * ring_read_ts, book_applied_ts, published_ts are ns since the epoch
 * (CLOCK_REALTIME); 0 means the stage was not reached or not timed. Then
 * seq (u64), line (u16), venue (u8), 5 reserved bytes.
 */
#ifndef WIREBOOK_LATENCY_FORMAT_H
#define WIREBOOK_LATENCY_FORMAT_H

#include <stdint.h>
#include "book/latency_log.h"

#define LATENCY_FILE_MAGIC "WBLATLOG"
#define LATENCY_FILE_MAGIC_LEN 8
#define LATENCY_FILE_VERSION 1u

struct latency_file_header {
	char magic[LATENCY_FILE_MAGIC_LEN];
	uint32_t version;
	uint32_t header_size;
	uint32_t sample_size;
	uint8_t venue;
	uint8_t reserved[3];
	uint64_t created_ns;
};

_Static_assert(sizeof(struct latency_file_header) == 32, "latency file header layout");

#endif /* WIREBOOK_LATENCY_FORMAT_H */
