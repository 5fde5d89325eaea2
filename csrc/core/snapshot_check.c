/* What a snapshot may hold: the domains its loader (snapshot.c) holds the
 * model, the state and the record rings to before anything is used --
 * every length, index, count, op, time and link -- so that no blob,
 * damaged or crafted, can crash, hang or silently change a run.  A state
 * that passes these is then held to the invariant checks a live one is
 * (ps_check, the policy's check). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"
#include "snapshot_check.h"
#include "watch.h"

static int index_ok(int32_t i, int32_t n) { return i >= -1 && i < n; }

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* No pid is held by two slots. */
static int pids_unique(const psModel *m, const psData *d) {
  int32_t n = 0, *pids = malloc((size_t)d->ntask * sizeof(int32_t));
  if (!pids) return 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    if (d->task[i].pid) pids[n++] = d->task[i].pid;
  qsort(pids, (size_t)n, sizeof(int32_t), cmp_i32);
  int ok = 1;
  for (int32_t k = 1; k < n; k++) ok &= pids[k] != pids[k - 1];
  free(pids);
  return ok;
}
static int time_ok(int64_t t) { return t >= 0 && t <= PS_MAX_TIME_NS; }
/* A count that runs only add to (switches, wakeups, forks, posts ...):
 * 0..PS_COUNT_MAX, where the engine's counts stop (trace.h). */
static int count_ok(int64_t v) { return v >= 0 && v <= PS_COUNT_MAX; }
/* A time counted up to now (CPU, wait and sleep time ...): 0..now. */
static int span_ok(int64_t v, int64_t now) { return v >= 0 && v <= now; }


/* The machine, before the policy derives anything from it. */
int ps_snapshot_machine_ok(const psModel *m, char *err, int errlen) {
  if (m->ncpu < 1 || m->ncpu > PS_MAX_CPUS) BAD("cpus %d", m->ncpu);
  if (m->hz < 1 || m->hz > 100000 || 1000000000 % m->hz || m->tick_ns != 1000000000 / m->hz)
    BAD("hz %d with a tick of %lld ns", m->hz, (long long)m->tick_ns);
  return 1;
}

