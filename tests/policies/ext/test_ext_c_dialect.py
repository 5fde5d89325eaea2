"""sched_ext schedulers in the kernel's C dialect (pysched/scx.h), built with
pysched.build_policy: experiments/sched_ext/wvtime.bpf.c behaves event for
event as its Python twin (pysched.ext.examples.Simple), gives the kernel's
weight ratio, keeps its maps per simulator (two at once, copies, pickles,
runs however cut), and the maps' semantics (array bounds, update flags,
hash insert/delete) are the kernel's; constructs the dialect does not
support are build errors that name them."""
import copy
import pickle
import shlex
import shutil
import sysconfig

import pytest

import pysched as ps
from pysched import ext
from pysched.ext.examples import Simple

from repo_paths import ROOT

EXAMPLE = ROOT / "experiments" / "sched_ext" / "wvtime.bpf.c"
CC = shlex.split(sysconfig.get_config_var("CC") or "cc")[0]
NICE0, NICE5 = 1024, 335  # sched_prio_to_weight[20], [25]

pytestmark = pytest.mark.skipif(shutil.which(CC) is None,
                                reason=f"no C compiler: {CC}, which built Python, is not installed")


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    """One cache of built libraries for the whole session, outside $HOME."""
    d = tmp_path_factory.getbasetemp() / "policy-cache"
    monkeypatch.setenv("PYSCHED_CACHE", str(d))
    return d


@pytest.fixture
def wvtime():
    return ps.build_policy(EXAMPLE, name="wvtime")


def workload(sim):
    for name, nice in [("h0", 0), ("h1", 3), ("h2", -2)]:
        sim.spawn(ps.programs.cpu_hog(), name=name, nice=nice)
    sim.spawn(ps.programs.interactive(1, 10), name="ed")
    sim.spawn(ps.programs.interactive(3, 7), name="ed2", nice=5)


def outputs(sim):
    return sim.stats().tobytes(), sim.cpu_stats()["nr_dispatched"].tobytes(), \
        [tuple(e) for e in sim.events()]


def cpu_of(sim, prefix):
    return sum(int(r["cpu_ns"]) for r in sim.stats() if r["name"].startswith(prefix))


def test_the_preset_is_named_after_the_ops_name(wvtime):
    assert wvtime.presets == ("wvtime",)


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_the_c_scheduler_gives_the_event_log_of_its_python_twin(wvtime, cpus):
    sims = [ps.Simulator(pol, cpus=cpus, seed=7, record="events") for pol in ("wvtime", Simple)]
    for s in sims:
        workload(s)
        s.run(seconds=2)
    c, py = (outputs(s) for s in sims)
    assert len(c[2]) > 100
    assert c == py
    assert sims[0].ext_exit_info.kind == ext.SCX_EXIT_NONE


@pytest.mark.parametrize("cpus", [1, 4])
def test_weighted_vtime_gives_the_kernel_weight_ratio(wvtime, cpus):
    sim = ps.Simulator("wvtime", cpus=cpus)
    for i in range(cpus):
        sim.spawn(ps.programs.cpu_hog(), name=f"a{i}")
        sim.spawn(ps.programs.cpu_hog(), name=f"b{i}", nice=5)
    sim.run(seconds=20)
    share = cpu_of(sim, "a") / (cpu_of(sim, "a") + cpu_of(sim, "b"))
    assert abs(share - NICE0 / (NICE0 + NICE5)) < 0.01


def test_two_simulators_stepped_in_turn_keep_their_own_maps(wvtime):
    """Interleaved, each gives what it gives alone: no map is shared."""
    alone = ps.Simulator("wvtime", cpus=2, record="events")
    workload(alone)
    alone.run(seconds=1)
    a, b = (ps.Simulator("wvtime", cpus=2, record="events") for _ in range(2))
    workload(a)
    b.spawn(ps.programs.cpu_hog(), name="other", nice=-5)   # a different history
    for _ in range(20):
        a.run(seconds=0.05)
        b.run(seconds=0.05)
    assert outputs(a) == outputs(alone)


