/*
 * libFuzzer target for the recovery protocols' decoders in user space
 * (tools/common): SoupBinTCP packets and the snapshot end messages of
 * GLIMPSE and UTP Snap-Shot, the Cboe GRP/Spin session messages, and the
 * NYSE XDP Request Server's requests, responses and Message Unavailable.
 * They read what a recovery server (or a client, for wb-recoveryd) sends,
 * so every read must stay within the bytes given.
 */
#include <stdint.h>
#include <string.h>

#include "recovery/pitch_session.h"
#include "recovery/recovery_xdp.h"
#include "recovery/soupbin.h"

static void soupbin(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		const uint8_t *payload;
		size_t plen;
		uint64_t seq;
		uint8_t type;
		long n = soup_next(data + off, size - off, &type, &payload, &plen);

		if (n <= 0)
			break;
		if (type == 'S') {
			glimpse_end_of_snapshot(payload, plen, &seq);
			utp_snapshot_end(payload, plen, &seq);
		}
		off += (size_t)n;
	}
}

static void pitch_session(const uint8_t *data, size_t size)
{
	size_t at = 0;

	while (at < size) {
		long flen = pitch_session_next(data + at, size - at);
		const uint8_t *msg;
		size_t mlen, off = 0;

		if (flen <= 0)
			break;
		while (pitch_session_message_at(data + at, (size_t)flen, &off, &msg, &mlen) > 0) {
			uint32_t seq, orders;
			char status;

			spin_seq_of(msg, mlen, 0x80, &seq);
			spin_seq_of(msg, mlen, 0x81, &seq);
			spin_seq_of(msg, mlen, 0x83, &seq);
			spin_response_of(msg, mlen, &seq, &orders, &status);
		}
		at += (size_t)flen;
	}
}

static void xdp(const uint8_t *data, size_t size)
{
	struct xdp_request rq;
	struct xdp_response rs;
	uint32_t begin, end;
	uint8_t product, channel;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;

	xdp_parse_request(data, len, &rq);
	xdp_parse_response(data, len, &rs);
	xdp_parse_unavailable(data, len, &begin, &end, &product, &channel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libFuzzer hands over exactly size bytes of heap: ASan sees any read past them. */
	soupbin(data, size);
	pitch_session(data, size);
	xdp(data, size);
	return 0;
}
