/* The Linux 2.4.20 scheduler's kernel/sched.c (S1 in policy_linux24.c's
 * opening comment, which states the model): goodness and
 * preemption_goodness, reschedule_idle, the runqueue list, try_to_wake_up,
 * schedule() with its recalculation and __schedule_tail, sys_sched_yield,
 * sys_nice, setscheduler, the engine's migrate, and the queue as schedule()
 * scores it.  In the kernel's order, under its names, so that this file
 * reads beside sched.c; goodness stays static here, where the schedule()
 * scan and reschedule_idle call it. */
#include "linux24.h"

/* p->prio = prio, logged when it changes (display only: see prio_of) */
static void set_prio(const psModel *m, psData *d, psTask *p, int prio) {
  if (p->prio != prio) ps_log(m, d, PS_EVT_PRIO, p->cpu, p, -1, prio, p->prio);
  p->prio = prio;
}

/* ---- need_resched, CPUs, mm ---- */

/* task_has_cpu(p) on a CPU other than `cpu`.  A running task's cpu field is
 * its CPU; only the prev of the CPU now in schedule() may differ, and the
 * callers pass that CPU. */
static int running_elsewhere(const psData *d, const psTask *p, int cpu) {
  return p->cpu != cpu && d->cpu[p->cpu].curr == ps_index(d, p);
}

static int allowed(const psTask *p, int cpu) { return ps_cpu_test(&p->cpus_allowed, cpu); }

/* can_schedule(p, cpu): cpus_runnable & cpus_allowed & (1 << cpu) on SMP,
 * 1 on UP (§5.5).  cpus_runnable is ~0 unless p runs somewhere. */
static int can_schedule(const psModel *m, const psData *d, const psTask *p, int cpu) {
  if (!smp(m)) return 1;
  return allowed(p, cpu) && !running_elsewhere(d, p, cpu);
}

/* p->active_mm: its own mm, or for an idle task (mm NULL) the mm it
 * borrowed from the last user task that ran on its CPU (§5.8, §15.2). */
static int32_t active_mm(const psModel *m, const psData *d, const psTask *p) {
  return p->is_idle ? cpu_rq(m, d, p->cpu)->active_mm : L24c(p)->mm;
}

/* Task p's cpu field becomes `cpu` (task_set_cpu's processor = cpu);
 * counted as a migration when it changes. */
static void task_set_cpu(const psModel *m, psData *d, psTask *p, int cpu) {
  if (p->cpu == cpu) return;
  int from = p->cpu;
  p->cpu = cpu;
  ps_count_up(&p->nr_migrations);
  ps_log(m, d, PS_EVT_MIGRATE, cpu, p, from, p->prio, 0);
}

/* ---- goodness (§4) ---- */

/* goodness(p, this_cpu, this_mm), with p->processor passed as `processor`
 * (__schedule_tail's push uses prev's real processor, this CPU, where the
 * engine may already have moved the cpu field, see migrate_linux24). */
static int goodness(const psModel *m, const psTask *p, int processor, int this_cpu,
                    int32_t this_mm) {
  const l24_task *t = L24c(p);
  /* select the current process after every other runnable process, but
   * before the idle thread; also, don't trigger a counter recalculation */
  int weight = -1;
  if (t->sched_yield) return weight;
  if (p->policy == PS_SCHED_NORMAL) {
    weight = COUNTER(p);
    if (!weight) return weight;
    if (smp(m) && processor == this_cpu) weight += (int)P(proc_change_penalty);
    /* .. and a slight advantage to the current MM */
    if (t->mm == this_mm || !t->mm) weight += 1;
    weight += 20 - p->nice;
    return weight;
  }
  /* SCHED_FIFO and SCHED_RR: the counter is ignored */
  return 1000 + p->rt_priority;
}

/* preemption_goodness(prev, p, cpu): positive means replace prev, which
 * runs on cpu; both are scored with prev's active_mm. */
static int preemption_goodness(const psModel *m, const psData *d, const psTask *prev,
                               const psTask *p, int p_processor, int cpu) {
  int32_t mm = active_mm(m, d, prev);
  return goodness(m, p, p_processor, cpu, mm) - goodness(m, prev, prev->cpu, cpu, mm);
}

