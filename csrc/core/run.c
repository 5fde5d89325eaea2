/* The machine: clock, per-CPU ticks, the event loop, the context switch and
 * accounting.  Scheduling decisions are the policy's (policy.h); the state
 * these act on is made and checked in engine.c.
 *
 * Time (DESIGN.md, "Time"): at each instant the engine first delivers
 * everything due then in interrupt context -- the CPUs' ticks (jiffies++ then
 * scheduler_tick, CPU 0 first), then expired timers, I/O completions and
 * source firings in canonical order -- and only then lets each CPU act:
 * a need_resched switches at once (user-mode preemption on return from the
 * interrupt), and the running task continues its program in process
 * context. */
#include <stdio.h>

#include "scan.h"
#include "ticks_fast.h"
#include "watch.h"

/* ---- accounting ---- */

static void acct(const psModel *m, psData *d, psTask *t, int64_t now, int to) {
  int64_t dt = now - t->since_ns;
  if (t->acct == PS_ACCT_RUN) {
    t->cpu_ns += dt;
    if (m->watch & PS_WATCH_ASSERT_UNCHARGED) ps_watch_charged(m, d, t);
  } else if (t->acct == PS_ACCT_WAIT) {
    /* a wait for a CPU ends (watch.h) */
    t->wait_ns += dt;
    if (dt > t->wait_max_ns) t->wait_max_ns = dt;
    if (dt > m->starve_ns && t->starved_ns < 0) t->starved_ns = t->since_ns + m->starve_ns;
    if (m->watch) ps_waiting_remove(d, t);
  } else if (t->acct == PS_ACCT_SLEEP) {
    t->sleep_ns += dt;
  }
  if (to == PS_ACCT_WAIT && m->watch) ps_waiting_add(d, t);
  t->acct = to;
  t->since_ns = now;
}

/* ---- events and wakeups ---- */

/* Inline in the delivery of a timer, which most wakeups are. */
__attribute__((always_inline)) static inline int try_to_wake_up(const psModel *m, psData *d,
                                                                psTask *p, int mask,
                                                                psTask *waker, int sync) {
  if (!(p->state & mask)) return 0;
  ps_ready(m, d, p);
  ps_ready(m, d, waker);
  acct(m, d, p, d->now_ns, PS_ACCT_WAIT);
  int preempt = m->hooks.wakeup(m, d, p, waker, sync);
  p->on_rq = 1;
  p->state = PS_TASK_RUNNING;
  ps_count_up(&p->nr_wakeups);
  p->woken_ns = d->now_ns;
  ps_log(m, d, PS_EVT_WAKEUP, p->cpu, p, waker ? waker->pid : -1, p->prio, sync);
  if (preempt) ps_resched_cpu(d, p->cpu);
  return 1;
}

int ps_try_to_wake_up(const psModel *m, psData *d, psTask *p, int mask, psTask *waker, int sync) {
  return try_to_wake_up(m, d, p, mask, waker, sync);
}

/* ---- task exit ---- */

/* The exited task p has left its CPU for good: keep its record, free its
 * slot.  Its policy data stays in the slot (dequeued, as the policy left
 * it), so that policy invariants hold for free slots too. */
static void reap(const psModel *m, psData *d, psTask *p) {
  p->state = PS_TASK_DEAD;
  /* a full ring drops its oldest record and counts it; so do these */
  if (!m->keep_exited ||
      psu_ring_push(&d->exited, p, (int64_t)m->keep_exited * (int64_t)sizeof(psTask), 1) ==
          PS_RING_NOMEM)
    ps_count_up(&d->exited.dropped);
  psu_pids_remove(&ps_fast(d)->pids, p->pid);
  p->pid = 0;
  p->ppid = 0;
  p->wait_next = d->free_slot;
  d->free_slot = ps_index(d, p);
}

/* ---- the context switch ---- */

