/*
 * The sequencing scenarios every protocol goes through (lib/feed/stream.c
 * and directory.c), table-driven: each protocol is one fixture row that
 * knows how to write its packets; each scenario runs on every row. A new
 * protocol gets the whole table by adding its row to `fixtures` below.
 *
 * Scenarios, on an A and a B line of one stream: in order; A/B duplicates;
 * a packet lost on A and filled by B; a packet lost on both (exactly one
 * GAP); reordering on one line; a heartbeat revealing a lost tail; a
 * sequence reset; a new session; a symbol subscribed mid-session.
 *
 * Recovery scenarios (the group in recovery mode): a hole announced and
 * filled, in order; given up; filled in part; a second hole among what was
 * held; the buffer's bound; duplicates of recovered packets; a tail hole;
 * a late join filled from the first sequence, or by a snapshot; a snapshot
 * abandoned; a restart during a recovery; another stream never held up.
 *
 * A data packet P(k) carries ORDERS_PER_PACKET Add Orders of the fixture's
 * symbol, whose order ids are the messages' own sequence numbers, so the
 * events say exactly which messages were decoded, in what order.
 */
#include <stdarg.h>

#include "feed_harness.h"
#include "wire/cqs.h"
#include "wire/itch50.h"
#include "wire/pitch.h"
#include "wire/uqdf.h"
#include "wire/xdp.h"

#define ORDERS_PER_PACKET 2
#define PKT_MAX HARNESS_PACKET_MAX

/* How one protocol writes the packets of the scenarios. */
struct fixture {
	const char *name;
	int protocol;
	int venue;
	const char *ticker;
	/* The packet(s) that begin session s at its first sequence and make the
	 * ticker known (a directory entry, a Time, a Unit Clear); returns how
	 * many packets, and the number of messages they hold in *msgs. */
	int (*open)(struct packet *out, uint32_t s, uint64_t *msgs);
	/* count Add Orders at seq, seq+1, ... of session s. */
	void (*data)(struct packet *p, uint32_t s, uint64_t seq, uint32_t count);
	/* A heartbeat of session s saying the next sequence is next. */
	void (*heartbeat)(struct packet *p, uint32_t s, uint64_t next);
	/* The protocol's sequence reset, restarting at the first sequence with a
	 * packet of `resets` as token (NULL: the protocol has none). Holds
	 * *msgs messages, the first at seq 1. */
	void (*reset)(struct packet *p, uint32_t s, uint32_t resets, uint64_t *msgs);
	/* A new session: the packet(s) ending session s before it (0 if none). */
	int (*end)(struct packet *out, uint32_t s, uint64_t seq);
	/* Its heartbeats carry no sequence the spec defines (XDP): a lost tail
	 * shows at the next data packet instead. */
	bool heartbeat_unsequenced;
	/* A snapshot packet (the protocol's snapshot framing) holding what the
	 * open makes known and count Add Orders with ids first, first+1, ...
	 * (NULL: no snapshot framing in the decoder yet). */
	void (*snapshot)(struct packet *p, uint32_t s, uint64_t first, uint32_t count);
	/* The venue is one stream: a snapshot clears it whole (CLEAR of instrument
	 * 0), else only the instruments seen on the stream. */
	bool one_stream;
	/* Its orders name their symbol only through the directory (XDP's
	 * SymbolIndex): a stream joined late decodes none before a mapping. */
	bool orders_need_directory;
};

/* ---- ITCH 5.0 / MoldUDP64 ------------------------------------------------ */

#define STRM_LOCATE 7

/* Session s's MoldUDP64 header. */
static void mold_session_header(struct packet *p, uint32_t s, uint64_t seq, uint16_t count)
{
	char session[11];

	snprintf(session, sizeof(session), "SESSION%03u", s % 1000);
	mold_header(p, session, seq, count);
}

static void itch_directory(struct packet *p)
{
	uint8_t *m = mold_message(p, ITCH_STOCK_DIRECTORY_LEN);

	m[ITCH_TYPE] = ITCH_STOCK_DIRECTORY;
	wire_put_be16(m + ITCH_LOCATE, STRM_LOCATE);
	memcpy(m + ITCH_DIRECTORY_STOCK, "STRM    ", ITCH_STOCK_LEN);
	m[ITCH_DIRECTORY_MARKET] = 'Q';
	wire_put_be32(m + ITCH_DIRECTORY_ROUND_LOT, 100);
}

static void itch_add(struct packet *p, uint64_t ts, uint64_t id)
{
	uint8_t *m = mold_message(p, ITCH_ADD_LEN);

	m[ITCH_TYPE] = ITCH_ADD;
	wire_put_be16(m + ITCH_LOCATE, STRM_LOCATE);
	wire_put_be48(m + ITCH_TIMESTAMP, 1000 * ts);
	wire_put_be64(m + ITCH_ORDER_REF, id);
	m[ITCH_ADD_SIDE] = 'B';
	wire_put_be32(m + ITCH_ADD_SHARES, 100);
	memcpy(m + ITCH_ADD_STOCK, "STRM    ", ITCH_STOCK_LEN);
	wire_put_be32(m + ITCH_ADD_PRICE, 1000000);
}

static int itch_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	mold_session_header(out, s, 1, 1);
	itch_directory(out);
	*msgs = 1;
	return 1;
}

static void itch_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	mold_session_header(p, s, seq, (uint16_t)count);
	for (uint32_t i = 0; i < count; i++)
		itch_add(p, seq + i, seq + i);
}

/* GLIMPSE's messages packed into MoldUDP64 blocks: the directory, then adds. */
static void itch_snapshot(struct packet *p, uint32_t s, uint64_t first, uint32_t count)
{
	mold_session_header(p, s, 0, (uint16_t)(count + 1));
	itch_directory(p);
	for (uint32_t i = 0; i < count; i++)
		itch_add(p, first + i, first + i);
}

static void itch_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	mold_session_header(p, s, next, 0);
}

static int itch_end(struct packet *out, uint32_t s, uint64_t seq)
{
	mold_session_header(out, s, seq, MOLD_END_OF_SESSION);
	return 1;
}

/* ---- Cboe PITCH -------------------------------------------------------- */

#define PITCH_UNIT 1

static void pitch_header(struct packet *p, uint64_t seq)
{
	p->len = PITCH_HEADER_LEN;
	p->b[PITCH_HDR_COUNT] = 0;
	p->b[PITCH_HDR_UNIT] = PITCH_UNIT;
	wire_put_le32(p->b + PITCH_HDR_SEQUENCE, seq);
}

static uint8_t *pitch_message(struct packet *p, uint8_t len, uint8_t type)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	m[PITCH_MSG_LENGTH] = len;
	m[PITCH_MSG_TYPE] = type;
	p->len += len;
	p->b[PITCH_HDR_COUNT]++;
	wire_put_le16(p->b + PITCH_HDR_LENGTH, p->len);
	return m;
}

/* Time and Unit Clear at sequence 1: the unit's day begins (a reset). */
static void pitch_reset(struct packet *p, uint32_t s, uint32_t resets, uint64_t *msgs)
{
	pitch_header(p, 1);
	wire_put_le32(pitch_message(p, PITCH_TIME_LEN, PITCH_TIME) + PITCH_TIME_SECONDS,
		      34200 + s * 100 + resets);
	wire_put_le32(pitch_message(p, PITCH_UNIT_CLEAR_LEN, PITCH_UNIT_CLEAR) + PITCH_TIME_OFFSET, 5);
	*msgs = 2;
}

static int pitch_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	pitch_reset(out, s, 0, msgs);
	return 1;
}

