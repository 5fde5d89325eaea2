"""Task groups of the fair presets (pysched.groups, csrc/policies/fair_group.c):
the share each group gets is its cpu.shares against its siblings' whatever
its task count (calc_group_shares gives a group living on one CPU exactly
tg->shares), groups nest, tasks move, autogroup gives each session a group,
and a run with groups is the same however it is cut, copied or pickled."""
import pickle
import random

import numpy as np
import pytest

import pysched as ps
from pysched.groups import shares_from_weight

FAIR = ["linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf"]
HOG = ps.programs.cpu_hog()


def cpu_share(sim, *groups):
    """Each group's part of what the groups together got."""
    rows = {str(r["path"]): int(r["cpu_ns"]) for r in sim.group_stats()}
    got = np.array([rows[g.path] for g in groups], dtype=float)
    return got / got.sum()


@pytest.mark.parametrize("preset", FAIR)
def test_two_groups_share_the_cpu_by_group_not_by_task(preset):
    # 1 hog against 4: per task 20:80, per group (equal shares) 50:50
    sim = ps.Simulator(preset, debug=True)
    one, four = sim.group("one"), sim.group("four")
    sim.spawn(HOG, group=one)
    for _ in range(4):
        sim.spawn(HOG, group=four)
    sim.run(2.0)
    assert cpu_share(sim, one, four) == pytest.approx([0.5, 0.5], abs=0.005)
    # the four share theirs equally
    got = sim.stats()["cpu_ns"][1:]
    assert got / got.sum() == pytest.approx([0.25] * 4, abs=0.005)


@pytest.mark.parametrize("preset", FAIR)
def test_shares_2048_against_1024_get_two_thirds(preset):
    sim = ps.Simulator(preset, debug=True)
    big, small = sim.group("big", shares=2048), sim.group("small", shares=1024)
    for _ in range(2):
        sim.spawn(HOG, group=big)
    for _ in range(3):
        sim.spawn(HOG, group=small)
    sim.run(2.0)
    assert cpu_share(sim, big, small) == pytest.approx([2 / 3, 1 / 3], abs=0.005)


@pytest.mark.parametrize("preset", FAIR)
def test_a_group_weighs_its_shares_against_root_tasks(preset):
    # a group of 3 hogs at 1024 shares is one nice-0 task's weight
    sim = ps.Simulator(preset, debug=True)
    g = sim.group("g")
    for _ in range(3):
        sim.spawn(HOG, group=g)
    sim.spawn(HOG)
    sim.run(2.0)
    got = sim.stats()["cpu_ns"]
    assert got[3] / got.sum() == pytest.approx(0.5, abs=0.005)


@pytest.mark.parametrize("preset", FAIR)
def test_nested_groups_split_their_parents_share(preset):
    # /a (1024) holds /a/x (3072) and /a/y (1024); /b (1024) beside it:
    # b 1/2, a/x 3/8, a/y 1/8
    sim = ps.Simulator(preset, debug=True)
    a, b = sim.group("a"), sim.group("b")
    x = sim.group("x", parent=a, shares=3072)
    y = sim.group("a/y")
    assert (x.path, y.path) == ("/a/x", "/a/y")
    for g in (x, y, b, x, y):
        sim.spawn(HOG, group=g)
    sim.run(2.0)
    assert cpu_share(sim, b, x, y) == pytest.approx([0.5, 0.375, 0.125], abs=0.005)
    rows = {str(r["path"]): r for r in sim.group_stats()}
    # a group's time is its children's
    assert rows["/a"]["cpu_ns"] == rows["/a/x"]["cpu_ns"] + rows["/a/y"]["cpu_ns"]
    assert rows["/a/x"]["depth"] == 1 and rows["/a/x"]["parent"] == a.gid


@pytest.mark.parametrize("preset", FAIR)
def test_a_task_moved_between_groups_takes_its_weight_along(preset):
    sim = ps.Simulator(preset, debug=True)
    a, b = sim.group("a"), sim.group("b")
    pids = [sim.spawn(HOG, group=a) for _ in range(3)] + [sim.spawn(HOG, group=b)]
    sim.run(1.0)
    before = cpu_share(sim, a, b)
    # a's three hogs move to b, one at a time, the running one included
    for pid in pids[:3]:
        sim.set_group(pid, b)
        assert sim.group_of(pid) == b
    sim.run(1.0)
    rows = {str(r["path"]): r for r in sim.group_stats()}
    assert rows["/a"]["tasks"] == 0 and rows["/b"]["tasks"] == 4
    assert before == pytest.approx([0.5, 0.5], abs=0.005)
    # in the second second only b runs
    assert rows["/b"]["cpu_ns"] - 0.5e9 == pytest.approx(1e9, abs=2e6)
    sim.set_group(pids[0], "/")
    assert sim.group_of(pids[0]).path == "/"


