"""ctypes declarations of libwirebook (include/wirebook/book.h).

The structures mirror the header field for field; tests/api/test_python.sh
compares their sizes and offsets with the C compiler's, so a change of the
header that is not made here fails the tests instead of reading garbage.
"""
import ctypes
import os

BOOK_DEPTH = 10    # WB_BOOK_DEPTH
BOOK_VENUES = 24   # WB_BOOK_VENUES
PRICE_SCALE = 100000000  # WB_PRICE_SCALE: prices are int64 units of 1e-8 dollars

c_int64, c_uint64 = ctypes.c_int64, ctypes.c_uint64
c_uint32, c_uint16, c_uint8 = ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint8


class Level(ctypes.Structure):
    _fields_ = [("price", c_int64), ("qty", c_uint64),
                ("orders", c_uint32), ("venues", c_uint32)]


class Trade(ctypes.Structure):
    _fields_ = [("price", c_int64), ("qty", c_uint64), ("exch_ts", c_uint64),
                ("match_id", c_uint64), ("volume", c_uint64), ("count", c_uint32),
                ("venue", c_uint8), ("flags", c_uint8), ("reserved", c_uint8 * 2)]


class Top(ctypes.Structure):
    _fields_ = [("bid_price", c_int64), ("bid_qty", c_uint64),
                ("ask_price", c_int64), ("ask_qty", c_uint64),
                ("updates", c_uint64), ("flags", c_uint16), ("state", c_uint8)]


class Nbbo(ctypes.Structure):
    _fields_ = [("bid_price", c_int64), ("bid_qty", c_uint64),
                ("ask_price", c_int64), ("ask_qty", c_uint64),
                ("bid_venues", c_uint32), ("ask_venues", c_uint32),
                ("flags", c_uint16), ("state", c_uint8),
                ("updates", c_uint64), ("exch_ts", c_uint64), ("recv_ts", c_uint64)]


class VenueBbo(ctypes.Structure):
    _fields_ = [("bid_price", c_int64), ("bid_qty", c_uint64), ("bid_orders", c_uint32),
                ("ask_price", c_int64), ("ask_qty", c_uint64), ("ask_orders", c_uint32),
                ("flags", c_uint8), ("state", c_uint8), ("gaps", c_uint32),
                ("exch_ts", c_uint64)]


class Status(ctypes.Structure):
    _fields_ = [("state", c_uint8), ("raw_state", ctypes.c_char),
                ("reason", ctypes.c_char * 4), ("venue", c_uint8), ("flags", c_uint16)]


class Health(ctypes.Structure):
    _fields_ = [("state", ctypes.c_int), ("shm_state", c_uint32),
                ("age_ns", c_uint64), ("heartbeat_ns", c_uint64),
                ("stale_after_ns", c_uint64), ("last_update_age_ns", c_uint64),
                ("writer_pid", c_uint32), ("writer_alive", ctypes.c_int),
                ("recovering_venues", c_uint32), ("reattaches", c_uint32),
                ("instance_id", c_uint64)]


class Depth(ctypes.Structure):
    _fields_ = [("venue", c_uint8), ("bid_count", c_uint8), ("ask_count", c_uint8),
                ("flags", c_uint16), ("updates", c_uint64),
                ("bid", Level * BOOK_DEPTH), ("ask", Level * BOOK_DEPTH),
                ("bid_venue_qty", (c_uint64 * BOOK_DEPTH) * BOOK_VENUES),
                ("ask_venue_qty", (c_uint64 * BOOK_DEPTH) * BOOK_VENUES)]


class EvOrder(ctypes.Structure):
    _fields_ = [("order_id", c_uint64), ("price", c_int64), ("qty", c_uint32),
                ("mpid", ctypes.c_char * 4), ("ref", c_uint64)]


class EvTrade(ctypes.Structure):
    _fields_ = [("order_id", c_uint64), ("price", c_int64), ("qty", c_uint32),
                ("cross_type", ctypes.c_char), ("reserved", c_uint8 * 3), ("match_id", c_uint64)]


class EvQuote(ctypes.Structure):
    _fields_ = [("bid_price", c_int64), ("ask_price", c_int64), ("bid_qty", c_uint32),
                ("ask_qty", c_uint32), ("sip_ts", c_uint64)]


class EvPayload(ctypes.Union):
    _fields_ = [("order", EvOrder), ("trade", EvTrade), ("quote", EvQuote),
                ("raw", c_uint8 * 32)]


class Event(ctypes.Structure):
    """struct wb_event (event.h): 64 bytes, one cache line."""
    _fields_ = [("kind", c_uint8), ("venue", c_uint8), ("side", c_uint8), ("flags", c_uint8),
                ("line", c_uint16), ("instrument", c_uint16), ("seq", c_uint64),
                ("exch_ts", c_uint64), ("recv_ts", c_uint64), ("u", EvPayload)]


