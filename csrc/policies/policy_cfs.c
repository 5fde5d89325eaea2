/* CFS, the Completely Fair Scheduler of Linux 2.6.23 to 6.5, as 6.5 has it:
 * virtual runtime by weight, the leftmost entity of the vruntime-ordered
 * tree first, min_vruntime, a period stretched over sched_nr_latency
 * tasks and divided by weight into slices that the tick checks
 * (check_preempt_tick), wakeup preemption beyond a weight-scaled
 * wakeup_granularity with next/last/skip buddies, sleepers placed at
 * min_vruntime - sched_latency / 2 (GENTLE_FAIR_SLEEPERS) and new tasks one
 * slice after it (START_DEBIT); the latency tunables scale with the log of
 * the CPU count.  What it shares with EEVDF is fair_common.h's
 * (fair_common.c, fair_hooks.c, fair_invariants.c); function names are
 * fair.c's.
 *
 * Source: a 6.x CFS-era fair.c (gregkh/linux @ 000c9ee4, cited as 6.5:
 * update_curr, place_entity with entity_is_long_sleeper, enqueue_entity and
 * dequeue_entity's min_vruntime normalisation, check_preempt_tick,
 * set_next_entity, pick_next_entity with its buddies, wakeup_gran,
 * wakeup_preempt_entity, check_preempt_wakeup, yield_task_fair,
 * task_fork_fair, migrate_task_rq_fair, detach/attach_task_cfs_rq,
 * __sched_period, sched_slice with ALT_PERIOD and BASE_SLICE,
 * get_update_sysctl_factor); docs/schedulers/cfs.md.
 *
 * Over 500 lines because it is one member's whole fair.c (every per-level
 * function of the class, its parameters, fields, formulas and presets);
 * what it shares with the other member, the task groups' walks included,
 * is in fair_*.c. */
#include <stdio.h>
#include <string.h>

#include "fair_common.h"
#include "watch.h"

#define CFS_PARAMS(X)                                                                             \
  X(sched_latency_ns, 0, 0, 1000000000, 0, "ns",                                                  \
    "sysctl_sched_latency (debugfs sched/latency_ns): the period every runnable task runs once "   \
    "in; 0: the default, 6 ms x factor (update_sysctl); else 0.1 ms .. 1 s as written")           \
  X(sched_min_granularity_ns, 0, 0, 1000000000, 0, "ns",                                          \
    "sysctl_sched_min_granularity (sched/min_granularity_ns): the shortest slice, and the period " \
    "per task past sched_nr_latency tasks; 0: 0.75 ms x factor; else 0.1 ms .. 1 s")             \
  X(sched_wakeup_granularity_ns, 0, 0, 1000000000, 0, "ns",                                       \
    "sysctl_sched_wakeup_granularity (sched/wakeup_granularity_ns): a woken task preempts only "  \
    "if it is this far behind, in its own virtual time; 0: 1 ms x factor (1 ns for none)")        \
  X(sched_tunable_scaling, 1, 0, 2, 0, "enum",                                                    \
    "SCHED_TUNABLESCALING, the factor of the defaults: 0 none, 1 log (x 1 + ilog2(min(ncpus, 8))), " \
    "2 linear (x min(ncpus, 8))")                                                                 \
  X(gentle_fair_sleepers, 1, 0, 1, 0, "bool",                                                     \
    "GENTLE_FAIR_SLEEPERS: a sleeper is placed at min_vruntime - latency / 2 (0: - latency)")     \
  X(start_debit, 1, 0, 1, 0, "bool",                                                              \
    "START_DEBIT: a new task starts one slice (sched_vslice) after min_vruntime")                  \
  X(wakeup_preemption, 1, 0, 1, 0, "bool", "WAKEUP_PREEMPTION: a waking task may preempt")        \
  X(next_buddy, 0, 0, 1, 0, "bool",                                                               \
    "NEXT_BUDDY: prefer the task woken last when the queue is long (off by default)")            \
  X(last_buddy, 1, 0, 1, 0, "bool",                                                               \
    "LAST_BUDDY: prefer to return the CPU to the task a wakeup preempted")                        \
  X(base_slice, 1, 0, 1, 0, "bool", "BASE_SLICE: no slice shorter than min_granularity")          \
  FAIR_BALANCE_PARAMS(X)                                                                          \
  FAIR_TIMER_PARAMS(X)                                                                            \
  FAIR_GROUP_PARAMS(X)

