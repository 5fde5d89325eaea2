"""The workloads a search draws from: tasks whose programs are a start
(ops run once) and a body (ops repeated for ever) of run, sleep, io,
timer and yield, with durations in whole microseconds and nice values
within bounds, beside fixed background tasks; how one is drawn at random,
mutated, crossed with another and made smaller."""
import math
from dataclasses import dataclass, field, replace

from .._checks import check_int
from ..program import Program

# the package's own: the public names are pysched.search's
__all__ = []

KINDS = ("run", "sleep", "io", "timer", "yield")
TIMED = ("run", "sleep", "io", "timer")   # ops that let time pass
US_MAX = 2**31 - 1                        # Program's durations and periods


@dataclass(frozen=True)
class Op:
    """One op of a program: kind (run, sleep, io, timer or yield) and, but
    for yield, us: the duration (timer: the period), in µs."""
    kind: str
    us: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"op kind {self.kind!r} is not one of {KINDS}")
        if self.kind == "yield":
            if self.us != 0:
                raise ValueError(f"a yield has no duration (us={self.us!r})")
        else:
            object.__setattr__(self, "us", check_int(f"{self.kind} us", self.us, 1, US_MAX))

    def add_to(self, program):
        if self.kind == "yield":
            return program.yield_()
        if self.kind == "timer":
            return program.timer(self.us)
        return getattr(program, self.kind)(us=self.us)

    def code(self):
        if self.kind == "yield":
            return ".yield_()"
        if self.kind == "timer":
            return f".timer({self.us})"
        return f".{self.kind}(us={self.us})"


def _ops(what, ops):
    ops = tuple(Op(*o) if isinstance(o, tuple) else o for o in ops)
    for o in ops:
        if not isinstance(o, Op):
            raise TypeError(f"{what} holds {o!r}: ops are Op(kind, us) or (kind, us) tuples")
    return ops


@dataclass(frozen=True)
class TaskSpec:
    """A task: its start (ops run once), its body (ops repeated for ever;
    at least one lets time pass) and its nice value."""
    body: tuple
    start: tuple = ()
    nice: int = 0

    def __post_init__(self):
        object.__setattr__(self, "body", _ops("body", self.body))
        object.__setattr__(self, "start", _ops("start", self.start))
        object.__setattr__(self, "nice", check_int("nice", self.nice, -20, 19))
        if not any(o.kind in TIMED for o in self.body):
            raise ValueError(f"a body needs an op that lets time pass ({', '.join(TIMED)}): "
                             f"{[o.kind for o in self.body]}")

    @property
    def ops(self):
        return len(self.start) + len(self.body)

    def program(self):
        p = Program()
        for o in self.start:
            o.add_to(p)
        p.loop()
        for o in self.body:
            o.add_to(p)
        return p.end()

    def code(self):
        return ("ps.Program()" + "".join(o.code() for o in self.start) + ".loop()"
                + "".join(o.code() for o in self.body) + ".end()")


def hog(nice=0):
    """A task that computes for ever."""
    return TaskSpec(body=(Op("run", 1_000_000),), nice=nice)


@dataclass(frozen=True)
class Workload:
    """The searched tasks, beside the background ones (spawned first)."""
    tasks: tuple
    background: tuple = ()

    @property
    def ops(self):
        return sum(t.ops for t in self.tasks)

    def size(self):
        """What shrinking makes smaller, most important first: tasks, ops,
        then the significant digits of the durations and the nice values
        away from 0."""
        digits = sum(_digits(o.us) for t in self.tasks for o in t.start + t.body)
        return (len(self.tasks), self.ops, digits, sum(abs(t.nice) for t in self.tasks))


def _digits(us):
    """Significant digits of us (900 has one, 1250 three)."""
    if us == 0:
        return 0
    s = str(us).rstrip("0")
    return len(s)


def _round(us, digits):
    """us rounded to `digits` significant digits (at least 1 µs)."""
    if us == 0:
        return 0
    scale = 10 ** max(0, len(str(us)) - digits)
    return max(1, int(round(us / scale)) * scale)


