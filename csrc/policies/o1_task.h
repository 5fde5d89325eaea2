/* The per-task state every policy of the O(1) family keeps first in
 * psTask.priv, and the bk4 code that works on it alone (shared by
 * policy_o1.c and policy_houston.c, whose patch leaves these parts as bk4
 * has them). */
#ifndef PS_O1_TASK_H
#define PS_O1_TASK_H
#include <stdint.h>

#include "pysched.h"

typedef struct o1_sched {
  uint32_t sleep_avg;        /* ticks, 0..MAX_SLEEP_AVG */
  uint32_t last_run;         /* jiffies at the latest entry to schedule() (sleep_timestamp in 2.5.64) */
  int32_t first_time_slice;  /* 1 until the first expiry after fork */
  int32_t pad;
  int64_t bonus_given;       /* sleep_avg this task's overflow gave its wakers */
  int64_t bonus_received;    /* sleep_avg this task received as a waker */
} o1_sched;

/* State-field table entries of the shared fields, for a policy task struct
 * T whose o1_sched member is `sched`. */
#define O1_SCHED_FIELD_INFO(T)                                                             \
  {"sleep_avg", PS_F_U32, offsetof(T, sched.sleep_avg),                                    \
   "ticks of credited sleep, 0..max_sleep_avg"},                                           \
  {"last_run", PS_F_U32, offsetof(T, sched.last_run),                                      \
   "jiffies at the latest entry to schedule()"},                                           \
  {"first_time_slice", PS_F_I32, offsetof(T, sched.first_time_slice),                      \
   "1 until the first expiry after fork"},                                                 \
  {"bonus_given", PS_F_I64, offsetof(T, sched.bonus_given),                                \
   "sleep_avg given to wakers by the back-boost"},                                         \
  {"bonus_received", PS_F_I64, offsetof(T, sched.bonus_received),                          \
   "sleep_avg received from wakees by the back-boost"}

/* Every family policy's task struct begins with an o1_sched. */
static inline o1_sched *o1_sched_of(psTask *p) { return (o1_sched *)p->priv; }
static inline const o1_sched *o1_sched_of_const(const psTask *p) {
  return (const o1_sched *)p->priv;
}

/* activate_task's bk4 sleep credit (§5.5) once credit > 0: the wakee's new
 * sleep_avg, int sleep_avg = p->sleep_avg + sleep_time capped at max, with
 * the overflow handed to a process-context waker when back_boost is on
 * (logged and counted).  Sets *requeue_waker when the waker's sleep_avg
 * changed.  2.5.64's unsigned sum differs only beyond 2^31 ticks. */
uint32_t o1_credit_sleep(const psModel *m, psData *d, psTask *p, psTask *waker, uint32_t credit,
                         uint32_t max, int back_boost, int *requeue_waker);

/* copy_process's slice split (§5.6): the child takes (slice + 1) / 2, the
 * parent keeps slice / 2; the child's first slice starts now.  Returns 1 when
 * the parent had a single tick (its slice is then set to 1 and the caller
 * must run scheduler_tick for it). */
int o1_fork_split(psData *d, psTask *parent, psTask *child);

/* sched_exit (§5.7) when the zombie p is reaped by parent. */
void o1_sched_exit(psTask *p, psTask *parent, int32_t max_timeslice, uint32_t exit_weight);

#endif
