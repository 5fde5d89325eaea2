"""The workload program builder.

A task runs a program of ops interpreted in C (csrc/program.c).  Build one by
chaining::

    Program().loop().wait("input").run(ms=4).post("client").end()

Channels are named by strings and created on first use by the simulator a
program is spawned in.  A Program is immutable once spawned only in the sense
that the simulator keeps the version it was given.  A simulator keeps one copy
of programs equal op for op, so a new Program per task costs what one shared
Program does.
"""
from . import dist
from ._core import MAX_CPUS
from ._checks import check_bool, check_name, check_number
from ._checks import check_int as _check_int

# op codes of csrc/program.h
(RUN, SLEEP, IO, WAIT, POST, LOOP, END, FORK, EXIT, YIELD, NICE, SETSCHED, PERIODIC, FRAME,
 TIMER, AFFINITY) = range(16)

POLICIES = {"normal": 0, "fifo": 1, "rr": 2}
MAX_LOOP_DEPTH = 8


def _check_policy(policy):
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValueError(f"policy {policy!r} is not one of {sorted(POLICIES)}")
    return policy


def _check_rt_priority(policy, rt_priority):
    """rt_priority as a plain int: 1..99 for 'fifo' and 'rr', 0 for 'normal'."""
    _check_policy(policy)
    if policy == "normal":
        return _check_int("rt_priority", rt_priority, 0, 0)
    return _check_int("rt_priority", rt_priority, 1, 99)


def _check_channel(ch):
    if not isinstance(ch, str) or not ch:
        raise TypeError(f"a channel is named by a non-empty str, not {ch!r}")
    return check_name("channel name", ch)


def _work(what, work_us):
    """A timed op's work in us: a number (named in errors) or a Dist."""
    if not isinstance(work_us, dist.Dist):
        work_us = dist.const(check_number(f"{what} work_us", work_us, 0, dist.MAX_NS / 1000))
    return dist.duration({"us": work_us}, what)


