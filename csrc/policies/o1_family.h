/* The O(1) scheduler family: what the 2.5 policies (policy_o1.c) and
 * Houston's self-tuning scheduler (policy_houston.c) share.  The runqueue
 * with its two priority arrays, the per-task prefix (links, sleep_avg,
 * last_run ...), enqueue/dequeue, the bk4 code the patch leaves alone
 * (sleep credit with back-boost, fork's slice split, sched_exit, set_nice,
 * setscheduler, the RR tick, try_to_wake_up's frame), the queue dump and the
 * invariants live here once; each member's file keeps only what its source
 * changes, and describes itself to this module with an o1_family.  Section
 * references (§n) are to docs/schedulers/o1.md. */
#ifndef PS_O1_FAMILY_H
#define PS_O1_FAMILY_H
#include <stdint.h>

#include "engine_internal.h"
#include "prio_array.h"

#define O1_MAX_RT_PRIO 100

/* The per-task state every member keeps first in psTask.priv. */
typedef struct o1_sched {
  psPrioLinks links;         /* first: prio_array.c finds them there */
  uint32_t sleep_avg;        /* ticks, 0..MAX_SLEEP_AVG */
  uint32_t last_run;         /* jiffies at the latest entry to schedule() (sleep_timestamp in 2.5.64) */
  int32_t first_time_slice;  /* 1 until the first expiry after fork */
  int64_t bonus_given;       /* sleep_avg this task's overflow gave its wakers */
  int64_t bonus_received;    /* sleep_avg this task received as a waker */
} o1_sched;

/* State-field table entries of the shared fields, for a member's task
 * struct T whose o1_sched member is `sched`. */
#define O1_SCHED_FIELD_INFO(T)                                                             \
  {"sleep_avg", PS_F_U32, offsetof(T, sched.sleep_avg),                                    \
   "ticks of credited sleep, 0..max_sleep_avg"},                                           \
  {"last_run", PS_F_U32, offsetof(T, sched.last_run),                                      \
   "jiffies at the latest entry to schedule()"},                                           \
  {"first_time_slice", PS_F_I32, offsetof(T, sched.first_time_slice),                      \
   "1 until the first expiry after fork"},                                                 \
  {"array", PS_F_I32, offsetof(T, sched.links.array),                                      \
   "queued in priority array 0/1 (rq->active is one of them), -1 if not queued"},          \
  {"bonus_given", PS_F_I64, offsetof(T, sched.bonus_given),                                \
   "sleep_avg given to wakers by the back-boost"},                                         \
  {"bonus_received", PS_F_I64, offsetof(T, sched.bonus_received),                          \
   "sleep_avg received from wakees by the back-boost"}

/* The per-CPU runqueue of the family (kernel/sched.c struct runqueue). */
typedef struct o1_runqueue {
  psPrioArray arrays[2];
  int32_t active;               /* index of rq->active in arrays; the other is expired */
  uint32_t nr_running;          /* queued tasks, the running one included */
  uint32_t nr_uninterruptible;
  uint32_t expired_timestamp;   /* jiffies when the first task expired, 0 if none */
  uint32_t prio_avg;            /* Houston: filtered (MAX_PRIO - prio) of curr, x 1024 */
  int64_t nr_array_switches;
  int64_t nr_fairness_requeues; /* Houston */
  int64_t nr_balance_pulls;     /* tasks this CPU pulled */
  /* The balancer's exact skip (o1_rebalance): CPU 0's runqueue counts every
   * change of any runqueue's length on the machine; each CPU remembers the
   * count at its last periodic scan, and whether that scan found no busiest
   * queue with inputs the scan before had already left as they were. */
  uint64_t nr_running_gen;
  uint64_t balance_gen;
  int32_t balance_steady;
  /* The second skip: every prev_cpu_load[] this CPU's last scan wrote was
   * at most 1; whether this runqueue held two tasks or more at the last
   * change of its length; and, in CPU 0's runqueue, how many do. */
  int32_t prev_le1;
  int32_t ge2;
  int32_t nr_ge2;
  /* The first jiffy after the last one asked about that is a multiple of
   * `every` (BUSY_REBALANCE_TICK then), 0 before the first question
   * (balance_o1.c, busy_rebalance_after). */
  uint64_t rebalance_at, rebalance_every;
  /* this CPU's memory of every runqueue's length: the kernel's is NR_CPUS
   * long, this one the machine's ncpu (the policy's rq_per_cpu) */
  uint32_t prev_cpu_load[];
} o1_runqueue;

