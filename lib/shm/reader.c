/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libwirebook: attach read-only to the books wirebookd publishes and read
 * them without locks. The layout and the seqlock protocol are described
 * in include/wirebook/book.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_layout.h"
#include "wirebook/barrier.h"

/* A writer holds a record odd for well under a microsecond; a record odd
 * for this many looks means the builder died mid-write. */
#define WB_READ_SPINS (1u << 20)

struct wb_book {
	/* hot: what every read touches */
	const char *records;
	uint32_t capacity;
	uint32_t record_size;
	int32_t *xlat;		/* after a restart: reader index -> index in this
				 * book (0: not there yet); NULL before any */
	const struct wb_shm_header *hdr;
	const uint64_t *dir;
	uint64_t map_size;
	uint64_t instance_id;
	dev_t dev;
	ino_t ino;
	/* The reader's symbol indices, kept across restarts: the first
	 * book's, then tickers found since appended. */
	uint64_t *keys;		/* reader index -> ticker key */
	uint32_t *hash;		/* ticker key -> reader index (open addressing) */
	uint32_t nkeys;		/* highest reader index + 1 */
	uint32_t keys_cap;	/* entries of keys and xlat; hash has 2x */
	uint32_t synced;	/* book indices below this are in keys */
	uint32_t reattaches;
	uint64_t next_attempt_ns;
	/* the SIP view (ABI 4) */
	const char *sip_records;
	const struct wb_shm_sipstats *sipstats;
	/* gap recovery (libwirebook 1.3): NULL from a builder without it */
	const struct wb_shm_recovery *recovery;
	const uint8_t *symbol_stream;	/* [capacity][WB_BOOK_VENUES] */
	/* NATS counters (libwirebook 1.5): NULL from a builder without them */
	const struct wb_shm_nats *nats;
	char name[256];
};

static uint64_t wb_mono_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wb_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void wb_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static int wb_attach(struct wb_book *b)
{
	struct stat st;
	const struct wb_shm_header *h;
	int fd, err = WB_OK;
	void *mem;

	fd = shm_open(b->name, O_RDONLY, 0);
	if (fd < 0)
		return errno == ENOENT ? WB_ENOSHM : errno == EACCES ? WB_EACCES : WB_ESYS;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return WB_ESYS;
	}
	if (st.st_size == 0) {
		/* wirebookd has created the object but not sized it yet. */
		close(fd);
		return WB_ENOSHM;
	}
	if ((uint64_t)st.st_size < sizeof(struct wb_shm_header)) {
		close(fd);
		return WB_EBADMAGIC;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED)
		return WB_ESYS;
	h = mem;
	/* Magic is stored last by the builder (release): once it is there,
	 * the geometry below it is final. */
	if (wb_load_acquire(&h->magic) == 0)
		err = WB_ENOSHM; /* being laid out: the magic is stored last */
	else if (wb_load_acquire(&h->magic) != WB_SHM_MAGIC)
		err = WB_EBADMAGIC;
	else if (h->abi_version != WB_BOOK_ABI_VERSION ||
		 h->header_size != sizeof(struct wb_shm_header) ||
		 h->record_size != sizeof(struct wb_shm_symbol) ||
		 h->depth != WB_BOOK_DEPTH || h->venue_slots != WB_BOOK_VENUES)
		err = WB_EABI;
	else if (h->total_size > (uint64_t)st.st_size || h->capacity < 2 ||
		 h->dir_offset + (uint64_t)h->capacity * 8 > h->total_size ||
		 h->records_offset % 64 ||
		 h->records_offset + (uint64_t)h->capacity * h->record_size > h->total_size ||
		 h->sip_record_size != sizeof(struct wb_shm_sip) || h->sip_offset % 64 ||
		 h->sip_offset + (uint64_t)h->capacity * h->sip_record_size > h->total_size ||
		 h->sipstats_size != sizeof(struct wb_shm_sipstats) || h->sipstats_offset % 64 ||
		 h->sipstats_offset + h->sipstats_size > h->total_size)
		err = WB_EBADMAGIC;
	else if (wb_load_acquire(&h->state) == WB_SHM_RETIRED)
		err = WB_ESTALE;
	if (err) {
		munmap(mem, (size_t)st.st_size);
		return err;
	}
	b->hdr = h;
	b->map_size = (uint64_t)st.st_size;
	b->dir = (const uint64_t *)((const char *)mem + h->dir_offset);
	b->records = (const char *)mem + h->records_offset;
	b->sip_records = (const char *)mem + h->sip_offset;
	b->sipstats = (const struct wb_shm_sipstats *)((const char *)mem + h->sipstats_offset);
	/* An older builder left recovery_offset 0 (its pad): no table. */
	b->recovery = NULL;
	b->symbol_stream = NULL;
	if (h->recovery_offset && h->recovery_offset % 64 == 0 &&
	    h->recovery_size == sizeof(struct wb_shm_recovery) + (uint64_t)h->capacity * WB_BOOK_VENUES &&
	    h->recovery_offset + h->recovery_size <= h->total_size) {
		b->recovery = (const struct wb_shm_recovery *)((const char *)mem + h->recovery_offset);
		b->symbol_stream = (const uint8_t *)mem + h->recovery_offset +
				   sizeof(struct wb_shm_recovery);
	}
	/* As the recovery table: an older builder's pad was 0. */
	b->nats = NULL;
	if (h->nats_offset && h->nats_offset % 64 == 0 && h->nats_size == sizeof(struct wb_shm_nats) &&
	    h->nats_offset + h->nats_size <= h->total_size)
		b->nats = (const struct wb_shm_nats *)((const char *)mem + h->nats_offset);
	b->capacity = h->capacity;
	b->record_size = h->record_size;
	b->instance_id = h->instance_id;
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	return WB_OK;
}

