"""What the input fuzzers (tests/trace/fuzz_trace.py,
tests/workloads/fuzz_rtapp.py) share: the verdict on one input."""
import faulthandler
import resource
import time
import traceback
import warnings


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def judge(call, documented, limit_s, max_rss):
    """(outcome, None) when call() returns its outcome or raises one of the
    documented exceptions (its name is the outcome); (None, problem) for
    anything else: another exception, a RuntimeWarning (NumPy's overflow, a
    division by zero: a wrong result given quietly), longer than limit_s,
    or a peak RSS above max_rss MiB.  A hang inside C code holds the
    interpreter: only faulthandler's own thread can end it, at 3 x limit_s."""
    faulthandler.dump_traceback_later(limit_s * 3, exit=True)
    t0 = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            outcome = call()
    except documented as e:
        outcome = type(e).__name__
    except BaseException as e:  # noqa: BLE001 -- everything else is a finding
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, "".join(traceback.format_exception(e))
    finally:
        faulthandler.cancel_dump_traceback_later()
    took = time.monotonic() - t0
    if took > limit_s:
        return None, f"took {took:.1f} s (limit {limit_s} s)"
    if peak_rss_mib() > max_rss:
        return None, f"peak RSS {peak_rss_mib():.0f} MiB (limit {max_rss} MiB)"
    return outcome, None
