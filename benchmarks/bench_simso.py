"""Wall time of pysched beside SimSo, a peer, on one periodic task set.

    python benchmarks/bench_simso.py             # 60 simulated s, best of 3, interleaved
    python benchmarks/bench_simso.py --quick     # 5 simulated s, one run of each
    pip install simso SimPy==2.3.1               # the peer: optional, not a pysched dependency

SimSo (simso on PyPI, 0.8.5) simulates real-time multiprocessor schedulers
in Python on SimPy 2's discrete-event engine; it needs SimPy 2.3.1 (the
pure-Python sdist builds and runs on Python 3.11; simso imports the `imp`
module, gone in Python 3.12).  Without it the script says so and runs
pysched alone.

The task set: 20 periodic tasks for 4 CPUs, total utilisation U = 2.8 drawn
by UUniFast-discard (Davis & Burns 2009: no task above 1), periods
log-uniform in 10-98 ms rounded to whole ms, WCET = U_i x period rounded to
the us, deadlines equal to periods, every task released at 0; drawn from
random.Random(--seed), so both simulators get exactly the same tasks.

Cases (each run builds its model and simulates it; both parts are timed):

  pysched FIFO    linux-2.5.65, HZ=1000, 4 CPUs, counters only, latencies
                  off; each task loops run(us=WCET) then timer(period):
                  rt-app's absolute timer, so job k is released at
                  k x period after the spawn at 0 and a late job's
                  successor starts as soon as it ends, as SimSo queues
                  them; SCHED_FIFO with rate-monotonic rt_priority (shorter
                  period higher, ties by task index).  Program.periodic
                  (programs.media_player) is not used: its schedule starts
                  when the task first runs, so the tasks that wait behind
                  others at 0 would be offset from SimSo's releases
  pysched NORMAL  the same tasks as SCHED_NORMAL, nice 0: what pysched is for
  SimSo RM        simso.schedulers.RM, global rate monotonic, 4 processors,
                  abort_on_miss=False, 1 cycle = 1 ns (cycles_per_ms 10^6)

The runs take turns (pysched FIFO, pysched NORMAL, SimSo, then again), so
that a spell of load from elsewhere falls on all of them; each one's best
wall time is kept (time.perf_counter), and its best CPU time
(time.process_time: both simulators run on one thread), which a busy
shared machine disturbs less.  SimSo's run_model() ends with its Results
analysis (about a sixth of its time here), which it always does: it is
timed with the rest.

What differs between the two models: SimSo is event-driven, with no tick,
no scheduler overhead and one global ready queue (a release preempts the
lowest-priority running job on any processor).  pysched ticks at HZ and
wakes a timer's sleeper at the tick at or after its expiry (the periods
are whole ms, so at HZ=1000 the releases fall on ticks); 2.5.65 queues a
woken real-time task on the runqueue of the CPU it last ran on, where it
preempts only that CPU's task and otherwise waits for it or for the load
balancer, so a few jobs can miss deadlines that global RM meets.

The sanity table says what each side reports, read after the timed run:

  released   pysched: sum of ceil(T / period), by construction of the
             timer; SimSo: its jobs activated before T
  completed  pysched: per task cpu_ns // WCET (CPU time is exact to the ns);
             SimSo: its jobs that ended
  missed     pysched: completed jobs minus voluntary switches (nvcsw), since
             a task sleeps only in its timer and a job ending after its
             successor's release goes on without sleeping (one ending
             exactly at it would count too; for seed 1 the count equals
             the one read from the event log's switches, 4 and 410);
             SimSo: jobs that ended after their deadline
             (Results.total_exceeded_count)
  CPU busy   pysched: sum of cpu_ns / (4 x T); SimSo: mean of
             Results.calc_load() over the processors
"""
import argparse
import math
import os
import platform
import random
import sys
import time

import pysched as ps

try:
    import simso
    from simso.configuration import Configuration
    from simso.core import Model
    # the scheduler the configuration names: a missing one shows here, where Model()
    # would only print an ImportError and go on without a scheduler
    import simso.schedulers.RM  # noqa: F401
except ImportError as missing:
    simso = None
    SIMSO_MISSING = str(missing)

PRESET = "linux-2.5.65"
CPUS = 4
NTASKS = 20
UTILISATION = 2.8
PERIOD_MS = (10, 98)


def task_set(seed, n=NTASKS, u=UTILISATION, period_ms=PERIOD_MS):
    """[(period_ms, wcet_us)]: UUniFast-discard utilisations, log-uniform
    whole-ms periods."""
    rng = random.Random(seed)
    while True:
        left, utils = u, []
        for i in range(1, n):
            rest = left * rng.random() ** (1 / (n - i))
            utils.append(left - rest)
            left = rest
        utils.append(left)
        if max(utils) <= 1:
            break
    lo, hi = math.log(period_ms[0]), math.log(period_ms[1])
    periods = [round(math.exp(rng.uniform(lo, hi))) for _ in range(n)]
    return [(p, round(ui * p * 1000)) for ui, p in zip(utils, periods)]


def rm_priorities(tasks):
    """rt_priority per task: 99 for the shortest period, down by one."""
    order = sorted(range(len(tasks)), key=lambda i: (tasks[i][0], i))
    return {i: 99 - rank for rank, i in enumerate(order)}


def run_pysched(tasks, seconds, policy):
    sim = ps.Simulator(PRESET, cpus=CPUS, latencies=False)
    prio = rm_priorities(tasks)
    for i, (period_ms, wcet_us) in enumerate(tasks):
        prog = ps.Program().loop().run(us=wcet_us).timer(period_ms * 1000).end()
        if policy == "fifo":
            sim.spawn(prog, name=f"T{i}", policy="fifo", rt_priority=prio[i])
        else:
            sim.spawn(prog, name=f"T{i}")
    sim.run(seconds=seconds)
    return sim


