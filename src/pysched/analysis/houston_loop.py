"""The loop houston_stability analyses, as a return map: the self-tuning
patch's formulas at one set of parameters (Patch: the very C the
simulator runs, through pysched.analysis.houston, cached), the rounds
of one task against another's prio (return_map), with the attractor they
reach (prio_swing).  pysched.analysis.stability says what the
loop is and why it is followed round by round; pysched.analysis.houston_mix
follows the loop with every prio moving."""
import math
from dataclasses import dataclass

from . import houston
from .._checks import check_int
from ..policy.registry import preset_params

# the package's own: no name here is part of the public API
__all__ = []

PRESET = "houston-2003"
# the patch's priority space (include/linux/sched.h with the patch)
MAX_PRIO = 180
SF = 65536          # SCALE_FACTOR: nice_const is in 1/65536
ROUNDS = 40         # return-map rounds iterated to reach the attractor
ATTRACTOR = 10      # rounds the attractor is measured over
MAX_ROUNDS = 20000  # a bound on the rounds of a settling schedule (hours at HZ=1000)



class Patch:
    """The patch's formulas at one set of parameters (each a call of the C
    through pysched.analysis.houston), cached: the analysis asks for the same values
    many times."""

    def __init__(self, params):
        self.params = params
        c = self.c = houston.constants(params)
        self.hz = c["hz"]
        self.max = c["max_run_avg"]
        self.min = c["min_run_avg"]
        self.inc = c["run_avg_increment"]
        self.half_life = c["run_avg_halflife"]
        self.k = c["nice_const"] / SF
        table = {p.name: p.default for p in preset_params(PRESET, self.hz)}
        self.fair = check_int("fairness_ticks", params.get("fairness_ticks", table["fairness_ticks"]),
                              1, 1_000_000)
        self.fair_min = check_int("fairness_min", params.get("fairness_min", table["fairness_min"]),
                                  0, 1_000_000)
        self._decay, self._prio, self._slice = {}, {}, {}

    def params_with_hz(self):
        """The parameters with hz, as pysched.analysis.measure takes them."""
        return dict(self.params, hz=self.hz)

    def decay(self, x, dt):
        key = (x, dt)
        if key not in self._decay:
            self._decay[key] = houston.decay_value(x, dt, self.half_life, params=self.params)
        return self._decay[key]

    def prio(self, x, static):
        key = (x, static)
        if key not in self._prio:
            self._prio[key] = houston.effective_prio(x, static, 0, params=self.params)
        return self._prio[key]

    def slice(self, prio, static):
        key = (prio, static)
        if key not in self._slice:
            self._slice[key] = houston.task_timeslice(prio, static, params=self.params)
        return self._slice[key]

    def run(self, x, ticks, first_dt=1):
        """run_avg after `ticks` ticks of running (update_run_avg_running:
        decay over the time since the last update, then the increment,
        capped at MAX_RUN_AVG); the first tick decays over first_dt."""
        for t in range(ticks):
            nxt = min(self.decay(x, first_dt if t == 0 else 1) + self.inc, self.max)
            if nxt == x and t > 0:
                break
            x = nxt
        return x

    def top(self, static, prio):
        """The largest run_avg whose prio is at most `prio` (0 if none):
        effective_prio is nondecreasing in run_avg."""
        if self.prio(1, static) > prio:
            return 0
        lo, hi = 1, self.max
        if self.prio(hi, static) <= prio:
            return hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.prio(mid, static) <= prio:
                lo = mid
            else:
                hi = mid
        return lo

    def floor(self, dt):
        """The largest run_avg that decay_value over dt leaves unchanged
        (its truncation: value*j/sf rounds to 0), at least MIN_RUN_AVG."""
        lo, hi = max(self.min, 1), self.max
        if self.decay(lo, dt) < lo:
            return self.min
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.decay(mid, dt) >= mid:
                lo = mid
            else:
                hi = mid
        return lo

    def always_running(self):
        """The run_avg a task that always runs settles at: the fixed point
        of one tick of update_run_avg_running (one tick raises any value
        below it and lowers any above)."""
        if self.run(self.max, 1) >= self.max:
            return self.max
        lo, hi = 1, self.max
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.run(mid, 1) >= mid:
                lo = mid
            else:
                hi = mid
        return lo

    def rate(self, dt):
        """Per-tick decay rate of a large run_avg re-evaluated every dt
        ticks, as decay_value computes it."""
        return -math.log(self.decay(self.max, dt) / self.max) / dt


