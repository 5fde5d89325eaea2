/* EEVDF, the fair class since Linux 6.6: Earliest Eligible Virtual
 * Deadline First over the weighted average vruntime.  One state machine for
 * 6.6 and 6.12 whose differences are parameters (the scheduler features of
 * kernel/sched/features.h and what a version honours); what it shares with
 * CFS is fair_common.h's (fair_common.c, fair_hooks.c, fair_invariants.c).
 * Function names are fair.c's.
 *
 * Sources: 6.12.y's fair.c (avg_vruntime, entity_lag / update_entity_lag,
 * vruntime_eligible, pick_eevdf, update_deadline, did_preempt_short,
 * do_preempt_short, update_curr), the PREEMPT_SHORT commit 85e511df3cec
 * ("sched/eevdf: Allow shorter slices to wakeup-preempt", 6.12) and its
 * fix "Fix wakeup-preempt by checking cfs_rq->nr_running" (6.12-rc),
 * the RUN_TO_PARITY commit 63304558ba5d ("sched/eevdf: Curb
 * wakeup-preemption", 6.6), Daniel Jordan's report "Preserve
 * PLACE_DEADLINE_INITIAL deadline" (Oct 2023: in 6.6 the enqueue of
 * wake_up_new_task re-places a new task without ENQUEUE_INITIAL, so its
 * halved deadline is lost) and Zhang Qiao's fix that passes ENQUEUE_INITIAL
 * there (2024, before 6.12); docs/schedulers/eevdf.md.
 *
 * Deviations, stated: the tree is sorted by deadline in both versions (6.6
 * sorted by vruntime with a min_deadline augment; the pick is the same
 * eligible earliest deadline, but among equal deadlines 6.6 took whichever
 * its tree's shape met first, here the first queued); the RUN_TO_PARITY
 * copy of the deadline lives in the runqueue (fair_common.h).
 *
 * Over 500 lines because it is one member's whole fair.c (every per-level
 * function of the class, its parameters, fields, formulas and presets);
 * what it shares with the other member, the task groups' walks included,
 * is in fair_*.c. */
#include <stdio.h>
#include <string.h>

#include "fair_common.h"
#include "watch.h"

#define EEVDF_PARAMS(X)                                                                           \
  X(sched_base_slice_ns, 0, 0, 1000000000, 0, "ns",                                               \
    "sysctl_sched_base_slice (debugfs sched/base_slice_ns): the request r_i of a task without "   \
    "its own slice; 0: the default, 0.75 ms x factor (update_sysctl; 0.70 ms from 6.15); else "   \
    "1 us .. 1 s as written")                                                                     \
  X(sched_tunable_scaling, 1, 0, 2, 0, "enum",                                                    \
    "SCHED_TUNABLESCALING, the factor of the default: 0 none, 1 log (x 1 + ilog2(min(ncpus, 8))), " \
    "2 linear (x min(ncpus, 8))")                                                                 \
  X(place_lag, 1, 0, 1, 0, "bool",                                                                \
    "PLACE_LAG: an enqueued task keeps the lag it left with, scaled by (W + w_i) / W")            \
  X(place_deadline_initial, 1, 0, 1, 0, "bool",                                                   \
    "PLACE_DEADLINE_INITIAL as it takes effect: a new task's first deadline is half a slice "     \
    "away (6.6 has the feature on, but wake_up_new_task's enqueue re-places the task without "    \
    "ENQUEUE_INITIAL, so there it is a full slice)")                                              \
  X(run_to_parity, 1, 0, 1, 0, "bool",                                                            \
    "RUN_TO_PARITY: once picked, a task runs until it is no longer eligible or gets a new "       \
    "deadline, whatever wakes up")                                                                \
  X(preempt_short, 1, 0, 1, 0, "bool",                                                            \
    "PREEMPT_SHORT (6.12): a waking task with a shorter slice, eligible, cancels the current "    \
    "task's RUN_TO_PARITY protection")                                                            \
  X(delay_dequeue, 1, 0, 1, 0, "bool",                                                            \
    "DELAY_DEQUEUE (6.12): a task that sleeps while not eligible stays queued, burning its "      \
    "negative lag, until it is picked (then it leaves) or wakes")                                 \
  X(delay_zero, 1, 0, 1, 0, "bool",                                                               \
    "DELAY_ZERO (6.12): a delayed entity leaves or is woken with its lag clipped to at most 0")  \
  X(place_rel_deadline, 1, 0, 1, 0, "bool",                                                       \
    "PLACE_REL_DEADLINE (6.12): a task dequeued without sleeping (migration, renice) keeps its "  \
    "deadline relative to its vruntime")                                                          \
  X(custom_slices, 1, 0, 1, 0, "bool",                                                            \
    "sched_attr.sched_runtime sets a task's slice (6.12): the `slice` given at spawn, 0.1..100 "  \
    "ms; 0: every task runs with the base slice (6.6)")                                           \
  X(wakeup_preemption, 1, 0, 1, 0, "bool", "WAKEUP_PREEMPTION: a waking task may preempt")        \
  FAIR_BALANCE_PARAMS(X)                                                                          \
  FAIR_TIMER_PARAMS(X)                                                                            \
  FAIR_GROUP_PARAMS(X)

