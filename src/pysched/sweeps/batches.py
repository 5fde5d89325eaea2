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

A sweep that stops -- a call raises, the executor breaks (a worker killed),
Ctrl-C -- keeps the rows of every call that finished: those of the batches
done, and those a failing batch finished before its failing call, which
travel back on the exception.
"""
import collections
import math
import os
import queue
import time
from concurrent.futures import BrokenExecutor

from .table import row

TARGET_S = 0.05  # a batch's computing time: its overhead is then below 1 %
WAIT_S = 0.25  # the caller's waits are this short: Windows delivers Ctrl-C only between them
# call_all's mark on the exception of a call: (the call's position in its batch,
# the rows the batch finished before it)
FAILED_AT = "_pysched_sweep_failed_at"


class Progress:
    """A sweep's calls and where the rows of those finished go: to a
    writer (sweeps.store), or into `rows`, in grid order (None: not yet;
    the list grows as rows arrive, so a sweep starts at once whatever its
    size); after a failure, `failed` holds the positions of the calls that
    failed, or that were unfinished on an executor that broke."""

    def __init__(self, calls, bar, writer=None):
        self.calls = calls
        self.rows = []
        self.failed = []
        self.bar = bar
        self.writer = writer
        self.count = 0  # rows finished

    def finished(self, first, rows):
        if self.writer is not None:
            self.writer.write(first, rows)
        else:
            end = first + len(rows)
            if end > len(self.rows):
                self.rows.extend([None] * (end - len(self.rows)))
            self.rows[first:end] = rows
        self.count += len(rows)
        self.bar.update(len(rows))


    def failed_in(self, exc, first, end):
        """The batch of calls first..end raised exc: keep the rows it
        finished before the call that raised, and name that call -- or the
        whole batch when exc has no mark of call_all's (an executor's own
        exception)."""
        mark = vars(exc).pop(FAILED_AT, None)
        if isinstance(mark, tuple) and 0 <= mark[0] < end - first:
            at, rows = mark
            self.finished(first, rows)
            self.failed = [first + at]
        else:
            self.failed = list(range(first, end))


class Todo:
    """The positions of the calls still to make, as intervals [start, end)
    taken from the front: a batch is a run of consecutive positions."""

    def __init__(self, intervals):
        self.intervals = collections.deque((a, b) for a, b in intervals if b > a)
        self.left = sum(b - a for a, b in self.intervals)

    def __bool__(self):
        return self.left > 0

    def take(self, k):
        """The next run of at most k positions (first, end)."""
        a, b = self.intervals[0]
        end = min(b, a + max(1, k))
        if end == b:
            self.intervals.popleft()
        else:
            self.intervals[0] = (end, b)
        self.left -= end - a
        return a, end


def _mark(e, rows):
    # in the exception's __dict__, which pickles with it: the mark reaches
    # the caller from a process pool or a cluster as well
    vars(e)[FAILED_AT] = (len(rows), rows)


def call_all(fn, calls):
    """Worker side: the row of every call (checked here, so that a function
    that returns no dict fails with the first batch), and the seconds the
    calls took (the unpickling of fn and calls excluded: that is the
    transport's).  A call that fails raises its exception marked with the
    call's position and the rows finished before it."""
    start = time.perf_counter()
    rows = []
    for kwargs in calls:
        try:
            out = fn(**kwargs)
        except Exception as e:
            if hasattr(e, "add_note"):  # Python >= 3.11: say where, the exception kept as it is
                e.add_note(f"in pysched.sweep, calling the function at {kwargs}")
            _mark(e, rows)
            raise
        try:
            rows.append(row(kwargs, out))
        except Exception as e:
            _mark(e, rows)
            raise
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


def run(executor, fn, progress, todo, batches, settle=None):
    """Fill progress with the rows of the calls todo (a Todo) names, on
    executor: at most two batches per worker submitted at a time, so the
    calls in flight are bounded whatever the grid's size.
    On any failure or interruption: cancel the batches not yet running,
    call settle() if given (it waits for the running ones), keep the rows of
    every batch finished by then, name in progress the calls that failed,
    and re-raise."""
    calls = progress.calls
    done = queue.SimpleQueue()
    pending = {}  # future -> (first, end) of its calls
    window = 2 * batches.workers
    waited = None  # the future whose result is read: if it raises, it stays pending
    try:
        while todo or pending:
            while todo and len(pending) < window:
                first, end = todo.take(batches.size(todo.left))
                f = executor.submit(call_all, fn, calls[first:end])
                pending[f] = (first, end)
                f.add_done_callback(done.put)
            while True:
                try:
                    waited = done.get(timeout=WAIT_S)
                    break
                except queue.Empty:
                    pass
            got, seconds = waited.result()
            first, end = pending.pop(waited)
            progress.finished(first, got)
            batches.measured(end - first, seconds)
    except BaseException as e:
        for f in pending:
            f.cancel()
        if settle is not None:
            settle()
        _salvage(progress, pending, waited, e)
        raise


def _salvage(progress, pending, failing, exc):
    """After exc stopped the sweep: keep the rows of the batches finished
    meanwhile, and name the calls that failed -- those of the batch whose
    future `failing` raised exc, or, when the executor broke (every batch
    on it fails), those of every batch that was on it."""
    broken = isinstance(exc, BrokenExecutor)
    on_it = []
    for f, (first, end) in sorted(pending.items(), key=lambda item: item[1]):
        if f.cancelled():
            continue  # it never ran
        if f.done() and f.exception() is None:
            progress.finished(first, f.result()[0])
        elif broken:
            on_it.extend(range(first, end))
        elif f is failing and isinstance(exc, Exception):
            progress.failed_in(exc, first, end)
    if broken:
        progress.failed = on_it
