/*
 * The Super-Book's shared-memory object: create, publish, retire, unlink;
 * see book_shm.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <numa.h>
#include <numaif.h>

#include "book/book_shm.h"
#include "book/superbook.h"
#include "wirebook/barrier.h"

static uint64_t shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Mark a mapped book retired: the header first, then every record, so a
 * reader mid-read sees its sequence move and rechecks. */
static void shm_retire_mapping(struct wb_shm_header *h, uint64_t size)
{
	char *records;
	uint64_t i, n;

	wb_store_release(&h->state, (uint32_t)WB_SHM_RETIRED);
	if (h->records_offset + (uint64_t)h->capacity * h->record_size > size ||
	    h->record_size != sizeof(struct wb_shm_symbol))
		return;
	records = (char *)h + h->records_offset;
	n = h->symbols < h->capacity ? h->symbols : h->capacity;
	for (i = 0; i < n; i++) {
		struct wb_shm_symbol *r = (struct wb_shm_symbol *)(records + i * h->record_size);

		wb_store_release(&r->seq, WB_SEQ_RETIRED);
	}
	if (h->sip_record_size != sizeof(struct wb_shm_sip) ||
	    h->sip_offset + (uint64_t)h->capacity * h->sip_record_size > size)
		return;
	records = (char *)h + h->sip_offset;
	for (i = 0; i < n; i++) {
		struct wb_shm_sip *r = (struct wb_shm_sip *)(records + i * h->sip_record_size);

		wb_store_release(&r->seq, WB_SEQ_RETIRED);
	}
	if (h->recovery_offset && h->recovery_offset + sizeof(struct wb_shm_recovery) <= size)
		wb_store_release(&((struct wb_shm_recovery *)((char *)h + h->recovery_offset))->seq,
				 WB_SEQ_RETIRED);
	if (h->nats_offset && h->nats_offset + sizeof(struct wb_shm_nats) <= size)
		wb_store_release(&((struct wb_shm_nats *)((char *)h + h->nats_offset))->seq,
				 WB_SEQ_RETIRED);
}

/* An old book under our name: retire it so its readers learn, unless a
 * live builder still owns it. */
static int shm_retire_previous(const char *name, int force)
{
	struct stat st;
	struct wb_shm_header *h;
	int fd, rc = 0;

	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		return errno == ENOENT ? 0 : WB_ESYS;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof(*h)) {
		h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (h != MAP_FAILED) {
			if (h->magic == WB_SHM_MAGIC && h->abi_version == WB_BOOK_ABI_VERSION) {
				pid_t pid = (pid_t)h->builder_pid;
				int alive = pid > 0 && pid != getpid() && h->state != WB_SHM_RETIRED &&
					    (kill(pid, 0) == 0 || errno == EPERM);

				if (alive && !force)
					rc = SUPERBOOK_EBUSY;
				else
					shm_retire_mapping(h, (uint64_t)st.st_size);
			} else if (h->magic == WB_SHM_MAGIC) {
				/* Another ABI: its readers check state at open only;
				 * the header state is all we may touch. */
				wb_store_release(&h->state, (uint32_t)WB_SHM_RETIRED);
			}
			munmap(h, (size_t)st.st_size);
		}
	}
	close(fd);
	if (rc == 0)
		shm_unlink(name);
	return rc;
}

