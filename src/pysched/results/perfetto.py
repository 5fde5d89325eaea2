"""A run as a Perfetto trace (``sim.export_perfetto``), for ui.perfetto.dev.

Written with a small TrackEvent encoder, no dependency: a Perfetto trace
file is a ``Trace`` message, ``repeated TracePacket packet = 1``, and each
packet here holds a TrackDescriptor or a TrackEvent.  Field numbers are
Perfetto's (google/perfetto, protos/perfetto/trace/):

- trace_packet.proto: timestamp 8, track_event 11, trusted_packet_sequence_id
  10, sequence_flags 13, track_descriptor 60;
- track_descriptor.proto: uuid 1, name 2, process 3, thread 4, parent_uuid
  5, counter 8; process_descriptor.proto: pid 1, process_name 6;
  thread_descriptor.proto: pid 1, tid 2, thread_name 5;
  counter_descriptor.proto: unit 3 (UNIT_COUNT 2);
- track_event.proto: type 9 (SLICE_BEGIN 1, SLICE_END 2, INSTANT 3,
  COUNTER 4), track_uuid 11, name 23, counter_value 30, flow_ids 47 and
  terminating_flow_ids 48 (fixed64).

What is drawn:

- a track per CPU, "CPU k", with a slice per task while it runs there;
- a process per task (its pid and name) holding a thread track of its
  states -- running, runnable, sleeping (interruptible), blocked
  (uninterruptible) -- as consecutive slices, and counter tracks;
- a flow from each waker to the task it woke (an instant "wakes NAME" on
  the waker's track, ending at the wakee's runnable slice) and from each
  parent to its forked child; a wakeup from interrupt context has none;
- counters: prio, from the event log, at every change; with
  record="series", also the policy's headline fields (sleep_avg, run_avg,
  counter ...) and time_slice, at every sample where they change.
"""
import struct

import numpy as np

from .._core import StateError
from ..codes import EVENT_KINDS, TASK_STATES

# the package's own: no name here is part of the public API
__all__ = []

_SWITCH, _WAKEUP, _FORK, _EXIT, _PRIO = (EVENT_KINDS.index(k) for k in
                                         ("switch", "wakeup", "fork", "exit", "prio"))
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
UNIT_COUNT = 2
SEQUENCE = 1                      # every packet is on one sequence
SEQ_INCREMENTAL_STATE_CLEARED = 1

# a task's state after it leaves a CPU, by its task->state code
STATE_AFTER = {"running": "runnable", "interruptible": "sleeping",
               "uninterruptible": "blocked", "zombie": None, "dead": None}
_AFTER_CODE = {code: STATE_AFTER[name] for code, name in TASK_STATES.items()}

# track uuids: CPU k is 1 + k; task pid p owns TASK_BASE + p * TASK_STRIDE
# (its process) and the uuids after it (its states, then its counters)
TASK_BASE, TASK_STRIDE = 1 << 20, 32


# ---------------------------------------------------------------- protobuf

def _varint(n):
    n &= (1 << 64) - 1            # negative int64s as their two's complement
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field, n):
    return _varint(field << 3) + _varint(n)


def _bytes(field, data):
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _str(field, s):
    return _bytes(field, s.encode())


def _fixed64(field, n):
    return _varint(field << 3 | 1) + struct.pack("<Q", n)


def _packet(body, ts=None, first=False):
    p = b"" if ts is None else _int(8, ts)
    p += body + _int(10, SEQUENCE)
    if first:
        p += _int(13, SEQ_INCREMENTAL_STATE_CLEARED)
    return _bytes(1, p)


def _track(uuid, name=None, parent=None, process=None, thread=None, counter=False):
    d = _int(1, uuid)
    if name is not None:
        d += _str(2, name)
    if process is not None:
        d += _bytes(3, _int(1, process[0]) + _str(6, process[1]))
    if thread is not None:
        d += _bytes(4, _int(1, thread[0]) + _int(2, thread[0]) + _str(5, thread[1]))
    if parent is not None:
        d += _int(5, parent)
    if counter:
        d += _bytes(8, _int(3, UNIT_COUNT))
    return _bytes(60, d)


def _event(kind, track, name=None, value=None, flows=(), ends=()):
    e = _int(9, kind) + _int(11, track)
    if name is not None:
        e += _str(23, name)
    if value is not None:
        e += _int(30, value)
    for f in flows:
        e += _fixed64(47, f)
    for f in ends:
        e += _fixed64(48, f)
    return _bytes(11, e)


# ---------------------------------------------------------------- the run

class _Writer:
    """Collects (time, packet) in the order the run made them: sorted by
    time, stably, each track's events stay in their order (a slice that
    begins and ends at one instant ends after it began)."""

    def __init__(self):
        self.items = []
        self.open = {}            # track -> slices begun and not ended

    def begin(self, t, track, name, ends=()):
        self.items.append((t, _event(SLICE_BEGIN, track, name, ends=ends)))
        self.open[track] = self.open.get(track, 0) + 1

    def end(self, t, track):
        # a log that dropped its oldest records (on_full="overwrite") may
        # end what it never began: nothing to end
        if self.open.get(track, 0):
            self.items.append((t, _event(SLICE_END, track)))
            self.open[track] -= 1

    def instant(self, t, track, name, flows):
        self.items.append((t, _event(INSTANT, track, name, flows=flows)))

    def counter(self, t, track, value):
        self.items.append((t, _event(COUNTER, track, value=int(value))))


