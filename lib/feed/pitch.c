/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Cboe Multicast PITCH: placeholder until the decoder lands. */
#include "feed_internal.h"

static size_t pitch_state_size(const struct feed_engine_config *cfg)
{
	(void)cfg;
	return 8;
}

static void pitch_state_init(void *state, const struct feed_engine_config *cfg)
{
	(void)state;
	(void)cfg;
}

static void pitch_state_reset(void *state)
{
	(void)state;
}

static void pitch_packet(struct feed_packet *pk, const uint8_t *payload, uint32_t len)
{
	(void)payload;
	(void)len;
	pk->counters->ignored++;
}

const struct feed_protocol_ops feed_pitch_ops = {
	.state_size = pitch_state_size,
	.state_init = pitch_state_init,
	.state_reset = pitch_state_reset,
	.packet = pitch_packet,
};