enum {
#define EV_ENUM(name, ...) EV_##name,
  EEVDF_PARAMS(EV_ENUM)
#undef EV_ENUM
  EV_NPARAMS
};

#define P(name) (m->param[EV_##name])
/* sysctl_sched_base_slice, scaled for this machine */
#define BASE_SLICE(m) ((uint64_t)FD(m)->member[0])
/* sched_attr.sched_runtime's clamp (core.c __setscheduler_params, 6.12) */
#define SLICE_MIN 100000
#define SLICE_MAX 100000000

#define se_of(d, i) fair_ent(m, d, i)
static int eligible(const psModel *m, psData *d, int q, int32_t i) {
  return fair_vruntime_eligible(m, d, q, se_of(d, i)->vruntime);
}
/* entity_before: (s64)(a->deadline - b->deadline) < 0 */
static int entity_before(const fair_se *a, const fair_se *b) { return vdiff(a->deadline, b->deadline) < 0; }

/* se->vlag = v; the kernel's write to curr's vlag also ends its
 * RUN_TO_PARITY protection (the copy it held) */
static void set_vlag(const psModel *m, psData *d, int q, int32_t i, int64_t v) {
  fair_rq *rq = CFSQ(m, d, q);
  se_of(d, i)->vlag = v;
  if (rq->curr == i) rq->protect = 0;
}

/* entity_lag: V - v_i clamped to calc_delta_fair(max(2 * slice, TICK_NSEC)),
 * the limit of 6.6 (update_entity_lag) and 6.12 (entity_lag, read in
 * 6.12.y); newer kernels may bound it differently (docs/schedulers/eevdf.md §5) */
static int64_t entity_lag(const psModel *m, uint64_t avruntime, const fair_se *se) {
  int64_t vlag = vdiff(avruntime, se->vruntime);
  uint64_t r = 2 * se->slice > (uint64_t)m->tick_ns ? 2 * se->slice : (uint64_t)m->tick_ns;
  int64_t limit = (int64_t)fair_calc_delta_fair(r, se->weight);
  return vlag < -limit ? -limit : vlag > limit ? limit : vlag;
}

static void update_entity_lag(const psModel *m, psData *d, int q, int32_t i) {
  uint64_t avruntime = fair_avg_vruntime(m, d, q);
  /* a watch reads the lag before the clamp (fair_watch.c) */
  if (m->watch & PS_WATCH_LAG) fair_watch_entity_lag(m, d, q, i, avruntime);
  set_vlag(m, d, q, i, entity_lag(m, avruntime, se_of(d, i)));
}

