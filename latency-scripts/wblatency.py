"""Shared reader and statistics for wirebook latency logs.

Used by latency-scripts/summarize, plot and compare (python3 standard
library only). Reads both forms the daemon and wb-latency-text write:

  latency_<feed>.bin  binary log (lib/book/latency_format.h):
                      32-byte header "WBLATLOG", u32 version, u32 header
                      size, u32 sample size, u8 venue, 3 pad, u64 created_ns;
                      then 48-byte little-endian samples: recv_ts,
                      ring_read_ts, book_applied_ts, published_ts, seq (u64),
                      line (u16), venue (u8), 5 reserved bytes.
  latency_<feed>.txt  text log (tools/wb-latency-text.c): '#' comments, then
                      "seq line recv ring book pub d1 d2 d3 e2e" per packet.

Statistics (documented in README.md, checked by tests/test_latency_scripts.py):
  percentiles  nearest rank: the p-th percentile of n sorted values is
               value[ceil(p/100 * n) - 1] (always a value that occurred)
  mean         arithmetic mean
  stddev       population standard deviation (divide by n)
A stage is counted for a packet only when both of its timestamps are non-zero.
"""

import array
import fractions
import math
import os
import re
import sys

MAGIC = b"WBLATLOG"
VERSION = 1
HEADER_SIZE = 32
SAMPLE_SIZE = 48
U64_PER_SAMPLE = SAMPLE_SIZE // 8

# (key, label, from-timestamp column, to-timestamp column)
STAGES = [
    ("recv_to_ring", "recv->ring", 0, 1),
    ("ring_to_book", "ring->book", 1, 2),
    ("book_to_pub", "book->pub", 2, 3),
    ("end_to_end", "end-to-end", 0, 3),
]
PERCENTILES = [50.0, 90.0, 99.0, 99.9]
STAT_COLUMNS = ["packets", "mean", "p50", "p90", "p99", "p99.9", "max", "stddev"]
ALL_FEEDS = "all"


class LogError(Exception):
    """A file that is not a readable latency log."""


class FeedLog:
    """The stage latencies of one feed: one compact array of signed ns per
    stage, holding only the packets where both of the stage's timestamps
    are set (8 bytes per packet and stage). The timestamps are not kept,
    except with keep_times: then e2e_recv holds the receive time of each
    end-to-end delta (same order), for latency against time."""

    def __init__(self, feed, source, keep_times=False):
        self.feed = feed
        self.source = source
        self.packets = 0
        self.deltas = {key: array.array("q") for key, _l, _a, _b in STAGES}
        self.keep_times = keep_times
        self.e2e_recv = array.array("Q")

    def __len__(self):
        return self.packets

    def add(self, recv, ring, book, pub):
        """Append packets given as four parallel sequences of timestamps."""
        cols = (recv, ring, book, pub)
        self.packets += len(recv)
        for key, _label, a, b in STAGES:
            self.deltas[key].extend(t1 - t0 for t0, t1 in zip(cols[a], cols[b]) if t0 and t1)
        if self.keep_times:
            self.e2e_recv.extend(t0 for t0, t1 in zip(recv, pub) if t0 and t1)

    def merge(self, other):
        self.packets += other.packets
        for key in self.deltas:
            self.deltas[key].extend(other.deltas[key])
        self.e2e_recv.extend(other.e2e_recv)

    def stage_deltas(self, stage_key):
        return self.deltas[stage_key]


def feed_from_filename(path):
    m = re.match(r"latency_(.+)\.(bin|txt)$", os.path.basename(path))
    return m.group(1) if m else os.path.splitext(os.path.basename(path))[0]


BIN_CHUNK_SAMPLES = 1 << 16


def read_bin(path, keep_times=False):
    log = None
    with open(path, "rb") as f:
        head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE or head[:8] != MAGIC:
            raise LogError(f"{path}: not a wirebook latency log (bad magic)")
        version = int.from_bytes(head[8:12], "little")
        header_size = int.from_bytes(head[12:16], "little")
        sample_size = int.from_bytes(head[16:20], "little")
        if version != VERSION:
            raise LogError(f"{path}: latency log version {version}, these scripts read {VERSION}")
        if sample_size != SAMPLE_SIZE or header_size < HEADER_SIZE:
            raise LogError(f"{path}: unexpected header/sample size {header_size}/{sample_size}")
        f.seek(header_size)
        log = FeedLog(feed_from_filename(path), path, keep_times)
        # Chunks of whole samples: memory stays at the per-stage deltas.
        while True:
            body = f.read(BIN_CHUNK_SAMPLES * SAMPLE_SIZE)
            if not body:
                break
            partial = len(body) % SAMPLE_SIZE
            if partial:
                # Only the file's end can cut a record: the daemon was killed mid-write.
                print(f"{path}: ignored a partial last record ({partial} bytes)", file=sys.stderr)
                body = body[:len(body) - partial]
            words = array.array("Q")
            words.frombytes(body)
            if sys.byteorder != "little":
                words.byteswap()
            log.add(*(words[i::U64_PER_SAMPLE] for i in range(4)))
            if partial:
                break
    return log


