"""Runs of a multi-rate latency measurement (scripts/latency.sh --rates).

One measurement directory holds one sub-directory per (rate, path) run,
each with the daemon's latency logs, its own output (wirebookd.log), the
replay's (tcpreplay.log) and run.meta, the facts latency.sh knew when it
started the run, as key=value lines:

  rate_mps=100000          messages per second asked for
  path=rtc                 wirebookd --path (or "default")
  seconds=10               planned replay length
  pps=34483                packets per second asked of tcpreplay
  messages_per_packet=2.90 of the capture
  clock=software receive (AF_PACKET)   what stamped recv_ts
  clock_note=...           optional: what the NIC offers
  capture=...              optional: how the capture was made

Whether a run kept up is decided from those logs, never from latency: a
run whose replay fell short of the rate, or whose packets were dropped on
the way (kernel, event ring, latency log), is reported as "did not keep
up" with the reason instead of with figures that describe another load.

Used by latency-scripts/rates and plot; python3 standard library only.
"""

import os
import re

import wblatency as wl

META = "run.meta"
# A replay that reached less than this share of the asked rate measured another load.
MIN_RATE_SHARE = 0.9
# Losses tolerated before a run is "did not keep up", in percent of packets sent.
DEFAULT_MAX_LOSS_PCT = 0.1