/* ---- the runqueue list (§3) ---- */

static void list_add_tail(const psModel *m, psData *d, psTask *p) {
  l24_rq *g = global_rq(m, d);
  int32_t i = ps_index(d, p);
  L24(p)->run_next = RUN_HEAD;
  L24(p)->run_prev = g->tail;
  if (g->tail >= 0)
    L24(&d->task[g->tail])->run_next = i;
  else
    g->head = i;
  g->tail = i;
}

static void list_del(const psModel *m, psData *d, psTask *p) {
  l24_rq *g = global_rq(m, d);
  l24_task *t = L24(p);
  if (t->run_prev >= 0)
    L24(&d->task[t->run_prev])->run_next = t->run_next;
  else
    g->head = t->run_next >= 0 ? t->run_next : -1;
  if (t->run_next >= 0)
    L24(&d->task[t->run_next])->run_prev = t->run_prev;
  else
    g->tail = t->run_prev >= 0 ? t->run_prev : -1;
}

/* 2.4.20 adds at the TAIL (Davda; up to 2.4.19 it was the head, §3) */
static void add_to_runqueue(const psModel *m, psData *d, psTask *p) {
  list_add_tail(m, d, p);
  global_rq(m, d)->nr_running++;
}

static void del_from_runqueue(const psModel *m, psData *d, psTask *p) {
  global_rq(m, d)->nr_running--;
  L24(p)->sleep_time = (uint32_t)d->jiffies;
  list_del(m, d, p);
  L24(p)->run_next = L24(p)->run_prev = RUN_NULL;
}

static void move_last_runqueue(const psModel *m, psData *d, psTask *p) {
  list_del(m, d, p);
  list_add_tail(m, d, p);
}

/* ---- reschedule_idle (§7) ---- */

/* cpu_curr(cpu), where this_cpu may be in the middle of a switch to
 * this_curr (sched_data->curr = next is already set in __schedule_tail). */
static psTask *cpu_curr(psData *d, int cpu, int this_cpu, psTask *this_curr) {
  return cpu == this_cpu ? this_curr : ps_curr(d, cpu);
}

/* reschedule_idle(p): find a CPU for p, which is on the runqueue and runs
 * nowhere (woken, forked, or prev just released, so can_schedule is the
 * cpus_allowed test).  `processor` is p->processor; this_cpu is
 * smp_processor_id(), running this_curr.  IPIs only make a CPU call
 * schedule(), which is what set_need_resched does here. */
static void reschedule_idle(const psModel *m, psData *d, psTask *p, int processor, int this_cpu,
                            psTask *this_curr) {
  if (!smp(m)) {
    /* UP: preempt the current task if p is better on its mm */
    if (preemption_goodness(m, d, this_curr, p, processor, this_cpu) > 0)
      set_need_resched(d, this_curr);
    return;
  }
  /* shortcut if the woken up task's last CPU is idle now */
  int best_cpu = processor;
  if (allowed(p, best_cpu) && cpu_curr(d, best_cpu, this_cpu, this_curr)->is_idle) {
    set_need_resched(d, idle_task(d, best_cpu));  /* send_now_idle */
    return;
  }
  /* the least recently active idle CPU (first one on ties), else the busy
   * CPU whose task p would preempt most; smp_num_siblings is 1 here */
  uint64_t oldest_idle = UINT64_MAX;
  psTask *target_tsk = NULL;
  int max_prio = 0;
  for (int cpu = 0; cpu < m->ncpu; cpu++) {
    if (!allowed(p, cpu)) continue;
    psTask *tsk = cpu_curr(d, cpu, this_cpu, this_curr);
    if (tsk->is_idle) {
      uint64_t last = (uint64_t)cpu_rq(m, d, cpu)->last_schedule;
      if (last < oldest_idle) {
        oldest_idle = last;
        target_tsk = tsk;
      }
    } else if (oldest_idle == UINT64_MAX) {
      int prio = preemption_goodness(m, d, tsk, p, processor, cpu);
      if (prio > max_prio) {
        max_prio = prio;
        target_tsk = tsk;
      }
    }
  }
  /* an idle target: send_now_idle; a busy one: tsk->need_resched = 1;
   * none: p waits on the global list */
  if (target_tsk) set_need_resched(d, target_tsk);
}