/* place_entity: vruntime from V and the lag, then the deadline */
static void place_entity(const psModel *m, psData *d, int q, int32_t i, int flags) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  uint64_t vruntime = fair_avg_vruntime(m, d, q);
  int64_t lag = 0;
  if (!se->custom_slice) se->slice = BASE_SLICE(m);
  uint64_t vslice = fair_calc_delta_fair(se->slice, se->weight);
  if (P(place_lag) && rq->nr_running) {
    int64_t load = rq->avg_load;
    if (rq->curr >= 0 && rq->curr_on_rq) load += se_of(d, rq->curr)->weight;
    /* vl_i = (W + w_i) * vl'_i / W */
    lag = s64_mul(se->vlag, load + se->weight);
    if (!load) load = 1;
    lag /= load;
  }
  se->vruntime = vruntime - (uint64_t)lag;
  if (se->rel_deadline) {
    se->deadline += se->vruntime;
    se->rel_deadline = 0;
    return;
  }
  /* when joining the competition, the existing tasks are on average
   * halfway through their slice: start new ones off with half a slice */
  if (P(place_deadline_initial) && (flags & ENQUEUE_INITIAL)) vslice /= 2;
  se->deadline = se->vruntime + vslice;  /* vd_i = ve_i + r_i / w_i */
}

/* update_deadline: a task that reached its deadline gets a new request */
static int update_deadline(const psModel *m, fair_se *se) {
  if (vdiff(se->vruntime, se->deadline) < 0) return 0;
  if (!se->custom_slice) se->slice = BASE_SLICE(m);
  se->deadline = se->vruntime + fair_calc_delta_fair(se->slice, se->weight);
  return 1;
}

static int did_preempt_short(const psModel *m, psData *d, int q, int32_t curr) {
  if (!P(preempt_short)) return 0;
  if (fair_protected(CFSQ(m, d, q), se_of(d, curr))) return 0;
  return !eligible(m, d, q, curr);
}

static int do_preempt_short(const psModel *m, psData *d, int q, int32_t pse, int32_t se) {
  if (!P(preempt_short)) return 0;
  if (se_of(d, pse)->slice >= se_of(d, se)->slice) return 0;
  if (!eligible(m, d, q, pse)) return 0;
  if (entity_before(se_of(d, pse), se_of(d, se))) return 1;
  return !eligible(m, d, q, se);
}

/* update_curr: charge the running entity, move its deadline, and
 * reschedule when its request is done (or PREEMPT_SHORT took its
 * protection and it is no longer eligible).  6.6 reschedules in
 * update_deadline when nr_running > 1, 6.12 here unless nr_running == 1;
 * nr_running is never 0 with time to charge.  A group entity is charged
 * the same way (update_curr_se). */
static void update_curr(const psModel *m, psData *d, int q) {
  fair_rq *rq = CFSQ(m, d, q);
  if (rq->curr < 0) return;
  fair_se *curr = se_of(d, rq->curr);
  int64_t delta = d->now_ns - (int64_t)curr->exec_start;
  if (delta <= 0) return;
  curr->exec_start = (uint64_t)d->now_ns;
  curr->sum_exec_runtime += (uint64_t)delta;
  curr->vruntime += fair_calc_delta_fair((uint64_t)delta, curr->weight);
  int resched = update_deadline(m, curr);
  fair_update_min_vruntime(m, d, q, 1);
  if (rq->nr_running <= 1) return;
  if (resched || did_preempt_short(m, d, q, rq->curr)) {
    int cpu = fair_q_cpu(q);
    psTask *t = fair_task_of(d, q, rq->curr);
    ps_resched_cpu(d, cpu);
    ps_log(m, d, PS_EVT_EXPIRE, cpu, t, -1, t->prio, 0);
  }
}

/* pick_eevdf: the eligible entity with the earliest virtual deadline, the
 * running one kept while RUN_TO_PARITY protects it */
