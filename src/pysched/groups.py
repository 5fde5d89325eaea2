"""Task groups of the fair presets: the cgroup ``cpu`` controller and autogroup.

A task group (kernel/sched/fair.c's ``struct task_group``, made by the cpu
controller's ``mkdir``) has shares (``cpu.shares``, 2..262144, 1024 by
default; or ``cpu.weight`` of cgroup v2, 1..10000, 100 by default, which
``cpu_weight_write_u64`` turns into shares with ``sched_weight_from_cgroup``:
``DIV_ROUND_CLOSEST(weight * 1024, 100)``), a cfs_rq and an entity on every
CPU, and may hold groups of its own.  The fair presets (CFS and EEVDF) run
them in C (csrc/policies/fair_group.c); this module is the Python side:
the handles, the names, autogroup's sessions and the per-group results.

Autogroup (kernel/sched/autogroup.c, ``CONFIG_SCHED_AUTOGROUP``): with the
preset parameter ``autogroup=1`` (``sched_autogroup_enabled``), every
session -- ``sim.spawn(..., session="name")``, as ``setsid`` makes one --
gets a task group of its own below the root, whose shares come from the
session's nice (``sched_prio_to_weight[nice + 20]``: 1024 at nice 0, as
``proc_sched_autogroup_set_nice`` sets them); a forked task stays in its
parent's group, hence its session.  A task placed in a group with
``group=`` is not in an autogroup (``task_wants_autogroup``: only tasks of
the root group are), and a task with no session is in the root group, as
the init session's tasks are.
"""
from dataclasses import dataclass

import numpy as np

from ._checks import check_int, check_name

__all__ = ["TaskGroup", "shares_from_weight"]

# psHooks.control requests of the fair policies (fair_group.c, FAIR_CTL_*)
GROUP_NEW, SET_SHARES, MOVE, GROUP_INFO, TASK_GROUP, SPAWN_GROUP, GROUP_CPU, NGROUPS = range(8)

MIN_SHARES, MAX_SHARES = 2, 1 << 18          # MIN_SHARES, MAX_SHARES
CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_DFL, CGROUP_WEIGHT_MAX = 1, 100, 10000
NICE_0_SHARES = 1024
# kernel/sched/core.c sched_prio_to_weight, nice -20 .. 19 (an autogroup's shares)
NICE_WEIGHT = (88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
               9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
               1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
               110, 87, 70, 56, 45, 36, 29, 23, 18, 15)
ROOT = "/"


@dataclass(frozen=True)
class TaskGroup:
    """A handle of a task group: its path ("/" the root, "/a/b" group b
    inside group a) and its number in the simulator.  Anything that takes
    a group takes this or the path."""
    path: str
    gid: int

    def __str__(self):
        return self.path


