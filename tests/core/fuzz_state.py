"""The state fuzzer: random episodes of the whole API as users drive it --
spawn, run, step, syscalls, set_param, sources, posts, copies and pickles,
the readers and the exporters -- with right and wrong values alike, on every
preset and the example Python policies, 1-8 CPUs (64 now and then), with the
invariant checks on after every instant.  Every twin (sim.copy(),
copy.copy(), a pickle) receives the same calls as its original and must
stay identical to it.

An episode may raise only the documented errors (ValueError, TypeError,
KeyError, pysched.Error); anything else, a twin that differs, or a check
that fails is a finding: the episode's seed and the traceback are printed
and the exit status is 1.  A crash ends the process, with the seed printed
before each episode (-v).

    python tests/core/fuzz_state.py --minutes 10 --seed 1

tests/core/test_fuzz_core.py runs a few episodes of it in every test run."""
import argparse
import copy
import os
import pickle
import random
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pysched as ps  # noqa: E402
from test_run_cuts import program  # noqa: E402

DOCUMENTED = (ValueError, TypeError, KeyError, ps.Error)
POLICIES = [ps.policy.examples.RoundRobin, ps.policy.examples.SleepCredit]


def wrong_or_right(r, good, bad):
    """Mostly a good value, now and then a bad one."""
    return r.choice(bad) if r.random() < 0.1 else good


class Episode:
    def __init__(self, seed):
        self.r = r = random.Random(seed)
        self.preset = r.choice(ps.presets() + POLICIES)
        self.cpus = 64 if r.random() < 0.03 else r.randint(1, 8)
        kw = dict(cpus=self.cpus, seed=seed, debug=True, max_tasks=300,
                  record=r.choice(["counters", "events", "series"]),
                  max_trace_bytes=r.choice([1 << 12, 1 << 20]),
                  on_full=r.choice(["raise", "overwrite"]),
                  stagger_ticks=r.random() < 0.2, switch_cost_ns=r.choice([0, 0, 5000]))
        if r.random() < 0.5:
            kw["hz"] = r.choice([100, 250, 1000])
        self.sims = [ps.Simulator(self.preset, **kw)]
        self.spawned = self.calls = self.refused = 0

    def each(self, call):
        """call(sim) on the original and every twin; the same outcome on all
        (call draws nothing at random: every twin gets the same values)."""
        outcomes = []
        for s in self.sims:
            try:
                call(s)
                outcomes.append(("ok", None))
            except DOCUMENTED as e:
                outcomes.append((type(e).__name__, str(e)))
        kinds = {o[0] for o in outcomes}
        assert len(kinds) == 1, f"twins disagree: {outcomes}"
        self.calls += 1
        self.refused += kinds != {"ok"}

    def action(self):
        r, sims = self.r, self.sims
        pid = r.randint(0, sims[0].counters()["forks"] + self.spawned + 1)
        what = r.choice(["spawn", "spawn", "run", "run", "step", "renice", "setscheduler",
                         "affinity", "param", "source", "post", "twin", "read", "export",
                         "check"])
        if what == "spawn":
            prog = program(r, self.cpus)
            kw = dict(nice=wrong_or_right(r, r.randint(-20, 19), [-21, 20, 3.5]),
                      cpu=wrong_or_right(r, r.choice([None, r.randrange(self.cpus)]),
                                         [self.cpus, -1]))
            if r.random() < 0.2:
                kw.update(policy=r.choice(["fifo", "rr"]), rt_priority=r.randint(1, 99))
            self.each(lambda s: s.spawn(prog, **kw))
            self.spawned += 1
        elif what == "run":
            secs = wrong_or_right(r, r.choice([0, 0.001, 0.05, 0.3]), [-1, float("nan")])
            self.each(lambda s: s.run(seconds=secs))
        elif what == "step":
            n = wrong_or_right(r, r.randint(0, 5), [-1, 2**70])
            self.each(lambda s: s.step(n))
        elif what == "renice":
            nice = wrong_or_right(r, r.randint(-20, 19), [99])
            self.each(lambda s: s.renice(pid, nice))
        elif what == "setscheduler":
            pol = r.choice(["normal", "fifo", "rr", "batch"])
            rt = 0 if pol == "normal" else r.randint(0, 100)
            self.each(lambda s: s.setscheduler(pid, pol, rt))
        elif what == "affinity":
            cpus = np.array(r.sample(range(self.cpus + 1), r.randint(0, min(3, self.cpus + 1))))
            self.each(lambda s: s.set_affinity(pid, cpus))
        elif what == "param":
            info = ps.preset_params(self.preset, hz=sims[0].hz)
            if info:
                p = r.choice(info)
                value = wrong_or_right(r, r.randint(p.min, min(p.max, p.min + 2 * max(p.default, 1))),
                                       [p.min - 1, p.max + 1])
                self.each(lambda s: s.set_param(p.name, value))
        elif what == "source":
            every = wrong_or_right(r, r.choice([1, 3, 20]), [0, -5])
            chan, count = r.choice("ab"), r.choice([None, 30])
            self.each(lambda s: s.source(chan, every_ms=every, count=count))
        elif what == "post":
            n = wrong_or_right(r, r.randint(1, 5), [0, 2**40])
            self.each(lambda s: s.post("a", n=n))
        elif what == "twin" and len(sims) < 4:
            how = r.choice(["copy", "copy.copy", "pickle"])
            orig = sims[0]
            sims.append(orig.copy() if how == "copy" else copy.copy(orig) if how == "copy.copy"
                        else pickle.loads(pickle.dumps(orig)))
        elif what == "read":
            cpu = r.randrange(self.cpus)
            self.each(lambda s: (s.stats(), s.events(), s.latencies(), s.cpu_stats(),
                                 s.queue(cpu), s.counters(), s.task(pid)))
        elif what == "export":
            self.each(lambda s: s.export_ftrace(os.devnull))
        else:
            self.each(lambda s: s.check())

    def twins_identical(self):
        first = self.sims[0]
        for twin in self.sims[1:]:
            assert twin.now_ns == first.now_ns, "twin's clock differs"
            assert twin.stats().tobytes() == first.stats().tobytes(), "twin's stats differ"
            if first.record == "events":
                assert twin.events().tobytes() == first.events().tobytes(), "twin's events differ"


def episode(seed, steps):
    e = Episode(seed)
    for _ in range(steps):
        e.action()
        e.twins_identical()
    return e


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=30, help="actions per episode")
    ap.add_argument("-v", action="store_true", help="print each episode's seed before it runs")
    a = ap.parse_args(argv)
    end = time.monotonic() + 60 * a.minutes
    n = 0
    while time.monotonic() < end:
        seed = a.seed * 10**9 + n
        if a.v:
            print("episode", seed, flush=True)
        try:
            episode(seed, a.steps)
        except Exception:
            print(f"finding in episode {seed} (python {__file__} --seed ... reproduces it with "
                  f"episode({seed}, {a.steps})):")
            traceback.print_exc()
            return 1
        n += 1
    print(f"{n} episodes of {a.steps} actions in {a.minutes} min: no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
