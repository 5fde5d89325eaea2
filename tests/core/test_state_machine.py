"""Random interleavings of the whole API, over every preset (and the example
policies written in Python) and 1-8 CPUs,
with the invariant checks on after every instant: spawn, run, step, renice,
setscheduler, set_affinity, set_param, source, copy, pickle and the readers.
Every copy and pickle twin receives the same calls as its original and must
stay identical to it -- same results, same errors."""
import os
import pickle

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import pysched as ps

EXAMPLES = int(os.environ.get("PYSCHED_FUZZ_EXAMPLES", "25"))

PROGRAMS = [
    lambda: ps.programs.cpu_hog(),
    lambda: ps.programs.interactive(2, 30),
    lambda: ps.Program().loop().wait("a").run(us=300).post("b").end(),
    lambda: ps.Program().loop().wait("b").run(ms=1).end(),
    lambda: ps.Program().loop(5).run(ms=ps.exponential(2)).io(ms=1).end().exit(),
    lambda: ps.Program().loop(3).fork(ps.Program().run(ms=3).sleep(ms=2).exit()).sleep(ms=4).end(),
    lambda: ps.Program().run(ms=2).yield_().nice(3).run(ms=2).nice(-2).sleep(ms=5).run(ms=1),
]


def outcome(fn):
    """(result or None, exception type or None) of fn()."""
    try:
        return fn(), None
    except (ValueError, TypeError, KeyError, ps.Error) as e:
        return None, type(e)


class Machine(RuleBasedStateMachine):
    @initialize(preset=st.sampled_from(ps.presets() + [ps.policy.examples.RoundRobin, ps.policy.examples.SleepCredit]),
                cpus=st.integers(1, 8), seed=st.integers(0, 2**32))
    def build(self, preset, cpus, seed):
        self.cpus = cpus
        self.preset = preset
        self.sims = [ps.Simulator(preset, cpus=cpus, seed=seed, debug=True, record="events",
                                  max_trace_bytes=1 << 22, on_full="overwrite")]
        self.pids = 0

    def each(self, call):
        """call(sim) on the original and every twin: same outcome everywhere."""
        results = [outcome(lambda s=s: call(s)) for s in self.sims]
        kinds = {r[1] for r in results}
        assert len(kinds) == 1, f"twins disagree: {results}"
        return results[0]

    @rule(prog=st.integers(0, len(PROGRAMS) - 1), nice=st.integers(-20, 19),
          policy=st.sampled_from(["normal", "normal", "fifo", "rr"]), rt=st.integers(1, 99),
          cpu=st.integers(0, 7))
    def spawn(self, prog, nice, policy, rt, cpu):
        program = PROGRAMS[prog]()
        kw = dict(nice=nice, policy=policy, rt_priority=0 if policy == "normal" else rt)
        if cpu < self.cpus:
            kw["cpu"] = cpu
        pid, err = self.each(lambda s: s.spawn(program, **kw))
        if err is None:
            self.pids = pid

    @rule(ms=st.integers(0, 1000))
    def run(self, ms):
        self.each(lambda s: s.run(seconds=ms / 1000))

    @rule(ticks=st.integers(0, 5))
    def step(self, ticks):
        self.each(lambda s: s.step(ticks))

    @precondition(lambda self: self.pids)
    @rule(data=st.data())
    def syscall(self, data):
        pid = data.draw(st.integers(1, self.pids))
        which = data.draw(st.sampled_from(["renice", "setscheduler", "set_affinity"]))
        if which == "renice":
            nice = data.draw(st.integers(-20, 19))
            self.each(lambda s: s.renice(pid, nice))
        elif which == "setscheduler":
            policy = data.draw(st.sampled_from(["normal", "fifo", "rr"]))
            rt = 0 if policy == "normal" else data.draw(st.integers(1, 99))
            self.each(lambda s: s.setscheduler(pid, policy, rt))
        else:
            cpus = data.draw(st.lists(st.integers(0, self.cpus - 1), min_size=1, max_size=3))
            self.each(lambda s: s.set_affinity(pid, np.array(cpus)))

    @rule(data=st.data())
    def set_param(self, data):
        info = ps.preset_params(self.preset, hz=self.sims[0].hz)
        p = data.draw(st.sampled_from(info))
        value = data.draw(st.integers(p.min, min(p.max, p.min + 2 * max(p.default, 1))))
        self.each(lambda s: s.set_param(p.name, value))

    @rule(channel=st.sampled_from(["a", "b"]), every_ms=st.integers(1, 50))
    def source(self, channel, every_ms):
        self.each(lambda s: s.source(channel, every_ms=every_ms, count=20))

    @rule(how=st.sampled_from(["copy", "pickle"]))
    def branch(self, how):
        if len(self.sims) < 4:
            orig = self.sims[0]
            self.sims.append(orig.copy() if how == "copy" else pickle.loads(pickle.dumps(orig)))

    @rule()
    def read(self):
        self.each(lambda s: (s.queue(0), s.cpu_stats(), s.counters(), s.events()))
        if self.pids:
            self.each(lambda s: s.task(self.pids))

    @invariant()
    def twins_identical_and_invariants_hold(self):
        first = self.sims[0]
        first.check()
        for twin in self.sims[1:]:
            twin.check()
            assert twin.now_ns == first.now_ns
            assert (twin.stats() == first.stats()).all()
            assert twin.events().tobytes() == first.events().tobytes()
            assert twin.queue(0) == first.queue(0)


Machine.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=25, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
TestAPI = Machine.TestCase
