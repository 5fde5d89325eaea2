"""The Linux 2.4.20 scheduler written in Python: goodness(), one global
runqueue, epochs that end in a recalculation of every task's counter.

It is the built-in C policy csrc/policies/policy_linux24.c (preset
``linux-2.4.20``) hook for hook, and equal to it at every tick
(tests/policies/api/test_python_linux24.py compares the two tick by tick).  The kernel
facts are those of the fact sheet docs/schedulers/linux-2.4.20.md ("§n" below),
which cites the 2.4 sources; names are the kernel's (goodness, counter,
NICE_TO_TICKS, add_to_runqueue, reschedule_idle ...), and the comments say
which kernel function or section each hook mirrors.  The modelling choices
are the C file's (its header lists them): one CPU runs the UP kernel, more
run the SMP kernel; every task is its own process (mm = pid) unless
spawned with ``init={"mm": pid}``; zombies are reaped at once; the idle
tasks are never recalculated; an IPI is instantaneous.

How it sits on the Python policy API:

- 2.4's ``p->counter`` is the engine's ``time_slice`` (the C policy shows it
  under both names; a Python policy cannot alias a field, so here it is
  ``time_slice`` only).
- ``runqueue_head`` is ``self.runqueue``: a dict of pids in list order
  (head first; a dict is an ordered set: append, remove and move to the
  tail in O(1)).  ``nr_running`` (the list's length) is kept in CPU 0's
  runqueue fields, as the C keeps the global list in CPU 0's area.
- Task fields ``mm``, ``sched_yield`` (the SCHED_YIELD bit of p->policy),
  ``need_resched`` (p->need_resched) and ``sleep_time``; runqueue fields
  ``active_mm`` (the mm the idle task borrowed), ``last_schedule``,
  ``nr_recalculations`` and ``nr_recalc_visits``, all as the C names them.
  The C's run_next/run_prev links are the dict's order here.
- The idle task's ``counter = -100`` and ``nice = 20`` (cpu_idle(), §1) are
  the engine's fields, which a policy does not set: they are the constants
  IDLE_COUNTER and IDLE_NICE, used where the idle task is scored (the UP
  preemption test against a running idle task).
- A task moved to another CPU (pick_next's task_set_cpu, migrate) is moved
  by setting ``p.cpu``, which the engine counts and logs as a migration;
  prio changes and expiries are logged with ``log_event``, as the C's
  ps_log.
- State holds pids, never Task views.

    sim = ps.Simulator(Linux24, cpus=2)          # or "linux-2.4.20-py" once
    ps.register_policy(Linux24)                  # registered
"""
from ..base import Param, Policy

MAX_PRIO = 140          # display only: the idle task's prio
IDLE_COUNTER = -100     # cpu_idle(): current->counter = -100 (§1)
IDLE_NICE = 20          # cpu_idle(): current->nice = 20 (§1)
SCHED_OTHER, SCHED_FIFO, SCHED_RR = 0, 1, 2
TASK_RUNNING = 0
NO_IDLE = 2**64 - 1     # reschedule_idle's oldest_idle = (cycles_t)-1

SPAWN_NICE_TO_TICKS, SPAWN_DEF_COUNTER, SPAWN_HALF, SPAWN_ZERO = range(4)


def tick_scale(hz, x):
    """TICK_SCALE(x) for HZ: the #if HZ chain at the top of sched.c (§1)."""
    if hz < 200:
        return x >> 2
    if hz < 400:
        return x >> 1
    if hz < 800:
        return x
    if hz < 1600:
        return x << 1
    return x << 2


def nice_to_ticks(hz, nice):
    """NICE_TO_TICKS(nice) = TICK_SCALE(20 - nice) + 1 (§1)."""
    return tick_scale(hz, 20 - nice) + 1


def prio_of(policy, rt_priority, nice):
    """2.6's numbering, for display (goodness never reads it): 120 + nice,
    or 99 - rt_priority for SCHED_FIFO/RR."""
    return MAX_PRIO - 20 + nice if policy == SCHED_OTHER else 99 - rt_priority