/* try_to_wake_up(p, synchronous) once p is known to be off the runqueue:
 * add it at the tail, then reschedule_idle unless a sync wakeup may run it
 * on the waker's CPU (§7).  The counter is not touched. */
void wake_up(const psModel *m, psData *d, psTask *p, int this_cpu, int synchronous) {
  add_to_runqueue(m, d, p);
  if (!synchronous || !allowed(p, this_cpu))
    reschedule_idle(m, d, p, p->cpu, this_cpu, ps_curr(d, this_cpu));
}

/* ---- hooks ---- */

/* try_to_wake_up (§7).  The engine calls it for a task that is not on_rq;
 * the task_on_runqueue early return (no move, no resched) is kept as the
 * kernel has it.  A sync wakeup names the waker's CPU as this_cpu.  Every
 * reschedule goes through need_resched here, so the engine is told 0. */
int wakeup_linux24(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  if (task_on_runqueue(p)) return 0;
  wake_up(m, d, p, waker ? waker->cpu : p->cpu, sync);
  return 0;
}

/* schedule()'s `default: del_from_runqueue(prev)` for a prev that left
 * TASK_RUNNING (§5.3). */
void deactivate_linux24(const psModel *m, psData *d, psTask *prev) {
  if (task_on_runqueue(prev)) del_from_runqueue(m, d, prev);
}

/* The recalculation (§5.6): every task but the idle tasks, sleepers and RT
 * tasks and tasks running on other CPUs included (exited ones are reaped). */
static void recalculate(const psModel *m, psData *d, int this_cpu) {
  l24_rq *rq = cpu_rq(m, d, this_cpu);
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    psTask *p = &d->task[i];
    if (p->exit_ns >= 0) continue;
    COUNTER(p) = recalc_counter(m, COUNTER(p), p->nice);
    ps_count_up(&rq->nr_recalc_visits);
  }
  ps_count_up(&rq->nr_recalculations);
}

/* schedule() from step 2 (§5): the engine has already del_from_runqueue'd a
 * prev that left TASK_RUNNING (the kernel refills an exhausted RR prev
 * first; the order changes nothing, as a dequeued prev is not moved). */
psTask *pick_next_linux24(const psModel *m, psData *d, int this_cpu) {
  psTask *prev = ps_curr(d, this_cpu);
  psTask *idle = idle_task(d, this_cpu);
  l24_task *pt = L24(prev);
  /* move an exhausted RR process to be last (§5.2) */
  if (prev != idle && prev->policy == PS_SCHED_RR && !COUNTER(prev)) {
    COUNTER(prev) = nice_to_ticks(m, prev->nice);
    if (task_on_runqueue(prev)) move_last_runqueue(m, d, prev);
  }
  pt->need_resched = 0;

  /* the selection (§5.5): head to tail, strict >, so the first in the list
   * wins ties; a best goodness of exactly 0 recalculates and repeats */
  int32_t this_mm = active_mm(m, d, prev);
  const l24_rq *g = global_rq(m, d);
  psTask *next;
  for (;;) {
    int c = -1000;
    next = idle;
    for (int32_t i = g->head; i >= 0; i = L24(&d->task[i])->run_next) {
      psTask *p = &d->task[i];
      if (!can_schedule(m, d, p, this_cpu)) continue;
      int weight = goodness(m, p, p->cpu, this_cpu, this_mm);
      if (weight > c) {
        c = weight;
        next = p;
      }
    }
    if (c) break;
    recalculate(m, d, this_cpu);
  }
  if (next != idle) task_set_cpu(m, d, next, this_cpu);
  if (next == prev) {
    /* we won't go through the normal tail, so do this by hand */
    pt->sched_yield = 0;
    return prev;
  }

  /* a real switch (§5.8) */
  l24_rq *rq = cpu_rq(m, d, this_cpu);
  rq->last_schedule = d->now_ns;
  /* a NULL-mm next (the idle task) borrows prev->active_mm */
  if (next == idle) rq->active_mm = this_mm;
  /* __schedule_tail(prev): clear the yield bit; on SMP push a preempted,
   * non-yielding prev toward another CPU (task_has_cpu(prev) is false here:
   * nothing runs between the switch and the tail in the simulator) */
  int yielded = pt->sched_yield;
  pt->sched_yield = 0;
  if (smp(m) && prev != idle && prev->state == PS_TASK_RUNNING && !yielded)
    reschedule_idle(m, d, prev, this_cpu, this_cpu, next);
  return next;
}

