"""Policies written in C outside the package: built with pysched.build_policy
from the example experiments/policies/round_robin.c (a copy in a temporary
directory, or an edited copy), they run like built-in presets -- fair shares,
invariants, copies, pickles across processes, sweeps -- and a file that does
not compile, a library of another ABI or a preset name already taken is
refused with a message that names it, as is, with a PolicyError, a
pick_next that returns what the engine cannot run."""
import functools
import importlib
import multiprocessing
import os
import pickle
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import pysched as ps

from repo_paths import ROOT

EXAMPLE = str(ROOT / "experiments" / "policies" / "round_robin.c")
CC = shlex.split(sysconfig.get_config_var("CC") or "cc")[0]
LIBRARY_LINE = "PS_POLICY_LIBRARY(&rr_policy);"

pytestmark = pytest.mark.skipif(shutil.which(CC) is None,
                                reason=f"no C compiler: {CC}, which built Python, is not installed")


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    """One cache of built libraries for the whole session, outside $HOME."""
    d = tmp_path_factory.getbasetemp() / "policy-cache"
    monkeypatch.setenv("PYSCHED_CACHE", str(d))
    return d


def policy_file(directory, *edits, filename="round_robin.c"):
    """A copy of the example in directory, with each (old, new) edit made."""
    with open(EXAMPLE) as f:
        text = f.read()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = directory / filename
    path.write_text(text)
    return path


def renamed(preset):
    """The edit that gives the example's preset another name."""
    return ('{"rr-c", &rr_policy', '{"%s", &rr_policy' % preset)


@pytest.fixture
def rr(tmp_path):
    """The example, built from a copy outside the package."""
    return ps.build_policy(policy_file(tmp_path))


def hogs(preset, n=2, **kw):
    sim = ps.Simulator(preset, **kw)
    for i in range(n):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
    return sim


def busy(preset, seed=3, **kw):
    """Every op and syscall on 2 CPUs: forks, exits, sleeps, I/O, channels,
    yields, nice and setscheduler."""
    sim = ps.Simulator(preset, cpus=2, seed=seed, **kw)
    sim.spawn(ps.programs.kernel_compile(jobs=3), name="make")
    sim.spawn(ps.programs.x_server(), name="X")
    sim.spawn(ps.programs.x_client(), name="xterm")
    sim.spawn(ps.Program().loop().run(ms=ps.normal(3, 1)).yield_().nice(5).run(ms=2).nice(0)
              .sleep(ms=ps.exponential(10)).end(), name="fidget")
    sim.spawn(ps.Program().run(ms=50).setscheduler("fifo", 10).run(ms=5).setscheduler("normal")
              .loop(3).io(ms=ps.uniform(1, 4)).run(ms=1).end().exit(), name="mover")
    sim.source("irq", poisson_ms=7)
    sim.spawn(ps.Program().loop().wait("irq").run(us=300).end(), name="irq")
    return sim


def test_the_example_builds_outside_the_package_and_registers_its_preset(rr, tmp_path):
    assert rr.presets == ("rr-c",) and rr.name == "round_robin"
    assert rr.source == str(tmp_path / "round_robin.c") and os.path.isfile(rr.path)
    # (the tests' edited copies keep the policy's name)
    assert "rr-c" in ps.presets() and "rr-c" in ps.policies()["round-robin"]["presets"]
    info = ps.policy_info("rr-c")
    assert info["policy"] == "round-robin" and info["hz"] == 1000
    assert [p.name for p in ps.preset_params("rr-c")] == ["timeslice_ms"]
    # the slice in ticks follows HZ
    assert ps.formula("rr-c", "timeslice_ticks") == 100
    assert ps.formula("rr-c", "timeslice_ticks", hz=100, params={"timeslice_ms": 25}) == 3


def test_two_hogs_share_the_cpu_half_and_half(rr):
    sim = hogs("rr-c")
    sim.run(seconds=10)
    shares = sim.stats()["cpu_ns"] / 10e9
    assert np.all(np.abs(shares - 0.5) <= 0.01), shares
    assert sim.runqueue(0)["nr_rotations"] >= 99


