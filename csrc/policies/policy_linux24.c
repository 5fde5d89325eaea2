/* The Linux 2.4.20 scheduler: goodness(), one global runqueue, epochs that
 * end in a recalculation of every task's counter.  Implemented tick for tick
 * from the fact sheet docs/schedulers/linux-2.4.20.md ("§n" below), which cites the
 * kernel sources: S1 = sndrzt/linux-2.4.20.lite @ 7712640f kernel/sched.c and
 * kernel/fork.c, S3 = the 2.4.27 kernel/timer.c, S4 = the 2.4.19
 * kernel/exit.c.  Names are the kernel's (goodness, counter, NICE_TO_TICKS,
 * add_to_runqueue, reschedule_idle, recalculate ...).  These files share no
 * code with the O(1) family.
 *
 * Files.  What is kernel/sched.c's (goodness, reschedule_idle,
 * try_to_wake_up, schedule() and its recalculation, sys_sched_yield,
 * sys_nice, setscheduler) is linux24_sched.c, in the kernel's order; this
 * file holds the rest: fork and exit (fork.c, exit.c), the tick (timer.c),
 * the invariants and the tables; linux24.h is what both use.
 *
 * State.  runqueue_head and nr_running live in CPU 0's runqueue area (§3);
 * every CPU's area holds its own schedule_data (last_schedule) and its idle
 * task's borrowed active_mm.  The run_list links are task indices in
 * psTask.priv, so a state copies with memcpy.  p->counter is the generic
 * time_slice (the task-field table names it `counter` with PS_AT_TASK):
 * one field, two names.  p->prio is for display only (goodness never reads
 * it): 120 + nice for SCHED_OTHER, 99 - rt_priority for SCHED_FIFO/RR, as
 * 2.6 numbers them; the idle task shows MAX_PRIO 140.
 *
 * need_resched.  2.4's need_resched is a per-task flag; this file keeps it
 * in priv and sets the engine's per-CPU flag with it (set_need_resched).
 * Fork and yield reschedule only where 2.4 does (the engine leaves that to
 * the policy): a fork only when the split empties the parent's counter, a
 * yield only when another task is pending.
 *
 * Modelling choices (INFERRED or left to the simulator by the fact sheet):
 * - ncpu == 1 runs the UP kernel (no PROC_CHANGE_PENALTY, the UP
 *   reschedule_idle and sched_yield count); ncpu > 1 runs the SMP kernel.
 * - Every task is its own process: mm = pid.  A forked child gets its own mm
 *   (the simulator's forks are process forks, no CLONE_VM); a task spawned
 *   with init={"mm": pid} shares that process's mm (a thread).  There are
 *   no kernel threads (mm NULL) besides the idle tasks.
 * - Zombies are reaped at once (the engine's choice), so release_task's
 *   credit to the parent happens at the exit instant and recalculation never
 *   raises a zombie's counter (§10, §15.6).
 * - The idle tasks are not recalculated: for_each_task skips init_task, and
 *   whether the idle tasks of CPUs 1.. are in the task list is INFERRED
 *   (§15.7); their counters are never observable (idle is never scored in
 *   schedule(), and SMP wakeups reach idle CPUs through send_now_idle).
 * - No signals: the TASK_INTERRUPTIBLE/signal_pending case of schedule()
 *   never applies.
 * - The FIFO exception in the tick is Davda's timer.c hunk (§6, INFERRED for
 *   2.4.20 from the same patch's sched.c hunks in S1).
 *
 * SMP, simplified as follows (everything else is the §5/§7 algorithm):
 * - no hyper-threading: smp_num_siblings is 1, so reschedule_idle's sibling
 *   test never fires;
 * - an IPI is instantaneous: need_resched on another CPU makes the engine run
 *   that CPU's schedule() at the same instant;
 * - last_schedule is the simulated time in ns of the CPU's last real switch
 *   (get_cycles() in the kernel); only its order matters;
 * - a recalculation runs whole on the CPU that found c == 0 (the kernel drops
 *   runqueue_lock for it, so two CPUs could recalculate back to back, §15.4);
 * - each CPU charges its own current task at its tick (the local APIC path
 *   was not read for 2.4, §16);
 * - affinity: 2.4.20's sched.c has no set_cpus_allowed; nothing moves a task
 *   between CPUs, any allowed CPU takes it from the global list at its next
 *   schedule().  The engine's invariant that a queued task's cpu lies in its
 *   mask makes migrate() set p->processor to the engine's destination (the
 *   kernel would keep the old one, which only shifts PROC_CHANGE_PENALTY);
 *   nothing else happens to a queued task, so it waits for an allowed CPU
 *   to schedule.  A running one is rescheduled at once by the engine and
 *   pushed by __schedule_tail's reschedule_idle, with its real processor
 *   (this CPU); that push is what moves it to an idle allowed CPU. */