def read_txt(path, keep_times=False):
    feed = None
    columns = [array.array("Q") for _ in range(4)]
    with open(path, "r", encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#"):
                m = re.match(r"#\s*feed\s+(\S+)", line)
                if m:
                    feed = m.group(1)
                continue
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 10:
                raise LogError(f"{path}:{lineno}: expected 10 fields, found {len(fields)}")
            try:
                for i in range(4):
                    columns[i].append(int(fields[2 + i]))
            except (ValueError, OverflowError) as e:
                raise LogError(f"{path}:{lineno}: bad timestamp ({e})") from None
    log = FeedLog(feed or feed_from_filename(path), path, keep_times)
    log.add(*columns)
    return log


def read_log(path, keep_times=False):
    if path.endswith(".txt"):
        return read_txt(path, keep_times)
    return read_bin(path, keep_times)


def find_logs(paths):
    """Expand directories to their latency_<feed>.bin (or .txt when no .bin) files."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            names = sorted(os.listdir(p))
            by_feed = {}
            for n in names:
                m = re.match(r"latency_(.+)\.(bin|txt)$", n)
                if m and (m.group(2) == "bin" or m.group(1) not in by_feed):
                    by_feed[m.group(1)] = os.path.join(p, n)
            if not by_feed:
                raise LogError(f"{p}: no latency_<feed>.bin or .txt files")
            files.extend(by_feed[k] for k in sorted(by_feed))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise LogError(f"{p}: no such file or directory")
    return files


def load_feeds(paths, keep_times=False):
    """feed name -> FeedLog, merging several files of the same feed."""
    feeds = {}
    for path in find_logs(paths):
        log = read_log(path, keep_times)
        if log.feed in feeds:
            feeds[log.feed].merge(log)
        else:
            feeds[log.feed] = log
    return feeds


def percentile(sorted_values, p):
    """Nearest-rank percentile of already sorted values."""
    n = len(sorted_values)
    if n == 0:
        return None
    # Exact arithmetic: in floats 99.9 / 100 * 1000 is 999.0000000000001,
    # whose ceiling would pick rank 1000 instead of 999.
    rank = math.ceil(fractions.Fraction(str(p)) * n / 100)
    return sorted_values[min(max(rank, 1), n) - 1]


def stats(values):
    """packets, mean, p50, p90, p99, p99.9, max, stddev of a list of ns values."""
    n = len(values)
    if n == 0:
        return {c: (0 if c == "packets" else None) for c in STAT_COLUMNS}
    s = sorted(values)
    mean = math.fsum(s) / n
    var = math.fsum((v - mean) ** 2 for v in s) / n
    out = {"packets": n, "mean": mean}
    for p in PERCENTILES:
        out["p%g" % p] = percentile(s, p)
    out["max"] = s[-1]
    out["stddev"] = math.sqrt(var)
    return out


def summarize(feeds):
    """[(feed, stage_key, stats)] per feed in name order, then all feeds together."""
    rows = []
    for feed in sorted(feeds):
        for key, _label, _a, _b in STAGES:
            rows.append((feed, key, stats(feeds[feed].stage_deltas(key))))
    if feeds:
        for key, _label, _a, _b in STAGES:
            merged = array.array("q")
            for feed in sorted(feeds):
                merged.extend(feeds[feed].stage_deltas(key))
            rows.append((ALL_FEEDS, key, stats(merged)))
            del merged
    return rows


def stage_label(key):
    for k, label, _a, _b in STAGES:
        if k == key:
            return label
    return key


def format_value(v, column, unit):
    if v is None:
        return "-"
    if column == "packets":
        return str(v)
    if unit == "ns":
        return "%.0f" % v if column in ("mean", "stddev") else str(v)
    return "%.3f" % (v / 1000.0)


def add_common_arguments(parser):
    parser.add_argument("--feed", action="append", metavar="NAME",
                        help="only this feed (repeatable); default: every feed found")
    parser.add_argument("--unit", choices=["us", "ns"], default="us",
                        help="unit of the table (default: us)")


def select_feeds(feeds, wanted):
    if not wanted:
        return feeds
    missing = [f for f in wanted if f not in feeds]
    if missing:
        raise LogError("no log for feed(s): " + ", ".join(missing) +
                       " (found: " + ", ".join(sorted(feeds)) + ")")
    return {f: feeds[f] for f in wanted}


def run(main):
    """Run a script's main() as the command: its return code is the exit
    status; a reader that stops early (`summarize DIR | head`) or Ctrl-C
    ends it quietly instead of with a traceback."""
    try:
        rc = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        rc = 0
    except KeyboardInterrupt:
        rc = 130
    sys.exit(rc)
