/*
 * wirebookd's event stream's shared-memory object: create, close, unlink;
 * see event_stream.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <numa.h>

#include "book/event_stream.h"
#include "book/futex.h"
#include "wirebook/errors.h"
#include "wirebook/events.h"

/* Close a ring and wake its sleepers, so its readers drain it and learn. */
static void stream_close_ring(void *mem)
{
	struct wb_ring_writer w;

	wb_ring_writer_init(&w, mem);
	if (wb_ring_writer_close(&w))
		futex_wake_shared_all(&w.cons->sleeping);
}

/* An older stream under our name: close it for its readers, unlink it. */
static void close_previous(const char *name)
{
	struct stat st;
	void *mem;
	int fd = shm_open(name, O_RDWR, 0);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= WB_RING_SLOTS_OFFSET) {
		mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem != MAP_FAILED) {
			if (wb_ring_check_kind(mem, (uint64_t)st.st_size, WB_RING_MAGIC_BROADCAST) ==
			    WB_RING_OK)
				stream_close_ring(mem);
			munmap(mem, (size_t)st.st_size);
		}
	}
	close(fd);
	shm_unlink(name);
}

int event_stream_create(struct event_stream *es, const char *book_name, uint32_t slots,
			int numa_node)
{
	struct timespec now;
	struct stat st;
	void *mem;
	int fd;

	memset(es, 0, sizeof(*es));
	if (!wb_ring_slot_count_valid(slots) || slots < EVENT_STREAM_MIN_SLOTS)
		return WB_EINVAL;
	snprintf(es->name, sizeof(es->name), "/%s%s", book_name + (book_name[0] == '/'),
		 WB_EVENTS_SHM_SUFFIX);
	close_previous(es->name);
	es->bytes = wb_ring_bytes(slots);
	fd = shm_open(es->name, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return errno == EACCES ? WB_EACCES : WB_ESYS;
	if (ftruncate(fd, (off_t)es->bytes) < 0 || fstat(fd, &st) < 0) {
		close(fd);
		shm_unlink(es->name);
		return WB_ESYS;
	}
	mem = mmap(NULL, es->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED) {
		shm_unlink(es->name);
		return WB_ESYS;
	}
	(void)madvise(mem, es->bytes, MADV_HUGEPAGE);
	if (numa_node >= 0 && numa_available() >= 0)
		numa_tonode_memory(mem, es->bytes, numa_node);
	/* Every page now, before any reader can see the magic: thread 1's
	 * first lap must not fault, nor find /dev/shm full (SIGBUS). */
	if (madvise(mem, es->bytes, MADV_POPULATE_WRITE) < 0) {
		if (errno != EINVAL) {	/* EINVAL: before Linux 5.14, touch them */
			int saved = errno;

			munmap(mem, es->bytes);
			shm_unlink(es->name);
			errno = saved;
			return WB_ESYS;
		}
		memset(mem, 0, es->bytes);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	wb_ring_format_kind(mem, slots, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec,
			    WB_RING_MAGIC_BROADCAST);
	wb_ring_writer_init(&es->writer, mem);
	es->mem = mem;
	es->dev = st.st_dev;
	es->ino = st.st_ino;
	return 0;
}

void event_stream_close(struct event_stream *es)
{
	if (es->mem && wb_ring_writer_close(&es->writer))
		futex_wake_shared_all(&es->writer.cons->sleeping);
}

void event_stream_destroy(struct event_stream *es)
{
	struct stat st;
	char path[300];

	if (!es->mem)
		return;
	event_stream_close(es);
	/* Unlink only our own object: a newer wirebookd may own the name. */
	snprintf(path, sizeof(path), "/dev/shm%s", es->name);
	if (stat(path, &st) == 0 && st.st_ino == es->ino && st.st_dev == es->dev)
		shm_unlink(es->name);
	munmap(es->mem, es->bytes);
	es->mem = NULL;
}