class EventCounts(ctypes.Structure):
    _fields_ = [("delivered", c_uint64), ("dropped", c_uint64), ("published", c_uint64),
                ("rings", c_uint32), ("reserved", c_uint32)]


class RecoveryStream(ctypes.Structure):
    _fields_ = [("venue", c_uint8), ("unit", c_uint8), ("channel", c_uint16), ("state", c_uint8),
                ("reserved0", c_uint8 * 3), ("since_ns", c_uint64), ("gaps", c_uint64),
                ("filled", c_uint64), ("unrecoverable", c_uint64), ("messages", c_uint64),
                ("lost", c_uint64), ("snapshots", c_uint64), ("fills", c_uint64),
                ("fill_p50_ns", c_uint64), ("fill_p99_ns", c_uint64), ("fill_max_ns", c_uint64),
                ("reserved", c_uint64 * 4)]


class VenueStatus(ctypes.Structure):
    _fields_ = [("gaps", c_uint64), ("last_recv_ns", c_uint64), ("recovering", c_uint32)]


# sip.h: the SIP view
DELAY_BUCKETS = 32 * 37  # WB_DELAY_BUCKETS


class SipQuote(ctypes.Structure):
    _fields_ = [("bid_price", c_int64), ("ask_price", c_int64), ("bid_qty", c_uint32),
                ("ask_qty", c_uint32), ("exch_ts", c_uint64), ("sip_ts", c_uint64),
                ("recv_ts", c_uint64), ("quotes", c_uint32), ("condition", ctypes.c_char),
                ("flags", c_uint8), ("feed", c_uint8), ("state", c_uint8),
                ("reserved", c_uint8 * 8)]


class SipNbbo(ctypes.Structure):
    _fields_ = [("bid_price", c_int64), ("ask_price", c_int64), ("bid_qty", c_uint32),
                ("ask_qty", c_uint32), ("bid_venue", c_uint8), ("ask_venue", c_uint8),
                ("indicator", ctypes.c_char), ("condition", ctypes.c_char), ("sides", c_uint8),
                ("luld", ctypes.c_char), ("feed", c_uint8), ("reserved", c_uint8),
                ("sip_ts", c_uint64), ("recv_ts", c_uint64)]


class SipLuld(ctypes.Structure):
    _fields_ = [("lower", c_int64), ("upper", c_int64), ("sip_ts", c_uint64),
                ("indicator", ctypes.c_char), ("feed", c_uint8), ("reserved", c_uint8 * 6)]


class SipStatus(ctypes.Structure):
    _fields_ = [("sip_ts", c_uint64), ("recv_ts", c_uint64), ("state", c_uint8),
                ("raw_state", ctypes.c_char), ("reason", ctypes.c_char * 4), ("venue", c_uint8),
                ("reserved", c_uint8)]


class SipCompare(ctypes.Structure):
    _fields_ = [(n, c_uint64) for n in ("compared", "uncovered", "episodes", "disagree_ns",
                                        "max_ns", "direct_ahead", "direct_ahead_ns", "sip_ahead",
                                        "sip_ahead_ns", "price_diff_sum")] + \
               [("max_price_diff", c_int64)] + \
               [(n, c_uint64) for n in ("open_recv_ts", "open_exch_ts", "direct_only",
                                        "direct_only_ns", "sip_only", "sip_only_ns", "sip_gaps",
                                        "stale_marked")] + [("reserved", c_uint64 * 1)]


class SipLockcross(ctypes.Structure):
    _fields_ = [(n, c_uint64) for n in ("episodes", "crossed", "total_ns", "max_ns",
                                        "open_recv_ts", "open_exch_ts")] + \
               [("bid_venues", c_uint32), ("ask_venues", c_uint32), ("reserved", c_uint64)]


class SipView(ctypes.Structure):
    _fields_ = [("updates", c_uint64), ("recv_ts", c_uint64), ("quotes_present", c_uint32),
                ("flags", c_uint32), ("status", SipStatus), ("nbbo", SipNbbo), ("luld", SipLuld),
                ("cmp", SipCompare), ("lc", SipLockcross * 2), ("quote", SipQuote * BOOK_VENUES)]


class SipDelay(ctypes.Structure):
    _fields_ = [("count", c_uint64), ("sum_ns", c_uint64), ("min_ns", c_uint64),
                ("max_ns", c_uint64), ("hist", c_uint64 * DELAY_BUCKETS)]


class SipVenueStats(ctypes.Structure):
    _fields_ = [(n, c_uint64) for n in ("sip_quotes", "compared", "matched", "size_differs",
                                        "unmatched", "sip_first", "never_shown",
                                        "direct_changes")] + \
               [("delay", SipDelay), ("sip_latency", SipDelay)]