static void pitch_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	(void)s;
	pitch_header(p, seq);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = pitch_message(p, PITCH_ADD_SHORT_LEN, PITCH_ADD_SHORT);

		wire_put_le32(m + PITCH_TIME_OFFSET, (uint32_t)(seq + i));
		wire_put_le64(m + PITCH_ORDER_ID, seq + i);
		m[PITCH_SIDE] = 'B';
		wire_put_le16(m + PITCH_ADD_SHORT_QTY, 100);
		memcpy(m + PITCH_ADD_SHORT_SYMBOL, "STRM  ", PITCH_SYMBOL_SHORT_LEN);
		wire_put_le16(m + PITCH_ADD_SHORT_PRICE, 1000);
	}
}

static void pitch_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	(void)s;
	pitch_header(p, next);
	wire_put_le16(p->b + PITCH_HDR_LENGTH, p->len);
}

/* A spin's frame: unit 0, sequence 0, a Time, then the adds. */
static void pitch_snapshot(struct packet *p, uint32_t s, uint64_t first, uint32_t count)
{
	pitch_header(p, 0);
	p->b[PITCH_HDR_UNIT] = 0;
	wire_put_le32(pitch_message(p, PITCH_TIME_LEN, PITCH_TIME) + PITCH_TIME_SECONDS,
		      34200 + s * 100);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = pitch_message(p, PITCH_ADD_SHORT_LEN, PITCH_ADD_SHORT);

		wire_put_le32(m + PITCH_TIME_OFFSET, 1);
		wire_put_le64(m + PITCH_ORDER_ID, first + i);
		m[PITCH_SIDE] = 'B';
		wire_put_le16(m + PITCH_ADD_SHORT_QTY, 100);
		memcpy(m + PITCH_ADD_SHORT_SYMBOL, "STRM  ", PITCH_SYMBOL_SHORT_LEN);
		wire_put_le16(m + PITCH_ADD_SHORT_PRICE, 1000);
	}
}

static int pitch_end(struct packet *out, uint32_t s, uint64_t seq)
{
	(void)s;
	pitch_header(out, seq);
	pitch_message(out, PITCH_END_OF_SESSION_LEN, PITCH_END_OF_SESSION);
	return 1;
}

/* ---- NYSE XDP -------------------------------------------------------------- */

#define STRM_INDEX 7

static void xdp_header(struct packet *p, uint64_t seq, uint8_t flag)
{
	memset(p->b, 0, XDP_HEADER_LEN);
	p->len = XDP_HEADER_LEN;
	wire_put_le16(p->b + XDP_PKT_SIZE, XDP_HEADER_LEN);
	p->b[XDP_PKT_DELIVERY_FLAG] = flag;
	wire_put_le32(p->b + XDP_PKT_SEQ_NUM, seq);
}

static uint8_t *xdp_message(struct packet *p, uint16_t type, uint16_t len)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	wire_put_le16(m + XDP_MSG_SIZE, len);
	wire_put_le16(m + XDP_MSG_TYPE, type);
	p->len += len;
	p->b[XDP_PKT_NUMBER_MSGS]++;
	wire_put_le16(p->b + XDP_PKT_SIZE, p->len);
	return m;
}

/* A Sequence Number Reset at 1; its SourceTime tells session and reset apart. */
static void xdp_reset(struct packet *p, uint32_t s, uint32_t resets, uint64_t *msgs)
{
	uint8_t *m;

	xdp_header(p, 1, XDP_DELIVERY_SEQUENCE_RESET);
	m = xdp_message(p, XDP_SEQUENCE_RESET, XDP_SEQUENCE_RESET_LEN);
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME, 1771511400 + s * 100 + resets);
	m[XDP_RESET_PRODUCT_ID] = 11;	/* NYSE Integrated */
	m[XDP_RESET_CHANNEL_ID] = 1;
	*msgs = 1;
}

/* The reset, then the spin's mapping of STRM (scale 4). */
static int xdp_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	uint8_t *m;

	xdp_reset(&out[0], s, 0, msgs);
	xdp_header(&out[1], 2, XDP_DELIVERY_ORIGINAL);
	m = xdp_message(&out[1], XDP_SYMBOL_MAPPING, XDP_SYMBOL_MAPPING_LEN);
	wire_put_le32(m + XDP_MAPPING_INDEX, STRM_INDEX);
	memcpy(m + XDP_MAPPING_SYMBOL, "STRM", 4);
	m[XDP_MAPPING_SCALE] = 4;
	wire_put_le16(m + XDP_MAPPING_LOT_SIZE, 100);
	*msgs = 2;
	return 2;
}

static void xdp_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	(void)s;
	xdp_header(p, seq, XDP_DELIVERY_ORIGINAL);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = xdp_message(p, XDP_ADD_ORDER, XDP_ADD_ORDER_LEN);

		wire_put_le32(m + XDP_SOURCE_TIME_NS, (uint32_t)(seq + i));
		wire_put_le32(m + XDP_SYMBOL_INDEX, STRM_INDEX);
		wire_put_le64(m + XDP_ORDER_ID, seq + i);
		wire_put_le32(m + XDP_ADD_PRICE, 100000);
		wire_put_le32(m + XDP_ADD_VOLUME, 100);
		m[XDP_ADD_SIDE] = 'B';
	}
}

/* A refresh packet: the Refresh Header (LastSeqNum 0: it covers no real-time
 * message), the mapping, an Add Order Refresh per order. */
static void xdp_snapshot(struct packet *p, uint32_t s, uint64_t first, uint32_t count)
{
	uint8_t *m;

	(void)s;
	xdp_header(p, 0, XDP_DELIVERY_REFRESH_ONE);
	m = xdp_message(p, XDP_REFRESH_HEADER, XDP_REFRESH_HEADER_FIRST_LEN);
	wire_put_le16(m + XDP_REFRESH_CURRENT_PKT, 1);
	wire_put_le16(m + XDP_REFRESH_TOTAL_PKTS, 1);
	m = xdp_message(p, XDP_SYMBOL_MAPPING, XDP_SYMBOL_MAPPING_LEN);
	wire_put_le32(m + XDP_MAPPING_INDEX, STRM_INDEX);
	memcpy(m + XDP_MAPPING_SYMBOL, "STRM", 4);
	m[XDP_MAPPING_SCALE] = 4;
	wire_put_le16(m + XDP_MAPPING_LOT_SIZE, 100);
	for (uint32_t i = 0; i < count; i++) {
		m = xdp_message(p, XDP_ADD_ORDER_REFRESH, XDP_ADD_ORDER_REFRESH_LEN);
		wire_put_le32(m + XDP_TIMED_SYMBOL_INDEX, STRM_INDEX);
		wire_put_le64(m + XDP_REFRESH_ORDER_ID, first + i);
		wire_put_le32(m + XDP_REFRESH_PRICE, 100000);
		wire_put_le32(m + XDP_REFRESH_VOLUME, 100);
		m[XDP_REFRESH_SIDE] = 'B';
	}
}

static void xdp_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	(void)s;
	xdp_header(p, next, XDP_DELIVERY_HEARTBEAT);
}

/* XDP has no end of session: a new day is a Sequence Number Reset of its own. */
static int xdp_end(struct packet *out, uint32_t s, uint64_t seq)
{
	(void)out;
	(void)s;
	(void)seq;
	return 0;
}

/* ---- CQS (CTA Pillar binary) --------------------------------------------- */

/*
 * A block of count Long Quotes (or one control message) at seq. Start of
 * Day sits at sequence 0, before the first data sequence (1) the scenarios
 * count from, so its opening holds no message they count.
 */