int book_shm_create(struct book_shm *m, const char *name, uint32_t capacity, int numa_node,
		    int force)
{
	struct wb_shm_header *h;
	uint64_t dir_off, rec_off, sip_off, stats_off, recovery_off, recovery_size, nats_off, total;
	uint32_t cap = capacity;
	struct stat st;
	int fd, rc;
	void *mem;

	memset(m, 0, sizeof(*m));
	m->name[0] = '/';
	strcpy(m->name + 1, name + (name[0] == '/'));

	rc = shm_retire_previous(m->name, force);
	if (rc)
		return rc;

	dir_off = sizeof(struct wb_shm_header);
	rec_off = (dir_off + (uint64_t)cap * 8 + 4095) & ~4095ull;
	sip_off = (rec_off + (uint64_t)cap * sizeof(struct wb_shm_symbol) + 4095) & ~4095ull;
	stats_off = (sip_off + (uint64_t)cap * sizeof(struct wb_shm_sip) + 4095) & ~4095ull;
	recovery_off = (stats_off + sizeof(struct wb_shm_sipstats) + 4095) & ~4095ull;
	recovery_size = sizeof(struct wb_shm_recovery) + (uint64_t)cap * WB_BOOK_VENUES;
	nats_off = (recovery_off + recovery_size + 63) & ~63ull;
	total = nats_off + sizeof(struct wb_shm_nats);
	fd = shm_open(m->name, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return errno == EACCES ? WB_EACCES : WB_ESYS;
	if (ftruncate(fd, (off_t)total) < 0 || fstat(fd, &st) < 0) {
		close(fd);
		shm_unlink(m->name);
		return WB_ESYS;
	}
	mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED) {
		shm_unlink(m->name);
		return WB_ESYS;
	}
	/* Every publish writes a record far from the last one: on 4 KiB pages
	 * that is a TLB miss each. Huge pages where /dev/shm is mounted with
	 * huge=advise (or always, within_size; wb-tune checks it); elsewhere
	 * the advice is ignored. */
	(void)madvise(mem, total, MADV_HUGEPAGE);
	/* The pages are first touched by the publishing thread; bind them to
	 * its node so readers on that node read local memory. */
	if (numa_node >= 0 && numa_available() >= 0)
		numa_tonode_memory(mem, total, numa_node);

	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->size = total;
	h = m->hdr = mem;
	m->dir = (uint64_t *)((char *)mem + dir_off);
	m->records = (char *)mem + rec_off;
	m->sip = (struct wb_shm_sip *)((char *)mem + sip_off);
	m->sipstats = (struct wb_shm_sipstats *)((char *)mem + stats_off);
	m->recovery = (struct wb_shm_recovery *)((char *)mem + recovery_off);
	m->symbol_stream = (uint8_t *)mem + recovery_off + sizeof(struct wb_shm_recovery);
	m->nats = (struct wb_shm_nats *)((char *)mem + nats_off);
	h->abi_version = WB_BOOK_ABI_VERSION;
	h->header_size = sizeof(*h);
	h->record_size = sizeof(struct wb_shm_symbol);
	h->capacity = cap;
	h->depth = WB_BOOK_DEPTH;
	h->venue_slots = WB_BOOK_VENUES;
	h->total_size = total;
	h->dir_offset = dir_off;
	h->records_offset = rec_off;
	h->sip_offset = sip_off;
	h->sip_record_size = sizeof(struct wb_shm_sip);
	h->sipstats_offset = stats_off;
	h->sipstats_size = sizeof(struct wb_shm_sipstats);
	h->recovery_offset = recovery_off;
	h->recovery_size = recovery_size;
	h->nats_offset = nats_off;
	h->nats_size = sizeof(struct wb_shm_nats);
	h->created_ns = shm_now_ns();
	h->instance_id = h->created_ns ^ ((uint64_t)getpid() << 40) ^ (uint64_t)st.st_ino;
	h->builder_pid = (uint32_t)getpid();
	h->symbols = 1;
	h->heartbeat_ns = h->created_ns;
	h->state = WB_SHM_LIVE;
	wb_store_release(&h->magic, WB_SHM_MAGIC);
	return 0;
}

int book_shm_prefault(const struct book_shm *m, void *p, size_t len)
{
	uintptr_t base = (uintptr_t)m->hdr, first = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t end = (uintptr_t)p + len;

	if (!m->hdr || (uintptr_t)p < base || end < (uintptr_t)p || end > base + m->size)
		return -EINVAL;
	if (madvise((void *)first, end - first, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;	/* no memory, or no room left in /dev/shm */
	/* Before Linux 5.14: a write fault per page that changes no byte (a
	 * reader may be reading them). */
	for (uintptr_t a = first; a < end; a += 4096)
		__atomic_fetch_add((uint8_t *)(a > (uintptr_t)p ? a : (uintptr_t)p), 0, __ATOMIC_RELAXED);
	return 0;
}

void book_shm_destroy(struct book_shm *m)
{
	struct stat st;
	char path[300];

	if (!m->hdr)
		return;
	shm_retire_mapping(m->hdr, m->size);
	/* Unlink only our own object: a newer builder may own the name. */
	snprintf(path, sizeof(path), "/dev/shm%s", m->name);
	if (stat(path, &st) == 0 && st.st_ino == m->ino && st.st_dev == m->dev)
		shm_unlink(m->name);
	munmap(m->hdr, m->size);
	m->hdr = NULL;
}
