/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Nasdaq BinaryFILE: the format of Nasdaq's published historical ITCH
 * files. Each message is preceded by its length as a 2-byte big-endian
 * integer; there is no other framing, no sequence number, no session.
 * Files may be plain or gzip-compressed: reading detects which (zlib's
 * gzread passes plain files through), writing chooses.
 */
#ifndef WIREBOOK_TOOLS_ITCH_FILE_H
#define WIREBOOK_TOOLS_ITCH_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/moldudp64.h"

#define ITCH_FILE_ERR_LEN 512

struct itch_file {
	void *gz;		/* gzFile */
	uint64_t messages;	/* messages read or written */
	int pending_error;	/* itch_file_next_packet: damage found after a packet's messages */
	/* Reading: the file in large chunks, messages handed out in place
	 * (two gzread calls a message cost more than decoding it). */
	uint8_t *buf;
	size_t pos, len;
	int eof;		/* gzread has nothing more */
	/* itch_file_next_packet: the latest ITCH timestamp (ns since midnight)
	 * of the packet's messages, the time a file source says it received
	 * the packet (a BinaryFILE keeps no receive times). */
	uint64_t packet_time_ns;
};

/* Open for reading. Returns 0, or -1 with a message naming the file;
 * ITCH_FILE_NOT_BINARYFILE when it is a pcap or pcapng capture (a usage
 * error: the message names the option to give it with). */
#define ITCH_FILE_NOT_BINARYFILE (-2)
int itch_file_open_read(struct itch_file *f, const char *path, char *err, size_t err_len);

/*
 * The trading day Nasdaq's file names give: MMDDYYYY, as in
 * 01302019.NASDAQ_ITCH50.gz. Returns 1 with the day, 0 when the name
 * holds no such date.
 */
int itch_file_name_date(const char *path, int *year, int *month, int *day);

/*
 * A BinaryFILE's times are since midnight, its day is the reader's to
 * give: given (--date: year, month, day; year 0: none), else the file's
 * name's (itch_file_name_date). Says on stderr which, once, with `also`
 * appended (NULL: nothing); with neither it warns that there is no day.
 * Never today's: a historical file would take it silently. Returns 1 with
 * the day in day[3], 0 when there is none.
 */
int itch_file_trading_day(const char *path, const int given[3], int day[3], const char *also);

/*
 * The next message: 1 with *msg and *len (valid until the next call), 0 at the
 * clean end of the file, -1 when the file ends inside a message or cannot
 * be decompressed (message in err).
 */
int itch_file_next(struct itch_file *f, const uint8_t **msg, uint16_t *len, char *err,
		   size_t err_len);

/* Create for writing, gzip-compressed or plain. Returns 0 or -1 + err. */
int itch_file_open_write(struct itch_file *f, const char *path, bool gzip, char *err,
			 size_t err_len);

/* Append one message. Returns 0, or -1 on a write error. */
int itch_file_write(struct itch_file *f, const uint8_t *msg, uint16_t len);

/* Flush and close (both modes). Returns 0 or -1 + err if writing failed. */
int itch_file_close(struct itch_file *f, char *err, size_t err_len);

/*
 * The next messages as one MoldUDP64 packet (session "BINFILE   ", the
 * sequence of its first message *next_seq, advanced by its count), the
 * way a BinaryFILE is replayed through the feed engine: up to
 * ITCH_FILE_PACKET_MESSAGES messages while the payload is under
 * ITCH_FILE_PACKET_PAYLOAD bytes. pkt holds ITCH_FILE_PACKET_MAX bytes.
 * Returns the payload length (> 0), 0 at the clean end of the file, -1
 * when the file is damaged (message in err; the messages before the damage
 * come first, in their own packet).
 */
#define ITCH_FILE_PACKET_MESSAGES 64u
#define ITCH_FILE_PACKET_PAYLOAD 1400u
#define ITCH_FILE_PACKET_MAX (ITCH_FILE_PACKET_PAYLOAD + MOLD_BLOCK_LENGTH_LEN + 65535u)
int itch_file_next_packet(struct itch_file *f, uint8_t *pkt, uint64_t *next_seq, char *err,
			  size_t err_len);

/* True when path ends in ".gz". */
bool itch_file_path_is_gz(const char *path);

#endif /* WIREBOOK_TOOLS_ITCH_FILE_H */