def write(sim, path):
    """Write sim's run to `path` as a Perfetto trace; see
    Simulator.export_perfetto."""
    if sim.record == "counters":
        raise StateError("export_perfetto needs the event log, which this run did not keep: "
                         "create the Simulator with record='events' (or 'series' for the "
                         "policy's fields as counters) and run it again")
    ev = sim.events()
    st = sim.stats()
    now = sim.now_ns
    names = {int(p): str(n) for p, n in zip(st["pid"], st["name"])}
    series_fields = []
    if sim.record == "series":
        wanted = list(dict.fromkeys(list(sim.headline) + ["time_slice"]))
        series_fields = [f for f in wanted if f in sim._series_fields]
    counters = ["prio"] + series_fields

    def name(pid):
        return names.get(pid, f"task{pid}")

    def proc(pid):
        return TASK_BASE + pid * TASK_STRIDE

    def states(pid):
        return proc(pid) + 1

    def counter_track(pid, field):
        return proc(pid) + 2 + counters.index(field)

    w = _Writer()
    state = {}                    # pid -> its open state slice's name
    on_cpu = {}                   # cpu -> pid whose CPU slice is open
    prio = {}
    flow = 0

    def become(t, pid, new, ends=()):
        if state.get(pid) is not None:
            w.end(t, states(pid))
        state[pid] = new
        if new is not None:
            w.begin(t, states(pid), new, ends)

    def set_prio(t, pid, value):
        if pid > 0 and prio.get(pid) != value:
            prio[pid] = value
            w.counter(t, counter_track(pid, "prio"), value)

    start0 = int(ev["time_ns"][0]) if len(ev) else now
    for p, s, pp in zip(st["pid"].tolist(), st["start_ns"].tolist(), st["ppid"].tolist()):
        if pp == 0 and s >= start0:
            become(s, p, "runnable")
    for t, cpu, kind, pid, other, pr, value in zip(
            ev["time_ns"].tolist(), ev["cpu"].tolist(), ev["kind"].tolist(),
            ev["pid"].tolist(), ev["other"].tolist(), ev["prio"].tolist(),
            ev["value"].tolist()):
        if kind == _SWITCH:
            if on_cpu.get(cpu):
                w.end(t, 1 + cpu)
            if other > 0:
                become(t, other, _AFTER_CODE.get(value))
            on_cpu[cpu] = pid
            if pid > 0:
                become(t, pid, "running")
                w.begin(t, 1 + cpu, f"{name(pid)} ({pid})")
                set_prio(t, pid, pr)
        elif kind == _WAKEUP:
            if other > 0:
                flow += 1
                w.instant(t, states(other), f"wakes {name(pid)} ({pid})", (flow,))
                become(t, pid, "runnable", (flow,))
            else:
                become(t, pid, "runnable")
            set_prio(t, pid, pr)
        elif kind == _FORK:
            flow += 1
            w.instant(t, states(other), f"forks {name(pid)} ({pid})", (flow,))
            become(t, pid, "runnable", (flow,))
            set_prio(t, pid, pr)
        elif kind == _PRIO:
            set_prio(t, pid, pr)
    for cpu, pid in on_cpu.items():
        if pid:
            w.end(now, 1 + cpu)
    for pid in list(state):
        become(now, pid, None)

    sampled = set()
    if series_fields:
        times = sim.series_times()
        for field in series_fields:
            values = sim.series(field)
            for col in range(values.shape[1]):
                x = values[:, col]
                ok = ~np.isnan(x)
                if not ok.any():
                    continue
                t_ok, x_ok = times[ok], x[ok]
                changed = np.concatenate(([True], x_ok[1:] != x_ok[:-1]))
                for t, v in zip(t_ok[changed].tolist(), x_ok[changed].tolist()):
                    w.counter(t, counter_track(col + 1, field), v)
                sampled.add(col + 1)

    pids = sorted(set(state) | set(prio) | sampled)
    with open(path, "wb") as out:
        out.write(_packet(_track(1 + 0, "CPU 0"), first=True))
        for cpu in range(1, sim.cpus):
            out.write(_packet(_track(1 + cpu, f"CPU {cpu}")))
        for pid in pids:
            out.write(_packet(_track(proc(pid), process=(pid, name(pid)))))
            out.write(_packet(_track(states(pid), "state", parent=proc(pid),
                                     thread=(pid, name(pid)))))
            for field in counters:
                out.write(_packet(_track(counter_track(pid, field), field, parent=proc(pid),
                                         counter=True)))
        w.items.sort(key=lambda item: item[0])      # stable
        for t, body in w.items:
            out.write(_packet(body, ts=t))
