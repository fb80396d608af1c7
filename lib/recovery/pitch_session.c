/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Cboe PITCH session framing: GRP and Spin (see pitch_session.h). */
#include "recovery/pitch_session.h"

#include <string.h>

#include "wire/bytes.h"

size_t pitch_session_message(uint8_t *out, uint8_t type, const uint8_t *body, uint8_t blen)
{
	size_t len = PITCH_HEADER_LEN + PITCH_MSG_HEADER_LEN + (size_t)blen;
	uint8_t *m = out + PITCH_HEADER_LEN;

	wire_put_le16(out + PITCH_HDR_LENGTH, len);
	out[PITCH_HDR_COUNT] = 1;
	out[PITCH_HDR_UNIT] = 0;
	wire_put_le32(out + PITCH_HDR_SEQUENCE, 0);
	m[PITCH_MSG_LENGTH] = (uint8_t)(PITCH_MSG_HEADER_LEN + blen);
	m[PITCH_MSG_TYPE] = type;
	if (blen)
		memcpy(m + PITCH_MSG_HEADER_LEN, body, blen);
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
	uint8_t m[PITCH_LOGIN_LEN];	/* the fields at the message's offsets */

	/* Session Sub-ID: assigned per port by Cboe */
	memcpy(m + PITCH_LOGIN_SUB_ID_OFF, "0001", PITCH_LOGIN_SUB_ID_LEN);
	pad_copy(m + PITCH_LOGIN_USER_OFF, PITCH_LOGIN_USER_LEN, user);
	memset(m + PITCH_LOGIN_FILLER_OFF, ' ', PITCH_LOGIN_FILLER_LEN);
	pad_copy(m + PITCH_LOGIN_PASSWORD_OFF, PITCH_LOGIN_PASSWORD_LEN, password);
	return pitch_session_message(out, PITCH_LOGIN, m + PITCH_MSG_HEADER_LEN,
				     PITCH_LOGIN_LEN - PITCH_MSG_HEADER_LEN);
}

size_t spin_seq_message(uint8_t *out, uint8_t type, uint32_t seq)
{
	uint8_t body[SPIN_SEQ_LEN - PITCH_MSG_HEADER_LEN];

	wire_put_le32(body + SPIN_SEQ_OFF - PITCH_MSG_HEADER_LEN, seq);
	return pitch_session_message(out, type, body, sizeof(body));
}

size_t spin_response(uint8_t *out, uint32_t seq, uint32_t order_count, char status)
{
	uint8_t body[SPIN_RESPONSE_LEN - PITCH_MSG_HEADER_LEN];

	wire_put_le32(body + SPIN_RESPONSE_SEQ_OFF - PITCH_MSG_HEADER_LEN, seq);
	wire_put_le32(body + SPIN_RESPONSE_ORDERS_OFF - PITCH_MSG_HEADER_LEN, order_count);
	body[SPIN_RESPONSE_STATUS_OFF - PITCH_MSG_HEADER_LEN] = (uint8_t)status;
	return pitch_session_message(out, SPIN_RESPONSE, body, sizeof(body));
}

size_t pitch_session_heartbeat(uint8_t *out)
{
	wire_put_le16(out + PITCH_HDR_LENGTH, PITCH_HEADER_LEN);
	out[PITCH_HDR_COUNT] = 0;
	out[PITCH_HDR_UNIT] = 0;
	wire_put_le32(out + PITCH_HDR_SEQUENCE, 0);
	return PITCH_HEADER_LEN;
}

long pitch_session_next(const uint8_t *p, size_t len)
{
	size_t flen;

	if (len < 2)
		return 0;
	flen = wire_le16(p + PITCH_HDR_LENGTH);
	if (flen < PITCH_HEADER_LEN)
		return -1;
	return len < flen ? 0 : (long)flen;
}

int pitch_session_message_at(const uint8_t *f, size_t flen, size_t *off, const uint8_t **msg,
			     size_t *mlen)
{
	if (*off < PITCH_HEADER_LEN)
		*off = PITCH_HEADER_LEN;
	if (*off >= flen)
		return 0;
	if (f[*off] < PITCH_MSG_HEADER_LEN || *off + f[*off] > flen)
		return -1;
	*msg = f + *off;
	*mlen = f[*off];
	*off += f[*off];
	return 1;
}

int spin_seq_of(const uint8_t *m, size_t mlen, uint8_t type, uint32_t *seq)
{
	if (mlen < SPIN_SEQ_LEN || m[PITCH_MSG_LENGTH] < SPIN_SEQ_LEN ||
	    m[PITCH_MSG_TYPE] != type)
		return -1;
	*seq = wire_le32(m + SPIN_SEQ_OFF);
	return 0;
}

int spin_response_of(const uint8_t *m, size_t mlen, uint32_t *seq, uint32_t *order_count,
		     char *status)
{
	if (mlen < SPIN_RESPONSE_LEN || m[PITCH_MSG_LENGTH] < SPIN_RESPONSE_LEN ||
	    m[PITCH_MSG_TYPE] != SPIN_RESPONSE)
		return -1;
	*seq = wire_le32(m + SPIN_RESPONSE_SEQ_OFF);
	*order_count = wire_le32(m + SPIN_RESPONSE_ORDERS_OFF);
	*status = (char)m[SPIN_RESPONSE_STATUS_OFF];
	return 0;
}
