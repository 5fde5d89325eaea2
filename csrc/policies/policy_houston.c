/* Jim Houston's self-tuning scheduler, "[PATCH] self tuning scheduler",
 * 10 Mar 2003 (docs/schedulers/houston.md; the patch itself: Jim Houston,
 * LKML), against linux-2.5.64-bk4.  Everything the patch does not touch is bk4
 * (docs/schedulers/o1.md §1, bk4 column) and lives in the family's shared code
 * (o1_family.c); this file holds the patch's hunks, and the integer math
 * is houston_math.c.
 *
 * Faithful quirks worth knowing:
 * - the sleep credit is measured from run_avg_timestamp, which the tick
 *   moves every tick a task runs, so it equals the time since the task last
 *   ran (or was re-evaluated by fairness_update), not since schedule();
 * - effective_prio has no RT check: the back-boost requeue of an RT waker
 *   (try_to_wake_up's requeue_waker) gives it a normal priority;
 * - the expired array is never filled any more, but schedule() still swaps
 *   arrays when active is empty (a no-op here). */
#include <stdio.h>

#include "houston_math.h"
#include "o1_family.h"

#define MAX_RT_PRIO HOUSTON_MAX_RT_PRIO
#define MAX_PRIO HOUSTON_MAX_PRIO
#define NICE_TO_PRIO(n) HOUSTON_NICE_TO_PRIO(n)

#define H_PARAMS(X)                                                                             \
  X(run_avg_halflife, 5000, 1, HOUSTON_MAX_HALF_LIFE, 1, "ticks",                               \
    "half-life of the run_avg decay (5*HZ)")                                                    \
  X(prio_avg_halflife, 2000, 1, HOUSTON_MAX_HALF_LIFE, 1, "ticks",                              \
    "half-life of the runqueue's prio_avg (2*HZ)")                                              \
  X(nice_const, 6409, 1, HOUSTON_MAX_NICE_CONST, 0, "1/65536",                                  \
    "log(50)/40 in 16.16 fixed point: nice -20 vs +19 gets 50:1; exp_nice_const is derived")    \
  X(prio_offset, 5, -40, 40, 0, "levels", "prio_offset added to static_prio in effective_prio") \
  X(sleep_avg_nice, 10, 0, 100000, 0, "levels",                                                 \
    "largest priority boost from sleep_avg (a full sleep_avg = nice -10)")                      \
  X(max_run_avg, 262144, 16384, 536870912, 0, "", "MAX_RUN_AVG, a power of two (256*1024)")      \
  X(min_run_avg, 4, 0, 536870912, 0, "", "MIN_RUN_AVG: floor of a decayed run_avg")              \
  X(fairness_ticks, 125, 1, 1000000, 1, "ticks",                                                \
    "FAIRNESS_TICKS: fairness_update runs when jiffies is a multiple (HZ/8)")                   \
  X(fairness_min, 4, 0, 1000000, 0, "tasks", "FAIRNESS_MIN: tasks fairness_update may visit")    \
  X(max_timeslice, 200, 1, 1000000, 1, "ticks", "MAX_TIMESLICE (bk4): SCHED_RR slices, exit")    \
  X(min_timeslice, 10, 1, 1000000, 1, "ticks", "MIN_TIMESLICE: SCHED_RR slices")                 \
  X(max_sleep_avg, 10000, 1, 1000000, 1, "ticks", "MAX_SLEEP_AVG (10*HZ, bk4)")                  \
  X(child_penalty, 50, 0, 100, 0, "%", "CHILD_PENALTY (bk4)")                                    \
  X(parent_penalty, 100, 0, 100, 0, "%", "PARENT_PENALTY")                                       \
  X(exit_weight, 3, 0, 1000, 0, "", "EXIT_WEIGHT")                                               \
  X(waker_bonus, 1, 0, 1, 0, "bool", "bk4's back-boost of the waker, kept by the patch")         \
  O1_BALANCE_PARAMS(X)                                                                          \
  X(balance_prio_avg, 0, 0, 1, 0, "bool",                                                       \
    "SMP, an extension beyond the patch: balance on the runqueues' prio_avg (the mail's "       \
    "suggestion) instead of their length")                                                      \
  X(prio_avg_imbalance, 2048, 0, 81920, 0, "1/1024 level",                                      \
    "with balance_prio_avg: how much higher the busiest CPU's prio_avg must be")

