"""numpy views of the book: many symbols in one call, one row per symbol.

Imported only when an array method is called, so the package needs numpy
only for them (pandas never: pandas.DataFrame(array) takes any of these).
Each row is read under its symbol's seqlock like every other call; the
rows of one call are a few microseconds apart, not one instant.

Prices are float64 dollars, NaN for an absent side or level (raw=True on
open(): int64 units of 1e-8 dollars, 0 for absent); venue sets are uint32
masks (bit v: venue v, as wirebook.venue_name(v) names it).
"""
import ctypes

import numpy as np

from . import _lib

_SYMBOL = "U16"


def _price_dtype(raw):
    return np.int64 if raw else np.float64


def _prices(p, present, raw):
    """Book prices (int64 1e-8 dollars) as the package shows them."""
    if raw:
        return np.where(present, p, 0).astype(np.int64)
    return np.where(present, p / _lib.PRICE_SCALE, np.nan)


def _format(t):
    if issubclass(t, ctypes.Array):
        return (_format(t._type_), t._length_)
    if issubclass(t, (ctypes.Structure, ctypes.Union)):
        return dtype_of(t)
    if t is ctypes.c_char:
        return "S1"
    return np.dtype(t)


def dtype_of(cls):
    """The numpy dtype of a ctypes structure, field for field at ctypes'
    offsets (numpy's own conversion guesses at padding and warns)."""
    names = [f[0] for f in cls._fields_]
    return np.dtype({"names": names, "formats": [_format(f[1]) for f in cls._fields_],
                     "offsets": [getattr(cls, n).offset for n in names],
                     "itemsize": ctypes.sizeof(cls)})


def _rows(buf, cls, n):
    """The first n structures of a ctypes array, as a structured array (no copy)."""
    return np.frombuffer(buf, dtype_of(cls), count=n)


# struct wb_event as it lies in memory (event.h): the common header, then
# the payload read as an order/trade event's (order_id, price, qty, ref or
# match_id) and, over the same bytes, as raw bytes for the other kinds.
EVENT_DTYPE = np.dtype({
    "names": ["kind", "venue", "side", "flags", "line", "instrument", "seq", "exch_ts",
              "recv_ts", "order_id", "price", "qty", "ref", "payload"],
    "formats": [np.uint8, np.uint8, np.uint8, np.uint8, np.uint16, np.uint16, np.uint64,
                np.uint64, np.uint64, np.uint64, np.int64, np.uint32, np.uint64, (np.uint8, 32)],
    "offsets": [0, 1, 2, 3, 4, 6, 8, 16, 24, 32, 40, 48, 56, 32],
    "itemsize": 64,
})


def snapshot(book, syms, raw):
    """Top of book, NBBO venues, status and last trade of each symbol."""
    lib, h = book._lib, book._h
    dt = np.dtype([("symbol", _SYMBOL), ("bid", _price_dtype(raw)), ("bid_qty", np.uint64),
                   ("ask", _price_dtype(raw)), ("ask_qty", np.uint64),
                   ("bid_venues", np.uint32), ("ask_venues", np.uint32), ("flags", np.uint16),
                   ("state", np.uint8), ("updates", np.uint64), ("exch_ts", np.uint64),
                   ("recv_ts", np.uint64), ("last_price", _price_dtype(raw)),
                   ("last_qty", np.uint64), ("last_exch_ts", np.uint64),
                   ("last_venue", np.uint8), ("volume", np.uint64), ("trades", np.uint32)])
    nb = (_lib.Nbbo * max(len(syms), 1))()
    tr = (_lib.Trade * max(len(syms), 1))()
    for i, (ticker, sid) in enumerate(syms):
        book._rc(lib.wb_nbbo(h, sid, ctypes.byref(nb[i])), ticker)
        book._rc(lib.wb_last_trade(h, sid, ctypes.byref(tr[i])), ticker)
    n = _rows(nb, _lib.Nbbo, len(syms))
    t = _rows(tr, _lib.Trade, len(syms))
    out = np.zeros(len(syms), dt)
    out["symbol"] = [s for s, _ in syms]
    out["bid"] = _prices(n["bid_price"], n["bid_qty"] > 0, raw)
    out["ask"] = _prices(n["ask_price"], n["ask_qty"] > 0, raw)
    for f in ("bid_qty", "ask_qty", "bid_venues", "ask_venues", "flags", "state", "updates",
              "exch_ts", "recv_ts"):
        out[f] = n[f]
    out["last_price"] = _prices(t["price"], t["count"] > 0, raw)
    out["last_qty"], out["last_exch_ts"], out["last_venue"] = t["qty"], t["exch_ts"], t["venue"]
    out["volume"], out["trades"] = t["volume"], t["count"]
    return out


