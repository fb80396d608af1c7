"""Orders at a price and queue positions (include/wirebook/orders.h).

    import wirebook
    with wirebook.orders() as o:          # wirebookd --order-detail ...
        o.levels("AAPL", "nasdaq", "B")   # [(price, shares, orders), ...] best first
        o.at("AAPL", "nasdaq", "B", 189.51)   # [Order(...), ...] in time priority
        o.track("nasdaq", 123456)         # the builder follows it from its next batch
        p = o.position("nasdaq", 123456)  # QueuePos(state='resting', shares_ahead=...)
        o.wait("nasdaq", 123456, p.version, timeout=1.0)
        v = o.virtual_place("AAPL", "nasdaq", "B", 189.50, 100)   # a virtual order's id
        o.virtual_state(v)                # VirtualOrder(pos=QueuePos(...), fills=..., fill_exch_ts=...)
        o.virtual_cancel(v)               # cancels it; on a done one, forgets it
"""
import ctypes
from collections import namedtuple

from . import _lib, _check, _l, Book, WirebookError, WB_EBUSY

Order = namedtuple("Order", "order_id qty join_ts join_recv_ts mpid")
OrderLevel = namedtuple("OrderLevel", "price qty orders")
QueuePos = namedtuple("QueuePos", "order_id venue side state sym price qty filled_qty shares_ahead "
                      "orders_ahead shares_behind orders_behind level_qty level_orders version "
                      "exch_ts recv_ts changes")

VirtualOrder = namedtuple("VirtualOrder", "pos fills last_fill_qty fill_exch_ts fill_recv_ts fill_seq")

_SIDES = {"B": 1, "BUY": 1, "BID": 1, 1: 1, "S": 2, "SELL": 2, "ASK": 2, 2: 2}



class Orders:
    """The order detail beside the book NAME; see orders(). One handle per thread."""

    MAX_LEVELS = 4096
    MAX_ORDERS = 65536

    def __init__(self, name=None, raw=False):
        err = ctypes.c_int(0)
        self._lib = _l()
        self._book = Book(name, raw)
        self._raw = raw
        self._h = self._lib.wb_orders_open(name.encode() if name else None, ctypes.byref(err))
        if not self._h:
            self._book.close()
            raise WirebookError(err.value, (name or "wirebook") + ".orders")

    def close(self):
        if self._h:
            self._lib.wb_orders_close(self._h)
            self._h = None
        self._book.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _px(self, p):
        return p if self._raw else p / _lib.PRICE_SCALE

    def _price(self, p):
        return int(p) if self._raw else int(round(p * _lib.PRICE_SCALE))

    def _side(self, side):
        s = _SIDES.get(side.upper() if isinstance(side, str) else side)
        if s is None:
            raise ValueError(f"side {side!r}: B or S")
        return s

    def has_detail(self, ticker):
        return bool(_check(self._lib.wb_orders_has_detail(self._h, self._book._sym(ticker)), ticker))

    def detail(self, ticker, on=True):
        """Ask the builder to keep (or drop) the symbol's orders."""
        _check(self._lib.wb_orders_detail(self._h, self._book._sym(ticker), int(bool(on))), ticker)

    def levels(self, ticker, venue, side):
        buf = (_lib.OrderLevel * self.MAX_LEVELS)()
        n = _check(self._lib.wb_order_levels(self._h, self._book._sym(ticker), self._book._venue(venue),
                                             self._side(side), buf, self.MAX_LEVELS), ticker)
        return [OrderLevel(self._px(x.price), x.qty, x.orders) for x in buf[:n]]

    def at(self, ticker, venue, side, price):
        """The orders at a price, first in the queue first."""
        buf = (_lib.Order * self.MAX_ORDERS)()
        lvl = _lib.OrderLevel()
        n = _check(self._lib.wb_orders_at(self._h, self._book._sym(ticker), self._book._venue(venue),
                                          self._side(side), self._price(price), buf, self.MAX_ORDERS,
                                          ctypes.byref(lvl)), ticker)
        return [Order(x.order_id, x.qty, x.join_ts, x.join_recv_ts, x.mpid.decode(errors="replace").strip())
                for x in buf[:n]]

    def track(self, venue, order_id):
        _check(self._lib.wb_queue_track(self._h, self._book._venue(venue), order_id), "track")

    def untrack(self, venue, order_id):
        _check(self._lib.wb_queue_untrack(self._h, self._book._venue(venue), order_id), "untrack")

    def position(self, venue, order_id):
        """The tracked order's queue position; WirebookError (ENODATA) until tracked."""
        p = _lib.QueuePos()
        _check(self._lib.wb_queue_position(self._h, self._book._venue(venue), order_id, ctypes.byref(p)),
               "position")
        return self._pos(p)

    def _pos(self, p):
        return QueuePos(p.order_id, self._lib.wb_venue_name(p.venue).decode(), "BS"[p.side - 1] if p.side else None,
                        self._lib.wb_queue_state_name(p.state).decode(), p.sym, self._px(p.price), p.qty,
                        p.filled_qty, p.shares_ahead, p.orders_ahead, p.shares_behind, p.orders_behind,
                        p.level_qty, p.level_orders, p.version, p.exch_ts, p.recv_ts, p.changes)

    def virtual_place(self, ticker, venue, side, price, qty):
        """A virtual order at the back of the real queue at price: its id (placed from the builder's next batch)."""
        vid = ctypes.c_uint64(0)
        _check(self._lib.wb_virtual_place(self._h, self._book._sym(ticker), self._book._venue(venue),
                                          self._side(side), self._price(price), qty, ctypes.byref(vid)), ticker)
        return vid.value

    def virtual_cancel(self, vid):
        _check(self._lib.wb_virtual_cancel(self._h, vid), "virtual_cancel")

    def virtual_state(self, vid):
        """The virtual order now; WirebookError (ENODATA) until placed."""
        v = _lib.VirtualOrder()
        _check(self._lib.wb_virtual_state(self._h, vid, ctypes.byref(v)), "virtual_state")
        return VirtualOrder(self._pos(v.pos), v.fills, v.last_fill_qty, v.fill_exch_ts, v.fill_recv_ts, v.fill_seq)

    def wait(self, venue, order_id, version, timeout=None):
        """Sleep until the position moves past version: True, or False on timeout."""
        ns = -1 if timeout is None else int(timeout * 1e9)
        rc = self._lib.wb_queue_wait(self._h, self._book._venue(venue), order_id, version, ns)
        if rc == WB_EBUSY:
            return False
        _check(rc, "wait")
        return True


def orders(name=None, raw=False):
    """Attach to the order detail of the book NAME (wirebookd --order-detail)."""
    return Orders(name, raw)
