"""Running a sweep's calls on an executor, in batches.

One task per call costs more than a short call: the pickling, the queue and
the wake-up of a process pool take a fraction of a millisecond, as long as
a simulated second of two CPU hogs.  So calls travel in batches, sized by
how long a call takes (measured by the workers): a batch computes about
TARGET_S, or less near the end -- at most the calls left over twice the
workers, so that the last batches are small and every worker finishes at
about the same time (guided self-scheduling, as OpenMP's schedule(guided)).

At most two batches per worker are submitted at any time: one running, one
waiting, so a worker never idles while the next batch is sized, the sizes
follow the measurements, and an interrupted sweep (Ctrl-C) or a failed call
has few batches to cancel.  Only ``submit`` is used, with finite lists as
arguments, so any concurrent.futures executor serves (Dask's
``client.get_executor()`` takes len() of every argument of its ``map``).
"""
import math
import os
import queue
import time

from ._sweep_table import row

TARGET_S = 0.05  # a batch's computing time: its overhead is then below 1 %
WAIT_S = 0.25  # the caller's waits are this short: Windows delivers Ctrl-C only between them


def call_all(fn, calls):
    """Worker side: the row of every call (checked here, so that a function
    that returns no dict fails with the first batch), and the seconds the
    calls took (the unpickling of fn and calls excluded: that is the
    transport's)."""
    start = time.perf_counter()
    rows = []
    for kwargs in calls:
        try:
            out = fn(**kwargs)
        except Exception as e:
            if hasattr(e, "add_note"):  # Python >= 3.11: say where, the exception kept as it is
                e.add_note(f"in pysched.sweep, calling the function at {kwargs}")
            raise
        rows.append(row(kwargs, out))
    return rows, time.perf_counter() - start


def workers_of(executor):
    """How many calls the executor runs at once, as far as it says: the
    pools of concurrent.futures (and loky) keep it in _max_workers, Dask's
    executor has a client that counts its workers' threads; else the CPUs."""
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    client = getattr(executor, "_client", None)
    if client is not None and hasattr(client, "nthreads"):
        try:
            n = sum(client.nthreads().values())
        except Exception:  # a client that cannot answer now: fall back on the CPUs
            n = 0
        if n > 0:
            return n
    return os.cpu_count() or 1


class Batches:
    """Sizes batches from the measured time of a call."""

    def __init__(self, workers, chunksize, seconds=0.0, calls=0):
        self.workers = workers
        self.chunksize = chunksize
        self.seconds = seconds  # the calls measured so far and what they took
        self.calls = calls

    def measured(self, calls, seconds):
        self.calls += calls
        self.seconds += seconds

    def size(self, left):
        if self.chunksize is not None:
            return min(self.chunksize, left)
        guided = math.ceil(left / (2 * self.workers))
        if self.calls == 0:
            return 1  # nothing measured yet: one call shows how long a call takes
        if self.seconds <= 0:
            return guided
        return max(1, min(guided, int(TARGET_S * self.calls / self.seconds)))


def run(executor, fn, calls, rows, start, batches, bar):
    """Fill rows[start:] with the rows of calls[start:], on executor;
    on any failure or interruption, cancel the batches not yet running and
    re-raise."""
    done = queue.SimpleQueue()
    pending = {}  # future -> (first, end) of its calls
    nxt = start
    window = 2 * batches.workers
    try:
        while nxt < len(calls) or pending:
            while nxt < len(calls) and len(pending) < window:
                end = nxt + batches.size(len(calls) - nxt)
                f = executor.submit(call_all, fn, calls[nxt:end])
                pending[f] = (nxt, end)
                f.add_done_callback(done.put)
                nxt = end
            while True:
                try:
                    f = done.get(timeout=WAIT_S)
                    break
                except queue.Empty:
                    pass
            first, end = pending.pop(f)
            got, seconds = f.result()
            rows[first:end] = got
            batches.measured(end - first, seconds)
            bar.update(end - first)
    except BaseException:
        for f in pending:
            f.cancel()
        raise
