/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* SoupBinTCP 4.0 packets, GLIMPSE's End of Snapshot, UTP's Snap-Shot message (see soupbin.h). */
#include "recovery/soupbin.h"

#include <string.h>

#include "common/put_bytes.h"

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
	put_be16(out, plen + 1);
	out[2] = type;
	return 3;
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
	soup_put_header(out, SOUP_LOGIN_REJECTED, 1);
	out[3] = reason;
	return 4;
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
	n = (size_t)buf[0] << 8 | buf[1];
	if (!n)
		return -1;
	if (len < 2 + n)
		return 0;
	*type = buf[2];
	*payload = buf + 3;
	*plen = n - 1;
	return (long)(2 + n);
}

int glimpse_end_of_snapshot(const uint8_t *m, size_t len, uint64_t *next_seq)
{
	if (len != GLIMPSE_END_OF_SNAPSHOT_LEN || m[0] != GLIMPSE_END_OF_SNAPSHOT)
		return -1;
	return soup_get_numeric(m + 1, SOUP_SEQUENCE_LEN, next_seq);
}

size_t glimpse_put_end_of_snapshot(uint8_t *out, uint64_t next_seq)
{
	out[0] = GLIMPSE_END_OF_SNAPSHOT;
	soup_put_numeric(out + 1, SOUP_SEQUENCE_LEN, next_seq);
	return GLIMPSE_END_OF_SNAPSHOT_LEN;
}

int utp_snapshot_end(const uint8_t *m, size_t len, uint64_t *next_seq)
{
	if (len != UTP_SNAPSHOT_LEN || m[0] != '1' || m[1] != UTP_SNAPSHOT_CATEGORY ||
	    m[2] != UTP_SNAPSHOT_TYPE)
		return -1;
	*next_seq = (uint64_t)m[29] << 56 | (uint64_t)m[30] << 48 | (uint64_t)m[31] << 40 |
		    (uint64_t)m[32] << 32 | (uint64_t)m[33] << 24 | (uint64_t)m[34] << 16 |
		    (uint64_t)m[35] << 8 | m[36];
	return 0;
}

size_t utp_put_snapshot_end(uint8_t *out, uint64_t next_seq, uint64_t sip_ns)
{
	memset(out, 0, UTP_SNAPSHOT_LEN);
	out[0] = '1';
	out[1] = UTP_SNAPSHOT_CATEGORY;
	out[2] = UTP_SNAPSHOT_TYPE;
	out[3] = 'E';		/* the SIP itself */
	out[4] = ' ';
	put_be64(out + 5, sip_ns);
	put_be64(out + 29, next_seq);
	return UTP_SNAPSHOT_LEN;
}
