"""The rt-app fuzzer: damaged rt-app workloads fed to
pysched.workloads.from_rtapp, and what loads run for a moment.

Each input starts from one of rt-app's examples (tests/data/rtapp/*.json)
or a workload of barriers, conditions, mutexes and forks, and is changed a
few times over: values made huge, negative, of the wrong type or deeply
nested; instances up to 100,000 and past it; barriers, loops, forks,
phases, cpus, policies and tasks added, removed or multiplied; keys
unknown or repeated.  It goes to from_rtapp as a file (its JSON text with
comments and trailing commas, now and then with bytes flipped, cut, or
nested 100,000 deep) or as a dict (now and then one that contains itself,
or shares a sub-dict).  What loads runs under a random preset on 1-4 CPUs
for at most 0.3 simulated seconds, unless it has more than MAX_RUN_THREADS
threads.

Allowed outcomes: success, or the documented errors (ValueError, TypeError,
KeyError, pysched.Error).  Anything else -- another exception (a
RuntimeWarning too: NumPy's overflow), an input taking more than --limit
seconds (10), the process's peak memory growing past --max-rss MiB
(2,048), or a crash -- is a finding: the input is kept in a file, the
reproducer printed, and the exit status is 1.  The input
being tried is always in <out>/fuzz_rtapp_current.json (a dict as its
repr, in fuzz_rtapp_current.py), so that a crash leaves it behind.

    python tests/workloads/fuzz_rtapp.py --minutes 10 --seed 1
    python tests/workloads/fuzz_rtapp.py --replay FILE      # one input, with its traceback

tests/workloads/test_rtapp.py runs a few hundred inputs of it in every test run."""
import copy
import faulthandler
import glob
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "helpers"))
import pysched as ps  # noqa: E402
from fuzzing import arguments, judge, peak_rss_mib, report  # noqa: E402
from pysched import workloads
from pysched.workloads import rtapp_read

# tests/data, beside this script's folder
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "rtapp")
DOCUMENTED = (ValueError, TypeError, KeyError, ps.Error)

EXTRA = {
    "tasks": {
        "a": {"instance": 3, "loop": 5, "run": 100, "barrier": "b", "lock": "m", "signal": "c",
              "unlock": "m", "sleep": 200},
        "w": {"instance": 2, "loop": -1, "phases": {
            "p0": {"loop": 2, "wait": {"ref": "c", "mutex": "m"}, "run": 50},
            "p1": {"policy": "SCHED_FIFO", "priority": 20, "sync": {"ref": "c", "mutex": "m"},
                   "broad": "c", "timer": {"ref": "t", "period": 1000, "mode": "absolute"}}}},
        "f": {"instance": 1, "loop": 3, "run": 10, "fork": "g", "yield": 0},
        "g": {"instance": 0, "run": 30, "sleep": 10, "delay": 5},
    },
    "global": {"duration": 1, "default_policy": "SCHED_OTHER", "calibration": "CPU0"},
}

INTS = [0, 1, -1, 2, 3, 63, 64, 65, 99, 100, 1000, 4095, 2**31 - 1, 2**31, -2**31, 2**63,
        10**30, 10**5000, 100_000, 100_001]
INSTANCES = [0, 1, 2, 3, 64, 65, 100, 1100, 4000, 20_000, 100_000, 100_001]
EVENTS = ["run", "runtime", "sleep", "timer", "lock", "unlock", "signal", "broad", "wait",
          "sync", "barrier", "yield", "fork", "mem", "iorun", "resume", "suspend"]
NAMES = ["b", "m", "c", "x", "", "a:b", "\x00", "é" * 40, "t" * 200]


class _AllDigits:
    """int <-> str without the interpreter's limit (4,300 digits), for the
    fuzzer's own json.dumps and repr of an input holding 10**5000: from_rtapp
    meets the limit as a user's interpreter has it."""

    def __enter__(self):
        self.limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)

    def __exit__(self, *exc):
        sys.set_int_max_str_digits(self.limit)