static void record_latency(const psModel *m, psData *d, psTask *t, int cpu) {
  int64_t lat = d->now_ns - t->woken_ns;
  t->woken_ns = -1;
  ps_count_up(&t->lat_count);
  t->lat_sum_ns += lat;
  if (lat > t->lat_max_ns) t->lat_max_ns = lat;
  if (m->rec_latency) {
    psLatencyRec r = {d->now_ns, lat, t->pid, cpu};
    ps_ring_push(m, d, &d->latencies, &r, "latency");
  }
}

/* What pick_next returned, as the message of its refusal says it: a task
 * pointer is only followed once it is known to be one of d's slots. */
static void describe_pick(const psData *d, int c, const psTask *next, char *out, int len) {
  uintptr_t off = (uintptr_t)next - (uintptr_t)d->task;
  if (!next) {
    snprintf(out, len, "NULL");
  } else if (off >= (uintptr_t)d->ntask * sizeof(psTask)) {
    snprintf(out, len, "%p, which is not a task of this simulator (its %d are at %p)",
             (const void *)next, d->ntask, (const void *)d->task);
  } else if (off % sizeof(psTask)) {
    snprintf(out, len, "%p, which points into task slot %d, %zu bytes past its start",
             (const void *)next, (int)(off / sizeof(psTask)), (size_t)(off % sizeof(psTask)));
  } else if (next->is_idle) {
    snprintf(out, len, "the idle task of cpu %d", next->cpu);
  } else if (!next->pid) {
    snprintf(out, len, "task slot %d, which is free", ps_index(d, next));
  } else if (next->exit_ns >= 0) {
    snprintf(out, len, "pid %d, which has exited", next->pid);
  } else if (next->state != PS_TASK_RUNNING) {
    snprintf(out, len, "pid %d, which is asleep (state %d)", next->pid, next->state);
  } else if (!next->on_rq) {
    snprintf(out, len, "pid %d, which is not queued (on_rq 0)", next->pid);
  } else if (next->cpu != c) {
    snprintf(out, len, "pid %d, which is queued on cpu %d", next->pid, next->cpu);
  } else {
    /* the mask in hex, as the kernel prints a cpumask (%*pb): its highest
     * word that has a CPU, then the others in 16 digits each */
    char hex[PS_CPUMASK_WORDS * 16 + 1];
    int top = PS_CPUMASK_WORDS - 1, at;
    while (top > 0 && !next->cpus_allowed.w[top]) top--;
    at = snprintf(hex, sizeof hex, "%llx", (unsigned long long)next->cpus_allowed.w[top]);
    for (int i = top - 1; i >= 0; i--)
      at += snprintf(hex + at, sizeof hex - (size_t)at, "%016llx",
                     (unsigned long long)next->cpus_allowed.w[i]);
    snprintf(out, len, "pid %d, whose affinity (0x%.64s%s) excludes cpu %d", next->pid, hex,
             at > 64 ? "..." : "", c);
  }
}

/* The migrate hook moved p to dest (policy.h): a task left outside its
 * affinity would wake or be picked where it may not run.  The step, or the
 * syscall from Python, fails as a policy's error. */
void ps_migrated(const psModel *m, psData *d, const psTask *p, int dest) {
  /* a hook that failed (a Python policy's exception) has said why */
  if (__builtin_expect(p->cpu == dest, 1) || d->failed) return;
  ps_fail(d, "policy %s: migrate left pid %d on cpu %d, not on cpu %d as set_cpus_allowed asked",
          m->policy->name, p->pid, p->cpu, dest);
  d->failed = PS_FAILED_POLICY;
}

/* pick_next returned what the engine cannot switch to (pick_next_ok):
 * the step fails as a policy's error (PS_FAILED_POLICY), naming the
 * policy, the CPU, the time and what it returned; the CPU keeps prev. */
__attribute__((noinline, cold)) static void pick_next_refused(const psModel *m, psData *d,
                                                              int c, const psTask *next) {
  char what[160];
  describe_pick(d, c, next, what, sizeof what);
  /* the state is half switched: this failure takes the place of one the
   * step met before, and of a full buffer's resumable stop */
  d->failed = 0;
  d->trace_full = 0;
  ps_fail(d, "policy %s: pick_next on cpu %d at t=%lld ns returned %s", m->policy->name, c,
          (long long)d->now_ns, what);
  d->failed = PS_FAILED_POLICY;
}

