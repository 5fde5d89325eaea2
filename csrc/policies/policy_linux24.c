/* The Linux 2.4.20 scheduler: goodness(), one global runqueue, epochs that
 * end in a recalculation of every task's counter.  Implemented tick for tick
 * from the fact sheet docs/schedulers/linux-2.4.20.md ("§n" below), which cites the
 * kernel sources: S1 = sndrzt/linux-2.4.20.lite @ 7712640f kernel/sched.c and
 * kernel/fork.c, S3 = the 2.4.27 kernel/timer.c, S4 = the 2.4.19
 * kernel/exit.c.  Names are the kernel's (goodness, counter, NICE_TO_TICKS,
 * add_to_runqueue, reschedule_idle, recalculate ...).  This file shares no
 * code with the O(1) family.
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

#include "engine_internal.h"

#define MAX_PRIO 140         /* display only: the idle task's prio */
#define IDLE_COUNTER (-100)  /* cpu_idle(): current->counter = -100 (§1) */
#define IDLE_NICE 20         /* cpu_idle(): current->nice = 20 (§1) */

/* run_list link values besides a task index */
#define RUN_HEAD (-1)  /* &runqueue_head: the end of the circular list */
#define RUN_NULL (-2)  /* run_list.next == NULL: not on the runqueue (§2) */

/* The parameters, in table order.  def_counter and max_counter are given at
 * HZ=1000 (100 and 200) and scaled by hz/1000 when a model is built, which
 * is DEF_COUNTER = 10*HZ/100 and MAX_COUNTER = 20*HZ/100 (§1). */
#define L24_PARAMS(X)                                                                           \
  X(proc_change_penalty, 15, 0, 1000, 0, "goodness",                                            \
    "PROC_CHANGE_PENALTY: SMP goodness bonus on the task's last CPU (i386 15; alpha, sparc64, " \
    "s390 20); unused on one CPU, as on a UP kernel")                                           \
  X(def_counter, 100, 1, 1000000, 1, "ticks",                                                   \
    "DEF_COUNTER (10*HZ/100): INIT_TASK's counter; a spawned task's with spawn_counter=1")      \
  X(max_counter, 200, 1, 1000000, 1, "ticks",                                                   \
    "MAX_COUNTER (20*HZ/100): release_task clamps the reaper's counter to it (>=)")             \
  X(spawn_counter, 0, 0, 3, 0, "enum",                                                          \
    "counter of a task created from Python (the kernel only forks, fact sheet §12): "           \
    "0 NICE_TO_TICKS(nice), what fork gives the child of a shell parked at its sleeper fixed "  \
    "point 2N-1, i.e. the steady state; 1 DEF_COUNTER; 2 (N+1)>>1, the split of a parent with " \
    "a fresh slice; 3 zero, it waits for the next recalculation")

enum {
#define L24_ENUM(name, ...) L24_##name,
  L24_PARAMS(L24_ENUM)
#undef L24_ENUM
  L24_NPARAMS
};

#define P(name) (m->param[L24_##name])

enum { SPAWN_NICE_TO_TICKS = 0, SPAWN_DEF_COUNTER = 1, SPAWN_HALF = 2, SPAWN_ZERO = 3 };

/* p->counter (long in the kernel) is the generic time_slice. */
#define COUNTER(p) ((p)->time_slice)

/* Per-task fields (psTask.priv): what 2.4's task_struct adds. */
typedef struct l24_task {
  int32_t mm;            /* mm id: the pid of the process whose address space it is; 0 = NULL */
  int32_t sched_yield;   /* the SCHED_YIELD bit of p->policy (§1, §8) */
  int32_t need_resched;  /* p->need_resched */
  int32_t run_next;      /* run_list.next: task index, RUN_HEAD, or RUN_NULL off the runqueue */
  int32_t run_prev;      /* run_list.prev: task index or RUN_HEAD (RUN_NULL off the runqueue) */
  uint32_t sleep_time;   /* jiffies at the last del_from_runqueue (§2) */
} l24_task;

/* Per-CPU runqueue area.  head, tail and nr_running are the global runqueue
 * and are used in CPU 0's area only (the others keep -1, -1, 0). */
typedef struct l24_rq {
  int32_t head, tail;         /* runqueue_head: first and last task index, -1 when empty */
  int32_t nr_running;         /* nr_running: tasks on the list, the running ones included */
  int32_t active_mm;          /* the active_mm this CPU's idle task borrowed (0 = init_mm) */
  int64_t last_schedule;      /* schedule_data.last_schedule: ns of the last real switch */
  int64_t nr_recalculations;  /* recalculations this CPU ran */
  int64_t nr_recalc_visits;   /* tasks those recalculations visited */
} l24_rq;

static inline l24_task *L24(psTask *p) { return (l24_task *)p->priv; }
static inline const l24_task *L24c(const psTask *p) { return (const l24_task *)p->priv; }
static inline l24_rq *cpu_rq(const psModel *m, const psData *d, int cpu) {
  return (l24_rq *)ps_rq(m, d, cpu);
}
/* runqueue_head and nr_running: CPU 0's area */
static inline l24_rq *global_rq(const psModel *m, const psData *d) { return cpu_rq(m, d, 0); }
/* CONFIG_SMP: one CPU runs the UP kernel */
static inline int smp(const psModel *m) { return m->ncpu > 1; }
static inline psTask *idle_task(const psData *d, int cpu) { return &d->task[d->cpu[cpu].idle]; }

