/*
 * Helpers whose only effect is a prefetch must be inlined into their
 * caller before GCC's IPA pure/const analysis sees them: that analysis
 * counts __builtin_prefetch as no side effect, marks such a helper const
 * and then deletes every call to it as dead code. GCC 12 -O2 did exactly
 * that to the venue books' look-ahead (stages 0, 2 and 3 of
 * apply_pipelined compiled to nothing, so only the 4-ahead stage ran, on
 * cold lines) and to the PITCH decoder's order prefetch (pitch.o had no
 * prefetch instruction at all). always_inline puts the prefetch
 * instructions themselves in the caller, where dead-code elimination keeps
 * them. lib/feed is freestanding: this header is only a macro.
 */
#ifndef WIREBOOK_FEED_PREFETCH_H
#define WIREBOOK_FEED_PREFETCH_H

#define WB_PREFETCH_FN static inline __attribute__((always_inline))

#endif /* WIREBOOK_FEED_PREFETCH_H */
