"""A sweep's default executor: this process, or a local process pool when
that pays.

A pool costs time to start -- about 10-30 ms for two workers forked on
Linux, 0.3-0.5 s spawned (macOS, Windows) or from a fork server (Python
3.14 on Linux), which import numpy and pysched anew -- so the first calls
run here, for PROBE_S, and time a call: if the calls left would take less
here than a pool's start-up saves, they run here too, and a short sweep is
never slower than a loop.  Otherwise the pool starts, with batches already
sized by that measurement.
"""
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from ..policy import build
from .by_value import ByValue
from .batches import Batches, call_all, run

PROBE_S = 0.02  # how long the first calls run here to time a call
HERE_ROWS, HERE_S = 256, 0.1  # calls made here hand over their rows this often
STARTUP_S = {"fork": 0.05}  # a pool's start-up, by start method, measured with margin
STARTUP_OTHER_S = 0.5  # spawn, forkserver


def cpus():
    """The CPUs this process may use (not the machine's, under a limit)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _pays(seconds_per_call, left, workers):
    """Whether a pool of workers finishes `left` calls sooner than this
    process: start-up + t / workers < t, t the time here."""
    if workers == 1:
        return False
    # not get_start_method(): without allow_none it fixes the method for good,
    # and a later set_start_method() of the caller's would fail
    method = (multiprocessing.get_start_method(allow_none=True)
              or multiprocessing.get_all_start_methods()[0])  # the first is the default
    startup = STARTUP_S.get(method, STARTUP_OTHER_S)
    return seconds_per_call * left * (workers - 1) / workers > startup


def _here(fn, progress, first, end):
    """Make the calls first..end here, one at a time, handing their rows
    to progress every HERE_ROWS calls or HERE_S seconds (each hand-over
    costs as much as a short call), and, when one fails or Ctrl-C stops
    them, those finished before it."""
    at = first
    while at < end:
        calls = progress.calls[at:min(end, at + HERE_ROWS)]
        rows, since = [], time.perf_counter()
        try:
            for kwargs in calls:
                try:
                    got, _ = call_all(fn, [kwargs])
                except Exception as e:
                    progress.failed_in(e, at + len(rows), at + len(rows) + 1)
                    raise
                rows.extend(got)
                if time.perf_counter() - since >= HERE_S:
                    progress.finished(at, rows)
                    at, rows, since = at + len(rows), [], time.perf_counter()
        finally:
            if rows:
                progress.finished(at, rows)
                at += len(rows)


def run_local(fn, progress, todo, max_workers, chunksize):
    """Fill progress with the rows of the calls todo (a Todo) names, here
    or on a process pool of max_workers (default: the usable CPUs)."""
    workers = max_workers or cpus()
    start = time.perf_counter()
    done = 0
    while todo and (done == 0 or time.perf_counter() - start < PROBE_S):
        _here(fn, progress, *todo.take(1))
        done += 1
    seconds = time.perf_counter() - start
    if not _pays(seconds / max(done, 1), todo.left, workers):
        while todo:
            _here(fn, progress, *todo.take(todo.left))
        return
    # the workers know the C policies loaded here, however they start
    sources = build._current_sources()
    pool = ProcessPoolExecutor(max_workers=workers,
                               initializer=build._preload if sources else None,
                               initargs=(sources,))

    def shut_down():
        # what is queued is dropped, what runs ends: after a failure or
        # Ctrl-C, run() then keeps the rows of the batches that ended
        pool.shutdown(wait=True, cancel_futures=True)

    try:
        run(pool, ByValue(fn), progress, todo, Batches(workers, chunksize, seconds, done), shut_down)
    finally:
        shut_down()  # again after run()'s own: returns at once
