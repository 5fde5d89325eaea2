/* What the engine's files (engine.c, run.c, scan.c, ticks_fast.c, and
 * syscall.c, snapshot.c and snapshot_check.c) share, and a policy never
 * sees: policy_lib.h does not include this header. */
#ifndef PS_ENGINE_PRIVATE_H
#define PS_ENGINE_PRIVATE_H
#include "engine_internal.h"
#include "pids.h"

/* The engine's own bookkeeping, in psData.fast: the fast paths', spawn's
 * counts and the pid table. */
typedef struct psFastState {
  /* CPUs whose ticks are deferred (defer[c]), and those that ticked or
   * settled at this instant, which may defer theirs when it ends */
  psCpuMask cpus_deferred, cpus_fresh;
  /* what the fast paths did (ps_fast_counts) */
  int64_t wide_scans, ticks_batched, ticks_deferred, skips;
  /* Deferred ticks (ticks_fast.c): the n ticks after jiffy `jiffies` of
   * CPU c have happened, or will, without the policy's tick; ps_catch_up
   * applies those due, as the policy said at asked_ns it could at once.
   * 0 between runs. */
  struct {
    int64_t n, asked_ns;
    uint64_t jiffies;
  } defer[PS_MAX_CPUS];
  /* spawn's placement, the allowed CPU with the fewest runnable tasks
   * (engine.c, ps_spawn): runnable[c] is the tasks in state RUNNING whose
   * cpu is c, idle tasks aside, while runnable_known.  Only calls from
   * Python between runs read it, so it is counted once, by the first spawn
   * after anything else acted on the state, and kept by each spawn after:
   * a run, a syscall or post from Python, a retune, a Python policy moving
   * a task (views.c) forget it.  A snapshot does not keep it. */
  int32_t runnable_known;
  int32_t runnable[PS_MAX_CPUS];
  /* the live tasks' slots by pid (pids.h): owned, copied with the state,
   * built again as a snapshot loads */
  psPids pids;
} psFastState;
_Static_assert(sizeof(psFastState) <= PS_FAST_STATE_BYTES, "psData.fast holds psFastState");

static inline psFastState *ps_fast(psData *d) { return (psFastState *)(void *)d->fast; }

#pragma GCC visibility push(hidden)

/* Before a hook acts on CPU c: its deferred ticks that have fallen due
 * are applied (ticks_fast.c, defer_ticks). */
void ps_catch_up_ticks(const psModel *m, psData *d, int c);
/* After a migrate hook: it moved p to dest, or the step fails (run.c). */
void ps_migrated(const psModel *m, psData *d, const psTask *p, int dest);
/* set_cpus_allowed's migration thread (2.5) or stopper (6.x) on CPU c,
 * between runs: c's running task, charged its time up to now, is
 * preempted and its CPU reschedules, moving it to its migrate_to (run.c,
 * schedule). */
void ps_migrate_now(const psModel *m, psData *d, int c);

/* The pid table again from the slots (a snapshot loaded); 0, or -1 when
 * memory ran out or two slots hold one pid (engine.c). */
int ps_pids_rebuild(const psModel *m, psData *d);

/* Push one record into ring r of d, as the model's recording options say
 * (engine.c); `what` names the buffer in the error of a full one. */
void ps_ring_push(const psModel *m, psData *d, psRing *r, const void *rec, const char *what);

/* Queue source s's next firing, if it has one; 0, or -1 when memory ran
 * out (nothing queued, nothing failed).  engine.c. */
int ps_source_schedule(const psModel *m, psData *d, int s);

#pragma GCC visibility pop

static inline void ps_catch_up(const psModel *m, psData *d, int c) {
  if (ps_cpu_test(&ps_fast(d)->cpus_deferred, c)) ps_catch_up_ticks(m, d, c);
}
/* Before task p (or NULL) is given to a hook: the CPU it is on is brought
 * up to date, so that no hook reads or changes a task whose CPU still owes
 * it ticks -- a parent computing on one CPU while its child exits on
 * another (sched_exit gives it the child's slice and averages its
 * sleep_avg), a waker, a task being moved.  Every hook call that names a
 * task goes through this (policy.h, psHooks); whole, chunked and stepped
 * runs then agree whichever CPUs their tasks are on. */
static inline void ps_ready(const psModel *m, psData *d, const psTask *p) {
  if (p) ps_catch_up(m, d, p->cpu);
}

/* ---- the clock ---- */

/* CPU c's running task has computed up to t: its burst and the CPU's busy
 * time are brought up to date.  It is due when its burst is done. */
static inline void sync_cpu(psData *d, int c, int64_t t) {
  psCpu *cpu = &d->cpu[c];
  if (cpu->run_since_ns == t) return;
  psTask *cur = &d->task[cpu->curr];
  if (cur->is_idle) return;
  int64_t from = cpu->run_since_ns > cpu->overhead_until_ns ? cpu->run_since_ns
                                                             : cpu->overhead_until_ns;
  if (t > from) {
    int64_t done = t - from;
    if (done >= cur->burst_left_ns) {
      cur->burst_left_ns = 0;
      ps_cpu_set(&d->cpus_due, c);
    } else {
      cur->burst_left_ns -= done;
    }
  }
  cpu->busy_ns += t - cpu->run_since_ns;
  cpu->run_since_ns = t;
}

/* The clock moves to t.  Only the CPUs whose burst ends by then are brought
 * up to date now; the others when they settle, and all at the end of a run
 * (their bursts' ends do not move meanwhile, and taking a stretch of
 * computing in pieces sums to taking it at once). */
static inline void advance_to(const psModel *m, psData *d, int64_t t) {
  for (int c = 0; c < m->ncpu; c++)
    if (d->burst_end_ns[c] <= t) sync_cpu(d, c, t);
  d->now_ns = t;
}

static inline void sync_all(const psModel *m, psData *d) {
  for (int c = 0; c < m->ncpu; c++) sync_cpu(d, c, d->now_ns);
}


#endif