static int32_t pick_eevdf(const psModel *m, psData *d, int q) {
  fair_rq *rq = CFSQ(m, d, q);
  int32_t curr = rq->curr >= 0 && rq->curr_on_rq ? rq->curr : -1;
  int32_t best = -1;
  if (rq->nr_running == 1) return curr >= 0 ? curr : rq->leftmost;
  if (curr >= 0 && !eligible(m, d, q, curr)) curr = -1;
  if (P(run_to_parity) && curr >= 0 && fair_protected(rq, se_of(d, curr))) return curr;
  if (rq->leftmost >= 0 && eligible(m, d, q, rq->leftmost)) {
    best = rq->leftmost;
  } else {
    /* the heap search: the left subtree first whenever it holds an
     * eligible entity (its min_vruntime is eligible) */
    for (int32_t node = rq->root; node >= 0;) {
      int32_t left = se_of(d, node)->node.left;
      if (left >= 0 && fair_vruntime_eligible(m, d, q, se_of(d, left)->min_vruntime)) {
        node = left;
        continue;
      }
      if (eligible(m, d, q, node)) {
        best = node;
        break;
      }
      node = se_of(d, node)->node.right;
    }
  }
  if (best < 0 || (curr >= 0 && entity_before(se_of(d, curr), se_of(d, best)))) best = curr;
  return best >= 0 ? best : rq->leftmost;
}

/* ---- the class ---- */

/* enqueue_entity (6.12): update_cfs_group between update_curr and the
 * placement of an entity not running */
static void enqueue_entity(const psModel *m, psData *d, int q, int32_t i, int flags) {
  fair_rq *rq = CFSQ(m, d, q);
  int curr = rq->curr == i;
  if (curr) place_entity(m, d, q, i, flags);
  update_curr(m, d, q);
  fair_update_cfs_group(m, d, i);
  if (!curr) place_entity(m, d, q, i, flags);
  fair_account_enqueue(m, d, q, i);
  if (flags & ENQUEUE_MIGRATED) se_of(d, i)->exec_start = 0;
  if (curr)
    rq->curr_on_rq = 1;
  else
    fair_tree_enqueue(m, d, q, i);
  fair_set_on_rq(m, d, i, 1);
}

static int dequeue_entity(const psModel *m, psData *d, int q, int32_t i, int flags) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  int sleep = flags & DEQUEUE_SLEEP;
  update_curr(m, d, q);
  if (!(flags & (DEQUEUE_DELAYED | DEQUEUE_SPECIAL)) && P(delay_dequeue) && sleep &&
      !eligible(m, d, q, i)) {
    se->sched_delayed = 1;
    rq->nr_delayed++;
    fair_overload_sync(m, d, fair_q_cpu(q));
    return 0;
  }
  update_entity_lag(m, d, q, i);
  if (P(place_rel_deadline) && !sleep) {
    se->deadline -= se->vruntime;
    se->rel_deadline = 1;
  }
  if (rq->curr == i)
    rq->curr_on_rq = 0;
  else
    fair_tree_dequeue(m, d, q, i);
  fair_account_dequeue(m, d, q, i);
  fair_set_on_rq(m, d, i, 0);
  fair_update_cfs_group(m, d, i);
  if ((flags & (DEQUEUE_SAVE | DEQUEUE_MOVE)) != DEQUEUE_SAVE) fair_update_min_vruntime(m, d, q, 1);
  if (flags & DEQUEUE_DELAYED) {
    /* finish_delayed_dequeue_entity */
    se->sched_delayed = 0;
    if (P(delay_zero) && se->vlag > 0) se->vlag = 0;
  }
  return 1;
}

/* pick_next_entity: a delayed entity that comes out on top leaves instead
 * (dequeue_entities: its emptied groups with it) */