enum {
#define CFS_ENUM(name, ...) CFS_##name,
  CFS_PARAMS(CFS_ENUM)
#undef CFS_ENUM
  CFS_NPARAMS
};

#define P(name) (m->param[CFS_##name])

/* the sysctls in force (as written, or factor * the kernel's normalized
 * default, configure_cfs), and sched_nr_latency = DIV_ROUND_UP(latency,
 * min_granularity) as sched_update_scaling recomputes it */
enum { D_LATENCY, D_MIN_GRAN, D_WAKEUP_GRAN, D_NR_LATENCY };
#define SYSCTL(m, k) ((uint64_t)FD(m)->member[k])

#define se_of(d, i) fair_ent(m, d, i)
static int entity_before(const fair_se *a, const fair_se *b) { return vdiff(a->vruntime, b->vruntime) < 0; }

/* __sched_period: the period stretches past sched_nr_latency tasks */
static uint64_t sched_period(const psModel *m, uint64_t nr_running) {
  if (nr_running > SYSCTL(m, D_NR_LATENCY)) return nr_running * SYSCTL(m, D_MIN_GRAN);
  return SYSCTL(m, D_LATENCY);
}

/* sched_slice: the period by weight, for an entity queued (on_rq) or about
 * to be (its weight added to the queue's) */
static uint64_t sched_slice_of(const psModel *m, uint64_t nr_running, uint64_t load, uint32_t w,
                               int on_rq) {
  uint64_t slice = sched_period(m, nr_running + !on_rq);
  if (!on_rq) load += w;
  slice = fair_calc_delta(slice, w, fair_inv_weight(load));
  if (P(base_slice) && slice < SYSCTL(m, D_MIN_GRAN)) slice = SYSCTL(m, D_MIN_GRAN);
  return slice;
}

/* sched_slice(cfs_rq q, se i): the period over rq->cfs.h_nr_running
 * (ALT_PERIOD), divided by the entity's share of its cfs_rq at every level
 * up to the root (for_each_sched_entity) */
static uint64_t sched_slice(const psModel *m, psData *d, int q, int32_t i, int on_rq) {
  if (!fair_q_group(q)) {
    fair_rq *rq = CFSQ(m, d, q);
    return sched_slice_of(m, rq->nr_running, rq->load, se_of(d, i)->weight, on_rq);
  }
  const fair_rq *root = FRQ(m, d, fair_q_cpu(q));
  uint64_t slice = sched_period(m, (uint64_t)((int64_t)root->nr_running + root->h_adj) + !on_rq);
  for (int32_t e = i; e >= 0;) {
    const fair_rq *rq = CFSQ(m, d, q);
    uint64_t load = rq->load;
    uint32_t w = se_of(d, e)->weight;
    if (!on_rq) load += w;
    slice = fair_calc_delta(slice, w, fair_inv_weight(load));
    e = fair_group_entity(q);
    if (e >= 0) {
      q = fair_cfs_rq_of(m, d, e);
      on_rq = fair_group_on_rq(m, d, e);
    }
  }
  if (P(base_slice) && slice < SYSCTL(m, D_MIN_GRAN)) slice = SYSCTL(m, D_MIN_GRAN);
  return slice;
}

static void update_curr(const psModel *m, psData *d, int q) {
  fair_rq *rq = CFSQ(m, d, q);
  if (rq->curr < 0) return;
  fair_se *curr = se_of(d, rq->curr);
  int64_t delta = d->now_ns - (int64_t)curr->exec_start;
  if (delta <= 0) return;
  curr->exec_start = (uint64_t)d->now_ns;
  curr->sum_exec_runtime += (uint64_t)delta;
  curr->vruntime += fair_calc_delta_fair((uint64_t)delta, curr->weight);
  fair_update_min_vruntime(m, d, q, 0);
}

/* entity_is_long_sleeper: slept so long that its vruntime's distance to
 * min_vruntime could overflow s64 (2^63 / 1024 ns, about 104 days) */
static int entity_is_long_sleeper(const psData *d, const fair_se *se) {
  if (!se->exec_start) return 0;
  if ((uint64_t)d->now_ns <= se->exec_start) return 0;
  return (uint64_t)d->now_ns - se->exec_start > (1ULL << 63) / NICE_0_LOAD;
}

/* place_entity: new tasks one vslice late, sleepers at most half a latency
 * early, nobody moved backwards */