def test_runs_whole_in_chunks_and_stepped_agree(wvtime):
    sims = [ps.Simulator("wvtime", cpus=3, record="events") for _ in range(3)]
    for s in sims:
        workload(s)
    sims[0].run(seconds=0.3)
    for _ in range(6):
        sims[1].run(seconds=0.05)
    sims[2].step(ticks=300)
    assert outputs(sims[0]) == outputs(sims[1]) == outputs(sims[2])


def test_copies_and_pickles_carry_the_maps(wvtime):
    sim = ps.Simulator("wvtime", cpus=2, record="events", debug=True)
    workload(sim)
    sim.run(seconds=0.2)
    twins = [copy.deepcopy(sim), pickle.loads(pickle.dumps(sim))]
    for s in [sim] + twins:
        s.run(seconds=0.3)
    assert outputs(sim) == outputs(twins[0]) == outputs(twins[1])


MAPS_CHECK = r"""
#include <pysched/scx.h>

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4);
         __type(key, u32); __type(value, u32); } arr SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 1);
         __type(key, u32); __type(value, u64); } pc SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 2);
         __type(key, u64); __type(value, u64); } h SEC(".maps");

#define CHECK(n, cond) do { if (!(cond)) { scx_bpf_error("check %d failed", n); return; } } while (0)

/* on the first enqueue: the kernel's answers of arraymap.c and hashtab.c */
void BPF_STRUCT_OPS(mc_enqueue, struct task_struct *p, u64 enq_flags)
{
	u32 k = 3, big = 4, v = 7, *e;
	u64 a = 10, b = 20, c = 30, x = 1, y = 2, *hv;

	scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags);
	e = bpf_map_lookup_elem(&arr, &k);
	CHECK(1, e && *e <= 7);
	if (*e == 7)
		return;   /* checked before */
	CHECK(2, *e == 0);                                            /* zeroed */
	CHECK(3, !bpf_map_lookup_elem(&arr, &big));                   /* out of range */
	CHECK(4, bpf_map_update_elem(&arr, &big, &v, BPF_ANY) == -E2BIG);
	CHECK(5, bpf_map_update_elem(&arr, &k, &v, BPF_NOEXIST) == -EEXIST);
	CHECK(6, bpf_map_update_elem(&arr, &k, &v, BPF_ANY) == 0 && *e == 7);
	CHECK(7, bpf_map_delete_elem(&arr, &k) == -EINVAL);
	CHECK(8, !bpf_map_lookup_elem(&h, &a));
	CHECK(9, bpf_map_update_elem(&h, &a, &x, BPF_EXIST) == -ENOENT);
	CHECK(10, bpf_map_update_elem(&h, &a, &x, BPF_NOEXIST) == 0);
	CHECK(11, bpf_map_update_elem(&h, &a, &y, BPF_NOEXIST) == -EEXIST);
	CHECK(12, bpf_map_update_elem(&h, &b, &y, BPF_ANY) == 0);
	CHECK(13, bpf_map_update_elem(&h, &c, &y, BPF_ANY) == -E2BIG);   /* full */
	hv = bpf_map_lookup_elem(&h, &a);
	CHECK(14, hv && *hv == 1);
	CHECK(15, bpf_map_delete_elem(&h, &a) == 0 && !bpf_map_lookup_elem(&h, &a));
	CHECK(16, bpf_map_delete_elem(&h, &a) == -ENOENT);
	CHECK(17, bpf_map_update_elem(&h, &c, &y, BPF_ANY) == 0);        /* a slot again */
	hv = bpf_map_lookup_elem(&h, &b);
	CHECK(18, hv && *hv == 2);
}

/* each CPU's per-CPU slot counts the tasks that ran there */
void BPF_STRUCT_OPS(mc_running, struct task_struct *p)
{
	u32 zero = 0;
	u64 *n = bpf_map_lookup_elem(&pc, &zero);

	if (n)
		(*n)++;
	for (s32 cpu = 0; cpu < (s32)scx_bpf_nr_cpu_ids(); cpu++) {
		u64 *m = bpf_map_lookup_percpu_elem(&pc, &zero, cpu);
		CHECK(20, m && (cpu == (s32)bpf_get_smp_processor_id()) == (m == n));
	}
}

SCX_OPS_DEFINE(mc_ops, .enqueue = (void *)mc_enqueue, .running = (void *)mc_running,
	       .name = "mapcheck");
"""


