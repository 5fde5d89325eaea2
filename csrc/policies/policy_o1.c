/* The Linux 2.5 O(1) scheduler: 2.5.64, 2.5.64-bk4 and 2.5.65 as one state
 * machine whose version differences are parameters (fact sheet §1).  What
 * the family shares with Houston's scheduler is o1_family.c; this file holds
 * the formulas of §3, activate_task, scheduler_tick with its expired array,
 * fork's placement and yield.  Function names are the kernel's.  `unsigned
 * long` is 32 bits on i386, so jiffies arithmetic and sleep_avg are uint32_t
 * here.  Section references (§n) are to docs/schedulers/o1.md. */
#include <stdio.h>

#include "o1_family.h"

#define MAX_RT_PRIO O1_MAX_RT_PRIO
#define MAX_PRIO 140
#define MAX_USER_PRIO 40
#define NICE_TO_PRIO(n) (MAX_RT_PRIO + (n) + 20)

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

#define P(name) (m->param[O1_##name])

/* Per-task fields (in psTask.priv). */
typedef struct o1_task {
  o1_sched sched;            /* what the family shares (o1_family.h) */
  int64_t nr_expired;        /* slice expiries into the expired array */
  int64_t nr_reinserted;     /* slice expiries reinserted into the active array */
} o1_task;

static inline o1_task *O1(psTask *p) { return (o1_task *)p->priv; }

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
  if (o1_rt_task(p)) return p->prio;
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

/* The formulas as Python sees them (pysched.o1). */
static int64_t f_effective_prio(const psModel *m, const int64_t *a) {
  return effective_prio_of(m, (int)a[0], (uint32_t)a[1]);
}
static int64_t f_task_timeslice(const psModel *m, const int64_t *a) {
  return task_timeslice_of(m, (int)a[0]);
}
static int64_t f_task_interactive(const psModel *m, const int64_t *a) {
  return task_interactive_of(m, (int)a[0], (int)a[1]);
}
static int64_t f_expired_starving(const psModel *m, const int64_t *a) {
  return expired_starving(m, (uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2]);
}

/* activate_task (§5.5): credit the sleep since last_run, maybe back-boost
 * the waker, recompute prio, enqueue in the active array.  Returns
 * requeue_waker.  Always inline: every wakeup runs it, in the wakeup hook
 * below. */
__attribute__((always_inline)) static inline int activate_task(const psModel *m, psData *d,
                                                               psTask *p, psTask *waker) {
  o1_task *pt = O1(p);
  uint32_t now = o1_jiffies(d);
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
  if (!credit || (!P(sleep_credit_rt) && o1_rt_task(p))) {
    o1_activate_plain(m, d, p);
    return 0;
  }
  uint32_t sleep_avg = o1_credit_sleep(m, d, p, waker, credit, max, (int)P(waker_bonus),
                                       &requeue_waker);
  if (!P(wakeup_prio_if_changed) || pt->sched.sleep_avg != sleep_avg) {
    pt->sched.sleep_avg = sleep_avg;
    o1_set_prio(m, d, p, effective_prio(m, p));
  }
  o1_activate_plain(m, d, p);
  return requeue_waker;
}

/* try_to_wake_up's policy part, with this activate_task inline */
static int wakeup_o1(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  if (o1_wakeup_begin(m, d, p, waker, sync)) return 0;
  return o1_wakeup_end(m, d, p, waker, activate_task(m, d, p, waker));
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

/* sim.spawn: sleep_avg 0 (or as the caller set it), a full timeslice,
 * prio = effective_prio, then a plain enqueue; preempt the CPU's task if the
 * new one has a better prio. */
static int task_spawn_o1(const psModel *m, psData *d, psTask *p) {
  psu_links_clear(p);
  p->static_prio = NICE_TO_PRIO(p->nice);
  p->prio = p->policy == PS_SCHED_NORMAL ? p->static_prio : MAX_RT_PRIO - 1 - p->rt_priority;
  O1(p)->sched.last_run = o1_jiffies(d);
  p->time_slice = task_timeslice(m, p);
  p->prio = effective_prio(m, p);
  o1_activate_plain(m, d, p);
  return p->prio < ps_curr(d, p->cpu)->prio;
}

/* scheduler_tick's end of a SCHED_NORMAL task's slice (§5.1): a new prio
 * and slice, then back in active if it is interactive and nothing starves,
 * else in expired.  Out of line, so that tick_o1's every-tick path does
 * not carry its register saves. */
__attribute__((noinline)) static void expire_o1(const psModel *m, psData *d, int cpu,
                                                o1_runqueue *rq, psTask *p) {
  o1_task *pt = O1(p);
  o1_dequeue_task(m, d, p);
  ps_resched_cpu(d, cpu);
  o1_set_prio(m, d, p, effective_prio(m, p));
  p->time_slice = task_timeslice(m, p);
  pt->sched.first_time_slice = 0;
  int interactive = task_interactive_of(m, p->prio, p->static_prio);
  int starving = expired_starving(m, rq->expired_timestamp, o1_jiffies(d), rq->nr_running);
  if (!interactive || starving) {
    if (!rq->expired_timestamp) rq->expired_timestamp = o1_jiffies(d);
    o1_enqueue_task(m, d, p, !rq->active);
    ps_count_up(&pt->nr_expired);
    if (interactive) {
      ps_count_up(&d->warn[PS_WARN_STARVING]);
      ps_log(m, d, PS_EVT_STARVING, cpu, p, -1, p->prio, rq->nr_running);
    }
    ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 1);
  } else {
    o1_enqueue_task(m, d, p, rq->active);
    ps_count_up(&pt->nr_reinserted);
    ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 0);
  }
}

