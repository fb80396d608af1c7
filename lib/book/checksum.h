/*
 * The books' checksums (venue_books_checksum, superbook_checksum) fold
 * their content through this one mixer, so a checksum depends on what the
 * books hold and on nothing of how they hold it: two implementations, or
 * two runs, with equal books print equal checksums.
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

#endif /* WIREBOOK_BOOK_CHECKSUM_H */