class Linux24(Policy):
    """Vanilla 2.4.20 goodness scheduler in Python (i386: HZ=100,
    PROC_CHANGE_PENALTY 15): the C preset linux-2.4.20, tick for tick."""

    name = "linux-2.4.20-py"
    hz = 100
    max_prio = MAX_PRIO
    # the C preset's parameters, same names, defaults, ranges and units
    params = {
        "proc_change_penalty": Param(
            15, 0, 1000, "goodness",
            "PROC_CHANGE_PENALTY: SMP goodness bonus on the task's last CPU (i386 15; alpha, "
            "sparc64, s390 20); unused on one CPU, as on a UP kernel"),
        # DEF_COUNTER = 10*HZ/100 and MAX_COUNTER = 20*HZ/100: given at HZ=1000
        "def_counter": Param(
            100, 1, 1_000_000, "ticks",
            "DEF_COUNTER (10*HZ/100): INIT_TASK's counter; a spawned task's with spawn_counter=1",
            True),
        "max_counter": Param(
            200, 1, 1_000_000, "ticks",
            "MAX_COUNTER (20*HZ/100): release_task clamps the reaper's counter to it (>=)", True),
        "spawn_counter": Param(
            0, 0, 3, "enum",
            "counter of a task created from Python (the kernel only forks, fact sheet §12): "
            "0 NICE_TO_TICKS(nice), what fork gives the child of a shell parked at its sleeper "
            "fixed point 2N-1, i.e. the steady state; 1 DEF_COUNTER; 2 (N+1)>>1, the split of a "
            "parent with a fresh slice; 3 zero, it waits for the next recalculation"),
    }
    task_fields = ("mm", "sched_yield", "need_resched", "sleep_time")
    rq_fields = ("nr_running", "active_mm", "last_schedule", "nr_recalculations",
                 "nr_recalc_visits")
    headline = ("time_slice", "mm")

    def setup(self):
        self.runqueue = {}                  # runqueue_head: pids, head first (§3)
        self.smp = self.cpus > 1            # CONFIG_SMP: one CPU runs the UP kernel
        hz = self.hz_now
        self.n2t = {n: nice_to_ticks(hz, n) for n in range(-20, 20)}   # NICE_TO_TICKS

    # ---- need_resched, CPUs, mm ----

    def set_need_resched(self, tsk):
        """tsk->need_resched = 1 on a task running on tsk->cpu (the only kind
        2.4 sets it on), plus the engine's flag that makes that CPU
        schedule()."""
        tsk.need_resched = 1
        self.resched(tsk.cpu)

    def can_schedule(self, p, cpu):
        """can_schedule(p, cpu): cpus_runnable & cpus_allowed & (1 << cpu) on
        SMP, 1 on UP (§5.5); cpus_runnable is ~0 unless p runs somewhere
        (task_has_cpu on a CPU other than `cpu`)."""
        if not self.smp:
            return True
        return p.cpus_allowed >> cpu & 1 and not (p.cpu != cpu and p.running)

    def active_mm(self, p):
        """p->active_mm: its own mm, or for an idle task (mm NULL) the mm it
        borrowed from the last user task that ran on its CPU (§5.8, §15.2)."""
        return self.rq(p.cpu).active_mm if p.is_idle else p.mm

    def task_set_cpu(self, p, cpu):
        """task_set_cpu's processor = cpu (the engine counts and logs the
        migration when it changes)."""
        if p.cpu != cpu:
            p.cpu = cpu

    def set_prio(self, p, prio):
        if p.prio != prio:
            self.log_event("prio", p.cpu, p, prio=prio, value=p.prio)
        p.prio = prio

    # ---- goodness (§4) ----

    def goodness(self, p, processor, this_cpu, this_mm):
        """goodness(p, this_cpu, this_mm), with p->processor passed as
        `processor` (__schedule_tail's push scores prev with its real
        processor, this CPU).  An idle task scores with its counter -100 and
        nice 20."""
        # select the current process after every other runnable process,
        # but before the idle thread; also, don't trigger a counter
        # recalculation
        if p.sched_yield:
            return -1
        if p.policy == SCHED_OTHER:
            idle = p.is_idle
            weight = IDLE_COUNTER if idle else p.time_slice
            if not weight:
                return 0
            if self.smp and processor == this_cpu:
                weight += self.proc_change_penalty
            # .. and a slight advantage to the current MM
            mm = p.mm
            if mm == this_mm or not mm:
                weight += 1
            return weight + 20 - (IDLE_NICE if idle else p.nice)
        # SCHED_FIFO and SCHED_RR: the counter is ignored
        return 1000 + p.rt_priority

    def preemption_goodness(self, prev, p, p_processor, cpu):
        """preemption_goodness(prev, p, cpu): positive means replace prev,
        which runs on cpu; both are scored with prev's active_mm (§4)."""
        mm = self.active_mm(prev)
        return (self.goodness(p, p_processor, cpu, mm)
                - self.goodness(prev, prev.cpu, cpu, mm))

    # ---- the runqueue list (§3) ----

    def add_to_runqueue(self, p):
        """2.4.20 adds at the TAIL (Davda; up to 2.4.19 it was the head)."""
        self.runqueue[p.pid] = None
        self.rq(0).nr_running = len(self.runqueue)

    def del_from_runqueue(self, p):
        """nr_running--; sleep_time = jiffies; list_del (§2)."""
        del self.runqueue[p.pid]
        self.rq(0).nr_running = len(self.runqueue)
        p.sleep_time = self.jiffies

    def move_last_runqueue(self, p):
        rq = self.runqueue
        del rq[p.pid]
        rq[p.pid] = None

    # ---- reschedule_idle and try_to_wake_up (§7) ----

    def reschedule_idle(self, p, processor, this_cpu, this_curr):
        """reschedule_idle(p): find a CPU for p, which is on the runqueue and
        runs nowhere (woken, forked, or prev just released).  `processor` is
        p->processor; this_cpu is smp_processor_id(), running this_curr
        (in __schedule_tail: the task being switched to).  IPIs only make a
        CPU call schedule(), which is what set_need_resched does here."""
        if not self.smp:
            # UP: preempt the current task if p is better on its mm
            if self.preemption_goodness(this_curr, p, processor, this_cpu) > 0:
                self.set_need_resched(this_curr)
            return

        def cpu_curr(cpu):
            return this_curr if cpu == this_cpu else self.curr(cpu)

        allowed = p.cpus_allowed
        # shortcut if the woken up task's last CPU is idle now
        best_cpu = processor
        if allowed >> best_cpu & 1 and cpu_curr(best_cpu).is_idle:
            self.set_need_resched(self.idle(best_cpu))     # send_now_idle
            return
        # the least recently active idle CPU (first one on ties), else the
        # busy CPU whose task p would preempt most; smp_num_siblings is 1
        oldest_idle = NO_IDLE
        target_tsk = None
        max_prio = 0
        for cpu in range(self.cpus):
            if not allowed >> cpu & 1:
                continue
            tsk = cpu_curr(cpu)
            if tsk.is_idle:
                last = self.rq(cpu).last_schedule
                if last < oldest_idle:
                    oldest_idle = last
                    target_tsk = tsk
            elif oldest_idle == NO_IDLE:
                prio = self.preemption_goodness(tsk, p, processor, cpu)
                if prio > max_prio:
                    max_prio = prio
                    target_tsk = tsk
        # an idle target: send_now_idle; a busy one: tsk->need_resched = 1;
        # none: p waits on the global list
        if target_tsk is not None:
            self.set_need_resched(target_tsk)

    def wake_up(self, p, this_cpu, synchronous):
        """try_to_wake_up(p, synchronous) once p is known to be off the
        runqueue: add it at the tail, then reschedule_idle unless a sync
        wakeup may run it on the waker's CPU (§7).  The counter is not
        touched."""
        self.add_to_runqueue(p)
        if not synchronous or not p.cpus_allowed >> this_cpu & 1:
            self.reschedule_idle(p, p.cpu, this_cpu, self.curr(this_cpu))

    # ---- hooks ----

    def spawn_counter_of(self, nice):
        """The counter of a task created from Python (§12, INFERRED: the
        kernel has no spawn-from-nothing path); see the parameter
        spawn_counter's doc."""
        n = self.n2t[nice]
        mode = self.spawn_counter
        if mode == SPAWN_DEF_COUNTER:
            return self.def_counter
        if mode == SPAWN_HALF:
            return (n + 1) >> 1
        if mode == SPAWN_ZERO:
            return 0
        return n

    def task_spawn(self, p):
        """A task created from Python: a fresh process (mm = pid unless init
        shares one) with the counter spawn_counter chooses (a time_slice
        given to spawn replaces it afterwards), woken as wake_up_process
        does (§7, §12)."""
        mm = p.mm
        if mm < 0:
            raise ValueError(f"mm={mm} must be >= 0 (a pid, or 0 for a new process)")
        if mm == 0 or mm > p.pid:
            p.mm = p.pid
        p.sched_yield = 0
        p.need_resched = 0
        p.sleep_time = self.jiffies
        nice = p.nice
        if not p.time_slice:
            p.time_slice = self.spawn_counter_of(nice)
        p.static_prio = MAX_PRIO - 20 + nice
        p.prio = prio_of(p.policy, p.rt_priority, nice)
        self.wake_up(p, p.cpu, False)
        return False

    def task_fork(self, parent, p):
        """do_fork (§9): the counter split, then wake_up_process(child) with
        the parent as current.  The child is its own process (mm = its
        pid); it runs first only if the split emptied the parent's counter
        or it preempts."""
        p.mm = p.pid
        p.need_resched = 0     # the parent's flag is clear while it runs its program
        p.sleep_time = self.jiffies
        counter = parent.time_slice
        p.time_slice = (counter + 1) >> 1
        parent.time_slice = counter >> 1
        if not counter >> 1:
            self.set_need_resched(parent)
        self.task_set_cpu(p, parent.cpu)     # processor = current->processor
        self.wake_up(p, parent.cpu, False)

    def task_exit(self, p, parent):
        """release_task in the reaper's (the parent's) context (§10): the
        child's counter goes back to it, clamped with >= (a reaper above
        MAX_COUNTER is lowered to it).  No need_resched.  Orphans are reaped
        by init, which is not modelled."""
        if parent is None:
            return
        counter = parent.time_slice + p.time_slice
        if counter >= self.max_counter:
            counter = self.max_counter
        parent.time_slice = counter

    def wakeup(self, p, waker, sync):
        """try_to_wake_up (§7).  The task_on_runqueue early return (no move,
        no resched) is kept as the kernel has it.  A sync wakeup names the
        waker's CPU as this_cpu.  Every reschedule goes through need_resched
        here, so the engine is told False."""
        if p.pid in self.runqueue:
            return False
        self.wake_up(p, p.cpu if waker is None else waker.cpu, sync)
        return False

    def deactivate(self, prev):
        """schedule()'s `default: del_from_runqueue(prev)` for a prev that
        left TASK_RUNNING (§5.3)."""
        if prev.pid in self.runqueue:
            self.del_from_runqueue(prev)

    def recalculate(self, this_cpu):
        """The recalculation (§5.6): every task but the idle tasks, sleepers
        and RT tasks and tasks running on other CPUs included (exited ones
        are reaped)."""
        n2t = self.n2t
        visits = 0
        for p in self.tasks():
            p.time_slice = (p.time_slice >> 1) + n2t[p.nice]
            visits += 1
        rq = self.rq(this_cpu)
        rq.nr_recalc_visits += visits
        rq.nr_recalculations += 1

    def pick_next(self, this_cpu):
        """schedule() from step 2 (§5): the engine has already
        del_from_runqueue'd a prev that left TASK_RUNNING (the kernel
        refills an exhausted RR prev first; the order changes nothing, as a
        dequeued prev is not moved)."""
        prev = self.curr(this_cpu)
        prev_idle = prev.is_idle
        # move an exhausted RR process to be last (§5.2)
        if not prev_idle and prev.policy == SCHED_RR and not prev.time_slice:
            prev.time_slice = self.n2t[prev.nice]
            if prev.pid in self.runqueue:
                self.move_last_runqueue(prev)
        prev.need_resched = 0

        # the selection (§5.5): head to tail, strict >, so the first in the
        # list wins ties; a best goodness of exactly 0 recalculates and
        # repeats
        this_mm = self.active_mm(prev)
        task, goodness, smp = self.task, self.goodness, self.smp
        while True:
            c = -1000
            next = None                     # idle_task(this_cpu)
            for pid in self.runqueue:
                p = task(pid)
                if smp and not self.can_schedule(p, this_cpu):
                    continue
                weight = goodness(p, p.cpu, this_cpu, this_mm)
                if weight > c:
                    c = weight
                    next = p
            if c:
                break
            self.recalculate(this_cpu)
        if next is not None:
            self.task_set_cpu(next, this_cpu)
        if (next is None) if prev_idle else (next is not None and next.pid == prev.pid):
            # we won't go through the normal tail, so do this by hand
            prev.sched_yield = 0
            return prev

        # a real switch (§5.8)
        rq = self.rq(this_cpu)
        rq.last_schedule = self.now_ns
        if next is None:
            # a NULL-mm next (the idle task) borrows prev->active_mm
            rq.active_mm = this_mm
        # __schedule_tail(prev): clear the yield bit; on SMP push a
        # preempted, non-yielding prev toward another CPU (task_has_cpu(prev)
        # is false here: nothing runs between the switch and the tail in the
        # simulator)
        yielded = prev.sched_yield
        prev.sched_yield = 0
        if smp and not prev_idle and prev.state == TASK_RUNNING and not yielded:
            self.reschedule_idle(prev, this_cpu, this_cpu,
                                 self.idle(this_cpu) if next is None else next)
        return next

    def tick(self, cpu, p):
        """update_process_times (§6), for every CPU's current task: the idle
        task (pid 0) is skipped; any other policy is charged; at 0 every
        policy but SCHED_FIFO is rescheduled (Davda's hunk, INFERRED for
        2.4.20)."""
        if p.is_idle:
            return
        counter = p.time_slice - 1
        if counter > 0:
            p.time_slice = counter
            return
        p.time_slice = 0
        if p.policy != SCHED_FIFO:
            self.set_need_resched(p)
            self.log_event("expire", cpu, p)

    def yield_(self, p):
        """sys_sched_yield (§8): a no-op unless another task is pending; the
        yield bit only for SCHED_OTHER; need_resched and the move to the
        tail for all.  The counter is not touched."""
        nr_pending = len(self.runqueue)
        if self.smp:
            # subtract non-idle processes running on any CPU
            for c in range(self.cpus):
                if not self.curr(c).is_idle:
                    nr_pending -= 1
        else:
            # on UP this process is on the runqueue as well
            nr_pending -= 1
        if not nr_pending:
            return
        if p.policy == SCHED_OTHER:
            p.sched_yield = 1
        self.set_need_resched(p)
        self.move_last_runqueue(p)

    def set_nice(self, p, nice):
        """sys_setpriority / sys_nice (§11): only p->nice (which the engine
        sets after this hook); no need_resched, no counter change.
        static_prio and prio follow for display."""
        p.static_prio = MAX_PRIO - 20 + nice
        self.set_prio(p, prio_of(p.policy, p.rt_priority, nice))

    def set_scheduler(self, p, policy, rt_priority):
        """setscheduler (§11): policy and rt_priority (which the engine sets
        after this hook; p->policy = policy also clears the yield bit); no
        list move, no counter change; need_resched goes to the caller.  The
        hook cannot tell a program's own call from Python's: a call on a
        running task is taken as the task's own (a program can only set its
        own policy), so it reschedules that task; on any other task there is
        no caller to reschedule."""
        p.sched_yield = 0
        self.set_prio(p, prio_of(policy, rt_priority, p.nice))
        if p.running:
            self.set_need_resched(p)

    def migrate(self, p, dest):
        """The engine's set_cpus_allowed for a task that is not running (or
        a running prev it moves in schedule()): one global runqueue, so
        moving is only p->processor = dest (see the C file's header for why
        nothing else happens)."""
        self.task_set_cpu(p, dest)

    def check(self):
        """The policy's invariants (the C's check_linux24, on what Python
        keeps): the list holds exactly the queued live tasks, nr_running
        counts them, no idle task is queued, need_resched is set only on a
        CPU's current task, no yield bit outlives the schedule() after its
        yield, and mm ids are pids."""
        live = set()
        for t in self.tasks():
            on_list = t.pid in self.runqueue
            assert on_list == bool(t.on_rq), \
                f"pid {t.pid}: on_rq {t.on_rq} but {'on' if on_list else 'off'} the runqueue"
            live.add(t.pid)
            # spawn takes an mm in 1..pid (a process before it), fork its own
            assert 1 <= t.mm <= t.pid, f"pid {t.pid}: mm {t.mm} is not a pid up to its own"
            assert t.need_resched in (0, 1), f"pid {t.pid}: need_resched {t.need_resched}"
            assert not t.need_resched or t.running, \
                f"pid {t.pid}: need_resched but it is not a CPU's current task"
            assert not t.sched_yield, f"pid {t.pid}: its SCHED_YIELD bit outlived a schedule()"
        stale = [pid for pid in self.runqueue if pid not in live]
        assert not stale, f"the runqueue lists tasks that are not live: {stale}"
        assert self.rq(0).nr_running == len(self.runqueue), "nr_running is not the list's length"
        for c in range(1, self.cpus):
            assert self.rq(c).nr_running == 0, f"cpu {c}: its area holds a runqueue"
