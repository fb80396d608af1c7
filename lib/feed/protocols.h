/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The protocol table: one row per wire protocol wirebook decodes.
 *
 * A protocol is its decoder file plus this row. The row names the
 * protocol's enum suffix and its stem; every layer finds what it needs by
 * the stem, so nothing else in the tree names a protocol:
 *
 *   lib/feed/<stem>.c        const struct feed_proto feed_proto_<stem>
 *                            (name, venues, framing, decoder, raw layouts)
 *   tools/gen/gen_<stem>.c   const struct gen_protocol gen_proto_<stem>
 *                            (wb-gen's encoder)
 *   tests/fuzz/fuzz_feed.c   built once per row as build/fuzz/fuzz_<stem>,
 *                            seeded from tests/fuzz/corpus/fuzz_<stem>/
 *   tests/unit/test_streams.c  the sequencing scenarios, one fixture row
 *
 * Row order is the enum order (enum feed_protocol): it is ABI (the module's
 * feed-map ioctl carries it), so new rows go at the end.
 */
#ifndef WIREBOOK_FEED_PROTOCOLS_H
#define WIREBOOK_FEED_PROTOCOLS_H

#define FEED_PROTOCOLS(X)	\
	X(ITCH50, itch50)	\
	X(PITCH, pitch)		\
	X(XDP, xdp)		\
	X(CQS, cqs)		\
	X(UQDF, uqdf)

enum feed_protocol {
	FEED_PROTO_NONE = 0,
#define FEED_PROTOCOL_ENUM(id, stem) FEED_PROTO_##id,
	FEED_PROTOCOLS(FEED_PROTOCOL_ENUM)
#undef FEED_PROTOCOL_ENUM
	FEED_PROTO_COUNT
};

#endif /* WIREBOOK_FEED_PROTOCOLS_H */