@pytest.mark.parametrize("preset", FAIR)
def test_set_shares_reweighs_the_group_at_once(preset):
    sim = ps.Simulator(preset, debug=True)
    a, b = sim.group("a"), sim.group("b")
    sim.spawn(HOG, group=a)
    sim.spawn(HOG, group=b)
    sim.run(1.0)
    sim.set_shares(a, weight=300)  # cpu.weight 300 -> 3072 shares
    start = {str(r["path"]): int(r["cpu_ns"]) for r in sim.group_stats()}
    sim.run(2.0)
    end = {str(r["path"]): int(r["cpu_ns"]) for r in sim.group_stats()}
    got = np.array([end["/a"] - start["/a"], end["/b"] - start["/b"]], dtype=float)
    assert got / got.sum() == pytest.approx([0.75, 0.25], abs=0.005)


def test_cpu_weight_maps_to_shares_as_sched_weight_from_cgroup():
    # DIV_ROUND_CLOSEST_ULL(weight * 1024, 100)
    assert [shares_from_weight(w) for w in (1, 50, 100, 10000)] == [10, 512, 1024, 102400]
    assert shares_from_weight(3) == 31  # 30.72 rounds to 31


@pytest.mark.parametrize("preset", FAIR)
def test_sleepers_in_groups_keep_the_invariants(preset):
    # tasks that sleep empty their group's cfs_rq (EEVDF 6.12 may delay the
    # group entity's dequeue), fork children that exit, in nested groups
    sim = ps.Simulator(preset, debug=True, seed=3)
    a = sim.group("a")
    b = sim.group("b", parent=a, shares=300)
    child = ps.Program().run(ms=2).exit()
    burst = ps.Program().loop().run(ms=3).sleep(ms=2).fork(child).end()
    for g in (a, b, b, "/"):
        sim.spawn(burst, group=g)
    sim.spawn(HOG, group=b)
    sim.run(1.0)
    stats = sim.group_stats()
    assert stats["cpu_ns"][0] == pytest.approx(1e9, abs=1e6)  # the CPU never idles
    assert (stats["cpu_ns"][1:] > 0).all()


@pytest.mark.parametrize("preset", FAIR)
def test_autogroup_gives_each_session_its_group(preset):
    # two login sessions, 1 and 4 hogs: 50:50 with autogroup on, 20:80 off
    shares = {}
    for on in (0, 1):
        sim = ps.Simulator(preset, debug=True, params={"autogroup": on})
        first = sim.spawn(HOG, session="one")
        others = [sim.spawn(HOG, session="four") for _ in range(4)]
        sim.run(2.0)
        got = sim.stats()["cpu_ns"]
        shares[on] = got[0] / got.sum()
        if on:
            assert sim.group_of(first) != sim.group_of(others[0])
            assert sim.group_of(others[0]) == sim.group_of(others[3])
            assert sim.group_stats()["shares"][1:].tolist() == [1024, 1024]
        else:
            assert sim.group_of(first).path == "/"
    assert shares[1] == pytest.approx(0.5, abs=0.005)
    assert shares[0] == pytest.approx(0.2, abs=0.005)


@pytest.mark.parametrize("preset", FAIR)
def test_forked_children_stay_in_their_parents_group(preset):
    sim = ps.Simulator(preset, params={"autogroup": 1}, debug=True)
    parent = ps.Program().fork(ps.programs.cpu_hog(), n=3).loop().run(ms=5).sleep(ms=5).end()
    sim.spawn(parent, session="build")
    sim.spawn(HOG, session="shell")
    sim.run(0.5)
    groups = {sim.group_of(int(p)).path for p in sim.stats()["pid"]}
    assert groups == {"/autogroup-1", "/autogroup-2"}
    build = [int(p) for p in sim.stats()["pid"] if sim.group_of(int(p)).path == "/autogroup-1"]
    assert len(build) == 4