class SipSummary(ctypes.Structure):
    _fields_ = [(n, c_uint64) for n in ("sip_events", "symbols", "dropped", "lock_written",
                                        "disagree_written")] + \
               [("total", SipCompare), ("lc", SipLockcross * 2), ("mwcb", SipStatus)]


class Order(ctypes.Structure):  # orders.h
    _fields_ = [("order_id", c_uint64), ("qty", c_uint64), ("join_ts", c_uint64),
                ("join_recv_ts", c_uint64), ("mpid", ctypes.c_char * 4), ("reserved", c_uint32)]


class OrderLevel(ctypes.Structure):
    _fields_ = [("price", c_int64), ("qty", c_uint64), ("orders", c_uint32), ("reserved", c_uint32)]


class QueuePos(ctypes.Structure):
    _fields_ = [("order_id", c_uint64), ("venue", c_uint8), ("side", c_uint8), ("state", c_uint8),
                ("reserved", c_uint8), ("sym", ctypes.c_int), ("price", c_int64), ("qty", c_uint64),
                ("filled_qty", c_uint64), ("shares_ahead", c_uint64), ("orders_ahead", c_uint32),
                ("orders_behind", c_uint32), ("shares_behind", c_uint64), ("level_qty", c_uint64),
                ("level_orders", c_uint32), ("version", c_uint32), ("exch_ts", c_uint64),
                ("recv_ts", c_uint64), ("changes", c_uint64)]


class VirtualOrder(ctypes.Structure):
    _fields_ = [("pos", QueuePos), ("fills", c_uint64), ("last_fill_qty", c_uint64), ("fill_exch_ts", c_uint64),
                ("fill_recv_ts", c_uint64), ("fill_seq", c_uint64)]


class NatsStats(ctypes.Structure):  # nats.h
    _fields_ = [("roles", c_uint32), ("reserved0", c_uint32), ("updated_ns", c_uint64)] + \
               [(n, c_uint64) for n in ("pub_batches", "pub_events", "pub_bytes", "pub_acked",
                                        "pub_duplicates", "pub_resent", "pub_lost", "pub_backlog",
                                        "pub_resend_waiting", "pub_in_flight", "pub_disconnects",
                                        "pub_reconnects")] + \
               [("pub_connected", c_uint32), ("pub_end_sent", c_uint32)] + \
               [(n, c_uint64) for n in ("src_messages", "src_batches", "src_events", "src_bytes",
                                        "src_duplicates", "src_held", "src_waited", "src_lost",
                                        "src_lag_messages")] + \
               [("src_lag_ns", c_int64), ("src_disconnects", c_uint64), ("src_reconnects", c_uint64),
                ("src_connected", c_uint32), ("src_end_seen", c_uint32)] + \
               [(n, c_uint64) for n in ("pub_snapshots", "pub_snapshot_bytes", "pub_snapshot_failures",
                                        "pub_book_messages", "pub_book_bytes", "pub_book_failed",
                                        "src_snapshot_global")] + \
               [("reserved", c_uint64 * 1)]


STRUCTS = {"wb_level": Level, "wb_trade": Trade, "wb_top": Top, "wb_nbbo": Nbbo,
           "wb_venue_bbo": VenueBbo, "wb_status": Status, "wb_health": Health,
           "wb_depth": Depth, "wb_event": Event, "wb_event_counts": EventCounts,
           "wb_recovery_stream": RecoveryStream, "wb_venue_status": VenueStatus,
           "wb_sip_quote": SipQuote, "wb_sip_nbbo": SipNbbo, "wb_sip_luld": SipLuld,
           "wb_sip_status": SipStatus, "wb_sip_compare": SipCompare,
           "wb_sip_lockcross": SipLockcross, "wb_sip_view": SipView, "wb_sip_delay": SipDelay,
           "wb_sip_venue_stats": SipVenueStats, "wb_sip_summary": SipSummary,
           "wb_order": Order, "wb_order_level": OrderLevel, "wb_queue_pos": QueuePos,
           "wb_virtual_order": VirtualOrder, "wb_nats_stats": NatsStats}