/* State-field table entries of the runqueue fields every member shows. */
#define O1_RQ_FIELD_INFO                                                                   \
  PS_FIELD(o1_runqueue, nr_running, PS_F_U32, "runnable tasks, the running one included"), \
  PS_FIELD(o1_runqueue, nr_uninterruptible, PS_F_U32, "tasks in uninterruptible sleep"),   \
  PS_FIELD(o1_runqueue, nr_balance_pulls, PS_F_I64, "tasks this CPU pulled from others")

/* The SMP balancer's parameters, in both members' tables (§2, §5.10). */
#define O1_BALANCE_PARAMS(X)                                                                    \
  X(cache_decay_ticks, 1, 0, 1000000, 0, "ticks",                                               \
    "cache_decay_ticks: a task descheduled this recently is cache-hot and stays (i386: 0 for "  \
    "128 kB L2, 1 for 512 kB, 5 for a 2 MB Xeon)")                                              \
  X(idle_rebalance_ticks, 1, 1, 1000000, 1, "ticks", "IDLE_REBALANCE_TICK (HZ/1000 or 1)")      \
  X(busy_rebalance_ticks, 200, 1, 1000000, 1, "ticks", "BUSY_REBALANCE_TICK (HZ/5)")

/* How a member differs, as data: its MAX_PRIO, its lists, the indices of
 * the parameters the shared code reads (-1 where the member has the bk4
 * behaviour as a constant), and the two formulas it changes. */
typedef struct o1_family {
  int max_prio;                   /* MAX_PRIO: the idle task's prio, the delimiter bit */
  int lru;                        /* keep Houston's run_list_lru of non-RT tasks */
  int expired_used;               /* the tick puts tasks in the expired array */
  int p_cache_decay_ticks;        /* O1_BALANCE_PARAMS start here */
  int p_max_timeslice, p_exit_weight, p_max_sleep_avg;
  int p_pull_equal_prio_preempt;  /* -1: always (bk4) */
  int p_sync_wakeup_credit;       /* -1: never (bk4) */
  int p_setscheduler_activate;    /* -1: plain enqueue (bk4) */
  int p_balance_prio_avg;         /* -1: by length only; else prio_avg_imbalance follows */
  /* effective_prio(p) for the task's current state */
  int (*effective_prio)(const psModel *m, psTask *p);
  /* activate_task (§5.5 or the patch's): credit the sleep, recompute prio,
   * enqueue in active; returns requeue_waker. */
  int (*activate_task)(const psModel *m, psData *d, psTask *p, psTask *waker);
} o1_family;

static inline const o1_family *o1_family_of(const psModel *m) {
  return (const o1_family *)m->policy->family;
}
/* Parameter at index i, or dflt when the member has none (i < 0). */
static inline int64_t o1_param(const psModel *m, int i, int64_t dflt) {
  return i < 0 ? dflt : m->param[i];
}
static inline o1_sched *o1_sched_of(psTask *p) { return (o1_sched *)p->priv; }
static inline const o1_sched *o1_sched_of_const(const psTask *p) {
  return (const o1_sched *)p->priv;
}
static inline o1_runqueue *o1_rq(const psModel *m, const psData *d, int cpu) {
  return (o1_runqueue *)ps_rq(m, d, cpu);
}
static inline int o1_rt_task(const psTask *p) { return p->prio < O1_MAX_RT_PRIO; }
static inline int o1_array(const psTask *p) { return psu_links_const(p)->array; }
static inline uint32_t o1_jiffies(const psData *d) { return (uint32_t)d->jiffies; }

/* ---- runqueue primitives (§4) ---- */
/* p->prio = prio, logged when it changes */
static inline void o1_set_prio(const psModel *m, psData *d, psTask *p, int prio) {
  if (p->prio != prio) ps_log(m, d, PS_EVT_PRIO, p->cpu, p, -1, prio, p->prio);
  p->prio = prio;
}

/* ---- shared pieces of the members' hooks ---- */
/* activate_task's bk4 sleep credit (§5.5) once credit > 0: the wakee's new
 * sleep_avg, int sleep_avg = p->sleep_avg + sleep_time capped at max, with
 * the overflow handed to a process-context waker when back_boost is on
 * (logged and counted).  Sets *requeue_waker when the waker's sleep_avg
 * changed.  2.5.64's unsigned sum differs only beyond 2^31 ticks. */
uint32_t o1_credit_overflow(const psModel *m, psData *d, psTask *p, psTask *waker,
                            int32_t sleep_avg, uint32_t max, int *requeue_waker);
