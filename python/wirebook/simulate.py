"""A recorded day replayed in lockstep with a Python strategy (wirebookd
--lockstep; docs/simulate.md): every event in order, the books and order
detail as they stood after it, and the fills of the virtual orders the
strategy places.

    import wirebook
    with wirebook.simulate("day.pcap") as sim:      # or a BinaryFILE
        for x in sim:
            if isinstance(x, wirebook.Fill):
                print("fill", x)
            elif x.kind == "ADD" and sim.orders.has_detail(sim.ticker(x.instrument)):
                lv = sim.orders.levels(sim.ticker(x.instrument), x.venue, "B")
                if lv and not sim.live(x.instrument):
                    sim.place(x.instrument, x.venue, "B", lv[0].price, 100)
    print(sim.fills)                                # every fill, as rows
    sim.write_fills("fills.csv"); sim.write_queue("queue.csv")
    sim.export("day.h5")                            # the day's tables and the run's, one HDF5 file

A reaction (place, cancel) takes effect at the end of the step of the
event it answers: before the next packet, or later with delay_ns. Two runs
of the same file give the same fills.
"""
import ctypes
import os
import shutil
import subprocess
import time
from collections import namedtuple

from . import Events, WirebookError, WB_ENOSHM

# The columns of examples/join_bid's --fills and --queue (docs/simulate.md),
# which wb-export --sim-fills/--sim-queue turn into the fills and queue tables.
Fill = namedtuple("Fill", "order virtual_id event symbol venue side price fill_qty filled_qty left_qty "
                  "fill_exch_ts fill_recv_ts fill_seq state")
FILL_COLUMNS = Fill._fields
QueueRow = namedtuple("QueueRow", "order event state shares_ahead orders_ahead shares_behind orders_behind "
                      "level_qty level_orders left_qty filled_qty")
QUEUE_COLUMNS = QueueRow._fields

_runs = 0
_PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d",
                b"\x0a\x0d\x0d\x0a")


def _tool(name, path, env):
    """The program to run: PATH given, else $ENV, else the source tree's build, else on PATH."""
    if path:
        return path
    if os.environ.get(env):
        return os.environ[env]
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    built = os.path.join(here, "build", name)
    return built if os.access(built, os.X_OK) else (shutil.which(name) or name)


