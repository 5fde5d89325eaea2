/* The 2.5 O(1) scheduler family (2.5.64, 2.5.64-bk4, 2.5.65): the formulas
 * the simulator runs, exported so that Python can check them directly. */
#ifndef PS_POLICY_O1_H
#define PS_POLICY_O1_H
#include <stdint.h>

#include "o1_task.h"
#include "pysched.h"

extern const psPolicy ps_policy_o1;

/* The SMP balancer's parameters, shared with Houston's policy (§2, §5.10). */
#define O1_BALANCE_PARAMS(X)                                                                    \
  X(cache_decay_ticks, 1, 0, 1000000, 0, "ticks",                                               \
    "cache_decay_ticks: a task descheduled this recently is cache-hot and stays (i386: 0 for "  \
    "128 kB L2, 1 for 512 kB, 5 for a 2 MB Xeon)")                                              \
  X(idle_rebalance_ticks, 1, 1, 1000000, 1, "ticks", "IDLE_REBALANCE_TICK (HZ/1000 or 1)")      \
  X(busy_rebalance_ticks, 200, 1, 1000000, 1, "ticks", "BUSY_REBALANCE_TICK (HZ/5)")

/* The parameters, in table order (one X-macro list in policy_o1.c). */
#define O1_PARAMS(X)                                                                            \
  X(max_timeslice, 300, 1, 1000000, 1, "ticks",                                                  \
    "MAX_TIMESLICE: timeslice of nice -20 (300 ms in 2.5.64, 200 ms from bk4)")                  \
  X(min_timeslice, 10, 1, 1000000, 1, "ticks", "MIN_TIMESLICE: timeslice of nice +19 (10 ms)")   \
  X(max_sleep_avg, 2000, 1, 1000000, 1, "ticks",                                                 \
    "MAX_SLEEP_AVG: ceiling of sleep_avg (2*HZ in 2.5.64, 10*HZ from bk4)")                      \
  X(starvation_limit, 2000, 0, 1000000, 1, "ticks",                                              \
    "STARVATION_LIMIT: expired-array wait per runnable task before interactive tasks expire too") \
  X(prio_bonus_ratio, 25, 0, 100, 0, "%",                                                        \
    "PRIO_BONUS_RATIO: share of the 40 nice levels that sleep_avg may move the priority")        \
  X(interactive_delta, 2, -40, 40, 0, "levels", "INTERACTIVE_DELTA of TASK_INTERACTIVE")         \
  X(child_penalty, 95, 0, 100, 0, "%", "CHILD_PENALTY: child keeps this share of sleep_avg")     \
  X(parent_penalty, 100, 0, 100, 0, "%", "PARENT_PENALTY: parent keeps this share at fork")      \
  X(exit_weight, 3, 0, 1000, 0, "",                                                              \
    "EXIT_WEIGHT: weight of the parent's sleep_avg when a CPU-hog child is reaped")              \
  X(sleep_credit_rt, 0, 0, 1, 0, "bool",                                                         \
    "credit sleep to real-time tasks too (bk4); 0: normal tasks only (2.5.64)")                  \
  X(sleep_credit_minus_one, 0, 0, 1, 0, "bool",                                                  \
    "credit now - last_run - 1, only if > 0 (2.5.65, C4); 0: now - last_run if != 0")            \
  X(wakeup_prio_if_changed, 0, 0, 1, 0, "bool",                                                  \
    "recompute prio at wakeup only if sleep_avg changed (bk4); 0: whenever credited (2.5.64)")   \
  X(waker_bonus, 0, 0, 1, 0, "bool",                                                             \
    "back-boost: a process-context waker gets the wakee's sleep_avg overflow and is requeued "   \
    "(Linus, bk4)")                                                                              \
  X(sync_wakeup_credit, 1, 0, 1, 0, "bool",                                                      \
    "a sync wakeup is a normal wakeup (2.5.64); 0: plain enqueue, no credit, no preemption (bk4)") \
  X(pull_equal_prio_preempt, 0, 0, 1, 0, "bool",                                                 \
    "pull_task also preempts an equal-prio task with a shorter slice left (bk4)")                 \
  X(child_placement, 0, 0, 1, 0, "enum",                                                         \
    "0: a forked child is activated at the tail of its prio list (2.5.64); 1: it takes the "     \
    "parent's prio and is queued just before the parent (SMART_WAKE_CHILD, bk4)")                \
  X(tick_decay_rt, 0, 0, 1, 0, "bool",                                                           \
    "the tick decays every task's sleep_avg before the RT branch (bk4); 0: normal tasks only")   \
  X(fork_penalize_rt, 0, 0, 1, 0, "bool",                                                        \
    "fork penalties apply to real-time tasks too (bk4); 0: skipped for them (2.5.64)")           \
  X(setscheduler_activate, 1, 0, 1, 0, "bool",                                                   \
    "setscheduler requeues by a full activation that credits sleep (2.5.64); 0: plain enqueue")  \
  X(starvation_limit_guard, 0, 0, 1, 0, "bool",                                                  \
    "STARVATION_LIMIT = 0 turns the starvation check off (bk4); 0: it means 1 tick (2.5.64)")   \
  O1_BALANCE_PARAMS(X)

enum {
#define O1_ENUM(name, ...) O1_##name,
  O1_PARAMS(O1_ENUM)
#undef O1_ENUM
  O1_NPARAMS
};

/* Per-task fields (in psTask.priv). */
typedef struct o1_task {
  o1_sched sched;            /* what the family shares (o1_task.h) */
  int64_t nr_expired;        /* slice expiries into the expired array */
  int64_t nr_reinserted;     /* slice expiries reinserted into the active array */
} o1_task;

/* effective_prio for a normal task of static_prio with sleep_avg. */
int ps_o1_effective_prio(const psModel *m, int static_prio, uint32_t sleep_avg);
/* task_timeslice (BASE_TIMESLICE) for static_prio. */
int ps_o1_task_timeslice(const psModel *m, int static_prio);
/* TASK_INTERACTIVE for a task at prio with static_prio. */
int ps_o1_task_interactive(const psModel *m, int prio, int static_prio);
/* EXPIRED_STARVING for a runqueue. */
int ps_o1_expired_starving(const psModel *m, uint32_t expired_timestamp, uint32_t jiffies,
                           uint32_t nr_running);

#endif