/* next is a task the engine may switch CPU c to: one of d's slots (a
 * pointer within the array and on a slot's start: a policy's NULL, stray
 * or misaligned pointer is refused before it is followed), and either c's
 * idle task or a task queued on c (state RUNNING, on_rq, cpu c) whose
 * affinity allows c -- an idle task is RUNNING, never on_rq, and its cpu
 * and affinity are its CPU's, so one test takes both.  In every build, on
 * every switch: a range check, a multiply for the slot's start, and five
 * loads from the two lines of the task the switch reads next -- 23
 * instructions a switch (bench_cachesim (h): 931 -> 954 on 1 CPU), 0-4 ns
 * of 50-100 in bench_ticks (docs/extending/c-policy.md). */
static inline int pick_next_ok(const psData *d, int c, const psTask *next) {
  uintptr_t off = (uintptr_t)next - (uintptr_t)d->task;
  if (off >= (uintptr_t)d->ntask * sizeof(psTask) || off % sizeof(psTask)) return 0;
  /* on_rq and is_idle are 0 or 1 (the engine's): any other value is refused */
  if ((uint32_t)(next->cpu ^ c) | (uint32_t)next->state) return 0;
  return (int)((uint32_t)(next->on_rq | next->is_idle) & (uint32_t)ps_cpu_test(&next->cpus_allowed, c));
}

/* Inlined into settle, where it is hot, though ps_migrate_now calls it too:
 * as a function of its own it cost case (h) 10 instructions a switch
 * (bench_cachesim, 1 CPU: 1,008 inlined, 1,018 not). */
__attribute__((always_inline)) static inline void schedule(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  psTask *prev = &d->task[cpu->curr];
  m->hooks.put_prev(m, d, prev);
  if (prev->state != PS_TASK_RUNNING && prev->on_rq) {
    m->hooks.deactivate(m, d, prev);
    prev->on_rq = 0;
  }
  if (prev->migrate_to >= 0) {
    /* its affinity changed while it ran: it is moved as it leaves the CPU,
     * while it is not running (the migrate hook's contract) -- by the
     * migration thread or stopper that preempted it (ps_migrate_now), by
     * the program's own op as its CPU reschedules at once, or, under a
     * kernel with no migration thread (2.4.20), by the CPU's schedule() */
    int dest = prev->migrate_to;
    prev->migrate_to = -1;
    if (prev->exit_ns < 0) {
      ps_catch_up(m, d, dest);
      m->hooks.migrate(m, d, prev, dest);
      ps_migrated(m, d, prev, dest);
    }
  }
  psTask *next = m->hooks.pick_next(m, d, c);
  cpu->need_resched = 0;
  if (__builtin_expect(!pick_next_ok(d, c, next), 0)) {
    pick_next_refused(m, d, c, next);
    return;
  }
  if (next == prev) return;
  int64_t now = d->now_ns;
  if (!prev->is_idle) {
    if (prev->state == PS_TASK_RUNNING) {
      ps_count_up(&prev->nivcsw);
      acct(m, d, prev, now, PS_ACCT_WAIT);
    } else if (prev->exit_ns >= 0) {
      ps_count_up(&prev->nvcsw);
      acct(m, d, prev, now, PS_ACCT_NONE);
    } else {
      ps_count_up(&prev->nvcsw);
      acct(m, d, prev, now, PS_ACCT_SLEEP);
    }
  }
  if (!next->is_idle) {
    acct(m, d, next, now, PS_ACCT_RUN);
    if (next->woken_ns >= 0) record_latency(m, d, next, c);
  }
  cpu->curr = ps_index(d, next);
  cpu->run_since_ns = now;
  cpu->overhead_until_ns = now + m->switch_cost_ns;
  ps_count_up(&cpu->nr_switches);
  int exited = prev->exit_ns >= 0;
  ps_log(m, d, PS_EVT_SWITCH, c, next, prev->pid, next->prio,
         exited ? PS_TASK_DEAD : prev->state);
  if (exited) reap(m, d, prev);
}