#include <stdio.h>

#include "linux24.h"

/* ---- formulas (§1) ---- */

static int64_t f_nice_to_ticks(const psModel *m, const int64_t *a) {
  return nice_to_ticks(m, (int)a[0]);
}
static int64_t f_recalculate(const psModel *m, const int64_t *a) {
  return recalc_counter(m, (int32_t)a[0], (int)a[1]);
}

/* ---- hooks ---- */

static void init_rq_linux24(const psModel *m, psData *d, int cpu) {
  l24_rq *rq = cpu_rq(m, d, cpu);
  rq->head = rq->tail = -1;
  /* the idle task: counter -100, nice 20, mm NULL, never on the list;
   * its active_mm starts as init_mm, which no user task has (0) */
  psTask *idle = idle_task(d, cpu);
  COUNTER(idle) = IDLE_COUNTER;
  idle->nice = IDLE_NICE;
  L24(idle)->run_next = L24(idle)->run_prev = RUN_NULL;
}

/* The counter of a task created from Python (fact sheet §12, INFERRED: the
 * kernel has no spawn-from-nothing path).  The default, NICE_TO_TICKS(nice),
 * is also the faithful fork path for the usual case: a shell that mostly
 * sleeps sits at its fixed point 2N-1 (§13.3), and fork gives the child
 * (2N-1 + 1) >> 1 = N; so CPU hogs start in the §13 steady state. */
static int32_t spawn_counter(const psModel *m, int nice) {
  int32_t n = nice_to_ticks(m, nice);
  switch (P(spawn_counter)) {
    case SPAWN_DEF_COUNTER: return (int32_t)P(def_counter);
    case SPAWN_HALF: return (n + 1) >> 1;
    case SPAWN_ZERO: return 0;
    default: return n;
  }
}

/* spawn's init values: a counter of 0..1000000 ticks (only idle tasks go
 * negative, §15.7) and an mm id >= 0; the other fields are set by spawn. */
static int check_init_linux24(const psModel *m, const psTask *t, char *err, int errlen) {
  if (COUNTER(t) < 0 || COUNTER(t) > 1000000) {
    snprintf(err, errlen, "counter=%d is outside the allowed range 0..1000000", COUNTER(t));
    return -1;
  }
  if (L24c(t)->mm < 0) {
    snprintf(err, errlen, "mm=%d must be >= 0 (a pid, or 0 for a new process)", L24c(t)->mm);
    return -1;
  }
  return 0;
}

/* A task created from Python: a fresh process (mm = pid unless init shares
 * one) with the counter spawn_counter chooses (a non-zero counter set by
 * init is kept, as with time_slice=), woken as wake_up_process does. */
static int task_spawn_linux24(const psModel *m, psData *d, psTask *p) {
  l24_task *t = L24(p);
  if (t->mm <= 0 || t->mm > p->pid) t->mm = p->pid;
  t->sched_yield = 0;
  t->need_resched = 0;
  t->run_next = t->run_prev = RUN_NULL;
  t->sleep_time = (uint32_t)d->jiffies;
  if (!COUNTER(p)) COUNTER(p) = spawn_counter(m, p->nice);
  p->static_prio = MAX_PRIO - 20 + p->nice;
  p->prio = prio_of(p, p->nice);
  wake_up(m, d, p, p->cpu, 0);
  return 0;
}

/* do_fork (§9): the counter split, then wake_up_process(child) with the
 * parent as current.  The child is its own process (mm = its pid); it runs
 * first only if the split emptied the parent's counter or it preempts. */
static void task_fork_linux24(const psModel *m, psData *d, psTask *parent, psTask *p) {
  l24_task *t = L24(p);
  t->mm = p->pid;
  t->need_resched = 0;  /* the parent's flag is clear while it runs its program */
  t->run_next = t->run_prev = RUN_NULL;
  t->sleep_time = (uint32_t)d->jiffies;
  COUNTER(p) = (COUNTER(parent) + 1) >> 1;
  COUNTER(parent) >>= 1;
  if (!COUNTER(parent)) set_need_resched(d, parent);
  p->cpu = parent->cpu;  /* processor = current->processor */
  wake_up(m, d, p, parent->cpu, 0);
}

/* release_task in the reaper's (the parent's) context (§10): the child's
 * counter goes back to it, clamped with >= (a reaper above MAX_COUNTER is
 * lowered to it).  No need_resched.  Orphans are reaped by init, which is
 * not modelled. */
static void task_exit_linux24(const psModel *m, psData *d, psTask *p, psTask *parent) {
  if (!parent) return;
  COUNTER(parent) += COUNTER(p);
  if (COUNTER(parent) >= P(max_counter)) COUNTER(parent) = (int32_t)P(max_counter);
}