static void cqs_finish(struct packet *p, uint64_t seq, uint8_t count, uint64_t sip_s)
{
	uint32_t sum = 0;

	if (p->len & 1)
		p->b[p->len++] = 0;
	p->b[CQS_BLOCK_VERSION] = CQS_MAX_VERSION;
	wire_put_be16(p->b + CQS_BLOCK_SIZE, p->len);
	p->b[CQS_BLOCK_FEED] = CQS_FEED_INDICATOR;
	p->b[CQS_BLOCK_RETRANSMISSION] = CQS_ORIGINAL;
	wire_put_be32(p->b + CQS_BLOCK_SEQUENCE, seq);
	p->b[CQS_BLOCK_MESSAGES] = count;
	wire_put_be32(p->b + CQS_BLOCK_SIP_TIME, sip_s);
	wire_put_be32(p->b + CQS_BLOCK_SIP_TIME + 4, 0);	/* ns */
	for (size_t i = 0; i < p->len; i++)
		sum += i == CQS_BLOCK_CHECKSUM || i == CQS_BLOCK_CHECKSUM + 1 ? 0 : p->b[i];
	wire_put_be16(p->b + CQS_BLOCK_CHECKSUM, sum);
}

static uint8_t *cqs_message(struct packet *p, uint16_t len, char category, char type)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	wire_put_be16(m + CQS_MSG_LENGTH, len);
	m[CQS_MSG_CATEGORY] = (uint8_t)category;
	m[CQS_MSG_TYPE] = (uint8_t)type;
	m[CQS_MSG_PARTICIPANT] = 'S';
	p->len += len;
	return m;
}

static void cqs_control(struct packet *p, char type, uint64_t seq, uint64_t sip_s)
{
	p->len = CQS_BLOCK_HEADER_LEN;
	cqs_message(p, CQS_CONTROL_LEN, 'C', type);
	cqs_finish(p, seq, 1, sip_s);
}

static int cqs_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	cqs_control(out, 'A', 0, 1000000 + s);
	*msgs = 0;
	return 1;
}

static void cqs_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	p->len = CQS_BLOCK_HEADER_LEN;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = cqs_message(p, CQS_LONG_QUOTE_LEN, 'Q', 'L');

		m[CQS_MSG_PARTICIPANT] = 'N';
		wire_put_be32(m + CQS_MSG_TIMESTAMP1, 1000000 + s);
		/* symbol, instrument type 0, condition R, no security status */
		memcpy(m + CQS_SYMBOL, "STRM       0R ", 14);
		wire_put_be64(m + CQS_LONG_BID_PRICE, 10000000);
		wire_put_be32(m + CQS_LONG_BID_SIZE, 1);
		wire_put_be64(m + CQS_LONG_ASK_PRICE, 10010000);
		wire_put_be32(m + CQS_LONG_ASK_SIZE, 1);
		memset(m + CQS_LONG_RETAIL_INTEREST, ' ', CQS_LONG_QUOTE_LEN - CQS_LONG_RETAIL_INTEREST);
		memset(m + CQS_LONG_TIMESTAMP2, 0, CQS_TIME_LEN);
		m[CQS_LONG_NBBO] = 'A';
	}
	cqs_finish(p, seq, (uint8_t)count, 1000000 + s);
}

/* Line Integrity names the last sequence sent. */
static void cqs_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	cqs_control(p, 'T', next - 1, 1000000 + s);
}

/* Reset Block Sequence Number at sequence 1: the block holds it. */
static void cqs_reset(struct packet *p, uint32_t s, uint32_t resets, uint64_t *msgs)
{
	cqs_control(p, 'L', 1, 2000000 + s * 100 + resets);
	*msgs = 1;
}

static int cqs_end(struct packet *out, uint32_t s, uint64_t seq)
{
	cqs_control(out, 'Z', seq, 1000000 + s);
	return 1;
}

/* ---- UQDF (UTP binary over MoldUDP64) ------------------------------------- */

static int uqdf_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	uint8_t *m;

	mold_session_header(out, s, 1, 1);
	m = mold_message(out, UQDF_AB_LEN);
	memcpy(m, "1ABE ", 5);	/* version, Issue Symbol Directory, from the SIP */
	memcpy(m + UQDF_ADMIN_SYMBOL, "STRM       ", UQDF_SYMBOL_LEN);
	wire_put_be16(m + UQDF_AB_ROUND_LOT, 100);
	*msgs = 1;
	return 1;
}

static void uqdf_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	mold_session_header(p, s, seq, (uint16_t)count);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = mold_message(p, UQDF_QE_LEN);

		memcpy(m, "1QEQ ", 5);	/* version, Quote Short Form, from Nasdaq */
		wire_put_be64(m + UQDF_SIP_TIME, 1000 * (seq + i));
		/* its name in a snapshot, whose sequences are 0 */
		wire_put_be64(m + UQDF_TIMESTAMP1, 1000 * (seq + i));
		memcpy(m + UQDF_QE_SYMBOL, "STRM ", UQDF_SHORT_SYMBOL_LEN);
		wire_put_be16(m + UQDF_QE_BID_PRICE, 1000);
		wire_put_be16(m + UQDF_QE_BID_SIZE, 1);
		wire_put_be16(m + UQDF_QE_ASK_PRICE, 1001);
		wire_put_be16(m + UQDF_QE_ASK_SIZE, 1);
		/* condition R, no SIP update, LULD or retail interest; NBBO unchanged */
		memcpy(m + UQDF_QE_CONDITION, "R   0 ", 6);
	}
}

/* The UTP Snap-Shot's messages packed into MoldUDP64 blocks: the directory,
 * then count quotes, named first, first+1, ... by their timestamps. */
static void uqdf_snapshot(struct packet *p, uint32_t s, uint64_t first, uint32_t count)
{
	struct packet quotes;
	uint64_t msgs;

	uqdf_open(p, s, &msgs);
	uqdf_data(&quotes, s, first, count);
	memcpy(p->b + p->len, quotes.b + MOLD_HEADER_LEN, quotes.len - MOLD_HEADER_LEN);
	p->len += quotes.len - MOLD_HEADER_LEN;
	wire_put_be16(p->b + MOLD_COUNT, (uint16_t)(count + 1));
}

/* ---- the table ---------------------------------------------------------- */

static const struct fixture fixtures[] = {
	{ "itch", FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "STRM", itch_open, itch_data,
	  itch_heartbeat, NULL, itch_end, false, itch_snapshot, true },
	{ "pitch", FEED_PROTO_PITCH, WB_VENUE_BZX, "STRM", pitch_open, pitch_data,
	  pitch_heartbeat, pitch_reset, pitch_end, false, pitch_snapshot, false },
	{ "xdp", FEED_PROTO_XDP, WB_VENUE_NYSE, "STRM", xdp_open, xdp_data, xdp_heartbeat,
	  xdp_reset, xdp_end, true, xdp_snapshot, true, true },
	{ "cqs", FEED_PROTO_CQS, FEED_SOURCE_CQS, "STRM", cqs_open, cqs_data, cqs_heartbeat,
	  cqs_reset, cqs_end },
	/* MoldUDP64 has no reset: a new session is UQDF's restart, as ITCH's. */
	{ "uqdf", FEED_PROTO_UQDF, FEED_SOURCE_UQDF, "STRM", uqdf_open, uqdf_data,
	  itch_heartbeat, NULL, itch_end, false, uqdf_snapshot, true },
};
#define NFIXTURES (int)(sizeof(fixtures) / sizeof(fixtures[0]))

/* ---- scenario helpers --------------------------------------------------- */

static struct harness h;
static const struct fixture *fx;
static int line_a, line_b;
static uint64_t first_data;	/* sequence of P(1) */
static uint64_t now_ns = 1000;	/* receive time, advanced per packet */