@pytest.mark.parametrize("preset", FAIR)
def test_groups_on_two_cpus(preset):
    # group a (4 hogs) and group b (1 hog) on 2 CPUs: the balancer spreads
    # the tasks, calc_group_shares splits a's shares over both CPUs by
    # load, and both CPUs stay busy
    sim = ps.Simulator(preset, cpus=2, debug=True)
    a, b = sim.group("a"), sim.group("b")
    for _ in range(4):
        sim.spawn(HOG, group=a)
    sim.spawn(HOG, group=b)
    sim.run(2.0)
    rows = {str(r["path"]): int(r["cpu_ns"]) for r in sim.group_stats()}
    # the balancer moved tasks through their groups' cfs_rqs on both CPUs
    assert sim.stats()["nr_migrations"].sum() > 0
    assert rows["/"] == pytest.approx(4e9, rel=0.002)
    assert rows["/a"] + rows["/b"] == pytest.approx(4e9, rel=0.002)
    weights = [sim._core.policy_call(6, (a.gid, c))[0] for c in range(2)]
    assert all(2 <= w <= 1024 for w in weights)


def workload(preset, cpus, seed):
    r = random.Random(seed)
    sim = ps.Simulator(preset, cpus=cpus, seed=seed)
    groups = ["/"]
    for k in range(r.randint(1, 4)):
        groups.append(sim.group(f"g{k}", shares=r.choice([100, 1024, 3000]),
                                parent=r.choice(groups)).path)
    child = ps.Program().run(ms=2).exit()
    progs = [HOG, ps.Program().loop().run(ms=r.randint(1, 4)).sleep(ms=r.randint(1, 4)).end(),
             ps.Program().loop().run(ms=2).fork(child).sleep(ms=3).end()]
    for _ in range(r.randint(2, 6)):
        sim.spawn(r.choice(progs), group=r.choice(groups))
    moves = [(r.randint(1, 60), r.randint(1, 6), r.choice(groups)) for _ in range(4)]
    return sim, moves


def drive(sim, moves, cut):
    """Run 100 ms, moving tasks between groups at set ticks; `cut`: run
    whole between moves, in chunks of 7 ticks, or tick by tick."""
    t = 0
    for at, pid, group in sorted(moves) + [(100, None, None)]:
        while t < at:
            n = {"whole": at - t, "chunks": min(7, at - t), "stepped": 1}[cut]
            sim.step(n)
            t += n
        if pid is not None and pid <= sim._core.ntasks and sim.stats()["exit_ns"][pid - 1] < 0:
            sim.set_group(pid, group)
    return sim.stats(), sim.group_stats()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("preset", FAIR)
def test_a_run_with_groups_is_the_same_however_cut(preset, seed):
    results = []
    for cut in ("whole", "chunks", "stepped"):
        sim, moves = workload(preset, 1 + seed % 2, seed)
        results.append(drive(sim, moves, cut))
    for stats, groups in results[1:]:
        assert (stats == results[0][0]).all()
        assert (groups == results[0][1]).all()


@pytest.mark.parametrize("preset", FAIR)
def test_copies_and_pickles_carry_the_groups(preset):
    sim, _ = workload(preset, 2, 11)
    sim.run(0.05)
    twins = [sim.copy(), pickle.loads(pickle.dumps(sim))]
    for s in [sim] + twins:
        s.set_group(1, sim.groups()[-1])
        s.run(0.05)
    for twin in twins:
        twin.check()
        assert (twin.stats() == sim.stats()).all()
        assert (twin.group_stats() == sim.group_stats()).all()
        assert twin.groups() == sim.groups()
    # the copy's groups are its own
    twins[0].group("later")
    assert len(sim.groups()) == len(twins[0].groups()) - 1


def test_errors_name_the_value_and_its_range():
    sim = ps.Simulator("linux-6.12-eevdf")
    with pytest.raises(ValueError, match=r"shares=1 is outside the allowed range 2\.\.262144"):
        sim.group("a", shares=1)
    with pytest.raises(ValueError, match=r"weight=0 is outside the allowed range 1\.\.10000"):
        sim.group("a", weight=0)
    with pytest.raises(ValueError, match="not both"):
        sim.group("a", shares=100, weight=100)
    a = sim.group("a")
    with pytest.raises(ValueError, match="exists already"):
        sim.group("a")
    with pytest.raises(KeyError, match="no task group '/nope'.*/a"):
        sim.spawn(HOG, group="nope")
    with pytest.raises(KeyError, match="no task group"):
        sim.set_group(sim.spawn(HOG, group=a), "/b")
    with pytest.raises(ValueError, match="root group"):
        sim.set_shares("/", shares=2048)
    for k in range(14):
        sim.group(f"g{k}")
    with pytest.raises(ValueError, match="at most 15 task groups"):
        sim.group("one-too-many")


@pytest.mark.parametrize("preset", ["linux-2.5.64", "linux-2.4.20", "houston-2003"])
def test_groups_under_another_preset_say_which_presets_have_them(preset):
    sim = ps.Simulator(preset)
    with pytest.raises(ValueError, match=f"fair presets.*{preset}"):
        sim.group("a")