static void wb_detach(struct wb_book *b)
{
	if (b->hdr)
		munmap((void *)b->hdr, b->map_size);
	b->hdr = NULL;
	b->capacity = 1;	/* every index check now fails */
}

/* ---- restarts: one index space across books ------------------------------ */

static inline uint32_t wb_key_slot(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

/* The reader index of key, or 0. */
static uint32_t wb_key_find(const struct wb_book *b, uint64_t key)
{
	uint32_t mask = 2 * b->keys_cap - 1, i = wb_key_slot(key, mask), r;

	while ((r = b->hash[i]) != 0) {
		if (b->keys[r] == key)
			return r;
		i = (i + 1) & mask;
	}
	return 0;
}

static int wb_keys_grow(struct wb_book *b, uint32_t need)
{
	uint32_t cap = b->keys_cap ? b->keys_cap : 64, i;
	uint64_t *keys;
	int32_t *xlat;
	uint32_t *hash;

	while (cap < need)
		cap *= 2;
	if (cap == b->keys_cap)
		return 0;
	keys = calloc(cap, sizeof(*keys));
	xlat = calloc(cap, sizeof(*xlat));
	hash = calloc(2 * (size_t)cap, sizeof(*hash));
	if (!keys || !xlat || !hash) {
		free(keys);
		free(xlat);
		free(hash);
		return WB_ESYS;
	}
	if (b->keys) {
		memcpy(keys, b->keys, b->nkeys * sizeof(*keys));
		memcpy(xlat, b->xlat, b->nkeys * sizeof(*xlat));
	}
	free(b->keys);
	free(b->xlat);
	free(b->hash);
	b->keys = keys;
	b->xlat = xlat;
	b->hash = hash;
	b->keys_cap = cap;
	for (i = 1; i < b->nkeys; i++) {
		uint32_t mask = 2 * cap - 1, h = wb_key_slot(keys[i], mask);

		if (!keys[i])
			continue;
		while (hash[h])
			h = (h + 1) & mask;
		hash[h] = i;
	}
	return 0;
}

/* Reader index for key (appended when new), or 0 when out of memory. */
static uint32_t wb_key_intern(struct wb_book *b, uint64_t key)
{
	uint32_t r = wb_key_find(b, key), mask, h;

	if (r)
		return r;
	if (b->nkeys + 1 > b->keys_cap && wb_keys_grow(b, b->nkeys + 1))
		return 0;
	r = b->nkeys++;
	b->keys[r] = key;
	b->xlat[r] = 0;
	mask = 2 * b->keys_cap - 1;
	h = wb_key_slot(key, mask);
	while (b->hash[h])
		h = (h + 1) & mask;
	b->hash[h] = r;
	return r;
}

/* Map the tickers the book has gained since the last look. */
static void wb_sync(struct wb_book *b)
{
	uint64_t n = wb_load_acquire(&b->hdr->symbols);
	uint32_t j, first_hole = 0;

	if (n > b->capacity)
		n = b->capacity;
	for (j = b->synced; j < n; j++) {
		uint64_t key = wb_load_acquire(&b->dir[j]);
		uint32_t r;

		if (!key) {	/* data before its ticker: look again next time */
			if (!first_hole)
				first_hole = j;
			continue;
		}
		r = wb_key_intern(b, key);
		if (r)
			b->xlat[r] = (int32_t)j;
	}
	b->synced = first_hole ? first_hole : (uint32_t)n;
}

/* A reader index to the mapped book's index, after a restart. */
static int wb_translate(struct wb_book *b, int sym)
{
	if ((unsigned)sym - 1u >= b->nkeys - 1u)
		return WB_EINVAL;
	if (b->xlat[sym] <= 0)
		wb_sync(b);
	return b->xlat[sym] > 0 ? b->xlat[sym] : WB_ESTALE;
}

/*
 * Follow a restart: attach to the book now under our name and carry the
 * reader's symbol indices over. The old mapping stays until the new one
 * is attached, so a failure leaves the handle as it was. At most one try
 * per WB_REATTACH_INTERVAL_NS unless now.
 */
static int wb_reattach(struct wb_book *b, int now)
{
	struct wb_book nb;
	uint64_t t = wb_mono_coarse_ns(), i, n;
	int rc;

	if (!now && t < b->next_attempt_ns)
		return WB_ESTALE;
	b->next_attempt_ns = t + WB_REATTACH_INTERVAL_NS;
	memset(&nb, 0, sizeof(nb));
	memcpy(nb.name, b->name, sizeof(nb.name));
	rc = wb_attach(&nb);
	if (rc)
		return rc == WB_ENOSHM ? WB_ESTALE : rc;
	if (b->hdr && nb.dev == b->dev && nb.ino == b->ino) {
		munmap((void *)nb.hdr, nb.map_size); /* the same live book */
		return WB_OK;
	}
	if (!b->xlat && b->hdr) {
		/* First restart: the reader's indices are the old book's. */
		n = wb_load_acquire(&b->hdr->symbols);
		if (n > b->capacity)
			n = b->capacity;
		if (wb_keys_grow(b, (uint32_t)n + 1)) {
			munmap((void *)nb.hdr, nb.map_size);
			return WB_ESYS;
		}
		b->nkeys = 1;
		for (i = 1; i < n; i++) {
			uint64_t key = wb_load_acquire(&b->dir[i]);
			uint32_t mask = 2 * b->keys_cap - 1, h;

			b->keys[i] = key;
			b->nkeys = (uint32_t)i + 1;
			if (!key || wb_key_find(b, key))
				continue;
			h = wb_key_slot(key, mask);
			while (b->hash[h])
				h = (h + 1) & mask;
			b->hash[h] = (uint32_t)i;
		}
	} else if (!b->xlat && wb_keys_grow(b, 2)) {
		munmap((void *)nb.hdr, nb.map_size);
		return WB_ESYS;
	} else if (!b->xlat) {
		b->nkeys = 1;
	}
	wb_detach(b);
	b->hdr = nb.hdr;
	b->map_size = nb.map_size;
	b->dir = nb.dir;
	b->records = nb.records;
	/* every pointer into the mapping: the old one is gone */
	b->sip_records = nb.sip_records;
	b->sipstats = nb.sipstats;
	b->recovery = nb.recovery;
	b->symbol_stream = nb.symbol_stream;
	b->nats = nb.nats;
	b->capacity = nb.capacity;
	b->record_size = nb.record_size;
	b->instance_id = nb.instance_id;
	b->dev = nb.dev;
	b->ino = nb.ino;
	memset(b->xlat, 0, b->keys_cap * sizeof(*b->xlat));
	b->synced = 1;
	wb_sync(b);
	b->reattaches++;
	return WB_OK;
}

/* Why the name cannot be attached now (for wb_reopen's answer). */
static int wb_attach_error(struct wb_book *b)
{
	struct wb_book nb;
	int rc;

	memset(&nb, 0, sizeof(nb));
	memcpy(nb.name, b->name, sizeof(nb.name));
	rc = wb_attach(&nb);
	if (rc == WB_OK) {
		munmap((void *)nb.hdr, nb.map_size);
		return WB_ESTALE;
	}
	return rc;
}

/* True when the object under our name is no longer the one mapped. */
static int wb_replaced(const struct wb_book *b)
{
	struct stat st;
	char path[300];

	snprintf(path, sizeof(path), "/dev/shm%s", b->name);
	if (stat(path, &st) < 0)
		return 0; /* gone (exited: it retired its book) or no /dev/shm: cannot tell */
	return st.st_ino != b->ino || st.st_dev != b->dev;
}

struct wb_book *wb_open(const char *name, int *err)
{
	struct wb_book *b;
	int rc;

	if (!name)
		name = WB_SHM_DEFAULT_NAME;
	if (!*name || strlen(name) > 200 || strchr(name + (name[0] == '/'), '/')) {
		if (err)
			*err = WB_EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		if (err)
			*err = WB_ESYS;
		return NULL;
	}
	b->name[0] = '/';
	strcpy(b->name + 1, name + (name[0] == '/'));
	rc = wb_attach(b);
	if (rc) {
		free(b);
		b = NULL;
	}
	if (err)
		*err = rc;
	return b;
}

void wb_close(struct wb_book *book)
{
	if (!book)
		return;
	wb_detach(book);
	free(book->keys);
	free(book->xlat);
	free(book->hash);
	free(book);
}

int wb_reopen(struct wb_book *book)
{
	if (!book)
		return WB_EINVAL;
	return wb_reattach(book, 1) == WB_OK ? WB_OK : wb_attach_error(book);
}

int wb_state(const struct wb_book *book)
{
	if (!book || !book->hdr)
		return WB_EINVAL;
	return (int)wb_load_acquire(&book->hdr->state);
}

int wb_check(struct wb_book *book)
{
	if (!book || !book->hdr)
		return WB_EINVAL;
	/* A builder that crashed never retired its object; the next one
	 * may have replaced it under the same name. */
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED || wb_replaced(book))
		return wb_reattach(book, 1) == WB_OK ? WB_OK : WB_ESTALE;
	return WB_OK;
}