def shares_from_weight(weight):
    """cgroup v2's cpu.weight (1..10000) as cpu.shares:
    sched_weight_from_cgroup, DIV_ROUND_CLOSEST_ULL(weight * 1024, 100)."""
    weight = check_int("weight", weight, CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX)
    return (weight * 1024 + CGROUP_WEIGHT_DFL // 2) // CGROUP_WEIGHT_DFL


def shares_of(shares, weight, default=NICE_0_SHARES):
    """The shares from shares= or weight= (not both), checked."""
    if shares is not None and weight is not None:
        raise ValueError("give shares= (cpu.shares) or weight= (cpu.weight), not both")
    if weight is not None:
        return shares_from_weight(weight)
    if shares is None:
        return default
    return check_int("shares", shares, MIN_SHARES, MAX_SHARES)


def _normal_path(path):
    path = check_name("group", path)
    parts = [p for p in path.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"group {path!r}: '.' and '..' are not group names")
    return ROOT + "/".join(parts)


def _parent_path(path):
    return ROOT + path[1:].rpartition("/")[0] if path != ROOT else None


def call(sim, op, *args):
    """sim's policy call `op`, or a ValueError naming the preset when its
    policy has no task groups."""
    try:
        return sim._core.policy_call(op, tuple(int(a) for a in args))
    except ValueError as refused:
        if "takes no policy calls" in str(refused):
            raise ValueError(f"task groups are a feature of the fair presets (CFS and EEVDF, "
                             f"e.g. linux-6.12-eevdf); preset {sim.preset!r} has none") from None
        raise


def resolve(sim, group):
    """The TaskGroup of a handle or a path (KeyError naming the groups)."""
    if isinstance(group, TaskGroup):
        path = group.path
    else:
        path = _normal_path(group)
    if path == ROOT:
        return TaskGroup(ROOT, 0)
    gid = sim._groups.get(path)
    if gid is None or (isinstance(group, TaskGroup) and group.gid != gid):
        known = ", ".join(sorted(sim._groups)) or "none"
        raise KeyError(f"no task group {path!r} in this simulator (its groups: {known})")
    return TaskGroup(path, gid)


def make(sim, name, shares, parent, exist_ok=False):
    """Make group `name` (a path: missing ancestors are made with 1024
    shares, as mkdir -p would with the default cpu.shares) below `parent`."""
    base = resolve(sim, parent if parent is not None else ROOT).path
    path = _normal_path(base.rstrip("/") + "/" + check_name("group name", name).lstrip("/"))
    if path == ROOT:
        raise ValueError("the root group exists already (it is every CPU's root cfs_rq)")
    if path in sim._groups:
        if exist_ok:
            return TaskGroup(path, sim._groups[path])
        raise ValueError(f"task group {path!r} exists already")
    up = _parent_path(path)
    up_gid = 0 if up == ROOT else make(sim, up, NICE_0_SHARES, None, exist_ok=True).gid
    gid = call(sim, GROUP_NEW, up_gid, shares)[0]
    sim._groups[path] = gid
    return TaskGroup(path, gid)


def session_group(sim, session):
    """The autogroup of `session` (made at its first task), or None when
    autogroup is off (the session's tasks stay in the root group)."""
    session = check_name("session", session)
    if not sim.params.get("autogroup"):
        return None
    path = sim._sessions.get(session)
    if path is None:
        # autogroup_create: a group below the root, nice 0's weight; its
        # name is the kernel's /proc/PID/autogroup form
        path = f"/autogroup-{len(sim._sessions) + 1}"
        make(sim, path, NICE_0_SHARES, None)
        sim._sessions[session] = path
    return resolve(sim, path)


def session_nice(sim, session, nice):
    """proc_sched_autogroup_set_nice: the session's autogroup weighs
    sched_prio_to_weight[nice + 20] (1024 at nice 0)."""
    session = check_name("session", session)
    nice = check_int("nice", nice, -20, 19)
    path = sim._sessions.get(session)
    if path is None:
        known = ", ".join(sorted(sim._sessions)) or "none"
        raise KeyError(f"no autogroup of session {session!r} (sessions with one: {known}; "
                       f"autogroup=1 makes one at a session's first spawn)")
    shares = NICE_WEIGHT[nice + 20]
    call(sim, SET_SHARES, resolve(sim, path).gid, shares)
    return shares


def by_gid(sim):
    """{gid: path} of every group, the root included."""
    out = {0: ROOT}
    out.update({gid: path for path, gid in sim._groups.items()})
    return out


def stats(sim):
    """One row per group (the root first, then in the order made): path,
    gid, parent, depth, shares, cpu_ns, tasks (live tasks in it now).  A
    group's cpu_ns is the CPU time its entities were charged (update_curr,
    what it would charge now included): its tasks' and its groups' time.
    The root's is every task's CPU time, its cfs_rqs serving them all."""
    names = by_gid(sim)
    table = sim.stats()
    count = {}
    for pid in table["pid"][table["exit_ns"] < 0]:
        gid = call(sim, TASK_GROUP, int(pid))[0]
        count[gid] = count.get(gid, 0) + 1
    rows = [(ROOT, 0, -1, -1, NICE_0_SHARES, int(table["cpu_ns"].sum()), count.get(0, 0))]
    for gid in sorted(names)[1:]:
        cpu_ns, shares, parent, depth = call(sim, GROUP_INFO, gid)
        rows.append((names[gid], gid, parent, depth, shares, cpu_ns, count.get(gid, 0)))
    width = max(len(r[0]) for r in rows)
    dtype = [("path", f"U{width}"), ("gid", np.int64), ("parent", np.int64), ("depth", np.int64),
             ("shares", np.int64), ("cpu_ns", np.int64), ("tasks", np.int64)]
    return np.array(rows, dtype=dtype)
