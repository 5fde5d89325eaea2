/* The Linux 2.5 O(1) scheduler: 2.5.64, 2.5.64-bk4 and 2.5.65 as one state
 * machine whose version differences are parameters (fact sheet §1).
 * Function names are the kernel's.  `unsigned long` is 32 bits on i386, so
 * jiffies arithmetic and sleep_avg are uint32_t here.  Section references
 * (§n) are to ../shared/reference/kernel-2.5-sched.md. */
#include <stdio.h>
#include <string.h>

#include "balance_o1.h"
#include "engine_internal.h"
#include "policy_o1.h"
#include "prio_array.h"

#define MAX_RT_PRIO 100
#define MAX_PRIO 140
#define MAX_USER_PRIO 40
#define NICE_TO_PRIO(n) (MAX_RT_PRIO + (n) + 20)



#define P(name) (m->param[O1_##name])

static inline o1_task *O1(psTask *p) { return (o1_task *)p->priv; }
static inline o1_runqueue *RQ(const psModel *m, const psData *d, int cpu) { return o1_runqueue_of(m, d, cpu); }
static inline int rt_task(const psTask *p) { return p->prio < MAX_RT_PRIO; }
static inline uint32_t jiffies32(const psData *d) { return (uint32_t)d->jiffies; }

/* ---- formulas (§3) ---- */

static int effective_prio_of(const psModel *m, int static_prio, uint32_t sleep_avg) {
  /* bonus = MAX_USER_PRIO*PRIO_BONUS_RATIO*sleep_avg/MAX_SLEEP_AVG/100 -
   *         MAX_USER_PRIO*PRIO_BONUS_RATIO/100/2, left to right in unsigned long */
  uint32_t ratio = (uint32_t)(MAX_USER_PRIO * P(prio_bonus_ratio));
  uint32_t up = ratio * sleep_avg / (uint32_t)P(max_sleep_avg) / 100;
  int bonus = (int)up - (int)(ratio / 100 / 2);
  int prio = static_prio - bonus;
  if (prio < MAX_RT_PRIO) prio = MAX_RT_PRIO;
  if (prio > MAX_PRIO - 1) prio = MAX_PRIO - 1;
  return prio;
}

/* effective_prio(p): RT tasks keep their prio (bk4 returns early; 2.5.64's
 * callers skip RT tasks, which comes to the same). */
static int effective_prio(const psModel *m, psTask *p) {
  if (rt_task(p)) return p->prio;
  return effective_prio_of(m, p->static_prio, O1(p)->sched.sleep_avg);
}

static int task_timeslice_of(const psModel *m, int static_prio) {
  return (int)(P(min_timeslice) + ((P(max_timeslice) - P(min_timeslice)) *
                                   (MAX_PRIO - 1 - static_prio) / (MAX_USER_PRIO - 1)));
}

static int task_timeslice(const psModel *m, const psTask *p) {
  return task_timeslice_of(m, p->static_prio);
}

/* TASK_INTERACTIVE: prio <= static_prio - DELTA, with
 * DELTA = SCALE(nice, 40, MAX_USER_PRIO*PRIO_BONUS_RATIO/100) + INTERACTIVE_DELTA. */
static int task_interactive_of(const psModel *m, int prio, int static_prio) {
  int nice = static_prio - NICE_TO_PRIO(0);
  int delta = nice * (int)(MAX_USER_PRIO * P(prio_bonus_ratio) / 100) / 40 + (int)P(interactive_delta);
  return prio <= static_prio - delta;
}

static int expired_starving(const psModel *m, uint32_t ts, uint32_t now, uint32_t nr_running) {
  uint32_t limit = (uint32_t)P(starvation_limit);
  if (P(starvation_limit_guard) && !limit) return 0;
  return ts && now - ts >= limit * nr_running + 1;
}

