"""wirebook: read wirebookd's live order books from Python.

    import wirebook
    with wirebook.open() as book:            # or wirebook.open("NAME"): wirebookd --shm NAME
        print(book.symbols())                # ['AAPL', 'MSFT', ...]
        print(book.top("AAPL"))              # Top(bid=189.52, bid_qty=300, ask=189.53, ...)
        print(book.nbbo("AAPL"))             # Nbbo(..., bid_venues=['NASDAQ', 'BZX'], ...)
        bids, asks = book.depth("AAPL", 5)   # lists of Level(price, qty, orders, venues)

A thin ctypes layer over libwirebook.so (the same lock-free seqlock reads
as C; a call costs a few microseconds of Python around them). Prices are
floats in dollars (the book's int64 units of 1e-8 dollars divided by
1e8; `raw=True` on open() keeps the integers); quantities, counters and
timestamps (ns) are ints; venues are names. Errors raise WirebookError,
whose .code is the library's WB_E* code (a negated errno value).
"""
import ctypes
import errno
from collections import namedtuple

from . import _lib

__all__ = ["open", "Book", "WirebookError", "Top", "Nbbo", "Level", "VenueBbo",
           "Trade", "Status", "Health", "WB_ENOSHM", "WB_EACCES", "WB_EBADMAGIC",
           "WB_EABI", "WB_ESTALE", "WB_ENOSYM", "WB_EINVAL", "WB_EBUSY", "WB_ESYS",
           "WB_ENODEV"]

# include/wirebook/book.h, enum wb_error
WB_ENOSHM = -errno.ENOENT
WB_EACCES = -errno.EACCES
WB_EBADMAGIC = -errno.EBADMSG
WB_EABI = -errno.EPROTO
WB_ESTALE = -errno.ESTALE
WB_ENOSYM = -errno.ENODATA
WB_EINVAL = -errno.EINVAL
WB_EBUSY = -errno.EAGAIN
WB_ESYS = -errno.EIO
WB_ENODEV = -errno.ENODEV

CONSOLIDATED = 0  # WB_CONSOLIDATED: the venue argument meaning all venues

Top = namedtuple("Top", "bid bid_qty ask ask_qty updates flags state")
Nbbo = namedtuple("Nbbo", "bid bid_qty ask ask_qty bid_venues ask_venues flags state "
                  "updates exch_ts recv_ts")
Level = namedtuple("Level", "price qty orders venues")
VenueBbo = namedtuple("VenueBbo", "bid bid_qty bid_orders ask ask_qty ask_orders "
                      "flags state gaps exch_ts")
Trade = namedtuple("Trade", "price qty exch_ts match_id volume count venue flags")
Status = namedtuple("Status", "state raw_state reason venue flags")
Health = namedtuple("Health", "state age_ns heartbeat_ns stale_after_ns last_update_age_ns "
                    "writer_pid writer_alive recovering_venues reattaches instance_id")

_libwb = None


def _l():
    global _libwb
    if _libwb is None:
        _libwb = _lib.load()
    return _libwb


class WirebookError(OSError):
    """A libwirebook call failed; .code is the WB_E* code."""

    def __init__(self, code, what=""):
        self.code = code
        msg = _l().wb_strerror(code).decode()
        super().__init__(-code, f"{what}: {msg}" if what else msg)


def _check(rc, what=""):
    if rc < 0:
        raise WirebookError(rc, what)
    return rc


def strerror(code):
    """wb_strerror(): the text of a WB_E* code (or of any -errno)."""
    return _l().wb_strerror(code).decode()


def library():
    """The path of the libwirebook.so in use."""
    return _l().wb_path


def venue_name(v):
    return _l().wb_venue_name(v).decode()


def _venues(mask):
    return [venue_name(v) for v in range(_lib.BOOK_VENUES) if mask >> v & 1]


