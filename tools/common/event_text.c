/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The one text form of a normalized event (see event_text.h). */
#include "common/event_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

#include "feed/feed.h"

void text_printf(struct text_out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->len < o->n ? o->n - o->len : 0;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (w > 0)
		o->len += (size_t)w;
}

size_t wb_price_format(int64_t price, char *buf, size_t n)
{
	/* Magnitude as unsigned so INT64_MIN does not overflow. */
	uint64_t mag = price < 0 ? (uint64_t)0 - (uint64_t)price : (uint64_t)price;
	uint64_t whole = mag / (uint64_t)WB_PRICE_SCALE;
	uint64_t frac = mag % (uint64_t)WB_PRICE_SCALE;
	int digits = 8;
	int w;

	while (digits > 2 && frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	w = snprintf(buf, n, "%s%" PRIu64 ".%0*" PRIu64, price < 0 ? "-" : "", whole, digits, frac);
	return w < 0 ? 0 : (size_t)w;
}

static void out_price(struct text_out *o, int64_t price)
{
	char tmp[32];

	wb_price_format(price, tmp, sizeof(tmp));
	text_printf(o, "%s", tmp);
}

size_t wb_time_format(uint64_t ns, char *buf, size_t n)
{
	const uint64_t sec = 1000000000ull, day = 86400 * sec;
	int w;

	/* Epoch time (event.h): the exchanges' wall clock, US/Eastern. */
	if (ns >= day)
		ns = (uint64_t)((int64_t)(ns % day) + (int64_t)feed_et_offset_s(ns) * (int64_t)sec +
				(int64_t)day) % day;
	w = snprintf(buf, n, "%02u:%02u:%02u.%09u", (unsigned)(ns / (3600 * sec)),
		     (unsigned)(ns / (60 * sec) % 60), (unsigned)(ns / sec % 60), (unsigned)(ns % sec));
	return w < 0 ? 0 : (size_t)w;
}

static void out_time(struct text_out *o, uint64_t ns)
{
	char tmp[32];

	wb_time_format(ns, tmp, sizeof(tmp));
	text_printf(o, "%s", tmp);
}

/* A fixed-width, space- or NUL-padded text field, trailing padding dropped. */
static void out_padded(struct text_out *o, const char *s, size_t width)
{
	size_t len = width;

	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\0'))
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		/* Never let a control byte from the wire break the line format. */
		if (c < 0x21 || c > 0x7e)
			text_printf(o, "\\x%02x", c);
		else
			text_printf(o, "%c", c);
	}
}

/* " B" / " S" before a quantity; nothing when the feed gives no side. */
static void out_side(struct text_out *o, uint8_t side)
{
	if (side == WB_SIDE_BUY)
		text_printf(o, " B");
	else if (side == WB_SIDE_SELL)
		text_printf(o, " S");
	else if (side != WB_SIDE_NONE)
		text_printf(o, " side%u", side);
}

static const char *state_name(uint8_t state)
{
	static const char *const names[] = {
		[WB_STATE_UNKNOWN] = "unknown",	  [WB_STATE_TRADING] = "trading",
		[WB_STATE_HALTED] = "halted",	  [WB_STATE_PAUSED] = "paused",
		[WB_STATE_QUOTATION_ONLY] = "quotation-only",
		[WB_STATE_CLOSED] = "closed",	  [WB_STATE_PRE_OPEN] = "pre-open",
		[WB_STATE_OPEN] = "open",
	};

	return state < sizeof(names) / sizeof(names[0]) && names[state] ? names[state] : "?";
}

static void out_flags(struct text_out *o, uint8_t flags)
{
	static const struct {
		uint8_t bit;
		const char *name;
	} names[] = {
		{ WB_EVF_PRINTABLE, "printable" },   { WB_EVF_KEEPS_PRIORITY, "keeps-priority" },
		{ WB_EVF_CROSS, "cross" },	     { WB_EVF_SESSION_END, "session-end" },
		{ WB_EVF_UNSEQUENCED, "unsequenced" }, { WB_EVF_SIP, "sip" },
		{ WB_EVF_BID_INELIGIBLE, "bid-ineligible" }, { WB_EVF_ASK_INELIGIBLE, "ask-ineligible" },
	};
	const char *sep = " f=";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (flags & names[i].bit) {
			text_printf(o, "%s%s", sep, names[i].name);
			sep = ",";
			flags &= (uint8_t)~names[i].bit;
		}
	}
	if (flags)
		text_printf(o, "%s0x%02x", sep, flags);
}

static void out_order(struct text_out *o, const struct wb_event *ev)
{
	const struct wb_ev_order *ord = &ev->u.order;

	text_printf(o, " ref=%" PRIu64, ord->order_id);
	switch (ev->kind) {
	case WB_EV_ADD:
		out_side(o, ev->side);
		text_printf(o, " %" PRIu32 " @ ", ord->qty);
		out_price(o, ord->price);
		if (ord->mpid[0]) {
			text_printf(o, " mpid=");
			out_padded(o, ord->mpid, sizeof(ord->mpid));
		}
		break;
	case WB_EV_EXECUTE:
		text_printf(o, " qty=%" PRIu32 " match=%" PRIu64, ord->qty, ord->ref);
		break;
	case WB_EV_EXECUTE_AT_PRICE:
		text_printf(o, " qty=%" PRIu32 " @ ", ord->qty);
		out_price(o, ord->price);
		text_printf(o, " match=%" PRIu64, ord->ref);
		break;
	case WB_EV_REDUCE:
		text_printf(o, " qty=%" PRIu32, ord->qty);
		break;
	case WB_EV_DELETE:
		break;
	case WB_EV_REPLACE:
		text_printf(o, " new=%" PRIu64, ord->ref);
		out_side(o, ev->side);
		text_printf(o, " %" PRIu32 " @ ", ord->qty);
		out_price(o, ord->price);
		break;
	case WB_EV_MODIFY:
		out_side(o, ev->side);
		text_printf(o, " %" PRIu32 " @ ", ord->qty);
		out_price(o, ord->price);
		break;
	}
}