static void setup_fixture(int i, bool subscribe)
{
	struct packet p[4];
	uint64_t msgs;
	int n;

	fx = &fixtures[i];
	harness_init(&h, HARNESS_RING_SLOTS);
	line_a = feed_map_add(h.engine, 0xe9000001, 4000, fx->protocol, fx->venue, "A");
	line_b = feed_map_add(h.engine, 0xe9000002, 4000, fx->protocol, fx->venue, "B");
	ck_assert_int_ge(line_a, 0);
	ck_assert_int_ge(line_b, 0);
	if (subscribe)
		ck_assert_int_gt(feed_subscribe(h.engine, fx->ticker, strlen(fx->ticker)), 0);
	n = fx->open(p, 1, &msgs);
	for (int k = 0; k < n; k++) {
		harness_payload(&h, line_a, p[k].b, p[k].len);
		harness_payload(&h, line_b, p[k].b, p[k].len);
	}
	first_data = 1 + msgs;
	/* The scenarios look at what follows the opening. */
	h.n = 0;
	memset(&h.engine->lines[line_a].counters, 0, sizeof(struct feed_counters));
	memset(&h.engine->lines[line_b].counters, 0, sizeof(struct feed_counters));
}

/* P(k), k >= 1, of the current session, on a line. */
static void send_data(int line, int k)
{
	struct packet p;

	fx->data(&p, 1, first_data + (uint64_t)(k - 1) * ORDERS_PER_PACKET, ORDERS_PER_PACKET);
	now_ns += 1000;
	feed_process_payload(h.engine, line, p.b, (uint32_t)p.len, now_ns, &h.prod);
	harness_drain(&h);
}

static uint64_t seq_of(int k, int msg)
{
	return first_data + (uint64_t)(k - 1) * ORDERS_PER_PACKET + (uint64_t)msg;
}

/* The decoded messages and gaps as text: "A5 A6 G7+2 A9 C". */
static const char *story(void)
{
	static char text[4096];
	size_t n = 0;

	text[0] = 0;
	for (size_t i = 0; i < h.n && n < sizeof(text) - 32; i++) {
		const struct wb_event *ev = &h.events[i];

		/* A data message decoded: an Add (its order id is its sequence) or a
		 * SIP quote. */
		if (ev->kind == WB_EV_ADD || ev->kind == WB_EV_QUOTE)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%sA%" PRIu64, n ? " " : "",
					      ev->kind == WB_EV_ADD ? ev->u.order.order_id :
					      fx->protocol == FEED_PROTO_UQDF ? ev->exch_ts / 1000 :
					      ev->seq);
		else if (ev->kind == WB_EV_GAP && ev->u.gap.reason == WB_GAP_RECOVERING)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%sR%" PRIu64 "+%" PRIu64,
					      n ? " " : "", ev->u.gap.first, ev->u.gap.count);
		else if (ev->kind == WB_EV_GAP && ev->u.gap.reason == WB_GAP_FILLED)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%sF%" PRIu64 "+%" PRIu64 "/%u",
					      n ? " " : "", ev->u.gap.first, ev->u.gap.count,
					      ev->u.gap.lost);
		else if (ev->kind == WB_EV_GAP)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%sG%" PRIu64 "+%" PRIu64 "%s",
					      n ? " " : "", ev->u.gap.first, ev->u.gap.count,
					      ev->u.gap.reason == WB_GAP_LATE_SUBSCRIBE ? "late" : "");
		else if (ev->kind == WB_EV_CLEAR)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%sC", n ? " " : "");
	}
	return text;
}

/* The adds of packets first..last, in order, as story() writes them. */
static void adds_of(char *out, size_t len, int first, int last)
{
	size_t n = 0;

	out[0] = 0;
	for (int k = first; k <= last; k++)
		for (int m = 0; m < ORDERS_PER_PACKET; m++)
			n += (size_t)snprintf(out + n, len - n, "%sA%" PRIu64, n ? " " : "",
					      seq_of(k, m));
}

static uint64_t sum(uint64_t (*get)(const struct feed_counters *))
{
	return get(&h.engine->lines[line_a].counters) + get(&h.engine->lines[line_b].counters);
}

/* The data messages decoded: Adds, or the SIPs' quotes. */
static size_t decoded(void)
{
	return harness_count(&h, WB_EV_ADD) + harness_count(&h, WB_EV_QUOTE);
}

static uint64_t gaps_of(const struct feed_counters *c) { return c->gaps; }
static uint64_t dups_of(const struct feed_counters *c) { return c->duplicates; }
static uint64_t changes_of(const struct feed_counters *c) { return c->session_changes; }
static uint64_t heartbeats_of(const struct feed_counters *c) { return c->heartbeats; }

/* ---- the scenarios --------------------------------------------------------- */