/* inline but for the back-boost, which only a wakeup by a task can make */
static inline uint32_t o1_credit_sleep(const psModel *m, psData *d, psTask *p, psTask *waker,
                                       uint32_t credit, uint32_t max, int back_boost,
                                       int *requeue_waker) {
  int32_t sleep_avg = (int32_t)(o1_sched_of(p)->sleep_avg + credit);
  *requeue_waker = 0;
  if (sleep_avg <= (int32_t)max) return (uint32_t)sleep_avg;
  /* the overflow goes to a process-context waker (not in_interrupt()) */
  if (!back_boost || !waker) return max;
  return o1_credit_overflow(m, d, p, waker, sleep_avg, max, requeue_waker);
}
/* copy_process's slice split (§5.6): the child takes (slice + 1) / 2, the
 * parent keeps slice / 2; the child's first slice starts now, unqueued; and
 * do_fork's need_resched on the parent, so that the child may run first.
 * Returns 1 when the parent had a single tick (its slice is then set to 1
 * and the caller must run scheduler_tick for it). */
int o1_fork_split(psData *d, psTask *parent, psTask *child);
/* wake_up_forked_process's SMART_WAKE_CHILD (bk4): with the parent queued,
 * the child takes its prio and is linked just before it, in its array;
 * otherwise a plain activation. */
void o1_wake_child_smart(const psModel *m, psData *d, psTask *parent, psTask *p);
/* scheduler_tick's RT branch: SCHED_RR round-robins at the tail of its list
 * when its slice (of length `slice`) runs out; SCHED_FIFO does nothing. */
void o1_tick_rt(const psModel *m, psData *d, int cpu, psTask *p, int slice);
/* rebalance_tick(rq, idle) at the end of scheduler_tick (balance_o1.c);
 * nothing on one CPU, tested here because it runs every tick. */
void o1_rebalance(const psModel *m, psData *d, int cpu, int idle);
/* try_to_wake_up step 1 (balance_o1.c): a sync wakeup by a task on another
 * CPU moves the (not queued) wakee to the waker's CPU if its affinity
 * allows. */
void o1_sync_fast_migrate(const psModel *m, psData *d, psTask *p, const psTask *waker);
/* The first jiffy after d->jiffies that BUSY_REBALANCE_TICK divides,
 * computed again (a division) and kept in the runqueue (rebalance_at). */
uint64_t o1_busy_rebalance_after(const psModel *m, psData *d, int cpu);
/* rebalance_at where it holds for jiffy j (BUSY_REBALANCE_TICK unchanged,
 * j within the period before it), else 0: a busy CPU asks at every tick
 * and for every stretch of ticks, inline (through calls this was ~50
 * instructions a context switch of case (h) on 2 CPUs). */
static inline uint64_t o1_rebalance_cached(const psModel *m, const psData *d, int cpu,
                                           uint64_t j) {
  const o1_runqueue *rq = o1_rq(m, d, cpu);
  uint64_t busy = (uint64_t)m->param[o1_family_of(m)->p_cache_decay_ticks + 2];
  return rq->rebalance_every == busy && j < rq->rebalance_at && j + busy >= rq->rebalance_at
             ? rq->rebalance_at
             : 0;
}
/* How many ticks after the current jiffy come before the next at which a
 * busy CPU balances (INT64_MAX on one CPU): what tick_batch may take. */
static inline int64_t o1_ticks_before_rebalance(const psModel *m, psData *d, int cpu) {
  if (m->ncpu == 1) return INT64_MAX;
  uint64_t at = o1_rebalance_cached(m, d, cpu, d->jiffies);
  if (!at) at = o1_busy_rebalance_after(m, d, cpu);
  return (int64_t)(at - 1 - d->jiffies);
}

/* cpu's runqueue length changed: the balancer's first skip must look
 * again, and the count of runqueues holding two tasks follows. */
static inline void o1_nr_running_changed(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq0 = o1_rq(m, d, 0), *rq = o1_rq(m, d, cpu);
  rq0->nr_running_gen++;
  int32_t ge2 = rq->nr_running >= 2;
  rq0->nr_ge2 += ge2 - rq->ge2;
  rq->ge2 = ge2;
}
/* The runqueue primitives (§4), inline: every wakeup and sleep runs them. */
static inline int o1_lru_of(const psModel *m, const psTask *p) {
  return o1_family_of(m)->lru && !o1_rt_task(p);
}
/* enqueue_task / dequeue_task, with the lru list where the member keeps one */
static inline void o1_enqueue_task(const psModel *m, psData *d, psTask *p, int array) {
  psu_enqueue_task(d->task, ps_index(d, p), &o1_rq(m, d, p->cpu)->arrays[array], array,
                   o1_lru_of(m, p));
}
static inline void o1_dequeue_task(const psModel *m, psData *d, psTask *p) {
  psu_dequeue_task(d->task, ps_index(d, p), &o1_rq(m, d, p->cpu)->arrays[o1_array(p)],
                   o1_lru_of(m, p));
}
/* __activate_task: enqueue in active, nr_running++ */
static inline void o1_activate_plain(const psModel *m, psData *d, psTask *p) {
  o1_runqueue *rq = o1_rq(m, d, p->cpu);
  o1_enqueue_task(m, d, p, rq->active);
  rq->nr_running++;
  o1_nr_running_changed(m, d, p->cpu);
}
/* deactivate_task: nr_running--, count an uninterruptible sleeper, dequeue */
static inline void o1_deactivate_task(const psModel *m, psData *d, psTask *p) {
  o1_runqueue *rq = o1_rq(m, d, p->cpu);
  rq->nr_running--;
  o1_nr_running_changed(m, d, p->cpu);
  if (p->state == PS_TASK_UNINTERRUPTIBLE) rq->nr_uninterruptible++;
  o1_dequeue_task(m, d, p);
}