int ps_o1_effective_prio(const psModel *m, int static_prio, uint32_t sleep_avg) {
  return effective_prio_of(m, static_prio, sleep_avg);
}
int ps_o1_task_timeslice(const psModel *m, int static_prio) { return task_timeslice_of(m, static_prio); }
int ps_o1_task_interactive(const psModel *m, int prio, int static_prio) {
  return task_interactive_of(m, prio, static_prio);
}
int ps_o1_expired_starving(const psModel *m, uint32_t ts, uint32_t now, uint32_t nr_running) {
  return expired_starving(m, ts, now, nr_running);
}

static void set_prio(const psModel *m, psData *d, psTask *p, int prio) {
  if (p->prio != prio) ps_log(m, d, PS_EVT_PRIO, p->cpu, p, -1, prio, p->prio);
  p->prio = prio;
}

/* ---- runqueue primitives (§4) ---- */

static void enqueue_task(const psModel *m, psData *d, psTask *p, int array) {
  psu_enqueue_task(d->task, ps_index(d, p), &RQ(m, d, p->cpu)->arrays[array], array, 0);
}

static void dequeue_task(const psModel *m, psData *d, psTask *p) {
  psu_dequeue_task(d->task, ps_index(d, p), &RQ(m, d, p->cpu)->arrays[p->array], 0);
}

static void __activate_task(const psModel *m, psData *d, psTask *p) {
  o1_runqueue *rq = RQ(m, d, p->cpu);
  enqueue_task(m, d, p, rq->active);
  rq->nr_running++;
}

static void deactivate_task(const psModel *m, psData *d, psTask *p) {
  o1_runqueue *rq = RQ(m, d, p->cpu);
  rq->nr_running--;
  if (p->state == PS_TASK_UNINTERRUPTIBLE) rq->nr_uninterruptible++;
  dequeue_task(m, d, p);
}

/* activate_task (§5.5): credit the sleep since last_run, maybe back-boost
 * the waker, recompute prio, enqueue in the active array.  Returns
 * requeue_waker. */
static int activate_task(const psModel *m, psData *d, psTask *p, psTask *waker) {
  o1_task *pt = O1(p);
  uint32_t now = jiffies32(d);
  uint32_t max = (uint32_t)P(max_sleep_avg);
  int requeue_waker;
  uint32_t credit;
  if (P(sleep_credit_minus_one)) {
    /* 2.5.65: long sleep_time = jiffies - p->sched.last_run - 1; used if > 0 */
    int32_t s = (int32_t)(now - pt->sched.last_run - 1);
    credit = s > 0 ? (uint32_t)s : 0;
  } else {
    credit = now - pt->sched.last_run;
  }
  if (!credit || (!P(sleep_credit_rt) && rt_task(p))) {
    __activate_task(m, d, p);
    return 0;
  }
  uint32_t sleep_avg = o1_credit_sleep(m, d, p, waker, credit, max, (int)P(waker_bonus),
                                       &requeue_waker);
  if (!P(wakeup_prio_if_changed) || pt->sched.sleep_avg != sleep_avg) {
    pt->sched.sleep_avg = sleep_avg;
    set_prio(m, d, p, effective_prio(m, p));
  }
  __activate_task(m, d, p);
  return requeue_waker;
}

/* ---- hooks ---- */

static int configure_o1(psModel *m, char *err, int errlen) {
  if (P(min_timeslice) > P(max_timeslice)) {
    snprintf(err, errlen, "min_timeslice=%lld must not exceed max_timeslice=%lld",
             (long long)P(min_timeslice), (long long)P(max_timeslice));
    return -1;
  }
  return 0;
}

static void init_rq_o1(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = RQ(m, d, cpu);
  memset(rq, 0, sizeof(*rq));
  psu_array_init(&rq->arrays[0], MAX_PRIO);
  psu_array_init(&rq->arrays[1], MAX_PRIO);
}

static void init_static(psTask *p) {
  p->static_prio = NICE_TO_PRIO(p->nice);
  p->prio = p->policy == PS_SCHED_NORMAL ? p->static_prio : MAX_RT_PRIO - 1 - p->rt_priority;
}

