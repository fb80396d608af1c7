/*
 * libFuzzer target: MoldUDP64 + ITCH 5.0 on Nasdaq's A and B lines:
 * sequencing, A/B arbitration and the locate filter cache along with
 * message decoding (input modes: fuzz_feed.h).
 */
#include "fuzz_feed.h"

static const struct fuzz_target itch = {
	.protocol = FEED_PROTO_ITCH50,
	.venue = WB_VENUE_NASDAQ,
	.ip_a = 0xe9360c6f,	/* 233.54.12.111, the captures' group */
	.ip_b = 0xe931c46f,
	.port = 26477,
	.ticker_bit1 = "META",	/* the Multiple.Packets capture's symbol */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one_input(&itch, data, size);
}
