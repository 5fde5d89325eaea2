#include "o1_task.h"

#include "engine_internal.h"

uint32_t o1_credit_sleep(const psModel *m, psData *d, psTask *p, psTask *waker, uint32_t credit,
                         uint32_t max, int back_boost, int *requeue_waker) {
  o1_sched *ps = o1_sched_of(p);
  int32_t sleep_avg = (int32_t)(ps->sleep_avg + credit);
  *requeue_waker = 0;
  if (sleep_avg <= (int32_t)max) return (uint32_t)sleep_avg;
  /* the overflow goes to a process-context waker (not in_interrupt()) */
  if (back_boost && waker) {
    o1_sched *ws = o1_sched_of(waker);
    sleep_avg += (int32_t)ws->sleep_avg - (int32_t)max;
    if (sleep_avg > (int32_t)max) sleep_avg = (int32_t)max;
    if (ws->sleep_avg != (uint32_t)sleep_avg) {
      int64_t amount = (int64_t)sleep_avg - ws->sleep_avg;
      ws->sleep_avg = (uint32_t)sleep_avg;
      ws->bonus_received += amount;
      ps->bonus_given += amount;
      ps_log(m, d, PS_EVT_BACKBOOST, waker->cpu, waker, p->pid, waker->prio, amount);
      *requeue_waker = 1;
    }
  }
  return max;
}

int o1_fork_split(psData *d, psTask *parent, psTask *child) {
  o1_sched *cs = o1_sched_of(child);
  cs->bonus_given = cs->bonus_received = 0;
  child->time_slice = (parent->time_slice + 1) >> 1;
  cs->first_time_slice = 1;
  parent->time_slice >>= 1;
  cs->last_run = (uint32_t)d->jiffies;
  if (parent->time_slice) return 0;
  /* the parent had one tick left: it expires now, tick and all */
  parent->time_slice = 1;
  return 1;
}

void o1_sched_exit(psTask *p, psTask *parent, int32_t max_timeslice, uint32_t exit_weight) {
  o1_sched *cs = o1_sched_of(p), *ps = o1_sched_of(parent);
  if (cs->first_time_slice) {
    parent->time_slice += p->time_slice;
    if (parent->time_slice > max_timeslice) parent->time_slice = max_timeslice;
  }
  /* a (relative) CPU-hog child takes some of the parent's sleep_avg */
  if (cs->sleep_avg < ps->sleep_avg)
    ps->sleep_avg = (ps->sleep_avg * exit_weight + cs->sleep_avg) / (exit_weight + 1);
}