/* The model's recording options, programs and sources. */
int ps_snapshot_model_ok(const psModel *m, char *err, int errlen) {
  if ((m->stagger_ticks | m->rec_events | m->rec_latency | m->rec_series | m->overwrite |
       m->debug_checks) & ~1)
    BAD("a flag is neither 0 nor 1");
  if (m->fast_paths & ~PS_FAST_ALL) BAD("fast paths %d", m->fast_paths);
  if (m->watch & ~PS_WATCH_ALL ||
      !time_ok(m->idle_wait_ns) || !time_ok(m->starve_ns) || !time_ok(m->uncharged_ns))
    BAD("the behaviour watch (%d, %lld, %lld ns)", m->watch, (long long)m->idle_wait_ns,
        (long long)m->starve_ns);
  if (m->switch_cost_ns < 0 || m->switch_cost_ns > m->tick_ns) BAD("switch_cost_ns");
  if (m->max_tasks < 1 || m->max_tasks > 10000000) BAD("max_tasks %d", m->max_tasks);
  if (m->keep_exited < 0 || m->keep_exited > 10000000) BAD("keep_exited %d", m->keep_exited);
  if (m->series_every < 1 || m->max_trace_bytes < 0) BAD("series_every or max_trace_bytes");
  if (m->nseries < 0 || m->nseries > PS_MAX_SERIES_FIELDS || m->rec_series != (m->nseries > 0))
    BAD("series fields");
  for (int32_t k = 0; k < m->nseries; k++)
    if (m->series[k] < 0 || m->series[k] >= ps_nfields(m)) BAD("series field %d", m->series[k]);
  if (m->nchan < 0) BAD("channels");
  /* every program as psu_program_check sees it: loop references relative */
  int32_t next = 0;
  for (int32_t k = 0; k < m->nprogs; k++) {
    const psProgram *pr = &m->progs[k];
    if (pr->first != next || pr->n < 0 || pr->n > m->nops - pr->first) BAD("program %d", k);
    next = pr->first + pr->n;
    psOp *ops = malloc((size_t)(pr->n ? pr->n : 1) * sizeof(psOp));
    if (!ops) BAD("out of memory");
    for (int32_t i = 0; i < pr->n; i++) {
      ops[i] = m->ops[pr->first + i];
      /* a loop's END and an END's LOOP: inside the program, checked before
       * the subtraction that a crafted index would overflow */
      int32_t *ref = ops[i].kind == PS_OP_LOOP ? &ops[i].arg2
                     : ops[i].kind == PS_OP_END ? &ops[i].arg : NULL;
      if (ref && (*ref < pr->first || *ref - pr->first >= pr->n)) {
        free(ops);
        BAD("program %d: op %d refers outside it", k, i);
      }
      if (ref) *ref -= pr->first;
    }
    char msg[PS_ERRLEN];
    int rc = psu_program_check(ops, pr->n, m->nprogs, m->nchan, msg, sizeof msg);
    free(ops);
    if (rc) BAD("program %d: %.200s", k, msg);
  }
  if (next != m->nops) BAD("ops outside every program");
  /* the CPU sets: each names CPUs of the machine, and each set_affinity op
   * names one of them */
  for (int32_t k = 0; k < m->nmasks; k++)
    if (!ps_cpumask_within(&m->masks[k], m->ncpu)) BAD("CPU set %d", k);
  for (int32_t i = 0; i < m->nops; i++)
    if (m->ops[i].kind == PS_OP_AFFINITY && m->ops[i].arg >= m->nmasks)
      BAD("op %d: CPU set %d", i, m->ops[i].arg);
  for (int32_t k = 0; k < m->nsrc; k++) {
    const psSourceDef *s = &m->src[k];
    if (s->chan < 0 || s->chan >= m->nchan || (s->kind != PS_SRC_EVERY && s->kind != PS_SRC_POISSON) ||
        s->period_ns < 1 || s->period_ns > PS_MAX_DURATION_NS || !time_ok(s->start_ns) ||
        s->count < -1)
      BAD("source %d", k);
  }
  return 1;
}

/* Where task t is in its program: pc and loop frames inside it. */
static int program_state_ok(const psModel *m, const psTask *t) {
  const psProgState *s = &t->ps;
  if (s->prog < 0 || s->prog >= m->nprogs) return 0;
  const psProgram *pr = &m->progs[s->prog];
  if (s->pc < pr->first || s->pc > pr->first + pr->n || s->op_left < 0) return 0;
  /* the loop frames are those of the loops whose body holds pc, entered
   * at their LOOP op and not yet left at their END (psu_loop_end pops one
   * at every END it reaches), outermost first, each with no more rounds
   * left than its count; an END reached without its frame would pop one
   * below the stack */
  int32_t open[PS_LOOP_DEPTH];
  int depth = 0;
  for (int32_t i = pr->first; i < s->pc; i++) {
    if (m->ops[i].kind == PS_OP_LOOP) {
      if (depth == PS_LOOP_DEPTH) return 0;
      open[depth++] = i;
    } else if (m->ops[i].kind == PS_OP_END) {
      if (!depth) return 0;
      depth--;
    }
  }
  if (s->loop_depth != depth) return 0;
  for (int k = 0; k < depth; k++) {
    int64_t count = m->ops[open[k]].arg;
    if (s->loop[k].op != open[k] ||
        (count ? s->loop[k].left < 0 || s->loop[k].left >= count : s->loop[k].left != -1))
      return 0;
  }
  /* children of a fork op still to come (psu_program_unfork gives one back) */
  int at_fork = s->pc < pr->first + pr->n && m->ops[s->pc].kind == PS_OP_FORK;
  if (at_fork ? s->op_left > m->ops[s->pc].arg2 : s->op_left != 0) return 0;
  /* a timed op's call is half done only at a periodic or frame op */
  if (s->phase != 0 && (s->phase != 1 || s->pc >= pr->first + pr->n ||
                        (m->ops[s->pc].kind != PS_OP_PERIODIC && m->ops[s->pc].kind != PS_OP_FRAME)))
    return 0;
  if (s->pad || (s->deadline_ns != -1 && !time_ok(s->deadline_ns)) ||
      (s->timer_ns != -1 && !time_ok(s->timer_ns)) || !time_ok(s->due_start_ns) || !time_ok(s->due_begin_ns) ||
      !time_ok(s->call_ns) || !time_ok(s->call_due_ns) || s->call_lat_ns < 0)
    return 0;
  return 1;
}

