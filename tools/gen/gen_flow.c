/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Synthetic, feed-independent order flow (see gen_flow.h). */
#include "gen/gen_flow.h"

#include <stdlib.h>
#include <string.h>

#define GEN_WIRE_DELAY_NS 20000	/* exchange time to the wire */
#define GEN_B_LINE_SKEW_NS 1500	/* the B copy trails the A copy */

int gen_sink_send(const struct gen_packet_sink *s, uint64_t exch_epoch_ns, uint32_t a_ip,
		  uint16_t a_port, uint32_t b_ip, uint16_t b_port, bool ab,
		  const uint8_t *payload, uint32_t len)
{
	uint64_t t = exch_epoch_ns + GEN_WIRE_DELAY_NS;

	if (s->packet(s->ctx, t, a_ip, a_port, payload, len))
		return -1;
	if (!ab)
		return 1;
	if (s->packet(s->ctx, t + GEN_B_LINE_SKEW_NS, b_ip, b_port, payload, len))
		return -1;
	return 2;
}

#define NS_PER_SEC 1000000000ull
#define HMS(h, m, s) (((uint64_t)(h) * 3600 + (uint64_t)(m) * 60 + (uint64_t)(s)) * NS_PER_SEC)
#define CENT (WB_PRICE_SCALE / 100)
#define PERMILLE 1000
#define BURST_LEN 4	/* mean messages per burst of market activity */

/* ---- random numbers ----------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gen_rng_seed(struct gen_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/* ---- profiles ------------------------------------------------------------ */

/*
 * The session as a list of steps. FLOW steps are timeline segments of
 * order flow: a share of the day's messages spread over [start, end), and
 * the live-order count to reach by the segment's end (permille of peak).
 */
enum step_kind {
	STEP_SYSTEM,	/* one GEN_SYSTEM per venue */
	STEP_DIRECTORY,	/* one GEN_SYMBOL per (symbol, venue) */
	STEP_TRADING,	/* one GEN_TRADING 'T' per (symbol, venue) */
	STEP_CROSS,	/* one GEN_CROSS per (symbol, venue) */
	STEP_FLOW,
	STEP_END,
};

struct step {
	enum step_kind kind;
	char code;		/* SYSTEM, CROSS */
	uint64_t start, end;	/* exchange time, ns since midnight */
	uint32_t share;		/* FLOW: permille of the day's messages */
	uint32_t target_end;	/* FLOW: live orders at the end, permille of the peak */
};

/* A whole day: quiet pre-open build-up, bursts at the open and the close. */
static const struct step day_steps[] = {
	{ STEP_SYSTEM, 'O', HMS(3, 0, 0), 0, 0, 0 },
	{ STEP_DIRECTORY, 0, HMS(3, 0, 0), HMS(3, 5, 0), 0, 0 },
	{ STEP_SYSTEM, 'S', HMS(4, 0, 0), 0, 0, 0 },
	{ STEP_TRADING, 0, HMS(4, 0, 0), HMS(4, 0, 1), 0, 0 },
	{ STEP_FLOW, 0, HMS(4, 0, 1), HMS(9, 30, 0), 150, 550 },
	{ STEP_SYSTEM, 'Q', HMS(9, 30, 0), 0, 0, 0 },
	{ STEP_CROSS, 'O', HMS(9, 30, 0), HMS(9, 30, 0) + 2000000, 0, 0 },
	{ STEP_FLOW, 0, HMS(9, 30, 0) + 2000000, HMS(9, 35, 0), 100, 950 },
	{ STEP_FLOW, 0, HMS(9, 35, 0), HMS(11, 0, 0), 100, 1000 },
	{ STEP_FLOW, 0, HMS(11, 0, 0), HMS(15, 55, 0), 520, 700 },
	{ STEP_FLOW, 0, HMS(15, 55, 0), HMS(16, 0, 0), 90, 250 },
	{ STEP_CROSS, 'C', HMS(16, 0, 0), HMS(16, 0, 0) + 2000000, 0, 0 },
	{ STEP_SYSTEM, 'M', HMS(16, 0, 0) + 2000000, 0, 0, 0 },
	{ STEP_FLOW, 0, HMS(16, 0, 1), HMS(20, 0, 0), 40, 100 },
	{ STEP_SYSTEM, 'E', HMS(20, 0, 0), 0, 0, 0 },
	{ STEP_SYSTEM, 'C', HMS(20, 5, 0), 0, 0, 0 },
	{ STEP_END, 0, 0, 0, 0, 0 },
};

