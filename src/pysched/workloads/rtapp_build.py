"""An rt-app workload's tasks, as read (rtapp_read), built into pysched
programs: the channels that stand for rt-app's mutexes, conditions and
barriers, the count of ops a workload expands to (checked before anything
is built) and the programs of its threads and of its forks."""
from .._checks import check_int, check_name
from .._suggest import did_you_mean
from ..program import Program
from .rtapp_read import BARRIER_ALL_TO_ALL, CHANNEL_PREFIX, MAX_THREADS, NAME_BYTES, refs

# the rest is the package's own
__all__ = ["channel"]

def channel(kind, name, slot=None):
    """The channel that stands for rt-app's resource `name` of `kind`
    ("mutex", "cond" or "barrier"; a barrier has a channel per thread that
    meets at it, numbered by `slot`)."""
    if kind not in ("mutex", "cond", "barrier"):
        raise ValueError(f"kind {kind!r} is not one of ('mutex', 'cond', 'barrier')")
    name = check_name("name", name)
    if (slot is None) != (kind != "barrier"):
        raise TypeError("a barrier's channel takes a slot, and only a barrier's")
    if slot is not None:
        slot = check_int("slot", slot, 0, MAX_THREADS - 1)
    return f"{CHANNEL_PREFIX}{kind}:{name}" + ("" if slot is None else f":{slot}")




class _OpCount:
    """Stands for a Program while a workload's ops are counted: each method
    is one op, as a Program's is."""

    def __init__(self):
        self.n = 0

    def _op(self, *args, **kwargs):
        self.n += 1
        return self

    run = sleep = timer = wait = post = loop = end = yield_ = fork = setscheduler = nice = _op


