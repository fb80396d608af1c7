/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Cboe PITCH session framing: GRP and Spin (see pitch_session.h). */
#include "recovery/pitch_session.h"

#include <string.h>

#include "common/put_bytes.h"

static uint32_t le32_of(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t pitch_session_message(uint8_t *out, uint8_t type, const uint8_t *body, uint8_t blen)
{
	size_t len = PITCH_SESSION_HEADER + 2 + (size_t)blen;

	put_le16(out, len);
	out[2] = 1;
	out[3] = 0;
	put_le32(out + 4, 0);
	out[8] = (uint8_t)(2 + blen);
	out[9] = type;
	if (blen)
		memcpy(out + 10, body, blen);
	return len;
}

static void pad_copy(uint8_t *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

size_t pitch_session_login(uint8_t *out, const char *user, const char *password)
{
	uint8_t body[PITCH_LOGIN_LEN - 2];

	memcpy(body, "0001", 4);	/* Session Sub-ID: assigned per port by Cboe */
	pad_copy(body + 4, 4, user);
	memset(body + 8, ' ', 2);
	pad_copy(body + 10, 10, password);
	return pitch_session_message(out, PITCH_LOGIN, body, sizeof(body));
}

size_t spin_seq_message(uint8_t *out, uint8_t type, uint32_t seq)
{
	uint8_t body[4];

	put_le32(body, seq);
	return pitch_session_message(out, type, body, sizeof(body));
}

size_t spin_response(uint8_t *out, uint32_t seq, uint32_t order_count, char status)
{
	uint8_t body[SPIN_RESPONSE_LEN - 2];

	put_le32(body, seq);
	put_le32(body + 4, order_count);
	body[8] = (uint8_t)status;
	return pitch_session_message(out, SPIN_RESPONSE, body, sizeof(body));
}

size_t pitch_session_heartbeat(uint8_t *out)
{
	put_le16(out, PITCH_SESSION_HEADER);
	out[2] = 0;
	out[3] = 0;
	put_le32(out + 4, 0);
	return PITCH_SESSION_HEADER;
}

long pitch_session_next(const uint8_t *p, size_t len)
{
	size_t flen;

	if (len < 2)
		return 0;
	flen = (size_t)(p[0] | p[1] << 8);
	if (flen < PITCH_SESSION_HEADER)
		return -1;
	return len < flen ? 0 : (long)flen;
}

int pitch_session_message_at(const uint8_t *f, size_t flen, size_t *off, const uint8_t **msg,
			     size_t *mlen)
{
	if (*off < PITCH_SESSION_HEADER)
		*off = PITCH_SESSION_HEADER;
	if (*off >= flen)
		return 0;
	if (f[*off] < 2 || *off + f[*off] > flen)
		return -1;
	*msg = f + *off;
	*mlen = f[*off];
	*off += f[*off];
	return 1;
}

int spin_seq_of(const uint8_t *m, size_t mlen, uint8_t type, uint32_t *seq)
{
	if (mlen < SPIN_SEQ_LEN || m[0] < SPIN_SEQ_LEN || m[1] != type)
		return -1;
	*seq = le32_of(m + 2);
	return 0;
}

int spin_response_of(const uint8_t *m, size_t mlen, uint32_t *seq, uint32_t *order_count,
		     char *status)
{
	if (mlen < SPIN_RESPONSE_LEN || m[0] < SPIN_RESPONSE_LEN || m[1] != SPIN_RESPONSE)
		return -1;
	*seq = le32_of(m + 2);
	*order_count = le32_of(m + 6);
	*status = (char)m[10];
	return 0;
}
