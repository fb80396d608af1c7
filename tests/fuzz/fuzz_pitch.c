/*
 * libFuzzer target: Cboe Multicast PITCH (Sequenced Unit Header) on BZX's
 * A and B lines: sequencing per unit, A/B arbitration and the order-id
 * filter along with message decoding (input modes: fuzz_feed.h). The
 * filter holds only 64 orders, so its overflow path runs too.
 */
#include "fuzz_feed.h"

static const struct fuzz_target pitch = {
	.protocol = FEED_PROTO_PITCH,
	.venue = WB_VENUE_BZX,
	.ip_a = 0xe0003e02,	/* 224.0.62.2 */
	.ip_b = 0xe0003e82,
	.port = 30001,
	.order_filter_capacity = 64,
	.ticker_bit1 = "A",	/* the BATS lab captures' symbol */
	.ticker_bit4 = "JDST",	/* one of the BYX captures' symbols */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one_input(&pitch, data, size);
}