class Builder:
    def __init__(self, tasks):
        self.tasks = tasks
        self.mutexes = {}  # the mutexes' channels, in the order first used
        # threads that may wait on each condition: the instances of the
        # tasks that wait or sync on it, and one per fork event of such a task
        forks = {}
        for t in tasks.values():
            for ph in t.phases:
                for key, kind, v in ph.events:
                    if kind == "fork":
                        if v not in tasks:
                            raise ValueError(f"{ph.where}: {key} names task {v!r}, which is "
                                             f"not in tasks{did_you_mean(v, tasks)}")
                        forks[v] = forks.get(v, 0) + 1
        self.conds = {t.name: refs(t, ("wait", "sync")) for t in tasks.values()}
        self.waiters = {}
        for t in tasks.values():
            for c in self.conds[t.name]:
                self.waiters[c] = self.waiters.get(c, 0) + t.instance + forks.get(t.name, 0)
        # the threads that meet at each barrier (rt-app counts the users
        # from the file: the instances of the tasks that name it), numbered
        # in the file's order: barrier -> {task: its first thread's number}
        self.barriers, self.barrier_size = {}, {}
        for t in tasks.values():
            for b in sorted(refs(t, ("barrier",))):
                self.barriers.setdefault(b, {})[t.name] = self.barrier_size.get(b, 0)
                self.barrier_size[b] = self.barrier_size.get(b, 0) + t.instance
        self.forked = {name: Program() for name in forks}
        for name in forks:
            if refs(tasks[name], ("barrier",)):
                raise ValueError(f"tasks.{name}: a forked task cannot use a barrier (rt-app: "
                                 f"the number of its users must be known from the file)")
        # the events that become no op are dropped, so that a program built
        # reads no more events than it gets ops (MAX_OPS bounds the work)
        for t in tasks.values():
            for ph in t.phases:
                ph.events = [e for e in ph.events if not self._no_op(t, *e)]
        self.at_barrier = {t.name for t in tasks.values() if refs(t, ("barrier",))}

    def _no_op(self, task, key, kind, v):
        if kind in ("run", "runtime", "sleep"):
            return v == 0
        if kind == "timer":
            return v["period"] == 0
        if kind == "broad":
            return self._broadcasts(task, v) <= 0
        if kind == "barrier":
            return self.barrier_size[v] <= 1
        return False

    def _broadcasts(self, task, cond):
        """The posts of a broad of cond by task: one per other thread that may wait on it."""
        return self.waiters.get(cond, 0) - (cond in self.conds[task.name])

    def ops(self):
        """The ops the programs will have, plus one per thread (see
        MAX_OPS), counted without building them."""
        def count(task, instance):
            c = _OpCount()
            self.program(task, c, instance)
            return c.n

        total = 0
        for t in self.tasks.values():
            if t.instance == 0 and t.name not in self.forked:
                total += count(t, None)
            elif t.instance:
                total += t.instance + count(t, 0)
                if t.name in self.at_barrier and t.instance > 1:
                    # a barrier's first thread may differ from the others;
                    # those are alike
                    total += (t.instance - 1) * count(t, 1)
        for name in self.forked:
            c = _OpCount()
            self.fork_program(self.tasks[name], c)
            total += c.n
        return total

    def mutex(self, name):
        ch = channel("mutex", name)
        self.mutexes.setdefault(ch)
        return ch

    def program(self, task, prog=None, instance=None):
        """task's program (into prog); instance: which of its threads, for
        the barriers (None: a forked thread, which names none)."""
        prog = Program() if prog is None else prog
        if task.delay:
            # rt-app sleeps to the start + delay and its timers count from
            # there: a timer on the task's reference, absolute
            prog.timer(task.delay, relative=False)
        if task.loop == 0:
            return prog
        uses_rt = task.policy != "normal" or any(
            ph.sched and ph.sched[0] != "normal" for ph in task.phases)
        self._open(prog, task.loop)
        for ph in task.phases:
            if ph.sched is not None:
                policy, nice, rt = ph.sched
                if policy == "normal":
                    if uses_rt:
                        prog.setscheduler("normal")
                    prog.nice(nice)
                else:
                    prog.setscheduler(policy, rt)
            self._open(prog, ph.loop)
            for key, kind, v in ph.events:
                self._event(prog, task, ph, key, kind, v, instance)
            self._close(prog, ph.loop, ph.where)
        self._close(prog, task.loop, task.where)
        return prog

    @staticmethod
    def _open(prog, n):
        if n == -1:
            prog.loop()
        elif n > 1:
            prog.loop(n)

    @staticmethod
    def _close(prog, n, where):
        if n == -1 or n > 1:
            try:
                prog.end()
            except ValueError as e:
                raise ValueError(f"{where}: loops for ever and {e}") from None

    def _event(self, prog, task, ph, key, kind, v, instance):
        if kind in ("run", "runtime"):
            if v:
                prog.run(us=v)
        elif kind == "sleep":
            if v:
                prog.sleep(us=v)
        elif kind == "timer":
            if v["period"]:
                prog.timer(v["period"], relative=v["relative"])
        elif kind == "lock":
            prog.wait(self.mutex(v))
        elif kind == "unlock":
            prog.post(self.mutex(v))
        elif kind == "signal":
            prog.post(channel("cond", v))
        elif kind == "broad":
            n = self._broadcasts(task, v)
            if n > 0:
                self._repeat(prog, n, lambda: prog.post(channel("cond", v)))
        elif kind in ("wait", "sync"):
            cond, mutex = channel("cond", v["ref"]), self.mutex(v["mutex"])
            if kind == "sync":
                prog.post(cond)
            prog.post(mutex).wait(cond).wait(mutex)  # pthread_cond_wait
        elif kind == "barrier" and instance is not None:
            n, me = self.barrier_size[v], self.barriers[v][task.name] + instance
            mine = channel("barrier", v, me)
            if n <= BARRIER_ALL_TO_ALL:
                self._post_others(prog, v, n, me)
                self._repeat(prog, n - 1, lambda: prog.wait(mine))
            elif me == 0:
                self._repeat(prog, n - 1, lambda: prog.wait(mine))
                self._post_others(prog, v, n, me)
            else:
                prog.post(channel("barrier", v, 0)).wait(mine)
        elif kind == "yield":
            prog.yield_()
        elif kind == "fork":
            target = self.tasks[v]
            if target.cpus != task.cpus:
                raise ValueError(
                    f"{ph.where}: {key} of task {v!r}, whose cpus "
                    f"({'all' if target.cpus is None else list(target.cpus)}) differ from "
                    f"{task.name!r}'s ({'all' if task.cpus is None else list(task.cpus)}): a "
                    f"forked thread keeps its parent's affinity (a program cannot change it)")
            prog.fork(self.forked[v])

    @staticmethod
    def _post_others(prog, barrier, n, me):
        """Post the channel of each thread of the barrier but me (a count
        adds them up without naming them)."""
        if isinstance(prog, _OpCount):
            prog.n += n - 1
            return
        for k in range(n):
            if k != me:
                prog.post(channel("barrier", barrier, k))

    @staticmethod
    def _repeat(prog, n, op):
        if n > 2:
            prog.loop(n)
            op()
            prog.end()
        else:
            for _ in range(n):
                op()

    def fork_program(self, task, prog=None):
        """What a fork of task runs: its own policy and nice first (a
        forked thread starts as a copy of its parent), then its program."""
        prog = self.forked[task.name] if prog is None else prog
        if task.policy == "normal":
            prog.setscheduler("normal").nice(task.nice)
        else:
            prog.setscheduler(task.policy, task.rt_priority)
        return self.program(task, prog)


def thread_name(task, index):
    name = f"{task}-{index}"
    raw = name.encode()
    if len(raw) > NAME_BYTES:
        name = raw[:NAME_BYTES].decode(errors="ignore")
    return name