def build(tmp_path, text, name):
    path = tmp_path / f"{name}.bpf.c"
    path.write_text(text)
    return ps.build_policy(path, name=name)


def test_maps_answer_as_the_kernels(tmp_path):
    build(tmp_path, MAPS_CHECK, "mapcheck")
    sim = ps.Simulator("mapcheck", cpus=2)
    workload(sim)
    sim.run(seconds=0.5)
    info = sim.ext_exit_info
    assert info.kind == ext.SCX_EXIT_NONE, info.msg


def test_a_failed_check_is_seen_as_the_schedulers_exit(tmp_path):
    """The test above could fail: a wrong expectation ends the scheduler."""
    build(tmp_path, MAPS_CHECK.replace("*e == 0);", "*e == 1);").replace("mapcheck", "mapbad"),
          "mapbad")
    sim = ps.Simulator("mapbad", cpus=2)
    workload(sim)
    sim.run(seconds=0.1)
    info = sim.ext_exit_info
    assert info.kind == ext.SCX_EXIT_ERROR_BPF and "check 2 failed" in info.msg


def test_a_map_too_large_for_the_area_ends_the_scheduler_naming_it(tmp_path):
    text = MAPS_CHECK.replace("__uint(max_entries, 4)", "__uint(max_entries, 100000)")
    build(tmp_path, text.replace('"mapcheck"', '"maphuge"'), "maphuge")
    sim = ps.Simulator("maphuge")
    workload(sim)
    sim.run(seconds=0.1)
    info = sim.ext_exit_info
    assert info.kind == ext.SCX_EXIT_ERROR_BPF
    # 100000 u32 elements, each 8 bytes: arraymap.c's round_up(value_size, 8)
    assert "map &arr needs 800000 bytes" in info.msg and "PS_SCX_MAP_BYTES" in info.msg


SMALLEST = r"""
#include <pysched/scx.h>
%s
SCX_OPS_DEFINE(x_ops, %s .name = "%s");
"""


@pytest.mark.parametrize("body, says", [
    ("void BPF_STRUCT_OPS(x_dispatch, s32 cpu, struct task_struct *prev)"
     "{ struct cgroup *c; bpf_for_each(css, c, 0, 0, 0) {} }",
     "bpf_iter_css"),
    ("void BPF_STRUCT_OPS(x_dispatch, s32 cpu, struct task_struct *prev)"
     "{ bpf_loop(1, 0, 0, 0); }", "bpf_loop is not supported"),
    ("struct bpf_spin_lock; void BPF_STRUCT_OPS(x_tick, struct task_struct *p)"
     "{ bpf_spin_lock(0); }", "bpf_spin_lock is not supported"),
    ("struct { __uint(type, BPF_MAP_TYPE_LRU_HASH); __uint(max_entries, 4);"
     " __type(key, u32); __type(value, u32); } m SEC(\".maps\");"
     "void BPF_STRUCT_OPS(x_tick, struct task_struct *p) { u32 k = 0; bpf_map_lookup_elem(&m, &k); }",
     "supports maps of type BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_PERCPU_ARRAY and BPF_MAP_TYPE_HASH only"),
])
def test_an_unsupported_construct_is_a_build_error_naming_it(tmp_path, body, says):
    path = tmp_path / "bad.bpf.c"
    path.write_text(SMALLEST % (body, "", "bad"))
    with pytest.raises(ps.PolicyBuildError) as e:
        ps.build_policy(path, name="bad")
    assert says in str(e.value) and "bad.bpf.c:" in str(e.value)