/* sim.spawn: sleep_avg 0 (or as the caller set it), a full timeslice,
 * prio = effective_prio, then a plain enqueue; preempt the CPU's task if the
 * new one has a better prio. */
static int task_spawn_o1(const psModel *m, psData *d, psTask *p) {
  o1_task *pt = O1(p);
  init_static(p);
  pt->sched.last_run = jiffies32(d);
  p->time_slice = task_timeslice(m, p);
  p->prio = effective_prio(m, p);
  __activate_task(m, d, p);
  return p->prio < ps_curr(d, p->cpu)->prio;
}

static o1_balance_ops balance_ops(const psModel *m) {
  o1_balance_ops ops = {0, (int)P(pull_equal_prio_preempt), 0, (uint32_t)P(cache_decay_ticks),
                        (uint32_t)P(idle_rebalance_ticks), (uint32_t)P(busy_rebalance_ticks), 0};
  return ops;
}

static void rebalance_tick(const psModel *m, psData *d, int cpu, int idle) {
  if (m->ncpu == 1) return;
  o1_balance_ops ops = balance_ops(m);
  o1_rebalance_tick(m, d, &ops, cpu, idle);
}

/* scheduler_tick (§5.1), charged to the CPU's current task. */
static void tick_o1(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = RQ(m, d, cpu);
  psTask *p = ps_curr(d, cpu);
  o1_task *pt = O1(p);
  if (p->is_idle) {
    rebalance_tick(m, d, cpu, 1);
    return;
  }
  if (p->array != rq->active) {
    /* expired or yielded, not yet switched out */
    ps_resched_cpu(d, cpu);
    goto out;
  }
  if (P(tick_decay_rt) && pt->sched.sleep_avg) pt->sched.sleep_avg--;
  if (rt_task(p)) {
    /* SCHED_RR: round-robin at the tail of its list; SCHED_FIFO: nothing */
    if (p->policy == PS_SCHED_RR && !--p->time_slice) {
      p->time_slice = task_timeslice(m, p);
      pt->sched.first_time_slice = 0;
      ps_resched_cpu(d, cpu);
      dequeue_task(m, d, p);
      enqueue_task(m, d, p, rq->active);
    }
    goto out;
  }
  if (!P(tick_decay_rt) && pt->sched.sleep_avg) pt->sched.sleep_avg--;
  if (!--p->time_slice) {
    dequeue_task(m, d, p);
    ps_resched_cpu(d, cpu);
    set_prio(m, d, p, effective_prio(m, p));
    p->time_slice = task_timeslice(m, p);
    pt->sched.first_time_slice = 0;
    int interactive = task_interactive_of(m, p->prio, p->static_prio);
    int starving = expired_starving(m, rq->expired_timestamp, jiffies32(d), rq->nr_running);
    if (!interactive || starving) {
      if (!rq->expired_timestamp) rq->expired_timestamp = jiffies32(d);
      enqueue_task(m, d, p, !rq->active);
      pt->nr_expired++;
      if (interactive) {
        d->warn[PS_WARN_STARVING]++;
        ps_log(m, d, PS_EVT_STARVING, cpu, p, -1, p->prio, rq->nr_running);
      }
      ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 1);
    } else {
      enqueue_task(m, d, p, rq->active);
      pt->nr_reinserted++;
      ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 0);
    }
  }
out:
  rebalance_tick(m, d, cpu, 0);
}

/* schedule(), step 1: prev->sched.last_run = jiffies on every entry. */
static void put_prev_o1(const psModel *m, psData *d, psTask *prev) {
  (void)m;
  if (!prev->is_idle) O1(prev)->sched.last_run = jiffies32(d);
}

static void deactivate_o1(const psModel *m, psData *d, psTask *prev) { deactivate_task(m, d, prev); }

