"""What the input fuzzers (tests/trace/fuzz_trace.py,
tests/workloads/fuzz_rtapp.py) share: the command line, the verdict on one
input and the summary of a run."""
import argparse
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


def arguments(doc, replay_help):
    """The fuzzer's command line, parsed; doc is its module docstring."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=None, help="(default: from the clock)")
    ap.add_argument("--limit", type=float, default=10.0, help="seconds an input may take")
    ap.add_argument("--max-rss", type=float, default=2048, help="peak MiB the process may reach")
    ap.add_argument("--out", default=".", help="where findings and the current input go")
    ap.add_argument("--replay", help=replay_help)
    ap.add_argument("--replay-seed", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true")
    return ap.parse_args()


def report(n, outcomes, findings):
    """Print a run's summary; the exit status: 1 if anything was found."""
    print(f"{n} inputs, {len(findings)} findings; outcomes: "
          f"{dict(sorted(outcomes.items(), key=lambda kv: -kv[1]))}; peak RSS "
          f"{peak_rss_mib():.0f} MiB")
    return 1 if findings else 0