START_TEST(test_stream_in_order_decodes_every_message_once)
{
	char want[512];

	setup_fixture(_i, true);
	for (int k = 1; k <= 5; k++)
		send_data(line_a, k);
	adds_of(want, sizeof(want), 1, 5);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_ab_duplicates_are_dropped)
{
	char want[512];

	setup_fixture(_i, true);
	for (int k = 1; k <= 5; k++) {
		send_data(line_a, k);
		send_data(line_b, k);
	}
	adds_of(want, sizeof(want), 1, 5);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(dups_of), 5);
	ck_assert_uint_eq(sum(gaps_of), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_packet_lost_on_a_is_filled_by_b)
{
	char want[512];

	setup_fixture(_i, true);
	send_data(line_a, 1);
	send_data(line_b, 1);
	send_data(line_a, 2);
	send_data(line_a, 4);	/* 3 lost on A: held until B says */
	send_data(line_b, 2);
	send_data(line_b, 3);
	send_data(line_a, 5);
	send_data(line_b, 4);
	send_data(line_b, 5);
	adds_of(want, sizeof(want), 1, 5);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 0);
	ck_assert_uint_eq(h.engine->lines[line_a].counters.held, 1);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_packet_lost_on_both_lines_is_exactly_one_gap)
{
	char want[512], tail[256];

	setup_fixture(_i, true);
	for (int k = 1; k <= 5; k++) {
		if (k == 3)
			continue;
		send_data(line_a, k);
		send_data(line_b, k);
	}
	adds_of(want, sizeof(want), 1, 2);
	adds_of(tail, sizeof(tail), 4, 5);
	snprintf(want + strlen(want), sizeof(want) - strlen(want), " G%" PRIu64 "+%d %s", seq_of(3, 0),
		 ORDERS_PER_PACKET, tail);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 1);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_gap_is_named_by_the_line_that_opened_the_hole)
{
	const struct wb_event *gap = NULL;

	setup_fixture(_i, true);
	send_data(line_a, 1);
	send_data(line_b, 1);
	send_data(line_a, 2);
	send_data(line_a, 4);	/* A opens the hole at 3; B may still fill it */
	send_data(line_b, 2);
	send_data(line_b, 4);	/* B passes it too: B's packet declares the gap */
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].kind == WB_EV_GAP)
			gap = &h.events[i];
	ck_assert_msg(gap != NULL, "%s: no gap: %s", fx->name, story());
	/* Which packet declares a hole depends on arrival timing; its name must not. */
	ck_assert_uint_eq(gap->line, line_a);
	ck_assert_uint_eq(h.engine->lines[line_a].counters.gaps, 1);
	ck_assert_uint_eq(h.engine->lines[line_b].counters.gaps, 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_input_end_reports_the_hole_and_decodes_what_was_held)
{
	char want[512], tail[256];

	setup_fixture(_i, true);
	send_data(line_b, 1);	/* B is alive, so A's packet after the hole waits */
	send_data(line_a, 1);
	send_data(line_a, 3);
	ck_assert_msg(strstr(story(), "G") == NULL, "%s: %s", fx->name, story());
	feed_engine_flush(h.engine, &h.prod);
	harness_drain(&h);
	adds_of(want, sizeof(want), 1, 1);
	adds_of(tail, sizeof(tail), 3, 3);
	snprintf(want + strlen(want), sizeof(want) - strlen(want), " G%" PRIu64 "+%d %s", seq_of(2, 0),
		 ORDERS_PER_PACKET, tail);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(feed_engine_holes(h.engine), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_quiet_hole_ages_into_a_gap_when_polled)
{
	setup_fixture(_i, true);
	send_data(line_b, 1);
	send_data(line_a, 1);
	send_data(line_a, 3);
	feed_engine_poll(h.engine, now_ns + 10, &h.prod);	/* younger than hold_ns: waits */
	harness_drain(&h);
	ck_assert_msg(strstr(story(), "G") == NULL, "%s: %s", fx->name, story());
	feed_engine_poll(h.engine, now_ns + 2000000, &h.prod);	/* 2 ms later */
	harness_drain(&h);
	ck_assert_msg(strstr(story(), "G") != NULL, "%s: %s", fx->name, story());
	ck_assert_uint_eq(decoded(), 2 * ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_reordered_packets_are_decoded_in_sequence)
{
	char want[512];

	setup_fixture(_i, true);
	send_data(line_b, 1);	/* B is behind but alive */
	send_data(line_a, 1);
	send_data(line_a, 3);	/* A swaps 2 and 3 */
	send_data(line_a, 2);
	send_data(line_a, 4);
	send_data(line_b, 2);
	send_data(line_b, 3);
	send_data(line_b, 4);
	adds_of(want, sizeof(want), 1, 4);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_heartbeat_reveals_a_lost_tail)
{
	struct packet p;
	char want[512];

	setup_fixture(_i, true);
	for (int k = 1; k <= 2; k++) {
		send_data(line_a, k);
		send_data(line_b, k);
	}
	/* P3 is lost on both lines; then both lines go quiet but for heartbeats. */
	fx->heartbeat(&p, 1, seq_of(4, 0));
	harness_payload(&h, line_a, p.b, p.len);
	harness_payload(&h, line_b, p.b, p.len);
	adds_of(want, sizeof(want), 1, 2);
	if (fx->heartbeat_unsequenced) {
		char tail[256];

		/* Nothing to learn from the heartbeat: no gap, and no false one. */
		ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
		send_data(line_a, 4);
		send_data(line_b, 4);
		adds_of(tail, sizeof(tail), 4, 4);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), " G%" PRIu64 "+%d %s",
			 seq_of(3, 0), ORDERS_PER_PACKET, tail);
		ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
		ck_assert_uint_eq(sum(gaps_of), 1);
		ck_assert_uint_eq(sum(heartbeats_of), 2);
		harness_free(&h);
		return;
	}
	snprintf(want + strlen(want), sizeof(want) - strlen(want), " G%" PRIu64 "+%d", seq_of(3, 0),
		 ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 1);
	/* The same heartbeat again says nothing new. */
	harness_payload(&h, line_a, p.b, p.len);
	ck_assert_uint_eq(sum(gaps_of), 1);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_sequence_reset_starts_over_without_a_gap)
{
	struct packet p;
	uint64_t msgs;

	setup_fixture(_i, true);
	if (!fx->reset) {
		harness_free(&h);
		return;		/* the protocol has no reset: a new session is its restart */
	}
	for (int k = 1; k <= 3; k++) {
		send_data(line_a, k);
		send_data(line_b, k);
	}
	fx->reset(&p, 1, 1, &msgs);
	harness_payload(&h, line_a, p.b, p.len);
	send_data(line_b, 3);		/* B still in the old epoch: stale, not a gap */
	harness_payload(&h, line_b, p.b, p.len);
	fx->data(&p, 1, 1 + msgs, ORDERS_PER_PACKET);
	harness_payload(&h, line_b, p.b, p.len);
	harness_payload(&h, line_a, p.b, p.len);
	ck_assert_msg(strstr(story(), " C A") != NULL, "%s: no clear before the new orders: %s",
		      fx->name, story());
	ck_assert_msg(strstr(story(), "G") == NULL, "%s: a reset is no gap: %s", fx->name, story());
	ck_assert_uint_eq(sum(changes_of), 1);
	ck_assert_uint_eq(decoded(), 3 * ORDERS_PER_PACKET + ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_new_session_clears_and_starts_at_its_first_sequence)
{
	struct packet p[4], d;
	uint64_t msgs;
	int n;

	setup_fixture(_i, true);
	for (int k = 1; k <= 2; k++)
		send_data(line_a, k);
	n = fx->end(p, 1, seq_of(3, 0));
	for (int k = 0; k < n; k++)
		harness_payload(&h, line_a, p[k].b, p[k].len);
	n = fx->open(p, 2, &msgs);
	for (int k = 0; k < n; k++)
		harness_payload(&h, line_a, p[k].b, p[k].len);
	/* B lags: its copies of the old session's packets come after. */
	send_data(line_b, 2);
	for (int k = 0; k < n; k++)
		harness_payload(&h, line_b, p[k].b, p[k].len);
	fx->data(&d, 2, 1 + msgs, ORDERS_PER_PACKET);
	harness_payload(&h, line_a, d.b, d.len);
	harness_payload(&h, line_b, d.b, d.len);
	ck_assert_msg(strstr(story(), "G") == NULL, "%s: a new session is no gap: %s", fx->name,
		      story());
	ck_assert_msg(strstr(story(), " C") != NULL, "%s: the old session's books stay: %s", fx->name,
		      story());
	ck_assert_uint_eq(decoded(), 3 * ORDERS_PER_PACKET);
	ck_assert_uint_eq(h.engine->lines[line_b].counters.stale_session, 1);
	ck_assert_uint_eq(sum(changes_of), 1);
	harness_free(&h);
}
END_TEST

START_TEST(test_stream_symbol_subscribed_mid_session_gets_a_late_gap)
{
	char want[512], tail[256];
	int id;

	setup_fixture(_i, false);
	send_data(line_a, 1);		/* filtered: not subscribed yet */
	id = feed_subscribe(h.engine, fx->ticker, strlen(fx->ticker));
	ck_assert_int_gt(id, 0);
	send_data(line_a, 2);
	adds_of(tail, sizeof(tail), 2, 2);
	snprintf(want, sizeof(want), "G0+0late %s", tail);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].kind == WB_EV_GAP)
			ck_assert_int_eq(h.events[i].instrument, id);
	harness_free(&h);
}
END_TEST

/* ---- recovery scenarios ------------------------------------------------------- */

/* The fixture's stream in recovery mode with a buffer of slots packets. */
static void setup_recovery(int i, uint32_t slots)
{
	setup_fixture(i, true);
	ck_assert_int_eq(feed_recovery_enable(h.engine, fx->venue, 0, slots), 0);
}

/* P(k) handed in as a recovered packet (a re-request reply, a gap response). */
static int recover(int k)
{
	struct packet p;
	int rc;

	fx->data(&p, 1, seq_of(k, 0), ORDERS_PER_PACKET);
	now_ns += 1000;
	rc = feed_recover_packet(h.engine, line_a, p.b, (uint32_t)p.len, now_ns, &h.prod);
	harness_drain(&h);
	return rc;
}

static void send_both(int k)
{
	send_data(line_a, k);
	send_data(line_b, k);
}

static void lost(int k, int packets)
{
	now_ns += 1000;
	ck_assert_int_eq(feed_recover_lost(h.engine, line_a, fx->protocol == FEED_PROTO_PITCH ?
					   PITCH_UNIT : 0, seq_of(k, 0),
					   (uint64_t)packets * ORDERS_PER_PACKET, now_ns, &h.prod), 0);
	harness_drain(&h);
}

static uint8_t unit_of_fixture(void)
{
	return fx->protocol == FEED_PROTO_PITCH ? PITCH_UNIT : 0;
}

static uint64_t rsum(uint64_t (*get)(const struct feed_counters *))
{
	return sum(get);
}

static uint64_t rec_gaps_of(const struct feed_counters *c) { return c->rec_gaps; }
static uint64_t rec_filled_of(const struct feed_counters *c) { return c->rec_filled; }
static uint64_t rec_unrec_of(const struct feed_counters *c) { return c->rec_unrecoverable; }
static uint64_t rec_msgs_of(const struct feed_counters *c) { return c->rec_messages; }