/* schedule(), steps 3-5 (§5.2). */
static psTask *pick_next_o1(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = RQ(m, d, cpu);
  if (!rq->nr_running && m->ncpu > 1) {
    o1_balance_ops ops = balance_ops(m);
    o1_load_balance(m, d, &ops, cpu, 1);
  }
  if (!rq->nr_running) {
    rq->expired_timestamp = 0;
    return &d->task[d->cpu[cpu].idle];
  }
  psPrioArray *array = &rq->arrays[rq->active];
  if (!array->nr_active) {
    rq->active = !rq->active;
    array = &rq->arrays[rq->active];
    rq->expired_timestamp = 0;
    rq->nr_array_switches++;
    ps_log(m, d, PS_EVT_ARRAY_SWITCH, cpu, NULL, -1, 0, rq->nr_array_switches);
  }
  int idx = psu_find_first_bit(array);
  return &d->task[array->head[idx]];
}

/* try_to_wake_up, steps 2-4 and 6 (§5.4). */
static int wakeup_o1(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  if (sync) o1_sync_fast_migrate(m, d, p, waker);
  o1_runqueue *rq = RQ(m, d, p->cpu);
  if (p->state == PS_TASK_UNINTERRUPTIBLE) rq->nr_uninterruptible--;
  if (sync && !P(sync_wakeup_credit)) {
    __activate_task(m, d, p);
    return 0;
  }
  int requeue_waker = activate_task(m, d, p, waker);
  int preempt = p->prio < ps_curr(d, p->cpu)->prio;
  if (requeue_waker) {
    /* the waker drops to the tail of its (new) prio list in the same array */
    int array = waker->array;
    dequeue_task(m, d, waker);
    set_prio(m, d, waker, effective_prio(m, waker));
    enqueue_task(m, d, waker, array);
  }
  return preempt;
}

/* copy_process's slice split and wake_up_forked_process (§5.6). */
static void task_fork_o1(const psModel *m, psData *d, psTask *parent, psTask *p) {
  o1_task *pt = O1(p), *ppt = O1(parent);
  o1_runqueue *rq = RQ(m, d, parent->cpu);
  pt->nr_expired = pt->nr_reinserted = 0;
  if (o1_fork_split(d, parent, p)) tick_o1(m, d, parent->cpu);
  p->cpu = parent->cpu;
  if (P(fork_penalize_rt) || !rt_task(p)) {
    ppt->sched.sleep_avg = ppt->sched.sleep_avg * (uint32_t)P(parent_penalty) / 100;
    pt->sched.sleep_avg = pt->sched.sleep_avg * (uint32_t)P(child_penalty) / 100;
    p->prio = effective_prio(m, p);
  }
  if (!P(child_placement)) {
    /* a fork is not a wakeup by a waker: no back-boost of the parent */
    activate_task(m, d, p, NULL);
  } else if (parent->array < 0) {
    __activate_task(m, d, p);
  } else {
    /* SMART_WAKE_CHILD: the parent's prio, just before the parent */
    p->prio = parent->prio;
    psu_insert_before(d->task, ps_index(d, p), ps_index(d, parent),
                      &rq->arrays[parent->array], parent->array);
    rq->nr_running++;
  }
}

/* sched_exit (§5.7), when the zombie p is reaped. */
static void task_exit_o1(const psModel *m, psData *d, psTask *p, psTask *parent) {
  if (parent) o1_sched_exit(p, parent, (int32_t)P(max_timeslice), (uint32_t)P(exit_weight));
}

/* sys_sched_yield (§5.8). */
static void yield_o1(const psModel *m, psData *d, psTask *p) {
  o1_runqueue *rq = RQ(m, d, p->cpu);
  int array = p->array;
  dequeue_task(m, d, p);
  enqueue_task(m, d, p, rt_task(p) ? array : !rq->active);
}

/* set_user_nice (§5.9). */
static void set_nice_o1(const psModel *m, psData *d, psTask *p, int nice) {
  if (rt_task(p)) {
    p->static_prio = NICE_TO_PRIO(nice);
    return;
  }
  int array = p->array;
  if (array >= 0) dequeue_task(m, d, p);
  p->static_prio = NICE_TO_PRIO(nice);
  set_prio(m, d, p, NICE_TO_PRIO(nice));
  if (array >= 0) {
    enqueue_task(m, d, p, array);
    /* "raised priority" compares with the updated static_prio: never true */
    if (ps_curr(d, p->cpu) == p) ps_resched_cpu(d, p->cpu);
  }
}