uint64_t wb_stale_after_ns(const struct wb_book *book)
{
	uint64_t period, after = WB_STALE_MIN_NS;

	if (book && book->hdr) {
		period = wb_load_relaxed(&book->hdr->heartbeat_period_ns);
		if (period && period < WB_STALE_MIN_NS && period * WB_STALE_PERIODS > after)
			after = period * WB_STALE_PERIODS;
	}
	return after;
}

int wb_health(struct wb_book *book, struct wb_health *out)
{
	struct wb_health h;
	const struct wb_shm_header *hd;
	uint64_t now, newest = 0;
	int v;

	if (!book || !book->hdr)
		return WB_EINVAL;
	wb_check(book);		/* follow a restart if there was one */
	hd = book->hdr;
	memset(&h, 0, sizeof(h));
	now = wb_wall_ns();
	h.shm_state = wb_load_acquire(&hd->state);
	h.heartbeat_ns = wb_load_relaxed(&hd->heartbeat_ns);
	h.age_ns = now > h.heartbeat_ns ? now - h.heartbeat_ns : 0;
	h.stale_after_ns = wb_stale_after_ns(book);
	for (v = 1; v < WB_BOOK_VENUES; v++) {
		uint64_t t = wb_load_relaxed(&hd->venue_recv_ns[v]);

		newest = t > newest ? t : newest;
	}
	h.last_update_age_ns = newest && now > newest ? now - newest : 0;
	h.writer_pid = hd->builder_pid;
	h.writer_alive = -1;
	if (h.writer_pid > 0) {
		if (kill((pid_t)h.writer_pid, 0) == 0 || errno == EPERM)
			h.writer_alive = 1;
		else if (errno == ESRCH)
			h.writer_alive = 0;
	}
	h.recovering_venues = wb_load_relaxed(&hd->recovering_venues);
	h.reattaches = book->reattaches;
	h.instance_id = book->instance_id;
	/* The heartbeat decides: a pid may belong to another pid namespace. */
	if (h.shm_state == WB_SHM_RETIRED)
		h.state = WB_BOOK_RETIRED;
	else if (h.age_ns > h.stale_after_ns)
		h.state = WB_BOOK_STALE;
	else if (h.recovering_venues)
		h.state = WB_BOOK_RECOVERING;
	else
		h.state = WB_BOOK_LIVE;
	if (out)
		*out = h;
	return h.state;
}

