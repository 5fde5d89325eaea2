"""DSQ walks and the moves from them (Scheduler.dsq_iter, dsq_move,
dsq_move_vtime; bpf_for_each(scx_dsq, ...) and scx_bpf_dsq_move in the C
dialect): the order of a walk, forward and reversed, the tasks it sees
(only those queued before it began), the moves it makes (any DSQ, with
the slice and vtime set for them), and the errors."""
import pytest

import pysched as ps
from pysched import ext

Q, R = 5, 6


def hogs(sim, n, cpus_allowed=None):
    for i in range(n):
        sim.spawn(ps.programs.cpu_hog(), name=f"h{i}", cpus_allowed=cpus_allowed)


class OnQ(ext.Scheduler):
    """Every task waits on DSQ Q, on the CPU it was on (the walks below
    take them from there)."""

    def init(self):
        self.create_dsq(Q)

    def select_cpu(self, p, prev_cpu, wake_flags):
        return prev_cpu

    def enqueue(self, p, enq_flags):
        self.dsq_insert(p, Q)


class Walker(OnQ):
    """Queues every task on DSQ Q; each dispatch records a walk forward and
    one reversed, then walks again moving every task to Q's tail, records
    the order after, and consumes the head."""

    def init(self):
        super().init()
        self.walks = []

    def dispatch(self, cpu, prev):
        fwd = [p.pid for p in self.dsq_iter(Q)]
        rev = [p.pid for p in self.dsq_iter(Q, ext.SCX_DSQ_ITER_REV)]
        it = self.dsq_iter(Q)
        moved = [p.pid for p in it if self.dsq_move(it, p, Q)]
        after = [p.pid for p in self.dsq_iter(Q)]
        self.walks.append((fwd, rev, moved, after))
        self.dsq_move_to_local(Q)


def test_a_walk_sees_each_task_once_in_order_and_reversed():
    sim = ps.Simulator(Walker, cpus=1)
    hogs(sim, 4)
    sim.run(seconds=0.5)
    walks = sim.policy_instance.walks
    assert len(walks) >= 20
    # all four wait for the first dispatch; then one runs and three wait
    assert [len(w[0]) for w in walks[:3]] == [4, 3, 3]
    for fwd, rev, moved, after in walks:
        assert rev == fwd[::-1]
        # a task moved to the tail is queued after the walk began: not
        # seen again; moving each to the tail in turn keeps the order
        assert moved == fwd and after == fwd
    # round robin: the head is consumed and runs; the task that ran before
    # it is queued at the tail after that dispatch (put_prev_task_scx)
    for k in range(1, len(walks) - 1):
        assert walks[k + 1][0] == walks[k][0][1:] + [walks[k - 1][0][0]]


class LowestPid(OnQ):
    """Runs the queued task of the lowest pid, for 3 ms slices, moving it
    out of DSQ Q by a walk; expired tasks go back to Q."""

    def dispatch(self, cpu, prev):
        best = None
        for p in self.dsq_iter(Q):
            if best is None or p.pid < best.pid:
                best = p
        if best is not None:
            it = self.dsq_iter(Q)
            it.set_slice(3_000_000)
            assert self.dsq_move(it, best, ext.SCX_DSQ_LOCAL)
            assert not self.dsq_move(it, best, ext.SCX_DSQ_LOCAL)  # gone from Q


def test_a_move_takes_the_task_chosen_with_the_slice_set_for_it():
    sim = ps.Simulator(LowestPid, cpus=1)
    hogs(sim, 3)
    sim.run(seconds=0.6)
    st = sim.stats()
    # ops.dispatch runs before the expired task is queued again (balance_one
    # before put_prev_task_scx): h0 and h1 take turns, 3 ms each, and h2,
    # never the lowest pid on Q, never runs
    assert st["cpu_ns"].tolist() == [3 * 10**8, 3 * 10**8, 0]
    assert st["nivcsw"].tolist() == [100, 100, 0]


