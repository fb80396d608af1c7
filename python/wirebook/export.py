"""Read the files wb-export writes (HDF5) into numpy structured arrays.

    import wirebook
    ev = wirebook.read("day.h5", ["AAPL", "MSFT"], "09:30", "16:00")
    ev["price"] / 1e8, ev["kind"], ev["side"] ...      # one row per event, in decode order
    trades = wirebook.read("day.h5", "AAPL", table="trades")

The events table is stored symbol by symbol with an index of each symbol's
runs (events_index): reading a symbol reads its runs, not the day. Other
tables are read whole and filtered. h5py and numpy are needed; pandas never
(pandas.DataFrame(arr) turns a result into a frame).
"""

_DAY_NS = 86400 * 10**9


def _h5():
    try:
        import h5py
        import numpy
    except ImportError as e:  # a sentence, not a stack of import machinery
        raise ImportError("wirebook.read needs h5py and numpy (pip install h5py; Debian: "
                          "python3-h5py)") from e
    return h5py, numpy


def _midnight_ns(date):
    """Midnight US/Eastern of DATE (YYYY-MM-DD), ns since the epoch."""
    import datetime
    import zoneinfo
    d = datetime.date.fromisoformat(date)
    t = datetime.datetime(d.year, d.month, d.day, tzinfo=zoneinfo.ZoneInfo("America/New_York"))
    return int(t.timestamp()) * 10**9


def _bound(t, date):
    """A time as ns since the epoch: int ns, "HH:MM[:SS[.f]]" (US/Eastern on
    DATE), a datetime (naive: US/Eastern) or a numpy datetime64."""
    if t is None or isinstance(t, int):
        return t
    if isinstance(t, str):
        parts = t.split(":")
        if len(parts) < 2 or len(parts) > 3:
            raise ValueError(f"time {t!r}: want HH:MM[:SS[.fff]] or ns since the epoch")
        sec = int(parts[0]) * 3600 + int(parts[1]) * 60
        ns = round(float(parts[2]) * 1e9) if len(parts) == 3 else 0
        return _midnight_ns(date) + sec * 10**9 + ns
    if hasattr(t, "astype") and "datetime64" in str(getattr(t, "dtype", "")):
        return int(t.astype("datetime64[ns]").astype("int64"))
    if hasattr(t, "timestamp"):
        import datetime
        import zoneinfo
        if t.tzinfo is None:
            t = t.replace(tzinfo=zoneinfo.ZoneInfo("America/New_York"))
        d = t - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)  # exact, unlike a float
        return (d.days * 86400 + d.seconds) * 10**9 + d.microseconds * 1000
    raise TypeError(f"time {t!r}: int ns, 'HH:MM[:SS]', datetime or datetime64")


def _event_time(np, rows):
    """The time wb-export's --start/--end use: exchange time, else receive time."""
    ex = rows["exch_ts"].astype(np.int64)
    return np.where(ex >= _DAY_NS, ex, rows["recv_ts"].astype(np.int64))


def read(file, symbols=None, start=None, end=None, table="events", date=None):
    """Rows of TABLE (default the order-level events table) of the symbols
    given (a ticker, a list of them, or None: all) from START to before END
    (ns since the epoch, or "HH:MM[:SS]" US/Eastern on each trading date,
    or a datetime), over every trading date of the file or DATE alone.

    Returns one numpy structured array, the file's columns: prices int64
    in 1e-8 dollars (the file's price_scale), times int64 ns since the
    epoch, strings bytes. Events are in decode order (event_no)."""
    h5py, np = _h5()
    if isinstance(symbols, (str, bytes)):
        symbols = [symbols]
    wanted = None if symbols is None else {s.encode() if isinstance(s, str) else s for s in symbols}
    parts = []
    with h5py.File(file, "r") as f:
        if int(f.attrs.get("schema_version", 1)) < 2:
            raise ValueError(f"{file}: written before schema 2 (no date groups); export it again")
        dates = [date] if date else sorted(g for g in f if isinstance(f[g], h5py.Group))
        for d in dates:
            if d not in f:
                raise KeyError(f"{file}: no trading date {d} (it has {', '.join(sorted(f))})")
            g = f[d]
            if table not in g:
                raise KeyError(f"{file}: no table {table} (it has {', '.join(sorted(g))})")
            ds = g[table]
            index = g.get(table + "_index")
            if wanted is not None and index is not None:
                runs = index[:]
                runs = runs[np.isin(runs["symbol"], list(wanted))]
                rows = [ds[int(a):int(a) + int(n)] for a, n in zip(runs["first"], runs["count"])]
                rows = np.concatenate(rows) if rows else ds[0:0]
            else:
                rows = ds[:]
                if wanted is not None and "symbol" in rows.dtype.names:
                    rows = rows[np.isin(rows["symbol"], list(wanted))]
            lo, hi = _bound(start, d), _bound(end, d)
            if lo is not None or hi is not None:
                t = _event_time(np, rows)
                keep = np.ones(len(rows), bool)
                if lo is not None:
                    keep &= t >= lo
                if hi is not None:
                    keep &= t < hi
                rows = rows[keep]
            parts.append(rows)
    if not parts:
        raise ValueError(f"{file}: no trading date in the file")
    out = np.concatenate(parts)
    if "event_no" in out.dtype.names:
        out = out[np.argsort(out["event_no"], kind="stable")]
    return out