/* update_process_times (§6), for every CPU's current task: the idle task
 * (pid 0) is skipped; any other policy is charged; at 0 every policy but
 * SCHED_FIFO is rescheduled (Davda's hunk, INFERRED for 2.4.20). */
static void tick_linux24(const psModel *m, psData *d, int cpu) {
  psTask *p = ps_curr(d, cpu);
  if (p->is_idle) return;
  if (--COUNTER(p) <= 0) {
    COUNTER(p) = 0;
    if (p->policy != PS_SCHED_FIFO) {
      set_need_resched(d, p);
      ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 0);
    }
  }
}

/* k ticks of tick_linux24 in one call: those that leave the counter above
 * zero, or, for SCHED_FIFO, which never asks to reschedule, all of them
 * (its counter stops at 0).  2.4 balances in schedule(), not at ticks. */
static int64_t tick_batch_linux24(const psModel *m, psData *d, int cpu, int64_t k, int apply) {
  psTask *p = ps_curr(d, cpu);
  if (p->policy == PS_SCHED_FIFO) {
    if (apply) COUNTER(p) = COUNTER(p) > k ? COUNTER(p) - (int32_t)k : 0;
    return k;
  }
  int64_t n = COUNTER(p) - 1;
  if (n > k) n = k;
  if (n <= 0) return 0;
  if (apply) COUNTER(p) -= (int32_t)n;
  return n;
}

static int link_ok(int32_t i, int32_t n) { return i >= RUN_NULL && i < n; }

/* The list links are consistent (prev links, tail, no cycle, no idle task),
 * every on_rq task is on the list exactly once and nothing else is,
 * nr_running counts them, the idle tasks keep counter -100 and nice 20, a
 * need_resched is set only on a running task whose CPU is to reschedule,
 * and no yield bit outlives the schedule() after its yield.  Indices are
 * checked before they are followed (a state may come from a damaged
 * snapshot). */
static int check_linux24(const psModel *m, const psData *d, char *err, int errlen) {
  const int32_t n = d->ntask;
  int32_t queued = 0;
  for (int c = 0; c < m->ncpu; c++) {
    const l24_rq *rq = cpu_rq(m, d, c);
    if (rq->head < -1 || rq->head >= n || rq->tail < -1 || rq->tail >= n ||
        rq->active_mm < 0 || rq->active_mm >= d->next_pid) {
      snprintf(err, errlen, "cpu %d: runqueue index or active_mm out of range", c);
      return -1;
    }
    if (c && (rq->head != -1 || rq->tail != -1 || rq->nr_running)) {
      snprintf(err, errlen, "cpu %d: its area holds a runqueue (the global one is cpu 0's)", c);
      return -1;
    }
  }
  for (int32_t i = 0; i < n; i++) {
    const psTask *t = &d->task[i];
    const l24_task *lt = L24c(t);
    if (!link_ok(lt->run_next, n) || !link_ok(lt->run_prev, n) || t->cpu < 0 ||
        t->cpu >= m->ncpu || lt->mm < 0 || lt->mm >= d->next_pid) {
      snprintf(err, errlen, "task %d (pid %d): link, cpu or mm out of range", i, t->pid);
      return -1;
    }
    if ((lt->run_next == RUN_NULL) != (lt->run_prev == RUN_NULL)) {
      snprintf(err, errlen, "pid %d: half on the runqueue", t->pid);
      return -1;
    }
    if (i < m->ncpu) {
      if (task_on_runqueue(t) || COUNTER(t) != IDLE_COUNTER || t->nice != IDLE_NICE || lt->mm) {
        snprintf(err, errlen, "idle task of cpu %d: queued, or counter/nice/mm changed", i);
        return -1;
      }
    } else if (task_on_runqueue(t) != (t->on_rq != 0)) {
      snprintf(err, errlen, "pid %d: on_rq %d but %s the runqueue", t->pid, t->on_rq,
               task_on_runqueue(t) ? "on" : "off");
      return -1;
    }
    queued += task_on_runqueue(t);
    if (lt->need_resched &&
        (d->cpu[t->cpu].curr != i || !d->cpu[t->cpu].need_resched || lt->need_resched != 1)) {
      snprintf(err, errlen, "pid %d: need_resched %d but it is not a CPU's task about to "
               "reschedule", t->pid, lt->need_resched);
      return -1;
    }
    if (lt->sched_yield) {
      snprintf(err, errlen, "pid %d: its SCHED_YIELD bit outlived a schedule()", t->pid);
      return -1;
    }
  }
  const l24_rq *g = global_rq(m, d);
  int32_t prev = RUN_HEAD, count = 0;
  for (int32_t i = g->head; i != -1; i = L24c(&d->task[i])->run_next) {
    if (i < m->ncpu || ++count > n) {
      snprintf(err, errlen, "runqueue: an idle task or a cycle in the list");
      return -1;
    }
    const l24_task *lt = L24c(&d->task[i]);
    if (lt->run_prev != prev || lt->run_next == RUN_NULL) {
      snprintf(err, errlen, "runqueue: pid %d is mislinked", d->task[i].pid);
      return -1;
    }
    prev = i;
  }
  if (g->tail != (prev == RUN_HEAD ? -1 : prev) || count != queued || g->nr_running != count) {
    snprintf(err, errlen, "runqueue: tail %d (last %d), %d listed, %d queued, nr_running %d",
             g->tail, prev, count, queued, g->nr_running);
    return -1;
  }
  return 0;
}