def depth(book, syms, levels, venue, by_venue, raw):
    """levels price levels a side of each symbol, best first."""
    lib, h = book._lib, book._h
    fields = [("symbol", _SYMBOL), ("updates", np.uint64), ("flags", np.uint16),
              ("bid_count", np.uint8), ("ask_count", np.uint8)]
    for side in ("bid", "ask"):
        fields += [(side + "_price", _price_dtype(raw), (levels,)),
                   (side + "_qty", np.uint64, (levels,)),
                   (side + "_orders", np.uint32, (levels,)),
                   (side + "_venues", np.uint32, (levels,))]
    if by_venue:
        fields += [("bid_venue_qty", np.uint64, (_lib.BOOK_VENUES, levels)),
                   ("ask_venue_qty", np.uint64, (_lib.BOOK_VENUES, levels))]
    buf = (_lib.Depth * max(len(syms), 1))()
    for i, (ticker, sid) in enumerate(syms):
        book._rc(lib.wb_depth(h, sid, venue, levels, ctypes.byref(buf[i])), ticker)
    d = _rows(buf, _lib.Depth, len(syms))
    out = np.zeros(len(syms), np.dtype(fields))
    out["symbol"] = [s for s, _ in syms]
    for f in ("updates", "flags", "bid_count", "ask_count"):
        out[f] = d[f]
    filled = np.arange(levels)
    for side in ("bid", "ask"):
        lv = d[side][:, :levels]
        present = filled[None, :] < d[side + "_count"][:, None]
        out[side + "_price"] = _prices(lv["price"], present, raw)
        out[side + "_qty"] = np.where(present, lv["qty"], 0)
        out[side + "_orders"] = np.where(present, lv["orders"], 0)
        out[side + "_venues"] = np.where(present, lv["venues"], 0)
        if by_venue:
            out[side + "_venue_qty"] = d[side + "_venue_qty"][:, :, :levels]
    return out


def sip(book, syms, raw):
    """The SIP's NBBO beside the Super-Book's (the direct feeds') of each symbol."""
    lib, h = book._lib, book._h
    pd = _price_dtype(raw)
    dt = np.dtype([("symbol", _SYMBOL), ("bid", pd), ("bid_qty", np.uint32), ("ask", pd),
                   ("ask_qty", np.uint32), ("bid_venue", np.uint8), ("ask_venue", np.uint8),
                   ("feed", np.uint8), ("sip_ts", np.uint64), ("recv_ts", np.uint64),
                   ("flags", np.uint32), ("luld_lower", pd), ("luld_upper", pd),
                   ("state", np.uint8), ("updates", np.uint64), ("direct_bid", pd),
                   ("direct_ask", pd), ("episodes", np.uint64), ("disagree_ns", np.uint64)])
    out = np.zeros(len(syms), dt)
    v = _lib.SipView()
    nb = _lib.Nbbo()
    rows = []
    for ticker, sid in syms:
        rc = lib.wb_sip_view(h, sid, ctypes.byref(v))
        if rc == book._ENOSYM:  # no SIP record for the symbol: a row of absent values
            ctypes.memset(ctypes.byref(v), 0, ctypes.sizeof(v))
        else:
            book._rc(rc, ticker)
        book._rc(lib.wb_nbbo(h, sid, ctypes.byref(nb)), ticker)
        q = v.nbbo
        rows.append((ticker, q.bid_price, q.bid_qty, q.ask_price, q.ask_qty, q.bid_venue,
                     q.ask_venue, q.feed, q.sip_ts, q.recv_ts, v.flags, v.luld.lower,
                     v.luld.upper, v.status.state, v.updates, nb.bid_price if nb.bid_qty else 0,
                     nb.ask_price if nb.ask_qty else 0, v.cmp.episodes, v.cmp.disagree_ns))
    if not rows:
        return out
    cols = list(zip(*rows))
    names = dt.names
    for k, name in enumerate(names):
        col = np.array(cols[k])
        if name in ("bid", "ask"):
            qty = np.array(cols[k + 1])
            out[name] = _prices(col, qty > 0, raw)
        elif name in ("luld_lower", "luld_upper", "direct_bid", "direct_ask"):
            out[name] = _prices(col, col != 0, raw)
        else:
            out[name] = col
    return out
