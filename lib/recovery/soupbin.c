/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* SoupBinTCP 4.0 packets, GLIMPSE's End of Snapshot, UTP's Snap-Shot message (see soupbin.h). */
#include "recovery/soupbin.h"

#include <string.h>

#include "wire/bytes.h"

void soup_put_alpha(uint8_t *field, size_t width, const char *text)
{
	size_t n = text ? strlen(text) : 0;

	memset(field, ' ', width);
	memcpy(field, text, n < width ? n : width);
}

void soup_put_numeric(uint8_t *field, size_t width, uint64_t v)
{
	size_t i = width;

	memset(field, ' ', width);
	do {
		field[--i] = (uint8_t)('0' + v % 10);
		v /= 10;
	} while (v && i);
}

int soup_get_numeric(const uint8_t *field, size_t width, uint64_t *v)
{
	size_t i = 0;
	uint64_t x = 0;

	while (i < width && field[i] == ' ')
		i++;
	if (i == width)
		return -1;
	for (; i < width; i++) {
		if (field[i] < '0' || field[i] > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(field[i] - '0');
	}
	*v = x;
	return 0;
}

size_t soup_put_header(uint8_t *out, uint8_t type, size_t plen)
{
	wire_put_be16(out + SOUP_LENGTH_OFF, plen + 1);
	out[SOUP_TYPE_OFF] = type;
	return SOUP_HEADER;
}

size_t soup_login_request(uint8_t *out, const char *user, const char *password,
			  const char *session, uint64_t sequence)
{
	uint8_t *p = out + soup_put_header(out, SOUP_LOGIN_REQUEST, SOUP_LOGIN_REQUEST_LEN - 1);

	soup_put_alpha(p, SOUP_USER_LEN, user);
	soup_put_alpha(p += SOUP_USER_LEN, SOUP_PASSWORD_LEN, password);
	/* A blank session asks for the one that is current. */
	soup_put_alpha(p += SOUP_PASSWORD_LEN, SOUP_SESSION_LEN, session);
	soup_put_numeric(p + SOUP_SESSION_LEN, SOUP_SEQUENCE_LEN, sequence);
	return 2 + SOUP_LOGIN_REQUEST_LEN;
}

size_t soup_login_accepted(uint8_t *out, const char *session, uint64_t sequence)
{
	uint8_t *p = out + soup_put_header(out, SOUP_LOGIN_ACCEPTED, SOUP_LOGIN_ACCEPTED_LEN - 1);

	soup_put_alpha(p, SOUP_SESSION_LEN, session);
	soup_put_numeric(p + SOUP_SESSION_LEN, SOUP_SEQUENCE_LEN, sequence);
	return 2 + SOUP_LOGIN_ACCEPTED_LEN;
}

size_t soup_login_rejected(uint8_t *out, uint8_t reason)
{
	soup_put_header(out, SOUP_LOGIN_REJECTED, SOUP_LOGIN_REJECTED_LEN - 1);
	out[SOUP_HEADER] = reason;
	return 2 + SOUP_LOGIN_REJECTED_LEN;
}

size_t soup_empty(uint8_t *out, uint8_t type)
{
	return soup_put_header(out, type, 0);
}

long soup_next(const uint8_t *buf, size_t len, uint8_t *type, const uint8_t **payload,
	       size_t *plen)
{
	size_t n;

	if (len < 2)
		return 0;
	n = wire_be16(buf + SOUP_LENGTH_OFF);
	if (!n)
		return -1;
	if (len < 2 + n)
		return 0;
	*type = buf[SOUP_TYPE_OFF];
	*payload = buf + SOUP_HEADER;
	*plen = n - 1;
	return (long)(2 + n);
}

int glimpse_end_of_snapshot(const uint8_t *m, size_t len, uint64_t *next_seq)
{
	if (len != GLIMPSE_END_OF_SNAPSHOT_LEN || m[0] != GLIMPSE_END_OF_SNAPSHOT)
		return -1;
	return soup_get_numeric(m + GLIMPSE_END_OF_SNAPSHOT_SEQ_OFF, SOUP_SEQUENCE_LEN, next_seq);
}

size_t glimpse_put_end_of_snapshot(uint8_t *out, uint64_t next_seq)
{
	out[0] = GLIMPSE_END_OF_SNAPSHOT;
	soup_put_numeric(out + GLIMPSE_END_OF_SNAPSHOT_SEQ_OFF, SOUP_SEQUENCE_LEN, next_seq);
	return GLIMPSE_END_OF_SNAPSHOT_LEN;
}

int utp_snapshot_end(const uint8_t *m, size_t len, uint64_t *next_seq)
{
	if (len != UTP_SNAPSHOT_LEN || m[UTP_SNAPSHOT_VERSION_OFF] != UTP_SNAPSHOT_VERSION ||
	    m[UTP_SNAPSHOT_CATEGORY_OFF] != UTP_SNAPSHOT_CATEGORY ||
	    m[UTP_SNAPSHOT_TYPE_OFF] != UTP_SNAPSHOT_TYPE)
		return -1;
	*next_seq = wire_be64(m + UTP_SNAPSHOT_SEQ_OFF);
	return 0;
}

size_t utp_put_snapshot_end(uint8_t *out, uint64_t next_seq, uint64_t sip_ns)
{
	memset(out, 0, UTP_SNAPSHOT_LEN);
	out[UTP_SNAPSHOT_VERSION_OFF] = UTP_SNAPSHOT_VERSION;
	out[UTP_SNAPSHOT_CATEGORY_OFF] = UTP_SNAPSHOT_CATEGORY;
	out[UTP_SNAPSHOT_TYPE_OFF] = UTP_SNAPSHOT_TYPE;
	out[UTP_SNAPSHOT_ORIGINATOR_OFF] = UTP_SNAPSHOT_ORIGINATOR;	/* the SIP itself */
	out[UQDF_SUB_MARKET] = ' ';
	wire_put_be64(out + UQDF_SIP_TIME, sip_ns);
	wire_put_be64(out + UTP_SNAPSHOT_SEQ_OFF, next_seq);
	return UTP_SNAPSHOT_LEN;
}