size_t wb_event_format(const struct wb_event *ev, char *buf, size_t n)
{
	struct text_out o = { .buf = buf, .n = n, .len = 0 };
	const char *kind = ev->kind < WB_EV_KIND_COUNT ? wb_event_kind_name(ev->kind) : NULL;

	if (n)
		buf[0] = '\0';
	text_printf(&o, "%" PRIu64 " ", ev->seq);
	out_time(&o, ev->exch_ts);
	text_printf(&o, " %s/%u i=%u ", feed_venue_name(ev->venue), ev->line, ev->instrument);
	if (kind)
		text_printf(&o, "%s", kind);
	else
		text_printf(&o, "KIND%u", ev->kind);

	switch (ev->kind) {
	case WB_EV_ADD:
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
	case WB_EV_REDUCE:
	case WB_EV_DELETE:
	case WB_EV_REPLACE:
	case WB_EV_MODIFY:
		out_order(&o, ev);
		break;
	case WB_EV_TRADE:
		text_printf(&o, " ref=%" PRIu64, ev->u.trade.order_id);
		out_side(&o, ev->side);
		text_printf(&o, " %" PRIu32 " @ ", ev->u.trade.qty);
		out_price(&o, ev->u.trade.price);
		text_printf(&o, " match=%" PRIu64, ev->u.trade.match_id);
		if (ev->u.trade.cross_type)
			text_printf(&o, " cross=%c", ev->u.trade.cross_type);
		break;
	case WB_EV_TRADE_BREAK:
		text_printf(&o, " match=%" PRIu64, ev->u.trade.match_id);
		break;
	case WB_EV_QUOTE:
		text_printf(&o, " bid=%" PRIu32 " @ ", ev->u.quote.bid_qty);
		out_price(&o, ev->u.quote.bid_price);
		text_printf(&o, " ask=%" PRIu32 " @ ", ev->u.quote.ask_qty);
		out_price(&o, ev->u.quote.ask_price);
		text_printf(&o, " cond=");
		out_padded(&o, (const char *)&ev->side, 1);
		text_printf(&o, " sip=");
		out_time(&o, ev->u.quote.sip_ts);
		break;
	case WB_EV_NBBO: {
		const struct wb_ev_nbbo *nb = &ev->u.nbbo;

		text_printf(&o, " bid=%" PRIu32 " @ ", nb->bid_qty);
		out_price(&o, nb->bid_price);
		text_printf(&o, " %s ask=%" PRIu32 " @ ", feed_venue_name(nb->bid_venue), nb->ask_qty);
		out_price(&o, nb->ask_price);
		text_printf(&o, " %s ind=", feed_venue_name(nb->ask_venue));
		out_padded(&o, &nb->indicator, 1);
		if (nb->condition) {
			text_printf(&o, " cond=");
			out_padded(&o, &nb->condition, 1);
		}
		if (nb->luld) {
			text_printf(&o, " luld=");
			out_padded(&o, &nb->luld, 1);
		}
		text_printf(&o, " sides=%s%s%s%s", nb->sides & WB_NBBO_BID_STATED ? "B" : "",
			    nb->sides & WB_NBBO_ASK_STATED ? "A" : "",
			    nb->sides & WB_NBBO_BID_UNKNOWN ? "?b" : "",
			    nb->sides & WB_NBBO_ASK_UNKNOWN ? "?a" : "");
		break;
	}
	case WB_EV_LULD:
		text_printf(&o, " lower=");
		out_price(&o, ev->u.luld.lower);
		text_printf(&o, " upper=");
		out_price(&o, ev->u.luld.upper);
		text_printf(&o, " ind=");
		out_padded(&o, &ev->u.luld.indicator, 1);
		break;
	case WB_EV_STATUS:
		text_printf(&o, " %s", state_name(ev->u.status.state));
		if (ev->u.status.raw_state) {
			text_printf(&o, " raw=");
			out_padded(&o, &ev->u.status.raw_state, 1);
		}
		if (ev->u.status.reason[0] && ev->u.status.reason[0] != ' ') {
			text_printf(&o, " reason=");
			out_padded(&o, ev->u.status.reason, sizeof(ev->u.status.reason));
		}
		break;
	case WB_EV_CLEAR:
		break;
	case WB_EV_SYMBOL:
		text_printf(&o, " ");
		out_padded(&o, ev->u.symbol.ticker, sizeof(ev->u.symbol.ticker));
		text_printf(&o, " key=%" PRIu32 " lot=%" PRIu32, ev->u.symbol.feed_key, ev->u.symbol.round_lot);
		if (ev->u.symbol.listing_market) {
			text_printf(&o, " mkt=");
			out_padded(&o, &ev->u.symbol.listing_market, 1);
		}
		break;
	case WB_EV_GAP:
		text_printf(&o, " first=%" PRIu64 " count=%" PRIu64, ev->u.gap.first, ev->u.gap.count);
		if (ev->u.gap.unit)
			text_printf(&o, " unit=%u", ev->u.gap.unit);
		break;
	default:
		/* An unknown kind from a newer producer: show its payload raw. */
		text_printf(&o, " raw=");
		for (size_t i = 0; i < sizeof(ev->u.raw); i++)
			text_printf(&o, "%02x", ev->u.raw[i]);
		break;
	}
	if (ev->flags)
		out_flags(&o, ev->flags);
	return o.len;
}