def test_an_op_the_class_does_not_call_is_a_build_error_naming_it(tmp_path):
    body = "void BPF_STRUCT_OPS(x_acquire, s32 cpu, void *args) {}"
    path = tmp_path / "acq.bpf.c"
    path.write_text(SMALLEST % (body, ".cpu_acquire = (void *)x_acquire,", "acq"))
    with pytest.raises(ps.PolicyBuildError, match="no member named .cpu_acquire"):
        ps.build_policy(path, name="acq")


def first_switches(sim, n=3):
    kind = ps.EVENT_KINDS.index("switch")
    return [int(e["time_ns"]) for e in sim.events() if e["kind"] == kind][:n]


def test_a_const_volatile_tunable_is_each_simulators_parameter(wvtime):
    """slice_ns (const volatile u64 = SCX_SLICE_DFL) is a parameter with the
    compiled default; two simulators stepped in turn each keep their own."""
    default, short = (ps.Simulator("wvtime", record="events", params=p)
                      for p in ({}, {"slice_ns": 5_000_000}))
    assert default.params["slice_ns"] == ext.SCX_SLICE_DFL
    for s in (default, short):
        for i in range(2):
            s.spawn(ps.programs.cpu_hog(), name=f"h{i}")
    for _ in range(4):
        default.run(seconds=0.05)
        short.run(seconds=0.05)
    # the first hog runs one slice, then the second takes the CPU
    assert first_switches(default)[1] == ext.SCX_SLICE_DFL
    assert first_switches(short)[1] == 5_000_000
    python = ps.Simulator(Simple, record="events")
    for i in range(2):
        python.spawn(ps.programs.cpu_hog(), name=f"h{i}")
    python.run(seconds=0.2)
    assert outputs(default) == outputs(python)


def test_a_tunable_outside_its_types_range_is_refused(wvtime):
    with pytest.raises((ps.ConfigError, ValueError), match="slice_ns"):
        ps.Simulator("wvtime", params={"slice_ns": -1})


def test_compile_errors_name_the_files_own_lines(tmp_path):
    path = tmp_path / "typo.bpf.c"
    path.write_text(SMALLEST % ("const volatile u32 nr = 4;\n\nvoid BPF_STRUCT_OPS(x_tick, "
                                "struct task_struct *p) { nosuch = 1; }", "", "typo"))
    with pytest.raises(ps.PolicyBuildError, match=r"typo\.bpf\.c:5:\d+: .*nosuch"):
        ps.build_policy(path, name="typo")


GLOBALS = r"""
#include <pysched/scx.h>

static u32 nr_enqueued;
static u64 slice = SCX_SLICE_DFL / 2;
bool quitting = false;

/* each enqueue counts; the 40th ends the scheduler, at a time that is the
 * simulator's own only if the count is */
void BPF_STRUCT_OPS(g_enqueue, struct task_struct *p, u64 enq_flags)
{
	if (quitting)
		return;
	if (++nr_enqueued == 40) {
		quitting = true;
		scx_bpf_error("enqueue %u with slice %llu", nr_enqueued, (unsigned long long)slice);
	}
	scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice, enq_flags);
}

SCX_OPS_DEFINE(g_ops, .enqueue = (void *)g_enqueue, .name = "globals");
"""


def globals_of_each_simulator(preset, branch):
    """The exit of `preset` alone on two hogs, which ends it at its 40th
    enqueue; two simulators stepped in turn and a branch of one taken
    half-way (by `branch`) end the same way: the scheduler's globals are
    each simulator's own."""
    def sim():
        s = ps.Simulator(preset, cpus=1)
        for i in range(2):
            s.spawn(ps.programs.cpu_hog(), name=f"h{i}")
        return s
    alone = sim()
    alone.run(seconds=1)
    info = alone.ext_exit_info
    a, b = sim(), sim()
    for _ in range(5):
        a.run(seconds=0.05)
        b.run(seconds=0.05)
    assert a.ext_exit_info.kind == ext.SCX_EXIT_NONE   # 0.25 s: before the 40th
    twin = branch(a)
    for _ in range(15):
        for s in (a, b, twin):
            s.run(seconds=0.05)
    assert a.ext_exit_info == b.ext_exit_info == twin.ext_exit_info == info
    return info