/* setscheduler (§5.9): no preemption check. */
static void set_scheduler_o1(const psModel *m, psData *d, psTask *p, int policy, int rt_priority) {
  int queued = p->array >= 0;
  if (queued) deactivate_task(m, d, p);
  p->policy = policy;
  p->rt_priority = rt_priority;
  set_prio(m, d, p, policy != PS_SCHED_NORMAL ? MAX_RT_PRIO - 1 - rt_priority : p->static_prio);
  if (!queued) return;
  if (P(setscheduler_activate))
    activate_task(m, d, p, NULL);
  else
    __activate_task(m, d, p);
}

static void migrate_o1(const psModel *m, psData *d, psTask *p, int dest) {
  o1_balance_ops ops = balance_ops(m);
  o1_migrate(m, d, &ops, p, dest);
}

static int dump_o1(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  return o1_dump(m, d, cpu, MAX_PRIO, out, max);
}

static int check_o1(const psModel *m, const psData *d, char *err, int errlen) {
  return o1_check_runqueues(m, d, MAX_PRIO, 0, 1, err, errlen);
}

/* ---- tables ---- */

static const psParamInfo o1_params[] = {
#define O1_INFO(name, def, min, max, hz, unit, doc) {#name, def, min, max, hz, unit, doc},
    O1_PARAMS(O1_INFO)
#undef O1_INFO
};

#define TF(name, type, doc) {#name, type, offsetof(o1_task, name), doc}
static const psFieldInfo o1_task_fields[] = {
    O1_SCHED_FIELD_INFO(o1_task),
    TF(nr_expired, PS_F_I64, "expiries into the expired array"),
    TF(nr_reinserted, PS_F_I64, "expiries reinserted into the active array (interactive)"),
};

#define RF(name, type, doc) {#name, type, offsetof(o1_runqueue, name), doc}
static const psFieldInfo o1_rq_fields[] = {
    RF(active, PS_F_I32, "index of the active array"),
    RF(nr_running, PS_F_U32, "runnable tasks, the running one included"),
    RF(nr_uninterruptible, PS_F_U32, "tasks in uninterruptible sleep"),
    RF(expired_timestamp, PS_F_U32, "jiffies of the first expiry since the last array switch"),
    RF(nr_array_switches, PS_F_I64, "active/expired swaps"),
    RF(nr_balance_pulls, PS_F_I64, "tasks this CPU pulled from others"),
};

_Static_assert(sizeof(o1_task) <= PS_TASK_PRIV, "o1_task must fit psTask.priv");
_Static_assert(offsetof(o1_task, sched) == 0, "the family's shared fields come first");
_Static_assert(O1_NPARAMS <= PS_MAX_PARAMS, "too many parameters");

const psPolicy ps_policy_o1 = {
    .name = "o1",
    .params = o1_params,
    .nparams = O1_NPARAMS,
    .task_fields = o1_task_fields,
    .ntask_fields = (int)(sizeof(o1_task_fields) / sizeof(o1_task_fields[0])),
    .rq_fields = o1_rq_fields,
    .nrq_fields = (int)(sizeof(o1_rq_fields) / sizeof(o1_rq_fields[0])),
    .rq_size = sizeof(o1_runqueue),
    .max_prio = MAX_PRIO,
    .configure = configure_o1,
    .init_rq = init_rq_o1,
    .task_spawn = task_spawn_o1,
    .task_fork = task_fork_o1,
    .task_exit = task_exit_o1,
    .wakeup = wakeup_o1,
    .put_prev = put_prev_o1,
    .deactivate = deactivate_o1,
    .pick_next = pick_next_o1,
    .tick = tick_o1,
    .yield = yield_o1,
    .set_nice = set_nice_o1,
    .set_scheduler = set_scheduler_o1,
    .migrate = migrate_o1,
    .dump = dump_o1,
    .check = check_o1,
};