def _price_text(price):
    """1e-8 dollars as join_bid writes them: "881.3", "12.0"."""
    a = abs(int(price))
    text = ("%s%d.%08d" % ("-" if price < 0 else "", a // 10**8, a % 10**8)).rstrip("0")
    return text + "0" if text.endswith(".") else text


def _write_csv(path, columns, rows):
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)


class Simulation:
    """A lockstep replay; see simulate(). Iterate it once; one thread."""

    def __init__(self, file, order_detail="all", gate="detail", delay_ns=0, jitter_ns=0, seed=0,
                 feeds=None, wirebookd=None, shm=None, args=(), raw=False, delay_file=None):
        from .orders import Orders
        with open(file, "rb") as f:
            is_pcap = f.read(4) in _PCAP_MAGICS
        global _runs
        _runs += 1
        self.shm = shm or "wb-simulate-%d-%d" % (os.getpid(), _runs)
        cmd = [_tool("wirebookd", wirebookd, "WIREBOOKD"), "--pcap" if is_pcap else "--itch-file", file, "--shm", self.shm,
               "--no-pin", "--exit-at-eof", "--order-detail", order_detail, "--lockstep", gate]
        if feeds:
            cmd += ["--feeds", feeds]
        if delay_ns or jitter_ns:
            cmd += ["--lockstep-delay", str(int(delay_ns)), "--lockstep-jitter", str(int(jitter_ns)),
                    "--lockstep-seed", str(int(seed))]
        if delay_file:
            cmd += ["--lockstep-delay-file", delay_file, "--lockstep-seed", str(int(seed))]
        self._proc = subprocess.Popen(cmd + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.file, self._feeds, self._raw = file, feeds, raw
        self.events = self.orders = None
        self._tickers = {}
        self._mine = []          # [vid, instrument, last VirtualOrder or None, done]
        self._by_sym = {}
        self.fills = []
        self.queue = []          # every change of an order's place in the queue (QueueRow)
        self.position = 0        # events seen
        deadline = time.time() + 30
        while self.events is None or self.orders is None:
            try:
                if self.events is None:
                    self.events = Events(name=self.shm, raw=raw)
                if self.orders is None:
                    self.orders = Orders(self.shm, raw=raw)
            except WirebookError as e:
                if e.code != WB_ENOSHM or time.time() > deadline or self._proc.poll() is not None:
                    self.close()
                    raise
                time.sleep(0.02)

    def ticker(self, instrument):
        """The ticker of a symbol index (an Event's instrument)."""
        t = self._tickers.get(instrument)
        if t is None:
            for i, name in enumerate(self.orders._book.symbols(), 1):
                self._tickers[i] = name
            t = self._tickers.get(instrument)
        return t

    def live(self, instrument):
        """The strategy's virtual orders on the symbol not done yet (ids)."""
        return [m[0] for m in self._by_sym.get(instrument, []) if not m[3]]

    def place(self, instrument, venue, side, price, qty):
        """A virtual order (Orders.virtual_place) whose fills the iteration yields: its id."""
        vid = self.orders.virtual_place(self.ticker(instrument), venue, side, price, qty)
        m = [vid, instrument, None, False, len(self._mine)]   # [4]: the run's order number
        self._mine.append(m)
        self._by_sym.setdefault(instrument, []).append(m)
        return vid

    def cancel(self, vid):
        self.orders.virtual_cancel(vid)

    def _follow(self, instrument):
        for m in self._by_sym.get(instrument, ()):
            if m[3]:
                continue
            try:
                v = self.orders.virtual_state(m[0])
            except WirebookError:
                continue  # not placed yet
            p = v.pos
            if m[2] is None or p.version != m[2].pos.version:
                self.queue.append(QueueRow(m[4], self.position, p.state, p.shares_ahead, p.orders_ahead,
                                           p.shares_behind, p.orders_behind, p.level_qty, p.level_orders,
                                           p.qty, p.filled_qty))
            if m[2] is None or v.fills != m[2].fills:
                if v.fills:
                    f = Fill(m[4], m[0], self.position, self.ticker(instrument), p.venue, p.side, p.price,
                             v.last_fill_qty, p.filled_qty, p.qty, v.fill_exch_ts, v.fill_recv_ts,
                             v.fill_seq, p.state)
                    self.fills.append(f)
                    yield f
            m[2] = v
            if v.pos.state not in ("resting", "partly-filled"):
                m[3] = True

    def __iter__(self):
        """Every event (wirebook.Event), each followed by the fills it brought (wirebook.Fill)."""
        ev = self.events
        while not ev.ended:
            # Handed back (the replay's ack) only once the strategy has
            # answered every event of the batch: not as Events.read does.
            n = ev._peek(len(ev._batch), 100)
            for i in range(n):
                e = ev._event(ev._batch[i].contents)
                self.position += 1
                yield e
                if e.instrument in self._by_sym:
                    yield from self._follow(e.instrument)
            ev._lib.wb_events_release(ev._h)
        for sym in list(self._by_sym):
            yield from self._follow(sym)

    def write_fills(self, path):
        """The fills as CSV (FILL_COLUMNS), as examples/join_bid --fills writes them."""
        scale = 1 if self._raw else 10**8
        _write_csv(path, FILL_COLUMNS,
                   (f._replace(price=_price_text(round(f.price * scale))) for f in self.fills))

    def write_queue(self, path):
        """The queue positions as CSV (QUEUE_COLUMNS), as examples/join_bid --queue writes them."""
        _write_csv(path, QUEUE_COLUMNS, self.queue)

    def export(self, output, format="hdf5", wb_export=None, args=()):
        """The replayed day's tables and this run's fills and queue tables in
        one export (wb-export FILE OUTPUT --sim-fills --sim-queue: an HDF5
        file, or a CSV directory); wirebook.read(output, table="fills")
        reads them back. Call it after the iteration."""
        import tempfile
        with tempfile.TemporaryDirectory(prefix="wb-simulate.") as tmp:
            fills, queue = os.path.join(tmp, "fills.csv"), os.path.join(tmp, "queue.csv")
            self.write_fills(fills)
            self.write_queue(queue)
            with open(self.file, "rb") as f:
                is_pcap = f.read(4) in _PCAP_MAGICS
            cmd = [_tool("wb-export", wb_export, "WB_EXPORT"), "--quiet", "--format", format, "--sim-fills", fills, "--sim-queue", queue]
            if self._feeds:
                cmd += ["--feeds", self._feeds]
            cmd += ([] if is_pcap else ["--itch-file"]) + list(args) + [self.file, output]
            r = subprocess.run(cmd, stderr=subprocess.PIPE, universal_newlines=True)
            if r.returncode != 0:
                raise RuntimeError("%s exited %d: %s" % (cmd[0], r.returncode, r.stderr.strip()))

    def close(self):
        if self.events is not None:
            self.events.close()      # the replay runs free to its end
            self.events = None
        if self.orders is not None:
            self.orders.close()
            self.orders = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._proc.terminate()
                self._proc.wait()
            self.returncode = self._proc.returncode
            self._proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def simulate(file, order_detail="all", gate="detail", delay_ns=0, jitter_ns=0, seed=0, feeds=None,
             wirebookd=None, shm=None, args=(), raw=False, delay_file=None):
    """Replay FILE (a pcap, or a Nasdaq BinaryFILE) with wirebookd --lockstep
    and step with it: iterate the Simulation for every event and the fills
    of the orders placed with .place(). order_detail: the symbols with
    detail (all, none, or tickers); gate: detail or all (the packets the
    replay waits after); delay_ns/jitter_ns/seed: the latency model, or
    delay_file/seed: a sampled one (a file of delays in ns, one a line)."""
    return Simulation(file, order_detail, gate, delay_ns, jitter_ns, seed, feeds, wirebookd, shm, args, raw,
                      delay_file)