/*
 * The demo: the same shape compressed into about fifteen seconds around
 * the open, so a replay at capture speed takes seconds. The idle seconds
 * before the flow starts make the encoders send heartbeats.
 */
static const struct step demo_steps[] = {
	{ STEP_SYSTEM, 'O', HMS(9, 29, 46), 0, 0, 0 },
	{ STEP_DIRECTORY, 0, HMS(9, 29, 46), HMS(9, 29, 46) + 1000000, 0, 0 },
	{ STEP_SYSTEM, 'S', HMS(9, 29, 48), 0, 0, 0 },	/* idle seconds: heartbeats */
	{ STEP_TRADING, 0, HMS(9, 29, 48), HMS(9, 29, 48) + 1000000, 0, 0 },
	{ STEP_FLOW, 0, HMS(9, 29, 50), HMS(9, 30, 0), 150, 550 },
	{ STEP_SYSTEM, 'Q', HMS(9, 30, 0), 0, 0, 0 },
	{ STEP_CROSS, 'O', HMS(9, 30, 0), HMS(9, 30, 0) + 1000000, 0, 0 },
	{ STEP_FLOW, 0, HMS(9, 30, 0) + 1000000, HMS(9, 30, 1), 100, 950 },
	{ STEP_FLOW, 0, HMS(9, 30, 1), HMS(9, 30, 3), 100, 1000 },
	{ STEP_FLOW, 0, HMS(9, 30, 3), HMS(9, 30, 8), 520, 700 },
	{ STEP_FLOW, 0, HMS(9, 30, 8), HMS(9, 30, 9), 90, 250 },
	{ STEP_CROSS, 'C', HMS(9, 30, 9), HMS(9, 30, 9) + 1000000, 0, 0 },
	{ STEP_SYSTEM, 'M', HMS(9, 30, 9) + 1000000, 0, 0, 0 },
	{ STEP_FLOW, 0, HMS(9, 30, 9) + 2000000, HMS(9, 30, 10), 40, 100 },
	{ STEP_SYSTEM, 'E', HMS(9, 30, 10), 0, 0, 0 },
	{ STEP_SYSTEM, 'C', HMS(9, 30, 10) + 1000000, 0, 0, 0 },
	{ STEP_END, 0, 0, 0, 0, 0 },
};

/*
 * The hostile day: the book is built up to its peak before the open and
 * held there until the close (no crosses, no drain), so an update always
 * picks one of about a million live orders, and adds land on any of the
 * symbols (even activity) at any of HOSTILE_DEPTH_TICKS levels a side:
 * nothing an update touches was touched recently.
 */
static const struct step hostile_steps[] = {
	{ STEP_SYSTEM, 'O', HMS(3, 0, 0), 0, 0, 0 },
	{ STEP_DIRECTORY, 0, HMS(3, 0, 0), HMS(3, 5, 0), 0, 0 },
	{ STEP_SYSTEM, 'S', HMS(4, 0, 0), 0, 0, 0 },
	{ STEP_TRADING, 0, HMS(4, 0, 0), HMS(4, 0, 1), 0, 0 },
	{ STEP_FLOW, 0, HMS(4, 0, 1), HMS(9, 30, 0), 300, 1000 },
	{ STEP_SYSTEM, 'Q', HMS(9, 30, 0), 0, 0, 0 },
	{ STEP_FLOW, 0, HMS(9, 30, 0), HMS(16, 0, 0), 700, 1000 },
	{ STEP_SYSTEM, 'M', HMS(16, 0, 0), 0, 0, 0 },
	{ STEP_SYSTEM, 'E', HMS(20, 0, 0), 0, 0, 0 },
	{ STEP_SYSTEM, 'C', HMS(20, 5, 0), 0, 0, 0 },
	{ STEP_END, 0, 0, 0, 0, 0 },
};