enum {
#define H_ENUM(name, ...) H_##name,
  H_PARAMS(H_ENUM)
#undef H_ENUM
  H_NPARAMS
};

#define P(name) (m->param[H_##name])
/* The constants a model of this policy runs with (in psModel.derived). */
#define HC(m) ((const houston_const *)(m)->derived)

typedef struct h_task {
  o1_sched sched;            /* what the family shares (o1_family.h) */
  uint32_t run_avg;
  uint32_t run_avg_timestamp;
} h_task;

static inline h_task *H(psTask *p) { return (h_task *)p->priv; }

static int effective_prio(const psModel *m, psTask *p) {
  return houston_effective_prio(HC(m), H(p)->run_avg, p->static_prio, H(p)->sched.sleep_avg);
}

static int task_timeslice(const psModel *m, const psTask *p) {
  return houston_task_timeslice(HC(m), p->prio, p->static_prio, p->policy == PS_SCHED_RR);
}

/* ---- run averages (the patch's second block) ---- */

static void update_run_avg_sleeping(const psModel *m, psTask *p, uint32_t delta_time) {
  H(p)->run_avg = (uint32_t)houston_decay_value(HC(m), (int32_t)H(p)->run_avg,
                                                (int32_t)delta_time, HC(m)->run_avg_halflife);
}

static void update_run_avg_runable(const psModel *m, psData *d, psTask *p) {
  uint32_t delta_time = o1_jiffies(d) - H(p)->run_avg_timestamp;
  H(p)->run_avg_timestamp = o1_jiffies(d);
  update_run_avg_sleeping(m, p, delta_time);
}

/* The running task's run_avg at the tick of jiffy `now`. */
static void run_avg_at_tick(const psModel *m, psTask *p, uint32_t now) {
  const houston_const *c = HC(m);
  uint32_t delta_time = now - H(p)->run_avg_timestamp;
  H(p)->run_avg_timestamp = now;
  int32_t run_avg = houston_decay_value(c, (int32_t)H(p)->run_avg, (int32_t)delta_time,
                                        c->run_avg_halflife);
  run_avg += c->run_avg_increment;
  if (run_avg > c->max_run_avg) run_avg = c->max_run_avg;
  H(p)->run_avg = (uint32_t)run_avg;
}

static void update_run_avg_running(const psModel *m, psData *d, psTask *p) {
  run_avg_at_tick(m, p, o1_jiffies(d));
}

/* activate_task, bk4 with the patch's hunk: the sleep is measured from
 * run_avg_timestamp; run_avg decays over it, prio follows, and the slice is
 * cut to what the new prio allows.  Always inline: every wakeup runs it, in
 * the wakeup hook below. */
__attribute__((always_inline)) static inline int activate_task(const psModel *m, psData *d,
                                                               psTask *p, psTask *waker) {
  h_task *pt = H(p);
  uint32_t max = (uint32_t)P(max_sleep_avg);
  uint32_t sleep_time = o1_jiffies(d) - pt->run_avg_timestamp;
  int requeue_waker = 0;
  if (sleep_time) {
    pt->run_avg_timestamp = o1_jiffies(d);
    uint32_t sleep_avg = o1_credit_sleep(m, d, p, waker, sleep_time, max, (int)P(waker_bonus),
                                         &requeue_waker);
    pt->sched.sleep_avg = sleep_avg;
    if (!o1_rt_task(p)) {
      update_run_avg_sleeping(m, p, sleep_time);
      o1_set_prio(m, d, p, effective_prio(m, p));
      int time_slice = task_timeslice(m, p);
      if (p->time_slice > time_slice) p->time_slice = time_slice;
    }
  }
  o1_activate_plain(m, d, p);
  return requeue_waker;
}

/* try_to_wake_up's policy part, with this activate_task inline */
static int wakeup_h(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  if (o1_wakeup_begin(m, d, p, waker, sync)) return 0;
  return o1_wakeup_end(m, d, p, waker, activate_task(m, d, p, waker));
}

/* fairness_update: re-evaluate the tasks that have waited longest without
 * running, at most 1/8 of the active array (at least FAIRNESS_MIN). */