static int32_t pick_next_entity(const psModel *m, psData *d, int q) {
  int32_t i = pick_eevdf(m, d, q);
  if (se_of(d, i)->sched_delayed) {
    fair_dequeue_entities(m, d, i, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
    return -1;
  }
  return i;
}

static void set_next_entity(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  fair_tree_dequeue(m, d, q, i);
  fair_set_protect(rq, se);
  se->exec_start = (uint64_t)d->now_ns;
  rq->curr = i;
  rq->curr_on_rq = 1;
  rq->prev_sum_exec_runtime = se->sum_exec_runtime;
}

static void put_prev_entity(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  if (rq->curr_on_rq) {
    update_curr(m, d, q);
    fair_tree_enqueue(m, d, q, i);
  }
  rq->curr = -1;
  rq->curr_on_rq = 0;
  rq->protect = 0;
}

/* check_preempt_wakeup_fair: at the level where the woken task's and the
 * running task's hierarchies meet (find_matching_se) */
static int check_preempt_wakeup(const psModel *m, psData *d, psTask *p, int wake_flags) {
  int cpu = p->cpu;
  if (d->cpu[cpu].need_resched || !P(wakeup_preemption)) return 0;
  int32_t pse = ps_index(d, p), se = FRQ(m, d, cpu)->curr;
  if (fair_is_group(se)) se = d->cpu[cpu].curr;
  int q = fair_find_matching_se(m, d, &se, &pse);
  fair_rq *rq = CFSQ(m, d, q);
  update_curr(m, d, q);
  /* a shorter slice, eligible, overrides current's slice protection */
  if (do_preempt_short(m, d, q, pse, se) && fair_protected(rq, se_of(d, se))) rq->protect = 0;
  return pick_eevdf(m, d, q) == pse;
}

/* entity_tick: update_curr, then update_cfs_group(curr) */
static void entity_tick(const psModel *m, psData *d, int q) {
  update_curr(m, d, q);
  fair_update_cfs_group(m, d, CFSQ(m, d, q)->curr);
}

/* yield_task_fair: the next request, now, on the task's own cfs_rq */
static void yield_task(const psModel *m, psData *d, psTask *p) {
  if (fair_rq_nr_running(FRQ(m, d, p->cpu)) == 1) return;
  update_curr(m, d, fair_cfs_rq_of(m, d, ps_index(d, p)));
  SE(p)->deadline += fair_calc_delta_fair(SE(p)->slice, SE(p)->weight);
}

/* wake_up_new_task: a fresh entity (vlag 0) enqueued with ENQUEUE_INITIAL */
static void task_new(const psModel *m, psData *d, psTask *p, psTask *parent) {
  fair_enqueue_task(m, d, p, ENQUEUE_INITIAL);
}

/* a woken task keeps its lag across CPUs: nothing to convert */
static int migrate_wakee(const psModel *m, psData *d, psTask *p, int from) { return ENQUEUE_MIGRATED; }

/* reweight_entity (6.12.y): a queued (group) entity leaves the sums with
 * its lag and a relative deadline, and is placed again at its new weight;
 * the lag (and a relative deadline) in virtual time scale by w_old / w_new */
static void reweight_entity(const psModel *m, psData *d, int q, int32_t i, uint32_t w) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  int on_rq = fair_group_on_rq(m, d, i), curr = rq->curr == i;
  if (on_rq) {
    update_curr(m, d, q);
    update_entity_lag(m, d, q, i);
    se->deadline -= se->vruntime;
    se->rel_deadline = 1;
    rq->nr_running--;
    if (!curr) fair_tree_dequeue(m, d, q, i);
    rq->load -= se->weight;
  }
  se->vlag = s64_mul(se->vlag, se->weight) / (int64_t)w;
  if (se->rel_deadline) se->deadline = (uint64_t)(s64_mul((int64_t)se->deadline, se->weight) / (int64_t)w);
  se->weight = w;
  if (on_rq) {
    place_entity(m, d, q, i, 0);
    rq->load += w;
    if (!curr) fair_tree_enqueue(m, d, q, i);
    rq->nr_running++;
    fair_update_min_vruntime(m, d, q, 1);
  }
}

