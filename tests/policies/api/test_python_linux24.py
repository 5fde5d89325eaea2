"""The Linux 2.4.20 scheduler written in Python (pysched.policy.examples.linux24)
against the built-in C preset linux-2.4.20, tick for tick: both simulators
run the same workload one tick at a time, and after every tick each task's
row of stats() (counter, prio, static_prio, nice, state, cpu, policy, the
2.4 fields mm, sched_yield, need_resched, sleep_time, and every counter of
the engine: cpu_ns, switches, wakeups, migrations, latencies ...), each
CPU's runqueue() (curr, nr_running, active_mm, last_schedule, the
recalculation counts ...) and the order of the global runqueue list must be
equal; at the end, so must the whole event log.

The workloads, on 1, 2 and 4 CPUs: CPU hogs of nice -20..19; interactive
tasks with an X server and clients (process-context and sync wakeups);
fork/exit churn (a kernel compile and a shell forking short jobs); sched_yield
users with SCHED_RR and SCHED_FIFO tasks and setscheduler calls from a
program; threads sharing an mm (init={"mm": pid}) with renice, set_affinity
and setscheduler from Python mid-run.  Each also asserts that it exercised
what it is there for (recalculations, forks, migrations ...), so that a
workload that stopped doing so cannot pass unnoticed."""
import copy
import pickle

import numpy as np
import pytest

import pysched as ps
from pysched.policy.examples.linux24 import Linux24

C = "linux-2.4.20"
KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
# the C policy's columns that the Python one has not: `counter` is the
# generic time_slice under its 2.4 name (checked equal to it), run_next and
# run_prev are the list links (the list's order is compared instead)
C_ONLY = ("counter", "run_next", "run_prev")


def pair(cpus, **kw):
    """The C preset and the Python policy, alike in everything else."""
    return [ps.Simulator(C, cpus=cpus, record="events", **kw),
            ps.Simulator(Linux24, cpus=cpus, record="events", **kw)]


def list_order(sim):
    """runqueue_head, head first: the C's queue dump, the Python policy's
    own list (sim._policy is the simulator's instance of the class)."""
    if sim._policy is None:
        return [row[3] for row in sim.queue(0)]
    return list(sim._policy.runqueue)


def assert_equal_now(c, p):
    sc, sp = c.stats(), p.stats()
    cols = [n for n in sc.dtype.names if n not in C_ONLY]
    assert list(sp.dtype.names) == cols
    assert (sc["counter"] == sc["time_slice"]).all()
    assert len(sc) == len(sp), f"tick {c.jiffies}: {len(sc)} tasks in C, {len(sp)} in Python"
    diff = [k for k in cols if not (sc[k] == sp[k]).all()]
    if diff:
        rows = np.flatnonzero(np.any([sc[k] != sp[k] for k in diff], axis=0))
        pytest.fail(f"tick {c.jiffies}: pids {list(sc['pid'][rows])} differ in {diff}: "
                    f"C {[list(sc[k][rows]) for k in diff]}, Python {[list(sp[k][rows]) for k in diff]}")
    for cpu in range(c.cpus):
        assert c.runqueue(cpu) == p.runqueue(cpu), f"tick {c.jiffies}: cpu {cpu}'s runqueue"
    assert list_order(c) == list_order(p), f"tick {c.jiffies}: the runqueue list's order"


def assert_same_events(c, p):
    ec, ep = c.events(), p.events()
    n = min(len(ec), len(ep))
    same = ec[:n] == ep[:n]
    if not same.all() or len(ec) != len(ep):
        i = int(np.argmin(same)) if not same.all() else n
        pytest.fail(f"event {i} of {len(ec)} (C) / {len(ep)} (Python) differs: "
                    f"C {ec[i:i + 2]}, Python {ep[i:i + 2]}")


def run_pair(sims, ticks, actions=None):
    """Step both one tick at a time, comparing after every tick; actions:
    {tick: f(sim)} applied to both before that tick."""
    actions = actions or {}
    c, p = sims
    for t in range(ticks):
        if t in actions:
            for s in sims:
                actions[t](s)
        for s in sims:
            s.step(1)
        assert_equal_now(c, p)
    assert_same_events(c, p)
    return c


def kinds(sim):
    ev = sim.events()
    return {k: int((ev["kind"] == i).sum()) for k, i in KIND.items()}


def recalculations(sim):
    return sum(sim.runqueue(c)["nr_recalculations"] for c in range(sim.cpus))


# ---------------------------------------------------------------- the workloads