/* scheduler_tick (§5.1), charged to the CPU's current task. */
static void tick_o1(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = o1_rq(m, d, cpu);
  psTask *p = ps_curr(d, cpu);
  o1_task *pt = O1(p);
  if (p->is_idle) {
    o1_rebalance_tick(m, d, cpu, 1);
    return;
  }
  if (o1_array(p) != rq->active) {
    /* expired or yielded, not yet switched out */
    ps_resched_cpu(d, cpu);
    goto out;
  }
  if (P(tick_decay_rt) && pt->sched.sleep_avg) pt->sched.sleep_avg--;
  if (o1_rt_task(p)) {
    o1_tick_rt(m, d, cpu, p, task_timeslice(m, p));
    goto out;
  }
  if (!P(tick_decay_rt) && pt->sched.sleep_avg) pt->sched.sleep_avg--;
  if (!--p->time_slice) expire_o1(m, d, cpu, rq, p);
out:
  o1_rebalance_tick(m, d, cpu, 0);
}

/* k ticks of tick_o1 at once, as many as leave a normal task in the active
 * array with time to run and come before the next balancing: each only
 * decrements sleep_avg (to 0 at least) and time_slice; the tick that would
 * end the slice or balance is left to tick_o1.  apply=2: k deferred ticks
 * it said it could take (PS_TICK_BATCH_TRUSTED), with nothing to check. */
static int64_t tick_batch_o1(const psModel *m, psData *d, int cpu, int64_t k, int apply) {
  psTask *p = ps_curr(d, cpu);
  int64_t n = k;
  if (apply != 2) {
    if (o1_rt_task(p) || o1_array(p) != o1_rq(m, d, cpu)->active) return 0;
    int64_t before = o1_ticks_before_rebalance(m, d, cpu);
    if (n > p->time_slice - 1) n = p->time_slice - 1;
    if (n > before) n = before;
    if (n <= 0) return 0;
  }
  /* asked (apply=0) and told (apply=1) in turn: stores of what is there
   * when asked, rather than a branch that is mispredicted half the time */
  o1_task *pt = O1(p);
  uint32_t drained = pt->sched.sleep_avg > n ? pt->sched.sleep_avg - (uint32_t)n : 0;
  pt->sched.sleep_avg = apply ? drained : pt->sched.sleep_avg;
  p->time_slice -= apply ? (int)n : 0;
  return n;
}

/* copy_process's slice split and wake_up_forked_process (§5.6). */
static void task_fork_o1(const psModel *m, psData *d, psTask *parent, psTask *p) {
  o1_task *pt = O1(p), *ppt = O1(parent);
  pt->nr_expired = pt->nr_reinserted = 0;
  if (o1_fork_split(d, parent, p)) tick_o1(m, d, parent->cpu);
  p->cpu = parent->cpu;
  if (P(fork_penalize_rt) || !o1_rt_task(p)) {
    ppt->sched.sleep_avg = ppt->sched.sleep_avg * (uint32_t)P(parent_penalty) / 100;
    pt->sched.sleep_avg = pt->sched.sleep_avg * (uint32_t)P(child_penalty) / 100;
    p->prio = effective_prio(m, p);
  }
  if (P(child_placement))
    o1_wake_child_smart(m, d, parent, p);
  else
    activate_task(m, d, p, NULL);  /* a fork is not a wakeup by a waker: no back-boost */
}

/* sys_sched_yield (§5.8): a normal task to the expired array. */
static void yield_o1(const psModel *m, psData *d, psTask *p) {
  o1_runqueue *rq = o1_rq(m, d, p->cpu);
  int array = o1_array(p);
  o1_dequeue_task(m, d, p);
  o1_enqueue_task(m, d, p, o1_rt_task(p) ? array : !rq->active);
  ps_resched_cpu(d, p->cpu);
}

/* ---- tables ---- */

static const psParamInfo o1_params[] = {
    O1_PARAMS(PS_PARAM_ROW)
};

#define TF(name, type, doc) PS_FIELD(o1_task, name, type, doc)
static const psFieldInfo o1_task_fields[] = {
    O1_SCHED_FIELD_INFO(o1_task),
    TF(nr_expired, PS_F_I64, "expiries into the expired array"),
    TF(nr_reinserted, PS_F_I64, "expiries reinserted into the active array (interactive)"),
};

