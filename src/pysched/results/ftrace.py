"""The text of ``perf script`` for the kernel's scheduler tracepoints: the
formats, and a run's event log written in them (``sim.export_ftrace``).

The fields are the kernel's, as TP_printk prints them in
include/trace/events/sched.h (Linux 6.18, the same text as
/sys/kernel/tracing/events/sched/*/format on a 6.18 kernel):

    sched_switch        prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==>
                        next_comm=%s next_pid=%d next_prio=%d
    sched_waking, sched_wakeup, sched_wakeup_new
                        comm=%s pid=%d prio=%d target_cpu=%03d
    sched_process_fork  comm=%s pid=%d child_comm=%s child_pid=%d
    sched_process_exit  comm=%s pid=%d prio=%d group_dead=%s
    sched_migrate_task  comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
    sched_stat_runtime  comm=%s pid=%d runtime=%Lu [ns]

prev_state is __print_flags of the state (S, D, T, t, X, Z, P, I) or "R",
then "+" when the task was preempted (TASK_REPORT_MAX).  Each line starts as
perf 6.1's builtin-script.c prints a sample (perf_sample__fprintf_start and
process_event, with ``-F comm,pid,tid,cpu,time,event,trace --ns``):
"%16s %5d/%-5d [%03d] %5lu.%09llu: %*s: " -- the task current on the CPU
(the one that switches out, or the waker), its pid/tid, the CPU, the time
and the event name right-aligned to the longest one.
"""
import gzip

import numpy as np

from .._core import StateError
from ..codes import EVENT_KINDS, SCHED_POLICIES, TASK_STATES

# the package's own: no name here is part of the public API
__all__ = []

TASK_COMM_LEN = 16  # include/linux/sched.h: a comm is 15 bytes and its NUL
EVENT_WIDTH = len("sched:sched_process_exit")  # the longest name written

# the simulator's task->state codes as prev_state prints them; a task that
# leaves the CPU still TASK_RUNNING was preempted (or yielded, which the log
# does not tell apart): "R+"
PREV_STATE = {"running": "R+", "interruptible": "S", "uninterruptible": "D",
              "zombie": "Z", "dead": "X"}
_STATE_OF_CODE = {code: PREV_STATE[name] for code, name in TASK_STATES.items()}

_SWITCH, _WAKEUP, _FORK, _EXIT, _MIGRATE = (EVENT_KINDS.index(k) for k in
                                            ("switch", "wakeup", "fork", "exit", "migrate"))


def comm(name):
    """A task's name as the kernel keeps it: at most TASK_COMM_LEN - 1 bytes."""
    return name.encode()[:TASK_COMM_LEN - 1].decode(errors="ignore")


def line(cur_comm, cur_pid, cpu, time_ns, event, fields):
    """One line of perf script: the sample's task, CPU, time and event, then
    the event's fields."""
    secs, ns = divmod(time_ns, 1_000_000_000)
    return (f"{cur_comm:>16} {cur_pid:5d}/{cur_pid:<5d} [{cpu:03d}] {secs:5d}.{ns:09d}: "
            f"{'sched:' + event:>{EVENT_WIDTH}}: {fields}\n")


def switch_fields(prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio):
    return (f"prev_comm={prev_comm} prev_pid={prev_pid} prev_prio={prev_prio} "
            f"prev_state={prev_state} ==> next_comm={next_comm} next_pid={next_pid} "
            f"next_prio={next_prio}")


def wakeup_fields(comm_, pid, prio, target_cpu):
    return f"comm={comm_} pid={pid} prio={prio} target_cpu={target_cpu:03d}"


def _opener(path):
    return gzip.open(path, "wt", encoding="utf-8") if str(path).endswith(".gz") else \
        open(path, "w", encoding="utf-8")


def _idle(cpu):
    return f"swapper/{cpu}"