def seeds():
    """The workloads mutated, as dicts: (name, dict)."""
    out = []
    for path in sorted(glob.glob(os.path.join(DATA, "*.json"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out.append((os.path.basename(path), json.loads(rtapp_read._strip(text, path))))
    out.append(("barriers and conditions", EXTRA))
    return out


class Mutator:
    def __init__(self, r):
        self.r = r

    def value(self, depth=0):
        """A value of any JSON type, good or bad."""
        r = self.r
        k = r.randrange(10)
        if k < 3:
            return r.choice(INTS)
        if k == 3:
            return r.choice([1.5, -0.0, 1e300, float("inf"), float("nan")])
        if k == 4:
            return r.choice(NAMES + ["SCHED_FIFO", "SCHED_DEADLINE", "relative", "absolute"])
        if k == 5:
            return r.choice([None, True, False])
        if k == 6 and depth < 3:
            return [self.value(depth + 1) for _ in range(r.randint(0, 4))]
        if k == 7 and depth < 3:
            return {r.choice(EVENTS + ["ref", "mutex", "period", "mode", "loop"]):
                    self.value(depth + 1) for _ in range(r.randint(0, 3))}
        if k == 8:
            v = 1
            for _ in range(r.choice([5, 31, 33, 200])):
                v = [v] if r.random() < 0.5 else {"x": v}
            return v
        return r.choice(INTS)

    def nodes(self, tree):
        """Every dict and list in tree, with its path."""
        out, todo = [], [tree]
        while todo:
            v = todo.pop()
            if isinstance(v, dict):
                out.append(v)
                todo.extend(v.values())
            elif isinstance(v, list):
                out.append(v)
                todo.extend(v)
        return out

    def task(self, tree):
        tasks = tree.get("tasks")
        if not isinstance(tasks, dict) or not tasks:
            tree["tasks"] = tasks = {"t": {"run": 100}}
        name = self.r.choice(list(tasks))
        if not isinstance(tasks[name], dict):
            tasks[name] = {"run": 100}
        return tasks, name, tasks[name]

    def mutate(self, tree):
        r = self.r
        kind = r.randrange(12)
        if kind == 0:     # any value replaced
            node = r.choice(self.nodes(tree))
            if isinstance(node, dict) and node:
                node[r.choice(list(node))] = self.value()
            elif isinstance(node, list) and node:
                node[r.randrange(len(node))] = self.value()
        elif kind == 1:   # instances
            _, _, t = self.task(tree)
            t["instance"] = r.choice(INSTANCES)
        elif kind == 2:   # a barrier met by several tasks
            tasks = self.task(tree)[0]
            b = r.choice(["b", "B", "FIRST"])
            for name in r.sample(list(tasks), r.randint(1, len(tasks))):
                if isinstance(tasks[name], dict):
                    tasks[name][f"barrier{r.randrange(3)}"] = b
                    if r.random() < 0.5:
                        tasks[name]["instance"] = r.choice(INSTANCES[:9])
        elif kind == 3:   # loops
            _, _, t = self.task(tree)
            t["loop"] = r.choice([-2, -1, 0, 1, 2, 2**31 - 1, 2**31, "1"])
            phases = t.get("phases")
            if isinstance(phases, dict) and phases:
                p = phases[r.choice(list(phases))]
                if isinstance(p, dict):
                    p["loop"] = r.choice([-1, 0, 1, 5, 2**31])
        elif kind == 4:   # an event added
            _, _, t = self.task(tree)
            ev = r.choice(EVENTS)
            t[ev + str(r.randrange(100))] = (
                {"ref": r.choice(NAMES[:4]), "mutex": "m"} if ev in ("wait", "sync") else
                {"ref": "t", "period": r.choice(INTS), "mode": r.choice(["relative", "x"])}
                if ev == "timer" else
                r.choice(list(tree["tasks"])) if ev == "fork" else
                r.choice(NAMES[:4]) if ev in ("lock", "unlock", "signal", "broad", "barrier")
                else r.choice(INTS))
        elif kind == 5:   # tasks multiplied
            tasks, name, t = self.task(tree)
            for i in range(r.choice([1, 10, 200, 2000])):
                tasks[f"{name}{i}"] = copy.deepcopy(t) if i < 50 else t
        elif kind == 6:   # a key removed
            node = r.choice(self.nodes(tree))
            if isinstance(node, dict) and node:
                del node[r.choice(list(node))]
        elif kind == 7:   # phases
            _, _, t = self.task(tree)
            t.pop("run", None)
            t["phases"] = {f"p{i}": {r.choice(EVENTS[:12]): r.choice([0, 10, 1000])}
                           for i in range(r.randint(0, 4))}
        elif kind == 8:   # cpus
            _, _, t = self.task(tree)
            t["cpus"] = r.choice([[0], [1], [0, 3], [63], [64], [-1], [], [2**40], "0", [0.5]])
        elif kind == 9:   # policies and priorities
            _, _, t = self.task(tree)
            t["policy"] = r.choice(["SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_IDLE",
                                    "SCHED_DEADLINE", "FIFO", 1])
            t["priority"] = r.choice([-21, -20, 0, 1, 19, 20, 99, 100])
        elif kind == 10:  # global
            g = tree.setdefault("global", {})
            if isinstance(g, dict):
                g[r.choice(["duration", "default_policy", "pi_enabled", "calibration", "x"])] = \
                    self.value()
        else:             # an unknown top-level key or a whole section replaced
            tree[r.choice(["tasks", "global", "resources", "extra"])] = self.value()
        return tree

    def text(self, tree):
        """tree as rt-app's JSON: comments, trailing commas, damage."""
        r = self.r
        with _AllDigits():
            text = json.dumps(tree, indent=r.choice([None, 1]), ensure_ascii=r.random() < 0.5,
                              allow_nan=True)
        k = r.randrange(8)
        if k == 0:
            text = text.replace(",", ",\n// a comment\n", r.randint(1, 3))
        elif k == 1:
            text = text.replace("}", ",}", 1).replace("]", ",]", 1)
        elif k == 2:
            b = bytearray(text.encode("utf-8"))
            for _ in range(r.randint(1, 4)):
                b[r.randrange(len(b))] = r.randrange(256)
            return bytes(b)
        elif k == 3:
            text = text[:r.randrange(len(text) + 1)]
        elif k == 4:
            n = r.choice([33, 1000, 100_000])
            text = text.replace("100", "[" * n + "100" + "]" * n, 1)
        elif k == 5:
            text = "/* " + text if r.random() < 0.3 else text.replace("{", "{/*x*/", 2)
        return text.encode("utf-8", "surrogatepass")

    def input(self, seeds):
        """(source, what): a dict, or the bytes of a file."""
        r = self.r
        name, tree = r.choice(seeds)
        tree = copy.deepcopy(tree)
        for _ in range(r.choice([1, 1, 2, 3, 5, 8])):
            tree = self.mutate(tree)
        if r.random() < 0.35:
            if r.random() < 0.05:
                tasks = tree.get("tasks")
                if isinstance(tasks, dict) and tasks:
                    tasks[r.choice(list(tasks))] = tree     # it contains itself
            return tree, name
        return self.text(tree), name


# a workload of more threads is loaded but not run: the core's spawn takes
# time linear in the tasks already spawned (74 us a spawn among 30,000), its
# channels grow one at a time (each a copy of all of them under the
# sanitizer), and with PYSCHED_DEBUG=1 its checks after every instant visit
# every task: 20,000 threads took 26 s for 0.3 simulated s, 13,200 with
# 39,600 channels over 30 s to spawn, and 1,105 threads 4.7 s to run (12 s
# on a busy machine) where they take 0.1 s without the checks
DEBUG = os.environ.get("PYSCHED_DEBUG", "") not in ("", "0")
MAX_RUN_THREADS = 300 if DEBUG else 2_000


def exercise(source, r):
    """from_rtapp(source) and a short run of what loads; raises what they raise."""
    w = workloads.from_rtapp(source)
    if len(w.threads) > MAX_RUN_THREADS:
        return "loaded"
    sim = w.simulator(r.choice(ps.presets()), cpus=r.randint(1, 4),
                      record=r.choice(["counters", "events"]), seed=r.randrange(100))
    sim.run(seconds=min(w.duration or 0.3, r.choice([0.05, 0.1, 0.3])))
    return "ran"


def keep(base, source):
    """Write the input to base.json (a file's bytes) or base.py (a dict's
    repr, which names the dicts it contains again as {...}); returns the path."""
    if isinstance(source, bytes):
        path = base + ".json"
        with open(path, "wb") as f:
            f.write(source)
    else:
        path = base + ".py"
        with open(path, "w", encoding="utf-8") as f, _AllDigits():
            f.write(repr(source))
    return path



def run(seconds, seed, out, limit_s=10.0, max_rss=2048, iterations=None, verbose=False):
    """Fuzz for `seconds` (or `iterations` inputs); returns (inputs, outcomes, findings)."""
    r = random.Random(seed)
    mut = Mutator(r)
    base = seeds()
    current = os.path.join(out, "fuzz_rtapp_current")
    outcomes, findings = {}, []
    start = time.monotonic()
    n = 0
    faulthandler.enable()
    while (iterations is None and time.monotonic() - start < seconds) or \
            (iterations is not None and n < iterations):
        n += 1
        source, name = mut.input(base)
        for old in (current + ".json", current + ".py"):
            if os.path.exists(old):
                os.remove(old)
        kept = keep(current, source)
        run_seed = r.randrange(2**32)
        if verbose:
            print(f"input {n}: from {name}, {'a file' if isinstance(source, bytes) else 'a dict'}, "
                  f"run seed {run_seed}", flush=True)
        arg = kept if isinstance(source, bytes) else source
        outcome, problem = judge(lambda: exercise(arg, random.Random(run_seed)), DOCUMENTED,
                                 limit_s, max_rss)
        if outcome is None:
            path = keep(os.path.join(out, f"fuzz_rtapp_finding_{seed}_{n}"), source)
            findings.append((path, run_seed, problem))
            print(f"FINDING (input {n}, from {name}): {problem}\n  reproduce: python "
                  f"tests/workloads/fuzz_rtapp.py --replay {path} --replay-seed {run_seed}", flush=True)
            if peak_rss_mib() > max_rss:
                break
            continue
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    for old in (current + ".json", current + ".py"):
        if os.path.exists(old):
            os.remove(old)
    return n, outcomes, findings


def main():
    args = arguments(__doc__, "run one input (a .json file, or a .py file holding a dict's "
                              "repr) and print what it raises")
    if args.replay:
        source = args.replay
        if source.endswith(".py"):
            with open(source, encoding="utf-8") as f, _AllDigits():
                # the fuzzer's own file: a dict's repr, with {...} where it contained itself
                source = eval(f.read().replace("{...}", "None"), {"inf": float("inf"),  # noqa: S307
                                                                   "nan": float("nan")})
        try:
            print(exercise(source, random.Random(args.replay_seed)))
        except DOCUMENTED as e:
            print(f"{type(e).__name__}: {e}")
        return 0
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"fuzz_rtapp: seed {seed}, {args.minutes} min, current input in "
          f"{os.path.join(args.out, 'fuzz_rtapp_current')}.json (.py for a dict)", flush=True)
    n, outcomes, findings = run(args.minutes * 60, seed, args.out, args.limit, args.max_rss,
                                verbose=args.verbose)
    return report(n, outcomes, findings)


if __name__ == "__main__":
    sys.exit(main())