/* Event e's rank, its key in range: a timer's, a place of the wheel's
 * order and a sequence number given out already (ps_push_timer); I/O's,
 * the pid; a source's, its id. */
static int rank_ok(const psData *d, const psEvt *e) {
  if (e->cls != PS_EV_TIMER)
    return e->rank == (e->cls == PS_EV_SOURCE ? e->key : d->task[e->key].pid) &&
           e->rank >= (e->cls != PS_EV_SOURCE);
  int64_t seq = e->rank & PS_TIMER_SEQ_MAX, place = e->rank >> PS_TIMER_SEQ_BITS;
  return e->rank >= 0 && seq >= 1 && seq <= d->timer_seq && place < PS_WHEEL_PLACES;
}

/* Every generic index, count and time of the state, so that the engine and
 * the policy's check may walk it safely. */
/* ev: the nev events the snapshot holds, not yet queued. */
int ps_snapshot_state_ok(const psModel *m, const psData *d, const psEvt *ev, int64_t nev,
                         char *err, int errlen) {
  int64_t now = d->now_ns;
  if (!time_ok(now) || d->jiffies != (uint64_t)(now / m->tick_ns)) BAD("the clock");
  if (d->instant_actions < 0 || d->instant_actions > ps_max_actions(d) + 1) BAD("actions");
  for (int c = 0; c < m->ncpu; c++) {
    const psCpu *cpu = &d->cpu[c];
    if (cpu->curr < 0 || cpu->curr >= d->ntask || cpu->idle != c) BAD("cpu %d's task", c);
    /* its next tick: the first after now on its grid, CPU c's ticks falling
     * c * tick_ns / ncpu after CPU 0's with staggered ticks (ps_data_init) */
    int64_t phase = m->stagger_ticks ? c * (m->tick_ns / m->ncpu) : 0, next = d->next_tick_ns[c];
    if (next <= now || next - m->tick_ns > (now > phase ? now : phase) ||
        (next - phase) % m->tick_ns || cpu->run_since_ns > now || cpu->run_since_ns < 0 ||
        cpu->overhead_until_ns > now + m->switch_cost_ns)
      BAD("cpu %d's times", c);
    /* busy time is accounted up to run_since_ns (sync_cpu) */
    if (!count_ok(cpu->nr_switches) || !span_ok(cpu->busy_ns, cpu->run_since_ns) || cpu->ticks < 0 ||
        (uint64_t)cpu->ticks > d->jiffies + 1 || cpu->busy_ticks < 0 || cpu->busy_ticks > cpu->ticks)
      BAD("cpu %d's counters", c);
  }
  if (d->next_pid < 1 || d->next_pid == INT32_MAX || !index_ok(d->free_slot, d->ntask))
    BAD("pid counter or free list");
  int32_t alive = 0, nfree = 0;
  for (int32_t i = 0; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    int idle = i < m->ncpu;
    /* a free slot: pid 0, DEAD; a task: a pid that has been given out */
    int free_slot = !idle && !t->pid;
    if (t->is_idle != idle || (idle && t->pid) || t->pid < 0 || t->pid >= d->next_pid ||
        free_slot != (t->state == PS_TASK_DEAD) || (free_slot && (t->on_rq || t->exit_ns < 0)))
      BAD("task %d's identity", i);
    /* an idle task never sleeps, exits, waits or moves: schedule() would
     * reap an idle task that has an exit time */
    if (idle) {
      psCpuMask own = ps_cpumask_of(i);
      if (t->exit_ns != -1 || t->state != PS_TASK_RUNNING || t->on_rq || t->cpu != i ||
          !ps_cpumask_equal(&t->cpus_allowed, &own) || t->migrate_to != -1 || t->wait_chan != -1 ||
          t->burst_left_ns || t->woken_ns != -1)
        BAD("cpu %d's idle task", i);
    }
    if (t->ppid < 0 || t->ppid >= t->pid + !t->pid || (!t->pid && t->ppid)) BAD("pid %d's parent", t->pid);
    if (t->state != 0 && t->state != 1 && t->state != 2 && t->state != 4 && t->state != 8)
      BAD("pid %d's state", t->pid);
    /* a slice counts down to 0 (scheduler_tick); spawn gives at most 10^6
     * ticks, and sched_exit's return of a child's slice caps at the policy's
     * maximum: twice that bounds every policy's */
    if (t->policy < PS_SCHED_NORMAL || t->policy > PS_SCHED_RR || t->rt_priority < 0 ||
        t->rt_priority > 99 || (!idle && (t->nice < -20 || t->nice > 19)) ||
        (t->pid && (t->time_slice < 0 || t->time_slice > 2000000)))
      BAD("pid %d's policy, nice or time_slice", t->pid);
    if (t->cpu < 0 || t->cpu >= m->ncpu || !ps_cpumask_within(&t->cpus_allowed, m->ncpu) ||
        t->migrate_to < -1 || t->migrate_to >= m->ncpu || (t->on_rq & ~1))
      BAD("pid %d's cpu", t->pid);
    if (t->burst_left_ns < 0 || t->burst_left_ns > PS_MAX_DURATION_NS ||
        !index_ok(t->wait_chan, m->nchan) || !index_ok(t->wait_next, d->ntask))
      BAD("pid %d's work or waits", t->pid);
    if (t->acct < PS_ACCT_RUN || t->acct > PS_ACCT_NONE || !time_ok(t->since_ns) ||
        t->since_ns > now || (t->exit_ns != -1 && (t->exit_ns < 0 || t->exit_ns > now)) ||
        (t->woken_ns != -1 && (t->woken_ns < 0 || t->woken_ns > now)))
      BAD("pid %d's accounting", t->pid);
    if (!span_ok(t->cpu_ns, now) || !span_ok(t->wait_ns, now) || !span_ok(t->sleep_ns, now) ||
        t->cpu_ticks < 0 || (uint64_t)t->cpu_ticks > d->jiffies + 1 || !count_ok(t->nvcsw) ||
        !count_ok(t->nivcsw) || !count_ok(t->nr_wakeups) || !count_ok(t->nr_migrations) ||
        !count_ok(t->lat_count) || !span_ok(t->lat_sum_ns, now) || !span_ok(t->lat_max_ns, now) ||
        t->lat_max_ns > t->lat_sum_ns || !span_ok(t->start_ns, now) ||
        !span_ok(t->wait_max_ns, now) || t->wait_max_ns > t->wait_ns ||
        (t->starved_ns != -1 && !span_ok(t->starved_ns, now)) ||
        (t->lag_broken_ns != -1 && !span_ok(t->lag_broken_ns, now)) ||
        ((t->lag_min_ns == PS_LAG_NONE) != (t->lag_max_ns == PS_LAG_NONE)) ||
        t->lag_min_ns > t->lag_max_ns ||
        /* the accounted intervals tile its life up to since_ns (acct) */
        t->cpu_ns + t->wait_ns + t->sleep_ns != t->since_ns - t->start_ns)
      BAD("pid %d's counters", t->pid);
    if (!idle && !program_state_ok(m, t)) BAD("pid %d's program state", t->pid);
    alive += !idle && t->exit_ns < 0;
    nfree += free_slot;
  }
  if (alive != d->nlive) BAD("%d live tasks, not %d", alive, d->nlive);
  if (!pids_unique(m, d)) BAD("a pid held by two tasks");
  /* the free list: exactly the free slots, each once */
  int32_t n = 0;
  for (int32_t i = d->free_slot; i >= 0; i = d->task[i].wait_next, n++)
    if (n >= nfree || i < m->ncpu || d->task[i].pid) BAD("the free list");
  if (n != nfree) BAD("the free list");
  for (int64_t k = 0; k < d->exited.n; k++) {
    const psTask *t = psu_ring_at(&d->exited, k);
    if (t->is_idle || t->pid < 1 || t->pid >= d->next_pid || t->state != PS_TASK_DEAD ||
        t->exit_ns < 0 || t->exit_ns > now)
      BAD("exited record %lld", (long long)k);
  }
  if (!count_ok(d->nr_forks) || !count_ok(d->nr_exits)) BAD("the fork and exit counts");
  char why[PS_ERRLEN];
  const psWatch *w = &d->watch;
  if (ps_watch_check(m, d, why, sizeof why)) BAD("the behaviour watch: %s", why);
  if ((w->open & ~1) ||
      (w->open && (!span_ok(w->since_ns, now) || w->idle_cpu < 0 || w->idle_cpu >= m->ncpu ||
                   w->pid < 1 || w->pid >= d->next_pid || w->pid_cpu < 0 ||
                   w->pid_cpu >= m->ncpu)))
    BAD("the behaviour watch's open window");
  if (!span_ok(w->total_ns, now) || !span_ok(w->longest_ns, now) || w->longest_ns > w->total_ns ||
      !count_ok(w->windows) ||
      (w->first_ns != -1 && (!span_ok(w->first_ns, now) || w->first_idle_cpu < 0 ||
                             w->first_idle_cpu >= m->ncpu || w->first_pid < 1 ||
                             w->first_pid >= d->next_pid || w->first_pid_cpu < 0 ||
                             w->first_pid_cpu >= m->ncpu)))
    BAD("the behaviour watch's windows");
  for (int k = 0; k < 2; k++) {
    const psLagBreak *b = k ? &w->lag_last : &w->lag_first;
    if (b->at_ns != -1 && (!span_ok(b->at_ns, now) || b->pid < 1 || b->pid >= d->next_pid ||
                           b->cpu < 0 || b->cpu >= m->ncpu || b->bound_ns < 0))
      BAD("the behaviour watch's lags past their bound");
  }
  if ((w->lag_first.at_ns == -1) != (w->lag_last.at_ns == -1) || w->lag_first.at_ns > w->lag_last.at_ns)
    BAD("the behaviour watch's lags past their bound");
  const psChargeBreak *u = &w->uncharged;
  if (u->at_ns != -1 && (!span_ok(u->at_ns, now) || u->pid < 1 || u->pid >= d->next_pid ||
                         u->cpu < 0 || u->cpu >= m->ncpu || u->cpu_ns < 0 || u->charged_ns < 0))
    BAD("the behaviour watch's uncharged CPU time");
  const psFastState *f = (const psFastState *)(const void *)d->fast;
  if (!count_ok(f->wide_scans) || !count_ok(f->ticks_batched) || !count_ok(f->ticks_deferred) ||
      !count_ok(f->skips) || !count_ok(d->evq.nsorted))
    BAD("the fast paths' counts");
  for (int k = 0; k < PS_NWARN; k++)
    if (!count_ok(d->warn[k])) BAD("warning count %d", k);
  for (int32_t k = 0; k < d->nchan; k++) {
    const psChannel *c = &d->chan[k];
    if (!count_ok(c->count) || !index_ok(c->head, d->ntask) || !index_ok(c->tail, d->ntask))
      BAD("channel %d", k);
    /* its waiters: a chain of tasks that wait on it, ending at tail */
    int32_t n = 0, last = -1;
    for (int32_t i = c->head; i >= 0; i = d->task[i].wait_next, n++) {
      if (n > d->ntask || d->task[i].wait_chan != k) BAD("channel %d's waiters", k);
      last = i;
    }
    if (last != c->tail) BAD("channel %d's waiters", k);
  }
  for (int32_t k = 0; k < d->nsrc; k++)
    if (d->src[k].fired < 0 || (m->src[k].count >= 0 && d->src[k].fired > m->src[k].count))
      BAD("source %d's state", k);
  if (d->timer_seq < 0 || d->timer_seq > PS_TIMER_SEQ_MAX) BAD("the timers' sequence number");
  for (int64_t k = 0; k < nev; k++) {
    const psEvt *e = &ev[k];
    if (e->cls < PS_EV_TIMER || e->cls > PS_EV_SOURCE || e->key < 0 ||
        e->key >= (e->cls == PS_EV_SOURCE ? m->nsrc : d->ntask) || !rank_ok(d, e) ||
        e->time_ns < now ||
        e->time_ns > now + PS_MAX_DURATION_NS + m->tick_ns)
      BAD("event %lld", (long long)k);
    /* a source that has fired all its count has no next firing
     * (source_schedule) */
    if (e->cls == PS_EV_SOURCE && m->src[e->key].count >= 0 &&
        d->src[e->key].fired >= m->src[e->key].count)
      BAD("event %lld: source %d fires past its count", (long long)k, e->key);
    /* a periodic source's next firing is where its count puts it
     * (source_schedule; start_ns is never before the instant it was added) */
    if (e->cls == PS_EV_SOURCE && m->src[e->key].kind == PS_SRC_EVERY) {
      const psSourceDef *s = &m->src[e->key];
      int64_t fired = d->src[e->key].fired;
      if (fired > (PS_MAX_TIME_NS - s->start_ns) / s->period_ns ||
          e->time_ns != s->start_ns + fired * s->period_ns)
        BAD("event %lld: source %d's next firing", (long long)k, e->key);
    }
    /* written earliest first (psu_evq_sorted) */
    const psEvt *parent = &ev[(k - 1) / 2];
    if (k && (parent->time_ns > e->time_ns ||
              (parent->time_ns == e->time_ns &&
               (parent->cls > e->cls || (parent->cls == e->cls && parent->rank > e->rank)))))
      BAD("event %lld out of order", (long long)k);
  }
  return 1;
}