static void place_entity(const psModel *m, psData *d, int q, int32_t i, int initial) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  uint64_t vruntime = rq->min_vruntime;
  /* the extra weight of the new task slows the current ones down a
   * little: place it in the slot that stays open at the end */
  if (initial && P(start_debit))
    vruntime += fair_calc_delta_fair(sched_slice(m, d, q, i, 0), se->weight);
  if (!initial) {
    /* sleeps up to a single latency don't count; halved, gently */
    uint64_t thresh = SYSCTL(m, D_LATENCY);
    if (P(gentle_fair_sleepers)) thresh >>= 1;
    vruntime -= thresh;
  }
  se->vruntime = entity_is_long_sleeper(d, se) ? vruntime : max_vruntime(se->vruntime, vruntime);
}

enum { BUDDY_NEXT, BUDDY_LAST, BUDDY_SKIP };
static int32_t *buddy(fair_rq *rq, int which) {
  return which == BUDDY_NEXT ? &rq->next : which == BUDDY_LAST ? &rq->last : &rq->skip;
}

/* __clear_buddies_{last,next,skip}: up the hierarchy while each level's
 * buddy is the entity's ancestor */
static void clear_buddy(const psModel *m, psData *d, int q, int32_t i, int which) {
  for (;;) {
    int32_t *b = buddy(CFSQ(m, d, q), which);
    if (*b != i) return;
    *b = -1;
    i = fair_group_entity(q);
    if (i < 0) return;
    q = fair_cfs_rq_of(m, d, i);
  }
}

static void clear_buddies(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  if (rq->last == i) clear_buddy(m, d, q, i, BUDDY_LAST);
  if (rq->next == i) clear_buddy(m, d, q, i, BUDDY_NEXT);
  if (rq->skip == i) clear_buddy(m, d, q, i, BUDDY_SKIP);
}

/* set_next_buddy / set_last_buddy / set_skip_buddy: the entity and each
 * of its ancestors at its own level */
static void set_buddy(const psModel *m, psData *d, int32_t i, int which) {
  for (; i >= 0; i = fair_parent_entity(m, d, i)) *buddy(CFSQ(m, d, fair_cfs_rq_of(m, d, i)), which) = i;
}

static void set_next_buddy(const psModel *m, psData *d, int32_t i) { set_buddy(m, d, i, BUDDY_NEXT); }

/* enqueue_entity: a migrated or restored entity's vruntime is relative to
 * min_vruntime and is renormalised; a woken one is placed as a sleeper;
 * update_cfs_group before it is accounted */
static void enqueue_entity(const psModel *m, psData *d, int q, int32_t i, int flags) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  int renorm = !(flags & ENQUEUE_WAKEUP) || (flags & ENQUEUE_MIGRATED);
  int curr = rq->curr == i;
  if (renorm && curr) se->vruntime += rq->min_vruntime;
  update_curr(m, d, q);
  /* placed at the current moment, not at some random one in the past */
  if (renorm && !curr) se->vruntime += rq->min_vruntime;
  fair_update_cfs_group(m, d, i);
  fair_account_enqueue(m, d, q, i);
  if (flags & ENQUEUE_WAKEUP) place_entity(m, d, q, i, 0);
  if (flags & ENQUEUE_MIGRATED) se->exec_start = 0;
  if (curr)
    rq->curr_on_rq = 1;
  else
    fair_tree_enqueue(m, d, q, i);
  fair_set_on_rq(m, d, i, 1);
}

/* dequeue_entity: an entity that does not sleep takes its vruntime
 * relative to min_vruntime with it */
static int dequeue_entity(const psModel *m, psData *d, int q, int32_t i, int flags) {
  fair_rq *rq = CFSQ(m, d, q);
  update_curr(m, d, q);
  /* a watch reads the lag it leaves with (fair_watch.c) */
  if (m->watch & PS_WATCH_LAG) fair_watch_entity_lag(m, d, q, i, 0);
  clear_buddies(m, d, q, i);
  if (rq->curr == i)
    rq->curr_on_rq = 0;
  else
    fair_tree_dequeue(m, d, q, i);
  fair_set_on_rq(m, d, i, 0);
  fair_account_dequeue(m, d, q, i);
  if (!(flags & DEQUEUE_SLEEP)) se_of(d, i)->vruntime -= rq->min_vruntime;
  fair_update_cfs_group(m, d, i);
  /* a SAVE without MOVE is put back at once: not penalised */
  if ((flags & (DEQUEUE_SAVE | DEQUEUE_MOVE)) != DEQUEUE_SAVE) fair_update_min_vruntime(m, d, q, 0);
  return 1;
}

