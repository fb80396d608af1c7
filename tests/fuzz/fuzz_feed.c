/*
 * libFuzzer target for one protocol of the protocol table, chosen at build
 * time (-DFUZZ_STEM=<stem>, see the Makefile): framing, the shared
 * sequencing layer (A/B arbitration, holes, resets), the instrument cache
 * and the protocol's message decoding, through the engine on the
 * protocol's first venue. Input modes: fuzz_feed.h. PITCH's order filter
 * holds only 64 orders here, so its overflow path runs too.
 */
#include "fuzz_feed.h"
#include "feed/feed_internal.h"

#define FUZZ_CAT(a, b) a##b
#define FUZZ_PROTO(stem) FUZZ_CAT(feed_proto_, stem)

static struct fuzz_target target;
static char tickers[2][16];

static void fuzz_target_init(void)
{
	const struct feed_proto *proto = &FUZZ_PROTO(FUZZ_STEM);
	const char *t = proto->sample_tickers;

	for (int p = FEED_PROTO_NONE + 1; p < FEED_PROTO_COUNT; p++)
		if (feed_protocol_get(p) == proto)
			target.protocol = p;
	target.venue = __builtin_ctz(proto->venues);
	target.ip_b = 0xe9000002;	/* 233.0.0.2 */
	target.port = 30001;
	target.order_filter_capacity = 64;
	for (int i = 0; i < 2 && t && *t; i++) {
		size_t n = strcspn(t, ",");

		memcpy(tickers[i], t, n < 15 ? n : 15);
		t += n + (t[n] == ',');
	}
	target.ticker_bit1 = tickers[0][0] ? tickers[0] : NULL;
	target.ticker_bit4 = tickers[1][0] ? tickers[1] : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!target.protocol)
		fuzz_target_init();
	return fuzz_one_input(&target, data, size);
}
