"""The trace fuzzer: damaged scheduler captures fed to pysched.trace.load,
and what loads replayed for a moment.

Each input is a window of a real capture (tests/data/real_sched_trace.txt.gz,
tests/data/realkernel/perf_script_sleeper.txt), of trace-cmd's text or of a
pysched export, damaged a few times over: bytes flipped, lines cut, dropped,
repeated or swapped, numbers replaced by huge, negative or non-numeric ones,
CPUs up to 5,000 (and beyond), comms holding the fields' own words, runs of
blanks, an overlong line, the export's header edited, the whole gzipped and
the gzip stream damaged.  trace.load reads it (with and without the
intervals); what loads becomes a workload (trace.to_workload, now and then
on the trace's own CPUs) that runs a few hundred simulated milliseconds
under a random preset, and trace.compare reads the run.

Allowed outcomes: success, or the documented errors (TraceFormatError,
ValueError, TypeError, KeyError, pysched.Error).  Anything else -- another
exception (a RuntimeWarning too: NumPy's overflow), an input taking more
than --limit seconds (10), the process's peak memory growing past
--max-rss MiB (2,048), or a crash -- is a finding: the input is kept in a
file, the reproducer printed, and the exit status is 1.  The input being
tried is always in <out>/fuzz_trace_current (.txt or .txt.gz), so that a
crash leaves it behind.

    python tests/trace/fuzz_trace.py --minutes 10 --seed 1
    python tests/trace/fuzz_trace.py --replay FILE     # one input, with its traceback

tests/trace/test_trace.py runs a few hundred inputs of it in every test run."""
import faulthandler
import gzip
import os
import random
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))
import pysched as ps  # noqa: E402
from fuzzing import arguments, judge, peak_rss_mib, report  # noqa: E402
from pysched.trace import replay as _replay
from pysched import trace as tr

# tests/data, beside this script's folder
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
DOCUMENTED = (tr.TraceFormatError, ValueError, TypeError, KeyError, ps.Error)

TRACE_CMD_TEXT = """\
cpus=2
           <idle>-0     [000]   100.000100: sched_switch:         <idle>:0 [120] R ==> bash:200 [120]
            bash-200    [000]   100.000300: sched_wakeup:         kworker/0:1:31 [120] success=1 CPU:000
            bash-200    [000]   100.000400: sched_switch:         bash:200 [120] S ==> kworker/0:1:31 [120]
     kworker/0:1-31     [000] d..2.   100.000900: sched_switch: prev_comm=kworker/0:1 prev_pid=31 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120
            bash-200    [001]   100.001000: sched_process_fork:   comm=bash pid=200 child_comm=bash child_pid=201
            bash-200    [001]   100.001100: sched_wakeup_new:     comm=bash pid=201 prio=120 target_cpu=001
            bash-201    [001]   100.001200: sched_process_exit:   comm=bash pid=201 prio=120
"""

# what a number or a CPU becomes
NUMBERS = ["0", "-1", "-0", "2147483647", "2147483648", "-2147483649", "4095", "4096", "5000",
           "9223372036854775807", "9223372036854775808", "18446744073709551616",
           "99999999999", "1" + "0" * 30, "9" * 4301, "9" * 5000, "00000000000000000000001",
           "x", "", "1.5", "0x10", " ", "-", "1e9", "١٢٣"]
WORDS = [" ==> ", " prev_pid=1 ", "next_comm=", " pid=5 ", " child_pid=", " target_cpu=003",
         " [001] ", "-1 ", " 1/1 ", ": sched:sched_switch: ", "comm=", " [ns]", "\x00", "\r",
         "\t", "é", "\u2028", "\ufeff", "(", ")", "d..2.", "swapper/0"]


def seeds():
    """The inputs mutated: (name, text)."""
    out = []
    with gzip.open(os.path.join(DATA, "real_sched_trace.txt.gz"), "rt", encoding="utf-8") as f:
        out.append(("real_sched_trace", f.read()))
    with open(os.path.join(DATA, "realkernel", "perf_script_sleeper.txt"), encoding="utf-8") as f:
        out.append(("perf_script_sleeper", f.read()))
    out.append(("trace-cmd", TRACE_CMD_TEXT))
    sim = ps.Simulator("linux-2.5.65", cpus=3, record="events", seed=1)
    cc = ps.Program().run(ms=3).post("done").exit()
    sim.spawn(ps.Program().fork(cc, n=2).loop(4).wait("done").fork(cc).end(), name="make")
    sim.spawn(ps.programs.cpu_hog(), name="hog", nice=5)
    sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=4).end(), name="tick")
    sim.spawn(ps.programs.cpu_hog(), name="rt", policy="fifo", rt_priority=5, cpus_allowed=[2])
    sim.run(seconds=0.2)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "export.txt")
        sim.export_ftrace(path)
        with open(path, encoding="utf-8") as f:
            out.append(("export", f.read()))
    return out