def hogs(sim):
    for nice in (-20, -5, 0, 0, 7, 19):
        sim.spawn(ps.programs.cpu_hog(), nice=nice, name=f"hog{nice:+d}")


def interactive(sim):
    sim.spawn(ps.programs.x_server(), name="X", nice=-5)
    for i in range(3):
        sim.spawn(ps.programs.x_client(think_ms=ps.exponential(40)), name=f"xclient{i}")
    sim.spawn(ps.programs.interactive(1, 20), name="editor")
    sim.spawn(ps.programs.interactive(5, 7), name="browser")
    # a pipe whose writer wakes its reader with a sync wakeup (§7)
    sim.spawn(ps.Program().loop().wait("pipe").run(ms=2).end(), name="reader")
    sim.spawn(ps.Program().loop().run(ms=3).post("pipe", sync=True).sleep(ms=4).end(),
              name="writer")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.programs.cpu_hog(), nice=3, name="hog+3")


def churn(sim):
    sim.spawn(ps.programs.kernel_compile(jobs=3, cc_ms=ps.uniform(5, 60)), name="make")
    job = ps.Program().run(ms=ps.uniform(1, 40)).exit()
    sim.spawn(ps.Program().loop().fork(job).run(ms=15).sleep(ms=ps.exponential(10)).end(),
              name="shell")
    sim.spawn(ps.programs.cpu_hog(), name="hog")


def yields_and_rt(sim):
    for nice in (0, 4):
        sim.spawn(ps.Program().loop().run(ms=3).yield_().end(), nice=nice, name=f"yield{nice}")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.Program().loop().run(ms=25).sleep(ms=60).end(), policy="rr", rt_priority=10,
              name="rr")
    sim.spawn(ps.Program().loop().run(ms=30).yield_().sleep(ms=50).end(), policy="rr",
              rt_priority=10, name="rr-yield")
    sim.spawn(ps.Program().loop().run(ms=15).sleep(ms=100).end(), policy="fifo",
              rt_priority=20, name="fifo")
    sim.spawn(ps.Program().loop().run(ms=12).yield_().run(ms=5).sleep(ms=70).end(),
              policy="fifo", rt_priority=20, name="fifo-yield")
    sim.spawn(ps.Program().sleep(ms=200).setscheduler("rr", 5).run(ms=100)
              .setscheduler("normal").loop().run(ms=5).sleep(ms=5).end(), name="setsched")


def threads(sim):
    proc = sim.spawn(ps.programs.cpu_hog(), name="proc")
    sim.spawn(ps.programs.cpu_hog(), name="thread1", init={"mm": proc})
    sim.spawn(ps.programs.interactive(3, 9), name="thread2", init={"mm": proc})
    sim.spawn(ps.programs.cpu_hog(), nice=2, name="other")
    sim.spawn(ps.Program().loop().run(ms=20).nice(5).run(ms=20).nice(-3).end(), name="renicer")
    sim.spawn(ps.programs.interactive(2, 13), name="inter")


def move_a_waiting_task(sim):
    """set_affinity of the first task that is queued but not running, to
    another CPU than its own (the two simulators agree on which it is)."""
    running = {sim.runqueue(c)["curr"] for c in range(sim.cpus)}
    waiting = [t for t in sim.stats() if t["on_rq"] and t["pid"] not in running]
    if waiting:
        sim.set_affinity(int(waiting[0]["pid"]), [(int(waiting[0]["cpu"]) + 1) % sim.cpus])


# renice, set_affinity and setscheduler from Python, mid-run, on running,
# queued and sleeping tasks
THREAD_ACTIONS = {
    50: move_a_waiting_task,
    350: move_a_waiting_task,
    100: lambda s: s.renice(1, 10),
    150: lambda s: s.set_affinity(2, [s.cpus - 1]),
    151: lambda s: s.set_affinity(1, [0]),
    230: lambda s: s.set_affinity(3, [s.cpus - 1]),
    300: lambda s: s.renice(4, -10),
    301: lambda s: s.setscheduler(6, "rr", 3),
    450: lambda s: s.set_affinity(2, range(s.cpus)),
    451: lambda s: s.renice(3, 19),
    600: lambda s: s.setscheduler(6, "normal"),
    601: lambda s: s.setscheduler(2, "fifo", 1),
    700: lambda s: s.set_affinity(1, range(s.cpus)),
    750: lambda s: s.setscheduler(2, "normal"),
}