def write(sim, path):
    """Write sim's event log to `path` as perf script text (gzip if the name
    ends in .gz); see Simulator.export_ftrace."""
    if sim.record == "counters":
        raise StateError("export_ftrace needs the event log, which this run did not keep: "
                         "create the Simulator with record='events' (or 'series') and run it again")
    ev = sim.events()
    st = sim.stats()
    names = {int(p): comm(n) for p, n in zip(st["pid"], st["name"])}
    prio = {int(p): int(q) for p, q in zip(st["pid"], st["static_prio"])}
    curr = [0] * sim.cpus          # the task on each CPU, as the switches say
    running_on = {}                # pid -> the CPU it runs on

    def name(pid, cpu):
        return _idle(cpu) if pid == 0 else names.get(pid, f"task{pid}")

    def hdr(pid, cpu):
        # perf names the idle task by its thread's comm, "swapper"
        return "swapper" if pid == 0 else names.get(pid, f"task{pid}")

    # tasks spawned from Python have no parent to fork them: they become
    # runnable as a new task does, with sched_wakeup_new at their start, on
    # the CPU they were queued on: that of their first event (a migration's
    # origin), or for one without any (it never ran nor moved) the one it
    # is still on
    first = np.unique(ev["pid"], return_index=True)
    firsts = ev[first[1]]
    first_cpu = dict(zip(st["pid"].tolist(), st["cpu"].tolist()))
    first_cpu.update(zip(first[0].tolist(), np.where(firsts["kind"] == _MIGRATE, firsts["other"],
                                                     firsts["cpu"]).tolist()))
    start0 = int(ev["time_ns"][0]) if len(ev) else 0
    spawned = sorted((int(s), int(p)) for p, s, pp in zip(st["pid"], st["start_ns"], st["ppid"])
                     if pp == 0 and s >= start0)
    k = 0

    def spawn_lines(until):
        nonlocal k
        while k < len(spawned) and spawned[k][0] <= until:
            s, p = spawned[k]
            c = first_cpu[p]
            out.write(line(hdr(curr[c], c), curr[c], c, s, "sched_wakeup_new",
                           wakeup_fields(name(p, c), p, prio[p], c)))
            k += 1

    with _opener(path) as out:
        # the run's end: a trace ends at its last line, a run at its clock
        out.write(f"# pysched export: preset={sim.preset} cpus={sim.cpus} hz={sim.hz} "
                  f"seed={sim.seed} end_ns={sim.now_ns}\n")
        for row in st:
            mask = int(row["cpus_allowed"])
            out.write(f"# pysched task: pid={row['pid']} ppid={row['ppid']} nice={row['nice']} "
                      f"policy={SCHED_POLICIES[int(row['policy'])]} "
                      f"rt_priority={row['rt_priority']} "
                      f"cpus_allowed={mask:#x} comm={comm(row['name'])}\n")
        for t, cpu, kind, pid, other, pr, value in zip(
                ev["time_ns"].tolist(), ev["cpu"].tolist(), ev["kind"].tolist(),
                ev["pid"].tolist(), ev["other"].tolist(), ev["prio"].tolist(),
                ev["value"].tolist()):
            spawn_lines(t)
            if kind == _SWITCH:
                prev, nxt = other, pid
                prio[nxt] = pr
                out.write(line(hdr(prev, cpu), prev, cpu, t, "sched_switch", switch_fields(
                    name(prev, cpu), prev, prio.get(prev, 120) if prev else 120,
                    _STATE_OF_CODE.get(value, "R") if prev else "R",
                    name(nxt, cpu), nxt, pr if nxt else 120)))
                curr[cpu] = nxt
                running_on.pop(prev, None)
                if nxt:
                    running_on[nxt] = cpu
            elif kind == _WAKEUP:
                prio[pid] = pr
                # a task's post runs on its own CPU; an interrupt's on the
                # wakee's, in the context of whatever runs there
                wcpu = running_on.get(other, cpu) if other > 0 else cpu
                waker = other if other > 0 else curr[wcpu]
                out.write(line(hdr(waker, wcpu), waker, wcpu, t, "sched_wakeup",
                               wakeup_fields(name(pid, cpu), pid, pr, cpu)))
            elif kind == _FORK:
                prio[pid] = pr
                pcpu = running_on.get(other, cpu)
                out.write(line(hdr(other, pcpu), other, pcpu, t, "sched_process_fork",
                               f"comm={name(other, pcpu)} pid={other} "
                               f"child_comm={name(pid, cpu)} child_pid={pid}"))
                out.write(line(hdr(other, pcpu), other, pcpu, t, "sched_wakeup_new",
                               wakeup_fields(name(pid, cpu), pid, pr, cpu)))
            elif kind == _EXIT:
                out.write(line(hdr(pid, cpu), pid, cpu, t, "sched_process_exit",
                               f"comm={name(pid, cpu)} pid={pid} prio={pr} group_dead=true"))
            elif kind == _MIGRATE:
                prio[pid] = pr
                out.write(line(hdr(curr[cpu], cpu), curr[cpu], cpu, t, "sched_migrate_task",
                               f"comm={name(pid, cpu)} pid={pid} prio={pr} orig_cpu={other} "
                               f"dest_cpu={cpu}"))
            elif pid > 0 and pr:
                prio[pid] = pr
        spawn_lines(sim.now_ns)