/* requeue_delayed_entity: a delayed entity woken; DELAY_ZERO re-places
 * one whose lag became positive with lag 0 */
static void requeue_delayed(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  if (P(delay_zero)) {
    update_entity_lag(m, d, q, i);
    if (se->vlag > 0) {
      rq->nr_running--;
      if (rq->curr != i) fair_tree_dequeue(m, d, q, i);
      se->vlag = 0;
      place_entity(m, d, q, i, 0);
      if (rq->curr != i) fair_tree_enqueue(m, d, q, i);
      rq->nr_running++;
    }
  }
  se->sched_delayed = 0;
  rq->nr_delayed--;
  fair_overload_sync(m, d, fair_q_cpu(q));
}

/* ---- configuration, checks, tables ---- */

enum { D_BASE_SLICE = 0 };

/* normalized_sysctl_sched_base_slice (fair.c, 6.6 .. 6.14) */
#define NORMALIZED_BASE_SLICE 750000

static int configure_eevdf(psModel *m, char *err, int errlen) {
  fair_derived *f = (fair_derived *)m->derived;
  f->factor = fair_sysctl_factor(m->ncpu, (int)P(sched_tunable_scaling));
  int64_t set = P(sched_base_slice_ns);
  if (set && set < 1000) {
    snprintf(err, errlen, "sched_base_slice_ns=%lld is outside the allowed range 1000..1000000000 "
             "(ns; 0 for the default)", (long long)set);
    return -1;
  }
  /* update_sysctl: sysctl = factor * normalized (unsigned int) */
  f->member[D_BASE_SLICE] = set ? set : (int64_t)(uint32_t)(f->factor * NORMALIZED_BASE_SLICE);
  fair_configure_common(m, EV_sched_migration_cost);
  return 0;
}

/* spawn's init values (a blank task, pid 0) may set `slice`, the
 * sched_attr.sched_runtime request, within what the kernel clamps it to;
 * a live task's custom slice stays within it too */
static int check_init_eevdf(const psModel *m, const psTask *t, char *err, int errlen) {
  const fair_se *se = SEc(t);
  if (se->custom_slice & ~1) {
    snprintf(err, errlen, "custom_slice=%d is outside the allowed range 0..1", se->custom_slice);
    return -1;
  }
  if (t->pid || t->is_idle) {
    /* the base slice is at most 10^9 ns scaled by the CPU factor (at most
     * 4): a longer one would widen entity_lag's clamp past every lag a run
     * can save */
    if (se->slice > UINT64_C(4000000000)) {
      snprintf(err, errlen, "slice=%llu ns is outside the allowed range 0..4000000000 ns",
               (unsigned long long)se->slice);
      return -1;
    }
    if (se->custom_slice && (se->slice < SLICE_MIN || se->slice > SLICE_MAX)) {
      snprintf(err, errlen, "slice=%llu ns is outside the allowed range %d..%d ns",
               (unsigned long long)se->slice, SLICE_MIN, SLICE_MAX);
      return -1;
    }
    return 0;
  }
  fair_se blank = *se;
  blank.slice = 0;
  static const fair_se zero;
  if (memcmp(&blank, &zero, sizeof blank)) {
    snprintf(err, errlen, "only `slice` can be given at spawn (the other fields are the "
             "scheduler's state)");
    return -1;
  }
  if (se->slice && !P(custom_slices)) {
    snprintf(err, errlen, "slice=%lld ns: this preset has no per-task slices (custom_slices=0; "
             "sched_attr.sched_runtime sets one from 6.12)", (long long)se->slice);
    return -1;
  }
  if (se->slice && (se->slice < SLICE_MIN || se->slice > SLICE_MAX)) {
    snprintf(err, errlen, "slice=%lld ns is outside the allowed range %d..%d ns (0.1..100 ms, "
             "the clamp of sched_attr.sched_runtime; 0 for the base slice)",
             (long long)se->slice, SLICE_MIN, SLICE_MAX);
    return -1;
  }
  return 0;
}