static void fairness_update(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = o1_rq(m, d, cpu);
  psPrioArray *active = &rq->arrays[rq->active];
  psTask *curr = ps_curr(d, cpu);
  int limit = active->nr_active / 8;
  if (limit < P(fairness_min)) limit = (int)P(fairness_min);
  for (int32_t i = active->lru_head; limit > 0 && i >= 0; limit--) {
    psTask *p = &d->task[i];
    if (o1_jiffies(d) - H(p)->run_avg_timestamp < (uint32_t)P(fairness_ticks)) break;
    update_run_avg_runable(m, d, p);
    int prio = effective_prio(m, p);
    /* the dequeue/enqueue reorder the list: take the next pointer first */
    i = psu_links(d->task, i)->lru_next;
    if (prio != p->prio) {
      o1_dequeue_task(m, d, p);
      o1_set_prio(m, d, p, prio);
      o1_enqueue_task(m, d, p, rq->active);
      ps_count_up(&rq->nr_fairness_requeues);
    }
    if (prio < curr->prio) ps_resched_cpu(d, cpu);
  }
}

/* ---- hooks ---- */

static int configure_h(psModel *m, char *err, int errlen) {
  houston_const *c = (houston_const *)m->derived;
  houston_default(c, m->hz);
  c->max_sleep_avg = (int32_t)P(max_sleep_avg);
  c->max_timeslice = (int32_t)P(max_timeslice);
  c->min_timeslice = (int32_t)P(min_timeslice);
  c->run_avg_halflife = (int32_t)P(run_avg_halflife);
  c->prio_avg_halflife = (int32_t)P(prio_avg_halflife);
  c->nice_const = (int32_t)P(nice_const);
  c->prio_offset = (int32_t)P(prio_offset);
  c->sleep_avg_nice = (int32_t)P(sleep_avg_nice);
  c->max_run_avg = (int32_t)P(max_run_avg);
  c->min_run_avg = (int32_t)P(min_run_avg);
  if (P(min_timeslice) > P(max_timeslice)) {
    snprintf(err, errlen, "min_timeslice=%lld must not exceed max_timeslice=%lld",
             (long long)P(min_timeslice), (long long)P(max_timeslice));
    return -1;
  }
  return houston_derive(c, err, errlen);
}

/* A new task's run_avg: run effective_prio backwards from the runqueue's
 * prio_avg (wake_up_forked_process). */
static void estimate_new_run_avg(const psModel *m, psData *d, psTask *p) {
  const houston_const *c = HC(m);
  int i = (int)(o1_rq(m, d, p->cpu)->prio_avg / HOUSTON_SF_PRIO_AVG);
  i -= MAX_PRIO - p->static_prio - c->prio_offset;
  H(p)->run_avg = (uint32_t)houston_estimate_run_avg(c, i, c->max_run_avg);
  H(p)->run_avg_timestamp = o1_jiffies(d);
}

/* sim.spawn: like a forked child without a parent: sleep_avg 0 (or as set),
 * run_avg estimated from prio_avg, prio = effective_prio, the slice of that
 * prio, a plain enqueue. */
static int task_spawn_h(const psModel *m, psData *d, psTask *p) {
  h_task *pt = H(p);
  psu_links_clear(p);
  p->static_prio = NICE_TO_PRIO(p->nice);
  pt->sched.last_run = o1_jiffies(d);
  if (p->policy == PS_SCHED_NORMAL) {
    if (!pt->run_avg) estimate_new_run_avg(m, d, p);
    else pt->run_avg_timestamp = o1_jiffies(d);
    p->prio = effective_prio(m, p);
  } else {
    pt->run_avg_timestamp = o1_jiffies(d);
    p->prio = MAX_RT_PRIO - 1 - p->rt_priority;
  }
  p->time_slice = task_timeslice(m, p);
  o1_activate_plain(m, d, p);
  return p->prio < ps_curr(d, p->cpu)->prio;
}

/* scheduler_tick with the patch: prio_avg every tick, run_avg of the
 * running task, no expired array, fairness_update every FAIRNESS_TICKS. */