#define HOSTILE_DEPTH_TICKS 32

struct profile {
	const char *name;
	const struct step *steps;
	uint64_t messages;	/* default order-flow messages */
	uint32_t symbols;
	uint64_t peak_live;	/* live orders at the peak (capped by messages / 5) */
	bool even_symbols;	/* every symbol as active as any other (else Zipf-like) */
	uint32_t depth_ticks;	/* resting depth uniform in [0, depth_ticks); 0: mostly near the touch */
};

static const struct profile profiles[] = {
	[GEN_PROFILE_DEMO] = { "demo", demo_steps, 20000, 10, 4000, false, 0 },
	[GEN_PROFILE_DAY] = { "day", day_steps, 6000000, 8000, 1150000, false, 0 },
	[GEN_PROFILE_HOSTILE] = { "hostile", hostile_steps, 5000000, 8000, 1000000, true,
				  HOSTILE_DEPTH_TICKS },
};

uint64_t gen_profile_default_messages(enum gen_profile p)
{
	return profiles[p].messages;
}

uint64_t gen_profile_session_start(enum gen_profile p)
{
	return profiles[p].steps[0].start;
}

int gen_profile_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(s, profiles[i].name) == 0)
			return (int)i;
	return -1;
}

/* ---- message mix (permille of order-flow messages) ----------------------- */

enum mix_kind { MIX_A, MIX_F, MIX_D, MIX_U, MIX_E, MIX_X, MIX_C, MIX_P, MIX_COUNT };

static const uint32_t mix_permille[MIX_COUNT] = {
	[MIX_A] = 385, [MIX_F] = 15, [MIX_D] = 380, [MIX_U] = 80,
	[MIX_E] = 38,  [MIX_X] = 38, [MIX_C] = 17,  [MIX_P] = 47,
};

/* ---- symbols ------------------------------------------------------------ */

struct known_symbol {
	const char *ticker;
	uint32_t cents;
	char market;
};

/* The most active names first: activity falls with the index. */
static const struct known_symbol known_symbols[] = {
	{ "AAPL", 18952, 'Q' },	 { "MSFT", 41025, 'Q' }, { "SPY", 50210, 'P' },
	{ "QQQ", 43077, 'Q' },	 { "NVDA", 88130, 'Q' }, { "AMZN", 17844, 'Q' },
	{ "TSLA", 17512, 'Q' },	 { "META", 49986, 'Q' }, { "GOOGL", 15033, 'Q' },
	{ "IWM", 20118, 'P' },	 { "AMD", 16254, 'Q' },	 { "INTC", 3071, 'Q' },
	{ "NFLX", 61520, 'Q' },	 { "AVGO", 131060, 'Q' }, { "COST", 72888, 'Q' },
	{ "PEP", 16940, 'Q' },	 { "CSCO", 4875, 'Q' },	 { "ADBE", 47720, 'Q' },
	{ "QCOM", 16921, 'Q' },	 { "TXN", 17223, 'Q' },	 { "PYPL", 6443, 'Q' },
	{ "SBUX", 8830, 'Q' },	 { "MU", 11230, 'Q' },	 { "AMAT", 20450, 'Q' },
	{ "BAC", 3790, 'N' },	 { "JPM", 19870, 'N' },	 { "XOM", 11920, 'N' },
	{ "F", 1245, 'N' },	 { "T", 1702, 'N' },	 { "PLTR", 2390, 'Q' },
	{ "SOFI", 741, 'Q' },	 { "RIVN", 1087, 'Q' },	 { "LCID", 285, 'Q' },
	{ "MARA", 2011, 'Q' },	 { "TQQQ", 6020, 'Q' },	 { "SQQQ", 1122, 'Q' },
	{ "IVOO", 8739, 'P' },	 { "DIA", 39410, 'P' },	 { "XLF", 4130, 'P' },
	{ "SIRI", 312, 'Q' },
};