/* ---- stepping ---- */
static void sample_series(const psModel *m, psData *d) {
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    if (t->exit_ns >= 0) continue;
    for (int k = 0; k < m->nseries; k++) {
      psSampleRec r = {d->now_ns, ps_task_value(m, d, t, m->series[k]), t->pid, k};
      ps_ring_push(m, d, &d->series, &r, "series");
    }
  }
}

/* The ticks at t of the CPUs in `ticking` (NULL: none), in CPU order;
 * nw: the machine's words of a CPU set (ps_cpu_words). */
__attribute__((always_inline)) static inline void deliver_ticks(const psModel *m, psData *d, int64_t t,
                                                          const psCpuMask *ticking, int nw) {
  int sampled = 0;
  /* CPU 0's tick, given or deferred, is the jiffy */
  if (t == ps_jiffy_time(m, d->jiffies + 1)) {
    d->jiffies++;
    sampled = m->rec_series && d->jiffies % (uint64_t)m->series_every == 0;
  }
  for (int w = 0; ticking && w < nw; w++) {
    for (uint64_t b = ticking->w[w]; b; b &= b - 1) {
      int c = w * 64 + __builtin_ctzll(b);
      psCpu *cpu = &d->cpu[c];
      ps_catch_up(m, d, c);  /* the window before this tick */
      d->next_tick_ns[c] += m->tick_ns;
      ps_cpu_set(&ps_fast(d)->cpus_fresh, c);
      cpu->ticks++;
      psTask *cur = &d->task[cpu->curr];
      if (!cur->is_idle) {
        cur->cpu_ticks++;
        cpu->busy_ticks++;
      }
      m->hooks.tick(m, d, c);
    }
  }
  if (sampled) sample_series(m, d);
}

static void deliver_event(const psModel *m, psData *d, psEvt e) {
  switch (e.cls) {
    case PS_EV_TIMER:
      try_to_wake_up(m, d, &d->task[e.key], PS_TASK_INTERRUPTIBLE, NULL, 0);
      break;
    case PS_EV_IO:
      ps_try_to_wake_up(m, d, &d->task[e.key], PS_TASK_UNINTERRUPTIBLE, NULL, 0);
      break;
    default:
      d->src[e.key].fired++;
      ps_post(m, d, m->src[e.key].chan, NULL, 0);
      if (ps_source_schedule(m, d, e.key)) ps_fail(d, "out of memory queueing an event");
      break;
  }
}

/* When CPU c's running task's burst ends, INT64_MAX when it idles. */
static void set_burst_end(psData *d, int c) {
  const psCpu *cpu = &d->cpu[c];
  const psTask *cur = &d->task[cpu->curr];
  int64_t from = cpu->run_since_ns > cpu->overhead_until_ns ? cpu->run_since_ns
                                                             : cpu->overhead_until_ns;
  d->burst_end_ns[c] = cur->is_idle ? INT64_MAX : from + cur->burst_left_ns;
}

/* Process context of CPU c: it reschedules if asked and its task runs its
 * program, until it runs a task with CPU work left or idles. */
static void settle(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  ps_catch_up(m, d, c);
  ps_cpu_set(&ps_fast(d)->cpus_fresh, c);
  /* most often the clock's advance has brought it up to date already */
  if (cpu->run_since_ns != d->now_ns) sync_cpu(d, c, d->now_ns);
  for (;;) {
    if (cpu->need_resched) schedule(m, d, c);
    psTask *cur = &d->task[cpu->curr];
    if (cur->is_idle || cur->burst_left_ns > 0 || d->failed) break;
    ps_run_program(m, d, cpu->curr);
  }
  set_burst_end(d, c);
}

void ps_migrate_now(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  ps_catch_up(m, d, c);
  ps_cpu_set(&ps_fast(d)->cpus_fresh, c);
  /* the running task's time up to the call is charged to it */
  if (cpu->run_since_ns != d->now_ns) sync_cpu(d, c, d->now_ns);
  schedule(m, d, c);
  /* a task switched to with no burst left has its end now: a run settles
   * every CPU first (ps_run_until), running its program at this instant */
  set_burst_end(d, c);
}