/* A busy CPU balances at the jiffy BUSY_REBALANCE_TICK divides: at any
 * other, known from the cached jiffy, there is nothing to call. */
static inline void o1_rebalance_tick(const psModel *m, psData *d, int cpu, int idle) {
  if (m->ncpu == 1) return;
  if (!idle) {
    uint64_t at = o1_rebalance_cached(m, d, cpu, d->jiffies);
    uint64_t busy = (uint64_t)m->param[o1_family_of(m)->p_cache_decay_ticks + 2];
    if (at && at - busy != d->jiffies) return;
  }
  o1_rebalance(m, d, cpu, idle);
}

/* try_to_wake_up, steps 2-4 and 6 (§5.4), in two inline halves around the
 * member's own activate_task, so that each member's wakeup hook makes no
 * call a wakeup does not need (every sleeper's wakeup runs it):
 *   if (o1_wakeup_begin(m, d, p, waker, sync)) return 0;
 *   return o1_wakeup_end(m, d, p, waker, activate_task(m, d, p, waker));
 * begin returns 1 when a sync wakeup without credit activated p plainly. */
static inline int o1_wakeup_begin(const psModel *m, psData *d, psTask *p, psTask *waker,
                                  int sync) {
  if (sync) o1_sync_fast_migrate(m, d, p, waker);
  o1_runqueue *rq = o1_rq(m, d, p->cpu);
  if (p->state == PS_TASK_UNINTERRUPTIBLE) rq->nr_uninterruptible--;
  if (sync && !o1_param(m, o1_family_of(m)->p_sync_wakeup_credit, 0)) {
    o1_activate_plain(m, d, p);
    return 1;
  }
  return 0;
}
void o1_requeue_waker(const psModel *m, psData *d, psTask *waker);
/* Whether p preempts its CPU's task; the waker requeued after a back-boost. */
static inline int o1_wakeup_end(const psModel *m, psData *d, psTask *p, psTask *waker,
                                int requeue_waker) {
  int preempt = p->prio < ps_curr(d, p->cpu)->prio;
  if (requeue_waker) o1_requeue_waker(m, d, waker);
  return preempt;
}

/* ---- hooks the members share as they are ---- */
void o1_init_rq(const psModel *m, psData *d, int cpu);
void o1_put_prev(const psModel *m, psData *d, psTask *prev);
void o1_deactivate(const psModel *m, psData *d, psTask *prev);
psTask *o1_pick_next(const psModel *m, psData *d, int cpu);
void o1_task_exit(const psModel *m, psData *d, psTask *p, psTask *parent);
void o1_set_nice(const psModel *m, psData *d, psTask *p, int nice);
void o1_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt_priority);
void o1_migrate(const psModel *m, psData *d, psTask *p, int dest);
int o1_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max);
int o1_check(const psModel *m, const psData *d, char *err, int errlen);
/* spawn's init values of the shared fields: sleep_avg within
 * 0..max_sleep_avg, first_time_slice 0 or 1. */
int o1_check_init(const psModel *m, const psTask *t, char *err, int errlen);
/* After a parameter change: sleep_avg clamped to a lowered max_sleep_avg,
 * as activate_task clamps it (min(sleep_avg + slept, MAX_SLEEP_AVG),
 * docs/schedulers/o1.md §5.5). */
void o1_retune(const psModel *m, psData *d);
extern const psColumn o1_queue_columns[3];

/* The hooks above in a member's psHooks initializer, and the queue columns
 * in its psPolicy initializer. */
#define O1_FAMILY_HOOKS                                                                  \
  .init_rq = o1_init_rq, .task_exit = o1_task_exit,                                      \
  .put_prev = o1_put_prev, .deactivate = o1_deactivate, .pick_next = o1_pick_next,       \
  .set_nice = o1_set_nice, .set_scheduler = o1_set_scheduler, .migrate = o1_migrate,     \
  .dump = o1_dump
#define O1_FAMILY_QUEUE_COLUMNS .queue_columns = o1_queue_columns, .nqueue_columns = 3

#endif
