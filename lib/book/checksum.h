/*
 * The books' checksums (venue_books_checksum, superbook_checksum,
 * sipview_checksum) fold their content through this one mixer, so a
 * checksum depends on what the books hold and on nothing of how they hold
 * it: two implementations, or two runs, with equal books print equal
 * checksums.
 *
 * Nor on the instrument ids: ids go to symbols in the order they are first
 * seen, which differs between runs with equal books (gap recovery, two
 * streams of one venue). So each instrument's part is hashed from its
 * ticker, not its index (book_checksum_part), and the parts are summed,
 * which no order changes, then mixed once (book_checksum_final).
 */
#ifndef WIREBOOK_BOOK_CHECKSUM_H
#define WIREBOOK_BOOK_CHECKSUM_H

#include <stdint.h>

#define BOOK_CHECKSUM_SEED 0x6a09e667f3bcc908ull

static inline uint64_t book_checksum_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/*
 * The instrument -> ticker mapping the checksums hash by: key[i] is
 * instrument i's 8-byte space-padded ticker (the Super-Book's directory,
 * superbook_tickers()), 0 where it has none, for i < count.
 */
struct book_tickers {
	const uint64_t *key;
	uint32_t count;
};

/*
 * The start of instrument i's part. An instrument without a ticker (none
 * in the mapping) falls back to its index, tagged with bit 63, which no
 * ASCII ticker has.
 */
static inline uint64_t book_checksum_part(const struct book_tickers *t, uint32_t i)
{
	uint64_t key = t && i < t->count ? t->key[i] : 0;

	if (!key)
		key = 1ull << 63 | i;
	return book_checksum_mix(BOOK_CHECKSUM_SEED, key);
}

/* Mix the sum of the parts (and how many there were) once. */
static inline uint64_t book_checksum_final(uint64_t sum, uint64_t parts)
{
	return book_checksum_mix(book_checksum_mix(BOOK_CHECKSUM_SEED, sum), parts);
}

#endif /* WIREBOOK_BOOK_CHECKSUM_H */