def test_slices_follow_the_parameter(rr):
    sim = hogs("rr-c", params={"timeslice_ms": 20}, record="events")
    sim.run(seconds=1)
    switches = sim.events()[sim.events()["kind"] == ps.EVENT_KINDS.index("switch")]
    assert np.all(np.diff(switches["time_ns"][1:]) == 20_000_000)


def test_the_conformance_kit_passes(rr):
    ps.policy.testing.check_policy("rr-c").raise_if_failed()


def test_the_invariants_hold_after_every_instant(rr):
    sim = busy("rr-c", debug=True)
    sim.run(seconds=2)
    sim.renice(2, -5)
    sim.set_affinity(3, [1])
    sim.run(seconds=2)
    sim.check()
    assert sim.stats()["nr_wakeups"].sum() > 500 and sim.counters()["forks"] > 3


@pytest.mark.parametrize("how", ["copy", "pickle"])
def test_a_branch_runs_exactly_like_the_original(rr, how):
    sim = busy("rr-c", record="events")
    sim.run(seconds=1)
    branch = sim.copy() if how == "copy" else pickle.loads(pickle.dumps(sim))
    for s in (sim, branch):
        s.run(seconds=1)
        s.spawn(ps.programs.cpu_hog(), name="late")
        s.run(seconds=0.5)
    assert np.array_equal(sim.stats(), branch.stats())
    assert sim.events().tobytes() == branch.events().tobytes()


# A round robin whose wakeup reads what deferred ticks change (a woken
# task preempts one that has used up half its slice, which goes to the
# tail), and that counts the stretches of ticks it applies at once.
WAKEUP_READS_THE_SLICE = [
    ("  int64_t nr_rotations; /* slices that ended with the task moving to the tail */",
     "  int64_t nr_rotations; /* slices that ended with the task moving to the tail */\n"
     "  int64_t nr_batches;"),
    ('    RF(nr_rotations, PS_F_I64, "slices that ended with the task moving to the tail"),',
     '    RF(nr_rotations, PS_F_I64, "slices that ended with the task moving to the tail"),\n'
     '    RF(nr_batches, PS_F_I64, "stretches of ticks applied at once"),'),
    ("  enqueue_tail(m, d, p);\n  return cpu_idle(d, p->cpu);\n}\n\nstatic void deactivate_rr",
     "  enqueue_tail(m, d, p);\n"
     "  psTask *curr = ps_curr(d, p->cpu);\n"
     "  if (curr->is_idle || 2 * curr->time_slice >= slice(m)) return curr->is_idle;\n"
     "  dequeue(m, d, curr);\n"
     "  enqueue_tail(m, d, curr);\n"
     "  return 1;\n"
     "}\n\nstatic void deactivate_rr"),
    ("  if (apply) p->time_slice -= (int32_t)n;",
     "  if (apply) {\n    p->time_slice -= (int32_t)n;\n    cpu_rq(m, d, cpu)->nr_batches++;\n  }"),
]


@pytest.mark.parametrize("local", ["1", "PS_TICK_BATCH_TRUSTED"])
def test_deferred_ticks_are_applied_before_a_wakeup_on_their_cpu_reads_them(tmp_path, local):
    """On 2 CPUs a hog on CPU 0 runs 100-tick slices while a task on CPU 1
    wakes at every tick, so no stretch is free of events on both CPUs and
    CPU 0 can only batch by deferring its ticks.  A sleeper on CPU 0 wakes
    at odd times and preempts the hog when it has used half its slice:
    the run in one call, which defers, equals the run stepped tick by tick,
    which never does.  Trusted (PS_TICK_BATCH_TRUSTED), the example's
    tick_batch takes apply=2 as any other apply: its count reads no clock."""
    preset = f"rr-peek-{local[:5].lower()}"
    ps.build_policy(policy_file(tmp_path, renamed(preset), *WAKEUP_READS_THE_SLICE,
                                (".tick_batch_local = 1,", f".tick_batch_local = {local},"),
                                filename=f"{preset}.c"))

    def build():
        sim = ps.Simulator(preset, cpus=2, seed=2, record="events")
        sim.spawn(ps.programs.cpu_hog(), name="hog", cpu=0, cpus_allowed=[0])
        sim.spawn(ps.Program().loop().sleep(ms=ps.uniform(5, 80)).run(ms=0.2).end(),
                  name="sleeper", cpu=0, cpus_allowed=[0])
        sim.spawn(ps.Program().loop().run(us=300).sleep(ms=1).end(), name="ticker", cpu=1,
                  cpus_allowed=[1])
        return sim
    whole, stepped = build(), build()
    whole.run(ticks=3000)
    for _ in range(3000):
        stepped.step(ticks=1)
    assert whole.runqueue(0)["nr_batches"] >= 20       # CPU 0 deferred its ticks
    assert stepped.runqueue(0)["nr_batches"] == 0
    assert whole.stats()[0]["nivcsw"] >= 10             # the sleeper preempted the hog
    assert whole.events().tobytes() == stepped.events().tobytes()
    assert np.array_equal(whole.stats(), stepped.stats())