static void tick_h(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = o1_rq(m, d, cpu);
  psTask *p = ps_curr(d, cpu);
  h_task *pt = H(p);
  rq->prio_avg = houston_update_prio_avg(HC(m), rq->prio_avg, p->prio);
  if (p->is_idle) {
    o1_rebalance_tick(m, d, cpu, 1);
    return;
  }
  if (o1_array(p) != rq->active) {
    ps_resched_cpu(d, cpu);
    goto out;
  }
  if (pt->sched.sleep_avg) pt->sched.sleep_avg--;
  update_run_avg_running(m, d, p);
  if (o1_rt_task(p)) {
    o1_tick_rt(m, d, cpu, p, task_timeslice(m, p));
    goto out;
  }
  if (!--p->time_slice) {
    o1_dequeue_task(m, d, p);
    ps_resched_cpu(d, cpu);
    o1_set_prio(m, d, p, effective_prio(m, p));
    p->time_slice = task_timeslice(m, p);
    pt->sched.first_time_slice = 0;
    o1_enqueue_task(m, d, p, rq->active);
    ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 0);
  }
out:
  if (d->jiffies % (uint64_t)P(fairness_ticks) == 0) fairness_update(m, d, cpu);
  o1_rebalance_tick(m, d, cpu, 0);
}

/* k ticks of tick_h in one call, as many as leave a normal task in the
 * active array with time to run and come before the next fairness_update:
 * each updates prio_avg, sleep_avg and run_avg as tick_h does, at its own
 * jiffy; the tick that ends the slice or runs fairness_update is left to
 * tick_h, and so is the tick that balances. */
static int64_t tick_batch_h(const psModel *m, psData *d, int cpu, int64_t k, int apply) {
  o1_runqueue *rq = o1_rq(m, d, cpu);
  psTask *p = ps_curr(d, cpu);
  if (o1_rt_task(p) || o1_array(p) != rq->active) return 0;
  uint64_t every = (uint64_t)P(fairness_ticks);
  int64_t n = p->time_slice - 1, before = o1_ticks_before_rebalance(m, d, cpu);
  if (n > k) n = k;
  if (n > (int64_t)(every - 1 - d->jiffies % every)) n = (int64_t)(every - 1 - d->jiffies % every);
  if (n > before) n = before;
  if (!apply) return n > 0 ? n : 0;
  h_task *pt = H(p);
  for (int64_t i = 1; i <= n; i++) {
    rq->prio_avg = houston_update_prio_avg(HC(m), rq->prio_avg, p->prio);
    if (pt->sched.sleep_avg) pt->sched.sleep_avg--;
    run_avg_at_tick(m, p, (uint32_t)(d->jiffies + (uint64_t)i));
  }
  if (n > 0) p->time_slice -= (int)n;
  return n > 0 ? n : 0;
}

/* copy_process (bk4) and wake_up_forked_process with the patch */
static void task_fork_h(const psModel *m, psData *d, psTask *parent, psTask *p) {
  h_task *pt = H(p), *ppt = H(parent);
  if (o1_fork_split(d, parent, p)) tick_h(m, d, parent->cpu);
  p->cpu = parent->cpu;
  ppt->sched.sleep_avg = ppt->sched.sleep_avg * (uint32_t)P(parent_penalty) / 100;
  pt->sched.sleep_avg = pt->sched.sleep_avg * (uint32_t)P(child_penalty) / 100;
  estimate_new_run_avg(m, d, p);
  p->prio = effective_prio(m, p);
  o1_wake_child_smart(m, d, parent, p);
}

/* The family's invariants, and run_avg_timestamp, a 32-bit jiffy like
 * last_run, not ahead of the jiffies before they first wrap: the sleep
 * credit is measured from it (a crafted one ahead overflowed sleep_avg). */
static int check_h(const psModel *m, const psData *d, char *err, int errlen) {
  if (o1_check(m, d, err, errlen)) return -1;
  for (int32_t i = m->ncpu; i < d->ntask && d->jiffies <= UINT32_MAX; i++) {
    const psTask *t = &d->task[i];
    const h_task *h = (const h_task *)t->priv;
    if (t->pid && h->run_avg_timestamp > d->jiffies) {
      snprintf(err, errlen, "pid %d: run_avg_timestamp %u is after jiffies %llu", t->pid,
               h->run_avg_timestamp, (unsigned long long)d->jiffies);
      return -1;
    }
  }
  return 0;
}