const char *wb_health_name(int state)
{
	switch (state) {
	case WB_BOOK_LIVE: return "live";
	case WB_BOOK_STALE: return "stale";
	case WB_BOOK_RETIRED: return "retired";
	case WB_BOOK_RECOVERING: return "recovering";
	default: return "unknown";
	}
}

static inline const struct wb_shm_symbol *wb_record(const struct wb_book *b, int sym)
{
	return (const struct wb_shm_symbol *)(b->records + (size_t)sym * b->record_size);
}

/* The slow half of the index check, out of the read path: a bad handle or
 * index, or a handle that followed a restart (its indices translate). */
static __attribute__((noinline, cold)) int wb_slow_index(const struct wb_book *b, int sym)
{
	int j;

	if (!b)
		return WB_EINVAL;
	if (!b->xlat)
		return WB_EINVAL;	/* out of range */
	j = wb_translate((struct wb_book *)b, sym);
	if (j > 0 && (unsigned)j - 1u >= b->capacity - 1u)
		return WB_EINVAL;
	return j;
}

/* The record index of sym, or a negative error: one predictable branch
 * when the handle never followed a restart. The prologue of every read. */
static inline __attribute__((always_inline)) int wb_record_index(const struct wb_book *b, int sym)
{
	if (wb_unlikely(!b || b->xlat || (unsigned)sym - 1u >= b->capacity - 1u))
		return wb_slow_index(b, sym);
	return sym;
}

/* Out of the read path: follow a restart; 1 when the read should be tried
 * again on the new book. */
static __attribute__((noinline, cold)) int wb_follow_restart(const struct wb_book *b)
{
	return b && wb_reattach((struct wb_book *)b, 0) == WB_OK;
}

/*
 * A read that finds the book retired follows the restart (rate-limited)
 * and reads once more: true when it should. The handle is the caller's
 * alone (see wb_open), so the const the read API promises is about the
 * book, not the handle.
 */
static inline int wb_read_again(const struct wb_book *b, int rc)
{
	return wb_unlikely(rc == WB_ESTALE) && wb_follow_restart(b);
}

/*
 * The seqlock read, for any record led by its sequence word: begin
 * returns the even sequence to copy under, or an odd one when the record
 * is retired or its writer stalled (wb_odd_error says which); torn says
 * whether what was copied since must be copied again. The acquire fence
 * keeps the data loads before the second sequence load.
 */
static inline uint64_t wb_read_begin(const uint64_t *seq, unsigned *spins)
{
	uint64_t s;

	while ((s = wb_load_acquire(seq)) & 1) {
		if (s == WB_SEQ_RETIRED || ++*spins > WB_READ_SPINS)
			return s;
		wb_cpu_relax();
	}
	return s;
}

static inline int wb_read_torn(const uint64_t *seq, uint64_t s, unsigned *spins)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return wb_unlikely(wb_load_relaxed(seq) != s) && ++*spins;
}

static inline int wb_odd_error(uint64_t s)
{
	return s == WB_SEQ_RETIRED ? WB_ESTALE : WB_EBUSY;
}