/* ---- formulas (§1) ---- */

/* TICK_SCALE(x) for the model's HZ: the #if HZ chain at the top of sched.c */
static int tick_scale(int hz, int x) {
  if (hz < 200) return x >> 2;
  if (hz < 400) return x >> 1;
  if (hz < 800) return x;
  if (hz < 1600) return x << 1;
  return x << 2;
}

/* NICE_TO_TICKS(nice) = TICK_SCALE(20 - nice) + 1 */
static int nice_to_ticks(const psModel *m, int nice) { return tick_scale(m->hz, 20 - nice) + 1; }

/* schedule()'s recalculation of one task (§5.6) */
static int32_t recalc_counter(const psModel *m, int32_t counter, int nice) {
  return (counter >> 1) + nice_to_ticks(m, nice);
}

static int64_t f_nice_to_ticks(const psModel *m, const int64_t *a) {
  return nice_to_ticks(m, (int)a[0]);
}
static int64_t f_recalculate(const psModel *m, const int64_t *a) {
  return recalc_counter(m, (int32_t)a[0], (int)a[1]);
}

/* 2.6's numbering, for display: 120 + nice, or 99 - rt_priority */
static int prio_of(const psTask *p, int nice) {
  return p->policy == PS_SCHED_NORMAL ? MAX_PRIO - 20 + nice : 99 - p->rt_priority;
}

static void set_prio(const psModel *m, psData *d, psTask *p, int prio) {
  if (p->prio != prio) ps_log(m, d, PS_EVT_PRIO, p->cpu, p, -1, prio, p->prio);
  p->prio = prio;
}

/* ---- need_resched, CPUs, mm ---- */

/* tsk->need_resched = 1 on a task running on tsk->cpu (the only kind 2.4
 * sets it on), plus the engine's flag that makes that CPU schedule(). */
static void set_need_resched(psData *d, psTask *tsk) {
  L24(tsk)->need_resched = 1;
  ps_resched_cpu(d, tsk->cpu);
}

/* task_has_cpu(p) on a CPU other than `cpu`.  A running task's cpu field is
 * its CPU; only the prev of the CPU now in schedule() may differ, and the
 * callers pass that CPU. */
static int running_elsewhere(const psData *d, const psTask *p, int cpu) {
  return p->cpu != cpu && d->cpu[p->cpu].curr == ps_index(d, p);
}

static int allowed(const psTask *p, int cpu) { return (int)(p->cpus_allowed >> cpu & 1); }

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

static int task_on_runqueue(const psTask *p) { return L24c(p)->run_next != RUN_NULL; }

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
static void wake_up(const psModel *m, psData *d, psTask *p, int this_cpu, int synchronous) {
  add_to_runqueue(m, d, p);
  if (!synchronous || !allowed(p, this_cpu))
    reschedule_idle(m, d, p, p->cpu, this_cpu, ps_curr(d, this_cpu));
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

/* try_to_wake_up (§7).  The engine calls it for a task that is not on_rq;
 * the task_on_runqueue early return (no move, no resched) is kept as the
 * kernel has it.  A sync wakeup names the waker's CPU as this_cpu.  Every
 * reschedule goes through need_resched here, so the engine is told 0. */
static int wakeup_linux24(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  if (task_on_runqueue(p)) return 0;
  wake_up(m, d, p, waker ? waker->cpu : p->cpu, sync);
  return 0;
}

/* schedule()'s `default: del_from_runqueue(prev)` for a prev that left
 * TASK_RUNNING (§5.3). */
static void deactivate_linux24(const psModel *m, psData *d, psTask *prev) {
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
static psTask *pick_next_linux24(const psModel *m, psData *d, int this_cpu) {
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

/* sys_sched_yield (§8): a no-op unless another task is pending; the yield
 * bit only for SCHED_OTHER; need_resched and the move to the tail for all.
 * The counter is not touched. */
static void yield_linux24(const psModel *m, psData *d, psTask *p) {
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
static void set_nice_linux24(const psModel *m, psData *d, psTask *p, int nice) {
  p->static_prio = MAX_PRIO - 20 + nice;
  set_prio(m, d, p, prio_of(p, nice));
}

/* setscheduler (§11): policy and rt_priority (p->policy = policy also
 * clears the yield bit); no list move, no counter change; need_resched goes
 * to the caller.  The hook cannot tell a program's own call from Python's:
 * a call on a running task is taken as the task's own (a program can only
 * set its own policy), so it reschedules that task; on any other task there
 * is no caller to reschedule. */
static void set_scheduler_linux24(const psModel *m, psData *d, psTask *p, int policy,
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
 * mask; see the header for why nothing else happens). */
static void migrate_linux24(const psModel *m, psData *d, psTask *p, int dest) {
  task_set_cpu(m, d, p, dest);
}

static const psColumn l24_queue_columns[4] = {
    {"counter", NULL}, {"goodness", NULL}, {"cpu", NULL}, {"pid", NULL}};

/* The global runqueue in list order (every CPU considers the whole list),
 * as (counter, goodness, cpu, pid): goodness as a schedule() on `cpu` would
 * score the task now, with the active_mm of cpu's current task; -1000, the
 * selection's starting c, where can_schedule fails (running elsewhere or not
 * allowed on cpu). */
static int dump_linux24(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
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