/* check_preempt_tick: the slice is over, or (past min_granularity) the
 * leftmost waiter is behind by more than a slice.  The slice is capped at
 * sysctl_sched_latency: sched_slice() grows with the period when many
 * tasks blow it up (6.5 kernel/sched/fair.c, check_preempt_tick;
 * docs/schedulers/cfs.md) */
static void check_preempt_tick(const psModel *m, psData *d, int q) {
  fair_rq *rq = CFSQ(m, d, q);
  int cpu = fair_q_cpu(q);
  fair_se *curr = se_of(d, rq->curr);
  uint64_t ideal_runtime = sched_slice(m, d, q, rq->curr, 1);
  if (ideal_runtime > SYSCTL(m, D_LATENCY)) ideal_runtime = SYSCTL(m, D_LATENCY);
  uint64_t delta_exec = curr->sum_exec_runtime - rq->prev_sum_exec_runtime;
  if (delta_exec > ideal_runtime) {
    psTask *t = fair_task_of(d, q, rq->curr);
    ps_resched_cpu(d, cpu);
    /* it ran long enough: no buddy favours to re-elect it */
    clear_buddies(m, d, q, rq->curr);
    ps_log(m, d, PS_EVT_EXPIRE, cpu, t, -1, t->prio, 0);
    return;
  }
  /* a task that missed wakeup preemption by a narrow margin need not wait
   * a full slice */
  if (delta_exec < SYSCTL(m, D_MIN_GRAN)) return;
  int64_t delta = vdiff(curr->vruntime, se_of(d, rq->leftmost)->vruntime);
  if (delta < 0) return;
  if ((uint64_t)delta > ideal_runtime) ps_resched_cpu(d, cpu);
}

/* entity_tick: update_curr, update_cfs_group(curr), then the slice check */
static void entity_tick(const psModel *m, psData *d, int q) {
  update_curr(m, d, q);
  fair_update_cfs_group(m, d, CFSQ(m, d, q)->curr);
  if (CFSQ(m, d, q)->nr_running > 1) check_preempt_tick(m, d, q);
}

static void set_next_entity(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  clear_buddies(m, d, q, i);
  fair_tree_dequeue(m, d, q, i);
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
}

/* wakeup_gran: the granularity in the wakee's virtual time (light wakees
 * need a larger lead) */
static uint64_t wakeup_gran(const psModel *m, const fair_se *se) {
  return fair_calc_delta_fair(SYSCTL(m, D_WAKEUP_GRAN), se->weight);
}

/* wakeup_preempt_entity: should se preempt curr?  -1 no (se is not
 * behind), 0 behind by no more than the granularity, 1 yes */
static int wakeup_preempt_entity(const psModel *m, const fair_se *curr, const fair_se *se) {
  int64_t vd = vdiff(curr->vruntime, se->vruntime);
  if (vd <= 0) return -1;
  if (vd > (int64_t)wakeup_gran(m, se)) return 1;
  return 0;
}

/* pick_next_entity: the leftmost (curr included), unless the skip buddy,
 * or in favour of the next or the last buddy when that is not unfair */
static int32_t pick_next_entity(const psModel *m, psData *d, int q) {
  fair_rq *rq = CFSQ(m, d, q);
  int32_t curr = rq->curr >= 0 && rq->curr_on_rq ? rq->curr : -1;
  int32_t left = rq->leftmost;
  if (left < 0 || (curr >= 0 && entity_before(se_of(d, curr), se_of(d, left)))) left = curr;
  int32_t se = left;
  if (rq->skip >= 0 && rq->skip == se) {
    int32_t second;
    if (se == curr) {
      second = rq->leftmost;
    } else {
      second = fair_rb_next(m, d, se);
      if (second < 0 || (curr >= 0 && entity_before(se_of(d, curr), se_of(d, second)))) second = curr;
    }
    if (second >= 0 && wakeup_preempt_entity(m, se_of(d, second), se_of(d, left)) < 1) se = second;
  }
  if (rq->next >= 0 && wakeup_preempt_entity(m, se_of(d, rq->next), se_of(d, left)) < 1)
    se = rq->next;
  else if (rq->last >= 0 && wakeup_preempt_entity(m, se_of(d, rq->last), se_of(d, left)) < 1)
    se = rq->last;
  return se;
}