/* Every due CPU settles, in passes in CPU order: a CPU that a wakeup makes
 * due behind the pass waits for the next pass, one ahead of it is reached
 * in this one -- as passes over every CPU until one is quiet would go, the
 * CPUs not due having nothing to do. */
__attribute__((always_inline)) static inline void resolve(const psModel *m, psData *d, int nw) {
  while (ps_cpumask_any_n(&d->cpus_due, nw) && !d->failed) {
    for (int w = 0; w < nw; w++) {
      uint64_t *due = &d->cpus_due.w[w];
      for (int bit = -1;;) {
        uint64_t ahead = bit < 63 ? *due & (~0ULL << (bit + 1)) : 0;
        if (!ahead || d->failed) break;
        bit = __builtin_ctzll(ahead);
        settle(m, d, w * 64 + bit);
        *due &= ~(1ULL << bit);
      }
    }
  }
}

/* After an instant, every busy CPU's burst ends later, as every CPU's
 * tick does (ps_check): one due by now means a scan (next_due, cpus_at)
 * missed its CPU, and the run would repeat this instant for ever with no
 * action for the livelock guard to count.  Checked only here: a step that
 * failed leaves its instant unsettled, and the next run settles it first. */
static int unsettled(const psModel *m, const psData *d, char *err, int errlen) {
  for (int c = 0; c < m->ncpu; c++)
    if (!d->task[d->cpu[c].curr].is_idle && d->burst_end_ns[c] <= d->now_ns) {
      snprintf(err, errlen, "cpu %d: the burst of pid %d ended at t=%lld ns and was not settled",
               c, d->task[d->cpu[c].curr].pid, (long long)d->burst_end_ns[c]);
      return -1;
    }
  return 0;
}

int ps_check_time(int64_t t, char *err, int errlen) {
  if (t <= PS_MAX_TIME_NS) return 0;
  snprintf(err, errlen, "t=%lld ns is past the last time a run may reach, %lld ns (%.0f years)",
           (long long)t, (long long)PS_MAX_TIME_NS, PS_MAX_TIME_NS / 3.15576e16);
  return -1;
}

/* The run: nw is the machine's words of a CPU set, a constant 1 in the
 * copy that runs machines of up to 64 CPUs, whose sets are then one word
 * as when a set was a uint64_t (bench_cachesim (h), 1 CPU: 1,107
 * instructions a switch; 1,189 with nw read from the model in one copy;
 * 1,093 with sets of one uint64_t). */