/* spawn's init values: the family's, and run_avg within decay_value's
 * domain, 0..max_run_avg (houston_math.h) */
static int check_init_h(const psModel *m, const psTask *t, char *err, int errlen) {
  if (o1_check_init(m, t, err, errlen)) return -1;
  uint32_t run_avg = ((const h_task *)t->priv)->run_avg;
  if (run_avg > (uint32_t)HC(m)->max_run_avg) {
    snprintf(err, errlen, "run_avg=%u is outside the allowed range 0..%d (max_run_avg)", run_avg,
             HC(m)->max_run_avg);
    return -1;
  }
  return 0;
}

/* A parameter change: the family's clamp, and run_avg clamped to a
 * lowered max_run_avg, as the patch's own updates cap it. */
static void retune_h(const psModel *m, psData *d) {
  o1_retune(m, d);
  for (int32_t i = 0; i < d->ntask; i++) {
    h_task *h = (h_task *)d->task[i].priv;
    if (h->run_avg > (uint32_t)HC(m)->max_run_avg) h->run_avg = (uint32_t)HC(m)->max_run_avg;
  }
}

/* sys_sched_yield with the patch: the worst prio, run_avg up by a quarter,
 * back into the same array. */
static void yield_h(const psModel *m, psData *d, psTask *p) {
  int array = o1_array(p);
  o1_dequeue_task(m, d, p);
  if (!o1_rt_task(p)) {
    o1_set_prio(m, d, p, MAX_PRIO - 1);
    h_task *pt = H(p);
    pt->run_avg += pt->run_avg / 4;
    if (pt->run_avg > (uint32_t)HC(m)->max_run_avg) pt->run_avg = (uint32_t)HC(m)->max_run_avg;
  }
  o1_enqueue_task(m, d, p, array);
  ps_resched_cpu(d, p->cpu);
}

static const psParamInfo h_params[] = {
    H_PARAMS(PS_PARAM_ROW)
};

#define TF(name, type, doc) PS_FIELD(h_task, name, type, doc)
static const psFieldInfo h_task_fields[] = {
    O1_SCHED_FIELD_INFO(h_task),
    TF(run_avg, PS_F_U32, "decaying average of CPU use, 0..max_run_avg"),
    TF(run_avg_timestamp, PS_F_U32, "jiffies of run_avg's last update"),
};

#define RF(name, type, doc) PS_FIELD(o1_runqueue, name, type, doc)
static const psFieldInfo h_rq_fields[] = {
    O1_RQ_FIELD_INFO,
    RF(prio_avg, PS_F_U32, "filtered (MAX_PRIO - prio) of the running tasks, x 1024"),
    RF(nr_fairness_requeues, PS_F_I64, "priority changes made by fairness_update"),
};

/* Every constant of the patch's math, primary and derived (pysched.houston.constants). */
#define DF(f) {#f, PS_F_I32, offsetof(houston_const, f), "", PS_AT_MODEL},
static const psFieldInfo h_derived_fields[] = {HOUSTON_PRIMARY_FIELDS(DF) HOUSTON_DERIVED_FIELDS(DF)};
#undef DF

/* The math as Python sees it (pysched.houston), on the constants of the
 * model; Python checks each argument's domain first (houston_math.h). */
static int64_t f_decay_value(const psModel *m, const int64_t *a) {
  return houston_decay_value(HC(m), (int32_t)a[0], (int32_t)a[1], (int32_t)a[2]);
}
static int64_t f_get_increment(const psModel *m, const int64_t *a) {
  return houston_get_increment(HC(m), (int32_t)a[0], (int32_t)a[1]);
}
static int64_t f_effective_prio(const psModel *m, const int64_t *a) {
  return houston_effective_prio(HC(m), (uint32_t)a[0], (int32_t)a[1], (uint32_t)a[2]);
}
static int64_t f_estimate_run_avg(const psModel *m, const int64_t *a) {
  return houston_estimate_run_avg(HC(m), (int32_t)a[0], (int32_t)a[1]);
}
static int64_t f_task_timeslice(const psModel *m, const int64_t *a) {
  return houston_task_timeslice(HC(m), (int32_t)a[0], (int32_t)a[1], (int)a[2]);
}
static int64_t f_update_prio_avg(const psModel *m, const int64_t *a) {
  return houston_update_prio_avg(HC(m), (uint32_t)a[0], (int32_t)a[1]);
}

