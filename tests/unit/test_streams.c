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
 * A data packet P(k) carries ORDERS_PER_PACKET Add Orders of the fixture's
 * symbol, whose order ids are the messages' own sequence numbers, so the
 * events say exactly which messages were decoded, in what order.
 */
#include "feed_harness.h"

#define ORDERS_PER_PACKET 2
#define PKT_MAX 1472

struct packet {
	uint8_t b[PKT_MAX];
	size_t len;
};

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
};

/* ---- ITCH 5.0 / MoldUDP64 ------------------------------------------------ */

#define ITCH_LOCATE 7

static void be16(uint8_t *p, uint64_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void be32(uint8_t *p, uint64_t v) { be16(p, v >> 16); be16(p + 2, v); }
static void be64(uint8_t *p, uint64_t v) { be32(p, v >> 32); be32(p + 4, v); }
static void le16(uint8_t *p, uint64_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void le32(uint8_t *p, uint64_t v) { le16(p, v); le16(p + 2, v >> 16); }
static void le64(uint8_t *p, uint64_t v) { le32(p, v); le32(p + 4, v >> 32); }

static void mold_header(struct packet *p, uint32_t s, uint64_t seq, uint16_t count)
{
	char session[11];

	snprintf(session, sizeof(session), "SESSION%03u", s % 1000);
	memcpy(p->b, session, 10);
	be64(p->b + 10, seq);
	be16(p->b + 18, count);
	p->len = 20;
}

static uint8_t *mold_message(struct packet *p, uint16_t len)
{
	uint8_t *m = p->b + p->len + 2;

	be16(p->b + p->len, len);
	memset(m, 0, len);
	p->len += 2u + len;
	return m;
}

static int itch_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	uint8_t *m;

	mold_header(out, s, 1, 1);
	m = mold_message(out, 39);
	m[0] = 'R';
	be16(m + 1, ITCH_LOCATE);
	memcpy(m + 11, "STRM    ", 8);
	m[19] = 'Q';
	be32(m + 21, 100);
	*msgs = 1;
	return 1;
}

static void itch_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	mold_header(p, s, seq, (uint16_t)count);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = mold_message(p, 36);

		m[0] = 'A';
		be16(m + 1, ITCH_LOCATE);
		be64(m + 3, 1000 * (seq + i)); /* 48-bit time at 5, written from 3 */
		be16(m + 3, 0);
		be64(m + 11, seq + i);
		m[19] = 'B';
		be32(m + 20, 100);
		memcpy(m + 24, "STRM    ", 8);
		be32(m + 32, 1000000);
	}
}

static void itch_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	mold_header(p, s, next, 0);
}

static int itch_end(struct packet *out, uint32_t s, uint64_t seq)
{
	mold_header(out, s, seq, 0xffff);
	return 1;
}

/* ---- Cboe PITCH -------------------------------------------------------- */

#define PITCH_UNIT 1

static void pitch_header(struct packet *p, uint64_t seq)
{
	p->len = 8;
	p->b[2] = 0;
	p->b[3] = PITCH_UNIT;
	le32(p->b + 4, seq);
}

static uint8_t *pitch_message(struct packet *p, uint8_t len, uint8_t type)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	m[0] = len;
	m[1] = type;
	p->len += len;
	p->b[2]++;
	le16(p->b, p->len);
	return m;
}

/* Time and Unit Clear at sequence 1: the unit's day begins (a reset). */
static void pitch_reset(struct packet *p, uint32_t s, uint32_t resets, uint64_t *msgs)
{
	pitch_header(p, 1);
	le32(pitch_message(p, 6, 0x20) + 2, 34200 + s * 100 + resets);
	le32(pitch_message(p, 6, 0x97) + 2, 5);
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
		uint8_t *m = pitch_message(p, 26, 0x22);

		le32(m + 2, (uint32_t)(seq + i));
		le64(m + 6, seq + i);
		m[14] = 'B';
		le16(m + 15, 100);
		memcpy(m + 17, "STRM  ", 6);
		le16(m + 23, 1000);
	}
}

static void pitch_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	(void)s;
	pitch_header(p, next);
	le16(p->b, p->len);
}

static int pitch_end(struct packet *out, uint32_t s, uint64_t seq)
{
	(void)s;
	pitch_header(out, seq);
	pitch_message(out, 6, 0x2d);
	return 1;
}

/* ---- NYSE XDP -------------------------------------------------------------- */

#define XDP_INDEX 7

static void xdp_header(struct packet *p, uint64_t seq, uint8_t flag)
{
	memset(p->b, 0, 16);
	p->len = 16;
	le16(p->b, 16);
	p->b[2] = flag;
	le32(p->b + 4, seq);
}

static uint8_t *xdp_message(struct packet *p, uint16_t type, uint16_t len)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	le16(m, len);
	le16(m + 2, type);
	p->len += len;
	p->b[3]++;
	le16(p->b, p->len);
	return m;
}