/* check_preempt_wakeup: at the level where the woken task's and the
 * running task's hierarchies meet (find_matching_se); the buddies are set
 * up the hierarchy */
static int check_preempt_wakeup(const psModel *m, psData *d, psTask *p, int wake_flags) {
  int cpu = p->cpu;
  int32_t pse = ps_index(d, p), se = FRQ(m, d, cpu)->curr;
  if (fair_is_group(se)) se = d->cpu[cpu].curr;
  int tq = se >= 0 ? fair_cfs_rq_of(m, d, se) : cpu;
  int scale = CFSQ(m, d, tq)->nr_running >= SYSCTL(m, D_NR_LATENCY);
  int next_buddy_marked = 0;
  if (P(next_buddy) && scale && !(wake_flags & WF_FORK)) {
    set_buddy(m, d, pse, BUDDY_NEXT);
    next_buddy_marked = 1;
  }
  if (d->cpu[cpu].need_resched || !P(wakeup_preemption)) return 0;
  int q = fair_find_matching_se(m, d, &se, &pse);
  update_curr(m, d, q);
  if (wakeup_preempt_entity(m, se_of(d, se), se_of(d, pse)) != 1) return 0;
  /* bias pick_next to the entity that triggers the preemption */
  if (!next_buddy_marked) set_buddy(m, d, pse, BUDDY_NEXT);
  if (P(last_buddy) && scale && !fair_is_group(se)) set_buddy(m, d, se, BUDDY_LAST);
  return 1;
}

/* yield_task_fair: marked as the skip buddy, then schedule() */
static void yield_task(const psModel *m, psData *d, psTask *p) {
  if (fair_rq_nr_running(FRQ(m, d, p->cpu)) == 1) return;
  int32_t i = ps_index(d, p);
  int q = fair_cfs_rq_of(m, d, i);
  clear_buddies(m, d, q, i);
  update_curr(m, d, q);
  set_buddy(m, d, i, BUDDY_SKIP);
}

/* task_fork_fair then wake_up_new_task's enqueue: placed on the parent's
 * queue (task_cfs_rq(current)) from the parent's vruntime (a task spawned
 * from Python: from min_vruntime, as the child of a parent that sleeps),
 * carried relative to it, renormalised where it is enqueued */
static void task_new(const psModel *m, psData *d, psTask *p, psTask *parent) {
  int32_t i = ps_index(d, p);
  int pq = parent ? fair_cfs_rq_of(m, d, ps_index(d, parent)) : FAIR_Q(p->cpu, SE(p)->node.group);
  fair_rq *prq = CFSQ(m, d, pq);
  fair_se *se = SE(p);
  update_curr(m, d, pq);
  se->vruntime = prq->curr >= 0 ? se_of(d, prq->curr)->vruntime : prq->min_vruntime;
  if (!parent) se->vruntime = prq->min_vruntime;
  place_entity(m, d, pq, i, 1);
  se->vruntime -= prq->min_vruntime;
  fair_enqueue_task(m, d, p, 0);
}

/* migrate_task_rq_fair of a waking task: relative to the old queue's
 * min_vruntime; enqueue_entity adds the new one */
static int migrate_wakee(const psModel *m, psData *d, psTask *p, int from) {
  SE(p)->vruntime -= CFSQ(m, d, FAIR_Q(from, SE(p)->node.group))->min_vruntime;
  return ENQUEUE_MIGRATED;
}

/* reweight_entity (6.5): the weight only, the queue's load with it */
static void reweight_entity(const psModel *m, psData *d, int q, int32_t i, uint32_t w) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = se_of(d, i);
  int on_rq = fair_group_on_rq(m, d, i);
  if (on_rq) {
    if (rq->curr == i) update_curr(m, d, q);
    rq->load -= se->weight;
  }
  se->weight = w;
  if (on_rq) rq->load += w;
}

/* switched_from_fair while asleep (detach_task_cfs_rq): placed as a
 * sleeper, so that the sleep earns no unlimited bonus, and made relative;
 * a task that never ran counts as normalised (vruntime_normalized) */
static void detach(const psModel *m, psData *d, psTask *p) {
  fair_se *se = SE(p);
  int32_t i = ps_index(d, p);
  int q = fair_cfs_rq_of(m, d, i);
  if (!se->sum_exec_runtime) return;
  place_entity(m, d, q, i, 0);
  se->vruntime -= CFSQ(m, d, q)->min_vruntime;
}