/* ---- tables ---- */

static const psParamInfo l24_params[] = {
    L24_PARAMS(PS_PARAM_ROW)
};

#define TF(name, type, doc) PS_FIELD(l24_task, name, type, doc)
static const psFieldInfo l24_task_fields[] = {
    {"counter", PS_F_I32, offsetof(psTask, time_slice),
     "p->counter: ticks left in this epoch (the generic time_slice under its 2.4 name)",
     PS_AT_TASK},
    TF(mm, PS_F_I32, "mm id: pid of the process whose address space it uses (0 = NULL)"),
    TF(sched_yield, PS_F_I32, "the SCHED_YIELD bit: goodness -1 until the next schedule()"),
    TF(need_resched, PS_F_I32, "p->need_resched"),
    TF(run_next, PS_F_I32, "run_list.next: task index, -1 runqueue_head, -2 NULL (not queued)"),
    TF(run_prev, PS_F_I32, "run_list.prev: task index, -1 runqueue_head, -2 NULL (not queued)"),
    TF(sleep_time, PS_F_U32, "jiffies at the last del_from_runqueue"),
};

#define RF(name, type, doc) PS_FIELD(l24_rq, name, type, doc)
static const psFieldInfo l24_rq_fields[] = {
    RF(nr_running, PS_F_I32,
       "nr_running of the global runqueue, running tasks included (cpu 0; 0 on the others)"),
    RF(active_mm, PS_F_I32, "mm the idle task borrowed: the last user task's on this CPU"),
    RF(last_schedule, PS_F_I64, "time of the CPU's last real switch, ns (get_cycles())"),
    RF(nr_recalculations, PS_F_I64, "counter recalculations this CPU ran"),
    RF(nr_recalc_visits, PS_F_I64, "tasks those recalculations visited (their cost)"),
};

static const psFormula l24_formulas[] = {
    {"nice_to_ticks", "nice", 1, {-20}, {19}, f_nice_to_ticks,
     "NICE_TO_TICKS(nice) = TICK_SCALE(20 - nice) + 1, TICK_SCALE by HZ: the slice of an epoch"},
    {"recalculate", "counter, nice", 2, {0, -20}, {1000000, 19}, f_recalculate,
     "the epoch recalculation: (counter >> 1) + NICE_TO_TICKS(nice); fixed points 2N-1, 2N"},
};

static const psColumn l24_queue_columns[4] = {
    {"counter", NULL}, {"goodness", NULL}, {"cpu", NULL}, {"pid", NULL}};

static const char *const l24_headline[] = {"counter", NULL};

extern const psPolicy ps_policy_linux24;
static const psPreset l24_presets[] = {
    {"linux-2.4.20", &ps_policy_linux24, {NULL},
     "vanilla 2.4.20 goodness scheduler (i386: HZ=100, PROC_CHANGE_PENALTY 15)", 100},
};

_Static_assert(sizeof(l24_task) <= PS_TASK_PRIV, "l24_task must fit psTask.priv");
_Static_assert(L24_NPARAMS <= PS_MAX_PARAMS, "too many parameters");

const psPolicy ps_policy_linux24 = {
    .name = "linux24",
    .doc = "the Linux 2.4.20 scheduler: goodness(), one global runqueue, counter epochs",
    PS_POLICY_TABLES(l24),
    .rq_size = sizeof(l24_rq),
    .max_prio = MAX_PRIO,
    .headline = l24_headline,
    .queue_columns = l24_queue_columns,
    .nqueue_columns = PS_NELEM(l24_queue_columns),
    .no_migration_thread = 1,
    .hooks = {
        .init_rq = init_rq_linux24,
        .task_spawn = task_spawn_linux24,
        .check_init = check_init_linux24,
        .task_fork = task_fork_linux24,
        .task_exit = task_exit_linux24,
        .wakeup = wakeup_linux24,
        .deactivate = deactivate_linux24,
        .pick_next = pick_next_linux24,
        .tick = tick_linux24,
        .tick_batch = tick_batch_linux24,
        .yield = yield_linux24,
        .set_nice = set_nice_linux24,
        .set_scheduler = set_scheduler_linux24,
        .migrate = migrate_linux24,
        .dump = dump_linux24,
        .check = check_linux24,
    },
};