def read_meta(path):
    meta = {}
    with open(path, "r", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            meta[k.strip()] = v.strip()
    return meta


def parse_tcpreplay(text):
    """sent packets, seconds, pps achieved, failed packets from tcpreplay's
    report; None for what it does not say."""
    out = {"sent": None, "seconds": None, "pps": None, "failed": None}
    m = re.search(r"Actual:\s*(\d+)\s+packets\s+\(\d+ bytes\)\s+sent in\s+([\d.]+)\s+seconds", text)
    if m:
        out["sent"] = int(m.group(1))
        out["seconds"] = float(m.group(2))
    m = re.search(r"Rated:.*?([\d.]+)\s+pps", text)
    if m:
        out["pps"] = float(m.group(1))
    m = re.search(r"Failed packets:\s*(\d+)", text)
    if m:
        out["failed"] = int(m.group(1))
    return out


def parse_wirebookd(text):
    """What wirebookd's final stats say about losses: frames received,
    kernel drops, event-ring drops (per line and the builder's), latency
    samples written and dropped. The last stats block wins."""
    out = {"frames": None, "kernel_drops": 0, "ring_drops": 0,
           "samples_written": None, "samples_dropped": 0}
    blocks = text.split("--- wirebookd stats at ")
    last = blocks[-1] if len(blocks) > 1 else ""
    m = re.search(r"\(source \S+: (\d+) frames", last)
    if m:
        out["frames"] = int(m.group(1))
    m = re.search(r"(\d+) kernel drops", last)
    if m:
        out["kernel_drops"] = int(m.group(1))
    # The per-line table: a header naming ring-drops, then one row per line
    # up to the "books:" line.
    ring_col = None
    for ln in last.splitlines():
        cells = ln.split()
        if ring_col is None:
            if cells[:2] == ["line", "venue"] and "ring-drops" in cells:
                ring_col = cells.index("ring-drops")
            continue
        if ln.startswith("books:"):
            break
        if len(cells) > ring_col and cells[ring_col].isdigit():
            out["ring_drops"] += int(cells[ring_col])
    m = re.search(r"ring batches \d+, ring drops (\d+)", last)
    if m:
        out["ring_drops"] += int(m.group(1))
    m = re.search(r"latency samples: (\d+) written, (\d+) dropped", text)
    if m:
        out["samples_written"] = int(m.group(1))
        out["samples_dropped"] = int(m.group(2))
    return out


def read_text(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def format_rate(mps):
    """1000 -> 1k, 300000 -> 300k, 1000000 -> 1M, 2500 -> 2.5k; three
    significant digits (999.8 -> 1k, 997600 -> 998k)."""
    mps = float("%.3g" % float(mps))
    for div, suffix in ((1e6, "M"), (1e3, "k")):
        if mps >= div:
            return ("%.1f" % (mps / div)).rstrip("0").rstrip(".") + suffix
    return "%g" % mps


def keep_up(meta, replay, daemon, max_loss_pct=DEFAULT_MAX_LOSS_PCT):
    """(kept_up, reasons, notes): reasons say why a run did not keep up;
    notes list losses small enough to leave the figures meaningful."""
    reasons, notes = [], []
    if daemon.get("frames") is None:
        # No final stats: it failed to start or was killed (its log says).
        reasons.append("wirebookd gave no final stats (see its wirebookd.log)")
    asked_pps = float(meta.get("pps", 0) or 0)
    mpp = float(meta.get("messages_per_packet", 1) or 1)
    rate = float(meta.get("rate_mps", 0) or 0)
    sent = replay.get("sent")
    if replay.get("failed"):
        reasons.append("replay failed %d packets" % replay["failed"])
    if asked_pps and replay.get("pps") is not None and replay["pps"] < MIN_RATE_SHARE * asked_pps:
        reasons.append("replay reached %s msg/s of %s" % (format_rate(replay["pps"] * mpp),
                                                         format_rate(rate or asked_pps * mpp)))
    base = sent or daemon.get("frames") or 0
    losses = [("kernel drops", daemon.get("kernel_drops", 0)),
              ("event-ring drops", daemon.get("ring_drops", 0)),
              ("latency samples dropped", daemon.get("samples_dropped", 0))]
    # Kernel drops are frames the socket never got; what else is missing
    # was lost before it (the veth's or the NIC's backlog).
    if sent and daemon.get("frames") is not None:
        missing = sent - daemon["frames"] - daemon.get("kernel_drops", 0)
        if missing > 0:
            losses.append(("packets lost before the socket", missing))
    for what, n in losses:
        if not n:
            continue
        text = "%s %d" % (what, n)
        if not base or n * 100.0 / base > max_loss_pct:
            reasons.append(text)
        else:
            notes.append(text)
    if reasons:
        reasons += notes
        notes = []
    return (not reasons, reasons, notes)


class Run:
    """One (rate, path) run: its facts, its verdict, its statistics."""

    def __init__(self, directory, max_loss_pct=DEFAULT_MAX_LOSS_PCT, keep_times=False):
        self.dir = directory
        self.meta = read_meta(os.path.join(directory, META))
        self.rate = float(self.meta.get("rate_mps", 0) or 0)
        self.path = self.meta.get("path", "default")
        self.clock = self.meta.get("clock", "unknown")
        self.replay = parse_tcpreplay(read_text(os.path.join(directory, "tcpreplay.log")))
        self.daemon = parse_wirebookd(read_text(os.path.join(directory, "wirebookd.log")))
        self.kept_up, self.reasons, self.notes = keep_up(self.meta, self.replay, self.daemon,
                                                         max_loss_pct)
        self.feeds = {}
        try:
            self.feeds = wl.load_feeds([directory], keep_times=keep_times)
        except (wl.LogError, OSError):
            if self.kept_up:
                self.kept_up = False
                self.reasons.append("no latency samples")

    def achieved_mps(self):
        mpp = float(self.meta.get("messages_per_packet", 1) or 1)
        if self.replay.get("pps") is None:
            return None
        return self.replay["pps"] * mpp

    def stage_stats(self):
        """stage key -> stats over every feed's packets."""
        return {key: wl.stats(self.stage_deltas_pooled(key)) for key, _l, _a, _b in wl.STAGES}

    def stage_deltas_pooled(self, key):
        merged = []
        for feed in sorted(self.feeds):
            merged.extend(self.feeds[feed].stage_deltas(key))
        return merged

    def end_to_end_by_second(self):
        return pooled_by_second(self.feeds.values())


def pooled_by_second(logs):
    """[(second since the first packet, stats)] of end to end, the logs
    pooled; needs logs read with keep_times. Seconds without a packet are
    left out."""
    pairs = []
    for log in logs:
        pairs.extend(zip(log.e2e_recv, log.stage_deltas("end_to_end")))
    if not pairs:
        return []
    t0 = min(t for t, _d in pairs)
    buckets = {}
    for t, d in pairs:
        buckets.setdefault((t - t0) // 1000000000, []).append(d)
    return [(s, wl.stats(buckets[s])) for s in sorted(buckets)]


def find_runs(paths):
    """Run directories (holding run.meta) under the given paths, ordered by
    rate, then path in the order the measurement ran them (its directory
    name order when unknown)."""
    dirs = []
    for p in paths:
        if os.path.isfile(os.path.join(p, META)):
            dirs.append(p)
        elif os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                d = os.path.join(p, name)
                if os.path.isfile(os.path.join(d, META)):
                    dirs.append(d)
        else:
            raise wl.LogError(f"{p}: no such directory")
    if not dirs:
        raise wl.LogError("no run directories (with run.meta) in " + ", ".join(paths))
    return dirs


def load_runs(paths, max_loss_pct=DEFAULT_MAX_LOSS_PCT, keep_times=False):
    runs = [Run(d, max_loss_pct, keep_times) for d in find_runs(paths)]
    order = {}
    for r in runs:
        order.setdefault(r.path, int(r.meta.get("path_order", len(order))))
    runs.sort(key=lambda r: (r.rate, order[r.path]))
    return runs