#define I32 2147483647LL
static const psFormula h_formulas[] = {
    {"decay_value", "value, delta_time, half_life", 3, {-I32 - 1, -I32 - 1, -I32 - 1},
     {I32, I32, I32}, f_decay_value, "value * 0.5**(delta_time/half_life) by the patch's shifts"},
    {"get_increment", "half_life, max", 2, {-I32 - 1, -I32 - 1}, {I32, I32}, f_get_increment,
     "the per-tick increment that makes a constant runner settle at max"},
    {"effective_prio", "run_avg, static_prio, sleep_avg", 3, {0, -I32 - 1, 0},
     {4294967295LL, I32, 4294967295LL}, f_effective_prio, "the patch's logarithmic prio"},
    {"estimate_run_avg", "prio_diff, max", 2, {-I32 - 1, -I32 - 1}, {I32, I32},
     f_estimate_run_avg, "run_avg that gives a prio_diff (effective_prio backwards)"},
    {"task_timeslice", "prio, static_prio, rr", 3, {-I32 - 1, -I32 - 1, 0}, {I32, I32, 1},
     f_task_timeslice, "timeslice by prio (SCHED_RR by static_prio)"},
    {"update_prio_avg", "prio_avg, prio", 2, {0, -I32 - 1}, {4294967295LL, I32},
     f_update_prio_avg, "the runqueue's prio_avg after one tick of a task at prio"},
};

static const char *const h_headline[] = {"run_avg", "sleep_avg", NULL};

extern const psPolicy ps_policy_houston;
static const psPreset h_presets[] = {
    {"houston-2003", &ps_policy_houston, {NULL},
     "Jim Houston's self-tuning scheduler (10 Mar 2003), on 2.5.64-bk4"},
};

static const o1_family h_fam = {
    .max_prio = MAX_PRIO,
    .lru = 1,
    .expired_used = 0,
    .p_cache_decay_ticks = H_cache_decay_ticks,
    .p_max_timeslice = H_max_timeslice,
    .p_exit_weight = H_exit_weight,
    .p_max_sleep_avg = H_max_sleep_avg,
    .p_pull_equal_prio_preempt = -1,
    .p_sync_wakeup_credit = -1,
    .p_setscheduler_activate = -1,
    .p_balance_prio_avg = H_balance_prio_avg,
    .effective_prio = effective_prio,
    .activate_task = activate_task,
};

_Static_assert(sizeof(h_task) <= PS_TASK_PRIV, "h_task must fit psTask.priv");
_Static_assert(offsetof(h_task, sched) == 0, "the family's shared fields come first");
_Static_assert(sizeof(houston_const) <= PS_DERIVED_BYTES, "houston_const must fit psModel.derived");
_Static_assert(H_NPARAMS <= PS_MAX_PARAMS, "too many parameters");
_Static_assert(H_prio_avg_imbalance == H_balance_prio_avg + 1, "o1_family reads them as a pair");

const psPolicy ps_policy_houston = {
    .name = "houston",
    .doc = "Jim Houston's self-tuning scheduler (2003), on 2.5.64-bk4",
    PS_POLICY_TABLES(h),
    .derived_fields = h_derived_fields,
    .nderived_fields = PS_NELEM(h_derived_fields),
    .rq_size = sizeof(o1_runqueue),
    .rq_per_cpu = sizeof(uint32_t), /* prev_cpu_load[] */
    .max_prio = MAX_PRIO,
    .headline = h_headline,
    O1_FAMILY_QUEUE_COLUMNS,
    .family = &h_fam,
    .hooks = {
        O1_FAMILY_HOOKS,
        .wakeup = wakeup_h,
        .check_init = check_init_h,
        .check = check_h,
        .retune = retune_h,
        .configure = configure_h,
        .task_spawn = task_spawn_h,
        .task_fork = task_fork_h,
        .tick = tick_h,
        .tick_batch = tick_batch_h,
        .yield = yield_h,
    },
};