def run_on(blob, seconds):
    """In a worker: unpickle a simulator, run it on, return what it did."""
    sim = pickle.loads(blob)
    sim.run(seconds=seconds)
    return sim.stats(), sim.events().tobytes(), ps.presets()


def test_a_pickle_runs_on_in_a_fresh_process(rr, cache):
    sim = busy("rr-c", record="events")
    sim.run(seconds=1)
    blob = pickle.dumps(sim)
    built = sorted(os.listdir(cache))
    # spawn: a new interpreter, which has loaded no policy library
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        stats, events, presets = pool.submit(run_on, blob, 1).result()
    sim.run(seconds=1)
    assert np.array_equal(stats, sim.stats()) and events == sim.events().tobytes()
    assert "rr-c" in presets
    assert sorted(os.listdir(cache)) == built  # it was loaded, not built again


def share_under(preset, timeslice_ms):
    sim = hogs(preset, params={"timeslice_ms": timeslice_ms})
    sim.run(seconds=1)
    return {"share": sim.task(1).cpu_ns / 1e9, "switches": int(sim.stats()["nivcsw"].sum()),
            "pid": os.getpid()}


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_a_sweep_names_a_c_preset_in_its_workers(rr, monkeypatch, start):
    # the default pool, started this way, and given all calls but the first
    # however short the sweep
    local = importlib.import_module("pysched.sweeps.local")
    pool = functools.partial(ProcessPoolExecutor, mp_context=multiprocessing.get_context(start))
    monkeypatch.setattr(local, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(local, "PROBE_S", 0)
    monkeypatch.setattr(local, "_pays", lambda *args: True)
    slices = [5, 10, 20, 50, 100, 250]  # each an even number of turns a second
    rows = ps.sweep(share_under, {"preset": ["rr-c"], "timeslice_ms": slices}, max_workers=2,
                    output="dicts")
    assert [r["switches"] for r in rows] == [1000 // t for t in slices]
    assert all(r["share"] == 0.5 for r in rows)
    assert {r["pid"] for r in rows} - {os.getpid()}  # workers ran some


def test_building_again_reuses_the_library(rr, tmp_path, cache):
    built = sorted(os.listdir(cache))
    again = ps.build_policy(tmp_path / "round_robin.c")
    assert again == rr and sorted(os.listdir(cache)) == built


def test_an_edited_source_is_rebuilt_and_replaces_its_earlier_version(tmp_path):
    d1, d2 = tmp_path / "v1", tmp_path / "v2"
    d1.mkdir(), d2.mkdir()
    old = ps.build_policy(policy_file(d1, renamed("rr-edit")), name="edited")
    before = hogs("rr-edit", record="events")
    # a new default slice of 10 ms, and a new symbol
    edits = [renamed("rr-edit"), ('{"timeslice_ms", 100,', '{"timeslice_ms", 10,'),
             (LIBRARY_LINE, "int rr_version = 2;\n" + LIBRARY_LINE)]
    new = ps.build_policy(policy_file(d2, *edits), name="edited")
    assert new.path != old.path and new.presets == old.presets
    assert ps.preset_params("rr-edit")[0].default == 10
    after = hogs("rr-edit")
    for s in (before, after):
        s.run(seconds=1)
    assert before.stats()["nivcsw"].sum() == 10 and after.stats()["nivcsw"].sum() == 100
    # a simulator of the earlier version keeps its code, in copies and pickles too
    twin = pickle.loads(pickle.dumps(before))
    for s in (before, twin):
        s.run(seconds=1)
    assert before.events().tobytes() == twin.events().tobytes()
    assert twin.stats()["nivcsw"].sum() == 20


def test_a_syntax_error_raises_the_compilers_message(tmp_path):
    path = policy_file(tmp_path, ("static int cpu_idle(", "static int cpu_idle(int x int y, "),
                       filename="broken.c")
    line = path.read_text().splitlines().index(
        next(l for l in path.read_text().splitlines() if "cpu_idle(int x int y" in l)) + 1
    with pytest.raises(ps.PolicyBuildError) as e:
        ps.build_policy(path)
    assert isinstance(e.value, ps.Error)
    assert f"{path}:{line}:" in str(e.value) and "error" in str(e.value)
    assert e.value.output in str(e.value) and e.value.command[-1].endswith(".o")


def test_a_call_to_a_function_the_engine_lacks_fails_when_linked(tmp_path):
    call = ("static void deactivate_rr(const psModel *m, psData *d, psTask *prev) { "
            "dequeue(m, d, prev); }")
    path = policy_file(tmp_path, (call, "void ps_no_such_helper(psData *d);\n" +
                                  call.replace("prev); }", "prev); ps_no_such_helper(d); }")),
                       renamed("rr-link"), filename="unlinked.c")
    with pytest.raises(ps.PolicyBuildError,
                       match="linking .*unlinked.c failed(.|\n)*ps_no_such_helper"):
        ps.build_policy(path)


def test_a_library_of_another_abi_is_refused_naming_both_versions(tmp_path):
    abi_999 = "#undef PS_ABI_VERSION\n#define PS_ABI_VERSION 999\n" + LIBRARY_LINE
    path = policy_file(tmp_path, renamed("rr-abi"), (LIBRARY_LINE, abi_999), filename="old_abi.c")
    with pytest.raises(ps.ConfigError, match=f"old_abi.c was built for pysched policy ABI 999; "
                                             f"this pysched has ABI {ps.ABI_VERSION}"):
        ps.build_policy(path)
    assert "rr-abi" not in ps.presets()


def test_a_library_whose_structs_differ_is_refused_naming_the_struct(tmp_path):
    path = policy_file(tmp_path, renamed("rr-sizes"), (LIBRARY_LINE, """
static const psPolicy *const policies[] = {&rr_policy};
__attribute__((visibility("default"))) const psPolicyLibrary pysched_policy_library = {
    PS_ABI_VERSION, 1, policies,
    {sizeof(psTask) + 8, sizeof(psModel), sizeof(psData), sizeof(psCpu), sizeof(psPolicy),
     sizeof(psHooks), sizeof(psPreset), sizeof(psParamInfo), sizeof(psFieldInfo),
     sizeof(psFormula)}};"""), filename="sizes.c")
    with pytest.raises(ps.ConfigError, match="saw a psTask of [0-9]+ bytes where this pysched has"):
        ps.build_policy(path)


def test_malformed_tables_are_refused_with_what_is_wrong(tmp_path):
    extern = "extern const psPolicy rr_policy;"
    overrides = 'static const psOverride bad[] = {{"timeslice", 5}, {NULL, 0}};\n'
    path = policy_file(tmp_path, renamed("rr-bad"),
                       ('{"rr-bad", &rr_policy, {NULL},', '{"rr-bad", &rr_policy, {bad},'),
                       (extern, overrides + extern), filename="bad_tables.c")
    with pytest.raises(ps.ConfigError, match="preset rr-bad overrides 'timeslice', which is not a "
                                             "parameter of policy round-robin"):
        ps.build_policy(path)
    no_entry = tmp_path / "no_entry.c"
    no_entry.write_text("#include <pysched/policy_lib.h>\nint nothing;\n")
    with pytest.raises(ps.ConfigError, match="no_entry.c is not a pysched policy library"):
        ps.build_policy(no_entry)


def test_a_tick_batch_local_outside_its_three_values_is_refused(tmp_path):
    path = policy_file(tmp_path, renamed("rr-trust"),
                       (".tick_batch_local = 1,", ".tick_batch_local = 3,"), filename="trust.c")
    with pytest.raises(ps.ConfigError, match="policy round-robin: tick_batch_local 3; "
                                             "allowed 0..2"):
        ps.build_policy(path)


def run_two_cpus(path, preset, debug):
    """Each CPU a hog and a sleeper, 2 s under the preset path declares."""
    ps.build_policy(path)
    sim = ps.Simulator(preset, cpus=2, seed=2, debug=debug)
    for c in range(2):
        sim.spawn(ps.programs.cpu_hog(), cpu=c, cpus_allowed=[c])
        sim.spawn(ps.Program().loop().run(us=300).sleep(ms=ps.uniform(2, 9)).end(),
                  cpu=c, cpus_allowed=[c])
    sim.run(ticks=2000)
    return sim.stats()["cpu_ns"].sum()


def test_a_trusted_policy_whose_answer_changes_fails_with_debug_checks(tmp_path):
    # a policy that answers 1 when asked a second time at the same jiffy: with
    # debug checks the engine asks again before applying what it trusted.  It
    # runs in a new interpreter: loaded here, its preset would stay among
    # ps.presets() and fail every later test that runs them all with
    # PYSCHED_DEBUG=1, as the sanitizer stage of CI does
    path = policy_file(
        tmp_path, renamed("rr-fickle"),
        ("  int64_t nr_rotations; /* slices that ended with the task moving to the tail */",
         "  int64_t nr_rotations; /* slices that ended with the task moving to the tail */\n"
         "  uint64_t asked_at;"),
        ("  if (n <= 0) return 0;\n  if (apply)",
         "  if (n <= 0) return 0;\n"
         "  if (!apply && cpu_rq(m, d, cpu)->asked_at == d->jiffies + 1) return 1;\n"
         "  if (!apply) cpu_rq(m, d, cpu)->asked_at = d->jiffies + 1;\n"
         "  if (apply)"),
        (".tick_batch_local = 1,", ".tick_batch_local = PS_TICK_BATCH_TRUSTED,"),
        filename="fickle.c")
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert pool.submit(run_two_cpus, path, "rr-fickle", False).result() == 2 * 2000 * 10**6
        with pytest.raises(ps.Error, match=r"policy round-robin, asked again, can take 1 of "
                                           r"the [0-9]+ deferred ticks on cpu [01] it said"):
            pool.submit(run_two_cpus, path, "rr-fickle", True).result()
    assert "rr-fickle" not in ps.presets()


# The example's pick_next, which the policies below replace from jiffy 5 on.
PICK_NEXT = ("  int32_t head = cpu_rq(m, d, cpu)->head;\n"
             "  return head == NONE ? &d->task[d->cpu[cpu].idle] : &d->task[head];")


def picks_from_jiffy_5(bad):
    """The edit after which pick_next returns what `bad` returns (C statements
    ending in a return, or falling through to the example's choice) from
    jiffy 5 on."""
    return (PICK_NEXT, "  if (d->jiffies >= 5) {\n" + bad + "\n  }\n" + PICK_NEXT)


def run_until_the_policy_fails(path, preset):
    """In a worker: two hogs and a sleeper pinned to CPU 0, a sleeper pinned
    to CPU 1, for a second under the preset path declares.  Returns what the
    run raised, type and message, with the time it stopped at; what each
    call that would go on raises; and whether the results stay readable."""
    ps.build_policy(path)
    sim = ps.Simulator(preset, cpus=2, seed=1)
    for cpu, program in ((0, ps.programs.cpu_hog()), (0, ps.programs.cpu_hog()),
                         (0, ps.programs.interactive(1, 3)), (1, ps.programs.interactive(1, 3))):
        sim.spawn(program, cpu=cpu, cpus_allowed=[cpu])
    try:
        sim.run(seconds=1)
        raised = None
    except Exception as e:
        raised = (type(e).__name__, str(e), sim.now_ns)
    refused = []
    for call in (lambda: sim.run(seconds=1), lambda: sim.spawn(ps.programs.cpu_hog()),
                 lambda: sim.renice(1, 5), lambda: sim.copy(), lambda: pickle.dumps(sim)):
        try:
            call()
            refused.append(None)
        except Exception as e:
            refused.append((type(e).__name__, str(e)))
    return raised, refused, int(sim.stats()["cpu_ns"].sum())


@pytest.fixture(scope="module")
def worker():
    """A fresh interpreter for policies that break the hooks' contract: their
    presets stay out of this one's ps.presets() (a test that runs every
    preset would meet them), and where the engine followed what such a
    policy returned, the worker crashed, not the tests."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.mark.parametrize("name,bad,returned", [
    ("null", "    return NULL;", "NULL"),
    ("far", "    return &d->task[0] + 100000;",
     r"0x[0-9a-f]+, which is not a task of this simulator \(its 6 are at 0x[0-9a-f]+\)"),
    ("static", "    static psTask elsewhere;\n    return &elsewhere;",
     r"0x[0-9a-f]+, which is not a task of this simulator \(its 6 are at 0x[0-9a-f]+\)"),
    ("inside", "    int32_t head = cpu_rq(m, d, cpu)->head;\n"
     "    if (head != NONE) return (psTask *)((char *)&d->task[head] + 8);",
     r"0x[0-9a-f]+, which points into task slot [2-5], 8 bytes past its start"),
    ("asleep", "    for (int32_t i = m->ncpu; i < d->ntask; i++)\n"
     "      if (d->task[i].state == PS_TASK_INTERRUPTIBLE) return &d->task[i];",
     r"pid [34], which is asleep \(state 1\)"),
    ("other", "    int32_t tail = cpu_rq(m, d, 0)->tail;\n"
     "    if (cpu == 1 && tail != NONE) return &d->task[tail];",
     r"pid [1-3], which is queued on cpu 0"),
    ("idle0", "    if (cpu == 1) return &d->task[d->cpu[0].idle];", "the idle task of cpu 0"),
], ids=["NULL", "far past the tasks", "outside the tasks", "inside a task", "asleep",
        "another cpu's", "another cpu's idle"])
def test_pick_next_returning_what_cannot_run_is_a_policy_error(tmp_path, worker, name, bad,
                                                               returned):
    """What pick_next returns is checked before it is used, in every build:
    on today's engine the first three crashed the interpreter, and the
    others switched to what they returned without a word (debug checks
    off).  The step fails naming the policy, the hook, the CPU and the time;
    the interpreter goes on, reading the results is fine, going on is refused."""
    preset = f"rr-pick-{name}"
    path = policy_file(tmp_path, renamed(preset), picks_from_jiffy_5(bad),
                       filename=f"{preset}.c")
    raised, refused, cpu_ns = worker.submit(run_until_the_policy_fails, path, preset).result()
    assert raised is not None, "the run did not fail"
    kind, message, stopped = raised
    assert kind == "PolicyError"
    assert re.fullmatch(r"policy round-robin: pick_next on cpu [01] at t=(\d+) ns returned " +
                        returned, message), message
    assert 5_000_000 <= stopped == int(re.search(r"t=(\d+) ns", message)[1]) < 1_000_000_000
    assert cpu_ns > 0
    for r in refused:
        assert r is not None and r[0] == "StateError", r
        assert r[1].startswith("the simulator stopped in a failed policy hook and cannot go on "
                               "(policy round-robin: pick_next on cpu")


def test_pick_next_of_a_task_outside_its_affinity_is_a_policy_error(tmp_path, worker):
    """A policy that wakes every task on the last CPU, whatever its affinity:
    the sleeper pinned to CPU 0 is queued on CPU 1, which picks it (today's
    engine ran it there)."""
    wakeup = ("static int wakeup_rr(const psModel *m, psData *d, psTask *p, psTask *waker, "
              "int sync) {\n")
    path = policy_file(tmp_path, renamed("rr-affinity"),
                       (wakeup, wakeup + "  p->cpu = m->ncpu - 1;\n"), filename="affinity.c")
    raised, refused, _ = worker.submit(run_until_the_policy_fails, path, "rr-affinity").result()
    assert raised is not None and raised[0] == "PolicyError"
    assert re.fullmatch(r"policy round-robin: pick_next on cpu 1 at t=\d+ ns returned pid 3, "
                        r"whose affinity \(0x1\) excludes cpu 1", raised[1]), raised[1]
    assert all(r is not None and r[0] == "StateError" for r in refused), refused


def test_a_preset_name_already_taken_is_refused(rr, tmp_path):
    builtin = policy_file(tmp_path, renamed("linux-2.5.65"), filename="clash_builtin.c")
    with pytest.raises(ps.ConfigError, match="clash_builtin.c declares preset 'linux-2.5.65', "
                                             "which is a built-in preset"):
        ps.build_policy(builtin)
    other = policy_file(tmp_path, filename="clash_other.c")
    with pytest.raises(ps.ConfigError, match="clash_other.c declares preset 'rr-c', which "
                                             "/.*/round_robin.c already declares"):
        ps.build_policy(other)
    assert ps.presets().count("rr-c") == 1 and ps.policy_info("linux-2.5.65")["policy"] == "o1"


class Taken(ps.Policy):
    """A Python policy whose name a C library then tries to take."""
    name = "rr-taken"

    def task_spawn(self, p):
        return False

    def wakeup(self, p, waker, sync):
        return False

    def deactivate(self, p):
        pass

    def pick_next(self, cpu):
        return None


def test_a_preset_name_a_python_policy_has_is_refused(tmp_path):
    ps.register_policy(Taken)
    path = policy_file(tmp_path, renamed("rr-taken"), filename="clash_python.c")
    with pytest.raises(ps.ConfigError, match="clash_python.c declares preset 'rr-taken', which is "
                                             "the name of the Python policy .*Taken"):
        ps.build_policy(path)


def test_an_unknown_preset_is_refused_naming_the_known_ones(rr):
    with pytest.raises(KeyError, match="unknown preset 'rr-d'.*'rr-c'"):
        ps.Simulator("rr-d")


def test_a_bad_library_name_or_flags_are_refused(tmp_path):
    with pytest.raises(ValueError, match="name='no/slash'"):
        ps.build_policy(EXAMPLE, name="no/slash")
    with pytest.raises(TypeError, match="extra_cflags must be a list of str"):
        ps.build_policy(EXAMPLE, extra_cflags="-O3")
    with pytest.raises(TypeError, match="sanitize must be True, False or None, not 'yes'"):
        ps.build_policy(EXAMPLE, sanitize="yes")


# ---- sanitizers ----

INCLUDE_STDLIB = ("#include <stdio.h>\n", "#include <stdio.h>\n#include <stdlib.h>\n")
TICK = "static void tick_rr(const psModel *m, psData *d, int cpu) {\n"
# a tick that reads past the end of an array, and one that reads freed memory
# (volatile: the compiler keeps the reads)
TICK_OUT_OF_BOUNDS = (TICK, "static volatile int32_t ticks_seen[2];\n\n" + TICK +
                      "  if (ticks_seen[cpu + 2] == 12345) return;\n")
TICK_USE_AFTER_FREE = (TICK, TICK + "  int32_t *volatile freed = malloc(sizeof(int32_t));\n"
                       "  free(freed);\n"
                       "  if (*(volatile int32_t *)freed == 12345) return;\n")

RUN_A_HOG = """
import sys
import pysched as ps
ps.build_policy(sys.argv[1], extra_cflags=sys.argv[2:], sanitize={sanitize})
sim = ps.Simulator("rr-bug")
sim.spawn(ps.programs.cpu_hog())
sim.run(seconds=0.1)
print("ran to", sim.now_ns)
"""


def run_a_hog(path, tmp_path, extra_cflags=(), sanitize=None):
    """A hog under path's preset rr-bug for 0.1 s, in a new interpreter (a
    sanitizer's report may end it; the preset stays out of this one's
    presets()) run outside the source tree, with this one's environment
    (the cache, and in CI's sanitizer stage the preloaded runtime)."""
    return subprocess.run([sys.executable, "-c", RUN_A_HOG.format(sanitize=sanitize), str(path),
                           *extra_cflags], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)


def line_of(path, text):
    return path.read_text().splitlines().index(text) + 1


def test_sanitizer_flags_in_extra_cflags_are_linked_too(tmp_path):
    """-fsanitize=undefined needs UBSan's runtime when the library is
    linked (the policy's calls into it were undefined under -z defs): the
    policy builds, runs, and UBSan names its out-of-bounds read."""
    path = policy_file(tmp_path, renamed("rr-bug"), TICK_OUT_OF_BOUNDS, filename="bounds.c")
    r = run_a_hog(path, tmp_path, ["-fsanitize=undefined"])
    line = line_of(path, "  if (ticks_seen[cpu + 2] == 12345) return;")
    assert f"{path}:{line}:" in r.stderr and "runtime error: index 2 out of bounds" in r.stderr, \
        r.stderr[-2000:]


def test_sanitize_builds_with_asan_and_ubsan_under_a_cache_key_of_its_own(tmp_path):
    plain, sanitized = ps.policy.build._commands((), False), ps.policy.build._commands((), True)
    assert set(ps.policy.build.SANITIZE_CFLAGS) <= set(sanitized[0])
    assert not [f for f in plain[0] + plain[1][1] if f.startswith("-fsanitize")]
    # the runtimes are linked too
    assert "-fsanitize=address,undefined" in sanitized[1][1]
    assert "-fsanitize=address" in ps.policy.build._commands(("-fsanitize=address",))[1][1]
    source = ps.policy.build.PolicySource("round_robin", EXAMPLE, b"int x;", ())
    assert ps.policy.build._key(source, plain) != ps.policy.build._key(source, sanitized)


@pytest.mark.skipif(ps.policy.build._asan_loaded(), reason="AddressSanitizer's runtime is loaded here")
@pytest.mark.parametrize("how", [{"sanitize": True}, {"extra_cflags": ["-fsanitize=address"]}],
                         ids=["sanitize", "extra_cflags"])
def test_asan_is_refused_where_its_runtime_is_not_loaded(tmp_path, cache, how):
    """Loading a library built with ASan into a process without its runtime
    would abort the process: it is refused, before anything is built."""
    built = sorted(os.listdir(cache)) if cache.exists() else []
    with pytest.raises(ps.ConfigError, match=r"round_robin.c: a policy built with AddressSanitizer "
                                             r"\((sanitize=True|-fsanitize=address)\) can only be "
                                             r"loaded where its runtime is: install pysched's "
                                             r"sanitizer build \(PYSCHED_SANITIZE=1\)"):
        ps.build_policy(policy_file(tmp_path), **how)
    assert (sorted(os.listdir(cache)) if cache.exists() else []) == built


@pytest.mark.skipif(not ps.policy.build.SANITIZE, reason="pysched's sanitizer build is not installed")
def test_under_the_sanitizer_build_a_policy_is_built_with_asan_too(tmp_path):
    """CI's second run, with PYSCHED_SANITIZE=1 installed and libasan
    preloaded: by default a policy is built with the sanitizers, and ASan
    reports where it reads freed memory; built without (sanitize=False) it
    runs on, unseen."""
    path = policy_file(tmp_path, renamed("rr-bug"), INCLUDE_STDLIB, TICK_USE_AFTER_FREE,
                       filename="freed.c")
    caught = run_a_hog(path, tmp_path)
    line = line_of(path, "  if (*(volatile int32_t *)freed == 12345) return;")
    assert caught.returncode != 0
    assert "ERROR: AddressSanitizer: heap-use-after-free" in caught.stderr, caught.stderr[-2000:]
    assert f"in tick_rr {path}:{line}" in caught.stderr
    unseen = run_a_hog(path, tmp_path, sanitize=False)
    assert unseen.returncode == 0 and unseen.stdout == "ran to 100000000\n", unseen.stderr[-2000:]


def test_a_migrate_hook_that_leaves_the_task_where_it_was_is_a_policy_error(tmp_path):
    """set_cpus_allowed hands migrate a task that is not running, to move it
    to dest (policy.h): one left on a CPU its affinity now excludes would
    wake there.  The engine checks the hook did it, for a C policy as the
    adapter does for a Python one."""
    stays = "static void migrate_stays(const psModel *m, psData *d, psTask *p, int dest) {}\n\n"
    path = policy_file(tmp_path, renamed("rr-stays"),
                       ("const psPolicy rr_policy = {", stays + "const psPolicy rr_policy = {"),
                       (".set_nice = set_nice_rr,", ".set_nice = set_nice_rr,\n        "
                                                    ".migrate = migrate_stays,"),
                       filename="stays.c")
    ps.build_policy(path)
    sim = ps.Simulator("rr-stays", cpus=2)
    sleeper = sim.spawn(ps.programs.interactive(1, 20), cpu=0)
    sim.spawn(ps.programs.cpu_hog(), cpu=0)
    sim.run(seconds=0.01)
    with pytest.raises(ps.PolicyError, match=r"^policy round-robin: migrate left pid 1 on cpu 0, "
                                             r"not on cpu 1 as set_cpus_allowed asked$"):
        sim.set_affinity(sleeper, [1])