/* "A.. " of packets first..last, then text, into want. */
static void append(char *want, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *want, size_t len, const char *fmt, ...)
{
	size_t n = strlen(want);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want + n, len - n, fmt, ap);
	va_end(ap);
}

static void append_adds(char *want, size_t len, int first, int last)
{
	char adds[512];

	adds_of(adds, sizeof(adds), first, last);
	append(want, len, "%s%s", want[0] ? " " : "", adds);
}

START_TEST(test_recovery_hole_is_announced_then_filled_in_sequence_order)
{
	char want[1024] = "";

	setup_recovery(_i, 0);
	for (int k = 1; k <= 5; k++)
		if (k != 3)
			send_both(k);
	append_adds(want, sizeof(want), 1, 2);
	append(want, sizeof(want), " R%" PRIu64 "+%d", seq_of(3, 0), ORDERS_PER_PACKET);
	/* P4 and P5 wait: nothing of the stream reaches the books out of order. */
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_int_eq(recover(3), 0);
	append_adds(want, sizeof(want), 3, 5);
	append(want, sizeof(want), " F%" PRIu64 "+%d/0", seq_of(3, 0), ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 0);
	ck_assert_uint_eq(rsum(rec_gaps_of), 1);
	ck_assert_uint_eq(rsum(rec_filled_of), 1);
	ck_assert_uint_eq(rsum(rec_msgs_of), ORDERS_PER_PACKET);
	/* The real-time copy of what was recovered, arriving late, is a duplicate. */
	send_data(line_b, 3);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s", fx->name, story());
	send_both(6);
	ck_assert_uint_eq(decoded(), 6 * ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_range_said_lost_is_a_gap_and_what_was_held_follows)
{
	char want[1024] = "";

	setup_recovery(_i, 0);
	for (int k = 1; k <= 5; k++)
		if (k != 3)
			send_both(k);
	lost(3, 1);
	append_adds(want, sizeof(want), 1, 2);
	append(want, sizeof(want), " R%" PRIu64 "+%d G%" PRIu64 "+%d", seq_of(3, 0),
	       ORDERS_PER_PACKET, seq_of(3, 0), ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 4, 5);
	append(want, sizeof(want), " F%" PRIu64 "+%d/%d", seq_of(3, 0), ORDERS_PER_PACKET,
	       ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 1);
	ck_assert_uint_eq(rsum(rec_unrec_of), 1);
	ck_assert_uint_eq(rsum(rec_filled_of), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_filled_in_part_then_the_rest_lost)
{
	char want[1024] = "";

	setup_recovery(_i, 0);
	send_both(1);
	send_both(4);		/* 2 and 3 lost on both lines */
	ck_assert_int_eq(recover(2), 0);
	lost(3, 1);
	append_adds(want, sizeof(want), 1, 1);
	append(want, sizeof(want), " R%" PRIu64 "+%d", seq_of(2, 0), 2 * ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 2, 2);
	append(want, sizeof(want), " G%" PRIu64 "+%d", seq_of(3, 0), ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 4, 4);
	append(want, sizeof(want), " F%" PRIu64 "+%d/%d", seq_of(2, 0), 2 * ORDERS_PER_PACKET,
	       ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_second_hole_among_held_packets_is_the_next_recovery)
{
	char want[1024] = "";

	setup_recovery(_i, 0);
	for (int k = 1; k <= 6; k++)
		if (k != 3 && k != 5)
			send_both(k);
	ck_assert_int_eq(recover(3), 0);
	append_adds(want, sizeof(want), 1, 2);
	append(want, sizeof(want), " R%" PRIu64 "+%d", seq_of(3, 0), ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 3, 4);
	append(want, sizeof(want), " F%" PRIu64 "+%d/0 R%" PRIu64 "+%d", seq_of(3, 0),
	       ORDERS_PER_PACKET, seq_of(5, 0), ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	/* A recovered packet beyond the hole waits for it too. */
	ck_assert_int_eq(recover(7), 0);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_int_eq(recover(5), 0);
	append_adds(want, sizeof(want), 5, 7);
	append(want, sizeof(want), " F%" PRIu64 "+%d/0", seq_of(5, 0), ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(rsum(rec_filled_of), 2);
	ck_assert_uint_eq(rsum(rec_msgs_of), 2 * ORDERS_PER_PACKET + ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_full_buffer_gives_up_the_stream_holding_most)
{
	char want[1024] = "";
	const int slots = 16;

	setup_recovery(_i, slots);
	send_both(1);
	for (int k = 3; k <= 3 + slots; k++)	/* 2 lost; one more packet than fits */
		send_both(k);
	append_adds(want, sizeof(want), 1, 1);
	append(want, sizeof(want), " R%" PRIu64 "+%d G%" PRIu64 "+%d", seq_of(2, 0),
	       ORDERS_PER_PACKET, seq_of(2, 0), ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 3, 2 + slots);
	append(want, sizeof(want), " F%" PRIu64 "+%d/%d", seq_of(2, 0), ORDERS_PER_PACKET,
	       ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 3 + slots, 3 + slots);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(rsum(rec_unrec_of), 1);
	ck_assert_uint_ge(h.engine->lines[line_a].counters.rec_buffer_full +
			  h.engine->lines[line_b].counters.rec_buffer_full, 1);
	/* The recovered packet that comes too late changes nothing. */
	ck_assert_int_eq(recover(2), 0);
	ck_assert_uint_eq(decoded(), (2 + slots) * ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_duplicate_recovered_packets_are_dropped)
{
	setup_recovery(_i, 0);
	send_both(1);
	send_both(3);
	ck_assert_int_eq(recover(2), 0);
	ck_assert_int_eq(recover(2), 0);	/* a second reply to a retried request */
	ck_assert_uint_eq(decoded(), 3 * ORDERS_PER_PACKET);
	ck_assert_uint_eq(rsum(rec_msgs_of), ORDERS_PER_PACKET);
	ck_assert_uint_ge(sum(dups_of), 3);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_heartbeat_tail_hole_is_recovered)
{
	struct packet p;
	char want[1024] = "";

	/* XDP heartbeats say nothing of the sequence: the hole shows at the next
	 * data packet, as test_recovery_hole_is_announced_then_filled_in_sequence_order. */
	if (fixtures[_i].heartbeat_unsequenced)
		return;

	setup_recovery(_i, 0);
	send_both(1);
	send_both(2);
	fx->heartbeat(&p, 1, seq_of(4, 0));	/* 3 lost, then the stream goes quiet */
	harness_payload(&h, line_a, p.b, p.len);
	harness_payload(&h, line_b, p.b, p.len);
	ck_assert_int_eq(recover(3), 0);
	append_adds(want, sizeof(want), 1, 2);
	append(want, sizeof(want), " R%" PRIu64 "+%d", seq_of(3, 0), ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 3, 3);
	append(want, sizeof(want), " F%" PRIu64 "+%d/0", seq_of(3, 0), ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_list_says_what_to_ask_for)
{
	struct feed_recovery_stream rs[4];

	setup_recovery(_i, 0);
	ck_assert_int_eq(feed_recovery_list(h.engine, rs, 4, false), 0);
	send_both(1);
	send_both(4);
	ck_assert_int_eq(feed_recovery_list(h.engine, rs, 4, false), 1);
	ck_assert_int_eq(rs[0].state, FEED_REC_GAP);
	ck_assert_int_eq(rs[0].venue, fx->venue);
	ck_assert_int_eq(rs[0].unit, unit_of_fixture());
	ck_assert_uint_eq(rs[0].missing_first, seq_of(2, 0));
	ck_assert_uint_eq(rs[0].missing_count, 2 * ORDERS_PER_PACKET);
	ck_assert_uint_eq(rs[0].held, 1);
	ck_assert_int_eq(recover(2), 0);
	ck_assert_int_eq(feed_recovery_list(h.engine, rs, 4, false), 1);
	ck_assert_uint_eq(rs[0].missing_first, seq_of(3, 0));
	ck_assert_uint_eq(rs[0].missing_count, ORDERS_PER_PACKET);
	ck_assert_int_eq(recover(3), 0);
	ck_assert_int_eq(feed_recovery_list(h.engine, rs, 4, false), 0);
	ck_assert_int_eq(feed_recovery_list(h.engine, rs, 4, true), 1);
	ck_assert_uint_eq(rs[0].filled, 1);
	ck_assert_uint_eq(rs[0].messages, 2 * ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

/* Snapshot scenarios run for the protocols with a snapshot framing. */
static bool fx_has_snapshot(int i)
{
	return fixtures[i].snapshot != NULL;
}

/* The fixture's stream in recovery mode before anything of it was seen. */
static uint64_t setup_late(int i)
{
	struct packet p[4];
	uint64_t msgs;

	fx = &fixtures[i];
	harness_init(&h, HARNESS_RING_SLOTS);
	line_a = feed_map_add(h.engine, 0xe9000001, 4000, fx->protocol, fx->venue, "A");
	line_b = feed_map_add(h.engine, 0xe9000002, 4000, fx->protocol, fx->venue, "B");
	ck_assert_int_gt(feed_subscribe(h.engine, fx->ticker, strlen(fx->ticker)), 0);
	ck_assert_int_eq(feed_recovery_enable(h.engine, fx->venue, 0, 0), 0);
	fx->open(p, 1, &msgs);
	first_data = 1 + msgs;
	return msgs;
}

START_TEST(test_recovery_late_join_is_filled_from_the_first_sequence)
{
	struct packet p[4];
	char want[1024] = "";
	uint64_t msgs = setup_late(_i), first, missing;
	int n;

	send_both(3);		/* joined late: the open, P1 and P2 went by */
	send_both(4);
	/* The late join's range starts at the session's first sequence (CQS: 0). */
	first = fx->protocol == FEED_PROTO_CQS ? 0 : 1;
	missing = first_data - first + 2 * ORDERS_PER_PACKET;
	append(want, sizeof(want), "R%" PRIu64 "+%" PRIu64, first, missing);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	n = fx->open(p, 1, &msgs);
	for (int k = 0; k < n; k++)
		ck_assert_int_eq(feed_recover_packet(h.engine, line_a, p[k].b, (uint32_t)p[k].len,
						     now_ns, &h.prod), 0);
	ck_assert_int_eq(recover(1), 0);
	ck_assert_int_eq(recover(2), 0);
	ck_assert_uint_eq(decoded(), 4 * ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 1, 4);
	append(want, sizeof(want), " F%" PRIu64 "+%" PRIu64 "/0", first, missing);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(sum(gaps_of), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_snapshot_late_join_applies_it_then_what_came_after_its_sequence)
{
	struct packet p;
	char want[1024] = "";
	uint64_t msgs = setup_late(_i);
	uint8_t unit;

	if (!fx_has_snapshot(_i)) {
		harness_free(&h);
		return;
	}

	send_both(2);		/* joined late; the snapshot will reach to P3 */
	send_both(3);
	send_both(4);
	unit = unit_of_fixture();
	ck_assert_int_eq(feed_snapshot_begin(h.engine, line_a, unit, now_ns, &h.prod), 0);
	send_both(5);		/* real time goes on meanwhile: buffered */
	fx->snapshot(&p, 1, 1000, 3);
	ck_assert_int_eq(feed_snapshot_packet(h.engine, line_a, unit, p.b, (uint32_t)p.len,
					      now_ns, &h.prod), 0);
	harness_drain(&h);
	ck_assert_int_eq(feed_snapshot_end(h.engine, line_a, unit, seq_of(3, 1), now_ns, &h.prod),
			 0);
	harness_drain(&h);
	/* R of the late start, the clear, the snapshot's orders, then P3's second
	 * message on (its first was in the snapshot), P4, P5, then F. */
	append(want, sizeof(want), "R1+%" PRIu64 "%s A1000 A1001 A1002 A%" PRIu64, msgs +
	       ORDERS_PER_PACKET, fx->one_stream ? " C" : "", seq_of(3, 1));
	append_adds(want, sizeof(want), 4, 5);
	append(want, sizeof(want), " F1+%" PRIu64 "/0", seq_of(3, 1) - 1);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(h.engine->lines[line_a].counters.snapshots, 1);
	ck_assert_uint_eq(sum(gaps_of), 0);
	/* A SIP's clear is the SIP view's (WB_EVF_SIP), not a venue book's. */
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].kind == WB_EV_CLEAR)
			ck_assert_uint_eq(h.events[i].flags & WB_EVF_SIP,
					  fx->venue >= WB_VENUE_SIP_CQS ? WB_EVF_SIP : 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_snapshot_mid_day_replaces_the_books_and_skips_what_it_covers)
{
	struct packet p;
	char want[1024] = "";
	uint8_t unit;

	if (!fx_has_snapshot(_i))
		return;

	setup_recovery(_i, 0);
	send_both(1);
	unit = unit_of_fixture();
	ck_assert_int_eq(feed_snapshot_begin(h.engine, line_a, unit, now_ns, &h.prod), 0);
	send_both(2);
	send_both(3);
	fx->snapshot(&p, 1, 500, 2);
	ck_assert_int_eq(feed_snapshot_packet(h.engine, line_a, unit, p.b, (uint32_t)p.len,
					      now_ns, &h.prod), 0);
	ck_assert_int_eq(feed_snapshot_end(h.engine, line_a, unit, seq_of(3, 0), now_ns, &h.prod),
			 0);
	harness_drain(&h);
	append_adds(want, sizeof(want), 1, 1);
	append(want, sizeof(want), " R%" PRIu64 "+0 C A500 A501", seq_of(2, 0));
	append_adds(want, sizeof(want), 3, 3);
	append(want, sizeof(want), " F%" PRIu64 "+%d/0", seq_of(2, 0), ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	harness_free(&h);
}
END_TEST

START_TEST(test_snapshot_abandoned_declares_what_it_should_have_covered)
{
	char want[1024] = "";
	uint64_t msgs = setup_late(_i);
	uint8_t unit = unit_of_fixture();

	if (!fx_has_snapshot(_i)) {
		harness_free(&h);
		return;
	}

	send_both(3);
	ck_assert_int_eq(feed_snapshot_begin(h.engine, line_a, unit, now_ns, &h.prod), 0);
	send_both(4);
	ck_assert_int_eq(feed_snapshot_abort(h.engine, line_a, unit, now_ns, &h.prod), 0);
	harness_drain(&h);
	append(want, sizeof(want), "R1+%" PRIu64 "%s G1+%" PRIu64, msgs + 2 * ORDERS_PER_PACKET,
	       fx->one_stream ? " C" : "", msgs + 2 * ORDERS_PER_PACKET);
	if (!fx->orders_need_directory)
		append_adds(want, sizeof(want), 3, 4);
	append(want, sizeof(want), " F1+%" PRIu64 "/%" PRIu64, msgs + 2 * ORDERS_PER_PACKET,
	       msgs + 2 * ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	/* Calls that do not fit the state are refused and counted. */
	ck_assert_int_lt(feed_snapshot_end(h.engine, line_a, unit, 5, now_ns, &h.prod), 0);
	ck_assert_uint_ge(h.engine->lines[line_a].counters.rec_rejected, 1);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_input_end_declares_what_is_still_missing)
{
	char want[1024] = "";

	setup_recovery(_i, 0);
	send_both(1);
	send_both(3);
	feed_engine_flush(h.engine, &h.prod);
	harness_drain(&h);
	append_adds(want, sizeof(want), 1, 1);
	append(want, sizeof(want), " R%" PRIu64 "+%d G%" PRIu64 "+%d", seq_of(2, 0),
	       ORDERS_PER_PACKET, seq_of(2, 0), ORDERS_PER_PACKET);
	append_adds(want, sizeof(want), 3, 3);
	append(want, sizeof(want), " F%" PRIu64 "+%d/%d", seq_of(2, 0), ORDERS_PER_PACKET,
	       ORDERS_PER_PACKET);
	ck_assert_msg(!strcmp(story(), want), "%s: got %s, want %s", fx->name, story(), want);
	ck_assert_uint_eq(feed_engine_holes(h.engine), 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_disabled_ends_open_recoveries_as_lost)
{
	setup_recovery(_i, 0);
	send_both(1);
	send_both(3);
	ck_assert_int_eq(feed_recovery_disable(h.engine, fx->venue, 0, now_ns, &h.prod), 0);
	harness_drain(&h);
	ck_assert_msg(strstr(story(), " F") != NULL, "%s: %s", fx->name, story());
	ck_assert_uint_eq(decoded(), 2 * ORDERS_PER_PACKET);
	/* Back to GAPs. */
	send_both(5);
	ck_assert_uint_eq(sum(gaps_of), 2);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_of_one_stream_never_holds_up_another)
{
	struct feed_map_entry m = { .ip = 0xe9000003, .port = 4000, .channel = 9, .name = "A" };
	struct packet p[4];
	uint64_t msgs;
	int other, n, before;

	setup_recovery(_i, 0);
	m.protocol = (uint8_t)fx->protocol;
	m.venue = (uint8_t)fx->venue;
	other = feed_map_add_entry(h.engine, &m);
	ck_assert_int_ge(other, 0);
	ck_assert_int_eq(feed_recovery_enable(h.engine, fx->venue, 9, 0), 0);
	/* The open may be several packets (XDP's). */
	n = fx->open(p, 1, &msgs);
	for (int k = 0; k < n; k++)
		harness_payload(&h, other, p[k].b, p[k].len);
	send_both(1);
	send_both(3);		/* the first stream now recovers 2 */
	before = (int)decoded();
	for (int k = 1; k <= 3; k++) {
		fx->data(&p[0], 1, first_data + (uint64_t)(k - 1) * ORDERS_PER_PACKET,
			 ORDERS_PER_PACKET);
		harness_payload(&h, other, p[0].b, p[0].len);
	}
	n = (int)decoded() - before;
	ck_assert_int_eq(n, 3 * ORDERS_PER_PACKET);
	harness_free(&h);
}
END_TEST

START_TEST(test_recovery_restart_during_a_recovery_ends_it)
{
	struct packet p[4], d;
	uint64_t msgs;
	int n;

	setup_recovery(_i, 0);
	send_both(1);
	send_both(3);
	if (fx->reset) {
		fx->reset(&d, 1, 1, &msgs);
		harness_payload(&h, line_a, d.b, d.len);
	} else {
		n = fx->end(p, 1, seq_of(4, 0));
		for (int k = 0; k < n; k++)
			harness_payload(&h, line_a, p[k].b, p[k].len);
		n = fx->open(p, 2, &msgs);
		for (int k = 0; k < n; k++)
			harness_payload(&h, line_a, p[k].b, p[k].len);
	}
	/* Exactly one F closes the R, and nothing is left recovering. */
	ck_assert_uint_eq(rsum(rec_gaps_of), 1);
	ck_assert_uint_eq(rsum(rec_unrec_of), 1);
	ck_assert_int_eq(feed_recovery_list(h.engine, NULL, 0, false), 0);
	harness_free(&h);
}
END_TEST

/*
 * Regression: with the group's hold full of another unit's packets, a unit
 * whose packet arrives after a hole of its own (and holds nothing) lost the
 * packet's messages silently: no GAP, the messages skipped. Now the hole is
 * a GAP and the packet is decoded whole.
 */
START_TEST(test_stream_full_hold_of_another_unit_still_gaps_and_decodes)
{
	struct packet p;
	char want[512];

	setup_fixture(1, true);		/* PITCH: 256 units share the hold */
	ck_assert_str_eq(fx->name, "pitch");
	/* Unit 2 opens on both lines, then A runs ahead of B after a hole. */
	pitch_reset(&p, 1, 0, &(uint64_t){0});
	p.b[3] = 2;
	harness_payload(&h, line_a, p.b, p.len);
	harness_payload(&h, line_b, p.b, p.len);
	for (uint64_t seq = 10; seq < 10 + 16; seq++) {
		pitch_data(&p, 1, seq, 1);
		p.b[3] = 2;
		now_ns += 10;
		feed_process_payload(h.engine, line_a, p.b, (uint32_t)p.len, now_ns, &h.prod);
	}
	harness_drain(&h);
	h.n = 0;
	/* Unit 1: P1 on both, then A's P3 while B is behind: no room to hold it. */
	send_data(line_a, 1);
	send_data(line_b, 1);
	send_data(line_a, 3);
	adds_of(want, sizeof(want), 1, 1);
	snprintf(want + strlen(want), sizeof(want) - strlen(want), " G%" PRIu64 "+%d A%" PRIu64
		 " A%" PRIu64, seq_of(2, 0), ORDERS_PER_PACKET, seq_of(3, 0), seq_of(3, 1));
	ck_assert_msg(!strcmp(story(), want), "got %s, want %s", story(), want);
	harness_free(&h);
}
END_TEST

static Suite *streams_suite(void)
{
	Suite *s = suite_create("streams");
	TCase *tc = tcase_create("scenarios");

	tcase_add_loop_test(tc, test_stream_in_order_decodes_every_message_once, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_ab_duplicates_are_dropped, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_packet_lost_on_a_is_filled_by_b, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_packet_lost_on_both_lines_is_exactly_one_gap, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_stream_reordered_packets_are_decoded_in_sequence, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_gap_is_named_by_the_line_that_opened_the_hole, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_input_end_reports_the_hole_and_decodes_what_was_held, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_stream_quiet_hole_ages_into_a_gap_when_polled, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_heartbeat_reveals_a_lost_tail, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_sequence_reset_starts_over_without_a_gap, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_stream_new_session_clears_and_starts_at_its_first_sequence, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_stream_symbol_subscribed_mid_session_gets_a_late_gap, 0,
			    NFIXTURES);
	tcase_add_test(tc, test_stream_full_hold_of_another_unit_still_gaps_and_decodes);
	suite_add_tcase(s, tc);

	tc = tcase_create("recovery");
	tcase_add_loop_test(tc, test_recovery_hole_is_announced_then_filled_in_sequence_order, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_range_said_lost_is_a_gap_and_what_was_held_follows,
			    0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_filled_in_part_then_the_rest_lost, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_second_hole_among_held_packets_is_the_next_recovery,
			    0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_full_buffer_gives_up_the_stream_holding_most, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_duplicate_recovered_packets_are_dropped, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_heartbeat_tail_hole_is_recovered, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_list_says_what_to_ask_for, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_late_join_is_filled_from_the_first_sequence, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_snapshot_late_join_applies_it_then_what_came_after_its_sequence,
			    0, NFIXTURES);
	tcase_add_loop_test(tc, test_snapshot_mid_day_replaces_the_books_and_skips_what_it_covers,
			    0, NFIXTURES);
	tcase_add_loop_test(tc, test_snapshot_abandoned_declares_what_it_should_have_covered, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_input_end_declares_what_is_still_missing, 0,
			    NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_disabled_ends_open_recoveries_as_lost, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_of_one_stream_never_holds_up_another, 0, NFIXTURES);
	tcase_add_loop_test(tc, test_recovery_restart_during_a_recovery_ends_it, 0, NFIXTURES);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(streams_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