static int64_t f_lag_limit(const psModel *m, const int64_t *a) {
  uint64_t r = 2 * (uint64_t)a[0] > (uint64_t)m->tick_ns ? 2 * (uint64_t)a[0] : (uint64_t)m->tick_ns;
  return (int64_t)fair_calc_delta_fair(r, fair_nice_weight((int)a[1]));
}
static int64_t f_vslice(const psModel *m, const int64_t *a) {
  return (int64_t)fair_calc_delta_fair((uint64_t)a[0], fair_nice_weight((int)a[1]));
}

static const psParamInfo eevdf_params[] = {EEVDF_PARAMS(PS_PARAM_ROW)};

#define TF(name, type, doc) PS_FIELD(fair_se, name, type, doc)
static const psFieldInfo eevdf_task_fields[] = {
    TF(vruntime, PS_F_I64, "virtual runtime v_i, ns of nice-0 time (u64 in the kernel, shown signed)"),
    TF(deadline, PS_F_I64, "virtual deadline vd_i = v_i + r_i * 1024 / w_i at its last request, virtual ns"),
    TF(vlag, PS_F_I64, "lag saved at its last dequeue: V - v_i in virtual ns, clamped "
       "(update_entity_lag); what it is placed with when enqueued"),
    {"lag", PS_F_I64, offsetof(fair_se, vlag), "the same as vlag", PS_AT_PRIV},
    TF(slice, PS_F_I64, "its request r_i, ns: the base slice, or a custom one given at spawn"),
    TF(custom_slice, PS_F_I32, "1 if its slice was set with sched_runtime"),
    TF(weight, PS_F_U32, "sched_prio_to_weight[nice + 20]"),
    TF(sum_exec_runtime, PS_F_I64, "CPU time accounted by update_curr, ns"),
    TF(sched_delayed, PS_F_I32, "1 while asleep but still queued (DELAY_DEQUEUE)"),
    TF(rel_deadline, PS_F_I32, "1 while its deadline is kept relative (PLACE_REL_DEADLINE)"),
    TF(exec_start, PS_F_I64, "time of its last accounting while it ran, ns (0 after a migration)"),
    TF(min_vruntime, PS_F_I64, "smallest vruntime of its subtree in the queue (the augment)"),
};

#define RF(name, type, doc) PS_FIELD(fair_rq, name, type, doc)
static const psFieldInfo eevdf_rq_fields[] = {
    RF(nr_running, PS_F_U32, "cfs_rq->nr_running: queued entities, the running and delayed ones included"),
    RF(nr_delayed, PS_F_U32, "queued entities whose dequeue is delayed"),
    RF(rt_nr_running, PS_F_U32, "queued real-time tasks"),
    RF(load, PS_F_I64, "cfs_rq->load.weight (1024 per nice-0 task)"),
    RF(min_vruntime, PS_F_I64, "cfs_rq->min_vruntime, the base of avg_vruntime's keys"),
    RF(avg_vruntime, PS_F_I64, "\\Sum (v_i - min_vruntime) * w_i over the queued, not running entities"),
    RF(avg_load, PS_F_I64, "\\Sum w_i over them"),
    RF(next_balance, PS_F_I64, "rq->next_balance: jiffy of the next periodic balance"),
    RF(balance_interval, PS_F_U32, "sd->balance_interval, ms"),
    RF(nr_balance_failed, PS_F_U32, "sd->nr_balance_failed: periodic balances in a row that pulled nothing"),
    RF(nr_balance_pulls, PS_F_I64, "tasks the load balancer pulled to this CPU"),
    RF(nr_wakeup_migrations, PS_F_I64, "wakeups placed on this CPU from another"),
};

