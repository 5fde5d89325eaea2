/* The generic task: what every policy and the engine share.  Policy-private
 * per-task data (sleep_avg, last_run, run_avg ...) lives in `priv`, described
 * by the policy's state-field table. */
#ifndef PS_TASK_H
#define PS_TASK_H
#include <stdint.h>

#include "cpumask.h"
#include "program.h"
#include "rng.h"

/* Task states, as the kernel's TASK_* values (bits, so that a wakeup can
 * take a state mask as try_to_wake_up does). */
enum {
  PS_TASK_RUNNING = 0,
  PS_TASK_INTERRUPTIBLE = 1,
  PS_TASK_UNINTERRUPTIBLE = 2,
  PS_TASK_ZOMBIE = 4,
  PS_TASK_DEAD = 8,
};

/* What the task's time since `since_ns` counts as. */
enum { PS_ACCT_RUN = 0, PS_ACCT_WAIT = 1, PS_ACCT_SLEEP = 2, PS_ACCT_NONE = 3 };

/* 104: the fair policies' sched_entity (fair_common.h) with its rq->cfs_tasks links */
#define PS_TASK_PRIV 104
#define PS_NAME_LEN 32
/* psTask.lag_min_ns / lag_max_ns of a task whose lag was never measured */
#define PS_LAG_NONE INT64_MIN

typedef struct psTask {
  /* identity */
  int32_t pid;                /* 0 for the per-CPU idle tasks */
  int32_t ppid;               /* pid of the parent, 0 if spawned */
  int32_t is_idle;
  char name[PS_NAME_LEN];

  /* scheduling state shared by all policies */
  int32_t state;              /* PS_TASK_* */
  int32_t policy;             /* PS_SCHED_* */
  int32_t rt_priority;        /* 1..99 for FIFO/RR, 0 otherwise */
  int32_t prio;               /* dynamic priority, lower is better */
  int32_t static_prio;        /* from nice */
  int32_t nice;               /* -20..19 */
  int32_t time_slice;         /* ticks left */
  int32_t cpu;                /* CPU it runs or last ran on */
  int32_t migrate_to;         /* CPU to move to when it next leaves the CPU, -1 none */
  int32_t on_rq;              /* queued on its CPU's runqueue (the engine keeps it) */

  /* workload program */
  psProgState ps;             /* where it is in its program (program.h) */
  int64_t burst_left_ns;      /* CPU work left in the current run op */
  int32_t wait_chan;          /* channel it blocks on, -1 none */
  int32_t wait_next;          /* next waiter on that channel (task index) */
  psRng rng;

  /* accounting (engine) */
  int32_t acct;               /* PS_ACCT_* of the interval since since_ns */
  int64_t since_ns;
  int64_t cpu_ns, wait_ns, sleep_ns;
  int64_t cpu_ticks;          /* ticks charged to it (tick-sampled, the kernel's view) */
  int64_t nvcsw, nivcsw;      /* voluntary / involuntary switches out */
  int64_t nr_wakeups;
  int64_t nr_migrations;
  int64_t woken_ns;           /* time of the wakeup not yet followed by a run, -1 none */
  int64_t lat_count, lat_sum_ns, lat_max_ns;
  int64_t start_ns, exit_ns;  /* exit_ns -1 while alive */
  int64_t wait_max_ns;        /* longest wait for a CPU while runnable (watch.h) */
  int32_t waiting_prev, waiting_next; /* psWatch's list of the tasks waiting for a CPU, -1 ends */
  int64_t starved_ns;         /* when a wait first passed psModel.starve_ns, -1 never */
  /* its most negative and most positive lag (ns of service its policy owes
   * it) while watched, PS_LAG_NONE until its policy measured one (watch.h,
   * ps_watch_lag: the fair policies'), and the first instant it was past
   * its policy's bound, -1 never */
  int64_t lag_min_ns, lag_max_ns;
  int64_t lag_broken_ns;

  /* affinity: the CPUs it may run on.  After the fields a switch and a
   * tick read, which its 128 bytes would otherwise spread over two more
   * cache lines; a test of CPU c reads one word of it. */
  psCpuMask cpus_allowed;

  /* policy-private area, laid out by the policy */
  _Alignas(8) unsigned char priv[PS_TASK_PRIV];
} psTask;

#endif