#define RF(name, type, doc) PS_FIELD(o1_runqueue, name, type, doc)
static const psFieldInfo o1_rq_fields[] = {
    O1_RQ_FIELD_INFO,
    RF(active, PS_F_I32, "index of the active array"),
    RF(expired_timestamp, PS_F_U32, "jiffies of the first expiry since the last array switch"),
    RF(nr_array_switches, PS_F_I64, "active/expired swaps"),
};

#define U32MAX 4294967295LL
static const psFormula o1_formulas[] = {
    {"effective_prio", "static_prio, sleep_avg", 2, {100, 0}, {139, U32MAX}, f_effective_prio,
     "prio of a normal task: static_prio minus a -5..+5 bonus from sleep_avg"},
    {"task_timeslice", "static_prio", 1, {100}, {139}, f_task_timeslice,
     "timeslice in ticks: MIN + (MAX - MIN) * (139 - static_prio) / 39"},
    {"task_interactive", "prio, static_prio", 2, {0, 100}, {140, 139}, f_task_interactive,
     "TASK_INTERACTIVE: prio <= static_prio - DELTA(nice)"},
    {"expired_starving", "expired_timestamp, jiffies, nr_running", 3, {0, 0, 0},
     {U32MAX, U32MAX, U32MAX}, f_expired_starving,
     "EXPIRED_STARVING: the expired array has waited STARVATION_LIMIT * nr_running + 1 ticks"},
};

static const char *const o1_headline[] = {"sleep_avg", NULL};

/* Fact sheet §1: the version table, row by row. */
static const psOverride o1_bk4[] = {
    {"max_timeslice", 200},        {"child_penalty", 50},
    {"max_sleep_avg", 10000},      {"starvation_limit", 10000},
    {"sleep_credit_rt", 1},        {"wakeup_prio_if_changed", 1},
    {"waker_bonus", 1},            {"sync_wakeup_credit", 0},
    {"pull_equal_prio_preempt", 1},{"child_placement", 1},
    {"tick_decay_rt", 1},          {"fork_penalize_rt", 1},
    {"setscheduler_activate", 0},  {"starvation_limit_guard", 1},
    {NULL, 0},
};

/* 2.5.65 = bk4 plus Ingo's C4 (the sleep_time - 1 credit) */
static const psOverride o1_65[] = {{"sleep_credit_minus_one", 1}, {NULL, 0}};

extern const psPolicy ps_policy_o1;
static const psPreset o1_presets[] = {
    {"linux-2.5.64", &ps_policy_o1, {NULL}, "vanilla 2.5.64 O(1) scheduler"},
    {"linux-2.5.64-bk4", &ps_policy_o1, {o1_bk4},
     "2.5.64-bk4: Ingo's interactivity changes and Linus's waker bonus (back-boost)"},
    {"linux-2.5.65", &ps_policy_o1, {o1_bk4, o1_65},
     "2.5.65: bk4 plus the sleep_time - 1 credit fix (C4)"},
};

static const o1_family o1_fam = {
    .max_prio = MAX_PRIO,
    .lru = 0,
    .expired_used = 1,
    .p_cache_decay_ticks = O1_cache_decay_ticks,
    .p_max_timeslice = O1_max_timeslice,
    .p_exit_weight = O1_exit_weight,
    .p_max_sleep_avg = O1_max_sleep_avg,
    .p_pull_equal_prio_preempt = O1_pull_equal_prio_preempt,
    .p_sync_wakeup_credit = O1_sync_wakeup_credit,
    .p_setscheduler_activate = O1_setscheduler_activate,
    .p_balance_prio_avg = -1,
    .effective_prio = effective_prio,
    .activate_task = activate_task,
};

_Static_assert(sizeof(o1_task) <= PS_TASK_PRIV, "o1_task must fit psTask.priv");
_Static_assert(offsetof(o1_task, sched) == 0, "the family's shared fields come first");
_Static_assert(O1_NPARAMS <= PS_MAX_PARAMS, "too many parameters");

const psPolicy ps_policy_o1 = {
    .name = "o1",
    .doc = "the Linux 2.5 O(1) scheduler (2.5.64, 2.5.64-bk4, 2.5.65)",
    PS_POLICY_TABLES(o1),
    .rq_size = sizeof(o1_runqueue),
    .rq_per_cpu = sizeof(uint32_t), /* prev_cpu_load[] */
    .max_prio = MAX_PRIO,
    .headline = o1_headline,
    O1_FAMILY_QUEUE_COLUMNS,
    .family = &o1_fam,
    .hooks = {
        O1_FAMILY_HOOKS,
        .wakeup = wakeup_o1,
        .check_init = o1_check_init,
        .check = o1_check,
        .retune = o1_retune,
        .configure = configure_o1,
        .task_spawn = task_spawn_o1,
        .task_fork = task_fork_o1,
        .tick = tick_o1,
        .tick_batch = tick_batch_o1,
        .yield = yield_o1,
    },
    .tick_batch_local = PS_TICK_BATCH_TRUSTED,
};
