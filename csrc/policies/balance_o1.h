/* The 2.5 SMP load balancer over priority arrays (fact sheet §5.10), shared
 * by the O(1) family and Houston's scheduler. */
#ifndef PS_BALANCE_O1_H
#define PS_BALANCE_O1_H
#include <stdint.h>

#include "o1_runqueue.h"

/* What differs between the policies that share the balancer. */
typedef struct o1_balance_ops {
  int lru;                          /* keep Houston's lru list of non-RT tasks */
  int equal_prio_preempt;           /* pull_task's bk4 rule */
  int by_prio_avg;                  /* balance on prio_avg (an extension beyond 2.5) */
  uint32_t cache_decay_ticks;
  uint32_t idle_rebalance_ticks, busy_rebalance_ticks;
  uint32_t prio_avg_imbalance;      /* prio_avg units (1024 per level) */
} o1_balance_ops;


/* enqueue_task / dequeue_task with the lru list where the policy keeps one. */
void o1_enqueue(const psModel *m, psData *d, const o1_balance_ops *ops, psTask *p, int array);
void o1_dequeue(const psModel *m, psData *d, const o1_balance_ops *ops, psTask *p);

/* rebalance_tick(rq, idle), called at the end of scheduler_tick. */
void o1_rebalance_tick(const psModel *m, psData *d, const o1_balance_ops *ops, int cpu, int idle);

/* load_balance(rq, idle): pull tasks from the busiest CPU to `cpu`.
 * Returns the number pulled. */
int o1_load_balance(const psModel *m, psData *d, const o1_balance_ops *ops, int cpu, int idle);

/* The migration thread (set_cpus_allowed) for a task that is not running:
 * a queued one moves to dest's active array, rescheduling dest if it beats
 * dest's task; a sleeping one will wake on dest. */
void o1_migrate(const psModel *m, psData *d, const o1_balance_ops *ops, psTask *p, int dest);

/* try_to_wake_up step 1: a sync wakeup by a task on another CPU moves the
 * (not queued) wakee to the waker's CPU if its affinity allows. */
void o1_sync_fast_migrate(const psModel *m, psData *d, psTask *p, const psTask *waker);

#endif