def pysched_figures(sim, tasks, seconds):
    st = sim.stats()
    completed = sum(int(cpu_ns // (wcet_us * 1000))
                    for cpu_ns, (_, wcet_us) in zip(st["cpu_ns"], tasks))
    return {"released": sum(math.ceil(seconds * 1000 / p) for p, _ in tasks),
            "completed": completed,
            "missed": completed - int(st["nvcsw"].sum()),
            "busy": st["cpu_ns"].sum() / (CPUS * seconds * 1e9)}


def run_simso(tasks, seconds):
    conf = Configuration()
    conf.duration = int(seconds * 1000 * conf.cycles_per_ms)
    for i, (period_ms, wcet_us) in enumerate(tasks):
        conf.add_task(name=f"T{i}", identifier=i + 1, period=period_ms, activation_date=0,
                      wcet=wcet_us / 1000, deadline=period_ms, abort_on_miss=False)
    for k in range(CPUS):
        conf.add_processor(name=f"CPU{k}", identifier=k + 1)
    conf.scheduler_info.clas = "simso.schedulers.RM"
    model = Model(conf)
    model.run_model()
    return model


def simso_figures(model, seconds):
    jobs = [j for t in model.task_list for j in t.jobs]
    loads = [load for _, load, _ in model.results.calc_load()]
    return {"released": sum(1 for j in jobs if j.activation_date < seconds * 1000),
            "completed": sum(1 for j in jobs if j.end_date is not None and not j.aborted),
            "missed": model.results.total_exceeded_count,
            "busy": sum(loads) / len(loads)}


def print_times(times, cpu_times, peer, label):
    """The timing table (each case's best wall and CPU time, and every
    run's), and the peer's best over pysched's where the peer ran."""
    base = min(times["pysched FIFO (RM prios)"])
    print(f"{'case':24} {'best s':>9} {'x FIFO':>8} {'best CPU s':>10}  wall time of each run (s)")
    for name, ts in times.items():
        print(f"{name:24} {min(ts):9.4f} {min(ts) / base:8.2f} {min(cpu_times[name]):10.4f}  "
              + " ".join(f"{t:.4f}" for t in ts))
    if peer in times:
        def ratio(table, other):
            return min(table[peer]) / min(table[other])
        print(f"\n{label} / pysched, wall (CPU): "
              + ", ".join(f"{ratio(times, name):,.3g}x ({ratio(cpu_times, name):,.3g}x) {name}"
                          for name in ("pysched FIFO (RM prios)", "pysched NORMAL")))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="5 simulated s and one run of each (default: 60 s, --reps runs)")
    ap.add_argument("--seconds", type=float, help="simulated seconds (default: 60; 5 with --quick)")
    ap.add_argument("--reps", type=int, help="runs of each, interleaved; the best is kept "
                    "(default: 3; 1 with --quick)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the task set (default: 1)")
    ap.add_argument("--no-simso", action="store_true", help="run pysched alone")
    args = ap.parse_args(argv)
    seconds = args.seconds or (5.0 if args.quick else 60.0)
    reps = args.reps or (1 if args.quick else 3)
    tasks = task_set(args.seed)

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{platform.platform()}")
    peer = (f"simso {simso.__version__}, SimPy {__import__('SimPy').__version__}" if simso
            else "simso not installed")
    print(f"python {sys.version.split()[0]} ({platform.python_implementation()}), "
          f"pysched {ps.__version__}, {peer}")
    if simso is None:
        print(f"SimSo is not importable ({SIMSO_MISSING}): pysched only; "
              f"pip install simso SimPy==2.3.1 for the comparison")
    print(f"{NTASKS} tasks, U = {sum(w / (p * 1000) for p, w in tasks):.4f} on {CPUS} CPUs, "
          f"periods {min(p for p, _ in tasks)}-{max(p for p, _ in tasks)} ms (seed {args.seed}), "
          f"{seconds:g} simulated s; best of {reps}, runs interleaved\n")

    runs = {"pysched FIFO (RM prios)": lambda: run_pysched(tasks, seconds, "fifo"),
            "pysched NORMAL": lambda: run_pysched(tasks, seconds, "normal")}
    figures = {"pysched FIFO (RM prios)": lambda sim: pysched_figures(sim, tasks, seconds),
               "pysched NORMAL": lambda sim: pysched_figures(sim, tasks, seconds)}
    if simso is not None and not args.no_simso:
        runs["SimSo RM (global)"] = lambda: run_simso(tasks, seconds)
        figures["SimSo RM (global)"] = lambda model: simso_figures(model, seconds)
    times = {name: [] for name in runs}
    cpu_times = {name: [] for name in runs}
    sanity = {}
    for _ in range(reps):
        for name, run in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            out = run()
            times[name].append(time.perf_counter() - t0)
            cpu_times[name].append(time.process_time() - c0)
            # read outside the timing, and the model dropped before the next run
            sanity[name] = figures[name](out)
            del out

    print_times(times, cpu_times, "SimSo RM (global)", "SimSo")

    print(f"\nsame work ({seconds:g} simulated s; what each counts: see the script's docstring)")
    print(f"{'case':24} {'released':>9} {'completed':>10} {'missed':>7} {'CPU busy':>9}")
    for name, f in sanity.items():
        print(f"{name:24} {f['released']:9,} {f['completed']:10,} {f['missed']:7,} "
              f"{100 * f['busy']:8.2f}%")


if __name__ == "__main__":
    main()