class Mutator:
    def __init__(self, r):
        self.r = r

    def window(self, text):
        """A run of whole lines of text (the header lines kept, now and then)."""
        r = self.r
        lines = text.splitlines(keepends=True)
        if len(lines) < 50 or r.random() < 0.1:
            return lines
        n = r.choice([20, 100, 400, 2000])
        start = r.randrange(max(1, len(lines) - n))
        head = [ln for ln in lines[:40] if ln.startswith(("#", "cpus="))]
        return (head if r.random() < 0.5 else []) + lines[start:start + n]

    def line_at(self, lines):
        return self.r.randrange(len(lines)) if lines else None

    def mutate(self, lines):
        r = self.r
        k = self.line_at(lines)
        if k is None:
            return ["x\n"]
        kind = r.randrange(12)
        line = lines[k]
        if kind == 0:      # a number replaced
            nums = list(re.finditer(r"-?\d+", line))
            if nums:
                m = r.choice(nums)
                lines[k] = line[:m.start()] + r.choice(NUMBERS) + line[m.end():]
        elif kind == 1:    # a CPU replaced, everywhere or on one line
            cpu = r.choice([r.randrange(64), r.randrange(64, 5000), r.choice(NUMBERS)])
            if r.random() < 0.5:
                lines[k] = re.sub(r"\[\d+\]", f"[{cpu}]", line, count=1)
            else:
                lines[k] = re.sub(r"(target_cpu|orig_cpu|dest_cpu|CPU)[=:]\d+",
                                  lambda m: f"{m[1]}{'=' if m[1] != 'CPU' else ':'}{cpu}", line)
        elif kind == 2:    # bytes flipped
            b = bytearray(line.encode("utf-8", "surrogatepass"))
            for _ in range(r.randint(1, 4)):
                if b:
                    b[r.randrange(len(b))] = r.randrange(256)
            lines[k] = b.decode("utf-8", "replace")
        elif kind == 3:    # a line cut (its newline too, sometimes)
            lines[k] = line[:r.randrange(len(line) + 1)] + ("\n" if r.random() < 0.7 else "")
        elif kind == 4:    # lines dropped, repeated or swapped
            j = r.randrange(len(lines))
            op = r.randrange(3)
            if op == 0:
                del lines[k]
            elif op == 1:
                lines.insert(j, line)
            else:
                lines[k], lines[j] = lines[j], lines[k]
        elif kind == 5:    # a word of the fields put in a comm or anywhere
            pos = r.randrange(len(line) + 1)
            word = r.choice(WORDS) * r.choice([1, 1, 3, 50])
            lines[k] = line[:pos] + word + line[pos:]
        elif kind == 6:    # a run of blanks, or of one character
            pos = r.randrange(len(line) + 1)
            lines[k] = line[:pos] + r.choice(" \t-1[:") * r.choice([100, 1000, 20_000]) + line[pos:]
        elif kind == 7:    # a line repeating a header or a field many times
            unit = r.choice([" 1/1 [001] 1.1: e:", "-1 [0] 1.1 ", " prev_pid=1 prev_prio=1 "
                             "prev_state=R ==> next_comm=", " pid=1 child_comm=", ":1 [2] R ==> "])
            lines[k] = line.rstrip("\n") + unit * r.choice([10, 1000, 10_000]) + "\n"
        elif kind == 8:    # an overlong line
            lines.insert(k, "x" * r.choice([tr.MAX_LINE - 1, tr.MAX_LINE, tr.MAX_LINE + 1]) +
                         "\n")
        elif kind == 9:    # times: backwards, equal, far
            m = re.search(r"(\d+)\.(\d+):", line)
            if m:
                new = r.choice(["0.000000001", f"{r.randrange(10**12)}.{r.randrange(10**9):09d}",
                                "9223372036.854775807", "9223372036.854775808", "1.0000000001"])
                lines[k] = line[:m.start()] + new + ":" + line[m.end():]
        elif kind == 10:   # the export's header edited
            heads = [i for i, ln in enumerate(lines) if ln.startswith("# pysched")]
            if heads:
                i = r.choice(heads)
                field = r.choice(["pid", "ppid", "nice", "policy", "rt_priority",
                                  "cpus_allowed", "end_ns", "comm"])
                value = r.choice(NUMBERS + ["fifo", "batch", f"{1 << r.randrange(5000):#x}",
                                            "0x", "0xg"])
                lines[i] = re.sub(rf"\b{field}=\S*", f"{field}={value}", lines[i], count=1)
        else:              # an event name changed
            lines[k] = re.sub(r"sched_\w+", r.choice(["sched_switch", "sched_waking",
                                                      "sched_wakeup_new", "sched_process_fork",
                                                      "sched_process_exit", "sched_migrate_task",
                                                      "sched_stat_runtime", "sched_other"]),
                              line, count=1)
        return lines

    def gzip_damage(self, blob):
        r = self.r
        b = bytearray(blob)
        kind = r.randrange(5)
        if kind == 0 and len(b) > 12:
            for _ in range(r.randint(1, 8)):
                b[r.randrange(10, len(b))] = r.randrange(256)
        elif kind == 1:
            del b[r.randrange(len(b)):]
        elif kind == 2:
            b += bytes(r.randrange(256) for _ in range(r.randint(1, 64)))
        elif kind == 3:
            b += gzip.compress(b"garbage\n")
        elif len(b) > 10:
            b[10] = r.randrange(256)
        return bytes(b)

    def input(self, seeds):
        """(bytes, is_gzip, what): a damaged input."""
        r = self.r
        name, text = r.choice(seeds)
        lines = self.window(text)
        for _ in range(r.choice([0, 1, 1, 2, 3, 6])):
            lines = self.mutate(lines)
        data = "".join(lines).encode("utf-8", "surrogatepass")
        if r.random() < 0.2:
            data = gzip.compress(data, compresslevel=1)
            if r.random() < 0.6:
                data = self.gzip_damage(data)
            return data, True, name
        return data, False, name