def test_plain_globals_are_each_simulators_own(tmp_path):
    build(tmp_path, GLOBALS, "globals")
    info = globals_of_each_simulator("globals", copy.deepcopy)
    assert info.kind == ext.SCX_EXIT_ERROR_BPF
    assert "enqueue 40 with slice 10000000" in info.msg   # initialised, 10 ms slices


AGGREGATES = r"""
#include <pysched/scx.h>

struct stats {
	u64 enq;
	u64 last_pid;
};
typedef struct {
	u32 n;
} counter_t;

u64 nr_a, nr_b = 2;
static u64 per_pid[64];
static struct stats st = { .enq = 100 };
counter_t ctr;
static u32 seen[4] = {1, 2,
		      3, 4};

/* the 40th enqueue ends the scheduler with what every kind of global holds */
void BPF_STRUCT_OPS(agg_enqueue, struct task_struct *p, u64 enq_flags)
{
	nr_a++;
	nr_b++;
	per_pid[p->pid & 63]++;
	st.enq++;
	st.last_pid = p->pid;
	ctr.n++;
	seen[3] = 10;
	if (st.enq == 140)
		scx_bpf_error("a=%llu b=%llu pid1=%llu seen=%u ctr=%u size=%zu", nr_a, nr_b,
			      per_pid[1], seen[0] + seen[3], ctr.n, sizeof(per_pid));
	scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL / 2, enq_flags);
}

SCX_OPS_DEFINE(agg_ops, .enqueue = (void *)agg_enqueue, .name = "aggregates");
"""


def test_arrays_structs_and_several_scalars_a_line_are_each_simulators_own(tmp_path):
    build(tmp_path, AGGREGATES, "aggregates")
    info = globals_of_each_simulator("aggregates", lambda s: pickle.loads(pickle.dumps(s)))
    assert info.kind == ext.SCX_EXIT_ERROR_BPF
    # initialised from the file, counted by this simulator alone
    assert "a=40 b=42 pid1=20 seen=11 ctr=40 size=512" in info.msg, info.msg


def test_a_file_scope_pointer_is_a_build_error_at_its_line(tmp_path):
    text = GLOBALS.replace("bool quitting = false;", "bool quitting = false;\nstatic u64 *last;")
    with pytest.raises(ps.PolicyBuildError, match=r"pointers\.bpf\.c:7:.*file-scope pointer last"):
        build(tmp_path, text, "pointers")


KEEPS = r"""
#include <pysched/scx.h>

/* every task to the global DSQ but pid 3, which it keeps */
void BPF_STRUCT_OPS(keeps_enqueue, struct task_struct *p, u64 enq_flags)
{
	if (p->pid != 3)
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, enq_flags);
}

SCX_OPS_DEFINE(keeps_ops, .enqueue = (void *)keeps_enqueue, .name = "keeps");
"""


def test_the_conformance_kit_checks_a_c_scheduler_as_a_python_one(wvtime, tmp_path):
    from pysched.policy.testing import EXT_CHECKS, check_policy
    report = check_policy(wvtime, checks=EXT_CHECKS, cpus=(1, 2))
    assert len(report.results) == 10 and not report.failures, str(report)
    build(tmp_path, KEEPS, "keeps")
    report = check_policy("keeps", checks=EXT_CHECKS, cpus=(1,))
    (bad,) = report.failures
    assert bad.check == "undispatched"
    assert "client0[3] failed to run for 0.750s; ops.enqueue took pid 3 at t=" in bad.error