/* A Sequence Number Reset at 1; its SourceTime tells session and reset apart. */
static void xdp_reset(struct packet *p, uint32_t s, uint32_t resets, uint64_t *msgs)
{
	uint8_t *m;

	xdp_header(p, 1, 12);
	m = xdp_message(p, 1, 14);
	le32(m + 4, 1771511400 + s * 100 + resets);
	m[12] = 11;
	m[13] = 1;
	*msgs = 1;
}

/* The reset, then the spin's mapping of STRM (scale 4). */
static int xdp_open(struct packet *out, uint32_t s, uint64_t *msgs)
{
	uint8_t *m;

	xdp_reset(&out[0], s, 0, msgs);
	xdp_header(&out[1], 2, 11);
	m = xdp_message(&out[1], 3, 44);
	le32(m + 4, XDP_INDEX);
	memcpy(m + 8, "STRM", 4);
	m[24] = 4;
	le16(m + 26, 100);
	*msgs = 2;
	return 2;
}

static void xdp_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	(void)s;
	xdp_header(p, seq, 11);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = xdp_message(p, 100, 39);

		le32(m + 4, (uint32_t)(seq + i));
		le32(m + 8, XDP_INDEX);
		le64(m + 16, seq + i);
		le32(m + 24, 100000);
		le32(m + 28, 100);
		m[32] = 'B';
	}
}

static void xdp_heartbeat(struct packet *p, uint32_t s, uint64_t next)
{
	(void)s;
	xdp_header(p, next, 1);
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
#define CQS_LONG_QUOTE 87

static void cqs_finish(struct packet *p, uint64_t seq, uint8_t count, uint64_t sip_s)
{
	uint32_t sum = 0;

	if (p->len & 1)
		p->b[p->len++] = 0;
	p->b[0] = 2;
	be16(p->b + 1, p->len);
	p->b[3] = 'Q';
	p->b[4] = 'O';
	be32(p->b + 5, seq);
	p->b[9] = count;
	be32(p->b + 10, sip_s);
	be32(p->b + 14, 0);
	for (size_t i = 0; i < p->len; i++)
		sum += i == 18 || i == 19 ? 0 : p->b[i];
	be16(p->b + 18, sum);
}

static uint8_t *cqs_message(struct packet *p, uint16_t len, char category, char type)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	be16(m, len);
	m[2] = (uint8_t)category;
	m[3] = (uint8_t)type;
	m[4] = 'S';
	p->len += len;
	return m;
}

static void cqs_control(struct packet *p, char type, uint64_t seq, uint64_t sip_s)
{
	p->len = 20;
	cqs_message(p, 26, 'C', type);
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
	p->len = 20;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = cqs_message(p, CQS_LONG_QUOTE, 'Q', 'L');

		m[4] = 'N';
		be32(m + 5, 1000000 + s);
		memcpy(m + 26, "STRM       0R ", 14);
		be64(m + 40, 10000000);
		be32(m + 48, 1);
		be64(m + 52, 10010000);
		be32(m + 60, 1);
		memset(m + 64, ' ', 23);
		memset(m + 72, 0, 8);
		m[86] = 'A';
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

	mold_header(out, s, 1, 1);
	m = mold_message(out, 90);
	memcpy(m, "1ABE ", 5);
	memcpy(m + 29, "STRM       ", 11);
	be16(m + 87, 100);
	*msgs = 1;
	return 1;
}

static void uqdf_data(struct packet *p, uint32_t s, uint64_t seq, uint32_t count)
{
	mold_header(p, s, seq, (uint16_t)count);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *m = mold_message(p, 48);

		memcpy(m, "1QEQ ", 5);
		be64(m + 5, 1000 * (seq + i));
		memcpy(m + 29, "STRM ", 5);
		be16(m + 34, 1000);
		be16(m + 36, 1);
		be16(m + 38, 1001);
		be16(m + 40, 1);
		memcpy(m + 42, "R   0 ", 6);
	}
}

/* ---- the table ---------------------------------------------------------- */

static const struct fixture fixtures[] = {
	{ "itch", FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "STRM", itch_open, itch_data,
	  itch_heartbeat, NULL, itch_end },
	{ "pitch", FEED_PROTO_PITCH, WB_VENUE_BZX, "STRM", pitch_open, pitch_data,
	  pitch_heartbeat, pitch_reset, pitch_end },
	{ "xdp", FEED_PROTO_XDP, WB_VENUE_NYSE, "STRM", xdp_open, xdp_data, xdp_heartbeat,
	  xdp_reset, xdp_end, true },
	{ "cqs", FEED_PROTO_CQS, FEED_SOURCE_CQS, "STRM", cqs_open, cqs_data, cqs_heartbeat,
	  cqs_reset, cqs_end },
	/* MoldUDP64 has no reset: a new session is UQDF's restart, as ITCH's. */
	{ "uqdf", FEED_PROTO_UQDF, FEED_SOURCE_UQDF, "STRM", uqdf_open, uqdf_data,
	  itch_heartbeat, NULL, itch_end },
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
					      ev->seq);
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
	ck_assert_uint_eq(h.engine->holes, 0);
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