#define KNOWN_SYMBOLS (sizeof(known_symbols) / sizeof(known_symbols[0]))

static void set_ticker(struct gen_symbol *s, const char *t)
{
	size_t n = strlen(t);

	memset(s->ticker, ' ', GEN_TICKER_LEN);
	memcpy(s->ticker, t, n < GEN_TICKER_LEN ? n : GEN_TICKER_LEN);
}

static bool ticker_is_known(const char *t)
{
	for (size_t i = 0; i < KNOWN_SYMBOLS; i++)
		if (strcmp(known_symbols[i].ticker, t) == 0)
			return true;
	return false;
}

/* A price drawn from a rough distribution of US listed share prices. */
static uint64_t random_price_cents(struct gen_rng *r)
{
	uint32_t band = gen_rng_below(r, 100);

	if (band < 5)
		return 10 + gen_rng_below(r, 90);	/* penny stocks: $0.10-$0.99 */
	if (band < 30)
		return 100 + gen_rng_below(r, 900);	/* $1-$10 */
	if (band < 70)
		return 1000 + gen_rng_below(r, 4000);	/* $10-$50 */
	if (band < 95)
		return 5000 + gen_rng_below(r, 15000);	/* $50-$200 */
	return 20000 + gen_rng_below(r, 80000);		/* $200-$1000 */
}

static void symbol_price(struct gen_symbol *s, uint64_t cents)
{
	/* Reg NMS: sub-penny ticks only below $1. */
	s->tick = cents < 100 ? WB_PRICE_SCALE / 10000 : CENT;
	s->mid = (int64_t)cents * CENT;
}

static int build_symbols(struct gen_flow *f, uint32_t n)
{
	uint64_t total = 0;

	f->symbols = calloc(n, sizeof(*f->symbols));
	f->symbol_cdf = calloc(n, sizeof(*f->symbol_cdf));
	if (!f->symbols || !f->symbol_cdf)
		return -1;
	f->symbol_count = n;
	/* Synthetic tickers: a stride through all four-letter names (the stride
	 * is prime to 26^4, so every index gives a different name). */
	uint32_t code = 0, synth = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct gen_symbol *s = &f->symbols[i];

		s->round_lot = 100;
		s->venues = f->cfg.venues;
		if (i < KNOWN_SYMBOLS) {
			set_ticker(s, known_symbols[i].ticker);
			s->market = known_symbols[i].market;
			symbol_price(s, known_symbols[i].cents);
		} else {
			char t[5];

			do {
				code = (uint32_t)(((uint64_t)synth++ * 7919u + 4321u) % (26u * 26u * 26u * 26u));
				uint32_t c = code;

				for (int k = 3; k >= 0; k--) {
					t[k] = (char)('A' + c % 26);
					c /= 26;
				}
				t[4] = 0;
			} while (ticker_is_known(t));
			set_ticker(s, t);
			s->market = "QQQGGSNPZ"[gen_rng_below(&f->rng, 9)];
			symbol_price(s, random_price_cents(&f->rng));
		}
		/* Zipf-like activity: weight falls as 1/(rank + 5); or even. */
		total += profiles[f->cfg.profile].even_symbols ? 1000u : 1000000u / (i + 5);
		f->symbol_cdf[i] = (uint32_t)total;
	}
	return 0;
}