LOWEST_PID = r"""
#include <pysched/scx.h>

#define Q 5

s32 BPF_STRUCT_OPS(lp_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	return prev_cpu;
}

void BPF_STRUCT_OPS(lp_enqueue, struct task_struct *p, u64 enq_flags)
{
	scx_bpf_dsq_insert(p, Q, SCX_SLICE_DFL, enq_flags);
}

/* the queued task of the lowest pid, for 3 ms, found by a walk of Q */
void BPF_STRUCT_OPS(lp_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_struct *p;
	s32 best = -1;
	int i, n = 0;

	bpf_for_each(scx_dsq, p, Q, 0) {
		if (best < 0 || p->pid < best)
			best = p->pid;
	}
	bpf_for(i, 0, 3)
		n++;
	bpf_repeat(2)
		n++;
	if (n != 5)
		scx_bpf_error("bpf_for and bpf_repeat looped %d times", n);
	bpf_for_each(scx_dsq, p, Q, 0) {
		if (p->pid != best)
			continue;
		scx_bpf_dsq_move_set_slice(BPF_FOR_EACH_ITER, 3000000);
		if (!scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			scx_bpf_error("%d not moved", best);
		break;
	}
}

s32 BPF_STRUCT_OPS_SLEEPABLE(lp_init)
{
	return scx_bpf_create_dsq(Q, -1);
}

SCX_OPS_DEFINE(lp_ops, .select_cpu = (void *)lp_select_cpu, .enqueue = (void *)lp_enqueue,
	       .dispatch = (void *)lp_dispatch, .init = (void *)lp_init, .name = "lowest_pid");
"""


def test_a_dsq_walk_in_c_gives_the_event_log_of_its_python_twin(tmp_path):
    from test_ext_iter import LowestPid
    build(tmp_path, LOWEST_PID, "lowest_pid")
    runs = []
    for policy in ("lowest_pid", LowestPid):
        sim = ps.Simulator(policy, cpus=1, record="events")
        for i in range(3):
            sim.spawn(ps.programs.cpu_hog(), name=f"h{i}")
        sim.run(seconds=0.6)
        assert sim.ext_exit_info.kind == ext.SCX_EXIT_NONE, sim.ext_exit_info.msg
        runs.append((sim.events().tobytes(), sim.stats()["cpu_ns"].tolist()))
    assert runs[0] == runs[1] and runs[0][1] == [3 * 10**8, 3 * 10**8, 0]


AFFINE = r"""
#include <pysched/scx.h>

/* a task allowed one CPU goes there; the others to an idle allowed CPU
 * (scx_bpf_pick_idle_cpu over p->cpus_ptr), else where they were */
s32 BPF_STRUCT_OPS(affine_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	u32 first = bpf_cpumask_first(p->cpus_ptr);
	if (!bpf_cpumask_test_cpu(first, p->cpus_ptr) || bpf_cpumask_test_cpu(1024, p->cpus_ptr))
		scx_bpf_error("cpumask of %d: first %u is not in it", p->pid, first);
	if (bpf_cpumask_weight(p->cpus_ptr) == 1)
		return first;
	s32 cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	return cpu >= 0 ? cpu : prev_cpu;
}

void BPF_STRUCT_OPS(affine_enqueue, struct task_struct *p, u64 enq_flags)
{
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, enq_flags);
}

SCX_OPS_DEFINE(affine_ops, .select_cpu = (void *)affine_select_cpu,
	       .enqueue = (void *)affine_enqueue, .name = "affine");
"""


def test_the_c_dialect_reads_cpumasks_past_cpu_63(tmp_path):
    """p->cpus_ptr is all 1,024 CPUs' words: bpf_cpumask_first, _test_cpu
    and _weight and scx_bpf_pick_idle_cpu see CPU 700 of 1,024."""
    build(tmp_path, AFFINE, "affine")
    sim = ps.Simulator("affine", cpus=1024, seed=3, record="events")
    pinned = sim.spawn(ps.programs.interactive(2, 1), name="pinned", cpus_allowed=[700])
    pair = sim.spawn(ps.programs.interactive(1, 1), name="pair", cpus_allowed=[900, 1000])
    sim.run(seconds=0.1)
    assert sim.ext_exit_info.kind == ext.SCX_EXIT_NONE, sim.ext_exit_info.msg
    ev = sim.events()
    switch = ps.EVENT_KINDS.index("switch")
    cpus = {pid: set(ev["cpu"][(ev["kind"] == switch) & (ev["pid"] == pid)].tolist())
            for pid in (pinned, pair)}
    assert cpus[pinned] == {700} and cpus[pair] <= {900, 1000} and cpus[pair]
    assert sim.task(pinned).nr_wakeups > 10
