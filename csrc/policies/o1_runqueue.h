/* The runqueue of the O(1) family (kernel/sched.c struct runqueue), shared
 * by the 2.5 policies and Houston's: its layout, its invariants, and its
 * queue in scheduling order. */
#ifndef PS_O1_RUNQUEUE_H
#define PS_O1_RUNQUEUE_H
#include <stdint.h>

#include "prio_array.h"
#include "pysched.h"

/* The per-CPU runqueue of the O(1) family (kernel/sched.c struct runqueue). */
typedef struct o1_runqueue {
  psPrioArray arrays[2];
  int32_t active;               /* index of rq->active in arrays; the other is expired */
  uint32_t nr_running;          /* queued tasks, the running one included */
  uint32_t nr_uninterruptible;
  uint32_t expired_timestamp;   /* jiffies when the first task expired, 0 if none */
  uint32_t prio_avg;            /* Houston: filtered (MAX_PRIO - prio) of curr, x 1024 */
  uint32_t prev_cpu_load[PS_MAX_CPUS]; /* this CPU's memory of every runqueue's length */
  int64_t nr_array_switches;
  int64_t nr_fairness_requeues; /* Houston */
  int64_t nr_balance_pulls;     /* tasks this CPU pulled */
} o1_runqueue;

static inline o1_runqueue *o1_runqueue_of(const psModel *m, const psData *d, int cpu) {
  return (o1_runqueue *)ps_rq(m, d, cpu);
}

/* Invariants of every CPU's runqueue: bitmap and lists agree, links are
 * consistent, nr_active and nr_running count what is queued, with lru the
 * lru list holds exactly the queued non-RT tasks, and without expired_used
 * the expired array stays empty.  0, or -1 with a message. */
int o1_check_runqueues(const psModel *m, const psData *d, int max_prio, int lru, int expired_used,
                       char *err, int errlen);

/* The queue of `cpu` as (array, prio, pid) triples, active first (policy.h, dump). */
int o1_dump(const psModel *m, const psData *d, int cpu, int max_prio, int32_t *out, int max);

#endif