/* switched_to_fair while asleep (attach_task_cfs_rq) */
static void attach(const psModel *m, psData *d, psTask *p) {
  fair_se *se = SE(p);
  if (se->sum_exec_runtime) se->vruntime += CFSQ(m, d, fair_cfs_rq_of(m, d, ps_index(d, p)))->min_vruntime;
}

/* ---- configuration, tables ---- */

/* the kernel's defaults before scaling (normalized_sysctl_*, fair.c) */
#define NORMALIZED_LATENCY 6000000
#define NORMALIZED_MIN_GRAN 750000
#define NORMALIZED_WAKEUP_GRAN 1000000

/* A sysctl as written, or (0) its default for this machine. */
static int sysctl_value(psModel *m, const char *name, int64_t set, int64_t normalized, int64_t min,
                        int64_t *out, char *err, int errlen) {
  if (set && set < min) {
    snprintf(err, errlen, "%s=%lld is outside the allowed range %lld..1000000000 (ns; 0 for "
             "the default)", name, (long long)set, (long long)min);
    return -1;
  }
  /* update_sysctl: sysctl = factor * normalized (unsigned int) */
  *out = set ? set : (int64_t)(uint32_t)(FD(m)->factor * normalized);
  return 0;
}

static int configure_cfs(psModel *m, char *err, int errlen) {
  fair_derived *f = (fair_derived *)m->derived;
  f->factor = fair_sysctl_factor(m->ncpu, (int)P(sched_tunable_scaling));
  if (sysctl_value(m, "sched_latency_ns", P(sched_latency_ns), NORMALIZED_LATENCY, 100000,
                   &f->member[D_LATENCY], err, errlen) ||
      sysctl_value(m, "sched_min_granularity_ns", P(sched_min_granularity_ns), NORMALIZED_MIN_GRAN,
                   100000, &f->member[D_MIN_GRAN], err, errlen) ||
      sysctl_value(m, "sched_wakeup_granularity_ns", P(sched_wakeup_granularity_ns),
                   NORMALIZED_WAKEUP_GRAN, 1, &f->member[D_WAKEUP_GRAN], err, errlen))
    return -1;
  /* sched_update_scaling: DIV_ROUND_UP(latency, min_granularity) */
  f->member[D_NR_LATENCY] = (f->member[D_LATENCY] + f->member[D_MIN_GRAN] - 1) / f->member[D_MIN_GRAN];
  fair_configure_common(m, CFS_sched_migration_cost);
  return 0;
}

static int check_init_cfs(const psModel *m, const psTask *t, char *err, int errlen) {
  static const fair_se zero;
  if (!t->pid && !t->is_idle && memcmp(t->priv, &zero, sizeof zero)) {
    snprintf(err, errlen, "CFS takes no initial values at spawn (its fields are the scheduler's "
             "state)");
    return -1;
  }
  return 0;
}

static int64_t f_sched_period(const psModel *m, const int64_t *a) {
  return (int64_t)sched_period(m, (uint64_t)a[0]);
}
static int64_t f_sched_slice(const psModel *m, const int64_t *a) {
  return (int64_t)sched_slice_of(m, (uint64_t)a[1], (uint64_t)a[2], fair_nice_weight((int)a[0]), 1);
}
static int64_t f_wakeup_gran(const psModel *m, const int64_t *a) {
  fair_se se = {.weight = fair_nice_weight((int)a[0])};
  return (int64_t)wakeup_gran(m, &se);
}

static const psParamInfo cfs_params[] = {CFS_PARAMS(PS_PARAM_ROW)};

#define TF(name, type, doc) PS_FIELD(fair_se, name, type, doc)
static const psFieldInfo cfs_task_fields[] = {
    TF(vruntime, PS_F_I64, "virtual runtime, ns of nice-0 time (u64 in the kernel, shown signed; "
       "relative to min_vruntime while the task is in the RT class)"),
    TF(weight, PS_F_U32, "sched_prio_to_weight[nice + 20]"),
    TF(sum_exec_runtime, PS_F_I64, "CPU time accounted by update_curr, ns"),
    TF(exec_start, PS_F_I64, "time of its last accounting while it ran, ns (0 after a migration)"),
};