@pytest.mark.parametrize("preset", FAIR)
def test_the_queue_lists_every_task_of_every_group(preset):
    sim = ps.Simulator(preset, debug=True)
    a = sim.group("a")
    b = sim.group("b", parent=a)
    pids = [sim.spawn(HOG, group=g) for g in (a, b, b, "/")]
    sim.run(0.05)
    rows = sim.queue()
    column = sim.queue_columns.index("pid")
    assert sorted(r[column] for r in rows) == sorted(pids)


@pytest.mark.parametrize("preset", FAIR)
def test_a_damaged_group_in_a_snapshot_is_refused(preset):
    sim = ps.Simulator(preset)
    g = sim.group("a")
    sim.spawn(HOG, group=g)
    sim.spawn(HOG)
    sim.run(0.05)
    state = sim.__getstate__()
    blob = bytearray(state["_core"])
    # every 1024 of the state in turn (the group's shares, its entity's
    # weight, its cfs_rq's load, the tasks' weights ...) set to 0: each
    # snapshot is checked as it is loaded (fair_check, fair_check_groups)
    refused = 0
    value = (1024).to_bytes(4, "little")
    at = blob.find(value)
    tried = 0
    while at >= 0 and tried < 400:
        damaged = bytearray(blob)
        damaged[at:at + 4] = (0).to_bytes(4, "little")
        try:
            ps._core.Sim.restore(bytes(damaged), None, None, -1)
        except Exception:
            refused += 1
        at = blob.find(value, at + 1)
        tried += 1
    # nothing crashed, and some damage was caught
    assert refused > 0


@pytest.mark.parametrize("preset", FAIR)
def test_a_sessions_nice_sets_its_autogroups_weight(preset):
    # nice 5 weighs 335 against nice 0's 1024 (sched_prio_to_weight)
    sim = ps.Simulator(preset, params={"autogroup": 1}, debug=True)
    a = sim.spawn(HOG, session="a")
    for _ in range(2):
        sim.spawn(HOG, session="b")
    assert sim.set_session_nice("b", 5) == 335
    sim.run(2.0)
    cpu = sim.stats()["cpu_ns"]
    assert cpu[a - 1] / cpu.sum() == pytest.approx(1024 / (1024 + 335), abs=0.005)
    with pytest.raises(KeyError, match="no autogroup of session 'c'"):
        sim.set_session_nice("c", 0)
    with pytest.raises(ValueError, match=r"nice=20 is outside the allowed range -20\.\.19"):
        sim.set_session_nice("a", 20)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("preset", FAIR)
def test_random_moves_renices_and_shares_keep_the_invariants(preset, seed):
    # groups nested at random, tasks that sleep and fork, and between steps
    # moves, renices, new shares, affinity changes and RT switches, on 1-3
    # CPUs, checked after every instant (debug=True)
    r = random.Random(seed)
    sim = ps.Simulator(preset, cpus=1 + seed % 3, debug=True, seed=seed)
    groups = ["/"]
    for k in range(r.randint(1, 6)):
        groups.append(sim.group(f"g{k}", shares=r.choice([2, 100, 1024, 5000]),
                                parent=r.choice(groups)).path)
    child = ps.Program().run(ms=3).exit()
    progs = [HOG, ps.Program().loop().run(ms=r.randint(1, 5)).sleep(ms=r.randint(1, 5)).end(),
             ps.Program().loop().run(us=300).sleep(us=700).end(),
             ps.Program().loop().run(ms=2).fork(child).sleep(ms=3).end()]
    for _ in range(r.randint(2, 8)):
        sim.spawn(r.choice(progs), group=r.choice(groups), nice=r.randint(-5, 5))
    for _ in range(30):
        sim.run(0.01)
        table = sim.stats()
        pids = [int(p) for p in table["pid"][table["exit_ns"] < 0]]
        pid, what = r.choice(pids), r.random()
        if what < 0.3:
            sim.set_group(pid, r.choice(groups))
        elif what < 0.4:
            sim.renice(pid, r.randint(-10, 10))
        elif what < 0.5 and len(groups) > 1:
            sim.set_shares(r.choice(groups[1:]), shares=r.choice([2, 300, 1024, 4096]))
        elif what < 0.55:
            sim.set_affinity(pid, [r.randrange(sim.cpus)])
        elif what < 0.6:
            policy = r.choice(["normal", "fifo"])
            sim.setscheduler(pid, policy, 0 if policy == "normal" else 5)
    total = sim.group_stats()["cpu_ns"][0]
    assert 0 < total <= sim.cpus * sim.now_ns