def exercise(path, r):
    """Load the file at path and replay what loads; raises what they raise."""
    t = tr.load(path, intervals=r.random() < 0.85)
    len(t.tasks), t.duration_ns, repr(t)
    if t.bursts is None or not len(t.tasks):
        return "loaded"
    cpus = None if r.random() < 0.3 else r.randint(1, 8)
    tids = t.tasks["tid"].tolist()
    tasks = None if r.random() < 0.5 else r.sample(tids, min(len(tids), r.randint(1, 8)))
    w = t.to_workload(cpus=cpus, tasks=tasks, wake_edges=r.choice(_replay.WAKE_EDGES),
                      demand=r.choice(["recorded", "open"]))
    sim = w.run(r.choice(ps.presets()), seconds=r.choice([0.05, 0.2, 0.4]))
    tr.compare(t, sim)
    return "replayed"


def write(path_base, data, is_gzip):
    path = path_base + (".txt.gz" if is_gzip else ".txt")
    with open(path, "wb") as f:
        f.write(data)
    return path



def run(seconds, seed, out, limit_s=10.0, max_rss=2048, iterations=None, verbose=False):
    """Fuzz for `seconds` (or `iterations` inputs); returns (inputs, outcomes, findings)."""
    r = random.Random(seed)
    mut = Mutator(r)
    base = seeds()
    current = os.path.join(out, "fuzz_trace_current")
    outcomes = {}
    findings = []
    start = time.monotonic()
    n = 0
    faulthandler.enable()
    while (iterations is None and time.monotonic() - start < seconds) or \
            (iterations is not None and n < iterations):
        n += 1
        data, is_gzip, name = mut.input(base)
        for old in (current + ".txt", current + ".txt.gz"):
            if os.path.exists(old):
                os.remove(old)
        path = write(current, data, is_gzip)
        run_seed = r.randrange(2**32)
        if verbose:
            print(f"input {n}: {name}, {len(data):,} bytes{' gzip' if is_gzip else ''}, "
                  f"replay seed {run_seed}", flush=True)
        outcome, problem = judge(lambda: exercise(path, random.Random(run_seed)), DOCUMENTED,
                                 limit_s, max_rss)
        if outcome is None:
            kept = write(os.path.join(out, f"fuzz_trace_finding_{seed}_{n}"), data, is_gzip)
            findings.append((kept, run_seed, problem))
            print(f"FINDING (input {n}, from {name}): {problem}\n  reproduce: python "
                  f"tests/trace/fuzz_trace.py --replay {kept} --replay-seed {run_seed}", flush=True)
            if peak_rss_mib() > max_rss:
                break
            continue
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    for old in (current + ".txt", current + ".txt.gz"):
        if os.path.exists(old):
            os.remove(old)
    return n, outcomes, findings


def main():
    args = arguments(__doc__, "run one input file and print what it raises")
    if args.replay:
        try:
            print(exercise(args.replay, random.Random(args.replay_seed)))
        except DOCUMENTED as e:
            print(f"{type(e).__name__}: {e}")
        return 0
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"fuzz_trace: seed {seed}, {args.minutes} min, current input in "
          f"{os.path.join(args.out, 'fuzz_trace_current')}.txt[.gz]", flush=True)
    n, outcomes, findings = run(args.minutes * 60, seed, args.out, args.limit, args.max_rss,
                                verbose=args.verbose)
    return report(n, outcomes, findings)


if __name__ == "__main__":
    sys.exit(main())