static uint32_t pick_symbol(struct gen_flow *f)
{
	uint32_t x = gen_rng_below(&f->rng, f->symbol_cdf[f->symbol_count - 1]);
	uint32_t lo = 0, hi = f->symbol_count - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (f->symbol_cdf[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* One of the venues the symbol trades on, uniformly. */
static uint8_t pick_venue(struct gen_flow *f, uint32_t symbol)
{
	uint32_t mask = f->symbols[symbol].venues;
	uint8_t candidates[WB_VENUE_COUNT];
	uint32_t n = 0;

	if (f->venue_count == 1)
		return f->venue_list[0];
	for (uint32_t i = 0; i < f->venue_count; i++)
		if (mask & (1u << f->venue_list[i]))
			candidates[n++] = f->venue_list[i];
	if (!n)
		return f->venue_list[0];
	return candidates[gen_rng_below(&f->rng, n)];
}

/* ---- lifetime ------------------------------------------------------------ */

int gen_flow_init(struct gen_flow *f, const struct gen_flow_config *cfg)
{
	const struct profile *p;

	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	if ((unsigned)cfg->profile >= sizeof(profiles) / sizeof(profiles[0]))
		return -1;
	p = &profiles[cfg->profile];
	if (!f->cfg.messages)
		f->cfg.messages = p->messages;
	if (!f->cfg.symbols)
		f->cfg.symbols = p->symbols;
	if (!f->cfg.venues)
		f->cfg.venues = 1u << WB_VENUE_NASDAQ;
	for (uint8_t v = 1; v < WB_VENUE_COUNT; v++)
		if (f->cfg.venues & (1u << v))
			f->venue_list[f->venue_count++] = v;
	for (uint32_t v = 0; v < WB_VENUE_COUNT; v++) {
		f->next_order_id[v] = 1;
		f->next_match_id[v] = 1;
	}
	gen_rng_seed(&f->rng, cfg->seed);
	if (build_symbols(f, f->cfg.symbols))
		goto fail;
	f->peak_target = f->cfg.messages / 5;
	if (f->peak_target > p->peak_live)
		f->peak_target = p->peak_live;
	if (f->peak_target < 1)
		f->peak_target = 1;
	/* Adds can outrun the target a little; leave room. */
	f->live_cap = f->peak_target + f->peak_target / 2 + 1024;
	f->live = malloc(f->live_cap * sizeof(*f->live));
	if (!f->live)
		goto fail;
	f->steps = p->steps;
	return 0;
fail:
	gen_flow_destroy(f);
	return -1;
}

void gen_flow_destroy(struct gen_flow *f)
{
	free(f->symbols);
	free(f->symbol_cdf);
	free(f->live);
	f->symbols = NULL;
	f->symbol_cdf = NULL;
	f->live = NULL;
}

/* ---- order flow ---------------------------------------------------------- */

static const char *const mpids[] = { "GSCO", "MSCO", "UBSS", "JPMS", "CDRG", "VIRT", "SUSQ", "NITE" };

/* Depth in ticks away from the touch: mostly 0-3, sometimes dozens. */
static int64_t random_depth(struct gen_rng *r)
{
	return gen_rng_below(r, 1 + gen_rng_below(r, 1 + gen_rng_below(r, 60)));
}

/*
 * A resting price for side: buys at or below the symbol's bid reference
 * (its "mid"), sells at least one tick above it, so a venue's book of
 * generated orders never crosses.
 */
static int64_t resting_price(struct gen_flow *f, const struct gen_symbol *s, uint8_t side)
{
	uint32_t uniform = profiles[f->cfg.profile].depth_ticks;
	int64_t d = (uniform ? gen_rng_below(&f->rng, uniform) : random_depth(&f->rng)) * s->tick;

	if (side == WB_SIDE_BUY) {
		int64_t p = s->mid - d;

		return p >= s->tick ? p : s->tick;
	}
	int64_t p = s->mid + s->tick + d;

	/* Sub-penny prices are allowed only below $1 (Reg NMS rule 612). */
	if (s->tick < CENT && p >= WB_PRICE_SCALE)
		p = (p + CENT - 1) / CENT * CENT;
	return p;
}

static uint32_t random_shares(struct gen_rng *r)
{
	uint32_t k = gen_rng_below(r, 100);

	if (k < 20)
		return 1 + gen_rng_below(r, 99);			/* odd lot */
	if (k < 90)
		return 100 * (1 + gen_rng_below(r, 1 + gen_rng_below(r, 10)));
	return 100 * (1 + gen_rng_below(r, 50));			/* block-ish */
}

static void fill_common(struct gen_flow *f, struct gen_action *a, uint8_t kind, uint32_t symbol,
			uint8_t venue)
{
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->symbol = symbol;
	a->venue = venue;
	a->ts = f->ts;
}

static void do_add(struct gen_flow *f, struct gen_action *a, bool attributed)
{
	uint32_t sym = pick_symbol(f);
	uint8_t venue = pick_venue(f, sym);
	const struct gen_symbol *s = &f->symbols[sym];
	struct gen_live_order *o = &f->live[f->live_count++];

	o->id = f->next_order_id[venue]++;
	o->symbol = sym;
	o->venue = venue;
	o->side = gen_rng_below(&f->rng, 2) ? WB_SIDE_BUY : WB_SIDE_SELL;
	o->price = resting_price(f, s, o->side);
	o->qty = random_shares(&f->rng);
	fill_common(f, a, GEN_ADD, sym, venue);
	a->order_id = o->id;
	a->side = o->side;
	a->qty = o->qty;
	a->remaining = o->qty;
	a->price = o->price;
	if (attributed) {
		a->attributed = true;
		memcpy(a->mpid, mpids[gen_rng_below(&f->rng, sizeof(mpids) / sizeof(mpids[0]))], 4);
		f->stats.attributed_adds++;
	}
	if (f->live_count > f->stats.peak_live)
		f->stats.peak_live = f->live_count;
}

static void remove_live(struct gen_flow *f, uint64_t i)
{
	f->live[i] = f->live[--f->live_count];
}

/* An update to a uniformly chosen live order: index i. */
static void order_action(struct gen_flow *f, struct gen_action *a, uint8_t kind, uint64_t i)
{
	const struct gen_live_order *o = &f->live[i];

	fill_common(f, a, kind, o->symbol, o->venue);
	a->order_id = o->id;
	a->side = o->side;
	a->price = o->price;
}

static void do_delete(struct gen_flow *f, struct gen_action *a, uint64_t i)
{
	order_action(f, a, GEN_DELETE, i);
	remove_live(f, i);
}

static void do_execute(struct gen_flow *f, struct gen_action *a, uint64_t i, bool with_price)
{
	struct gen_live_order *o = &f->live[i];
	uint32_t qty = o->qty;

	/* Half the executions fill the order, half take part of it. */
	if (qty > 1 && gen_rng_below(&f->rng, 2))
		qty = 1 + gen_rng_below(&f->rng, qty - 1);
	order_action(f, a, with_price ? GEN_EXECUTE_AT_PRICE : GEN_EXECUTE, i);
	a->qty = qty;
	a->match_id = f->next_match_id[o->venue]++;
	if (with_price) {
		a->printable = gen_rng_below(&f->rng, 10) != 0;
		a->price = o->price;
	}
	o->qty -= qty;
	a->remaining = o->qty;
	if (!o->qty)
		remove_live(f, i);
}

static void do_cancel(struct gen_flow *f, struct gen_action *a, uint64_t i)
{
	struct gen_live_order *o = &f->live[i];

	if (o->qty < 2) {
		do_delete(f, a, i);
		return;
	}
	order_action(f, a, GEN_CANCEL, i);
	a->qty = 1 + gen_rng_below(&f->rng, o->qty - 1);
	o->qty -= a->qty;
	a->remaining = o->qty;
}

static void do_replace(struct gen_flow *f, struct gen_action *a, uint64_t i)
{
	struct gen_live_order *o = &f->live[i];
	const struct gen_symbol *s = &f->symbols[o->symbol];

	order_action(f, a, GEN_REPLACE, i);
	o->id = f->next_order_id[o->venue]++;
	o->price = resting_price(f, s, o->side);
	/* Most replaces re-price the same size; some resize too. */
	if (gen_rng_below(&f->rng, 4) == 0)
		o->qty = random_shares(&f->rng);
	a->new_order_id = o->id;
	a->qty = o->qty;
	a->remaining = o->qty;
	a->price = o->price;
}

static void do_trade(struct gen_flow *f, struct gen_action *a)
{
	uint32_t sym = pick_symbol(f);
	uint8_t venue = pick_venue(f, sym);
	const struct gen_symbol *s = &f->symbols[sym];

	fill_common(f, a, GEN_TRADE, sym, venue);
	a->side = WB_SIDE_BUY;	/* ITCH 'P' has carried 'B' only since 2014 */
	a->qty = random_shares(&f->rng);
	/* Non-displayed liquidity trades inside the spread or at the touch. */
	a->price = s->mid + (gen_rng_below(&f->rng, 2) ? s->tick : 0);
	a->match_id = f->next_match_id[venue]++;
}

/* Where the live-order count should be now: linear inside the segment. */
static uint64_t live_target(const struct gen_flow *f, const struct step *st, uint64_t seg_msgs)
{
	uint64_t end = f->peak_target * st->target_end / PERMILLE;
	uint64_t start = f->seg_target_start;

	if (!seg_msgs)
		return end;
	if (end >= start)
		return start + (end - start) * f->stage_pos / seg_msgs;
	return start - (start - end) * f->stage_pos / seg_msgs;
}

static bool mix_removes(int k)
{
	return k == MIX_D || k == MIX_E || k == MIX_X || k == MIX_C;
}

static int pick_mix(struct gen_flow *f)
{
	uint32_t x = gen_rng_below(&f->rng, PERMILLE);
	int k = 0;

	while (k < MIX_COUNT - 1 && x >= mix_permille[k])
		x -= mix_permille[k++];
	return k;
}

static void flow_message(struct gen_flow *f, const struct step *st, struct gen_action *a)
{
	uint64_t target = live_target(f, st, f->seg_msgs);
	uint64_t band = f->peak_target / 50 + 16;
	int k = pick_mix(f);

	/*
	 * Steer adds against deletes so the live set follows the day's curve:
	 * the further from the target, the more of the mix is turned.
	 */
	if (f->live_count < target) {
		uint64_t p = (target - f->live_count) * PERMILLE / band;

		if (mix_removes(k) && gen_rng_below(&f->rng, PERMILLE) < p)
			k = MIX_A;
	} else if (f->live_count > target) {
		uint64_t p = (f->live_count - target) * PERMILLE / band;

		if ((k == MIX_A || k == MIX_F) && gen_rng_below(&f->rng, PERMILLE) < p)
			k = MIX_D;
	}
	if (f->live_count == 0 && k != MIX_F && k != MIX_P)
		k = MIX_A;
	if (f->live_count >= f->live_cap && (k == MIX_A || k == MIX_F))
		k = MIX_D;

	uint64_t i = f->live_count ? (uint64_t)(((gen_rng_next(&f->rng) >> 32) * f->live_count) >> 32) : 0;

	switch (k) {
	case MIX_A: do_add(f, a, false); break;
	case MIX_F: do_add(f, a, true); break;
	case MIX_D: do_delete(f, a, i); break;
	case MIX_U: do_replace(f, a, i); break;
	case MIX_E: do_execute(f, a, i, false); break;
	case MIX_X: do_cancel(f, a, i); break;
	case MIX_C: do_execute(f, a, i, true); break;
	default: do_trade(f, a); break;
	}
	f->flow_done++;
	f->stats.flow_messages++;
	/*
	 * Next message time. Markets are bursty: one event (an aggressive
	 * order, a re-quote) causes a few messages within nanoseconds, then
	 * the feed idles. Bursts average BURST_LEN messages; the idle gaps
	 * keep the segment's mean spacing.
	 */
	if (gen_rng_below(&f->rng, BURST_LEN) != 0)
		f->ts += gen_rng_below(&f->rng, 400);
	else
		f->ts += gen_rng_below(&f->rng, (uint32_t)(2 * BURST_LEN * f->seg_step + 1));
	if (f->ts >= st->end)
		f->ts = st->end - 1;
}

/* Actions stepping over (symbol, venue) pairs: directory, trading, crosses. */
static bool pair_action(struct gen_flow *f, const struct step *st, struct gen_action *a)
{
	uint64_t total = (uint64_t)f->symbol_count * f->venue_count;

	while (f->stage_pos < total) {
		uint64_t pos = f->stage_pos++;
		uint32_t sym = (uint32_t)(pos / f->venue_count);
		uint8_t venue = f->venue_list[pos % f->venue_count];
		const struct gen_symbol *s = &f->symbols[sym];

		if (!(s->venues & (1u << venue)))
			continue;
		f->ts = st->start + (st->end - st->start) * pos / total;
		if (st->kind == STEP_DIRECTORY) {
			fill_common(f, a, GEN_SYMBOL, sym, venue);
		} else if (st->kind == STEP_TRADING) {
			fill_common(f, a, GEN_TRADING, sym, venue);
			a->code = 'T';
		} else {
			fill_common(f, a, GEN_CROSS, sym, venue);
			a->code = st->code;
			a->qty = 100 * gen_rng_below(&f->rng, 500); /* 0 is allowed */
			a->price = s->mid;
			a->match_id = f->next_match_id[venue]++;
		}
		return true;
	}
	return false;
}

int gen_flow_next(struct gen_flow *f, struct gen_action *a)
{
	const struct step *steps = f->steps;

	for (;;) {
		const struct step *st = &steps[f->stage];

		switch (st->kind) {
		case STEP_SYSTEM:
			if (f->stage_pos < f->venue_count) {
				if (f->ts < st->start)
					f->ts = st->start;
				fill_common(f, a, GEN_SYSTEM, 0, f->venue_list[f->stage_pos++]);
				a->code = st->code;
				f->stats.actions[a->kind]++;
				return 1;
			}
			break;
		case STEP_DIRECTORY:
		case STEP_TRADING:
		case STEP_CROSS:
			if (pair_action(f, st, a)) {
				f->stats.actions[a->kind]++;
				return 1;
			}
			break;
		case STEP_FLOW:
			if (f->stage_pos == 0) {
				uint64_t end_msg = f->cfg.messages * (f->flow_share_done + st->share) / PERMILLE;

				f->seg_msgs = end_msg - f->flow_done;
				f->seg_step = f->seg_msgs ? (st->end - st->start) / f->seg_msgs : 0;
				if (f->seg_step > 0xffffffffull / 4)
					f->seg_step = 0xffffffffull / 4;
				f->seg_target_start = f->live_count;
				if (f->ts < st->start)
					f->ts = st->start;
			}
			if (f->stage_pos < f->seg_msgs) {
				f->stage_pos++;
				flow_message(f, st, a);
				f->stats.actions[a->kind]++;
				return 1;
			}
			f->flow_share_done += st->share;
			break;
		case STEP_END:
			return 0;
		}
		f->stage++;
		f->stage_pos = 0;
	}
}