CASES = [
    # name, workload, cpus, ticks, actions, seed
    ("hogs", hogs, 1, 600, None, 0),
    ("hogs", hogs, 2, 600, None, 0),
    ("interactive", interactive, 1, 1500, None, 3),
    ("interactive", interactive, 2, 1500, None, 3),
    ("interactive", interactive, 4, 1000, None, 3),
    ("churn", churn, 1, 1500, None, 5),
    ("churn", churn, 2, 1500, None, 5),
    ("churn", churn, 4, 1000, None, 5),
    ("yields_and_rt", yields_and_rt, 1, 1500, None, 7),
    ("yields_and_rt", yields_and_rt, 2, 1500, None, 7),
    ("threads", threads, 1, 900, THREAD_ACTIONS, 11),
    ("threads", threads, 2, 900, THREAD_ACTIONS, 11),
    ("threads", threads, 4, 900, THREAD_ACTIONS, 11),
]


@pytest.mark.parametrize("name, workload, cpus, ticks, actions, seed", CASES,
                         ids=[f"{c[0]}-{c[2]}cpu" for c in CASES])
def test_the_python_policy_equals_the_c_preset_at_every_tick(name, workload, cpus, ticks,
                                                              actions, seed):
    sims = pair(cpus, seed=seed)
    for s in sims:
        workload(s)
    c = run_pair(sims, ticks, actions)
    # what the workload is there for did happen
    n = kinds(c)
    assert recalculations(c) > 0 and n["expire"] > 0
    st = c.stats()
    if cpus > 1:
        assert n["migrate"] > 0
    if name == "hogs":
        assert recalculations(c) >= 10
    if name == "interactive":
        assert n["wakeup"] > 300 and (st["nr_wakeups"] > 0).sum() == 8
    if name == "churn":
        counters = c.counters()
        assert counters["forks"] > 100 and counters["exits"] > 100
    if name == "yields_and_rt":
        rt = st[st["policy"] != 0]
        assert len(rt) >= 3 and (st["nivcsw"][st["name"] == "yield0"] > 20).all()
        assert n["prio"] >= 2      # setscheduler from the program, there and back
    if name == "threads":
        assert n["prio"] >= 6 and (st["mm"] == st["pid"][0]).sum() == 3


# ---------------------------------------------------------------- parameters and HZ

@pytest.mark.parametrize("hz", [None, 100, 1000, 250])
def test_the_parameters_and_hz_are_the_c_presets(hz):
    # same names, defaults (DEF_COUNTER and MAX_COUNTER follow HZ), ranges,
    # units and docs: both take the same params
    assert ps.preset_params(Linux24, hz=hz) == ps.preset_params(C, hz=hz)
    assert ps.Simulator(Linux24, hz=hz).params == ps.Simulator(C, hz=hz).params
    assert ps.Simulator(Linux24, hz=hz).hz == ps.Simulator(C, hz=hz).hz == (hz or 100)


@pytest.mark.parametrize("params, hz, cpus", [
    ({"spawn_counter": 1}, 100, 1),
    ({"spawn_counter": 2, "proc_change_penalty": 30}, 100, 2),
    ({"spawn_counter": 3, "max_counter": 8}, 100, 2),
    ({"max_counter": 100}, 1000, 1),
    ({}, 250, 2),
])
def test_equal_under_other_parameters_and_hz(params, hz, cpus):
    sims = pair(cpus, hz=hz, params=params, seed=2)
    for s in sims:
        churn(s)
        s.spawn(ps.programs.interactive(2, 7), nice=-3)
    run_pair(sims, 600)
    assert recalculations(sims[0]) > 0


def test_equal_with_staggered_ticks_and_the_invariants_checked_at_every_instant():
    sims = [ps.Simulator(C, cpus=3, record="events", stagger_ticks=True, debug=True, seed=4),
            ps.Simulator(Linux24, cpus=3, record="events", stagger_ticks=True, debug=True,
                         seed=4)]
    for s in sims:
        interactive(s)
        churn(s)
    run_pair(sims, 500, {200: lambda s: s.set_affinity(5, [1])})
    for s in sims:
        s.check()


# ---------------------------------------------------------------- copies

def test_a_copy_or_a_pickle_taken_mid_run_goes_on_equal_to_the_c_preset():
    sims = pair(2, seed=9)
    for s in sims:
        threads(s)
        churn(s)
    run_pair(sims, 300, THREAD_ACTIONS)
    c, p = sims
    for branch in (p.copy(), pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        cc = c.copy()
        run_pair([cc, branch], 300, {k - 300: f for k, f in THREAD_ACTIONS.items()})
    # the original goes on undisturbed by its copies
    run_pair(sims, 100)
