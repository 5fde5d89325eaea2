/* What the two files of the Linux 2.4.20 scheduler share (policy_linux24.c,
 * whose opening comment states the model, and linux24_sched.c): the state
 * in psTask.priv and the runqueue areas, the parameters, the formulas of §1
 * and the small helpers both call (prio_of, set_need_resched,
 * task_on_runqueue).  They are static inline, as they were static in one
 * file: the tick and every reschedule call them. */
#ifndef PS_LINUX24_H
#define PS_LINUX24_H
#include <stdint.h>

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
static inline int tick_scale(int hz, int x) {
  if (hz < 200) return x >> 2;
  if (hz < 400) return x >> 1;
  if (hz < 800) return x;
  if (hz < 1600) return x << 1;
  return x << 2;
}

/* NICE_TO_TICKS(nice) = TICK_SCALE(20 - nice) + 1 */
static inline int nice_to_ticks(const psModel *m, int nice) {
  return tick_scale(m->hz, 20 - nice) + 1;
}

/* schedule()'s recalculation of one task (§5.6) */
static inline int32_t recalc_counter(const psModel *m, int32_t counter, int nice) {
  return (counter >> 1) + nice_to_ticks(m, nice);
}

/* 2.6's numbering, for display: 120 + nice, or 99 - rt_priority */
static inline int prio_of(const psTask *p, int nice) {
  return p->policy == PS_SCHED_NORMAL ? MAX_PRIO - 20 + nice : 99 - p->rt_priority;
}

/* tsk->need_resched = 1 on a task running on tsk->cpu (the only kind 2.4
 * sets it on), plus the engine's flag that makes that CPU schedule(). */
static inline void set_need_resched(psData *d, psTask *tsk) {
  L24(tsk)->need_resched = 1;
  ps_resched_cpu(d, tsk->cpu);
}

static inline int task_on_runqueue(const psTask *p) { return L24c(p)->run_next != RUN_NULL; }

/* Defined in linux24_sched.c.  Hidden: they bear the kernel's plain names,
 * which the extension keeps out of its exported symbols. */
#pragma GCC visibility push(hidden)
/* try_to_wake_up's enqueue and reschedule_idle, for the fork and spawn paths */
void wake_up(const psModel *m, psData *d, psTask *p, int this_cpu, int synchronous);
/* the hooks that are kernel/sched.c's */
int wakeup_linux24(const psModel *m, psData *d, psTask *p, psTask *waker, int sync);
void deactivate_linux24(const psModel *m, psData *d, psTask *prev);
psTask *pick_next_linux24(const psModel *m, psData *d, int this_cpu);
void yield_linux24(const psModel *m, psData *d, psTask *p);
void set_nice_linux24(const psModel *m, psData *d, psTask *p, int nice);
void set_scheduler_linux24(const psModel *m, psData *d, psTask *p, int policy, int rt_priority);
void migrate_linux24(const psModel *m, psData *d, psTask *p, int dest);
int dump_linux24(const psModel *m, const psData *d, int cpu, int32_t *out, int max);
#pragma GCC visibility pop

#endif