/* The records of the rings, as the engine writes them: oldest first, at or
 * before now, naming CPUs of this machine and pids given out, so that
 * every reader (events(), export_ftrace ...) may index by them. */
int ps_snapshot_records_ok(const psModel *m, const psData *d, char *err, int errlen) {
  int64_t now = d->now_ns, last = 0;
  int32_t pids = d->next_pid, ids = pids > m->ncpu ? pids : m->ncpu;
  for (int64_t k = 0; k < d->events.n; k++) {
    const psEventRec *e = psu_ring_at(&d->events, k);
    if (e->time_ns < last || e->time_ns > now || e->kind < 0 || e->kind >= PS_NEVT_KINDS ||
        e->cpu < 0 || e->cpu >= m->ncpu || e->pid < -1 || e->pid >= pids || e->other < -1 ||
        e->other >= ids)
      BAD("event record %lld", (long long)k);
    last = e->time_ns;
  }
  last = 0;
  for (int64_t k = 0; k < d->latencies.n; k++) {
    const psLatencyRec *l = psu_ring_at(&d->latencies, k);
    if (l->time_ns < last || l->time_ns > now || l->latency_ns < 0 || l->latency_ns > l->time_ns ||
        l->pid < 1 || l->pid >= pids || l->cpu < 0 || l->cpu >= m->ncpu)
      BAD("latency record %lld", (long long)k);
    last = l->time_ns;
  }
  for (int64_t k = 0; k < d->periodic.n; k++) {
    const psPeriodicRec *r = psu_ring_at(&d->periodic, k);
    if (!span_ok(r->start_ns, now) || !time_ok(r->due_ns) || !span_ok(r->latency_ns, now) ||
        (r->finish_ns != -1 && !span_ok(r->finish_ns, now)) || r->missed_latency_ns < 0 ||
        r->pid < 1 || r->pid >= pids || (r->met & ~1) || r->missed < 0 || r->dropped < 0)
      BAD("timed-op record %lld", (long long)k);
  }
  last = 0;
  for (int64_t k = 0; k < d->series.n; k++) {
    const psSampleRec *r = psu_ring_at(&d->series, k);
    if (r->time_ns < last || r->time_ns > now || r->pid < 0 || r->pid >= pids || r->field < 0 ||
        r->field >= m->nseries)
      BAD("series record %lld", (long long)k);
    last = r->time_ns;
  }
  if (!count_ok(d->events.dropped) || !count_ok(d->latencies.dropped) ||
      !count_ok(d->periodic.dropped) || !count_ok(d->series.dropped) || !count_ok(d->exited.dropped))
    BAD("a count of dropped records");
  return 1;
}