#define DF(k, name, doc) {name, PS_F_I64, offsetof(fair_derived, k), doc, PS_AT_MODEL}
static const psFieldInfo eevdf_derived_fields[] = {
    DF(factor, "factor", "get_update_sysctl_factor(): 1 + ilog2(min(ncpus, 8)) under log scaling"),
    DF(member[D_BASE_SLICE], "sysctl_sched_base_slice", "the base slice in force, ns"),
    DF(rr_timeslice, "sched_rr_timeslice", "SCHED_RR slice, ticks (100 ms)"),
    DF(balance_min_interval, "balance_min_interval", "sd->min_interval, ms"),
};

static const psFormula eevdf_formulas[] = {
    FAIR_COMMON_FORMULAS,
    {"vslice", "slice_ns, nice", 2, {0, -20}, {1000000000LL, 19}, f_vslice,
     "r_i / w_i: a request in virtual time, the distance from vruntime to deadline"},
    {"lag_limit", "slice_ns, nice", 2, {0, -20}, {1000000000LL, 19}, f_lag_limit,
     "update_entity_lag's clamp: calc_delta_fair(max(2 * slice, TICK_NSEC)) at this HZ"},
};

static const char *const eevdf_headline[] = {"vruntime", "deadline", "vlag", NULL};

/* features.h and what each version honours */
static const psOverride eevdf_6_6[] = {
    {"place_deadline_initial", 0}, {"preempt_short", 0}, {"delay_dequeue", 0},
    {"delay_zero", 0},             {"place_rel_deadline", 0}, {"custom_slices", 0},
    {NULL, 0},
};

extern const psPolicy ps_policy_eevdf;
static const psPreset eevdf_presets[] = {
    {"linux-6.6-eevdf", &ps_policy_eevdf, {eevdf_6_6},
     "6.6 EEVDF: lag placement, RUN_TO_PARITY, base slice 0.75 ms x factor", 1000},
    {"linux-6.12-eevdf", &ps_policy_eevdf, {NULL},
     "6.12 EEVDF: per-task slices (sched_runtime) with PREEMPT_SHORT, DELAY_DEQUEUE/DELAY_ZERO, "
     "PLACE_REL_DEADLINE, halved first deadline", 1000},
};

static const fair_class eevdf_class = {
    .key = FAIR_KEY_DEADLINE,
    .update_curr = update_curr,
    .enqueue_entity = enqueue_entity,
    .dequeue_entity = dequeue_entity,
    .pick_next_entity = pick_next_entity,
    .set_next_entity = set_next_entity,
    .put_prev_entity = put_prev_entity,
    .check_preempt_wakeup = check_preempt_wakeup,
    .entity_tick = entity_tick,
    .yield_task = yield_task,
    .task_new = task_new,
    .migrate_wakee = migrate_wakee,
    .reweight_entity = reweight_entity,
    .requeue_delayed = requeue_delayed,
};

_Static_assert(sizeof(fair_se) <= PS_TASK_PRIV, "fair_se must fit psTask.priv");
_Static_assert(sizeof(fair_derived) <= PS_DERIVED_BYTES, "fair_derived must fit psModel.derived");
_Static_assert(EV_NPARAMS <= PS_MAX_PARAMS, "too many parameters");

const psPolicy ps_policy_eevdf = {
    .name = "eevdf",
    .doc = "EEVDF, the fair class of Linux 6.6 and 6.12",
    PS_POLICY_TABLES(eevdf),
    .derived_fields = eevdf_derived_fields,
    .nderived_fields = PS_NELEM(eevdf_derived_fields),
    .rq_size = sizeof(fair_cpu),
    .max_prio = FAIR_MAX_PRIO,
    .headline = eevdf_headline,
    FAIR_QUEUE_COLUMNS,
    .family = &eevdf_class,
    .hooks = {
        FAIR_HOOKS,
        .configure = configure_eevdf,
        .check_init = check_init_eevdf,
    },
};