__attribute__((always_inline)) static inline int run(const psModel *m, psData *d, int64_t t_end,
                                                     int64_t max_instants, char *err, int errlen,
                                                     const int nw) {
  if (ps_check_time(t_end, err, errlen)) return -1;
  d->failed = 0;
  d->trace_full = 0;
  ps_forget_runnable(d);
  /* anything left to do at the current instant (a spawn, a renice) first */
  ps_cpumask_fill(&d->cpus_due, m->ncpu);
  resolve(m, d, nw);
  if (m->watch && !d->failed) ps_watch_instant(m, d);
  /* an assertion on behaviour stops the run at the instant it is broken,
   * which batched or deferred ticks could pass over */
  int asserting = m->watch & (PS_WATCH_ASSERT_IDLE | PS_WATCH_ASSERT_STARVE |
                              PS_WATCH_ASSERT_UNCHARGED);
  int batch = can_batch(m) && !asserting, defer = can_defer(m) && !asserting;
  uint64_t end_jiffies = (uint64_t)(t_end / m->tick_ns);
  int64_t instants = 0;
  while (!d->failed) {
    if (defer) defer_ticks(m, d, end_jiffies, nw);
    /* a pause between two instants is invisible: resuming equals running on */
    if (max_instants && instants++ == max_instants) {
      catch_up_all(m, d);
      sync_all(m, d);
      return 1;
    }
    /* the earliest event: the ticks batched before it queue none */
    const psEvt *e = psu_evq_top(&d->evq);
    if (batch) batch_ticks(m, d, t_end, e, nw);
    psDue u = next_due(m, d);
    int64_t t = u.tick < u.burst_end ? u.tick : u.burst_end;
    if (e && e->time_ns < t) t = e->time_ns;
    if (asserting) {
      int64_t broken = ps_watch_deadline(m, d);
      if (broken < t) t = broken;
    }
    if (t > t_end) {
      advance_to(m, d, t_end);
      break;
    }
    /* advance_to(m, d, t), knowing which bursts end by t */
    if (u.burst_end == t) {
      psCpuMask at;
      cpus_at(m, d->burst_end_ns, t, &at, nw);
      for (int w = 0; w < nw; w++)
        for (uint64_t b = at.w[w]; b; b &= b - 1) sync_cpu(d, w * 64 + __builtin_ctzll(b), t);
    }
    d->now_ns = t;
    if (ps_cpu_test(&ps_fast(d)->cpus_deferred, 0)) {
      /* CPU 0's ticks before t were jiffies; one at t is delivered now */
      if (ps_jiffy_time(m, d->jiffies + 1) < t) d->jiffies = (uint64_t)((t - 1) / m->tick_ns);
      if (u.tick != t && ps_jiffy_time(m, d->jiffies + 1) == t) deliver_ticks(m, d, t, NULL, nw);
    }
    if (u.tick == t) {
      psCpuMask at;
      cpus_at(m, d->next_tick_ns, t, &at, nw);
      deliver_ticks(m, d, t, &at, nw);
    }
    for (const psEvt *top; (top = psu_evq_top(&d->evq)) && top->time_ns == t && !d->failed;) {
      psEvt e = *top;
      psu_evq_take(&d->evq);
      /* the next wakeup's task on its way while this one is delivered: on
       * many CPUs a woken task has left the cache since it went to sleep
       * (bench_ticks (h), 64 CPUs: -2 % per switch; 8: -2 %; 1 and 2: -0.6 %) */
      const psEvt *nx = psu_evq_next_in_bucket(&d->evq);
      if (nx && nx->time_ns == t && nx->cls != PS_EV_SOURCE) {
        const psTask *q = &d->task[nx->key];
        __builtin_prefetch(&q->state);
        __builtin_prefetch(&q->cpu);
        __builtin_prefetch(&q->since_ns);
        __builtin_prefetch(q->priv);
      }
      deliver_event(m, d, e);
    }
    resolve(m, d, nw);
    if (m->watch && !d->failed) ps_watch_instant(m, d);
    if (m->debug_checks && !d->failed) {
      char msg[PS_ERRLEN];
      if (ps_check(m, d, msg, sizeof msg) || unsettled(m, d, msg, sizeof msg) ||
          scans_agree(m, d, msg, sizeof msg))
        ps_fail(d, "invariant broken at t=%lld ns: %s", (long long)d->now_ns, msg);
    }
    if (d->trace_full) d->failed = 1;
  }
  catch_up_all(m, d);
  sync_all(m, d);
  if (d->failed) {
    snprintf(err, errlen, "%s", d->errmsg);
    /* the error is the caller's now: a call between runs (a post from
     * Python ...) acts on the state as on any other, as it would on a
     * snapshot of it -- unless a policy broke the hooks' contract, after
     * which the state may be half-updated and the binding refuses to go on */
    int broken = d->failed == PS_FAILED_WATCH;
    if (d->failed != PS_FAILED_POLICY) d->failed = 0;
    return broken ? PS_RUN_BROKEN : -1;
  }
  return 0;
}

int ps_run_until(const psModel *m, psData *d, int64_t t_end, int64_t max_instants, char *err,
                 int errlen) {
  if (m->ncpu <= 64) return run(m, d, t_end, max_instants, err, errlen, 1);
  return run(m, d, t_end, max_instants, err, errlen, ps_cpu_words(m->ncpu));
}