static inline __attribute__((always_inline)) int wb_top_once(const struct wb_book *book, int sym, struct wb_top *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_symbol *r;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (wb_unlikely(!out))
		return WB_EINVAL;
	do {
		seq = wb_read_begin(&r->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		out->bid_price = r->bid_price;
		out->bid_qty = r->bid_qty;
		out->ask_price = r->ask_price;
		out->ask_qty = r->ask_qty;
		out->updates = r->updates;
		out->flags = r->flags;
		out->state = r->state;
	} while (wb_read_torn(&r->seq, seq, &spins));
	return WB_OK;
}

int wb_top(const struct wb_book *book, int sym, struct wb_top *out)
{
	int rc = wb_top_once(book, sym, out);

	if (wb_read_again(book, rc))
		rc = wb_top_once(book, sym, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_nbbo_once(const struct wb_book *book, int sym, struct wb_nbbo *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_symbol *r;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (!out)
		return WB_EINVAL;
	do {
		seq = wb_read_begin(&r->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		out->bid_price = r->bid_price;
		out->bid_qty = r->bid_qty;
		out->ask_price = r->ask_price;
		out->ask_qty = r->ask_qty;
		out->bid_venues = r->bid_venues;
		out->ask_venues = r->ask_venues;
		out->flags = r->flags;
		out->state = r->state;
		out->updates = r->updates;
		out->exch_ts = r->exch_ts;
		out->recv_ts = r->recv_ts;
	} while (wb_read_torn(&r->seq, seq, &spins));
	return WB_OK;
}

int wb_nbbo(const struct wb_book *book, int sym, struct wb_nbbo *out)
{
	int rc = wb_nbbo_once(book, sym, out);

	if (wb_read_again(book, rc))
		rc = wb_nbbo_once(book, sym, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_depth_once(const struct wb_book *book, int sym, int venue, unsigned n, struct wb_depth *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_symbol *r;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (!out || venue < 0 || venue >= WB_BOOK_VENUES || n > WB_BOOK_DEPTH)
		return WB_EINVAL;
	if (venue == WB_CONSOLIDATED) {
		do {
			seq = wb_read_begin(&r->seq, &spins);
			if (wb_unlikely(seq & 1))
				return wb_odd_error(seq);
			unsigned nb = r->bid_count < n ? r->bid_count : n;
			unsigned na = r->ask_count < n ? r->ask_count : n;

			out->bid_count = (uint8_t)nb;
			out->ask_count = (uint8_t)na;
			out->flags = r->flags;
			out->updates = r->updates;
			memcpy(out->bid, r->bid, nb * sizeof(r->bid[0]));
			memcpy(out->ask, r->ask, na * sizeof(r->ask[0]));
			memcpy(out->bid_venue_qty, r->bid_venue_qty, sizeof(out->bid_venue_qty));
			memcpy(out->ask_venue_qty, r->ask_venue_qty, sizeof(out->ask_venue_qty));
		} while (wb_read_torn(&r->seq, seq, &spins));
	} else {
		const struct wb_shm_venue *v = &r->venue[venue];

		do {
			seq = wb_read_begin(&r->seq, &spins);
			if (wb_unlikely(seq & 1))
				return wb_odd_error(seq);
			unsigned nb = v->bid_count < n ? v->bid_count : n;
			unsigned na = v->ask_count < n ? v->ask_count : n;

			out->bid_count = (uint8_t)nb;
			out->ask_count = (uint8_t)na;
			out->flags = v->flags;
			out->updates = r->updates;
			memcpy(out->bid, v->bid, nb * sizeof(v->bid[0]));
			memcpy(out->ask, v->ask, na * sizeof(v->ask[0]));
		} while (wb_read_torn(&r->seq, seq, &spins));
		memset(out->bid_venue_qty, 0, sizeof(out->bid_venue_qty));
		memset(out->ask_venue_qty, 0, sizeof(out->ask_venue_qty));
	}
	/* A torn count cannot survive the retry, but never trust a count
	 * beyond what was copied either. */
	if (out->bid_count > n || out->ask_count > n)
		return WB_EBUSY;
	if (venue == WB_CONSOLIDATED) {
		/* Entries past the levels asked for are stale builder memory. */
		int v;

		for (v = 0; v < WB_BOOK_VENUES; v++) {
			memset(&out->bid_venue_qty[v][out->bid_count], 0,
			       (WB_BOOK_DEPTH - out->bid_count) * sizeof(uint64_t));
			memset(&out->ask_venue_qty[v][out->ask_count], 0,
			       (WB_BOOK_DEPTH - out->ask_count) * sizeof(uint64_t));
		}
	}
	out->venue = (uint8_t)venue;
	return WB_OK;
}

int wb_depth(const struct wb_book *book, int sym, int venue, unsigned n, struct wb_depth *out)
{
	int rc = wb_depth_once(book, sym, venue, n, out);

	if (wb_read_again(book, rc))
		rc = wb_depth_once(book, sym, venue, n, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_venue_bbo_once(const struct wb_book *book, int sym, int venue, struct wb_venue_bbo *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_symbol *r;
	const struct wb_shm_venue *v;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (!out || venue <= 0 || venue >= WB_BOOK_VENUES)
		return WB_EINVAL;
	v = &r->venue[venue];
	do {
		seq = wb_read_begin(&r->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		int hb = v->bid_count > 0, ha = v->ask_count > 0;

		out->bid_price = hb ? v->bid[0].price : 0;
		out->bid_qty = hb ? v->bid[0].qty : 0;
		out->bid_orders = hb ? v->bid[0].orders : 0;
		out->ask_price = ha ? v->ask[0].price : 0;
		out->ask_qty = ha ? v->ask[0].qty : 0;
		out->ask_orders = ha ? v->ask[0].orders : 0;
		out->flags = v->flags;
		out->state = v->state;
		out->gaps = v->gaps;
		out->exch_ts = v->exch_ts;
	} while (wb_read_torn(&r->seq, seq, &spins));
	return WB_OK;
}

int wb_venue_bbo(const struct wb_book *book, int sym, int venue, struct wb_venue_bbo *out)
{
	int rc = wb_venue_bbo_once(book, sym, venue, out);

	if (wb_read_again(book, rc))
		rc = wb_venue_bbo_once(book, sym, venue, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_last_trade_once(const struct wb_book *book, int sym, struct wb_trade *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_symbol *r;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (!out)
		return WB_EINVAL;
	do {
		seq = wb_read_begin(&r->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		*out = r->last_trade;
	} while (wb_read_torn(&r->seq, seq, &spins));
	return WB_OK;
}

int wb_last_trade(const struct wb_book *book, int sym, struct wb_trade *out)
{
	int rc = wb_last_trade_once(book, sym, out);

	if (wb_read_again(book, rc))
		rc = wb_last_trade_once(book, sym, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_venue_status_once(const struct wb_book *book, int venue, struct wb_venue_status *out)
{
	if (!book || !book->hdr || !out || venue <= 0 || venue >= WB_BOOK_VENUES)
		return WB_EINVAL;
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	/* Two independent counters: no snapshot consistency needed. */
	out->gaps = wb_load_relaxed(&book->hdr->venue_gaps[venue]);
	out->last_recv_ns = wb_load_relaxed(&book->hdr->venue_recv_ns[venue]);
	out->recovering = (wb_load_relaxed(&book->hdr->recovering_venues) >> venue) & 1u;
	return WB_OK;
}

int wb_venue_status(const struct wb_book *book, int venue, struct wb_venue_status *out)
{
	int rc = wb_venue_status_once(book, venue, out);

	if (wb_read_again(book, rc))
		rc = wb_venue_status_once(book, venue, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_status_once(const struct wb_book *book, int sym, struct wb_status *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_symbol *r;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (!out)
		return WB_EINVAL;
	do {
		seq = wb_read_begin(&r->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		out->state = r->state;
		out->raw_state = r->raw_state;
		memcpy(out->reason, r->reason, sizeof(out->reason));
		out->venue = r->state_venue;
		out->flags = r->flags;
	} while (wb_read_torn(&r->seq, seq, &spins));
	return WB_OK;
}

int wb_status(const struct wb_book *book, int sym, struct wb_status *out)
{
	int rc = wb_status_once(book, sym, out);

	if (wb_read_again(book, rc))
		rc = wb_status_once(book, sym, out);
	return rc;
}

static inline __attribute__((always_inline)) int wb_update_counter_once(const struct wb_book *book, int sym, uint64_t *out)
{
	const struct wb_shm_symbol *r;

	if (!book || !out || !book->hdr)
		return WB_EINVAL;
	if (sym == WB_ANY_SYMBOL) {
		if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
			return WB_ESTALE;
		*out = wb_load_acquire(&book->hdr->updates);
		return WB_OK;
	}
	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	/* The counter is one aligned word: no seqlock needed, but a retired
	 * record must still say so. */
	if (wb_load_acquire(&r->seq) == WB_SEQ_RETIRED)
		return WB_ESTALE;
	*out = wb_load_acquire(&r->updates);
	return WB_OK;
}

int wb_update_counter(const struct wb_book *book, int sym, uint64_t *out)
{
	int rc = wb_update_counter_once(book, sym, out);

	if (wb_read_again(book, rc))
		rc = wb_update_counter_once(book, sym, out);
	return rc;
}

/* ---- the SIP view ------------------------------------------------------- */

static inline const struct wb_shm_sip *wb_sip_record(const struct wb_book *b, int sym)
{
	return (const struct wb_shm_sip *)(b->sip_records + (size_t)sym * sizeof(struct wb_shm_sip));
}

static int wb_sip_view_once(const struct wb_book *book, int sym, struct wb_sip_view *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_sip *p;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	if (!out)
		return WB_EINVAL;
	p = wb_sip_record(book, sym);
	do {
		seq = wb_read_begin(&p->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		memcpy(out, &p->v, sizeof(*out));
	} while (wb_read_torn(&p->seq, seq, &spins));
	return out->updates ? WB_OK : WB_ENOSYM;
}

int wb_sip_view(const struct wb_book *book, int sym, struct wb_sip_view *out)
{
	int rc = wb_sip_view_once(book, sym, out);

	if (wb_read_again(book, rc))
		rc = wb_sip_view_once(book, sym, out);
	return rc;
}

static int wb_sip_quote_once(const struct wb_book *book, int sym, int venue, struct wb_sip_quote *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_sip *p;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	if (!out || venue <= 0 || venue >= WB_BOOK_VENUES)
		return WB_EINVAL;
	p = wb_sip_record(book, sym);
	do {
		seq = wb_read_begin(&p->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		*out = p->v.quote[venue];
	} while (wb_read_torn(&p->seq, seq, &spins));
	return WB_OK;
}

int wb_sip_quote(const struct wb_book *book, int sym, int venue, struct wb_sip_quote *out)
{
	int rc = wb_sip_quote_once(book, sym, venue, out);

	if (wb_read_again(book, rc))
		rc = wb_sip_quote_once(book, sym, venue, out);
	return rc;
}

static int wb_sip_nbbo_once(const struct wb_book *book, int sym, struct wb_sip_nbbo *out, uint32_t *flags)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_sip *p;
	uint32_t f = 0;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	if (!out)
		return WB_EINVAL;
	p = wb_sip_record(book, sym);
	do {
		seq = wb_read_begin(&p->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		*out = p->v.nbbo;
		f = p->v.flags;
	} while (wb_read_torn(&p->seq, seq, &spins));
	if (flags)
		*flags = f;
	return WB_OK;
}

int wb_sip_nbbo(const struct wb_book *book, int sym, struct wb_sip_nbbo *out, uint32_t *flags)
{
	int rc = wb_sip_nbbo_once(book, sym, out, flags);

	if (wb_read_again(book, rc))
		rc = wb_sip_nbbo_once(book, sym, out, flags);
	return rc;
}

/* Copy n 64-bit counters the builder stores one at a time. */
static void wb_copy_counters(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = wb_load_relaxed(&src[i]);
}

static int wb_sip_summary_once(const struct wb_book *book, struct wb_sip_summary *out)
{
	const struct wb_sip_status *m;
	uint64_t ts;

	if (!book || !book->hdr || !out)
		return WB_EINVAL;
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	WB_STATIC_ASSERT(offsetof(struct wb_sip_summary, mwcb) % 8 == 0, "counters first");
	wb_copy_counters((uint64_t *)out, (const uint64_t *)&book->sipstats->summary,
			 offsetof(struct wb_sip_summary, mwcb) / 8);
	/* the market-wide status: sip_ts is 0 while the builder writes it */
	m = &book->sipstats->summary.mwcb;
	for (unsigned spins = 0; spins < WB_READ_SPINS; spins++) {
		ts = wb_load_acquire(&m->sip_ts);
		out->mwcb = *m;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (ts == wb_load_relaxed(&m->sip_ts) && (ts || !out->mwcb.recv_ts)) {
			out->mwcb.sip_ts = ts;
			return WB_OK;
		}
	}
	return WB_EBUSY;
}

int wb_sip_summary(const struct wb_book *book, struct wb_sip_summary *out)
{
	int rc = wb_sip_summary_once(book, out);

	if (wb_read_again(book, rc))
		rc = wb_sip_summary_once(book, out);
	return rc;
}

static int wb_sip_venue_stats_once(const struct wb_book *book, int venue, struct wb_sip_venue_stats *out)
{
	if (!book || !book->hdr || !out || venue <= 0 || venue >= WB_BOOK_VENUES)
		return WB_EINVAL;
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	WB_STATIC_ASSERT(sizeof(struct wb_sip_venue_stats) % 8 == 0, "counters only");
	wb_copy_counters((uint64_t *)out, (const uint64_t *)&book->sipstats->venue[venue],
			 sizeof(*out) / 8);
	return WB_OK;
}

int wb_sip_venue_stats(const struct wb_book *book, int venue, struct wb_sip_venue_stats *out)
{
	int rc = wb_sip_venue_stats_once(book, venue, out);

	if (wb_read_again(book, rc))
		rc = wb_sip_venue_stats_once(book, venue, out);
	return rc;
}

static int wb_sip_episode_once(const struct wb_book *book, int kind, uint64_t n, struct wb_sip_episode *out)
{
	const struct wb_sip_episode *e;
	uint64_t written, want;
	int dis = kind == WB_EPI_DISAGREE;

	if (!book || !book->hdr || !out || kind < WB_EPI_DIRECT_LOCK || kind > WB_EPI_DISAGREE)
		return WB_EINVAL;
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	written = wb_load_acquire(dis ? &book->sipstats->summary.disagree_written
				      : &book->sipstats->summary.lock_written);
	if (n >= written)
		return WB_EINVAL;
	if (written - n > WB_SIP_EPISODES)
		return WB_ENOSYM;
	e = &(dis ? book->sipstats->disagree : book->sipstats->lock)[n & (WB_SIP_EPISODES - 1)];
	/* entry n is the slot's (n / WB_SIP_EPISODES + 1)th write */
	want = 2 * (n / WB_SIP_EPISODES + 1);
	for (unsigned spins = 0; spins < WB_READ_SPINS; spins++) {
		uint64_t s = wb_load_acquire(&e->seq);

		if (s & 1)
			continue;
		if (s != want)
			return WB_ENOSYM; /* overwritten */
		*out = *e;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (wb_load_relaxed(&e->seq) == s)
			return WB_OK;
	}
	return WB_EBUSY;
}

int wb_sip_episode(const struct wb_book *book, int kind, uint64_t n, struct wb_sip_episode *out)
{
	int rc = wb_sip_episode_once(book, kind, n, out);

	if (wb_read_again(book, rc))
		rc = wb_sip_episode_once(book, kind, n, out);
	return rc;
}

uint64_t wb_delay_quantile(const struct wb_sip_delay *d, uint32_t q_ppm)
{
	uint64_t need, seen = 0;

	if (!d || !d->count)
		return 0;
	if (q_ppm >= 1000000)
		return d->max_ns;
	/* the smallest value with at least q of the samples at or below it */
	need = (d->count * q_ppm + 999999) / 1000000;
	if (!need)
		need = 1;
	for (unsigned b = 0; b < WB_DELAY_BUCKETS; b++) {
		seen += d->hist[b];
		if (seen >= need) {
			uint64_t mid = wb_delay_bucket_low(b) + wb_delay_bucket_width(b) / 2;

			if (mid > d->max_ns)
				mid = d->max_ns;
			if (mid < d->min_ns)
				mid = d->min_ns;
			return mid;
		}
	}
	return d->max_ns;
}

int wb_symbol_count(const struct wb_book *book)
{
	uint64_t n;

	if (!book || !book->hdr)
		return WB_EINVAL;
	if (book->xlat) {
		wb_sync((struct wb_book *)book);
		return (int)book->nkeys;
	}
	n = wb_load_acquire(&book->hdr->symbols);
	return (int)(n < book->capacity ? n : book->capacity);
}

int wb_symbol(const struct wb_book *book, int sym, char out[9])
{
	uint64_t key;
	int i;

	if (!book || !out)
		return WB_EINVAL;
	if (book->xlat) {
		if ((unsigned)sym - 1u >= book->nkeys - 1u)
			return WB_EINVAL;
		key = book->keys[sym];
	} else {
		if ((unsigned)sym - 1u >= book->capacity - 1u)
			return WB_EINVAL;
		key = wb_load_acquire(&book->dir[sym]);
	}
	if (!key)
		return WB_ENOSYM;
	memcpy(out, &key, 8);
	for (i = 8; i > 0 && (out[i - 1] == ' ' || out[i - 1] == 0); i--)
		;
	out[i] = 0;
	return WB_OK;
}

static int wb_find_once(const struct wb_book *book, const char *ticker)
{
	char padded[8];
	uint64_t key;
	size_t len;
	int i, n;

	if (!book || !ticker || !book->hdr)
		return WB_EINVAL;
	len = strlen(ticker);
	if (len == 0 || len > 8)
		return WB_EINVAL;
	memset(padded, ' ', sizeof(padded));
	memcpy(padded, ticker, len);
	memcpy(&key, padded, 8);
	if (book->xlat) {
		/* Indices from before a restart stay; new tickers get new ones. */
		wb_sync((struct wb_book *)book);
		i = (int)wb_key_find(book, key);
		if (i > 0)
			return i;
	} else {
		n = wb_symbol_count(book);
		/* Not a hot path: a linear scan of 8-byte keys (16K symbols is
		 * 128 KiB, tens of microseconds). Cache the index. */
		for (i = 1; i < n; i++)
			if (wb_load_relaxed(&book->dir[i]) == key)
				return i;
	}
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	return WB_ENOSYM;
}

int wb_find(const struct wb_book *book, const char *ticker)
{
	int rc = wb_find_once(book, ticker);

	if (wb_read_again(book, rc))
		rc = wb_find_once(book, ticker);
	return rc;
}

const char *wb_strerror(int err)
{
	switch (err) {
	case WB_OK: return "success";
	case WB_ENOSHM: return "no book of that name in shared memory (is wirebookd running? check --shm)";
	case WB_EACCES: return "permission denied opening the book";
	case WB_EBADMAGIC: return "not a wirebook book or ring (bad magic, truncated, or another device)";
	case WB_EABI: return "book ABI version mismatch: rebuild the reader against this wirebookd";
	case WB_ESTALE: return "stale book: the builder restarted or exited; reopen";
	case WB_ENOSYM: return "unknown symbol";
	case WB_EINVAL: return "invalid argument";
	case WB_EBUSY: return "record stayed mid-update (builder stalled); retry";
	case WB_ESYS: return "system error (see errno)";
	case WB_ENODEV: return "no wirebook device (is the module loaded? modprobe wirebook)";
	default: break;
	}
	/* One convention: any other negative value is a -errno from a call
	 * wirebook made. strerrordesc_np: static text, safe in any thread. */
	if (err < 0 && strerrordesc_np(-err))
		return strerrordesc_np(-err);
	return "unknown wirebook error";
}

const char *wb_venue_name(int venue)
{
	static const char *const names[WB_BOOK_VENUES] = {
		[WB_CONSOLIDATED] = "ALL",
#define WB_VENUE_LABEL_ROW(id, value, name) [WB_VENUE_##id] = #id,
		WB_VENUES(WB_VENUE_LABEL_ROW)
#undef WB_VENUE_LABEL_ROW
	};

	if (venue < 0 || venue >= WB_BOOK_VENUES || !names[venue])
		return "?";
	return names[venue];
}

const char *wb_state_name(int state)
{
	switch (state) {
	case WB_STATE_TRADING: return "trading";
	case WB_STATE_HALTED: return "halted";
	case WB_STATE_PAUSED: return "paused";
	case WB_STATE_QUOTATION_ONLY: return "quotation-only";
	case WB_STATE_CLOSED: return "closed";
	case WB_STATE_PRE_OPEN: return "pre-open";
	case WB_STATE_OPEN: return "open";
	default: return "unknown";
	}
}

/* ---- gap recovery -------------------------------------------------------- */

/* The recovery table has the records' seqlock (wb_read_begin). */
static int wb_recovery_streams_once(const struct wb_book *book, struct wb_recovery_stream *out,
				    unsigned max)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_recovery *t;
	uint32_t n = 0;

	if (!book || !book->hdr || (!out && max))
		return WB_EINVAL;
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	t = book->recovery;
	if (!t)
		return 0;
	do {
		seq = wb_read_begin(&t->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		n = wb_load_relaxed(&t->count);
		if (n > WB_RECOVERY_STREAMS)
			n = WB_RECOVERY_STREAMS;
		if (out)
			memcpy(out, t->stream, (n < max ? n : max) * sizeof(*out));
	} while (wb_read_torn(&t->seq, seq, &spins));
	return (int)n;
}

int wb_recovery_streams(const struct wb_book *book, struct wb_recovery_stream *out, unsigned max)
{
	int rc = wb_recovery_streams_once(book, out, max);

	if (wb_read_again(book, rc))
		rc = wb_recovery_streams_once(book, out, max);
	return rc;
}

static int wb_nats_stats_once(const struct wb_book *book, struct wb_nats_stats *out)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_nats *t;

	if (!book || !book->hdr || !out)
		return WB_EINVAL;
	if (wb_load_acquire(&book->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	t = book->nats;
	if (!t) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	do {
		seq = wb_read_begin(&t->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		memcpy(out, &t->stats, sizeof(*out));
	} while (wb_read_torn(&t->seq, seq, &spins));
	return 0;
}

int wb_nats_stats(const struct wb_book *book, struct wb_nats_stats *out)
{
	int rc = wb_nats_stats_once(book, out);

	if (wb_read_again(book, rc))
		rc = wb_nats_stats_once(book, out);
	return rc;
}

/* One venue of the symbol: 1 recovering, 0 not; *since the table's. */
static int wb_venue_recovering(const struct wb_book *book, int sym, int venue, uint64_t *since)
{
	unsigned spins = 0;
	uint64_t seq;
	const struct wb_shm_recovery *t = book->recovery;
	uint8_t k = 0;
	int state = 0;

	*since = 0;
	if (t)
		k = wb_load_relaxed(&book->symbol_stream[(size_t)sym * WB_BOOK_VENUES +
							 (unsigned)venue]);
	if (!k || k > WB_RECOVERY_STREAMS)	/* its stream not known: the venue's bit */
		return (wb_load_relaxed(&book->hdr->recovering_venues) >> venue) & 1u;
	do {
		seq = wb_read_begin(&t->seq, &spins);
		if (wb_unlikely(seq & 1))
			return wb_odd_error(seq);
		state = k <= wb_load_relaxed(&t->count) && t->stream[k - 1].venue == venue &&
			t->stream[k - 1].state != WB_REC_IN_SEQUENCE;
		*since = state ? t->stream[k - 1].since_ns : 0;
	} while (wb_read_torn(&t->seq, seq, &spins));
	return state;
}

static int wb_symbol_recovering_once(const struct wb_book *book, int sym, int venue,
				     uint64_t *since_ns)
{
	const struct wb_shm_symbol *r;
	uint64_t since = 0, s;
	int any = 0;

	sym = wb_record_index(book, sym);
	if (sym < 0)
		return sym;
	r = wb_record(book, sym);
	if (venue < 0 || venue >= WB_BOOK_VENUES)
		return WB_EINVAL;
	if (wb_load_acquire(&r->seq) == WB_SEQ_RETIRED)
		return WB_ESTALE;
	if (venue != WB_CONSOLIDATED) {
		any = wb_venue_recovering(book, sym, venue, &since);
	} else {
		/* Every venue, not only those the symbol has had data from: a
		 * late join's venue has sent none yet. */
		for (int v = 1; v < WB_BOOK_VENUES; v++) {
			int rc = wb_venue_recovering(book, sym, v, &s);

			if (rc < 0)
				return rc;
			if (rc && (!any || (s && s < since)))
				since = s;
			any |= rc;
		}
	}
	if (any < 0)
		return any;
	if (since_ns)
		*since_ns = since;
	return any;
}

int wb_symbol_recovering(const struct wb_book *book, int sym, int venue, uint64_t *since_ns)
{
	int rc = wb_symbol_recovering_once(book, sym, venue, since_ns);

	if (wb_read_again(book, rc))
		rc = wb_symbol_recovering_once(book, sym, venue, since_ns);
	return rc;
}