#define RF(name, type, doc) PS_FIELD(fair_rq, name, type, doc)
static const psFieldInfo cfs_rq_fields[] = {
    RF(nr_running, PS_F_U32, "cfs_rq->nr_running: queued entities, the running one included"),
    RF(rt_nr_running, PS_F_U32, "queued real-time tasks"),
    RF(load, PS_F_I64, "cfs_rq->load.weight (1024 per nice-0 task)"),
    RF(min_vruntime, PS_F_I64, "cfs_rq->min_vruntime: never decreases"),
    RF(next, PS_F_I32, "next buddy (slot, -1 none)"),
    RF(last, PS_F_I32, "last buddy (slot, -1 none)"),
    RF(skip, PS_F_I32, "skip buddy (slot, -1 none)"),
    RF(next_balance, PS_F_I64, "rq->next_balance: jiffy of the next periodic balance"),
    RF(balance_interval, PS_F_U32, "sd->balance_interval, ms"),
    RF(nr_balance_failed, PS_F_U32, "sd->nr_balance_failed: periodic balances in a row that pulled nothing"),
    RF(nr_balance_pulls, PS_F_I64, "tasks the load balancer pulled to this CPU"),
    RF(nr_wakeup_migrations, PS_F_I64, "wakeups placed on this CPU from another"),
};

#define DF(k, name, doc) {name, PS_F_I64, offsetof(fair_derived, k), doc, PS_AT_MODEL}
static const psFieldInfo cfs_derived_fields[] = {
    DF(factor, "factor", "get_update_sysctl_factor(): 1 + ilog2(min(ncpus, 8)) under log scaling"),
    DF(member[D_LATENCY], "sysctl_sched_latency", "the latency in force, ns"),
    DF(member[D_MIN_GRAN], "sysctl_sched_min_granularity", "the minimum granularity in force, ns"),
    DF(member[D_WAKEUP_GRAN], "sysctl_sched_wakeup_granularity", "the wakeup granularity in force, ns"),
    DF(member[D_NR_LATENCY], "sched_nr_latency", "DIV_ROUND_UP(latency, min_granularity)"),
    DF(rr_timeslice, "sched_rr_timeslice", "SCHED_RR slice, ticks (100 ms)"),
    DF(balance_min_interval, "balance_min_interval", "sd->min_interval, ms"),
};

static const psFormula cfs_formulas[] = {
    FAIR_COMMON_FORMULAS,
    {"sched_period", "nr_running", 1, {0}, {100000}, f_sched_period,
     "__sched_period: latency, or nr_running * min_granularity past sched_nr_latency (1 CPU)"},
    {"sched_slice", "nice, nr_running, load", 3, {-20, 1, 15}, {19, 100000, 10000000000LL},
     f_sched_slice,
     "sched_slice of a queued task: period * weight / load, at least min_granularity (1 CPU)"},
    {"wakeup_gran", "nice", 1, {-20}, {19}, f_wakeup_gran,
     "wakeup_gran: wakeup_granularity in the wakee's virtual time (1 CPU)"},
};

static const char *const cfs_headline[] = {"vruntime", NULL};

extern const psPolicy ps_policy_cfs;
static const psPreset cfs_presets[] = {
    {"linux-6.5-cfs", &ps_policy_cfs, {NULL},
     "CFS as in 6.5: latency 6 ms, min_granularity 0.75 ms, wakeup_granularity 1 ms, each x "
     "(1 + ilog2(min(ncpus, 8)))", 1000},
};

static const fair_class cfs_class = {
    .key = FAIR_KEY_VRUNTIME,
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
    .set_next_buddy = set_next_buddy,
    .detach = detach,
    .attach = attach,
};

_Static_assert(CFS_NPARAMS <= PS_MAX_PARAMS, "too many parameters");

const psPolicy ps_policy_cfs = {
    .name = "cfs",
    .doc = "CFS, the fair class of Linux 2.6.23 to 6.5",
    PS_POLICY_TABLES(cfs),
    .derived_fields = cfs_derived_fields,
    .nderived_fields = PS_NELEM(cfs_derived_fields),
    .rq_size = sizeof(fair_cpu),
    .max_prio = FAIR_MAX_PRIO,
    .headline = cfs_headline,
    FAIR_QUEUE_COLUMNS,
    .family = &cfs_class,
    .hooks = {
        FAIR_HOOKS,
        .configure = configure_cfs,
        .check_init = check_init_cfs,
    },
};