class Program:
    """A builder of workload programs (see the module docstring)."""

    def __init__(self):
        self.ops = []  # (code, arg, arg2, dist tuple); arg may be a channel name or a Program
        self._open = []  # indices of open loops

    def _op(self, code, arg=0, arg2=0, d=(0, 0.0, 0.0)):
        self.ops.append((code, arg, arg2, d))
        return self

    def run(self, **duration):
        """Compute for a duration of CPU time: run(ms=5) or run(us=uniform(100, 900))."""
        return self._op(RUN, d=dist.duration(duration, "run"))

    def sleep(self, **duration):
        """Interruptible timer sleep; it ends at the first tick at least that long after it began."""
        return self._op(SLEEP, d=dist.duration(duration, "sleep"))

    def io(self, **duration):
        """Uninterruptible sleep ended by a device interrupt after the duration."""
        return self._op(IO, d=dist.duration(duration, "io"))

    def periodic(self, period_us, work_us, *, advance_us=0):
        """One call of interbench's periodic_schedule(): compute for work_us
        (a number or a distribution, in us), then sleep to the next
        deadline, period_us after the last one (an absolute schedule: the
        first call sets it from now).  A call that begins a whole period
        late skips its work and counts the periods lost; one that finishes
        late counts the deadlines it missed.  advance_us moves the deadline
        on after the sleep without sleeping for it (interbench's X adds the
        frame's work so: a wakeup later than that is latency).  Each call
        leaves a record in sim.periodic(); in a loop(), the task is
        periodic.  period_us: 0 (no sleep: the next call follows at once)
        .. 2^31 - 1 us."""
        period_us = _check_int("period_us", period_us, 0, 2**31 - 1)
        advance_us = _check_int("advance_us", advance_us, 0, 2**31 - 1)
        return self._op(PERIODIC, period_us, advance_us, _work("periodic", work_us))

    def frame(self, work_us, deadline_us):
        """One frame of interbench's Gaming: compute for work_us with a
        deadline deadline_us after the frame begins; how late it finishes
        is its latency (sim.periodic()).  No sleep."""
        deadline_us = _check_int("deadline_us", deadline_us, 1, 2**31 - 1)
        return self._op(FRAME, deadline_us, 0, _work("frame", work_us))

    def timer(self, period_us, *, relative=False, from_run_start=False):
        """rt-app's timer: sleep to the next period of the task's reference
        (its start, then period_us further on each time).  A task already
        past it goes on at once; relative=True then restarts the reference
        from now, absolute (the default here; rt-app's JSON defaults to
        relative) keeps the schedule and catches up.  from_run_start=True
        starts the reference at the run's time 0 instead of the task's
        start (absolute only): a schedule of times in the run, kept by a
        forked task however late its parent forked it (a replayed trace's).
        period_us: 1 .. 2^31 - 1 us."""
        period_us = _check_int("period_us", period_us, 1, 2**31 - 1)
        relative = check_bool("relative", relative)
        if check_bool("from_run_start", from_run_start):
            if relative:
                raise ValueError("timer(relative=True, from_run_start=True): a relative timer "
                                 "restarts its reference from now; from_run_start is for "
                                 "absolute ones")
            return self._op(TIMER, period_us, 2)
        return self._op(TIMER, period_us, int(relative))

    def wait(self, channel):
        """Block until the channel is posted (a counting semaphore, FIFO waiters)."""
        return self._op(WAIT, _check_channel(channel))

    def post(self, channel, sync=False):
        """Post the channel, waking its first waiter in process context.
        sync=True marks a synchronous wakeup (as pipes do)."""
        sync = check_bool("sync", sync)
        return self._op(POST, _check_channel(channel), int(sync))

    def loop(self, n=None):
        """Repeat the ops up to the matching end() n times (None: forever)."""
        if n is not None:
            n = _check_int("loop count", n, 1, 2**31 - 1)
        if len(self._open) == MAX_LOOP_DEPTH:
            raise ValueError(f"loops nest at most {MAX_LOOP_DEPTH} deep")
        self._open.append(len(self.ops))
        return self._op(LOOP, n or 0)

    def end(self):
        """Close the innermost loop."""
        if not self._open:
            raise ValueError("end() without an open loop()")
        start = self._open[-1]
        body = [op[0] for op in self.ops[start + 1:]]
        if self.ops[start][1] == 0 and not any(c in (RUN, SLEEP, IO, WAIT, EXIT, PERIODIC, FRAME, TIMER)
                                               for c in body):
            raise ValueError(
                "an endless loop needs a run, sleep, io, wait or exit in its body, "
                "or it would spin without time passing"
            )
        self._open.pop()
        code, arg, _, d = self.ops[start]
        self.ops[start] = (code, arg, len(self.ops), d)
        return self._op(END, start)

    def fork(self, program, n=1):
        """Fork n children that run `program` (a Program; may be this one)."""
        if not isinstance(program, Program):
            raise TypeError(f"fork needs a Program, not {type(program).__name__}")
        return self._op(FORK, program, _check_int("fork count", n, 1, 2**31 - 1))

    def exit(self):
        """Exit (a program also exits when it runs off its end)."""
        return self._op(EXIT)

    def yield_(self):
        """sched_yield()."""
        return self._op(YIELD)

    def nice(self, n):
        """set_user_nice on itself."""
        return self._op(NICE, _check_int("nice", n, -20, 19))

    def setscheduler(self, policy, rt_priority=0):
        """sched_setscheduler on itself: policy 'normal' | 'fifo' | 'rr'."""
        rt_priority = _check_rt_priority(policy, rt_priority)
        return self._op(SETSCHED, POLICIES[policy], rt_priority)

    def set_affinity(self, cpus):
        """sched_setaffinity on itself: the CPUs (a non-empty list of CPU
        numbers) it may run on from now.  If the one it runs on is not
        among them, it is preempted and moved to the lowest of them before
        its next op (2.5's migration thread, 6.x's stopper); under
        linux-2.4.20, which has neither, as its CPU next schedules, which is
        at once.  A CPU the simulator lacks is refused when the program is
        spawned."""
        if isinstance(cpus, (str, bytes)) or not hasattr(cpus, "__iter__"):
            raise TypeError(f"set_affinity needs a list of CPU numbers, not {cpus!r}")
        mask = 0
        for c in cpus:
            mask |= 1 << _check_int("cpu in set_affinity", c, 0, MAX_CPUS - 1)
        if not mask:
            raise ValueError("set_affinity to no CPU: a task needs at least one")
        return self._op(AFFINITY, mask)  # the core keeps the set, the op its number

    def check_closed(self):
        if self._open:
            raise ValueError(f"the loop() opened at op {self._open[-1]} has no end()")

    def __len__(self):
        return len(self.ops)

    def __repr__(self):
        names = ("run sleep io wait post loop end fork exit yield nice setscheduler periodic frame "
                 "timer set_affinity").split()
        return "Program(" + ", ".join(names[op[0]] for op in self.ops) + ")"