class Staged(OnQ):
    """Tasks wait on Q; dispatch moves the head to R by one walk, then
    tries, through a walk of R begun before that move, to move it on to
    the local DSQ (refused: queued on R after that walk began), then
    through a fresh walk (done); it also tries to move it back out of Q
    by the first walk (refused: no longer on Q)."""

    def init(self):
        super().init()
        self.create_dsq(R)
        self.refused = self.moves = 0

    def dispatch(self, cpu, prev):
        early = self.dsq_iter(R)
        it = self.dsq_iter(Q)
        p = next(it, None)
        if p is None:
            return
        assert self.dsq_move(it, p, R)
        self.moves += 1
        self.refused += not self.dsq_move(early, p, ext.SCX_DSQ_LOCAL)
        self.refused += not self.dsq_move(it, p, ext.SCX_DSQ_LOCAL)
        late = self.dsq_iter(R)
        assert [t.pid for t in self.dsq_iter(R)] == [p.pid]
        assert self.dsq_move(late, p, ext.SCX_DSQ_LOCAL)


def test_a_move_needs_the_task_on_the_walked_dsq_since_before_the_walk():
    sim = ps.Simulator(Staged, cpus=1)
    hogs(sim, 3)
    sim.run(seconds=0.5)
    inst = sim.policy_instance
    assert sim.ext_exit_info.kind == ext.SCX_EXIT_NONE
    assert inst.moves > 10 and inst.refused == 2 * inst.moves
    assert sum(int(r["cpu_ns"]) for r in sim.stats()) == 5 * 10**8


class VtimeMover(OnQ):
    """Tasks wait FIFO on Q; dispatch moves them all into R's vtime order
    by pid descending, then consumes R: the highest pid runs first."""

    def init(self):
        super().init()
        self.create_dsq(R)
        self.order = []

    def dispatch(self, cpu, prev):
        it = self.dsq_iter(Q)
        for p in it:
            it.set_vtime(100 - p.pid)
            self.dsq_move_vtime(it, p, R)
        self.order.append([p.pid for p in self.dsq_iter(R)])
        self.dsq_move_to_local(R)


def test_a_vtime_move_orders_the_tasks_by_the_vtime_set():
    sim = ps.Simulator(VtimeMover, cpus=1)
    hogs(sim, 4)
    sim.run(seconds=0.2)
    first = sim.policy_instance.order[0]
    assert first == sorted(first, reverse=True) and len(first) >= 3


class MovesInEnqueue(ext.Scheduler):
    def init(self):
        self.create_dsq(Q)

    def enqueue(self, p, enq_flags):
        it = self.dsq_iter(Q)
        self.dsq_move(it, p, ext.SCX_DSQ_GLOBAL)
        self.dsq_insert(p, ext.SCX_DSQ_GLOBAL)


def test_a_move_outside_dispatch_ends_the_scheduler_naming_the_op():
    sim = ps.Simulator(MovesInEnqueue, cpus=1)
    hogs(sim, 2)
    sim.run(seconds=0.1)
    info = sim.ext_exit_info
    assert info.kind == ext.SCX_EXIT_ERROR and info.op == "enqueue"
    # h0 went straight to the idle CPU (select_cpu_dfl): h1 is the first enqueued
    assert "scx_bpf_dsq_move on h1[2]: only ops.dispatch may move" in info.msg


def test_a_walk_of_a_dsq_that_does_not_exist_is_empty_and_bad_flags_are_refused():
    seen = {}

    class Probe(ext.Scheduler):
        def init(self):
            it = self.dsq_iter(99)
            seen["rc"], seen["tasks"] = it.rc, list(it)
            seen["global"] = self.dsq_iter(ext.SCX_DSQ_GLOBAL).rc
            with pytest.raises(ValueError, match="flags=0x1: a DSQ walk takes SCX_DSQ_ITER_REV"):
                self.dsq_iter(99, 1)
            with pytest.raises(TypeError, match="a DSQ walk's state was expected"):
                self._ctx.ext_iter_next(bytearray(3))
    ps.Simulator(Probe, cpus=1)
    # bpf_iter_scx_dsq_new: -ENOENT, user DSQs only (find_user_dsq)
    assert seen == {"rc": -2, "tasks": [], "global": -2}