@dataclass(frozen=True)
class Space:
    """Where a search looks.

    tasks: (fewest, most) searched tasks; start_ops and body_ops: (fewest,
    most) ops of a task's start and body; kinds: the op kinds drawn
    (default run, sleep, timer, yield: io is an uninterruptible device
    sleep, which rt-app has no event for); us: (shortest, longest)
    duration or timer period in µs, drawn log-uniformly; nice: (lowest,
    highest) nice of a searched task; background: TaskSpecs always there,
    beside the searched ones (e.g. two hog()s)."""
    tasks: tuple = (1, 3)
    start_ops: tuple = (0, 2)
    body_ops: tuple = (1, 4)
    kinds: tuple = ("run", "sleep", "timer", "yield")
    us: tuple = (50, 2_000_000)
    nice: tuple = (0, 0)
    background: tuple = field(default_factory=tuple)

    def __post_init__(self):
        def pair(name, lo, hi):
            v = getattr(self, name)
            if not (isinstance(v, (tuple, list)) and len(v) == 2):
                raise TypeError(f"Space {name} must be a (lowest, highest) pair, not {v!r}")
            a, b = (check_int(f"Space {name}", x, lo, hi) for x in v)
            if a > b:
                raise ValueError(f"Space {name}={v!r}: the lowest is above the highest")
            object.__setattr__(self, name, (a, b))
        pair("tasks", 1, 64)
        pair("start_ops", 0, 16)
        pair("body_ops", 1, 16)
        pair("us", 1, US_MAX)
        pair("nice", -20, 19)
        kinds = tuple(self.kinds)
        for k in kinds:
            if k not in KINDS:
                raise ValueError(f"Space kinds: {k!r} is not one of {KINDS}")
        if not any(k in TIMED for k in kinds):
            raise ValueError(f"Space kinds {kinds} has no op that lets time pass ({TIMED})")
        object.__setattr__(self, "kinds", kinds)
        bg = tuple(self.background)
        for t in bg:
            if not isinstance(t, TaskSpec):
                raise TypeError(f"Space background holds {t!r}: background tasks are "
                                f"TaskSpecs (e.g. pysched.search.hog())")
        object.__setattr__(self, "background", bg)

    # -------------------------------------------------------- drawing

    def _us(self, rng):
        lo, hi = self.us
        return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 0.5))))) \
            if lo < hi else lo

    def _op(self, rng, kinds=None):
        kinds = kinds or self.kinds
        kind = kinds[int(rng.integers(len(kinds)))]
        return Op(kind, 0 if kind == "yield" else min(self.us[1], max(self.us[0], self._us(rng))))

    def _timed(self):
        return tuple(k for k in self.kinds if k in TIMED)

    def _task(self, rng):
        start = tuple(self._op(rng) for _ in range(int(rng.integers(self.start_ops[0],
                                                                     self.start_ops[1] + 1))))
        n = int(rng.integers(self.body_ops[0], self.body_ops[1] + 1))
        body = [self._op(rng) for _ in range(n)]
        if not any(o.kind in TIMED for o in body):
            body[int(rng.integers(n))] = self._op(rng, self._timed())
        nice = int(rng.integers(self.nice[0], self.nice[1] + 1))
        return TaskSpec(body=tuple(body), start=start, nice=nice)

    def random(self, rng):
        """A workload drawn at random (rng: a numpy Generator)."""
        n = int(rng.integers(self.tasks[0], self.tasks[1] + 1))
        return Workload(tuple(self._task(rng) for _ in range(n)), self.background)

    # -------------------------------------------------------- mutating

    def mutate(self, w, rng):
        """w with one change at random: a duration scaled or drawn again,
        an op's kind changed, an op added or removed, a nice changed, a task
        added or removed."""
        for _ in range(16):  # a change the bounds refuse is drawn again
            got = self._mutate(w, rng)
            if got is not None and got != w:
                return got
        return self.random(rng)

    def _mutate(self, w, rng):
        tasks = list(w.tasks)
        i = int(rng.integers(len(tasks)))
        t = tasks[i]
        what = int(rng.integers(8))
        if what == 6:   # a task added or removed
            if len(tasks) < self.tasks[1] and rng.random() < 0.5:
                tasks.insert(int(rng.integers(len(tasks) + 1)), self._task(rng))
            elif len(tasks) > self.tasks[0]:
                del tasks[i]
            else:
                return None
            return replace(w, tasks=tuple(tasks))
        if what == 7:   # a nice changed
            if self.nice[0] == self.nice[1]:
                return None
            tasks[i] = replace(t, nice=int(rng.integers(self.nice[0], self.nice[1] + 1)))
            return replace(w, tasks=tuple(tasks))
        in_start = t.start and rng.random() < len(t.start) / t.ops
        ops = list(t.start if in_start else t.body)
        lo, hi = self.start_ops if in_start else self.body_ops
        j = int(rng.integers(len(ops))) if ops else 0
        if what in (0, 1, 2):   # a duration scaled by e^N(0, 0.7) (most changes are small)
            if not ops or ops[j].kind == "yield":
                return None
            us = int(round(ops[j].us * math.exp(rng.normal(0, 0.7))))
            ops[j] = Op(ops[j].kind, min(self.us[1], max(self.us[0], us)))
        elif what == 3:  # a duration drawn again, or the kind changed
            if not ops:
                return None
            if rng.random() < 0.5:
                ops[j] = self._op(rng, (ops[j].kind,))
            else:
                new = self._op(rng)
                ops[j] = Op(new.kind, 0 if new.kind == "yield" else (ops[j].us or new.us))
        elif what == 4:  # an op added
            if len(ops) >= hi:
                return None
            ops.insert(int(rng.integers(len(ops) + 1)), self._op(rng))
        else:            # an op removed
            if len(ops) <= lo:
                return None
            del ops[j]
        if not in_start and not any(o.kind in TIMED for o in ops):
            return None
        tasks[i] = replace(t, **{"start" if in_start else "body": tuple(ops)})
        return replace(w, tasks=tuple(tasks))

    def cross(self, a, b, rng):
        """Each task of a taken from b's task at the same place, at random."""
        tasks = [tb if (k < len(b.tasks) and rng.random() < 0.5) else ta
                 for k, (ta, tb) in enumerate(zip(a.tasks, b.tasks + a.tasks[len(b.tasks):]))]
        return replace(a, tasks=tuple(tasks))

    # -------------------------------------------------------- shrinking

    def smaller(self, w):
        """Workloads smaller than w (by Workload.size), the smallest
        changes last: without a task, without an op, with two runs (or
        sleeps, or ios) in a row made one, with a duration of fewer
        significant digits, with a nice of 0.  The bounds of the space
        are not kept: a smaller counterexample is one all the same."""
        out = []
        for i in range(len(w.tasks)):
            if len(w.tasks) > 1:
                out.append(replace(w, tasks=w.tasks[:i] + w.tasks[i + 1:]))
        for i, t in enumerate(w.tasks):
            for j in range(len(t.start)):
                out.append(_with(w, i, replace(t, start=t.start[:j] + t.start[j + 1:])))
            for j in range(len(t.body)):
                body = t.body[:j] + t.body[j + 1:]
                if any(o.kind in TIMED for o in body):
                    out.append(_with(w, i, replace(t, body=body)))
        for i, t in enumerate(w.tasks):
            for part in ("start", "body"):
                ops = getattr(t, part)
                for j in range(len(ops) - 1):
                    a, b = ops[j], ops[j + 1]
                    if a.kind == b.kind and a.kind in ("run", "sleep", "io") \
                            and a.us + b.us <= US_MAX:
                        new = ops[:j] + (Op(a.kind, a.us + b.us),) + ops[j + 2:]
                        out.append(_with(w, i, replace(t, **{part: new})))
        for i, t in enumerate(w.tasks):
            for part in ("start", "body"):
                ops = getattr(t, part)
                for j, o in enumerate(ops):
                    for digits in (1, 2):
                        us = _round(o.us, digits)
                        if o.kind != "yield" and _digits(us) < _digits(o.us):
                            new = ops[:j] + (Op(o.kind, us),) + ops[j + 1:]
                            out.append(_with(w, i, replace(t, **{part: new})))
            if t.nice != 0:
                out.append(_with(w, i, replace(t, nice=0)))
        size = w.size()
        return [c for c in out if c.size() < size]


def _with(w, i, t):
    return replace(w, tasks=w.tasks[:i] + (t,) + w.tasks[i + 1:])
