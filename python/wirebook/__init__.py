"""wirebook: read wirebookd's live order books from Python.

    import wirebook
    with wirebook.open() as book:            # or wirebook.open("NAME"): wirebookd --shm NAME
        print(book.symbols())                # ['AAPL', 'MSFT', ...]
        print(book.top("AAPL"))              # Top(bid=189.52, bid_qty=300, ask=189.53, ...)
        print(book.nbbo("AAPL"))             # Nbbo(..., bid_venues=['NASDAQ', 'BZX'], ...)
        bids, asks = book.depth("AAPL", 5)   # lists of Level(price, qty, orders, venues)

    ev = wirebook.read("day.h5", ["AAPL"], "09:30", "16:00")  # wb-export's files: numpy arrays

    with wirebook.events() as ev:            # wirebookd's event stream (any source), else
        for e in ev:                         # the kernel module's rings; ends with wirebookd
            ...                              # Event(kind='ADD', venue='NASDAQ', seq=..., ...)

A thin ctypes layer over libwirebook.so (the same lock-free seqlock reads
as C; a call costs a few microseconds of Python around them). Prices are
floats in dollars (the book's int64 units of 1e-8 dollars divided by
1e8; `raw=True` on open() keeps the integers), None for a side with no
order (never a price of 0.0); quantities, counters and timestamps (ns) are
ints; venues are names; a ticker's bytes that are not UTF-8 read as \\xNN
(as wb-dump prints them, and top("\\xffAB") finds it), never an exception. Errors raise WirebookError,
whose .code is the library's WB_E* code (a negated errno value).
"""
import codecs
import ctypes
import errno
from collections import namedtuple

from . import _lib