/* sys_sched_yield (§8): a no-op unless another task is pending; the yield
 * bit only for SCHED_OTHER; need_resched and the move to the tail for all.
 * The counter is not touched. */
void yield_linux24(const psModel *m, psData *d, psTask *p) {
  int nr_pending = global_rq(m, d)->nr_running;
  if (smp(m)) {
    /* subtract non-idle processes running on any CPU */
    for (int c = 0; c < m->ncpu; c++)
      if (d->cpu[c].curr != d->cpu[c].idle) nr_pending--;
  } else {
    /* on UP this process is on the runqueue as well */
    nr_pending--;
  }
  if (!nr_pending) return;
  if (p->policy == PS_SCHED_NORMAL) L24(p)->sched_yield = 1;
  set_need_resched(d, p);
  move_last_runqueue(m, d, p);
}

/* sys_setpriority / sys_nice (§11): only p->nice (which the engine sets
 * after this hook); no need_resched, no counter change.  static_prio and
 * prio follow for display. */
void set_nice_linux24(const psModel *m, psData *d, psTask *p, int nice) {
  p->static_prio = MAX_PRIO - 20 + nice;
  set_prio(m, d, p, prio_of(p, nice));
}

/* setscheduler (§11): policy and rt_priority (p->policy = policy also
 * clears the yield bit); no list move, no counter change; need_resched goes
 * to the caller.  The hook cannot tell a program's own call from Python's:
 * a call on a running task is taken as the task's own (a program can only
 * set its own policy), so it reschedules that task; on any other task there
 * is no caller to reschedule. */
void set_scheduler_linux24(const psModel *m, psData *d, psTask *p, int policy,
                           int rt_priority) {
  p->policy = policy;
  p->rt_priority = rt_priority;
  L24(p)->sched_yield = 0;
  set_prio(m, d, p, prio_of(p, p->nice));
  if (d->cpu[p->cpu].curr == ps_index(d, p)) set_need_resched(d, p);
}

/* The engine's set_cpus_allowed for a task that is not running (or a
 * running prev it moves in schedule()): one global runqueue, so moving is
 * only p->processor = dest (the engine needs a queued task's cpu inside its
 * mask; see policy_linux24.c's opening comment for why nothing else
 * happens). */
void migrate_linux24(const psModel *m, psData *d, psTask *p, int dest) {
  task_set_cpu(m, d, p, dest);
}

/* The global runqueue in list order (every CPU considers the whole list),
 * as (counter, goodness, cpu, pid): goodness as a schedule() on `cpu` would
 * score the task now, with the active_mm of cpu's current task; -1000, the
 * selection's starting c, where can_schedule fails (running elsewhere or not
 * allowed on cpu). */
int dump_linux24(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  const l24_rq *g = global_rq(m, d);
  const psTask *curr = &d->task[d->cpu[cpu].curr];
  int32_t this_mm = active_mm(m, d, curr);
  int n = 0;
  for (int32_t i = g->head; i >= 0 && i < d->ntask && n < max; i = L24c(&d->task[i])->run_next) {
    const psTask *p = &d->task[i];
    out[4 * n] = COUNTER(p);
    out[4 * n + 1] = can_schedule(m, d, p, cpu) ? goodness(m, p, p->cpu, cpu, this_mm) : -1000;
    out[4 * n + 2] = p->cpu;
    out[4 * n + 3] = p->pid;
    n++;
  }
  return n;
}