class Book:
    """An attached book; see open(). One handle per thread."""

    def __init__(self, name=None, raw=False):
        err = ctypes.c_int(0)
        self._lib = _l()
        self.name = name or "wirebook"
        self._raw = raw
        self._h = self._lib.wb_open(name.encode() if name else None, ctypes.byref(err))
        if not self._h:
            raise WirebookError(err.value, self.name)
        self._syms = {}

    def close(self):
        if self._h:
            self._lib.wb_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _px(self, p):
        return p if self._raw else p / _lib.PRICE_SCALE

    def _sym(self, ticker):
        if not self._h:
            raise ValueError("the book is closed")
        s = self._syms.get(ticker)
        if s is None:  # indices stay valid across wirebookd restarts: cache them
            s = _check(self._lib.wb_find(self._h, ticker.encode()), ticker)
            self._syms[ticker] = s
        return s

    def symbols(self):
        """The tickers in the book, in symbol-index order."""
        out, buf = [], ctypes.create_string_buffer(9)
        for s in range(1, self._lib.wb_symbol_count(self._h)):
            if self._lib.wb_symbol(self._h, s, buf) == 0:
                out.append(buf.value.decode())
        return out

    def top(self, ticker):
        t = _lib.Top()
        _check(self._lib.wb_top(self._h, self._sym(ticker), ctypes.byref(t)), ticker)
        return Top(self._px(t.bid_price), t.bid_qty, self._px(t.ask_price), t.ask_qty,
                   t.updates, t.flags, self._state(t.state))

    def nbbo(self, ticker):
        n = _lib.Nbbo()
        _check(self._lib.wb_nbbo(self._h, self._sym(ticker), ctypes.byref(n)), ticker)
        return Nbbo(self._px(n.bid_price), n.bid_qty, self._px(n.ask_price), n.ask_qty,
                    _venues(n.bid_venues), _venues(n.ask_venues), n.flags,
                    self._state(n.state), n.updates, n.exch_ts, n.recv_ts)

    def depth(self, ticker, n=_lib.BOOK_DEPTH, venue=None):
        """(bids, asks): up to n levels each, best first, consolidated or of
        one venue (a name such as "NASDAQ", or its number)."""
        d = _lib.Depth()
        v = self._venue(venue)
        _check(self._lib.wb_depth(self._h, self._sym(ticker), v, n, ctypes.byref(d)), ticker)

        def side(levels, count):
            return [Level(self._px(levels[i].price), levels[i].qty, levels[i].orders,
                          _venues(levels[i].venues)) for i in range(count)]
        return side(d.bid, d.bid_count), side(d.ask, d.ask_count)

    def venue_bbo(self, ticker, venue):
        b = _lib.VenueBbo()
        _check(self._lib.wb_venue_bbo(self._h, self._sym(ticker), self._venue(venue),
                                      ctypes.byref(b)), ticker)
        return VenueBbo(self._px(b.bid_price), b.bid_qty, b.bid_orders, self._px(b.ask_price),
                        b.ask_qty, b.ask_orders, b.flags, self._state(b.state), b.gaps,
                        b.exch_ts)

    def last_trade(self, ticker):
        t = _lib.Trade()
        _check(self._lib.wb_last_trade(self._h, self._sym(ticker), ctypes.byref(t)), ticker)
        return Trade(self._px(t.price), t.qty, t.exch_ts, t.match_id, t.volume, t.count,
                     venue_name(t.venue), t.flags)

    def status(self, ticker):
        s = _lib.Status()
        _check(self._lib.wb_status(self._h, self._sym(ticker), ctypes.byref(s)), ticker)
        return Status(self._state(s.state), s.raw_state.decode(errors="replace"),
                      s.reason.decode(errors="replace").strip(), venue_name(s.venue), s.flags)

    def updates(self, ticker=None):
        """The symbol's update counter (None: the whole book's); poll it."""
        u = ctypes.c_uint64()
        _check(self._lib.wb_update_counter(self._h, self._sym(ticker) if ticker else 0,
                                           ctypes.byref(u)), ticker or "")
        return u.value

    def health(self):
        h = _lib.Health()
        _check(self._lib.wb_health(self._h, ctypes.byref(h)), self.name)
        return Health(self._lib.wb_health_name(h.state).decode(), h.age_ns, h.heartbeat_ns,
                      h.stale_after_ns, h.last_update_age_ns, h.writer_pid, h.writer_alive,
                      _venues(h.recovering_venues), h.reattaches, h.instance_id)

    def _state(self, s):
        return self._lib.wb_state_name(s).decode()

    def _venue(self, venue):
        if venue is None:
            return CONSOLIDATED
        if isinstance(venue, int):
            return venue
        for v in range(1, _lib.BOOK_VENUES):
            if venue_name(v).upper() == venue.upper():
                return v
        raise ValueError(f"unknown venue {venue!r}")


def open(name=None, raw=False):  # noqa: A001 (the package's verb, as in io.open)
    """Attach read-only to the book NAME (wirebookd --shm NAME; None: "wirebook")."""
    return Book(name, raw)