__all__ = ["open", "events", "Book", "Events", "Event", "WirebookError", "Top", "Nbbo", "Level", "VenueBbo",
           "Trade", "Status", "Health", "Recovery", "VenueStatus", "WB_ENOSHM", "WB_EACCES", "WB_EBADMAGIC",
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
WB_SHM_DEFAULT_NAME = "wirebook"  # book.h: wirebookd's book (and stream) by default

Top = namedtuple("Top", "bid bid_qty ask ask_qty updates flags state")
Nbbo = namedtuple("Nbbo", "bid bid_qty ask ask_qty bid_venues ask_venues flags state "
                  "updates exch_ts recv_ts")
Level = namedtuple("Level", "price qty orders venues")
VenueBbo = namedtuple("VenueBbo", "bid bid_qty bid_orders ask ask_qty ask_orders "
                      "flags state gaps exch_ts")
Trade = namedtuple("Trade", "price qty exch_ts match_id volume count venue flags")
Status = namedtuple("Status", "state raw_state reason venue flags")
Recovery = namedtuple("Recovery", "venue channel unit state since_ns gaps filled unrecoverable "
                      "messages lost snapshots fills fill_p50_ns fill_p99_ns fill_max_ns")
RECOVERY_STATES = {0: "in sequence", 1: "gap", 2: "snapshot"}  # enum wb_recovery_state
VenueStatus = namedtuple("VenueStatus", "gaps last_recv_ns recovering")
Health = namedtuple("Health", "state age_ns heartbeat_ns stale_after_ns last_update_age_ns "
                    "writer_pid writer_alive recovering_venues reattaches instance_id")

_libwb = None


def _ticker_text(raw):
    """A ticker's bytes as text. A feed's bytes are not always UTF-8 (a
    capture decoded as the wrong protocol): those read as \\xNN, as wb-dump
    prints them, never an exception."""
    return raw.decode(errors="backslashreplace")


def _ticker_bytes(ticker):
    """The bytes of a ticker given as _ticker_text shows it."""
    if isinstance(ticker, bytes):
        return ticker
    raw = ticker.encode(errors="surrogateescape")
    if b"\\x" in raw:
        try:
            return codecs.escape_decode(raw)[0]
        except ValueError:
            pass
    return raw


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


_venue_names = None


def _venues(mask):
    """Names of the venues of a mask (bit v: venue v), lowest first."""
    global _venue_names
    if _venue_names is None:  # once: a ctypes call each costs a microsecond
        _venue_names = [venue_name(v) for v in range(32)]
    out = []
    while mask:
        low = mask & -mask
        out.append(_venue_names[low.bit_length() - 1])
        mask ^= low
    return out


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

    def _side_px(self, p, qty):
        """A side's price, None when the side is empty (qty 0): not a price of 0."""
        return self._px(p) if qty else None

    def _sym(self, ticker):
        if not self._h:
            raise ValueError("the book is closed")
        s = self._syms.get(ticker)
        if s is None:  # indices stay valid across wirebookd restarts: cache them
            s = _check(self._lib.wb_find(self._h, _ticker_bytes(ticker)), ticker)
            self._syms[ticker] = s
        return s

    def symbols(self):
        """The tickers in the book, in symbol-index order."""
        out, buf = [], ctypes.create_string_buffer(9)
        for s in range(1, self._lib.wb_symbol_count(self._h)):
            if self._lib.wb_symbol(self._h, s, buf) == 0:
                out.append(_ticker_text(buf.value))
        return out

    def top(self, ticker):
        t = _lib.Top()
        _check(self._lib.wb_top(self._h, self._sym(ticker), ctypes.byref(t)), ticker)
        return Top(self._side_px(t.bid_price, t.bid_qty), t.bid_qty,
                   self._side_px(t.ask_price, t.ask_qty), t.ask_qty, t.updates, t.flags,
                   self._state(t.state))

    def nbbo(self, ticker):
        n = _lib.Nbbo()
        _check(self._lib.wb_nbbo(self._h, self._sym(ticker), ctypes.byref(n)), ticker)
        return Nbbo(self._side_px(n.bid_price, n.bid_qty), n.bid_qty,
                    self._side_px(n.ask_price, n.ask_qty), n.ask_qty,
                    _venues(n.bid_venues), _venues(n.ask_venues), n.flags,
                    self._state(n.state), n.updates, n.exch_ts, n.recv_ts)

    def depth(self, ticker, n=_lib.BOOK_DEPTH, venue=None):
        """(bids, asks): up to n levels each, best first, consolidated or of
        one venue (a name such as "NASDAQ", or its number)."""
        if not isinstance(n, int) or not 0 <= n <= _lib.BOOK_DEPTH:
            raise WirebookError(WB_EINVAL, f"{ticker}: depth {n!r}: levels a side from 0 to"
                                f" {_lib.BOOK_DEPTH} (WB_BOOK_DEPTH)")
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
        return VenueBbo(self._side_px(b.bid_price, b.bid_qty), b.bid_qty, b.bid_orders,
                        self._side_px(b.ask_price, b.ask_qty), b.ask_qty, b.ask_orders, b.flags, self._state(b.state), b.gaps,
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

    def recovery(self):
        """Gap recovery per stream (wirebookd --recovery): a list of Recovery."""
        n = _check(self._lib.wb_recovery_streams(self._h, None, 0), self.name)
        arr = (_lib.RecoveryStream * max(n, 1))()
        n = min(_check(self._lib.wb_recovery_streams(self._h, arr, n), self.name), n)
        return [Recovery(venue_name(r.venue), r.channel, r.unit, RECOVERY_STATES.get(r.state, "?"),
                         r.since_ns, r.gaps, r.filled, r.unrecoverable, r.messages, r.lost,
                         r.snapshots, r.fills, r.fill_p50_ns, r.fill_p99_ns, r.fill_max_ns)
                for r in arr[:n]]

    def recovering(self, ticker, venue=None):
        """(True, since_ns) while the symbol's book on venue (None: any) is recovered."""
        since = ctypes.c_uint64()
        rc = _check(self._lib.wb_symbol_recovering(self._h, self._sym(ticker), self._venue(venue),
                                                   ctypes.byref(since)), ticker)
        return bool(rc), since.value

    # ---- many symbols at once, as numpy structured arrays (_arrays.py) ----

    _ENOSYM = WB_ENOSYM

    def _rc(self, rc, what):
        return _check(rc, what)

    def _sym_list(self, symbols):
        """[(ticker, index)] of symbols (None: every symbol in the book)."""
        if symbols is None:
            symbols = self.symbols()
        elif isinstance(symbols, (str, bytes)):
            symbols = [symbols]
        return [(t if isinstance(t, str) else _ticker_text(t), self._sym(t)) for t in symbols]

    def snapshot(self, symbols=None):
        """One row per symbol (None: all): NBBO (bid, bid_qty, ask, ask_qty,
        bid_venues, ask_venues masks), flags, state, updates, exch_ts,
        recv_ts, and the last trade (last_price, last_qty, last_exch_ts,
        last_venue, volume, trades), as a numpy structured array."""
        from . import _arrays
        return _arrays.snapshot(self, self._sym_list(symbols), self._raw)

    def depth_array(self, symbols=None, n=_lib.BOOK_DEPTH, venue=None, by_venue=False):
        """n levels a side of each symbol (None: all), best first, consolidated
        or of one venue, as a numpy structured array: bid_price[n], bid_qty[n],
        bid_orders[n], bid_venues[n] (masks), the same for ask, bid_count,
        ask_count, updates, flags; by_venue adds bid_venue_qty[24][n] and
        ask_venue_qty (each venue's shares at each consolidated level)."""
        if not isinstance(n, int) or not 0 <= n <= _lib.BOOK_DEPTH:
            raise WirebookError(WB_EINVAL, f"depth {n!r}: levels a side from 0 to"
                                f" {_lib.BOOK_DEPTH} (WB_BOOK_DEPTH)")
        from . import _arrays
        return _arrays.depth(self, self._sym_list(symbols), n, self._venue(venue), by_venue,
                             self._raw)

    def sip_array(self, symbols=None):
        """The SIP's view of each symbol (None: all) beside the direct books':
        the SIP's NBBO (bid, bid_qty, ask, ask_qty, bid_venue, ask_venue, feed,
        sip_ts, recv_ts), flags (WB_SIPF_*), LULD band, SIP status, updates,
        the Super-Book's direct_bid/direct_ask, and the disagreement episodes
        and time; a symbol without SIP data has an empty row."""
        from . import _arrays
        return _arrays.sip(self, self._sym_list(symbols), self._raw)

    # ---- the SIP view, venue status ----------------------------------------

    def venue_status(self, venue=None):
        """VenueStatus(gaps, last_recv_ns, recovering) of a venue, or (None) a
        dict of every venue that has sent anything."""
        if venue is not None:
            v = _lib.VenueStatus()
            _check(self._lib.wb_venue_status(self._h, self._venue(venue), ctypes.byref(v)),
                   str(venue))
            return VenueStatus(v.gaps, v.last_recv_ns, bool(v.recovering))
        out = {}
        for v in range(1, _lib.BOOK_VENUES):
            s = _lib.VenueStatus()
            if self._lib.wb_venue_status(self._h, v, ctypes.byref(s)) == 0 and \
                    (s.last_recv_ns or s.gaps or s.recovering):
                out[venue_name(v)] = VenueStatus(s.gaps, s.last_recv_ns, bool(s.recovering))
        return out

    def sip_view(self, ticker):
        """The symbol's SIP view (sip.h, wb_sip_view) as a dict: updates,
        recv_ts, flags, status, nbbo, luld, cmp (the comparison with the
        direct books), lockcross ({"direct": ..., "sip": ...}), quotes (each
        participant's quote through the SIP, by venue name). Prices as the
        book's (float dollars, or raw)."""
        v = _lib.SipView()
        _check(self._lib.wb_sip_view(self._h, self._sym(ticker), ctypes.byref(v)), ticker)
        return self._sip_dict(v)

    def nats_stats(self):
        """The writer's NATS counters (wirebookd --publish, --source nats://) as a
        dict: roles ("publish", "source"), pub_* and src_* as nats.h names them."""
        st = _lib.NatsStats()
        _check(self._lib.wb_nats_stats(self._h, ctypes.byref(st)), self.name)
        out = _struct_dict(st)
        out["roles"] = [r for bit, r in ((1, "publish"), (2, "source")) if st.roles & bit]
        return out

    def sip_summary(self):
        """The book-wide SIP-vs-direct totals and the market-wide status, as a dict."""
        s = _lib.SipSummary()
        _check(self._lib.wb_sip_summary(self._h, ctypes.byref(s)), self.name)
        out = _struct_dict(s, self._px, skip=("lc",))
        out["lockcross"] = {"direct": _struct_dict(s.lc[0]), "sip": _struct_dict(s.lc[1])}
        return out

    def sip_venue_stats(self, venue):
        """A venue's direct BBO against its SIP quotes, all symbols, as a dict;
        the delay histograms as count, mean, min, p50, p99, p999 and max ns."""
        st = _lib.SipVenueStats()
        _check(self._lib.wb_sip_venue_stats(self._h, self._venue(venue), ctypes.byref(st)),
               str(venue))
        out = {n: getattr(st, n) for n, _ in st._fields_ if n not in ("delay", "sip_latency")}
        for n in ("delay", "sip_latency"):
            d = getattr(st, n)
            q = {f"p{k}": self._lib.wb_delay_quantile(ctypes.byref(d), ppm)
                 for k, ppm in (("50", 500000), ("99", 990000), ("999", 999000))}
            out[n] = dict(count=d.count, mean_ns=d.sum_ns / d.count if d.count else 0,
                          min_ns=d.min_ns, max_ns=d.max_ns, **q)
        return out

    def _sip_dict(self, v):
        out = _struct_dict(v, self._px, skip=("quote", "lc"))
        out["flags"] = v.flags
        out["lockcross"] = {"direct": _struct_dict(v.lc[0]), "sip": _struct_dict(v.lc[1])}
        out["quotes"] = {venue_name(i): _struct_dict(v.quote[i], self._px)
                         for i in range(_lib.BOOK_VENUES) if v.quotes_present >> i & 1}
        return out

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


_PRICE_FIELDS = {"bid_price", "ask_price", "lower", "upper", "max_price_diff"}


def _struct_dict(c, px=None, skip=()):
    """A ctypes structure as a dict (nested ones too); prices through px, the
    feed's character codes as str, reserved bytes left out."""
    out = {}
    for name, _ in c._fields_:
        if name.startswith("reserved") or name in skip:
            continue
        v = getattr(c, name)
        if isinstance(v, ctypes.Structure):
            v = _struct_dict(v, px)
        elif isinstance(v, bytes):
            v = v.decode(errors="replace").strip("\x00 ")
        elif px and name in _PRICE_FIELDS:
            v = px(v)
        out[name] = v
    return out


KINDS = {1: "ADD", 2: "EXEC", 3: "EXECP", 4: "REDUCE", 5: "DELETE", 6: "REPLACE",
         7: "MODIFY", 8: "TRADE", 9: "BREAK", 10: "QUOTE", 11: "STATUS", 12: "CLEAR",
         13: "SYMBOL", 14: "GAP", 15: "NBBO", 16: "LULD"}  # enum wb_event_kind

Event = namedtuple("Event", "kind venue side flags line instrument seq exch_ts recv_ts "
                   "order_id price qty ref")
EventCounts = namedtuple("EventCounts", "delivered dropped published rings")


class Events:
    """The event rings (events.h): every event in decode order. See events()."""

    def __init__(self, device=None, rings=None, ring_bytes=0, raw=False, name=None):
        self._lib = _l()
        self._raw = raw
        self.ended = False
        err = ctypes.c_int(0)
        if name is not None:  # wirebookd's stream (wb_events_open_shm)
            self._h = self._lib.wb_events_open_shm(name.encode(), ctypes.byref(err))
            what = name
        elif rings is None:
            self._h = self._lib.wb_events_open(device.encode() if device else None,
                                               ctypes.byref(err))
            what = device or "/dev/wirebook"
        else:  # addresses of rings this process mapped (wb_events_attach)
            arr = (ctypes.c_void_p * len(rings))(*rings)
            self._h = self._lib.wb_events_attach(arr, len(rings), ring_bytes, ctypes.byref(err))
            what = "rings"
        if not self._h:
            raise WirebookError(err.value, what)
        self._batch = (ctypes.POINTER(_lib.Event) * 256)()

    def close(self):
        if self._h:
            self._lib.wb_events_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _event(self, e):
        if e.kind in (8, 9):  # TRADE, BREAK: the trade payload
            t = e.u.trade
            oid, price, qty, ref = t.order_id, t.price, t.qty, t.match_id
        elif 1 <= e.kind <= 7:
            o = e.u.order
            oid, price, qty, ref = o.order_id, o.price, o.qty, o.ref
        else:
            oid = price = qty = ref = 0
        return Event(KINDS.get(e.kind, str(e.kind)), venue_name(e.venue),
                     {1: "B", 2: "S"}.get(e.side, ""), e.flags, e.line, e.instrument, e.seq,
                     e.exch_ts, e.recv_ts, oid, price if self._raw else price / _lib.PRICE_SCALE,
                     qty, ref)

    def _peek(self, max, timeout_ms):
        """wb_events_peek, waiting up to timeout_ms for the first event; sets
        .ended once wirebookd's stream has ended and every event was read."""
        n = self._lib.wb_events_peek(self._h, self._batch, max)
        if not n and (timeout_ms or not self.ended):
            rc = self._lib.wb_events_wait(self._h, timeout_ms)
            if rc == WB_ESTALE:
                self.ended = True
            else:
                _check(rc, "wait")
            n = self._lib.wb_events_peek(self._h, self._batch, max)
        return n

    def read(self, max=256, timeout_ms=0):
        """Up to max events (copied out, their slots released); waits up to
        timeout_ms for the first when none is ready (-1: forever). An empty
        list with .ended set: wirebookd's stream ended, every event read."""
        max = min(max, len(self._batch))
        n = self._peek(max, timeout_ms)
        out = [self._event(self._batch[i].contents) for i in range(n)]
        self._lib.wb_events_release(self._h)
        return out

    def read_array(self, max=4096, timeout_ms=0):
        """Up to max events as a numpy structured array (EVENT_DTYPE: the
        raw struct wb_event, prices int64 units of 1e-8 dollars), in one
        copy per batch; waits as read() does. Needs numpy."""
        from ._arrays import np, EVENT_DTYPE
        out = np.empty(max, EVENT_DTYPE)
        got = 0
        while got < max:
            n = self._peek(min(max - got, len(self._batch)), timeout_ms if not got else 0)
            if not n:
                break
            base = out.ctypes.data + got * 64
            for i in range(n):  # 64 bytes each, straight into the array
                ctypes.memmove(base + i * 64, self._batch[i], 64)
            got += n
            self._lib.wb_events_release(self._h)
        return out[:got]

    def __iter__(self):
        """Every event until wirebookd's stream ends (the module's: forever)."""
        while self._h and not self.ended:
            yield from self.read(timeout_ms=100)

    def counts(self):
        c = _lib.EventCounts()
        _check(self._lib.wb_events_counts(self._h, ctypes.byref(c)), "counts")
        return EventCounts(c.delivered, c.dropped, c.published, c.rings)


def events(device=None, raw=False, name=None):
    """Every event, in decode order: wirebookd's event stream of the book
    NAME (wirebookd --shm NAME; any source: pcap, BinaryFILE, live, the
    module), or the kernel module's rings at device. With neither:
    wirebookd's default book's stream, else /dev/wirebook. A stream's
    reader that falls more than wirebookd --events behind loses events:
    counts().dropped says how many."""
    if device is None and name is None:
        try:
            return Events(raw=raw, name=WB_SHM_DEFAULT_NAME)
        except WirebookError as e:
            if e.code != WB_ENOSHM:
                raise
    return Events(device, raw=raw, name=name)


def open(name=None, raw=False):  # noqa: A001 (the package's verb, as in io.open)
    """Attach read-only to the book NAME (wirebookd --shm NAME; None: "wirebook")."""
    return Book(name, raw)


from .export import read  # noqa: E402 (wb-export's files; h5py and numpy on first use)
__all__ += ["read"]
# Orders at a price and queue positions (orders.h): wirebook.orders().
from .orders import Orders, orders  # noqa: E402,F401
# A recorded day in lockstep with a strategy (wirebookd --lockstep): wirebook.simulate().
from .simulate import Fill, QueueRow, Simulation, simulate  # noqa: E402,F401
__all__ += ["simulate", "Simulation", "Fill", "QueueRow"]