@dataclass
class Round:
    """One round of the return map: the prios the task was given (at its
    fairness_update re-evaluations and at the expiry of each of its
    slices) and when (`at`, ticks from the round's start), the ticks it
    ran and waited, its run_avg at the end of its
    turn and the slice it got there."""
    seen: list
    at: list
    ran: int
    waited: int
    x: int
    slice: int


def return_map(f, static, x, q, since, prio, ref_prio, ref_slice, *, at_head=False, rounds=ROUNDS,
            until=0):
    """Iterate the return map of one task against a task at prio
    `ref_prio` (a number, or a function of the ticks since the start: the
    other task's prio as its run_avg sinks) that runs slices of `ref_slice`
    ticks.

    The task starts waiting with run_avg x last updated `since` ticks ago,
    prio `prio` and slice q.  A round: the other task runs its slice (the
    task is behind it in the lru list unless at_head, so fairness_update
    does not reach it); if the task's stale prio is not worse, it runs at
    that expiry (ahead in its prio list); if worse, it heads the lru list
    and fairness_update re-evaluates it every FAIRNESS_TICKS (the first
    time after half of them, on average) until its prio is no worse:
    strictly better preempts at once, equal waits for the other's next
    expiry, and a changed prio that is still worse requeues it behind the
    running task until that expiry.  Its turn: slices, each expiry
    recomputing prio and slice (scheduler_tick), until its prio is no
    better than the other's.  At least `rounds` rounds, and until `until`
    ticks have passed.  Returns the rounds; the last one has ran=0 if the
    task got stuck at its run_avg floor (it starves), or waited=0 if it
    never got back to the other's prio (the other task starves)."""
    ref = ref_prio if callable(ref_prio) else (lambda ticks: ref_prio)
    out = []
    clock = 0
    while (len(out) < rounds or clock < until) and len(out) < MAX_ROUNDS:
        seen, at = [prio], [0]
        waited = 0
        if not at_head:
            waited = ref_slice
            since += ref_slice
        at_head = False
        if prio > ref(clock + waited):
            step = max(1, f.fair // 2)
            states = set()
            while True:
                waited += step
                since += step
                x2 = f.decay(x, since)
                p2 = f.prio(x2, static)
                seen.append(p2)
                at.append(waited)
                level = ref(clock + waited)
                # a state met before (or a run_avg that no longer decays)
                # comes back for ever without the prio getting to the other's
                state = (x2, p2, step, waited % ref_slice, level)
                if state in states:
                    out.append(Round(seen, at, 0, waited, x2, q))
                    return out
                states.add(state)
                x, since, prio = x2, 0, p2
                if p2 < level:
                    break
                rest = ref_slice - (waited - ref_slice) % ref_slice
                if p2 == level:
                    waited += rest
                    since += rest
                    break
                if p2 != seen[-2]:
                    waited += rest
                    since += rest
                    step = max(1, f.fair // 2)
                else:
                    step = f.fair
        ran = 0
        while True:
            x2 = f.run(x, q, first_dt=since if ran == 0 else 1)
            ran += q
            since = 0
            prio = f.prio(x2, static)
            seen.append(prio)
            at.append(waited + ran)
            q = f.slice(prio, static)
            if prio >= ref(clock + waited + ran):
                x = x2
                break
            if x2 == x:
                out.append(Round(seen, at, ran, 0, x2, q))
                return out
            x = x2
        out.append(Round(seen, at, ran, waited, x, q))
        clock += waited + ran
    return out


def prio_swing(rounds):
    """The prio swing (levels) over the attractor: the last ATTRACTOR rounds."""
    seen = [p for r in rounds[-ATTRACTOR:] for p in r.seen]
    return max(seen) - min(seen)