def _candidates():
    """Where libwirebook.so may be, most specific first."""
    env = os.environ.get("WIREBOOK_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    try:  # written by make install: the prefix's lib directory
        from ._installed import LIBDIR
        yield os.path.join(LIBDIR, "libwirebook.so.1")
    except ImportError:
        pass
    # the source tree: python/wirebook -> build/
    yield os.path.join(here, "..", "..", "build", "libwirebook.so")
    yield "libwirebook.so.1"  # the dynamic linker's search path


def load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            lib.wb_path = path
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise OSError("libwirebook.so not found (build it with make, install it, "
                      "or set WIREBOOK_LIB): " + "; ".join(errors or ["no candidate exists"]))
    B = ctypes.c_void_p
    P = ctypes.POINTER
    sig = {
        "wb_open": (B, [ctypes.c_char_p, P(ctypes.c_int)]),
        "wb_close": (None, [B]),
        "wb_health": (ctypes.c_int, [B, P(Health)]),
        "wb_health_name": (ctypes.c_char_p, [ctypes.c_int]),
        "wb_find": (ctypes.c_int, [B, ctypes.c_char_p]),
        "wb_symbol": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_char_p]),
        "wb_symbol_count": (ctypes.c_int, [B]),
        "wb_top": (ctypes.c_int, [B, ctypes.c_int, P(Top)]),
        "wb_nbbo": (ctypes.c_int, [B, ctypes.c_int, P(Nbbo)]),
        "wb_depth": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int, ctypes.c_uint, P(Depth)]),
        "wb_venue_bbo": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int, P(VenueBbo)]),
        "wb_last_trade": (ctypes.c_int, [B, ctypes.c_int, P(Trade)]),
        "wb_status": (ctypes.c_int, [B, ctypes.c_int, P(Status)]),
        "wb_update_counter": (ctypes.c_int, [B, ctypes.c_int, P(c_uint64)]),
        "wb_strerror": (ctypes.c_char_p, [ctypes.c_int]),
        "wb_events_open": (B, [ctypes.c_char_p, P(ctypes.c_int)]),
        "wb_events_open_shm": (B, [ctypes.c_char_p, P(ctypes.c_int)]),
        "wb_events_attach": (B, [P(ctypes.c_void_p), ctypes.c_uint, c_uint64, P(ctypes.c_int)]),
        "wb_events_close": (None, [B]),
        "wb_events_peek": (ctypes.c_uint, [B, P(P(Event)), ctypes.c_uint]),
        "wb_events_release": (None, [B]),
        "wb_events_wait": (ctypes.c_int, [B, ctypes.c_int]),
        "wb_events_counts": (ctypes.c_int, [B, P(EventCounts)]),
        "wb_recovery_streams": (ctypes.c_int, [B, P(RecoveryStream), ctypes.c_uint]),
        "wb_symbol_recovering": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int, P(c_uint64)]),
        "wb_orders_open": (B, [ctypes.c_char_p, P(ctypes.c_int)]),
        "wb_orders_close": (None, [B]),
        "wb_orders_has_detail": (ctypes.c_int, [B, ctypes.c_int]),
        "wb_orders_detail": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int]),
        "wb_order_levels": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int, ctypes.c_int, P(OrderLevel),
                                           ctypes.c_uint]),
        "wb_orders_at": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int, ctypes.c_int, c_int64, P(Order),
                                        ctypes.c_uint, P(OrderLevel)]),
        "wb_queue_track": (ctypes.c_int, [B, ctypes.c_int, c_uint64]),
        "wb_queue_untrack": (ctypes.c_int, [B, ctypes.c_int, c_uint64]),
        "wb_queue_position": (ctypes.c_int, [B, ctypes.c_int, c_uint64, P(QueuePos)]),
        "wb_queue_wait": (ctypes.c_int, [B, ctypes.c_int, c_uint64, c_uint32, c_int64]),
        "wb_queue_state_name": (ctypes.c_char_p, [ctypes.c_int]),
        "wb_virtual_place": (ctypes.c_int, [B, ctypes.c_int, ctypes.c_int, ctypes.c_int, c_int64, c_uint64,
                                            P(c_uint64)]),
        "wb_virtual_cancel": (ctypes.c_int, [B, c_uint64]),
        "wb_virtual_state": (ctypes.c_int, [B, c_uint64, P(VirtualOrder)]),
        "wb_venue_name": (ctypes.c_char_p, [ctypes.c_int]),
        "wb_venue_status": (ctypes.c_int, [B, ctypes.c_int, P(VenueStatus)]),
        "wb_sip_view": (ctypes.c_int, [B, ctypes.c_int, P(SipView)]),
        "wb_sip_nbbo": (ctypes.c_int, [B, ctypes.c_int, P(SipNbbo), P(c_uint32)]),
        "wb_sip_summary": (ctypes.c_int, [B, P(SipSummary)]),
        "wb_sip_venue_stats": (ctypes.c_int, [B, ctypes.c_int, P(SipVenueStats)]),
        "wb_delay_quantile": (c_uint64, [P(SipDelay), c_uint32]),
        "wb_state_name": (ctypes.c_char_p, [ctypes.c_int]),
        "wb_nats_stats": (ctypes.c_int, [B, P(NatsStats)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib
